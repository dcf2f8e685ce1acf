"""Metrics computed on result frames (the core computes the same ones for ``summary.json``)."""

from __future__ import annotations

from typing import Sequence

__all__ = ["jain_index"]


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
