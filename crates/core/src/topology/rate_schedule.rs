//! A link whose rate changes at given times (`[topology.bottleneck] rate_schedule`), including
//! outages (a rate of 0).
//!
//! A packet keeps the rate its transmission started with, as ns-3's `PointToPointNetDevice`
//! computes a packet's transmission time when it starts sending it (and Linux applies a changed
//! rate to the packets it sends next): a change takes effect at the next packet. During an outage
//! no transmission starts; the discipline keeps its packets (so sojourn-based disciplines see the
//! wait) until the rate is positive again.

use super::link_rate::LinkRate;
use crate::engine::{Dur, Time};

/// The link's rate becomes `bps` at `at`; 0 bps takes the link down.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateChange {
    /// When the change happens.
    pub at: Time,
    /// The new rate, bits per second (0: the link is down until the next change).
    pub bps: f64,
}

/// A link's rate over time: the initial rate, then `changes` in time order.
#[derive(Clone, Debug)]
pub struct ScheduledRate {
    rate: LinkRate,
    down: bool,
    changes: Vec<RateChange>,
    /// Index of the first change not yet applied.
    next: usize,
}

impl ScheduledRate {
    /// A link of `bps` from time 0, changed by `changes` (strictly increasing times, validated by
    /// the scenario; `bps > 0`).
    pub fn new(bps: f64, changes: Vec<RateChange>) -> ScheduledRate {
        debug_assert!(changes.windows(2).all(|w| w[0].at < w[1].at), "changes must be in strictly increasing time order");
        ScheduledRate { rate: LinkRate::new(bps), down: false, changes, next: 0 }
    }

    /// A link whose rate never changes.
    pub fn constant(bps: f64) -> ScheduledRate {
        ScheduledRate::new(bps, Vec::new())
    }

    /// Brings the rate up to `now` (calls must come in non-decreasing time order) and tells
    /// whether the link is down: `Some(t)` when nothing may start before `t`, the next change
    /// (`Time::NEVER` when the last change took the link down for good).
    #[inline]
    pub fn down_until(&mut self, now: Time) -> Option<Time> {
        if self.changes.get(self.next).is_some_and(|c| c.at <= now) {
            self.apply_due(now);
        }
        if self.down {
            Some(self.changes.get(self.next).map_or(Time::NEVER, |c| c.at))
        } else {
            None
        }
    }

    #[cold]
    fn apply_due(&mut self, now: Time) {
        while let Some(&c) = self.changes.get(self.next).filter(|c| c.at <= now) {
            self.next += 1;
            self.down = c.bps <= 0.0;
            if !self.down {
                self.rate = LinkRate::new(c.bps);
            }
        }
    }

    /// Time to serialise `bytes` at the current rate (the link must be up: see
    /// [`ScheduledRate::down_until`]).
    #[inline]
    pub fn transmission(&mut self, bytes: u32) -> Dur {
        debug_assert!(!self.down, "no transmission starts while the link is down");
        self.rate.transmission(bytes)
    }
}

/// The mean of a link's scheduled rate over [`from`, `to`), bits per second: `initial` before the
/// first change (the capacity the link offers, as a time series shows it).
pub fn mean_rate_bps(initial: f64, changes: &[RateChange], from: Time, to: Time) -> f64 {
    if to <= from {
        return f64::NAN;
    }
    let mut bits = 0.0;
    let mut rate = initial;
    let mut since = from;
    for c in changes {
        if c.at >= to {
            break;
        }
        if c.at > since {
            bits += rate * (c.at.0 - since.0) as f64;
            since = c.at;
        }
        rate = c.bps;
    }
    bits += rate * (to.0 - since.0) as f64;
    bits / (to.0 - from.0) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn at_ms(ms: u64, bps: f64) -> RateChange {
        RateChange { at: Time(ms * MS), bps }
    }

    #[test]
    fn a_change_applies_to_packets_starting_at_or_after_it() {
        let mut r = ScheduledRate::new(8e6, vec![at_ms(10, 4e6)]);
        assert_eq!(r.down_until(Time(10 * MS - 1)), None);
        assert_eq!(r.transmission(1000), Dur(1_000_000)); // 1000 B at 8 Mb/s: 1 ms
        assert_eq!(r.down_until(Time(10 * MS)), None);
        assert_eq!(r.transmission(1000), Dur(2_000_000)); // at 4 Mb/s: 2 ms
    }

    #[test]
    fn an_outage_lasts_until_the_next_change_and_the_rate_then_is_the_new_one() {
        let mut r = ScheduledRate::new(8e6, vec![at_ms(10, 0.0), at_ms(30, 2e6)]);
        assert_eq!(r.down_until(Time(15 * MS)), Some(Time(30 * MS)));
        assert_eq!(r.down_until(Time(29 * MS)), Some(Time(30 * MS)));
        assert_eq!(r.down_until(Time(30 * MS)), None);
        assert_eq!(r.transmission(1000), Dur(4_000_000));
    }

    #[test]
    fn several_changes_passed_at_once_leave_the_last_one_in_force() {
        let mut r = ScheduledRate::new(8e6, vec![at_ms(1, 1e6), at_ms(2, 0.0), at_ms(3, 16e6)]);
        assert_eq!(r.down_until(Time(50 * MS)), None);
        assert_eq!(r.transmission(1000), Dur(500_000));
    }

    #[test]
    fn the_mean_rate_weighs_each_rate_by_its_time_in_the_window() {
        let changes = [at_ms(10, 2e6), at_ms(20, 0.0), at_ms(30, 8e6)];
        assert_eq!(mean_rate_bps(8e6, &changes, Time(0), Time(10 * MS)), 8e6);
        assert_eq!(mean_rate_bps(8e6, &changes, Time(5 * MS), Time(15 * MS)), 5e6);
        assert_eq!(mean_rate_bps(8e6, &changes, Time(10 * MS), Time(30 * MS)), 1e6);
        assert_eq!(mean_rate_bps(8e6, &changes, Time(25 * MS), Time(45 * MS)), 6e6);
    }

    #[test]
    fn a_final_outage_never_ends() {
        let mut r = ScheduledRate::new(8e6, vec![at_ms(5, 0.0)]);
        assert_eq!(r.down_until(Time(6 * MS)), Some(Time::NEVER));
    }

    #[test]
    fn without_changes_the_rate_is_linkrates() {
        let mut r = ScheduledRate::constant(10e6);
        for (t, bytes) in [(0, 1500u32), (7, 40), (1_000_000, 1500)] {
            assert_eq!(r.down_until(Time(t * MS)), None);
            assert_eq!(r.transmission(bytes), Dur::transmission(bytes, 10e6));
        }
    }
}
