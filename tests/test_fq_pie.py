"""FQ-PIE (`kind = "fq_pie"`, docs/fq_pie.md) end to end: each flow queue's PIE keeps the delay
within a few targets by early drops alone, the round robin evens out unequal RTTs, a sparse flow
keeps a low delay beside bulk TCP, results repeat for a seed, and bad keys give one clear line."""

from __future__ import annotations

import json
from pathlib import Path

import aqmlab
import pytest

from conftest import SMALL_TCP, run_cli

TARGET_S = 0.015  # PIE's default target, per flow queue
ACCESS_MS = [1, 5, 9, 13, 17]  # sender access delays: base RTTs 44 to 76 ms


def dumbbell(queue: dict, *, seed: int = 3, udp: bool = False) -> dict:
    flows = [{"kind": "tcp", "count": 2, "start_jitter": "1s", "access_delay": f"{d}ms"} for d in ACCESS_MS]
    if udp:
        # A sparse CBR flow: 100 kb/s of 200-byte packets, 1 % of the link.
        flows.append({"kind": "udp-cbr", "rate": "100kbps", "packet_size": "200B"})
    return {
        "run": {"duration": "30s", "warmup": "10s", "seed": seed},
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"},
                     "access": {"rate": "100Mbps", "delay": "1ms"}},
        "queue": queue,
        "flows": flows,
    }


@pytest.fixture(scope="module")
def runs() -> dict:
    return {v: aqmlab.run(dumbbell({"kind": "fq_pie", "variant": v, "limit": 1000})) for v in ("rfc8033", "ns3")}


@pytest.mark.parametrize("variant", ["rfc8033", "ns3"])
def test_per_queue_pie_keeps_the_delay_within_a_few_targets(runs, variant: str) -> None:
    # Our first bound, [0.5, 2] x target (PIE's own test), failed: measured 34.6 ms (rfc8033) and
    # 33.0 ms (ns3), about 2.8 packets per flow queue. ns-3's FqPieQueueDisc holds the same on
    # fq_pie_10flows (28.0 packets queued, aqmlab 27.8), so it is FQ-PIE's behaviour, not ours.
    # Cause not isolated: not the two-packet safeguard (mean_pkt_size = 1B: 35.6 ms) nor the
    # estimator (dq_rate: 49.6 ms); one shared PIE (flows = 1) holds 19.3 ms. With 10 flows in DRR
    # a packet behind k of its own flow's waits about 10 k packet times, and the timestamp
    # estimate is 0 whenever a dequeue empties its (short) queue. Asserted: between the target and
    # 3 x target; every drop an early one (1000 packets are never reached); the link busy.
    q = runs[variant].queues.iloc[0]
    assert TARGET_S <= q["mean_sojourn_s"] <= 3 * TARGET_S, q["mean_sojourn_s"]
    assert q["drops_early"] > 0 and q["drops_overflow"] == 0
    assert q["utilization"] > 0.95
    assert q["drops"] == q["drops_early"] + q["drops_forced"] + q["drops_overflow"]
    assert q["marks"] == 0  # no ECN configured


@pytest.mark.parametrize("variant", ["rfc8033", "ns3"])
def test_round_robin_evens_out_unequal_rtts(runs, variant: str) -> None:
    flows = runs[variant].flows
    g = flows["goodput_bps"]
    assert (g.sum() ** 2) / (len(g) * (g**2).sum()) > 0.98, g.tolist()


def test_a_sparse_flow_waits_less_than_the_bulk_flows() -> None:
    res = aqmlab.run(dumbbell({"kind": "fq_pie", "limit": 1000}, udp=True))
    f = res.flows
    udp, tcp = f[f["kind"] == "udp-cbr"].iloc[0], f[f["kind"] == "tcp"]
    # The CBR flow's queue holds at most a packet or two: no early drop reaches it (PIE's
    # two-packet safeguard) and its one-way delay stays near the base 22 ms.
    assert udp["drops"] == 0, udp.to_dict()
    assert udp["delay_mean_s"] < 0.030, udp["delay_mean_s"]
    assert (tcp["delay_mean_s"] > udp["delay_mean_s"]).all()


def test_same_seed_same_results_other_seed_other_results() -> None:
    sc = dumbbell({"kind": "fq-pie", "variant": "ns3", "limit": 1000}, seed=5)
    a, b = aqmlab.run(sc), aqmlab.run(sc)
    cols = ["goodput_bps", "retransmits", "timeouts"]
    assert a.flows[cols].equals(b.flows[cols])
    assert a.queues.iloc[0]["drops"] == b.queues.iloc[0]["drops"]
    c = aqmlab.run(dumbbell({"kind": "fq_pie", "variant": "ns3", "limit": 1000}, seed=6))
    assert not a.flows[cols].equals(c.flows[cols])


# (the [queue] table's lines, expected fragments of the error line)
BAD = {
    "zero flows": ("flows = 0", ["queue.flows", "1..=65536", "got 0"]),
    "zero quantum": ('quantum = "0B"', ["queue.quantum", "1..=1048576", "got 0"]),
    "zero limit": ("limit = 0", ["queue.limit", "1..=16777216", "got 0"]),
    "zero target": ('target = "0ms"', ["queue.target", "positive duration", "got 0"]),
    "negative beta": ("beta = -2", ["queue.beta", ">= 0", "got -2"]),
    "ecn_prob above one": ("ecn_prob = 10", ["queue.ecn_prob", "[0, 1]", "got 10"]),
    "unknown overflow": ('overflow = "head"', ["queue.overflow", "head", "tail", "fattest"]),
    "unknown variant": ('variant = "linux"', ["queue.variant", "linux", "rfc8033", "ns3"]),
    "pie's key name": ("mark_ecn_threshold = 0.1", ["queue.mark_ecn_threshold", "unknown field", "ecn_prob"]),
}
RED_TABLE = 'kind = "red"\nlimit = 60\nmin_th = 5\nmax_th = 15\nmax_p = 0.1\nweight = 0.002'


@pytest.mark.parametrize("case", list(BAD))
def test_bad_fq_pie_key_is_one_clear_line(case: str, tmp_path: Path) -> None:
    line, fragments = BAD[case]
    assert RED_TABLE in SMALL_TCP
    scenario = tmp_path / "bad.toml"
    scenario.write_text(SMALL_TCP.replace(RED_TABLE, f'kind = "fq_pie"\n{line}', 1))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("aqmlab: error: ") and "Traceback" not in proc.stderr, proc.stderr
    for fragment in fragments + ["bad.toml"]:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"


def test_bad_key_raises_scenario_error_from_the_api() -> None:
    with pytest.raises(aqmlab.ScenarioError, match=r"queue\.flows: must be in 1\.\.=65536, got 0"):
        aqmlab.run(dumbbell({"kind": "fq_pie", "flows": 0}))


def test_a_good_fq_pie_table_validates_and_is_listed(tmp_path: Path) -> None:
    scenario = tmp_path / "good.toml"
    scenario.write_text(SMALL_TCP.replace(RED_TABLE, 'kind = "fq-pie"\nvariant = "ns3"\nlimit = 500\necn = true\n'
                                          'ecn_prob = 0.2\nbytemode = true\noverflow = "tail"\n'
                                          'delay_estimator = "dq_rate"\nderandomize = true', 1))
    proc = run_cli("validate", str(scenario))
    assert proc.returncode == 0, proc.stderr
    listed = run_cli("qdiscs", "--json")
    assert listed.returncode == 0, listed.stderr
    listed = {q["kind"]: q for q in json.loads(listed.stdout)}
    fq = listed["fq_pie"]
    assert fq["aliases"] == ["fq-pie"]
    assert set(fq["params"]) == set(fq["docs"]), set(fq["params"]) ^ set(fq["docs"])
    assert fq["params"]["limit"] == 10240 and fq["params"]["flows"] == 1024
