"""Invariant auditor: counts what a correct simulation never does. Every count must end at zero.

It re-checks each hit against the lease table independently of the lookup that produced it, and
grows with the layered-caching rules (tenant boundaries, side effects) when they arrive.
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass
class Auditor:
    hit_on_expired_lease: int = 0
    hit_on_wrong_version: int = 0
    hit_on_stale_content: int = 0
    reference_after_invalidate: int = 0
    operation_never_completed: int = 0
    fallbacks: int = 0
    fallbacks_completed: int = 0

    def check_hit(
        self, now_ms: int, expires_ms: int, version: int, expected: int, current: int
    ) -> None:
        """A hit must be on a live lease, at the version the host asked for, of current content."""
        if expires_ms <= now_ms or version != expected or version != current:
            self.hit_on_expired_lease += expires_ms <= now_ms
            self.hit_on_wrong_version += version != expected
            self.hit_on_stale_content += version != current

    @property
    def violations(self) -> int:
        """Every rule broken, each failure once: a fallback that never completed is an operation
        that never completed (its session is still waiting when the run ends), so it shows in
        ``fallback_success_rate`` but is not counted again."""
        return (
            self.hit_on_expired_lease
            + self.hit_on_wrong_version
            + self.hit_on_stale_content
            + self.reference_after_invalidate
            + self.operation_never_completed
        )

    @property
    def fallback_success_rate(self) -> float:
        return self.fallbacks_completed / self.fallbacks if self.fallbacks else 1.0

    def as_dict(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
