"""Closed forms of elementary queues, used to validate the event engine.

Conventions: λ arrivals/s, μ service completions/s, ρ = λ/μ.
"""

from __future__ import annotations

__all__ = ["md1_mean_wait", "mm1_mean_wait", "mm1k_loss"]


def md1_mean_wait(lam: float, service_s: float) -> float:
    """Mean waiting time (before service) of M/D/1, Pollaczek–Khinchine:
    W_q = ρ·S / (2(1 − ρ)) with deterministic service time S.

    >>> round(md1_mean_wait(500.0, 0.001), 6)   # ρ = 0.5, S = 1 ms
    0.0005
    """
    rho = lam * service_s
    if not 0 <= rho < 1:
        raise ValueError(f"load must be in [0, 1), got {rho}")
    return rho * service_s / (2 * (1 - rho))


def mm1_mean_wait(lam: float, mean_service_s: float) -> float:
    """Mean waiting time of M/M/1: W_q = ρ·S / (1 − ρ)."""
    rho = lam * mean_service_s
    if not 0 <= rho < 1:
        raise ValueError(f"load must be in [0, 1), got {rho}")
    return rho * mean_service_s / (1 - rho)


def mm1k_loss(rho: float, k: int) -> float:
    """Blocking probability of M/M/1/K (K = places in the system, the one in service included):
    P_K = (1 − ρ) ρ^K / (1 − ρ^(K+1)), or 1/(K+1) at ρ = 1.

    >>> round(mm1k_loss(0.9, 10), 5)
    0.05081
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if abs(rho - 1.0) < 1e-12:
        return 1.0 / (k + 1)
    return (1 - rho) * rho**k / (1 - rho ** (k + 1))
