"""TFRC (RFC 5348) as a flow kind through the Python API (issue #13): runs, reports its state,
competes with TCP, rejects bad keys."""

from __future__ import annotations

import pytest

import aqmlab


def scenario(flows: list[dict], *, seed: int = 1, duration: str = "30s") -> dict:
    return {"run": {"duration": duration, "warmup": "10s", "seed": seed},
            "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}},
            "queue": {"kind": "red", "limit": 100, "min_th": 10, "max_th": 30, "max_p": 0.1},
            "flows": flows}


def test_tfrc_flows_report_rate_rtt_and_loss_event_rate() -> None:
    res = aqmlab.run(scenario([{"kind": "tfrc", "count": 3, "start_jitter": "1s"}]))
    f = res.flows
    assert (f["kind"] == "tfrc").all()
    # Three flows share 10 Mb/s: together they fill most of it (criterion: > 80 %).
    assert f["goodput_bps"].sum() > 0.8 * 10e6 * 972 / 1000
    assert (f["tfrc_loss_event_rate"] > 0).all()
    assert (f["tfrc_rtt_s"] >= 0.04).all()
    assert (f["tfrc_feedbacks"] > 100).all()


def test_tfrc_is_tcp_friendly_within_a_factor_two() -> None:
    tcp = {"kind": "tcp", "count": 4, "mss": "972B", "header_bytes": "28B", "delayed_ack": False, "start_jitter": "1s"}
    res = aqmlab.run(scenario([tcp, {"kind": "tfrc", "count": 4, "start_jitter": "1s"}], duration="60s"))
    g = res.flows.groupby("kind")["goodput_bps"].mean()
    assert 0.5 < g["tfrc"] / g["tcp"] < 2.0, g


def test_tfrc_rejects_udp_keys() -> None:
    with pytest.raises(aqmlab.ScenarioError, match=r'flows\[0\]\.rate: not a key of kind "tfrc"; its own keys are: packet_size'):
        aqmlab.run(scenario([{"kind": "tfrc", "rate": "1Mbps"}]))
