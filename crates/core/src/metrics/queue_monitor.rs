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
    /// Per class of a class-based discipline: the same integrals for the class's own packets.
    classes: Vec<ClassArea>,
}

/// One class's queued packets and bytes now, and their time integrals after warm-up.
#[derive(Clone, Copy, Debug, Default)]
struct ClassArea {
    len_pkts: u64,
    len_bytes: u64,
    area_pkts: f64,
    area_bytes: f64,
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
            classes: Vec::new(),
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
            for c in &mut self.classes {
                c.area_pkts += c.len_pkts as f64 * dt;
                c.area_bytes += c.len_bytes as f64 * dt;
            }
        }
        self.last_change = now;
        self.len_pkts = pkts as u64;
        self.len_bytes = bytes;
    }

    /// Class `i` now holds `pkts` packets and `bytes` bytes; call right after the `on_change`
    /// of the same event, so the class integrals cover the same intervals as the totals.
    #[inline]
    pub fn set_class_len(&mut self, i: usize, pkts: usize, bytes: u64) {
        if i >= self.classes.len() {
            self.classes.resize(i + 1, ClassArea::default());
        }
        let c = &mut self.classes[i];
        c.len_pkts = pkts as u64;
        c.len_bytes = bytes;
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

    /// Mean queue length (packets, bytes) of class `i` over [warmup, end]; call after `means`.
    pub fn class_means(&self, i: usize, end: Time) -> (f64, f64) {
        let span = (end.0 - self.warmup.0) as f64;
        self.classes.get(i).map_or((0.0, 0.0), |c| (c.area_pkts / span, c.area_bytes / span))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_means_integrate_like_the_total_and_skip_the_warmup() {
        let s = |x: u64| Time(x * 1_000_000_000);
        let mut m = QueueMonitor::new(s(1));
        // 0–2 s: class 0 holds 2 packets (1000 B); 2–4 s: class 0 holds 1, class 1 holds 3.
        m.on_change(s(0), 2, 1000);
        m.set_class_len(0, 2, 1000);
        m.on_change(s(2), 4, 2000);
        m.set_class_len(0, 1, 500);
        m.set_class_len(1, 3, 1500);
        let (p, b) = m.means(s(4));
        // measured over 1–4 s: total (2·1 + 4·2) / 3 packets
        assert!((p - 10.0 / 3.0).abs() < 1e-12 && (b - 5000.0 / 3.0).abs() < 1e-9);
        let (p0, b0) = m.class_means(0, s(4));
        let (p1, b1) = m.class_means(1, s(4));
        assert!((p0 - 4.0 / 3.0).abs() < 1e-12 && (p1 - 2.0).abs() < 1e-12);
        assert!((b0 + b1 - b).abs() < 1e-9);
        assert_eq!(m.class_means(7, s(4)), (0.0, 0.0), "a class never seen held nothing");
    }
}
