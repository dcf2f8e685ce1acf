"""`aqmlab run`: the results directory, determinism, and the Python API's frames."""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import aqmlab
import numpy as np
import orjson
import pandas as pd
import pytest
from aqmlab.output import write_indented_json, write_results
from hypothesis import given
from hypothesis import strategies as st

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


JSON_SCALARS = st.none() | st.booleans() | st.integers(-2**63, 2**64 - 1) | st.floats(allow_nan=False,
                                                                                   allow_infinity=False) | st.text()
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=20)


@given(st.dictionaries(st.text(max_size=8), JSON_VALUES, max_size=6))
def test_summary_writer_streams_the_bytes_of_one_indented_dump(doc: dict) -> None:
    f = io.BytesIO()
    write_indented_json(doc, f)
    assert f.getvalue() == orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
    assert json.loads(f.getvalue()) == doc


def test_summary_json_reads_back_as_the_results_summary(small_scenario: Path, tmp_path: Path) -> None:
    res = aqmlab.run(small_scenario, out=tmp_path / "res", plot=False)
    text = (tmp_path / "res" / "summary.json").read_text()
    assert json.loads(text) == res.summary
    assert text.startswith('{\n  "') and '\n  "flows": [\n    {\n      "' in text  # indented two by two


def test_a_flow_that_delivers_nothing_after_the_warm_up_has_no_delay_not_a_zero_one(tmp_path: Path) -> None:
    # The late flow starts 1 ms before the end: its first packet is still on the 10-ms link.
    sc = {"run": {"duration": "2s", "warmup": "0.5s"}, "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
          "flows": [{"kind": "tcp"}, {"kind": "tcp", "start": "1.999s"}]}
    res = aqmlab.run(sc, out=tmp_path / "res", plot=False)
    late, early = res.summary["flows"][1], res.summary["flows"][0]
    assert late["delivered_bytes"] == 0
    assert [late[k] for k in ("delay_mean_s", "delay_p50_s", "delay_p95_s", "delay_p99_s")] == [None] * 4
    assert early["delay_mean_s"] > 0.010 and early["delay_p99_s"] >= early["delay_p50_s"] > 0.010
    flows = pd.read_csv(tmp_path / "res" / "flows.csv")
    assert flows["delay_mean_s"].isna().tolist() == [False, True]
    # Null for every flow: still a numeric column of the frame (NaN), as with some values.
    alone = aqmlab.run({**sc, "flows": sc["flows"][1:]})
    assert alone.flows["delay_mean_s"].dtype == float and alone.flows["delay_mean_s"].isna().all()


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
    wrong flow fails too. The bound's terms are argued in crates/core/src/topology/dumbbell/ (sampling.rs, tests.rs)."""
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


TINY = {"run": {"duration": "1s", "seed": 4}, "topology": {"bottleneck": {"rate": "5Mbps", "delay": "5ms"}},
        "flows": [{"kind": "tcp", "count": 2}]}


def test_replacing_results_is_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An earlier run's results, then a run whose move into place fails halfway: the directory
    # must still hold exactly the earlier results, not a mix and not a partial set.
    import aqmlab.output as output

    out = tmp_path / "res"
    aqmlab.run(TINY, out=out, plot=False)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real_replace = output.os.replace

    def failing_move_into_place(src, dst):
        if ".res.partial-" in str(src):  # moving the staged results (or a file of them) into place
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(output.os, "replace", failing_move_into_place)
    with pytest.raises(aqmlab.SimulationError, match="cannot write the results"):
        aqmlab.run({**TINY, "run": {"duration": "2s", "seed": 5}}, out=out, plot=True)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["res"], "staging directories left behind"


def test_stale_staging_directories_of_crashed_runs_are_removed(tmp_path: Path) -> None:
    out = tmp_path / "res"
    stale = tmp_path / ".res.partial-999999999-x1"  # no such process
    stale.mkdir()
    (stale / "summary.json").write_text("{}")
    aqmlab.run(TINY, out=out, plot=False)
    assert [p.name for p in tmp_path.iterdir()] == ["res"]


def test_numpy_scalars_and_arrays_in_a_dict_scenario() -> None:
    import numpy as np

    plain = {"run": {"duration": "2s", "seed": 3}, "topology": {"bottleneck": {"rate": "5Mbps", "delay": "5ms"}},
             "queue": {"kind": "red", "min_th": 5, "max_th": 15.0, "max_p": 0.1, "gentle": True},
             "flows": [{"kind": "tcp", "count": 2, "access_delay": ["1ms", "3ms"], "class": 1}]}
    numpy = {"run": {"duration": "2s", "seed": np.uint64(3)},
             "topology": {"bottleneck": {"rate": "5Mbps", "delay": "5ms"}},
             "queue": {"kind": "red", "min_th": np.int64(5), "max_th": np.float64(15.0), "max_p": np.float64(0.1),
                       "gentle": np.bool_(True)},
             "flows": [{"kind": "tcp", "count": np.int32(2), "access_delay": np.array(["1ms", "3ms"]),
                        "class": np.uint8(1)}]}
    assert aqmlab.validate(numpy)["queue"]["gentle"] is True
    a, b = aqmlab.run(plain).summary, aqmlab.run(numpy).summary
    assert a["flows"] == b["flows"] and a["aggregate"] == b["aggregate"]
    with pytest.raises(aqmlab.ScenarioError, match=r"^flows\[0\]\.count: set values are not allowed"):
        aqmlab.validate({**plain, "flows": [{"kind": "tcp", "count": {2}}]})
    # Were "queue.max_p: expected value" (json.dumps writes NaN, which JSON does not have).
    for bad in (float("nan"), np.float64("inf"), -np.inf):
        with pytest.raises(aqmlab.ScenarioError, match=r"^queue\.max_p: -?(nan|inf) is not allowed; give a finite number$"):
            aqmlab.validate({**plain, "queue": {**plain["queue"], "max_p": bad}})
    # Was "allowed: -9223372036854775808 to 18446744073709551615", a negative range for a count.
    with pytest.raises(aqmlab.ScenarioError, match=r"^queue\.limit: 1180591620717411303424 is too large; no key takes an "
                                                   r"integer above 18446744073709551615$"):
        aqmlab.validate({**plain, "queue": {**plain["queue"], "limit": 2**70}})


def test_json_scenario_files_run_and_validate(tmp_path: Path) -> None:
    scenario = tmp_path / "x.json"
    scenario.write_text(json.dumps(TINY, indent=2))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 0, proc.stderr
    assert "x.json: ok (2 flows, queue droptail)" in proc.stdout
    proc = run_cli("run", str(scenario), "--out", str(tmp_path / "o"), "--no-plot", "--seed", "9")
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["seed"] == 9
    scenario.write_text('{"run": {"duration": "1s",}}')
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "x.json: not valid JSON: line 1 column" in proc.stderr
    scenario.write_text(json.dumps({**TINY, "run": {"duration": "1s", "colour": 1}}))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 2 and "x.json: run.colour: unknown key" in proc.stderr


def qdisc_sections(text: str) -> dict[str, str]:
    """`aqmlab qdiscs` output split into one block per discipline."""
    sections, kind = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            kind = line.split(":")[0].split(" ")[0]
            sections[kind] = ""
        elif kind:
            sections[kind] += line + "\n"
    return sections


# Disciplines with keys that apply to one variant only: the queue tables whose echoes together show
# every key (the first is the default).
VARIANT_ONLY_KEYS = {"red": [{}, {"variant": "ns2"}]}


def test_every_key_a_discipline_accepts_is_listed(tmp_path: Path) -> None:
    # `keys` is serde's own field list for the discipline's parameters (what the validator accepts).
    catalog = json.loads(run_cli("qdiscs", "--json").stdout)
    text = qdisc_sections(run_cli("qdiscs").stdout)
    assert {q["kind"] for q in catalog} == set(text)
    for q in catalog:
        assert set(q["keys"]) == set(q["params"]) | set(q["key_aliases"]), q["kind"]
        words = set(text[q["kind"]].replace(",", " ").replace("(", " ").replace(")", " ").split())
        missing = [k for k in q["keys"] if k not in words]
        assert not missing, f"aqmlab qdiscs does not list {missing} of {q['kind']}"
        scenario = tmp_path / f"{q['kind']}.json"
        # Keys that apply to one variant only are echoed with that variant (RED's `mark_p`: ns2).
        shown_somewhere: set[str] = set()
        for extra in VARIANT_ONLY_KEYS.get(q["kind"], [{}]):
            scenario.write_text(json.dumps({**TINY, "queue": {"kind": q["kind"], **extra}}))
            shown_proc = run_cli("validate", str(scenario), "--show")
            assert shown_proc.returncode == 0, shown_proc.stderr
            shown_somewhere |= set(json.loads(shown_proc.stdout)["queue"])
        missing = [k for k in q["params"] if k not in shown_somewhere]
        assert not missing, f"validate --show does not list {missing} of {q['kind']}"
        scenario.write_text(json.dumps({**TINY, "queue": {"kind": q["kind"]}}))
        proc = run_cli("validate", str(scenario), "--show")
        assert proc.returncode == 0, proc.stderr
        # The shown scenario reads back as itself (its nulls, e.g. chardonnay's max_factor, mean "default").
        scenario.write_text(proc.stdout)
        again = run_cli("validate", str(scenario), "--show")
        assert again.returncode == 0 and again.stdout == proc.stdout, (q["kind"], again.stderr)
    red = next(q for q in catalog if q["kind"] == "red")
    assert "wait" in red["keys"] and red["key_aliases"]["thresh_"] == "min_th"
    fred = next(q for q in catalog if q["kind"] == "fred")
    assert "above_max_th" in fred["params"]


def test_packet_delays_are_each_delivered_packet_of_the_asked_classes(tmp_path: Path) -> None:
    """`output.packet_delays`: one row per data packet of the tag after the warm-up; per bin they
    average to the tag's `class<t>_delay_s` column."""
    sc = {
        "run": {"duration": "6s", "warmup": "2s", "seed": 1},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}},
        "queue": {"kind": "droptail", "limit": 50},
        "flows": [{"kind": "tcp", "count": 2, "class": 3}, {"kind": "udp-cbr", "rate": "1Mbps", "class": 1}],
        "output": {"bin": "500ms", "packet_delays": [3]},
    }
    res = aqmlab.run(sc)
    p, ts = res.packet_delays, res.timeseries
    assert set(p["class"]) == {3} and set(p["flow"]) == {0, 1}
    assert p["time_s"].min() >= 2.0 and p["time_s"].is_monotonic_increasing
    assert (p["delay_s"] > 0.02).all(), "at least the bottleneck's propagation"
    bins = np.ceil(p["time_s"] / 0.5) * 0.5
    per_bin = p.groupby(bins)["delay_s"].mean()
    col = ts.set_index(np.round(ts["time_s"], 6))["class3_delay_s"]
    for t, mean in per_bin.items():
        assert mean == pytest.approx(col[round(t, 6)], rel=1e-9)
    write_results(res, tmp_path, plot=False)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "packet_delays.parquet"), p)


@pytest.mark.parametrize(("tags", "fragment"), [([7], "no flow carries class tag 7"), ([300], "0 to 255")])
def test_packet_delays_refuse_tags_no_flow_carries(tags: list, fragment: str) -> None:
    sc = {"run": {"duration": "2s"}, "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}},
          "flows": [{"kind": "tcp"}], "output": {"packet_delays": tags}}
    with pytest.raises(aqmlab.ScenarioError, match=rf"output\.packet_delays.*{fragment}"):
        aqmlab.validate(sc)


def test_packet_delays_are_refused_when_they_could_exceed_the_memory_bound() -> None:
    sc = {"run": {"duration": "60s"}, "topology": {"bottleneck": {"rate": "1Gbps", "delay": "20ms"}},
          "flows": [{"kind": "tcp"}], "output": {"packet_delays": [0]}}
    with pytest.raises(aqmlab.ScenarioError, match=r"output\.packet_delays.*18750000\d packets of 40 B.*at most 20000000"):
        aqmlab.validate(sc)


def test_goodput_counts_first_receipt_and_cannot_exceed_the_link_where_in_order_delivery_can(tmp_path: Path) -> None:
    """A 2-s window against SACK recoveries behind 10 packets of drop-tail: segments held out of order
    at the warm-up are delivered inside the window when their hole fills, so in-order delivery
    (`app_goodput_bps`) reports more payload than the link can carry (10.7 Mb/s on 9.65), while
    goodput (payload first received in the window) stays below it, up to the 20 ms of data in flight
    at the window's start; the summary says the window is short."""
    sc = {"run": {"duration": "3s", "warmup": "1s", "seed": 5},
          "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}},
          "queue": {"kind": "droptail", "limit": 10},
          "flows": [{"kind": "tcp", "count": 8, "start_jitter": "200ms", "variant": "sack", "sack": True}]}
    res = aqmlab.run(sc)
    agg, window_s = res.summary["aggregate"], res.summary["measured_s"]
    payload_capacity = 10e6 * 1448 / 1500
    assert agg["app_goodput_bps"] > payload_capacity
    assert agg["goodput_bps"] <= payload_capacity * (1 + 0.021 / window_s)
    assert res.flows["app_goodput_bps"].sum() == pytest.approx(agg["app_goodput_bps"])
    assert "short against the flows' loss recoveries" in res.summary["warnings"][0]
    path = tmp_path / "short.json"
    path.write_text(json.dumps(sc))
    proc = run_cli("run", str(path), "--out", str(tmp_path / "out"), "--no-plot")
    assert proc.returncode == 0, proc.stderr
    assert "warning: the measured window is short" in proc.stderr


def test_a_long_window_has_no_short_window_warning_and_both_goodputs_agree() -> None:
    """The built-in default (50 s measured): the two goodputs differ by 0.1 %, and no warning."""
    res = aqmlab.run(str(Path(aqmlab.__file__).parent / "scenarios" / "default.toml"))
    assert "warnings" not in res.summary
    agg = res.summary["aggregate"]
    # Without the warning at most 1 % of the window's payload was held at its edges.
    assert abs(agg["goodput_bps"] - agg["app_goodput_bps"]) <= 0.01 * agg["goodput_bps"]
