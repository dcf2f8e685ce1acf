//! The event queue: a binary heap keyed by (time, insertion sequence).
//!
//! Equal-time events leave in insertion order, so runs repeat exactly. Cancellation is lazy:
//! components keep generation numbers or deadlines and ignore stale events when they fire.

use super::time::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    // BinaryHeap is a max-heap: reverse so the earliest (then first-inserted) is on top.
    fn cmp(&self, o: &Self) -> Ordering {
        o.at.cmp(&self.at).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// A deterministic priority queue of events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: Time,
    popped: u64,
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero with room for `capacity` pending events.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(capacity), next_seq: 0, now: Time::ZERO, popped: 0 }
    }

    /// Schedules `event` at `at`, which must not be in the past. O(log n).
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        self.heap.push(Entry { at, seq: self.next_seq, event });
        self.next_seq += 1;
    }

    /// Removes the earliest event and advances the clock to it. O(log n).
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        debug_assert!(e.at >= self.now);
        self.now = e.at;
        self.popped += 1;
        Some((e.at, e.event))
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.at)
    }

    /// The current simulated time (that of the last popped event).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Events popped so far.
    pub fn events_processed(&self) -> u64 {
        self.popped
    }

    /// Events still pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        q.schedule(Time(5), 'a');
        q.schedule(Time(3), 'b');
        q.schedule(Time(5), 'c');
        q.schedule(Time(3), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.now(), Time(5));
        assert_eq!(q.events_processed(), 4);
    }
}
