"""`aqmlab sweep`: expansion, the results store (same files as `aqmlab run`, resume), bad sweep
files, and the combined table (docs/sweep.md)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import aqmlab
import aqmlab.build
from aqmlab.sweep import load_sweep, run_complete, run_sweep
from aqmlab.exceptions import ScenarioError
from conftest import SMALL_TCP, run_cli
from test_bad_input import check_one_line_error

# A 2-second RED dumbbell: 4 runs of it take about a second of simulation in all.
TINY_BASE = SMALL_TCP.replace('duration = "4s"', 'duration = "2s"').replace('warmup = "1s"', 'warmup = "500ms"')

SWEEP = """\
base = "tiny.toml"

[sweep]
"queue.max_p" = [0.05, 0.2]
"run.seed" = [1, 2]
"""


def write_sweep(tmp: Path, sweep_text: str = SWEEP) -> Path:
    (tmp / "tiny.toml").write_text(TINY_BASE)
    path = tmp / "grid.toml"
    path.write_text(sweep_text)
    return path


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The 4-run sweep, run once through the command line with 2 workers: (sweep file, store, stdout)."""
    tmp = tmp_path_factory.mktemp("swept")
    path = write_sweep(tmp)
    out = tmp / "store"
    proc = run_cli("sweep", str(path), "--out", str(out), "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    return path, out, proc.stdout


def test_expansion_is_the_cartesian_product_last_key_fastest(tmp_path: Path) -> None:
    s = load_sweep(write_sweep(tmp_path, SWEEP + '"flows[0].count" = [1, 2, 3]\n'))
    assert s.keys == ["queue.max_p", "run.seed", "flows[0].count"]
    assert len(s.runs) == 12
    assert [tuple(r.params.values()) for r in s.runs[:4]] == [(0.05, 1, 1), (0.05, 1, 2), (0.05, 1, 3), (0.05, 2, 1)]
    assert tuple(s.runs[-1].params.values()) == (0.2, 2, 3)
    last = s.runs[-1].scenario
    assert (last["queue"]["max_p"], last["run"]["seed"], last["flows"][0]["count"]) == (0.2, 2, 3)
    assert last["flows"][1]["kind"] == "udp-poisson"  # the rest of the base is kept
    assert len({r.run_id for r in s.runs}) == 12
    # the id is a hash of the expanded scenario alone: the same point of another grid has it too
    other = load_sweep({"base": s.runs[0].scenario, "sweep": {"run.seed": [1]}})
    assert other.runs[0].run_id == s.runs[0].run_id


def test_inline_base_table_and_table_values(tmp_path: Path) -> None:
    text = TINY_BASE.replace("[run]", "[base.run]").replace("[topology]", "[base.topology]") \
        .replace("[queue]", "[base.queue]").replace("[[flows]]", "[[base.flows]]")
    text += '\n[sweep]\n"queue" = [{ kind = "droptail", limit = 30 }, { kind = "codel" }]\n'
    path = tmp_path / "inline.toml"
    path.write_text(text)
    s = load_sweep(path)
    assert [r.scenario["queue"] for r in s.runs] == [{"kind": "droptail", "limit": 30}, {"kind": "codel"}]


def test_sweep_writes_one_directory_per_run_and_a_table(swept: tuple[Path, Path, str]) -> None:
    path, out, stdout = swept
    s = load_sweep(path)
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted(r.run_id for r in s.runs)
    assert "computed 4, reused 0" in stdout
    for run in s.runs:
        params = json.loads((out / "runs" / run.run_id / "params.json").read_text())
        assert params["params"] == run.params
    table = pd.read_parquet(out / "sweep.parquet")
    assert len(table) == 4
    assert list(table["run_id"]) == [r.run_id for r in s.runs]
    assert list(table["queue.max_p"]) == [0.05, 0.05, 0.2, 0.2]
    assert list(table["run.seed"]) == [1, 2, 1, 2]
    assert list(table["seed"]) == [1, 2, 1, 2]  # the seed each run really used
    for col in ("goodput_bps", "jain_index", "queue_drop_rate", "queue_mean_len_packets", "queue_mean_sojourn_s"):
        assert table[col].notna().all() and (table[col] > 0).all(), col
    for run, row in zip(s.runs, table.itertuples()):  # each row holds its own run's numbers
        summary = json.loads((out / "runs" / run.run_id / "summary.json").read_text())
        assert row.goodput_bps == summary["aggregate"]["goodput_bps"]
        assert row.queue_drops == summary["queues"][0]["drops"] and summary["queues"][0]["name"] == "bottleneck"
        assert summary["scenario"]["queue"]["max_p"] == run.params["queue.max_p"]
    csv = pd.read_csv(out / "sweep.csv")
    assert list(csv.columns) == list(table.columns) and len(csv) == 4
    assert not [p for p in out.rglob(".*")], "staging files left behind"


def test_a_sweep_run_has_the_files_of_aqmlab_run(swept: tuple[Path, Path, str], tmp_path: Path) -> None:
    path, out, _ = swept
    run = load_sweep(path).runs[2]
    scenario = tmp_path / "one.json"
    scenario.write_text(json.dumps(run.scenario))
    single = tmp_path / "single"
    proc = run_cli("run", str(scenario), "--out", str(single), "--no-plot", "-q")
    assert proc.returncode == 0, proc.stderr
    mine = out / "runs" / run.run_id
    assert sorted(p.name for p in single.iterdir()) == sorted(p.name for p in mine.iterdir() if p.name != "params.json")
    for p in single.iterdir():
        a, b = p.read_bytes(), (mine / p.name).read_bytes()
        if p.name == "summary.json":  # identical but for the wall-clock time (docs/results.md)
            a, b = (json.loads(x) for x in (a, b))
            a.pop("wall_seconds"), b.pop("wall_seconds")
        assert a == b, p.name


def test_rerun_recomputes_only_missing_and_broken_runs(swept: tuple[Path, Path, str], tmp_path: Path) -> None:
    path, store, _ = swept
    out = tmp_path / "store"
    shutil.copytree(store, out)
    ids = [r.run_id for r in load_sweep(path).runs]
    shutil.rmtree(out / "runs" / ids[0])  # a run whose writing crashed: only its staging directory is left
    (out / "runs" / f".{ids[0]}.partial-999999999-x").mkdir()
    (out / "runs" / f".{ids[0]}.partial-999999999-x" / "flows.csv").write_text("id\n")
    summary = out / "runs" / ids[3] / "summary.json"
    summary.write_bytes(summary.read_bytes()[:100])  # a run whose files were damaged
    stamps = {i: (out / "runs" / i / "params.json").stat().st_mtime_ns for i in ids[1:3]}
    proc = run_cli("sweep", str(path), "--out", str(out), "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    assert "4 runs: 2 reused" in proc.stdout and "computed 2, reused 2" in proc.stdout
    for i in ids[1:3]:  # untouched runs were not rewritten
        assert (out / "runs" / i / "params.json").stat().st_mtime_ns == stamps[i]
    for i in (ids[0], ids[3]):
        assert run_complete(out / "runs" / i, load_sweep(path).runs[ids.index(i)])
    assert len(pd.read_parquet(out / "sweep.parquet")) == 4
    assert not [p.name for p in (out / "runs").iterdir() if p.name.startswith(".")], "staging directory left"
    # nothing left to do: a third run reuses everything and starts no cluster
    outcome = run_sweep(path, out=out)
    assert (outcome.computed, outcome.reused, len(outcome.table)) == (0, 4, 4)


def test_runs_of_another_aqmlab_build_are_recomputed_not_mixed(swept: tuple[Path, Path, str], tmp_path: Path) -> None:
    path, store, _ = swept
    out = tmp_path / "store"
    shutil.copytree(store, out)
    ids = [r.run_id for r in load_sweep(path).runs]
    meta = json.loads((out / "runs" / ids[1] / "params.json").read_text())
    assert meta["build"] == aqmlab.build.fingerprint()
    (out / "runs" / ids[1] / "params.json").write_text(json.dumps(meta | {"build": "0123456789abcdef"}))
    older = json.loads((out / "runs" / ids[2] / "params.json").read_text())
    del older["build"]  # a run stored before builds were recorded
    (out / "runs" / ids[2] / "params.json").write_text(json.dumps(older))
    assert not run_complete(out / "runs" / ids[1], load_sweep(path).runs[1])
    proc = run_cli("sweep", str(path), "--out", str(out), "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    assert "4 runs: 2 reused from" in proc.stdout and "2 to compute (2 of them stored by another aqmlab build: recomputed)" \
        in proc.stdout, proc.stdout
    for i in ids:
        assert json.loads((out / "runs" / i / "params.json").read_text())["build"] == aqmlab.build.fingerprint()


def test_a_worker_of_another_build_is_a_failed_run_naming_both_builds(swept: tuple[Path, Path, str], tmp_path: Path,
                                                                      monkeypatch) -> None:
    from distributed import LocalCluster

    path, _, _ = swept
    module = sys.modules["aqmlab.sweep"]
    real = module._simulate

    def elsewhere(scenario: dict) -> tuple:
        files, _ = real(scenario)
        return files, "fedcba9876543210"

    monkeypatch.setattr(module, "_simulate", elsewhere)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        outcome = run_sweep(path, out=tmp_path / "a", scheduler=cluster.scheduler_address)
    assert len(outcome.failed) == 4 and len(outcome.table) == 0
    assert "another aqmlab build (fedcba9876543210)" in outcome.failed[0][1]
    assert aqmlab.build.fingerprint() in outcome.failed[0][1]


BAD = {
    "unknown key path": ('"queue.max_pp" = [0.1, 0.2]',
                         ['"queue.max_pp"', "not a key of the scenario", "queue.max_pp: unknown", "max_p"]),
    "empty list": ('"queue.max_p" = []', ['"queue.max_p"', "empty"]),
    "invalid value": ('"queue.max_p" = [0.1, 1.5]', ['queue.max_p = 1.5', "queue.max_p", "(0, 1]"]),
    "list item missing": ('"flows[5].count" = [1, 2]', ['"flows[5].count"', "2 item(s)", "flows[5]"]),
    "not a list": ('"queue.max_p" = 0.1', ['"queue.max_p"', "must be a list"]),
    "value twice": ('"run.seed" = [1, 2, 1]', ['"run.seed"', "listed twice"]),
    "not a key path": ('"queue..max_p" = [0.1]', ['"queue..max_p"', "not a key path"]),
    "overlapping keys": ('"queue" = [{ kind = "codel" }]\n"queue.limit" = [10]', ['"queue.limit"', 'inside "queue"']),
    "path through a value": ('"queue.kind.x" = [1]', ['"queue.kind.x"', "queue.kind is a str"]),
}


def test_swept_key_in_a_table_the_base_lacks_is_named(tmp_path: Path) -> None:
    # Was "the run with ... is not a valid scenario: queue.kind: missing": the swept key went unnamed.
    (tmp_path / "tiny.toml").write_text(TINY_BASE.replace(RED_QUEUE_TABLE, ""))
    path = tmp_path / "grid.toml"
    path.write_text('base = "tiny.toml"\n\n[sweep]\n"queue.max_p" = [0.05, 0.2]\n')
    check_one_line_error(run_cli("sweep", str(path), "--out", str(tmp_path / "out")),
                         ['[sweep] "queue.max_p"', "has no [queue] table", "only max_p", "queue.kind: missing",
                          "grid.toml"])
    assert not (tmp_path / "out").exists()


RED_QUEUE_TABLE = TINY_BASE[TINY_BASE.index("[queue]"):TINY_BASE.index("[[flows]]")]


@pytest.mark.parametrize("case", list(BAD))
def test_bad_sweep_is_one_clear_line_and_writes_nothing(case: str, tmp_path: Path) -> None:
    line, fragments = BAD[case]
    path = write_sweep(tmp_path, f'base = "tiny.toml"\n\n[sweep]\n"run.seed" = [1, 2]\n{line}\n'
                       if "run.seed" not in line else f'base = "tiny.toml"\n\n[sweep]\n{line}\n')
    out = tmp_path / "out"
    check_one_line_error(run_cli("sweep", str(path), "--out", str(out)), fragments + ["grid.toml"])
    assert not out.exists()


def test_bad_sweep_file_level_errors(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"base: missing"):
        load_sweep({"sweep": {"run.seed": [1]}})
    with pytest.raises(ScenarioError, match=r"unknown key 'grid'.*allowed: base, sweep"):
        load_sweep({"base": {}, "sweep": {"run.seed": [1]}, "grid": {}})
    with pytest.raises(ScenarioError, match=r"\[sweep\]: missing or empty"):
        load_sweep({"base": {}})
    with pytest.raises(ScenarioError, match=r"nope.toml: no such scenario file"):
        load_sweep(write_sweep(tmp_path, 'base = "nope.toml"\n[sweep]\n"run.seed" = [1]\n'))


def test_python_api_on_a_running_scheduler(swept: tuple[Path, Path, str], tmp_path: Path) -> None:
    """`scheduler=` (the CLI's --scheduler) sends the runs to a cluster started elsewhere: here one
    started by the test; the runs are the same as on the sweep's own LocalCluster."""
    from distributed import LocalCluster

    path, store, _ = swept
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        table = aqmlab.sweep(path, out=tmp_path / "store", scheduler=cluster.scheduler_address)
    assert isinstance(table, pd.DataFrame) and len(table) == 4
    assert {"queue.max_p", "run.seed", "goodput_bps", "queue_mean_sojourn_s"} <= set(table.columns)
    for run_id in table["run_id"]:
        for name in ("flows.csv", "timeseries.parquet"):
            assert (tmp_path / "store" / "runs" / run_id / name).read_bytes() == \
                (store / "runs" / run_id / name).read_bytes()


def test_ctrl_c_keeps_the_finished_runs_and_a_rerun_computes_the_rest(tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal's Ctrl-C sends it: one line, no traceback
    (from the sweep or its worker processes), the runs finished so far kept and reused."""
    (tmp_path / "tiny.toml").write_text(TINY_BASE.replace('duration = "2s"', 'duration = "60s"')
                                        .replace("count = 4", "count = 20"))
    path = tmp_path / "grid.toml"
    # Long enough that the interrupt lands mid-sweep even on a loaded machine, where the worker can
    # finish several runs before this process has stored the first (CI once saw all 8 of 8 finish).
    seeds = list(range(1, 25))
    path.write_text(f'base = "tiny.toml"\n[sweep]\n"run.seed" = {seeds}\n')
    out = tmp_path / "store"
    # Started as a terminal starts it, with SIGINT at its default: when the tests themselves run as a
    # background job of a non-interactive shell, SIGINT is ignored and the sweep would inherit that.
    proc = subprocess.Popen([sys.executable, "-m", "aqmlab", "sweep", str(path), "--out", str(out), "--workers", "1",
                             "-q"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not (out / "runs").is_dir() or not any(p.name[0] != "." for p in (out / "runs").iterdir()):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    check_one_line_error(subprocess.CompletedProcess(proc.args, proc.returncode, "", stderr),
                         ["interrupted", "kept in", "rerun the same command"])
    kept = [p.name for p in (out / "runs").iterdir() if p.name[0] != "."]
    assert 1 <= len(kept) < len(seeds)
    outcome = run_sweep(path, out=out, workers=2)
    assert (outcome.reused, outcome.computed, len(outcome.table)) == (len(kept), len(seeds) - len(kept), len(seeds))


def test_retries_rerun_a_failed_run_and_runs_failing_for_good_are_reported(swept: tuple[Path, Path, str],
                                                                            tmp_path: Path, monkeypatch) -> None:
    """A run that raises is retried (`retries=`); one that fails every try is reported, and the
    other runs are stored and in the table. The workers are threads of this process here, so the
    simulation can be replaced by one that fails its first try for max_p = 0.2."""
    from distributed import LocalCluster

    from aqmlab.exceptions import SimulationError

    path, _, _ = swept
    module = sys.modules["aqmlab.sweep"]
    real, log = module._simulate, tmp_path / "tries.log"  # (the task is pickled: a file counts the tries)

    def flaky(scenario: dict) -> dict:
        key = f"{scenario['queue']['max_p']}/{scenario['run']['seed']}"
        first = key not in (log.read_text().split() if log.exists() else [])
        with open(log, "a") as f:
            f.write(key + "\n")
        if scenario["queue"]["max_p"] == 0.2 and first:
            raise RuntimeError("the worker lost its disk")
        return real(scenario)

    monkeypatch.setattr(module, "_simulate", flaky)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        outcome = run_sweep(path, out=tmp_path / "a", scheduler=cluster.scheduler_address, retries=1)
    assert (outcome.computed, len(outcome.failed), len(outcome.table)) == (4, 0, 4)
    assert sorted(log.read_text().split()) == ["0.05/1", "0.05/2", "0.2/1", "0.2/1", "0.2/2", "0.2/2"]
    log.unlink()
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        with pytest.raises(SimulationError, match=r"2 run\(s\) failed, .*queue.max_p = 0.2.*the worker lost its disk"):
            aqmlab.sweep(path, out=tmp_path / "b", scheduler=cluster.scheduler_address, retries=0)
    table = pd.read_parquet(tmp_path / "b" / "sweep.parquet")
    assert list(table["queue.max_p"]) == [0.05, 0.05]
    assert len(list((tmp_path / "b" / "runs").iterdir())) == 2


def _seed_table(goodputs: dict[tuple[int, int], float]) -> pd.DataFrame:
    """A sweep table over ``flows[0].count`` × ``run.seed`` with the given goodput per (count, seed)."""
    return pd.DataFrame([{"run_id": f"r{c}{s}", "flows[0].count": c, "run.seed": s, "goodput_bps": g, "events": 100,
                          "seed": s, "wall_seconds": 0.1 * s} for (c, s), g in goodputs.items()])


def test_seeds_that_change_nothing_are_named_and_seeds_that_do_are_not() -> None:
    from aqmlab.sweep import seeds_that_changed_nothing

    keys = ["flows[0].count", "run.seed"]
    same = _seed_table({(1, 1): 9e6, (1, 2): 9e6, (2, 1): 9.5e6, (2, 2): 9.5e6})
    warning = seeds_that_changed_nothing(same, keys)
    assert warning is not None and "every configuration" in warning and "start_jitter" in warning
    partly = _seed_table({(1, 1): 9e6, (1, 2): 9e6, (2, 1): 9.5e6, (2, 2): 9.4e6})
    assert "1 of 2 configurations" in seeds_that_changed_nothing(partly, keys)
    varied = _seed_table({(1, 1): 9e6, (1, 2): 9.1e6, (2, 1): 9.5e6, (2, 2): 9.4e6})
    assert seeds_that_changed_nothing(varied, keys) is None
    assert seeds_that_changed_nothing(same, ["flows[0].count"]) is None, "no seed swept, nothing to say"


def test_identical_seeds_of_a_real_deterministic_scenario_are_caught() -> None:
    """Drop-tail, flows starting together: every seed gives the same run (the issue's report), which
    the check sees in the rows the sweep stores; with start jitter the seeds differ."""
    from aqmlab.sweep import _row, seeds_that_changed_nothing, SweepRun

    def table(jitter: str) -> pd.DataFrame:
        rows = []
        for seed in (1, 2, 3):
            sc = {"run": {"duration": "2s", "seed": seed}, "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
                  "queue": {"kind": "droptail", "limit": 30},
                  "flows": [{"kind": "tcp", "count": 4, "start_jitter": jitter}]}
            summary = aqmlab.run(sc).summary
            rows.append(_row(SweepRun(seed, {"run.seed": seed}, sc, f"s{seed}"), {**summary, "wall_seconds": 0.0}))
        return pd.DataFrame(rows)

    assert seeds_that_changed_nothing(table("0s"), ["run.seed"]) is not None
    assert seeds_that_changed_nothing(table("100ms"), ["run.seed"]) is None
