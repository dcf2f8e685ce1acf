//! Drop-front on full (Parris 2001 §III.2.1, spec `seed000-cbt-algorithms.md` §2.1 background
//! variants; Lakshman, Neidhardt & Ott 1996).
//!
//! When the buffer is full, the packet at the head of the queue (the oldest waiting, not the one on
//! the wire) is discarded and the arrival is queued. Losses are thereby signalled one queueing
//! delay earlier than with drop-tail. With a byte limit, head packets are discarded until the
//! arrival fits; an arrival larger than the whole limit is itself dropped.

use serde::{Deserialize, Serialize};
use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::Packet;
use crate::scenario::units::Limit;

/// Scenario keys of `kind = "drop-front"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DropFrontParams {
    /// Packets (integer) or bytes (`"150KB"`). Default 100 packets.
    #[serde(default = "default_limit")]
    pub limit: Limit,
}

fn default_limit() -> Limit {
    Limit::Packets(100)
}

impl DropFrontParams {
    /// Checks the parameters: the discipline acts only when full, so the limit must be finite.
    pub fn validate(&self, path: &str) -> ConfigResult<DropFront> {
        if self.limit == Limit::Unlimited {
            return Err(ConfigError::new(
                format!("{path}.limit"),
                "must be finite for drop-front (it drops only when full); allowed: a packet count or a byte size",
            ));
        }
        Ok(DropFront { limit: self.limit, fifo: Fifo::new(self.limit), stats: QdiscStats::default() })
    }
}

/// A FIFO that discards its head packet when full.
pub struct DropFront {
    limit: Limit,
    fifo: Fifo,
    stats: QdiscStats,
}

impl Qdisc for DropFront {
    fn enqueue(&mut self, pkt: Packet, now: Time, _rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        if !self.limit.admits(0, 0, pkt.size) {
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        while !self.fifo.admits(self.limit, pkt.size) {
            let head = self.fifo.pop().expect("a full queue is not empty");
            self.stats.count_drop(DropKind::Overflow);
            drops.push((head, DropKind::Overflow));
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

    fn queue(limit: Limit) -> DropFront {
        DropFrontParams { limit }.validate("queue").unwrap()
    }

    #[test]
    fn full_queue_discards_the_oldest_and_keeps_the_arrival() {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = queue(Limit::Packets(3));
        for seq in 0..5 {
            assert_eq!(q.enqueue(Packet { seq, ..DATA }, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        assert_eq!(drops.iter().map(|(p, _)| p.seq).collect::<Vec<_>>(), vec![0, 1]);
        let left: Vec<u32> = std::iter::from_fn(|| q.dequeue(Time(1), &mut DropBuf::new()).map(|p| p.seq)).collect();
        assert_eq!(left, vec![2, 3, 4]);
        let st = q.stats();
        assert_eq!((st.arrivals, st.enqueues, st.dequeues, st.drops_overflow), (5, 5, 3, 2));
    }

    #[test]
    fn byte_limit_discards_heads_until_the_arrival_fits() {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = queue(Limit::Bytes(3000));
        for seq in 0..3 {
            q.enqueue(Packet { seq, ..DATA }, Time(0), &mut rng, &mut drops);
        }
        q.enqueue(Packet { seq: 9, size: 2500, ..DATA }, Time(0), &mut rng, &mut drops);
        assert_eq!(drops.iter().map(|(p, _)| p.seq).collect::<Vec<_>>(), vec![0, 1, 2]);
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 2500));
        assert_eq!(q.enqueue(Packet { size: 3001, ..DATA }, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
    }

    #[test]
    fn unlimited_is_rejected_naming_the_key() {
        let e = DropFrontParams { limit: Limit::Unlimited }.validate("queue").err().unwrap();
        assert_eq!(e.path, "queue.limit");
    }
}
