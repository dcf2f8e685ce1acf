"""Adaptive RED (`kind = "red"`, `adaptive = true`, docs/ared.md) end to end: Floyd, Gummadi & Shenker
2001's claim that adapting max_p keeps the average queue in the target band whatever the load, where
RED with a fixed max_p does not; the results it reports; and its bad-input messages.

Settings fixed before the first run (not tuned afterwards): a 10 Mb/s, 20 ms dumbbell (RTT 44 ms
plus queueing), 200-packet buffer, SACK flows, ns-2 RED with min_th 20, max_th 60 (target band
[36, 44]), weight 0.002, gentle, max_p 0.1 (ARED: its initial value; RED: fixed), 60 s with a 20 s
warm-up (ARED needs ~20 adaptations, 10 s, to move max_p by a factor of 10), seed 1; 10 flows and
50 flows. The band criterion: the time-average of RED's average queue (`queue_avg`, sampled every
bin) after the warm-up.
"""

from __future__ import annotations

import math

import aqmlab
import pytest

MIN_TH, MAX_TH = 20.0, 60.0
BAND = (MIN_TH + 0.4 * (MAX_TH - MIN_TH), MIN_TH + 0.6 * (MAX_TH - MIN_TH))  # (36, 44)
WARMUP_S = 20.0


def dumbbell(n: int, adaptive: bool, **extra) -> dict:
    queue = {"kind": "red", "variant": "ns2", "limit": 200, "min_th": MIN_TH, "max_th": MAX_TH, "weight": 0.002,
             "gentle": True, "max_p": 0.1, **extra}
    if adaptive:
        queue["adaptive"] = True
    return {
        "run": {"duration": "60s", "warmup": f"{WARMUP_S:g}s", "seed": 1},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"},
                     "access": {"rate": "100Mbps", "delay": "1ms"}},
        "queue": queue,
        "flows": [{"kind": "tcp", "variant": "sack", "sack": True, "count": n, "start_jitter": "1s"}],
    }


def mean_average_queue(res) -> float:
    ts = res.timeseries
    return float(ts.loc[ts["time_s"] > WARMUP_S, "queue_avg"].mean())


@pytest.fixture(scope="module")
def runs() -> dict:
    return {(n, adaptive): aqmlab.run(dumbbell(n, adaptive)) for n in (10, 50) for adaptive in (False, True)}


@pytest.mark.parametrize("n", [10, 50])
def test_ared_keeps_the_average_queue_in_the_target_band(runs, n: int) -> None:
    avg = mean_average_queue(runs[(n, True)])
    assert BAND[0] <= avg <= BAND[1], (n, avg)


def test_fixed_max_p_red_misses_the_band_for_at_least_one_load(runs) -> None:
    # Floyd 2001 Figs. 5/6: RED's average queue moves with the number of flows.
    avgs = {n: mean_average_queue(runs[(n, False)]) for n in (10, 50)}
    assert any(not BAND[0] <= a <= BAND[1] for a in avgs.values()), avgs
    assert avgs[50] > avgs[10], avgs


def test_ared_moves_max_p_with_the_load_and_reports_it(runs) -> None:
    q10, q50 = (runs[(n, True)].summary["queues"][0] for n in (10, 50))
    # Few flows need a small max_p to let the queue grow into the band, many flows a large one.
    assert q10["adaptive"]["mean_max_p"] < 0.1 < q50["adaptive"]["mean_max_p"], (q10["adaptive"], q50["adaptive"])
    assert 0.0 < q10["adaptive"]["max_p_at_end"] <= 0.51 and q50["adaptive"]["max_p_at_end"] <= 0.51
    assert (q10["adaptive"]["min_th"], q10["adaptive"]["max_th"]) == (MIN_TH, MAX_TH)
    assert q10["adaptive"]["target_low"] == pytest.approx(BAND[0]) and q10["adaptive"]["target_high"] == pytest.approx(BAND[1])
    assert q10["details"]["max_p_decreases"] > 0 and q50["details"]["max_p_increases"] > 0
    ts = runs[(10, True)].timeseries
    assert "max_p" in ts and ts["max_p"].between(0.0, 0.51).all()
    # Plain RED reports none of it.
    red = runs[(10, False)]
    assert "adaptive" not in red.summary["queues"][0] and "max_p" not in red.timeseries


def test_automatic_settings_are_reported_resolved() -> None:
    # 10 Mb/s, 1500-byte mean packets: C = 833.3/s, min_th = max(5, 0.005 C / 2) = 5, max_th = 15,
    # weight = 1 - exp(-1/C).
    sc = dumbbell(10, True)
    for key in ("min_th", "max_th", "weight", "gentle"):
        del sc["queue"][key]
    sc["queue"]["mean_packet_size"] = "1500B"
    sc["run"] |= {"duration": "3s", "warmup": "1s"}
    q = aqmlab.run(sc).summary["queues"][0]["adaptive"]
    assert (q["min_th"], q["max_th"]) == (5.0, 15.0)
    assert q["weight"] == pytest.approx(-math.expm1(-1 / (10e6 / (8 * 1500))), rel=1e-12)  # 0.00119928
    assert q["target_low"] == pytest.approx(9.0) and q["target_high"] == pytest.approx(11.0)


BAD = {
    "zero interval": ({"adaptive": True, "interval": "0s"}, r"queue\.interval: must be a positive duration, got 0s"),
    "zero alpha": ({"adaptive": True, "alpha": 0}, r"queue\.alpha: must be in \(0, 1\], got 0"),
    "negative alpha": ({"adaptive": True, "alpha": -0.01}, r"queue\.alpha: must be in \(0, 1\], got -0\.01"),
    "beta of one": ({"adaptive": True, "beta": 1.0}, r"queue\.beta: must be in \(0, 1\) \(exclusive\), got 1"),
    "beta above one": ({"adaptive": True, "beta": 1.5}, r"queue\.beta: must be in \(0, 1\) \(exclusive\), got 1\.5"),
    "zero beta": ({"adaptive": True, "beta": 0}, r"queue\.beta: must be in \(0, 1\) \(exclusive\), got 0"),
    "alpha without adaptive": ({"alpha": 0.02}, r"queue\.alpha: needs adaptive = true"),
    "linux interval": ({"adaptive": True, "adaptive_variant": "linux", "interval": "1s"},
                       r'queue\.interval: does not apply to adaptive_variant = "linux" .*500 ms.*allowed with "ns3"'),
    "unknown variant": ({"adaptive": True, "adaptive_variant": "ns2"}, r"queue\.adaptive_variant.*ns3.*linux.*feng"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_adaptive_settings_name_the_key_and_the_allowed_values(case: str) -> None:
    extra, match = BAD[case]
    sc = dumbbell(1, False)
    sc["queue"] |= extra
    with pytest.raises(aqmlab.ScenarioError, match=match):
        aqmlab.validate(sc)
