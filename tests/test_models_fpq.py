"""The analytic models of Morris's thesis (aqmlab.models.fpq) against every worked number in the
digest shared/specs/seed004-fpq.md (§2.3–2.8, §3.5), plus property tests and input checks.

Tolerances: a number printed in the digest is only known to its last printed digit, so each
check asks the model to agree within half a unit of that digit (``printed("2.9e-4")`` accepts
[2.85e-4, 2.95e-4]; ``printed(".0160")`` accepts ±5e-5; ``printed("700")`` ±0.5). A number
the digest gives as "about" / "≈" gets the tolerance its wording allows, stated at the check.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from aqmlab.models.fpq import (
    FPQ_LOSS_CAP,
    aggregate_window,
    avg_window,
    droptail_loss,
    effective_window,
    expected_set_bits,
    flows_from_set_bits,
    fpq_cap_onset_flows,
    fpq_crossover_flows,
    fpq_red_parameters,
    fpq_target_loss,
    fpq_target_queue,
    loss_for_effective_window,
    packets_in_flight,
    packets_per_second,
    random_drop_loss,
    red_loss,
    red_max_p_for_fixed_max_th,
    red_p1,
    red_p1_constants,
    red_p2,
    red_queue_for_loss,
    red_recommended,
    time_in_timeout,
    timeouts_per_packet,
)


def half_unit(text: str) -> float:
    """Half a unit in the last digit of a number as printed ("2.9e-4" -> 5e-6, "700" -> 0.5)."""
    exponent = Decimal(text).as_tuple().exponent
    assert isinstance(exponent, int)
    return 0.5 * 10.0 ** exponent


def printed(text: str):
    """pytest.approx accepting every value that rounds to ``text`` (plus float round-off)."""
    return pytest.approx(float(text), rel=1e-12, abs=half_unit(text) * (1 + 1e-9))


def test_half_unit_reads_the_printed_precision():
    assert half_unit("2.9e-4") == pytest.approx(5e-6)
    assert half_unit(".0160") == pytest.approx(5e-5)
    assert half_unit("700") == 0.5
    assert half_unit("0.00001") == pytest.approx(5e-6)
    assert half_unit("4e-5") == pytest.approx(5e-6)


# --------------------------------------------------------------------------- §2.3 table

# l, w_avg (5.1), w_eff (5.2), o (5.3), O at r=0.1 s, pif at 0.1, O at r=0.01 s, pif at 0.01
TABLE_2_3 = [
    ("0.001", "27.5", "26.5", "0.00001", "0.004", "27.4", "0.034", "26.6"),
    ("0.005", "12.3", "11.3", "0.00032", "0.037", "11.8", "0.280", "8.9"),
    ("0.01", "8.70", "7.70", "0.00122", "0.096", "7.86", "0.516", "4.21"),
    ("0.016", "6.88", "5.88", "0.00303", "0.172", "5.69", "0.675", "2.23"),
    ("0.02", "6.15", "5.15", "0.00462", "0.221", "4.79", "0.740", "1.60"),
    ("0.03", "5.02", "4.02", "0.00981", "0.330", "3.36", "0.831", "0.85"),
    ("0.05", "3.89", "2.89", "0.0243", "0.486", "2.00", "0.904", "0.37"),
    ("0.10", "2.75", "1.75", "0.0746", "0.672", "0.90", "0.954", "0.13"),
]


@pytest.mark.parametrize("row", TABLE_2_3, ids=[r[0] for r in TABLE_2_3])
def test_table_2_3_window_timeouts_in_flight(row):
    l_s, w_avg, w_eff, o, o_slow, pif_slow, o_fast, pif_fast = row
    l = float(l_s)
    assert avg_window(l) == printed(w_avg)
    assert effective_window(l) == printed(w_eff)
    assert timeouts_per_packet(l) == printed(o)
    assert time_in_timeout(l, 0.1) == printed(o_slow)
    assert packets_in_flight(l, 0.1) == printed(pif_slow)
    assert time_in_timeout(l, 0.01) == printed(o_fast)
    assert packets_in_flight(l, 0.01) == printed(pif_fast)


def test_section_2_3_and_2_7_window_statements():
    # "At 1.6% loss, o = 0.30% per packet"
    assert timeouts_per_packet(0.016) == printed("0.0030")
    # §2.6: "at 3%, w_eff = 4.02"
    assert effective_window(0.03) == printed("4.02")
    # §2.7: "Eq. 5.2 itself gives a window of 5 at l = 2.1% and 5.88 at 1.6%"
    assert loss_for_effective_window(5) == printed("0.021")
    assert effective_window(0.016) == printed("5.88")
    # Eq 5.1's exact constant is 0.866 (= (3/4)·√(4/3))
    assert 0.75 * math.sqrt(4 / 3) == printed("0.866")
    assert avg_window(0.01, constant=0.866) == pytest.approx(8.66)


# --------------------------------------------------------------------------- §2.4 table

N_2_4 = [10, 20, 30, 50, 75, 100, 150, 200, 300]
DROPTAIL_2_4 = ["2.9e-4", "1.1e-3", "2.4e-3", "6.3e-3", "1.29e-2", "2.11e-2", "4.05e-2", "6.2e-2", "0.107"]
RANDOM_DROP_2_4 = ["2.9e-4", "1.1e-3", "2.3e-3", "5.8e-3", "1.14e-2", "1.80e-2", "3.25e-2", "4.75e-2", "0.076"]


@pytest.mark.parametrize("n, expected", list(zip(N_2_4, DROPTAIL_2_4)))
def test_table_2_4_droptail(n, expected):
    assert droptail_loss(n, 500) == printed(expected)


def _random_drop_cases():
    for n, expected in zip(N_2_4, RANDOM_DROP_2_4):
        marks = ()
        if n == 50:
            # Eq 5.7 gives 0.76·50²/(75 + 500)² = 5.7467e-3, which prints as 5.7e-3, not the
            # digest's 5.8e-3 (no reading of the constants gets there: 0.87² = 0.7569 gives
            # 5.72e-3, 0.866² gives 5.67e-3). Most likely double rounding (5.747 → 5.75 → 5.8).
            marks = pytest.mark.xfail(strict=True, reason="digest prints 5.8e-3; Eq 5.7 gives 5.747e-3 "
                                                          "(rounding slip in the digest)")
        yield pytest.param(n, expected, marks=marks, id=f"{n}-{expected}")


def test_table_2_4_random_drop_n50_value():
    # The value the formula does give for the xfail case, to its printed precision.
    assert random_drop_loss(50, 500) == printed("5.7e-3")
    assert random_drop_loss(50, 500) == pytest.approx(0.76 * 50**2 / 575**2)


@pytest.mark.parametrize("n, expected", list(_random_drop_cases()))
def test_table_2_4_random_drop(n, expected):
    assert random_drop_loss(n, 500) == printed(expected)


def test_section_2_4_limits_and_wire_generalisation():
    # "For n ≫ q, the formula tends to a constant (0.76, or 0.34 for random drop)"
    assert droptail_loss(1e9, 500) == pytest.approx(0.76, rel=1e-5)
    assert random_drop_loss(1e9, 500) == printed("0.34")
    # The digest's Ch. 8 generalisation: on-wire packets count as storage.
    assert droptail_loss(100, 500, bdp_pkts=217) == pytest.approx(droptail_loss(100, 717))
    assert random_drop_loss(100, 500, bdp_pkts=22) == pytest.approx(random_drop_loss(100, 522))


# --------------------------------------------------------------------------- §2.5 table

# sweep parameter, value, P1 l, P1 b, P2 l, P2 b, P2′ l, P2′ b (defaults N=100, max_th=500, max_p=0.02)
TABLE_2_5 = [
    ("n", 10, ".0076", "95", ".0052", "64", ".0062", "77"),
    ("n", 20, ".0121", "151", ".0076", "95", ".0102", "127"),
    ("n", 40, ".0192", "239", ".0107", "133", ".0163", "204"),
    ("n", 100, ".0353", "441", ".0160", "201", ".0299", "374"),
    ("n", 200, ".0560", "700", ".0214", "267", ".0471", "589"),
    ("n", 300, ".0734", "917", ".0252", "315", ".0615", "768"),
    ("max_p", 0.005, ".0140", "700", ".0091", "453", ".0137", "685"),
    ("max_p", 0.01, ".0222", "556", ".0122", "305", ".0207", "518"),
    ("max_p", 0.04, ".0560", "350", ".0207", "130", ".0405", "253"),
    ("max_p", 0.08, ".0889", "278", ".0264", "82", ".0505", "158"),
    ("max_th", 100, ".1032", "258", ".0284", "71", ".0533", "133"),
    ("max_th", 200, ".0650", "325", ".0225", "112", ".0438", "219"),
    ("max_th", 1000, ".0222", "556", ".0122", "305", ".0207", "518"),
    ("max_th", 2000, ".0140", "700", ".0091", "453", ".0137", "685"),
]
IDS_2_5 = [f"{r[0]}={r[1]}" for r in TABLE_2_5]


def config_2_5(name: str, value: float) -> dict:
    config = {"n": 100, "max_th": 500, "max_p": 0.02}
    config[name] = value
    return config


@pytest.mark.parametrize("row", TABLE_2_5, ids=IDS_2_5)
def test_table_2_5_p1(row):
    # The digest's P1 column uses the thesis's printed constants 1.4 and 0.7 (Eqs 5.12, 5.13);
    # with the exact 1.447 / 0.723 every entry is 3.3 % higher (checked below).
    name, value, l1, b1, *_ = row
    p = red_p1(**config_2_5(name, value), constants="thesis")
    assert p.loss == printed(l1)
    assert p.queue_pkts == printed(b1)
    exact = red_p1(**config_2_5(name, value), constants="exact")
    assert exact.loss / p.loss == pytest.approx(1.74 ** (2 / 3) / 1.4)
    assert exact.queue_pkts / p.queue_pkts == pytest.approx(1.74 ** (2 / 3) / 2 / 0.7)


def test_table_2_5_p1_cap_at_max_th():
    # "700→cap 500" at N = 200: the queue is reported uncapped unless asked; the loss is unchanged.
    uncapped = red_p1(200, 500, 0.02, constants="thesis")
    capped = red_p1(200, 500, 0.02, constants="thesis", cap=True)
    assert uncapped.queue_pkts == printed("700")
    assert capped.queue_pkts == 500
    assert capped.loss == uncapped.loss == printed(".0560")
    assert red_p1(100, 500, 0.02, cap=True).queue_pkts == red_p1(100, 500, 0.02).queue_pkts


@pytest.mark.parametrize("row", TABLE_2_5, ids=IDS_2_5)
def test_table_2_5_p2_literal(row):
    name, value, _, _, l2, b2, *_ = row
    p = red_p2(**config_2_5(name, value), pps=2170, rtt_s=0.01, variant="literal")
    assert p.loss == printed(l2)
    assert p.queue_pkts == printed(b2)
    assert p.rtt_s == 0.01


@pytest.mark.parametrize("row", TABLE_2_5, ids=IDS_2_5)
def test_table_2_5_p2_queueing(row):
    name, value, *_, l3, b3 = row
    p = red_p2(**config_2_5(name, value), pps=2170, rtt_s=0.01, variant="queueing")
    assert p.loss == printed(l3)
    assert p.queue_pkts == printed(b3)
    assert p.rtt_s == pytest.approx(0.01 + p.queue_pkts / 2170)


def test_section_2_5_p2_statements():
    # P2′ "reaches the max_th = 500 ceiling at about 150–200 flows"
    assert red_p2(150, 500, 0.02, variant="queueing").queue_pkts < 500
    assert red_p2(200, 500, 0.02, variant="queueing").queue_pkts > 500
    # "gives O ≈ 0.54 at max_p = 0.08 ... whereas the literal P2 gives O ≈ 0.81 there"
    assert red_p2(100, 500, 0.08, variant="queueing").time_in_timeout == printed("0.54")
    assert red_p2(100, 500, 0.08, variant="literal").time_in_timeout == printed("0.81")


def test_section_2_5_exact_constants():
    c_l, c_b = red_p1_constants("exact")
    assert c_l == printed("1.447")
    assert 1.74 ** (2 / 3) == printed("1.447")
    assert c_b == printed("0.723")
    assert red_p1_constants("thesis") == (1.4, 0.7)


# --------------------------------------------------------------------------- §2.6

def test_section_2_6_large_max_th_example():
    # Sec. 5.3.5: max_th = 15000, 20 flows; "[computed: Eq. 5.13 gives 469 at max_p = 0.02 and
    # 505 at max_p = 0.016]" -- with the thesis's printed constant 0.7 (exact 0.723 gives 484, 522).
    assert red_p1(20, 15000, 0.02, constants="thesis").queue_pkts == printed("469")
    assert red_p1(20, 15000, 0.016, constants="thesis").queue_pkts == printed("505")
    # "about 500 packets, about a quarter second (500/2170 = 0.23 s)"
    assert 500 / packets_per_second(10e6) == printed("0.23")


def test_section_2_6_max_p_for_fixed_max_th():
    assert (0.7 / 0.75) ** 3 == printed("0.813")
    assert red_max_p_for_fixed_max_th(1, 1) == 0.81
    assert red_max_p_for_fixed_max_th(100, 500) == pytest.approx(0.81 * 100**2 / 500**2)
    assert red_max_p_for_fixed_max_th(1, 1, constants="exact") == pytest.approx((red_p1_constants()[1] / 0.75) ** 3)
    # The exact form puts the P1 queue at exactly 3/4 of max_th; the printed 0.81 (rounding
    # 0.813) within a third of that 0.4 % rounding.
    n, max_th = 40, 2000
    exact_p = red_max_p_for_fixed_max_th(n, max_th, constants="exact")
    assert red_p1(n, max_th, exact_p).queue_pkts == pytest.approx(0.75 * max_th, rel=1e-12)
    thesis_p = red_max_p_for_fixed_max_th(n, max_th)
    assert red_p1(n, max_th, thesis_p, constants="thesis").queue_pkts == pytest.approx(0.75 * max_th, rel=2e-3)
    assert red_max_p_for_fixed_max_th(n, max_th, constants="exact", fill=0.5) == pytest.approx(
        (red_p1_constants()[1] / 0.5) ** 3 * n**2 / max_th**2)


def test_section_2_6_recipe():
    s = red_recommended(100, 0.02, 0.01)
    assert s.max_th == pytest.approx(1.5 * 100 * packets_in_flight(0.02, 0.01))
    assert s.max_p == pytest.approx(0.015)
    with pytest.raises(ValueError, match=r"loss must be in \(0, 0.03\)"):
        red_recommended(100, 0.03, 0.01)
    assert red_recommended(100, 0.05, 0.1, allow_high_loss=True).max_p == pytest.approx(0.0375)


# --------------------------------------------------------------------------- §2.7 table and statements

F_2_7 = [1, 2, 3, 4, 5, 10, 20, 50, 100, 200, 300, 500, 1000, 1400]
Q_2_7 = ["217", "72.3", "43.4", "31", "25", "50", "100", "250", "500", "1000", "1500", "2500", "5000", "7000"]
L_2_7 = ["4.0e-6", "4e-5", "1.0e-4", "1.9e-4", "3.1e-4", "9.9e-4", "2.7e-3", "7.1e-3", "1.13e-2", "1.51e-2",
         ".016", ".016", ".016", ".016"]
MAX_TH_2_7 = ["434", "145", "87", "62", "50", "100", "200", "500", "1000", "2000", "3000", "5000", "10000", "14000"]
# The "q delay (s)" row is the target queue drained at the 10 Mb/s bottleneck, q/2170 s.
DELAY_2_7 = [".100", ".033", ".020", ".014", ".012", ".023", ".046", ".115", ".23", ".46", ".69",
             "1.15", "2.30", "3.23"]


@pytest.mark.parametrize("f, q, l, max_th, delay", list(zip(F_2_7, Q_2_7, L_2_7, MAX_TH_2_7, DELAY_2_7)))
def test_table_2_7_fpq_targets(f, q, l, max_th, delay):
    assert fpq_target_queue(f, 217) == printed(q)
    assert fpq_target_loss(f, 217) == printed(l)
    params = fpq_red_parameters(f, 217)
    assert params.max_th == printed(max_th)
    assert params.max_p == fpq_target_loss(f, 217)
    assert params.min_th == 5
    assert fpq_target_queue(f, 217) / packets_per_second(10e6) == printed(delay)


def test_section_2_7_crossing_and_cap_onset():
    # "The two branches of q cross at f = (5 + √(25 + 40r))/20 = 4.9 for r = 217"
    f_cross = fpq_crossover_flows(217)
    assert f_cross == printed("4.9")
    assert f_cross == pytest.approx((5 + math.sqrt(25 + 40 * 217)) / 20)
    assert 217 / (2 * f_cross - 1) == pytest.approx(5 * f_cross)
    # "the uncapped formula exceeds 0.016 once f ≥ about 247"
    assert fpq_cap_onset_flows(217) == printed("247")
    assert fpq_target_loss(247, 217, cap=None) < FPQ_LOSS_CAP < fpq_target_loss(248, 217, cap=None)
    assert fpq_target_loss(248, 217) == FPQ_LOSS_CAP


@pytest.mark.parametrize("ppf, formula, inversion", [
    (1, "0.128", "0.189"), (3, "0.0385", "0.047"), (5, "0.0183", "0.021"), (7, "0.0106", "0.012")])
def test_section_3_5_ppf_losses(ppf, formula, inversion):
    # §3.5: f = 500, r = 217, "the formula gives l_t = 0.128, 0.0385, 0.0183 (capped to 0.016), and
    # 0.0106"; "the pure w = PPF inversion gives 0.189, 0.047, 0.021, 0.012".
    assert fpq_target_loss(500, 217, ppf=ppf, cap=None) == printed(formula)
    assert loss_for_effective_window(ppf) == printed(inversion)
    # The digest's alternative cap (0.87/(PPF+1))² does not bind at f = 500.
    assert fpq_target_loss(500, 217, ppf=ppf, cap=loss_for_effective_window(ppf)) == printed(formula)


def test_section_3_5_ppf5_capped():
    assert fpq_target_loss(500, 217, ppf=5) == FPQ_LOSS_CAP


def test_section_5_5_short_t_clear_example():
    # Fig. 6.8: with t_clear = 0.05 s only "2170 × 0.05 ≈ 108 packets" arrive, so f ≤ about 100
    # and "the target is about 500 against the 1500 needed" for 300 flows.
    # ("≈ 108": 2170 × 0.05 is 108.5, which the digest truncates; "≈" allows a packet.)
    assert packets_per_second(10e6) * 0.05 == pytest.approx(108, abs=1)
    assert fpq_target_queue(100, 217) == 500
    assert fpq_target_queue(300, 217) == 1500


def test_fpq_flow_count_clamped_to_one():
    assert fpq_target_queue(0, 217) == fpq_target_queue(0.3, 217) == fpq_target_queue(1, 217) == 217
    assert fpq_target_loss(0, 217) == fpq_target_loss(1, 217)


# --------------------------------------------------------------------------- §2.8

@pytest.mark.parametrize("f, c", [(300, "291"), (1000, "906"), (1400, "1221"), (2500, "1967")])
def test_section_2_8_set_bits(f, c):
    assert expected_set_bits(f, 5000) == printed(c)
    assert flows_from_set_bits(expected_set_bits(f, 5000), 5000) == pytest.approx(f, rel=1e-9)


def test_section_2_8_undercount_percentages():
    assert (expected_set_bits(1000, 5000) - 1000) / 1000 == printed("-0.094")
    assert (expected_set_bits(1400, 5000) - 1400) / 1400 == printed("-0.128")


def test_section_2_8_saturated_vector_is_clamped():
    # Eq 6.1 is -inf at c = v_max; c is clamped to v_max - 1.
    assert flows_from_set_bits(5000, 5000) == flows_from_set_bits(4999, 5000)
    assert math.isfinite(flows_from_set_bits(5000, 5000))
    assert flows_from_set_bits(5000, 5000) == pytest.approx(math.log(5000) / -math.log1p(-1 / 5000))
    assert flows_from_set_bits(0, 5000) == 0


# --------------------------------------------------------------------------- §2.10 and small checks

def test_section_2_10_link_numbers():
    assert packets_per_second(10e6, 576) == printed("2170")
    assert packets_per_second(10e6) * 0.1 == printed("217")


def test_red_equations_5_8_to_5_10():
    assert red_loss(0.02, 250, 500) == pytest.approx(0.02)
    assert red_queue_for_loss(red_loss(0.03, 123, 400), 400, 0.03) == pytest.approx(123)
    assert aggregate_window(100, 0.01) == pytest.approx(870)


# --------------------------------------------------------------------------- properties

losses = st.floats(min_value=1e-6, max_value=0.999, allow_nan=False)
flows = st.floats(min_value=1, max_value=1e5, allow_nan=False)
buffers = st.floats(min_value=1, max_value=1e5, allow_nan=False)
v_maxes = st.integers(min_value=2, max_value=10**6)


@given(f_over_v=st.floats(min_value=0, max_value=3), v_max=v_maxes)
def test_set_bits_inverse_of_flows(f_over_v, v_max):
    f = f_over_v * v_max
    assume(expected_set_bits(f, v_max) <= v_max - 1)     # beyond that flows_from_set_bits clamps
    assert flows_from_set_bits(expected_set_bits(f, v_max), v_max) == pytest.approx(f, rel=1e-8, abs=1e-8)


@given(c_over_v=st.floats(min_value=0, max_value=1), v_max=v_maxes)
def test_flows_inverse_of_set_bits(c_over_v, v_max):
    c = min(c_over_v * v_max, v_max - 1)
    assert expected_set_bits(flows_from_set_bits(c, v_max), v_max) == pytest.approx(c, rel=1e-8, abs=1e-8)


@given(f_over_v=st.floats(min_value=0, max_value=0.2), v_max=st.integers(min_value=5, max_value=10**6))
def test_counter_within_ten_percent_when_v_max_at_least_5f(f_over_v, v_max):
    # Sec. 6.1: "f and c are within 10% of each other as long as v_max is at least five times f"
    # (for f >= 1 flows; c <= f there by Bernoulli's inequality).
    f = f_over_v * v_max
    assume(f >= 1)
    c = expected_set_bits(f, v_max)
    assert c <= f * (1 + 1e-12)
    assert (f - c) / f < 0.1


@given(n=flows, q=buffers, bdp=st.floats(min_value=0, max_value=1e4))
def test_tail_drop_loss_monotone(n, q, bdp):
    for loss in (droptail_loss, random_drop_loss):
        assert loss(n * 1.01, q, bdp) > loss(n, q, bdp)
        assert loss(n, q * 1.01, bdp) < loss(n, q, bdp)
        assert 0 < loss(n, q, bdp) < 0.76
    assert random_drop_loss(n, q, bdp) < droptail_loss(n, q, bdp)


@given(l=losses, rtt=st.floats(min_value=1e-3, max_value=2))
def test_in_flight_bounded_by_window(l, rtt):
    assert 0 < time_in_timeout(l, rtt) < 1
    assert 0 < packets_in_flight(l, rtt) < avg_window(l)
    assert packets_in_flight(l, rtt) == pytest.approx((1 - time_in_timeout(l, rtt)) * avg_window(l))


@given(l=losses, rtt=st.floats(min_value=1e-3, max_value=2))
def test_in_flight_decreasing_in_loss(l, rtt):
    assert packets_in_flight(l * 0.99, rtt) > packets_in_flight(l, rtt)


@given(n=st.floats(min_value=1, max_value=300), max_th=st.floats(min_value=10, max_value=20000),
       max_p=st.floats(min_value=1e-3, max_value=1), pps=st.floats(min_value=1000, max_value=1e5),
       rtt=st.floats(min_value=1e-3, max_value=0.5))
@settings(max_examples=200)
def test_p2_solves_equation_5_14(n, max_th, max_p, pps, rtt):
    literal = red_p2(n, max_th, max_p, pps=pps, rtt_s=rtt, variant="literal")
    queueing = red_p2(n, max_th, max_p, pps=pps, rtt_s=rtt, variant="queueing")
    for p in (literal, queueing):
        assert 0 < p.loss < 1
        assert p.queue_pkts == pytest.approx(red_queue_for_loss(p.loss, max_th, max_p))
        lhs = p.queue_pkts + pps * rtt
        rhs = n * packets_in_flight(p.loss, p.rtt_s)
        assert abs(lhs - rhs) <= 1e-9 * lhs
        assert p.time_in_timeout == pytest.approx(time_in_timeout(p.loss, p.rtt_s))
    # A longer RTT inside pif means fewer timeouts, more packets in flight, hence more loss.
    assert queueing.loss >= literal.loss * (1 - 1e-12)


@given(n=flows, max_th=buffers, max_p=st.floats(min_value=1e-4, max_value=1))
def test_p1_exact_solves_equation_5_11(n, max_th, max_p):
    p = red_p1(n, max_th, max_p)
    assert red_queue_for_loss(min(p.loss, 0.5), max_th, max_p) > 0
    assert p.loss * max_th / (2 * max_p) == pytest.approx(0.87 * n / math.sqrt(p.loss))
    assert p.queue_pkts == pytest.approx(p.loss * max_th / (2 * max_p))


@given(f=st.floats(min_value=0, max_value=1e5), bdp=st.floats(min_value=1, max_value=1e5),
       ppf=st.floats(min_value=0.5, max_value=20))
def test_fpq_red_parameters_give_target_loss_at_target_queue(f, bdp, ppf):
    # Fig. 6.4: Eq 5.8 at q_avg = q gives 2·l·q/(2q) = l.
    q = fpq_target_queue(f, bdp, ppf)
    params = fpq_red_parameters(f, bdp, ppf)
    assert red_loss(params.max_p, q, params.max_th) == pytest.approx(params.max_p)
    assert q >= ppf * max(f, 1) and q >= bdp / (2 * max(f, 1) - 1)
    assert 0 < params.max_p <= FPQ_LOSS_CAP


@given(bdp=st.floats(min_value=1, max_value=1e5), ppf=st.floats(min_value=0.5, max_value=20))
def test_fpq_queue_branches_meet_at_crossover(bdp, ppf):
    f = fpq_crossover_flows(bdp, ppf)
    assert bdp / (2 * f - 1) == pytest.approx(ppf * f)


# --------------------------------------------------------------------------- bad inputs

BAD_INPUTS = [
    (avg_window, (0,), {}, "loss", r"\(0, 1\)"),
    (avg_window, (1,), {}, "loss", r"\(0, 1\)"),
    (avg_window, (-0.1,), {}, "loss", r"\(0, 1\)"),
    (avg_window, (math.nan,), {}, "loss", "real number"),
    (effective_window, (1.5,), {}, "loss", r"\(0, 1\)"),
    (timeouts_per_packet, (0,), {}, "loss", r"\(0, 1\)"),
    (time_in_timeout, (0.01, 0), {}, "rtt_s", r"\(0, inf\)"),
    (time_in_timeout, (0.01, 0.1), {"window": -1}, "window", r"\(0, inf\)"),
    (time_in_timeout, (0.01, 0.1), {"timeout_s": 0}, "timeout_s", r"\(0, inf\)"),
    (packets_in_flight, (1.0, 0.1), {}, "loss", r"\(0, 1\)"),
    (packets_in_flight, (0.01, -0.1), {}, "rtt_s", r"\(0, inf\)"),
    (droptail_loss, (0, 500), {}, "n", r"\(0, inf\)"),
    (droptail_loss, (-5, 500), {}, "n", r"\(0, inf\)"),
    (droptail_loss, (10, 0), {}, "q_pkts", r"\(0, inf\)"),
    (droptail_loss, (10, 500), {"bdp_pkts": -1}, "bdp_pkts", r"\[0, inf\)"),
    (random_drop_loss, (10, -1), {}, "q_pkts", r"\(0, inf\)"),
    (random_drop_loss, (math.inf, 500), {}, "n", r"\(0, inf\)"),
    (red_loss, (0, 100, 500), {}, "max_p", r"\(0, 1\]"),
    (red_loss, (0.02, -1, 500), {}, "q_avg", r"\[0, inf\)"),
    (red_loss, (0.02, 100, 0), {}, "max_th", r"\(0, inf\)"),
    (red_queue_for_loss, (0, 500, 0.02), {}, "loss", r"\(0, 1\)"),
    (red_queue_for_loss, (0.01, 500, 1.5), {}, "max_p", r"\(0, 1\]"),
    (aggregate_window, (0, 0.01), {}, "n", r"\(0, inf\)"),
    (red_p1, (0, 500, 0.02), {}, "n", r"\(0, inf\)"),
    (red_p1, (100, 500, 0.02), {"constants": "rounded"}, "constants", "'exact' or 'thesis'"),
    (red_p2, (0, 500, 0.02), {}, "n", r"\(0, inf\)"),
    (red_p2, (100, -500, 0.02), {}, "max_th", r"\(0, inf\)"),
    (red_p2, (100, 500, 0.02), {"pps": 0}, "pps", r"\(0, inf\)"),
    (red_p2, (100, 500, 0.02), {"variant": "p2prime"}, "variant", "'literal' or 'queueing'"),
    (red_recommended, (100, 0.0, 0.01), {}, "loss", r"\(0, 1\)"),
    (red_recommended, (-1, 0.01, 0.01), {}, "n", r"\(0, inf\)"),
    (red_max_p_for_fixed_max_th, (100, 0), {}, "max_th", r"\(0, inf\)"),
    (red_max_p_for_fixed_max_th, (100, 500), {"fill": 0.5}, "fill", "constants='exact'"),
    (red_max_p_for_fixed_max_th, (100, 500), {"constants": "exact", "fill": 0}, "fill", r"\(0, 1\]"),
    (fpq_target_queue, (-1, 217), {}, "f", r"\[0, inf\)"),
    (fpq_target_queue, (10, 0), {}, "bdp_pkts", r"\(0, inf\)"),
    (fpq_target_queue, (10, 217), {"ppf": 0}, "ppf", r"\(0, inf\)"),
    (fpq_target_loss, (10, -217), {}, "bdp_pkts", r"\(0, inf\)"),
    (fpq_target_loss, (10, 217), {"cap": 0}, "cap", r"\(0, 1\]"),
    (fpq_red_parameters, (10, 0), {}, "bdp_pkts", r"\(0, inf\)"),
    (fpq_crossover_flows, (0,), {}, "bdp_pkts", r"\(0, inf\)"),
    (fpq_cap_onset_flows, (217,), {"cap": 2}, "cap", r"\(0, 1\]"),
    (expected_set_bits, (-1, 5000), {}, "f", r"\[0, inf\)"),
    (expected_set_bits, (10, 0), {}, "v_max", ">= 2"),
    (expected_set_bits, (10, 1), {}, "v_max", ">= 2"),
    (expected_set_bits, (10, 100.5), {}, "v_max", "integer"),
    (flows_from_set_bits, (10, -5), {}, "v_max", ">= 2"),
    (flows_from_set_bits, (5001, 5000), {}, "c", r"\[0, v_max\]"),
    (flows_from_set_bits, (-1, 5000), {}, "c", r"\[0, v_max\]"),
    (packets_per_second, (0,), {}, "rate_bps", r"\(0, inf\)"),
    (loss_for_effective_window, (0,), {}, "window_pkts", r"\(0, inf\)"),
]


@pytest.mark.parametrize("func, args, kwargs, name, allowed", BAD_INPUTS,
                         ids=[f"{b[0].__name__}-{b[3]}-{i}" for i, b in enumerate(BAD_INPUTS)])
def test_bad_inputs_raise(func, args, kwargs, name, allowed):
    with pytest.raises(ValueError) as info:
        func(*args, **kwargs)
    message = str(info.value)
    assert message.startswith(name + " "), message      # names the argument ...
    assert re.search(allowed, message), message         # ... and the allowed range


def test_p2_without_solution_raises():
    # A million flows keep more packets in flight than a 1-packet RED queue and a 0.001-packet
    # wire hold, even at loss → 1: Eq 5.14 has no root in (0, 1).
    with pytest.raises(ValueError, match="no solution of Eq 5.14"):
        red_p2(1e6, 1, 1, pps=1, rtt_s=0.001)
