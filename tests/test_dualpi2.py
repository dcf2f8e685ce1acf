"""DualPI2 (RFC 9332, `kind = "dualpi2"`, docs/dualpi2.md) end to end: DCTCP flows sending ECT(1)
(`ecn = "l4s"`) against Reno flows sending Not-ECT on a 10 Mb/s, 20 ms dumbbell; the per-queue
counters in summary.json; the `ecn` flow key and the discipline's bad-input messages.

Bounds, fixed before the first run (the numbers measured are in docs/dualpi2.md):

* L queue: mean sojourn at most 5 ms and at most a third of the classic queue's. The native L4S
  AQM marks above ~1 ms, but at 10 Mb/s one 1500 B packet takes 1.2 ms to send, so a packet
  that finds two ahead of it already waits over 2 ms; 5 ms is four packet times.
* Classic queue: mean sojourn within [0.5, 2] x the 15 ms target (the margin tests/test_pie.py
  uses for PIE's target).
* Rates: the mean per-flow goodput of the DCTCP family over the Reno family's within [0.5, 2].
  RFC 9332 §2.3 picks k = 2 so that a DCTCP-like window (2/p_L = 1/p') and a Reno window
  (1.22/sqrt(p_C) = 1.22/p') are about equal; the L flows' shorter RTT (no 15 ms queue) tips the
  rate balance back towards ~1. The RFC calls the result rough equality, not equality; a factor
  of 2 either way is the bound for "rough" here.
"""

from __future__ import annotations

import json
from pathlib import Path

import aqmlab
import pytest

from conftest import SMALL_TCP, run_cli

TARGET_S = 0.015
N = 5  # flows per family


def mixed(queue: dict, seed: int = 4) -> dict:
    return {
        "run": {"duration": "60s", "warmup": "20s", "seed": seed},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"},
                     "access": {"rate": "100Mbps", "delay": "1ms"}},
        "queue": queue,
        "flows": [
            {"kind": "tcp", "count": N, "congestion_control": "dctcp", "ecn": "l4s", "start_jitter": "1s"},
            {"kind": "tcp", "count": N, "congestion_control": "reno", "ecn": False, "start_jitter": "1s"},
        ],
    }


@pytest.fixture(scope="module", params=["rfc9332", "linux"])
def run(request):
    res = aqmlab.run(mixed({"kind": "dualpi2", "variant": request.param}))
    return request.param, res


def queue_figures(res) -> dict:
    q = res.summary["queues"][0]
    d, classes = q["details"], {c["name"]: c for c in q["classes"]}
    return {
        "l4s_sojourn_s": d["l4s_sojourn_ns"] * 1e-9 / classes["l4s"]["dequeues"],
        "classic_sojourn_s": d["classic_sojourn_ns"] * 1e-9 / classes["classic"]["dequeues"],
        "classes": classes,
        "details": d,
        "queue": q,
    }


def family_rates(res) -> tuple[float, float]:
    flows = res.flows
    dctcp = flows[flows["group"] == 0]["goodput_bps"].mean()
    reno = flows[flows["group"] == 1]["goodput_bps"].mean()
    return dctcp, reno


def test_l_queue_sojourn_stays_well_under_the_classic_queue(run) -> None:
    variant, res = run
    f = queue_figures(res)
    assert f["l4s_sojourn_s"] <= 0.005, (variant, f["l4s_sojourn_s"])
    assert f["l4s_sojourn_s"] <= f["classic_sojourn_s"] / 3, (variant, f["l4s_sojourn_s"], f["classic_sojourn_s"])


def test_classic_queue_holds_near_its_target(run) -> None:
    variant, res = run
    f = queue_figures(res)
    assert 0.5 * TARGET_S <= f["classic_sojourn_s"] <= 2.0 * TARGET_S, (variant, f["classic_sojourn_s"])
    # The PI decided: classic packets were dropped by the AQM, none by a full buffer.
    assert f["classes"]["classic"]["drops_early"] > 0 and f["queue"]["drops_overflow"] == 0
    assert f["queue"]["utilization"] > 0.95


@pytest.mark.xfail(strict=True, reason=(
    "measured below the a priori bound at 10 Mb/s: DCTCP/Reno per-flow rate 0.32 (rfc9332) and 0.22 "
    "(linux), seeds 4-6 alike. DCTCP's windows are ~3 segments: one 1500 B packet takes 1.2 ms to send, "
    "longer than the native L4S threshold (0.8-1.2 ms ramp, 1 ms step), so over half the L marks are "
    "native; with the native AQM off the ratio is 0.62 / 0.75, and this code base's senders do not grow "
    "the window on ECE ACKs (RFC 3168 §6.1.2), which holds DCTCP back further. docs/dualpi2.md"))
def test_the_two_families_share_the_link_roughly_equally(run) -> None:
    variant, res = run
    dctcp, reno = family_rates(res)
    assert 0.5 <= dctcp / reno <= 2.0, (variant, dctcp, reno)


@pytest.mark.parametrize("variant", ["rfc9332", "linux"])
def test_the_two_families_share_a_100_mbps_link_roughly_equally(variant: str) -> None:
    # Added after the 10 Mb/s result above, with the same bound: at 100 Mb/s a packet takes
    # 0.12 ms, well under the native threshold, and windows are ~40 segments. Measured (seed 4):
    # ratio 1.17 for both variants.
    sc = mixed({"kind": "dualpi2", "variant": variant})
    sc["topology"]["bottleneck"]["rate"] = "100Mbps"
    dctcp, reno = family_rates(aqmlab.run(sc))
    assert 0.5 <= dctcp / reno <= 2.0, (variant, dctcp, reno)


def test_l4s_traffic_is_marked_not_dropped_and_counters_add_up(run) -> None:
    variant, res = run
    f = queue_figures(res)
    l4s, classic, d, q = f["classes"]["l4s"], f["classes"]["classic"], f["details"], f["queue"]
    # Only DCTCP data is ECT(1); its ACKs (Not-ECT) and the Reno data go to the classic queue.
    assert d["l4s_marks"] > 0 and l4s["drops"] == 0 and d["l4s_drops_overload"] == 0
    assert d["classic_marks"] == 0, "no ECT(0) traffic"
    assert d["classic_drops"] == classic["drops_early"]
    assert q["marks"] == d["l4s_marks"] + d["classic_marks"]
    for key in ("arrivals", "enqueues", "dequeues", "drops"):
        assert l4s[key] + classic[key] == q[key], key
    dctcp_flows = res.flows[res.flows["group"] == 0]
    assert dctcp_flows["marks"].sum() == d["l4s_marks"]


def test_ecn_l4s_echoes_and_bad_values_name_the_key() -> None:
    sc = mixed({"kind": "dualpi2"})
    sc["run"] = {"duration": "2s", "warmup": "1s", "seed": 1}
    res = aqmlab.run(sc)
    flows = res.summary["scenario"]["flows"]
    assert flows[0]["ecn"] == "l4s" and flows[1]["ecn"] is False
    sc["flows"][0]["ecn"] = "ect1"
    with pytest.raises(aqmlab.ScenarioError, match=r'flows\[0\]\.ecn.*true \(ECT\(0\)\), false or "l4s" \(ECT\(1\), RFC 9331\), got "ect1"'):
        aqmlab.run(sc)
    sc["flows"][0]["ecn"] = False
    with pytest.raises(aqmlab.ScenarioError, match=r'flows\[0\]\.ecn.*needs ecn = true or "l4s"'):
        aqmlab.run(sc)


def test_ect1_flows_are_ecn_capable_in_a_classic_aqm() -> None:
    # RED with ECN marks ECT(1) packets exactly as ECT(0) ones: same run, same marks.
    def red(ecn):
        sc = mixed({"kind": "red", "limit": 100, "min_th": 5, "max_th": 15, "ecn": True})
        sc["run"] = {"duration": "15s", "warmup": "5s", "seed": 2}
        sc["flows"][0]["ecn"] = ecn
        return aqmlab.run(sc).summary
    a, b = red(True), red("l4s")
    assert a["queues"][0]["marks"] > 0
    assert a["queues"] == b["queues"] and a["flows"] == b["flows"]


# (the [queue] table's lines, expected fragments of the error line)
BAD = {
    "zero target": ('target = "0ms"', ["queue.target", "positive duration", "got 0"]),
    "negative alpha": ("alpha = -1", ["queue.alpha", ">= 0", "got -1"]),
    "zero coupling": ("k = 0", ["queue.k", "(0, 256]", "got 0"]),
    "protection over 100": ("c_protection = 101", ["queue.c_protection", "0..=100", "got 101"]),
    "unknown variant": ('variant = "ns3"', ["queue.variant", "ns3", "rfc9332", "linux"]),
    "unknown draws": ('draws = "dice"', ["queue.draws", "dice", "recur", "random"]),
    "bad limit": ('limit = "lots"', ["queue.limit"]),
    "unknown key": ('coupling = 2', ["queue.coupling", "unknown field"]),
}
RED_TABLE = 'kind = "red"\nlimit = 60\nmin_th = 5\nmax_th = 15\nmax_p = 0.1\nweight = 0.002'


@pytest.mark.parametrize("lines,fragments", BAD.values(), ids=BAD.keys())
def test_bad_dualpi2_keys_name_the_key(tmp_path: Path, lines: str, fragments: list[str]) -> None:
    scenario = tmp_path / "bad.toml"
    scenario.write_text(SMALL_TCP.replace(RED_TABLE, f'kind = "dualpi2"\n{lines}', 1))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 2, proc.stdout
    line = proc.stderr.strip().splitlines()[0]
    for fragment in fragments:
        assert fragment in line, f"{fragment!r} not in {line!r}"


def test_qdiscs_lists_dualpi2_with_every_key_documented() -> None:
    listed = {q["kind"]: q for q in json.loads(run_cli("qdiscs", "--json").stdout)}
    d = listed["dualpi2"]
    assert set(d["params"]) == set(d["docs"]), set(d["params"]) ^ set(d["docs"])
    assert d["params"]["k"] == 2 and d["params"]["alpha"] == 0.15 and d["params"]["beta"] == 3
    assert d["params"]["tupdate"] == "15ms" and d["params"]["limit"] == "auto"
    assert "RFC 9332" in d["source"]
