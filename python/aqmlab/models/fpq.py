"""Analytic models of R. T. Morris, "Scalable TCP Congestion Control" (PhD thesis, Harvard,
January 1999): TCP window and timeouts against the loss rate, loss of drop-tail / random-drop /
RED bottlenecks against the number of flows, RED tuning, and the Flow-Proportional Queuing (FPQ)
targets and bit-vector flow counter.

Digest: ``shared/specs/seed004-fpq.md`` §2 and §3.4–3.5. Equation numbers below are the thesis's.

* Ch. 5, TCP against loss ``l`` (fraction of packets dropped, in (0, 1)):
  Eq 5.1 ``w_avg = 0.87/√l``; Eq 5.2 ``w_eff = 0.87/√l − 1``; Eq 5.3 ``o = l(1 − (1 − l)^13)``;
  Eq 5.4 ``O = 1/(1 + r/(w·o))`` with r the RTT **in seconds** and a 1 s timeout;
  Eq 5.5 ``pif = (1 − O)·w_avg`` (the function *pif(l, r)* of Sec. 5.3.3).
* Ch. 5, bottlenecks shared by n flows with q packets of buffer: Eq 5.6 (drop-tail)
  ``l = 0.76n²/(n + q)²``; Eq 5.7 (random drop) ``l = 0.76n²/(1.5n + q)²``.
* Ch. 5, RED: Eq 5.8 ``l = 2·max_p·q_avg/max_th``; Eq 5.9 ``b = 0.87N/√l``;
  Eq 5.10 ``b = l·max_th/(2max_p)`` (*redq*); Eq 5.11–5.13 (prediction "P1");
  Eq 5.14 ``redq(l) + pps·r = n·pif(l, r)`` (prediction "P2"); Sec. 5.3.4 recommended settings.
* Ch. 6, FPQ: Eq 6.1 (flow count from the number of set bits), Eq 6.2 ``q = r/(2f − 1)`` with r
  the delay-bandwidth product **in packets**, Fig. 6.2 targets ``q = max(r/(2f − 1), 5f)`` and
  ``l = min((0.87/((q + r)/f + 1))², 0.016)``, Fig. 6.4 RED settings ``max_th = 2q``,
  ``max_p = l``, ``min_th = 5``.

Units: windows, queues, thresholds and storage in packets; times in seconds; rates in packets/s.
The thesis writes ``r`` for the RTT in seconds in Ch. 5 and for the bandwidth-delay product in
packets in Ch. 6; here they are ``rtt_s`` and ``bdp_pkts``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ._checks import check_nonnegative, check_positive, check_real

__all__ = [
    "WINDOW_CONSTANT",
    "TAIL_LOSS_CONSTANT",
    "TIMEOUT_SPACING",
    "FPQ_LOSS_CAP",
    "RedPrediction",
    "RedP2Prediction",
    "RedSettings",
    "FpqRedParameters",
    "packets_per_second",
    "avg_window",
    "effective_window",
    "loss_for_effective_window",
    "timeouts_per_packet",
    "time_in_timeout",
    "packets_in_flight",
    "droptail_loss",
    "random_drop_loss",
    "red_loss",
    "aggregate_window",
    "red_queue_for_loss",
    "red_p1_constants",
    "red_p1",
    "red_p2",
    "red_recommended",
    "red_max_p_for_fixed_max_th",
    "fpq_target_queue",
    "fpq_target_loss",
    "fpq_red_parameters",
    "fpq_crossover_flows",
    "fpq_cap_onset_flows",
    "expected_set_bits",
    "flows_from_set_bits",
]

#: Eq 5.1's constant, (3/4)·√(4/3) = 0.866 exactly, rounded by the thesis to 0.87.
WINDOW_CONSTANT = 0.87
#: Eqs 5.6/5.7's constant as printed, 0.87² = 0.7569 rounded to 0.76 (the digest's tables use 0.76).
TAIL_LOSS_CONSTANT = 0.76
#: Eq 5.3: Tahoe needs losses at least 13 packets apart to avoid a timeout (chosen "somewhat
#: empirically", Sec. 5.1).
TIMEOUT_SPACING = 13
#: Fig. 6.2's loss cap (1.6 %, read from the simulated Fig. 5.1 as giving an average window of 5).
FPQ_LOSS_CAP = 0.016


class RedPrediction(NamedTuple):
    """A predicted RED operating point: loss fraction and average queue (packets)."""

    loss: float
    queue_pkts: float


class RedP2Prediction(NamedTuple):
    """Solution of Eq 5.14: loss, queue redq(l*) in packets, the RTT used inside pif (s) and the
    fraction of time in timeout O at that point (Eq 5.4). Its first two fields match
    :class:`RedPrediction`."""

    loss: float
    queue_pkts: float
    rtt_s: float
    time_in_timeout: float


class RedSettings(NamedTuple):
    """RED thresholds recommended by Sec. 5.3.4 (max_th in packets)."""

    max_th: float
    max_p: float


class FpqRedParameters(NamedTuple):
    """RED parameters an FPQ router installs (Fig. 6.4), thresholds in packets."""

    min_th: float
    max_th: float
    max_p: float


# --------------------------------------------------------------------------- input checks

def _check_loss(name: str, value: float) -> None:
    check_real(name, value)
    if not 0 < value < 1:
        raise ValueError(f"{name} must be a loss fraction in (0, 1), got {value!r}")


def _check_probability(name: str, value: float) -> None:
    check_real(name, value)
    if not 0 < value <= 1:
        raise ValueError(f"{name} must be a probability in (0, 1], got {value!r}")


def _check_v_max(v_max: float) -> None:
    check_real("v_max", v_max)
    if not (v_max >= 2 and v_max < math.inf and float(v_max).is_integer()):
        raise ValueError(f"v_max must be an integer number of bits >= 2, got {v_max!r}")


# --------------------------------------------------------------------------- helpers

def packets_per_second(rate_bps: float, packet_bytes: float = 576) -> float:
    """Link rate in packets/s (Sec. 2.10 of the digest: 10 Mb/s of 576 B packets is 2170 pkt/s,
    so a 100 ms RTT holds a bandwidth-delay product of 217 packets).

    >>> round(packets_per_second(10e6))
    2170
    """
    check_positive("rate_bps", rate_bps)
    check_positive("packet_bytes", packet_bytes)
    return rate_bps / (8 * packet_bytes)


# --------------------------------------------------------------------------- Ch. 5: TCP vs loss

def avg_window(loss: float, constant: float = WINDOW_CONSTANT) -> float:
    """Eq 5.1 (from Floyd 1991): average congestion window in packets of a TCP with delayed ACKs
    under evenly spaced loss fraction ``loss``: ``constant/√l``. The derivation gives
    ``√(4/(3l))·3/4 = 0.866/√l``; the thesis rounds it to 0.87 (pass ``constant=0.866`` for the
    unrounded value). Fig. 5.1 shows it over-estimates the simulated window by about 20 %.

    >>> round(avg_window(0.01), 2)
    8.7
    """
    _check_loss("loss", loss)
    check_positive("constant", constant)
    return constant / math.sqrt(loss)


def effective_window(loss: float, constant: float = WINDOW_CONSTANT) -> float:
    """Eq 5.2: packets actually in flight, ``constant/√l − 1`` (half a packet lost to truncating
    the window to whole packets, half a packet held back by delayed ACK).

    >>> round(effective_window(0.03), 2)    # Sec. 5.3.4: below 3 % keeps a 4-packet window
    4.02
    """
    return avg_window(loss, constant) - 1


def loss_for_effective_window(window_pkts: float, constant: float = WINDOW_CONSTANT) -> float:
    """Eq 5.2 inverted, as in Sec. 6.2: the loss fraction that gives effective window
    ``window_pkts``, ``(constant/(w + 1))²``. Note that it gives a window of 5 at l ≈ 2.1 %; the
    FPQ cap of 1.6 % comes from the simulated Fig. 5.1, not from this formula.

    >>> round(loss_for_effective_window(5), 4)
    0.021
    """
    check_positive("window_pkts", window_pkts)
    check_positive("constant", constant)
    return (constant / (window_pkts + 1)) ** 2


def timeouts_per_packet(loss: float, spacing: int = TIMEOUT_SPACING) -> float:
    """Eq 5.3: Tahoe retransmission timeouts per packet sent, ``l·(1 − (1 − l)^spacing)``: a loss
    causes a timeout when another loss follows it within ``spacing`` packets (13: three for the
    dupACKs, ten for slow start to regrow). Valid for windows above 4 and uniform loss.

    >>> round(timeouts_per_packet(0.016), 5)    # "well under one percent" at 1.6 % loss
    0.00303
    """
    _check_loss("loss", loss)
    check_positive("spacing", spacing)
    return loss * (1 - (1 - loss) ** spacing)


def time_in_timeout(loss: float, rtt_s: float, window: float | None = None,
                    timeout_s: float = 1.0) -> float:
    """Eq 5.4: fraction of time a TCP spends in timeout, ``1/(1 + r/(w·o·T))``. While sending, a
    flow sends w/r packets/s, so suffers w·o/r timeouts/s, each lasting ``timeout_s`` (the thesis
    takes T = 1 s, which makes this its ``1/(1 + r/(w·o))``). ``rtt_s`` is the round-trip time in
    seconds, ``window`` the average window in packets (default Eq 5.1's ``avg_window(loss)``),
    ``o`` is Eq 5.3.

    >>> round(time_in_timeout(0.02, 0.1), 3)
    0.221
    """
    _check_loss("loss", loss)
    check_positive("rtt_s", rtt_s)
    check_positive("timeout_s", timeout_s)
    if window is None:
        window = avg_window(loss)
    else:
        check_positive("window", window)
    return 1 / (1 + rtt_s / (window * timeouts_per_packet(loss) * timeout_s))


def packets_in_flight(loss: float, rtt_s: float, timeout_s: float = 1.0) -> float:
    """Eq 5.5, the function *pif(l, r)* of Sec. 5.3.3: average packets one TCP keeps in flight,
    ``(1 − O(l, r, w(l)))·w(l)`` with ``w(l) = 0.87/√l`` (Eq 5.1) and O from Eq 5.4; ``rtt_s`` in
    seconds.

    >>> round(packets_in_flight(0.01, 0.1), 2)
    7.86
    """
    w = avg_window(loss)
    return (1 - time_in_timeout(loss, rtt_s, w, timeout_s)) * w


# --------------------------------------------------------------------------- Ch. 5: drop-tail

def _tail_loss(n: float, q_pkts: float, bdp_pkts: float, per_flow_offset: float) -> float:
    check_positive("n", n)
    check_positive("q_pkts", q_pkts)
    check_nonnegative("bdp_pkts", bdp_pkts)
    return TAIL_LOSS_CONSTANT * n * n / (per_flow_offset * n + q_pkts + bdp_pkts) ** 2


def droptail_loss(n: float, q_pkts: float, bdp_pkts: float = 0.0) -> float:
    """Eq 5.6: loss fraction of a drop-tail bottleneck whose ``q_pkts``-packet buffer ``n``
    long-lived TCPs keep full: from ``q = n·(0.87/√l − 1)``, ``l = 0.76·n²/(n + q)²``
    (0.76 ≈ 0.87², as the thesis rounds it). Inaccurate once n approaches q/5 (timeouts make
    the real loss lower).

    ``bdp_pkts`` (default 0, as in the thesis's 10 ms experiments) adds the packets stored on the
    links to the buffer, ``0.76n²/(n + q + bdp)²``. That is the digest's generalisation of Eq 5.6
    in the spirit of Eq 8.1 (l ∝ n²/b², b = total storage), not a formula from the thesis.

    >>> f"{droptail_loss(100, 500):.3g}"
    '0.0211'
    """
    return _tail_loss(n, q_pkts, bdp_pkts, 1.0)


def random_drop_loss(n: float, q_pkts: float, bdp_pkts: float = 0.0) -> float:
    """Eq 5.7: as :func:`droptail_loss` for random drop (a random queued packet is evicted), whose
    flows halve their windows about half a window earlier: ``l = 0.76·n²/(1.5n + q)²``.
    ``bdp_pkts`` is the same digest (not thesis) generalisation as in :func:`droptail_loss`.

    >>> f"{random_drop_loss(100, 500):.3g}"
    '0.018'
    """
    return _tail_loss(n, q_pkts, bdp_pkts, 1.5)


# --------------------------------------------------------------------------- Ch. 5: RED

def red_loss(max_p: float, q_avg: float, max_th: float) -> float:
    """Eq 5.8: approximate RED drop fraction with min_th ≈ 0, ``2·max_p·q_avg/max_th``. The
    factor 2 comes from RED's count-based spreading of drops (``p_a = p_b/(1 − count·p_b)``, no
    "wait"). Meant for ``q_avg < max_th``; it is not capped (RED drops everything above max_th).

    >>> red_loss(0.02, 250, 500)
    0.02
    """
    _check_probability("max_p", max_p)
    check_nonnegative("q_avg", q_avg)
    check_positive("max_th", max_th)
    return 2 * max_p * q_avg / max_th


def aggregate_window(n: float, loss: float) -> float:
    """Eq 5.9: packets ``n`` TCPs jointly keep in flight at loss fraction ``loss``,
    ``b = 0.87·n/√l``.

    >>> round(aggregate_window(100, 0.01))
    870
    """
    check_positive("n", n)
    return n * avg_window(loss)


def red_queue_for_loss(loss: float, max_th: float, max_p: float) -> float:
    """Eq 5.10, the function *redq* of Sec. 5.3.3: the average queue (packets) at which RED
    drops fraction ``loss``, ``l·max_th/(2·max_p)`` (Eq 5.8 solved for q_avg).

    >>> red_queue_for_loss(0.02, 500, 0.02)
    250.0
    """
    _check_loss("loss", loss)
    check_positive("max_th", max_th)
    _check_probability("max_p", max_p)
    return loss * max_th / (2 * max_p)


def red_p1_constants(constants: str = "exact") -> tuple[float, float]:
    """The constants (c_l, c_b) of Eqs 5.12 ``l = c_l·(N·max_p/max_th)^(2/3)`` and 5.13
    ``b = c_b·N^(2/3)·max_th^(1/3)/max_p^(1/3)``.

    ``"exact"`` solves Eq 5.11 exactly: c_l = (2·0.87)^(2/3) = 1.74^(2/3) ≈ 1.447 and
    c_b = c_l/2 ≈ 0.723. ``"thesis"`` gives the thesis's printed, rounded 1.4 and 0.7 (which the
    thesis's P1 curves and its "about 500 packets" example of Sec. 5.3.5 use).

    >>> [round(c, 3) for c in red_p1_constants()]
    [1.447, 0.723]
    """
    if constants == "exact":
        c_l = (2 * WINDOW_CONSTANT) ** (2 / 3)
        return c_l, c_l / 2
    if constants == "thesis":
        return 1.4, 0.7
    raise ValueError(f"constants must be 'exact' or 'thesis', got {constants!r}")


def red_p1(n: float, max_th: float, max_p: float, constants: str = "exact",
           cap: bool = False) -> RedPrediction:
    """Prediction "P1" (Sec. 5.3.2) of a RED queue shared by ``n`` TCPs: the equilibrium
    ``l·max_th/(2max_p) = 0.87N/√l`` (Eq 5.11) solved for the loss, Eq 5.12
    ``l = 1.4·N^(2/3)·max_p^(2/3)/max_th^(2/3)``, and queue, Eq 5.13
    ``b = 0.7·N^(2/3)·max_th^(1/3)/max_p^(1/3)``. See :func:`red_p1_constants` for
    ``constants`` ("exact": 1.447 and 0.723; "thesis": 1.4 and 0.7).

    The queue is not limited to ``max_th`` unless ``cap=True`` (only the queue is capped; the
    loss is Eq 5.12's either way). The loss is not clipped to 1 either.

    >>> p = red_p1(100, 500, 0.02, constants="thesis")
    >>> round(p.loss, 4), round(p.queue_pkts)
    (0.0353, 441)
    >>> round(red_p1(200, 500, 0.02, constants="thesis", cap=True).queue_pkts)
    500
    """
    check_positive("n", n)
    check_positive("max_th", max_th)
    _check_probability("max_p", max_p)
    c_l, c_b = red_p1_constants(constants)
    loss = c_l * (n * max_p / max_th) ** (2 / 3)
    queue = c_b * n ** (2 / 3) * max_th ** (1 / 3) / max_p ** (1 / 3)
    if cap:
        queue = min(queue, max_th)
    return RedPrediction(loss, queue)


def _bisect_decreasing(g, lo: float, hi: float) -> float:
    """Root of a strictly decreasing g on [lo, hi] with g(lo) > 0 > g(hi), to the last float."""
    for _ in range(2000):
        mid = 0.5 * (lo + hi)
        if mid <= lo or mid >= hi:
            break
        if g(mid) > 0:
            lo = mid
        else:
            hi = mid
    return lo if abs(g(lo)) <= abs(g(hi)) else hi


def red_p2(n: float, max_th: float, max_p: float, pps: float = 2170.0, rtt_s: float = 0.01,
           variant: str = "literal", timeout_s: float = 1.0) -> RedP2Prediction:
    """Prediction "P2" (Sec. 5.3.3): solve Eq 5.14,
    ``redq(l, max_th, max_p) + pps·r = n·pif(l, r)``, for the loss l* by bisection, and predict
    the queue ``redq(l*)`` (packets). ``pps`` is the bottleneck rate in packets/s and ``rtt_s``
    the round-trip propagation time in seconds (2170 and 0.01 in the thesis's Sec. 5.3.2 runs,
    the defaults); ``pps·rtt_s`` packets are on the wire. The solution is unique: the left side
    increases and the right side decreases strictly in l.

    ``variant="literal"`` is the thesis's P2: pif is evaluated at r = ``rtt_s``.
    ``variant="queueing"`` is the digest's P2′: pif is evaluated at the RTT including the
    queueing delay, ``r = rtt_s + redq(l)/pps`` (the wire term stays ``pps·rtt_s``).

    The queue is not capped at ``max_th``. Raises ValueError if no l in (0, 1) solves it.

    >>> p = red_p2(100, 500, 0.02)
    >>> round(p.loss, 4), round(p.queue_pkts)
    (0.016, 201)
    >>> p = red_p2(100, 500, 0.02, variant="queueing")
    >>> round(p.loss, 4), round(p.queue_pkts)
    (0.0299, 374)
    """
    check_positive("n", n)
    check_positive("max_th", max_th)
    _check_probability("max_p", max_p)
    check_positive("pps", pps)
    check_positive("rtt_s", rtt_s)
    check_positive("timeout_s", timeout_s)
    if variant not in ("literal", "queueing"):
        raise ValueError(f"variant must be 'literal' or 'queueing', got {variant!r}")
    wire = pps * rtt_s
    half_over_p = max_th / (2 * max_p)

    def rtt_at(loss: float) -> float:
        return rtt_s if variant == "literal" else rtt_s + loss * half_over_p / pps

    def residual(loss: float) -> float:
        return n * packets_in_flight(loss, rtt_at(loss), timeout_s) - loss * half_over_p - wire

    lo, hi = 1e-15, 1 - 1e-15
    if not residual(lo) > 0:
        raise ValueError(f"no solution of Eq 5.14 with loss in (0, 1): n = {n!r} flows cannot "
                         f"fill the {wire:g} packets on the wire (pps*rtt_s)")
    if not residual(hi) < 0:
        raise ValueError(f"no solution of Eq 5.14 with loss in (0, 1): n = {n!r} flows keep "
                         f"more packets in flight than the queue and wire hold even at loss ~1")
    loss = _bisect_decreasing(residual, lo, hi)
    rtt = rtt_at(loss)
    return RedP2Prediction(loss, loss * half_over_p, rtt, time_in_timeout(loss, rtt, timeout_s=timeout_s))


def red_recommended(n: float, loss: float, rtt_s: float, allow_high_loss: bool = False) -> RedSettings:
    """Sec. 5.3.4 RED recipe for ``n`` active flows, a chosen maximum loss fraction ``loss`` and
    round-trip time ``rtt_s`` (seconds): ``max_th = (3/2)·n·pif(l, r)`` packets and
    ``max_p = (3/4)·l``.

    The thesis says l "should probably be less than 3 % to allow TCP a window of four packets"
    (Eq 5.2 gives 4.02 at 3 %), so ``loss >= 0.03`` raises ValueError unless
    ``allow_high_loss=True``.

    >>> s = red_recommended(100, 0.02, 0.01)
    >>> round(s.max_th), round(s.max_p, 4)
    (240, 0.015)
    """
    check_positive("n", n)
    _check_loss("loss", loss)
    if loss >= 0.03 and not allow_high_loss:
        raise ValueError(f"loss must be in (0, 0.03) for the Sec. 5.3.4 recipe (a window of at "
                         f"least four packets), got {loss!r}; pass allow_high_loss=True to override")
    return RedSettings(1.5 * n * packets_in_flight(loss, rtt_s), 0.75 * loss)


def red_max_p_for_fixed_max_th(n: float, max_th: float, constants: str = "thesis",
                               fill: float = 0.75) -> float:
    """Sec. 5.3.4: when max_th is fixed by the hardware, the max_p that puts the P1 queue
    (Eq 5.13) at ``fill·max_th`` (3/4 full): ``max_p = (c_b/fill)³·n²/max_th²``.

    ``constants="thesis"`` returns the thesis's printed ``0.81·n²/max_th²`` (0.81 rounds
    (0.7/0.75)³ = 0.813) and requires ``fill=0.75``; ``"exact"`` uses c_b = 1.74^(2/3)/2 ≈ 0.723,
    giving (0.723/0.75)³ ≈ 0.896. Not clipped to 1 (n ≳ max_th gives max_p > 1: no RED setting
    keeps such a queue 3/4 full).

    >>> red_max_p_for_fixed_max_th(100, 500)
    0.0324
    """
    check_positive("n", n)
    check_positive("max_th", max_th)
    check_real("fill", fill)
    if not 0 < fill <= 1:
        raise ValueError(f"fill must be a fraction of max_th in (0, 1], got {fill!r}")
    if constants == "thesis":
        if fill != 0.75:
            raise ValueError(f"fill must be 0.75 with constants='thesis' (the printed 0.81), got "
                             f"{fill!r}; use constants='exact' for other fills")
        coefficient = 0.81
    else:
        coefficient = (red_p1_constants(constants)[1] / fill) ** 3
    return coefficient * n * n / (max_th * max_th)


# --------------------------------------------------------------------------- Ch. 6: FPQ

def _clamp_flows(f: float) -> float:
    check_nonnegative("f", f)
    return max(1.0, f)


def fpq_target_queue(f: float, bdp_pkts: float, ppf: float = 5) -> float:
    """Fig. 6.2: FPQ's target average queue in packets for ``f`` counted flows and a
    bandwidth-delay product of ``bdp_pkts`` packets, ``max(r/(2f − 1), ppf·f)``. The first term is
    Eq 6.2 (buffer one window cut when few de-synchronised flows share the link: one BDP at
    f = 1), the second ``ppf`` packets per flow (5 in the thesis). ``f`` is clamped to at least
    1 (the counter may report 0; Eq 6.2 is meaningless at f ≤ 1/2), as the digest §3.4 item 4 asks.

    >>> fpq_target_queue(1, 217), round(fpq_target_queue(2, 217), 1), fpq_target_queue(100, 217)
    (217.0, 72.3, 500.0)
    """
    f = _clamp_flows(f)
    check_positive("bdp_pkts", bdp_pkts)
    check_positive("ppf", ppf)
    return float(max(bdp_pkts / (2 * f - 1), ppf * f))


def fpq_target_loss(f: float, bdp_pkts: float, ppf: float = 5,
                    cap: float | None = FPQ_LOSS_CAP) -> float:
    """Fig. 6.2: FPQ's target loss fraction, ``min((0.87/((q + r)/f + 1))², cap)`` with q from
    :func:`fpq_target_queue`: Eq 5.2 inverted for the per-flow window (q + r)/f, capped at 1.6 %
    (``cap=None`` for no cap). ``f`` is clamped to at least 1.

    The thesis does not say how the target changes for PPF ≠ 5 (Sec. 7.1). ``ppf`` replaces the
    5 in q, but the default cap is still the PPF-5 value 1.6 %, which would pin the loss of
    PPF 1 or 3 far below the 7.3 % and 2.4 % the thesis measured; for PPF ≠ 5 pass ``cap=None``
    or ``cap=loss_for_effective_window(ppf)``, the digest's two suggested readings (§3.5).

    >>> f"{fpq_target_loss(100, 217):.3g}", fpq_target_loss(500, 217)
    ('0.0113', 0.016)
    """
    f = _clamp_flows(f)
    q = fpq_target_queue(f, bdp_pkts, ppf)
    loss = (WINDOW_CONSTANT / ((q + bdp_pkts) / f + 1)) ** 2
    if cap is not None:
        _check_probability("cap", cap)
        loss = min(loss, cap)
    return loss


def fpq_red_parameters(f: float, bdp_pkts: float, ppf: float = 5,
                       cap: float | None = FPQ_LOSS_CAP, min_th: float = 5) -> FpqRedParameters:
    """Fig. 6.4: the RED parameters FPQ installs for ``f`` flows, ``min_th = 5``,
    ``max_th = 2q`` and ``max_p = l`` (q, l the Fig. 6.2 targets), so Eq 5.8 gives drop rate l at
    q_avg = q (2·l·q/(2q) = l) with the operating point well below max_th.

    >>> p = fpq_red_parameters(100, 217)
    >>> p.min_th, p.max_th, round(p.max_p, 4)
    (5, 1000.0, 0.0113)
    """
    check_nonnegative("min_th", min_th)
    q = fpq_target_queue(f, bdp_pkts, ppf)
    return FpqRedParameters(min_th, 2 * q, fpq_target_loss(f, bdp_pkts, ppf, cap))


def fpq_crossover_flows(bdp_pkts: float, ppf: float = 5) -> float:
    """Flow count at which Fig. 6.2's two queue branches cross, r/(2f − 1) = ppf·f:
    ``f = (ppf + √(ppf² + 8·ppf·r))/(4·ppf)``, i.e. ``(5 + √(25 + 40r))/20`` for ppf = 5.

    >>> round(fpq_crossover_flows(217), 2)
    4.92
    """
    check_positive("bdp_pkts", bdp_pkts)
    check_positive("ppf", ppf)
    return (ppf + math.sqrt(ppf * ppf + 8 * ppf * bdp_pkts)) / (4 * ppf)


def fpq_cap_onset_flows(bdp_pkts: float, ppf: float = 5, cap: float = FPQ_LOSS_CAP) -> float:
    """Flow count above which the uncapped Fig. 6.2 loss on the ``ppf·f`` branch,
    ``(0.87/(ppf + 1 + r/f))²``, exceeds ``cap``: ``f = r/(0.87/√cap − ppf − 1)``; ``inf`` if it
    never does. (About 247 for r = 217, ppf = 5, cap = 1.6 %.) Only meaningful when that f is above
    :func:`fpq_crossover_flows`, where the ppf·f branch is the one in force.

    >>> round(fpq_cap_onset_flows(217), 1)
    247.2
    """
    check_positive("bdp_pkts", bdp_pkts)
    check_positive("ppf", ppf)
    _check_probability("cap", cap)
    slack = WINDOW_CONSTANT / math.sqrt(cap) - ppf - 1
    return bdp_pkts / slack if slack > 0 else math.inf


def expected_set_bits(f: float, v_max: int) -> float:
    """Sec. 6.1: expected number of set bits when ``f`` flows hash uniformly into a ``v_max``-bit
    vector, ``v_max·(1 − ((v_max − 1)/v_max)^f)``; the inverse of Eq 6.1.

    >>> round(expected_set_bits(1000, 5000))
    906
    """
    check_nonnegative("f", f)
    _check_v_max(v_max)
    return v_max * -math.expm1(f * math.log1p(-1 / v_max))


def flows_from_set_bits(c: float, v_max: int) -> float:
    """Eq 6.1: flow count estimated from ``c`` set bits of a ``v_max``-bit vector,
    ``f = ln(1 − c/v_max)/ln((v_max − 1)/v_max)``, correcting for hash collisions.

    Eq 6.1 is −∞ at c = v_max (every bit set), so, as the digest §3.4 item 4 asks, c is clamped
    to at most ``v_max − 1`` (the largest count short of saturation; the estimate there is about
    v_max·ln v_max, e.g. 42 580 for v_max = 5000). c outside [0, v_max] raises ValueError.

    >>> round(flows_from_set_bits(906.3, 5000))
    1000
    """
    _check_v_max(v_max)
    check_real("c", c)
    if not 0 <= c <= v_max:
        raise ValueError(f"c must be a count of set bits in [0, v_max] = [0, {v_max}], got {c!r}")
    c = min(c, v_max - 1)
    return math.log1p(-c / v_max) / math.log1p(-1 / v_max)
