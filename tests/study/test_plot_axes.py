"""A plot's axes: every numeric key the scenario library sweeps is drawn on an axis that says
what it is, and a metric's axis shows all that is drawn."""

from __future__ import annotations

import matplotlib.pyplot
import pandas as pd
import pytest

from nnrpsim import plots
from nnrpsim.plots.axes import geometric_steps, log_scale
from nnrpsim.plots.metric import axis_label
from nnrpsim.scenario import load_scenario, sweep_points
from tests.conftest import ROOT


def _swept_numeric_keys() -> set[str]:
    keys = set()
    for path in sorted((ROOT / "scenarios").glob("*.yaml")):
        for point in sweep_points(load_scenario(path)):
            keys |= {
                key
                for key, value in point.params.items()
                if isinstance(value, int | float) and not isinstance(value, bool)
            }
    return keys


@pytest.mark.parametrize("key", sorted(_swept_numeric_keys()))
def test_a_swept_numeric_key_has_an_axis_label_of_its_own(key):
    """A swept key drawn along an axis was labelled by its bare name (`host_policy.renew_margin`,
    which says neither what the fraction is of nor that it is one)."""
    assert axis_label(key, "") != key


def test_a_rate_drawn_from_zero_keeps_a_margin_over_its_highest_point(drawn):
    """Hit rates of 0.79 to 0.93 (the dependencies study): the axis from zero kept the margin
    matplotlib had left over the range drawn, 0.79 to 0.93, and the highest line touched the
    top of the axes."""
    key = "workload.invalidations.rate_per_s"
    summary = pd.DataFrame(
        {
            key: [0.0, 0.01, 0.05, 0.1],
            "hit_rate": [0.93, 0.91, 0.85, 0.79],
            "hit_rate_ci95": [0.004] * 4,
            "replications": 3,
        }
    )
    plots._metric_vs(summary, key, "hit_rate", [], None, "x")
    (ax,) = drawn[0].axes
    bottom, top = ax.get_ylim()
    assert bottom == 0 and top >= 0.934 * 1.04  # the band's top, and 4 % of the axis over it


@pytest.mark.parametrize(
    ("saving", "band", "expected_bottom"),
    [
        ([-0.2, 0.3, 0.98], 0.1, "below"),  # caching cost more than it saved: drawn below 0
        ([0.2, 0.5, 0.98], 0.3, "below"),  # a band below 0 is a value the saving can take
        ([0.2, 0.5, 0.98], 0.1, "zero"),
    ],
)
def test_the_wire_saving_is_drawn_below_zero_and_never_above_one(
    drawn, saving, band, expected_bottom
):
    """The wire saving is negative where caching's PUTs, ACKs and references cost more than
    the bodies it kept off (small objects used once): an axis from zero, as a rate's, hid
    that. It cannot exceed one (the all-inline bytes are the bytes sent plus those saved)."""
    key = "workload.objects.size.median"
    summary = pd.DataFrame(
        {
            key: [256, 4096, 65536],
            "wire_saving": saving,
            "wire_saving_ci95": [band] * 3,
            "replications": 2,
        }
    )
    plots._metric_vs(summary, key, "wire_saving", [], None, "x")
    (ax,) = drawn[0].axes
    bottom, top = ax.get_ylim()
    lowest = min(saving) - band
    if expected_bottom == "below":
        assert bottom < min(lowest, 0)  # all of it, and a margin under it
    else:
        assert bottom == 0
    assert top == 1.05  # (the band reaches 1.08, a value the saving cannot take)
    assert ax.get_ylabel() == "wire saving (fraction of the all-inline bytes)"


def test_a_latency_over_decades_is_drawn_on_a_log_axis_and_a_fraction_never(drawn):
    """server_load's p99 latency: 2-5 ms, then 123 ms at the load no server keeps up with
    inlining everything. On a linear axis every point below the last read as zero, the
    cached policies' 2 ms among them. A hit rate over decades keeps its linear axis from
    zero, where differences in points read."""
    key = "workload.sessions.rate_per_s"
    summary = pd.DataFrame(
        {
            key: [1.0, 2.0, 4.0, 8.0],
            "p99_latency_ms": [2.7, 2.9, 4.9, 123.5],
            "p99_latency_ms_ci95": [0.2, 0.3, 2.5, 500.0],
            "hit_rate": [0.02, 0.07, 0.2, 0.6],
            "hit_rate_ci95": [0.01] * 4,
            "replications": 3,
        }
    )
    plots._metric_vs(summary, key, "p99_latency_ms", [], None, "x")
    plots._metric_vs(summary, key, "hit_rate", [], None, "x")
    latency, rate = (figure.axes[0] for figure in drawn)
    latency.figure.canvas.draw()
    assert latency.get_yscale() == "log"
    bottom, top = latency.get_ylim()
    assert 0 < bottom < 2.5 and top > 123.5  # every mean, its band's top too
    ticks = [tick.get_text() for tick in latency.yaxis.get_ticklabels() if tick.get_text()]
    assert "10" in ticks and "100" in ticks  # plain numbers
    assert rate.get_yscale() == "linear" and rate.get_ylim()[0] == 0


def test_log_axes_are_labelled_in_plain_numbers(drawn):
    """A trade-off over decades of memory and of hit rate (the Mooncake trace's budgets):
    matplotlib wrote its ticks as 10^2 and 2 x 10^-1; they read 100 and 0.2 now, on both
    axes, and on a swept key's log axis too."""
    summary = pd.DataFrame(
        {
            "topology.gpu_memory": [2**30, 2**32, 2**34, 2**36],
            "mean_gpu_bytes": [2**30, 2**32, 2**34, 2**36],
            "hit_rate": [0.02, 0.07, 0.2, 0.6],
            "hit_rate_ci95": [0.0] * 4,
            "replications": 1,
        }
    )
    plots._capacity_tradeoff(summary, ["topology.gpu_memory"], None, "hit_rate")
    plots._metric_vs(summary, "topology.gpu_memory", "hit_rate", [], None, "x")
    for figure, axes in zip(drawn, [("x", "y"), ("x",)], strict=True):
        (ax,) = figure.axes
        figure.canvas.draw()
        for which in axes:
            axis = getattr(ax, f"{which}axis")
            assert axis.get_scale() == "log"
            ticks = axis.get_ticklabels() + axis.get_ticklabels(minor=True)
            texts = [tick.get_text() for tick in ticks if tick.get_text()]
            assert texts and all(float(text) > 0 for text in texts), texts  # no 10^2, no $


@pytest.mark.parametrize(
    ("swept", "expected"),
    [([], ["point 0", "point 1"]), (["topology.hosts"], ["hosts = 2", "hosts = 4"])],
)
def test_the_bars_by_kind_name_each_point_as_the_summary_has_it(swept, expected, drawn):
    """A study without a sweep named its bar "point 0.0": a row of numbers only came out of
    the summary as floats."""
    summary = pd.DataFrame(
        {"point": [0, 1], "replications": [1, 1], "hit_rate": [0.5, 0.6], "topology.hosts": [2, 4]}
    )
    kinds = pd.DataFrame(
        {
            "point": [0, 1],
            "kind": ["tool_schema", "tool_schema"],
            "mean_gpu_bytes": [1e6, 2e6],
            "bytes_from_cache": [3e6, 4e6],
        }
    )
    plots._bytes_by_kind(kinds, summary[["point", "replications", "hit_rate", *swept]], swept, None)
    (fig,) = drawn
    assert [tick.get_text() for tick in fig.axes[0].get_yticklabels()] == expected


def _labelled_ticks(ax) -> list[tuple[float, str]]:
    """The x axis's ticks within its view that have a label, with the label."""
    low, high = sorted(ax.get_xlim())
    ticks = ax.xaxis.get_major_ticks() + ax.xaxis.get_minor_ticks()
    return sorted(
        (tick.get_loc(), tick.label1.get_text())
        for tick in ticks
        if tick.label1.get_text() and low <= tick.get_loc() <= high
    )


def _log_ticks_over(low: float, high: float) -> list[tuple[float, str]]:
    """The labelled ticks of a log x axis over ``low`` to ``high``: some, and each in view."""
    figure, ax = matplotlib.pyplot.subplots()
    ax.plot([low, high], [1, 2])
    log_scale(ax, "x")
    figure.canvas.draw()
    shown = _labelled_ticks(ax)
    matplotlib.pyplot.close(figure)
    assert shown
    return shown


@pytest.mark.parametrize(("low", "high"), [(1e-6, 1.0), (1.0, 1e7), (2.0, 2e6)])
def test_log_ticks_read_in_full_over_many_decades(low, high):
    """A count swept over a million (entries, objects) had its ticks written 1e+06, and a
    rate of 2 x 10^-5 was 2e-05: each tick reads in full, thousands separated."""
    shown = _log_ticks_over(low, high)
    for place, text in shown:
        assert "e" not in text and "$" not in text, text
        assert float(text.replace(",", "")) == pytest.approx(place, rel=1e-9), text
        if place >= 1e4:
            assert "," in text, text


@pytest.mark.parametrize(("low", "high"), [(1e-300, 1e-298), (1e298, 1e300), (1e-9, 1e-7)])
def test_log_ticks_beyond_a_millionth_to_a_million_billion_take_an_exponent(low, high):
    """A swept rate of 1e-300 to 1e-298 was ticked in three labels of 300 digits each, run
    together along the axis: beyond the plain range, a tick says its exponent."""
    shown = _log_ticks_over(low, high)
    for place, text in shown:
        assert len(text) <= 12 and "e" in text, text
        assert float(text) == pytest.approx(place, rel=1e-5), text
    key = "workload.invalidations.rate_per_s"
    assert _swept_axis(key, [1e-300, 1e-299, 1e-298]) == ("log", ["1e-300", "1e-299", "1e-298"])


def test_a_log_axis_takes_the_unit_of_its_middle_decade(drawn):
    """Object sizes of 256 B to 1 MiB were drawn in MiB, the largest's unit, their ticks
    0.001 to 1; memory of 4 KiB to 1 GiB in GiB. Each now reads in its middle decade's."""
    key = "workload.objects.size.median"
    summary = pd.DataFrame(
        {
            key: [256, 4096, 65536, 2**20],
            "mean_gpu_bytes": [2**12, 2**18, 2**24, 2**30],
            "hit_rate": [0.1, 0.5, 0.8, 0.2],
            "hit_rate_ci95": [0.0] * 4,
            "replications": 1,
        }
    )
    plots._metric_vs(summary, key, "hit_rate", [], None, "x")
    plots._capacity_tradeoff(summary, [key], None, "hit_rate")
    sizes, memory = (figure.axes[0] for figure in drawn)
    assert sizes.get_xlabel().endswith("(KiB)") and sizes.get_xscale() == "log"
    assert memory.get_xlabel().endswith("(MiB)") and memory.get_xscale() == "log"
    low, high = sizes.lines[0].get_xdata()[[0, -1]]
    assert (low, high) == (0.25, 1024)  # the points where they were, in KiB


def _swept_axis(key: str, values: list[float]) -> tuple[str, list[str]]:
    """The scale of the x axis ``metric_figure`` draws ``key`` on, swept to ``values``, and
    the tick labels it shows within its range."""
    summary = pd.DataFrame(
        {
            key: values,
            "hit_rate": [0.3] * len(values),
            "hit_rate_ci95": [0.05] * len(values),
            "replications": 2,
        }
    )
    figure = plots.metric_figure(summary, key, "hit_rate")
    ax = figure.axes[0]
    figure.canvas.draw()
    shown = _labelled_ticks(ax)
    matplotlib.pyplot.close(figure)
    return ax.get_xscale(), [text for _, text in shown]


def test_a_sweep_that_doubles_is_drawn_on_a_log_axis_ticked_at_its_values():
    """capacity_planning's budgets, 32 to 512 MiB, and session rates, 0.5 to 2 a second,
    span less than a factor of 20: drawn on a linear axis, three of five budgets stood in
    its first quarter, ticked 0, 100, 200..."""
    budgets = [32 * 2**20, 64 * 2**20, 128 * 2**20, 256 * 2**20, 512 * 2**20]
    assert _swept_axis("topology.gpu_memory", budgets) == ("log", ["32", "64", "128", "256", "512"])
    assert _swept_axis("workload.sessions.rate_per_s", [0.5, 1, 2]) == ("log", ["0.5", "1", "2"])


def test_a_log_axis_names_the_swept_values_where_they_read_exactly_and_apart():
    """ttl_sweep's hints: the log scale labelled 10 alone between 2 and 90 s."""
    hints = [2000, 5000, 10000, 20000, 45000, 90000]
    assert _swept_axis("host_policy.ttl_hint", hints) == ("log", ["2", "5", "10", "20", "45", "90"])
    # else the log scale's own ticks: values that need more than four figures (a third),
    # two that crowd each other (1 and 1.1 on an axis of three decades), more than eight
    for values in ([1 / 3, 1, 3, 9], [1, 1.1, 100, 1000], [2.0**n for n in range(10)]):
        scale, labels = _swept_axis("workload.sessions.rate_per_s", values)
        assert scale == "log" and set(labels) < {"0.1", "1", "10", "100", "1,000"}, labels


@pytest.mark.parametrize(
    ("values", "geometric"),
    [
        ([1, 2, 4], True),
        ([4, 1, 2, 2], True),  # (in any order, repeated: one per line of the plot)
        ([1, 10, 100, 1000], True),
        ([1, 2.04, 4.1], True),  # (steps within 5 % of each other)
        ([1, 2], False),  # (two points: a line either way)
        ([0, 1, 2, 4], False),
        ([1, 2, 4.5], False),
        ([1, 1.2, 1.44], False),  # (steps too small to crowd a linear axis)
        ([1, 2, 3, 4], False),
    ],
)
def test_geometric_steps(values, geometric):
    assert geometric_steps(pd.Series(values, dtype=float)) is geometric
