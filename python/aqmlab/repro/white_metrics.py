"""What every run of `aqmlab repro white` reports (`extract_for`: goodputs, JFIs, cluster aggregates,
drop rates, per-bin series) and the seed means read back from the result frames (one row per run: `aqm`,
`exp`, `seed` and the metrics)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from ..metrics import jain_index
from . import white_scenarios as S


# ---- what every run reports ----

def extract_for(exp: S.Experiment, keep_bins: bool = False):
    """The metrics of one run of `exp`: per-source goodputs over the measurement window (static)
    or per period (dynamic), JFI, cluster aggregates, drop rate, total goodput. `keep_bins` adds each
    source's goodput per bin (`flow_bins`, Mb/s, sources × bins; the run must record per-flow bins)
    and the RED-average trace (`r_series`) in every experiment, not only Exps 2, 5 and 6."""
    clusters = S.flow_clusters(exp)

    def bins(ts: pd.DataFrame) -> dict[str, Any]:
        if not keep_bins:
            return {}
        out = {"flow_bins": (_per_source_bins(ts, exp).to_numpy().T / 1e6).astype(np.float32),
               "time_s": ts["time_s"].to_numpy()}
        out.update(_r_series(ts))
        return out

    def extract(res) -> dict[str, Any]:
        q = res.queues.iloc[0]
        arrivals = max(float(q["arrivals"]), 1.0)
        out: dict[str, Any] = {"drop_pct": 100 * float(q["drops"]) / arrivals, "marks": int(q["marks"]),
                               "early_drop_pct": 100 * float(q["drops_early"]) / arrivals,
                               "forced_drop_pct": 100 * float(q["drops_forced"] + q["drops_overflow"]) / arrivals,
                               "mean_queue_pkts": float(q["mean_len_packets"])}
        if "white_r_formula_ms" in res.timeseries:
            ts = res.timeseries
            out["r_formula_ms"] = float(ts.loc[ts["time_s"] > exp.warmup_s, "white_r_formula_ms"].mean())
        if not exp.dynamic:
            g = res.flows.sort_values("id")["goodput_bps"].to_numpy() / 1e6
            out.update(total_mbps=float(g.sum()), jfi=jain_index(list(g)), min_mbps=float(g.min()),
                       max_mbps=float(g.max()), goodputs=g)
            agg = pd.Series(g).groupby(list(clusters)).sum()
            out["cluster_mbps"] = agg.to_dict()
            out["cluster_min_mbps"], out["cluster_max_mbps"] = float(agg.min()), float(agg.max())
            # Per cluster of equal size only (Exps 2; Exp 1's thirds): Exps 3–4's 1-vs-29 split has none.
            sizes = pd.Series(list(clusters)).value_counts()
            out["cluster_jfi"] = jain_index(list(agg)) if sizes.nunique() == 1 else float("nan")
            f = res.flows.sort_values("id")
            loss = (f["drops"] / f["packets_sent"].clip(lower=1)).to_numpy()
            kind = np.array(clusters)
            out["robust_loss"] = float(loss[kind == "robust"].mean())
            out["fragile_loss"] = float(loss[kind == "fragile"].mean())
            # Per cluster: early drops (or, for ECN flows, marks) per packet sent, %, and the mean of
            # the flows' hints weighted by the packets they sent (what R_average averages). A hint is
            # the propagation RTT plus ~1 ms of serialisation (the flows' minimum RTT, whole ms).
            sent = f["packets_sent"].to_numpy().astype(float)
            early = (f["drops_early"] if "drops_early" in f else f["drops"] * np.nan).to_numpy()
            out["cluster_early_pct"] = {c: float(100 * early[kind == c].sum() / max(sent[kind == c].sum(), 1))
                                        for c in dict.fromkeys(clusters)}
            out["cluster_mark_pct"] = {c: float(100 * f["marks"].to_numpy()[kind == c].sum() / max(sent[kind == c].sum(), 1))
                                       for c in dict.fromkeys(clusters)}
            hints = np.array([2 * (d + 5) + 1 for d in exp.access_ms])
            out["hint_pkt_mean_ms"] = float((hints * sent).sum() / max(sent.sum(), 1))
            if exp.name == "exp2":
                out.update(_cluster_series(res.timeseries, exp, _per_source_bins(res.timeseries, exp)))
                out.update(_r_series(res.timeseries))
            out.update(bins(res.timeseries))
            return out
        ts = res.timeseries
        sources = _per_source_bins(ts, exp)
        out["period_goodputs"] = {}
        for period, (t0, t1) in S.PERIODS.items():
            for trim, tag in ((0.0, ""), (5.0, "_trim5")):
                sel = (ts["time_s"] > t0 + trim) & (ts["time_s"] <= t1)
                mean = sources.loc[sel.to_numpy()].mean() / 1e6  # Mbps per source over the period
                active = [i for i, c in enumerate(exp.clusters) if c in S.ACTIVE[period]]
                g = mean.iloc[active].to_numpy()
                if not tag:  # each source's mean goodput over the period (NaN: switched off)
                    out["period_goodputs"][period] = np.where(np.isin(np.arange(len(mean)), active), mean.to_numpy(), np.nan)
                per_cluster = pd.Series(g).groupby([exp.clusters[i] for i in active]).sum()
                out[f"{period}{tag}_jfi"] = jain_index(list(g))
                out[f"{period}{tag}_cluster_min"] = float(per_cluster.min())
                out[f"{period}{tag}_cluster_max"] = float(per_cluster.max())
                out[f"{period}{tag}_clusters"] = per_cluster.to_dict()
                out[f"{period}{tag}_cluster_jfi"] = jain_index(list(per_cluster))
        total = sources.sum(axis=1) / 1e6
        out["total_mbps"] = float(total.mean())
        out.update(_cluster_series(ts, exp, sources))
        out.update(_r_series(ts))
        out.update(bins(ts))
        return out

    return extract


def _r_series(ts: pd.DataFrame) -> dict[str, Any]:
    """WHITE's R_average and R_formula (ms) and RED's average queue (packets) per bin, when recorded
    (a RED run has the average only: its R columns are NaN)."""
    if "white_r_formula_ms" in ts:
        return {"r_series": (ts["white_r_average_ms"].to_numpy(), ts["white_r_formula_ms"].to_numpy(),
                             ts["queue_avg"].to_numpy())}
    if "queue_avg" in ts:
        nan = np.full(len(ts), np.nan)
        return {"r_series": (nan, nan, ts["queue_avg"].to_numpy())}
    return {}


def _cluster_series(ts: pd.DataFrame, exp: S.Experiment, sources: pd.DataFrame) -> dict[str, Any]:
    """Each cluster's aggregate goodput per bin (Mb/s) and the bins' end times."""
    series = {c: (sources.iloc[:, [i for i, k in enumerate(exp.clusters) if k == c]].sum(axis=1) / 1e6).to_numpy()
              for c in ("robust", "average", "fragile")}
    return {"cluster_series": series, "time_s": ts["time_s"].to_numpy()}


def _per_source_bins(ts: pd.DataFrame, exp: S.Experiment) -> pd.DataFrame:
    """Goodput per bin of each of the 30 sources (with `restart = "new-connection"` a returning
    cluster's two connections summed)."""
    n_flows = sum(1 for c in ts.columns if re.fullmatch(r"flow\d+_goodput_bps", c))
    paired = n_flows > len(exp.clusters)
    cols: list[np.ndarray] = []
    flow = 0
    for cluster in exp.clusters:
        v = ts[f"flow{flow}_goodput_bps"].to_numpy().copy()
        flow += 1
        off = {"robust": "B", "average": "C", "fragile": "D"}[cluster]
        if paired and S.PERIODS[off][1] < exp.duration_s:
            v += ts[f"flow{flow}_goodput_bps"].to_numpy()
            flow += 1
        cols.append(v)
    return pd.DataFrame(np.column_stack(cols))


# ---- reading the result frames ----

def is_object_col(col: pd.Series) -> bool:
    return bool(col.map(lambda v: isinstance(v, (dict, tuple, list, np.ndarray))).any())


def seed_mean(df: pd.DataFrame, aqm: str, exp: str, col: str) -> float:
    """`col` of `aqm` in `exp`, mean over the seeds."""
    return float(df[(df["aqm"] == aqm) & (df["exp"] == exp)][col].mean())


def lone_flow_mbps(df: pd.DataFrame, aqm: str, exp: str) -> float:
    """The first flow's goodput (Mb/s) of `aqm` in `exp`, mean over the seeds (Exps 3–4: the lone flow)."""
    rows = df[(df["aqm"] == aqm) & (df["exp"] == exp)]
    return float(np.mean([g[0] for g in rows["goodputs"]]))
