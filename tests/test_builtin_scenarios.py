"""The built-in scenarios (`aqmlab scenarios`, `aqmlab run NAME`) and `--set KEY=VALUE` (`with_overrides`)."""

from __future__ import annotations

import json
from pathlib import Path

import aqmlab
import pytest
from aqmlab import ScenarioError, builtin_names, builtin_path, with_overrides
from aqmlab.library import builtin_summary
from aqmlab.metrics import jain_index

from conftest import run_cli

FLENT = {"rrul", "tcp_4up", "rtt_fair"}
OURS = {"capacity_step"}


def test_every_builtin_validates_and_says_what_it_is() -> None:
    assert {"default"} | FLENT | OURS <= set(builtin_names())
    for name in builtin_names():
        aqmlab.validate(builtin_path(name))
        assert len(builtin_summary(name)) > 20, name
    proc = run_cli("scenarios")
    assert proc.returncode == 0, proc.stderr
    for name in builtin_names():
        assert f"{name}  " in proc.stdout and builtin_summary(name) in proc.stdout


def test_scenarios_name_prints_the_file_to_start_from(tmp_path: Path) -> None:
    proc = run_cli("scenarios", "rrul")
    assert proc.returncode == 0 and proc.stdout == builtin_path("rrul").read_text(encoding="utf-8")
    (tmp_path / "mine.toml").write_text(proc.stdout)
    assert aqmlab.validate(tmp_path / "mine.toml") == aqmlab.validate(builtin_path("rrul"))
    proc = run_cli("scenarios", "rrull")
    assert proc.returncode == 2 and "no built-in scenario named 'rrull'" in proc.stderr and "rrul," in proc.stderr


def test_rrul_exposes_bufferbloat_that_fq_codel_removes() -> None:
    """RRUL's point: behind 1000-packet FIFOs the probes wait hundreds of ms under load both ways;
    FQ-CoDel in both directions keeps them near the 22 ms one-way base delay and both directions busy."""
    fifo = aqmlab.run(builtin_path("rrul"))
    fq = aqmlab.run(with_overrides(builtin_path("rrul"), {"queue.kind": "fq_codel", "reverse_queue.kind": "fq_codel"}))
    for res in (fifo, fq):
        f = res.flows
        assert dict(f.groupby(["kind", "direction"]).size()) == {("tcp", "forward"): 4, ("tcp", "reverse"): 4,
                                                                 ("udp-cbr", "forward"): 1, ("udp-cbr", "reverse"): 1}
    probes = lambda r: r.flows[r.flows["kind"] == "udp-cbr"]  # noqa: E731
    assert (probes(fifo)["delay_p50_s"] > 0.2).all(), probes(fifo)["delay_p50_s"].tolist()
    assert (probes(fq)["delay_p99_s"] < 0.05).all(), probes(fq)["delay_p99_s"].tolist()
    tcp = fq.flows[fq.flows["kind"] == "tcp"]
    for direction in ("forward", "reverse"):
        assert tcp[tcp["direction"] == direction]["goodput_bps"].sum() > 0.9 * 10e6 * 1448 / 1500, direction


def test_capacity_step_multiplies_a_fifos_delay_and_not_fq_codels() -> None:
    """The FIFO stays full through the step, so its delay grows with the fivefold longer drain time;
    FQ-CoDel's sparse probe keeps near the 22 ms base one-way delay in every phase."""
    fifo = aqmlab.run(builtin_path("capacity_step"))
    fq = aqmlab.run(with_overrides(builtin_path("capacity_step"), {"queue.kind": "fq_codel"}))

    def probe_median(res: aqmlab.Result, start: float, end: float) -> float:
        d = res.packet_delays
        return float(d[(d["time_s"] > start) & (d["time_s"] <= end)]["delay_s"].median())

    assert probe_median(fifo, 35, 60) > 3 * probe_median(fifo, 10, 30)
    assert probe_median(fifo, 35, 60) > 2.0
    for phase in ((10, 30), (35, 60), (65, 90)):
        assert probe_median(fq, *phase) < 0.05, phase


def test_tcp_4up_probe_sees_the_queue_the_uploads_build() -> None:
    fifo = aqmlab.run(builtin_path("tcp_4up"))
    codel = aqmlab.run(with_overrides(builtin_path("tcp_4up"), [("queue.kind", "codel")]))
    probe = lambda r: r.flows[r.flows["kind"] == "udp-cbr"].iloc[0]  # noqa: E731
    assert probe(fifo)["delay_p50_s"] > 0.3 and probe(codel)["delay_p50_s"] < 0.04
    assert codel.queues.iloc[0]["utilization"] > 0.95


def test_rtt_fair_flows_have_the_documented_base_rtts() -> None:
    """20, 40, 80, 160 ms base RTT: every flow waits in the same queue, so under CoDel (a few ms of queue)
    their median one-way delays differ by the differences of their half RTTs, 10, 30 and 70 ms."""
    res = aqmlab.run(with_overrides(builtin_path("rtt_fair"), {"queue.kind": "codel"}))
    p50 = res.flows.sort_values("id")["delay_p50_s"].to_numpy()
    for got, want in zip(p50[1:] - p50[0], (0.010, 0.030, 0.070), strict=True):
        assert got == pytest.approx(want, abs=0.002)
    assert p50[0] < 0.030  # 10 ms of propagation and serialisation, the rest queueing


def test_run_a_builtin_by_name_with_set(tmp_path: Path) -> None:
    out = tmp_path / "r"
    proc = run_cli("run", "tcp_4up", "--set", "queue.kind=codel", "--set", "run.duration=8s",
                   "--set", "flows[0].count=2", "--out", str(out), "--no-plot")
    assert proc.returncode == 0, proc.stderr
    assert '--set queue.kind="codel" --set run.duration="8s" --set flows[0].count=2' in proc.stdout
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scenario"]["queue"]["kind"] == "codel" and summary["simulated_s"] == pytest.approx(8.0)
    assert len(summary["flows"]) == 3


def test_default_results_directory_is_named_after_the_builtin(tmp_path: Path) -> None:
    proc = run_cli("run", "tcp_4up", "--set", "run.duration=6s", "--no-plot", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "results" / "tcp_4up" / "summary.json").exists()


def test_a_file_of_the_same_name_wins_over_the_builtin(tmp_path: Path) -> None:
    (tmp_path / "rrul").write_text(builtin_path("default").read_text())
    proc = run_cli("validate", "rrul", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("rrul: ok (10 flows, queue red)"), proc.stdout


@pytest.mark.parametrize(("text", "value"), [
    ("8", 8), ("0.25", 0.25), ("true", True), ('["1ms", "2ms"]', ["1ms", "2ms"]), ("fq_codel", "fq_codel"),
    ('"10Mbps"', "10Mbps"), ("10Mbps", "10Mbps"), ('{ rate = "5Mbps" }', {"rate": "5Mbps"}), ("1\nx = 2", "1\nx = 2"),
])
def test_set_values_are_read_as_toml_else_as_strings(text: str, value) -> None:
    from aqmlab.cli import _set_value

    assert _set_value(text) == value


@pytest.mark.parametrize(("args", "message"), [
    (["--set", "queue.kind=fq_codl"], 'default.toml with --set queue.kind="fq_codl": queue.kind: unknown queue discipline'),
    (["--set", "flows[3].count=2"], '--set "flows[3].count": flows has 1 item(s) in the scenario, so there is no flows[3]'),
    (["--set", "queue..kind=red"], '--set "queue..kind": not a key path'),
    (["--set", "=3"], "write KEY=VALUE"),
    (["--set", "run.duration"], "write KEY=VALUE"),
    (["--set", "queue.limt=5"], "queue.limt"),
])
def test_set_mistakes_are_one_line_errors(args: list[str], message: str) -> None:
    proc = run_cli("validate", str(builtin_path("default")), *args)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_unknown_scenario_name_lists_the_builtins() -> None:
    proc = run_cli("run", "nonesuch", "--no-plot")
    assert proc.returncode == 2
    assert "nonesuch: no such scenario file, and no built-in scenario has that name" in proc.stderr
    assert "rtt_fair" in proc.stderr


def test_with_overrides_leaves_its_input_alone() -> None:
    base = aqmlab.api.scenario_dict(builtin_path("default"))
    changed = with_overrides(base, {"queue.max_p": 0.2, "flows[0].count": 3})
    assert base["queue"]["max_p"] == 0.1 and base["flows"][0]["count"] == 10
    assert changed["queue"]["max_p"] == 0.2 and changed["flows"][0]["count"] == 3
    with pytest.raises(ScenarioError, match='override "flows\\[1\\].count": flows has 1 item'):
        with_overrides(base, {"flows[1].count": 3})


def test_a_sweep_can_take_a_builtin_as_its_base(tmp_path: Path) -> None:
    from aqmlab.sweep import load_sweep

    grid = load_sweep({"base": "rtt_fair", "sweep": {"queue.kind": ["fifo", "fq_codel"]}})
    assert [r.scenario["queue"]["kind"] for r in grid.runs] == ["fifo", "fq_codel"]
    assert grid.runs[0].scenario["flows"] == aqmlab.api.scenario_dict(builtin_path("rtt_fair"))["flows"]
    (tmp_path / "rtt_fair").write_text(builtin_path("default").read_text())  # a file of that name wins
    grid = load_sweep({"base": str(tmp_path / "rtt_fair"), "sweep": {"queue.max_p": [0.2]}})
    assert grid.runs[0].scenario["queue"]["kind"] == "red"


def test_a_name_the_system_cannot_look_up_is_one_line(tmp_path: Path) -> None:
    proc = run_cli("run", "a" * 300, "--no-plot", cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "File name too long" in proc.stderr


def test_summary_line_gives_jain_per_kind_when_kinds_mix(tmp_path: Path) -> None:
    """tcp_4up's probe takes 8 kb/s by design; the all-flow index would call four even TCP flows unfair."""
    proc = run_cli("run", "tcp_4up", "--out", str(tmp_path / "r"), "--no-plot")
    assert proc.returncode == 0, proc.stderr
    flows = json.loads((tmp_path / "r" / "summary.json").read_text())["flows"]
    tcp = [f["goodput_bps"] for f in flows if f["kind"] == "tcp"]
    assert f"; {jain_index(tcp):.4f} over the tcp flows" in proc.stdout
