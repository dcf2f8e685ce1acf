//! Per-flow counters, and what a delivery or a finished transfer records in them.

use crate::engine::Time;
use crate::metrics::Histogram;
use crate::packet::Packet;
use crate::topology::app_latency::AppLatency;
use crate::traffic::transfers::TransferRecord;
use crate::transport::tcp::{TcpSender, TcpSenderStats};

/// Per-flow counters. Like every reported metric they count from the end of the warm-up.
#[derive(Default)]
pub struct FlowCounters {
    /// Packets the sender transmitted (retransmissions included).
    pub packets_sent: u64,
    /// Data packets that reached the receiver.
    pub packets_delivered: u64,
    /// Packets of this flow dropped at a bottleneck queue or lost on the link (data and ACKs).
    pub drops: u64,
    /// Packets of this flow ECN-marked.
    pub marks: u64,
    /// Of `drops`, the arrivals a discipline refused by its early (probabilistic) decision
    /// (`DropKind::Early`); forced, overflow and in-queue drops are the rest.
    pub drops_early: u64,
    /// Wire bytes of this flow's data that crossed the bottleneck after warm-up.
    pub throughput_bytes: u64,
    /// Wire bytes of the flow's data that arrived at its bottleneck queue (whole run; counted
    /// only with `output.per_flow_timeseries`).
    pub offered_bytes: u64,
    /// Packets of this flow dropped or lost as `drops` counts them, but over the whole run (for
    /// the per-flow drop series, whose bins before the warm-up count too).
    pub drops_whole_run: u64,
    /// Payload delivered in order at the warm-up instant.
    pub delivered_at_warmup: u64,
    /// Payload held out of order by the receiver at the warm-up instant (received, not delivered).
    pub held_at_warmup: u64,
    /// TCP sender counters at the warm-up instant.
    pub sender_at_warmup: TcpSenderStats,
    /// The sender's cwnd integral at the warm-up instant, segment·ns.
    pub cwnd_integral_at_warmup: f64,
    /// ACKs the TCP receiver had sent at the warm-up instant.
    pub acks_at_warmup: u64,
    /// One-way delay of data packets delivered after warm-up.
    pub delay: Histogram,
    /// When a finite transfer was completely acknowledged.
    pub completed_at: Option<Time>,
    /// The transfer in progress (flows with a transfer plan): start, size, timeouts before it.
    pub transfer: (Time, u32, u64),
    /// Data packets sent at or after the warm-up that were dropped at a queue or lost on a link
    /// (charged by send time, whenever the drop happens).
    pub lost_sent_after_warmup: u64,
    /// Data packets sent at or after the warm-up that reached the receiver.
    pub received_sent_after_warmup: u64,
    /// An `app_rate` TCP flow's write-to-delivery latency.
    pub app_latency: AppLatency,
}

#[inline]
pub(super) fn record_delivery(c: &mut FlowCounters, now: Time, pkt: &Packet, warmup: Time) {
    if now >= warmup {
        c.packets_delivered += 1;
        c.delay.record(now.0 - pkt.sent_at.0);
    }
}

/// The record of flow `f`'s transfer that completed at `now`, if it started after `warmup`.
pub(super) fn finished_transfer(f: usize, c: &FlowCounters, sender: &TcpSender, now: Time, warmup: Time) -> Option<TransferRecord> {
    let (start, segments, timeouts_before) = c.transfer;
    (start >= warmup).then(|| TransferRecord {
        flow: f as u32,
        start,
        end: now,
        segments,
        timeouts: (sender.stats().timeouts - timeouts_before) as u32,
    })
}
