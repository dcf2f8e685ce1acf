"""CoDel (RFC 8289) and FQ-CoDel (RFC 8290) in whole simulations: what each is for, asserted on
properties fixed from the algorithms before the runs (the ns-3 cross-check is in
tests/test_ns3_crosscheck.py, scenarios codel_10flows and fq_codel_10flows)."""

from __future__ import annotations

import copy

import aqmlab
import pytest

from conftest import SMALL_TCP, run_cli

BASE = {
    "run": {"duration": "30s", "warmup": "5s", "seed": 1},
    "topology": {"bottleneck": {"rate": "10Mbps", "delay": "20ms"}, "access": {"rate": "100Mbps", "delay": "1ms"}},
    "flows": [{"kind": "tcp", "variant": "sack", "count": 10, "start_jitter": "1s"}],
}


def run_with(queue: dict, flows: list[dict] | None = None):
    sc = copy.deepcopy(BASE)
    sc["queue"] = queue
    if flows:
        sc["flows"] = flows
    return aqmlab.run(sc)


def test_codel_removes_the_standing_queue_a_big_drop_tail_buffer_keeps() -> None:
    """1000 packets of drop-tail buffer fill up (bufferbloat); CoDel with the same buffer holds the
    sojourn near its 5 ms target: below one interval (100 ms) and a tenth of drop-tail's, while the
    link stays busy."""
    fifo = run_with({"kind": "droptail", "limit": 1000}).queues.iloc[0]
    codel = run_with({"kind": "codel", "limit": 1000}).queues.iloc[0]
    assert codel["mean_sojourn_s"] < 0.1
    assert codel["mean_sojourn_s"] < 0.1 * fifo["mean_sojourn_s"], (codel["mean_sojourn_s"], fifo["mean_sojourn_s"])
    assert codel["drops_early"] > 0 and codel["drops_overflow"] == 0
    assert codel["utilization"] > 0.9


@pytest.mark.parametrize("variant", ["rfc8289", "ns3"])
def test_both_codel_variants_control_the_queue(variant: str) -> None:
    q = run_with({"kind": "codel", "variant": variant}).queues.iloc[0]
    assert 0 < q["mean_sojourn_s"] < 0.05
    assert q["drops_early"] > 0


def test_fq_codel_serves_a_sparse_flow_ahead_of_the_bulk_flows_queue() -> None:
    """A 64 kb/s UDP flow among 10 bulk TCP flows: under CoDel its packets wait behind the
    standing queue (about the 5 ms target); under FQ-CoDel a sparse flow's queue is new at almost
    every arrival and is served first, so it waits for little more than the packet on the wire
    (1.2 ms). Its median one-way delay must be at least 3 ms lower."""
    flows = [*BASE["flows"], {"kind": "udp-cbr", "rate": "64kbps", "packet_size": "200B"}]
    sparse = {}
    for kind in ("codel", "fq_codel"):
        f = run_with({"kind": kind}, flows).flows
        sparse[kind] = float(f.loc[f["kind"] != "tcp", "delay_p50_s"].iloc[0])
    assert sparse["fq_codel"] < sparse["codel"] - 0.003, sparse


def test_fq_codel_shares_the_link_equally_between_unequal_rtts() -> None:
    """Per-flow queues with a byte quantum give each backlogged flow the same rate whatever its
    RTT (1 to 19 ms access delays: base RTTs 44 to 80 ms); RED and drop-tail favour short RTTs."""
    flows = [{"kind": "tcp", "variant": "sack", "start_jitter": "1s", "access_delay": f"{1 + 2 * i}ms"}
             for i in range(10)]
    jain = {}
    for q in ({"kind": "fq_codel"}, {"kind": "droptail"}):
        g = run_with(q, flows).flows["goodput_bps"]
        jain[q["kind"]] = g.sum() ** 2 / (len(g) * (g**2).sum())
    assert jain["fq_codel"] > 0.99, jain
    assert jain["fq_codel"] > jain["droptail"], jain


def test_fq_codel_marks_ecn_flows_and_charges_each_mark_to_its_flow() -> None:
    """With ECN-capable TCP, CoDel's signals are marks made at dequeue (none dropped): they
    appear in the queue's and in the flows' counters alike."""
    flows = [{"kind": "tcp", "variant": "sack", "ecn": True, "count": 10, "start_jitter": "1s"}]
    r = run_with({"kind": "fq_codel"}, flows)
    q = r.queues.iloc[0]
    assert q["drops_early"] == 0 and q["drops_overflow"] == 0
    assert q["marks"] > 0
    assert int(r.flows["marks"].sum()) == int(q["marks"])
    assert int(r.flows["ecn_reductions"].sum()) > 0


@pytest.mark.parametrize(("edit", "fragments"), [
    ('kind = "codel"\ntarget = "200ms"', ["queue.target", "shorter than interval"]),
    ('kind = "codel"\nvariant = "linux"', ["queue.variant", "linux", "rfc8289", "ns3"]),
    ('kind = "codel"\nmin_bytes = "lots"', ["queue.min_bytes", "lots", "auto"]),
    ('kind = "fq_codel"\nflows = 0', ["queue.flows", "1..=65536", "got 0"]),
    ('kind = "fq_codel"\nquantum = 1514', ["queue.quantum", "size"]),
])
def test_bad_codel_keys_get_one_line_naming_the_key(tmp_path, edit: str, fragments: list[str]) -> None:
    lines = [ln for ln in SMALL_TCP.splitlines() if not ln.startswith(("min_th", "max_th", "max_p", "weight", "limit"))]
    scenario = "\n".join(lines).replace('kind = "red"', edit)
    path = tmp_path / "s.toml"
    path.write_text(scenario)
    proc = run_cli("run", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for frag in fragments:
        assert frag in proc.stderr, (frag, proc.stderr)
    assert not (tmp_path / "out").exists()
