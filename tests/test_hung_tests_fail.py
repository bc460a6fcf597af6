"""A test that hangs fails the suite in minutes, saying where each thread waits, where the
suite would wait on it until CI's own limit (faulthandler and pytest-timeout, set in
pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT

HANGS = "import threading\n\n\ndef test_hangs():\n    threading.Event().wait()\n"


def test_the_suite_gives_each_test_minutes_then_its_stacks_then_a_failure(
    request: pytest.FixtureRequest,
):
    stacks, failure = (float(request.config.getini(k)) for k in ("faulthandler_timeout", "timeout"))
    assert 60 <= stacks < failure <= 600
    assert request.config.getini("timeout_method") == "thread"  # (ends a test stuck in C too)


def test_a_test_that_hangs_on_a_worker_fails_with_every_threads_stack(tmp_path):
    """On a worker, as ``make test`` runs the suite (pytest-xdist): its own output is lost,
    faulthandler's reaches the terminal."""
    (tmp_path / "test_hang.py").write_text(HANGS)
    config = [
        "-c",
        str(ROOT / "pyproject.toml"),
        "--rootdir",
        str(tmp_path),
        "-p",
        "no:cacheprovider",
    ]
    quick = ["-o", "faulthandler_timeout=1", "-o", "timeout=3", "-n", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *config, *quick],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 1
    assert "Timeout (0:00:01)!" in said and "in test_hangs" in said
    assert "crashed while running 'test_hang.py::test_hangs'" in said
