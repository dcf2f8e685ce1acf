"""`aqmlab run`: the results directory, determinism, and the Python API's frames."""

from __future__ import annotations

import json
import math
from pathlib import Path

import aqmlab
import pandas as pd
import pytest

from conftest import run_cli

SUMMARY_KEYS = {"version", "seed", "simulated_s", "measured_s", "wall_seconds", "events", "scenario",
                "flows", "queues", "aggregate"}


def summary_without_wall_time(path: Path) -> dict:
    summary = json.loads(path.read_text())
    assert summary.pop("wall_seconds") > 0
    return summary


def test_run_writes_every_result_file(small_scenario: Path, tmp_path: Path) -> None:
    out = tmp_path / "res"
    proc = run_cli("run", str(small_scenario), "--out", str(out), "--pcap")
    assert proc.returncode == 0, proc.stderr
    assert {p.name for p in out.iterdir()} == {"summary.json", "timeseries.parquet", "flows.csv",
                                                "plot.png", "bottleneck.pcap"}
    assert f"{out}/summary.json" in proc.stdout and f"{out}/plot.png" in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert SUMMARY_KEYS <= summary.keys()
    assert len(summary["flows"]) == 5
    flows = pd.read_csv(out / "flows.csv")
    assert list(flows["id"]) == [0, 1, 2, 3, 4]
    series = pd.read_parquet(out / "timeseries.parquet")
    assert series["time_s"].is_monotonic_increasing and len(series) == 40  # 4 s in 100 ms bins
    pcap = (out / "bottleneck.pcap").read_bytes()
    assert pcap[:4] in (b"\xa1\xb2\x3c\x4d", b"\x4d\x3c\xb2\xa1")  # nanosecond pcap magic
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "staging directory left behind"


def test_same_scenario_and_seed_give_identical_files(small_scenario: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    for out in (a, b):
        assert run_cli("run", str(small_scenario), "--out", str(out), "--pcap", "-q").returncode == 0
    assert summary_without_wall_time(a / "summary.json") == summary_without_wall_time(b / "summary.json")
    for name in ("timeseries.parquet", "flows.csv", "plot.png", "bottleneck.pcap"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_another_seed_gives_another_run(small_scenario: Path) -> None:
    one = aqmlab.run(small_scenario, seed=1).flows
    two = aqmlab.run(small_scenario, seed=2).flows
    assert list(one["start_s"]) != list(two["start_s"])


def test_adding_a_flow_does_not_reshuffle_another_flows_randomness(small_scenario: Path) -> None:
    base = aqmlab.validate(small_scenario)
    more = json.loads(json.dumps(base))
    more["flows"].append({"kind": "udp-cbr", "rate": "100kbps", "packet_size": "200B", "start": "3s"})
    starts_base = aqmlab.run(base).flows["start_s"].tolist()
    starts_more = aqmlab.run(more).flows["start_s"].tolist()
    assert starts_more[: len(starts_base)] == starts_base


def test_python_api_returns_frames(small_scenario: Path) -> None:
    res = aqmlab.run(small_scenario)
    assert isinstance(res.flows, pd.DataFrame) and len(res.flows) == 5
    assert {"goodput_bps", "delay_p99_s", "drops"} <= set(res.flows.columns)
    assert {"time_s", "queue_pkts", "queue_avg", "flow0_goodput_bps"} <= set(res.timeseries.columns)
    assert list(res.queues["name"]) == ["bottleneck", "reverse"]
    assert res.summary["measured_s"] == pytest.approx(3.0)


def test_validate_show_echoes_defaults(small_scenario: Path) -> None:
    proc = run_cli("validate", str(small_scenario), "--show")
    assert proc.returncode == 0, proc.stderr
    filled = json.loads(proc.stdout)
    assert filled["flows"][0]["variant"] == "newreno"
    assert filled["topology"]["bottleneck"] == {"rate": "10Mbps", "delay": "10ms"}
    assert filled["reverse_queue"]["kind"] == "droptail"


def test_qdiscs_lists_every_discipline_with_parameters() -> None:
    proc = run_cli("qdiscs", "--json")
    assert proc.returncode == 0, proc.stderr
    catalog = {q["kind"]: q for q in json.loads(proc.stdout)}
    assert {"droptail", "red"} <= catalog.keys()
    red = catalog["red"]
    assert {"min_th", "max_th", "max_p", "weight", "gentle", "variant", "limit"} <= red["params"].keys()
    assert "Parris" in red["source"] or "Floyd" in red["source"]
    assert set(red["params"]) <= set(red["docs"]), "every RED parameter is documented"


def test_per_flow_offered_load_and_mpeg_frame_rate_columns() -> None:
    """`flow<i>_offered_bps` for every flow, frame rates for the MPEG flows only, and their means over the
    measured bins against the summary (docs/results.md states the edge terms)."""
    res = aqmlab.run({"run": {"duration": "12s", "warmup": "2s", "seed": 5},
                      "topology": {"bottleneck": {"rate": "10Mbps", "delay": "5ms"}},
                      "queue": {"kind": "droptail", "limit": 40},
                      "output": {"bin": "1s", "per_flow_timeseries": True},
                      "flows": [{"kind": "mpeg", "count": 2}, {"kind": "tcp", "count": 2},
                                {"kind": "udp-cbr", "rate": "6Mbps", "packet_size": "1000B"}]})
    ts, f = res.timeseries, res.flows
    cols = set(ts.columns)
    assert {f"flow{i}_offered_bps" for i in range(5)} <= cols
    assert {c for c in cols if c.endswith("_fps")} == {f"flow{i}_{k}_fps" for i in (0, 1) for k in ("actual", "playable")}
    window = ts[ts["time_s"] > 2.0]
    assert len(window) == 10
    for i in (0, 1):
        row = f.loc[i]
        assert row["kind"] == "mpeg"
        # ≤ 3 complete / ≤ 5 playable frames sent before the warm-up finish after it, over 10 s.
        for col, key, extra in (("actual", "mpeg_actual_fps", 0.3), ("playable", "mpeg_playable_fps", 0.5)):
            diff = window[f"flow{i}_{col}_fps"].mean() - row[key]
            assert -1e-9 <= diff <= extra + 1e-9, (i, col, diff)
    for i in range(5):
        offered = window[f"flow{i}_offered_bps"].sum()  # 1-s bins: bits
        crossed = f.loc[i, "throughput_bps"] * 10.0
        assert offered >= f.loc[i, "goodput_bps"] * 10.0 - 41 * 1500 * 8, i
        assert offered >= crossed - 41 * 1500 * 8, i
    # The UDP flow's 1000-B packets: offered = crossed + dropped, up to 41 packets queued or on the wire at the edges.
    udp = f.loc[4]
    offered = window["flow4_offered_bps"].sum() / 8
    assert udp["drops"] > 0
    assert abs(offered - (udp["throughput_bps"] * 10 / 8 + udp["drops"] * 1000)) <= 41 * 1000


TCP_STATE = {"run": {"duration": "8s", "warmup": "2s", "seed": 3},
             "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"},
                          "access": {"rate": "1Gbps", "delay": "1ms"}},
             "queue": {"kind": "droptail", "limit": 20},
             "output": {"bin": "200ms", "per_flow_timeseries": False, "per_flow_tcp_state": True},
             "flows": [{"kind": "tcp", "count": 2, "delayed_ack": False, "max_window": "92672B",
                        "access_delay": ["1ms", "30ms"]},
                       {"kind": "udp-cbr", "rate": "1Mbps", "packet_size": "1000B"}]}
TCP_STATE_COLUMNS = {f"flow{i}_{k}" for i in (0, 1) for k in ("cwnd_segments", "srtt_s")}


def test_per_flow_tcp_state_columns_are_absent_when_off(tmp_path: Path) -> None:
    off = json.loads(json.dumps(TCP_STATE))
    off["output"]["per_flow_tcp_state"] = False
    res = aqmlab.run(off, out=tmp_path / "off", plot=False)
    cols = set(pd.read_parquet(tmp_path / "off" / "timeseries.parquet").columns)
    assert not {c for c in cols if c.endswith(("_cwnd_segments", "_srtt_s"))}
    assert set(res.timeseries.columns) == cols
    assert aqmlab.validate(off)["output"]["per_flow_tcp_state"] is False
    assert aqmlab.validate({k: v for k, v in off.items() if k != "output"})["output"]["per_flow_tcp_state"] is False


def test_per_flow_tcp_state_columns_for_tcp_flows_only_and_identical_on_a_rerun(tmp_path: Path) -> None:
    a = aqmlab.run(TCP_STATE, out=tmp_path / "a", plot=False)
    b = aqmlab.run(TCP_STATE, out=tmp_path / "b", plot=False)
    state = {c for c in a.timeseries.columns if c.endswith(("_cwnd_segments", "_srtt_s"))}
    assert state == TCP_STATE_COLUMNS  # the UDP flow (2) has none
    assert TCP_STATE_COLUMNS <= set(pd.read_parquet(tmp_path / "a" / "timeseries.parquet").columns)
    assert (tmp_path / "a" / "timeseries.parquet").read_bytes() == (tmp_path / "b" / "timeseries.parquet").read_bytes()
    pd.testing.assert_frame_equal(a.timeseries, b.timeseries)


def test_per_flow_cwnd_bins_average_to_mean_cwnd_segments_in_flows_csv(tmp_path: Path) -> None:
    aqmlab.run(TCP_STATE, out=tmp_path / "r", plot=False)
    ts = pd.read_parquet(tmp_path / "r" / "timeseries.parquet")
    flows = pd.read_csv(tmp_path / "r" / "flows.csv")
    window = ts[ts["time_s"] > 2.0 + 1e-9]
    assert len(window) == 30  # (2, 8] s in 200-ms bins: exactly the measurement window
    for i in (0, 1):
        # The same integral of the same step function, split at 30 more instants: f64 rounding
        # (~1e-13 relative) plus at most an ulp from the CSV round trip; 1e-9 leaves room.
        mean = window[f"flow{i}_cwnd_segments"].mean()
        period = flows.loc[i, "mean_cwnd_segments"]
        assert period > 1.0
        assert mean == pytest.approx(period, rel=1e-9), i


def test_per_flow_srtt_lies_between_base_rtt_and_base_plus_full_drop_tail_queue() -> None:
    """Access delays 1 and 30 ms make the two flows' ranges disjoint, so a column given to the
    wrong flow fails too. The bound's terms are argued in crates/core/src/topology/dumbbell.rs."""
    ts = aqmlab.run(TCP_STATE, plot=False).timeseries

    def tx(size: int, rate: float) -> float:
        return math.ceil(size * 8e9 / rate) * 1e-9  # Dur::transmission: whole ns, rounded up

    serialisation = 2 * tx(1500, 1e9) + tx(1500, 10e6) + 2 * tx(52, 1e9) + tx(52, 10e6)
    # < 20 segments ahead in the drop-tail queue; ≤ 2 × 64 segments at the sender's 1-Gb/s access link.
    max_queueing = 20 * tx(1500, 10e6) + 128 * tx(1500, 1e9)
    for i, access in ((0, 0.001), (1, 0.030)):
        base = 2 * (access + 0.010 + 0.001) + serialisation
        srtt = ts[f"flow{i}_srtt_s"]
        assert srtt.notna().sum() >= 35, i  # from the first ACK on (no fresh transfers here)
        assert srtt.min() >= base - 1e-12, (i, srtt.min(), base)
        assert srtt.max() <= base + max_queueing + 1e-12, (i, srtt.max(), base + max_queueing)
