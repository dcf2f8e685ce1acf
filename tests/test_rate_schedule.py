"""A bottleneck whose rate changes over time (`[topology.bottleneck] rate_schedule`): the link
carries each scheduled rate, an outage holds the queue, disciplines react as they should to a drop
in capacity, and the result says what the schedule was."""

from __future__ import annotations

import copy

import pytest

import aqmlab
from aqmlab.plots import run_figure

STEP = {
    "run": {"duration": "20s", "warmup": "2s", "seed": 3},
    "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms",
                                "rate_schedule": [{"at": "8s", "rate": "2Mbps"}, {"at": "14s", "rate": "10Mbps"}]},
                 "access": {"rate": "100Mbps", "delay": "1ms"}},
    "queue": {"kind": "droptail", "limit": 1000},
    "flows": [{"kind": "tcp", "count": 4, "profile": "linux", "start_jitter": "500ms"}],
    "output": {"bin": "500ms"},
}


def _with_queue(queue: dict) -> dict:
    sc = copy.deepcopy(STEP)
    sc["queue"] = queue
    return sc


@pytest.fixture(scope="module")
def fifo() -> aqmlab.Result:
    return aqmlab.run(STEP)


@pytest.fixture(scope="module")
def codel() -> aqmlab.Result:
    return aqmlab.run(_with_queue({"kind": "codel"}))


def _total_goodput(result: aqmlab.Result, start: float, end: float) -> float:
    ts = result.timeseries
    cols = [c for c in ts.columns if c.endswith("_goodput_bps")]
    window = ts[(ts["time_s"] > start + 1e-9) & (ts["time_s"] <= end + 1e-9)]  # time_s: each bin's end
    return float(window[cols].sum(axis=1).mean())


def test_tcp_fills_each_rate_of_the_schedule(fifo, codel) -> None:
    payload = 1448 / 1500  # the linux profile's segments on the wire
    # Whole phases, leaving time after each change for the flows to follow it (after the step down,
    # the drops it causes are repaired by 9.5 s and the receivers release what they held behind
    # the holes in one burst, so that phase is measured from 10 s). Behind CoDel the
    # goodput is the link rate; behind the 1000-packet FIFO the link is as busy, but the fivefold
    # queueing delay after the step fires retransmission timeouts whose copies the link also carries.
    for start, end, rate in [(3, 8, 10e6), (10, 14, 2e6), (16, 20, 10e6)]:
        assert _total_goodput(codel, start, end) == pytest.approx(rate * payload, rel=0.03), (start, end)
    assert fifo.queues.iloc[0]["utilization"] > 0.99
    # Payload first received cannot exceed what the link carried; here the busy link carried only
    # unique data, so the two are equal (to the last bit of a double).
    carried = (6 * 10e6 + 6 * 2e6 + 6 * 10e6) / 18 * payload
    assert fifo.aggregate["goodput_bps"] <= carried or fifo.aggregate["goodput_bps"] == pytest.approx(carried, rel=1e-12)


def test_a_drop_in_capacity_bloats_a_fifo_and_codel_drains_it(fifo, codel) -> None:
    # The FIFO's standing queue (bytes) takes five times as long to drain at 2 Mb/s; CoDel's
    # sojourn-based control brings the queue back to a few packets.
    def mean_queue(result: aqmlab.Result, start: float, end: float) -> float:
        ts = result.timeseries
        return float(ts[(ts["time_s"] > start) & (ts["time_s"] <= end)]["queue_pkts"].mean())

    assert mean_queue(fifo, 10, 14) > 100  # 1000 packets of Linux-sized windows: hundreds queued
    assert mean_queue(codel, 10, 14) < 0.1 * mean_queue(fifo, 10, 14)


def test_an_outage_stops_delivery_and_the_queue_waits_it_out() -> None:
    sc = copy.deepcopy(STEP)
    sc["topology"]["bottleneck"]["rate_schedule"] = [{"at": "8s", "rate": "0bps"}, {"at": "10s", "rate": "10Mbps"}]
    res = aqmlab.run(sc)
    ts = res.timeseries
    down = ts[(ts["time_s"] > 8.5) & (ts["time_s"] <= 10.0)]
    cols = [c for c in ts.columns if c.endswith("_goodput_bps")]
    assert (down[cols].sum(axis=1) == 0).all()
    # Busy at most 16 of the 18 measured seconds, plus the packet already on the wire at 8 s
    # (1500 B at 10 Mb/s, 1.2 ms): a change never cuts a transmission short.
    assert res.queues.iloc[0]["utilization"] <= (16 + 0.0012) / 18
    assert _total_goodput(res, 12, 20) == pytest.approx(10e6 * 1448 / 1500, rel=0.03)


def test_the_schedule_is_echoed_and_the_run_is_reproducible(fifo) -> None:
    echoed = fifo.summary["scenario"]["topology"]["bottleneck"]["rate_schedule"]
    assert echoed == [{"at": "8s", "rate": "2Mbps"}, {"at": "14s", "rate": "10Mbps"}]
    again = aqmlab.run(STEP)
    drop_wall = lambda summary: {k: v for k, v in summary.items() if k != "wall_seconds"}  # noqa: E731
    assert drop_wall(again.summary) == drop_wall(fifo.summary)
    assert again.timeseries.equals(fifo.timeseries)


def test_a_toml_schedule_reads_like_the_dict(tmp_path) -> None:
    text = """
[run]
duration = "20s"
warmup = "2s"
seed = 3

[topology.bottleneck]
rate = "10Mbps"
delay = "20ms"
rate_schedule = [ { at = "8s", rate = "2Mbps" }, { at = "14s", rate = "10Mbps" } ]

[topology.access]
rate = "100Mbps"
delay = "1ms"

[queue]
kind = "droptail"
limit = 1000

[output]
bin = "500ms"

[[flows]]
kind = "tcp"
count = 4
profile = "linux"
start_jitter = "500ms"
"""
    path = tmp_path / "step.toml"
    path.write_text(text)
    assert aqmlab.validate(path)["topology"] == aqmlab.validate(STEP)["topology"]


def test_the_capacity_series_and_plot_show_the_schedule(fifo) -> None:
    ts = fifo.timeseries.set_index(fifo.timeseries["time_s"].round(6))
    # 500-ms bins: 10 Mb/s until 8 s, 2 Mb/s until 14 s (bin ends 8.5 … 14.0), then 10 Mb/s.
    assert ts.loc[8.0, "capacity_bps"] == 10e6 and ts.loc[8.5, "capacity_bps"] == 2e6
    assert ts.loc[14.0, "capacity_bps"] == 2e6 and ts.loc[14.5, "capacity_bps"] == 10e6
    assert (ts["reverse_capacity_bps"] == ts["capacity_bps"]).all()  # the schedule sets both directions
    titles = [ax.get_title() for ax in run_figure(fifo).axes]
    assert "bottleneck capacity per bin and total goodput" in titles
    without = aqmlab.run({**STEP, "topology": {**STEP["topology"], "bottleneck": {"rate": "10Mbps", "delay": "20ms"}},
                          "run": {"duration": "3s", "seed": 3}})
    assert "capacity_bps" not in without.timeseries
    assert not any("capacity" in ax.get_title() for ax in run_figure(without).axes)
