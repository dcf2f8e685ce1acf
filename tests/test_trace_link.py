"""A bottleneck driven by a Mahimahi delivery-opportunity trace (`trace`, `reverse_trace`): files
are found next to the scenario, the link carries what the trace offers, TCP runs over it, and
mistakes are named."""

from __future__ import annotations

import copy
import hashlib
import json
import os
from pathlib import Path

import pytest

import aqmlab
from aqmlab.api import scenario_dict
from conftest import run_cli

EVERY_MS = "1\n"  # one 1504-byte opportunity per millisecond: 12.032 Mb/s
CELL_MEAN_RATE = 91 * 1504 * 8 * 10  # b/s of `_cellular_like`


def _cellular_like() -> str:
    """A synthetic trace with a varying rate: per 100 ms, 40 ms at 2 opportunities per ms
    (24 Mb/s), 40 ms at one every 4 ms (3 Mb/s), then 20 ms with only the period's last line:
    91 opportunities of 1504 B per 100 ms, 10.95 Mb/s on average."""
    lines = []
    for ms in range(1, 101):
        if ms <= 40:
            lines += [str(ms)] * 2
        elif ms <= 80 and ms % 4 == 0:
            lines.append(str(ms))
    lines.append("100")
    return "\n".join(lines) + "\n"


def _scenario(trace: str, queue: dict, **bottleneck) -> dict:
    return {"run": {"duration": "20s", "warmup": "5s", "seed": 2},
            "topology": {"bottleneck": {"rate": "12Mbps", "delay": "20ms", "trace": trace, **bottleneck},
                         "access": {"rate": "100Mbps", "delay": "1ms"}},
            "queue": queue,
            "flows": [{"kind": "tcp", "count": 4, "profile": "linux", "start_jitter": "500ms"}]}


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    (tmp_path / "every-ms.trace").write_text(EVERY_MS)
    (tmp_path / "cell.trace").write_text(_cellular_like())
    return tmp_path


def test_tcp_over_a_constant_trace_matches_the_equal_rate_link(traces) -> None:
    trace = aqmlab.run(_scenario(str(traces / "every-ms.trace"), {"kind": "fq_codel"}))
    plain = copy.deepcopy(_scenario("", {"kind": "fq_codel"}))
    del plain["topology"]["bottleneck"]["trace"]
    plain["topology"]["bottleneck"]["rate"] = "12032kbps"
    rate = aqmlab.run(plain)
    q = trace.queues.iloc[0]
    assert q["trace_mean_rate_bps"] == 12_032_000
    assert q["utilization"] > 0.98
    # Opportunities deliver in 1-ms bursts instead of a packet every 1.0 ms: the same goodput.
    assert trace.aggregate["goodput_bps"] == pytest.approx(rate.aggregate["goodput_bps"], rel=0.02)


def test_a_varying_trace_bloats_a_fifo_that_codel_keeps_short(traces) -> None:
    cell = str(traces / "cell.trace")
    fifo = aqmlab.run(_scenario(cell, {"kind": "droptail", "limit": 1000}))
    codel = aqmlab.run(_scenario(cell, {"kind": "codel"}))
    mean_rate = CELL_MEAN_RATE
    for res in (fifo, codel):
        assert res.queues.iloc[0]["trace_mean_rate_bps"] == pytest.approx(mean_rate)
        assert res.aggregate["goodput_bps"] < mean_rate
    assert fifo.queues.iloc[0]["utilization"] > 0.95
    # Per 100-ms bin [t − 0.1, t) the trace offers its 91 opportunities (the first bin misses the
    # one at 100 ms, which opens the second).
    capacity = fifo.timeseries["capacity_bps"]
    assert capacity.iloc[0] == 90 * 1504 * 8 * 10 and (capacity.iloc[1:] == CELL_MEAN_RATE).all()
    assert "reverse_capacity_bps" not in fifo.timeseries
    assert codel.queues.iloc[0]["mean_sojourn_s"] < 0.25 * fifo.queues.iloc[0]["mean_sojourn_s"]


def test_a_reverse_trace_carries_reverse_data(traces) -> None:
    sc = _scenario(str(traces / "every-ms.trace"), {"kind": "droptail", "limit": 100})
    sc["topology"]["bottleneck"]["reverse_trace"] = str(traces / "cell.trace")
    sc["reverse_queue"] = {"kind": "droptail", "limit": 100}
    sc["flows"] = [{"kind": "udp-cbr", "rate": "30Mbps", "packet_size": "1000B", "direction": "reverse"}]
    res = aqmlab.run(sc)
    reverse = res.queues.iloc[1]
    assert reverse["trace_mean_rate_bps"] == pytest.approx(CELL_MEAN_RATE)
    assert res.flows.iloc[0]["throughput_bps"] == pytest.approx(CELL_MEAN_RATE, rel=0.01)
    assert reverse["utilization"] == pytest.approx(1.0, abs=0.01)


def test_a_relative_trace_is_read_next_to_the_scenario_file(traces, tmp_path, monkeypatch) -> None:
    scenario = traces / "cell.toml"
    scenario.write_text("""
[run]
duration = "3s"

[topology.bottleneck]
rate = "12Mbps"
trace = "cell.trace"

[[flows]]
kind = "tcp"
""")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    res = aqmlab.run(scenario)
    assert res.summary["scenario"]["topology"]["bottleneck"]["trace"] == "cell.trace"  # as written
    assert res.queues.iloc[0]["trace_mean_rate_bps"] == pytest.approx(CELL_MEAN_RATE)
    # As a dict (sweeps, --set) the name is anchored to the file's directory.
    assert scenario_dict(scenario)["topology"]["bottleneck"]["trace"] == str(traces / "cell.trace")
    assert aqmlab.run(scenario_dict(scenario)).summary["aggregate"] == res.summary["aggregate"]
    proc = run_cli("run", str(scenario), "--set", "run.duration=2s", "--out", str(tmp_path / "out"), "--no-plot")
    assert proc.returncode == 0, proc.stderr


def test_the_summary_carries_each_trace_files_digest(traces, tmp_path) -> None:
    sc = _scenario(str(traces / "cell.trace"), {"kind": "droptail"})
    sc["run"]["duration"] = "2s"
    sc["run"]["warmup"] = "0s"
    want = hashlib.sha256((traces / "cell.trace").read_bytes()).hexdigest()
    assert aqmlab.run(sc).summary["input_sha256"] == {"trace": want}
    aqmlab.run(sc, out=tmp_path / "out", plot=False)
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["input_sha256"] == {"trace": want}
    (traces / "cell.trace").write_text(EVERY_MS)  # same name, other bytes: another digest
    assert aqmlab.run(sc).summary["input_sha256"]["trace"] != want
    del sc["topology"]["bottleneck"]["trace"]
    assert "input_sha256" not in aqmlab.run(sc).summary


@pytest.mark.parametrize(("change", "fragments"), [
    ({"trace": "missing.trace"}, ["topology.bottleneck.trace", "cannot read", "missing.trace"]),
    ({"rate_schedule": [{"at": "1s", "rate": "1Mbps"}]}, ["topology.bottleneck.trace", "rate_schedule"]),
    ({"tx_ring": 1}, ["topology.bottleneck.trace", "tx_ring must be 0"]),
    ({"trace": "bad.trace"}, ["topology.bottleneck.trace", "line 2", "times must not decrease"]),
])
def test_trace_mistakes_are_one_clear_line(traces, change, fragments) -> None:
    (traces / "bad.trace").write_text("5\n3\n")
    sc = _scenario("every-ms.trace", {"kind": "droptail"})
    sc["topology"]["bottleneck"].update(change)
    path = traces / "bad.json"
    import json
    path.write_text(json.dumps(sc))
    proc = run_cli("validate", str(path))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)


def test_live_runs_take_a_trace() -> None:
    from aqmlab.live.support import TOPOLOGY_LINK_KEYS

    assert {"trace", "reverse_trace"} <= TOPOLOGY_LINK_KEYS
