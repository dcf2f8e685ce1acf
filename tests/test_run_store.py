"""The store of finished runs that lets an interrupted `aqmlab repro` resume (repro/run_store.py):
what identifies an entry, that a resumed reproduction reuses instead of rerunning and ends with the
same rows, and what the command line says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from aqmlab import api
from aqmlab.repro import common
from aqmlab.repro.common import Job, run_jobs
from aqmlab.repro.run_store import STORE_DIR, RunStore, resumable

SCENARIO = {"run": {"duration": "2s", "warmup": "0.5s", "seed": 3},
            "topology": {"bottleneck": {"rate": "5Mbps", "delay": "5ms"}},
            "queue": {"kind": "red", "min_th": 5, "max_th": 15},
            "flows": [{"kind": "tcp", "count": 2}]}


def goodput_in(unit: float):
    def extract(res: api.Result) -> dict:
        return {"goodput": res.aggregate["goodput_bps"] / unit}
    return extract


def jobs(seeds) -> list[Job]:
    return [Job(SCENARIO | {"run": SCENARIO["run"] | {"seed": s}}, {"seed": s}) for s in seeds]


def test_an_entry_is_keyed_by_scenario_extractor_and_its_captured_values(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    key = store.key(SCENARIO, goodput_in(1e6))
    assert key is not None and key == store.key(dict(reversed(SCENARIO.items())), goodput_in(1e6))
    assert store.key(SCENARIO, goodput_in(1e3)) != key                    # a captured value differs
    assert store.key(jobs([4])[0].scenario, goodput_in(1e6)) != key       # the scenario differs
    assert store.key(SCENARIO, lambda res: {"goodput": res.aggregate["goodput_bps"]}) != key  # another function


def test_an_extractor_capturing_an_unidentifiable_value_is_not_stored(tmp_path: Path) -> None:
    weights = np.ones(3)

    def extract(res: api.Result) -> dict:
        return {"weighted": float(weights.sum())}

    store = RunStore(tmp_path)
    assert store.key(SCENARIO, extract) is None
    store.save(None, {"weighted": 3.0})
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_the_key_is_the_same_in_another_process(tmp_path: Path) -> None:
    # A resumed reproduction is a new process: string hashing and addresses differ there.
    code = ("from aqmlab.repro.run_store import RunStore; from aqmlab.repro import white_scenarios as S, "
            "white_metrics as M; from aqmlab.repro.bmre_metrics import extract_for; import pathlib; "
            "s = RunStore(pathlib.Path('.')); sc = {'run': {'seed': 1}}; "
            "print(s.key(sc, M.extract_for(S.experiments()['exp5'], keep_bins=True)), "
            "s.key(sc, extract_for(10, 4, 0, 100.0, 0.5)))")
    keys = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
            for _ in range(2)}
    assert len(keys) == 1 and "None" not in keys.pop()


def test_a_resumed_reproduction_reuses_finished_runs_and_gives_the_same_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extract = goodput_in(1e6)
    fresh_rows = run_jobs(jobs([1, 2, 3]), extract, workers=2, quiet=True)

    # The first attempt dies after two runs (a crash in the third): those two stay on disk.
    real_run = api.run

    def dies_on_seed_3(scenario, **kw):
        if scenario["run"]["seed"] == 3:
            raise RuntimeError("boom")
        return real_run(scenario, **kw)

    monkeypatch.setattr(common.api, "run", dies_on_seed_3)
    with pytest.raises(RuntimeError), resumable(tmp_path):
        run_jobs(jobs([1, 2, 3]), extract, workers=1, quiet=True)
    assert len(list((tmp_path / STORE_DIR).glob("*.pkl"))) == 2

    ran = []
    monkeypatch.setattr(common.api, "run", lambda scenario, **kw: ran.append(scenario["run"]["seed"]) or real_run(scenario))
    with resumable(tmp_path) as store:
        rows = run_jobs(jobs([1, 2, 3]), extract, workers=2, quiet=True)
    assert ran == [3] and (store.reused, store.computed) == (2, 1)
    assert [r["seed"] for r in rows] == [1, 2, 3]
    assert rows == fresh_rows, "a resumed reproduction's rows must equal a fresh one's, byte for byte"
    assert not (tmp_path / STORE_DIR).exists()  # removed once the reproduction completed


def test_a_repeated_job_runs_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ran = []
    real_run = api.run
    monkeypatch.setattr(common.api, "run", lambda scenario, **kw: ran.append(scenario["run"]["seed"]) or real_run(scenario))
    with resumable(tmp_path) as store:
        rows = run_jobs(jobs([1, 2, 1]), goodput_in(1e6), quiet=True)
        again = run_jobs(jobs([2]), goodput_in(1e6), quiet=True)
    assert sorted(ran) == [1, 2] and (store.reused, store.shared, store.computed) == (0, 2, 2)
    assert rows[0] == rows[2] and rows[0] is not rows[2] and again[0] == rows[1]


def test_fresh_discards_and_unreadable_entries_are_recomputed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    extract = goodput_in(1e6)
    store = RunStore(tmp_path / STORE_DIR)
    key = store.key(jobs([1])[0].scenario, extract)
    store.save(key, {"goodput": -1.0})  # a planted entry: reused unless discarded
    with resumable(tmp_path) as s:
        assert run_jobs(jobs([1]), extract, quiet=True)[0]["goodput"] == -1.0 and s.reused == 1
    store.save(key, {"goodput": -1.0})
    with resumable(tmp_path, fresh=True) as s:
        assert run_jobs(jobs([1]), extract, quiet=True)[0]["goodput"] > 0 and s.reused == 0
    (tmp_path / STORE_DIR).mkdir()
    (tmp_path / STORE_DIR / f"{key}.pkl").write_bytes(b"truncated")
    with resumable(tmp_path) as s:
        assert run_jobs(jobs([1]), extract, quiet=True)[0]["goodput"] > 0 and (s.reused, s.computed) == (0, 1)


def test_completing_keeps_the_entries_of_another_reproduction(tmp_path: Path) -> None:
    # A full reproduction interrupted, then a --quick one into the same directory run to the end: the
    # quick one removes what it used, not what the full one will resume from.
    other = RunStore(tmp_path / STORE_DIR)
    other_key = other.key(jobs([9])[0].scenario, goodput_in(1e3))
    other.save(other_key, {"goodput": 1.0})
    with resumable(tmp_path) as store:
        run_jobs(jobs([1]), goodput_in(1e6), quiet=True)
    assert store.others() == 1
    assert [p.stem for p in (tmp_path / STORE_DIR).glob("*.pkl")] == [other_key]
    with resumable(tmp_path) as store:
        run_jobs(jobs([9]), goodput_in(1e3), quiet=True)
    assert store.reused == 1 and not (tmp_path / STORE_DIR).exists()


def test_cli_says_it_resumes_and_what_it_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from aqmlab import cli
    from aqmlab.repro import fpq

    def reproduce(out, **kw):
        run_jobs(jobs([1, 2]), goodput_in(1e6), quiet=True)
        if interrupt:
            raise KeyboardInterrupt
        (out / "report.md").write_text(f"wall time {common.wall_time(0.5)}\n")
        return []

    monkeypatch.setattr(fpq, "reproduce", reproduce)
    out = tmp_path / "o"
    monkeypatch.setattr(sys, "argv", ["aqmlab", "repro", "fpq", "--quick", "--out", str(out)])
    interrupt = True
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and f"2 finished run(s) are kept in {out / STORE_DIR}" in err, err

    interrupt = False
    with pytest.raises(SystemExit) as exit_:
        cli.main()
    assert exit_.value.code == 0
    captured = capsys.readouterr()
    assert f"resuming from the runs an interrupted reproduction left in {out / STORE_DIR}" in captured.err
    assert captured.out.endswith("; 2 of 2 runs reused\n"), captured.out
    assert "2 of 2 runs were reused from an interrupted earlier reproduction" in (out / "report.md").read_text()
    assert not (out / STORE_DIR).exists()
