"""CHOKe (Pan, Prabhakar & Psounis, INFOCOM 2000; Linux sch_choke.c; `kind = "choke"`,
docs/choke.md) end to end: 8 TCP flows and one unresponsive UDP flow sending at the link rate on a
10 Mb/s dumbbell, under RED and under CHOKe with the same RED settings (the paper's headline
comparison); TCP alone.

Pass/fail thresholds were written before the first run (numbers measured afterwards are in each
test's comment)."""

from __future__ import annotations

import aqmlab
import pytest

LINK_BPS = 10e6
N_TCP = 8
FAIR_BPS = LINK_BPS / (N_TCP + 1)
RED_SETTINGS = {"limit": 300, "min_th": 50, "max_th": 150, "max_p": 0.1, "weight": 0.002}


def dumbbell(queue: dict, *, udp_rate: str | None = "10Mbps", seed: int = 3) -> dict:
    flows: list[dict] = [{"kind": "tcp", "count": N_TCP, "start_jitter": "1s"}]
    if udp_rate:
        flows.append({"kind": "udp-cbr", "rate": udp_rate, "packet_size": "1000B"})
    return {
        "run": {"duration": "40s", "warmup": "10s", "seed": seed},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"},
                     "access": {"rate": "100Mbps", "delay": "1ms"}},
        "queue": queue,
        "flows": flows,
    }


@pytest.fixture(scope="module")
def with_udp() -> dict:
    return {k: aqmlab.run(dumbbell({"kind": k, **RED_SETTINGS})) for k in ("red", "choke")}


def udp_and_tcp(res) -> tuple[float, float]:
    f = res.flows
    return f[f["kind"] == "udp-cbr"]["goodput_bps"].sum(), f[f["kind"] == "tcp"]["goodput_bps"].mean()


def test_choke_gives_tcp_flows_far_more_than_red_does(with_udp) -> None:
    # Criterion fixed in advance: TCP flows more than twice as much on average under CHOKe.
    # Measured (seed 3): 0.537 Mb/s vs 0.098 Mb/s (seed 1: 0.552 vs 0.100).
    _, red_tcp = udp_and_tcp(with_udp["red"])
    _, choke_tcp = udp_and_tcp(with_udp["choke"])
    assert choke_tcp > 2 * red_tcp, (choke_tcp, red_tcp)


@pytest.mark.xfail(strict=True, reason="measured: with 8 TCP flows CHOKe leaves the UDP flow 0.60x its RED share, not < 0.5x (docs/choke.md)")
def test_choke_halves_the_udp_share_with_8_tcp_flows(with_udp) -> None:
    # Criterion fixed in advance: UDP below half its RED goodput. Measured (seed 3): 5.38 vs
    # 8.93 Mb/s (seed 1: 5.26 vs 8.92; victim = "uniform" 5.07). Every CHOKe drop is a matched
    # pair (17168 drops, 8584 pairs, no RED early or forced drop): the pairs hold the average at
    # min_th (mean sojourn 41 ms = 51 packets against min_th 50), so RED's own drops never start
    # and matching acts only while the average is above min_th. Not tuned; see the 32-flow test.
    red_udp, _ = udp_and_tcp(with_udp["red"])
    choke_udp, _ = udp_and_tcp(with_udp["choke"])
    assert choke_udp < 0.5 * red_udp, (choke_udp, red_udp)


def test_choke_halves_the_udp_share_with_32_tcp_flows() -> None:
    # The same criterion with the paper's flow count (32 TCP + 1 UDP; its link was 1 Mb/s), run
    # after the 8-flow result disagreed. Measured (seed 3): UDP 2.32 Mb/s under CHOKe vs 8.44
    # under RED; TCP 0.228 vs 0.040 Mb/s each.
    runs = {}
    for k in ("red", "choke"):
        s = dumbbell({"kind": k, **RED_SETTINGS})
        s["flows"][0]["count"] = 32
        runs[k] = udp_and_tcp(aqmlab.run(s))
    assert runs["choke"][0] < 0.5 * runs["red"][0], runs
    assert runs["choke"][1] > 2 * runs["red"][1], runs


def test_choke_drops_are_mostly_matched_pairs(with_udp) -> None:
    # The pairs (two drops each) are CHOKe's own mechanism and should dominate its drops.
    # Measured (seed 3): 17168 drops, all of them in 8584 pairs.
    q = with_udp["choke"].queues.iloc[0]
    assert 2 * q["details"]["matched"] > 0.5 * q["drops"], (q["details"]["matched"], q["drops"])


def test_tcp_alone_keeps_the_link_full() -> None:
    # Without the UDP flow CHOKe is RED plus occasional same-flow pairs: the link stays busy.
    # Measured (seed 3): utilization 0.995, 240 pairs.
    q = aqmlab.run(dumbbell({"kind": "choke", **RED_SETTINGS}, udp_rate=None)).queues.iloc[0]
    assert q["utilization"] > 0.95


def test_same_seed_same_choke_run() -> None:
    a, b = (aqmlab.run(dumbbell({"kind": "choke", **RED_SETTINGS}, seed=5)) for _ in range(2))
    assert a.flows.equals(b.flows) and a.queues.equals(b.queues)
