"""The scenario's keys: each dotted key with its default, help text and unit, and the short
name that says it alone (``ttl_fraction``), as ``--set``, the legends and the summary name
them. Read from the schema's sections (:mod:`nnrpsim.scenario.schema`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from .schema import Scenario, Section, parse_warmup_ms
from .units import parse_duration_ms, parse_rate, parse_size, parse_whole_ms


def _leaves(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, FieldInfo]]:
    """Every scenario key as (dotted key, field info), sections expanded."""
    for name, info in model.model_fields.items():
        key = f"{prefix}{name}"
        # a section, or a section or null; a mapping of sections (kind_sizes) is one key
        candidates = (
            ()
            if get_origin(info.annotation) is dict
            else (info.annotation, *get_args(info.annotation))
        )
        nested = next(
            (t for t in candidates if isinstance(t, type) and issubclass(t, Section)), None
        )
        if nested is not None:
            yield from _leaves(nested, f"{key}.")
        else:
            yield key, info


REQUIRED = object()
""":func:`describe`'s default of a key that has none."""


def describe() -> list[tuple[str, object, str]]:
    """Every scenario key as (dotted key, default or :data:`REQUIRED`, help text); the help
    of a key with a fixed set of values names them, unless it does already."""
    return [
        (
            key,
            REQUIRED if info.is_required() else info.get_default(call_default_factory=True),
            _with_choices(info.description or "", _choices(info.annotation)),
        )
        for key, info in _leaves(Scenario)
    ]


def _choices(annotation: object) -> tuple[str, ...]:
    """The values a key, its items or its mapping's keys must be one of, as a Literal says."""
    if get_origin(annotation) is Literal:
        return get_args(annotation)
    return next((found for arg in get_args(annotation) if (found := _choices(arg))), ())


def _with_choices(text: str, choices: tuple[str, ...]) -> str:
    """``text`` ending with the ``choices``, where it does not name each already."""
    words = set(re.findall(r"\w+", text))
    if not choices or words.issuperset(choices):
        return text
    return f"{text} Choices: {', '.join(choices)}."


_PARSED_AS = {
    parse_duration_ms: "duration",
    parse_warmup_ms: "duration",
    parse_whole_ms: "duration",
    parse_size: "size",
    parse_rate: "rate",
}


def _parsed_as(info: FieldInfo) -> str | None:
    """What a key's human units parse to, from its validator (directly or under ``| None``)."""
    metadata = list(info.metadata)
    for arg in get_args(info.annotation):
        metadata += getattr(arg, "__metadata__", ())
    return next(
        (_PARSED_AS[m.func] for m in metadata if getattr(m, "func", None) in _PARSED_AS), None
    )


KEY_UNITS = {key: unit for key, info in _leaves(Scenario) if (unit := _parsed_as(info))}
"""Dotted key -> ``duration`` (stored in ms), ``size`` (bytes) or ``rate`` (bytes per s): what
plots need to label a swept key with its unit."""


RESULT_COLUMNS = ("point", "replication", "replications", "failures", "seed", "error")
"""Columns of the results' own beside the swept keys: no short name may read as one."""
VAGUE_ENDINGS = ("median", "sigma", "column", "format")
"""Endings that do not say what they are of: a plot's "beside each point: its median" read
as the median of the point's runs, not of its objects' sizes (``size.median``)."""


def _short_names(
    keys: list[str], taken: tuple[str, ...] = RESULT_COLUMNS + VAGUE_ENDINGS
) -> dict[str, str]:
    """Each dotted key's shortest ending no other key shares, nor a results column, nor a
    vague word (``taken``): ``rate_per_s`` alone would not say whose (sessions, operations or
    invalidations), and ``replications`` would read as the count of a point's runs."""
    names = {}
    for key in keys:
        parts = key.split(".")
        for start in range(len(parts) - 1, -1, -1):
            name = ".".join(parts[start:])
            shared = any(other != key and other.endswith(f".{name}") for other in keys)
            if not shared and name not in taken:
                break
        names[key] = name
    return names


SHORT_KEYS = _short_names([key for key, _ in _leaves(Scenario)])
"""Dotted key -> the shortest ending that names it alone (``ttl_fraction``,
``invalidations.rate_per_s``): what legends call a swept key."""


def _full_places(short_keys: dict[str, str]) -> dict[str, str]:
    """A short name's first part -> that part's full dotted place (``size`` ->
    ``workload.objects.size``), where the short name is not the key itself."""
    places = {}
    for key, name in short_keys.items():
        parts = key.split(".")
        if name != key:
            places[name.split(".")[0]] = ".".join(parts[: len(parts) - name.count(".")])
    return places


FULL_PLACES = _full_places(SHORT_KEYS)
"""Where the keys the legends and the summary name by short names sit in full: an unknown key
that is one of those names (``--set ttl_fraction=0.3``, or ``topology.ttl_fraction``) is
pointed there (``host_policy.ttl_fraction``)."""
