"""Cross-check against ns-3 (issue #2, validation 3): the same dumbbells, settings matched point
by point (`aqmlab.ns3ref` lists them), aggregate goodput within 3 %, drop rates, queue lengths,
timeouts and per-flow shares close. The ns-3 program is built from `validation/ns3` (the first run
installs the `ns3` wheel, about two minutes).

Two sets of scenarios: the named ones (`ns3ref.SCENARIOS`, 60 s) and the grid (`ns3ref.GRID`, a
16-point 2^(7-3) design over queue, SACK, delayed ACK, IW, flow count, RTTs and recovery, 30 s).
Each scenario is run (3 seeds, both simulators) the first time a test asks for it, so a subset runs
on its own::

    pytest tests/test_ns3_crosscheck.py -k "not grid"          # named scenarios only (~1 min)
    pytest tests/test_ns3_crosscheck.py -k g07                 # one grid point (~15 s)
    pytest tests/test_ns3_crosscheck.py -k "grid and red"      # the RED half of the grid
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
from collections import Counter
from itertools import combinations

import aqmlab
import pandas as pd
import pytest
from aqmlab import ns3ref


@pytest.fixture(scope="module")
def ns3_binary():
    return ns3ref.build()


@pytest.fixture(scope="module")
def compared(ns3_binary):
    """`compared(scenario)`: the scenario's comparison, run on first use and kept for the module."""
    cache: dict[str, ns3ref.Comparison] = {}

    def get(s: ns3ref.MatchedScenario) -> ns3ref.Comparison:
        if s.name not in cache:
            cache[s.name] = ns3ref.compare(ns3_binary, s)
            print("\n" + ns3ref.markdown_table([cache[s.name]]))
        return cache[s.name]

    return get


def _by_name(names, marks: dict[str, pytest.MarkDecorator]):
    return [pytest.param(n, marks=marks[n]) if n in marks else n for n in names]


# ---------------------------------------------------------------- the design itself (no ns-3)


def test_grid_is_a_strength_3_orthogonal_array() -> None:
    levels = ns3ref.grid_levels()
    assert len(levels) == 16 and len({tuple(r.values()) for r in levels}) == 16
    for trio in combinations(ns3ref.GRID_FACTORS, 3):
        counts = Counter(tuple(r[f] for f in trio) for r in levels)
        assert len(counts) == 8 and set(counts.values()) == {2}, trio


def test_grid_renders_each_factor_on_both_sides() -> None:
    s = ns3ref.GRID["g02_fifo_sack_ack1_iw2_50f_unequal_classic"]
    args, flows = s.ns3_args(), s.aqmlab_scenario()["flows"]
    assert {"--queue=fifo", "--sack=true", "--delAckCount=1", "--initCwnd=2", "--nFlows=50",
            "--recovery=classic", "--limitedTransmit=false"} <= set(args)
    assert len(flows) == 50 and flows[0]["variant"] == "sack" and flows[0]["delayed_ack"]["count"] == 1
    assert flows[0]["initial_window"] == 2
    delays = next(a for a in args if a.startswith("--accessDelays=")).split("=")[1].split(",")
    assert [float(d) for d in delays] == [float(f["access_delay"].removesuffix("ms")) for f in flows]
    assert (delays[0], delays[-1]) == ("1", "19")
    prr = ns3ref.GRID["g15_red_sack_ack2_iw10_50f_unequal_ns3"]
    assert {"--recovery=prr", "--limitedTransmit=true"} <= set(prr.ns3_args())
    assert prr.aqmlab_scenario()["flows"][0]["recovery"] == "prr"


def test_reno_has_no_ns3_counterpart() -> None:
    s = ns3ref.MatchedScenario("reno", "red", sack=False, reno=True)
    assert s.aqmlab_scenario()["flows"][0]["variant"] == "reno"
    with pytest.raises(ValueError, match="ns-3 3.44 has no Reno fast recovery"):
        s.ns3_args()


def test_ns3_default_profile_is_ns3s_defaults(ns3_binary) -> None:
    """`NS3_DEFAULT_TCP_ARGS` (the ns-3 side of `profile = "ns3"`) states ns-3's own defaults."""
    attrs = {}
    for tid in ["ns3::TcpSocket", "ns3::TcpSocketBase", "ns3::TcpL4Protocol", "ns3::RttEstimator"]:
        out = subprocess.run([str(ns3_binary), f"--PrintAttributes={tid}"], capture_output=True, text=True,
                             check=True).stdout
        attrs.update(re.findall(r"--ns3::\w+::(\w+)=\[([^\]]*)\]", out))
    ms = lambda v: f"{float(v.strip('+ns')) / 1e6:g}"  # noqa: E731  "+2e+08ns" -> "200"
    expected = {
        "tcp": attrs["SocketType"].removeprefix("ns3::Tcp"), "recovery": {"ns3::TcpPrrRecovery": "prr"}.get(
            attrs["RecoveryType"]), "mss": attrs["SegmentSize"], "delAckCount": attrs["DelAckCount"],
        "delAckTimeout": ms(attrs["DelAckTimeout"]), "initCwnd": attrs["InitialCwnd"],
        "initSsthresh": attrs["InitialSlowStartThreshold"], "minRto": ms(attrs["MinRto"]),
        "connTimeout": ms(attrs["ConnTimeout"]), "rttInitial": ms(attrs["InitialEstimation"]),
        "clockGranularity": ms(attrs["ClockGranularity"]), "sack": attrs["Sack"], "timestamps": attrs["Timestamp"],
        "windowScaling": attrs["WindowScaling"], "limitedTransmit": attrs["LimitedTransmit"],
        "dupAckThresh": attrs["ReTxThreshold"], "sndBuf": attrs["SndBufSize"], "rcvBuf": attrs["RcvBufSize"],
    }
    stated = dict(a.removeprefix("--").split("=", 1) for a in ns3ref.NS3_DEFAULT_TCP_ARGS)
    assert stated == expected


# ---------------------------------------------------------------- named scenarios

NAMED = list(ns3ref.SCENARIOS)


@pytest.mark.parametrize("name", NAMED)
def test_aggregate_goodput_within_3_percent(compared, name: str) -> None:
    c = compared(ns3ref.SCENARIOS[name])
    assert c.aqmlab["tcp_goodput_bps"] == pytest.approx(c.ns3["tcp_goodput_bps"], rel=0.03)
    if c.ns3["udp_goodput_bps"]:
        assert c.aqmlab["udp_goodput_bps"] == pytest.approx(c.ns3["udp_goodput_bps"], rel=0.03)


@pytest.mark.parametrize("name", NAMED)
def test_drop_rate_close(compared, name: str) -> None:
    c = compared(ns3ref.SCENARIOS[name])
    assert c.aqmlab["drop_rate"] == pytest.approx(c.ns3["drop_rate"], rel=0.25)


@pytest.mark.parametrize("name", NAMED)
def test_mean_queue_close(compared, name: str) -> None:
    c = compared(ns3ref.SCENARIOS[name])
    assert c.aqmlab["mean_queue_pkts"] == pytest.approx(c.ns3["mean_queue_pkts"], rel=0.25)


@pytest.mark.parametrize("name", NAMED)
def test_fairness_close(compared, name: str) -> None:
    c = compared(ns3ref.SCENARIOS[name])
    assert c.aqmlab["jain_tcp"] == pytest.approx(c.ns3["jain_tcp"], abs=0.1)


# red_10flows: before issue #10's fixes aqmlab counted 61 RTO expiries per run to ns-3's 17, because
# its SACK sender sent nothing on the first duplicate ACKs; after them 28.7. Counting a cumulative
# ACK that SACKs new data as a duplicate ACK (RFC 6675 §2, as ns-3 does) brought it to 21.7, and
# halving ns-3's pipe rather than FlightSize (`ssthresh_from_pipe`) to 20.0 : 17.0; the same change
# brought codel_10flows from 24 : 18 to 17.7 : 18 and pie_10flows from 19.3 : 13 to 12.3 : 13, so
# no mark remains (docs/validation.md).
NAMED_TIMEOUT_MARKS: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize("name", _by_name(NAMED, NAMED_TIMEOUT_MARKS))
def test_timeouts_counted_alike(compared, name: str) -> None:
    """RTO expiries after the warm-up, backoffs included, on both sides (`ns3ref.timeouts_agree`)."""
    c = compared(ns3ref.SCENARIOS[name])
    assert ns3ref.timeouts_agree(c.aqmlab["timeouts"], c.ns3["timeouts"]), (c.aqmlab["timeouts"], c.ns3["timeouts"])


@pytest.mark.parametrize("name", [n for n, s in ns3ref.SCENARIOS.items() if s.queue == "red"])
def test_per_flow_shares_under_red(compared, name: str) -> None:
    c = compared(ns3ref.SCENARIOS[name])
    assert c.max_share_difference() <= 0.05


@pytest.mark.parametrize("name", ["fq_codel_10flows", "fq_pie_10flows"])
def test_flow_queueing_gives_unequal_rtts_equal_shares_in_both(compared, name: str) -> None:
    """FQ-CoDel's and FQ-PIE's byte round robin evens out RTTs of 44 to 80 ms in both simulators,
    flow by flow (fq_pie_10flows, seeds 1-3: Jain 0.9998 : 0.9994, largest share difference 0.003)."""
    c = compared(ns3ref.SCENARIOS[name])
    assert c.aqmlab["jain_tcp"] > 0.99 and c.ns3["jain_tcp"] > 0.99
    assert c.max_share_difference() <= 0.05


def test_unequal_rtts_favour_short_flows_in_both(compared) -> None:
    c = compared(ns3ref.SCENARIOS["fifo_unequal_rtt"])
    ours, theirs = pd.Series(c.aqmlab["per_flow_goodput_bps"]), pd.Series(c.ns3["per_flow_goodput_bps"])
    spearman = ours.rank().corr(theirs.rank())  # Pearson on ranks; pandas' "spearman" needs scipy
    assert spearman > 0.7


def test_issue10_newcomer_dumbbell_agrees_with_ns3(compared) -> None:
    """Issue #10's report (`ns3ref.NEWCOMER`): before the FlightSize fix aqmlab's goodput fell to
    6.4 Mb/s with 10-12 % drops while ns-3 kept 9.7 Mb/s and 1.9 %."""
    c = compared(ns3ref.NEWCOMER)
    assert c.aqmlab["tcp_goodput_bps"] == pytest.approx(c.ns3["tcp_goodput_bps"], rel=0.03)
    assert c.aqmlab["drop_rate"] == pytest.approx(c.ns3["drop_rate"], rel=0.25)


# ---------------------------------------------------------------- Adaptive RED
# ns-3 ARED=true against aqmlab's adaptive = true (ns3 adaptation) on the RED dumbbell
# (`ns3ref.ARED_SCENARIOS`, docs/ared.md). The issue's criteria for goodput, drops, mean queue,
# timeouts and shares; for the adaptation, fixed before the first run: the automatic settings equal
# ns-3's, and the mean max_p after the warm-up within 25 % (the drop rate's band: in the linear
# region the early-drop rate is proportional to max_p). The final max_p is one sample of a
# random walk and is reported, not asserted.

ARED = list(ns3ref.ARED_SCENARIOS)
ARED_GAPS: dict[tuple[str, str], str] = {
    # Noise, not a difference (as g13's below): over seeds 1-10 both count 15.3 expiries per run.
    ("ared_10flows", "timeouts"): "RTO expiries 16.0 : 11.7 per run over seeds 1-3 (4.3 apart where 3.5 is allowed), "
                                  "15.3 : 15.3 over seeds 1-10",
}


def _ared_params():
    for name in ARED:
        for metric in ("goodput", "drops", "mean_queue", "timeouts", "shares", "max_p"):
            gap = ARED_GAPS.get((name, metric))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            yield pytest.param(name, metric, marks=marks, id=f"{name}-{metric}")


@pytest.mark.parametrize(("name", "metric"), list(_ared_params()))
def test_ared_agrees_with_ns3(compared, name: str, metric: str) -> None:
    c = compared(ns3ref.ARED_SCENARIOS[name])
    if metric == "shares":
        assert c.max_share_difference() <= 0.05
    elif metric == "max_p":
        assert c.aqmlab["mean_max_p"] == pytest.approx(c.ns3["mean_max_p"], rel=0.25)
    else:
        _assert_agrees(metric, c.aqmlab, c.ns3)


@pytest.mark.parametrize("name", ARED)
def test_ared_automatic_settings_are_ns3s(compared, name: str) -> None:
    """min_th = max(5, 5 ms · C / 2) = 5, max_th = 15, w = 1 - exp(-1/C) with C = 833.3 packets/s."""
    c = compared(ns3ref.ARED_SCENARIOS[name])
    for key in ("min_th", "max_th", "weight"):
        assert c.aqmlab[key] == pytest.approx(c.ns3[key], rel=1e-9), key
    assert (c.aqmlab["min_th"], c.aqmlab["max_th"]) == (5.0, 15.0)


def test_ared_scenarios_render_ared_on_both_sides() -> None:
    s = ns3ref.ARED_SCENARIOS["ared_10to50flows"]
    args, sc = s.ns3_args(), s.aqmlab_scenario()
    assert {"--redAred=true", "--redGentle=true"} <= set(args) and "--redGentle=false" not in args
    assert sc["queue"]["adaptive"] is True and "min_th" not in sc["queue"] and "weight" not in sc["queue"]
    starts = s.start_times()
    assert all(t < 1.0 for t in starts[:10]) and all(30.0 <= t < 31.0 for t in starts[10:])


# ---------------------------------------------------------------- Nonlinear RED
# ns-3 NLRED=true against aqmlab's nonlinear = true (`ns3ref.NLRED_SCENARIOS`): the issue's
# criteria, as for RED and ARED.

NLRED = list(ns3ref.NLRED_SCENARIOS)


@pytest.mark.parametrize("metric", ["goodput", "drops", "mean_queue", "timeouts", "shares"])
@pytest.mark.parametrize("name", NLRED)
def test_nonlinear_red_agrees_with_ns3(compared, name: str, metric: str) -> None:
    c = compared(ns3ref.NLRED_SCENARIOS[name])
    _assert_comparison_agrees(metric, c)


def test_nonlinear_red_renders_on_both_sides() -> None:
    s = ns3ref.NLRED_SCENARIOS["nlred_10flows"]
    assert "--redNonlinear=true" in s.ns3_args() and s.aqmlab_scenario()["queue"]["nonlinear"] is True
    plain = ns3ref.SCENARIOS["red_10flows"]
    assert not any(a.startswith("--redNonlinear") for a in plain.ns3_args())
    assert "nonlinear" not in plain.aqmlab_scenario()["queue"]


# ---------------------------------------------------------------- time-varying bottleneck rate
# `ns3ref.RATE_SCENARIOS`: 10 Mb/s, 4 Mb/s from 25 s, 10 Mb/s again from 45 s, both directions
# (aqmlab `rate_schedule`, ns-3 `--rateChanges`). The named scenarios' criteria (goodput 3 %, drops
# 25 %, mean queue 25 %), and, fixed before the first run, each phase's TCP goodput within 3 % too.
# First run (seeds 1-3, aqmlab / ns-3): goodput 0.999 (FIFO), 1.001 (RED), 1.005 (CoDel); drop rate
# 0.974, 0.937, 0.938; mean queue 0.991, 0.995, 0.968; per phase (10, 4, 10 Mb/s) 0.998-1.011.

RATE = list(ns3ref.RATE_SCENARIOS)


def test_rate_schedule_renders_on_both_sides() -> None:
    s = ns3ref.RATE_SCENARIOS["red_10flows_rate_step"]
    bottleneck = s.aqmlab_scenario()["topology"]["bottleneck"]
    assert bottleneck["rate"] == "10000000.0bps"
    assert bottleneck["rate_schedule"] == [{"at": "25.0s", "rate": "4000000.0bps"},
                                           {"at": "45.0s", "rate": "10000000.0bps"}]
    args = [a for a in s.ns3_args() if a.startswith("--rateChanges=")]
    assert len(args) == 1
    pairs = [p.split(":") for p in args[0].removeprefix("--rateChanges=").split(",")]
    ours = [(float(e["at"].removesuffix("s")), float(e["rate"].removesuffix("bps"))) for e in bottleneck["rate_schedule"]]
    assert [(float(t), float(r.removesuffix("bps"))) for t, r in pairs] == ours == list(s.rate_changes)
    assert "--bottleneckRate=10000000bps" in s.ns3_args()
    assert s.phases() == [(10.0, 25.0, 10e6), (25.0, 45.0, 4e6), (45.0, 60.0, 10e6)]


def test_no_rate_schedule_renders_as_before() -> None:
    s = ns3ref.SCENARIOS["red_10flows"]
    assert "rate_schedule" not in s.aqmlab_scenario()["topology"]["bottleneck"]
    assert not any(a.startswith("--rateChanges") for a in s.ns3_args())


def test_rate_schedule_outage_has_no_ns3_counterpart() -> None:
    s = ns3ref.MatchedScenario("outage", "fifo", rate_changes=((20.0, 0.0), (21.0, 10e6)))
    assert s.aqmlab_scenario()["topology"]["bottleneck"]["rate_schedule"][0]["rate"] == "0.0bps"
    with pytest.raises(ValueError, match="link outage"):
        s.ns3_args()
    with pytest.raises(ValueError, match="strictly increasing"):
        ns3ref.MatchedScenario("unordered", "fifo", rate_changes=((20.0, 4e6), (20.0, 10e6)))


@pytest.mark.parametrize("bad", ["20", "x:4Mbps", "20:4Mbpz", "20:0bps", "40:4Mbps,20:10Mbps", "20:4Mbps,,30:1Mbps",
                                 "100:4Mbps"])
def test_ns3_rate_changes_rejects_bad_input(ns3_binary, bad: str) -> None:
    proc = subprocess.run([str(ns3_binary), f"--rateChanges={bad}", "--nFlows=1", "--duration=60"],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and f"error: --rateChanges={bad}: " in proc.stderr, proc.stderr[-500:]


@pytest.mark.parametrize("metric", ["goodput", "drops", "mean_queue"])
@pytest.mark.parametrize("name", RATE)
def test_rate_step_agrees_with_ns3(compared, name: str, metric: str) -> None:
    c = compared(ns3ref.RATE_SCENARIOS[name])
    _assert_agrees(metric, c.aqmlab, c.ns3)


@pytest.mark.parametrize("name", RATE)
def test_rate_step_goodput_per_phase_within_3_percent(compared, name: str) -> None:
    c = compared(ns3ref.RATE_SCENARIOS[name])
    phases = sorted(k for k in c.ns3 if k.startswith("phase"))
    assert len(phases) == 3 and sorted(k for k in c.aqmlab if k.startswith("phase")) == phases
    got = {k: (c.aqmlab[k], c.ns3[k]) for k in phases}
    assert all(a == pytest.approx(n, rel=0.03) for a, n in got.values()), got


# ---------------------------------------------------------------- COBALT and FQ-COBALT
# `ns3ref.COBALT_SCENARIOS`: ns-3's CobaltQueueDisc and FqCobaltQueueDisc at their defaults (but for a
# 1000-packet buffer) against aqmlab's `cobalt` / `fq_cobalt` with `variant = "ns3"`, 10 and 50 flows
# (docs/cobalt.md). The named scenarios' criteria: goodput 3 %, drop rate 25 %, mean queue 25 %,
# timeouts alike, Jain within 0.1; under FQ-COBALT each flow's share within 0.05, as FQ-CoDel's.

COBALT = list(ns3ref.COBALT_SCENARIOS)
# Where aqmlab and ns-3 still differ, each measured (aqmlab : ns-3). Not noise: over seeds 1-10
# cobalt_10flows gives 17.9 : 11.7 expiries per run, aqmlab above ns-3 in 9 of 10 seeds, and each of
# fq_cobalt_50flows' seeds 1-3 is 415-442 : 663-673. Everything else agrees (goodput 0.999-1.002,
# drop rate 0.97-0.99, mean queue 0.99-1.01, retransmissions 0.97-1.02), BLUE is idle after the
# warm-up in both (dumbbell.cc samples ns-3's p_drop: 0 in every sample; aqmlab: no BLUE drop), and
# seed 1 of fq_cobalt_50flows drops the same 4,639 packets in both. Per flow (fq_cobalt_50flows, seed
# 1) retransmissions agree, but ns-3's 72-80 ms flows take 12-13 expiries each where aqmlab's take 3;
# FQ-CoDel on the same 50-flow dumbbell shows the same direction, less (147 : 181, 0.82). So the
# difference is in how the two TCPs recover from COBALT's drop pattern, not found yet (docs/cobalt.md).
# FQ-COBALT with ns-3's TCP defaults once failed fairness (Jain 0.861 : 0.998) and timeouts (58 : 22.3):
# BLUE's p_drop stayed high after slow start and starved one or two flows per seed. The cause was
# the link, not COBALT: behind ns-3's device queue (`tx_ring = 1`) the wire going idle polled the
# discipline once more each idle period (issue #41; docs/validation.md, "Held-out cases"); both
# criteria hold since that poll went. Which of the two things an empty dequeue does there (FQ's
# new/old list bookkeeping, BLUE's decrement) starved the flows is not traced.
COBALT_GAPS: dict[tuple[str, str], str] = {
    ("cobalt_10flows", "timeouts"): "RTO expiries 17.3 : 10.7 per run over seeds 1-3, 17.9 : 11.7 over seeds 1-10; "
                                    "drops, retransmissions and goodput agree within 3.5 %",
    ("fq_cobalt_50flows", "timeouts"): "RTO expiries 430 : 666 per run over seeds 1-3 (0.65); ns-3's long-RTT flows time "
                                       "out 4x as often with the same retransmissions; FQ-CoDel: 147 : 181",
    ("cobalt_10flows_ns3_profile", "timeouts"): "RTO expiries 7.0 : 15.0 per run over seeds 1-3 (ns-3's TCP defaults); "
                                                "goodput 1.003, drops 0.98, mean queue 0.96",
}


def _cobalt_params():
    for name, s in ns3ref.COBALT_SCENARIOS.items():
        for metric in ("goodput", "drops", "mean_queue", "timeouts", "fairness",
                       *(["shares"] if s.queue == "fq_cobalt" else [])):
            gap = COBALT_GAPS.get((name, metric))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            yield pytest.param(name, metric, marks=marks, id=f"{name}-{metric}")


def test_cobalt_scenarios_render_cobalt_on_both_sides() -> None:
    for name, s in ns3ref.COBALT_SCENARIOS.items():
        q = s.aqmlab_scenario()["queue"]
        assert (q["kind"], q["variant"], q["limit"]) == (s.queue, "ns3", 1000), name
        assert {f"--queue={s.queue}", "--queueLimit=1000"} <= set(s.ns3_args()), name
    assert ns3ref.COBALT_SCENARIOS["fq_cobalt_10flows"].aqmlab_scenario()["queue"]["quantum"] == "1502B"


@pytest.mark.parametrize(("name", "metric"), list(_cobalt_params()))
def test_cobalt_agrees_with_ns3(compared, name: str, metric: str) -> None:
    c = compared(ns3ref.COBALT_SCENARIOS[name])
    _assert_comparison_agrees(metric, c)


# ---------------------------------------------------------------- faster links, longer paths
# `ns3ref.FAST_SCENARIOS`: every other matched scenario runs at 10 Mb/s and 20 ms; these check that
# the agreement holds at 100 Mb/s with a 100 ms RTT and at 300 Mb/s with 50 flows (RED scaled to the
# rate). The named scenarios' criteria, with RED's per-flow shares within 0.05.


def test_fast_scenarios_scale_red_and_the_links_together() -> None:
    s = ns3ref.FAST_SCENARIOS["red_100mbps_100ms_10flows"]
    q = s.aqmlab_scenario()["queue"]
    assert (q["min_th"], q["max_th"], q["limit"]) == (50, 150, 1000)
    assert q["weight"] == 0.000632456  # 0.002 / sqrt(10) to the 6 digits ns-3 is given
    assert {"--queueLimit=1000", "--accessRate=1000000000bps", "--redQW=0.000632456"} <= set(s.ns3_args())


@pytest.mark.parametrize("name", list(ns3ref.FAST_SCENARIOS))
@pytest.mark.parametrize("metric", ["goodput", "drops", "timeouts", "fairness", "mean_queue", "shares"])
def test_fast_links_agree_with_ns3(compared, name: str, metric: str) -> None:
    c = compared(ns3ref.FAST_SCENARIOS[name])
    _assert_comparison_agrees(metric, c)


# ---------------------------------------------------------------- issue #41's held-out cases
# `ns3ref.HELD_OUT_SCENARIOS`: dumbbells the project had not seen, at ns-3's own TCP defaults except
# where stated, on which aqmlab had parted from ns-3 (the first flow starving after its slow-start
# overshoot; goodput above the line rate; COBALT in a 25-packet buffer). The named scenarios'
# criteria, with per-flow shares within 0.05 wherever the discipline is RED.

HELD_OUT = list(ns3ref.HELD_OUT_SCENARIOS)
HELD_OUT_GAPS: dict[tuple[str, str], str] = {
    # Found, not yet explained: CUBIC with SACK, 50 flows at 100 Mb/s behind 200 packets of drop-tail.
    # Goodput (98.5 : 97.5 Mb/s in order), Jain (0.994 : 0.968), the mean queue and the timeouts agree.
    ("fifo200_50flows_100mbps_ns3_profile", "drops"): "drop rate 0.0119 : 0.0180 (0.66x) over seeds 1-3, "
                                                      "cause not found yet",
}


def _held_out_cases():
    for name in HELD_OUT:
        for metric in ["goodput", "drops", "timeouts", "fairness", "mean_queue", "shares"]:
            if metric == "shares" and ns3ref.HELD_OUT_SCENARIOS[name].queue != "red":
                continue
            gap = HELD_OUT_GAPS.get((name, metric))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            yield pytest.param(name, metric, marks=marks, id=f"{name}-{metric}")


@pytest.mark.parametrize(("name", "metric"), list(_held_out_cases()))
def test_held_out_cases_agree_with_ns3(compared, name: str, metric: str) -> None:
    _assert_comparison_agrees(metric, compared(ns3ref.HELD_OUT_SCENARIOS[name]))


def test_the_overshooting_first_flow_gets_its_share_as_in_ns3(compared) -> None:
    """Before `new_ack_clears_backoff`, flow 0 waited in backed-off timeouts (0.011-0.047 Mb/s in
    seeds 2 and 3, where ns-3 gives it ~0.7)."""
    c = compared(ns3ref.HELD_OUT_SCENARIOS["red_5tcp_udp_overshoot_nosack_ns3_profile"])
    first, theirs = c.aqmlab["per_flow_goodput_bps"][0], c.ns3["per_flow_goodput_bps"][0]
    assert first == pytest.approx(theirs, rel=0.25), (first, theirs)


def test_goodput_never_exceeds_what_the_link_carried(compared) -> None:
    """50 flows at 100 Mb/s: 1,460 payload bytes per 1,502 on the wire is all the link can carry.
    In-order delivery in the window can exceed it (segments received before the warm-up, released
    by a late retransmission); first receipt cannot."""
    s = ns3ref.HELD_OUT_SCENARIOS["fifo200_50flows_100mbps_ns3_profile"]
    c = compared(s)
    assert c.aqmlab["tcp_first_receipt_goodput_bps"] <= s.rate_bps * 1460 / 1502


# ---------------------------------------------------------------- drop-tail without SACK
# `ns3ref.REPORTED_ONLY` and the newcomer's timeouts: NewReno without SACK behind a full drop-tail
# buffer, where ns-3 3.44's emulated-SACK scoreboard retransmits segments that were never dropped
# (2,401 and 4,815 retransmissions per run to aqmlab's 224; see g00 in docs/validation.md). The
# same checks as the named scenarios, marked strict so that a change on either side shows up: the
# mean queue agrees (1.00, 0.94) and stays asserted. That ns-3's scoreboard is the cause is tested at
# the end of this file: with `ns3_reno_sack` (ns-3's recovery) aqmlab meets these criteria.

NS3_NOSACK_DROPTAIL = pytest.mark.xfail(
    strict=True,
    reason="drop-tail without SACK: ns-3's emulated-SACK scoreboard retransmits 10-20x the segments aqmlab does "
    "(2,401 / 4,815 vs 224 per run), which costs it goodput (0.95x, 0.89x of aqmlab's), fairness, drops and "
    "26.7 / 47 RTO expiries per run to aqmlab's 1.7 / 0 (docs/validation.md, section 3)",
)
DROPTAIL_NOSACK = list(ns3ref.REPORTED_ONLY)


@pytest.mark.parametrize("name", DROPTAIL_NOSACK)
@pytest.mark.parametrize("metric", [
    pytest.param("goodput", marks=NS3_NOSACK_DROPTAIL), pytest.param("drops", marks=NS3_NOSACK_DROPTAIL),
    pytest.param("timeouts", marks=NS3_NOSACK_DROPTAIL), pytest.param("fairness", marks=NS3_NOSACK_DROPTAIL),
    "mean_queue"])
def test_droptail_without_sack(compared, name: str, metric: str) -> None:
    c = compared(ns3ref.REPORTED_ONLY[name])
    _assert_agrees(metric, c.aqmlab, c.ns3)


def _assert_comparison_agrees(metric: str, c: ns3ref.Comparison) -> None:
    """`_assert_agrees` on a comparison, or for "shares" each flow's share within 0.05 of ns-3's."""
    if metric == "shares":
        assert c.max_share_difference() <= 0.05
    else:
        _assert_agrees(metric, c.aqmlab, c.ns3)


def _assert_agrees(metric: str, ours: dict, theirs: dict) -> None:
    """The issue's criterion for `metric` (goodput 3 %, drops 25 %, timeouts alike, Jain within 0.1,
    mean queue 25 %)."""
    if metric == "goodput":
        assert ours["tcp_goodput_bps"] == pytest.approx(theirs["tcp_goodput_bps"], rel=0.03)
    elif metric == "drops":
        assert ours["drop_rate"] == pytest.approx(theirs["drop_rate"], rel=0.25)
    elif metric == "timeouts":
        assert ns3ref.timeouts_agree(ours["timeouts"], theirs["timeouts"]), (ours["timeouts"], theirs["timeouts"])
    elif metric == "fairness":
        assert ours["jain_tcp"] == pytest.approx(theirs["jain_tcp"], abs=0.1)
    else:
        assert ours["mean_queue_pkts"] == pytest.approx(theirs["mean_queue_pkts"], rel=0.25)


@pytest.mark.xfail(strict=True, reason="the newcomer dumbbell is drop-tail without SACK: 0 RTO expiries per run in "
                   "aqmlab, 11 in ns-3, whose retransmissions (1,042 vs 754) include the emulated-SACK ones above")
def test_issue10_newcomer_dumbbell_timeouts(compared) -> None:
    c = compared(ns3ref.NEWCOMER)
    assert ns3ref.timeouts_agree(c.aqmlab["timeouts"], c.ns3["timeouts"]), (c.aqmlab["timeouts"], c.ns3["timeouts"])


def test_issue10_newcomer_dumbbell_keeps_every_window_near_its_share() -> None:
    """The same dumbbell in aqmlab alone: one flow's mean cwnd exceeded 1,000 segments before the fix.
    A fair share of the pipe plus the buffer is (10 Mb/s · 44 ms / 1502 B + 50) / 10 ≈ 8.7 segments;
    no flow may average more than 3 times that."""
    res = aqmlab.run(ns3ref.NEWCOMER.aqmlab_scenario())
    assert res.flows["mean_cwnd_segments"].max() < 3 * 8.7, res.flows["mean_cwnd_segments"].tolist()
    assert res.queues.iloc[0]["drop_rate"] < 0.03


# Moved by this stop's link and SACK changes (the discipline no longer polled when the wire goes idle
# behind its ring; RFC 6675 NextSeg rule 3 bounded by the highest SACK), not yet separated: before
# them goodput 1.026 and 66.7 : 55.7 RTO expiries, after them 1.031 and 75.0 : 55.7 (seeds 1-3;
# new_ack_clears_backoff changes nothing here, the profile runs with timestamps).
NS3_PROFILE_MOVED = pytest.mark.xfail(
    strict=True,
    reason="profile ns3 at ns-3's defaults: goodput 8.797 : 8.530 Mb/s (1.031, the band is 3 %), 75.0 : 55.7 RTO "
    "expiries over seeds 1-3, both moved from 1.026 and 66.7 by the idle-poll and NextSeg rule-3 changes "
    "(issue #41), cause not yet separated",
)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=NS3_PROFILE_MOVED) if n == "red_10flows_ns3_profile" else n for n in ns3ref.PROFILE_SCENARIOS],
)
def test_ns3_profile_matches_ns3_defaults(compared, name: str) -> None:
    """aqmlab's `profile = "ns3"` against ns-3 left at its TCP defaults (and with Linux-sized windows).
    It needs ns-3's own CUBIC arithmetic (`cubic-ns3`) fed what ns-3's `ProcessAck` feeds it (newly
    delivered segments; every covered one when recovery ends; beyond the recovery point when a
    timeout's loss state ends), ns-3's SACK recovery (`ns3_sack_recovery`: its PRR arithmetic, a
    send on partial ACKs, the timer restarted on the first only) and its timeout handling (the
    scoreboard kept). Counting cumulatively acknowledged segments made the large-window flows run
    away (drop rate 0.43-0.48 against ns-3's 0.035-0.036); RFC 6937 PRR left aqmlab with 0.53x
    ns-3's timeouts and 1.059x its goodput at 536-byte segments (docs/validation.md)."""
    c = compared(ns3ref.PROFILE_SCENARIOS[name])
    assert c.aqmlab["tcp_goodput_bps"] == pytest.approx(c.ns3["tcp_goodput_bps"], rel=0.03)
    assert c.aqmlab["drop_rate"] == pytest.approx(c.ns3["drop_rate"], rel=0.25)
    assert c.max_share_difference() <= 0.05


# Large windows, seeds 1-3: 80.3 vs 61.0 RTO expiries per run (1.32, the band is 1.30), most of it
# seed 1 (83 vs 48); over seeds 1-6 it is 444 vs 376 (1.18), within the band (docs/validation.md).
NS3_PROFILE_LARGE_WINDOW_TIMEOUTS = pytest.mark.xfail(
    strict=True,
    reason="profile ns3 with 1448-byte segments and 6 MiB buffers: 1.32x ns-3's RTO expiries over seeds 1-3 "
    "(seed 1: 83 vs 48), 1.18x over seeds 1-6 (docs/validation.md)",
)


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=NS3_PROFILE_LARGE_WINDOW_TIMEOUTS) if n.endswith("_large_windows")
     else pytest.param(n, marks=NS3_PROFILE_MOVED) for n in ns3ref.PROFILE_SCENARIOS],
)
def test_ns3_profile_timeouts_match_ns3(compared, name: str) -> None:
    c = compared(ns3ref.PROFILE_SCENARIOS[name])
    assert ns3ref.timeouts_agree(c.aqmlab["timeouts"], c.ns3["timeouts"]), (c.aqmlab["timeouts"], c.ns3["timeouts"])


# ---------------------------------------------------------------- the grid

GRID = list(ns3ref.GRID)
# NewReno without SACK behind a full drop-tail buffer, no delayed ACKs, IW 2 (seeds 1-3, 30 s runs).
# After issue #10's fixes aqmlab's goodput agrees (1.029) and it retransmits what it drops (186
# retransmissions per run for a 0.89 % drop rate, no RTO expiries). ns-3 3.44 retransmits 1,396
# segments per run at a 2.44 % drop rate and 16.7 expiries: its emulated-SACK ("Reno SACK") scoreboard
# marks as lost segments that were not (before the fixes the helper's captures showed 2.7x as many
# retransmissions as drops), and the spurious retransmissions themselves overflow the buffer.
FIFO_NOSACK_SPURIOUS = pytest.mark.xfail(
    strict=True,
    reason="drop-tail without SACK, IW 2, no delayed ACKs: ns-3's emulated-SACK scoreboard retransmits several "
    "times the segments it loses (1,396 retransmissions per run vs aqmlab's 186), which raises its drops and "
    "timeouts (docs/validation.md)",
)
# g08 (drop-tail, no SACK, PRR + limited transmit): RTO expiries 6.7 (aqmlab) vs 10 (ns-3) per run,
# 0.3 beyond the floor of 3. Capture analysis (seed 1, validation/ns3/rto_anatomy.py): retransmissions
# of segments really dropped agree (266 vs 282; drops 252 vs 292), but ns-3 sends 2,073 retransmissions
# to aqmlab's 789, most of them in fast recovery by two flows (692 and 660 over ~70 episodes each):
# the emulated-SACK behaviour of FIFO_NOSACK_SPURIOUS. Within about one standard error of a 3-seed mean.
NOSACK_SPURIOUS_TIMEOUTS = pytest.mark.xfail(
    strict=True,
    reason="drop-tail without SACK: ns-3's emulated-SACK scoreboard retransmits 2.6x aqmlab's segments in fast "
    "recovery and the expiries differ by 3.3 per run (floor 3), about one standard error (docs/validation.md)",
)
_G00 = "g00_fifo_nosack_ack1_iw2_10f_equal_classic"
_G08 = "g08_fifo_nosack_ack1_iw10_10f_unequal_ns3"
GRID_MARKS: dict[str, dict[str, pytest.MarkDecorator]] = {
    "goodput": {}, "drops": {_G00: FIFO_NOSACK_SPURIOUS},
    "timeouts": {_G00: FIFO_NOSACK_SPURIOUS, _G08: NOSACK_SPURIOUS_TIMEOUTS},
    "shares": {},
}


@pytest.mark.parametrize("name", _by_name(GRID, GRID_MARKS["goodput"]))
def test_grid_goodput_within_3_percent(compared, name: str) -> None:
    c = compared(ns3ref.GRID[name])
    assert c.aqmlab["tcp_goodput_bps"] == pytest.approx(c.ns3["tcp_goodput_bps"], rel=0.03)


@pytest.mark.parametrize("name", _by_name(GRID, GRID_MARKS["drops"]))
def test_grid_drop_rate_within_25_percent(compared, name: str) -> None:
    c = compared(ns3ref.GRID[name])
    assert c.aqmlab["drop_rate"] == pytest.approx(c.ns3["drop_rate"], rel=0.25)


@pytest.mark.parametrize("name", _by_name(GRID, GRID_MARKS["timeouts"]))
def test_grid_timeouts_counted_alike(compared, name: str) -> None:
    c = compared(ns3ref.GRID[name])
    assert ns3ref.timeouts_agree(c.aqmlab["timeouts"], c.ns3["timeouts"]), (c.aqmlab["timeouts"], c.ns3["timeouts"])


@pytest.mark.parametrize("name", _by_name([n for n in GRID if ns3ref.GRID[n].queue == "red"], GRID_MARKS["shares"]))
def test_grid_per_flow_shares_under_red(compared, name: str) -> None:
    c = compared(ns3ref.GRID[name])
    assert c.max_share_difference() <= 0.05


# ---------------------------------------------------------------- ns-3's own recovery without SACK
# The drop-tail no-SACK scenarios above fail because ns-3 3.44's emulated-SACK scoreboard resends
# data the receiver holds. `ns3_reno_sack` is that recovery, read from ns-3's source: with it,
# aqmlab must meet the same criteria against the same ns-3 runs (the ns-3 side is cached).
# Measured (3 seeds): g00 goodput 1.003, drops 0.95, timeouts 21 : 16.7, retransmissions 1,380 :
# 1,396; fifo_10flows_nosack 1.004 / 0.88 / 20.7 : 26.7 / 2,307 : 2,401; g08 (PRR + limited
# transmit) 0.976 / 1.10 / 11 : 10 once PRR computes in ns-3's uint32 arithmetic (before: drops
# 0.054 : 0.0145, 61 : 10 expiries).

def _aqmlab_variant(**changes):
    """A module fixture: `get(scenario)` is aqmlab alone on `scenario` with `changes`, mean over the
    comparison's seeds, run on first use and kept."""
    @pytest.fixture(scope="module")
    def fixture():
        cache: dict[str, dict] = {}

        def get(s: ns3ref.MatchedScenario) -> dict:
            if s.name not in cache:
                cache[s.name] = ns3ref.aqmlab_mean(dataclasses.replace(s, **changes))
            return cache[s.name]

        return get

    return fixture


# `emulated(scenario)`: aqmlab with `ns3_reno_sack` on.
emulated = _aqmlab_variant(ns3_reno_sack=True)


# Every scenario without SACK: the named drop-tail ones, the newcomer's and the grid's.
EMULATION_CHECKED = {s.name: s for s in [*ns3ref.REPORTED_ONLY.values(), ns3ref.NEWCOMER,
                                         *(g for g in ns3ref.GRID.values() if not g.sack)]}
# Where the emulation still differs from ns-3, each measured (3 seeds, aqmlab : ns-3).
EMULATION_GAPS = {
    ("fifo_unequal_rtt_nosack", "fairness"): "Jain's index 0.589 : 0.453 (the criterion is 0.1)",
    ("fifo50_10flows_nosack_iw2_ack1", "timeouts"): "RTO expiries 17.7 : 11.0 per run (retransmissions 1,059 : 1,042)",
    ("g05_red_nosack_ack2_iw2_10f_unequal_classic", "fairness"):
        "Jain's index 0.842 : 0.962 (retransmissions 522 : 326; RFC NewReno, the default, meets the share criterion)",
    ("g12_fifo_nosack_ack2_iw10_50f_equal_classic", "fairness"): "Jain's index 0.828 : 0.709",
    # Noise, not a difference: seeds 1-10 give 15.3 : 15.5 expiries per run (standard deviation
    # 4.4 and 3.5 per run); seeds 1-3 happen to give 19.3 : 14.3, 5 apart where 4.3 is allowed.
    ("g13_red_nosack_ack2_iw10_10f_equal_ns3", "timeouts"):
        "RTO expiries 19.3 : 14.3 per run over seeds 1-3, 15.3 : 15.5 over seeds 1-10",
}


def _emulation_params():
    for name in EMULATION_CHECKED:
        for metric in ("goodput", "drops", "timeouts", "fairness"):
            gap = EMULATION_GAPS.get((name, metric))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            yield pytest.param(name, metric, marks=marks, id=f"{name}-{metric}")


@pytest.mark.parametrize(("name", "metric"), list(_emulation_params()))
def test_ns3_reno_sack_reproduces_ns3_without_sack(compared, emulated, name: str, metric: str) -> None:
    s = EMULATION_CHECKED[name]
    _assert_agrees(metric, emulated(s), compared(s).ns3)


# ---------------------------------------------------------------- the default reduction with SACK
# The SACK comparisons above run aqmlab with `ssthresh_from_pipe`, ns-3's reduction (it halves its
# BytesInFlight, the RFC 6675 pipe). aqmlab's default halves RFC 5681's FlightSize, the window in
# use, which backs off less at these windows. The same criteria, against the same ns-3 runs, for the
# default. Measured (3 seeds, aqmlab : ns-3): goodput 0.997-1.014, drops 0.99-1.20, shares under RED
# within 0.015; where the expiries differ, the softer back-off is why (each gap below).

# `rfc_reduced(scenario)`: aqmlab halving FlightSize (no `ssthresh_from_pipe`).
rfc_reduced = _aqmlab_variant(rfc_flightsize=True)


RFC_REDUCTION_CHECKED = {s.name: s for s in [*ns3ref.SCENARIOS.values(), *ns3ref.GRID.values()] if s.sack}
RFC_REDUCTION_GAPS = {
    ("codel_10flows", "timeouts"): "RTO expiries 24.0 : 18.0 per run with FlightSize halving (17.7 : 18 with "
                                   "ns-3's pipe halving), drops 1.19x",
    ("pie_10flows", "timeouts"): "RTO expiries 19.3 : 13.0 per run with FlightSize halving (12.3 : 13 with "
                                 "ns-3's pipe halving), drops 1.20x",
}


def _rfc_reduction_params():
    for name, s in RFC_REDUCTION_CHECKED.items():
        for metric in ("goodput", "drops", "timeouts", *(["shares"] if s.queue == "red" else [])):
            gap = RFC_REDUCTION_GAPS.get((name, metric))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            yield pytest.param(name, metric, marks=marks, id=f"{name}-{metric}")


@pytest.mark.parametrize(("name", "metric"), list(_rfc_reduction_params()))
def test_default_flightsize_reduction_with_sack_meets_the_criteria(compared, rfc_reduced, name: str,
                                                                   metric: str) -> None:
    s = RFC_REDUCTION_CHECKED[name]
    ours, theirs = rfc_reduced(s), compared(s)
    if metric == "shares":
        total = sum(ours["per_flow_goodput_bps"])
        shares = [g / total for g in ours["per_flow_goodput_bps"]]
        assert max(abs(a - b) for a, b in zip(shares, theirs.shares("ns3"), strict=True)) <= 0.05
    else:
        _assert_agrees(metric, ours, theirs.ns3)


# ---------------------------------------------------------------- BBR (docs/bbr.md)
#
# ns-3 3.44's `TcpBbr` (its port of Linux's BBR v1) against aqmlab's `bbr`, 4 flows, 10 Mb/s / 20 ms,
# 30-s runs, seeds 1-3 (`ns3ref.BBR_SCENARIOS`), without RACK-TLP on either side (ns-3 has none).
# The criteria are the grid's above (goodput 3 %, drops 25 %, timeouts 30 % or 3 per run), fixed
# before BBR was first compared; where they fail the measured gap is recorded.

# First run (2026-11-29; aqmlab : ns-3, means over seeds 1-3): drop-tail meets every criterion
# (goodput 1.003, drops 0.930, RTO expiries 24 : 30 per run, mean queue 1.005); under CoDel
# aqmlab drops and queues more, under FQ-CoDel less, and ns-3 times out 2.6x as often there.
# Unexplained so far: ns-3's TcpBbr departs from tcp_bbr.c in its send quantum, ACK-aggregation
# epoch, 1.25-phase exit and loss count; each moves the drop rate by up to 2x, none closes all three
# gaps (docs/bbr.md, "What differs in ns-3's code").
BBR_GAPS = {
    ("bbr_4flows_codel", "drops"): "drop rate 13.7 : 8.4 % (1.63x), mean queue 38.3 : 29.5 packets, "
                                   "retransmissions 3971 : 1955 per run",
    ("bbr_4flows_fq_codel", "goodput"): "goodput 9.55 : 9.15 Mb/s (1.043): ns-3's flows spend longer in timeouts",
    ("bbr_4flows_fq_codel", "drops"): "drop rate 5.7 : 9.1 % (0.62x), mean queue 13.6 : 24.0 packets",
    ("bbr_4flows_fq_codel", "timeouts"): "RTO expiries 23.7 : 61 per run (0.39x)",
}


def _bbr_params():
    for name in ns3ref.BBR_SCENARIOS:
        for metric in ("goodput", "drops", "timeouts"):
            gap = BBR_GAPS.get((name, metric))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            yield pytest.param(name, metric, marks=marks, id=f"{name}-{metric}")


def test_bbr_renders_on_both_sides() -> None:
    s = ns3ref.BBR_SCENARIOS["bbr_4flows_fifo"]
    flows = s.aqmlab_scenario()["flows"]
    assert {(f["congestion_control"], f["rack_tlp"], f["keep_sack_after_timeout"]) for f in flows} == {("bbr", False, True)}
    assert "--tcpPerFlow=Bbr,Bbr,Bbr,Bbr" in s.ns3_args()
    with pytest.raises(ValueError, match="needs sack=True"):
        ns3ref.MatchedScenario("bad", "fifo", n_tcp=1, sack=False, tcp_per_flow=("bbr",))


@pytest.mark.parametrize(("name", "metric"), list(_bbr_params()))
def test_bbr_meets_the_criteria_against_ns3s_bbr(compared, name: str, metric: str) -> None:
    c = compared(ns3ref.BBR_SCENARIOS[name])
    _assert_agrees(metric, c.aqmlab, c.ns3)


# ---------------------------------------------------------------- LEDBAT (docs/ledbat.md)
#
# ns-3 3.44's `TcpLedbat` at its defaults against aqmlab's `congestion_control = "ledbat"` (variant
# "ns3"), 10 Mb/s drop-tail of 200 packets, 120-s runs, seeds 1-3 (`ns3ref.LEDBAT_SCENARIOS`).
# Criteria fixed before the first run: aggregate goodput within 5 %, mean queue within 15 %, each
# flow's share of the goodput within 0.10 of ns-3's, and LEDBAT below NewReno in both.
# First run (aqmlab / ns-3, means over seeds 1-3): alone, goodput 9.641 / 9.641 Mb/s, mean queue
# 52.6 / 50.6 packets (63 / 61 ms: ns-3's cap keeps it below the 100-ms target); against NewReno,
# goodput 9.640 / 9.641 Mb/s, mean queue 146.2 / 146.0, LEDBAT 0.108 / 0.108 Mb/s.

LEDBAT = list(ns3ref.LEDBAT_SCENARIOS)


def test_ledbat_renders_per_flow_on_both_sides() -> None:
    s = ns3ref.LEDBAT_SCENARIOS["ledbat_vs_newreno_fifo"]
    flows = s.aqmlab_scenario()["flows"]
    assert [f["congestion_control"] for f in flows] == ["reno", "ledbat"]
    assert flows[1]["ledbat_variant"] == "ns3"
    assert "--tcpPerFlow=NewReno,Ledbat" in s.ns3_args()
    with pytest.raises(ValueError, match="tcp_per_flow"):
        ns3ref.MatchedScenario("bad", "fifo", n_tcp=2, tcp_per_flow=("ledbat",))


def test_ns3_tcp_per_flow_rejects_a_wrong_count(ns3_binary) -> None:
    proc = subprocess.run([str(ns3_binary), "--nFlows=2", "--tcpPerFlow=Ledbat", "--duration=1", "--warmup=0"],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "needs one variant per TCP flow (2), got 1" in proc.stderr, proc.stderr[-500:]


@pytest.mark.parametrize("name", LEDBAT)
def test_ledbat_goodput_within_5_percent(compared, name: str) -> None:
    c = compared(ns3ref.LEDBAT_SCENARIOS[name])
    assert c.aqmlab["tcp_goodput_bps"] == pytest.approx(c.ns3["tcp_goodput_bps"], rel=0.05)


@pytest.mark.parametrize("name", LEDBAT)
def test_ledbat_mean_queue_within_15_percent(compared, name: str) -> None:
    c = compared(ns3ref.LEDBAT_SCENARIOS[name])
    assert c.aqmlab["mean_queue_pkts"] == pytest.approx(c.ns3["mean_queue_pkts"], rel=0.15)


@pytest.mark.parametrize("name", LEDBAT)
def test_ledbat_shares_close(compared, name: str) -> None:
    c = compared(ns3ref.LEDBAT_SCENARIOS[name])
    assert c.max_share_difference() <= 0.10, (c.shares("aqmlab"), c.shares("ns3"))


def test_ledbat_yields_to_newreno_in_both(compared) -> None:
    c = compared(ns3ref.LEDBAT_SCENARIOS["ledbat_vs_newreno_fifo"])
    for side in ("aqmlab", "ns3"):
        newreno, ledbat = getattr(c, side)["per_flow_goodput_bps"]
        assert ledbat < 0.5 * newreno, (side, newreno, ledbat)
