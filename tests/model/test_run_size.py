"""A run's size in closed form (:mod:`nnrpsim.model.run_size`) against drawn plans, and its
memory estimate against the peak a real run reaches in a process of its own."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import nnrpsim
from nnrpsim.display_units import about
from nnrpsim.model import ModelConfig, WorkloadConfig
from nnrpsim.model.run_size import WORKER_BYTES, machine_memory_bytes, run_size, trace_run_size
from nnrpsim.model.workload import stream_plan, synthetic_plan
from nnrpsim.protocol import CacheObjectKind
from nnrpsim.run_config import model_config
from nnrpsim.run_sizes import point_sizes
from nnrpsim.scenario import parse_scenario, sweep_points
from nnrpsim.traces import load_trace
from nnrpsim.workload_facts import sessions_per_s
from tests.conftest import ROOT

BUSY = WorkloadConfig(session_rate_per_s=10.0, content_change_rate_per_s=0.002)
CAMERAS = ((CacheObjectKind.CAMERA_BLOCK, 1.0),)


@pytest.mark.parametrize(
    ("workload", "hosts", "duration_ms"),
    [
        (BUSY, 1, 1_800_000.0),  # sessions 30 times shorter than the run
        (BUSY, 2, 90_000.0),  # a run shorter than two sessions: most end with it
        (replace(BUSY, session_duration_cv=0.0, private_objects_per_session=0), 1, 600_000.0),
        (replace(BUSY, shared_objects_per_namespace=1, shared_refs_per_operation=3), 3, 300_000.0),
        # requests of all four camera blocks of their session: four frames each
        (replace(BUSY, private_refs_per_operation=10**6, private_kinds=CAMERAS), 1, 300_000.0),
    ],
)
def test_the_counts_are_those_a_drawn_plan_has(workload, hosts, duration_ms):
    config = ModelConfig(duration_ms=duration_ms, hosts=hosts, workload=workload)
    size = run_size(config, workload.session_rate_per_s * hosts)
    plan = synthetic_plan(workload, hosts, duration_ms, np.random.SeedSequence(11))
    operations = [objects for session in plan.sessions for _, objects in session.operations]
    n_shared = workload.namespaces * workload.shared_objects_per_namespace
    assert size.shared_objects == n_shared
    assert size.sessions == pytest.approx(len(plan.sessions), rel=0.04)
    assert size.private_objects == pytest.approx(len(plan.sizes) - n_shared, rel=0.04)
    assert size.operations == pytest.approx(len(operations), rel=0.04)
    distinct = sum(len(objects) for objects in operations)
    assert 0.8 * size.references <= distinct <= 1.04 * size.references  # (at most: duplicates)
    assert size.content_changes == pytest.approx(len(plan.change_times_ms), rel=0.06)


MEASURE = """
import json, sys
import pandas  # (in WORKER_BYTES: a worker imports it to read a trace, or to draw the plots)
from nnrpsim.tasks import run_task, tasks_for
from nnrpsim.scenario import parse_scenario, sweep_points

def peak_kib():  # (this process's own: getrusage's also counts the parent's before the exec)
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))

(task,) = tasks_for(sweep_points(parse_scenario(json.loads(sys.argv[1]))))
before = peak_kib()
assert run_task(task)["record"]["error"] is None
print((peak_kib() - before) * 1024)
"""
RAISED = {  # several counts raised at once, none as the fit had them (one at a time)
    "objects": {"shared_per_namespace": 5_000, "private_per_session": 300},
    "operations": {"rate_per_s": 4},
    "invalidations": {"rate_per_s": 0.01},
}


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads Linux's VmHWM")
@pytest.mark.parametrize(
    ("engine", "topology", "workload"),
    [
        ("des", {}, RAISED),
        ("vector", {}, RAISED),
        ("des", {"servers": 500}, {}),
        # (its servers replay one after another, each leaving its counts per object)
        ("vector", {"servers": 1000}, {"objects": {"shared_per_namespace": 1000}}),
    ],
)
def test_the_memory_estimate_is_within_half_and_twice_a_runs_peak(engine, topology, workload):
    """The peak resident memory of a worker's run (:func:`run_task`, the tables it carries
    back included), beyond what its process held before, in a process of its own (the peak
    is the process's)."""
    raw = {
        "study": {"replications": 1, "duration": "5min"},
        "engine": engine,
        "topology": topology,
        "workload": workload,
    }
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(raw)], capture_output=True, text=True, check=True
    )
    grew = int(proc.stdout)
    (point,) = sweep_points(parse_scenario(raw))
    size = run_size(model_config(point.scenario), sessions_per_s(point.scenario))
    estimate = size.peak_bytes(engine) - WORKER_BYTES
    assert grew > 100 << 20  # (a run big enough that the estimate's parts tell)
    assert 0.5 <= estimate / grew <= 2.0, (estimate, grew)


MOONCAKE = ROOT.parent / "shared/data/traces/mooncake_synthetic_trace.jsonl"


def test_a_trace_runs_counts_are_those_of_the_plan_its_window_makes():
    raw = {"study": {"duration": "300s"}, "workload": {"trace": {"path": str(MOONCAKE)}}}
    (point,) = sweep_points(parse_scenario(raw))
    config, trace = model_config(point.scenario), load_trace(point.scenario.workload.trace)
    size = trace_run_size(config, trace, "mooncake")
    plan = stream_plan(trace.before(300_000))
    operations = [objects for session in plan.sessions for _, objects in session.operations]
    assert (size.sessions, size.operations) == (len(plan.sessions), len(operations))
    assert size.shared_objects + size.private_objects == len(plan.sizes)
    assert size.references >= sum(map(len, operations)) > 0.9 * size.references
    assert size.trace_references == len(trace) > size.references  # (read whole, run in part)


def test_validate_says_where_a_requests_frames_are_counted_at_the_most():
    """Requests of up to two shared camera blocks and three private section tables: three
    frames at the most, of which validate gives the requests and the bound."""
    raw = {
        "study": {"duration": "2min", "warmup": "30s"},
        "workload": {
            "sessions": {"rate_per_s": 0.2},
            "objects": {
                "private_per_session": 8,
                "private_kinds": {"prompt_segment": 1, "tensor_section_table": 1},
                "shared_kinds": {"prompt_segment": 1, "camera_block": 1},
            },
            "operations": {"private_refs": 3},
        },
    }
    (point,) = sweep_points(parse_scenario(raw))
    ((_, size),) = point_sizes([point])
    assert size.operations == 3 * size.requests
    (line,) = [
        line for line in nnrpsim.validate(raw, progress=False).described if "one run draws" in line
    ]
    assert (
        f"{about(size.requests)} requests in up to {about(size.operations)} operations (a "
        "request may name 3 objects of a slotted kind, sent a frame each)"
    ) in line
    (plain,) = [
        line
        for line in nnrpsim.validate(
            raw,
            ["workload.operations.private_refs=1", "workload.operations.shared_refs=1"],
            progress=False,
        ).described
        if "one run draws" in line
    ]
    assert "requests" not in plain  # (one object of each kind a request: one frame)


def test_a_logs_requests_count_the_frames_they_take(tmp_path):
    """A request that names two camera blocks is two frames, as the plan has it."""
    rows = ["0,a,100,1,camera_block", "0,b,100,1,camera_block", "0,a,100,1,camera_block"]
    rows += ["3,p,100,2,prompt_segment", "5,c,100,3,camera_block", "5,t,100,3,tile_index_block"]
    log = tmp_path / "log.csv"
    log.write_text("time_ms,object,size_bytes,operation,kind\n" + "\n".join(rows) + "\n")
    raw = {"study": {"duration": "10ms"}, "workload": {"trace": {"path": str(log)}}}
    (point,) = sweep_points(parse_scenario(raw))
    config, trace = model_config(point.scenario), load_trace(point.scenario.workload.trace)
    (session,) = stream_plan(trace).sessions
    assert len(session.operations) == trace_run_size(config, trace, "csv").operations == 4


def _scaled_mooncake(folder: Path, times: int) -> Path:
    """The Mooncake trace ``times`` over in its own span, every other copy's blocks its own."""
    requests = [json.loads(line) for line in MOONCAKE.read_text().splitlines()]
    top = 1 + max(block for request in requests for block in request["hash_ids"])
    path = folder / f"mooncake_x{times}.jsonl"
    with path.open("w") as out:
        for copy in range(times):
            shift = top * copy if copy % 2 else 0
            for request in requests:
                blocks = [block + shift for block in request["hash_ids"]]
                row = {**request, "timestamp": request["timestamp"] / times, "hash_ids": blocks}
                out.write(json.dumps(row) + "\n")
    return path


def _reference_log(folder: Path, n: int) -> Path:
    """A CSV log of ``n`` Zipf references, four to an operation."""
    rng = np.random.default_rng(3)
    path = folder / f"log_{n}.csv"
    times = np.repeat(np.sort(rng.uniform(0, 1e6, n // 4)).round(), 4)
    objects = (rng.zipf(1.2, n) % (n // 4)).astype(str)
    sizes = rng.integers(100, 100_000, n)
    log = {"time_ms": times, "object": objects, "size_bytes": sizes, "operation": np.arange(n) // 4}
    pd.DataFrame(log).to_csv(path, index=False)
    return path


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads Linux's VmHWM")
@pytest.mark.parametrize(
    ("engine", "make_trace"),
    [  # (a log's frame is held while the run peaks, a Mooncake trace's lines are not)
        ("des", lambda folder: _reference_log(folder, 400_000)),
        ("des", lambda folder: _scaled_mooncake(folder, 8)),
        ("vector", lambda folder: _scaled_mooncake(folder, 4)),
        ("vector", lambda folder: _reference_log(folder, 400_000)),
    ],
)
def test_a_trace_runs_memory_estimate_is_within_0_7_and_1_6_times_its_peak(
    tmp_path, engine, make_trace
):
    """As a worker runs it: the trace read whole, its window replayed. Held closer than a
    synthetic run's, on both engines and for both kinds of trace: with one cost of reading for
    a log and a Mooncake trace, the DES's estimate of a Mooncake run was twice its peak."""
    raw = {
        "study": {"replications": 1, "duration": "1100s"},
        "engine": engine,
        "topology": {"max_object_bytes": "1GiB", "ttl_ceiling": "1h"},
        "workload": {"trace": {"path": str(make_trace(tmp_path))}},
        "host_policy": {"name": "always", "ttl_hint": "60s"},
    }
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(raw)], capture_output=True, text=True, check=True
    )
    grew = int(proc.stdout)
    (point,) = sweep_points(parse_scenario(raw))
    trace = point.scenario.workload.trace
    size = trace_run_size(model_config(point.scenario), load_trace(trace), trace.read_as)
    estimate = size.peak_bytes(engine) - WORKER_BYTES
    assert grew > 100 << 20  # (a run big enough that the estimate's parts tell)
    assert 0.7 <= estimate / grew <= 1.6, (estimate, grew)


def test_the_machines_memory_is_at_most_its_physical_memory():
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < machine_memory_bytes() <= physical


def test_a_containers_limit_counts_where_it_is_lower(tmp_path):
    physical = machine_memory_bytes(())
    limits = {"low": "1234\n", "none": "max\n", "high": f"{physical * 4}\n"}
    files = {}
    for name, text in limits.items():
        files[name] = tmp_path / name
        files[name].write_text(text)
    assert machine_memory_bytes((str(files["low"]),)) == 1234
    assert machine_memory_bytes((str(files["none"]), str(files["high"]))) == physical
    assert machine_memory_bytes((str(tmp_path / "absent"),)) == physical


def test_a_system_that_does_not_say_leaves_the_memory_unbounded(monkeypatch):
    """No ``sysconf`` (Windows): nothing is refused for want of memory."""
    monkeypatch.delattr(os, "sysconf")
    assert machine_memory_bytes(()) == math.inf
