//! Time averages and sojourn statistics of one queue, accumulated in place.

use super::histogram::Histogram;
use crate::engine::Time;

/// Watches a queue: time-weighted length, sojourn times, busy time of its link. Only the
/// time after `warmup` counts, so averages describe the steady state.
#[derive(Clone, Debug)]
pub struct QueueMonitor {
    warmup: Time,
    last_change: Time,
    len_pkts: u64,
    len_bytes: u64,
    /// ∫ len_pkts dt after warm-up, packet·nanoseconds.
    area_pkts: f64,
    /// ∫ len_bytes dt after warm-up, byte·nanoseconds.
    area_bytes: f64,
    /// Sojourn (enqueue to dequeue from the discipline, i.e. to the start of transmission
    /// unless a transmit ring is modelled) of packets dequeued after warm-up.
    pub sojourn: Histogram,
    /// Nanoseconds the link spent transmitting after warm-up.
    pub busy_ns: u64,
    /// Packets lost to the link's random loss model.
    pub link_losses: u64,
}

impl QueueMonitor {
    /// A monitor of an empty queue.
    pub fn new(warmup: Time) -> QueueMonitor {
        QueueMonitor {
            warmup,
            last_change: Time::ZERO,
            len_pkts: 0,
            len_bytes: 0,
            area_pkts: 0.0,
            area_bytes: 0.0,
            sojourn: Histogram::default(),
            busy_ns: 0,
            link_losses: 0,
        }
    }

    /// The queue now holds `pkts` packets and `bytes` bytes.
    #[inline]
    pub fn on_change(&mut self, now: Time, pkts: usize, bytes: u64) {
        let from = self.last_change.max(self.warmup);
        if now > from {
            let dt = (now.0 - from.0) as f64;
            self.area_pkts += self.len_pkts as f64 * dt;
            self.area_bytes += self.len_bytes as f64 * dt;
        }
        self.last_change = now;
        self.len_pkts = pkts as u64;
        self.len_bytes = bytes;
    }

    /// A packet that entered at `enqueued_at` leaves the discipline at `now`.
    #[inline]
    pub fn on_dequeue(&mut self, now: Time, enqueued_at: Time) {
        if now >= self.warmup {
            self.sojourn.record(now.0 - enqueued_at.0);
        }
    }

    /// The link starts a transmission of `tx_ns` at `now`.
    #[inline]
    pub fn on_transmit(&mut self, now: Time, tx_ns: u64, end: Time) {
        // Busy time is clipped to the measurement window [warmup, end].
        let start = now.max(self.warmup).0;
        let stop = (now.0 + tx_ns).min(end.0);
        if stop > start {
            self.busy_ns += stop - start;
        }
    }

    /// Mean queue length (packets, bytes) over [warmup, end].
    pub fn means(&mut self, end: Time) -> (f64, f64) {
        self.on_change(end, self.len_pkts as usize, self.len_bytes);
        let span = (end.0 - self.warmup.0) as f64;
        (self.area_pkts / span, self.area_bytes / span)
    }
}
