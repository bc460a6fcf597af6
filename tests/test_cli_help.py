"""``nnrpsim --help`` and each command's: every argument says what it is for."""

from __future__ import annotations

import argparse

import pytest

from nnrpsim.cli import build_parser


def _commands(parser: argparse.ArgumentParser):
    """Every parser of the command line, subcommands' included, with its name."""
    yield parser.prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                yield from _commands(child)


def test_every_argument_of_every_command_says_what_it_is_for():
    undocumented = [
        f"{prog} {action.dest}"
        for prog, parser in _commands(build_parser())
        for action in parser._actions
        if not action.help and not isinstance(action, argparse._SubParsersAction)
    ]
    assert undocumented == []


def test_the_help_says_what_nnrpsim_is_and_where_to_start(capsys):
    """It gave the module's first docstring line (``nnrpsim`` command line: a thin shell over
    the public Python API), markup included, which told a newcomer nothing."""
    from nnrpsim.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "simulator of the NNRP/1 cache capability and lease protocol" in out
    assert "``" not in out and "nnrpsim run scenarios/quickstart.yaml" in out
    assert max(len(line) for line in out.splitlines()) <= 80  # (a terminal's width)


def test_each_commands_help_opens_with_what_it_does():
    """``nnrpsim run --help`` began with its usage and no word of what ``run`` does."""
    parser = build_parser()
    commands = [(prog, child) for prog, child in _commands(parser) if child is not parser]
    assert len(commands) == 9
    for prog, child in commands:
        assert child.description and child.description[0].isupper(), prog
        assert child.description in child.format_help(), prog
