"""The delay–goodput graph of a sweep (RFC 7928 §2.7; docs/sweep.md, "The delay–goodput plot").

RFC 7928 ("Characterization Guidelines for Active Queue Management", §2.7) asks AQM evaluations to
show the trade-off between queueing delay and goodput as one graph: the x axis is the queueing delay
and the y axis the goodput, the x axis inverted so that "better" is up and to the right, each run a
point, and the runs of one configuration summarised by an ellipse (Winstein's presentation, as in the
ns-3 AQM evaluation suite). Here:

* a run's point is (``queue_mean_sojourn_s`` in ms, ``goodput_bps`` in Mb/s) from the sweep table:
  the mean sojourn at the forward bottleneck and the aggregate goodput, both after warm-up;
* a *configuration* is one combination of the swept values other than ``run.seed``; its runs
  (one per seed) share a colour;
* for a configuration with at least 3 runs the ellipse is the 1-standard-deviation contour of the
  bivariate normal fitted to its points (sample mean μ, sample covariance Σ with n − 1): the set
  {x : (x − μ)ᵀ Σ⁻¹ (x − μ) = 1}. Its semi-axes are the square roots of Σ's eigenvalues, along their
  eigenvectors (:func:`covariance_ellipse`). For a normal sample it encloses about 39 % of the
  points (1 − e^(−1/2)), not 68 % as ±1σ does in one dimension.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["Ellipse", "covariance_ellipse", "configurations", "min_span", "plot_delay_goodput", "PLOT_FILE",
           "MAX_LEGEND", "MIN_ELLIPSE_RUNS", "MIN_SPAN_ABS", "MIN_SPAN_FRACTION", "SEED_KEY"]

PLOT_FILE = "delay_goodput.png"
#: The swept key whose values are repetitions of one configuration, not configurations.
SEED_KEY = "run.seed"
#: An ellipse needs this many runs: two points give a covariance of rank ≤ 1 (a segment).
MIN_ELLIPSE_RUNS = 3
#: Above this many configurations the graph has no legend (the colours could not be told apart).
MAX_LEGEND = 20
#: Each axis spans at least this fraction of its largest value ...
MIN_SPAN_FRACTION = 0.1
#: ... and at least this much (ms or Mb/s), so near-equal runs are not magnified into a spread.
MIN_SPAN_ABS = 0.01


@dataclass(frozen=True)
class Ellipse:
    """The 1-σ contour of a fitted bivariate normal, in the points' units, as matplotlib's
    ``patches.Ellipse`` takes it: ``width`` and ``height`` are full axis lengths (2√λ), ``width``
    along the major axis, which makes ``angle_deg`` ∈ [0, 180) with the x axis."""

    center: tuple[float, float]
    width: float
    height: float
    angle_deg: float


def covariance_ellipse(points: Sequence[Sequence[float]] | np.ndarray) -> Ellipse | None:
    """The 1-standard-deviation ellipse of 2-D points (eigen-decomposition of the 2×2 sample
    covariance), or None for fewer than :data:`MIN_ELLIPSE_RUNS` points.

    Identical points give a degenerate ellipse (width = height = 0); collinear ones a zero height.

    >>> e = covariance_ellipse([(-1, 0), (1, 0), (0, -2), (0, 2)])  # var x = 2/3, var y = 8/3
    >>> round(e.width, 6), round(e.height, 6), e.angle_deg
    (3.265986, 1.632993, 90.0)
    """
    xy = np.asarray(points, dtype=float).reshape(-1, 2)
    if len(xy) < MIN_ELLIPSE_RUNS:
        return None
    center = xy.mean(axis=0)
    cov = np.cov(xy, rowvar=False, ddof=1)
    eigvals, eigvecs = np.linalg.eigh(cov)  # ascending; the major axis is the last column
    minor, major = (math.sqrt(max(v, 0.0)) for v in eigvals)  # rounding can make a zero slightly negative
    if major == minor:  # a circle (or a point): no direction stands out
        angle = 0.0
    else:
        vx, vy = eigvecs[:, 1]
        angle = math.degrees(math.atan2(vy, vx)) % 180.0
    return Ellipse((float(center[0]), float(center[1])), 2 * major, 2 * minor, angle)


def configurations(table: pd.DataFrame, keys: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    """The table's rows grouped by the swept values other than ``run.seed``, in the grid's order,
    each with its legend label (``queue.kind=red, flows[0].count=10``)."""
    config_keys = [k for k in keys if k != SEED_KEY and k in table]
    if not config_keys:
        return [("all runs", table)] if len(table) else []
    labels = table[config_keys].astype(str).apply(lambda r: ", ".join(f"{k}={v}" for k, v in r.items()), axis=1)
    return [(label, table[labels == label]) for label in dict.fromkeys(labels)]


def min_span(lo: float, hi: float) -> tuple[float, float] | None:
    """Axis limits around [lo, hi] spanning at least :data:`MIN_SPAN_FRACTION` of the larger magnitude
    (and :data:`MIN_SPAN_ABS`), centred on the data; None when the span is already that wide.

    Without it, runs that agree to a few kb/s (the RFC 7928 ``unresponsive`` case: every AQM at the
    link rate) were spread over an axis 0.0005 Mb/s tall, and differences of rounding looked large.

    >>> min_span(10.0, 10.0)
    (9.5, 10.5)
    >>> min_span(0.0, 10.0) is None
    True
    """
    need = max(MIN_SPAN_FRACTION * max(abs(lo), abs(hi)), MIN_SPAN_ABS)
    if hi - lo >= need:
        return None
    mid = (lo + hi) / 2
    return mid - need / 2, mid + need / 2


def plot_delay_goodput(table: pd.DataFrame, keys: Sequence[str], path: Path, *, heading: str | None = None) -> None:
    """Draws the delay–goodput graph of a sweep table into a PNG at ``path``, atomically (a hidden
    file beside it, renamed). Rows without a delay or goodput (a run with no packets) are left out.
    ``heading``, when given, is the title's first line (``aqmlab suite`` names the scenario there)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Ellipse as EllipsePatch

    groups = configurations(table, keys)
    cmap = plt.get_cmap("tab10" if len(groups) <= 10 else "tab20" if len(groups) <= 20 else "viridis")
    fig, ax = plt.subplots(figsize=(9, 6.5))
    for i, (label, rows) in enumerate(groups):
        colour = cmap(i if len(groups) <= 20 else i / max(len(groups) - 1, 1))
        pts = rows[["queue_mean_sojourn_s", "goodput_bps"]].dropna().to_numpy(dtype=float) * (1e3, 1e-6)
        ax.scatter(pts[:, 0], pts[:, 1], s=18, color=colour, label=label, zorder=3)
        e = covariance_ellipse(pts)
        if e is not None:
            ax.add_patch(EllipsePatch(e.center, e.width, e.height, angle=e.angle_deg, facecolor=colour, alpha=0.15,
                                      edgecolor=colour, lw=1.2, zorder=2))
            ax.plot(*e.center, marker="x", color=colour, ms=8, zorder=4)
    for get, set_ in ((ax.get_xlim, ax.set_xlim), (ax.get_ylim, ax.set_ylim)):
        widened = min_span(*get())
        if widened is not None:
            set_(*widened)
    ax.invert_xaxis()  # RFC 7928 §2.7: less delay to the right, so better is up-right
    ax.set_xlabel("queueing delay: mean sojourn at the bottleneck (ms)")
    ax.set_ylabel("goodput (Mb/s)")
    title = (f"{heading}\n" if heading else "") + f"delay vs goodput, {len(table)} runs; ellipses: 1σ of each configuration with ≥ {MIN_ELLIPSE_RUNS} runs"
    if len(groups) > MAX_LEGEND:
        title += f"\n{len(groups)} configurations: no legend above {MAX_LEGEND}"
    elif groups:
        ax.legend(fontsize="small" if len(groups) <= 10 else "x-small", loc="best")
    ax.set_title(title, fontsize="medium")
    ax.grid(True, lw=0.4, alpha=0.5)
    fig.tight_layout()
    tmp = path.parent / f".{path.name}.partial-{os.getpid()}"
    # No "Software" text chunk: the PNG depends on the table alone (and matplotlib's drawing).
    fig.savefig(tmp, dpi=110, format="png", metadata={"Software": None})
    plt.close(fig)
    os.replace(tmp, path)
