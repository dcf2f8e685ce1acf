"""Machinery every thesis reproduction shares: running many scenarios in parallel, claims with
verdicts, and the markdown report.

Runs go to a thread pool: the native simulator releases the GIL for the whole run, so threads give
one core per run without pickling scenarios or results between processes.
"""

from __future__ import annotations

import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from tqdm import tqdm

from .. import api

__all__ = ["Claim", "Job", "run_jobs", "claims_table", "claim_notes", "frame_table", "fmt", "save_figure"]


@dataclass(frozen=True)
class Job:
    """One simulation: a scenario dict plus labels identifying it in the results."""

    scenario: dict[str, Any]
    labels: dict[str, Any]


def run_jobs(jobs: list[Job], extract: Callable[[api.Result], dict[str, Any]], *, workers: int | None = None,
             desc: str = "runs", quiet: bool = False) -> list[dict[str, Any]]:
    """Runs every job (in parallel over `workers` threads, default: all cores) and returns, in job
    order, `labels | extract(result) | {"wall_s": ...}` per job."""
    workers = workers or os.cpu_count() or 1

    def one(job: Job) -> dict[str, Any]:
        res = api.run(job.scenario)
        return {**job.labels, **extract(res), "wall_s": res.wall_seconds}

    with ThreadPoolExecutor(max_workers=workers) as pool:
        it = pool.map(one, jobs)
        return list(tqdm(it, total=len(jobs), desc=desc, unit="run", disable=quiet, leave=False))


@dataclass
class Claim:
    """One statement of a thesis and what we measured for it.

    `holds` is True, False, or None when the comparison is only shown (no pass/fail criterion
    can be stated honestly, e.g. a figure whose data the thesis does not give).
    """

    ident: str
    source: str
    statement: str
    thesis: str
    ours: str
    holds: bool | None
    why: str = ""
    #: Investigation, shown below the table (required in spirit for every claim that does not hold).
    note: str = ""

    def __post_init__(self) -> None:
        # Criteria are often numpy comparisons; a numpy bool is neither `True` nor `False` to `is`,
        # which the reports' counts use.
        if self.holds is not None:
            self.holds = bool(self.holds)

    @property
    def verdict(self) -> str:
        return {True: "holds", False: "does not hold", None: "shown"}[self.holds]


def save_figure(fig, out: Path, name: str, dpi: int = 100) -> str:
    """Writes a matplotlib figure to `out/name` (tight layout), closes it and returns `name`."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(out / name, dpi=dpi)
    plt.close(fig)
    return name


def claims_table(claims: Iterable[Claim]) -> str:
    """The claims as a markdown table."""
    rows = ["| # | source | claim | thesis | ours | verdict | why |", "|---|---|---|---|---|---|---|"]
    for c in claims:
        cells = [c.ident, c.source, c.statement, c.thesis, c.ours, f"**{c.verdict}**", c.why]
        rows.append("| " + " | ".join(x.replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    return "\n".join(rows)


def claim_notes(claims: Iterable[Claim]) -> str:
    """The investigation notes of the claims that have one, as a markdown list; a note shared with an
    earlier claim is written once and referred to."""
    first: dict[str, str] = {}
    lines = []
    for c in claims:
        if not c.note:
            continue
        if c.note in first:
            lines.append(f"* **{c.ident}** ({c.verdict}): as {first[c.note]}.")
        else:
            first[c.note] = c.ident
            lines.append(f"* **{c.ident}** ({c.verdict}): {c.note}")
    return "\n".join(lines)


def frame_table(df) -> str:
    """A data frame as a markdown table, numbers with 4 significant digits."""
    cells = [[fmt(v, 4) if isinstance(v, float) else str(v) for v in row] for row in df.itertuples(index=False)]
    head = "| " + " | ".join(map(str, df.columns)) + " |"
    rule = "|" + "---|" * len(df.columns)
    return "\n".join([head, rule] + ["| " + " | ".join(r) + " |" for r in cells])


def fmt(x: float, digits: int = 3) -> str:
    """A number with `digits` significant digits, or '–' for NaN/None."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}g}"


@dataclass
class Timer:
    """Wall time of a reproduction."""

    started: float = field(default_factory=time.perf_counter)

    def minutes(self) -> float:
        return (time.perf_counter() - self.started) / 60


def ensure_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
