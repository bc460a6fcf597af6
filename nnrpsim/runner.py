"""Running studies: one run = (sweep point, replication seed) -> a flat record; a study runs
every point's replications in a local process pool or on a Dask cluster.

Runs never share state, and each run's seed derives from the study seed and the run's position,
so the numbers are the same whatever the job count or executor.
"""

from __future__ import annotations

import atexit
import functools
import numbers
import os
import threading
import time
import traceback
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import current_process, get_context, parent_process
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

import numpy as np

from .engine import CacheLimits
from .engine.stream import ReferenceStream
from .input_files import check_inputs
from .machine_cpus import usable_cpus
from .metrics import des_kind_metrics, des_metrics
from .model import (
    FaultConfig,
    LinkConfig,
    ModelConfig,
    PolicyConfig,
    ServerConfig,
    WorkloadConfig,
    simulate,
    stream_plan,
    synthetic_plan,
    with_content_changes,
)
from .model.simulation import Progress
from .model.workload import WorkloadPlan
from .protocol import CacheObjectKind, cache_object_bitmap
from .run_progress import RunShares, attach, worker_teller
from .scenario import Point, Scenario, ScenarioError
from .scenario.loader import with_auto_warmup
from .scenario.per_scenario import once_per_scenario
from .scenario.schema import Arrivals, Trace
from .vector_run import vector_run

if TYPE_CHECKING:  # (the dask extra: imported only where a study runs on it)
    from distributed import Client

EXECUTORS = ("local", "dask")
SCHEDULER_TIMEOUT_S = 10


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


def _kind(name: str) -> CacheObjectKind:
    return CacheObjectKind[name.upper()]


def _kind_mix(shares: dict[str, float]) -> tuple[tuple[int, float], ...]:
    return tuple((_kind(name), share) for name, share in shares.items())


@once_per_scenario
def model_config(scenario: Scenario) -> ModelConfig:
    """The model's plain configuration for a resolved scenario (frozen, so shared: sizing the
    runs and describing the workloads both ask for it)."""
    topology, workload, policy = scenario.topology, scenario.workload, scenario.host_policy
    link = LinkConfig(
        latency_ms=topology.link.latency,
        bandwidth_bytes_per_ms=topology.link.bandwidth / 1000.0,
        loss=topology.link.loss,
        retransmit_timeout_ms=topology.link.retransmit_timeout,
    )
    kinds = [_kind(name) for name in topology.object_kinds]
    limits = CacheLimits(
        object_kind_bitmap=cache_object_bitmap(*kinds),
        max_object_bytes=topology.max_object_bytes,
        max_cache_entries=topology.max_cache_entries,
        capacity_bytes=topology.gpu_memory,
        ttl_floor_ms=int(topology.ttl_floor),
        ttl_ceiling_ms=int(topology.ttl_ceiling),
        eviction=topology.eviction,
        renewal=topology.renewal,
    )
    return ModelConfig(
        duration_ms=scenario.study.duration,
        warmup_ms=with_auto_warmup(scenario).study.warmup,  # (a point's is resolved already)
        hosts=topology.hosts,
        servers=topology.servers,
        routing=topology.routing,
        uplink=link,
        downlink=link,
        server=ServerConfig(
            limits=limits,
            default_lease_ttl_ms=int(topology.default_lease_ttl),
            per_operation_ms=topology.per_operation_cost,
            per_inline_byte_ms=topology.per_inline_byte_cost,
            per_put_byte_ms=topology.per_put_byte_cost,
            sweep_interval_ms=topology.sweep_interval,
            workers=topology.server_workers,
            cascade_dependencies=topology.dependency_cascade,
        ),
        policy=PolicyConfig(
            name=policy.name,
            min_object_bytes=policy.min_object_size,
            min_expected_reuse=policy.min_reuse,
            ttl_fraction=policy.ttl_fraction,
            renew_margin=policy.renew_margin,
            renewal_body=policy.renewal_body,
            ttl_hint_ms=None if policy.ttl_hint is None else int(policy.ttl_hint),
            inline_after_invalidate=policy.inline_after_invalidate,
            connection_ttl_ms=None if policy.connection_ttl is None else int(policy.connection_ttl),
            refused_backoff_ms=float(policy.refused_put_backoff),
        ),
        workload=WorkloadConfig(
            session_rate_per_s=workload.sessions.rate_per_s,
            session_duration_ms=workload.sessions.duration,
            session_duration_cv=workload.sessions.duration_cv,
            operation_rate_per_s=workload.operations.rate_per_s,
            namespaces=workload.objects.namespaces,
            shared_objects_per_namespace=workload.objects.shared_per_namespace,
            shared_refs_per_operation=workload.operations.shared_refs,
            zipf_alpha=workload.objects.zipf_alpha,
            private_objects_per_session=workload.objects.private_per_session,
            private_refs_per_operation=workload.operations.private_refs,
            object_size_median=workload.objects.size.median,
            object_size_sigma=workload.objects.size.sigma,
            shared_kinds=_kind_mix(workload.objects.shared_kinds),
            private_kinds=_kind_mix(workload.objects.private_kinds),
            kind_sizes=tuple(
                (_kind(name), size.median, size.sigma)
                for name, size in workload.objects.kind_sizes.items()
            ),
            content_change_rate_per_s=workload.invalidations.rate_per_s,
            private_dependency_share=workload.objects.private_dependency_share,
            max_in_flight_operations=workload.operations.max_in_flight,
        ),
        faults=FaultConfig(
            restart_at_ms=scenario.faults.restart_at,
            announce_restart=scenario.faults.announce_restart,
            # (a cut of unlimited memory leaves it unlimited: no fault, and no end to the span
            # the memory is judged to settle in)
            memory_pressure_at_ms=None
            if topology.gpu_memory is None
            else scenario.faults.memory_pressure_at,
            memory_pressure_fraction=scenario.faults.memory_pressure_fraction,
        ),
        sample_interval_ms=max(scenario.study.duration / 300.0, topology.sweep_interval),
    )


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
"""What a run reports beside its record, as columns (empty when it has nothing to say): the
DES's samples over time, and the run's metrics per object kind."""


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
        if task.scenario.engine == "vector":
            metrics, kinds = vector_run(config, plan)
            record.update(metrics)
            tables = {"kinds": kinds}
        else:
            result = simulate(config, run_seed, plan, progress)
            steady = not task.scenario.workload.follows_a_log
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


def _lost_run(task: Task, error: str) -> dict[str, Any]:
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
    of the files the study reads (:func:`~nnrpsim.traces.input_digests`), checked by each
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


def check_execution(jobs: int | None, executor: str, scheduler: str | None) -> None:
    """The arguments of :func:`execute`, checked before a study writes anything."""
    if getattr(current_process(), "_inheriting", False):
        # A spawned worker runs the parent's main script again as it starts (to unpickle what
        # it defines). A call outside ``if __name__ == "__main__":`` then comes here, in every
        # worker: it must not start a study of its own (in the parent's folder), nor go on.
        raise RuntimeError(
            "nnrpsim.run or nnrpsim.sweep was called as a worker process started: a script must "
            'call them under `if __name__ == "__main__":` (each worker runs the main script again '
            "as it starts)"
        )
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, numbers.Integral)):
        raise ScenarioError("--jobs", f"must be a whole number, got {jobs!r}")
    if jobs is not None and jobs < 1:
        raise ScenarioError("--jobs", "must be at least 1")
    if executor not in EXECUTORS:
        raise ScenarioError(
            "--executor", f"must be one of {', '.join(EXECUTORS)}, not {executor!r}"
        )
    if scheduler is not None and not isinstance(scheduler, str):
        raise ScenarioError("--scheduler", f"must be an address (text), got {scheduler!r}")
    if scheduler is not None and not scheduler.strip():
        raise ScenarioError("--scheduler", "is empty; leave it out for a LocalCluster")
    if scheduler and executor != "dask":
        raise ScenarioError("--scheduler", "only with --executor dask")
    if executor == "dask":
        try:
            import distributed  # noqa: F401  (the extra, checked before a study writes anything)
        except ImportError:
            raise ScenarioError(
                "--executor", "dask needs the extra: pip install 'nnrpsim[dask]'"
            ) from None


def workers_for(jobs: int | None, n_tasks: int) -> int:
    """How many runs :func:`execute` runs at once: ``jobs``, or one per core this process may
    use (:func:`~nnrpsim.machine_cpus.usable_cpus`: a container's quota counts), and never
    more than there are tasks."""
    return min(jobs or usable_cpus(), max(n_tasks, 1))


def execute(
    tasks: list[Task],
    jobs: int | None = None,
    executor: str = "local",
    scheduler: str | None = None,
    pool: ProcessPoolExecutor | None = None,
    shares: RunShares | None = None,
    client: Client | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield each task's result as it finishes (``jobs`` None: one per usable core; never more
    workers than tasks, and none started for no task). ``pool``: local workers to run them on
    (:func:`local_workers`, given the same ``shares``), else the runs start their own; so
    ``client`` on Dask (:func:`dask_client`). ``shares``: where task i's share done goes, slot
    i (:mod:`nnrpsim.run_progress`)."""
    check_execution(jobs, executor, scheduler)
    if not tasks:
        return
    if executor == "dask":
        if client is not None:
            yield from _dask(tasks, client, shares)
        else:  # (a caller with no client of its own: one for these runs)
            with dask_client(executor, jobs, scheduler, len(tasks)) as own:
                yield from _dask(tasks, own, shares)
    elif pool is not None:
        yield from _on(pool, tasks, shares)
    else:
        with local_workers(jobs, executor, len(tasks), shares) as own:
            yield from _here(tasks, shares) if own is None else _on(own, tasks, shares)


@contextmanager
def local_workers(
    jobs: int | None, executor: str, n_tasks: int, shares: RunShares | None = None
) -> Iterator[ProcessPoolExecutor | None]:
    """The worker processes of a local study (:func:`workers_for`), spawned once for its runs
    and then its plots: each imports nnrpsim, half a second. None where one worker is all
    there is to be, and on Dask, whose workers need not see the results folder. ``shares``:
    the slots the workers' runs tell their progress to."""
    workers = workers_for(jobs, n_tasks)
    if executor != "local" or workers == 1 or not n_tasks:
        yield None
        return
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context("spawn"),
        initializer=_start_worker,
        initargs=(None if shares is None else shares.slots,),
    ) as pool:
        yield pool


def _start_worker(slots: Any) -> None:
    """A local worker's initializer: it keeps the study's progress ``slots`` (None: none),
    and ends when the study's process does. Killed (SIGTERM, the OOM killer), that process
    cannot shut its pool down, and its workers waited on their queue for ever, holding their
    memory. Told to stop, a worker ends at once: everything it sends is sent by then, and
    the interpreter's teardown of pandas and matplotlib held the study's end 0.2-0.3 s."""
    if slots is not None:
        attach(slots)
    if (parent := parent_process()) is not None:
        threading.Thread(target=_end_with, args=(parent,), daemon=True).start()
    atexit.register(os._exit, 0)  # (after the worker's own exit has flushed its streams)


def _end_with(parent: BaseProcess) -> None:
    parent.join()  # (returns once the process is gone)
    os._exit(1)


def _here(tasks: list[Task], shares: RunShares | None) -> Iterator[dict[str, Any]]:
    """The tasks in this process, one after another."""
    for slot, task in enumerate(tasks):
        result = run_task(task, None if shares is None else shares.teller(slot))
        if shares is not None:
            shares.done(slot)
        yield result


def _in_slot(task: Task, slot: int) -> dict[str, Any]:
    """:func:`run_task` in a worker process, telling its progress to the study's slot."""
    return run_task(task, worker_teller(slot))


def _on(
    pool: ProcessPoolExecutor, tasks: list[Task], shares: RunShares | None
) -> Iterator[dict[str, Any]]:
    slots = {pool.submit(_in_slot, task, slot): slot for slot, task in enumerate(tasks)}
    try:
        for future in as_completed(slots):
            slot = slots.pop(future)  # (a future keeps its result: a study's would pile up)
            if shares is not None:
                shares.done(slot)
            yield future.result()
    finally:
        for future in slots:
            future.cancel()


@contextmanager
def dask_client(
    executor: str, jobs: int | None, scheduler: str | None, n_tasks: int
) -> Iterator[Client | None]:
    """A study's Dask client, connected before its folder is made (an unreachable scheduler is
    bad input, refused with nothing written), on ``scheduler`` or a LocalCluster of
    :func:`workers_for` workers on loopback; None for a local study, or one with no runs."""
    if executor != "dask" or not n_tasks:
        yield None
        return
    from dask.distributed import Client, LocalCluster

    cluster = None
    if scheduler is None:
        try:
            cluster = LocalCluster(
                n_workers=workers_for(jobs, n_tasks),
                threads_per_worker=1,
                processes=True,
                # the scheduler's HTTP server (which it starts whatever the dashboard) on a
                # free loopback port: on None it took 8787, and a second study at once, or a
                # notebook's cluster, made distributed warn that the port was in use
                dashboard_address="127.0.0.1:0",
                scheduler_kwargs={"dashboard": False},
                host="127.0.0.1",
            )
        except RuntimeError as err:  # (a worker that did not start: distributed says why)
            raise ScenarioError(
                "--executor", f"Dask's local cluster did not start ({err}): {WORKERS_FAILED}"
            ) from None
    try:
        client = Client(scheduler or cluster, timeout=SCHEDULER_TIMEOUT_S)
    except OSError as err:
        raise ScenarioError("--scheduler", f"cannot reach {scheduler}: {err}") from None
    except ValueError as err:  # distributed's own parse of the address
        raise ScenarioError("--scheduler", f"not a scheduler address: {err}") from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


WORKERS_FAILED = (
    "its workers' errors are above; a script's workers fail so where it calls nnrpsim.run "
    'outside `if __name__ == "__main__":`'
)
"""Where a worker of the study's LocalCluster did not start, distributed raises a bare "Nanny
failed to start." after the worker's own traceback."""


KILLED_ON_DASK = "KilledWorker: the Dask worker running it died (out of memory?)"
"""A run whose Dask worker died as many times as the scheduler allows (its nanny starts a dead
worker again, and the cluster goes on with the other runs): distributed's own message runs to
four lines and names a task key, not the run."""


def _dask(tasks: list[Task], client: Client, shares: RunShares | None) -> Iterator[dict[str, Any]]:
    from dask.distributed import KilledWorker
    from dask.distributed import as_completed as dask_completed

    futures = client.map(run_task, tasks, pure=False)
    slots = {future.key: slot for slot, future in enumerate(futures)}
    completed = dask_completed(futures)
    del futures  # (a future keeps its result on the cluster: each goes once it is read)
    for future in completed:
        slot = slots.pop(future.key)
        if shares is not None:
            shares.done(slot)
        try:
            result = future.result()
        except KilledWorker:
            result = _lost_run(tasks[slot], KILLED_ON_DASK)
        yield result
