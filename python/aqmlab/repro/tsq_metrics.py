"""What every run of `aqmlab repro tsq` reports (spec ``seed002-tsq.md`` §3.6): the queue's mean length,
drops and utilization, and per class (media = class 1, FTP = class 0) the delivered throughput in the thesis's
1000-B packets, the one-way delay and the thesis's quality Q = min(Q_d, Q_t) (``aqmlab.models.tsq_quality``),
with spec §3.6's per-300-ms-window variant, and for E1/E2 the samples behind the CDFs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..models import tsq_quality as Q
from . import tsq_scenarios as S


def _flow_quality(app: str, delay_s: float, kbps: float) -> tuple[float, float, float]:
    if not np.isfinite(delay_s):  # nothing delivered after the warm-up: no delay to score, no throughput
        return float("nan"), 0.0, 0.0
    return Q.application_quality(app, delay_s * 1e3, kbps, ftp_file_kbits=S.FTP_FILE_KBITS)


# `Result.packet_delays` of a run in which no recorded packet arrived after the warm-up.
NO_DELAYS = pd.DataFrame({"time_s": [], "flow": [], "class": [], "delay_s": []})


def _mean_of_delivered(per_flow: np.ndarray) -> float:
    """Mean of the finite per-flow values (a flow that delivered nothing after the warm-up has NaN);
    NaN, without a warning, when none is finite."""
    delivered = per_flow[np.isfinite(per_flow)]
    return float(delivered.mean()) if delivered.size else float("nan")


def extract_for(app: str, cdfs: bool):
    """Metrics of one run whose media flows (class 1) are application `app` ("audio"/"video")."""

    def extract(res) -> dict[str, Any]:
        q = res.queues.iloc[0]
        arrivals = max(float(q["arrivals"]), 1.0)
        f = res.flows.sort_values("id")
        media, ftp = f[f["class"] == 1], f[f["class"] == 0]
        out: dict[str, Any] = {"queue_pkts": float(q["mean_len_packets"]),
                               "drop_pct": 100 * float(q["drops"]) / arrivals,
                               "utilization": float(q["utilization"])}
        if len(media):
            kind = str(media["kind"].iloc[0])
            kind = "tcp" if kind == "tcp" else "udp"
            kbps = media["goodput_bps"].to_numpy() * S.wire_per_payload(kind) / 1e3
            delay = media["delay_mean_s"].to_numpy()
            qs = np.array([_flow_quality(app, d, t) for d, t in zip(delay, kbps)])
            out.update(media_kbps=float(kbps.mean()), media_delay_ms=_mean_of_delivered(delay) * 1e3,
                       media_p50_ms=_mean_of_delivered(media["delay_p50_s"].to_numpy()) * 1e3,
                       media_qd=_mean_of_delivered(qs[:, 0]), media_qt=float(qs[:, 1].mean()), media_q=float(qs[:, 2].mean()),
                       media_drop_pct=100 * float(media["drops"].sum()) / max(float(media["packets_sent"].sum()), 1.0))
            if "app_delay_mean_s" in media and media["app_delay_mean_s"].notna().all():
                # TCP driven by CBR: the listener's delay, write to in-order delivery (send backlog included)
                app_delay = media["app_delay_mean_s"].to_numpy()
                out.update(media_app_delay_ms=float(app_delay.mean() * 1e3),
                           media_q_app=float(np.mean([_flow_quality(app, d, t)[2] for d, t in zip(app_delay, kbps)])))
        if len(ftp):
            kbps = ftp["goodput_bps"].to_numpy() * S.wire_per_payload("tcp") / 1e3
            out.update(ftp_kbps=float(kbps.mean()),
                       ftp_q=float(np.mean([_flow_quality("ftp", 0.0, t)[2] for t in kbps])))
        if len(media) == 1 and res.summary["scenario"]["output"]["packet_delays"]:
            # Spec §3.6's variant: quality per 300-ms window, averaged over the run's windows (S.3). With
            # nothing delivered after the warm-up every window's quality is 0, and so is the run's.
            late = res.timeseries[res.timeseries["time_s"] > S.WARMUP_S]
            delays = res.packet_delays if len(res.packet_delays) else NO_DELAYS
            out.update(window_quality(app, late, delays, int(media["id"].iloc[0]), kind))
        if cdfs:
            ts = res.timeseries
            late = ts[ts["time_s"] > S.WARMUP_S]
            out["delay_samples_ms"] = res.packet_delays["delay_s"].to_numpy() * 1e3  # every media packet
            out["media_windows_kbps"] = _windows(late, media["id"].tolist(), kind)
            out["ftp_windows_kbps"] = _windows(late, ftp["id"].tolist()[:20], "tcp")
        return out

    return extract


def _windows(late: pd.DataFrame, ids: list[int], kind: str) -> np.ndarray:
    """Throughput in 300-ms windows (one RTT, Sec. 5.2.2): six 50-ms bins averaged, Kb/s of 1000-B packets."""
    out = []
    for i in ids:
        v = late[f"flow{i}_goodput_bps"].to_numpy()
        n = len(v) // 6
        out.append(v[: n * 6].reshape(n, 6).mean(axis=1) * S.wire_per_payload(kind) / 1e3)
    return np.concatenate(out) if out else np.array([])


def window_quality(app: str, late: pd.DataFrame, delays: pd.DataFrame, flow: int, kind: str) -> dict[str, float]:
    """Spec §3.6's per-window variant of the quality of one media flow: Q_w = min(Q_d(d_w), Q_t(T_w))
    per 300-ms window (one RTT, the windows of the throughput CDFs), averaged over the run's complete
    windows after the warm-up. T_w is the flow's delivered throughput in the window (six 50-ms bins,
    1000-B packets, as `_windows`); d_w is the mean one-way delay of the flow's packets that arrived in
    the window (window j covers the six bins ending at `late.time_s[6j .. 6j+5]`). A window in which
    nothing arrived has T_w = 0, so Q_t = Q_w = 0 whatever its delay; Q_d is averaged over the windows
    with packets only. The thesis computes quality from run means (the default, `media_q`)."""
    t = late["time_s"].to_numpy()
    n = len(t) // 6
    if n == 0:
        return {}
    kbps = _windows(late, [flow], kind)[:n]
    ends = t[5: n * 6: 6]
    start = t[0] - (t[1] - t[0] if len(t) > 1 else 0.05)
    d = delays[delays["flow"] == flow]
    at, dl = d["time_s"].to_numpy(), d["delay_s"].to_numpy() * 1e3
    keep = at > start
    idx = np.searchsorted(ends, at[keep], side="left")  # window j: ends[j-1] < arrival <= ends[j]
    ok = idx < n
    idx, dl = idx[ok], dl[keep][ok]
    count = np.bincount(idx, minlength=n)
    mean_d = np.bincount(idx, weights=dl, minlength=n) / np.maximum(count, 1)
    qd, qt, q = [], [], []
    for j in range(n):
        if count[j] == 0 or kbps[j] <= 0:
            qt.append(0.0)
            q.append(0.0)
            if count[j]:
                qd.append(_flow_quality(app, mean_d[j] / 1e3, 0.0)[0])
            continue
        a, b, c = _flow_quality(app, mean_d[j] / 1e3, float(kbps[j]))
        qd.append(a)
        qt.append(b)
        q.append(c)
    return {"media_q_win": float(np.mean(q)), "media_qd_win": float(np.mean(qd)) if qd else np.nan,
            "media_qt_win": float(np.mean(qt))}
