"""The metrics of one BMRE-reproduction run (Cho 2002 Ch. 4): `extract_for` reads a run's result into one
row of results.csv: normalised goodput dispersion S (eq. 4.1), TCP, CBR and TFRC goodput over the fair share,
CoV of per-flow goodput over 0.5 s and 2 s intervals (eq. 4.4), time-averaged queue, drop rate by reason,
BMRE's internals and the CBR flows' control time (R5b).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from . import bmre_scenarios as S


#: BMRE's drop reasons in the run result's `queues.details` (per arrival in results.csv as `bmre_<reason>`).
DROP_REASONS = ("drops_vmax", "drops_fair", "drops_exp", "drops_no_slot", "drops_physical")
#: R5b: "BMRE regulates CBR flows within 2 seconds" (§4.2.2). Controlled = the CBR flows' mean goodput over
#: every later 2-s window at most CBR_CTL_FACTOR × fair share. The claim names no share: 'regulates' is read as
#: 'brought near the fair share', and 50 % over it leaves room for a 2-s window's noise while excluding the
#: offered 3× (the factor is unchanged from the first criterion; the time was 3 s, see R5b's row).
CBR_CTL_S = 2.0
CBR_CTL_FACTOR = 1.5


def cov(bins: np.ndarray, per: int) -> np.ndarray:
    """CoV_i (eq. 4.4) per flow from goodput bins (rows = time, cols = flows), grouping `per` bins
    into one interval T_m; NaN for a flow with no goodput."""
    m = bins.shape[0] // per
    if m < 2:
        return np.full(bins.shape[1], np.nan)
    g = bins[: m * per].reshape(m, per, -1).mean(axis=1)
    total = g.mean(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(((g / total - 1.0) ** 2).sum(axis=0) / (m - 1))


def extract_for(n_tcp: int, n_cbr_flows: int, n_tfrc: int, duration_s: float, bin_s: float, packet: int = S.PACKET_BYTES, *,
                internals: bool = False):
    """The metrics of one run."""
    n = n_tcp + n_cbr_flows + n_tfrc
    fair = S.BW_BPS / n

    def extract(res) -> dict[str, Any]:
        f = res.flows.sort_values("id")
        kind = f["kind"].to_numpy()
        # Whole packets as the ns-2 sinks count them: TCP goodput is wire bytes (header_bytes = 0);
        # UDP's and TFRC's payload excludes the 28-B header, so count delivered packets at their wire size.
        g = f["goodput_bps"].to_numpy().astype(float)
        udp = kind == "udp-cbr"
        whole = udp | (kind == "tfrc")
        g[whole] = f.loc[whole, "packets_delivered"].to_numpy() * packet * 8 / duration_s
        norm = g / fair
        q = res.queues.iloc[0]
        arr = max(float(q["arrivals"]), 1.0)
        tcp = kind == "tcp"
        sent_tcp = float(f.loc[tcp, "packets_sent"].sum())
        out: dict[str, Any] = {
            "S": float(np.sqrt(((norm - 1.0) ** 2).sum() / (n - 1))),
            "S_tcp": float(np.sqrt(((norm[tcp] - 1.0) ** 2).sum() / max(tcp.sum() - 1, 1))),
            "tcp_share": float(norm[tcp].mean()) if tcp.any() else math.nan,
            "cbr_share": float(norm[udp].mean()) if udp.any() else math.nan,
            "tfrc_share": float(norm[kind == "tfrc"].mean()) if (kind == "tfrc").any() else math.nan,
            "total_mbps": float(g.sum() / 1e6),
            "mean_queue_bytes": float(q["mean_len_bytes"]),
            "drop_rate": float(q["drops"]) / arr,
            "drops_early": float(q["drops_early"]) / arr,
            "drops_forced": float(q["drops_forced"]) / arr,
            "drops_overflow": float(q["drops_overflow"]) / arr,
            "drop_prob_tcp": float(f.loc[tcp, "drops"].sum()) / max(sent_tcp, 1.0),
            "timeouts_per_tcp_flow": float(f.loc[tcp, "timeouts"].mean()) if tcp.any() else math.nan,
        }
        details = q.get("details")
        if isinstance(details, dict):  # BMRE's own drop split (Qdisc::detail_counters), over arrivals
            for key in DROP_REASONS:
                out[f"bmre_{key}"] = float(details.get(key, 0)) / arr
        classes = f["class"].to_numpy()
        if (classes > 0).any():  # E7: weight = class + 1
            delay = f["delay_mean_s"].to_numpy().astype(float)
            for w in range(1, 5):
                out[f"w{w}_mbps"] = float(g[classes == w - 1].mean() / 1e6)
                out[f"w{w}_delay_ms"] = float(np.nanmean(delay[classes == w - 1]) * 1e3)
        ts = res.timeseries
        cols = [f"flow{i}_goodput_bps" for i in range(n)]
        if cols[0] in ts:
            bins = ts[cols].to_numpy()
            per2 = max(1, int(round(2.0 / bin_s)))
            c05, c2 = cov(bins, 1), cov(bins, per2)
            for name, mask in (("tcp", tcp), ("tfrc", kind == "tfrc"), ("cbr", udp)):
                out[f"cov05_{name}"] = float(np.nanmean(c05[mask])) if mask.any() else math.nan
                out[f"cov2_{name}"] = float(np.nanmean(c2[mask])) if mask.any() else math.nan
        if "bmre_mode" in ts:
            out["bmre_nflow_mean"] = float(ts["flow_estimate"].mean())
            out["bmre_target_q_mean"] = float(ts["bmre_target_q_bytes"].mean())
            out["bmre_mode_mean"] = float(ts["bmre_mode"].mean())
            out["bmre_fair_drops"] = float(ts["bmre_fair_drops"].iloc[-1])
            out["bmre_recycled"] = float(ts["bmre_recycled"].iloc[-1])
            out["bmre_expired"] = float(ts["bmre_expired"].iloc[-1])
        if udp.any() and cols[0] in ts:
            out["cbr_ctl_s"] = cbr_control_time(ts, kind, fair, CBR_CTL_FACTOR)
        if internals:
            out["ts"] = ts
            out["kinds"] = kind
            out["details"] = dict(details) if isinstance(details, dict) else {}
        return out

    return extract


def cbr_control_time(ts: pd.DataFrame, kinds: np.ndarray, fair_bps: float, factor: float = 1.5, window_s: float = 2.0) -> float:
    """The first time after which the CBR flows' mean goodput over every later `window_s` window
    stays at or below `factor` × the fair share (NaN if never)."""
    cbr = [f"flow{i}_goodput_bps" for i in range(len(kinds)) if kinds[i] == "udp-cbr"]
    t = ts["time_s"].to_numpy()
    bin_s = t[1] - t[0]
    w = max(1, int(round(window_s / bin_s)))
    g = ts[cbr].mean(axis=1).rolling(w).mean().to_numpy()
    ok = g <= factor * fair_bps
    ok[: w - 1] = False
    bad = np.flatnonzero(~ok[w - 1:])
    if len(bad) == 0:
        return float(t[w - 1])
    last_bad = bad[-1] + w - 1
    return float(t[last_bad + 1]) if last_bad + 1 < len(t) else math.nan
