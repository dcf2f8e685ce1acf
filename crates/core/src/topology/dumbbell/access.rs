//! A folded access link (the `dumbbell` module doc): its output time is known when a packet enters.

use crate::engine::{Dur, Time};
use crate::scenario::LinkSpec;
use crate::topology::link_rate::LinkRate;

/// The far end of a folded access link: when it is free again and its rate and delay.
#[derive(Clone, Copy)]
pub(super) struct Access {
    rate: LinkRate,
    delay: Dur,
    free_at: Time,
}

impl Access {
    pub(super) fn new(l: &LinkSpec) -> Access {
        Access { rate: LinkRate::new(l.rate_bps), delay: l.delay, free_at: Time::ZERO }
    }
    /// Pushes a packet that enters the link at `now`; returns when it reaches the far end.
    #[inline]
    pub(super) fn pass(&mut self, now: Time, size: u32) -> Time {
        let start = now.max(self.free_at);
        self.free_at = start + self.rate.transmission(size);
        self.free_at + self.delay
    }
}
