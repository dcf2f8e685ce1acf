"""The sensitivity runs of the BMRE reproduction: BMRE variants for the spec's open choices (vth
reconstruction, count reset, cap test, table bound) and with Fair Drop off, on E1, E3 and E4 (and E5 for
Fair Drop off).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from . import bmre_scenarios as S
from .bmre_experiments import Plan, n_cbr, scenario_job
from .bmre_metrics import extract_for
from .common import Job, run_jobs


#: Fair Drop switched off: with fd_th = max_q the Fair Drop test (`q ≥ fd_th`) is never reached, since the
#: physical-limit test before it already drops at `q ≥ max_q` (crates/core/src/qdisc/bmre.rs, enqueue).
FAIR_DROP_OFF = "Fair Drop off (fd_th = max_q)"
#: R6b: E5's N with Fair Drop off (the claim: "Fair Drop greatly improves ... when N is larger than 180").
N_E5_FD = (180, 300)
#: BMRE variants for the sensitivity table (spec §2.11: A1, A2 both ways, the printed code's never-reset
#: count and the spec's alternative of counting departed bytes too; §2.5: the cap test; §2.7: the table
#: bound). Each differs from R1 at an N the table runs (N_flow ≈ N up to 100, 220–315 at N = 350 and
#: 650): the rising vth (line from 80 kB at n = 10 to 480 kB at n = 120) gives vmax_q 116 kB instead
#: of 160 kB at N = 20 (E4) and 225 instead of 240 kB at 50; like any vth variant with lo = 4000 B and
#: n1 >= 10 it equals R1 at N = 10 and at N >= 350 (severe mode, vth > max_q). A5's strict limit test
#: is not run: every packet here is 1000 B and max_q, fd_th and vmax_q = 8000·n / 240000 / 4000·n are
#: multiples of 1000 B, so q >= L and q + 1000 > L are the same test and the runs are identical.
VARIANTS = {
    "R1 (default)": {},
    "count never reset (A2 literal)": {"count_reset": "never"},
    "count also departed bytes (A2 alternative)": {"count_departed": True},
    "vth rising n1=10 n2=120": {"vth_n1": 10, "vth_n2": 120},
    "hi16k (vth 16000·n to 15)": {"vth_per_flow_hi": "16000B", "vth_n1": 15},
    "cap test before arrival (4 packets at 4 kB)": {"cap_test": "before-arrival"},
    "max_nflow 1000 (no recycling)": {"max_nflow": 1000},
    # Full runs only (R2f): is Fair Drop the source of BMRE's gain over FRED?
    FAIR_DROP_OFF: {"fd_th": f"{S.BUFFER_BYTES}B"},
}


def sensitivity_runs(p: Plan) -> pd.DataFrame:
    """BMRE variants on E1 and E3 at a few N and on E4, with the plan's seeds."""
    ns = (10, 50, 100, 350, 650) if not p.quick else (10, 100, 650)
    rows = []
    for name, keys in VARIANTS.items():
        if name == FAIR_DROP_OFF and p.quick:
            continue
        by_shape: dict[Any, list[Job]] = {}
        for seed in p.seeds:
            for n in ns:
                for job, shape in (scenario_job("E1", "bmre", n, seed, p, **keys),
                                   scenario_job("E3", "bmre", n, seed, p, cbr=n_cbr(n), cbr_bps=3 * S.BW_BPS / n,
                                                **keys)):
                    by_shape.setdefault(shape, []).append(job)
            job, shape = scenario_job("E4", "bmre", 20, seed, p, cbr=8, cbr_bps=3e6, **keys)
            by_shape.setdefault(shape, []).append(job)
            if name == FAIR_DROP_OFF:  # R6b: E5 (500-B packets) above 180 flows
                for n in (x for x in N_E5_FD if x in p.e5_n):
                    job, shape = scenario_job("E5", "bmre", n, seed, p, packet=500, **keys)
                    by_shape.setdefault(shape, []).append(job)
        for shape, js in by_shape.items():
            n_tcp, cbr, tfrc, bin_s, packet = shape
            for r in run_jobs(js, extract_for(n_tcp, cbr, tfrc, p.duration_s, bin_s, packet), workers=p.workers,
                              desc=f"sensitivity {name}", quiet=p.quiet):
                rows.append({"variant": name, **r})
    return pd.DataFrame(rows)
