"""What ``aqmlab suite rfc7928`` writes after its runs: per case the delay–goodput plot and the
flow-goodput boxes (the sweep's own plotters, on the case's rows), and ``report.md`` with a table per
case (docs/rfc7928.md).

A table row is one AQM: the mean over its seeds of the aggregate goodput, the mean and 99th-percentile
sojourn at the forward bottleneck, the bottleneck's drop rate and Jain's index over all flows (for
cases with UDP also the UDP flows' share of the goodput, for cases with a less-than-best-effort sender
its share), each after the run's warm-up (none in the rfc7928 scenarios: the suite measures from 0 s).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import pandas as pd

from .sweep_flow_plot import FLOW_PLOT_FILE, plot_flow_goodput
from .sweep_plot import PLOT_FILE, plot_delay_goodput

if TYPE_CHECKING:
    from .suite import Case

__all__ = ["case_table", "write_case_plots", "write_report", "REPORT_FILE"]

REPORT_FILE = "report.md"
_CASE_KEYS = ["aqm", "run.seed"]


def _rows(table: pd.DataFrame, case: Case) -> pd.DataFrame:
    return table[table["scenario"] == case.name] if len(table) else table


def write_case_plots(table: pd.DataFrame, flows: pd.DataFrame | None, case: Case, out: Path) -> None:
    """``OUT/<case>/delay_goodput.png`` (one ellipse per AQM over its seeds) and ``flow_goodput.png``."""
    rows = _rows(table, case)
    if not len(rows):
        return
    where = out / case.name
    where.mkdir(parents=True, exist_ok=True)
    plot_delay_goodput(rows, _CASE_KEYS, where / PLOT_FILE,
                       heading=f"RFC 7928 §{case.section}: {case.name} (ns-3 suite: {case.ns3_name})")
    if flows is not None and len(flows):
        plot_flow_goodput(flows[flows["scenario"] == case.name], _CASE_KEYS, where / FLOW_PLOT_FILE,
                          measured="over the whole run (no warm-up)")


def case_table(table: pd.DataFrame, flows: pd.DataFrame | None, case: Case, aqms: Sequence[str]) -> pd.DataFrame:
    """One row per AQM with runs: means over the seeds (goodput also its standard deviation)."""
    rows = _rows(table, case)
    udp = None
    if flows is not None and len(flows):
        mine = flows[flows["scenario"] == case.name]
        if mine["kind"].str.startswith("udp").any():
            per_run = mine.assign(udp=mine["goodput_bps"].where(mine["kind"].str.startswith("udp"), 0.0))
            sums = per_run.groupby("run_id")[["udp", "goodput_bps"]].sum()
            udp = (sums["udp"] / sums["goodput_bps"]).rename("udp_share")
    lbe = None
    if case.lbe_flows and flows is not None and len(flows):
        mine = flows[flows["scenario"] == case.name]
        per_run = mine.assign(lbe=mine["goodput_bps"].where(mine["flow"].isin(case.lbe_flows), 0.0))
        sums = per_run.groupby("run_id")[["lbe", "goodput_bps"]].sum()
        lbe = (sums["lbe"] / sums["goodput_bps"]).rename("lbe_share")
    out = []
    for aqm in aqms:
        r = rows[rows["aqm"] == aqm] if len(rows) else rows
        if not len(r):
            continue
        row = {
            "aqm": aqm,
            "runs": len(r),
            "goodput_mbps": r["goodput_bps"].mean() / 1e6,
            "goodput_sd_mbps": r["goodput_bps"].std(ddof=1) / 1e6 if len(r) > 1 else float("nan"),
            "delay_mean_ms": r["queue_mean_sojourn_s"].mean() * 1e3,
            "delay_p99_ms": r["queue_p99_sojourn_s"].mean() * 1e3,
            "drop_rate_pct": r["queue_drop_rate"].mean() * 100,
            "jain": r["jain_index"].mean(),
        }
        if udp is not None:
            row["udp_share_pct"] = udp.reindex(r["run_id"]).mean() * 100
        if lbe is not None:
            row["lbe_share_pct"] = lbe.reindex(r["run_id"]).mean() * 100
        out.append(row)
    return pd.DataFrame(out)


def _markdown(df: pd.DataFrame) -> str:
    udp, lbe = "udp_share_pct" in df, "lbe_share_pct" in df
    head = "| AQM | runs | goodput (Mb/s) | ± sd | queue delay mean (ms) | p99 (ms) | drop rate (%) | Jain |" + \
        (" UDP share (%) |" if udp else "") + (" LEDBAT share (%) |" if lbe else "")
    lines = [head, "|" + "---|" * (8 + udp + lbe)]
    for r in df.itertuples():
        cells = [r.aqm, str(r.runs), f"{r.goodput_mbps:.3f}", f"{r.goodput_sd_mbps:.3f}", f"{r.delay_mean_ms:.1f}",
                 f"{r.delay_p99_ms:.1f}", f"{r.drop_rate_pct:.2f}", f"{r.jain:.3f}"]
        if udp:
            cells.append(f"{r.udp_share_pct:.1f}")
        if lbe:
            cells.append(f"{r.lbe_share_pct:.1f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(table: pd.DataFrame, flows: pd.DataFrame | None, cases: Sequence[Case], aqms: Sequence[str],
                 seeds: int, quick: bool, out: Path, *, wall_s: float, failed: int = 0) -> Path:
    """Writes ``OUT/report.md`` (atomically) and the per-case ``OUT/<case>/table.csv``; returns the report's path."""
    n_runs = len(table)
    parts = [
        "# RFC 7928 evaluation suite (the ns-3 AQM Evaluation Suite's scenarios)",
        "",
        f"{len(cases)} scenarios × {len(aqms)} AQMs ({', '.join(aqms)}) × {seeds} seeds = {n_runs} runs"
        + (f" ({failed} failed)" if failed else "") + f"{', --quick: 60-s runs' if quick else ''}; "
        f"wall time {wall_s:.0f} s (runs reused from an earlier session count as zero).",
        "",
        "Per scenario: the delay–goodput plot (x: mean sojourn at the forward bottleneck, inverted; y: "
        "aggregate goodput; one point per seed, the 1-σ ellipse per AQM) and the mean over seeds of each "
        "number. Scenario files: `aqmlab scenarios rfc7928_<name>`; deviations from the suite: "
        "docs/rfc7928.md.",
    ]
    for case in cases:
        df = case_table(table, flows, case, aqms)
        parts += ["", f"## §{case.section} {case.name} (suite: {case.ns3_name}; file {case.builtin}"
                  + (f", {', '.join(f'{k} = {v}' for k, v in case.overrides.items())}" if case.overrides else "")
                  + ")", ""]
        if not len(df):
            parts.append("No finished runs.")
            continue
        (out / case.name).mkdir(parents=True, exist_ok=True)
        df.to_csv(out / case.name / "table.csv", index=False)
        parts += [f"![delay vs goodput]({case.name}/{PLOT_FILE})", "", _markdown(df)]
    path = out / REPORT_FILE
    tmp = out / f".{REPORT_FILE}.partial-{os.getpid()}"
    tmp.write_text("\n".join(parts) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
