"""Any valid scenario runs, on either engine, and reports metrics that make sense: drawn by
hypothesis over the scenario keys, through the runner that maps them onto the model."""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import nnrpsim
from nnrpsim.metrics import OUTCOME_RATES
from nnrpsim.scenario import parse_scenario
from nnrpsim.scenario.schema import POLICY_FIXES

POLICIES = ("best_practice", "always", "never", "threshold", "connection_scope")  # last: des only
ARRIVALS = Path(tempfile.mkdtemp(prefix="nnrpsim-arrivals-"))  # drawn arrival logs, one per run
NON_NEGATIVE = (
    "installs",
    "renewals",
    "refused_puts",
    "invalidations",
    "mean_gpu_bytes",
    "peak_gpu_bytes",
)


def teardown_module() -> None:
    shutil.rmtree(ARRIVALS)


def _arrivals(times: list[float] | None) -> dict | None:
    """A log of arrival times in ms (a session each; some after the run's end), or none."""
    if not times:
        return None
    path = ARRIVALS / f"{len(list(ARRIVALS.iterdir()))}.csv"
    pd.DataFrame({"ms": times}).to_csv(path, index=False)
    return {"path": str(path), "column": "ms"}


KIND_MIX = {"prompt_segment": 1, "tool_schema": 2, "codec_table": 0.5}


def _unless_fixed(policy: str, **keys) -> dict:
    """The ``host_policy`` keys that ``policy`` lets a scenario set (it refuses the others)."""
    return {key: value for key, value in keys.items() if key not in POLICY_FIXES.get(policy, ())}


@st.composite
def scenarios(draw) -> dict:
    engine = draw(st.sampled_from(["des", "vector"]))
    shared = draw(st.sampled_from([0, 3, 40]))
    policy = draw(st.sampled_from(POLICIES[: -1 if engine == "vector" else None]))
    return {
        "study": {"name": "drawn", "replications": 1, "duration": "30s", "warmup": "5s"},
        "engine": engine,
        "topology": {
            "hosts": draw(st.integers(1, 1 if engine == "vector" else 2)),
            "servers": draw(st.integers(1, 2)),
            "gpu_memory": draw(st.sampled_from([None, "32KiB", "1MiB", "1GiB"])),
            "max_cache_entries": draw(st.sampled_from([0, 3, 100])),
            "object_kinds": draw(st.sampled_from([["prompt_segment"], ["tool_schema"]]))
            if draw(st.booleans())
            else ["prompt_segment", "tool_schema"],
            "ttl_floor": draw(st.sampled_from(["0s", "1s"])),
            "ttl_ceiling": draw(st.sampled_from(["2s", "1h"])),
            "eviction": draw(st.sampled_from(["lru", "fifo", "ttl", "size", "none"])),
            "link": {"latency": draw(st.sampled_from(["0ms", "1ms"])), "loss": 0.0},
            "server_workers": draw(st.sampled_from([None, 1, 4])),
            "per_put_byte_cost": draw(st.sampled_from(["0ns", "1ns", "1us"])),
            "dependency_cascade": draw(st.booleans()),
            "renewal": draw(st.sampled_from(["touch", "extend"])),
            "max_object_bytes": draw(st.sampled_from(["1GiB", "4KiB"])),
            "default_lease_ttl": draw(st.sampled_from(["30s", "1s"])),
            "routing": draw(st.sampled_from(["round_robin", "hash", "least_sessions"])),
        },
        "workload": {
            "sessions": {
                "rate_per_s": 2,
                "duration": draw(st.sampled_from(["2s", "20s"])),
                "duration_cv": draw(st.sampled_from([0, 0.5])),
                "arrivals": _arrivals(
                    draw(st.none() | st.lists(st.floats(0, 40_000), max_size=40))
                ),
            },
            "operations": {
                "rate_per_s": draw(st.sampled_from([1, 5])),
                "shared_refs": draw(st.integers(0, 3)),
                "private_refs": draw(st.integers(0, 3)),
                "max_in_flight": draw(st.sampled_from([1, 4])),
            },
            "objects": {
                "namespaces": draw(st.integers(1, 3)),
                "shared_per_namespace": shared,
                "zipf_alpha": draw(st.sampled_from([0, 0.9])),
                "private_dependency_share": draw(st.sampled_from([0, 0.5, 1])) if shared else 0,
                "private_per_session": draw(st.integers(0, 3)),
                "size": {"median": draw(st.sampled_from(["256", "16KiB"])), "sigma": 1.0},
                "shared_kinds": draw(st.sampled_from([{"tool_schema": 1}, KIND_MIX])),
                "private_kinds": draw(st.sampled_from([{"prompt_segment": 1}, KIND_MIX])),
                "kind_sizes": draw(
                    st.sampled_from([{}, {"tool_schema": {"median": "2KiB", "sigma": 0}}])
                ),
            },
            "invalidations": {"rate_per_s": draw(st.sampled_from([0, 0.1]))},
        },
        "host_policy": {
            "name": policy,
            "ttl_fraction": draw(st.sampled_from([0.1, 0.75])),
            "renew_margin": draw(st.sampled_from([0, 0.2])),
            "renewal_body": draw(st.booleans()),
            "refused_put_backoff": draw(st.sampled_from(["0s", "2s"])),
            "ttl_hint": draw(st.sampled_from([None, None, "0s", "3s"])),  # 0s: the default TTL
            "connection_ttl": draw(st.sampled_from([None, "20s"])),
            **_unless_fixed(
                policy,
                inline_after_invalidate=draw(st.booleans()),
                min_object_size=draw(st.sampled_from(["0", "1KiB"])),
                min_reuse=draw(st.sampled_from([0, 2])),
            ),
        },
        "faults": {  # (the vector engine injects none)
            "restart_at": draw(st.sampled_from([None, "12s"])) if engine == "des" else None,
            "memory_pressure_at": draw(st.sampled_from([None, "15s"])) if engine == "des" else None,
        },
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=scenarios())
def test_any_scenario_runs_and_its_metrics_make_sense(raw):
    row = nnrpsim.sweep(parse_scenario(raw)).iloc[0]
    assert row["failures"] == 0 and row["replications"] == 1
    workers = raw["topology"]["server_workers"]
    if workers is not None and row["peak_server_load"] > workers:  # (DES: NaN on the vector)
        # more processing offered than the workers give: sessions fall behind, as documented
        assert row["invariant_violations"] <= row["operations_behind"]
    else:
        assert row["invariant_violations"] == 0
    rates = [row[name] for name in (*OUTCOME_RATES, "fallback_rate")]
    if math.isnan(row["hit_rate"]):  # nothing was referenced after the warm-up: no rate at all
        assert all(math.isnan(rate) for rate in rates)
    else:
        assert all(0 <= rate <= 1 for rate in rates)
        assert math.isclose(sum(row[name] for name in OUTCOME_RATES), 1.0)
        assert row["fallback_rate"] <= 1 - row["hit_rate"] - row["inline_rate_policy"] + 1e-9
    assert all(not row[name] < 0 for name in NON_NEGATIVE)  # NaN where not measured
    assert row["wire_bytes"] >= 0
    if raw["host_policy"]["name"] == "never":
        assert not row["hit_rate"] > 0 and row["installs"] == 0 and row["wire_bytes_saved"] == 0
