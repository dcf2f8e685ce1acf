//! The bottleneck link: per direction a server driven by its discipline, and the world's
//! handlers for packets arriving at, waiting in and leaving it.

use super::event::{Event, DELIVER_LANE};
use super::flow::Endpoint;
use super::World;
use crate::engine::event_queue::order_key;
use crate::engine::{Dur, Rng, Time};
use crate::metrics::QueueMonitor;
use crate::packet::Packet;
use crate::qdisc::{AnyQdisc, ClassStats, DropKind, Qdisc, QdiscStats, Verdict};
use crate::topology::delivery_trace::{NextStart, TraceServer};
use crate::topology::rate_schedule::ScheduledRate;
use rand::Rng as _;
use std::collections::VecDeque;

/// Index of a bottleneck direction: 0 = forward (left→right), 1 = reverse.
type Dir = usize;

pub(super) struct Bottleneck {
    pub(super) qdisc: AnyQdisc,
    pub(super) rng: Rng,
    pub(super) loss: f64,
    pub(super) loss_rng: Rng,
    pub(super) rate: ScheduledRate,
    /// A delivery trace replacing `rate` in this direction (`trace`, `reverse_trace`).
    pub(super) trace: Option<TraceServer>,
    pub(super) delay: Dur,
    /// When the transmission in progress ends (in the past when the link is idle).
    pub(super) busy_until: Time,
    /// The transmission ending at `busy_until` has packets waiting behind it, so `run` must
    /// start the next one then. A packet that finds the link idle and the queue empty is sent
    /// without one (most ACKs).
    pub(super) tx_done_pending: bool,
    /// The queue order key (`busy_until`, sequence) the end-of-transmission event would have had,
    /// `u128::MAX` when none is pending: completions and events at the same time run in the order
    /// they were scheduled, exactly as if it were an event.
    pub(super) tx_done_key: u128,
    /// The discipline has been told that the link went idle (a dequeue that found it empty).
    pub(super) idle_reported: bool,
    /// Dequeues that found the discipline empty (or holding packets back): how often the link
    /// polls it, which BLUE-style and RED-style idle bookkeeping depend on.
    pub(super) empty_polls: u64,
    /// The pending `QdiscWake` of a shaping discipline, `Time(u64::MAX)` when none; a wake event at
    /// another time is stale and ignored.
    pub(super) wake_at: Time,
    /// Packets already taken from the discipline, waiting for the wire (`tx_ring` of them at most).
    pub(super) ring: VecDeque<Packet>,
    pub(super) ring_capacity: usize,
    pub(super) monitor: QueueMonitor,
    /// The discipline's counters when the warm-up ended; reports count from there.
    pub(super) stats_at_warmup: QdiscStats,
    /// Per-class counters (class-based disciplines) when the warm-up ended.
    pub(super) class_stats_at_warmup: Vec<ClassStats>,
    /// The discipline's own counters (`Qdisc::detail_counters`) when the warm-up ended.
    pub(super) details_at_warmup: Vec<(&'static str, u64)>,
}

impl Bottleneck {
    /// Tells the monitor the queue's length (in total and per class) after a change at `now`.
    #[inline]
    fn record_len(&mut self, now: Time) {
        self.monitor.on_change(now, self.qdisc.len_packets(), self.qdisc.len_bytes());
        for i in 0..self.qdisc.class_count() {
            let (pkts, bytes) = self.qdisc.class_len_at(i);
            self.monitor.set_class_len(i, pkts, bytes);
        }
    }
}

impl<'s> World<'s> {
    pub(super) fn arrive(&mut self, now: Time, dir: Dir, pkt: Packet) {
        if !self.last_offered.is_empty() && !pkt.is_feedback() {
            // Offered load (per-flow series only): every data arrival, before loss and verdict.
            self.flows[pkt.flow as usize].counters.offered_bytes += pkt.size as u64;
        }
        let link = &mut self.links[dir];
        let measuring = now >= self.sc.warmup;
        if link.loss > 0.0 && link.loss_rng.gen::<f64>() < link.loss {
            self.flows[pkt.flow as usize].counters.drops_whole_run += 1;
            if measuring {
                link.monitor.link_losses += 1;
                self.flows[pkt.flow as usize].counters.drops += 1;
            }
            if !pkt.is_feedback() && pkt.sent_at >= self.sc.warmup {
                self.flows[pkt.flow as usize].counters.lost_sent_after_warmup += 1;
            }
            return;
        }
        if dir == 0 && !pkt.is_feedback() {
            if let Some((fc, rng)) = self.flow_counter.as_mut() {
                fc.observe(pkt.flow, now, rng);
            }
        }
        let link = &mut self.links[dir];
        let idle = link.busy_until <= now && !link.tx_done_pending;
        if idle && !link.idle_reported {
            if link.ring_capacity == 0 {
                // The link went idle at `busy_until` with nothing queued, and nothing ran at that
                // instant: tell the discipline now, with the time it happened (RED's idle decay).
                // Without a ring the discipline feeds the wire, so the end of each transmission
                // asks it for the next packet (ns-2's `Queue::resume` → `deque()`).
                let at = link.busy_until;
                self.start_transmission(at, dir);
            } else {
                // Behind a ring the discipline is asked only when the ring frees room (ns-3's
                // `NetDeviceQueue` wake, Linux's `netif_tx_wake_queue`), which already happened
                // when the ring's last packet went on the wire: a wire going idle asks nothing.
                // (One more empty dequeue here lowered COBALT's BLUE probability once per idle
                // period: +5 % goodput against ns-3 with a 25-packet buffer; docs/validation.md.)
                link.idle_reported = true;
            }
        }
        let link = &mut self.links[dir];
        let verdict = link.qdisc.enqueue(pkt, now, &mut link.rng, &mut self.drop_buf);
        let counters = &mut self.flows[pkt.flow as usize].counters;
        match verdict {
            Verdict::Enqueued => {}
            Verdict::Marked if measuring => counters.marks += 1,
            Verdict::Dropped(kind) if measuring => {
                counters.drops += 1;
                counters.drops_early += u64::from(kind == DropKind::Early);
            }
            Verdict::Marked | Verdict::Dropped(_) => {}
        }
        if matches!(verdict, Verdict::Dropped(_)) {
            counters.drops_whole_run += 1;
        }
        if matches!(verdict, Verdict::Dropped(_)) && !pkt.is_feedback() && pkt.sent_at >= self.sc.warmup {
            counters.lost_sent_after_warmup += 1;
        }
        // A mark the discipline put on a queued packet instead of the arrival (AECN).
        if let Some(marked) = self.links[dir].qdisc.take_front_mark() {
            if measuring {
                self.flows[marked as usize].counters.marks += 1;
            }
        }
        self.account_inner_drops(measuring);
        self.links[dir].record_len(now);
        if idle {
            self.start_transmission(now, dir);
        } else {
            self.fill_ring(now, dir);
            self.account_inner_drops(measuring);
            self.ensure_tx_done(dir);
        }
    }

    /// Marks the end of the current transmission as due (see `run`) if packets wait for it.
    fn ensure_tx_done(&mut self, dir: Dir) {
        let link = &mut self.links[dir];
        let waiting = !link.ring.is_empty() || link.qdisc.len_packets() > 0;
        if waiting && !link.tx_done_pending && link.busy_until > self.events.now() {
            link.tx_done_pending = true;
            link.tx_done_key = order_key(link.busy_until, self.events.reserve_seq());
        }
    }

    /// Charges packets a discipline discarded from inside its queue to their flows.
    fn account_inner_drops(&mut self, measuring: bool) {
        for (p, _) in self.drop_buf.drain(..) {
            self.flows[p.flow as usize].counters.drops_whole_run += 1;
            if measuring {
                self.flows[p.flow as usize].counters.drops += 1;
            }
            if !p.is_feedback() && p.sent_at >= self.sc.warmup {
                self.flows[p.flow as usize].counters.lost_sent_after_warmup += 1;
            }
        }
    }

    /// Takes the discipline's next packet; its sojourn ends here.
    /// Disciplines that act at dequeue (CoDel) drop and mark here: both are charged at once.
    fn pull_from_qdisc(&mut self, now: Time, dir: Dir) -> Option<Packet> {
        let link = &mut self.links[dir];
        let marks_before = link.qdisc.stats().marks;
        let next = link.qdisc.dequeue(now, &mut self.drop_buf);
        link.record_len(now);
        let marked = link.qdisc.stats().marks > marks_before;
        if let Some(p) = &next {
            link.monitor.on_dequeue(now, p.enqueued_at);
        } else {
            link.empty_polls += 1;
        }
        let measuring = now >= self.sc.warmup;
        if let (true, true, Some(p)) = (marked, measuring, &next) {
            self.flows[p.flow as usize].counters.marks += 1;
        }
        if !self.drop_buf.is_empty() {
            self.account_inner_drops(measuring);
        }
        if next.is_none() && self.links[dir].qdisc.len_packets() > 0 {
            // A shaper holds packets back: ask again when it says (work-conserving disciplines
            // never get here with packets queued, so nothing else is scheduled).
            let link = &mut self.links[dir];
            if let Some(at) = link.qdisc.next_wakeup().filter(|&t| t > now && t < link.wake_at) {
                link.wake_at = at;
                self.events.schedule(at, Event::QdiscWake { dir: dir as u8 });
            }
        }
        next
    }

    /// A shaping discipline's wake-up: an idle link starts sending, a busy one refills its ring.
    pub(super) fn qdisc_wake(&mut self, now: Time, dir: Dir) {
        let link = &mut self.links[dir];
        if link.wake_at != now {
            return; // superseded by an earlier wake-up
        }
        link.wake_at = Time(u64::MAX);
        if link.busy_until <= now && !link.tx_done_pending {
            self.start_transmission(now, dir);
        } else {
            self.fill_ring(now, dir);
            self.account_inner_drops(now >= self.sc.warmup);
            self.ensure_tx_done(dir);
        }
    }

    /// Moves packets from the discipline into the transmit ring while it has room.
    fn fill_ring(&mut self, now: Time, dir: Dir) {
        while self.links[dir].ring.len() < self.links[dir].ring_capacity {
            match self.pull_from_qdisc(now, dir) {
                Some(p) => self.links[dir].ring.push_back(p),
                None => break,
            }
        }
    }

    /// The link is free at `now`: sends the next packet, if any, all the way to the far end
    /// host's arrival (the far-side access link is folded), or reports the idle link.
    fn start_transmission(&mut self, now: Time, dir: Dir) {
        if self.links[dir].trace.is_some() {
            return self.start_trace_transmission(now, dir);
        }
        let link = &mut self.links[dir];
        if let Some(up_at) = link.rate.down_until(now) {
            if !link.ring.is_empty() || link.qdisc.len_packets() > 0 {
                // An outage (`rate_schedule`): the link is held until it comes back up; the
                // packets stay queued, and the end of the outage is a due end of transmission.
                link.busy_until = up_at;
                link.idle_reported = false;
                self.ensure_tx_done(dir);
                return;
            }
        }
        let next = match self.links[dir].ring.pop_front() {
            Some(p) => Some(p),
            None => self.pull_from_qdisc(now, dir),
        };
        let link = &mut self.links[dir];
        let Some(pkt) = next else {
            link.idle_reported = true;
            self.account_inner_drops(now >= self.sc.warmup);
            return;
        };
        link.idle_reported = false;
        let tx = link.rate.transmission(pkt.size);
        let end = now + tx;
        link.busy_until = end;
        link.monitor.on_transmit(now, tx.0, self.sc.duration);
        self.send(now, end, dir, pkt);
        self.fill_ring(now, dir);
        self.account_inner_drops(now >= self.sc.warmup);
        self.ensure_tx_done(dir);
    }

    /// A trace-driven direction is free at `now` (`topology::delivery_trace`): sends every packet
    /// the current opportunity's bytes cover, then waits for the packet in progress to complete or
    /// for the next opportunity; or reports the idle link.
    fn start_trace_transmission(&mut self, now: Time, dir: Dir) {
        loop {
            let link = &mut self.links[dir];
            if link.qdisc.len_packets() == 0 {
                // Nothing to send (a discipline with packets may still hold them: it asks for a
                // wake-up, which comes back here).
                link.idle_reported = true;
                return;
            }
            let server = link.trace.as_mut().expect("a trace-driven link");
            if let NextStart::At(t) = server.next_start(now) {
                link.busy_until = t;
                link.idle_reported = false;
                self.ensure_tx_done(dir);
                return;
            }
            let Some(pkt) = self.pull_from_qdisc(now, dir) else {
                self.links[dir].idle_reported = true;
                self.account_inner_drops(now >= self.sc.warmup);
                return;
            };
            let link = &mut self.links[dir];
            link.idle_reported = false;
            let server = link.trace.as_mut().expect("a trace-driven link");
            let end = server.serve(now, pkt.size);
            if end >= self.sc.warmup && end <= self.sc.duration {
                server.served_bytes += u64::from(pkt.size);
            }
            link.busy_until = end;
            self.send(now, end, dir, pkt);
            self.account_inner_drops(now >= self.sc.warmup);
            if end > now {
                self.ensure_tx_done(dir);
                return;
            }
        }
    }

    /// Sends `pkt`, whose transmission runs from `now` to `end`, on to the far end host's arrival
    /// (the far-side access link is folded in), capturing it when asked.
    fn send(&mut self, now: Time, end: Time, dir: Dir, pkt: Packet) {
        let at_router = end + self.links[dir].delay;
        if dir == 0 {
            if let Some(w) = self.pcap.as_mut() {
                let mss = match self.flows[pkt.flow as usize].endpoint {
                    Endpoint::Tcp { cfg, .. } => self.sc.tcp_configs[cfg as usize].mss,
                    Endpoint::Udp { .. } | Endpoint::Media { .. } | Endpoint::Tfrc { .. } => 1,
                };
                w.capture(now, &pkt, mss);
            }
        }
        let flow = &mut self.flows[pkt.flow as usize];
        let to_host = if pkt.is_feedback() {
            flow.sender_side[1].pass(at_router, pkt.size)
        } else {
            if end >= self.sc.warmup && end <= self.sc.duration {
                flow.counters.throughput_bytes += pkt.size as u64;
            }
            flow.receiver_side[1].pass(at_router, pkt.size)
        };
        self.events.schedule_in_lane(DELIVER_LANE[dir], to_host, Event::Deliver { pkt });
    }

    pub(super) fn tx_done(&mut self, now: Time, dir: Dir) {
        self.links[dir].tx_done_pending = false;
        self.links[dir].tx_done_key = u128::MAX;
        self.start_transmission(now, dir);
    }
}
