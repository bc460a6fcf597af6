"""A user's value as an error names it: its ``repr``, cut short where it is long, so that a
100,000-character duration or a list a YAML anchor multiplied a billion times still gives a
one-line error a terminal can show (one such list made an error of 52 MB)."""

from __future__ import annotations

import reprlib

_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 60  # (characters; longer keeps each end, "..." between)
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 6
_SHORT.maxlevel = 2


def quoted(value: object) -> str:
    """``repr(value)`` where short; a long text's ends, a long list's first items and the first
    levels of a nested one otherwise."""
    return _SHORT.repr(value)


def given(value: object) -> str:
    """What a value of the wrong type is, as an error that refuses it says: ``a boolean``
    (YAML reads yes, no, on and off as booleans, so ``True`` would puzzle), ``null``, ``a
    list``, ``a mapping``, or else the value itself (:func:`quoted`): ``'two'``, ``2.5``."""
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return quoted(value)
