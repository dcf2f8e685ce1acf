"""A million flows through the whole pipeline (issue 10's newcomer defect: a 1,000,000-flow run
used to abort after the simulation, in post-processing). The simulated time is short, because
the defect was in what follows the run: the summary, flows.csv and the plot at a million rows."""

from __future__ import annotations

from pathlib import Path

import orjson
import pandas as pd

from conftest import run_cli

FLOWS = 1_000_000

MILLION_FLOWS = f"""\
[run]
duration = "20ms"
warmup = "10ms"

[topology.bottleneck]
rate = "10Gbps"
delay = "2ms"

[queue]
kind = "droptail"
limit = 100000

[[flows]]
kind = "tcp"
count = {FLOWS}
start_jitter = "10ms"
"""


def test_a_million_flows_run_and_write_every_result_file(tmp_path: Path) -> None:
    scenario = tmp_path / "million.toml"
    scenario.write_text(MILLION_FLOWS)
    out = tmp_path / "res"
    proc = run_cli("run", str(scenario), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"over {FLOWS} flows" in proc.stdout
    assert {p.name for p in out.iterdir()} == {"summary.json", "timeseries.parquet", "flows.csv", "plot.png"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "staging directory left behind"

    flows = pd.read_csv(out / "flows.csv", usecols=["id", "kind", "delivered_bytes"])
    assert len(flows) == FLOWS and (flows["id"].to_numpy() == range(FLOWS)).all()
    assert set(flows["kind"]) == {"tcp"}
    summary = orjson.loads((out / "summary.json").read_bytes())
    assert len(summary["flows"]) == FLOWS and summary["aggregate"]["flows"] == FLOWS
    # The two files describe the same flows: delivered bytes agree row by row.
    assert [f["delivered_bytes"] for f in summary["flows"]] == flows["delivered_bytes"].tolist()
    assert flows["delivered_bytes"].sum() > 0
    assert (out / "plot.png").stat().st_size > 10_000
