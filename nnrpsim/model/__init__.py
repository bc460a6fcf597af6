"""The SimPy model: hosts, servers, GPU memory and links exchanging NNRP/1 cache frames.

Timing and wiring only; every cache decision is made by :mod:`nnrpsim.engine`.
"""

from nnrpsim import BUILD_STATUS

from .config import FaultConfig, LinkConfig, ModelConfig, PolicyConfig, ServerConfig, WorkloadConfig
from .policies import POLICIES, CachePolicy, make_policy
from .records import InstallCause, RefOutcome
from .simulation import ModelResult, Simulation, simulate
from .workload import (
    SessionPlan,
    WorkloadPlan,
    stream_plan,
    synthetic_plan,
    with_content_changes,
)

__all__ = [
    "BUILD_STATUS",
    "POLICIES",
    "CachePolicy",
    "FaultConfig",
    "InstallCause",
    "LinkConfig",
    "ModelConfig",
    "ModelResult",
    "PolicyConfig",
    "RefOutcome",
    "ServerConfig",
    "SessionPlan",
    "Simulation",
    "WorkloadConfig",
    "WorkloadPlan",
    "make_policy",
    "simulate",
    "stream_plan",
    "synthetic_plan",
    "with_content_changes",
]
