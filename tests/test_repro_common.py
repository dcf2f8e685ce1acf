"""The claim bookkeeping every reproduction report shares (`aqmlab.repro.common`)."""

from __future__ import annotations

import numpy as np

from aqmlab.repro.common import Claim, claim_notes


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
