"""libcachesim (GPL, test-only) as the eviction oracle: same LRU and FIFO hits and evictions.

Its Python wheel ignores TTLs, so leases here never expire: this checks eviction alone.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from nnrpsim.engine.replay import replay
from nnrpsim.protocol import U32_MAX
from tests.engine.streams import zipf_stream

lcs = pytest.importorskip("libcachesim")

ORACLE_GENERAL = np.dtype([("time", "<u4"), ("obj", "<u8"), ("size", "<u4"), ("next", "<i8")])
N_REQUESTS = 1_000_000


def _libcachesim_hits_and_evictions(stream, capacity: int, policy: str, path) -> tuple[int, int]:
    """Its hits, and its evictions: every miss inserts (no object here is larger than the
    cache), and what it holds at the end is what was inserted and not evicted."""
    records = np.zeros(len(stream), dtype=ORACLE_GENERAL)
    records["time"] = stream.time_ms // 1000
    records["obj"] = stream.object_id + 1
    records["size"] = stream.size
    records["next"] = -1
    records.tofile(path)
    reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
    cache = {"lru": lcs.LRU, "fifo": lcs.FIFO}[policy](capacity)
    miss_ratio, _ = cache.process_trace(reader)
    misses = round(miss_ratio * len(stream))
    return len(stream) - misses, misses - cache.get_n_obj()


@pytest.mark.parametrize(
    ("name", "alpha", "n_objects", "sizes"),
    [
        ("equal-sizes", 0.8, 10_000, "equal"),
        ("mixed-sizes", 0.9, 20_000, "mixed"),
        ("mixed-heavy-tail", 1.1, 50_000, "lognormal"),
    ],
)
def test_lru_and_fifo_hit_ratios_match_libcachesim(tmp_path, name, alpha, n_objects, sizes):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    object_sizes = {
        "equal": np.full(n_objects, 4096),
        "mixed": rng.integers(512, 65_536, n_objects),
        "lognormal": np.clip(rng.lognormal(9, 1.2, n_objects), 64, 1 << 20).astype(np.int64),
    }[sizes]
    stream = zipf_stream(rng, n_objects, N_REQUESTS, alpha, object_sizes)
    capacity = int(object_sizes.sum() * 0.05)
    for policy in ("lru", "fifo"):
        ours = replay(stream, [U32_MAX], "non_reset", capacity_bytes=capacity, policy=policy)
        theirs = _libcachesim_hits_and_evictions(
            stream, capacity, policy, tmp_path / f"{policy}.bin"
        )
        assert (int(ours.hits[0]), int(ours.evictions[0])) == theirs, policy
        assert 0.05 < ours.hit_rate[0] < 0.95
