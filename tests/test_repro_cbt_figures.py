"""`cbt_figures`: Parris 2001 Ch. V Figs. 5.3–5.27 one for one — the index, the series it derives from a
run, the multimedia-alone rerun behind the offered-load figures, and a shrunk end-to-end run."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import aqmlab
from aqmlab.repro import cbt_figures as F
from aqmlab.repro import cbt_scenarios as S


def test_index_has_every_figure_from_5_3_to_5_27_exactly_once() -> None:
    md = F.index_markdown({n: F.file_name(n) for n in F.FIGURES}, seed=1, n_seeds=5)
    for k in range(3, 28):
        assert len(re.findall(rf"^\| Fig\. 5\.{k} \|", md, flags=re.M)) == 1, f"Fig. 5.{k}"
    assert len(md.splitlines()) == 2 + 25, "header, rule and one row per figure, nothing else"


def test_file_names_follow_the_figure_numbers_and_only_5_24_is_missing() -> None:
    names = {n: F.file_name(n) for n in F.FIGURES}
    assert {n for n, f in names.items() if not f} == {"5.24"}
    made = [f for f in names.values() if f]
    assert len(set(made)) == len(made) == 24
    for n, f in names.items():
        if f:
            assert re.fullmatch(rf"fig5_{int(n.split('.')[1]):02d}_[a-z0-9_]+\.png", f), f


def test_class_series_means_match_the_run_summary() -> None:
    """The 1-s series over the measured window average to the summary's rates: TCP goodput in payload
    bytes delivered in order (the flows' goodput series, the summary's `app_goodput_bps`; its `goodput_bps`
    counts payload first received in the window since 354f0bb), multimedia (Proshare here, not only MPEG)
    and other in wire bytes."""
    res = aqmlab.run(F.representative_scenario("BULK-Proshare", "CBT", seed=2))
    ser = F.class_series(res, 0.0)
    window = ser[(ser["time_s"] > F.MEASURE_FROM_S) & (ser["time_s"] <= F.SCRIPT_END_S)]
    f = res.flows
    for col, kinds, field in (("tcp_goodput_KBps", ["tcp"], "app_goodput_bps"), ("mm_KBps", ["proshare"], "throughput_bps"),
                              ("other_KBps", ["udp-cbr"], "throughput_bps")):
        want = f[f["kind"].isin(kinds)][field].sum() / 8 / 1024
        assert want > 0
        assert window[col].mean() == pytest.approx(want, rel=1e-6), col
    # blast on 90-150 s only
    assert ser[(ser["time_s"] > 40) & (ser["time_s"] <= 85)]["other_KBps"].max() == 0
    # TCP's offered load (Fig. 5.4) is what crossed the link plus what the queue dropped: BULK's data packets
    # are all 1500 B (flows' `drops` also count ACKs dropped on the uncongested reverse link: none here).
    tcp = f[f["kind"] == "tcp"]
    assert (res.queues.set_index("name").loc["reverse", "drops"]) == 0
    offered = window["tcp_offered_KBps"].sum() * 1024  # 1-s bins: bytes
    crossed = tcp["throughput_bps"].sum() / 8 * (F.SCRIPT_END_S - F.MEASURE_FROM_S)
    dropped = tcp["drops"].sum() * 1500
    assert dropped > 0
    # Edges: the TCP packets queued at the two ends of the window, at most the queue's limit in packets.
    limit = res.summary["scenario"]["queue"].get("limit", 0) or 200
    assert abs(offered - (crossed + dropped)) <= limit * 1500
    assert window["tcp_offered_KBps"].mean() >= window["tcp_KBps"].mean()
    assert ser["actual_fps"].isna().all() and ser["playable_fps_mean"].isna().all(), "no MPEG in this mix"


def test_frame_rate_series_average_to_the_period_rates() -> None:
    """Figs. 5.14–5.17, 5.25–5.27: the 1-s frame rates over the measured window average to the summary's
    period rates, up to the frames in flight at the window's start (docs/results.md)."""
    res = aqmlab.run(F.representative_scenario("BULK-MPEG", "RED", seed=2))
    ser = F.class_series(res, 0.0)
    window = ser[(ser["time_s"] > F.MEASURE_FROM_S) & (ser["time_s"] <= F.SCRIPT_END_S)]
    mm = res.flows[res.flows["kind"] == "mpeg"].sort_values("id")
    assert len(mm) == 4
    # The MPEG flows start at 30 s, inside the window: the period rates divide by their active seconds.
    active = mm["mm_active_s"].iloc[0]
    assert (mm["mm_active_s"] == active).all() and active < F.SCRIPT_END_S - F.MEASURE_FROM_S
    for col, key in (("actual_fps", "mpeg_actual_fps"), ("playable_fps", "mpeg_playable_fps")):
        for series, want in ((window[col], mm[key].iloc[0]), (window[f"{col}_mean"], mm[key].mean())):
            got = series.sum() / active  # 1-s bins: the sum is frames
            assert 0 <= got - want <= 5 / active + 1e-9, (col, got, want)
    assert mm["mpeg_playable_fps"].min() < 28, "RED under the blast loses frames: the check sees losses"


def test_offered_rerun_sends_the_same_multimedia_packets_and_loses_none() -> None:
    """The offered-load figures rest on this: the multimedia sources send the same packets whatever the
    queue and the other traffic, and alone on the link they lose nothing."""
    full = aqmlab.run(F.representative_scenario("BULK-MPEG", "FIFO", seed=3)).flows
    alone = aqmlab.run(F.offered_scenario("BULK-MPEG", seed=3)).flows
    mm_full, mm_alone = (x[x["kind"] == "mpeg"].set_index("id") for x in (full, alone))
    assert mm_full["mm_loss_pps"].min() > 5, "FIFO under the blast does lose multimedia packets"
    pd.testing.assert_series_equal(mm_full["packets_sent"], mm_alone["packets_sent"])
    pd.testing.assert_series_equal(mm_full["frames_sent"], mm_alone["frames_sent"])
    assert (mm_alone["mm_packets_lost"] == 0).all()
    assert alone[alone["kind"] == "tcp"]["goodput_bps"].sum() == 0


def _means() -> pd.DataFrame:
    """A frame shaped like `cbt.run_all`'s, with made-up values (the figures only plot it)."""
    rows = [{"mix": m, "period": p, "algorithm": a, "tcp_goodput_KBps": 800.0, "other_KBps": 150.0, "mm_KBps": 150.0,
             "mm_loss_pps": 1.0, "mm_latency_ms": 30.0, "playable_fps": 20.0 + i, "actual_fps": 25.0 + i}
            for m in S.MIXES for p in S.PERIODS for i, a in enumerate(S.ALGORITHMS)]
    return pd.DataFrame(rows)


def test_run_writes_every_figure_and_an_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end with the TCP groups shrunk to a few flows (24 BULK flows, 60 browsers) to stay fast."""
    script = F.script

    def small(mix: str, algorithm: str, seed: int) -> dict:
        sc = script(mix, algorithm, seed)
        n = 60 if mix.startswith("HTTP") else 24
        sc["flows"][0] |= {"count": n, **{k: sc["flows"][0][k][:n] for k in ("access_delay", "timer_phase")}}
        return sc

    monkeypatch.setattr(F, "script", small)
    names, md = F.run((4,), tmp_path, workers=2, quiet=True, means=_means())
    assert names == [F.file_name(n) for n in F.FIGURES if F.file_name(n)]
    for name in names:
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name
        assert f"[{name}]({name})" in md
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names)
    assert "seed 4" in md and "mean over 1 seed(s)" in md
