"""How big one run is, before anything is drawn: a synthetic workload's in closed form, a
trace's from the trace.

A run draws its whole plan up front (:mod:`.workload`): every session, object, operation and
content change, as Python objects and numpy arrays. So its memory follows from those counts,
and a scenario whose counts this machine cannot hold is refused before it starts, where it
would otherwise fail deep in the plan (``Unable to allocate 298. GiB``) or run the machine
into swap first. ``nnrpsim validate`` prints the counts, so a run's size is known too.

The bytes per unit are fitted to the peak resident memory of runs of the default scenario with
each count raised in turn (2026-12-03: 600 to 6,000 sessions, 2,600 to 1.2 million objects,
31,000 to 620,000 operations, 110,000 to 2.3 million references, up to 160,000 content changes;
servers, hosts). Those raised operations and references together, four references an operation,
so the DES's cost of each was refitted (2026-12-06) to runs of 1 to 16 references an operation
(0.58 to 1.84 times what they measured, before) and the vector engine's servers to runs of 100
to 1,000 servers (up to 6.9 times, before: its servers replay one after another, and it keeps no
memory samples); the vector engine's costs of an operation, a reference and a trace's reading
were fitted again once its replay kept less (the same day). Measured then, on 22 runs of the DES
and 23 of the vector engine: the DES within 0.80 to 1.32 times, the vector engine within 0.77 to
1.37 but for small runs over 100 or 1,000 servers, 1.28 and 1.63 (a test holds runs the fit did
not see within half and twice).

A trace run is one session over the trace's window (:func:`~.workload.stream_plan`), sized by
the same bytes per unit, and its worker reads the whole trace besides: a fixed cost and a cost
per reference of the file, by format, fitted (2026-12-06) to runs of the Mooncake trace
repeated 1, 4 and 16 times (122,000 to 2 million references, 30 to a request) and of CSV and
Parquet logs of 400,000 and 1.6 million references, 1 to 32 to an operation. Those estimate
the DES within 0.89 to 1.09 times what it measured and the vector engine within 0.87 to 1.08.
A log's frame is still held when the run peaks, a Mooncake trace's lines are not: with one
cost for both, the DES's estimate of the Mooncake runs was twice their peak. Since a trace's
object ids are held as one Python int an object (the same day), its runs peak lower: the
vector engine's Mooncake reading was lowered to match (260 to 210 bytes a reference: 1.01 and
1.08 times the peaks of the trace 4 and 16 times over), the DES's Mooncake runs stay 1.02 to
1.16 times over (their reading is 5 bytes a reference: what they saved was the reference's).
Since the vector engine's stream and replay let go of what they no longer need (the same day),
its Mooncake runs peak lower again, and its reading was lowered to 140 bytes a reference:
the library's Mooncake scenario, and the trace 4 and 16 times over, 1.02, 1.02 and 1.06
times their peaks (1.07, 1.14 and 1.25 at 210). Measured again 2026-12-07 at the scenario's
shortest leases (10 s, the most of them), once the memory held had its spans: the trace
once, 4 times and 16 times over with new objects in each copy, and 16 times over the same
objects, peaked at 182, 366, 1,096 and 659 MiB (the last two 1,258 and 824 before the
ordered replay stopped keeping an expiry heap no shortfall reads), 0.94, 0.81, 0.73 and 0.99
times the estimate: a trace run's objects weigh more than a synthetic run's. With 460 bytes
a trace object on the vector engine, 1.05, 1.02, 1.01 and 1.02 times. The DES's runs and the
logs were not measured again. Once the ordered replay let its sweeps free the leases run out
(the same day), those four peaked at 169, 307, 863 and 637 MiB: 110 bytes a trace object,
1.04, 1.02, 1.01 and 1.03 times.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from nnrpsim.engine.stream import ReferenceStream

from .config import ModelConfig
from .slot_frames import slot_shares, stream_frames
from .workload_means import measured_ramp

WORKER_BYTES = 120 << 20
"""A worker process with nnrpsim, numpy, SimPy and pandas imported, before its first run
(pandas only once it reads a trace or draws the plots: a synthetic run's peak is lower)."""


PART_OF_COUNT = {
    "sessions": "sessions",
    "shared_objects": "shared objects",
    "private_objects": "private objects",
    "operations": "operations",
    "references": "references",
    "content_changes": "content changes",
    "hosts": "hosts",
    "servers": "servers",
    "server_samples": "servers' samples",
    "server_object_slots": "servers' object slots",
    "trace_files": "trace files",
    "trace_references": "trace references",
    "trace_objects": "trace objects",
}
"""Each count of :class:`RunSize` by the name of the part of a run's memory it makes."""
PARTS = tuple(PART_OF_COUNT.values())
TRACE_PARTS = tuple(
    PART_OF_COUNT[name] for name in ("trace_files", "trace_references", "trace_objects")
)
"""The parts only a trace workload's run has."""

RUN_PARTS = tuple(part for part in PARTS if part not in TRACE_PARTS)
ENGINE_BYTES: dict[str, dict[str, float]] = {
    # the DES keeps a log row per operation and per reference; the plan dominates. Each server
    # holds its own (its lease table at its first capacity, its processes), its memory samples
    # (carried back in the run's tables) and its table's columns for every object of the catalog
    "des": dict(
        zip(RUN_PARTS, (3_500, 250, 250, 500, 90, 80, 8_000, 118_000, 770, 5), strict=True)
    ),
    # the vector engine flattens the plan into a reference stream beside it; its servers replay
    # one after another, each leaving only its counts per object of the catalog, and it samples
    # no memory (it integrates it)
    "vector": dict(zip(RUN_PARTS, (200, 200, 200, 340, 125, 220, 8_000, 0, 0, 26), strict=True)),
}
"""Peak memory a run takes per unit of each count, by engine (a trace's reading aside)."""


def _reads(
    mooncake: tuple[float, float, float], log: tuple[float, float, float]
) -> dict[str, dict[str, float]]:
    """Each format's (per file, per reference, per object) costs by part: a CSV and a Parquet
    log are read into the same frame, and cost alike."""
    return {
        fmt: dict(zip(TRACE_PARTS, costs, strict=True))
        for fmt, costs in (("mooncake", mooncake), ("csv", log), ("parquet", log))
    }


TRACE_READ = {
    # a Mooncake trace's lines are read and dropped before the plan peaks; a log's frame is not
    "des": _reads(mooncake=(5_600_000, 5, 0), log=(14_500_000, 140, 0)),
    "vector": _reads(mooncake=(10_000_000, 140, 110), log=(29_000_000, 170, 0)),
}
"""A trace workload's worker reads the whole trace: per trace file, and per reference in
it, by engine and by the trace's format; and a trace run holds its objects beyond what a
synthetic object takes (measured on the vector engine's Mooncake runs only)."""


@dataclass(frozen=True)
class RunSize:
    """What one run draws and keeps: expected counts over all hosts and servers."""

    sessions: float
    shared_objects: float
    private_objects: float
    operations: float
    references: float  # distinct objects over all operations, at most
    content_changes: float
    hosts: float
    servers: float
    server_samples: float
    server_object_slots: float
    requests: float = 0.0  # the workload's operations, before they are split into frames
    trace_files: float = 0.0
    trace_references: float = 0.0  # all the trace's, where references are its window's
    trace_objects: float = 0.0  # the window's, as shared_objects
    trace_format: str = "csv"  # (how the trace is read: its counts are nought without one)

    def counts(self) -> dict[str, float]:
        """Each count by its part's name (:data:`PARTS`)."""
        return {
            PART_OF_COUNT[f.name]: getattr(self, f.name)
            for f in fields(self)
            if f.name in PART_OF_COUNT
        }

    def parts(self, engine: str) -> dict[str, float]:
        """The run's peak memory beyond a worker's own, by the count that takes it."""
        per_unit = {**ENGINE_BYTES[engine], **TRACE_READ[engine][self.trace_format]}
        return {part: n * per_unit[part] for part, n in self.counts().items()}

    def peak_bytes(self, engine: str) -> float:
        """A worker's memory at the run's peak, its own included."""
        return WORKER_BYTES + sum(self.parts(engine).values())


def run_size(config: ModelConfig, sessions_per_s: float) -> RunSize:
    """The counts one run of ``config`` draws, with sessions starting at ``sessions_per_s``
    over all hosts. A session starting at a uniform time in the run lasts, on average, the
    mean length times the sessions' climb averaged over the run (:func:`measured_ramp`): its
    operations end with the run."""
    workload, duration_ms = config.workload, config.duration_ms
    sessions = sessions_per_s * duration_ms / 1000.0
    mean_ms, cv = workload.session_duration_ms, workload.session_duration_cv
    session_ms = mean_ms * measured_ramp(0.0, duration_ms, mean_ms, cv)
    requests = sessions * workload.operation_rate_per_s * session_ms / 1000.0
    shared = workload.shared_objects_per_namespace
    private = workload.private_objects_per_session
    shared_refs = workload.shared_refs_per_operation
    private_refs = workload.private_refs_per_operation
    per_request = min(shared_refs, shared) + min(private_refs, private)
    # a request's frames, at most: one for each object of the slotted kind it may name most
    # (counted from the kinds' shares: spreading them would take 8 bytes an object)
    slotted = np.minimum(
        shared_refs, np.ceil(shared * slot_shares(workload.shared_kinds))
    ) + np.minimum(private_refs, np.ceil(private * slot_shares(workload.private_kinds)))
    objects = workload.namespaces * shared + sessions * private
    return RunSize(
        sessions=sessions,
        shared_objects=float(workload.namespaces * shared),
        private_objects=sessions * private,
        operations=requests * max(1, int(slotted.max())),
        references=requests * per_request,
        requests=requests,
        content_changes=workload.content_change_rate_per_s
        * (workload.namespaces * shared * duration_ms + sessions * private * session_ms)
        / 1000.0,  # (a private object changes while its session runs)
        hosts=float(config.hosts),
        servers=float(config.servers),
        server_samples=config.servers * duration_ms / config.sample_interval_ms,
        server_object_slots=config.servers * objects,
    )


def trace_run_size(config: ModelConfig, trace: ReferenceStream, trace_format: str) -> RunSize:
    """The counts one run of ``config`` over ``trace`` (the whole file, as read in
    ``trace_format``) draws: one session, an operation per request and every object the trace
    names, within the run's window (the references before the run's end, as a worker cuts it)."""
    window = trace.before(int(config.duration_ms))
    objects = float(window.n_objects)
    # each object's changes are drawn from its first reference on
    lives_s = (config.duration_ms - window.first_references_ms(config.duration_ms)).sum() / 1e3
    return RunSize(
        sessions=1.0,
        shared_objects=objects,
        private_objects=0.0,
        operations=float(stream_frames(window)),
        references=float(len(window)),
        content_changes=len(window.invalidation_time_ms)
        + float(lives_s) * config.workload.content_change_rate_per_s,
        hosts=float(config.hosts),
        servers=float(config.servers),
        server_samples=config.servers * config.duration_ms / config.sample_interval_ms,
        server_object_slots=config.servers * objects,
        trace_files=1.0,
        trace_references=float(len(trace)),
        trace_objects=objects,
        trace_format=trace_format,
    )


CGROUP_LIMIT_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
"""Where a container's memory limit is kept: control groups v2, then v1 (``max``: none)."""


def machine_memory_bytes(limit_files: tuple[str, ...] = CGROUP_LIMIT_FILES) -> float:
    """This machine's memory, or its control group's limit where that is lower (a container);
    infinite where the system does not say (no ``sysconf``: Windows)."""
    try:
        total: float = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        total = math.inf
    for limit_file in limit_files:
        try:
            text = Path(limit_file).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total
