"""A link books each frame when it is sent, for when it is ready to leave: frames never share
the wire, none leaves before it is ready or idles the wire without cause, a booking never moves
another, and what is ready at once leaves first come first served; a lost attempt costs a
timeout and is sent again."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from nnrpsim.model import LinkConfig
from nnrpsim.model.link import Link

LATENCY_MS = 0.5
BYTES_PER_MS = 1_000.0


def _link() -> Link:
    config = LinkConfig(latency_ms=LATENCY_MS, bandwidth_bytes_per_ms=BYTES_PER_MS)
    return Link(config, np.random.default_rng(0))


def _book(link: Link, bookings) -> list[tuple[float, float, float]]:
    """(ready, start, end) of each booking: bookings are (now, bytes, after), now never falling."""
    booked = []
    for now, n_bytes, after in bookings:
        serialise = n_bytes / BYTES_PER_MS
        end = now + link.transmit(now, n_bytes, after) - LATENCY_MS
        booked.append((now + after, end - serialise, end))
    return booked


def _at_times(steps: list[tuple[float, int, float]]) -> list[tuple[float, int, float]]:
    """Gaps since the previous booking -> times."""
    times = np.cumsum([gap for gap, _, _ in steps]).tolist()
    return [(t, n_bytes, after) for t, (_, n_bytes, after) in zip(times, steps, strict=True)]


bookings = st.lists(
    st.tuples(
        st.floats(0, 5, allow_nan=False),
        st.integers(1, 4_000),
        st.one_of(st.just(0.0), st.floats(0, 10, allow_nan=False)),
    ),
    min_size=1,
    max_size=40,
).map(_at_times)


@given(bookings)
def test_frames_never_share_the_wire_nor_leave_before_they_are_ready(plan):
    booked = _book(_link(), plan)
    eps = 1e-9
    for ready, start, _ in booked:
        assert start >= ready - eps
    spans = sorted((start, end) for _, start, end in booked)
    for (_, first_end), (second_start, _) in itertools.pairwise(spans):
        assert second_start >= first_end - eps
    ends = [end for _, _, end in booked]
    for ready, start, _ in booked:  # a frame waits only for another frame on the wire
        assert start == pytest.approx(ready) or any(start == pytest.approx(e) for e in ends)


@given(bookings)
def test_what_is_ready_at_once_leaves_first_come_first_served(plan):
    booked = _book(_link(), [(now, n_bytes, 0.0) for now, n_bytes, _ in plan])
    starts = [start for _, start, _ in booked]
    assert starts == sorted(starts)


def test_a_reply_ready_sooner_uses_the_idle_wire_before_a_later_one():
    link = _link()
    # A reply booked at 0 for 10 ms later, then one for 2 ms later: it leaves at 2, not 11.
    (_, slow_start, _), (_, fast_start, _) = _book(link, [(0.0, 1_000, 10.0), (0.0, 1_000, 2.0)])
    assert (slow_start, fast_start) == (10.0, 2.0)
    # One that no longer fits before 10 goes after the last booking.
    ((_, early_start, _), (_, late_start, _)) = _book(link, [(5.0, 1_000, 0.0), (9.5, 1_000, 0.0)])
    assert (early_start, late_start) == (5.0, 11.0)


def test_each_lost_attempt_costs_a_retransmission_timeout_and_another_serialisation():
    """A frame of 1,000 bytes at 1,000 bytes a ms over a link that loses half its attempts:
    delivered after the latency, a serialisation per attempt and a timeout per lost one, the
    attempts drawn from the link's own generator (the same seed, the same draw)."""
    config = LinkConfig(
        latency_ms=LATENCY_MS,
        bandwidth_bytes_per_ms=BYTES_PER_MS,
        loss=0.5,
        retransmit_timeout_ms=20.0,
    )
    drawn = []
    for seed in range(8):
        attempts = int(np.random.default_rng(seed).geometric(0.5))
        link = Link(config, np.random.default_rng(seed))
        delay = link.transmit(0.0, 1_000)
        assert delay == pytest.approx(LATENCY_MS + attempts * 1.0 + (attempts - 1) * 20.0)
        assert (link.retransmissions, link.bytes_resent) == (attempts - 1, 1_000 * (attempts - 1))
        assert (link.bytes_sent, link.busy_until) == (1_000 * attempts, attempts * 1.0)
        drawn.append(attempts)
    assert min(drawn) == 1 and max(drawn) >= 3  # (a frame delivered at once, and lost twice)
