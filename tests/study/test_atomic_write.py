"""Results are written whole or not at all: a write or rename that fails leaves the file as it
was and no temporary file beside it (``--csv`` onto a folder left one in its parent)."""

from __future__ import annotations

import pytest

from nnrpsim.run_files import atomic_write


@pytest.mark.parametrize("failure", [OSError("disk full"), KeyboardInterrupt()])
def test_a_failed_write_keeps_the_file_and_leaves_no_temporary(tmp_path, failure):
    path = tmp_path / "summary.csv"
    path.write_text("before\n")

    def write(temporary):
        temporary.write_text("half")
        raise failure

    with pytest.raises(type(failure)):
        atomic_write(path, write)
    assert path.read_text() == "before\n" and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_failed_rename_leaves_no_temporary(tmp_path):
    folder = tmp_path / "a_folder"
    folder.mkdir()
    (folder / "inside").write_text("kept\n")
    with pytest.raises(OSError):
        atomic_write(folder, lambda temporary: temporary.write_text("x"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_folder"]
    assert (folder / "inside").read_text() == "kept\n"
