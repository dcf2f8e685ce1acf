"""The ns-3 reference: the same dumbbell in aqmlab and in ns-3, settings matched point by point.

The cross-check tests (`tests/test_ns3_crosscheck.py`) and the benchmarks (`bench/`) both run
scenarios through here, so the matching lives in one place. The ns-3 side is the C++ program in
`validation/ns3/` (see its README for every ns-3 attribute it sets); `build()` compiles it
against the `ns3` pip wheel, installing the wheel into the current interpreter if needed.

What is matched, and how (docs/validation.md discusses each point):

* wire sizes: ns-3 data frames are MSS + 54 bytes (IP 20, TCP 20, timestamps 12, PPP 2) and pure
  ACKs 54, so aqmlab uses ``header_bytes = 54`` (ACKs get the same size);
* buffer: ns-3 holds ``queueLimit`` packets in the qdisc plus ``devQueue = 1`` in the device
  queue, besides the one on the wire, and its RED sees only the qdisc. aqmlab models the same
  with ``tx_ring = 1`` on the bottleneck and the same limit; queue lengths compared are the
  discipline's own (time-weighted);
* TCP: ns-3's ``TcpNewReno`` with classic recovery and SACK on (ns-3's default) is NewReno
  congestion control with RFC 6675 SACK loss recovery, which is aqmlab's ``variant = "sack"``;
  with ``sack=False`` both run RFC 6582 NewReno without SACK. Recovery (classic or PRR) and limited
  transmit are stated on both sides per scenario; timestamps are on in both. IW 10, delayed ACKs every 2nd segment / 200 ms, min RTO 1 s, initial
  RTO 1 s, G = 1 ms. (A 200 ms minimum RTO with 200 ms delayed ACKs makes ns-3 flows at cwnd 1
  time out spuriously again and again: the lone segment's ACK is delayed as long as the RTO. Both
  simulators would show it; we compare the well-behaved RFC 6298 setting.);
* RED: ns-3's RED is ns-2's, so aqmlab runs ``variant = "ns2"`` with the same thresholds, weight,
  max_p and mean packet size (1500 B);
* Adaptive RED (``adaptive=True``): ns-3's ``ARED=true`` (automatic MinTh, MaxTh and QW from
  the link rate, TargetDelay 5 ms, AdaptMaxP with Interval 0.5 s, Alpha 0.01, Beta 0.9, Top 0.5,
  automatic Bottom) with Gentle on, LInterm = 1/max_p; aqmlab runs ``adaptive = true`` with the
  ns3 adaptation and leaves thresholds, weight and gentle unset, so they are computed the same way
  (docs/ared.md);
* PIE: ns-3's ``PieQueueDisc`` at its defaults, so aqmlab runs ``variant = "ns3"`` (docs/pie.md);
  FQ-PIE likewise (``FqPieQueueDisc``, ``variant = "ns3"``, quantum the device MTU; docs/fq_pie.md);
* COBALT: ns-3's ``CobaltQueueDisc`` at its defaults but for the buffer (given in packets), so
  aqmlab runs ``kind = "cobalt"`` with ``variant = "ns3"``; FQ-COBALT likewise
  (``FqCobaltQueueDisc``, ``variant = "ns3"``, quantum the device MTU; docs/cobalt.md);
* start times: drawn here once and given to both (ns-3 ``--startMode=list``);
* UDP CBR: ns-3's OnOff application paces on payload bytes (1000 B) and sends 1030-byte frames;
  aqmlab paces on wire bytes, so it gets ``rate × 1030/1000`` and 1030-byte packets (its payload is
  then 1002 B, 0.2 % more UDP goodput than ns-3 counts);
* a time-varying bottleneck (``rate_changes``): aqmlab's ``topology.bottleneck.rate_schedule`` and
  dumbbell.cc's ``--rateChanges``, which calls ``PointToPointNetDevice::SetDataRate`` on both
  bottleneck devices. In both a packet keeps the rate its transmission started with, and RED's
  link bandwidth stays the initial rate. ns-3 cannot take a link down, so rates must be nonzero.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .metrics import jain_index

__all__ = ["MatchedScenario", "SCENARIOS", "LEDBAT_SCENARIOS", "BBR_SCENARIOS", "ARED_SCENARIOS", "NLRED_SCENARIOS", "RATE_SCENARIOS", "COBALT_SCENARIOS", "FAST_SCENARIOS", "REPORTED_ONLY", "NEWCOMER", "GRID", "GRID_FACTORS", "PROFILE_SCENARIOS", "HELD_OUT_SCENARIOS",
           "build", "run_ns3", "compare", "timeouts_agree", "red_scaled_to", "NS3_DIR"]

NS3_DIR = Path(__file__).resolve().parents[2] / "validation" / "ns3"

# `MatchedScenario.tcp_per_flow`'s names and the ns-3 SocketType each selects (dumbbell.cc adds "ns3::Tcp").
PER_FLOW_NS3_TYPE = {"newreno": "NewReno", "ledbat": "Ledbat", "bbr": "Bbr"}

DATA_HEADER = 54  # IP 20 + TCP 20 + timestamp option 12 + PPP 2
UDP_HEADER = 30  # IP 20 + UDP 8 + PPP 2


@dataclass(frozen=True)
class MatchedScenario:
    """A dumbbell described once and rendered for both simulators."""

    name: str
    queue: str  # "red", "fifo", "codel", "fq_codel", "pie", "fq_pie", "cobalt" or "fq_cobalt"
    n_tcp: int = 10
    access_delays_ms: tuple[float, ...] = (1.0,)  # one for all, or one per TCP flow
    udp_rate_bps: float = 0.0
    udp_payload: int = 1000
    rate_bps: float = 10e6
    delay_ms: float = 20.0
    access_rate_bps: float = 100e6
    queue_limit: int = 100  # ns-3 qdisc packets
    red: dict[str, float] = field(default_factory=lambda: {"min_th": 5, "max_th": 15, "max_p": 0.1, "weight": 0.002})
    mss: int = 1448
    duration_s: float = 60.0
    warmup_s: float = 10.0
    start_spread_s: float = 1.0
    seed: int = 1
    sack: bool = True
    # Loss recovery without SACK: NewReno (RFC 6582). ``reno=True`` asks for RFC 5681 Reno fast
    # recovery, which ns-3 3.44 does not have (see `ns3_args`); aqmlab can render it, ns-3 cannot.
    reno: bool = False
    delayed_ack: bool = True  # ACK every 2nd segment, 200 ms timer; False: ACK every segment
    initial_window: int = 10  # segments
    # "classic" (ns-3 TcpClassicRecovery: RFC 6582/6675 window inflation) or "prr" (RFC 6937,
    # ns-3's default TcpPrrRecovery); aqmlab's `recovery` key.
    recovery: str = "classic"
    limited_transmit: bool = False  # RFC 3042; aqmlab's `limited_transmit` key
    # Without SACK: aqmlab runs ns-3 3.44's own recovery (`ns3_reno_sack`, its emulated "Reno SACK"
    # scoreboard) instead of RFC 6582 NewReno. ns-3's side is the same either way.
    ns3_reno_sack: bool = False
    # With SACK: aqmlab halves RFC 5681's FlightSize (its default) instead of ns-3's pipe
    # (`ssthresh_from_pipe`, below), to check the default reduction against ns-3 too.
    rfc_flightsize: bool = False
    # "ns3": aqmlab's `profile = "ns3"` against ns-3 at every one of its own TCP
    # defaults (docs/tcp-profiles.md); the TCP fields above are then ignored on both sides.
    profile: str | None = None
    # With profile "ns3": 1448-byte segments and 6 MiB socket buffers on both sides (Linux-sized
    # windows) instead of ns-3's 536 bytes and 128 KiB, everything else at ns-3's defaults.
    large_windows: bool = False
    # Adaptive RED on the RED queue (ns-3 ``ARED=true``; docs/ared.md). ``red`` then gives only
    # the initial max_p; thresholds and weight are automatic on both sides.
    adaptive: bool = False
    # Nonlinear RED on the RED queue (ns-3 ``NLRED=true``, aqmlab ``nonlinear = true``).
    nonlinear: bool = False
    # A load step: the last ``late_flows`` TCP flows start at ``late_start_s`` (plus the same
    # uniform spread) instead of near 0.
    late_flows: int = 0
    late_start_s: float = 0.0
    # A time-varying bottleneck: (time s, rate bps) pairs, times strictly increasing; at each time
    # both directions of the bottleneck change to the rate (aqmlab ``rate_schedule``, ns-3
    # ``--rateChanges``). ``rate_bps`` is the rate from time 0.
    rate_changes: tuple[tuple[float, float], ...] = ()
    # One congestion control per TCP flow, "newreno", "ledbat" (ns-3 `TcpLedbat` at its defaults
    # against aqmlab's `congestion_control = "ledbat"`, `ledbat_variant = "ns3"`) or "bbr" (ns-3
    # `TcpBbr`, which turns pacing on itself, against aqmlab's `bbr` without RACK-TLP, which ns-3
    # 3.44 lacks; SACK only); empty: all NewReno.
    # ns-3: dumbbell.cc's `--tcpPerFlow`, which sets each sender node's SocketType.
    tcp_per_flow: tuple[str, ...] = ()
    # With a profile: keys changed from the profile on both sides, each (aqmlab key, value,
    # ns-3 argument replacing the default one with the same name, or None where ns-3 has no such
    # argument, e.g. the wire size that follows from its headers).
    profile_overrides: tuple[tuple[str, Any, str | None], ...] = ()
    # Explicit TCP start times, s (one per flow), instead of the seeded uniform spread.
    start_times_s: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        times = [t for t, _ in self.rate_changes]
        if any(t < 0 for t in times) or any(b <= a for a, b in zip(times, times[1:])):
            raise ValueError(f"rate_changes: times must be >= 0 and strictly increasing, got {times}")
        if any(r < 0 for _, r in self.rate_changes):
            raise ValueError(f"rate_changes: rates must be >= 0 bps, got {[r for _, r in self.rate_changes]}")
        if self.recovery not in ("classic", "prr"):
            raise ValueError(f"recovery: must be \"classic\" or \"prr\", got {self.recovery!r}")
        if self.profile not in (None, "ns3"):
            raise ValueError(f"profile: only \"ns3\" has an ns-3 counterpart, got {self.profile!r}")
        if self.reno and self.sack:
            raise ValueError("reno: Reno fast recovery is the no-SACK variant; set sack=False")
        if self.large_windows and self.profile != "ns3":
            raise ValueError("large_windows: changes ns-3's default segment and buffer sizes; needs profile=\"ns3\"")
        if self.ns3_reno_sack and (self.sack or self.reno or self.profile):
            raise ValueError("ns3_reno_sack: ns-3's recovery without SACK; needs sack=False, reno=False, no profile")
        if self.adaptive and self.queue != "red":
            raise ValueError("adaptive: Adaptive RED needs queue = \"red\"")
        if self.nonlinear and self.queue != "red":
            raise ValueError("nonlinear: Nonlinear RED needs queue = \"red\"")
        if self.tcp_per_flow and (len(self.tcp_per_flow) != self.n_tcp
                                  or set(self.tcp_per_flow) - set(PER_FLOW_NS3_TYPE) or self.profile):
            raise ValueError(f"tcp_per_flow: one of {' / '.join(map(repr, PER_FLOW_NS3_TYPE))} per TCP flow "
                             f"({self.n_tcp}), without a profile, got {self.tcp_per_flow}")
        if "bbr" in self.tcp_per_flow and not self.sack:
            raise ValueError("tcp_per_flow: \"bbr\" needs sack=True (aqmlab's BBR runs on SACK recovery)")
        if self.profile_overrides and not self.profile:
            raise ValueError("profile_overrides: change a profile's keys; needs profile=\"ns3\"")
        if self.start_times_s and (len(self.start_times_s) != self.n_tcp or self.late_flows):
            raise ValueError(f"start_times_s: one per TCP flow ({self.n_tcp}), without late_flows, "
                             f"got {len(self.start_times_s)}")
        if not 0 <= self.late_flows < self.n_tcp:
            raise ValueError(f"late_flows: must be in [0, n_tcp), got {self.late_flows}")
        if len(self.access_delays_ms) not in (1, self.n_tcp):
            raise ValueError(f"access_delays_ms: one value or one per TCP flow ({self.n_tcp}), "
                             f"got {len(self.access_delays_ms)}")

    def access_delay(self, i: int) -> float:
        return self.access_delays_ms[i] if len(self.access_delays_ms) > 1 else self.access_delays_ms[0]

    def start_times(self) -> list[float]:
        """TCP start times, uniform in [0, start_spread), rounded to the microsecond (or as given)."""
        if self.start_times_s:
            return list(self.start_times_s)
        rng = random.Random(self.seed)
        early = self.n_tcp - self.late_flows
        return [round((self.late_start_s if i >= early else 0.0) + rng.uniform(0, self.start_spread_s), 6)
                for i in range(self.n_tcp)]

    def phases(self) -> list[tuple[float, float, float]]:
        """The measured window split at the rate changes: (start s, end s, rate bps) per phase."""
        cuts = sorted({self.warmup_s, self.duration_s,
                       *(t for t, _ in self.rate_changes if self.warmup_s < t < self.duration_s)})
        rate_at = lambda t: next((r for c, r in reversed(self.rate_changes) if c <= t), self.rate_bps)  # noqa: E731
        return [(a, b, rate_at(a)) for a, b in zip(cuts, cuts[1:])]

    def aqmlab_scenario(self) -> dict[str, Any]:
        """The scenario as an aqmlab dict (one flow group per TCP flow, for its own start and RTT)."""
        queue: dict[str, Any] = {"kind": "droptail", "limit": self.queue_limit}
        if self.queue == "red" and self.adaptive:
            queue = {"kind": "red", "limit": self.queue_limit, "variant": "ns2", "mean_packet_size": "1500B",
                     "adaptive": True, "adaptive_variant": "ns3", "max_p": self.red["max_p"]}
        elif self.queue == "red":
            queue = {"kind": "red", "limit": self.queue_limit, "variant": "ns2", "mean_packet_size": "1500B",
                     **self.red}
        elif self.queue == "codel":
            queue = {"kind": "codel", "limit": self.queue_limit, "variant": "ns3"}
        elif self.queue == "fq_codel":
            # ns-3's quantum is the device MTU, one IP packet; aqmlab's sizes include PPP's 2 bytes.
            queue = {"kind": "fq_codel", "limit": self.queue_limit, "variant": "ns3", "quantum": f"{self.mss + DATA_HEADER}B"}
        elif self.queue == "pie":
            # ns-3's PieQueueDisc at its defaults (dumbbell.cc sets only MaxSize): aqmlab's ns-3
            # variant, whose other defaults are ns-3's (docs/pie.md).
            queue = {"kind": "pie", "limit": self.queue_limit, "variant": "ns3"}
        elif self.queue == "fq_pie":
            # ns-3's FqPieQueueDisc at its defaults: aqmlab's ns-3 variant (ns-3's PIE per queue,
            # overflow from the fattest queue), the quantum the device MTU as for FQ-CoDel, and ECN
            # on as ns-3's UseEcn default (the flows are not ECN-capable, so PIE drops).
            queue = {"kind": "fq_pie", "limit": self.queue_limit, "variant": "ns3", "quantum": f"{self.mss + DATA_HEADER}B",
                     "ecn": True}
        elif self.queue == "cobalt":
            # ns-3's CobaltQueueDisc at its defaults (dumbbell.cc sets only MaxSize, in packets).
            queue = {"kind": "cobalt", "limit": self.queue_limit, "variant": "ns3"}
        elif self.queue == "fq_cobalt":
            # ns-3's FqCobaltQueueDisc at its defaults, the quantum the device MTU as for FQ-CoDel;
            # UseEcn is on there and here (the flows are not ECN-capable, so COBALT drops).
            queue = {"kind": "fq_cobalt", "limit": self.queue_limit, "variant": "ns3",
                     "quantum": f"{self.mss + DATA_HEADER}B", "ecn": True}
        if self.nonlinear:
            queue["nonlinear"] = True
        tcp: dict[str, Any]
        if self.profile:
            # Everything else from the profile (docs/tcp-profiles.md); the wire size is a property
            # of ns-3's headers (timestamps on), so it is stated.
            tcp = {"kind": "tcp", "profile": self.profile, "header_bytes": f"{DATA_HEADER}B"}
            if self.large_windows:
                tcp.update({"mss": f"{LARGE_WINDOW_MSS}B", "max_window": f"{LARGE_WINDOW_BUFFER}B"})
            tcp.update({key: value for key, value, _ in self.profile_overrides})
        else:
            variant = "sack" if self.sack else ("reno" if self.reno else "newreno")
            tcp = {"kind": "tcp", "variant": variant, "mss": f"{self.mss}B", "header_bytes": f"{DATA_HEADER}B",
                   "initial_window": self.initial_window,
                   "delayed_ack": {"count": 2 if self.delayed_ack else 1, "timeout": "200ms"}, "min_rto": "1s",
                   "initial_rto": "1s", "timer_granularity": "1ms", "sack": self.sack}
            # Stated, not left to defaults, so a later change of aqmlab's defaults cannot silently
            # change the comparison. ns-3 runs TcpNewReno (Reno growth) with timestamps on.
            tcp.update({"congestion_control": "reno", "recovery": self.recovery,
                        "limited_transmit": self.limited_transmit, "timestamps": True})
            if self.ns3_reno_sack:
                tcp["ns3_reno_sack"] = True
            if self.sack and not self.rfc_flightsize:
                # ns-3 halves its BytesInFlight (the RFC 6675 pipe), not FlightSize, on every
                # reduction (docs/tcp.md); RFC 5681's FlightSize drops ~17 % more here.
                tcp["ssthresh_from_pipe"] = True
        flows: list[dict[str, Any]] = [
            {**tcp, "start": f"{start}s", "access_delay": f"{self.access_delay(i)}ms"}
            for i, start in enumerate(self.start_times())
        ]
        for flow, cc in zip(flows, self.tcp_per_flow):
            if cc == "ledbat":
                # ns-3's TcpLedbat at its attribute defaults, which are aqmlab's ledbat defaults.
                flow.update({"congestion_control": "ledbat", "ledbat_variant": "ns3"})
            elif cc == "bbr":
                # ns-3 3.44 has no RACK-TLP, and keeps the SACK scoreboard after a timeout
                # (`SetSentListLost(resetSack = !sack)`); without that aqmlab's go-back-N resent
                # whole BBR flights (6.5 Mb/s and 12-20 % drops behind drop-tail, ns-3 9.7 and 2-6 %).
                # BBR sets no ssthresh, so ns-3's pipe-halving rule has nothing to change.
                flow.pop("ssthresh_from_pipe", None)
                flow.update({"congestion_control": "bbr", "rack_tlp": False, "keep_sack_after_timeout": True})
        if self.udp_rate_bps:
            wire = self.udp_payload + UDP_HEADER
            flows.append({"kind": "udp-cbr", "rate": f"{self.udp_rate_bps * wire / self.udp_payload}bps",
                          "packet_size": f"{wire}B", "access_delay": "1ms", "receiver_access_delay": "1ms"})
        bottleneck: dict[str, Any] = {"rate": f"{self.rate_bps}bps", "delay": f"{self.delay_ms}ms", "tx_ring": 1}
        if self.rate_changes:
            bottleneck["rate_schedule"] = [{"at": f"{t}s", "rate": f"{bps}bps"} for t, bps in self.rate_changes]
        return {
            "run": {"duration": f"{self.duration_s}s", "warmup": f"{self.warmup_s}s", "seed": self.seed},
            "topology": {"bottleneck": bottleneck,
                         "access": {"rate": f"{self.access_rate_bps}bps", "delay": "1ms"},
                         "receiver_access": {"rate": f"{self.access_rate_bps}bps", "delay": "1ms"}},
            "queue": queue,
            "reverse_queue": {"kind": "droptail", "limit": 10000},
            "flows": flows,
            "output": {"per_flow_timeseries": False},
        }

    def ns3_args(self) -> list[str]:
        """The same scenario as `validation/ns3/build/dumbbell` options."""
        if self.reno:
            raise ValueError(f"{self.name}: ns-3 3.44 has no Reno fast recovery (RFC 5681, recovery ends at the "
                             "first partial ACK); TcpSocketBase always continues recovery to the recovery "
                             "point as NewReno does, and TcpLinuxReno is only a congestion-avoidance rule")
        delays = ",".join(f"{self.access_delay(i):g}" for i in range(self.n_tcp))
        args = [
            f"--nFlows={self.n_tcp}", f"--bottleneckRate={self.rate_bps:.0f}bps", f"--bottleneckDelay={self.delay_ms:g}",
            f"--accessRate={self.access_rate_bps:.0f}bps", f"--accessDelays={delays}", "--rxAccessDelays=1",
            f"--queue={self.queue}", f"--queueLimit={self.queue_limit}", "--devQueue=1",
        ]
        if self.profile == "ns3":
            large = {"--mss": LARGE_WINDOW_MSS, "--sndBuf": LARGE_WINDOW_BUFFER, "--rcvBuf": LARGE_WINDOW_BUFFER}
            changed = dict(a.split("=", 1) for _, _, a in self.profile_overrides if a)
            for arg in NS3_DEFAULT_TCP_ARGS:
                key = arg.split("=")[0]
                if key in changed:
                    args.append(f"{key}={changed.pop(key)}")
                else:
                    args.append(f"{key}={large[key]}" if self.large_windows and key in large else arg)
            if changed:
                raise ValueError(f"{self.name}: profile_overrides name ns-3 arguments that are not TCP defaults: {changed}")
        else:
            args += [
                "--tcp=NewReno", f"--recovery={self.recovery}", f"--mss={self.mss}",
                f"--delAckCount={2 if self.delayed_ack else 1}", "--delAckTimeout=200",
                f"--initCwnd={self.initial_window}", "--minRto=1000", "--rttInitial=1000", "--clockGranularity=1",
                f"--sack={str(self.sack).lower()}", f"--limitedTransmit={str(self.limited_transmit).lower()}",
                "--timestamps=true",
            ]
        args += [
            f"--duration={self.duration_s:g}", f"--warmup={self.warmup_s:g}", "--startMode=list",
            "--startTimes=" + ",".join(f"{t:.6f}" for t in self.start_times()), f"--seed={self.seed}", "--run=1",
        ]
        if self.queue == "red":
            args += [f"--redMinTh={self.red['min_th']:g}", f"--redMaxTh={self.red['max_th']:g}",
                     f"--redMaxP={self.red['max_p']:g}", f"--redQW={self.red['weight']:g}", "--redGentle=false",
                     "--redWait=true", "--redMeanPktSize=1500"]
            if self.adaptive:
                # ARED=true overwrites MinTh, MaxTh and QW with its automatic values; Gentle is
                # ns-3's default (true) but dumbbell.cc sets it, so it is stated.
                args = [a for a in args if not a.startswith("--redGentle=")] + ["--redGentle=true", "--redAred=true"]
            if self.nonlinear:
                args.append("--redNonlinear=true")
        if self.udp_rate_bps:
            args += ["--nUdp=1", f"--udpRate={self.udp_rate_bps:.0f}bps", f"--udpPktSize={self.udp_payload}",
                     "--udpStart=0", "--udpAccessDelay=1"]
        if self.tcp_per_flow:
            args.append("--tcpPerFlow=" + ",".join(PER_FLOW_NS3_TYPE[c] for c in self.tcp_per_flow))
        if self.rate_changes:
            if any(r == 0 for _, r in self.rate_changes):
                raise ValueError(f"{self.name}: a rate of 0 (a link outage) has no ns-3 counterpart: "
                                 "PointToPointNetDevice cannot stop sending")
            if any(r != int(r) for _, r in self.rate_changes):
                raise ValueError(f"{self.name}: ns-3's DataRate is a whole number of bits per second")
            # repr: the shortest text that parses (strtod) back to the same double.
            args.append("--rateChanges=" + ",".join(f"{float(t)!r}:{int(r)}bps" for t, r in self.rate_changes))
        return args


# ns-3 3.44's own TCP defaults, each stated (dumbbell.cc otherwise sets its matched values). Read
# from `build/dumbbell --PrintAttributes=ns3::TcpSocket` (…TcpSocketBase, TcpL4Protocol,
# RttEstimator); docs/tcp-profiles.md has the table and `test_ns3_default_profile_is_ns3s_defaults`
# checks these against the binary.
NS3_DEFAULT_TCP_ARGS = [
    "--tcp=Cubic", "--recovery=prr", "--mss=536", "--delAckCount=2", "--delAckTimeout=200", "--initCwnd=10",
    "--initSsthresh=4294967295", "--minRto=1000", "--connTimeout=3000", "--rttInitial=1000", "--clockGranularity=1",
    "--sack=true", "--timestamps=true", "--windowScaling=true", "--limitedTransmit=true", "--dupAckThresh=3",
    "--sndBuf=131072", "--rcvBuf=131072",
]


# `large_windows`: a full-sized segment and Linux's largest default buffer (tcp_rmem's 6 MiB).
LARGE_WINDOW_MSS = 1448
LARGE_WINDOW_BUFFER = 6291456


def unequal_rtt(n: int) -> tuple[float, ...]:
    """Sender access delays spread evenly over 1..19 ms, rounded to the microsecond (1, 3, …, 19 for 10
    flows): base RTTs 44 to 80 ms."""
    return tuple(round(1.0 + 18.0 * i / (n - 1), 3) for i in range(n))


UNEQUAL_RTT = unequal_rtt(10)

# The cross-checked scenarios: NewReno with SACK recovery (the four of issue #2), and without SACK
# where both simulators implement the same algorithm (RED keeps losses to one per window).
SCENARIOS = {
    s.name: s
    for s in [
        MatchedScenario("red_10flows", "red"),
        MatchedScenario("fifo_10flows", "fifo"),
        MatchedScenario("fifo_unequal_rtt", "fifo", access_delays_ms=UNEQUAL_RTT),
        MatchedScenario("red_5tcp_udp", "red", n_tcp=5, udp_rate_bps=3e6),
        MatchedScenario("red_10flows_nosack", "red", sack=False),
        MatchedScenario("red_5tcp_udp_nosack", "red", n_tcp=5, udp_rate_bps=3e6, sack=False),
        # CoDel and FQ-CoDel at ns-3's defaults, with its 1000-packet CoDel buffer for both.
        MatchedScenario("codel_10flows", "codel", queue_limit=1000),
        MatchedScenario("fq_codel_10flows", "fq_codel", queue_limit=1000, access_delays_ms=UNEQUAL_RTT),
        # PIE decides, not the buffer: 200 packets is 240 ms at 10 Mb/s, 16x the 15 ms target.
        MatchedScenario("pie_10flows", "pie", queue_limit=200),
        # FQ-PIE at ns-3's defaults but for the buffer: FQ-CoDel's 1000 packets (ns-3: 10240), so
        # each flow's PIE decides, with unequal RTTs so that the scheduler's fairness shows.
        MatchedScenario("fq_pie_10flows", "fq_pie", queue_limit=1000, access_delays_ms=UNEQUAL_RTT),
    ]
}

# Adaptive RED (ns-3 ARED=true against aqmlab's adaptive = true, ns3 adaptation) on the 10 Mb/s RED
# dumbbell: automatic thresholds 5 / 15 (C = 833 packets/s, so min_th = max(5, 2.08)), weight
# 1 - exp(-1/833), gentle, max_p starting at 0.1. 10 flows, 50 flows, and 10 flows joined by 40
# more at 30 s (a load step in the measured window).
ARED_SCENARIOS = {
    s.name: s
    for s in [
        MatchedScenario("ared_10flows", "red", adaptive=True),
        MatchedScenario("ared_50flows", "red", n_tcp=50, adaptive=True),
        MatchedScenario("ared_10to50flows", "red", n_tcp=50, adaptive=True, late_flows=40, late_start_s=30.0),
    ]
}

# Nonlinear RED (ns-3 NLRED=true against aqmlab's nonlinear = true) on the RED dumbbell: thresholds
# 5 / 15, max_p 0.1, so up to 0.15 just below max_th; 10 and 50 flows (the latter keeps the
# average near max_th, where the quadratic and the line differ least), not gentle as SCENARIOS.
NLRED_SCENARIOS = {
    s.name: s
    for s in [
        MatchedScenario("nlred_10flows", "red", nonlinear=True),
        MatchedScenario("nlred_50flows", "red", n_tcp=50, nonlinear=True),
    ]
}

# A time-varying bottleneck: the 10-flow dumbbell at 10 Mb/s drops to 4 Mb/s at 25 s and returns to
# 10 Mb/s at 45 s (both directions; 60 s runs, 10 s warm-up), so the measured window has three
# phases of 15, 20 and 15 s. The queues as in SCENARIOS: drop-tail 100, RED 5/15, and CoDel at
# ns-3's defaults with its 1000-packet buffer. RED's thresholds are in packets and its link
# bandwidth (idle decay only) stays 10 Mb/s on both sides.
RATE_STEP = ((25.0, 4e6), (45.0, 10e6))
RATE_SCENARIOS = {
    s.name: s
    for s in [
        MatchedScenario("fifo_10flows_rate_step", "fifo", rate_changes=RATE_STEP),
        MatchedScenario("red_10flows_rate_step", "red", rate_changes=RATE_STEP),
        MatchedScenario("codel_10flows_rate_step", "codel", queue_limit=1000, rate_changes=RATE_STEP),
    ]
}

# LEDBAT (RFC 6817 as ns-3 3.44's TcpLedbat; docs/ledbat.md) on a 10 Mb/s drop-tail dumbbell with
# a 200-packet buffer (240 ms, above the 100-ms target): one LEDBAT flow alone, and one LEDBAT flow
# against one NewReno flow, which LEDBAT should yield to. 120-s runs (20-s warm-up), so the base
# history rolls over once (ns-3's first bucket ends at 61 s).
LEDBAT_SCENARIOS = {
    s.name: s
    for s in [
        MatchedScenario("ledbat_alone_fifo", "fifo", n_tcp=1, queue_limit=200, tcp_per_flow=("ledbat",),
                        duration_s=120.0, warmup_s=20.0),
        MatchedScenario("ledbat_vs_newreno_fifo", "fifo", n_tcp=2, queue_limit=200, tcp_per_flow=("newreno", "ledbat"),
                        duration_s=120.0, warmup_s=20.0),
    ]
}

# BBR v1 (docs/bbr.md): 4 flows of ns-3's `TcpBbr` against aqmlab's `bbr` on the matched TCP (SACK,
# classic recovery, delayed ACKs, 1 s min RTO), behind drop-tail, CoDel and FQ-CoDel, 30-s runs.
BBR_SCENARIOS = {
    s.name: s
    for s in [
        MatchedScenario(f"bbr_4flows_{queue}", queue, n_tcp=4, tcp_per_flow=("bbr",) * 4, duration_s=30.0, warmup_s=5.0)
        for queue in ("fifo", "codel", "fq_codel")
    ]
}

# COBALT and FQ-COBALT (docs/cobalt.md) at ns-3's defaults, with FQ-CoDel's 1000-packet buffer
# (ns-3's own: 1 500 000 bytes for COBALT, about 1000 of these packets; 10240 packets for FQ-COBALT),
# 10 and 50 flows at 10 Mb/s, the matched TCP of the named scenarios; FQ-COBALT with unequal RTTs
# (44-80 ms) so that the scheduler's fairness shows, as fq_codel_10flows.
COBALT_SCENARIOS = {
    s.name: s
    for s in [
        MatchedScenario("cobalt_10flows", "cobalt", queue_limit=1000),
        MatchedScenario("cobalt_50flows", "cobalt", n_tcp=50, queue_limit=1000),
        MatchedScenario("fq_cobalt_10flows", "fq_cobalt", queue_limit=1000, access_delays_ms=UNEQUAL_RTT),
        MatchedScenario("fq_cobalt_50flows", "fq_cobalt", n_tcp=50, queue_limit=1000, access_delays_ms=unequal_rtt(50)),
        # The same 10-flow dumbbells with ns-3's own TCP defaults on both sides (aqmlab's
        # `profile = "ns3"`: CUBIC, PRR, 536-byte segments, 128 KiB buffers; docs/tcp-profiles.md).
        MatchedScenario("cobalt_10flows_ns3_profile", "cobalt", queue_limit=1000, profile="ns3"),
        MatchedScenario("fq_cobalt_10flows_ns3_profile", "fq_cobalt", queue_limit=1000, profile="ns3",
                        access_delays_ms=UNEQUAL_RTT),
    ]
}


# NewReno without SACK at IW 2, every segment ACKed, 1,460-byte segments, no timestamps and 8 MiB
# buffers: ns-3's profile with the settings of issue #41's held-out cases, stated on both sides.
NOSACK_IW2_NO_TIMESTAMPS = (
    ("variant", "newreno", "--sack=false"),
    ("congestion_control", "reno", "--tcp=NewReno"),
    ("initial_window", 2, "--initCwnd=2"),
    ("delayed_ack", {"count": 1, "timeout": "200ms"}, "--delAckCount=1"),
    ("mss", "1460B", "--mss=1460"),
    ("timestamps", False, "--timestamps=false"),
    ("header_bytes", "42B", None),  # IP 20 + TCP 20 + PPP 2: no timestamp option
    ("max_window", "8388608B", "--sndBuf=8388608"),
    ("max_window", "8388608B", "--rcvBuf=8388608"),
)

# Issue #41's held-out dumbbells, at ns-3's own TCP defaults except where stated:
# * a first flow alone for 250 ms whose slow start overshoots, then four more 50 ms apart and a
#   6 Mb/s UDP flow, over RED: without timestamps Karn's rule held flow 0's backed-off RTO for
#   tens of seconds in aqmlab (0.01 Mb/s) where ns-3's `NewAck` drops the backoff (0.7 Mb/s);
# * 50 flows at 100 Mb/s behind a 200-packet FIFO, 20 s with 5 s of warm-up: goodput must stay
#   below what the link carries (aqmlab reported 100.08 Mb/s of payload on 97.2 possible);
# * COBALT with a 25-packet buffer, 16 CUBIC flows at 30 Mb/s: an extra poll of the discipline
#   each time the link went idle lowered BLUE's drop probability (+5 % goodput against ns-3).
HELD_OUT_SCENARIOS = {
    s.name: s
    for s in [
        MatchedScenario("red_5tcp_udp_overshoot_nosack_ns3_profile", "red", n_tcp=5, udp_rate_bps=6e6,
                        profile="ns3", profile_overrides=NOSACK_IW2_NO_TIMESTAMPS,
                        start_times_s=(0.0, 0.25, 0.30, 0.35, 0.40)),
        # With SACK (ns-3's default): without it, behind drop-tail, ns-3 3.44's emulated-SACK
        # scoreboard resends segments that were never lost (19,360 retransmissions per run to
        # aqmlab's 1,686 here; ns-3 85.5 Mb/s), the divergence `NS3_NOSACK_DROPTAIL` records.
        MatchedScenario("fifo200_50flows_100mbps_ns3_profile", "fifo", n_tcp=50, queue_limit=200, rate_bps=100e6,
                        access_rate_bps=1e9, duration_s=20.0, warmup_s=5.0, profile="ns3",
                        profile_overrides=NOSACK_IW2_NO_TIMESTAMPS[2:]),
        MatchedScenario("cobalt25_16flows_30mbps_ns3_profile", "cobalt", n_tcp=16, queue_limit=25, rate_bps=30e6,
                        profile="ns3"),
    ]
}


def red_scaled_to(rate_bps: float) -> dict[str, float]:
    """The named scenarios' RED (5/15 packets, weight 0.002 at 10 Mb/s) for a faster link: thresholds
    grow with the rate, k = rate / 10 Mb/s, and the weight shrinks as 1/sqrt(k) so the average
    still spans about as many round trips of packets (never above 0.002). The weight is rounded to
    the 6 significant digits ns-3's command line is given, so both simulators use the same number."""
    k = max(1.0, rate_bps / 10e6)
    return {"min_th": 5 * k, "max_th": 15 * k, "max_p": 0.1, "weight": float(f"{min(0.002, 0.002 / k**0.5):g}")}


def _fast(name: str, rate_bps: float, delay_ms: float, n_tcp: int, duration_s: float) -> MatchedScenario:
    """RED on a link `rate_bps / 10 Mb/s` times the named scenarios', access links 10 times the
    bottleneck, a buffer of 100 packets per 10 Mb/s; the matched TCP (SACK, IW 10, delayed ACKs)."""
    k = rate_bps / 10e6
    return MatchedScenario(name, "red", n_tcp=n_tcp, rate_bps=rate_bps, delay_ms=delay_ms, access_rate_bps=10 * rate_bps,
                           queue_limit=int(100 * k), red=red_scaled_to(rate_bps), duration_s=duration_s,
                           warmup_s=duration_s / 3)


# Faster links and longer paths than the 10 Mb/s, 20 ms dumbbell every other scenario uses: 100 Mb/s
# with a 100 ms base RTT (a bandwidth-delay product of 833 packets, windows of ~100 segments per
# flow) and 300 Mb/s with 50 flows and a 48 ms RTT. Same criteria as the named scenarios. ns-3 needs
# about 20 and 45 s per seed for them (aqmlab 0.1-0.15 s).
FAST_SCENARIOS = {
    s.name: s
    for s in [
        _fast("red_100mbps_100ms_10flows", 100e6, 48.0, 10, 60.0),
        _fast("red_300mbps_48ms_50flows", 300e6, 20.0, 50, 20.0),
    ]
}

# NewReno without SACK under drop-tail, where burst losses send both simulators into long
# multi-loss recoveries and ns-3 3.44 retransmits many segments that were never dropped
# (docs/validation.md): reported, their mean queue asserted, the rest strict expected failures.
REPORTED_ONLY = {
    s.name: s
    for s in [
        MatchedScenario("fifo_10flows_nosack", "fifo", sack=False),
        MatchedScenario("fifo_unequal_rtt_nosack", "fifo", access_delays_ms=UNEQUAL_RTT, sack=False),
    ]
}

# Issue #10's report, as a new user ran it: 10 NewReno flows without SACK behind drop-tail 50, IW 2,
# an ACK per segment, no receive-window cap. Before the fixes aqmlab gave 6.4-9.7 Mb/s with 10-12 %
# drops and one flow's mean cwnd above 1,000 segments; ns-3 9.7 Mb/s and 1.9 %. Asserted on goodput
# and drop rate (tests/test_ns3_crosscheck.py); its timeouts are a strict expected failure: drop-tail
# without SACK is where ns-3's emulated-SACK retransmissions dominate (see REPORTED_ONLY).
NEWCOMER = MatchedScenario("fifo50_10flows_nosack_iw2_ack1", "fifo", queue_limit=50, sack=False, initial_window=2,
                           delayed_ack=False)

# The cross-check grid: a covering design over the factors both simulators can run.
#
# The issue asks for 8 two-level factors (queue, SACK, NewReno/Reno, delayed ACK, IW, flow count,
# RTTs, recovery). ns-3 3.44 has no Reno fast recovery (see `MatchedScenario.ns3_args`), so that
# factor is dropped from the ns-3 grid; the other 7 form a 2^(7-3) fractional factorial of
# resolution IV (16 runs; Box, Hunter & Hunter, Statistics for Experimenters, 2nd ed., table 6.14):
# A..D run through all 16 combinations (A fastest) and E = ABC, F = BCD, G = ACD. Every pair of
# factors meets all four level combinations four times (an orthogonal array of strength 3), and no
# main effect is aliased with a two-factor interaction. Level -1 is the first of each pair.
GRID_FACTORS: dict[str, tuple[Any, Any]] = {
    "queue": ("fifo", "red"),  # A
    "sack": (False, True),  # B
    "delayed_ack": (False, True),  # C
    "initial_window": (2, 10),  # D
    "n_tcp": (10, 50),  # E = ABC
    "rtt": ("equal", "unequal"),  # F = BCD
    "recovery": ("classic", "ns3"),  # G = ACD; "ns3" = ns-3's defaults: PRR and limited transmit
}
GRID_GENERATORS = {"n_tcp": ("queue", "sack", "delayed_ack"), "rtt": ("sack", "delayed_ack", "initial_window"),
                   "recovery": ("queue", "delayed_ack", "initial_window")}
# Grid runs are 30 s with a 5 s warm-up (the named scenarios keep 60 s / 10 s): every flow has left
# slow start by 5 s (IW 2 at 44-80 ms RTTs doubles to the fair share within ~1 s), and 25 s holds
# ~2,200 bottleneck drops and hundreds of recovery episodes per run at 10 flows. Halving the length
# halves the ns-3 time of the grid (docs/validation.md has the timings).
GRID_DURATION_S, GRID_WARMUP_S = 30.0, 5.0


def grid_levels() -> list[dict[str, Any]]:
    """The 16 rows of the design as factor -> level, in run order."""
    basic = list(GRID_FACTORS)[:4]
    rows = []
    for i in range(16):
        signs = {f: 1 if (i >> k) & 1 else -1 for k, f in enumerate(basic)}
        for f, gen in GRID_GENERATORS.items():
            signs[f] = signs[gen[0]] * signs[gen[1]] * signs[gen[2]]
        rows.append({f: GRID_FACTORS[f][(signs[f] + 1) // 2] for f in GRID_FACTORS})
    return rows


def grid_scenario(i: int, levels: dict[str, Any]) -> MatchedScenario:
    """Row `i` of the design as a scenario, named after its levels (e.g.
    ``g03_red_nosack_ack1_iw2_50f_equal_classic``)."""
    n = levels["n_tcp"]
    name = "_".join([
        f"g{i:02d}", levels["queue"], "sack" if levels["sack"] else "nosack", "ack2" if levels["delayed_ack"] else "ack1",
        f"iw{levels['initial_window']}", f"{n}f", levels["rtt"], levels["recovery"],
    ])
    ns3_recovery = levels["recovery"] == "ns3"
    return MatchedScenario(
        name, levels["queue"], n_tcp=n, access_delays_ms=unequal_rtt(n) if levels["rtt"] == "unequal" else (1.0,),
        sack=levels["sack"], delayed_ack=levels["delayed_ack"], initial_window=levels["initial_window"],
        recovery="prr" if ns3_recovery else "classic", limited_transmit=ns3_recovery,
        duration_s=GRID_DURATION_S, warmup_s=GRID_WARMUP_S,
    )


GRID = {s.name: s for s in (grid_scenario(i, lv) for i, lv in enumerate(grid_levels()))}

# One more point, outside the design: aqmlab's `profile = "ns3"` (TCP fixes, on main later) against
# ns-3 with all its own TCP defaults (TcpCubic, PRR, limited transmit, MSS 536, 128 KiB buffers;
# docs/tcp-profiles.md), on the RED dumbbell. It runs only once aqmlab knows the key.
PROFILE_SCENARIOS = {
    s.name: s for s in [
        MatchedScenario("red_10flows_ns3_profile", "red", profile="ns3"),
        # Where aqmlab's `cubic-ns3` used to run away (drop rates of 40 %; docs/validation.md).
        MatchedScenario("red_10flows_ns3_profile_large_windows", "red", profile="ns3", large_windows=True),
    ]
}


def build() -> Path:
    """Compiles the ns-3 reference program (installing the `ns3` wheel if needed); returns its path."""
    script = NS3_DIR / "build.sh"
    if not script.exists():
        raise FileNotFoundError(f"{script} not found: the ns-3 reference needs a source checkout of aqmlab")
    env = {**os.environ, "PYTHON": sys.executable}
    proc = subprocess.run([str(script)], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"building the ns-3 reference failed:\n{proc.stderr[-4000:]}")
    return Path(proc.stdout.strip().splitlines()[-1])


def run_ns3(binary: Path, scenario: MatchedScenario, extra: list[str] | None = None) -> dict[str, Any]:
    """Runs ns-3 on `scenario`; returns its JSON report (see validation/ns3/README.md)."""
    proc = subprocess.run([str(Path(binary).resolve()), *scenario.ns3_args(), *(extra or [])], capture_output=True, text=True,
                          cwd=NS3_DIR)
    if proc.returncode != 0:
        raise RuntimeError(f"ns-3 failed on {scenario.name}:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout)


@dataclass
class Comparison:
    """One scenario run in both simulators: the quantities the cross-check compares."""

    name: str
    aqmlab: dict[str, float]
    ns3: dict[str, float]
    aqmlab_wall_s: float  # per run (mean over seeds), aqmlab's own timing of the simulation
    ns3_wall_s: float  # per run (mean over seeds), the ns-3 process from start to exit

    def shares(self, side: str) -> list[float]:
        """Each TCP flow's share of the aggregate TCP goodput (flow goodputs averaged over seeds)."""
        g = getattr(self, side)["per_flow_goodput_bps"]
        total = sum(g)
        return [x / total for x in g] if total else [0.0] * len(g)

    def max_share_difference(self) -> float:
        """The largest difference, over flows, between a flow's share in aqmlab and in ns-3."""
        return max(abs(a - b) for a, b in zip(self.shares("aqmlab"), self.shares("ns3"), strict=True))


SEEDS = (1, 2, 3)


def compare(binary: Path, scenario: MatchedScenario, seeds: tuple[int, ...] = SEEDS) -> Comparison:
    """Runs `scenario` in aqmlab and ns-3 once per seed (start times and RED's random numbers
    change with it) and averages each quantity over the seeds. One seed is not enough: a single
    flow caught in a long multi-loss recovery moves drop rates and fairness by tens of percent."""
    runs = [_compare_one(binary, dataclasses.replace(scenario, seed=seed)) for seed in seeds]
    return Comparison(scenario.name, _mean_over_runs([r.aqmlab for r in runs]), _mean_over_runs([r.ns3 for r in runs]),
                      sum(r.aqmlab_wall_s for r in runs) / len(runs), sum(r.ns3_wall_s for r in runs) / len(runs))


def aqmlab_metrics(scenario: MatchedScenario) -> tuple[dict[str, Any], float]:
    """One aqmlab run of `scenario`: the compared quantities and the run's wall time."""
    from . import api

    rendered = scenario.aqmlab_scenario()
    if scenario.rate_changes:
        rendered["output"]["per_flow_timeseries"] = True  # for the goodput per phase
    ours = api.run(rendered)
    flows, queue = ours.flows, ours.queues.iloc[0]
    tcp = flows[flows["kind"] == "tcp"]
    # ns-3's goodput is its PacketSink's `GetTotalRx` over the window: in-order delivery to the
    # application, which is aqmlab's `app_goodput_bps` (its `goodput_bps` counts first receipt).
    tcp_goodput = tcp["app_goodput_bps"]
    mine = {
        "tcp_goodput_bps": float(tcp_goodput.sum()),
        "tcp_first_receipt_goodput_bps": float(tcp["goodput_bps"].sum()),
        "udp_goodput_bps": float(flows.loc[flows["kind"] != "tcp", "goodput_bps"].sum()),
        "jain_tcp": jain_index(tcp_goodput.tolist()),
        "drop_rate": float(queue["drop_rate"]),
        "mean_queue_pkts": float(queue["mean_len_packets"]),
        "timeouts": float(tcp["timeouts"].sum()),
        "retransmits": float(tcp["retransmits"].sum()),
        "per_flow_goodput_bps": tcp_goodput.tolist(),
    }
    if scenario.rate_changes:
        mine |= _aqmlab_phase_goodputs(scenario, ours.timeseries, [i for i, k in enumerate(flows["kind"]) if k == "tcp"])
    if scenario.adaptive:
        adaptive = ours.summary["queues"][0]["adaptive"]
        mine |= {"max_p_at_end": float(adaptive["max_p_at_end"]), "mean_max_p": float(adaptive["mean_max_p"]),
                 "min_th": float(adaptive["min_th"]), "max_th": float(adaptive["max_th"]),
                 "weight": float(adaptive["weight"])}
    return mine, ours.wall_seconds


def _phase_key(i: int, rate_bps: float) -> str:
    return f"phase{i}_{rate_bps / 1e6:g}Mbps_tcp_goodput_bps"


def _aqmlab_phase_goodputs(scenario: MatchedScenario, ts: Any, tcp_flows: list[int]) -> dict[str, float]:
    """TCP goodput in each phase of `scenario.phases()` from aqmlab's per-flow time series (payload
    delivered in order per bin; a bin belongs to the phase that holds its middle)."""
    bin_s = scenario.duration_s / len(ts)
    for a, b, _ in scenario.phases():
        for t in (a, b):
            if abs(t / bin_s - round(t / bin_s)) > 1e-6:
                raise ValueError(f"{scenario.name}: phase boundary {t} s is not a multiple of the {bin_s} s bin")
    mid = ts["time_s"].to_numpy() - bin_s / 2
    total = ts[[f"flow{i}_goodput_bps" for i in tcp_flows]].sum(axis=1).to_numpy()
    return {_phase_key(k, rate): float(total[(mid > a) & (mid < b)].sum() * bin_s / (b - a))
            for k, (a, b, rate) in enumerate(scenario.phases())}


def _ns3_phase_goodputs(scenario: MatchedScenario, ref: dict[str, Any]) -> dict[str, float]:
    """TCP goodput in each phase of `scenario.phases()` from dumbbell.cc's `rate_phases`."""
    phases = [p for p in ref["rate_phases"] if p["after_warmup"]]
    expected = scenario.phases()
    if [(p["start_s"], p["end_s"], p["rate_bps"]) for p in phases] != [tuple(map(float, e)) for e in expected]:
        raise RuntimeError(f"{scenario.name}: ns-3's phases {phases} are not {expected}")
    return {_phase_key(k, rate): float(p["tcp_goodput_bps"]) for k, (p, (_, _, rate)) in enumerate(zip(phases, expected))}


def _mean_over_runs(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {k: sum(r[k] for r in rows) / len(rows) for k in rows[0] if k != "per_flow_goodput_bps"}
    out["per_flow_goodput_bps"] = [sum(v) / len(rows) for v in zip(*(r["per_flow_goodput_bps"] for r in rows))]
    return out


def aqmlab_mean(scenario: MatchedScenario, seeds: tuple[int, ...] = SEEDS) -> dict[str, Any]:
    """aqmlab alone, averaged over `seeds` as `compare` does (for a variant of a compared scenario)."""
    return _mean_over_runs([aqmlab_metrics(dataclasses.replace(scenario, seed=s))[0] for s in seeds])


def _compare_one(binary: Path, scenario: MatchedScenario) -> Comparison:
    """One run of each simulator."""
    mine, wall = aqmlab_metrics(scenario)
    t0 = time.perf_counter()
    ref = run_ns3(binary, scenario)
    ns3_wall = time.perf_counter() - t0  # the whole process: setup and output too
    ref_tcp = [f for f in ref["flows"] if f["type"] == "tcp"]
    theirs = {
        "tcp_goodput_bps": ref["aggregate"]["tcp_goodput_bps"],
        "udp_goodput_bps": ref["aggregate"]["udp_goodput_bps"],
        "jain_tcp": ref["aggregate"]["jain_fairness_tcp"],
        "drop_rate": ref["bottleneck"]["after_warmup"]["drop_rate"],
        "mean_queue_pkts": ref["bottleneck"]["queue_pkts"]["qdisc_mean_time_weighted_after_warmup"],
        # Every RTO expiry after the warm-up, backoffs included: the event aqmlab's `timeouts`
        # counts. (`rto_loss_episodes` counts entries into CA_LOSS, from the start, so it misses
        # backoffs and includes the warm-up.)
        "timeouts": float(sum(f["rto_expiries_after_warmup"] for f in ref_tcp)),
        "retransmits": float(sum(f["retx_pkts_after_warmup"] for f in ref_tcp)),
        "per_flow_goodput_bps": [f["goodput_bps"] for f in ref_tcp],
    }
    if scenario.rate_changes:
        theirs |= _ns3_phase_goodputs(scenario, ref)
    if scenario.adaptive:
        red = ref["bottleneck"]["red_state"]
        theirs |= {"max_p_at_end": red["cur_max_p_at_end"], "mean_max_p": red["mean_cur_max_p_after_warmup"],
                   "min_th": red["min_th"], "max_th": red["max_th"], "weight": red["qw"]}
    return Comparison(scenario.name, mine, theirs, wall, ns3_wall)


# Timeouts (RTO expiries per run, mean over seeds) agree when within 30 % of ns-3's count or, when
# both are small, within this many of each other. Fixed before the grid was first run: for counts
# near 10 per run, the mean of 3 seeds of a Poisson count has a standard deviation of about 1.8 per
# simulator, 2.6 for the difference, so below ~10 the 30 % band is narrower than the noise.
TIMEOUTS_REL, TIMEOUTS_FLOOR = 0.30, 3.0


def timeouts_agree(ours: float, theirs: float) -> bool:
    """The timeouts criterion: within 30 % of ns-3's count, or within `TIMEOUTS_FLOOR` of it."""
    return abs(ours - theirs) <= max(TIMEOUTS_REL * theirs, TIMEOUTS_FLOOR)


def markdown_table(rows: list[Comparison]) -> str:
    """The comparison as a markdown table (docs/validation.md)."""
    keys = ["tcp_goodput_bps", "udp_goodput_bps", "jain_tcp", "drop_rate", "mean_queue_pkts", "timeouts",
            "retransmits", "mean_max_p", "max_p_at_end"]
    out = [f"Means over seeds {', '.join(map(str, SEEDS))}.", "",
           "| scenario | quantity | aqmlab | ns-3 | aqmlab/ns-3 |", "|---|---|---|---|---|"]
    for r in rows:
        phases = sorted(k for k in r.aqmlab if k.startswith("phase"))
        for k in (k for k in [*keys, *phases] if k in r.aqmlab):
            a, b = r.aqmlab[k], r.ns3[k]
            if a == 0 and b == 0:
                continue
            ratio = f"{a / b:.3f}" if b else "–"
            out.append(f"| {r.name} | {k} | {a:.4g} | {b:.4g} | {ratio} |")
        out.append(f"| {r.name} | max per-flow share difference | {r.max_share_difference():.4f} | | |")
    return "\n".join(out)


def grid_table(rows: dict[str, Comparison]) -> str:
    """The grid as a markdown table: one row per design point, each criterion's measured value."""
    out = ["| # | queue | SACK | del. ACK | IW | flows | RTTs | recovery | goodput a/n | drop rate a/n | "
           "timeouts a : n | max share diff | aqmlab s | ns-3 s |", "|---" * 14 + "|"]
    for i, (name, lv) in enumerate(zip(GRID, grid_levels(), strict=True)):
        r = rows.get(name)
        head = (f"| {i} | {lv['queue']} | {'on' if lv['sack'] else 'off'} | {'2' if lv['delayed_ack'] else '1'} | "
                f"{lv['initial_window']} | {lv['n_tcp']} | {lv['rtt']} | {lv['recovery']} |")
        if r is None:
            out.append(head + " not run | | | | | |")
            continue
        a, n = r.aqmlab, r.ns3
        share = f"{r.max_share_difference():.3f}" if lv["queue"] == "red" else f"({r.max_share_difference():.3f})"
        out.append(head + f" {a['tcp_goodput_bps'] / n['tcp_goodput_bps']:.3f} | {a['drop_rate'] / n['drop_rate']:.3f} | "
                   f"{a['timeouts']:.1f} : {n['timeouts']:.1f} | {share} | {3 * r.aqmlab_wall_s:.2f} | "
                   f"{3 * r.ns3_wall_s:.1f} |")
    return "\n".join(out)


def main() -> None:
    """``python -m aqmlab.ns3ref``: runs the named scenarios and the grid in both simulators and prints
    the tables for docs/validation.md (section 3), with wall times. ``--grid-only`` skips the named
    scenarios."""
    binary = build()
    named = [] if "--grid-only" in sys.argv[1:] else [*SCENARIOS.values(), *ARED_SCENARIOS.values(), *NLRED_SCENARIOS.values(), *RATE_SCENARIOS.values(),
                                                     *COBALT_SCENARIOS.values(), *FAST_SCENARIOS.values(),
                                                     *REPORTED_ONLY.values(), NEWCOMER, *PROFILE_SCENARIOS.values()]
    t0 = time.perf_counter()
    rows = [compare(binary, s) for s in named]
    t_named = time.perf_counter() - t0
    grid = {name: compare(binary, s) for name, s in GRID.items()}
    t_grid = time.perf_counter() - t0 - t_named
    if rows:
        print(markdown_table(rows), end="\n\n")
    print(grid_table(grid), end="\n\n")
    print(markdown_table(list(grid.values())), end="\n\n")
    print(f"Wall time: named scenarios {t_named:.0f} s, grid {t_grid:.0f} s ({len(grid)} of {len(GRID)} points, "
          f"{len(SEEDS)} seeds each)")


if __name__ == "__main__":
    main()
