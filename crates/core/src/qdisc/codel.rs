//! CoDel, Controlled Delay (RFC 8289): one FIFO whose packets are dropped at dequeue when the
//! standing queue delay has stayed above `target` for an `interval` (the control loop is in
//! `codel_core.rs`). Arrivals are refused only when the buffer is full (`Overflow`).
//!
//! Defaults are RFC 8289's (target 5 ms, interval 100 ms) with Linux's and ns-3's buffer of 1000
//! packets; `variant = "ns3"` reproduces ns-3 3.44's `CoDelQueueDisc` (docs/codel.md).

use serde::{Deserialize, Serialize};

use super::codel_core::{CodelConfig, CodelState, CodelVariant};
use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::Packet;
use crate::scenario::units::{Duration, Limit, SizeOrAuto};

/// Scenario keys of `kind = "codel"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CodelParams {
    /// Acceptable standing queue delay. RFC 8289: 5 ms.
    #[serde(default = "default_target")]
    pub target: Duration,
    /// How long the delay must stay above target before the first drop. RFC 8289: 100 ms.
    #[serde(default = "default_interval")]
    pub interval: Duration,
    /// Buffer: packets or bytes (Linux, ns-3: 1000 packets).
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// No drop while fewer bytes than this wait; `"auto"`: the largest packet seen (RFC) or 1500 B (ns-3).
    #[serde(default)]
    pub min_bytes: SizeOrAuto,
    /// Mark ECN-capable packets CE instead of dropping them.
    #[serde(default)]
    pub ecn: bool,
    /// `rfc8289` or `ns3` (ns-3 3.44 / Linux arithmetic; see `codel_core.rs`).
    #[serde(default)]
    pub variant: CodelVariant,
}

pub(crate) fn default_target() -> Duration {
    Duration(Dur::from_millis(5))
}
pub(crate) fn default_interval() -> Duration {
    Duration(Dur::from_millis(100))
}
fn default_limit() -> Limit {
    Limit::Packets(1000)
}

impl Default for CodelParams {
    fn default() -> Self {
        CodelParams {
            target: default_target(),
            interval: default_interval(),
            limit: default_limit(),
            min_bytes: SizeOrAuto::Auto,
            ecn: false,
            variant: CodelVariant::default(),
        }
    }
}

/// Checks CoDel's target and interval (shared with `fq_codel`) and builds its constants.
pub(crate) fn codel_config(path: &str, target: Duration, interval: Duration, min_bytes: SizeOrAuto, ecn: bool,
                           variant: CodelVariant) -> ConfigResult<CodelConfig> {
    if interval.0 .0 == 0 {
        return Err(ConfigError::new(join(path, "interval"), "must be positive, got 0s"));
    }
    if target.0 .0 == 0 || target.0 >= interval.0 {
        return Err(ConfigError::new(
            join(path, "target"),
            format!("must be positive and shorter than interval ({}), got {}", interval.0, target.0),
        ));
    }
    Ok(CodelConfig { target: target.0, interval: interval.0, min_bytes: min_bytes.bytes(), ecn, variant })
}

impl CodelParams {
    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<Codel> {
        let cfg = codel_config(path, self.target, self.interval, self.min_bytes, self.ecn, self.variant)?;
        Ok(Codel { cfg, state: CodelState::default(), limit: self.limit, fifo: Fifo::new(self.limit), stats: QdiscStats::default() })
    }
}

/// CoDel over one FIFO.
pub struct Codel {
    cfg: CodelConfig,
    state: CodelState,
    limit: Limit,
    fifo: Fifo,
    stats: QdiscStats,
}

impl Codel {
    /// The control loop's state.
    pub fn state(&self) -> &CodelState {
        &self.state
    }
}

impl Qdisc for Codel {
    fn enqueue(&mut self, pkt: Packet, now: Time, _rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        if !self.fifo.admits(self.limit, pkt.size) {
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        self.state.on_enqueue(&pkt);
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
        let pkt = self.state.dequeue(&self.cfg, &mut self.fifo, now, &mut self.stats, drops)?;
        self.stats.dequeues += 1;
        Some(pkt)
    }

    super::fifo::fifo_accessors!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::{Ecn, PacketKind};

    fn pkt(seq: u32) -> Packet {
        Packet { seq, size: 1500, ..Packet::new(PacketKind::Udp, 0) }
    }

    fn ms(t: u64) -> Time {
        Time(t * 1_000_000)
    }

    /// Keeps the queue at `backlog` packets and serves one packet per millisecond for `until_ms`:
    /// a standing queue of `backlog` ms. Returns the times (ms) of CoDel's drops.
    fn standing_queue(q: &mut Codel, backlog: u32, until_ms: u64) -> Vec<u64> {
        let mut rng = stream(1, StreamId::Queue(0));
        let mut drops = DropBuf::new();
        let mut seq = 0;
        let mut dropped_at = Vec::new();
        for t in 0..until_ms {
            while q.len_packets() < backlog as usize {
                q.enqueue(pkt(seq), ms(t), &mut rng, &mut drops);
                seq += 1;
            }
            q.dequeue(ms(t), &mut drops);
            dropped_at.extend(drops.drain(..).map(|_| t));
        }
        dropped_at
    }

    #[test]
    fn no_drop_while_the_standing_delay_stays_below_target() {
        let mut q = CodelParams::default().validate("queue").unwrap();
        assert!(standing_queue(&mut q, 4, 2000).is_empty()); // 4 ms < 5 ms
        assert_eq!(q.stats().drops(), 0);
    }

    #[test]
    fn drops_start_one_interval_after_the_delay_exceeds_target_then_speed_up_as_one_over_root_count() {
        let mut q = CodelParams::default().validate("queue").unwrap();
        let drops = standing_queue(&mut q, 20, 1000);
        // The head of the first full queue has waited 0 ms; from t = 5 ms every packet leaves
        // with ≥ 5 ms sojourn (wait: 20 ms), so first_above = ~105 ms and the first drop follows.
        assert!((100..=130).contains(&drops[0]), "first drop at {} ms", drops[0]);
        // Gaps shrink as interval/√count: 100, 70.7, 57.7, 50 ms ...
        let gaps: Vec<u64> = drops.windows(2).map(|w| w[1] - w[0]).collect();
        for (i, g) in gaps.iter().take(4).enumerate() {
            let expected = 100.0 / ((i + 1) as f64).sqrt();
            assert!((*g as f64 - expected).abs() <= 2.0, "gap {i}: {g} ms, expected {expected:.1}");
        }
        assert!(q.state().dropping());
        // Accounting: every arrival was queued, the drops came from inside.
        let st = q.stats();
        assert_eq!(st.arrivals, st.enqueues);
        assert_eq!(st.enqueues, st.dequeues + st.drops_early + q.len_packets() as u64);
        assert_eq!(st.drops_early as usize, drops.len());
    }

    #[test]
    fn the_dropping_state_ends_when_a_packet_leaves_below_target() {
        let mut q = CodelParams::default().validate("queue").unwrap();
        standing_queue(&mut q, 20, 400);
        assert!(q.state().dropping());
        // Drain: the queue shrinks, sojourn falls under 5 ms, CoDel stops.
        let mut drops = DropBuf::new();
        let mut t = 400;
        while q.len_packets() > 0 {
            q.dequeue(ms(t), &mut drops);
            t += 1;
        }
        assert!(!q.state().dropping());
    }

    #[test]
    fn ecn_capable_packets_are_marked_instead_of_dropped() {
        let mut q = CodelParams { ecn: true, ..CodelParams::default() }.validate("queue").unwrap();
        let mut rng = stream(1, StreamId::Queue(0));
        let mut drops = DropBuf::new();
        let mut marked = 0;
        for t in 0..600u64 {
            while q.len_packets() < 20 {
                q.enqueue(Packet { ecn: Ecn::Ect, ..pkt(0) }, ms(t), &mut rng, &mut drops);
            }
            if q.dequeue(ms(t), &mut drops).is_some_and(|p| p.ecn == Ecn::Ce) {
                marked += 1;
            }
        }
        assert!(drops.is_empty());
        assert!(marked >= 4, "{marked}");
        assert_eq!(q.stats().marks, marked);
    }

    #[test]
    fn both_variants_drop_at_nearly_the_same_times() {
        let rfc = standing_queue(&mut CodelParams::default().validate("q").unwrap(), 20, 3000);
        let ns3 = standing_queue(&mut CodelParams { variant: CodelVariant::Ns3, ..CodelParams::default() }.validate("q").unwrap(), 20, 3000);
        assert!(rfc.len().abs_diff(ns3.len()) * 50 <= rfc.len(), "{} vs {}", rfc.len(), ns3.len());
    }

    #[test]
    fn bad_keys_are_refused_with_the_key_named() {
        let e = CodelParams { target: Duration(Dur::from_millis(200)), ..CodelParams::default() }.validate("queue").err().unwrap();
        assert!(e.to_string().contains("queue.target"), "{e}");
        let e = CodelParams { interval: Duration(Dur(0)), ..CodelParams::default() }.validate("queue").err().unwrap();
        assert!(e.to_string().contains("queue.interval"), "{e}");
    }
}
