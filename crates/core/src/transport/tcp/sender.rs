//! TCP sender. PLACEHOLDER: being written.
use super::TcpConfig;
use crate::engine::Time;
use crate::packet::{FlowId, Packet};

/// Sender counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSenderStats {
    /// Data segments transmitted, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (loss-recovery episodes entered on duplicate ACKs / SACK).
    pub fast_retransmits: u64,
    /// Window reductions caused by ECN echoes.
    pub ecn_reductions: u64,
}

/// A TCP sender.
pub struct TcpSender {
    flow: FlowId,
    stats: TcpSenderStats,
}

impl TcpSender {
    /// A sender for `flow` that has not started.
    pub fn new(flow: FlowId, _cfg: &TcpConfig) -> TcpSender {
        TcpSender { flow, stats: TcpSenderStats::default() }
    }
    /// Starts the connection (no handshake is modelled): sends the initial window.
    pub fn start(&mut self, _cfg: &TcpConfig, _now: Time, _out: &mut Vec<Packet>) {
        let _ = self.flow;
    }
    /// Handles an arriving ACK.
    pub fn on_ack(&mut self, _cfg: &TcpConfig, _now: Time, _ack: &Packet, _out: &mut Vec<Packet>) {}
    /// Handles a timer expiry (retransmission timeout).
    pub fn on_timer(&mut self, _cfg: &TcpConfig, _now: Time, _out: &mut Vec<Packet>) {}
    /// When `on_timer` should next be called.
    pub fn next_wakeup(&self) -> Option<Time> {
        None
    }
    /// Whether a finite transfer has been completely acknowledged.
    pub fn is_complete(&self) -> bool {
        false
    }
    /// Counters.
    pub fn stats(&self) -> &TcpSenderStats {
        &self.stats
    }
    /// Congestion window, segments.
    pub fn cwnd(&self) -> f64 {
        0.0
    }
}
