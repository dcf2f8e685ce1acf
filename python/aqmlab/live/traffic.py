"""The traffic of a live run, inside one network namespace (run by ``ip netns exec``).

One process per namespace plays every flow end that lives there: it listens for the flows it
receives, connects and sends for the flows it sends, and counts what arrives in time bins.
Real Linux TCP does the work; this program only opens sockets, writes and reads.

Protocol with the parent (``aqmlab.live.runner``): argv is ``traffic.py PLAN.json``; the
program prints ``ready`` once its listening sockets are bound, reads the run's epoch
(CLOCK_MONOTONIC nanoseconds, time zero of the scenario) from stdin, runs until the epoch plus
the duration, and prints one JSON line with its measurements.

Deliberately standalone (standard library only, not importing ``aqmlab``): it starts in a
fraction of the time the package with numpy and pandas would take.
"""

from __future__ import annotations

import heapq
import itertools
import json
import selectors
import socket
import struct
import sys
import time

CHUNK = bytes(65536)
TCP_CONGESTION = getattr(socket, "TCP_CONGESTION", 13)
TCP_INFO = getattr(socket, "TCP_INFO", 11)
# Offsets in struct tcp_info (linux/tcp.h), stable since 2.6: snd_mss, rtt (µs), snd_cwnd, total_retrans.
TCPI_SND_MSS, TCPI_RTT, TCPI_SND_CWND, TCPI_TOTAL_RETRANS = 16, 68, 80, 100
# tcpi_total_rto (u16, retransmission timeouts so far), appended in Linux 6.7 after tcpi_rehash.
TCPI_TOTAL_RTO = 240
TCPI_LEN = 248


class Timers:
    """Actions due at CLOCK_MONOTONIC instants; equal instants run in the order they were set."""

    def __init__(self) -> None:
        self.heap: list = []
        self.order = itertools.count()

    def at(self, due_ns: int, action) -> None:
        heapq.heappush(self.heap, (due_ns, next(self.order), action))

    def next_due(self) -> int | None:
        return self.heap[0][0] if self.heap else None

    def run_due(self, now_ns: int) -> None:
        """Runs every action due by ``now_ns``, each with its own due time (so a periodic action
        can set its next one from it, not from the late wake-up)."""
        while self.heap and self.heap[0][0] <= now_ns:
            due, _, action = heapq.heappop(self.heap)
            action(due)


class Bins:
    """Byte counts per time bin from the epoch."""

    def __init__(self, epoch_ns: int, bin_s: float, n: int) -> None:
        self.epoch_ns, self.bin_ns, self.counts = epoch_ns, int(round(bin_s * 1e9)), [0] * n

    def add(self, nbytes: int) -> None:
        i = (time.monotonic_ns() - self.epoch_ns) // self.bin_ns
        if 0 <= i < len(self.counts):
            self.counts[i] += nbytes


class Receiver:
    """The receiving end of one flow: counts payload bytes per bin."""

    def __init__(self, flow: dict, sel: selectors.BaseSelector) -> None:
        self.flow, self.sel = flow, sel
        kind = socket.SOCK_STREAM if flow["kind"] == "tcp" else socket.SOCK_DGRAM
        self.listener = socket.socket(socket.AF_INET, kind)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("0.0.0.0", flow["port"]))
        self.listener.setblocking(False)
        if kind == socket.SOCK_STREAM:
            self.listener.listen(4)
            sel.register(self.listener, selectors.EVENT_READ, self.accept)
        else:
            sel.register(self.listener, selectors.EVENT_READ, self.read_datagrams)
        self.bins: Bins | None = None
        self.completed_ns: int | None = None
        self.total = 0

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        conn.setblocking(False)
        self.sel.register(conn, selectors.EVENT_READ, lambda: self.read_stream(conn))

    def read_stream(self, conn: socket.socket) -> None:
        try:
            data = conn.recv(1 << 20)
        except ConnectionError:
            data = b""
        if data:
            self.count(len(data))
            return
        self.sel.unregister(conn)
        conn.close()
        self.completed_ns = time.monotonic_ns()

    def read_datagrams(self) -> None:
        while True:
            try:
                data = self.listener.recv(65536)
            except BlockingIOError:
                return
            self.count(len(data))

    def count(self, n: int) -> None:
        self.total += n
        if self.bins is not None:
            self.bins.add(n)

    def report(self) -> dict:
        out = {"id": self.flow["id"], "role": "receive", "bytes_per_bin": self.bins.counts if self.bins else [],
               "bytes_total": self.total}
        if self.completed_ns is not None and self.bins is not None:
            out["completed_s"] = (self.completed_ns - self.bins.epoch_ns) / 1e9
        return out


class Sender:
    """The sending end of one flow: a bulk or fixed-size TCP transfer, or constant-rate UDP."""

    def __init__(self, flow: dict, peer: str, sel: selectors.BaseSelector) -> None:
        self.flow, self.peer, self.sel = flow, peer, sel
        self.sock: socket.socket | None = None
        self.sent = 0
        self.cwnd: list[float] = []
        self.srtt: list[float] = []
        self.retrans_series: list[int | None] = []
        self.retransmits: int | None = None
        self.rto_series: list[int | None] = []
        self.timeouts: int | None = None  # None: the kernel's TCP_INFO has no tcpi_total_rto
        self.error: str | None = None

    def start(self, due_ns: int, timers: Timers) -> None:
        f = self.flow
        if f["kind"] == "tcp":
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, f["congestion_control"].encode())
            if f.get("mss"):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, f["mss"])
            s.setblocking(False)
            try:
                s.connect((self.peer, f["port"]))
            except BlockingIOError:
                pass
            self.sock = s
            self.sel.register(s, selectors.EVENT_WRITE, self.write_stream)
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.sock.setblocking(False)
            self.payload = bytes(f["packet_size"] - 28)  # IPv4 + UDP headers
            self.interval_ns = int(f["packet_size"] * 8 / f["rate_bps"] * 1e9)
            self.timers = timers
            timers.at(due_ns, self.send_datagram)

    def write_stream(self) -> None:
        size = self.flow.get("size")
        chunk = CHUNK if size is None else CHUNK[: max(0, min(len(CHUNK), size - self.sent))]
        try:
            n = self.sock.send(chunk) if chunk else 0
        except BlockingIOError:
            return
        except OSError as e:  # refused or reset: reported, not fatal to the other flows
            self.error = f"{e.strerror or e}"
            self.stop()
            return
        self.sent += n
        if size is not None and self.sent >= size:
            self.sel.unregister(self.sock)
            self.sock.shutdown(socket.SHUT_WR)

    def send_datagram(self, due_ns: int) -> None:
        if self.sock.fileno() < 0:
            return  # stopped: no more datagrams
        try:
            self.sent += self.sock.sendto(self.payload, (self.peer, self.flow["port"]))
        except (BlockingIOError, ConnectionRefusedError):
            pass  # a full socket buffer drops the datagram, as a UDP application's would be
        # From the due time, not the (later) wake-up: lateness must not accumulate into a lower rate.
        self.timers.at(due_ns + self.interval_ns, self.send_datagram)

    def tcp_info(self) -> tuple[float, float, int, int | None] | None:
        """(cwnd in segments, smoothed RTT in s, retransmissions so far, retransmission timeouts so
        far or None before Linux 6.7) from TCP_INFO, while the connection is open."""
        if self.flow["kind"] != "tcp" or self.sock is None or self.sock.fileno() < 0:
            return None
        info = self.sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, TCPI_LEN)
        rtt_us, cwnd, retrans = (struct.unpack_from("=I", info, o)[0] for o in (TCPI_RTT, TCPI_SND_CWND, TCPI_TOTAL_RETRANS))
        # A shorter answer is an older kernel's struct, which ends before the field.
        rto = struct.unpack_from("=H", info, TCPI_TOTAL_RTO)[0] if len(info) >= TCPI_TOTAL_RTO + 2 else None
        return float(cwnd), (rtt_us / 1e6 if rtt_us else float("nan")), retrans, rto

    def sample(self) -> None:
        """Records the connection's state at a bin's end (NaN when no connection is open)."""
        state = self.tcp_info()
        self.cwnd.append(state[0] if state else float("nan"))
        self.srtt.append(state[1] if state else float("nan"))
        if state:
            self.retransmits, self.timeouts = state[2], state[3]
        self.retrans_series.append(self.retransmits)
        self.rto_series.append(self.timeouts)

    def stop(self) -> None:
        state = self.tcp_info()
        if state:
            self.retransmits, self.timeouts = state[2], state[3]
        if self.sock is not None and self.sock.fileno() >= 0:
            try:
                self.sel.unregister(self.sock)
            except (KeyError, ValueError):
                pass
            self.sock.close()

    def report(self) -> dict:
        return {"id": self.flow["id"], "role": "send", "bytes_sent": self.sent, "retransmits": self.retransmits,
                "retransmits_per_bin": self.retrans_series, "timeouts": self.timeouts, "timeouts_per_bin": self.rto_series,
                "cwnd_segments": self.cwnd, "srtt_s": self.srtt, "error": self.error}


def main(plan_path: str) -> None:
    with open(plan_path) as f:
        plan = json.load(f)
    sel = selectors.DefaultSelector()
    receivers = [Receiver(fl, sel) for fl in plan["flows"] if fl["role"] == "receive"]
    senders = [Sender(fl, plan["peer"], sel) for fl in plan["flows"] if fl["role"] == "send"]
    print("ready", flush=True)
    epoch = int(sys.stdin.readline())
    bin_ns = int(round(plan["bin_s"] * 1e9))
    n_bins = int(round(plan["duration_s"] / plan["bin_s"]))
    for r in receivers:
        r.bins = Bins(epoch, plan["bin_s"], n_bins)
    end = epoch + int(plan["duration_s"] * 1e9)
    timers = Timers()
    for s in senders:
        timers.at(epoch + int(s.flow["start_s"] * 1e9), lambda due, s=s: s.start(due, timers))
        timers.at(epoch + int(s.flow["stop_s"] * 1e9), lambda due, s=s: s.stop())
    next_sample = epoch + bin_ns
    while (now := time.monotonic_ns()) < end:
        timers.run_due(now)
        while next_sample <= now and next_sample <= end:
            for s in senders:
                s.sample()
            next_sample += bin_ns
        wake = min(x for x in (end, next_sample, timers.next_due()) if x is not None)
        for key, _ in sel.select(timeout=max(0.0, (wake - time.monotonic_ns()) / 1e9)):
            key.data()
    while next_sample <= end:  # the bins that end at the very end of the run
        for s in senders:
            s.sample()
        next_sample += bin_ns
    for s in senders:
        s.stop()
    print(json.dumps([x.report() for x in receivers + senders]), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
