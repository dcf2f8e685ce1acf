"""The per-flow goodput graph of a sweep: how each configuration shares the link among its flows
(docs/sweep.md, "The per-flow goodput plot"; Flent's per-flow box plots, peers' request #6).

One box per configuration (the swept values other than ``run.seed``, as in the delay–goodput graph,
:func:`aqmlab.sweep_plot.configurations`) and flow kind: the goodputs of every flow of that kind in
every run of the configuration (seeds pooled), after warm-up, from ``sweep_flows.parquet``. The box
spans the quartiles, the whiskers the 5th and 95th percentiles, the line is the median and the dot the
mean. A fair configuration is a short box; one that starves some flows has a whisker near zero.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .sweep_plot import configurations

__all__ = ["FLOW_PLOT_FILE", "MAX_LABELLED_BOXES", "flow_boxes", "plot_flow_goodput"]

FLOW_PLOT_FILE = "flow_goodput.png"
#: Above this many boxes the x axis is numbered (box i is the i-th configuration and kind, in grid
#: order) instead of labelled with the values, which would overlap.
MAX_LABELLED_BOXES = 30


def flow_boxes(flows: pd.DataFrame, keys: Sequence[str]) -> list[tuple[str, np.ndarray]]:
    """(label, goodputs in Mb/s) per configuration and flow kind, in the grid's order; the kind is in the
    label only when the sweep has flows of more than one kind."""
    if flows.empty:
        return []
    several_kinds = flows["kind"].nunique() > 1
    out = []
    for label, rows in configurations(flows, keys):
        for kind, of_kind in rows.groupby("kind", sort=True):
            goodput = of_kind["goodput_bps"].dropna().to_numpy(dtype=float) / 1e6
            if len(goodput):
                out.append((f"{label} · {kind}" if several_kinds else label, goodput))
    return out


def plot_flow_goodput(flows: pd.DataFrame, keys: Sequence[str], path: Path, *, measured: str = "after warm-up") -> None:
    """Draws the per-flow goodput boxes of a sweep's per-flow table into a PNG at ``path``, atomically.
    ``measured`` says over what time the goodputs are (``aqmlab suite``'s scenarios have no warm-up)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    boxes = flow_boxes(flows, keys)
    fig, ax = plt.subplots(figsize=(9, 6.5))
    stats = []
    for i, (label, goodput) in enumerate(boxes, start=1):
        lo, q1, med, q3, hi = np.percentile(goodput, (5, 25, 50, 75, 95))
        shown = label if len(boxes) <= MAX_LABELLED_BOXES else str(i)
        stats.append({"label": shown, "whislo": lo, "q1": q1, "med": med, "q3": q3, "whishi": hi,
                      "mean": float(goodput.mean())})
    if stats:
        ax.bxp(stats, showfliers=False, showmeans=True, meanprops={"marker": "o", "markersize": 3})
        labelled = 6 < len(boxes) <= MAX_LABELLED_BOXES  # a few labels fit side by side; numbers always do
        ax.tick_params(axis="x", labelrotation=90 if labelled else 0, labelsize="small")
    ax.set_ylabel(f"goodput per flow {measured} (Mb/s)")
    runs = flows["run_id"].nunique() if "run_id" in flows else 0
    title = (f"per-flow goodput, {len(flows):,} flows of {runs} runs (seeds pooled)\n"
             "box: quartiles, whiskers 5th–95th percentile, line median, dot mean")
    if len(boxes) > MAX_LABELLED_BOXES:
        title += f"\nbox i = the i-th configuration{' and kind' if ' · ' in boxes[0][0] else ''} in grid order"
    ax.set_title(title, fontsize="medium")
    ax.grid(True, axis="y", lw=0.4, alpha=0.5)
    fig.tight_layout()
    tmp = path.parent / f".{path.name}.partial-{os.getpid()}"
    fig.savefig(tmp, dpi=110, format="png", metadata={"Software": None})  # no version text: same table, same PNG
    plt.close(fig)
    os.replace(tmp, path)
