//! BMRE, Buffer Management based on Rate Estimation (Jeong-woo Cho, MS thesis, KAIST 2002; spec
//! `seed003-bmre.md`, issue #13), and its weighted variant (§4.4).
//!
//! # Algorithm (thesis Ch. 3 and the Appendix pseudocode; spec §2.9)
//!
//! One FIFO. Per-flow state (a slot) only for recently buffered flows, at most `max_nflow`. A flow
//! is the packet's `flow` id (the thesis's (src IP, dst IP) pair). Globals, recomputed only when
//! `N_flow` changes (`update_gv`, spec §2.2):
//!
//! ```text
//! vmax_q = vth(N_flow)            max_th_f = vmax_q / N_flow
//! target_q = min(vmax_q/2, max_targetq)    rate_fair = BW / N_flow
//! ```
//!
//! On arrival of `size` bytes of flow `f`:
//!
//! 1. `[1-4]` `q ≥ vmax_q` or `q ≥ max_q` → drop (virtual / physical limit);
//! 2. `[5-15]` `f` has no slot: take a free one (`N_flow += w`, `update_gv`) or, with the table
//!    full, **recycle** a random slot holding nothing (`q[i] = 0`; globals unchanged), initialise
//!    it (`q = count = size`, `rate = 0`, `β = β_init`, `qtime = now`) and accept: a flow's first
//!    packet is never dropped by the per-flow tests;
//! 3. `[16-19]` **Fair Drop**: `q ≥ fd_th` → drop (nothing of the flow's state changes, so a flow
//!    kept out by Fair Drop expires after `Timeout` and is admitted again as a new flow);
//! 4. `[20-22]` `q[i] += size`, `count[i] += size`; if `count[i] ≥ 4·max_th_f` run
//!    `update_beta(rate[i]/rate_fair)` with the *old* rate (eq. 3.6 ff.):
//!    `ratio > 1 and avg_q > target_q` → `β ← max(β/ratio, β_min)`, else `β ← min(α·β, β_max)`;
//! 5. `[23-26]` **per-flow exponential drop** with `p = (q[i]/max_th_f)^β[i]` (eq. 3.6): drop if
//!    `u < p`, undoing `q[i] += size`;
//! 6. `[28-31]` accept: `update_gq(+size)`, then the CSFQ estimator (eq. 3.4, K = 0.15 s)
//!    `rate ← (1 − e^(−dt/K))·size/dt + e^(−dt/K)·rate`, `dt = now − qtime[i]`, `qtime[i] = now`.
//!
//! On departure: `q[i] −= size`; (`count_departed` only: `count[i] += size`);
//! `count[i] ≥ 4·max_th_f` → `update_beta`; `update_gq(−size)`.
//! `update_gq` moves `avg_q ← (1−w_q)·avg_q + w_q·q` on accepted arrivals and departures only.
//!
//! **Expiry** (§3.6, "practical definition of active flows"): a slot is freed once
//! `now − qtime[i] ≥ Timeout` (3K = 0.45 s) and it holds nothing (`q[i] = 0`); `N_flow −= w`,
//! `update_gv`. Slots sit in a list ordered by their expiry clock (`qtime`; with
//! `expiry = "queue_empty"` also the time `q[i]` last reached 0; either is only ever set to
//! `now`), and the list's old end is swept at **every** arrival and departure of any flow, so a
//! silent flow expires while the link is busy, not only when it sends again (spec §2.11 A6), and
//! before the simulator samples `N_flow` ([`Qdisc::before_sample`]), so an idle link's samples are
//! not stale. Sweeping early never changes a decision: the slots a sweep at `t` frees are exactly
//! those the next event's sweep would free first, in the same order.
//!
//! Worked number: with R1 at `N_flow = 100`: `vmax_q = 400 000 B`, `max_th_f = 4000 B`,
//! `target_q = 120 000 B`, `rate_fair = 25 000 B/s`; a flow holding 2000 B with `β = 10` is dropped
//! with `p = 0.5^10 ≈ 0.001`, with `β = 0.5` with `p ≈ 0.71`.
//!
//! # Choices where the thesis is silent, wrong or disagrees with its code (spec §2.11)
//!
//! * **A1, `vth`** (Fig. 3.1 is lost): a configurable piecewise-linear function,
//!   `vth(n) = hi·n` for `n ≤ n1`, a straight line from `(n1, hi·n1)` to `(n2, lo·n2)` for
//!   `n1 < n ≤ n2`, `lo·n` above `n2`. Default: the spec's reconstruction R1 (`hi` 8000 B, `lo`
//!   4000 B, `n1` 30, `n2` 60: flat 240 000 B plateau in the moderate mode). `hi·n1 ≠ lo·n2`
//!   gives the "rising moderate segment" alternative. Modes: none `n ≤ n1`, moderate
//!   `n1 < n ≤ n2`, severe `n > n2` ([`Bmre::mode`]).
//! * **A2, `count[i]` reset**: the printed code never resets `count[i]`, though its comment says
//!   "since the last β update". `count_reset = "on-update"` (default) resets it inside
//!   `update_beta`; `"never"` runs the code as printed (β then moves on every packet once the
//!   flow has sent `4·max_th_f` bytes). The spec's other alternative, `count_departed = true`,
//!   also adds each departing packet's bytes to `count[i]` (bytes "processed": arrived and
//!   departed) before the departure-side check (line 35), which with the reset otherwise fires
//!   only when `max_th_f` shrinks.
//! * **A3**: `max(N_flow, 1)` wherever `N_flow` divides or enters `vth` (`vth(0) := vth(1)`).
//! * **A4**: `dt = 0` uses the limit `rate += size/K`.
//! * **A5, overshoot**: `physical = "literal"` (default) tests `q ≥ max_q` before adding the
//!   packet, as printed, so the queue can exceed `max_q` by less than one packet; `"strict"`
//!   drops when `q + size > max_q`. The same rule applies to `vmax_q`.
//! * **A6**, `expiry` ([`Expiry`]): `"qtime"` (default) expires by `qtime` (the Appendix code)
//!   with the `q[i] = 0` guard (the text); `"queue_empty"` is the text's rule (§3.3(6): "the
//!   per-flow queue has been 0 for more than Timeout_Value"), timed from when `q[i]` last reached
//!   0, which is later than `qtime` by the last packet's queueing delay (at most 128 ms here).
//!   Both use `≥ Timeout` (times are whole nanoseconds, so "more than" differs by 1 ns). Swept at
//!   every event and before each sample.
//! * **A7**: table full and no slot with `q[i] = 0` → drop the arrival (`drops_no_slot`).
//! * **A8**: `update_beta` acts on the arriving/departing packet's flow.
//! * **A9**: `q` and `avg_q` start at 0.
//! * **A10**: one uniform draw per per-flow test with `p < 1`; `p ≥ 1` drops without a draw. A
//!   recycle draws one uniform index. Nothing else draws.
//! * **A11, weighted BMRE** (`weighted = true`, §4.4): the weight is `class + 1` for `class` 0–3
//!   (the thesis's 2 TOS bits; classes above 3 use their low 2 bits). `N_flow` is the sum of
//!   the active flows' weights and is what `vth` takes; a flow's cap and fair rate are
//!   `w·vmax_q/Σw` and `w·BW/Σw`. A recycled slot given to a flow of another weight adjusts
//!   `Σw` by the difference (the thesis does not say).
//! * **A12**: byte constants do not change with the packet size.
//! * **Cap test** (spec §2.5 "hard cap"): `cap_test = "with-arrival"` (default) tests eq. 3.6 on
//!   `q[i]` with the arriving packet added (Appendix lines 20, 24), so a flow holds at most 3
//!   packets of 1000 B under a 4000-B cap, though §3.3 sizes that cap as 4 packets (Morris's
//!   rule); `"before-arrival"` tests the occupancy the packet finds ([`CapTest`]).
//! * Drops never touch `avg_q`; the departure-side `update_beta` check runs before `update_gq`.
//!
//! # Counters
//!
//! [`QdiscStats`]: `drops_early` = per-flow exponential drops; `drops_forced` = Fair Drop, the
//! virtual limit `vmax_q` and no free slot; `drops_overflow` = the physical limit `max_q`.
//! [`BmreCounters`] splits them by reason and counts new flows, recycles, expiries and β moves.

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::{FlowId, Packet};
use crate::scenario::units::{Bytes, Duration, Limit};

/// Appendix A2: what happens to `count[i]` when β is updated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CountReset {
    /// `count[i] = 0` inside `update_beta` (the comment's "since the last β update").
    #[default]
    OnUpdate,
    /// The Appendix code as printed: never reset.
    Never,
}

/// Appendix A5: how the physical and virtual limits treat the arriving packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitCheck {
    /// `q ≥ limit` before adding the packet (as printed; overshoot < one packet).
    #[default]
    Literal,
    /// `q + size > limit`.
    Strict,
}

/// Which occupancy the per-flow exponential drop (eq. 3.6) tests against the cap `max_th_f`.
///
/// The Appendix adds the packet first (line 20, `q[i] = q[i] + p.size`) and then tests
/// `pow(q[i]/max_th, β[i])` (line 24), so `q[i] ≥ max_th_f` is a certain drop and a flow holds
/// at most `⌈max_th_f/size⌉ − 1` packets: 3 of 1000 B at the severe-mode 4000 B (spec §2.5,
/// "hard cap"). §3.3 calls 4000 B the "minimum number of packets" after Morris's rule that TCP
/// needs about 4 buffered packets per flow for fast retransmit (§2, ref. [17]); testing the
/// occupancy before the arrival holds 4.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CapTest {
    /// `p = (q[i]/max_th_f)^β[i]` with the arriving packet counted in `q[i]` (Appendix lines
    /// 20 and 24, as printed).
    #[default]
    WithArrival,
    /// `p = ((q[i] − size)/max_th_f)^β[i]`: the occupancy the packet finds, so a flow can fill its
    /// cap (4 packets of 1000 B at 4000 B), overshooting it by less than one packet.
    BeforeArrival,
}

/// Spec §2.11 A6: which clock a slot's expiry runs on. Either way a slot holding packets never
/// expires.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Expiry {
    /// `now − qtime[i] ≥ Timeout` with `q[i] = 0` (the Appendix code's `qtime`, line [37], plus the
    /// text's guard).
    #[default]
    Qtime,
    /// `q[i] = 0` and `now − t0[i] ≥ Timeout`, `t0[i]` the time `q[i]` last reached 0 (the text,
    /// §3.3(6)).
    #[serde(alias = "queue-empty")]
    QueueEmpty,
}

/// Scenario keys of `kind = "bmre"`. Defaults: the Appendix constants (spec §2.1) and the vth
/// reconstruction R1 (spec §2.3).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BmreParams {
    /// `max_q`, the physical buffer. Default 320000 B.
    #[serde(default = "default_max_q")]
    pub max_q: Bytes,
    /// `fd_th`, the Fair Drop threshold. Default 140000 B.
    #[serde(default = "default_fd_th")]
    pub fd_th: Bytes,
    /// `max_targetq`, the cap on `target_q`. Default 120000 B.
    #[serde(default = "default_max_targetq")]
    pub max_targetq: Bytes,
    /// `max_nflow`, flow-state slots. Default 320.
    #[serde(default = "default_max_nflow")]
    pub max_nflow: u32,
    /// `α`, multiplicative increase of β. Default 1.2.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// `w_q`, EWMA weight of `avg_q`. Default 0.004.
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// `β_min`. Default 0.5.
    #[serde(default = "default_beta_min")]
    pub beta_min: f64,
    /// `β_max`. Default 10.
    #[serde(default = "default_beta_max")]
    pub beta_max: f64,
    /// `β_init`. Default 7.5.
    #[serde(default = "default_beta_init")]
    pub beta_init: f64,
    /// `K`, the rate estimator's time constant. Default 0.15 s.
    #[serde(default = "default_k")]
    pub k: Duration,
    /// `Timeout_Value`, state lifetime after the last buffered packet. Default 3·K.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    /// vth: per-flow allowance in the no-congestion mode. Default 8000 B.
    #[serde(default = "default_vth_hi")]
    pub vth_per_flow_hi: Bytes,
    /// vth: per-flow allowance in the severe mode. Default 4000 B.
    #[serde(default = "default_vth_lo")]
    pub vth_per_flow_lo: Bytes,
    /// vth: end of the no-congestion mode (flows, or weight sum). Default 30.
    #[serde(default = "default_vth_n1")]
    pub vth_n1: f64,
    /// vth: end of the moderate mode. Default 60.
    #[serde(default = "default_vth_n2")]
    pub vth_n2: f64,
    /// A2: `"on-update"` (default) or `"never"`.
    #[serde(default)]
    pub count_reset: CountReset,
    /// A2, the spec's alternative: also add departed bytes to `count[i]` (before the departure
    /// check, Appendix line 35). Default false (the code as printed counts arrivals only, line 21).
    #[serde(default)]
    pub count_departed: bool,
    /// A5: `"literal"` (default) or `"strict"`.
    #[serde(default)]
    pub limit_check: LimitCheck,
    /// The per-flow drop's occupancy: `"with-arrival"` (default, as printed) or
    /// `"before-arrival"` ([`CapTest`]).
    #[serde(default)]
    pub cap_test: CapTest,
    /// Weighted BMRE (§4.4): weight = class + 1 (2 TOS bits). Default false.
    #[serde(default)]
    pub weighted: bool,
    /// A6: `"qtime"` (default, the code) or `"queue_empty"` (the text) ([`Expiry`]).
    #[serde(default)]
    pub expiry: Expiry,
}

fn default_max_q() -> Bytes {
    Bytes(320_000)
}
fn default_fd_th() -> Bytes {
    Bytes(140_000)
}
fn default_max_targetq() -> Bytes {
    Bytes(120_000)
}
fn default_max_nflow() -> u32 {
    320
}
fn default_alpha() -> f64 {
    1.2
}
fn default_weight() -> f64 {
    0.004
}
fn default_beta_min() -> f64 {
    0.5
}
fn default_beta_max() -> f64 {
    10.0
}
fn default_beta_init() -> f64 {
    7.5
}
fn default_k() -> Duration {
    Duration(Dur::from_millis(150))
}
fn default_vth_hi() -> Bytes {
    Bytes(8000)
}
fn default_vth_lo() -> Bytes {
    Bytes(4000)
}
fn default_vth_n1() -> f64 {
    30.0
}
fn default_vth_n2() -> f64 {
    60.0
}

impl BmreParams {
    /// The parameters with `timeout` (3K) written out, for the echo and `aqmlab qdiscs`.
    pub fn filled(mut self) -> Self {
        self.timeout.get_or_insert(Duration(Dur(self.k.0 .0.saturating_mul(3))));
        self
    }

    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Bmre> {
        let key = |k: &str| format!("{path}.{k}");
        for (k, b) in [("max_q", self.max_q), ("vth_per_flow_hi", self.vth_per_flow_hi), ("vth_per_flow_lo", self.vth_per_flow_lo)] {
            if b.0 == 0 {
                return Err(ConfigError::new(key(k), "must be at least 1B"));
            }
        }
        if self.fd_th.0 > self.max_q.0 {
            return Err(ConfigError::new(key("fd_th"), format!("must be at most max_q ({}B), got {}B", self.max_q.0, self.fd_th.0)));
        }
        if self.max_nflow == 0 || self.max_nflow > 1_000_000 {
            return Err(ConfigError::new(key("max_nflow"), format!("must be in 1..=1000000 flow states, got {}", self.max_nflow)));
        }
        if !(self.alpha >= 1.0 && self.alpha.is_finite()) {
            return Err(ConfigError::new(key("alpha"), format!("must be a finite factor >= 1, got {}", self.alpha)));
        }
        if !(self.weight > 0.0 && self.weight <= 1.0) {
            return Err(ConfigError::new(key("weight"), format!("must be in (0, 1], got {}", self.weight)));
        }
        if !(self.beta_min > 0.0 && self.beta_min.is_finite()) {
            return Err(ConfigError::new(key("beta_min"), format!("must be a positive number, got {}", self.beta_min)));
        }
        if !(self.beta_max >= self.beta_min && self.beta_max.is_finite()) {
            return Err(ConfigError::new(key("beta_max"), format!("must be a finite number >= beta_min ({}), got {}", self.beta_min, self.beta_max)));
        }
        if !(self.beta_init >= self.beta_min && self.beta_init <= self.beta_max) {
            return Err(ConfigError::new(
                key("beta_init"),
                format!("must be in [beta_min, beta_max] = [{}, {}], got {}", self.beta_min, self.beta_max, self.beta_init),
            ));
        }
        if self.k.0 == Dur::ZERO {
            return Err(ConfigError::new(key("k"), "must be a positive duration, got 0s"));
        }
        let timeout = self.timeout.map_or(Dur(self.k.0 .0.saturating_mul(3)), |t| t.0);
        if timeout == Dur::ZERO {
            return Err(ConfigError::new(key("timeout"), "must be a positive duration, got 0s"));
        }
        if !(self.vth_n1 >= 1.0 && self.vth_n1.is_finite()) {
            return Err(ConfigError::new(key("vth_n1"), format!("must be a number of flows >= 1, got {}", self.vth_n1)));
        }
        if self.vth_per_flow_lo.0 > self.vth_per_flow_hi.0 {
            return Err(ConfigError::new(
                key("vth_per_flow_lo"),
                format!("must be at most vth_per_flow_hi ({}B), got {}B", self.vth_per_flow_hi.0, self.vth_per_flow_lo.0),
            ));
        }
        if !(self.vth_n2 >= self.vth_n1 && self.vth_n2.is_finite()) {
            return Err(ConfigError::new(key("vth_n2"), format!("must be a finite number >= vth_n1 ({}), got {}", self.vth_n1, self.vth_n2)));
        }
        let bw = link_rate_bps; // BW of rate_fair = BW/N_flow: the link's service rate (spec §2.0)
        let cfg = BmreConfig {
            max_q: self.max_q.0 as f64,
            fd_th: self.fd_th.0 as f64,
            max_targetq: self.max_targetq.0 as f64,
            max_nflow: self.max_nflow,
            alpha: self.alpha,
            w_q: self.weight,
            beta_min: self.beta_min,
            beta_max: self.beta_max,
            beta_init: self.beta_init,
            k_s: self.k.0.as_secs_f64(),
            timeout,
            bw: bw / 8.0,
            vth: Vth {
                hi: self.vth_per_flow_hi.0 as f64,
                lo: self.vth_per_flow_lo.0 as f64,
                n1: self.vth_n1,
                n2: self.vth_n2,
            },
            count_reset: self.count_reset,
            count_departed: self.count_departed,
            limit_check: self.limit_check,
            cap_test: self.cap_test,
            weighted: self.weighted,
            expiry: self.expiry,
        };
        Ok(Bmre::new(cfg))
    }
}

/// The virtual threshold function (A1), piecewise linear in the (weighted) flow count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Vth {
    /// Per-flow bytes in the no-congestion mode (`vth = hi·n`).
    pub hi: f64,
    /// Per-flow bytes in the severe mode (`vth = lo·n`).
    pub lo: f64,
    /// Last `n` of the no-congestion mode.
    pub n1: f64,
    /// Last `n` of the moderate mode.
    pub n2: f64,
}

/// BMRE's congestion mode (§3.3, Fig. 3.1), from where `N_flow` sits on `vth`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Each flow may hold `hi` bytes.
    NoCongestion = 0,
    /// The per-flow allowance falls from `hi` to `lo`.
    Moderate = 1,
    /// Each flow may hold `lo` bytes.
    Severe = 2,
}

impl Vth {
    /// `vmax_q` for `n` (≥ 1) flows, bytes.
    pub fn eval(&self, n: f64) -> f64 {
        if n <= self.n1 {
            self.hi * n
        } else if n <= self.n2 {
            let (a, b) = (self.hi * self.n1, self.lo * self.n2);
            a + (b - a) * (n - self.n1) / (self.n2 - self.n1)
        } else {
            self.lo * n
        }
    }

    /// The mode at `n` flows.
    pub fn mode(&self, n: f64) -> Mode {
        if n <= self.n1 {
            Mode::NoCongestion
        } else if n <= self.n2 {
            Mode::Moderate
        } else {
            Mode::Severe
        }
    }
}

/// Validated parameters; bytes and bytes/s.
#[derive(Clone, Copy, Debug)]
pub struct BmreConfig {
    max_q: f64,
    fd_th: f64,
    max_targetq: f64,
    max_nflow: u32,
    alpha: f64,
    w_q: f64,
    beta_min: f64,
    beta_max: f64,
    beta_init: f64,
    k_s: f64,
    timeout: Dur,
    /// `BW`, bytes/s.
    bw: f64,
    vth: Vth,
    count_reset: CountReset,
    count_departed: bool,
    limit_check: LimitCheck,
    cap_test: CapTest,
    weighted: bool,
    expiry: Expiry,
}

/// Drops by reason and state-table events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BmreCounters {
    /// Line 1: `q ≥ vmax_q` (and below `max_q`). Forced.
    pub drops_vmax: u64,
    /// Line 1: `q ≥ max_q`. Overflow.
    pub drops_physical: u64,
    /// Fair Drop, `q ≥ fd_th`. Forced.
    pub drops_fair: u64,
    /// Per-flow exponential drop, eq. 3.6. Early.
    pub drops_exp: u64,
    /// Table full and no slot holds nothing (A7). Forced.
    pub drops_no_slot: u64,
    /// Flows given a free slot.
    pub new_flows: u64,
    /// Flows given a recycled slot (table full).
    pub recycled: u64,
    /// Slots freed by expiry.
    pub expired: u64,
    /// `update_beta` decreases (punish) and increases (relax).
    pub beta_down: u64,
    /// See `beta_down`.
    pub beta_up: u64,
}

const NONE: u32 = u32::MAX;

/// Per-flow state of one slot.
#[derive(Clone, Copy, Debug)]
struct Slot {
    flow: FlowId,
    /// `q[i]`, bytes queued; the sum of the sizes of the flow's queued packets.
    q: f64,
    /// `rate[i]`, estimated buffered rate, bytes/s.
    rate: f64,
    /// `β[i]`.
    beta: f64,
    /// `count[i]`, bytes since the last β update (A2): arrived bytes, plus departed bytes with
    /// `count_departed`.
    count: f64,
    /// `qtime[i]`, when the flow last had a packet buffered.
    qtime: Time,
    /// The expiry clock the list is ordered by: `qtime`, or with [`Expiry::QueueEmpty`] the later
    /// of `qtime` and the time `q[i]` last reached 0. Always a past `now`.
    stamp: Time,
    /// `w_i` (1 unweighted).
    weight: f64,
    /// Neighbours in the `qtime` list: `newer` towards the head (most recent).
    newer: u32,
    older: u32,
    in_use: bool,
}

const EMPTY_SLOT: Slot =
    Slot { flow: 0, q: 0.0, rate: 0.0, beta: 0.0, count: 0.0, qtime: Time::ZERO, stamp: Time::ZERO, weight: 1.0, newer: NONE, older: NONE, in_use: false };

/// BMRE over one FIFO.
pub struct Bmre {
    cfg: BmreConfig,
    slots: Vec<Slot>,
    /// Unused slot indices.
    free: Vec<u32>,
    /// Slot of each flow id (`NONE` without state); grows with the largest flow id seen.
    slot_of: Vec<u32>,
    /// Most and least recently buffered slots.
    head: u32,
    tail: u32,
    /// `N_flow`: the sum of the active flows' weights (their count when unweighted).
    n_flow: f64,
    /// Active slots.
    n_slots: u32,
    vmax_q: f64,
    /// `vmax_q / max(N_flow, 1)`: the cap of a weight-1 flow.
    max_th_unit: f64,
    target_q: f64,
    /// `BW / max(N_flow, 1)`: the fair rate of a weight-1 flow, bytes/s.
    rate_fair_unit: f64,
    /// `q`, bytes queued (as accounted by BMRE: equals the FIFO's bytes).
    q: f64,
    avg_q: f64,
    fifo: Fifo,
    stats: QdiscStats,
    counters: BmreCounters,
}

impl Bmre {
    /// An empty BMRE queue.
    pub fn new(cfg: BmreConfig) -> Bmre {
        let n = cfg.max_nflow as usize;
        let mut b = Bmre {
            cfg,
            slots: vec![EMPTY_SLOT; n],
            free: (0..n as u32).rev().collect(),
            slot_of: Vec::new(),
            head: NONE,
            tail: NONE,
            n_flow: 0.0,
            n_slots: 0,
            vmax_q: 0.0,
            max_th_unit: 0.0,
            target_q: 0.0,
            rate_fair_unit: 0.0,
            q: 0.0,
            avg_q: 0.0,
            fifo: Fifo::new(Limit::Unlimited),
            stats: QdiscStats::default(),
            counters: BmreCounters::default(),
        };
        b.update_gv(0.0);
        b
    }

    /// `N_flow` (the weight sum in weighted mode).
    pub fn n_flow(&self) -> f64 {
        self.n_flow
    }
    /// Slots in use.
    pub fn active_slots(&self) -> u32 {
        self.n_slots
    }
    /// `vmax_q`, bytes.
    pub fn vmax_q(&self) -> f64 {
        self.vmax_q
    }
    /// `target_q`, bytes.
    pub fn target_q(&self) -> f64 {
        self.target_q
    }
    /// `avg_q`, bytes.
    pub fn avg_q(&self) -> f64 {
        self.avg_q
    }
    /// The current mode.
    pub fn mode(&self) -> Mode {
        self.cfg.vth.mode(self.n_flow.max(1.0))
    }
    /// Drops by reason and table events.
    pub fn counters(&self) -> &BmreCounters {
        &self.counters
    }
    /// `max_th_f` of a weight-1 flow, bytes.
    pub fn max_th_f(&self) -> f64 {
        self.max_th_unit
    }
    /// `rate_fair` of a weight-1 flow, bytes/s.
    pub fn rate_fair(&self) -> f64 {
        self.rate_fair_unit
    }

    fn slot(&self, flow: FlowId) -> Option<usize> {
        match self.slot_of.get(flow as usize) {
            Some(&s) if s != NONE => Some(s as usize),
            _ => None,
        }
    }

    /// `(β, estimated rate bytes/s, q bytes)` of `flow`, if it has state.
    pub fn flow_state(&self, flow: FlowId) -> Option<(f64, f64, f64)> {
        self.slot(flow).map(|i| (self.slots[i].beta, self.slots[i].rate, self.slots[i].q))
    }

    /// `update_gv` (spec §2.2) after `N_flow` moved by `delta`; A3: `max(N_flow, 1)`.
    fn update_gv(&mut self, delta: f64) {
        self.n_flow = (self.n_flow + delta).max(0.0);
        let n = self.n_flow.max(1.0);
        self.vmax_q = self.cfg.vth.eval(n);
        self.max_th_unit = self.vmax_q / n;
        self.target_q = (self.vmax_q / 2.0).min(self.cfg.max_targetq);
        self.rate_fair_unit = self.cfg.bw / n;
    }

    /// `update_gq(±size)`.
    fn update_gq(&mut self, delta: f64) {
        self.q += delta;
        if self.q.abs() < 0.5 {
            self.q = 0.0;
        }
        self.avg_q = (1.0 - self.cfg.w_q) * self.avg_q + self.cfg.w_q * self.q;
    }

    /// `update_beta(rate[i]/rate_fair)` for slot `i` (A2 for the count).
    fn update_beta(&mut self, i: usize) {
        let s = &mut self.slots[i];
        let ratio = s.rate / (self.rate_fair_unit * s.weight);
        if ratio > 1.0 && self.avg_q > self.target_q {
            s.beta = (s.beta / ratio).max(self.cfg.beta_min);
            self.counters.beta_down += 1;
        } else {
            s.beta = (s.beta * self.cfg.alpha).min(self.cfg.beta_max);
            self.counters.beta_up += 1;
        }
        if self.cfg.count_reset == CountReset::OnUpdate {
            s.count = 0.0;
        }
    }

    fn unlink(&mut self, i: usize) {
        let (newer, older) = (self.slots[i].newer, self.slots[i].older);
        if newer != NONE {
            self.slots[newer as usize].older = older;
        } else {
            self.head = older;
        }
        if older != NONE {
            self.slots[older as usize].newer = newer;
        } else {
            self.tail = newer;
        }
        self.slots[i].newer = NONE;
        self.slots[i].older = NONE;
    }

    fn push_head(&mut self, i: usize) {
        self.slots[i].older = self.head;
        self.slots[i].newer = NONE;
        if self.head != NONE {
            self.slots[self.head as usize].newer = i as u32;
        } else {
            self.tail = i as u32;
        }
        self.head = i as u32;
    }

    /// Frees every slot whose expiry clock (A6, [`Expiry`]) is `Timeout` old and that holds
    /// nothing, from the old end.
    pub fn expire(&mut self, now: Time) {
        let mut i = self.tail;
        while i != NONE {
            let s = self.slots[i as usize];
            if now.saturating_since(s.stamp) < self.cfg.timeout {
                break; // the list is ordered by stamp: every newer slot is younger
            }
            let newer = s.newer;
            if s.q == 0.0 {
                self.unlink(i as usize);
                self.slot_of[s.flow as usize] = NONE;
                self.slots[i as usize].in_use = false;
                self.free.push(i);
                self.n_slots -= 1;
                self.counters.expired += 1;
                self.update_gv(-s.weight);
            }
            i = newer;
        }
    }

    fn weight_of(&self, pkt: &Packet) -> f64 {
        if self.cfg.weighted { f64::from((pkt.class & 3) + 1) } else { 1.0 }
    }

    fn over(&self, limit: f64, size: f64) -> bool {
        match self.cfg.limit_check {
            LimitCheck::Literal => self.q >= limit,
            LimitCheck::Strict => self.q + size > limit,
        }
    }

    fn drop(&mut self, kind: DropKind) -> Verdict {
        self.stats.count_drop(kind);
        Verdict::Dropped(kind)
    }

    fn accept(&mut self, pkt: Packet, now: Time) -> Verdict {
        self.update_gq(pkt.size as f64);
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        Verdict::Enqueued
    }

    /// A slot for a new flow `[5-15]`: a free one, else a random one holding nothing.
    fn new_slot(&mut self, weight: f64, rng: &mut Rng) -> Option<usize> {
        if let Some(i) = self.free.pop() {
            self.counters.new_flows += 1;
            self.n_slots += 1;
            self.update_gv(weight);
            return Some(i as usize);
        }
        let empties = self.slots.iter().filter(|s| s.q == 0.0).count();
        if empties == 0 {
            return None;
        }
        let pick = rng.gen_range(0..empties);
        let i = self.slots.iter().enumerate().filter(|(_, s)| s.q == 0.0).nth(pick).map(|(i, _)| i).expect("counted above");
        let old = self.slots[i];
        self.slot_of[old.flow as usize] = NONE;
        self.unlink(i);
        self.counters.recycled += 1;
        if old.weight != weight {
            self.update_gv(weight - old.weight); // A11: weights differ
        }
        Some(i)
    }
}

impl Qdisc for Bmre {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        self.expire(now);
        let size = pkt.size as f64;
        // [1-4] the global virtual and physical limits.
        if self.over(self.cfg.max_q, size) {
            self.counters.drops_physical += 1;
            return self.drop(DropKind::Overflow);
        }
        if self.over(self.vmax_q, size) {
            self.counters.drops_vmax += 1;
            return self.drop(DropKind::Forced);
        }
        let Some(i) = self.slot(pkt.flow) else {
            // [5-15] a new flow: its first packet is accepted.
            let w = self.weight_of(&pkt);
            let Some(i) = self.new_slot(w, rng) else {
                self.counters.drops_no_slot += 1;
                return self.drop(DropKind::Forced);
            };
            if pkt.flow as usize >= self.slot_of.len() {
                self.slot_of.resize(pkt.flow as usize + 1, NONE);
            }
            self.slot_of[pkt.flow as usize] = i as u32;
            self.slots[i] = Slot {
                flow: pkt.flow,
                q: size,
                rate: 0.0,
                beta: self.cfg.beta_init,
                count: size,
                qtime: now,
                stamp: now,
                weight: w,
                in_use: true,
                ..EMPTY_SLOT
            };
            self.push_head(i);
            return self.accept(pkt, now);
        };
        // [16-19] Fair Drop.
        if self.q >= self.cfg.fd_th {
            self.counters.drops_fair += 1;
            return self.drop(DropKind::Forced);
        }
        // [20-22]
        self.slots[i].q += size;
        self.slots[i].count += size;
        let cap = self.max_th_unit * self.slots[i].weight;
        if self.slots[i].count >= 4.0 * cap {
            self.update_beta(i);
        }
        // [23-26] per-flow exponential drop, eq. 3.6, on the occupancy `cap_test` names.
        let held = match self.cfg.cap_test {
            CapTest::WithArrival => self.slots[i].q,
            CapTest::BeforeArrival => self.slots[i].q - size,
        };
        let p = (held / cap).powf(self.slots[i].beta);
        if p >= 1.0 || rng.gen::<f64>() < p {
            self.slots[i].q -= size;
            self.counters.drops_exp += 1;
            return self.drop(DropKind::Early);
        }
        // [28-31] accept, then the rate estimator (eq. 3.4; A4 for dt = 0).
        let s = &mut self.slots[i];
        let dt = now.saturating_since(s.qtime).as_secs_f64();
        s.rate = if dt > 0.0 {
            let x = -dt / self.cfg.k_s;
            -x.exp_m1() * size / dt + x.exp() * s.rate
        } else {
            size / self.cfg.k_s + s.rate
        };
        s.qtime = now;
        s.stamp = now;
        self.unlink(i);
        self.push_head(i);
        self.accept(pkt, now)
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let pkt = self.fifo.pop()?;
        self.stats.dequeues += 1;
        let size = pkt.size as f64;
        if let Some(i) = self.slot(pkt.flow) {
            // [33-36]
            let s = &mut self.slots[i];
            s.q -= size;
            if s.q.abs() < 0.5 {
                s.q = 0.0;
            }
            if self.cfg.count_departed {
                s.count += size; // A2 alternative: departed bytes count too
            }
            if s.q == 0.0 && self.cfg.expiry == Expiry::QueueEmpty {
                // A6, the text's clock: the per-flow queue has just become empty.
                s.stamp = now;
                self.unlink(i);
                self.push_head(i);
            }
            if self.slots[i].count >= 4.0 * self.max_th_unit * self.slots[i].weight {
                self.update_beta(i);
            }
        }
        self.update_gq(-size);
        self.expire(now);
        Some(pkt)
    }

    super::fifo::fifo_accessors!();

    fn average(&self) -> Option<f64> {
        Some(self.avg_q)
    }
    fn flow_estimate(&self) -> Option<f64> {
        Some(self.n_flow)
    }
    fn before_sample(&mut self, now: Time) {
        self.expire(now);
    }
    fn flow_internals(&self, flow: FlowId) -> Option<(f64, f64)> {
        self.flow_state(flow).map(|(beta, rate, _)| (beta, rate * 8.0))
    }
    fn bmre_internals(&self) -> Option<[f64; 6]> {
        let c = &self.counters;
        Some([self.mode() as u8 as f64, self.target_q, self.vmax_q, c.drops_fair as f64, c.recycled as f64, c.expired as f64])
    }
    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        let c = &self.counters;
        vec![
            ("drops_vmax", c.drops_vmax),
            ("drops_physical", c.drops_physical),
            ("drops_fair", c.drops_fair),
            ("drops_exp", c.drops_exp),
            ("drops_no_slot", c.drops_no_slot),
            ("new_flows", c.new_flows),
            ("recycled", c.recycled),
            ("expired", c.expired),
            ("beta_down", c.beta_down),
            ("beta_up", c.beta_up),
        ]
    }
}

#[cfg(test)]
#[path = "bmre_tests.rs"]
mod tests;
