"""Machinery every thesis reproduction shares: running many scenarios in parallel, claims with
verdicts, and the markdown report.

Runs go to a thread pool: the native simulator releases the GIL for the whole run, so threads give
one core per run without pickling scenarios or results between processes.
"""

from __future__ import annotations

import copy
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from tqdm import tqdm

from .. import api
from .run_store import active_store

__all__ = ["Claim", "Job", "SeedMean", "run_jobs", "claims_table", "claim_notes", "frame_table", "fmt", "save_figure",
           "tally", "wall_time", "clearly_greater", "all_of", "judged", "single_seed_caveat"]


@dataclass(frozen=True)
class Job:
    """One simulation: a scenario dict plus labels identifying it in the results."""

    scenario: dict[str, Any]
    labels: dict[str, Any]


def run_jobs(jobs: list[Job], extract: Callable[[api.Result], dict[str, Any]], *, workers: int | None = None,
             desc: str = "runs", quiet: bool = False) -> list[dict[str, Any]]:
    """Runs every job (in parallel over `workers` threads, default: all cores) and returns, in job
    order, `labels | extract(result)` per job. Inside :func:`run_store.resumable`,
    jobs an interrupted earlier reproduction finished are taken from its store, and a job asking what
    an earlier one asked (the same scenario and extractor) is not run again."""
    workers = workers or os.cpu_count() or 1
    store = active_store()
    keys = [store.key(job.scenario, extract) if store else None for job in jobs]
    rows = [store.load(k) if store else None for k in keys]
    # One simulation per distinct entry: a reproduction may ask the same question of the same run twice.
    first: dict[str, int] = {}
    todo = []
    for i, (key, row) in enumerate(zip(keys, rows)):
        if row is None and (key is None or key not in first):
            first.setdefault(key, i)
            todo.append(i)

    def one(i: int) -> dict[str, Any]:
        res = api.run(jobs[i].scenario)
        # No wall time in the row: a reproduction's tables must be byte-identical on a rerun.
        row = extract(res)
        if store:
            store.save(keys[i], row)
        return row

    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        with tqdm(total=len(jobs), initial=len(jobs) - len(todo), desc=desc, unit="run", disable=quiet,
                  leave=False) as bar:
            for i, row in zip(todo, pool.map(one, todo)):
                rows[i] = row
                bar.update()
                if store:
                    store.computed += 1
    finally:
        # On Ctrl-C or a failed job, runs not yet started are dropped (those running finish and are stored).
        pool.shutdown(wait=True, cancel_futures=True)
    for i, key in enumerate(keys):
        if rows[i] is None:  # a repeat of a job computed above
            rows[i] = copy.deepcopy(rows[first[key]])
            store.shared += 1
    return [{**job.labels, **row} for job, row in zip(jobs, rows)]


@dataclass
class Claim:
    """One statement of a thesis and what we measured for it.

    `holds` is True, False, or None when the comparison is only shown (no pass/fail criterion
    can be stated honestly, e.g. a figure whose data the thesis does not give) or when the criterion
    is stated but the measured difference is within the seeds' noise (`within_noise`).
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
    #: The criterion compares quantities whose difference is smaller than their seed noise
    #: (`clearly_greater` returned None): neither verdict can be given, so `holds` is None.
    within_noise: bool = False

    def __post_init__(self) -> None:
        # Criteria are often numpy comparisons; a numpy bool is neither `True` nor `False` to `is`,
        # which the reports' counts use.
        if self.holds is not None:
            self.holds = bool(self.holds)
        if self.within_noise and self.holds is not None:
            raise ValueError(f"claim {self.ident}: a claim within the noise has no verdict (holds must be None)")

    @property
    def verdict(self) -> str:
        if self.within_noise:
            return "within noise"
        return {True: "holds", False: "does not hold", None: "shown"}[self.holds]


def tally(claims: Iterable[Claim]) -> str:
    """The verdict counts for a report's header, e.g. '5 of 25 claims hold, 18 do not, 1 within
    noise, 1 shown only'."""
    cl = list(claims)
    held = sum(c.holds is True for c in cl)
    failed = sum(c.holds is False for c in cl)
    noise = sum(c.within_noise for c in cl)
    shown = len(cl) - held - failed - noise
    parts = [f"{held} of {len(cl)} claims hold", f"{failed} do not"]
    if noise:
        parts.append(f"{noise} within noise")
    if shown:
        parts.append(f"{shown} shown only")
    return ", ".join(parts)


@dataclass(frozen=True)
class SeedMean:
    """A quantity measured once per seed: its mean and the standard error of that mean."""

    mean: float
    se: float
    n: int

    @classmethod
    def of(cls, values: Iterable[float]) -> "SeedMean":
        v = [float(x) for x in values]
        if not v:
            raise ValueError("SeedMean of no values")
        m = sum(v) / len(v)
        if len(v) < 2:
            return cls(m, math.nan, len(v))
        var = sum((x - m) ** 2 for x in v) / (len(v) - 1)
        return cls(m, math.sqrt(var / len(v)), len(v))

    def __str__(self) -> str:
        return fmt(self.mean) if math.isnan(self.se) else f"{fmt(self.mean)} ± {fmt(self.se, 2)}"


def clearly_greater(a: SeedMean, b: SeedMean, z: float = 2.0, margin: float = 0.0) -> bool | None:
    """Whether `a` exceeds `b` by more than `margin` beyond the seeds' noise.

    True when a − b − margin exceeds `z` standard errors of the difference, False when it falls
    short of zero by that much, None when the seeds cannot tell (the caller marks the claim
    `within_noise`). With one seed (no standard error) it is the plain comparison, except that a tie
    (equal to within 1e-9 of the larger magnitude: identical runs, or windows quantised alike) cannot
    tell either way and gives None; the report says the verdicts are unreplicated
    (`single_seed_caveat`).
    """
    diff = a.mean - b.mean - margin
    se = math.hypot(a.se, b.se)
    if math.isnan(se):
        if abs(diff) <= 1e-9 * max(abs(a.mean), abs(b.mean), abs(margin), 1e-300):
            return None
        return diff > 0
    if diff > z * se:
        return True
    if diff < -z * se:
        return False
    return None


def all_of(results) -> bool | None:
    """Every part holds: False if any clearly fails, True if all clearly hold, else None."""
    results = list(results)
    if any(r is False for r in results):
        return False
    if all(r is True for r in results):
        return True
    return None


def judged(ident: str, source: str, statement: str, thesis: str, ours: str, parts: dict[str, bool | None],
           why: str) -> Claim:
    """A claim whose verdict is every part of `parts` (label → verdict of that part); the parts that fail or
    that the seeds cannot tell are named in `why`."""
    verdict = all_of(parts.values())
    failed = [k for k, v in parts.items() if v is False]
    noisy = [k for k, v in parts.items() if v is None]
    if failed:
        why += f"; fails in {', '.join(failed)}"
    if noisy:
        why += f"; within the seeds' noise (2 s.e.) in {', '.join(noisy)}"
    return Claim(ident, source, statement, thesis, ours, verdict, why, within_noise=verdict is None)


def single_seed_caveat(n_seeds: int) -> str:
    """A report header's warning when each point ran once (`--quick`): no ordering could be tested
    against noise, so its verdicts are a smoke test, not evidence. Empty with two or more seeds."""
    if n_seeds >= 2:
        return ""
    return ("**One seed per point: these verdicts are unreplicated.** With a single run no ordering can be "
            "tested against the seeds' noise: an exact tie is \"within noise\", every other difference, however "
            "small, decides the claim. Rerun without `--quick` for verdicts.")


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


def wall_time(minutes: float) -> str:
    """A report's wall time, e.g. '12.3 min'; when the reproduction resumed an interrupted one, also how
    many runs it reused (their time, spent before, is not in the figure)."""
    store = active_store()
    if store is None or not store.reused:
        return f"{minutes:.1f} min"
    total = store.reused + store.shared + store.computed
    return (f"{minutes:.1f} min (this session: {store.reused} of {total} runs were reused from an interrupted "
            "earlier reproduction, whose time is not counted)")


def ensure_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path
