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


def test_choke_protects_tcp_from_the_udp_flow_much_better_than_red(with_udp) -> None:
    # Criterion fixed in advance: under CHOKe the UDP flow gets less than half of what it gets
    # under RED, and the TCP flows more than twice as much on average.
    red_udp, red_tcp = udp_and_tcp(with_udp["red"])
    choke_udp, choke_tcp = udp_and_tcp(with_udp["choke"])
    assert choke_udp < 0.5 * red_udp, (choke_udp, red_udp)
    assert choke_tcp > 2 * red_tcp, (choke_tcp, red_tcp)


def test_choke_drops_are_mostly_matched_pairs(with_udp) -> None:
    # The pairs (two drops each) are CHOKe's own mechanism and should dominate its drops.
    q = with_udp["choke"].queues.iloc[0]
    assert 2 * q["details"]["matched"] > 0.5 * q["drops"], (q["details"]["matched"], q["drops"])


def test_tcp_alone_keeps_the_link_full() -> None:
    # Without the UDP flow CHOKe is RED plus occasional same-flow pairs: the link stays busy.
    q = aqmlab.run(dumbbell({"kind": "choke", **RED_SETTINGS}, udp_rate=None)).queues.iloc[0]
    assert q["utilization"] > 0.95


def test_same_seed_same_choke_run() -> None:
    a, b = (aqmlab.run(dumbbell({"kind": "choke", **RED_SETTINGS}, seed=5)) for _ in range(2))
    assert a.flows.equals(b.flows) and a.queues.equals(b.queues)
