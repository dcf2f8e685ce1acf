"""Cross-check against ns-2.35 (validation 4): the WHITE thesis's static dumbbells (30 Reno flows,
10 Mb/s, RTTs 20-310 ms) run in both simulators with matched settings (`aqmlab.ns2ref`), five seeds.
Also ns-2 at its defaults against `profile = "ns2"` (an ECN Reno case under RED, a Sack1 case with the
20-packet receiver window). Needs Debian's `ns2` package (`make ns2`; `.ci/run` installs it)."""

from __future__ import annotations

import shutil

import pytest
from aqmlab import ns2ref

pytestmark = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 is not installed (make ns2)")


@pytest.mark.parametrize("exp", ["exp1", "exp2", "exp3", "exp4"])
def test_red_matches_ns2(exp: str) -> None:
    c = ns2ref.compare(exp, "red")
    assert c.ours.drop_rate > 0.01, "the case must exercise RED's drops"
    assert not c.failures(), c.failures()


@pytest.mark.parametrize("exp", ["exp1", "exp3", "exp4"])
def test_drr_matches_ns2(exp: str) -> None:
    """ns-2's Queue/DRR with enough buckets that no two sources share a bin (aqmlab: a bin per flow)."""
    c = ns2ref.compare(exp, "drr")
    assert c.ours.drop_rate > 0.01, "the case must exercise DRR's longest-queue drops"
    assert not c.failures(), c.failures()


@pytest.mark.parametrize("exp", ["exp1", "exp2", "exp3", "exp4"])
def test_rem_matches_ns2(exp: str) -> None:
    """ns-2's Queue/REM with its defaults and a 100-packet buffer (docs/rem.md): RED's tolerances plus
    the mean queue (15 %), which REM holds near pbo_ = 20 in both simulators."""
    c = ns2ref.compare(exp, "rem-b100")
    assert c.ours.drop_rate > 0.01, "the case must exercise REM's drops"
    assert 15 < c.theirs.mean_queue < 25, "REM, not the buffer, must set the queue"
    assert not c.failures(), c.failures()


@pytest.mark.xfail(strict=True, reason="in the dumbbell's 30-packet buffer REM's price stays near 0 (pbo_ 20 leaves 9 "
                   "packets of headroom; ns-2's mean drop probability 1.5e-5) and it drops as drop-tail does, with "
                   "drop-tail's exact-tie difference on the 5-ms grid (ns-2 JFI 0.27, aqmlab 0.68; docs/rem.md)")
def test_rem_in_the_30_packet_buffer_matches_ns2_on_the_tie_grid() -> None:
    c = ns2ref.compare("exp1", "rem")
    assert not c.failures(), c.failures()


def test_droptail_matches_ns2_off_the_tie_grid() -> None:
    c = ns2ref.compare("exp1-offgrid", "droptail")
    assert not c.failures(), c.failures()


@pytest.mark.xfail(strict=True, reason="exact ties: with the thesis's 5-ms delays, ACK-clocked packets of different "
                   "flows reach the full drop-tail queue at the same instant and the simulators order simultaneous "
                   "events differently (ns-2 JFI 0.27, aqmlab 0.70; docs/validation.md §4)")
def test_droptail_matches_ns2_on_the_tie_grid() -> None:
    c = ns2ref.compare("exp1", "droptail")
    assert not c.failures(), c.failures()


def test_guard_is_what_makes_reno_match_ns2() -> None:
    """Without ns-2's `bugFix_` guard aqmlab's Reno fast-retransmits again within a window and takes
    about half of ns-2's timeouts (measured 343-374 vs 619-657 per run on Exp 3): the cross-check
    must tell the two apart."""
    exp = ns2ref.W.experiments()["exp3"]
    with_guard = ns2ref.run_aqmlab(exp, "red", 1).timeouts
    scenario = ns2ref.W.scenario(exp, ns2ref.W.queue("red", ns2ref.PROFILE), seed=1)
    for f in scenario["flows"]:
        f["fast_retransmit_guard"] = "none"
    without = int(ns2ref.aqmlab.run(scenario).flows["timeouts"].sum())
    theirs = ns2ref.run_ns2(exp, "red", 1).timeouts
    assert abs(with_guard - theirs) <= ns2ref.TOLERANCE["timeouts"] * theirs
    assert without < (1 - ns2ref.TOLERANCE["timeouts"]) * theirs, (without, theirs)


def test_pi_matches_ns2() -> None:
    """Kumar 2003's PI dumbbell (Sec. 5.1): ns-2's Queue/PI (q_ref 200, limit 800, a 1.822e-5,
    b 1.816e-5, 170 Hz) against aqmlab's `pi`, 99 NewReno FTP flows; RED's tolerances plus the
    mean queue (15 %), which PI holds at q_ref in both simulators."""
    c = ns2ref.compare_pi()
    assert c.ours.drop_rate > 0.01, "the case must exercise PI's drops"
    assert 180 < c.theirs.mean_queue < 220, "PI, not the buffer, must set the queue"
    assert not c.failures(), c.failures()


def test_timer_restart_is_what_makes_newreno_match_ns2_under_pi() -> None:
    """ns-2's NewReno restarts the retransmission timer at a fast retransmit (`reset_rtx_timer(1,0)`
    in `dupack_action`); RFC 6298 (5.1) does not. With the 0.2 s minimum RTO and an RTO near
    1.2·RTT the RFC timer expires before the retransmission's ACK is back: measured 1250 timeouts
    against ns-2's 186 and a drop rate 13 % lower (1.75 vs 2.02 %; docs/validation.md §4). The
    cross-check must tell the two apart."""
    exp = ns2ref.PI_EXPERIMENT
    seeds = (1, 2)
    theirs = sum(ns2ref.run_ns2_pi(exp, s).timeouts for s in seeds)
    with_restart = sum(ns2ref.run_aqmlab_pi(exp, s).timeouts for s in seeds)
    without = sum(ns2ref.run_aqmlab_pi(exp, s, restart_timer=False).timeouts for s in seeds)
    assert abs(with_restart - theirs) <= ns2ref.TOLERANCE["timeouts"] * theirs, (with_restart, theirs)
    assert without > (1 + ns2ref.TOLERANCE["timeouts"]) * theirs, (without, theirs)


def test_ecn_reno_under_red_matches_ns2() -> None:
    """50 Reno + ECN flows under RED (20 Mb/s; thresholds 5/15, max_p 0.1, gentle, wait, ns-2's
    mark_p_ 0.1), ns-2.35's `Agent/TCP/Reno` at its defaults against `profile = "ns2"`, whose
    `ecn_style = "ns2"` reacts to echoes as ns-2's TcpAgent does (docs/validation.md §4). ns-2 does
    not count a timeout in an ECN-reduced window in `nrexmit_`; aqmlab's timeouts less those are
    compared."""
    c = ns2ref.compare_profile("ecn-reno-red")
    assert c.ours.drop_rate > 0.01, "the case must have losses as well as marks"
    assert not c.failures(), c.failures()


def test_sack1_with_the_20_packet_receiver_window_matches_ns2() -> None:
    """8 `Agent/TCP/Sack1` flows whose 20-packet receiver windows overfill a 30-packet drop-tail
    buffer (ns-2 queue-limit 30, aqmlab limit 29), against `profile = "ns2"`, `variant = "sack"`."""
    c = ns2ref.compare_profile("sack1-rwnd20")
    assert c.ours.drop_rate > 0.003, "the case must exercise SACK recovery"
    assert not c.failures(), c.failures()


def test_droptail_limit_is_ns2s_queue_limit_less_one() -> None:
    """ns-2's DropTail drops when `q_->length() + 1 >= qlim_` (queue/drop-tail.cc): with queue-limit
    30 at most 29 packets wait, as in aqmlab's limit 29."""
    assert ns2ref.droptail_limit(30) == 29
    case = ns2ref.PROFILE_CASES["sack1-rwnd20"]
    assert ns2ref.profile_scenario(case, 1)["queue"] == {"kind": "droptail", "limit": 29}
