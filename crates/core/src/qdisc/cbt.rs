//! Class-Based Thresholds (Parris 2001, UNC PhD, Ch. IV; spec `seed000-cbt-algorithms.md` §2.7,
//! with §2.0, §2.2 and the errata register §6; experiment values `seed000-cbt-evaluation.md` §4.5).
//!
//! All packets share one FIFO. Each arrival is classified ([`super::cbt_classifier`]) into one of
//! N configured classes, and each class runs its own RED state machine — one [`RedConfig`] and one
//! [`RedState`] from [`super::red_core`] per class — on its **own** average occupancy: the average
//! is sampled only on that class's arrivals (dropped ones included), before the enqueue, from the
//! class's own queued packets, with the class's own weight, thresholds, `max_p` and drain rate for
//! the idle decay. Setting `min_th = max_th` makes a class deterministic (enqueue or forced drop,
//! Fig. 4.3: with equal thresholds the early-drop branch is unreachable); the dissertation does this
//! for the *multimedia* and *other* classes and runs full RED only for *TCP*. A shared `limit` on
//! the whole queue (Fig. 4.2's "aggregate" pseudo-class, of which only `q_len` is ever used) drops
//! when the buffer is full.
//!
//! Arrival (Fig. 4.3, authoritative):
//! ```text
//! c = classify(P); count_c += 1; compute_avg(c)            // Fig. 4.6, own class only
//! if q_len_total >= limit:                     overflow drop
//! elif q_len_c > protected_pkts and avg_c > ThMin_c:
//!     if avg_c > ThMax_c:                      forced drop
//!     elif not in_early_drop_c:                count_c = 1, in_early_drop_c = true, enqueue
//!     elif drop_early(c):                      early drop      // Fig. 4.5, per-class count_c
//! else: in_early_drop_c = false
//! enqueue, or discard and count_c = 0
//! ```
//! Departure (Fig. 4.4): the head of the FIFO leaves; when it was its class's last queued packet,
//! the class starts idling (`idle_c = true`, `last_c = now`). Departures never move an average.
//!
//! # Parameters (`[queue]` with `kind = "cbt"`)
//!
//! | key | unit | default | meaning |
//! |---|---|---|---|
//! | `limit` | packets, bytes (`"300KB"`) or `"none"` | 240 (Table 5.1) | shared limit on the whole queue |
//! | `classes` | list of tables | the dissertation's three classes, below | classes in classifier order |
//! | `variant` | `documented` \| `altq` \| `ns2` | `documented` | RED formulas, as for `red` (see below) |
//! | `wait` | bool | true for `ns2`, else false | ns-2's `wait_` (not with `altq`) |
//! | `byte_mode` | bool | false | averages, thresholds and `count` in bytes ÷ the class's `mean_packet_size` |
//! | `protected_pkts` | packets | 1 | no drop on the average while the class has at most this many queued (Fig. 4.3 `q_len_c > 1`) |
//! | `idle_rule` | `empty` \| `flag` | `empty` | which arrivals take the idle decay (erratum 5, below) |
//! | `sampling` | `own` \| `all` | `own` | `all` = the "synchronized averages" alternative of §VI.5.1.1 |
//!
//! Per class (`classes = [{ ... }, ...]` or `[[queue.classes]]`):
//!
//! | key | unit | default | meaning |
//! |---|---|---|---|
//! | `name` | string | required | unique, non-empty; names the class in `class_stats()` |
//! | `match` | `tcp` \| `tcp-data` \| `tcp-ack` \| `udp` \| `any` | `any` | packet kinds accepted (`tcp` = data and ACKs) |
//! | `tags` | list of 0–255 | absent = every tag | `class` tags of `[[flows]]` accepted |
//! | `max_th` | packets (mean-size packets in byte mode), real | required | `ThMax_c`, > 0 |
//! | `min_th` | same | `= max_th` (deterministic class) | `ThMin_c`, 0 ≤ `min_th` ≤ `max_th` |
//! | `max_p` | probability | 0.1 (Table B.13) | early-drop probability at `max_th`, in (0, 1]; unused when `min_th = max_th` |
//! | `weight` | — | 1/256 (Table B.13, TCP) | EWMA weight `w_c`, in (0, 1] |
//! | `mean_packet_size` | bytes | 1000B | `P_c`: unit of the byte-mode average and of the drain rate |
//! | `allocation` | rate (`"915KiB/s"`) | — | `B_c`; sets `drain_rate = allocation / mean_packet_size` |
//! | `drain_rate` | mean-size packets per second | link rate ÷ `mean_packet_size` | idle-decay rate; not together with `allocation` |
//! | `protected_pkts` | packets | the global value | per-class override of the exemption |
//!
//! Default classes: Table 5.3 (L = 30 ms, the Ch. V comparison), HTTP-Proshare row, with Table
//! B.13's weights and the measured packet sizes of Table B.19; the derived drain rates B_c/P_c are
//! 883.1 / 222.0 / 142.9 packets/s (spec §2.7.2):
//! ```toml
//! [queue]
//! kind = "cbt"
//! limit = 240
//!
//! [[queue.classes]]
//! name = "tcp"
//! match = "tcp"
//! min_th = 5
//! max_th = 26.50
//! max_p = 0.1
//! weight = 0.00390625          # 1/256
//! mean_packet_size = "1061B"
//! allocation = "915KiB/s"
//!
//! [[queue.classes]]
//! name = "multimedia"
//! match = "udp"
//! tags = [1]                   # the multimedia [[flows]] groups say class = 1
//! max_th = 6.66                # min_th defaults to max_th: deterministic
//! weight = 0.0625              # 1/16
//! mean_packet_size = "738B"
//! allocation = "160KiB/s"
//!
//! [[queue.classes]]
//! name = "other"
//! match = "any"                # catch-all, must come last
//! max_th = 4.29
//! weight = 0.25
//! mean_packet_size = "1075B"
//! allocation = "150KiB/s"
//! ```
//! (TOML 1.0 inline tables must fit on one line: `classes = [{ name = "tcp", max_th = 26.5 }, …]`
//! works for short class lists.)
//! The dissertation's classifier (Ch. VI §5.3: TCP; UDP to ports 6000–6010 = multimedia; the rest =
//! *other*) becomes: give the multimedia flows `class = 1` in their `[[flows]]` group. KB in the
//! dissertation's allocations is 1024 bytes, hence the `KiB/s` rate unit.
//!
//! # Documented choices (errata and ambiguities, spec §2.7.8, §2.7.9, §6)
//!
//! 1. **Fig. 4.1** reverses the forced-drop test and never enqueues a packet that passes the early
//!    test (errata #1): Fig. 4.3 is implemented. Its unbalanced brace (#2) is read so that the
//!    `else { in_early_drop = false }` belongs to the `if full / else if (q_len_c > 1 && avg > ThMin)`
//!    chain, as in RED's Fig. 3.8 (and [`RedState::decide`]).
//! 2. **`q_len_c > 1` vs "any class is allowed 1 packet"** (#2): the code's `> 1` is the default,
//!    as the parameter `protected_pkts = 1` (global, overridable per class); `protected_pkts = 0`
//!    gives the prose's `q_len_c >= 1`. Under the default a class can always get a second packet in.
//! 3. **Fig. 4.5's `count`** means `count_c` (#3): each class owns its count (its own [`RedState`]).
//! 4. **`pa` when `count·pb ≥ 1`** (#4): drop (the `documented` variant of `red_core`).
//! 5. **Idle decay** (#5): `n = max(0, trunc(Δt·drain_rate_c − 1))`, never negative. Fig. 4.6 keys the
//!    decay on `q_len_c == 0`, so an arrival that finds its class empty and is then dropped (only a
//!    full shared buffer can drop it) would make the next arrival decay again from the same `last_c`.
//!    `idle_rule = "empty"` (default) is the spec's resolution: every arrival that finds its class
//!    empty decays, from the later of the class's last departure and its last arrival (`last_c =
//!    now` in the decay branch). `idle_rule = "flag"` keys the decay on the idle flag as ALTQ does:
//!    only the first arrival after the class emptied decays; later ones take an ordinary zero sample.
//! 6. **Documented vs ALTQ RED** (#8): `variant` as for `red` — `documented` (default, Figs. 4.3–4.6:
//!    strict `>`, `pa = pb/(1 − count·pb)`, no sample after the decay), `altq` (`≥`, `pb/(2 − count·pb)`,
//!    decay then a zero sample, average forgotten after 60 s idle), `ns2`. The order of the tests also
//!    follows `red`: `documented` checks the shared limit first (Fig. 4.3); `altq`/`ns2` run the
//!    class's RED test first and apply the limit to what it let through (spec §2.2 note 4). With
//!    every variant a class starts idling at the departure that empties it (Fig. 4.4); ALTQ's RED
//!    starts idling when the link finds the whole queue empty, an event that has no per-class meaning.
//! 7. **Initial state** (unspecified): `idle_c = true`, `last_c = 0`, `avg_c = 0`, `count_c = −1`.
//! 8. **Drain rate** (L1855, L2043: "allocation divided by the class's average packet size", no
//!    numbers): `allocation / mean_packet_size`, or an explicit `drain_rate`, else the whole link's
//!    rate in `mean_packet_size` packets (RED's default).
//! 9. **Byte mode** (§VI.5.1.1, recommended, not implemented in the dissertation): `byte_mode = true`
//!    counts each class's queue in bytes ÷ its `mean_packet_size`, so `max_th` is the byte threshold
//!    `B_c·L` divided by `mean_packet_size` (the packet-mode formula Th_c = B_c·L/P_c reads the same).
//!    As in `red`'s byte mode, `count` advances by size ÷ mean size and the early-drop probability
//!    is scaled by it (Floyd's byte mode; Parris does not say). The exemption still counts packets.
//! 10. **Synchronized averages** (§VI.5.1.1, rejected by the author): `sampling = "all"` updates
//!     every class's average on every arrival (each from its own queue; only the arriving class's
//!     `count` moves and only it is tested). After the first decay an empty class takes zero samples.
//! 11. **Drop kinds** (§2.0, "FORCED_DROP" covers both): a full shared buffer is
//!     [`DropKind::Overflow`], an average above `ThMax_c` is [`DropKind::Forced`], a probabilistic drop
//!     is [`DropKind::Early`]; all reset `count_c` (Fig. 4.3). Counted per class in packets and bytes.
//! 12. **Not modelled**: Gentle RED and ECN (all of the dissertation's algorithms are evaluated
//!     drop-only), Dynamic-CBT (only cited, Chung 2000; not specifiable from the source), the
//!     allocation-to-threshold configurator (eq. 4.1) — thresholds are given directly.
//! 13. [`Qdisc::average`] is `None`: CBT keeps no aggregate average (Fig. 4.2); the per-class averages
//!     are in [`Qdisc::class_stats`].
//! 14. **Configuration data** (register #12–#15): thresholds are real-valued and compared with the
//!     real-valued average (4.29 is not rounded); the default classes use the *measured* per-mix packet
//!     sizes of App. B (#13), not Table 4.1's nominal ones; KB = 1024 B (`KiB/s`); C = 1225 KiB/s only
//!     enters eq. 4.1, which the defaults satisfy: Σ Th·P / C = 30 ms (tested). §3.2.2's "enqueue or
//!     dequeue" means enqueue or drop, as implemented.

use serde::{Deserialize, Serialize};

use super::cbt_classifier::{Classifier, Protocol, Rule};
use super::fifo::Fifo;
use super::red_core::{RedConfig, RedDecision, RedState, RedVariant};
use super::{ClassStats, DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::Packet;
use crate::scenario::units::{Bytes, Limit, Rate};

/// Which arrivals to an empty class take the idle decay (choice 5 of the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IdleRule {
    /// Every arrival that finds its class empty (Fig. 4.6 keyed on `q_len_c == 0`, `last_c = now`).
    #[default]
    Empty,
    /// Only the first arrival after the class emptied (ALTQ's idle flag).
    Flag,
}

/// Whose arrivals update a class's average (choice 10 of the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sampling {
    /// Only the class's own arrivals (the dissertation's CBT).
    #[default]
    Own,
    /// Every arrival ("synchronized averages", §VI.5.1.1).
    All,
}

/// One class of `kind = "cbt"` (see the module docs for units and defaults).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbtClassParams {
    /// Unique class name.
    pub name: String,
    /// Packet kinds the class accepts.
    #[serde(rename = "match", default)]
    pub protocol: Protocol,
    /// `class` tags the class accepts; `None` = every tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<u8>>,
    /// Minimum threshold; `None` = `max_th` (deterministic class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    /// Maximum threshold (packets, or mean-size packets in byte mode).
    pub max_th: f64,
    /// Early-drop probability at `max_th`, in (0, 1].
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// EWMA weight, in (0, 1].
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Mean packet size of the class, bytes.
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    /// Bandwidth allocation `B_c`; gives the drain rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allocation: Option<Rate>,
    /// Idle-decay rate, mean-size packets per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drain_rate: Option<f64>,
    /// Per-class override of the global `protected_pkts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protected_pkts: Option<u32>,
}

/// Scenario keys of `kind = "cbt"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CbtParams {
    /// Shared limit on the whole queue.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// The classes, in classifier order (first match wins).
    #[serde(default = "default_classes")]
    pub classes: Vec<CbtClassParams>,
    /// RED formulas of every class.
    #[serde(default)]
    pub variant: RedVariant,
    /// ns-2's `wait_`. Default: true for `ns2`, false otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Averages and thresholds in bytes ÷ the class's mean packet size.
    #[serde(default)]
    pub byte_mode: bool,
    /// No drop on the average while the class has at most this many packets queued.
    #[serde(default = "default_protected_pkts")]
    pub protected_pkts: u32,
    /// Which arrivals to an empty class decay the average.
    #[serde(default)]
    pub idle_rule: IdleRule,
    /// Whose arrivals update a class's average.
    #[serde(default)]
    pub sampling: Sampling,
}

fn default_limit() -> Limit {
    Limit::Packets(240)
}
fn default_max_p() -> f64 {
    0.1
}
fn default_weight() -> f64 {
    1.0 / 256.0
}
fn default_mean_packet_size() -> Bytes {
    Bytes(1000)
}
fn default_protected_pkts() -> u32 {
    1
}

/// KiB/s in bits per second (the dissertation's KB = 1024 B).
const KIB_PER_S: f64 = 8.0 * 1024.0;

fn default_class(name: &str, protocol: Protocol, tags: Option<Vec<u8>>, th: (f64, f64), weight: f64, size: u64, kib_s: f64) -> CbtClassParams {
    CbtClassParams {
        name: name.to_string(),
        protocol,
        tags,
        min_th: Some(th.0),
        max_th: th.1,
        max_p: default_max_p(),
        weight,
        mean_packet_size: Bytes(size),
        allocation: Some(Rate(kib_s * KIB_PER_S)),
        drain_rate: None,
        protected_pkts: None,
    }
}

/// Table 5.3 (L = 30 ms), HTTP-Proshare, with Table B.13's weights and Table B.19's sizes.
fn default_classes() -> Vec<CbtClassParams> {
    vec![
        default_class("tcp", Protocol::Tcp, None, (5.0, 26.50), 1.0 / 256.0, 1061, 915.0),
        default_class("multimedia", Protocol::Udp, Some(vec![1]), (6.66, 6.66), 1.0 / 16.0, 738, 160.0),
        default_class("other", Protocol::Any, None, (4.29, 4.29), 1.0 / 4.0, 1075, 150.0),
    ]
}

impl Default for CbtParams {
    fn default() -> Self {
        CbtParams {
            limit: default_limit(),
            classes: default_classes(),
            variant: RedVariant::default(),
            wait: None,
            byte_mode: false,
            protected_pkts: default_protected_pkts(),
            idle_rule: IdleRule::default(),
            sampling: Sampling::default(),
        }
    }
}

impl CbtParams {
    /// The parameters with implied values written out (`min_th` of deterministic classes, the
    /// variant's `wait`), for the scenario echo.
    pub fn filled(mut self) -> CbtParams {
        self.wait.get_or_insert(self.variant == RedVariant::Ns2);
        for c in &mut self.classes {
            c.min_th.get_or_insert(c.max_th);
        }
        self
    }

    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Cbt> {
        let classes_path = format!("{path}.classes");
        if self.classes.is_empty() {
            return Err(ConfigError::new(&classes_path, "at least one class is required"));
        }
        if self.variant == RedVariant::Altq && self.wait == Some(true) {
            return Err(ConfigError::new(
                format!("{path}.wait"),
                "does not apply to variant \"altq\" (ALTQ's drop test has its own spacing); allowed with documented, ns2",
            ));
        }
        let wait = self.wait.unwrap_or(self.variant == RedVariant::Ns2);
        let mut classes = Vec::with_capacity(self.classes.len());
        for (i, c) in self.classes.iter().enumerate() {
            let cpath = format!("{classes_path}[{i}]");
            let key = |k: &str| format!("{cpath}.{k}");
            if c.name.trim().is_empty() {
                return Err(ConfigError::new(key("name"), "must not be empty"));
            }
            if let Some(j) = self.classes[..i].iter().position(|o| o.name == c.name) {
                return Err(ConfigError::new(key("name"), format!("\"{}\" is already the name of {classes_path}[{j}]; names must be unique", c.name)));
            }
            if !(c.max_th.is_finite() && c.max_th > 0.0) {
                return Err(ConfigError::new(key("max_th"), format!("must be a positive number, got {}", c.max_th)));
            }
            let min_th = c.min_th.unwrap_or(c.max_th);
            if !(min_th.is_finite() && min_th >= 0.0) {
                return Err(ConfigError::new(key("min_th"), format!("must be a non-negative number, got {min_th}")));
            }
            if min_th > c.max_th {
                return Err(ConfigError::new(
                    key("min_th"),
                    format!("must not exceed max_th: min_th = {min_th}, max_th = {} (equal thresholds make a deterministic class)", c.max_th),
                ));
            }
            for (k, v) in [("max_p", c.max_p), ("weight", c.weight)] {
                if !(v > 0.0 && v <= 1.0) {
                    return Err(ConfigError::new(key(k), format!("must be in (0, 1], got {v}")));
                }
            }
            if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&c.mean_packet_size.0) {
                return Err(crate::error::mean_packet_size_error(key("mean_packet_size"), c.mean_packet_size.0));
            }
            let mean = c.mean_packet_size.0 as f64;
            let drain_rate = match (c.allocation, c.drain_rate) {
                (Some(_), Some(_)) => {
                    return Err(ConfigError::new(
                        key("drain_rate"),
                        "give either allocation (drain_rate = allocation / mean_packet_size) or drain_rate, not both",
                    ))
                }
                (None, Some(r)) if !(r.is_finite() && r > 0.0) => {
                    return Err(ConfigError::new(key("drain_rate"), format!("must be a positive number of packets per second, got {r}")))
                }
                (None, Some(r)) => r,
                (Some(Rate(bps)), None) => bps / (8.0 * mean),
                (None, None) => link_rate_bps / (8.0 * mean),
            };
            let cfg = RedConfig {
                variant: self.variant,
                min_th,
                max_th: c.max_th,
                max_p: c.max_p,
                weight: c.weight,
                wait,
                gentle: false,
                byte_mode: self.byte_mode,
                mean_packet_size: mean,
                drain_rate,
                protected_pkts: c.protected_pkts.unwrap_or(self.protected_pkts),
                nonlinear: false,
            };
            classes.push(Class {
                name: c.name.clone(),
                cfg,
                state: RedState::default(),
                pkts: 0,
                bytes: 0,
                stats: QdiscStats::default(),
                byte_stats: QdiscStats::default(),
            });
        }
        let rules: Vec<Rule<'_>> =
            self.classes.iter().map(|c| Rule { protocol: c.protocol, tags: c.tags.as_deref() }).collect();
        let classifier = Classifier::new(&rules, &classes_path)?;
        Ok(Cbt {
            classes,
            classifier,
            limit: self.limit,
            limit_first: self.variant == RedVariant::Documented,
            idle_rule: self.idle_rule,
            sampling: self.sampling,
            fifo: Fifo::new(self.limit),
            stats: QdiscStats::default(),
        })
    }
}

/// One class: settings, RED state, occupancy and counters.
#[derive(Clone, Debug)]
struct Class {
    name: String,
    cfg: RedConfig,
    state: RedState,
    /// `q_len_c`: packets of the class queued.
    pkts: usize,
    /// Bytes of the class queued.
    bytes: u64,
    stats: QdiscStats,
    /// The same counters in bytes.
    byte_stats: QdiscStats,
}

impl Class {
    /// The occupancy the average samples: packets, or bytes ÷ mean size in byte mode.
    fn queued_units(&self) -> f64 {
        if self.cfg.byte_mode { self.bytes as f64 / self.cfg.mean_packet_size } else { self.pkts as f64 }
    }

    /// The class has nothing queued from `now` on: its idle clock starts (Fig. 4.4). One of the
    /// two calls applies, depending on the variant; for CBT both mean "the class emptied".
    fn start_idle(&mut self, now: Time) {
        self.state.on_departure_empty(&self.cfg, now);
        self.state.on_empty_dequeue(&self.cfg, now);
    }
}

/// Class-Based Thresholds over one shared FIFO.
pub struct Cbt {
    classes: Vec<Class>,
    classifier: Classifier,
    limit: Limit,
    /// Check the shared limit before the class's RED test (documented variant, Fig. 4.3).
    limit_first: bool,
    idle_rule: IdleRule,
    sampling: Sampling,
    fifo: Fifo,
    stats: QdiscStats,
}

impl Cbt {
    /// Index of the class named `name`.
    pub fn class_index(&self, name: &str) -> Option<usize> {
        self.classes.iter().position(|c| c.name == name)
    }

    /// The class a packet would be assigned to.
    pub fn classify(&self, pkt: &Packet) -> &str {
        &self.classes[self.classifier.classify(pkt)].name
    }

    /// The current average of class `name`.
    pub fn class_average(&self, name: &str) -> Option<f64> {
        self.class_index(name).map(|i| self.classes[i].state.average())
    }

    /// The validated RED settings of class `name`.
    pub fn class_config(&self, name: &str) -> Option<&RedConfig> {
        self.class_index(name).map(|i| &self.classes[i].cfg)
    }

    fn drop(&mut self, c: usize, kind: DropKind, size: u64, now: Time) -> Verdict {
        self.stats.count_drop(kind);
        let cls = &mut self.classes[c];
        cls.stats.count_drop(kind);
        match kind {
            DropKind::Early => cls.byte_stats.drops_early += size,
            DropKind::Forced => cls.byte_stats.drops_forced += size,
            DropKind::Overflow => cls.byte_stats.drops_overflow += size,
        }
        cls.state.on_drop();
        if self.idle_rule == IdleRule::Empty && cls.pkts == 0 {
            // Fig. 4.6 with `last_c = now`: the class is still empty, so its next arrival decays
            // again, over the time since this one.
            cls.start_idle(now);
        }
        Verdict::Dropped(kind)
    }
}

impl Qdisc for Cbt {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        let c = self.classifier.classify(&pkt);
        let size = pkt.size as u64;
        self.stats.arrivals += 1;
        {
            let cls = &mut self.classes[c];
            cls.stats.arrivals += 1;
            cls.byte_stats.arrivals += size;
            let units = cls.queued_units();
            cls.state.sample(&cls.cfg, units, pkt.size, now);
        }
        if self.sampling == Sampling::All {
            for (d, other) in self.classes.iter_mut().enumerate() {
                if d != c {
                    let units = other.queued_units();
                    other.state.update_average(&other.cfg, units, now);
                }
            }
        }
        let full = !self.fifo.admits(self.limit, pkt.size);
        if full && self.limit_first {
            return self.drop(c, DropKind::Overflow, size, now);
        }
        let decision = {
            let cls = &mut self.classes[c];
            cls.state.decide(&cls.cfg, cls.pkts, pkt.size, rng)
        };
        match decision {
            RedDecision::Early => return self.drop(c, DropKind::Early, size, now),
            RedDecision::Forced => return self.drop(c, DropKind::Forced, size, now),
            RedDecision::Pass => {}
        }
        if full {
            return self.drop(c, DropKind::Overflow, size, now);
        }
        let cls = &mut self.classes[c];
        cls.pkts += 1;
        cls.bytes += size;
        cls.stats.enqueues += 1;
        cls.byte_stats.enqueues += size;
        self.stats.enqueues += 1;
        self.fifo.push(pkt, now);
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let pkt = self.fifo.pop()?;
        let size = pkt.size as u64;
        self.stats.dequeues += 1;
        let cls = &mut self.classes[self.classifier.classify(&pkt)];
        cls.pkts = cls.pkts.saturating_sub(1);
        cls.bytes = cls.bytes.saturating_sub(size);
        cls.stats.dequeues += 1;
        cls.byte_stats.dequeues += size;
        if cls.pkts == 0 {
            cls.start_idle(now);
        }
        Some(pkt)
    }

    super::fifo::fifo_accessors!();
    fn class_stats(&self) -> Vec<ClassStats> {
        self.classes
            .iter()
            .map(|c| ClassStats {
                name: c.name.clone(),
                stats: c.stats,
                bytes: c.byte_stats,
                average: c.state.average(),
                len_packets: c.pkts,
                len_bytes: c.bytes,
            })
            .collect()
    }
    fn class_count(&self) -> usize {
        self.classes.len()
    }
    fn class_len_at(&self, i: usize) -> (usize, u64) {
        (self.classes[i].pkts, self.classes[i].bytes)
    }
    fn class_average_at(&self, i: usize) -> f64 {
        self.classes[i].state.average()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind::{self, TcpAck, TcpData, Udp};
    use crate::qdisc::{AnyQdisc, DropTailParams, RedParams};
    use rand::Rng as _;

    fn params(text: &str) -> CbtParams {
        toml::from_str(text).unwrap()
    }

    fn cbt(text: &str) -> Cbt {
        params(text).validate("queue", 10e6).unwrap()
    }

    fn error(text: &str) -> ConfigError {
        params(text).validate("queue", 10e6).err().expect("should be rejected")
    }

    fn ms(t: f64) -> Time {
        Time((t * 1e6).round() as u64)
    }

    /// A queue driven by a packet trace.
    struct Trace {
        q: Cbt,
        rng: Rng,
        drops: DropBuf,
    }

    impl Trace {
        fn new(text: &str) -> Trace {
            Trace { q: cbt(text), rng: stream(1, StreamId::Queue(0)), drops: DropBuf::new() }
        }
        fn arrive(&mut self, kind: PacketKind, tag: u8, size: u32, now: Time) -> Verdict {
            let p = Packet { size, class: tag, ..Packet::new(kind, 0) };
            self.q.enqueue(p, now, &mut self.rng, &mut self.drops)
        }
        fn arrive_n(&mut self, n: usize, kind: PacketKind, tag: u8, size: u32, now: Time) -> Vec<Verdict> {
            (0..n).map(|_| self.arrive(kind, tag, size, now)).collect()
        }
        fn depart(&mut self, now: Time) -> Option<Packet> {
            self.q.dequeue(now, &mut self.drops)
        }
        fn avg(&self, name: &str) -> f64 {
            self.q.class_average(name).unwrap()
        }
        fn class(&self, name: &str) -> ClassStats {
            self.q.class_stats().into_iter().find(|c| c.name == name).unwrap()
        }
        /// Sets a class's average (w = 1 sample of `avg`); the class must not be idle.
        fn set_avg(&mut self, name: &str, avg: f64) {
            let i = self.q.class_index(name).unwrap();
            let cls = &mut self.q.classes[i];
            let cfg = RedConfig { weight: 1.0, ..cls.cfg };
            cls.state.update_average(&cfg, avg, Time::ZERO);
            assert_eq!(cls.state.average(), avg);
        }
    }

    const ENQ: Verdict = Verdict::Enqueued;
    const FORCED: Verdict = Verdict::Dropped(DropKind::Forced);
    const OVERFLOW: Verdict = Verdict::Dropped(DropKind::Overflow);

    /// Checks the counter invariants per class, in packets and bytes, and that the classes sum
    /// to the totals.
    fn check_invariants(q: &Cbt) {
        let mut sum = QdiscStats::default();
        let (mut pkts, mut bytes) = (0usize, 0u64);
        for c in q.class_stats() {
            let s = c.stats;
            assert_eq!(s.arrivals, s.enqueues + s.drops(), "{}: arrivals = enqueues + drops", c.name);
            assert_eq!(s.enqueues, s.dequeues + c.len_packets as u64, "{}: enqueues = dequeues + queued", c.name);
            let b = c.bytes;
            assert_eq!(b.arrivals, b.enqueues + b.drops(), "{}: bytes", c.name);
            assert_eq!(b.enqueues, b.dequeues + c.len_bytes, "{}: bytes queued", c.name);
            for (total, part) in [
                (&mut sum.arrivals, s.arrivals),
                (&mut sum.enqueues, s.enqueues),
                (&mut sum.dequeues, s.dequeues),
                (&mut sum.drops_early, s.drops_early),
                (&mut sum.drops_forced, s.drops_forced),
                (&mut sum.drops_overflow, s.drops_overflow),
            ] {
                *total += part;
            }
            pkts += c.len_packets;
            bytes += c.len_bytes;
        }
        assert_eq!(&sum, q.stats(), "classes sum to the totals");
        let t = q.stats();
        assert_eq!(t.arrivals, t.enqueues + t.drops());
        assert_eq!(t.enqueues, t.dequeues + q.len_packets() as u64);
        assert_eq!((pkts, bytes), (q.len_packets(), q.len_bytes()));
        assert_eq!(bytes, q.fifo.iter().map(|p| p.size as u64).sum::<u64>());
    }

    const TWO: &str = r#"
        classes = [
          { name = "tcp", match = "tcp", min_th = 50, max_th = 60, weight = 0.5 },
          { name = "other", max_th = 50, weight = 0.5 },
        ]"#;

    #[test]
    fn each_average_moves_only_on_its_own_class_arrivals() {
        let mut t = Trace::new(TWO);
        // Two *other* packets: the first finds its class empty (idle, no sample), the second samples 1.
        assert_eq!(t.arrive_n(2, Udp, 0, 1000, ms(0.0)), [ENQ, ENQ]);
        assert_eq!((t.avg("other"), t.avg("tcp")), (0.5, 0.0));
        // Three TCP arrivals sample TCP's own queue (0, 1, 2 packets): the total queue grows to 5,
        // but *other*'s average does not move.
        t.arrive_n(3, TcpData, 0, 1000, ms(0.0));
        // TCP: the first finds its class empty (no sample), then 0.5·0 + 0.5·1, then 0.5·0.5 + 0.5·2.
        assert_eq!((t.avg("tcp"), t.avg("other")), (1.25, 0.5));
        // An ACK is TCP too.
        t.arrive(TcpAck, 0, 40, ms(0.0));
        assert_eq!(t.avg("tcp"), 0.5 * 1.25 + 0.5 * 3.0);
        assert_eq!(t.avg("other"), 0.5);
        // The next *other* arrival samples its own 2 queued packets, not the 6 in the queue.
        t.arrive(Udp, 0, 1000, ms(0.0));
        assert_eq!(t.avg("other"), 0.5 * 0.5 + 0.5 * 2.0);
        // Departures never move an average.
        let before = (t.avg("tcp"), t.avg("other"));
        while t.depart(ms(1.0)).is_some() {}
        assert_eq!((t.avg("tcp"), t.avg("other")), before);
        check_invariants(&t.q);
    }

    #[test]
    fn synchronized_sampling_updates_every_class() {
        let mut t = Trace::new(&format!("sampling = \"all\"\n{TWO}"));
        t.arrive_n(2, Udp, 0, 1000, ms(0.0));
        assert_eq!(t.avg("other"), 0.5);
        // Each TCP arrival also samples *other*'s 2 queued packets: 0.5 → 1.25 → 1.625 → 1.8125.
        t.arrive_n(3, TcpData, 0, 1000, ms(0.0));
        assert_eq!(t.avg("other"), 1.8125);
        t.arrive(Udp, 0, 1000, ms(0.0));
        assert_eq!(t.avg("other"), 0.5 * 1.8125 + 0.5 * 2.0);
        // Only the arriving class's count moved.
        assert_eq!(t.q.classes[0].state.count(), 2.0);
    }

    #[test]
    fn deterministic_class_drops_every_arrival_above_its_threshold_and_none_below() {
        // w = 1: the average is the class's queue found by the arrival. min_th = max_th = 3, and a
        // max_p that would make early drops rare: it is never used.
        let mut t = Trace::new(
            r#"classes = [{ name = "tcp", match = "tcp", max_th = 100, weight = 1.0 },
                          { name = "mm", max_th = 3, weight = 1.0, max_p = 0.001 }]"#,
        );
        // Averages 0, 1, 2, 3 are not above 3: enqueued. From 4 on, every arrival is forced out.
        assert_eq!(t.arrive_n(4, Udp, 0, 1000, ms(0.0)), [ENQ; 4]);
        assert_eq!(t.arrive_n(20, Udp, 0, 1000, ms(0.0)), [FORCED; 20]);
        assert_eq!(t.avg("mm"), 4.0);
        // Another class's backlog does not count against it.
        t.arrive_n(30, TcpData, 0, 1000, ms(0.0));
        assert_eq!(t.arrive(Udp, 0, 1000, ms(0.0)), FORCED);
        // Drain until two *mm* packets are left (the FIFO head is mm's).
        t.depart(ms(1.0));
        t.depart(ms(1.0));
        assert_eq!(t.class("mm").len_packets, 2);
        assert_eq!(t.arrive_n(2, Udp, 0, 1000, ms(1.0)), [ENQ, ENQ]); // sees 2, then 3
        assert_eq!(t.arrive(Udp, 0, 1000, ms(1.0)), FORCED); // sees 4
        let mm = t.class("mm").stats;
        assert_eq!((mm.drops_forced, mm.drops_early, mm.drops_overflow), (22, 0, 0));
        check_invariants(&t.q);
    }

    #[test]
    fn spec_3_6_other_class_vector() {
        // Spec §3.6: *other*, w = 1/4, ThMin = ThMax = 14.29, avg 0, its queue held at 20 packets.
        // Samples give 5.00, 8.75, 11.5625, 13.6719, 15.2539; the 5th arrival is force-dropped.
        let mut t = Trace::new(r#"classes = [{ name = "other", max_th = 1e9, weight = 0.25 }]"#);
        t.arrive_n(20, Udp, 0, 1075, ms(0.0));
        let other = &mut t.q.classes[0];
        other.cfg.min_th = 14.29;
        other.cfg.max_th = 14.29;
        other.state = RedState::default();
        other.state.update_average(&other.cfg, 0.0, ms(0.0)); // leave the initial idle state at avg 0
        let want = [5.0, 8.75, 11.5625, 13.671875, 15.25390625];
        for (i, avg) in want.iter().enumerate() {
            let v = t.arrive(Udp, 0, 1075, ms(1.0));
            assert_eq!(t.avg("other"), *avg, "arrival {}", i + 1);
            if i < 4 {
                assert_eq!(v, ENQ);
                t.depart(ms(1.0)); // hold the class at 20 queued
            } else {
                assert_eq!(v, FORCED);
            }
            assert_eq!(t.q.len_packets(), 20);
        }
    }

    #[test]
    fn single_queued_packet_exemption_is_a_parameter() {
        // min_th = max_th = 0.5, w = 1: the second arrival sees avg 1 > 0.5 with one packet queued.
        let run = |global: &str, class: &str| {
            let mut t = Trace::new(&format!(
                "{global}\nclasses = [{{ name = \"o\", max_th = 0.5, weight = 1.0 {class} }}]"
            ));
            let v = t.arrive_n(6, Udp, 0, 1000, ms(0.0));
            v.iter().filter(|v| **v == ENQ).count()
        };
        assert_eq!(run("", ""), 2, "q_len_c > 1 (Fig. 4.3): a class always gets a second packet in");
        assert_eq!(run("protected_pkts = 0", ""), 1, "q_len_c >= 1 (the prose's reading)");
        assert_eq!(run("protected_pkts = 2", ""), 3);
        assert_eq!(run("protected_pkts = 0", ", protected_pkts = 1"), 2, "per-class override");
    }

    #[test]
    fn shared_limit_overflows_across_classes() {
        let mut t = Trace::new(
            r#"limit = 4
               classes = [{ name = "tcp", match = "tcp", max_th = 100 }, { name = "other", max_th = 100 }]"#,
        );
        assert_eq!(t.arrive_n(4, TcpData, 0, 1000, ms(0.0)), [ENQ; 4]);
        // *other* has nothing queued and an average of 0, yet the shared buffer is full.
        assert_eq!(t.arrive(Udp, 0, 1000, ms(0.0)), OVERFLOW);
        assert_eq!(t.arrive(TcpData, 0, 1000, ms(0.0)), OVERFLOW);
        t.depart(ms(1.0));
        assert_eq!(t.arrive(Udp, 0, 1000, ms(1.0)), ENQ);
        assert_eq!(t.arrive(Udp, 0, 1000, ms(1.0)), OVERFLOW);
        let (tcp, other) = (t.class("tcp").stats, t.class("other").stats);
        assert_eq!((tcp.drops_overflow, other.drops_overflow, other.enqueues), (1, 2, 1));
        assert_eq!(t.class("other").bytes.drops_overflow, 2000);
        check_invariants(&t.q);

        // A byte limit counts every class's bytes.
        let mut t = Trace::new(
            r#"limit = "3000B"
               classes = [{ name = "tcp", match = "tcp", max_th = 100 }, { name = "other", max_th = 100 }]"#,
        );
        assert_eq!(t.arrive(TcpData, 0, 1500, ms(0.0)), ENQ);
        assert_eq!(t.arrive(Udp, 0, 1000, ms(0.0)), ENQ);
        assert_eq!(t.arrive(Udp, 0, 600, ms(0.0)), OVERFLOW);
        assert_eq!(t.arrive(TcpAck, 0, 500, ms(0.0)), ENQ);
        check_invariants(&t.q);
    }

    #[test]
    fn documented_variant_checks_the_limit_first_altq_after_red() {
        // A full buffer and an average above max_th: documented counts an overflow (Fig. 4.3),
        // altq a forced drop (RED test first, spec §2.2 note 4).
        for (variant, want) in [("documented", OVERFLOW), ("altq", FORCED), ("ns2", FORCED)] {
            let mut t = Trace::new(&format!(
                "limit = 3\nvariant = \"{variant}\"\nclasses = [{{ name = \"o\", max_th = 2.5, weight = 1.0 }}]"
            ));
            assert_eq!(t.arrive_n(3, Udp, 0, 1000, ms(0.0)), [ENQ; 3], "{variant}");
            assert_eq!(t.arrive(Udp, 0, 1000, ms(0.0)), want, "{variant}");
        }
    }

    #[test]
    fn idle_decay_uses_the_class_drain_rate_spec_3_6() {
        // Spec §3.6: TCP (w = 1/256, drain 591.2 pkt/s) idle 100 ms from avg 40 → 31.877;
        // *other* (w = 1/4, drain 142.9 pkt/s = 150 KiB/s of 1075 B) idle 100 ms from avg 14 → 0.3326.
        let mut t = Trace::new(
            r#"classes = [
                 { name = "tcp", match = "tcp", min_th = 5, max_th = 40, weight = 0.00390625, drain_rate = 591.2 },
                 { name = "other", max_th = 14.29, weight = 0.25, mean_packet_size = "1075B", allocation = "150KiB/s" },
               ]"#,
        );
        assert!((t.q.class_config("other").unwrap().drain_rate - 142.884).abs() < 1e-3);
        t.arrive(TcpData, 0, 1000, ms(0.0));
        t.arrive(Udp, 0, 1075, ms(0.0));
        t.set_avg("tcp", 40.0);
        t.set_avg("other", 14.0);
        // TCP's packet leaves at 1000 ms: TCP idles from then on. *other* leaves at 1050 ms.
        assert_eq!(t.depart(ms(1000.0)).unwrap().kind, TcpData);
        assert_eq!(t.depart(ms(1050.0)).unwrap().kind, Udp);
        // 100 ms after each class emptied, one arrival each: both decay with their own rate.
        t.arrive(TcpData, 0, 1000, ms(1100.0));
        let tcp = 40.0 * (255.0f64 / 256.0).powi(58); // n = trunc(59.12 − 1) = 58
        assert!((t.avg("tcp") - tcp).abs() < 1e-12);
        assert!((tcp - 31.877).abs() < 5e-4);
        t.arrive(Udp, 0, 1075, ms(1150.0));
        let other = 14.0 * 0.75f64.powi(13); // n = trunc(14.29 − 1) = 13
        assert!((t.avg("other") - other).abs() < 1e-12);
        assert!((other - 0.3326).abs() < 5e-5);
        // Busy class: a TCP arrival with TCP packets queued takes an ordinary sample, no decay.
        t.arrive(TcpData, 0, 1000, ms(5000.0));
        assert!((t.avg("tcp") - (tcp * (255.0 / 256.0) + 1.0 / 256.0)).abs() < 1e-12);
    }

    #[test]
    fn other_classes_keep_their_idle_clock_while_one_class_is_busy() {
        // TCP idles 100 ms while *other* keeps arriving and departing: TCP's decay is unchanged.
        let text = r#"classes = [
                 { name = "tcp", match = "tcp", min_th = 5, max_th = 40, weight = 0.00390625, drain_rate = 591.2 },
                 { name = "other", max_th = 14.29, weight = 0.25 }]"#;
        let mut t = Trace::new(text);
        t.arrive(TcpData, 0, 1000, ms(0.0));
        t.set_avg("tcp", 40.0);
        t.depart(ms(1000.0));
        for k in 1..10 {
            t.arrive(Udp, 0, 1000, ms(1000.0 + 10.0 * k as f64));
            t.depart(ms(1000.0 + 10.0 * k as f64 + 1.0));
        }
        t.arrive(TcpData, 0, 1000, ms(1100.0));
        assert!((t.avg("tcp") - 40.0 * (255.0f64 / 256.0).powi(58)).abs() < 1e-12);
    }

    #[test]
    fn idle_rule_after_a_dropped_arrival_to_an_empty_class() {
        // *other*: w = 1/2, 1000 pkt/s; the shared buffer (1 packet) is held full by TCP.
        let run = |rule: &str| {
            let mut t = Trace::new(&format!(
                "limit = 1\nidle_rule = \"{rule}\"\nclasses = [{{ name = \"tcp\", match = \"tcp\", max_th = 100 }}, \
                 {{ name = \"other\", max_th = 100, weight = 0.5, drain_rate = 1000 }}]"
            ));
            t.arrive(Udp, 0, 1000, ms(0.0));
            t.set_avg("other", 8.0);
            t.depart(ms(0.0)); // *other* idle from 0
            assert_eq!(t.arrive(TcpData, 0, 1000, ms(0.0)), ENQ);
            // 3.5 slots idle: n = trunc(3.5 − 1) = 2 → 8/4 = 2; dropped (buffer full).
            assert_eq!(t.arrive(Udp, 0, 1000, ms(3.5)), OVERFLOW);
            assert_eq!(t.avg("other"), 2.0);
            assert_eq!(t.arrive(Udp, 0, 1000, ms(7.0)), OVERFLOW);
            t.avg("other")
        };
        // empty: decays again over the 3.5 ms since the dropped arrival (not since 0: no double decay).
        assert_eq!(run("empty"), 0.5);
        // flag: the class is no longer idle; the arrival takes an ordinary zero sample.
        assert_eq!(run("flag"), 1.0);
    }

    #[test]
    fn byte_mode_counts_class_bytes_in_mean_size_packets() {
        let one = |mode: bool, size: u32| {
            let mut t = Trace::new(&format!(
                "byte_mode = {mode}\nclasses = [{{ name = \"o\", max_th = 3, weight = 1.0, mean_packet_size = \"1000B\" }}]"
            ));
            let v = t.arrive_n(10, Udp, 0, size, ms(0.0));
            let accepted = v.iter().filter(|v| **v == ENQ).count();
            check_invariants(&t.q);
            (accepted, t.avg("o"), t.class("o"))
        };
        // Packet mode: averages 0, 1, 2, 3 pass whatever the size.
        assert_eq!(one(false, 1500).0, 4);
        assert_eq!(one(false, 500).0, 4);
        // Byte mode: 1500 B packets are 1.5 mean packets: 0, 1.5, 3.0 pass, 4.5 is forced.
        let (n, avg, c) = one(true, 1500);
        assert_eq!((n, avg), (3, 4.5));
        assert_eq!((c.len_bytes, c.bytes.enqueues, c.bytes.drops_forced, c.stats.drops_forced), (4500, 4500, 10_500, 7));
        // 500 B packets: 0, 0.5, …, 3.0 pass (7 packets = 3500 B), 3.5 is forced.
        assert_eq!(one(true, 500).0, 7);
    }

    #[test]
    fn red_class_early_drops_are_count_spaced_and_only_in_that_class() {
        // w = 1, TCP held at 10 queued between min_th 5 and max_th 15 (pb = 0.05): early drops only.
        let mut t = Trace::new(
            r#"classes = [{ name = "tcp", match = "tcp", min_th = 5, max_th = 15, weight = 1.0 },
                          { name = "other", max_th = 3, weight = 1.0 }]"#,
        );
        while t.q.len_packets() < 10 {
            t.arrive(TcpData, 0, 1000, ms(0.0));
        }
        let early_before = t.class("tcp").stats.drops_early;
        let mut since = 0;
        let mut gaps = Vec::new();
        for _ in 0..2000 {
            since += 1;
            if t.arrive(TcpData, 0, 1000, ms(0.0)) == ENQ {
                t.depart(ms(0.0));
            } else {
                gaps.push(since);
                since = 0;
            }
        }
        let tcp = t.class("tcp").stats;
        assert_eq!((tcp.drops_forced, tcp.drops_overflow), (0, 0));
        assert_eq!((tcp.drops_early - early_before) as usize, gaps.len());
        // Documented RED: a drop at least every 1/pb − 1 = 19 arrivals, after the free pass.
        assert!(gaps[1..].iter().all(|&g| (1..=19).contains(&g)), "{gaps:?}");
        assert!(gaps.len() > 150, "{}", gaps.len());
        assert_eq!(t.class("other").stats.drops(), 0);
        check_invariants(&t.q);
    }

    /// A random mixed trace: arrivals of every kind and tag, departures, idle gaps.
    fn random_trace(q: &mut Cbt, seed: u64, steps: usize, mut each: impl FnMut(&mut Cbt, Option<Verdict>)) {
        let mut rng = stream(seed, StreamId::Flow(0));
        let mut qrng = stream(seed, StreamId::Queue(0));
        let mut drops = DropBuf::new();
        let mut now = 0u64;
        for _ in 0..steps {
            now += rng.gen_range(0..400_000u64) + if rng.gen::<f64>() < 0.01 { 50_000_000 } else { 0 };
            if rng.gen::<f64>() < 0.6 {
                let kind = [TcpData, TcpAck, Udp][rng.gen_range(0..3)];
                let p = Packet { size: rng.gen_range(40..1500), class: rng.gen_range(0..4), ..Packet::new(kind, 0) };
                let v = q.enqueue(p, Time(now), &mut qrng, &mut drops);
                each(q, Some(v));
            } else {
                q.dequeue(Time(now), &mut drops);
                each(q, None);
            }
        }
    }

    #[test]
    fn counters_balance_per_class_and_in_total_on_a_random_trace() {
        for extra in [
            "limit = 16",
            "limit = 16\nbyte_mode = true",
            "limit = 16\nvariant = \"altq\"",
            "limit = 16\nvariant = \"ns2\"\nsampling = \"all\"\nidle_rule = \"flag\"",
            "limit = \"12KB\"",
        ] {
            let mut q = cbt(&format!(
                r#"{extra}
                   classes = [{{ name = "tcp", match = "tcp", min_th = 2, max_th = 12, weight = 0.2 }},
                              {{ name = "mm", match = "udp", tags = [1, 2], max_th = 4, weight = 0.0625 }},
                              {{ name = "other", max_th = 3, weight = 0.25 }}]"#
            ));
            random_trace(&mut q, 5, 20_000, |q, _| check_invariants(q));
            let s = q.stats();
            assert!(s.drops_early > 0 && s.drops_forced > 0 && s.drops_overflow > 0, "{extra}: {s:?}");
            let cs = q.class_stats();
            assert_eq!(cs[1].stats.drops_early + cs[2].stats.drops_early, 0, "deterministic classes never early-drop");
        }
    }

    #[test]
    fn extreme_but_valid_parameters_do_not_panic() {
        for text in [
            r#"limit = "none"
               byte_mode = true
               protected_pkts = 4294967295
               classes = [{ name = "a", match = "udp", min_th = 0, max_th = 1e300, weight = 1e-300, max_p = 1e-300, drain_rate = 1e300, mean_packet_size = "1B" },
                          { name = "b", max_th = 1e-300, weight = 1, max_p = 1, allocation = "1bps", mean_packet_size = "65535B" }]"#,
            r#"limit = 1
               variant = "altq"
               idle_rule = "flag"
               sampling = "all"
               classes = [{ name = "a", tags = [0, 255], min_th = 0, max_th = 1e-9, weight = 1 }, { name = "z", max_th = 1 }]"#,
            r#"limit = "1B"
               variant = "ns2"
               classes = [{ name = "only", max_th = 3, protected_pkts = 0 }]"#,
        ] {
            let mut q = cbt(text);
            random_trace(&mut q, 11, 5_000, |q, _| check_invariants(q));
            for c in q.class_stats() {
                assert!(!c.average.is_nan(), "{}: {}", c.name, c.average);
            }
        }
    }

    #[test]
    fn one_class_cbt_is_red() {
        // Spec §2.7.9: CBT with one class and RED's parameters is RED. (For altq/ns2 the trace
        // polls the empty queue at the emptying departure, where RED starts idling.)
        for variant in ["documented", "altq", "ns2"] {
            for byte_mode in [false, true] {
                let common = format!("limit = 12\nvariant = \"{variant}\"\nbyte_mode = {byte_mode}");
                let red_text = format!("{common}\nmin_th = 3\nmax_th = 9\nmax_p = 0.2\nweight = 0.1\nmean_packet_size = \"800B\"");
                let mut red: crate::qdisc::Red = toml::from_str::<RedParams>(&red_text).unwrap().validate("queue", 10e6).unwrap();
                let mut q = cbt(&format!(
                    "{common}\nclasses = [{{ name = \"all\", min_th = 3, max_th = 9, max_p = 0.2, weight = 0.1, mean_packet_size = \"800B\" }}]"
                ));
                let mut rng = stream(9, StreamId::Flow(0));
                let (mut r1, mut r2) = (stream(3, StreamId::Queue(0)), stream(3, StreamId::Queue(0)));
                let mut drops = DropBuf::new();
                let mut now = 0u64;
                let mut verdicts = [0u64; 4];
                for _ in 0..20_000 {
                    now += rng.gen_range(0..800_000u64) + if rng.gen::<f64>() < 0.005 { 30_000_000 } else { 0 };
                    if rng.gen::<f64>() < 0.55 {
                        let p = Packet { size: rng.gen_range(40..1500), ..Packet::new(TcpData, 0) };
                        let (a, b) = (red.enqueue(p, Time(now), &mut r1, &mut drops), q.enqueue(p, Time(now), &mut r2, &mut drops));
                        assert_eq!(a, b, "{variant} byte_mode {byte_mode} at {now}");
                        verdicts[match a {
                            ENQ => 0,
                            Verdict::Dropped(DropKind::Early) => 1,
                            FORCED => 2,
                            _ => 3,
                        }] += 1;
                    } else {
                        let (a, b) = (red.dequeue(Time(now), &mut drops), q.dequeue(Time(now), &mut drops));
                        assert_eq!(a, b);
                        if q.len_packets() == 0 {
                            red.dequeue(Time(now), &mut drops);
                        }
                    }
                    assert_eq!(red.average(), q.class_average("all"), "{variant} byte_mode {byte_mode} at {now}");
                }
                assert_eq!(red.stats(), q.stats());
                assert!(verdicts.iter().all(|&n| n > 0), "{variant}: every outcome exercised {verdicts:?}");
            }
        }
    }

    #[test]
    fn one_class_with_unit_weight_and_thresholds_at_the_limit_is_fifo() {
        // Spec §2.7.9: w = 1, ThMin = ThMax = q_limit emulates drop-tail.
        let mut fifo = DropTailParams { limit: Limit::Packets(12) }.validate("queue").unwrap();
        let mut q = cbt("limit = 12\nclasses = [{ name = \"all\", max_th = 12, weight = 1.0 }]");
        let mut rng = stream(4, StreamId::Flow(0));
        let (mut r1, mut r2) = (stream(3, StreamId::Queue(0)), stream(3, StreamId::Queue(0)));
        let mut drops = DropBuf::new();
        for i in 0..20_000u64 {
            if rng.gen::<f64>() < 0.55 {
                let p = Packet { size: 1000, ..Packet::new(Udp, 0) };
                assert_eq!(fifo.enqueue(p, Time(i), &mut r1, &mut drops), q.enqueue(p, Time(i), &mut r2, &mut drops));
            } else {
                assert_eq!(fifo.dequeue(Time(i), &mut drops), q.dequeue(Time(i), &mut drops));
            }
        }
        assert_eq!(fifo.stats(), q.stats());
        assert!(q.stats().drops_overflow > 100 && q.stats().drops_forced == 0);
    }

    #[test]
    fn burst_into_an_idle_class_eq_b2() {
        // Eq. B.2 with pre-enqueue sampling (samples 0..L−1): w = 1/256, L = 158 → 39.93 (spec §3.5).
        let mut t = Trace::new(r#"classes = [{ name = "tcp", max_th = 200, weight = 0.00390625 }]"#);
        assert!(t.arrive_n(158, TcpData, 0, 1000, ms(0.0)).iter().all(|v| *v == ENQ));
        let w = 1.0 / 256.0;
        let exact = 158.0 + ((1.0f64 - w).powi(158) - 1.0) / w;
        assert!((t.avg("tcp") - exact).abs() < 1e-9);
        assert!((t.avg("tcp") - 39.93).abs() < 0.005, "{}", t.avg("tcp"));
    }

    #[test]
    fn red_base_probability_spec_3_6() {
        let q = cbt(r#"classes = [{ name = "tcp", min_th = 5, max_th = 40, max_p = 0.1 }]"#);
        let cfg = q.class_config("tcp").unwrap();
        for (avg, pb) in [(10.0, 0.01429), (22.5, 0.05), (39.9, 0.09971)] {
            assert!((cfg.base_probability(avg) - pb).abs() < 5e-6, "avg {avg}");
        }
    }

    #[test]
    fn defaults_are_the_dissertations_three_classes() {
        let q = CbtParams::default().validate("queue", 10e6).unwrap();
        let names: Vec<_> = q.class_stats().into_iter().map(|c| c.name).collect();
        assert_eq!(names, ["tcp", "multimedia", "other"]);
        // Table 5.3, HTTP-Proshare; Table B.13 weights; drain rates B/P (spec §2.7.2).
        for (name, min_th, max_th, w, drain) in
            [("tcp", 5.0, 26.50, 1.0 / 256.0, 883.1), ("multimedia", 6.66, 6.66, 1.0 / 16.0, 222.0), ("other", 4.29, 4.29, 0.25, 142.9)]
        {
            let c = q.class_config(name).unwrap();
            assert_eq!((c.min_th, c.max_th, c.weight, c.max_p, c.protected_pkts), (min_th, max_th, w, 0.1, 1), "{name}");
            assert!((c.drain_rate - drain).abs() < 0.05, "{name}: {}", c.drain_rate);
            assert_eq!(c.variant, RedVariant::Documented);
        }
        // Eq. 4.1 check (spec §4.5): Σ Th·P / C = 30 ms with C = 1225 KiB/s.
        let l: f64 = [(26.50, 1061.0), (6.66, 738.0), (4.29, 1075.0)].iter().map(|(t, p)| t * p).sum::<f64>() / (1225.0 * 1024.0);
        assert!((l - 0.030).abs() < 1e-4, "{l}");
        let p = |kind, tag| Packet { class: tag, ..Packet::new(kind, 0) };
        assert_eq!(q.classify(&p(TcpData, 1)), "tcp");
        assert_eq!(q.classify(&p(TcpAck, 0)), "tcp");
        assert_eq!(q.classify(&p(Udp, 1)), "multimedia");
        assert_eq!(q.classify(&p(Udp, 0)), "other");
        assert_eq!(q.stats().arrivals, 0);
        // The catalog's way of building defaults gives the same.
        let empty: CbtParams = toml::Value::Table(toml::Table::new()).try_into().unwrap();
        assert_eq!(serde_json::to_value(&empty).unwrap(), serde_json::to_value(CbtParams::default()).unwrap());
    }

    #[test]
    fn catalog_lists_cbt_with_its_default_classes() {
        let cat = crate::qdisc::catalog();
        let entry = cat.as_array().unwrap().iter().find(|e| e["kind"] == "cbt").expect("cbt in the catalog");
        assert_eq!(entry["params"]["limit"], 240);
        assert_eq!(entry["params"]["classes"].as_array().unwrap().len(), 3);
        assert_eq!(entry["params"]["classes"][1]["tags"][0], 1);
        for key in entry["params"].as_object().unwrap().keys() {
            assert!(entry["docs"].get(key).is_some(), "{key} documented");
        }
        assert!(crate::scenario::QDISC_KINDS.contains(&"cbt"));
    }

    #[test]
    fn bad_input_names_the_key() {
        let e = |text: &str| error(text).to_string();
        assert!(e("classes = []").starts_with("queue.classes: at least one class"));
        let dup = r#"classes = [{ name = "a", match = "tcp", max_th = 5 }, { name = "a", max_th = 5 }]"#;
        assert!(e(dup).starts_with("queue.classes[1].name: \"a\" is already the name of queue.classes[0]"), "{}", e(dup));
        assert!(e(r#"classes = [{ name = " ", max_th = 5 }]"#).starts_with("queue.classes[0].name"));
        let inverted = r#"classes = [{ name = "a", match = "tcp", max_th = 5 }, { name = "b", min_th = 6, max_th = 5 }]"#;
        assert!(e(inverted).starts_with("queue.classes[1].min_th: must not exceed max_th"), "{}", e(inverted));
        for bad in ["0", "1.5", "-0.1", "nan"] {
            let m = e(&format!("classes = [{{ name = \"a\", max_th = 5, max_p = {bad} }}]"));
            assert!(m.starts_with("queue.classes[0].max_p: must be in (0, 1]"), "{m}");
            let m = e(&format!("classes = [{{ name = \"a\", max_th = 5, weight = {bad} }}]"));
            assert!(m.starts_with("queue.classes[0].weight: must be in (0, 1]"), "{m}");
        }
        assert!(e(r#"classes = [{ name = "a", max_th = 0 }]"#).starts_with("queue.classes[0].max_th: must be a positive"));
        assert!(e(r#"classes = [{ name = "a", max_th = inf }]"#).starts_with("queue.classes[0].max_th"));
        assert!(e(r#"classes = [{ name = "a", min_th = -1, max_th = 3 }]"#).starts_with("queue.classes[0].min_th"));
        let no_catch_all = r#"classes = [{ name = "tcp", match = "tcp", max_th = 5 }, { name = "mm", match = "udp", tags = [1], max_th = 5 }]"#;
        let m = e(no_catch_all);
        assert!(m.starts_with("queue.classes: no class matches udp packets with tag 0") && m.contains("catch-all"), "{m}");
        let shadowed = r#"classes = [{ name = "all", max_th = 5 }, { name = "tcp", match = "tcp", max_th = 5 }]"#;
        assert!(e(shadowed).starts_with("queue.classes[1]: no packet can reach this class"));
        assert!(e(r#"classes = [{ name = "a", tags = [], max_th = 5 }, { name = "b", max_th = 5 }]"#).starts_with("queue.classes[0].tags"));
        let both = r#"classes = [{ name = "a", max_th = 5, allocation = "1Mbps", drain_rate = 100 }]"#;
        assert!(e(both).starts_with("queue.classes[0].drain_rate: give either allocation"));
        assert!(e(r#"classes = [{ name = "a", max_th = 5, drain_rate = 0 }]"#).starts_with("queue.classes[0].drain_rate: must be a positive"));
        assert!(e(r#"classes = [{ name = "a", max_th = 5, mean_packet_size = "0B" }]"#).starts_with("queue.classes[0].mean_packet_size"));
        assert!(e("variant = \"altq\"\nwait = true").starts_with("queue.wait"));
    }

    #[test]
    fn scenario_keys_parse_with_paths_and_echo_filled_in() {
        use crate::scenario::validate::{queue_spec, QueueSpec};
        let spec = |text: &str| {
            let table: toml::Table = toml::from_str(text).unwrap();
            queue_spec(Some(&table), "queue", QueueSpec::DropTail(DropTailParams::default()))
        };
        let good = r#"
            kind = "cbt"
            limit = 240
            classes = [
              { name = "tcp", match = "tcp", min_th = 5, max_th = 25.67, max_p = 0.1, weight = 0.00390625, mean_packet_size = "1053B", allocation = "880KiB/s" },
              { name = "multimedia", match = "udp", tags = [1], max_th = 6.74, weight = 0.0625, mean_packet_size = "889B", allocation = "195KiB/s" },
              { name = "other", max_th = 4.28, weight = 0.25, mean_packet_size = "1075B", allocation = "150KiB/s" },
            ]"#;
        let s = spec(good).unwrap();
        assert_eq!(s.kind(), "cbt");
        let echo = s.echo();
        assert_eq!(echo["kind"], "cbt");
        assert_eq!(echo["classes"][1]["min_th"], 6.74, "deterministic min_th written out");
        assert_eq!(echo["classes"][2]["match"], "any");
        // The echo parses back to the same discipline.
        let mut back: toml::Table = toml::from_str(&toml::to_string(&echo).unwrap()).unwrap();
        back.insert("kind".into(), "cbt".into());
        assert_eq!(spec(&toml::to_string(&back).unwrap()).unwrap().echo(), echo);
        let AnyQdisc::Cbt(q) = s.build("queue", 10e6).unwrap() else { panic!("not cbt") };
        assert!((q.class_config("tcp").unwrap().drain_rate - 855.8).abs() < 0.05); // spec §2.7.2, HTTP-MPEG
        // Unknown and missing keys inside a class name the class.
        let e = spec("kind = \"cbt\"\nclasses = [{ name = \"a\", max_th = 3, colour = 1 }]").unwrap_err();
        assert!(e.path.starts_with("queue.classes[0]") && e.message.contains("colour"), "{e}");
        let e = spec("kind = \"cbt\"\nclasses = [{ name = \"a\" }]").unwrap_err();
        assert!(e.path.starts_with("queue.classes[0]") && e.message.contains("max_th"), "{e}");
        let e = spec("kind = \"cbt\"\nclasses = [{ name = \"a\", max_th = 3, match = \"icmp\" }]").unwrap_err();
        assert!(e.path.starts_with("queue.classes[0]") && e.message.contains("tcp-ack"), "{e}");
        let e = spec("kind = \"cbt\"\nclasses = [{ name = \"a\", max_th = 3, tags = [300] }]").unwrap_err();
        assert!(e.path.starts_with("queue.classes[0].tags"), "{e}");
    }

    /// The module docs' example, in a scenario.
    const DOC_EXAMPLE: &str = r#"
[run]
duration = "1s"

[topology]
bottleneck = { rate = "10Mbps", delay = "20ms" }

[queue]
kind = "cbt"
limit = 240

[[queue.classes]]
name = "tcp"
match = "tcp"
min_th = 5
max_th = 26.50
max_p = 0.1
weight = 0.00390625          # 1/256
mean_packet_size = "1061B"
allocation = "915KiB/s"

[[queue.classes]]
name = "multimedia"
match = "udp"
tags = [1]                   # the multimedia [[flows]] groups say class = 1
max_th = 6.66                # min_th defaults to max_th: deterministic
weight = 0.0625              # 1/16
mean_packet_size = "738B"
allocation = "160KiB/s"

[[queue.classes]]
name = "other"
match = "any"                # catch-all, must come last
max_th = 4.29
weight = 0.25
mean_packet_size = "1075B"
allocation = "150KiB/s"

[[flows]]
kind = "tcp"
"#;

    #[test]
    fn doc_example_is_the_default_and_errors_carry_the_line() {
        let sc = crate::scenario::parse_toml(DOC_EXAMPLE).unwrap();
        let mut want = serde_json::to_value(CbtParams::default().filled()).unwrap();
        want["kind"] = "cbt".into();
        assert_eq!(sc.queue.echo(), want);
        let e = crate::scenario::parse_toml(&DOC_EXAMPLE.replace("max_th = 6.66 ", "max_th = 6.66\nmin_th = 7 ")).unwrap_err();
        assert_eq!((e.path.as_str(), e.line), ("queue.classes[1].min_th", Some(27)), "{e}");
        let e = crate::scenario::parse_toml(&DOC_EXAMPLE.replace("match = \"tcp\"", "match = \"tcp-data\"").replace("match = \"any\"", "match = \"udp\"")).unwrap_err();
        assert!(e.to_string().starts_with("queue.classes (line 12): no class matches tcp-ack packets with tag 0 "), "{e}");
    }

    #[test]
    fn runs_in_a_scenario_with_tagged_multimedia_flows() {
        let text = r#"
[run]
duration = "4s"
seed = 3

[topology]
bottleneck = { rate = "10Mbps", delay = "20ms" }

[queue]
kind = "cbt"

[[flows]]
kind = "tcp"
count = 4

[[flows]]
kind = "udp-cbr"
rate = "1.5Mbps"
class = 1

[[flows]]
kind = "udp-cbr"
rate = "12Mbps"
"#;
        let sc = crate::run::load(text, crate::run::Format::Toml, None).unwrap();
        assert_eq!(sc.echo["queue"]["classes"][0]["name"], "tcp");
        let out = crate::run::simulate(&sc, None, |_| true).unwrap();
        assert!(out.events > 1000);
        // Exercise the built discipline directly as the engine does, through AnyQdisc.
        let mut q = sc.queue.build("queue", 10e6).unwrap();
        let mut rng = stream(1, StreamId::Queue(0));
        let mut drops = DropBuf::new();
        for i in 0..500u64 {
            let p = Packet { size: 1000, class: (i % 3) as u8, ..Packet::new(if i % 2 == 0 { Udp } else { TcpData }, 0) };
            q.enqueue(p, Time(i * 100_000), &mut rng, &mut drops);
            if i % 3 == 0 {
                q.dequeue(Time(i * 100_000), &mut drops);
            }
        }
        let cs = q.class_stats();
        assert_eq!(cs.len(), 3);
        assert_eq!(cs.iter().map(|c| c.stats.arrivals).sum::<u64>(), 500);
        assert!(cs[1].stats.arrivals > 0 && q.average().is_none());
    }
}
