//! FQ-COBALT (`kind = "fq_cobalt"`), as ns-3 3.44's `FqCobaltQueueDisc` runs it
//! (src/traffic-control/model/fq-cobalt-queue-disc.cc): FQ-CoDel's flow queueing (RFC 8290 §4,
//! the scheduler of `fq_scheduler.rs`) with a COBALT (`cobalt_core.rs`, ns-3's `CobaltQueueDisc`)
//! on each flow queue instead of CoDel. docs/cobalt.md has the sources and the measurements.
//!
//! * Enqueue (`DoEnqueue`): the flow hash picks a queue, directly (`hash % flows`) or, with
//!   `set_associative_hash`, by ns-3's `SetAssociativeHash` (below); an inactive queue joins the
//!   new list with a quantum. The queue's own COBALT then takes the packet: it refuses it only
//!   when that one queue already holds `limit` packets (`CobaltQueueDisc::DoEnqueue`, BLUE up).
//!   When the whole discipline then holds more than `limit` packets, the head packets of the
//!   queue with the most bytes are dropped, up to `drop_batch` and until half its bytes have gone
//!   (`FqCobaltDrop`, `Overflow`). ns-3 takes them from the queue's FIFO directly, so its BLUE is
//!   not raised (`variant = "ns3"`); `variant = "linux"` raises it (`cobalt_queue_full`, as
//!   `sch_cake.c`'s `cake_drop` does on the queue it prunes).
//! * Dequeue (`DoDequeue`): new list first, spent deficits topped up by a quantum; the chosen
//!   queue's COBALT drops (`Early`) or marks until a packet may leave; a queue found empty
//!   (BLUE down) moves from the new to the old list, or from the old list out.
//!
//! `SetAssociativeHash` (ns-3): `h = hash % flows`; the set is the `set_ways` queues from
//! `h − h % set_ways`; the first of them that is inactive or tagged with this flow's hash is
//! taken (and tagged); if none, the set's first queue is re-tagged and shared. ns-3 takes an
//! inactive queue that comes earlier in the set before the flow's own (active) queue; so does
//! this. (A never-created ns-3 queue is inactive here.)
//!
//! Defaults are ns-3's: 1024 queues, 10240 packets, batches of 64, perturbation 0, UseEcn true,
//! Interval 100 ms, Target 5 ms, Increment 1/256, Decrement 1/4096, BlueThreshold 400 ms,
//! CeThreshold none, set-associative hash off with 8 ways. ns-3's quantum is the device MTU
//! (1500 B on a point-to-point link); the default here is FQ-CoDel's 1514 B. The flow hash is
//! FQ-CoDel's 32-bit mix of the flow id and `perturbation` (ns-3 hashes the 5-tuple). Ties for
//! the fattest queue go to the lowest index (ns-3: the first created).
//!
//! Random draws: one uniform per dequeued packet whose queue has `p_drop > 0`, from the
//! discipline's stream copied at the first arrival.

use serde::{Deserialize, Serialize};

use super::cobalt::{cobalt_config, cobalt_dequeue, default_interval, default_p_dec, default_p_inc, default_target, fresh_state,
                    CobaltDetails, CobaltVariant};
use super::cobalt_core::{Cobalt, CobaltParams, P_DEC, P_INC};
use super::fifo::Fifo;
use super::fq_codel::flow_hash;
use super::fq_scheduler::{self, FlowScheduler};
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{check_range, join, ConfigError, ConfigResult};
use crate::packet::{FlowId, Packet};
use crate::scenario::units::{Bytes, Duration, DurationSwitch};

/// Scenario keys of `kind = "fq_cobalt"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FqCobaltParams {
    /// COBALT's target on each queue (5 ms).
    #[serde(default = "default_target")]
    pub target: Duration,
    /// COBALT's interval on each queue (100 ms).
    #[serde(default = "default_interval")]
    pub interval: Duration,
    /// Packets the whole discipline holds before it sheds from the fattest queue (10240).
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Number of flow queues packets are hashed into (1024).
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// Bytes a queue may send per round (1514; ns-3 the device MTU).
    #[serde(default = "default_quantum")]
    pub quantum: Bytes,
    /// Most packets shed from the fattest queue on one overflow (64).
    #[serde(default = "default_drop_batch", deserialize_with = "crate::scenario::units::int_in::<_, _, 1, 65536>")]
    pub drop_batch: u32,
    /// Salt of the flow hash.
    #[serde(default)]
    pub perturbation: u32,
    /// Mark ECN-capable packets instead of dropping them (ns-3 `UseEcn`: true).
    #[serde(default = "default_ecn")]
    pub ecn: bool,
    /// BLUE's increment (1/256).
    #[serde(default = "default_p_inc")]
    pub p_inc: f64,
    /// BLUE's decrement (1/4096).
    #[serde(default = "default_p_dec")]
    pub p_dec: f64,
    /// ns-3 `BlueThreshold`: `"auto"` = 400 ms (ns3) or none (linux).
    #[serde(default)]
    pub blue_threshold: DurationSwitch,
    /// ns-3 `CeThreshold`: `"auto"` = none.
    #[serde(default)]
    pub ce_threshold: DurationSwitch,
    /// ns-3 `EnableSetAssociativeHash` (false).
    #[serde(default)]
    pub set_associative_hash: bool,
    /// ns-3 `SetWays`: queues per set of the set-associative hash (8); must divide `flows`.
    #[serde(default = "default_set_ways")]
    pub set_ways: u32,
    /// `ns3` or `linux` (each queue's COBALT, and BLUE on overflow).
    #[serde(default)]
    pub variant: CobaltVariant,
}

fn default_limit() -> u32 {
    10240
}
fn default_flows() -> u32 {
    1024
}
fn default_quantum() -> Bytes {
    Bytes(1514)
}
fn default_drop_batch() -> u32 {
    64
}
fn default_ecn() -> bool {
    true
}
fn default_set_ways() -> u32 {
    8
}

impl Default for FqCobaltParams {
    fn default() -> Self {
        FqCobaltParams {
            target: default_target(),
            interval: default_interval(),
            limit: default_limit(),
            flows: default_flows(),
            quantum: default_quantum(),
            drop_batch: default_drop_batch(),
            perturbation: 0,
            ecn: default_ecn(),
            p_inc: P_INC,
            p_dec: P_DEC,
            blue_threshold: DurationSwitch::Auto,
            ce_threshold: DurationSwitch::Auto,
            set_associative_hash: false,
            set_ways: default_set_ways(),
            variant: CobaltVariant::Ns3,
        }
    }
}

impl FqCobaltParams {
    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<FqCobalt> {
        let law = cobalt_config(path, self.target, self.interval, self.ecn, self.p_inc, self.p_dec, self.blue_threshold,
                                self.ce_threshold, self.variant)?;
        check_range(path, "limit", u64::from(self.limit), 1, 1 << 24)?;
        check_range(path, "flows", u64::from(self.flows), 1, 65536)?;
        check_range(path, "quantum", self.quantum.0, 1, 1 << 20)?;
        check_range(path, "drop_batch", u64::from(self.drop_batch), 1, 1 << 16)?;
        check_range(path, "set_ways", u64::from(self.set_ways), 1, 65536)?;
        if self.set_associative_hash && !self.flows.is_multiple_of(self.set_ways) {
            // ns-3 CheckConfig: "The number of queues must be an integer multiple of the size of
            // the set of queues used by set associative hash".
            return Err(ConfigError::new(join(path, "set_ways"),
                format!("must divide flows ({}) when set_associative_hash is on, got {}", self.flows, self.set_ways)));
        }
        let fresh = fresh_state(self.variant);
        Ok(FqCobalt {
            law,
            variant: self.variant,
            limit: self.limit as usize,
            drop_batch: self.drop_batch,
            perturbation: self.perturbation,
            set_ways: self.set_associative_hash.then_some(self.set_ways),
            queues: (0..self.flows).map(|_| FlowQueue { fifo: Fifo::default(), cobalt: fresh, tag: None }).collect(),
            scheduler: FlowScheduler::new(self.flows as usize, self.quantum.0),
            len: 0,
            bytes: 0,
            rng: None,
            stats: QdiscStats::default(),
            details: CobaltDetails::default(),
        })
    }
}

/// One flow queue with its COBALT (its deficit and list are the scheduler's).
struct FlowQueue {
    fifo: Fifo,
    cobalt: Cobalt,
    /// The flow hash this queue was last given to by the set-associative hash (ns-3 `m_tags`).
    tag: Option<u32>,
}

impl AsMut<Fifo> for FlowQueue {
    fn as_mut(&mut self) -> &mut Fifo {
        &mut self.fifo
    }
}

/// FQ-COBALT.
pub struct FqCobalt {
    law: CobaltParams,
    variant: CobaltVariant,
    limit: usize,
    drop_batch: u32,
    perturbation: u32,
    /// Ways per set when the set-associative hash is on.
    set_ways: Option<u32>,
    queues: Vec<FlowQueue>,
    scheduler: FlowScheduler,
    /// Packets held, all queues; equals the sum of the FIFOs' lengths.
    len: usize,
    /// Bytes held, all queues.
    bytes: u64,
    rng: Option<Rng>,
    stats: QdiscStats,
    details: CobaltDetails,
}

impl FqCobalt {
    /// The queue a packet of `flow` goes to now (the set-associative hash also tags it).
    fn classify(&mut self, flow: FlowId) -> usize {
        let hash = flow_hash(flow, self.perturbation);
        let n = self.queues.len() as u32;
        let h = hash % n;
        let Some(ways) = self.set_ways else { return h as usize };
        let outer = h - h % ways;
        for i in outer..outer + ways {
            let i = i as usize;
            if self.queues[i].tag == Some(hash) || !self.scheduler.is_active(i) {
                self.queues[i].tag = Some(hash);
                return i;
            }
        }
        self.queues[outer as usize].tag = Some(hash);
        outer as usize
    }

    /// The queue `flow` hashes to without the set-associative hash.
    pub fn queue_of(&self, flow: FlowId) -> usize {
        (flow_hash(flow, self.perturbation) % self.queues.len() as u32) as usize
    }

    /// Queues in the new and the old list.
    pub fn active_queues(&self) -> (usize, usize) {
        self.scheduler.active_queues()
    }

    /// COBALT's state on queue `i`.
    pub fn cobalt(&self, i: usize) -> &Cobalt {
        &self.queues[i].cobalt
    }

    /// The counters beyond `QdiscStats`.
    pub fn details(&self) -> &CobaltDetails {
        &self.details
    }
}

impl Qdisc for FqCobalt {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        if self.rng.is_none() {
            self.rng = Some(rng.clone());
        }
        self.stats.arrivals += 1;
        let i = self.classify(pkt.flow);
        self.scheduler.activate(i);
        let q = &mut self.queues[i];
        // The child CobaltQueueDisc's own MaxSize is the parent's (InitializeParams).
        if q.fifo.len() >= self.limit {
            let before = q.cobalt.p_drop;
            q.cobalt.on_queue_full(&self.law, now);
            if q.cobalt.p_drop > before {
                self.details.blue_increases += 1;
            }
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        self.bytes += u64::from(pkt.size);
        q.fifo.push(pkt, now);
        self.len += 1;
        self.stats.enqueues += 1;
        if self.len > self.limit {
            let fattest = (0..self.queues.len()).max_by_key(|&j| (self.queues[j].fifo.bytes(), std::cmp::Reverse(j)));
            if let (CobaltVariant::Linux, Some(j)) = (self.variant, fattest) {
                let c = &mut self.queues[j].cobalt;
                let before = c.p_drop;
                c.on_queue_full(&self.law, now);
                if c.p_drop > before {
                    self.details.blue_increases += 1;
                }
            }
            let (packets, bytes) = fq_scheduler::drop_from_fattest(&mut self.queues, self.drop_batch, &mut self.stats, drops);
            self.len -= packets;
            self.bytes -= bytes;
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
        let (law, rng, stats, details) = (&self.law, &mut self.rng, &mut self.stats, &mut self.details);
        let (queues, len, bytes) = (&mut self.queues, &mut self.len, &mut self.bytes);
        let pkt = self.scheduler.dequeue(|i| {
            let q = &mut queues[i];
            let (len_before, bytes_before) = (q.fifo.len(), q.fifo.bytes());
            let pkt = cobalt_dequeue(law, &mut q.cobalt, &mut q.fifo, now, rng, stats, details, drops);
            *len -= len_before - q.fifo.len();
            *bytes -= bytes_before - q.fifo.bytes();
            pkt
        })?;
        self.stats.dequeues += 1;
        Some(pkt)
    }

    /// Which queue sends next depends on deficits the dequeue itself updates: not known here.
    fn peek(&self) -> Option<&Packet> {
        None
    }

    fn len_packets(&self) -> usize {
        self.len
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    /// Queues in the scheduler (new and old lists): the flows it considers active.
    fn flow_estimate(&self) -> Option<f64> {
        Some(self.scheduler.active_count() as f64)
    }

    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        let d = self.details;
        vec![("codel_drops", d.codel_drops), ("blue_drops", d.blue_drops), ("blue_increases", d.blue_increases),
             ("blue_decreases", d.blue_decreases)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, Dur, StreamId};
    use crate::packet::{Ecn, PacketKind};

    fn pkt(flow: FlowId, size: u32) -> Packet {
        Packet { size, ..Packet::new(PacketKind::Udp, flow) }
    }

    fn ms(t: u64) -> Time {
        Time(t * 1_000_000)
    }

    /// Flows whose ids hash to distinct queues under `q`'s parameters.
    fn distinct_flows(q: &FqCobalt, n: usize) -> Vec<FlowId> {
        let mut seen = std::collections::HashSet::new();
        (0..).filter(|&f| seen.insert(q.queue_of(f))).take(n).collect()
    }

    #[test]
    fn a_new_flow_is_served_before_the_backlogged_one_then_waits_its_turn() {
        let mut q = FqCobaltParams::default().validate("queue").unwrap();
        let f = distinct_flows(&q, 2);
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..10 {
            q.enqueue(pkt(f[0], 1500), ms(0), &mut rng, &mut drops);
        }
        // The bulk flow sends its first quantum (1514 B: two 1500 B packets), then a sparse
        // flow's packet arrives and jumps ahead of the bulk flow's third.
        assert_eq!(q.dequeue(ms(1), &mut drops).map(|p| p.flow), Some(f[0]));
        q.enqueue(pkt(f[1], 100), ms(1), &mut rng, &mut drops);
        assert_eq!(q.active_queues(), (2, 0));
        // The bulk queue still has 14 B of deficit, so it sends its second packet first.
        assert_eq!(q.dequeue(ms(1), &mut drops).map(|p| p.flow), Some(f[0]));
        assert_eq!(q.dequeue(ms(2), &mut drops).map(|p| p.flow), Some(f[1]));
        // The sparse one, found empty in the new list, goes to the old list behind the bulk one.
        assert_eq!(q.dequeue(ms(2), &mut drops).map(|p| p.flow), Some(f[0]));
        assert_eq!(q.active_queues(), (0, 2));
    }

    #[test]
    fn each_queue_runs_its_own_cobalt() {
        // A standing queue of one flow is dropped by its COBALT; a light flow is never touched.
        let mut q = FqCobaltParams { ecn: false, ..Default::default() }.validate("queue").unwrap();
        let f = distinct_flows(&q, 2);
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut light_sent = 0;
        for t in 0..2000u64 {
            while q.queues[q.queue_of(f[0])].fifo.len() < 40 {
                q.enqueue(pkt(f[0], 1500), ms(t), &mut rng, &mut drops);
            }
            if t % 10 == 0 {
                q.enqueue(pkt(f[1], 1500), ms(t), &mut rng, &mut drops);
            }
            light_sent += u32::from(q.dequeue(ms(t), &mut drops).is_some_and(|p| p.flow == f[1]));
        }
        assert!(!drops.is_empty());
        assert!(drops.iter().all(|(p, k)| p.flow == f[0] && *k == DropKind::Early));
        assert_eq!(light_sent, 200);
        assert_eq!(q.cobalt(q.queue_of(f[1])).count, 0);
        assert!(q.cobalt(q.queue_of(f[0])).count > 1);
    }

    #[test]
    fn ecn_capable_flows_are_marked_not_dropped_by_default() {
        let mut q = FqCobaltParams::default().validate("queue").unwrap();
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut marks = 0;
        for t in 0..1000u64 {
            while q.len_packets() < 30 {
                q.enqueue(Packet { ecn: Ecn::Ect, ..pkt(7, 1500) }, ms(t), &mut rng, &mut drops);
            }
            marks += u64::from(q.dequeue(ms(t), &mut drops).is_some_and(|p| p.ecn == Ecn::Ce));
        }
        assert!(drops.is_empty() && marks > 5, "{marks}");
        assert_eq!(q.stats().marks, marks);
    }

    #[test]
    fn overflow_sheds_the_fattest_queue_without_blue_in_ns3_and_with_it_in_linux() {
        for (variant, p_drop) in [(CobaltVariant::Ns3, 0.0), (CobaltVariant::Linux, P_INC)] {
            let mut q = FqCobaltParams { limit: 100, variant, ..Default::default() }.validate("queue").unwrap();
            let f = distinct_flows(&q, 2);
            let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
            for s in 0..90 {
                q.enqueue(Packet { seq: s, ..pkt(f[0], 1000) }, ms(10), &mut rng, &mut drops);
            }
            for _ in 0..11 {
                q.enqueue(pkt(f[1], 1000), ms(10), &mut rng, &mut drops);
            }
            // 101 packets: the fat queue (90 000 B) loses its 45 oldest (half its bytes).
            assert_eq!(drops.len(), 45);
            assert!(drops.iter().enumerate().all(|(i, (p, k))| p.flow == f[0] && p.seq == i as u32 && *k == DropKind::Overflow));
            assert_eq!(q.len_packets(), 56);
            assert_eq!(q.cobalt(q.queue_of(f[0])).p_drop, p_drop, "{variant:?}");
            assert_eq!(q.cobalt(q.queue_of(f[1])).p_drop, 0.0);
        }
    }

    #[test]
    fn one_queue_at_the_limit_refuses_the_arrival_and_raises_its_blue() {
        // The child CobaltQueueDisc's MaxSize is the parent's: with every packet in one queue,
        // the (limit+1)th arrival is refused by that queue (CobaltQueueFull), not shed.
        let mut q = FqCobaltParams { limit: 10, ..Default::default() }.validate("queue").unwrap();
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..10 {
            q.enqueue(pkt(3, 1000), ms(10), &mut rng, &mut drops);
        }
        assert_eq!(q.enqueue(pkt(3, 1000), ms(10), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
        assert!(drops.is_empty());
        assert_eq!(q.cobalt(q.queue_of(3)).p_drop, P_INC);
    }

    #[test]
    fn set_associative_hash_gives_colliding_flows_their_own_ways() {
        // 16 queues in sets of 8: find two flows whose plain hashes collide; with the set-
        // associative hash the second takes the next free way of the set.
        let plain = FqCobaltParams { flows: 16, ..Default::default() }.validate("queue").unwrap();
        let (a, b) = (0..).flat_map(|a| (a + 1..a + 200).map(move |b| (a, b)))
            .find(|&(a, b)| plain.queue_of(a) == plain.queue_of(b)).unwrap();
        let mut q = FqCobaltParams { flows: 16, set_associative_hash: true, ..Default::default() }.validate("queue").unwrap();
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        q.enqueue(pkt(a, 1000), ms(0), &mut rng, &mut drops);
        q.enqueue(pkt(b, 1000), ms(0), &mut rng, &mut drops);
        assert_eq!(q.active_queues(), (2, 0));
        // A packet of `a` finds its tag: still two queues in use.
        q.enqueue(pkt(a, 1000), ms(0), &mut rng, &mut drops);
        assert_eq!(q.active_queues(), (2, 0));
        let e = FqCobaltParams { flows: 20, set_associative_hash: true, ..Default::default() }.validate("queue").err().unwrap();
        assert!(e.to_string().contains("queue.set_ways"), "{e}");
    }

    #[test]
    fn accounting_holds_over_a_busy_run() {
        let mut q = FqCobaltParams { limit: 50, ecn: false, ..Default::default() }.validate("queue").unwrap();
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for t in 0..5000u64 {
            for f in 0..((t % 7) as u32) {
                q.enqueue(pkt(f, 200 + 100 * f), Time(t * 300_000), &mut rng, &mut drops);
            }
            q.dequeue(Time(t * 300_000), &mut drops);
            q.dequeue(Time(t * 300_000 + Dur::from_micros(100).0), &mut drops);
        }
        let st = q.stats();
        assert_eq!(st.arrivals, st.enqueues + st.drops_overflow - (drops.iter().filter(|d| d.1 == DropKind::Overflow).count() as u64));
        assert_eq!(st.enqueues, st.dequeues + st.drops_early + drops.iter().filter(|d| d.1 == DropKind::Overflow).count() as u64 + q.len_packets() as u64);
        assert_eq!(q.len_bytes(), q.queues.iter().map(|x| x.fifo.bytes()).sum::<u64>());
    }
}
