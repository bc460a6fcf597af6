"""How far a study's runs have got, for its progress bar, in runs and parts of runs.

Each run has a slot in an array shared with the local worker processes. A DES run writes there
the share of its simulated time done, as it goes; a finished run of either engine counts 1.
The bar shows the sum. Counting whole runs alone, a study of one ten-minute run showed 0/1 for
ten minutes, with no time left to tell. A Dask cluster's workers do not share the array: there
the bar moves by whole runs.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from multiprocessing import get_context
from typing import Any

import numpy as np
from tqdm.auto import tqdm

REFRESH_S = 0.5
"""How often the bar reads the slots and redraws: often enough for an eye; a sum over ten
thousand slots takes a few microseconds."""
SETUP_SHOWN_AFTER_S = 1.0
"""How long a study's setup goes without a word: most take a fraction of a second."""
SETUP = "checking the scenario and its sweep"
ROWS_WHERE_NONE = 20
"""The rows a bar is drawn for on a terminal that says it has none: tqdm's own guess where
it cannot tell (a study's bars take one)."""


class RunShares:
    """The share of each run done, one slot a run: 0 before it starts, 1 when it is over."""

    def __init__(self, runs: int) -> None:
        self.slots: Any = get_context("spawn").RawArray("d", runs)  # (no lock: one writer a slot)
        self._shares = np.frombuffer(self.slots, dtype=np.float64)  # (the same memory)

    def teller(self, slot: int) -> Callable[[float], None]:
        """What a run in this process tells its share done to."""
        return _writer(self.slots, slot)

    def done(self, slot: int) -> None:
        self.slots[slot] = 1.0

    def total(self) -> float:
        """Runs done, in runs and parts of runs."""
        return float(self._shares.sum())


def _writer(slots: Any, slot: int) -> Callable[[float], None]:
    def tell(share: float) -> None:
        slots[slot] = share

    return tell


_worker_slots: Any = None
"""In a local worker process, the study's slots: given by :func:`attach` as the process starts
(a shared array reaches a spawned process only so), read by :func:`worker_teller`."""


def attach(slots: Any) -> None:
    """A worker process's initializer: keep the study's slots."""
    global _worker_slots
    _worker_slots = slots


def worker_teller(slot: int) -> Callable[[float], None] | None:
    """What a run in a worker process tells its share done to; None where the process was not
    started with a study's slots."""
    return None if _worker_slots is None else _writer(_worker_slots, slot)


def progress_bar(**options: Any) -> tqdm:
    """tqdm's bar with ``options`` (a widget in a notebook), told the terminal has rows where
    it says it has none: tqdm took such a terminal (a pseudo-terminal given no size, as
    ``script`` makes without a terminal of its own) for one of -1 rows, and drew nothing."""
    return tqdm(nrows=_rows_where_none(), **options)


def _rows_where_none() -> int | None:
    """tqdm's own reading of the terminal's rows (None), or :data:`ROWS_WHERE_NONE` where
    stderr is a terminal of no rows."""
    try:
        rows = os.get_terminal_size(sys.stderr.fileno()).lines
    except (AttributeError, OSError, ValueError):  # (no stderr, or not a terminal)
        return None
    return ROWS_WHERE_NONE if rows == 0 else None


def study_bar(name: str, runs: int, show: bool) -> tuple[tqdm, RunShares | None]:
    """A study's bar (tqdm's: a widget in a notebook) and the slots it shows; where ``show``
    is false, a bar that draws nothing and no slots (runs are then not run in parts)."""
    return progress_bar(total=runs, desc=name, unit="run", disable=not show), (
        RunShares(runs) if show else None
    )


@contextmanager
def shown(bar: tqdm, shares: RunShares | None) -> Iterator[None]:
    """Keep ``bar`` at the runs done (:meth:`RunShares.total`) while the block runs, from a
    thread that reads them every :data:`REFRESH_S`; once more as it ends. Nothing without
    ``shares`` (no bar shown)."""
    if shares is None:
        yield
        return

    def refresh(stop: threading.Event) -> None:
        while not stop.wait(REFRESH_S):
            _show(bar, shares.total())

    try:
        with _beside(refresh, "progress bar"):
            yield
    finally:
        _show(bar, shares.total())


def _show(bar: tqdm, runs: float) -> None:
    """``runs`` on the bar: whole runs as integers (``3/12``), parts to a hundredth."""
    bar.n = int(runs) if runs.is_integer() else round(runs, 2)
    bar.refresh()


class SetupStep:
    """Where a study's setup has got, for its line (:func:`setup_shown`): the setup tells it
    each long step as the step begins, with the sweep's points once it knows them."""

    def __init__(self) -> None:
        self.now = ""

    def __call__(self, points: int, doing: str) -> None:
        self.now = f"{points:,} point{'' if points == 1 else 's'}: {doing}"

    def line(self, seconds: float) -> str:
        return (
            f"{SETUP} ({self.now}, {seconds:.0f} s)" if self.now else f"{SETUP} ({seconds:.0f} s)"
        )


@contextmanager
def setup_shown(show: bool) -> Iterator[SetupStep]:
    """Where ``show``, a line (tqdm's: a widget in a notebook) that says a study's setup is
    under way, at which step, and for how long, from :data:`SETUP_SHOWN_AFTER_S` into the
    block to its end, when it is cleared: reading, sizing and checking a sweep of 100,000
    points takes 14 s before the runs' bar, and ``validate`` 21 s, which went in silence,
    then with only their seconds told."""
    step = SetupStep()
    if not show:
        yield step
        return
    started = time.monotonic()

    def tell(stop: threading.Event) -> None:
        if stop.wait(SETUP_SHOWN_AFTER_S):
            return
        with progress_bar(total=None, bar_format="{desc}", leave=False) as line:
            while True:
                line.set_description_str(step.line(time.monotonic() - started))
                if stop.wait(REFRESH_S):
                    return

    with _beside(tell, "setup line"):
        yield step


@contextmanager
def _beside(job: Callable[[threading.Event], None], name: str) -> Iterator[None]:
    """The block with ``job`` on a thread of its own, given an event set as the block ends
    (the thread is joined before the block's end goes on)."""
    stop = threading.Event()
    thread = threading.Thread(target=job, args=(stop,), name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
