//! The packet: a small `Copy` struct moved by value through queues and links.
//!
//! Sequence numbers count segments, not bytes: segment `k` of a flow carries payload bytes
//! `[k·mss, (k+1)·mss)`. This keeps the TCP scoreboard indexable and the struct small; byte
//! counts are derived from `payload`.

use crate::engine::Time;

/// Smallest wire size of a UDP datagram: IP (20) and UDP (8) headers.
pub const UDP_HEADER_BYTES: u64 = 28;

/// Index of a flow in the scenario (0-based, in `[[flows]]` order after expanding `count`).
pub type FlowId = u32;

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketKind {
    /// A TCP data segment.
    TcpData,
    /// A pure TCP acknowledgement.
    TcpAck,
    /// A UDP datagram.
    Udp,
    /// A TFRC data packet (RFC 5348; layout in [`crate::transport::tfrc`]).
    TfrcData,
    /// A TFRC receiver report (RFC 5348 §6.2; layout in [`crate::transport::tfrc`]).
    TfrcFeedback,
}

/// ECN codepoint of the IP header (RFC 3168 §5; ECT(1) as the L4S identifier, RFC 9331 §4).
///
/// `Ect` is ECT(0), the codepoint every classic ECN sender uses. `Ect1` is ECT(1), which an L4S
/// sender sets (RFC 9331 §4.1) and an L4S-aware queue such as DualPI2 classifies into its
/// low-latency queue together with CE (RFC 9331 §5.1). Every other discipline treats the two ECT
/// codepoints alike ([`Ecn::is_ect`]), as RFC 3168 routers do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport (`00`).
    NotEct,
    /// ECN-capable transport, ECT(0) (`10`).
    Ect,
    /// Congestion experienced (`11`; set by a marking queue).
    Ce,
    /// ECN-capable transport, ECT(1) (`01`): the L4S identifier (RFC 9331 §4).
    Ect1,
}

impl Ecn {
    /// ECT(0) or ECT(1): the sender understands CE marks (RFC 3168 §5), so a marking queue may
    /// mark the packet instead of dropping it.
    #[inline]
    pub fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect | Ecn::Ect1)
    }

    /// ECT(1) or CE: the packets an L4S queue classifies as L4S (RFC 9331 §5.1, RFC 9332 §2.3;
    /// CE is included because an earlier bottleneck may have marked an ECT(1) packet).
    #[inline]
    pub fn is_l4s(self) -> bool {
        matches!(self, Ecn::Ect1 | Ecn::Ce)
    }

    /// The two ECN bits of the IP header (RFC 3168 §5).
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect => 0b10,
            Ecn::Ce => 0b11,
        }
    }
}

/// A SACK block: segments `[start, end)` held by the receiver (RFC 2018).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlock {
    /// First segment of the block.
    pub start: u32,
    /// One past the last segment of the block.
    pub end: u32,
}

/// TCP header flag: ECN-Echo (RFC 3168 §6.1.3).
pub const FLAG_ECE: u8 = 1;
/// TCP header flag: Congestion Window Reduced.
pub const FLAG_CWR: u8 = 2;
/// Not on the wire: this data segment is a retransmission (for metrics only).
pub const FLAG_RETRANSMIT: u8 = 4;
/// Not on the wire: the last segment of a finite transfer.
pub const FLAG_FIN: u8 = 8;

/// Maximum SACK blocks carried on one ACK (three fit beside timestamps in 40 option bytes).
pub const MAX_SACK_BLOCKS: usize = 3;

/// A packet in flight. 64 bytes, one cache line (asserted below).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The flow this packet belongs to (ACKs carry the flow of the data they acknowledge).
    pub flow: FlowId,
    /// Data: segment number. ACK: the receiver's TSval, its clock in whole ms when it sent the ACK
    /// (RFC 7323; read by LEDBAT). UDP: datagram sequence number.
    pub seq: u32,
    /// ACK: the next segment expected (cumulative). TCP data: the sender's RTT hint (see
    /// [`Packet::rtt_hint_ms`]). UDP media: fragment tags (see [`media`]).
    pub ack: u32,
    /// Bytes on the wire, headers included; what queues and links account.
    pub size: u32,
    /// Application payload bytes.
    pub payload: u16,
    /// Data, ACK or UDP.
    pub kind: PacketKind,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// `FLAG_*` bits.
    pub flags: u8,
    /// Traffic class for class-based disciplines (0 unless the scenario assigns one).
    pub class: u8,
    /// Number of valid entries in `sack`.
    pub sack_len: u8,
    /// Application delay hint for delay-sensitive disciplines (Kumar 2003 §3: TSQ's 4-bit
    /// hint 1–16, larger = more delay tolerant); 0 = no hint. Fills the struct's spare byte.
    pub delay_hint: u8,
    /// Data and UDP: when the sender handed this packet to its access link (for one-way delay;
    /// also the TCP timestamp TSval). TCP ACK: the timestamp it echoes (RFC 7323 TSecr), the
    /// `sent_at` of the data segment the receiver's TS.Recent holds.
    pub sent_at: Time,
    /// When the packet entered the queue it is in now (for sojourn time).
    pub enqueued_at: Time,
    /// SACK blocks, most recent first (RFC 2018 §4); only `sack[..sack_len]` is meaningful.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
}

const _: () = assert!(std::mem::size_of::<Packet>() <= 64, "Packet must fit one cache line");

impl Packet {
    /// The RTT hint a TCP data segment carries (Lee 2002 §3.1): the sender's minimum observed
    /// RTT in whole milliseconds, 0 before its first sample (and for every other kind of packet).
    /// WHITE and AECN read it; it rides in the `ack` field, which data segments do not use.
    pub fn rtt_hint_ms(&self) -> u16 {
        if self.kind == PacketKind::TcpData { self.ack.min(u32::from(u16::MAX)) as u16 } else { 0 }
    }

    /// Stamps the RTT hint of a TCP data segment (16 bits, as the thesis's IP-header field).
    pub fn set_rtt_hint_ms(&mut self, hint: u16) {
        debug_assert_eq!(self.kind, PacketKind::TcpData, "only data segments carry a hint");
        self.ack = u32::from(hint);
    }

    /// A blank packet of `kind` for `flow`, with every other field zero.
    pub const fn new(kind: PacketKind, flow: FlowId) -> Packet {
        Packet {
            flow,
            seq: 0,
            ack: 0,
            size: 0,
            payload: 0,
            kind,
            ecn: Ecn::NotEct,
            flags: 0,
            class: 0,
            sack_len: 0,
            delay_hint: 0,
            sent_at: Time::ZERO,
            enqueued_at: Time::ZERO,
            sack: [SackBlock { start: 0, end: 0 }; MAX_SACK_BLOCKS],
        }
    }

    /// Whether this packet travels from receiver to sender (a TCP ACK or a TFRC report).
    pub fn is_feedback(&self) -> bool {
        matches!(self.kind, PacketKind::TcpAck | PacketKind::TfrcFeedback)
    }

    /// Whether flag bit(s) `f` are set.
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..self.sack_len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecn_codepoints_and_classes() {
        // RFC 3168 §5 bits; ECT(1) = 01 is the L4S identifier (RFC 9331 §4).
        let all = [Ecn::NotEct, Ecn::Ect, Ecn::Ce, Ecn::Ect1];
        assert_eq!(all.map(Ecn::bits), [0b00, 0b10, 0b11, 0b01]);
        assert_eq!(all.map(Ecn::is_ect), [false, true, false, true]);
        // RFC 9331 §5.1: the L4S queue takes ECT(1) and CE; the low bit of the field is set.
        assert_eq!(all.map(Ecn::is_l4s), [false, false, true, true]);
        assert!(all.iter().all(|e| e.is_l4s() == (e.bits() & 1 == 1)));
    }
}

/// Fragment tags of the multimedia sources (`kind = "mpeg"` / `"proshare"`), carried in the
/// `ack` field, which UDP datagrams do not otherwise use (the struct stays 64 bytes).
///
/// Layout of `ack`: bits 0–11 fragment index (0-based), bits 12–23 fragment count (1–4095),
/// bits 24–26 [`MediaType`]. `seq` carries the MPEG frame number (the frame's position in the
/// flow's stream, from 0) or, for Proshare, the per-flow datagram sequence number. Every
/// fragment of a frame carries the same `seq`, type and count, and the frame's send time in
/// `sent_at` (the one-way latency timestamp).
pub mod media {
    /// What a multimedia datagram carries.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(u8)]
    pub enum MediaType {
        /// Not a multimedia fragment (plain UDP).
        None = 0,
        /// MPEG intra-coded frame.
        I = 1,
        /// MPEG predicted frame.
        P = 2,
        /// MPEG bidirectionally predicted frame.
        B = 3,
        /// Proshare audio frame.
        Audio = 4,
        /// Proshare video frame.
        Video = 5,
    }

    /// Largest fragment count a tag can hold.
    pub const MAX_FRAGMENTS: u32 = 0xFFF;

    /// Packs a fragment tag into the `ack` field.
    pub const fn pack(ty: MediaType, index: u32, count: u32) -> u32 {
        (index & 0xFFF) | (count & 0xFFF) << 12 | (ty as u32) << 24
    }

    /// Unpacks `(type, fragment index, fragment count)` from an `ack` field.
    pub const fn unpack(ack: u32) -> (MediaType, u32, u32) {
        let ty = match (ack >> 24) & 0x7 {
            1 => MediaType::I,
            2 => MediaType::P,
            3 => MediaType::B,
            4 => MediaType::Audio,
            5 => MediaType::Video,
            _ => MediaType::None,
        };
        (ty, ack & 0xFFF, (ack >> 12) & 0xFFF)
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn tags_round_trip() {
            for (ty, i, n) in [(MediaType::I, 4, 5), (MediaType::B, 0, 1), (MediaType::Video, 1, 2), (MediaType::P, 4094, 4095)] {
                assert_eq!(unpack(pack(ty, i, n)), (ty, i, n));
            }
            assert_eq!(unpack(0).0, MediaType::None);
        }
    }
}
