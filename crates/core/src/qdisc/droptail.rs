//! Drop-tail FIFO (spec seed000-cbt-algorithms §2.1, Fig. 3.4 of Parris 2001).
//!
//! Accept the arrival if it fits under the limit, else drop it (`Overflow`). The limit is in
//! packets or in bytes; in byte mode a packet is accepted only if the queued bytes plus its own
//! size stay within the limit (Linux `bfifo`, ns-3 `FifoQueueDisc` with a byte limit).

use serde::{Deserialize, Serialize};
use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::ConfigResult;
use crate::packet::Packet;
use crate::scenario::units::Limit;

/// Scenario keys of `kind = "droptail"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DropTailParams {
    /// Packets (integer) or bytes (`"150KB"`). Default 100 packets.
    #[serde(default = "default_limit")]
    pub limit: Limit,
}

fn default_limit() -> Limit {
    Limit::Packets(100)
}

impl Default for DropTailParams {
    fn default() -> Self {
        DropTailParams { limit: default_limit() }
    }
}

impl DropTailParams {
    /// Checks the parameters (the limit's parser already rejects zero and negatives).
    pub fn validate(&self, _path: &str) -> ConfigResult<DropTail> {
        Ok(DropTail::new(self.limit))
    }
}

/// A drop-tail FIFO.
pub struct DropTail {
    limit: Limit,
    fifo: Fifo,
    stats: QdiscStats,
}

impl DropTail {
    /// An empty queue with the given limit.
    pub fn new(limit: Limit) -> DropTail {
        DropTail { limit, fifo: Fifo::new(limit), stats: QdiscStats::default() }
    }

    /// Whether `pkt` would fit now.
    pub fn fits(&self, pkt: &Packet) -> bool {
        self.fifo.admits(self.limit, pkt.size)
    }
}

impl Qdisc for DropTail {
    fn enqueue(&mut self, pkt: Packet, now: Time, _rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        if !self.fits(&pkt) {
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
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
    fn full_packet_queue_drops_the_arrival() {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = DropTail::new(Limit::Packets(2));
        for seq in 0..3 {
            let v = q.enqueue(Packet { seq, ..DATA }, Time(seq as u64), &mut rng, &mut drops);
            assert_eq!(v, if seq < 2 { Verdict::Enqueued } else { Verdict::Dropped(DropKind::Overflow) });
        }
        assert_eq!(q.dequeue(Time(5), &mut drops).map(|p| p.seq), Some(0));
        assert_eq!((q.len_packets(), q.len_bytes()), (1, 1000));
        assert_eq!(q.stats().drops_overflow, 1);
    }

    #[test]
    fn byte_limit_counts_the_arrival_itself() {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = DropTail::new(Limit::Bytes(2500));
        assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        // 2000 + 1000 > 2500
        assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
        let small = Packet { size: 500, ..DATA };
        assert_eq!(q.enqueue(small, Time(0), &mut rng, &mut drops), Verdict::Enqueued);
    }
}
