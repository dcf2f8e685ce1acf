"""The bare engine against closed-form queueing theory (issue #2, validation 1).

Poisson arrivals reach the bottleneck through an access link so fast (1000 Gb/s, 8 ns per
packet) that it does not reshape them. The bottleneck queue's sojourn is the waiting time
W_q (a packet leaves the queue when its transmission starts), and in M/M/1/K terms the
system holds `limit` waiting packets plus the one in service, so K = limit + 1.
"""

from __future__ import annotations

import aqmlab
import pytest
from aqmlab.models.queueing import md1_mean_wait, mm1k_loss

LINK_BPS = 1e9
PACKET_BYTES = 1000
SERVICE_S = PACKET_BYTES * 8 / LINK_BPS


def poisson_into_fifo(load: float, *, limit: int, size_dist: str, duration: str, seed: int) -> dict:
    res = aqmlab.run({
        "run": {"duration": duration, "warmup": "1s", "seed": seed},
        "topology": {"bottleneck": {"rate": "1Gbps", "delay": "1ms"},
                     "access": {"rate": "1000Gbps", "delay": "0s"}},
        "queue": {"kind": "droptail", "limit": limit},
        "flows": [{"kind": "udp-poisson", "rate": f"{load * LINK_BPS / 1e6}Mbps",
                   "packet_size": f"{PACKET_BYTES}B", "packet_size_dist": size_dist}],
        "output": {"per_flow_timeseries": False},
    })
    return res.summary["queues"][0]


@pytest.mark.parametrize("load, duration", [(0.5, "40s"), (0.9, "100s")])
def test_md1_mean_wait_matches_pollaczek_khinchine(load: float, duration: str) -> None:
    q = poisson_into_fifo(load, limit=1_000_000, size_dist="fixed", duration=duration, seed=3)
    expected = md1_mean_wait(load / SERVICE_S, SERVICE_S)
    assert q["drops"] == 0
    assert q["mean_sojourn_s"] == pytest.approx(expected, rel=0.02)


@pytest.mark.parametrize("load, limit", [(0.8, 9), (1.2, 4)])
def test_mm1k_loss_matches_closed_form(load: float, limit: int) -> None:
    q = poisson_into_fifo(load, limit=limit, size_dist="exponential", duration="30s", seed=5)
    measured = q["drops"] / q["arrivals"]
    assert measured == pytest.approx(mm1k_loss(load, limit + 1), rel=0.02)


def test_utilization_equals_offered_load() -> None:
    q = poisson_into_fifo(0.5, limit=1_000_000, size_dist="fixed", duration="20s", seed=11)
    assert q["utilization"] == pytest.approx(0.5, rel=0.01)
