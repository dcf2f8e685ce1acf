"""Two network namespaces joined only through aqmlab's router.

The senders' namespace holds the TUN device that feeds the router's forward path, the
receivers' namespace the one that feeds the reverse path. Each namespace has one address and a
host route to the other's through its device, so every packet between them crosses the router.
IPv6 is switched off inside both, so neighbour discovery does not mix into the queues. The
namespaces are removed on exit, whatever happened.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from dataclasses import dataclass

from ..exceptions import SimulationError

SENDERS_ADDR = "10.211.0.1"
RECEIVERS_ADDR = "10.211.0.2"


def preflight() -> None:
    """Raises SimulationError unless this process can build namespaces and TUN devices."""
    missing = []
    if os.geteuid() != 0:
        missing.append("root (CAP_NET_ADMIN, to create network namespaces and TUN devices)")
    if not os.path.exists("/dev/net/tun"):
        missing.append("/dev/net/tun (the tun kernel module)")
    if shutil.which("ip") is None:
        missing.append("iproute2's `ip` command (Debian package iproute2)")
    if missing:
        raise SimulationError("aqmlab live needs " + " and ".join(missing))


def check_congestion_controls(names: set[str]) -> None:
    """Raises SimulationError naming any TCP congestion control this kernel cannot load (the
    module table is the kernel's, shared by every namespace; setting it on a socket as root also
    loads a module that is built but not loaded)."""
    for name in sorted(names):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, name.encode())
            except OSError:
                try:
                    with open("/proc/sys/net/ipv4/tcp_available_congestion_control") as f:
                        available = f.read().strip()
                except OSError:
                    available = "unknown"
                raise SimulationError(f"this kernel has no \"{name}\" TCP congestion control (available: "
                                      f"{available}); choose another congestion_control for live runs") from None


def _ip(*args: str) -> None:
    res = subprocess.run(["ip", *args], capture_output=True, text=True)
    if res.returncode != 0:
        raise SimulationError(f"`ip {' '.join(args)}` failed: {res.stderr.strip()}")


def _sysctl(ns: str, key: str, value: str) -> None:
    # /proc/sys/net inside `ip netns exec` is the namespace's own (no dependency on procps).
    _ip("netns", "exec", ns, "sh", "-c", f"echo {value} > /proc/sys/{key.replace('.', '/')}")


STALE_NAME = re.compile(r"^aqmlab-[sr]-(\d+)x\d+$")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_namespaces() -> list[str]:
    """Deletes the namespaces of live runs whose process is gone (killed before its cleanup ran);
    returns their names. A running run's namespaces are left alone."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    stale = []
    for line in listed.splitlines():
        name = line.split()[0] if line.split() else ""
        match = STALE_NAME.match(name)
        if match and not _pid_alive(int(match.group(1))):
            subprocess.run(["ip", "netns", "del", name], capture_output=True)
            stale.append(name)
    return stale


@dataclass
class NamespacePair:
    """Names of a run's namespaces and devices (unique per process and run)."""

    senders: str
    receivers: str
    senders_tun: str
    receivers_tun: str

    @classmethod
    def for_run(cls, serial: int) -> "NamespacePair":
        remove_stale_namespaces()
        tag = f"{os.getpid()}x{serial}"
        # Device names are limited to 15 characters.
        return cls(f"aqmlab-s-{tag}", f"aqmlab-r-{tag}", f"aqs{tag}"[:15], f"aqr{tag}"[:15])

    def create(self, *, senders_ecn: bool, receivers_ecn: bool) -> None:
        """Makes both namespaces and moves the (already created) TUN devices into them.
        ``*_ecn``: whether TCP connections opened there request ECN (net.ipv4.tcp_ecn = 1;
        otherwise 2, the kernel default: accept ECN when asked)."""
        for ns, tun, addr, peer, ecn in ((self.senders, self.senders_tun, SENDERS_ADDR, RECEIVERS_ADDR, senders_ecn),
                                         (self.receivers, self.receivers_tun, RECEIVERS_ADDR, SENDERS_ADDR, receivers_ecn)):
            _ip("netns", "add", ns)
            _ip("link", "set", tun, "netns", ns)
            _ip("-n", ns, "link", "set", "lo", "up")
            _sysctl(ns, "net.ipv6.conf.all.disable_ipv6", "1")
            _sysctl(ns, "net.ipv6.conf.default.disable_ipv6", "1")
            _sysctl(ns, "net.ipv4.tcp_ecn", "1" if ecn else "2")
            _ip("-n", ns, "addr", "add", addr, "peer", peer, "dev", tun)
            _ip("-n", ns, "link", "set", tun, "up")

    def remove(self) -> None:
        """Deletes both namespaces (their devices go with them); quiet if they are already gone."""
        for ns in (self.senders, self.receivers):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
