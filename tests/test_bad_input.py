"""Bad input (issue #2): one line on stderr naming the key path, the line, and what is allowed;
exit status 2; no traceback; nothing written to the output directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SMALL_TCP, run_cli

# (edit of SMALL_TCP, expected fragments of the error line)
CASES = {
    "unknown key": (("seed = 7", "seed = 7\nsed = 8"), ["run.sed", "line 5", "unknown key", "duration, warmup, seed"]),
    "missing required key": (('duration = "4s"\n', ""), ["run.duration", "missing"]),
    "wrong unit": (('"10Mbps"', '"10Mbs"'), ["topology.bottleneck.rate", "line 7", "10Mbs", "Mbps"]),
    "negative rate": (('"10Mbps"', '"-10Mbps"'), ["topology.bottleneck.rate", "line 7", "positive"]),
    "zero rate": (('"10Mbps"', '"0Mbps"'), ["topology.bottleneck.rate", "positive"]),
    "min_th above max_th": (("min_th = 5", "min_th = 20"), ["queue.min_th", "line 13", "max_th"]),
    "max_p above one": (("max_p = 0.1", "max_p = 1.5"), ["queue.max_p", "line 15", "(0, 1]"]),
    "max_p zero": (("max_p = 0.1", "max_p = 0"), ["queue.max_p", "(0, 1]"]),
    "weight zero": (("weight = 0.002", "weight = 0.0"), ["queue.weight", "line 16", "(0, 1]"]),
    "weight above one": (("weight = 0.002", "weight = 2"), ["queue.weight", "(0, 1]"]),
    "zero flows": (("count = 4", "count = 0"), ["flows[0].count", "line 20", "at least 1"]),
    "warm-up not shorter than duration": (('warmup = "1s"', 'warmup = "5s"'), ["run.warmup", "line 3", "shorter"]),
    "unknown discipline": (('kind = "red"', 'kind = "blue"'), ["queue.kind", "droptail", "red"]),
    "not TOML": (("[run]", "[run"), ["line 1"]),
    "http: parametric key with Mah's distributions": (
        ('kind = "tcp"', 'kind = "http"\nprimary_median = "2kB"'),
        ["flows[0].primary_median", "line 20", 'not a key of distributions = "mah"', 'distributions = "parametric"',
         "think_max"]),
    "http: unknown distributions": (
        ('kind = "tcp"', 'kind = "http"\ndistributions = "ns2"'),
        ["flows[0].distributions", "line 20", "ns2", "mah", "parametric"]),
    "per_flow_tcp_state without a TCP flow": (
        ('[[flows]]\nkind = "tcp"\ncount = 4\nstart_jitter = "500ms"',
         '[output]\nper_flow_tcp_state = true\n\n[[flows]]\nkind = "udp-cbr"\nrate = "1Mbps"'),
        ["output.per_flow_tcp_state", "line 19", '"tcp"', '"http"', "got none"]),
    "http: unknown start_mode": (
        ('kind = "tcp"', 'kind = "http"\nstart_mode = "warm"'),
        ["flows[0].start_mode", "line 20", "warm", "stationary", "synchronized"]),
}


def check_one_line_error(proc, fragments: list[str]) -> None:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("aqmlab: error: ")
    assert "Traceback" not in proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", ["validate", "run"])
def test_bad_scenario_is_one_clear_line(case: str, command: str, tmp_path: Path) -> None:
    (old, new), fragments = CASES[case]
    assert old in SMALL_TCP
    scenario = tmp_path / "bad.toml"
    scenario.write_text(SMALL_TCP.replace(old, new, 1))
    out = tmp_path / "out"
    args = [command, str(scenario)] + (["--out", str(out)] if command == "run" else [])
    check_one_line_error(run_cli(*args), fragments + ["bad.toml"])
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.toml"], "a staging directory was left behind"


def test_missing_scenario_file(tmp_path: Path) -> None:
    check_one_line_error(run_cli("run", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "o")),
                         ["nope.toml", "no such scenario file"])
    assert not (tmp_path / "o").exists()


def test_unwritable_output_directory(small_scenario: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    check_one_line_error(run_cli("run", str(small_scenario), "--out", str(blocker / "results")), ["--out", "a-file"])
    assert blocker.read_text() == "not a directory"


def test_output_path_that_is_a_file(small_scenario: Path, tmp_path: Path) -> None:
    target = tmp_path / "results"
    target.write_text("precious")
    check_one_line_error(run_cli("run", str(small_scenario), "--out", str(target)), ["--out", "not a directory"])
    assert target.read_text() == "precious"


def test_python_api_raises_a_value_error_naming_the_key() -> None:
    import aqmlab

    with pytest.raises(aqmlab.ScenarioError, match=r"flows\[0\]\.count.*at least 1"):
        aqmlab.run({"run": {"duration": "1s"}, "topology": {"bottleneck": {"rate": "1Mbps"}},
                    "flows": [{"kind": "tcp", "count": 0}]})
    with pytest.raises(ValueError):  # ScenarioError is a ValueError for callers that catch those
        aqmlab.validate({"run": {"duration": "1s"}})
