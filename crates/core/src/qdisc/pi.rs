//! The PI controller AQM (Hollot, Misra, Towsley & Gong, INFOCOM 2001) as ns-2's `Queue/PI`
//! (`queue/pi.cc`) runs it, with the parameters of Kumar 2003 Sec. 5.1 (spec `seed002-tsq.md`
//! §2.6): a FIFO whose arrivals are dropped with a probability `p` that a proportional-integral
//! controller updates at a fixed sampling rate from the **instantaneous** queue length in packets.
//!
//! Every `1/sample_rate` seconds (Sec. 2.5; ns-2 `calculate_p`):
//! `p ← a·(q − q_ref) − b·(q_old − q_ref) + p`, clamped to [0, 1]; `q_old ← q`.
//! Worked number (the thesis's values): a = 1.822e-5, b = 1.816e-5, q_ref = 200, q_old = 200,
//! q = 300 gives p = 1.822e-5·100 = 1.822e-3 after one sample.
//!
//! On arrival (ns-2 `enque`): if `len ≥ limit` the drop is forced (ns-2 appends the packet and
//! drops the last one, which in a FIFO is the arrival itself: `DropKind::Overflow`); otherwise one
//! uniform `u` is drawn and the packet is dropped (`Early`) when `p > 0` and `u ≤ p` (ns-2 tests
//! `u ≤ p`; the `p > 0` guard only removes the measure-zero `u = 0` case). Exactly one draw per
//! arrival that is not a forced drop. No ECN (`setbit_ = false`), no byte scaling
//! (`bytes_ = false`, `queue_in_bytes_ = false`).
//!
//! Sampling without an engine timer: the controller is *caught up* at the start of every
//! `enqueue` and `dequeue`, running each sample instant `k/f_s` (k = 1, 2, ...) that has passed.
//! The queue length only changes inside those calls, so every sample sees exactly the length
//! ns-2's timer would have seen (a sample at the same instant as an arrival sees the length
//! before the arrival). See [`PiController::catch_up`].
//!
//! Defaults are Kumar 2003 Sec. 5.1 (a = 1.822e-5, b = 1.816e-5, 170 Hz, q_ref = 200 packets,
//! q_max = 800 packets), not ns-2's `qref_ = 50`. For other links, `aqmlab pi-design` computes
//! a, b and the sampling rate from Hollot et al.'s fluid model (`python/aqmlab/models/pi_design.py`).

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::Packet;
use crate::scenario::units::Limit;

/// Scenario keys of `kind = "pi"` (also the PI part of `kind = "tsq"`).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PiParams {
    /// Coefficient of the current error `q − q_ref` (ns-2 `a_`), per packet.
    #[serde(default = "default_a", alias = "a_")]
    pub a: f64,
    /// Coefficient of the previous error `q_old − q_ref` (ns-2 `b_`), per packet.
    #[serde(default = "default_b", alias = "b_")]
    pub b: f64,
    /// Sampling frequency of the controller, Hz (ns-2 `w_`; the thesis's "w = 170").
    #[serde(default = "default_sample_rate", alias = "w", alias = "w_")]
    pub sample_rate: f64,
    /// Target queue length, packets (ns-2 `qref_`; thesis 200).
    #[serde(default = "default_q_ref", alias = "qref_")]
    pub q_ref: f64,
    /// Buffer, packets (thesis q_max 800).
    #[serde(default = "default_limit")]
    pub limit: u32,
}

pub(crate) fn default_a() -> f64 {
    1.822e-5
}
pub(crate) fn default_b() -> f64 {
    1.816e-5
}
pub(crate) fn default_sample_rate() -> f64 {
    170.0
}
pub(crate) fn default_q_ref() -> f64 {
    200.0
}
pub(crate) fn default_limit() -> u32 {
    800
}

impl Default for PiParams {
    fn default() -> Self {
        PiParams { a: default_a(), b: default_b(), sample_rate: default_sample_rate(), q_ref: default_q_ref(), limit: default_limit() }
    }
}

impl PiParams {
    /// Checks the keys and builds the controller.
    pub fn controller(&self, path: &str) -> ConfigResult<PiController> {
        for (name, v) in [("a", self.a), ("b", self.b)] {
            if !v.is_finite() || v < 0.0 {
                return Err(ConfigError::new(join(path, name), format!("must be a finite number >= 0, got {v}")));
            }
        }
        if !(self.sample_rate.is_finite() && self.sample_rate > 0.0 && self.sample_rate <= 1e6) {
            return Err(ConfigError::new(
                join(path, "sample_rate"),
                format!("must be a sampling frequency in (0, 1e6] Hz, got {}", self.sample_rate),
            ));
        }
        if self.limit == 0 {
            return Err(ConfigError::new(join(path, "limit"), "must be at least 1 packet, got 0"));
        }
        if !(self.q_ref.is_finite() && self.q_ref >= 0.0 && self.q_ref < self.limit as f64) {
            return Err(ConfigError::new(
                join(path, "q_ref"),
                format!("must be in [0, limit) = [0, {}) packets, got {}", self.limit, self.q_ref),
            ));
        }
        let period = Dur::from_secs_f64(1.0 / self.sample_rate).max(Dur(1));
        Ok(PiController::new(self.a, self.b, self.q_ref, period))
    }

    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<Pi> {
        Ok(Pi::new(self.controller(path)?, self.limit))
    }
}

/// The PI controller's state and its sampling clock.
#[derive(Clone, Debug, PartialEq)]
pub struct PiController {
    pub(crate) a: f64,
    pub(crate) b: f64,
    q_ref: f64,
    /// Sampling period 1/f_s.
    period: Dur,
    /// The next sample instant (k·period, k ≥ 1).
    next_sample_at: Time,
    /// Drop probability, in [0, 1] (ns-2 `v_prob`).
    p: f64,
    /// Queue length at the previous sample, packets (ns-2 `qold`).
    q_old: f64,
    /// Samples taken.
    samples: u64,
}

impl PiController {
    /// A controller with p = 0 and q_old = 0 whose first sample is at `period`.
    pub fn new(a: f64, b: f64, q_ref: f64, period: Dur) -> PiController {
        PiController { a, b, q_ref, period, next_sample_at: Time(period.0), p: 0.0, q_old: 0.0, samples: 0 }
    }

    /// One sample of the difference equation (Kumar 2003 Sec. 2.5; ns-2 `calculate_p`) with the
    /// instantaneous queue `q` packets.
    pub fn sample(&mut self, q: f64) {
        let p = self.a * (q - self.q_ref) - self.b * (self.q_old - self.q_ref) + self.p;
        self.p = p.clamp(0.0, 1.0);
        self.q_old = q;
        self.samples += 1;
    }

    /// Runs every sample instant up to and including `now` with the queue length `q_pkts`, which
    /// must be the length the queue has had since the previous call.
    #[inline]
    pub fn catch_up(&mut self, now: Time, q_pkts: usize) {
        while self.next_sample_at <= now {
            self.sample(q_pkts as f64);
            self.next_sample_at = Time(self.next_sample_at.0 + self.period.0);
        }
    }

    /// The current drop probability, in [0, 1].
    pub fn p(&self) -> f64 {
        self.p
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The sampling period.
    pub fn period(&self) -> Dur {
        self.period
    }

    /// The early-drop test of ns-2 `drop_early` with probability `p`: one uniform draw,
    /// drop when `p > 0` and `u ≤ p`.
    #[inline]
    pub fn drop_test(p: f64, rng: &mut Rng) -> bool {
        let u: f64 = rng.gen();
        p > 0.0 && u <= p
    }
}

/// PI over a FIFO.
pub struct Pi {
    ctl: PiController,
    limit: u32,
    fifo: Fifo,
    stats: QdiscStats,
}

impl Pi {
    /// An empty queue.
    pub fn new(ctl: PiController, limit: u32) -> Pi {
        Pi { ctl, limit, fifo: Fifo::new(Limit::Packets(u64::from(limit))), stats: QdiscStats::default() }
    }

    /// The controller.
    pub fn controller(&self) -> &PiController {
        &self.ctl
    }
}

impl Qdisc for Pi {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.ctl.catch_up(now, self.fifo.len());
        self.stats.arrivals += 1;
        if self.fifo.len() >= self.limit as usize {
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        if PiController::drop_test(self.ctl.p, rng) {
            self.stats.count_drop(DropKind::Early);
            return Verdict::Dropped(DropKind::Early);
        }
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        self.ctl.catch_up(now, self.fifo.len());
        let pkt = self.fifo.pop()?;
        self.stats.dequeues += 1;
        Some(pkt)
    }

    super::fifo::fifo_accessors!();

    /// PI keeps no smoothed queue; this reports its drop probability p instead.
    fn average(&self) -> Option<f64> {
        Some(self.ctl.p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    const DATA: Packet = Packet { size: 1000, ..Packet::new(PacketKind::Udp, 0) };

    fn thesis_pi() -> PiController {
        PiParams::default().controller("queue").unwrap()
    }

    #[test]
    fn one_sample_matches_the_hand_computation() {
        // Sec. 2.5 / 5.1: p = a(q - q_ref) - b(q_old - q_ref) + p_old, from q_old = 0, p_old = 0.
        let mut c = thesis_pi();
        c.sample(300.0);
        // 1.822e-5·100 − 1.816e-5·(0 − 200) = 1.822e-3 + 3.632e-3 = 5.454e-3
        assert!((c.p() - 5.454e-3).abs() < 1e-15, "{}", c.p());
        c.sample(300.0);
        // + 1.822e-5·100 − 1.816e-5·100 = + 6e-6
        assert!((c.p() - 5.460e-3).abs() < 1e-15, "{}", c.p());
        c.sample(100.0);
        // + 1.822e-5·(−100) − 1.816e-5·100 = − 3.638e-3
        assert!((c.p() - 1.822e-3).abs() < 1e-15, "{}", c.p());
    }

    #[test]
    fn probability_is_clamped_to_zero_and_one() {
        let mut c = PiController::new(0.1, 0.0, 0.0, Dur::from_millis(1));
        c.sample(20.0);
        assert_eq!(c.p(), 1.0);
        let mut c = thesis_pi();
        c.sample(0.0); // −1.822e-5·200 + 1.816e-5·200 < 0
        assert_eq!(c.p(), 0.0);
    }

    #[test]
    fn samples_happen_every_period_at_170_hz() {
        let mut c = thesis_pi();
        assert_eq!(c.period(), Dur(5_882_353)); // 1/170 s, rounded to the nanosecond
        c.catch_up(Time(5_882_352), 0);
        assert_eq!(c.samples(), 0);
        c.catch_up(Time(5_882_353), 0);
        assert_eq!(c.samples(), 1);
        c.catch_up(Time(1_000_000_000), 0);
        assert_eq!(c.samples(), 169); // 170·5.882353 ms = 1.00000001 s: the 170th is just after 1 s
        c.catch_up(Time(1_000_000_010), 0);
        assert_eq!(c.samples(), 170);
        c.catch_up(Time(10_000_000_000), 0);
        assert_eq!(c.samples(), 1699); // 1700·5.882353 ms = 10.0000001 s > 10 s
    }

    #[test]
    fn samples_see_the_length_held_since_the_last_change() {
        // Arrivals at 0 and 1 ms; the first sample (5.88 ms) happens at the dequeue at 20 ms and
        // must see 2 packets, as a timer would have; the samples after see 1.
        let mut q = PiParams { q_ref: 0.0, ..PiParams::default() }.validate("queue").unwrap();
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        q.enqueue(DATA, Time(0), &mut rng, &mut drops);
        q.enqueue(DATA, Time(1_000_000), &mut rng, &mut drops);
        q.dequeue(Time(20_000_000), &mut drops);
        let mut hand = PiController::new(1.822e-5, 1.816e-5, 0.0, Dur(5_882_353));
        for _ in 0..3 {
            hand.sample(2.0); // samples at 5.9, 11.8 and 17.6 ms
        }
        assert_eq!(q.controller().p(), hand.p());
        q.dequeue(Time(24_000_000), &mut drops); // sample at 23.5 ms sees 1 packet
        hand.sample(1.0);
        assert_eq!(q.controller().p(), hand.p());
    }

    #[test]
    fn full_buffer_drops_the_arrival_without_a_draw() {
        let mut q = PiParams { limit: 2, q_ref: 1.0, ..PiParams::default() }.validate("queue").unwrap();
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..3 {
            let v = q.enqueue(Packet { seq, ..DATA }, Time(0), &mut rng, &mut drops);
            assert_eq!(v, if seq < 2 { Verdict::Enqueued } else { Verdict::Dropped(DropKind::Overflow) });
        }
        let mut twin = stream(1, StreamId::Queue(0));
        let _: (f64, f64) = (twin.gen(), twin.gen()); // the two accepted arrivals drew once each
        assert_eq!(rng.gen::<u64>(), twin.gen::<u64>());
    }

    #[test]
    fn early_drops_follow_p() {
        // Hold p at 0.25 (a sample of q = q_ref + 0.25/a from rest, b = 0): about a quarter drop.
        let mut q = Pi::new(PiController::new(0.01, 0.0, 0.0, Dur::from_millis(1)), 100_000);
        let (mut rng, mut drops) = (stream(3, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..25 {
            q.enqueue(DATA, Time(0), &mut rng, &mut drops);
        }
        q.ctl.catch_up(Time(1_000_000), 25); // p = 0.01·25 = 0.25
        q.ctl.a = 0.0; // freeze p
        let before = q.stats().drops_early;
        for i in 0..20_000u64 {
            q.enqueue(DATA, Time(1_000_000 + i), &mut rng, &mut drops);
        }
        let frac = (q.stats().drops_early - before) as f64 / 20_000.0;
        assert!((frac - 0.25).abs() < 0.015, "{frac}");
    }

    #[test]
    fn bad_keys_name_the_key_and_the_allowed_range() {
        let e = PiParams { q_ref: 900.0, ..PiParams::default() }.validate("queue").err().unwrap();
        assert_eq!(e.to_string(), "queue.q_ref: must be in [0, limit) = [0, 800) packets, got 900");
        let e = PiParams { sample_rate: 0.0, ..PiParams::default() }.validate("queue").err().unwrap();
        assert!(e.to_string().starts_with("queue.sample_rate: must be a sampling frequency in (0, 1e6] Hz"), "{e}");
        let e = PiParams { a: -1.0, ..PiParams::default() }.validate("queue").err().unwrap();
        assert_eq!(e.to_string(), "queue.a: must be a finite number >= 0, got -1");
    }
}
