"""Cross-check against ns-3 (issue #2, validation 3): the same dumbbells, settings matched point
by point (`aqmlab.ns3ref` lists them), aggregate goodput within 3 %, fairness, drop rates and queue
lengths close. The ns-3 program is built from `validation/ns3` (the first run installs the `ns3`
wheel, about two minutes)."""

from __future__ import annotations

import pandas as pd
import pytest
from aqmlab import ns3ref


@pytest.fixture(scope="module")
def ns3_binary():
    return ns3ref.build()


@pytest.fixture(scope="module")
def comparisons(ns3_binary) -> dict[str, ns3ref.Comparison]:
    rows = {name: ns3ref.compare(ns3_binary, s) for name, s in ns3ref.SCENARIOS.items()}
    print("\n" + ns3ref.markdown_table(list(rows.values())))
    return rows


@pytest.mark.parametrize("name", list(ns3ref.SCENARIOS))
def test_aggregate_goodput_within_3_percent(comparisons, name: str) -> None:
    c = comparisons[name]
    assert c.aqmlab["tcp_goodput_bps"] == pytest.approx(c.ns3["tcp_goodput_bps"], rel=0.03)
    if c.ns3["udp_goodput_bps"]:
        assert c.aqmlab["udp_goodput_bps"] == pytest.approx(c.ns3["udp_goodput_bps"], rel=0.03)


KNOWN_DROP_RATE_GAP = pytest.mark.xfail(
    strict=True,
    reason="open difference (docs/validation.md): without SACK under RED, aqmlab's NewReno sees 38 % more "
    "drops than ns-3's at the same goodput (±1 %) and mean queue (±4 %)",
)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=KNOWN_DROP_RATE_GAP) if n == "red_10flows_nosack" else n for n in ns3ref.SCENARIOS
])
def test_drop_rate_close(comparisons, name: str) -> None:
    c = comparisons[name]
    assert c.aqmlab["drop_rate"] == pytest.approx(c.ns3["drop_rate"], rel=0.25)


@pytest.mark.parametrize("name", list(ns3ref.SCENARIOS))
def test_mean_queue_close(comparisons, name: str) -> None:
    c = comparisons[name]
    assert c.aqmlab["mean_queue_pkts"] == pytest.approx(c.ns3["mean_queue_pkts"], rel=0.25)


@pytest.mark.parametrize("name", list(ns3ref.SCENARIOS))
def test_fairness_close(comparisons, name: str) -> None:
    c = comparisons[name]
    assert c.aqmlab["jain_tcp"] == pytest.approx(c.ns3["jain_tcp"], abs=0.1)


def test_unequal_rtts_favour_short_flows_in_both(comparisons) -> None:
    c = comparisons["fifo_unequal_rtt"]
    ours, theirs = pd.Series(c.aqmlab["per_flow_goodput_bps"]), pd.Series(c.ns3["per_flow_goodput_bps"])
    spearman = ours.rank().corr(theirs.rank())  # Pearson on ranks; pandas' "spearman" needs scipy
    assert spearman > 0.7
