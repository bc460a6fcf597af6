"""The closed-form means of a synthetic workload match what its drawn plans hold."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnrpsim.model import WorkloadConfig
from nnrpsim.model.workload import OBJECT_SIZE_RANGE, _durations, synthetic_plan
from nnrpsim.model.workload_means import (
    clipped_lognormal_mean,
    describe_means,
    least_warmup_ms,
    measured_ramp,
    ramp_time_ms,
    sessions_ramp,
    sessions_shorter_share,
    workload_means,
)
from nnrpsim.protocol import CacheObjectKind, inline_object_bytes

PROMPT, TOOL, TABLE, CAMERA = (
    CacheObjectKind.PROMPT_SEGMENT,
    CacheObjectKind.TOOL_SCHEMA,
    CacheObjectKind.TENSOR_SECTION_TABLE,
    CacheObjectKind.CAMERA_BLOCK,
)
HOSTS, DURATION_MS = 2, 3_600_000.0
WINDOW = (600_000.0, 3_000_000.0)  # past the ramp, before sessions are cut at the end


def test_means_match_a_drawn_plan():
    config = WorkloadConfig(
        session_rate_per_s=0.5,
        operation_rate_per_s=2.0,
        namespaces=10,
        shared_objects_per_namespace=200,
        shared_refs_per_operation=3,
        private_objects_per_session=4,
        private_refs_per_operation=3,
        shared_kinds=((PROMPT, 1.0), (TOOL, 2.0)),
        private_kinds=((PROMPT, 3.0), (TABLE, 1.0)),
        kind_sizes=((TOOL, 2_048, 0.5), (TABLE, 256 << 10, 0.5)),
    )
    plan = synthetic_plan(config, HOSTS, DURATION_MS, np.random.SeedSequence(17))
    means = workload_means(config, HOSTS * config.session_rate_per_s)

    lo, hi = WINDOW
    samples = np.linspace(lo, hi, 500)
    starts = np.array([s.start_ms for s in plan.sessions])
    ends = np.array([s.end_ms for s in plan.sessions])
    running = (starts[:, None] <= samples) & (samples < ends[:, None])
    assert running.sum(axis=0).mean() == pytest.approx(means.concurrent_sessions, rel=0.1)

    n_shared = config.namespaces * config.shared_objects_per_namespace
    assert plan.sizes[:n_shared].sum() == pytest.approx(means.shared_bytes, rel=0.1)
    private = plan.sizes[n_shared:].reshape(len(plan.sessions), -1).sum(axis=1)
    in_use = (running * private[:, None]).sum(axis=0).mean()
    assert in_use == pytest.approx(means.private_bytes_in_use, rel=0.1)

    operations = [refs for s in plan.sessions for t, refs in s.operations if lo <= t < hi]
    span_s = (hi - lo) / 1000
    assert len(operations) / span_s == pytest.approx(means.operations_per_s, rel=0.1)
    per_operation = np.mean([len(refs) for refs in operations])
    assert per_operation == pytest.approx(means.references_per_operation, rel=0.03)
    inline = sum(int(inline_object_bytes(plan.sizes[refs]).sum()) for refs in operations)
    assert inline / span_s == pytest.approx(means.inline_bytes_per_s, rel=0.1)


@pytest.mark.parametrize(
    ("private_refs", "shared_kinds", "exact"),
    [
        (1_000_000, ((PROMPT, 1.0),), True),  # each request all four camera blocks: 4 frames
        (3, ((PROMPT, 1.0), (CAMERA, 1.0)), False),  # shared camera blocks and tables drawn
        (3, ((PROMPT, 1.0),), False),
    ],
)
def test_a_requests_frames_are_at_least_the_bound(private_refs, shared_kinds, exact):
    """A request is a frame for each object of the slotted kind it names most (one at the
    least): its mean is at least the mean of the kind it names most on average."""
    config = WorkloadConfig(
        session_rate_per_s=0.2,
        namespaces=2,
        shared_objects_per_namespace=40,
        shared_refs_per_operation=4,
        private_objects_per_session=4 if exact else 8,
        private_refs_per_operation=private_refs,
        shared_kinds=shared_kinds,
        private_kinds=((CAMERA, 1.0),) if exact else ((PROMPT, 1.0), (TABLE, 1.0)),
    )
    plan = synthetic_plan(config, 1, 600_000.0, np.random.SeedSequence(3))
    frames = [at for s in plan.sessions for at, _ in s.operations]
    requests = {(s.session_id, at) for s in plan.sessions for at, _ in s.operations}
    bound = workload_means(config, config.session_rate_per_s).frames_per_operation
    if exact:
        assert bound == 4 and len(frames) == 4 * len(requests)
    else:
        assert 1 < bound <= len(frames) / len(requests) < 1.5 * bound


@pytest.mark.parametrize(
    ("mu", "sigma", "low", "high"),
    [
        (np.log(16_384), 1.0, *OBJECT_SIZE_RANGE),  # the cut far out: the lognormal's mean
        (np.log(16_384), 6.0, *OBJECT_SIZE_RANGE),  # a tenth of the sizes cut at 4 GiB
        (np.log(16_384), 12.0, *OBJECT_SIZE_RANGE),
        (np.log(16_384), 45.0, *OBJECT_SIZE_RANGE),  # exp(sigma**2 / 2) overflows a float
        (0.0, 2.0, 0.0, 3.0),  # no lower cut: a sessions' ramp
        (np.log(100.0), 0.5, 80.0, 120.0),  # most of the mass cut, on both sides
    ],
)
def test_the_cut_lognormal_mean_is_the_mean_of_cut_draws(mu, sigma, low, high):
    """Object sizes are drawn cut to 1 B..4 GiB: a wide lognormal's mean is past the cut (and
    past a float's range), the mean of what is drawn is not. The oracle integrates the cut
    size over the standard normal numerically; and a million draws come within their noise."""
    z = np.linspace(-60, 60, 4_000_001)
    cut = np.clip(np.exp(np.minimum(mu + sigma * z, 700)), low, high)
    weighted = cut * np.exp(-z * z / 2) / np.sqrt(2 * np.pi)
    integral = ((weighted[1:] + weighted[:-1]) / 2 * np.diff(z)).sum()  # (the trapezoid rule)
    mean = clipped_lognormal_mean(mu, sigma, low, high)
    assert mean == pytest.approx(integral, rel=1e-7)
    draws = np.clip(np.random.default_rng(5).lognormal(mu, sigma, 1_000_000), low, high)
    assert abs(draws.mean() - mean) < 4 * draws.std() / np.sqrt(len(draws))


def test_the_cut_lognormal_mean_is_continuous_where_its_tail_changes_formula():
    """Below x = -30 the tail takes Phi's asymptotic series: both sides of the switch agree."""
    mu, high = np.log(16_384), float(OBJECT_SIZE_RANGE[1])
    z_at = -30 + 1e-9  # x = z - sigma with z = (log high - mu) / sigma: solve for sigma
    gap = np.log(high) - mu
    sigma = (-z_at + np.sqrt(z_at * z_at + 4 * gap)) / 2
    near = [clipped_lognormal_mean(mu, s, *OBJECT_SIZE_RANGE) for s in (sigma - 1e-7, sigma + 1e-7)]
    assert near[0] == pytest.approx(near[1], rel=1e-6)


@given(
    mu=st.floats(0, 22),
    sigma=st.one_of(st.floats(0, 1e3), st.floats(1e3, 1e30)),
)
def test_the_cut_lognormal_mean_stays_within_its_cut(mu, sigma):
    """Whatever the shape: a finite mean within the cut, which an endless spread splits
    between its two ends."""
    low, high = OBJECT_SIZE_RANGE
    mean = clipped_lognormal_mean(mu, sigma, low, high)
    assert low <= mean <= high
    if sigma > 1e6:
        assert mean == pytest.approx((low + high) / 2, rel=1e-3)


def test_the_description_names_every_mean_with_units():
    line = describe_means(workload_means(WorkloadConfig(), 2.0))
    # 2 sessions/s x 60 s; 120 x 1 operation/s; 50 shared objects x 4 namespaces of 16 KiB
    # median (27 kB mean)
    # (one-minute sessions, lognormal of cv 0.5: within 1 % of their level after 141 s)
    assert line.startswith(
        "~120 sessions at once (within 1 % of that 141 s after the start), 120.0 operations/s"
    )
    assert "shared objects 5.4 MB" in line and "/s" in line.split(";")[-1]
    # requests of four camera blocks each: four frames
    cameras = WorkloadConfig(
        private_objects_per_session=4,
        private_refs_per_operation=1_000_000,
        private_kinds=((CAMERA, 1.0),),
    )
    assert "120.0 operations/s (requests of 4.00 frames or more on average), " in describe_means(
        workload_means(cameras, 2.0)
    )
    # An endless spread: each size 1 B or 4 GiB, half and half (the uncut mean overflowed)
    wide = describe_means(workload_means(WorkloadConfig(object_size_sigma=1e23), 2.0))
    assert "shared objects 429.5 GB" in wide  # 200 objects x (2^32 / 2) B
    # A session every 1,000 s: 0.06 at once, 0.03 operations a second (they read ~0 and 0.0)
    rare = describe_means(workload_means(WorkloadConfig(), 0.001))
    assert rare.startswith(
        "~0.06 sessions at once (within 1 % of that 141 s after the start), 0.06 operations/s, 0."
    )
    # the level time of 10 ms sessions (it read 0 s), and of lengths of the widest spread a
    # scenario takes (it read in 178 digits)
    brief = describe_means(workload_means(WorkloadConfig(session_duration_ms=10.0), 2.0))
    assert "(within 1 % of that 0.023 s after the start)" in brief
    spread = describe_means(workload_means(WorkloadConfig(session_duration_cv=1e150), 2.0))
    assert "(within 1 % of that 8.24e+177 s after the start)" in spread
    # sessions a typo made 1e300 s long: their bytes in use in EB, not 288 digits of them
    endless = describe_means(workload_means(WorkloadConfig(session_duration_ms=1e303), 2.0))
    assert (
        "~2e+300 sessions at once" in endless and "private objects in use 2.16e+287 EB" in endless
    )


@pytest.mark.parametrize("cv", [0.25, 0.5, 1.0])
def test_the_sessions_ramp_is_the_mean_of_lengths_cut_at_t(cv):
    """E[min(D, t)] / E[D] against a million lognormal lengths drawn as the workload draws them."""
    mean = 60_000.0
    config = WorkloadConfig(session_duration_ms=mean, session_duration_cv=cv)
    lengths = _durations(np.random.default_rng(np.random.SeedSequence(5)), 1_000_000, config)
    for t in (10_000.0, 60_000.0, 150_000.0, 400_000.0):
        drawn = np.minimum(lengths, t).mean() / lengths.mean()
        assert sessions_ramp(t, mean, cv) == pytest.approx(drawn, abs=0.003)


@pytest.mark.parametrize("cv", [0, 0.25, 0.5, 2.0])
def test_the_share_of_sessions_shorter_than_a_length_is_that_of_drawn_lengths(cv):
    mean = 60_000.0
    config = WorkloadConfig(session_duration_ms=mean, session_duration_cv=cv)
    lengths = _durations(np.random.default_rng(np.random.SeedSequence(6)), 1_000_000, config)
    for length in (0.0, 10_000.0, 59_999.0, 60_001.0, 150_000.0):
        drawn = (lengths < length).mean()
        assert sessions_shorter_share(length, mean, cv) == pytest.approx(drawn, abs=0.002)


def test_fixed_lengths_ramp_linearly_and_the_level_time_inverts_the_ramp():
    assert sessions_ramp(30_000, 60_000, 0) == 0.5 and sessions_ramp(90_000, 60_000, 0) == 1.0
    assert ramp_time_ms(60_000, 0) == pytest.approx(59_400)
    for cv in (0.1, 0.5, 2.0):
        level_at = ramp_time_ms(60_000, cv)
        assert sessions_ramp(level_at, 60_000, cv) == pytest.approx(0.99, abs=1e-9)
        assert sessions_ramp(level_at * 0.99, 60_000, cv) < 0.99
    # the default workload's one-minute sessions: 81 % after one length, 99 % after 2.35
    assert sessions_ramp(60_000, 60_000, 0.5) == pytest.approx(0.813, abs=0.001)
    assert ramp_time_ms(60_000, 0.5) == pytest.approx(140_700, rel=0.001)


def test_a_drawn_plan_climbs_to_its_sessions_at_once_as_the_ramp_says():
    """Sessions running t after the start, over 40 plans of 2 sessions a second, against
    rate x E[min(D, t)]."""
    config = WorkloadConfig(
        session_rate_per_s=2.0, shared_objects_per_namespace=1, private_objects_per_session=1
    )
    times = np.array([15_000.0, 60_000.0, 120_000.0])
    running = np.zeros(len(times))
    for seed in np.random.SeedSequence(9).spawn(40):
        plan = synthetic_plan(config, 1, 200_000.0, seed)
        starts = np.array([s.start_ms for s in plan.sessions])
        ends = np.array([s.end_ms for s in plan.sessions])
        running += ((starts[:, None] <= times) & (times < ends[:, None])).sum(axis=0) / 40
    steady = workload_means(config, 2.0).concurrent_sessions
    expected = [steady * sessions_ramp(t, 60_000, 0.5) for t in times]
    assert running == pytest.approx(expected, rel=0.05)


def test_the_measured_average_of_the_ramp_and_the_least_warm_up():
    """Fixed one-minute lengths over two minutes: the ramp climbs linearly for a minute, then
    stays, so it averages 3/4 from the start; from w on (in seconds),
    ((60 - w)(1 + w/60)/2 + 60) / (120 - w), which the least warm-up makes 0.99."""
    assert measured_ramp(0, 120_000, 60_000, 0) == pytest.approx(0.75)
    assert measured_ramp(60_000, 120_000, 60_000, 0) == 1.0
    least = least_warmup_ms(120_000, 60_000, 0)
    w = least / 1000
    assert ((60 - w) * (1 + w / 60) / 2 + 60) / (120 - w) == pytest.approx(0.99, abs=1e-6)
    assert measured_ramp(least * 0.98, 120_000, 60_000, 0) < 0.99
    assert least_warmup_ms(60_000, 60_000, 0.5) is None  # never level within one length


@pytest.mark.parametrize("cv", [0, 0.25, 0.5, 2.0, 1e5])
def test_the_measured_average_is_the_ramp_integrated_over_the_measured_time(cv):
    """Against the trapezoid rule over 40,000 steps of the ramp (to about 1e-9 where it bends
    most, at the start of a run of lengths near fixed): the closed form is exact, where 512
    steps were 3e-6 off."""
    mean = 60_000.0
    for warmup, end in (
        (0.0, 120_000.0),
        (20_000.0, 120_000.0),
        (119_000.0, 120_000.0),
        (0.0, 30_000.0),
        (100_000.0, 1_000_000.0),
    ):
        times = np.linspace(warmup, end, 40_001)
        ramp = np.array([sessions_ramp(float(t), mean, cv) for t in times])
        integrated = float((ramp[:-1] + ramp[1:]).sum() / 2 / (len(times) - 1))
        assert measured_ramp(warmup, end, mean, cv) == pytest.approx(integrated, abs=1e-8)


@given(
    st.floats(1.0, 1e7),
    st.one_of(st.floats(0.0, 3.0), st.floats(3.0, 1e100)),
    st.floats(0.0, 1e8),
    st.floats(1.0, 1e8),
    st.floats(0.0, 0.99),
)
def test_the_measured_average_lies_in_0_1_and_rises_with_the_warm_up(mean, cv, w, span, later):
    """A later warm-up sees only a later, so higher, part of the climb: up to rounding, as
    the average is a difference of two integrals from the start over the span, about 1e-14
    of ``end / span`` (warm-ups and durations are in whole milliseconds, or near them)."""
    end, start = w + span, w + later * span
    earlier, latter = measured_ramp(w, end, mean, cv), measured_ramp(start, end, mean, cv)
    assert 0.0 <= earlier <= latter + 1e-13 * end / (end - start) and latter <= 1.0


@given(st.floats(1.0, 1e7), st.floats(0.0, 3.0), st.floats(0.0, 1e8), st.floats(0.0, 1e8))
def test_the_ramp_rises_from_0_to_1(mean, cv, t, later):
    """Sessions at once only accumulate from an empty start, and never pass their number."""
    low, high = sessions_ramp(t, mean, cv), sessions_ramp(t + later, mean, cv)
    assert 0.0 <= low <= high + 1e-12 and high <= 1.0 + 1e-12
