"""Where a run's GPU memory settles (MSER-5), and the warning when a warm-up is too short."""

from __future__ import annotations

import math
import re
import statistics

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import nnrpsim
from nnrpsim.checks.timing import warmup_advice, warmup_warnings
from nnrpsim.cli import main
from nnrpsim.metrics import des_metrics
from nnrpsim.model import FaultConfig, ModelConfig, WorkloadConfig, simulate
from nnrpsim.scenario import parse_scenario, sweep_points
from nnrpsim.student_t import t95
from nnrpsim.warmup import (
    BIAS_TOLERANCE,
    climb_warning,
    held_per_sample,
    memory_settled_ms,
    mser_truncation,
)
from tests.conftest import write_yaml


@pytest.mark.parametrize("step", [1, 5, 37, 60, 144])
def test_a_step_is_cut_at_the_first_batch_wholly_past_it(step):
    """Noiseless: every batch mean past the step is the same, so the remaining spread is 0
    exactly from the first batch with no sample before it, and above 0 before."""
    values = np.where(np.arange(300) < step, 3.0, 8.0)
    assert mser_truncation(values) == math.ceil(step / 5) * 5


def test_a_constant_series_is_settled_from_the_start():
    assert mser_truncation(np.full(300, 7.0)) == 0


@pytest.mark.parametrize("step", [146, 150])
def test_the_cut_is_searched_in_the_first_half_only(step):
    """A climb throughout, or a step at the middle, is cut at the half: not settled by then."""
    assert mser_truncation(np.arange(300.0)) == 150
    assert mser_truncation(np.where(np.arange(300) < step, 3.0, 8.0)) == 150


def test_too_few_samples_say_nothing():
    assert mser_truncation(np.full(19, 1.0)) is None
    assert mser_truncation(np.full(20, 1.0)) == 0


@given(
    st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=20, max_size=400),
    st.integers(-20, 20),
)
def test_the_cut_is_a_whole_batch_in_the_first_half_and_ignores_the_unit(values, exponent):
    """Whatever the series: a multiple of five samples, at most half of them; the same cut in
    another unit (a power of two: exact in floating point)."""
    series = np.array(values)
    cut = mser_truncation(series)
    assert cut is not None and cut % 5 == 0 and cut <= (len(series) // 5) // 2 * 5
    assert mser_truncation(series * 2.0**exponent) == cut


@given(
    st.integers(1, 140),
    st.floats(1e6, 1e13),
    st.floats(-0.9, 10.0).filter(lambda jump: abs(jump) > 1e-6),
)
def test_a_level_tail_of_many_bytes_is_cut_where_it_begins(step, level, jump):
    """Bytes held run to 1e9 and more: rounding must not move the cut along a level tail (it
    did before the batch means were centred)."""
    values = np.where(np.arange(300) < step, level * (1 + jump), level)
    assert mser_truncation(values) == math.ceil(step / 5) * 5


def test_the_cut_minimises_the_remaining_mean_s_squared_standard_error():
    """MSER-5 by its definition, cut by cut: of the batch means of five samples left after
    dropping d of them (within the first half), sum((Y - mean)^2) / n^2 is least at the cut
    (200 noisy climbs of random lengths and heights)."""
    for seed in range(200):
        rng = np.random.default_rng(seed)
        size, climb = int(rng.integers(20, 400)), rng.uniform(0, 0.6)
        values = np.minimum(np.arange(size) / (climb * size + 1), 1.0) * rng.uniform(0, 10)
        values += rng.normal(0.0, 1.0, size)
        means = values[: size // 5 * 5].reshape(-1, 5).mean(axis=1)
        statistic = [np.var(means[d:]) / len(means[d:]) for d in range(len(means) // 2 + 1)]
        cut = mser_truncation(values)
        assert statistic[cut // 5] <= min(statistic) * (1 + 1e-9), seed


def test_a_noisy_ramp_is_cut_near_its_end_and_noise_alone_near_the_start():
    """A linear climb over 60 of 300 samples with noise a tenth of the level: never cut
    inside the climb, and near its end in nine series of ten; the same noise without the
    climb: cut near the start in nine of ten."""
    seeds = np.random.SeedSequence(20261203).spawn(60)
    ramps, flats = [], []
    for seed in seeds:
        noise = np.random.default_rng(seed).normal(0.0, 1.0, 300)
        ramps.append(mser_truncation(np.minimum(np.arange(300) / 60, 1.0) * 10 + noise))
        flats.append(mser_truncation(10 + noise))
    ramps, flats = np.array(ramps), np.array(flats)
    assert ramps.min() >= 45 and np.mean((ramps >= 50) & (ramps <= 75)) >= 0.9
    assert np.median(ramps) in (55, 60, 65)
    assert np.mean(flats <= 20) >= 0.9 and np.median(flats) <= 5


def test_samples_from_a_fault_on_are_left_out():
    """A budget cut at 40 % of the run drops the memory: counted, it is where the series
    'settles' (the sample at 120 s, the mean over the second before it, is the first at the
    low level: the memory held dropped by 119 s); left out, the series before it is flat."""
    times = np.arange(300) * 1000.0
    held = np.where(times < 120_000, 5.0, 2.0)
    assert memory_settled_ms(times, held, None) == 119_000
    assert memory_settled_ms(times, held, 120_000) == 0
    assert math.isnan(memory_settled_ms(times, held, 15_000))  # 15 samples: too few


def test_servers_are_summed_per_sample():
    memory = {
        "time_ms": np.array([0.0, 0.0, 10.0, 10.0, 20.0]),
        "mean_held_bytes": np.array([1.0, 2.0, 4.0, 8.0, 16.0]),
    }
    times, held = held_per_sample(memory)
    assert times.tolist() == [0, 10, 20] and held.tolist() == [3, 12, 16]


def _series(held: list[float], point: int = 0, replication: int = 0) -> pd.DataFrame:
    """One run's samples, 1 s apart, split over two servers."""
    rows = len(held)
    return pd.DataFrame(
        {
            "point": point,
            "replication": replication,
            "time_ms": np.repeat(np.arange(rows) * 1000.0, 2),
            "server": np.tile([0, 1], rows),
            "mean_held_bytes": np.repeat(np.asarray(held, dtype=float) / 2, 2),
        }
    )


CLIMB = [*range(0, 10), *[10] * 30]
"""Held bytes climbing over the first 10 samples, then level: the sample at 10 s, the mean over
the second before it, is the first at the level, so the memory settles at 9 s (MSER-5 cuts the
first 10 samples). 40 samples, 8 batches: the search ends at the cut of 20, 19 s."""


def test_a_climb_past_the_warm_up_is_named_with_its_bias():
    series = pd.concat([_series(CLIMB, replication=r) for r in range(2)])
    warning = climb_warning(series, 2_000, None, "all points")
    bias = np.mean(CLIMB[3:]) / 10 - 1
    assert warning == (
        "warning: all points: the GPU memory held, averaged over the runs, settles at 9 s "
        "(MSER-5), after the 2 s warm-up: mean_gpu_bytes is "
        f"{-bias * 100:.1f} % (± 0.0 %, 95 % over its 2 replications) below its settled level; "
        "a warm-up of 7 s or more keeps it within 1 % (gpu_memory_over_time.png shows the climb)"
    )
    assert climb_warning(series, 10_000, None, "all points") is None
    alone = climb_warning(_series(CLIMB), 2_000, None, "all points")  # (no interval of one)
    assert alone is not None and f"{-bias * 100:.1f} % below its settled level; a warm-up " in alone


def test_the_least_warm_up_within_the_tolerance_is_named():
    """The climb's last part weighs little: from 7 s on (the samples from 8 s, each the mean
    since the one before: 8, 9, then 10 thirty times) the mean is 0.9 % below 10, from 6 s on
    1.8 %. The warm-up named silences the warning, and a second less does not."""
    assert abs(np.mean(CLIMB[8:]) / 10 - 1) <= BIAS_TOLERANCE < abs(np.mean(CLIMB[7:]) / 10 - 1)
    series = _series(CLIMB)
    assert "; a warm-up of 7 s or more keeps it within 1 % (" in climb_warning(series, 0, None, "x")
    assert climb_warning(series, 7_000, None, "x") is None
    assert "a warm-up of 7 s or more" in climb_warning(series, 6_000, None, "x")
    # A swing: from 3 s on the mean is on the level by chance, from 4 to 8 s 1.1 to 3.6 % below
    # it. The least named is one after which no longer warm-up leaves it beyond 1 %: 9 s.
    swing = [0, 2, 2, 14, 14, 14, 14, 6, 6, 6, *[10] * 30]
    assert climb_warning(_series(swing), 3_000, None, "x") is None
    assert "; a warm-up of 9 s or more keeps it within 1 % (" in climb_warning(
        _series(swing), 0, None, "x"
    )


@given(
    climb=st.integers(3, 60),
    noise=st.floats(0.0, 0.3),
    warmup=st.integers(0, 30),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_warm_up_named_is_no_longer_warned_of(climb, noise, warmup, seed):
    """Whatever the climb and noise, the warm-up the warning names, run again, is not warned
    of: the same samples settle at the same point, and from it the mean is within 1 %."""
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    held = np.minimum(np.arange(120) / climb, 1.0) * 10 + rng.normal(0.0, noise, 120)
    series = _series(np.maximum(held, 0.0).tolist())
    warning = climb_warning(series, warmup * 1_000, None, "x")
    named = re.search(r"a warm-up of (\d+) s or more", warning or "")
    if named:
        assert climb_warning(series, int(named[1]) * 1_000, None, "x") is None


LEVEL, HIGH = [10.0] * 40, [14.0] * 10 + [10.0] * 30
"""A run level from the start, and one that starts above the level, beside ``CLIMB``."""


@pytest.mark.parametrize(
    "held, unsure, least",
    # (the least warm-ups: after 7 s the first's average, 8.33, 9.17, then 10, is 0.8 % below
    # 10, after 6 s 1.5 %; after 4 s the second's, 8, 8.67, 9.33, 10, 10.67, then 10, 0.95 %,
    # after 3 s 1.7 %)
    [([CLIMB] * 5 + [LEVEL], False, 7), ([CLIMB, CLIMB, HIGH], True, 4)],
)
def test_the_warning_gives_the_bias_interval_over_the_replications(held, unsure, least):
    """Every point of a replication draws the same sessions: averaging over points evens out
    none of a replication's own slow swings, so the interval is over replications, each
    judged on its own. Where it holds 0 the climb may be their swings: more replications
    tell."""
    series = pd.concat([_series(h, point, r) for r, h in enumerate(held) for point in (0, 1)])
    # (every run is level at 10 from 9 s; the samples after the 2 s warm-up, each the mean
    # since the one before, are those from 3 s on)
    biases = [np.mean(h[3:]) / 10 - 1 for h in held]
    runs = len(held)
    half = t95(runs - 1) * statistics.stdev(biases) / math.sqrt(runs)
    warning = climb_warning(series, 2_000, None, "all points")
    assert warning is not None and "settles at 9 s" in warning
    assert (
        f" {abs(np.mean(biases)) * 100:.1f} % (± {half * 100:.1f} %, 95 % over its {runs} "
        f"replications) below its settled level; a warm-up of {least} s or more keeps it within "
        "1 %"
    ) in warning
    assert warning.endswith(
        " within 1 %, or add replications to tell the climb from their own swings "
        "(gpu_memory_over_time.png shows the climb)"
        if unsure
        else " within 1 % (gpu_memory_over_time.png shows the climb)"
    )


def test_the_runs_are_averaged_before_they_are_judged():
    """Welch's averaging: two runs whose own swings (a step up, a step down at 12 s) cancel
    are level together, where either alone would be judged to settle late."""
    up, down = [10] * 12 + [14] * 28, [10] * 12 + [6] * 28
    assert climb_warning(_series(up), 0, None, "x") is not None
    assert climb_warning(_series(down, replication=1), 0, None, "x") is not None
    both = pd.concat([_series(up), _series(down, replication=1)])
    assert climb_warning(both, 0, None, "x") is None


def test_each_point_weighs_alike_whatever_memory_it_holds():
    """A point holding a thousand times less climbs; the large one is level from the start.
    Summed, the large one would hide the climb; as fractions of their own levels, it shows."""
    small = _series(CLIMB, point=0)
    large = _series([10_000.0] * 40, point=1)
    warning = climb_warning(pd.concat([small, large]), 2_000, None, "all points")
    assert warning is not None and "settles at 9 s" in warning
    bias = (np.mean(CLIMB[3:]) / 10 + 1) / 2 - 1  # the mean of the two points' own biases
    assert f"mean_gpu_bytes is {-bias * 100:.1f} % below" in warning


def test_a_climb_still_under_way_at_half_the_run_asks_for_a_longer_run():
    warning = climb_warning(_series(list(range(40))), 0, None, "point 3")
    assert warning is not None and warning.startswith(
        "warning: point 3: the GPU memory held, averaged over the runs, is still changing at "
        "19 s, half the run (MSER-5), after the 0 s warm-up: mean_gpu_bytes is "
    )
    assert "; lengthen study.duration and study.warmup (" in warning
    # before a fault at 30 s the search ends at the cut of 15, 14 s
    assert "still changing at 14 s" in climb_warning(_series(list(range(40))), 0, 30_000, "x")


def test_a_climb_within_the_tolerance_or_too_short_to_judge_is_no_warning():
    level = 1000.0
    assert (
        climb_warning(_series([0.0, level * (1 - BIAS_TOLERANCE), *[level] * 38]), 0, None, "x")
        is None
    )
    assert climb_warning(_series(CLIMB[:19]), 0, None, "x") is None  # 3 batches
    assert climb_warning(_series([0.0] * 40), 0, None, "x") is None  # nothing held


def test_a_climb_just_beyond_one_percent_is_named():
    """The first second 60 % low leaves mean_gpu_bytes 1.5 % below its settled level: past the
    1 % the figures are good to, so it is named. The sample at 0 s is that instant, before
    the time measured: it moves nothing."""
    warning = climb_warning(_series([0.0, 400.0, *[1000.0] * 38]), 0, None, "x")
    assert warning is not None and "mean_gpu_bytes is 1.5 % below its settled level" in warning
    assert climb_warning(_series([400.0, *[1000.0] * 39]), 0, None, "x") is None


def test_points_are_judged_by_their_timing_and_only_runs_under_a_steady_load():
    """Two warm-ups swept: the climb passes the 1 s one, not the 12 s one. A vector-engine
    study is judged alike, on its samples; one whose sessions follow a log is not judged."""
    raw = {
        "study": {"name": "t", "duration": "40s", "replications": 2},
        "sweep": {"grid": {"study.warmup": ["1s", "12s"]}},
    }
    series = pd.concat([_series(CLIMB, p, r) for p in range(2) for r in range(2)])

    def warnings(raw: dict, series: pd.DataFrame) -> list[str]:
        return warmup_warnings(sweep_points(parse_scenario(raw)), series)

    (warning,) = warnings(raw, series)
    assert warning.startswith("warning: point 0: the GPU memory held, averaged over the runs, ")
    assert "after the 1 s warm-up" in warning
    raw["sweep"]["grid"]["study.warmup"] = ["1s"]
    (warning,) = warnings(raw, series[series["point"] == 0])
    assert warning.startswith("warning: all points: ")
    assert warnings({**raw, "engine": "vector"}, series) == [warning]
    logged = {"sessions": {"arrivals": {"path": "a.csv"}}}
    assert warnings({**raw, "workload": logged}, series) == []
    assert warnings(raw, pd.DataFrame()) == []


def _points_warnings(series: pd.DataFrame, points: int, warmup: str = "2s") -> list[str]:
    """What ``nnrpsim run`` warns of, for ``points`` points of 40 s sharing their timing."""
    raw = {
        "study": {"name": "t", "duration": "40s", "warmup": warmup, "replications": 2},
        "sweep": {"grid": {"workload.operations.rate_per_s": [1 + p for p in range(points)]}},
    }
    return warmup_warnings(sweep_points(parse_scenario(raw)), series)


def test_a_points_own_climb_that_the_mean_over_the_points_hides_is_named():
    """One point of nine climbs (a kind cached only in long sessions, a long TTL): its own
    mean_gpu_bytes is 7.6 % low, the mean over the nine points' only 0.8 %, which the check
    of the set lets pass. Judged on its own, point 3 is named, with its own figures."""
    held = {point: CLIMB if point == 3 else LEVEL for point in range(9)}
    series = pd.concat([_series(h, p, r) for p, h in held.items() for r in range(2)])
    assert climb_warning(series, 2_000, None, "all points") is None
    bias = np.mean(CLIMB[3:]) / 10 - 1
    assert _points_warnings(series, 9) == [
        "warning: point 3: the GPU memory held, averaged over the runs, settles at 9 s "
        f"(MSER-5), after the 2 s warm-up: mean_gpu_bytes is {-bias * 100:.1f} % (± 0.0 %, "
        "95 % over its 2 replications) below its settled level; a warm-up of 7 s or more keeps "
        "it within 1 % (gpu_memory_over_time.png shows the climb)"
    ]
    assert _points_warnings(series, 9, warmup="10s") == []


def test_a_points_own_climb_within_its_replications_swings_is_not_named():
    """Judged one by one, some of many points swing past 1 % by chance: a point is named
    only where its replications tell its climb from their swings. Here one replication of
    point 3 climbs and the other is level: 3.8 % low on average, but the interval over the
    two holds 0. With one replication nothing tells: no point is named on its own."""
    held = {(p, r): CLIMB if (p, r) == (3, 0) else LEVEL for p in range(9) for r in range(2)}
    series = pd.concat([_series(h, p, r) for (p, r), h in held.items()])
    assert _points_warnings(series, 9) == []
    alone = series[series["replication"] == 0]
    assert climb_warning(alone[alone["point"] == 3], 2_000, None, "x") is not None
    assert _points_warnings(alone, 9) == []


def _dip(depth: float) -> list[float]:
    """Level at 10 but for the first five samples, ``depth`` lower: from a 2 s warm-up
    mean_gpu_bytes is depth / 185 low (the samples at 3 and 4 s of the 37 after it)."""
    return [10.0 - depth] * 5 + [10.0] * 35


@pytest.mark.parametrize("replications, named", [(3, False), (6, True)])
def test_a_point_judged_among_many_is_named_only_past_all_their_intervals_at_once(
    replications, named
):
    """Point 3 of nine dips 9 to 14 bytes in its replications: 6.1 % low on average, its own
    95 % interval holds no 0 with three replications (± 3.4 %), yet nine points judged one by
    one would give one such interval by chance now and then. Bonferroni's widening (each
    point's interval at 1 - 0.05 / 9) holds 0 with three replications, and not with six."""
    depths = [14.0, 9.0, 11.0] * (replications // 3)
    series = pd.concat(
        [
            _series(_dip(depths[r]) if p == 3 else LEVEL, p, r)
            for p in range(9)
            for r in range(replications)
        ]
    )
    own = climb_warning(series[series["point"] == 3], 2_000, None, "point 3")
    assert own is not None and "; a warm-up of " in own and "or add replications" not in own
    biases = [-d / 185 for d in depths]
    half = t95(replications - 1) * statistics.stdev(biases) / math.sqrt(replications)
    assert f"is {-np.mean(biases) * 100:.1f} % (± {half * 100:.1f} %, 95 % over its" in own
    warnings = _points_warnings(series, 9)
    assert warnings == ([own] if named else [])


def test_points_climbing_alike_are_named_in_one_warning_with_their_ranges():
    """Four points of twenty start 4 to 7 bytes low, level from 4 s: from the 2 s warm-up
    each is 2.2 to 3.8 % low, the mean over the twenty 0.6 %. One warning names the four,
    with the ranges of their figures, as every check's many warnings alike are."""
    dips = {p: _dip(4 + p) for p in range(4)}
    held = {point: dips.get(point, LEVEL) for point in range(20)}
    series = pd.concat([_series(h, p, r) for p, h in held.items() for r in range(2)])
    (warning,) = _points_warnings(series, 20)
    assert warning.startswith(
        "warning: points 0, 1, 2, 3: the GPU memory held, averaged over the runs, settles at "
        "4 s (MSER-5), after the 2 s warm-up: mean_gpu_bytes is 2.2 to 3.8 % (± 0.0 %, 95 % "
    )
    assert "a warm-up of 4 s or more keeps it within 1 % " in warning


def _advice(overrides: list[str]) -> list[str]:
    points = sweep_points(parse_scenario({"study": {"name": "a"}}, overrides))
    return warmup_advice(points, len(points))


def test_before_a_run_the_closed_form_names_a_warm_up_too_short_and_the_least_that_is_not():
    """One-minute sessions (the default spread) over 3 min: from a 20 s warm-up they average
    13 % below their number; from 114 s on, within 1 %."""
    (warning,) = _advice(["study.duration=3min", "study.warmup=20s"])
    assert warning == (
        "warning: all points: from the 20 s warm-up to the run's end (180 s), the sessions at "
        "once average 13.0 % below their steady number (closed form), and the memory held with "
        "them; a warm-up of 114 s or more keeps that within 1 %"
    )
    assert _advice(["study.duration=3min", "study.warmup=114s"]) == []
    (short,) = _advice(["study.duration=2min", "study.warmup=60s"])
    assert short.endswith("no warm-up within this 120 s run does: lengthen study.duration")
    # fixed lengths climb in one length: 30 s sessions are level from 30 s on
    assert (
        _advice(
            [
                "study.duration=3min",
                "study.warmup=30s",
                "workload.sessions.duration_cv=0",
                "workload.sessions.duration=30s",
            ]
        )
        == []
    )
    swept = ["study.duration=3min", "sweep.grid={study.warmup: [20s, 2min]}"]
    (warning,) = _advice(swept)
    assert warning.startswith("warning: point 0: from the 20 s warm-up")


def test_a_least_warm_up_in_the_run_s_last_second_is_given_in_milliseconds():
    """51 s sessions in a 120 s run need 119.2 s: the advice said a warm-up of 120 s, the whole
    run, where ``auto`` chose 119,201 ms; both say that now."""
    timing = ["study.duration=120s", "workload.sessions.duration=51s"]
    (warning,) = _advice([*timing, "study.warmup=20s"])
    assert warning.endswith("a warm-up of 119.201 s or more keeps that within 1 %")
    (point,) = sweep_points(
        parse_scenario({"study": {"name": "a"}}, [*timing, "study.warmup=auto"])
    )
    assert point.scenario.study.warmup == 119_201
    assert _advice([*timing, "study.warmup=119.201s"]) == []


def _lengths(lengths: list[str]) -> str:
    return f"sweep.grid={{workload.sessions.duration: [{', '.join(lengths)}]}}"


def test_many_points_short_each_by_its_own_numbers_are_named_in_one_line():
    """A sweep of session lengths warned once a length (2,000 lengths: 1,969 lines); beyond
    three lines alike, one gives the ranges of what each point's own line would say."""
    lengths = ["20s", "40s", "1min", "90s", "2min", "150s"]
    timing = ["study.duration=3min", "study.warmup=20s"]
    own = [_advice([*timing, f"workload.sessions.duration={x}"])[0] for x in lengths]
    below = [re.search(r"average ([\d.]+) % below", line)[1] for line in own]
    assert [re.search(r"a warm-up of (\d+) s", line)[1] for line in own[:3]] == ["21", "60", "114"]
    assert all("no warm-up within this 180 s run does" in line for line in own[3:])
    run = "from the 20 s warm-up to the run's end (180 s), the sessions at once average"
    ranges = "(each point by its own numbers, in these ranges)"
    assert _advice([*timing, _lengths([*lengths, "30s"])]) == [
        f"warning: points 0, 1, 2, 6: {run} {below[0]} to {below[2]} % below their steady "
        "number (closed form), and the memory held with them; a warm-up of 21 to 114 s or more "
        f"keeps that within 1 % {ranges}",
        own[3].replace("all points", "point 3"),
        own[4].replace("all points", "point 4"),
        own[5].replace("all points", "point 5"),
    ]
    assert _advice([*timing, _lengths(lengths[:3])]) == [
        line.replace("all points", f"point {i}") for i, line in enumerate(own[:3])
    ]


@pytest.mark.plots
def test_a_vector_engine_study_is_judged_on_its_own_samples_after_its_run(tmp_path, capsys):
    """Its memory over time, as the DES's: where it settles, the climb past the warm-up, the
    plot; before the run, validate judges the sessions in closed form, as for the DES."""
    study = {
        "study": {"name": "v", "seed": 2, "replications": 2, "duration": "100s", "warmup": "0s"},
        "engine": "vector",
        "workload": {"sessions": {"rate_per_s": 2, "duration": "30s"}},
    }
    path = write_yaml(tmp_path, study)
    assert main(["run", str(path), "--out", str(tmp_path / "v"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "after the 0 s warm-up: mean_gpu_bytes is" in err and "(closed form)" not in err
    runs = pd.read_parquet(tmp_path / "v/runs.parquet")
    assert runs["memory_settled_s"].between(15, 60).all()
    assert (tmp_path / "v/plots/gpu_memory_over_time.png").is_file()
    assert not (tmp_path / "v/plots/link_load_over_time.png").exists()  # (no network)
    assert main(["validate", str(path)]) == 0
    assert "(closed form)" in capsys.readouterr().err


def _settled_s(faults: FaultConfig, steady_load: bool = True) -> float:
    config = ModelConfig(
        duration_ms=300_000,
        sample_interval_ms=500,
        workload=WorkloadConfig(session_rate_per_s=2.0, session_duration_ms=30_000),
        faults=faults,
    )
    result = simulate(config, np.random.SeedSequence(8))
    return des_metrics(result, 0.0, steady_load)["memory_settled_s"]


def test_a_des_run_judges_its_memory_before_its_first_fault_and_only_under_a_steady_load():
    """Sessions of 30 s: the memory climbs for about that long. A restart at 15 s leaves
    only the climb's start, 30 samples, cut at their half (the kept memory from 7 s: the sample
    at 7.5 s is the mean since 7 s); a budget cut at 200 s (with no
    budget to cut: the memory does not change) leaves the climb and what follows. A run
    driven by a trace has no steady load to settle into."""
    late = FaultConfig(memory_pressure_at_ms=200_000)
    assert _settled_s(FaultConfig(restart_at_ms=15_000, memory_pressure_at_ms=200_000)) == 7.0
    assert 20 <= _settled_s(late) <= 100
    assert math.isnan(_settled_s(late, steady_load=False))


def test_a_run_driven_by_a_reference_log_reports_no_settling(tmp_path):
    rows = [(100 * i, f"o{i % 7}", 4096) for i in range(400)]
    pd.DataFrame(rows, columns=["time_ms", "object", "size_bytes"]).to_csv(tmp_path / "log.csv")
    raw = {
        "study": {"name": "log", "duration": "40s", "replications": 1},
        "workload": {"trace": {"path": str(tmp_path / "log.csv")}},
        "host_policy": {"ttl_hint": "10s"},
    }
    runs = nnrpsim.run(parse_scenario(raw), out=tmp_path / "out", jobs=1, progress=False).runs
    assert runs["error"].isna().all() and runs["memory_settled_s"].isna().all()


def test_run_warns_of_a_warm_up_shorter_than_the_climb_and_exits_0(tmp_path, capsys):
    study = {
        "study": {"name": "w", "seed": 2, "replications": 2, "duration": "100s", "warmup": "0s"},
        "workload": {"sessions": {"rate_per_s": 2, "duration": "30s"}},
    }
    path = write_yaml(tmp_path, study)
    assert main(["run", str(path), "--out", str(tmp_path / "short"), "--jobs", "1"]) == 0
    err = capsys.readouterr().err
    assert "after the 0 s warm-up: mean_gpu_bytes is" in err
    assert "% over its 2 replications) below its settled level" in err
    again = nnrpsim.run(path, out=tmp_path / "short", resume=True, progress=False)
    assert again.warnings == err.splitlines()  # the Python API keeps what the command prints
    runs = pd.read_parquet(tmp_path / "short/runs.parquet")
    assert runs["memory_settled_s"].between(15, 60).all()
    warm = ["--set", "study.warmup=60s"]
    assert main(["run", str(path), "--out", str(tmp_path / "warm"), "--jobs", "1", *warm]) == 0
    assert "MSER-5" not in capsys.readouterr().err


def test_the_notebook_api_gives_the_same_lines_as_warnings():
    """``nnrpsim.sweep`` writes nothing; what ``run`` would print comes as StudyWarnings:
    the check on the runs' samples, on either engine."""
    raw = {
        "study": {"name": "n", "replications": 2, "duration": "100s"},
        "workload": {"sessions": {"rate_per_s": 2, "duration": "30s"}},
    }
    with pytest.warns(nnrpsim.StudyWarning) as told:
        summary = nnrpsim.sweep(raw)
    assert len(summary) == 1
    (line,) = [str(w.message) for w in told]
    assert line.startswith("all points: the GPU memory held, averaged over the runs, ")
    with pytest.warns(nnrpsim.StudyWarning, match="^all points: the GPU memory held, averaged"):
        nnrpsim.sweep({**raw, "engine": "vector"})
