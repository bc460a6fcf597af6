"""A reference log that gives an object several sizes is replayed with one size per object,
its largest: said so by ``validate`` and by the study, where it had been silent (a log that
keeps one name for an object's versions has its bytes and memory overstated)."""

from __future__ import annotations

import warnings

import numpy as np

import nnrpsim
from nnrpsim.checks import StudyWarning
from nnrpsim.cli import main
from nnrpsim.scenario import load_scenario
from nnrpsim.traces import load_trace
from tests.conftest import write_yaml

# a at 1,000 then 2,000 bytes, b at 500 always, c at 10 then 30 then 20
ROWS = [(0, "a", 1000), (10, "a", 2000), (20, "b", 500), (30, "c", 10), (40, "c", 30)]
ROWS += [(50, "c", 20), (60, "b", 500)]


def _scenario(tmp_path, rows) -> dict:
    log = tmp_path / "log.csv"
    log.write_text("time_ms,object,size_bytes\n" + "".join(f"{t},{o},{s}\n" for t, o, s in rows))
    return {
        "study": {"name": "sizes", "duration": "61ms", "warmup": "0s", "replications": 1},
        "engine": "vector",
        "workload": {"trace": {"path": str(log), "format": "csv"}},
    }


SAID = (
    "warning: all points: 2 of the 3 objects of log.csv are referenced with several sizes: "
    "every reference to one replays at its largest (an object has one size here: where a new "
    "version changes it, name each version an object of its own)"
)


def test_objects_of_several_sizes_are_said_so_and_replayed_at_their_largest(tmp_path, capsys):
    raw = _scenario(tmp_path, ROWS)
    assert main(["validate", str(write_yaml(tmp_path, raw))]) == 0
    assert capsys.readouterr().err.splitlines() == [SAID]
    stream = load_trace(load_scenario(raw).workload.trace)
    np.testing.assert_array_equal(stream.size, [2000, 2000, 500, 30, 30, 30, 500])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StudyWarning)
        nnrpsim.sweep(raw, progress=False)
    told = [str(w.message) for w in caught if issubclass(w.category, StudyWarning)]
    assert told == [SAID.removeprefix("warning: ")]


def test_one_object_of_several_sizes_is_said_so_in_the_singular(tmp_path, capsys):
    raw = _scenario(tmp_path, [(t, o, 500 if o != "a" else s) for t, o, s in ROWS])
    assert main(["validate", str(write_yaml(tmp_path, raw))]) == 0
    assert capsys.readouterr().err.splitlines() == [
        SAID.replace("2 of the 3 objects of log.csv are", "1 of the 3 objects of log.csv is")
    ]


def test_a_log_with_one_size_per_object_is_not_named(tmp_path, capsys):
    raw = _scenario(tmp_path, [(t, o, 2000) for t, o, _ in ROWS])
    assert main(["validate", str(write_yaml(tmp_path, raw))]) == 0
    assert capsys.readouterr().err == ""
