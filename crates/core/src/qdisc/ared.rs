//! Adaptive RED (Floyd, Gummadi & Shenker 2001, "Adaptive RED: An Algorithm for Increasing the
//! Robustness of RED's Active Queue Management"): RED whose `max_p` is steered so that the average
//! queue stays in a target band between the thresholds. It is a switch of `kind = "red"`
//! (`adaptive = true`), as it is in ns-3 (`RedQueueDisc` `ARED` / `AdaptMaxP`) and Linux
//! (`tc qdisc … red … adaptive`): the averaging, drop test, gentle ramp, byte mode and ECN are
//! [`super::red_core`]'s, unchanged; this file holds only the adaptation and the automatic settings.
//!
//! **The rule** (Floyd 2001, Fig. 3): every `interval` (0.5 s),
//! * if `avg > target_high` and `max_p ≤ top` (0.5): `max_p ← max_p + α`, `α = min(alpha, max_p/4)`
//!   (`alpha` = 0.01);
//! * if `avg < target_low` and `max_p ≥ bottom` (0.01): `max_p ← β·max_p` (`beta` = 0.9);
//!
//! with the target band `[min_th + 0.4·(max_th − min_th), min_th + 0.6·(max_th − min_th)]`.
//! Worked number: min_th 20, max_th 60 → band [36, 44]; at max_p 0.1, an interval spent above 44
//! raises it to 0.11, one below 36 lowers it to 0.09.
//!
//! **Automatic settings** (§4–5; ns-3 `InitializeParams`), with `C` the link rate in packets of
//! `mean_packet_size` per second: `weight = 1 − exp(−1/C)`, `min_th = max(5, target_delay·C/2)`
//! (`target_delay` 5 ms, ns-3's `TargetDelay`), `max_th = 3·min_th`, gentle on. They apply to
//! whichever of `min_th`, `max_th`, `weight`, `gentle` the scenario leaves unset (ns-3's `ARED=true`
//! overwrites them even when set; Linux takes them from `tc`). At 10 Mb/s and 1500-byte packets,
//! C = 833.3/s: weight 0.0011993, min_th = max(5, 2.08) = 5, max_th = 15, band [9, 11].
//!
//! **Variants** (`adaptive_variant`), where the implementations differ from the paper and each other:
//! * `ns3` (default): ns-3 3.44 `red-queue-disc.cc`. The rule runs in `Estimator()` on an arrival,
//!   on the freshly updated average and before that arrival's drop test, when
//!   `now > last_set + interval`; `last_set` (0 at start) moves only when `max_p` changes, so once
//!   the interval has passed an in-band average is re-examined at every arrival (`UpdateMaxP`).
//!   Bounds: decrease while `max_p > bottom`, increase while `max_p < top` (strict; `bottom`
//!   defaults to ns-3's `Bottom = 0` rule, `min(0.01, 8·mean_packet_size·rtt/link_rate)` with `rtt`
//!   100 ms: its comment calls that 1/W for a window of W packets, but the expression is `rtt/C`,
//!   not `1/(rtt·C)`, so at 10 Mb/s and 1500 B it is 1.2·10⁻⁴ where 1/W gives 0.01). The
//!   band's upper end is written `max_th − 0.4·(max_th − min_th)`. The gentle ramp above `max_th`
//!   keeps starting from the *initial* `max_p` (ns-3 computes its `m_vC`, `m_vD` once in
//!   `InitializeParams`), while the linear part uses the adapted one.
//! * `linux`: `include/net/red.h` `red_adaptative_algo`, run by `sch_red.c`'s `adapt_timer` at
//!   configuration (t = 0) and then every `HZ/2` = 500 ms, on the stored average decayed for the
//!   idle time if the queue is idle (not written back). `max_P` is Q0.32 fixed point:
//!   `α = min(1 %, max_P/4)` and `max_P = (max_P/10)·9` in integer arithmetic, the tests
//!   `max_P ≤ 50 %` and `max_P ≥ 1 %` (`RED_ONE_PERCENT = round(2³²/100)`), strict `>` / `<`
//!   against `target_max = min_th + 3·Δ/5` and `target_min = min_th + 2·Δ/5`. Interval, alpha,
//!   beta, top and bottom are Linux's constants (setting them is an error). The timer is run
//!   lazily: each tick `k·0.5 s` (k ≥ 0) due before an arrival runs first, on the average as it
//!   stood at the tick, so decisions are those of a timer. Linux RED's own drop test (`qR`) and its
//!   byte-based average are not modelled: the RED underneath is aqmlab's `variant` (docs/red.md).
//! * `feng`: ns-3's `FengAdaptive` (Feng, Kandlur, Saha & Shin, "A Self-Configuring RED Gateway",
//!   INFOCOM 1999, as `UpdateMaxPFeng`): at every arrival, on leaving the band between the
//!   thresholds, `max_p ← max_p/feng_alpha` (3) on going below `min_th` and `max_p ← feng_beta·max_p`
//!   (2) on going above `max_th`, once per excursion; the state starts "above". No bounds.
//!
//! No random numbers: the adaptation draws nothing, so with `adaptive = true` and a `max_p` that
//! never moves, ARED makes exactly RED's decisions from the same stream (tested).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::red_core::{RedConfig, RedState};
use crate::engine::{Dur, Time};

/// Which implementation of the `max_p` adaptation to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AdaptiveVariant {
    /// ns-3 3.44 `RedQueueDisc::UpdateMaxP`, checked at arrivals.
    #[default]
    Ns3,
    /// Linux `red_adaptative_algo` from a 500 ms timer, Q0.32 `max_P`.
    Linux,
    /// ns-3 3.44 `RedQueueDisc::UpdateMaxPFeng` (Feng et al. 1999).
    Feng,
}

/// The `bottom` key: a probability, or `"auto"` (ns-3's `Bottom = 0` rule, [`auto_bottom`]; 0.01
/// for `linux`, whose floor is fixed).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Bottom {
    /// Computed from the link (ns3) or Linux's constant.
    #[default]
    Auto,
    /// This value.
    Value(f64),
}

impl<'de> Deserialize<'de> for Bottom {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Bottom;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a probability in (0, top) or \"auto\"")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Bottom, E> {
                Ok(Bottom::Value(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Bottom, E> {
                Ok(Bottom::Value(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Bottom, E> {
                Ok(Bottom::Value(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Bottom, E> {
                if v == "auto" {
                    Ok(Bottom::Auto)
                } else {
                    Err(E::custom(format!("expected a probability in (0, top) or \"auto\", got \"{v}\"")))
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Bottom {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Bottom::Auto => s.serialize_str("auto"),
            Bottom::Value(v) => s.serialize_f64(*v),
        }
    }
}

/// Linux's `RED_ONE_PERCENT`: `DIV_ROUND_CLOSEST(1 << 32, 100)`.
const LINUX_ONE_PERCENT: u32 = 42_949_673;
/// Linux's adaptation period, `HZ/2`.
pub const LINUX_INTERVAL: Dur = Dur::from_millis(500);
/// 2³², the scale of Linux's `max_P`.
const Q32: f64 = 4_294_967_296.0;

/// Floyd 2001 §4: `w_q = 1 − exp(−1/C)`, `C` in packets per second.
pub fn auto_weight(drain_rate: f64) -> f64 {
    1.0 - (-1.0 / drain_rate).exp()
}

/// Floyd 2001 §4 / ns-3 `InitializeParams`: `min_th = max(5, target_delay·C/2)`, `max_th = 3·min_th`.
pub fn auto_thresholds(drain_rate: f64, target_delay: Dur) -> (f64, f64) {
    let min_th = (target_delay.as_secs_f64() * drain_rate / 2.0).max(5.0);
    (min_th, 3.0 * min_th)
}

/// ns-3's automatic `Bottom` (`m_bottom = 0`): `min(0.01, 8·mean_packet_size·rtt / link_rate)`.
/// ns-3's comment says 1/W with W the window in packets (`rtt·C`); the expression is `rtt/C`. Kept
/// as ns-3 computes it (docs/ared.md).
pub fn auto_bottom(mean_packet_size: f64, link_rate_bps: f64, rtt: Dur) -> f64 {
    (8.0 * mean_packet_size * rtt.as_secs_f64() / link_rate_bps).min(0.01)
}

/// Validated adaptation settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveConfig {
    /// Which implementation.
    pub variant: AdaptiveVariant,
    /// Time between adaptations (ns3: at least this long after the last change; linux: 500 ms).
    pub interval: Dur,
    /// Largest additive increase of `max_p` (α = min(alpha, max_p/4)).
    pub alpha: f64,
    /// Multiplicative decrease factor of `max_p`, in (0, 1).
    pub beta: f64,
    /// `max_p` is increased only while below (ns3) / at most (linux) this.
    pub top: f64,
    /// `max_p` is decreased only while above (ns3) / at least (linux) this.
    pub bottom: f64,
    /// Lower end of the target band for the average (average units).
    pub target_low: f64,
    /// Upper end of the target band.
    pub target_high: f64,
    /// `max_p` at the start; ns-3's gentle ramp keeps starting from it.
    pub initial_max_p: f64,
    /// Feng's divisor on going below `min_th` (ns-3 `FengAlpha`, 3).
    pub feng_alpha: f64,
    /// Feng's factor on going above `max_th` (ns-3 `FengBeta`, 2).
    pub feng_beta: f64,
}

impl AdaptiveConfig {
    /// The target band of `variant` for thresholds `min_th`, `max_th` (ns-3 and Linux write it
    /// differently; the values agree to rounding).
    pub fn band(variant: AdaptiveVariant, min_th: f64, max_th: f64) -> (f64, f64) {
        let delta = max_th - min_th;
        match variant {
            AdaptiveVariant::Linux => (min_th + 2.0 * (delta / 5.0), min_th + 3.0 * (delta / 5.0)),
            _ => (min_th + 0.4 * delta, max_th - 0.4 * delta),
        }
    }
}

/// Feng's position of the average relative to the thresholds (ns-3 `FengStatus`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FengStatus {
    Above,
    Between,
    Below,
}

/// The adaptation's state: `max_p` lives in the [`RedConfig`] it steers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveState {
    /// ns3: the last time `max_p` changed (ns-3 `m_lastSet`, 0 at start).
    last_set_at: Time,
    /// linux: the next timer tick not yet run.
    next_tick_at: Time,
    /// linux: `max_P` in Q0.32.
    max_p_q32: u32,
    feng: FengStatus,
    /// Times `max_p` was raised.
    pub increases: u64,
    /// Times `max_p` was lowered.
    pub decreases: u64,
}

impl AdaptiveState {
    /// The state at the start of a run with `max_p` = `cfg.initial_max_p`.
    pub fn new(cfg: &AdaptiveConfig) -> AdaptiveState {
        // tc: `opt.max_P = probability * pow(2, 32)`, a C cast (truncation, saturating here).
        let q32 = (cfg.initial_max_p * Q32).min(u32::MAX as f64) as u32;
        AdaptiveState { last_set_at: Time::ZERO, next_tick_at: Time::ZERO, max_p_q32: q32, feng: FengStatus::Above, increases: 0, decreases: 0 }
    }
}

/// RED's adaptation: settings and state together, owned by the [`super::red::Red`] it steers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adaptive {
    /// Settings.
    pub cfg: AdaptiveConfig,
    /// State.
    pub state: AdaptiveState,
}

impl Adaptive {
    /// A fresh adaptation; `red.max_p` must equal `cfg.initial_max_p` (linux: its Q0.32 value).
    pub fn new(cfg: AdaptiveConfig, red: &mut RedConfig) -> Adaptive {
        let state = AdaptiveState::new(&cfg);
        if cfg.variant == AdaptiveVariant::Linux {
            red.max_p = state.max_p_q32 as f64 / Q32;
        }
        Adaptive { cfg, state }
    }

    /// Before an arrival at `now` is sampled (linux): runs the timer ticks due by `now`, each on
    /// the average as it stood then.
    pub fn before_arrival(&mut self, red: &mut RedConfig, avg: &RedState, now: Time) {
        if self.cfg.variant != AdaptiveVariant::Linux {
            return;
        }
        while self.state.next_tick_at <= now {
            let at = self.state.next_tick_at;
            let qavg = linux_average_at(red, avg, at);
            self.linux_tick(red, qavg);
            self.state.next_tick_at = at + LINUX_INTERVAL;
        }
    }

    /// After the arrival at `now` updated the average to `avg`, before its drop test (ns3, feng).
    pub fn after_sample(&mut self, red: &mut RedConfig, avg: f64, now: Time) {
        match self.cfg.variant {
            AdaptiveVariant::Ns3 => {
                if now > self.state.last_set_at + self.cfg.interval {
                    self.ns3_update(red, avg, now);
                }
            }
            AdaptiveVariant::Feng => self.feng_update(red, avg),
            AdaptiveVariant::Linux => {}
        }
    }

    /// The settings the drop test runs with: `red` itself, except that ns-3's gentle ramp (ns3,
    /// feng) starts from the initial `max_p` (its `m_vC`, `m_vD`).
    pub fn decision_config(&self, red: &RedConfig, avg: f64) -> RedConfig {
        if red.gentle && avg >= red.max_th && self.cfg.variant != AdaptiveVariant::Linux {
            RedConfig { max_p: self.cfg.initial_max_p, ..*red }
        } else {
            *red
        }
    }

    /// ns-3 `UpdateMaxP`: AIMD towards the band; `last_set` moves only on a change.
    fn ns3_update(&mut self, red: &mut RedConfig, avg: f64, now: Time) {
        let c = &self.cfg;
        if avg < c.target_low && red.max_p > c.bottom {
            red.max_p *= c.beta;
            self.state.last_set_at = now;
            self.state.decreases += 1;
        } else if avg > c.target_high && c.top > red.max_p {
            red.max_p += c.alpha.min(0.25 * red.max_p);
            self.state.last_set_at = now;
            self.state.increases += 1;
        }
    }

    /// ns-3 `UpdateMaxPFeng`: divide on dropping below `min_th`, multiply on rising above `max_th`.
    fn feng_update(&mut self, red: &mut RedConfig, avg: f64) {
        let s = &mut self.state;
        if red.min_th < avg && avg < red.max_th {
            s.feng = FengStatus::Between;
        } else if avg < red.min_th && s.feng != FengStatus::Below {
            s.feng = FengStatus::Below;
            red.max_p /= self.cfg.feng_alpha;
            s.decreases += 1;
        } else if avg > red.max_th && s.feng != FengStatus::Above {
            s.feng = FengStatus::Above;
            red.max_p *= self.cfg.feng_beta;
            s.increases += 1;
        }
    }

    /// Linux `red_adaptative_algo` on the average `qavg`, in Q0.32 (the real-number rule is
    /// Floyd's Fig. 3: `max_p += min(0.01, max_p/4)`, `max_p *= 0.9`).
    fn linux_tick(&mut self, red: &mut RedConfig, qavg: f64) {
        let p = self.state.max_p_q32;
        if qavg > self.cfg.target_high && p <= 50 * LINUX_ONE_PERCENT {
            self.state.max_p_q32 = p + LINUX_ONE_PERCENT.min(p / 4);
            self.state.increases += 1;
        } else if qavg < self.cfg.target_low && p >= LINUX_ONE_PERCENT {
            self.state.max_p_q32 = (p / 10) * 9;
            self.state.decreases += 1;
        }
        red.max_p = self.state.max_p_q32 as f64 / Q32;
    }
}

/// The average a Linux timer tick at `at` reads: the stored one, or, while the queue is idle,
/// decayed for the idle time as `red_calc_qavg_from_idle_time` does, `avg·(1−w)^m` with
/// `m = idle·C` (Linux approximates the power with a table; the exact power is used here).
fn linux_average_at(red: &RedConfig, state: &RedState, at: Time) -> f64 {
    match state.idle_since() {
        Some(since) if at > since => {
            let m = (at.0 - since.0) as f64 * 1e-9 * red.drain_rate;
            state.average() * (1.0 - red.weight).powf(m)
        }
        _ => state.average(),
    }
}

#[cfg(test)]
#[path = "ared_tests.rs"]
mod tests;
