"""How big one run is, before anything is drawn: a synthetic workload's in closed form, a
trace's from the trace.

A run draws its whole plan up front (:mod:`.workload`): every session, object, operation and
content change, as Python objects and numpy arrays. So its memory follows from those counts,
and a scenario whose counts this machine cannot hold is refused before it starts, where it
would otherwise fail deep in the plan (``Unable to allocate 298. GiB``) or run the machine
into swap first. ``nnrpsim validate`` prints the counts, so a run's size is known too.

The bytes per unit are fitted to the peak resident memory of runs of the default scenario with
each count raised in turn (2026-12-03: 600 to 6,000 sessions, 2,600 to 1.2 million objects,
31,000 to 620,000 operations, 110,000 to 2.3 million references, up to 160,000 content
changes; servers, hosts), and estimate each of those within 0.89 to 1.41 times what it
measured. Runs the fit did not see, as a worker runs them: several counts raised at once, 0.92
times on the DES and 1.12 on the vector engine; 500 servers, 1.19 (a test holds them within
half and twice).

A trace run is one session over the trace's window (:func:`~.workload.stream_plan`), sized by
the same bytes per unit, and its worker reads the whole trace besides: a fixed cost and a cost
per reference of the file, fitted (2026-12-03) to runs of the Mooncake trace repeated 1, 4 and
16 times (122,000 to 2 million references) and of CSV logs of 100,000 to 1.6 million
references. Those estimate the DES within 0.82 to 1.50 times what it measured (a Mooncake
trace's JSON lines take less than a CSV log's columns) and the vector engine within 0.88 to
1.14.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from pathlib import Path

from nnrpsim.engine.stream import ReferenceStream

from .config import ModelConfig
from .workload_means import measured_ramp

WORKER_BYTES = 120 << 20
"""A worker process with nnrpsim, numpy, SimPy and pandas imported, before its first run."""


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
}
"""Each count of :class:`RunSize` by the name of the part of a run's memory it makes."""
PARTS = tuple(PART_OF_COUNT.values())
TRACE_PARTS = (PART_OF_COUNT["trace_files"], PART_OF_COUNT["trace_references"])
"""The parts only a trace workload's run has."""

EACH_SERVER = (118_000, 770, 5)
"""A server's own (its lease table at its first capacity, its processes), per memory sample
it records (as the run's tables carry it back), and per object of the catalog (the table's
per-object columns): fitted to runs of 1 and 1,000 servers, of 100 and 300 s."""
TRACE_READ = {"des": (25_000_000, 100), "vector": (25_000_000, 150)}
"""A trace workload's worker reads the whole trace: per trace file, and per reference in it."""
ENGINE_BYTES: dict[str, dict[str, float]] = {
    # the DES keeps a log row per operation and per reference; the plan dominates
    "des": dict(
        zip(
            PARTS,
            (3_500, 250, 250, 90, 190, 80, 8_000, *EACH_SERVER, *TRACE_READ["des"]),
            strict=True,
        )
    ),
    # the vector engine flattens the plan into a reference stream beside it
    "vector": dict(
        zip(
            PARTS,
            (200, 200, 200, 210, 330, 220, 8_000, *EACH_SERVER, *TRACE_READ["vector"]),
            strict=True,
        )
    ),
}
"""Peak memory a run takes per unit of each count, by engine."""


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
    trace_files: float = 0.0
    trace_references: float = 0.0  # all the trace's, where references are its window's

    def counts(self) -> dict[str, float]:
        """Each count by its part's name (:data:`PARTS`)."""
        return {PART_OF_COUNT[f.name]: getattr(self, f.name) for f in fields(self)}

    def parts(self, engine: str) -> dict[str, float]:
        """The run's peak memory beyond a worker's own, by the count that takes it."""
        per_unit = ENGINE_BYTES[engine]
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
    operations = sessions * workload.operation_rate_per_s * session_ms / 1000.0
    shared = workload.shared_objects_per_namespace
    private = workload.private_objects_per_session
    per_operation = min(workload.shared_refs_per_operation, shared) + min(
        workload.private_refs_per_operation, private
    )
    objects = workload.namespaces * shared + sessions * private
    return RunSize(
        sessions=sessions,
        shared_objects=float(workload.namespaces * shared),
        private_objects=sessions * private,
        operations=operations,
        references=operations * per_operation,
        content_changes=workload.content_change_rate_per_s
        * (workload.namespaces * shared * duration_ms + sessions * private * session_ms)
        / 1000.0,  # (a private object changes while its session runs)
        hosts=float(config.hosts),
        servers=float(config.servers),
        server_samples=config.servers * duration_ms / config.sample_interval_ms,
        server_object_slots=config.servers * objects,
    )


def trace_run_size(config: ModelConfig, trace: ReferenceStream) -> RunSize:
    """The counts one run of ``config`` over ``trace`` (the whole file, as read) draws: one
    session, an operation per request and every object the trace names, within the run's
    window (the references before the run's end, as a worker cuts it)."""
    window = trace.before(int(config.duration_ms))
    objects = float(window.n_objects)
    # each object's changes are drawn from its first reference on
    lives_s = (config.duration_ms - window.first_references_ms(config.duration_ms)).sum() / 1e3
    return RunSize(
        sessions=1.0,
        shared_objects=objects,
        private_objects=0.0,
        operations=float(len(window.operation_bounds()) - 1),
        references=float(len(window)),
        content_changes=len(window.invalidation_time_ms)
        + float(lives_s) * config.workload.content_change_rate_per_s,
        hosts=float(config.hosts),
        servers=float(config.servers),
        server_samples=config.servers * config.duration_ms / config.sample_interval_ms,
        server_object_slots=config.servers * objects,
        trace_files=1.0,
        trace_references=float(len(trace)),
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
