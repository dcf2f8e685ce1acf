//! The flow scheduler of FQ-CoDel (RFC 8290 §4.1–4.2), shared by `fq_codel.rs`, `fq_pie.rs` and `fq_cobalt.rs`:
//! a deficit round robin over hashed flow queues that serves newly active queues first. It holds
//! each queue's deficit and list membership; the queues' packets and AQM state stay with the
//! discipline, which hands the scheduler a closure that serves one queue.
//!
//! The rules, as RFC 8290 states them and Linux `sch_fq_codel.c` (`fq_codel_enqueue`,
//! `fq_codel_dequeue`) and ns-3 3.44 (`FqCoDelQueueDisc::DoEnqueue`, `DoDequeue`) code them:
//!
//! * A queue in neither list joins the tail of the new list with a deficit of one quantum
//!   (§4.1; `activate`).
//! * The queue to serve is the head of the new list, else of the old list (§4.2). A head whose
//!   deficit is spent (≤ 0) is given another quantum and moved to the tail of the old list,
//!   whichever list it was in, and the search starts again.
//! * The served packet's size is charged to the queue's deficit; the queue stays at the head.
//! * A queue found empty leaves the new list for the tail of the old list, so that it cannot
//!   regain priority at once, or, found empty in the old list, leaves the scheduler (§4.2).
//!   Linux removes an empty new queue at once when the old list is empty; here, as in ns-3, it
//!   goes to the old list, is served again on the next pass (its deficit is still positive), is
//!   found empty again and is removed there: the same order of service, at the cost of a second
//!   call of `serve` on an empty queue in the same dequeue.
//!
//! What the two disciplines do differently around the scheduler stays with them:
//!
//! * **Serving a queue** is the closure `serve(queue)`. FQ-CoDel's runs the queue's CoDel, which
//!   may drop packets from the head and then return none, so a queue that held packets can be
//!   "found empty". FQ-PIE's first runs the PIE updates due by now, then takes the head packet
//!   (it returns none only for a queue that is really empty).
//! * **When a queue is activated** is up to the discipline's enqueue, which calls `activate`
//!   where its source does: FQ-CoDel at every arrival, before the overflow drop; FQ-PIE `ns3`
//!   after the tail-drop test but before the PIE test (so an early-dropped first packet leaves
//!   an empty queue in the new list); FQ-PIE `rfc8033` (Linux) only once the arrival is accepted.

use std::collections::VecDeque;

use super::fifo::Fifo;
use super::{DropBuf, DropKind, QdiscStats};
use crate::packet::Packet;

/// RFC 8290 §4.1's overflow drop (Linux `fq_codel_drop`, ns-3 `FqCoDelDrop` and `FqPieDrop`):
/// sheds packets from the head of the queue holding the most bytes (ties: the lowest index; ns-3
/// takes the first-created queue) until half its bytes or `batch` packets have gone, each counted
/// as an overflow drop and pushed to `drops`. Returns the packets and bytes shed, for the
/// discipline's totals. The packets leave the queue's FIFO directly, so its AQM sees no dequeue.
pub(crate) fn drop_from_fattest<Q: AsMut<Fifo>>(
    queues: &mut [Q],
    batch: u32,
    stats: &mut QdiscStats,
    drops: &mut DropBuf,
) -> (usize, u64) {
    let Some(fattest) = (0..queues.len()).max_by_key(|&i| (queues[i].as_mut().bytes(), std::cmp::Reverse(i))) else {
        return (0, 0);
    };
    let fifo = queues[fattest].as_mut();
    let threshold = fifo.bytes() / 2;
    let (mut shed, mut count) = (0u64, 0u32);
    while let Some(p) = fifo.pop() {
        shed += u64::from(p.size);
        count += 1;
        stats.count_drop(DropKind::Overflow);
        drops.push((p, DropKind::Overflow));
        if count >= batch || shed >= threshold {
            break;
        }
    }
    (count as usize, shed)
}

/// Which list a flow queue is in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Status {
    /// In neither list: never activated, or found empty in the old list since.
    #[default]
    Inactive,
    /// In the new list: became active since it was last found empty or spent its deficit.
    New,
    /// In the old list.
    Old,
}

/// The scheduler's view of one flow queue.
#[derive(Clone, Copy, Debug, Default)]
struct Slot {
    /// Bytes the queue may still send this round; may go negative by up to one packet.
    deficit: i64,
    /// The list the queue is in; `New` and `Old` entries are exactly those of the two lists.
    status: Status,
}

/// RFC 8290's deficit round robin with new and old flow lists, over queues `0..queues`.
pub(crate) struct FlowScheduler {
    /// Bytes added to a deficit per round.
    quantum: i64,
    slots: Vec<Slot>,
    /// Queue indices, served first.
    new_flows: VecDeque<u32>,
    /// Queue indices, served when the new list is empty.
    old_flows: VecDeque<u32>,
}

impl FlowScheduler {
    /// A scheduler over `queues` queues (at most `u32::MAX`), all inactive, giving `quantum_bytes`
    /// per round.
    pub(crate) fn new(queues: usize, quantum_bytes: u64) -> Self {
        FlowScheduler {
            quantum: quantum_bytes as i64,
            slots: vec![Slot::default(); queues],
            new_flows: VecDeque::with_capacity(queues),
            old_flows: VecDeque::with_capacity(queues),
        }
    }

    /// Puts queue `queue` at the tail of the new list with a fresh quantum if it is in no list
    /// (RFC 8290 §4.1); a queue already in a list keeps its place and deficit.
    pub(crate) fn activate(&mut self, queue: usize) {
        let slot = &mut self.slots[queue];
        if slot.status == Status::Inactive {
            slot.status = Status::New;
            slot.deficit = self.quantum;
            self.new_flows.push_back(queue as u32);
        }
    }

    /// The next packet (RFC 8290 §4.2): `serve(queue)` is called on the queue whose turn it is
    /// until one returns a packet, which is charged to that queue's deficit; `None` once both
    /// lists are empty.
    pub(crate) fn dequeue(&mut self, mut serve: impl FnMut(usize) -> Option<Packet>) -> Option<Packet> {
        loop {
            let queue = self.next_queue()?;
            let slot = &mut self.slots[queue];
            if let Some(pkt) = serve(queue) {
                slot.deficit -= i64::from(pkt.size);
                return Some(pkt);
            }
            if slot.status == Status::New {
                // Behind the old queues, so that it cannot regain priority at once.
                slot.status = Status::Old;
                self.new_flows.pop_front();
                self.old_flows.push_back(queue as u32);
            } else {
                slot.status = Status::Inactive;
                self.old_flows.pop_front();
            }
        }
    }

    /// The first queue with deficit left, new ones first; a spent one gets a quantum and goes to
    /// the tail of the old list. The queue returned stays at the head of its list.
    fn next_queue(&mut self) -> Option<usize> {
        loop {
            let (&queue, from_new) = match self.new_flows.front() {
                Some(i) => (i, true),
                None => (self.old_flows.front()?, false),
            };
            let slot = &mut self.slots[queue as usize];
            if slot.deficit > 0 {
                return Some(queue as usize);
            }
            slot.deficit += self.quantum;
            if from_new {
                slot.status = Status::Old;
                self.new_flows.pop_front();
                self.old_flows.push_back(queue);
            } else {
                self.old_flows.rotate_left(1);
            }
        }
    }

    /// Queues in the new and in the old list.
    pub(crate) fn active_queues(&self) -> (usize, usize) {
        (self.new_flows.len(), self.old_flows.len())
    }

    /// Whether queue `queue` is in either list (ns-3's `FlowStatus` other than `INACTIVE`).
    pub(crate) fn is_active(&self, queue: usize) -> bool {
        self.slots[queue].status != Status::Inactive
    }

    /// Queues in either list: the flows the scheduler considers active.
    pub(crate) fn active_count(&self) -> usize {
        self.new_flows.len() + self.old_flows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    fn pkt(flow: u32, size: u32) -> Packet {
        Packet { size, ..Packet::new(PacketKind::Udp, flow) }
    }

    /// Serves from per-queue packet lists, recording which queue was asked.
    fn serve_from<'a>(queues: &'a mut [Vec<Packet>], asked: &'a mut Vec<usize>) -> impl FnMut(usize) -> Option<Packet> + 'a {
        move |i| {
            asked.push(i);
            (!queues[i].is_empty()).then(|| queues[i].remove(0))
        }
    }

    #[test]
    fn backlogged_queues_take_turns_a_quantum_at_a_time_then_leave() {
        // Quantum 1000 B: queue 0 sends one 1000 B packet a turn, queue 1 two of 500 B.
        let mut s = FlowScheduler::new(2, 1000);
        let mut queues = vec![vec![pkt(0, 1000); 3], vec![pkt(1, 500); 4]];
        let mut asked = Vec::new();
        s.activate(0);
        s.activate(1);
        let mut flows = Vec::new();
        while let Some(p) = s.dequeue(serve_from(&mut queues, &mut asked)) {
            flows.push(p.flow);
        }
        assert_eq!(flows, [0, 1, 1, 0, 1, 1, 0]);
        // The last call finds queue 1, then queue 0, empty in the old list.
        assert_eq!(asked[asked.len() - 2..], [1, 0]);
        assert_eq!(s.active_count(), 0);
    }

    #[test]
    fn new_queue_found_empty_waits_behind_the_old_ones_when_it_gets_a_packet() {
        let mut s = FlowScheduler::new(2, 1000);
        let mut queues = vec![vec![pkt(0, 1000), pkt(0, 300), pkt(0, 300), pkt(0, 300), pkt(0, 300)], vec![]];
        let mut asked = Vec::new();
        s.activate(0);
        s.dequeue(serve_from(&mut queues, &mut asked)); // queue 0: deficit 0
        s.dequeue(serve_from(&mut queues, &mut asked)); // spent: old list, deficit 1000 - 300
        // Queue 1 joins the new list empty (an early-dropped first packet, say): found empty,
        // it goes behind queue 0 in the old list, which is served.
        s.activate(1);
        asked.clear();
        assert_eq!(s.dequeue(serve_from(&mut queues, &mut asked)).map(|p| p.flow), Some(0));
        assert_eq!((asked.as_slice(), s.active_queues()), ([1, 0].as_slice(), (0, 2)));
        // A packet for queue 1 now does not put it back at the front: queue 0 finishes its turn.
        queues[1].push(pkt(1, 300));
        s.activate(1);
        let flows: Vec<_> = (0..3).map_while(|_| s.dequeue(serve_from(&mut queues, &mut asked))).map(|p| p.flow).collect();
        assert_eq!(flows, [0, 0, 1]);
    }

    #[test]
    fn queue_found_empty_in_the_old_list_leaves_and_can_rejoin_as_new() {
        let mut s = FlowScheduler::new(1, 1000);
        let mut queues = vec![vec![pkt(0, 300)]];
        let mut asked = Vec::new();
        s.activate(0);
        s.activate(0); // already in the new list: no second entry, no fresh quantum
        assert_eq!(s.active_count(), 1);
        assert!(s.dequeue(serve_from(&mut queues, &mut asked)).is_some());
        assert!(s.dequeue(serve_from(&mut queues, &mut asked)).is_none());
        assert_eq!((s.active_count(), asked.as_slice()), (0, [0, 0, 0].as_slice()));
        s.activate(0);
        assert_eq!(s.active_queues(), (1, 0));
    }
}
