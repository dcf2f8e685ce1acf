"""Plots of a run: bottleneck queue over time, goodput per flow, one-way delay per flow and, when packets
were recorded, their delay CDF."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .metrics import jain_by_kind

if TYPE_CHECKING:
    from .api import Result

__all__ = ["plot_run", "run_figure", "per_bin_goodput", "MAX_BARS", "MAX_BOXES", "BOX_PERCENTILES"]

#: Above this many flows the goodput and delay panels are histograms instead of one mark per flow.
MAX_BARS = 500
#: Up to this many flows, each flow's goodput is a box of its per-bin samples (Flent's per-flow box plot);
#: above it boxes are too thin to read and the panel shows each flow's mean as a bar.
MAX_BOXES = 60
#: The box: whiskers at the 5th and 95th percentiles of the bins, box at the quartiles, line at the median.
BOX_PERCENTILES = (5, 25, 50, 75, 95)


def plot_run(result: "Result", path: Path) -> None:
    """Draws the figure of :func:`run_figure` into a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = run_figure(result)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_figure(result: "Result"):
    """The queue (and its average) over time; goodput per flow after the warm-up, as a box of the flow's
    per-bin goodput up to ``MAX_BOXES`` flows when the run kept per-flow series, else a bar of its mean (a
    histogram above ``MAX_BARS`` flows); with a ``rate_schedule`` or a delivery trace, the capacity
    per bin against the total goodput; each flow's one-way delay percentiles; with
    ``output.per_flow_tcp_state``, each TCP flow's congestion window over time; with
    ``output.packet_delays``, the recorded packets' delay CDF."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    delays = result.packet_delays
    cwnd = [c for c in result.timeseries.columns if c.startswith("flow") and c.endswith("_cwnd_segments")]
    panels = [lambda ax: _queue_panel(ax, result), lambda ax: _goodput_panel(ax, result),
              lambda ax: _delay_panel(ax, result.flows)]
    if "capacity_bps" in result.timeseries or "reverse_capacity_bps" in result.timeseries:
        panels.insert(1, lambda ax: _capacity_panel(ax, result))
    if cwnd:
        panels.append(lambda ax: _cwnd_panel(ax, result.timeseries, cwnd))
    if not delays.empty and "delay_s" in delays:
        panels.append(lambda ax: _delay_cdf_panel(ax, delays))
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 0.5 + 3 * len(panels)))
    for draw, ax in zip(panels, axes, strict=True):
        draw(ax)
    fig.tight_layout()
    return fig


def per_bin_goodput(result: "Result") -> pd.DataFrame | None:
    """Each flow's goodput (b/s) in every bin after the warm-up, a column per flow id; None when the run
    kept no per-flow series (``output.per_flow_timeseries`` off) or has none after the warm-up."""
    ts, flows = result.timeseries, result.flows
    columns = {fid: f"flow{fid}_goodput_bps" for fid in flows["id"]} if "id" in flows else {}
    if not columns or any(c not in ts for c in columns.values()):
        return None
    from .api import seconds

    run = result.summary.get("scenario", {}).get("run", {})  # simulated and live runs both echo it
    warmup = seconds(run["warmup"]) if "warmup" in run else 0.0
    measured = ts[ts["time_s"] > warmup + 1e-9]  # time_s is each bin's end
    if measured.empty:
        return None
    return measured[list(columns.values())].set_axis(list(columns), axis=1)


def _capacity_panel(ax, result: "Result") -> None:
    """What the bottleneck offered in each bin (``rate_schedule``, a delivery trace) against the
    goodput of all flows in it (when per-flow series were kept): how the flows follow the capacity."""
    ts = result.timeseries
    # Each bin's value is plotted at its end (time_s), as a step over the bin.
    for key, label in (("capacity_bps", "capacity"), ("reverse_capacity_bps", "reverse capacity")):
        if key in ts:
            ax.step(ts["time_s"], ts[key] / 1e6, where="pre", lw=1.5, label=label)
    goodput = [c for c in ts.columns if c.startswith("flow") and c.endswith("_goodput_bps")]
    if goodput:
        ax.step(ts["time_s"], ts[goodput].sum(axis=1) / 1e6, where="pre", lw=0.9, label="goodput, all flows")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("Mb/s")
    ax.set_title("bottleneck capacity per bin" + (" and total goodput" if goodput else ""))
    ax.legend(loc="upper right")


def _queue_panel(ax, result: "Result") -> None:
    """The forward queue and its average; the reverse queue too when data flows through it."""
    ts, flows = result.timeseries, result.flows
    ax.plot(ts["time_s"], ts["queue_pkts"], lw=0.8, label="queue (packets)")
    if ts["queue_avg"].notna().any():
        ax.plot(ts["time_s"], ts["queue_avg"], lw=1.2, label="average")
    reverse_data = "direction" in flows and (flows["direction"] == "reverse").any()
    if reverse_data and "reverse_queue_pkts" in ts:
        ax.plot(ts["time_s"], ts["reverse_queue_pkts"], lw=0.8, label="reverse queue (packets)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("packets")
    ax.set_title("bottleneck queue" + (" in each direction" if reverse_data else ""))
    ax.legend(loc="upper right")


def _goodput_panel(ax, result: "Result") -> None:
    flows, agg = result.flows, result.aggregate
    bins = per_bin_goodput(result) if len(flows) <= MAX_BOXES else None
    title = f"goodput after warm-up: total {agg['goodput_bps'] / 1e6:.2f} Mb/s, Jain {agg['jain_index']:.3f}"
    if "kind" in flows and flows["kind"].nunique() > 1:
        title += "".join(f" ({j:.3f} over {kind})" for kind, j in jain_by_kind(flows).items())
    if bins is not None:
        ax.bxp([_box_stats(bins[fid] / 1e6, fid, mean / 1e6)
                for fid, mean in zip(flows["id"], flows["goodput_bps"], strict=True)],
               positions=list(flows["id"]), showfliers=False, showmeans=True,
               meanprops={"marker": "o", "markersize": 3})
        ax.set_xlabel(f"flow (box: quartiles of its goodput per {_bin_width(result.timeseries)} bin, whiskers "
                      f"5th–95th percentile, line median, dot mean)")
        ax.set_ylabel("goodput (Mb/s)")
        ax.tick_params(axis="x", labelsize="small")
        title += f"; {len(bins)} bins per flow"
    elif len(flows) <= MAX_BARS:
        ax.bar(flows["id"], flows["goodput_bps"] / 1e6)
        ax.set_xlabel("flow")
        ax.set_ylabel("goodput (Mb/s)")
    else:  # one bar per flow costs a matplotlib artist each: minutes and gigabytes for 10⁵ flows
        ax.hist(flows["goodput_bps"] / 1e6, bins=50)
        ax.set_xlabel(f"goodput (Mb/s), histogram of {len(flows):,} flows")
        ax.set_ylabel("flows")
    ax.set_title(title)


def _box_stats(samples: pd.Series, label, mean: float) -> dict:
    """Matplotlib `bxp` statistics of one flow's per-bin samples; `mean` is the flow's goodput over the
    whole window (equal to the bins' mean when the window is a whole number of bins)."""
    lo, q1, med, q3, hi = np.percentile(samples.to_numpy(dtype=float), BOX_PERCENTILES)
    return {"label": str(label), "whislo": lo, "q1": q1, "med": med, "q3": q3, "whishi": hi, "mean": mean}


def _bin_width(ts: pd.DataFrame) -> str:
    t = ts["time_s"].to_numpy()
    width = float(t[1] - t[0]) if len(t) > 1 else float(t[0])
    return f"{width * 1e3:g} ms" if width < 1 else f"{width:g} s"


def _delay_panel(ax, flows: pd.DataFrame) -> None:
    """Each flow's one-way delay of delivered data (median, 95th and 99th percentile); flows that
    delivered nothing after the warm-up have none and are left out."""
    from matplotlib.ticker import MaxNLocator

    cols = {"delay_p50_s": "median", "delay_p95_s": "95th percentile", "delay_p99_s": "99th percentile"}
    if any(c not in flows for c in cols):
        ax.set_visible(False)
        return
    have = flows.dropna(subset=list(cols))
    if len(flows) <= MAX_BARS:
        for (col, name), marker in zip(cols.items(), ("o", "^", "v"), strict=True):
            ax.plot(have["id"], have[col] * 1e3, marker, ms=3, ls="none", label=name)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("flow")
        ax.set_ylabel("one-way delay (ms)")
    else:
        for col, name in cols.items():
            ax.hist(have[col] * 1e3, bins=50, histtype="step", label=name)
        ax.set_xlabel(f"one-way delay (ms), histogram of {len(have):,} flows")
        ax.set_ylabel("flows")
    ax.legend(loc="best", fontsize="small")
    ax.set_title("one-way delay per flow after warm-up (data packets delivered)")


def _cwnd_panel(ax, ts: pd.DataFrame, columns: list[str]) -> None:
    """Each TCP flow's congestion window (segments, averaged over each bin) up to ``MAX_BOXES`` flows;
    above, the median over the flows with the band between their 5th and 95th percentiles."""
    if len(columns) <= MAX_BOXES:
        for c in columns:
            ax.plot(ts["time_s"], ts[c], lw=0.7, label=c.removesuffix("_cwnd_segments"))
        if len(columns) <= 10:
            ax.legend(loc="upper right", fontsize="small", ncol=2)
        ax.set_title("congestion window per TCP flow (output.per_flow_tcp_state)")
    else:
        lo, med, hi = (ts[columns].quantile(q, axis=1) for q in (0.05, 0.5, 0.95))
        ax.fill_between(ts["time_s"], lo, hi, alpha=0.3, label="5th–95th percentile of the flows")
        ax.plot(ts["time_s"], med, lw=1.0, label="median flow")
        ax.legend(loc="upper right", fontsize="small")
        ax.set_title(f"congestion window over {len(columns):,} TCP flows (output.per_flow_tcp_state)")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cwnd (segments)")


def _delay_cdf_panel(ax, delays: pd.DataFrame) -> None:
    """The distribution of every recorded packet's one-way delay (``output.packet_delays``), one curve
    per class tag: Flent's latency CDF."""
    for tag, d in delays.groupby("class", sort=True):
        x = np.sort(d["delay_s"].to_numpy(dtype=float)) * 1e3
        ax.step(x, np.arange(1, len(x) + 1) / len(x), where="post", label=f"class {tag} ({len(x):,} packets)")
    ax.set_xlabel("one-way delay (ms)")
    ax.set_ylabel("fraction of packets")
    ax.set_ylim(0, 1.0)
    ax.legend(loc="lower right", fontsize="small")
    ax.set_title("one-way delay CDF of the recorded packets (output.packet_delays), after warm-up")
