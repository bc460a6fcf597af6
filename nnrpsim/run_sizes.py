"""Each sweep point's run size (:mod:`nnrpsim.model.run_size`): a line for ``nnrpsim
validate``, and the refusal of a point whose runs this machine cannot hold, before anything
runs or is written. A trace workload is sized from its trace (read first, by
:func:`~nnrpsim.workload_facts.check_traces`: read again here from the cache)."""

from __future__ import annotations

import functools
import math
import sys

from .display_units import about, bytes_unit, counted
from .lines_alike import described_by_text
from .model.run_size import RunSize, machine_memory_bytes, run_size, trace_run_size
from .plain_numbers import separated
from .run_config import model_config
from .scenario import Point, ScenarioError
from .scenario.key_catalog import describe
from .traces import load_trace
from .workload_facts import sessions_per_s

PointSize = tuple[Point, RunSize]


def point_sizes(points: list[Point]) -> list[PointSize]:
    """Each point with its run's size, for :func:`check_run_sizes` and
    :func:`describe_run_sizes` (worked out once: 0.1 ms a synthetic point). Its callers (a
    study's setup, ``validate``) pause the cyclic garbage collector around it: a model
    configuration is kept for each point, and with 100,000 points two collections of
    everything took 5 s."""
    return [(point, _size(point)) for point in points]


def _size(point: Point) -> RunSize:
    config, trace = model_config(point.scenario), point.scenario.workload.trace
    if trace is not None:
        return trace_run_size(config, load_trace(trace), trace.read_as)
    return run_size(config, sessions_per_s(point.scenario))


def _memory_text(n: float) -> str:
    per_unit, unit = bytes_unit(n)
    return f"{separated(n / per_unit, 1)} {unit}"


BEYOND_FLOATS = f"more than {sys.float_info.max:.2g}"
"""An amount a float cannot hold (absurd rates overflow to infinity, and their bytes, infinity
times a size, to NaN): said so, not ``about nan bytes``."""


SESSION_KEYS = ("study.duration", "topology.hosts", "workload.sessions.rate_per_s")
OBJECT_KEYS = ("workload.objects.namespaces", "workload.objects.shared_per_namespace")
OPERATION_KEYS = (
    *SESSION_KEYS,
    "workload.sessions.duration",
    "workload.operations.rate_per_s",
)
FACTORS = {
    "sessions": SESSION_KEYS,
    "shared objects": OBJECT_KEYS,
    "private objects": (*SESSION_KEYS, "workload.objects.private_per_session"),
    "operations": OPERATION_KEYS,
    "references": (
        *OPERATION_KEYS,
        "workload.operations.shared_refs",
        "workload.operations.private_refs",
    ),
    "content changes": (
        *OBJECT_KEYS,
        *SESSION_KEYS,
        "workload.objects.private_per_session",
        "workload.invalidations.rate_per_s",
    ),
    "hosts": ("topology.hosts",),
    "servers": ("topology.servers",),
    "servers' samples": ("topology.servers", "study.duration"),
    "servers' object slots": (
        "topology.servers",
        *OBJECT_KEYS,
        *SESSION_KEYS,
        "workload.objects.private_per_session",
    ),
}
"""The scenario keys each count of a synthetic run grows with."""
TRACE = "workload.trace.path"
TRACE_FACTORS = {
    "hosts": "topology.hosts",
    "servers": "topology.servers",
    "servers' samples": "study.duration",
    "content changes": "workload.invalidations.rate_per_s",
}
"""The key a trace run's part is blamed on: its trace, but for the topology's own."""
ORDINARY = {
    **{key: default for key, default, _ in describe() if key in set().union(*FACTORS.values())},
    "workload.invalidations.rate_per_s": 0.01,  # (its default, none, is no scale)
}
"""Each key's value in an ordinary study (its default): a run too big for the machine is
blamed on the key furthest above it."""


def _blamed_key(part: str, point: Point) -> str:
    """Of the keys ``part`` grows with, the one furthest above its ordinary value (a trace
    run's: its trace, or the topology)."""
    scenario = point.scenario
    if scenario.workload.trace is not None:
        return TRACE_FACTORS.get(part, TRACE)

    def above(key: str) -> float:
        if key == "workload.sessions.rate_per_s":  # (or an arrival log's rate)
            value = sessions_per_s(scenario) / scenario.topology.hosts
        else:
            value = functools.reduce(getattr, key.split("."), scenario)
        return value / ORDINARY[key]

    key = max(FACTORS[part], key=above)
    if key == "workload.sessions.rate_per_s" and scenario.workload.sessions.arrivals is not None:
        return "workload.sessions.arrivals"
    return key


def check_run_sizes(
    sizes: list[PointSize], workers: int = 1, memory_bytes: float | None = None
) -> None:
    """Refuse the first point whose run would need more memory than ``memory_bytes`` (this
    machine's), naming the key behind the largest part of it; or, when each fits, ``workers``
    of the largest at once that do not, naming ``--jobs``."""
    memory = machine_memory_bytes() if memory_bytes is None else memory_bytes
    largest = 0.0
    for point, size in sizes:
        engine = point.scenario.engine
        peak = size.peak_bytes(engine)
        largest = max(largest, peak)
        if peak <= memory:
            continue
        parts = size.parts(engine)
        part = max(parts, key=lambda name: _nan_as_largest(parts[name]))
        where = f" (sweep point {point.index})" if len(sizes) > 1 else ""
        need = f"about {_memory_text(peak)}" if math.isfinite(peak) else f"{BEYOND_FLOATS} bytes"
        count = size.counts()[part]
        many = separated(count) if math.isfinite(count) else BEYOND_FLOATS
        raise ScenarioError(
            _blamed_key(part, point),
            f"one run{where} would need {need} of memory for its {many} {part}, more than "
            f"this machine's {_memory_text(memory)}",
        )
    if workers * largest > memory:
        raise ScenarioError(
            "--jobs",
            f"{workers} runs at once would need about {_memory_text(workers * largest)} of "
            f"memory, more than this machine's {_memory_text(memory)}: "
            f"pass --jobs {int(memory // largest)}",
        )


def _nan_as_largest(n: float) -> float:
    """``n``, NaN (infinity times a size) as the largest of all."""
    return math.inf if math.isnan(n) else n


def describe_run_sizes(sizes: list[PointSize]) -> list[str]:
    """What one run of each point draws and the memory a worker needs for it, a line for
    each distinct size with the points that share it (one for many alike)."""
    described: list[tuple[str, int]] = []
    for point, size in sizes:
        if size.trace_files:  # (its counts are the trace's, exact, in the line above)
            draws = f"one run replays {counted(int(size.references), 'reference')} of the trace"
        else:
            objects = size.shared_objects + size.private_objects
            operations = f"{about(size.operations)} operations"  # (a mean: sessions cut short)
            if size.operations > size.requests:  # (at most: see run_size)
                frames = round(size.operations / size.requests)
                operations = (
                    f"{about(size.requests)} requests in up to {operations} (a request may "
                    f"name {frames} objects of a slotted kind, sent a frame each)"
                )
            draws = (
                f"one run draws ~{size.sessions:,.0f} sessions, ~{objects:,.0f} objects, "
                f"{operations}"
            )
        if size.content_changes:  # (a mean: a trace's own, exact, with those drawn)
            draws += f", {about(size.content_changes)} content changes"
        memory = _memory_text(size.peak_bytes(point.scenario.engine))
        text = f"{draws}; a worker needs about {memory} of memory for it"
        described.append((text, point.index))
    return described_by_text(described)
