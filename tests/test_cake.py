"""CAKE (`kind = "cake"`, docs/cake.md) end to end on a 10 Mb/s dumbbell: COBALT holds each
flow queue near its 5 ms target and the round robin shares evenly; triple-isolate shares between
hosts, `flows` between flows; the shaper runs the link at `bandwidth` with the queue in CAKE; an
unresponsive flow at twice the link rate is held to its share (BLUE does it once the memory
limit is hit); the tins split by their quanta and thresholds; bad keys give one clear line.

Expected values come from the algorithm (stated beside each assertion), not from runs."""

from __future__ import annotations

import aqmlab
import pytest

TARGET_S = 0.005  # COBALT's default target (sch_cake.c cake_init)
LINK_BPS = 10e6


def dumbbell(queue: dict, flows: list[dict], *, delay: str = "20ms", seed: int = 3, duration: str = "40s") -> dict:
    return {
        "run": {"duration": duration, "warmup": "10s", "seed": seed},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": delay},
                     "access": {"rate": "100Mbps", "delay": "1ms"}},
        "queue": queue,
        "flows": flows,
    }


def jain(x) -> float:
    return float(x.sum() ** 2 / (len(x) * (x**2).sum()))


@pytest.fixture(scope="module")
def four_tcp():
    return aqmlab.run(dumbbell({"kind": "cake"}, [{"kind": "tcp", "count": 4, "start_jitter": "1s"}]))


def test_four_tcp_flows_share_fairly_and_cobalt_keeps_the_sojourn_near_target(four_tcp) -> None:
    # DRR++ with equal quanta: equal shares (Jain > 0.95). COBALT per queue: a standing queue
    # of about target, so the mean sojourn between target/2 and 2 x target; no overload, so
    # every drop is a COBALT (early) drop and the link stays busy.
    g = four_tcp.flows["goodput_bps"]
    assert jain(g) > 0.95, g.tolist()
    q = four_tcp.queues.iloc[0]
    assert TARGET_S / 2 <= q["mean_sojourn_s"] <= 2 * TARGET_S, q["mean_sojourn_s"]
    assert q["drops"] == q["drops_early"] > 0 and q["drops_overflow"] == 0
    assert q["utilization"] > 0.95
    d = q["details"]
    assert d["cobalt_codel_drops"] + d["cobalt_blue_drops"] == q["drops_early"]
    assert d["cobalt_blue_drops"] == 0  # BLUE only moves on overflow
    # diffserv3 by default: everything is DSCP 0, so Best Effort carries it all.
    assert [c["name"] for c in q["classes"]] == ["best_effort", "bulk", "voice"]
    assert q["classes"][0]["dequeues"] == q["dequeues"]


def test_ecn_capable_flows_are_marked_not_dropped() -> None:
    # CoDel's signal marks ECT packets (INET_ECN_set_ce); BLUE, which would drop them, is idle.
    res = aqmlab.run(dumbbell({"kind": "cake"}, [{"kind": "tcp", "count": 4, "ecn": True, "start_jitter": "1s"}]))
    q = res.queues.iloc[0]
    assert q["marks"] > 0 and q["drops"] == 0, (q["marks"], q["drops"])
    assert TARGET_S / 2 <= q["mean_sojourn_s"] <= 2 * TARGET_S


@pytest.mark.parametrize(("isolation", "low", "high"), [
    # triple-isolate: host A's 8 flows each get quantum/8, host B's one the full quantum: 1:1.
    ("triple-isolate", 0.8, 1.25),
    # flows: nine equal flows, A gets 8 shares to B's 1.
    ("flows", 6.0, 10.0),
])
def test_host_isolation_shares_between_hosts(isolation: str, low: float, high: float) -> None:
    # Short RTT (2 ms bottleneck delay, ~8 ms RTT) so that B's single flow can fill its half:
    # its window at 5 Mb/s is about 4 packets, under what COBALT's 5 ms target lets it queue.
    # (At 20 ms one Reno flow cannot keep its queue busy and A takes the slack: docs/cake.md.)
    flows = [{"kind": "tcp", "count": 8, "sender_host": 1, "start_jitter": "1s"},
             {"kind": "tcp", "count": 1, "sender_host": 2, "start_jitter": "1s"}]
    res = aqmlab.run(dumbbell({"kind": "cake", "isolation": isolation}, flows, delay="2ms"))
    g = res.flows["goodput_bps"]
    ratio = g[:8].sum() / g[8]
    assert low <= ratio <= high, ratio
    assert res.queues.iloc[0]["utilization"] > 0.98


def test_shaper_runs_the_link_at_bandwidth_with_the_queue_in_cake() -> None:
    # bandwidth 5 Mb/s on a 10 Mb/s link: the link is busy half the time (wire bytes at 5 Mb/s,
    # within 4 %), the backlog waits in CAKE (the shaper refused dequeues: overlimits), and
    # COBALT still holds it near target (at 5 Mb/s the MTU time, 2.4 ms, keeps the 5 ms target).
    res = aqmlab.run(dumbbell({"kind": "cake", "bandwidth": "5Mbps"}, [{"kind": "tcp", "count": 4, "start_jitter": "1s"}]))
    q = res.queues.iloc[0]
    sent_bps = q["utilization"] * LINK_BPS
    assert 0.96 * 5e6 <= sent_bps <= 1.01 * 5e6, sent_bps
    assert q["details"]["overlimits"] > 0
    assert q["mean_len_packets"] > 1
    assert TARGET_S <= q["mean_sojourn_s"] <= 3 * TARGET_S, q["mean_sojourn_s"]
    assert jain(res.flows["goodput_bps"]) > 0.95


def test_an_unresponsive_flow_at_twice_the_link_rate_is_held_to_its_share() -> None:
    # 4 TCP flows and a 20 Mb/s CBR flow: DRR++ gives each of the five 2 Mb/s. The CBR queue
    # outgrows COBALT's CoDel half and reaches the memory limit (10240 x 1514 B, ~7 s of its
    # 18 Mb/s excess), so cake_drop prunes it and BLUE's p_drop climbs and does the dropping.
    flows = [{"kind": "tcp", "count": 4, "start_jitter": "1s"},
             {"kind": "udp-cbr", "rate": "20Mbps", "packet_size": "1500B"}]
    res = aqmlab.run(dumbbell({"kind": "cake"}, flows))
    f = res.flows
    tcp, udp = f[f["kind"] == "tcp"], f[f["kind"] == "udp-cbr"].iloc[0]
    fair = LINK_BPS / 5
    assert (tcp["throughput_bps"] >= 0.85 * fair).all(), tcp["throughput_bps"].tolist()
    assert udp["throughput_bps"] <= 1.2 * fair, udp["throughput_bps"]
    q = res.queues.iloc[0]
    assert q["drops_overflow"] > 0
    assert q["details"]["cobalt_blue_drops"] > 0


@pytest.mark.parametrize(("queue", "share"), [
    # Unlimited: the tins take turns by tin_quantum, Best Effort 1024 B, Bulk 64 B: 64/1088.
    ({"kind": "cake"}, 64 / 1088),
    # Shaped: Bulk is served in priority up to its threshold, 1/16 of the rate.
    ({"kind": "cake", "bandwidth": "9Mbps"}, 1 / 16),
])
def test_diffserv3_bulk_tin_gets_its_quantum_or_threshold(queue: dict, share: float) -> None:
    # Two CBR flows over the link rate, CS1 (DSCP 8: Bulk) and best effort: both tins always
    # backlogged, so the split is the tin scheduler's alone.
    flows = [{"kind": "udp-cbr", "rate": "12Mbps", "packet_size": "1500B", "dscp": 8},
             {"kind": "udp-cbr", "rate": "12Mbps", "packet_size": "1500B"}]
    res = aqmlab.run(dumbbell(queue, flows, duration="30s"))
    t = res.flows["throughput_bps"]
    assert t[0] / t.sum() == pytest.approx(share, rel=0.03)
    classes = res.queues.iloc[0]["classes"]
    assert classes[1]["name"] == "bulk" and classes[1]["throughput_bps"] == pytest.approx(t[0], rel=0.01)


def test_same_seed_same_results() -> None:
    sc = dumbbell({"kind": "cake", "bandwidth": "8Mbps"}, [{"kind": "tcp", "count": 3, "start_jitter": "1s"}], duration="20s", seed=5)
    a, b = aqmlab.run(sc), aqmlab.run(sc)
    cols = ["goodput_bps", "drops", "retransmits"]
    assert a.flows[cols].equals(b.flows[cols])


@pytest.mark.parametrize(("queue", "flow", "match"), [
    ({"kind": "cake", "isolation": "per-host"}, {}, r"queue\.isolation: unknown variant `per-host`, expected one of .*`triple-isolate`"),
    ({"kind": "cake", "diffserv": "diffserv8"}, {}, r"queue\.diffserv: unknown variant `diffserv8`, expected one of `besteffort`, `diffserv3`, `diffserv4`"),
    ({"kind": "cake", "bandwidth": "fast"}, {}, r"queue\.bandwidth: \"fast\" is not a rate.*or \"unlimited\""),
    ({"kind": "cake", "bandwidth": "0Mbps"}, {}, r"queue\.bandwidth: rate must be positive.*or \"unlimited\""),
    ({"kind": "cake", "set_ways": 3}, {}, r"queue\.set_ways: must be a power of two from 1 to 1024"),
    ({"kind": "cake"}, {"dscp": 64}, r"flows\[0\]\.dscp: must be a codepoint from 0 to 63"),
    ({"kind": "cake"}, {"sender_host": -1}, r"flows\[0\]\.sender_host: must be a host id from 0 to 2147483647, got -1"),
])
def test_bad_keys_give_one_clear_line(queue: dict, flow: dict, match: str) -> None:
    sc = dumbbell(queue, [{"kind": "tcp", **flow}])
    with pytest.raises(aqmlab.ScenarioError, match=match):
        aqmlab.run(sc)



@pytest.fixture(scope="module")
def cake_and_fq_codel():
    """8 TCP flows through CAKE with one tin, per-flow isolation, no shaper and no memory pressure
    (so BLUE stays idle), and through FQ-CoDel: FQ-CoDel with COBALT's CoDel."""
    flows = [{"kind": "tcp", "count": 8, "start_jitter": "1s"}]
    return (aqmlab.run(dumbbell({"kind": "cake", "diffserv": "besteffort", "isolation": "flows"}, flows)),
            aqmlab.run(dumbbell({"kind": "fq_codel"}, flows)))


def test_cake_without_its_extras_carries_what_fq_codel_carries(cake_and_fq_codel) -> None:
    cake, fq = cake_and_fq_codel
    assert cake.aggregate["goodput_bps"] == pytest.approx(fq.aggregate["goodput_bps"], rel=0.02)
    assert jain(cake.flows["goodput_bps"]) > 0.99


@pytest.mark.xfail(strict=True, reason="COBALT holds the mean sojourn at 0.56x FQ-CoDel's (6.9 vs 12.4 ms) with "
                   "1.37x the drops (411 vs 300) on the same 8 flows; the bands (30 %) were fixed before the run and "
                   "the difference is not yet explained (docs/cake.md)")
def test_cake_without_its_extras_queues_like_fq_codel(cake_and_fq_codel) -> None:
    """Bands fixed before the first run: mean sojourn and drops within 30 % of FQ-CoDel's (COBALT's
    count decays where CoDel's restarts)."""
    cake, fq = cake_and_fq_codel
    qc, qf = cake.queues.iloc[0], fq.queues.iloc[0]
    assert qc["mean_sojourn_s"] == pytest.approx(qf["mean_sojourn_s"], rel=0.30), (qc["mean_sojourn_s"], qf["mean_sojourn_s"])
    assert qc["drops"] == pytest.approx(qf["drops"], rel=0.30), (qc["drops"], qf["drops"])
