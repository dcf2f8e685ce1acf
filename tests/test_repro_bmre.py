"""`aqmlab repro bmre`'s claims on small made-up frames (no simulation): each case has a verdict known
in advance, so a wrong criterion, limit rule or noise test makes these fail."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from aqmlab.repro import bmre, bmre_scenarios as S
from aqmlab.repro.common import tally

SEEDS = tuple(range(1, 9))
PLAN = bmre.plan(False, seeds=len(SEEDS))
#: Deterministic per-seed jitter (sums to zero), so the seed mean is the value given.
JITTER = np.array([-3.5, -2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.5]) / 3.5


def frame(exp: str, col: str, curves: dict[str, dict[int, object]], noise: float = 0.001) -> pd.DataFrame:
    """Rows of `exp` with `col` per discipline, N and seed: a scalar value gets ±`noise` seed jitter,
    a list gives the seeds' values as they are. Disciplines not named get a constant 0.5."""
    rows = []
    ns = sorted({n for c in curves.values() for n in c})
    for aqm in S.AQMS:
        curve = curves.get(aqm, {n: 0.5 for n in ns})
        for n, v in curve.items():
            vals = list(v) if isinstance(v, (list, tuple)) else list(float(v) + noise * JITTER)
            for seed, x in zip(SEEDS, vals):
                rows.append({"exp": exp, "aqm": aqm, "n": n, "seed": seed, col: x})
    return pd.DataFrame(rows)


def by_id(df: pd.DataFrame, sens: pd.DataFrame | None = None) -> dict[str, bmre.Claim]:
    return {c.ident: c for c in bmre.claims(df, PLAN, sens)}


NS = (5, 10, 20, 50, 100, 200, 350, 400, 500, 650, 800)


def tcp_share(bmre_curve: dict[int, object]) -> pd.DataFrame:
    fred = {n: 0.7 if n <= 150 else 0.3 for n in NS}
    drr = {n: 0.9 if n <= 200 else 0.1 for n in NS}
    return frame("E3", "tcp_share", {"bmre": bmre_curve, "fred": fred, "drr": drr, "red": {n: 0.2 for n in NS}})


def test_limit_rule_skips_the_small_n_dip_and_stops_at_the_first_failure() -> None:
    ok = lambda v: v >= 0.5  # noqa: E731
    s = pd.Series([0.34, 0.39, 0.58, 0.7, 0.44, 0.27, 0.62], index=[5, 10, 20, 400, 500, 650, 800])
    assert bmre.limit_n(s, ok) == 400  # the dip below N = 20 does not end the walk; N = 500 does
    assert bmre.last_n(s, ok) == 800  # the looser reading counts the isolated pass at 800
    assert bmre.limit_n(s, ok, start=5) == 0  # the old rule (walk from the first N): 0
    assert bmre.limit_n(s.drop(20).replace(0.7, 0.4), ok) == 0  # the first N >= 20 fails: no limit
    assert bmre.DIP_N == 20


def test_r4a_reads_the_limit_after_the_dip_and_flags_the_bimodal_last_point() -> None:
    # The audit's case: the dip at 5–10, passes 20–400, fails 500 and 650, and 800 bimodal (7 seeds 0.68, 1 0.22).
    curve = {5: 0.342, 10: 0.39, 20: 0.58, 50: 0.73, 100: 0.89, 200: 0.85, 350: 0.71, 400: 0.66, 500: 0.44, 650: 0.27,
             800: [0.22] + [0.68] * 7}
    c = by_id(tcp_share(curve))["R4a"]
    assert c.holds is False and not c.within_noise
    assert c.ours.startswith("400 (every seed 400)")
    assert "largest passing N of the mean: 800" in c.ours
    assert "N=800 (7/8 pass)" in c.ours and "bimodal at N=800: 1 seed(s) 0.22, 7 seed(s) 0.68" in c.ours
    assert "starts at N = 20" in c.why
    # Passing on to 650 meets the bar (>= 450).
    curve.update({500: 0.6, 650: 0.55})
    assert by_id(tcp_share(curve))["R4a"].holds is True


def test_a_limit_whose_seeds_straddle_the_bar_is_within_noise() -> None:
    # Mean at 500 is 0.52 (passes: limit 500 >= 450), but half the seeds fail at 500 (their limit 400 < 450).
    curve = {n: 0.7 for n in NS if n <= 400} | {500: [0.45] * 4 + [0.59] * 4, 650: 0.2, 800: 0.2}
    c = by_id(tcp_share(curve))["R4a"]
    assert c.within_noise and c.holds is None and c.verdict == "within noise"
    assert c.ours.startswith("500 (per seed 400–500)")


def test_fairness_limits_r2a_and_r2b() -> None:
    bm = {5: 0.169, 10: 0.100009, 20: 0.04, 50: 0.013, 100: 0.079, 200: 0.093, 350: 0.225, 400: 0.265, 500: 0.33,
          650: 0.39, 800: 0.45}
    fred = {n: 0.05 if n <= 100 else 0.2 for n in NS}
    cl = by_id(frame("E1", "S", {"bmre": bm, "fred": fred}))
    assert cl["R2a"].holds is False and cl["R2a"].ours.startswith("200")  # was 0 under the old rule
    assert cl["R2b"].holds is True and cl["R2b"].ours.startswith("100")
    assert cl["R2e"].holds is False  # N=5: BMRE 0.169 vs FRED 0.05
    bm.update({200: 0.09, 350: 0.09, 400: 0.2})
    assert by_id(frame("E1", "S", {"bmre": bm, "fred": fred}))["R2a"].holds is True  # limit 350


def test_r10_is_decided_by_fairness_at_350_not_by_the_queue() -> None:
    ns = (100, 350, 650)

    def df(s350: object) -> pd.DataFrame:
        s = frame("E1", "S", {"bmre": {100: 0.05, 350: s350, 650: 0.4}})
        q = frame("E1", "mean_queue_bytes", {a: {n: 138e3 for n in ns} for a in S.AQMS}, noise=100.0)
        return s.merge(q, on=["exp", "aqm", "n", "seed"])

    assert by_id(df(0.225))["R10"].holds is False  # queue 138 kB < 140 kB, but S = 0.225
    assert by_id(df(0.05))["R10"].holds is True
    noisy = by_id(df([0.1 + 0.02 * j for j in JITTER]))["R10"]  # mean 0.1 ± 0.0087: cannot tell
    assert noisy.within_noise and noisy.holds is None
    assert "0.39 packets per flow" in by_id(df(0.225))["R10"].ours


def test_e4_smoothness_rows_use_the_seed_noise() -> None:
    def cl(drr: object) -> dict[str, bmre.Claim]:
        return by_id(frame("E4", "cov05_tcp", {"bmre": {20: 0.132}, "fred": {20: 0.389}, "drr": {20: drr},
                                               "red": {20: 0.5}}, noise=0.006))

    same = cl(0.135)  # the audit's numbers: DRR 0.135 vs BMRE 0.132, seed SE ≈ 0.002
    assert same["R5a"].holds is True
    assert same["R5c"].within_noise and same["R5c"].verdict == "within noise"
    assert cl(0.05)["R5c"].holds is True
    assert cl(0.25)["R5c"].holds is False
    assert by_id(frame("E4", "cov05_tcp", {"bmre": {20: 0.3}, "fred": {20: 0.389}, "drr": {20: 0.1}},
                       noise=0.006))["R5a"].holds is False  # clearly lower, but not half


def test_r5b_counts_the_seeds_that_control_the_cbr_flows() -> None:
    def cl(times: list[float]) -> bmre.Claim:
        return by_id(frame("E4", "cbr_ctl_s", {"bmre": {20: times}, "fred": {20: [np.nan] * 8},
                                               "drr": {20: [1.0] * 8}, "red": {20: [np.nan] * 8}}))["R5b"]

    assert cl([2.5] * 6 + [np.nan] * 2).holds is True
    c = cl([np.nan] * 7 + [2.0])
    assert c.holds is False and c.ours.startswith("1 of 8 seeds")


def test_fair_drop_claim_and_tally() -> None:
    s = frame("E1", "S", {"bmre": {100: 0.08, 350: 0.22}, "fred": {100: 0.09, 350: 0.28}})

    def sens(off100: float, off350: float) -> pd.DataFrame:
        d = frame("E1", "S", {"bmre": {100: off100, 350: off350}})
        return d[d["aqm"] == "bmre"].assign(variant=bmre.FAIR_DROP_OFF)

    cl = by_id(s, sens(0.2, 0.4))  # BMRE clearly fairer at both N; without Fair Drop worse than FRED
    assert cl["R2f"].holds is True
    assert by_id(s, sens(0.081, 0.221))["R2f"].holds is False  # Fair Drop off changes nothing
    assert "R2f" not in by_id(s)  # no variant run (--quick): no row
    assert tally(cl.values()) == f"{sum(c.holds is True for c in cl.values())} of {len(cl)} claims hold, " \
        f"{sum(c.holds is False for c in cl.values())} do not"


def test_bimodal_seeds_are_split_only_by_a_wide_gap() -> None:
    lo, hi = bmre.split_seeds([0.22] + [0.68, 0.681, 0.682, 0.683, 0.684, 0.685, 0.686])
    assert list(lo) == [0.22] and len(hi) == 7
    assert bmre.split_seeds(list(0.5 + 0.01 * JITTER)) is None
    assert bmre.split_seeds([0.1, 0.1]) is None


@pytest.mark.parametrize(("seeds", "expected"), [(8, "aqmlab repro bmre --seeds 8 -q"), (2, "aqmlab repro bmre -q")])
def test_the_report_header_shows_the_command(seeds: int, expected: str) -> None:
    assert bmre.command_line(bmre.plan(False, quiet=True, seeds=seeds)) == expected
