"""Whether a run's span sees what it measures: a warm-up too short for the sessions' (before
a run) or the memory's (after it) climb, faults timed out of sight, runs that outlast their
log or replay part of it, too few memory samples."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from ..display_units import counted, scenario_text
from ..model.workload_means import LEVEL, least_warmup_ms, measured_ramp, written_warmup_ms
from ..run_config import model_config
from ..scenario import Point
from ..scenario.schema import Arrivals, Study, Trace
from ..traces import load_arrivals, load_trace
from ..warmup import climb_warning, point_climbs
from .wording import points_named, span_text, warnings_by_text


def warmup_warnings(points: list[Point], series: pd.DataFrame) -> list[str]:
    """A warning for each set of points that share their timing (warm-up, duration, first
    fault) under a steady load, whose memory, averaged over their runs, settles after the
    warm-up (:func:`nnrpsim.warmup.climb_warning`); where the set's does not, one for the
    points whose own memory does, beyond their replications' swings
    (:func:`nnrpsim.warmup.point_climbs`)."""
    if series.empty:
        return []
    timings: dict[tuple[float, float, float | None], list[int]] = {}
    for point in points:
        study = point.scenario.study
        if not point.scenario.workload.follows_a_log:
            until = model_config(point.scenario).faults.first_at_ms
            timings.setdefault((study.warmup, study.duration, until), []).append(point.index)
    warnings, found = [], []
    for (warmup, _, until), indices in timings.items():
        part = series[series["point"].isin(indices)]
        if part.empty:
            continue
        if warning := climb_warning(part, warmup, until, points_named(indices, len(points))):
            warnings.append(warning)
        else:
            found.extend(point_climbs(part, warmup, until))
    return [*warnings, *warnings_by_text(found, len(points))]


def warmup_advice(points: list[Point], of_points: int) -> list[str]:
    """Before a run: a warning for each set of ``points`` (of
    ``of_points`` in the sweep) whose sessions at once, averaged over the measured time, are
    more than 1 % below their steady number in closed form
    (:func:`nnrpsim.model.workload_means.measured_ramp`), with the least warm-up that keeps
    them within it. Points whose sessions follow a log are not judged."""
    timings: dict[tuple[float, float, float, float], list[int]] = {}
    for point in points:
        study, sessions = point.scenario.study, point.scenario.workload.sessions
        if not point.scenario.workload.follows_a_log:
            key = (study.warmup, study.duration, sessions.duration, sessions.duration_cv)
            timings.setdefault(key, []).append(point.index)
    found = []
    for (warmup, duration, mean, cv), indices in timings.items():
        seen = measured_ramp(warmup, duration, mean, cv)
        if seen >= LEVEL:
            continue
        least = least_warmup_ms(duration, mean, cv)
        remedy = (
            f"a warm-up of {written_warmup_ms(least, duration) / 1e3:g} s or more keeps that "
            "within 1 %"
            if least is not None
            else f"no warm-up within this {duration / 1e3:g} s run does: lengthen study.duration"
        )
        text = (
            f"from the {warmup / 1e3:g} s warm-up to the run's end ({duration / 1e3:g} s), the "
            f"sessions at once average {(1 - seen) * 100:.1f} % below their steady number "
            f"(closed form), and the memory held with them; {remedy}"
        )
        found.extend((text, index) for index in indices)
    return warnings_by_text(found, of_points)


FAULTS = (("restart_at", "restart"), ("memory_pressure_at", "budget cut"))
"""The faults a scenario times (keys of ``faults``), and what each does."""


def fault_time_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each fault that ``points`` (of ``of_points``) time where a study cannot
    see it: after the runs' end, where it never happens (and the check after a run finds
    nothing moved only where it is swept beside null), at the end itself (the notices it sends
    at once and a run's last memory sample, at its end, are all that follows it), or within
    the warm-up, where
    what it does at first (the misses after a restart, the evictions of a budget cut) goes
    unmeasured and the measured time holds only its tail."""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        study = point.scenario.study
        for name, fault in FAULTS:
            if (at := getattr(point.scenario.faults, name)) is None:
                continue
            said = f"faults.{name} is {scenario_text(f'faults.{name}', at)}"
            shift = "set it within study.duration"
            if at > study.duration:
                end = scenario_text("study.duration", study.duration)
                text = f"{said}, after the runs' end ({end}): no {fault} happens; {shift}"
            elif at == study.duration:
                seen = "the runs see only its notices, sent at once, and their last memory sample"
                text = f"{said}, the runs' end: of the {fault}, {seen}; {shift}"
            elif at < study.warmup:
                warmup = scenario_text("study.warmup", study.warmup)
                text = (
                    f"{said}, within the {warmup} warm-up: the runs measure only what follows "
                    f"the {fault} once the warm-up ends; set it after study.warmup"
                )
            else:
                continue
            found.append((text, point.index))
    return warnings_by_text(found, of_points)


IDLE_SHARE = 0.01
"""The share of a run's measured time past its log's end that :func:`log_span_advice` lets
pass: averages over time that count an idle end that short are within 1 % of the log's."""


def log_span_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of ``points`` (of ``of_points``) whose runs outlast their trace
    or arrival log by more than :data:`IDLE_SHARE` of their measured time, so that averages
    over time (``mean_gpu_bytes``, the loads) take in an idle end, whose warm-up outlasts it
    (nothing measured), or that replay only part of their trace. (An arrival log cut short is
    the ordinary use of a long one: not said.)"""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        study, workload = point.scenario.study, point.scenario.workload
        if workload.trace is not None:
            text = _trace_span(workload.trace, study)
        elif workload.sessions.arrivals is not None:
            text = _arrivals_span(workload.sessions.arrivals, workload.sessions.duration, study)
        else:
            text = None
        if text:
            found.append((text, point.index))
    return warnings_by_text(found, of_points)


FEW_SAMPLES = 30
"""Below so many memory samples after the warm-up, :func:`sample_advice` calls a DES run's
memory figures rough."""


def sample_advice(points: list[Point], of_points: int) -> list[str]:
    """A warning for each set of ``points`` (of ``of_points``) whose runs sample the memory
    fewer than :data:`FEW_SAMPLES` times after the warm-up: when the memory settles and its
    course over time come from those samples. The interval is the model's
    (:func:`nnrpsim.run_config.model_config`): the run's three hundredth, at least a
    millisecond; so a warm-up of nine tenths of the run or more, or a run of under 30 ms."""
    found: list[tuple[str, int]] = []
    for point in points:
        study = point.scenario.study
        interval = model_config(point.scenario).sample_interval_ms
        # (the samples after the first, each the memory since the one before: those after the
        # warm-up's)
        whole = math.floor(study.duration / interval)
        samples = whole - math.floor(study.warmup / interval)
        if samples < FEW_SAMPLES:
            more = "study.warmup shorter" if whole >= FEW_SAMPLES else "study.duration longer"
            found.append(
                (
                    f"the runs sample the memory every {span_text(interval)} (study.duration "
                    f"/ 300, at least 1 ms), so the {span_text(study.duration - study.warmup)} "
                    f"after the warm-up hold {counted(samples, 'sample')}: memory_settled_s "
                    f"and the memory over time are rough; make {more} (mean_gpu_bytes and "
                    "peak_gpu_bytes are integrated exactly)",
                    point.index,
                )
            )
    return warnings_by_text(found, of_points)


def _least_duration(end_ms: float, warmup_ms: float) -> str:
    """The duration to advise for a log that ends at ``end_ms``: whole seconds where rounding
    up to them adds no more than :data:`IDLE_SHARE` (an end a few seconds in: milliseconds)."""
    whole_s = math.ceil(end_ms / 1e3)
    if 1e3 * whole_s - end_ms <= IDLE_SHARE * (1e3 * whole_s - warmup_ms):
        return f"{whole_s}s"  # (as a scenario writes it)
    return f"{math.ceil(end_ms)}ms"


def _idle_end(end_ms: float, study: Study, what: str) -> str | None:
    if study.warmup >= end_ms:
        return (
            f"the {span_text(study.warmup)} warm-up outlasts {what}: the runs measure nothing; "
            "shorten study.warmup"
        )
    if study.duration - end_ms <= IDLE_SHARE * (study.duration - study.warmup):
        return None
    return (
        f"the runs last {span_text(study.duration)}, {span_text(study.duration - end_ms)} past "
        f"{what}: mean_gpu_bytes and the other averages over time take in the idle end; set "
        f"study.duration to {_least_duration(end_ms, study.warmup)}"
    )


def _trace_span(spec: Trace, study: Study) -> str | None:
    trace, name = load_trace(spec), Path(spec.path).name
    if study.duration < trace.end_ms:
        replayed = len(trace.before(int(study.duration)))
        return (
            f"the runs last {span_text(study.duration)} and replay {replayed:,} of the "
            f"{len(trace):,} references of {name} (it spans {span_text(trace.end_ms)}); set "
            f"study.duration to {_least_duration(trace.end_ms, study.warmup)} to replay it all"
        )
    what = f"the last reference of {name}, at {span_text(trace.end_ms - 1)}"
    return _idle_end(trace.end_ms, study, what)


def _arrivals_span(spec: Arrivals, session_ms: float, study: Study) -> str | None:
    last = float(load_arrivals(spec)[-1])
    what = (
        f"the sessions of {Path(spec.path).name} (its last arrival at {span_text(last)}, and a "
        f"{span_text(session_ms)} session)"
    )
    return _idle_end(last + session_ms, study, what)
