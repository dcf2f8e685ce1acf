//! Random Early Detection over a FIFO (Floyd & Jacobson 1993; Parris 2001 Figs. 3.6–3.10; spec
//! `seed000-cbt-algorithms.md` §2.2). The averaging and drop test live in [`super::red_core`];
//! this file adds the buffer, the limit, ECN marking and the counters.
//!
//! Order of the tests on arrival: the documented variant checks the buffer limit right after the
//! average (Fig. 3.8); ALTQ and ns-2 run the RED test first and apply the limit to what RED let
//! through (spec note 4). Both reset `count` on every drop. With `ecn`, an ECN-capable packet
//! that RED would early-drop is marked CE and queued instead (RFC 3168 §7); forced drops stay
//! drops unless `ecn_forced_mark` is set (marking up to the hard limit).
//! Early decisions in the gentle region (`max_th ≤ avg < 2·max_th`) mark only with
//! `ecn_gentle_mark` (default on).
//!
//! `variant = "ns2"` adds ns-2's own bound, `mark_p` (ns-2.35 red.cc `REDQueue::drop_early`: an
//! ECN-capable packet is marked only `if (!use_mark_p_ || v_prob1 < mark_p_)`, and dropped
//! otherwise; ns-default.tcl sets `mark_p_ 0.1`, `use_mark_p_ true`). `v_prob1` is the base
//! probability pb before count spacing, so the switch from marking to dropping sits where pb
//! reaches `mark_p`, in either region: at `max_th` only when `max_p = mark_p` (the defaults), at
//! `min_th + (max_th − min_th)/2` with `max_p = 0.2`, inside the gentle ramp with `max_p < 0.1`.
//! Before `mark_p` existed aqmlab's ns2 variant switched at `max_th` whatever `max_p` (spec
//! `seed001-white.md` §2.0 item 5 read red.cc with the defaults) and did not mark in the gentle
//! region; now `ecn_gentle_mark` defaults to on for ns2 too and `mark_p` decides there.
//!
//! `adaptive = true` is Adaptive RED (Floyd, Gummadi & Shenker 2001): [`super::ared`] steers
//! `max_p` and supplies automatic `min_th`, `max_th`, `weight` and `gentle` for whichever of them
//! the scenario leaves unset; everything else is this file's RED. Without it (the default) no
//! adaptation code runs and every decision is RED's.

use serde::{Deserialize, Serialize};
use super::ared::{self, Adaptive, AdaptiveConfig, AdaptiveVariant, Bottom};
use super::fifo::Fifo;
use super::red_core::{ProbabilityScale, RedConfig, RedDecision, RedState};
use super::{AdaptiveRedView, DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::{Ecn, Packet};
use crate::scenario::units::{Bytes, Duration, Limit};

pub use super::red_core::RedVariant;

/// Scenario keys of `kind = "red"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    /// Hard limit: packets, bytes, or `"none"`.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Minimum threshold on the average (packets; bytes÷mean_packet_size in byte mode). Default
    /// 5; with `adaptive`, `max(5, target_delay·C/2)` (Floyd 2001 §5).
    #[serde(default, alias = "thresh_", alias = "min", skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    /// Maximum threshold. Default 15; with `adaptive`, `3·min_th`.
    #[serde(default, alias = "maxthresh_", alias = "max", skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    /// Drop probability at the maximum threshold, in (0, 1].
    #[serde(default = "default_max_p", alias = "probability")]
    pub max_p: f64,
    /// EWMA weight, in (0, 1]. Default 0.002; with `adaptive`, `1 − exp(−1/C)` (Floyd 2001 §4).
    #[serde(default, alias = "q_weight_", skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// Which RED.
    #[serde(default)]
    pub variant: RedVariant,
    /// ns-2's `wait_`: no early drop until `count·pb ≥ 1`. Default: true for `ns2`, false otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Gentle RED above max_th. Default false; true with `adaptive`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    /// Measure the queue in bytes and scale the drop probability by packet size.
    #[serde(default)]
    pub byte_mode: bool,
    /// Nonlinear RED: a quadratic probability below `max_th`, `1.5·max_p·x²` (ns-3's `NLRED`).
    #[serde(default, alias = "nlred")]
    pub nonlinear: bool,
    /// Mark ECN-capable packets instead of dropping them early.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, also mark (not drop) ECN-capable packets in the forced-drop region.
    #[serde(default)]
    pub ecn_forced_mark: bool,
    /// With `ecn` and `gentle`, mark (not drop) ECN-capable packets RED picks in the gentle
    /// region (default true; under `ns2`, `mark_p` still decides).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_gentle_mark: Option<bool>,
    /// `variant = "ns2"` only: ns-2's `mark_p_` (with its `use_mark_p_ true`). With `ecn`, an early
    /// decision marks an ECN-capable packet only while the base probability pb (before count
    /// spacing) is below it, and drops it otherwise (red.cc `drop_early`). Default 0.1
    /// (ns-default.tcl); a value above 1 marks every early decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mark_p: Option<f64>,
    /// Mean packet size for idle-time decay and byte mode.
    #[serde(default = "default_mean_packet_size", alias = "avpkt")]
    pub mean_packet_size: Bytes,
    /// RED does not drop on the average while at most this many packets are queued (Fig. 3.8's
    /// `q_len > 1`; ns-2 and ALTQ test the same).
    #[serde(default = "default_protected_pkts")]
    pub protected_pkts: u32,
    /// Adaptive RED (Floyd 2001): adapt `max_p` towards the target band (docs/ared.md). ns-3's
    /// `ARED` / `AdaptMaxP`, Linux's `adaptive` flag.
    #[serde(default, alias = "ared", skip_serializing_if = "Option::is_none")]
    pub adaptive: Option<bool>,
    /// Which implementation of the adaptation: `ns3` (default), `linux`, `feng`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adaptive_variant: Option<AdaptiveVariant>,
    /// Time between adaptations (500 ms; ns3 only, Linux's is fixed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// Largest increase of `max_p` per adaptation, α = min(alpha, max_p/4) (0.01; ns3 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Decrease factor of `max_p` (0.9; ns3 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// `max_p` is not raised past this (0.5; ns3 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top: Option<f64>,
    /// `max_p` is not lowered below this: a probability, or `"auto"` (default: ns-3's
    /// min(0.01, 8·mean_packet_size·rtt/link_rate); ns3 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottom: Option<Bottom>,
    /// Round-trip time for the automatic `bottom` (100 ms, ns-3's `Rtt`; ns3 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Duration>,
    /// Target queueing delay for the automatic `min_th` (5 ms, ns-3's `TargetDelay`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_delay: Option<Duration>,
    /// Feng's divisor of `max_p` on going below `min_th` (3; feng only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feng_alpha: Option<f64>,
    /// Feng's factor on `max_p` on going above `max_th` (2; feng only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feng_beta: Option<f64>,
}

impl Default for RedParams {
    fn default() -> Self {
        RedParams {
            limit: default_limit(),
            min_th: None,
            max_th: None,
            max_p: default_max_p(),
            weight: None,
            variant: RedVariant::default(),
            wait: None,
            gentle: None,
            byte_mode: false,
            nonlinear: false,
            ecn: false,
            ecn_forced_mark: false,
            ecn_gentle_mark: None,
            mark_p: None,
            mean_packet_size: default_mean_packet_size(),
            protected_pkts: default_protected_pkts(),
            adaptive: None,
            adaptive_variant: None,
            interval: None,
            alpha: None,
            beta: None,
            top: None,
            bottom: None,
            rtt: None,
            target_delay: None,
            feng_alpha: None,
            feng_beta: None,
        }
    }
}

fn default_limit() -> Limit {
    Limit::Packets(100)
}
pub(super) fn default_min_th() -> f64 {
    5.0
}
pub(super) fn default_max_th() -> f64 {
    15.0
}
pub(super) fn default_max_p() -> f64 {
    0.1
}
/// ns-2's `mark_p_` (ns-default.tcl), the ns2 variant's default `mark_p`.
pub(super) const NS2_MARK_P: f64 = 0.1;
pub(super) fn default_weight() -> f64 {
    0.002
}
fn default_mean_packet_size() -> Bytes {
    Bytes(1000)
}
fn default_protected_pkts() -> u32 {
    1
}
const DEFAULT_INTERVAL: Dur = Dur::from_millis(500);
const DEFAULT_ALPHA: f64 = 0.01;
const DEFAULT_BETA: f64 = 0.9;
const DEFAULT_TOP: f64 = 0.5;
const DEFAULT_RTT: Dur = Dur::from_millis(100);
const DEFAULT_TARGET_DELAY: Dur = Dur::from_millis(5);
const DEFAULT_FENG_ALPHA: f64 = 3.0;
const DEFAULT_FENG_BETA: f64 = 2.0;

fn unit_interval(path: &str, key: &str, v: f64) -> ConfigResult<()> {
    if v > 0.0 && v <= 1.0 {
        Ok(())
    } else {
        Err(ConfigError::new(format!("{path}.{key}"), format!("must be in (0, 1], got {v}")))
    }
}

/// RED's threshold rules, shared by every discipline on the RED core: 0 ≤ min_th ≤ max_th, max_th > 0.
pub(super) fn check_thresholds(path: &str, min_th: f64, max_th: f64) -> ConfigResult<()> {
    let key = |k: &str| format!("{path}.{k}");
    if !(min_th >= 0.0 && min_th.is_finite()) {
        return Err(ConfigError::new(key("min_th"), format!("must be a non-negative number, got {min_th}")));
    }
    if !(max_th.is_finite() && max_th >= min_th) {
        return Err(ConfigError::new(key("min_th"), format!("must not exceed max_th: min_th = {min_th}, max_th = {max_th}")));
    }
    if max_th <= 0.0 {
        return Err(ConfigError::new(key("max_th"), format!("must be positive, got {max_th}")));
    }
    Ok(())
}

impl RedParams {
    /// Whether Adaptive RED is on.
    pub fn is_adaptive(&self) -> bool {
        self.adaptive == Some(true)
    }

    /// The parameters with every default written out as it applies, for the scenario echo
    /// (`validate --show`, `summary.json`) and `aqmlab qdiscs`: `wait` and `mark_p` by variant,
    /// `ecn_gentle_mark` by `ecn` and `gentle`; without `adaptive`, RED's thresholds and weight and the adaptive keys at their
    /// ns3 defaults (they have no effect); with it, the keys of its `adaptive_variant`, while
    /// thresholds and weight left unset stay unset: they are computed from the link rate when the
    /// queue is built (and reported in `summary.json`).
    pub fn filled(mut self) -> Self {
        let adaptive = self.is_adaptive();
        self.gentle.get_or_insert(adaptive);
        if !adaptive {
            self.min_th.get_or_insert(default_min_th());
            self.max_th.get_or_insert(default_max_th());
            self.weight.get_or_insert(default_weight());
            self.adaptive.get_or_insert(false);
        }
        let variant = *self.adaptive_variant.get_or_insert(AdaptiveVariant::default());
        self.target_delay.get_or_insert(Duration(DEFAULT_TARGET_DELAY));
        if !adaptive || variant == AdaptiveVariant::Ns3 {
            self.interval.get_or_insert(Duration(DEFAULT_INTERVAL));
            self.alpha.get_or_insert(DEFAULT_ALPHA);
            self.beta.get_or_insert(DEFAULT_BETA);
            self.top.get_or_insert(DEFAULT_TOP);
            self.bottom.get_or_insert(Bottom::Auto);
            self.rtt.get_or_insert(Duration(DEFAULT_RTT));
        }
        if !adaptive || variant == AdaptiveVariant::Feng {
            self.feng_alpha.get_or_insert(DEFAULT_FENG_ALPHA);
            self.feng_beta.get_or_insert(DEFAULT_FENG_BETA);
        }
        self.wait.get_or_insert(self.variant == RedVariant::Ns2);
        let gentle = self.gentle == Some(true);
        self.ecn_gentle_mark.get_or_insert(self.ecn && gentle);
        if self.variant == RedVariant::Ns2 {
            self.mark_p.get_or_insert(NS2_MARK_P);
        }
        self
    }

    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Red> {
        let key = |k: &str| format!("{path}.{k}");
        if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&self.mean_packet_size.0) {
            return Err(crate::error::mean_packet_size_error(key("mean_packet_size"), self.mean_packet_size.0));
        }
        let mean = self.mean_packet_size.0 as f64;
        let drain_rate = link_rate_bps / (8.0 * mean);
        let adaptive = self.is_adaptive();
        let target_delay = self.target_delay.map_or(DEFAULT_TARGET_DELAY, |d| d.0);
        let (auto_min, _) = ared::auto_thresholds(drain_rate, target_delay);
        let (min_th, max_th, weight) = if adaptive {
            let min_th = self.min_th.unwrap_or(auto_min);
            // Floyd's max_th = 3·min_th, from the min_th in use (ns-3 sets both or neither).
            (min_th, self.max_th.unwrap_or(3.0 * min_th), self.weight.unwrap_or(ared::auto_weight(drain_rate)))
        } else {
            (self.min_th.unwrap_or(default_min_th()), self.max_th.unwrap_or(default_max_th()), self.weight.unwrap_or(default_weight()))
        };
        let gentle = self.gentle.unwrap_or(adaptive);
        check_thresholds(path, min_th, max_th)?;
        unit_interval(path, "max_p", self.max_p)?;
        unit_interval(path, "weight", weight)?;
        if self.variant == RedVariant::Altq && self.wait == Some(true) {
            return Err(ConfigError::new(
                key("wait"),
                "does not apply to variant \"altq\" (ALTQ's drop test has its own spacing); allowed with documented, ns2",
            ));
        }
        if self.ecn_forced_mark && !self.ecn {
            return Err(ConfigError::new(key("ecn_forced_mark"), "needs ecn = true"));
        }
        if self.ecn_gentle_mark == Some(true) && !(self.ecn && gentle) {
            return Err(ConfigError::new(key("ecn_gentle_mark"), "needs ecn = true and gentle = true"));
        }
        if let Some(mark_p) = self.mark_p {
            if self.variant != RedVariant::Ns2 {
                return Err(ConfigError::new(key("mark_p"), "applies to variant = \"ns2\" only (ns-2's mark_p_); allowed with ns2"));
            }
            if !(mark_p > 0.0 && mark_p.is_finite()) {
                return Err(ConfigError::new(key("mark_p"), format!("must be a positive number, got {mark_p}")));
            }
        }
        let adaptive_cfg = self.adaptive_config(path, min_th, max_th, link_rate_bps)?;
        let cfg = RedConfig {
            variant: self.variant,
            min_th,
            max_th,
            max_p: self.max_p,
            weight,
            wait: self.wait.unwrap_or(self.variant == RedVariant::Ns2),
            gentle,
            byte_mode: self.byte_mode,
            mean_packet_size: mean,
            drain_rate,
            protected_pkts: self.protected_pkts,
            nonlinear: self.nonlinear,
        };
        let ecn = EcnMarking {
            early: self.ecn,
            gentle: self.ecn && self.ecn_gentle_mark.unwrap_or(true),
            forced: self.ecn_forced_mark,
            mark_p: if self.variant == RedVariant::Ns2 { Some(self.mark_p.unwrap_or(NS2_MARK_P)) } else { None },
        };
        let mut red = Red::new(cfg, self.limit, ecn);
        if let Some(a) = adaptive_cfg {
            red.adaptive = Some(Adaptive::new(a, &mut red.cfg));
        }
        Ok(red)
    }

    /// The adaptation's settings, checked against the variant: `None` without `adaptive`.
    fn adaptive_config(&self, path: &str, min_th: f64, max_th: f64, link_rate_bps: f64) -> ConfigResult<Option<AdaptiveConfig>> {
        let key = |k: &str| format!("{path}.{k}");
        let given: [(&str, bool); 10] = [
            ("adaptive_variant", self.adaptive_variant.is_some()),
            ("interval", self.interval.is_some()),
            ("alpha", self.alpha.is_some()),
            ("beta", self.beta.is_some()),
            ("top", self.top.is_some()),
            ("bottom", self.bottom.is_some()),
            ("rtt", self.rtt.is_some()),
            ("target_delay", self.target_delay.is_some()),
            ("feng_alpha", self.feng_alpha.is_some()),
            ("feng_beta", self.feng_beta.is_some()),
        ];
        if !self.is_adaptive() {
            // The echo writes the defaults out (`filled`); anything else would be silently unused.
            let is_default: [(&str, bool); 10] = [
                ("adaptive_variant", self.adaptive_variant.is_none_or(|v| v == AdaptiveVariant::default())),
                ("interval", self.interval.is_none_or(|d| d.0 == DEFAULT_INTERVAL)),
                ("alpha", self.alpha.is_none_or(|v| v == DEFAULT_ALPHA)),
                ("beta", self.beta.is_none_or(|v| v == DEFAULT_BETA)),
                ("top", self.top.is_none_or(|v| v == DEFAULT_TOP)),
                ("bottom", self.bottom.is_none_or(|v| v == Bottom::Auto)),
                ("rtt", self.rtt.is_none_or(|d| d.0 == DEFAULT_RTT)),
                ("target_delay", self.target_delay.is_none_or(|d| d.0 == DEFAULT_TARGET_DELAY)),
                ("feng_alpha", self.feng_alpha.is_none_or(|v| v == DEFAULT_FENG_ALPHA)),
                ("feng_beta", self.feng_beta.is_none_or(|v| v == DEFAULT_FENG_BETA)),
            ];
            if let Some((k, _)) = is_default.iter().find(|(_, default)| !*default) {
                return Err(ConfigError::new(key(k), "needs adaptive = true (Adaptive RED); without it the adaptive keys keep their defaults"));
            }
            return Ok(None);
        }
        let variant = self.adaptive_variant.unwrap_or_default();
        let applies: &[&str] = match variant {
            AdaptiveVariant::Ns3 => &["interval", "alpha", "beta", "top", "bottom", "rtt"],
            AdaptiveVariant::Linux => &[],
            AdaptiveVariant::Feng => &["feng_alpha", "feng_beta"],
        };
        for (k, set) in &given[1..given.len()] {
            if *set && *k != "target_delay" && !applies.contains(k) {
                let allowed = match *k {
                    "feng_alpha" | "feng_beta" => "feng",
                    _ => "ns3",
                };
                let why = match variant {
                    AdaptiveVariant::Linux => " (Linux adapts every 500 ms with alpha 0.01, beta 0.9, max_p within 0.01 and 0.5, all fixed)",
                    _ => "",
                };
                let name = match variant {
                    AdaptiveVariant::Ns3 => "ns3",
                    AdaptiveVariant::Linux => "linux",
                    AdaptiveVariant::Feng => "feng",
                };
                return Err(ConfigError::new(key(k), format!("does not apply to adaptive_variant = \"{name}\"{why}; allowed with \"{allowed}\"")));
            }
        }
        let interval = self.interval.map_or(DEFAULT_INTERVAL, |d| d.0);
        if interval == Dur::ZERO {
            return Err(ConfigError::new(key("interval"), "must be a positive duration, got 0s"));
        }
        if let Some(d) = self.target_delay {
            if d.0 == Dur::ZERO {
                return Err(ConfigError::new(key("target_delay"), "must be a positive duration, got 0s"));
            }
        }
        let alpha = self.alpha.unwrap_or(DEFAULT_ALPHA);
        if !(alpha > 0.0 && alpha <= 1.0) {
            return Err(ConfigError::new(key("alpha"), format!("must be in (0, 1], got {alpha}")));
        }
        let beta = self.beta.unwrap_or(DEFAULT_BETA);
        if !(beta > 0.0 && beta < 1.0) {
            return Err(ConfigError::new(key("beta"), format!("must be in (0, 1) (exclusive), got {beta}")));
        }
        let top = self.top.unwrap_or(DEFAULT_TOP);
        unit_interval(path, "top", top)?;
        let bottom = match self.bottom {
            Some(Bottom::Value(b)) => b,
            _ if variant == AdaptiveVariant::Linux => 0.01,
            _ => ared::auto_bottom(self.mean_packet_size.0 as f64, link_rate_bps, self.rtt.map_or(DEFAULT_RTT, |d| d.0)),
        };
        if let Some(rtt) = self.rtt {
            if rtt.0 == Dur::ZERO {
                return Err(ConfigError::new(key("rtt"), "must be a positive duration, got 0s"));
            }
        }
        if !(bottom > 0.0 && bottom < top) {
            return Err(ConfigError::new(key("bottom"), format!("must be in (0, top) with top = {top}, got {bottom}")));
        }
        let feng_alpha = self.feng_alpha.unwrap_or(DEFAULT_FENG_ALPHA);
        let feng_beta = self.feng_beta.unwrap_or(DEFAULT_FENG_BETA);
        for (k, v) in [("feng_alpha", feng_alpha), ("feng_beta", feng_beta)] {
            if !(v.is_finite() && v > 1.0) {
                return Err(ConfigError::new(key(k), format!("must be a number greater than 1, got {v}")));
            }
        }
        let (target_low, target_high) = AdaptiveConfig::band(variant, min_th, max_th);
        let (interval, alpha, beta, top) = match variant {
            AdaptiveVariant::Linux => (ared::LINUX_INTERVAL, 0.01, 0.9, 0.5),
            _ => (interval, alpha, beta, top),
        };
        Ok(Some(AdaptiveConfig {
            variant,
            interval,
            alpha,
            beta,
            top,
            bottom,
            target_low,
            target_high,
            initial_max_p: self.max_p,
            feng_alpha,
            feng_beta,
        }))
    }
}

/// Which of RED's decisions on an ECN-capable packet become CE marks instead of drops.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EcnMarking {
    /// Early decisions below `max_th` (RFC 3168 §7).
    pub early: bool,
    /// Early decisions in the gentle region, `max_th ≤ avg < 2·max_th`.
    pub gentle: bool,
    /// Forced decisions (`avg` past the forced threshold).
    pub forced: bool,
    /// ns-2's `mark_p_`: an early decision marks only while the base probability is below it.
    pub mark_p: Option<f64>,
}

impl EcnMarking {
    /// No ECN: every decision is a drop.
    pub const OFF: EcnMarking = EcnMarking { early: false, gentle: false, forced: false, mark_p: None };
}

/// RED over a drop-tail buffer.
pub struct Red {
    cfg: RedConfig,
    state: RedState,
    limit: Limit,
    ecn: EcnMarking,
    fifo: Fifo,
    stats: QdiscStats,
    /// Adaptive RED's `max_p` adaptation, if on.
    adaptive: Option<Adaptive>,
}

impl Red {
    /// An empty RED queue.
    pub fn new(cfg: RedConfig, limit: Limit, ecn: EcnMarking) -> Red {
        Red { cfg, state: RedState::default(), limit, ecn, fifo: Fifo::new(limit), stats: QdiscStats::default(), adaptive: None }
    }

    /// The same queue without ns-2's `mark_p` bound (WHITE, whose RED marks every early decision
    /// below `max_th` whatever the per-packet probability).
    pub(super) fn without_mark_p(mut self) -> Red {
        self.ecn.mark_p = None;
        self
    }

    /// The validated settings.
    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// Adaptive RED's adaptation, if on.
    pub fn adaptive(&self) -> Option<&Adaptive> {
        self.adaptive.as_ref()
    }

    /// The settings, for disciplines that re-tune RED while it runs (FPQ). The state (average,
    /// count) carries over unchanged.
    pub fn config_mut(&mut self) -> &mut RedConfig {
        &mut self.cfg
    }

    fn fits(&self, pkt: &Packet) -> bool {
        self.fifo.admits(self.limit, pkt.size)
    }

    fn queued_units(&self) -> f64 {
        if self.cfg.byte_mode { self.fifo.bytes() as f64 / self.cfg.mean_packet_size } else { self.fifo.len() as f64 }
    }

    /// Whether an early decision on an ECN-capable packet marks, at the current average: the
    /// gentle ramp has its own switch; without `gentle`, an early decision at avg = max_th (the
    /// documented variant's closed upper end) is the linear region's. With `mark_p` (ns2) only
    /// while pb, red.cc's `v_prob1` under the `cfg` the decision used, is below it.
    fn marks_early(&self, cfg: &RedConfig) -> bool {
        let avg = self.state.average();
        let region = if self.cfg.gentle && avg >= self.cfg.max_th { self.ecn.gentle } else { self.ecn.early };
        region && self.ecn.mark_p.is_none_or(|mark_p| cfg.base_probability(avg) < mark_p)
    }

    fn drop(&mut self, kind: DropKind) -> Verdict {
        self.state.on_drop();
        self.stats.count_drop(kind);
        Verdict::Dropped(kind)
    }

    fn accept(&mut self, mut pkt: Packet, now: Time, mark: bool) -> Verdict {
        if mark {
            pkt.ecn = Ecn::Ce;
            self.state.on_drop(); // a mark restarts the spacing like a drop (ns-2, RFC 3168 §7)
            self.stats.marks += 1;
        }
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        if mark { Verdict::Marked } else { Verdict::Enqueued }
    }
}

impl Red {
    /// An arrival whose early-drop (or mark) probability is scaled by `scale` (WHITE).
    pub fn enqueue_scaled(&mut self, pkt: Packet, now: Time, rng: &mut Rng, scale: ProbabilityScale) -> Verdict {
        self.stats.arrivals += 1;
        let documented = self.cfg.variant == RedVariant::Documented;
        if let Some(a) = &mut self.adaptive {
            a.before_arrival(&mut self.cfg, &self.state, now);
        }
        self.state.sample(&self.cfg, self.queued_units(), pkt.size, now);
        let cfg = match &mut self.adaptive {
            None => self.cfg,
            Some(a) => {
                a.after_sample(&mut self.cfg, self.state.average(), now);
                a.decision_config(&self.cfg, self.state.average())
            }
        };
        if documented && !self.fits(&pkt) {
            return self.drop(DropKind::Overflow);
        }
        let decision = self.state.decide_scaled(&cfg, self.fifo.len(), pkt.size, rng, scale);
        let ect = pkt.ecn != Ecn::NotEct;
        let mark = match decision {
            RedDecision::Pass => false,
            RedDecision::Early if ect && self.marks_early(&cfg) => true,
            RedDecision::Forced if ect && self.ecn.forced => true,
            RedDecision::Early => return self.drop(DropKind::Early),
            RedDecision::Forced => return self.drop(DropKind::Forced),
        };
        if !self.fits(&pkt) {
            return self.drop(DropKind::Overflow);
        }
        self.accept(pkt, now, mark)
    }
}

/// The `Qdisc` methods of a discipline that wraps a [`Red`] in `self.red` and changes only its
/// arrivals (FPQ re-tunes it, WHITE scales its probability): everything else is RED's.
macro_rules! delegate_to_red {
    () => {
        fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
            self.red.dequeue(now, drops)
        }
        fn peek(&self) -> Option<&Packet> {
            self.red.peek()
        }
        fn len_packets(&self) -> usize {
            self.red.len_packets()
        }
        fn len_bytes(&self) -> u64 {
            self.red.len_bytes()
        }
        fn stats(&self) -> &QdiscStats {
            self.red.stats()
        }
        fn average(&self) -> Option<f64> {
            self.red.average()
        }
    };
}
pub(crate) use delegate_to_red;

impl Qdisc for Red {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.enqueue_scaled(pkt, now, rng, ProbabilityScale::NONE)
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let Some(pkt) = self.fifo.pop() else {
            self.state.on_empty_dequeue(&self.cfg, now);
            return None;
        };
        self.stats.dequeues += 1;
        if self.fifo.is_empty() {
            self.state.on_departure_empty(&self.cfg, now);
        }
        Some(pkt)
    }

    super::fifo::fifo_accessors!();
    fn average(&self) -> Option<f64> {
        Some(self.state.average())
    }
    fn adaptive_red(&self) -> Option<AdaptiveRedView> {
        self.adaptive.as_ref().map(|a| AdaptiveRedView {
            max_p: self.cfg.max_p,
            min_th: self.cfg.min_th,
            max_th: self.cfg.max_th,
            weight: self.cfg.weight,
            target_low: a.cfg.target_low,
            target_high: a.cfg.target_high,
        })
    }
    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        match &self.adaptive {
            Some(a) => vec![("max_p_increases", a.state.increases), ("max_p_decreases", a.state.decreases)],
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    fn params(toml_text: &str) -> RedParams {
        toml::from_str(toml_text).unwrap()
    }

    fn red(toml_text: &str) -> Red {
        params(toml_text).validate("queue", 10e6).unwrap()
    }

    fn pkt(size: u32, ecn: Ecn) -> Packet {
        Packet { size, ecn, ..Packet::new(PacketKind::TcpData, 0) }
    }

    fn error(toml_text: &str) -> String {
        params(toml_text).validate("queue", 10e6).err().unwrap().to_string()
    }

    #[test]
    fn rejects_impossible_parameters_naming_the_key() {
        assert!(error("min_th = 20\nmax_th = 10").contains("queue.min_th"));
        assert!(error("max_p = 1.5").contains("queue.max_p") && error("max_p = 1.5").contains("(0, 1]"));
        assert!(error("max_p = 0").contains("queue.max_p"));
        assert!(error("weight = 0").contains("queue.weight"));
        assert!(error("weight = 2").contains("(0, 1]"));
        assert!(error("min_th = -1").contains("queue.min_th"));
        assert!(error("variant = \"altq\"\nwait = true").contains("queue.wait"));
        assert!(error("ecn_forced_mark = true").contains("queue.ecn_forced_mark"));
        assert!(error("mean_packet_size = \"0B\"").contains("queue.mean_packet_size"));
        // Equal thresholds are allowed (a step, as CBT's deterministic classes use).
        assert!(params("min_th = 10\nmax_th = 10").validate("queue", 10e6).is_ok());
    }

    #[test]
    fn linux_and_ns2_spellings_are_aliases() {
        let p = params("min = 3\nmax = 9\nprobability = 0.2\navpkt = \"1500B\"\nq_weight_ = 0.01");
        assert_eq!((p.min_th, p.max_th, p.max_p, p.weight, p.mean_packet_size.0), (Some(3.0), Some(9.0), 0.2, Some(0.01), 1500));
    }

    /// Fills the queue to `n` packets with a weight of 1, so the average equals the queue.
    fn steady(q: &mut Red, n: usize, rng: &mut Rng, drops: &mut DropBuf) {
        for _ in 0..n {
            q.enqueue(pkt(1000, Ecn::NotEct), Time(0), rng, drops);
        }
    }

    #[test]
    fn overflow_at_the_limit_and_counters_balance() {
        let mut q = red("limit = 3\nmin_th = 50\nmax_th = 60");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        steady(&mut q, 5, &mut rng, &mut drops);
        let s = *q.stats();
        assert_eq!((s.arrivals, s.enqueues, s.drops_overflow), (5, 3, 2));
        assert!(q.dequeue(Time(1), &mut drops).is_some());
        let s = *q.stats();
        assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64);
        assert_eq!(q.len_bytes(), 2000);
    }

    #[test]
    fn forced_drop_once_the_average_exceeds_max_th() {
        // Weight 1: the average is the queue found by the arrival. max_p is tiny, so early drops
        // are rare and the queue climbs until the average passes max_th (strictly, documented).
        let mut q = red("limit = 100\nmin_th = 2\nmax_th = 5\nweight = 1.0\nmax_p = 0.001");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        steady(&mut q, 40, &mut rng, &mut drops);
        let s = *q.stats();
        assert_eq!(q.len_packets(), 6);
        assert_eq!(s.drops_forced + s.drops_early, 34);
        assert!(s.drops_forced >= 33, "{s:?}");
    }

    #[test]
    fn ecn_capable_packets_are_marked_not_dropped() {
        let mut q = red("limit = 100\nmin_th = 2\nmax_th = 50\nweight = 1.0\nmax_p = 1.0\necn = true");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut marked = 0;
        for _ in 0..30 {
            if q.enqueue(pkt(1000, Ecn::Ect), Time(0), &mut rng, &mut drops) == Verdict::Marked {
                marked += 1;
            }
        }
        assert!(marked > 0);
        assert_eq!(q.stats().drops(), 0);
        assert_eq!(q.stats().marks, marked);
        assert_eq!(q.fifo.iter().filter(|p| p.ecn == Ecn::Ce).count() as u64, marked);
        // Not-ECT packets in the same state are dropped.
        let before = q.stats().drops_early;
        for _ in 0..30 {
            q.enqueue(pkt(1000, Ecn::NotEct), Time(0), &mut rng, &mut drops);
        }
        assert!(q.stats().drops_early > before);
    }

    /// Marks and early drops of ECN-capable arrivals with the average held in the gentle region
    /// (weight 1, 7 packets queued: max_th 5 ≤ avg < 10).
    fn gentle_region_outcomes(toml_text: &str) -> (u64, u64) {
        let mut q = red(toml_text);
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..7 {
            q.fifo.push(pkt(1000, Ecn::Ect), Time(0));
        }
        for i in 0..200 {
            if !matches!(q.enqueue(pkt(1000, Ecn::Ect), Time(0), &mut rng, &mut drops), Verdict::Dropped(_)) {
                q.fifo.pop(); // keep the queue at 7
            }
            // ns-2 takes no sample on the first arrival after idle (red_core's resolution 2).
            assert!(i == 0 || q.average() == Some(7.0), "{:?}", q.average());
        }
        (q.stats().marks, q.stats().drops_early)
    }

    #[test]
    fn ns2_drops_ecn_capable_packets_in_the_gentle_region_others_mark() {
        let base = "limit = 100\nmin_th = 2\nmax_th = 5\nweight = 1.0\ngentle = true\necn = true\nprotected_pkts = 0";
        let (marks, early) = gentle_region_outcomes(&format!("{base}\nvariant = \"ns2\""));
        assert_eq!(marks, 0, "ns-2 red.cc marks only while pb < mark_p_ (0.1 = max_p: below th_max)");
        assert!(early > 20, "{early}");
        // The ramp's pb is at least max_p = mark_p = 0.1 there; a mark_p above 1 marks it.
        let (marks, early) = gentle_region_outcomes(&format!("{base}\nvariant = \"ns2\"\nmark_p = 2.0"));
        assert_eq!(early, 0);
        assert!(marks > 20, "{marks}");
        let (marks, early) = gentle_region_outcomes(&format!("{base}\nvariant = \"documented\""));
        assert_eq!(early, 0);
        assert!(marks > 20, "{marks}");
        assert!(error("ecn_gentle_mark = true\necn = true").contains("queue.ecn_gentle_mark"));
        let echo = |text: &str| params(&format!("ecn = true\ngentle = true\n{text}")).filled().ecn_gentle_mark;
        assert_eq!((echo("variant = \"ns2\""), echo("")), (Some(true), Some(true)), "under ns2 mark_p decides");
        assert_eq!(params("").filled().ecn_gentle_mark, Some(false), "echoed as it applies: no ECN, no marks");
    }

    /// Early decisions on ECN-capable arrivals with the average held at `avg` (weight 1): (marks, early drops).
    fn outcomes_at(toml_text: &str, avg: usize) -> (u64, u64) {
        let mut q = red(toml_text);
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..avg {
            q.fifo.push(pkt(1000, Ecn::Ect), Time(0));
        }
        for _ in 0..400 {
            if !matches!(q.enqueue(pkt(1000, Ecn::Ect), Time(0), &mut rng, &mut drops), Verdict::Dropped(_)) {
                q.fifo.pop();
            }
        }
        (q.stats().marks, q.stats().drops_early)
    }

    #[test]
    fn ns2_marks_only_while_the_base_probability_is_below_mark_p() {
        // min_th 2, max_th 12, max_p 0.2, not gentle: pb = 0.02·(avg − 2). red.cc drop_early marks
        // while pb < mark_p_ (0.1): at avg 6 (pb 0.08) it marks, at avg 8 (pb 0.12) it drops, both
        // below max_th, where aqmlab used to switch.
        let base = "limit = 100\nmin_th = 2\nmax_th = 12\nmax_p = 0.2\nweight = 1.0\necn = true\nprotected_pkts = 0\nvariant = \"ns2\"";
        let (marks, early) = outcomes_at(base, 6);
        assert_eq!(early, 0);
        assert!(marks > 20, "{marks}");
        let (marks, early) = outcomes_at(base, 8);
        assert_eq!(marks, 0, "pb 0.12 ≥ mark_p 0.1: ns-2 drops the ECN-capable packet");
        assert!(early > 20, "{early}");
        let (marks, early) = outcomes_at(&format!("{base}\nmark_p = 0.15"), 8);
        assert_eq!(early, 0);
        assert!(marks > 20, "{marks}");
        // Gentle with max_p 0.05: the ramp starts below mark_p, so ns-2 marks there too.
        let gentle = "limit = 100\nmin_th = 2\nmax_th = 5\nmax_p = 0.05\nweight = 1.0\ngentle = true\necn = true\nprotected_pkts = 0\nvariant = \"ns2\"";
        let (marks, early) = outcomes_at(gentle, 5);
        assert_eq!(early, 0, "pb 0.05 at max_th is below mark_p");
        assert!(marks > 5, "{marks}");
        assert_eq!(params("variant = \"ns2\"").filled().mark_p, Some(0.1), "ns-default.tcl mark_p_");
        assert_eq!(params("").filled().mark_p, None, "not a key of the other variants");
        assert!(error("mark_p = 0.2\necn = true").contains("queue.mark_p"));
        assert!(error("mark_p = 0\nvariant = \"ns2\"").contains("queue.mark_p"));
    }

    #[test]
    fn idle_link_decays_the_average() {
        let mut q = red("limit = 100\nvariant = \"ns2\"\nweight = 0.5\nmean_packet_size = \"1250B\"");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        steady(&mut q, 8, &mut rng, &mut drops);
        let before = q.average().unwrap();
        while q.dequeue(Time(0), &mut drops).is_some() {}
        assert!(q.dequeue(Time(0), &mut drops).is_none()); // the link finds it empty: idle from t = 0
        // 10 ms idle at 1000 packets/s = 10 missed samples, then the arrival's own: (1/2)^11.
        q.enqueue(pkt(1000, Ecn::NotEct), Time(10_000_000), &mut rng, &mut drops);
        assert!((q.average().unwrap() - before * 0.5f64.powi(11)).abs() < 1e-12);
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let mut q = red("limit = \"2500B\"\nmin_th = 50\nmax_th = 60");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        steady(&mut q, 3, &mut rng, &mut drops);
        assert_eq!((q.len_packets(), q.stats().drops_overflow), (2, 1));
    }
}
