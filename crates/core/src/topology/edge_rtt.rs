//! An ingress edge router that writes Lee 2002's RTT hint into a flow's data packets in place of
//! the sender (spec seed001 §2.1.1: "the architecture also allows an ingress router to do it").
//! It sits at the sender's end of the access link, times one first-transmission data segment at a
//! time against the ACK that covers it (Karn: a retransmission passing while timing cancels the
//! sample), and stamps every data packet with the smallest RTT seen, in whole ms (0 before the
//! first sample). Unlike the sender it sees no echoed timestamps, so it samples once per RTT.

use crate::engine::Time;
use crate::packet::{Packet, FLAG_RETRANSMIT};

/// Per-flow state of the edge's RTT measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EdgeRttMonitor {
    /// The segment being timed and when it passed.
    timed: Option<(u32, Time)>,
    /// Smallest sample, ns (`u64::MAX` before the first).
    min_ns: u64,
}

impl Default for EdgeRttMonitor {
    fn default() -> Self {
        EdgeRttMonitor { timed: None, min_ns: u64::MAX }
    }
}

impl EdgeRttMonitor {
    /// A data packet leaving for the network at `now`: time it if possible, stamp the hint.
    pub fn on_data_out(&mut self, pkt: &mut Packet, now: Time) {
        if pkt.has(FLAG_RETRANSMIT) {
            self.timed = None;
        } else if self.timed.is_none() {
            self.timed = Some((pkt.seq, now));
        }
        pkt.set_rtt_hint_ms(self.hint_ms());
    }

    /// An ACK for the flow coming back through the edge at `now`.
    pub fn on_ack_in(&mut self, ack: u32, now: Time) {
        if let Some((seq, sent)) = self.timed {
            if ack > seq {
                self.min_ns = self.min_ns.min(now.saturating_since(sent).0);
                self.timed = None;
            }
        }
    }

    /// The hint: minimum RTT in whole ms (rounded, at least 1), 0 before the first sample.
    pub fn hint_ms(&self) -> u16 {
        if self.min_ns == u64::MAX {
            return 0;
        }
        ((self.min_ns + 500_000) / 1_000_000).clamp(1, u64::from(u16::MAX)) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    fn seg(seq: u32, flags: u8) -> Packet {
        Packet { seq, flags, ..Packet::new(PacketKind::TcpData, 0) }
    }

    #[test]
    fn times_one_segment_and_stamps_the_minimum() {
        let mut m = EdgeRttMonitor::default();
        let mut p = seg(0, 0);
        m.on_data_out(&mut p, Time(0));
        assert_eq!(p.rtt_hint_ms(), 0, "no sample yet");
        let mut q = seg(1, 0);
        m.on_data_out(&mut q, Time(1_000_000)); // not timed: segment 0 is
        m.on_ack_in(1, Time(41_600_000));
        assert_eq!(m.hint_ms(), 42);
        let mut r = seg(2, 0);
        m.on_data_out(&mut r, Time(50_000_000));
        assert_eq!(r.rtt_hint_ms(), 42);
        m.on_ack_in(3, Time(150_000_000)); // a 100 ms sample leaves the minimum
        assert_eq!(m.hint_ms(), 42);
    }

    #[test]
    fn a_retransmission_cancels_the_sample_karn() {
        let mut m = EdgeRttMonitor::default();
        m.on_data_out(&mut seg(0, 0), Time(0));
        m.on_data_out(&mut seg(0, FLAG_RETRANSMIT), Time(1_000_000_000));
        m.on_ack_in(1, Time(1_040_000_000));
        assert_eq!(m.hint_ms(), 0, "the ACK may be for the retransmission: no sample");
    }
}
