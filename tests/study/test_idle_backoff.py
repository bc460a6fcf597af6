"""A refusal back-off (``host_policy.refused_put_backoff``) acts only after a server refuses a
CACHE_PUT, and whether one does the run decides: a budget with LRU eviction refuses nothing
but objects larger than itself. Set, not swept, where no run refused one, it is named after
the run; where memory is unlimited, before it (by the inert-key rule, not again here)."""

from __future__ import annotations

import pytest

import nnrpsim

IDLE = "host_policy.refused_put_backoff is 5 s, but no server refused a CACHE_PUT"


def _study(topology: dict, backoff="5s", sweep=None) -> dict:
    study = {
        "study": {"duration": "3min", "warmup": "2min", "replications": 2},
        "engine": "vector",
        "topology": topology,
        "host_policy": {"refused_put_backoff": backoff},
    }
    return {**study, "sweep": {"grid": sweep}} if sweep else study


def _told(tmp_path, scenario: dict) -> tuple[list[str], float]:
    result = nnrpsim.run(scenario, out=tmp_path / "out", jobs=1, progress=False)
    return result.warnings, float(result.runs["refused_puts"].sum())


def test_a_backoff_no_refusal_called_on_is_named(tmp_path):
    told, refused = _told(tmp_path, _study({"gpu_memory": "64MiB", "eviction": "lru"}))
    assert refused == 0
    [line] = [line for line in told if IDLE in line]
    assert line == (
        f"warning: all points: {IDLE} after the warm-up in any run, so it had next to no say: "
        "a server refuses room only where reclaiming expired leases and evicting cannot make "
        "it (eviction: none, or an object larger than its whole budget)"
    )


@pytest.mark.parametrize(
    "scenario",
    [
        _study({"gpu_memory": "4MiB", "eviction": "none"}),  # refusals: it has its say
        _study({"gpu_memory": "64MiB", "eviction": "lru"}, "0s"),  # none set
        _study({"gpu_memory": "64MiB"}, sweep={"host_policy.refused_put_backoff": ["1s", "5s"]}),
        _study({"gpu_memory": None}),  # the inert-key rule names it, before the run
    ],
    ids=["refused", "unset", "swept", "unlimited"],
)
def test_not_named_where_it_acts_or_is_named_otherwise(tmp_path, scenario):
    told, refused = _told(tmp_path, scenario)
    assert not [line for line in told if "no server refused a CACHE_PUT" in line]
    if scenario["topology"].get("eviction") == "none":
        assert refused > 0
    if scenario["topology"]["gpu_memory"] is None:
        assert any("host_policy.refused_put_backoff" in line for line in told)


def test_a_never_baseline_beside_it_does_not_hide_it(tmp_path):
    scenario = _study(
        {"gpu_memory": "64MiB", "eviction": "lru"},
        sweep={"host_policy.name": ["never", "best_practice"]},
    )
    told, _ = _told(tmp_path, scenario)
    assert [line for line in told if IDLE in line and line.startswith("warning: point 1: ")]
