"""`plot.png` of `aqmlab run` (`aqmlab.plots`): the queue, goodput per flow as a box of its per-bin samples
(Flent's per-flow box plot), and each flow's one-way delay percentiles."""

from __future__ import annotations

import aqmlab
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from aqmlab.plots import BOX_PERCENTILES, MAX_BARS, MAX_BOXES, per_bin_goodput, run_figure

SCENARIO = {"run": {"duration": "6s", "warmup": "2s", "seed": 3},
            "topology": {"bottleneck": {"rate": "5Mbps", "delay": "10ms"}},
            "queue": {"kind": "red", "limit": 60, "min_th": 5, "max_th": 15},
            "flows": [{"kind": "tcp", "count": 4, "start_jitter": "500ms"}]}


@pytest.fixture(scope="module")
def result() -> aqmlab.api.Result:
    return aqmlab.run(SCENARIO)


def test_per_bin_goodput_is_the_measured_window_only(result) -> None:
    """4 s after a 2 s warm-up in 100 ms bins: 40 bins, whose mean is each flow's in-order delivery,
    `app_goodput_bps`, as the bins count it (a bin from the warm-up would pull the mean of a flow that
    starts late)."""
    bins = per_bin_goodput(result)
    assert list(bins.columns) == list(result.flows["id"])
    assert len(bins) == 40
    goodput = result.flows.set_index("id")["app_goodput_bps"]
    for fid in bins.columns:
        assert bins[fid].mean() == pytest.approx(goodput[fid], rel=1e-9), fid


def test_each_flow_is_a_box_of_its_bins(result) -> None:
    bins = per_bin_goodput(result)
    fig = run_figure(result)
    ax = fig.axes[1]
    # With boxes unfilled, bxp draws the median of box i as a horizontal line at x = i ± 0.25.
    horizontal = [line.get_ydata() for line in ax.lines
                  if len(line.get_ydata()) == 2 and line.get_ydata()[0] == line.get_ydata()[1]]
    for fid in bins.columns:
        lo, q1, med, q3, hi = np.percentile(bins[fid] / 1e6, BOX_PERCENTILES)
        assert any(y[0] == pytest.approx(med) for y in horizontal), (fid, med)
        assert any(y[0] == pytest.approx(hi) for y in horizontal), (fid, hi)  # the upper whisker's cap
    assert not ax.patches  # no bars
    plt.close(fig)


def test_delay_panel_shows_each_flows_percentiles(result) -> None:
    fig = run_figure(result)
    drawn = {line.get_label(): line.get_ydata() for line in fig.axes[2].lines}
    for col, label in (("delay_p50_s", "median"), ("delay_p99_s", "99th percentile")):
        np.testing.assert_allclose(drawn[label], result.flows[col] * 1e3)
    plt.close(fig)


def test_without_per_flow_series_goodput_is_a_bar_per_flow() -> None:
    res = aqmlab.run({**SCENARIO, "output": {"per_flow_timeseries": False}})
    assert per_bin_goodput(res) is None
    fig = run_figure(res)
    heights = [p.get_height() for p in fig.axes[1].patches]
    np.testing.assert_allclose(heights, res.flows["goodput_bps"] / 1e6)
    plt.close(fig)


def test_above_max_boxes_goodput_is_a_bar_per_flow() -> None:
    n = MAX_BOXES + 1
    res = aqmlab.run({**SCENARIO, "flows": [{"kind": "tcp", "count": n, "start_jitter": "500ms"}]})
    fig = run_figure(res)
    assert len(fig.axes[1].patches) == n
    plt.close(fig)


def test_plot_of_many_flows_is_a_histogram_not_a_mark_each() -> None:
    n = 20_000
    summary = {"flows": [{"id": i, "goodput_bps": float(i % 97), "delay_p50_s": 0.01 + i % 7 / 1e3,
                          "delay_p95_s": 0.02, "delay_p99_s": 0.03} for i in range(n)],
               "queues": [], "aggregate": {"goodput_bps": 1.0, "jain_index": 1.0}}
    ts = pd.DataFrame({"time_s": [0.1, 0.2], "queue_pkts": [1, 2], "queue_avg": [float("nan")] * 2})
    fig = run_figure(aqmlab.api.Result(summary, ts))
    assert len(fig.axes[1].patches) <= MAX_BARS
    assert len(fig.axes[2].patches) <= MAX_BARS and not fig.axes[2].lines
    plt.close(fig)


def test_recorded_packets_get_a_delay_cdf_per_class() -> None:
    """With `output.packet_delays` a fourth panel: one CDF per class tag, each ending at 1 at the tag's
    largest delay (the builtin RRUL records its down and up probes as tags 1 and 2)."""
    res = aqmlab.run(aqmlab.with_overrides(aqmlab.builtin_path("rrul"), {"run.duration": "15s"}))
    fig = run_figure(res)
    assert len(fig.axes) == 4
    curves = {line.get_label(): line for line in fig.axes[3].lines}
    for tag, d in res.packet_delays.groupby("class"):
        line = curves[f"class {tag} ({len(d):,} packets)"]
        x, y = line.get_xdata(), line.get_ydata()
        assert x[-1] == pytest.approx(d["delay_s"].max() * 1e3) and y[-1] == pytest.approx(1.0)
        assert np.interp(0.5, y, x) == pytest.approx(d["delay_s"].median() * 1e3, rel=0.05)
    plt.close(fig)


def test_reverse_queue_is_drawn_when_data_flows_through_it(result) -> None:
    labels = lambda fig: [line.get_label() for line in fig.axes[0].lines]  # noqa: E731
    fig = run_figure(result)  # forward flows only: their ACKs alone use the reverse queue
    assert "reverse queue (packets)" not in labels(fig) and len(fig.axes) == 3
    plt.close(fig)
    res = aqmlab.run({**SCENARIO, "flows": [*SCENARIO["flows"], {"kind": "tcp", "direction": "reverse"}]})
    fig = run_figure(res)
    line = next(l for l in fig.axes[0].lines if l.get_label() == "reverse queue (packets)")
    np.testing.assert_array_equal(line.get_ydata(), res.timeseries["reverse_queue_pkts"])
    plt.close(fig)


def test_per_flow_tcp_state_adds_a_cwnd_panel() -> None:
    res = aqmlab.run({**SCENARIO, "output": {"per_flow_tcp_state": True}})
    fig = run_figure(res)
    assert len(fig.axes) == 4
    lines = {line.get_label(): line.get_ydata() for line in fig.axes[3].lines}
    assert set(lines) == {f"flow{i}" for i in range(4)}
    for i in range(4):
        np.testing.assert_array_equal(lines[f"flow{i}"], res.timeseries[f"flow{i}_cwnd_segments"])
    plt.close(fig)


def test_cwnd_of_many_flows_is_a_median_and_a_band() -> None:
    n = MAX_BOXES + 1
    res = aqmlab.run({**SCENARIO, "flows": [{"kind": "tcp", "count": n, "start_jitter": "500ms"}],
                      "output": {"per_flow_tcp_state": True}})
    fig = run_figure(res)
    median = next(line for line in fig.axes[3].lines if line.get_label() == "median flow")
    cwnd = res.timeseries[[f"flow{i}_cwnd_segments" for i in range(n)]]
    np.testing.assert_allclose(median.get_ydata(), cwnd.median(axis=1))
    assert len(fig.axes[3].lines) == 1
    plt.close(fig)
