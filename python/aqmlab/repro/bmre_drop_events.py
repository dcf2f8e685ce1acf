"""BMRE's E2 (Cho 2002 §4.1, Fig. 4.4): when are the packets of one TCP source dropped?

20 TCP flows under each discipline; the drop-event times of source 1 (flow 0) come from the per-flow
drop series at 10-ms resolution (`flow0_drops`: a bin with at least one drop is one event). The
claim (R3): BMRE drops source 1 more often than the others do, at near-periodic intervals, while RED
and FRED drop at random (geometric gaps); DRR is "not comparable". Measured: source 1's drop events
per second, and the coefficient of variation of the gaps between events (≈ 1 for random, memoryless
drops; well below 1 for periodic ones).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from . import bmre_scenarios as S
from .common import Claim, Job, fmt, run_jobs, save_figure

N_FLOWS = 20
BIN_S = 0.01
FIGURE = "fig4_4_drop_events.png"
#: Criterion thresholds, fixed before the first run: periodic gaps have CV < 0.6, random ones > 0.8.
PERIODIC_CV = 0.6
RANDOM_CV = 0.8


def event_times(drops: np.ndarray, time_s: np.ndarray) -> np.ndarray:
    """Start times of the bins holding at least one drop (the bin's end minus its width)."""
    return time_s[drops > 0] - BIN_S


def gap_cv(times: np.ndarray) -> float:
    """Coefficient of variation of the gaps between consecutive events; NaN with fewer than 3 events."""
    if len(times) < 3:
        return float("nan")
    gaps = np.diff(times)
    return float(gaps.std() / gaps.mean())


def extract(res) -> dict[str, Any]:
    ts = res.timeseries
    t = ts["time_s"].to_numpy()
    events = event_times(ts["flow0_drops"].to_numpy(), t)
    others = [len(event_times(ts[f"flow{i}_drops"].to_numpy(), t)) for i in range(1, N_FLOWS)]
    duration = float(t[-1])
    return {"events_per_s": len(events) / duration, "others_events_per_s": float(np.mean(others)) / duration,
            "gap_cv": gap_cv(events), "event_times": events}


def runs(seeds: tuple[int, ...], duration_s: float, workers: int | None, quiet: bool) -> pd.DataFrame:
    """E2 under every discipline and seed."""
    jobs = [Job(S.scenario(S.queue(aqm), n_tcp=N_FLOWS, duration_s=duration_s, seed=seed, bin_s=BIN_S),
                {"exp": "E2", "aqm": aqm, "seed": seed}) for seed in seeds for aqm in S.AQMS]
    return pd.DataFrame(run_jobs(jobs, extract, workers=workers, desc="E2 drop events", quiet=quiet))


def claim(df: pd.DataFrame) -> Claim:
    m = df.groupby("aqm")[["events_per_s", "others_events_per_s", "gap_cv"]].mean()
    ours = "; ".join(f"{a}: {m.loc[a, 'events_per_s']:.2f}/s, gap CV {fmt(m.loc[a, 'gap_cv'])}" for a in S.AQMS)
    holds = (m.loc["bmre", "events_per_s"] > max(m.loc["red", "events_per_s"], m.loc["fred", "events_per_s"])
             and m.loc["bmre", "gap_cv"] < PERIODIC_CV
             and min(m.loc["red", "gap_cv"], m.loc["fred", "gap_cv"]) > RANDOM_CV)
    c = Claim("R3", "§4.1, Fig. 4.4", "E2 (20 TCP): BMRE drops source 1 more often than RED and FRED do, at "
              "near-periodic intervals; RED and FRED drop it at random", "more often; periodic vs geometric gaps",
              ours, holds, f"criterion: BMRE's event rate above RED's and FRED's, BMRE's gap CV < {PERIODIC_CV}, "
              f"RED's and FRED's > {RANDOM_CV} (1 for memoryless drops); DRR shown only")
    if not holds:
        parts = {
            "more often": m.loc["bmre", "events_per_s"] > max(m.loc["red", "events_per_s"], m.loc["fred", "events_per_s"]),
            "BMRE near-periodic": m.loc["bmre", "gap_cv"] < PERIODIC_CV,
            "RED and FRED random": min(m.loc["red", "gap_cv"], m.loc["fred", "gap_cv"]) > RANDOM_CV,
        }
        c.note = ("Part by part: " + ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in parts.items())
                  + f". The other 19 flows see the same event rates as source 1 under each discipline "
                  + ", ".join(f"{a} {m.loc[a, 'others_events_per_s']:.2f}/s" for a in S.AQMS)
                  + ", so source 1 is typical. Gaps under RED and FRED are more regular than memoryless drops would "
                  "give: a TCP flow is dropped at most about once per window cycle, whatever the discipline.")
    return c


def figure(df: pd.DataFrame, out: Path, window_s: float = 30.0) -> str:
    """Source 1's drop events, first seed, one row per discipline (Fig. 4.4)."""
    fig, ax = plt.subplots(figsize=(10, 2.8))
    first = df[df["seed"] == df["seed"].min()].set_index("aqm")
    for row, aqm in enumerate(S.AQMS):
        times = first.loc[aqm, "event_times"]
        times = times[times < window_s]
        ax.vlines(times, row - 0.35, row + 0.35, lw=0.8)
    ax.set(yticks=range(len(S.AQMS)), yticklabels=S.AQMS, xlabel="time (s)", xlim=(0, window_s),
           title=f"E2: drop events of source 1 of {N_FLOWS} TCP flows ({BIN_S * 1000:g}-ms bins)")
    return save_figure(fig, out, FIGURE)


def table(df: pd.DataFrame) -> pd.DataFrame:
    """Seed means per discipline, for the report."""
    return df.groupby("aqm")[["events_per_s", "others_events_per_s", "gap_cv"]].mean().loc[list(S.AQMS)].reset_index()
