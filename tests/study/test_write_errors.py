"""A results folder the system stops writing to (a full disk) mid-study: one line naming it,
exit status 2, no traceback; every file is whole or absent, the runs written before are kept,
and ``--resume`` (or ``nnrpsim plot``) finishes the study once there is room."""

from __future__ import annotations

import errno
import json

import matplotlib.figure
import pandas as pd
import pytest

import nnrpsim.results
import nnrpsim.run_files
from nnrpsim.cli import main

FULL = OSError(errno.ENOSPC, "No space left on device")


def _command(small_yaml, out) -> list[str]:
    return ["run", str(small_yaml), "--out", str(out), "--jobs", "1", "--quiet"]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if not line.startswith("warning: ")]
    assert len(errors) == 1 and "Traceback" not in err, err
    return errors[0]


@pytest.mark.parametrize("fails", ["p0002-r000.arrow", "summary.csv"])
def test_a_full_disk_keeps_what_was_written_and_resume_finishes(
    tmp_path, small_yaml, capsys, monkeypatch, fails
):
    real = nnrpsim.run_files.atomic_write
    writers = (nnrpsim.results, nnrpsim.run_files)  # (a run's files, the study's tables)

    def full_at(path, write):
        if path.name == fails and path.parent.name in ("runs", out.name):
            raise FULL
        real(path, write)

    out = tmp_path / "out"
    for module in writers:
        monkeypatch.setattr(module, "atomic_write", full_at)
    assert main(_command(small_yaml, out)) == 2
    assert _one_line(capsys) == (
        f"error: --out: cannot write in {out}: No space left on device; the runs written "
        "before are kept (rerun with --resume once it can be written)"
    )
    kept = {path.name: path.read_bytes() for path in (out / "runs").iterdir()}
    assert fails not in kept and (len(kept) == 8 if fails == "summary.csv" else kept)
    assert not [path for path in out.rglob("*") if ".tmp-" in path.name]
    for module in writers:
        monkeypatch.setattr(module, "atomic_write", real)
    assert main([*_command(small_yaml, out), "--resume"]) == 0
    assert len(pd.read_parquet(out / "runs.parquet")) == 8
    for name, content in kept.items():
        assert (out / "runs" / name).read_bytes() == content


@pytest.mark.plots
def test_plots_that_cannot_be_written_are_named_and_leave_no_part_of_a_file(
    tmp_path, small_yaml, capsys, monkeypatch
):
    real = matplotlib.figure.Figure.savefig

    def half_then_full(self, path, **kwargs):
        path.write_bytes(b"\x89PNG half")
        raise FULL

    out = tmp_path / "out"
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", half_then_full)
    assert main(_command(small_yaml, out)) == 2
    assert _one_line(capsys) == (
        f"error: {out / 'plots'}: cannot draw the plots: No space left on device"
    )
    assert list((out / "plots").iterdir()) == []
    assert json.loads((out / "manifest.json").read_text())["status"] == "complete"
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", real)
    assert main(["plot", str(out)]) == 0
    assert len(list((out / "plots").glob("*.png"))) >= 5
