//! FQ-PIE: the FlowQueue scheduler of FQ-CoDel (RFC 8290 §4) with a PIE controller (RFC 8033)
//! on every flow queue instead of CoDel, as Linux's `net/sched/sch_fq_pie.c` (Ramakrishnan,
//! Tahiliani et al., Linux 5.6) and ns-3 3.44's `FqPieQueueDisc`
//! (`src/traffic-control/model/fq-pie-queue-disc.cc`) build it.
//!
//! * Classification: packets are hashed by flow id into `flows` (1024) queues with the hash of
//!   `fq_codel` (salted by `perturbation`), so distinct flows can share a queue as in both sources.
//! * Enqueue: the arrival's queue first runs its PIE updates due by now; then the early-drop test
//!   of `pie_core` on *that queue's* state and bytes (RFC 8033 §4.1, §5), with ECN marking instead
//!   while `p` is at most `ecn_prob` (Linux `ecn_prob`, 10 %; ns-3: `MarkEcnThreshold`,
//!   0.1, with `<`); a flow queue not in either list joins the tail of the new
//!   list with a deficit of one `quantum`.
//! * Dequeue: deficit round robin over the new list, then the old list (RFC 8290 §4.2), by the
//!   scheduler `fq_codel.rs` uses (`fq_scheduler.rs`); the queue whose turn it is first runs its
//!   PIE updates due by now, and the dequeued packet's sojourn feeds its delay estimate.
//! * Each queue's `p` is updated every `t_update` (RFC 8033 §4.2) from its own delay, lazily as
//!   `pie.rs` does (no engine timer).
//!
//! `variant` switches every place where Linux and ns-3 differ and the difference changes results:
//!
//! | | `"rfc8033"` (Linux `sch_fq_pie`) | `"ns3"` (ns-3 3.44 `FqPieQueueDisc`) |
//! |---|---|---|
//! | PIE per queue | RFC 8033 (`pie`'s `rfc8033`: burst allowance from the start, `p ≤ ecn_prob` marks, "two packets" = 2·`mean_pkt_size` bytes) | ns-3's `PieQueueDisc` (`pie`'s `ns3`: burst state machine, `p < ecn_prob`, "two packets" = 2 packets) |
//! | update instants | `0.5 s + k·t_update` for every queue (Linux's one `fq_pie_timer`, first armed `HZ / 2` after init, walks all flows) | per queue from its creation (ns-3 creates a child `PieQueueDisc` at its first arrival, whose `CalculateP` runs at once, after that enqueue, then every `Tupdate`) |
//! | overflow (`overflow = "auto"`) | `"tail"`: an arrival finding `limit` packets queued is dropped (Linux `qdisc_qlen(sch) >= sch->limit`, `overlimit`) before the PIE test | `"fattest"`: the arrival is enqueued; if the total then exceeds `limit`, packets are dropped from the *head* of the queue with most bytes, up to `drop_batch` and until half its bytes are gone (`FqPieDrop`, as `fq_codel_drop`) |
//! | when a queue joins the new list | only once the arrival is accepted | before the PIE test (so an early-dropped first packet leaves an empty queue in the new list) |
//!
//! Not modelled: Linux's `memory_limit` (32 MB of `skb->truesize`; exceeding it only counts
//! `overmemory`, nothing is dropped), Linux's update period in jiffies (15 ms is 4 jiffies, 16 ms,
//! at HZ = 250), Linux's PIE arithmetic where it departs from RFC 8033 (scaled
//! integers, burst time spent per dequeue, `qdelay` rather than `qdelay_old` in the low-delay
//! safeguard, `2·MTU` rather than `2·mean_pkt_size`), ns-3's set-associative hash (off by default)
//! and L4S / `CeThreshold` (off by default).
//!
//! Defaults are Linux's and ns-3's where they agree (1024 queues, 10240 packets, 15 ms target and
//! update period, 150 ms burst allowance, alpha 0.125 and beta 1.25), ECN off as in Linux (ns-3
//! 3.44's `UseEcn` defaults to true: state `ecn = true` to match it) and a quantum of
//! 1514 B (Linux: the device MTU plus its link header); ns-3's quantum is the device MTU, so
//! with `variant = "ns3"` state it (as for `fq_codel`).

use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::fq_codel::flow_hash;
use super::fq_scheduler::{self, FlowScheduler};
use super::pie::{DelayEstimator, PieVariant};
use super::pie_core::{PieLaw, PieState};
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{check_range, join, ConfigError, ConfigResult};
use crate::packet::{Ecn, FlowId, Packet};
use crate::scenario::units::{Bytes, Duration};

/// Linux's `fq_pie_init` arms the update timer this long after the qdisc is created.
const LINUX_FIRST_UPDATE: Dur = Dur::from_millis(500);

/// What happens when the discipline holds `limit` packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FqPieOverflow {
    /// As `variant` says: `tail` for `rfc8033` (Linux), `fattest` for `ns3`.
    #[default]
    Auto,
    /// Drop the arrival (Linux `sch_fq_pie`).
    Tail,
    /// Enqueue it, then drop from the head of the queue with most bytes (ns-3 `FqPieDrop`).
    Fattest,
}

/// Scenario keys of `kind = "fq_pie"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FqPieParams {
    /// `"rfc8033"` (default; Linux `sch_fq_pie`) or `"ns3"` (ns-3 3.44 `FqPieQueueDisc`).
    #[serde(default)]
    pub variant: PieVariant,
    /// Packets the whole discipline holds (Linux `limit`, ns-3 `MaxSize`: 10240).
    #[serde(default = "default_limit")]
    pub limit: u32,
    /// Flow queues packets are hashed into (1024).
    #[serde(default = "default_flows")]
    pub flows: u32,
    /// Bytes a queue may send per round (1514).
    #[serde(default = "default_quantum")]
    pub quantum: Bytes,
    /// Salt of the flow hash.
    #[serde(default)]
    pub perturbation: u32,
    /// `"auto"` (default), `"tail"` or `"fattest"`.
    #[serde(default)]
    pub overflow: FqPieOverflow,
    /// Most packets dropped from the fattest queue on one overflow (64; `fattest` only).
    #[serde(default = "default_drop_batch", deserialize_with = "crate::scenario::units::int_in::<_, _, 1, 65536>")]
    pub drop_batch: u32,
    /// Target queueing delay of each queue (15 ms).
    #[serde(default = "default_target")]
    pub target: Duration,
    /// Update period of each queue's `p` (15 ms).
    #[serde(default = "default_t_update")]
    pub t_update: Duration,
    /// Burst allowance (150 ms).
    #[serde(default = "default_max_burst")]
    pub max_burst: Duration,
    /// Weight of the delay error, per second (0.125).
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Weight of the delay trend, per second (1.25).
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// `"timestamp"` (default) or `"dq_rate"`.
    #[serde(default)]
    pub delay_estimator: DelayEstimator,
    /// Bytes a departure-rate measurement cycle needs (16384).
    #[serde(default = "default_dq_threshold")]
    pub dq_threshold: Bytes,
    /// Mean packet size: the two-packet safeguard's unit and byte mode's reference (1000 B).
    #[serde(default = "default_mean_pkt_size")]
    pub mean_pkt_size: Bytes,
    /// Cap each increase of `p` at 0.02 once `p ≥ 0.1` (RFC §5.5; true).
    #[serde(default = "default_true")]
    pub cap_drop_adjustment: bool,
    /// CE-mark ECN-capable packets picked for an early drop while `p` is low (false).
    #[serde(default)]
    pub ecn: bool,
    /// Highest `p` at which `ecn` marks, a probability (Linux `ecn_prob` 10 %: 0.1).
    #[serde(default = "default_ecn_prob")]
    pub ecn_prob: f64,
    /// Scale an arrival's `p` by `size / mean_pkt_size` (Linux `bytemode`; false).
    #[serde(default)]
    pub bytemode: bool,
    /// Derandomized drops (RFC §5.3; false).
    #[serde(default)]
    pub derandomize: bool,
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
fn default_target() -> Duration {
    Duration(Dur::from_millis(15))
}
fn default_t_update() -> Duration {
    Duration(Dur::from_millis(15))
}
fn default_max_burst() -> Duration {
    Duration(Dur::from_millis(150))
}
fn default_alpha() -> f64 {
    0.125
}
fn default_beta() -> f64 {
    1.25
}
fn default_dq_threshold() -> Bytes {
    Bytes(16384)
}
fn default_mean_pkt_size() -> Bytes {
    Bytes(1000)
}
fn default_true() -> bool {
    true
}
fn default_ecn_prob() -> f64 {
    0.1
}

impl Default for FqPieParams {
    fn default() -> Self {
        FqPieParams {
            variant: PieVariant::default(),
            limit: default_limit(),
            flows: default_flows(),
            quantum: default_quantum(),
            perturbation: 0,
            overflow: FqPieOverflow::default(),
            drop_batch: default_drop_batch(),
            target: default_target(),
            t_update: default_t_update(),
            max_burst: default_max_burst(),
            alpha: default_alpha(),
            beta: default_beta(),
            delay_estimator: DelayEstimator::default(),
            dq_threshold: default_dq_threshold(),
            mean_pkt_size: default_mean_pkt_size(),
            cap_drop_adjustment: true,
            ecn: false,
            ecn_prob: default_ecn_prob(),
            bytemode: false,
            derandomize: false,
        }
    }
}

impl FqPieParams {
    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<FqPie> {
        let key = |k: &str| join(path, k);
        check_range(path, "limit", u64::from(self.limit), 1, 1 << 24)?;
        check_range(path, "flows", u64::from(self.flows), 1, 65536)?;
        check_range(path, "quantum", self.quantum.0, 1, 1 << 20)?;
        check_range(path, "drop_batch", u64::from(self.drop_batch), 1, 1 << 16)?;
        for (name, v) in [("alpha", self.alpha), ("beta", self.beta)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::new(key(name), format!("must be a finite number >= 0 (per second), got {v}")));
            }
        }
        for (name, d) in [("target", self.target), ("t_update", self.t_update)] {
            if d.0 == Dur::ZERO {
                return Err(ConfigError::new(key(name), "must be a positive duration, got 0"));
            }
        }
        check_range(path, "dq_threshold", self.dq_threshold.0, 1, 1 << 30)?;
        check_range(path, "mean_pkt_size", self.mean_pkt_size.0, 1, 1 << 20)?;
        if !(self.ecn_prob.is_finite() && (0.0..=1.0).contains(&self.ecn_prob)) {
            return Err(ConfigError::new(key("ecn_prob"), format!("must be a probability in [0, 1], got {}", self.ecn_prob)));
        }
        let ns3 = self.variant == PieVariant::Ns3;
        let law = PieLaw {
            variant: self.variant,
            target: self.target.0,
            t_update: self.t_update.0,
            max_burst: self.max_burst.0,
            alpha: self.alpha,
            beta: self.beta,
            delay_estimator: self.delay_estimator,
            dq_threshold: self.dq_threshold.0,
            mean_pkt_size: self.mean_pkt_size.0,
            cap_drop_adjustment: self.cap_drop_adjustment,
            ecn: self.ecn,
            mark_ecn_threshold: self.ecn_prob,
            derandomize: self.derandomize,
            byte_scaled: self.bytemode,
            // ns-3's children have a packet limit: "at most two packets"; RFC: two mean packets.
            short_in_packets: ns3,
        };
        let tail_drop = match self.overflow {
            FqPieOverflow::Auto => !ns3,
            FqPieOverflow::Tail => true,
            FqPieOverflow::Fattest => false,
        };
        // Linux: every queue on the one timer's grid, armed half a second after init
        // (`mod_timer(&q->adapt_timer, jiffies + HZ / 2)`); ns-3: set when the queue is created.
        let idle = PieState::new(&law, Time(LINUX_FIRST_UPDATE.0));
        Ok(FqPie {
            law,
            limit: self.limit as usize,
            drop_batch: self.drop_batch,
            perturbation: self.perturbation,
            tail_drop,
            queues: (0..self.flows).map(|_| FlowQueue { fifo: Fifo::default(), pie: idle, created: false }).collect(),
            scheduler: FlowScheduler::new(self.flows as usize, self.quantum.0),
            len: 0,
            bytes: 0,
            stats: QdiscStats::default(),
        })
    }
}

/// One hashed flow queue with its PIE (its deficit and list are the scheduler's).
struct FlowQueue {
    fifo: Fifo,
    pie: PieState,
    /// ns-3: whether the child `PieQueueDisc` exists yet (its update grid starts then).
    created: bool,
}

impl AsMut<Fifo> for FlowQueue {
    fn as_mut(&mut self) -> &mut Fifo {
        &mut self.fifo
    }
}

/// FQ-PIE.
pub struct FqPie {
    law: PieLaw,
    limit: usize,
    drop_batch: u32,
    perturbation: u32,
    /// Overflow drops the arrival (Linux) rather than the fattest queue's head (ns-3).
    tail_drop: bool,
    queues: Vec<FlowQueue>,
    scheduler: FlowScheduler,
    /// Packets queued over all queues.
    len: usize,
    /// Bytes queued over all queues; the sum of the queues' `fifo.bytes()`.
    bytes: u64,
    stats: QdiscStats,
}

impl FqPie {
    /// The queue `flow` is hashed into.
    pub fn queue_of(&self, flow: FlowId) -> usize {
        (flow_hash(flow, self.perturbation) % self.queues.len() as u32) as usize
    }

    /// The drop probability of the queue `flow` is hashed into.
    pub fn drop_probability(&self, flow: FlowId) -> f64 {
        self.queues[self.queue_of(flow)].pie.p
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

impl Qdisc for FqPie {
    fn enqueue(&mut self, mut pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        let ns3 = self.law.variant == PieVariant::Ns3;
        let i = self.queue_of(pkt.flow);
        let law = self.law;
        let q = &mut self.queues[i];
        // ns-3 creates the child PIE now; its first CalculateP runs right after this enqueue.
        let created_now = ns3 && !q.created;
        if created_now {
            q.created = true;
            q.pie = PieState::new(&law, now + law.t_update);
        }
        q.pie.catch_up(&law, now, &q.fifo);
        if self.tail_drop && self.len >= self.limit {
            q.pie.on_drop();
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        if ns3 {
            self.scheduler.activate(i);
        }
        let q = &mut self.queues[i];
        let mut verdict = Verdict::Enqueued;
        if q.pie.drop_early(&law, pkt.size, &q.fifo, rng) {
            if q.pie.marks(&law, &pkt) {
                pkt.ecn = Ecn::Ce;
                self.stats.marks += 1;
                verdict = Verdict::Marked;
            } else {
                q.pie.on_drop();
                self.stats.count_drop(DropKind::Early);
                verdict = Verdict::Dropped(DropKind::Early);
            }
        }
        if verdict != Verdict::Dropped(DropKind::Early) {
            self.bytes += u64::from(pkt.size);
            q.fifo.push(pkt, now);
            self.len += 1;
            self.stats.enqueues += 1;
        }
        let q = &mut self.queues[i];
        if created_now {
            q.pie.update(&law, &q.fifo);
        }
        if verdict == Verdict::Dropped(DropKind::Early) {
            return verdict;
        }
        if !ns3 {
            self.scheduler.activate(i);
        }
        if !self.tail_drop && self.len > self.limit {
            self.drop_from_fattest(drops);
        }
        verdict
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let law = self.law;
        let pkt = self.scheduler.dequeue(|i| {
            let q = &mut self.queues[i];
            q.pie.catch_up(&law, now, &q.fifo);
            let p = q.fifo.pop()?;
            self.len -= 1;
            self.bytes -= u64::from(p.size);
            q.pie.on_dequeue(&law, &p, now, &q.fifo);
            Some(p)
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
#[path = "fq_pie_tests.rs"]
mod tests;
