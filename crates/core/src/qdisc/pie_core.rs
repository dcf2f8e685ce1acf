//! The PIE control law (RFC 8033) over one FIFO, shared by `pie` (one queue) and `fq_pie` (one
//! per flow queue), the way `codel_core.rs` serves CoDel and FQ-CoDel.
//!
//! [`PieLaw`] holds the validated constants, [`PieState`] a queue's controller: the drop
//! probability `p`, the delay estimates, the burst allowance, derandomization's accumulated
//! probability and the departure-rate measurement. The owner keeps the FIFO and calls, in order:
//! [`PieState::catch_up`] at the start of every enqueue and dequeue (periodic updates without an
//! engine timer), [`PieState::drop_early`] and [`PieState::marks`] on arrival,
//! [`PieState::on_drop`] when it drops an arrival and [`PieState::on_dequeue`] after a dequeue.
//! The formulas, the variants and every difference between RFC 8033 and ns-3 3.44 are described
//! in `pie.rs`'s module doc; this file only holds them.

use rand::Rng as _;

use super::fifo::Fifo;
use super::pie::{DelayEstimator, PieVariant};
use crate::engine::{Dur, Rng, Time};
use crate::packet::{Ecn, Packet};

/// ns-3's `BURST_RESET_TIMEOUT`: seconds of quiet updates before the burst allowance re-arms.
const BURST_RESET_TIMEOUT_S: f64 = 1.5;

/// The validated constants of the control law.
#[derive(Clone, Copy, Debug)]
pub(super) struct PieLaw {
    /// RFC 8033 or ns-3 3.44 where they differ.
    pub variant: PieVariant,
    /// `QDELAY_REF`.
    pub target: Dur,
    /// `T_UPDATE`.
    pub t_update: Dur,
    /// `MAX_BURST`.
    pub max_burst: Dur,
    /// Weight of the delay error, per second.
    pub alpha: f64,
    /// Weight of the delay trend, per second.
    pub beta: f64,
    /// Timestamp or departure-rate estimate of the queueing delay.
    pub delay_estimator: DelayEstimator,
    /// Bytes a departure-rate measurement cycle needs (`DQ_THRESHOLD`).
    pub dq_threshold: u64,
    /// Bytes; the two-packet safeguard's unit and byte mode's reference size.
    pub mean_pkt_size: u64,
    /// RFC §5.5: cap each increase at 0.02 once `p ≥ 0.1`.
    pub cap_drop_adjustment: bool,
    /// Mark ECN-capable packets instead of dropping while `p` is low.
    pub ecn: bool,
    /// The highest `p` at which `ecn` marks (RFC: `p ≤`, ns-3: `p <`).
    pub mark_ecn_threshold: f64,
    /// RFC §5.3 derandomization.
    pub derandomize: bool,
    /// Byte mode: an arrival's `p` is scaled by `size / mean_pkt_size`.
    pub byte_scaled: bool,
    /// The two-packet safeguard counts packets (ns-3 with a packet limit) rather than bytes.
    pub short_in_packets: bool,
}

/// ns-3's burst-protection states (`BurstStateT`); the RFC variant does not use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BurstState {
    NoBurst,
    InBurstProtecting,
    InBurst,
}

/// Departure-rate measurement (RFC 8033 §4.3 as ns-3 3.44's `DoDequeue` runs it).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DqRate {
    in_measurement: bool,
    start: Time,
    count: u64,
    /// Bytes per second; 0 = no measurement yet.
    pub avg_rate: f64,
}

/// One queue's PIE controller.
#[derive(Clone, Copy, Debug)]
pub(super) struct PieState {
    /// Drop probability, in [0, 1].
    pub p: f64,
    /// The latest delay estimate, seconds (timestamp: the last dequeue's sojourn).
    pub qdelay: f64,
    /// The estimate at the previous update, seconds.
    pub qdelay_old: f64,
    /// Burst allowance left.
    pub burst_allowance: Dur,
    pub burst_state: BurstState,
    burst_reset: u32,
    accu_prob: f64,
    pub dq: DqRate,
    /// The next periodic update; updates run at `next_update_at + k·t_update`.
    pub next_update_at: Time,
    /// Updates run so far.
    pub updates: u64,
}

impl PieState {
    /// A controller with `p = 0` whose first update is at `first_update_at`.
    pub fn new(law: &PieLaw, first_update_at: Time) -> PieState {
        let burst_allowance = match law.variant {
            PieVariant::Rfc8033 => law.max_burst,
            PieVariant::Ns3 => Dur::ZERO, // ns-3 never initialises it: armed by the first arrival
        };
        PieState {
            p: 0.0,
            qdelay: 0.0,
            qdelay_old: 0.0,
            burst_allowance,
            burst_state: BurstState::NoBurst,
            burst_reset: 0,
            accu_prob: 0.0,
            dq: DqRate::default(),
            next_update_at: first_update_at,
            updates: 0,
        }
    }

    /// Runs every update instant up to and including `now`.
    #[inline]
    pub fn catch_up(&mut self, law: &PieLaw, now: Time, fifo: &Fifo) {
        while self.next_update_at <= now {
            self.update(law, fifo);
            self.next_update_at += law.t_update;
        }
    }

    /// One periodic update of `p` (RFC 8033 §4.2, §4.4, §5.5; ns-3 `CalculateP`).
    pub fn update(&mut self, law: &PieLaw, fifo: &Fifo) {
        self.updates += 1;
        let ns3 = law.variant == PieVariant::Ns3;
        let target = law.target.as_secs_f64();
        let mut missing_rate = false;
        if law.delay_estimator == DelayEstimator::DqRate {
            self.qdelay = if self.dq.avg_rate > 0.0 {
                fifo.bytes() as f64 / self.dq.avg_rate
            } else {
                missing_rate = true;
                0.0
            };
        }
        let qdelay = self.qdelay;

        let mut p = 0.0;
        if ns3 && self.burst_allowance > Dur::ZERO {
            self.p = 0.0; // ns-3 holds p at 0 during the allowance
        } else {
            p = law.alpha * (qdelay - target) + law.beta * (qdelay - self.qdelay_old);
            // Auto-tuning (§4.2): small steps while p is small, so light congestion is not overshot.
            p /= match self.p {
                x if x < 1e-6 => 2048.0,
                x if x < 1e-5 => 512.0,
                x if x < 1e-4 => 128.0,
                x if x < 1e-3 => 32.0,
                x if x < 1e-2 => 8.0,
                x if x < 1e-1 => 2.0,
                _ => 1.0,
            };
            if law.cap_drop_adjustment && self.p >= 0.1 && p > 0.02 {
                p = 0.02;
            }
        }
        p += self.p;
        if qdelay == 0.0 && self.qdelay_old == 0.0 {
            p *= 0.98; // idle queue: decay exponentially (§4.2)
        }
        self.p = p.clamp(0.0, 1.0);

        self.burst_allowance = Dur(self.burst_allowance.0.saturating_sub(law.t_update.0));
        let quiet = qdelay < 0.5 * target && self.qdelay_old < 0.5 * target && self.p == 0.0;
        if quiet && !missing_rate {
            // Congestion is over: restart the departure-rate average (ns-3; Linux alike).
            self.dq.avg_rate = 0.0;
            self.dq.count = 0;
        }
        if ns3 {
            if quiet && self.burst_allowance == Dur::ZERO {
                match self.burst_state {
                    BurstState::InBurstProtecting => {
                        self.burst_state = BurstState::InBurst;
                        self.burst_reset = 0;
                    }
                    BurstState::InBurst => {
                        self.burst_reset += 1;
                        // ns-3's uint32(1.5 / Tupdate.GetSeconds()), GetSeconds dividing by 1e9:
                        // 100 for 15 ms, where 15e6 * 1e-9 would give 99.99999999999999 -> 99.
                        let limit = (BURST_RESET_TIMEOUT_S / (law.t_update.0 as f64 / 1e9)) as u32;
                        if self.burst_reset > limit {
                            self.burst_reset = 0;
                            self.burst_state = BurstState::NoBurst;
                        }
                    }
                    BurstState::NoBurst => {}
                }
            } else if self.burst_state == BurstState::InBurst {
                self.burst_reset = 0;
            }
        } else if quiet {
            self.burst_allowance = law.max_burst; // §4.4: ready for the next burst
        }
        self.qdelay_old = qdelay;
    }

    /// The early-drop decision for an arrival of `size` bytes to `fifo` (RFC 8033 §4.1, §5.3;
    /// ns-3 `DropEarly`). Draws at most one uniform.
    pub fn drop_early(&mut self, law: &PieLaw, size: u32, fifo: &Fifo, rng: &mut Rng) -> bool {
        let ns3 = law.variant == PieVariant::Ns3;
        if self.burst_allowance > Dur::ZERO {
            return false;
        }
        if ns3 && self.burst_state == BurstState::NoBurst {
            self.burst_state = BurstState::InBurstProtecting;
            self.burst_allowance = law.max_burst;
        }
        let mean = law.mean_pkt_size;
        let mut p = self.p;
        if law.byte_scaled {
            p = p * f64::from(size) / mean as f64;
        }
        // Work-conserving safeguards (§4.1): low delay with low p, or a queue of two packets.
        if self.qdelay_old < 0.5 * law.target.as_secs_f64() && self.p < 0.2 {
            return false;
        }
        let short = if law.short_in_packets { fifo.len() <= 2 } else { fifo.bytes() <= 2 * mean };
        if short {
            return false;
        }
        if law.derandomize {
            if self.p == 0.0 {
                self.accu_prob = 0.0;
            }
            self.accu_prob += self.p;
            if self.accu_prob < 0.85 {
                return false;
            }
            if self.accu_prob >= 8.5 {
                return true;
            }
        }
        let u: f64 = rng.gen();
        u <= p
    }

    /// Whether an early decision on `pkt` becomes a CE mark (§5.1).
    pub fn marks(&self, law: &PieLaw, pkt: &Packet) -> bool {
        if !law.ecn || pkt.ecn == Ecn::NotEct {
            return false;
        }
        match law.variant {
            PieVariant::Rfc8033 => self.p <= law.mark_ecn_threshold,
            PieVariant::Ns3 => self.p < law.mark_ecn_threshold,
        }
    }

    /// An arrival was dropped (early or overflow): derandomization starts counting again.
    #[inline]
    pub fn on_drop(&mut self) {
        self.accu_prob = 0.0;
    }

    /// Bookkeeping after `pkt` left `fifo` at `now` (the delay sample or the departure rate).
    #[inline]
    pub fn on_dequeue(&mut self, law: &PieLaw, pkt: &Packet, now: Time, fifo: &Fifo) {
        match law.delay_estimator {
            DelayEstimator::Timestamp => {
                self.qdelay = if fifo.is_empty() { 0.0 } else { now.saturating_since(pkt.enqueued_at).as_secs_f64() };
            }
            DelayEstimator::DqRate => self.measure_departure(law, pkt.size, now, fifo),
        }
    }

    /// Departure-rate bookkeeping after `size` bytes left at `now` (ns-3 `DoDequeue`).
    fn measure_departure(&mut self, law: &PieLaw, size: u32, now: Time, fifo: &Fifo) {
        let threshold = law.dq_threshold;
        let left = fifo.bytes();
        if left >= threshold && !self.dq.in_measurement {
            self.dq = DqRate { in_measurement: true, start: now, count: 0, ..self.dq };
        }
        if !self.dq.in_measurement {
            return;
        }
        self.dq.count += u64::from(size);
        if self.dq.count >= threshold {
            let dt = now.saturating_since(self.dq.start).as_secs_f64();
            if dt > 0.0 {
                let rate = self.dq.count as f64 / dt;
                self.dq.avg_rate = if self.dq.avg_rate == 0.0 { rate } else { 0.5 * self.dq.avg_rate + 0.5 * rate };
            }
            self.dq.count = 0;
            self.dq.in_measurement = left > threshold;
            self.dq.start = now;
        }
    }
}
