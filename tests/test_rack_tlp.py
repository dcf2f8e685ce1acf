"""RACK-TLP (RFC 8985) in the live run's simulated twin (`profile = "linux"`, docs/live.md).

Measured before RACK-TLP was modelled (seed 1, 30 s, 5 s warm-up): every timeout of the twin came
in fast recovery after the head's retransmission was dropped again (droptail 6, CoDel 4); the
kernel had none. With `rack_tlp` (the Linux profile's default since) neither has any, and
drop-tail resends 67 segments instead of 154 (kernel: 55).
"""

from __future__ import annotations

import sys
from pathlib import Path

import aqmlab
import pytest
from aqmlab.live import simulated_twin

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation" / "live"))
from compare import QUEUES, scenario  # noqa: E402  (the scenario docs/live.md's table runs)

# The kernel's side of docs/live.md's table (Linux 6.18, 2026-11-28): drop %, timeouts.
KERNEL = {"droptail (100 pkts)": (0.26, 0), "codel": (0.90, 0)}


def twin(name: str, rack_tlp: bool, head_restart: bool | None = None, seed: int = 1):
    sc = simulated_twin(scenario(QUEUES[name], "30s", 4, "cubic"))
    sc["run"]["seed"] = seed
    for group in sc["flows"]:
        group["rack_tlp"] = rack_tlp
        # The twin as measured then: the timer restarted at a resend of the head with RACK only
        # (the Linux profile now restarts it without RACK too, as the kernel does).
        group["restart_timer_on_head_retransmit"] = rack_tlp if head_restart is None else head_restart
        # The RTO as the twin computed it when these numbers were measured: RACK-TLP's effect
        # alone. The Linux profile's `rto_formula = "linux"` (RTO >= SRTT + 200 ms) came later and
        # removes some of the same timeouts by itself (CoDel without RACK-TLP: 4 -> 2).
        group["rto_formula"] = "rfc6298"
    return aqmlab.run(sc)


def run_both(name: str):
    on, off = twin(name, True), twin(name, False)
    return on, off, {k: int(r.flows["timeouts"].sum()) for k, r in (("on", on), ("off", off))}


def test_rack_tlp_removes_codels_timeouts_as_the_kernel_has_none() -> None:
    """Seeds 1-3 without RACK-TLP: 4, 4, 3 timeouts; with it 0, 0, 0 (and under RED, PIE and
    FQ-PIE too); kernel 0. Each was a lost retransmission that RACK finds from later segments."""
    on, off, timeouts = run_both("codel")
    assert timeouts["off"] >= 3 and timeouts["on"] == 0, timeouts
    assert int(on.flows["rack_losses"].sum()) > 0
    check_goodput_and_drops(on, off, "codel")


def test_restarting_the_timer_at_the_heads_resend_is_what_removes_droptails_timeouts() -> None:
    """Of RACK-TLP's two parts, the timer restart at a resend of the head (Linux's, now also the
    Linux profile's without RACK) is what removes drop-tail's timeouts: without RACK, seeds 1-3 give
    0, 1, 0 timeouts and 60, 79, 61 retransmissions for 60, 77, 61 drops (without the restart 6,
    3, 2 and 154, 106, 93 for 43, 54, 60). Under CoDel it does not: a retransmission dropped again
    is repaired only by the RTO, which the restart delays but cannot prevent (seeds 1-3: 2, 7, 6
    timeouts; without it 4, 4, 3); RACK's detection removes those (0)."""
    restarted = twin("droptail (100 pkts)", False, head_restart=True)
    assert int(restarted.flows["timeouts"].sum()) <= 1
    assert int(restarted.flows["retransmits"].sum()) <= 1.25 * int(restarted.queues.iloc[0]["drops"])
    codel_timeouts = sum(int(twin("codel", False, head_restart=True, seed=seed).flows["timeouts"].sum()) for seed in (1, 2, 3))
    assert codel_timeouts >= 8, codel_timeouts


def test_rack_tlp_removes_droptails_timeouts_and_resends_one_segment_per_drop() -> None:
    """Behind drop-tail the twin timed out 6 times (seeds 2, 3: 3, 2) and resent 154 segments for
    43 drops (3.6x; the kernel 55 for about 50): each timeout marked the whole flight lost,
    segments still queued included. RACK marks only the overdue ones (RFC 8985 §6.3) and, with
    the timer restarted when the head is resent (as Linux does), finds the lost retransmission
    before the timer fires: seeds 1-3 give 0 timeouts, 67, 73, 57 retransmissions for 67, 72, 57
    drops."""
    on, off, timeouts = run_both("droptail (100 pkts)")
    assert timeouts["off"] >= 3 and timeouts["on"] == 0, timeouts
    drops_on, drops_off = (int(r.queues.iloc[0]["drops"]) for r in (on, off))
    retrans_on, retrans_off = (int(r.flows["retransmits"].sum()) for r in (on, off))
    assert retrans_off > 2 * drops_off, (retrans_off, drops_off)
    assert retrans_on <= 1.25 * drops_on, (retrans_on, drops_on)
    check_goodput_and_drops(on, off, "droptail (100 pkts)")


def check_goodput_and_drops(on, off, name: str) -> None:
    """Goodput unchanged, and the drop rate near the kernel's (within 25 %, as test_live checks)."""
    assert abs(on.aggregate["goodput_bps"] / off.aggregate["goodput_bps"] - 1) < 0.02
    kernel_drop_pct, _ = KERNEL[name]
    drop_pct = on.queues.iloc[0]["drop_rate"] * 100
    assert abs(drop_pct / kernel_drop_pct - 1) < 0.25, (drop_pct, kernel_drop_pct)


def test_rack_tlp_is_off_outside_the_linux_profile() -> None:
    flow = {"kind": "tcp", "variant": "sack"}
    sc = {"run": {"duration": "1s"}, "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}},
          "queue": {"kind": "droptail"}, "flows": [flow]}
    assert aqmlab.validate(sc)["flows"][0]["rack_tlp"] is False

