"""The vectorised lease and eviction engine: numpy only, no SimPy, no pandas, no I/O."""

from .catalog import ObjectCatalog
from .eviction import POLICIES, policy_key
from .limits import CacheLimits
from .outcomes import EndReason, Outcome
from .table import InstallAck, InstallResult, LeaseTable

__all__ = [
    "POLICIES",
    "CacheLimits",
    "EndReason",
    "InstallAck",
    "InstallResult",
    "LeaseTable",
    "ObjectCatalog",
    "Outcome",
    "policy_key",
]
