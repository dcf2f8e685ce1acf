"""Past the α/β grid's open edges: where an AQM's best grid point sits on an open edge of an exponent
that matters (`white_grid.edge_optima`), the grid cannot say whether a better point lies beyond. The
probe runs the points past that edge (above the largest value up to 10, WHITE's exponents' upper
limit; below a smallest value above 0, down to 0), along the open exponent(s) through the best point,
at the grid's seeds, and says whether any beats the edge optimum by the grid claims' margin (0.01
beyond 2 standard errors: `white_grid.beaten_by_best`).

The best of several probe points is the largest of several noisy means, so "better" leans towards
yes; a "no" is the stronger statement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .common import SeedMean, frame_table
from .white_grid import _grid_point, beaten_by_best, edge_optima, with_score

if TYPE_CHECKING:
    from .white import Plan

#: Exponent values probed past an open upper edge (those above the grid's largest).
PROBE_VALUES = (5.0, 6.5, 8.0, 10.0)


def _past(x: float, values: tuple[float, ...]) -> list[float]:
    """The probe values past the edge value `x` of an exponent's grid `values`: above its largest,
    `PROBE_VALUES`; below a smallest above 0 (a coarse grid), 0 and a quarter and half of it."""
    if x == max(values):
        return [v for v in PROBE_VALUES if v > x]
    if x == min(values) and x > 0:
        return [0.0, x / 4, x / 2]
    return []


def probe_points(grid: pd.DataFrame, p: Plan) -> pd.DataFrame:
    """`aqm`, `exp`, `alpha`, `beta` of every point past an open edge: along each open exponent the values
    past the grid's range (`_past`), through the best point (both open: every combination)."""
    rows = []
    for r in edge_optima(grid, p).itertuples():
        edges = r.open_edges.split()
        if not edges:
            continue
        alphas = [r.alpha, *_past(r.alpha, p.grid_alpha)] if "α" in edges else [r.alpha]
        betas = [r.beta, *_past(r.beta, p.grid_beta)] if "β" in edges else [r.beta]
        rows += [{"aqm": r.aqm, "exp": r.exp, "alpha": a, "beta": b}
                 for a in alphas for b in betas if (a, b) != (r.alpha, r.beta)]
    return pd.DataFrame(rows, columns=["aqm", "exp", "alpha", "beta"])


def probe_table(grid: pd.DataFrame, probe: pd.DataFrame, p: Plan) -> pd.DataFrame:
    """Per edge optimum: its score, the best probe point past the edge and its score, and whether that point
    beats the optimum (`better`: True, False, or None within the seeds' noise)."""
    grid, out = with_score(grid), []
    probe = with_score(probe) if len(probe) and "score" not in probe else probe
    for r in edge_optima(grid, p).itertuples():
        if not r.open_edges:
            continue
        edge = _grid_point(grid[(grid["aqm"] == r.aqm) & (grid["exp"] == r.exp)], r.alpha, r.beta)
        mine = probe[(probe["aqm"] == r.aqm) & (probe["exp"] == r.exp)
                     & ~(np.isclose(probe["alpha"], r.alpha) & np.isclose(probe["beta"], r.beta))] if len(probe) else probe
        if not len(mine):
            continue
        means = mine.groupby(["alpha", "beta"])["score"].mean()
        a, b = means.idxmax()
        best = _grid_point(mine, a, b)
        out.append({"aqm": r.aqm, "exp": r.exp, "open": r.open_edges, "alpha": r.alpha, "beta": r.beta,
                    "score": edge.mean, "score_se": edge.se, "probe_points": len(means), "best_alpha": a,
                    "best_beta": b, "best_score": best.mean, "best_score_se": best.se,
                    "better": beaten_by_best(best, edge)})
    table = pd.DataFrame(out)
    if len(table):  # True/False/None as such (a column of bools alone would become numpy bools)
        table["better"] = pd.Series([o["better"] for o in out], dtype=object)
    return table


def _verdicts(table: pd.DataFrame) -> list[bool | None]:
    """The `better` column as True/False/None (a column of bools alone comes back as numpy bools, a column
    with a gap as NaN after a CSV round trip)."""
    return [None if v is None or (isinstance(v, float) and np.isnan(v)) else bool(v) for v in table["better"]]


def probe_section(table: pd.DataFrame) -> list[str]:
    """The report's paragraph and table on the probe."""
    if not len(table):
        return []
    verdicts = _verdicts(table)
    verdict = {True: "yes", False: "no", None: "within noise"}
    shown = pd.DataFrame({
        "AQM": table["aqm"], "exp": table["exp"], "open edge": table["open"],
        "edge optimum": [f"{SeedMean(s, e, 0)} (α {a:g}, β {b:g})" for s, e, a, b in
                         zip(table["score"], table["score_se"], table["alpha"], table["beta"])],
        "points past it": table["probe_points"],
        "best past it": [f"{SeedMean(s, e, 0)} (α {a:g}, β {b:g})" for s, e, a, b in
                         zip(table["best_score"], table["best_score_se"], table["best_alpha"], table["best_beta"])],
        "better by > 0.01?": [verdict[v] for v in verdicts],
    })
    counts = {k: sum(v is k for v in verdicts) for k in (True, False, None)}
    return [f"**Past the open edges** (`edge_probe.csv`, `white_edge_probe.py`): each edge optimum against the best "
            f"of the points past its edge along the open exponent(s) (up to {max(PROBE_VALUES):g}, the exponents' "
            "limit, or down to 0), same seeds. Better by more than 0.01 beyond 2 standard errors (the grid claims' margin): "
            f"{counts[True]} yes, {counts[False]} no, {counts[None]} within noise. The best of several noisy points "
            "leans towards yes; the grid claims above are judged on the grid alone.",
            "", frame_table(shown), ""]
