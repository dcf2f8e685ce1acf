//! DualPI2, the DualQ Coupled AQM for L4S (De Schepper, Briscoe & White, RFC 9332, January 2023),
//! with a switch for the behaviour of Linux's `net/sched/sch_dualpi2.c` where the two differ.
//!
//! Two FIFOs share one buffer (RFC 9332 §2.4). Arrivals carrying ECT(1) or CE go to the L queue,
//! everything else (Not-ECT, ECT(0)) to the C queue (RFC 9331 §5.1, RFC 9332 §2.3). One PI
//! controller, run every `tupdate` on a queue delay (RFC 9332 §2.4, Appendix A.1 `dualpi2_update`),
//! keeps a base probability `p'`:
//!
//! `p' ← clamp(p' + alpha·(curq − target) + beta·(curq − prevq), 0, 1)`,
//!
//! and both queues derive their congestion signal from it (RFC 9332 §2.1, §2.4):
//! * classic drop or mark probability `p_C = p'²` (the "square" of PI2, which suits Reno/CUBIC's
//!   1/√p rate law, §2.1);
//! * coupled L4S mark probability `p_CL = min(k·p', 1)` with coupling factor `k` (§2.1, default 2),
//!   so a scalable flow (rate ∝ 1/p) and a classic one (rate ∝ 1/√p) get about the same rate
//!   when RTTs are equal (§2.3: k = 2 gives window balance for DCTCP-like against Reno);
//! * the native L4S AQM on the L queue's own sojourn, `p'_L`: a ramp from `l4s_min_th` over
//!   `l4s_range` (Appendix A.1 `laqm`), a step when `l4s_range = 0`;
//! * L4S packets are marked with `p_L = max(p'_L, p_CL)` (§2.5.1.1, Appendix A.1's combining
//!   function).
//!
//! Worked number: p' = 0.1 gives p_C = 1 % classic drops and p_CL = 20 % L4S marks. Reno's window
//! ≈ 1.22/√0.01 ≈ 12 segments, DCTCP's ≈ 2/p ≈ 10 segments: the balance k = 2 aims at (§2.3).
//!
//! Classic ECN (`ecn`, default true): an ECT(0) packet picked by `p_C` is marked instead of
//! dropped while `p_C < p_Cmax = min(1/k², 1)`; above it ECN is disabled (Appendix A.1,
//! "overload disables ECN"). Overload (§4.2.3): once `p_CL` saturates (`k·p' ≥ 1`), L4S packets
//! are dropped with `p_C`, as classic ones, and the rest marked with `p_CL`, so unresponsive
//! traffic in the L queue meets the classic drop rate (Appendix A.2). `drop_on_overload = false`
//! never drops L4S packets (Linux `overflow`): the buffer limit then acts.
//!
//! The AQM acts at dequeue, as in Appendix A.1 and Linux's default (`drop_dequeue`): the packet
//! the scheduler picks is dropped or marked, and a dropped one is replaced by the next pick in
//! the same call. The PI update runs at k·`tupdate` (k ≥ 1) without an engine timer, caught up at
//! the start of every enqueue and dequeue as `pie.rs` does; an update at the same instant as a
//! packet event runs first.
//!
//! `variant` chooses between RFC 9332's example (Appendix A.1, A.2) and Linux's
//! `sch_dualpi2.c` where they differ in ways that change results:
//!
//! | | `"rfc9332"` (default) | `"linux"` |
//! |---|---|---|
//! | scheduler between the queues | time-shifted FIFO (§4.2.2 option, Appendix A.1 `scheduler()`): the head that waited longer, the C head's wait reduced by `tshift` (default 2·target) | WRR credit (`c_protection`, C weight 10 %): the L queue goes first while the credit is ≤ 0; every packet sent from L adds `c_protection`·size, every one from C takes (100 − `c_protection`)·size; the credit resets when both are empty |
//! | PI input `curq` | the C queue's head sojourn (Appendix A.1 `cq.time()`) | max of both heads' sojourns |
//! | defaults `tupdate`, `alpha`, `beta` | Appendix A.1 Figure 2 derived from `target` and `rtt_max`: `Tupdate = min(target, RTT_max/3)` = 15 ms, `alpha = 0.1·Tupdate/RTT_max²` = 0.15 Hz, `beta = 0.3/RTT_max` = 3 Hz | 16 ms, 41/256 ≈ 0.160 Hz, 819/256 ≈ 3.199 Hz (`dualpi2_reset_default`) |
//! | native L4S AQM | ramp 800 µs + 400 µs (Figure 2 `minTh`, `range`), only while the L queue holds more than `l4s_min_packets` = 1 packet (`Th_len`) | step: mark when the sojourn exceeds 1 ms (`step_thresh`), at any queue length (`min_qlen_step` 0) |
//! | probability draws | `recur()`: a per-queue deterministic accumulator (Appendix A.1) | one uniform per decision (`dualpi2_roll`); the classic test draws twice, p'·p' |
//! | small backlog | no safeguard | no drop and no coupled or classic mark while less than 2 MTU (1514 B) stay queued after the dequeue (`must_drop`); the step still marks |
//! | overload test | `k·p' ≥ 1` (`p_CL ≥ p_Lmax`) | `k·p' > 1`; with `drop_on_overload = false`, p' is capped at 1/k |
//! | `limit` `"auto"` | 250 ms at the bottleneck rate, in bytes (Figure 2 `MAX_LINK_RATE · 250 ms`) | 10000 packets |
//!
//! Not modelled: Linux's `memlimit` on `skb->truesize`, GSO splitting, tc filters and the
//! `skb->priority` classification, `ecn_mask = any_ect` (ECT(0) into L), the "LLLL" class; the
//! RFC's optional enqueue-side AQM and its byte-mode queue delay (`lq.time()` here is always a
//! sojourn time, RFC §2.5.2's recommended technique).
//!
//! Counters: the two queues are classes `"l4s"` and `"classic"` of [`ClassStats`] (their
//! `average` is the current `p_CL` and `p_C`); `detail_counters` splits marks and drops by
//! cause and sums each queue's sojourn times of sent packets, so a run's summary gives each
//! queue's mean sojourn.

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::{ClassStats, DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::{Ecn, Packet};
use crate::scenario::units::{Duration, Limit};

/// Linux's `psched_mtu` on Ethernet (1500 B MTU + 14 B header): the unit of its small-backlog
/// safeguard and of its WRR credit's initial value.
const LINUX_MTU_BYTES: u64 = 1514;
/// Linux's default packet limit (`dualpi2_reset_default`: "Max 125ms at 1Gbps").
const LINUX_LIMIT_PKTS: u64 = 10_000;
/// RFC 9332 Figure 2: `limit = MAX_LINK_RATE * 250 ms`.
const RFC_LIMIT_S: f64 = 0.250;
/// RFC 9332 Figure 2: `p_Lmax = 1`.
const P_LMAX: f64 = 1.0;

/// Which published form of DualPI2 to run where RFC 9332 and Linux differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DualPi2Variant {
    /// RFC 9332 Appendix A.1 and A.2.
    #[default]
    Rfc9332,
    /// Linux `net/sched/sch_dualpi2.c`.
    Linux,
}

/// How a probability becomes a decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DualPi2Draws {
    /// RFC 9332 Appendix A.1 `recur(q, p)`: `q.count += p`, true (and `count -= 1`) once it
    /// exceeds 1. Deterministic; one accumulator per queue.
    Recur,
    /// A uniform draw per decision, true when below `p` (Linux `dualpi2_roll`).
    Random,
}

/// `limit`: a fixed buffer or `"auto"` (the variant's default, see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DualPi2Limit {
    /// RFC: 250 ms at the bottleneck rate in bytes; Linux: 10000 packets.
    #[default]
    Auto,
    /// Packets, bytes or none, as other disciplines' `limit`.
    Fixed(Limit),
}

impl Serialize for DualPi2Limit {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DualPi2Limit::Auto => s.serialize_str("auto"),
            DualPi2Limit::Fixed(l) => l.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for DualPi2Limit {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{value, IntoDeserializer};
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = DualPi2Limit;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"auto\", a packet count (integer), a size string such as \"150KB\", or \"none\"")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<DualPi2Limit, E> {
                Limit::deserialize(IntoDeserializer::<value::Error>::into_deserializer(v)).map(DualPi2Limit::Fixed).map_err(E::custom)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<DualPi2Limit, E> {
                Limit::deserialize(IntoDeserializer::<value::Error>::into_deserializer(v)).map(DualPi2Limit::Fixed).map_err(E::custom)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<DualPi2Limit, E> {
                if v == "auto" {
                    return Ok(DualPi2Limit::Auto);
                }
                Limit::deserialize(IntoDeserializer::<value::Error>::into_deserializer(v)).map(DualPi2Limit::Fixed).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Scenario keys of `kind = "dualpi2"`. The `Option` keys default by `variant` ([`Self::filled`]).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DualPi2Params {
    /// `"rfc9332"` (default) or `"linux"`.
    #[serde(default)]
    pub variant: DualPi2Variant,
    /// Buffer shared by both queues: `"auto"` (default), packets, bytes or `"none"`.
    #[serde(default)]
    pub limit: DualPi2Limit,
    /// Classic queue delay target (RFC Figure 2 `target`, Linux `target`): 15 ms.
    #[serde(default = "default_target")]
    pub target: Duration,
    /// Worst-case RTT the PI gains are designed for (RFC Figure 2 `RTT_max`): 100 ms. Only
    /// `rfc9332`'s default `tupdate`, `alpha` and `beta` use it.
    #[serde(default = "default_rtt_max")]
    pub rtt_max: Duration,
    /// PI update period (RFC `Tupdate`, Linux `tupdate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tupdate: Option<Duration>,
    /// Integral gain, Hz (RFC `alpha`, Linux `alpha`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Proportional gain, Hz (RFC `beta`, Linux `beta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// Coupling factor k (RFC §2.1, Linux `coupling_factor`): 2.
    #[serde(default = "default_k")]
    pub k: f64,
    /// Native L4S AQM: sojourn where marking starts (RFC `minTh`; Linux `step_thresh`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l4s_min_th: Option<Duration>,
    /// Native L4S AQM: width of the ramp to certain marking (RFC `range`); 0 is a step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l4s_range: Option<Duration>,
    /// Native L4S AQM acts only while the L queue holds more than this many packets, the one
    /// being dequeued included (RFC `Th_len` 1; Linux `min_qlen_step` 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l4s_min_packets: Option<u32>,
    /// `"recur"` (RFC default) or `"random"` (Linux default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draws: Option<DualPi2Draws>,
    /// Time-shifted FIFO's bias against the classic head (`rfc9332` scheduler): default 2·target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tshift: Option<Duration>,
    /// WRR weight of the classic queue, percent (`linux` scheduler, Linux `classic_protection`): 10.
    #[serde(default = "default_c_protection")]
    pub c_protection: u32,
    /// Mark ECT(0) packets in the classic queue instead of dropping them (RFC Appendix A.1): true.
    #[serde(default = "default_true")]
    pub ecn: bool,
    /// On overload, drop L4S packets with p_C (RFC §4.2.3, Linux `drop_on_overload`): true.
    #[serde(default = "default_true")]
    pub drop_on_overload: bool,
}

fn default_target() -> Duration {
    Duration(Dur::from_millis(15))
}
fn default_rtt_max() -> Duration {
    Duration(Dur::from_millis(100))
}
fn default_k() -> f64 {
    2.0
}
fn default_c_protection() -> u32 {
    10
}
fn default_true() -> bool {
    true
}

impl Default for DualPi2Params {
    fn default() -> Self {
        DualPi2Params {
            variant: DualPi2Variant::default(),
            limit: DualPi2Limit::Auto,
            target: default_target(),
            rtt_max: default_rtt_max(),
            tupdate: None,
            alpha: None,
            beta: None,
            k: default_k(),
            l4s_min_th: None,
            l4s_range: None,
            l4s_min_packets: None,
            draws: None,
            tshift: None,
            c_protection: default_c_protection(),
            ecn: true,
            drop_on_overload: true,
        }
    }
}

impl DualPi2Params {
    /// Writes the variant's defaults into the keys left out (shown by `validate --show` and the
    /// summary's scenario echo).
    pub fn filled(mut self) -> Self {
        let linux = self.variant == DualPi2Variant::Linux;
        let (target, rtt_max) = (self.target.0, self.rtt_max.0);
        // RFC Figure 2 line 12: Tupdate = min(target, RTT_max/3). Linux: 16 ms.
        let tupdate = self.tupdate.get_or_insert(Duration(if linux { Dur::from_millis(16) } else { target.min(Dur(rtt_max.0 / 3)) })).0;
        let (t_ns, r_ns) = (tupdate.0 as f64, rtt_max.0 as f64);
        // Line 13: alpha = 0.1·Tupdate/RTT_max² Hz; line 14: beta = 0.3/RTT_max Hz. In integer
        // nanoseconds so that 15 ms and 100 ms give exactly 0.15 and 3. Linux: 41/256, 819/256.
        self.alpha.get_or_insert(if linux { 41.0 / 256.0 } else { t_ns * 1e9 / (10.0 * r_ns * r_ns) });
        self.beta.get_or_insert(if linux { 819.0 / 256.0 } else { 3e9 / (10.0 * r_ns) });
        // Lines 17–19: minTh 800 µs, range 400 µs, Th_len 1 packet. Linux: a 1 ms step, any length.
        self.l4s_min_th.get_or_insert(Duration(if linux { Dur::from_millis(1) } else { Dur::from_micros(800) }));
        self.l4s_range.get_or_insert(Duration(if linux { Dur::ZERO } else { Dur::from_micros(400) }));
        self.l4s_min_packets.get_or_insert(if linux { 0 } else { 1 });
        self.draws.get_or_insert(if linux { DualPi2Draws::Random } else { DualPi2Draws::Recur });
        self.tshift.get_or_insert(Duration(Dur(2 * target.0)));
        self
    }

    /// Checks the keys and builds the discipline for a link of `rate_bps`.
    pub fn validate(&self, path: &str, rate_bps: f64) -> ConfigResult<DualPi2> {
        let p = self.clone().filled();
        let key = |k: &str| join(path, k);
        for (name, d) in [("target", p.target), ("rtt_max", p.rtt_max), ("tupdate", p.tupdate.expect("filled"))] {
            if d.0 == Dur::ZERO {
                return Err(ConfigError::new(key(name), "must be a positive duration, got 0"));
            }
        }
        for (name, v) in [("alpha", p.alpha.expect("filled")), ("beta", p.beta.expect("filled"))] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(ConfigError::new(key(name), format!("must be a finite number >= 0 (Hz), got {v}")));
            }
        }
        if !(p.k.is_finite() && p.k > 0.0 && p.k <= 256.0) {
            return Err(ConfigError::new(key("k"), format!("must be a coupling factor in (0, 256], got {}", p.k)));
        }
        if p.c_protection > 100 {
            return Err(ConfigError::new(key("c_protection"), format!("must be a percentage in 0..=100, got {}", p.c_protection)));
        }
        let linux = p.variant == DualPi2Variant::Linux;
        let limit = match p.limit {
            DualPi2Limit::Fixed(l) => l,
            DualPi2Limit::Auto if linux => Limit::Packets(LINUX_LIMIT_PKTS),
            DualPi2Limit::Auto => Limit::Bytes(((rate_bps * RFC_LIMIT_S / 8.0).round() as u64).max(1)),
        };
        let wc = i64::from(p.c_protection);
        let cfg = DualPi2Config {
            variant: p.variant,
            limit,
            target: p.target.0,
            tupdate: p.tupdate.expect("filled").0,
            alpha: p.alpha.expect("filled"),
            beta: p.beta.expect("filled"),
            k: p.k,
            p_cmax: (1.0 / (p.k * p.k)).min(1.0),
            l4s_min_th: p.l4s_min_th.expect("filled").0,
            l4s_range: p.l4s_range.expect("filled").0,
            l4s_min_packets: p.l4s_min_packets.expect("filled") as usize,
            draws: p.draws.expect("filled"),
            tshift: p.tshift.expect("filled").0,
            wc,
            wl: 100 - wc,
            ecn: p.ecn,
            drop_on_overload: p.drop_on_overload,
        };
        Ok(DualPi2::new(cfg))
    }
}

/// The validated constants.
#[derive(Clone, Copy, Debug)]
pub(super) struct DualPi2Config {
    pub variant: DualPi2Variant,
    /// Shared by both queues.
    pub limit: Limit,
    pub target: Dur,
    pub tupdate: Dur,
    /// Hz.
    pub alpha: f64,
    /// Hz.
    pub beta: f64,
    pub k: f64,
    /// Above this p_C classic ECN is disabled (RFC Figure 2 line 11: min(1/k², 1)).
    pub p_cmax: f64,
    pub l4s_min_th: Dur,
    pub l4s_range: Dur,
    pub l4s_min_packets: usize,
    pub draws: DualPi2Draws,
    pub tshift: Dur,
    /// Linux WRR weights, percent; `wc + wl = 100`.
    pub wc: i64,
    pub wl: i64,
    pub ecn: bool,
    pub drop_on_overload: bool,
}

/// Index of the L queue in `queues` and in `class_stats` order.
pub const L: usize = 0;
/// Index of the C queue.
pub const C: usize = 1;

/// The controller's state.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct DualPi2State {
    /// Base probability p', in [0, 1].
    pub p: f64,
    /// `prevq`: the PI input at the previous update, seconds.
    pub prevq: f64,
    /// The next periodic update.
    pub next_update_at: Time,
    /// Updates run so far.
    pub updates: u64,
    /// `recur()` accumulators of the L and C queues (RFC Appendix A.1 `q.count`).
    pub recur: [f64; 2],
    /// Linux WRR credit, bytes × percent: ≤ 0 serves L next (`c_protection_credit`).
    pub credit: i64,
}

/// The discipline's own counters (`detail_counters`), counted from the start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DualPi2Details {
    /// L4S packets marked CE (coupled, native or overload marking).
    pub l4s_marks: u64,
    /// Of those, marks the native L4S AQM decided: Linux's step marks; RFC: marks where
    /// `p'_L ≥ p_CL`.
    pub l4s_marks_native: u64,
    /// L4S packets dropped on overload (§4.2.3).
    pub l4s_drops_overload: u64,
    /// Classic packets marked CE with p_C.
    pub classic_marks: u64,
    /// Classic packets dropped by the AQM with p_C.
    pub classic_drops: u64,
    /// Sum of the sojourn times of packets sent from the L queue, ns.
    pub l4s_sojourn_ns: u64,
    /// Sum of the sojourn times of packets sent from the C queue, ns.
    pub classic_sojourn_ns: u64,
    /// PI updates that left the controller in overload (`k·p' ≥ 1`; Linux `> 1`).
    pub overload_updates: u64,
}

/// DualPI2.
pub struct DualPi2 {
    cfg: DualPi2Config,
    st: DualPi2State,
    /// The L and C queues.
    queues: [Fifo; 2],
    stats: QdiscStats,
    /// Per-queue packet and byte counters; summed they equal `stats` (bytes: in bytes).
    class_pkts: [QdiscStats; 2],
    class_bytes: [QdiscStats; 2],
    details: DualPi2Details,
    /// The queue's random stream for draws at dequeue (a copy of the stream `enqueue` is handed,
    /// taken at the first arrival; DualPI2 draws nothing at enqueue, so it is the same sequence).
    rng: Option<Rng>,
}

/// What the AQM does with a packet the scheduler picked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Action {
    Send,
    Mark { native: bool },
    Drop { overload: bool },
}

impl DualPi2 {
    fn new(cfg: DualPi2Config) -> DualPi2 {
        let cap = |_| Fifo::new(cfg.limit);
        DualPi2 {
            st: DualPi2State { next_update_at: Time(cfg.tupdate.0), credit: Self::initial_credit(&cfg), ..DualPi2State::default() },
            cfg,
            queues: [0, 1].map(cap),
            stats: QdiscStats::default(),
            class_pkts: [QdiscStats::default(); 2],
            class_bytes: [QdiscStats::default(); 2],
            details: DualPi2Details::default(),
            rng: None,
        }
    }

    /// Linux `dualpi2_calculate_c_protection`: MTU·(wc − wl), negative (L first) when wl > wc.
    fn initial_credit(cfg: &DualPi2Config) -> i64 {
        LINUX_MTU_BYTES as i64 * (cfg.wc - cfg.wl)
    }

    /// The base probability p'.
    pub fn base_probability(&self) -> f64 {
        self.st.p
    }

    /// p_C = p'² (RFC 9332 §2.1).
    pub fn classic_probability(&self) -> f64 {
        self.st.p * self.st.p
    }

    /// p_CL = min(k·p', 1) (RFC 9332 §2.1).
    pub fn coupled_probability(&self) -> f64 {
        (self.cfg.k * self.st.p).min(1.0)
    }

    /// PI updates run so far.
    pub fn updates(&self) -> u64 {
        self.st.updates
    }

    /// The discipline's own counters.
    pub fn details(&self) -> DualPi2Details {
        self.details
    }

    /// Packets queued in the L (`L`) or C (`C`) queue.
    pub fn queue_len(&self, q: usize) -> usize {
        self.queues[q].len()
    }

    /// Whether the controller is in overload: p_CL saturated (RFC: `k·p' ≥ 1`, `p_CL ≥ p_Lmax`;
    /// Linux: `k·p' > 1`).
    fn overloaded(&self) -> bool {
        match self.cfg.variant {
            DualPi2Variant::Rfc9332 => self.coupled_probability() >= P_LMAX,
            DualPi2Variant::Linux => self.cfg.k * self.st.p > 1.0,
        }
    }

    /// Runs every update instant up to and including `now`.
    #[inline]
    fn catch_up(&mut self, now: Time) {
        while self.st.next_update_at <= now {
            let at = self.st.next_update_at;
            self.update(at);
            self.st.next_update_at += self.cfg.tupdate;
        }
    }

    /// The sojourn of queue `q`'s head at `at`, seconds (0 when empty): RFC `q.time()`.
    fn head_sojourn(&self, q: usize, at: Time) -> f64 {
        self.queues[q].front().map_or(0.0, |p| at.saturating_since(p.enqueued_at).as_secs_f64())
    }

    /// One PI update at `at` (RFC 9332 Appendix A.1 `dualpi2_update`; Linux `calculate_probability`).
    pub(super) fn update(&mut self, at: Time) {
        self.st.updates += 1;
        let curq = match self.cfg.variant {
            DualPi2Variant::Rfc9332 => self.head_sojourn(C, at), // "use queuing time of first-in Classic packet"
            DualPi2Variant::Linux => self.head_sojourn(C, at).max(self.head_sojourn(L, at)),
        };
        let target = self.cfg.target.as_secs_f64();
        let p = self.st.p + self.cfg.alpha * (curq - target) + self.cfg.beta * (curq - self.st.prevq);
        let mut p = p.clamp(0.0, 1.0);
        if self.cfg.variant == DualPi2Variant::Linux && !self.cfg.drop_on_overload {
            p = p.min(1.0 / self.cfg.k); // keep p_CL ≤ 100 % so L4S flows keep window fairness
        }
        self.st.p = p;
        self.st.prevq = curq;
        if self.overloaded() {
            self.details.overload_updates += 1;
        }
    }

    /// A decision with probability `p` for queue `q` (one `recur` step, or one uniform draw).
    fn decide(&mut self, q: usize, p: f64, rng: &mut Rng) -> bool {
        // Certain outcomes need no step: recur()'s strict `count > 1` would otherwise skip a
        // packet at likelihood 1, which the RFC does not intend (p_Lmax = 1 means "mark all").
        if p >= 1.0 {
            return true;
        }
        if p <= 0.0 {
            return false;
        }
        match self.cfg.draws {
            DualPi2Draws::Recur => {
                // RFC 9332 Appendix A.1 recur(): q.count += likelihood; if > 1, -1 and TRUE.
                let count = &mut self.st.recur[q];
                *count += p;
                if *count > 1.0 {
                    *count -= 1.0;
                    true
                } else {
                    false
                }
            }
            DualPi2Draws::Random => rng.gen::<f64>() < p,
        }
    }

    /// p_C = p'² as a decision: Linux rolls p' twice (`roll(prob) && roll(prob)`), the RFC uses
    /// one `recur(q, p_C)`.
    fn decide_classic(&mut self, q: usize, rng: &mut Rng) -> bool {
        let p = self.st.p;
        match (self.cfg.variant, self.cfg.draws) {
            (DualPi2Variant::Linux, DualPi2Draws::Random) => self.decide(q, p, rng) && self.decide(q, p, rng),
            _ => self.decide(q, p * p, rng),
        }
    }

    /// The native L4S AQM's probability for a packet that waited `sojourn` (RFC Appendix A.1
    /// `laqm`): 0 up to `l4s_min_th`, a ramp over `l4s_range`, 1 from there; with range 0 a
    /// step that marks strictly above the threshold (Linux `qdelay > step_thresh`).
    pub(super) fn native_probability(&self, sojourn: Dur) -> f64 {
        let (min_th, range) = (self.cfg.l4s_min_th, self.cfg.l4s_range);
        if sojourn <= min_th {
            0.0
        } else if sojourn.0 >= min_th.0 + range.0 {
            1.0
        } else {
            (sojourn.0 - min_th.0) as f64 / range.0 as f64
        }
    }

    /// Linux's step as a decision: certain above the threshold, no draw; a ramp (`l4s_range` >
    /// 0) draws once.
    fn decide_native(&mut self, sojourn: Dur, rng: &mut Rng) -> bool {
        match self.native_probability(sojourn) {
            p if p >= 1.0 => true,
            p if p <= 0.0 => false,
            p => self.decide(L, p, rng),
        }
    }

    /// The AQM's action on `pkt`, just taken from queue `q` at `now` (RFC 9332 Appendix A.1
    /// `dualpi2_dequeue` with A.2's overload handling; Linux `must_drop` + `do_step_aqm`).
    /// `len_before` is queue `q`'s length before the dequeue.
    fn act(&mut self, q: usize, pkt: &Packet, len_before: usize, now: Time, rng: &mut Rng) -> Action {
        let sojourn = now.saturating_since(pkt.enqueued_at);
        let native_applies = len_before > self.cfg.l4s_min_packets;
        let overload = self.overloaded();
        match self.cfg.variant {
            DualPi2Variant::Rfc9332 if q == L => {
                let p_cl = self.coupled_probability();
                if !overload {
                    // §2.5.1.1 / A.1: p_L = max(p'_L, p_CL), one recur(lq, p_L).
                    let native = if native_applies { self.native_probability(sojourn) } else { 0.0 };
                    let p_l = native.max(p_cl);
                    return if self.decide(L, p_l, rng) { Action::Mark { native: native >= p_cl } } else { Action::Send };
                }
                // A.2 / §4.2.3 overload: revert to classic drop with p_C, mark the rest with p_CL.
                if self.cfg.drop_on_overload && self.decide_classic(L, rng) {
                    return Action::Drop { overload: true };
                }
                if self.decide(L, p_cl, rng) { Action::Mark { native: false } } else { Action::Send }
            }
            DualPi2Variant::Linux if q == L => {
                let mut action = Action::Send;
                if self.bytes() >= 2 * LINUX_MTU_BYTES {
                    // must_drop for an L4S packet: dualpi2_scalable_marking.
                    if overload {
                        if self.cfg.drop_on_overload && self.decide_classic(L, rng) {
                            return Action::Drop { overload: true };
                        }
                        action = Action::Mark { native: false };
                    } else if self.decide(L, self.cfg.k * self.st.p, rng) {
                        action = Action::Mark { native: false };
                    }
                }
                // do_step_aqm: a step (or ramp) on the packet's own sojourn.
                if action == Action::Send && native_applies && self.decide_native(sojourn, rng) {
                    action = Action::Mark { native: true };
                }
                action
            }
            _ => {
                // The C queue (both variants): p_C = p'²; drop Not-ECT, drop when ECN is off or
                // overloaded (RFC: p_C ≥ p_Cmax; Linux: k·p' > 1), mark ECT otherwise.
                if self.cfg.variant == DualPi2Variant::Linux && self.bytes() < 2 * LINUX_MTU_BYTES {
                    return Action::Send;
                }
                if !self.decide_classic(C, rng) {
                    return Action::Send;
                }
                let ecn_off = match self.cfg.variant {
                    DualPi2Variant::Rfc9332 => self.classic_probability() >= self.cfg.p_cmax,
                    DualPi2Variant::Linux => overload,
                };
                if !self.cfg.ecn || !pkt.ecn.is_ect() || ecn_off {
                    Action::Drop { overload: false }
                } else {
                    Action::Mark { native: false }
                }
            }
        }
    }

    /// The queue the scheduler serves next, given both are not empty (RFC Appendix A.1
    /// `scheduler()` as a time-shifted FIFO; Linux `dequeue_packet`'s WRR credit).
    fn pick(&self) -> usize {
        let (l, c) = (self.queues[L].front(), self.queues[C].front());
        match (l, c) {
            (Some(_), None) => L,
            (None, _) => C,
            (Some(lp), Some(cp)) => match self.cfg.variant {
                // Serve L if its head waited at least as long as C's head less tshift:
                // lq.time() + tshift >= cq.time()  <=>  l.enqueued_at <= c.enqueued_at + tshift.
                DualPi2Variant::Rfc9332 => {
                    if lp.enqueued_at.0 <= cp.enqueued_at.0.saturating_add(self.cfg.tshift.0) { L } else { C }
                }
                DualPi2Variant::Linux => {
                    if self.st.credit <= 0 { L } else { C }
                }
            },
        }
    }

    fn bytes(&self) -> u64 {
        self.queues[L].bytes() + self.queues[C].bytes()
    }

    fn len(&self) -> usize {
        self.queues[L].len() + self.queues[C].len()
    }
}

impl Qdisc for DualPi2 {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.catch_up(now);
        if self.rng.is_none() {
            self.rng = Some(rng.clone());
        }
        // RFC 9331 §5.1 / RFC 9332 §2.3 classifier: ECT(1) and CE to L, the rest to C.
        let q = if pkt.ecn.is_l4s() { L } else { C };
        let size = u64::from(pkt.size);
        self.stats.arrivals += 1;
        self.class_pkts[q].arrivals += 1;
        self.class_bytes[q].arrivals += size;
        // A.1 dualpi2_enqueue: one limit over both queues; a full buffer drops the arrival.
        if !self.cfg.limit.admits(self.len(), self.bytes(), pkt.size) {
            self.stats.count_drop(DropKind::Overflow);
            self.class_pkts[q].count_drop(DropKind::Overflow);
            self.class_bytes[q].drops_overflow += size;
            return Verdict::Dropped(DropKind::Overflow);
        }
        self.queues[q].push(pkt, now);
        self.stats.enqueues += 1;
        self.class_pkts[q].enqueues += 1;
        self.class_bytes[q].enqueues += size;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
        self.catch_up(now);
        // Draws at dequeue come from the queue's own stream, taken over at the first arrival
        // (`enqueue` is the only call handed it, and DualPI2 draws nothing there).
        let mut rng = self.rng.take();
        let out = loop {
            if self.len() == 0 {
                self.st.credit = Self::initial_credit(&self.cfg); // Linux dualpi2_reset_c_protection
                break None;
            }
            let both = !self.queues[L].is_empty() && !self.queues[C].is_empty();
            let q = self.pick();
            let len_before = self.queues[q].len();
            let mut pkt = self.queues[q].pop().expect("the scheduler picks a queue holding packets");
            let size = u64::from(pkt.size);
            let action = match rng.as_mut() {
                Some(r) => self.act(q, &pkt, len_before, now, r),
                None => unreachable!("a queued packet came through enqueue, which set the stream"),
            };
            match action {
                Action::Drop { overload } => {
                    // A.1: "drop(pkt) ... continue" — the next pick replaces it in this call.
                    self.stats.count_drop(DropKind::Early);
                    self.class_pkts[q].count_drop(DropKind::Early);
                    self.class_bytes[q].drops_early += size;
                    if overload {
                        self.details.l4s_drops_overload += 1;
                    } else {
                        self.details.classic_drops += 1;
                    }
                    drops.push((pkt, DropKind::Early));
                    continue;
                }
                Action::Mark { native } if pkt.ecn != Ecn::Ce => {
                    pkt.ecn = Ecn::Ce;
                    self.stats.marks += 1;
                    self.class_pkts[q].marks += 1;
                    if q == L {
                        self.details.l4s_marks += 1;
                        self.details.l4s_marks_native += u64::from(native);
                    } else {
                        self.details.classic_marks += 1;
                    }
                }
                Action::Mark { .. } | Action::Send => {}
            }
            if both {
                // Linux: the credit moves only when both queues had packets, by the sent size.
                self.st.credit += if q == L { self.cfg.wc } else { -self.cfg.wl } * size as i64;
            }
            let sojourn = now.saturating_since(pkt.enqueued_at).0;
            if q == L {
                self.details.l4s_sojourn_ns += sojourn;
            } else {
                self.details.classic_sojourn_ns += sojourn;
            }
            self.stats.dequeues += 1;
            self.class_pkts[q].dequeues += 1;
            self.class_bytes[q].dequeues += size;
            break Some(pkt);
        };
        self.rng = rng;
        out
    }

    /// Which queue sends next depends on the AQM's drops at dequeue: not known here.
    fn peek(&self) -> Option<&Packet> {
        None
    }

    fn len_packets(&self) -> usize {
        self.len()
    }

    fn len_bytes(&self) -> u64 {
        self.bytes()
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    fn class_stats(&self) -> Vec<ClassStats> {
        ["l4s", "classic"]
            .iter()
            .enumerate()
            .map(|(i, name)| ClassStats {
                name: (*name).to_string(),
                stats: self.class_pkts[i],
                bytes: self.class_bytes[i],
                average: self.class_average_at(i),
                len_packets: self.queues[i].len(),
                len_bytes: self.queues[i].bytes(),
            })
            .collect()
    }

    fn class_count(&self) -> usize {
        2
    }

    fn class_len_at(&self, i: usize) -> (usize, u64) {
        (self.queues[i].len(), self.queues[i].bytes())
    }

    /// The queue's current probability: p_CL for `l4s`, p_C for `classic`.
    fn class_average_at(&self, i: usize) -> f64 {
        if i == L { self.coupled_probability() } else { self.classic_probability() }
    }

    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        let d = &self.details;
        vec![
            ("l4s_marks", d.l4s_marks),
            ("l4s_marks_native", d.l4s_marks_native),
            ("l4s_drops_overload", d.l4s_drops_overload),
            ("classic_marks", d.classic_marks),
            ("classic_drops", d.classic_drops),
            ("l4s_sojourn_ns", d.l4s_sojourn_ns),
            ("classic_sojourn_ns", d.classic_sojourn_ns),
            ("overload_updates", d.overload_updates),
        ]
    }
}

#[cfg(test)]
#[path = "dualpi2_tests.rs"]
mod tests;
