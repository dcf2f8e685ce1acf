//! Queue disciplines behind one sans-IO trait.
//!
//! A discipline is handed the time, a packet and a random stream; it returns a decision. It never
//! reads a clock, schedules events or touches files, so the same code serves the simulator, unit
//! tests with scripted packet sequences, and (later) a real-packet router.
//!
//! Accounting convention (spec seed000-cbt-algorithms §2.0): a packet leaves the queue when its
//! transmission *starts*; the packet on the wire is not counted in the queue length.

pub mod aecn;
pub mod ared;
pub mod bmre;
pub mod catalog;
pub mod cbq;
pub mod drop_front;
pub mod cbt;
pub mod cbt_classifier;
pub mod csfq;
pub mod drr;
pub mod droptail;
pub mod early_random_drop;
pub mod fifo;
pub mod fpq;
pub mod fred;
pub mod random_drop;
pub mod red;
pub mod red_core;
pub mod rio;
pub mod white;
// TSQ (Kumar 2003): PI and TSQ over PI
pub mod pi;
pub mod tsq;
// CoDel (RFC 8289) and FQ-CoDel (RFC 8290)
pub mod codel;
pub mod codel_core;
pub mod fq_codel;
// RFC 8290's flow scheduler (new and old lists, deficit round robin), shared by FQ-CoDel and FQ-PIE
pub(crate) mod fq_scheduler;
// PIE (RFC 8033)
pub mod pie;
pub(crate) mod pie_core;
// FQ-PIE (RFC 8033 per flow queue under RFC 8290's scheduler; Linux sch_fq_pie, ns-3 FqPieQueueDisc)
pub mod fq_pie;
// BLUE and Stochastic Fair Blue (Feng et al. 2002)
pub mod blue;
pub mod sfb;
// DualPI2, the DualQ Coupled AQM for L4S (RFC 9332; Linux sch_dualpi2)
pub mod dualpi2;
// CAKE (Hoeiland-Joergensen, Taeht & Morton 2018; Linux sch_cake)
// COBALT (CoDel + BLUE), the AQM of CAKE and of the standalone cobalt / fq_cobalt
pub mod cobalt_core;
pub mod cobalt;
pub mod fq_cobalt;
pub mod cake;
// REM, Random Exponential Marking (Athuraliya, Low, Li & Yin 2001; ns-2 Queue/REM)
pub mod rem;
// SFQ (McKenney 1990; Linux sch_sfq)
pub mod sfq;
// CHOKe (Pan, Prabhakar & Psounis 2000; Linux sch_choke)
pub mod choke;

use crate::engine::{Rng, Time};
use crate::packet::{FlowId, Packet};

/// The parameters with every key at its serde default, as an empty `[queue]` table would give
/// them: for the parameter types whose defaults live only in `#[serde(default = ...)]`.
pub(crate) fn serde_defaults<T: serde::de::DeserializeOwned>() -> T {
    toml::Value::Table(toml::Table::new()).try_into().expect("every key has a default")
}

pub use aecn::{Aecn, AecnParams};
pub use bmre::{Bmre, BmreParams};
pub use catalog::catalog;
pub use drop_front::{DropFront, DropFrontParams};
pub use cbq::{Cbq, CbqClassParams, CbqGroupParams, CbqParams};
pub use cbt::{Cbt, CbtClassParams, CbtParams};
pub use csfq::{Csfq, CsfqParams};
pub use drr::{Drr, DrrParams};
pub use droptail::{DropTail, DropTailParams};
pub use early_random_drop::{EarlyRandomDrop, EarlyRandomDropParams};
pub use fpq::{Fpq, FpqParams};
pub use fred::{Fred, FredParams};
pub use random_drop::{RandomDrop, RandomDropParams};
pub use red::{Red, RedParams};
pub use rio::{Rio, RioParams};
pub use white::{White, WhiteFlavour, WhiteParams};
pub use pi::{Pi, PiParams};
pub use tsq::{Tsq, TsqParams};
pub use codel::{Codel, CodelParams};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use pie::{Pie, PieParams};
pub use fq_pie::{FqPie, FqPieParams};
pub use blue::{Blue, BlueParams};
pub use sfb::{Sfb, SfbParams};
pub use dualpi2::{DualPi2, DualPi2Params};
pub use cake::{Cake, CakeParams};
pub use cobalt::{CobaltQdisc, CobaltQdiscParams, CobaltVariant};
pub use fq_cobalt::{FqCobalt, FqCobaltParams};
pub use rem::{Rem, RemParams};
pub use sfq::{Sfq, SfqParams};
pub use choke::{Choke, ChokeParams};

/// What a flow-aware discipline may know of a flow beyond its id: the hosts at its two ends
/// and its DSCP (read by `cake`'s host isolation and tins; set once at build, `set_flow_labels`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowLabel {
    /// The host the data leaves from (scenario key `sender_host`).
    pub sender_host: u32,
    /// The host the data goes to (scenario key `receiver_host`).
    pub receiver_host: u32,
    /// Differentiated Services codepoint of the flow's packets, 0-63 (scenario key `dscp`).
    pub dscp: u8,
}

impl FlowLabel {
    /// The label of a flow the scenario says nothing about: its own sender and receiver hosts
    /// (ids `2^31 + flow`, above any a scenario may name), DSCP 0.
    pub fn default_for(flow: FlowId) -> FlowLabel {
        let id = cake::DEFAULT_HOST_BASE | flow;
        FlowLabel { sender_host: id, receiver_host: id, dscp: 0 }
    }
}

/// Why a packet was discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropKind {
    /// Probabilistic early drop (RED family: the average is between the thresholds).
    Early,
    /// Deterministic drop because the average exceeds the maximum threshold.
    Forced,
    /// The buffer is full.
    Overflow,
}

/// Fate of the arriving packet. Packets discarded from inside the queue during the call
/// (victim, head or batch drops) are pushed to the `drops` buffer instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queued unchanged.
    Enqueued,
    /// Queued with its ECN field set to CE.
    Marked,
    /// Discarded.
    Dropped(DropKind),
}

/// Packets a discipline discarded from inside its queue during one call, with the reason.
/// Owned by the engine and reused, so no call allocates.
pub type DropBuf = Vec<(Packet, DropKind)>;

/// Counters every discipline keeps, named like the `summary.json` queue keys.
/// Invariant: `arrivals = enqueues + drops of arriving packets`;
/// `enqueues = dequeues + queued + drops from inside the queue`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QdiscStats {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Packets accepted (marked ones included).
    pub enqueues: u64,
    /// Packets handed to the link.
    pub dequeues: u64,
    /// Early (probabilistic) drops.
    pub drops_early: u64,
    /// Forced drops (average above the maximum threshold).
    pub drops_forced: u64,
    /// Drops because the buffer was full.
    pub drops_overflow: u64,
    /// Packets ECN-marked instead of dropped.
    pub marks: u64,
}

impl QdiscStats {
    /// Total drops of every kind.
    pub fn drops(&self) -> u64 {
        self.drops_early + self.drops_forced + self.drops_overflow
    }

    /// Drops per arrival (0 without arrivals).
    pub fn drop_rate(&self) -> f64 {
        if self.arrivals > 0 { self.drops() as f64 / self.arrivals as f64 } else { 0.0 }
    }

    /// The counts accumulated since `earlier` (a snapshot of the same counters).
    pub fn since(&self, earlier: &QdiscStats) -> QdiscStats {
        QdiscStats {
            arrivals: self.arrivals - earlier.arrivals,
            enqueues: self.enqueues - earlier.enqueues,
            dequeues: self.dequeues - earlier.dequeues,
            drops_early: self.drops_early - earlier.drops_early,
            drops_forced: self.drops_forced - earlier.drops_forced,
            drops_overflow: self.drops_overflow - earlier.drops_overflow,
            marks: self.marks - earlier.marks,
        }
    }

    /// The counters a queue and each of its classes report in `summary.json`: arrivals,
    /// enqueues, dequeues, drops in all and by kind, and the drop rate.
    pub fn summary_fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let serde_json::Value::Object(fields) = serde_json::json!({
            "arrivals": self.arrivals,
            "enqueues": self.enqueues,
            "dequeues": self.dequeues,
            "drops": self.drops(),
            "drops_early": self.drops_early,
            "drops_forced": self.drops_forced,
            "drops_overflow": self.drops_overflow,
            "drop_rate": self.drop_rate(),
        }) else {
            unreachable!("an object literal")
        };
        fields
    }

    /// Counts one drop of `kind`.
    pub fn count_drop(&mut self, kind: DropKind) {
        match kind {
            DropKind::Early => self.drops_early += 1,
            DropKind::Forced => self.drops_forced += 1,
            DropKind::Overflow => self.drops_overflow += 1,
        }
    }
}

/// Adaptive RED's state for the results: the adapted `max_p` and the thresholds, weight and target
/// band in use (automatic ones resolved), all in the average's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveRedView {
    /// The current `max_p`.
    pub max_p: f64,
    /// Minimum threshold.
    pub min_th: f64,
    /// Maximum threshold.
    pub max_th: f64,
    /// EWMA weight.
    pub weight: f64,
    /// Lower end of the target band.
    pub target_low: f64,
    /// Upper end of the target band.
    pub target_high: f64,
}

/// One traffic class of a class-based discipline (CBT): its counters and current state.
/// The per-class counters obey the same invariants as [`QdiscStats`], and summed over the classes
/// they equal the discipline's totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassStats {
    /// The class name from the scenario.
    pub name: String,
    /// Packet counters of the class (drops split by kind).
    pub stats: QdiscStats,
    /// The same counters in bytes (`marks` stays 0).
    pub bytes: QdiscStats,
    /// The class's average queue (packets; mean-size packets in byte mode).
    pub average: f64,
    /// Packets of the class queued now.
    pub len_packets: usize,
    /// Bytes of the class queued now.
    pub len_bytes: u64,
}

/// The queue-discipline interface.
pub trait Qdisc {
    /// Offers an arriving packet at `now`. Returns its fate; packets dropped from inside the
    /// queue go to `drops`.
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict;
    /// Takes the next packet to transmit at `now` (its transmission starts now).
    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet>;
    /// The packet `dequeue` would return next, if the discipline can tell without side effects.
    fn peek(&self) -> Option<&Packet>;
    /// Packets queued.
    fn len_packets(&self) -> usize;
    /// Bytes queued; the sum of `size` over queued packets.
    fn len_bytes(&self) -> u64;
    /// Counters since the start of the run.
    fn stats(&self) -> &QdiscStats;
    /// Brings state that ages with time alone up to `now` before the simulator samples it
    /// (BMRE's slot expiry, so `flow_estimate` and the expiry count are not stale across an idle
    /// link). It must not change any later decision; the default does nothing.
    fn before_sample(&mut self, _now: Time) {}
    /// The discipline's smoothed queue estimate (RED's `avg`), if it keeps one, in its own unit.
    fn average(&self) -> Option<f64> {
        None
    }
    /// The discipline's estimate of the number of active flows, if it keeps one (FPQ's count;
    /// FRED's `Nactive`, the flows with packets queued).
    fn flow_estimate(&self) -> Option<f64> {
        None
    }
    /// Per-class counters of a class-based discipline (CBT, CBQ), in class order; empty otherwise.
    fn class_stats(&self) -> Vec<ClassStats> {
        Vec::new()
    }
    /// Number of classes of a class-based discipline, 0 otherwise. The `class_*_at` accessors
    /// take an index below it, in `class_stats` order; they are cheap enough for every event.
    fn class_count(&self) -> usize {
        0
    }
    /// Packets and bytes of class `i` queued now.
    fn class_len_at(&self, _i: usize) -> (usize, u64) {
        (0, 0)
    }
    /// Class `i`'s smoothed estimate (as `ClassStats::average`), NaN when it keeps none.
    fn class_average_at(&self, _i: usize) -> f64 {
        f64::NAN
    }
    /// Adaptive RED's current `max_p` and the settings it runs with, if the discipline adapts.
    fn adaptive_red(&self) -> Option<AdaptiveRedView> {
        None
    }
    /// WHITE's router RTT estimates (R_average, R_formula), ms, if the discipline keeps them.
    fn rtt_estimates(&self) -> Option<(f64, f64)> {
        None
    }
    /// The flow of a queued packet the last `enqueue` marked instead of the arrival (AECN's
    /// mark-front), taken once; the arrival's own mark is its `Verdict::Marked`.
    fn take_front_mark(&mut self) -> Option<FlowId> {
        None
    }
    /// A per-flow discipline's state of `flow`: (drop exponent, estimated rate bits/s), if it
    /// keeps state for it now (BMRE's β and rate).
    fn flow_internals(&self, _flow: FlowId) -> Option<(f64, f64)> {
        None
    }
    /// BMRE's internals: [mode 0/1/2, target_q B, vmax_q B, Fair Drops, recycled slots, expiries].
    fn bmre_internals(&self) -> Option<[f64; 6]> {
        None
    }
    /// The discipline's own event counters beyond [`QdiscStats`], counted from the start, as
    /// (name, count) in a fixed order (BMRE's drops by reason and slot events); empty if none.
    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
    /// For a discipline that may hold packets without offering one (a shaper): the time it
    /// will, when `dequeue` just returned `None` with packets queued. The engine asks again then.
    /// `None` (every work-conserving discipline) means "whenever a packet arrives".
    fn next_wakeup(&self) -> Option<Time> {
        None
    }
    /// The flows' labels, indexed by flow id, handed over once after build; disciplines that
    /// classify by host or DSCP keep them, the rest ignore them.
    fn set_flow_labels(&mut self, _labels: &[FlowLabel]) {}
}

/// Every discipline, dispatched with a `match` (no `dyn` in the event loop).
pub enum AnyQdisc {
    /// Drop-tail FIFO.
    DropTail(DropTail),
    /// Drop-front on full.
    DropFront(DropFront),
    /// Early Random Drop.
    EarlyRandomDrop(EarlyRandomDrop),
    /// Random drop on full.
    RandomDrop(RandomDrop),
    /// Random Early Detection.
    Red(Red),
    /// Flow-Proportional Queuing.
    Fpq(Fpq),
    /// RED with In and Out.
    Rio(Rio),
    /// Flow Random Early Drop.
    Fred(Fred),
    /// Class-Based Thresholds.
    Cbt(Cbt),
    /// Class-Based Queueing (link sharing).
    Cbq(Cbq),
    /// RED with RTT-hint scaling (Chardonnay, Chablis).
    White(White),
    /// Adaptive ECN (RTT classes, mark-front).
    Aecn(Aecn),
    /// Deficit Round Robin.
    Drr(Drr),
    /// Core-Stateless Fair Queueing (edge and core in one router).
    Csfq(Csfq),
    /// Buffer Management based on Rate Estimation (Cho 2002).
    Bmre(Bmre),
    /// PI controller (Hollot et al. 2001, as ns-2 runs it).
    Pi(Pi),
    /// TSQ over PI (Kumar 2003).
    Tsq(Tsq),
    /// CoDel (RFC 8289).
    Codel(Codel),
    /// FQ-CoDel (RFC 8290).
    FqCodel(FqCodel),
    /// PIE (RFC 8033).
    Pie(Pie),
    /// FQ-PIE (Linux sch_fq_pie, ns-3 FqPieQueueDisc).
    FqPie(FqPie),
    /// BLUE (Feng et al. 2002).
    Blue(Blue),
    /// Stochastic Fair Blue (Feng et al. 2002; Linux sch_sfb).
    Sfb(Sfb),
    /// DualPI2, DualQ Coupled AQM for L4S (RFC 9332).
    DualPi2(DualPi2),
    /// CAKE (Linux sch_cake).
    Cake(Cake),
    /// REM, Random Exponential Marking (Athuraliya et al. 2001, as ns-2 runs it).
    Rem(Rem),
    /// Stochastic Fairness Queueing (Linux sch_sfq).
    Sfq(Sfq),
    /// CHOKe (Linux sch_choke).
    Choke(Choke),
    /// COBALT on one FIFO (ns-3 CobaltQueueDisc).
    Cobalt(CobaltQdisc),
    /// FQ-COBALT (ns-3 FqCobaltQueueDisc).
    FqCobalt(FqCobalt),
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQdisc::DropTail($q) => $e,
            AnyQdisc::DropFront($q) => $e,
            AnyQdisc::EarlyRandomDrop($q) => $e,
            AnyQdisc::RandomDrop($q) => $e,
            AnyQdisc::Red($q) => $e,
            AnyQdisc::Fpq($q) => $e,
            AnyQdisc::Rio($q) => $e,
            AnyQdisc::Fred($q) => $e,
            AnyQdisc::Cbt($q) => $e,
            AnyQdisc::Cbq($q) => $e,
            AnyQdisc::White($q) => $e,
            AnyQdisc::Aecn($q) => $e,
            AnyQdisc::Drr($q) => $e,
            AnyQdisc::Csfq($q) => $e,
            AnyQdisc::Bmre($q) => $e,
            AnyQdisc::Pi($q) => $e,
            AnyQdisc::Tsq($q) => $e,
            AnyQdisc::Codel($q) => $e,
            AnyQdisc::FqCodel($q) => $e,
            AnyQdisc::Pie($q) => $e,
            AnyQdisc::FqPie($q) => $e,
            AnyQdisc::Blue($q) => $e,
            AnyQdisc::Sfb($q) => $e,
            AnyQdisc::DualPi2($q) => $e,
            AnyQdisc::Cake($q) => $e,
            AnyQdisc::Rem($q) => $e,
            AnyQdisc::Sfq($q) => $e,
            AnyQdisc::Choke($q) => $e,
            AnyQdisc::Cobalt($q) => $e,
            AnyQdisc::FqCobalt($q) => $e,
        }
    };
}

impl Qdisc for AnyQdisc {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        dispatch!(self, q => q.enqueue(pkt, now, rng, drops))
    }
    #[inline]
    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
        dispatch!(self, q => q.dequeue(now, drops))
    }
    fn peek(&self) -> Option<&Packet> {
        dispatch!(self, q => q.peek())
    }
    #[inline]
    fn len_packets(&self) -> usize {
        dispatch!(self, q => q.len_packets())
    }
    #[inline]
    fn len_bytes(&self) -> u64 {
        dispatch!(self, q => q.len_bytes())
    }
    fn stats(&self) -> &QdiscStats {
        dispatch!(self, q => q.stats())
    }
    fn average(&self) -> Option<f64> {
        dispatch!(self, q => q.average())
    }
    fn flow_estimate(&self) -> Option<f64> {
        dispatch!(self, q => q.flow_estimate())
    }
    fn class_stats(&self) -> Vec<ClassStats> {
        dispatch!(self, q => q.class_stats())
    }
    #[inline]
    fn class_count(&self) -> usize {
        dispatch!(self, q => q.class_count())
    }
    fn class_len_at(&self, i: usize) -> (usize, u64) {
        dispatch!(self, q => q.class_len_at(i))
    }
    fn class_average_at(&self, i: usize) -> f64 {
        dispatch!(self, q => q.class_average_at(i))
    }
    fn rtt_estimates(&self) -> Option<(f64, f64)> {
        dispatch!(self, q => q.rtt_estimates())
    }
    fn adaptive_red(&self) -> Option<AdaptiveRedView> {
        dispatch!(self, q => q.adaptive_red())
    }
    #[inline]
    fn take_front_mark(&mut self) -> Option<FlowId> {
        dispatch!(self, q => q.take_front_mark())
    }
    fn flow_internals(&self, flow: FlowId) -> Option<(f64, f64)> {
        dispatch!(self, q => q.flow_internals(flow))
    }
    fn bmre_internals(&self) -> Option<[f64; 6]> {
        dispatch!(self, q => q.bmre_internals())
    }
    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        dispatch!(self, q => q.detail_counters())
    }
    #[inline]
    fn next_wakeup(&self) -> Option<Time> {
        dispatch!(self, q => q.next_wakeup())
    }
    fn set_flow_labels(&mut self, labels: &[FlowLabel]) {
        dispatch!(self, q => q.set_flow_labels(labels))
    }
    fn before_sample(&mut self, now: Time) {
        dispatch!(self, q => q.before_sample(now))
    }
}
