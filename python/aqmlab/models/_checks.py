"""Argument checks shared by the analytic models: each raises ValueError naming the argument and
the allowed range, so a wrong call fails with a message a user can act on."""

from __future__ import annotations

import math
import numbers

__all__ = ["check_real", "check_positive", "check_nonnegative"]


def check_real(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{name} must be a real number, got {value!r}")


def check_positive(name: str, value: float) -> None:
    check_real(name, value)
    if not 0 < value < math.inf:
        raise ValueError(f"{name} must be positive and finite, i.e. in (0, inf), got {value!r}")


def check_nonnegative(name: str, value: float) -> None:
    check_real(name, value)
    if not 0 <= value < math.inf:
        raise ValueError(f"{name} must be non-negative and finite, i.e. in [0, inf), got {value!r}")
