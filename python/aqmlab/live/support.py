"""Which parts of a scenario a live run can play, and a clear refusal for the rest.

A live run replaces the simulated hosts with real Linux ones: the queue disciplines, the
bottleneck and the delays are aqmlab's, the TCP is the kernel's. Keys that tune aqmlab's own
TCP model (initial window, RTO rules, recovery variants, ...) therefore have no meaning here,
and a scenario that sets one is refused rather than run with the key silently ignored.
"""

from __future__ import annotations

from typing import Any

from ..exceptions import ScenarioError

# Keys every flow kind the live mode plays may set.
COMMON_FLOW_KEYS = {"kind", "count", "direction", "start", "start_jitter", "stop", "access_delay",
                    "access_delay_jitter", "receiver_access_delay", "access_rate", "class", "delay_hint"}
# TCP: the kernel's stack runs; these keys map onto socket options or sysctls. `variant` may
# name NewReno or SACK only: Linux recovers with SACK-based NewReno-style recovery (and PRR).
TCP_KEYS = COMMON_FLOW_KEYS | {"congestion_control", "mss", "ecn", "size", "variant", "profile"}
UDP_CBR_KEYS = COMMON_FLOW_KEYS | {"rate", "packet_size"}
LIVE_KINDS = {"tcp": TCP_KEYS, "udp-cbr": UDP_CBR_KEYS}
LINUX_VARIANTS = {"newreno", "sack"}
# Congestion controls with a Linux module of the same behaviour (`cubic-ns3` is ns-3's own port;
# `cubic` is RFC 9438 in the simulator, and live it is the kernel's, which `cubic-linux` models).
# `bbr` is BBR v1, tcp_bbr.c, in both (bbr.rs models the kernel's).
LINUX_CC = {"reno": "reno", "cubic": "cubic", "cubic-linux": "cubic", "dctcp": "dctcp", "bbr": "bbr"}
# The simulator's model of each kernel module, for the twin (twin.py).
SIMULATED_LINUX_CC = {"reno": "reno", "cubic": "cubic-linux", "dctcp": "dctcp", "bbr": "bbr"}
OUTPUT_KEYS = {"bin"}
TOPOLOGY_LINK_KEYS = {"rate", "delay", "loss", "rate_schedule", "trace", "reverse_trace"}


def _refuse(path: str, msg: str) -> None:
    raise ScenarioError(f"{path}: {msg} (aqmlab live runs the kernel's TCP; use `aqmlab run` to simulate this)")


def check_supported(raw: dict[str, Any], plan: dict[str, Any]) -> None:
    """Raises ScenarioError naming the first key or flow a live run cannot play.

    ``raw`` is the scenario as written (to tell keys the user set from defaults); ``plan`` the
    expanded flows the router reports (``LiveRouter.flow_plan``)."""
    check_access_rates(plan)
    topology = raw.get("topology", {})
    for key in sorted(set(topology.get("bottleneck", {})) - TOPOLOGY_LINK_KEYS):
        _refuse(f"topology.bottleneck.{key}", f"not emulated live; allowed: {', '.join(sorted(TOPOLOGY_LINK_KEYS))}")
    for key in sorted(set(raw.get("output", {})) - OUTPUT_KEYS):
        _refuse(f"output.{key}", "not recorded live; allowed: bin")
    for g, group in enumerate(raw.get("flows", [])):
        kind = group.get("kind")
        allowed = LIVE_KINDS.get(kind)
        if allowed is None:
            _refuse(f"flows[{g}].kind", f"\"{kind}\" flows cannot be played live; allowed: {', '.join(sorted(LIVE_KINDS))}")
        for key in sorted(set(group) - allowed):
            _refuse(f"flows[{g}].{key}", f"not available for live {kind} flows; allowed: {', '.join(sorted(allowed))}")
        if kind == "tcp":
            if group.get("variant", "newreno") not in LINUX_VARIANTS:
                _refuse(f"flows[{g}].variant", f"Linux TCP has no \"{group['variant']}\" mode; allowed: newreno, sack")
            if group.get("ecn") == "l4s":
                _refuse(f"flows[{g}].ecn", "mainline Linux TCP (DCTCP included) sends ECT(0); an ECT(1) sender "
                        "such as TCP Prague is not in it; allowed: true, false")
            if group.get("profile", "linux") != "linux":
                _refuse(f"flows[{g}].profile", f"live TCP is Linux's own; allowed: \"linux\", got \"{group['profile']}\"")
    for f in plan["flows"]:
        if f["kind"] == "tcp" and f["congestion_control"] not in LINUX_CC:
            _refuse(f"flows[{f['group']}].congestion_control",
                    f"no Linux module runs \"{f['congestion_control']}\"; allowed: {', '.join(sorted(LINUX_CC))}")
    senders: dict[str, set[bool]] = {}
    for f in plan["flows"]:
        if f["kind"] == "tcp":
            side = "senders" if f["direction"] == "forward" else "receivers"
            senders.setdefault(side, set()).add(bool(f["ecn"]))
    for side, settings in senders.items():
        if len(settings) > 1:
            _refuse("flows", f"ECN is a per-namespace sysctl live: every TCP flow whose data starts in the {side}' "
                    "namespace must have the same `ecn`")


def check_access_rates(plan: dict[str, Any]) -> None:
    """Access links are emulated as delays only: one slower than the bottleneck would be the real
    bottleneck in the simulator, so it is refused live."""
    for f in plan["flows"]:
        for side in ("access_rate_bps", "receiver_access_rate_bps"):
            if f[side] < plan["bottleneck_rate_bps"]:
                _refuse(f"flows[{f['group']}]", f"an access link ({f[side] / 1e6:g} Mb/s) slower than the bottleneck "
                        f"({plan['bottleneck_rate_bps'] / 1e6:g} Mb/s) cannot be emulated live: live access links are delays only")
