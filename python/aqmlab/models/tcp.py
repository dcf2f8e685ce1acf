"""Steady-state TCP throughput models under random loss.

* Mathis, Semke, Mahdavi & Ott 1997, "The macroscopic behavior of the TCP congestion
  avoidance algorithm": B = (MSS/RTT)·C/√p with C = √(3/(2b)), b = segments per ACK.
* Padhye, Firoiu, Towsley & Kurose 1998, "Modeling TCP throughput" (eq. 30, the full model
  with timeouts and the receiver window W_max):
  B = min( W_max/RTT,
           1 / ( RTT·√(2bp/3) + T0·min(1, 3√(3bp/8))·p·(1 + 32p²) ) )  packets/s.
"""

from __future__ import annotations

import math

__all__ = ["mathis_throughput", "padhye_throughput"]


def mathis_throughput(p: float, rtt_s: float, mss_bytes: float, b: int = 1) -> float:
    """Payload throughput in bits/s predicted by the square-root law.

    >>> round(mathis_throughput(0.01, 0.1, 1000) / 1e3, 1)   # kb/s
    979.8
    """
    if not 0 < p < 1:
        raise ValueError(f"loss rate must be in (0, 1), got {p}")
    return mss_bytes * 8 / rtt_s * math.sqrt(3 / (2 * b * p))


def padhye_throughput(p: float, rtt_s: float, mss_bytes: float, t0_s: float, b: int = 1,
                      wmax_pkts: float = math.inf) -> float:
    """Payload throughput in bits/s of the Padhye et al. full model (with timeouts).

    >>> round(padhye_throughput(0.01, 0.1, 1000, 1.0) / 1e3, 1)
    799.4
    """
    if not 0 < p < 1:
        raise ValueError(f"loss rate must be in (0, 1), got {p}")
    denom = rtt_s * math.sqrt(2 * b * p / 3) + t0_s * min(1.0, 3 * math.sqrt(3 * b * p / 8)) * p * (1 + 32 * p * p)
    pkts = min(wmax_pkts / rtt_s, 1 / denom)
    return pkts * mss_bytes * 8
