"""Scenarios of Lee 2002 (WHITE), Exps 1–6 (spec `seed001-white.md` §3): 30 ns-2-like TCP Reno
flows on a 10 Mb/s, 5 ms dumbbell, with the RTT mixes of ch. 5, under each AQM compared.

Set-up choices where the thesis's Fig. 4.1 is lost (spec §3, each stated in the report):
* TCP: ns-2.1b8 Reno — IW 2, window 64 packets, 1000-byte packets counted whole (no header added on
  top, so `header_bytes = 0`: goodput counts 1000 B per packet as the thesis's 9.98 Mb/s totals do),
  40-byte ACKs (ns-2's `Agent/TCPSink`; their serialisation shifts when ACK-clocked packets reach a
  full queue, docs/validation.md §4), no delayed ACKs, 100 ms timer granularity, 1 s minimum RTO, 6 s
  initial RTO, no timestamps, ns-2's `bugFix_` (`fast_retransmit_guard = "ns2"`: no second fast
  retransmit for a loss in the same window); ECN-Reno for Chablis, whose retransmissions are
  ECT as ns-2's are (`ecn_retransmit_ect = true`: ns-2.35's `TcpAgent::output` sets `ect` on every
  data packet of an ECN agent; RFC 3168 §6.1.5, aqmlab's default, sends them Not-ECT). The RED runs agree with ns-2.35
  itself within the cross-check's tolerances (docs/validation.md §4, `aqmlab.ns2ref`).
  As ns-2's `dupack_action` does, a fast retransmit restarts the retransmission timer
  (`restart_timer_on_fast_retransmit`, found by the PI cross-check; set here since 2026-11-29. Before,
  RED and DRR on Exps 1, 3, 4, seeds 1–3, with it on against off: goodput within 0.6 %, timeouts
  within 2.4 %, drop rate within 0.04 points).
* Access links 100 Mb/s (sensitivity: 10 Mb/s); start times uniform in [0, 1) s.
* The RED settings (buffer, thresholds, max_p, w_q) are calibrated once on the RED baseline and
  then used by every AQM (`calibration_profiles`).
* Exps 5 and 6: the thesis does not say how flows were stopped and restarted. By default
  (`restart = "keep-state"`, the spec's recommendation, §3.1) the application pauses and the TCP
  connection stays, and on return it slow-starts from the initial window after the idle period
  (ns-2's `slow_start_restart_`; TCP keys `resume`, `restart_after_idle`); `"new-connection"`
  (a sensitivity case) opens a fresh connection instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BOTTLENECK_BPS = 10e6
N_FLOWS = 30
PACKET_BYTES = 1000
FAIR_SHARE_MBPS = BOTTLENECK_BPS / 1e6 / N_FLOWS

# The experiments by kind: static (Exps 1–4, one measurement window) and dynamic (Exps 5–6, clusters
# switched on and off per period).
STATIC = ("exp1", "exp2", "exp3", "exp4")
DYNAMIC = ("exp5", "exp6")

# Periods of the dynamic experiments (Fig. 5.5, from the text): which clusters are on.
PERIODS = {"A": (0.0, 30.0), "B": (30.0, 60.0), "C": (60.0, 90.0), "D": (90.0, 120.0)}
ACTIVE = {"A": ("robust", "average", "fragile"), "B": ("average", "fragile"), "C": ("robust", "fragile"),
          "D": ("robust", "average")}


@dataclass(frozen=True)
class Experiment:
    """One RTT scenario: per-flow one-way access delays (ms) and cluster names."""

    name: str
    access_ms: tuple[float, ...]
    clusters: tuple[str, ...]  # per flow
    duration_s: float
    warmup_s: float
    dynamic: bool = False


def _clusters(delays: tuple[float, float, float]) -> tuple[tuple[float, ...], tuple[str, ...]]:
    names = ("robust", "average", "fragile")
    return (tuple(d for d in delays for _ in range(10)), tuple(n for n in names for _ in range(10)))


def experiments() -> dict[str, Experiment]:
    """Exps 1–6 (spec §3.1). RTT_prop = 2·(access + 5 ms)."""
    e2 = _clusters((20.0, 45.0, 95.0))
    e6 = _clusters((5.0, 35.0, 155.0))
    return {
        "exp1": Experiment("exp1", tuple(5.0 * (i + 1) for i in range(N_FLOWS)),
                           tuple("robust" if i < 10 else "average" if i < 20 else "fragile" for i in range(N_FLOWS)),
                           150.0, 30.0),
        "exp2": Experiment("exp2", e2[0], e2[1], 150.0, 30.0),
        "exp3": Experiment("exp3", (5.0,) + (95.0,) * 29, ("robust",) + ("fragile",) * 29, 150.0, 30.0),
        "exp4": Experiment("exp4", (95.0,) + (5.0,) * 29, ("fragile",) + ("robust",) * 29, 150.0, 30.0),
        "exp5": Experiment("exp5", e2[0], e2[1], 120.0, 0.0, dynamic=True),
        "exp6": Experiment("exp6", e6[0], e6[1], 120.0, 0.0, dynamic=True),
    }


@dataclass(frozen=True)
class RedProfile:
    """The RED settings every AQM shares (Fig. 4.1's lost values, calibrated)."""

    name: str
    limit: int
    min_th: float
    max_th: float
    max_p: float
    weight: float = 0.002

    def red_keys(self) -> dict[str, Any]:
        return {"limit": self.limit, "min_th": self.min_th, "max_th": self.max_th, "max_p": self.max_p,
                "weight": self.weight}


def calibration_profiles() -> list[RedProfile]:
    """Candidates for the lost Fig. 4.1 RED settings: ns-2.1b8's defaults (profile A) and
    neighbours that scale the thresholds and buffer or change max_p (spec §3).

    The candidates are ns-2's defaults and common scalings of them, not values fitted to the thesis:
    max_th = 3·min_th (ns-2's 5/15, Floyd's rule of thumb) throughout, and a buffer of at least
    2·max_th so the gentle ramp fits below it (ns-2's 50 for 5/15). The last two (15/45 with 100
    packets, 20/60 with 120) carry the same scaling to larger thresholds and buffers; they were
    added after an audit noted that the earlier set stopped at 10/30 (RED's Exp 1 goodput under
    the old choice, 3/9: 8.45 Mb/s against the thesis's 9.65), so the set now spans buffers from
    30 to 120 packets. The score decides, unchanged."""
    return [
        RedProfile("ns2-default", 50, 5, 15, 0.1),
        RedProfile("ns2-maxp0.05", 50, 5, 15, 0.05),
        RedProfile("ns2-maxp0.2", 50, 5, 15, 0.2),
        RedProfile("thresholds-10-30", 60, 10, 30, 0.1),
        RedProfile("thresholds-3-9", 30, 3, 9, 0.1),
        RedProfile("buffer-100", 100, 5, 15, 0.1),
        RedProfile("thresholds-15-45", 100, 15, 45, 0.1),
        RedProfile("thresholds-20-60", 120, 20, 60, 0.1),
    ]


# FRED's own settings. FRED's `min_th` is also its per-flow cap (LM97's `maxq = min_th` while the
# average is below max_th), so the calibrated RED profile (limit 30, min_th 3) would cap every flow at 3
# queued packets: with 100 Mb/s access links a Reno window arrives as a burst, loses several packets to
# that cap and times out, and the link idles (total goodput 5.9 Mb/s in Exp 1, mean queue 1.3 packets).
# Instead FRED runs with the simulation settings of SSZ98, whose FRED code the thesis used (§4): a 64 KB
# buffer (Stoica's SIGCOMM '98 slides: "link capacity 10 Mbps, buffer capacity 64 KB") = 64 of the
# thesis's 1000-byte packets, thresholds at a quarter and half of it (16/32 KB; recalled from SSZ98 §4,
# not checked against the paper), and min_q = 2 (the thesis's Fig. 2.2 rule: 2 for a small buffer;
# 64 packets for 30 flows is about 2 each). max_p and w_q stay RED's. The calibrated RED profile is kept
# for FRED as a sensitivity case.
FRED_PROFILE = RedProfile("ssz98-64KB", 64, 16, 32, 0.1)
FRED_MINQ = 2


def queue(aqm: str, red: RedProfile, *, alpha: float | None = None, beta: float | None = None,
          drr_buckets: int | None = None, fred: RedProfile | None = None) -> dict[str, Any]:
    """The discipline `aqm` with the shared RED settings (ns-2.1b8 RED: gentle, wait, 500 B); FRED
    with `fred` (default `FRED_PROFILE`) instead."""
    ns2 = {"variant": "ns2", "wait": True, "gentle": True, "mean_packet_size": "500B"}
    if aqm == "red":
        return {"kind": "red", **red.red_keys(), **ns2}
    if aqm.startswith(("chardonnay", "chablis")):
        # "_pa": the factor scales RED's spaced probability instead of p_b (spec §2.1.3's
        # `scale_pa_after_count`); "_lit": p_b times the factor tested directly, without ns-2's count
        # spacing (`literal_no_count`, §3.3 read literally); the plain names use the spec's default reading.
        kind, _, reading = aqm.partition("_")
        q = {"kind": kind, **red.red_keys(), **ns2}
        if reading:
            q["combine"] = COMBINE[reading]
        if alpha is not None:
            q["alpha"] = alpha
        if beta is not None:
            q["beta"] = beta
        return q
    if aqm in ("fred", "fred_parris"):
        # FRED's RED underneath is the documented one (aqmlab has no ns-2 FRED; Stoica's code
        # that the thesis ran is not available): Lin & Morris's full algorithm with minq, and
        # Parris 2001's many-flows variant as a sensitivity case ("fred_parris").
        variant = "parris" if aqm == "fred_parris" else "lin-morris"
        return {"kind": "fred", **(fred or FRED_PROFILE).red_keys(), "minq": FRED_MINQ, "variant": variant,
                "mean_packet_size": "500B"}
    if aqm == "drr":
        q: dict[str, Any] = {"kind": "drr", "limit_bytes": f"{red.limit * PACKET_BYTES}B"}
        if drr_buckets:
            q["buckets"] = drr_buckets
        return q
    if aqm == "csfq":
        return {"kind": "csfq", "limit": red.limit}
    raise ValueError(f"unknown AQM {aqm!r}")


# WHITE's readings of where its factor meets RED's count spacing (spec §2.1.3), by AQM-name suffix;
# no suffix: the spec's default, `scale_pb_before_count`.
COMBINE = {"pa": "scale_pa_after_count", "lit": "literal_no_count"}

RESTART_MODES = ("keep-state", "new-connection")


def scenario(exp: Experiment, queue_spec: dict[str, Any], *, seed: int, ecn: bool = False,
             access_bps: float = 100e6, bin_s: float = 0.25, rtt_hint: str = "sender",
             restart: str = "keep-state", per_flow_bins: bool = False) -> dict[str, Any]:
    """The dumbbell of `exp` under `queue_spec`; `rtt_hint = "sender-vegas"` for ns-2 Vegas's baseRTT
    quirk (spec §2.1.1); `restart` says how a switched-off cluster returns (`RESTART_MODES`);
    `per_flow_bins` records each flow's goodput per bin in the static experiments too (the dynamic
    ones and Exp 2 always record it)."""
    if restart not in RESTART_MODES:
        raise ValueError(f"restart: one of {', '.join(RESTART_MODES)}, got {restart!r}")
    tcp = {"kind": "tcp", "variant": "reno", "mss": f"{PACKET_BYTES}B", "header_bytes": "0B", "ack_bytes": "40B", "initial_window": 2,
           "max_window": f"{64 * PACKET_BYTES}B", "delayed_ack": False, "min_rto": "1s", "initial_rto": "6s",
           "timer_granularity": "100ms", "fast_retransmit_guard": "ns2", "ecn": ecn, "rtt_hint": rtt_hint,
           "restart_timer_on_fast_retransmit": True}  # ns-2's dupack_action: reset_rtx_timer
    if ecn:
        tcp["ecn_retransmit_ect"] = True  # ns-2's TcpAgent::output: retransmissions ECT too
    flows: list[dict[str, Any]] = []
    for i, (delay, cluster) in enumerate(zip(exp.access_ms, exp.clusters, strict=True)):
        base = {**tcp, "access_delay": f"{delay:g}ms"}
        if not exp.dynamic:
            flows.append({**base, "start_jitter": "1s"})
            continue
        # On/off timeline (spec §3.1): robust off in B, average off in C, fragile off in D.
        off = {"robust": "B", "average": "C", "fragile": "D"}[cluster]
        t_off, t_on = PERIODS[off]
        if t_on >= exp.duration_s:
            flows.append({**base, "start_jitter": "1s", "stop": f"{t_off:g}s"})
        elif restart == "keep-state":
            flows.append({**base, "start_jitter": "1s", "stop": f"{t_off:g}s", "resume": f"{t_on:g}s",
                          "restart_after_idle": True})
        else:
            flows.append({**base, "start_jitter": "1s", "stop": f"{t_off:g}s"})
            flows.append({**base, "start": f"{t_on:g}s"})
    return {
        "run": {"duration": f"{exp.duration_s:g}s", "warmup": f"{exp.warmup_s:g}s", "seed": seed},
        "topology": {"bottleneck": {"rate": f"{BOTTLENECK_BPS:.0f}bps", "delay": "5ms"},
                     "access": {"rate": f"{access_bps:.0f}bps", "delay": "0ms"}},
        "queue": queue_spec,
        "flows": flows,
        # Per-flow bins for the dynamic experiments and for Exp 2's cluster time series (Fig. 5.2), and
        # wherever asked for (the main runs: every experiment's per-flow bins are shipped).
        "output": {"per_flow_timeseries": exp.dynamic or exp.name == "exp2" or per_flow_bins,
                   "bin": f"{bin_s * 1000:g}ms"},
    }


def flow_clusters(exp: Experiment, restart: str = "keep-state") -> list[str]:
    """The cluster of each flow of `scenario(exp, …, restart=restart)`, in flow order (dynamic runs
    with new connections have a second flow per returning source)."""
    if not exp.dynamic or restart == "keep-state":
        return list(exp.clusters)
    out = []
    for cluster in exp.clusters:
        out.append(cluster)
        off = {"robust": "B", "average": "C", "fragile": "D"}[cluster]
        if PERIODS[off][1] < exp.duration_s:
            out.append(cluster)
    return out
