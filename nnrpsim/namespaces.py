"""How a synthetic workload numbers its cache namespaces (a u32 on the wire): the shared
objects' namespaces are 1, 2, ..., and each host's private objects have one of their own from
``PRIVATE_NAMESPACE_BASE`` on. Kept apart so the two ranges never meet, which bounds the counts
of both: the scenario layer and the model check them from here."""

from __future__ import annotations

from nnrpsim.protocol import U32_MAX

PRIVATE_NAMESPACE_BASE = 1 << 20
MAX_SHARED_NAMESPACES = PRIVATE_NAMESPACE_BASE - 1
"""Beyond this a shared namespace would be a host's private one, its objects' identities
those of that host's sessions' objects."""
MAX_HOSTS = U32_MAX - PRIVATE_NAMESPACE_BASE + 1
