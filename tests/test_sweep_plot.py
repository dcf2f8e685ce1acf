"""The sweep's graphs (docs/sweep.md): the delay–goodput graph (RFC 7928 §2.7) — the 1σ covariance ellipse
as a pure function, the grouping into configurations, and delay_goodput.png from a real sweep — and the
per-flow goodput boxes of flow_goodput.png from the per-flow table sweep_flows.parquet."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from aqmlab.sweep import FLOW_TABLE_FILE, load_sweep
from aqmlab.sweep_flow_plot import FLOW_PLOT_FILE, flow_boxes
from aqmlab.sweep_plot import MAX_LEGEND, PLOT_FILE, configurations, covariance_ellipse, min_span, plot_delay_goodput
from conftest import run_cli
from test_sweep import TINY_BASE

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# ---- the ellipse ----

def test_axis_aligned_spread_gives_its_standard_deviations_as_semi_axes() -> None:
    # By hand: mean (10, 5); var x = (3² + 3²) / 3 = 6, var y = (1 + 1) / 3 = 2/3, no covariance.
    e = covariance_ellipse([(7, 5), (13, 5), (10, 4), (10, 6)])
    assert e is not None
    assert e.center == pytest.approx((10, 5))
    assert (e.width, e.height) == pytest.approx((2 * math.sqrt(6), 2 * math.sqrt(2 / 3)))
    assert e.angle_deg == pytest.approx(0)


def test_spread_along_y_turns_the_major_axis_to_90_degrees() -> None:
    e = covariance_ellipse([(0, -3), (0, 3), (-1, 0), (1, 0)])
    assert e is not None and e.angle_deg == pytest.approx(90)
    assert e.width > e.height


@pytest.mark.parametrize("theta_deg", [30.0, 45.0, 120.0, 160.0])
def test_rotated_spread_gives_the_rotation_and_the_same_axes(theta_deg: float) -> None:
    # The axis-aligned points above (centred), rotated by θ about the origin: the axes keep their
    # lengths and the major axis turns by θ.
    base = np.array([(-3, 0), (3, 0), (0, -1), (0, 1)], dtype=float)
    t = math.radians(theta_deg)
    rot = np.array([[math.cos(t), -math.sin(t)], [math.sin(t), math.cos(t)]])
    e = covariance_ellipse(base @ rot.T + (100, 20))
    assert e is not None
    assert e.center == pytest.approx((100, 20))
    assert (e.width, e.height) == pytest.approx((2 * math.sqrt(6), 2 * math.sqrt(2 / 3)))
    assert e.angle_deg == pytest.approx(theta_deg)


def test_negative_correlation_leans_the_ellipse_past_90_degrees() -> None:
    e = covariance_ellipse([(0, 0), (1, -1), (2, -2.1), (3, -2.9)])
    assert e is not None and 130 < e.angle_deg < 140


@pytest.mark.parametrize("n", [0, 1, 2])
def test_fewer_than_three_points_give_no_ellipse(n: int) -> None:
    assert covariance_ellipse([(1.0, 2.0), (3.0, 1.0)][:n]) is None


def test_identical_points_give_a_degenerate_ellipse_at_the_point() -> None:
    e = covariance_ellipse([(4.0, 7.0)] * 5)
    assert e is not None
    assert e.center == (4.0, 7.0) and (e.width, e.height, e.angle_deg) == (0.0, 0.0, 0.0)


def test_collinear_points_give_a_zero_height() -> None:
    e = covariance_ellipse([(0, 0), (1, 1), (2, 2)])
    assert e is not None and e.height == pytest.approx(0, abs=1e-12) and e.angle_deg == pytest.approx(45)
    assert e.width == pytest.approx(2 * math.sqrt(2))  # var along the line: (2 + 0 + 2) / 2 = 2


# ---- configurations ----

def test_configurations_are_the_swept_values_other_than_the_seed_in_grid_order() -> None:
    table = pd.DataFrame({"queue.kind": ["red", "red", "codel", "codel"], "flows[0].count": [10, 10, 10, 10],
                          "run.seed": [1, 2, 1, 2]})
    groups = configurations(table, ["queue.kind", "flows[0].count", "run.seed"])
    assert [label for label, _ in groups] == ["queue.kind=red, flows[0].count=10",
                                              "queue.kind=codel, flows[0].count=10"]
    assert [list(rows["run.seed"]) for _, rows in groups] == [[1, 2], [1, 2]]
    only_seeds = configurations(table, ["run.seed"])
    assert [(label, len(rows)) for label, rows in only_seeds] == [("all runs", 4)]


@pytest.mark.parametrize("n_configs", [0, 3, MAX_LEGEND + 5])
def test_plot_of_a_table_with_gaps_or_many_configurations_is_drawn(n_configs: int, tmp_path: Path) -> None:
    """No runs (all failed), a run with no delay (NaN), and more configurations than the legend
    takes: each still gives a PNG and leaves no staging file."""
    rng = np.random.default_rng(1)
    rows = [{"queue.max_p": c / 100, "run.seed": s, "queue_mean_sojourn_s": 0.01 + rng.random() / 100,
             "goodput_bps": 9e6 + rng.random() * 1e5} for c in range(n_configs) for s in (1, 2, 3)]
    table = pd.DataFrame(rows)
    if n_configs:
        table.loc[0, "queue_mean_sojourn_s"] = float("nan")
    plot_delay_goodput(table, ["queue.max_p", "run.seed"], tmp_path / PLOT_FILE)
    assert (tmp_path / PLOT_FILE).read_bytes().startswith(PNG_MAGIC)
    assert [p.name for p in tmp_path.iterdir()] == [PLOT_FILE]


def test_near_equal_runs_are_drawn_on_axes_of_a_sensible_span(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # RFC 7928's `unresponsive` case: four AQMs at the link rate within 0.0005 Mb/s filled the whole
    # goodput axis, so rounding looked like a spread.
    import matplotlib.pyplot as plt

    drawn = []
    close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig: (drawn.append(fig), close(fig)))
    rows = [{"aqm": aqm, "run.seed": s, "queue_mean_sojourn_s": 0.1 + i * 1e-6, "goodput_bps": 9.9995e6 + i * 1e2}
            for i, aqm in enumerate(["fifo", "red", "codel", "pie"]) for s in (1, 2, 3)]
    plot_delay_goodput(pd.DataFrame(rows), ["aqm", "run.seed"], tmp_path / PLOT_FILE)
    ax = drawn[0].axes[0]
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    assert x0 > x1, "the delay axis stays inverted"
    assert y1 - y0 == pytest.approx(1.0, rel=1e-3) and y0 < 9.9995 < 9.9998 < y1
    assert x0 - x1 == pytest.approx(10.0, rel=1e-3)
    assert min_span(0.0, 10.0) is None and min_span(0.0, 1e-4) == (-0.005 + 5e-5, 0.005 + 5e-5)


# ---- delay_goodput.png from a real sweep ----

# 2 queue kinds × 3 seeds of the 2-second dumbbell with a drop-tail base queue.
SWEEP = """\
base = "tiny.toml"

[sweep]
"queue.kind" = ["droptail", "codel"]
"run.seed" = [1, 2, 3]
"""


def write_sweep(tmp: Path) -> Path:
    base = TINY_BASE.split("[queue]")[0] + '[queue]\nkind = "droptail"\nlimit = 60\n\n[[flows]]' \
        + TINY_BASE.split("[[flows]]", 1)[1]
    (tmp / "tiny.toml").write_text(base)
    path = tmp / "grid.toml"
    path.write_text(SWEEP)
    return path


@pytest.fixture(scope="module")
def plotted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("plotted")
    path = write_sweep(tmp)
    out = tmp / "store"
    proc = run_cli("sweep", str(path), "--out", str(out), "--workers", "2")
    assert proc.returncode == 0, proc.stderr
    assert f"plots: {out / PLOT_FILE}, {out / FLOW_PLOT_FILE}" in proc.stdout
    return path, out


def test_sweep_draws_delay_goodput_png(plotted: tuple[Path, Path]) -> None:
    path, out = plotted
    data = (out / PLOT_FILE).read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000
    assert b"Software" not in data  # no matplotlib version in the file: it depends on the table
    assert not [p for p in out.rglob(".*")], "staging files left behind"
    table = pd.read_parquet(out / "sweep.parquet")
    assert len(table) == 6 and (table["queue_mean_sojourn_s"] > 0).all()
    assert [label for label, _ in configurations(table, load_sweep(path).keys)] == \
        ["queue.kind=droptail", "queue.kind=codel"]


def test_no_plot_writes_none_and_removes_an_earlier_one(plotted: tuple[Path, Path], tmp_path: Path) -> None:
    path, store = plotted
    out = tmp_path / "store"
    shutil.copytree(store, out)
    proc = run_cli("sweep", str(path), "--out", str(out), "--no-plot")
    assert proc.returncode == 0, proc.stderr
    assert "6 runs: 6 reused" in proc.stdout and "plot:" not in proc.stdout
    assert not (out / PLOT_FILE).exists() and not (out / FLOW_PLOT_FILE).exists()
    fresh = tmp_path / "fresh"
    proc = run_cli("sweep", str(path), "--out", str(fresh), "--workers", "2", "--no-plot", "-q")
    assert proc.returncode == 0, proc.stderr
    assert (fresh / "sweep.parquet").exists() and not (fresh / PLOT_FILE).exists()
    assert (fresh / FLOW_TABLE_FILE).exists() and not (fresh / FLOW_PLOT_FILE).exists()


def test_resumed_and_repeated_sweeps_draw_the_same_png(plotted: tuple[Path, Path], tmp_path: Path) -> None:
    """A resumed sweep redraws the plot from the whole table: after a run is lost and recomputed the
    PNG is byte for byte the first one; so is a second sweep from scratch into another directory."""
    path, store = plotted
    first, first_flows = (store / PLOT_FILE).read_bytes(), (store / FLOW_PLOT_FILE).read_bytes()
    out = tmp_path / "store"
    shutil.copytree(store, out)
    shutil.rmtree(out / "runs" / load_sweep(path).runs[4].run_id)
    (out / PLOT_FILE).write_bytes(b"stale")
    (out / FLOW_PLOT_FILE).write_bytes(b"stale")
    proc = run_cli("sweep", str(path), "--out", str(out), "--workers", "1")
    assert proc.returncode == 0, proc.stderr
    assert "computed 1, reused 5" in proc.stdout
    assert (out / PLOT_FILE).read_bytes() == first and (out / FLOW_PLOT_FILE).read_bytes() == first_flows
    again = tmp_path / "again"
    proc = run_cli("sweep", str(path), "--out", str(again), "--workers", "2", "-q")
    assert proc.returncode == 0, proc.stderr
    assert (again / PLOT_FILE).read_bytes() == first and (again / FLOW_PLOT_FILE).read_bytes() == first_flows


# ---- the per-flow table and flow_goodput.png ----

def test_per_flow_table_is_every_flow_of_every_run(plotted: tuple[Path, Path]) -> None:
    path, out = plotted
    flows = pd.read_parquet(out / FLOW_TABLE_FILE)
    for run in load_sweep(path).runs:
        summary = json.loads((out / "runs" / run.run_id / "summary.json").read_text())
        mine = flows[flows["run_id"] == run.run_id].sort_values("flow")
        assert mine["flow"].tolist() == [f["id"] for f in summary["flows"]]
        assert mine["goodput_bps"].tolist() == [f["goodput_bps"] for f in summary["flows"]]
        assert mine["delay_p99_s"].tolist() == [f["delay_p99_s"] for f in summary["flows"]]
        assert (mine["queue.kind"] == run.params["queue.kind"]).all() and (mine["run.seed"] == run.params["run.seed"]).all()
    data = (out / FLOW_PLOT_FILE).read_bytes()
    assert data.startswith(PNG_MAGIC) and b"Software" not in data


def test_flow_boxes_pool_the_seeds_of_a_configuration(plotted: tuple[Path, Path]) -> None:
    """The tiny base has TCP flows and a Poisson UDP flow: a box per queue kind and flow kind, each
    holding that kind's flows of all 3 seeds."""
    path, out = plotted
    flows = pd.read_parquet(out / FLOW_TABLE_FILE)
    boxes = dict(flow_boxes(flows, load_sweep(path).keys))
    assert list(boxes) == [f"queue.kind={q} · {k}" for q in ("droptail", "codel") for k in ("tcp", "udp-poisson")]
    for label, goodput in boxes.items():
        q, k = label.removeprefix("queue.kind=").split(" · ")
        pooled = flows[(flows["queue.kind"] == q) & (flows["kind"] == k)]
        assert sorted(goodput) == pytest.approx(sorted(pooled["goodput_bps"] / 1e6))
        assert pooled["run_id"].nunique() == 3


def test_flow_boxes_split_kinds_and_skip_flows_without_goodput() -> None:
    flows = pd.DataFrame({"run_id": ["a"] * 4 + ["b"] * 4, "q": ["red"] * 4 + ["pie"] * 4,
                          "kind": ["tcp", "tcp", "udp-cbr", "tcp"] * 2,
                          "goodput_bps": [1e6, 3e6, 5e5, float("nan"), 2e6, 2e6, 1e5, 2e6]})
    boxes = flow_boxes(flows, ["q"])
    assert [label for label, _ in boxes] == ["q=red · tcp", "q=red · udp-cbr", "q=pie · tcp", "q=pie · udp-cbr"]
    assert boxes[0][1].tolist() == [1.0, 3.0] and boxes[2][1].tolist() == [2.0, 2.0, 2.0]
