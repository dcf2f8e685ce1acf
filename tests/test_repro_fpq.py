"""Issue #4: Morris 1999 in aqmlab — random drop, the flow counter, FPQ, repeated transfers, bad
input naming the key, and `aqmlab repro fpq` producing its report."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import aqmlab
from aqmlab.exceptions import ScenarioError
from aqmlab.repro import fpq as repro
from aqmlab.repro import fpq_scenarios as S
from conftest import run_cli


def short(n: int, queue: dict, **kw) -> dict:
    return S.scenario(n, queue, duration_s=60, warmup_s=20, seed=3, **kw)


def test_fpq_queue_follows_five_packets_per_counted_flow() -> None:
    """Fig. 6.5's mechanism: the counter sees the flows and the average queue tracks 5f."""
    rows = []
    for n in (200, 600):
        r = aqmlab.run(short(n, S.fpq()))
        q = r.queues.iloc[0]
        rows.append((n, q["mean_flow_estimate"], q["mean_len_packets"]))
    for n, f, queue in rows:
        assert 0.85 * n < f < 1.1 * n, f"counted {f:.0f} of {n} flows"
        assert 0.6 * 5 * n < queue < 1.1 * 5 * n, f"queue {queue:.0f} for {n} flows"
    assert rows[1][2] > 2 * rows[0][2], "the queue grows with the number of flows"


def test_flow_counter_on_a_plain_queue_estimates_the_flows() -> None:
    sc = short(300, S.red(217, 0.02))
    sc["output"]["flow_counter"] = {"bits": 5000, "t_clear": "4s"}
    r = aqmlab.run(sc)
    est = r.timeseries["flow_estimate"]
    assert len(est) == len(r.timeseries)
    assert 250 < r.queues.iloc[0]["mean_flow_estimate"] < 330


def test_repeated_transfers_are_recorded_with_their_delays() -> None:
    twenty = {"size": f"{20 * S.MSS}B", "size_dist": "fixed", "repeat": True}
    r = aqmlab.run(short(50, S.fpq(), transfers=twenty))
    tr = r.transfers
    assert len(tr) > 500
    assert (tr["segments"] == 20).all()
    assert (tr["start_s"] >= 20).all() and (tr["end_s"] <= 60).all()
    np.testing.assert_allclose(tr["delay_s"], tr["end_s"] - tr["start_s"])
    # 20 segments take at least ~4 round trips of 100 ms in slow start from one segment
    assert tr["delay_s"].min() > 0.3
    # Little's law on the link: 50 transfers at a time share 10 Mb/s, so about 4.6 s × 50/500 each
    fair = 20 * 576 * 8 / (10e6 / 50)
    assert 0.5 * fair < tr["delay_s"].mean() < 2.5 * fair


def test_exponential_transfer_sizes_are_whole_segments_with_mean_twenty() -> None:
    exp20 = {"size": f"{20 * S.MSS}B", "size_dist": "exponential", "repeat": True}
    r = aqmlab.run(short(100, S.droptail(300), transfers=exp20))
    seg = r.transfers["segments"]
    assert seg.min() >= 1
    assert 17 < seg.mean() < 23, seg.mean()


def test_random_drop_queue_stays_full_and_drops() -> None:
    r = aqmlab.run(short(50, S.random_drop(100), rtt_ms=10))
    q = r.queues.iloc[0]
    assert q["drops_overflow"] > 0 and q["drops"] == q["drops_overflow"]
    assert q["mean_len_packets"] > 80


BAD = {
    "counter with zero bits": (lambda sc: sc["queue"]["counter"].update(bits=0), "queue.counter.bits"),
    "non-positive t_clear": (lambda sc: sc["queue"]["counter"].update(t_clear="0s"), "queue.counter.t_clear"),
    "non-positive bdp": (lambda sc: sc["queue"].update(bdp_pkts=0), "queue.bdp_pkts"),
    "negative bdp": (lambda sc: sc["queue"].update(bdp_pkts=-217), "queue.bdp_pkts"),
    "zero transfer mean": (lambda sc: sc["flows"][0].update(size="0B", size_dist="exponential"), "flows[0].size"),
    "transfer mean below a segment": (lambda sc: sc["flows"][0].update(size="100B", repeat=True), "flows[0].size"),
    "repeat without size": (lambda sc: sc["flows"][0].update(repeat=True), "flows[0].repeat"),
    "output counter zero bits": (lambda sc: sc["output"].update(flow_counter={"bits": 0}), "output.flow_counter.bits"),
    "random drop without a limit": (lambda sc: sc.update(queue={"kind": "random-drop", "limit": "none"}), "queue.limit"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_fpq_input_names_the_key(case: str) -> None:
    edit, key = BAD[case]
    sc = short(10, S.fpq())
    edit(sc)
    with pytest.raises(ScenarioError) as e:
        aqmlab.validate(sc)
    assert str(e.value).startswith(key), str(e.value)
    assert "\n" not in str(e.value)


def test_quick_reproduction_writes_report_figures_and_tables(tmp_path: Path) -> None:
    claims = repro.reproduce(tmp_path, quick=True, quiet=True, only=["fpq_validation", "t_clear_sweep"])
    report = (tmp_path / "report.md").read_text()
    assert len(claims) >= 6
    for c in claims:
        assert f"| {c.ident} |" in report
        assert c.holds in (True, False, None)
    for name in ("fpq_validation", "t_clear_sweep"):
        assert (tmp_path / repro.FIGURES[name]).stat().st_size > 10_000
        assert repro.FIGURES[name] in report
    table = pd.read_csv(tmp_path / "fpq_validation.csv")
    assert list(table["n"]) == sorted(table["n"])
    # the measured queue rises with the flow count, as FPQ's target does
    assert (np.diff(table["queue"]) > 0).all()
    t_clear = pd.read_csv(tmp_path / "t_clear_sweep.csv").set_index("t_clear")
    assert t_clear.loc[0.05, "flow_estimate"] < t_clear.loc[4.0, "flow_estimate"]


def test_cli_rejects_unknown_experiment_in_one_line(tmp_path: Path) -> None:
    proc = run_cli("repro", "fpq", "--quick", "--only", "nope", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("aqmlab: error: --only 'nope' is not an experiment; allowed: single_flow")
    assert "Traceback" not in proc.stderr


def test_cli_rejects_unwritable_output_in_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = run_cli("repro", "fpq", "--quick", "--out", str(blocker / "sub"))
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and "--out" in proc.stderr
