//! REM, Random Exponential Marking (Athuraliya, Low, Li & Yin, "REM: Active Queue Management",
//! IEEE Network 15(3), 2001), as ns-2.35's `Queue/REM` runs it (`queue/rem.cc`, `rem.h`; defaults
//! from `tcl/lib/ns-default.tcl`). docs/rem.md has the derivation, the choices and the ns-2
//! cross-check.
//!
//! A FIFO whose arrivals are dropped (or, with `ecn`, whose ECN-capable departures are marked) with
//! probability `prob = 1 − φ^(−p)` (paper Sec. "Exponential marking"), where the link *price* `p`
//! is updated every `update_interval` (ns-2 `pupdtime_`; `REMQueue::run_updaterule`):
//!
//! ```text
//! x ← (1 − inw)·x + inw·in                  in: arrivals in the interval (drops included), packets
//! p ← max(0, p + γ·(α·(b − b*) + x − c))    b: packets queued now; c = interval·C/(8·mean_pktsize)
//! prob = 1 − φ^(−p)
//! ```
//!
//! Worked number (ns-2 defaults, a 10 Mb/s link, 1000-B packets: c = 0.002·1250 = 2.5): from
//! p = 0, an interval with 4 arrivals and b = 30 gives p = 0.001·(0.1·10 + 4 − 2.5) = 0.0025 and
//! prob = 1 − 1.001^(−0.0025) = 2.4987e-6.
//!
//! Paper and ns-2 differ; aqmlab follows ns-2 and says so:
//! - **α.** The paper's α is a parameter; ns-2 hard-codes `0.1`. Key `alpha`, default 0.1.
//! - **Input rate.** The paper's `x_l(t)` is the aggregate input rate; ns-2 counts arrivals per
//!   interval (every arrival, the ones it then drops too) and low-pass filters them with `inw_`
//!   (default 1: no filtering). Units are packets per interval (mean-size packets with
//!   `queue_in_bytes`), so γ is ns-2's, not the paper's per-second one.
//! - **Backlog-difference form.** The paper notes `x − c ≈ b(t+1) − b(t)`, so the update can use
//!   queue lengths alone; ns-2 (and aqmlab) use the measured arrivals. Not modelled.
//! - **Marking place.** ns-2 marks at *departure* (`deque`) with the probability current then, and
//!   only ECN-capable packets; a non-ECT packet in mark mode is neither marked nor dropped. aqmlab
//!   does the same; the uniform is drawn at arrival (the engine hands `dequeue` no random stream)
//!   and kept beside the packet, which gives the same distribution (an independent uniform per
//!   packet compared with the departure-time probability). These marks count in the queue's
//!   `marks`, not in a flow's (the engine counts a flow's marks from the enqueue verdict).
//! - **Buffer.** ns-2 appends the arrival and drops it if the length is then `≥ limit`, so at most
//!   `limit − 1` packets are ever queued (drop-tail holds `limit`). aqmlab keeps that test.
//!
//! Random draws: in drop mode one uniform per arrival that is not a forced drop (drop when
//! `prob > 0` and `u ≤ prob`; ns-2 tests `u ≤ prob`, the guard only removes `u = 0`); in mark mode
//! one per accepted arrival, none at a forced drop. With `queue_in_bytes` (ns-2 `qib_`) the queue,
//! the arrivals and the limit are in bytes ÷ `mean_packet_size` and the probability is scaled by
//! `size/mean_packet_size`.
//!
//! Timer without an engine event: the price is *caught up* at the start of every `enqueue` and
//! `dequeue`, running each update instant `k·interval` (k ≥ 1; ns-2 arms the timer in `reset()` at
//! t = 0) that has passed, with the queue length held since the last call, as PI does
//! ([`super::pi::PiController::catch_up`]). An arrival at an update instant is counted in the
//! next interval.

use std::collections::VecDeque;

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::{Ecn, Packet};
use crate::scenario::units::{Bytes, Duration, Limit};

/// Scenario keys of `kind = "rem"`. Readable names, with ns-2's `Queue/REM` names as aliases.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RemParams {
    /// Price step size γ (ns-2 `gamma_`, 0.001), per packet of mismatch.
    #[serde(default = "default_gamma", alias = "gamma_")]
    pub gamma: f64,
    /// Base φ of the marking probability 1 − φ^(−p), > 1 (ns-2 `phi_`, 1.001).
    #[serde(default = "default_phi", alias = "phi_")]
    pub phi: f64,
    /// Weight of the newest interval in the input-rate filter, in (0, 1] (ns-2 `inw_`, 1).
    #[serde(default = "default_input_weight", alias = "inw_")]
    pub input_weight: f64,
    /// Weight α of the backlog mismatch (ns-2 hard-codes 0.1; the paper's α).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Target backlog b*, packets (ns-2 `pbo_`, 20).
    #[serde(default = "default_target_backlog", alias = "pbo_")]
    pub target_backlog: f64,
    /// Time between price updates (ns-2 `pupdtime_`, 2 ms).
    #[serde(default = "default_update_interval", alias = "pupdtime_")]
    pub update_interval: Duration,
    /// Packet size that turns the link rate into packets per interval, and bytes into packets with
    /// `queue_in_bytes` (ns-2 `mean_pktsize_`, 1000 B).
    #[serde(default = "default_mean_packet_size", alias = "mean_pktsize_")]
    pub mean_packet_size: Bytes,
    /// Buffer, packets (`limit × mean_packet_size` bytes with `queue_in_bytes`); ns-2's test lets
    /// at most `limit − 1` wait. ns-2's `Queue` default `limit_` 50.
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Mark ECN-capable packets at departure instead of dropping arrivals (ns-2 `markpkts_`, false).
    #[serde(default, alias = "markpkts_")]
    pub ecn: bool,
    /// Measure queue, arrivals and limit in bytes (ns-2 `qib_`, false).
    #[serde(default, alias = "qib_")]
    pub queue_in_bytes: bool,
}

fn default_gamma() -> f64 {
    0.001
}
fn default_phi() -> f64 {
    1.001
}
fn default_input_weight() -> f64 {
    1.0
}
fn default_alpha() -> f64 {
    0.1
}
fn default_target_backlog() -> f64 {
    20.0
}
fn default_update_interval() -> Duration {
    Duration(Dur::from_millis(2))
}
fn default_mean_packet_size() -> Bytes {
    Bytes(1000)
}
fn default_limit() -> u32 {
    50
}

impl Default for RemParams {
    fn default() -> Self {
        RemParams {
            gamma: default_gamma(),
            phi: default_phi(),
            input_weight: default_input_weight(),
            alpha: default_alpha(),
            target_backlog: default_target_backlog(),
            update_interval: default_update_interval(),
            mean_packet_size: default_mean_packet_size(),
            limit: default_limit(),
            ecn: false,
            queue_in_bytes: false,
        }
    }
}

impl RemParams {
    /// Checks the keys and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Rem> {
        for (name, v) in [("gamma", self.gamma), ("alpha", self.alpha), ("target_backlog", self.target_backlog)] {
            if !v.is_finite() || v < 0.0 {
                return Err(ConfigError::new(join(path, name), format!("must be a finite number >= 0, got {v}")));
            }
        }
        if !(self.phi.is_finite() && self.phi > 1.0) {
            return Err(ConfigError::new(join(path, "phi"), format!("must be a finite number > 1, got {}", self.phi)));
        }
        if !(self.input_weight > 0.0 && self.input_weight <= 1.0) {
            return Err(ConfigError::new(join(path, "input_weight"), format!("must be in (0, 1], got {}", self.input_weight)));
        }
        if self.update_interval.0 .0 == 0 {
            return Err(ConfigError::new(join(path, "update_interval"), "must be positive, got 0s"));
        }
        if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&self.mean_packet_size.0) {
            return Err(crate::error::mean_packet_size_error(join(path, "mean_packet_size"), self.mean_packet_size.0));
        }
        if self.limit < 2 {
            return Err(ConfigError::new(
                join(path, "limit"),
                format!("must be at least 2 packets (ns-2's test queues at most limit - 1), got {}", self.limit),
            ));
        }
        if !(link_rate_bps.is_finite() && link_rate_bps > 0.0) {
            return Err(ConfigError::new(join(path, "rate"), format!("REM needs a positive link rate, got {link_rate_bps}")));
        }
        let mean = self.mean_packet_size.0 as f64;
        let interval = self.update_interval.0;
        let price = RemPrice {
            gamma: self.gamma,
            alpha: self.alpha,
            input_weight: self.input_weight,
            target_backlog: self.target_backlog,
            // ns-2 `reset`/`link`: ptc = bandwidth / (8 · mean_pktsize); c = pupdtime · ptc.
            capacity_pkts: interval.as_secs_f64() * link_rate_bps / (8.0 * mean),
            ln_phi: self.phi.ln(),
            p: 0.0,
            prob: 0.0,
            input_avg: 0.0,
        };
        Ok(Rem::new(RemConfig { ecn: self.ecn, queue_in_bytes: self.queue_in_bytes, mean_packet_size: mean, limit: self.limit, interval }, price))
    }
}

/// Validated switches and units.
#[derive(Clone, Debug, PartialEq)]
pub struct RemConfig {
    ecn: bool,
    queue_in_bytes: bool,
    /// Bytes per "packet" in byte mode and in the capacity c.
    mean_packet_size: f64,
    /// Buffer, packets (× `mean_packet_size` bytes in byte mode).
    limit: u32,
    /// Time between price updates.
    interval: Dur,
}

/// The price and its update rule (ns-2 `run_updaterule`), apart from the queue and the clock.
#[derive(Clone, Debug, PartialEq)]
pub struct RemPrice {
    gamma: f64,
    alpha: f64,
    input_weight: f64,
    /// b*, packets.
    target_backlog: f64,
    /// c: packets the link can send in one interval.
    capacity_pkts: f64,
    /// ln φ (prob = 1 − e^(−p·ln φ)).
    ln_phi: f64,
    /// The price p ≥ 0 (ns-2 `v_pl`).
    p: f64,
    /// 1 − φ^(−p), in [0, 1) (ns-2 `v_prob`).
    prob: f64,
    /// Filtered arrivals per interval, packets (ns-2 `v_ave`).
    input_avg: f64,
}

impl RemPrice {
    /// A price of 0 with ns-2's constants: `gamma`, `phi`, `inw`, α, b*, c (packets per interval).
    pub fn new(gamma: f64, phi: f64, input_weight: f64, alpha: f64, target_backlog: f64, capacity_pkts: f64) -> RemPrice {
        RemPrice { gamma, alpha, input_weight, target_backlog, capacity_pkts, ln_phi: phi.ln(), p: 0.0, prob: 0.0, input_avg: 0.0 }
    }

    /// One update (ns-2 `run_updaterule`) with `arrivals` in the interval and `backlog` queued
    /// now, both in packets: x ← (1−inw)x + inw·arrivals; p ← max(0, p + γ(α(b − b*) + x − c));
    /// prob = 1 − φ^(−p).
    pub fn update(&mut self, arrivals: f64, backlog: f64) {
        self.input_avg = (1.0 - self.input_weight) * self.input_avg + self.input_weight * arrivals;
        let p = self.p + self.gamma * (self.input_avg + self.alpha * (backlog - self.target_backlog) - self.capacity_pkts);
        self.p = p.max(0.0);
        self.prob = marking_probability(self.p, self.ln_phi);
    }

    /// The price p.
    pub fn price(&self) -> f64 {
        self.p
    }

    /// The marking/dropping probability 1 − φ^(−p).
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// c, packets per interval.
    pub fn capacity_pkts(&self) -> f64 {
        self.capacity_pkts
    }
}

/// REM's exponential law, 1 − φ^(−p) written as 1 − e^(−p·ln φ) (paper eq. for m_l; ns-2
/// `1.0 - pow(phi, -pl)`).
pub fn marking_probability(p: f64, ln_phi: f64) -> f64 {
    -(-p * ln_phi).exp_m1()
}

/// REM over a FIFO.
pub struct Rem {
    cfg: RemConfig,
    price: RemPrice,
    /// The next update instant (k·interval, k ≥ 1).
    next_update_at: Time,
    /// Arrivals since the last update: packets, or bytes in byte mode (ns-2 `v_count`).
    arrivals_in_interval: f64,
    /// Updates run so far.
    updates: u64,
    fifo: Fifo,
    /// Mark mode: one uniform per queued packet, drawn at its arrival, in queue order.
    mark_draws: VecDeque<f64>,
    stats: QdiscStats,
}

impl Rem {
    /// An empty queue whose first update is at `interval`.
    pub fn new(cfg: RemConfig, price: RemPrice) -> Rem {
        let reserve = if cfg.queue_in_bytes {
            Limit::Bytes((f64::from(cfg.limit) * cfg.mean_packet_size) as u64)
        } else {
            Limit::Packets(u64::from(cfg.limit))
        };
        let mark_draws = if cfg.ecn { VecDeque::with_capacity(reserve.initial_capacity()) } else { VecDeque::new() };
        Rem {
            next_update_at: Time(cfg.interval.0),
            cfg,
            price,
            arrivals_in_interval: 0.0,
            updates: 0,
            fifo: Fifo::new(reserve),
            mark_draws,
            stats: QdiscStats::default(),
        }
    }

    /// The price and its update rule.
    pub fn price(&self) -> &RemPrice {
        &self.price
    }

    /// Updates run so far.
    pub fn updates(&self) -> u64 {
        self.updates
    }

    /// The backlog the update sees: packets, or bytes ÷ mean packet size in byte mode.
    fn backlog(&self) -> f64 {
        if self.cfg.queue_in_bytes { self.fifo.bytes() as f64 / self.cfg.mean_packet_size } else { self.fifo.len() as f64 }
    }

    /// Runs every update instant up to and including `now`; the queue has not changed since the
    /// previous call, so each sees the length a timer would have seen.
    #[inline]
    fn catch_up(&mut self, now: Time) {
        while self.next_update_at <= now {
            let arrivals = if self.cfg.queue_in_bytes {
                self.arrivals_in_interval / self.cfg.mean_packet_size
            } else {
                self.arrivals_in_interval
            };
            self.price.update(arrivals, self.backlog());
            self.arrivals_in_interval = 0.0;
            self.updates += 1;
            self.next_update_at = Time(self.next_update_at.0 + self.cfg.interval.0);
        }
    }

    /// The probability for a packet of `size` bytes (scaled by size/mean in byte mode).
    fn prob_for(&self, size: u32) -> f64 {
        if self.cfg.queue_in_bytes { self.price.prob * f64::from(size) / self.cfg.mean_packet_size } else { self.price.prob }
    }
}

impl Qdisc for Rem {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.catch_up(now);
        self.stats.arrivals += 1;
        self.arrivals_in_interval += if self.cfg.queue_in_bytes { f64::from(pkt.size) } else { 1.0 };
        // ns-2 `enque`: append, then drop the arrival if the length is now ≥ qlim.
        let after = if self.cfg.queue_in_bytes {
            (self.fifo.bytes() + u64::from(pkt.size)) as f64
        } else {
            (self.fifo.len() + 1) as f64
        };
        let limit = if self.cfg.queue_in_bytes { f64::from(self.cfg.limit) * self.cfg.mean_packet_size } else { f64::from(self.cfg.limit) };
        if after >= limit {
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        let u: f64 = rng.gen();
        if self.cfg.ecn {
            self.mark_draws.push_back(u);
        } else {
            let prob = self.prob_for(pkt.size);
            if prob > 0.0 && u <= prob {
                self.stats.count_drop(DropKind::Early);
                return Verdict::Dropped(DropKind::Early);
            }
        }
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        self.catch_up(now);
        let mut pkt = self.fifo.pop()?;
        self.stats.dequeues += 1;
        if self.cfg.ecn {
            // ns-2 `deque`: mark an ECN-capable departure when u ≤ prob (current probability).
            let u = self.mark_draws.pop_front().expect("one draw per queued packet");
            let prob = self.prob_for(pkt.size);
            if prob > 0.0 && u <= prob && pkt.ecn.is_ect() {
                pkt.ecn = Ecn::Ce;
                self.stats.marks += 1;
            }
        }
        Some(pkt)
    }

    super::fifo::fifo_accessors!();

    /// REM keeps no smoothed queue; this reports its marking probability 1 − φ^(−p) instead.
    fn average(&self) -> Option<f64> {
        Some(self.price.prob)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    const DATA: Packet = Packet { size: 1000, ..Packet::new(PacketKind::Udp, 0) };
    const ECT: Packet = Packet { ecn: Ecn::Ect, ..DATA };

    /// ns-2's defaults on a 10 Mb/s link: c = 0.002 s · 10e6 / 8000 = 2.5 packets per interval.
    fn ns2_rem(p: RemParams) -> Rem {
        p.validate("queue", 10e6).unwrap()
    }

    #[test]
    fn capacity_is_packets_per_interval_of_the_link() {
        let q = ns2_rem(RemParams::default());
        assert!((q.price().capacity_pkts() - 2.5).abs() < 1e-12);
        let q = ns2_rem(RemParams { mean_packet_size: Bytes(500), update_interval: Duration(Dur::from_millis(10)), ..RemParams::default() });
        assert!((q.price().capacity_pkts() - 25.0).abs() < 1e-12); // 0.01 · 10e6 / 4000
    }

    #[test]
    fn one_update_matches_the_hand_computation() {
        // p = 0 + 0.001·(4 + 0.1·(30 − 20) − 2.5) = 0.0025; prob = 1 − 1.001^−0.0025.
        let mut r = RemPrice::new(0.001, 1.001, 1.0, 0.1, 20.0, 2.5);
        r.update(4.0, 30.0);
        assert!((r.price() - 0.0025).abs() < 1e-15, "{}", r.price());
        // 1 − e^(−x), x = 0.0025·ln 1.001 = 2.4987508e-6: x − x²/2 = 2.4987477e-6
        assert!((r.prob() - 2.4987477e-6).abs() < 1e-13, "{}", r.prob());
        // second interval: 1 arrival, b = 10: Δp = 0.001·(1 − 1 − 2.5) = −0.0025 → p = 0
        r.update(1.0, 10.0);
        assert_eq!(r.price(), 0.0);
        assert_eq!(r.prob(), 0.0);
    }

    #[test]
    fn price_never_goes_below_zero() {
        let mut r = RemPrice::new(0.001, 1.001, 1.0, 0.1, 20.0, 2.5);
        for _ in 0..100 {
            r.update(0.0, 0.0); // Δp = 0.001·(−2 − 2.5) < 0
        }
        assert_eq!(r.price(), 0.0);
    }

    #[test]
    fn input_weight_filters_the_arrivals() {
        // inw = 0.5: x = 0.5·10 = 5, then 0.5·5 + 0.5·0 = 2.5. b = b* and c = 2.5:
        // Δp = γ(5 − 2.5) = 0.25, then γ(2.5 − 2.5) = 0.
        let mut r = RemPrice::new(0.1, 1.001, 0.5, 0.1, 20.0, 2.5);
        r.update(10.0, 20.0);
        assert!((r.price() - 0.25).abs() < 1e-12, "{}", r.price());
        r.update(0.0, 20.0);
        assert!((r.price() - 0.25).abs() < 1e-12, "{}", r.price());
    }

    #[test]
    fn marking_probability_is_one_minus_phi_to_minus_p() {
        let ln = 1.001f64.ln();
        assert_eq!(marking_probability(0.0, ln), 0.0);
        // 1 − 1.001^−693.49 = 1 − e^−0.69315 ≈ 0.5 (p = ln 2 / ln 1.001 = 693.4936)
        assert!((marking_probability(693.4936, ln) - 0.5).abs() < 1e-6);
        // φ = 2, p = 3: 1 − 1/8
        assert!((marking_probability(3.0, 2f64.ln()) - 0.875).abs() < 1e-15);
        assert!(marking_probability(1e9, ln) <= 1.0);
    }

    #[test]
    fn updates_happen_every_interval_and_see_the_held_length() {
        // Two arrivals at 0 and 0.5 ms; the dequeue at 5 ms runs the updates at 2 and 4 ms. The
        // first sees 2 arrivals and b = 2, the second 0 arrivals and b = 2.
        let mut q = ns2_rem(RemParams { gamma: 0.1, target_backlog: 0.0, ..RemParams::default() });
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        q.enqueue(DATA, Time(0), &mut rng, &mut drops);
        q.enqueue(DATA, Time(500_000), &mut rng, &mut drops);
        q.dequeue(Time(5_000_000), &mut drops);
        assert_eq!(q.updates(), 2);
        // 0.1·(2 + 0.2 − 2.5) < 0 → 0; 0.1·(0 + 0.2 − 2.5) < 0 → 0
        assert_eq!(q.price().price(), 0.0);
        let mut hand = RemPrice::new(0.1, 1.001, 1.0, 0.1, 0.0, 2.5);
        hand.update(2.0, 2.0);
        hand.update(0.0, 2.0);
        assert_eq!(q.price(), &hand);
        // 10 arrivals before 6 ms: the update at 6 ms sees 10 arrivals and b = 1 + 10 = 11.
        for i in 0..10 {
            q.enqueue(DATA, Time(5_100_000 + i), &mut rng, &mut drops);
        }
        q.dequeue(Time(6_000_000), &mut drops);
        hand.update(10.0, 11.0); // 0.1·(10 + 1.1 − 2.5) = 0.86
        assert_eq!(q.price(), &hand);
        assert!((q.price().price() - 0.86).abs() < 1e-12);
    }

    #[test]
    fn ns2_buffer_test_queues_at_most_limit_minus_one() {
        let mut q = ns2_rem(RemParams { limit: 3, ..RemParams::default() });
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let v: Vec<Verdict> = (0..4).map(|seq| q.enqueue(Packet { seq, ..DATA }, Time(0), &mut rng, &mut drops)).collect();
        assert_eq!(v, [Verdict::Enqueued, Verdict::Enqueued, Verdict::Dropped(DropKind::Overflow), Verdict::Dropped(DropKind::Overflow)]);
        assert_eq!(q.len_packets(), 2);
        // forced drops take no draw: two draws so far
        let mut twin = stream(1, StreamId::Queue(0));
        let _: (f64, f64) = (twin.gen(), twin.gen());
        assert_eq!(rng.gen::<u64>(), twin.gen::<u64>());
        // ns-2 counts every arrival, the dropped ones too, in the input rate.
        assert_eq!(q.arrivals_in_interval, 4.0);
    }

    #[test]
    fn early_drops_follow_prob() {
        // Hold the price at p with 1 − φ^−p = 0.2 (φ = 2: p = log2(1.25)) and γ = 0 afterwards.
        let mut q = ns2_rem(RemParams { limit: 100_000, ..RemParams::default() });
        q.price.p = 1.25f64.log2();
        q.price.prob = marking_probability(q.price.p, 2f64.ln());
        q.price.gamma = 0.0;
        assert!((q.price.prob - 0.2).abs() < 1e-12);
        let (mut rng, mut drops) = (stream(5, StreamId::Queue(0)), DropBuf::new());
        for i in 0..20_000u64 {
            q.enqueue(DATA, Time(i), &mut rng, &mut drops); // all before the first update
        }
        let frac = q.stats().drops_early as f64 / 20_000.0;
        assert!((frac - 0.2).abs() < 0.015, "{frac}");
        assert_eq!(q.stats().marks, 0);
    }

    #[test]
    fn ecn_marks_ect_departures_with_the_departure_time_probability() {
        let mut q = ns2_rem(RemParams { ecn: true, limit: 100, ..RemParams::default() });
        let (mut rng, mut drops) = (stream(2, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..40 {
            let pkt = if seq % 2 == 0 { Packet { seq, ..ECT } } else { Packet { seq, ..DATA } };
            assert_eq!(q.enqueue(pkt, Time(0), &mut rng, &mut drops), Verdict::Enqueued, "no drops in mark mode");
        }
        // Price 0 at arrival; raise it to prob = 1 − 1.001^−1e6 ≈ 1 before departure.
        q.price.p = 1e6;
        q.price.prob = marking_probability(1e6, 1.001f64.ln());
        let out: Vec<Packet> = (0..40).map(|_| q.dequeue(Time(1), &mut drops).unwrap()).collect();
        for p in &out {
            let want = if p.seq % 2 == 0 { Ecn::Ce } else { Ecn::NotEct }; // non-ECT passes unmarked (ns-2)
            assert_eq!(p.ecn, want, "seq {}", p.seq);
        }
        assert_eq!(q.stats().marks, 20);
        assert_eq!(q.stats().drops(), 0);
    }

    #[test]
    fn byte_mode_scales_queue_arrivals_and_probability() {
        let mut q = ns2_rem(RemParams { queue_in_bytes: true, gamma: 0.1, target_backlog: 0.0, limit: 10, ..RemParams::default() });
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..3 {
            q.enqueue(Packet { size: 500, ..DATA }, Time(0), &mut rng, &mut drops);
        }
        q.dequeue(Time(2_000_000), &mut drops); // update at 2 ms: in = 1500/1000, b = 1.5
        let mut hand = RemPrice::new(0.1, 1.001, 1.0, 0.1, 0.0, 2.5);
        hand.update(1.5, 1.5);
        assert_eq!(q.price(), &hand);
        q.price.prob = 0.4;
        assert!((q.prob_for(250) - 0.1).abs() < 1e-15);
        // limit 10 × 1000 B: 9,000 B + 1,000 B reaches it
        let mut q = ns2_rem(RemParams { queue_in_bytes: true, limit: 10, ..RemParams::default() });
        for _ in 0..9 {
            assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
        assert_eq!(q.enqueue(Packet { size: 999, ..DATA }, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
    }

    #[test]
    fn ns2_names_are_aliases() {
        let p: RemParams = toml::from_str("gamma_ = 0.01\nphi_ = 1.01\ninw_ = 0.5\npbo_ = 5.0\npupdtime_ = \"10ms\"\nmean_pktsize_ = \"500B\"\nmarkpkts_ = true\nqib_ = true").unwrap();
        assert_eq!((p.gamma, p.phi, p.input_weight, p.target_backlog), (0.01, 1.01, 0.5, 5.0));
        assert_eq!((p.update_interval.0, p.mean_packet_size.0, p.ecn, p.queue_in_bytes), (Dur::from_millis(10), 500, true, true));
    }

    #[test]
    fn bad_keys_name_the_key_and_the_allowed_range() {
        let e = RemParams { phi: 1.0, ..RemParams::default() }.validate("queue", 1e6).err().unwrap();
        assert_eq!(e.to_string(), "queue.phi: must be a finite number > 1, got 1");
        let e = RemParams { input_weight: 0.0, ..RemParams::default() }.validate("queue", 1e6).err().unwrap();
        assert_eq!(e.to_string(), "queue.input_weight: must be in (0, 1], got 0");
        let e = RemParams { gamma: -1.0, ..RemParams::default() }.validate("queue", 1e6).err().unwrap();
        assert_eq!(e.to_string(), "queue.gamma: must be a finite number >= 0, got -1");
        let e = RemParams { limit: 1, ..RemParams::default() }.validate("queue", 1e6).err().unwrap();
        assert_eq!(e.to_string(), "queue.limit: must be at least 2 packets (ns-2's test queues at most limit - 1), got 1");
        let e = RemParams { update_interval: Duration(Dur(0)), ..RemParams::default() }.validate("queue", 1e6).err().unwrap();
        assert_eq!(e.to_string(), "queue.update_interval: must be positive, got 0s");
    }
}
