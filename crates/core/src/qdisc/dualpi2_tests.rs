//! DualPI2 scripted sequences. Times in µs or ms as named; 1000-byte packets. Expected numbers
//! are hand computations from RFC 9332 Appendix A.1's formulas (stated beside each).

use super::*;
use crate::engine::{stream, StreamId};
use crate::packet::PacketKind;

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const RATE: f64 = 10e6;

fn pkt(ecn: Ecn, seq: u32) -> Packet {
    Packet { seq, size: 1000, ecn, ..Packet::new(PacketKind::TcpData, seq) }
}

fn dualpi2(params: DualPi2Params) -> DualPi2 {
    params.validate("queue", RATE).unwrap()
}

fn rfc() -> DualPi2 {
    dualpi2(DualPi2Params::default())
}

fn linux() -> DualPi2 {
    dualpi2(DualPi2Params { variant: DualPi2Variant::Linux, ..DualPi2Params::default() })
}

fn io() -> (Rng, DropBuf) {
    (stream(7, StreamId::Queue(0)), DropBuf::new())
}

/// A discipline whose p' stays at `p` (no update ever runs), with room for any script.
fn frozen(mut q: DualPi2, p: f64) -> DualPi2 {
    q.st.next_update_at = Time::NEVER;
    q.cfg.limit = Limit::Unlimited;
    q.st.p = p;
    q
}

/// Queues `n` packets of `ecn` at `at`, then dequeues them all at `at + wait`; returns the
/// dequeued packets' codepoints and the number dropped.
fn pass(q: &mut DualPi2, ecn: Ecn, n: u32, at: Time, wait: Dur) -> (Vec<Ecn>, usize) {
    let (mut rng, mut drops) = io();
    for i in 0..n {
        assert_eq!(q.enqueue(pkt(ecn, i), at, &mut rng, &mut drops), Verdict::Enqueued);
    }
    let mut out = Vec::new();
    while let Some(p) = q.dequeue(at + wait, &mut drops) {
        out.push(p.ecn);
    }
    (out, drops.len())
}

fn count(v: &[Ecn], e: Ecn) -> usize {
    v.iter().filter(|x| **x == e).count()
}

fn check_counters(q: &DualPi2) {
    let s = *q.stats();
    assert_eq!(s.arrivals, s.enqueues + s.drops_overflow, "{s:?}");
    assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64 + s.drops_early, "{s:?}");
    let c = q.class_stats();
    let sum = |f: fn(&QdiscStats) -> u64| c.iter().map(|c| f(&c.stats)).sum::<u64>();
    let fields: [fn(&QdiscStats) -> u64; 5] = [|s| s.arrivals, |s| s.enqueues, |s| s.dequeues, |s| s.drops(), |s| s.marks];
    for f in fields {
        assert_eq!(sum(f), f(&s));
    }
    for c in &c {
        assert_eq!(c.bytes.arrivals, c.bytes.enqueues + c.bytes.drops_overflow, "{}", c.name);
        assert_eq!(c.bytes.enqueues, c.bytes.dequeues + c.len_bytes + c.bytes.drops_early, "{}", c.name);
    }
    let d = q.details();
    assert_eq!(d.l4s_marks + d.classic_marks, s.marks);
    assert_eq!(d.l4s_drops_overload + d.classic_drops, s.drops_early);
}

#[test]
fn ect1_and_ce_go_to_the_l_queue_not_ect_and_ect0_to_the_c_queue() {
    // RFC 9331 §5.1 / RFC 9332 §2.3: the low bit of the ECN field selects the L queue.
    let (mut rng, mut drops) = io();
    let mut q = rfc();
    for (i, ecn) in [Ecn::Ect1, Ecn::Ce, Ecn::NotEct, Ecn::Ect, Ecn::Ect1].into_iter().enumerate() {
        q.enqueue(pkt(ecn, i as u32), Time(0), &mut rng, &mut drops);
    }
    assert_eq!((q.queue_len(L), q.queue_len(C)), (3, 2));
    let names: Vec<_> = q.class_stats().into_iter().map(|c| (c.name, c.len_packets)).collect();
    assert_eq!(names, [("l4s".to_string(), 3), ("classic".to_string(), 2)]);
    assert!(q.queues[L].iter().all(|p| p.ecn.is_l4s()) && q.queues[C].iter().all(|p| !p.ecn.is_l4s()));
}

#[test]
fn rfc_defaults_follow_figure_2() {
    // Figure 2: Tupdate = min(15 ms, 100 ms / 3) = 15 ms; alpha = 0.1·0.015/0.1² = 0.15 Hz;
    // beta = 0.3/0.1 = 3 Hz; minTh 800 µs, range 400 µs, Th_len 1; k = 2; p_Cmax = 1/k² = 0.25.
    let p = DualPi2Params::default().filled();
    assert_eq!(p.tupdate, Some(Duration(Dur::from_millis(15))));
    assert_eq!((p.alpha, p.beta), (Some(0.15), Some(3.0)));
    assert_eq!((p.l4s_min_th, p.l4s_range, p.l4s_min_packets), (Some(Duration(Dur::from_micros(800))), Some(Duration(Dur::from_micros(400))), Some(1)));
    assert_eq!(p.tshift, Some(Duration(Dur::from_millis(30))));
    let q = rfc();
    assert_eq!(q.cfg.p_cmax, 0.25);
    // "auto" limit: 250 ms at 10 Mb/s = 312500 bytes.
    assert_eq!(q.cfg.limit, Limit::Bytes(312_500));
    // Linux sch_dualpi2 dualpi2_reset_default: 16 ms, 41/256, 819/256, 1 ms step, 10000 packets.
    let l = DualPi2Params { variant: DualPi2Variant::Linux, ..DualPi2Params::default() }.filled();
    assert_eq!((l.tupdate, l.alpha, l.beta), (Some(Duration(Dur::from_millis(16))), Some(0.16015625), Some(3.19921875)));
    assert_eq!((l.l4s_min_th, l.l4s_range, l.draws), (Some(Duration(Dur::from_millis(1))), Some(Duration(Dur::ZERO)), Some(DualPi2Draws::Random)));
    assert_eq!(linux().cfg.limit, Limit::Packets(10_000));
}

#[test]
fn pi_update_matches_a_hand_computation() {
    // One classic packet queued at 0. Updates at 15 ms and 30 ms (no timer: the dequeue at 30 ms
    // catches both up), the head's sojourn then 15 ms and 30 ms:
    //   p1 = 0 + 0.15·(0.015 − 0.015) + 3·(0.015 − 0)     = 0.045
    //   p2 = p1 + 0.15·(0.030 − 0.015) + 3·(0.030 − 0.015) = 0.045 + 0.00225 + 0.045 = 0.09225
    let (mut rng, mut drops) = io();
    let mut q = rfc();
    q.enqueue(pkt(Ecn::NotEct, 0), Time(0), &mut rng, &mut drops);
    q.enqueue(pkt(Ecn::NotEct, 1), Time(0), &mut rng, &mut drops);
    q.catch_up(Time(30 * MS));
    assert_eq!(q.updates(), 2);
    assert!((q.base_probability() - 0.09225).abs() < 1e-12, "{}", q.base_probability());
    assert!((q.classic_probability() - 0.09225f64.powi(2)).abs() < 1e-12);
    assert!((q.coupled_probability() - 2.0 * 0.09225).abs() < 1e-12);
    // An empty classic queue: curq = 0, p' falls by 0.15·0.015 + 3·0.030 = 0.09225 → 0.
    while q.dequeue(Time(31 * MS), &mut drops).is_some() {}
    q.catch_up(Time(45 * MS));
    assert_eq!(q.base_probability(), 0.0);
}

#[test]
fn rfc_pi_reads_the_classic_head_linux_the_older_head() {
    // Only an L4S packet is queued, for 40 ms: the RFC's curq (cq.time()) is 0, Linux's is 40 ms.
    let (mut rng, mut drops) = io();
    let (mut r, mut l) = (rfc(), linux());
    r.enqueue(pkt(Ecn::Ect1, 0), Time(0), &mut rng, &mut drops);
    l.enqueue(pkt(Ecn::Ect1, 0), Time(0), &mut rng, &mut drops);
    r.update(Time(40 * MS));
    l.update(Time(40 * MS));
    assert_eq!(r.base_probability(), 0.0);
    // Linux: 41/256·(0.040 − 0.015) + 819/256·0.040
    let want = 41.0 / 256.0 * 0.025 + 819.0 / 256.0 * 0.040;
    assert!((l.base_probability() - want).abs() < 1e-12, "{} vs {want}", l.base_probability());
}

#[test]
fn classic_probability_is_the_square_and_coupled_is_k_times_capped() {
    let q = frozen(rfc(), 0.3);
    assert!((q.classic_probability() - 0.09).abs() < 1e-15);
    assert!((q.coupled_probability() - 0.6).abs() < 1e-15);
    assert_eq!(frozen(rfc(), 0.7).coupled_probability(), 1.0);
    let k3 = frozen(dualpi2(DualPi2Params { k: 3.0, ..DualPi2Params::default() }), 0.1);
    assert!((k3.coupled_probability() - 0.3).abs() < 1e-15);
}

#[test]
fn coupled_marking_is_k_times_p_and_classic_is_p_squared() {
    // p' = 0.1, no native marking (no wait): recur() marks 20 % of L4S packets and 1 % of
    // classic ECT(0) packets, deterministically. recur counts 0.2, 0.4, ..., firing once it
    // exceeds 1: the 6th, 11th, ... packet → 19 of the first 100 (the 101st would be the 20th).
    let mut q = frozen(rfc(), 0.1);
    let (l, dropped) = pass(&mut q, Ecn::Ect1, 100, Time(0), Dur::ZERO);
    assert!((19..=20).contains(&count(&l, Ecn::Ce)) && dropped == 0, "{}", count(&l, Ecn::Ce));
    let (c, dropped) = pass(&mut q, Ecn::Ect, 1000, Time(0), Dur::ZERO);
    assert!((9..=10).contains(&count(&c, Ecn::Ce)), "{}", count(&c, Ecn::Ce));
    assert_eq!(dropped, 0, "ECT(0) classic packets are marked, not dropped, below p_Cmax");
    // Not-ECT classic packets are dropped with the same p_C.
    let (c, dropped) = pass(&mut q, Ecn::NotEct, 1000, Time(0), Dur::ZERO);
    assert!((9..=11).contains(&dropped) && count(&c, Ecn::Ce) == 0, "{dropped}");
    assert!(q.details().l4s_marks >= 19 && q.details().l4s_marks_native == 0);
    check_counters(&q);
    // The same with Linux's random draws: 20000 L4S packets marked with 0.2 (±4σ = ±0.011).
    let mut q = frozen(dualpi2(DualPi2Params { draws: Some(DualPi2Draws::Random), ..DualPi2Params::default() }), 0.1);
    let (l, _) = pass(&mut q, Ecn::Ect1, 20_000, Time(0), Dur::ZERO);
    let f = count(&l, Ecn::Ce) as f64 / 20_000.0;
    assert!((f - 0.2).abs() < 0.011, "{f}");
}

#[test]
fn l4s_marking_is_at_least_k_p_whatever_the_native_aqm_says() {
    // p_L = max(p'_L, p_CL): with p' = 0.3 and a sojourn of 1 ms (ramp: p'_L = 0.5) the L
    // probability is 0.6; with 0.9 ms (p'_L = 0.25) it is still 0.6.
    for wait_us in [900, 1000] {
        let mut q = frozen(rfc(), 0.3);
        let (l, _) = pass(&mut q, Ecn::Ect1, 1000, Time(0), Dur(wait_us * US));
        let f = count(&l, Ecn::Ce) as f64 / 1000.0;
        assert!((f - 0.6).abs() < 0.0015, "{wait_us} µs: {f}");
    }
}

#[test]
fn native_ramp_marks_above_800_us_and_every_packet_above_1200_us() {
    // p' = 0: only the native AQM marks. Ramp (Figure 2): 0 up to 800 µs, (s − 800)/400 up to
    // 1200 µs, then 1.
    let q = rfc();
    assert_eq!(q.native_probability(Dur(800 * US)), 0.0);
    assert_eq!(q.native_probability(Dur(1000 * US)), 0.5);
    assert_eq!(q.native_probability(Dur(1200 * US)), 1.0);
    for (wait_us, want) in [(500, 0), (1000, 50), (1300, 100)] {
        let mut q = frozen(rfc(), 0.0);
        let (l, _) = pass(&mut q, Ecn::Ect1, 100, Time(0), Dur(wait_us * US));
        // The last packet leaves alone (queue of 1 = Th_len): never native-marked.
        let marked = count(&l, Ecn::Ce);
        assert!(marked == want || marked + 1 == want, "{wait_us} µs: {marked} marks");
        assert_eq!(q.details().l4s_marks_native as usize, marked);
    }
    // Th_len: a lone L4S packet that waited 5 ms is not marked.
    let mut q = frozen(rfc(), 0.0);
    let (l, _) = pass(&mut q, Ecn::Ect1, 1, Time(0), Dur(5 * MS));
    assert_eq!(l, [Ecn::Ect1]);
}

#[test]
fn linux_step_marks_strictly_above_1_ms_even_a_lone_packet() {
    let mut q = frozen(linux(), 0.0);
    let (l, _) = pass(&mut q, Ecn::Ect1, 3, Time(0), Dur(MS));
    assert_eq!(count(&l, Ecn::Ce), 0, "1 ms is not above the step");
    let (l, _) = pass(&mut q, Ecn::Ect1, 1, Time(0), Dur(MS + 1));
    assert_eq!(l, [Ecn::Ce]);
}

#[test]
fn overload_drops_l4s_packets_with_p_c_and_disables_classic_ecn() {
    // p' = 0.6: k·p' = 1.2 saturates (overload). L4S packets: recur(lq, p_C = 0.36) drops,
    // the rest are marked (p_CL = 1). Classic ECT(0): p_C = 0.36 >= p_Cmax = 0.25, so dropped.
    let mut q = frozen(rfc(), 0.6);
    let (l, dropped) = pass(&mut q, Ecn::Ect1, 1000, Time(0), Dur::ZERO);
    assert!(dropped > 300 && dropped < 600, "{dropped}");
    assert!(count(&l, Ecn::Ce) > 900 * l.len() / 1000, "{} of {}", count(&l, Ecn::Ce), l.len());
    assert_eq!(q.details().l4s_drops_overload as usize, dropped);
    let (c, dropped) = pass(&mut q, Ecn::Ect, 1000, Time(0), Dur::ZERO);
    assert!((355..=365).contains(&dropped) && count(&c, Ecn::Ce) == 0, "{dropped}");
    check_counters(&q);
    // Below overload (p' = 0.4: p_CL 0.8, p_C 0.16 < 0.25) nothing L4S or ECT(0) is dropped.
    let mut q = frozen(rfc(), 0.4);
    let (_, dropped_l) = pass(&mut q, Ecn::Ect1, 1000, Time(0), Dur::ZERO);
    let (c, dropped_c) = pass(&mut q, Ecn::Ect, 1000, Time(0), Dur::ZERO);
    assert_eq!((dropped_l, dropped_c), (0, 0));
    assert!((155..=165).contains(&count(&c, Ecn::Ce)));
    // drop_on_overload = false: L4S packets are never dropped, all marked.
    let mut q = frozen(dualpi2(DualPi2Params { drop_on_overload: false, ..DualPi2Params::default() }), 0.6);
    let (l, dropped) = pass(&mut q, Ecn::Ect1, 1000, Time(0), Dur::ZERO);
    assert_eq!(dropped, 0);
    assert!(count(&l, Ecn::Ce) >= 999);
    // ecn = false: ECT(0) classic packets are dropped like Not-ECT ones.
    let mut q = frozen(dualpi2(DualPi2Params { ecn: false, ..DualPi2Params::default() }), 0.1);
    let (c, dropped) = pass(&mut q, Ecn::Ect, 1000, Time(0), Dur::ZERO);
    assert!((9..=10).contains(&dropped) && count(&c, Ecn::Ce) == 0);
}

#[test]
fn pi_saturates_and_counts_overload_updates_under_an_unresponsive_load() {
    // Twice the link's rate of Not-ECT arrivals: p' climbs into overload.
    let (mut rng, mut drops) = io();
    let mut q = rfc();
    for t in 0..3000u64 {
        for _ in 0..2 {
            q.enqueue(pkt(Ecn::NotEct, t as u32), Time(t * MS), &mut rng, &mut drops);
        }
        q.dequeue(Time(t * MS), &mut drops);
    }
    // Half the arrivals must go: p_C ≈ 0.5, p' ≈ 0.71 > 1/k.
    assert!(q.base_probability() > 0.5, "{}", q.base_probability());
    assert!(q.details().overload_updates > 0);
    assert!(q.stats().drops_early > 1000, "{:?}", q.stats());
    check_counters(&q);
}

#[test]
fn time_shifted_fifo_serves_l_unless_the_classic_head_waited_tshift_longer() {
    let (mut rng, mut drops) = io();
    let mut q = frozen(rfc(), 0.0);
    // C at 0 ms, L at 10 ms, C at 20 ms; tshift 30 ms: the L head (10) <= C head (0) + 30 → L.
    q.enqueue(Packet { seq: 1, ..pkt(Ecn::NotEct, 1) }, Time(0), &mut rng, &mut drops);
    q.enqueue(Packet { seq: 2, ..pkt(Ecn::Ect1, 2) }, Time(10 * MS), &mut rng, &mut drops);
    q.enqueue(Packet { seq: 3, ..pkt(Ecn::NotEct, 3) }, Time(20 * MS), &mut rng, &mut drops);
    let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(Time(25 * MS), &mut drops)).map(|p| p.seq).collect();
    assert_eq!(order, [2, 1, 3]);
    // C at 0, L at 40 ms: the C head waited 40 ms more than the L head, over tshift → C first.
    q.enqueue(Packet { seq: 1, ..pkt(Ecn::NotEct, 1) }, Time(100 * MS), &mut rng, &mut drops);
    q.enqueue(Packet { seq: 2, ..pkt(Ecn::Ect1, 2) }, Time(140 * MS), &mut rng, &mut drops);
    let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(Time(141 * MS), &mut drops)).map(|p| p.seq).collect();
    assert_eq!(order, [1, 2]);
}

#[test]
fn linux_wrr_gives_the_classic_queue_10_percent_when_both_are_backlogged() {
    // Initial credit 1514·(10 − 90) = −121120: L goes first; each L packet adds 10·1000, so the
    // 13th brings it to +8880 and C sends; C takes 90·1000. Long run: 90 % L, 10 % C.
    let (mut rng, mut drops) = io();
    let mut q = frozen(linux(), 0.0);
    for i in 0..2000 {
        q.enqueue(pkt(Ecn::Ect1, i), Time(0), &mut rng, &mut drops);
        q.enqueue(pkt(Ecn::NotEct, i), Time(0), &mut rng, &mut drops);
    }
    let first: Vec<bool> = (0..14).map(|_| q.dequeue(Time(0), &mut drops).unwrap().ecn.is_l4s()).collect();
    assert_eq!(first, [[true; 13].as_slice(), &[false]].concat());
    let l = (0..1000).filter(|_| q.dequeue(Time(0), &mut drops).unwrap().ecn.is_l4s()).count();
    assert!((895..=905).contains(&l), "{l}");
    // An empty queue resets the credit (dualpi2_reset_c_protection).
    while q.dequeue(Time(0), &mut drops).is_some() {}
    assert_eq!(q.st.credit, -121_120);
}

#[test]
fn linux_never_drops_or_marks_below_two_mtu_of_backlog() {
    // p' = 0.9: everything would be dropped or marked, but three 1000 B packets leave < 3028 B.
    let mut q = frozen(linux(), 0.45); // k·p' = 0.9: no overload
    let (l, dropped) = pass(&mut q, Ecn::Ect1, 3, Time(0), Dur::ZERO);
    assert_eq!((count(&l, Ecn::Ce), dropped), (0, 0));
    let (_, dropped) = pass(&mut q, Ecn::NotEct, 3, Time(0), Dur::ZERO);
    assert_eq!(dropped, 0);
}

#[test]
fn a_full_buffer_drops_the_arrival_of_either_queue() {
    let (mut rng, mut drops) = io();
    let mut q = dualpi2(DualPi2Params { limit: DualPi2Limit::Fixed(Limit::Packets(3)), ..DualPi2Params::default() });
    for ecn in [Ecn::Ect1, Ecn::NotEct, Ecn::Ect1] {
        assert_eq!(q.enqueue(pkt(ecn, 0), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
    }
    assert_eq!(q.enqueue(pkt(Ecn::NotEct, 0), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
    assert_eq!(q.enqueue(pkt(Ecn::Ect1, 0), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
    let c = q.class_stats();
    assert_eq!((c[L].stats.drops_overflow, c[C].stats.drops_overflow), (1, 1));
    check_counters(&q);
}

#[test]
fn sojourn_sums_and_counters_hold_over_a_mixed_run() {
    // 3 packets per ms in (alternating L4S, classic ECT(0), Not-ECT), 2 out: p' rises.
    let (mut rng, mut drops) = io();
    let mut q = dualpi2(DualPi2Params { limit: DualPi2Limit::Fixed(Limit::Packets(200)), ..DualPi2Params::default() });
    let (mut sojourn, mut seq) = ([0u64; 2], 0u32);
    for t in 0..5000u64 {
        for ecn in [Ecn::Ect1, Ecn::Ect, Ecn::NotEct] {
            q.enqueue(pkt(ecn, seq), Time(t * MS), &mut rng, &mut drops);
            seq += 1;
        }
        for _ in 0..2 {
            if let Some(p) = q.dequeue(Time(t * MS), &mut drops) {
                // seq % 3 == 0 were the ECT(1) packets (a marked classic one is CE too).
                sojourn[usize::from(p.seq % 3 != 0)] += Time(t * MS).saturating_since(p.enqueued_at).0;
            }
        }
    }
    let s = *q.stats();
    assert!(s.marks > 0 && s.drops_early > 0, "{s:?}");
    check_counters(&q);
    let d = q.details();
    assert_eq!(d.l4s_sojourn_ns + d.classic_sojourn_ns, sojourn[0] + sojourn[1]);
    assert!(d.l4s_sojourn_ns / q.class_stats()[L].stats.dequeues < d.classic_sojourn_ns / q.class_stats()[C].stats.dequeues);
}

#[test]
fn bad_keys_name_the_key_and_what_is_allowed() {
    let bad = |p: DualPi2Params| p.validate("queue", RATE).err().unwrap().to_string();
    assert_eq!(bad(DualPi2Params { k: 0.0, ..DualPi2Params::default() }), "queue.k: must be a coupling factor in (0, 256], got 0");
    assert_eq!(bad(DualPi2Params { alpha: Some(-1.0), ..DualPi2Params::default() }), "queue.alpha: must be a finite number >= 0 (Hz), got -1");
    assert_eq!(bad(DualPi2Params { target: Duration(Dur::ZERO), ..DualPi2Params::default() }), "queue.target: must be a positive duration, got 0");
    assert_eq!(bad(DualPi2Params { tupdate: Some(Duration(Dur::ZERO)), ..DualPi2Params::default() }), "queue.tupdate: must be a positive duration, got 0");
    assert_eq!(bad(DualPi2Params { c_protection: 101, ..DualPi2Params::default() }), "queue.c_protection: must be a percentage in 0..=100, got 101");
}
