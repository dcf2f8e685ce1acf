//! TFRC against RFC 5348: the equation's values, the loss-interval average, and behaviour in a
//! two-host harness (a link with a rate, a delay and a scripted drop rule).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::loss_history::LossHistory;
use super::*;
use crate::engine::{Dur, Time};
use crate::packet::Packet;

#[test]
fn equation_worked_number() {
    // Hand calculation in equation.rs: s = 1000 B, R = 100 ms, p = 0.01 → 112 332 B/s.
    let x = equation::rate(1000.0, 0.1, 0.01);
    assert!((x - 112_332.2).abs() < 1.0, "{x}");
    // p = 0.1: R·sqrt(2p/3) = 0.025820, 0.4·3·sqrt(0.0375)·0.1·1.32 = 0.030674 → 17 701 B/s.
    let x = equation::rate(1000.0, 0.1, 0.1);
    assert!((x / 17_701.0 - 1.0).abs() < 1e-3, "{x}");
    assert_eq!(equation::rate(1000.0, 0.1, 0.0), f64::INFINITY);
    // Inversion round trip.
    for p in [1e-4, 0.003, 0.05, 0.3] {
        let back = equation::invert(1000.0, 0.05, equation::rate(1000.0, 0.05, p));
        assert!((back / p - 1.0).abs() < 1e-9, "{p} → {back}");
    }
}

#[test]
fn average_loss_interval_uses_the_rfc_weights() {
    // §5.4 with hand numbers (loss_history.rs docs): closed I_1 = 10, I_2..I_8 = 100 (I_8 is
    // dropped from I_tot0): I_tot1/W = (10 + 100·(1+1+1+0.8+0.6+0.4+0.2))/6 = 85; with I_0 = 50,
    // I_tot0/W = (50 + 10 + 100·4.0)/6 = 76.7, so I_mean = 85. With I_0 = 200: 101.67.
    let mut h = LossHistory::default();
    let ms = |m: u64| Time(m * 1_000_000);
    // Events 1 s apart, R = 10 ms: 8 loss events → intervals of 100 packets after a synthetic
    // first interval of 100.
    let mut seq = 0u32;
    h.on_gap((0, ms(0)), (2, ms(2)), 1, Dur::from_millis(10), || 100.0);
    for k in 1..8 {
        let gap = if k == 7 { 10 } else { 100 };
        seq += gap;
        assert!(h.on_gap((seq, ms(1000 * k)), (seq + 2, ms(1000 * k + 2)), seq + 1, Dur::from_millis(10), || unreachable!()));
    }
    let closed: Vec<f64> = h.closed().collect();
    assert_eq!(closed, vec![10.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]);
    assert!((h.mean_interval(50.0) - 85.0).abs() < 1e-9);
    assert!((h.mean_interval(200.0) - 610.0 / 6.0).abs() < 1e-9);
}

/// A history whose closed intervals are `closed` (most recent first, `I_1, I_2, …`): the oldest is
/// the synthetic first interval (§6.3.1), each later one the distance between two events' first
/// losses, events 1 s apart with R = 10 ms.
fn history_with(closed: &[u32]) -> LossHistory {
    history_from(LossHistory::default(), closed)
}

/// As [`history_with`], starting from `h` (e.g. one with discounting on).
fn history_from(mut h: LossHistory, closed: &[u32]) -> LossHistory {
    let ms = |m: u64| Time(m * 1_000_000);
    let r = Dur::from_millis(10);
    let (&oldest, rest) = closed.split_last().expect("at least one interval");
    h.on_gap((0, ms(0)), (2, ms(2)), 1, r, || oldest as f64);
    let mut seq = 0u32;
    for (k, &gap) in rest.iter().rev().enumerate() {
        seq += gap;
        let t = 1000 * (k as u64 + 1);
        assert!(h.on_gap((seq, ms(t)), (seq + 2, ms(t + 2)), seq + 1, r, || unreachable!()));
    }
    assert_eq!(h.closed().collect::<Vec<_>>(), closed.iter().map(|&c| c as f64).collect::<Vec<_>>());
    h
}

#[test]
fn average_loss_interval_with_one_closed_interval() {
    // RFC 5348 §5.4 with k = 1 < n closed intervals: n is replaced by k, so I_tot0 = I_0·w_0,
    // I_tot1 = I_1·w_0, W_tot = w_0 (Linux tfrc_lh_calc_i_mean computes the same). I_0 = 300,
    // I_1 = 100 → I_mean = max(300, 100)/1 = 300. Dividing I_0 + I_1 by w_0 + w_1 gave 200.
    let h = history_with(&[100]);
    assert_eq!(h.mean_interval(300.0), 300.0);
    // The open interval only counts when it raises the mean: I_0 = 50 → I_1 = 100.
    assert_eq!(h.mean_interval(50.0), 100.0);
}

#[test]
fn average_loss_interval_with_two_closed_intervals() {
    // k = 2: I_tot0 = I_0·1 + I_1·1, I_tot1 = I_1·1 + I_2·1, W_tot = w_0 + w_1 = 2.
    // I_1 = 100, I_2 = 40: I_0 = 300 → max(400, 140)/2 = 200; I_0 = 10 → max(110, 140)/2 = 70.
    // (Summing I_0..I_2 over three weights gave 440/3 = 146.7 and 150/3 → max with 70 = 70.)
    let h = history_with(&[100, 40]);
    assert_eq!(h.mean_interval(300.0), 200.0);
    assert_eq!(h.mean_interval(10.0), 70.0);
}

#[test]
fn average_loss_interval_with_eight_closed_intervals() {
    // k = n = 8: I_tot0 over I_0..I_7 with w_0..w_7, I_tot1 over I_1..I_8 with w_0..w_7, W_tot = 6.
    // I_1..I_8 = 80, 70, 60, 50, 40, 30, 20, 10. I_tot1 = 80+70+60+50 + 0.8·40 + 0.6·30 + 0.4·20
    // + 0.2·10 = 260 + 32 + 18 + 8 + 2 = 320 → 53.33. I_0 = 200: I_tot0 = 200+80+70+60 + 0.8·50
    // + 0.6·40 + 0.4·30 + 0.2·20 = 410 + 40 + 24 + 12 + 4 = 490 → 81.67.
    let h = history_with(&[80, 70, 60, 50, 40, 30, 20, 10]);
    assert!((h.mean_interval(0.0) - 320.0 / 6.0).abs() < 1e-12);
    assert!((h.mean_interval(200.0) - 490.0 / 6.0).abs() < 1e-12);
}

#[test]
fn history_discounting_weights_a_long_open_interval_more() {
    // RFC 5348 §5.5 by hand. I_1..I_8 = 100, so I_mean over the closed intervals = 100.
    // I_0 = 1000 > 2·100: DF = 2·100/1000 = 0.2, raised to THRESHOLD 0.25. I_tot0 = 1000·1 +
    // 0.25·100·(1+1+1+0.8+0.6+0.4+0.2) = 1125, W_tot0 = 1 + 0.25·5 = 2.25 → 500; I_tot1/W_tot1
    // = 100; so I_mean = 500 (p = 0.002). Without discounting (1000 + 500)/6 = 250 (p = 0.004).
    let on = history_from(LossHistory::with_discounting(true), &[100; 8]);
    let off = history_with(&[100; 8]);
    assert_eq!(on.general_discount(1000.0), 0.25);
    assert!((on.mean_interval(1000.0) - 500.0).abs() < 1e-9, "{}", on.mean_interval(1000.0));
    assert!((off.mean_interval(1000.0) - 250.0).abs() < 1e-9);
    // I_0 = 300: DF = 200/300 = 2/3 (above the threshold). I_tot0 = 300 + (2/3)·500 = 1900/3,
    // W_tot0 = 1 + (2/3)·5 = 13/3 → 1900/13 = 146.15; without: 800/6 = 133.33.
    assert!((on.general_discount(300.0) - 2.0 / 3.0).abs() < 1e-12);
    assert!((on.mean_interval(300.0) - 1900.0 / 13.0).abs() < 1e-9, "{}", on.mean_interval(300.0));
    assert!((off.mean_interval(300.0) - 800.0 / 6.0).abs() < 1e-9);
    // I_0 = 200 is not more than twice I_mean: DF = 1 and the §5.4 mean, (200 + 500)/6.
    assert_eq!(on.general_discount(200.0), 1.0);
    assert!((on.mean_interval(200.0) - 700.0 / 6.0).abs() < 1e-9);
    // Off, DF is always 1.
    assert_eq!(off.general_discount(1000.0), 1.0);
}

#[test]
fn history_discounting_persists_once_the_long_interval_closes() {
    // §5.5: at the next loss event DF_i ← DF·DF_i, the factors shift, DF_1 = 1. Events of
    // history_with end with the first loss at 701; a new event at 1701 closes I = 1000 with
    // DF = 0.25, so the history becomes I_1 = 1000 (DF 1), I_2..I_8 = 100 (DF 0.25).
    // With I_0 = 1: I_tot1 = 1000 + 0.25·100·5 = 1125 over W_tot1 = 1 + 0.25·5 = 2.25 → 500;
    // I_tot0 = 1 + 1000 + 0.25·100·(1+1+0.8+0.6+0.4+0.2) = 1101 over 1 + 1 + 0.25·4 = 3 → 367;
    // I_mean = 500. Without discounting: max((1 + 1000 + 400)/6, (1000 + 500)/6) = 250.
    let ms = |m: u64| Time(m * 1_000_000);
    let r = Dur::from_millis(10);
    let mut on = history_from(LossHistory::with_discounting(true), &[100; 8]);
    let mut off = history_with(&[100; 8]);
    for h in [&mut on, &mut off] {
        assert!(h.on_gap((1700, ms(9000)), (1702, ms(9002)), 1701, r, || unreachable!()));
        assert_eq!(h.closed().collect::<Vec<_>>(), [1000.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0]);
    }
    assert_eq!(on.discounts().collect::<Vec<_>>(), [1.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]);
    assert_eq!(off.discounts().collect::<Vec<_>>(), [1.0; 8]);
    assert!((on.mean_interval(1.0) - 500.0).abs() < 1e-9, "{}", on.mean_interval(1.0));
    assert!((off.mean_interval(1.0) - 250.0).abs() < 1e-9);
    // An interval that closes without exceeding 2·I_mean leaves the factors as they were (×1).
    assert!(on.on_gap((1800, ms(10_000)), (1802, ms(10_002)), 1801, r, || unreachable!()));
    assert_eq!(on.discounts().collect::<Vec<_>>(), [1.0, 1.0, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25]);
}

#[test]
fn losses_within_one_rtt_are_one_event() {
    let mut h = LossHistory::default();
    let r = Dur::from_millis(100);
    // Packets 11-13 lost between packets sent at 0 and 40 ms: all within R of the first.
    assert!(h.on_gap((10, Time(0)), (14, Time(40_000_000)), 11, r, || 50.0));
    assert_eq!(h.events(), 1);
    // Another gap 50 ms later: still within R of the event start (interpolated ≈ 10 ms).
    assert!(!h.on_gap((20, Time(90_000_000)), (22, Time(100_000_000)), 21, r, || unreachable!()));
    assert_eq!(h.events(), 1);
    // 200 ms later: a new event.
    assert!(h.on_gap((30, Time(300_000_000)), (32, Time(310_000_000)), 31, r, || unreachable!()));
    assert_eq!(h.events(), 2);
    assert_eq!(h.closed().next(), Some(20.0), "31 − 11 packets between the events' first losses");
}

/// Two hosts: data over a link of `rate_bps` (FIFO, unlimited) and `delay`, feedback back over
/// `delay`. `drop(seq)` drops data packets; `cut_feedback_at` stops every report after it.
struct Pair {
    sender: TfrcSender,
    receiver: TfrcReceiver,
    rate_bps: f64,
    delay: Dur,
    link_free: Time,
    drop: fn(u32) -> bool,
    cut_feedback_at: Time,
    /// (time, order, to_receiver, packet)
    wire: BinaryHeap<Reverse<(Time, u64, bool, PacketKey)>>,
    order: u64,
    buf: Vec<Packet>,
    /// (time, X) after each report.
    rates: Vec<(f64, f64)>,
}

/// Packet wrapped for the heap (ordered by time and order only).
#[derive(Clone, Copy, Debug)]
struct PacketKey(Packet);
impl PartialEq for PacketKey {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for PacketKey {}
impl PartialOrd for PacketKey {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for PacketKey {
    fn cmp(&self, _: &Self) -> std::cmp::Ordering {
        std::cmp::Ordering::Equal
    }
}

impl Pair {
    fn new(rate_bps: f64, delay_ms: u64, drop: fn(u32) -> bool) -> Pair {
        Pair {
            sender: TfrcSender::new(0, 1000),
            receiver: TfrcReceiver::new(0),
            rate_bps,
            delay: Dur::from_millis(delay_ms),
            link_free: Time::ZERO,
            drop,
            cut_feedback_at: Time::NEVER,
            wire: BinaryHeap::new(),
            order: 0,
            buf: Vec::new(),
            rates: Vec::new(),
        }
    }

    fn push(&mut self, at: Time, to_receiver: bool, p: Packet) {
        self.order += 1;
        self.wire.push(Reverse((at, self.order, to_receiver, PacketKey(p))));
    }

    fn flush_sender(&mut self, now: Time) {
        for p in std::mem::take(&mut self.buf) {
            if (self.drop)(p.seq) {
                continue;
            }
            let start = now.max(self.link_free);
            self.link_free = start + Dur::transmission(p.size, self.rate_bps);
            self.push(self.link_free + self.delay, true, p);
        }
    }

    fn flush_receiver(&mut self, now: Time) {
        for p in std::mem::take(&mut self.buf) {
            if now < self.cut_feedback_at {
                self.push(now + self.delay, false, p);
            }
        }
    }

    /// Runs until `end`, stepping to the earliest of the wire and both timers (drive_bounded).
    fn run(&mut self, end: Time) {
        let mut steps = 0u64;
        loop {
            steps += 1;
            assert!(steps < 50_000_000, "never idle");
            let wire = self.wire.peek().map(|Reverse((t, ..))| *t).unwrap_or(Time::NEVER);
            let s = self.sender.next_wakeup().unwrap_or(Time::NEVER);
            let r = self.receiver.next_wakeup().unwrap_or(Time::NEVER);
            let now = wire.min(s).min(r);
            if now >= end {
                return;
            }
            if now == wire {
                let Reverse((_, _, to_receiver, PacketKey(p))) = self.wire.pop().unwrap();
                if to_receiver {
                    self.receiver.on_data(now, &p, &mut self.buf);
                    self.flush_receiver(now);
                } else {
                    self.sender.on_feedback(now, &p);
                    self.rates.push((now.as_secs_f64(), self.sender.rate()));
                }
            } else if now == s {
                self.sender.on_timer(now, &mut self.buf);
                self.flush_sender(now);
            } else {
                self.receiver.on_timer(now, &mut self.buf);
                self.flush_receiver(now);
            }
        }
    }
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

#[test]
fn periodic_loss_gives_the_equation_rate() {
    // Every 100th packet dropped (p = 0.01 exactly: one loss per event, intervals of 100), RTT
    // 100 ms on a 100 Mb/s link (no queueing at ≈0.9 Mb/s). The equation gives 112 332 B/s; the
    // sender's mean X over 50-300 s must be within 5 % (decided before running: the only gaps
    // are R's EWMA and the first-interval transient, both gone by 50 s).
    let mut pair = Pair::new(100e6, 50, |seq| seq % 100 == 99);
    pair.sender.start(Time::ZERO, &mut pair.buf);
    pair.flush_sender(Time::ZERO);
    pair.run(secs(300.0));
    let sent_late = pair.rates.iter().filter(|(t, _)| *t >= 50.0).map(|(_, x)| *x).collect::<Vec<_>>();
    let mean = sent_late.iter().sum::<f64>() / sent_late.len() as f64;
    let p = pair.receiver.loss_event_rate();
    assert!((p - 0.01).abs() < 0.0005, "p {p}");
    let r = pair.sender.rtt().unwrap();
    assert!((r - 0.1).abs() < 0.002, "R {r}");
    assert!((mean / 112_332.0 - 1.0).abs() < 0.05, "mean X {mean}");
    // The packets actually sent agree with X: 250 s at ≈112 kB/s.
    let pkts = pair.sender.stats().packets as f64;
    assert!(pkts > 0.9 * 300.0 * 112.3, "{pkts}");
}

#[test]
fn slow_start_at_most_doubles_per_rtt_and_is_capped_by_twice_the_receive_rate() {
    // No loss, RTT 100 ms, 100 Mb/s. The first report sets X = W_init/R = 4000/0.1 = 40 kB/s.
    // Then (§4.3 step 4) X = min(2X, recv_limit) at most once per R, with recv_limit = 2·max
    // X_recv. Reports come once per RTT and X_recv lags X by about half an RTT (the receiver
    // measures the rate the sender had one trip earlier), so the cap binds on every other report:
    // X about doubles every 2 RTTs here and never grows more than ×2 per report. (Checked: every
    // report-to-report ratio in [1, 2]; at least 6 increases and ×64 or more in 17 RTTs.)
    let mut pair = Pair::new(100e6, 50, |_| false);
    pair.sender.start(Time::ZERO, &mut pair.buf);
    pair.flush_sender(Time::ZERO);
    pair.run(secs(1.85));
    let (t0, x0) = pair.rates[0];
    assert!((x0 - 40_000.0).abs() < 400.0, "initial X {x0} at {t0}");
    let xs: Vec<f64> = pair.rates.iter().map(|(_, x)| *x).collect();
    for w in xs.windows(2) {
        let ratio = w[1] / w[0];
        assert!((1.0 - 1e-9..=2.0 + 1e-9).contains(&ratio), "{ratio}");
    }
    let growth = xs.last().unwrap() / x0;
    assert!(growth >= 64.0 && growth <= 32768.0, "{growth} over {} reports", xs.len());
    let doublings = xs.windows(2).filter(|w| w[1] > w[0]).count();
    assert!(doublings >= 6, "{doublings}");
}

#[test]
fn nofeedback_timer_halves_the_rate() {
    // Reach the equilibrium of the periodic-loss case, then cut the feedback path at 60 s: each
    // nofeedback expiry halves X (from X_Bps ≈ 112 kB/s) and the timer runs max(4R, 2s/X).
    let mut pair = Pair::new(100e6, 50, |seq| seq % 100 == 99);
    pair.sender.start(Time::ZERO, &mut pair.buf);
    pair.flush_sender(Time::ZERO);
    pair.run(secs(60.0));
    let x0 = pair.sender.rate();
    let expiries0 = pair.sender.stats().nofeedback_expiries;
    pair.cut_feedback_at = secs(60.0);
    // Feedback already in flight arrives by 60.05 s; the timer then fires at +RTO = 0.4 s
    // (4R > 2s/X = 17.8 ms): after 60.5 s X ≈ x0/2, after one more RTO (2s/X = 35.6 ms < 0.4)
    // ≈ x0/4.
    pair.run(secs(60.5));
    assert_eq!(pair.sender.stats().nofeedback_expiries, expiries0 + 1);
    let x1 = pair.sender.rate();
    assert!((x1 / (x0 / 2.0) - 1.0).abs() < 0.05, "{x0} → {x1}");
    pair.run(secs(60.9));
    let x2 = pair.sender.rate();
    assert!((x2 / (x1 / 2.0) - 1.0).abs() < 1e-9, "{x1} → {x2}");
    // Down to s/t_mbi and no further (the timer grows as 2s/X: ≈ 500 s to get there).
    pair.run(secs(1000.0));
    assert!((pair.sender.rate() - 1000.0 / 64.0).abs() < 1e-9);
}

#[test]
fn before_any_feedback_the_rate_is_one_packet_per_second_and_halves_at_2s() {
    let mut pair = Pair::new(100e6, 50, |_| false);
    pair.cut_feedback_at = Time::ZERO;
    pair.sender.start(Time::ZERO, &mut pair.buf);
    pair.flush_sender(Time::ZERO);
    pair.run(secs(1.99));
    assert_eq!(pair.sender.stats().packets, 2, "t = 0 and 1 s");
    assert_eq!(pair.sender.rate(), 1000.0);
    pair.run(secs(2.01));
    assert_eq!(pair.sender.rate(), 500.0);
}

/// Goodputs (b/s) of the flows of a dumbbell run of `flows` (TOML `[[flows]]` blocks) over a
/// 10 Mb/s, 20 ms bottleneck under `queue`, 60 s with 20 s warm-up.
fn dumbbell(queue: &str, flows: &str, seed: u64) -> serde_json::Value {
    let text = format!(
        "[run]\nduration = \"60s\"\nwarmup = \"20s\"\nseed = {seed}\n[topology]\nbottleneck = {{ rate = \"10Mbps\", delay = \"20ms\" }}\n\
         [queue]\n{queue}\n{flows}"
    );
    let sc = crate::scenario::parse_toml(&text).unwrap();
    let out = crate::run::simulate(&sc, None, |_| true).unwrap();
    let flows = out.flows();
    let mut summary = out.summary; // moved, not cloned
    summary["flows"] = flows.into();
    summary
}

#[test]
fn a_lone_tfrc_flow_fills_the_link_and_reports() {
    // Expected: the bottleneck busy (> 90 % of 10 Mb/s of goodput in wire terms less headers),
    // losses seen (drop-tail overflow), p > 0, R ≥ the 40 ms propagation RTT.
    let s = dumbbell("kind = \"droptail\"\nlimit = 50", "[[flows]]\nkind = \"tfrc\"\n", 1);
    let f = &s["flows"][0];
    assert_eq!(f["kind"], "tfrc");
    let g = f["goodput_bps"].as_f64().unwrap();
    assert!(g > 0.9 * 10e6 * 972.0 / 1000.0, "goodput {g}");
    assert!(f["tfrc_loss_event_rate"].as_f64().unwrap() > 0.0);
    assert!(f["tfrc_rtt_s"].as_f64().unwrap() >= 0.040);
    assert!(f["drops"].as_u64().unwrap() > 0);
}

#[test]
fn tfrc_and_tcp_share_roughly_fairly() {
    // TCP-friendliness (RFC 5348 §1): 4 TFRC and 4 NewReno flows (1000-B packets) under RED.
    // Criterion fixed before running: the TFRC mean goodput within a factor 2 of TCP's.
    let tcp = "[[flows]]\nkind = \"tcp\"\ncount = 4\nmss = \"972B\"\nheader_bytes = \"28B\"\ndelayed_ack = false\nstart_jitter = \"1s\"\n";
    let tfrc = "[[flows]]\nkind = \"tfrc\"\ncount = 4\nstart_jitter = \"1s\"\n";
    let s = dumbbell("kind = \"red\"\nlimit = 100\nmin_th = 10\nmax_th = 30\nmax_p = 0.1", &format!("{tcp}{tfrc}"), 2);
    let flows = s["flows"].as_array().unwrap();
    let mean = |kind: &str| {
        let g: Vec<f64> = flows.iter().filter(|f| f["kind"] == kind).map(|f| f["goodput_bps"].as_f64().unwrap()).collect();
        g.iter().sum::<f64>() / g.len() as f64
    };
    let (t, r) = (mean("tcp"), mean("tfrc"));
    eprintln!("tcp {t} tfrc {r}");
    assert!(r > t / 2.0 && r < 2.0 * t, "tcp {t}, tfrc {r}");
}

#[test]
fn same_seed_same_result() {
    let flows = "[[flows]]\nkind = \"tfrc\"\ncount = 3\nstart_jitter = \"1s\"\n[[flows]]\nkind = \"tcp\"\nstart_jitter = \"1s\"\n";
    let a = dumbbell("kind = \"bmre\"", flows, 7);
    let b = dumbbell("kind = \"bmre\"", flows, 7);
    assert_eq!(a["flows"], b["flows"]);
}

#[test]
fn bad_tfrc_keys_are_rejected() {
    let text = "[run]\nduration = \"1s\"\n[topology]\nbottleneck = { rate = \"10Mbps\", delay = \"20ms\" }\n[[flows]]\nkind = \"tfrc\"\nrate = \"1Mbps\"\n";
    let e = crate::scenario::parse_toml(text).unwrap_err().to_string();
    assert!(e.contains("flows[0].rate") && e.contains("packet_size"), "{e}");
    let text = text.replace("rate = \"1Mbps\"", "packet_size = \"20B\"");
    let e = crate::scenario::parse_toml(&text).unwrap_err().to_string();
    assert!(e.contains("flows[0].packet_size") && e.contains("29B"), "{e}");
}

#[test]
fn history_discounting_is_a_validated_tfrc_key() {
    let base = "[run]\nduration = \"1s\"\n[topology]\nbottleneck = { rate = \"10Mbps\", delay = \"20ms\" }\n[[flows]]\n";
    // Not a key of TCP flows.
    let e = crate::scenario::parse_toml(&format!("{base}kind = \"tcp\"\nhistory_discounting = true\n")).unwrap_err().to_string();
    assert!(e.contains("flows[0].history_discounting") && e.contains("not a key of kind \"tcp\""), "{e}");
    // A boolean only.
    let e = crate::scenario::parse_toml(&format!("{base}kind = \"tfrc\"\nhistory_discounting = \"yes\"\n")).unwrap_err().to_string();
    assert!(e.contains("history_discounting"), "{e}");
    let sc = crate::scenario::parse_toml(&format!("{base}kind = \"tfrc\"\nhistory_discounting = true\n")).unwrap();
    assert!(matches!(sc.flows[0].kind, crate::scenario::FlowKind::Tfrc { history_discounting: true, .. }));
    let sc = crate::scenario::parse_toml(&format!("{base}kind = \"tfrc\"\n")).unwrap();
    assert!(matches!(sc.flows[0].kind, crate::scenario::FlowKind::Tfrc { history_discounting: false, .. }), "default off");
}

#[test]
fn history_discounting_reaches_the_receiver() {
    // The same run with and without: the receivers' p differ (the key is plumbed), and the
    // default equals an explicit false.
    let flows = |hd: &str| format!("[[flows]]\nkind = \"tfrc\"\ncount = 4\nstart_jitter = \"1s\"\n{hd}");
    let q = "kind = \"red\"\nlimit = 100\nmin_th = 10\nmax_th = 30\nmax_p = 0.1";
    let p = |s: &serde_json::Value| s["flows"].as_array().unwrap().iter().map(|f| f["tfrc_loss_event_rate"].as_f64().unwrap()).collect::<Vec<_>>();
    let (def, off, on) = (dumbbell(q, &flows(""), 3), dumbbell(q, &flows("history_discounting = false\n"), 3), dumbbell(q, &flows("history_discounting = true\n"), 3));
    assert_eq!(p(&def), p(&off));
    assert_ne!(p(&def), p(&on));
}

#[test]
fn an_application_limited_flow_sends_its_app_rate_until_tfrc_says_less() {
    // Alone on the link, a 128 Kb/s application gets 128 Kb/s of goodput (payload bits; within
    // 1 %): TFRC's X is far above it. Among 8 bulk TFRC flows on the same link with a 1 Mb/s
    // application, its goodput stays at most the application's rate.
    let alone = dumbbell("kind = \"droptail\"\nlimit = 50", "[[flows]]\nkind = \"tfrc\"\napp_rate = \"128Kbps\"\n", 1);
    let g = alone["flows"][0]["goodput_bps"].as_f64().unwrap();
    assert!((g - 128e3).abs() <= 0.01 * 128e3, "goodput {g}");
    assert_eq!(alone["flows"][0]["drops"].as_u64().unwrap(), 0);
    let crowd = "[[flows]]\nkind = \"tfrc\"\napp_rate = \"1Mbps\"\n[[flows]]\nkind = \"tfrc\"\ncount = 8\nstart_jitter = \"1s\"\n";
    let s = dumbbell("kind = \"droptail\"\nlimit = 50", crowd, 1);
    let flows = s["flows"].as_array().unwrap();
    let limited = flows[0]["goodput_bps"].as_f64().unwrap();
    assert!(limited <= 1e6 * 1.01, "app-limited goodput {limited}");
    let bulk = flows[1..].iter().map(|f| f["goodput_bps"].as_f64().unwrap()).sum::<f64>() / 8.0;
    assert!(bulk > limited, "bulk flows {bulk} should each out-send the 1 Mb/s application {limited}");
}

/// A report as the receiver writes it: data echoed from `now − 100 ms` (R = 100 ms exactly).
fn report(now: Time, x_recv: f64, p: f64, new_event: bool) -> Packet {
    let mut fb = Packet::new(crate::packet::PacketKind::TfrcFeedback, 0);
    fb.sent_at = Time(now.0 - 100_000_000);
    fb.seq = x_recv as u32;
    fb.ack = (p as f32).to_bits();
    fb.sack[0] = crate::packet::SackBlock { start: 0, end: u32::from(new_event) };
    fb
}

/// Runs the sender's timers up to `until`, then hands it `fb` at `until`; returns X after it.
fn feed(s: &mut TfrcSender, until: Time, fb: &Packet) -> f64 {
    let mut out = Vec::new();
    while let Some(t) = s.next_wakeup().filter(|&t| t < until) {
        s.on_timer(t, &mut out);
    }
    s.on_feedback(until, fb);
    s.rate()
}

#[test]
fn a_loss_event_halves_the_receive_limit_only_for_a_data_limited_sender() {
    // RFC 5348 §4.3 step 4. Reports at 0.1, 0.2, 0.3, 0.45 s with X_recv 10, 50, 20, 20 kB/s;
    // p = 0.01 (X_Bps = 112 332 B/s at R = 100 ms) from the second, a new loss event there.
    let times = [0.1, 0.2, 0.3, 0.45].map(secs);
    let reports = [report(times[0], 10e3, 0.0, false), report(times[1], 50e3, 0.01, true),
                   report(times[2], 20e3, 0.01, false), report(times[3], 20e3, 0.01, false)];
    let run = |mut s: TfrcSender| -> Vec<f64> {
        let mut out = Vec::new();
        s.start(Time::ZERO, &mut out);
        times.iter().zip(&reports).map(|(&t, fb)| feed(&mut s, t, fb)).collect()
    };
    // Always data to send: recv_limit = 2·max(X_recv of the last 2 R). At 0.2 s {10k, 50k} → 100k;
    // at 0.3 s still 100k; at 0.45 s the 0.1 and 0.2 s reports are older than 2R → {20k, 20k} → 40k.
    let x = run(TfrcSender::new(0, 1000));
    assert_eq!(x[0], 40_000.0, "W_init/R");
    assert_eq!(&x[1..], &[100_000.0, 100_000.0, 40_000.0]);
    // Data-limited (the application writes 5 kB/s, below X throughout): on the loss event the set
    // is halved and 0.85·X_recv added, recv_limit = max = 42.5k, and no ageing: then 2·42.5k = 85k.
    let x = run(TfrcSender::new(0, 1000).with_app_rate(5e3));
    for (got, want) in x[1..].iter().zip([42_500.0, 85_000.0, 85_000.0]) {
        assert!((got / want - 1.0).abs() < 1e-12, "{x:?}");
    }
}
