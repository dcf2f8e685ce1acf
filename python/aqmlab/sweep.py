"""Parameter sweeps (DESIGN §7): a grid of runs on Dask, with a results store that resumes.

A sweep file is a base scenario and a ``[sweep]`` table of key paths with lists of values; the
runs are the cartesian product of the lists (docs/sweep.md). Every run is expanded and validated
before anything runs. The runs go to a Dask cluster (a ``LocalCluster`` of worker processes, or a
running scheduler's address); each finished run is written by the client, atomically, to
``OUT/runs/<id>/`` where ``<id>`` is a short hash of the expanded scenario: the files
``aqmlab run --out DIR --no-plot`` writes, byte for byte (``wall_seconds`` aside), plus
``params.json`` with the swept values and a checksum of every file. A rerun into the same ``OUT``
reuses every run whose directory is complete and computes the others. At the end ``sweep.parquet``
and ``sweep.csv`` hold one row per run: its parameters and summary numbers; ``sweep_flows.parquet``
one row per flow of each run; and, unless ``plot=False``, ``delay_goodput.png`` draws the runs as RFC
7928's delay–goodput graph (:mod:`.sweep_plot`) and ``flow_goodput.png`` the flows' goodputs per
configuration (:mod:`.sweep_flow_plot`).

>>> s = load_sweep({"base": {"run": {"duration": "1s"},
...                          "topology": {"bottleneck": {"rate": "10Mbps"}},
...                          "flows": [{"kind": "tcp"}]},
...                 "sweep": {"flows[0].count": [1, 2], "run.seed": [1, 2, 3]}})
>>> [tuple(r.params.values()) for r in s.runs]
[(1, 1), (1, 2), (1, 3), (2, 1), (2, 2), (2, 3)]
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import shutil
import signal
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

import pandas as pd

from . import api
from .exceptions import ScenarioError, SimulationError
from .library import builtin_path
from .build import fingerprint
from .scenario_keys import parse_key, set_key, show_key

__all__ = ["Sweep", "SweepRun", "SweepOutcome", "load_sweep", "run_sweep", "sweep", "run_id", "run_complete",
           "params_text"]

SweepLike = str | os.PathLike | Mapping[str, Any]

RUNS_DIR = "runs"
PARAMS_FILE = "params.json"
TABLE_FILES = ("sweep.parquet", "sweep.csv")
FLOW_TABLE_FILE = "sweep_flows.parquet"

# Summary numbers copied into the combined table: the aggregate, and the forward bottleneck's queue.
_AGGREGATE_KEYS = ("goodput_bps", "forward_goodput_bps", "jain_index", "flows")
_QUEUE_KEYS = ("arrivals", "drops", "drops_early", "drops_forced", "drops_overflow", "marks", "drop_rate",
               "mean_len_packets", "mean_len_bytes", "mean_sojourn_s", "p99_sojourn_s", "utilization")
_FLOW_SUMS = ("retransmits", "timeouts")
# Per-flow numbers copied into the per-flow table, one row per flow of each run.
_FLOW_KEYS = ("kind", "direction", "goodput_bps", "delay_p50_s", "delay_p99_s", "drops", "retransmits", "timeouts")


@dataclass(frozen=True)
class SweepRun:
    """One point of the grid."""

    index: int
    params: dict[str, Any]  # sweep key path → value, in the [sweep] table's order
    scenario: dict[str, Any]  # the base with the values set
    run_id: str  # short hash of `scenario` and the files it names: the run's directory name


@dataclass
class Sweep:
    """A sweep file, expanded and validated."""

    source: str  # the file's name (or "sweep" for a dict), as errors name it
    keys: list[str]
    runs: list[SweepRun]


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did."""

    table: pd.DataFrame
    reused: int
    computed: int
    failed: list[tuple[SweepRun, str]] = field(default_factory=list)
    #: Of the computed runs, how many the store held from another aqmlab build (recomputed).
    stale: int = 0
    #: Things the table shows that the user should know (seeds that changed nothing).
    warnings: list[str] = field(default_factory=list)


def run_id(scenario: Mapping[str, Any]) -> str:
    """The first 12 hex digits of the SHA-256 of the scenario as canonical JSON (sorted keys), with
    the digests of the files it names (a delivery trace), so an edited trace is a new run.

    >>> run_id({"run": {"duration": "1s"}}) == run_id({"run": {"duration": "1s"}})
    True
    """
    files = api.named_file_digests(scenario)
    keyed = {**scenario, "__files__": files} if files else scenario
    text = json.dumps(keyed, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


# ---- the sweep file ----

def _read_toml(path: Path) -> dict[str, Any]:
    return api._parse_toml(api._read_text(path), path)


def _load_base(spec: Any, where: Path | None, source: str) -> dict[str, Any]:
    if isinstance(spec, Mapping):
        return api._plain(spec, "")
    if not isinstance(spec, (str, os.PathLike)):
        raise ScenarioError(f"{source}: base must be a table (the scenario) or a path to a scenario file, "
                            f"got {type(spec).__name__}")
    path = Path(spec)
    if where is not None and not path.is_absolute():
        path = where / path
    if not path.exists() and builtin_path(str(spec)) is not None:
        path = builtin_path(str(spec))  # a built-in scenario's name, as `aqmlab run NAME` takes it
    return api.scenario_dict(path)


def _absent_table(base: Mapping[str, Any], tokens: list[str | int]) -> list[str | int] | None:
    """The key path of the first table on the way to `tokens` that `base` does not have (setting the
    key creates it), or None when every table on the way exists."""
    cur: Any = base
    for i, tok in enumerate(tokens[:-1]):
        if isinstance(tok, str) and isinstance(cur, Mapping) and tok not in cur:
            return tokens[:i + 1]
        try:
            cur = cur[tok]
        except (KeyError, IndexError, TypeError):
            return None
    return None


def load_sweep(sweep: SweepLike) -> Sweep:
    """Reads a sweep file (or a dict with its keys), expands it and validates every run.

    Raises
    ------
    ScenarioError
        one line naming the sweep file and the sweep key; for a run that is not a valid scenario,
        also the run's values and the scenario's key path with what is allowed.
    """
    if isinstance(sweep, Mapping):
        data, where, source = dict(sweep), None, "sweep"
    else:
        path = Path(sweep)
        if not path.is_file():
            raise ScenarioError(f"{path}: no such sweep file")
        data, where, source = _read_toml(path), path.parent, str(path)
    unknown = sorted(set(data) - {"base", "sweep"})
    if unknown:
        raise ScenarioError(f"{source}: unknown key {unknown[0]!r} at the top level; allowed: base, sweep")
    if "base" not in data:
        raise ScenarioError(f'{source}: base: missing; give the scenario as a [base] table or base = "file.toml"')
    grid = data.get("sweep")
    if not isinstance(grid, Mapping) or not grid:
        raise ScenarioError(f'{source}: [sweep]: missing or empty; give key paths with lists of values, '
                            f'e.g. "queue.max_p" = [0.05, 0.1]')
    base = _load_base(data["base"], where, source)
    keys = list(grid)
    paths, lists = [], []
    for key in keys:
        values = grid[key]
        paths.append(parse_key(key, f'{source}: [sweep] "{key}"'))
        if not isinstance(values, list):
            raise ScenarioError(f'{source}: [sweep] "{key}": must be a list of values, got {_cell(values)!r}')
        if not values:
            raise ScenarioError(f'{source}: [sweep] "{key}": the list is empty; give at least one value')
        values = api._plain(values, key)
        seen: set[str] = set()
        for v in values:
            text = json.dumps(v, sort_keys=True)
            if text in seen:
                raise ScenarioError(f'{source}: [sweep] "{key}": the value {text} is listed twice')
            seen.add(text)
        lists.append(values)
    for (k1, t1), (k2, t2) in itertools.permutations(zip(keys, paths), 2):
        if t2[:len(t1)] == t1:
            raise ScenarioError(f'{source}: [sweep] "{k2}": lies inside "{k1}", which is swept too; sweep one of them')
    for key, tokens in zip(keys, paths):  # reachable at all: checked once, before the grid
        set_key(json.loads(json.dumps(base)), tokens, lists[keys.index(key)][0], f'{source}: [sweep] "{key}"')
    runs = []
    for index, combo in enumerate(itertools.product(*lists)):
        scenario = json.loads(json.dumps(base))
        for key, tokens, value in zip(keys, paths, combo):
            set_key(scenario, tokens, value, f'{source}: [sweep] "{key}"')
        if where is not None:
            api.anchor_files(scenario, where)  # names in [base] or [sweep] are the sweep file's
        params = dict(zip(keys, combo))
        try:
            api.validate(scenario)
        except ScenarioError as e:
            for key, tokens in zip(keys, paths):
                if any(str(e).startswith(f"{show_key(tokens[:n])}: unknown") for n in range(1, len(tokens) + 1)):
                    raise ScenarioError(f'{source}: [sweep] "{key}": not a key of the scenario: {e}') from None
            for key, tokens in zip(keys, paths):
                # A key in a table the base lacks made that table with the key alone in it, so the
                # error is about the table (e.g. its kind is missing): name the swept key too.
                made = _absent_table(base, tokens)
                if made is not None and str(e).startswith((f"{show_key(made)}.", f"{show_key(made)}:",
                                                           f"{show_key(made)} (")):
                    raise ScenarioError(f'{source}: [sweep] "{key}": the base scenario has no [{show_key(made)}] '
                                        f'table, so sweeping {key} makes one with only {show_key(tokens[len(made):])} '
                                        f'in it; give [{show_key(made)}] in the base: {e}') from None
            run = SweepRun(index, params, scenario, "")
            raise ScenarioError(f"{source}: the run with {params_text(run)} is not a valid scenario: {e}") from None
        runs.append(SweepRun(index, params, scenario, run_id(scenario)))
    return Sweep(source, keys, runs)


# ---- the results store ----

def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _stored_meta(run_dir: Path, run: SweepRun) -> dict[str, Any] | None:
    """The run's ``params.json`` when the directory holds the run whole (its ``params.json`` names
    the run and every file it lists is there with the recorded checksum), else None."""
    try:
        meta = json.loads((run_dir / PARAMS_FILE).read_text())
        if meta.get("run_id") != run.run_id or "summary.json" not in meta.get("files", {}):
            return None
        return meta if all(_sha256(run_dir / name) == digest for name, digest in meta["files"].items()) else None
    except (OSError, ValueError, AttributeError, TypeError):
        return None


def run_complete(run_dir: Path, run: SweepRun) -> bool:
    """Whether ``run_dir`` holds the finished run, whole, made by this aqmlab build
    (:func:`aqmlab.build.fingerprint`, recorded in ``params.json``): a run of other code is not
    reused, so one table never mixes the results of two simulators."""
    meta = _stored_meta(run_dir, run)
    return meta is not None and meta.get("build") == fingerprint()


def _store(run_dir: Path, run: SweepRun, files: dict[str, bytes], build: str) -> None:
    """Writes a run's files and its params.json into ``run_dir`` at once (staged, then renamed)."""
    from .output import staged_results_dir

    if run_dir.exists():  # an incomplete run (complete ones are not recomputed)
        shutil.rmtree(run_dir)
    with staged_results_dir(run_dir) as tmp:
        for name, data in files.items():
            (tmp / name).write_bytes(data)
        meta = {"run_id": run.run_id, "params": run.params, "aqmlab": api._native.version(), "build": build,
                "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}}
        (tmp / PARAMS_FILE).write_text(json.dumps(meta, indent=2) + "\n")


def _simulate(scenario: dict[str, Any]) -> tuple[dict[str, bytes], str]:
    """On a worker: runs the scenario and returns the results directory's files (``--no-plot``) and
    the worker's aqmlab build."""
    from .output import write_results

    result = api.run(scenario)
    with tempfile.TemporaryDirectory(prefix="aqmlab-sweep-") as d:
        write_results(result, Path(d), plot=False)
        return {p.name: p.read_bytes() for p in sorted(Path(d).iterdir())}, fingerprint()


def _check_store(out_arg: str | os.PathLike) -> None:
    """Refuses a sweep directory that cannot be one (before anything runs)."""
    from .output import refuse_unsafe_location

    out = refuse_unsafe_location(out_arg, example="results/my-sweep")
    if out.exists() and not out.is_dir():
        raise SimulationError(f"--out {out}: exists and is not a directory")
    if (out / "summary.json").exists():
        raise SimulationError(f"--out {out}: holds a single run's results; give a new directory or an earlier "
                              f"sweep's")
    probe = out.resolve()
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise SimulationError(f"--out {out}: directory is not writable")


# ---- the combined table ----

def _cell(value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if isinstance(value, (list, dict)) else value


def _row(run: SweepRun, summary: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {"run_id": run.run_id}
    row.update({k: _cell(v) for k, v in run.params.items()})
    agg = summary["aggregate"]
    row.update({k: agg.get(k) for k in _AGGREGATE_KEYS})
    queue = next(q for q in summary["queues"] if q["name"] == "bottleneck")
    row["queue_kind"] = queue["kind"]
    row.update({f"queue_{k}": queue.get(k) for k in _QUEUE_KEYS})
    for k in _FLOW_SUMS:
        row[k] = sum(f.get(k) or 0 for f in summary["flows"])
    row["seed"] = summary["seed"]
    row["events"] = summary["events"]
    row["wall_seconds"] = summary["wall_seconds"]
    return row


def _flow_rows(run: SweepRun, summary: dict[str, Any]) -> list[dict[str, Any]]:
    params = {k: _cell(v) for k, v in run.params.items()}
    return [{"run_id": run.run_id, **params, "flow": f["id"], **{k: f.get(k) for k in _FLOW_KEYS}}
            for f in summary["flows"]]


def _tables(sweep: Sweep, runs_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The combined table (a row per complete run) and the per-flow table (a row per flow of each)."""
    rows, flow_rows = [], []
    for run in sweep.runs:
        summary_path = runs_dir / run.run_id / "summary.json"
        if run_complete(runs_dir / run.run_id, run):
            summary = json.loads(summary_path.read_text())
            rows.append(_row(run, summary))
            flow_rows.extend(_flow_rows(run, summary))
    df, flows = pd.DataFrame(rows), pd.DataFrame(flow_rows)
    for key in sweep.keys:  # a column mixing types (100 and "150KB") is stored as text
        types = {type(v) for v in df[key]} if key in df else set()
        if len(types) > 1 and not types <= {int, float}:
            df[key] = df[key].astype(str)
            flows[key] = flows[key].astype(str)
    return df, flows


def _write_tables(df: pd.DataFrame, flows: pd.DataFrame, out: Path) -> None:
    for name, frame in [*((n, df) for n in TABLE_FILES), (FLOW_TABLE_FILE, flows)]:
        tmp = out / f".{name}.partial-{os.getpid()}"
        if name.endswith(".parquet"):
            frame.to_parquet(tmp, index=False)
        else:
            frame.to_csv(tmp, index=False)
        os.replace(tmp, out / name)


def _write_plots(table: pd.DataFrame, flows: pd.DataFrame, keys: list[str], out: Path, plot: bool) -> None:
    """Draws ``delay_goodput.png`` and ``flow_goodput.png`` from the tables just written; without ``plot``,
    removes those an earlier run of the sweep left, so that the directory never holds a plot of another
    table."""
    from .sweep_flow_plot import FLOW_PLOT_FILE, plot_flow_goodput
    from .sweep_plot import PLOT_FILE, plot_delay_goodput

    if plot:
        plot_delay_goodput(table, keys, out / PLOT_FILE)
        plot_flow_goodput(flows, keys, out / FLOW_PLOT_FILE)
    else:
        (out / PLOT_FILE).unlink(missing_ok=True)
        (out / FLOW_PLOT_FILE).unlink(missing_ok=True)


# ---- running ----

def _client(scheduler: str | None, workers: int):
    """A Dask client: of the scheduler at ``scheduler``, or of a new LocalCluster of processes."""
    from distributed import Client, LocalCluster

    for name in ("distributed", "distributed.worker", "distributed.nanny", "distributed.scheduler"):
        logging.getLogger(name).setLevel(logging.ERROR)
    if scheduler:
        try:
            return Client(scheduler, timeout="10s"), None
        except (OSError, TimeoutError, ValueError) as e:
            raise SimulationError(f"--scheduler {scheduler}: cannot connect ({e})") from None
    # The worker processes start with SIGINT ignored (they inherit it), so that Ctrl-C reaches this
    # process alone, which stops them in order, instead of printing a traceback from each.
    main_thread = threading.current_thread() is threading.main_thread()
    old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
    try:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0",
                               silence_logs=logging.CRITICAL)  # failed runs are reported by us, once
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, old)
    return Client(cluster), cluster


def run_sweep(
    sweep: SweepLike | Sweep,
    *,
    out: str | os.PathLike,
    scheduler: str | None = None,
    workers: int | None = None,
    retries: int = 1,
    plot: bool = True,
    on_start: Callable[[int, int, int], None] | None = None,
    on_run: Callable[[], None] | None = None,
) -> SweepOutcome:
    """Runs a sweep into the results store ``out``; see :func:`sweep`. ``on_start(todo, reused, stale)``
    is called once the store has been read (`stale`: of the runs to compute, those stored by another
    aqmlab build), ``on_run()`` after each run is stored."""
    loaded = sweep if isinstance(sweep, Sweep) else load_sweep(sweep)
    _check_store(out)
    out = Path(out)
    runs_dir = out / RUNS_DIR
    todo = [r for r in loaded.runs if not run_complete(runs_dir / r.run_id, r)]
    todo = list({r.run_id: r for r in todo}.values())
    reused = len(loaded.runs) - len(todo)
    stale = sum(_stored_meta(runs_dir / r.run_id, r) is not None for r in todo)
    client = cluster = None
    if todo:  # connect (or start the local cluster) before anything is written
        n = max(1, min(workers or os.cpu_count() or 1, len(todo)))
        client, cluster = _client(scheduler, n)
    failed: list[tuple[SweepRun, str]] = []
    try:
        try:
            runs_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SimulationError(f"--out {out}: cannot create the sweep directory ({e.strerror})") from None
        if on_start:
            on_start(len(todo), reused, stale)
        if client is not None:
            from distributed import as_completed

            futures = {client.submit(_simulate, r.scenario, key=f"aqmlab-run-{r.run_id}", retries=retries,
                                     pure=False): r for r in todo}
            for future in as_completed(futures):
                run = futures[future]
                try:
                    files, build = future.result()
                except Exception as e:  # noqa: BLE001 - a failed run is reported, the others go on
                    failed.append((run, f"{type(e).__name__}: {e}".splitlines()[0]))
                    continue
                if build != fingerprint():
                    failed.append((run, f"the worker runs another aqmlab build ({build}) than this process "
                                        f"({fingerprint()}); install the same aqmlab on the workers"))
                    continue
                _store(runs_dir / run.run_id, run, files, build)
                if on_run:
                    on_run()
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    table, flows = _tables(loaded, runs_dir)
    _write_tables(table, flows, out)
    _write_plots(table, flows, loaded.keys, out, plot)
    warnings = [w for w in [seeds_that_changed_nothing(table, loaded.keys)] if w]
    return SweepOutcome(table, reused, len(todo) - len(failed), failed, stale, warnings)


# What a run produced, as compared across seeds (everything but its identity and timing).
_RESULT_COLUMNS = ("events", *_AGGREGATE_KEYS, *(f"queue_{k}" for k in _QUEUE_KEYS), *_FLOW_SUMS)


def seeds_that_changed_nothing(table: pd.DataFrame, keys: list[str]) -> str | None:
    """A warning when sweeping ``run.seed`` gave identical results for a configuration: nothing random
    acted in those runs (flows starting together, a discipline that draws no random numbers), so the
    seeds are one sample, not n. ``None`` when every configuration's seeds differ somewhere."""
    if "run.seed" not in keys or table.empty:
        return None
    others = [k for k in keys if k != "run.seed"]
    results = [c for c in _RESULT_COLUMNS if c in table]
    groups = table.groupby(others, dropna=False, sort=False) if others else [((), table)]
    sizes = [(len(g), len(g[results].astype(str).drop_duplicates())) for _, g in groups]
    several = [(n, distinct) for n, distinct in sizes if n > 1]
    identical = sum(distinct == 1 for _, distinct in several)
    if not identical:
        return None
    where = "every configuration" if identical == len(several) else f"{identical} of {len(several)} configurations"
    return (f"run.seed: the seeds gave identical results in {where}: nothing random acts in those runs "
            f"(flows that start together under a discipline that draws no random numbers), so they are one "
            f"sample, not {max(n for n, _ in several)}; give the flows a start_jitter (docs/scenarios.md) to "
            f"sample different starts")


def sweep(
    sweep: SweepLike,
    *,
    out: str | os.PathLike,
    scheduler: str | None = None,
    workers: int | None = None,
    retries: int = 1,
    plot: bool = True,
) -> pd.DataFrame:
    """Runs a parameter sweep on Dask and returns the combined table (one row per finished run).

    Parameters
    ----------
    sweep : path or dict
        A sweep file (TOML: ``base`` and ``[sweep]``, docs/sweep.md), or a dict with the same keys.
    out : path
        The results store: ``runs/<id>/`` per run, ``sweep.parquet``, ``sweep.csv``, ``sweep_flows.parquet``,
        ``delay_goodput.png`` and ``flow_goodput.png``. Runs already complete there are reused, not recomputed.
    scheduler : str, optional
        Address of a running Dask scheduler (``tcp://host:8786``); default: a LocalCluster.
    workers : int, optional
        Worker processes of the LocalCluster (default: the CPU count, at most one per run).
    retries : int
        Times Dask retries a run whose worker failed or died.
    plot : bool
        Draw ``delay_goodput.png`` (RFC 7928 §2.7's delay–goodput graph) and ``flow_goodput.png`` (per-flow
        goodput boxes) after the tables.

    Raises
    ------
    ScenarioError
        for a bad sweep file or a run that is not a valid scenario, before anything runs.
    SimulationError
        when some runs failed (the others are stored and in ``sweep.parquet``).
    """
    outcome = run_sweep(sweep, out=out, scheduler=scheduler, workers=workers, retries=retries, plot=plot)
    if outcome.failed:
        run, why = outcome.failed[0]
        raise SimulationError(f"{len(outcome.failed)} run(s) failed, first {run.run_id} ({params_text(run)}): {why}")
    return outcome.table


def params_text(run: SweepRun) -> str:
    """A run's values as the errors show them: ``queue.max_p = 0.1, run.seed = 2``."""
    return ", ".join(f"{k} = {json.dumps(v)}" for k, v in run.params.items())
