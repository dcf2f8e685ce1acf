"""Metrics computed on result frames (the core computes the same ones for ``summary.json``)."""

from __future__ import annotations

from typing import Sequence

__all__ = ["jain_index", "jain_by_kind"]


def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 when all are equal, 1/n when one takes all.

    >>> jain_index([1.0, 1.0, 1.0, 1.0])
    1.0
    >>> jain_index([4.0, 0.0, 0.0, 0.0])
    0.25
    """
    if not values:
        raise ValueError("Jain's index of no values")
    squares = sum(x * x for x in values)
    if squares == 0:
        return 0.0
    return sum(values) ** 2 / (len(values) * squares)


def jain_by_kind(flows) -> dict[str, float]:
    """Jain's index of each flow kind's goodputs (a data frame with `kind` and `goodput_bps`), for kinds
    with at least two flows: the all-flow index mixes bulk TCP with, say, a 8 kb/s latency probe, which
    is unfair by design.

    >>> import pandas as pd
    >>> jain_by_kind(pd.DataFrame({"kind": ["tcp", "tcp", "udp-cbr"], "goodput_bps": [1.0, 1.0, 0.01]}))
    {'tcp': 1.0}
    """
    return {kind: jain_index(g["goodput_bps"].tolist())
            for kind, g in flows.groupby("kind", sort=True) if len(g) >= 2}
