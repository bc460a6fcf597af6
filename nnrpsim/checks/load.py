"""Before a run: links or server workers that could not carry every body inline, so that
unless caching takes enough off, operations fall behind."""

from __future__ import annotations

from ..display_units import below_one, counted, figures, key_scale, percent
from ..model.workload_means import workload_means
from ..protocol import inline_object_bytes
from ..run_config import model_config
from ..scenario import Point, Scenario
from ..traces import load_trace
from ..workload_facts import sessions_per_s
from .wording import warnings_by_text


def link_advice(points: list[Point], of_points: int) -> list[str]:
    """Before a run: a warning for each set of DES ``points`` (of ``of_points``) whose links
    could not carry every body inline: unless caching keeps enough of those bytes off, the
    links fall behind, and operations with them. A synthetic workload's bytes are its closed-
    form mean, spread evenly over the links from hosts to servers (as the routing spreads
    sessions); a trace's are those of its references within the run, over their span, on the
    one link its one session uses; a lossy link sends each again as often as it loses it, on
    average 1 / (1 - loss) times. (A frame's own bytes come on top: the load is at least
    this.)"""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        scenario = point.scenario
        if scenario.engine != "des":
            continue
        topology, trace = scenario.topology, scenario.workload.trace
        if trace is None:
            means = workload_means(model_config(scenario).workload, sessions_per_s(scenario))
            offered = means.inline_bytes_per_s / (topology.hosts * topology.servers)
            over = (
                f"each link from a host to a server ({topology.hosts} x {topology.servers}, "
                "sessions spread evenly)"
            )
        else:
            window = load_trace(trace).before(int(scenario.study.duration))
            span_s = (window.end_ms - window.start_ms) / 1e3
            offered = float(inline_object_bytes(window.size).sum()) / span_s
            over = "the link its session uses (one session replays the trace)"
        loss = topology.link.loss
        if loss:
            offered /= 1 - loss  # (the resends: on average 1 / (1 - loss) sends a frame)
            over += f" with the resends of its {percent(loss)} loss"
        times = offered / topology.link.bandwidth
        if times < 1:
            continue
        factor, unit = key_scale("topology.link.bandwidth", [offered, topology.link.bandwidth])
        saving, kept = below_one(1 - 1 / times)
        text = (
            f"inlining every body would send about {offered * factor:.3g} {unit} over {over}, "
            f"{figures(times)} times its {topology.link.bandwidth * factor:.3g} {unit}: "
            f"unless caching keeps more than {kept} of those bytes off the links (a "
            f"wire_saving above {saving}), they fall behind "
            "(peak_link_utilisation, operations_behind)"
        )
        found.append((text, point.index))
    return warnings_by_text(found, of_points)


def inline_server_load(scenario: Scenario) -> tuple[float, float]:
    """The workers a server keeps busy on average if every body goes inline, a synthetic
    workload's sessions spread evenly over the servers: its frames' part (the per-operation
    cost, a request's frames at the least) and its inline bytes' (in closed form,
    :mod:`nnrpsim.model.workload_means`)."""
    topology = scenario.topology
    means = workload_means(model_config(scenario).workload, sessions_per_s(scenario))
    frames_per_s = means.operations_per_s * means.frames_per_operation
    frames = frames_per_s * topology.per_operation_cost / 1e3
    bodies = means.inline_bytes_per_s * topology.per_inline_byte_cost / 1e3
    return frames / topology.servers, bodies / topology.servers


def server_advice(points: list[Point], of_points: int) -> list[str]:
    """Before a run: a warning for each set of DES ``points`` (of ``of_points``) whose servers'
    workers could not process every body inline: each frame's per-operation cost and each
    inline byte's, at the workload's closed-form rates spread evenly over the servers, keep
    more workers busy than ``server_workers`` gives; frames then wait without end, and
    sessions fall behind. Caching takes the bytes' part off (its PUTs cost their bytes once),
    never the frames'. (A trace's one session is not judged: its frames are its requests.)"""
    found: list[tuple[str, int]] = []  # (a warning's text, a point it holds for)
    for point in points:
        scenario, topology = point.scenario, point.scenario.topology
        workers = topology.server_workers
        if scenario.engine != "des" or workers is None or scenario.workload.trace is not None:
            continue
        frames, bodies = inline_server_load(scenario)
        if frames + bodies < workers:
            continue
        busy = f"{figures(frames + bodies)} of a server's workers busy at once on average"
        spread = f"sessions spread evenly over {counted(topology.servers, 'server')}"
        if frames >= workers:
            remedy = (
                f"its frames alone keep {figures(frames)} busy, which no caching takes "
                "off: more server_workers or servers"
            )
        else:
            _, share = below_one((frames + bodies - workers) / bodies)
            remedy = f"unless caching keeps more than {share} of the bodies off the servers"
        text = (
            f"inlining every body would keep {busy} ({spread}), against its "
            f"{counted(workers, 'worker')}: "
            f"{remedy}, frames wait without end and sessions fall behind (peak_server_load, "
            "operations_behind)"
        )
        found.append((text, point.index))
    return warnings_by_text(found, of_points)
