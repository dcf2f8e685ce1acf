//! Random drop on full (Morris 1999 §5.2; spec `seed004-fpq.md` §3.2; the "random drop on full"
//! FIFO variant Parris 2001 discusses, after Mankin 1990 and Lakshman et al.).
//!
//! When the buffer is full, a uniformly chosen packet *already queued* is discarded and the
//! arrival is always queued. Spec §3.2 resolves the ambiguity of whether the arrival is a
//! candidate (some Mankin-style variants include it): Morris says a random packet "in the queue" is
//! discarded, so the arrival is excluded. The packet being transmitted is never a candidate (it has
//! left the queue). In byte mode victims are discarded until the arrival fits; an arrival larger
//! than the whole limit is itself dropped.

use serde::{Deserialize, Serialize};
use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::ConfigResult;
use crate::packet::Packet;
use crate::scenario::units::Limit;
use rand::Rng as _;

/// Scenario keys of `kind = "random-drop"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RandomDropParams {
    /// Packets (integer) or bytes (`"150KB"`). Default 100 packets.
    #[serde(default = "default_limit")]
    pub limit: Limit,
}

fn default_limit() -> Limit {
    Limit::Packets(100)
}

impl RandomDropParams {
    /// Checks the parameters: a random-drop queue needs a finite limit.
    pub fn validate(&self, path: &str) -> ConfigResult<RandomDrop> {
        if self.limit == Limit::Unlimited {
            return Err(crate::error::ConfigError::new(
                format!("{path}.limit"),
                "must be finite for random-drop (it drops only when full); allowed: a packet count or a byte size",
            ));
        }
        Ok(RandomDrop::new(self.limit))
    }
}

/// A FIFO that evicts a random queued packet when full.
pub struct RandomDrop {
    limit: Limit,
    fifo: Fifo,
    stats: QdiscStats,
}

impl RandomDrop {
    /// An empty queue with the given limit.
    pub fn new(limit: Limit) -> RandomDrop {
        RandomDrop { limit, fifo: Fifo::new(limit), stats: QdiscStats::default() }
    }
}

impl Qdisc for RandomDrop {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        if !self.limit.admits(0, 0, pkt.size) {
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        while !self.fifo.admits(self.limit, pkt.size) {
            let victim = rng.gen_range(0..self.fifo.len());
            let v = self.fifo.remove(victim).expect("index below len");
            self.stats.count_drop(DropKind::Overflow);
            drops.push((v, DropKind::Overflow));
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

    #[test]
    fn full_queue_keeps_the_arrival_and_evicts_a_queued_packet() {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = RandomDrop::new(Limit::Packets(3));
        for seq in 0..3 {
            assert_eq!(q.enqueue(Packet { seq, ..DATA }, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        assert!(drops.is_empty());
        assert_eq!(q.enqueue(Packet { seq: 3, ..DATA }, Time(1), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!(drops.len(), 1);
        let victim = drops[0].0.seq;
        assert!(victim < 3, "the arrival is never the victim");
        let left: Vec<u32> = std::iter::from_fn(|| q.dequeue(Time(2), &mut DropBuf::new()).map(|p| p.seq)).collect();
        let expected: Vec<u32> = (0..4).filter(|&s| s != victim).collect();
        assert_eq!(left, expected, "FIFO order of the survivors");
        let st = q.stats();
        assert_eq!((st.arrivals, st.enqueues, st.dequeues, st.drops_overflow), (4, 4, 3, 1));
    }

    #[test]
    fn victims_are_spread_uniformly_over_positions() {
        let (mut rng, mut drops) = (stream(7, StreamId::Queue(0)), DropBuf::new());
        let mut q = RandomDrop::new(Limit::Packets(4));
        let mut hits = [0u32; 4];
        for _ in 0..20_000 {
            while q.len_packets() < 4 {
                let seq = q.len_packets() as u32;
                q.enqueue(Packet { seq, ..DATA }, Time(0), &mut rng, &mut drops);
            }
            q.enqueue(Packet { seq: 99, ..DATA }, Time(0), &mut rng, &mut drops);
            hits[drops.pop().unwrap().0.seq as usize] += 1;
            // restore positions 0..3 for the next round
            while q.dequeue(Time(0), &mut drops).is_some() {}
        }
        for h in hits {
            // 5000 expected per position; 4.5 standard deviations is ±275
            assert!((h as i64 - 5000).abs() < 275, "position hit {h} times of 20000: {hits:?}");
        }
    }

    #[test]
    fn byte_limit_evicts_until_the_arrival_fits() {
        let (mut rng, mut drops) = (stream(3, StreamId::Queue(0)), DropBuf::new());
        let mut q = RandomDrop::new(Limit::Bytes(3000));
        for seq in 0..3 {
            q.enqueue(Packet { seq, ..DATA }, Time(0), &mut rng, &mut drops);
        }
        let big = Packet { size: 2000, seq: 9, ..DATA };
        assert_eq!(q.enqueue(big, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!(drops.len(), 2);
        assert_eq!((q.len_packets(), q.len_bytes()), (2, 3000));
        let huge = Packet { size: 3001, ..DATA };
        assert_eq!(q.enqueue(huge, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
    }
}
