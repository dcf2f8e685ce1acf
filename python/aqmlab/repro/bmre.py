"""`aqmlab repro bmre`: J.-w. Cho, *Dynamic Buffer Management Based on Rate Estimation in IP
Networks* (KAIST MS thesis, 2002), rerun.

Experiments E1–E7 of Ch. 4 (spec `seed003-bmre.md` §3) under BMRE, RED, FRED and DRR over several
seeds: normalised goodput dispersion S (eq. 4.1), TCP and CBR goodput over the fair share, CoV of
per-flow goodput over 0.5 s and 2 s intervals (eq. 4.4), time-averaged queue, drop rate by reason,
and BMRE's internals over time. The claims of §5.1 get a verdict each, with criteria fixed in
`claims()` before the runs (the thesis's figures are lost: only crossing points and orderings from
its prose can be checked). Rows added after an audit (R1d, R4e, R11b–e) say in their criterion that it was
written with the runs' numbers already published (post hoc); R1c's and R6b's criteria were fixed before
their new runs (RED and FRED at max_p 0.4; BMRE without Fair Drop in E5).

`--quick`: 5 values of N, 30-s runs, one seed.

This module runs it all (`reproduce`); the parts live beside it: the run plan and the runs of E1, E3–E7
(`bmre_experiments`), E2 (`bmre_drop_events`), the scenarios (`bmre_scenarios`), per-run metrics
(`bmre_metrics`), the BMRE variants (`bmre_sensitivity`), how verdicts are read (`bmre_verdicts`), the claims
(`bmre_claims`), the notes on claims that do not hold (`bmre_investigation`), the figures (`bmre_figures`)
and report.md (`bmre_report`).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
from . import bmre_drop_events as E2  # noqa: E402
from .bmre_claims import claims  # noqa: E402
from .bmre_experiments import TFRC_AVAILABLE, command_line, internals_runs, maxp_runs, plan, run_all  # noqa: E402
from .bmre_figures import figures  # noqa: E402
from .bmre_investigation import investigate  # noqa: E402
from .bmre_report import write_report  # noqa: E402
from .bmre_sensitivity import sensitivity_runs  # noqa: E402
from .common import Claim, Timer, ensure_dir  # noqa: E402


def reproduce(out: Path, *, quick: bool = False, workers: int | None = None, quiet: bool = False,
              seeds: int | None = None, duration_s: float | None = None, tfrc: bool = TFRC_AVAILABLE) -> list[Claim]:
    """Runs E1–E7, writes figures, `results.csv` and `report.md` into `out`, returns the claims."""
    p = plan(quick, workers, quiet, seeds=seeds, duration_s=duration_s, tfrc=tfrc)
    out = ensure_dir(Path(out))
    timer = Timer()
    df = run_all(p)
    internals = internals_runs(p)
    sens = sensitivity_runs(p)
    maxp = maxp_runs(p)
    cl = claims(df, p, sens, maxp, internals)
    drop_events = E2.runs(p.seeds, p.duration_s, p.workers, p.quiet)
    cl.append(E2.claim(drop_events))
    investigate(cl, df, internals, sens, p)
    figs = figures(df, internals, out) + [E2.figure(drop_events, out)]
    df.to_csv(out / "results.csv", index=False)
    sens.to_csv(out / "sensitivity.csv", index=False)
    maxp.to_csv(out / "maxp.csv", index=False)
    drop_events.drop(columns="event_times").to_csv(out / "drop_events.csv", index=False)
    write_report(out, p, df, cl, internals, figs, timer.minutes(), sens, drop_events, command_line(p, out), maxp)
    return cl
