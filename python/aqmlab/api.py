"""The Python API: run a scenario and get data frames back.

>>> import aqmlab
>>> res = aqmlab.run({"run": {"duration": "2s"},
...                   "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms"}},
...                   "flows": [{"kind": "tcp", "count": 2}]})
>>> sorted(res.flows.columns)[:3]
['acks_sent', 'app_goodput_bps', 'class']
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import pandas as pd

from . import _native
from .exceptions import ScenarioError

__all__ = ["Result", "run", "validate", "load_scenario", "scenario_dict", "default_scenario_path", "seconds"]

ScenarioLike = str | os.PathLike | Mapping[str, Any]


def default_scenario_path() -> Path:
    """Path of the built-in default scenario (10 NewReno flows, 10 Mb/s RED dumbbell)."""
    from .library import builtin_path

    return builtin_path("default")


_INT_RANGE = (-(2**63), 2**64 - 1)  # what the core's 64-bit integer keys can hold
_SEED_MAX = 2**64 - 1
#: Deepest nesting of tables and lists a scenario may have. No key nests more than a few levels
#: (``queue.classes[0].tags[0]`` is 4); far deeper input ended in a RecursionError traceback.
MAX_NESTING = 32
_TOO_DEEP = (f"nested more than {MAX_NESTING} levels deep; no scenario key takes values nested "
             f"that deeply (the deepest, e.g. queue.classes[0].tags[0], are 4 levels)")


def _plain(value: Any, path: str, depth: int = 0) -> Any:
    """A deep copy of a scenario value with only JSON types: numpy scalars and arrays become
    Python numbers, bools and lists, tuples become lists, keys set to None are left out. Anything
    else, a NaN or infinity, or an integer that no key can hold, is a ScenarioError naming the key
    path."""
    if depth > MAX_NESTING and isinstance(value, (Mapping, list, tuple, np.ndarray)):
        raise ScenarioError(f"{path or 'scenario'}: {_TOO_DEEP}")
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise ScenarioError(f"{path or 'scenario'}: keys must be strings, got {k!r}")
            # null is "the default", as in `validate --show` output (TOML, having no null, omits the key).
            if v is not None:
                out[k] = _plain(v, f"{path}.{k}" if path else k, depth + 1)
        return out
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{path}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, np.generic):
        value = value.item()  # np.int64 → int, np.float64 → float, np.bool_ → bool, np.str_ → str
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if path == "run.seed" and not 0 <= value <= _SEED_MAX:
            raise ScenarioError(f"run.seed: must be an integer from 0 to {_SEED_MAX}, got {value}")
        if value > _INT_RANGE[1]:
            raise ScenarioError(f"{path}: {value} is too large; no key takes an integer above {_INT_RANGE[1]}")
        if value < _INT_RANGE[0]:
            raise ScenarioError(f"{path}: {value} is too small; no key takes an integer below {_INT_RANGE[0]}")
        return value
    if isinstance(value, float):
        # json.dumps would write NaN/Infinity, which the core's JSON reader rejects without the reason.
        if not math.isfinite(value):
            raise ScenarioError(f"{path}: {value} is not allowed; give a finite number")
        return value
    raise ScenarioError(f"{path}: {type(value).__name__} values are not allowed; use a string, number, bool, list or table")


def _read_text(path: Path) -> str:
    """The file's text; a ScenarioError naming the file (and the offset of a non-UTF-8 byte)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ScenarioError(f"{path}: no such scenario file") from None
    except OSError as e:
        raise ScenarioError(f"{path}: cannot read the scenario ({e.strerror})") from None
    try:
        # utf-8-sig: a byte-order mark (editors on Windows write one) is dropped, not a syntax error.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ScenarioError(f"{path}: not UTF-8 text: byte 0x{data[e.start]:02x} at offset {e.start} (line {line}) "
                            f"cannot be decoded; scenario files must be UTF-8") from None


class _JsonValueError(ValueError):
    """JSON that Python's parser accepts but the JSON standard (and a scenario) does not."""


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _JsonValueError(f"key {key!r} appears twice in one object; give each key once")
        seen[key] = value
    return seen


def _refuse_non_json_number(name: str) -> Any:
    raise _JsonValueError(f"{name} is not a JSON number; give a finite number")


def load_scenario(scenario: ScenarioLike, *, seed: int | None = None) -> tuple[str, str]:
    """Turns a path or a dict into (text, format) for the core, applying a seed override.

    A path ending in ``.json`` is read as JSON, any other as TOML. Raises ScenarioError for
    unreadable files, text that is not UTF-8, JSON syntax errors and values that are not JSON-like.
    """
    if isinstance(scenario, Mapping):
        data = _plain(scenario, "")
        if seed is not None:
            _set_seed(data, seed)
            data = _plain(data, "")
        return json.dumps(data), "json"
    path = Path(scenario)
    text = _read_text(path)
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text, object_pairs_hook=_refuse_duplicate_keys, parse_constant=_refuse_non_json_number)
        except json.JSONDecodeError as e:
            raise ScenarioError(f"{path}: not valid JSON: line {e.lineno} column {e.colno}: {e.msg}") from None
        except _JsonValueError as e:
            raise ScenarioError(f"{path}: not valid JSON: {e}") from None
        except RecursionError:
            raise ScenarioError(f"{path}: {_TOO_DEEP}") from None
        if not isinstance(data, dict):
            raise ScenarioError(f"{path}: a JSON scenario must be an object with the scenario's tables, got {type(data).__name__}")
        try:
            return load_scenario(data, seed=seed)
        except ScenarioError as e:
            raise ScenarioError(f"{path}: {e}") from None
    if seed is None:
        return text, "toml"
    data = _parse_toml(text, path)
    _set_seed(data, seed)
    return json.dumps(_plain(data, "")), "json"


def scenario_dict(scenario: ScenarioLike) -> dict[str, Any]:
    """The scenario as a plain dict (a deep copy of a dict; a TOML or JSON file parsed), not yet validated.

    Raises ScenarioError as :func:`load_scenario` does, and for TOML syntax errors.
    """
    text, fmt = load_scenario(scenario)
    data = json.loads(text) if fmt == "json" else _plain(_parse_toml(text, scenario), "")
    base = scenario_base_dir(scenario)
    if base is not None:
        # The dict outlives the file's location (sweeps, --set): anchor its relative file names.
        anchor_files(data, Path(base))
    return data


#: The bottleneck keys naming files (delivery traces), read relative to the scenario file.
TRACE_KEYS = ("trace", "reverse_trace")


def _named_files(data: Mapping[str, Any]) -> tuple[dict | None, list[str]]:
    """The bottleneck table of a scenario dict and which of its keys name files."""
    topology = data.get("topology")
    links = topology.get("bottleneck") if isinstance(topology, dict) else None
    if not isinstance(links, dict):
        return None, []
    return links, [k for k in TRACE_KEYS if isinstance(links.get(k), str)]


def anchor_files(data: dict[str, Any], base: Path) -> None:
    """Makes the relative file names in a scenario dict (a bottleneck ``trace``) relative to `base`."""
    links, keys = _named_files(data)
    for key in keys:
        if not Path(links[key]).is_absolute():
            links[key] = str(base / links[key])


def named_file_digests(data: Mapping[str, Any]) -> dict[str, str]:
    """SHA-256 of each readable file a scenario dict names, by key (what its results depend on
    besides the dict itself); unreadable ones are left to validation to report."""
    links, keys = _named_files(data)
    digests = {}
    for key in keys:
        try:
            digests[key] = hashlib.sha256(Path(links[key]).read_bytes()).hexdigest()
        except OSError:
            pass
    return digests


def scenario_base_dir(scenario: ScenarioLike) -> str | None:
    """The directory a scenario's relative file names (a bottleneck ``trace``) are read from: the
    scenario file's, or None (the working directory) for a dict."""
    if isinstance(scenario, Mapping):
        return None
    return str(Path(scenario).resolve().parent)


def _parse_toml(text: str, source: Any) -> dict[str, Any]:
    """TOML text as a dict; a syntax error is a ScenarioError naming `source`."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"{source}: not valid TOML: {e}") from None
    except RecursionError:
        raise ScenarioError(f"{source}: {_TOO_DEEP}") from None


def _set_seed(data: dict[str, Any], seed: int) -> None:
    run = data.setdefault("run", {})
    if isinstance(run, dict):  # otherwise the core reports `run`'s type
        run["seed"] = seed


@contextlib.contextmanager
def _naming_the_file(scenario: ScenarioLike) -> Iterator[None]:
    """Prefixes errors about a scenario file's content with the file's name."""
    try:
        yield
    except ScenarioError as e:
        if isinstance(scenario, Mapping) or str(e).startswith(str(scenario)):
            raise
        raise ScenarioError(f"{scenario}: {e}") from None


#: Memory and summary.json bytes per flow, measured with 100,000 flows on a 10 Mb/s link
#: (2026-12-07, ``/usr/bin/time -f %M``): TCP 3.1 kB of memory and 760 B of summary per flow,
#: UDP 2.0 kB and 520 B. A million TCP flows take about 3 GB and write a 760 MB summary.json.
FLOW_FOOTPRINT = {"tcp": (3_100, 760), "http": (3_100, 760), "other": (2_000, 520)}
#: From this estimated memory on, `aqmlab run` and `aqmlab validate` warn before running.
WARN_MEMORY_BYTES = 1_000_000_000


def footprint(filled: Mapping[str, Any]) -> dict[str, int]:
    """Rough size of a run of the validated scenario `filled` (:func:`validate`'s result): its flows,
    the memory they take (bytes) and the size of its summary.json (bytes), from :data:`FLOW_FOOTPRINT`.
    The fixed part (Python, the time series) is left out: this is what grows with the flow count."""
    flows = memory = summary = 0
    for group in filled.get("flows", []):
        n = int(group.get("count", 1))
        per_memory, per_summary = FLOW_FOOTPRINT.get(group.get("kind"), FLOW_FOOTPRINT["other"])
        flows += n
        memory += n * per_memory
        summary += n * per_summary
    return {"flows": flows, "memory_bytes": memory, "summary_bytes": summary}


def footprint_warning(filled: Mapping[str, Any]) -> str | None:
    """A one-line warning when the run is estimated to need :data:`WARN_MEMORY_BYTES` or more, else None."""
    f = footprint(filled)
    if f["memory_bytes"] < WARN_MEMORY_BYTES:
        return None
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        of = f" (this machine has {physical / 1e9:.0f} GB)"
    except (ValueError, OSError, AttributeError):
        of = ""
    return (f"{f['flows']:,} flows: this run needs about {f['memory_bytes'] / 1e9:.1f} GB of memory{of} and writes "
            f"a summary.json of about {f['summary_bytes'] / 1e6:,.0f} MB (per-flow results); "
            f"use fewer flows unless you mean it (docs/scenarios.md, [[flows]] count)")


def seconds(echoed: str) -> float:
    """Seconds of a duration as echoed by :func:`validate` (``"60s"``, ``"200ms"``, ``"3us"``, ``"5ns"``).

    >>> seconds("200ms")
    0.2
    """
    for unit, scale in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3), ("s", 1.0)):
        if echoed.endswith(unit):
            return float(echoed.removesuffix(unit)) * scale
    raise ValueError(f"not an echoed duration: {echoed!r}")


def validate(scenario: ScenarioLike) -> dict[str, Any]:
    """Validates a scenario and returns it with every default filled in.

    Raises
    ------
    ScenarioError
        naming the key path (and line) and what is allowed.
    """
    text, fmt = load_scenario(scenario)
    with _naming_the_file(scenario):
        return json.loads(_native.validate(text, fmt, scenario_base_dir(scenario)))


@dataclass
class Result:
    """What a run produced.

    Attributes
    ----------
    summary : dict
        The ``summary.json`` document.
    flows : pandas.DataFrame
        One row per flow (goodput_bps, drops, delay percentiles, ...).
    queues : pandas.DataFrame
        One row per bottleneck queue (forward ``bottleneck``, ``reverse``).
    timeseries : pandas.DataFrame
        Sampled every ``output.bin``: queue length/average, ``flow_estimate`` when the bottleneck
        counts flows (FPQ, ``output.flow_counter``), ``max_p`` with Adaptive RED, ``capacity_bps`` /
        ``reverse_capacity_bps`` (what the bottleneck offered in the bin) when a ``rate_schedule`` or
        trace varies it and, when ``output.per_flow_timeseries`` is on,
        per flow ``flow<i>_goodput_bps``, ``flow<i>_offered_bps`` (wire bits/s of the flow's data
        arriving at its bottleneck queue, dropped packets included) and ``flow<i>_drops`` (packets
        dropped or lost in the bin) and, for MPEG flows only,
        ``flow<i>_actual_fps`` and ``flow<i>_playable_fps`` (frames complete / becoming playable at the
        receiver in the bin; docs/results.md); when ``output.per_flow_tcp_state`` is on, per TCP flow
        ``flow<i>_cwnd_segments`` (congestion window averaged over the bin) and ``flow<i>_srtt_s``
        (smoothed RTT at the bin's end, NaN before the first RTT sample); with BMRE, ``bmre_mode``,
        ``bmre_target_q_bytes``, ``bmre_vmax_q_bytes``, ``bmre_fair_drops``, ``bmre_recycled``,
        ``bmre_expired`` and, with per-flow series, ``flow<i>_qdisc_beta`` and
        ``flow<i>_qdisc_rate_bps`` (β and estimated rate, NaN without state); ``class<t>_delay_s`` is the
        mean one-way delay of the data packets of class tag ``t`` delivered in the bin (NaN when none).
    transfers : pandas.DataFrame
        One row per completed transfer of flows with ``size_dist`` or ``repeat`` that started
        after the warm-up: ``flow``, ``start_s``, ``end_s``, ``segments``, ``timeouts`` and
        ``delay_s``. Transfers still in progress at the end are not included.
    packet_delays : pandas.DataFrame
        With ``output.packet_delays = [tags]``: one row per data packet of those class tags
        delivered after the warm-up, in delivery order: ``time_s`` (arrival), ``flow``, ``class``
        and ``delay_s`` (one-way, send to arrival). Empty otherwise.
    """

    summary: dict[str, Any]
    timeseries: pd.DataFrame
    transfers: pd.DataFrame = field(default_factory=pd.DataFrame)
    packet_delays: pd.DataFrame = field(default_factory=pd.DataFrame)
    flows: pd.DataFrame = field(init=False)
    queues: pd.DataFrame = field(init=False)

    def __post_init__(self) -> None:
        self.flows = pd.DataFrame(self.summary["flows"])
        # A column that is null for every flow (no flow delivered, no finite transfer) would be an
        # object column of None; as NaN it stays numeric like the same column with some values.
        empty = self.flows.columns[self.flows.isna().all()] if len(self.flows) else []
        self.flows[empty] = self.flows[empty].astype(float)
        self.queues = pd.DataFrame(self.summary["queues"])

    @property
    def wall_seconds(self) -> float:
        """Wall-clock time of the simulation."""
        return float(self.summary["wall_seconds"])

    @property
    def aggregate(self) -> dict[str, Any]:
        """Aggregate goodput and Jain's fairness index."""
        return self.summary["aggregate"]


def _transfers(series: dict[str, Any]) -> pd.DataFrame:
    df = pd.DataFrame(series["transfers"])
    df["delay_s"] = df["end_s"] - df["start_s"]
    return df


def _result(summary: str, series: dict[str, Any], input_sha256: Mapping[str, str] | None = None) -> Result:
    doc = json.loads(summary)
    if input_sha256:
        # The echo names trace files, not their content: the digests tie the results to the bytes.
        doc["input_sha256"] = dict(input_sha256)
    return Result(doc, _frame(series), _transfers(series), pd.DataFrame(series["packet_delays"]))


def _frame(series: dict[str, Any]) -> pd.DataFrame:
    cols = {k: series[k] for k in ("time_s", "queue_pkts", "queue_bytes", "queue_avg", "reverse_queue_pkts")}
    if series["flow_estimate"]:
        cols["flow_estimate"] = series["flow_estimate"]
    if series.get("max_p"):  # Adaptive RED (docs/ared.md)
        cols["max_p"] = series["max_p"]
    for key in ("capacity_bps", "reverse_capacity_bps"):  # rate_schedule, trace (docs/scenarios.md)
        if series.get(key):
            cols[key] = series[key]
    for key in ("white_r_average_ms", "white_r_formula_ms"):
        if series[key]:
            cols[key] = series[key]
    for name, values in series.get("bmre", []):  # BMRE internals (docs/bmre.md)
        cols[name] = values
    for tag, values in series["class_delay_s"]:
        cols[f"class{tag}_delay_s"] = values
    for name, values in series["class_len_pkts"]:
        cols[f"class_{name}_pkts"] = values
    for name, values in series["class_average"]:
        cols[f"class_{name}_avg"] = values
    df = pd.DataFrame(cols)
    # Per-flow columns (thousands with HTTP): one 2-D block instead of a dict of lists.
    names: list[str] = []
    rows: list[list[float]] = []
    for key in ("goodput_bps", "offered_bps", "drops", "qdisc_beta", "qdisc_rate_bps"):
        for i, v in enumerate(series.get(f"flow_{key}", [])):
            names.append(f"flow{i}_{key}")
            rows.append(v)
    for key in ("actual_fps", "playable_fps", "cwnd_segments", "srtt_s"):
        for i, v in series[f"flow_{key}"]:
            names.append(f"flow{i}_{key}")
            rows.append(v)
    if names:
        block = np.array(rows, dtype=float).reshape(len(names), len(df)).T
        df = pd.concat([df, pd.DataFrame(block, columns=names, index=df.index)], axis=1)
    return df


def run(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    out: str | os.PathLike | None = None,
    pcap: bool = False,
    plot: bool = True,
    progress: Callable[[float], None] | None = None,
) -> Result:
    """Runs a scenario.

    Parameters
    ----------
    scenario : path or dict
        A TOML file (a ``.json`` file is read as JSON), or a dict with the same keys; numpy
        scalars and arrays in a dict are taken as the numbers and lists they hold.
    seed : int, optional
        Overrides ``run.seed``.
    out : path, optional
        Writes the results directory (see :func:`aqmlab.output.write_results`).
    pcap : bool
        With ``out``, also capture the forward bottleneck to ``bottleneck.pcap``.
    plot : bool
        With ``out``, also draw ``plot.png``.
    progress : callable, optional
        Called with the simulated time in seconds about every 0.2 s of wall time.

    Examples
    --------
    >>> import aqmlab
    >>> r = aqmlab.run({"run": {"duration": "20s", "warmup": "5s", "seed": 2},
    ...                 "topology": {"bottleneck": {"rate": "5Mbps", "delay": "5ms"}},
    ...                 "queue": {"kind": "red", "min_th": 5, "max_th": 15},
    ...                 "flows": [{"kind": "tcp", "count": 3, "start_jitter": "1s"}]})
    >>> bool(0.9 < r.aggregate["goodput_bps"] / 5e6 < 1.0)   # payload share of the link after warm-up
    True
    """
    validate(scenario)  # on the text as written (line numbers), before anything is created in `out`
    text, fmt = load_scenario(scenario, seed=seed)
    digests = named_file_digests(scenario_dict(scenario))
    if out is None:
        summary, series = _native.run_scenario(text, fmt, None, progress, scenario_base_dir(scenario))
        return _result(summary, series, digests)
    from .output import staged_results_dir

    with staged_results_dir(out) as tmp:
        pcap_path = str(tmp / "bottleneck.pcap") if pcap else None
        summary, series = _native.run_scenario(text, fmt, pcap_path, progress, scenario_base_dir(scenario))
        result = _result(summary, series, digests)
        from .output import write_results

        write_results(result, tmp, plot=plot)
    return result
