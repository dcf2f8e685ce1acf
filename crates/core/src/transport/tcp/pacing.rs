//! Sender pacing as Linux's TCP does it with an earliest-departure-time clock
//! (`tcp_update_skb_after_send`, `tcp_pacing_check` in net/ipv4/tcp_output.c): each segment
//! moves the departure clock `len/rate` on; the next segment may not leave before it.
//!
//! As the kernel: the first 10 data segments of a connection are not paced (the initial window
//! goes out as a burst, `data_segs_out >= 10`), and after an idle spell the clock restarts at
//! `now` with a credit of at most half a segment's time. Unlike the kernel, every segment is
//! paced on its own (Linux paces TSO bursts of `tso_segs_goal` segments, 2 at 10 Mb/s).

use crate::engine::Time;
#[cfg(test)]
use crate::engine::Dur;

/// The pacing clock of one sender.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Pacer {
    /// Bytes of payload per second (`sk_pacing_rate`); 0 = not paced yet.
    pub rate_bytes_per_sec: f64,
    /// Earliest departure of the next segment (`tcp_wstamp_ns`).
    next_release: Time,
    /// Data segments sent so far (`data_segs_out`, up to the unpaced initial burst).
    segs_out: u32,
    /// A send loop stopped on the clock: the sender wants waking at `next_release`.
    blocked: bool,
}

/// Segments sent before pacing applies (tcp_output.c: `tp->data_segs_out >= 10`).
const UNPACED_SEGMENTS: u32 = 10;

impl Pacer {
    pub fn new() -> Pacer {
        Pacer { rate_bytes_per_sec: 0.0, next_release: Time::ZERO, segs_out: 0, blocked: false }
    }

    /// Whether a segment may leave at `now`; if not, remembers to be woken.
    pub fn may_send(&mut self, now: Time) -> bool {
        let ok = now >= self.next_release;
        self.blocked |= !ok;
        ok
    }

    /// A segment of `payload` bytes left at `now`.
    pub fn on_sent(&mut self, now: Time, payload: u32) {
        self.segs_out = self.segs_out.saturating_add(1);
        let prior = self.next_release;
        self.next_release = self.next_release.max(now);
        if self.rate_bytes_per_sec > 0.0 && self.segs_out > UNPACED_SEGMENTS {
            let len_ns = (f64::from(payload) * 1e9 / self.rate_bytes_per_sec) as u64;
            // A clock that fell behind `now` gives back up to half a segment's time.
            let credit = self.next_release.0 - prior.0;
            self.next_release = Time(self.next_release.0 + len_ns - (len_ns / 2).min(credit));
        }
    }

    /// Earliest departure of the next segment.
    pub fn next_release(&self) -> Time {
        self.next_release
    }

    /// When the sender wants `on_timer` for the pacing clock (a send loop was held back).
    pub fn wakeup(&self) -> Option<Time> {
        self.blocked.then_some(self.next_release)
    }

    /// The timer fired at `now`: true if held-back sending may resume.
    pub fn release(&mut self, now: Time) -> bool {
        if self.blocked && now >= self.next_release {
            self.blocked = false;
            return true;
        }
        false
    }

    /// Time a full segment of `payload` bytes occupies the clock (tests).
    #[cfg(test)]
    pub fn gap(&self, payload: u32) -> Dur {
        Dur((f64::from(payload) * 1e9 / self.rate_bytes_per_sec) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_the_initial_burst_segments_leave_one_gap_apart() {
        let mut p = Pacer::new();
        p.rate_bytes_per_sec = 1_250_000.0; // 10 Mb/s
        let now = Time(0);
        for _ in 0..UNPACED_SEGMENTS {
            assert!(p.may_send(now));
            p.on_sent(now, 1250);
        }
        assert!(p.may_send(now));
        p.on_sent(now, 1250); // the 11th is paced: 1 ms of clock
        assert!(!p.may_send(now));
        assert_eq!(p.wakeup(), Some(Time(1_000_000)));
        assert!(!p.release(Time(999_999)));
        assert!(p.release(Time(1_000_000)));
        assert_eq!(p.gap(1250), Dur::from_millis(1));
    }
}
