"""The RFC 7928 evaluation suite: every scenario of the ns-3 AQM Evaluation Suite under every AQM.

RFC 7928 ("Characterization Guidelines for Active Queue Management") lists the tests an AQM should
pass; the ns-3 AQM Evaluation Suite (Deepak, Shravya & Tahiliani, WNS3 2017; indu98/aqm_eval_suite)
turns them into programs, one scenario each, and ``aqm-eval-suite-runner --name=All`` runs them all
under each ns-3 queue discipline and draws, per scenario, the queue delay against goodput of each
discipline as an ellipse. ``aqmlab suite rfc7928`` does the same (docs/rfc7928.md):

* a *case* is one built-in ``rfc7928_*`` scenario, possibly with key overrides (the suite's
  RttFairness1..15 are one file and 15 values of the second flow's access delays);
* each case runs under each chosen AQM (:data:`AQMS`, configured as the suite's
  ``ScenarioImpl::ConfigureQueueDisc`` does, from the case's buffer in packets) and each seed;
* all runs go to the sweep machinery at once (:func:`aqmlab.sweep.run_sweep`: Dask, a resumable
  store under ``OUT/runs/``, ``OUT/sweep.parquet``), then each case gets its delay–goodput plot
  (:func:`aqmlab.sweep_plot.plot_delay_goodput`, one configuration per AQM, its seeds making the
  ellipse) and its flow-goodput boxes in ``OUT/<case>/``, and ``OUT/report.md`` a table per case.

The suite draws its ellipse from 10-ms samples of one run; here each point is one seed's run (mean
queue delay and goodput over the run) and the ellipse is fitted to the seeds' points.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import pandas as pd

from . import api
from .exceptions import ScenarioError
from .library import builtin_path
from .scenario_keys import with_overrides
from .sweep import Sweep, SweepOutcome, SweepRun, run_id, run_sweep

__all__ = ["Case", "CASES", "AQMS", "DEFAULT_AQMS", "QUICK_CASES", "SUITES", "aqm_queue", "select_cases",
           "suite_runs", "run_suite", "MEAN_PACKET_BYTES"]

#: The suite's MeanPktSize: 698-byte segments + 52 bytes of TCP/IP headers with timestamps.
MEAN_PACKET_BYTES = 750

#: The names ``aqmlab suite`` knows.
SUITES = ("rfc7928",)


@dataclass(frozen=True)
class Case:
    """One scenario of the suite: a built-in file and the keys changed in it."""

    name: str  # report and directory name, e.g. "heavy_congestion", "rtt_fairness_10"
    section: str  # RFC 7928 section the suite's .cc cites (or implements)
    ns3_name: str  # the suite's scenario name (aqm-eval-suite-runner --name=...)
    builtin: str  # the built-in scenario file, without .toml
    overrides: dict[str, Any] = field(default_factory=dict)
    group: str = ""  # several cases of one suite program share it ("rtt_fairness")
    lbe_flows: tuple[int, ...] = ()  # ids of the less-than-best-effort (LEDBAT) flows, for their share

    def scenario(self) -> dict[str, Any]:
        """The case's scenario as a dict (not yet validated)."""
        path = builtin_path(self.builtin)
        if path is None:
            raise ScenarioError(f"{self.name}: built-in scenario {self.builtin!r} is missing")
        return with_overrides(path, self.overrides, label=self.name)


#: Flow 1's base RTTs in rtt-fairness.cc: d ms, made of access delays (d - 4) // 4 ms each side
#: (integer division) around the 2-ms bottleneck, so the RTT is 4 * ((d - 4) // 4) + 4 ms.
RTT_FAIRNESS_D_MS = (5, 8, 10, 16, 20, 30, 40, 60, 80, 100, 150, 200, 300, 400, 500)


def _rtt_cases() -> list[Case]:
    cases = []
    for i, d in enumerate(RTT_FAIRNESS_D_MS, start=1):
        owd = f"{(d - 4) // 4}ms"
        cases.append(Case(f"rtt_fairness_{i}", "6.2", f"RttFairness{i}", "rfc7928_rtt_fairness",
                          {"flows[1].access_delay": owd, "flows[1].receiver_access_delay": owd}, "rtt_fairness"))
    return cases


#: Every case, in the RFC's order.
CASES: tuple[Case, ...] = (
    Case("tcp_friendly_same_iw", "5.1.1", "TCPFriendlySameInitCwnd", "rfc7928_tcp_friendly_same_iw"),
    Case("tcp_friendly_diff_iw", "5.1.2", "TCPFriendlyDifferentInitCwnd", "rfc7928_tcp_friendly_diff_iw"),
    Case("aggressive", "5.2", "AggressiveTransportSender", "rfc7928_aggressive"),
    Case("unresponsive", "5.3.1", "UnresponsiveTransport", "rfc7928_unresponsive"),
    Case("unresponsive_friendly", "5.3.2", "UnresponsiveWithFriendly", "rfc7928_unresponsive_friendly"),
    Case("lbe", "5.4", "LbeTransportSender", "rfc7928_lbe", lbe_flows=(0,)),
    *_rtt_cases(),
    Case("mild_congestion", "8.2.2", "MildCongestion", "rfc7928_mild_congestion"),
    Case("medium_congestion", "8.2.3", "MediumCongestion", "rfc7928_medium_congestion"),
    Case("heavy_congestion", "8.2.4", "HeavyCongestion", "rfc7928_heavy_congestion"),
    Case("vary_congestion", "8.2.5", "VaryingCongestion", "rfc7928_vary_congestion"),
    Case("vary_capacity_uno", "8.2.6.1", "VaryingBandwidthUno", "rfc7928_vary_capacity_uno"),
    Case("vary_capacity_duo", "8.2.6.2", "VaryingBandwidthDuo", "rfc7928_vary_capacity_duo"),
    Case("bidirectional", "9.2", "BiDirectional", "rfc7928_bidirectional"),
)

#: ``--quick``: three cases (an unresponsive sender, heavy congestion, a capacity step), 60-s runs,
#: 3 seeds (the fewest an ellipse needs).
QUICK_CASES = ("unresponsive", "heavy_congestion", "vary_capacity_uno")
QUICK_DURATION_S = 60.0
QUICK_SEEDS = 3
DEFAULT_SEEDS = 5


def aqm_queue(name: str, limit_pkts: int) -> dict[str, Any]:
    """The ``[queue]`` of AQM `name` with a buffer of `limit_pkts` packets, as the suite's
    ``ConfigureQueueDisc(limit, 750, ...)`` sets ns-3's disciplines in packet mode.

    >>> aqm_queue("codel", 45)
    {'kind': 'codel', 'variant': 'ns3', 'limit': 45, 'min_bytes': '750B'}
    """
    mean = f"{MEAN_PACKET_BYTES}B"
    red = {"kind": "red", "variant": "ns2", "limit": limit_pkts, "mean_packet_size": mean}
    if name == "fifo":  # PfifoFast with every packet in one band
        return {"kind": "fifo", "limit": limit_pkts}
    if name == "red":  # MinTh 5, MaxTh 15 (packet mode); ns-3's LInterm 50, QW 0.002, Gentle, Wait
        return {**red, "min_th": 5, "max_th": 15, "max_p": 0.02, "weight": 0.002, "gentle": True, "wait": True}
    if name == "ared":  # ns-3's ARED = true: thresholds, weight and gentle automatic, max_p adapted
        return {**red, "adaptive": True, "adaptive_variant": "ns3"}
    if name == "feng-ared":  # ns-3's FengAdaptive = true on RED's 5 / 15 thresholds
        return {**red, "adaptive": True, "adaptive_variant": "feng", "min_th": 5, "max_th": 15, "max_p": 0.02}
    if name == "nlred":  # the suite's NonLinearRed: RedQueueDisc at RED's settings with NLRED = true
        return {**aqm_queue("red", limit_pkts), "nonlinear": True}
    if name == "codel":  # MaxPackets = limit, MinBytes = 750
        return {"kind": "codel", "variant": "ns3", "limit": limit_pkts, "min_bytes": mean}
    if name == "pie":  # QueueLimit = limit, MeanPktSize = 750; the other keys ns-3 3.44's
        return {"kind": "pie", "variant": "ns3", "limit": limit_pkts, "mean_pkt_size": mean}
    if name == "fq_codel":  # not one of the suite's disciplines: the reference FQ-AQM, same buffer
        return {"kind": "fq_codel", "limit": limit_pkts}
    raise ScenarioError(f"--aqm {name!r} is not an AQM of the suite; allowed: {', '.join(AQMS)}")


#: AQMs the suite can run, in its order (PfifoFast, RED, ARED, Feng's ARED, NonLinearRed, CoDel,
#: PIE), then FQ-CoDel, which the suite does not have.
AQMS = ("fifo", "red", "ared", "feng-ared", "nlred", "codel", "pie", "fq_codel")
DEFAULT_AQMS = AQMS


def select_cases(names: Sequence[str]) -> list[Case]:
    """The cases named (a case, a group such as ``rtt_fairness``, or an RFC section such as ``8.2.6``
    or ``6.2``), in the suite's order; all cases when `names` is empty."""
    if not names:
        return list(CASES)
    chosen: set[str] = set()
    for name in names:
        hits = [c.name for c in CASES if name in (c.name, c.group, c.section) or c.section.startswith(name + ".")]
        if not hits:
            groups = sorted({c.group for c in CASES if c.group})
            raise ScenarioError(f"--scenarios {name!r} is not a scenario of the suite; allowed: "
                                f"{', '.join(c.name for c in CASES if not c.group)}, {', '.join(groups)} "
                                f"(or {groups[0]}_1 .. _{len(RTT_FAIRNESS_D_MS)}), or an RFC 7928 section "
                                f"such as 8.2.4")
        chosen.update(hits)
    return [c for c in CASES if c.name in chosen]


def _shorten(scenario: dict[str, Any], duration_s: float) -> dict[str, Any]:
    """The scenario cut to `duration_s`: capacity changes, flow groups starting and stops falling at
    or after the end are dropped (the rest of the scenario is unchanged)."""
    if api.seconds(scenario["run"]["duration"]) <= duration_s:
        return scenario
    scenario["run"]["duration"] = f"{duration_s:g}s"
    link = scenario["topology"]["bottleneck"]
    if "rate_schedule" in link:
        link["rate_schedule"] = [e for e in link["rate_schedule"] if api.seconds(e["at"]) < duration_s]
        if not link["rate_schedule"]:
            del link["rate_schedule"]
    flows = []
    for f in scenario["flows"]:
        if api.seconds(f.get("start", "0s")) >= duration_s:
            continue
        if "stop" in f and api.seconds(f["stop"]) >= duration_s:
            del f["stop"]
        flows.append(f)
    scenario["flows"] = flows
    return scenario


#: The keys of a suite run in the combined table: the case, the AQM and the seed.
KEYS = ["scenario", "aqm", "run.seed"]


def suite_runs(cases: Sequence[Case], aqms: Sequence[str], seeds: int, *,
               duration_s: float | None = None) -> Sweep:
    """Every (case, AQM, seed) as one validated sweep, in that order."""
    runs = []
    for case in cases:
        base = case.scenario()
        if duration_s is not None:
            base = _shorten(base, duration_s)
        limit = base["queue"]["limit"]
        for aqm in aqms:
            for seed in range(1, seeds + 1):
                scenario = json.loads(json.dumps(base))
                scenario["queue"] = aqm_queue(aqm, limit)
                scenario["run"]["seed"] = seed
                try:
                    api.validate(scenario)
                except ScenarioError as e:
                    raise ScenarioError(f"{case.name} with --aqm {aqm}: {e}") from None
                runs.append(SweepRun(len(runs), {"scenario": case.name, "aqm": aqm, "run.seed": seed},
                                     scenario, run_id(scenario)))
    return Sweep("rfc7928", list(KEYS), runs)


def run_suite(
    out: str | os.PathLike,
    *,
    cases: Sequence[Case] | None = None,
    aqms: Sequence[str] = DEFAULT_AQMS,
    seeds: int | None = None,
    quick: bool = False,
    workers: int | None = None,
    on_start: Callable[[int, int, int], None] | None = None,
    on_run: Callable[[], None] | None = None,
) -> tuple[SweepOutcome, Path]:
    """Runs the suite into `out` and writes the plots and ``report.md``; returns the sweep's outcome
    and the report's path. `quick`: :data:`QUICK_CASES` (unless `cases` is given), 60-s runs and 3
    seeds (unless `seeds` is)."""
    started = time.monotonic()
    if cases is None:
        cases = select_cases(QUICK_CASES if quick else [])
    if seeds is None:
        seeds = QUICK_SEEDS if quick else DEFAULT_SEEDS
    for aqm in aqms:
        aqm_queue(aqm, 1)  # an unknown name fails here, before anything runs
    sweep = suite_runs(cases, aqms, seeds, duration_s=QUICK_DURATION_S if quick else None)
    outcome = run_sweep(sweep, out=out, workers=workers, plot=False, on_start=on_start, on_run=on_run)
    out = Path(out)
    flows = pd.read_parquet(out / "sweep_flows.parquet") if (out / "sweep_flows.parquet").exists() else None
    from .suite_report import write_case_plots, write_report

    for case in cases:
        write_case_plots(outcome.table, flows, case, out)
    report = write_report(outcome.table, flows, cases, aqms, seeds, quick, out,
                          wall_s=time.monotonic() - started, failed=len(outcome.failed))
    return outcome, report
