"""The figures of `aqmlab repro tsq`, the thesis's Figs. 5.2–5.12: the delay and throughput CDFs of E1/E2,
quality over the hint, the normalised quality of the E3/E5 mixes and E4's throughput over the UDP hint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import tsq_scenarios as S  # noqa: E402
from .common import save_figure  # noqa: E402
from .tsq_cdfs import CDF_HINTS, pooled  # noqa: E402


def _cdf(ax, values, label):
    v = np.sort(np.asarray(values))
    if len(v):
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=label)


def figure_cdfs(df: pd.DataFrame, out: Path, name: str, what: str) -> str:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for h in CDF_HINTS:
        if (df["hint"] == h).any():
            _cdf(axes[0], pooled(df, h, "delay_samples_ms") - S.PROPAGATION_ONE_WAY_S * 1e3, f"hint {h}")
            _cdf(axes[1], pooled(df, h, "media_windows_kbps"), f"{what} hint {h}")
    _cdf(axes[0], pooled(df, 0, "delay_samples_ms") - S.PROPAGATION_ONE_WAY_S * 1e3, "PI alone")
    _cdf(axes[1], pooled(df, 0, "media_windows_kbps"), f"{what}, PI alone")
    _cdf(axes[1], pooled(df, 16, "ftp_windows_kbps"), "FTP (20 flows), hint 16")
    axes[0].set(xlabel=f"{what} one-way delay − 150 ms propagation (ms), per packet", ylabel="CDF",
                title=f"{what}: queueing delay")
    axes[1].set(xlabel="throughput per 300-ms window (Kb/s)", ylabel="CDF", title=f"{what}: throughput")
    for ax in axes:
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    return save_figure(fig, out, name)


def figure_quality(h: pd.DataFrame, out: Path, name: str, what: str,
                   extra: dict[str, pd.DataFrame] | None = None) -> str:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    on = h[h["hint"] > 0]
    base = h[h["hint"] == 0]
    axes[0].plot(on["hint"], on["media_qd"], "o-", label="Q_delay")
    axes[0].plot(on["hint"], on["media_qt"], "s-", label="Q_throughput")
    axes[0].set(xlabel="delay hint", ylabel="quality", title=f"{what}: delay and throughput quality (Figs. 5.4/5.8)")
    axes[1].errorbar(on["hint"], on["media_q"], yerr=on["media_q_se"], fmt="o-", label="TSQ, TCP driven by CBR")
    if "media_q_win" in on:
        axes[1].plot(on["hint"], on["media_q_win"], "d-.", label="TSQ, TCP driven by CBR, per 300-ms window (S.3)")
    if len(base):
        axes[1].axhline(float(base["media_q"].iloc[0]), color="gray", ls="--", label="PI alone")
    for label, e in (extra or {}).items():
        eo = e[e["hint"] > 0]
        axes[1].plot(eo["hint"], eo["media_q"], "^:", label=label)
    axes[1].set(xlabel="delay hint", ylabel="Q = min(Q_d, Q_t)", title=f"{what}: overall quality (Figs. 5.5/5.9)")
    for ax in axes:
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    return save_figure(fig, out, name)


def figure_mixes(e3: pd.DataFrame, e5: pd.DataFrame, out: Path, name: str) -> str:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, df, media, title in ((axes[0], e3, "audio (TCP-friendly, hint 6)", "E3, Fig. 5.10"),
                                 (axes[1], e5, "UDP audio (hint 6)", "E5, Fig. 5.12")):
        x = np.arange(len(df))
        ax.bar(x - 0.2, df["media_q_norm"], 0.4, yerr=df["media_q_norm_se"], label=media)
        ax.bar(x + 0.2, df["ftp_q_norm"], 0.4, yerr=df["ftp_q_norm_se"], label="FTP (hint 16)")
        ax.axhline(1.0, color="gray", lw=0.8)
        ax.set_xticks(x, [f"{n}/{100 - n}" for n in df["n"]])
        ax.set(xlabel="media/FTP flows", ylabel="normalised quality (TSQ ÷ PI)", title=title)
        ax.legend(fontsize=8)
    return save_figure(fig, out, name)


def figure_e4(n4: pd.DataFrame, out: Path, name: str) -> str:
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.errorbar(n4["hint"], n4["ftp_kbps_norm"], yerr=n4["ftp_kbps_norm_se"], fmt="o-", label="FTP mean throughput")
    ax.errorbar(n4["hint"], n4["media_kbps_norm"], yerr=n4["media_kbps_norm_se"], fmt="s--",
                label="UDP flow throughput")
    ax.axhline(1.0, color="gray", lw=0.8)
    ax.set(xlabel="UDP delay hint", ylabel="throughput, TSQ ÷ PI alone", title="E4, Fig. 5.11: one 600 Kb/s UDP flow")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return save_figure(fig, out, name)


def draw_figures(r: dict[str, pd.DataFrame], info: dict[str, Any], out: Path) -> dict[str, str]:
    """Every figure of the report, from the result frames `r` and the summaries `info` of `claims`, written
    to `out`: the report's name for each figure → its file name."""
    return {
        "e1_cdf": figure_cdfs(r["e1"], out, "fig5_2-5_3_audio_cdfs.png", "audio"),
        "e1_q": figure_quality(info["h1"], out, "fig5_4-5_5_audio_quality.png", "audio",
                               {"UDP-CBR model": info["hu1"]}
                               | ({"TFRC-CBR model": info["ht1"]} if "ht1" in info else {})
                               | ({"l = 300 ms": info["hl"]} if "hl" in info else {})
                               if "hu1" in info else None),
        "e2_cdf": figure_cdfs(r["e2"], out, "fig5_6-5_7_video_cdfs.png", "video"),
        "e2_q": figure_quality(info["h2"], out, "fig5_8-5_9_video_quality.png", "video",
                               {"UDP-CBR model": info["hu2"]}
                               | ({"TFRC-CBR model": info["ht2"]} if "ht2" in info else {})
                               if "hu2" in info else None),
        "mixes": figure_mixes(info["n3"], info["n5"], out, "fig5_10_5_12_mixes.png"),
        "e4": figure_e4(info["n4"], out, "fig5_11_udp_hint.png"),
    }
