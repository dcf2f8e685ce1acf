//! FQ-PIE scripted sequences. Times in ms; the link is modelled by one `dequeue` per ms.

use super::*;
use crate::engine::{stream, StreamId};
use crate::packet::PacketKind;

const MS: u64 = 1_000_000;

fn pkt(flow: FlowId, size: u32) -> Packet {
    Packet { size, ..Packet::new(PacketKind::Udp, flow) }
}

fn at(ms: u64) -> Time {
    Time(ms * MS)
}

fn fq_pie(params: FqPieParams) -> FqPie {
    params.validate("queue").unwrap()
}

fn io() -> (Rng, DropBuf) {
    (stream(7, StreamId::Queue(0)), DropBuf::new())
}

/// Flows whose ids hash to distinct queues.
fn distinct_flows(q: &FqPie, n: usize) -> Vec<FlowId> {
    let mut seen = std::collections::HashSet::new();
    (0..).filter(|&f| seen.insert(q.queue_of(f))).take(n).collect()
}

/// A heavy flow sending 2 packets per ms and a sparse one sending every 10 ms share a link that
/// sends 1 packet per ms, for 4 s. Returns (the queue, verdicts of the heavy flow, of the sparse
/// flow, the sparse flow's largest sojourn in ns).
fn heavy_and_sparse(variant: PieVariant) -> (FqPie, Vec<Verdict>, Vec<Verdict>, u64) {
    let mut q = fq_pie(FqPieParams { variant, ..FqPieParams::default() });
    let f = distinct_flows(&q, 2);
    let (mut rng, mut drops) = io();
    let (mut heavy, mut sparse, mut worst) = (Vec::new(), Vec::new(), 0);
    for t in 0..4000 {
        heavy.push(q.enqueue(pkt(f[0], 1000), at(t), &mut rng, &mut drops));
        heavy.push(q.enqueue(pkt(f[0], 1000), at(t), &mut rng, &mut drops));
        if t % 10 == 0 {
            sparse.push(q.enqueue(pkt(f[1], 200), at(t), &mut rng, &mut drops));
        }
        if let Some(p) = q.dequeue(at(t), &mut drops) {
            if p.flow == f[1] {
                worst = worst.max(at(t).saturating_since(p.enqueued_at).0);
            }
        }
    }
    assert!(drops.is_empty(), "no overflow below 10240 packets");
    (q, heavy, sparse, worst)
}

#[test]
fn heavy_flow_is_early_dropped_sparse_flow_is_not_and_waits_at_most_one_packet() {
    for variant in [PieVariant::Rfc8033, PieVariant::Ns3] {
        let (q, heavy, sparse, worst) = heavy_and_sparse(variant);
        let early = heavy.iter().filter(|v| **v == Verdict::Dropped(DropKind::Early)).count();
        // 8000 arrivals for about 3600 departures: PIE on the heavy queue must shed a share.
        assert!(early > 1000, "{variant:?}: {early} early drops");
        assert!(sparse.iter().all(|v| *v == Verdict::Enqueued), "{variant:?}");
        // The sparse queue waits behind at most one quantum of the heavy one (two packets).
        assert!(worst <= 2 * MS, "{variant:?}: {worst} ns");
        let f = distinct_flows(&q, 2);
        assert!(q.drop_probability(f[0]) > 0.1, "{variant:?}: heavy p {}", q.drop_probability(f[0]));
        assert_eq!(q.drop_probability(f[1]), 0.0, "{variant:?}");
        let s = q.stats();
        assert_eq!(s.arrivals, s.enqueues + s.drops_early + s.drops_overflow);
        assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64);
    }
}

#[test]
fn backlogged_flows_share_bytes_equally_whatever_their_packet_size() {
    // Everything queued at t = 0 and sent within 2 µs: no PIE update runs, only DRR decides.
    let mut q = fq_pie(FqPieParams::default());
    let f = distinct_flows(&q, 2);
    let (mut rng, mut drops) = io();
    for _ in 0..3000 {
        q.enqueue(pkt(f[0], 1500), Time(0), &mut rng, &mut drops);
        q.enqueue(pkt(f[0], 1500), Time(0), &mut rng, &mut drops);
        q.enqueue(pkt(f[1], 300), Time(0), &mut rng, &mut drops);
    }
    let mut sent = [0u64; 2];
    for t in 0..2000 {
        let p = q.dequeue(Time(t), &mut drops).unwrap();
        sent[usize::from(p.flow == f[1])] += u64::from(p.size);
    }
    // Each round: 1514 B of quantum each; the 1500 B flow sends 1 or 2 packets, the 300 B one 5 or 6.
    let share = sent[1] as f64 / (sent[0] + sent[1]) as f64;
    assert!((share - 0.5).abs() < 0.01, "{sent:?}");
}

#[test]
fn full_queue_drops_the_arrival_in_the_linux_variant() {
    let mut q = fq_pie(FqPieParams { limit: 100, ..FqPieParams::default() });
    let f = distinct_flows(&q, 2);
    let (mut rng, mut drops) = io();
    for s in 0..100 {
        assert_eq!(q.enqueue(Packet { seq: s, ..pkt(f[0], 1000) }, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
    }
    // qdisc_qlen(sch) >= sch->limit: the arriving packet, whichever its flow, is dropped.
    assert_eq!(q.enqueue(pkt(f[1], 1000), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
    assert!(drops.is_empty());
    assert_eq!((q.len_packets(), q.active_queues()), (100, (1, 0)), "the dropped flow is not activated");
    assert_eq!(q.stats().drops_overflow, 1);
}

#[test]
fn full_queue_sheds_half_of_the_fattest_queue_from_its_head_in_the_ns3_variant() {
    let mut q = fq_pie(FqPieParams { limit: 100, variant: PieVariant::Ns3, ..FqPieParams::default() });
    let f = distinct_flows(&q, 2);
    let (mut rng, mut drops) = io();
    for s in 0..90 {
        q.enqueue(Packet { seq: s, ..pkt(f[0], 1000) }, Time(0), &mut rng, &mut drops);
    }
    for _ in 0..10 {
        q.enqueue(pkt(f[1], 1000), Time(0), &mut rng, &mut drops);
    }
    assert!(drops.is_empty());
    // The 101st packet is accepted; then 45 packets (half of 90 000 B, under the batch of 64)
    // leave the head of the fat queue, oldest first.
    assert_eq!(q.enqueue(pkt(f[1], 1000), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
    assert_eq!(drops.len(), 45);
    assert!(drops.iter().enumerate().all(|(i, (p, k))| p.flow == f[0] && p.seq == i as u32 && *k == DropKind::Overflow));
    assert_eq!(q.len_packets(), 101 - 45);
    assert_eq!(q.len_bytes(), 56_000);
    let s = q.stats();
    assert_eq!(s.enqueues, s.dequeues + s.drops() + q.len_packets() as u64);
}

#[test]
fn overflow_key_overrides_the_variant() {
    let mut q = fq_pie(FqPieParams { limit: 2, variant: PieVariant::Ns3, overflow: FqPieOverflow::Tail, ..FqPieParams::default() });
    let (mut rng, mut drops) = io();
    q.enqueue(pkt(1, 1000), Time(0), &mut rng, &mut drops);
    q.enqueue(pkt(1, 1000), Time(0), &mut rng, &mut drops);
    assert_eq!(q.enqueue(pkt(1, 1000), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
    let mut q = fq_pie(FqPieParams { limit: 2, overflow: FqPieOverflow::Fattest, ..FqPieParams::default() });
    q.enqueue(pkt(1, 1000), Time(0), &mut rng, &mut drops);
    q.enqueue(pkt(1, 1000), Time(0), &mut rng, &mut drops);
    assert_eq!(q.enqueue(pkt(1, 1000), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
    assert_eq!(drops.len(), 2); // until at least half of 3000 B is gone: two packets
}

#[test]
fn linux_variant_updates_every_queue_on_one_grid_from_half_a_second() {
    let mut q = fq_pie(FqPieParams::default());
    let (mut rng, mut drops) = io();
    q.enqueue(pkt(1, 1000), at(100), &mut rng, &mut drops); // the timer first fires at 500 ms
    assert_eq!(q.queues[q.queue_of(1)].pie.updates, 0);
    q.enqueue(pkt(2, 1000), at(530), &mut rng, &mut drops); // 500, 515, 530 ms
    let st = &q.queues[q.queue_of(2)].pie;
    assert_eq!((st.updates, st.next_update_at), (3, at(545)));
}

#[test]
fn ns3_variant_starts_a_queue_s_updates_at_its_first_arrival() {
    let mut q = fq_pie(FqPieParams { variant: PieVariant::Ns3, ..FqPieParams::default() });
    let (mut rng, mut drops) = io();
    q.enqueue(pkt(1, 1000), at(7), &mut rng, &mut drops);
    let i = q.queue_of(1);
    // The arrival armed the burst allowance (150 ms); CalculateP ran right after it and spent 15.
    assert_eq!(q.queues[i].pie.updates, 1);
    assert_eq!(q.queues[i].pie.burst_allowance, Dur::from_millis(135));
    q.dequeue(at(21), &mut drops);
    assert_eq!(q.queues[i].pie.updates, 1);
    q.dequeue(at(22), &mut drops);
    assert_eq!(q.queues[i].pie.updates, 2);
}

#[test]
fn ecn_marks_while_p_is_at_most_ecn_prob_and_drops_above() {
    let mut q = fq_pie(FqPieParams { ecn: true, max_burst: Duration(Dur::ZERO), ..FqPieParams::default() });
    let (mut rng, mut drops) = io();
    let ect = Packet { ecn: Ecn::Ect, ..pkt(1, 1000) };
    for _ in 0..3 {
        q.enqueue(pkt(1, 1000), Time(0), &mut rng, &mut drops);
    }
    let i = q.queue_of(1);
    q.queues[i].pie.next_update_at = Time::NEVER; // freeze p
    q.queues[i].pie.qdelay_old = 1.0;
    q.queues[i].pie.p = 0.1; // Linux: prob <= ecn_prob marks
    let v: Vec<_> = (0..200).map(|_| q.enqueue(ect, Time(0), &mut rng, &mut drops)).collect();
    assert!(v.contains(&Verdict::Marked) && !v.iter().any(|v| matches!(v, Verdict::Dropped(_))));
    q.queues[i].pie.p = 0.5;
    let v: Vec<_> = (0..200).map(|_| q.enqueue(ect, Time(0), &mut rng, &mut drops)).collect();
    assert!(v.contains(&Verdict::Dropped(DropKind::Early)) && !v.contains(&Verdict::Marked));
    // A packet that is not ECN-capable is dropped at the low p too.
    q.queues[i].pie.p = 0.1;
    let v: Vec<_> = (0..200).map(|_| q.enqueue(pkt(1, 1000), Time(0), &mut rng, &mut drops)).collect();
    assert!(v.contains(&Verdict::Dropped(DropKind::Early)) && !v.contains(&Verdict::Marked));
}

#[test]
fn bad_keys_name_the_key_and_what_is_allowed() {
    let bad = |p: FqPieParams| p.validate("queue").err().unwrap().to_string();
    let d = FqPieParams::default;
    assert_eq!(bad(FqPieParams { limit: 0, ..d() }), "queue.limit: must be in 1..=16777216, got 0");
    assert_eq!(bad(FqPieParams { flows: 70000, ..d() }), "queue.flows: must be in 1..=65536, got 70000");
    assert_eq!(bad(FqPieParams { quantum: Bytes(0), ..d() }), "queue.quantum: must be in 1..=1048576, got 0");
    assert_eq!(bad(FqPieParams { drop_batch: 0, ..d() }), "queue.drop_batch: must be in 1..=65536, got 0");
    assert_eq!(bad(FqPieParams { alpha: -1.0, ..d() }), "queue.alpha: must be a finite number >= 0 (per second), got -1");
    assert_eq!(bad(FqPieParams { beta: f64::INFINITY, ..d() }), "queue.beta: must be a finite number >= 0 (per second), got inf");
    assert_eq!(bad(FqPieParams { target: Duration(Dur::ZERO), ..d() }), "queue.target: must be a positive duration, got 0");
    assert_eq!(bad(FqPieParams { t_update: Duration(Dur::ZERO), ..d() }), "queue.t_update: must be a positive duration, got 0");
    assert_eq!(bad(FqPieParams { dq_threshold: Bytes(0), ..d() }), "queue.dq_threshold: must be in 1..=1073741824, got 0");
    assert_eq!(bad(FqPieParams { mean_pkt_size: Bytes(0), ..d() }), "queue.mean_pkt_size: must be in 1..=1048576, got 0");
    assert_eq!(bad(FqPieParams { ecn_prob: 1.5, ..d() }), "queue.ecn_prob: must be a probability in [0, 1], got 1.5");
}

#[test]
fn counters_are_conserved_under_overload_in_both_variants() {
    for (variant, bytemode) in [(PieVariant::Rfc8033, false), (PieVariant::Ns3, false), (PieVariant::Rfc8033, true)] {
        let mut q = fq_pie(FqPieParams { variant, bytemode, limit: 300, ..FqPieParams::default() });
        let (mut rng, mut drops) = io();
        let mut t = 0;
        for i in 0..30_000u32 {
            t += 300_000; // 3.3 arrivals per ms over 7 flows, 2.5 departures per ms
            q.enqueue(Packet { seq: i, ..pkt(i % 7, 200 + 200 * (i % 7)) }, Time(t), &mut rng, &mut drops);
            if i % 4 != 0 {
                q.dequeue(Time(t), &mut drops);
            }
        }
        let s = *q.stats();
        assert!(s.drops_early > 0, "{variant:?} {s:?}");
        assert_eq!(s.arrivals, s.enqueues + s.drops_early + if q.tail_drop { s.drops_overflow } else { 0 });
        assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64 + if q.tail_drop { 0 } else { s.drops_overflow });
        assert_eq!(q.len_bytes(), q.queues.iter().map(|f| f.fifo.bytes()).sum::<u64>());
        assert!(q.len_packets() <= 300);
    }
}
