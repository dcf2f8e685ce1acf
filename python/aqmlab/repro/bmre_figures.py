"""The figures of the BMRE reproduction: Figs. 4.2, 4.3, 4.5 and 4.10 (E1 and E3 against N, one curve per
scheme), BMRE's internals over time (N_flow, Fair Drops, recycles) and E4's β, estimated and true rate and
goodput (Fig. 4.6). E2's figure (Fig. 4.4) is `bmre_drop_events.figure`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import bmre_scenarios as S  # noqa: E402
from .bmre_verdicts import mean_by_n  # noqa: E402
from .common import save_figure  # noqa: E402


def figures(df: pd.DataFrame, internals: dict[str, dict[str, Any]], out: Path) -> list[str]:
    names = []
    for exp, col, ylabel, name, ref in (
        ("E1", "S", "S (normalised goodput std)", "fig4_3_fairness.png", 0.1),
        ("E1", "mean_queue_bytes", "time-averaged queue (bytes)", "fig4_2_queue.png", None),
        ("E1", "drop_prob_tcp", "drops / TCP packets sent", "fig4_10_drop_prob.png", None),
        ("E3", "tcp_share", "mean TCP goodput / fair share", "fig4_5_tcp_share_cbr.png", 0.5),
    ):
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for aqm in S.AQMS:
            m = mean_by_n(df, exp, aqm, col)
            if len(m):
                ax.plot(m.index, m.values, marker="o", ms=3, label=aqm)
        if ref is not None:
            ax.axhline(ref, color="grey", ls=":")
        ax.set_xscale("log")
        ax.set_xlabel("N (flows)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{exp}: {ylabel}")
        ax.legend()
        names.append(save_figure(fig, out, name))
    fig, axes = plt.subplots(len(internals), 1, figsize=(7, 2.6 * len(internals)), squeeze=False)
    for ax, (name, r) in zip(axes[:, 0], internals.items()):
        ts = r["ts"]
        ax.plot(ts["time_s"], ts["flow_estimate"], label="N_flow")
        ax.set_ylabel("N_flow")
        ax2 = ax.twinx()
        ax2.plot(ts["time_s"], ts["bmre_fair_drops"].diff().fillna(0), color="C3", lw=0.7, label="Fair Drops / bin")
        ax2.plot(ts["time_s"], ts["bmre_recycled"].diff().fillna(0), color="C2", lw=0.7, label="recycles / bin")
        ax2.set_ylabel("per 0.5 s")
        ax.set_title(f"{name}: BMRE internals (mode mean {ts['bmre_mode'].mean():.2f})")
        ax.set_xlabel("time (s)")
        ax2.legend(loc="upper right", fontsize=7)
    names.append(save_figure(fig, out, "bmre_internals.png"))
    r = internals.get("E4")
    if r is not None:
        ts, kinds = r["ts"], r["kinds"]
        fig, axes = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
        tcp0 = int(np.flatnonzero(kinds == "tcp")[0])
        cbr0 = int(np.flatnonzero(kinds == "udp-cbr")[0])
        for i, lab in ((tcp0, "TCP"), (cbr0, "CBR")):
            axes[0].plot(ts["time_s"], ts[f"flow{i}_qdisc_beta"], label=f"{lab} flow {i}")
            axes[1].plot(ts["time_s"], ts[f"flow{i}_qdisc_rate_bps"] / 1e6, label=f"{lab} {i} estimated")
            axes[1].plot(ts["time_s"], ts[f"flow{i}_goodput_bps"] / 1e6, ls=":", label=f"{lab} {i} true (goodput, bin)")
        cbr = [i for i in range(len(kinds)) if kinds[i] == "udp-cbr"]
        tcp = [i for i in range(len(kinds)) if kinds[i] == "tcp"]
        axes[2].plot(ts["time_s"], ts[[f"flow{i}_goodput_bps" for i in cbr]].mean(axis=1) / 1e6, label="CBR mean")
        axes[2].plot(ts["time_s"], ts[[f"flow{i}_goodput_bps" for i in tcp]].mean(axis=1) / 1e6, label="TCP mean")
        axes[2].axhline(1.0, color="grey", ls=":")
        axes[0].set_ylabel("β")
        axes[1].set_ylabel("Mb/s")
        axes[2].set_ylabel("goodput (0.5 s), Mb/s")
        axes[2].set_xlabel("time (s)")
        for a in axes:
            a.legend(fontsize=7)
        axes[0].set_title("E4 (12 TCP + 8 CBR at 3 Mb/s), BMRE: β, estimated vs true rate, goodput", fontsize=9)
        names.append(save_figure(fig, out, "fig4_6_e4_bmre.png"))
    return names
