//! AECN, Adaptive Explicit Congestion Notification (Zheng & Kinicki, ISCC 2002,
//! DOI 10.1109/ISCC.2002.1021773; Zici Zheng's WPI MS thesis, May 2001, cited as [Zhe01]), as
//! Lee 2002 describes it (thesis §2.1.5, Fig. 2.5; spec `seed001-white.md` §2.6, §2.0).
//!
//! Lee 2002 treats AECN as related work only: it is not simulated there and has no results to
//! reproduce. The paper's abstract (IEEE index entry, read through the search tool) confirms the
//! outline: "By receiving round-trip time (RTT) source hints from each TCP flow, AECN divides flows
//! into flow groups based on RTT ranges. AECN uses distinct flow group drop probabilities and a
//! mark front scheme". The paper's body (its boundaries, probabilities and count handling) was not
//! found; every value below is therefore a documented choice, not the paper's.
//!
//! ## Algorithm (Fig. 2.5, on the shared RED machinery of [`super::red_core`])
//!
//! One FIFO buffer (service order is arrival order), one RED average `q_avg` over the whole queue
//! (packets), one `count`. Each arrival is sorted by its RTT hint (ms) into a class:
//! *robust* if `hint < robust_below`, *fragile* if `hint > fragile_above`, *average* otherwise,
//! and *average* when it carries no hint (hint 0, or not a TCP data packet: UDP media use the same
//! `ack` field for fragment tags, so their "hints" are never read). Each class has a virtual queue:
//! its packets in the buffer, in order.
//! * `q_avg` past the forced threshold (`max_th`; `2·max_th` with `gentle`): drop the arrival.
//! * `q_avg` in `[min_th, max_th)`: `pb_c = max_p_c·(q_avg − min_th)/(max_th − min_th)`, the
//!   class's own `max_p`, then RED's count spacing (`variant`, `wait`) on the shared `count`. On a
//!   mark decision, **mark-front**: the oldest packet of the arrival's class that is ECN-capable
//!   and not yet marked gets CE, and the arrival is queued unchanged. If the class holds no such
//!   packet, the arrival itself is marked when it is ECN-capable, and dropped (early) otherwise.
//!   A mark resets `count` like a drop (RFC 3168 §7, ns-2).
//! * Below `min_th` (or at most `protected_pkts` queued): enqueue.
//! * The buffer `limit` last (ns-2 order; the documented variant tests it first, as `red`). A
//!   mark decision whose arrival does not fit becomes an overflow drop and marks nothing.
//!
//! Worked number (defaults, `q_avg = 10`): `pb` = 0.3·0.5 = 0.15 (robust), 0.05 (average),
//! 0.0165 (fragile). With ns-2's `wait`, the first robust mark can come once `count·pb ≥ 1`, at
//! the 7th arrival after the last mark; a fragile one only at the 61st.
//!
//! ## Choices where the sources say nothing (each a parameter)
//! * **Boundaries** `robust_below = 75`, `fragile_above = 150` ms: the midpoints between Lee's
//!   named clusters, robust 50 ms / average 100 ms / fragile 200 ms (Exps 2 and 5). They also
//!   split Exp 6 (20 / 80 / 320 ms) and Exps 3–4 (20 vs 200 ms) as named, and leave room for the
//!   ~1 ms of serialisation and queueing a min-RTT hint adds (spec §2.1.1).
//! * **Per-class `max_p`**: average 0.1 (ns-2's `linterm_ 10`), robust 0.3, fragile 0.033. Equal
//!   throughput needs `p_2 = p_1·(R_1/R_2)^(1/a)` (spec §2.1.4); with the marking exponent
//!   `1/a = 1.58` (Chablis's theory value) and the cluster RTTs 50/100/200 ms the factors are
//!   `2^1.58 ≈ 3.0` and `2^−1.58 ≈ 0.33` around the average class.
//! * **`count`** is shared by the classes (ns-2's single `count`, as WHITE's default
//!   `scale_pb_before_count`); the class changes `pb` only.
//! * **Gentle region** (`gentle = true`, `max_th ≤ q_avg < 2·max_th`): ns-2 marks only while
//!   `q_avg < max_th` (spec §2.0 item 5), so an early decision there drops the arrival.
//! * **Defaults of the RED core** follow ns-2.1b8 (spec §2.0 item 7), the simulator of the WHITE
//!   runs and of the AECN paper: `variant = "ns2"` (`wait`), `min_th` 5, `max_th` 15, `weight`
//!   0.002, `limit` 50, `mean_packet_size` 500 B; `gentle` off as Fig. 2.5 drops above `max_th`.
//!
//! Per-flow `marks` count the flow of the packet that carries the mark: a front mark lands on a
//! queued packet, possibly of another flow, while the arrival's verdict is `Enqueued`, so the
//! engine takes that flow from [`Qdisc::take_front_mark`].
//!
//! Randomness: one uniform per early decision that is not certain (as RED).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::red::check_thresholds;
use super::red_core::{RedConfig, RedDecision, RedState, RedVariant};
use super::{ClassStats, DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::{Ecn, FlowId, Packet};
use crate::scenario::units::{Bytes, Limit};

/// AECN's three flow groups, in `class_stats` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AecnClass {
    /// Short RTT: `hint < robust_below`.
    Robust = 0,
    /// Between the boundaries, or no hint.
    Average = 1,
    /// Long RTT: `hint > fragile_above`.
    Fragile = 2,
}

impl AecnClass {
    /// The class names, in index order.
    pub const NAMES: [&'static str; 3] = ["robust", "average", "fragile"];
}

impl std::fmt::Display for AecnClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(Self::NAMES[*self as usize])
    }
}

/// Scenario keys of `kind = "aecn"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AecnParams {
    /// Hard limit: packets, bytes, or `"none"` (ns-2.1b8 `limit_`: 50 packets).
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Minimum threshold on the average queue, packets.
    #[serde(default = "default_min_th")]
    pub min_th: f64,
    /// Maximum threshold, packets.
    #[serde(default = "default_max_th")]
    pub max_th: f64,
    /// Mark probability at `max_th` for robust packets, in (0, 1].
    #[serde(default = "default_max_p_robust")]
    pub max_p_robust: f64,
    /// Mark probability at `max_th` for average packets (and packets with no hint), in (0, 1].
    #[serde(default = "default_max_p_average")]
    pub max_p_average: f64,
    /// Mark probability at `max_th` for fragile packets, in (0, 1].
    #[serde(default = "default_max_p_fragile")]
    pub max_p_fragile: f64,
    /// A hint below this many ms makes a packet robust.
    #[serde(default = "default_robust_below")]
    pub robust_below: f64,
    /// A hint above this many ms makes a packet fragile.
    #[serde(default = "default_fragile_above")]
    pub fragile_above: f64,
    /// EWMA weight, in (0, 1].
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Which RED underneath (default `ns2`).
    #[serde(default = "default_variant")]
    pub variant: RedVariant,
    /// ns-2's `wait_` (default: true for `ns2`, else false; not for `altq`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Gentle RED above `max_th` (early decisions there drop; forced region from `2·max_th`).
    #[serde(default)]
    pub gentle: bool,
    /// Mean packet size, for the idle-time decay (ns-2.1b8 `mean_pktsize_`: 500 B).
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    /// No decision on the average while at most this many packets are queued (ns-2 `qlen > 1`).
    #[serde(default = "default_protected_pkts")]
    pub protected_pkts: u32,
}

fn default_limit() -> Limit {
    Limit::Packets(50)
}
fn default_min_th() -> f64 {
    5.0
}
fn default_max_th() -> f64 {
    15.0
}
fn default_max_p_robust() -> f64 {
    0.3
}
fn default_max_p_average() -> f64 {
    0.1
}
fn default_max_p_fragile() -> f64 {
    0.033
}
fn default_robust_below() -> f64 {
    75.0
}
fn default_fragile_above() -> f64 {
    150.0
}
fn default_weight() -> f64 {
    0.002
}
fn default_variant() -> RedVariant {
    RedVariant::Ns2
}
fn default_mean_packet_size() -> Bytes {
    Bytes(500)
}
fn default_protected_pkts() -> u32 {
    1
}

impl Default for AecnParams {
    fn default() -> Self {
        super::serde_defaults()
    }
}

impl AecnParams {
    /// The parameters with the variant-dependent default of `wait` written out.
    pub fn filled(mut self) -> Self {
        self.wait.get_or_insert(self.variant == RedVariant::Ns2);
        self
    }

    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Aecn> {
        let key = |k: &str| format!("{path}.{k}");
        check_thresholds(path, self.min_th, self.max_th)?;
        for (k, v) in [
            ("max_p_robust", self.max_p_robust),
            ("max_p_average", self.max_p_average),
            ("max_p_fragile", self.max_p_fragile),
            ("weight", self.weight),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(ConfigError::new(key(k), format!("must be in (0, 1], got {v}")));
            }
        }
        for (k, v) in [("robust_below", self.robust_below), ("fragile_above", self.fragile_above)] {
            if !(v.is_finite() && (0.0..=65_535.0).contains(&v)) {
                return Err(ConfigError::new(key(k), format!("must be a number of ms in [0, 65535], got {v}")));
            }
        }
        if self.robust_below > self.fragile_above {
            return Err(ConfigError::new(
                key("robust_below"),
                format!(
                    "must not exceed fragile_above: robust_below = {}, fragile_above = {}",
                    self.robust_below, self.fragile_above
                ),
            ));
        }
        if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&self.mean_packet_size.0) {
            return Err(crate::error::mean_packet_size_error(key("mean_packet_size"), self.mean_packet_size.0));
        }
        if self.variant == RedVariant::Altq && self.wait == Some(true) {
            return Err(ConfigError::new(
                key("wait"),
                "does not apply to variant \"altq\" (ALTQ's drop test has its own spacing); allowed with documented, ns2",
            ));
        }
        let mean = self.mean_packet_size.0 as f64;
        let red = |max_p| RedConfig {
            variant: self.variant,
            min_th: self.min_th,
            max_th: self.max_th,
            max_p,
            weight: self.weight,
            wait: self.wait.unwrap_or(self.variant == RedVariant::Ns2),
            gentle: self.gentle,
            byte_mode: false,
            mean_packet_size: mean,
            drain_rate: link_rate_bps / (8.0 * mean),
            protected_pkts: self.protected_pkts,
            nonlinear: false,
        };
        let cfg = AecnConfig {
            red: [red(self.max_p_robust), red(self.max_p_average), red(self.max_p_fragile)],
            robust_below: self.robust_below,
            fragile_above: self.fragile_above,
        };
        Ok(Aecn::new(cfg, self.limit))
    }
}

/// Validated AECN settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AecnConfig {
    /// The RED settings per class (index = [`AecnClass`]); they differ only in `max_p`.
    pub red: [RedConfig; 3],
    /// Hints below this (ms) are robust.
    pub robust_below: f64,
    /// Hints above this (ms) are fragile.
    pub fragile_above: f64,
}

impl AecnConfig {
    /// The class of an RTT hint in ms (0 = no hint → average).
    pub fn classify_hint(&self, hint_ms: u16) -> AecnClass {
        let h = hint_ms as f64;
        if hint_ms == 0 {
            AecnClass::Average
        } else if h < self.robust_below {
            AecnClass::Robust
        } else if h > self.fragile_above {
            AecnClass::Fragile
        } else {
            AecnClass::Average
        }
    }

    /// The class of a packet, from its hint.
    pub fn classify(&self, pkt: &Packet) -> AecnClass {
        self.classify_hint(pkt.rtt_hint_ms())
    }

    /// `pb` of a packet of `class` at average `avg` (before the count spacing):
    /// `max_p_c·(avg − min_th)/(max_th − min_th)`, and the gentle ramp above `max_th`.
    pub fn class_probability(&self, class: AecnClass, avg: f64) -> f64 {
        self.red[class as usize].base_probability(avg)
    }
}

/// One class's virtual queue: its packets in the buffer, in order, represented by what AECN
/// reads of it. Invariants: `unmarked` holds, oldest first, the tickets of exactly those queued
/// packets of the class whose ECN field is ECT; `len_*` are the class's queued packets and bytes.
#[derive(Default)]
struct VirtualQueue {
    /// Tickets (see [`Aecn::head_ticket`]) of the class's queued ECT packets not yet marked.
    unmarked: VecDeque<u64>,
    /// Packets of the class queued.
    len_packets: usize,
    /// Bytes of the class queued.
    len_bytes: u64,
    /// Packet counters of the class (marks: marks of the class's queued packets).
    stats: QdiscStats,
    /// The same in bytes (`marks` stays 0).
    bytes: QdiscStats,
}

/// Adaptive ECN: RED over one FIFO with per-RTT-class mark probabilities and mark-front.
pub struct Aecn {
    cfg: AecnConfig,
    limit: Limit,
    state: RedState,
    fifo: Fifo,
    /// Ticket of the head packet: every enqueued packet gets the next ticket, so the packet with
    /// ticket `t` sits at index `t − head_ticket` of `fifo`.
    head_ticket: u64,
    classes: [VirtualQueue; 3],
    stats: QdiscStats,
    /// Flow of the packet the last `enqueue` front-marked, until the engine takes it.
    front_marked: Option<FlowId>,
}

impl Aecn {
    /// An empty AECN queue.
    pub fn new(cfg: AecnConfig, limit: Limit) -> Aecn {
        let vq = || VirtualQueue { unmarked: VecDeque::with_capacity(limit.initial_capacity()), ..VirtualQueue::default() };
        Aecn {
            cfg,
            limit,
            state: RedState::default(),
            fifo: Fifo::new(limit),
            head_ticket: 0,
            classes: [vq(), vq(), vq()],
            stats: QdiscStats::default(),
            front_marked: None,
        }
    }

    /// The validated settings.
    pub fn config(&self) -> &AecnConfig {
        &self.cfg
    }

    /// Per-class packet counters, in [`AecnClass`] order.
    pub fn class_counters(&self, class: AecnClass) -> &QdiscStats {
        &self.classes[class as usize].stats
    }

    fn drop(&mut self, c: usize, size: u32, kind: DropKind) -> Verdict {
        self.state.on_drop();
        self.stats.count_drop(kind);
        self.classes[c].stats.count_drop(kind);
        // The byte counters of the same kind grow by the packet size.
        let b = &mut self.classes[c].bytes;
        match kind {
            DropKind::Early => b.drops_early += size as u64,
            DropKind::Forced => b.drops_forced += size as u64,
            DropKind::Overflow => b.drops_overflow += size as u64,
        }
        Verdict::Dropped(kind)
    }

    /// Marks the oldest unmarked ECT packet of class `c`; false if the class holds none.
    fn mark_front(&mut self, c: usize) -> bool {
        let Some(ticket) = self.classes[c].unmarked.pop_front() else { return false };
        let index = (ticket - self.head_ticket) as usize;
        let pkt = self.fifo.get_mut(index).expect("an unmarked ticket names a queued packet");
        debug_assert!(pkt.ecn.is_ect(), "unmarked tickets name ECT packets");
        pkt.ecn = Ecn::Ce;
        self.front_marked = Some(pkt.flow);
        true
    }

    fn count_mark(&mut self, c: usize) {
        self.state.on_drop(); // a mark restarts the spacing like a drop (ns-2, RFC 3168 §7)
        self.stats.marks += 1;
        self.classes[c].stats.marks += 1;
    }

    fn accept(&mut self, mut pkt: Packet, c: usize, now: Time, mark_arrival: bool) -> Verdict {
        if mark_arrival {
            pkt.ecn = Ecn::Ce;
        }
        let ticket = self.head_ticket + self.fifo.len() as u64;
        let vq = &mut self.classes[c];
        if pkt.ecn.is_ect() {
            vq.unmarked.push_back(ticket);
        }
        vq.len_packets += 1;
        vq.len_bytes += pkt.size as u64;
        vq.stats.enqueues += 1;
        vq.bytes.enqueues += pkt.size as u64;
        self.stats.enqueues += 1;
        self.fifo.push(pkt, now);
        if mark_arrival { Verdict::Marked } else { Verdict::Enqueued }
    }
}

impl Qdisc for Aecn {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        let c = self.cfg.classify(&pkt) as usize;
        let red = self.cfg.red[c];
        self.stats.arrivals += 1;
        self.classes[c].stats.arrivals += 1;
        self.classes[c].bytes.arrivals += pkt.size as u64;
        self.state.sample(&red, self.fifo.len() as f64, pkt.size, now);
        let fits = self.fifo.admits(self.limit, pkt.size);
        if red.variant == RedVariant::Documented && !fits {
            return self.drop(c, pkt.size, DropKind::Overflow);
        }
        match self.state.decide(&red, self.fifo.len(), pkt.size, rng) {
            RedDecision::Pass => {}
            RedDecision::Forced => return self.drop(c, pkt.size, DropKind::Forced),
            // Gentle region: ns-2 marks only below max_th (spec seed001 §2.0 item 5).
            RedDecision::Early if self.state.average() >= red.max_th => return self.drop(c, pkt.size, DropKind::Early),
            RedDecision::Early => {
                if !fits {
                    return self.drop(c, pkt.size, DropKind::Overflow);
                }
                if self.mark_front(c) {
                    self.count_mark(c);
                    return self.accept(pkt, c, now, false);
                }
                if pkt.ecn.is_ect() {
                    self.count_mark(c);
                    return self.accept(pkt, c, now, true);
                }
                return self.drop(c, pkt.size, DropKind::Early);
            }
        }
        if !fits {
            return self.drop(c, pkt.size, DropKind::Overflow);
        }
        self.accept(pkt, c, now, false)
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let Some(pkt) = self.fifo.pop() else {
            self.state.on_empty_dequeue(&self.cfg.red[0], now);
            return None;
        };
        let vq = &mut self.classes[self.cfg.classify(&pkt) as usize];
        if vq.unmarked.front() == Some(&self.head_ticket) {
            vq.unmarked.pop_front(); // the head is the oldest ticket: if listed, it is first
        }
        vq.len_packets -= 1;
        vq.len_bytes -= pkt.size as u64;
        vq.stats.dequeues += 1;
        vq.bytes.dequeues += pkt.size as u64;
        self.head_ticket += 1;
        self.stats.dequeues += 1;
        if self.fifo.is_empty() {
            self.state.on_departure_empty(&self.cfg.red[0], now);
        }
        Some(pkt)
    }

    super::fifo::fifo_accessors!();

    fn average(&self) -> Option<f64> {
        Some(self.state.average())
    }

    /// Three classes, `robust`, `average`, `fragile`. AECN keeps one average (see `average`),
    /// so the per-class average is NaN.
    fn class_stats(&self) -> Vec<ClassStats> {
        (0..3)
            .map(|i| {
                let vq = &self.classes[i];
                ClassStats {
                    name: AecnClass::NAMES[i].into(),
                    stats: vq.stats,
                    bytes: vq.bytes,
                    average: f64::NAN,
                    len_packets: vq.len_packets,
                    len_bytes: vq.len_bytes,
                }
            })
            .collect()
    }
    fn class_count(&self) -> usize {
        3
    }
    fn class_len_at(&self, i: usize) -> (usize, u64) {
        (self.classes[i].len_packets, self.classes[i].len_bytes)
    }
    fn class_average_at(&self, _i: usize) -> f64 {
        f64::NAN
    }
    fn take_front_mark(&mut self) -> Option<FlowId> {
        self.front_marked.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    /// A TCP data segment of flow `flow`, ECN-capable, carrying `hint` ms as its RTT hint.
    fn data(flow: u32, seq: u32, hint: u16) -> Packet {
        Packet { seq, ack: hint as u32, size: 1000, ecn: Ecn::Ect, ..Packet::new(PacketKind::TcpData, flow) }
    }

    fn aecn(toml_text: &str) -> Aecn {
        toml::from_str::<AecnParams>(toml_text).unwrap().validate("queue", 10e6).unwrap()
    }

    fn error(toml_text: &str) -> String {
        toml::from_str::<AecnParams>(toml_text).unwrap().validate("queue", 10e6).err().unwrap().to_string()
    }

    /// Weight 1 (the average is the queue an arrival finds), thresholds 2/50, no count wait.
    const STEADY: &str = "weight = 1.0\nmin_th = 2\nmax_th = 50\nlimit = 200\nvariant = \"documented\"";

    fn check_counters(q: &Aecn) {
        let s = *q.stats();
        assert_eq!(s.arrivals, s.enqueues + s.drops(), "{s:?}");
        assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64, "{s:?}");
        let classes = q.class_stats();
        let sum = |f: fn(&QdiscStats) -> u64| classes.iter().map(|c| f(&c.stats)).sum::<u64>();
        assert_eq!(sum(|s| s.arrivals), s.arrivals);
        assert_eq!(sum(|s| s.enqueues), s.enqueues);
        assert_eq!(sum(|s| s.dequeues), s.dequeues);
        assert_eq!(sum(|s| s.drops()), s.drops());
        assert_eq!(sum(|s| s.marks), s.marks);
        assert_eq!(classes.iter().map(|c| c.len_packets).sum::<usize>(), q.len_packets());
        assert_eq!(classes.iter().map(|c| c.len_bytes).sum::<u64>(), q.len_bytes());
        assert_eq!(q.fifo.iter().map(|p| p.size as u64).sum::<u64>(), q.len_bytes());
        for c in &classes {
            assert_eq!(c.bytes.arrivals, c.bytes.enqueues + c.bytes.drops(), "{}", c.name);
            assert_eq!(c.bytes.enqueues, c.bytes.dequeues + c.len_bytes, "{}", c.name);
        }
        // Each virtual queue's unmarked list is exactly its class's queued ECT packets, in order.
        for (i, vq) in q.classes.iter().enumerate() {
            let want: Vec<u64> = q
                .fifo
                .iter()
                .enumerate()
                .filter(|(_, p)| q.cfg.classify(p) as usize == i && p.ecn.is_ect())
                .map(|(k, _)| q.head_ticket + k as u64)
                .collect();
            assert_eq!(vq.unmarked.iter().copied().collect::<Vec<_>>(), want, "class {i}");
        }
    }

    #[test]
    fn hint_sorts_packets_into_robust_average_fragile() {
        let q = aecn("");
        let class = |pkt: Packet| q.config().classify(&pkt);
        // Defaults 75 / 150 ms: below 75 robust, 75..=150 average, above 150 fragile.
        assert_eq!(class(data(0, 0, 20)), AecnClass::Robust);
        assert_eq!(class(data(0, 0, 74)), AecnClass::Robust);
        assert_eq!(class(data(0, 0, 75)), AecnClass::Average);
        assert_eq!(class(data(0, 0, 100)), AecnClass::Average);
        assert_eq!(class(data(0, 0, 150)), AecnClass::Average);
        assert_eq!(class(data(0, 0, 151)), AecnClass::Fragile);
        assert_eq!(class(data(0, 0, 310)), AecnClass::Fragile);
        // No hint: average. Not TCP data: the `ack` field is not a hint (UDP fragment tags, ACKs).
        assert_eq!(class(data(0, 0, 0)), AecnClass::Average);
        let udp = Packet { ack: 20, ..Packet::new(PacketKind::Udp, 0) };
        let ack = Packet { ack: 20, ..Packet::new(PacketKind::TcpAck, 0) };
        assert_eq!((class(udp), class(ack)), (AecnClass::Average, AecnClass::Average));
        // Configured boundaries.
        let q = aecn("robust_below = 30\nfragile_above = 30");
        assert_eq!(q.config().classify_hint(29), AecnClass::Robust);
        assert_eq!(q.config().classify_hint(30), AecnClass::Average);
        assert_eq!(q.config().classify_hint(31), AecnClass::Fragile);
    }

    #[test]
    fn class_probability_uses_the_class_max_p() {
        // Module-doc worked number: avg 10 between 5 and 15 → half of each class's max_p.
        let c = *aecn("").config();
        let pb = |class| c.class_probability(class, 10.0);
        assert!((pb(AecnClass::Robust) - 0.15).abs() < 1e-12);
        assert!((pb(AecnClass::Average) - 0.05).abs() < 1e-12);
        assert!((pb(AecnClass::Fragile) - 0.0165).abs() < 1e-12);
    }

    /// Weight 1, thresholds 2/60: an arrival finding 40 queued has `pb = max_p_c·38/58`; with
    /// `max_p_c = 1` that is 0.655, so past the free pass `pa = pb/(1 − count·pb) ≥ 1` for any
    /// `count ≥ 1` (documented variant): every such arrival is a mark decision, no randomness.
    const CERTAIN: &str = "weight = 1.0\nmin_th = 2\nmax_th = 60\nlimit = 200\nvariant = \"documented\"\nmax_p_average = 0.001";

    #[test]
    fn ect1_packets_are_ecn_capable_like_ect0() {
        // RFC 3168 routers treat both ECT codepoints alike: an ECT(1) packet is marked front.
        let mut q = aecn(&format!("{CERTAIN}\nmax_p_robust = 1.0"));
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        q.enqueue(Packet { ecn: Ecn::NotEct, ..data(0, 0, 20) }, Time(0), &mut rng, &mut drops);
        q.enqueue(data(1, 1, 100), Time(0), &mut rng, &mut drops);
        q.enqueue(Packet { ecn: Ecn::Ect1, ..data(2, 2, 20) }, Time(0), &mut rng, &mut drops);
        for seq in 3..40 {
            q.enqueue(data(1, seq, 100), Time(0), &mut rng, &mut drops);
        }
        assert_eq!(q.enqueue(data(9, 100, 40), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!(q.fifo.iter().find(|p| p.seq == 2).unwrap().ecn, Ecn::Ce);
        assert_eq!(q.take_front_mark(), Some(2));
        check_counters(&q);
    }

    #[test]
    fn mark_decision_marks_the_oldest_unmarked_packet_of_the_class_not_the_arrival() {
        let mut q = aecn(&format!("{CERTAIN}\nmax_p_robust = 1.0"));
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        // Queue: seq 0 robust not-ECT, seq 1 average, seq 2 and 3 robust ECT (seq 3, finding 3
        // queued, takes the free pass), then average filler up to 40 packets.
        q.enqueue(Packet { ecn: Ecn::NotEct, ..data(0, 0, 20) }, Time(0), &mut rng, &mut drops);
        q.enqueue(data(1, 1, 100), Time(0), &mut rng, &mut drops);
        q.enqueue(data(2, 2, 20), Time(0), &mut rng, &mut drops);
        q.enqueue(data(3, 3, 30), Time(0), &mut rng, &mut drops);
        for seq in 4..40 {
            q.enqueue(data(1, seq, 100), Time(0), &mut rng, &mut drops);
        }
        let ecn = |q: &Aecn, seq: u32| q.fifo.iter().find(|p| p.seq == seq).unwrap().ecn;
        let robust_marks = |q: &Aecn| q.class_counters(AecnClass::Robust).marks;
        assert_eq!(robust_marks(&q), 0);
        // A robust arrival is a mark decision: seq 0 is robust but not ECN-capable, so the oldest
        // unmarked ECT robust packet is seq 2. The arrival is queued unmarked.
        assert_eq!(q.enqueue(data(9, 100, 40), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!((ecn(&q, 0), ecn(&q, 1), ecn(&q, 2), ecn(&q, 3)), (Ecn::NotEct, Ecn::Ect, Ecn::Ce, Ecn::Ect));
        assert_eq!(ecn(&q, 100), Ecn::Ect);
        // The engine learns whose packet carries the mark (flow 2's), once.
        assert_eq!(q.take_front_mark(), Some(2));
        assert_eq!(q.take_front_mark(), None);
        // The next takes seq 3, the one after that the first robust arrival (seq 100), not itself.
        assert_eq!(q.enqueue(data(9, 101, 40), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!(ecn(&q, 3), Ecn::Ce);
        assert_eq!(q.enqueue(data(9, 102, 40), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        assert_eq!((ecn(&q, 100), ecn(&q, 101), ecn(&q, 102)), (Ecn::Ce, Ecn::Ect, Ecn::Ect));
        assert_eq!(robust_marks(&q), 3);
        // Departures of marked packets leave the virtual queue consistent.
        for _ in 0..4 {
            q.dequeue(Time(1), &mut drops);
        }
        check_counters(&q);
    }

    #[test]
    fn mark_decision_with_no_candidate_marks_an_ect_arrival_and_drops_a_not_ect_one() {
        let mut q = aecn(&format!("{CERTAIN}\nmax_p_fragile = 1.0"));
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..40 {
            q.enqueue(data(1, seq, 100), Time(0), &mut rng, &mut drops); // average; free pass at seq 3
        }
        // No fragile packet is queued: a not-ECT fragile arrival on a mark decision is dropped.
        let not_ect = Packet { ecn: Ecn::NotEct, ..data(2, 100, 200) };
        assert_eq!(q.enqueue(not_ect, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Early));
        // An ECT one is marked itself; so is the next, since the only fragile packet queued is
        // already marked.
        assert_eq!(q.enqueue(data(2, 101, 200), Time(0), &mut rng, &mut drops), Verdict::Marked);
        assert_eq!(q.enqueue(data(2, 102, 200), Time(0), &mut rng, &mut drops), Verdict::Marked);
        let fragile = q.class_counters(AecnClass::Fragile);
        assert_eq!((fragile.marks, fragile.drops_early, fragile.enqueues), (2, 1, 2));
        check_counters(&q);
    }

    #[test]
    fn robust_packets_are_marked_more_often_than_fragile_ones_at_the_same_average() {
        // Weight 1 and a queue held at 26 packets (one departure per arrival): avg = 26 between
        // min_th 2 and max_th 50, so pb = max_p_c/2: robust 0.15, fragile 0.0165 (defaults).
        // Arrivals alternate robust / fragile, 20,000 each; count is shared (documented variant,
        // no wait). Tolerance fixed before running: the max_p ratio is 9.1 and the shared count
        // raises both hazards, so we require robust/fragile ≥ 3 and fragile marks > 0.
        let mut q = aecn(STEADY);
        let (mut rng, mut drops) = (stream(42, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..26 {
            q.enqueue(data(0, seq, 100), Time(0), &mut rng, &mut drops);
        }
        let (mut robust_marks, mut fragile_marks) = (0u64, 0u64);
        for i in 0..40_000u32 {
            let robust = i % 2 == 0;
            let pkt = data(if robust { 1 } else { 2 }, i, if robust { 20 } else { 200 });
            let marks = q.stats().marks;
            let v = q.enqueue(pkt, Time(0), &mut rng, &mut drops);
            assert!(!matches!(v, Verdict::Dropped(_)), "ECT packets are marked, not dropped: {v:?}");
            if q.stats().marks > marks {
                if robust { robust_marks += 1 } else { fragile_marks += 1 }
            }
            q.dequeue(Time(0), &mut drops);
        }
        let r = robust_marks as f64 / 20_000.0;
        let f = fragile_marks as f64 / 20_000.0;
        assert!(fragile_marks > 0 && r >= 3.0 * f, "robust {r:.4} fragile {f:.4}");
        assert_eq!(q.class_counters(AecnClass::Robust).marks, robust_marks);
        assert_eq!(q.class_counters(AecnClass::Fragile).marks, fragile_marks);
        check_counters(&q);
    }

    #[test]
    fn forced_region_drops_even_ect_packets() {
        // Weight 1, thresholds 2/5: an arrival finding more than 5 queued is dropped (forced),
        // never marked, whatever its class.
        let mut q = aecn("weight = 1.0\nmin_th = 2\nmax_th = 5\nlimit = 100\nmax_p_robust = 0.001\nmax_p_average = 0.001\nmax_p_fragile = 0.001");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..5 {
            q.enqueue(data(0, seq, 100), Time(0), &mut rng, &mut drops);
        }
        for (seq, hint) in [(10, 20), (11, 100), (12, 200), (13, 0)] {
            assert_eq!(q.enqueue(data(1, seq, hint), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Forced));
        }
        assert_eq!(q.stats().drops_forced, 4);
        assert_eq!(q.stats().marks, 0);
        assert!(q.fifo.iter().all(|p| p.ecn == Ecn::Ect));
        check_counters(&q);
    }

    #[test]
    fn gentle_region_drops_instead_of_marking() {
        // Gentle, weight 1, thresholds 2/5: between 5 and 10 an early decision drops (ns-2 marks
        // only below max_th); at 10 and above the drop is forced.
        let mut q = aecn("weight = 1.0\nmin_th = 2\nmax_th = 5\nlimit = 100\ngentle = true\nmax_p_robust = 1.0");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for seq in 0..7 {
            q.enqueue(Packet { ecn: Ecn::NotEct, ..data(0, seq, 100) }, Time(0), &mut rng, &mut drops);
        }
        let marks = q.stats().marks;
        let mut dropped = 0;
        for seq in 100..140 {
            // Hold the queue at 7: a departure only after an arrival was queued.
            match q.enqueue(data(1, seq, 20), Time(0), &mut rng, &mut drops) {
                Verdict::Dropped(DropKind::Early) => dropped += 1,
                v => assert_eq!(v, Verdict::Enqueued),
            }
            if q.len_packets() > 7 {
                q.dequeue(Time(0), &mut drops);
            }
        }
        assert!(dropped > 0);
        assert_eq!(q.stats().marks, marks);
        check_counters(&q);
    }

    #[test]
    fn overflow_and_counters_balance_through_a_mixed_script() {
        // Random mix of classes, ECN capability, arrivals and departures under a small buffer.
        let mut q = aecn("limit = 12\nmin_th = 2\nmax_th = 10\nweight = 0.2\nmax_p_robust = 0.8\nmax_p_average = 0.3\nmax_p_fragile = 0.1");
        let (mut rng, mut drops) = (stream(5, StreamId::Queue(0)), DropBuf::new());
        let mut script = stream(6, StreamId::Queue(1));
        use rand::Rng as _;
        for i in 0..20_000u32 {
            let now = Time(i as u64 * 100_000);
            if script.gen::<f64>() < 0.55 {
                let hint = [0u16, 20, 100, 200][script.gen_range(0..4)];
                let ecn = if script.gen::<bool>() { Ecn::Ect } else { Ecn::NotEct };
                let kind = if script.gen::<f64>() < 0.9 { PacketKind::TcpData } else { PacketKind::Udp };
                let pkt = Packet { ecn, kind, size: script.gen_range(40..1500), ..data(i % 7, i, hint) };
                q.enqueue(pkt, now, &mut rng, &mut drops);
            } else {
                q.dequeue(now, &mut drops);
            }
            if i % 97 == 0 {
                check_counters(&q);
            }
        }
        let s = *q.stats();
        assert!(s.drops_overflow > 0 && s.marks > 0 && s.drops_early > 0, "{s:?}");
        assert!(drops.is_empty(), "AECN never drops from inside the queue");
        while q.dequeue(Time(10_000_000_000), &mut drops).is_some() {}
        check_counters(&q);
        assert!(q.classes.iter().all(|vq| vq.unmarked.is_empty() && vq.len_packets == 0 && vq.len_bytes == 0));
    }

    #[test]
    fn scenario_kind_aecn_parses_builds_and_echoes_every_default() {
        use crate::qdisc::{AnyQdisc, DropTailParams};
        use crate::scenario::validate::{queue_spec, QueueSpec};
        let spec = |text: &str| {
            let table: toml::Table = toml::from_str(text).unwrap();
            queue_spec(Some(&table), "queue", QueueSpec::DropTail(DropTailParams::default()))
        };
        let s = spec("kind = \"aecn\"").unwrap();
        assert_eq!(s.kind(), "aecn");
        let echo = s.echo();
        for key in ["max_p_robust", "max_p_average", "max_p_fragile", "robust_below", "fragile_above", "wait", "limit"] {
            assert!(echo.get(key).is_some(), "{key} missing from {echo}");
        }
        assert_eq!((echo["robust_below"].as_f64(), echo["fragile_above"].as_f64(), echo["wait"].as_bool()), (Some(75.0), Some(150.0), Some(true)));
        let back = toml::to_string(&echo).unwrap();
        assert_eq!(spec(&back).unwrap().echo(), echo, "the echo parses back to the same discipline");
        assert!(matches!(s.build("queue", 10e6).unwrap(), AnyQdisc::Aecn(_)));
        let e = spec("kind = \"aecn\"\nmax_p = 0.1").unwrap_err();
        assert!(e.path == "queue.max_p" && e.message.contains("max_p_robust"), "{e}");
        let e = spec("kind = \"aecn\"\nmax_p_robust = 2").unwrap().build("queue", 10e6).err().unwrap();
        assert_eq!(e.path, "queue.max_p_robust");
    }

    #[test]
    fn bad_parameters_name_the_key() {
        assert!(error("max_p_robust = 0").contains("queue.max_p_robust"));
        assert!(error("max_p_fragile = 1.5").contains("(0, 1]"));
        assert!(error("robust_below = 200").contains("queue.robust_below"));
        assert!(error("fragile_above = -1").contains("queue.fragile_above"));
        assert!(error("min_th = 20").contains("queue.min_th"));
        assert!(error("weight = 0").contains("queue.weight"));
        assert!(error("variant = \"altq\"\nwait = true").contains("queue.wait"));
        assert!(toml::from_str::<AecnParams>("ecn = true").is_err(), "unknown keys are refused");
    }
}
