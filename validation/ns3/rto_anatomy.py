"""What came before each retransmission timeout, read from bottleneck captures of both simulators.

Usage: python rto_anatomy.py CAPTURE [CAPTURE ...] [--warmup S]

A capture is aqmlab's `bottleneck.pcap` (raw IPv4, ns timestamps, forward direction only) or the
ns-3 reference's `--pcap` output (PPP, µs timestamps, both directions; only segments with payload
are used). Only packets that left the bottleneck queue are in either capture, so a dropped
segment is seen only when it is retransmitted.

Per TCP flow (source address and port), a timeout is inferred where the flow sends nothing for at
least `GAP_S` and then sends a segment below its highest sequence sent. Backoffs count again.
Each timeout gets one class, from the flow's departures in the `LOOKBACK_S` before the silence:

* `after_retransmission`: the flow retransmitted something in that span. It was in loss recovery,
  or had just left it, when the timer expired;
* `no_retransmission`: it retransmitted nothing. The loss was never repaired by fast retransmit,
  typically too few duplicate ACKs.

The script also reports how many segments the flow sent in that span (its window, roughly). These
are inferences from departures, not sender state. Use them to compare the two simulators, not as
exact counts.
"""

from __future__ import annotations

import struct
import sys
from collections import Counter, defaultdict

GAP_S = 0.8  # min RTO is 1 s; departures can shift by up to one queue (~0.15 s here)
LOOKBACK_S = 0.5  # about two RTTs with a full RED queue


def read_pcap(path: str) -> list[tuple[float, tuple[bytes, int], int, int]]:
    """(time_s, flow, seq, payload) for every TCP segment with payload, in capture order."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    scale = {0xA1B23C4D: 1e-9, 0xA1B2C3D4: 1e-6}[magic]
    linktype = struct.unpack("<I", data[20:24])[0]
    skip = {101: 0, 9: 2}[linktype]  # raw IPv4, or PPP (2-byte protocol field)
    out = []
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, _orig = struct.unpack("<IIII", data[off:off + 16])
        pkt = data[off + 16 + skip:off + 16 + incl]
        off += 16 + incl
        if len(pkt) < 40 or pkt[9] != 6:
            continue
        ihl = (pkt[0] & 0x0F) * 4
        total = struct.unpack(">H", pkt[2:4])[0]
        tcp = pkt[ihl:]
        doff = (tcp[12] >> 4) * 4
        payload = total - ihl - doff
        if payload <= 0:
            continue
        sport = struct.unpack(">H", tcp[0:2])[0]
        seq = struct.unpack(">I", tcp[4:8])[0]
        out.append((sec + frac * scale, (pkt[12:16], sport), seq, payload))
    return out


def anatomy(path: str, warmup: float) -> dict[str, float]:
    by_flow: dict[tuple[bytes, int], list[tuple[float, int, int]]] = defaultdict(list)
    for t, flow, seq, payload in read_pcap(path):
        by_flow[flow].append((t, seq, payload))
    classes: Counter[str] = Counter()
    windows: list[int] = []
    segments = retransmissions = 0
    for pkts in by_flow.values():
        high = None  # highest segment start seen (aqmlab's capture does not give payload lengths)
        retx_times: list[float] = []
        times: list[float] = []
        for t, seq, _payload in pkts:
            is_retx = high is not None and (seq - high) % 2**32 >= 2**31 or seq == high  # seq <= high
            if t >= warmup:
                segments += 1
                retransmissions += is_retx
            if times and is_retx and t - times[-1] >= GAP_S and t >= warmup:
                last = times[-1]
                recent = [x for x in retx_times if last - x <= LOOKBACK_S]
                classes["after_retransmission" if recent else "no_retransmission"] += 1
                windows.append(sum(1 for x in times if last - x <= LOOKBACK_S))
            times.append(t)
            if is_retx:
                retx_times.append(t)
            if high is None or (seq - high) % 2**32 < 2**31:
                high = seq
    windows.sort()
    return {"flows": len(by_flow), "segments": segments, "retransmissions_seen": retransmissions,
            "timeouts": sum(classes.values()), **classes,
            "median_segments_in_lookback": windows[len(windows) // 2] if windows else 0,
            "holes": holes(by_flow, warmup)}


def holes(by_flow: dict, warmup: float) -> dict[str, int]:
    """Each segment whose first appearance is a retransmission (its original was dropped), after the
    warm-up, keyed by how many segments above it the flow had sent before that retransmission (3 =
    enough for three duplicate ACKs; capped at 6) and whether the flow was silent for `GAP_S` just
    before it (`+rto`). Sequence numbers are compared segment by segment (full-sized segments)."""
    out: Counter[str] = Counter()
    # Segment size: the commonest step between consecutive sequence numbers over all flows
    # (aqmlab's capture has headers only, so its IP lengths do not give the payload).
    steps = Counter((b[1] - a[1]) % 2**32 for pkts in by_flow.values() for a, b in zip(pkts, pkts[1:]))
    mss = max((d for d in steps if 0 < d < 65536), key=lambda d: steps[d], default=1)
    for pkts in by_flow.values():
        isn = min(seq for _t, seq, _p in pkts[:50])  # the first segments, possibly reordered by a loss
        segs = [(t, ((seq - isn) % 2**32) // mss) for t, seq, _p in pkts]
        seen: set[int] = set()
        high = -1
        for i, (t, s) in enumerate(segs):
            if s < high and s not in seen and t >= warmup:
                above = sum(1 for _x, y in segs[:i] if y > s)
                silent = i > 0 and t - segs[i - 1][0] >= GAP_S
                out[f"{min(above, 6)}{'+rto' if silent else ''}"] += 1
            seen.add(s)
            high = max(high, s)
    return dict(sorted(out.items()))


def main() -> None:
    args = sys.argv[1:]
    warmup = 0.0
    if "--warmup" in args:
        i = args.index("--warmup")
        warmup = float(args[i + 1])
        del args[i:i + 2]
    for path in args:
        print(path, anatomy(path, warmup))


if __name__ == "__main__":
    main()
