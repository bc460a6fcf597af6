"""A study's default worker count is the processors this process may use: its cpuset, at
most its control group's CPU quota (a container's ``--cpus``), not the whole machine's."""

from __future__ import annotations

import os

import pytest

import nnrpsim.machine_cpus as machine_cpus
from nnrpsim.machine_cpus import usable_cpus
from nnrpsim.runner import workers_for

AFFINITY = len(os.sched_getaffinity(0))


@pytest.fixture
def many_cpus(monkeypatch):
    """A process that may run on 64 processors, of a machine of 64."""
    monkeypatch.setattr(machine_cpus.os, "sched_getaffinity", lambda pid: set(range(64)))
    monkeypatch.setattr(machine_cpus.os, "cpu_count", lambda: 64)


def _files(tmp_path, v2=None, v1=None):
    """Quota files as control groups v2 or v1 keep them (absent where None)."""
    paths = tmp_path / "cpu.max", (tmp_path / "quota", tmp_path / "period")
    if v2 is not None:
        paths[0].write_text(f"{v2}\n")
    if v1 is not None:
        for path, text in zip(paths[1], v1, strict=True):
            path.write_text(f"{text}\n")
    return str(paths[0]), tuple(map(str, paths[1]))


@pytest.mark.parametrize(
    ("v2", "v1", "cpus"),
    [
        ("200000 100000", None, 2),  # docker --cpus 2
        ("150000 100000", None, 2),  # 1.5: rounded up
        ("50000 100000", None, 1),  # half a processor: one worker
        ("max 100000", ("200000", "100000"), 64),  # v2 says none (v1 is not read then)
        (None, ("300000", "100000"), 3),
        (None, ("-1", "100000"), 64),  # v1's none
        (None, None, 64),  # no control group
        ("garbled", None, 64),
        ("100000 0", None, 64),
    ],
)
def test_the_quota_caps_the_processors(tmp_path, many_cpus, v2, v1, cpus):
    assert usable_cpus(*_files(tmp_path, v2, v1)) == cpus


def test_a_quota_above_the_cpuset_leaves_the_cpuset(tmp_path):
    assert usable_cpus(*_files(tmp_path, "99900000 100000")) == AFFINITY


def test_a_study_defaults_to_the_usable_processors(monkeypatch, tmp_path, many_cpus):
    v2, v1 = _files(tmp_path, "300000 100000")
    monkeypatch.setattr(machine_cpus, "CPU_QUOTA_V2", v2)
    monkeypatch.setattr(machine_cpus, "CPU_QUOTA_V1", v1)
    assert workers_for(None, 100) == 3
    assert workers_for(8, 100) == 8 and workers_for(None, 1) == 1
