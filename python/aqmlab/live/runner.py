"""``aqmlab live``: a scenario on real Linux traffic through aqmlab's own queue code.

The run builds two network namespaces joined by aqmlab's router (``aqmlab_live`` in Rust: the
simulator's disciplines, unchanged, at the scenario's bottleneck rate and delays), starts one
traffic program in each (``traffic.py``: real sockets, the kernel's TCP), and merges what the
router and the programs measured into a result shaped like a simulation's: the same
``summary.json`` queue keys, per-flow goodput, drops and marks, a time series and a plot.
Measured live and not in the simulator's output: TCP retransmissions, congestion window and
smoothed RTT as the kernel reports them (TCP_INFO). One-way delays are the emulated network's
(arrival at the router to hand-over at the far end), as the simulator's exclude host stacks. Not
measured live (``null``): RTO expiries. See docs/live.md.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from .. import _native
from ..api import Result, load_scenario, scenario_dict, validate
from ..exceptions import ScenarioError, SimulationError
from ..metrics import jain_index
from ..output import check_output_dir, staged_results_dir, write_results
from . import traffic
from .netns import RECEIVERS_ADDR, SENDERS_ADDR, NamespacePair, check_congestion_controls, preflight
from .support import LINUX_CC, check_supported

__all__ = ["run_live", "DEFAULT_BASE_PORT"]

# Scenario flow i uses port DEFAULT_BASE_PORT + i: below Linux's ephemeral range (32768-60999),
# so no connection's own port can be mistaken for a flow's.
DEFAULT_BASE_PORT = 20000
EPHEMERAL_START = 32768
# Timestamps take 12 option bytes of every segment in Linux (tcp_timestamps = 1, the default):
# the scenario's `mss` is payload, TCP_MAXSEG counts the options too.
TIMESTAMP_OPTION_BYTES = 12
# How long the traffic programs may take to start (interpreter start-up in a namespace).
STARTUP_TIMEOUT_S = 20.0
# The run starts this long after both programs are ready, so the epoch reaches them first.
EPOCH_LEAD_NS = 300_000_000

_runs = itertools.count()


def _traffic_plan(plan: dict[str, Any], raw: dict[str, Any], side: str) -> dict[str, Any]:
    """What the traffic program in namespace ``side`` ("senders" or "receivers") plays."""
    flows = []
    for f in plan["flows"]:
        sends_here = (f["direction"] == "forward") == (side == "senders")
        entry = {k: f[k] for k in ("id", "kind", "port", "start_s", "stop_s")}
        entry["role"] = "send" if sends_here else "receive"
        if f["kind"] == "tcp":
            entry["congestion_control"] = LINUX_CC[f["congestion_control"]]
            entry["size"] = f["size"]
            if "mss" in raw["flows"][f["group"]]:  # else the kernel's own (1448 payload bytes on a 1500 MTU)
                entry["mss"] = f["mss"] + TIMESTAMP_OPTION_BYTES
        else:
            entry["rate_bps"], entry["packet_size"] = f["rate_bps"], f["packet_size"]
        flows.append(entry)
    peer = RECEIVERS_ADDR if side == "senders" else SENDERS_ADDR
    return {"peer": peer, "duration_s": plan["duration_s"], "bin_s": plan["bin_s"], "flows": flows}


def _start_traffic(ns: str, plan: dict[str, Any], workdir: Path) -> subprocess.Popen:
    path = workdir / f"{ns}.json"
    path.write_text(json.dumps(plan))
    return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, traffic.__file__, str(path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_ready(proc: subprocess.Popen, ns: str) -> None:
    line = proc.stdout.readline() if proc.stdout else ""
    if line.strip() != "ready":
        proc.kill()
        err = proc.stderr.read() if proc.stderr else ""
        raise SimulationError(f"the traffic program in namespace {ns} did not start: {err.strip() or line.strip() or 'no output'}")


def _collect(proc: subprocess.Popen, ns: str, timeout: float) -> list[dict[str, Any]]:
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise SimulationError(f"the traffic program in namespace {ns} did not finish") from None
    if proc.returncode != 0:
        last = (err.strip().splitlines() or ["no message"])[-1]
        raise SimulationError(f"the traffic program in namespace {ns} failed: {last}")
    return json.loads(out.strip().splitlines()[-1])


def run_live(
    scenario,
    *,
    seed: int | None = None,
    out: str | os.PathLike | None = None,
    pcap: bool = False,
    plot: bool = True,
    base_port: int = DEFAULT_BASE_PORT,
    progress: Callable[[float], None] | None = None,
) -> Result:
    """Runs ``scenario`` on real traffic (needs root: network namespaces and TUN devices).

    Takes the same scenarios as :func:`aqmlab.run` within what Linux hosts can play
    (``aqmlab.live.support``); returns a :class:`aqmlab.Result` and, with ``out``, writes the
    same files as a simulation (``pcap``: also ``bottleneck.pcap``, the headers of the real
    packets as they start across the forward bottleneck). Wall-clock time equals the scenario's
    duration."""
    validate(scenario)  # on the text as written, so errors name their line
    # As a dict with the file names it holds (a trace) anchored to the scenario file's directory.
    text, fmt = load_scenario(scenario_dict(scenario), seed=seed)
    raw = json.loads(text)
    router = _native.LiveRouter(text, fmt, base_port)
    plan = json.loads(router.flow_plan())
    check_supported(raw, plan)
    if base_port + len(plan["flows"]) > EPHEMERAL_START:
        raise ScenarioError(f"flows: {len(plan['flows'])} flows from port {base_port} reach Linux's ephemeral ports "
                            f"({EPHEMERAL_START} and up); live runs take at most {EPHEMERAL_START - base_port} flows")
    if out is not None:
        check_output_dir(out)
    preflight()
    check_congestion_controls({LINUX_CC[f["congestion_control"]] for f in plan["flows"] if f["kind"] == "tcp"})
    run = _LiveRun(router, plan, raw, text, fmt)
    if out is None:
        return run.execute(None, progress)
    with staged_results_dir(out) as tmp:
        result = run.execute(str(tmp / "bottleneck.pcap") if pcap else None, progress)
        write_results(result, tmp, plot=plot)
    return result


class _LiveRun:
    """One live run of a checked scenario: namespaces, traffic programs, router, and the merge."""

    def __init__(self, router: Any, plan: dict[str, Any], raw: dict[str, Any], text: str, fmt: str) -> None:
        self.router, self.plan, self.raw, self.text, self.fmt = router, plan, raw, text, fmt

    def execute(self, pcap_path: str | None, progress: Callable[[float], None] | None) -> Result:
        plan, raw, router = self.plan, self.raw, self.router
        names = NamespacePair.for_run(next(_runs))
        router.open(names.senders_tun, names.receivers_tun, pcap_path)
        ecn = {side: any(f["kind"] == "tcp" and f["ecn"] and (f["direction"] == "forward") == (side == "senders")
                         for f in plan["flows"]) for side in ("senders", "receivers")}
        started = time.monotonic()
        procs: dict[str, subprocess.Popen] = {}
        outcome: dict[str, Any] = {}
        try:
            names.create(senders_ecn=ecn["senders"], receivers_ecn=ecn["receivers"])
            with tempfile.TemporaryDirectory(prefix="aqmlab-live-") as tmp:
                for side, ns in (("senders", names.senders), ("receivers", names.receivers)):
                    procs[ns] = _start_traffic(ns, _traffic_plan(plan, raw, side), Path(tmp))
                deadline = time.monotonic() + STARTUP_TIMEOUT_S
                for ns, proc in procs.items():
                    _wait_ready(proc, ns)
                    if time.monotonic() > deadline:
                        raise SimulationError(f"the traffic programs took over {STARTUP_TIMEOUT_S:.0f} s to start")
                epoch = _native.monotonic_ns() + EPOCH_LEAD_NS

                def forward() -> None:
                    try:
                        outcome["router"] = router.run(epoch)
                    except BaseException as e:  # reported on the caller's thread
                        outcome["error"] = e

                thread = threading.Thread(target=forward, name="aqmlab-live-router", daemon=True)
                thread.start()
                for proc in procs.values():
                    proc.stdin.write(f"{epoch}\n")
                    proc.stdin.flush()
                try:
                    while thread.is_alive():
                        thread.join(0.2)
                        if progress is not None:
                            progress(max(0.0, (_native.monotonic_ns() - epoch) / 1e9))
                except KeyboardInterrupt:
                    router.stop()
                    thread.join()
                    raise
                if "error" in outcome:
                    raise outcome["error"]
                reports = {ns: _collect(p, ns, timeout=10.0) for ns, p in procs.items()}
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
            names.remove()
        router_summary, series = outcome["router"]
        echo = json.loads(_native.validate(self.text, self.fmt))
        return _result(plan, raw, echo, json.loads(router_summary), series, [r for rs in reports.values() for r in rs],
                       wall=time.monotonic() - started)


def _measured_mean(values: list[float], first_bin: int) -> float | None:
    """Mean of the bins from ``first_bin`` on, skipping NaN (no connection); None when none."""
    tail = [v for v in values[first_bin:] if not math.isnan(v)]
    return float(np.mean(tail)) if tail else None


def _since_warmup(total: int | None, per_bin: list[int | None], first_bin: int) -> int | None:
    """A TCP_INFO counter's growth after the warm-up (its value at the end of the last warm-up
    bin is subtracted; a connection opened later started from 0)."""
    if total is None:
        return None
    at_warmup = per_bin[first_bin - 1] if 0 < first_bin <= len(per_bin) else None
    return total - (at_warmup or 0)


def _fit(values: list[float], n: int) -> np.ndarray:
    """``values`` as ``n`` bins: cut, or padded with NaN (a bin the program did not reach)."""
    out = np.full(n, np.nan)
    out[: min(n, len(values))] = values[:n]
    return out


def _result(plan: dict[str, Any], raw: dict[str, Any], echo: dict[str, Any], router: dict[str, Any],
            series: dict[str, Any], reports: list[dict[str, Any]], wall: float) -> Result:
    """Merges the router's and the traffic programs' measurements into a Result."""
    bin_s, warmup_s, duration_s = plan["bin_s"], plan["warmup_s"], plan["duration_s"]
    first_bin = math.ceil(warmup_s / bin_s - 1e-9)
    measured_s = duration_s - first_bin * bin_s
    received = {r["id"]: r for r in reports if r["role"] == "receive"}
    sent = {r["id"]: r for r in reports if r["role"] == "send"}
    paths = {p["id"]: p for p in router["flow_paths"]}
    empty_path = {"arrivals": 0, "drops": 0, "marks": 0, "bytes_sent": 0}
    flows, goodputs, columns = [], [], {}
    for f in plan["flows"]:
        i = f["id"]
        rx, tx = received[i], sent[i]
        data_dir, ack_dir = ("forward", "reverse") if f["direction"] == "forward" else ("reverse", "forward")
        path = paths.get(i, {data_dir: empty_path, ack_dir: empty_path})
        goodput = sum(rx["bytes_per_bin"][first_bin:]) * 8 / measured_s
        goodputs.append(goodput)
        row = {
            "id": i, "kind": f["kind"], "group": f["group"], "direction": f["direction"],
            "variant": f"linux-{LINUX_CC[f['congestion_control']]}" if f["kind"] == "tcp" else f["variant"],
            "class": raw["flows"][f["group"]].get("class", 0),
            "goodput_bps": goodput,
            "throughput_bps": path[data_dir]["bytes_sent"] * 8 / measured_s,
            "packets_arrived": path[data_dir]["arrivals"],
            "drops": path[data_dir]["drops"], "marks": path[data_dir]["marks"],
            "ack_drops": path[ack_dir]["drops"],
            "retransmits": _since_warmup(tx["retransmits"], tx["retransmits_per_bin"], first_bin),
            "timeouts": _since_warmup(tx.get("timeouts"), tx.get("timeouts_per_bin", []), first_bin),
            **{k: path[data_dir].get(k) for k in ("delay_mean_s", "delay_p50_s", "delay_p95_s", "delay_p99_s")},
            "mean_cwnd_segments": _measured_mean(tx["cwnd_segments"], first_bin) if f["kind"] == "tcp" else None,
            "mean_srtt_s": _measured_mean(tx["srtt_s"], first_bin) if f["kind"] == "tcp" else None,
            "completion_s": rx.get("completed_s"), "error": tx["error"],
        }
        flows.append(row)
        columns[f"flow{i}_goodput_bps"] = np.array(rx["bytes_per_bin"], dtype=float) * 8 / bin_s
        if f["kind"] == "tcp":
            columns[f"flow{i}_cwnd_segments"] = tx["cwnd_segments"]
            columns[f"flow{i}_srtt_s"] = tx["srtt_s"]
    forward = [g for g, f in zip(goodputs, plan["flows"]) if f["direction"] == "forward"]
    summary = {
        "version": _native.version(),
        "mode": "live",
        "kernel": os.uname().release,
        "seed": plan["seed"],
        "wall_seconds": wall,
        "measured_s": measured_s,
        "scenario": echo,
        "flows": flows,
        "queues": router["queues"],
        "router": router["router"],
        "aggregate": {"goodput_bps": sum(goodputs), "forward_goodput_bps": sum(forward),
                      "jain_index": jain_index(goodputs), "flows": len(goodputs)},
    }
    n = len(series["time_s"])
    frame = pd.DataFrame({k: series[k] for k in ("time_s", "queue_pkts", "queue_bytes", "queue_avg", "reverse_queue_pkts")})
    per_flow = pd.DataFrame({k: _fit(list(v), n) for k, v in columns.items()}, index=frame.index)
    return Result(summary, pd.concat([frame, per_flow], axis=1))
