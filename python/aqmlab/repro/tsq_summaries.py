"""The runs of `aqmlab repro tsq` summarised over seeds: means per hint (hint 0 = PI alone) with the standard
error of Q, the per-seed ratios TSQ ÷ PI alone (same seed) that normalise quality and throughput, and the best
hint of a sweep.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .common import SeedMean


SCALARS = ("media_q", "media_qd", "media_qt", "media_kbps", "media_delay_ms", "media_p50_ms", "media_drop_pct",
           "media_app_delay_ms", "media_q_app", "media_q_win", "media_qd_win", "media_qt_win", "ftp_kbps", "ftp_q",
           "queue_pkts", "drop_pct", "utilization")


def by_hint(df: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per hint (hint 0 = PI alone), with the standard error of Q."""
    cols = [c for c in SCALARS if c in df]
    g = df.groupby("hint")[cols]
    out = g.mean()
    multi = "media_q" in df and df["seed"].nunique() > 1
    out["media_q_se"] = df.groupby("hint")["media_q"].sem() if multi else np.nan
    return out.reset_index()


def ratio_means(df: pd.DataFrame, key: str, col: str) -> dict[Any, SeedMean]:
    """Per `key` value: the per-seed ratios TSQ ÷ PI alone (same seed) of `col` as a `SeedMean`.

    `key` is "n" (the mixes: a PI-alone run per mix and seed) or "hint" (the sweeps: one PI-alone run
    per seed, labelled hint 0, serves every hint). Ratios over a zero baseline are left out."""
    on = df[df["tsq"]].set_index([key, "seed"])
    off = df[~df["tsq"]].set_index([key, "seed"]) if key == "n" else \
        df[~df["tsq"]].drop(columns=[key]).set_index("seed")
    out: dict[Any, SeedMean] = {}
    for k in sorted(on.index.get_level_values(0).unique()):
        ratios = []
        for seed in on.loc[k].index:
            base = float(off.loc[(k, seed), col] if key == "n" else off.loc[seed, col])
            if base > 0:
                ratios.append(float(on.loc[(k, seed), col]) / base)
        out[k] = SeedMean.of(ratios) if ratios else SeedMean(np.nan, np.nan, 0)
    return out


def normalised(df: pd.DataFrame, key: str, cols: tuple[str, ...]) -> pd.DataFrame:
    """Per `key` value: mean over seeds of (TSQ ÷ PI alone, same seed) for each column, and its s.e."""
    means = {c: ratio_means(df, key, c) for c in cols}
    keys = list(means[cols[0]])
    rows = []
    for k in keys:
        row: dict[str, Any] = {key: k}
        for c in cols:
            row[f"{c}_norm"] = means[c][k].mean
            row[f"{c}_norm_se"] = means[c][k].se
        rows.append(row)
    return pd.DataFrame(rows)


def optimum(h: pd.DataFrame) -> tuple[int, float]:
    """Hint (TSQ on) with the highest mean quality, and that quality."""
    on = h[h["hint"] > 0]
    i = int(on["media_q"].to_numpy().argmax())
    return int(on["hint"].iloc[i]), float(on["media_q"].iloc[i])
