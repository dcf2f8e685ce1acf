"""Cross-check against ns-2.35 (Debian's `ns2` package): the WHITE thesis's static dumbbells (Lee 2002,
Exps 1–4, 30 Reno flows, 10 Mb/s) under RED, drop-tail, DRR and REM, run in both simulators with the
same settings (`validation/ns2/white_dumbbell.tcl` mirrors `aqmlab.repro.white_scenarios`).

Compared per experiment and discipline, seed means: aggregate goodput, drop rate, timeouts, Jain's
index and each RTT cluster's mean per-flow goodput. Tolerances (fixed before the first comparison,
as the ns-3 cross-check's): goodput 3 %, drop rate 25 %, timeouts 30 %, Jain's index 0.05, cluster
means 15 % (25 % for a lone flow, whose goodput varies most from seed to seed). REM (ns-2 `Queue/REM`
with its ns-default.tcl values; the dumbbell's 30-packet buffer, "rem", or 100 packets, "rem-b100") is
also held to the bottleneck's time-average queue length: 15 % (fixed with the others before its first
comparison; docs/rem.md).

PI (Kumar 2003's dumbbell, `validation/ns2/pi_dumbbell.tcl` mirrors `aqmlab.repro.tsq_scenarios`): ns-2's
`Queue/PI` with the thesis's settings (q_ref 200, limit 800, a 1.822e-5, b 1.816e-5, 170 Hz) against
aqmlab's `pi`, 99 NewReno FTP flows over 15 Mb/s / 300 ms, 100 s with the first 20 s discarded; the
case "pi" is held to the same tolerances (goodput, drop rate, timeouts, JFI, the one cluster's per-flow
goodput) and to the mean queue (15 %), which PI holds at q_ref.

ns-2 at its defaults (`validation/ns2/profile_dumbbell.tcl`, `PROFILE_CASES`): `Agent/TCP/Reno` with ECN
under RED and `Agent/TCP/Sack1` with its 20-packet receiver window behind drop-tail, against aqmlab flows
that set `profile = "ns2"`; the same tolerances, timeouts counted as ns-2's `nrexmit_` counts them.
Drop-tail's `queue-limit L` is `limit = L − 1` in aqmlab (`droptail_limit`).

    python -m aqmlab.ns2ref          # prints the markdown table of docs/validation.md §4
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import aqmlab
from aqmlab.exceptions import AqmlabError
from aqmlab.metrics import jain_index
from aqmlab.repro import tsq_scenarios as T
from aqmlab.repro import white_scenarios as W

SCRIPT = Path(__file__).resolve().parents[2] / "validation" / "ns2" / "white_dumbbell.tcl"
PI_SCRIPT = SCRIPT.with_name("pi_dumbbell.tcl")
PROFILE = W.RedProfile("thresholds-3-9", 30, 3, 9, 0.1)  # the WHITE reproduction's calibrated RED
SEEDS = (1, 2, 3, 4, 5)
CASES = (("exp1", "red"), ("exp2", "red"), ("exp3", "red"), ("exp4", "red"), ("exp1-offgrid", "droptail"),
         ("exp1", "droptail"), ("exp1", "drr"), ("exp3", "drr"), ("exp4", "drr"),
         ("exp1", "rem"), ("exp2", "rem"), ("exp3", "rem"), ("exp4", "rem"),
         ("exp1-offgrid", "rem"), ("exp2-offgrid", "rem"), ("exp3-offgrid", "rem"), ("exp4-offgrid", "rem"),
         ("exp1", "rem-b100"), ("exp2", "rem-b100"), ("exp3", "rem-b100"), ("exp4", "rem-b100"))
OFFGRID_STEP_MS = 0.037  # flow i's access delay + i·0.037 ms: no two RTTs a whole number of packet times apart

TOLERANCE = {"goodput": 0.03, "drop_rate": 0.25, "timeouts": 0.30, "jfi": 0.05, "cluster": 0.15, "lone_flow": 0.25,
             "mean_queue": 0.15}
MEAN_QUEUE_CHECKED = ("rem", "rem-b100", "pi")  # disciplines whose time-average queue is compared (REM and PI control the backlog)
# REM's buffer: the dumbbell's 30 packets ("rem"), or 100 ("rem-b100"): with pbo_ = 20 a 30-packet buffer
# overflows before the price leaves 0, so REM acts as drop-tail there (docs/rem.md).
REM_LIMITS = {"rem": PROFILE.limit, "rem-b100": 100}


def ns_binary() -> str:
    """The `ns` executable, or a clear error saying how to get it."""
    found = shutil.which("ns")
    if found is None:
        raise AqmlabError("ns-2 not found on PATH: install Debian's ns2 package (apt-get install ns2; `make ns2` does it)")
    return found


@dataclass(frozen=True)
class Run:
    """One simulation's outcome: per-flow goodput (b/s), timeouts, and the bottleneck's drop rate and
    time-average length (packets, after warmup)."""

    goodput: np.ndarray
    timeouts: int
    drop_rate: float
    mean_queue: float
    retransmits: int = 0  # retransmitted packets (the profile cases report them)


def _parse_ns2(text: str, n_flows: int, label: str, *, with_retransmits: bool = False) -> Run:
    """A run of one of the validation/ns2 scripts from its stdout: a line per flow
    (`flow <i> <goodput_bps> <timeouts> <retransmitted packets>`), `queue <arrivals> <drops>` and
    `qmean <packets>`. ns-2 prints a warning per packet for the 0-byte header on the same stdout,
    so only these lines are read."""
    flows = re.findall(r"flow (\d+) ([0-9.e+]+) (\d+) (\d+)", text)
    queue_line = re.search(r"queue (\d+) (\d+)", text)
    qmean = re.search(r"qmean ([0-9.e+-]+)", text)
    if len(flows) != n_flows or queue_line is None or qmean is None:
        raise AqmlabError(f"ns-2 output for {label} is incomplete: {len(flows)} of {n_flows} flow lines"
                          + ("" if qmean else ", no qmean line"))
    arrivals, drops = (int(x) for x in queue_line.groups())
    retransmits = sum(int(r) for _, _, _, r in flows) if with_retransmits else 0
    return Run(np.array([float(g) for _, g, _, _ in flows]), sum(int(t) for _, _, t, _ in flows), drops / arrivals,
               float(qmean.group(1)), retransmits)


def run_ns2(exp: W.Experiment, queue: str, seed: int) -> Run:
    """Runs `exp` in ns-2 and parses its per-flow and queue lines."""
    kind, limit = ("rem", REM_LIMITS[queue]) if queue in REM_LIMITS else (queue, PROFILE.limit)
    args = [ns_binary(), str(SCRIPT), str(seed), f"{exp.duration_s:g}", f"{exp.warmup_s:g}", kind, str(limit),
            f"{PROFILE.min_th:g}", f"{PROFILE.max_th:g}", f"{PROFILE.max_p:g}", *(f"{d:.6g}" for d in exp.access_ms)]
    text = subprocess.run(args, capture_output=True, check=True).stdout.decode("latin-1")
    return _parse_ns2(text, len(exp.access_ms), f"{exp.name}/{queue} seed {seed}")


def run_aqmlab(exp: W.Experiment, queue: str, seed: int) -> Run:
    """The same experiment in aqmlab (the WHITE reproduction's scenario)."""
    if queue in ("red", "drr"):
        spec = W.queue(queue, PROFILE)
    elif queue in REM_LIMITS:
        spec = {"kind": "rem", "limit": REM_LIMITS[queue]}  # ns-2's Queue/REM defaults
    else:
        spec = {"kind": "droptail", "limit": droptail_limit(PROFILE.limit)}  # ns-2 holds L − 1 waiting
    res = aqmlab.run(W.scenario(exp, spec, seed=seed))
    flows = res.flows.sort_values("id")
    q = res.queues.iloc[0]
    # ns-2's goodput is the sender's cumulative `ack_` over the window: in-order delivery, which is
    # aqmlab's `app_goodput_bps` (its `goodput_bps` counts first receipt; docs/results.md).
    return Run(flows["app_goodput_bps"].to_numpy(dtype=float), int(flows["timeouts"].sum()), q["drops"] / q["arrivals"],
               float(q["mean_len_packets"]))


@dataclass(frozen=True)
class Summary:
    """Seed means of one simulator on one case."""

    goodput: float
    drop_rate: float
    timeouts: float
    jfi: float
    clusters: dict[str, float]  # mean per-flow goodput of each RTT cluster, b/s
    mean_queue: float  # bottleneck time-average length, packets
    retransmits: float = 0.0  # retransmitted packets (reported, not held to a tolerance)

    @staticmethod
    def of(exp: W.Experiment | PiExperiment | ProfileCase, runs: list[Run]) -> Summary:
        names = np.array(exp.clusters)
        return Summary(
            goodput=float(np.mean([r.goodput.sum() for r in runs])),
            drop_rate=float(np.mean([r.drop_rate for r in runs])),
            timeouts=float(np.mean([r.timeouts for r in runs])),
            jfi=float(np.mean([jain_index(list(r.goodput)) for r in runs])),
            clusters={c: float(np.mean([r.goodput[names == c].mean() for r in runs])) for c in dict.fromkeys(exp.clusters)},
            mean_queue=float(np.mean([r.mean_queue for r in runs])),
            retransmits=float(np.mean([r.retransmits for r in runs])),
        )


@dataclass(frozen=True)
class Comparison:
    """aqmlab against ns-2 on one case, with each quantity's verdict."""

    case: str
    ours: Summary
    theirs: Summary
    cluster_sizes: dict[str, int]

    def failures(self) -> list[str]:
        """The quantities outside their tolerance, each with both values."""
        out = []

        def rel(name: str, a: float, b: float, tol: float) -> None:
            if abs(a - b) > tol * abs(b):
                out.append(f"{name}: aqmlab {a:.4g} vs ns-2 {b:.4g} (tolerance {tol:.0%})")

        rel("goodput", self.ours.goodput, self.theirs.goodput, TOLERANCE["goodput"])
        rel("drop rate", self.ours.drop_rate, self.theirs.drop_rate, TOLERANCE["drop_rate"])
        rel("timeouts", self.ours.timeouts, self.theirs.timeouts, TOLERANCE["timeouts"])
        if abs(self.ours.jfi - self.theirs.jfi) > TOLERANCE["jfi"]:
            out.append(f"JFI: aqmlab {self.ours.jfi:.3f} vs ns-2 {self.theirs.jfi:.3f} (tolerance {TOLERANCE['jfi']})")
        for c, theirs in self.theirs.clusters.items():
            tol = TOLERANCE["lone_flow"] if self.cluster_sizes[c] == 1 else TOLERANCE["cluster"]
            rel(f"{c} cluster per-flow goodput", self.ours.clusters[c], theirs, tol)
        if self.case.rpartition("/")[2] in MEAN_QUEUE_CHECKED:
            rel("mean queue", self.ours.mean_queue, self.theirs.mean_queue, TOLERANCE["mean_queue"])
        return out


def experiment(name: str) -> W.Experiment:
    """A WHITE experiment; `<exp>-offgrid` shifts flow i's access delay by i·0.037 ms.

    The thesis's delays are whole multiples of 5 ms, so the RTTs differ by whole numbers of
    bottleneck packet times (0.8 ms) and ACK-clocked arrivals of different flows reach a full
    drop-tail queue at the same instant: who gets the freed slot then depends on how each simulator
    orders simultaneous events (Floyd & Jacobson's phase effects). Off that grid, no ties."""
    base, _, variant = name.partition("-")
    exp = W.experiments()[base]
    if variant == "offgrid":
        shifted = tuple(d + i * OFFGRID_STEP_MS for i, d in enumerate(exp.access_ms))
        return dataclasses.replace(exp, name=name, access_ms=shifted)
    return exp


def compare(exp_name: str, queue: str, seeds: tuple[int, ...] = SEEDS) -> Comparison:
    """Runs one case in both simulators over `seeds`."""
    exp = experiment(exp_name)
    ours = Summary.of(exp, [run_aqmlab(exp, queue, s) for s in seeds])
    theirs = Summary.of(exp, [run_ns2(exp, queue, s) for s in seeds])
    sizes = {c: exp.clusters.count(c) for c in dict.fromkeys(exp.clusters)}
    return Comparison(f"{exp_name}/{queue}", ours, theirs, sizes)


def markdown_table(rows: list[Comparison]) -> str:
    """aqmlab / ns-2 side by side, one row per case."""
    lines = ["| case | goodput Mb/s | drop % | mean queue pkts | timeouts | JFI | per-flow goodput by cluster, Mb/s | within tolerance |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        clusters = "; ".join(f"{c} {r.ours.clusters[c] / 1e6:.3f} / {r.theirs.clusters[c] / 1e6:.3f}" for c in r.theirs.clusters)
        verdict = "yes" if not r.failures() else "no: " + "; ".join(r.failures())
        lines.append(f"| {r.case} | {r.ours.goodput / 1e6:.3f} / {r.theirs.goodput / 1e6:.3f} | "
                     f"{100 * r.ours.drop_rate:.2f} / {100 * r.theirs.drop_rate:.2f} | {r.ours.mean_queue:.2f} / {r.theirs.mean_queue:.2f} | {r.ours.timeouts:.0f} / {r.theirs.timeouts:.0f} | "
                     f"{r.ours.jfi:.3f} / {r.theirs.jfi:.3f} | {clusters} | {verdict} |")
    return "\n".join(lines)


def profile_markdown_table(rows: list[Comparison]) -> str:
    """The profile cases: aqmlab / ns-2 side by side, with retransmitted packets (not held to a tolerance)."""
    lines = ["| case | goodput Mb/s | drop % | mean queue pkts | timeouts | retransmitted pkts | JFI | within tolerance |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = "yes" if not r.failures() else "no: " + "; ".join(r.failures())
        lines.append(f"| {r.case} | {r.ours.goodput / 1e6:.3f} / {r.theirs.goodput / 1e6:.3f} | "
                     f"{100 * r.ours.drop_rate:.2f} / {100 * r.theirs.drop_rate:.2f} | {r.ours.mean_queue:.2f} / {r.theirs.mean_queue:.2f} | "
                     f"{r.ours.timeouts:.0f} / {r.theirs.timeouts:.0f} | {r.ours.retransmits:.0f} / {r.theirs.retransmits:.0f} | "
                     f"{r.ours.jfi:.3f} / {r.theirs.jfi:.3f} | {verdict} |")
    return "\n".join(lines)


# ---- PI: Kumar 2003's dumbbell (Sec. 5.1), FTP flows only ----

@dataclass(frozen=True)
class PiExperiment:
    """The PI case: `n_flows` FTP flows over the TSQ dumbbell, all in one cluster."""

    name: str = "kumar-99ftp"
    n_flows: int = 99
    bottleneck_mbps: float = 15.0
    duration_s: float = 100.0
    warmup_s: float = T.WARMUP_S

    @property
    def clusters(self) -> tuple[str, ...]:
        return ("all",) * self.n_flows


PI_EXPERIMENT = PiExperiment()


def run_ns2_pi(exp: PiExperiment, seed: int) -> Run:
    """The PI case in ns-2 (`Queue/PI`, `Agent/TCP/Newreno`)."""
    args = [ns_binary(), str(PI_SCRIPT), str(seed), f"{exp.duration_s:g}", f"{exp.warmup_s:g}", str(exp.n_flows),
            f"{exp.bottleneck_mbps:g}"]
    text = subprocess.run(args, capture_output=True, check=True).stdout.decode("latin-1")
    return _parse_ns2(text, exp.n_flows, f"{exp.name}/pi seed {seed}")


def pi_scenario(exp: PiExperiment, seed: int, *, restart_timer: bool = True) -> dict:
    """The PI case in aqmlab: the TSQ reproduction's scenario with PI alone and no media flow.
    `restart_timer` is the FTP flows' `restart_timer_on_fast_retransmit` (ns-2's behaviour)."""
    sc = T.scenario(exp.bottleneck_mbps, exp.n_flows, None, tsq=False, seed=seed, duration_s=exp.duration_s)
    sc["queue"] = {"kind": "pi", "a": 1.822e-5, "b": 1.816e-5, "sample_rate": 170, "q_ref": 200, "limit": 800}
    sc["flows"][0]["restart_timer_on_fast_retransmit"] = restart_timer
    sc["output"] = {}
    return sc


def run_aqmlab_pi(exp: PiExperiment, seed: int, *, restart_timer: bool = True) -> Run:
    res = aqmlab.run(pi_scenario(exp, seed, restart_timer=restart_timer))
    flows = res.flows.sort_values("id")
    q = res.queues.iloc[0]
    return Run(flows["app_goodput_bps"].to_numpy(dtype=float), int(flows["timeouts"].sum()), q["drops"] / q["arrivals"],
               float(q["mean_len_packets"]))


def compare_pi(exp: PiExperiment = PI_EXPERIMENT, seeds: tuple[int, ...] = SEEDS, *,
               restart_timer: bool = True) -> Comparison:
    """The PI case in both simulators over `seeds`."""
    ours = Summary.of(exp, [run_aqmlab_pi(exp, s, restart_timer=restart_timer) for s in seeds])
    theirs = Summary.of(exp, [run_ns2_pi(exp, s) for s in seeds])
    return Comparison(f"{exp.name}/pi", ours, theirs, {"all": exp.n_flows})


# ---- ns-2 at its defaults against aqmlab's `profile = "ns2"` (validation/ns2/profile_dumbbell.tcl) ----

PROFILE_SCRIPT = SCRIPT.with_name("profile_dumbbell.tcl")


@dataclass(frozen=True)
class ProfileCase:
    """A dumbbell whose TCP is ns-2's at its ns-default.tcl values (`Agent/TCP/Reno` or `Agent/TCP/Sack1`):
    aqmlab runs it with `profile = "ns2"`. Flow i's one-way access delay is `access_lo_ms` plus i times
    the spread step plus i·0.037 ms (off the tie grid, as `exp1-offgrid`)."""

    name: str
    agent: str  # "reno" (aqmlab variant "reno") or "sack1" ("sack")
    ecn: bool
    n_flows: int
    bottleneck_mbps: float
    bottleneck_ms: float
    queue: str  # "red" or "droptail"
    limit: int  # ns-2's queue-limit
    min_th: float = 5.0
    max_th: float = 15.0
    max_p: float = 0.1
    access_lo_ms: float = 5.0
    access_hi_ms: float = 45.0
    duration_s: float = 100.0
    warmup_s: float = 20.0

    @property
    def access_ms(self) -> tuple[float, ...]:
        step = (self.access_hi_ms - self.access_lo_ms) / self.n_flows
        return tuple(self.access_lo_ms + i * step + i * OFFGRID_STEP_MS for i in range(self.n_flows))

    @property
    def clusters(self) -> tuple[str, ...]:
        return ("all",) * self.n_flows


PROFILE_CASES = {
    # 50 Reno + ECN flows under RED (gentle, wait, ns-2's mark_p_ 0.1): marks and drops both.
    "ecn-reno-red": ProfileCase("ecn-reno-red", "reno", True, 50, 20.0, 10.0, "red", 100),
    # 8 Sack1 flows whose 20-packet receiver windows together overfill the path (about 75 packets)
    # and a 30-packet drop-tail buffer: losses come while windows are near the receiver's 20, which
    # then blocks new data in recovery, so RFC 6675's NextSeg has only rules (1) and (3) left.
    "sack1-rwnd20": ProfileCase("sack1-rwnd20", "sack1", False, 8, 10.0, 20.0, "droptail", 30),
}


def droptail_limit(ns2_queue_limit: int) -> int:
    """aqmlab's drop-tail `limit` for ns-2's `queue-limit L`: L − 1. ns-2.35's `DropTail::enque`
    (queue/drop-tail.cc) drops an arrival when `q_->length() + 1 >= qlim_`, and `q_` holds only the
    waiting packets (the one in transmission has left it), so at most L − 1 wait; aqmlab's limit
    counts waiting packets too. (ns-2's RED drops at `qlen >= qlim` and holds L: its limit maps to L.)"""
    return ns2_queue_limit - 1


def run_ns2_profile(case: ProfileCase, seed: int) -> Run:
    """A profile case in ns-2."""
    args = [ns_binary(), str(PROFILE_SCRIPT), str(seed), f"{case.duration_s:g}", f"{case.warmup_s:g}", case.agent,
            str(int(case.ecn)), f"{case.bottleneck_mbps:g}", f"{case.bottleneck_ms:g}", case.queue, str(case.limit),
            f"{case.min_th:g}", f"{case.max_th:g}", f"{case.max_p:g}", *(f"{d:.6g}" for d in case.access_ms)]
    text = subprocess.run(args, capture_output=True, check=True).stdout.decode("latin-1")
    return _parse_ns2(text, case.n_flows, f"{case.name} seed {seed}", with_retransmits=True)


def profile_scenario(case: ProfileCase, seed: int, **tcp: Any) -> dict[str, Any]:
    """A profile case in aqmlab: `profile = "ns2"` flows (`tcp` adds or overrides keys) and the same
    queue: ns-2's RED (`variant = "ns2"`, gentle, wait, mark_p at its ns-2 default) or drop-tail with
    ns-2's `queue-limit` mapped by `droptail_limit`."""
    if case.queue == "red":
        queue = {"kind": "red", "variant": "ns2", "limit": case.limit, "min_th": case.min_th, "max_th": case.max_th,
                 "max_p": case.max_p, "weight": 0.002, "gentle": True, "mean_packet_size": "1000B", "ecn": case.ecn}
    else:
        queue = {"kind": "droptail", "limit": droptail_limit(case.limit)}
    base = {"kind": "tcp", "profile": "ns2", "variant": "sack" if case.agent == "sack1" else "reno", "ecn": case.ecn,
            "start_jitter": "1s", **tcp}
    return {
        "run": {"duration": f"{case.duration_s:g}s", "warmup": f"{case.warmup_s:g}s", "seed": seed},
        "topology": {"bottleneck": {"rate": f"{case.bottleneck_mbps * 1e6:.0f}bps", "delay": f"{case.bottleneck_ms:g}ms"},
                     "access": {"rate": "100000000bps", "delay": "0ms"}},
        "queue": queue,
        "flows": [{**base, "access_delay": f"{d:g}ms"} for d in case.access_ms],
        "output": {},
    }


def run_aqmlab_profile(case: ProfileCase, seed: int, **tcp: Any) -> Run:
    """A profile case in aqmlab. Timeouts are counted as ns-2's `nrexmit_` counts them: without those
    in an ECN-reduced window (`ecn_window_timeouts`, reported with `ecn_style = "ns2"`)."""
    res = aqmlab.run(profile_scenario(case, seed, **tcp))
    flows = res.flows.sort_values("id")
    q = res.queues.iloc[0]
    timeouts = int(flows["timeouts"].sum())
    if "ecn_window_timeouts" in flows:
        timeouts -= int(flows["ecn_window_timeouts"].fillna(0).sum())
    return Run(flows["app_goodput_bps"].to_numpy(dtype=float), timeouts, q["drops"] / q["arrivals"],
               float(q["mean_len_packets"]), int(flows["retransmits"].sum()))


def compare_profile(name: str, seeds: tuple[int, ...] = SEEDS, **tcp: Any) -> Comparison:
    """A profile case in both simulators over `seeds`."""
    case = PROFILE_CASES[name]
    ours = Summary.of(case, [run_aqmlab_profile(case, s, **tcp) for s in seeds])
    theirs = Summary.of(case, [run_ns2_profile(case, s) for s in seeds])
    return Comparison(f"{name}/ns2-profile", ours, theirs, {"all": case.n_flows})


def main() -> None:
    print(f"aqmlab / ns-2.35, means over seeds {', '.join(map(str, SEEDS))}\n")
    print(markdown_table([compare(e, q) for e, q in CASES] + [compare_pi()]))
    print("\nns-2 at its defaults against `profile = \"ns2\"`:\n")
    print(profile_markdown_table([compare_profile(n) for n in PROFILE_CASES]))


if __name__ == "__main__":
    main()
