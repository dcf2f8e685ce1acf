//! A pcap writer for the bottleneck: nanosecond-resolution pcap (magic 0xa1b23c4d), link type
//! RAW (101, IPv4), headers only. Flow i is 10.1.x.y → 10.2.x.y (x.y = i+1), TCP port 5000+…
//! Sequence numbers are bytes, as Wireshark expects: segment × MSS, less the bytes that earlier
//! short segments did not carry. The simulator numbers segments, and a flow sending several
//! transfers (HTTP replies, each ending in a short segment) would otherwise leave a byte gap after
//! every reply; the writer learns each flow's short segments as it captures them.
//!
//! Lengths agree with sequence numbers: a TCP segment's IP total length is
//! 20 (IP) + TCP header + payload, so Wireshark's segment length (IP length − IP header − TCP
//! header) is exactly the payload by which the next segment's sequence number advances. The wire
//! size the simulation accounts (`pkt.size` = payload + `header_bytes`) is kept when its header
//! part can be written as IP + TCP with options: `header_bytes` − 20 a multiple of 4 between 20 and
//! 60 (the default 52 gives a 32-byte TCP header, as with timestamps; the options are NOPs). Any
//! other `header_bytes` (say one counting a link-layer header) is written as a bare 40-byte IP+TCP
//! header, so the frame is shorter than the simulated wire size.

use std::collections::HashMap;
use std::io::{self, Write};

use crate::engine::Time;
use crate::packet::{Packet, PacketKind, FLAG_CWR, FLAG_ECE, UDP_HEADER_BYTES};

/// Writes captured packets to `W`.
pub struct PcapWriter<W: Write> {
    out: W,
    /// First write error, reported when the run ends.
    pub error: Option<io::Error>,
    /// Per flow, its short data segments seen so far in segment order, each with the bytes that
    /// it and the earlier short segments fell short of the MSS by (module doc).
    short: HashMap<u32, Vec<ShortSegment>>,
}

/// A data segment that carried fewer than MSS bytes.
struct ShortSegment {
    seq: u32,
    /// MSS − payload.
    missing: u64,
    /// `missing` summed over this and every earlier short segment of the flow.
    through: u64,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the global header.
    pub fn new(mut out: W) -> PcapWriter<W> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes());
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes());
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&65_535u32.to_le_bytes());
        h.extend_from_slice(&101u32.to_le_bytes());
        let error = out.write_all(&h).err();
        PcapWriter { out, error, short: HashMap::new() }
    }

    /// Notes a data segment shorter than the MSS (once per segment, retransmissions ignored).
    fn learn_short(&mut self, pkt: &Packet, mss: u32) {
        let missing = u64::from(mss.saturating_sub(u32::from(pkt.payload)));
        if pkt.kind != PacketKind::TcpData || missing == 0 {
            return;
        }
        let list = self.short.entry(pkt.flow).or_default();
        let Err(at) = list.binary_search_by_key(&pkt.seq, |s| s.seq) else { return };
        // Usually appended; a short segment first captured after a later one (its first copy
        // dropped before the bottleneck) shifts the cumulative counts after it.
        list.insert(at, ShortSegment { seq: pkt.seq, missing, through: 0 });
        let mut through = if at == 0 { 0 } else { list[at - 1].through };
        for s in &mut list[at..] {
            through += s.missing;
            s.through = through;
        }
    }

    /// Byte sequence number of the start of segment `seg` of `flow`.
    fn byte_seq(&self, flow: u32, seg: u32, mss: u32) -> u32 {
        let missing_before = self.short.get(&flow).map_or(0, |list| {
            let n = list.partition_point(|s| s.seq < seg);
            if n == 0 { 0 } else { list[n - 1].through }
        });
        (u64::from(seg) * u64::from(mss)).wrapping_sub(missing_before) as u32
    }

    /// Records `pkt` at `now`. `mss` converts segment numbers to byte sequence numbers.
    pub fn capture(&mut self, now: Time, pkt: &Packet, mss: u32) {
        if self.error.is_some() {
            return;
        }
        self.learn_short(pkt, mss);
        let mut buf = [0u8; 16 + 20 + MAX_TCP_HEADER];
        let (l4, ip_len) = lengths(pkt);
        let cap = 20 + l4;
        buf[0..4].copy_from_slice(&((now.0 / 1_000_000_000) as u32).to_le_bytes());
        buf[4..8].copy_from_slice(&((now.0 % 1_000_000_000) as u32).to_le_bytes());
        buf[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        buf[12..16].copy_from_slice(&ip_len.to_le_bytes());
        let ip = &mut buf[16..];
        let id = pkt.flow + 1;
        let (host_a, host_b) = ([10, 1, (id >> 8) as u8, id as u8], [10, 2, (id >> 8) as u8, id as u8]);
        let (src, dst) = if pkt.is_feedback() { (host_b, host_a) } else { (host_a, host_b) };
        ip[0] = 0x45;
        ip[1] = pkt.ecn.bits();
        ip[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
        ip[8] = 64;
        ip[9] = if is_udp(pkt) { 17 } else { 6 };
        ip[12..16].copy_from_slice(&src);
        ip[16..20].copy_from_slice(&dst);
        let sum = checksum(&ip[0..20]);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        let port = (5000 + (pkt.flow % 60_000)) as u16;
        let (sport, dport) = if pkt.is_feedback() { (80, port) } else { (port, 80) };
        let t = &mut ip[20..];
        t[0..2].copy_from_slice(&sport.to_be_bytes());
        t[2..4].copy_from_slice(&dport.to_be_bytes());
        if is_udp(pkt) {
            t[4..6].copy_from_slice(&((ip_len - 20) as u16).to_be_bytes());
        } else {
            // ACKs carry their TSval in `seq`; the reverse stream sends no data, so its sequence is 0.
            let seq = self.byte_seq(pkt.flow, if pkt.kind == PacketKind::TcpAck { 0 } else { pkt.seq }, mss);
            // Data segments use `ack` for the RTT hint; the reverse stream's sequence is 0.
            let ack = if pkt.kind == PacketKind::TcpAck { self.byte_seq(pkt.flow, pkt.ack, mss) } else { 0 };
            t[4..8].copy_from_slice(&seq.to_be_bytes());
            t[8..12].copy_from_slice(&ack.to_be_bytes());
            t[12] = ((l4 / 4) as u8) << 4;
            t[20..l4].fill(1); // NOP options: the header bytes beyond 40 that the scenario counts
            let mut flags = 0x10; // ACK
            if pkt.has(FLAG_ECE) {
                flags |= 0x40;
            }
            if pkt.has(FLAG_CWR) {
                flags |= 0x80;
            }
            if pkt.kind == PacketKind::TcpData {
                flags |= 0x08; // PSH
            }
            t[13] = flags;
            t[14..16].copy_from_slice(&65_535u16.to_be_bytes());
        }
        if let Err(e) = self.out.write_all(&buf[..16 + cap]) {
            self.error = Some(e);
        }
    }

    /// Writes the first `snaplen` bytes of a real IP packet captured at `now` (the live router's
    /// packets, which carry their own headers).
    pub fn capture_bytes(&mut self, now: Time, bytes: &[u8], snaplen: usize) {
        if self.error.is_some() {
            return;
        }
        let cap = bytes.len().min(snaplen);
        let mut rec = [0u8; 16];
        rec[0..4].copy_from_slice(&((now.0 / 1_000_000_000) as u32).to_le_bytes());
        rec[4..8].copy_from_slice(&((now.0 % 1_000_000_000) as u32).to_le_bytes());
        rec[8..12].copy_from_slice(&(cap as u32).to_le_bytes());
        rec[12..16].copy_from_slice(&(bytes.len() as u32).to_le_bytes());
        if let Err(e) = self.out.write_all(&rec).and_then(|()| self.out.write_all(&bytes[..cap])) {
            self.error = Some(e);
        }
    }

    /// Flushes and returns the first error, if any.
    pub fn finish(mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.out.flush()
    }
}

/// Longest TCP header (data offset 15 words).
const MAX_TCP_HEADER: usize = 60;

/// (transport header bytes, IP total length) of `pkt` as written; module doc.
/// UDP on the wire: plain datagrams and TFRC (RFC 5348 runs over UDP).
fn is_udp(pkt: &Packet) -> bool {
    matches!(pkt.kind, PacketKind::Udp | PacketKind::TfrcData | PacketKind::TfrcFeedback)
}

fn lengths(pkt: &Packet) -> (usize, u32) {
    if is_udp(pkt) {
        return (8, pkt.size.clamp(UDP_HEADER_BYTES as u32, 65_535));
    }
    let payload = if pkt.kind == PacketKind::TcpData { u32::from(pkt.payload) } else { 0 };
    let tcp = match pkt.size.checked_sub(payload + 20) {
        Some(h) if (20..=MAX_TCP_HEADER as u32).contains(&h) && h % 4 == 0 => h as usize,
        _ => 20,
    };
    // `mss` ≤ 65 000, so this fits the 16-bit field except for absurd header sizes.
    (tcp, (20 + tcp as u32 + payload).min(65_535))
}

fn checksum(h: &[u8]) -> u16 {
    let mut s: u32 = h.chunks(2).map(|c| u16::from_be_bytes([c[0], c[1]]) as u32).sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    !(s as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_header_checksum_verifies_to_zero() {
        let mut w = PcapWriter::new(Vec::new());
        let pkt = Packet { size: 1500, seq: 3, ..Packet::new(PacketKind::TcpData, 7) };
        w.capture(Time(1_500_000_000), &pkt, 1448);
        let bytes = w.out.clone();
        assert_eq!(bytes.len(), 24 + 16 + 40);
        let ip = &bytes[40..60];
        assert_eq!(checksum(ip), 0);
        assert_eq!(u32::from_be_bytes(bytes[64..68].try_into().unwrap()), 3 * 1448);
        assert_eq!(u32::from_le_bytes(bytes[24..28].try_into().unwrap()), 1); // seconds
        assert_eq!(u32::from_le_bytes(bytes[28..32].try_into().unwrap()), 500_000_000);
    }

    /// (seq, IP total length, TCP header bytes) of every captured record.
    fn tcp_records(bytes: &[u8]) -> Vec<(u32, u32, u32)> {
        let mut out = Vec::new();
        let mut at = 24;
        while at < bytes.len() {
            let cap = u32::from_le_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
            let ip = &bytes[at + 16..at + 16 + cap];
            let ip_len = u16::from_be_bytes([ip[2], ip[3]]) as u32;
            let seq = u32::from_be_bytes(ip[24..28].try_into().unwrap());
            out.push((seq, ip_len, (ip[32] >> 4) as u32 * 4));
            at += 16 + cap;
        }
        out
    }

    #[test]
    fn default_headers_data_segments_seq_advances_by_ip_payload() {
        // Defaults: mss 1448, header_bytes 52 → 1500-byte packets; a short last segment of 700.
        let mut w = PcapWriter::new(Vec::new());
        for (seq, payload) in [(0, 1448u16), (1, 1448), (2, 700)] {
            let pkt = Packet { size: u32::from(payload) + 52, seq, payload, ..Packet::new(PacketKind::TcpData, 0) };
            w.capture(Time(seq as u64), &pkt, 1448);
        }
        let recs = tcp_records(&w.out);
        assert_eq!(recs[0].1, 1500, "the simulated wire size is kept");
        for pair in recs.windows(2) {
            let (seq, ip_len, tcp_hdr) = pair[0];
            assert_eq!(pair[1].0, seq + (ip_len - 20 - tcp_hdr), "{recs:?}");
        }
        assert_eq!(recs[2].1 - 20 - recs[2].2, 700);
    }

    #[test]
    fn transfers_ending_in_short_segments_leave_no_byte_gap() {
        // Two replies on one connection (HTTP): 1448 + 700, then 1448 + 300; the second reply's
        // segments follow the first's last byte, and a retransmission keeps its first number.
        let mut w = PcapWriter::new(Vec::new());
        let order = [(0, 1448u16), (1, 700), (2, 1448), (3, 300), (4, 1448), (2, 1448)];
        for (i, (seq, payload)) in order.into_iter().enumerate() {
            let pkt = Packet { size: u32::from(payload) + 52, seq, payload, ..Packet::new(PacketKind::TcpData, 0) };
            w.capture(Time(i as u64), &pkt, 1448);
        }
        let recs = tcp_records(&w.out);
        let seqs: Vec<u32> = recs.iter().map(|r| r.0).collect();
        assert_eq!(seqs, [0, 1448, 2148, 3596, 3896, 2148]);
        for pair in recs[..5].windows(2) {
            let (seq, ip_len, tcp_hdr) = pair[0];
            assert_eq!(pair[1].0, seq + (ip_len - 20 - tcp_hdr), "{recs:?}");
        }
    }

    #[test]
    fn a_short_segment_seen_late_shifts_the_segments_after_it() {
        let mut w = PcapWriter::new(Vec::new());
        for (i, (seq, payload)) in [(3, 300u16), (1, 700), (4, 1448)].into_iter().enumerate() {
            let pkt = Packet { size: u32::from(payload) + 52, seq, payload, ..Packet::new(PacketKind::TcpData, 0) };
            w.capture(Time(i as u64), &pkt, 1448);
        }
        let seqs: Vec<u32> = tcp_records(&w.out).iter().map(|r| r.0).collect();
        // segment 4 starts after 1448 + 700 + 1448 + 300 bytes
        assert_eq!(seqs, [3 * 1448, 1448, 3896]);
    }

    #[test]
    fn unrepresentable_header_bytes_pure_ack_carries_no_payload() {
        // 54 header bytes (an Ethernet header counted) cannot be IP + TCP options: bare headers.
        let mut w = PcapWriter::new(Vec::new());
        let data = Packet { size: 1448 + 54, payload: 1448, ..Packet::new(PacketKind::TcpData, 0) };
        let ack = Packet { size: 52, ack: 1, ..Packet::new(PacketKind::TcpAck, 0) };
        w.capture(Time(0), &data, 1448);
        w.capture(Time(1), &ack, 1448);
        let recs = tcp_records(&w.out);
        assert_eq!((recs[0].1, recs[0].2), (1448 + 40, 20));
        assert_eq!(recs[1].1 - 20 - recs[1].2, 0, "a pure ACK has no payload: {recs:?}");
    }
}
