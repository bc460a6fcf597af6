"""Running a study's runs (:mod:`nnrpsim.tasks`): in a local process pool, or on a Dask
cluster, each run's progress told to the study's bar; a run whose worker dies comes back as
a failed run.
"""

from __future__ import annotations

import atexit
import numbers
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from multiprocessing import current_process, get_context, parent_process
from multiprocessing.process import BaseProcess
from typing import TYPE_CHECKING, Any

from .machine_cpus import usable_cpus
from .quoted import quoted
from .run_progress import RunShares, attach, worker_teller
from .scenario import ScenarioError
from .tasks import Task, lost_run, run_task

if TYPE_CHECKING:  # (the dask extra: imported only where a study runs on it)
    from distributed import Client

EXECUTORS = ("local", "dask")
SCHEDULER_TIMEOUT_S = 10


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
        raise ScenarioError("--jobs", f"must be a whole number, got {quoted(jobs)}")
    if jobs is not None and jobs < 1:
        raise ScenarioError("--jobs", "must be at least 1")
    if executor not in EXECUTORS:
        raise ScenarioError(
            "--executor", f"must be one of {', '.join(EXECUTORS)}, not {quoted(executor)}"
        )
    if scheduler is not None and not isinstance(scheduler, str):
        raise ScenarioError("--scheduler", f"must be an address (text), got {quoted(scheduler)}")
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
        if scheduler:
            _check_scheduler_port(scheduler)


def _check_scheduler_port(scheduler: str) -> None:
    """A port no socket can have (``:99999``, ``:0``) is refused at once: the connection to it
    waited out the whole timeout, then said it could not reach the scheduler. Addresses
    distributed cannot parse are left to its own words, as it connects."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(scheduler)
        if scheme not in ("tcp", "tls", "ws", "wss"):
            return
        port = parse_host_port(location)[1]
    except ValueError:
        return
    if not 0 < port < 65536:
        raise ScenarioError("--scheduler", f"port {port} of {scheduler} is not in 1-65535")


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
            result = lost_run(tasks[slot], KILLED_ON_DASK)
        yield result
