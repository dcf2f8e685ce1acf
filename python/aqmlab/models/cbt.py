"""Analytic models of M. Parris, "Class-Based Thresholds: Lightweight Active Router-Queue
Management for Multimedia Networking" (PhD dissertation, UNC Chapel Hill, 2001): the CBT
**configurator** (allocations, packet sizes and a target latency → per-class thresholds and drain
rates) and the **predictor** (how a class's unused allocation is borrowed by the others, and the
resulting lower latency L′), plus the small queueing equations of Chapters I–III and App. B.

Digest: ``shared/specs/seed000-cbt-algorithms.md`` §3 (3.1–3.6) and §6 (errata), and
``shared/specs/seed000-cbt-evaluation.md`` §4.5 and §5.13. Equation numbers are the dissertation's.

* Configurator, §IV.4.1: Eq 4.1/4.9/B.4 ``Th_j = B_j·L/P_j`` (assumes Σ B = C); Eq 4.8, the
  general form ``Th_j = L·C·B_j/(P_j·Σ_i B_i)``; Eq 4.2/6.1 ``L = Σ P_i·Th_i / C``; Eq 4.3/6.2
  and 4.10 ``B_i = C·P_i·Th_i / Σ_j P_j·Th_j`` (a class's share of the link is its share of the
  queued bytes); drain rate ``B_c/P_c`` packets/s (Fig. 4.6). The TCP (responsive) class gets
  ThMin = 5 and max_p = 1/10 (RED's recommendations); the unresponsive classes get
  ThMin = ThMax (Table B.13).
* Predictor, §IV.5.2.1: Eq 4.12 ``E_i = max(B_i − Load_i, 0)``; Eq 4.13/4.16, the first
  reallocation ``B′_{j,1} = B_j + s_j/Σ_{recv} s_i · Σ_{donors}(B_i − Load_i)``; Eq 4.17–4.18,
  the iteration. Read literally, Eq 4.17's ``min(Load_j, ·)`` also clips *receivers* that overshoot
  their load, and their overshoot is lost (erratum 10); Table 4.7 instead carries it forward.
  Both are here (``method="literal"`` / ``"corrected"``, the default), together with the
  equivalent closed form (``method="max-min"``): weighted max-min fairness with weights B_j,
  ``B′_j = min(Load_j, f·B_j)`` with the scale-up f chosen so that Σ B′ = C.
* Latency, §IV.5.2.3: Eq 4.22–4.24 ``L′ = L − Σ Δ_i·P_i/C``; Eq 4.26 ``L = Th_i·P_i/B_i``;
  Eq 4.27 ``L′ = Th_i·P_i/B′_i`` for any class with ``Load_i > B′_i``, i.e. ``L′ = L·B_i/B′_i
  = L/f``; L′ = 0 when no class is saturated.
* Other equations (§3.5–3.6 of the digest): traffic intensity ``La/R`` and the periodic-burst
  backlog ``(N − 1)/2·L`` (§I.1); Eq 2.1 ``r = 1.22·M/(RTT·√l)``; Eq 3.1 (Floyd & Fall)
  ``T ≤ 1.5·√(2/3)·B/(R·√p)``; RED Eqs 3.1/3.2 (``p_b``, ``p_a``); the per-class EWMA and its
  idle decay (Fig. 4.6); Eq B.1/B.3 ``latency = packet_size·queue/C``; Eq B.2, the average after a
  burst into an idle queue.

Units: rates in **bits/s** (``*_bps``), packet sizes in bytes, times in seconds, thresholds and
queues in packets, drain rates in packets/s. The dissertation works in KB/s with
**KB = 1024 bytes** (Eq B.5 writes the 1/1024 explicitly, and every threshold table reproduces only
with it) and takes the link as **C = 1225 KB/s** (its allocations all sum to 1225); use
:func:`kib_per_s_to_bps` and :data:`PARRIS_LINK_BPS` to reproduce its numbers. The predictor is
homogeneous in the rates, so any single rate unit works for it.

Where the allocations leave part of the link unallocated (Σ B < C), CBT still enforces only the
*ratios* of the queued bytes (Eq 4.10's second form), so under congestion the classes split the
whole link in proportion to B: the predictor starts from the effective allocations
``C·B_i/Σ B``, and the configurator's Eq 4.9 thresholds then bound the worst-case latency by
``L·Σ B/C ≤ L``. Allocations exceeding the link are rejected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

from ._checks import check_nonnegative, check_positive, check_real

__all__ = [
    "KIB",
    "PARRIS_LINK_BPS",
    "RESPONSIVE_TH_MIN_PKTS",
    "RESPONSIVE_MAX_P",
    "PARRIS_Q_LIMIT_PKTS",
    "METHODS",
    "ClassSpec",
    "ClassThresholds",
    "IterationStep",
    "Reallocation",
    "BurstQueue",
    "kib_per_s_to_bps",
    "bps_to_kib_per_s",
    "threshold_pkts",
    "thresholds_general_pkts",
    "drain_rate_pps",
    "worst_case_latency_s",
    "shares_from_thresholds",
    "allocations_from_thresholds",
    "configure",
    "excess",
    "first_reallocation",
    "predict_throughput",
    "latency_from_threshold_s",
    "predict_latency",
    "queue_latency_s",
    "traffic_intensity",
    "periodic_burst_queue",
    "tcp_friendly_rate",
    "floyd_fall_rate_bound",
    "red_base_probability",
    "red_drop_probability",
    "ewma_update",
    "idle_samples",
    "idle_decay",
    "burst_average",
]

#: Bytes per "KB" in every threshold computation of the dissertation (checked: Eq B.5).
KIB = 1024
#: The link capacity the dissertation's allocation arithmetic uses, 1225 KB/s = 10,035,200 bit/s
#: (its physical link is 10 Mb/s Ethernet; App. B §6.8 once implies 1250 KB/s, erratum 15).
PARRIS_LINK_BPS = 1225 * KIB * 8
#: ThMin of the responsive (TCP) class, RED's rule of thumb (§IV.4.1, Table B.13).
RESPONSIVE_TH_MIN_PKTS = 5.0
#: max_p of the responsive (TCP) class, RED's recommendation (§IV.4.2.2, Table B.13).
RESPONSIVE_MAX_P = 0.1
#: The whole-queue limit of the experiments (§IV.4.2.3, Table B.23), packets.
PARRIS_Q_LIMIT_PKTS = 240
#: The reallocation methods of :func:`predict_throughput`.
METHODS = ("corrected", "literal", "max-min")

# Relative slack for comparing sums of allocations with the link (float round-off of shares).
_REL_TOL = 1e-9


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class ClassSpec:
    """One traffic class to configure: a ``name``, its mean packet size in bytes **including
    headers** (the dissertation measures it per traffic mix, App. B Tables B.15–B.21), and its
    bandwidth allocation given as exactly one of ``rate_bps`` (bit/s) or ``share`` (fraction of
    the link, in (0, 1]). ``responsive=True`` marks a congestion-controlled (TCP) class, which gets
    a RED early-drop band (ThMin = 5, max_p = 1/10); the others get ThMin = ThMax (a
    deterministic cap). Keyword-only after the packet size, so a share cannot be mistaken for a
    rate:

    >>> ClassSpec("tcp", 1507, rate_bps=575 * 8192, responsive=True).share is None
    True
    """

    name: str
    mean_packet_bytes: float
    rate_bps: float | None = field(default=None, kw_only=True)
    share: float | None = field(default=None, kw_only=True)
    responsive: bool = field(default=False, kw_only=True)


class ClassThresholds(NamedTuple):
    """A configured class, ready for a CBT queue: allocation (bit/s and fraction of the link),
    the packet size used, ThMin/ThMax (packets, real-valued), max_p (``None`` for a class with
    ThMin = ThMax, which never makes a probabilistic drop) and the drain rate (packets/s) used to
    decay the class's average while it has nothing queued."""

    name: str
    rate_bps: float
    share: float
    mean_packet_bytes: float
    th_min_pkts: float
    th_max_pkts: float
    max_p: float | None
    drain_rate_pps: float


class IterationStep(NamedTuple):
    """One row of Table 4.7: the allocations B′_{·,k} after iteration k and each class's excess
    ``max(B′_{i,k} − Load_i, 0)``, in the rate unit of the inputs."""

    rates: tuple[float, ...]
    excess: tuple[float, ...]


class Reallocation(NamedTuple):
    """Predicted throughputs B′ (same unit and order as the allocations); ``factor`` is the common
    scale-up ``B′_j/B_j`` of the classes still saturated (``Load_j > B′_j``), ``math.inf`` if
    none is (the link is under-used); ``steps`` lists iterations 0..n of the iterative methods
    (empty for ``"max-min"``); ``method`` is the method used."""

    rates: tuple[float, ...]
    factor: float
    steps: tuple[IterationStep, ...]
    method: str


class BurstQueue(NamedTuple):
    """Mean backlog (bytes) and mean wait (s) of periodic bursts at traffic intensity 1."""

    backlog_bytes: float
    wait_s: float


# --------------------------------------------------------------------------- input checks

def _check_load(name: str, value: float) -> None:
    check_real(name, value)
    if not value >= 0:
        raise ValueError(f"{name} must be a non-negative rate (inf for unlimited demand), "
                         f"i.e. in [0, inf], got {value!r}")


def _check_fraction(name: str, value: float, *, closed_low: bool = False) -> None:
    check_real(name, value)
    ok = (0 <= value <= 1) if closed_low else (0 < value <= 1)
    if not ok:
        raise ValueError(f"{name} must be in {'[0, 1]' if closed_low else '(0, 1]'}, got {value!r}")


def _check_weight(weight: float) -> None:
    check_real("weight", weight)
    if not 0 < weight <= 1:
        raise ValueError(f"weight must be an EWMA weight in (0, 1], got {weight!r}")


def _as_list(name: str, values: Sequence[float]) -> list[float]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        try:
            values = list(values)  # type: ignore[arg-type]
        except TypeError:
            raise ValueError(f"{name} must be a sequence of numbers, got {values!r}") from None
    values = list(values)
    if not values:
        raise ValueError(f"{name} must not be empty (at least one class is needed)")
    return values


def _same_length(name: str, values: list[float], n: int) -> None:
    if len(values) != n:
        raise ValueError(f"{name} must have one entry per class ({n}), got {len(values)}")


def _check_allocations(link_bps: float, allocations_bps: Sequence[float]) -> list[float]:
    check_positive("link_bps", link_bps)
    alloc = _as_list("allocations_bps", allocations_bps)
    for i, b in enumerate(alloc):
        check_positive(f"allocations_bps[{i}]", b)
    alloc = [float(b) for b in alloc]
    total = math.fsum(alloc)
    if total > link_bps * (1 + _REL_TOL):
        raise ValueError(f"allocations_bps sum to {total!r}, exceeding link_bps = {link_bps!r}; "
                         "the allocations must fit in the link (Eq 4.4)")
    return alloc


# --------------------------------------------------------------------------- units

def kib_per_s_to_bps(rate_kib_s: float) -> float:
    """The dissertation's KB/s (KB = 1024 bytes) in bit/s.

    >>> kib_per_s_to_bps(1225) == PARRIS_LINK_BPS
    True
    """
    check_real("rate_kib_s", rate_kib_s)
    return rate_kib_s * KIB * 8


def bps_to_kib_per_s(rate_bps: float) -> float:
    """bit/s in the dissertation's KB/s (KB = 1024 bytes), the inverse of
    :func:`kib_per_s_to_bps`.

    >>> bps_to_kib_per_s(PARRIS_LINK_BPS)
    1225.0
    """
    check_real("rate_bps", rate_bps)
    return rate_bps / (KIB * 8)


# --------------------------------------------------------------------------- configurator

def threshold_pkts(rate_bps: float, mean_packet_bytes: float, target_latency_s: float) -> float:
    """Eq 4.1 (= 4.9, 4.25, B.4): ThMax of a class, ``Th = B·L/P`` packets, with B the class's
    allocation in bytes/s (``rate_bps/8``), P its mean packet size in bytes and L the target
    ("expected average worst-case") queue-induced latency in seconds. Assumes the allocations
    sum to the link (Eq 4.4); see :func:`thresholds_general_pkts` otherwise.

    Eq B.5: 185 KB/s of 889-byte packets and L = 100 ms give

    >>> round(threshold_pkts(kib_per_s_to_bps(185), 889, 0.1), 1)
    21.3
    """
    check_positive("rate_bps", rate_bps)
    check_positive("mean_packet_bytes", mean_packet_bytes)
    check_positive("target_latency_s", target_latency_s)
    return rate_bps / 8 * target_latency_s / mean_packet_bytes


def thresholds_general_pkts(link_bps: float, rates_bps: Sequence[float],
                            mean_packet_bytes: Sequence[float],
                            target_latency_s: float) -> tuple[float, ...]:
    """Eq 4.8, the general form: ``Th_j = L·C/(P_j·Σ_i B_i/B_j) = L·C·B_j/(P_j·Σ_i B_i)``,
    valid even if the allocations do not sum to C. The thresholds then hold exactly L·C bytes
    (Eq 4.2 gives L) and split them in the ratios of B (Eq 4.5). Equals Eq 4.9 when Σ B = C.

    A 1000 B/s link with 375 + 250 B/s allocated and L = 1 s: the thresholds hold 1000 bytes,
    split 3:2 (Eq 4.9 would give 3.75 and 2.5 packets, holding only 625 bytes):

    >>> thresholds_general_pkts(8000, [3000, 2000], [100, 100], 1.0)
    (6.0, 4.0)
    """
    check_positive("link_bps", link_bps)
    rates = _as_list("rates_bps", rates_bps)
    sizes = _as_list("mean_packet_bytes", mean_packet_bytes)
    _same_length("mean_packet_bytes", sizes, len(rates))
    for i, b in enumerate(rates):
        check_positive(f"rates_bps[{i}]", b)
    for i, p in enumerate(sizes):
        check_positive(f"mean_packet_bytes[{i}]", p)
    check_positive("target_latency_s", target_latency_s)
    total = math.fsum(rates)
    return tuple(target_latency_s * link_bps / 8 * b / (p * total) for b, p in zip(rates, sizes))


def drain_rate_pps(rate_bps: float, mean_packet_bytes: float) -> float:
    """The class drain rate of Fig. 4.6 (L1855, L2043): packets/s at which the class's packets
    leave when it uses exactly its allocation, ``B_c/P_c``. It sets how many "virtual samples"
    the idle decay of :func:`idle_decay` applies.

    Table 4.3's TCP class (575 KB/s of 1507-byte packets):

    >>> round(drain_rate_pps(kib_per_s_to_bps(575), 1507), 1)
    390.7
    """
    check_positive("rate_bps", rate_bps)
    check_positive("mean_packet_bytes", mean_packet_bytes)
    return rate_bps / 8 / mean_packet_bytes


def _check_thresholds(th_pkts: Sequence[float], mean_packet_bytes: Sequence[float],
                      ) -> tuple[list[float], list[float]]:
    ths = _as_list("th_pkts", th_pkts)
    sizes = _as_list("mean_packet_bytes", mean_packet_bytes)
    _same_length("mean_packet_bytes", sizes, len(ths))
    for i, t in enumerate(ths):
        check_nonnegative(f"th_pkts[{i}]", t)
    for i, p in enumerate(sizes):
        check_positive(f"mean_packet_bytes[{i}]", p)
    if math.fsum(ths) <= 0:
        raise ValueError("th_pkts must not all be zero (no class could hold a packet)")
    return ths, sizes


def worst_case_latency_s(link_bps: float, th_pkts: Sequence[float],
                         mean_packet_bytes: Sequence[float]) -> float:
    """Eq 4.2 (= 6.1): the worst-case average queue-induced latency, reached when every class
    holds its threshold: ``L = Σ P_i·Th_i / C`` seconds.

    Table 4.3's thresholds (TCP, multimedia, *other*) give the 100 ms they were computed for:

    >>> round(worst_case_latency_s(PARRIS_LINK_BPS, [39.07, 19.04, 47.63], [1507, 807, 1075]), 3)
    0.1
    """
    check_positive("link_bps", link_bps)
    ths, sizes = _check_thresholds(th_pkts, mean_packet_bytes)
    return math.fsum(t * p for t, p in zip(ths, sizes)) / (link_bps / 8)


def shares_from_thresholds(th_pkts: Sequence[float],
                           mean_packet_bytes: Sequence[float]) -> tuple[float, ...]:
    """Eq 4.10 (second form): a class's share of the link under congestion is its share of the
    queued bytes, ``s_i = P_i·Th_i / Σ_j P_j·Th_j``.

    The occupancy example of §IV.5.2 (1000, 2000 and 7000 bytes queued):

    >>> shares_from_thresholds([1000, 2000, 7000], [1, 1, 1])
    (0.1, 0.2, 0.7)
    """
    ths, sizes = _check_thresholds(th_pkts, mean_packet_bytes)
    total = math.fsum(t * p for t, p in zip(ths, sizes))
    return tuple(t * p / total for t, p in zip(ths, sizes))


def allocations_from_thresholds(link_bps: float, th_pkts: Sequence[float],
                                mean_packet_bytes: Sequence[float]) -> tuple[float, ...]:
    """Eq 4.3 (= 6.2): the bandwidth each class gets when every class holds its threshold
    (link busy), ``B_i = C·P_i·Th_i / Σ_j P_j·Th_j``, in the unit of ``link_bps``. Sums to C.

    The naive-ratio warning of §IV.4: equal thresholds for BULK (1499 B) and Proshare (728 B)
    packets give about 2:1 bandwidth, not 1:1:

    >>> bulk, proshare = allocations_from_thresholds(1.0, [10, 10], [1499, 728])
    >>> round(bulk / proshare, 2)
    2.06
    """
    check_positive("link_bps", link_bps)
    return tuple(link_bps * s for s in shares_from_thresholds(th_pkts, mean_packet_bytes))


def configure(link_bps: float, classes: Sequence[ClassSpec], target_latency_s: float, *,
              responsive_th_min_pkts: float = RESPONSIVE_TH_MIN_PKTS,
              responsive_max_p: float = RESPONSIVE_MAX_P) -> list[ClassThresholds]:
    """The CBT configurator (§IV.4, Table B.13): per-class thresholds and drain rates for a link
    of ``link_bps`` bit/s, the ``classes`` (:class:`ClassSpec`, each with a mean packet size and
    an allocation as a rate or a share of the link) and a target average worst-case queueing
    latency ``target_latency_s``.

    * ThMax = ``B·L/P`` (Eq 4.1/4.9); with Σ B = C the classes fill the queue to exactly L
      (Eq 4.2), and each gets B when all are saturated (Eq 4.3). If the allocations leave part of
      the link unallocated, the worst case is ``L·Σ B/C`` < L and each saturated class gets
      ``C·B/Σ B`` > B (CBT enforces ratios).
    * Unresponsive classes: ThMin = ThMax, ``max_p = None`` (enqueue or forced drop only).
    * Responsive classes: ThMin = ``min(responsive_th_min_pkts, ThMax)`` (5, RED's rule of thumb;
      if ThMax is below it the early-drop band vanishes) and ``max_p = responsive_max_p`` (1/10).
    * Drain rate ``B/P`` packets/s (Fig. 4.6).

    Raises ValueError for an empty class list, duplicate names, a class with both or neither of
    rate/share, non-positive packet sizes, rates, shares or latency, or allocations that sum to
    more than the link.

    Table 5.2's BULK-MPEG row (C = 1225 KB/s, L = 100 ms):

    >>> kb = kib_per_s_to_bps
    >>> cfg = configure(PARRIS_LINK_BPS, [ClassSpec("other", 1075, rate_bps=kb(150)),
    ...                                   ClassSpec("mm", 807, rate_bps=kb(205)),
    ...                                   ClassSpec("tcp", 1507, rate_bps=kb(870), responsive=True)],
    ...                 0.1)
    >>> [(c.name, round(c.th_min_pkts, 2), round(c.th_max_pkts, 2)) for c in cfg]
    [('other', 14.29, 14.29), ('mm', 26.01, 26.01), ('tcp', 5.0, 59.12)]
    >>> round(cfg[2].drain_rate_pps, 1), cfg[2].max_p, cfg[0].max_p
    (591.2, 0.1, None)
    """
    check_positive("link_bps", link_bps)
    check_positive("target_latency_s", target_latency_s)
    check_nonnegative("responsive_th_min_pkts", responsive_th_min_pkts)
    _check_fraction("responsive_max_p", responsive_max_p)
    specs = _as_list("classes", classes)  # type: ignore[arg-type]
    rates: list[float] = []
    names: set[str] = set()
    for i, spec in enumerate(specs):
        where = f"classes[{i}]"
        if not isinstance(spec, ClassSpec):
            raise ValueError(f"{where} must be a ClassSpec, got {spec!r}")
        if spec.name in names:
            raise ValueError(f"{where}.name {spec.name!r} is a duplicate; class names must be unique")
        names.add(spec.name)
        check_positive(f"{where}.mean_packet_bytes", spec.mean_packet_bytes)
        if (spec.rate_bps is None) == (spec.share is None):
            raise ValueError(f"{where} must give exactly one of rate_bps or share, "
                             f"got rate_bps={spec.rate_bps!r}, share={spec.share!r}")
        if spec.share is not None:
            _check_fraction(f"{where}.share", spec.share)
            rates.append(spec.share * link_bps)
        else:
            check_positive(f"{where}.rate_bps", spec.rate_bps)  # type: ignore[arg-type]
            rates.append(float(spec.rate_bps))  # type: ignore[arg-type]
    total = math.fsum(rates)
    if total > link_bps * (1 + _REL_TOL):
        raise ValueError(f"classes allocate {total!r} bit/s in all, exceeding link_bps = "
                         f"{link_bps!r}; the allocations (rates and shares) must fit in the link")
    out = []
    for spec, rate in zip(specs, rates):
        th_max = threshold_pkts(rate, spec.mean_packet_bytes, target_latency_s)
        if spec.responsive:
            th_min, max_p = min(responsive_th_min_pkts, th_max), responsive_max_p
        else:
            th_min, max_p = th_max, None
        out.append(ClassThresholds(spec.name, rate, rate / link_bps, float(spec.mean_packet_bytes),
                                   th_min, th_max, max_p,
                                   drain_rate_pps(rate, spec.mean_packet_bytes)))
    return out


# --------------------------------------------------------------------------- predictor

def _check_loads(loads_bps: Sequence[float], n: int) -> list[float]:
    loads = _as_list("loads_bps", loads_bps)
    _same_length("loads_bps", loads, n)
    for i, x in enumerate(loads):
        _check_load(f"loads_bps[{i}]", x)
    return [float(x) for x in loads]


def excess(allocations_bps: Sequence[float], loads_bps: Sequence[float]) -> tuple[float, ...]:
    """Eq 4.12: the allocation each class leaves unused, ``E_i = max(B_i − Load_i, 0)`` (any
    one rate unit; a load of ``math.inf`` means unlimited demand).

    Table 4.8, 42–90 s (TCP and MPEG saturated, *other* idle), in KB/s:

    >>> excess([575, 150, 500], [1600, 340, 0])
    (0.0, 0.0, 500.0)
    """
    alloc = _as_list("allocations_bps", allocations_bps)
    for i, b in enumerate(alloc):
        check_nonnegative(f"allocations_bps[{i}]", b)
    loads = _check_loads(loads_bps, len(alloc))
    return tuple(max(b - x, 0.0) for b, x in zip(alloc, loads))


def first_reallocation(link_bps: float, allocations_bps: Sequence[float],
                       loads_bps: Sequence[float]) -> tuple[float, ...]:
    """Eq 4.16 (and Eq 4.13, its one-donor case ``B_j + s_j/(1 − s_i)·(B_i − Load_i)``): one
    pass of borrowing, before any clipping. Donors (``B_i > Load_i``) drop to their load;
    receivers (``B_j < Load_j``) add ``s_j/Σ_{recv} s · Σ_{donors}(B_i − Load_i)``; the others keep
    B. Shares are ``s = B/Σ B`` (= B/C when the allocations fill the link). A receiver may end
    above its load, which :func:`predict_throughput` then redistributes.

    Table 4.7, iteration 1 (KB/s):

    >>> [round(b, 2) for b in first_reallocation(1225, [935, 140, 150], [700, 160, 1000])]
    [700.0, 253.45, 271.55]
    """
    alloc = _check_allocations(link_bps, allocations_bps)
    loads = _check_loads(loads_bps, len(alloc))
    b = _effective(link_bps, alloc)
    shares = [x / math.fsum(alloc) for x in alloc]
    e = math.fsum(bi - li for bi, li in zip(b, loads) if bi > li)
    s = math.fsum(si for si, bi, li in zip(shares, b, loads) if bi < li)
    out = []
    for bi, li, si in zip(b, loads, shares):
        if bi > li:
            out.append(li)
        elif bi < li and s > 0:
            out.append(bi + si / s * e)
        else:
            out.append(bi)
    return tuple(out)


def _effective(link_bps: float, alloc: list[float]) -> list[float]:
    """Allocations scaled to fill the link (CBT enforces ratios; identity when Σ B = C)."""
    total = math.fsum(alloc)
    if abs(total - link_bps) <= _REL_TOL * link_bps:
        return list(alloc)
    return [link_bps * b / total for b in alloc]


def _step(rates: list[float], loads: list[float]) -> IterationStep:
    return IterationStep(tuple(rates), tuple(max(r - x, 0.0) for r, x in zip(rates, loads)))


def _iterate(link_bps: float, alloc: list[float], loads: list[float],
             literal: bool) -> tuple[list[float], list[IterationStep]]:
    shares = [b / math.fsum(alloc) for b in alloc]
    b = _effective(link_bps, alloc)
    steps = [_step(b, loads)]
    for _ in range(2 * len(b) + 2):            # converges in <= N + 1 passes (§IV.5.2.1)
        donors = [i for i, (bi, li) in enumerate(zip(b, loads)) if bi > li]
        if not donors:                         # Eq 4.18: every B′ <= Load
            break
        receivers = [j for j, (bj, lj) in enumerate(zip(b, loads)) if bj < lj]
        s = math.fsum(shares[j] for j in receivers)
        if not receivers or s <= 0:            # Σ Load < C: nobody can use the excess
            b = [min(bi, li) for bi, li in zip(b, loads)]
            steps.append(_step(b, loads))
            break
        e = math.fsum(b[i] - loads[i] for i in donors)
        if literal:
            # Eq 4.17 as printed, applied to every class: donors and exactly provisioned classes
            # end at their load, and receivers are clipped at their load (their overshoot lost).
            b = [min(lj, bj + shares[j] / s * e) for j, (bj, lj) in enumerate(zip(b, loads))]
        else:
            # Table 4.7's procedure: donors drop to their load; receivers take the excess in
            # proportion to their original shares, overshoot included (redistributed next pass).
            b = list(b)
            for i in donors:
                b[i] = loads[i]
            for j in receivers:
                b[j] += shares[j] / s * e
        steps.append(_step(b, loads))
    else:  # pragma: no cover - guarded by the convergence argument above
        raise RuntimeError("reallocation did not converge")
    return b, steps


def _max_min(link_bps: float, alloc: list[float], loads: list[float]) -> list[float]:
    if math.fsum(loads) <= link_bps:
        return list(loads)
    order = sorted(range(len(alloc)), key=lambda j: loads[j] / alloc[j])
    remaining, weight = link_bps, math.fsum(alloc)
    for j in order:                            # water-filling: the level R/W only rises
        if loads[j] <= remaining / weight * alloc[j]:
            remaining -= loads[j]
            weight -= alloc[j]
        else:
            break
    level = remaining / weight
    return [min(lj, level * bj) for bj, lj in zip(alloc, loads)]


def _factor(alloc: list[float], rates: list[float], loads: list[float]) -> float:
    saturated = [j for j, (r, x) in enumerate(zip(rates, loads)) if x > r * (1 + 1e-12)]
    if not saturated:
        return math.inf
    j = max(saturated, key=lambda k: loads[k] / rates[k] if rates[k] > 0 else math.inf)
    return rates[j] / alloc[j]


def predict_throughput(link_bps: float, allocations_bps: Sequence[float],
                       loads_bps: Sequence[float], *, method: str = "corrected") -> Reallocation:
    """The predicted throughput B′ of each class (§IV.5.2.1, Eqs 4.12–4.18) when some classes
    under-use their allocations: their unused allocation is borrowed by the saturated classes in
    proportion to their original allocations.

    ``link_bps``, ``allocations_bps`` and ``loads_bps`` are in one rate unit (bit/s here; the
    result is homogeneous, so KB/s works too); a load of ``math.inf`` means unlimited demand. The
    allocations must be positive and fit in the link. ``method``:

    * ``"corrected"`` (default): the iteration that reproduces Table 4.7 (digest §3.3): donors
      drop to their load, receivers share the excess by their original shares, and a receiver's
      overshoot is redistributed at the next pass.
    * ``"literal"``: Eq 4.17 as printed, ``B′_{j,k} = min(Load_j, B′_{j,k−1} + s_j/Σ s · E)``,
      which also clips receivers and so loses their overshoot (erratum 10): on Table 4.6 it
      predicts 271.55 KB/s for *other* instead of 365, and leaves 93.45 KB/s of the link unused.
    * ``"max-min"``: the closed form ``B′_j = min(Load_j, f·B_j)`` with f such that
      ``Σ B′ = C`` (``B′ = Load`` if ``Σ Load ≤ C``), i.e. weighted max-min fairness; it equals
      the corrected iteration.

    Table 4.6 → 4.7 (KB/s):

    >>> [round(b, 2) for b in predict_throughput(1225, [935, 140, 150], [700, 160, 1000]).rates]
    [700.0, 160.0, 365.0]
    >>> [round(b, 2) for b in predict_throughput(1225, [935, 140, 150], [700, 160, 1000],
    ...                                          method="literal").rates]
    [700.0, 160.0, 271.55]
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    alloc = _check_allocations(link_bps, allocations_bps)
    loads = _check_loads(loads_bps, len(alloc))
    if method == "max-min":
        rates, steps = _max_min(link_bps, alloc, loads), []
    else:
        rates, steps = _iterate(link_bps, alloc, loads, literal=(method == "literal"))
    return Reallocation(tuple(rates), _factor(alloc, rates, loads), tuple(steps), method)


def latency_from_threshold_s(th_pkts: float, mean_packet_bytes: float, rate_bps: float) -> float:
    """Eq 4.26/4.27: the time a saturated class's threshold worth of bytes takes to drain at
    its (re)allocated rate, ``Th·P/B′`` seconds; with B′ = B it is the target L.

    Table 4.9 with the dissertation's mixed units (B′ = 253 "KB/s" read as 253,000 B/s):

    >>> round(latency_from_threshold_s(19.04, 807, 253_000 * 8) * 1e3, 1)
    60.7
    """
    check_nonnegative("th_pkts", th_pkts)
    check_positive("mean_packet_bytes", mean_packet_bytes)
    check_positive("rate_bps", rate_bps)
    return th_pkts * mean_packet_bytes / (rate_bps / 8)


def predict_latency(link_bps: float, allocations_bps: Sequence[float],
                    loads_bps: Sequence[float], target_latency_s: float, *,
                    method: str = "corrected") -> float:
    """The predicted average queue-induced latency L′ (§IV.5.2.3, Eq 4.27) of a CBT queue
    configured with Eq 4.1 thresholds (``Th_i·P_i = B_i·L``) for ``target_latency_s`` = L:
    every class still saturated after reallocation (``Load_i > B′_i``) holds its threshold, so
    ``L′ = Th_i·P_i/B′_i = L·B_i/B′_i = L/f`` with f the scale-up of :func:`predict_throughput`
    (``method`` as there). If no class is saturated the link is under-used and L′ = 0.

    Table 4.9 (42–90 s: *other* idle, TCP and MPEG saturated), in consistent units (KB/s):

    >>> round(predict_latency(1225, [575, 150, 500], [1600, 340, 0], 0.1) * 1e3, 1)
    59.2
    """
    check_positive("target_latency_s", target_latency_s)
    realloc = predict_throughput(link_bps, allocations_bps, loads_bps, method=method)
    return target_latency_s / realloc.factor


# --------------------------------------------------------------------------- other equations

def queue_latency_s(mean_packet_bytes: float, queue_pkts: float, link_bps: float) -> float:
    """Eq B.1 (FIFO, queue = maxq) and Eq B.3 (RED, queue = ThMax): the queue-induced latency
    of a standing queue, ``packet_size·queue/C`` seconds.

    App. B §2: 1500-byte packets at 10 Mb/s cost 1.2 ms per queued packet:

    >>> round(queue_latency_s(1500, 1, 10e6) * 1e3, 3)
    1.2
    """
    check_positive("mean_packet_bytes", mean_packet_bytes)
    check_nonnegative("queue_pkts", queue_pkts)
    check_positive("link_bps", link_bps)
    return mean_packet_bytes * queue_pkts / (link_bps / 8)


def traffic_intensity(mean_packet_bytes: float, arrival_rate_pps: float, link_bps: float) -> float:
    """§I.1: traffic intensity ``L·a/R``, bytes arriving per byte the link can send (L mean
    bytes per packet, a packets/s, R the link in bytes/s).

    >>> traffic_intensity(1250, 1000, 10e6)
    1.0
    """
    check_positive("mean_packet_bytes", mean_packet_bytes)
    check_nonnegative("arrival_rate_pps", arrival_rate_pps)
    check_positive("link_bps", link_bps)
    return mean_packet_bytes * arrival_rate_pps / (link_bps / 8)


def periodic_burst_queue(burst_pkts: float, mean_packet_bytes: float, link_bps: float) -> BurstQueue:
    """§I.1: bursts of N packets arriving every ``(L/R)·N`` s (intensity 1 on average) keep a mean
    backlog of ``(N − 1)/2·L`` bytes and make each packet wait ``(N − 1)/2·L/R`` s on average.

    >>> q = periodic_burst_queue(11, 1250, 10e6)
    >>> q.backlog_bytes, round(q.wait_s * 1e3, 3)
    (6250.0, 5.0)
    """
    check_real("burst_pkts", burst_pkts)
    if not 1 <= burst_pkts < math.inf:
        raise ValueError(f"burst_pkts must be at least one packet, i.e. in [1, inf), got {burst_pkts!r}")
    check_positive("mean_packet_bytes", mean_packet_bytes)
    check_positive("link_bps", link_bps)
    backlog = (burst_pkts - 1) / 2 * mean_packet_bytes
    return BurstQueue(backlog, backlog / (link_bps / 8))


def tcp_friendly_rate(max_packet_bytes: float, rtt_s: float, loss: float) -> float:
    """Eq 2.1 [Floyd98, as used by LDA]: the rate of a TCP with maximum packet length M, round
    trip time RTT and lifetime loss rate l, ``1.22·M/(RTT·√l)`` bytes/s.

    >>> round(tcp_friendly_rate(1500, 0.1, 0.01))
    183000
    """
    check_positive("max_packet_bytes", max_packet_bytes)
    check_positive("rtt_s", rtt_s)
    check_real("loss", loss)
    if not 0 < loss <= 1:
        raise ValueError(f"loss must be a loss rate in (0, 1], got {loss!r}")
    return 1.22 * max_packet_bytes / (rtt_s * math.sqrt(loss))


def floyd_fall_rate_bound(max_packet_bytes: float, min_rtt_s: float, drop_rate: float) -> float:
    """Eq 3.1 (Floyd & Fall's TCP-friendliness test): a TCP's sending rate is at most
    ``1.5·√(2/3)·B/(R·√p)`` bytes/s (B maximum packet size, R minimum RTT, p drop rate).

    >>> round(floyd_fall_rate_bound(1500, 0.1, 0.01))
    183712
    """
    check_positive("max_packet_bytes", max_packet_bytes)
    check_positive("min_rtt_s", min_rtt_s)
    check_real("drop_rate", drop_rate)
    if not 0 < drop_rate <= 1:
        raise ValueError(f"drop_rate must be a drop rate in (0, 1], got {drop_rate!r}")
    return 1.5 * math.sqrt(2 / 3) * max_packet_bytes / (min_rtt_s * math.sqrt(drop_rate))


def red_base_probability(avg_pkts: float, th_min_pkts: float, th_max_pkts: float,
                         max_p: float) -> float:
    """RED Eq 3.1 (CBT Fig. 4.5): ``p_b = max_p·(avg − ThMin)/(ThMax − ThMin)`` for an average
    in the early-drop band ``ThMin < avg ≤ ThMax``, 0 below it and 1 above ThMax (forced drop).

    Digest §3.6 (ThMin 5, ThMax 40, max_p 0.1):

    >>> round(red_base_probability(22.5, 5, 40, 0.1), 5)
    0.05
    """
    check_nonnegative("avg_pkts", avg_pkts)
    check_nonnegative("th_min_pkts", th_min_pkts)
    check_nonnegative("th_max_pkts", th_max_pkts)
    if th_max_pkts < th_min_pkts:
        raise ValueError(f"th_max_pkts must be >= th_min_pkts = {th_min_pkts!r}, got {th_max_pkts!r}")
    _check_fraction("max_p", max_p, closed_low=True)
    if avg_pkts <= th_min_pkts:
        return 0.0
    if avg_pkts > th_max_pkts:
        return 1.0
    return max_p * (avg_pkts - th_min_pkts) / (th_max_pkts - th_min_pkts)


def red_drop_probability(pb: float, count: int) -> float:
    """RED Eq 3.2: the drop probability after ``count`` arrivals since the last drop,
    ``p_a = p_b/(1 − count·p_b)``, taken as 1 once ``count·p_b ≥ 1`` (erratum 4: the printed
    formula blows up or goes negative there).

    >>> round(red_drop_probability(0.05, 10), 3), red_drop_probability(0.05, 20)
    (0.1, 1.0)
    """
    _check_fraction("pb", pb, closed_low=True)
    check_real("count", count)
    if count < 0:
        raise ValueError(f"count must be a non-negative number of arrivals, got {count!r}")
    denom = 1 - count * pb
    return 1.0 if denom <= 0 else min(1.0, pb / denom)


def ewma_update(avg_pkts: float, sample_pkts: float, weight: float) -> float:
    """The per-class average of Fig. 4.6 (and RED's): ``(1 − w)·avg + w·sample``, sampled on
    each arrival of the class before the packet is enqueued.

    Digest §3.6: the *other* class (w = 1/4) with 20 packets queued, from 0:

    >>> avg = 0.0
    >>> for _ in range(5):
    ...     avg = ewma_update(avg, 20, 0.25)
    >>> round(avg, 4)
    15.2539
    """
    check_nonnegative("avg_pkts", avg_pkts)
    check_nonnegative("sample_pkts", sample_pkts)
    _check_weight(weight)
    return (1 - weight) * avg_pkts + weight * sample_pkts


def idle_samples(drain_rate_pps: float, idle_s: float) -> int:
    """Fig. 4.6: the number of zero samples an empty class's average is decayed by,
    ``n = trunc(idle·drain_rate − 1)``, clamped at 0 (erratum 5).

    >>> idle_samples(591.2, 0.1)
    58
    """
    check_positive("drain_rate_pps", drain_rate_pps)
    check_nonnegative("idle_s", idle_s)
    return max(0, math.trunc(idle_s * drain_rate_pps - 1))


def idle_decay(avg_pkts: float, weight: float, drain_rate_pps: float, idle_s: float) -> float:
    """Fig. 4.6: the average of a class that has had nothing queued for ``idle_s`` seconds,
    ``(1 − w)^n·avg`` with n from :func:`idle_samples` (the class's own drain rate, not the
    link's).

    Digest §3.6, TCP class (w = 1/256, 591.2 pkt/s), average 40, idle 100 ms:

    >>> round(idle_decay(40, 1 / 256, 591.2, 0.1), 3)
    31.877
    """
    check_nonnegative("avg_pkts", avg_pkts)
    _check_weight(weight)
    return (1 - weight) ** idle_samples(drain_rate_pps, idle_s) * avg_pkts


def burst_average(burst_pkts: int, weight: float, *, pre_enqueue: bool = False) -> float:
    """Eq B.2 [Floyd93]: the average after a burst of L packets into an idle queue whose average
    starts at 0, ``L + 1 + ((1 − w)^(L+1) − 1)/w`` (samples 1..L, i.e. taken after each enqueue).
    ``pre_enqueue=True`` takes the samples before each enqueue (0..L−1), as CBT and the
    dissertation's RED do, which is the same formula for L − 1.

    App. B §3.2: a 158-packet burst with w = 1/256 ("40.39 packets"):

    >>> round(burst_average(158, 1 / 256), 3), round(burst_average(158, 1 / 256, pre_enqueue=True), 2)
    (40.396, 39.93)
    """
    check_real("burst_pkts", burst_pkts)
    if not (0 <= burst_pkts < math.inf and float(burst_pkts).is_integer()):
        raise ValueError(f"burst_pkts must be a whole number of packets >= 0, got {burst_pkts!r}")
    _check_weight(weight)
    n = int(burst_pkts) - (1 if pre_enqueue else 0)
    if n <= 0:
        return 0.0
    return n + 1 + ((1 - weight) ** (n + 1) - 1) / weight
