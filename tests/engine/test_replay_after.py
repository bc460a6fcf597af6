"""A replay counted from a cut (a warm-up) counts what the whole replay counts less what the
window before the cut counts alone: a replay is causal. The sequential paths count it in one
pass, as they pass the cut; this checks them against the two replays, on every path, with
every host rule, and cuts on a reference's millisecond, between references and after the last."""

from __future__ import annotations

import numpy as np
import pytest

from nnrpsim.engine.replay import COUNTS, replay, replay_after
from nnrpsim.engine.stream import ReferenceStream

PER_OBJECT = ("object_hits", "object_rejected", "object_inlined")
PATHS = [  # (capacity, eviction, entry limit, renewal): ordered, on the table, unlimited
    (700, "lru", 0, "touch"),
    (700, "fifo", 0, "touch"),
    (700, "ttl", 0, "touch"),
    (900, "size", 0, "extend"),
    (1500, "none", 0, "touch"),
    (None, "lru", 8, "touch"),
    (None, "lru", 0, "touch"),
]


def _stream(rng: np.random.Generator, frames: bool) -> ReferenceStream:
    """References to 40 objects, some made along, some at one millisecond (one operation
    each, with ``frames``), and content changes, some on a reference's millisecond."""
    n, n_objects = 1500, 40
    times = np.cumsum(rng.integers(0, 12, n))
    objects = rng.integers(0, n_objects, n)
    along = rng.random(n) < 0.1
    objects[along] %= 4
    changes = rng.integers(0, times[-1], 60)
    changes[:8] = times[rng.integers(0, n, 8)]
    return ReferenceStream(
        times,
        objects,
        rng.integers(1, 100, n_objects)[objects],
        np.sort(changes),
        rng.integers(0, n_objects, len(changes)),
        end_ms=int(times[-1]) + 400,
        operation=np.unique(times, return_inverse=True)[1] if frames else None,
        along=along,
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize(("capacity", "eviction", "entries", "renewal"), PATHS)
def test_a_cut_counts_the_whole_replay_less_the_window_before_it(
    seed, capacity, eviction, entries, renewal
):
    rng = np.random.default_rng(seed)
    stream = _stream(rng, frames=seed % 2 == 0)
    kwargs = {
        "per_object": True,
        "renew_margin": float(rng.choice([0.3, 1.0])),
        "inline_after_invalidate": bool(seed % 3),
        "refused_backoff_ms": int(rng.choice([0, 40])),
        "max_cache_entries": entries,
        "renewal": renewal,
    }
    args = ([30, 400], "reset" if seed < 2 else "non_reset", capacity, eviction)
    whole = replay(stream, *args, **kwargs)
    gaps = np.flatnonzero(np.diff(stream.time_ms) >= 2)
    between = int(stream.time_ms[gaps[len(gaps) // 2]]) + 1  # (a millisecond with none)
    for cut in (int(stream.time_ms[len(stream) // 3]), between, int(stream.time_ms[-1]) + 50):
        after = replay_after(stream, cut, *args, **kwargs)
        early = replay(stream.before(cut), *args, **kwargs)
        for name in COUNTS:
            assert (getattr(after, name) == getattr(whole, name) - getattr(early, name)).all(), name
        named = early.object_hits.shape[1]  # (the window before may name fewer objects)
        for name in PER_OBJECT:
            less = getattr(whole, name).copy()
            less[:, :named] -= getattr(early, name)
            assert (getattr(after, name) == less).all(), name
        assert after.references == whole.references - early.references
        np.testing.assert_allclose(
            after.mean_live_bytes * (stream.end_ms - cut)
            + early.mean_live_bytes * (cut - stream.start_ms),
            whole.mean_live_bytes * stream.duration_ms,
        )
        assert (after.peak_live_bytes == whole.peak_live_bytes).all()
    assert whole.hits.sum() > 0 and whole.installs.sum() > 0
