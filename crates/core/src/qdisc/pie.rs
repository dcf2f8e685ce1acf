//! PIE, Proportional Integral controller Enhanced (Pan, Natarajan, Baker & White, RFC 8033), with
//! a switch for the behaviour of ns-3 3.44's `PieQueueDisc` (`src/traffic-control/model/
//! pie-queue-disc.cc`) where the two differ.
//!
//! A FIFO whose arrivals are dropped with a probability `p` that a controller updates every
//! `t_update` from an estimate of the queueing delay (RFC 8033 §4.2):
//! `Δ = alpha·(qdelay − target) + beta·(qdelay − qdelay_old)`, scaled down while `p` is small
//! (÷2048 below 1e-6, ÷512 below 1e-5, ÷128 below 1e-4, ÷32 below 1e-3, ÷8 below 1 %, ÷2 below
//! 10 %), capped at +0.02 once `p ≥ 10 %` (§5.5, `cap_drop_adjustment`), `p += Δ`; then, when
//! both the current and the previous estimate are 0 (an idle queue), `p ← 0.98·p` (§4.2), and `p`
//! is clamped to [0, 1].
//!
//! Queue delay (§4.3, `delay_estimator`): `"timestamp"` (default, as ns-3 3.44's default
//! `UseDequeueRateEstimator = false` and Linux's default) is the sojourn of the packet most
//! recently dequeued, 0 when that dequeue emptied the queue. `"dq_rate"` is Little's law,
//! queued bytes ÷ average departure rate, the rate measured over cycles of `dq_threshold`
//! (16 KB) bytes dequeued while at least that much was queued, averaged with weight ½ as ns-3
//! does (in both variants).
//!
//! On arrival (§4.1, §5): a full buffer drops (`Overflow`). Otherwise no early drop while burst
//! allowance remains (§4.4), nor when `qdelay_old < target/2` and `p < 0.2`, nor when the queue
//! holds at most two packets (§4.1: `bytes ≤ 2·mean_pkt_size`; ns-3: `≤ 2` packets with a packet
//! limit). Then one uniform draw `u`, drop (`Early`) when `u ≤ p`; with `derandomize` (§5.3) the
//! accumulated probability gates the draw (no drop below 0.85, certain drop at 8.5). With `ecn`,
//! an ECN-capable arrival picked for an early drop is CE-marked instead while `p ≤ 10 %` (§5.1,
//! `mark_ecn_threshold`; ns-3: `p < 10 %`).
//!
//! `variant` chooses what differs between RFC 8033 and ns-3 3.44 in a way that changes results:
//! * burst allowance. `"rfc8033"` (§4.4): the allowance starts at `max_burst`, every update
//!   takes `t_update` off it, and it is restored to `max_burst` at any update where `p = 0` and
//!   both delay estimates are below `target/2`; `p` is updated during the allowance as always.
//!   `"ns3"`: the allowance starts at 0 and is armed (to `max_burst`) by the first arrival that
//!   reaches the early-drop test while in state NO_BURST; while it lasts each update *forces
//!   `p = 0`*; it is re-armed only after `BURST_RESET_TIMEOUT` = 1.5 s of quiet updates.
//! * the "two packets" safeguard and byte mode: ns-3 counts packets with a packet limit, and with
//!   a byte limit scales `p` by `size / mean_pkt_size`; the RFC variant always counts bytes and
//!   never scales.
//!
//! Updates without an engine timer (as [`super::pi`]): the controller is caught up at the start
//! of every `enqueue` and `dequeue`, running each update instant `k·t_update` (k ≥ 1) that has
//! passed with the state held since the previous call; an update at the same instant as an
//! arrival or departure runs before it. ns-3 also runs one at t = 0, which changes nothing.
//!
//! Not modelled: the RFC's optional active/inactive state (`QUEUE_SMALL`, ns-3's disabled-by-
//! default `ActiveThreshold`), ns-3's L4S / `CeThreshold` marking (off by default).
//!
//! Default `limit` is 1000 packets (Linux `sch_pie`): the RFC sets none, and ns-3's 25 packets
//! would make the buffer, not PIE, decide on most links.

use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::pie_core::{PieLaw, PieState};
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::{Ecn, Packet};
use crate::scenario::units::{Bytes, Duration, Limit};

/// Which published form of PIE to run where RFC 8033 and ns-3 3.44 differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PieVariant {
    /// RFC 8033 §4–§5.
    #[default]
    Rfc8033,
    /// ns-3 3.44 `PieQueueDisc`.
    Ns3,
}

/// How the queueing delay is estimated (RFC 8033 §4.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DelayEstimator {
    /// Sojourn time of the last dequeued packet (0 once the queue empties).
    #[default]
    Timestamp,
    /// Queued bytes ÷ measured departure rate (Little's law).
    DqRate,
}

/// Scenario keys of `kind = "pie"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PieParams {
    /// `"rfc8033"` (default) or `"ns3"`.
    #[serde(default)]
    pub variant: PieVariant,
    /// Buffer: packets (integer) or bytes (`"150KB"`). Default 1000 packets.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Target queueing delay (RFC `QDELAY_REF`, ns-3 `QueueDelayReference`). Default 15 ms.
    #[serde(default = "default_target")]
    pub target: Duration,
    /// Update period of `p` (RFC `T_UPDATE`, ns-3 `Tupdate`). Default 15 ms.
    #[serde(default = "default_t_update")]
    pub t_update: Duration,
    /// Burst allowance (RFC `MAX_BURST`, ns-3 `MaxBurstAllowance`). Default 150 ms.
    #[serde(default = "default_max_burst")]
    pub max_burst: Duration,
    /// Weight of the delay error, per second (ns-3 `A`). Default 0.125.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Weight of the delay trend, per second (ns-3 `B`). Default 1.25.
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// `"timestamp"` (default) or `"dq_rate"`.
    #[serde(default)]
    pub delay_estimator: DelayEstimator,
    /// Bytes a departure-rate measurement cycle needs (RFC `DQ_THRESHOLD`). Default 16384 B.
    #[serde(default = "default_dq_threshold")]
    pub dq_threshold: Bytes,
    /// Mean packet size for the two-packet safeguard and ns-3's byte mode. Default 1000 B.
    #[serde(default = "default_mean_pkt_size")]
    pub mean_pkt_size: Bytes,
    /// Cap each increase of `p` at 0.02 once `p ≥ 0.1` (RFC §5.5). Default true.
    #[serde(default = "default_true")]
    pub cap_drop_adjustment: bool,
    /// CE-mark ECN-capable packets instead of dropping while `p` is low (RFC §5.1). Default false.
    #[serde(default)]
    pub ecn: bool,
    /// Highest `p` at which `ecn` marks instead of dropping. Default 0.1.
    #[serde(default = "default_mark_ecn_threshold")]
    pub mark_ecn_threshold: f64,
    /// Derandomized drops via the accumulated probability (RFC §5.3). Default false.
    #[serde(default)]
    pub derandomize: bool,
}

fn default_limit() -> Limit {
    Limit::Packets(1000)
}
fn default_target() -> Duration {
    Duration(Dur::from_millis(15))
}
fn default_t_update() -> Duration {
    Duration(Dur::from_millis(15))
}
fn default_max_burst() -> Duration {
    Duration(Dur::from_millis(150))
}
fn default_alpha() -> f64 {
    0.125
}
fn default_beta() -> f64 {
    1.25
}
fn default_dq_threshold() -> Bytes {
    Bytes(16384)
}
fn default_mean_pkt_size() -> Bytes {
    Bytes(1000)
}
fn default_true() -> bool {
    true
}
fn default_mark_ecn_threshold() -> f64 {
    0.1
}

impl Default for PieParams {
    fn default() -> Self {
        PieParams {
            variant: PieVariant::default(),
            limit: default_limit(),
            target: default_target(),
            t_update: default_t_update(),
            max_burst: default_max_burst(),
            alpha: default_alpha(),
            beta: default_beta(),
            delay_estimator: DelayEstimator::default(),
            dq_threshold: default_dq_threshold(),
            mean_pkt_size: default_mean_pkt_size(),
            cap_drop_adjustment: true,
            ecn: false,
            mark_ecn_threshold: default_mark_ecn_threshold(),
            derandomize: false,
        }
    }
}

impl PieParams {
    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<Pie> {
        let key = |k: &str| join(path, k);
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::new(key(name), format!("must be a finite number >= 0 (per second), got {v}")));
            }
        }
        if self.t_update.0 == Dur::ZERO {
            return Err(ConfigError::new(key("t_update"), "must be a positive duration, got 0"));
        }
        if self.target.0 == Dur::ZERO {
            return Err(ConfigError::new(key("target"), "must be a positive duration, got 0"));
        }
        if self.dq_threshold.0 == 0 {
            return Err(ConfigError::new(key("dq_threshold"), "must be at least 1 byte, got 0"));
        }
        if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&self.mean_pkt_size.0) {
            return Err(crate::error::mean_packet_size_error(key("mean_pkt_size"), self.mean_pkt_size.0));
        }
        if !(self.mark_ecn_threshold.is_finite() && (0.0..=1.0).contains(&self.mark_ecn_threshold)) {
            return Err(ConfigError::new(
                key("mark_ecn_threshold"),
                format!("must be a probability in [0, 1], got {}", self.mark_ecn_threshold),
            ));
        }
        Ok(Pie::new(self.clone()))
    }
}

/// PIE over a FIFO.
pub struct Pie {
    cfg: PieParams,
    law: PieLaw,
    fifo: Fifo,
    stats: QdiscStats,
    st: PieState,
}

impl PieParams {
    /// The control law's constants for these keys (one FIFO under `limit`).
    pub(super) fn law(&self) -> PieLaw {
        let ns3 = self.variant == PieVariant::Ns3;
        let bytes_limit = matches!(self.limit, Limit::Bytes(_));
        PieLaw {
            variant: self.variant,
            target: self.target.0,
            t_update: self.t_update.0,
            max_burst: self.max_burst.0,
            alpha: self.alpha,
            beta: self.beta,
            delay_estimator: self.delay_estimator,
            dq_threshold: self.dq_threshold.0,
            mean_pkt_size: self.mean_pkt_size.0,
            cap_drop_adjustment: self.cap_drop_adjustment,
            ecn: self.ecn,
            mark_ecn_threshold: self.mark_ecn_threshold,
            derandomize: self.derandomize,
            // ns-3 scales p by size / MeanPktSize with a byte limit; the RFC never scales.
            byte_scaled: ns3 && bytes_limit,
            // ns-3 with a packet limit: "at most 2 packets"; otherwise 2 mean packets of bytes.
            short_in_packets: ns3 && !bytes_limit,
        }
    }
}

impl Pie {
    /// An empty queue with `p = 0`; the first update is at `t_update`.
    pub fn new(cfg: PieParams) -> Pie {
        let law = cfg.law();
        Pie {
            fifo: Fifo::new(cfg.limit),
            stats: QdiscStats::default(),
            st: PieState::new(&law, Time(cfg.t_update.0 .0)),
            law,
            cfg,
        }
    }

    /// The current drop probability, in [0, 1].
    pub fn drop_probability(&self) -> f64 {
        self.st.p
    }

    /// The latest queue-delay estimate, seconds.
    pub fn queue_delay(&self) -> f64 {
        self.st.qdelay
    }

    /// Burst allowance left.
    pub fn burst_allowance(&self) -> Dur {
        self.st.burst_allowance
    }

    /// Updates of `p` run so far.
    pub fn updates(&self) -> u64 {
        self.st.updates
    }
}

impl Qdisc for Pie {
    fn enqueue(&mut self, mut pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.st.catch_up(&self.law, now, &self.fifo);
        self.stats.arrivals += 1;
        if !self.fifo.admits(self.cfg.limit, pkt.size) {
            self.st.on_drop();
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        let mut verdict = Verdict::Enqueued;
        if self.st.drop_early(&self.law, pkt.size, &self.fifo, rng) {
            if !self.st.marks(&self.law, &pkt) {
                self.st.on_drop();
                self.stats.count_drop(DropKind::Early);
                return Verdict::Dropped(DropKind::Early);
            }
            pkt.ecn = Ecn::Ce;
            self.stats.marks += 1;
            verdict = Verdict::Marked;
        }
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        verdict
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        self.st.catch_up(&self.law, now, &self.fifo);
        let pkt = self.fifo.pop()?;
        self.stats.dequeues += 1;
        self.st.on_dequeue(&self.law, &pkt, now, &self.fifo);
        Some(pkt)
    }

    super::fifo::fifo_accessors!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::pie_core::BurstState;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    const DATA: Packet = Packet { size: 1000, ..Packet::new(PacketKind::Udp, 0) };
    const MS: u64 = 1_000_000;

    fn pie(params: PieParams) -> Pie {
        params.validate("queue").unwrap()
    }

    fn io() -> (Rng, DropBuf) {
        (stream(7, StreamId::Queue(0)), DropBuf::new())
    }

    /// Holds a standing queue of about `backlog` packets whose dequeued packets have waited
    /// `delay_ms`, from `from_ms` to `until_ms`: every ms the queue is topped up, one packet
    /// arrives through `enqueue` and one leaves. Returns the arrivals' verdicts.
    fn hold(q: &mut Pie, from_ms: u64, until_ms: u64, delay_ms: u64, backlog: usize, rng: &mut Rng, drops: &mut DropBuf) -> Vec<Verdict> {
        let mut out = Vec::new();
        for t in from_ms..until_ms {
            let now = Time(t * MS);
            while q.fifo.len() + 1 < backlog {
                q.fifo.push(DATA, now);
                q.stats.arrivals += 1;
                q.stats.enqueues += 1;
            }
            out.push(q.enqueue(DATA, now, rng, drops));
            q.fifo.get_mut(0).unwrap().enqueued_at = Time((t * MS).saturating_sub(delay_ms * MS));
            q.dequeue(now, drops);
        }
        out
    }

    #[test]
    fn p_rises_above_target_and_falls_below() {
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams::default());
        hold(&mut q, 0, 1000, 40, 20, &mut rng, &mut drops); // 40 ms > 15 ms target for 1 s
        let high = q.drop_probability();
        assert!(high > 0.01, "p after 1 s at 40 ms: {high}");
        let mut last = high;
        hold(&mut q, 1000, 1030, 40, 20, &mut rng, &mut drops);
        assert!(q.drop_probability() > last, "still rising at 40 ms");
        last = q.drop_probability();
        hold(&mut q, 1030, 1500, 5, 20, &mut rng, &mut drops); // 5 ms < target
        assert!(q.drop_probability() < last, "{} !< {last}", q.drop_probability());
    }

    #[test]
    fn first_update_hand_computed() {
        // qdelay 40 ms, old 0, p 0: Δ = (0.125·0.025 + 1.25·0.04) / 2048.
        let mut q = pie(PieParams::default());
        q.st.qdelay = 0.040;
        q.st.update(&q.law, &q.fifo);
        let want = (0.125 * 0.025 + 1.25 * 0.040) / 2048.0;
        assert!((q.drop_probability() - want).abs() < 1e-15, "{}", q.drop_probability());
        // Cap (§5.5): from p = 0.5 a huge error adds only 0.02.
        q.st.p = 0.5;
        q.st.qdelay = 1.0;
        q.st.update(&q.law, &q.fifo);
        assert!((q.drop_probability() - 0.52).abs() < 1e-12, "{}", q.drop_probability());
        let mut nocap = pie(PieParams { cap_drop_adjustment: false, ..PieParams::default() });
        nocap.st.p = 0.5;
        nocap.st.qdelay = 1.0;
        nocap.st.update(&nocap.law, &nocap.fifo);
        assert_eq!(nocap.drop_probability(), 1.0);
    }

    #[test]
    fn updates_run_every_t_update_without_timers() {
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams::default());
        q.enqueue(DATA, Time(14 * MS), &mut rng, &mut drops);
        assert_eq!(q.updates(), 0);
        q.enqueue(DATA, Time(15 * MS), &mut rng, &mut drops);
        assert_eq!(q.updates(), 1);
        q.dequeue(Time(100 * MS), &mut drops);
        assert_eq!(q.updates(), 6); // 15, 30, ..., 90 ms
    }

    #[test]
    fn burst_allowance_prevents_drops_for_the_first_150_ms() {
        // p high from the start; the RFC variant must still not drop before 150 ms.
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams::default());
        q.st.p = 0.9;
        q.st.qdelay_old = 1.0;
        let v = hold(&mut q, 0, 150, 200, 50, &mut rng, &mut drops);
        assert!(v.iter().all(|v| *v == Verdict::Enqueued), "dropped inside the allowance");
        // The allowance runs out at the 10th update (150 ms); with p high, drops follow.
        let v = hold(&mut q, 150, 400, 200, 50, &mut rng, &mut drops);
        assert!(v.iter().any(|v| matches!(v, Verdict::Dropped(DropKind::Early))), "no drop after the allowance");
        // Without an allowance the same start drops at once.
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams { max_burst: Duration(Dur::ZERO), ..PieParams::default() });
        q.st.p = 0.9;
        q.st.qdelay_old = 1.0;
        let v = hold(&mut q, 0, 140, 200, 50, &mut rng, &mut drops);
        assert!(v.iter().any(|v| matches!(v, Verdict::Dropped(DropKind::Early))));
    }

    #[test]
    fn ns3_variant_holds_p_at_zero_during_the_allowance() {
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams { variant: PieVariant::Ns3, ..PieParams::default() });
        hold(&mut q, 0, 140, 100, 50, &mut rng, &mut drops);
        assert_eq!(q.drop_probability(), 0.0);
        assert!(q.burst_allowance() > Dur::ZERO);
        let mut rfc = pie(PieParams::default());
        hold(&mut rfc, 0, 140, 100, 50, &mut rng, &mut drops);
        assert!(rfc.drop_probability() > 0.0);
    }

    #[test]
    fn rfc_allowance_is_restored_when_congestion_is_over() {
        // §4.4: an update with p = 0 and both delays below target/2 restores MAX_BURST.
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams::default());
        q.st.burst_allowance = Dur::ZERO;
        q.st.p = 0.01; // not over yet: p > 0
        q.dequeue(Time(15 * MS), &mut drops);
        assert_eq!(q.burst_allowance(), Dur::ZERO);
        q.st.p = 0.0;
        q.enqueue(DATA, Time(29 * MS), &mut rng, &mut drops);
        q.dequeue(Time(30 * MS), &mut drops);
        assert_eq!(q.burst_allowance(), Dur::from_millis(150));
    }

    #[test]
    fn ns3_burst_protection_rearms_after_1_5_s_of_quiet_updates() {
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams { variant: PieVariant::Ns3, ..PieParams::default() });
        q.enqueue(DATA, Time(0), &mut rng, &mut drops); // arms the allowance (state IN_BURST_PROTECTING)
        q.dequeue(Time(MS), &mut drops);
        assert_eq!(q.st.burst_state, BurstState::InBurstProtecting);
        // Idle from here on. The 10th update (150 ms) ends the allowance and, quiet, moves to
        // IN_BURST with burst_reset = 0; each quiet update after adds 1, and ns-3 re-arms once
        // burst_reset > uint32(1.5 / 0.015) = 100: at the 111th update (1665 ms), not the 110th.
        q.dequeue(Time(150 * MS), &mut drops);
        assert_eq!(q.st.burst_state, BurstState::InBurst);
        q.dequeue(Time(1650 * MS), &mut drops);
        assert_eq!(q.st.burst_state, BurstState::InBurst, "re-armed after only 100 quiet updates");
        q.dequeue(Time(1665 * MS), &mut drops);
        assert_eq!(q.st.burst_state, BurstState::NoBurst);
    }

    #[test]
    fn empty_queue_decays_p() {
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams::default());
        q.st.p = 0.5;
        q.enqueue(DATA, Time(MS), &mut rng, &mut drops);
        q.dequeue(Time(2 * MS), &mut drops); // empties the queue: qdelay = 0
        q.dequeue(Time(150 * MS), &mut drops); // 10 updates with qdelay = old = 0 ...
        // ... the first sees old = 0 too (initial state); each: Δ = α(0 − 0.015) = −0.001875 then ×0.98.
        let mut want = 0.5;
        for _ in 0..10 {
            want = ((want - 0.125 * 0.015) * 0.98f64).clamp(0.0, 1.0);
        }
        assert!((q.drop_probability() - want).abs() < 1e-12, "{} vs {want}", q.drop_probability());
        // Without the decay the same 10 updates would leave 0.5 − 10·0.001875 = 0.48125.
        assert!(q.drop_probability() < 0.48);
    }

    #[test]
    fn no_drops_below_half_target_with_p_under_0_2() {
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams { max_burst: Duration(Dur::ZERO), ..PieParams::default() });
        q.st.p = 0.19;
        // qdelay 5 ms < 7.5 ms: p falls, but while it is < 0.2 and old delay is low nothing drops.
        let v = hold(&mut q, 0, 2000, 5, 50, &mut rng, &mut drops);
        assert!(v.iter().all(|v| *v == Verdict::Enqueued));
        // The same p with the previous delay at target does drop.
        let mut q = pie(PieParams { max_burst: Duration(Dur::ZERO), alpha: 0.0, beta: 0.0, ..PieParams::default() });
        q.st.p = 0.19;
        let v = hold(&mut q, 0, 2000, 15, 50, &mut rng, &mut drops);
        assert!(v.iter().filter(|v| matches!(v, Verdict::Dropped(_))).count() > 200);
    }

    #[test]
    fn queue_of_two_packets_is_never_early_dropped() {
        for variant in [PieVariant::Rfc8033, PieVariant::Ns3] {
            let (mut rng, mut drops) = io();
            let mut q = pie(PieParams { variant, max_burst: Duration(Dur::ZERO), ..PieParams::default() });
            q.st.p = 1.0;
            q.st.qdelay_old = 1.0;
            q.st.burst_state = BurstState::InBurst; // ns-3: no re-arming of the allowance
            q.st.next_update_at = Time::NEVER; // freeze p
            assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
            assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
            assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Enqueued, "{variant:?}");
            assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Early), "{variant:?}");
        }
    }

    #[test]
    fn ecn_marks_while_p_is_low_and_drops_above() {
        let (mut rng, mut drops) = io();
        let ect = Packet { ecn: Ecn::Ect, ..DATA };
        let mut q = pie(PieParams { ecn: true, max_burst: Duration(Dur::ZERO), ..PieParams::default() });
        q.st.next_update_at = Time::NEVER;
        q.st.qdelay_old = 1.0;
        for _ in 0..3 {
            q.fifo.push(DATA, Time(0));
        }
        q.st.p = 0.1; // exactly the threshold: the RFC variant marks (p ≤ 10 %)
        let v: Vec<_> = (0..200).map(|_| q.enqueue(ect, Time(0), &mut rng, &mut drops)).collect();
        assert!(v.iter().any(|v| *v == Verdict::Marked));
        assert!(!v.iter().any(|v| matches!(v, Verdict::Dropped(_))));
        assert_eq!(q.stats().marks as usize, v.iter().filter(|v| **v == Verdict::Marked).count());
        q.st.p = 0.5;
        let v: Vec<_> = (0..200).map(|_| q.enqueue(ect, Time(0), &mut rng, &mut drops)).collect();
        assert!(v.iter().any(|v| matches!(v, Verdict::Dropped(DropKind::Early))));
        assert!(!v.iter().any(|v| *v == Verdict::Marked));
    }

    #[test]
    fn derandomization_spaces_drops() {
        // With p = 0.1 the accumulated probability reaches 0.85 only at the 9th arrival.
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams { derandomize: true, max_burst: Duration(Dur::ZERO), ..PieParams::default() });
        q.st.next_update_at = Time::NEVER;
        q.st.qdelay_old = 1.0;
        q.st.p = 0.1;
        for _ in 0..3 {
            q.fifo.push(DATA, Time(0));
        }
        let v: Vec<_> = (0..8).map(|_| q.enqueue(DATA, Time(0), &mut rng, &mut drops)).collect();
        assert!(v.iter().all(|v| *v == Verdict::Enqueued));
        // Without derandomization the same p drops from the first arrivals on.
        let mut r = pie(PieParams { max_burst: Duration(Dur::ZERO), ..PieParams::default() });
        r.st.next_update_at = Time::NEVER;
        r.st.qdelay_old = 1.0;
        r.st.p = 0.1;
        for _ in 0..3 {
            r.fifo.push(DATA, Time(0));
        }
        let n = (0..200).filter(|_| matches!(r.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(_))).count();
        assert!(n > 5, "{n}");
    }

    #[test]
    fn dq_rate_estimator_measures_the_departure_rate() {
        // 20 KB queued, one 1000 B packet leaves every 1 ms: 1e6 B/s; delay = bytes / rate.
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams { delay_estimator: DelayEstimator::DqRate, ..PieParams::default() });
        for _ in 0..40 {
            q.enqueue(DATA, Time(0), &mut rng, &mut drops);
        }
        for t in 1..=20 {
            q.dequeue(Time(t * MS), &mut drops);
        }
        // The cycle started at the 1 ms dequeue (39 KB left) and closed at the 17th packet (17 ms).
        assert!((q.st.dq.avg_rate - 17_000.0 / 0.016).abs() < 1e-6, "{}", q.st.dq.avg_rate);
        q.dequeue(Time(30 * MS), &mut drops); // the update at 30 ms sees the 20 KB left
        let want = 20_000.0 / (17_000.0 / 0.016);
        assert!((q.queue_delay() - want).abs() < 1e-9, "{} vs {want}", q.queue_delay());
    }

    #[test]
    fn stats_invariants_hold() {
        let (mut rng, mut drops) = io();
        let mut q = pie(PieParams { limit: Limit::Packets(60), ..PieParams::default() });
        let mut t = 0u64;
        for i in 0..20_000u64 {
            t += 400_000; // 2.5 packets per ms in, 2 per ms out: overload
            let v = q.enqueue(Packet { seq: i as u32, ..DATA }, Time(t), &mut rng, &mut drops);
            if v == Verdict::Marked {
                panic!("no ECN configured");
            }
            if i % 5 != 0 {
                q.dequeue(Time(t), &mut drops);
            }
        }
        let s = *q.stats();
        assert!(s.drops_early > 0 && s.drops_overflow > 0, "{s:?}");
        assert_eq!(s.arrivals, s.enqueues + s.drops_early + s.drops_overflow);
        assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64);
        assert_eq!(s.drops_forced, 0);
        assert_eq!(q.len_bytes(), 1000 * q.len_packets() as u64);
    }

    #[test]
    fn bad_keys_name_the_key_and_what_is_allowed() {
        let bad = |p: PieParams| p.validate("queue").err().unwrap().to_string();
        assert_eq!(bad(PieParams { alpha: -1.0, ..PieParams::default() }), "queue.alpha: must be a finite number >= 0 (per second), got -1");
        assert_eq!(bad(PieParams { beta: f64::NAN, ..PieParams::default() }), "queue.beta: must be a finite number >= 0 (per second), got NaN");
        assert_eq!(bad(PieParams { t_update: Duration(Dur::ZERO), ..PieParams::default() }), "queue.t_update: must be a positive duration, got 0");
        assert_eq!(bad(PieParams { target: Duration(Dur::ZERO), ..PieParams::default() }), "queue.target: must be a positive duration, got 0");
        assert_eq!(bad(PieParams { dq_threshold: Bytes(0), ..PieParams::default() }), "queue.dq_threshold: must be at least 1 byte, got 0");
        assert_eq!(bad(PieParams { mean_pkt_size: Bytes(0), ..PieParams::default() }), "queue.mean_pkt_size: must be in 1B..=65535B (the largest IP packet), got 0B");
        assert_eq!(bad(PieParams { mark_ecn_threshold: 1.5, ..PieParams::default() }), "queue.mark_ecn_threshold: must be a probability in [0, 1], got 1.5");
    }
}
