"""An output encoding that lacks a character the tables print (``compare``'s "±", under
``PYTHONIOENCODING=ascii``) shows it as "?": it was a UnicodeEncodeError traceback, after the
work was done."""

from __future__ import annotations

import os
import subprocess
import sys

from nnrpsim.cli import main


def test_compare_prints_on_an_ascii_output(tmp_path, small_yaml, capsys):
    out = tmp_path / "out"
    assert main(["run", str(small_yaml), "--out", str(out), "--jobs", "1", "--quiet"]) == 0
    capsys.readouterr()
    argv = ["compare", str(out), "--baseline", "host_policy.ttl_fraction=0.1"]
    done = subprocess.run(
        [sys.executable, "-m", "nnrpsim", *argv],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "ascii"},
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, b"")
    assert b" ? " in done.stdout and b"each point's metrics less its baseline" in done.stdout
    assert main(argv) == 0 and " \u00b1 " in capsys.readouterr().out  # (UTF-8: the sign itself)
