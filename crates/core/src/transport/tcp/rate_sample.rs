//! Delivery-rate estimation as Linux's net/ipv4/tcp_rate.c does it, which is what
//! draft-cheng-iccrg-delivery-rate-estimation describes: each segment remembers, when sent, how
//! much had been delivered (`delivered`), when (`delivered_time`), when the current send flight
//! began (`first_sent_time`) and whether the sender was application-limited; an ACK or SACK that
//! delivers it yields a rate sample of `delivered` segments over
//! max(send elapsed, ack elapsed) (the draft's §3.3; Linux's `tcp_rate_gen`).
//!
//! Units: segments and engine time (ns). Where the kernel and the draft differ, the kernel is
//! followed: the sample is taken from the most recently *sent* of the newly delivered segments
//! (kernel: `tcp_skb_sent_after`; the draft says the packet with the largest `delivered`), and a
//! sample whose interval is shorter than the minimum RTT is discarded (kernel only).
//!
//! Segments SACKed then reneged are not modelled (the receiver never reneges here).

use std::collections::BTreeMap;

use crate::engine::{Dur, Time};
use crate::packet::SackBlock;

/// What a segment remembers from its (last) transmission.
#[derive(Clone, Copy, Debug, PartialEq)]
struct TxState {
    sent: Time,
    first_sent: Time,
    delivered_time: Time,
    delivered: u64,
    app_limited: bool,
    retransmitted: bool,
}

/// One ACK's rate sample (Linux's `struct rate_sample`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RateSample {
    /// Segments delivered over `interval`; `None` when the sample is invalid (no delivered
    /// segment carried send state, or the interval was implausibly short).
    pub delivered: Option<u64>,
    /// max(send elapsed, ack elapsed).
    pub interval: Dur,
    /// The connection's `delivered` when the sampled segment was sent (BBR's round counting).
    pub prior_delivered: u64,
    /// The sampled segment was sent while application-limited.
    pub is_app_limited: bool,
    /// Segments newly delivered by this ACK, cumulatively or by SACK (`acked_sacked`).
    pub acked_sacked: u32,
    /// RTT of the most recently sent newly delivered segment that was not retransmitted (Linux's
    /// `ca_rtt_us`); `None` if all were retransmissions (Karn).
    pub rtt: Option<Dur>,
}

/// Per-connection state of the estimator.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RateSampler {
    /// Segments delivered so far (`tp->delivered`).
    pub delivered: u64,
    /// When `delivered` last grew (`tp->delivered_mstamp`).
    pub delivered_time: Time,
    /// Send time of the most recently sent segment whose delivery was sampled (`first_tx_mstamp`).
    first_sent_time: Time,
    /// Nonzero: application-limited until `delivered` passes it (`tp->app_limited`).
    app_limited_until: u64,
    /// Outstanding segments not yet delivered, by sequence number.
    in_flight: BTreeMap<u32, TxState>,
}

impl RateSampler {
    /// A segment leaves at `now`; `idle` when nothing was outstanding (`packets_out == 0`), which
    /// starts a new send flight (`tcp_rate_skb_sent`).
    pub fn on_send(&mut self, now: Time, seq: u32, retransmitted: bool, idle: bool) {
        if idle {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        self.in_flight.insert(seq, TxState {
            sent: now,
            first_sent: self.first_sent_time,
            delivered_time: self.delivered_time,
            delivered: self.delivered,
            app_limited: self.app_limited_until != 0,
            retransmitted,
        });
    }

    /// The sender has nothing more to send and less than a window in flight: samples until what
    /// is now in flight is delivered are application-limited (`tcp_rate_check_app_limited`).
    pub fn mark_app_limited(&mut self, in_flight: u32) {
        self.app_limited_until = (self.delivered + u64::from(in_flight)).max(1);
    }

    /// Whether samples are currently marked application-limited.
    #[cfg(test)]
    pub fn app_limited(&self) -> bool {
        self.app_limited_until != 0
    }

    /// An ACK at `now` acknowledging everything below `cum_ack` and SACKing `sacks`: marks the
    /// newly delivered segments and returns the rate sample (`tcp_rate_skb_delivered` per segment,
    /// then `tcp_rate_gen`). `min_rtt` discards samples with a shorter interval.
    pub fn on_ack(&mut self, now: Time, cum_ack: u32, sacks: &[SackBlock], min_rtt: Option<Dur>) -> RateSample {
        let mut newly: Vec<u32> = self.in_flight.range(..cum_ack).map(|(&s, _)| s).collect();
        for b in sacks {
            newly.extend(self.in_flight.range(b.start..b.end).map(|(&s, _)| s));
        }
        let mut chosen: Option<TxState> = None;
        let mut rtt_from: Option<Time> = None;
        for seq in &newly {
            let Some(tx) = self.in_flight.remove(seq) else { continue }; // a block repeated
            self.delivered += 1;
            // Kernel: sample the most recently sent segment (ties: the later sequence).
            if chosen.is_none_or(|c| tx.sent >= c.sent) {
                chosen = Some(tx);
            }
            if !tx.retransmitted && rtt_from.is_none_or(|t| tx.sent > t) {
                rtt_from = Some(tx.sent);
            }
        }
        let acked_sacked = newly.len() as u32;
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0; // the app-limited flight has been delivered
        }
        if acked_sacked > 0 {
            self.delivered_time = now;
        }
        let rtt = rtt_from.map(|t| now.saturating_since(t));
        let Some(tx) = chosen else {
            return RateSample { delivered: None, interval: Dur::ZERO, prior_delivered: 0, is_app_limited: false, acked_sacked, rtt };
        };
        self.first_sent_time = tx.sent;
        let send_elapsed = tx.sent.saturating_since(tx.first_sent);
        let ack_elapsed = now.saturating_since(tx.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        // Kernel: an interval below min_rtt comes from a lost ACK clock or a spurious
        // retransmission and would over-estimate the rate.
        let valid = interval > Dur::ZERO && min_rtt.is_none_or(|m| interval >= m);
        RateSample {
            delivered: valid.then_some(self.delivered - tx.delivered),
            interval,
            prior_delivered: tx.delivered,
            is_app_limited: tx.app_limited,
            acked_sacked,
            rtt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time(x * 1_000_000)
    }

    #[test]
    fn a_paced_flight_measures_its_send_rate_and_a_burst_its_ack_rate() {
        let mut r = RateSampler::default();
        // 10 segments sent 1 ms apart from idle, ACKed one by one 50 ms later, 1 ms apart.
        for i in 0..10u32 {
            r.on_send(ms(u64::from(i)), i, false, i == 0);
        }
        let mut last = None;
        for i in 0..10u32 {
            last = Some(r.on_ack(ms(50 + u64::from(i)), i + 1, &[], None));
        }
        let s = last.unwrap();
        // Segment 9 was sent when nothing had been delivered: 10 delivered since; send elapsed
        // 9 ms, ack elapsed from its delivered_time (0) to 59 ms: the larger wins.
        assert_eq!(s.delivered, Some(10));
        assert_eq!(s.interval, Dur::from_millis(59));
        assert_eq!(s.rtt, Some(Dur::from_millis(50)));
        assert_eq!(r.delivered, 10);
    }

    #[test]
    fn sacked_segments_count_once_and_retransmissions_give_no_rtt() {
        let mut r = RateSampler::default();
        for i in 0..4u32 {
            r.on_send(ms(0), i, false, i == 0);
        }
        let s = r.on_ack(ms(40), 0, &[SackBlock { start: 1, end: 3 }], None);
        assert_eq!(s.acked_sacked, 2);
        r.on_send(ms(41), 0, true, false);
        let s = r.on_ack(ms(80), 3, &[SackBlock { start: 1, end: 3 }], None);
        assert_eq!(s.acked_sacked, 1, "only the retransmitted head is new");
        assert_eq!(s.rtt, None, "Karn: a retransmission gives no RTT");
        assert_eq!(r.delivered, 3);
    }

    #[test]
    fn app_limited_marks_samples_until_delivered_passes_the_mark() {
        let mut r = RateSampler::default();
        r.mark_app_limited(0); // mark = max(delivered + in flight, 1) = 1
        r.on_send(ms(0), 0, false, true);
        assert!(r.on_ack(ms(10), 1, &[], None).is_app_limited);
        assert!(r.app_limited(), "delivered 1 is not after the mark 1 (kernel: after())");
        r.on_send(ms(10), 1, false, true);
        assert!(r.on_ack(ms(20), 2, &[], None).is_app_limited, "sent while still marked");
        assert!(!r.app_limited(), "cleared once delivered passes the mark");
        r.on_send(ms(20), 2, false, true);
        assert!(!r.on_ack(ms(30), 3, &[], None).is_app_limited);
    }
}
