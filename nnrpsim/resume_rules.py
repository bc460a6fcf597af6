"""Which runs a resumed study keeps: what of its scenario may change while the runs in its
folder still hold (more replications, other values of its swept keys), and what changed."""

from __future__ import annotations

from typing import Any

from .display_units import scenario_text

_MISSING = object()
"""A key one scenario has and the other lacks (a newer version's): unlike any value."""


def scenario_changes(then: object, now: dict[str, Any]) -> list[str]:
    """Each key whose value differs between a recorded scenario and this one, as
    ``key: <value> there, <value> here`` (none if nothing was recorded)."""
    if not isinstance(then, dict):
        return []
    before, after = _leaf_values(then), _leaf_values(now)
    return [
        f"{key}: {_written(key, before)} there, {_written(key, after)} here"
        for key in _differing(before, after)
    ]


def _differing(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The dotted keys whose leaf values differ (one side may lack them), in ``after``'s
    order, then ``before``'s."""
    keys = dict.fromkeys([*after, *before])
    return [key for key in keys if before.get(key, _MISSING) != after.get(key, _MISSING)]


REPLICATIONS = "study.replications"
RUNS_IGNORE = ("study.description",)
"""Scenario keys no run reads: a resume may change them."""
_SWEPT = ("sweep.grid.", "sweep.zip.")


def runs_still_hold(then: object, now: dict[str, Any]) -> bool:
    """Whether the runs of the recorded scenario ``then`` are runs of ``now``: nothing a run
    reads changed, but perhaps the number of replications, upwards, and the values of the
    swept keys. Replication r draws the same numbers whatever their count (common random
    numbers, seeded by r alone), so a resume adds the rest; fewer would leave runs there that
    the summary would still count. A point's runs are drawn from its values alone, so a
    resume runs a value added to a list, and finds the runs of the others by their values
    (:mod:`~nnrpsim.renumbering`, which refuses a sweep that lacks a point with runs)."""
    if not isinstance(then, dict):
        return False
    before, after = _leaf_values(then), _leaf_values(now)
    old, new = before.get(REPLICATIONS), after.get(REPLICATIONS)
    kept = isinstance(old, int) and isinstance(new, int) and new >= old
    swept = _swept_alike(before, after)
    return kept and all(
        key in (REPLICATIONS, *RUNS_IGNORE)
        or key in swept
        or any(key.startswith(f"{name}.") for name in swept)
        for key in _differing(before, after)
    )


def _swept_alike(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    """The keys both scenarios sweep, and sweep alike (in ``grid``, or in ``zip``), each as
    its values (``sweep.grid.topology.gpu_memory``) and as its base value, which every point
    replaces (``topology.gpu_memory``; a section swept whole, every key within it): a key
    swept in one only changes what each point's runs are."""
    alike = {key for key in before.keys() & after.keys() if key.startswith(_SWEPT)}
    return alike | {key.split(".", 2)[2] for key in alike}


def _written(key: str, values: dict[str, Any]) -> str:
    return scenario_text(key, values[key]) if key in values else "absent"


def _leaf_values(document: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A scenario's values by dotted key (a mapping's entries each one of their own)."""
    leaves: dict[str, Any] = {}
    for name, value in document.items():
        if isinstance(value, dict) and value:
            leaves.update(_leaf_values(value, f"{prefix}{name}."))
        else:
            leaves[f"{prefix}{name}"] = value
    return leaves
