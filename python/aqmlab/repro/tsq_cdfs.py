"""The distributions behind the CDFs of `aqmlab repro tsq` (Figs. 5.2/5.3/5.6/5.7): the hints they show,
the samples of every seed pooled, their 0–100 % quantiles, the distance between two distributions and the
per-experiment, hint, seed and series quantile table written to ``cdf_quantiles.csv``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


CDF_HINTS = (1, 6, 16)

CDF_SERIES = (("delay_ms", "delay_samples_ms"), ("media_kbps_300ms", "media_windows_kbps"),
              ("ftp_kbps_300ms", "ftp_windows_kbps"))

PCTS = np.arange(101)
DIST_PCTS = slice(1, 100)  # the distance leaves out the extremes (p0, p100)


def quantiles(x) -> np.ndarray:
    """The 0 %, 1 %, …, 100 % quantiles (NumPy's linear interpolation) that `cdf_quantiles.csv` stores."""
    x = np.asarray(x, float)
    return np.percentile(x, PCTS) if len(x) else np.full(len(PCTS), np.nan)


def quantile_distance(qx: np.ndarray, qy: np.ndarray) -> float:
    """How far apart two distributions lie: the mean absolute difference of their 1 %–99 % quantiles (the
    area between the two quantile functions, i.e. the 1-Wasserstein distance, trimmed of the extremes), in
    the samples' unit. Computed from the stored quantiles, so it is recomputable from cdf_quantiles.csv."""
    return float(np.mean(np.abs(np.asarray(qx)[DIST_PCTS] - np.asarray(qy)[DIST_PCTS])))


def cdf_quantiles(r: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """The data behind Figs. 5.2/5.3/5.6/5.7 and the CDF claims (E1.2–E1.4, E1.6, E1.7, E2.4, E2.5), small
    enough to keep: per experiment (e1, e2), hint (0 = PI alone), seed and series, the sample count `n` and
    the 0 %, 1 %, …, 100 % quantiles (NumPy's linear interpolation, `p0` … `p100`), plus one row per hint
    with seed "all" for the samples of every seed pooled. Series: `delay_ms` (one-way delay of every media
    packet, propagation included), `media_kbps_300ms` (the media flow's throughput per 300-ms window),
    `ftp_kbps_300ms` (the 20 first FTP flows' windows, pooled). A median is `p50`, a p90 − p10 spread
    `p90 − p10`, exactly as the claims compute them from the raw samples."""
    rows = []
    for exp in ("e1", "e2"):
        if exp not in r or "delay_samples_ms" not in r[exp]:
            continue
        df = r[exp]
        for hint in sorted(df["hint"].unique()):
            sel = df[df["hint"] == hint].sort_values("seed")
            for series, col in CDF_SERIES:
                per = [(int(s), np.asarray(x, float)) for s, x in zip(sel["seed"], sel[col])]
                for seed, x in per + [("all", np.concatenate([x for _, x in per]) if per else np.array([]))]:
                    rows.append({"exp": exp, "hint": int(hint), "seed": seed, "series": series, "n": len(x),
                                 **{f"p{k}": v for k, v in zip(PCTS, quantiles(x))}})
    return pd.DataFrame(rows)


def pooled(df: pd.DataFrame, hint: int, col: str) -> np.ndarray:
    """The sample arrays `col` of every run at `hint` (0 = PI alone), concatenated over the seeds."""
    sel = df[df["hint"] == hint][col]
    return np.concatenate(list(sel)) if len(sel) else np.array([])
