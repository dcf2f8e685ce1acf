"""The figures of `aqmlab repro white` (`FIGURES`): Exp 1's goodput against RTT, the cluster aggregates
of Exp 2 and of Exps 5–6, WHITE's RTT estimates with RED's average, and the α/β grid's scores."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from . import white_scenarios as S  # noqa: E402
from .common import save_figure  # noqa: E402
from .white_grid import TUNED, with_score  # noqa: E402
from .white_runs import AQMS  # noqa: E402
from .white_scenarios import DYNAMIC  # noqa: E402

if TYPE_CHECKING:
    from .white import Plan


FIGURES = {
    "exp1": "fig5_1_exp1_goodput_vs_rtt.png",
    "clusters": "fig5_6-5_7_dynamic_clusters.png",
    "exp2_clusters": "fig5_2_exp2_clusters.png",
    "r_formula": "fig3_2_r_formula_trace.png",
    "grid": "alpha_beta_grid.png",
}


def figures(df: pd.DataFrame, grid: pd.DataFrame, p: Plan, out: Path) -> None:
    exp1 = S.experiments()["exp1"]
    rtt = [2 * (d + 5) for d in exp1.access_ms]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for aqm in AQMS:
        rows = df[(df["aqm"] == aqm) & (df["exp"] == "exp1")]
        if len(rows):
            ax.plot(rtt, np.mean(np.stack(rows["goodputs"].to_list()), axis=0), marker="o", ms=3, label=aqm)
    ax.axhline(S.FAIR_SHARE_MBPS, color="k", lw=0.8, ls="--", label="fair share")
    ax.set(xlabel="propagation RTT (ms)", ylabel="goodput (Mb/s)", title="Exp 1: per-flow goodput, 30-150 s (seed mean)")
    ax.legend(fontsize=8, ncol=2)
    save_figure(fig, out, FIGURES["exp1"])

    # Fig. 5.2: Exp 2's cluster aggregates in 250 ms bins over 30-60 s, one AQM per panel.
    fig, axes = plt.subplots(2, 3, figsize=(13, 6), sharex=True, sharey=True)
    for ax, aqm in zip(axes.flat, ("red", "fred", "csfq", "drr", "chardonnay", "chablis")):
        rows = df[(df["aqm"] == aqm) & (df["exp"] == "exp2")]
        if not len(rows) or not isinstance(rows.iloc[0].get("cluster_series"), dict):
            continue
        r0 = rows.iloc[0]
        window = (r0["time_s"] > 30) & (r0["time_s"] <= 60)
        for c, series in r0["cluster_series"].items():
            ax.plot(r0["time_s"][window], series[window], lw=0.8, label=c)
        ax.axhline(10 / 3, color="k", lw=0.6, ls="--")
        ax.set_title(f"exp2 {aqm} (seed {r0['seed']})", fontsize=9)
    axes[0, 0].set_ylabel("cluster goodput (Mb/s, 250 ms bins)")
    axes[1, 0].set_ylabel("cluster goodput (Mb/s, 250 ms bins)")
    axes[0, 0].legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("time (s); dashed: a third of the link")
    save_figure(fig, out, FIGURES["exp2_clusters"])

    fig, axes = plt.subplots(2, 3, figsize=(13, 6), sharex=True, sharey=True)
    for row, exp in enumerate(DYNAMIC):
        for col, aqm in enumerate(("red", "drr", "chardonnay")):
            ax = axes[row, col]
            rows = df[(df["aqm"] == aqm) & (df["exp"] == exp)]
            if not len(rows):
                continue
            r0 = rows.iloc[0]
            for c, series in r0["cluster_series"].items():
                ax.plot(r0["time_s"], series, lw=0.8, label=c)
            for t in (30, 60, 90):
                ax.axvline(t, color="k", lw=0.5)
            ax.set_title(f"{exp} {aqm} (seed {r0['seed']})", fontsize=9)
            if col == 0:
                ax.set_ylabel("cluster goodput (Mb/s, 250 ms bins)")
    axes[0, 0].legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    save_figure(fig, out, FIGURES["clusters"])

    # Router RTT estimates and RED's average, seed 1: Exp 2 (whose R_formula the report compares with the
    # flows' mean hint) and Exps 5–6, for Chardonnay and Chablis (spec default reading).
    trace_exps = ("exp2", *DYNAMIC)
    fig, axes = plt.subplots(4, 3, figsize=(14, 10), sharex="col", height_ratios=(2, 1, 2, 1))
    exp2 = S.experiments()["exp2"]
    flow_mean = float(np.mean([2 * (d + 5) + 1 for d in exp2.access_ms]))
    for r, aqm in enumerate(("chardonnay", "chablis")):
        for col, exp in enumerate(trace_exps):
            ax, ax_q = axes[2 * r, col], axes[2 * r + 1, col]
            rows = df[(df["aqm"] == aqm) & (df["exp"] == exp)].sort_values("seed")
            if not len(rows) or not isinstance(rows.iloc[0].get("r_series"), tuple):
                continue
            r0 = rows.iloc[0]
            ax.plot(r0["time_s"], r0["r_series"][0], lw=0.5, color="0.6", label="R_average")
            ax.plot(r0["time_s"], r0["r_series"][1], lw=1.2, label="R_formula")
            if exp == "exp2":
                ax.axhline(flow_mean, color="k", lw=0.8, ls="--", label=f"flows' mean hint ({flow_mean:.0f} ms)")
            ax_q.plot(r0["time_s"], r0["r_series"][2], lw=0.8, color="tab:red")
            if exp in DYNAMIC:
                for a in (ax, ax_q):
                    for t in (30, 60, 90):
                        a.axvline(t, color="k", lw=0.5)
            ax.set_title(f"{exp}, {aqm} (seed {r0['seed']})", fontsize=9)
            ax.legend(fontsize=7)
            if col == 0:
                ax.set_ylabel("RTT estimate (ms)")
                ax_q.set_ylabel("RED avg (pkts)")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    save_figure(fig, out, FIGURES["r_formula"])

    exps = [e for e in p.grid_exps if len(grid[grid["exp"] == e])]
    if not exps:
        return
    g_all = with_score(grid)
    fig, axes = plt.subplots(2, len(exps), figsize=(3.6 * len(exps) + 1, 6.5), squeeze=False)
    for r, aqm in enumerate(("chardonnay", "chablis")):
        for c, exp in enumerate(exps):
            ax = axes[r, c]
            g = g_all[(g_all["aqm"] == aqm) & (g_all["exp"] == exp)].groupby(["alpha", "beta"])["score"].mean().unstack()
            if g.empty:
                continue
            # The α steps are uneven: cells by index, labelled with the values.
            im = ax.imshow(g.to_numpy().T, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(g.index)), [f"{a:g}" for a in g.index], fontsize=7)
            ax.set_yticks(range(len(g.columns)), [f"{b:g}" for b in g.columns], fontsize=7)
            a0, b0 = TUNED[aqm]
            ax.plot(list(g.index).index(a0) if a0 in g.index else np.nan,
                    list(g.columns).index(b0) if b0 in g.columns else np.nan, "w+", ms=9, mew=2)
            ax.set_title(f"{aqm} {exp} ({'mean period JFI' if exp in DYNAMIC else 'JFI'})", fontsize=9)
            if r == 1:
                ax.set_xlabel("alpha")
            if c == 0:
                ax.set_ylabel("beta")
            fig.colorbar(im, ax=ax)
    fig.suptitle("α/β grid, seed-mean score (+: the thesis's exponents)", fontsize=10)
    save_figure(fig, out, FIGURES["grid"])
