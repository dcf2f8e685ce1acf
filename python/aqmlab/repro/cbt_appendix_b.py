"""Parris 2001, App. B: the parameter sweeps behind Tables 5.1–5.4, rerun on our lab.

Spec `seed000-cbt-evaluation.md` §4.2–4.6 (what was swept and why) and §5.12 (the sweeps' numbers).
Each sweep point is one `cbt_scenarios.scenario_with` run per period and seed; a point's value is the
mean over its seeds.

This module runs it all (`run`, which `cbt.py` calls) and gathers the claims (`claims`); the parts live
beside it: the link, the allocation policies and the selection rules (`cbt_appendix_b_allocations`), the
grids, the plan and its runs (`cbt_appendix_b_plan`), per-run metrics and the means over seeds
(`cbt_appendix_b_metrics`), the claims (`cbt_appendix_b_claims`), the notes on claims that do not hold
(`cbt_appendix_b_notes`), the figures (`cbt_appendix_b_figures`) and the report's section
(`cbt_appendix_b_report`).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .cbt_appendix_b_claims import cbq_claims, cbt_claims, fifo_claims, fred_claims, our_size_claims, red_claims
from .cbt_appendix_b_figures import figures
from .cbt_appendix_b_metrics import extract, mean_over_seeds
from .cbt_appendix_b_notes import annotate, blast_timing, note_blast_timing
from .cbt_appendix_b_plan import jobs, measured_size_jobs, plan
from .cbt_appendix_b_report import section
from .common import Claim, Timer, ensure_dir, run_jobs

__all__ = ["run", "claims"]


def claims(df: pd.DataFrame) -> list[Claim]:
    """Every App. B claim testable on the sweep means `df` (claims whose sweep is absent are skipped),
    with investigation notes on those that do not hold."""
    cl = fifo_claims(df) + red_claims(df) + fred_claims(df) + cbt_claims(df) + our_size_claims(df) + cbq_claims(df)
    annotate(cl, df)
    return cl


def run(seeds: tuple[int, ...], out: Path, workers: int | None, quiet: bool,
        quick: bool) -> tuple[list[Claim], list[str], str]:
    """Runs the App. B sweeps; writes `out/appendix_b.csv` (means over seeds) and the `cbt_appb_*.png`
    figures; returns the claims, the figure names and the report's markdown section."""
    out = ensure_dir(Path(out))
    timer = Timer()
    p = plan(tuple(seeds), quick)
    js = jobs(p)
    raw = pd.DataFrame(run_jobs(js, extract, workers=workers, desc="CBT App. B", quiet=quiet))
    df = mean_over_seeds(raw)
    measured = measured_size_jobs(p, df)
    js += measured
    df = pd.concat([df, mean_over_seeds(pd.DataFrame(run_jobs(measured, extract, workers=workers,
                                                             desc="CBT, our sizes", quiet=quiet)))], ignore_index=True)
    df.to_csv(out / "appendix_b.csv", index=False)
    cl = claims(df)
    note_blast_timing(cl, blast_timing(p.seeds, workers, quiet))
    figs = figures(df, out)
    return cl, figs, section(df, cl, p, timer.minutes(), len(js), quick)
