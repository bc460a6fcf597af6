"""NNRPSIM_PLOT_FORMATS: the formats a study's figures are written in (PNG and SVG unless it
says otherwise), for the study's workers and ``nnrpsim plot`` alike."""

from __future__ import annotations

import json
import shutil

import pytest
from matplotlib.figure import Figure

import nnrpsim
from nnrpsim.cli import main
from nnrpsim.plots import plot_study
from nnrpsim.scenario import ScenarioError

pytestmark = pytest.mark.plots


def _contents(folder) -> dict:
    """Every path in ``folder``: a file's bytes, a folder's None."""
    return {path: path.read_bytes() if path.is_file() else None for path in folder.rglob("*")}


def _figures(folder) -> list:
    """The figures in ``folder``'s plots (not its record of them, ``.drawn.json``)."""
    return [path for path in (folder / "plots").iterdir() if not path.name.startswith(".")]


def _written(folder) -> set[str]:
    return {path.suffix for path in _figures(folder)}


def test_the_variable_names_the_formats_the_workers_and_the_plot_command_write(
    tmp_path, small_yaml, capsys, monkeypatch
):
    out = tmp_path / "out"
    monkeypatch.setenv("NNRPSIM_PLOT_FORMATS", " pdf, PNG ,pdf")  # (the workers draw them)
    assert main(["run", str(small_yaml), "--out", str(out), "--jobs", "2", "--quiet"]) == 0
    figures = {path.stem for path in _figures(out)}
    assert _written(out) == {".pdf", ".png"} and len(figures) > 5
    assert capsys.readouterr().out.endswith(
        f"summary.csv, warnings.txt, {len(figures)} plots in plots/ (PDF and PNG)\n"
    )
    assert (out / "plots" / "hit_rate_vs_ttl.pdf").read_bytes().startswith(b"%PDF")
    monkeypatch.setenv("NNRPSIM_PLOT_FORMATS", "svg")
    (out / "plots" / "mine.png").write_bytes(b"kept")
    assert main(["plot", str(out)]) == 0  # (the PDFs and PNGs it drew before go: not mine)
    assert {path.name for path in _figures(out)} == {
        *(f"{figure}.svg" for figure in figures),
        "mine.png",
    }


@pytest.mark.all_plot_formats
def test_by_default_each_figure_is_a_png_and_an_svg(tmp_path, small_yaml, capsys, monkeypatch):
    assert main(["run", str(small_yaml), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    assert _written(tmp_path / "out") == {".png", ".svg"}
    assert capsys.readouterr().out.rstrip().endswith("in plots/ (PNG and SVG)")
    # each file is one drawing of its figure, laid out once before them: each was drawn
    # twice, once to lay it out again with nothing rendered (a fifth of the plots' time)
    drawn, draw = [], Figure.draw
    monkeypatch.setattr(
        Figure, "draw", lambda figure, renderer: drawn.append(draw(figure, renderer))
    )
    paths = plot_study(tmp_path / "out")
    assert len(drawn) == len(paths) == len(_figures(tmp_path / "out"))


@pytest.mark.parametrize("text", ["jpeg", "png,", "", "none,png"])
def test_a_format_it_cannot_write_is_one_line_before_anything_is_written(
    tmp_path, small_yaml, small_study, capsys, monkeypatch, text
):
    monkeypatch.setenv("NNRPSIM_PLOT_FORMATS", text)
    said = (
        "error: NNRPSIM_PLOT_FORMATS: names png, svg, pdf, comma-separated (png,svg by "
        f"default), or none, not {text!r}\n"
    )
    assert main(["run", str(small_yaml), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert capsys.readouterr().err == said and not (tmp_path / "out").exists()
    files = _contents(small_study)
    assert main(["plot", str(small_study)]) == 2
    assert capsys.readouterr().err == said  # (said before its folder is made)
    assert _contents(small_study) == files and not (small_study / "plots").exists()


def test_none_draws_no_figures_and_leaves_none_of_earlier_numbers(
    tmp_path, small_yaml, capsys, monkeypatch
):
    """A study under ``none`` draws nothing: a resume with more replications removes the
    figures of fewer that the last drawing wrote (not a file of yours), and says so in its
    results line; redrawing under ``none``, which would draw nothing, is refused."""
    out = tmp_path / "out"
    assert main(["run", str(small_yaml), "--out", str(out), "--quiet"]) == 0
    assert len(_figures(out)) > 5
    (out / "plots" / "mine.png").write_bytes(b"kept")
    capsys.readouterr()
    monkeypatch.setenv("NNRPSIM_PLOT_FORMATS", " None ")
    more = ["--resume", "--set", "study.replications=3", "--quiet"]
    assert main(["run", str(small_yaml), "--out", str(out), *more]) == 0
    said = capsys.readouterr().out
    assert "(complete): summary.csv, warnings.txt, no plots (NNRPSIM_PLOT_FORMATS=none)\n" in said
    assert [path.name for path in _figures(out)] == ["mine.png"]
    assert json.loads((out / "plots" / ".drawn.json").read_text()) == {"files": []}
    files = _contents(out)
    assert main(["plot", str(out)]) == 2
    assert capsys.readouterr().err == (
        "error: NNRPSIM_PLOT_FORMATS: is none, so nothing would be drawn: name the formats to "
        "draw the figures in, of png, svg, pdf, or unset it for png,svg\n"
    )
    with pytest.raises(ScenarioError, match="is none, so nothing would be drawn"):
        plot_study(out)
    assert _contents(out) == files
    fresh = nnrpsim.run(small_yaml, out=tmp_path / "fresh", progress=False)
    assert fresh.plots == [] and not (tmp_path / "fresh" / "plots").exists()


@pytest.mark.parametrize("command", ["run", "plot"])
def test_the_commands_that_draw_name_the_variable_in_their_help(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "NNRPSIM_PLOT_FORMATS names others" in " ".join(capsys.readouterr().out.split())


def test_a_drawing_removes_only_figures_its_record_names_in_plots(tmp_path, small_study):
    """Its record of the last drawing is read as a list of file names in ``plots/`` of the
    formats figures take: no other path it could name is removed."""
    out = shutil.copytree(small_study, tmp_path / "out")
    (out / "plots").mkdir()
    (out / "plots" / "notes.txt").write_text("mine")
    (out / "plots" / "old.png").write_bytes(b"an earlier drawing's")
    (out / "elsewhere.png").write_bytes(b"mine")
    named = ["../elsewhere.png", "sub/../../runs.parquet", "notes.txt", "old.png", 7]
    (out / "plots" / ".drawn.json").write_text(json.dumps({"files": named}))
    before = _contents(out)
    assert main(["plot", str(out)]) == 0
    after = _contents(out)
    assert set(before) - set(after) == {out / "plots" / "old.png"}
    assert (out / "plots" / "notes.txt").read_text() == "mine"
    for damaged in ("{", "[]", '{"files": "hit_rate_vs_ttl.png"}'):
        (out / "plots" / ".drawn.json").write_text(damaged)
        assert main(["plot", str(out)]) == 0  # (as if no drawing had been recorded)
        assert set(_contents(out)) == set(after)
