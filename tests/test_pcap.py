"""`bottleneck.pcap`: the capture must be self-consistent for Wireshark, i.e. each TCP segment's
sequence number advances by exactly the payload its IP total length says it carries."""

from __future__ import annotations

import struct
from pathlib import Path

import aqmlab


def records(pcap: bytes) -> list[tuple[bytes, bytes]]:
    """(IP header, transport header) of every record of a raw-IPv4 nanosecond pcap."""
    magic, _, _, _, _, _, linktype = struct.unpack("<IHHiIII", pcap[:24])
    assert magic == 0xA1B23C4D and linktype == 101
    out, at = [], 24
    while at < len(pcap):
        _, _, caplen, _ = struct.unpack("<IIII", pcap[at:at + 16])
        frame = pcap[at + 16:at + 16 + caplen]
        ihl = (frame[0] & 0x0F) * 4
        out.append((frame[:ihl], frame[ihl:]))
        at += 16 + caplen
    return out


def test_pcap_seq_advances_by_the_payload_the_ip_length_carries(tmp_path: Path) -> None:
    # No drops (large drop-tail buffer), so every flow's data segments are captured in order.
    # Groups: default headers (52 B, long-lived), a finite transfer (short last segment),
    # header_bytes = 58 (cannot be written as IP + TCP options), and HTTP browsers, whose replies
    # on one connection each end in a short segment (issue #10's audit: a byte gap after each).
    res = aqmlab.run({
        "run": {"duration": "20s", "seed": 3},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "5ms"}},
        "queue": {"kind": "droptail", "limit": 100000},
        "flows": [{"kind": "tcp", "count": 2},
                  {"kind": "tcp", "size": "30000B"},
                  {"kind": "tcp", "header_bytes": "58B", "mss": "1000B"},
                  {"kind": "udp-cbr", "rate": "100kbps", "packet_size": "200B"},
                  {"kind": "http", "count": 10, "start_jitter": "1s"}],
    }, out=tmp_path / "res", pcap=True, plot=False)
    assert res.queues.iloc[0]["drops"] == 0
    next_seq: dict[tuple[bytes, int], int] = {}
    checked = 0
    for ip, l4 in records((tmp_path / "res" / "bottleneck.pcap").read_bytes()):
        ip_total_len = struct.unpack(">H", ip[2:4])[0]
        if ip[9] != 6:
            continue
        sport, _, seq = struct.unpack(">HHI", l4[:8])
        tcp_hdr = (l4[12] >> 4) * 4
        payload = ip_total_len - len(ip) - tcp_hdr
        assert payload >= 0
        if payload == 0:  # a pure ACK (reverse flows would show up here)
            continue
        key = (ip[12:16], sport)
        if key in next_seq and seq >= next_seq[key]:  # new data, not a retransmission
            assert seq == next_seq[key], f"flow {key}: seq {seq}, expected {next_seq[key]}"
            checked += 1
        next_seq[key] = max(next_seq.get(key, 0), seq + payload)
    assert checked > 500
