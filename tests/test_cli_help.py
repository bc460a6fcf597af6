"""``nnrpsim --help`` and each command's: every argument says what it is for."""

from __future__ import annotations

import argparse

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
