"""The claim bookkeeping every reproduction report shares (`aqmlab.repro.common`)."""

from __future__ import annotations

import numpy as np
import pytest

from aqmlab.repro.common import Claim, SeedMean, claim_notes, clearly_greater, single_seed_caveat, tally


def test_numpy_verdicts_count_like_python_ones() -> None:
    # Criteria are often numpy comparisons; the reports count verdicts with `is True` / `is False`.
    claims = [Claim("a", "", "", "", "", np.float64(2.0) > 1), Claim("b", "", "", "", "", np.bool_(False)),
              Claim("c", "", "", "", "", None)]
    assert [c.holds for c in claims] == [True, False, None]
    assert sum(c.holds is True for c in claims) == 1 and sum(c.holds is False for c in claims) == 1
    assert [c.verdict for c in claims] == ["holds", "does not hold", "shown"]


def test_a_shared_note_is_written_once() -> None:
    claims = [Claim(i, "", "", "", "", False, note=n) for i, n in (("x", "same"), ("y", "same"), ("z", "other"))]
    assert claim_notes(claims).splitlines() == ["* **x** (does not hold): same", "* **y** (does not hold): as x.",
                                                "* **z** (does not hold): other"]


def test_seed_mean_gives_the_standard_error_of_the_mean() -> None:
    m = SeedMean.of([1.0, 2.0, 3.0, 4.0])
    assert m.mean == 2.5
    # sample variance 5/3, over 4 values, square root
    assert m.se == pytest.approx((5 / 3 / 4) ** 0.5)
    assert m.n == 4


def test_clearly_greater_says_true_false_or_cannot_tell() -> None:
    a, b = SeedMean(1.0, 0.01, 5), SeedMean(0.9, 0.01, 5)
    assert clearly_greater(a, b) is True
    assert clearly_greater(b, a) is False
    # 0.1 apart with a combined standard error of 0.071: within two standard errors
    assert clearly_greater(SeedMean(1.0, 0.05, 5), SeedMean(0.9, 0.05, 5)) is None
    # the margin moves the bar: a must exceed b by 0.2 more than the noise
    assert clearly_greater(a, b, margin=0.2) is False
    # one seed: the plain comparison, but a tie (80.0 kb/s windows both ways) cannot tell
    assert clearly_greater(SeedMean.of([1.0]), SeedMean.of([0.9])) is True
    assert clearly_greater(SeedMean.of([0.9]), SeedMean.of([1.0])) is False
    assert clearly_greater(SeedMean.of([80.0]), SeedMean.of([80.0])) is None
    assert clearly_greater(SeedMean.of([1.0]), SeedMean.of([0.9]), margin=0.1) is None


def test_single_seed_reports_say_their_verdicts_are_unreplicated() -> None:
    assert "unreplicated" in single_seed_caveat(1) and "--quick" in single_seed_caveat(1)
    assert single_seed_caveat(2) == ""


def test_a_claim_within_noise_has_no_verdict_and_is_counted_apart() -> None:
    noisy = Claim("X1", "§1", "a > b", "a > b", "1.0 vs 0.99", None, within_noise=True)
    assert noisy.verdict == "within noise"
    with pytest.raises(ValueError, match="X2"):
        Claim("X2", "§1", "a > b", "a > b", "1.0 vs 0.99", True, within_noise=True)
    held = Claim("X3", "§1", "s", "t", "o", True)
    shown = Claim("X4", "§1", "s", "t", "o", None)
    assert tally([noisy, held, shown]) == "1 of 3 claims hold, 0 do not, 1 within noise, 1 shown only"
