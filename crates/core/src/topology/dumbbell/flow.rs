//! A flow as the world holds it: its endpoints (TCP, UDP, multimedia or TFRC), its access
//! links and its counters.

use super::access::Access;
use super::counters::FlowCounters;
use crate::engine::{Rng, Time};
use crate::metrics::frame_decoder::FrameDecoder;
use crate::scenario::schema::Direction;
use crate::topology::edge_rtt::EdgeRttMonitor;
use crate::traffic::mpeg::MpegSource;
use crate::traffic::proshare::ProshareSource;
use crate::traffic::udp::UdpSource;
use crate::transport::tcp::{TcpReceiver, TcpSender};
use crate::transport::tfrc::{TfrcReceiver, TfrcSender};

pub(super) struct Flow {
    pub(super) endpoint: Endpoint,
    pub(super) direction: Direction,
    pub(super) sender_side: [Access; 2],   // [towards router, towards host]
    pub(super) receiver_side: [Access; 2], // [towards router, towards host]
    pub(super) active: bool,
    pub(super) rng: Rng,
    pub(super) counters: FlowCounters,
    /// The ingress edge that stamps RTT hints when the flow's `rtt_hint = "edge"`.
    pub(super) edge_rtt: Option<Box<EdgeRttMonitor>>,
}


pub(super) enum Endpoint {
    Tcp { cfg: u16, sender: TcpSender, receiver: TcpReceiver, sender_timer_at: Time, receiver_timer_at: Time },
    Udp { source: UdpSource, delivered_payload: u64 },
    /// A multimedia source; `decoder` (MPEG only) does the receiver's frame accounting.
    Media { source: MediaSource, decoder: Option<FrameDecoder>, delivered_payload: u64 },
    /// TFRC (RFC 5348): its timers ride on `SenderTimer` / `ReceiverTimer` like TCP's.
    Tfrc { sender: TfrcSender, receiver: TfrcReceiver, sender_timer_at: Time, receiver_timer_at: Time, delivered_payload: u64 },
}

/// The multimedia sources.
pub(super) enum MediaSource {
    Mpeg(MpegSource),
    Proshare(ProshareSource),
}

/// Payload a TCP receiver holds out of order (received, not yet delivered); 0 for other flows,
/// whose receivers deliver every arrival at once.
pub(super) fn held(e: &Endpoint, tcp_configs: &[crate::transport::tcp::TcpConfig]) -> u64 {
    match e {
        Endpoint::Tcp { cfg, receiver, .. } => receiver.held_bytes(&tcp_configs[*cfg as usize]),
        Endpoint::Udp { .. } | Endpoint::Media { .. } | Endpoint::Tfrc { .. } => 0,
    }
}

/// Payload delivered to the application, in order.
pub(super) fn delivered(e: &Endpoint) -> u64 {
    match e {
        Endpoint::Tcp { receiver, .. } => receiver.delivered_bytes(),
        Endpoint::Udp { delivered_payload, .. } | Endpoint::Media { delivered_payload, .. } | Endpoint::Tfrc { delivered_payload, .. } => *delivered_payload,
    }
}
