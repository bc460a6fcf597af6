"""Keys that change nothing where they are set or swept: made inert by another setting
(before a run), given no say by what the runs did, or whose values gave the same numbers
(after it)."""

from __future__ import annotations

from collections.abc import Callable, Collection

import numpy as np
import pandas as pd

from ..display_units import scenario_text
from ..inert_keys import INERT_KEYS, ends_leases_but_by_eviction, inert_in, inert_reason, within
from ..metrics import METRICS
from ..scenario import Point, Scenario
from ..scenario.dotted_keys import dotted
from ..scenario.key_catalog import SHORT_KEYS, describe
from ..summaries import swept_columns
from .wording import points_named, warnings_by_text

_DEFAULTS = {key: default for key, default, _ in describe()}
"""Each scenario key's default (a trace's keys too)."""

_VALUE_KEYS = tuple(key for key in INERT_KEYS if key in SHORT_KEYS)
"""The keys a rule names that hold a value, not a section (whose keys are judged one by one)."""


def inert_key_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each key that ``points`` (of ``of_points``) set away from its default,
    without sweeping it, where another setting makes it change nothing
    (:func:`nnrpsim.inert_keys.inert_reason`): ``invalidation_sweep``'s 5 ms links run with
    ``--set engine=vector``, ``faults.announce_restart`` without a restart. A swept key,
    :func:`ignored_key_advice` names."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    fixed_keys: dict[tuple[str, ...], list[str]] = {}  # (by the keys swept: a grid's share them)
    for point in points:
        swept = tuple(point.params)
        if swept not in fixed_keys:
            fixed_keys[swept] = [key for key in _VALUE_KEYS if not within(key, swept)]
        values = point.scenario.model_dump()
        for key in fixed_keys[swept]:
            value = dotted(values, key)
            if value == _DEFAULTS[key]:
                continue
            reason = inert_reason(point.scenario, key, point.params)
            if reason is not None:
                said = scenario_text(key, value)
                found.append(
                    (f"{key} is {said}, but {reason}: it changes nothing there", point.index)
                )
    return warnings_by_text(found, of_points)


def ignored_key_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each swept key that some ``points`` (of ``of_points``) give no say,
    their own settings having fixed what it sets (:func:`nnrpsim.inert_keys.inert_reason`):
    before a run, and after it with the rule's reason where the numbers would say only that
    nothing moved (:func:`unmoved_key_warnings` finds the keys no rule knows)."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        for key in point.params:
            reason = inert_reason(point.scenario, key, point.params)
            if reason is not None:
                text = f"{key} is swept, but {reason}: its values change nothing there"
                found.append((text, point.index))
    return warnings_by_text(found, of_points)


BACKOFF = "host_policy.refused_put_backoff"


EVICTION = "topology.eviction"


IN_FLIGHT = "workload.operations.max_in_flight"


INLINE_ONCE = "host_policy.inline_after_invalidate"


def idle_rule_warnings(points: list[Point], runs: pd.DataFrame) -> list[str]:
    """Rules that act only on what the run does, set away from their defaults and not swept,
    where no run after the warm-up did it, at the points a rule leaves them a say: they drew
    numbers they had next to no say in, with no word. Whether a server refuses a CACHE_PUT or
    evicts a lease, the scenario's memory and eviction rules decide as the run goes (a budget
    with LRU eviction refuses nothing but objects larger than itself; one that never fills
    evicts nothing); whether a session's operations overlap enough to fill its in-flight
    window, its load and the network's delays; whether a lease ends under its host, for the
    inline-once rule, its evictions too where no content changes or told restart end any.
    The points where a rule gives them no say whatever the run (unlimited memory, the vector
    engine's timing, policy ``never``) are left out: :func:`inert_key_advice` names the
    first two before the run; the last is a baseline."""
    return [
        *_idle_rule(
            points,
            runs,
            BACKOFF,
            ("refused_puts",),
            "no server refused a CACHE_PUT after the warm-up in any run, so it had next to no "
            "say: a server refuses room only where reclaiming expired leases and evicting "
            "cannot make it (eviction: none, or an object larger than its whole budget)",
        ),
        *_idle_rule(
            points,
            runs,
            EVICTION,
            ("evictions", "refused_puts"),
            "no server evicted a lease or refused a CACHE_PUT after the warm-up in any run, so "
            "it had no say: the budget (topology.gpu_memory, max_cache_entries) never filled",
        ),
        *_idle_rule(
            points,
            runs,
            IN_FLIGHT,
            ("operations_waited",),
            "no operation waited for an in-flight slot after the warm-up in any run, so it had "
            "no say: a larger limit gives the same numbers",
        ),
        *_idle_rule(
            points,
            runs,
            INLINE_ONCE,
            ("evictions",),
            "no server evicted a lease after the warm-up in any run, and nothing else ends one "
            "under its host (no content changes, no restart it is told of), so it had no say: "
            "the budget (topology.gpu_memory, max_cache_entries) never filled",
            acts_anyway=ends_leases_but_by_eviction,
        ),
    ]


def _idle_rule(
    points: list[Point],
    runs: pd.DataFrame,
    key: str,
    acts: tuple[str, ...],
    why: str,
    acts_anyway: Callable[[Scenario], bool] | None = None,
) -> list[str]:
    """The warning of :func:`idle_rule_warnings` for ``key``, which has its say where a run
    counts any of ``acts``, or at a point ``acts_anyway`` holds for whatever the counts;
    none where a run's count is unknown (one an earlier version wrote has no ``evictions``
    or ``operations_waited``)."""
    if not points or within(key, points[0].params) or any(c not in runs for c in acts):
        return []
    value = dotted(points[0].scenario.model_dump(), key)
    live = [point for point in points if not inert_in(point.scenario, key)]
    if acts_anyway is not None and any(acts_anyway(point.scenario) for point in live):
        return []
    indices = [point.index for point in live]
    done = runs.loc[runs["point"].isin(indices) & runs["error"].isna(), list(acts)]
    if (
        value == _DEFAULTS[key]
        or done.empty
        or done.isna().any(axis=None)
        or (done > 0).any(axis=None)
    ):
        return []
    said = scenario_text(key, value)
    return [f"warning: {points_named(indices, len(points))}: {key} is {said}, but {why}"]


def unmoved_key_warnings(summary: pd.DataFrame, explained: Collection[str] = ()) -> list[str]:
    """A warning for each swept key whose values gave the same numbers wherever the other
    swept keys stood (their runs draw the same random numbers, so a key that changes the
    runs at all almost always changes some number): nothing it sets reached the runs, or its
    range never binds, or (a TTL's key) the budget evicted every lease before it ran out. Its
    flat curve would read as "it does not matter" where another key fixed it. A key that
    moves the numbers somewhere (a TTL beside a ``never`` baseline) is not named, nor one
    ``explained`` already (by :func:`ignored_key_advice`)."""
    done = summary[summary["failures"] == 0] if "failures" in summary else summary
    metrics = [metric for metric in METRICS if metric in done]
    if len(done) < 2 or not metrics:
        return []
    swept = swept_columns(summary)
    labels = done[swept].astype(str)  # (a swept list of kinds is no group key)
    # each point's numbers as one hash (a NaN as a NaN: a vector run's latency), to 12
    # figures: two paths may sum the same bytes in another order (the vector engine's replay
    # on the lease table, for renewal: extend, and beside it, for touch)
    numbers = _figures_kept(done[metrics].to_numpy(dtype=float), 12)
    labels["numbers"] = pd.util.hash_pandas_object(pd.DataFrame(numbers), index=False).to_numpy()
    unmoved = []
    for key in (key for key in swept if key not in explained):
        others = [other for other in swept if other != key]
        # (a null, swept as no budget or no hint, is a value: its group counts; alone, one group)
        groups = labels.groupby(others or (lambda _: 0), sort=False, dropna=False)
        varied = groups[key].nunique(dropna=False) > 1
        if varied.any() and (groups["numbers"].nunique()[varied] == 1).all():
            unmoved.append(key)
    # a TTL the budget overruled: every lease evicted before it could run out
    overruled = [key for key in unmoved if key in TTL_KEYS] if _evicted_before_expiry(done) else []
    found = []
    for keys, why in (
        (
            [key for key in unmoved if key not in overruled],
            "nothing it sets reached the runs (another key fixes it, or the engine ignores it) "
            "or its range never binds (a GPU budget that never fills)",
        ),
        (
            overruled,
            "no reference found its lease run out in any run, and the servers evicted leases "
            "at every point (evictions): the budget (topology.gpu_memory, max_cache_entries) "
            "ended the leases before a TTL could; a larger one lets the TTL act",
        ),
    ):
        if keys:
            whose = "its" if len(keys) == 1 else "each one's"
            found.append(
                f"warning: {', '.join(keys)}: {whose} values gave the same numbers wherever the "
                f"other swept keys stood: {why}"
            )
    return found


TTL_KEYS = (
    "host_policy.ttl_hint",
    "host_policy.ttl_fraction",
    "host_policy.connection_ttl",
    "topology.default_lease_ttl",
    "topology.ttl_floor",
    "topology.ttl_ceiling",
)
"""The keys that set the TTL a lease is granted."""


def _evicted_before_expiry(summary: pd.DataFrame) -> bool:
    """Whether at every point of ``summary`` no reference found its lease run out and the
    servers evicted leases (unknown, as in runs of an earlier version: no)."""
    if not {"miss_rate_lease_expired", "evictions"} <= set(summary):
        return False
    expired = summary["miss_rate_lease_expired"].to_numpy(dtype=float)
    evicted = summary["evictions"].to_numpy(dtype=float)
    return bool((expired == 0).all() and (evicted > 0).all())


def _figures_kept(values: np.ndarray, figures: int) -> np.ndarray:
    """``values`` rounded to so many significant figures (zeros, NaNs and infinities kept)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = 10.0 ** (figures - 1 - np.floor(np.log10(np.abs(values))))
        rounded = np.round(values * scale) / scale
    return np.where(np.isfinite(rounded), rounded, values)
