"""What a study must tell its reader beside its figures: runs that failed, rules the model
broke or load it could not keep up with, a warm-up too short for its memory's climb, and
settings that change nothing or not what they say (a key another setting makes inert, a
fault out of sight, a TTL the server replaces, a policy whose thresholds cache next to
nothing, a size limit most objects exceed). ``nnrpsim run`` prints these lines on
stderr, and :class:`nnrpsim.study.StudyResult` keeps them; ``nnrpsim validate`` (and
``records``, for its point) gives those of a study's setup before anything runs."""

from __future__ import annotations

import pandas as pd

from ..inert_keys import NEVER_IGNORES, inert_reason
from ..scenario import Point
from .caching import (
    kind_sizes_advice,
    policy_reach_advice,
    reach_warning,
    size_limit_advice,
    trace_sizes_advice,
    uncached_kinds_advice,
)
from .keys import idle_rule_warnings, ignored_key_advice, inert_key_advice, unmoved_key_warnings
from .outcomes import failure_warnings, violation_warnings
from .timing import (
    fault_time_advice,
    log_span_advice,
    sample_advice,
    warmup_warnings,
)
from .ttl_bounds import ttl_bound_advice


class StudyWarning(UserWarning):
    """A line of :func:`study_warnings`, as ``nnrpsim.sweep`` gives it to a notebook."""


def study_warnings(
    points: list[Point], runs: pd.DataFrame, summary: pd.DataFrame, series: pd.DataFrame
) -> list[str]:
    """Every warning the runs of a sweep's ``points`` call for. A warm-up is judged on the
    runs' samples of the memory held (``series``), on either engine."""
    # (a swept key a rule gives no say at every point is named with the rule's reason, not
    # found again by its numbers)
    explained = {
        key
        for key in (points[0].params if points else ())
        if all(inert_reason(point.scenario, key, point.params) for point in points)
    }
    # (nor a caching key swept where a policy caching next to nothing is named at every point)
    if points and all(reach_warning(point) for point in points):
        explained |= set(NEVER_IGNORES) & set(points[0].params)
    return [
        *violation_warnings(summary),
        *uncached_kinds_advice(points, len(points)),
        *policy_reach_advice(points, len(points)),
        *size_limit_advice(points, len(points)),
        *ignored_key_advice(points, len(points)),
        *unmoved_key_warnings(summary, explained),
        *warmup_warnings(points, series),
        *inert_key_advice(points, len(points)),
        *kind_sizes_advice(points, len(points)),
        *fault_time_advice(points, len(points)),
        *ttl_bound_advice(points, len(points)),
        *log_span_advice(points, len(points)),
        *trace_sizes_advice(points, len(points)),
        *sample_advice(points, len(points)),
        *idle_rule_warnings(points, runs),
        *failure_warnings(runs),
    ]
