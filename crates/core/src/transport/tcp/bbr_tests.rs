//! BBR driven over a model path: a drop-tail bottleneck of fixed rate and buffer, a fixed
//! one-way delay each way, the real receiver (SACK, an ACK per segment).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::bbr::{Mode, CWND_MIN_TARGET};
use super::*;
use crate::engine::{Dur, Time};
use crate::packet::{Packet, PacketKind};

fn bbr_cfg() -> TcpConfig {
    TcpConfig {
        variant: TcpVariant::Sack,
        sack: true,
        congestion_control: CongestionControl::Bbr,
        pacing: true,
        timestamps: true,
        delayed_ack: DelayedAck { count: 1, timeout: Dur::from_millis(200) },
        ..TcpConfig::default()
    }
}

/// The path: bottleneck of `per_segment` serialisation time and `buffer` packets.
struct Path {
    per_segment: Dur,
    one_way: Dur,
    buffer: usize,
}

/// What the observer sees after every event.
struct Trace {
    /// Send times of data segments.
    sends: Vec<Time>,
    /// Peak bottleneck queue, packets.
    peak_queue: usize,
}

/// Runs one BBR flow until `until`, calling `watch` after every event.
fn run(c: &TcpConfig, path: &Path, seed: u64, until: Time, mut watch: impl FnMut(Time, &TcpSender, usize)) -> Trace {
    enum Ev {
        Data(Packet),
        Ack(Packet),
        SenderTimer,
        ReceiverTimer,
    }
    let mut s = TcpSender::new(0, c);
    s.seed_congestion_control(seed);
    let mut r = TcpReceiver::new(0, c);
    let mut heap: BinaryHeap<Reverse<(Time, u64, usize)>> = BinaryHeap::new();
    let mut evs: Vec<Option<Ev>> = Vec::new();
    let mut n = 0u64;
    let mut push = |heap: &mut BinaryHeap<_>, evs: &mut Vec<Option<Ev>>, at: Time, ev: Ev| {
        evs.push(Some(ev));
        heap.push(Reverse((at, n, evs.len() - 1)));
        n += 1;
    };
    let mut queue: VecDeque<Time> = VecDeque::new(); // departure times of queued packets
    let (mut link_free, mut now) = (Time::ZERO, Time::ZERO);
    let (mut s_timer, mut r_timer) = (Time::NEVER, Time::NEVER);
    let mut trace = Trace { sends: Vec::new(), peak_queue: 0 };
    let mut out = Vec::new();
    s.start(c, now, &mut out);
    loop {
        while queue.front().is_some_and(|&d| d <= now) {
            queue.pop_front();
        }
        for p in out.drain(..) {
            if p.kind == PacketKind::TcpData {
                trace.sends.push(now);
                if queue.len() < path.buffer {
                    link_free = link_free.max(now) + path.per_segment;
                    queue.push_back(link_free);
                    trace.peak_queue = trace.peak_queue.max(queue.len());
                    push(&mut heap, &mut evs, link_free + path.one_way, Ev::Data(p));
                }
            } else {
                push(&mut heap, &mut evs, now + path.one_way, Ev::Ack(p));
            }
        }
        if let Some(w) = s.next_wakeup().filter(|&w| w < s_timer) {
            s_timer = w.max(now);
            push(&mut heap, &mut evs, s_timer, Ev::SenderTimer);
        }
        if let Some(w) = r.next_wakeup().filter(|&w| w < r_timer) {
            r_timer = w.max(now);
            push(&mut heap, &mut evs, r_timer, Ev::ReceiverTimer);
        }
        watch(now, &s, queue.len());
        let Some(Reverse((at, _, i))) = heap.pop() else { break };
        if at > until {
            break;
        }
        now = at;
        match evs[i].take().unwrap() {
            Ev::Data(p) => r.on_data(c, now, &p, &mut out),
            Ev::Ack(p) => s.on_ack(c, now, &p, &mut out),
            Ev::SenderTimer => {
                if now == s_timer {
                    s_timer = Time::NEVER;
                    s.on_timer(c, now, &mut out);
                }
            }
            Ev::ReceiverTimer => {
                if now == r_timer {
                    r_timer = Time::NEVER;
                    r.on_timer(c, now, &mut out);
                }
            }
        }
    }
    trace
}

/// 1500-B packets at 12 Mb/s: 1 ms each, 1000 segments/s; 20 ms one way: BDP 40 segments.
fn path() -> Path {
    Path { per_segment: Dur::from_millis(1), one_way: Dur::from_millis(20), buffer: 1000 }
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

#[test]
fn startup_ends_once_the_bandwidth_plateaus_and_drain_leads_to_probe_bw() {
    let c = bbr_cfg();
    let (mut left_startup, mut in_probe_bw) = (None, None);
    let mut bw_at_exit = 0.0;
    run(&c, &path(), 1, secs(3.0), |now, s, _| {
        let b = s.bbr_state().unwrap();
        if left_startup.is_none() && b.mode() != Mode::Startup {
            left_startup = Some(now);
            bw_at_exit = b.max_bw();
            assert!(b.full_bw_reached());
        }
        if in_probe_bw.is_none() && b.mode() == Mode::ProbeBw {
            in_probe_bw = Some(now);
        }
    });
    // Doubling per 40 ms round from 10 segments reaches 1000/s (40/round) in ~3 rounds, then
    // three rounds without 25% growth: well within 1 s.
    let left = left_startup.expect("STARTUP ended");
    assert!(left < secs(1.0), "left STARTUP at {left}");
    assert!((bw_at_exit - 1000.0).abs() < 50.0, "max bw at exit {bw_at_exit} segments/s, link 1000");
    assert!(in_probe_bw.expect("reached PROBE_BW") < secs(1.5));
}

#[test]
fn probe_bw_cycles_its_gains_in_order_with_phases_of_one_min_rtt() {
    let c = bbr_cfg();
    let mut phases: Vec<(f64, Time)> = Vec::new();
    run(&c, &path(), 7, secs(8.0), |now, s, _| {
        let b = s.bbr_state().unwrap();
        if b.mode() == Mode::ProbeBw && phases.last().is_none_or(|&(g, _)| g != b.pacing_gain()) {
            phases.push((b.pacing_gain(), now));
        }
    });
    assert!(phases.len() > 20, "{} phase changes", phases.len());
    for w in phases.windows(2) {
        let next = match w[0].0 {
            g if g == 1.25 => 0.75,
            g if g == 0.75 => 1.0,
            _ => 1.25,
        };
        assert_eq!(w[1].0, next, "gain order 1.25 → 0.75 → 1 (×6) → 1.25: {phases:?}");
    }
    // A full cycle is 8 phases of about one min RTT (40 ms) each, the 0.75 one possibly shorter.
    let starts: Vec<Time> = phases.iter().filter(|p| p.0 == 1.25).map(|p| p.1).collect();
    let cycle = (starts[starts.len() - 1] - starts[1]).as_secs_f64() / (starts.len() - 2) as f64;
    assert!((0.25..0.40).contains(&cycle), "cycle {cycle} s, 8 × 40 ms = 0.32 s");
}

#[test]
fn probe_rtt_comes_after_10_s_without_a_lower_rtt_and_holds_cwnd_at_4() {
    let c = bbr_cfg();
    let (mut entered, mut left) = (None, None);
    let mut max_cwnd_in = 0.0f64;
    run(&c, &path(), 3, secs(12.0), |now, s, _| {
        let b = s.bbr_state().unwrap();
        if b.mode() == Mode::ProbeRtt {
            entered.get_or_insert(now);
            max_cwnd_in = max_cwnd_in.max(s.cwnd());
        } else if entered.is_some() && left.is_none() {
            left = Some(now);
        }
    });
    // The min RTT (40 ms + a segment) is seen in the first round trip; nothing lower follows.
    let entered = entered.expect("PROBE_RTT entered");
    assert!(entered > secs(10.0) && entered < secs(10.5), "entered at {entered}");
    assert_eq!(max_cwnd_in, f64::from(CWND_MIN_TARGET));
    let stay = left.expect("PROBE_RTT left") - entered;
    assert!(stay >= Dur::from_millis(200), "stayed {stay}");
    assert!(stay < Dur::from_millis(400), "stayed {stay}");
}

#[test]
fn pacing_spaces_segments_at_the_pacing_rate() {
    let c = bbr_cfg();
    let mut gaps_checked = 0;
    // (segments sent, time, pacing rate) at the last single send.
    let mut last: Option<(usize, Time, f64)> = None;
    let mut sent_so_far = 0usize;
    let t = run(&c, &path(), 5, secs(4.0), |now, s, _| {
        let b = s.bbr_state().unwrap();
        let sent = s.stats().segments_sent as usize;
        if b.mode() == Mode::ProbeBw && now > secs(2.0) && sent == sent_so_far + 1 {
            if let Some((n, at, rate)) = last {
                if n + 1 == sent {
                    // The clock moved on payload/rate at the previous send, less at most half of
                    // that as credit when it had fallen behind (tcp_update_skb_after_send).
                    let gap = (now - at).as_secs_f64();
                    assert!(gap >= 0.5 * 1448.0 / rate * 0.999, "gap {gap} s at {rate} B/s");
                    gaps_checked += 1;
                }
            }
            last = Some((sent, now, b.pacing_rate()));
        }
        sent_so_far = sent;
    });
    assert!(gaps_checked > 1000, "{gaps_checked} gaps checked");
    // Over two seconds of PROBE_BW the flow sends no faster than its pacing rate allows
    // (gains average 1; link 1000 segments/s).
    let n = t.sends.iter().filter(|&&x| x > secs(2.0) && x <= secs(4.0)).count();
    assert!(n <= 2 * 1000 * 102 / 100, "{n} segments in 2 s");
    // And no two segments (after the unpaced initial window) leave at the same instant.
    let same = t.sends[10..].windows(2).filter(|w| w[0] == w[1]).count();
    assert_eq!(same, 0, "segments sent back to back at one instant");
}

#[test]
fn runs_are_deterministic_under_a_seed_and_the_seed_picks_the_phase() {
    let c = bbr_cfg();
    let sends = |seed| run(&c, &path(), seed, secs(2.0), |_, _, _| {}).sends;
    assert_eq!(sends(11), sends(11));
    let differs = (12..20).any(|seed| sends(seed) != sends(11));
    assert!(differs, "the random start phase changes the run for some seed");
}

#[test]
fn the_standing_queue_in_probe_bw_stays_below_one_bdp() {
    let c = bbr_cfg();
    let mut peak_after = 0;
    run(&c, &path(), 2, secs(9.0), |now, _, q| {
        if now > secs(2.0) {
            peak_after = peak_after.max(q);
        }
    });
    // cwnd = 2·BDP + quanta caps the queue at about one BDP (40) plus a few segments.
    assert!(peak_after <= 40 + 8, "peak queue {peak_after} packets in PROBE_BW, BDP 40");
}
