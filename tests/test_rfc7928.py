"""The RFC 7928 scenarios (rfc7928_*.toml) and ``aqmlab suite rfc7928`` (docs/rfc7928.md).

The expected numbers are transcribed from the ns-3 AQM Evaluation Suite's examples/*.cc
(indu98/aqm_eval_suite), as the scenario files' opening comments cite them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

import aqmlab
from aqmlab import api
from aqmlab.library import builtin_names, builtin_path, builtin_summary
from aqmlab.suite import AQMS, CASES, RTT_FAIRNESS_D_MS, _shorten, aqm_queue, select_cases

from conftest import run_cli
from test_bad_input import check_one_line_error

RFC = [n for n in builtin_names() if n.startswith("rfc7928_")]


def filled(name: str) -> dict:
    return api.validate(builtin_path(name))


def flows(name: str) -> list[dict]:
    return filled(name)["flows"]


def test_every_suite_program_has_a_file() -> None:
    # The suite's examples: 13 scenario programs (LBE-transport-sender is rfc7928_lbe).
    assert sorted(RFC) == sorted(f"rfc7928_{s}" for s in [
        "tcp_friendly_same_iw", "tcp_friendly_diff_iw", "aggressive", "unresponsive", "unresponsive_friendly", "lbe",
        "rtt_fairness", "mild_congestion", "medium_congestion", "heavy_congestion", "vary_congestion",
        "vary_capacity_uno", "vary_capacity_duo", "bidirectional"])
    assert {c.builtin for c in CASES} == set(RFC)


@pytest.mark.parametrize("name", RFC)
def test_scenario_validates_and_cites_its_sources(name: str) -> None:
    s = filled(name)
    assert builtin_summary(name).startswith("RFC 7928 §")
    text = builtin_path(name).read_text()
    assert "indu98/aqm_eval_suite" in text and ".cc" in text
    # The suite's dumbbell: 45-packet buffers at 1 Mb/s, 500 at 100 Mb/s; FIFO baseline both ways.
    capacity = "vary_capacity" in name
    assert s["queue"] == {"kind": "droptail", "limit": 500 if capacity else 45}
    assert s["reverse_queue"]["limit"] == (500 if capacity else 45)
    access = "500Mbps" if capacity else "10Mbps"
    assert s["topology"]["access"] == {"rate": access, "delay": "1ms"}
    assert s["topology"]["receiver_access"] == {"rate": access, "delay": "1ms"}
    assert s["topology"]["bottleneck"]["rate"] == ("100Mbps" if capacity else "1Mbps")
    delay = {"rfc7928_rtt_fairness": "2ms", "rfc7928_mild_congestion": "45ms", "rfc7928_bidirectional": "45ms"}
    assert s["topology"]["bottleneck"]["delay"] == delay.get(name, "48ms")
    assert s["run"]["duration"] == ("600s" if name == "rfc7928_rtt_fairness" else "300s")
    for f in s["flows"]:
        if f["kind"] == "tcp":  # ns3::TcpNewReno, SACK, 698-byte segments (750 B on the wire)
            assert (f["mss"], f["header_bytes"], f["sack"]) == ("698B", "52B", True)
            assert f["initial_window"] in (3, 10)
            expected = {"rfc7928_aggressive": "cubic-ns3", "rfc7928_lbe": f["congestion_control"]}.get(name, "reno")
            assert f["congestion_control"] == expected


def test_tcp_friendly_different_initcwnd() -> None:
    long, short = flows("rfc7928_tcp_friendly_diff_iw")
    assert (long["initial_window"], long.get("size")) == (3, None)
    # maxPacket = 100 packets of 698 bytes, initial cwnd 10, from 0.5 s.
    assert (short["initial_window"], short["size"], short["start"]) == (10, "69800B", "500ms")


def test_unresponsive_senders() -> None:
    (udp,) = flows("rfc7928_unresponsive")
    assert (udp["kind"], udp["rate"], udp["packet_size"]) == ("udp-cbr", "10Mbps", "726B")
    tcp, udp = flows("rfc7928_unresponsive_friendly")
    assert tcp["kind"] == "tcp"
    # 0.8 Mb/s of 698-byte payloads sent as 726-byte datagrams.
    assert udp["rate"] == "832092bps" and round(0.8e6 / (698 * 8) * 726 * 8) == 832092


def test_lbe_is_ledbat_against_newreno() -> None:
    # LBE-transport-sender.cc: flow 0 ns3::TcpLedbat, flow 1 ns3::TcpNewReno, both from 0 s, IW 3.
    ledbat, newreno = flows("rfc7928_lbe")
    assert (ledbat["congestion_control"], newreno["congestion_control"]) == ("ledbat", "reno")
    # TcpLedbat's attribute defaults, shown in full by validation.
    assert {k: v for k, v in ledbat.items() if k.startswith("ledbat_")} == {
        "ledbat_variant": "ns3", "ledbat_target": "100ms", "ledbat_gain": 1.0, "ledbat_base_history": 10,
        "ledbat_noise_filter": 4, "ledbat_slow_start": True, "ledbat_min_cwnd": 2}
    assert not any(k.startswith("ledbat_") for k in newreno)
    assert ledbat["timestamps"] is True  # LEDBAT's one-way delay comes from them
    (case,) = select_cases(["5.4"])
    assert (case.name, case.ns3_name, case.lbe_flows) == ("lbe", "LbeTransportSender", (0,))


def test_lbe_sender_yields_to_newreno_behind_a_fifo() -> None:
    # NewReno fills the 45-packet FIFO (up to 270 ms at 1 Mb/s), above LEDBAT's 100-ms target, so
    # LEDBAT backs off to its minimum window: a small share of the link (threshold set before running).
    fl = _run("rfc7928_lbe", aqm_queue("fifo", 45)).flows.set_index("id")["goodput_bps"]
    assert fl[0] / fl.sum() < 0.25, fl.to_dict()
    assert fl.sum() > 0.9 * 0.931e6  # the pair still fills the link


def test_report_gives_the_lbe_share() -> None:
    from aqmlab.suite_report import _markdown, case_table
    (case,) = select_cases(["lbe"])
    table = pd.DataFrame({"scenario": "lbe", "aqm": "fifo", "run_id": ["a", "b"], "run.seed": [1, 2],
                          "goodput_bps": [0.9e6, 0.9e6], "queue_mean_sojourn_s": 0.2, "queue_p99_sojourn_s": 0.27,
                          "queue_drop_rate": 0.01, "jain_index": 0.6})
    fl = pd.DataFrame({"scenario": "lbe", "run_id": ["a", "a", "b", "b"], "flow": [0, 1, 0, 1], "kind": "tcp",
                       "goodput_bps": [0.1e6, 0.8e6, 0.2e6, 0.7e6]})
    df = case_table(table, fl, case, ["fifo"])
    assert df["lbe_share_pct"].iloc[0] == pytest.approx(100 * (1 / 9 + 2 / 9) / 2)
    assert "LEDBAT share (%)" in _markdown(df) and "| 16.7 |" in _markdown(df)


@pytest.mark.parametrize("name, n", [("mild", 3), ("medium", 7), ("heavy", 10)])
def test_congestion_levels_start_one_second_apart(name: str, n: int) -> None:
    fs = flows(f"rfc7928_{name}_congestion")
    assert [api.seconds(f["start"]) for f in fs] == list(range(n))  # (uint32_t)(0.036|0.081|0.114 * 90)
    assert all(f["count"] == 1 for f in fs)


def test_vary_congestion_on_periods() -> None:
    fs = flows("rfc7928_vary_congestion")
    on = [(f["count"], api.seconds(f["start"]), api.seconds(f.get("stop") or "300s")) for f in fs]
    assert on[0] == (4, 0, 300)  # flows 0-3
    assert on[1:6] == [(4, a, a + 40) for a in (0, 60, 120, 180, 240)]  # flows 4-7
    assert on[6:] == [(2, a, a + 20) for a in (0, 60, 120, 180, 240)]  # flows 8-9


def test_vary_capacity_steps_between_100_and_10_mbps() -> None:
    uno = filled("rfc7928_vary_capacity_uno")["topology"]["bottleneck"]["rate_schedule"]
    assert [(api.seconds(e["at"]), e["rate"]) for e in uno] == \
        [(20.0 * k, "10Mbps" if k % 2 else "100Mbps") for k in range(1, 15)]
    duo = filled("rfc7928_vary_capacity_duo")["topology"]["bottleneck"]["rate_schedule"]
    assert len(duo) == 2999
    assert [api.seconds(e["at"]) for e in duo] == pytest.approx([0.1 * k for k in range(1, 3000)])
    assert {e["rate"] for e in duo[0::2]} == {"10Mbps"} and {e["rate"] for e in duo[1::2]} == {"100Mbps"}
    assert all(f["max_window"] == "131072B" for f in flows("rfc7928_vary_capacity_uno"))


def test_rtt_fairness_cases_are_the_suites_fifteen() -> None:
    cases = select_cases(["rtt_fairness"])
    assert [c.ns3_name for c in cases] == [f"RttFairness{i}" for i in range(1, 16)]
    base = flows("rfc7928_rtt_fairness")[0]
    assert (base["access_delay"], base["receiver_access_delay"]) == ("24ms", "24ms")  # 2*(24+2+24) = 100 ms
    rtts = []
    for case in cases:
        f = api.validate(case.scenario())["flows"][1]
        assert f["access_delay"] == f["receiver_access_delay"] and f["start"] == "500ms"
        rtts.append(round(4 * api.seconds(f["access_delay"]) * 1e3) + 4)
    assert rtts == [4, 8, 8, 16, 20, 28, 40, 60, 80, 100, 148, 200, 300, 400, 500]  # (d - 4) / 4, integer
    assert len(RTT_FAIRNESS_D_MS) == 15


def test_bidirectional_sends_flow_0_the_other_way() -> None:
    fs = flows("rfc7928_bidirectional")
    assert [f["direction"] for f in fs] == ["reverse", "forward", "forward"]
    assert [api.seconds(f["start"]) for f in fs] == [0, 1, 2]


def test_aqms_are_configured_as_the_suite_does() -> None:
    red = aqm_queue("red", 45)
    assert (red["min_th"], red["max_th"], red["limit"], red["max_p"], red["mean_packet_size"]) == (5, 15, 45, 0.02, "750B")
    assert aqm_queue("codel", 500)["limit"] == 500
    nlred = aqm_queue("nlred", 45)
    assert nlred == {**red, "nonlinear": True}, "NonLinearRed is RED's settings with NLRED = true"
    with pytest.raises(aqmlab.ScenarioError, match="--aqm 'blue' is not an AQM of the suite; allowed: fifo"):
        aqm_queue("blue", 45)


def test_shortened_scenarios_stay_valid() -> None:
    for case in select_cases(["vary_congestion", "vary_capacity_duo", "rtt_fairness_1"]):
        s = _shorten(case.scenario(), 30.0)
        api.validate(s)
        assert s["run"]["duration"] == "30s"


def _run(name: str, queue: dict, seconds: float = 60.0):
    s = _shorten(api.scenario_dict(builtin_path(name)), seconds)
    s["queue"] = queue
    return aqmlab.run(s)


def test_fifo_lets_udp_take_most_of_the_link_fq_codel_protects_tcp() -> None:
    # 0.83 Mb/s of UDP and one TCP flow on 1 Mb/s. A FIFO drops both alike, so the unresponsive flow keeps
    # most of its offered load and TCP backs off to what is left; FQ-CoDel serves the two queues round
    # robin and sheds the UDP queue when the buffer is full, so TCP gets a far larger share (up to half;
    # CoDel's drops on its short queue keep it below that: 40 % in the full run, docs/rfc7928.md).
    shares = {}
    for aqm in ("fifo", "fq_codel"):
        fl = _run("rfc7928_unresponsive_friendly", aqm_queue(aqm, 45)).flows
        shares[aqm] = fl.set_index("kind")["goodput_bps"] / fl["goodput_bps"].sum()
    assert shares["fifo"]["udp-cbr"] > 0.75
    assert shares["fq_codel"]["tcp"] > 0.3 and shares["fq_codel"]["tcp"] > 2 * shares["fifo"]["tcp"]


def test_fq_codel_and_codel_keep_the_queue_short_where_fifo_fills_it() -> None:
    # Ten long TCP flows keep a FIFO near its 45 packets: 45 * 750 B at 1 Mb/s = 270 ms. CoDel aims at 5 ms.
    delay = {aqm: _run("rfc7928_heavy_congestion", aqm_queue(aqm, 45)).queues.set_index("name")
             .loc["bottleneck", "mean_sojourn_s"] for aqm in ("fifo", "codel", "fq_codel")}
    assert delay["fifo"] > 0.15
    assert delay["codel"] < delay["fifo"] / 4 and delay["fq_codel"] < delay["fifo"] / 3


def test_cli_quick_run_writes_plots_and_report(tmp_path) -> None:
    out = tmp_path / "suite"
    proc = run_cli("suite", "rfc7928", "--quick", "--scenarios", "unresponsive,5.1.1", "--aqm", "fifo,fq_codel",
                   "--workers", "2", "--out", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    for case in ("unresponsive", "tcp_friendly_same_iw"):
        assert (out / case / "delay_goodput.png").stat().st_size > 10_000
        table = pd.read_csv(out / case / "table.csv")
        assert list(table["aqm"]) == ["fifo", "fq_codel"] and set(table["runs"]) == {3}
    report = (out / "report.md").read_text()
    assert "## §5.3.1 unresponsive" in report and "## §5.1.1 tcp_friendly_same_iw" in report
    assert "| fq_codel | 3 |" in report and "UDP share" in report
    runs = pd.read_parquet(out / "sweep.parquet")
    assert len(runs) == 2 * 2 * 3 and set(runs["scenario"]) == {"unresponsive", "tcp_friendly_same_iw"}
    summary = json.loads(next((out / "runs").glob("*/summary.json")).read_text())
    assert summary["scenario"]["run"]["duration"] == "60s"  # --quick


@pytest.mark.parametrize("args, fragments", [
    (["nosuch"], ["suite 'nosuch' is not a suite; allowed: rfc7928"]),
    (["rfc7928", "--aqm", "blue"], ["--aqm 'blue' is not an AQM of the suite"]),
    (["rfc7928", "--scenarios", "nosuch"], ["--scenarios 'nosuch' is not a scenario of the suite", "heavy_congestion"]),
    (["rfc7928", "--aqm", "red,red"], ["--aqm: an AQM is listed twice"]),
    (["rfc7928", "--seeds", "0"], ["--seeds"]),
    (["rfc7928", "--out", ""], ["--out '': the results directory must not be empty"]),
])
def test_bad_cli_input_is_one_line(args: list[str], fragments: list[str]) -> None:
    check_one_line_error(run_cli("suite", *args), fragments)


@pytest.mark.parametrize("doc", ["usage.md", "rfc7928.md"])
def test_docs_give_the_number_of_aqms_the_suite_runs(doc: str) -> None:
    # Both said "7 AQMs" after nlred made it 8.
    text = (Path(__file__).parent.parent / "docs" / doc).read_text()
    counts = [int(n) for line in text.splitlines() if line.startswith("aqmlab suite rfc7928")
              for n in re.findall(r"(\d+) AQMs", line)]
    assert counts and set(counts) == {len(AQMS)}, counts


def test_suite_flow_plot_does_not_claim_a_warm_up(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The suite's per-flow plot said "after warm-up"; its scenarios have none (warmup = "0s").
    import matplotlib.pyplot as plt

    from aqmlab.suite_report import write_case_plots

    assert {api.validate(builtin_path(c.builtin))["run"]["warmup"] for c in CASES} == {"0ns"}
    drawn = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig: (drawn.append(fig), close(fig)))
    case = CASES[0]
    table = pd.DataFrame([{"scenario": case.name, "aqm": "fifo", "run.seed": s, "run_id": f"r{s}",
                           "queue_mean_sojourn_s": 0.01 * s, "goodput_bps": 1e6 * s} for s in (1, 2, 3)])
    flows = pd.DataFrame([{"scenario": case.name, "aqm": "fifo", "run.seed": s, "run_id": f"r{s}", "flow": 0,
                           "kind": "tcp", "goodput_bps": 1e6 * s} for s in (1, 2, 3)])
    write_case_plots(table, flows, case, tmp_path)
    labels = [fig.axes[0].get_ylabel() for fig in drawn]
    assert "goodput per flow over the whole run (no warm-up) (Mb/s)" in labels, labels
    assert not any("warm-up (Mb/s)" in label and "no warm-up" not in label for label in labels), labels
