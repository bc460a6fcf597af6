"""``nnrpsim validate`` warns, before anything runs, of servers whose workers could not process
every body inline, as it does of links: the closed-form frames and inline bytes a second, at
the server's per-operation and per-byte costs, against ``server_workers``."""

from __future__ import annotations

import re

import pytest

import nnrpsim
from nnrpsim.checks.load import inline_server_load
from nnrpsim.cli import main
from nnrpsim.scenario import parse_scenario
from tests.conftest import write_yaml

ADVICE = re.compile(
    r"warning: all points: inlining every body would keep ([0-9.]+) of a server's workers busy "
    r"at once on average \(sessions spread evenly over (\d+) servers?\), against its (\d+) "
    r"workers?: (.*), frames wait without end and sessions fall behind \(peak_server_load, "
    r"operations_behind\)"
)


def _document(rate: float, workers: int | None, servers: int = 1, cost: str = "50us") -> dict:
    return {
        "study": {"name": "load", "replications": 1, "duration": "100s", "warmup": "40s"},
        "topology": {
            "servers": servers,
            "server_workers": workers,
            "per_operation_cost": cost,
            "gpu_memory": "4GiB",
        },
        "workload": {
            "sessions": {"rate_per_s": rate, "duration": "20s"},
            "operations": {"rate_per_s": 5},
            "objects": {"size": {"median": "64KiB", "sigma": 0.8}},
        },
        "host_policy": {"name": "never"},
    }


def _advice(tmp_path, capsys, document: dict) -> list[tuple[str, ...]]:
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 0
    return ADVICE.findall(capsys.readouterr().err)


def test_the_closed_form_load_is_the_one_the_des_measures():
    """Inlining every body on one server with workers to spare: the DES's peak_server_load
    (the busiest server's processing time over the measured time) is the closed form's."""
    scenario = parse_scenario(_document(rate=20, workers=4))
    frames, bodies = inline_server_load(scenario)
    (measured,) = nnrpsim.sweep(scenario, progress=False)["peak_server_load"]
    assert frames + bodies == pytest.approx(measured, rel=0.1)
    assert 0.5 < frames + bodies < 4  # (a load that tells a rate from nothing)


def test_the_closed_form_counts_a_frame_for_each_camera_block_of_a_request():
    """Requests that name all four of their session's camera blocks are four frames each:
    the per-operation cost is paid four times, as the DES measures."""
    document = _document(rate=4, workers=16, cost="5ms")
    document["workload"]["objects"] |= {
        "private_per_session": 4,
        "private_kinds": {"camera_block": 1},
    }
    document["workload"]["operations"] |= {"private_refs": 1_000_000}
    scenario = parse_scenario(document)
    frames, bodies = inline_server_load(scenario)
    (measured,) = nnrpsim.sweep(scenario, progress=False)["peak_server_load"]
    assert frames + bodies == pytest.approx(measured, rel=0.1)
    # 4 frames x 4 sessions/s x 20 s x 5 requests/s x 5 ms
    assert frames == pytest.approx(4 * 4 * 20 * 5 * 5e-3)


def test_a_server_its_bodies_overload_is_named_with_how_much_caching_takes(tmp_path, capsys):
    (advice,) = _advice(tmp_path, capsys, _document(rate=30, workers=1))
    busy, servers, workers, remedy = advice
    frames, bodies = inline_server_load(parse_scenario(_document(rate=30, workers=1)))
    assert (servers, workers) == ("1", "1")
    assert float(busy) == pytest.approx(frames + bodies, rel=1e-2) and float(busy) > 1
    keep = round((frames + bodies - 1) / bodies * 100)
    assert remedy == f"unless caching keeps more than {keep} % of the bodies off the servers"
    # over two servers, each takes half: below one worker, nothing said
    assert _advice(tmp_path, capsys, _document(rate=30, workers=1, servers=2)) == []


def test_frames_no_caching_takes_off_are_said_so(tmp_path, capsys):
    """At 50 ms a frame the frames alone need more workers than there are."""
    (advice,) = _advice(tmp_path, capsys, _document(rate=2, workers=2, cost="50ms"))
    assert advice[3].endswith("which no caching takes off: more server_workers or servers")


def test_no_server_advice_without_a_worker_limit_or_on_the_vector_engine(tmp_path, capsys):
    """Without ``server_workers`` processing is a delay, never a queue; the vector engine has
    no servers' time."""
    assert _advice(tmp_path, capsys, _document(rate=40, workers=None)) == []
    vector = {**_document(rate=40, workers=None), "engine": "vector"}
    assert _advice(tmp_path, capsys, vector) == []
