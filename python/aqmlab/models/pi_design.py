"""PI controller design from the Hollot–Misra–Towsley–Gong fluid model (HMTG, INFOCOM 2001 / IEEE TAC
2002; spec ``seed002-tsq.md`` §2.6): given a link of capacity C packets/s, at least N⁻ TCP flows and
round-trip times at most R⁺, the PI coefficients a, b and the sampling frequency for ns-2's
``Queue/PI`` (``kind = "pi"`` / ``"tsq"``).

Linearised TCP/queue plant (δp → δq)::

    P(s) = (R C)³/(2N)² · e^{−sR} / ((s/p_tcp + 1)(s/p_q + 1)),  p_tcp = 2N/(R²C),  p_q = 1/R

PI controller C(s) = K (s/z + 1)/s. Design rule used here:

1. z = p_tcp evaluated at (N⁻, R⁺) — the controller's zero cancels the slow TCP pole;
2. crossover ω_g = z (``crossover`` overrides it), and K from |C(jω_g) P(jω_g)| = 1 with the
   cancellation: K = ω_g · |jω_g/p_q + 1| · (2N⁻)² / (R⁺ C)³;
3. sampling period T = R⁺/40 (about 40 samples per round trip: HMTG's 160 Hz at R⁺ = 0.246 s;
   a heuristic, ``sample_rate`` overrides it);
4. bilinear (Tustin) discretisation of C(s): a = K(1/z + T/2), b = K(1/z − T/2), so that ns-2's
   ``p ← a(q − q_ref) − b(q_old − q_ref) + p`` integrates at rate K and a − b = K·T.

HMTG's example (C = 3750 pkt/s, N⁻ = 60, R⁺ = 0.246 s) gives z = 0.529 (published 0.53) and
K = 9.78e-6 (published, as the spec recalls it, 9.64e-6; that K implies ω_g ≈ 0.52 rather than
z), hence a ≈ 1.853e-5, b ≈ 1.847e-5 against ns-2's defaults 1.822e-5 and 1.816e-5 (1.7 % high).
The exact crossover rule of HMTG is not in the thesis or the spec; ours is stated above.

A design that cannot work is refused (``ValueError``): a phase margin of zero or less (with ω_g = z
the margin is 90° − atan(2/W₀) − (2/W₀)·180°/π, W₀ = R⁺C/N⁻ the per-flow window,
so it is positive only for W₀ above about 2.3 packets), or a sampling period above 2/z, which makes
b negative (ns-2's update then no longer integrates). A design outside the fluid model's range is
returned with a warning: an operating drop probability p₀ = 2/W₀² above 10 %, where timeouts, which
the model leaves out, dominate TCP's response.

>>> d = design(capacity_pps=3750, flows=60, rtt_s=0.246)
>>> round(d.z, 3), round(d.sample_rate_hz)
(0.529, 163)
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from ._checks import check_positive

__all__ = ["PiDesign", "design", "design_for_link"]


@dataclass(frozen=True)
class PiDesign:
    """A designed PI controller: continuous (K, z, ω_g) and discrete (a, b, sample rate)."""

    a: float
    b: float
    sample_rate_hz: float
    k: float
    z: float
    crossover_rad_s: float
    phase_margin_deg: float
    capacity_pps: float
    flows: float
    rtt_s: float
    warnings: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return asdict(self) | {"warnings": list(self.warnings)}

    def queue_table(self, q_ref: float = 200, limit: int = 800, kind: str = "pi") -> dict[str, object]:
        """The `[queue]` table of a scenario using this design."""
        return {"kind": kind, "a": self.a, "b": self.b, "sample_rate": self.sample_rate_hz, "q_ref": q_ref, "limit": limit}


def design(capacity_pps: float, flows: float, rtt_s: float, *, crossover: float | None = None,
           sample_rate: float | None = None) -> PiDesign:
    """PI coefficients for a link of `capacity_pps` packets/s shared by at least `flows` TCP flows
    with round-trip times at most `rtt_s` (see the module docs for the rule)."""
    check_positive("capacity_pps", capacity_pps)
    check_positive("flows", flows)
    check_positive("rtt_s", rtt_s)
    c, n, r = float(capacity_pps), float(flows), float(rtt_s)
    z = 2 * n / (r * r * c)
    wg = z if crossover is None else crossover
    check_positive("crossover", wg)
    p_q = 1 / r
    k = wg * math.hypot(wg / p_q, 1.0) * (2 * n) ** 2 / (r * c) ** 3
    fs = 40 / r if sample_rate is None else sample_rate
    check_positive("sample_rate", fs)
    t = 1 / fs
    a, b = k * (1 / z + t / 2), k * (1 / z - t / 2)
    # Phase of L(jω_g) = C P: −90° (integrator) − atan(ω_g/p_q) − ω_g R (delay), after the cancellation.
    phase = -90 - math.degrees(math.atan(wg / p_q)) - math.degrees(wg * r)
    margin = 180 + phase
    window = r * c / n
    if margin <= 0:
        raise ValueError(
            f"the design is unstable: phase margin {margin:.1f} deg at the crossover {wg:.4g} rad/s "
            f"(must be > 0). The per-flow window R+*C/N- is {window:.3g} packets"
            + (" and the fluid model needs about 2.3 or more for a positive margin at crossover z: "
               "a smaller N-, a larger R+ or a faster link" if crossover is None
               else "; choose a lower crossover"))
    if b < 0:
        raise ValueError(f"sample_rate {fs:g} Hz is too low: a sampling period above 2/z = {2 / z:.4g} s "
                         f"makes b = K(1/z - T/2) negative; sample at more than {z / 2:.4g} Hz")
    p0 = 2 / window ** 2
    warnings = ()
    if p0 > 0.1:
        warnings = (f"the operating drop probability 2/W0^2 = {p0:.2f} (W0 = R+*C/N- = {window:.3g} packets) "
                    "is above 0.1, where TCP timeouts, which the fluid model leaves out, dominate: "
                    "check the design in simulation",)
    return PiDesign(a, b, fs, k, z, wg, margin, c, n, r, warnings)


def design_for_link(rate_bps: float, flows: float, rtt_s: float, *, packet_bytes: float = 1000,
                    crossover: float | None = None, sample_rate: float | None = None) -> PiDesign:
    """As :func:`design`, with the capacity given as a link rate in bits/s and a mean packet size."""
    check_positive("rate_bps", rate_bps)
    check_positive("packet_bytes", packet_bytes)
    return design(rate_bps / (8 * packet_bytes), flows, rtt_s, crossover=crossover, sample_rate=sample_rate)
