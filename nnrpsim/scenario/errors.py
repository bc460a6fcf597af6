"""Bad scenario input as one line that names the field path and the reason: pydantic's
errors made readable (a bound in the key's stored unit, an unknown key with the one it most
likely misspells)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..quoted import given
from .key_catalog import FULL_PLACES, KEY_UNITS
from .schema import Scenario


class ScenarioError(ValueError):
    """Bad scenario input: ``str(err)`` is ``"<where>: <reason>"``."""

    def __init__(self, where: str, reason: str) -> None:
        self.where, self.reason = where, reason
        super().__init__(f"{where}: {reason}")


_REASONS = {
    "greater_than": "must be greater than {gt}",
    "greater_than_equal": "must be at least {ge}",
    "less_than": "must be less than {lt}",
    "less_than_equal": "must be at most {le}",
    "missing": "required",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be a whole number",
    "int_parsing_size": "must be an integer below 2**63",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be text",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "too_short": "must list at least {min_length} value(s)",
    "string_pattern_mismatch": "must match {pattern}",
}

_OF_A_TYPE = frozenset(
    (
        "int_type",
        "int_parsing",
        "int_from_float",
        "int_parsing_size",
        "float_type",
        "float_parsing",
        "bool_type",
        "bool_parsing",
        "string_type",
        "dict_type",
        "model_type",
        "list_type",
        "tuple_type",
    )
)
"""The errors that refuse a value for its type: their reasons say what was given (``must be
an integer, got 'two'``), which a YAML file may read otherwise than its writer meant."""


def _known_keys(loc: Sequence) -> list[str]:
    """The keys the section at ``loc`` (a path of keys from the top) takes; none where the path
    leaves the sections."""
    section: type[BaseModel] | None = Scenario
    parts = iter(loc)
    for part in parts:
        field = section.model_fields.get(part) if isinstance(part, str) else None
        if field is None:
            return []
        annotation = field.annotation
        if get_origin(annotation) is dict:  # sections by a key of the user's (by kind, say)
            annotation = get_args(annotation)[1]
            if next(parts, None) is None:
                return []
        candidates = (annotation, *get_args(annotation))  # (a section, or a section or None)
        section = next(
            (t for t in candidates if isinstance(t, type) and issubclass(t, BaseModel)), None
        )
        if section is None:
            return []
    return list(section.model_fields)


MAX_KEYS_LISTED = 8
"""A section with more keys than this is not listed in an error line: ``nnrpsim keys`` is."""


def _unknown_key(loc: Sequence) -> str:
    """The reason an unknown key is refused, with the known key it most likely misspells, or
    else the keys its section takes."""
    parts = _where_parts(loc)
    if place := FULL_PLACES.get(str(parts[-1])):  # a short name, or a key of another section
        return f"unknown key (did you mean {place}?)"
    known = _known_keys(parts[:-1])
    close = difflib.get_close_matches(str(parts[-1]), known, n=1)
    if close:
        return f"unknown key (did you mean {close[0]}?)"
    if known and len(known) <= MAX_KEYS_LISTED:
        return f"unknown key (known: {', '.join(known)})"
    return "unknown key (nnrpsim keys lists them)" if known else "unknown key"


STORED_UNITS = {"duration": " ms", "size": " bytes", "rate": " bytes/s"}
"""What a key with human units stores, and so the unit of its bounds."""


def _bound(value: object, unit: str) -> str:
    """A bound in an error line: ``4294967295 ms``, not ``4294967295.0``; ``1e+150``, not its
    151 digits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        value = int(value)
    return f"{value}{unit}"


def reason_of(error: dict) -> str:
    if error["type"] == "extra_forbidden":
        return _unknown_key(error["loc"])
    template = _REASONS.get(error["type"])
    if template is not None:
        unit = STORED_UNITS.get(KEY_UNITS.get(field_path(error["loc"]), ""), "")
        reason = template.format(**{k: _bound(v, unit) for k, v in error.get("ctx", {}).items()})
        return f"{reason}, got {given(error['input'])}" if error["type"] in _OF_A_TYPE else reason
    if error["type"] == "literal_error":
        return "must be one of " + error["ctx"]["expected"]
    return error["msg"].removeprefix("Value error, ")


def _where_parts(loc: Iterable) -> list:
    """A pydantic error location without its validator steps: the keys of the path."""
    return [p for p in loc if not (isinstance(p, str) and ("[" in p or p.startswith("function-")))]


def field_path(loc: Iterable) -> str:
    return ".".join(str(p) for p in _where_parts(loc)) or "scenario"


def first_error(err: ValidationError) -> dict:
    """The error to report: an unknown key before all else (a misspelt key is also a missing
    one, and the misspelling is what to fix)."""
    errors = err.errors()
    return next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])


def validation_error(err: ValidationError, prefix: str = "") -> ScenarioError:
    first = first_error(err)
    where = field_path(first["loc"])
    return ScenarioError(f"{prefix}{where}" if prefix else where, reason_of(first))
