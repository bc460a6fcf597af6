"""Host cache policies: whether to cache an object, which TTL to ask for, when to renew.

A registry of named policies; an unknown name raises. ``never`` inlines everything: the baseline
every study compares against.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from .config import PolicyConfig


@dataclass(frozen=True)
class CachePolicy:
    """The decisions a host makes for each object and session."""

    caches: bool
    min_object_bytes: int
    min_expected_reuse: float
    ttl_fraction: float
    renew_margin: float
    renewal_body: bool
    ttl_hint_fixed_ms: int | None = None
    inline_after_invalidate: bool = True
    connection_ttl_ms: int | None = None
    refused_backoff_ms: float = 0.0

    def should_cache(self, size: int, expected_reuse: float) -> bool:
        """Cache objects larger than the size threshold expected to be reused often enough."""
        return (
            self.caches
            and size > self.min_object_bytes
            and expected_reuse > self.min_expected_reuse
        )

    def put_ttl_ms(self, session_ttl_ms: int, connection_owned: bool) -> int:
        """CACHE_PUT ``ttl_ms``: the session's TTL, or the connection TTL for the objects the
        connection owns when the policy sets one."""
        if connection_owned and self.connection_ttl_ms is not None:
            return self.connection_ttl_ms
        return session_ttl_ms

    def ttl_hint_ms(self, expected_session_ms: float) -> int:
        """``lease_ttl_hint_ms`` for SESSION_OPEN: a fraction of the expected session length."""
        if self.ttl_hint_fixed_ms is not None:
            return self.ttl_hint_fixed_ms
        return max(1, int(self.ttl_fraction * expected_session_ms))

    def renew_from_ms(self, expires_ms: float, ttl_ms: int) -> float:
        """When proactive renewal starts: once no more than ``renew_margin`` of the TTL remains
        (1.0: on every use; 0: never), from the first whole millisecond on (a lease's times are
        whole milliseconds, and so is the vector engine's clock). Fixed when the lease is
        granted, so a reference checks one time against it."""
        if self.renew_margin <= 0:
            return math.inf
        return math.ceil(expires_ms - self.renew_margin * ttl_ms)

    def backed_off_until_ms(self, refused_at_ms: float) -> float:
        """No CACHE_PUT of an object refused at ``refused_at_ms`` before this: the back-off,
        in whole milliseconds from the refusal's millisecond (the vector engine's clock)."""
        return math.floor(refused_at_ms) + math.ceil(self.refused_backoff_ms)


def _from_config(config: PolicyConfig, **overrides) -> CachePolicy:
    values = {
        "caches": True,
        "min_object_bytes": config.min_object_bytes,
        "min_expected_reuse": config.min_expected_reuse,
        "ttl_fraction": config.ttl_fraction,
        "renew_margin": config.renew_margin,
        "renewal_body": config.renewal_body,
        "ttl_hint_fixed_ms": config.ttl_hint_ms,
        "inline_after_invalidate": config.inline_after_invalidate,
        "connection_ttl_ms": config.connection_ttl_ms,
        "refused_backoff_ms": config.refused_backoff_ms,
    }
    return CachePolicy(**{**values, **overrides})


def _best_practice(config: PolicyConfig) -> CachePolicy:
    # shared/spec/nnrp-cache.md section 14: cache objects > 1 KiB reused more than twice; inline on
    # the next submit after an invalidation. The TTL fraction (0.75 by default: 25 % below the
    # session length) and the renewal margin stay configurable, so they can be swept.
    return _from_config(
        config, min_object_bytes=1024, min_expected_reuse=2.0, inline_after_invalidate=True
    )


CONNECTION_TTL_MS = 600_000


def _connection_scope(config: PolicyConfig) -> CachePolicy:
    # best_practice, with the reuse of connection-owned objects (system prompts, tool schemas)
    # counted across the connection's sessions, and a lease for them that outlives a session
    # (10 min unless connection_ttl_ms says otherwise): what the library's studies suggest.
    return replace(
        _best_practice(config), connection_ttl_ms=config.connection_ttl_ms or CONNECTION_TTL_MS
    )


def _always(config: PolicyConfig) -> CachePolicy:
    return _from_config(config, min_object_bytes=-1, min_expected_reuse=-1.0)


def _never(config: PolicyConfig) -> CachePolicy:
    return _from_config(config, caches=False, renew_margin=0.0)


def _threshold(config: PolicyConfig) -> CachePolicy:
    return _from_config(config)


POLICIES = {
    "best_practice": _best_practice,
    "connection_scope": _connection_scope,
    "always": _always,
    "never": _never,
    "threshold": _threshold,
}


def make_policy(config: PolicyConfig) -> CachePolicy:
    try:
        build = POLICIES[config.name]
    except KeyError:
        raise ValueError(
            f"unknown host policy {config.name!r} (known: {', '.join(POLICIES)})"
        ) from None
    return build(config)
