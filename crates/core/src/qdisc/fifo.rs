//! The packet FIFO that single-queue disciplines share: packets in arrival order and their byte
//! count, kept consistent in one place (drop-tail, drop-front, random drop, Early Random Drop,
//! RED, RIO, FRED, CBT and FPQ all queue this way and differ only in what they admit or evict).

use std::collections::VecDeque;

use crate::engine::Time;
use crate::packet::Packet;
use crate::scenario::units::Limit;

/// Packets in arrival order. Invariant: `bytes` is the sum of `size` over the packets.
#[derive(Default)]
pub struct Fifo {
    packets: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    /// An empty FIFO with room reserved for a queue under `limit`.
    pub fn new(limit: Limit) -> Fifo {
        Fifo { packets: VecDeque::with_capacity(limit.initial_capacity()), bytes: 0 }
    }

    /// Whether a packet of `size` bytes fits under `limit` now.
    #[inline]
    pub fn admits(&self, limit: Limit, size: u32) -> bool {
        limit.admits(self.packets.len(), self.bytes, size)
    }

    /// Appends `pkt`, stamping its enqueue time (sojourn is measured from here).
    #[inline]
    pub fn push(&mut self, mut pkt: Packet, now: Time) {
        pkt.enqueued_at = now;
        self.bytes += pkt.size as u64;
        self.packets.push_back(pkt);
    }

    /// Removes the head packet.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        let pkt = self.packets.pop_front()?;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// Removes the packet at `index` (0 = head).
    pub fn remove(&mut self, index: usize) -> Option<Packet> {
        let pkt = self.packets.remove(index)?;
        self.bytes -= pkt.size as u64;
        Some(pkt)
    }

    /// The packet at `index` (0 = head), for disciplines that re-mark a queued packet (AECN's
    /// mark-front). Its size must not change: `bytes` is not updated.
    pub fn get_mut(&mut self, index: usize) -> Option<&mut Packet> {
        self.packets.get_mut(index)
    }

    /// The packets, head first.
    pub fn iter(&self) -> impl Iterator<Item = &Packet> {
        self.packets.iter()
    }

    /// The head packet.
    pub fn front(&self) -> Option<&Packet> {
        self.packets.front()
    }

    /// Packets queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// Whether nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Bytes queued.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The `Qdisc` methods that only read `self.fifo` and `self.stats`, for disciplines built on a
/// [`Fifo`]: `peek`, `len_packets`, `len_bytes`, `stats`.
macro_rules! fifo_accessors {
    () => {
        fn peek(&self) -> Option<&Packet> {
            self.fifo.front()
        }
        fn len_packets(&self) -> usize {
            self.fifo.len()
        }
        fn len_bytes(&self) -> u64 {
            self.fifo.bytes()
        }
        fn stats(&self) -> &QdiscStats {
            &self.stats
        }
    };
}
pub(crate) use fifo_accessors;

/// `fifo_accessors` plus a plain head-of-line `dequeue`, for disciplines that act only on arrival.
macro_rules! plain_fifo_dequeue_and_accessors {
    () => {
        fn dequeue(&mut self, _now: Time, _drops: &mut DropBuf) -> Option<Packet> {
            let pkt = self.fifo.pop()?;
            self.stats.dequeues += 1;
            Some(pkt)
        }
        $crate::qdisc::fifo::fifo_accessors!();
    };
}
pub(crate) use plain_fifo_dequeue_and_accessors;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    #[test]
    fn bytes_follow_the_packets() {
        let mut f = Fifo::new(Limit::Packets(3));
        for (seq, size) in [(0, 100), (1, 200), (2, 300)] {
            assert!(f.admits(Limit::Packets(3), size));
            f.push(Packet { seq, size, ..Packet::new(PacketKind::Udp, 0) }, Time(7));
        }
        assert!(!f.admits(Limit::Packets(3), 1));
        assert_eq!((f.len(), f.bytes()), (3, 600));
        assert_eq!(f.remove(1).map(|p| (p.seq, p.enqueued_at)), Some((1, Time(7))));
        assert_eq!(f.pop().map(|p| p.seq), Some(0));
        assert_eq!((f.len(), f.bytes(), f.front().map(|p| p.seq)), (1, 300, Some(2)));
        assert!(f.pop().is_some() && f.is_empty() && f.bytes() == 0);
    }
}
