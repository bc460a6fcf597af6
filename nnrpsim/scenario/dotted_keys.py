"""A scenario's nested values by dotted key (``topology.link.latency``): as ``--set``, a
sweep and a baseline name them."""

from __future__ import annotations

from typing import Any

from ..quoted import quoted
from .errors import ScenarioError


def set_dotted(raw: dict, key: str, value: Any, where: str | None = None) -> None:
    """Set ``a.b.c`` in nested dicts, creating sections as needed (an optional section left
    out is null: ``workload.trace.path`` makes the trace section). Under ``sweep.grid`` and
    ``sweep.zip`` the rest is one key: ``sweep.grid.topology.hosts`` sweeps ``topology.hosts``."""
    parts = key.split(".")
    if parts[:2] in (["sweep", "grid"], ["sweep", "zip"]) and len(parts) > 2:
        parts = [*parts[:2], ".".join(parts[2:])]
    if not all(parts):
        raise ScenarioError(where or key, "not a dotted key")
    node = raw
    for part in parts[:-1]:
        if node.get(part) is None:
            node[part] = {}
        child = node[part]
        if not isinstance(child, dict):
            raise ScenarioError(where or key, f"{quoted(part)} is not a section")
        node = child
    node[parts[-1]] = value


def dotted(values: dict, key: str) -> Any:
    """The value at dotted ``key`` of a scenario's nested values; None within a section left
    out (``workload.trace.block_tokens`` without a trace)."""
    for part in key.split("."):
        if values is None:
            return None
        values = values[part]
    return values
