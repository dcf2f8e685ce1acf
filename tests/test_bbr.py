"""BBR v1 (Linux's tcp_bbr.c; docs/bbr.md) end to end on the 10 Mb/s, 20 ms dumbbell.

Bounds are stated from BBR's design before measuring and are not tuned to the results:
* alone, BBR keeps the link busy (utilisation > 0.9) with cwnd = 2·BDP + a few segments, so in
  PROBE_BW at most about one BDP waits in the queue (Cardwell et al. 2016, draft-cardwell-iccrg-
  bbr-congestion-control-00 §4.2.3.2); CUBIC with a large drop-tail buffer fills it;
* several BBR flows converge to fair shares of the max-bandwidth estimate (Jain's index ≥ 0.9);
* under FQ-CoDel each flow gets its own queue, so BBR and CUBIC get about equal shares
  (each ≥ 40% of the total).
"""

from __future__ import annotations

import aqmlab
import pytest
from aqmlab.exceptions import ScenarioError

RATE = 10e6
# Round trip: 2 × (20 ms bottleneck + 1 ms access); one BDP of 1500-B packets.
BDP_PACKETS = RATE * 0.042 / (1500 * 8)


def scenario(flows: list[dict], *, queue: dict, duration: str = "30s") -> dict:
    return {
        "run": {"duration": duration, "warmup": "10s", "seed": 1},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}, "access": {"rate": "100Mbps", "delay": "1ms"}},
        "queue": queue,
        "flows": [{"kind": "tcp", "start_jitter": "1s", **f} for f in flows],
        "output": {"per_flow_timeseries": False},
    }


BBR = {"congestion_control": "bbr", "variant": "sack"}
CUBIC = {"congestion_control": "cubic", "variant": "sack"}
BIG_DROPTAIL = {"kind": "droptail", "limit": 1000}


def jain(xs) -> float:
    xs = list(xs)
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def test_one_bbr_flow_fills_the_link_with_a_standing_queue_of_at_most_one_bdp() -> None:
    bbr = aqmlab.run(scenario([BBR], queue=BIG_DROPTAIL))
    cubic = aqmlab.run(scenario([CUBIC], queue=BIG_DROPTAIL))
    q_bbr, q_cubic = bbr.queues.iloc[0], cubic.queues.iloc[0]
    assert q_bbr["utilization"] > 0.9
    assert q_bbr["mean_len_packets"] <= BDP_PACKETS, f"BBR mean queue {q_bbr['mean_len_packets']:.1f} pkts"
    assert q_bbr["mean_len_packets"] < 0.25 * q_cubic["mean_len_packets"], (
        f"BBR {q_bbr['mean_len_packets']:.1f} vs CUBIC {q_cubic['mean_len_packets']:.1f} pkts")


def test_several_bbr_flows_share_fairly() -> None:
    res = aqmlab.run(scenario([{**BBR, "count": 4}], queue={"kind": "droptail", "limit": 100}))
    assert res.queues.iloc[0]["utilization"] > 0.9
    assert jain(res.flows["goodput_bps"]) >= 0.9, list(res.flows["goodput_bps"])


def test_bbr_and_cubic_get_equal_shares_under_fq_codel() -> None:
    """First run without RACK-TLP (2026-11-29, seed 1) this failed: BBR 0.25 Mb/s, CUBIC 8.31 Mb/s,
    BBR's flow stalled for seconds on retransmissions lost again that only the RTO repaired. BBR
    now defaults to RACK-TLP as Linux runs it (docs/bbr.md); the bound is the one stated then."""
    res = aqmlab.run(scenario([BBR, CUBIC], queue={"kind": "fq_codel"}))
    g = list(res.flows["goodput_bps"])
    assert min(g) >= 0.4 * sum(g), g
    assert res.flows.iloc[0]["timeouts"] == 0


def test_bbr_defaults_to_rack_tlp_and_can_run_without_it() -> None:
    flow = aqmlab.validate(scenario([BBR], queue=BIG_DROPTAIL))["flows"][0]
    assert flow["rack_tlp"] is True
    off = aqmlab.validate(scenario([{**BBR, "rack_tlp": False}], queue=BIG_DROPTAIL))["flows"][0]
    assert off["rack_tlp"] is False


def test_bbr_runs_are_deterministic_for_a_seed() -> None:
    sc = scenario([{**BBR, "count": 2}], queue={"kind": "droptail", "limit": 100}, duration="5s")
    sc["run"]["warmup"] = "1s"
    a, b = aqmlab.run(sc), aqmlab.run(sc)
    assert list(a.flows["goodput_bps"]) == list(b.flows["goodput_bps"])


@pytest.mark.parametrize(("flow", "key", "message"), [
    ({"congestion_control": "bbr", "variant": "newreno"}, "variant", "needs variant = \"sack\""),
    ({"congestion_control": "bbr", "variant": "sack", "pacing": False}, "pacing", "needs pacing = true"),
    ({"congestion_control": "cubic", "pacing": True}, "pacing", "pacing is only implemented for bbr"),
    ({"congestion_control": "bbr", "variant": "sack", "recovery": "prr"}, "recovery", "must be \"classic\""),
])
def test_bad_bbr_settings_are_refused_by_name(flow: dict, key: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=rf"flows\[0\]\.{key}: .*{message}"):
        aqmlab.validate(scenario([flow], queue=BIG_DROPTAIL))


def test_bbr_defaults_to_pacing_and_classic_recovery_even_under_the_linux_profile() -> None:
    flow = aqmlab.validate(scenario([{"profile": "linux", "congestion_control": "bbr"}], queue=BIG_DROPTAIL))["flows"][0]
    assert (flow["pacing"], flow["recovery"], flow["variant"]) == (True, "classic", "sack")
