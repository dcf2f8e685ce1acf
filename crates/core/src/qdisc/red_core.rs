//! The RED machinery, written once: the averaging estimator with idle-time decay and the
//! count-spaced early-drop test. RED uses one instance; FRED, CBT, RIO, WHITE, FPQ and AECN keep
//! one per class or per flow, so the state ([`RedState`], 40 bytes) is separate from the
//! validated settings ([`RedConfig`], shared by reference).
//!
//! Sources (spec `seed000-cbt-algorithms.md` §2.2):
//! * **documented**: Parris 2001 Figs. 3.7–3.10 — strict `>` comparisons,
//!   `pa = pb / (1 − count·pb)` (drop once the denominator reaches 0: resolution 1), idle decay
//!   `avg ← (1−w)^n·avg` with `n = max(0, trunc(Δt·drain_rate − 1))` and no sample (resolution 2).
//! * **altq**: ALTQ `altq_red.c`, the code behind the dissertation's Ch. V results — `≥`
//!   comparisons, the idle decay followed by the ordinary zero sample, `avg = 0` after more than
//!   60 s idle, and ALTQ's drop test `random % (probd − count·len) < len` with `probd = 2·(max−min)/max_p`,
//!   i.e. `pa = pb / (2 − count·pb)`. Erratum in the spec (note 4): that `pa` reaches 1 at
//!   `count = 2/pb − 1`, not `1/pb`; the mean spacing between drops is about `1/pb`, not `1/(2pb)`.
//! * **ns2**: ns-2 `red.cc` (and ns-3's `RedQueueDisc`, a port of it) — `≥` comparisons,
//!   `avg ← (1−w)^(m+1)·avg + w·q` after an idle period with `m = trunc(Δt·drain_rate)`; with
//!   `wait` the probability is 0 while `count·pb < 1`, `pb/(2 − count·pb)` while `count·pb < 2`,
//!   then 1; without it `pb/(1 − count·pb)` capped at 1.
//!
//! Common to all three: the average is sampled on arrival *before* the packet is enqueued, a drop
//! is considered only when more than `protected_pkts` packets are queued (the `q_len > 1` test of
//! Fig. 3.8), the first arrival that finds the average above the minimum threshold gets a free
//! pass and sets `count = 1` (Floyd & Jacobson's `old` flag), and every drop or mark resets `count`.

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::engine::{Rng, Time};

/// Which published form of RED to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RedVariant {
    /// Parris 2001 Figs. 3.6–3.10 (spec seed000 §2.2).
    #[default]
    Documented,
    /// ALTQ `altq_red.c` (spec seed000 §2.2 note 4).
    Altq,
    /// ns-2 `red.cc` / ns-3 `RedQueueDisc`.
    Ns2,
}

/// Validated RED settings (thresholds in average units: packets, or bytes ÷ `mean_packet_size`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedConfig {
    /// Which RED.
    pub variant: RedVariant,
    /// Minimum threshold.
    pub min_th: f64,
    /// Maximum threshold.
    pub max_th: f64,
    /// Early-drop probability at `max_th`, in (0, 1].
    pub max_p: f64,
    /// EWMA weight, in (0, 1].
    pub weight: f64,
    /// ns-2's `wait_` (only with `Documented` or `Ns2`; ALTQ's formula is its own).
    pub wait: bool,
    /// Gentle RED: between `max_th` and `2·max_th` the probability rises from `max_p` to 1.
    pub gentle: bool,
    /// Count and scale the drop probability in bytes (`size / mean_packet_size`).
    pub byte_mode: bool,
    /// Mean packet size, bytes: the unit of the byte-mode average and of the idle decay.
    pub mean_packet_size: f64,
    /// Packets of mean size the link sends per second; idle time × this = missed samples.
    pub drain_rate: f64,
    /// No drop on the average while at most this many packets are queued (Fig. 3.8: 1).
    pub protected_pkts: u32,
    /// Nonlinear RED (Zhou, Ye & Wu 2006 §3.1, ns-3's `NLRED`): below `max_th` the probability
    /// is quadratic, `1.5·max_p·x²` with `x = (avg − min_th)/(max_th − min_th)`.
    pub nonlinear: bool,
}

impl RedConfig {
    /// How much one packet of `size` bytes counts: 1, or its size in mean packets in byte mode.
    fn units(&self, size: u32) -> f64 {
        if self.byte_mode { size as f64 / self.mean_packet_size } else { 1.0 }
    }

    fn above_min(&self, avg: f64) -> bool {
        if self.variant == RedVariant::Documented { avg > self.min_th } else { avg >= self.min_th }
    }

    /// Whether `avg` is in the forced-drop region.
    fn forced(&self, avg: f64) -> bool {
        let limit = if self.gentle { 2.0 * self.max_th } else { self.max_th };
        if self.variant == RedVariant::Documented { avg > limit } else { avg >= limit }
    }

    /// The base probability `pb` (eq. 3.1; gentle ramp above `max_th`).
    pub fn base_probability(&self, avg: f64) -> f64 {
        let pb = if avg >= self.max_th {
            // Only reachable in gentle mode (otherwise the drop is forced).
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else if self.max_th > self.min_th {
            if self.nonlinear {
                // ns-3's CalculatePNew: `p *= p * 1.5` then `p *= max_p`, so 1.5·max_p just
                // below max_th, falling back to max_p where the gentle ramp starts.
                let x = (avg - self.min_th) / (self.max_th - self.min_th);
                1.5 * x * x * self.max_p
            } else {
                self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
            }
        } else {
            self.max_p // min_th = max_th: a step (CBT's deterministic classes use the same shape)
        };
        pb.clamp(0.0, 1.0)
    }

    /// The drop probability `pa` of the arrival, given `pb` and the arrivals since the last drop
    /// (eq. 3.2 and the variants' forms, see the module docs). Values ≥ 1 mean "drop".
    pub fn spaced_probability(&self, pb: f64, count: f64) -> f64 {
        let x = count * pb;
        match (self.variant, self.wait) {
            (RedVariant::Altq, _) => {
                if x >= 2.0 { 1.0 } else { pb / (2.0 - x) }
            }
            (_, true) => {
                if x < 1.0 {
                    0.0
                } else if x < 2.0 {
                    pb / (2.0 - x)
                } else {
                    1.0
                }
            }
            (_, false) => {
                if x >= 1.0 { 1.0 } else { pb / (1.0 - x) }
            }
        }
    }
}

/// How a per-packet factor (WHITE's RTT scaling) enters RED's decision. Lee 2002 §3.3 scales
/// "the drop probability" without saying where count spacing comes in (spec seed001 §2.1.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FactorCombine {
    /// pb′ = min(1, pb·factor), then the count spacing: max_p scaled per packet, the reading of
    /// the defence slides ("adjusts max_p per packet") and of a patch to ns-2's `red.cc`.
    #[default]
    ScalePbBeforeCount,
    /// pa′ = min(1, pa·factor): the spaced probability scaled.
    ScalePaAfterCount,
    /// p = min(1, pb·factor) tested directly, without count spacing (§3.3 read literally).
    LiteralNoCount,
}

/// A per-packet scaling of RED's probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbabilityScale {
    /// Multiplier of the probability (1 = plain RED).
    pub factor: f64,
    /// Where it applies.
    pub combine: FactorCombine,
    /// Whether it also applies in the gentle region (ns-2 computes that ramp without max_p, so a
    /// patch that scaled max_p would leave it unscaled).
    pub in_gentle: bool,
}

impl ProbabilityScale {
    /// No scaling: RED's own decision.
    pub const NONE: ProbabilityScale =
        ProbabilityScale { factor: 1.0, combine: FactorCombine::ScalePbBeforeCount, in_gentle: false };
}

/// What RED decided about an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedDecision {
    /// Not dropped by RED (the buffer limit may still apply).
    Pass,
    /// Probabilistic early drop.
    Early,
    /// The average is past the forced-drop threshold.
    Forced,
}

/// The per-instance RED state: average, count, idle bookkeeping.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedState {
    avg: f64,
    /// Arrivals (packets, or bytes ÷ mean size in byte mode) since the last drop.
    count: f64,
    /// `old` of Fig. 3.8: the previous arrival already saw the average above `min_th`.
    in_early_drop: bool,
    idle: bool,
    idle_since: Time,
}

impl Default for RedState {
    fn default() -> Self {
        RedState { avg: 0.0, count: -1.0, in_early_drop: false, idle: true, idle_since: Time::ZERO }
    }
}

/// ALTQ forgets the average after this long idle.
const ALTQ_IDLE_RESET_NS: u64 = 60_000_000_000;

impl RedState {
    /// The average queue size.
    pub fn average(&self) -> f64 {
        self.avg
    }

    /// Arrivals counted since the last drop.
    pub fn count(&self) -> f64 {
        self.count
    }

    /// Whether the queue is idle: the next [`RedState::update_average`] applies the idle decay
    /// instead of an ordinary sample.
    pub fn is_idle(&self) -> bool {
        self.idle
    }

    /// When the current idle period started, if the queue is idle.
    pub fn idle_since(&self) -> Option<Time> {
        self.idle.then_some(self.idle_since)
    }

    /// Updates the average for an arrival that finds `queued` (in average units) waiting.
    /// Fig. 3.7, with the variants' idle handling.
    pub fn update_average(&mut self, cfg: &RedConfig, queued: f64, now: Time) {
        let w = cfg.weight;
        if !self.idle {
            self.avg = (1.0 - w) * self.avg + w * queued;
            return;
        }
        self.idle = false;
        let idle_ns = now.0.saturating_sub(self.idle_since.0);
        let slots = idle_ns as f64 * 1e-9 * cfg.drain_rate;
        match cfg.variant {
            RedVariant::Documented => {
                let n = (slots - 1.0).trunc().max(0.0);
                self.avg *= (1.0 - w).powf(n);
            }
            RedVariant::Altq => {
                if idle_ns > ALTQ_IDLE_RESET_NS {
                    self.avg = 0.0;
                } else {
                    let n = (slots - 1.0).trunc();
                    if n > 0.0 {
                        self.avg *= (1.0 - w).powf(n);
                    }
                }
                self.avg = (1.0 - w) * self.avg + w * queued;
            }
            RedVariant::Ns2 => {
                let m = slots.trunc();
                self.avg = self.avg * (1.0 - w).powf(m + 1.0) + w * queued;
            }
        }
    }

    /// The RED part of an arrival (Fig. 3.8 without the buffer-limit test): updates the average
    /// from `queued` (average units; `queued_pkts` packets), then decides. A `Pass` leaves `count`
    /// running; the caller reports any later drop or mark with [`RedState::on_drop`].
    pub fn on_arrival(&mut self, cfg: &RedConfig, queued: f64, queued_pkts: usize, size: u32, now: Time, rng: &mut Rng) -> RedDecision {
        self.sample(cfg, queued, size, now);
        self.decide(cfg, queued_pkts, size, rng)
    }

    /// The first half of an arrival: counts it and updates the average (Fig. 3.8's first lines).
    pub fn sample(&mut self, cfg: &RedConfig, queued: f64, size: u32, now: Time) {
        self.count += cfg.units(size);
        self.update_average(cfg, queued, now);
    }

    /// The second half: the drop decision on the updated average.
    pub fn decide(&mut self, cfg: &RedConfig, queued_pkts: usize, size: u32, rng: &mut Rng) -> RedDecision {
        self.decide_scaled(cfg, queued_pkts, size, rng, ProbabilityScale::NONE)
    }

    /// [`RedState::decide`] with the early-drop probability scaled per packet (WHITE). With
    /// `ProbabilityScale::NONE` it draws the same random numbers and decides the same as `decide`.
    pub fn decide_scaled(&mut self, cfg: &RedConfig, queued_pkts: usize, size: u32, rng: &mut Rng, scale: ProbabilityScale) -> RedDecision {
        let units = cfg.units(size);
        let avg = self.avg;
        if !(cfg.above_min(avg) && queued_pkts > cfg.protected_pkts as usize) {
            self.in_early_drop = false;
            return RedDecision::Pass;
        }
        if cfg.forced(avg) {
            return RedDecision::Forced;
        }
        if !self.in_early_drop {
            // The free pass (Fig. 3.8): entering the early-drop region restarts the spacing.
            self.in_early_drop = true;
            self.count = units;
            return RedDecision::Pass;
        }
        let pb = cfg.base_probability(avg);
        let factor = if avg >= cfg.max_th && !scale.in_gentle { 1.0 } else { scale.factor };
        let mut pa = match scale.combine {
            FactorCombine::ScalePbBeforeCount => cfg.spaced_probability((pb * factor).min(1.0), self.count),
            FactorCombine::ScalePaAfterCount => (cfg.spaced_probability(pb, self.count) * factor).min(1.0),
            FactorCombine::LiteralNoCount => (pb * factor).min(1.0),
        };
        if cfg.byte_mode && pa < 1.0 {
            pa = (pa * size as f64 / cfg.mean_packet_size).min(1.0);
        }
        if pa >= 1.0 || rng.gen::<f64>() < pa { RedDecision::Early } else { RedDecision::Pass }
    }

    /// The arrival was dropped or marked (by RED or by the buffer limit): restart the spacing.
    pub fn on_drop(&mut self) {
        self.count = 0.0;
    }

    /// A departure at `now` left the queue empty (Fig. 3.10: the documented variant's idle start).
    pub fn on_departure_empty(&mut self, cfg: &RedConfig, now: Time) {
        if cfg.variant == RedVariant::Documented && !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
    }

    /// The link asked for a packet at `now` and found the queue empty: the link went idle
    /// (ALTQ `red_getq`, ns-2 `deque`). The documented variant started idling at the departure.
    pub fn on_empty_dequeue(&mut self, cfg: &RedConfig, now: Time) {
        if cfg.variant != RedVariant::Documented && !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};

    fn cfg(variant: RedVariant) -> RedConfig {
        RedConfig {
            variant,
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
            wait: variant == RedVariant::Ns2,
            gentle: false,
            byte_mode: false,
            mean_packet_size: 1000.0,
            drain_rate: 1250.0,
            protected_pkts: 1,
            nonlinear: false,
        }
    }

    #[test]
    fn documented_pa_sequence_matches_spec_test_vector() {
        // Spec §2.2 note 1: pb = 0.1 → pa = 0.1, 0.111, 0.125, 0.143, 0.167, 0.2, 0.25, 0.333, 0.5, 1.0.
        let c = cfg(RedVariant::Documented);
        let expected = [0.1, 0.1111, 0.125, 0.1429, 0.1667, 0.2, 0.25, 0.3333, 0.5, 1.0];
        for (count, want) in expected.iter().enumerate() {
            let pa = c.spaced_probability(0.1, count as f64);
            assert!((pa - want).abs() < 1e-4, "count {count}: {pa} vs {want}");
        }
        assert_eq!(c.spaced_probability(0.1, 12.0), 1.0);
    }

    #[test]
    fn altq_pa_is_pb_over_two_minus_count_pb_and_reaches_one_at_2_over_pb_minus_1() {
        let c = cfg(RedVariant::Altq);
        assert!((c.spaced_probability(0.1, 0.0) - 0.05).abs() < 1e-12);
        assert!((c.spaced_probability(0.1, 10.0) - 0.1).abs() < 1e-12); // not 1 at count = 1/pb
        assert!((c.spaced_probability(0.1, 19.0) - 1.0).abs() < 1e-12); // count = 2/pb − 1
        assert_eq!(c.spaced_probability(0.1, 25.0), 1.0);
    }

    #[test]
    fn ns2_wait_holds_off_until_count_pb_reaches_one() {
        let c = cfg(RedVariant::Ns2);
        assert_eq!(c.spaced_probability(0.1, 9.0), 0.0);
        assert!((c.spaced_probability(0.1, 10.0) - 0.1).abs() < 1e-12);
        assert!((c.spaced_probability(0.1, 15.0) - 0.2).abs() < 1e-12);
        assert_eq!(c.spaced_probability(0.1, 20.0), 1.0);
        let no_wait = RedConfig { wait: false, ..c };
        assert!((no_wait.spaced_probability(0.1, 5.0) - 0.2).abs() < 1e-12);
    }

    #[test]
    fn base_probability_is_linear_and_gentle_ramps_to_one() {
        let c = cfg(RedVariant::Ns2);
        assert!((c.base_probability(10.0) - 0.05).abs() < 1e-12);
        let g = RedConfig { gentle: true, ..c };
        assert!((g.base_probability(15.0) - 0.1).abs() < 1e-12);
        assert!((g.base_probability(22.5) - 0.55).abs() < 1e-12);
        assert_eq!(g.base_probability(30.0), 1.0);
        assert!(!g.forced(29.0) && g.forced(30.0) && c.forced(15.0));
    }

    #[test]
    fn nonlinear_red_is_quadratic_below_max_th_as_ns3_nlred() {
        // min 5, max 15, max_p 0.1: x = 0.5 → 1.5·0.1·0.25; x → 1 → 0.15; gentle restarts at max_p.
        let c = RedConfig { nonlinear: true, gentle: true, ..cfg(RedVariant::Ns2) };
        assert!((c.base_probability(10.0) - 0.0375).abs() < 1e-12);
        assert!((c.base_probability(14.999_999) - 0.15).abs() < 1e-6);
        assert!((c.base_probability(15.0) - 0.1).abs() < 1e-12);
        assert_eq!(c.base_probability(5.0), 0.0);
        let big = RedConfig { max_p: 0.9, ..c };
        assert_eq!(big.base_probability(14.9), 1.0, "1.5·max_p·x² is capped at 1");
    }

    #[test]
    fn ewma_follows_hand_computation() {
        let c = RedConfig { weight: 0.25, ..cfg(RedVariant::Ns2) };
        let mut s = RedState { idle: false, ..RedState::default() };
        s.update_average(&c, 4.0, Time(0));
        assert_eq!(s.average(), 1.0);
        s.update_average(&c, 8.0, Time(0));
        assert_eq!(s.average(), 0.75 * 1.0 + 2.0);
    }

    #[test]
    fn idle_decay_per_variant() {
        // avg 10, w = 0.5, drain 1000 pkt/s, idle 3.5 ms → 3.5 slots.
        let base = RedConfig { weight: 0.5, drain_rate: 1000.0, ..cfg(RedVariant::Documented) };
        let idle_state = RedState { avg: 10.0, idle: true, idle_since: Time(1_000_000), ..RedState::default() };
        let now = Time(4_500_000);
        let run = |variant| {
            let mut s = idle_state;
            s.update_average(&RedConfig { variant, ..base }, 0.0, now);
            s.average()
        };
        assert_eq!(run(RedVariant::Documented), 10.0 * 0.5f64.powi(2)); // n = trunc(3.5 − 1) = 2, no sample
        assert_eq!(run(RedVariant::Altq), 10.0 * 0.5f64.powi(3)); // n = 2, then the zero sample
        assert_eq!(run(RedVariant::Ns2), 10.0 * 0.5f64.powi(4)); // m = 3, (1−w)^(m+1)
        // Short idle: the documented n never goes negative (resolution 2).
        let mut s = RedState { avg: 10.0, idle: true, idle_since: Time(0), ..RedState::default() };
        s.update_average(&base, 0.0, Time(500_000));
        assert_eq!(s.average(), 10.0);
    }

    #[test]
    fn altq_forgets_the_average_after_a_minute_idle() {
        let c = cfg(RedVariant::Altq);
        let mut s = RedState { avg: 10.0, idle: true, idle_since: Time(0), ..RedState::default() };
        s.update_average(&c, 0.0, Time(61_000_000_000));
        assert_eq!(s.average(), 0.0);
    }

    #[test]
    fn free_pass_then_count_spaced_drops() {
        let c = RedConfig { weight: 1.0, ..cfg(RedVariant::Documented) };
        let mut rng = stream(1, StreamId::Queue(0));
        let mut s = RedState { idle: false, ..RedState::default() };
        // Below min_th: pass, not in early-drop mode.
        assert_eq!(s.on_arrival(&c, 3.0, 3, 1000, Time(0), &mut rng), RedDecision::Pass);
        // First arrival above min_th: the free pass sets count = 1.
        assert_eq!(s.on_arrival(&c, 10.0, 10, 1000, Time(0), &mut rng), RedDecision::Pass);
        assert_eq!(s.count(), 1.0);
        // pb = 0.05 at avg 10: a drop is certain once count reaches 1/pb = 20.
        let mut n = 0;
        while s.on_arrival(&c, 10.0, 10, 1000, Time(0), &mut rng) == RedDecision::Pass {
            n += 1;
            assert!(n < 20);
        }
        s.on_drop();
        assert_eq!(s.count(), 0.0);
    }

    #[test]
    fn protected_short_queue_is_never_dropped() {
        let c = RedConfig { weight: 1.0, ..cfg(RedVariant::Documented) };
        let mut rng = stream(1, StreamId::Queue(0));
        let mut s = RedState { idle: false, avg: 100.0, ..RedState::default() };
        // The average is far above max_th, but only one packet is queued.
        s.avg = 100.0;
        let c2 = RedConfig { weight: 0.0001, ..c };
        assert_eq!(s.on_arrival(&c2, 1.0, 1, 1000, Time(0), &mut rng), RedDecision::Pass);
        assert_eq!(s.on_arrival(&c2, 2.0, 2, 1000, Time(0), &mut rng), RedDecision::Forced);
    }

    #[test]
    fn inter_drop_gap_of_documented_red_is_uniform_up_to_one_over_pb_minus_one() {
        // `count` is incremented before the test (Fig. 3.8), so the n-th arrival after a drop sees
        // pa = pb/(1 − n·pb): the gap is uniform on {1, …, 1/pb − 1} (spec §2.2 note 1: "a drop
        // at least every 1/pb − 1 arrivals"). pb = 0.05 → 19 equally likely gaps, mean 10.
        // 20,000 gaps: each bucket expects 1053 (sd ≈ 32), the mean's standard error is ≈ 0.04.
        let c = RedConfig { weight: 1.0, ..cfg(RedVariant::Documented) };
        let mut rng = stream(7, StreamId::Queue(0));
        let mut s = RedState { idle: false, in_early_drop: true, count: 0.0, ..RedState::default() };
        let (mut gaps, mut since, mut total) = (0u32, 0u32, 0u64);
        let mut histogram = [0u32; 21];
        while gaps < 20_000 {
            since += 1;
            if s.on_arrival(&c, 10.0, 10, 1000, Time(0), &mut rng) == RedDecision::Early {
                s.on_drop();
                histogram[since as usize] += 1;
                total += since as u64;
                gaps += 1;
                since = 0;
            }
        }
        let mean = total as f64 / gaps as f64;
        assert!((mean - 10.0).abs() < 0.2, "mean gap {mean}");
        assert!(histogram[1..=19].iter().all(|&h| (900..1200).contains(&h)), "{histogram:?}");
        assert_eq!(histogram[20], 0);
    }

    #[test]
    fn byte_mode_scales_probability_by_size() {
        let c = RedConfig { byte_mode: true, weight: 1.0, ..cfg(RedVariant::Ns2) };
        // Twice the mean size counts twice towards `count`.
        let mut s = RedState { idle: false, in_early_drop: true, count: 0.0, ..RedState::default() };
        let mut rng = stream(3, StreamId::Queue(0));
        s.on_arrival(&c, 10.0, 10, 2000, Time(0), &mut rng);
        assert_eq!(s.count(), 2.0);
    }
}
