"""The CSV tables of `aqmlab repro white` (`TABLES`, written by `write_tables`): the runs' scalars, the
long-format per-flow, per-period and per-bin tables, the grid's analyses and the calibration."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from . import white_scenarios as S
from .white_grid import common_pair, cross_generalisation, generalisation_table
from .white_metrics import is_object_col
from .white_runs import WHITE_AQMS
from .white_scenarios import DYNAMIC

if TYPE_CHECKING:
    from .white import Plan


def _scalars(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` without its dict/array columns (they go to the long-format tables)."""
    return frame.drop(columns=[c for c in frame.columns if is_object_col(frame[c])])


def flows_long(df: pd.DataFrame) -> pd.DataFrame:
    """Per-flow goodput of every main run, one row per flow (static: over 30–150 s, `period` empty;
    dynamic: each source's mean over each period it is on)."""
    exps = S.experiments()
    rows = []
    for _, r in df.sort_values(["exp", "aqm", "seed"], kind="stable").iterrows():
        exp = exps[r["exp"]]
        rtt = [2 * (d + 5) for d in exp.access_ms]
        if not exp.dynamic:
            per = {"": r.get("goodputs")}
        else:
            per = r.get("period_goodputs") if isinstance(r.get("period_goodputs"), dict) else {}
        for period, g in per.items():
            if not isinstance(g, np.ndarray):
                continue
            for i, v in enumerate(g):
                if not np.isnan(v):
                    rows.append({"exp": r["exp"], "aqm": r["aqm"], "seed": r["seed"], "period": period, "flow": i,
                                 "cluster": exp.clusters[i], "rtt_prop_ms": rtt[i], "goodput_mbps": float(v)})
    return pd.DataFrame(rows)


def period_clusters_long(df: pd.DataFrame) -> pd.DataFrame:
    """Each cluster's aggregate goodput per period of every dynamic main run (`trim` 5: the period's first
    5 s left out)."""
    rows = []
    for _, r in df[df["exp"].isin(DYNAMIC)].sort_values(["exp", "aqm", "seed"], kind="stable").iterrows():
        for k in S.PERIODS:
            for trim, tag in ((0, ""), (5, "_trim5")):
                for c, v in (r.get(f"{k}{tag}_clusters") or {}).items():
                    rows.append({"exp": r["exp"], "aqm": r["aqm"], "seed": r["seed"], "period": k, "trim_s": trim,
                                 "cluster": c, "goodput_mbps": float(v)})
    return pd.DataFrame(rows)


def bins_long(df: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed `seed`'s 250-ms bins where recorded (Exps 2, 5, 6): each cluster's aggregate goodput, and
    WHITE's R_average / R_formula with RED's average queue (WHITE runs, every experiment)."""
    clusters, traces = [], []
    for _, r in df[df["seed"] == seed].sort_values(["exp", "aqm"], kind="stable").iterrows():
        t = r.get("time_s")
        if isinstance(r.get("cluster_series"), dict):
            for c, v in r["cluster_series"].items():
                clusters.append(pd.DataFrame({"exp": r["exp"], "aqm": r["aqm"], "seed": seed, "cluster": c,
                                              "time_s": t, "goodput_mbps": v}))
        if r["aqm"] in WHITE_AQMS and isinstance(r.get("r_series"), tuple):
            ra, rf, q = r["r_series"]
            traces.append(pd.DataFrame({"exp": r["exp"], "aqm": r["aqm"], "seed": seed, "time_s": t,
                                        "r_average_ms": ra, "r_formula_ms": rf, "red_avg_pkts": q}))
    return _cat(clusters), _cat(traces)


def _cat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def red_traces(df: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Seed `seed`'s RED average queue (packets) per 250-ms bin of the RED runs, every experiment."""
    rows = []
    for _, r in df[(df["seed"] == seed) & (df["aqm"] == "red")].sort_values("exp", kind="stable").iterrows():
        if isinstance(r.get("r_series"), tuple):
            rows.append(pd.DataFrame({"exp": r["exp"], "aqm": "red", "seed": seed, "time_s": r["time_s"],
                                      "red_avg_pkts": r["r_series"][2]}))
    return _cat(rows)


def flow_bins_wide(df: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Seed `seed`'s per-source goodput (Mb/s) per 250-ms bin of every main run, one row per run and bin,
    one column per source (`flow0` … `flow29`; dynamic runs: 0 while a source is off)."""
    rows = []
    for _, r in df[df["seed"] == seed].sort_values(["exp", "aqm"], kind="stable").iterrows():
        b = r.get("flow_bins")
        if not isinstance(b, np.ndarray):
            continue
        frame = pd.DataFrame({"exp": r["exp"], "aqm": r["aqm"], "seed": seed, "time_s": r["time_s"]})
        flows = pd.DataFrame(b.T.astype(float), columns=[f"flow{i}" for i in range(b.shape[0])])
        rows.append(pd.concat([frame, flows], axis=1))
    return _cat(rows)


TABLES = {"results.csv": "main runs, one row per run (scalars)",
          "flows.csv": "per-flow goodput of every main run (static: 30–150 s; dynamic: per period the source is on)",
          "period_clusters.csv": "cluster aggregates per period of every dynamic main run (whole period and first 5 s trimmed)",
          "bins_seed1.csv.gz": "seed 1 only: each cluster's aggregate goodput per 250-ms bin (Exps 2, 5, 6; gzip)",
          "flow_bins_seed1.csv.gz": "seed 1 only: each source's goodput per 250-ms bin, every main run (one column per source; gzip)",
          "traces_seed1.csv": "seed 1 only: R_average, R_formula and RED's average per 250-ms bin (WHITE runs, every experiment)",
          "red_traces_seed1.csv": "seed 1 only: RED's average queue per 250-ms bin (RED runs, every experiment)",
          "sensitivity.csv": "sensitivity runs, one row per run (scalars; `case` names the change)",
          "alpha_beta_grid.csv": "α/β grid, one row per run (`score`: the grid's fairness score)",
          "generalisation.csv": "α/β grid: each experiment's score at the Exp 1 optimum, its own best and at the thesis's exponents",
          "generalisation_matrix.csv": "α/β grid: each experiment's optimum scored on every experiment (regret against that experiment's best)",
          "common_pair.csv": "α/β grid: per AQM, the one exponent pair with the smallest worst regret over all experiments",
          "edge_probe.csv": "α/β grid: per optimum on an open grid edge, the best point past the edge and whether it is better",
          "calibration.csv": "RED calibration candidates and scores"}


def write_tables(out: Path, p: Plan, calib: pd.DataFrame, df: pd.DataFrame, sens: pd.DataFrame,
                 grid: pd.DataFrame, edges: pd.DataFrame | None = None) -> None:
    """The CSV tables of `TABLES` (floats to 6 significant digits; the bins gzip-compressed with a fixed
    timestamp so that the same runs give the same bytes)."""
    fmt6 = "%.6g"
    _scalars(df).to_csv(out / "results.csv", index=False)
    flows_long(df).to_csv(out / "flows.csv", index=False, float_format=fmt6)
    period_clusters_long(df).to_csv(out / "period_clusters.csv", index=False, float_format=fmt6)
    seed = min(df["seed"]) if len(df) else 1
    clusters, traces = bins_long(df, seed)
    clusters.to_csv(out / "bins_seed1.csv.gz", index=False, float_format=fmt6,
                    compression={"method": "gzip", "mtime": 0})
    traces.to_csv(out / "traces_seed1.csv", index=False, float_format="%.5g")
    red_traces(df, seed).to_csv(out / "red_traces_seed1.csv", index=False, float_format="%.5g")
    flow_bins_wide(df, seed).to_csv(out / "flow_bins_seed1.csv.gz", index=False, float_format="%.4g",
                                    compression={"method": "gzip", "mtime": 0})
    (_scalars(sens) if sens is not None and len(sens) else pd.DataFrame()).to_csv(out / "sensitivity.csv", index=False)
    _scalars(grid).to_csv(out / "alpha_beta_grid.csv", index=False, float_format=fmt6)
    generalisation_table(grid, p).to_csv(out / "generalisation.csv", index=False, float_format=fmt6)
    cross_generalisation(grid, p).to_csv(out / "generalisation_matrix.csv", index=False, float_format=fmt6)
    common_pair(grid, p).to_csv(out / "common_pair.csv", index=False, float_format=fmt6)
    (edges if edges is not None else pd.DataFrame()).to_csv(out / "edge_probe.csv", index=False, float_format=fmt6)
    calib.to_csv(out / "calibration.csv", index=False)
