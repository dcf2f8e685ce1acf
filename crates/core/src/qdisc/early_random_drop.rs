//! Early Random Drop (Hashem 1989; Parris 2001 §III.2.1, spec `seed000-cbt-algorithms.md` §2.1
//! background variants).
//!
//! If the *instantaneous* queue (waiting packets, the arrival excluded) exceeds a fixed
//! `threshold`, each arrival is dropped with a fixed probability `drop_p`; otherwise it is queued.
//! Drop-tail applies when the buffer is full. There is no average and no drop spacing: the
//! dissertation contrasts it with RED on exactly these two points.

use rand::Rng as _;
use serde::{Deserialize, Serialize};
use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::Packet;
use crate::scenario::units::Limit;

/// Scenario keys of `kind = "early-random-drop"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct EarlyRandomDropParams {
    /// Buffer limit: packets, bytes, or `"none"`. Default 100 packets.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Drop early while more than this many packets wait. Default 50.
    #[serde(default = "default_threshold")]
    pub threshold: u32,
    /// Probability of dropping an arrival above the threshold, in (0, 1]. Default 0.02.
    #[serde(default = "default_drop_p")]
    pub drop_p: f64,
}

fn default_limit() -> Limit {
    Limit::Packets(100)
}
fn default_threshold() -> u32 {
    50
}
fn default_drop_p() -> f64 {
    0.02
}

impl EarlyRandomDropParams {
    /// Checks the parameters.
    pub fn validate(&self, path: &str) -> ConfigResult<EarlyRandomDrop> {
        if !(self.drop_p > 0.0 && self.drop_p <= 1.0) {
            return Err(ConfigError::new(format!("{path}.drop_p"), format!("must be in (0, 1], got {}", self.drop_p)));
        }
        if let Limit::Packets(n) = self.limit {
            if self.threshold as u64 >= n {
                return Err(ConfigError::new(
                    format!("{path}.threshold"),
                    format!("must be below limit ({n} packets), got {}", self.threshold),
                ));
            }
        }
        Ok(EarlyRandomDrop { params: self.clone(), fifo: Fifo::new(self.limit), stats: QdiscStats::default() })
    }
}

/// A FIFO with probabilistic drops above a fixed instantaneous threshold.
pub struct EarlyRandomDrop {
    params: EarlyRandomDropParams,
    fifo: Fifo,
    stats: QdiscStats,
}

impl Qdisc for EarlyRandomDrop {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        let kind = if !self.fifo.admits(self.params.limit, pkt.size) {
            Some(DropKind::Overflow)
        } else if self.fifo.len() > self.params.threshold as usize && rng.gen::<f64>() < self.params.drop_p {
            Some(DropKind::Early)
        } else {
            None
        };
        if let Some(kind) = kind {
            self.stats.count_drop(kind);
            return Verdict::Dropped(kind);
        }
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        Verdict::Enqueued
    }

    super::fifo::plain_fifo_dequeue_and_accessors!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    const DATA: Packet = Packet { size: 1000, ..Packet::new(PacketKind::Udp, 0) };

    fn queue(text: &str) -> EarlyRandomDrop {
        toml::from_str::<EarlyRandomDropParams>(text).unwrap().validate("queue").unwrap()
    }

    #[test]
    fn no_drop_at_or_below_the_threshold() {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = queue("limit = 100\nthreshold = 10\ndrop_p = 1.0");
        for _ in 0..11 {
            assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        // 11 waiting > 10: with drop_p = 1 every further arrival is an early drop
        assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Early));
        q.dequeue(Time(1), &mut drops);
        assert_eq!(q.enqueue(DATA, Time(1), &mut rng, &mut drops), Verdict::Enqueued, "10 waiting: not above");
    }

    #[test]
    fn drop_rate_above_the_threshold_is_drop_p() {
        let (mut rng, mut drops) = (stream(4, StreamId::Queue(0)), DropBuf::new());
        let mut q = queue("limit = 1000\nthreshold = 5\ndrop_p = 0.2");
        for _ in 0..6 {
            q.enqueue(DATA, Time(0), &mut rng, &mut drops);
        }
        let mut dropped = 0;
        for _ in 0..50_000 {
            match q.enqueue(DATA, Time(0), &mut rng, &mut drops) {
                Verdict::Dropped(DropKind::Early) => dropped += 1,
                _ => {
                    q.dequeue(Time(0), &mut drops);
                }
            }
        }
        // binomial sd = √(50000·0.2·0.8) ≈ 89; 5 sd
        assert!((dropped as i64 - 10_000).abs() < 450, "{dropped}");
    }

    #[test]
    fn full_buffer_is_drop_tail() {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = queue("limit = 3\nthreshold = 2\ndrop_p = 0.000001");
        for _ in 0..3 {
            q.enqueue(DATA, Time(0), &mut rng, &mut drops);
        }
        assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
        assert_eq!(q.stats().drops_overflow, 1);
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let err = |t: &str| toml::from_str::<EarlyRandomDropParams>(t).unwrap().validate("queue").err().unwrap().path;
        assert_eq!(err("drop_p = 0"), "queue.drop_p");
        assert_eq!(err("drop_p = 1.5"), "queue.drop_p");
        assert_eq!(err("limit = 10\nthreshold = 10"), "queue.threshold");
    }
}
