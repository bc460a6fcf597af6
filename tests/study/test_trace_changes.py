"""A trace's objects change content at ``workload.invalidations.rate_per_s``, as a synthetic
workload's do (the rate was silently ignored with a trace); the synthetic workload's other
keys, which a trace replaces, are refused with one."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.metrics import des_metrics
from nnrpsim.model import simulate
from nnrpsim.run_sizes import point_sizes
from nnrpsim.scenario import parse_scenario, sweep_points
from nnrpsim.tasks import Task, run_inputs
from nnrpsim.vector_run import vector_run
from tests.conftest import write_yaml

DURATION_S = 200


def _scenario(log, rate: float, **more) -> dict:
    return {
        "study": {"name": "changes", "seed": 5, "replications": 1, "duration": f"{DURATION_S}s"},
        "topology": {"gpu_memory": None},
        "workload": {
            "trace": {"path": str(log), "format": "csv"},
            "invalidations": {"rate_per_s": rate},
            **more,
        },
        "host_policy": {"name": "always", "ttl_hint": "1h"},
    }


@pytest.fixture
def log(tmp_path):
    """40 objects of 2 KiB referenced in turn, one every 50 ms, for 200 s."""
    path = tmp_path / "refs.csv"
    rows = [f"{50 * i},o{i % 40},2048" for i in range(DURATION_S * 20)]
    path.write_text("time_ms,object,size_bytes\n" + "\n".join(rows) + "\n")
    return path


def _plan(document: dict, point: int = 0, replication: int = 0):
    chosen = sweep_points(parse_scenario(document))[point]
    _, plan, _ = run_inputs(Task(point, replication, chosen.params, chosen.scenario))
    return plan


def test_a_trace_plan_draws_each_objects_changes_as_a_poisson_process(log):
    assert len(_plan(_scenario(log, 0.0)).change_times_ms) == 0
    plan = _plan(_scenario(log, 0.05))
    expected = 40 * 0.05 * DURATION_S  # 400 changes: within 4 standard deviations
    assert abs(len(plan.change_times_ms) - expected) < 4 * np.sqrt(expected)
    assert np.all(np.diff(plan.change_times_ms) >= 0)
    assert plan.change_times_ms.min() >= 0 and plan.change_times_ms.max() < DURATION_S * 1000
    assert set(plan.change_objects.tolist()) == set(range(40))  # (each ~10 changes)
    again = _plan(_scenario(log, 0.05))
    np.testing.assert_array_equal(again.change_times_ms, plan.change_times_ms)
    other = _plan(_scenario(log, 0.05), replication=1)
    assert not np.array_equal(other.change_times_ms, plan.change_times_ms)
    # a run's size counts them (the memory a worker needs): each object's from its first
    # reference (object i's at 50 i ms) to the end
    ((_, size),) = point_sizes(sweep_points(parse_scenario(_scenario(log, 0.05))))
    assert size.content_changes == pytest.approx(0.05 * (40 * DURATION_S - 0.05 * sum(range(40))))


@pytest.fixture
def staggered(tmp_path):
    """40 objects of 2 KiB, object k first referenced at 5 k s, then in turn with those
    before it: a request every 50 ms for 200 s."""
    path = tmp_path / "staggered.csv"
    rows = [
        f"{5000 * k + 50 * j},o{k if j == 0 else j % (k + 1)},2048"
        for k in range(40)
        for j in range(100)
    ]
    path.write_text("time_ms,object,size_bytes\n" + "\n".join(rows) + "\n")
    return path


def test_a_trace_objects_changes_come_from_its_first_reference_on(staggered):
    """No lease of an object exists before its first reference, so its changes are drawn from
    there (over the whole run, as before, about half of these would fall before it)."""
    plan = _plan(_scenario(staggered, 0.05))
    first_ms = {f"o{k}": 5000.0 * k for k in range(40)}
    names = {int(i): name for i, name in enumerate(_object_names(staggered))}
    firsts = np.array([first_ms[names[obj]] for obj in plan.change_objects.tolist()])
    assert np.all(plan.change_times_ms > firsts)  # (none on the instant: a request's)
    expected = 0.05 * sum(DURATION_S - 5 * k for k in range(40))  # 205, where 400 over the run
    assert abs(len(plan.change_times_ms) - expected) < 4 * np.sqrt(expected)
    ((_, size),) = point_sizes(sweep_points(parse_scenario(_scenario(staggered, 0.05))))
    assert size.content_changes == pytest.approx(expected)


def _object_names(path) -> list[str]:
    """The trace's object names in the order its reader numbers them (first seen, first)."""
    names = [line.split(",")[1] for line in path.read_text().splitlines()[1:]]
    return list(dict.fromkeys(names))


def test_a_change_before_an_objects_first_reference_changes_no_number(staggered):
    """On either engine: so the draw may leave them out."""
    chosen = sweep_points(parse_scenario(_scenario(staggered, 0.05)))[0]
    config, plan, run_seed = run_inputs(Task(0, 0, chosen.params, chosen.scenario))
    early = [(5000.0 * k - 1 - k % 7, k) for k in range(1, 40)]  # (the reader's ids: first seen)
    times = np.concatenate([plan.change_times_ms, [at for at, _ in early]])
    objects = np.concatenate([plan.change_objects, [obj for _, obj in early]])
    order = np.lexsort((objects, times))
    more = replace(plan, change_times_ms=times[order], change_objects=objects[order])
    drawn, padded = (
        des_metrics(simulate(config, run_seed, p), config.warmup_ms) for p in (plan, more)
    )
    np.testing.assert_equal(drawn, padded)
    drawn, padded = (vector_run(config, p)[0] for p in (plan, more))
    for name, value in drawn.items():
        assert padded[name] == pytest.approx(value, rel=1e-12, nan_ok=True), name


def test_changes_on_a_trace_end_leases_and_cost_hits_on_both_engines(log):
    """Unlimited memory and an hour's leases: without changes every reference after an
    object's first hits; with them, each change ends its lease with a CACHE_INVALIDATE and the
    next reference puts the body again (the DES inlines it once first)."""
    calm, changing = (
        nnrpsim.sweep(_scenario(log, rate), ["sweep.grid.engine=[des, vector]"], progress=False)
        for rate in (0.0, 0.05)
    )
    for engine in (0, 1):
        assert calm["hit_rate"][engine] == pytest.approx(1 - 40 / 4000)
        assert changing["hit_rate"][engine] < calm["hit_rate"][engine] - 0.05
    assert changing["hit_rate"][0] == pytest.approx(changing["hit_rate"][1], abs=0.02)
    records = nnrpsim.run_records(_scenario(log, 0.05), progress=False)
    assert records.invalidations["content_changed"] > 300  # (about 400 changes)


@pytest.mark.parametrize(
    ("more", "key"),
    [
        ({"sessions": {"rate_per_s": 5}}, "sessions.rate_per_s"),
        ({"objects": {"size": {"sigma": 0}}}, "objects.size.sigma"),
        ({"operations": {"rate_per_s": 3}}, "operations.rate_per_s"),
    ],
)
def test_a_synthetic_key_a_trace_replaces_is_refused(tmp_path, capsys, log, more, key):
    assert main(["validate", str(write_yaml(tmp_path, _scenario(log, 0.0, **more)))]) == 2
    assert capsys.readouterr().err == (
        f"error: workload: {key} is the synthetic workload's, which the trace replaces: leave "
        "it out, or drop workload.trace\n"
    )
    taken = _scenario(log, 0.05, operations={"max_in_flight": 1})  # what a trace takes too
    assert main(["validate", str(write_yaml(tmp_path, taken))]) == 0


def test_a_change_never_falls_on_a_requests_instant(tmp_path):
    """A trace's requests are on whole milliseconds, here every even one: a change drawn on
    one comes a millisecond later (on the DES it would race the request's frame; the vector
    engine puts a change before the requests of its millisecond)."""
    path = tmp_path / "even.csv"
    rows = [f"{2 * i},o{i % 40},2048" for i in range(DURATION_S * 500)]
    path.write_text("time_ms,object,size_bytes\n" + "\n".join(rows) + "\n")
    plan = _plan(_scenario(path, 0.05))
    expected = 40 * 0.05 * DURATION_S
    assert abs(len(plan.change_times_ms) - expected) < 4 * np.sqrt(expected)
    assert np.all(plan.change_times_ms % 2 == 1) and np.all(np.diff(plan.change_times_ms) >= 0)
