"""What a study's workloads are, before it runs: each trace and arrival log it reads, described
(and so checked: a bad one is bad input up front), each synthetic workload's closed-form means
and what its host policy's thresholds pass, its sessions a second, and the digests of its files."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .display_units import counted, percent
from .engine.stream import ReferenceStream
from .input_files import file_digest
from .lines_alike import described_by_text
from .model.config import ModelConfig
from .model.policies import make_policy
from .model.policy_reach import PolicyReach, policy_reach
from .protocol import CacheObjectKind
from .scenario import Scenario
from .scenario.sweep import Point
from .traces import load_arrivals, load_trace


def check_traces(points: list[Point]) -> list[str]:
    """Read every trace the sweep points use: a bad trace is bad input, reported before
    anything runs, and by ``nnrpsim validate``. Returns a line describing each."""
    workloads = [point.scenario.workload for point in points]
    lines = []
    for spec in sorted({workload.trace for workload in workloads} - {None}, key=str):
        stream = load_trace(spec)
        lines.append(
            f"trace {Path(spec.path).name} (time_scale {spec.time_scale:g}): "
            f"{counted(len(stream), 'reference')} in "
            f"{counted(len(stream.operation_bounds()) - 1, 'operation')} "
            f"to {counted(stream.n_objects, 'object')} over {stream.duration_ms / 1000:,.1f} s"
            + _kind_counts(stream)
            + _repeats(stream)
        )
    for spec in sorted({workload.sessions.arrivals for workload in workloads} - {None}, key=str):
        times = load_arrivals(spec)
        span_s = times[-1] / 1000
        rate = f", {len(times) / span_s:,.2f}/s" if span_s > 0 else ""
        lines.append(
            f"arrivals {Path(spec.path).name} (time_scale {spec.time_scale:g}): "
            f"{len(times):,} over {span_s:,.1f} s{rate}"
        )
    return lines


def describe_workloads(points: list[Point]) -> list[str]:
    """The closed-form means of each synthetic workload the points run, and the share of its
    references whose objects the host policy's thresholds pass: a line for each distinct one
    with the points that share it, one for many alike (trace workloads are described above)."""
    from .model.workload_means import describe_means, workload_means
    from .run_config import model_config

    described: list[tuple[str, int]] = []
    for point in points:
        if point.scenario.workload.trace is None:
            config = model_config(point.scenario)
            means = workload_means(config.workload, sessions_per_s(point.scenario))
            text = describe_means(means) + _thresholds_pass(point.scenario, config)
            described.append((text, point.index))
    return described_by_text(described)


def scenario_reach(scenario: Scenario, config: ModelConfig) -> PolicyReach:
    """:func:`~nnrpsim.model.policy_reach.policy_reach` of a synthetic scenario's host policy
    on its workload (``config``, its model's)."""
    per_host_ms = sessions_per_s(scenario) / scenario.topology.hosts / 1000
    return policy_reach(config.workload, make_policy(config.policy), per_host_ms)


def _thresholds_pass(scenario: Scenario, config: ModelConfig) -> str:
    """How much of the workload the host policy's size and reuse thresholds let it cache, in
    closed form: is the spec's rule (more than 1 KiB, reused more than twice) one for this
    workload? Nothing for ``never``, or a policy that passes every object (``always``)."""
    if scenario.host_policy.name == "never":
        return ""
    share = scenario_reach(scenario, config).cached_share
    if not share < 1:
        return ""
    name = scenario.host_policy.name
    return f"; {name}'s thresholds pass the objects of {percent(share)} of the references"


def input_digests(points: list[Point]) -> dict[str, str]:
    """Each trace and arrival log the points read, by path: a digest of its content, which a
    study's manifest records so that ``--resume`` does not add runs of a changed file to the
    runs of the one before (the scenario names a file, not what it holds)."""
    paths = set()
    for point in points:
        workload = point.scenario.workload
        paths |= {spec.path for spec in (workload.trace, workload.sessions.arrivals) if spec}
    return {path: file_digest(path) for path in sorted(paths)}


def sessions_per_s(scenario: Scenario) -> float:
    """Sessions starting per second over all hosts: the Poisson rate of each host, or the
    arrival log's rate over the run (arrivals after its end are dropped)."""
    sessions, duration_ms = scenario.workload.sessions, scenario.study.duration
    if sessions.arrivals is None:
        return sessions.rate_per_s * scenario.topology.hosts
    times = load_arrivals(sessions.arrivals)
    return int((times < duration_ms).sum()) / (duration_ms / 1000)


def _kind_counts(stream: ReferenceStream) -> str:
    """The trace's objects by kind, when it names kinds."""
    if stream.object_kind is None:
        return ""
    codes, counts = np.unique(stream.object_kind, return_counts=True)
    named = [f"{n:,} {CacheObjectKind(c).name.lower()}" for c, n in zip(codes, counts, strict=True)]
    return f" ({', '.join(named)})"


def _repeats(stream: ReferenceStream) -> str:
    """The references that name an object their operation names already: a frame references
    an object once (:func:`~nnrpsim.model.workload.stream_plan`), so a run counts them once."""
    bounds = stream.operation_bounds()
    operation = np.repeat(np.arange(len(bounds) - 1), np.diff(bounds))
    # (by a sort: numpy 2.4's np.unique hashes, 3 s for 3 million distinct pairs, 0.2 s so)
    pairs = np.sort(operation * (stream.n_objects + 1) + stream.object_id)
    repeated = int(np.count_nonzero(pairs[1:] == pairs[:-1]))
    if not repeated:
        return ""
    if repeated == 1:
        return "; 1 reference repeats an object within its operation: a run counts it once"
    return (
        f"; {repeated:,} references repeat an object within their operation: a run counts each once"
    )
