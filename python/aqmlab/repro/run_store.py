"""Finished runs of a reproduction kept on disk, so an interrupted `aqmlab repro` resumes.

A full reproduction is hundreds of runs (WHITE's takes 39 min on 2 cores); without a store, Ctrl-C,
a lost SSH session or a crash in the analysis after the last run throws all of them away. While a
store is active (:func:`resumable`), :func:`aqmlab.repro.common.run_jobs` saves what each job's
extractor returned as soon as the run ends, and a later reproduction into the same directory takes
it back instead of simulating again. A run's entry is keyed by

* the scenario as canonical JSON (sorted keys) and the digests of the files it names,
* the extractor: its qualified name and the plain values its closure captured (numbers, strings,
  tuples, dataclasses of them, other such functions), and
* the build (:func:`aqmlab.build.fingerprint`: the Rust sources the native library was built from
  and every Python source of the package),

so an entry is reused only by the same code asking the same question about the same run, and the
report is byte-identical to one computed from scratch (a run is deterministic given its scenario
and seed). An extractor capturing anything else (an array, a DataFrame: its repr does not identify
it) is not stored and runs each time. When the reproduction finishes, the entries it used are
removed from the store (``<out>/.runs/``), and the store with them unless entries of another
reproduction into the same directory remain (a full one interrupted, then a --quick one run to
completion, keeps the full one's); when it stops early, everything is kept.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import json
import os
import pickle
import shutil
import types
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from .. import api
from ..build import fingerprint

__all__ = ["RunStore", "resumable", "active_store", "STORE_DIR"]

#: The store's directory inside a reproduction's output directory.
STORE_DIR = ".runs"

_ACTIVE: ContextVar["RunStore | None"] = ContextVar("aqmlab_run_store", default=None)

_PLAIN = (type(None), bool, int, float, complex, str, bytes)


class _NotPlain(Exception):
    """A captured value whose text does not identify it: the extractor cannot be keyed."""


def _identity(value: Any, depth: int = 0) -> Any:
    """A JSON-able description that identifies `value`, or _NotPlain."""
    if depth > 20:
        raise _NotPlain("nested too deeply")
    if isinstance(value, _PLAIN) or value is Ellipsis:
        return [type(value).__name__, repr(value)]
    if isinstance(value, enum.Enum):
        return ["enum", f"{type(value).__module__}.{type(value).__qualname__}.{value.name}"]
    if isinstance(value, (tuple, list, frozenset, set)):
        items = [_identity(v, depth + 1) for v in value]
        if isinstance(value, (set, frozenset)):
            items.sort(key=json.dumps)
        return [type(value).__name__, items]
    if isinstance(value, dict):
        items = [[_identity(k, depth + 1), _identity(v, depth + 1)] for k, v in value.items()]
        return ["dict", sorted(items, key=json.dumps)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [[f.name, _identity(getattr(value, f.name), depth + 1)] for f in dataclasses.fields(value)]
        return ["dataclass", f"{type(value).__module__}.{type(value).__qualname__}", fields]
    if isinstance(value, functools.partial):
        return ["partial", _identity(value.func, depth + 1), _identity(value.args, depth + 1),
                _identity(value.keywords, depth + 1)]
    if isinstance(value, types.FunctionType):
        return _function_identity(value, depth + 1)
    if isinstance(value, (type, types.BuiltinFunctionType)):
        return ["named", f"{value.__module__}.{value.__qualname__}"]
    raise _NotPlain(type(value).__name__)


def _function_identity(fn: types.FunctionType, depth: int) -> Any:
    captured = [_identity(cell.cell_contents, depth) for cell in (fn.__closure__ or ())]
    return ["function", f"{fn.__module__}.{fn.__qualname__}", _code_identity(fn.__code__), captured,
            _identity(fn.__defaults__, depth), _identity(fn.__kwdefaults__, depth)]


def _code_identity(code: types.CodeType) -> Any:
    """The bytecode, names and constants: a function from outside the package (whose sources the
    build fingerprint does not cover) is a new key when it is edited."""
    consts = [_code_identity(c) if isinstance(c, types.CodeType) else _identity(c) for c in code.co_consts]
    return [code.co_code.hex(), list(code.co_names), consts]


def _scenario_identity(scenario: dict[str, Any]) -> str:
    data = api._plain(scenario, "")
    files = api.named_file_digests(data)
    return json.dumps({"scenario": data, "files": files}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass
class RunStore:
    """A directory of finished jobs' extracted rows, one pickle per job (written whole, then renamed)."""

    root: Path
    #: Jobs taken from entries an earlier, interrupted reproduction left.
    reused: int = 0
    #: Jobs that repeat one this reproduction already ran (the same entry).
    shared: int = 0
    #: Jobs simulated.
    computed: int = 0
    _earlier: frozenset[str] = field(init=False)
    #: Entries this reproduction read or wrote: what it removes when it completes.
    _used: set[str] = field(init=False, default_factory=set)

    def __post_init__(self) -> None:
        self._earlier = frozenset(p.stem for p in self.root.glob("*.pkl"))

    def others(self) -> int:
        """Entries this reproduction did not use (another reproduction's into the same directory, e.g.
        a full one interrupted before a --quick one, or another build's)."""
        return sum(p.stem not in self._used for p in self.root.glob("*.pkl"))

    def finish(self) -> None:
        """Removes the entries this reproduction used, and the store when nothing else is left in it."""
        for key in self._used:
            (self.root / f"{key}.pkl").unlink(missing_ok=True)
        if self.root.is_dir() and not self.others():
            shutil.rmtree(self.root, ignore_errors=True)

    def key(self, scenario: dict[str, Any], extract: Callable) -> str | None:
        """The entry's file stem, or None when the extractor cannot be identified (then it is not stored)."""
        try:
            who = json.dumps(_identity(extract), separators=(",", ":"))
        except _NotPlain:
            return None
        h = hashlib.sha256()
        for part in (fingerprint(), who, _scenario_identity(scenario)):
            h.update(part.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()

    def load(self, key: str | None) -> dict[str, Any] | None:
        """The stored row, or None when there is none or it cannot be read (it is then recomputed)."""
        if key is None:
            return None
        try:
            with open(self.root / f"{key}.pkl", "rb") as f:
                row = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError, ValueError, TypeError):
            return None
        if not isinstance(row, dict):
            return None
        self._used.add(key)
        if key in self._earlier:
            self.reused += 1
        else:
            self.shared += 1
        return row

    def save(self, key: str | None, row: dict[str, Any]) -> None:
        """Stores a row; a row that cannot be pickled is left out (the job reruns next time)."""
        if key is None:
            return
        try:
            data = pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, TypeError, AttributeError):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        self._used.add(key)
        tmp = self.root / f".{key}.{os.getpid()}.{id(row)}.tmp"
        tmp.write_bytes(data)
        os.replace(tmp, self.root / f"{key}.pkl")


def active_store() -> RunStore | None:
    """The store of the reproduction running in this context, if any."""
    return _ACTIVE.get()


@contextmanager
def resumable(out: Path, *, fresh: bool = False) -> Iterator[RunStore]:
    """Keeps the finished runs of the jobs run inside the block in ``out/.runs``, reusing those an
    earlier, interrupted reproduction into ``out`` left there (all of them discarded first with
    `fresh`). When the block ends normally the entries it used are removed (and the store, unless
    another reproduction's entries remain); when it raises, everything is kept."""
    store = RunStore(Path(out) / STORE_DIR)
    if fresh and store.root.exists():
        shutil.rmtree(store.root)
        store = RunStore(store.root)
    token = _ACTIVE.set(store)
    try:
        yield store
    finally:
        _ACTIVE.reset(token)
    store.finish()
