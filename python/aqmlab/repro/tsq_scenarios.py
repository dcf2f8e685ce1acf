"""The scenarios of Kumar 2003 ch. 5 (spec ``seed002-tsq.md`` §4) for ``aqmlab repro tsq``.

Topology (Sec. 5.1, Fig. 5.1): dumbbell, 50 Mb/s / 50 ms access links on both sides, bottleneck
B Mb/s / 50 ms (150 ms one-way propagation, 300 ms RTT), PI + TSQ at the bottleneck with
a = 1.822e-5, b = 1.816e-5, 170 Hz, q_ref 200, limit 800 packets, l = 40 ms.

Unstated details and the choices made here (spec §4.3), all in ``docs/tsq.md``:

* every data packet is 1000 B on the wire (TCP: 960 B payload + 40 B header), ACKs 40 B;
* FTP: long-lived TCP NewReno with ns-2's defaults (``profile = "ns2"``: window_ 20 packets,
  IW 2, no delayed ACKs, min RTO 0.2 s) and, as ns-2's agents do, the retransmission timer restarted
  at a fast retransmit (``restart_timer_on_fast_retransmit``; the ns-2 cross-check's PI case,
  docs/validation.md §4), hint 16;
* "TCP-friendly CBR" audio/video: **TCP NewReno driven by a CBR application** (``app_rate``: ns-2's
  ``Agent/TCP`` + ``Application/Traffic/CBR``), the application writing 1000-B packets at the nominal
  rate (128 Kb/s audio = 16 pkt/s, 500 Kb/s video = 62.5 pkt/s); the sensitivity variants are a plain
  UDP CBR source at the same rate (unresponsive) and a CBR application over an application-limited
  TFRC sender (RFC 5348: the nominal rate unless the equation allows less);
* UDP "audio" of E4 at 600 Kb/s and of E5 at 128 Kb/s (E5's rate is not given), 1000-B datagrams;
* start times uniform in [0, 5) s, the first 20 s discarded (warm-up), several seeds.
"""

from __future__ import annotations

from typing import Any

ACCESS = {"rate": "50Mbps", "delay": "50ms"}
BOTTLENECK_DELAY = "50ms"
PROPAGATION_ONE_WAY_S = 0.150
PACKET_BYTES = 1000
TCP_PAYLOAD = 960  # + 40 B TCP/IP header = 1000 B on the wire
UDP_PAYLOAD = PACKET_BYTES - 28  # the core's UDP counts IP + UDP headers (28 B) inside packet_size
WARMUP_S = 20.0
START_JITTER = "5s"
L_CONST = "40ms"
FTP_FILE_KBITS = 15_000.0  # S of Q_t = T/S (unstated; ≥ the bottleneck rate, so the cap never binds)

MEDIA_MODELS = ("tcp-cbr", "udp-cbr", "tfrc-cbr")
AUDIO_KBPS, VIDEO_KBPS, UDP_E4_KBPS, UDP_E5_KBPS = 128.0, 500.0, 600.0, 128.0

# ns-2's Agent/TCP/Newreno: `dupack_action` restarts the retransmission timer (reset_rtx_timer(1,0)).
NS2_NEWRENO = {"kind": "tcp", "profile": "ns2", "variant": "newreno", "mss": f"{TCP_PAYLOAD}B", "header_bytes": "40B",
               "restart_timer_on_fast_retransmit": True}
FTP = {**NS2_NEWRENO, "start_jitter": START_JITTER, "delay_hint": 16, "class": 0}


def media_group(model: str, kbps: float, hint: int, count: int = 1) -> dict[str, Any]:
    """`count` media flows of nominal wire rate `kbps` (1000-B packets) with delay hint `hint`."""
    if model == "tcp-cbr":
        # The application writes 960-B segments, 1000 B on the wire: kbps·960/1000 of payload.
        return {**NS2_NEWRENO, "app_rate": f"{kbps * TCP_PAYLOAD / PACKET_BYTES:.6g}kbps", "start_jitter": START_JITTER,
                "delay_hint": hint, "class": 1, "count": count}
    if model == "udp-cbr":
        return {"kind": "udp-cbr", "rate": f"{kbps:.6g}kbps", "packet_size": f"{PACKET_BYTES}B", "start_jitter": START_JITTER,
                "delay_hint": hint, "class": 1, "count": count}
    if model == "tfrc-cbr":
        # TFRC's packet_size is the wire size; app_rate counts the 972-B payloads.
        return {"kind": "tfrc", "packet_size": f"{PACKET_BYTES}B", "app_rate": f"{kbps * UDP_PAYLOAD / PACKET_BYTES:.6g}kbps",
                "start_jitter": START_JITTER, "delay_hint": hint, "class": 1, "count": count}
    raise ValueError(f"model must be one of {', '.join(MEDIA_MODELS)}, got {model!r}")


def wire_per_payload(kind: str) -> float:
    """Wire bits per payload bit of a media or FTP flow (throughput in the thesis's 1000-B packets)."""
    return PACKET_BYTES / (TCP_PAYLOAD if kind == "tcp" else UDP_PAYLOAD)


def scenario(bottleneck_mbps: float, n_ftp: int, media: dict[str, Any] | None, *, tsq: bool, seed: int,
             duration_s: float, per_flow: bool = False, queue_extra: dict[str, Any] | None = None,
             warmup_s: float = WARMUP_S) -> dict[str, Any]:
    """One run: `n_ftp` FTP flows and the `media` group over PI (tsq=False) or TSQ over PI; the first
    `warmup_s` seconds are discarded (0: the spec's "thesis-like" variant, all data, §4.3)."""
    flows = []
    if n_ftp > 0:
        flows.append({**FTP, "count": n_ftp})
    if media is not None:
        flows.append(media)
    queue = {"kind": "tsq", "enabled": tsq, "latency": L_CONST, "a": 1.822e-5, "b": 1.816e-5, "sample_rate": 170,
             "q_ref": 200, "limit": 800, **(queue_extra or {})}
    return {"run": {"duration": f"{duration_s:g}s", "warmup": f"{warmup_s:g}s", "seed": seed},
            "topology": {"bottleneck": {"rate": f"{bottleneck_mbps:g}Mbps", "delay": BOTTLENECK_DELAY},
                         "access": dict(ACCESS), "receiver_access": dict(ACCESS)},
            "queue": queue, "flows": flows,
            # The per-flow runs draw the CDFs: every media packet's delay (class tag 1).
            "output": {"bin": "50ms", "per_flow_timeseries": per_flow,
                       "packet_delays": [1] if per_flow and media is not None else []}}


# ---- the five experiments (spec §4.2) ----

def e1(hint: int, *, tsq: bool, seed: int, duration_s: float, model: str = "tcp-cbr", queue_extra=None,
       warmup_s: float = WARMUP_S) -> dict:
    """E1 (Sec. 5.2): 15 Mb/s, 99 FTP + 1 audio at 128 Kb/s with hint `hint`. With `warmup_s` other than
    the default (the no-warm-up variant) no per-flow series or packet delays are recorded (no CDFs)."""
    return scenario(15, 99, media_group(model, AUDIO_KBPS, hint), tsq=tsq, seed=seed, duration_s=duration_s,
                    per_flow=warmup_s == WARMUP_S, queue_extra=queue_extra, warmup_s=warmup_s)


def e2(hint: int, *, tsq: bool, seed: int, duration_s: float, model: str = "tcp-cbr") -> dict:
    """E2 (Sec. 5.3): 4 Mb/s, 19 FTP + 1 video at 500 Kb/s with hint `hint`."""
    return scenario(4, 19, media_group(model, VIDEO_KBPS, hint), tsq=tsq, seed=seed, duration_s=duration_s, per_flow=True)


def e3(n_audio: int, *, tsq: bool, seed: int, duration_s: float, queue_extra=None, warmup_s: float = WARMUP_S) -> dict:
    """E3 (Sec. 5.4): 15 Mb/s, `n_audio` TCP-friendly audio flows (hint 6) and 100 − n FTP."""
    return scenario(15, 100 - n_audio, media_group("tcp-cbr", AUDIO_KBPS, 6, n_audio), tsq=tsq, seed=seed,
                    duration_s=duration_s, queue_extra=queue_extra, warmup_s=warmup_s)


def e4(hint: int, *, tsq: bool, seed: int, duration_s: float) -> dict:
    """E4 (Sec. 5.5.1-2): 15 Mb/s, 99 FTP + 1 unresponsive UDP flow at 600 Kb/s with hint `hint`."""
    return scenario(15, 99, media_group("udp-cbr", UDP_E4_KBPS, hint), tsq=tsq, seed=seed, duration_s=duration_s)


def e5(n_udp: int, *, tsq: bool, seed: int, duration_s: float) -> dict:
    """E5 (Sec. 5.5.3): 15 Mb/s, `n_udp` UDP audio flows at 128 Kb/s (hint 6) and 100 − n FTP."""
    return scenario(15, 100 - n_udp, media_group("udp-cbr", UDP_E5_KBPS, 6, n_udp), tsq=tsq, seed=seed,
                    duration_s=duration_s)
