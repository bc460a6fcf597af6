"""Metric names and how each run's records become them (one flat dict per run)."""

from __future__ import annotations

import numpy as np

from .engine.replay import ReplayResult
from .engine.table import KIND_CODES
from .model.records import InstallCause, RefOutcome
from .model.simulation import ModelResult
from .protocol import CacheObjectKind, MessageType, inline_object_bytes, packet_bytes
from .warmup import held_per_sample, memory_settled_ms

METRICS = (
    "hit_rate",
    "fallback_rate",
    "miss_rate_cache_miss",
    "miss_rate_lease_expired",
    "miss_rate_version_mismatch",
    "miss_rate_dependency_invalid",
    "inline_rate_policy",
    "mean_gpu_bytes",
    "peak_gpu_bytes",
    "memory_settled_s",
    "wire_bytes",
    "wire_bytes_resent",
    "wire_bytes_saved",
    "wire_saving",
    "installs",
    "renewals",
    "refused_puts",
    "evictions",
    "invalidations",
    "p50_latency_ms",
    "p99_latency_ms",
    "peak_link_utilisation",
    "peak_server_load",
    "operations_behind",
    "operations_waited",
    "invariant_violations",
)
"""Every run reports these; the summary adds ``<metric>_ci95`` for each."""

DERIVED_METRICS = ("wire_saving",)
"""Of :data:`METRICS`, those derived from others as a study gathers its runs
(:func:`~nnrpsim.summaries.with_derived_metrics`), not by each run: so runs an earlier version
wrote, resumed or compared, have them too."""

OUTCOME_RATES = (
    "hit_rate",
    "miss_rate_cache_miss",
    "miss_rate_lease_expired",
    "miss_rate_version_mismatch",
    "miss_rate_dependency_invalid",
    "inline_rate_policy",
)
"""What became of each reference; these shares add up to 1 (``fallback_rate`` is the part of
the misses that drew a server error)."""

ALL_INLINE_FRACTION = "fraction of the all-inline bytes"
"""``wire_saving``'s unit: at most 1, and below 0 where caching cost more than it kept off."""

UNITS = {
    "hit_rate": "fraction of references",
    "fallback_rate": "fraction of references",
    "inline_rate_policy": "fraction of references",
    "mean_gpu_bytes": "bytes",
    "peak_gpu_bytes": "bytes",
    "memory_settled_s": "s",
    "wire_bytes": "bytes",
    "wire_bytes_resent": "bytes",
    "wire_bytes_saved": "bytes",
    "wire_saving": ALL_INLINE_FRACTION,
    "p50_latency_ms": "ms",
    "p99_latency_ms": "ms",
    "peak_link_utilisation": "fraction of link capacity",
    "peak_server_load": "workers busy on average",
    "operations_behind": "operations",
    "operations_waited": "operations",
}

_SERVER_ERRORS = (
    (RefOutcome.CACHE_MISS, "miss_rate_cache_miss"),
    (RefOutcome.LEASE_EXPIRED, "miss_rate_lease_expired"),
    (RefOutcome.VERSION_MISMATCH, "miss_rate_version_mismatch"),
    (RefOutcome.DEPENDENCY_INVALID, "miss_rate_dependency_invalid"),
)
_BODY_SENT = (
    RefOutcome.INSTALLED,
    RefOutcome.INSTALL_REJECTED,
    RefOutcome.INLINED_AFTER_INVALIDATE,
)


def _share(count: float, references: int) -> float:
    """``count`` as a fraction of ``references``; NaN without any: a run that referenced nothing
    after the warm-up has no rate to tell, and a zero would pull the mean over its point's
    replications down (the summary's mean skips it)."""
    return count / references if references else float("nan")


def des_metrics(
    result: ModelResult, warmup_ms: float, steady_load: bool = True
) -> dict[str, float]:
    """Metrics of a SimPy run, counting only what happened after the warm-up.

    ``memory_settled_s`` needs a load that settles: a run whose sessions or references follow
    a trace has none (NaN), whatever its memory does.

    A reference is a hit when it was served by a 24-byte reference; when the host had to send the
    body (install, rejected install, inline after invalidation) the miss is charged to the cause:
    an expired lease to ``lease_expired``, anything else to ``cache_miss``. Server errors (each
    followed by an inline fallback) are charged to their own error code.
    """
    refs = result.references
    keep = refs["time_ms"] >= warmup_ms
    outcome, cause = refs["outcome"][keep], refs["cause"][keep]
    n = len(outcome)
    metrics = {"hit_rate": _share(float((outcome == RefOutcome.HIT).sum()), n)}
    body_sent = np.isin(outcome, _BODY_SENT)
    expired = body_sent & (cause == InstallCause.EXPIRED)
    errors = 0
    for code, name in _SERVER_ERRORS:
        count = int((outcome == code).sum())
        errors += count
        metrics[name] = _share(count, n)
    metrics["miss_rate_cache_miss"] += _share(float((body_sent & ~expired).sum()), n)
    metrics["miss_rate_lease_expired"] += _share(float(expired.sum()), n)
    metrics["fallback_rate"] = _share(errors, n)
    metrics["inline_rate_policy"] = _share(
        float((outcome == RefOutcome.INLINED_BY_POLICY).sum()), n
    )

    mean_by_kind, peak = _held_after(result, warmup_ms)
    metrics["mean_gpu_bytes"], metrics["peak_gpu_bytes"] = float(mean_by_kind.sum()), peak
    times, held = held_per_sample(result.memory)
    until = result.config.faults.first_at_ms
    metrics["memory_settled_s"] = memory_settled_s(times, held, until, steady_load)

    base = result.at_warmup
    wire = {name: n_bytes - base.get(f"wire_{name}", 0) for name, n_bytes in result.wire.items()}
    metrics["wire_bytes"] = float(result.wire_bytes_total - base.get("wire_bytes_total", 0))
    cache_cost = wire["inline"] + wire["put_body"] + wire["reference"] + wire["cache_control"]
    # (against the operations started after the warm-up, as the wire's bytes are counted:
    # those of the references recorded left out the operations the run ended in the middle
    # of, whose bytes count, and a run that fell behind saved less than nothing, inlining all)
    inline_all = result.all_inline_bytes - base.get("all_inline_bytes", 0)
    metrics["wire_bytes_saved"] = float(inline_all - cache_cost)
    for name in ("wire_bytes_resent", "installs", "renewals", "refused_puts", "evictions"):
        metrics[name] = float(result.counters[name] - base.get(name, 0))
    metrics["invalidations"] = float(
        sum(result.invalidations.values()) - base.get("invalidations", 0)
    )

    ops = result.operations
    latency = ops["latency_ms"][ops["start_ms"] >= warmup_ms]
    p50, p99 = np.percentile(latency, [50, 99]) if len(latency) else (np.nan, np.nan)
    metrics["p50_latency_ms"], metrics["p99_latency_ms"] = float(p50), float(p99)
    metrics["peak_link_utilisation"] = result.link_utilisation
    # processing offered per ms after the warm-up: frames processed at once on average
    metrics["peak_server_load"] = max(
        busy - base.get(f"server_busy_ms_{index}", 0.0)
        for index, busy in enumerate(result.server_busy_ms)
    ) / (result.config.duration_ms - warmup_ms)
    metrics["operations_behind"] = float(result.operations_behind)
    metrics["operations_waited"] = float(
        result.counters["operations_waited"] - base.get("operations_waited", 0)
    )
    metrics["invariant_violations"] = float(result.violations)
    return {name: metrics[name] for name in METRICS if name not in DERIVED_METRICS}


def _held_after(result: ModelResult, warmup_ms: float) -> tuple[np.ndarray, float]:
    """The bytes the servers held on average from the warm-up to the run's end, by kind code,
    and the most they held at once (the sum of each server's most); NaN for a window of no
    length. Integrated over every change of their tables, not read at the samples, whose
    place against the expiry sweep's ticks moved the mean by up to a fifth."""
    if warmup_ms != result.config.warmup_ms:
        raise ValueError(
            f"the memory held is integrated from the run's own warm-up, "
            f"{result.config.warmup_ms} ms, not {warmup_ms} ms"
        )
    window = result.config.duration_ms - warmup_ms
    if window <= 0:
        return np.full(KIND_CODES, np.nan), float("nan")
    kind_ms_bytes = sum(
        (np.array(end.kind_ms_bytes) - np.array(start.kind_ms_bytes) for start, end in result.held),
        np.zeros(KIND_CODES),
    )
    peak = float(sum(end.peak_bytes for _, end in result.held))
    return kind_ms_bytes / window, peak


def memory_settled_s(
    times: np.ndarray, held: np.ndarray, until_ms: float | None, steady_load: bool
) -> float:
    """When a run's memory ``held`` at sample ``times`` (:func:`~nnrpsim.warmup.held_per_sample`)
    settles (MSER-5, judged before ``until_ms``, a fault:
    :func:`~nnrpsim.warmup.memory_settled_ms`), in seconds; NaN where the load follows a log,
    with no steady level to settle to."""
    return memory_settled_ms(times, held, until_ms) / 1e3 if steady_load else float("nan")


KIND_METRICS = (
    "reference_share",
    "hit_rate",
    "inline_rate_policy",
    "bytes_from_cache",
    "mean_gpu_bytes",
)
"""Per object kind of a run (``kinds.parquet``): its share of the references, their hit and
policy-inline rates, the inline bytes its hits kept off the wire, and the GPU memory it held
(bytes held, summed over servers and averaged over the time after the warm-up, on either
engine). Weighted by the shares, the rates make the
run's; the memory adds up to its ``mean_gpu_bytes``."""


def _per_kind(kinds: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    return np.bincount(kinds.astype(np.int64), weights=weights, minlength=KIND_CODES)


def _kind_columns(
    references: np.ndarray,
    hits: np.ndarray,
    by_policy: np.ndarray,
    from_cache: np.ndarray,
    gpu_bytes: np.ndarray,
    held: np.ndarray,
) -> dict[str, list]:
    """The :data:`KIND_METRICS` columns, a row per kind referenced or ``held``, from per-kind-code
    totals (each indexed by kind code)."""
    columns: dict[str, list] = {"kind": [], **{name: [] for name in KIND_METRICS}}
    total = int(references.sum())
    for code in np.flatnonzero((references > 0) | held).tolist():
        count = int(references[code])
        columns["kind"].append(CacheObjectKind(code).name.lower())
        columns["reference_share"].append(_share(count, total))
        columns["hit_rate"].append(_share(float(hits[code]), count))
        columns["inline_rate_policy"].append(_share(float(by_policy[code]), count))
        columns["bytes_from_cache"].append(float(from_cache[code]))
        columns["mean_gpu_bytes"].append(float(gpu_bytes[code]))
    return columns


def des_kind_metrics(result: ModelResult, warmup_ms: float) -> dict[str, list]:
    """The :data:`KIND_METRICS` of each kind referenced or held after the warm-up, as columns."""
    refs = result.references
    keep = refs["time_ms"] >= warmup_ms
    kind, outcome, inline = refs["kind"][keep], refs["outcome"][keep], refs["inline_bytes"][keep]
    hits = outcome == RefOutcome.HIT
    mean_by_kind, _ = _held_after(result, warmup_ms)
    return _kind_columns(
        _per_kind(kind),
        _per_kind(kind[hits]),
        _per_kind(kind[outcome == RefOutcome.INLINED_BY_POLICY]),
        _per_kind(kind[hits], inline[hits].astype(np.float64)),
        mean_by_kind,
        mean_by_kind > 0,
    )


def vector_kind_metrics(
    sweep: ReplayResult,
    index: int,
    object_kinds: np.ndarray,
    object_sizes: np.ndarray,
    referenced: np.ndarray,
    inlined: np.ndarray,
) -> dict[str, list]:
    """The :data:`KIND_METRICS` of one TTL of a replay run with ``per_object`` and
    ``sweep_ms`` (the memory held, as the DES's): the kind and
    size of every object id, the objects of all the references, and which the policy inlined."""
    n = sweep.object_hits.shape[1]
    kinds, hits = object_kinds[:n], sweep.object_hits[index].astype(np.float64)
    held = _per_kind(kinds, sweep.object_held_bytes[index])
    return _kind_columns(
        _per_kind(object_kinds[referenced]),
        _per_kind(kinds, hits),
        _per_kind(object_kinds[referenced[inlined]]),
        _per_kind(kinds, hits * inline_object_bytes(object_sizes[:n])),
        held,
        held > 0,
    )


FRAME_OVERHEAD = packet_bytes(MessageType.FRAME_SUBMIT, 32) + packet_bytes(MessageType.RESULT_PUSH)
PUT_ACK = packet_bytes(MessageType.CACHE_PUT) + packet_bytes(MessageType.CACHE_ACK)
INVALIDATE = packet_bytes(MessageType.CACHE_INVALIDATE)


def wire_saving(wire_bytes: np.ndarray, saved: np.ndarray, resent: np.ndarray) -> np.ndarray:
    """Each run's ``wire_bytes_saved`` as a fraction of what the links would carry if every
    body went inline, the bytes sent (less those ``resent`` after a loss, which inlining
    would have lost alike) plus those saved: one scale for every workload (the bytes saved
    grow with the objects' sizes, the load and the run's length) and every loss rate. NaN
    where nothing was sent (one of :data:`DERIVED_METRICS`)."""
    sent = np.asarray(wire_bytes, dtype=np.float64) - np.asarray(resent, dtype=np.float64)
    all_inline = sent + np.asarray(saved, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(all_inline > 0, saved / all_inline, np.nan)


def _inline_cost(sizes: np.ndarray) -> float:
    return float(inline_object_bytes(sizes).sum())


def vector_metrics(
    sweep: ReplayResult,
    index: int,
    sizes: np.ndarray,
    object_sizes: np.ndarray,
    inlined: np.ndarray,
    renewal_body: bool,
    frames: int,
    session_bytes: int,
) -> dict[str, float]:
    """Metrics of one TTL of a ``per_object`` replay over references of ``sizes`` (objects of
    ``object_sizes``), made by ``frames`` operations (a FRAME_SUBMIT and its RESULT_PUSH each)
    of sessions whose own frames took ``session_bytes``.

    References the policy inlines (``inlined``) never reach the cache; the rest were
    replayed. A reference whose install the server refuses (no room, or larger than the
    whole capacity) sends the body twice, as the DES hosts do: in the CACHE_PUT, then inline.
    A source installed along with what was made from it costs its PUT and ACK and its body;
    a reference sent inline instead of installed (once after an invalidation, or while its
    host backs off after a refusal), its body. The server's CACHE_INVALIDATEs are the
    replay's notices (a sweep interval given). There is no network timing (latency is NaN)
    and no fallback: the replayed host always knows its leases. ``memory_settled_s`` is the
    run's, of its samples over time (:func:`~nnrpsim.vector_run.vector_run`).
    """
    n = len(sizes)
    hits = float(sweep.hits[index])
    refused, inlined_once = sweep.object_rejected[index], sweep.object_inlined[index]
    replayed_sizes = object_sizes[: len(refused)]
    inline_sizes = inline_object_bytes(replayed_sizes)
    refused_cost = float(refused @ (PUT_ACK + replayed_sizes + inline_sizes))
    renew_bytes = float(sweep.renewal_bytes[index]) if renewal_body else 0.0
    notices = float(sweep.notices[index])
    cache_cost = (
        hits * 24
        + float(sweep.installs[index]) * (PUT_ACK + 24)
        + float(sweep.install_bytes[index])
        + float(sweep.renewals[index]) * PUT_ACK
        + renew_bytes
        + refused_cost
        + float(sweep.along_puts[index]) * PUT_ACK
        + float(sweep.along_put_bytes[index])
        + float(inlined_once @ inline_sizes)
        + notices * INVALIDATE
    )
    inline_by_policy = _inline_cost(sizes[inlined])
    miss = sweep.cold_misses[index] + sweep.invalidated_misses[index] + sweep.evicted_misses[index]
    return {
        "hit_rate": _share(hits, n),
        "fallback_rate": _share(0.0, n),
        "miss_rate_cache_miss": _share(float(miss), n),
        "miss_rate_lease_expired": _share(float(sweep.expired_misses[index]), n),
        "miss_rate_version_mismatch": _share(0.0, n),
        "miss_rate_dependency_invalid": _share(0.0, n),
        "inline_rate_policy": _share(float(inlined.sum()), n),
        "mean_gpu_bytes": float(sweep.mean_held_bytes[index]),
        "peak_gpu_bytes": float(sweep.peak_held_bytes[index]),
        "wire_bytes": frames * FRAME_OVERHEAD + session_bytes + inline_by_policy + cache_cost,
        "wire_bytes_resent": 0.0,  # (no network: a link's loss it refuses)
        "wire_bytes_saved": _inline_cost(sizes) - inline_by_policy - cache_cost,
        "installs": float(
            sweep.installs[index] + sweep.along_puts[index] - sweep.along_rejected[index]
        ),
        "renewals": float(sweep.renewals[index]),
        "refused_puts": float(sweep.rejected[index] + sweep.along_rejected[index]),
        "evictions": float(sweep.evictions[index]),
        "invalidations": notices,
        "p50_latency_ms": float("nan"),
        "p99_latency_ms": float("nan"),
        "peak_link_utilisation": float("nan"),
        "peak_server_load": float("nan"),
        "operations_behind": 0.0,
        "operations_waited": float("nan"),  # (no timing: no operation waits)
        "invariant_violations": 0.0,
    }
