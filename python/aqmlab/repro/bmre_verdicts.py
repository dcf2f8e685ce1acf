"""How the BMRE reproduction reads its runs for a verdict: seed means by N, "ok up to N" limits from the
seed-mean curve and from each seed's own (with the small-N dip left out), bimodal seeds, verdicts of limits
and of 2-SE comparisons, orderings between schemes and rank correlation.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pandas as pd

from . import bmre_scenarios as S
from .common import SeedMean, clearly_greater, fmt


#: Below this N lies the small-N dip the thesis reports and explains itself (§4.2.2: "BMRE's performance
#: degradation when the number of flows is about 10 is due to TCP's retransmit timeouts ... can be solved by
#: setting vmax_q to a higher value when the number of flows are smaller than 20"). The "up to N" limits
#: (R2a/b, R4a/b) walk upward from here; the dip itself is claim R4d.
DIP_N = 20


def mean_by_n(df: pd.DataFrame, exp: str, aqm: str, col: str) -> pd.Series:
    """`col` averaged over seeds, indexed by N."""
    d = df[(df["exp"] == exp) & (df["aqm"] == aqm)]
    if col not in d:
        return pd.Series(dtype=float)
    return d.groupby("n")[col].mean().sort_index()


def seed_table(df: pd.DataFrame, exp: str, aqm: str, col: str) -> pd.DataFrame:
    """`col` per N (rows) and seed (columns)."""
    d = df[(df["exp"] == exp) & (df["aqm"] == aqm)]
    return d.pivot_table(index="n", columns="seed", values=col, aggfunc="mean").sort_index()


def seed_mean(df: pd.DataFrame, exp: str, aqm: str, col: str, n: int | None = None) -> SeedMean:
    """`col` over seeds (at N = `n` if given) as mean ± standard error."""
    d = df[(df["exp"] == exp) & (df["aqm"] == aqm)]
    if n is not None:
        d = d[d["n"] == n]
    return SeedMean.of(d[col].dropna())


def limit_n(series: pd.Series, ok, start: int = DIP_N) -> int:
    """The limit of "ok up to N": the largest N of the contiguous run of passing points that begins at
    the first N >= `start` of the sweep (0 if that point fails). Points below `start` (the small-N dip,
    `DIP_N`) are not part of the walk."""
    last = 0
    for n, v in series.items():
        if n < start:
            continue
        if not ok(v):
            break
        last = int(n)
    return last


def last_n(series: pd.Series, ok) -> int:
    """The largest N of the sweep at which `ok(value)` holds (0 if none): shown beside `limit_n`'s to
    show passing points beyond the first failure."""
    good = [int(n) for n, v in series.items() if ok(v)]
    return max(good, default=0)


def split_seeds(values) -> tuple[np.ndarray, np.ndarray] | None:
    """The seeds' values split in two groups when they are bimodal: the widest gap between sorted values
    is more than 4× the larger within-group standard deviation and more than a quarter of the range
    (one seed far from seven tightly grouped ones counts). None otherwise or with fewer than 3 values."""
    v = np.sort(np.asarray([x for x in values if not math.isnan(x)], dtype=float))
    if len(v) < 3 or v[-1] == v[0]:
        return None
    gaps = np.diff(v)
    k = int(np.argmax(gaps))
    lo, hi = v[: k + 1], v[k + 1:]
    spread = max(lo.std(ddof=1) if len(lo) > 1 else 0.0, hi.std(ddof=1) if len(hi) > 1 else 0.0)
    if gaps[k] > 4 * spread and gaps[k] > 0.25 * (v[-1] - v[0]):
        return lo, hi
    return None


@dataclasses.dataclass
class LimitReading:
    """"ok up to N" read from the seed-mean curve and from each seed's own curve."""

    limit: int
    per_seed: dict[Any, int]
    last: int
    #: (N, seeds passing, seeds) where the seeds disagree on pass/fail.
    disagree: list[tuple[int, int, int]]
    #: (N, low group, high group) where the seeds disagree and their values are bimodal.
    splits: list[tuple[int, np.ndarray, np.ndarray]]

    def describe(self) -> str:
        lims = list(self.per_seed.values())
        text = f"{self.limit}"
        if len(lims) > 1:
            text += f" (per seed {min(lims)}–{max(lims)})" if min(lims) != max(lims) else f" (every seed {lims[0]})"
        text += f"; largest passing N of the mean: {self.last}"
        if self.disagree:
            text += "; seeds disagree at " + ", ".join(f"N={n} ({k}/{m} pass)" for n, k, m in self.disagree)
        for n, lo, hi in self.splits:
            text += (f"; bimodal at N={n}: {len(lo)} seed(s) {fmt(float(lo.mean()))}, {len(hi)} seed(s) "
                     f"{fmt(float(hi.mean()))}")
        return text


def read_limit(tab: pd.DataFrame, ok, start: int = DIP_N) -> LimitReading:
    """`limit_n` of the seed-mean curve and of every seed's curve of a per-N × per-seed table."""
    mean = tab.mean(axis=1)
    per_seed = {s: limit_n(tab[s].dropna(), ok, start) for s in tab.columns}
    disagree, splits = [], []
    for n, row in tab.iterrows():
        vals = row.dropna().to_numpy()
        k = sum(bool(ok(v)) for v in vals)
        if 0 < k < len(vals):
            disagree.append((int(n), k, len(vals)))
            sp = split_seeds(vals)
            if sp is not None:
                splits.append((int(n), *sp))
    return LimitReading(limit_n(mean, ok, start), per_seed, last_n(mean, ok), disagree, splits)


def limit_verdict(readings: list[tuple[LimitReading, Any]]) -> tuple[bool | None, bool]:
    """(holds, within_noise) for criteria `crit(limit)` on several readings: the seed-mean limits decide,
    unless some reading's per-seed limits fall on both sides of its criterion (then within noise)."""
    for r, crit in readings:
        per = [bool(crit(v)) for v in r.per_seed.values()]
        if len(per) > 1 and any(per) and not all(per):
            return None, True
    return all(bool(crit(r.limit)) for r, crit in readings), False


def noise_verdict(results: list[bool | None]) -> tuple[bool | None, bool]:
    """(holds, within_noise) of a conjunction of `clearly_greater` results: False if any is clearly
    false, True if all are clearly true, otherwise within noise."""
    if any(r is False for r in results):
        return False, False
    if all(r is True for r in results):
        return True, False
    return None, True


def orderings(df: pd.DataFrame, exp: str, col: str,
              pairs: list[tuple[str, str]]) -> dict[int, list[tuple[str, bool | None]]]:
    """Per N: for each (higher, lower) pair, whether `col` of `higher` is clearly greater than of `lower`."""
    out: dict[int, list[tuple[str, bool | None]]] = {}
    ns = sorted(set(df[(df["exp"] == exp)]["n"]))
    for n in ns:
        out[int(n)] = [(f"{lo} < {hi}", clearly_greater(seed_mean(df, exp, hi, col, n), seed_mean(df, exp, lo, col, n)))
                       for hi, lo in pairs]
    return out


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties), without scipy."""
    rx = pd.Series(x).rank().to_numpy()
    ry = pd.Series(y).rank().to_numpy()
    if len(rx) < 2 or rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def has_data(df: pd.DataFrame, exp: str, aqms=S.AQMS, col: str | None = None) -> bool:
    d = df[df["exp"] == exp]
    return bool(len(d)) and set(aqms) <= set(d["aqm"]) and (col is None or (col in d and d[col].notna().any()))
