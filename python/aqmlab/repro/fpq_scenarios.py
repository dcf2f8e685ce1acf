"""Morris 1999's simulation set-up as aqmlab scenarios (spec `seed004-fpq.md` §3.6, §4, Fig. 3.2).

* TCP as ns-1.4 ran it: Tahoe (Reno for comparison), 576-byte packets (536 payload + 40 header),
  40-byte ACKs, initial window 1, 64 KB window (113 packets), delayed ACKs every second packet
  with a 0.2 s timer, 0.5 s timer ticks (coarse timer, G = 0.5 s), minimum RTO 1 s, initial 3 s.
  Our RTO is RFC 6298's SRTT + max(G, 4·RTTVAR) clamped to 1 s; ns-1.4 rounds SRTT + 4·RTTVAR to
  ticks with a 2-tick floor. At these RTTs (10–100 ms, well under one tick) both give 1 s.
* Topology: N senders on access links of 100/N Mb/s (10× the fair share) with uniform 0–10 ms
  delay (0–1 ms in the 10 ms-RTT runs of Ch. 5, the spec's suggested scaling), a 10 Mb/s bottleneck
  of 45 ms (4.5 ms), sinks attached to the far router with negligible delay. Access links
  serialise packets faithfully (46 ms per packet at 1000 flows).
* Connections start uniformly in the first 10 s; statistics exclude a warm-up (20 s by default;
  the thesis does not say, spec §4).
"""

from __future__ import annotations

from typing import Any

MSS = 536
HEADER = 40
PACKET_BITS = (MSS + HEADER) * 8
LINK_BPS = 10e6
PPS = LINK_BPS / PACKET_BITS  # 2170 packets/s
BDP_PKTS = 217.0  # 10 Mb/s × 100 ms in 576-byte packets, as the thesis rounds it

__all__ = ["tcp_group", "scenario", "red", "fpq", "droptail", "random_drop", "MSS", "PPS", "BDP_PKTS"]


def tcp_group(n: int, *, variant: str = "tahoe", rtt_ms: float = 100.0, transfers: dict[str, Any] | None = None,
              access_delay_ms: float | None = None) -> dict[str, Any]:
    """One `[[flows]]` group of `n` ns-1.4 TCP senders."""
    jitter_ms = 10.0 if rtt_ms >= 50 else 1.0
    group: dict[str, Any] = {
        "kind": "tcp", "count": n, "variant": variant,
        "mss": f"{MSS}B", "header_bytes": f"{HEADER}B", "initial_window": 1, "max_window": f"{113 * MSS}B",
        "delayed_ack": {"count": 2, "timeout": "200ms"},
        "min_rto": "1s", "initial_rto": "3s", "timer_granularity": "500ms", "coarse_timer": True,
        "start_jitter": "10s", "access_rate": f"{100 / n:.6g}Mbps",
    }
    if access_delay_ms is None:
        group |= {"access_delay": "0ms", "access_delay_jitter": f"{jitter_ms:g}ms"}
    else:
        group["access_delay"] = f"{access_delay_ms:g}ms"
    if transfers:
        group |= transfers
    return group


def scenario(n: int, queue: dict[str, Any], *, duration_s: float, warmup_s: float, seed: int, rtt_ms: float = 100.0,
             loss: float | None = None, variant: str = "tahoe", transfers: dict[str, Any] | None = None,
             access_delay_ms: float | None = None, per_flow: bool = False) -> dict[str, Any]:
    """The Fig. 3.1 dumbbell with `n` flows through `queue`."""
    one_way_ms = 45.0 if rtt_ms >= 50 else 4.5
    bottleneck: dict[str, Any] = {"rate": "10Mbps", "delay": f"{one_way_ms}ms"}
    if loss is not None:
        bottleneck["loss"] = loss
    return {
        "run": {"duration": f"{duration_s:g}s", "warmup": f"{warmup_s:g}s", "seed": seed},
        "topology": {"bottleneck": bottleneck, "access": {"rate": "100Mbps", "delay": "0ms"},
                     "receiver_access": {"rate": "10Gbps", "delay": "0ms"}},
        "queue": queue,
        "reverse_queue": {"kind": "droptail", "limit": 100000},
        "flows": [tcp_group(n, variant=variant, rtt_ms=rtt_ms, transfers=transfers, access_delay_ms=access_delay_ms)],
        "output": {"per_flow_timeseries": per_flow, "bin": "100ms"},
    }


def droptail(limit: int) -> dict[str, Any]:
    return {"kind": "droptail", "limit": limit}


def random_drop(limit: int) -> dict[str, Any]:
    return {"kind": "random-drop", "limit": limit}


def red(max_th: float, max_p: float, *, min_th: float = 5, weight: float = 0.002) -> dict[str, Any]:
    """ns-1.4 RED as the thesis ran it: count-spaced drops without `wait`, no hard limit (§3.3)."""
    return {"kind": "red", "variant": "ns2", "wait": False, "min_th": min_th, "max_th": max_th, "max_p": max_p,
            "weight": weight, "limit": "none", "mean_packet_size": f"{MSS + HEADER}B"}


def fpq(*, t_clear_s: float = 4.0, ppf: float = 5.0, loss_cap: float = 0.016, bits: int = 5000) -> dict[str, Any]:
    """FPQ with the Sec. 6.4 settings (v_max 5000, t_clear 4 s, r = 217)."""
    return {"kind": "fpq", "bdp_pkts": BDP_PKTS, "ppf": ppf, "loss_cap": loss_cap,
            "counter": {"bits": bits, "t_clear": f"{t_clear_s:g}s"}}
