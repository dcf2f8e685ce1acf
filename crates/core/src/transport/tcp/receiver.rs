//! TCP receiver. PLACEHOLDER: being written.
use super::TcpConfig;
use crate::engine::Time;
use crate::packet::{FlowId, Packet};

/// Receiver counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpReceiverStats {
    /// Data segments received (duplicates included).
    pub segments_received: u64,
    /// ACKs sent.
    pub acks_sent: u64,
}

/// A TCP receiver.
pub struct TcpReceiver {
    flow: FlowId,
    stats: TcpReceiverStats,
}

impl TcpReceiver {
    /// A receiver for `flow`.
    pub fn new(flow: FlowId, _cfg: &TcpConfig) -> TcpReceiver {
        TcpReceiver { flow, stats: TcpReceiverStats::default() }
    }
    /// Handles an arriving data segment; appends ACKs to `out`.
    pub fn on_data(&mut self, _cfg: &TcpConfig, _now: Time, _pkt: &Packet, _out: &mut Vec<Packet>) {
        let _ = self.flow;
    }
    /// Handles the delayed-ACK timer.
    pub fn on_timer(&mut self, _cfg: &TcpConfig, _now: Time, _out: &mut Vec<Packet>) {}
    /// When `on_timer` should next be called.
    pub fn next_wakeup(&self) -> Option<Time> {
        None
    }
    /// Payload bytes delivered in order to the application (unique, duplicates excluded).
    pub fn delivered_bytes(&self) -> u64 {
        0
    }
    /// Counters.
    pub fn stats(&self) -> &TcpReceiverStats {
        &self.stats
    }
}
