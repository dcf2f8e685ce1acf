//! FQ-CoDel (Hoeiland-Joergensen, McKenney, Taht, Gettys & Dumazet, RFC 8290): packets are
//! hashed by flow into `flows` queues, each with its own CoDel (`codel_core.rs`); a deficit round
//! robin with a quantum of bytes serves them, new flows first (RFC 8290 §4).
//!
//! * Enqueue (§4.1): the packet goes to its flow's queue; a flow not in either list joins the
//!   tail of the new list with a deficit of one quantum. When the whole discipline then holds more
//!   than `limit` packets, packets are dropped from the head of the queue with the most bytes, up
//!   to `drop_batch` of them and until half its bytes are gone (`Overflow`; Linux's and ns-3's
//!   `fq_codel_drop`).
//! * Dequeue (§4.2): the scheduler of `fq_scheduler.rs` picks the first flow of the new list,
//!   else of the old list, topping up spent deficits. Its CoDel gives the packet (and may drop
//!   some, `Early`), whose size is charged to the deficit. A flow found empty (CoDel may have
//!   dropped what it held) leaves the new list for the old list's tail, or leaves the old list.
//!
//! The flow hash is a 32-bit mix of the flow id and `perturbation`, so as in the real thing
//! distinct flows can share a queue (with 1024 queues, two of 10 flows do with probability ~4 %).
//! As in ns-3 3.44, each queue's CoDel counts only its own bytes for "few bytes queued" (Linux
//! counts the whole discipline's). Defaults are RFC 8290's / Linux's: 1024 queues, a quantum of
//! 1514 B, 10240 packets, ECN marking on, batches of 64; `variant = "ns3"` uses ns-3's CoDel
//! arithmetic and its quantum (the device MTU) must then be stated (docs/codel.md).

use serde::{Deserialize, Serialize};

use super::codel::{codel_config, default_interval, default_target};
use super::codel_core::{CodelConfig, CodelState, CodelVariant};
use super::fifo::Fifo;
use super::fq_scheduler::{self, FlowScheduler};
use super::{DropBuf, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{check_range, ConfigResult};
use crate::packet::{FlowId, Packet};
use crate::scenario::units::{Bytes, Duration, SizeOrAuto};

/// Scenario keys of `kind = "fq_codel"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelParams {
    /// CoDel's target on each queue (5 ms).
    #[serde(default = "default_target")]
    pub target: Duration,
    /// CoDel's interval on each queue (100 ms).
    #[serde(default = "default_interval")]
    pub interval: Duration,
    /// Packets the whole discipline holds before it drops from the fattest queue (10240).
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Number of flow queues packets are hashed into (1024).
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// Bytes a queue may send per round (1514: an Ethernet MTU with its header).
    #[serde(default = "default_quantum")]
    pub quantum: Bytes,
    /// Most packets dropped from the fattest queue on one overflow (64).
    #[serde(default = "default_drop_batch", deserialize_with = "crate::scenario::units::int_in::<_, _, 1, 65536>")]
    pub drop_batch: u32,
    /// Salt of the flow hash: another value maps flows to queues differently.
    #[serde(default)]
    pub perturbation: u32,
    /// Mark ECN-capable packets instead of dropping them (RFC 8290 §5.1: on).
    #[serde(default = "default_ecn")]
    pub ecn: bool,
    /// CoDel's "few bytes" floor per queue; `"auto"`: as the variant says (see `codel`).
    #[serde(default)]
    pub min_bytes: SizeOrAuto,
    /// CoDel's arithmetic on each queue: `rfc8289` or `ns3`.
    #[serde(default)]
    pub variant: CodelVariant,
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

impl Default for FqCodelParams {
    fn default() -> Self {
        FqCodelParams {
            target: default_target(),
            interval: default_interval(),
            limit: default_limit(),
            flows: default_flows(),
            quantum: default_quantum(),
            drop_batch: default_drop_batch(),
            perturbation: 0,
            ecn: default_ecn(),
            min_bytes: SizeOrAuto::Auto,
            variant: CodelVariant::default(),
        }
    }
}

impl FqCodelParams {
    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<FqCodel> {
        let cfg = codel_config(path, self.target, self.interval, self.min_bytes, self.ecn, self.variant)?;
        check_range(path, "limit", u64::from(self.limit), 1, 1 << 24)?;
        check_range(path, "flows", u64::from(self.flows), 1, 65536)?;
        check_range(path, "quantum", self.quantum.0, 1, 1 << 20)?;
        check_range(path, "drop_batch", u64::from(self.drop_batch), 1, 1 << 16)?;
        Ok(FqCodel {
            cfg,
            limit: self.limit as usize,
            drop_batch: self.drop_batch,
            perturbation: self.perturbation,
            queues: (0..self.flows).map(|_| FlowQueue::default()).collect(),
            scheduler: FlowScheduler::new(self.flows as usize, self.quantum.0),
            len: 0,
            bytes: 0,
            stats: QdiscStats::default(),
        })
    }
}

/// One hashed flow queue with its CoDel (its deficit and list are the scheduler's).
#[derive(Default)]
struct FlowQueue {
    fifo: Fifo,
    codel: CodelState,
}

impl AsMut<Fifo> for FlowQueue {
    fn as_mut(&mut self) -> &mut Fifo {
        &mut self.fifo
    }
}

/// FQ-CoDel.
pub struct FqCodel {
    cfg: CodelConfig,
    limit: usize,
    drop_batch: u32,
    perturbation: u32,
    queues: Vec<FlowQueue>,
    scheduler: FlowScheduler,
    len: usize,
    bytes: u64,
    stats: QdiscStats,
}

/// A 32-bit hash of the flow id and the salt (murmur3's finaliser).
pub(super) fn flow_hash(flow: FlowId, perturbation: u32) -> u32 {
    let mut h = flow ^ perturbation.wrapping_mul(0x9e37_79b9);
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

impl FqCodel {
    /// The queue `flow` is hashed into.
    pub fn queue_of(&self, flow: FlowId) -> usize {
        (flow_hash(flow, self.perturbation) % self.queues.len() as u32) as usize
    }

    /// Queues in the new and the old list.
    pub fn active_queues(&self) -> (usize, usize) {
        self.scheduler.active_queues()
    }

    /// Sheds from the fattest queue on overflow (`fq_scheduler::drop_from_fattest`).
    fn drop_from_fattest(&mut self, drops: &mut DropBuf) {
        let (packets, bytes) = fq_scheduler::drop_from_fattest(&mut self.queues, self.drop_batch, &mut self.stats, drops);
        self.len -= packets;
        self.bytes -= bytes;
    }
}

impl Qdisc for FqCodel {
    fn enqueue(&mut self, pkt: Packet, now: Time, _rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        let i = self.queue_of(pkt.flow);
        self.scheduler.activate(i);
        let q = &mut self.queues[i];
        q.codel.on_enqueue(&pkt);
        self.bytes += u64::from(pkt.size);
        q.fifo.push(pkt, now);
        self.len += 1;
        self.stats.enqueues += 1;
        if self.len > self.limit {
            self.drop_from_fattest(drops);
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
        let pkt = self.scheduler.dequeue(|i| {
            let q = &mut self.queues[i];
            let (len_before, bytes_before) = (q.fifo.len(), q.fifo.bytes());
            let pkt = q.codel.dequeue(&self.cfg, &mut q.fifo, now, &mut self.stats, drops);
            self.len -= len_before - q.fifo.len();
            self.bytes -= bytes_before - q.fifo.bytes();
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::DropKind;
    use crate::engine::{stream, Dur, StreamId};
    use crate::packet::PacketKind;

    fn pkt(flow: FlowId, size: u32) -> Packet {
        Packet { size, ..Packet::new(PacketKind::Udp, flow) }
    }

    /// Flows whose ids hash to distinct queues under the default parameters.
    fn distinct_flows(q: &FqCodel, n: usize) -> Vec<FlowId> {
        let mut seen = std::collections::HashSet::new();
        (0..).filter(|&f| seen.insert(q.queue_of(f))).take(n).collect()
    }

    #[test]
    fn a_sparse_flow_is_served_before_a_backlogged_one() {
        let mut q = FqCodelParams::default().validate("queue").unwrap();
        let f = distinct_flows(&q, 2);
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..50 {
            q.enqueue(pkt(f[0], 1500), Time(0), &mut rng, &mut drops);
        }
        // The bulk flow has sent two packets (its first quantum) when the sparse one arrives.
        q.dequeue(Time(1), &mut drops);
        q.dequeue(Time(2), &mut drops);
        q.enqueue(pkt(f[1], 100), Time(3), &mut rng, &mut drops);
        assert_eq!(q.dequeue(Time(4), &mut drops).map(|p| p.flow), Some(f[1]));
    }

    #[test]
    fn backlogged_flows_share_the_link_byte_fairly_whatever_their_packet_size() {
        let mut q = FqCodelParams::default().validate("queue").unwrap();
        let f = distinct_flows(&q, 2);
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..3000 {
            q.enqueue(pkt(f[0], 1500), Time(0), &mut rng, &mut drops);
            q.enqueue(pkt(f[0], 1500), Time(0), &mut rng, &mut drops);
            q.enqueue(pkt(f[1], 300), Time(0), &mut rng, &mut drops);
        }
        let mut sent = [0u64; 2];
        for t in 0..2000 {
            let p = q.dequeue(Time(t), &mut drops).unwrap();
            sent[usize::from(p.flow == f[1])] += u64::from(p.size);
        }
        let share = sent[1] as f64 / (sent[0] + sent[1]) as f64;
        assert!((share - 0.5).abs() < 0.02, "{sent:?}");
    }

    #[test]
    fn overflow_sheds_half_of_the_fattest_queue_from_its_head() {
        let mut q = FqCodelParams { limit: 100, ..FqCodelParams::default() }.validate("queue").unwrap();
        let f = distinct_flows(&q, 2);
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for s in 0..90 {
            q.enqueue(Packet { seq: s, ..pkt(f[0], 1000) }, Time(0), &mut rng, &mut drops);
        }
        for _ in 0..10 {
            q.enqueue(pkt(f[1], 1000), Time(0), &mut rng, &mut drops);
        }
        assert!(drops.is_empty());
        assert_eq!(q.enqueue(pkt(f[1], 1000), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        // 90 000 B in the fat queue: 45 dropped would be half, but a batch stops at 64 packets
        // or half the bytes, whichever first: 45 packets, oldest first.
        assert_eq!(drops.len(), 45);
        assert!(drops.iter().enumerate().all(|(i, (p, k))| p.flow == f[0] && p.seq == i as u32 && *k == DropKind::Overflow));
        assert_eq!(q.len_packets(), 101 - 45);
        let st = q.stats();
        assert_eq!(st.enqueues, st.dequeues + st.drops() + q.len_packets() as u64);
    }

    #[test]
    fn each_queue_runs_its_own_codel() {
        // A flow with a standing queue is CoDel-dropped; a light flow sharing the link is not.
        let mut q = FqCodelParams { ecn: false, ..FqCodelParams::default() }.validate("queue").unwrap();
        let f = distinct_flows(&q, 2);
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut light_sent = 0;
        for t in 0..2000u64 {
            let now = Time(t * Dur::from_millis(1).0);
            while q.queues[q.queue_of(f[0])].fifo.len() < 40 {
                q.enqueue(pkt(f[0], 1500), now, &mut rng, &mut drops);
            }
            if t % 10 == 0 {
                q.enqueue(pkt(f[1], 1500), now, &mut rng, &mut drops);
            }
            if q.dequeue(now, &mut drops).is_some_and(|p| p.flow == f[1]) {
                light_sent += 1;
            }
        }
        assert!(!drops.is_empty());
        assert!(drops.iter().all(|(p, k)| p.flow == f[0] && *k == DropKind::Early));
        assert_eq!(light_sent, 200);
    }

    #[test]
    fn bad_keys_are_refused_with_the_key_named() {
        for (p, key) in [
            (FqCodelParams { flows: 0, ..FqCodelParams::default() }, "queue.flows"),
            (FqCodelParams { quantum: Bytes(0), ..FqCodelParams::default() }, "queue.quantum"),
            (FqCodelParams { limit: 0, ..FqCodelParams::default() }, "queue.limit"),
        ] {
            let e = p.validate("queue").err().unwrap();
            assert!(e.to_string().contains(key), "{e}");
        }
    }
}
