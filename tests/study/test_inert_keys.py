"""Keys another setting makes inert are named before anything runs: a memory-pressure fault on
unlimited memory, ``faults.announce_restart`` without a restart, a resend timer on a link
that loses nothing all ran as if unset, and nothing said so. Each rule of
:mod:`nnrpsim.inert_keys` is checked by runs: its keys, swept where it holds, move no
number (and, for most, move some where it does not hold)."""

from __future__ import annotations

import json
import warnings

import pytest
import yaml

import nnrpsim
from nnrpsim.checks import StudyWarning
from nnrpsim.checks.caching import kind_sizes_advice, uncached_kinds_advice
from nnrpsim.checks.keys import ignored_key_advice, inert_key_advice, unmoved_key_warnings
from nnrpsim.cli import main
from nnrpsim.inert_keys import INERT_RULES, NO_KIND_CACHED, UNTIMED_ON_VECTOR, WORKLOAD_KINDS
from nnrpsim.scenario import load_scenario, sweep_points
from tests.conftest import SHARED, write_yaml

AZURE = SHARED / "data/traces/AzureLLMInferenceTrace_conv.csv"

STUDY = {
    "study": {"name": "inert", "seed": 5, "replications": 1, "duration": "30s", "warmup": "5s"},
    "workload": {
        "sessions": {"rate_per_s": 1, "duration": "20s"},
        "operations": {"rate_per_s": 2},
        "invalidations": {"rate_per_s": 0.02},
    },
    "host_policy": {"name": "threshold", "renew_margin": 0.5},
}
"""Small and busy: two references an operation, content changes, renewals."""

VALUES = {
    "host_policy.ttl_fraction": "[0.1, 0.9]",
    "host_policy.ttl_hint": "[null, 2s]",
    "host_policy.min_object_size": "[1KiB, 64KiB]",
    "host_policy.min_reuse": "[0, 5]",
    "host_policy.renew_margin": "[0, 1]",
    "host_policy.renewal_body": "[true, false]",
    "host_policy.inline_after_invalidate": "[true, false]",
    "host_policy.connection_ttl": "[null, 5s]",
    "host_policy.refused_put_backoff": "[0s, 10s]",
    "topology.gpu_memory": "[1MiB, null]",
    "topology.eviction": "[lru, none]",
    "topology.max_cache_entries": "[0, 3]",
    "topology.max_object_bytes": "[1KiB, 1GiB]",
    "topology.object_kinds": "[[prompt_segment], [prompt_segment, tool_schema]]",
    "topology.ttl_floor": "[0s, 20s]",
    "topology.ttl_ceiling": "[1s, 1h]",
    "topology.default_lease_ttl": "[1s, 1h]",
    "topology.renewal": "[touch, extend]",
    "topology.dependency_cascade": "[true, false]",
    "topology.per_put_byte_cost": "[0ns, 50ns]",
    "faults.restart_at": "[null, 10s]",
    "faults.announce_restart": "[true, false]",
    "faults.memory_pressure_at": "[null, 10s]",
    "faults.memory_pressure_fraction": "[0.1, 0.9]",
    "workload.invalidations.rate_per_s": "[0, 0.1]",
    "workload.sessions.rate_per_s": "[0.5, 3]",
    "workload.objects.zipf_alpha": "[0.2, 1.5]",
    "workload.objects.shared_kinds": "[{prompt_segment: 1}, {tool_schema: 1}]",
    "workload.operations.shared_refs": "[1, 4]",
    "workload.objects.private_kinds": "[{prompt_segment: 1}, {tool_schema: 1}]",
    "workload.objects.private_dependency_share": "[0, 0.5]",
    "workload.operations.private_refs": "[1, 4]",
    "topology.routing": "[round_robin, least_sessions]",
    "topology.link.retransmit_timeout": "[1ms, 200ms]",
    "workload.objects.namespaces": "[1, 4]",
    "workload.objects.size": "[{median: 1KiB}, {median: 64KiB, sigma: 0.2}]",
    "workload.objects.size.median": "[1KiB, 64KiB]",
    "workload.objects.size.sigma": "[0.1, 1.5]",
}

SIZED = "workload.objects.kind_sizes={tool_schema: {median: 2KiB}}"
"""Kinds of different sizes: a kind mix moves the numbers only then."""

HOLDS = {
    ("host_policy.ttl_hint",): ["host_policy.ttl_hint=5s"],
    ("host_policy.name",): ["host_policy.name=never", "host_policy.renew_margin=0.2"],
    NO_KIND_CACHED.controls: ["topology.object_kinds=[camera_block]"],
    ("faults.restart_at",): [],
    ("faults.memory_pressure_at",): [],
    ("topology.gpu_memory",): ["topology.gpu_memory=null", "faults.memory_pressure_at=10s"],
    ("topology.gpu_memory", "topology.max_cache_entries"): ["topology.gpu_memory=null"],
    ("workload.sessions.arrivals",): [f"workload.sessions.arrivals={{path: {AZURE}}}"],
    ("workload.objects.shared_per_namespace",): ["workload.objects.shared_per_namespace=0", SIZED],
    ("workload.operations.shared_refs",): ["workload.operations.shared_refs=0"],
    ("workload.operations.shared_refs", "workload.objects.private_dependency_share"): [
        "workload.operations.shared_refs=0",
        SIZED,
    ],
    ("workload.objects.private_per_session",): ["workload.objects.private_per_session=0", SIZED],
    ("workload.operations.private_refs",): ["workload.operations.private_refs=0", SIZED],
    (
        "topology.gpu_memory",
        "topology.max_cache_entries",
        "workload.invalidations.rate_per_s",
        "faults.restart_at",
        "faults.announce_restart",
    ): ["topology.gpu_memory=null", "workload.invalidations.rate_per_s=0"],
    ("topology.servers",): ["topology.hosts=2"],
    ("host_policy.renew_margin",): ["host_policy.renew_margin=0"],
    ("host_policy.renew_margin", "topology.hosts"): [
        "host_policy.renew_margin=0",
        "topology.gpu_memory=2MiB",
    ],
    ("workload.objects.private_dependency_share",): [],
    ("workload.invalidations.rate_per_s",): [
        "workload.invalidations.rate_per_s=0",
        "workload.objects.private_dependency_share=0.5",
    ],
    ("topology.link.loss",): [],
    (
        "workload.trace",
        "workload.objects.shared_per_namespace",
        "workload.operations.shared_refs",
        "workload.objects.private_dependency_share",
    ): ["workload.operations.shared_refs=0", "host_policy.name=connection_scope"],
    ("workload.objects.kind_sizes", *WORKLOAD_KINDS): [
        "workload.objects.kind_sizes={prompt_segment: {median: 2KiB}, tool_schema: {median: 3KiB}}"
    ],
}
"""For each rule but the vector engine's (``test_unmoved_keys``), by the keys it reads:
settings under which it holds."""

MOVES = {
    "host_policy.ttl_fraction": [],
    "topology.gpu_memory": [],
    "faults.announce_restart": ["faults.restart_at=10s"],
    "faults.memory_pressure_fraction": [
        "faults.memory_pressure_at=10s",
        "topology.gpu_memory=4MiB",
    ],
    "faults.memory_pressure_at": ["topology.gpu_memory=1MiB"],
    "topology.eviction": ["topology.gpu_memory=1MiB"],
    "topology.routing": ["topology.hosts=2", "topology.servers=2"],
    "topology.link.retransmit_timeout": ["topology.link.loss=0.05"],
    "workload.sessions.rate_per_s": [],
    "workload.objects.zipf_alpha": [],
    "workload.objects.shared_kinds": [SIZED],
    "workload.objects.private_kinds": [SIZED],
    "workload.objects.private_dependency_share": [],
    "host_policy.renewal_body": [],
    "topology.renewal": ["topology.hosts=2", "host_policy.renew_margin=0"],
    "topology.dependency_cascade": ["workload.objects.private_dependency_share=0.5"],
    "host_policy.connection_ttl": ["host_policy.name=connection_scope"],
    "host_policy.refused_put_backoff": ["topology.gpu_memory=8KiB"],
    "host_policy.inline_after_invalidate": [],
    "topology.default_lease_ttl": ["host_policy.ttl_hint=0s"],
    "workload.objects.namespaces": [],
    "workload.objects.size": [],
    "workload.objects.size.median": [],
    "workload.objects.size.sigma": [],
}
"""Settings under which a rule does not hold and the key moves the numbers: the runs above
could tell."""


def _sweep(key: str, settings: list[str], engine: str = "des"):
    """The summary of ``key`` swept over its :data:`VALUES` under ``settings`` (less any
    setting of the key itself, which the sweep sets), and the points' pre-run warnings."""
    overrides = [
        f"engine={engine}",
        *(s for s in settings if not s.startswith(f"{key}=")),
        f"sweep={{grid: {{{key}: {VALUES[key]}}}}}",
    ]
    points = sweep_points(load_scenario(STUDY, overrides))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StudyWarning)
        summary = nnrpsim.sweep(STUDY, overrides, progress=False)
    return summary, ignored_key_advice(points, len(points))


TRACE_SIZES = ("workload.trace.block_tokens", "workload.trace.kv_bytes_per_token")
"""A Mooncake trace's block sizes: :data:`STUDY` is synthetic, so checked on traces below."""

CASES = [
    (rule.controls, key)
    for rule in INERT_RULES
    if rule.keys not in (UNTIMED_ON_VECTOR, TRACE_SIZES) and rule.controls != ("workload.trace",)
    for key in rule.keys
]
"""(A rule that holds only on a trace is checked on one below.)"""


def test_every_rule_and_key_is_checked():
    assert {controls for controls, _ in CASES} == set(HOLDS)
    assert {key for _, key in CASES} <= set(VALUES)


@pytest.mark.parametrize(("controls", "key"), CASES, ids=[f"{c[0]}-{k}" for c, k in CASES])
def test_a_key_moves_nothing_where_its_rule_holds(controls, key):
    """Named before the run (by the rule) and after it (by its numbers); where the rule does
    not hold, the same sweep moves them."""
    summary, before = _sweep(key, HOLDS[controls])
    assert before and f"{key} is swept" in before[0]
    told = unmoved_key_warnings(summary)
    assert told and told[0].startswith(f"warning: {key}: its values"), key
    if key in MOVES and controls != ("topology.gpu_memory",):
        summary, before = _sweep(key, MOVES[key])
        assert before == []
        assert unmoved_key_warnings(summary) == [], key


@pytest.mark.parametrize("key", ["host_policy.ttl_fraction", "workload.invalidations.rate_per_s"])
def test_never_moves_nothing_on_the_vector_engine_either(key):
    summary, before = _sweep(key, HOLDS[("host_policy.name",)], engine="vector")
    assert before
    assert unmoved_key_warnings(summary)[0].startswith(f"warning: {key}: its values")


def _advice(study: dict, *overrides: str) -> list[str]:
    points = sweep_points(load_scenario(study, list(overrides)))
    return inert_key_advice(points, len(points))


def test_a_fixed_key_is_named_with_the_setting_that_makes_it_inert():
    assert _advice(STUDY) == []
    assert _advice(STUDY, "faults.announce_restart=false", "faults.memory_pressure_at=20s") == [
        "warning: all points: faults.announce_restart is false, but faults.restart_at is null "
        "(no restart): it changes nothing there"
    ]
    told = _advice(STUDY, "topology.gpu_memory=null", "faults.memory_pressure_at=20s")
    assert told == [
        "warning: all points: faults.memory_pressure_at is 20 s, but topology.gpu_memory is "
        "null (unlimited), and so is any fraction of it: it changes nothing there"
    ]
    # a key two rules name is named once, by the first that holds
    (line,) = _advice(STUDY, "topology.gpu_memory=null", "faults.memory_pressure_fraction=0.2")
    assert "memory_pressure_fraction is 0.2, but faults.memory_pressure_at is null" in line
    # at its default, a key is not named
    assert _advice(STUDY, "topology.link.retransmit_timeout=20ms") == []
    assert _advice(STUDY, "topology.link.retransmit_timeout=5ms") == [
        "warning: all points: topology.link.retransmit_timeout is 5 ms, but topology.link.loss "
        "is 0 (nothing is resent): it changes nothing there"
    ]


def test_a_sweep_of_the_setting_that_makes_a_key_inert_is_meant():
    """A restart swept over null and a time, a never baseline beside a caching policy: the
    key is set for their other points, and not named at these."""
    restart = ["faults.announce_restart=false", "sweep={grid: {faults.restart_at: [null, 10s]}}"]
    assert _advice(STUDY, *restart) == []
    policies = "sweep={grid: {host_policy.name: [never, threshold], topology.gpu_memory: [1MiB]}}"
    points = sweep_points(load_scenario(STUDY, [policies]))
    assert ignored_key_advice(points, len(points)) == []
    # fixed, the same setting gives the swept key no say anywhere
    never = ["host_policy.name=never", "sweep={grid: {topology.gpu_memory: [1MiB, 1GiB]}}"]
    points = sweep_points(load_scenario(STUDY, never))
    assert ignored_key_advice(points, len(points)) == [
        "warning: all points: topology.gpu_memory is swept, but host_policy.name is never, "
        "which inlines everything: its values change nothing there"
    ]


def test_a_never_baseline_of_a_caching_file_is_not_told_about_its_caching_keys():
    """``--set host_policy.name=never`` on a file with caching settings is the baseline run
    of that file: its settings are kept on purpose."""
    assert _advice(STUDY, "host_policy.name=never", "topology.gpu_memory=1GiB") == []


def test_validate_and_a_study_name_a_fixed_inert_key(tmp_path, capsys):
    path = write_yaml(tmp_path, {**STUDY, "topology": {"servers": 1, "routing": "hash"}})
    assert main(["validate", str(path)]) == 0
    said = (
        "warning: all points: topology.routing is 'hash', but topology.servers is 1 (nothing to "
        "route between): it changes nothing there"
    )
    assert said in capsys.readouterr().err.splitlines()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StudyWarning)
        nnrpsim.sweep(path, progress=False)
    assert said.removeprefix("warning: ") in [str(w.message) for w in caught]


def test_keys_says_what_makes_a_key_do_nothing(capsys):
    """``nnrpsim keys`` takes the rules' reasons: one place says them (a search still matches
    the key's own help only)."""
    assert main(["keys", "announce_restart"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.endswith(
        "Send CACHE_INVALIDATE on restart. Changes nothing where host_policy.name is never, "
        "which inlines everything; where faults.restart_at is null (no restart)."
    )
    assert main(["keys", "no restart"]) == 2  # (a rule's words are not the key's help)


KINDLESS = "topology.object_kinds=[camera_block]"
"""Servers that cache no kind :data:`STUDY`'s objects are of (prompt segments, tool schemas)."""


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_servers_that_cache_no_kind_of_the_workloads_are_named_and_run_as_never(engine):
    told = (
        "warning: all points: topology.object_kinds is [camera_block], which holds none of the "
        "kinds of the workload's objects (prompt_segment, tool_schema): every body goes inline, "
        "as under policy never"
    )
    assert told in nnrpsim.validate(STUDY, [KINDLESS, f"engine={engine}"]).warnings
    numbers = ["hit_rate", "inline_rate_policy", "wire_bytes", "mean_gpu_bytes", "installs"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StudyWarning)
        kindless = nnrpsim.sweep(STUDY, [KINDLESS, f"engine={engine}"], progress=False)
    assert told.removeprefix("warning: ") in [str(w.message) for w in caught]
    never = nnrpsim.sweep(STUDY, ["host_policy.name=never", f"engine={engine}"], progress=False)
    assert kindless[numbers].equals(never[numbers])
    # once a kind of the workload's is cached, it caches
    cached = nnrpsim.sweep(
        STUDY, ["topology.object_kinds=[tool_schema]", f"engine={engine}"], progress=False
    )
    assert cached["hit_rate"].iloc[0] > 0


def test_kindless_servers_are_not_named_where_the_grid_meant_them_or_nothing_is_cached():
    def told(*overrides: str) -> list[str]:
        points = sweep_points(load_scenario(STUDY, list(overrides)))
        return uncached_kinds_advice(points, len(points))

    assert told(KINDLESS) != []
    assert told("sweep={grid: {topology.object_kinds: [[camera_block], [tool_schema]]}}") == []
    assert told(KINDLESS, "sweep={grid: {workload.objects.shared_kinds: [{codec_table: 1}]}}") == []
    assert told(KINDLESS, "host_policy.name=never") == []
    assert told("topology.object_kinds=[tool_schema]") == []
    # a workload that references only its private objects: their kinds alone count
    private = ["workload.operations.shared_refs=0", "topology.object_kinds=[tool_schema]"]
    assert "(prompt_segment)" in told(*private)[0]


def test_a_traces_kinds_are_the_ones_its_log_names(tmp_path):
    log = tmp_path / "log.csv"
    log.write_text("time_ms,object,size_bytes,kind\n0,a,4096,tool_schema\n10,b,4096,3\n")
    trace = [f"workload.trace={{path: {log}}}", "study.warmup=0s", "study.duration=1s"]

    def told(kinds: str) -> list[str]:
        scenario = load_scenario(
            {"study": {"name": "t"}}, [*trace, f"topology.object_kinds={kinds}"]
        )
        return uncached_kinds_advice(sweep_points(scenario), 1)

    assert "(tensor_section_table, tool_schema)" in told("[camera_block]")[0]
    assert told("[tool_schema]") == []


def test_sizes_for_a_kind_no_object_is_of_are_named_and_change_nothing():
    unused = (
        "workload.objects.kind_sizes={codec_table: {median: 2KiB}, tool_schema: {median: 2KiB}}"
    )
    told = (
        "warning: all points: workload.objects.kind_sizes sizes codec_table, which no object of "
        "the workload is (its kinds: prompt_segment, tool_schema): that size changes nothing"
    )
    assert told in nnrpsim.validate(STUDY, [unused]).warnings
    used = "workload.objects.kind_sizes={tool_schema: {median: 2KiB}}"
    assert nnrpsim.sweep(STUDY, [unused], progress=False).equals(
        nnrpsim.sweep(STUDY, [used], progress=False)
    )
    points = sweep_points(load_scenario(STUDY, [used]))
    assert kind_sizes_advice(points, 1) == []
    # two unused; and none said where the grid sets the kinds (it may draw them elsewhere)
    two = "workload.objects.kind_sizes={codec_table: {median: 2KiB}, camera_block: {median: 1B}}"
    points = sweep_points(load_scenario(STUDY, [two]))
    assert kind_sizes_advice(points, 1)[0].endswith(
        "sizes codec_table, camera_block, which no object of the workload is (its kinds: "
        "prompt_segment, tool_schema): those sizes change nothing"
    )
    kinds = (
        "sweep={grid: {workload.objects.private_kinds: [{prompt_segment: 1}, {codec_table: 1}]}}"
    )
    points = sweep_points(load_scenario(STUDY, [two, kinds]))
    assert kind_sizes_advice(points, len(points)) == []


@pytest.mark.parametrize("engine", ["des", "vector"])
def test_a_traces_objects_are_its_sessions_so_a_connection_ttl_changes_nothing(tmp_path, engine):
    """Each object referenced every 3 s: under a 10 s lease it hits, under a 1 s one it would
    not, were the connection to own it."""
    rows = [f"{t},{'abc'[t // 1000 % 3]},4096" for t in range(0, 30_000, 1000)]
    (tmp_path / "log.csv").write_text("time_ms,object,size_bytes\n" + "\n".join(rows) + "\n")
    study = {
        "study": {"name": "t", "duration": "30s", "replications": 1},
        "engine": engine,
        "workload": {"trace": {"path": str(tmp_path / "log.csv")}},
        "host_policy": {"name": "always", "ttl_hint": "10s"},
        "sweep": {"grid": {"host_policy.connection_ttl": [None, "1s"]}},
    }
    points = sweep_points(load_scenario(study))
    (told,) = ignored_key_advice(points, len(points))
    assert "a trace's objects are its one session's" in told
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StudyWarning)
        summary = nnrpsim.sweep(study, progress=False)
    assert summary["hit_rate"].tolist() == [0.9, 0.9]
    assert unmoved_key_warnings(summary)


def test_a_traces_one_session_leaves_further_hosts_nothing_to_do(tmp_path, capsys):
    """A trace is one host's one session: on the DES (the vector engine refuses more hosts)
    two hosts more open none, so the same numbers come out, and the host count is named
    before."""
    rows = [f"{t},{'abc'[t // 1000 % 3]},4096" for t in range(0, 30_000, 1000)]
    (tmp_path / "log.csv").write_text("time_ms,object,size_bytes\n" + "\n".join(rows) + "\n")
    study = {
        "study": {"name": "t", "duration": "30s", "replications": 1},
        "workload": {"trace": {"path": str(tmp_path / "log.csv")}},
        "host_policy": {"name": "always", "ttl_hint": "10s"},
        "sweep": {"grid": {"topology.hosts": [1, 3]}},
    }
    points = sweep_points(load_scenario(study))
    (told,) = ignored_key_advice(points, len(points))
    assert told == (
        "warning: all points: topology.hosts is swept, but workload.trace is set, and a trace "
        "is one host's one session: the other hosts open none: its values change nothing there"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StudyWarning)
        summary = nnrpsim.sweep(study, progress=False)
    assert summary["hit_rate"].tolist() == [0.9, 0.9] and unmoved_key_warnings(summary)
    fixed = {**study, "topology": {"hosts": 3}}
    del fixed["sweep"]
    assert main(["validate", str(write_yaml(tmp_path, fixed))]) == 0
    assert "topology.hosts is 3, but workload.trace is set" in capsys.readouterr().err


@pytest.mark.parametrize("announce", [False, True])
def test_inlining_after_an_invalidation_has_a_say_only_where_a_restart_is_announced(announce):
    """Unlimited memory, no content changes: only an announced restart ends leases under
    their hosts (unannounced, hosts learn of it by misses)."""
    settings = [
        "topology.gpu_memory=null",
        "workload.invalidations.rate_per_s=0",
        "faults.restart_at=10s",
        f"faults.announce_restart={str(announce).lower()}",
    ]
    summary, before = _sweep("host_policy.inline_after_invalidate", settings)
    assert bool(before) is not announce
    assert bool(unmoved_key_warnings(summary)) is not announce


@pytest.mark.parametrize("key", TRACE_SIZES)
def test_a_mooncake_blocks_size_keys_change_nothing_on_a_reference_log(tmp_path, key):
    """A log's rows give their sizes: named, and the same numbers; on a Mooncake trace the
    same sweep moves them (1,000 tokens in two hash ids: blocks of 500 to 999 tokens fit)."""
    (tmp_path / "log.csv").write_text(
        "time_ms,object,size_bytes\n" + "".join(f"{t},{t % 7},{1000 + t}\n" for t in range(200))
    )
    (tmp_path / "t.jsonl").write_text(
        "".join(
            json.dumps({"timestamp": 100 * t, "input_length": 1000, "hash_ids": [t % 3, t % 5]})
            + "\n"
            for t in range(200)
        )
    )
    values = {TRACE_SIZES[0]: "[500, 900]", TRACE_SIZES[1]: "[64KiB, 320KiB]"}[key]
    for path, inert in [(tmp_path / "log.csv", True), (tmp_path / "t.jsonl", False)]:
        study = {
            "study": {"name": "t", "duration": "20s", "replications": 1},
            "engine": "vector",
            "workload": {"trace": {"path": str(path)}},
            "sweep": {"grid": {key: yaml.safe_load(values)}},
        }
        points = sweep_points(load_scenario(study))
        told = ignored_key_advice(points, len(points))
        assert bool(told) is inert and (not inert or "is a reference log" in told[0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", StudyWarning)
            summary = nnrpsim.sweep(study, progress=False)
        assert bool(unmoved_key_warnings(summary)) is inert
