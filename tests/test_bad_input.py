"""Bad input (issue #2): one line on stderr naming the key path, the line, and what is allowed;
exit status 2; no traceback; nothing written to the output directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import SMALL_TCP, run_cli

# SMALL_TCP's [queue] body, for cases that swap the discipline.
RED_QUEUE = 'kind = "red"\nlimit = 60\nmin_th = 5\nmax_th = 15\nmax_p = 0.1\nweight = 0.002'

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
    "unknown discipline": (('kind = "red"', 'kind = "purple"'), ["queue.kind", "droptail", "red"]),
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
    "duration too long": (('duration = "4s"', 'duration = "1e10s"'),
                          ["run.duration", "line 2", '"1e10s" is too long', "at most 1000000000s"]),
    "negative seed": (("seed = 7", "seed = -1"), ["run.seed", "line 4", "0 to 18446744073709551615", "got -1"]),
    "seed beyond TOML integers": (("seed = 7", "seed = 18446744073709551616"),
                                  ["line 4", "seed = 18446744073709551616 is too large", "9223372036854775807"]),
    "integer beyond TOML integers names its key": (("limit = 60", "limit = 100000000000000000000"),
                                                   ["line 12", "limit = 100000000000000000000 is too large",
                                                    "9223372036854775807"]),
    "rate below one bit per second": (('"10Mbps"', '"1e-9bps"'),
                                      ["topology.bottleneck.rate", "line 7", "below the smallest allowed, 1bps"]),
    "bin giving too many rows": (('packet_size = "500B"', 'packet_size = "500B"\n\n[output]\nbin = "1ns"'),
                                 ["output.bin", "line 29", "4000000000 time-series rows", "at most 1000000",
                                  "at least 4us"]),
    "UDP packet smaller than its headers": (('packet_size = "500B"', 'packet_size = "20B"'),
                                            ["flows[1].packet_size", "line 26", "between 28B", "20B"]),
    "string where an integer goes": (('start_jitter = "500ms"', 'start_jitter = "500ms"\ndelay_hint = "high"'),
                                     ["flows[0].delay_hint", "line 22", 'string "high"', "expected an integer"]),
    "string where a number goes": (("max_p = 0.1", 'max_p = "0.1"'),
                                   ["queue.max_p", "line 15", 'string "0.1"', "expected a number"]),
    "ssthresh_from_pipe without SACK": (('start_jitter = "500ms"', 'start_jitter = "500ms"\nssthresh_from_pipe = true'),
                                        ["flows[0].ssthresh_from_pipe", "line 22", 'variant = \"sack\"', "newreno"]),
    "rate change at time zero": (('delay = "10ms" }', 'delay = "10ms", rate_schedule = [{ at = "0s", rate = "5Mbps" }] }'),
                                 ["topology.bottleneck.rate_schedule[0].at", "line 7", "after 0s"]),
    "rate change after the run": (('delay = "10ms" }', 'delay = "10ms", rate_schedule = [{ at = "9s", rate = "5Mbps" }] }'),
                                  ["topology.bottleneck.rate_schedule[0].at", "9s is not before the end of the run",
                                   "run.duration 4s"]),
    "rate changes out of order": (
        ('delay = "10ms" }', 'delay = "10ms", rate_schedule = [{ at = "2s", rate = "5Mbps" }, { at = "1500ms", rate = "1Mbps" }] }'),
        ["topology.bottleneck.rate_schedule[1].at", "increasing time order", "1500ms follows 2s"]),
    "negative scheduled rate": (('delay = "10ms" }', 'delay = "10ms", rate_schedule = [{ at = "2s", rate = "-5Mbps" }] }'),
                                ["topology.bottleneck.rate_schedule[0].rate", "positive", '"0bps" for an outage']),
    "rate schedule on an access link": (('delay = "1ms" }', 'delay = "1ms", rate_schedule = [] }'),
                                        ["topology.access.rate_schedule", "only the bottleneck"]),
    "bbr without sack": (('start_jitter = "500ms"', 'start_jitter = "500ms"\ncongestion_control = "bbr"\nvariant = "newreno"'),
                         ["flows[0].variant", 'congestion_control = \"bbr\" needs variant = \"sack\"', "newreno"]),
    "bbr without pacing": (('start_jitter = "500ms"', 'start_jitter = "500ms"\ncongestion_control = "bbr"\nvariant = "sack"\npacing = false'),
                           ["flows[0].pacing", "needs pacing = true"]),
    "pacing without bbr": (('start_jitter = "500ms"', 'start_jitter = "500ms"\npacing = true'),
                           ["flows[0].pacing", "pacing is only implemented for bbr", '"reno"']),
    "ledbat key without ledbat": (('start_jitter = "500ms"', 'start_jitter = "500ms"\nledbat_target = "50ms"'),
                                  ["flows[0].ledbat_target", 'applies only to congestion_control = "ledbat"', '"reno"']),
    "ledbat gain zero": (('start_jitter = "500ms"', 'start_jitter = "500ms"\ncongestion_control = "ledbat"\nledbat_gain = 0'),
                         ["flows[0].ledbat_gain", "positive", "got 0"]),
    "ledbat target below a millisecond": (
        ('start_jitter = "500ms"', 'start_jitter = "500ms"\ncongestion_control = "ledbat"\nledbat_target = "500us"'),
        ["flows[0].ledbat_target", "at least 1ms", "500us"]),
    "unknown ledbat variant": (
        ('start_jitter = "500ms"', 'start_jitter = "500ms"\ncongestion_control = "ledbat"\nledbat_variant = "utp"'),
        ["flows[0].ledbat_variant", "utp", "ns3", "rfc6817"]),
    "ledbat allowed_increase with the ns3 variant": (
        ('start_jitter = "500ms"', 'start_jitter = "500ms"\ncongestion_control = "ledbat"\nledbat_allowed_increase = 2'),
        ["flows[0].ledbat_allowed_increase", 'ledbat_variant = "rfc6817"']),
    "ledbat noise filter of zero": (
        ('start_jitter = "500ms"', 'start_jitter = "500ms"\ncongestion_control = "ledbat"\nledbat_noise_filter = 0'),
        ["flows[0].ledbat_noise_filter", "between 1 and 10000", "got 0"]),
    "cobalt: target not below interval": (
        (RED_QUEUE, 'kind = "cobalt"\ntarget = "200ms"'),
        ["queue.target", "line 12", "shorter than interval (100ms)", "got 200ms"]),
    "cobalt: BLUE step above one": (
        (RED_QUEUE, 'kind = "cobalt"\np_inc = 2.0'), ["queue.p_inc", "line 12", "(0, 1]", "got 2"]),
    "cobalt: ns-3's BLUE threshold under the linux variant": (
        (RED_QUEUE, 'kind = "cobalt"\nvariant = "linux"\nblue_threshold = "400ms"'),
        ["queue.blue_threshold", "line 13", 'variant = "linux" has none', '"auto" or "none"', "got 400ms"]),
    "cobalt: threshold that is not a duration": (
        (RED_QUEUE, 'kind = "cobalt"\nblue_threshold = "soon"'),
        ["queue.blue_threshold", "line 12", "soon", '"none" or "auto"']),
    "cobalt: CE threshold without ECN": (
        (RED_QUEUE, 'kind = "cobalt"\nce_threshold = "1ms"'), ["queue.ce_threshold", "line 12", "ecn = true"]),
    "fq_cobalt: unknown variant": (
        (RED_QUEUE, 'kind = "fq_cobalt"\nvariant = "ns2"'), ["queue.variant", "line 12", "ns2", "ns3", "linux"]),
    "fq_cobalt: set ways not dividing the queues": (
        (RED_QUEUE, 'kind = "fq_cobalt"\nflows = 100\nset_associative_hash = true'),
        ["queue.set_ways", "must divide flows (100)", "got 8"]),
    # A list where a table belongs was read field by field: this ran 4 s with seed 7.
    "run given as a list": (('[run]\nduration = "4s"\nwarmup = "1s"\nseed = 7\n', 'run = ["4s", "1s", 7]\n'),
                            ["run", "line 1", "wrong type: array", "expected a table with keys duration, warmup, seed"]),
    "number where a table goes": (('access = { rate = "100Mbps", delay = "1ms" }', "access = 5"),
                                  ["topology.access", "line 8", "wrong type: integer `5`", "expected a table with keys rate, delay"]),
    "bin as long as the run": (('packet_size = "500B"', 'packet_size = "500B"\n\n[output]\nbin = "4s"'),
                               ["output.bin", "line 29", "4s gives 1 time-series row over run.duration 4s", "at least 2",
                                "at most 2s"]),
    "bin longer than the run": (('packet_size = "500B"', 'packet_size = "500B"\n\n[output]\nbin = "5s"'),
                                ["output.bin", "line 29", "0 time-series rows", "at most 2s"]),
    "rate above 1 Tb/s": (('"10Mbps"', '"1e30Tbps"'), ["topology.bottleneck.rate", "line 7", "1e30Tbps",
                                                      "above the largest allowed, 1Tbps"]),
    "mean packet size beyond an IP packet": (("weight = 0.002", 'weight = 0.002\nmean_packet_size = "100000B"'),
                                             ["queue.mean_packet_size", "line 17", "must be in 1B..=65535B", "100000B"]),
    "size beyond a petabyte": (("weight = 0.002", 'weight = 0.002\nmean_packet_size = "1e300B"'),
                               ["queue.mean_packet_size", "line 17", '"1e300B" is too large', "at most 1000000GB"]),
    "negative class": (('start_jitter = "500ms"', 'start_jitter = "500ms"\nclass = -1'),
                       ["flows[0].class", "line 22", "must be in 0..=255, got -1"]),
    "negative sfq depth": ((RED_QUEUE, 'kind = "sfq"\ndepth = -1'), ["queue.depth", "line 12", "must be in 1..=127, got -1"]),
    "negative drr buckets": ((RED_QUEUE, 'kind = "drr"\nbuckets = -1'),
                             ["queue.buckets", "line 12", "must be in 0..=1048576, got -1"]),
    "duplicate [queue]": (('packet_size = "500B"', 'packet_size = "500B"\n\n[queue]\nkind = "codel"'),
                          ["queue", "line 28", "duplicate table [queue]"]),
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


def test_non_utf8_scenario_names_the_file_and_offset(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(SMALL_TCP.replace('"4s"', '"4s" # caf\xe9').encode("latin-1"))
    offset = SMALL_TCP.index('"4s"') + len('"4s" # caf')
    for args in (["validate", str(bad)], ["run", str(bad), "--out", str(tmp_path / "o")]):
        check_one_line_error(run_cli(*args), ["latin1.toml", "not UTF-8", f"byte 0xe9 at offset {offset}", "line 2"])
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("out", ["", "/", ".", ".."])
def test_output_directory_that_is_empty_root_or_the_current_one_is_refused(out: str, small_scenario: Path,
                                                                           tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    check_one_line_error(run_cli("run", str(small_scenario), "--out", out, cwd=work), ["--out"])
    assert list(work.iterdir()) == [], "results were written into the current directory"


@pytest.mark.parametrize("out", ["", "/", ".", ".."])
@pytest.mark.parametrize("command", ["sweep", "suite", "repro fpq", "repro tsq"])
def test_every_writing_command_refuses_an_empty_root_or_current_output_directory(command: str, out: str,
                                                                                small_scenario: Path,
                                                                                tmp_path: Path) -> None:
    # `sweep --out /` wrote sweep.csv, sweep.parquet and runs/ into the filesystem root; `repro --out ''`
    # wrote into the current directory.
    work = tmp_path / "work"
    work.mkdir()
    grid = tmp_path / "grid.toml"
    grid.write_text(f'base = "{small_scenario}"\n[sweep]\n"run.seed" = [1, 2]\n')
    args = {"sweep": ["sweep", str(grid)], "suite": ["suite", "rfc7928", "--quick"]}.get(command, command.split())
    check_one_line_error(run_cli(*args, "--out", out, cwd=work), ["--out"])
    assert list(work.iterdir()) == [], "results were written into the current directory"


def test_output_directory_that_is_not_utf8_is_refused(small_scenario: Path, tmp_path: Path) -> None:
    # Was a UnicodeEncodeError traceback from pyarrow after the run.
    out = os.fsdecode(os.fsencode(tmp_path) + b"/r\xe9sultats")
    check_one_line_error(run_cli("run", str(small_scenario), "--out", out), ["--out", "r\\xe9sultats", "not valid UTF-8"])
    assert list(tmp_path.iterdir()) == [small_scenario], "nothing but the scenario may be written"


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_file_name_that_is_not_utf8_needs_an_explicit_out(command: str, tmp_path: Path) -> None:
    # Was "--out results/\udcff: the path is not valid UTF-8" for an --out the user never gave.
    (tmp_path / "small.toml").write_text(SMALL_TCP)
    text = SMALL_TCP if command == "run" else f'base = "{tmp_path / "small.toml"}"\n[sweep]\n"run.seed" = [1, 2]\n'
    named = os.fsdecode(os.fsencode(tmp_path) + b"/s\xff.toml")
    Path(named).write_text(text)
    work = tmp_path / "work"
    work.mkdir()
    check_one_line_error(run_cli(command, named, cwd=work),
                         ["s\\xff.toml", "not valid UTF-8", "default results directory", "--out"])
    assert list(work.iterdir()) == []


def test_output_directory_with_other_files_is_refused(small_scenario: Path, tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("precious")
    check_one_line_error(run_cli("run", str(small_scenario), "--out", str(target)),
                         ["--out", "notes.txt", "not aqmlab results"])
    assert [p.name for p in target.iterdir()] == ["notes.txt"]


def test_seed_beyond_64_bits_names_the_key_and_the_range(small_scenario: Path, tmp_path: Path) -> None:
    import aqmlab

    check_one_line_error(run_cli("run", str(small_scenario), "--seed", str(2**64), "--out", str(tmp_path / "o")),
                         ["--seed", "18446744073709551616", "18446744073709551615"])
    sc = {"run": {"duration": "1s", "seed": 2**64}, "topology": {"bottleneck": {"rate": "1Mbps"}},
          "flows": [{"kind": "tcp"}]}
    with pytest.raises(aqmlab.ScenarioError, match=r"^run\.seed: must be an integer from 0 to 18446744073709551615, "
                                                   r"got 18446744073709551616$"):
        aqmlab.validate(sc)
    with pytest.raises(aqmlab.ScenarioError, match=r"^run\.seed: .*got -3$"):
        aqmlab.run({**sc, "run": {"duration": "1s"}}, seed=-3)


def test_duration_in_exponent_notation_is_a_number(tmp_path: Path) -> None:
    scenario = tmp_path / "e.toml"
    scenario.write_text(SMALL_TCP.replace('duration = "4s"', 'duration = "4e0s"').replace('"1s"', '"1e-3s"'))
    proc = run_cli("validate", str(scenario), "--show")
    assert proc.returncode == 0, proc.stderr
    assert '"duration": "4s"' in proc.stdout and '"warmup": "1ms"' in proc.stdout


def test_per_flow_series_too_large_is_refused_before_running(tmp_path: Path) -> None:
    scenario = tmp_path / "many.toml"
    scenario.write_text(SMALL_TCP.replace("count = 4", "count = 300000")
                        + "\n[output]\nper_flow_timeseries = true\n")
    check_one_line_error(run_cli("run", str(scenario), "--out", str(tmp_path / "o")),
                         ["output.per_flow_timeseries", "300001 flows", "at most 20000000", "false"])
    assert not (tmp_path / "o").exists()


JSON_SCENARIO = '{"run": {"duration": "1s"}, "topology": {"bottleneck": {"rate": "1Mbps"}}, "flows": [{"kind": "tcp"%s}]}'


@pytest.mark.parametrize("text, fragments", [
    # Python's parser takes NaN and the last of duplicate keys silently; JSON has neither.
    (JSON_SCENARIO % ', "count": NaN', ["not valid JSON", "NaN is not a JSON number"]),
    (JSON_SCENARIO % ', "count": 2, "count": 3', ["not valid JSON", "key 'count' appears twice"]),
])
def test_json_that_python_would_accept_but_json_does_not(tmp_path: Path, text: str, fragments: list[str]) -> None:
    path = tmp_path / "s.json"
    path.write_text(text)
    check_one_line_error(run_cli("validate", str(path)), ["s.json", *fragments])


@pytest.mark.parametrize("name, text", [("s.json", JSON_SCENARIO % ""),
                                        ("s.toml", '[run]\nduration = "1s"\n[topology]\nbottleneck = { rate = "1Mbps" }\n'
                                                   '[[flows]]\nkind = "tcp"\n')])
def test_a_byte_order_mark_is_accepted(tmp_path: Path, name: str, text: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    proc = run_cli("validate", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "ok (1 flows" in proc.stdout


class PanicException(BaseException):
    """Stands in for pyo3's PanicException (a BaseException, matched by name, not importable)."""


def test_a_panic_in_the_core_is_one_line_exit_70_and_leaves_no_results(
        small_scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    from aqmlab import api, cli

    def panics(*_args, **_kwargs):
        raise PanicException("index out of bounds")

    monkeypatch.setattr(api._native, "run_scenario", panics)
    out = tmp_path / "res"
    monkeypatch.setattr(sys, "argv", ["aqmlab", "run", str(small_scenario), "--out", str(out), "--quiet"])
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 70
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "index out of bounds" in err, err
    assert "Traceback" not in err
    assert not out.exists() and list(tmp_path.iterdir()) == [small_scenario], list(tmp_path.iterdir())


def test_other_base_exceptions_are_not_reported_as_internal_errors(
        small_scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from aqmlab import api, cli

    class SomethingElse(BaseException):
        pass

    def raises(*_args, **_kwargs):
        raise SomethingElse()

    monkeypatch.setattr(api._native, "run_scenario", raises)
    monkeypatch.setattr(sys, "argv", ["aqmlab", "run", str(small_scenario), "--out", str(tmp_path / "res"), "--quiet"])
    with pytest.raises(SomethingElse):
        cli.main()


def test_messages_name_no_rust_type(tmp_path: Path) -> None:
    # Was "expected struct TopologyParams".
    scenario = tmp_path / "bad.toml"
    scenario.write_text("topology = 5\n" + SMALL_TCP.replace('[topology]\nbottleneck = { rate = "10Mbps", delay = "10ms" }\n'
                                                             'access = { rate = "100Mbps", delay = "1ms" }\n', ""))
    proc = run_cli("validate", str(scenario))
    check_one_line_error(proc, ["topology", "line 1", "expected a table with keys kind, bottleneck, access"])
    assert "struct" not in proc.stderr and "Params" not in proc.stderr


@pytest.mark.parametrize("scenario, fragments", [
    ({"run": ["1s", "0s", 7]}, ["run: wrong type: array, expected a table with keys duration, warmup, seed"]),
    ({"run": {"duration": "1s"}, "flows": [["tcp", 2]]}, ["flows[0]: wrong type: array, expected a table"]),
])
def test_a_list_where_a_table_belongs_is_refused_from_python(scenario: dict, fragments: list[str]) -> None:
    import aqmlab

    scenario = {"topology": {"bottleneck": {"rate": "1Mbps"}}, "flows": [{"kind": "tcp"}], **scenario}
    with pytest.raises(aqmlab.ScenarioError) as e:
        aqmlab.validate(scenario)
    assert all(f in str(e.value) for f in fragments), str(e.value)


DEEP = 100_000


@pytest.mark.parametrize("text", [
    '{"run": ' + "[" * DEEP + "]" * DEEP + "}",
    JSON_SCENARIO % (', "x": ' + '{"a": ' * 5000 + "1" + "}" * 5000),
    '{"run": ' + "[" * 900 + "]" * 900 + "}",  # deep enough for the copy and the dump, not for the parser
])
def test_deeply_nested_json_is_one_line(tmp_path: Path, text: str) -> None:
    # Each was a RecursionError traceback.
    path = tmp_path / "deep.json"
    path.write_text(text)
    check_one_line_error(run_cli("validate", str(path)), ["deep.json", "nested more than 32 levels deep"])


def test_deeply_nested_set_value_and_dict_are_one_line(small_scenario: Path) -> None:
    import aqmlab

    deep = "[" * 3000 + "]" * 3000
    check_one_line_error(run_cli("validate", str(small_scenario), "--set", f"run.seed={deep}"),
                         ["--set", "run.seed", "nested more than 32 levels deep"])
    value: list = []
    for _ in range(5000):
        value = [value]
    with pytest.raises(aqmlab.ScenarioError, match=r"^run\.x(\[0\])+: nested more than 32 levels deep"):
        aqmlab.validate({"run": {"duration": "1s", "x": value}})


@pytest.mark.parametrize("name, fragments", [
    ("a" * 300, ["--out", "is 300 bytes long", "at most 226 bytes"]),
    ("a" * 300 + "/x", ["--out", "is 300 bytes long", "at most 255 bytes"]),
])
def test_output_name_too_long_is_one_line(small_scenario: Path, tmp_path: Path, name: str, fragments: list[str]) -> None:
    # Was an OSError (File name too long) traceback.
    check_one_line_error(run_cli("run", str(small_scenario), "--out", str(tmp_path / name)), fragments)
    assert list(tmp_path.iterdir()) == [small_scenario]


def test_a_run_of_gigabytes_is_announced_with_its_estimate(tmp_path: Path) -> None:
    # 1,000,000 flows on 10 Mb/s ran silently, took 3 GB and wrote a 762 MB summary.json.
    from aqmlab import api

    scenario = tmp_path / "many.toml"
    scenario.write_text(SMALL_TCP.replace("count = 4", "count = 1000000"))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 0, proc.stderr
    warning = proc.stderr.strip().splitlines()
    assert len(warning) == 1 and warning[0].startswith("aqmlab: warning: 1,000,001 flows: this run needs about 3.1 GB"), warning
    assert "summary.json of about 760 MB" in warning[0]
    small = run_cli("validate", str(scenario), "--set", "flows[0].count=4")
    assert small.returncode == 0 and small.stderr == "", small.stderr
    f = api.footprint({"flows": [{"kind": "tcp", "count": 100_000}, {"kind": "udp-cbr"}]})
    assert f == {"flows": 100_001, "memory_bytes": 310_002_000, "summary_bytes": 76_000_520}


def test_scenario_name_too_long_for_the_default_results_directory(tmp_path: Path) -> None:
    # The default --out is results/<file name>; a name too long for it is not a bad --out the user wrote.
    named = tmp_path / ("b" * 240 + ".toml")
    named.write_text(SMALL_TCP)
    work = tmp_path / "work"
    work.mkdir()
    check_one_line_error(run_cli("run", str(named), cwd=work), ["too long to name the default results directory", "--out"])
    assert list(work.iterdir()) == []
