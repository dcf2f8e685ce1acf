//! Reading and marking the IP header of a packet taken from a TUN device.
//!
//! The router needs only what a queue discipline looks at: the transport protocol and ports (to
//! tell flows apart), the ECN field (RFC 3168 §5) and the transport payload length (to tell a
//! data segment from a pure ACK). IPv4 and IPv6 without extension headers are read; anything
//! else is forwarded as an opaque packet with no ports.

/// IP protocol number of TCP.
pub const PROTO_TCP: u8 = 6;
/// IP protocol number of UDP.
pub const PROTO_UDP: u8 = 17;

/// The ECN codepoint "congestion experienced" (both bits set).
const CE: u8 = 0b11;

/// The header fields the router uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IpInfo {
    /// Transport protocol (6 TCP, 17 UDP, ...); 0 when the packet could not be read.
    pub protocol: u8,
    /// Source port (TCP/UDP, first fragment only), else 0.
    pub src_port: u16,
    /// Destination port (TCP/UDP, first fragment only), else 0.
    pub dst_port: u16,
    /// The two ECN bits of the TOS / traffic-class byte.
    pub ecn: u8,
    /// Transport payload bytes (after the TCP or UDP header); 0 for other protocols.
    pub payload: u16,
}

impl IpInfo {
    const OPAQUE: IpInfo = IpInfo { protocol: 0, src_port: 0, dst_port: 0, ecn: 0, payload: 0 };
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

/// Reads `pkt`. A truncated or unknown packet gives protocol 0 and no ports: it is still
/// forwarded, as the kernel that sent it would expect, but counted as no flow's.
pub fn parse(pkt: &[u8]) -> IpInfo {
    match pkt.first().map(|b| b >> 4) {
        Some(4) => parse_v4(pkt),
        Some(6) => parse_v6(pkt),
        _ => IpInfo::OPAQUE,
    }
}

fn parse_v4(pkt: &[u8]) -> IpInfo {
    let ihl = usize::from(pkt[0] & 0x0f) * 4;
    if pkt.len() < 20 || ihl < 20 || pkt.len() < ihl {
        return IpInfo::OPAQUE;
    }
    let ecn = pkt[1] & CE;
    let total = usize::from(be16(pkt, 2)).min(pkt.len());
    let first_fragment = be16(pkt, 6) & 0x1fff == 0;
    let protocol = pkt[9];
    let info = IpInfo { protocol, ecn, ..IpInfo::OPAQUE };
    if !first_fragment {
        return info;
    }
    transport(info, &pkt[ihl..total.max(ihl)])
}

fn parse_v6(pkt: &[u8]) -> IpInfo {
    if pkt.len() < 40 {
        return IpInfo::OPAQUE;
    }
    let ecn = (pkt[1] >> 4) & CE;
    let total = (40 + usize::from(be16(pkt, 4))).min(pkt.len());
    // Extension headers are not walked: the next header must be the transport itself.
    transport(IpInfo { protocol: pkt[6], ecn, ..IpInfo::OPAQUE }, &pkt[40..total])
}

/// Fills ports and payload length from the transport header `seg`.
fn transport(mut info: IpInfo, seg: &[u8]) -> IpInfo {
    let header = match info.protocol {
        PROTO_TCP if seg.len() >= 20 => usize::from(seg[12] >> 4) * 4,
        PROTO_UDP if seg.len() >= 8 => 8,
        _ => return info,
    };
    info.src_port = be16(seg, 0);
    info.dst_port = be16(seg, 2);
    info.payload = seg.len().saturating_sub(header).min(usize::from(u16::MAX)) as u16;
    info
}

/// Sets the ECN field of an ECN-capable packet to CE (RFC 3168 §5), updating the IPv4 header
/// checksum incrementally (RFC 1624 eqn. 3). Returns false, leaving the packet alone, when the
/// packet is not ECN-capable or not an IP packet: a router must never mark a Not-ECT packet.
pub fn mark_ce(pkt: &mut [u8]) -> bool {
    match pkt.first().map(|b| b >> 4) {
        Some(4) if pkt.len() >= 20 && pkt[1] & CE != 0 => {
            let old = be16(pkt, 0);
            pkt[1] |= CE;
            let new = be16(pkt, 0);
            let sum = be16(pkt, 10);
            // HC' = ~(~HC + ~m + m'), in one's-complement arithmetic.
            let mut acc = u32::from(!sum) + u32::from(!old) + u32::from(new);
            while acc > 0xffff {
                acc = (acc & 0xffff) + (acc >> 16);
            }
            pkt[10..12].copy_from_slice(&(!(acc as u16)).to_be_bytes());
            true
        }
        Some(6) if pkt.len() >= 40 && (pkt[1] >> 4) & CE != 0 => {
            pkt[1] |= CE << 4;
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The IPv4 header checksum computed from scratch (RFC 791).
    fn full_checksum(h: &[u8]) -> u16 {
        let mut acc: u32 = (0..h.len() / 2).filter(|&i| i != 5).map(|i| u32::from(be16(h, 2 * i))).sum();
        while acc > 0xffff {
            acc = (acc & 0xffff) + (acc >> 16);
        }
        !(acc as u16)
    }

    fn v4_tcp(tos: u8, payload: usize) -> Vec<u8> {
        let total = 20 + 20 + payload;
        let mut p = vec![0u8; total];
        p[0] = 0x45;
        p[1] = tos;
        p[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        p[8] = 64;
        p[9] = PROTO_TCP;
        p[12..16].copy_from_slice(&[10, 201, 0, 1]);
        p[16..20].copy_from_slice(&[10, 201, 0, 2]);
        p[20..22].copy_from_slice(&40001u16.to_be_bytes());
        p[22..24].copy_from_slice(&20003u16.to_be_bytes());
        p[32] = 5 << 4;
        let c = full_checksum(&p[..20]);
        p[10..12].copy_from_slice(&c.to_be_bytes());
        p
    }

    #[test]
    fn reads_ports_ecn_and_payload_of_a_tcp_segment() {
        let info = parse(&v4_tcp(0x02, 1448));
        assert_eq!(info, IpInfo { protocol: PROTO_TCP, src_port: 40001, dst_port: 20003, ecn: 0b10, payload: 1448 });
        assert_eq!(parse(&v4_tcp(0, 0)).payload, 0, "a pure ACK has no payload");
    }

    #[test]
    fn later_fragments_and_garbage_have_no_ports() {
        let mut p = v4_tcp(0, 100);
        p[6..8].copy_from_slice(&185u16.to_be_bytes()); // fragment offset 185 · 8 bytes
        assert_eq!((parse(&p).src_port, parse(&p).protocol), (0, PROTO_TCP));
        assert_eq!(parse(&[0x45, 0, 0]), IpInfo::OPAQUE);
        assert_eq!(parse(&[]), IpInfo::OPAQUE);
        assert_eq!(parse(&[0x20; 60]), IpInfo::OPAQUE);
    }

    #[test]
    fn reads_an_ipv6_udp_datagram() {
        let mut p = vec![0u8; 40 + 8 + 100];
        p[0] = 0x60 | 0x0b; // traffic class 0xb1: DSCP bits and ECT(1)
        p[1] = 0x10;
        p[4..6].copy_from_slice(&108u16.to_be_bytes());
        p[6] = PROTO_UDP;
        p[40..42].copy_from_slice(&5000u16.to_be_bytes());
        p[42..44].copy_from_slice(&20000u16.to_be_bytes());
        let info = parse(&p);
        assert_eq!((info.protocol, info.src_port, info.dst_port, info.ecn, info.payload), (PROTO_UDP, 5000, 20000, 0b01, 100));
        assert!(mark_ce(&mut p));
        assert_eq!((parse(&p).ecn, p[0], p[1] & 0x0f), (CE, 0x6b, 0), "only the ECN bits change");
    }

    #[test]
    fn never_marks_a_not_ect_packet() {
        let mut p = v4_tcp(0xb8, 10); // DSCP EF, Not-ECT
        let before = p.clone();
        assert!(!mark_ce(&mut p));
        assert_eq!(p, before);
    }

    proptest! {
        /// The incremental checksum equals a full recomputation, for any header contents.
        #[test]
        fn incremental_checksum_matches_a_full_one(tos in 0u8..=255, words in proptest::collection::vec(any::<u8>(), 20)) {
            let mut p = v4_tcp(tos | 1, 0);
            p[4..10].copy_from_slice(&words[..6]);
            p[9] = PROTO_TCP;
            p[12..20].copy_from_slice(&words[6..14]);
            let c = full_checksum(&p[..20]);
            p[10..12].copy_from_slice(&c.to_be_bytes());
            prop_assert!(mark_ce(&mut p));
            prop_assert_eq!(p[1] & CE, CE);
            prop_assert_eq!(p[1] >> 2, (tos | 1) >> 2, "DSCP kept");
            prop_assert_eq!(be16(&p, 10), full_checksum(&p[..20]));
        }
    }
}
