//! Which scenario flow a real packet belongs to, and the descriptor the discipline sees.
//!
//! Scenario flow `i` runs its connection to port `base + i` on the side that receives its data,
//! so both its data and its ACKs carry that port (as destination one way, source the other) and
//! the router needs no connection tracking. Packets of no scenario flow (ICMP, neighbour
//! discovery, a user's own traffic) get ids after the scenario's flows, one per conversation.

use std::collections::HashMap;

use aqmlab_core::engine::Time;
use aqmlab_core::packet::{Ecn, FlowId, Packet, PacketKind};

use crate::ip_header::{IpInfo, PROTO_TCP};

/// Distinct ids handed to conversations of no scenario flow; later ones share the last.
pub const MAX_OTHER_FLOWS: u32 = 1024;

/// What the scenario says about a flow's packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowTag {
    /// Class tag for class-based disciplines (CBT, CBQ).
    pub class: u8,
    /// TSQ delay hint stamped on data packets (0 = none).
    pub delay_hint: u8,
}

/// Port-to-flow mapping for one run.
pub struct FlowMap {
    base: u16,
    tags: Vec<FlowTag>,
    others: HashMap<(u8, u16, u16), FlowId>,
}

impl FlowMap {
    /// Flows `0..tags.len()` on ports `base..base + tags.len()`.
    pub fn new(base: u16, tags: Vec<FlowTag>) -> FlowMap {
        FlowMap { base, tags, others: HashMap::new() }
    }

    /// Port of scenario flow 0.
    pub fn base_port(&self) -> u16 {
        self.base
    }

    fn scenario_flow(&self, port: u16) -> Option<FlowId> {
        let i = port.checked_sub(self.base)? as usize;
        (i < self.tags.len()).then_some(i as FlowId)
    }

    /// The flow id of a packet.
    pub fn flow_of(&mut self, info: &IpInfo) -> FlowId {
        if let Some(f) = self.scenario_flow(info.dst_port).or_else(|| self.scenario_flow(info.src_port)) {
            return f;
        }
        // Both directions of a conversation share the key: ports in ascending order.
        let key = (info.protocol, info.src_port.min(info.dst_port), info.src_port.max(info.dst_port));
        let first_other = self.tags.len() as FlowId;
        let next = first_other + (self.others.len() as FlowId).min(MAX_OTHER_FLOWS - 1);
        *self.others.entry(key).or_insert(next)
    }

    /// The descriptor of a packet of `len` bytes that arrived at `now`: a TCP segment with
    /// payload is data, one without is an ACK; everything else is presented as a datagram.
    pub fn describe(&mut self, info: &IpInfo, len: usize, now: Time) -> Packet {
        let flow = self.flow_of(info);
        let kind = match (info.protocol, info.payload) {
            (PROTO_TCP, 0) => PacketKind::TcpAck,
            (PROTO_TCP, _) => PacketKind::TcpData,
            _ => PacketKind::Udp,
        };
        let tag = self.tags.get(flow as usize).copied().unwrap_or_default();
        let mut p = Packet::new(kind, flow);
        p.size = len as u32;
        p.payload = info.payload;
        p.ecn = match info.ecn {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1, // the L4S identifier (RFC 9331): DualPI2 classifies on it
            0b10 => Ecn::Ect,
            _ => Ecn::Ce,
        };
        p.class = tag.class;
        p.delay_hint = if kind == PacketKind::TcpAck { 0 } else { tag.delay_hint };
        p.sent_at = now;
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip_header::PROTO_UDP;

    fn info(protocol: u8, src_port: u16, dst_port: u16, payload: u16) -> IpInfo {
        IpInfo { protocol, src_port, dst_port, ecn: 0b10, payload }
    }

    #[test]
    fn data_and_acks_of_a_scenario_flow_share_its_id() {
        let mut m = FlowMap::new(20000, vec![FlowTag::default(), FlowTag { class: 2, delay_hint: 6 }]);
        let data = m.describe(&info(PROTO_TCP, 45123, 20001, 1448), 1500, Time(5));
        let ack = m.describe(&info(PROTO_TCP, 20001, 45123, 0), 52, Time(6));
        assert_eq!((data.flow, data.kind, data.class, data.delay_hint, data.ecn), (1, PacketKind::TcpData, 2, 6, Ecn::Ect));
        assert_eq!((ack.flow, ack.kind, ack.delay_hint, ack.size), (1, PacketKind::TcpAck, 0, 52));
    }

    #[test]
    fn every_ecn_codepoint_reaches_the_discipline() {
        let mut m = FlowMap::new(20000, vec![FlowTag::default()]);
        let got = [0b00, 0b01, 0b10, 0b11].map(|bits| m.describe(&IpInfo { ecn: bits, ..info(PROTO_UDP, 1, 20000, 10) }, 38, Time(0)).ecn);
        assert_eq!(got, [Ecn::NotEct, Ecn::Ect1, Ecn::Ect, Ecn::Ce]);
    }

    #[test]
    fn other_conversations_get_ids_after_the_scenario_flows() {
        let mut m = FlowMap::new(20000, vec![FlowTag::default(); 3]);
        let a = m.flow_of(&info(PROTO_UDP, 5353, 5353, 10));
        let b = m.flow_of(&info(PROTO_TCP, 40000, 22, 10));
        let b_back = m.flow_of(&info(PROTO_TCP, 22, 40000, 0));
        assert_eq!((a, b, b_back), (3, 4, 4));
        assert_eq!(m.flow_of(&info(PROTO_TCP, 20003, 40001, 0)), 5, "port 20003 is past the 3 flows");
        for p in 0..2 * MAX_OTHER_FLOWS as u16 {
            assert!(m.flow_of(&info(PROTO_UDP, 1000 + p, 9, 1)) < 3 + MAX_OTHER_FLOWS);
        }
    }
}
