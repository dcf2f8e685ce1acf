//! TSQ, Traffic Sensitive QoS over PI (Kumar 2003, ch. 4; spec `seed002-tsq.md` §2.2–2.5): each
//! packet carries a delay hint d ∈ 1..16 (1 = most delay-sensitive, 16 = plain best effort);
//! low-hint packets cut in line, and pay for it with a higher drop probability so that a
//! TCP-like flow gains no throughput from the shorter RTT.
//!
//! Per arrival at `t_a` (Fig. 4.2):
//! * `t_d = bytes queued · 8 / C` (drain time at the tail; the packet on the wire is not queued,
//!   resolution A5) and the weight **w = t_a + d·t_d/16** (Eq. 4.1);
//! * the insertion point is after every queued packet with weight ≤ w (stable ties, A9), and
//!   `q′ = bytes ahead of it · 8 / C`;
//! * **p′ = p·((l + t_d)/(l + q′))²** (Eq. 4.4), clamped to 1 (A6), with `p` the PI controller's
//!   probability ([`super::pi`]) and l = 40 ms; q and q′ are *delays* (A1: the thesis adds l in
//!   ms to a "queue length", and only times make the sum dimensionally consistent).
//!   Worked number: t_d = 106.7 ms (200 packets of 1000 B at 15 Mb/s), hint 6 behind hint-16
//!   traffic, q′ ≈ 40 ms: p′ = p·(146.7/80)² = 3.36·p (spec §5.8);
//! * one uniform draw, dropped (`Early`) when `u ≤ p′`; otherwise inserted. Service takes the
//!   lowest weight.
//!
//! Choices where the thesis is silent or ambiguous, each a switch:
//! * `enabled = false` is "TSQ off": PI alone over the same FIFO order, every packet treated as
//!   hint 16 (p′ = p). It uses the random stream exactly as `kind = "pi"` does, so the two give
//!   identical runs (tested).
//! * `penalty_position` (A2): `actual` (default; q′ from the bytes really ahead, as the
//!   pseudocode's `weightedInsert` result) or `target` (q′ = d·t_d/16).
//! * `overflow` (A7, not stated in the thesis): `drop-arrival` (default; cleaner, keeps the
//!   aging invariant) or `drop-last` (ns-2 `Queue/PI`: the arrival is inserted and the
//!   last-positioned packet, the one with the largest weight, is dropped; under TSQ that is usually
//!   a hint-16 packet). A forced drop makes no random draw.
//! * Packets without a hint (0) count as `default_hint` (16); hints above 16 count as 16.
//!
//! The queue is a weight-ordered treap (an order-statistic tree with subtree byte sums): insertion,
//! bytes-ahead and removal of the head or the tail are O(log n) expected. Its node priorities come
//! from a fixed internal generator, never from the run's random stream. Nodes live in a vector with
//! a free list, so the steady state allocates nothing.

use serde::{Deserialize, Serialize};

use super::pi::{default_a, default_b, default_limit, default_q_ref, default_sample_rate, PiController, PiParams};
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::Packet;
use crate::scenario::units::Duration;

/// Number of hint levels, 2^n with n = 4 bits (Sec. 4.1).
pub const HINT_LEVELS: u8 = 16;

/// Where q′ in Eq. 4.4 comes from (resolution A2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PenaltyPosition {
    /// The delay of the bytes really ahead of the insertion point.
    #[default]
    Actual,
    /// The target delay d·t_d/16.
    Target,
}

/// What a full buffer drops (resolution A7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TsqOverflow {
    /// The arriving packet.
    #[default]
    DropArrival,
    /// The packet with the largest weight after inserting the arrival (ns-2 `Queue/PI`).
    DropLast,
}

/// Scenario keys of `kind = "tsq"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TsqParams {
    /// TSQ on (cut-in-line and the p′ penalty) or off (PI alone).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// The latency constant l of Eq. 4.4 (40 ms in every experiment of the thesis).
    #[serde(default = "default_latency")]
    pub latency: Duration,
    /// Source of q′ in Eq. 4.4.
    #[serde(default)]
    pub penalty_position: PenaltyPosition,
    /// What a full buffer drops.
    #[serde(default)]
    pub overflow: TsqOverflow,
    /// Hint for packets that carry none (0).
    #[serde(default = "default_hint")]
    pub default_hint: u8,
    /// PI coefficient a (ns-2 `a_`).
    #[serde(default = "default_a", alias = "a_")]
    pub a: f64,
    /// PI coefficient b (ns-2 `b_`).
    #[serde(default = "default_b", alias = "b_")]
    pub b: f64,
    /// PI sampling frequency, Hz (ns-2 `w_`).
    #[serde(default = "default_sample_rate", alias = "w", alias = "w_")]
    pub sample_rate: f64,
    /// PI target queue, packets (ns-2 `qref_`).
    #[serde(default = "default_q_ref", alias = "qref_")]
    pub q_ref: f64,
    /// Buffer, packets.
    #[serde(default = "default_limit")]
    pub limit: u32,
}

fn default_true() -> bool {
    true
}
fn default_latency() -> Duration {
    Duration(Dur::from_millis(40))
}
fn default_hint() -> u8 {
    HINT_LEVELS
}

impl Default for TsqParams {
    fn default() -> Self {
        TsqParams {
            enabled: true,
            latency: default_latency(),
            penalty_position: PenaltyPosition::default(),
            overflow: TsqOverflow::default(),
            default_hint: default_hint(),
            a: default_a(),
            b: default_b(),
            sample_rate: default_sample_rate(),
            q_ref: default_q_ref(),
            limit: default_limit(),
        }
    }
}

impl TsqParams {
    /// Checks the keys and builds the discipline for a link of `rate_bps`.
    pub fn validate(&self, path: &str, rate_bps: f64) -> ConfigResult<Tsq> {
        let pi = PiParams { a: self.a, b: self.b, sample_rate: self.sample_rate, q_ref: self.q_ref, limit: self.limit };
        let ctl = pi.controller(path)?;
        if !(1..=HINT_LEVELS).contains(&self.default_hint) {
            return Err(ConfigError::new(
                join(path, "default_hint"),
                format!("must be an integer from 1 to {HINT_LEVELS}, got {}", self.default_hint),
            ));
        }
        Ok(Tsq::new(TsqConfig {
            enabled: self.enabled,
            latency_s: self.latency.0.as_secs_f64(),
            penalty_position: self.penalty_position,
            overflow: self.overflow,
            default_hint: self.default_hint,
            limit: self.limit,
            rate_bps,
        }, ctl))
    }
}

/// Validated TSQ settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TsqConfig {
    /// TSQ on.
    pub enabled: bool,
    /// l, seconds.
    pub latency_s: f64,
    /// Source of q′.
    pub penalty_position: PenaltyPosition,
    /// Full-buffer policy.
    pub overflow: TsqOverflow,
    /// Hint of unhinted packets, 1..=16.
    pub default_hint: u8,
    /// Buffer, packets.
    pub limit: u32,
    /// Output link rate C, bits/s.
    pub rate_bps: f64,
}

/// Eq. 4.4: p′ = p·((l + q)/(l + q′))², clamped to [0, 1]; q, q′ and l in seconds. p′ = p when
/// q′ = q, and p′ = 0 when p = 0 (cut-in is then free, spec §2.7 item 3).
pub fn adjusted_probability(p: f64, latency_s: f64, q_s: f64, q_prime_s: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    if q_prime_s >= q_s {
        return p.min(1.0);
    }
    let den = latency_s + q_prime_s;
    if den <= 0.0 {
        return 1.0; // l = 0 and cut to the very head of a non-empty queue: unbounded factor
    }
    let f = (latency_s + q_s) / den;
    (p * f * f).min(1.0)
}

/// Eq. 4.1: w = t_a + d·t_d/2^n, in nanoseconds (as `f64`: integer times and, when the link rate
/// divides 8e9 evenly, integer drain times are then exact, so hint-16 arrivals tie exactly).
pub fn weight(arrival_ns: f64, hint: u8, drain_ns: f64) -> f64 {
    arrival_ns + f64::from(hint) * drain_ns / f64::from(HINT_LEVELS)
}

const NIL: u32 = u32::MAX;

/// One queued packet and its subtree aggregates.
#[derive(Clone, Copy, Debug)]
struct Node {
    w: f64,
    /// Insertion number; breaks weight ties in arrival order.
    seq: u64,
    prio: u64,
    left: u32,
    right: u32,
    /// Bytes in this subtree.
    bytes: u64,
    /// Packets in this subtree.
    count: u32,
    pkt: Packet,
}

/// Packets ordered by (weight, insertion number): a treap with subtree byte and packet counts.
/// Invariant: `bytes()` is the sum of `size` over the packets; in-order traversal is ascending.
#[derive(Clone, Debug)]
pub struct WeightQueue {
    nodes: Vec<Node>,
    free: Vec<u32>,
    root: u32,
    next_seq: u64,
    prio_state: u64,
}

impl WeightQueue {
    /// An empty queue with room for `capacity` packets.
    pub fn with_capacity(capacity: usize) -> WeightQueue {
        WeightQueue {
            nodes: Vec::with_capacity(capacity),
            free: Vec::with_capacity(capacity),
            root: NIL,
            next_seq: 0,
            prio_state: 0x9E37_79B9_7F4A_7C15,
        }
    }

    fn next_prio(&mut self) -> u64 {
        // xorshift64*: a fixed, run-independent sequence (the treap's shape never changes results)
        let mut x = self.prio_state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.prio_state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.count(self.root) as usize
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.root == NIL
    }

    /// Bytes queued.
    pub fn bytes(&self) -> u64 {
        self.bytes_of(self.root)
    }

    fn count(&self, t: u32) -> u32 {
        if t == NIL { 0 } else { self.nodes[t as usize].count }
    }

    fn bytes_of(&self, t: u32) -> u64 {
        if t == NIL { 0 } else { self.nodes[t as usize].bytes }
    }

    fn update(&mut self, t: u32) {
        let (l, r) = (self.nodes[t as usize].left, self.nodes[t as usize].right);
        let (cl, cr, bl, br) = (self.count(l), self.count(r), self.bytes_of(l), self.bytes_of(r));
        let n = &mut self.nodes[t as usize];
        n.count = cl + cr + 1;
        n.bytes = bl + br + u64::from(n.pkt.size);
    }

    fn before(&self, t: u32, w: f64, seq: u64) -> bool {
        let n = &self.nodes[t as usize];
        n.w.total_cmp(&w).then(n.seq.cmp(&seq)).is_lt()
    }

    /// (packets, bytes) of the queued packets a new packet of weight `w` would be inserted behind:
    /// every packet with weight ≤ w. O(depth).
    pub fn ahead_of(&self, w: f64) -> (usize, u64) {
        let (mut t, mut pkts, mut bytes) = (self.root, 0usize, 0u64);
        while t != NIL {
            let n = &self.nodes[t as usize];
            if self.before(t, w, self.next_seq) {
                pkts += self.count(n.left) as usize + 1;
                bytes += self.bytes_of(n.left) + u64::from(n.pkt.size);
                t = n.right;
            } else {
                t = n.left;
            }
        }
        (pkts, bytes)
    }

    /// Splits `t` into (keys before (w, seq), the rest).
    fn split(&mut self, t: u32, w: f64, seq: u64) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        if self.before(t, w, seq) {
            let (l, r) = self.split(self.nodes[t as usize].right, w, seq);
            self.nodes[t as usize].right = l;
            self.update(t);
            (t, r)
        } else {
            let (l, r) = self.split(self.nodes[t as usize].left, w, seq);
            self.nodes[t as usize].left = r;
            self.update(t);
            (l, t)
        }
    }

    /// Joins `a` and `b`, every key of `a` before every key of `b`.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].prio > self.nodes[b as usize].prio {
            let r = self.merge(self.nodes[a as usize].right, b);
            self.nodes[a as usize].right = r;
            self.update(a);
            a
        } else {
            let l = self.merge(a, self.nodes[b as usize].left);
            self.nodes[b as usize].left = l;
            self.update(b);
            b
        }
    }

    /// Inserts `pkt` with weight `w` after every packet of weight ≤ w; returns its insertion
    /// number. O(log n) expected.
    pub fn insert(&mut self, w: f64, pkt: Packet) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        let prio = self.next_prio();
        let node = Node { w, seq, prio, left: NIL, right: NIL, bytes: u64::from(pkt.size), count: 1, pkt };
        let idx = match self.free.pop() {
            Some(i) => {
                self.nodes[i as usize] = node;
                i
            }
            None => {
                self.nodes.push(node);
                (self.nodes.len() - 1) as u32
            }
        };
        let (l, r) = self.split(self.root, w, seq);
        let l = self.merge(l, idx);
        self.root = self.merge(l, r);
        seq
    }

    /// Removes the lowest-weight packet.
    pub fn pop_first(&mut self) -> Option<Packet> {
        if self.root == NIL {
            return None;
        }
        let (root, idx) = self.remove_edge(self.root, true);
        self.root = root;
        self.free.push(idx);
        Some(self.nodes[idx as usize].pkt)
    }

    /// Removes the highest-weight packet (the last in service order).
    pub fn pop_last(&mut self) -> Option<Packet> {
        self.pop_last_numbered().map(|(_, p)| p)
    }

    /// As [`WeightQueue::pop_last`], with the packet's insertion number.
    pub fn pop_last_numbered(&mut self) -> Option<(u64, Packet)> {
        if self.root == NIL {
            return None;
        }
        let (root, idx) = self.remove_edge(self.root, false);
        self.root = root;
        self.free.push(idx);
        let n = &self.nodes[idx as usize];
        Some((n.seq, n.pkt))
    }

    /// Unlinks the first (or last) node of the non-empty subtree `t`: (new subtree, removed node).
    fn remove_edge(&mut self, t: u32, first: bool) -> (u32, u32) {
        let n = self.nodes[t as usize];
        let (toward, away) = if first { (n.left, n.right) } else { (n.right, n.left) };
        if toward == NIL {
            return (away, t);
        }
        let (sub, idx) = self.remove_edge(toward, first);
        if first {
            self.nodes[t as usize].left = sub;
        } else {
            self.nodes[t as usize].right = sub;
        }
        self.update(t);
        (t, idx)
    }

    /// The lowest-weight packet.
    pub fn first(&self) -> Option<&Packet> {
        let mut t = self.root;
        if t == NIL {
            return None;
        }
        while self.nodes[t as usize].left != NIL {
            t = self.nodes[t as usize].left;
        }
        Some(&self.nodes[t as usize].pkt)
    }

    /// The packets in service order with their weights (tests and traces; allocates).
    pub fn in_order(&self) -> Vec<(f64, Packet)> {
        fn walk(q: &WeightQueue, t: u32, out: &mut Vec<(f64, Packet)>) {
            if t != NIL {
                let n = q.nodes[t as usize];
                walk(q, n.left, out);
                out.push((n.w, n.pkt));
                walk(q, n.right, out);
            }
        }
        let mut out = Vec::with_capacity(self.len());
        walk(self, self.root, &mut out);
        out
    }
}

/// Counters beyond [`QdiscStats`]: how much cutting in happened.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TsqStats {
    /// Arrivals that passed at least one queued packet.
    pub cut_ins: u64,
    /// Sum over accepted arrivals of p′/p where p > 0 (mean penalty = sum / `penalised`).
    pub penalty_sum: f64,
    /// Accepted arrivals with p > 0.
    pub penalised: u64,
}

/// TSQ over PI.
pub struct Tsq {
    cfg: TsqConfig,
    ctl: PiController,
    queue: WeightQueue,
    stats: QdiscStats,
    tsq_stats: TsqStats,
}

impl Tsq {
    /// An empty queue.
    pub fn new(cfg: TsqConfig, ctl: PiController) -> Tsq {
        Tsq { queue: WeightQueue::with_capacity(cfg.limit as usize + 1), cfg, ctl, stats: QdiscStats::default(), tsq_stats: TsqStats::default() }
    }

    /// The PI controller.
    pub fn controller(&self) -> &PiController {
        &self.ctl
    }

    /// The cut-in counters.
    pub fn tsq_stats(&self) -> &TsqStats {
        &self.tsq_stats
    }

    /// The hint the discipline uses for `pkt`: 1..=16.
    pub fn hint_of(&self, pkt: &Packet) -> u8 {
        match pkt.delay_hint {
            0 => self.cfg.default_hint,
            h => h.min(HINT_LEVELS),
        }
    }

    fn delay_of(&self, bytes: u64) -> f64 {
        bytes as f64 * 8.0 / self.cfg.rate_bps
    }
}

impl Qdisc for Tsq {
    fn enqueue(&mut self, mut pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        self.ctl.catch_up(now, self.queue.len());
        self.stats.arrivals += 1;
        pkt.enqueued_at = now;
        let full = self.queue.len() >= self.cfg.limit as usize;
        let t_d = self.delay_of(self.queue.bytes());
        let now_ns = now.0 as f64;
        let w = if self.cfg.enabled { weight(now_ns, self.hint_of(&pkt), t_d * 1e9) } else { now_ns };
        if full {
            match self.cfg.overflow {
                TsqOverflow::DropArrival => {
                    self.stats.count_drop(DropKind::Overflow);
                    return Verdict::Dropped(DropKind::Overflow);
                }
                TsqOverflow::DropLast => {
                    let arrival = self.queue.insert(w, pkt);
                    let (number, victim) = self.queue.pop_last_numbered().expect("just inserted");
                    self.stats.count_drop(DropKind::Overflow);
                    if number == arrival {
                        return Verdict::Dropped(DropKind::Overflow);
                    }
                    drops.push((victim, DropKind::Overflow));
                    self.stats.enqueues += 1;
                    return Verdict::Enqueued;
                }
            }
        }
        let (ahead_pkts, ahead_bytes) = if self.cfg.enabled { self.queue.ahead_of(w) } else { (self.queue.len(), self.queue.bytes()) };
        let p = self.ctl.p();
        let p2 = if !self.cfg.enabled {
            p
        } else {
            let q_prime = match self.cfg.penalty_position {
                PenaltyPosition::Actual => self.delay_of(ahead_bytes),
                PenaltyPosition::Target => f64::from(self.hint_of(&pkt)) * t_d / f64::from(HINT_LEVELS),
            };
            adjusted_probability(p, self.cfg.latency_s, t_d, q_prime)
        };
        if PiController::drop_test(p2, rng) {
            self.stats.count_drop(DropKind::Early);
            return Verdict::Dropped(DropKind::Early);
        }
        if ahead_pkts < self.queue.len() {
            self.tsq_stats.cut_ins += 1;
        }
        if p > 0.0 {
            self.tsq_stats.penalty_sum += p2 / p;
            self.tsq_stats.penalised += 1;
        }
        self.queue.insert(w, pkt);
        self.stats.enqueues += 1;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        self.ctl.catch_up(now, self.queue.len());
        let pkt = self.queue.pop_first()?;
        self.stats.dequeues += 1;
        Some(pkt)
    }

    fn peek(&self) -> Option<&Packet> {
        self.queue.first()
    }

    fn len_packets(&self) -> usize {
        self.queue.len()
    }

    fn len_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    /// TSQ keeps no smoothed queue; this reports the PI drop probability p instead.
    fn average(&self) -> Option<f64> {
        Some(self.ctl.p())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;
    use crate::qdisc::pi::Pi;
    use proptest::prelude::*;

    const DATA: Packet = Packet { size: 1000, ..Packet::new(PacketKind::Udp, 0) };
    const MBPS15: f64 = 15e6;

    fn tsq(p: TsqParams) -> Tsq {
        p.validate("queue", MBPS15).unwrap()
    }

    fn pkt(flow: u32, seq: u32, hint: u8) -> Packet {
        Packet { flow, seq, delay_hint: hint, ..DATA }
    }

    #[test]
    fn weight_and_penalty_match_the_spec_worked_numbers() {
        // Eq. 4.1: 200 packets of 1000 B at 15 Mb/s drain in 106.67 ms; hint 6 at t_a = 1 s.
        let t_d = 200.0 * 8000.0 / 15e6;
        assert!((weight(1e9, 6, t_d * 1e9) - 1.04e9).abs() < 1e-3);
        // Eq. 4.4, spec §5.8 table: hint 1 → 9.9×, hint 6 → 3.4× at 15 Mb/s with l = 40 ms.
        let f1 = adjusted_probability(0.01, 0.040, t_d, t_d / 16.0) / 0.01;
        let f6 = adjusted_probability(0.01, 0.040, t_d, 6.0 * t_d / 16.0) / 0.01;
        assert!((f1 - (146.6667f64 / 46.6667).powi(2)).abs() < 1e-3 && (f1 - 9.88).abs() < 0.01, "{f1}");
        assert!((f6 - 3.36).abs() < 0.01, "{f6}");
        // 4 Mb/s, hint 1: (440/65)² = 45.8
        let t_d4 = 200.0 * 8000.0 / 4e6;
        assert!((adjusted_probability(0.01, 0.040, t_d4, t_d4 / 16.0) / 0.01 - 45.82).abs() < 0.01);
    }

    #[test]
    fn penalty_is_at_least_p_zero_at_p_zero_and_clamped_to_one() {
        assert_eq!(adjusted_probability(0.0, 0.04, 0.1, 0.0), 0.0);
        assert_eq!(adjusted_probability(0.2, 0.04, 0.1, 0.1), 0.2);
        assert_eq!(adjusted_probability(0.5, 0.04, 0.4, 0.0), 1.0);
        assert_eq!(adjusted_probability(0.5, 0.0, 0.4, 0.0), 1.0);
        for (p, q, qp) in [(0.01, 0.1, 0.05), (0.3, 0.2, 0.0), (1e-6, 1.0, 0.999)] {
            assert!(adjusted_probability(p, 0.04, q, qp) >= p);
        }
    }

    #[test]
    fn hint_one_cuts_in_near_the_head_of_hint_16_traffic() {
        // 150 hint-16 packets arrive at t = 0 (p stays 0: no sample before 5.9 ms), each with
        // w_j = j·0.533 ms (its drain time at arrival); then one hint-1 packet: t_d = 80 ms,
        // w = 80/16 = 5 ms, so it lands behind j = 0..=9 (9·0.533 = 4.8 ms ≤ 5 < 5.33 ms).
        let mut q = tsq(TsqParams::default());
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..150 {
            assert_eq!(q.enqueue(pkt(0, seq, 16), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        assert_eq!(q.enqueue(pkt(1, 0, 1), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        let order: Vec<u32> = q.queue.in_order().iter().map(|(_, p)| p.flow).collect();
        assert_eq!(order.iter().position(|&f| f == 1), Some(10));
        assert_eq!(q.tsq_stats().cut_ins, 1);
        // Service order: 10 hint-16 packets, then the hint-1 packet.
        for _ in 0..10 {
            assert_eq!(q.dequeue(Time(1), &mut drops).unwrap().flow, 0);
        }
        assert_eq!(q.dequeue(Time(2), &mut drops).unwrap().flow, 1);
    }

    #[test]
    fn constant_hint_flows_are_never_reordered_and_hint_16_lands_at_the_tail() {
        // Spec §2.7 items 1 and 2, with equal packet sizes, the link draining one packet per
        // 0.533 ms and arrivals every 0.3 ms alternating hints 16, 3 and 9.
        let mut q = tsq(TsqParams::default());
        let (mut rng, mut drops) = (stream(5, StreamId::Queue(0)), DropBuf::new());
        let (mut last_seq, mut seqs) = ([None::<u32>; 3], [0u32; 3]);
        let hints = [16u8, 3, 9];
        let mut next_tx = 0u64;
        for i in 0..3000u64 {
            let now = i * 300_000;
            while next_tx <= now {
                if let Some(p) = q.dequeue(Time(next_tx), &mut drops) {
                    let f = p.flow as usize;
                    assert!(last_seq[f].is_none_or(|s| p.seq > s), "flow {f} reordered");
                    last_seq[f] = Some(p.seq);
                    next_tx += 533_333;
                } else {
                    next_tx = now + 1;
                }
            }
            let f = (i % 3) as usize;
            let len_before = q.len_packets();
            if q.enqueue(pkt(f as u32, seqs[f], hints[f]), Time(now), &mut rng, &mut drops) == Verdict::Enqueued && f == 0 {
                let pos = q.queue.in_order().iter().position(|(_, p)| p.flow == 0 && p.seq == seqs[f]).unwrap();
                assert_eq!(pos, len_before, "hint 16 not at the tail");
            }
            seqs[f] += 1;
        }
        assert!(q.tsq_stats().cut_ins > 100);
    }

    /// A random script of arrivals (flow, hint, size) and dequeues at increasing times.
    fn script() -> impl Strategy<Value = Vec<(u8, u8, u32, u32)>> {
        // (op: 0-2 enqueue, 3 dequeue), hint 0..=17, size, time step µs
        prop::collection::vec((0u8..4, 0u8..18, 40u32..1500, 0u32..2000), 1..400)
    }

    proptest! {
        #[test]
        fn weight_queue_matches_a_naive_sorted_list(ops in script()) {
            let mut q = WeightQueue::with_capacity(8);
            let mut naive: Vec<(f64, u64, Packet)> = Vec::new();
            let mut seq = 0u64;
            for (op, hint, size, step) in ops {
                let w = f64::from(hint) * 0.001 + f64::from(step % 7) * 0.0005;
                match op {
                    0..=1 => {
                        let p = Packet { seq: seq as u32, size, ..DATA };
                        let expect_ahead = naive.iter().filter(|(nw, _, _)| *nw <= w).fold((0usize, 0u64), |a, (_, _, p)| (a.0 + 1, a.1 + u64::from(p.size)));
                        prop_assert_eq!(q.ahead_of(w), expect_ahead);
                        q.insert(w, p);
                        let at = naive.partition_point(|(nw, s, _)| (*nw, *s) <= (w, seq));
                        naive.insert(at, (w, seq, p));
                        seq += 1;
                    }
                    2 => prop_assert_eq!(q.pop_last().map(|p| p.seq), naive.pop().map(|x| x.2.seq)),
                    _ => prop_assert_eq!(q.pop_first().map(|p| p.seq), if naive.is_empty() { None } else { Some(naive.remove(0).2.seq) }),
                }
                prop_assert_eq!(q.len(), naive.len());
                prop_assert_eq!(q.bytes(), naive.iter().map(|x| u64::from(x.2.size)).sum::<u64>());
                prop_assert_eq!(q.first().map(|p| p.seq), naive.first().map(|x| x.2.seq));
                let order: Vec<u32> = q.in_order().iter().map(|(_, p)| p.seq).collect();
                let expect: Vec<u32> = naive.iter().map(|x| x.2.seq).collect();
                prop_assert_eq!(order, expect);
            }
        }

        #[test]
        fn tsq_off_decides_exactly_as_pi(ops in script(), seed in 0u64..1000) {
            let off = TsqParams { enabled: false, q_ref: 5.0, limit: 40, a: 2e-3, b: 1.5e-3, ..TsqParams::default() };
            let pi = PiParams { q_ref: 5.0, limit: 40, a: 2e-3, b: 1.5e-3, ..PiParams::default() };
            prop_assert_eq!(run_both(off, pi, &ops, seed, false), None);
        }

        #[test]
        fn all_hints_16_with_equal_sizes_decide_exactly_as_pi(ops in script(), seed in 0u64..1000) {
            let on = TsqParams { q_ref: 5.0, limit: 40, a: 2e-3, b: 1.5e-3, ..TsqParams::default() };
            let pi = PiParams { q_ref: 5.0, limit: 40, a: 2e-3, b: 1.5e-3, ..PiParams::default() };
            prop_assert_eq!(run_both(on, pi, &ops, seed, true), None);
        }
    }

    /// Drives TSQ and PI with the same script and random stream. With `hint16_equal`, every packet
    /// is 1000 B with hint 16 and the dequeues come at the link's pace (the spec's exactness
    /// condition); otherwise hints and sizes vary. Returns the first difference.
    fn run_both(t: TsqParams, p: PiParams, ops: &[(u8, u8, u32, u32)], seed: u64, hint16_equal: bool) -> Option<String> {
        let rate = 8e6; // 1000 B take 1 ms
        let mut a = t.validate("queue", rate).unwrap();
        let mut b: Pi = p.validate("queue").unwrap();
        let (mut ra, mut rb) = (stream(seed, StreamId::Queue(0)), stream(seed, StreamId::Queue(0)));
        let (mut da, mut db) = (DropBuf::new(), DropBuf::new());
        let (mut now, mut busy_until) = (0u64, 0u64);
        for (i, &(op, hint, size, step)) in ops.iter().enumerate() {
            now += u64::from(step) * 10_000;
            if op == 3 || (hint16_equal && now >= busy_until) {
                if now < busy_until {
                    continue;
                }
                let (x, y) = (a.dequeue(Time(now), &mut da), b.dequeue(Time(now), &mut db));
                if x != y {
                    return Some(format!("op {i}: dequeue {x:?} vs {y:?}"));
                }
                busy_until = now + 1_000_000;
                if op == 3 {
                    continue;
                }
            }
            let (hint, size) = if hint16_equal { (16, 1000) } else { (hint, size) };
            let pk = Packet { seq: i as u32, size, delay_hint: hint, ..DATA };
            let (x, y) = (a.enqueue(pk, Time(now), &mut ra, &mut da), b.enqueue(pk, Time(now), &mut rb, &mut db));
            if x != y || a.stats() != b.stats() || a.len_bytes() != b.len_bytes() {
                return Some(format!("op {i}: {x:?} vs {y:?}, {:?} vs {:?}", a.stats(), b.stats()));
            }
        }
        None
    }

    #[test]
    fn drop_last_overflow_drops_the_largest_weight_not_the_cut_in_arrival() {
        let mut q = tsq(TsqParams { limit: 3, q_ref: 1.0, overflow: TsqOverflow::DropLast, ..TsqParams::default() });
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..3 {
            q.enqueue(pkt(0, seq, 16), Time(0), &mut rng, &mut drops);
        }
        assert_eq!(q.enqueue(pkt(1, 0, 1), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!(drops.iter().map(|(p, k)| (p.flow, p.seq, *k)).collect::<Vec<_>>(), vec![(0, 2, DropKind::Overflow)]);
        // A hint-16 arrival into the full queue is itself the last: dropped.
        assert_eq!(q.enqueue(pkt(2, 0, 16), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
        let s = q.stats();
        assert_eq!((s.arrivals, s.enqueues, s.drops_overflow, q.len_packets()), (5, 4, 2, 3));

        let mut q = tsq(TsqParams { limit: 3, q_ref: 1.0, ..TsqParams::default() });
        for seq in 0..3 {
            q.enqueue(pkt(0, seq, 16), Time(0), &mut rng, &mut drops);
        }
        assert_eq!(q.enqueue(pkt(1, 0, 1), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
    }

    #[test]
    fn cut_in_arrivals_are_dropped_at_the_adjusted_probability() {
        // Hold p fixed at 0.02 with a long queue of hint-16 packets; hint-1 arrivals are dropped
        // at p' = p·((l+t_d)/(l+q'))², measured over many arrivals (each removed again).
        let mut q = tsq(TsqParams::default());
        let (mut rng, mut drops) = (stream(9, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..200 {
            q.enqueue(pkt(0, seq, 16), Time(0), &mut rng, &mut drops);
        }
        q.ctl = PiController::new(0.02 / 200.0, 0.0, 0.0, Dur(u64::MAX / 4)); // no sample in range
        q.ctl.sample(200.0); // p = 0.02
        q.ctl.a = 0.0;
        let t_d = 200.0 * 8000.0 / MBPS15;
        let (ahead, _) = q.queue.ahead_of(t_d * 1e9 / 16.0);
        let expect = adjusted_probability(0.02, 0.04, t_d, ahead as f64 * 8000.0 / MBPS15);
        let (mut dropped, n) = (0, 20_000);
        for i in 0..n {
            match q.enqueue(pkt(1, i, 1), Time(0), &mut rng, &mut drops) {
                Verdict::Dropped(DropKind::Early) => dropped += 1,
                _ => {
                    q.queue = {
                        let mut w = WeightQueue::with_capacity(256);
                        for (wt, p) in q.queue.in_order().into_iter().filter(|(_, p)| p.flow == 0) {
                            w.insert(wt, p);
                        }
                        w
                    }
                }
            }
        }
        let frac = dropped as f64 / n as f64;
        assert!(expect > 0.15 && (frac - expect).abs() < 0.015, "{frac} vs {expect}");
    }

    #[test]
    fn target_position_prices_a_cut_in_at_its_hint_not_where_it_lands() {
        // 200 hint-16 packets, then 50 hint-1 packets that cluster near the head (p = 0 while
        // filling). One more hint-1 packet: t_d = 250 packets = 133.3 ms. `target` prices it at
        // q' = t_d/16 = 8.33 ms; `actual` at the ~66 packets really ahead of it (35 ms).
        let penalty = |position: PenaltyPosition| {
            let mut q = tsq(TsqParams { penalty_position: position, ..TsqParams::default() });
            let (mut rng, mut drops) = (stream(4, StreamId::Queue(0)), DropBuf::new());
            for seq in 0..200 {
                q.enqueue(pkt(0, seq, 16), Time(0), &mut rng, &mut drops);
            }
            for seq in 0..50 {
                assert_eq!(q.enqueue(pkt(1, seq, 1), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
            }
            let ahead_of_next = q.queue.ahead_of(250.0 * 8000.0 / MBPS15 * 1e9 / 16.0).0;
            q.ctl = PiController::new(0.02 / 200.0, 0.0, 0.0, Dur(u64::MAX / 4)); // no sample in range
            q.ctl.sample(200.0); // p = 0.02
            q.ctl.a = 0.0;
            let mut seq = 50;
            while q.tsq_stats().penalised == 0 {
                q.enqueue(pkt(1, seq, 1), Time(0), &mut rng, &mut drops); // early drops leave the queue as it was
                seq += 1;
            }
            (q.tsq_stats().penalty_sum, ahead_of_next)
        };
        let t_d = 250.0 * 8000.0 / MBPS15;
        let (target, _) = penalty(PenaltyPosition::Target);
        let expect_target = adjusted_probability(0.02, 0.04, t_d, t_d / 16.0) / 0.02;
        assert!((target - expect_target).abs() < 1e-9, "{target} vs {expect_target}");
        let (actual, ahead) = penalty(PenaltyPosition::Actual);
        assert!(ahead > 60, "the hint-1 packets cluster ahead: {ahead}");
        let expect_actual = adjusted_probability(0.02, 0.04, t_d, ahead as f64 * 8000.0 / MBPS15) / 0.02;
        assert!((actual - expect_actual).abs() < 1e-9, "{actual} vs {expect_actual}");
        assert!(target > 2.0 * actual, "target {target}, actual {actual}");
    }

    #[test]
    fn bad_default_hint_names_the_allowed_range() {
        let e = TsqParams { default_hint: 17, ..TsqParams::default() }.validate("queue", 1e6).err().unwrap();
        assert_eq!(e.to_string(), "queue.default_hint: must be an integer from 1 to 16, got 17");
    }
}
