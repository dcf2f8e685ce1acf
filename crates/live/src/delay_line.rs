//! Propagation delay: packets wait until their release time. Flows may have different delays,
//! so release order is not arrival order; equal release times leave in arrival order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use aqmlab_core::engine::Time;

/// Packets (by store slot) in flight on a delay line.
#[derive(Default)]
pub struct DelayLine {
    heap: BinaryHeap<Reverse<(Time, u64, u32)>>,
    order: u64,
}

impl DelayLine {
    /// Slot `slot` leaves the line at `at`.
    pub fn push(&mut self, at: Time, slot: u32) {
        self.heap.push(Reverse((at, self.order, slot)));
        self.order += 1;
    }

    /// When the next packet leaves, if any is in flight.
    pub fn next_release(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// The next packet due at or before `now`, with its release time.
    pub fn pop_due(&mut self, now: Time) -> Option<(Time, u32)> {
        match self.heap.peek() {
            Some(Reverse((t, _, _))) if *t <= now => self.heap.pop().map(|Reverse((t, _, s))| (t, s)),
            _ => None,
        }
    }

    /// Packets in flight.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_by_time_then_arrival() {
        let mut d = DelayLine::default();
        d.push(Time(30), 1);
        d.push(Time(10), 2);
        d.push(Time(30), 3);
        assert_eq!(d.next_release(), Some(Time(10)));
        assert_eq!(d.pop_due(Time(9)), None);
        assert_eq!(d.pop_due(Time(40)), Some((Time(10), 2)));
        assert_eq!(d.pop_due(Time(40)), Some((Time(30), 1)));
        assert_eq!(d.pop_due(Time(40)), Some((Time(30), 3)));
        assert!(d.is_empty());
    }
}
