//! A trace-driven link as Mahimahi's `mm-link` runs one (`[topology.bottleneck] trace`,
//! `reverse_trace`): a packet-delivery-opportunity trace replaces the fixed rate.
//!
//! The trace format is Mahimahi's (Netravali et al., "Mahimahi: Accurate Record-and-Replay for
//! HTTP", USENIX ATC 2015, §3; `mm-link`'s `LinkQueue`): one integer per line, the millisecond at
//! which the link may deliver up to 1504 bytes; lines repeat a millisecond for several
//! opportunities in it, times never decrease, and the trace repeats with the last time as its
//! period. The service follows `LinkQueue::rationalize`:
//!
//! * packets leave the discipline only at an opportunity (so sojourn-based disciplines see the
//!   wait for one), and the opportunity's bytes go to as many packets as they cover;
//! * a packet larger than what is left continues in the following opportunities and is delivered
//!   (all at once) at the one that carries its last byte; the bytes left after it serve the next
//!   packet at that same instant;
//! * bytes of an opportunity nobody uses, and opportunities while the queue is empty, are lost: an
//!   arrival waits for the first opportunity strictly after it (Mahimahi burns those at or before
//!   the arrival's millisecond before enqueueing it).
//!
//! Mahimahi refuses packets above 1504 bytes; here they simply span opportunities.

use crate::engine::Time;

/// Bytes one delivery opportunity carries (Mahimahi's `PACKET_SIZE`, the TUN device's MTU).
pub const OPPORTUNITY_BYTES: u32 = 1504;

const NS_PER_MS: u64 = 1_000_000;

/// A parsed delivery-opportunity trace: one period of opportunity times.
#[derive(Clone, Debug, PartialEq)]
pub struct DeliveryTrace {
    /// Opportunity times within the period, nanoseconds, non-decreasing.
    times: Vec<u64>,
    /// The period (the trace's last time), nanoseconds, > 0.
    period: u64,
}

impl DeliveryTrace {
    /// Parses Mahimahi trace text; the error names the line and what is wrong.
    pub fn parse(text: &str) -> Result<DeliveryTrace, String> {
        let mut times = Vec::new();
        let mut last = 0u64;
        for (i, line) in text.lines().enumerate() {
            let field = line.trim();
            let ms: u64 = field.parse().map_err(|_| {
                format!("line {}: {:?} is not a whole number of milliseconds (one opportunity per line)", i + 1, field)
            })?;
            if ms < last {
                return Err(format!("line {}: {ms} is before the previous line's {last}: times must not decrease", i + 1));
            }
            let ns = ms.checked_mul(NS_PER_MS).filter(|&ns| ns <= 1_000_000_000 * NS_PER_MS);
            let Some(ns) = ns else {
                return Err(format!("line {}: {ms} ms is beyond the longest trace allowed (1e9 ms)", i + 1));
            };
            times.push(ns);
            last = ms;
        }
        match times.last() {
            None => Err("the trace has no opportunities (one millisecond time per line)".into()),
            Some(0) => Err("the trace must last a nonzero time: its last line is its period".into()),
            Some(&period) => Ok(DeliveryTrace { times, period }),
        }
    }

    /// Opportunities per period.
    pub fn opportunities(&self) -> usize {
        self.times.len()
    }

    /// The period, seconds.
    pub fn period_s(&self) -> f64 {
        self.period as f64 * 1e-9
    }

    /// The trace's mean capacity, bits per second.
    pub fn mean_rate_bps(&self) -> f64 {
        self.times.len() as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0 / self.period_s()
    }

    /// Time of opportunity `k` (counted from 0 across repetitions).
    fn time_of(&self, k: u64) -> Time {
        let n = self.times.len() as u64;
        Time((k / n) * self.period + self.times[(k % n) as usize])
    }

    /// Index of the first opportunity strictly after `t`.
    fn first_after(&self, t: Time) -> u64 {
        let n = self.times.len() as u64;
        let cycle = t.0 / self.period;
        let offset = t.0 % self.period;
        let within = self.times.partition_point(|&x| x <= offset) as u64;
        cycle * n + within
    }

    /// Opportunities in [from, to).
    pub fn count_in(&self, from: Time, to: Time) -> u64 {
        let first_at_or_after = |t: Time| if t.0 == 0 { 0 } else { self.first_after(Time(t.0 - 1)) };
        first_at_or_after(to).saturating_sub(first_at_or_after(from))
    }
}

/// One direction of a trace-driven link: which opportunity comes next and what is left of the
/// current one.
#[derive(Clone, Debug)]
pub struct TraceServer {
    trace: DeliveryTrace,
    /// Index of the next unused opportunity.
    next: u64,
    /// Bytes left in the opportunity last taken (at `credit_at`).
    credit: u32,
    /// The instant the link was last armed for: an opportunity it waits for, or the end of a
    /// packet whose opportunity may have bytes left. A start at any other instant comes from an
    /// idle link, for which what passed is lost.
    armed_at: Option<Time>,
    /// Wire bytes of packets completed in the measured window.
    pub served_bytes: u64,
}

/// What the link does next at `now`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextStart {
    /// An opportunity's bytes are available now: the next packet may start.
    Now,
    /// Nothing may start before this opportunity.
    At(Time),
}

impl TraceServer {
    /// A link following `trace` from time 0.
    pub fn new(trace: DeliveryTrace) -> TraceServer {
        TraceServer { trace, next: 0, credit: 0, armed_at: None, served_bytes: 0 }
    }

    /// The trace this link follows.
    pub fn trace(&self) -> &DeliveryTrace {
        &self.trace
    }

    /// The link is free at `now` with packets waiting: can one start now, or when? Call before
    /// each packet; an idle link (not armed for `now`) loses the opportunities at or before `now`.
    pub fn next_start(&mut self, now: Time) -> NextStart {
        if self.armed_at.take() != Some(now) {
            self.credit = 0;
            self.next = self.next.max(self.trace.first_after(now));
        }
        if self.credit > 0 {
            return NextStart::Now;
        }
        let t = self.trace.time_of(self.next);
        if t > now {
            self.armed_at = Some(t);
            return NextStart::At(t);
        }
        self.take_opportunity();
        NextStart::Now
    }

    fn take_opportunity(&mut self) {
        self.next += 1;
        self.credit = OPPORTUNITY_BYTES;
    }

    /// Sends a packet of `bytes` starting at `now` (after [`TraceServer::next_start`] said
    /// `Now`); returns when its last byte is carried. The link is armed for that instant.
    pub fn serve(&mut self, now: Time, bytes: u32) -> Time {
        let mut need = bytes;
        let mut at = now;
        loop {
            let take = need.min(self.credit);
            need -= take;
            self.credit -= take;
            if need == 0 {
                break;
            }
            at = self.trace.time_of(self.next);
            self.take_opportunity();
        }
        self.armed_at = Some(at);
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = NS_PER_MS;

    fn server(text: &str) -> TraceServer {
        TraceServer::new(DeliveryTrace::parse(text).unwrap())
    }

    #[test]
    fn parses_mahimahis_format_and_refuses_what_mm_link_refuses() {
        let t = DeliveryTrace::parse("1\n1\n3\n").unwrap();
        assert_eq!((t.opportunities(), t.period_s()), (3, 0.003));
        assert!((t.mean_rate_bps() - 3.0 * 1504.0 * 8.0 / 0.003).abs() < 1e-6);
        assert!(DeliveryTrace::parse("").unwrap_err().contains("no opportunities"));
        assert!(DeliveryTrace::parse("0\n0\n").unwrap_err().contains("nonzero"));
        assert!(DeliveryTrace::parse("5\n4\n").unwrap_err().contains("line 2"));
        assert!(DeliveryTrace::parse("1\n\n2\n").unwrap_err().contains("line 2"));
        assert!(DeliveryTrace::parse("1.5\n").unwrap_err().contains("whole number"));
    }

    #[test]
    fn an_arrival_waits_for_the_first_opportunity_strictly_after_it() {
        let mut s = server("2\n4\n");
        assert_eq!(s.next_start(Time(0)), NextStart::At(Time(2 * MS)));
        // Woken at the opportunity it was armed for: it is used.
        assert_eq!(s.next_start(Time(2 * MS)), NextStart::Now);
        assert_eq!(s.serve(Time(2 * MS), 1500), Time(2 * MS));
        // An idle link at exactly 4 ms has lost the opportunity at 4 ms (Mahimahi burns it before
        // the arrival): the next is the repetition's first, 4 + 2 ms.
        assert_eq!(s.next_start(Time(4 * MS)), NextStart::At(Time(6 * MS)));
    }

    #[test]
    fn one_opportunity_carries_several_small_packets_and_its_rest_is_lost_when_idle() {
        let mut s = server("1\n2\n");
        assert_eq!(s.next_start(Time(MS / 2)), NextStart::At(Time(MS)));
        assert_eq!(s.next_start(Time(MS)), NextStart::Now);
        assert_eq!(s.serve(Time(MS), 1000), Time(MS));
        assert_eq!(s.next_start(Time(MS)), NextStart::Now); // 504 bytes left at 1 ms
        assert_eq!(s.serve(Time(MS), 500), Time(MS));
        assert_eq!(s.next_start(Time(MS)), NextStart::Now); // 4 bytes left
        // A 40-byte packet takes the last 4 bytes and 36 of the next opportunity.
        assert_eq!(s.serve(Time(MS), 40), Time(2 * MS));
        // The link went idle with 1468 bytes left at 2 ms; a packet at 2.5 ms waits for 3 ms.
        assert_eq!(s.next_start(Time(5 * MS / 2)), NextStart::At(Time(3 * MS)));
    }

    #[test]
    fn a_large_packet_spans_opportunities_and_leaves_the_rest_to_the_next() {
        let mut s = server("1\n1\n1\n5\n");
        assert_eq!(s.next_start(Time(0)), NextStart::At(Time(MS)));
        assert_eq!(s.next_start(Time(MS)), NextStart::Now);
        // Opportunities at 1, 1, 1, 5, then 6, 6, 6, 10 (the repetition): 9000 B take three at
        // 1 ms, the one at 5 ms and two at 6 ms, the last only for 1480 of its bytes.
        assert_eq!(s.serve(Time(MS), 9000), Time(6 * MS));
        assert_eq!(s.next_start(Time(6 * MS)), NextStart::Now);
        assert_eq!(s.serve(Time(6 * MS), 24), Time(6 * MS));
        assert_eq!(s.next_start(Time(6 * MS)), NextStart::Now); // the third at 6 ms
        assert_eq!(s.serve(Time(6 * MS), 1504), Time(6 * MS));
        assert_eq!(s.next_start(Time(6 * MS)), NextStart::At(Time(10 * MS)));
    }

    #[test]
    fn counts_opportunities_in_a_window_across_repetitions() {
        let t = DeliveryTrace::parse("1\n1\n3\n").unwrap(); // at 1, 1, 3, then 4, 4, 6, 7, 7, 9, ...
        assert_eq!(t.count_in(Time(0), Time(3 * MS)), 2);
        assert_eq!(t.count_in(Time(0), Time(3 * MS + 1)), 3);
        assert_eq!(t.count_in(Time(2 * MS), Time(8 * MS)), 6);
        assert_eq!(t.count_in(Time(0), Time(300 * MS)), 299); // the 100th period ends at 300 ms
    }
}
