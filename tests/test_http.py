"""`kind = "http"` browsers through the Python API: Mah's distributions are the default, the stand-ins
stay selectable, and a run is a function of its scenario and seed."""

from __future__ import annotations

import pandas as pd
import pytest

import aqmlab


def browsers(**keys: object) -> dict:
    """20 browsers on a 10 Mb/s dumbbell for 200 s (60 s warm-up), think times clipped short."""
    return {
        "run": {"duration": "200s", "warmup": "60s", "seed": 3},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "5ms"}},
        "flows": [{"kind": "http", "count": 20, "start_jitter": "5s", **keys}],
    }


def test_mah_is_the_default_and_its_calibrated_clip_is_echoed() -> None:
    flow = aqmlab.validate(browsers())["flows"][0]
    assert flow["distributions"] == "mah"
    assert (flow["think_max"], flow["start_mode"]) == ("192s", "stationary")
    assert "think_mean" not in flow and "primary_median" not in flow
    flow = aqmlab.validate(browsers(distributions="parametric"))["flows"][0]
    assert (flow["think_max"], flow["think_mean"], flow["primary_median"]) == ("600s", "50s", "2000B")


def test_parametric_keys_need_parametric() -> None:
    with pytest.raises(aqmlab.ScenarioError, match=r'flows\[0\]\.think_mean: not a key of distributions = "mah"'):
        aqmlab.validate(browsers(think_mean="5s"))
    aqmlab.validate(browsers(distributions="parametric", think_mean="5s"))


@pytest.mark.parametrize("keys", [{"think_max": "5s"}, {"think_max": "5s", "start_mode": "synchronized"},
                                  {"distributions": "parametric", "think_mean": "5s"}])
def test_same_seed_same_result(keys: dict) -> None:
    a, b = aqmlab.run(browsers(**keys), plot=False), aqmlab.run(browsers(**keys), plot=False)
    assert len(a.transfers) > 100
    pd.testing.assert_frame_equal(a.transfers, b.transfers)
    pd.testing.assert_frame_equal(a.flows, b.flows)
    c = aqmlab.run(browsers(**keys), seed=4, plot=False)
    assert not a.transfers.equals(c.transfers)
