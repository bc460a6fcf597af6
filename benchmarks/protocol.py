"""Protocol group: batch decode and validation of Object Reference Blocks."""

from __future__ import annotations

import struct

import numpy as np

from benchmarks.timing import best_of
from nnrpsim.protocol import OBJECT_REFERENCE, decode_batch

N_BLOCKS = 1_000_000
N_LOOP = 100_000  # the per-block loop is timed on a slice; its rate is per block anyway
ORB = struct.Struct("<HHIQQ")


def _orbs(n: int, rng: np.random.Generator) -> bytes:
    records = np.zeros(n, dtype=OBJECT_REFERENCE.dtype)
    records["object_kind"] = rng.integers(1, 10, n)
    records["cache_namespace"] = rng.integers(0, 2**32, n, dtype=np.uint64)
    records["cache_key_hi"] = rng.integers(0, 2**64, n, dtype=np.uint64)
    records["cache_key_lo"] = rng.integers(0, 2**64, n, dtype=np.uint64)
    return records.tobytes()


def _struct_loop(raw: bytes) -> int:
    """The baseline: what a plain Python decoder does, one block at a time, same rules."""
    count = 0
    for offset in range(0, len(raw), ORB.size):
        kind, ref_flags, _ns, _hi, _lo = ORB.unpack_from(raw, offset)
        if not 1 <= kind <= 9 or ref_flags != 0:
            raise ValueError("invalid block")
        count += 1
    return count


def run() -> dict[str, float]:
    raw = _orbs(N_BLOCKS, np.random.default_rng(1))
    batch_s = best_of(lambda: decode_batch(OBJECT_REFERENCE, raw), repeat=20)  # ~1 ms each
    loop_s = best_of(lambda: _struct_loop(raw[: N_LOOP * ORB.size]), repeat=5)
    per_s = N_BLOCKS / batch_s
    return {
        "protocol.orb_decode_per_s": per_s,
        "protocol.orb_decode_speedup_vs_struct": per_s / (N_LOOP / loop_s),
    }
