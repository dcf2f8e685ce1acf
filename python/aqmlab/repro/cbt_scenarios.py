"""The CBT dissertation's lab (Parris 2001, App. A; spec `seed000-cbt-evaluation.md` §1–2, §4) as
aqmlab scenarios, for its four traffic mixes. HTTP is the browser of `kind = "http"` with Mah's measured
distributions (`distributions = "mah"`), its think-time clip (`think_max`, 206 s) calibrated to the
dissertation's 2.95 kb/s per browser of link load, headers included (3,000 browsers; `HTTP_THINK_MAX`).

* Bottleneck 10 Mb/s, 1 ms each way; the multimedia path has no induced delay (base latency ≈ 2–5 ms
  in the lab).
* TCP: FreeBSD 2.2.8 as Table A.8 gives it — Reno, no SACK, initial window 1, 16 KB windows, delayed
  ACKs; 1448-byte segments with 52 header bytes (1500-byte IP packets with RFC 1323 timestamps); BSD
  timers: 500 ms ticks, 1 s minimum RTO, initial RTO 3 s (not stated in the dissertation). Each of the 5
  server hosts ticks at its own phase (`timer_phase`, drawn per seed): one shared 500-ms grid for all senders
  made timed-out flows of every host retransmit in the same instant.
* BULK: 360 long-lived flows, 12 per (server, client) pair; the pair's induced RTT (Table A.1) is
  split evenly over the two directions of the sender's access link (dummynet delayed the inbound
  ACKs; only the sum matters to TCP). Each flow has a 10 Mb/s access link (the hosts' NICs; 72 flows
  shared one NIC in the lab, which we do not model).
* Multimedia: 4 MPEG or 6 Proshare flows tagged `class = 1` ("UDP to ports 6000–6010"), 30–210 s.
  The lab sent them all from one host through its one 10 Mb/s card (App. A, Fig. A.1); each of ours has
  a 10 Mb/s access link of its own (`MM_ACCESS_RATE`: the scenario format has no link shared by a
  group), so a frame's fragments leave at the card's 10 Mb/s spacing, as in the lab, but two flows'
  frames can overlap where the lab's card serialized them (at ≈ 160–180 KB/s of 1.2 MB/s, rarely).
  Checked before (2 seeds, HTTP-MPEG, BULK-MPEG, HTTP-Proshare, every algorithm, both periods): against
  100 Mb/s per flow, the multimedia loss under RED, FRED, CBT and CBQ moves by at most 1 pkt/s and the
  latency by at most 6 ms; FIFO loses less (blast: BULK-MPEG 32.9 → 25.6, HTTP-MPEG 32.7 → 26.8 pkt/s).
* Other: one UDP blast of 1052-byte packets at 1,270 packets/s through a 10 Mb/s access link, 90–150 s.
* Measurement periods (spec §2.6): multimedia period 35–85 s, blast period 95–145 s. Each period is a
  run that ends at the period's end with the period's start as its warm-up.
"""

from __future__ import annotations

import random
from typing import Any

__all__ = ["MIXES", "ALGORITHMS", "PERIODS", "scenario", "scenario_with", "queue", "cbt_queue", "cbt_queue_for",
           "cbt_thresholds", "cbq_queue", "lab", "bulk_group", "blast_group"]

# Table A.1, induced RTT in ms: servers (rows) × clients (columns).
RTT_MS = [
    [15, 0, 14, 60, 98, 30],
    [30, 15, 28, 112, 42, 50],
    [10, 45, 80, 84, 154, 60],
    [73, 126, 30, 70, 56, 70],
    [40, 5, 96, 15, 49, 110],
]
FLOWS_PER_PAIR = 12  # 360 BULK flows

PERIODS = {"mm": (35.0, 85.0), "blast": (95.0, 145.0)}

# Table 5.3 (CBT, L = 30 ms) and Table 5.4 (CBQ) rows, and the measured mean packet sizes with headers
# (Tables B.17, B.21), for the BULK mixes.
MIXES = {
    "HTTP-MPEG": {"mm": "mpeg", "mm_count": 4, "sizes": {"tcp": 1053, "mm": 889, "other": 1075},
                  "cbt": {"tcp": (25.67, 880), "mm": (6.74, 195), "other": (4.28, 150)},
                  "cbq": {"tcp": 0.72, "mm": 0.16, "other": 0.12}},
    "HTTP-Proshare": {"mm": "proshare", "mm_count": 6, "sizes": {"tcp": 1061, "mm": 738, "other": 1075},
                      "cbt": {"tcp": (26.50, 915), "mm": (6.66, 160), "other": (4.29, 150)},
                      "cbq": {"tcp": 0.75, "mm": 0.13, "other": 0.12}},
    "BULK-MPEG": {"mm": "mpeg", "mm_count": 4, "sizes": {"tcp": 1507, "mm": 807, "other": 1075},
                  "cbt": {"tcp": (17.73, 870), "mm": (7.81, 205), "other": (4.29, 150)},
                  "cbq": {"tcp": 0.72, "mm": 0.16, "other": 0.12}},
    "BULK-Proshare": {"mm": "proshare", "mm_count": 6, "sizes": {"tcp": 1468, "mm": 757, "other": 1075},
                      "cbt": {"tcp": (18.52, 885), "mm": (7.71, 190), "other": (4.29, 150)},
                      "cbq": {"tcp": 0.74, "mm": 0.14, "other": 0.12}},
}

ALGORITHMS = ["FIFO", "RED", "FRED", "CBT", "CBQ"]


def queue(algorithm: str, mix: str) -> dict[str, Any]:
    """The Table 5.1 / 5.3 / 5.4 settings of `algorithm` for `mix`."""
    m = MIXES[mix]
    if algorithm == "FIFO":
        return {"kind": "droptail", "limit": 60}
    if algorithm == "RED":
        return {"kind": "red", "limit": 240, "weight": 1 / 256, "max_p": 0.1, "min_th": 5, "max_th": 40}
    if algorithm == "FRED":
        return {"kind": "fred", "limit": 240, "weight": 1 / 256, "max_p": 0.1, "min_th": 5, "max_th": 60, "minq": 2}
    if algorithm == "CBT":
        return cbt_queue(mix, {name: m["cbt"][name] for name in CBT_CLASSES})
    if algorithm == "CBQ":
        return cbq_queue(m["cbq"])
    raise ValueError(f"unknown algorithm {algorithm!r}; allowed: {', '.join(ALGORITHMS)}")


CBT_CLASSES = ("tcp", "mm", "other")
# Table B.13: per-class EWMA weights (max_p 1/10 and Th_min 5 for TCP; the others are deterministic).
CBT_WEIGHTS = {"tcp": 1 / 256, "mm": 1 / 16, "other": 1 / 4}


def cbt_queue(mix: str, classes: dict[str, tuple[float, float]], sizes: dict[str, float] | None = None) -> dict[str, Any]:
    """A CBT queue for `mix` from `{class: (Th_max packets, allocation KB/s)}` (classes "tcp", "mm",
    "other"), with Table B.13's weights, max_p and Th_min and the mix's measured packet sizes (the
    lab's, Tables B.15–B.21, unless `sizes` gives others)."""
    sizes = sizes or MIXES[mix]["sizes"]
    out = []
    for name, match, tags in (("tcp", "tcp", None), ("mm", "udp", [1]), ("other", "any", None)):
        th, alloc = classes[name]
        c = {"name": name, "match": match, "max_th": th, "weight": CBT_WEIGHTS[name],
             "mean_packet_size": f"{round(sizes[name])}B", "allocation": f"{alloc:g}KiB/s"}
        if tags:
            c["tags"] = tags
        if name == "tcp":
            c |= {"min_th": 5, "max_p": 0.1}
        out.append(c)
    return {"kind": "cbt", "limit": 240, "classes": out}


def cbt_thresholds(mix: str, allocations_kib: dict[str, float], latency_s: float,
                   sizes: dict[str, float] | None = None) -> dict[str, float]:
    """Th_max per class by the configurator's Eq. 4.1 (Th = B·L/P, KB = 1024 B) from the mix's
    measured packet sizes (the lab's, Tables B.15–B.21, unless `sizes` gives others);
    `allocations_kib` is `{class: KB/s}`."""
    from ..models import cbt as model

    sizes = sizes or MIXES[mix]["sizes"]
    specs = [model.ClassSpec(name, sizes[name], rate_bps=model.kib_per_s_to_bps(allocations_kib[name]),
                             responsive=name == "tcp") for name in CBT_CLASSES]
    return {c.name: c.th_max_pkts for c in model.configure(model.PARRIS_LINK_BPS, specs, latency_s)}


def cbt_queue_for(mix: str, allocations_kib: dict[str, float], latency_s: float,
                  sizes: dict[str, float] | None = None) -> dict[str, Any]:
    """A CBT queue for `mix` with thresholds computed for `latency_s` from `{class: KB/s}`."""
    th = cbt_thresholds(mix, allocations_kib, latency_s, sizes)
    return cbt_queue(mix, {name: (th[name], allocations_kib[name]) for name in CBT_CLASSES}, sizes)


def cbq_queue(shares: dict[str, float]) -> dict[str, Any]:
    """The dissertation's CBQ hierarchy (§4.6) with `{class: share of the link}`: TCP and multimedia
    borrow from each other in group "tcp-mm"; other may not borrow."""
    return {"kind": "cbq", "classes": [
        {"name": "tcp", "match": "tcp", "share": shares["tcp"], "parent": "tcp-mm"},
        {"name": "mm", "match": "udp", "tags": [1], "share": shares["mm"], "parent": "tcp-mm"},
        {"name": "other", "share": shares["other"], "borrow": False}]}


# HTTP needs minutes to reach steady state when the browsers start together; the dissertation ran its
# generators 25 min before t = 0. HTTP mixes shift the whole script by this much. The browsers now start
# stationary (`start_mode = "stationary"`: each begins mid-think, in equilibrium), so the load is steady once
# all have joined (60 s jitter): alone on a 1 Gb/s path, seeds 1–5, 3,000 browsers offer 175 B/s each over
# 0–60 s (half join), 373 over 60–120 s, 369 over 120–300 s, 375 over 300–600 s, 372 over 600–1500 s; with
# the synchronized start they rang (435 over 60–120 s, 346 over 120–300 s). 120 s is more than enough and
# is kept, so the script's times stay as they were.
HTTP_OFFSET_S = 120.0
BROWSERS = 3000  # 6 client hosts × 500


def tcp_keys() -> dict[str, Any]:
    """FreeBSD 2.2.8 TCP (Table A.8) as flow keys."""
    return {"variant": "reno", "sack": False, "mss": "1448B", "header_bytes": "52B", "initial_window": 1,
            "max_window": "16384B", "delayed_ack": {"count": 2, "timeout": "200ms"}, "min_rto": "1s",
            "initial_rto": "3s", "timer_granularity": "500ms", "coarse_timer": True, "access_rate": "10Mbps"}


MM_ACCESS_RATE = "10Mbps"  # the multimedia host's 10 Mb/s card (module doc)
SERVER_HOSTS = 5  # Table A.1's rows: the lab's 5 server hosts
TIMER_TICK_S = 0.5  # FreeBSD's slow timer (`timer_granularity` of `tcp_keys()`)


def server_timer_phases(seed: int) -> list[float]:
    """Each server host's coarse-timer phase, seconds in [0, 0.5): the lab's 5 servers (App. A, Table A.1)
    each ran its own 500-ms BSD slow timer from its own boot, so their ticks were out of phase with one
    another, at offsets the dissertation does not give. Drawn uniformly from a stream of the run's seed (not
    the engine's), so one seed always gives the same phases and the seeds sample the unknown offsets."""
    rng = random.Random(f"cbt-server-timer-phase/{seed}")
    return [round(rng.uniform(0.0, TIMER_TICK_S), 6) for _ in range(SERVER_HOSTS)]


def timer_phase_key(servers: list[int], seed: int) -> list[str]:
    """`timer_phase` per flow for flows whose data leaves from server host `servers[i]`."""
    phases = server_timer_phases(seed)
    return [f"{round(phases[s] * 1e6)}us" for s in servers]


# The dissertation calibrated HTTP by the load it measured on the router's inbound link (App. A §3.4.1: a
# regression of 2.9546 kb/s per browser, 3,000 browsers ≈ 1.1 MB/s), headers included. The engine's default clip
# (`think_max` 192 s, `crates/core/src/traffic/http.rs`) calibrates reply *payload* to that rate, so ours offered
# 4.0 % more on the link: a page of 19,074 B of payload goes out in data packets of 1,343.6 B on average (52 B of
# headers, http.rs), 19,842 B on the wire. The clip giving 369.3 B/s of wire load per browser is predicted as the
# engine's was (http.rs: E[min(T, c)] + 1.04 s of fetching = 19,842 B / 369.3 B/s, E from Mah's think-time table;
# that prediction met the measured calibration within 0.1 B/s at 190 s): c = 206 s. The lab's SYN, SYN-ACK and
# FIN packets, which would carry a further share of that measured load, are not modelled (no handshake).
HTTP_WIRE_LOAD_BPS_PER_BROWSER = 2954.6 / 8
HTTP_THINK_MAX = "206s"


def http_group(seed: int = 1) -> dict[str, Any]:
    """3,000 browsers with Mah's distributions (the default, set explicitly: the calibration of `think_max` was
    made with this group) and the wire-load clip `HTTP_THINK_MAX`, started stationary (the default, set explicitly: the load is steady from the
    browsers' start: the comment above HTTP_OFFSET_S); browser b is on client b mod 6 and talks to server
    (b div 6) mod 5, whose Table A.1 RTT it gets (the lab's browsers spread requests over all 5 servers; ours
    keep one), and whose retransmission-timer phase its replies get (`server_timer_phases(seed)`)."""
    servers = [(b // 6) % SERVER_HOSTS for b in range(BROWSERS)]
    one_way_ms = [RTT_MS[servers[b]][b % 6] / 2 for b in range(BROWSERS)]
    return {"kind": "http", "distributions": "mah", "start_mode": "stationary", "count": BROWSERS,
            "think_max": HTTP_THINK_MAX, "start_jitter": "60s", **tcp_keys(), "access_delay": [f"{d:g}ms" for d in one_way_ms],
            "timer_phase": timer_phase_key(servers, seed)}


def bulk_group(seed: int = 1) -> dict[str, Any]:
    """The 360 BULK flows with FreeBSD-like TCP and the Table A.1 RTTs; the 72 flows of server s (row s)
    share that host's retransmission-timer phase (`server_timer_phases(seed)`)."""
    servers = [s for s, row in enumerate(RTT_MS) for _ in row for _ in range(FLOWS_PER_PAIR)]
    one_way_ms = [rtt / 2 for row in RTT_MS for rtt in row for _ in range(FLOWS_PER_PAIR)]
    return {"kind": "tcp", "count": len(one_way_ms), **tcp_keys(), "start_jitter": "2s",
            "access_delay": [f"{d:g}ms" for d in one_way_ms], "timer_phase": timer_phase_key(servers, seed)}


def lab(queue_table: dict[str, Any], flows: list[dict[str, Any]], *, start_s: float, end_s: float, seed: int,
        per_flow: bool = False) -> dict[str, Any]:
    """The lab dumbbell around `queue_table` with `flows`, measured over [start_s, end_s]."""
    return {
        "run": {"duration": f"{end_s:g}s", "warmup": f"{start_s:g}s", "seed": seed},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "1ms"}, "access": {"rate": "100Mbps", "delay": "0.5ms"}},
        "queue": queue_table,
        "flows": flows,
        "output": {"per_flow_timeseries": per_flow, "bin": "1s"},
    }


def blast_group(start_s: float = 90.0, stop_s: float = 150.0) -> dict[str, Any]:
    return {"kind": "udp-cbr", "rate": f"{1052 * 8 * 1270}bps", "packet_size": "1052B", "start": f"{start_s:g}s",
            "stop": f"{stop_s:g}s", "access_rate": "10Mbps"}


# Proshare (App. A §3.3.1): per flow 36 packets/s. Their size as the lab measured it on the link: 738 B
# (HTTP-Proshare, Table B.20) and 757 B (BULK-Proshare, Table B.22), frame lengths with the 14-B Ethernet header,
# so 733.5 B IP packets on average (Table A.2's rounded "700" B of payload + 28 gives 728): 26,406 B/s per flow,
# six flows 158.4 KB/s = 154.7 KiB/s, the text's "approximately 160 KB/s, 1.3 Mb/s". The generator's default
# video frame (1660 B, the text's "13.3 Kb (1.66 KB)" frames at 15/s) gives 27,907 B/s (six: 163.5 KiB/s): the
# dissertation's frame and packet figures disagree by 6 %, and the packet figures are what the lab measured.
# The frame mean giving 26,406 B/s with the generator's spread (10·228 + 15·(v + 28·(1 + P(frame > 1472 B))),
# P from the frame sd 230 B and the 0.12 modulation) is v = 1563 B; its 34.3 packets/s are 1.7 fewer than the
# text's 36 (the same disagreement, now in packets).
PROSHARE_PACKET_WIRE_B = (738 + 757) / 2 - 14
PROSHARE_PPS = 36
PROSHARE_KEYS = {"video_size": "1563B"}

# MPEG: the lab replayed one stretch of the movie, the same in every run, and Table A.4 gives the aggregate load
# of its measurement periods (KB/s, experiment sets A, B, C): period 1 164, 183, 186; period 2 160, 154, 151.
# Period 1 is the blast period: the blast-period loads the text reports, > 196 KB/s in the BULK-MPEG CBQ run
# (Fig. 5.13) and multimedia throughput of 184 KB/s and more once B_mm ≥ 180 (App. B, Fig. B.33), exceed every
# period-2 range (≤ 170). Our generator carries the whole movie's Table A.5 means, 4 × 5 GOP/s × (9,526 B +
# 28 B × 10.95 packets) = 196.7 KB/s (192.0 KiB/s) on the wire, in every period; each period scales the frame
# means by the mean of its three measured loads over that (KB = 1024 B, as the configurator's).
MPEG_MOVIE_WIRE_KIB = 4 * 5 * (9526 + 28 * 10.95) / 1024
MPEG_PERIOD_KIB = {"blast": (164 + 183 + 186) / 3, "mm": (160 + 154 + 151) / 3}
MPEG_MEANS_B = {"i_size": 6916, "p_size": 1646, "b_size": 241}  # Table A.5


def mm_keys(kind: str, period: str) -> dict[str, Any]:
    """The generator keys of the lab's multimedia in `period` ("mm" or "blast"): Proshare's rate from its packet
    figures, MPEG's frame means scaled to the period's measured load (the comments above)."""
    if kind == "proshare":
        return dict(PROSHARE_KEYS)
    f = MPEG_PERIOD_KIB[period] / MPEG_MOVIE_WIRE_KIB
    return {k: f"{v * f:.0f}B" for k, v in MPEG_MEANS_B.items()}


def offset_s(mix: str) -> float:
    """When the script's t = 0 falls in the run: after the HTTP warm-up, at once for BULK."""
    return HTTP_OFFSET_S if mix.startswith("HTTP") else 0.0


def scenario(mix: str, algorithm: str, period: str, seed: int) -> dict[str, Any]:
    """One run of the experiment script, measured over `period` ("mm" or "blast")."""
    return scenario_with(mix, queue(algorithm, mix), period, seed)


def scenario_with(mix: str, queue_table: dict[str, Any], period: str, seed: int) -> dict[str, Any]:
    """`scenario` with any bottleneck queue (the App. B sweeps' parameter variants)."""
    t0 = offset_s(mix)
    start, end = (t0 + t for t in PERIODS[period])
    m = MIXES[mix]
    mm = {"kind": m["mm"], "count": m["mm_count"], "class": 1, "start": f"{t0 + 30:g}s", "stop": f"{t0 + 210:g}s",
          "access_rate": MM_ACCESS_RATE, **mm_keys(m["mm"], period)}
    tcp = http_group(seed) if mix.startswith("HTTP") else bulk_group(seed)
    flows = [tcp, mm] + ([blast_group(t0 + 90, t0 + 150)] if period == "blast" else [])  # no blast in the mm period
    return lab(queue_table, flows, start_s=start, end_s=end, seed=seed)
