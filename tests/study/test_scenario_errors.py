"""Bad scenario input: one line naming the path and the reason, exit status 2, no traceback."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from typing import get_args

import pandas as pd
import pytest
import yaml

import nnrpsim
from nnrpsim import run_sizes
from nnrpsim.cli import main
from nnrpsim.model.run_size import (
    ENGINE_BYTES,
    PARTS,
    RUN_PARTS,
    TRACE_PARTS,
    TRACE_READ,
    run_size,
)
from nnrpsim.run_config import model_config
from nnrpsim.scenario import ScenarioError, load_scenario, sweep_points
from nnrpsim.scenario.key_catalog import describe
from nnrpsim.scenario.loader import MAX_SCENARIO_BYTES
from nnrpsim.scenario.schema import Trace
from nnrpsim.workload_facts import sessions_per_s
from tests.conftest import ROOT, write_yaml

CASES = [
    # a session length of 1e308 ms overflowed the workload's means (a traceback in validate)
    (
        {"workload": {"sessions": {"duration": 1e308}}},
        "error: workload.sessions.duration: must be at most 9,007,199,254,740,992 ms (2**53,",
    ),
    (
        {"topology": {"per_inline_byte_cost": "300000000000000s"}},
        "error: topology.per_inline_byte_cost: must be at most 9,007,199,254,740,992 ms",
    ),
    ({"study": {"duration": "500us"}}, "error: study.duration: must be at least 1 ms"),
    (
        {"study": {"bogus": 1}},
        "error: study.bogus: unknown key (known: name, description, seed, replications, ",
    ),
    ({"server": {}}, "error: server: unknown key (known: study, engine, topology, "),
    # results/.. would be the folder above results/, results/. results/ itself
    ({"study": {"name": ".."}}, "error: study.name: must name a folder of its own"),
    (  # its two points ran the same runs, each named for a sweep no run reads
        {"sweep": {"grid": {"sweep.grid": [{"study.seed": [1, 2]}, {"study.seed": [3]}]}}},
        "error: sweep: sweep.grid cannot be swept (a point is one run's scenario, whose sweep "
        "no run reads",
    ),
    (  # the same: its points' runs differ in nothing
        {"sweep": {"grid": {"study.description": ["a", "b"]}}},
        "error: sweep: study.description cannot be swept (no run reads it",
    ),
    ({"sweep": {"zip": {"sweep": [{"grid": {"study.seed": [1]}}]}}}, "sweep cannot be swept"),
    (  # validate passed it, and run stopped at the folder the system refused
        {"study": {"name": "q" * 256}},
        "error: study.name: must be at most 255 characters, a folder name's limit",
    ),
    # a slip of the keyboard sat building its list of runs without end
    (
        {"study": {"replications": 10**20}},
        "error: study.replications: must be at most 1,000,000, the runs a study holds",
    ),
    (  # three lists of 1,000 values took 13.6 GB in their first minute of expanding
        {
            "sweep": {
                "grid": {
                    "study.seed": list(range(1000)),
                    "host_policy.ttl_fraction": [i / 1000 for i in range(1, 1001)],
                    "topology.ttl_floor": list(range(1000)),
                }
            }
        },
        "error: sweep: its lists (1,000 x 1,000 x 1,000 values) make 1,000,000,000 sweep points, "
        "more than a study holds (100,000, each a scenario checked and kept in memory): split it "
        "into studies",
    ),
    (
        {
            "sweep": {
                "grid": {"study.seed": list(range(400))},
                "zip": {"study.duration": [1e3] * 251},
            }
        },
        "error: sweep: its lists (400 x 251 values) make 100,400 sweep points",
    ),
    (  # a sweep reads the clock in whole ms: one more often found nothing new, and 1e-9 ms
        # sweeps ran without end
        {"topology": {"sweep_interval": "0.5ms"}},
        "error: topology.sweep_interval: must be at least 1 ms",
    ),
    ({"study": {"name": "."}}, "error: study.name: must name a folder of its own"),
    # YAML can write a NUL, which no system opens: it was a ValueError from pathlib
    (
        {"workload": {"trace": {"path": "a\0b"}}},
        "error: workload.trace.path: must not contain a NUL",
    ),
    (
        {"workload": {"sessions": {"arrivals": {"path": "a\0b"}}}},
        "error: workload.sessions.arrivals.path: must not contain a NUL",
    ),
    ({"topology": {"gpu_memry": 1}}, "error: topology.gpu_memry: unknown key (did you mean gpu_"),
    ({"topology": {"zzz": 1}}, "error: topology.zzz: unknown key (nnrpsim keys lists them)"),
    (  # a misspelt required key is missing too: the misspelling is reported
        {"workload": {"sessions": {"arrivals": {"pth": "a.csv"}}}},
        "error: workload.sessions.arrivals.pth: unknown key (did you mean path?)",
    ),
    (  # a section under a key of the user's
        {"workload": {"objects": {"kind_sizes": {"tool_schema": {"medain": 2048}}}}},
        "error: workload.objects.kind_sizes.tool_schema.medain: unknown key (did you mean median?)",
    ),
    (
        {"workload": {"objects": {"shared_kinds": {"kv_block": 1}}}},
        "error: workload.objects.shared_kinds.kv_block: must be one of 'camera_block'",
    ),
    (
        {"workload": {"objects": {"private_kinds": {}}}},
        "error: workload.objects.private_kinds: must list at least 1 value",
    ),
    (
        {"workload": {"objects": {"shared_kinds": {"tool_schema": 0}}}},
        "error: workload.objects.shared_kinds.tool_schema: must be greater than 0\n",
    ),
    (
        {"workload": {"objects": {"private_kinds": {"tool_schema": 1, "prompt_segment": "x"}}}},
        "error: workload.objects.private_kinds.prompt_segment: must be a number, got 'x'\n",
    ),
    (  # (a float past 2**63 for an integer: pydantic's own words were "Unable to parse input
        # string as an integer, exceeded maximum size")
        {"study": {"replications": 1e308}},
        "error: study.replications: must be an integer below 2**63, got 1e+308\n",
    ),
    (
        {"workload": {"objects": {"kind_sizes": {"tool_schema": {"median": "2 KiBs"}}}}},
        "error: workload.objects.kind_sizes.tool_schema.median: malformed size '2 KiBs'",
    ),
    ({"topology": {"renewal": "forever"}}, "error: topology.renewal: must be one of 'touch'"),
    (
        {"topology": {"ttl_floor": "10s", "ttl_ceiling": "5s"}},
        "error: topology: ttl_floor (10,000 ms) must not exceed ttl_ceiling (5,000 ms)\n",
    ),
    (
        {"topology": {"per_put_byte_cost": -1e-6}},
        "error: topology.per_put_byte_cost: must be at least 0",
    ),
    ({"topology": {"hosts": "two"}}, "error: topology.hosts: must be an integer"),
    (
        {"host_policy": {"inline_after_invalidate": False}},
        "error: host_policy: best_practice fixes inline_after_invalidate (the spec's rules); "
        "use name: threshold to set it (sweeping host_policy.name, pair each name with a value "
        "of inline_after_invalidate in sweep.zip, for best_practice its default)",
    ),
    (
        {"host_policy": {"name": "always", "min_object_size": "4KiB"}},
        "error: host_policy: always fixes min_object_size",
    ),
    (
        {
            "sweep": {"grid": {"host_policy.name": ["threshold", "connection_scope"]}},
            "host_policy": {"name": "threshold", "min_reuse": 5},
        },
        # a rule the swept value breaks with a key of the base: the point and its values
        "error: sweep point 1 (host_policy.name: 'connection_scope'): host_policy: "
        "connection_scope fixes min_reuse",
    ),
    (
        {"topology": {"hosts": 2}, "sweep": {"grid": {"engine": ["des", "vector"]}}},
        "error: sweep point 1 (engine: 'vector'): topology.hosts above 1 needs engine des",
    ),
    (
        {"study": {"warmup": "2s"}, "sweep": {"zip": {"study.duration": ["1min", "1s"]}}},
        "error: sweep point 1 (study.duration: '1s'): study: warmup (2,000 ms) must be shorter "
        "than duration (1,000 ms)",
    ),
    (
        {"workload": {"objects": {"private_dependency_share": 1.5}}},
        "error: workload.objects.private_dependency_share: must be at most 1",
    ),
    (
        {"workload": {"objects": {"private_dependency_share": 0.5, "shared_per_namespace": 0}}},
        "error: workload.objects: private_dependency_share needs shared objects",
    ),
    ({"topology": {"dependency_cascade": "maybe"}}, "error: topology.dependency_cascade: must be"),
    (
        {"workload": {"objects": {"size": {"median": 0}}}},
        "error: workload.objects.size.median: must be greater than 0 bytes\n",  # stored unit
    ),
    ({"study": {"replications": -1}}, "error: study.replications: must be at least 1"),
    (
        {"host_policy": {"ttl_hint": "5000h"}},
        "error: host_policy.ttl_hint: must be at most 4294967295 ms\n",  # not 4294967295.0
    ),
    (
        {"topology": {"ttl_ceiling": 4294967296}},
        "error: topology.ttl_ceiling: must be at most 4294967295 ms\n",
    ),
    (  # (its square was infinite: a run's memory of "nan bytes"; the bound not in 151 digits)
        {"workload": {"sessions": {"duration_cv": 1.4e154}}},
        "error: workload.sessions.duration_cv: must be at most 1e+150\n",
    ),
    # A lease TTL is a u32 of whole milliseconds: half a one was cut to 0 ("none" for a hint,
    # a traceback for the server's default)
    (
        {"host_policy": {"ttl_hint": "0.5ms"}},
        "error: host_policy.ttl_hint: must be whole milliseconds (a u32 ms field of the "
        "protocol), got 0.5 ms\n",
    ),
    ({"topology": {"default_lease_ttl": "1e-300s"}}, "topology.default_lease_ttl: must be greater"),
    ({"host_policy": {"connection_ttl": "2.5ms"}}, "host_policy.connection_ttl: must be whole"),
    (  # (only threshold takes it: a negative one reached the model's check, a traceback)
        {"host_policy": {"name": "threshold", "min_reuse": -1}},
        "error: host_policy.min_reuse: must be at least 0\n",
    ),
    (
        {"workload": {"trace": {"path": "t.jsonl", "kv_bytes_per_token": "8MiB"}}},
        "error: workload.trace: a Mooncake block of block_tokens x kv_bytes_per_token = "
        "4,294,967,296 bytes is more than an object's 4,294,967,295 (object_bytes is a u32)\n",
    ),
    ({"sweep": {"grid": {"topology.ttl_floor": ["1s", "1.0005s"]}}}, "ttl_floor: must be whole"),
    (
        {"topology": {"gpu_memory": "8 GiBs"}},
        "error: topology.gpu_memory: malformed size '8 GiBs' (a number with one of: B, kB, MB, "
        "GB, TB, KiB, MiB, GiB, TiB)\n",
    ),
    (  # (read as 25 GB/s, eight times the link a network's makers mean by it)
        {"topology": {"link": {"bandwidth": "25Gb/s"}}},
        "error: topology.link.bandwidth: ambiguous rate '25Gb/s': b/s is read as bits or as "
        "bytes; write B/s for bytes a second, bit/s or bps for bits\n",
    ),
    ({"study": {"duration": "10 fortnights"}}, "error: study.duration: malformed duration"),
    (
        {"sweep": {"grid": {"host_policy.ttl_fraction": []}}},
        "error: sweep: grid.host_policy.ttl_fraction must list at least one value",
    ),
    ({"sweep": {}}, "error: sweep: sweep is empty"),
    (
        {"sweep": {"grid": {"host_policy.ttl_fractoin": [0.5]}}},
        "error: sweep.grid.host_policy.ttl_fractoin: unknown key (did you mean ttl_fraction?)",
    ),
    (  # a swept key in a section that does not exist
        {"sweep": {"grid": {"host_polcy.ttl_fraction": [0.5]}}},
        "error: sweep.grid.host_polcy.ttl_fraction: unknown key (did you mean host_policy?)",
    ),
    (  # a swept key by the short name its legends and summary column give it
        {"sweep": {"grid": {"size.median": ["1KiB"]}}},
        "error: sweep.grid.size.median: unknown key (did you mean workload.objects.size?) "
        "(value '1KiB')",
    ),
    (  # a key in the wrong section: where it is, not the nearest spelling here (ttl_floor)
        {"topology": {"ttl_fraction": 0.5}},
        "error: topology.ttl_fraction: unknown key (did you mean host_policy.ttl_fraction?)",
    ),
    (
        {"sweep": {"grid": {"topology.gpu_memory": ["1GiB", -5]}}},
        "error: sweep.grid.topology.gpu_memory: must be greater than 0",
    ),
    (
        {"sweep": {"zip": {"study.seed": [1, 2], "host_policy.ttl_fraction": [0.5]}}},
        "error: sweep: zip lists must have equal lengths, where they have "
        "host_policy.ttl_fraction 1, study.seed 2",  # (write_yaml sorts the keys)
    ),
    (
        {"study": {"warmup": "2min", "duration": "1min"}},
        "error: study: warmup (120,000 ms) must be shorter than duration (60,000 ms)",
    ),
    (  # the warm-up ends at a whole millisecond: 999.5 ms is counted from 1 s
        {"study": {"warmup": "999.5ms", "duration": "1s"}},
        "error: study: warmup (999.5 ms, which ends at 1,000 ms) must be shorter than duration "
        "(1,000 ms)",
    ),
    (  # a plain number is milliseconds: the error says so by giving both in ms
        {"study": {"warmup": "90s", "duration": 5}},
        "error: study: warmup (90,000 ms) must be shorter than duration (5 ms)",
    ),
    ({"engine": "quantum"}, "error: engine: must be one of 'des' or 'vector'"),
    (
        {"workload": {"operations": {"max_in_flight": 0}}},
        "error: workload.operations.max_in_flight: must be at least 1",
    ),
    (
        {"workload": {"operations": {"max_in_flight": 65536}}},
        "error: workload.operations.max_in_flight: must be at most 65535",
    ),
    (
        {"engine": "vector", "topology": {"hosts": 2}},
        "error: scenario: topology.hosts above 1 needs engine des: the vector engine replays",
    ),
    (
        {"engine": "vector", "topology": {"link": {"loss": 0.01}}},
        "error: scenario: topology.link.loss needs engine des: the vector engine has no network",
    ),
    (
        {"engine": "vector", "faults": {"restart_at": "10s"}},
        "error: scenario: faults.restart_at needs engine des: the vector engine injects no faults",
    ),
    (
        {"engine": "vector", "faults": {"memory_pressure_at": "10s"}},
        "error: scenario: faults.memory_pressure_at needs engine des",
    ),
    (
        {"host_policy": {"refused_put_backoff": -1}},
        "error: host_policy.refused_put_backoff: must be at least 0",
    ),
    ("study: {duration: .inf}\n", "error: study.duration: must be a finite duration"),
    ({"study": {"duration": "1e400s"}}, "error: study.duration: must be a finite duration"),
    (
        "workload: {objects: {size: {median: .nan}}}\n",
        "error: workload.objects.size.median: must be a finite size",
    ),
    (
        "workload: {operations: {rate_per_s: .inf}}\n",
        "error: workload.operations.rate_per_s: must be a finite number",
    ),
    (
        "sweep: {grid: {topology.link.bandwidth: [1Gbit/s, .inf]}}\n",
        "error: sweep.grid.topology.link.bandwidth: must be a finite rate",
    ),
    ("study:\n  name: x\n  seed: [1\n", "YAML syntax error"),
    ("- just\n- a list\n", "must be a mapping of sections"),
    (  # YAML keeps the last of two keys: the first workload section would be lost
        "workload: {sessions: {rate_per_s: 3}}\ntopology: {hosts: 2}\nworkload: {}\n",
        ":3: key 'workload' given twice\n",
    ),
    ("study: {name: a, seed: 2, name: b}\n", ":1: key 'name' given twice\n"),
    (
        {
            "sweep": {
                "grid": {"host_policy.ttl_fraction": [0.1, 0.5]},
                "zip": {"host_policy.ttl_fraction": [0.9]},
            }
        },
        "error: sweep: host_policy.ttl_fraction is swept in both grid and zip",
    ),
    (
        {
            "sweep": {
                "grid": {"workload.sessions.rate_per_s": [1, 2]},
                "zip": {"workload.sessions": [{"rate_per_s": 3}]},
            }
        },
        "error: sweep: workload.sessions.rate_per_s is swept within workload.sessions, also swept",
    ),
    # points alike once resolved would be the same runs (same random numbers), twice
    (
        {
            "sweep": {
                "grid": {"topology.hosts": [1, 2], "host_policy.ttl_fraction": [0.1, 0.5, 0.1]}
            }
        },
        "error: sweep.grid.host_policy.ttl_fraction: lists 0.1 twice: points 0 and 4 would be the "
        "same runs (list each value once)\n",
    ),
    (
        {"sweep": {"grid": {"study.duration": ["2min", "90s", "120s"]}}},
        "error: sweep.grid.study.duration: lists '2min' and '120s', which come alike: points 0 "
        "and 2 would be the same runs (list each value once)\n",
    ),
    (
        {
            "sweep": {
                "grid": {"topology.hosts": [1, 2]},
                "zip": {
                    "host_policy.ttl_hint": ["1s", "2s", "1000ms"],
                    "topology.servers": [1, 1, 1],
                },
            }
        },
        "error: sweep.zip: positions 0 and 2 hold the same values (host_policy.ttl_hint: "
        "'1000ms', topology.servers: 1): points 0 and 2 would be the same runs (give each "
        "combination once)\n",
    ),
    (  # the results folder is the base's name: a swept one would be ignored
        {"sweep": {"grid": {"study.name": ["a", "b"]}}},
        "error: sweep: study.name cannot be swept (a study writes one results folder)",
    ),
    (
        {"sweep": {"zip": {"study": [{"name": "a"}, {"name": "b"}]}}},
        "error: sweep: study.name cannot be swept",
    ),
    (  # a shared namespace there would be a host's private one
        {"workload": {"objects": {"namespaces": 1 << 20}}},
        "error: workload.objects.namespaces: must be at most 1048575",
    ),
    ({"topology": {"hosts": 1 << 32}}, "error: topology.hosts: must be at most 4293918720"),
    # a run this machine cannot hold, named by the key furthest above an ordinary study's
    (
        {"workload": {"objects": {"private_per_session": 10**9}}},
        "error: workload.objects.private_per_session: one run would need about ",
    ),
    (
        {"workload": {"sessions": {"rate_per_s": 1e9}}},
        "error: workload.sessions.rate_per_s: one run would need about ",
    ),
    (  # (its memory and count were 330 digits)
        {"workload": {"sessions": {"rate_per_s": 1e300}}},
        "error: workload.sessions.rate_per_s: one run would need about 2.89e+295 TiB of memory "
        "for its 3.38e+304 operations, more than this machine's ",
    ),
    ({"study": {"duration": "100000000h"}}, "error: study.duration: one run would need about "),
    (  # each server keeps its own lease table and memory samples
        {"topology": {"servers": 100_000}},
        "error: topology.servers: one run would need about ",
    ),
    (
        {"sweep": {"grid": {"workload.objects.shared_per_namespace": [50, 10**10]}}},
        "error: workload.objects.shared_per_namespace: one run (sweep point 1) would need about "
        "9.3 TiB of memory for its 40,000,000,000 shared objects, more than this machine's ",
    ),
    (  # a key named in the error is the one at fault, not another it begins like
        {"sweep": {"grid": {"topology.hosts": [1]}, "zip": {"topology.hosts_x": [2]}}},
        "error: sweep.zip.topology.hosts_x: unknown key (did you mean hosts?)",
    ),
]


def test_the_zip_a_fixed_policy_key_is_refused_for_sets_it_where_the_policy_allows():
    """What the refusal of a key a policy fixes suggests, beside a swept policy, is valid."""
    scenario = load_scenario(
        {
            "sweep": {
                "zip": {
                    "host_policy.name": ["best_practice", "threshold"],
                    "host_policy.min_object_size": ["1KiB", "4KiB"],
                }
            }
        }
    )
    policies = [point.scenario.host_policy for point in sweep_points(scenario)]
    assert [(p.name, p.min_object_size) for p in policies] == [
        ("best_practice", 1024),
        ("threshold", 4096),
    ]


@pytest.mark.parametrize(("document", "message"), CASES)
def test_validate_rejects_with_one_line(tmp_path, capsys, document, message):
    path = write_yaml(tmp_path, document)
    status = main(["validate", str(path)])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [  # (YAML 1.1 reads yes, no, on and off as booleans; pydantic took them for 1 and 0)
        ("topology: {max_cache_entries: yes}", "topology.max_cache_entries: must be a number"),
        ("study: {replications: on}", "study.replications: must be a number, got a boolean"),
        ("topology: {link: {loss: off}}", "topology.link.loss: must be a number, got a boolean"),
        ("study: {seed: true}", "study.seed: must be a number, got a boolean"),
        ("topology: {gpu_memory: no}", "topology.gpu_memory: must be a size, got a boolean"),
        ("host_policy: {renewal_body: 0}", "host_policy.renewal_body: must be true or false"),
        ("faults: {announce_restart: 1.0}", "faults.announce_restart: must be true or false"),
        (  # a swept value, each point's
            "sweep: {grid: {topology.max_cache_entries: [2, yes]}}",
            "sweep.grid.topology.max_cache_entries: must be a number, got a boolean (value True)",
        ),
    ],
)
def test_a_boolean_is_no_number_and_a_number_no_boolean(tmp_path, capsys, text, message):
    assert _one_line_error(tmp_path, capsys, text).startswith(f"error: {message}")


@pytest.mark.parametrize(
    ("text", "message"),
    [  # (each said only "must be an integer" and the like: YAML may read a value otherwise)
        ("topology: {hosts: two}", "topology.hosts: must be an integer, got 'two'\n"),
        ("topology: {hosts: 2.5}", "topology.hosts: must be a whole number, got 2.5\n"),
        ("topology: {servers: null}", "topology.servers: must be an integer, got null\n"),
        ("topology: 5", "topology: must be a mapping, got 5\n"),
        (
            "topology: {link: {latency: [1ms]}}",
            "topology.link.latency: must be a duration, got a list",
        ),
        (
            "host_policy: {renewal_body: 0}",
            "host_policy.renewal_body: must be true or false, got 0\n",
        ),
        ("study: {name: {a: 1}}", "study.name: must be text, got a mapping\n"),
        (  # a swept value the reason names is not named twice
            "sweep: {grid: {topology.hosts: [1, two]}}",
            "sweep.grid.topology.hosts: must be an integer, got 'two'\n",
        ),
    ],
)
def test_a_value_of_the_wrong_type_is_named(tmp_path, capsys, text, message):
    assert _one_line_error(tmp_path, capsys, text).startswith(f"error: {message}")


def _one_line_error(tmp_path, capsys, text: str) -> str:
    """What ``validate`` says of a scenario file of ``text``: one line on stderr, exit 2."""
    path = tmp_path / "s.yaml"
    path.write_text(text + "\n")
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    return err


def test_numbers_and_booleans_of_their_own_kind_are_taken(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(
        "topology: {max_cache_entries: 3, link: {loss: 0}}\n"
        "host_policy: {renewal_body: no}\nfaults: {announce_restart: yes}\n"
    )
    assert main(["validate", str(path)]) == 0
    scenario = load_scenario(path)
    assert scenario.topology.max_cache_entries == 3 and scenario.topology.link.loss == 0
    assert scenario.host_policy.renewal_body is False and scenario.faults.announce_restart


@pytest.mark.parametrize(
    ("written", "bytes_per_s"),
    [
        ("10Gbit/s", 1.25e9),
        ("10gbit/s", 1.25e9),
        ("10Gbps", 1.25e9),
        ("10 Mbps", 1.25e6),
        ("1.25GB/s", 1.25e9),
        ("1.25 gB/S", 1.25e9),
        ("640kB/s", 6.4e5),
        ("8bps", 1.0),
        ("100", 100.0),
    ],
)
def test_a_rate_reads_bits_and_bytes_by_their_units(written, bytes_per_s):
    from nnrpsim.scenario.units import parse_rate

    assert parse_rate(written) == pytest.approx(bytes_per_s, rel=1e-12)


@pytest.mark.parametrize("written", ["25Gb/s", "1gb/s", "3 b/s", "10 Mb/S"])
def test_a_rate_in_b_per_second_is_refused_as_ambiguous(written):
    """Read in any case, 25Gb/s was 25 GB/s: a link eight times as fast as its makers mean."""
    from nnrpsim.scenario.units import parse_rate

    with pytest.raises(ValueError, match="ambiguous rate"):
        parse_rate(written)


def test_a_lease_ttl_in_any_unit_is_its_whole_milliseconds():
    """A unit's float noise is no fraction: 1.005 s is 1004.9999999999999 ms, and 1,005 on the
    wire (it was cut to 1,004)."""
    scenario = load_scenario(
        {"topology": {"default_lease_ttl": "1.005s"}, "host_policy": {"ttl_hint": "0.3s"}}
    )
    assert (scenario.topology.default_lease_ttl, scenario.host_policy.ttl_hint) == (1005, 300)
    config = model_config(scenario)
    assert (config.server.default_lease_ttl_ms, config.policy.ttl_hint_ms) == (1005, 300)


def _anchored_list(levels: int) -> str:
    """A YAML list of 10 ** levels numbers nested ``levels`` deep in a few hundred bytes: each
    level lists the one below ten times by its anchor."""
    text = "&a0 [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]"
    for level in range(1, levels):
        text = f"&a{level} [{text}, " + ", ".join([f"*a{level - 1}"] * 9) + "]"
    return text


@pytest.mark.parametrize(
    ("text", "message"),
    [  # the anchors' list made an error line of 52 MB, a duration of 200,001 characters one
        # of 200,097: the value is cut short, its ends or its first items kept
        (
            "sweep: {grid: {host_policy.ttl_fraction: " + _anchored_list(7) + "}}",
            "sweep.grid.host_policy.ttl_fraction: must be a number, got a list (value [[[...], ",
        ),
        (
            f"study: {{duration: '{'9' * 200_000}x'}}",
            f"study.duration: malformed duration '{'9' * 27}...{'9' * 27}x' (a number with one",
        ),
    ],
)
def test_a_long_value_is_named_cut_short(tmp_path, capsys, text, message):
    err = _one_line_error(tmp_path, capsys, text)
    assert err.startswith(f"error: {message}") and len(err) < 400


def test_a_merge_key_may_still_be_overridden(tmp_path):
    """``<<`` brings a mapping's keys in to be overridden: not a key given twice."""
    document = "topology:\n  <<: {hosts: 2, servers: 2}\n  hosts: 3\n"
    scenario = load_scenario(write_yaml(tmp_path, document))
    assert scenario.topology.hosts == 3 and scenario.topology.servers == 2


@pytest.mark.parametrize("newline", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_yaml_syntax_error_names_the_line(tmp_path, capsys, newline):
    path = write_yaml(tmp_path, "study:\n  name: x\n  seed: [1\n".replace("\n", newline))
    assert main(["validate", str(path)]) == 2
    assert f"error: {path}:4: YAML syntax error" in capsys.readouterr().err


def test_a_file_too_big_for_a_scenario_is_refused_unread(tmp_path, capsys):
    """A trace named in the scenario's place was read whole, as one YAML scalar (a file
    without end, ``/dev/zero``, until memory ran out)."""
    path = tmp_path / "trace.csv"
    path.write_bytes(b"time_ms,object,size_bytes\n" + b"0,a,10\n" * (MAX_SCENARIO_BYTES // 7))
    assert main(["validate", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}: more than 16 MiB: not a scenario (a trace or an arrivals log is named "
        "in one, by workload.trace.path or workload.sessions.arrivals.path)\n"
    )


def test_set_overrides_and_their_errors(tmp_path, capsys, small_yaml):
    assert main(["validate", str(small_yaml), "--set", "study.replications=5"]) == 0
    assert "4 sweep points, 20 runs" in capsys.readouterr().out
    assert main(["validate", str(small_yaml), "--set", "study.replications"]) == 2
    assert "error: --set: expected KEY=VALUE" in capsys.readouterr().err
    assert main(["validate", str(small_yaml), "--set", "study.seed=[1"]) == 2  # says why
    assert capsys.readouterr().err == (
        "error: --set study.seed: YAML syntax error: expected ',' or ']', but got '<stream end>'\n"
    )
    twice = "sweep={grid: {topology.hosts: [1]}, grid: {topology.hosts: [2]}}"
    assert main(["validate", str(small_yaml), "--set", twice]) == 2
    assert capsys.readouterr().err == "error: --set sweep: key 'grid' given twice\n"
    assert main(["validate", str(small_yaml), "--set", "topology.links=3"]) == 2
    assert "error: topology.links: unknown key (did you mean link?)" in capsys.readouterr().err
    assert main(["validate", str(small_yaml), "--set", "ttl_fraction=0.3"]) == 2  # a short name
    assert capsys.readouterr().err == (
        "error: ttl_fraction: unknown key (did you mean host_policy.ttl_fraction?)\n"
    )
    for key, reason in [
        ("study..name", "not a dotted key"),
        ("study.", "not a dotted key"),
        ("study.name.x", "'name' is not a section"),
    ]:
        assert main(["validate", str(small_yaml), "--set", f"{key}=1"]) == 2
        assert capsys.readouterr().err == f"error: --set {key}: {reason}\n"
    grid = ["--set", "sweep.grid.topology.hosts=[1, 2, 3]"]
    assert main(["validate", str(small_yaml), *grid]) == 0  # a swept key is one dotted key
    assert "12 sweep points" in capsys.readouterr().out
    engines = ["--set", "sweep.grid.engine=[des, vector]"]
    assert main(["validate", str(small_yaml), *engines]) == 0  # each point's engine is named
    assert "8 sweep points, 16 runs, engine des, vector)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("overrides", "kind", "swept"),
    [
        (["host_policy.ttl_fraction=0.9"], "grid", "host_policy.ttl_fraction"),
        (["workload.invalidations.rate_per_s=1"], "grid", "workload.invalidations.rate_per_s"),
        (  # a key within a section the sweep sets whole
            [
                "sweep={zip: {workload.objects.size: [{median: 1KiB}]}}",
                "workload.objects.size.sigma=0",
            ],
            "zip",
            "workload.objects.size",
        ),
    ],
)
def test_a_set_key_the_sweep_replaces_is_refused(small_yaml, capsys, overrides, kind, swept):
    """Each run took the swept values, the --set changing nothing, silently."""
    argv = ["validate", str(small_yaml), *(part for item in overrides for part in ("--set", item))]
    assert main(argv) == 2
    key = overrides[-1].partition("=")[0]
    assert capsys.readouterr().err == (
        f"error: --set {key}: swept by sweep.{kind}, whose values replace it in every run: "
        f"change them (--set 'sweep.{kind}.{swept}=[...]') or drop the sweep (--set sweep=null)\n"
    )
    assert main([*argv, "--set", "sweep=null"]) == 0  # no sweep: the value is every run's
    assert "1 sweep point, 2 runs" in capsys.readouterr().out


def test_an_empty_scenario_is_every_default(tmp_path, capsys):
    """An empty file is a scenario with no key set: one sweep point, said so in the singular."""
    path = write_yaml(tmp_path, "")
    assert main(["validate", str(path), "--set", "study.replications=1"]) == 0
    assert f"{path}: valid (1 sweep point, 1 run, engine des)" in capsys.readouterr().out


def test_missing_file_and_bad_trace(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.yaml")]) == 2
    assert "No such file" in capsys.readouterr().err
    bad = tmp_path / "log.csv"
    bad.write_text("time_ms,object\n1,a\n")
    path = write_yaml(tmp_path, {"engine": "vector", "workload": {"trace": {"path": str(bad)}}})
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert "missing column 'size_bytes'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_run_this_machine_cannot_hold_is_refused_before_anything_is_written(
    tmp_path, capsys, small_yaml
):
    out = tmp_path / "out"
    too_many = "workload.operations.rate_per_s=1e9"
    assert main(["run", str(small_yaml), "--out", str(out), "--set", too_many]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: workload.operations.rate_per_s: one run (sweep point 0) would")
    assert err.count("\n") == 1 and not out.exists()


def test_a_duration_reaches_2_to_the_53_ms_and_no_further():
    """The last whole millisecond a float holds exactly is taken; the next a float holds is not."""
    from nnrpsim.scenario.units import parse_duration_ms

    assert parse_duration_ms(float(2**53)) == 2**53
    with pytest.raises(ValueError, match=r"^must be at most 9,007,199,254,740,992 ms \(2\*\*53,"):
        parse_duration_ms(float(2**53 + 2))


def test_a_run_whose_size_overflows_a_float_is_refused_saying_so(small_yaml, capsys):
    """An absurd rate overflows the run's counts to infinity and its bytes to NaN (infinity
    times a size): the refusal said "about nan bytes" for its "inf sessions"."""
    sets = ["--set", "sweep=null", "--set", "workload.sessions.rate_per_s=1e308"]
    assert main(["validate", str(small_yaml), *sets]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "error: workload.sessions.rate_per_s: one run would need more than 1.8e+308 bytes of "
        "memory for its more than 1.8e+308 sessions, more than this machine's "
    )
    assert err.count("\n") == 1


def test_a_trace_whose_runs_this_machine_cannot_hold_is_refused_by_its_path(tmp_path, monkeypatch):
    """Trace workloads were not sized at all: each worker reads the whole trace, and a run
    replays its window, so a trace too big for the workers ran them out of memory."""
    trace = str(ROOT.parent / "shared/data/traces/mooncake_synthetic_trace.jsonl")
    raw = {
        "study": {"replications": 2, "duration": "1100s"},
        "engine": "vector",
        "workload": {"trace": {"path": trace}},
    }
    (point,) = sweep_points(load_scenario(raw))
    (size,) = [size for _, size in run_sizes.point_sizes([point])]
    peak = size.peak_bytes("vector")
    monkeypatch.setattr(run_sizes, "machine_memory_bytes", lambda: int(0.9 * peak))
    refusal = (
        r"^workload\.trace\.path: one run would need about .* for its 121,877 trace references,"
    )
    with pytest.raises(ScenarioError, match=refusal):
        nnrpsim.run(raw, out=tmp_path / "out", jobs=1, progress=False)
    monkeypatch.setattr(run_sizes, "machine_memory_bytes", lambda: int(1.5 * peak))
    with pytest.raises(ScenarioError, match=r"^--jobs: 2 runs at once would need .*--jobs 1$"):
        nnrpsim.run(raw, out=tmp_path / "out", jobs=2, progress=False)
    assert not (tmp_path / "out").exists()


def test_runs_at_once_that_this_machine_cannot_hold_are_refused_naming_jobs(
    tmp_path, monkeypatch, small_yaml
):
    """Each run fits, two at once do not: ``--jobs`` is at fault, and says what fits."""
    points = sweep_points(load_scenario(small_yaml))
    peak = max(
        run_size(model_config(point.scenario), sessions_per_s(point.scenario)).peak_bytes(
            point.scenario.engine
        )
        for point in points
    )
    monkeypatch.setattr(run_sizes, "machine_memory_bytes", lambda: int(1.5 * peak))
    refusal = r"^--jobs: 2 runs at once would need about .*: pass --jobs 1$"
    with pytest.raises(ScenarioError, match=refusal):
        nnrpsim.run(small_yaml, out=tmp_path / "out", jobs=2, progress=False)
    assert not (tmp_path / "out").exists()
    with pytest.raises(ScenarioError, match=refusal):
        nnrpsim.sweep(small_yaml, jobs=2)
    result = nnrpsim.run(small_yaml, out=tmp_path / "out", jobs=1, progress=False)
    assert result.status == "complete"
    (tmp_path / "out/runs/p0001-r001.arrow").unlink()  # one run left: two workers are one
    again = nnrpsim.run(small_yaml, out=tmp_path / "out", jobs=2, resume=True, progress=False)
    assert again.status == "complete" and len(again.runs) == len(result.runs)


def test_every_part_of_a_run_can_be_blamed_on_scenario_keys():
    """A part without keys, or a key without an ordinary value, would end a refusal in a
    traceback instead of its one line."""
    assert set(run_sizes.FACTORS) == set(PARTS) - set(TRACE_PARTS)  # (nought in a synthetic run)
    assert set(RUN_PARTS) | set(TRACE_PARTS) == set(PARTS)
    assert set(ENGINE_BYTES) == set(TRACE_READ)
    assert all(set(per_unit) == set(RUN_PARTS) for per_unit in ENGINE_BYTES.values())
    formats = set(get_args(Trace.model_fields["format"].annotation)) - {"auto"}  # (read_as's)
    for reads in TRACE_READ.values():
        assert set(reads) == formats and all(set(r) == set(TRACE_PARTS) for r in reads.values())
    keys = {key for key, _, _ in describe()}
    for part, factors in run_sizes.FACTORS.items():
        assert factors and set(factors) <= keys, part
        assert all(run_sizes.ORDINARY[key] > 0 for key in factors), part


def test_run_arguments_are_checked(tmp_path, capsys, small_yaml):
    assert main(["run", str(small_yaml), "--jobs", "0"]) == 2
    assert "error: --jobs: must be at least 1" in capsys.readouterr().err
    assert main(["run", str(small_yaml), "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "error: --scheduler: only with --executor dask" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"jobs": 0}, "--jobs: must be at least 1"),
        ({"executor": "threads"}, "--executor: must be one of local, dask, not 'threads'"),
        ({"scheduler": "tcp://127.0.0.1:1"}, "--scheduler: only with --executor dask"),
        ({"scheduler": 8786}, r"--scheduler: must be an address \(text\), got 8786"),
    ],
)
def test_api_checks_execution_arguments_before_writing(tmp_path, small_yaml, arguments, message):
    with pytest.raises(ScenarioError, match=message):
        nnrpsim.run(small_yaml, out=tmp_path / "out", progress=False, **arguments)
    assert not (tmp_path / "out").exists()


def test_no_traceback_from_the_console_script(tmp_path):
    path = write_yaml(tmp_path, {"study": {"seed": -1}})
    proc = subprocess.run(
        [sys.executable, "-m", "nnrpsim", "validate", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "error: study.seed: must be at least 0"


def test_keys_gives_defaults_as_a_scenario_writes_them(capsys):
    """Sizes, durations and rates with units, each reading back as its default; null and
    booleans as YAML spells them."""
    from nnrpsim.scenario.key_catalog import KEY_UNITS, describe
    from nnrpsim.scenario.units import parse_duration_ms, parse_rate, parse_size

    assert main(["keys"]) == 0
    shown = {line.split()[0]: line.split()[1:] for line in capsys.readouterr().out.splitlines()}
    assert shown["topology.gpu_memory"][:2] == ["8", "GiB"]
    assert shown["topology.link.bandwidth"][:2] == ["10", "Gbit/s"]
    assert shown["workload.sessions.duration"][:2] == ["60", "s"]
    assert shown["topology.server_workers"][0] == "null"
    assert shown["topology.dependency_cascade"][0] == "true"
    parse = {"size": parse_size, "duration": parse_duration_ms, "rate": parse_rate}
    checked = 0
    for key, default, _ in describe():
        if key in KEY_UNITS and isinstance(default, int | float) and default:
            text = " ".join(shown[key][:2])
            assert parse[KEY_UNITS[key]](text) == pytest.approx(default, rel=1e-9), key
            checked += 1
    assert checked >= 10


def test_keys_gives_lists_and_mappings_as_yaml_reads_them(capsys):
    """Each default without a unit, pasted into a scenario, reads back as itself: a list of
    kinds in YAML's flow style, not a Python tuple (which YAML reads as one string)."""
    from nnrpsim.scenario.key_catalog import KEY_UNITS, REQUIRED, describe

    assert main(["keys"]) == 0
    lines = capsys.readouterr().out.splitlines()
    width = max(len(key) for key, _, _ in describe())  # the key column
    checked = 0
    for line, (key, default, text) in zip(lines, describe(), strict=True):
        if default is REQUIRED or key in KEY_UNITS:
            continue
        rest = line[width:].strip()  # (the help, and what makes the key do nothing, follow)
        shown = rest[: rest.index(text)].strip()
        expected = list(default) if isinstance(default, tuple) else default
        assert yaml.safe_load(shown) == expected, key
        checked += isinstance(default, tuple | dict)
    assert checked >= 5


def test_keys_lists_every_field_with_help(capsys):
    from nnrpsim.scenario.key_catalog import describe

    assert main(["keys"]) == 0
    out = capsys.readouterr().out
    rows = describe()
    assert all(text for _, _, text in rows)  # help text for every field
    for key in (
        "study.warmup",
        "topology.link.latency",
        "workload.trace.kv_bytes_per_token",
        "sweep.grid",
    ):
        assert key in out


def test_keys_names_the_values_a_key_takes(capsys):
    """A key of a fixed set of values lists them, as the error for any other value does: the
    routing rules were in no help text, and ``keys hash`` found nothing. A help that names
    them all (``engine``'s) is left as it is."""
    helps = {key: text for key, _, text in describe()}
    for key in ("topology.routing", "topology.eviction", "host_policy.name", "engine"):
        with pytest.raises(ScenarioError) as refused:
            load_scenario(ROOT / "scenarios/quickstart.yaml", [f"{key}=bogus"])
        accepted = re.findall(r"'(\w+)'", str(refused.value))
        listed = re.findall(r"Choices: (.*)\.$", helps[key])
        # (a help that names each value already, as engine's and routing's, lists none)
        named = key in ("engine", "topology.routing")
        assert listed == ([] if named else [", ".join(accepted)]), key
        assert all(re.search(rf"\b{value}\b", helps[key]) for value in accepted), key
    assert helps["workload.objects.shared_kinds"].endswith(", structured_event_schema.")
    assert main(["keys", "least_sessions"]) == 0
    assert capsys.readouterr().out.split()[0] == "topology.routing"


def test_keys_with_a_word_lists_the_keys_that_mention_it(capsys):
    """Its name or its help, in any case: ``keys ttl`` finds the lease TTL's keys, and a
    renewal's rule whose help speaks of the TTL; a word nothing mentions is an error."""
    from nnrpsim.scenario.key_catalog import describe

    assert main(["keys", "TTL"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    expected = [k for k, _, text in describe() if "ttl" in k.lower() or "ttl" in text.lower()]
    assert listed == expected
    assert {"host_policy.ttl_fraction", "topology.ttl_floor", "topology.renewal"} <= set(listed)
    assert "study.seed" not in listed
    assert main(["keys", "no-such-word"]) == 2
    assert capsys.readouterr().err == "error: keys: no key or help text mentions 'no-such-word'\n"


GOOD_REQUEST = b'{"timestamp": 0, "input_length": 600, "hash_ids": [1, 2]}\n'


def _parquet(columns: dict) -> bytes:
    """A two-row reference log with ``columns`` over the defaults, as Parquet bytes."""
    frame = pd.DataFrame({"time_ms": [1, 2], "object": ["a", "b"], "size_bytes": [3, 3], **columns})
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    return buffer.getvalue()


BAD_TRACES = [
    ("t.jsonl", GOOD_REQUEST + b"\xff\n", "t.jsonl:2: not a Mooncake request ('utf-8' codec"),
    ("t.jsonl", b'{"timestamp": 0, "input_length": 6, "hash_ids": 5}\n', "'hash_ids' must be"),
    ("t.jsonl", b'{"timestamp": 0, "input_length": 6, "hash_ids": [1, true]}\n', "'hash_ids' must"),
    ("t.jsonl", b'{"timestamp": 0, "input_length": 6, "hash_ids": ["1"]}\n', "'hash_ids' must"),
    ("t.jsonl", b'{"timestamp": 0, "input_length": 6, "hash_ids": [1.5]}\n', "'hash_ids' must"),
    (  # json keeps the last of two alike: the other value was dropped without a word
        "t.jsonl",
        GOOD_REQUEST + b'{"timestamp": 0, "input_length": 6, "hash_ids": [1], "timestamp": 9}\n',
        "t.jsonl:2: not a Mooncake request (key 'timestamp' given twice)",
    ),
    ("t.jsonl", b'{"timestamp": 0, "input_length": -6, "hash_ids": [1]}\n', "'input_length'"),
    ("t.jsonl", b'{"timestamp": NaN, "input_length": 6, "hash_ids": [1]}\n', "'timestamp' must"),
    (
        "t.jsonl",
        GOOD_REQUEST + b'{"timestamp": 1e999, "input_length": 6, "hash_ids": [1]}\n',
        "t.jsonl:2: not a Mooncake request ('timestamp' must be a finite number)",
    ),
    ("t.jsonl", b"[1, 2]\n", "t.jsonl:1: not a Mooncake request (not a JSON object)"),
    ("t.jsonl", b'{"timestamp": 0, "hash_ids": [1]}\n', "(no 'input_length')"),
    ("t.csv", b"time_ms,object,size_bytes\n1,a,inf\n", "t.csv:size_bytes: row 0: must be a finite"),
    ("t.csv", b"time_ms,object,size_bytes\n1,a,10\n2,b,1e30\n", "t.csv:size_bytes: row 1:"),
    ("t.csv", b"time_ms,object,size_bytes\nnan,a,10\n", "t.csv:time_ms: row 0: must be a finite"),
    (  # object_bytes is a u32: a larger object has no frame to travel in
        "t.csv",
        b"time_ms,object,size_bytes\n1,a,4294967295\n2,b,4294967296\n",
        "t.csv:size_bytes: row 1: must be at most 4,294,967,295 bytes (object_bytes is a u32)",
    ),
    ("t.csv", b"time_ms,object\n1,a\n", "missing column 'size_bytes'"),
    ("t.csv", b"time_ms,object,size_bytes\n1,a,2048.0\n2,a,2.5\n", "row 1: must be a whole number"),
    # an empty cell names no object (pooled, such rows made one hot object); "NA" is a name
    ("t.csv", b"time_ms,object,size_bytes\n1,NA,3\n2,,3\n", "t.csv:object: row 1: empty"),
    ("t.parquet", _parquet({"object": ["a", None]}), "t.parquet:object: row 1: empty"),
    # so is an empty operation: such rows were pooled into one operation
    (
        "t.csv",
        b"time_ms,object,size_bytes,operation\n1,a,3,r1\n2,b,3,\n",
        "operation: row 1: empty",
    ),
    ("t.parquet", _parquet({"operation": ["r1", None]}), "t.parquet:operation: row 1: empty"),
    (  # pandas read the first of two columns alike, and renamed the second
        "t.csv",
        b"time_ms,object,size_bytes,size_bytes\n1,a,3,4000\n",
        "t.csv: column 'size_bytes' given twice",
    ),
    ("t.csv", b"time_ms,object,size_bytes,kind,kind\n1,a,3,1,2\n", "column 'kind' given twice"),
    (  # a row longer than the header: pandas read its columns one place along
        "t.csv",
        b"time_ms,object,size_bytes\n0,100,1,500\n",
        "t.csv: a row has more fields than the header has names",
    ),
    ("t.txt", b"1,a,10\n", "workload.trace.format: cannot tell the format of t.txt"),
    ("t.parquet", b"not parquet", "t.parquet: cannot read parquet:"),
    ("t.csv", b"time_ms,object,size_bytes\n", "t.csv: the log has no rows"),
    (  # (times in ns, read as ms: the key that scales them named)
        "t.jsonl",
        GOOD_REQUEST + b'{"timestamp": 1e19, "input_length": 6, "hash_ids": [1]}\n',
        "t.jsonl: the trace spans more milliseconds than an int64 holds, at time_scale 1 "
        "(workload.trace.time_scale scales its times)",
    ),
    ("t.jsonl", b'{"timestamp": 0, "input_length": 0, "hash_ids": []}\n', "no block references"),
    (  # hash ids and length disagree: the blocks' sizes would be wrong, silently
        "t.jsonl",
        GOOD_REQUEST + b'{"timestamp": 1, "input_length": 1025, "hash_ids": [1, 2]}\n',
        "t.jsonl:2: 2 hash_ids, but an input_length of 1,025 tokens makes 3 blocks of 512 "
        "(workload.trace.block_tokens must be the trace's block size)",
    ),
    (
        "t.csv",
        b"time_ms,object,size_bytes,operation\n1,a,10,r1\n1,b,10,r2\n2,c,10,r1\n",
        "t.csv:operation: row 2: an operation's rows must share time_ms",
    ),
    (
        "t.csv",
        b"time_ms,object,size_bytes,kind\n1,a,10,tool_schema\n2,b,10,kv_block\n",
        "t.csv:kind: row 1: 'kv_block' is not an object kind (a name such as tool_schema",
    ),
    ("t.csv", b"time_ms,object,size_bytes,kind\n1,a,10,10\n", "t.csv:kind: row 0: '10' is not"),
    (  # a long cell is named cut short: its ends
        "t.csv",
        b"time_ms,object,size_bytes,kind\n1,a,10," + b"k" * 10_000 + b"\n",
        f"t.csv:kind: row 0: '{'k' * 27}...{'k' * 28}' is not an object kind",
    ),
    (
        "t.csv",
        b"time_ms,object,size_bytes,kind\n1,a,10,8\n2,b,10,7\n3,a,10,7\n",
        "t.csv:kind: row 2: object 'a' has another kind above",
    ),
]


@pytest.mark.parametrize(("name", "content", "message"), BAD_TRACES)
def test_bad_traces_fail_validate_and_run_with_one_line(tmp_path, capsys, name, content, message):
    (tmp_path / name).write_bytes(content)
    path = write_yaml(tmp_path, {"engine": "vector", "workload": {"trace": {"path": name}}})
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ScenarioError, match=re.escape(message)):
        nnrpsim.sweep(path)


SPANS_TOO_LONG = [
    (  # times that fit, scaled past an int64's milliseconds
        {"trace": {"path": "t.csv", "time_scale": 1e308}},
        "the trace spans more milliseconds than an int64 holds, at time_scale 1e+308 "
        "(workload.trace.time_scale scales its times)",
    ),
    (
        {"sessions": {"arrivals": {"path": "a.csv", "time_scale": 1e308}}},
        "the arrivals span more milliseconds than an int64 holds, at time_scale 1e+308 "
        "(workload.sessions.arrivals.time_scale scales its times)",
    ),
    (  # (the span itself past a float's range)
        {"sessions": {"arrivals": {"path": "far.csv"}}},
        "the arrivals span more milliseconds than an int64 holds, at time_scale 1 ",
    ),
]


@pytest.mark.parametrize(("workload", "message"), SPANS_TOO_LONG)
def test_a_log_spanning_past_an_int64_is_one_line_without_numpys_warning(
    tmp_path, capsys, workload, message
):
    """numpy's overflow warning (an error in the tests) printed above the one line."""
    (tmp_path / "t.csv").write_text("time_ms,object,size_bytes\n0,a,10\n10,b,10\n")
    (tmp_path / "a.csv").write_text("TIMESTAMP\n0\n10\n")
    (tmp_path / "far.csv").write_text("TIMESTAMP\n-1e308\n1e308\n")
    path = write_yaml(tmp_path, {"engine": "vector", "workload": workload})
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_swept_trace_is_checked_too(tmp_path, capsys):
    (tmp_path / "good.jsonl").write_bytes(GOOD_REQUEST)
    (tmp_path / "bad.jsonl").write_bytes(b"{}\n")
    document = {
        "engine": "vector",
        "workload": {"trace": {"path": str(tmp_path / "good.jsonl")}},
        "sweep": {
            "grid": {
                "workload.trace.path": [str(tmp_path / "good.jsonl"), str(tmp_path / "bad.jsonl")]
            }
        },
    }
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 2
    assert "bad.jsonl:1: not a Mooncake request (no 'timestamp')" in capsys.readouterr().err


def test_a_swept_block_size_the_trace_was_not_cut_in_is_refused(tmp_path, capsys):
    """600 tokens in two hash ids: blocks of 512 fit, blocks of 256 would be three."""
    (tmp_path / "t.jsonl").write_bytes(GOOD_REQUEST)
    document = {
        "engine": "vector",
        "workload": {"trace": {"path": "t.jsonl"}},
        "sweep": {"grid": {"workload.trace.block_tokens": [512, 256]}},
    }
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 2
    assert capsys.readouterr().err == (
        "error: t.jsonl:1: 2 hash_ids, but an input_length of 600 tokens makes 3 blocks of 256 "
        "(workload.trace.block_tokens must be the trace's block size)\n"
    )


def test_scenario_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_bytes(b"study: {name: \xff}\n")
    assert main(["validate", str(path)]) == 2
    assert (
        capsys.readouterr().err == f"error: {path}: not UTF-8 text (byte 14: invalid start byte)\n"
    )


@pytest.mark.parametrize("manifest", ["{not json", "[1]", '{"status": "complete"}'])
def test_resume_with_an_unreadable_manifest_keeps_the_runs(tmp_path, capsys, small_yaml, manifest):
    out = tmp_path / "out"
    args = ["run", str(small_yaml), "--out", str(out), "--quiet", "--set", "study.replications=1"]
    args += ["--set", "study.duration=20s", "--set", "study.warmup=0s"]
    assert main(args) == 0
    runs = sorted(p.name for p in (out / "runs").iterdir())
    (out / "manifest.json").write_text(manifest)
    capsys.readouterr()
    assert main([*args, "--resume"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --resume: {out / 'manifest.json'} ") and err.count("\n") == 1
    assert sorted(p.name for p in (out / "runs").iterdir()) == runs


def test_a_sweeps_runs_with_their_replications_are_counted_against_what_a_study_holds(
    tmp_path, capsys, monkeypatch
):
    """Each point may sweep its own replications: the runs are their sum over the points."""
    monkeypatch.setattr("nnrpsim.scenario.sweep.MAX_RUNS", 10)
    document = {
        "study": {"replications": 2},
        "sweep": {"grid": {"study.replications": [3, 4], "study.seed": [1, 2]}},
    }
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 2
    assert capsys.readouterr().err == (
        "error: study.replications: 4 sweep points make 14 runs with their replications, more "
        "than a study holds (10): fewer replications or points\n"
    )
    document["sweep"]["grid"]["study.replications"] = [2, 3]  # 10 runs: held
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 0
