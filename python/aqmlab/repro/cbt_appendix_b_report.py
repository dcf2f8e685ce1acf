"""Parris 2001, App. B: the report's section, with how the sweeps were run, the allocations the selection
rules re-derive, the claims table and one table of means per sweep.
"""

from __future__ import annotations

import math

import pandas as pd

from . import cbt_scenarios as S
from .cbt_appendix_b_allocations import THESIS_CBQ_PCT, THESIS_CBT_BMM, select_cbq, select_cbt
from .cbt_appendix_b_claims import fmt_fixed
from .cbt_appendix_b_metrics import sweep_rows
from .cbt_appendix_b_plan import Plan
from .common import Claim, claim_notes, claims_table, frame_table


def _sweep_table(df: pd.DataFrame, sweep: str, params: list[str], cols: list[str]) -> str:
    d = sweep_rows(df, sweep)
    if d.empty:
        return "(not run)"
    cols = [c for c in cols if c in d and d[c].notna().any()]
    return frame_table(d[["mix", "period"] + params + ["seeds"] + cols].sort_values(["mix", "period"] + params))


def section(df: pd.DataFrame, cl: list[Claim], p: Plan, minutes: float, runs: int, quick: bool) -> str:
    held, failed = sum(c.holds is True for c in cl), sum(c.holds is False for c in cl)
    cbt_sel = {mx: select_cbt(sweep_rows(df, "CBT", mx, "blast"), S.MIXES[mx]["mm"] == "mpeg")
               for mx in S.MIXES if len(sweep_rows(df, "CBT", mx))}
    cbq_sel = {mx: select_cbq(sweep_rows(df, "CBQ", mx, "blast"), S.MIXES[mx]["mm"] == "mpeg")
               for mx in S.MIXES if len(sweep_rows(df, "CBQ", mx))}
    tput = ["tcp_goodput_KBps", "tcp_KBps", "tcp_load_KBps", "tcp_eff", "mm_KBps", "other_KBps", "mm_loss_pps",
            "mm_latency_ms", "playable_fps"]
    alloc = ["tcp_KBps", "mm_KBps", "other_KBps", "mm_loss_pps", "mm_loss_frac", "mm_latency_ms", "actual_fps", "playable_fps"]
    lines = [
        "## App. B parameter sweeps",
        "",
        f"`cbt_appendix_b.py`{' (quick mode)' if quick else ''}: {runs} runs in {minutes:.1f} min. Seeds: {len(p.seeds)} per point "
        f"({', '.join(map(str, p.seeds))}), except the wide HTTP-Proshare RED and FRED threshold grids, which use "
        f"{len(p.wide_seeds)} seed(s) per cell and all seeds at the chosen (5, 40) and (5, 60) (the dissertation: one "
        "exploratory run per point, then 5 repeats where promising). Reduced grids: RED HTTP-Proshare Th_min ∈ "
        f"{{{', '.join(map(str, p.red_http_th_min))}}} (thesis: 0, 2, 4, 5, 10, 15, 20, 25, 30, 60, 120), FRED HTTP-Proshare "
        f"Th_min ∈ {{{', '.join(map(str, p.fred_http_th_min))}}} × Th_max ∈ "
        f"{{{', '.join(sorted({str(h) for _, h in p.fred_http}, key=int))}}}; cells with Th_min ≥ Th_max are not RED/FRED settings "
        "and are skipped. CBT (L = 100 ms) and CBQ sweeps: blast period only, as App. B's figures.",
        "",
        "Metrics: throughputs are wire bytes on the bottleneck; **TCP efficiency is App. B's definition** (TCP outbound "
        "throughput ÷ TCP inbound load), computed as TCP packets delivered ÷ packets sent in the window (we have no "
        "byte count of offered load; this assumes dropped packets have the mean delivered size); TCP load = throughput ÷ "
        "efficiency. MM loss is the mean over the multimedia flows (the thesis: one representative flow).",
        "",
        "Criteria: a range the thesis states is tested by containment of every cell of our grid (ours is a subset of "
        "its grid); a single number with no spread given is tested at ±10 % (our tolerance, stated in each row); "
        "qualitative statements are turned into the test written beside them.",
        "",
        "### Re-derived allocations (selection rules of §B.6 and §B.7 applied to our measurements)",
        "",
        "| mix | CBT B_mm thesis | CBT B_mm ours | CBQ MM % thesis | CBQ MM % ours |",
        "|---|---|---|---|---|",
    ] + [f"| {mx} | {THESIS_CBT_BMM[mx]} | {fmt_fixed(cbt_sel.get(mx, math.nan))} | {THESIS_CBQ_PCT[mx]} | "
         f"{fmt_fixed(cbq_sel.get(mx, math.nan))} |"
         for mx in S.MIXES] + [
        "",
        "CBT rule: the smallest B_mm with multimedia loss < 1 % of packets (\"almost no loss\"; §B.7.3's \"less than one "
        "percent\") and, for MPEG, ≥ 29.5 playable fps, there and at every larger B_mm of the grid. CBQ rule: the same "
        "plus multimedia latency < 30 ms (§B.7.1 \"low latency (less than 30 ms)\"; §B.7.4 rejects 42 ms) and 30 actual fps. "
        "\"–\" means no grid point passes. Our MPEG and Proshare are the spec's synthetic substitutes, so the "
        "dissertation's values are not expected exactly (spec §6).",
        "",
        f"**{held} of {len(cl)} App. B claims hold, {failed} do not** ({sum(c.holds is None for c in cl)} shown only).",
        "",
        claims_table(cl),
        "",
        claim_notes(cl),
        "",
        "### FIFO (maxq sweep)", "", _sweep_table(df, "FIFO", ["maxq"], tput + ["link_KBps"]), "",
        "### RED (Th_min × Th_max)", "", _sweep_table(df, "RED", ["th_min", "th_max"], tput), "",
        "### FRED (Th_min × Th_max)", "", _sweep_table(df, "FRED", ["th_min", "th_max"], tput), "",
        "### CBT allocation sweep (L = 100 ms, B_other 150, B_TCP = 1225 − 150 − B_mm)", "",
        _sweep_table(df, "CBT", ["b_mm"], alloc), "",
        "### CBQ allocation sweep (other 12 %, TCP the rest)", "", _sweep_table(df, "CBQ", ["mm_pct", "b_mm"], alloc), "",
    ]
    return "\n".join(lines)
