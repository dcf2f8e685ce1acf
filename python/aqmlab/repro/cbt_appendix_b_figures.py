"""Parris 2001, App. B: the figures, one per sweep (`cbt_appb_*.png`), with the thesis's values or ranges drawn
in where it states them.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from .cbt_appendix_b_allocations import ALLOC_KBPS, B_OTHER, CBQ_OTHER_PCT, THESIS_CBQ_PCT, THESIS_CBT_BMM  # noqa: E402
from .cbt_appendix_b_claims import RED_BLAST_LATENCY  # noqa: E402
from .cbt_appendix_b_metrics import sweep_rows  # noqa: E402
from .cbt_appendix_b_plan import FIFO_MAXQ  # noqa: E402
from .common import save_figure  # noqa: E402


def figures(df: pd.DataFrame, out: Path) -> list[str]:
    names: list[str] = []

    d = sweep_rows(df, "FIFO")
    if len(d):
        fig, axes = plt.subplots(1, 3, figsize=(14, 4))
        for (mix, period), g in d.groupby(["mix", "period"], sort=False):
            g = g.sort_values("maxq")
            ls = "-" if period == "blast" else "--"
            axes[0].plot(g["maxq"], g["mm_latency_ms"], ls, marker="o", label=f"{mix} {period}")
            if period == "blast":
                axes[1].plot(g["maxq"], g["mm_loss_pps"], marker="o", label=mix)
                axes[2].plot(g["maxq"], g["tcp_KBps"], marker="o", label=f"{mix} TCP")
        q = np.array(FIFO_MAXQ)
        axes[0].plot(q, q * 1.2, "k:", label="1.2 ms × maxq (1500 B)")
        axes[0].set(xlabel="maxq (packets)", ylabel="MM latency (ms)", title="latency (solid: blast, dashed: MM period)")
        axes[1].set(xlabel="maxq (packets)", ylabel="pkt/s per flow", title="blast: MM loss")
        axes[2].set(xlabel="maxq (packets)", ylabel="KB/s", title="blast: TCP throughput")
        axes[0].legend(fontsize=6)
        axes[1].legend(fontsize=7)
        fig.suptitle("FIFO queue size sweep (App. B §2, Figs. B.1–B.6)")
        names.append(save_figure(fig, out, "cbt_appb_fifo.png"))
    d = sweep_rows(df, "RED", "HTTP-Proshare")
    if len(d):
        fig, axes = plt.subplots(1, 3, figsize=(14, 4))
        for th_min, g in d[d["period"] == "blast"].groupby("th_min"):
            g = g.sort_values("th_max")
            axes[0].plot(g["th_max"], g["mm_latency_ms"], marker="o", label=f"Th_min {th_min:g}")
        tm = np.array(sorted(RED_BLAST_LATENCY))
        axes[0].plot(tm, [np.mean(RED_BLAST_LATENCY[t]) for t in tm], "ks", mfc="none", label="thesis (Fig. B.14)")
        pkt = float(d[d["period"] == "blast"]["queue_pkt_bytes"].mean())
        axes[0].plot(tm, tm * 1000 * 8 / 10e6 * 1e3 + 3, "k:", label="Eq. B.3, 1,000 B + 3 ms")
        axes[0].plot(tm, tm * pkt * 8 / 10e6 * 1e3 + 3, "r:", label=f"Eq. B.3, our {pkt:.0f} B + 3 ms")
        axes[0].set(xlabel="Th_max", ylabel="ms", title="blast: MM latency")
        for ax, period, lo, hi in ((axes[1], "mm", 0.88, 0.98), (axes[2], "blast", 0.59, 0.65)):
            for th_min, g in d[d["period"] == period].groupby("th_min"):
                g = g.sort_values("th_max")
                ax.plot(g["th_max"], g["tcp_eff"], marker="o", label=f"Th_min {th_min:g}")
            ax.axhspan(lo, hi, color="grey", alpha=0.2, label="thesis range")
            ax.set(xlabel="Th_max", ylabel="throughput / load", title=f"{period} period: TCP efficiency")
        axes[0].legend(fontsize=7)
        fig.suptitle("RED, HTTP-Proshare (App. B §3–4, Figs. B.7, B.10, B.11, B.14)")
        names.append(save_figure(fig, out, "cbt_appb_red.png"))
    d = sweep_rows(df, "FRED", "HTTP-Proshare", "blast")
    if len(d):
        fig, axes = plt.subplots(1, 3, figsize=(14, 4))
        for th_min, g in d.groupby("th_min"):
            g = g.sort_values("th_max")
            for ax, col in zip(axes, ("tcp_KBps", "other_KBps", "mm_latency_ms")):
                ax.plot(g["th_max"], g[col], marker="o", label=f"Th_min {th_min:g}")
        for ax, (lo, hi), t in zip(axes, ((642, 1019), (166, 542), (27, 147)),
                                   ("TCP throughput (KB/s)", "UDP blast throughput (KB/s)", "MM latency (ms)")):
            ax.axhspan(lo, hi, color="grey", alpha=0.2)
            ax.set(xlabel="Th_max", title=t)
        axes[0].legend(fontsize=7)
        fig.suptitle("FRED, HTTP-Proshare, blast period (App. B §5, Figs. B.23, B.24, B.26; grey: thesis range)")
        names.append(save_figure(fig, out, "cbt_appb_fred.png"))
    for sweep, x, title in (("CBT", "b_mm", "CBT allocation sweeps, L = 100 ms, blast period (App. B §6, Figs. B.32–B.43)"),
                            ("CBQ", "b_mm", "CBQ allocation sweeps, blast period (App. B §7, Figs. B.45–B.54)")):
        d = sweep_rows(df, sweep)
        if d.empty:
            continue
        fig, axes = plt.subplots(1, 4, figsize=(17, 4))
        for mix, g in d.groupby("mix", sort=False):
            g = g.sort_values(x)
            line, = axes[0].plot(g[x], g["mm_loss_pps"], marker="o", label=mix)
            if "playable_fps" in g and g["playable_fps"].notna().any():
                axes[1].plot(g[x], g["playable_fps"], marker="o", color=line.get_color(), label=f"{mix} playable")
            axes[2].plot(g[x], g["mm_latency_ms"], marker="o", color=line.get_color())
            b_tcp = ALLOC_KBPS - g[x] if sweep == "CBQ" else ALLOC_KBPS - B_OTHER - g[x]
            if sweep == "CBQ":
                b_tcp = (100 - CBQ_OTHER_PCT - g["mm_pct"]) / 100 * ALLOC_KBPS
            axes[3].plot(b_tcp, g["tcp_KBps"], marker="o", color=line.get_color())
            thesis = THESIS_CBT_BMM[mix] if sweep == "CBT" else round(THESIS_CBQ_PCT[mix] / 100 * ALLOC_KBPS)
            axes[0].axvline(thesis, color=line.get_color(), ls=":", lw=0.8)
        lim = np.array([800, 1000])
        axes[3].plot(lim, lim, "k:", label="1:1")
        axes[0].set(xlabel="B_mm (KB/s)", ylabel="pkt/s per flow", title="MM loss (dotted: thesis's choice)")
        axes[1].set(xlabel="B_mm (KB/s)", ylabel="frames/s", title="MPEG playable fps")
        axes[2].set(xlabel="B_mm (KB/s)", ylabel="ms", title="MM latency")
        axes[3].set(xlabel="B_TCP (KB/s)", ylabel="KB/s", title="TCP throughput vs B_TCP")
        axes[0].legend(fontsize=7)
        axes[3].legend(fontsize=7)
        fig.suptitle(title)
        names.append(save_figure(fig, out, f"cbt_appb_{sweep.lower()}.png"))
    return names
