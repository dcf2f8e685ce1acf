"""Parris 2001, App. B: the sweeps, as the dissertation ran them and as one invocation runs them (`plan`),
and the runs they make (`jobs`, `measured_size_jobs`). Each sweep point is one `cbt_scenarios.scenario_with`
run per period and seed.

* FIFO: maxq ∈ {30, 60, 120, 240, 360}, all four mixes, both periods (Figs. B.1–B.6).
* RED: HTTP-Proshare Th_min × Th_max grid and the BULK-Proshare confirmation grid, both periods
  (Figs. B.7–B.20). Cells with Th_min ≥ Th_max are skipped (not a RED setting).
* FRED: HTTP-Proshare and BULK-Proshare grids, both periods (Figs. B.21–B.31).
* CBT at L = 100 ms: B_other = 150, B_TCP = 1225 − 150 − B_mm, the B_mm grids of Tables B.16–B.22,
  thresholds from the configurator (`models.cbt.configure`, Eq. 4.1) with the mixes' measured
  packet sizes; blast period, as all of App. B's CBT figures (B.32–B.43).
* CBQ: multimedia 11–17 % of the link (Tables B.24–B.27), other 12 %, TCP the rest; blast period
  (Figs. B.45–B.54).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

import pandas as pd

from . import cbt_scenarios as S
from .cbt_appendix_b_allocations import ALLOC_KBPS, cbq_shares, cbt_allocations
from .cbt_appendix_b_metrics import our_sizes, sweep_rows
from .common import Job

# --------------------------------------------------------------------------- the dissertation's grids

FIFO_MAXQ = (30, 60, 120, 240, 360)
RED_TH_MAX = (10, 15, 20, 30, 40, 60, 80, 100, 120, 180)
RED_HTTP_TH_MIN = (0, 2, 4, 5, 10, 15, 20, 25, 30, 60, 120)
RED_BULK = ((5, 15, 30, 60), (15, 30, 60, 120, 180))
FRED_HTTP_TH_MIN = (2, 3, 4, 5, 10, 15, 20, 25, 30, 60, 120)
FRED_BULK = ((3, 5, 15, 30), (40, 60, 80, 100, 180))
CBT_BMM = {  # Tables B.16, B.18, B.20, B.22
    "HTTP-MPEG": (140, 160, 180, 185, 190, 195, 200, 220),
    "BULK-MPEG": (140, 160, 180, 185, 190, 195, 200, 205, 210, 220),
    "HTTP-Proshare": (110, 130, 150, 155, 160, 165, 170, 190),
    "BULK-Proshare": (110, 130, 150, 155, 160, 165, 170, 175, 180, 185, 190, 195, 200),
}
CBQ_PCT = {"HTTP-MPEG": (13, 14, 15, 16, 17), "BULK-MPEG": (13, 14, 15, 16, 17),  # Tables B.24–B.27
           "HTTP-Proshare": (11, 12, 13, 14, 15), "BULK-Proshare": (11, 12, 13, 14, 15)}


@dataclasses.dataclass(frozen=True)
class Plan:
    """What one invocation runs. Grids list (Th_min, Th_max) pairs; `wide_seeds` serve the wide
    HTTP grids, `seeds` everything else and the chosen points of the wide grids."""

    seeds: tuple[int, ...]
    wide_seeds: tuple[int, ...]
    fifo_maxq: tuple[int, ...]
    red_http: tuple[tuple[int, int], ...]
    red_bulk: tuple[tuple[int, int], ...]
    fred_http: tuple[tuple[int, int], ...]
    fred_bulk: tuple[tuple[int, int], ...]
    cbt_bmm: dict[str, tuple[int, ...]]
    cbq_pct: dict[str, tuple[int, ...]]
    red_http_th_min: tuple[int, ...]
    fred_http_th_min: tuple[int, ...]


def _cells(th_min: Iterable[int], th_max: Iterable[int]) -> tuple[tuple[int, int], ...]:
    return tuple((lo, hi) for hi in th_max for lo in th_min if lo < hi)


def plan(seeds: tuple[int, ...], quick: bool) -> Plan:
    """Full mode: every grid of App. B except the two wide HTTP-Proshare threshold grids, whose Th_min
    sets are reduced (listed in the report) and run with the first two seeds; the chosen points (5, 40)
    and (5, 60) get all seeds. Quick mode: coarse grids that still cover each claim."""
    if quick:
        red_min, fred_min = (5, 30), (2, 5, 30)
        return Plan(
            seeds=seeds, wide_seeds=seeds[:1], fifo_maxq=(30, 60, 240),
            red_http=_cells(red_min, (10, 40, 120)), red_bulk=_cells((5, 30), (30, 120)),
            fred_http=((2, 60), (5, 60), (5, 180), (30, 60), (30, 180)), fred_bulk=((3, 40), (5, 60), (30, 180)),
            cbt_bmm={"HTTP-MPEG": (160, 195, 220), "BULK-MPEG": (160, 205, 220),
                     "HTTP-Proshare": (130, 160, 190), "BULK-Proshare": (130, 190, 200)},
            cbq_pct={"HTTP-MPEG": (13, 16, 17), "BULK-MPEG": (13, 16, 17),
                     "HTTP-Proshare": (11, 13, 15), "BULK-Proshare": (11, 14, 15)},
            red_http_th_min=red_min, fred_http_th_min=fred_min)
    red_min, fred_min = (2, 5, 15, 30, 60), (2, 3, 5, 15, 30)
    return Plan(
        seeds=seeds, wide_seeds=seeds[:2], fifo_maxq=FIFO_MAXQ,
        red_http=_cells(red_min, RED_TH_MAX), red_bulk=_cells(*RED_BULK),
        fred_http=_cells(fred_min, (10, 20, 30, 40, 60, 80, 120, 180)), fred_bulk=_cells(*FRED_BULK),
        cbt_bmm=CBT_BMM, cbq_pct=CBQ_PCT, red_http_th_min=red_min, fred_http_th_min=fred_min)


def _red(th_min: int, th_max: int) -> dict[str, Any]:
    return {**S.queue("RED", "HTTP-Proshare"), "min_th": th_min, "max_th": th_max}


def _fred(th_min: int, th_max: int) -> dict[str, Any]:
    return {**S.queue("FRED", "HTTP-Proshare"), "min_th": th_min, "max_th": th_max}


def jobs(p: Plan) -> list[Job]:
    """Every run of the plan, labelled with sweep, mix, period, seed and the swept parameters."""
    out: list[Job] = []

    def add(sweep: str, mix: str, q: dict[str, Any], periods: Iterable[str], seeds: Iterable[int], **x: Any) -> None:
        for period in periods:
            for seed in seeds:
                out.append(Job(S.scenario_with(mix, q, period, seed),
                               {"sweep": sweep, "mix": mix, "period": period, "seed": seed, **x}))

    both = tuple(S.PERIODS)
    for mix in S.MIXES:
        for maxq in p.fifo_maxq:
            add("FIFO", mix, {"kind": "droptail", "limit": maxq}, both, p.seeds, maxq=maxq)
    for sweep, mix, cells, make, chosen in (("RED", "HTTP-Proshare", p.red_http, _red, (5, 40)),
                                            ("RED", "BULK-Proshare", p.red_bulk, _red, None),
                                            ("FRED", "HTTP-Proshare", p.fred_http, _fred, (5, 60)),
                                            ("FRED", "BULK-Proshare", p.fred_bulk, _fred, None)):
        wide = mix.startswith("HTTP")
        for lo, hi in cells:
            seeds = p.seeds if not wide or (lo, hi) == chosen else p.wide_seeds
            add(sweep, mix, make(lo, hi), both, seeds, th_min=lo, th_max=hi)
    for mix, grid in p.cbt_bmm.items():
        for b_mm in grid:
            add("CBT", mix, S.cbt_queue_for(mix, cbt_allocations(b_mm), 0.1), ("blast",), p.seeds, b_mm=b_mm)
    for mix, grid in p.cbq_pct.items():
        for pct in grid:
            add("CBQ", mix, S.cbq_queue(cbq_shares(pct)), ("blast",), p.seeds, mm_pct=pct,
                b_mm=round(pct / 100 * ALLOC_KBPS))
    return out


def measured_size_jobs(p: Plan, df: pd.DataFrame) -> list[Job]:
    """The HTTP mixes' CBT allocation sweeps again, with thresholds from the packet sizes our HTTP and
    multimedia really have (`our_sizes`) instead of the lab's: ours differ most for HTTP (no connection
    set-up packets in our model)."""
    out = []
    for mix, grid in p.cbt_bmm.items():
        if not mix.startswith("HTTP") or sweep_rows(df, "CBT", mix, "blast").empty:
            continue
        sizes = our_sizes(df, mix)
        for b_mm in grid:
            q = S.cbt_queue_for(mix, cbt_allocations(b_mm), 0.1, sizes)
            out += [Job(S.scenario_with(mix, q, "blast", seed), {"sweep": "CBT-our-sizes", "mix": mix, "period": "blast",
                                                                  "seed": seed, "b_mm": b_mm}) for seed in p.seeds]
    return out
