"""``nnrpsim validate`` warns, before anything runs, of links that could not carry every body
inline: the closed-form bytes of the object blocks, spread over the links from hosts to
servers, against their bandwidth."""

from __future__ import annotations

import re

import pytest

import nnrpsim
from nnrpsim.cli import main
from tests.conftest import write_yaml

ADVICE = re.compile(
    r"warning: all points: inlining every body would send about ([0-9.]+) Mbit/s over each "
    r"link from a host to a server \((\d+) x (\d+), sessions spread evenly\), ([0-9.]+) times "
    r"its ([0-9.]+) Mbit/s: unless caching keeps more than (\d+) % of those bytes off the "
    r"links \(a wire_saving above (0\.\d\d)\), they fall behind "
    r"\(peak_link_utilisation, operations_behind\)"
)
SENDS = re.compile(r"inlining everything sends ([0-9.]+) MB/s")


def _validate(tmp_path, capsys, bandwidth: str, **topology) -> tuple[str, str]:
    document = {
        "study": {"name": "links", "duration": "10min", "warmup": "2min"},
        "topology": {"link": {"bandwidth": bandwidth}, **topology},
        "workload": {"sessions": {"rate_per_s": 1, "duration": "30s"}},
        "host_policy": {"name": "never"},
    }
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 0
    out, err = capsys.readouterr()
    return out, err


def test_a_link_too_slow_for_every_body_inline_is_named_with_how_much(tmp_path, capsys):
    out, err = _validate(tmp_path, capsys, "4Mbit/s")
    (advice,) = ADVICE.findall(err)
    offered, hosts, servers, times, bandwidth, keep, saving = advice
    (sends,) = SENDS.findall(out)  # the workload's line: MB/s over all hosts
    assert (hosts, servers, bandwidth) == ("1", "1", "4")
    assert float(offered) == pytest.approx(float(sends) * 8, rel=0.01)
    assert float(times) == pytest.approx(float(offered) / 4, rel=0.01)
    assert int(keep) == round((1 - 1 / float(times)) * 100)
    # in the run's own measure: its saving of all the bytes, frames' too, must be at least it
    assert float(saving) == pytest.approx(1 - 1 / float(times), abs=0.005)


def test_a_link_thousands_of_times_too_slow_says_what_caching_cannot_reach(tmp_path, capsys):
    """At 1 kbit/s the bodies are thousands of times the link: that many times, without an
    exponent (it said 2.39e+03), and the saving that would be needed with the decimals that
    keep it below everything (it said more than 100 %, a wire_saving above 1.00)."""
    _, err = _validate(tmp_path, capsys, "1kbit/s")
    (offered, times, keep, saving) = re.findall(
        r"about ([0-9.]+) Mbit/s over .*, ([0-9,]+) times its 0.001 Mbit/s: unless caching "
        r"keeps more than ([0-9.]+) % of those bytes off the links \(a wire_saving above "
        r"([0-9.]+)\)",
        err,
    )[0]
    assert float(times.replace(",", "")) == pytest.approx(float(offered) * 1000, rel=0.01)
    assert int(times.replace(",", "")) >= 1000
    needed = 1 - 1 / float(times.replace(",", ""))
    assert float(saving) < 1 and float(saving) == pytest.approx(needed, abs=5e-4)
    assert float(keep) < 100 and keep == f"{float(saving) * 100:.{len(saving) - 4}f}"


def test_a_link_beyond_any_scale_too_slow_is_named_without_a_crash(tmp_path, capsys):
    """At 1e-300 bytes a second the needed saving rounds to 1 in a float, whose logarithm
    raised ``math domain error`` out of ``validate``, and the factor had 307 digits."""
    _, err = _validate(tmp_path, capsys, "1e-300")
    (times, keep, saving) = re.findall(
        r", ([0-9.]+e\+[0-9]+) times its .*: unless caching keeps more than ([0-9.]+) % of "
        r"those bytes off the links \(a wire_saving above ([0-9.]+)\)",
        err,
    )[0]
    assert float(times) > 1e300
    assert (keep, saving) == ("99.9999", "0.999999")


def test_the_bodies_are_spread_over_every_link_from_a_host_to_a_server(tmp_path, capsys):
    """Two hosts of the same sessions each send twice as much in all; over 2 x 3 links each
    carries a third of one host's bodies."""
    _, one = _validate(tmp_path, capsys, "1Mbit/s")
    _, six = _validate(tmp_path, capsys, "1Mbit/s", hosts=2, servers=3)
    (one_link,) = ADVICE.findall(one)
    (six_links,) = ADVICE.findall(six)
    assert six_links[1:3] == ("2", "3")
    assert float(six_links[3]) == pytest.approx(float(one_link[3]) * 2 / 6, rel=0.01)


@pytest.mark.parametrize(("bandwidth", "engine"), [("1Gbit/s", "des"), ("1Mbit/s", "vector")])
def test_no_link_advice_where_the_links_keep_up_or_there_are_none(
    tmp_path, capsys, bandwidth, engine
):
    """A fast link carries it all; the vector engine has no links."""
    document = {
        "study": {"name": "links", "duration": "10min", "warmup": "2min"},
        "engine": engine,
        "topology": {"link": {"bandwidth": bandwidth}},
        "workload": {"sessions": {"rate_per_s": 1, "duration": "30s"}},
    }
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 0
    assert "inlining every body would send" not in capsys.readouterr().err


def test_a_trace_too_heavy_for_its_sessions_link_is_named(tmp_path, capsys):
    """A trace's one session sends its references' bodies over one link: a thousand 100-byte
    objects in 9.991 s, each an inline block of 120 bytes (a 16-byte header, padded to 8),
    are 96.1 kbit/s, 9.61 times a 10 kbit/s link. A fast link gets no warning."""
    log = tmp_path / "refs.csv"
    rows = [f"{10 * i},{i % 50},100" for i in range(1000)]
    log.write_text("time_ms,object,size_bytes\n" + "\n".join(rows) + "\n")
    document = {
        "study": {"name": "trace", "duration": "20s", "warmup": "0s"},
        "topology": {"link": {"bandwidth": "10kbit/s"}},
        "workload": {"trace": {"path": str(log), "format": "csv"}},
    }
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 0
    err = capsys.readouterr().err
    (warning,) = [line for line in err.splitlines() if "every body" in line]
    expected = 1000 * 120 * 8 / 9.991 / 1e3  # kbit/s
    assert f"about {expected:.3g} kbit/s over the link its session uses" in warning
    assert f"{expected / 10:.3g} times its 10 kbit/s" in warning
    document["topology"]["link"]["bandwidth"] = "1Mbit/s"
    assert main(["validate", str(write_yaml(tmp_path, document))]) == 0
    assert "every body" not in capsys.readouterr().err


def test_a_lossy_links_resends_count_in_its_load(tmp_path, capsys):
    """A link that loses half its frames sends each twice on average: the bodies' load, and
    so the saving that keeps up, is the lossless one's doubled, as the run's own measure of
    the links' load (resends included) finds it."""
    _, lossless = _validate(tmp_path, capsys, "6Mbit/s")
    _, lossy = _validate(tmp_path, capsys, "6Mbit/s", link={"bandwidth": "6Mbit/s", "loss": 0.5})
    (clean,) = ADVICE.findall(lossless)
    (warning,) = [line for line in lossy.splitlines() if "every body" in line]
    assert "sessions spread evenly) with the resends of its 50 % loss, " in warning
    offered, times = re.findall(r"about ([0-9.]+) Mbit/s .*, ([0-9.]+) times its", warning)[0]
    assert float(offered) == pytest.approx(2 * float(clean[0]), rel=0.01)
    assert float(times) == pytest.approx(2 * float(clean[3]), rel=0.01)
    study = {
        "study": {"name": "links", "duration": "3min", "warmup": "1min", "replications": 1},
        "topology": {"link": {"bandwidth": "1Gbit/s", "retransmit_timeout": "1ms"}},
        "workload": {"sessions": {"rate_per_s": 1, "duration": "30s"}},
        "host_policy": {"name": "never"},
        "sweep": {"grid": {"topology.link.loss": [0, 0.5]}},
    }
    load = nnrpsim.sweep(study, progress=False)["peak_link_utilisation"]
    assert load[1] == pytest.approx(2 * load[0], rel=0.05)
