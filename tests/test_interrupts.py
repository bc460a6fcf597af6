"""A second Ctrl-C while an interrupted study writes its summary waits for the summary."""

from __future__ import annotations

import os
import signal
import threading

import pytest

import nnrpsim
from nnrpsim.interrupts import interrupts_deferred
from nnrpsim.results import ResultStore

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signals reach the main thread only",
)


def _interrupt() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def test_a_sigint_in_the_block_is_raised_as_it_ends():
    before = signal.getsignal(signal.SIGINT)
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        _interrupt()
        done.append("the rest of the block")
    assert done == ["the rest of the block"]
    assert signal.getsignal(signal.SIGINT) is before


def test_a_second_sigint_stops_the_block_at_once():
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred():
        _interrupt()
        done.append("after the first")
        _interrupt()
        done.append("after the second")
    assert done == ["after the first"]


def test_a_block_without_sigint_runs_as_it_is():
    before = signal.getsignal(signal.SIGINT)
    with interrupts_deferred():
        pass
    assert signal.getsignal(signal.SIGINT) is before


def test_an_interrupted_study_writes_its_summary_through_a_second_sigint(
    tmp_path, small_yaml, monkeypatch
):
    """The first Ctrl-C stops the runs after the first is written; a second comes as the
    summary is being written (``timeout -s INT`` sends two): the summary of the finished run
    is written all the same, and the study ends interrupted."""
    write, finalize = ResultStore.write, ResultStore.finalize
    written = []

    def write_then_stop(store, result):
        write(store, result)
        written.append(result)
        raise KeyboardInterrupt

    def finalize_interrupted(store, meta):
        _interrupt()
        return finalize(store, meta)

    monkeypatch.setattr(ResultStore, "write", write_then_stop)
    monkeypatch.setattr(ResultStore, "finalize", finalize_interrupted)
    out = tmp_path / "stopped"
    with pytest.raises(KeyboardInterrupt):
        nnrpsim.run(small_yaml, out=out, jobs=1, progress=False)
    assert len(written) == 1
    assert (out / "summary.parquet").is_file() and (out / "manifest.json").is_file()
    assert '"status": "interrupted (rerun with --resume)"' in (out / "manifest.json").read_text()
