"""The results directory (DESIGN §4): ``summary.json``, ``timeseries.parquet``, ``flows.csv``,
``plot.png`` and optionally ``bottleneck.pcap``.

Files are written into a hidden staging directory next to the target and moved into place
only when every file is complete, so a failed or interrupted run leaves nothing half-written.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from .exceptions import SimulationError

if TYPE_CHECKING:
    from .api import Result

__all__ = ["staged_results_dir", "write_results", "RESULT_FILES"]

RESULT_FILES = ("summary.json", "timeseries.parquet", "flows.csv", "transfers.csv", "plot.png", "bottleneck.pcap")


def _check_writable(out: Path) -> Path:
    parent = out.resolve().parent
    if out.exists() and not out.is_dir():
        raise SimulationError(f"--out {out}: exists and is not a directory")
    probe = out if out.exists() else parent
    while not probe.exists():
        probe = probe.parent
    if not os.access(probe, os.W_OK | os.X_OK):
        raise SimulationError(f"--out {out}: directory is not writable")
    return parent


@contextlib.contextmanager
def staged_results_dir(out: str | os.PathLike) -> Iterator[Path]:
    """Yields a staging directory; on success its files replace those in ``out``."""
    out = Path(out)
    parent = _check_writable(out)
    try:
        parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=parent))
    except OSError as e:
        raise SimulationError(f"--out {out}: cannot create the results directory ({e.strerror})") from None
    try:
        yield tmp
        try:
            out.mkdir(parents=True, exist_ok=True)
            for name in RESULT_FILES:  # stale files of an earlier run would mislead
                (out / name).unlink(missing_ok=True)
            for f in tmp.iterdir():
                os.replace(f, out / f.name)
        except OSError as e:
            raise SimulationError(f"--out {out}: cannot write the results ({e.strerror})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_results(result: "Result", directory: Path, *, plot: bool = True) -> None:
    """Writes a result's files into ``directory``."""
    directory = Path(directory)
    with open(directory / "summary.json", "w") as f:
        json.dump(result.summary, f, indent=2, sort_keys=False)
        f.write("\n")
    result.timeseries.to_parquet(directory / "timeseries.parquet", index=False)
    result.flows.to_csv(directory / "flows.csv", index=False)
    if len(result.transfers):
        result.transfers.to_csv(directory / "transfers.csv", index=False)
    if plot:
        from .plots import plot_run

        plot_run(result, directory / "plot.png")
