"""What the README shows nnrpsim printing for the library's scenarios is what it prints: each
quote is found in README.md and in the output of its command, so a change of the numbers or of
a message that leaves the README behind fails here. A quote's ``...`` stands for any text, and
a line of it that the README wraps may wrap anywhere (spaces are compared as one)."""

from __future__ import annotations

import re
import shlex

import pytest

from nnrpsim.cli import main
from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
FENCED = re.compile(r"^ *```[a-z]*\n(.*?)^ *```", re.M | re.S)  # (in a list, indented)
BLOCKS = FENCED.findall(README)
SPANS = re.findall(r"`([^`]+)`", FENCED.sub("", README))

RUNS = [  # (a command, the start of the quote in the README of what it prints)
    ("validate scenarios/capacity_planning.yaml", "points 0, 3, 6, 9, 12: ~30 sessions"),
    ("validate scenarios/quickstart.yaml --set study.warmup=auto", "warm-up (auto: ...): 84 s"),
    ("validate scenarios/quickstart.yaml", "~2,460 content changes"),
    ("validate scenarios/mooncake_trace.yaml", "one run replays 121,877 references of the"),
]
SHOWN = [  # the README's blocks that show a command and what it printed
    (command.removeprefix("$ nnrpsim "), "\n".join(rest))
    for command, *rest in (block.splitlines() for block in BLOCKS)
    if command.startswith("$ nnrpsim ") and " scenarios/" in command
]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _quote(start: str) -> str:
    """The one quote (a block or an inline span) of the README that begins with ``start``."""
    (quote,) = [q for q in (*BLOCKS, *SPANS) if _flat(q).startswith(_flat(start))]
    return quote


def _printed(command: str, capsys: pytest.CaptureFixture[str], monkeypatch) -> str:
    monkeypatch.chdir(ROOT)
    assert main(shlex.split(command)) == 0
    return capsys.readouterr().out


def _in_order(quote: str, printed: str) -> list[str]:
    """The pieces of ``quote`` (its lines, split at ``...``) not found in ``printed`` after the
    piece before them."""
    missing, at, text = [], 0, _flat(printed)
    for piece in (p for line in quote.splitlines() for p in _flat(line).split("...")):
        if (found := text.find(piece.strip(), at)) < 0:
            missing.append(piece)
        else:
            at = found + len(piece.strip())
    return missing


def test_the_readme_shows_a_commands_output_for_a_library_scenario():
    assert [command.split()[0] for command, _ in SHOWN] == ["records"]


@pytest.mark.parametrize(("command", "start"), RUNS)
def test_a_quoted_line_is_what_its_command_prints(command, start, capsys, monkeypatch):
    assert _in_order(_quote(start), _printed(command, capsys, monkeypatch)) == []


@pytest.mark.parametrize(("command", "shown"), SHOWN)
def test_a_shown_command_prints_what_the_readme_shows(command, shown, capsys, monkeypatch):
    assert _in_order(shown, _printed(command, capsys, monkeypatch)) == []


def test_a_quote_out_of_step_is_found():
    """(The check itself: a number changed, a piece out of order, a piece missing.)"""
    printed = "points 0, 3: ~30 sessions at once, 30.0 operations/s\n  points 1: ~60 sessions"
    assert _in_order("points 0, 3: ~30 sessions at once,\n30.0 operations/s", printed) == []
    assert _in_order("points 0, 3: ... 30.0 operations/s ... ~60 sessions", printed) == []
    assert _in_order("points 0, 3: ~31 sessions", printed) == ["points 0, 3: ~31 sessions"]
    assert _in_order("~60 sessions ... points 0, 3:", printed) == [" points 0, 3:"]
