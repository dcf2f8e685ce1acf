"""`aqmlab repro bmre`'s claims on small made-up frames (no simulation): each case has a verdict known
in advance, so a wrong criterion, limit rule or noise test makes these fail."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from aqmlab.repro import bmre_claims, bmre_experiments, bmre_sensitivity, bmre_verdicts
from aqmlab.repro import bmre_scenarios as S
from aqmlab.repro.common import Claim, tally

SEEDS = tuple(range(1, 9))
PLAN = bmre_experiments.plan(False, seeds=len(SEEDS))
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


def by_id(df: pd.DataFrame, sens: pd.DataFrame | None = None) -> dict[str, Claim]:
    return {c.ident: c for c in bmre_claims.claims(df, PLAN, sens)}


NS = (5, 10, 20, 50, 100, 200, 350, 400, 500, 650, 800)


def tcp_share(bmre_curve: dict[int, object]) -> pd.DataFrame:
    fred = {n: 0.7 if n <= 150 else 0.3 for n in NS}
    drr = {n: 0.9 if n <= 200 else 0.1 for n in NS}
    return frame("E3", "tcp_share", {"bmre": bmre_curve, "fred": fred, "drr": drr, "red": {n: 0.2 for n in NS}})


def test_limit_rule_skips_the_small_n_dip_and_stops_at_the_first_failure() -> None:
    ok = lambda v: v >= 0.5  # noqa: E731
    s = pd.Series([0.34, 0.39, 0.58, 0.7, 0.44, 0.27, 0.62], index=[5, 10, 20, 400, 500, 650, 800])
    assert bmre_verdicts.limit_n(s, ok) == 400  # the dip below N = 20 does not end the walk; N = 500 does
    assert bmre_verdicts.last_n(s, ok) == 800  # the looser reading counts the isolated pass at 800
    assert bmre_verdicts.limit_n(s, ok, start=5) == 0  # the old rule (walk from the first N): 0
    assert bmre_verdicts.limit_n(s.drop(20).replace(0.7, 0.4), ok) == 0  # the first N >= 20 fails: no limit
    assert bmre_verdicts.DIP_N == 20


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
    def cl(drr: object) -> dict[str, Claim]:
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
    def cl(times: list[float]) -> Claim:
        return by_id(frame("E4", "cbr_ctl_s", {"bmre": {20: times}, "fred": {20: [np.nan] * 8},
                                               "drr": {20: [1.0] * 8}, "red": {20: [np.nan] * 8}}))["R5b"]

    assert cl([2.0] * 6 + [np.nan] * 2).holds is True
    c = cl([np.nan] * 7 + [2.0])
    assert c.holds is False and c.ours.startswith("1 of 8 seeds")
    # The criterion is the claim's 2 s (it was 3 s before an audit): 2.5 s in every seed fails, and the row
    # says how many seeds the old bound would have passed.
    late = cl([2.5] * 8)
    assert late.holds is False and late.ours.startswith("0 of 8 seeds") and "under which 8 of 8 seeds pass" in late.why


def test_fair_drop_claim_and_tally() -> None:
    s = frame("E1", "S", {"bmre": {100: 0.08, 350: 0.22}, "fred": {100: 0.09, 350: 0.28}})

    def sens(off100: float, off350: float) -> pd.DataFrame:
        d = frame("E1", "S", {"bmre": {100: off100, 350: off350}})
        return d[d["aqm"] == "bmre"].assign(variant=bmre_sensitivity.FAIR_DROP_OFF)

    cl = by_id(s, sens(0.2, 0.4))  # BMRE clearly fairer at both N; without Fair Drop worse than FRED
    assert cl["R2f"].holds is True
    assert by_id(s, sens(0.081, 0.221))["R2f"].holds is False  # Fair Drop off changes nothing
    assert "R2f" not in by_id(s)  # no variant run (--quick): no row
    assert tally(cl.values()) == f"{sum(c.holds is True for c in cl.values())} of {len(cl)} claims hold, " \
        f"{sum(c.holds is False for c in cl.values())} do not"


def test_bimodal_seeds_are_split_only_by_a_wide_gap() -> None:
    lo, hi = bmre_verdicts.split_seeds([0.22] + [0.68, 0.681, 0.682, 0.683, 0.684, 0.685, 0.686])
    assert list(lo) == [0.22] and len(hi) == 7
    assert bmre_verdicts.split_seeds(list(0.5 + 0.01 * JITTER)) is None
    assert bmre_verdicts.split_seeds([0.1, 0.1]) is None


@pytest.mark.parametrize(("seeds", "expected"), [(8, "aqmlab repro bmre --seeds 8 -q"), (2, "aqmlab repro bmre -q")])
def test_the_report_header_shows_the_command(seeds: int, expected: str) -> None:
    assert bmre_experiments.command_line(bmre_experiments.plan(False, quiet=True, seeds=seeds)) == expected


def test_r1c_max_p_lowers_reds_queue_but_not_freds() -> None:
    ns = (10, 50, 100, 350)
    base = frame("E1", "mean_queue_bytes", {"red": {n: 100e3 for n in ns}, "fred": {n: 100e3 for n in ns},
                                            "bmre": {n: 50e3 for n in ns}, "drr": {n: 150e3 for n in ns}}, noise=500.0)

    def maxp(red: float, fred: float) -> pd.DataFrame:
        d = frame("E1", "mean_queue_bytes", {"red": {n: red for n in ns}, "fred": {n: fred for n in ns}}, noise=500.0)
        return d[d["aqm"].isin(["red", "fred"])].assign(max_p=bmre_experiments.MAX_P_HIGH)

    cl = {c.ident: c for c in bmre_claims.claims(base, PLAN, None, maxp(80e3, 97e3))}
    assert cl["R1c"].holds is True  # RED −20 % at every N, FRED −3 %
    assert "RED ≥ 10 % and clearly at 4/4 N" in cl["R1c"].ours
    r1c = {c.ident: c for c in bmre_claims.claims(base, PLAN, None, maxp(80e3, 85e3))}["R1c"]
    assert r1c.holds is False  # FRED −15 %
    r1c = {c.ident: c for c in bmre_claims.claims(base, PLAN, None, maxp(95e3, 97e3))}["R1c"]
    assert r1c.holds is False  # RED −5 %
    assert "R1c" not in {c.ident for c in bmre_claims.claims(base, PLAN)}  # no max_p runs: no row


def test_r1d_reads_all_cases_as_the_queue_at_every_n() -> None:
    ns = (10, 100, 350)

    def cl(drr350: float) -> Claim:
        d = frame("E1", "mean_queue_bytes", {"bmre": {n: 50e3 for n in ns}, "fred": {n: 100e3 for n in ns},
                                             "drr": {10: 150e3, 100: 150e3, 350: drr350}, "red": {n: 100e3 for n in ns}},
                  noise=500.0)
        return by_id(d)["R1d"]

    assert cl(150e3).holds is True and cl(150e3).ours.startswith("queue clearly below FRED's and DRR's at 3/3 N")
    below = cl(40e3)
    assert below.holds is False and "N=350: DRR below" in below.ours
    assert cl(50e3).within_noise  # a tie with DRR at one N: cannot tell
    assert "post hoc" in below.why


def test_r4e_queue_per_flow_at_650() -> None:
    def cl(q: float) -> Claim:
        d = frame("E3", "tcp_share", {a: {20: 0.7, 650: 0.3} for a in S.AQMS})
        q = frame("E3", "mean_queue_bytes", {a: {20: 50e3, 650: q} for a in S.AQMS}, noise=300.0)
        return by_id(d.merge(q, on=["exp", "aqm", "n", "seed"]))["R4e"]

    assert cl(145e3).holds is True  # 0.22 packets per flow
    assert cl(145e3).ours.startswith("N=650: 0.223")
    assert cl(180e3).holds is False  # 0.28
    assert cl(162.5e3).within_noise  # 0.25 ± noise


def _internals(est_scale_tcp: float, est_scale_cbr: float) -> dict:
    t = np.arange(0.5, 20.01, 0.5)
    kinds = np.array(["tcp", "tcp", "udp-cbr"])
    ts = {"time_s": t}
    for i, (k, scale) in enumerate(zip(kinds, (est_scale_tcp, est_scale_tcp, est_scale_cbr))):
        good = np.full(len(t), 1e6 if k == "tcp" else 1.5e6)
        ts[f"flow{i}_goodput_bps"] = good
        ts[f"flow{i}_qdisc_rate_bps"] = good * scale
    r = {"ts": pd.DataFrame(ts), "kinds": kinds}
    return {"E4": r, "E3 N=100": r}


def test_r11b_rate_estimate_accuracy_from_the_internals_runs() -> None:
    df = frame("E4", "cov05_tcp", {"bmre": {20: 0.13}, "fred": {20: 0.4}, "drr": {20: 0.13}})
    good = {c.ident: c for c in bmre_claims.claims(df, PLAN, internals=_internals(1.05, 0.97))}["R11b"]
    assert good.holds is True and "TCP 5.0%, CBR 3.0%" in good.ours
    bad = {c.ident: c for c in bmre_claims.claims(df, PLAN, internals=_internals(1.2, 1.0))}["R11b"]
    assert bad.holds is False and "TCP +20.0%" in bad.note
    assert "R11b" not in {c.ident for c in bmre_claims.claims(df, PLAN)}


def test_r11c_cbr_share_in_e4_and_e3_from_20_to_300() -> None:
    def cl(e3_50: float, e3_10: float = 1.9) -> Claim:
        e3 = frame("E3", "cbr_share", {a: {10: e3_10, 50: e3_50, 100: 1.05, 650: 2.0} for a in S.AQMS}, noise=0.01)
        e4 = frame("E4", "cbr_share", {a: {20: 1.1} for a in S.AQMS}, noise=0.01)
        return by_id(pd.concat([e3, e4]))["R11c"]

    assert cl(1.1).holds is True  # N = 10 (the dip) and 650 (the full table) are outside the range
    assert cl(1.4).holds is False
    assert "E3 N=650" not in cl(1.1).ours and "E3 N=10:" not in cl(1.1).ours


def test_r11d_fair_drop_fairness_below_one_packet_per_flow() -> None:
    ns = (10, 100, 350, 650)

    def cl(s350: float) -> Claim:
        s = frame("E1", "S", {"bmre": {10: 0.3, 100: 0.2, 350: s350, 650: 0.05}})
        q = frame("E1", "mean_queue_bytes", {a: {10: 2e3, 100: 123e3, 350: 138e3, 650: 139e3} for a in S.AQMS},
                  noise=100.0)
        return by_id(s.merge(q, on=["exp", "aqm", "n", "seed"]))["R11d"]

    # N = 10 (0.2 packets, but Fair Drop cannot act) and 100 (1.23 packets per flow) are not judged.
    assert cl(0.05).holds is True and "N=100" not in cl(0.05).ours and "N=10 " not in cl(0.05).ours
    assert cl(0.225).holds is False


def test_r11e_bmre_supports_the_most_flows() -> None:
    def df(bmre_s350: float) -> pd.DataFrame:
        s = frame("E1", "S", {"bmre": {20: 0.05, 100: 0.05, 350: bmre_s350}, "fred": {20: 0.05, 100: 0.05, 350: 0.3},
                              "drr": {20: 0.01, 100: 0.01, 350: 0.3}, "red": {20: 0.2, 100: 0.2, 350: 0.3}})
        t = frame("E3", "tcp_share", {"bmre": {20: 0.6, 100: 0.8, 350: 0.7}, "fred": {20: 0.7, 100: 0.6, 350: 0.2},
                                      "drr": {20: 0.9, 100: 0.9, 350: 0.1}, "red": {20: 0.2, 100: 0.2, 350: 0.2}})
        return pd.concat([s, t])

    ok = by_id(df(0.09))["R11e"]
    assert ok.holds is True and "BMRE 350, RED 0, FRED 100, DRR 100" in ok.ours
    assert by_id(df(0.2))["R11e"].holds is False  # ties DRR and FRED at 100 in E1


def test_r6b_fair_drop_in_e5_above_180_flows() -> None:
    keys = ["exp", "aqm", "n", "seed"]
    df = frame("E5", "cov2_tcp", {"bmre": {180: 0.3, 300: 0.5}}, noise=0.01).merge(
        frame("E5", "mean_queue_bytes", {"bmre": {180: 125e3, 300: 139e3}}), on=keys)

    def sens(off300: float) -> pd.DataFrame:
        d = frame("E5", "cov2_tcp", {"bmre": {180: 0.35, 300: off300}}, noise=0.01).merge(
            frame("E5", "mean_queue_bytes", {"bmre": {180: 136e3, 300: 290e3}}), on=keys)
        return d[d["aqm"] == "bmre"].assign(variant=bmre_sensitivity.FAIR_DROP_OFF)

    assert by_id(df, sens(0.9))["R6b"].holds is True
    assert by_id(df, sens(0.6))["R6b"].holds is False  # clearly higher, but not 1.5×
    against = by_id(df, sens(0.4))["R6b"]
    assert against.holds is False
    # The note gives both queues and explains the smoother TCP without Fair Drop by the longer queue.
    assert "N=300: CoV(2 s) 0.50 / 0.40, queue 139 / 290 kB" in against.note, against.note
    assert "smoother without Fair Drop (N = 300), the queue is longer" in against.note
    assert "smoother without" not in by_id(df, sens(0.9))["R6b"].note
    assert "R6b" not in by_id(df)
