"""What a run makes of a reference log otherwise than it is written is said so. An object of
several sizes replays at its largest, every reference of it: ``validate`` and the study warn,
where they had been silent (a log that keeps one name for an object's versions has its
bytes and memory overstated). An object an operation names twice is referenced once:
``validate``'s description of the trace counts those references."""

from __future__ import annotations

import warnings

import numpy as np

import nnrpsim
from nnrpsim.checks import StudyWarning
from nnrpsim.cli import main
from nnrpsim.one_run import run_records
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


def test_an_object_an_operation_names_again_is_said_to_count_once(tmp_path, capsys):
    log = tmp_path / "ops.csv"
    rows = ["0,a,2000,1", "0,a,2000,1", "0,b,2000,1", "5,a,2000,2", "9,b,2000,3", "9,b,2000,3"]
    log.write_text("time_ms,object,size_bytes,operation\n" + "\n".join(rows) + "\n")
    raw = {
        "study": {"name": "ops", "duration": "10ms", "warmup": "0s", "replications": 1},
        "workload": {"trace": {"path": str(log), "format": "csv"}},
    }
    path = write_yaml(tmp_path, raw)
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "  trace ops.csv (time_scale 1): 6 references in 3 operations to 2 objects over 0.0 s; "
        "2 references repeat an object within their operation: a run counts each once"
    )
    assert len(run_records(path, progress=False).references) == 4
    log.write_text("time_ms,object,size_bytes,operation\n" + "\n".join(rows[1:]) + "\n")
    assert main(["validate", str(path)]) == 0
    assert (
        capsys.readouterr()
        .out.splitlines()[1]
        .endswith(
            "over 0.0 s; 1 reference repeats an object within its operation: a run counts it once"
        )
    )
    log.write_text("time_ms,object,size_bytes,operation\n" + "\n".join(rows[1:5]) + "\n")
    assert main(["validate", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith("to 2 objects over 0.0 s")
