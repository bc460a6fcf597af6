"""Engine group: lease-table operations at 10k/100k/1M leases, replay throughput, LRU vs
libcachesim, and capacity replays on the table under each sorted eviction policy."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.timing import best_of, interpreted
from nnrpsim import BUILD_STATUS
from nnrpsim.engine import CacheLimits, LeaseTable, ObjectCatalog
from nnrpsim.engine.replay import replay, replay_after
from nnrpsim.engine.replay.on_table import replay_on_table
from nnrpsim.engine.stream import ReferenceStream
from nnrpsim.protocol import U32_MAX, InvalidateScope, OwnerScope

SIZES = {"10k": 10_000, "100k": 100_000, "1m": 1_000_000}
N_REFS = 1_000_000
N_TTLS = 32
TABLE_REPLAY_SEED = 2027


def _catalog(n: int) -> ObjectCatalog:
    ids = np.arange(n, dtype=np.uint64)
    return ObjectCatalog.from_arrays(ids % 100, ids, ids, np.full(n, 7))


def _filled(catalog: ObjectCatalog, n: int, rng: np.random.Generator) -> LeaseTable:
    table = LeaseTable(catalog, CacheLimits(), initial_capacity=n)
    table.install(np.arange(n), 0, rng.integers(1_000, 100_000, n), 4096)
    return table


def _table_figures(label: str, n: int, rng: np.random.Generator) -> dict[str, float]:
    catalog = _catalog(n)
    start = time.perf_counter()
    table = _filled(catalog, n, rng)
    install_s = time.perf_counter() - start
    refs = rng.integers(0, n, N_REFS)
    lookup_s = best_of(lambda: table.lookup(refs, 500), repeat=3)

    def timed(operation) -> float:
        best = float("inf")
        for _ in range(3):
            fresh = _filled(catalog, n, rng)
            start = time.perf_counter()
            operation(fresh)
            best = min(best, time.perf_counter() - start)
        return best * 1e3

    return {
        f"engine.install_{label}_per_s": n / install_s,
        f"engine.lookup_{label}_refs_per_s": N_REFS / lookup_s,
        f"engine.expire_{label}_ms": timed(lambda t: t.expire(10_000)),  # about 9% expire
        f"engine.invalidate_namespace_{label}_ms": timed(
            lambda t: t.invalidate(InvalidateScope.NAMESPACE, 500, 42)  # 1% of the leases
        ),
        "engine.bytes_per_lease": float(table.bytes_per_slot),
    }


def _zipf_stream(rng: np.random.Generator, n_objects: int, alpha: float) -> ReferenceStream:
    p = 1.0 / np.arange(1, n_objects + 1) ** alpha
    objs = rng.choice(n_objects, size=N_REFS, p=p / p.sum())
    sizes = rng.integers(512, 65_536, n_objects)
    times = np.cumsum(rng.exponential(10.0, N_REFS)).astype(np.int64)  # 100 refs/s
    return ReferenceStream(times, objs, sizes[objs])


def _five_percent_of_bytes(stream: ReferenceStream) -> int:
    """A byte budget of 5 % of the distinct objects' mean bytes (33,000 each): a capacity
    study's heavy pressure, where nearly every miss evicts."""
    return int(np.unique(stream.object_id).size * 33_000 * 0.05)


def _libcachesim_lru_s(stream: ReferenceStream, capacity: int) -> float | None:
    try:
        import libcachesim as lcs  # GPL: a benchmark baseline only, never imported by nnrpsim
    except ImportError:
        return None
    records = np.zeros(len(stream), dtype=[("t", "<u4"), ("o", "<u8"), ("s", "<u4"), ("n", "<i8")])
    records["t"], records["o"], records["s"], records["n"] = (
        stream.time_ms // 1000,
        stream.object_id + 1,
        stream.size,
        -1,
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "trace.oracleGeneral"
        records.tofile(path)
        reader = lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE)
        return best_of(lambda: lcs.LRU(capacity).process_trace(reader), repeat=3)


def _reference_model_speedup(rng: np.random.Generator) -> float:
    from tests.engine.reference_model import ReferenceModel

    n, n_refs = 10_000, 100_000
    catalog = _catalog(n)
    identities = list(
        zip(
            *(
                c.tolist()
                for c in (catalog.namespace, catalog.key_hi, catalog.key_lo, catalog.kind)
            ),
            strict=True,
        )
    )
    ttls, refs = rng.integers(1_000, 100_000, n), rng.integers(0, n, n_refs)

    def with_table():
        table = LeaseTable(catalog, CacheLimits())
        table.install(np.arange(n), 0, ttls, 4096)
        table.lookup(refs, 500)

    def with_model():
        model = ReferenceModel(identities, CacheLimits())
        for obj in range(n):
            model.install(obj, 0, int(ttls[obj]), 4096)
        for obj in refs.tolist():
            model.lookup(obj, 500)

    return best_of(with_model, repeat=1) / best_of(with_table, repeat=3)


def _lru_figures(rng: np.random.Generator) -> dict[str, float]:
    stream = _zipf_stream(rng, 100_000, 0.9)
    capacity = _five_percent_of_bytes(stream)
    lru_s = best_of(
        lambda: replay(stream, [U32_MAX], "non_reset", capacity_bytes=capacity), repeat=3
    )
    # counted from half-way (a warm-up): one pass that notes its counts at the cut, not two
    half = int(stream.time_ms[len(stream) // 2])
    after_s = best_of(
        lambda: replay_after(stream, half, [U32_MAX], "non_reset", capacity), repeat=3
    )
    figures = {
        "engine.lru_replay_refs_per_s": N_REFS / lru_s,
        "engine.replay_after_vs_replay": after_s / lru_s,
    }
    libcachesim_s = _libcachesim_lru_s(stream, capacity)
    if libcachesim_s is not None:
        figures["engine.lru_replay_vs_libcachesim"] = libcachesim_s / lru_s
    return figures


def _table_replay_stream() -> ReferenceStream:
    """About 50,000 references (its own seed: a process of its own draws the same)."""
    return _zipf_stream(np.random.default_rng(TABLE_REPLAY_SEED), 100_000, 0.9).before(500_000)


def _table_replay_s(stream: ReferenceStream, policy: str, repeat: int = 2) -> float:
    capacity = _five_percent_of_bytes(stream)
    limits = CacheLimits(capacity_bytes=capacity, eviction=policy)
    return best_of(lambda: replay_on_table(stream, 600_000, "reset", limits), repeat=repeat)


def _table_replay_figures() -> dict[str, float]:
    """Capacity replays on the lease table itself, the path of ``ttl`` and ``size`` eviction,
    against LRU on the same path: what choosing their victims costs (the front of least keys
    they share with LRU; before it, a sort of the table at each eviction); and LRU's against
    the same replay loaded from its sources, when the table is compiled."""
    stream = _table_replay_stream()
    seconds = {policy: _table_replay_s(stream, policy) for policy in ("lru", "ttl", "size")}
    figures = {"engine.table_replay_refs_per_s_lru": len(stream) / seconds["lru"]}
    for policy in ("ttl", "size"):
        figures[f"engine.table_replay_refs_per_s_{policy}"] = len(stream) / seconds[policy]
        figures[f"engine.table_replay_{policy}_vs_lru"] = seconds["lru"] / seconds[policy]
    if BUILD_STATUS == "compiled":
        figures["engine.table_replay_speedup_compiled_vs_interpreted"] = (
            interpreted("benchmarks.engine", "m._table_replay_s(m._table_replay_stream(), 'lru')")
            / seconds["lru"]
        )
    return figures


SESSIONS = 1_000
LEASES_PER_SESSION = 4


def _session_close_figures() -> dict[str, float]:
    """A session's close among 100,000 leases (a connection's, and a thousand sessions' of four
    each): the leases its owner was granted, against a scan of the table's owner columns for
    them, the way a close found them before the owner index."""
    n = 100_000
    catalog, own = _catalog(n), n - SESSIONS * LEASES_PER_SESSION

    def closes_s() -> float:
        table = LeaseTable(catalog, CacheLimits())
        table.install(np.arange(own), 0, U32_MAX, 64, owner_scope=OwnerScope.CONNECTION)
        for session in range(SESSIONS):
            for k in range(LEASES_PER_SESSION):
                obj = own + session * LEASES_PER_SESSION + k
                table.install_one(obj, 0, U32_MAX, 64, owner_id=session)
        start = time.perf_counter()
        for session in range(SESSIONS):
            table.release_owner(OwnerScope.SESSION, session)
        return time.perf_counter() - start

    table = _filled(catalog, n, np.random.default_rng(1))
    scan_s = (
        best_of(
            lambda: [
                np.flatnonzero(table.occupied & (table.owner_scope == 1) & (table.owner_id == s))
                for s in range(100)
            ],
            repeat=3,
        )
        / 100
    )
    close_s = min(closes_s() for _ in range(3)) / SESSIONS
    return {
        "engine.session_close_us_100k": close_s * 1e6,
        "engine.session_close_vs_scan": scan_s / close_s,
    }


def _replay_figures(rng: np.random.Generator) -> dict[str, float]:
    stream = _zipf_stream(rng, 100_000, 0.9)
    grid = np.geomspace(1_000, 3_600_000, N_TTLS).astype(np.int64)
    figures = {}
    for mode, key in (("reset", ""), ("non_reset", "_non_reset")):
        seconds = best_of(lambda m=mode: replay(stream, grid, m), repeat=3)
        figures[f"engine.replay_ttl_evals_per_s{key}"] = N_REFS * N_TTLS / seconds
    return figures


def run() -> dict[str, float]:
    rng = np.random.default_rng(2026)
    # Trace-level figures first, on a fresh heap, so both sides of each ratio run alike.
    figures = {**_lru_figures(rng), **_replay_figures(rng), **_table_replay_figures()}
    for label, n in SIZES.items():
        figures.update(_table_figures(label, n, rng))
    figures["engine.lookup_refs_per_s"] = figures["engine.lookup_1m_refs_per_s"]
    figures["engine.install_per_s"] = figures["engine.install_1m_per_s"]
    figures["engine.speedup_vs_reference_model"] = _reference_model_speedup(rng)
    figures.update(_session_close_figures())
    return figures
