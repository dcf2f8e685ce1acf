//! Scripted tests of CAKE (`cake.rs`): COBALT's two halves, set-associative placement, DRR++,
//! host fairness, the shaper and overload. Expected numbers are hand calculations from
//! sch_cake.c's rules, stated beside each assertion.

use super::*;
use crate::engine::{stream, StreamId};
use crate::packet::PacketKind;

const MS: u64 = 1_000_000;

fn at_ms(ms: u64) -> Time {
    Time(ms * MS)
}

fn params() -> CobaltParams {
    CobaltParams::new(Dur::from_millis(5), Dur::from_millis(100))
}

/// A queue that has been through an episode and come to rest: 1/√count at its count-0 value.
fn cobalt_at_rest() -> Cobalt {
    Cobalt { rec_inv_sqrt: 1.0, ..Cobalt::default() }
}

fn never() -> f64 {
    panic!("BLUE is idle: no draw")
}

/// Dequeues one packet of sojourn `sojourn_ms` every millisecond from `from` to `to` (ms) and
/// returns the times (ms) at which COBALT signalled.
fn signal_times(c: &mut Cobalt, from: u64, to: u64, sojourn_ms: u64, ecn: Ecn) -> Vec<(u64, CobaltDecision)> {
    let p = params();
    (from..to)
        .filter_map(|t| {
            let d = c.should_drop(&p, at_ms(t), Dur::from_millis(sojourn_ms), ecn, never);
            (d != CobaltDecision::default()).then_some((t, d))
        })
        .collect()
}

/// A busy queue below target until 1000 ms (the activity timeout drop_next = now + interval
/// is fresh), with `rec_inv_sqrt` as given.
fn busy_below_target(rec_inv_sqrt: f64) -> Cobalt {
    let mut c = Cobalt { rec_inv_sqrt, ..Cobalt::default() };
    assert!(signal_times(&mut c, 900, 1000, 1, Ecn::NotEct).is_empty());
    assert_eq!(c.drop_next, at_ms(1099));
    c
}

#[test]
fn cobalt_at_rest_drops_like_codel_when_blue_is_idle() {
    // Sojourn 10 ms > target from t = 1000 ms: the first drop is one interval later (1100 ms),
    // then at drop_next += 100 ms/√count: +70.710678 ms (count 2) → 1170.71, so the 1171 ms
    // packet; +57.735026 (count 3) → 1228.45 → 1229 ms; +50 (count 4) → 1278.45 → 1279 ms.
    let mut c = busy_below_target(1.0);
    let drops = signal_times(&mut c, 1000, 1280, 10, Ecn::NotEct);
    let times: Vec<u64> = drops.iter().map(|(t, _)| *t).collect();
    assert_eq!(times, [1100, 1171, 1229, 1279]);
    assert!(drops.iter().all(|(_, d)| d.codel_drop && !d.mark && !d.blue_drop));
    assert_eq!(c.count, 5);
    assert_eq!(c.drop_next, Time(1100 * MS + 70_710_678 + 57_735_026 + 50_000_000 + 44_721_359));
}

#[test]
fn fresh_queue_signals_on_the_second_packet_above_target() {
    // Linux zeroes cobalt_vars: rec_inv_sqrt = 0, so drop_next = now + 0 on entering dropping,
    // and the next packet above target is already due; then +70.71 ms (count 2).
    let mut c = busy_below_target(0.0);
    let drops = signal_times(&mut c, 1000, 1080, 10, Ecn::NotEct);
    assert_eq!(drops.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [1001, 1071]);
}

#[test]
fn a_queue_idle_for_over_an_interval_signals_on_its_second_packet_above_target() {
    // The activity timeout (drop_next) lies in the past: entering dropping, the stale schedule
    // is positive, so drop_next = now and the next packet is due (cobalt_should_drop's tail).
    let mut c = Cobalt { rec_inv_sqrt: 1.0, drop_next: at_ms(500), ..Cobalt::default() };
    let drops = signal_times(&mut c, 1000, 1003, 10, Ecn::NotEct);
    assert_eq!(drops.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [1001]);
}

#[test]
fn ect_packets_are_marked_by_codel_but_dropped_by_blue() {
    let mut c = busy_below_target(1.0);
    let marks = signal_times(&mut c, 1000, 1172, 10, Ecn::Ect);
    assert_eq!(marks.iter().map(|(t, _)| *t).collect::<Vec<_>>(), [1100, 1171]);
    assert!(marks.iter().all(|(_, d)| d.mark && !d.drop()));
    // With BLUE active (p_drop = 1/2), a draw below p drops the ECT packet; above, it passes.
    let p = params();
    let mut c = Cobalt { p_drop: 0.5, ..cobalt_at_rest() };
    let d = c.should_drop(&p, at_ms(10), Dur::ZERO, Ecn::Ect, || 0.49);
    assert_eq!(d, CobaltDecision { mark: false, codel_drop: false, blue_drop: true });
    let d = c.should_drop(&p, at_ms(11), Dur::ZERO, Ecn::Ect, || 0.51);
    assert_eq!(d, CobaltDecision::default());
}

#[test]
fn blue_rises_on_overflow_and_decays_on_empty_at_most_once_per_target() {
    let p = params();
    let mut c = cobalt_at_rest();
    // blue_timer starts at 0: at t = 0 the hold-off (now − timer > 5 ms) has not passed.
    assert!(!c.on_queue_full(&p, at_ms(0)));
    assert_eq!(c.p_drop, 0.0);
    assert!(c.on_queue_full(&p, at_ms(10))); // idle → active
    assert_eq!(c.p_drop, P_INC);
    assert!(!c.on_queue_full(&p, at_ms(15))); // 5 ms is not more than target
    assert_eq!(c.p_drop, P_INC);
    c.on_queue_full(&p, at_ms(16));
    assert_eq!(c.p_drop, 2.0 / 256.0);
    // Overflow also puts CoDel in dropping with a signal due now.
    assert!(c.dropping && c.count == 1 && c.drop_next == at_ms(16));
    c.on_queue_empty(&p, at_ms(20)); // within the hold-off: p unchanged
    assert_eq!(c.p_drop, 2.0 / 256.0);
    c.on_queue_empty(&p, at_ms(22));
    assert_eq!(c.p_drop, 2.0 / 256.0 - 1.0 / 4096.0);
    assert!(!c.dropping);
    // 31 more decrements (one per hold-off) bring it to zero: 2/256 = 32/4096.
    let mut down = false;
    for k in 1..=31 {
        down = c.on_queue_empty(&p, at_ms(22 + 6 * k));
    }
    assert!(down && c.p_drop == 0.0);
}

#[test]
fn codel_count_decays_one_step_per_control_interval_instead_of_resetting() {
    // count 4 (1/√4 = 0.5), due at 1000 ms; packets now leave below target.
    let p = params();
    let mut c = Cobalt { count: 4, rec_inv_sqrt: 0.5, drop_next: at_ms(1000), ..Cobalt::default() };
    let d = c.should_drop(&p, at_ms(1000), Dur::from_millis(1), Ecn::NotEct, never);
    assert_eq!(d, CobaltDecision::default());
    // One step: count 3, next step 100/√3 = 57.735026 ms on.
    assert_eq!((c.count, c.drop_next), (3, Time(1000 * MS + 57_735_026)));
    c.should_drop(&p, at_ms(1057), Dur::from_millis(1), Ecn::NotEct, never);
    assert_eq!(c.count, 3);
    c.should_drop(&p, at_ms(1058), Dur::from_millis(1), Ecn::NotEct, never);
    assert_eq!(c.count, 2);
    // A second later every step due has been taken: 2 → 1 → 0, and drop_next is the activity
    // timeout now + interval.
    c.should_drop(&p, at_ms(2058), Dur::from_millis(1), Ecn::NotEct, never);
    assert_eq!((c.count, c.drop_next), (0, at_ms(2158)));
    // Back above target with count 2 left over, the first signal comes after interval/√2.
    let mut c = Cobalt { count: 2, rec_inv_sqrt: 1.0 / 2f64.sqrt(), drop_next: at_ms(5000), ..Cobalt::default() };
    let drops = signal_times(&mut c, 3000, 3100, 10, Ecn::NotEct);
    assert_eq!(drops.first().map(|(t, _)| *t), Some(3071)); // 3000 + 70.71 ms
}

// ---- the discipline ----

fn pkt(flow: FlowId, seq: u32, size: u32) -> Packet {
    Packet { seq, size, ..Packet::new(PacketKind::Udp, flow) }
}

fn cake(p: CakeParams) -> (Cake, Rng, DropBuf) {
    (p.validate("queue").unwrap(), stream(1, StreamId::Queue(0)), DropBuf::new())
}

fn flows_mode() -> CakeParams {
    CakeParams { isolation: CakeIsolation::Flows, diffserv: CakeDiffserv::Besteffort, ..CakeParams::default() }
}

/// Flow ids whose hashes fall in the same set of 8 queues (not flow 0: its hash is 0, the
/// value the empty tags hold, so it would find "its" tag at once rather than take a free way).
fn flows_in_one_set(n: usize) -> Vec<FlowId> {
    let set_of = |f: FlowId| flow_hash(f, 0) as usize % CAKE_QUEUES / 8;
    (1..).filter(|&f| set_of(f) == set_of(1)).take(n).collect()
}

#[test]
fn defaults_are_sch_cakes() {
    let q = CakeParams::default().validate("queue").unwrap();
    // Unlimited: 10240 × 1514 B memory, quantum 1514, target 5 ms, interval 100 ms, 3 tins.
    assert_eq!(q.buffer_limit(), 10_240 * 1514);
    let (cp, quantum) = q.tin_params(0);
    assert_eq!((cp.target, cp.interval, cp.mtu_time, quantum), (Dur::from_millis(5), Dur::from_millis(100), Dur::ZERO, 1514.0));
    assert_eq!(q.class_count(), 3);
    // 10 Mb/s = 1 250 000 B/s: quantum 1 250 000 >> 12 = 305; MTU time 1514 × 800 ns = 1.2112 ms,
    // under target, so target stays 5 ms; memory max(4 MiB, 4 × 125 000 B) = 4 MiB. Bulk tin at
    // 1/16: 78 125 B/s, MTU time 19.3792 ms, target 1.5 × that = 29.0688 ms, interval
    // 100 + 29.0688 − 5 = 124.0688 ms. Voice at 1/4: quantum 312 500 >> 12 = 76 → 300.
    let q = CakeParams { bandwidth: RateOrUnlimited::Rate(10e6), ..CakeParams::default() }.validate("queue").unwrap();
    assert_eq!(q.buffer_limit(), 4 << 20);
    let (cp, quantum) = q.tin_params(0);
    assert_eq!((cp.target, cp.mtu_time, quantum), (Dur::from_millis(5), Dur(1_211_200), 305.0));
    let (cp, _) = q.tin_params(1);
    assert_eq!((cp.mtu_time, cp.target, cp.interval), (Dur(19_379_200), Dur(29_068_800), Dur(124_068_800)));
    assert_eq!((q.tin_rate_bytes_per_s(1), q.tin_params(2).1), (78_125, 300.0));
}

#[test]
fn dscp_selects_the_tin_by_sch_cakes_tables() {
    let ds3 = CakeDiffserv::Diffserv3;
    assert_eq!([0, 8, 1, 46, 44, 48, 10, 34].map(|d| ds3.tin_of(d)), [0, 1, 1, 2, 2, 2, 0, 0]);
    let ds4 = CakeDiffserv::Diffserv4;
    assert_eq!([0, 8, 34, 24, 46, 32, 10].map(|d| ds4.tin_of(d)), [0, 1, 2, 2, 3, 3, 0]);
    let mut q = CakeParams::default().validate("queue").unwrap();
    q.set_flow_labels(&[FlowLabel { dscp: 46, ..FlowLabel::default_for(0) }, FlowLabel::default_for(1)]);
    assert_eq!((q.tin_of(&pkt(0, 0, 100)), q.tin_of(&pkt(1, 0, 100)), q.tin_of(&pkt(7, 0, 100))), (2, 0, 0));
}

#[test]
fn shaped_a_voice_packet_goes_ahead_of_a_best_effort_backlog() {
    // diffserv3 at 8 Mb/s: flow 0 best effort with 20 packets, then an EF (voice) packet of flow
    // 1. At the next dequeue both tins are due; the higher tin (voice, index 2) wins.
    let (mut q, mut rng, mut drops) = cake(CakeParams { bandwidth: RateOrUnlimited::Rate(8e6), isolation: CakeIsolation::Flows, ..CakeParams::default() });
    q.set_flow_labels(&[FlowLabel::default_for(0), FlowLabel { dscp: 46, ..FlowLabel::default_for(1) }]);
    for s in 0..20 {
        q.enqueue(pkt(0, s, 1000), Time(0), &mut rng, &mut drops);
    }
    assert_eq!(q.dequeue(Time(0), &mut drops).map(|p| p.flow), Some(0));
    q.enqueue(pkt(1, 0, 200), Time(10), &mut rng, &mut drops);
    assert_eq!(q.dequeue(at_ms(1), &mut drops).map(|p| p.flow), Some(1));
    // The voice tin's own schedule (2 Mb/s: 800 µs for 200 B) is not due again before
    // 1.8 ms, but it is empty anyway: best effort resumes 200 µs after the voice packet.
    assert_eq!(q.next_wakeup(), Some(Time(1_200_000)));
    assert_eq!(q.dequeue(Time(1_200_000), &mut drops).map(|p| p.flow), Some(0));
    let cs = q.class_stats();
    assert_eq!((cs[2].name.as_str(), cs[2].stats.dequeues, cs[0].stats.dequeues), ("voice", 1, 2));
}

#[test]
fn eight_flows_of_one_set_get_eight_queues_and_a_ninth_collides() {
    let (mut q, mut rng, mut drops) = cake(flows_mode());
    let f = flows_in_one_set(9);
    let mut queues = Vec::new();
    for &flow in &f[..8] {
        q.enqueue(pkt(flow, 0, 100), Time(0), &mut rng, &mut drops);
        queues.push(q.classify(0, &pkt(flow, 0, 100)));
    }
    let distinct: std::collections::HashSet<_> = queues.iter().collect();
    assert_eq!(distinct.len(), 8);
    assert!(queues.iter().all(|&i| i / 8 == queues[0] / 8)); // all within the one set
    let d = *q.details();
    // Each first packet found its tag nowhere and took a free way; a flow whose hashed queue
    // was taken by an earlier one of the set counts no direct hit.
    assert_eq!(d.way_misses, 8);
    assert_eq!(d.way_collisions, 0);
    // The ninth: no free way → collision, it shares its hashed queue.
    q.enqueue(pkt(f[8], 0, 100), Time(0), &mut rng, &mut drops);
    assert_eq!(q.details().way_collisions, 1);
    let hashed = flow_hash(f[8], 0) as usize % CAKE_QUEUES;
    assert_eq!(q.queue_len(0, hashed), 2);
}

#[test]
fn direct_mapped_tables_let_flows_of_one_hashed_queue_collide() {
    // With set_ways = 1 two flows with the same hashed queue share it (FQ-CoDel's behaviour).
    let set_of = |f: FlowId| flow_hash(f, 0) as usize % CAKE_QUEUES;
    let a = 0;
    let b = (1..).find(|&f| set_of(f) == set_of(a)).unwrap();
    let (mut q, mut rng, mut drops) = cake(CakeParams { set_ways: 1, ..flows_mode() });
    q.enqueue(pkt(a, 0, 100), Time(0), &mut rng, &mut drops);
    q.enqueue(pkt(b, 0, 100), Time(0), &mut rng, &mut drops);
    assert_eq!(q.queue_len(0, set_of(a)), 2);
    assert_eq!(q.details().way_collisions, 1);
    // 8-way: the same pair gets two queues.
    let (mut q, mut rng, mut drops) = cake(flows_mode());
    q.enqueue(pkt(a, 0, 100), Time(0), &mut rng, &mut drops);
    q.enqueue(pkt(b, 0, 100), Time(0), &mut rng, &mut drops);
    assert_eq!(q.queue_len(0, set_of(a)), 1);
    assert_eq!(q.details().way_collisions, 0);
}

#[test]
fn a_new_sparse_flow_is_served_before_a_backlogged_one() {
    let (mut q, mut rng, mut drops) = cake(flows_mode());
    for s in 0..50 {
        q.enqueue(pkt(1, s, 1500), Time(0), &mut rng, &mut drops);
    }
    // The bulk flow sends its first quantum (1514 B: one packet, then a second goes negative).
    assert_eq!(q.dequeue(Time(1), &mut drops).map(|p| p.flow), Some(1));
    assert_eq!(q.dequeue(Time(2), &mut drops).map(|p| p.flow), Some(1));
    q.enqueue(pkt(2, 0, 100), Time(3), &mut rng, &mut drops);
    assert_eq!(q.dequeue(Time(4), &mut drops).map(|p| p.flow), Some(2));
    // Flow 1 has become bulk (spent its deficit while backlogged), flow 2 left sparse.
    let i1 = q.classify(0, &pkt(1, 0, 0));
    assert_eq!(q.flow_set(0, i1), FlowSet::Bulk);
    assert_eq!(q.details().bulk_transitions, 1);
    // Flow 2, found empty, waits in the decaying list (its activity timeout, 100 ms from its
    // dequeue, has not passed), counted neither sparse nor bulk; flow 1 is served.
    assert_eq!(q.dequeue(Time(5), &mut drops).map(|p| p.flow), Some(1));
    let (counts, lists) = q.tin_counts(0);
    assert_eq!((counts, lists), ([0, 1, 1], [0, 1, 1]));
    let i2 = q.classify(0, &pkt(2, 0, 0));
    assert_eq!(q.flow_set(0, i2), FlowSet::Decaying);
}

#[test]
fn triple_isolate_shares_between_hosts_and_flows_mode_between_flows() {
    // Host A sends 4 backlogged flows, host B one; all to distinct receivers. At time 0 nothing
    // is over target, so the shares are the scheduler's alone.
    let labels: Vec<FlowLabel> = (0..5)
        .map(|f| FlowLabel { sender_host: if f < 4 { 1 } else { 2 }, receiver_host: 100 + f, dscp: 0 })
        .collect();
    let share_of_b = |isolation| {
        let (mut q, mut rng, mut drops) = cake(CakeParams { isolation, diffserv: CakeDiffserv::Besteffort, ..CakeParams::default() });
        q.set_flow_labels(&labels);
        for s in 0..2000 {
            for f in 0..5 {
                q.enqueue(pkt(f, s, 1500), Time(0), &mut rng, &mut drops);
            }
        }
        let mut bytes = [0u64; 2];
        for _ in 0..4000 {
            let p = q.dequeue(Time(0), &mut drops).unwrap();
            bytes[usize::from(p.flow == 4)] += u64::from(p.size);
        }
        assert!(drops.is_empty());
        bytes[1] as f64 / (bytes[0] + bytes[1]) as f64
    };
    // triple-isolate: host A's flows each get quantum/4, so the hosts split 1:1.
    let b = share_of_b(CakeIsolation::TripleIsolate);
    assert!((b - 0.5).abs() < 0.02, "{b}");
    let b = share_of_b(CakeIsolation::DualSrchost);
    assert!((b - 0.5).abs() < 0.02, "{b}");
    // flows: five equal flows, B gets 1/5.
    let b = share_of_b(CakeIsolation::Flows);
    assert!((b - 0.2).abs() < 0.02, "{b}");
    // dual-dsthost: receivers are distinct, so per-flow as well.
    let b = share_of_b(CakeIsolation::DualDsthost);
    assert!((b - 0.2).abs() < 0.02, "{b}");
}

#[test]
fn shaper_spaces_departures_by_size_over_bandwidth() {
    // 8 Mb/s = 1 000 000 B/s: 1000 ns per byte, a 1000 B packet every 1 ms.
    let (mut q, mut rng, mut drops) = cake(CakeParams { bandwidth: RateOrUnlimited::Rate(8e6), ..flows_mode() });
    for s in 0..4 {
        q.enqueue(pkt(1, s, 1000), at_ms(10), &mut rng, &mut drops);
    }
    assert_eq!(q.dequeue(at_ms(10), &mut drops).map(|p| p.seq), Some(0));
    assert_eq!(q.dequeue(at_ms(10), &mut drops), None);
    assert_eq!(q.next_wakeup(), Some(at_ms(11)));
    assert_eq!(q.dequeue(Time(11 * MS - 1), &mut drops), None);
    assert_eq!(q.dequeue(at_ms(11), &mut drops).map(|p| p.seq), Some(1));
    assert_eq!(q.next_wakeup(), Some(at_ms(12)));
    // Late by 0.5 ms: the schedule runs from the old value (deficit mode), not from now.
    assert_eq!(q.dequeue(Time(12 * MS + MS / 2), &mut drops).map(|p| p.seq), Some(2));
    assert_eq!(q.next_wakeup(), Some(at_ms(13)));
    // overhead and mpu change the charge: a 40 B packet with mpu 64 costs 64 µs.
    let (mut q, mut rng, mut drops) =
        cake(CakeParams { bandwidth: RateOrUnlimited::Rate(8e6), mpu: Bytes(64), overhead: 4, ..flows_mode() });
    q.enqueue(pkt(1, 0, 40), Time(0), &mut rng, &mut drops);
    q.enqueue(pkt(1, 1, 1000), Time(0), &mut rng, &mut drops);
    q.dequeue(Time(0), &mut drops);
    assert_eq!(q.next_wakeup(), Some(Time(64_000)));
    q.dequeue(Time(64_000), &mut drops);
    // 1000 + 4 overhead bytes: 1.004 ms later; the queue is empty, so no wake-up is needed.
    assert_eq!(q.next_wakeup(), None);
    assert_eq!(q.stats().dequeues, 2);
}

#[test]
fn overload_prunes_the_fattest_queue_and_raises_its_blue() {
    let (mut q, mut rng, mut drops) = cake(CakeParams { memlimit: SizeOrAuto::Bytes(10_000), ..flows_mode() });
    for s in 0..8 {
        q.enqueue(pkt(1, s, 1000), at_ms(10), &mut rng, &mut drops);
    }
    q.enqueue(pkt(2, 0, 1000), at_ms(10), &mut rng, &mut drops);
    q.enqueue(pkt(2, 1, 1000), at_ms(10), &mut rng, &mut drops);
    assert!(drops.is_empty()); // 10 000 B: at the limit, not over
    q.enqueue(pkt(2, 2, 1000), at_ms(10), &mut rng, &mut drops);
    // 11 000 > 10 000: one packet from the head of flow 1 (8000 B, the fattest).
    assert_eq!(drops.len(), 1);
    assert_eq!((drops[0].0.flow, drops[0].0.seq, drops[0].1), (1, 0, DropKind::Overflow));
    let i1 = q.classify(0, &pkt(1, 0, 0));
    let c = q.cobalt(0, i1);
    assert_eq!((c.p_drop, c.dropping, c.count), (P_INC, true, 1)); // 10 ms > 5 ms hold-off
    assert_eq!((q.len_bytes(), q.stats().drops_overflow, q.details().overflow_drops), (10_000, 1, 1));
    let st = q.stats();
    assert_eq!(st.enqueues, st.dequeues + st.drops() + q.len_packets() as u64);
}

#[test]
fn the_last_packet_of_a_queue_is_delivered_even_when_cobalt_says_drop() {
    let (mut q, mut rng, mut drops) = cake(flows_mode());
    q.enqueue(pkt(1, 0, 1000), Time(0), &mut rng, &mut drops);
    q.enqueue(pkt(1, 1, 1000), Time(0), &mut rng, &mut drops);
    // Both leave 50 ms late; the fresh queue's first signal is due at once (rec_inv_sqrt 0):
    // the first packet enters dropping, the second is due but is the last: kept.
    assert_eq!(q.dequeue(at_ms(50), &mut drops).map(|p| p.seq), Some(0));
    assert_eq!(q.dequeue(at_ms(51), &mut drops).map(|p| p.seq), Some(1));
    assert!(drops.is_empty());
    assert_eq!(q.details().cobalt_last_packet_kept, 1);
}

#[test]
fn an_emptied_queue_waits_in_the_decaying_list_until_cobalt_rests() {
    let (mut q, mut rng, mut drops) = cake(flows_mode());
    for s in 0..3 {
        q.enqueue(pkt(1, s, 1000), Time(0), &mut rng, &mut drops);
    }
    // 50 ms sojourn: the first dequeue enters dropping (count 1), the second is dropped.
    assert_eq!(q.dequeue(at_ms(50), &mut drops).map(|p| p.seq), Some(0));
    assert_eq!(q.dequeue(at_ms(51), &mut drops).map(|p| p.seq), Some(2));
    assert_eq!(drops.iter().map(|(p, k)| (p.seq, *k)).collect::<Vec<_>>(), [(1, DropKind::Early)]);
    // With nothing queued, dequeue returns at once (sch_cake checks qlen first): flow 1, empty,
    // is still in the new list with its deficit spent (1514 − 2000 B).
    assert_eq!(q.dequeue(at_ms(52), &mut drops), None);
    let i = q.classify(0, &pkt(1, 0, 0));
    assert_eq!(q.flow_set(0, i), FlowSet::Sparse);
    // Flow 2 arrives with 5 packets. Dequeue 1: flow 1's spent deficit moves it to the old list
    // (empty: SPARSE_WAIT), flow 2 sends. 2: flow 2 again. 3: flow 2's deficit is spent (bulk,
    // old list behind flow 1); flow 1 is found empty with COBALT not at rest (count 2): decaying.
    for s in 0..5 {
        q.enqueue(pkt(2, s, 1000), at_ms(52), &mut rng, &mut drops);
    }
    for s in 0..3 {
        assert_eq!(q.dequeue(at_ms(52), &mut drops).map(|p| (p.flow, p.seq)), Some((2, s)));
    }
    assert_eq!(q.flow_set(0, i), FlowSet::Decaying);
    assert_eq!(q.tin_counts(0), ([0, 1, 1], [0, 1, 1]));
    // A packet for it brings it back to the new list as a sparse flow.
    q.enqueue(pkt(1, 3, 1000), at_ms(60), &mut rng, &mut drops);
    assert_eq!((q.flow_set(0, i), q.tin_counts(0)), (FlowSet::Sparse, ([1, 1, 0], [1, 1, 0])));
}

#[test]
fn bad_keys_are_refused_with_the_key_named() {
    for (p, key) in [
        (CakeParams { bandwidth: RateOrUnlimited::Rate(0.0), ..CakeParams::default() }, "queue.bandwidth"),
        (CakeParams { rtt: Duration(Dur::ZERO), ..CakeParams::default() }, "queue.rtt"),
        (CakeParams { set_ways: 3, ..CakeParams::default() }, "queue.set_ways"),
        (CakeParams { overhead: 300, ..CakeParams::default() }, "queue.overhead"),
    ] {
        let e = p.validate("queue").err().unwrap();
        assert!(e.to_string().contains(key), "{e}");
    }
}

// ---- invariants over random scripts ----

use proptest::prelude::{any, prop, prop_assert, prop_assert_eq, proptest, ProptestConfig, Strategy, TestCaseError};

/// Checks the bookkeeping a script must never break: conservation, byte and packet totals, each
/// listed queue counted once as sparse, bulk or decaying, and each host's bulk counts equal to
/// the bulk queues pointing at it.
fn check_invariants(q: &Cake) -> Result<(), TestCaseError> {
    let st = q.stats();
    prop_assert_eq!(st.arrivals, st.enqueues);
    prop_assert_eq!(st.enqueues, st.dequeues + st.drops() + q.len_packets() as u64);
    let (mut pkts, mut bytes) = (0usize, 0u64);
    for (t, b) in q.tins.iter().enumerate() {
        let tin_bytes: u64 = b.flows.iter().map(|f| f.fifo.bytes()).sum();
        prop_assert_eq!(tin_bytes, b.tin_backlog);
        pkts += b.flows.iter().map(|f| f.fifo.len()).sum::<usize>();
        bytes += tin_bytes;
        let (counts, lists) = q.tin_counts(t);
        prop_assert_eq!(counts.iter().sum::<u32>() as usize, lists.iter().sum::<usize>());
        let count = |s: &[FlowSet]| b.flows.iter().filter(|f| s.contains(&f.set)).count() as u32;
        prop_assert_eq!(counts, [count(&[FlowSet::Sparse, FlowSet::SparseWait]), count(&[FlowSet::Bulk]), count(&[FlowSet::Decaying])]);
        for f in b.flows.iter().filter(|f| !f.fifo.is_empty()) {
            prop_assert!(matches!(f.set, FlowSet::Sparse | FlowSet::Bulk), "a queue with packets is sparse or bulk: {:?}", f.set);
        }
        let (mut src, mut dst) = (vec![0u32; CAKE_QUEUES], vec![0u32; CAKE_QUEUES]);
        for f in b.flows.iter().filter(|f| f.set == FlowSet::Bulk) {
            src[f.srchost as usize] += 1;
            dst[f.dsthost as usize] += 1;
        }
        for (h, host) in b.hosts.iter().enumerate() {
            if q.dual_src() {
                prop_assert_eq!(host.srchost_bulk_flow_count, src[h]);
            }
            if q.dual_dst() {
                prop_assert_eq!(host.dsthost_bulk_flow_count, dst[h]);
            }
        }
        prop_assert!(b.tins_sane());
    }
    prop_assert_eq!((pkts, bytes), (q.len_packets(), q.len_bytes()));
    prop_assert!(q.len_bytes() <= q.buffer_limit());
    Ok(())
}

impl Tin {
    fn tins_sane(&self) -> bool {
        self.len == self.flows.iter().map(|f| f.fifo.len()).sum::<usize>()
    }
}

fn any_isolation() -> impl Strategy<Value = CakeIsolation> {
    prop::sample::select(vec![
        CakeIsolation::Flowblind,
        CakeIsolation::Srchost,
        CakeIsolation::Dsthost,
        CakeIsolation::Hosts,
        CakeIsolation::Flows,
        CakeIsolation::DualSrchost,
        CakeIsolation::DualDsthost,
        CakeIsolation::TripleIsolate,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_scripts_keep_the_books(
        isolation in any_isolation(),
        diffserv in prop::sample::select(vec![CakeDiffserv::Besteffort, CakeDiffserv::Diffserv3, CakeDiffserv::Diffserv4]),
        shaped in any::<bool>(),
        ways in prop::sample::select(vec![1u32, 2, 8]),
        // (op: 0-5 enqueue, 6-8 dequeue, 9 pause; flow 0-40; size; ECN; step µs)
        ops in prop::collection::vec((0u8..10, 0u32..40, 40u32..1514, any::<bool>(), 0u64..3000), 1..600),
    ) {
        let params = CakeParams {
            isolation,
            diffserv,
            set_ways: ways,
            bandwidth: if shaped { RateOrUnlimited::Rate(20e6) } else { RateOrUnlimited::Unlimited },
            memlimit: SizeOrAuto::Bytes(60_000),
            ..CakeParams::default()
        };
        let (mut q, mut rng, mut drops) = cake(params);
        // 40 flows on 6 sender and 5 receiver hosts, DSCPs across the tables.
        let dscps = [0u8, 8, 46, 34, 1, 32, 10];
        let labels: Vec<FlowLabel> = (0..40)
            .map(|f| FlowLabel { sender_host: f % 6, receiver_host: 100 + f % 5, dscp: dscps[f as usize % dscps.len()] })
            .collect();
        q.set_flow_labels(&labels);
        let mut now = Time(0);
        let mut seq = 0;
        for (op, flow, size, ect, step) in ops {
            now += Dur(step * 1000 * u64::from(op == 9) * 50 + step * 1000);
            match op {
                0..=5 => {
                    let kind = if size < 100 { PacketKind::TcpAck } else { PacketKind::TcpData };
                    let p = Packet { seq, size, ecn: if ect { Ecn::Ect } else { Ecn::NotEct }, ..Packet::new(kind, flow) };
                    seq += 1;
                    prop_assert_eq!(q.enqueue(p, now, &mut rng, &mut drops), Verdict::Enqueued);
                }
                6..=8 => {
                    let before = q.len_packets();
                    match q.dequeue(now, &mut drops) {
                        Some(p) => prop_assert!(p.enqueued_at <= now),
                        // Nothing to send: empty, or the shaper says later.
                        None => prop_assert!(before == 0 || q.next_wakeup().is_some_and(|w| w > now) || q.len_packets() < before),
                    }
                }
                _ => {}
            }
            check_invariants(&q)?;
        }
    }
}
