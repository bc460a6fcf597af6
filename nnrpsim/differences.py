"""Paired differences from a baseline sweep point: what changing swept keys did, with the
interval that common random numbers allow.

Replication r of every sweep point draws the same random numbers (its seed derives from the
study seed and r alone), so two points' runs of one replication differ only by what the
points set (where they share a workload: a swept size or rate draws another). Their
metrics' difference, run by run, varies far less than either metric: its t interval over the
replications both finished says whether a point beats the baseline where the two points' own
intervals overlap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from pydantic import ValidationError

from .display_units import first_few, value_text
from .metrics import METRICS
from .paths import given_path
from .recorded import recorded_scenario
from .results import cell, read_table
from .scenario import Scenario, ScenarioError
from .scenario.dotted_keys import dotted, set_dotted
from .scenario.errors import validation_error
from .scenario.key_catalog import SHORT_KEYS
from .scenario.loader import parse_set
from .summaries import means_and_intervals, run_params, with_derived_metrics

BASELINE = "--baseline"
"""Where a bad baseline is reported: the command line's option, which the API's argument is."""
FULL_KEYS = {short: key for key, short in SHORT_KEYS.items()}
"""A swept key's short name, as the summary's and compare's headers print it (``gpu_memory``)
-> the key in full (``topology.gpu_memory``): a baseline is named as the table names it."""


def paired_differences(runs: pd.DataFrame, baseline: Mapping[str, Any]) -> pd.DataFrame:
    """For each sweep point that has a baseline point and is not one: its swept values, the
    baseline point (the one with ``baseline``'s values of its keys and the point's own of the
    others), the replications paired (finished at both), and for each metric the mean of
    its difference from the baseline's, replication by replication, and that mean's 95 %
    half-width ``<metric>_ci95`` (NaN for one pair). ``baseline``: swept keys and a value
    of each, as the runs table holds them (base units: ms, bytes)."""
    runs = with_derived_metrics(runs)  # (runs an earlier version wrote have no wire_saving)
    params = run_params(runs)
    for key in baseline:
        if key not in params:
            swept = ", ".join(params) or "none"
            raise ScenarioError(BASELINE, f"{key} is not a swept key of the study (swept: {swept})")
    points = runs.drop_duplicates("point").set_index("point")[params].sort_index()
    keys = {point: _values(row, params) for point, row in points.iterrows()}
    wanted = {key: _comparable(value) for key, value in baseline.items()}
    for key, value in baseline.items():
        at_key = params.index(key)
        if not any(values[at_key] == wanted[key] for values in keys.values()):
            shown = first_few(list(dict.fromkeys(value_text(key, v) for v in points[key])))
            raise ScenarioError(
                f"{BASELINE} {key}",
                f"{value_text(key, value)} is not one of its swept values ({shown})",
            )
    at = {values: point for point, values in keys.items()}
    targets = {  # each point's values with the baseline's of its keys
        point: tuple(wanted.get(key, value) for key, value in zip(params, values, strict=True))
        for point, values in keys.items()
    }
    base_of = {
        point: at[target]
        for point, target in targets.items()
        if target != keys[point] and target in at
    }
    if not base_of:
        held = ", ".join(f"{key}={value_text(key, value)}" for key, value in baseline.items())
        raise ScenarioError(
            BASELINE,
            f"every sweep point has {held}: none to compare with it"
            if all(target == keys[point] for point, target in targets.items())
            else f"no sweep point differs from another in {', '.join(baseline)} alone: a key "
            "swept beside it in zip changes with it (hold that one too, with another --baseline)",
        )
    metrics = [metric for metric in METRICS if metric in runs]
    finished = runs[runs["error"].isna()].set_index(["point", "replication"])[metrics]
    differences = []
    for point, base in base_of.items():
        if point in finished.index and base in finished.index:
            diff = finished.loc[point] - finished.loc[base]  # aligned by replication
            differences.append(diff.dropna(how="all").assign(point=point))
    if not differences:
        raise ScenarioError(BASELINE, "no sweep point has a baseline point with finished runs")
    paired = pd.concat(differences)
    stats = means_and_intervals(paired, ["point"], metrics)
    table = points.loc[stats.index].assign(
        baseline_point=[base_of[point] for point in stats.index],
        pairs=paired.groupby("point").size(),
    )
    return pd.concat([table, stats], axis=1).reset_index()


def _comparable(value: Any) -> Any:
    """A swept value as a key: a null one (NaN in a table) None, the rest as a table holds them."""
    value = cell(value)
    return None if pd.isna(value) else value


def _values(row: pd.Series, params: list[str]) -> tuple:
    return tuple(_comparable(row[key]) for key in params)


def compare(results: str | Path, baseline: Sequence[str] | str | None = None) -> pd.DataFrame:
    """:func:`paired_differences` of a results folder's runs, ``baseline`` given as
    ``KEY=VALUE`` text (or a list of it) as ``--set`` takes it: ``host_policy.name=never``,
    ``topology.gpu_memory=512MiB``, or by the key's short name as the tables print it
    (``gpu_memory=512MiB``); values are read as the study's scenario reads them. None: the
    study's own (:func:`default_baseline`). The frame's ``attrs["baseline"]`` lists the
    ``KEY=VALUE`` items it was compared with (the default's written out)."""
    folder = given_path(results, "results")
    runs = read_table(folder / "runs.parquet")
    if baseline is None:
        baseline = default_baseline(folder, runs)
    items = [baseline] if isinstance(baseline, str) else list(baseline)
    if not items:
        raise ScenarioError(BASELINE, "name a swept key and its baseline value, KEY=VALUE")
    scenario = recorded_scenario(folder, "to read the baseline's values by")
    swept_nulls = {key for key in run_params(runs) if runs[key].isna().any()}
    differences = paired_differences(runs, _resolved(scenario, items, swept_nulls))
    differences.attrs["baseline"] = items
    return differences


def replaceable_by_differences(path: Path) -> bool:
    """Whether ``--csv`` may write ``path``: a new or empty file, or a table compare wrote
    (its header begins with ``point`` and names ``baseline_point`` and ``pairs``), not
    anything else (``--csv scenarios/quickstart.yaml`` replaced the scenario)."""
    try:
        if not path.exists() or path.stat().st_size == 0:
            return True
        with path.open(encoding="utf-8", errors="replace") as file:
            header = file.readline(100_000).rstrip("\r\n").split(",")
    except OSError:  # (as a write would: the write says why)
        return True
    return header[0] == "point" and {"baseline_point", "pairs"} <= set(header)


NEVER = ("host_policy.name", "never")
"""Inlining everything: the baseline of caching, where a study sweeps it."""


def default_baseline(results: str | Path, runs: pd.DataFrame | None = None) -> str:
    """The baseline a study's points are compared with when none is named, as ``KEY=VALUE``
    (:func:`baseline_item`): policy ``never`` where the study sweeps it, else its first swept
    key at the value of its last point. ``runs``: the folder's, where they are at hand."""
    if runs is None:
        runs = read_table(Path(results) / "runs.parquet")
    params = run_params(runs)
    if not params or runs.empty:
        raise ScenarioError(BASELINE, "the study sweeps no key: it has no points to compare")
    key, value = params[0], runs.sort_values("point")[params[0]].iloc[-1]
    if NEVER[0] in params and (runs[NEVER[0]] == NEVER[1]).any():
        key, value = NEVER
    return baseline_item(results, key, value)


def baseline_item(results: str | Path, key: str, value: Any) -> str:
    """``KEY=VALUE`` that :func:`compare` reads as the swept ``key`` at ``value``: by the
    key's short name, and the value as the tables write it (``gpu_memory=512 MiB``) where that
    reads back to it exactly, else in the scenario's own units (``2/3`` shown as ``0.666667``
    would name no point)."""
    short, wanted = SHORT_KEYS.get(key, key), _comparable(value)
    scenario = recorded_scenario(Path(results), "to read the baseline's values by")
    item = f"{short}={value_text(key, value)}"
    try:
        nulls = {key} if wanted is None else set()  # (eviction=none is a policy, no null)
        if _comparable(_resolved(scenario, [item], nulls)[key]) == wanted:
            return item
    except ScenarioError:
        pass
    return f"{short}={wanted.item() if isinstance(wanted, np.generic) else wanted!r}"


def _resolved(scenario: dict[str, Any], items: list[str], swept_nulls: set[str]) -> dict[str, Any]:
    """Each ``KEY=VALUE`` as the study's scenario would hold it (``90s``: 90000.0 ms), named
    as the tables name it too: a key by its short name (``ttl_fraction``), a null of a key
    swept with one (``swept_nulls``) by its word there (``gpu_memory=unlimited``,
    ``ttl_hint=none``; ``eviction=none`` is a policy, no null)."""
    given: dict[str, Any] = {}
    for item in items:
        key, value = parse_set(item, BASELINE)
        if (key := FULL_KEYS.get(key, key)) in given:
            raise ScenarioError(f"{BASELINE} {key}", "given twice")
        null = key in swept_nulls and value == value_text(key, None)
        given[key] = None if null else value
    raw = {section: value for section, value in scenario.items() if section != "sweep"}
    for key, value in given.items():
        set_dotted(raw, key, value, where=f"{BASELINE} {key}")
    try:
        resolved = Scenario.model_validate(raw).model_dump()
    except ValidationError as err:
        raise validation_error(err, prefix=f"{BASELINE} ") from None
    return {key: dotted(resolved, key) for key in given}
