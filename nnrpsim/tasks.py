"""One run of a study: a task (sweep point, replication) -> a flat record of its metrics, and
the tables it reports beside it.

Runs never share state, and each run's seed derives from the study seed and the run's
replication, so the numbers are the same whatever the job count, order or executor
(:mod:`nnrpsim.runner` runs them).
"""

from __future__ import annotations

import functools
import time
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .engine.stream import ReferenceStream
from .input_files import check_inputs
from .metrics import des_kind_metrics, des_metrics
from .model import (
    ModelConfig,
    WorkloadConfig,
    simulate,
    stream_plan,
    synthetic_plan,
    with_content_changes,
)
from .model.simulation import Progress
from .model.workload import WorkloadPlan
from .run_config import model_config
from .scenario import Point, Scenario
from .scenario.schema import Arrivals, Trace
from .vector_run import vector_run


@dataclass(frozen=True)
class Task:
    """One run: a sweep point's resolved scenario and a replication number."""

    point: int
    replication: int
    params: dict[str, Any]
    scenario: Scenario
    inputs: dict[str, str] = field(default_factory=dict)
    """The digest of each file the run reads, as its study read it first
    (:mod:`nnrpsim.input_files`): a run that finds other content fails."""

    @property
    def seed(self) -> np.random.SeedSequence:
        """Replication r of every sweep point draws the same random numbers (common random
        numbers): curves across a sweep then differ by the parameter, not by sampling noise."""
        return np.random.SeedSequence(self.scenario.study.seed, spawn_key=(self.replication,))


def _trace(spec: Trace) -> ReferenceStream:
    # Imported here: the trace readers need pandas, and a worker process that runs synthetic
    # workloads starts a quarter of a second sooner without it. They keep what they read.
    from .traces import load_trace

    return load_trace(spec)


def _arrivals(spec: Arrivals) -> np.ndarray:
    from .traces import load_arrivals  # (pandas: see _trace)

    return load_arrivals(spec)


def _plan(scenario: Scenario, config: ModelConfig, seed: np.random.SeedSequence) -> WorkloadPlan:
    workload = scenario.workload
    if workload.trace is not None:
        window = _trace(workload.trace).before(int(config.duration_ms))
        return with_content_changes(
            stream_plan(window), config.workload, seed, config.duration_ms, window
        )
    return _synthetic_plan(
        config.workload,
        config.hosts,
        config.duration_ms,
        seed.entropy,
        seed.spawn_key,
        workload.sessions.arrivals,
    )


@functools.lru_cache(maxsize=1)
def _synthetic_plan(
    workload: WorkloadConfig,
    hosts: int,
    duration_ms: float,
    entropy: int,
    spawn_key: tuple[int, ...],
    arrivals: Arrivals | None,
) -> WorkloadPlan:
    """A synthetic plan, drawn once per worker process for its inputs and seed: replication r
    of every sweep point draws the same numbers, so points that vary no workload key (budgets,
    TTLs, policies) replay one plan. Runs only read a plan: its arrays are made read-only.
    A worker keeps the last plan only: the runs that share one come back to back
    (:func:`tasks_for`), and a worker then needs the memory of one run, as
    :mod:`nnrpsim.run_sizes` checks (four plans of a large workload would take four times
    the plan's memory)."""
    plan = synthetic_plan(
        workload,
        hosts,
        duration_ms,
        np.random.SeedSequence(entropy, spawn_key=spawn_key),
        None if arrivals is None else _arrivals(arrivals),
    )
    catalog = plan.catalog
    for array in (
        plan.sizes,
        plan.change_times_ms,
        plan.change_objects,
        plan.shared_reuse_per_operation,
        catalog.namespace,
        catalog.key_hi,
        catalog.key_lo,
        catalog.kind,
    ):
        array.flags.writeable = False
    return plan


LONG_TABLES = ("timeseries", "kinds")
"""What a run reports beside its record, as columns (empty when it has nothing to say): its
samples over time (the memory; on the DES the links' and servers' load too), and its metrics
per object kind."""


def run_inputs(task: Task) -> tuple[ModelConfig, WorkloadPlan, np.random.SeedSequence]:
    """A run's configuration, its workload plan and the seed of its simulation, drawn from the
    task's seed as every study draws them: the same run, wherever it is run again."""
    config = model_config(task.scenario)
    plan_seed, run_seed = task.seed.spawn(2)
    return config, _plan(task.scenario, config, plan_seed), run_seed


def run_task(task: Task, progress: Progress | None = None) -> dict[str, Any]:
    """Run one task; never raises: a failure comes back as a record with its error, and a
    ``tables`` entry per :data:`LONG_TABLES` name. ``progress``: told the share of a DES run
    done as it goes (the vector engine's runs are over in one step)."""
    start = time.perf_counter()
    record = _task_record(task)
    try:
        check_inputs(task.inputs)
        config, plan, run_seed = run_inputs(task)
        tables: dict[str, dict] = {}
        steady = not task.scenario.workload.follows_a_log
        if task.scenario.engine == "vector":
            run = vector_run(config, plan, steady)
            record.update(run.metrics)
            tables = {"timeseries": run.memory, "kinds": run.kinds}
        else:
            result = simulate(config, run_seed, plan, progress)
            record.update(des_metrics(result, config.warmup_ms, steady))
            tables = {
                "timeseries": result.memory,
                "kinds": des_kind_metrics(result, config.warmup_ms),
            }
        record["error"] = None
    except Exception as err:  # a failing run is recorded, and the study goes on
        record["error"] = "".join(traceback.format_exception_only(err)).strip()
        tables = {}
    record["wall_s"] = time.perf_counter() - start
    return {
        "record": record,
        "tables": {
            name: {k: np.asarray(v).tolist() for k, v in tables.get(name, {}).items()}
            for name in LONG_TABLES
        },
    }


def _task_record(task: Task) -> dict[str, Any]:
    """What every run's record opens with: which run it is, and its sweep values."""
    return {
        "point": task.point,
        "replication": task.replication,
        "seed": int(task.seed.generate_state(1)[0]),
        **task.params,
    }


def lost_run(task: Task, error: str) -> dict[str, Any]:
    """The result of a run that never came back (its process died): a failed run, as one that
    raises is, which ``--resume`` runs again."""
    return {
        "record": {**_task_record(task), "error": error, "wall_s": 0.0},
        "tables": {name: {} for name in LONG_TABLES},
    }


def tasks_for(points: list[Point], inputs: dict[str, str] | None = None) -> list[Task]:
    """Every run of the sweep (each point's ``study.replications``: it may be swept), those
    that draw one workload plan back to back: a worker process then draws it once
    (:func:`_synthetic_plan`). Results do not depend on the order. ``inputs``: the digests
    of the files the study reads (:func:`~nnrpsim.workload_facts.input_digests`), checked by each
    run."""
    tasks = [
        Task(point.index, replication, point.params, point.scenario, inputs or {})
        for point in points
        for replication in range(point.scenario.study.replications)
    ]
    return sorted(tasks, key=lambda task: (task.replication, _plan_inputs(task.scenario)))


def _plan_inputs(scenario: Scenario) -> str:
    """What a synthetic plan is drawn from besides its seed, as one comparable text."""
    return (
        f"{scenario.workload.model_dump_json()} {scenario.study.duration} {scenario.topology.hosts}"
    )
