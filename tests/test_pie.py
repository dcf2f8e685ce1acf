"""PIE (RFC 8033, `kind = "pie"`, docs/pie.md) end to end: the queueing delay it settles at on a
10-flow dumbbell, against drop-tail with the same buffer, and its bad-input messages."""

from __future__ import annotations

from pathlib import Path

import aqmlab
import pytest

from conftest import SMALL_TCP, run_cli

TARGET_S = 0.015  # PIE's default target (RFC 8033 QDELAY_REF)
BUFFER = 300  # packets for both disciplines: 360 ms at 10 Mb/s, far above the target


def dumbbell(queue: dict) -> dict:
    return {
        "run": {"duration": "40s", "warmup": "10s", "seed": 3},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"},
                     "access": {"rate": "100Mbps", "delay": "1ms"}},
        "queue": queue,
        "flows": [{"kind": "tcp", "count": 10, "start_jitter": "1s"}],
    }


@pytest.fixture(scope="module")
def runs() -> dict:
    return {kind: aqmlab.run(dumbbell({"kind": kind, "limit": BUFFER})).queues.iloc[0] for kind in ("pie", "droptail")}


def test_pie_holds_the_mean_sojourn_near_its_target(runs) -> None:
    # Tolerances fixed before the first run: within [0.5, 2] x target, and under a quarter of
    # drop-tail's. Measured (seed 3): PIE 16.1 ms mean sojourn (1.6 % early drops, no overflow,
    # 99.7 % utilization), drop-tail 310 ms.
    pie, droptail = runs["pie"], runs["droptail"]
    assert 0.5 * TARGET_S <= pie["mean_sojourn_s"] <= 2.0 * TARGET_S, pie["mean_sojourn_s"]
    assert pie["mean_sojourn_s"] < 0.25 * droptail["mean_sojourn_s"], (pie["mean_sojourn_s"], droptail["mean_sojourn_s"])
    # PIE decided, not the buffer: every drop was an early one, and the link stayed busy.
    assert pie["drops_early"] > 0 and pie["drops_overflow"] == 0
    assert pie["utilization"] > 0.95


def test_pie_counters_are_consistent(runs) -> None:
    q = runs["pie"]
    assert q["kind"] == "pie"
    assert q["drops"] == q["drops_early"] + q["drops_forced"] + q["drops_overflow"]
    assert q["marks"] == 0  # no ECN configured


# (the [queue] table's lines, expected fragments of the error line)
BAD = {
    "zero target": ('target = "0ms"', ["queue.target", "line 12", "positive duration", "got 0"]),
    "negative alpha": ("alpha = -1", ["queue.alpha", ">= 0", "got -1"]),
    "unknown variant": ('variant = "linux"', ["queue.variant", "linux", "rfc8033", "ns3"]),
    "unknown key": ('tupdate = "15ms"', ["queue.tupdate", "unknown field", "t_update"]),
    "ECN threshold above one": ("mark_ecn_threshold = 2", ["queue.mark_ecn_threshold", "[0, 1]", "got 2"]),
    "zero limit": ("limit = 0", ["queue.limit", "positive"]),
    "unknown estimator": ('delay_estimator = "ewma"', ["queue.delay_estimator", "ewma", "timestamp", "dq_rate"]),
    "bare number for a duration": ("t_update = 15", ["queue.t_update", "duration string"]),
}
RED_TABLE = 'kind = "red"\nlimit = 60\nmin_th = 5\nmax_th = 15\nmax_p = 0.1\nweight = 0.002'


@pytest.mark.parametrize("case", list(BAD))
def test_bad_pie_key_is_one_clear_line(case: str, tmp_path: Path) -> None:
    line, fragments = BAD[case]
    assert RED_TABLE in SMALL_TCP
    scenario = tmp_path / "bad.toml"
    scenario.write_text(SMALL_TCP.replace(RED_TABLE, f'kind = "pie"\n{line}', 1))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aqmlab: error: ") and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments + ["bad.toml"]:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"


def test_unknown_discipline_lists_pie(tmp_path: Path) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(SMALL_TCP.replace('kind = "red"', 'kind = "pei"', 1))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 2 and "pie" in proc.stderr.split("allowed:")[1], proc.stderr


def test_a_good_pie_table_validates(tmp_path: Path) -> None:
    scenario = tmp_path / "good.toml"
    scenario.write_text(SMALL_TCP.replace(RED_TABLE, 'kind = "pie"\nvariant = "ns3"\nlimit = "150KB"\necn = true\n'
                                          'delay_estimator = "dq_rate"\nderandomize = true', 1))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 0, proc.stderr
