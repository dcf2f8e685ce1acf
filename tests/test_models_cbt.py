"""The CBT configurator and predictor (aqmlab.models.cbt) against every worked number in the
digests shared/specs/seed000-cbt-algorithms.md §3 (Tables 4.3, 4.6–4.9, B.16–B.22, eqs. B.2,
B.5 and the other worked examples of §3.2–3.6) and seed000-cbt-evaluation.md §4.5 (Tables 5.2,
5.3) and §5.13, plus property tests and input checks.

Tolerances. A printed number is only known to its last printed digit, so a check accepts half a
unit of that digit (``printed("19.04")`` accepts ±0.005; ``printed("972")`` ±0.5), derived from the
string. The threshold tables were computed from *measured*, non-integer packet sizes that the
dissertation prints rounded to the byte, so a threshold reproduces if it is consistent with some
packet size within half a byte of the printed one (``consistent_with_sizes``; the model is
evaluated at both ends of that interval). A second test shows that one packet size per mix and
class, within half a byte of the printed one, reproduces every threshold of its column to half a
unit. Where the digest or the dissertation *truncates* ("40.39" for 40.396, "≈66 %" for 66.7 %),
the check says so and accepts ``[x, x + unit)``. Numbers that still do not reproduce are
``xfail(strict=True)`` with the reason.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aqmlab.models.cbt import (
    KIB,
    METHODS,
    PARRIS_LINK_BPS,
    RESPONSIVE_MAX_P,
    RESPONSIVE_TH_MIN_PKTS,
    ClassSpec,
    ClassThresholds,
    allocations_from_thresholds,
    bps_to_kib_per_s,
    burst_average,
    configure,
    drain_rate_pps,
    ewma_update,
    excess,
    first_reallocation,
    floyd_fall_rate_bound,
    idle_decay,
    idle_samples,
    kib_per_s_to_bps,
    latency_from_threshold_s,
    periodic_burst_queue,
    predict_latency,
    predict_throughput,
    queue_latency_s,
    red_base_probability,
    red_drop_probability,
    shares_from_thresholds,
    tcp_friendly_rate,
    threshold_pkts,
    thresholds_general_pkts,
    traffic_intensity,
    worst_case_latency_s,
)

kb = kib_per_s_to_bps          # the dissertation's KB/s (1024 B) -> bit/s
C = PARRIS_LINK_BPS            # 1225 KB/s


# --------------------------------------------------------------------------- tolerance helpers

def unit(text: str) -> float:
    """One unit in the last printed digit ("19.04" -> 0.01, "972" -> 1, "125,445" -> 1)."""
    exponent = Decimal(text.replace(",", "")).as_tuple().exponent
    assert isinstance(exponent, int)
    return 10.0 ** exponent


def half_unit(text: str) -> float:
    """Half a unit in the last printed digit ("19.04" -> 0.005, "972" -> 0.5)."""
    return 0.5 * unit(text)


def printed(text: str):
    """pytest.approx accepting every value that rounds to ``text`` (plus float round-off)."""
    return pytest.approx(float(text.replace(",", "")), rel=1e-12, abs=half_unit(text) * (1 + 1e-9))


def truncated(text: str, value: float) -> bool:
    """True if ``value`` truncates (rather than rounds) to ``text``: value in [x, x + unit)."""
    x = float(text.replace(",", ""))
    return x - 1e-12 <= value < x + unit(text)


def consistent_with_sizes(th_text: str, rate_kib: float, size_text: str, latency_s: float) -> bool:
    """True if the printed threshold ``th_text`` is the model's Eq 4.1 threshold, rounded to the
    printed digit, for some packet size within half a byte of the printed ``size_text``."""
    p, h = float(size_text), half_unit(size_text)
    lo = threshold_pkts(kb(rate_kib), p + h, latency_s)      # Th falls as P grows
    hi = threshold_pkts(kb(rate_kib), p - h, latency_s)
    th, th_h = float(th_text), half_unit(th_text) * (1 + 1e-9)
    return th - th_h <= hi and th + th_h >= lo


def test_helpers_read_the_printed_precision():
    assert half_unit("19.04") == pytest.approx(0.005)
    assert half_unit("972") == 0.5
    assert half_unit("125,445") == 0.5
    assert half_unit("0.100") == pytest.approx(5e-4)
    assert truncated("40.39", 40.396) and not truncated("40.39", 40.40)
    assert 19.0335 != printed("19.04")
    assert consistent_with_sizes("19.04", 150, "807", 0.1)          # needs P ≈ 806.5–806.9
    assert not consistent_with_sizes("26.06", 205, "807", 0.1)


# --------------------------------------------------------------------------- threshold tables

# Measured mean packet sizes incl. headers, (TCP, MM, other) bytes: Tables B.15/B.17/B.19/B.21.
# Table 4.3 (the Ch. IV illustrative BULK + MPEG experiment) prints the BULK-MPEG sizes, and its
# thresholds fit the same measured sizes as Table B.18's, so it is grouped with BULK-MPEG.
SIZES = {
    "HTTP-MPEG": ("1053", "889", "1075"),
    "BULK-MPEG": ("1507", "807", "1075"),
    "HTTP-Proshare": ("1061", "738", "1075"),
    "BULK-Proshare": ("1468", "757", "1075"),
}
CLASSES = ("other", "mm", "tcp")

# Rows (B_other, B_mm, B_TCP in KB/s -> Th_other, Th_mm, Th_TCP printed), L = 100 ms.
TABLE_B16 = [
    (150, 220, 855, "14.28", "25.33", "83.15"), (150, 200, 875, "14.28", "23.03", "85.09"),
    (150, 195, 880, "14.28", "22.45", "85.58"), (150, 190, 885, "14.28", "21.87", "86.07"),
    (150, 185, 890, "14.28", "21.30", "86.55"), (150, 180, 895, "14.28", "20.72", "87.04"),
    (150, 160, 915, "14.28", "18.42", "88.98"), (150, 140, 935, "14.28", "16.12", "90.93"),
]
TABLE_B18 = [
    (150, 220, 855, "14.29", "27.93", "58.09"), (150, 210, 865, "14.29", "26.66", "58.77"),
    (150, 205, 870, "14.29", "26.06", "59.11"), (150, 200, 875, "14.29", "25.39", "59.45"),
    (150, 195, 880, "14.29", "24.76", "59.79"), (150, 190, 885, "14.29", "24.12", "60.13"),
    (150, 185, 890, "14.29", "23.49", "60.47"), (150, 180, 895, "14.29", "22.85", "60.81"),
    (150, 160, 915, "14.29", "20.31", "62.17"), (150, 140, 935, "14.29", "17.77", "63.52"),
]
TABLE_B20 = [
    (150, 190, 885, "14.28", "26.35", "85.45"), (150, 170, 905, "14.28", "23.58", "87.38"),
    (150, 165, 910, "14.28", "22.88", "87.87"), (150, 160, 915, "14.28", "22.19", "88.35"),
    (150, 155, 920, "14.28", "21.50", "88.83"), (150, 150, 925, "14.28", "20.80", "89.32"),
    (150, 130, 945, "14.28", "18.03", "91.25"), (150, 110, 965, "14.28", "15.26", "93.18"),
]
TABLE_B22 = [
    (150, 200, 875, "14.29", "27.04", "61.04"), (150, 195, 880, "14.29", "26.36", "61.39"),
    (150, 190, 885, "14.29", "25.69", "61.74"), (150, 185, 890, "14.29", "25.01", "62.09"),
    (150, 180, 895, "14.29", "24.33", "62.44"), (150, 175, 900, "14.29", "23.66", "62.79"),
    (150, 170, 905, "14.29", "22.98", "63.14"), (150, 165, 910, "14.29", "22.31", "63.49"),
    (150, 160, 915, "14.29", "21.63", "63.83"), (150, 155, 920, "14.29", "20.95", "64.18"),
    (150, 150, 925, "14.29", "20.28", "64.53"), (150, 130, 945, "14.29", "17.57", "65.93"),
    (150, 110, 965, "14.29", "14.87", "67.32"),
]
# Table 5.2 (= B.23, L = 100 ms) and Table 5.3 (L = 30 ms), per mix.
TABLE_5_2 = {
    "HTTP-MPEG": (150, 195, 880, "14.28", "22.45", "85.58"),
    "BULK-MPEG": (150, 205, 870, "14.29", "26.06", "59.11"),
    "HTTP-Proshare": (150, 160, 915, "14.28", "22.19", "88.35"),
    "BULK-Proshare": (150, 190, 885, "14.29", "25.69", "61.74"),
}
TABLE_5_3 = {
    "HTTP-MPEG": (150, 195, 880, "4.28", "6.74", "25.67"),
    "BULK-MPEG": (150, 205, 870, "4.29", "7.81", "17.73"),
    "HTTP-Proshare": (150, 160, 915, "4.29", "6.66", "26.50"),
    "BULK-Proshare": (150, 190, 885, "4.29", "7.71", "18.52"),
}
# Table 4.3: (B_other, B_mm, B_TCP) = (500, 150, 575) -> 47.63 / 19.04 / 39.07, L = 100 ms.
TABLE_4_3 = (500, 150, 575, "47.63", "19.04", "39.07")

TABLES = (
    [("B.16", "HTTP-MPEG", 0.1, row) for row in TABLE_B16]
    + [("B.18", "BULK-MPEG", 0.1, row) for row in TABLE_B18]
    + [("B.20", "HTTP-Proshare", 0.1, row) for row in TABLE_B20]
    + [("B.22", "BULK-Proshare", 0.1, row) for row in TABLE_B22]
    + [("5.2", mix, 0.1, row) for mix, row in TABLE_5_2.items()]
    + [("5.3", mix, 0.03, row) for mix, row in TABLE_5_3.items()]
    + [("4.3", "BULK-MPEG", 0.1, TABLE_4_3)]
)

# Table B.18 / 5.2 (= B.23) print Th_mm = 26.06 for BULK-MPEG at 205 KB/s; 205·102.4/807 = 26.01,
# and no packet size within half a byte of 807 gets above 26.03 (26.06 needs P ≈ 805.5).
# Every other BULK-MPEG multimedia threshold, Table 4.3's 19.04 and the 30 ms Table 5.3's 7.81
# fit P ≈ 806.6, which gives 26.03: the printed 26.06 is a typo (3 -> 6).
TYPO_26_06 = "Th_mm = 26.06 (BULK-MPEG, 205 KB/s) does not reproduce: Eq 4.1 gives 26.01 at P = 807 " \
             "and at most 26.03 for P >= 806.5; the rest of the column fits P ≈ 806.6 (-> 26.03): typo"


def _is_typo(mix: str, cls: str, rate: float) -> bool:
    return mix == "BULK-MPEG" and cls == "mm" and rate == 205


def threshold_cases():
    for table, mix, latency, (b_o, b_m, b_t, th_o, th_m, th_t) in TABLES:
        sizes = dict(zip(("tcp", "mm", "other"), SIZES[mix]))
        for cls, rate, th in zip(CLASSES, (b_o, b_m, b_t), (th_o, th_m, th_t)):
            marks = ()
            if _is_typo(mix, cls, rate) and latency == 0.1:
                marks = pytest.mark.xfail(strict=True, reason=TYPO_26_06)
            yield pytest.param(rate, sizes[cls], latency, th, marks=marks,
                               id=f"T{table}-{mix}-{cls}-{rate}KB-{th}")


@pytest.mark.parametrize("rate_kib, size, latency_s, th", list(threshold_cases()))
def test_threshold_tables_reproduce_within_printed_precision(rate_kib, size, latency_s, th):
    """Tables 4.3, B.16, B.18, B.20, B.22, 5.2, 5.3: Eq 4.1 with KB = 1024 reproduces every
    printed threshold to half a unit, given the packet sizes to half a byte."""
    assert consistent_with_sizes(th, rate_kib, size, latency_s), (
        f"Eq 4.1 gives {threshold_pkts(kb(rate_kib), float(size), latency_s):.4f}, printed {th}")


@pytest.mark.parametrize("rate_kib, size, latency_s, th", [p.values for p in threshold_cases()])
def test_threshold_tables_within_the_digests_stated_0_05_pkt(rate_kib, size, latency_s, th):
    # Digest §3.2: "reproduce within ±0.05 pkt" with the printed sizes (26.06 included, 0.048).
    assert abs(threshold_pkts(kb(rate_kib), float(size), latency_s) - float(th)) <= 0.05


def _column_groups():
    """{(mix, class): [(rate, L, printed Th), ...]} over all tables, minus the 26.06 typo."""
    groups: dict[tuple[str, str], list[tuple[float, float, str]]] = {}
    for _, mix, latency, (b_o, b_m, b_t, th_o, th_m, th_t) in TABLES:
        for cls, rate, th in zip(CLASSES, (b_o, b_m, b_t), (th_o, th_m, th_t)):
            if _is_typo(mix, cls, rate) and latency == 0.1:
                continue
            groups.setdefault((mix, cls), []).append((rate, latency, th))
    return groups


# The packet-size interval each column pins down (bytes), for the record: HTTP-MPEG TCP/MM/other
# [1052.94, 1052.97] / [889.42, 889.44] / [1075.38, 1075.50]; BULK-MPEG (with Table 4.3)
# [1507.19, 1507.22] / [806.53, 806.63] / [1074.84, 1075.07]; HTTP-Proshare [1060.51, 1060.52]
# (digest §3.2: "suggests P_http ≈ 1060.5") / [738.30, 738.38] / [1075.25, 1075.38];
# BULK-Proshare [1467.78, 1467.81] / [757.44, 757.49] / [1074.50, 1075.25].
@pytest.mark.parametrize("key, members", list(_column_groups().items()),
                         ids=[f"{m}-{c}" for m, c in _column_groups()])
def test_threshold_columns_fit_one_measured_packet_size(key, members):
    mix, cls = key
    size_text = dict(zip(("tcp", "mm", "other"), SIZES[mix]))[cls]
    lo, hi = float(size_text) - half_unit(size_text), float(size_text) + half_unit(size_text)
    for rate, latency, th in members:          # Th = B·L/P  <=>  P = B·L/Th
        b_l = kb(rate) / 8 * latency
        lo = max(lo, b_l / (float(th) + half_unit(th)))
        hi = min(hi, b_l / (float(th) - half_unit(th)))
    assert lo < hi, f"no packet size within half a byte of {size_text} fits column {key}"
    p = (lo + hi) / 2
    assert round(p) == pytest.approx(float(size_text), abs=1)
    for rate, latency, th in members:
        assert threshold_pkts(kb(rate), p, latency) == printed(th)


def test_table_b18_typo_what_the_model_gives():
    # The digest's "calculated value is 26.01" (P = 807), and Table 5.3's 7.81 at 30 ms is 0.3 × 26.03.
    assert threshold_pkts(kb(205), 807, 0.1) == printed("26.01")
    assert threshold_pkts(kb(205), 806.6, 0.1) == printed("26.03")
    assert threshold_pkts(kb(205), 806.6, 0.03) == printed("7.81")


def test_table_4_3_mm_calculated_value():
    # Digest: "MM B = 150, P = 807 -> 19.04 (calc 19.03)".
    assert threshold_pkts(kb(150), 807, 0.1) == printed("19.03")


@pytest.mark.parametrize("mix", list(TABLE_5_3))
def test_table_5_3_is_table_5_2_times_0_3(mix):
    """Evaluation §4.5: "The 30 ms values are the 100 ms values × 0.3": exactly so for the model;
    for the printed values, to 0.3 × half a unit of Table 5.2 plus half a unit of Table 5.3."""
    row_100, row_30 = TABLE_5_2[mix], TABLE_5_3[mix]
    sizes = dict(zip(("tcp", "mm", "other"), SIZES[mix]))
    for cls, rate, th100, th30 in zip(CLASSES, row_100[:3], row_100[3:], row_30[3:]):
        exact_100 = threshold_pkts(kb(rate), float(sizes[cls]), 0.1)
        assert threshold_pkts(kb(rate), float(sizes[cls]), 0.03) == pytest.approx(0.3 * exact_100)
        if _is_typo(mix, cls, rate):
            continue                            # see test_table_5_3_bulk_mpeg_mm_vs_printed_26_06
        tol = 0.3 * half_unit(th100) + half_unit(th30)
        assert abs(0.3 * float(th100) - float(th30)) <= tol * (1 + 1e-9)


@pytest.mark.xfail(strict=True, reason="0.3 × the printed 26.06 = 7.818, not Table 5.3's 7.81 "
                                       "(which is 0.3 × 26.03): the 26.06 typo again")
def test_table_5_3_bulk_mpeg_mm_vs_printed_26_06():
    assert abs(0.3 * 26.06 - 7.81) <= 0.3 * 0.005 + 0.005


@pytest.mark.parametrize("table, rows, latency_s, expected_ms", [
    ("5.2", list(TABLE_5_2.items()), 0.1, "100.0"),
    ("5.3", list(TABLE_5_3.items()), 0.03, "30.0"),
    ("B.16", [("HTTP-MPEG", r) for r in TABLE_B16], 0.1, "100.0"),
    ("B.18", [("BULK-MPEG", r) for r in TABLE_B18], 0.1, "100.0"),
    ("B.20", [("HTTP-Proshare", r) for r in TABLE_B20], 0.1, "100.0"),
    ("B.22", [("BULK-Proshare", r) for r in TABLE_B22], 0.1, "100.0"),
])
def test_eq_4_2_printed_thresholds_hold_the_target_latency(table, rows, latency_s, expected_ms):
    # Evaluation §4.5: "Σ Th·P / (1225·1024 B/s) = 30.0 ms for every row, and 100.0 ms for
    # Table 5.2" (from the printed thresholds and sizes); the B tables are the same design.
    for mix, (b_o, b_m, b_t, *ths) in rows:
        assert b_o + b_m + b_t == 1225                       # "All these triples sum to 1225 KB/s"
        tcp, mm, other = (float(s) for s in SIZES[mix])
        lat = worst_case_latency_s(C, [float(t) for t in ths], [other, mm, tcp])
        assert lat * 1e3 == printed(expected_ms)
        # ... and exactly the target with the model's own thresholds (Eq 4.2 ∘ Eq 4.1).
        exact = [threshold_pkts(kb(b), p, latency_s) for b, p in ((b_o, other), (b_m, mm), (b_t, tcp))]
        assert worst_case_latency_s(C, exact, [other, mm, tcp]) == pytest.approx(latency_s, rel=1e-12)


def test_table_4_3_check_with_eq_4_2():
    # Digest §3.2: "Check with eq. 4.2: Σ P·Th = 125,445 B; /(1225·1024 B/s) = 0.100 s".
    ths, sizes = [39.07, 19.04, 47.63], [1507, 807, 1075]
    assert worst_case_latency_s(C, ths, sizes) == printed("0.100")
    # Exact thresholds: exactly L·C = 0.1 s × 1225 KB/s = 125,440 B.
    exact = [threshold_pkts(kb(b), p, 0.1) for b, p in zip((575, 150, 500), sizes)]
    assert worst_case_latency_s(C, exact, sizes) * C / 8 == pytest.approx(125_440)


@pytest.mark.xfail(strict=True, reason="Σ P·Th of the printed Table 4.3 thresholds is 125,446.02 B "
                                       "(exact thresholds: 125,440 B); the digest's 125,445 is an "
                                       "arithmetic slip. The derived 0.100 s reproduces.")
def test_table_4_3_sum_of_queued_bytes_as_printed_in_the_digest():
    ths, sizes = [39.07, 19.04, 47.63], [1507, 807, 1075]
    assert worst_case_latency_s(C, ths, sizes) * C / 8 == printed("125,445")


def test_eq_b_5_worked_example():
    # 185 KB/s · 0.1 s / (889 B / 1024) = 21.3 packets.
    assert threshold_pkts(kb(185), 889, 0.1) == printed("21.3")


def test_configure_reproduces_table_5_2_rows_through_the_api():
    for mix, (b_o, b_m, b_t, th_o, th_m, th_t) in TABLE_5_2.items():
        tcp, mm, other = (float(s) for s in SIZES[mix])
        cfg = configure(C, [ClassSpec("other", other, rate_bps=kb(b_o)),
                            ClassSpec("mm", mm, rate_bps=kb(b_m)),
                            ClassSpec("tcp", tcp, rate_bps=kb(b_t), responsive=True)], 0.1)
        assert [c.name for c in cfg] == ["other", "mm", "tcp"]
        assert all(isinstance(c, ClassThresholds) for c in cfg)
        for c, th, size in zip(cfg, (th_o, th_m, th_t), SIZES[mix][::-1]):
            if not (mix == "BULK-MPEG" and c.name == "mm"):
                assert consistent_with_sizes(th, bps_to_kib_per_s(c.rate_bps), size, 0.1)
            assert c.th_max_pkts == threshold_pkts(c.rate_bps, c.mean_packet_bytes, 0.1)
        other_c, mm_c, tcp_c = cfg
        # Table B.13: ThMin = ThMax (no early drops) for the unresponsive classes; TCP 5 and 1/10.
        assert other_c.th_min_pkts == other_c.th_max_pkts and other_c.max_p is None
        assert mm_c.th_min_pkts == mm_c.th_max_pkts and mm_c.max_p is None
        assert tcp_c.th_min_pkts == RESPONSIVE_TH_MIN_PKTS == 5 and tcp_c.max_p == RESPONSIVE_MAX_P == 0.1
        assert sum(c.share for c in cfg) == pytest.approx(1.0)


def test_configure_with_shares_equals_rates():
    by_rate = configure(C, [ClassSpec("tcp", 1507, rate_bps=kb(575), responsive=True),
                            ClassSpec("mm", 807, rate_bps=kb(150)),
                            ClassSpec("other", 1075, rate_bps=kb(500))], 0.1)
    by_share = configure(C, [ClassSpec("tcp", 1507, share=575 / 1225, responsive=True),
                             ClassSpec("mm", 807, share=150 / 1225),
                             ClassSpec("other", 1075, share=500 / 1225)], 0.1)
    for a, b in zip(by_rate, by_share):
        assert a.th_max_pkts == pytest.approx(b.th_max_pkts, rel=1e-12)
        assert a.rate_bps == pytest.approx(b.rate_bps, rel=1e-12)
    # Table 4.3 through the API.
    for c, th in zip(by_rate, ("39.07", "19.04", "47.63")):
        size = {"tcp": "1507", "mm": "807", "other": "1075"}[c.name]
        assert consistent_with_sizes(th, bps_to_kib_per_s(c.rate_bps), size, 0.1)


def test_configure_small_tcp_threshold_collapses_the_early_drop_band():
    # ThMax below RED's ThMin = 5: ThMin is lowered to ThMax (no early-drop band, no th_min > th_max).
    (tcp,) = configure(C, [ClassSpec("tcp", 1500, share=0.1, responsive=True)], 0.01)
    assert tcp.th_max_pkts < 5 and tcp.th_min_pkts == tcp.th_max_pkts


# §2.7.2 derived drain rates (pkts/s), other/MM/TCP, for the Table 5.2 configurations; Table 4.3
# TCP/MM/other 390.7/190.3/476.3.
DRAIN_RATES = {
    "HTTP-MPEG": ("142.9", "224.6", "855.8"),
    "BULK-MPEG": ("142.9", "260.1", "591.2"),
    "HTTP-Proshare": ("142.9", "222.0", "883.1"),
    "BULK-Proshare": ("142.9", "257.0", "617.3"),
}


@pytest.mark.parametrize("mix", list(DRAIN_RATES))
def test_drain_rates_of_the_table_5_2_configurations(mix):
    b_o, b_m, b_t = TABLE_5_2[mix][:3]
    tcp, mm, other = (float(s) for s in SIZES[mix])
    for rate, size, expected in zip((b_o, b_m, b_t), (other, mm, tcp), DRAIN_RATES[mix]):
        assert drain_rate_pps(kb(rate), size) == printed(expected)
    cfg = configure(C, [ClassSpec("other", other, rate_bps=kb(b_o)),
                        ClassSpec("mm", mm, rate_bps=kb(b_m)),
                        ClassSpec("tcp", tcp, rate_bps=kb(b_t), responsive=True)], 0.03)
    assert [c.drain_rate_pps for c in cfg] == [printed(x) for x in DRAIN_RATES[mix]]


def test_drain_rates_of_table_4_3():
    for rate, size, expected in ((575, 1507, "390.7"), (150, 807, "190.3"), (500, 1075, "476.3")):
        assert drain_rate_pps(kb(rate), size) == printed(expected)


# --------------------------------------------------------------------------- §3.2 relations

def test_eq_4_3_and_4_10_allocations_from_thresholds():
    # Thresholds computed from allocations give the allocations back (Eq 4.3 inverts Eq 4.1).
    rates, sizes = [kb(575), kb(150), kb(500)], [1507, 807, 1075]
    ths = [threshold_pkts(b, p, 0.1) for b, p in zip(rates, sizes)]
    assert allocations_from_thresholds(C, ths, sizes) == pytest.approx(rates, rel=1e-12)
    assert shares_from_thresholds(ths, sizes) == pytest.approx([575 / 1225, 150 / 1225, 500 / 1225])


def test_eq_4_5_threshold_ratio():
    # Th_i/Th_j = (B_i·P_j)/(B_j·P_i).
    t_tcp, t_mm = threshold_pkts(kb(575), 1507, 0.1), threshold_pkts(kb(150), 807, 0.1)
    assert t_tcp / t_mm == pytest.approx(575 * 807 / (150 * 1507))


def test_eq_4_8_equals_eq_4_9_when_allocations_fill_the_link():
    ths = thresholds_general_pkts(C, [kb(575), kb(150), kb(500)], [1507, 807, 1075], 0.1)
    eq_4_9 = [threshold_pkts(kb(b), p, 0.1) for b, p in ((575, 1507), (150, 807), (500, 1075))]
    assert ths == pytest.approx(eq_4_9)


def test_naive_ratio_warning():
    # §IV.4: BULK (1439 + 60 = 1499 B) vs Proshare (700 + 28 = 728 B) at a 1:1 threshold ratio
    # gives "about 2:1" bandwidth (2.06).
    bulk, proshare = allocations_from_thresholds(C, [10, 10], [1439 + 60, 700 + 28])
    assert bulk / proshare == printed("2")
    assert bulk + proshare == pytest.approx(C)


# --------------------------------------------------------------------------- §3.3 reallocation

TABLE_4_6_B = (935, 140, 150)       # TCP, MM, other (KB/s)
TABLE_4_6_LOAD = (700, 160, 1000)
# Table 4.7: iteration -> (B′ TCP, MM, other), (E TCP, MM, other), printed to the KB/s.
TABLE_4_7 = [
    (("935", "140", "150"), ("235", "0", "0")),
    (("700", "253", "272"), ("0", "93", "0")),
    (("700", "160", "365"), ("0", "0", "0")),
]


def _kib(values):
    return [bps_to_kib_per_s(v) for v in values]


def test_table_4_7_corrected_iteration():
    r = predict_throughput(C, [kb(x) for x in TABLE_4_6_B], [kb(x) for x in TABLE_4_6_LOAD])
    assert r.method == "corrected"
    assert len(r.steps) == len(TABLE_4_7)
    for step, (rates, exc) in zip(r.steps, TABLE_4_7):
        assert _kib(step.rates) == [printed(x) for x in rates]
        assert _kib(step.excess) == [printed(x) for x in exc]
    # The exact values the digest gives: 253.45, 271.55 and MM's excess 93.45.
    assert _kib(r.steps[1].rates)[1:] == [printed("253.45"), printed("271.55")]
    assert _kib(r.steps[1].excess)[1] == printed("93.45")
    assert _kib(r.rates) == [printed("700"), printed("160"), printed("365")]
    assert r.factor == pytest.approx(365 / 150)
    assert sum(r.rates) == pytest.approx(C)


def test_table_4_7_first_iteration_is_eq_4_16_and_eq_4_13():
    b, load = [kb(x) for x in TABLE_4_6_B], [kb(x) for x in TABLE_4_6_LOAD]
    first = first_reallocation(C, b, load)
    assert _kib(first) == [printed("700"), printed("253.45"), printed("271.55")]
    # Eq 4.13, one donor i = TCP: B′_j = B_j + s_j/(1 − s_i)·(B_i − Load_i).
    s = [x / 1225 for x in TABLE_4_6_B]
    for j in (1, 2):
        eq_4_13 = TABLE_4_6_B[j] + s[j] / (1 - s[0]) * (TABLE_4_6_B[0] - TABLE_4_6_LOAD[0])
        assert _kib(first)[j] == pytest.approx(eq_4_13)
    assert excess(TABLE_4_6_B, TABLE_4_6_LOAD) == (235, 0, 0)


def test_literal_eq_4_17_differs_from_table_4_7():
    """Erratum 10: Eq 4.17's min(Load_j, ·) clips the receiver MM at its load in iteration 1, so
    its 93.45 KB/s overshoot is never passed on: *other* ends at 271.55 instead of 365, and 93.45 KB/s
    of the link is predicted idle although *other* still has 1000 KB/s of demand."""
    b, load = [kb(x) for x in TABLE_4_6_B], [kb(x) for x in TABLE_4_6_LOAD]
    literal = predict_throughput(C, b, load, method="literal")
    corrected = predict_throughput(C, b, load, method="corrected")
    assert _kib(literal.rates) == [printed("700"), printed("160"), printed("271.55")]
    assert len(literal.steps) == 2                      # Eq 4.18 holds after one clipped pass
    assert _kib(literal.steps[1].rates)[1] != printed("253")  # Table 4.7's iteration 1 keeps 253
    assert bps_to_kib_per_s(C - sum(literal.rates)) == printed("93.45")
    assert _kib(corrected.rates)[2] - _kib(literal.rates)[2] == printed("93.45")
    assert literal.factor == pytest.approx(_kib(literal.rates)[2] / 150)
    # The latency predictions differ too: 41.1 ms (corrected) vs 55.2 ms (literal).
    assert predict_latency(C, b, load, 0.1, method="literal") * 1e3 == printed("55.2")
    assert predict_latency(C, b, load, 0.1) * 1e3 == printed("41.1")


def test_max_min_closed_form_on_table_4_6():
    b, load = [kb(x) for x in TABLE_4_6_B], [kb(x) for x in TABLE_4_6_LOAD]
    closed = predict_throughput(C, b, load, method="max-min")
    assert closed.steps == ()
    assert closed.rates == pytest.approx(predict_throughput(C, b, load).rates, rel=1e-12)
    assert closed.factor == pytest.approx(365 / 150)


def test_table_4_7_latency():
    # Digest §3.3 (derived): L′ for this example with L = 100 ms: 100·150/365 = 41.1 ms.
    b, load = [kb(x) for x in TABLE_4_6_B], [kb(x) for x in TABLE_4_6_LOAD]
    assert predict_latency(C, b, load, 0.1) * 1e3 == printed("41.1")


def test_prose_borrowing_example():
    # L1839: A = 100, B = 200, 150 of excess from other classes -> A 150 (+50), B 300 (+100).
    r = predict_throughput(450, [100, 200, 150], [math.inf, math.inf, 0])
    assert r.rates == pytest.approx([150, 300, 0])
    assert r.factor == pytest.approx(1.5)


def test_occupancy_example():
    # L2224: 1000/2000/7000 bytes queued -> 10/20/70 %; with k idle i ≈ 33 %, j ≈ 66 %.
    assert [100 * s for s in shares_from_thresholds([1000, 2000, 7000], [1, 1, 1])] == \
        [printed("10"), printed("20"), printed("70")]
    r = predict_throughput(10_000, [1000, 2000, 7000], [math.inf, math.inf, 0])
    i, j, k = (100 * x / 10_000 for x in r.rates)
    assert i == printed("33")
    assert truncated("66", j)            # 66.67 %: the text truncates
    assert k == 0


# Table 4.8 (KB/s): B = TCP 575, MM 150, other 500; TCP offers > 1600 throughout, MPEG 340.
B_4_8 = (575, 150, 500)


def _table_4_8(load_mm: float, load_other: float, method: str = "corrected"):
    loads = [kb(1600), kb(load_mm), kb(load_other)]
    r = predict_throughput(C, [kb(x) for x in B_4_8], loads, method=method)
    return _kib(r.rates), excess(B_4_8, [1600, load_mm, load_other])


@pytest.mark.parametrize("interval, load_mm, load_other, e_mm, e_other, b_tcp, b_mm, b_other", [
    ("0-42 TCP only", 0, 0, "150", "500", "1225", "0", "0"),
    ("42-90 MM+TCP", 340, 0, "0", "500", "972", "253", "0"),
    ("90 ramp start", 340, 0, "0", "500", "972", "253", "0"),
    ("176 ramp end", 340, 500, "0", "0", "575", "150", "500"),
    ("176-304 other 500", 340, 500, "0", "0", "575", "150", "500"),
    ("176-304 other 800", 340, 800, "0", "0", "575", "150", "500"),
    ("304 ramp start", 340, 500, "0", "0", "575", "150", "500"),
    ("390 ramp end", 340, 0, "0", "500", "972", "253", "0"),
    ("390-515 MM+TCP", 340, 0, "0", "500", "972", "253", "0"),
    ("515-607 TCP only", 0, 0, "150", "500", "1225", "0", "0"),
])
def test_table_4_8(interval, load_mm, load_other, e_mm, e_other, b_tcp, b_mm, b_other):
    for method in METHODS:                   # no receiver overshoots here: all three agree
        rates, exc = _table_4_8(load_mm, load_other, method)
        assert exc[1:] == (printed(e_mm), printed(e_other))
        assert rates == [printed(b_tcp), printed(b_mm), printed(b_other)]


@pytest.mark.parametrize("x", [0, 50, 125, 250, 333.3, 400, 499, 500])
def test_table_4_8_ramp_is_linear(x):
    # Digest (derived): for Load_other = x <= 500, B′_TCP = 575 + (500 − x)·575/725,
    # B′_MM = 150 + (500 − x)·150/725, B′_other = x (the table's "0" means "equal to its load").
    rates, exc = _table_4_8(340, x)
    assert rates == pytest.approx([575 + (500 - x) * 575 / 725, 150 + (500 - x) * 150 / 725, x])
    assert exc[2] == pytest.approx(500 - x)
    # MM/(MM+TCP) stays 150/725 = 20.7 % whenever both are saturated (Fig. 4.22).
    assert 100 * rates[1] / (rates[0] + rates[1]) == printed("20.7")


def test_table_4_8_split_of_the_excess():
    rates, _ = _table_4_8(340, 0)
    mm_gain, tcp_gain = rates[1] - 150, rates[0] - 575
    assert 100 * mm_gain / 500 == printed("20.7")       # "MM 20.7 % ('21 %')"
    assert 100 * mm_gain / 500 == printed("21")
    assert 100 * tcp_gain / 500 == printed("79.3")
    assert 100 * tcp_gain / 500 == printed("79")
    assert rates[:2] == [printed("971.55"), printed("253.45")]
    assert mm_gain == printed("103.45")                  # the exact figure (digest erratum 14)


@pytest.mark.xfail(strict=True, reason="§IV.5.2.2 says MM 'combines 102 KB/s' with its 150; the "
                                       "reallocation gives 103.45 (and the text's own 253 total "
                                       "implies 103): erratum 14")
def test_table_4_8_prose_102_kb_per_s():
    rates, _ = _table_4_8(340, 0)
    assert rates[1] - 150 == printed("102")


# --------------------------------------------------------------------------- §3.4 latency

TH_MM, P_MM = 19.04, 807     # Table 4.9's inputs


def test_table_4_9_with_the_dissertations_units():
    """Table 4.9's 61 ms is Eq 4.27 with B′_MM = 253 "KB/s" read as 253,000 B/s (erratum 11):
    19.04·807/253,000 = 60.7 ms. The 100 ms entry (B′ = B = 150 KB/s of 1024 B) is 100.0."""
    assert latency_from_threshold_s(TH_MM, P_MM, 253_000 * 8) * 1e3 == printed("60.7")
    assert latency_from_threshold_s(TH_MM, P_MM, 253_000 * 8) * 1e3 == printed("61")
    assert latency_from_threshold_s(TH_MM, P_MM, kb(150)) * 1e3 == printed("100.0")
    assert latency_from_threshold_s(TH_MM, P_MM, kb(150)) * 1e3 == printed("100")


def _l_prime_ms(load_mm: float, load_other: float) -> float:
    return predict_latency(C, [kb(x) for x in B_4_8], [kb(1600), kb(load_mm), kb(load_other)], 0.1) * 1e3


def test_table_4_9_in_consistent_units():
    # Digest §3.4: "With consistent units L′ = L·150/253.45 = 59.2 ms, and the 100 ms entry stays
    # 100.0 ms"; accept ±3 ms against the printed 61. TCP-only periods: 100·575/1225 = 46.9 ms.
    assert _l_prime_ms(340, 0) == printed("59.2")
    assert abs(_l_prime_ms(340, 0) - 61) <= 3
    for other in (500, 650, 800):
        assert _l_prime_ms(340, other) == printed("100.0")
    assert _l_prime_ms(0, 0) == printed("46.9")
    # Eq 4.27 with the model's own threshold: the same for both saturated classes.
    realloc = predict_throughput(C, [kb(x) for x in B_4_8], [kb(1600), kb(340), 0])
    b_mm = bps_to_kib_per_s(realloc.rates[1])
    th_mm = threshold_pkts(kb(150), P_MM, 0.1)
    assert latency_from_threshold_s(th_mm, P_MM, kb(b_mm)) * 1e3 == pytest.approx(_l_prime_ms(340, 0))
    th_tcp = threshold_pkts(kb(575), 1507, 0.1)
    b_tcp = 575 + 500 * 575 / 725
    assert latency_from_threshold_s(th_tcp, 1507, kb(b_tcp)) * 1e3 == pytest.approx(_l_prime_ms(340, 0))


@pytest.mark.xfail(strict=True, reason="The printed 61 ms mixes 1000 B/KB (for B′) with 1024 B/KB "
                                       "(for Th); in consistent units Eq 4.27 gives 59.2 ms "
                                       "(erratum 11; within the digest's ±3 ms)")
def test_table_4_9_printed_61_ms_from_the_predictor():
    assert _l_prime_ms(340, 0) == printed("61")


def test_table_4_9_ramp_is_hyperbolic_not_linear():
    # B′_MM is linear in Load_other = x, so L′ = L·150/B′_MM = 100·725/(1225 − x) ms is not: at
    # the middle of the ramp it is 74.4 ms, 5.2 ms below the straight line from 59.2 to 100 (79.6).
    for x in (0, 125, 250, 375, 500):
        assert _l_prime_ms(340, x) == pytest.approx(100 * 725 / (1225 - x))
    line = (_l_prime_ms(340, 0) + _l_prime_ms(340, 500)) / 2
    assert _l_prime_ms(340, 250) == printed("74.4")
    assert line - _l_prime_ms(340, 250) == printed("5.2")
    assert line == printed("79.6")


@pytest.mark.xfail(strict=True, reason="Table 4.9 / §IV.5.2.4 say L′ changes linearly over the ramps "
                                       "(61 -> 100 ms); Eq 4.27 makes it hyperbolic in Load_other "
                                       "(74.4 ms mid-ramp vs 79.6 on the line)")
def test_table_4_9_ramp_linear_as_stated():
    line = (_l_prime_ms(340, 0) + _l_prime_ms(340, 500)) / 2
    assert _l_prime_ms(340, 250) == pytest.approx(line, abs=0.5)


def test_eq_4_24_latency_from_the_deltas():
    # Eq 4.22–4.24: L′ = L − Σ Δ_i·P_i/C. In Table 4.8's 42–90 s *other* queues nothing
    # (Δ_other = Th_other) while MM and TCP hold their thresholds (Δ = 0), so
    # L′ = L − Th_other·P_other/C = L·725/1225, the same 59.2 ms as Eq 4.27.
    sizes = [1507, 807, 1075]
    ths = [threshold_pkts(kb(b), p, 0.1) for b, p in zip(B_4_8, sizes)]
    deltas = [0, 0, ths[2]]
    l_prime = 0.1 - math.fsum(d * p for d, p in zip(deltas, sizes)) / (C / 8)
    assert l_prime * 1e3 == pytest.approx(_l_prime_ms(340, 0))


def test_no_saturated_class_means_zero_latency():
    assert predict_latency(C, [kb(x) for x in B_4_8], [kb(500), kb(100), kb(100)], 0.1) == 0.0


def test_table_4_5_intended_vs_observed():
    """Evaluation §5.13, Table 4.5: BULK-MPEG, all classes over their allocations: the predicted
    queueing latency is the intended L, and the observed end-to-end latency exceeds it by the
    ≈3–5 ms base delay."""
    rates = [kb(x) for x in (150, 205, 870)]
    for intended, observed in ((20, 23), (40, 44), (60, 64), (80, 85), (100, 103)):
        predicted = predict_latency(C, rates, [math.inf] * 3, intended / 1e3) * 1e3
        assert predicted == pytest.approx(intended)
        assert 3 <= observed - predicted <= 5


# --------------------------------------------------------------------------- §3.5–3.6

def test_eq_b_2_burst_average():
    # App. B: a 158-packet burst with w = 1/256 gives "40.39 packets" (truncated; exact 40.396),
    # "40.4" in the evaluation digest; pre-enqueue sampling (samples 0..L−1) gives 39.93.
    avg = burst_average(158, 1 / 256)
    assert avg == printed("40.396")
    assert avg == printed("40.4")
    assert truncated("40.39", avg)
    assert avg == pytest.approx(158 + 1 + ((1 - 1 / 256) ** 159 - 1) * 256)
    assert burst_average(158, 1 / 256, pre_enqueue=True) == printed("39.93")


def test_eq_b_2_matches_the_ewma_it_models():
    for pre in (False, True):
        avg = 0.0
        for k in range(1, 159):
            avg = ewma_update(avg, k - 1 if pre else k, 1 / 256)
        assert burst_average(158, 1 / 256, pre_enqueue=pre) == pytest.approx(avg, rel=1e-12)


def test_eq_b_1_and_b_3_queue_latency():
    # B.1: "the maximum average latency in milliseconds is 1.2 * maxq" (1500 B, 10 Mb/s).
    assert queue_latency_s(1500, 60, 10e6) * 1e3 == pytest.approx(1.2 * 60)
    assert queue_latency_s(1500, 1, 10e6) * 1e3 == printed("1.2")
    # B.3 (evaluation §5.12): 120 pkts × 1,000 B / 10 Mb/s = 96 ms.
    assert queue_latency_s(1000, 120, 10e6) * 1e3 == printed("96")


def test_traffic_intensity_and_periodic_bursts():
    # §I.1: N packets every (L/R)·N seconds average an intensity of 1; backlog (N−1)/2·L.
    size, link, n = 1000, 10e6, 9
    period = size / (link / 8) * n
    assert traffic_intensity(size, n / period, link) == pytest.approx(1.0)
    q = periodic_burst_queue(n, size, link)
    assert q.backlog_bytes == (n - 1) / 2 * size
    assert q.wait_s == pytest.approx((n - 1) / 2 * size / (link / 8))


def test_eq_2_1_and_3_1_share_the_constant():
    # 1.5·√(2/3) = 1.2247, which Eq 2.1 prints as 1.22.
    ratio = floyd_fall_rate_bound(1500, 0.1, 0.01) / tcp_friendly_rate(1500, 0.1, 0.01)
    assert 1.22 * ratio == printed("1.22")
    assert tcp_friendly_rate(1500, 0.05, 0.04) == pytest.approx(1.22 * 1500 / (0.05 * 0.2))


def test_section_3_6_ewma_sequence_and_first_forced_drop():
    # *other*: w = 1/4, ThMin = ThMax = 14.29, 20 packets queued: 5.00, 8.75, 11.5625, 13.6719,
    # 15.2539; the 5th arrival is force-dropped (avg > 14.29 and q_len_c > 1).
    expected = ["5.00", "8.75", "11.5625", "13.6719", "15.2539"]
    avg, seq = 0.0, []
    for _ in expected:
        avg = ewma_update(avg, 20, 1 / 4)
        seq.append(avg)
    assert seq == [printed(x) for x in expected]
    first_drop = next(k for k, a in enumerate(seq, start=1) if a > 14.29)
    assert first_drop == 5
    assert red_base_probability(seq[4], 14.29, 14.29, 0.0) == 1.0   # forced-drop mode


def test_section_3_6_idle_decay():
    # TCP (w = 1/256, 591.2 pkt/s), avg 40, idle 100 ms: n = trunc(59.12 − 1) = 58 -> 31.877.
    assert idle_samples(591.2, 0.1) == 58
    assert idle_decay(40, 1 / 256, 591.2, 0.1) == printed("31.877")
    # *other* (w = 1/4, 142.9 pkt/s), avg 14, idle 100 ms: n = 13 -> 0.3326.
    assert idle_samples(142.9, 0.1) == 13
    assert idle_decay(14, 1 / 4, 142.9, 0.1) == printed("0.3326")
    # Negative n is clamped (erratum 5): a very short idle leaves the average alone.
    assert idle_samples(142.9, 0.001) == 0 and idle_decay(14, 1 / 4, 142.9, 0.001) == 14


def test_section_3_6_red_probabilities():
    for avg, expected in ((10, "0.01429"), (22.5, "0.05"), (39.9, "0.09971")):
        assert red_base_probability(avg, 5, 40, 0.1) == printed(expected)
    assert red_base_probability(5, 5, 40, 0.1) == 0.0
    assert red_base_probability(40.01, 5, 40, 0.1) == 1.0
    # Eq 3.2 and the guard of erratum 4.
    assert red_drop_probability(0.05, 0) == 0.05
    assert red_drop_probability(0.05, 10) == pytest.approx(0.1)
    assert red_drop_probability(0.05, 20) == 1.0 == red_drop_probability(0.05, 25)


# --------------------------------------------------------------------------- properties

pkt_sizes = st.floats(min_value=40, max_value=9000)
latencies = st.floats(min_value=1e-4, max_value=2.0)


@st.composite
def configurations(draw):
    n = draw(st.integers(min_value=1, max_value=6))
    weights = draw(st.lists(st.floats(min_value=0.01, max_value=100), min_size=n, max_size=n))
    link = draw(st.floats(min_value=1e5, max_value=1e11))
    total = sum(weights)
    specs = [ClassSpec(f"c{i}", draw(pkt_sizes), rate_bps=link * w / total,
                       responsive=draw(st.booleans()))
             for i, w in enumerate(weights)]
    return link, specs


@settings(max_examples=200, deadline=None)
@given(config=configurations(), latency=latencies)
def test_property_configured_thresholds_give_back_the_allocations_and_latency(config, latency):
    link, specs = config
    cfg = configure(link, specs, latency)
    ths, sizes = [c.th_max_pkts for c in cfg], [c.mean_packet_bytes for c in cfg]
    back = allocations_from_thresholds(link, ths, sizes)
    assert sum(back) == pytest.approx(link, rel=1e-9)                  # allocations sum to the link
    assert back == pytest.approx([s.rate_bps for s in specs], rel=1e-9)
    assert worst_case_latency_s(link, ths, sizes) == pytest.approx(latency, rel=1e-9)
    assert thresholds_general_pkts(link, [s.rate_bps for s in specs], sizes, latency) == \
        pytest.approx(ths, rel=1e-9)
    for c in cfg:
        assert 0 <= c.th_min_pkts <= c.th_max_pkts
        assert c.drain_rate_pps * c.mean_packet_bytes * 8 == pytest.approx(c.rate_bps, rel=1e-12)


@settings(max_examples=200, deadline=None)
@given(config=configurations(), latency=latencies, k=st.floats(min_value=0.01, max_value=100))
def test_property_thresholds_scale_linearly_with_the_target_latency(config, latency, k):
    link, specs = config
    base = configure(link, specs, latency)
    scaled = configure(link, specs, latency * k)
    for a, b in zip(base, scaled):
        assert b.th_max_pkts == pytest.approx(k * a.th_max_pkts, rel=1e-9)
        assert b.drain_rate_pps == a.drain_rate_pps


@settings(max_examples=200, deadline=None)
@given(config=configurations(), latency=latencies, spare=st.floats(min_value=0.0, max_value=1.0))
def test_property_unallocated_capacity_only_lowers_the_worst_case(config, latency, spare):
    link, specs = config
    bigger = link * (1 + spare)
    cfg = configure(bigger, specs, latency)
    ths, sizes = [c.th_max_pkts for c in cfg], [c.mean_packet_bytes for c in cfg]
    assert worst_case_latency_s(bigger, ths, sizes) == pytest.approx(latency * link / bigger, rel=1e-9)
    general = thresholds_general_pkts(bigger, [s.rate_bps for s in specs], sizes, latency)
    assert worst_case_latency_s(bigger, general, sizes) == pytest.approx(latency, rel=1e-9)


load_values = st.one_of(st.just(0.0), st.floats(min_value=0, max_value=3000), st.just(math.inf))


@st.composite
def scenarios(draw):
    n = draw(st.integers(min_value=1, max_value=7))
    alloc = draw(st.lists(st.floats(min_value=1, max_value=1000), min_size=n, max_size=n))
    loads = draw(st.lists(load_values, min_size=n, max_size=n))
    spare = draw(st.one_of(st.just(0.0), st.floats(min_value=0, max_value=0.5)))
    return sum(alloc) * (1 + spare), alloc, loads


@settings(max_examples=400, deadline=None)
@given(scenario=scenarios())
def test_property_max_min_closed_form_equals_the_corrected_iteration(scenario):
    link, alloc, loads = scenario
    it = predict_throughput(link, alloc, loads)
    closed = predict_throughput(link, alloc, loads, method="max-min")
    assert it.rates == pytest.approx(closed.rates, rel=1e-9, abs=1e-9 * link)
    assert len(it.steps) <= len(alloc) + 2             # converges within N (+1 final) passes
    finite = sum(loads)
    assert sum(it.rates) == pytest.approx(min(link, finite), rel=1e-9)
    for r, x in zip(it.rates, loads):
        assert r <= x * (1 + 1e-9) + 1e-9
    # Every class still saturated got the same scale-up f >= C/ΣB over its allocation.
    sat = [j for j, (r, x) in enumerate(zip(it.rates, loads)) if x > r * (1 + 1e-6)]
    for j in sat:
        assert it.rates[j] / alloc[j] == pytest.approx(it.factor, rel=1e-6)
        assert it.factor >= link / sum(alloc) * (1 - 1e-9)
    if not sat:
        assert math.isinf(it.factor) or all(
            r == pytest.approx(x, rel=1e-6) for r, x in zip(it.rates, loads))


@settings(max_examples=300, deadline=None)
@given(scenario=scenarios())
def test_property_literal_never_predicts_more_and_agrees_without_overshoot(scenario):
    link, alloc, loads = scenario
    literal = predict_throughput(link, alloc, loads, method="literal")
    corrected = predict_throughput(link, alloc, loads)
    assert sum(literal.rates) <= sum(corrected.rates) * (1 + 1e-9) + 1e-9
    assert len(literal.steps) <= 2
    first = first_reallocation(link, alloc, loads)
    if all(b <= x for b, x in zip(first, loads)):
        assert literal.rates == pytest.approx(corrected.rates, rel=1e-9, abs=1e-9 * link)


@settings(max_examples=300, deadline=None)
@given(scenario=scenarios(), latency=latencies, which=st.integers(min_value=0, max_value=6),
       cut=st.floats(min_value=0, max_value=1))
def test_property_latency_is_bounded_and_falls_as_a_load_falls(scenario, latency, which, cut):
    link, alloc, loads = scenario
    l_prime = predict_latency(link, alloc, loads, latency)
    assert 0 <= l_prime <= latency * sum(alloc) / link * (1 + 1e-9)
    j = which % len(alloc)
    assume(math.isfinite(loads[j]))
    lower = list(loads)
    lower[j] = loads[j] * cut
    assert predict_latency(link, alloc, lower, latency) <= l_prime * (1 + 1e-9)


def test_all_saturated_with_unallocated_capacity():
    # Σ B < C: CBT enforces ratios, so saturated classes split the whole link in proportion.
    r = predict_throughput(1250, [575, 150, 500], [math.inf] * 3)
    assert r.rates == pytest.approx([575 * 1250 / 1225, 150 * 1250 / 1225, 500 * 1250 / 1225])
    assert predict_latency(1250, [575, 150, 500], [math.inf] * 3, 0.1) == pytest.approx(0.1 * 1225 / 1250)


def test_under_used_link():
    r = predict_throughput(1225, [575, 150, 500], [100, 50, 10])
    assert r.rates == (100, 50, 10) and math.isinf(r.factor)
    for method in METHODS:
        assert predict_throughput(1225, [575, 150, 500], [100, 50, 10], method=method).rates == \
            pytest.approx([100, 50, 10])


# --------------------------------------------------------------------------- bad inputs

GOOD = [ClassSpec("tcp", 1500, rate_bps=5e6, responsive=True), ClassSpec("mm", 800, share=0.2)]


@pytest.mark.parametrize("kwargs, match", [
    (dict(classes=[]), r"classes must not be empty"),
    (dict(link_bps=0), r"link_bps must be positive"),
    (dict(link_bps=math.nan), r"link_bps must be a real number"),
    (dict(target_latency_s=0), r"target_latency_s must be positive"),
    (dict(target_latency_s=-0.1), r"target_latency_s must be positive"),
    (dict(classes=[ClassSpec("a", 0, share=0.5)]), r"classes\[0\]\.mean_packet_bytes must be positive"),
    (dict(classes=[ClassSpec("a", -100, share=0.5)]),
     r"classes\[0\]\.mean_packet_bytes must be positive"),
    (dict(classes=[ClassSpec("a", 100, rate_bps=0)]), r"classes\[0\]\.rate_bps must be positive"),
    (dict(classes=[ClassSpec("a", 100, share=1.5)]), r"classes\[0\]\.share must be in \(0, 1\]"),
    (dict(classes=[ClassSpec("a", 100)]), r"classes\[0\] must give exactly one of rate_bps or share"),
    (dict(classes=[ClassSpec("a", 100, share=0.1, rate_bps=1e6)]), r"exactly one of rate_bps or share"),
    (dict(classes=[ClassSpec("a", 100, share=0.6), ClassSpec("a", 100, share=0.1)]), r"duplicate"),
    (dict(classes=[ClassSpec("a", 100, share=0.6), ClassSpec("b", 100, share=0.5)]),
     r"classes allocate .* exceeding link_bps"),
    (dict(classes=[ClassSpec("a", 100, rate_bps=8e6), ClassSpec("b", 100, rate_bps=3e6)]),
     r"exceeding link_bps"),
    (dict(classes=[("a", 100, 0.5)]), r"classes\[0\] must be a ClassSpec"),
    (dict(responsive_max_p=0), r"responsive_max_p must be in \(0, 1\]"),
])
def test_configure_rejects_bad_input(kwargs, match):
    args = dict(link_bps=10e6, classes=GOOD, target_latency_s=0.1) | kwargs
    with pytest.raises(ValueError, match=match):
        configure(**args)


@pytest.mark.parametrize("call, match", [
    (lambda: predict_throughput(100, [60, 50], [10, 10]),
     r"allocations_bps sum to .* exceeding link_bps"),
    (lambda: predict_throughput(100, [], []), r"allocations_bps must not be empty"),
    (lambda: predict_throughput(100, [0, 50], [10, 10]), r"allocations_bps\[0\] must be positive"),
    (lambda: predict_throughput(100, [50, 50], [10]), r"loads_bps must have one entry per class \(2\)"),
    (lambda: predict_throughput(100, [50, 50], [10, -1]), r"loads_bps\[1\] must be a non-negative rate"),
    (lambda: predict_throughput(100, [50, 50], [10, math.nan]), r"loads_bps\[1\] must be a real number"),
    (lambda: predict_throughput(100, [50, 50], [10, 10], method="exact"), r"method must be one of"),
    (lambda: predict_throughput(-1, [50, 50], [10, 10]), r"link_bps must be positive"),
    (lambda: predict_latency(100, [50, 50], [10, 10], 0), r"target_latency_s must be positive"),
    (lambda: threshold_pkts(1e6, 0, 0.1), r"mean_packet_bytes must be positive"),
    (lambda: threshold_pkts(1e6, 1000, -1), r"target_latency_s must be positive"),
    (lambda: threshold_pkts(True, 1000, 0.1), r"rate_bps must be a real number"),
    (lambda: thresholds_general_pkts(100, [50], [100, 100], 0.1),
     r"mean_packet_bytes must have one entry"),
    (lambda: worst_case_latency_s(100, [0, 0], [100, 100]), r"th_pkts must not all be zero"),
    (lambda: shares_from_thresholds([1, 2], [100, -5]), r"mean_packet_bytes\[1\] must be positive"),
    (lambda: drain_rate_pps(1e6, 0), r"mean_packet_bytes must be positive"),
    (lambda: burst_average(1.5, 0.1), r"burst_pkts must be a whole number"),
    (lambda: burst_average(10, 0), r"weight must be an EWMA weight in \(0, 1\]"),
    (lambda: idle_decay(10, 0.1, 0, 0.1), r"drain_rate_pps must be positive"),
    (lambda: red_base_probability(10, 40, 5, 0.1), r"th_max_pkts must be >= th_min_pkts"),
    (lambda: red_drop_probability(0.1, -1), r"count must be a non-negative"),
    (lambda: tcp_friendly_rate(1500, 0.1, 0), r"loss must be a loss rate in \(0, 1\]"),
    (lambda: periodic_burst_queue(0, 1000, 1e6), r"burst_pkts must be at least one packet"),
    (lambda: latency_from_threshold_s(10, 1000, 0), r"rate_bps must be positive"),
])
def test_bad_input_raises_value_error_naming_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_units_helpers():
    assert kb(1) == KIB * 8 == 8192
    assert bps_to_kib_per_s(kb(123.5)) == pytest.approx(123.5)
    assert C == 10_035_200
