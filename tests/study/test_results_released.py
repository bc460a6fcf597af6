"""A study's main process keeps no run's result once it is written, nor every run's file
table at once: a study of many runs would otherwise hold them all (a future keeps its result,
and 10,000 one-row tables read together took 320 MB beside their values)."""

from __future__ import annotations

import gc
import weakref

import distributed
import pytest

import nnrpsim
from nnrpsim import results, run_files, runner
from nnrpsim.scenario import parse_scenario, sweep_points
from nnrpsim.tasks import tasks_for

SIX_RUNS = {
    "study": {"name": "six", "seed": 1, "replications": 1, "duration": "20s", "warmup": "2s"},
    "engine": "vector",
    "sweep": {"grid": {"host_policy.ttl_fraction": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]}},
}


def _finished_and_kept(futures: list[weakref.ref]) -> int:
    gc.collect()
    return sum(1 for ref in futures if (future := ref()) is not None and future.done())


def _tasks():
    return tasks_for(sweep_points(parse_scenario(SIX_RUNS)))


def test_the_local_pool_lets_each_future_go_once_its_result_is_read():
    tasks, futures = _tasks(), []
    with runner.local_workers(2, "local", len(tasks)) as pool:
        submit = pool.submit
        pool.submit = lambda *call: futures.append(weakref.ref(made := submit(*call))) or made
        finished = runner._on(pool, tasks, None)
        for _ in range(len(tasks) - 1):
            next(finished)
        # the one just read, and one done but not read yet, at most
        assert _finished_and_kept(futures) <= 2
        assert len(list(finished)) == 1


def test_dask_lets_each_future_go_once_its_result_is_read(monkeypatch):
    tasks, futures = _tasks(), []
    mapped = distributed.Client.map

    def recorded(client, *call, **options):
        made = mapped(client, *call, **options)
        futures.extend(weakref.ref(future) for future in made)
        return made

    monkeypatch.setattr(distributed.Client, "map", recorded)
    with runner.dask_client("dask", 2, None, len(tasks)) as client:
        finished = runner._dask(tasks, client, None)
        for _ in range(len(tasks) - 1):
            next(finished)
        assert _finished_and_kept(futures) <= 2
        assert len(list(finished)) == 1


@pytest.mark.parametrize("batch", [1, 3])
def test_run_files_read_in_batches_join_as_one_table(
    tmp_path, monkeypatch, small_yaml, flaky_last_point, batch
):
    """The runs of a failing point lack the metrics columns: joined across batches, they are
    null there, whatever the batches."""
    done = nnrpsim.run(small_yaml, out=tmp_path / "s", jobs=1, progress=False)
    monkeypatch.setattr(run_files, "READ_BATCH", batch)
    read = run_files.read_all(tmp_path / "s" / "runs")
    runs = results.with_derived_metrics(read).sort_values(["point", "replication"])
    assert runs.reset_index(drop=True).equals(done.runs.reset_index(drop=True))
    assert runs["hit_rate"].isna().sum() == 2 and runs["error"].notna().sum() == 2
