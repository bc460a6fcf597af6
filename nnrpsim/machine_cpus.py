"""How many processors a study may use: those this process may run on (a cpuset: ``taskset``,
``docker --cpuset-cpus``), and no more than its control group's CPU quota (``docker --cpus``,
a Kubernetes limit). ``os.cpu_count()`` counts the machine's: a notebook's pod limited to 2
CPUs on a 64-core node started 64 workers, each importing nnrpsim and holding a run's memory,
or was refused for memory by ``--jobs`` it never set."""

from __future__ import annotations

import math
import os
from pathlib import Path

CPU_QUOTA_V2 = "/sys/fs/cgroup/cpu.max"
"""Control groups v2: ``<quota> <period>`` in microseconds, or ``max <period>`` (none)."""
CPU_QUOTA_V1 = ("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "/sys/fs/cgroup/cpu/cpu.cfs_period_us")
"""Control groups v1: the quota (``-1``: none) and the period, in microseconds."""


def usable_cpus(v2: str | None = None, v1: tuple[str, str] | None = None) -> int:
    """The processors this process may run on, at most its CPU quota rounded up (1.5 CPUs:
    2 workers, each a share of the time). ``v2``, ``v1``: other quota files than
    :data:`CPU_QUOTA_V2` and :data:`CPU_QUOTA_V1`."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # (no affinity on macOS or Windows)
        cpus = os.cpu_count() or 1
    quota = _quota(v2 or CPU_QUOTA_V2, v1 or CPU_QUOTA_V1)
    return cpus if quota is None else max(1, min(cpus, math.ceil(quota)))


def _quota(v2: str, v1: tuple[str, str]) -> float | None:
    """The control group's CPU quota in processors, or None where it sets none (or it cannot
    be read: not Linux, no control group)."""
    try:
        quota, period = Path(v2).read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota, period = (Path(path).read_text().strip() for path in v1)
        except OSError:
            return None
    try:
        share = int(quota) / int(period)
    except (ValueError, ZeroDivisionError):  # ("max": none; v1's -1 comes out below 0)
        return None
    return share if share > 0 else None
