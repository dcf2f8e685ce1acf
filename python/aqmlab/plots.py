"""Plots of a run: bottleneck queue over time and per-flow goodput."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .api import Result

__all__ = ["plot_run", "MAX_BARS"]

#: Above this many flows the goodput panel is a histogram instead of one bar per flow.
MAX_BARS = 500


def plot_run(result: "Result", path: Path) -> None:
    """Draws queue length (and RED's average) over time and goodput per flow into a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = run_figure(result)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run_figure(result: "Result"):
    """The figure of :func:`plot_run` (bars per flow up to ``MAX_BARS`` flows, else a histogram)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ts = result.timeseries
    fig, (ax_q, ax_g) = plt.subplots(2, 1, figsize=(9, 6.5))
    ax_q.plot(ts["time_s"], ts["queue_pkts"], lw=0.8, label="queue (packets)")
    if ts["queue_avg"].notna().any():
        ax_q.plot(ts["time_s"], ts["queue_avg"], lw=1.2, label="average")
    ax_q.set_xlabel("time (s)")
    ax_q.set_ylabel("packets")
    ax_q.set_title("bottleneck queue")
    ax_q.legend(loc="upper right")
    flows = result.flows
    if len(flows) <= MAX_BARS:
        ax_g.bar(flows["id"], flows["goodput_bps"] / 1e6)
        ax_g.set_xlabel("flow")
        ax_g.set_ylabel("goodput (Mb/s)")
    else:  # one bar per flow costs a matplotlib artist each: minutes and gigabytes for 10⁵ flows
        ax_g.hist(flows["goodput_bps"] / 1e6, bins=50)
        ax_g.set_xlabel(f"goodput (Mb/s), histogram of {len(flows):,} flows")
        ax_g.set_ylabel("flows")
    agg = result.aggregate
    ax_g.set_title(f"goodput after warm-up: total {agg['goodput_bps'] / 1e6:.2f} Mb/s, Jain {agg['jain_index']:.3f}")
    fig.tight_layout()
    return fig
