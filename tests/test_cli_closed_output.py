"""A reader that leaves before the output is written (``nnrpsim keys | head -1``, ``| grep -m1``):
the command ends as any tool SIGPIPE ends, status 141 and nothing on stderr; it was a
``BrokenPipeError`` traceback and status 1. A study's results are written all the same."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from nnrpsim.cli import EXIT_BROKEN_PIPE


def _with_closed_stdout(*argv: str) -> subprocess.CompletedProcess:
    """The command with its stdout a pipe whose reading end is closed before it starts: its
    first write fails, whatever the timing."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "nnrpsim", *argv],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            check=False,
        )
    finally:
        os.close(write_end)


ORB_GOLDEN = "020000000700000044332211000000008877665500000000"


@pytest.mark.parametrize("argv", [["keys"], ["frames", "decode", "--block", "orb", ORB_GOLDEN]])
def test_a_closed_output_ends_quietly_with_sigpipes_status(argv):
    proc = _with_closed_stdout(*argv)
    assert (proc.returncode, proc.stderr) == (EXIT_BROKEN_PIPE, "")


def test_a_study_whose_table_cannot_be_printed_is_written_all_the_same(tmp_path, small_yaml):
    out = tmp_path / "piped"
    proc = _with_closed_stdout("run", str(small_yaml), "--out", str(out), "--jobs", "1", "--quiet")
    assert proc.returncode == EXIT_BROKEN_PIPE and "Traceback" not in proc.stderr
    assert (out / "summary.parquet").is_file()
