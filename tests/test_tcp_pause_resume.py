"""A TCP flow whose application pauses (`stop`) and writes again (`resume`) on the same connection,
and RFC 5681 §4.1's restart window after the idle period (`restart_after_idle`): Lee 2002's on/off
clusters as the spec recommends running them (ns-2's FTP stop/start with `slow_start_restart_`)."""

from __future__ import annotations

import aqmlab
import numpy as np
import pytest


def paused(restart: bool, **extra) -> dict:
    return {
        "run": {"duration": "30s", "warmup": "1s", "seed": 1},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}, "access": {"rate": "100Mbps", "delay": "1ms"}},
        "queue": {"kind": "droptail", "limit": 100},
        "flows": [{"kind": "tcp", "stop": "10s", "resume": "20s", "restart_after_idle": restart, **extra}],
        "output": {"bin": "100ms", "per_flow_timeseries": True, "per_flow_tcp_state": True},
    }


def test_a_paused_flow_delivers_nothing_while_paused_and_continues_on_the_same_connection() -> None:
    res = aqmlab.run(paused(True))
    ts = res.timeseries
    g = ts["flow0_goodput_bps"]
    assert g[(ts["time_s"] > 11) & (ts["time_s"] <= 20)].max() == 0, "in flight drains within a second"
    assert g[(ts["time_s"] > 22)].mean() > 9e6, "the link is full again after the restart"
    assert len(res.flows) == 1, "one connection throughout"
    held = ts.loc[(ts["time_s"] > 11) & (ts["time_s"] <= 20), "flow0_cwnd_segments"]
    assert held.nunique() == 1 and held.iloc[0] > 20, "no timeout collapses the window during the pause"


def test_the_restart_window_after_the_pause_is_the_initial_window() -> None:
    def cwnd_around_resume(restart: bool) -> tuple[float, float]:
        ts = aqmlab.run(paused(restart)).timeseries
        c = ts.set_index(np.round(ts["time_s"], 3))["flow0_cwnd_segments"]
        return float(c[20.0]), float(c[20.1])  # the bins ending at the resume and 100 ms after it

    held, first_with = cwnd_around_resume(True)
    same_held, first_without = cwnd_around_resume(False)
    assert held == same_held > 20, "the window is held through the pause"
    # From IW 10, slow start at ~44 ms RTT averages well under the held window in the first 100 ms.
    assert first_with < 0.5 * held
    assert first_without >= held


@pytest.mark.parametrize(("flow", "key", "fragment"), [
    ({"resume": "20s"}, "resume", "needs stop"),
    ({"stop": "10s", "resume": "5s"}, "resume", "must be after stop"),
    ({"stop": "10s", "resume": "40s"}, "resume", "before run.duration"),
    ({"stop": "10s", "resume": "20s", "app_rate": "1Mbps"}, "resume", "long-lived bulk flow"),
])
def test_bad_resume_is_refused_with_the_key_named(flow: dict, key: str, fragment: str) -> None:
    sc = paused(False)
    sc["flows"] = [{"kind": "tcp", **flow}]
    with pytest.raises(aqmlab.ScenarioError, match=rf"flows\[0\]\.{key}.*{fragment}"):
        aqmlab.validate(sc)


def test_resume_is_a_tcp_key() -> None:
    sc = paused(False)
    sc["flows"] = [{"kind": "udp-cbr", "rate": "1Mbps", "stop": "10s", "resume": "20s"}]
    with pytest.raises(aqmlab.ScenarioError, match=r"flows\[0\]\.resume.*not a key of kind"):
        aqmlab.validate(sc)
