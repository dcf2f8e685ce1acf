"""Parris 2001 Ch. V, figure for figure: Figs. 5.3–5.27 (spec `seed000-cbt-evaluation.md` §3, §5.1–5.11).

The dissertation plots one representative run per algorithm as 1-s time series, HTTP+Proshare alone
first (Figs. 5.3, 5.6, 5.9, ...) and then all four mixes as panels a–d (Figs. 5.5, 5.7, 5.10, ...). We do
the same from one run per (mix, algorithm) with seed `seeds[0]` and per-flow time series, reused by every
figure of that mix; each run covers script time 0–155 s (the whole multimedia and blast periods and the
blast's end at 150 s), measured after 20 s.

What our results allow and what they do not (docs/results.md):

* Per-second TCP goodput, multimedia and *other* throughput come from the per-flow goodput series
  (`flow<i>_goodput_bps`). *Throughput* is wire bytes on the bottleneck (the dissertation's definition,
  §3): each class's goodput scaled by its wire/payload byte ratio over the run. The period means of
  `cbt.run_all` (its results table) are payload bytes, a few % lower for UDP.
* Multimedia latency is `class1_delay_s`, the 1-s mean one-way delay of the multimedia packets delivered
  in the bin. The dissertation plots Proshare latency per packet (Figs. 5.11, 5.22).
* The multimedia *offered* load (Figs. 5.8, 5.13) is not recorded, but the multimedia sources are open
  loop and each flow draws from its own random stream (docs/scenarios.md), so the same seed sends the same
  packets whatever the queue does. We rerun each mix with the TCP group silenced (started in the run's
  last millisecond) and no blast: multimedia alone on the 10 Mb/s link loses nothing, and its delivered
  bytes per second are its offered load (delayed by a few ms of path delay).
* TCP's offered load (Fig. 5.4) depends on the queue (TCP is closed loop), so it comes from the same run:
  `flow<i>_offered_bps`, the wire bytes of each TCP flow's data arriving at the bottleneck queue in the
  second, dropped packets included (docs/results.md), summed over the TCP flows. Grey: the TCP throughput
  on the link in the same run (wire bytes, as above), so load − throughput is what the queue dropped.
* MPEG frame rates (Figs. 5.14–5.17, 5.25–5.27) are 1-s series from `flow<i>_actual_fps` and
  `flow<i>_playable_fps`: frames complete at the receiver in the second (counted when their last fragment
  arrives) and frames that became decodable in it (when the last of the frame and the references it needs
  arrived; docs/results.md). The dissertation plots one representative MPEG flow; so do we (the lowest-id
  MPEG flow, in colour), with the mean of the 4 MPEG flows in grey. Panel titles give the period mean over
  `seeds` (`cbt.run_all`'s frame, the mean of the 4 flows) and the value the dissertation's text states.
* There is no Fig. 5.24 in the dissertation (list of figures and text go from 5.23 to 5.25).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import cbt_scenarios as S  # noqa: E402
from .common import Job, run_jobs  # noqa: E402

__all__ = ["FIGURES", "run", "representative_scenario", "offered_scenario", "class_series", "index_markdown"]

KB = 1024  # the dissertation's KB
LINK_KBPS = 1225  # the dissertation's C in KB/s
SCRIPT_END_S = 155.0  # script time the representative runs end at (blast stops at 150)
MEASURE_FROM_S = 20.0  # script time the representative runs start measuring (flow summaries)
MARGIN_S = 10.0  # shown either side of a measurement period

# The dissertation's panel order for all-mix figures (Figs. 5.5, 5.10, ...: a, c HTTP; b, d BULK; a, b Proshare).
PANELS = ["HTTP-Proshare", "BULK-Proshare", "HTTP-MPEG", "BULK-MPEG"]
MPEG_PANELS = ["HTTP-MPEG", "BULK-MPEG"]
COLORS = {"FIFO": "tab:red", "RED": "tab:orange", "FRED": "tab:purple", "CBT": "tab:blue", "CBQ": "tab:green"}

# What each series column is, for axis labels.
SERIES = {
    "tcp_goodput_KBps": "TCP goodput (KB/s)",
    "other_KBps": "other throughput (KB/s)",
    "mm_KBps": "multimedia throughput (KB/s)",
    "mm_latency_ms": "multimedia latency (ms)",
    "mm_offered_KBps": "multimedia offered load (KB/s)",
    "tcp_offered_KBps": "TCP offered load (KB/s)",
    "actual_fps": "actual frames/s",
    "playable_fps": "playable frames/s",
}

# Figure index: number → (slug, kind, period, metric, mixes, what it shows, how ours differs).
# kind: "series" (1-s series, one panel per algorithm and a row per mix), "offered" (multimedia offered load),
# "fps" (1-s MPEG frame rates, one panel per algorithm and a row per mix), "none" (not made; `differs` says why).
_REP = "one representative run (seed {seed}) per algorithm"
_FPS = ("one representative run (seed {seed}) per algorithm; one representative MPEG flow (the lowest id; grey: "
        "mean of the 4 MPEG flows); frames counted when complete / decodable at the receiver")
FIGURES: dict[str, dict[str, Any]] = {
    "5.3": dict(slug="tcp_goodput_blast_http_proshare", kind="series", period="blast", metric="tcp_goodput_KBps",
                mixes=["HTTP-Proshare"], what="TCP goodput, 1-s means, blast period, HTTP+Proshare, per algorithm",
                differs=_REP + "; HTTP from Mah's distributions with byte-sized replies and no connection set-up packets (cbt_scenarios)"),
    "5.4": dict(slug="tcp_load_blast_http_proshare", kind="series", period="blast", metric="tcp_offered_KBps",
                mixes=["HTTP-Proshare"],
                what="TCP offered load at the router (wire bytes of TCP data arriving at the bottleneck queue, dropped "
                     "ones included), 1-s means, blast period, HTTP+Proshare (grey: TCP throughput on the link)",
                differs=_REP + "; the same runs as Fig. 5.3; the load is counted where the packets reach the "
                               "queue; grey throughput line added"),
    "5.5": dict(slug="tcp_goodput_blast_all_mixes", kind="series", period="blast", metric="tcp_goodput_KBps",
                mixes=PANELS, what="TCP goodput, 1-s means, blast period, rows a–d = the four mixes",
                differs=_REP + "; one panel per algorithm instead of five overlaid lines"),
    "5.6": dict(slug="other_blast_http_proshare", kind="series", period="blast", metric="other_KBps",
                mixes=["HTTP-Proshare"], what="throughput of *other* (the UDP blast), 1-s means, blast period, HTTP+Proshare",
                differs=_REP + "; wire bytes"),
    "5.7": dict(slug="other_blast_all_mixes", kind="series", period="blast", metric="other_KBps", mixes=PANELS,
                what="throughput of *other*, 1-s means, blast period, all mixes (the caption repeats 5.6's; the text "
                     "says all mixes)", differs=_REP + "; wire bytes"),
    "5.8": dict(slug="mm_offered_blast_http_proshare", kind="offered", period="blast", metric="mm_offered_KBps",
                mixes=["HTTP-Proshare"], what="multimedia offered load, 1-s means, blast period, HTTP+Proshare",
                differs="synthetic Proshare (spec §2.2); one line: the sources are open loop, so with the same seed the "
                        "offered load is identical for every algorithm (the dissertation's five runs each had their "
                        "own); measured as multimedia alone on the link (module doc)"),
    "5.9": dict(slug="mm_throughput_blast_http_proshare", kind="series", period="blast", metric="mm_KBps",
                mixes=["HTTP-Proshare"], what="multimedia throughput, 1-s means, blast period, HTTP+Proshare "
                                              "(grey: offered load)",
                differs=_REP + "; synthetic Proshare; wire bytes"),
    "5.10": dict(slug="mm_throughput_blast_all_mixes", kind="series", period="blast", metric="mm_KBps", mixes=PANELS,
                 what="multimedia throughput, 1-s means, blast period, all mixes (grey: offered load)",
                 differs=_REP + "; synthetic MPEG and Proshare; wire bytes"),
    "5.11": dict(slug="mm_latency_blast_http_proshare", kind="series", period="blast", metric="mm_latency_ms",
                 mixes=["HTTP-Proshare"], what="multimedia one-way latency, blast period, HTTP+Proshare",
                 differs=_REP + "; 1-s means of the delivered multimedia packets, where the dissertation plots "
                                "Proshare latency per packet"),
    "5.12": dict(slug="mm_latency_blast_all_mixes", kind="series", period="blast", metric="mm_latency_ms",
                 mixes=PANELS, what="multimedia latency, 1-s means, blast period, all mixes (own y scale per mix, as the "
                                    "dissertation uses different scales for HTTP and BULK)",
                 differs=_REP + "; 1-s means also for Proshare"),
    "5.13": dict(slug="mm_offered_blast_cbq_allocation", kind="offered", period="blast", metric="mm_offered_KBps",
                 mixes=PANELS, what="multimedia offered load, 1-s means, blast period, against CBQ's multimedia "
                                    "allocation B_mm (dashed; the caption names BULK-MPEG, the text cites panels c, d)",
                 differs="synthetic multimedia; B_mm = Table 5.4 share × 1225 KB/s; the load is the same for every "
                         "algorithm (open loop, same seed)"),
    "5.14": dict(slug="mpeg_actual_fps_blast_http_mpeg", kind="fps", period="blast", metric="actual_fps",
                 mixes=["HTTP-MPEG"], what="MPEG actual frame rate per 1-s interval, blast period, HTTP+MPEG",
                 differs=_FPS + "; panel title: the run's mean, the period mean over {n} seed(s) (4 flows) and the value "
                                "the dissertation's text states"),
    "5.15": dict(slug="mpeg_actual_fps_blast", kind="fps", period="blast", metric="actual_fps", mixes=MPEG_PANELS,
                 what="MPEG actual frame rate per 1-s interval, blast period, a HTTP+MPEG, b BULK+MPEG",
                 differs=_FPS + "; titles as Fig. 5.14"),
    "5.16": dict(slug="mpeg_playable_fps_blast_http_mpeg", kind="fps", period="blast", metric="playable_fps",
                 mixes=["HTTP-MPEG"], what="MPEG playable frame rate per 1-s interval, blast period, HTTP+MPEG",
                 differs=_FPS + "; titles as Fig. 5.14, plus the share of seconds at ≥ 20 fps (the text's CBT claim)"),
    "5.17": dict(slug="mpeg_playable_fps_blast", kind="fps", period="blast", metric="playable_fps", mixes=MPEG_PANELS,
                 what="MPEG playable frame rate per 1-s interval, blast period, a HTTP+MPEG, b BULK+MPEG",
                 differs=_FPS + "; titles as Fig. 5.16"),
    "5.18": dict(slug="tcp_goodput_mm_http_proshare", kind="series", period="mm", metric="tcp_goodput_KBps",
                 mixes=["HTTP-Proshare"], what="TCP goodput, 1-s means, multimedia period, HTTP+Proshare",
                 differs=_REP),
    "5.19": dict(slug="tcp_goodput_mm_all_mixes", kind="series", period="mm", metric="tcp_goodput_KBps", mixes=PANELS,
                 what="TCP goodput, 1-s means, multimedia period, all mixes", differs=_REP),
    "5.20": dict(slug="mm_throughput_mm_http_proshare", kind="series", period="mm", metric="mm_KBps",
                 mixes=["HTTP-Proshare"], what="multimedia throughput, 1-s means, multimedia period, HTTP+Proshare "
                                              "(grey: offered load)",
                 differs=_REP + "; synthetic Proshare; no capture artifacts (the dissertation's dips at 20–30 s)"),
    "5.21": dict(slug="mm_throughput_mm_all_mixes", kind="series", period="mm", metric="mm_KBps", mixes=PANELS,
                 what="multimedia throughput, 1-s means, multimedia period, all mixes (grey: offered load)",
                 differs=_REP + "; synthetic multimedia"),
    "5.22": dict(slug="mm_latency_mm_http_proshare", kind="series", period="mm", metric="mm_latency_ms",
                 mixes=["HTTP-Proshare"], what="multimedia latency, multimedia period, HTTP+Proshare",
                 differs=_REP + "; 1-s means, not per packet"),
    "5.23": dict(slug="mm_latency_mm_all_mixes", kind="series", period="mm", metric="mm_latency_ms", mixes=PANELS,
                 what="multimedia latency, 1-s means, multimedia period, all mixes (own y scale per mix)",
                 differs=_REP),
    "5.24": dict(slug="", kind="none", period="mm", metric=None, mixes=[],
                 what="— (the dissertation has no Fig. 5.24: its list of figures and text go from 5.23 to 5.25; "
                      "Table 5.7 stands between them)", differs="nothing to reproduce"),
    "5.25": dict(slug="mpeg_actual_fps_mm", kind="fps", period="mm", metric="actual_fps", mixes=MPEG_PANELS,
                 what="MPEG actual frame rate per 1-s interval, multimedia period, a HTTP+MPEG, b BULK+MPEG",
                 differs=_FPS + "; titles as Fig. 5.14"),
    "5.26": dict(slug="mpeg_playable_fps_mm_http_mpeg", kind="fps", period="mm", metric="playable_fps",
                 mixes=["HTTP-MPEG"], what="MPEG playable frame rate per 1-s interval, multimedia period, HTTP+MPEG",
                 differs=_FPS + "; titles as Fig. 5.16"),
    "5.27": dict(slug="mpeg_playable_fps_mm", kind="fps", period="mm", metric="playable_fps", mixes=MPEG_PANELS,
                 what="MPEG playable frame rate per 1-s interval, multimedia period, a HTTP+MPEG, b BULK+MPEG",
                 differs=_FPS + "; titles as Fig. 5.16"),
}

# Frame rates the dissertation's text states (spec §5.6, §5.11), fps as (low, high); algorithms the text gives
# no number for are left out ("< 20", "≥ 20 fps 80 % of the time", "more variable", "slightly worse").
THESIS_FPS: dict[tuple[str, str, str], dict[str, tuple[float, float]]] = {
    ("blast", "HTTP-MPEG", "actual_fps"): {"CBQ": (30, 30), "CBT": (28, 28), "FRED": (20, 25), "FIFO": (15, 15)},
    ("blast", "BULK-MPEG", "actual_fps"): {"CBQ": (30, 30), "FRED": (5, 5)},
    ("blast", "HTTP-MPEG", "playable_fps"): {"CBQ": (30, 30), "FRED": (0, 25), "RED": (5, 5), "FIFO": (0, 0)},
    ("mm", "HTTP-MPEG", "actual_fps"): {a: (30, 30) for a in S.ALGORITHMS},
    ("mm", "BULK-MPEG", "actual_fps"): {"CBQ": (30, 30), "CBT": (30, 30), "RED": (20, 25), "FIFO": (20, 25),
                                        "FRED": (5, 5)},
    ("mm", "HTTP-MPEG", "playable_fps"): {"CBQ": (30, 30), "RED": (25, 25), "FIFO": (25, 25)},
    ("mm", "BULK-MPEG", "playable_fps"): {"CBQ": (30, 30), "CBT": (25, 25), "RED": (10, 10), "FIFO": (10, 10),
                                          "FRED": (0, 0)},
}


def file_name(number: str) -> str:
    """`fig5_NN_<slug>.png` for dissertation figure `number` ("5.3"), or "" when none is made."""
    f = FIGURES[number]
    return "" if f["kind"] == "none" else f"fig5_{int(number.split('.')[1]):02d}_{f['slug']}.png"


def _label(mix: str) -> str:
    return mix.replace("-", "+")


def script(mix: str, algorithm: str, seed: int) -> dict[str, Any]:
    """The experiment script (TCP, multimedia, blast) for `mix` under `algorithm`, running to `SCRIPT_END_S`
    and measured from `MEASURE_FROM_S` (script time; HTTP mixes are shifted by their warm-up), with
    per-flow 1-s time series."""
    t0 = S.offset_s(mix)
    sc = S.scenario(mix, algorithm, "blast", seed)
    sc["run"] |= {"duration": f"{t0 + SCRIPT_END_S:g}s", "warmup": f"{t0 + MEASURE_FROM_S:g}s"}
    sc["output"] |= {"per_flow_timeseries": True, "bin": "1s"}
    return sc


def representative_scenario(mix: str, algorithm: str, seed: int) -> dict[str, Any]:
    """The representative run of `algorithm` on `mix`."""
    return script(mix, algorithm, seed)


def offered_scenario(mix: str, seed: int) -> dict[str, Any]:
    """Multimedia alone with the same flow ids and seed as `representative_scenario`: the TCP group is kept
    (so ids and random streams do not move) but only starts in the run's last millisecond, and the blast is
    left out. The multimedia sources are open loop, so they send what they send in every run."""
    sc = script(mix, "FIFO", seed)
    end = S.offset_s(mix) + SCRIPT_END_S
    tcp = sc["flows"][0]
    tcp.pop("start_jitter", None)
    tcp |= {"start": f"{end - 0.001:g}s", "stop": f"{end:g}s"}
    sc["flows"] = [f for f in sc["flows"] if f["kind"] != "udp-cbr"]
    return sc


def class_series(res, offset_s: float) -> pd.DataFrame:
    """1-s series of one run, at script time (bin end): TCP goodput (payload), TCP, multimedia and *other*
    throughput (wire bytes: goodput × the class's wire/payload ratio over the measured window) and TCP
    offered load (wire bytes reaching the bottleneck queue), in KB/s; the multimedia latency in ms; and the
    MPEG frame rates, `actual_fps` / `playable_fps` of the lowest-id MPEG flow and `*_fps_mean` over all MPEG
    flows (NaN without MPEG)."""
    f, ts = res.flows, res.timeseries
    out = pd.DataFrame({"time_s": ts["time_s"] - offset_s})

    def kb_per_s(kinds: list[str], wire: bool) -> pd.Series:
        sel = f[f["kind"].isin(kinds)]
        if sel.empty:
            return pd.Series(0.0, index=ts.index)
        ratio = sel["throughput_bps"].sum() / sel["goodput_bps"].sum() if wire and sel["goodput_bps"].sum() > 0 else 1.0
        cols = [f"flow{i}_goodput_bps" for i in sel["id"]]
        return pd.Series(ts[cols].to_numpy().sum(axis=1), index=ts.index) * ratio / 8 / KB

    out["tcp_goodput_KBps"] = kb_per_s(["tcp"], wire=False)
    out["tcp_KBps"] = kb_per_s(["tcp"], wire=True)
    tcp_ids = f[f["kind"] == "tcp"]["id"]
    out["tcp_offered_KBps"] = (pd.Series(ts[[f"flow{i}_offered_bps" for i in tcp_ids]].to_numpy().sum(axis=1),
                                         index=ts.index) / 8 / KB)
    mpeg = sorted(f[f["kind"] == "mpeg"]["id"])
    for key in ("actual_fps", "playable_fps"):
        cols = [f"flow{i}_{key}" for i in mpeg]
        out[key] = ts[cols[0]] if cols else np.nan
        out[f"{key}_mean"] = ts[cols].mean(axis=1) if cols else np.nan
    out["mm_KBps"] = kb_per_s(["mpeg", "proshare"], wire=True)
    out["other_KBps"] = kb_per_s(["udp-cbr"], wire=True)
    out["mm_latency_ms"] = ts["class1_delay_s"] * 1e3 if "class1_delay_s" in ts else np.nan
    return out


def period_mean(series: pd.DataFrame, col: str, period: str) -> float:
    """Mean of the 1-s bins that lie inside `period` (bin ends in (start + 1, end])."""
    a, b = S.PERIODS[period]
    inside = series[(series["time_s"] >= a + 1) & (series["time_s"] <= b)]
    return float(inside[col].mean())


def _suptitle(fig: plt.Figure, text: str) -> None:
    """A figure title wrapped to the figure's width (about 11 characters per inch at 10 pt)."""
    width = int(fig.get_figwidth() * 11)
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in text.split("\n")), fontsize=10)


def _window(ax, period: str) -> None:
    a, b = S.PERIODS[period]
    ax.axvspan(a, b, color="grey", alpha=0.12, lw=0)
    ax.set_xlim(a - MARGIN_S, b + MARGIN_S)


def _series_figure(number: str, runs: dict[tuple[str, str], pd.DataFrame], offered: dict[str, pd.DataFrame],
                   seed: int) -> plt.Figure:
    spec = FIGURES[number]
    mixes, col, period = spec["mixes"], spec["metric"], spec["period"]
    n_rows, n_cols = len(mixes), len(S.ALGORITHMS)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.3 * n_cols, 2.5 * n_rows + 0.8), sharex=True, sharey="row",
                             squeeze=False)
    for r, mix in enumerate(mixes):
        for c, alg in enumerate(S.ALGORITHMS):
            ax = axes[r][c]
            ser = runs[(mix, alg)]
            if col == "mm_KBps" and mix in offered:
                off = offered[mix]
                ax.plot(off["time_s"], off["mm_offered_KBps"], color="0.6", lw=0.8, label="offered")
            if col == "tcp_offered_KBps":
                ax.plot(ser["time_s"], ser["tcp_KBps"], color="0.6", lw=0.8, label="throughput")
            ax.plot(ser["time_s"], ser[col], color=COLORS[alg], lw=1.0, label=alg)
            _window(ax, period)
            mean = period_mean(ser, col, period)
            title = f"{alg}: mean {mean:.0f}"
            if col == "tcp_offered_KBps":
                title += f" (throughput {period_mean(ser, 'tcp_KBps', period):.0f})"
            ax.set_title(title, fontsize=9)
            ax.grid(alpha=0.3)
            if c == 0:
                tag = f"({'abcd'[r]}) " if n_rows > 1 else ""
                ax.set_ylabel(f"{tag}{_label(mix)}\n{SERIES[col]}", fontsize=8)
            if r == n_rows - 1:
                ax.set_xlabel("script time (s)")
        axes[r][0].set_ylim(bottom=0)
    if col in ("mm_KBps", "tcp_offered_KBps"):
        axes[0][0].legend(fontsize=7, loc="lower left")
    where = {"blast": "blast", "mm": "multimedia"}[period]
    _suptitle(fig, f"Fig. {number} (Parris 2001): {spec['what']}\none run per algorithm (seed {seed}), 1-s means; "
                   f"shaded: {where} measurement period {S.PERIODS[period][0]:g}–{S.PERIODS[period][1]:g} s; "
                   "panel title: the run's mean over the period")
    fig.tight_layout()
    return fig


def _offered_figure(number: str, offered: dict[str, pd.DataFrame], seed: int) -> plt.Figure:
    spec = FIGURES[number]
    mixes, period = spec["mixes"], spec["period"]
    fig, axes = plt.subplots(1, len(mixes), figsize=(max(6.5, 3.6 * len(mixes)), 3.6), squeeze=False)
    for i, (ax, mix) in enumerate(zip(axes[0], mixes)):
        off = offered[mix]
        ax.plot(off["time_s"], off["mm_offered_KBps"], "k*", ms=3, label="offered (1-s means)")
        if number == "5.13":
            alloc = S.MIXES[mix]["cbq"]["mm"] * LINK_KBPS
            ax.axhline(alloc, color="k", ls="--", lw=1, label=f"CBQ B_mm = {alloc:.0f} KB/s")
            ax.legend(fontsize=7, loc="lower left")
        _window(ax, period)
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        tag = f"({'abcd'[i]}) " if len(mixes) > 1 else ""
        ax.set(title=f"{tag}{_label(mix)}: mean {period_mean(off, 'mm_offered_KBps', period):.0f}",
               xlabel="script time (s)")
    axes[0][0].set_ylabel(SERIES["mm_offered_KBps"])
    _suptitle(fig, f"Fig. {number} (Parris 2001): {spec['what'].split(' (')[0]}\nseed {seed}; the same for every "
                   "algorithm (open-loop sources); shaded: measurement period")
    fig.tight_layout()
    return fig


def _stated(period: str, mix: str, col: str, alg: str) -> str:
    """The dissertation's stated value for a panel title ("30", "20–25", "—" when the text gives none)."""
    lo_hi = THESIS_FPS.get((period, mix, col), {}).get(alg)
    if lo_hi is None:
        return "—"
    lo, hi = lo_hi
    return f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"


def _fps_figure(number: str, runs: dict[tuple[str, str], pd.DataFrame], means: pd.DataFrame, seed: int,
                n_seeds: int) -> plt.Figure:
    spec = FIGURES[number]
    mixes, col, period = spec["mixes"], spec["metric"], spec["period"]
    n_rows, n_cols = len(mixes), len(S.ALGORITHMS)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(3.3 * n_cols, 2.6 * n_rows + 0.9), sharex=True, sharey=True,
                             squeeze=False)
    a, b = S.PERIODS[period]
    for r, mix in enumerate(mixes):
        d = means[(means["mix"] == mix) & (means["period"] == period)].set_index("algorithm")
        for c, alg in enumerate(S.ALGORITHMS):
            ax = axes[r][c]
            ser = runs[(mix, alg)]
            ax.plot(ser["time_s"], ser[f"{col}_mean"], color="0.6", lw=0.8, label="mean of the MPEG flows")
            ax.plot(ser["time_s"], ser[col], color=COLORS[alg], lw=1.0, label="representative flow")
            ax.axhline(30, color="0.5", ls=":", lw=1)
            _window(ax, period)
            seeds_mean = float(d[col].get(alg, np.nan)) if col in d else np.nan
            title = (f"{alg}: run {period_mean(ser, col, period):.1f}; {n_seeds}-seed mean {seeds_mean:.1f}\n"
                     f"dissertation: {_stated(period, mix, col, alg)}")
            if col == "playable_fps":
                inside = ser[(ser["time_s"] >= a + 1) & (ser["time_s"] <= b)][col]
                title += f"; ≥20 fps {100 * float((inside >= 20).mean()):.0f}% of s"
            ax.set_title(title, fontsize=8)
            ax.grid(alpha=0.3)
            if c == 0:
                tag = f"({'ab'[r]}) " if n_rows > 1 else ""
                ax.set_ylabel(f"{tag}{_label(mix)}\n{SERIES[col]}", fontsize=8)
            if r == n_rows - 1:
                ax.set_xlabel("script time (s)")
    axes[0][0].set_ylim(0, 35)
    axes[0][0].legend(fontsize=6, loc="lower left")
    where = {"blast": "blast", "mm": "multimedia"}[period]
    what = "complete" if col == "actual_fps" else "decodable (IBBPBB)"
    _suptitle(fig, f"Fig. {number} (Parris 2001): {spec['what']}\none run per algorithm (seed {seed}); frames {what} at "
                   f"the receiver per 1-s interval; shaded: {where} measurement period {a:g}–{b:g} s; sender 30 "
                   f"frames/s (dotted); title: period mean of the representative flow in this run, the mean over "
                   f"{n_seeds} seed(s) and the 4 flows, and the dissertation's stated value")
    fig.tight_layout()
    return fig


def index_markdown(names: dict[str, str], seed: int, n_seeds: int) -> str:
    """The figure index: one row per dissertation figure 5.3–5.27."""
    rows = ["| dissertation | our file | what it shows | how ours differs |", "|---|---|---|---|"]
    for number, spec in FIGURES.items():
        name = names.get(number, "")
        cell = f"[{name}]({name})" if name else "—"
        differs = spec["differs"].format(seed=seed, n=n_seeds)
        rows.append(f"| Fig. {number} | {cell} | {spec['what']} | {differs} |")
    return "\n".join(rows)


def _means(seeds: tuple[int, ...], workers: int | None, quiet: bool) -> pd.DataFrame:
    from . import cbt  # the period means are cbt.run_all's; imported here to keep the dependency one-way

    return cbt.run_all(cbt.Plan(seeds=seeds, quick=False, workers=workers, quiet=quiet))


def run(seeds: tuple[int, ...], out: Path, workers: int | None = None, quiet: bool = False, *,
        means: pd.DataFrame | None = None) -> tuple[list[str], str]:
    """Writes Figs. 5.3–5.27 (those that can be made) into `out` and returns their file names and a
    markdown section with the figure index.

    `means` is `cbt.run_all`'s frame (period means over `seeds`, one row per mix, period and algorithm);
    without it the runs are made here. Time series come from one run per (mix, algorithm) with `seeds[0]`.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seed = seeds[0]
    mixes = list(S.MIXES)
    jobs = [Job(representative_scenario(m, a, seed), {"mix": m, "algorithm": a}) for m in mixes for a in S.ALGORITHMS]
    jobs += [Job(offered_scenario(m, seed), {"mix": m, "algorithm": "offered"}) for m in mixes]

    # Keep only each run's class series (the per-flow columns are large for HTTP); shift to script time after.
    results = run_jobs(jobs, lambda res: {"series": class_series(res, 0.0)}, workers=workers, desc="Ch. V figures",
                       quiet=quiet)
    for r in results:
        r["series"]["time_s"] -= S.offset_s(r["mix"])
    runs = {(r["mix"], r["algorithm"]): r["series"] for r in results if r["algorithm"] != "offered"}
    offered = {r["mix"]: r["series"].rename(columns={"mm_KBps": "mm_offered_KBps"})
               for r in results if r["algorithm"] == "offered"}
    if means is None:
        means = _means(seeds, workers, quiet)

    names: dict[str, str] = {}
    for number, spec in FIGURES.items():
        if spec["kind"] == "none":
            continue
        if spec["kind"] == "series":
            fig = _series_figure(number, runs, offered, seed)
        elif spec["kind"] == "offered":
            fig = _offered_figure(number, offered, seed)
        else:
            fig = _fps_figure(number, runs, means, seed, len(seeds))
        name = file_name(number)
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        names[number] = name

    text = "\n".join([
        "## Ch. V figures, one for one",
        "",
        f"Each dissertation figure of Ch. V and the file that mirrors it. Time series are one representative run "
        f"per (mix, algorithm) with seed {seed}, as the dissertation shows one representative run; script time, "
        "with the HTTP mixes' 120 s warm-up removed; the measurement period is shaded. The frame-rate panels' "
        f"titles add the period means over {len(seeds)} seed(s). Module doc of `python/aqmlab/repro/cbt_figures.py`: what our results "
        "record and how each series is derived.",
        "",
        index_markdown(names, seed, len(seeds)),
        "",
    ] + [f"![Fig. {n}]({f})" for n, f in names.items()])
    return list(names.values()), text + "\n"
