"""Which objects a host caches in a session: the policy's one decision per session and object,
made alike by the DES hosts and by the vector engine's run of the same plan."""

from __future__ import annotations

from nnrpsim.engine import CacheLimits

from .config import WorkloadConfig
from .policies import CachePolicy
from .workload import SessionPlan, WorkloadPlan


class CacheDecisions:
    def __init__(self, policy: CachePolicy, workload: WorkloadConfig, plan: WorkloadPlan) -> None:
        self.policy = policy
        self.workload = workload
        self.plan = plan
        # read one object at a time: plain lists, not numpy scalars
        self.sizes: list[int] = plan.sizes.tolist()
        self.kinds: list[int] = plan.catalog.kind.tolist()
        self._reuse_per_operation: list[float] = plan.shared_reuse_per_operation.tolist()
        self._ops_per_ms = workload.operation_rate_per_s / 1000.0

    def shared_reuse(self, obj: int, session: SessionPlan) -> float:
        """Expected references of a shared object within ``session``; with a connection TTL,
        by all of the host's sessions of its namespace while one lease lasts."""
        per_operation = self._reuse_per_operation[obj]
        connection_ttl = self.policy.connection_ttl_ms
        if connection_ttl is None:
            return self._ops_per_ms * session.expected_ms * per_operation
        workload = self.workload
        sessions = self.plan.sessions_per_ms * workload.session_duration_ms  # concurrent, a host
        return self._ops_per_ms * sessions / workload.namespaces * connection_ttl * per_operation

    def caches(self, session: SessionPlan, obj: int, limits: CacheLimits) -> bool:
        """Whether the host caches ``obj`` in ``session`` under the cache ceiling ``limits``:
        the policy's size and reuse thresholds, a kind and size the ceiling allows, and, for
        an object made from another, its source cached too (a reference needs it)."""
        size = self.sizes[obj]
        reuse = session.expected_reuse.get(obj)
        if reuse is None:
            reuse = self.shared_reuse(obj, session)
        if not (self.policy.should_cache(size, reuse) and limits.allows(self.kinds[obj], size)):
            return False
        source = self.plan.depends_on.get(obj)
        return source is None or self.caches(session, source, limits)
