"""The results directory (DESIGN §4): ``summary.json``, ``timeseries.parquet``, ``flows.csv``,
``plot.png`` and optionally ``bottleneck.pcap``.

Files are written into a hidden staging directory next to the target (``.<name>.partial-<pid>-…``)
that is renamed to the target only when every file is complete; an earlier run's results are
replaced only then. A failed or interrupted run leaves the target as it was, and staging
directories of crashed runs are removed by the next run to the same target.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Iterator

import orjson

from .exceptions import SimulationError

if TYPE_CHECKING:
    from .api import Result

__all__ = ["check_output_dir", "staged_results_dir", "write_indented_json", "write_results", "RESULT_FILES"]

RESULT_FILES = ("summary.json", "timeseries.parquet", "flows.csv", "transfers.csv", "packet_delays.parquet", "plot.png",
                "bottleneck.pcap")


def _partial_prefix(out: Path) -> str:
    return f".{out.name}.partial-"


def _old_prefix(out: Path) -> str:
    return f".{out.name}.old-"


def _pid_alive(name: str, prefix: str) -> bool:
    """Whether the process that made staging directory ``name`` (``<prefix><pid>-<random>``) runs."""
    try:
        pid = int(name[len(prefix):].split("-", 1)[0])
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _clean_stale(out: Path) -> None:
    """Removes staging directories that crashed runs left next to ``out``. A crash between moving
    the old results aside and moving the new ones in leaves ``.old-``: put it back."""
    parent = out.parent
    for entry in sorted(parent.iterdir()) if parent.is_dir() else []:
        for prefix in (_partial_prefix(out), _old_prefix(out)):
            if entry.name.startswith(prefix) and entry.is_dir() and not _pid_alive(entry.name, prefix):
                if prefix == _old_prefix(out) and not out.exists():
                    os.replace(entry, out)
                else:
                    shutil.rmtree(entry, ignore_errors=True)


#: Bytes the hidden staging directory beside the target adds to its name:
#: ``.<name>.partial-<pid>-<8 random>`` (the ``.old-`` one is shorter).
STAGING_NAME_EXTRA = len(".") + len(".partial-") + 10 + len("-") + 8


def _refuse_long_names(out: Path) -> None:
    """Refuses a path with a name longer than the filesystem takes (a 300-character --out was an
    OSError traceback), counting for the last name the staging directory's additions."""
    probe = Path(os.path.abspath(out))
    while not os.path.isdir(probe) and probe.parent != probe:  # os.path: a too-long name is just "no"
        probe = probe.parent
    try:
        name_max = os.pathconf(probe, "PC_NAME_MAX")
    except (OSError, ValueError):
        name_max = 255
    parts = out.parts
    for i, part in enumerate(parts):
        size = len(os.fsencode(part))
        limit = name_max - STAGING_NAME_EXTRA if i == len(parts) - 1 else name_max
        if size > limit:
            shown = part if len(part) <= 24 else f"{part[:12]}...{part[-8:]}"
            what = (f"at most {limit} bytes are allowed for the results directory's own name (the filesystem "
                    f"takes {name_max}; its staging directory adds {STAGING_NAME_EXTRA})"
                    if i == len(parts) - 1 else f"the filesystem takes names of at most {name_max} bytes")
            raise SimulationError(f"--out: the name {shown} is {size} bytes long; {what}")


def refuse_unsafe_location(out_arg: str | os.PathLike, example: str = "results/my") -> Path:
    """Refuses an output directory named empty, not in UTF-8, the filesystem root, or the current
    directory or one of its parents (every command that writes results checks this first)."""
    if os.fspath(out_arg).strip() == "":
        raise SimulationError(f"--out '': the results directory must not be empty; give a directory such as {example}")
    try:
        os.fspath(out_arg).encode("utf-8")
    except UnicodeEncodeError:
        # pyarrow (and most tools reading the results) take UTF-8 paths only; the bytes that are
        # not UTF-8 arrive as surrogate escapes.
        shown = os.fsencode(out_arg).decode("utf-8", "backslashreplace")  # the bytes as written: \xe9
        raise SimulationError(f"--out {shown}: the path is not valid UTF-8; results directories must have "
                              f"UTF-8 names") from None
    out = Path(out_arg)
    _refuse_long_names(out)
    resolved = out.resolve()
    if resolved.parent == resolved:
        raise SimulationError(f"--out {out}: is the filesystem root; give a directory below it, such as {example}")
    if resolved == Path.cwd().resolve() or resolved in Path.cwd().resolve().parents:
        raise SimulationError(f"--out {out}: is the current directory or one of its parents, which results would "
                              f"fill or replace; give a new or results directory, such as {example}")
    return out


def _check_target(out_arg: str | os.PathLike) -> Path:
    """Refuses an output directory that cannot be (atomically) replaced by results; returns its parent."""
    out = refuse_unsafe_location(out_arg)
    resolved = out.resolve()
    if out.exists() and not out.is_dir():
        raise SimulationError(f"--out {out}: exists and is not a directory")
    if out.is_dir():
        foreign = sorted(p.name for p in out.iterdir() if p.name not in RESULT_FILES)
        if foreign:
            raise SimulationError(f"--out {out}: exists and holds files that are not aqmlab results "
                                  f"({', '.join(foreign[:3])}{', ...' if len(foreign) > 3 else ''}), which would be "
                                  f"replaced; give a new directory or an earlier run's results directory")
    probe = out if out.exists() else resolved.parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise SimulationError(f"--out {out}: directory is not writable")
    return resolved.parent


def check_output_dir(out: str | os.PathLike) -> None:
    """Raises SimulationError if ``out`` cannot take a results directory (before running)."""
    _check_target(out)


@contextlib.contextmanager
def staged_results_dir(out: str | os.PathLike) -> Iterator[Path]:
    """Yields an empty staging directory next to ``out``; once the block completes, the staging
    directory becomes ``out`` by a rename, replacing an earlier run's results only then. ``out``
    is never a mix of old and new files: it is the old results until the new are complete
    (between the two renames of a replacement it is briefly absent). Staging directories left by
    crashed runs are removed first."""
    parent = _check_target(out)
    out = Path(out)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _clean_stale(out)
        tmp = Path(tempfile.mkdtemp(prefix=f"{_partial_prefix(out)}{os.getpid()}-", dir=parent))
    except OSError as e:
        raise SimulationError(f"--out {out}: cannot create the results directory ({e.strerror})") from None
    try:
        yield tmp
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; a results directory is an ordinary one
        try:
            if out.is_dir():
                old = Path(tempfile.mkdtemp(prefix=f"{_old_prefix(out)}{os.getpid()}-", dir=parent))
                os.replace(out, old)  # onto the empty directory just made: atomic on POSIX
                try:
                    os.replace(tmp, out)
                except OSError:
                    os.replace(old, out)  # put the earlier results back
                    raise
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, out)
        except OSError as e:
            raise SimulationError(f"--out {out}: cannot write the results ({e.strerror})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_indented_json(doc: dict[str, Any], f: BinaryIO) -> None:
    """Writes ``doc`` as JSON indented by two spaces, one top-level list item at a time.

    orjson, not the standard library: with indentation `json` falls back to its pure-Python encoder,
    which took 5.5 of a 100,000-flow run's 18 s (orjson: 0.3 s). Item by item, so a million flows'
    summary (about 800 MB of text) is never one buffer. The bytes are ``orjson.dumps(doc,
    option=OPT_INDENT_2)``'s, with floats in its shortest form (0.000012774, not 1.2774e-05).
    """
    f.write(b"{")
    for i, (key, value) in enumerate(doc.items()):
        f.write((b",\n  " if i else b"\n  ") + orjson.dumps(key) + b": ")
        if isinstance(value, list) and value:
            f.write(b"[")
            for j, item in enumerate(value):
                f.write((b",\n    " if j else b"\n    ") + _indented(item, b"\n    "))
            f.write(b"\n  ]")
        else:
            f.write(_indented(value, b"\n  "))
    f.write(b"\n}\n" if doc else b"}\n")


def _indented(value: Any, newline: bytes) -> bytes:
    """``value`` as indented JSON whose lines after the first start with ``newline``'s indent."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).replace(b"\n", newline)


def write_results(result: "Result", directory: Path, *, plot: bool = True) -> None:
    """Writes a result's files into ``directory``."""
    directory = Path(directory)
    with open(directory / "summary.json", "wb") as f:
        write_indented_json(result.summary, f)
    result.timeseries.to_parquet(directory / "timeseries.parquet", index=False)
    result.flows.to_csv(directory / "flows.csv", index=False)
    if len(result.transfers):
        result.transfers.to_csv(directory / "transfers.csv", index=False)
    if len(result.packet_delays):
        result.packet_delays.to_parquet(directory / "packet_delays.parquet", index=False)
    if plot:
        from .plots import plot_run

        plot_run(result, directory / "plot.png")
