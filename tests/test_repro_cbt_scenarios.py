"""The CBT lab scenarios follow the dissertation's hosts, timers and multimedia loads (Parris 2001, App. A;
`repro/cbt_scenarios.py`)."""

from __future__ import annotations

import pytest

import aqmlab
from aqmlab.exceptions import ScenarioError
from aqmlab.repro import cbt_scenarios as S


def _us(d: str) -> int:
    assert d.endswith("us"), d
    return int(d[:-2])


@pytest.mark.parametrize("mix", ["BULK-MPEG", "HTTP-Proshare"])
def test_each_server_host_has_its_own_timer_phase(mix: str) -> None:
    """App. A, Table A.1: 5 server hosts, each with its own 500-ms slow timer. BULK flow i is on server
    i div 72, HTTP browser b on server (b div 6) mod 5; all flows of a server share its phase."""
    tcp = S.scenario(mix, "CBT", "blast", 3)["flows"][0]
    phases = [_us(d) for d in tcp["timer_phase"]]
    assert len(phases) == tcp["count"]
    server = (lambda i: i // 72) if mix.startswith("BULK") else (lambda b: (b // 6) % 5)
    by_server: dict[int, set[int]] = {}
    for i, p in enumerate(phases):
        by_server.setdefault(server(i), set()).add(p)
    assert sorted(by_server) == [0, 1, 2, 3, 4]
    assert all(len(v) == 1 for v in by_server.values())
    assert len({next(iter(v)) for v in by_server.values()}) == 5
    assert all(0 <= p < 500_000 for p in phases)
    assert S.scenario(mix, "CBT", "blast", 3)["flows"][0]["timer_phase"] == tcp["timer_phase"]
    assert S.scenario(mix, "CBT", "blast", 4)["flows"][0]["timer_phase"] != tcp["timer_phase"]
    aqmlab.validate(S.scenario(mix, "CBT", "blast", 3))


def _one_flow(**keys) -> dict:
    return {"run": {"duration": "5s", "seed": 1},
            "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
            "flows": [{"kind": "tcp", "count": 2, **keys}]}


def test_timer_phase_needs_the_coarse_timer_and_stays_below_its_tick() -> None:
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.timer_phase.*coarse_timer"):
        aqmlab.validate(_one_flow(timer_phase="100ms"))
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.timer_phase.*below timer_granularity"):
        aqmlab.validate(_one_flow(coarse_timer=True, timer_granularity="500ms", timer_phase=["0ms", "500ms"]))
    with pytest.raises(ScenarioError, match=r"flows\[0\]\.timer_phase.*one value per flow"):
        aqmlab.validate(_one_flow(coarse_timer=True, timer_granularity="500ms", timer_phase=["0ms"]))
    aqmlab.validate(_one_flow(coarse_timer=True, timer_granularity="500ms", timer_phase=["0ms", "250ms"]))


def test_multimedia_leaves_through_a_10_mbps_card() -> None:
    for mix in S.MIXES:
        mm = S.scenario(mix, "FIFO", "mm", 1)["flows"][1]
        assert mm["access_rate"] == "10Mbps"


def test_mpeg_frames_scale_to_the_periods_measured_load() -> None:
    """Table A.4: blast period (its period 1) 164/183/186 KB/s, multimedia period 160/154/151, against the
    whole movie's 196.7 KB/s (Table A.5 with headers)."""
    assert S.MPEG_MOVIE_WIRE_KIB == pytest.approx(192.04, abs=0.01)
    for period, kib in (("blast", 177.67), ("mm", 155.0)):
        mm = S.scenario("BULK-MPEG", "CBQ", period, 1)["flows"][1]
        f = kib / S.MPEG_MOVIE_WIRE_KIB
        assert mm["i_size"] == f"{6916 * f:.0f}B" and mm["p_size"] == f"{1646 * f:.0f}B" and mm["b_size"] == f"{241 * f:.0f}B"


def test_proshare_offers_the_labs_measured_packet_load() -> None:
    """Six Proshare flows alone: 36 packets/s of 733.5-B IP packets each would be 154.7 KiB/s on the wire
    (App. A §3.3.1; Tables B.20, B.22 less the Ethernet header). Our generator's frame model gets the bytes
    (±2 % over 4 seeds × 180 s) with 34.3 packets/s."""
    rates, pps = [], []
    for seed in (1, 2, 3, 4):
        sc = S.lab({"kind": "droptail", "limit": 1000},
                   [{"kind": "proshare", "count": 6, "class": 1, "access_rate": "100Mbps", **S.mm_keys("proshare", "mm")}],
                   start_s=10.0, end_s=190.0, seed=seed)
        sc["topology"]["bottleneck"]["rate"] = "100Mbps"
        f = aqmlab.run(sc).flows
        rates.append(f["throughput_bps"].sum() / 8 / 1024)
        pps.append(f["packets_sent"].sum() / 180.0 / 6)  # counted over the measured 180 s
    mean = sum(rates) / len(rates)
    assert mean == pytest.approx(154.7, rel=0.02)
    assert sum(pps) / len(pps) == pytest.approx(34.3, abs=0.6)


def _mah_think_clipped_mean(clip_s: float) -> float:
    """E[min(T, clip)] of Mah's think-time table, linear between its points (`Empirical::clipped_mean`)."""
    from pathlib import Path

    table = Path(aqmlab.__file__).resolve().parents[2] / "crates/core/data/mah-httpmodel/HttpThinkTime.cdf"
    rows = [line.split() for line in table.read_text().splitlines() if line.strip() and not line.startswith("#")]
    vals, cum = [float(r[0]) for r in rows], [float(r[2]) for r in rows]
    total = cum[0] * min(vals[0], clip_s)
    for i in range(1, len(vals)):
        w, a, b = cum[i] - cum[i - 1], vals[i - 1], vals[i]
        if b <= clip_s:
            total += w * 0.5 * (a + b)
        elif a >= clip_s:
            total += w * clip_s
        else:
            f = (clip_s - a) / (b - a)
            total += w * (f * 0.5 * (a + clip_s) + (1 - f) * clip_s)
    return total


def test_http_is_calibrated_to_the_labs_link_load_with_headers() -> None:
    """App. A §3.4.1: 2.9546 kb/s per browser measured on the link. A page is 19,074 B of payload in data packets
    of 1,343.6 B on the wire (52 B of headers; http.rs), and a browser's cycle is E[min(T, think_max)] + 1.04 s
    (http.rs's calibration, which this prediction met within 0.1 B/s)."""
    group = S.scenario("HTTP-MPEG", "FIFO", "mm", 1)["flows"][0]
    clip = float(group["think_max"].removesuffix("s"))
    assert _mah_think_clipped_mean(192.0) + 1.04 == pytest.approx(19_074 / 369.5, abs=0.05)  # the engine's payload clip
    wire_page = 19_074 * 1343.6 / (1343.6 - 52)
    assert wire_page / (_mah_think_clipped_mean(clip) + 1.04) == pytest.approx(S.HTTP_WIRE_LOAD_BPS_PER_BROWSER, abs=0.5)
