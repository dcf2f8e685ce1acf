//! The event queue: a 4-ary min-heap keyed by (time, insertion sequence). Four children per node
//! halve the depth of a binary heap, and the children sit in one or two cache lines, which is
//! what pop-heavy simulation loops spend their time on.
//!
//! Equal-time events leave in insertion order, so runs repeat exactly. Cancellation is lazy:
//! components keep generation numbers or deadlines and ignore stale events when they fire.
//!
//! Beside the heap, a queue can have *lanes*: FIFOs for a stream of events whose times mostly
//! do not decrease (the deliveries behind one link). An event that is not earlier than its lane's
//! last goes to the back of the lane, O(1); any other goes to the heap. `pop` takes the least key
//! among the heap's top and the lanes' fronts, so the order is the heap-only order exactly.

use std::collections::VecDeque;

use super::time::Time;

/// The queue's ordering key for an event at `at` with insertion sequence `seq`.
#[inline]
pub fn order_key(at: Time, seq: u64) -> u128 {
    (at.0 as u128) << 64 | seq as u128
}

/// A heap entry: 24 bytes whatever the event's size, because sifting moves entries around
/// log(n) times per operation and events carry whole packets. The event waits in a slab.
/// The ordering key is (time, insertion sequence) as one 128-bit integer, compared at once.
#[derive(Clone, Copy)]
#[repr(packed(8))]
struct Entry {
    key: u128,
    slot: u32,
}

impl Entry {
    #[inline]
    fn new(at: Time, seq: u64, slot: u32) -> Entry {
        Entry { key: order_key(at, seq), slot }
    }
    #[inline]
    fn at(&self) -> Time {
        Time((self.key >> 64) as u64)
    }

    #[inline]
    fn before(&self, o: &Entry) -> bool {
        let (a, b) = (self.key, o.key);
        a < b
    }
}

const ARITY: usize = 4;

/// The position and key of the least of one node's children (one to four of them). With all four
/// it is a two-round tournament, whose two first comparisons do not wait for each other.
#[inline]
fn least(kids: &[Entry]) -> (usize, u128) {
    let pick = |a: (usize, u128), b: (usize, u128)| if b.1 < a.1 { b } else { a };
    if let [k0, k1, k2, k3] = kids {
        let left = pick((0, k0.key), (1, k1.key));
        let right = pick((2, k2.key), (3, k3.key));
        return pick(left, right);
    }
    let mut best = (0, kids[0].key);
    for (c, kid) in kids.iter().enumerate().skip(1) {
        best = pick(best, (c, kid.key));
    }
    best
}

/// The heap proper, over `Entry`s.
#[derive(Default)]
struct QuadHeap {
    v: Vec<Entry>,
}

impl QuadHeap {
    fn push(&mut self, e: Entry) {
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if !e.before(&self.v[parent]) {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = e;
    }

    /// Removes the minimum. The last entry is sifted down from the root: each level takes the
    /// least of up to four children, scanned as one slice so there is one bounds check a level.
    fn pop(&mut self) -> Option<Entry> {
        let last = self.v.pop()?;
        if self.v.is_empty() {
            return Some(last);
        }
        let top = self.v[0];
        let n = self.v.len();
        let mut i = 0;
        loop {
            let first = ARITY * i + 1;
            if first >= n {
                break;
            }
            let kids = &self.v[first..(first + ARITY).min(n)];
            let (best, best_key) = least(kids);
            if best_key >= last.key {
                break;
            }
            self.v[i] = kids[best];
            i = first + best;
        }
        self.v[i] = last;
        Some(top)
    }

    fn peek(&self) -> Option<&Entry> {
        self.v.first()
    }

    fn len(&self) -> usize {
        self.v.len()
    }
}

/// A deterministic priority queue of events.
pub struct EventQueue<E> {
    heap: QuadHeap,
    /// Pending events by slot; `None` marks a free slot.
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    next_seq: u64,
    now: Time,
    popped: u64,
    /// Each lane's events in key order (see the module comment).
    lanes: Vec<VecDeque<(u128, E)>>,
}

/// Where the earliest pending event is.
#[derive(Clone, Copy)]
enum Source {
    Heap,
    Lane(usize),
}

/// The earliest pending event as [`EventQueue::peek`] found it: its key, and where it waits, so
/// that [`EventQueue::pop_peeked`] need not look again. Valid until the queue next changes.
#[derive(Clone, Copy)]
pub struct Peeked {
    key: u128,
    source: Source,
}

impl Peeked {
    /// The event's ordering key (`u128::MAX` when nothing is pending), as [`EventQueue::peek_key`].
    #[inline]
    pub fn key(&self) -> u128 {
        self.key
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time zero with room for `capacity` pending events.
    pub fn with_capacity(capacity: usize) -> Self {
        Self::with_lanes(capacity, 0)
    }

    /// An empty queue with `lanes` lanes (numbered from 0) for [`EventQueue::schedule_in_lane`].
    pub fn with_lanes(capacity: usize, lanes: usize) -> Self {
        EventQueue {
            lanes: (0..lanes).map(|_| VecDeque::with_capacity(capacity.min(1024))).collect(),
            heap: QuadHeap { v: Vec::with_capacity(capacity) },
            slab: Vec::with_capacity(capacity),
            free: Vec::new(),
            next_seq: 0,
            now: Time::ZERO,
            popped: 0,
        }
    }

    /// Schedules `event` at `at`, which must not be in the past. O(log n).
    pub fn schedule(&mut self, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let slot = match self.free.pop() {
            Some(i) => {
                self.slab[i as usize] = Some(event);
                i
            }
            None => {
                self.slab.push(Some(event));
                (self.slab.len() - 1) as u32
            }
        };
        self.heap.push(Entry::new(at, self.next_seq, slot));
        self.next_seq += 1;
    }

    /// Schedules `event` at `at` like [`EventQueue::schedule`], at the back of `lane` when that
    /// keeps the lane in order (O(1)), in the heap otherwise. The pop order is the same either way.
    #[inline]
    pub fn schedule_in_lane(&mut self, lane: usize, at: Time, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let key = order_key(at, self.next_seq);
        let l = &mut self.lanes[lane];
        if l.back().is_none_or(|(last, _)| *last < key) {
            l.push_back((key, event));
            self.next_seq += 1;
        } else {
            self.schedule(at, event);
        }
    }

    /// The earliest pending event's key and place.
    #[inline]
    pub fn peek(&self) -> Peeked {
        let mut best = Peeked { key: self.heap.peek().map_or(u128::MAX, |e| e.key), source: Source::Heap };
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Some(&(key, _)) = lane.front() {
                if key < best.key {
                    best = Peeked { key, source: Source::Lane(i) };
                }
            }
        }
        best
    }

    /// Removes the earliest event and advances the clock to it. O(log n).
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let next = self.peek();
        (next.key != u128::MAX).then(|| self.pop_peeked(next))
    }

    /// Removes the event `next` found; the queue must not have changed since [`EventQueue::peek`]
    /// returned it, and something must have been pending.
    #[inline]
    pub fn pop_peeked(&mut self, next: Peeked) -> (Time, E) {
        let (at, event) = match next.source {
            Source::Lane(i) => {
                let (key, event) = self.lanes[i].pop_front().expect("the lane's front was seen");
                debug_assert_eq!(key, next.key, "the queue changed since peek");
                (Time((key >> 64) as u64), event)
            }
            Source::Heap => {
                let e = self.heap.pop().expect("the heap's top was seen");
                debug_assert_eq!({ e.key }, next.key, "the queue changed since peek");
                let event = self.slab[e.slot as usize].take().expect("a scheduled slot holds its event");
                self.free.push(e.slot);
                (e.at(), event)
            }
        };
        debug_assert!(at >= self.now);
        self.now = at;
        self.popped += 1;
        (at, event)
    }

    /// Takes the next insertion sequence number without scheduling anything, for a component
    /// that keeps its own deadline outside the queue but must be ordered exactly as if it had
    /// scheduled an event now (compare with [`EventQueue::peek_key`]).
    pub fn reserve_seq(&mut self) -> u64 {
        self.next_seq += 1;
        self.next_seq - 1
    }

    /// The ordering key of the earliest pending event, `u128::MAX` when none is pending. Keys
    /// made by [`order_key`] compare with it in the queue's own order.
    #[inline]
    pub fn peek_key(&self) -> u128 {
        self.peek().key
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Time> {
        let key = self.peek_key();
        (key != u128::MAX).then_some(Time((key >> 64) as u64))
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
        self.heap.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    proptest::proptest! {
        #[test]
        fn pops_in_time_then_insertion_order(times in proptest::collection::vec(0u64..50, 0..300)) {
            let mut q = EventQueue::with_capacity(0);
            for (i, &t) in times.iter().enumerate() {
                q.schedule(Time(t), i);
            }
            let mut expected: Vec<(u64, usize)> = times.iter().copied().zip(0..).collect();
            expected.sort();
            let got: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
            proptest::prop_assert_eq!(got, expected);
        }

        /// As the simulator uses it: pops interleaved with schedules at or after the clock.
        #[test]
        fn interleaved_schedules_and_pops_keep_the_order(ops in proptest::collection::vec((0u64..40, 0usize..3), 1..400)) {
            let mut q = EventQueue::with_capacity(0);
            let mut model: Vec<(u64, usize)> = Vec::new(); // (time, insertion number), kept sorted
            for (i, &(ahead, pops)) in ops.iter().enumerate() {
                let at = q.now().0 + ahead;
                q.schedule(Time(at), i);
                model.push((at, i));
                model.sort();
                for _ in 0..pops.min(model.len()) {
                    let want = model.remove(0);
                    let (t, e) = q.pop().expect("the model says one is pending");
                    proptest::prop_assert_eq!((t.0, e), want);
                }
            }
            proptest::prop_assert_eq!(q.len(), model.len());
        }

        /// Lanes change nothing about the order: the same schedule through lanes or the heap
        /// pops identically, whether a lane's times happen to rise or not.
        #[test]
        fn lanes_pop_in_the_heap_order(ops in proptest::collection::vec((0u64..40, 0usize..4, 0usize..3), 1..400)) {
            let mut heap_only = EventQueue::with_capacity(0);
            let mut laned = EventQueue::with_lanes(0, 3);
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (i, &(ahead, lane, pops)) in ops.iter().enumerate() {
                let at = Time(heap_only.now().0 + ahead);
                heap_only.schedule(at, i);
                match lane {
                    3 => laned.schedule(at, i),
                    l => laned.schedule_in_lane(l, at, i),
                }
                for _ in 0..pops {
                    proptest::prop_assert_eq!(heap_only.peek_key(), laned.peek_key());
                    a.extend(heap_only.pop());
                    b.extend(laned.pop());
                }
                proptest::prop_assert_eq!(heap_only.len(), laned.len());
            }
            a.extend(std::iter::from_fn(|| heap_only.pop()));
            b.extend(std::iter::from_fn(|| laned.pop()));
            proptest::prop_assert_eq!(a, b);
            proptest::prop_assert!(laned.is_empty());
        }
    }

    #[test]
    fn an_event_earlier_than_its_lane_goes_to_the_heap_and_still_leaves_first() {
        let mut q = EventQueue::with_lanes(4, 1);
        q.schedule_in_lane(0, Time(10), 'a');
        q.schedule_in_lane(0, Time(5), 'b'); // earlier than the lane's back: the heap
        q.schedule_in_lane(0, Time(10), 'c'); // equal time, later sequence: the lane
        assert_eq!(q.peek_time(), Some(Time(5)));
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'a', 'c']);
        assert_eq!(q.peek_time(), None);
    }
}
