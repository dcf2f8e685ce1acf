"""Parris 2001, App. B: the metrics of one run (`extract`), their means over seeds (`mean_over_seeds`) and
the rows of one sweep in those means (`sweep_rows`).

Metrics (spec §3). Throughputs are wire bytes on the bottleneck (`throughput_bps`), TCP goodput is
unique payload. **TCP efficiency is App. B's definition** (spec §3 and §6 item 8): TCP outbound
throughput ÷ TCP inbound load, because every App. B efficiency number is in that definition. The
simulator reports per-flow packets sent (retransmissions included) and delivered, not bytes offered,
so efficiency = packets delivered ÷ packets sent over the window and TCP load = TCP throughput ÷
efficiency; both assume a dropped TCP packet has the mean size of a delivered one (exact for BULK,
whose segments are all full; approximate for HTTP). App. A's goodput ÷ load is kept in the CSV as
`tcp_eff_goodput`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from . import cbt_scenarios as S
from .cbt_appendix_b_allocations import KB


def extract(res) -> dict[str, Any]:
    """The App. B metrics of one run (see the module doc for efficiency and load)."""
    f = res.flows
    tcp = f[f["kind"] == "tcp"]
    mm = f[f["kind"].isin(["mpeg", "proshare"])]
    other = f[f["kind"] == "udp-cbr"]
    kbps = lambda rows, col: float(rows[col].sum()) / 8 / KB  # noqa: E731
    sent, delivered = float(tcp["packets_sent"].sum()), float(tcp["packets_delivered"].sum())
    eff = delivered / sent if sent else math.nan
    tcp_tput = kbps(tcp, "throughput_bps")
    q = res.queues.set_index("name").loc["bottleneck"]
    out = {
        "tcp_goodput_KBps": kbps(tcp, "goodput_bps"),
        "tcp_KBps": tcp_tput,
        "tcp_load_KBps": tcp_tput / eff if eff else math.nan,
        "tcp_eff": eff,
        "tcp_eff_goodput": kbps(tcp, "goodput_bps") / (tcp_tput / eff) if eff and tcp_tput else math.nan,
        "mm_KBps": kbps(mm, "throughput_bps"),
        "other_KBps": kbps(other, "throughput_bps"),
        "link_KBps": kbps(f, "throughput_bps"),
        "mm_loss_pps": float(mm["mm_loss_pps"].mean()),
        "mm_loss_frac": float(mm["mm_loss_fraction"].mean()),
        "mm_latency_ms": float(mm["mm_latency_mean_s"].mean()) * 1e3,
        "tcp_pkt_bytes": float(tcp["throughput_bps"].sum()) * float(res.summary["measured_s"]) / 8 / delivered if delivered else math.nan,
        "mm_pkt_bytes": _wire_packet_bytes(mm, res),
        "other_pkt_bytes": _wire_packet_bytes(other, res),
        "queue_pkt_bytes": float(q["mean_len_bytes"] / q["mean_len_packets"]) if q["mean_len_packets"] else math.nan,
    }
    if "mpeg_playable_fps" in mm and mm["kind"].eq("mpeg").any():
        out["playable_fps"] = float(mm["mpeg_playable_fps"].mean())
        out["actual_fps"] = float(mm["mpeg_actual_fps"].mean())
    return out


def _wire_packet_bytes(rows: pd.DataFrame, res) -> float:
    """Mean size on the wire of the packets `rows` (flows) got through the bottleneck."""
    n = float(rows["packets_delivered"].sum())
    return float(rows["throughput_bps"].sum()) * float(res.summary["measured_s"]) / 8 / n if n else math.nan


PARAMS = ["maxq", "th_min", "th_max", "b_mm", "mm_pct"]


def mean_over_seeds(raw: pd.DataFrame) -> pd.DataFrame:
    """One row per (sweep, mix, period, parameters): the mean over seeds, with the seed count."""
    keys = ["sweep", "mix", "period"] + [c for c in PARAMS if c in raw]
    num = [c for c in raw.columns if c not in keys + ["seed"]]
    g = raw.fillna({c: -1 for c in PARAMS if c in raw}).groupby(keys, as_index=False, sort=False)
    df = g[num].mean().merge(g.size().rename(columns={"size": "seeds"}), on=keys)
    for c in PARAMS:
        if c in df:
            df[c] = df[c].replace(-1, np.nan)
    return df


def sweep_rows(df: pd.DataFrame, sweep: str, mix: str | None = None, period: str | None = None) -> pd.DataFrame:
    """The rows of `df` from one sweep, and from one mix and one period if given."""
    d = df[df["sweep"] == sweep]
    if mix:
        d = d[d["mix"] == mix]
    if period:
        d = d[d["period"] == period]
    return d


def our_sizes(df: pd.DataFrame, mix: str) -> dict[str, float]:
    """The mean wire packet size of each class in `mix`'s CBT sweep runs: the dissertation's method
    (measure the mix, then configure) applied to our traffic."""
    d = sweep_rows(df, "CBT", mix, "blast")
    return {c: float(d[f"{c}_pkt_bytes"].mean()) for c in S.CBT_CLASSES}
