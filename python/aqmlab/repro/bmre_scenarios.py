"""Scenarios of Cho 2002 (BMRE), experiments E1–E7 (spec `seed003-bmre.md` §3): N long-lived
flows on a 20 Mb/s, 2 ms dumbbell with a 320 kB buffer under BMRE, RED, FRED and DRR.

Set-up choices where Fig. 4.1 and the text are silent (spec §3, each stated in the report):

* Every link 20 Mb/s (the text: "each output link has a capacity of 20 Mbps"); sender access delay
  16 ms and receiver access 2 ms, so the propagation RTT is 2·(16 + 2 + 2) = 40 ms, the thesis's
  "round trip times are about 40 ms" (§4.2.2).
* TCP NewReno as ns-2 ran it (`profile = "ns2"`), 1000-B packets counted whole (`mss` 1000 B,
  `header_bytes` 0: the thesis's byte constants are in these packets), minimum RTO 200 ms (§4.2.2),
  receiver window 1000 packets (spec §2.16: ns-2's 20-packet default would cap small N), no
  delayed ACKs, the retransmission timer restarted at a fast retransmit as ns-2's `dupack_action`
  does (in the profile since 2026-11-29; the runs before that left it running, RFC 6298). Start times uniform in [0, 1) s (spec §3: "random", distribution not given).
* CBR (E3, E4): 1000-B UDP datagrams at 3× the fair share; in E3 `round(0.4·N)` of the N flows.
* TFRC (E6): RFC 5348 with history discounting on (`history_discounting = true`, RFC 5348 §5.5): the
  thesis took "all parameters from [13]", the ns-2 TFRC agent, whose `ns-default.tcl` sets
  `Agent/TFRCSink set discount_ 1` (aqmlab's default is off, the RFC calling it optional).
* The access delay, start jitter and TCP window are parameters of `scenario` (defaults as above) so
  the sensitivity runs can vary the set-up (`bmre_sensitivity.SETUPS`).
* RED and FRED in byte mode with min_th 53 kB, max_th 160 kB, max_p 0.2, w_q 0.002 (ns-2 default,
  not given); RED as ns-2 ran it (`wait`, gentle off); FRED Lin–Morris with minq 2000 B. DRR: one
  bin per flow, quantum 1000 B, longest-queue (bytes) head drop at a 160 kB shared limit (spec §2.14
  reading of "max_th of DRR"). BMRE: the Appendix constants and vth reconstruction R1.
* Goodput over the whole run (eq. 4.2, no warm-up), fair share = 20 Mb/s / N (eq. 4.1).
"""

from __future__ import annotations

from typing import Any

BW_BPS = 20e6
PACKET_BYTES = 1000
BUFFER_BYTES = 320_000
AQMS = ("bmre", "red", "fred", "drr")


#: RED's and FRED's max_p in every run (§4.1: "max_p is set to 0.2 for RED and FRED").
MAX_P = 0.2


def queue(aqm: str, *, mean_packet: int = PACKET_BYTES, max_p: float = MAX_P, **bmre_keys: Any) -> dict[str, Any]:
    """The discipline `aqm` with the thesis's settings (spec §3 "Buffer"); `max_p` for RED and FRED
    only (the §4.2.1 max_p comparison, claim R1c)."""
    if aqm == "bmre":
        return {"kind": "bmre", **bmre_keys}
    # Thresholds in units of mean_packet-byte packets (byte mode): 53 kB and 160 kB.
    unit = mean_packet
    red = {"limit": f"{BUFFER_BYTES}B", "min_th": 53_000 / unit, "max_th": 160_000 / unit, "max_p": max_p,
           "weight": 0.002, "byte_mode": True, "mean_packet_size": f"{unit}B"}
    if aqm == "red":
        return {"kind": "red", **red, "variant": "ns2", "wait": True, "gentle": False}
    if aqm == "fred":
        return {"kind": "fred", **red, "variant": "lin-morris", "minq": 2000 / unit, "max_th_flow_cap": 2}
    if aqm == "drr":
        return {"kind": "drr", "limit_bytes": "160000B", "quantum": f"{PACKET_BYTES}B", "buckets": 0, "longest": "bytes"}
    raise ValueError(f"unknown AQM {aqm!r}; allowed: {', '.join(AQMS)}")


#: Set-up defaults (module docs): sender access delay, start jitter, TCP window in packets.
ACCESS_DELAY_MS = 16.0
START_JITTER_S = 1.0
WINDOW_PKTS = 1000


def tcp(packet: int = PACKET_BYTES, window_pkts: int = WINDOW_PKTS) -> dict[str, Any]:
    """NewReno as in §4.1 and §4.2.2."""
    return {"kind": "tcp", "profile": "ns2", "variant": "newreno", "mss": f"{packet}B", "header_bytes": "0B",
            "min_rto": "200ms", "max_window": f"{window_pkts * packet}B", "delayed_ack": False}


def scenario(aqm_queue: dict[str, Any], *, n_tcp: int, n_cbr: int = 0, cbr_bps: float | None = None,
             n_tfrc: int = 0, packet: int = PACKET_BYTES, duration_s: float = 100.0, seed: int = 1,
             bin_s: float = 0.5, per_flow: bool = True, classes: list[int] | None = None,
             access_delay_ms: float = ACCESS_DELAY_MS, start_jitter_s: float = START_JITTER_S,
             window_pkts: int = WINDOW_PKTS) -> dict[str, Any]:
    """The dumbbell with `n_tcp` TCP, `n_cbr` CBR (each at `cbr_bps`) and `n_tfrc` TFRC flows; the sender
    access delay, start jitter and TCP window (packets) default to the set-up above."""
    flows: list[dict[str, Any]] = []
    access = f"{access_delay_ms:g}ms"
    common = {"start_jitter": f"{start_jitter_s:g}s", "access_delay": access}
    if classes is not None:
        for c in classes:
            flows.append({**tcp(packet, window_pkts), **common, "class": c})
    elif n_tcp:
        flows.append({**tcp(packet, window_pkts), **common, "count": n_tcp})
    if n_cbr:
        flows.append({"kind": "udp-cbr", "rate": f"{cbr_bps:.0f}bps", "packet_size": f"{packet}B", **common,
                      "count": n_cbr})
    if n_tfrc:
        flows.append({"kind": "tfrc", "packet_size": f"{packet}B", "history_discounting": True, **common,
                      "count": n_tfrc})
    return {
        "run": {"duration": f"{duration_s:g}s", "warmup": "0s", "seed": seed},
        "topology": {"bottleneck": {"rate": f"{BW_BPS:.0f}bps", "delay": "2ms"},
                     "access": {"rate": f"{BW_BPS:.0f}bps", "delay": access},
                     "receiver_access": {"rate": f"{BW_BPS:.0f}bps", "delay": "2ms"}},
        "queue": aqm_queue,
        "flows": flows,
        "output": {"per_flow_timeseries": per_flow, "bin": f"{bin_s * 1000:g}ms"},
    }
