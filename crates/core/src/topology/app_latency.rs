//! Application-level latency of a TCP flow driven by a constant-rate application (`app_rate`).
//!
//! The network one-way delay (`delay_mean_s`) starts when a segment leaves the sender. A listener
//! also waits while the written data queues behind the congestion window, and while a lost segment
//! holds back everything after it. Segment k of an `app_rate` flow is written at t₀ + k·gap (one
//! segment per write, the first at the flow's start, `Dumbbell::app_write`), so its latency is
//! known exactly when the receiver's in-order point passes it: write → in-order delivery.
//! TSQ's quality models (Kumar 2003, spec seed002-tsq.md §3) take a delay; this is the one an
//! application with an unbounded send buffer sees (docs/tsq.md).

use crate::engine::{Dur, Time};
use crate::metrics::Histogram;

/// Write times and write-to-delivery latencies of one `app_rate` flow.
#[derive(Clone, Debug, Default)]
pub struct AppLatency {
    /// The first write (segment 0), once it happened.
    first_write: Option<Time>,
    /// Time between writes.
    gap: Dur,
    /// Segments written so far.
    writes: u64,
    /// Latency of segments delivered in order at or after the warm-up, ns.
    latency: Histogram,
}

impl AppLatency {
    /// The application wrote its next segment at `now`; writes come every `gap`.
    pub fn on_write(&mut self, now: Time, gap: Dur) {
        if self.first_write.is_none() {
            self.first_write = Some(now);
            self.gap = gap;
        }
        debug_assert_eq!(now, self.write_time(self.writes), "writes come every gap from the first");
        self.writes += 1;
    }

    /// The receiver's in-order point moved from `from` to `to` (segment numbers) at `now`:
    /// segments `from..to` reach the application. Recorded when `record` (after the warm-up).
    pub fn on_delivered(&mut self, now: Time, from: u32, to: u32, record: bool) {
        if !record || self.first_write.is_none() {
            return;
        }
        for k in from..to {
            self.latency.record(now.0.saturating_sub(self.write_time(u64::from(k)).0));
        }
    }

    /// When segment `k` was (or will be) written.
    fn write_time(&self, k: u64) -> Time {
        Time(self.first_write.map_or(0, |t| t.0) + k * self.gap.0)
    }

    /// Latencies of the segments delivered after the warm-up.
    pub fn latency(&self) -> &Histogram {
        &self.latency
    }

    /// Segments written but not yet delivered in order when the receiver expects `rcv_nxt`.
    pub fn undelivered(&self, rcv_nxt: u32) -> u64 {
        self.writes.saturating_sub(u64::from(rcv_nxt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn latency_is_delivery_minus_write_time_and_a_hole_holds_back_what_follows() {
        let mut a = AppLatency::default();
        let gap = Dur::from_millis(10);
        for k in 0..4 {
            a.on_write(ms(100 + 10 * k), gap); // segments 0..4 written at 100, 110, 120, 130 ms
        }
        a.on_delivered(ms(160), 0, 1, true); // segment 0: 60 ms
        // segment 1 was lost; 2 and 3 arrive but wait for its retransmission at 400 ms
        a.on_delivered(ms(400), 1, 4, true); // 290, 280, 270 ms
        let h = a.latency();
        assert_eq!(h.count(), 4);
        assert!((h.mean_s() - (0.060 + 0.290 + 0.280 + 0.270) / 4.0).abs() < 1e-12);
        assert_eq!(a.undelivered(4), 0);
        assert_eq!(a.undelivered(1), 3);
    }

    #[test]
    fn nothing_is_recorded_before_the_warm_up_or_before_the_first_write() {
        let mut a = AppLatency::default();
        a.on_delivered(ms(5), 0, 3, true);
        assert_eq!(a.latency().count(), 0);
        a.on_write(ms(0), Dur::from_millis(1));
        a.on_write(ms(1), Dur::from_millis(1));
        a.on_delivered(ms(50), 0, 1, false);
        assert_eq!(a.latency().count(), 0);
        a.on_delivered(ms(60), 1, 2, true);
        assert_eq!(a.latency().count(), 1);
        assert!((a.latency().mean_s() - 0.059).abs() < 1e-12);
    }
}
