"""The run plan of the BMRE reproduction (how many N and seeds, how long) and its runs: experiments E1 and
E3–E7 (spec `seed003-bmre.md` §3) under BMRE, RED, FRED and DRR, RED and FRED at the higher max_p (R1c) and
the single-seed BMRE runs that keep their time series (internals). E2 is `bmre_drop_events`, the BMRE
variants `bmre_sensitivity`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pandas as pd

from . import bmre_scenarios as S
from .bmre_metrics import extract_for
from .common import Job, run_jobs


N_FULL = (5, 10, 20, 30, 50, 70, 90, 100, 150, 200, 250, 300, 350, 400, 500, 650, 800)
N_QUICK = (10, 50, 100, 350, 650)
N_E5 = (20, 40, 60, 100, 180, 300)
N_E6 = (20, 60, 100, 180)
#: Whether the simulator has the TFRC transport (E6); without it E6 is left out and the report says so.
TFRC_AVAILABLE = True
#: The higher max_p of R1c (§4.2.1: "queueing delays of RED can be reduced by setting max_p to higher values
#: while queueing delays of FRED can not be noticeably reduced with higher max_p"; no value is named): twice
#: the 0.2 of every other run (the top of the thesis's 0.1–0.2 rule of thumb, §2.1), fixed before the runs.
MAX_P_HIGH = 0.4


@dataclasses.dataclass(frozen=True)
class Plan:
    """How much to run."""

    n_values: tuple[int, ...]
    e5_n: tuple[int, ...]
    e6_n: tuple[int, ...]
    seeds: tuple[int, ...]
    duration_s: float
    quick: bool
    tfrc: bool
    workers: int | None = None
    quiet: bool = False


def plan(quick: bool, workers: int | None = None, quiet: bool = False, *, seeds: int | None = None,
         duration_s: float | None = None, tfrc: bool = TFRC_AVAILABLE) -> Plan:
    if quick:
        return Plan(N_QUICK, (20, 100), (20, 100), tuple(range(1, (seeds or 1) + 1)), duration_s or 30.0, True, tfrc,
                    workers, quiet)
    return Plan(N_FULL, N_E5, N_E6, tuple(range(1, (seeds or 2) + 1)), duration_s or 100.0, False, tfrc, workers, quiet)


def n_cbr(n: int) -> int:
    """E3's CBR flows: 40 % of N, rounded (the thesis does not say how)."""
    return int(round(0.4 * n))


def scenario_job(exp: str, aqm: str, n: int, seed: int, p: Plan, *, cbr: int = 0, cbr_bps: float | None = None,
                 tfrc: int = 0, packet: int = S.PACKET_BYTES, bin_s: float = 0.5, classes: list[int] | None = None,
                 setup: dict[str, Any] | None = None, **bmre_keys) -> tuple[Job, Any]:
    """One run; `setup` overrides `bmre_scenarios.scenario`'s set-up parameters (access delay, start jitter,
    TCP window), `bmre_keys` go to the discipline."""
    n_tcp = n - cbr - tfrc
    sc = S.scenario(S.queue(aqm, mean_packet=packet, **bmre_keys), n_tcp=n_tcp, n_cbr=cbr, cbr_bps=cbr_bps, n_tfrc=tfrc,
                    packet=packet, duration_s=p.duration_s, seed=seed, bin_s=bin_s, classes=classes, **(setup or {}))
    return Job(sc, {"exp": exp, "aqm": aqm, "n": n, "seed": seed}), (n_tcp, cbr, tfrc, bin_s, packet)


def all_jobs(p: Plan) -> list[tuple[Job, Any]]:
    jobs = []
    for seed in p.seeds:
        for n in p.n_values:
            for aqm in S.AQMS:
                jobs.append(scenario_job("E1", aqm, n, seed, p))
                jobs.append(scenario_job("E3", aqm, n, seed, p, cbr=n_cbr(n), cbr_bps=3 * S.BW_BPS / n))
        for aqm in ("bmre", "fred", "drr"):
            jobs.append(scenario_job("E4", aqm, 20, seed, p, cbr=8, cbr_bps=3e6))
        for n in p.e5_n:
            for aqm in S.AQMS:
                jobs.append(scenario_job("E5", aqm, n, seed, p, packet=500))
        if p.tfrc:
            for n in p.e6_n:
                for aqm in S.AQMS:
                    jobs.append(scenario_job("E6", aqm, n, seed, p, tfrc=int(round(0.4 * n)), packet=500))
        jobs.append(scenario_job("E7", "bmre", 8, seed, p, classes=[0, 0, 1, 1, 2, 2, 3, 3], weighted=True))
    return jobs


def run_all(p: Plan) -> pd.DataFrame:
    rows = []
    jobs = all_jobs(p)
    # One extractor per job shape; run_jobs takes one, so group the jobs by shape.
    by_shape: dict[Any, list[Job]] = {}
    for job, shape in jobs:
        by_shape.setdefault(shape, []).append(job)
    for shape, js in by_shape.items():
        n_tcp, cbr, tfrc, bin_s, packet = shape
        rows += run_jobs(js, extract_for(n_tcp, cbr, tfrc, p.duration_s, bin_s, packet), workers=p.workers,
                         desc=f"bmre N={n_tcp + cbr + tfrc}", quiet=p.quiet)
    return pd.DataFrame(rows)


def maxp_runs(p: Plan) -> pd.DataFrame:
    """RED and FRED on E1 at max_p = MAX_P_HIGH, over the plan's N and seeds (R1c; the max_p 0.2 runs are
    the main E1 runs)."""
    by_shape: dict[Any, list[Job]] = {}
    for seed in p.seeds:
        for n in p.n_values:
            for aqm in ("red", "fred"):
                job, shape = scenario_job("E1", aqm, n, seed, p, max_p=MAX_P_HIGH)
                by_shape.setdefault(shape, []).append(job)
    rows = []
    for shape, js in by_shape.items():
        n_tcp, cbr, tfrc, bin_s, packet = shape
        rows += run_jobs(js, extract_for(n_tcp, cbr, tfrc, p.duration_s, bin_s, packet), workers=p.workers,
                         desc=f"max_p {MAX_P_HIGH:g} N={n_tcp}", quiet=p.quiet)
    return pd.DataFrame(rows).assign(max_p=MAX_P_HIGH) if rows else pd.DataFrame()


def internals_runs(p: Plan) -> dict[str, dict[str, Any]]:
    """One BMRE run each of E3 at N = 100 and 650 and of E4, keeping the time series."""
    out = {}
    cases = {"E3 N=100": dict(n=100, cbr=40, cbr_bps=3 * S.BW_BPS / 100),
             "E3 N=650": dict(n=650, cbr=260, cbr_bps=3 * S.BW_BPS / 650),
             "E4": dict(n=20, cbr=8, cbr_bps=3e6)}
    for name, c in cases.items():
        job, shape = scenario_job(name, "bmre", c["n"], p.seeds[0], p, cbr=c["cbr"], cbr_bps=c["cbr_bps"])
        n_tcp, cbr, tfrc, bin_s, packet = shape
        out[name] = run_jobs([job], extract_for(n_tcp, cbr, tfrc, p.duration_s, bin_s, packet, internals=True),
                             workers=1, desc=name, quiet=p.quiet)[0]
    return out


def command_line(p: Plan, out: Path | None = None) -> str:
    """The `aqmlab` command that gives this plan (for the report's header)."""
    parts = ["aqmlab repro bmre"]
    if p.quick:
        parts.append("--quick")
    default_seeds = 1 if p.quick else 2
    if len(p.seeds) != default_seeds:
        parts.append(f"--seeds {len(p.seeds)}")
    if p.duration_s != (30.0 if p.quick else 100.0):
        parts.append(f"--duration {p.duration_s:g}")
    if out is not None:
        o = Path(out)
        try:
            o = o.resolve().relative_to(Path.cwd().resolve())
        except ValueError:
            pass
        parts.append(f"--out {o}")
    if p.workers:
        parts.append(f"--jobs {p.workers}")
    if p.quiet:
        parts.append("-q")
    return " ".join(parts)
