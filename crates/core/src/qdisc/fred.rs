//! Flow Random Early Drop (FRED; Lin & Morris 1997) over one FIFO, in the "many flows" form the
//! CBT dissertation evaluated: Parris 2001 Figs. 3.12–3.15 (spec `seed000-cbt-algorithms.md`
//! §2.3, on the common model of §2.0, RED of §2.2 and the errata register §6). Defaults are the
//! Ch. V settings, Table 5.1 = B.29 (spec `seed000-cbt-evaluation.md` §4.1, §4.4).
//!
//! # Algorithm
//!
//! A flow is a packet's `flow` id (the dissertation's (source, destination) pair). FRED keeps, for
//! each flow with packets queued, `q_len_f` (packets queued) and `strikes_f` (times it was caught
//! over its share); `Nactive` is the number of such flows. Globally it keeps RED's average `avg`,
//! `count` and the per-flow share of the average `avgcq = max(avg / Nactive, 1)` (or `max(avg, 1)`
//! with no active flow). On arrival (Fig. 3.14):
//!
//! 1. refresh the average if the queue is empty (idle decay, see choice 1);
//! 2. **fair-share test**: drop the arrival, add a strike to its flow, leave `count` alone, if
//!    `q_len_f ≥ min_th` (`min_th` doubles as the per-flow cap, the original's `maxq`) or
//!    (`q_len_f ≥ avgcq` and `strikes_f > 1`): a flow struck twice is held to its share of the
//!    *average* queue until its queue drains;
//! 3. by the average: `avg < min_th`, no-drop mode, `count = −1`; `min_th ≤ avg < max_th`,
//!    probabilistic mode, `count += 1` and, only for a "robust" flow with
//!    `q_len_f ≥ max(minq, avgcq)`, RED's early-drop test (Fig. 3.9) with `count` reset on a drop;
//!    `avg ≥ max_th`, "two-packet" mode: drop (and `count = 0`) only if the flow already holds
//!    `max_th_flow_cap` (2) packets, so with many flows the queue grows past `max_th` up to `limit`
//!    (the ≈260 ms BULK latency of Ch. V);
//! 4. the buffer limit (choice 9), then accept: `Nactive += 1` if the flow had nothing queued, one
//!    EWMA sample of the queue *before* the enqueue, enqueue.
//!
//! On departure (Fig. 3.15): dequeue (`q_len_f −= 1`), one EWMA sample of the queue *after* the
//! removal, then forget the flow (its strikes too) if it has nothing left queued. FRED samples the
//! average at accepted arrivals and departures, never at dropped arrivals (unlike RED).
//!
//! The average, its idle decay and the early-drop probability are RED's and come from
//! [`super::red_core`]: [`RedState`] holds `avg` and the idle bookkeeping, [`RedConfig`] computes
//! `pb` (eq. 3.1) and `pa` (eq. 3.2). FRED keeps its own `count`, whose rules differ from RED's
//! (no free pass: no-drop mode sets `count = −1`, so the first probabilistic arrival sees `count = 0`
//! and `pa = pb`; fair-share drops do not reset it).
//!
//! # Variants (`variant`)
//!
//! * `"parris"` (default): Fig. 3.14 exactly as above.
//! * `"lin-morris"`: the published FRED of Lin & Morris 1997 (spec §2.3 ambiguity 4, register #9),
//!   as the third-party ports give its pseudocode. It differs in two places and nowhere else:
//!   1. fair-share test: `q_len_f ≥ maxq`, with `maxq = min_th` while `avg < max_th` and
//!      `maxq = max_th_flow_cap` (2) once `avg ≥ max_th`; plus a third clause
//!      `avg ≥ max_th and q_len_f > 2·avgcq`; all three clauses strike the flow. (With
//!      `max_th_flow_cap ≤ 3` the third clause never fires on its own: `avgcq ≥ 1`, so
//!      `q_len_f > 2·avgcq` implies `q_len_f ≥ 3 ≥ maxq`.)
//!   2. `avg ≥ max_th` ("drop-tail mode"): every arrival that passed the fair-share test is
//!      dropped (`count = 0`), so the queue stays near `max_th` whatever the number of flows.
//!      Spec §2.3 lists only difference 1; difference 2 is taken from the ports (J-Sim's
//!      `FRED.java` labels it "block C" of the SIGCOMM '97 pseudocode) and is a separate
//!      parameter, `above_max_th`, so either reading can be run.
//!
//! With the same trace, the two differ only while `avg ≥ max_th`: a flow holding 2 packets is
//! dropped by both, without a strike in `parris` (two-packet branch) and with one in `lin-morris`
//! (the `maxq = 2` clause); a flow holding 0 or 1 packet is queued by `parris` and dropped by
//! `lin-morris`; and, only with `max_th_flow_cap ≥ 4`, `lin-morris` also strikes a flow holding
//! more than `2·avgcq`.
//!
//! # Choices where the sources are silent, wrong or disagree
//!
//! 1. **Idle handling** (§2.3 ambiguity 1, register #6: Fig. 3.13 never clears `idle`; the Lin &
//!    Morris pseudocode, as ported, also decays twice on an arrival to an empty queue). Resolution
//!    of the spec: the queue goes idle when a departure leaves it empty (with `red_variant =
//!    "documented"`; see choice 6 for `altq`); the first arrival after that
//!    decays the average once, `avg ← (1−w)^n·avg`, `n = max(0, trunc(Δt·drain_rate − 1))`
//!    (§2.2 resolution 2, register #5), and clears `idle`; every other update is one EWMA sample.
//!    `drain_rate` = link rate / `mean_packet_size`.
//! 2. An arrival that ended an idle period and was then dropped leaves the queue empty: the idle
//!    period restarts at that arrival (register #5's `last = now`), so the next arrival decays for
//!    the time since (instead of skipping the decay, or applying it twice).
//! 3. `q` in Fig. 3.13 is read as `q_len` (§2.3 ambiguity 2).
//! 4. Mode boundaries follow the figure's code, not the prose ("`q_avg ≤ ThMin` → no drop"): no-drop
//!    `avg < min_th`, probabilistic `min_th ≤ avg < max_th`, above `avg ≥ max_th` (§2.3 ambiguity 3).
//!    Both readings are the dissertation's and differ only at `avg = min_th` exactly, so this is
//!    not a parameter.
//! 5. `dequeue` decrements `q_len_f` (§2.3 ambiguity 5). State exists only for flows with packets
//!    queued (O(`limit`) entries): Fig. 3.14 creates state for every arrival, but a flow with
//!    nothing queued cannot be struck (`min_th ≥ 1`, `avgcq ≥ 1`), so its state would be
//!    `(0, 0)` anyway.
//! 6. The early-drop test is RED's Fig. 3.9 with resolution 1 (drop once `1 − count·pb ≤ 0`,
//!    register #4). `red_variant = "altq"` runs ALTQ's RED instead (register #8; the dissertation's
//!    FRED was built inside ALTQ): `pa = pb/(2 − count·pb)`, the idle decay followed by one zero
//!    sample and a reset after 60 s idle, and idle counted from when the link finds the queue
//!    empty. FRED's own comparisons (choice 4) are the same in both.
//! 7. The per-flow allowance while `avg ≥ max_th` is the literal 2 of Fig. 3.14 (and of Lin &
//!    Morris's `maxq = 2`); the evaluation spec (§6, "FRED uses minq = 2 (the 'two packets per
//!    flow' effect)") ties it to `minq` instead. Both are 2 in Table 5.1; `max_th_flow_cap` sets it
//!    (make it equal to `minq` for the second reading).
//! 8. `avgcq` is recomputed only where Fig. 3.13's `compute_avg` runs (accepted arrivals,
//!    departures, arrivals to an empty queue), so an arrival's tests use the value of the last
//!    update. At a departure it is computed before the drained flow leaves `Nactive` (Fig. 3.15
//!    order).
//! 9. Fig. 3.14 has no buffer test. The limit (`limit`: Table 5.1's queue size, 240 packets, in
//!    its column "maxq", which is not FRED's per-flow `maxq`) is
//!    applied last, to arrivals FRED accepted: an `Overflow` drop, no strike, no average sample,
//!    and `count = 0` as for every forced drop of the dissertation's RED (Fig. 3.8) and ALTQ.
//! 10. **Byte mode** (`byte_mode = true`; added for the BMRE reproduction, Cho 2002 §4.1, which
//!     ran RED and FRED "in byte mode", spec `seed003-bmre.md` §2.13): every length FRED compares
//!     is in mean-size packets, bytes / `mean_packet_size`: the average samples the queue's bytes,
//!     `q_len_f` is the flow's bytes, so `min_th`, `max_th`, `minq`, `max_th_flow_cap` and `avgcq`
//!     are all in that unit (Lin & Morris's "maxq = 2 packets" becomes 2·`mean_packet_size`
//!     bytes). The early-drop probability is scaled by `size / mean_packet_size` as RED's byte mode
//!     does (Cho's worked example: 0.2 for a 1000-B packet, 0.008 for a 40-B ACK at
//!     `max_p = 0.2`). `count` still counts arrivals. Example: `min_th = 53`, `max_th = 160`,
//!     `minq = 2`, `mean_packet_size = 1000B` are Cho's 53 kB / 160 kB / 2000 B.
//!
//! # Drop kinds and counters
//!
//! [`QdiscStats`]: `drops_early` = probabilistic drops; `drops_forced` = fair-share (per-flow
//! cap, strike, `2·avgcq`) drops **and** drops of the `avg ≥ max_th` region; `drops_overflow` =
//! buffer full. [`FredCounters`] splits `drops_forced` by reason. Per flow, [`Fred::flow_qlen`] and
//! [`Fred::flow_strikes`]; [`Qdisc::flow_estimate`] reports `Nactive`. FRED drops only (no ECN),
//! as in every experiment of the dissertation (§2.0).

use std::collections::HashMap;

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::red_core::{RedConfig, RedState, RedVariant};
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::{FlowId, Packet};
use crate::scenario::units::{Bytes, Limit};

/// Which FRED (see the module docs, "Variants").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FredVariant {
    /// Parris 2001 Fig. 3.14, the many-flows form evaluated in the dissertation.
    #[default]
    Parris,
    /// Lin & Morris 1997 as published: `maxq` switch, the `2·avgcq` clause.
    #[serde(alias = "lin_morris")]
    LinMorris,
}

/// What happens to arrivals that pass the fair-share test while `avg ≥ max_th`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AboveMaxTh {
    /// Fig. 3.14's "two-packet" mode: drop only if the flow holds `max_th_flow_cap` packets.
    FlowCap,
    /// Lin & Morris's "drop-tail mode": drop every such arrival.
    DropAll,
}

impl FredVariant {
    /// The variant's own handling of `avg ≥ max_th`.
    pub fn default_above_max_th(self) -> AboveMaxTh {
        match self {
            FredVariant::Parris => AboveMaxTh::FlowCap,
            FredVariant::LinMorris => AboveMaxTh::DropAll,
        }
    }
}

/// Scenario keys of `kind = "fred"`. Defaults: Table 5.1 (B.29).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FredParams {
    /// Hard buffer limit: packets, bytes, or `"none"`. Default 240 packets.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Minimum threshold on the average (packets), and the per-flow cap (`maxq`); ≥ 1. Default 5.
    #[serde(default = "default_min_th")]
    pub min_th: f64,
    /// Maximum threshold on the average (packets); ≥ `min_th`. Default 60.
    #[serde(default = "default_max_th")]
    pub max_th: f64,
    /// Early-drop probability at `max_th`, in (0, 1]. Default 0.1.
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// EWMA weight `w`, in (0, 1]. Default 1/256.
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Packets a flow may hold before it can be early-dropped (the "robust" test), ≥ 0. Default 2.
    #[serde(default = "default_minq")]
    pub minq: f64,
    /// Packets a flow may hold while `avg ≥ max_th` (Fig. 3.14's 2; Lin & Morris's `maxq = 2`);
    /// ≥ 1. Default 2.
    #[serde(default = "default_max_th_flow_cap")]
    pub max_th_flow_cap: u32,
    /// `"parris"` (Fig. 3.14) or `"lin-morris"` (Lin & Morris 1997). Default parris.
    #[serde(default)]
    pub variant: FredVariant,
    /// `"flow-cap"` or `"drop-all"` while `avg ≥ max_th`. Default: the variant's (parris: flow-cap,
    /// lin-morris: drop-all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above_max_th: Option<AboveMaxTh>,
    /// RED underneath: `"documented"` (Figs. 3.7–3.9) or `"altq"` (ALTQ `altq_red.c`). Default
    /// documented.
    #[serde(default)]
    pub red_variant: RedVariant,
    /// Mean packet size (bytes); link rate / this = packets per second of idle decay. Default
    /// 1000 B (1250 packets/s at 10 Mb/s; ALTQ's default 800 µs per packet).
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    /// Byte mode (choice 10): queue lengths, the average and the per-flow tests in bytes /
    /// `mean_packet_size`, the early-drop probability scaled by `size / mean_packet_size`.
    /// Default false (packets, as the dissertation ran it).
    #[serde(default)]
    pub byte_mode: bool,
}

fn default_limit() -> Limit {
    Limit::Packets(240)
}
fn default_min_th() -> f64 {
    5.0
}
fn default_max_th() -> f64 {
    60.0
}
fn default_max_p() -> f64 {
    0.1
}
fn default_weight() -> f64 {
    1.0 / 256.0
}
fn default_minq() -> f64 {
    2.0
}
fn default_max_th_flow_cap() -> u32 {
    2
}
fn default_mean_packet_size() -> Bytes {
    Bytes(1000)
}

impl FredParams {
    /// The parameters with the variant-dependent default of `above_max_th` written out, for the
    /// scenario echo (`validate --show`) and `aqmlab qdiscs`.
    pub fn filled(mut self) -> Self {
        self.above_max_th.get_or_insert(self.variant.default_above_max_th());
        self
    }

    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Fred> {
        let key = |k: &str| format!("{path}.{k}");
        if !(self.min_th >= 1.0 && self.min_th.is_finite()) {
            return Err(ConfigError::new(
                key("min_th"),
                format!("must be a number of packets >= 1 (it is also the per-flow cap), got {}", self.min_th),
            ));
        }
        if !(self.max_th >= self.min_th && self.max_th.is_finite()) {
            return Err(ConfigError::new(
                key("max_th"),
                format!("must be a finite number >= min_th ({}), got {}", self.min_th, self.max_th),
            ));
        }
        for (k, v) in [("max_p", self.max_p), ("weight", self.weight)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(ConfigError::new(key(k), format!("must be in (0, 1], got {v}")));
            }
        }
        if !(self.minq >= 0.0 && self.minq.is_finite()) {
            return Err(ConfigError::new(key("minq"), format!("must be a non-negative number of packets, got {}", self.minq)));
        }
        if self.max_th_flow_cap == 0 {
            return Err(ConfigError::new(key("max_th_flow_cap"), "must be at least 1 packet, got 0"));
        }
        if self.red_variant == RedVariant::Ns2 {
            return Err(ConfigError::new(key("red_variant"), "ns2 has no FRED; allowed: documented, altq"));
        }
        if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&self.mean_packet_size.0) {
            return Err(crate::error::mean_packet_size_error(key("mean_packet_size"), self.mean_packet_size.0));
        }
        let mean = self.mean_packet_size.0 as f64;
        let cfg = RedConfig {
            variant: self.red_variant,
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            weight: self.weight,
            wait: false,
            gentle: false,
            byte_mode: self.byte_mode,
            mean_packet_size: mean,
            drain_rate: link_rate_bps / (8.0 * mean),
            protected_pkts: 1, // unused: FRED's tests replace RED's decide()
            nonlinear: false,
        };
        let above = self.above_max_th.unwrap_or(self.variant.default_above_max_th());
        Ok(Fred::new(cfg, self.variant, above, self.minq, self.max_th_flow_cap, self.limit))
    }
}

/// Drops of the `Forced` kind, by reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FredCounters {
    /// Fair-share test, `q_len_f ≥ maxq` (`min_th`; `max_th_flow_cap` above `max_th` in lin-morris).
    pub drops_flow_cap: u64,
    /// Fair-share test, `q_len_f ≥ avgcq` with more than one strike.
    pub drops_strike: u64,
    /// Fair-share test, `avg ≥ max_th` and `q_len_f > 2·avgcq` (lin-morris only).
    pub drops_over_share: u64,
    /// The `avg ≥ max_th` region (two-packet or drop-tail mode); no strike.
    pub drops_max_th: u64,
}

/// Per-flow state of a flow with packets queued.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FlowState {
    qlen: u32,
    /// Bytes queued (the byte-mode length).
    qbytes: u64,
    strikes: u32,
}

/// Which clause of the fair-share test caught an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clause {
    FlowCap,
    OverShare,
    Strike,
}

/// FRED over one FIFO buffer.
pub struct Fred {
    cfg: RedConfig,
    red: RedState,
    variant: FredVariant,
    above_max_th: AboveMaxTh,
    minq: f64,
    flow_cap: u32,
    limit: Limit,
    /// Fig. 3.14's `count`: −1 in no-drop mode, arrivals since the last drop otherwise.
    count: i64,
    avgcq: f64,
    /// Only flows with packets queued; `flows.len()` is `Nactive`.
    flows: HashMap<FlowId, FlowState>,
    fifo: Fifo,
    stats: QdiscStats,
    counters: FredCounters,
}

impl Fred {
    /// An empty FRED queue.
    pub fn new(cfg: RedConfig, variant: FredVariant, above_max_th: AboveMaxTh, minq: f64, flow_cap: u32, limit: Limit) -> Fred {
        Fred {
            cfg,
            red: RedState::default(),
            variant,
            above_max_th,
            minq,
            flow_cap,
            limit,
            count: -1,
            avgcq: 1.0,
            flows: HashMap::new(),
            fifo: Fifo::new(limit),
            stats: QdiscStats::default(),
            counters: FredCounters::default(),
        }
    }

    /// `Nactive`: flows with packets queued.
    pub fn nactive(&self) -> usize {
        self.flows.len()
    }

    /// `avgcq` as of the last average update (≥ 1).
    pub fn avgcq(&self) -> f64 {
        self.avgcq
    }

    /// FRED's `count` (−1 in no-drop mode).
    pub fn count(&self) -> i64 {
        self.count
    }

    /// How much `flow` holds in FRED's unit: packets, or bytes / `mean_packet_size` in byte mode.
    pub fn flow_units(&self, flow: FlowId) -> f64 {
        self.flows.get(&flow).map_or(0.0, |f| self.units_of(f))
    }

    fn units_of(&self, f: &FlowState) -> f64 {
        if self.cfg.byte_mode { f.qbytes as f64 / self.cfg.mean_packet_size } else { f.qlen as f64 }
    }

    /// The queue in FRED's unit (packets, or mean-size packets in byte mode).
    fn queued_units(&self) -> f64 {
        if self.cfg.byte_mode { self.fifo.bytes() as f64 / self.cfg.mean_packet_size } else { self.fifo.len() as f64 }
    }

    /// Packets of `flow` queued.
    pub fn flow_qlen(&self, flow: FlowId) -> u32 {
        self.flows.get(&flow).map_or(0, |f| f.qlen)
    }

    /// Strikes of `flow` (0 once its queue has drained).
    pub fn flow_strikes(&self, flow: FlowId) -> u32 {
        self.flows.get(&flow).map_or(0, |f| f.strikes)
    }

    /// Forced drops by reason.
    pub fn counters(&self) -> &FredCounters {
        &self.counters
    }

    /// Fig. 3.13's `compute_avg`: one update of the average (the idle decay if idle, else one
    /// sample of the current queue), then `avgcq`.
    fn compute_avg(&mut self, now: Time) {
        self.red.update_average(&self.cfg, self.queued_units(), now);
        let avg = self.red.average();
        let n = self.flows.len();
        self.avgcq = if n > 0 { avg / n as f64 } else { avg }.max(1.0);
    }

    /// The fair-share test (Fig. 3.14's first test; Lin & Morris's three clauses).
    fn fair_share(&self, qlen: f64, strikes: u32, above: bool) -> Option<Clause> {
        let lin_morris = self.variant == FredVariant::LinMorris;
        let maxq = if lin_morris && above { self.flow_cap as f64 } else { self.cfg.min_th };
        if qlen >= maxq {
            Some(Clause::FlowCap)
        } else if lin_morris && above && qlen > 2.0 * self.avgcq {
            Some(Clause::OverShare)
        } else if qlen >= self.avgcq && strikes > 1 {
            Some(Clause::Strike)
        } else {
            None
        }
    }

    /// RED's early-drop test (Fig. 3.9) with FRED's `count`.
    fn drop_early(&self, avg: f64, size: u32, rng: &mut Rng) -> bool {
        let pb = self.cfg.base_probability(avg);
        let mut pa = self.cfg.spaced_probability(pb, self.count as f64);
        if self.cfg.byte_mode && pa < 1.0 {
            // Byte mode (choice 10): as RED's, pa scaled by the packet's size in mean packets.
            pa = (pa * size as f64 / self.cfg.mean_packet_size).min(1.0);
        }
        pa >= 1.0 || rng.gen::<f64>() < pa
    }

    fn drop(&mut self, kind: DropKind, now: Time, was_idle: bool) -> Verdict {
        if was_idle && self.fifo.is_empty() {
            // Choice 2: still idle; the decay up to `now` is done, so the idle period restarts.
            self.red.on_departure_empty(&self.cfg, now);
            self.red.on_empty_dequeue(&self.cfg, now);
        }
        self.stats.count_drop(kind);
        Verdict::Dropped(kind)
    }
}

impl Qdisc for Fred {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        let strikes = self.flows.get(&pkt.flow).map_or(0, |f| f.strikes);
        let q = self.flow_units(pkt.flow);
        let was_idle = self.red.is_idle();
        if self.fifo.is_empty() {
            self.compute_avg(now);
        }
        let avg = self.red.average();
        let above = avg >= self.cfg.max_th;

        if let Some(clause) = self.fair_share(q, strikes, above) {
            if let Some(f) = self.flows.get_mut(&pkt.flow) {
                f.strikes = f.strikes.saturating_add(1);
            }
            match clause {
                Clause::FlowCap => self.counters.drops_flow_cap += 1,
                Clause::OverShare => self.counters.drops_over_share += 1,
                Clause::Strike => self.counters.drops_strike += 1,
            }
            return self.drop(DropKind::Forced, now, was_idle);
        }

        if avg < self.cfg.min_th {
            self.count = -1;
        } else if !above {
            self.count = self.count.saturating_add(1);
            if q >= self.minq.max(self.avgcq) && self.drop_early(avg, pkt.size, rng) {
                self.count = 0;
                return self.drop(DropKind::Early, now, was_idle);
            }
        } else {
            let dropped = match self.above_max_th {
                AboveMaxTh::FlowCap => q >= self.flow_cap as f64,
                AboveMaxTh::DropAll => true,
            };
            if dropped {
                self.count = 0;
                self.counters.drops_max_th += 1;
                return self.drop(DropKind::Forced, now, was_idle);
            }
        }

        if !self.fifo.admits(self.limit, pkt.size) {
            self.count = 0;
            return self.drop(DropKind::Overflow, now, was_idle);
        }
        let f = self.flows.entry(pkt.flow).or_default();
        f.qlen = f.qlen.saturating_add(1);
        f.qbytes += u64::from(pkt.size);
        self.compute_avg(now);
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let Some(pkt) = self.fifo.pop() else {
            self.red.on_empty_dequeue(&self.cfg, now);
            return None;
        };
        self.stats.dequeues += 1;
        let drained = match self.flows.get_mut(&pkt.flow) {
            Some(f) => {
                f.qlen = f.qlen.saturating_sub(1);
                f.qbytes = f.qbytes.saturating_sub(u64::from(pkt.size));
                f.qlen == 0
            }
            None => false,
        };
        self.compute_avg(now);
        if drained {
            self.flows.remove(&pkt.flow);
        }
        if self.fifo.is_empty() {
            self.red.on_departure_empty(&self.cfg, now);
        }
        Some(pkt)
    }

    super::fifo::fifo_accessors!();
    fn average(&self) -> Option<f64> {
        Some(self.red.average())
    }
    fn flow_estimate(&self) -> Option<f64> {
        Some(self.flows.len() as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    const ACCEPT: Verdict = Verdict::Enqueued;
    const FORCED: Verdict = Verdict::Dropped(DropKind::Forced);
    const EARLY: Verdict = Verdict::Dropped(DropKind::Early);
    const OVERFLOW: Verdict = Verdict::Dropped(DropKind::Overflow);

    fn params(text: &str) -> FredParams {
        toml::from_str(text).unwrap()
    }

    fn error(text: &str) -> String {
        params(text).validate("queue", 10e6).err().map(|e| e.to_string()).unwrap_or_else(|| "no error".into())
    }

    fn pkt(flow: u32, size: u32) -> Packet {
        Packet { size, ..Packet::new(PacketKind::TcpData, flow) }
    }

    /// Every counter and per-flow invariant, checked after each scripted step.
    fn check(q: &Fred) {
        let s = q.stats();
        assert_eq!(s.arrivals, s.enqueues + s.drops(), "arrivals = enqueues + drops of arrivals: {s:?}");
        assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64, "enqueues = dequeues + queued: {s:?}");
        assert_eq!(s.marks, 0);
        let c = q.counters();
        assert_eq!(s.drops_forced, c.drops_flow_cap + c.drops_strike + c.drops_over_share + c.drops_max_th, "{c:?}");
        let mut per_flow: HashMap<u32, u32> = HashMap::new();
        for p in q.fifo.iter() {
            *per_flow.entry(p.flow).or_default() += 1;
        }
        assert_eq!(per_flow.len(), q.nactive(), "Nactive = flows with packets queued");
        for (&f, &n) in &per_flow {
            assert_eq!(q.flow_qlen(f), n, "q_len of flow {f}");
        }
        assert_eq!(q.fifo.iter().map(|p| p.size as u64).sum::<u64>(), q.len_bytes());
        assert!(q.avgcq() >= 1.0);
        let avg = q.average().unwrap();
        assert!(avg.is_finite() && avg >= 0.0, "avg {avg}");
        assert_eq!(q.flow_estimate(), Some(q.nactive() as f64));
    }

    /// A FRED queue driven by a script of arrivals and departures of 1000-byte packets.
    struct Trace {
        q: Fred,
        rng: Rng,
        buf: DropBuf,
        now: Time,
    }

    impl Trace {
        fn new(text: &str) -> Trace {
            Trace::seeded(text, 1)
        }
        fn seeded(text: &str, seed: u64) -> Trace {
            let q = params(text).validate("queue", 10e6).unwrap();
            Trace { q, rng: stream(seed, StreamId::Queue(0)), buf: DropBuf::new(), now: Time::ZERO }
        }
        fn at_us(&mut self, us: u64) {
            self.now = Time(us * 1000);
        }
        fn arrive(&mut self, flow: u32) -> Verdict {
            let v = self.q.enqueue(pkt(flow, 1000), self.now, &mut self.rng, &mut self.buf);
            check(&self.q);
            v
        }
        fn arrive_n(&mut self, flow: u32, n: usize) -> Vec<Verdict> {
            (0..n).map(|_| self.arrive(flow)).collect()
        }
        fn depart(&mut self) -> Option<u32> {
            let p = self.q.dequeue(self.now, &mut self.buf).map(|p| p.flow);
            check(&self.q);
            p
        }
        fn depart_n(&mut self, n: usize) {
            for _ in 0..n {
                assert!(self.depart().is_some());
            }
        }
        fn avg(&self) -> f64 {
            self.q.average().unwrap()
        }
    }

    #[test]
    fn defaults_are_table_5_1() {
        let p = params("");
        assert_eq!(p.limit, Limit::Packets(240));
        assert_eq!((p.min_th, p.max_th, p.max_p, p.weight, p.minq), (5.0, 60.0, 0.1, 1.0 / 256.0, 2.0));
        assert_eq!((p.max_th_flow_cap, p.variant, p.above_max_th, p.red_variant), (2, FredVariant::Parris, None, RedVariant::Documented));
        let q = p.validate("queue", 10e6).unwrap();
        assert_eq!(q.above_max_th, AboveMaxTh::FlowCap);
        assert_eq!(q.cfg.drain_rate, 1250.0, "1000-byte packets at 10 Mb/s: 800 µs each");
        assert_eq!(q.count(), -1);
        let lm = params("variant = \"lin-morris\"").validate("queue", 10e6).unwrap();
        assert_eq!((lm.variant, lm.above_max_th), (FredVariant::LinMorris, AboveMaxTh::DropAll));
        let lm = params("variant = \"lin_morris\"\nabove_max_th = \"flow-cap\"").validate("queue", 10e6).unwrap();
        assert_eq!(lm.above_max_th, AboveMaxTh::FlowCap);
    }

    #[test]
    fn a_flow_over_min_th_is_capped_while_a_low_rate_flow_is_not() {
        // Table 5.1 settings; the average stays far below min_th (w = 1/256), so only the per-flow
        // cap acts: min_th = 5 is also maxq (spec §2.3 "ThMin doubles as the per-flow hard cap").
        let mut t = Trace::new("");
        assert_eq!(t.arrive_n(1, 5), vec![ACCEPT; 5]);
        assert_eq!(t.arrive_n(1, 3), vec![FORCED; 3], "6th..8th packet of a flow holding 5");
        assert_eq!(t.q.flow_strikes(1), 3, "each fair-share drop is a strike");
        assert_eq!(t.arrive(2), ACCEPT, "a flow with nothing queued is never refused");
        assert_eq!(t.q.flow_qlen(1), 5);
        assert_eq!(t.q.flow_qlen(2), 1);
        let s = *t.q.stats();
        assert_eq!((s.arrivals, s.enqueues, s.drops_forced, s.drops_early, s.drops_overflow), (9, 6, 3, 0, 0));
        assert_eq!(t.q.counters().drops_flow_cap, 3);
        assert_eq!(t.q.count(), -1, "no-drop mode throughout");
    }

    #[test]
    fn two_strikes_hold_a_flow_to_its_share_until_its_queue_drains() {
        let mut t = Trace::new("");
        // avg ≈ 0 → avgcq = max(avg/Nactive, 1) = 1 packet throughout.
        assert_eq!(t.arrive_n(1, 6), [vec![ACCEPT; 5], vec![FORCED]].concat());
        t.depart_n(4);
        assert_eq!(t.q.flow_qlen(1), 1);
        assert_eq!(t.arrive(1), ACCEPT, "one strike is not enough (strikes_f > 1)");
        assert_eq!(t.arrive_n(1, 4), [vec![ACCEPT; 3], vec![FORCED]].concat(), "second strike at the cap");
        assert_eq!(t.q.flow_strikes(1), 2);
        t.depart_n(4);
        assert_eq!(t.q.flow_qlen(1), 1);
        assert_eq!(t.q.avgcq(), 1.0);
        assert_eq!(t.arrive(1), FORCED, "q_len_f = 1 ≥ avgcq with 2 strikes");
        assert_eq!(t.q.counters().drops_strike, 1);
        assert_eq!(t.q.flow_strikes(1), 3);
        assert_eq!(t.arrive_n(2, 3), vec![ACCEPT; 3], "a flow without strikes may exceed avgcq");
        assert_eq!(t.depart(), Some(1), "flow 1's last packet leaves");
        assert_eq!(t.q.flow_strikes(1), 0, "strikes are forgotten with the flow's state");
        assert_eq!(t.q.nactive(), 1);
        assert_eq!(t.arrive_n(1, 2), vec![ACCEPT; 2]);
    }

    #[test]
    fn nactive_and_avgcq_follow_figs_3_13_to_3_15() {
        // Weight 1: every update sets avg to the sampled queue length.
        let mut t = Trace::new("weight = 1.0\nmin_th = 10");
        t.arrive_n(0, 4);
        t.arrive_n(1, 4);
        assert_eq!((t.avg(), t.q.nactive(), t.q.avgcq()), (7.0, 2, 3.5), "last sample: 7 queued before the enqueue");
        t.depart_n(3);
        assert_eq!((t.avg(), t.q.nactive(), t.q.avgcq()), (5.0, 2, 2.5), "departures sample after the removal");
        assert_eq!(t.depart(), Some(0));
        assert_eq!(t.avg(), 4.0);
        assert_eq!(t.q.avgcq(), 2.0, "computed before the drained flow leaves Nactive (Fig. 3.15 order)");
        assert_eq!((t.q.nactive(), t.q.flow_qlen(0)), (1, 0));
        assert_eq!(t.arrive(1), ACCEPT);
        assert_eq!((t.avg(), t.q.avgcq()), (4.0, 4.0), "Nactive = 1: avgcq = avg");
        t.depart_n(5);
        assert_eq!((t.avg(), t.q.nactive(), t.q.avgcq()), (0.0, 0, 1.0), "avgcq is at least one packet");
        assert_eq!(t.depart(), None);
    }

    #[test]
    fn average_is_sampled_at_accepted_arrivals_and_departures_never_at_drops() {
        let mut t = Trace::new("weight = 0.5");
        t.arrive_n(0, 5); // samples 0, 1, 2, 3, 4 (the queue before each enqueue)
        assert_eq!(t.avg(), 3.0625);
        assert_eq!(t.arrive(0), FORCED);
        assert_eq!(t.avg(), 3.0625, "a dropped arrival takes no sample (RED would)");
        assert_eq!(t.arrive(1), ACCEPT);
        assert_eq!(t.avg(), 0.5 * 3.0625 + 0.5 * 5.0);
        t.depart();
        assert_eq!(t.avg(), 0.5 * 4.03125 + 0.5 * 5.0, "5 left after the departure");
    }

    #[test]
    fn below_min_th_nothing_is_early_dropped_and_minq_protects_fragile_flows() {
        // Weight 1 and max_p = 1 make every probability exact: pb = (avg − 5)/10.
        for minq in [2, 5] {
            let mut t = Trace::new(&format!("weight = 1.0\nmin_th = 5\nmax_th = 15\nmax_p = 1.0\nminq = {minq}"));
            assert_eq!(t.arrive_n(0, 4), vec![ACCEPT; 4], "avg 0..2 < min_th: no-drop mode even for a robust flow");
            assert_eq!(t.q.count(), -1);
            for f in 1..=2 {
                assert_eq!(t.arrive(f), ACCEPT);
            }
            assert_eq!(t.avg(), 5.0);
            // The next arrival finds avg = 5 = min_th exactly: probabilistic mode (the code's `≤`,
            // spec §2.3 ambiguity 3), and count goes −1 → 0 (no free pass). Flow 3 holds nothing.
            assert_eq!(t.arrive(3), ACCEPT);
            assert_eq!(t.q.count(), 0);
            assert_eq!(t.arrive(9), ACCEPT, "fragile: q_len_f = 0 < max(minq, avgcq)");
            assert_eq!(t.arrive(10), ACCEPT);
            // count 2 → 3 here and avg = 8, pb = 0.3: pa = 0.3/(1 − 0.9) ≥ 1, a certain drop for
            // a tested flow; but flow 9 holds one packet, below max(minq, avgcq = 4/3): not tested.
            assert_eq!(t.arrive(9), ACCEPT, "fragile: q_len_f = 1");
            assert_eq!((t.avg(), t.q.avgcq(), t.q.count()), (9.0, 1.5, 3));
            // Flow 0 holds 4 ≥ avgcq = 1.5; count 4, pb = 0.4, 1 − count·pb < 0: a certain drop if
            // tested, which minq decides.
            if minq == 2 {
                assert_eq!(t.arrive(0), EARLY, "4 ≥ max(minq = 2, avgcq): robust");
                assert_eq!(t.q.count(), 0, "an early drop restarts the spacing");
                assert_eq!(t.q.flow_strikes(0), 0, "early drops are not strikes");
                assert_eq!(*t.q.counters(), FredCounters::default());
                assert_eq!(t.q.stats().drops_early, 1);
            } else {
                assert_eq!(t.arrive(0), ACCEPT, "4 < minq = 5: still protected");
                assert_eq!(t.q.count(), 4);
            }
        }
    }

    #[test]
    fn only_flows_holding_their_share_of_the_average_are_early_dropped() {
        // Few flows, so avgcq = avg/Nactive exceeds minq: it is avgcq that protects flow 1.
        for (flow, verdict) in [(1, ACCEPT), (0, EARLY)] {
            let mut t = Trace::new("weight = 1.0\nmin_th = 9\nmax_th = 11\nmax_p = 1.0");
            t.arrive_n(0, 8);
            t.arrive_n(1, 3);
            assert_eq!((t.avg(), t.q.avgcq(), t.q.count()), (10.0, 5.0, 0));
            // count 1, pb = (10 − 9)/2 = 0.5, pa = 0.5/(1 − 0.5) = 1: certain for a tested flow.
            // Flow 1 holds 3 ≥ minq but < avgcq = 5; flow 0 holds 8.
            assert_eq!(t.arrive(flow), verdict, "flow {flow}");
        }
    }

    #[test]
    fn the_buffer_limit_comes_after_fred_and_restarts_count() {
        // minq = 100: no flow is robust, so nothing is early-dropped.
        let mut t = Trace::new("weight = 1.0\nmin_th = 2\nmax_th = 10\nlimit = 5\nminq = 100");
        t.arrive_n(0, 2);
        for f in 1..=3 {
            assert_eq!(t.arrive(f), ACCEPT);
        }
        assert_eq!((t.q.len_packets(), t.avg(), t.q.count()), (5, 4.0, 1), "full; probabilistic mode since avg 2");
        assert_eq!(t.arrive(0), FORCED, "the fair-share test comes first, even when the buffer is full");
        assert_eq!((t.q.flow_strikes(0), t.q.count()), (1, 1), "a fair-share drop leaves count alone");
        assert_eq!(t.arrive(4), OVERFLOW);
        assert_eq!((t.q.count(), t.avg(), t.q.flow_strikes(4)), (0, 4.0, 0), "count restarts; no sample, no strike");
        t.depart();
        assert_eq!(t.arrive(4), ACCEPT);
    }

    /// 11 packets queued (flow 0 holds 2, flows 1–9 one each) and avg = 10 = max_th.
    fn above_max_th(text: &str) -> Trace {
        let mut t = Trace::new(&format!("weight = 1.0\nmin_th = 5\nmax_th = 10\nlimit = 100\n{text}"));
        assert_eq!(t.arrive_n(0, 2), vec![ACCEPT; 2]);
        for f in 1..=9 {
            assert_eq!(t.arrive(f), ACCEPT);
        }
        assert_eq!((t.avg(), t.q.nactive(), t.q.avgcq()), (10.0, 10, 1.0));
        t
    }

    #[test]
    fn above_max_th_parris_keeps_two_packets_per_flow_so_many_flows_fill_the_buffer() {
        let mut t = above_max_th("");
        assert_eq!(t.arrive(0), FORCED, "flow 0 already holds 2");
        assert_eq!((t.q.flow_strikes(0), t.q.counters().drops_max_th), (0, 1), "two-packet mode gives no strike");
        assert_eq!(t.q.count(), 0);
        assert_eq!(t.arrive(1), ACCEPT, "flow 1 holds 1: may take a second slot");
        assert_eq!(t.arrive(1), FORCED);
        assert_eq!(t.arrive(50), ACCEPT, "a new flow gets in");
        // One packet each from 100 more flows: the queue grows far past max_th up to the limit
        // (the Ch. V BULK effect: "only q_limit bounds the queue").
        let v: Vec<Verdict> = (100..200).map(|f| t.arrive(f)).collect();
        assert_eq!(v, [vec![ACCEPT; 87], vec![OVERFLOW; 13]].concat());
        assert_eq!(t.q.len_packets(), 100);
        assert!(t.avg() > 90.0);
        assert!(t.q.flows.values().all(|f| f.qlen <= 2));
    }

    #[test]
    fn above_max_th_lin_morris_strikes_at_maxq_2_and_drops_everything_else() {
        let mut t = above_max_th("variant = \"lin-morris\"");
        assert_eq!(t.arrive(0), FORCED, "maxq = 2 once avg ≥ max_th");
        assert_eq!((t.q.flow_strikes(0), t.q.counters().drops_flow_cap), (1, 1), "…and it is a strike");
        assert_eq!(t.arrive(1), FORCED, "drop-tail mode: holding 1 does not help");
        assert_eq!(t.arrive(50), FORCED, "nor holding nothing");
        assert_eq!((t.q.flow_strikes(1), t.q.counters().drops_max_th), (0, 2));
        let v: Vec<Verdict> = (100..200).map(|f| t.arrive(f)).collect();
        assert_eq!(v, vec![FORCED; 100]);
        assert_eq!(t.q.len_packets(), 11, "the queue stays at max_th + 1");

        // The published maxq switch without drop-tail mode (above_max_th = "flow-cap").
        let mut t = above_max_th("variant = \"lin-morris\"\nabove_max_th = \"flow-cap\"");
        assert_eq!(t.arrive(0), FORCED);
        assert_eq!(t.q.flow_strikes(0), 1);
        assert_eq!(t.arrive(1), ACCEPT);
        // And the dissertation's flow-cap branch replaced by drop-all, for the other reading.
        let mut t = above_max_th("above_max_th = \"drop-all\"");
        assert_eq!(t.arrive(1), FORCED);
        assert_eq!(t.q.flow_strikes(1), 0);
    }

    #[test]
    fn lin_morris_two_avgcq_clause_needs_a_cap_above_three() {
        // min_th 8, max_th 12, cap 10: flow 0 queues 6 while avg < min_th, 7 more flows one each.
        let base = "weight = 1.0\nmin_th = 8\nmax_th = 12\nmax_th_flow_cap = 10\nabove_max_th = \"flow-cap\"\n";
        for variant in ["parris", "lin-morris"] {
            let mut t = Trace::new(&format!("{base}variant = \"{variant}\""));
            assert_eq!(t.arrive_n(0, 6), vec![ACCEPT; 6]);
            for f in 1..=7 {
                assert_eq!(t.arrive(f), ACCEPT);
            }
            assert_eq!((t.avg(), t.q.nactive(), t.q.avgcq()), (12.0, 8, 1.5));
            // Flow 0 holds 6 > 2·avgcq = 3, below maxq = 10 and min_th = 8.
            if variant == "parris" {
                assert_eq!(t.arrive(0), ACCEPT, "Fig. 3.14 has no 2·avgcq clause");
            } else {
                assert_eq!(t.arrive(0), FORCED);
                assert_eq!((t.q.counters().drops_over_share, t.q.flow_strikes(0)), (1, 1));
            }
            assert_eq!(t.arrive(1), ACCEPT, "holding 1 ≤ 2·avgcq");
        }
    }

    #[test]
    fn idle_queue_decays_the_average_once_then_samples() {
        // w = 1/2, 1250-byte packets at 10 Mb/s: 1000 packet times per second.
        for red_variant in ["documented", "altq"] {
            let mut t = Trace::new(&format!("weight = 0.5\nmean_packet_size = \"1250B\"\nred_variant = \"{red_variant}\""));
            t.arrive_n(0, 4);
            t.depart_n(4); // samples 3, 2, 1, 0
            assert_eq!(t.avg(), 0.8203125);
            assert_eq!(t.depart(), None, "the link finds the queue empty (ALTQ's idle start)");
            t.at_us(10_500); // 10.5 packet times idle: n = trunc(10.5 − 1) = 9
            assert_eq!(t.arrive(1), ACCEPT);
            let decayed = match red_variant {
                // Decay only, then FRED's pre-enqueue sample of the empty queue.
                "documented" => 0.8203125 * 0.5f64.powi(9) * 0.5,
                // ALTQ adds its own zero sample after the decay.
                _ => 0.8203125 * 0.5f64.powi(9) * 0.25,
            };
            assert_eq!(t.avg(), decayed, "{red_variant}");
            t.at_us(20_000);
            assert_eq!(t.arrive(1), ACCEPT);
            assert_eq!(t.avg(), 0.5 * decayed + 0.5, "{red_variant}: the queue was not empty, no decay");
        }
    }

    #[test]
    fn a_dropped_arrival_after_idle_restarts_the_idle_period() {
        let mut t = Trace::new("variant = \"lin-morris\"");
        // White box: put avg = 100 (above max_th = 60) and leave the queue idle from t = 0.
        let one = RedConfig { weight: 1.0, ..t.q.cfg };
        t.q.red.update_average(&one, 100.0, Time::ZERO); // ends the initial idle period
        t.q.red.update_average(&one, 100.0, Time::ZERO);
        t.q.red.on_departure_empty(&t.q.cfg, Time::ZERO);
        let k = 255.0f64 / 256.0;
        t.at_us(8_400); // 10.5 packet times at 1250 pkt/s: n = 9
        assert_eq!(t.arrive(1), FORCED, "drop-tail mode");
        assert!((t.avg() - 100.0 * k.powi(9)).abs() < 1e-9);
        assert!(t.q.red.is_idle(), "still idle, from 8.4 ms");
        t.at_us(16_800);
        assert_eq!(t.arrive(2), FORCED);
        assert!((t.avg() - 100.0 * k.powi(18)).abs() < 1e-9, "decayed for the second idle stretch: {}", t.avg());
    }

    #[test]
    fn altq_red_spaces_early_drops_with_2_minus_count_pb() {
        // The robust arrival sees count = 2 and pb = 0.2: documented pa = 0.2/(1 − 0.4) = 1/3,
        // ALTQ pa = 0.2/(2 − 0.4) = 1/8. It is the only random draw of the trace.
        let runs = 3000;
        let drops = |red_variant: &str| {
            (0..runs)
                .filter(|&seed| {
                    let mut t = Trace::seeded(&format!("weight = 1.0\nmax_th = 15\nmax_p = 1.0\nred_variant = \"{red_variant}\""), seed);
                    t.arrive_n(0, 3);
                    for f in 1..=5 {
                        t.arrive(f);
                    }
                    assert_eq!((t.avg(), t.q.count()), (7.0, 1));
                    t.arrive(0) == EARLY
                })
                .count()
        };
        let (documented, altq) = (drops("documented"), drops("altq"));
        // Expected 1000 (sd 26) and 375 (sd 18).
        assert!((900..1100).contains(&documented), "documented {documented}");
        assert!((310..440).contains(&altq), "altq {altq}");
    }

    #[test]
    fn random_traffic_keeps_every_invariant_in_every_configuration() {
        let configs = [
            "",
            "variant = \"lin-morris\"",
            "variant = \"lin-morris\"\nabove_max_th = \"flow-cap\"\nmax_th_flow_cap = 6\nmin_th = 8\nmax_th = 12\nweight = 1.0",
            "red_variant = \"altq\"\nweight = 0.5\nmin_th = 2\nmax_th = 6",
            "limit = \"20KB\"\nweight = 0.1",
            "limit = \"none\"\nmin_th = 3\nmax_th = 3\nmax_p = 1.0\nweight = 1.0",
            "above_max_th = \"drop-all\"\nminq = 0\nmin_th = 1\nmax_th = 1\nlimit = 1",
        ];
        for (i, text) in configs.iter().enumerate() {
            let mut t = Trace::seeded(text, i as u64);
            let mut driver = stream(99, StreamId::Queue(i as u32));
            let cap = t.q.cfg.min_th.ceil().max(t.q.flow_cap as f64) as u32;
            for _ in 0..20_000 {
                let step: u64 = if driver.gen_bool(0.001) { 200_000 } else { driver.gen_range(0..1_000) };
                t.now = Time(t.now.0 + step * 1000);
                if driver.gen_bool(0.55) {
                    let flow = if driver.gen_bool(0.4) { 0 } else { driver.gen_range(1..60) };
                    let size = driver.gen_range(40..=1500);
                    t.q.enqueue(pkt(flow, size), t.now, &mut t.rng, &mut t.buf);
                } else {
                    t.q.dequeue(t.now, &mut t.buf);
                }
                check(&t.q);
                assert!(t.q.flows.values().all(|f| f.qlen <= cap), "config {i}");
            }
            assert!(t.buf.is_empty(), "FRED drops only arrivals");
            let s = t.q.stats();
            assert!(s.enqueues > 1000 && s.drops() > 0, "config {i}: {s:?}");
        }
    }

    #[test]
    fn bad_parameters_name_the_key_and_the_allowed_range() {
        assert!(error("min_th = 0").starts_with("queue.min_th: must be a number of packets >= 1"));
        assert!(error("min_th = 0.5").starts_with("queue.min_th"));
        assert!(error("min_th = 20\nmax_th = 10").starts_with("queue.max_th: must be a finite number >= min_th (20)"));
        assert!(error("max_th = inf").starts_with("queue.max_th"));
        for bad in ["max_p = 0", "max_p = 1.5", "weight = 0", "weight = 2", "weight = nan"] {
            let e = error(bad);
            let key = bad.split(' ').next().unwrap();
            assert!(e.starts_with(&format!("queue.{key}")) && e.contains("(0, 1]"), "{bad}: {e}");
        }
        assert!(error("minq = -1").starts_with("queue.minq"));
        assert!(error("max_th_flow_cap = 0").starts_with("queue.max_th_flow_cap"));
        assert!(error("red_variant = \"ns2\"").starts_with("queue.red_variant") && error("red_variant = \"ns2\"").contains("documented, altq"));
        assert!(error("mean_packet_size = \"0B\"").starts_with("queue.mean_packet_size"));
        assert_eq!(error("min_th = 10\nmax_th = 10"), "no error", "equal thresholds: no probabilistic region");
    }

    const SCENARIO: &str = r#"
[run]
duration = "20s"
warmup = "5s"

[topology]
bottleneck = { rate = "10Mbps", delay = "10ms" }

[queue]
kind = "fred"
variant = "lin-morris"

[[flows]]
kind = "tcp"
count = 8

[[flows]]
kind = "udp-cbr"
rate = "10Mbps"
packet_size = "1000B"
"#;

    #[test]
    fn registered_as_kind_fred_with_catalog_entry() {
        use crate::scenario::{parse_toml, QueueSpec, QDISC_KINDS};
        let s = parse_toml(SCENARIO).unwrap();
        assert!(matches!(s.queue, QueueSpec::Fred(_)));
        let echo = &s.echo["queue"];
        assert_eq!((echo["kind"].as_str(), echo["variant"].as_str(), echo["min_th"].as_f64()), (Some("fred"), Some("lin-morris"), Some(5.0)));
        assert_eq!(echo["limit"], 240);
        let err = |from: &str, to: &str| parse_toml(&SCENARIO.replace(from, to)).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err("variant = \"lin-morris\"", "bogus = 1").starts_with("queue.bogus"));
        assert!(err("\"lin-morris\"", "\"floyd\"").starts_with("queue.variant"));
        assert!(err("variant = \"lin-morris\"", "max_p = 2.0").starts_with("queue.max_p"));
        assert!(QDISC_KINDS.contains(&"fred"));
        let catalog = crate::qdisc::catalog();
        let entry = catalog.as_array().unwrap().iter().find(|e| e["kind"] == "fred").unwrap();
        assert_eq!(entry["params"]["min_th"], 5.0);
        assert_eq!(entry["params"]["max_th"], 60.0);
        let docs = entry["docs"].as_object().unwrap();
        for key in entry["params"].as_object().unwrap().keys() {
            assert!(docs.contains_key(key), "catalog docs lack {key}");
        }
        assert!(docs.contains_key("above_max_th"));
    }

    #[test]
    fn fred_holds_a_udp_blast_near_a_fair_share_where_drop_tail_does_not() {
        // Ch. III/V in miniature: 8 TCP flows and one 10 Mb/s CBR flow on a 10 Mb/s link.
        let udp_share = |queue: &str| {
            let text = SCENARIO.replace("kind = \"fred\"\nvariant = \"lin-morris\"", queue);
            let sc = crate::scenario::parse_toml(&text).unwrap();
            let out = crate::run::simulate(&sc, None, |_| true).unwrap();
            let flows = out.flows();
            let goodput = |f: &serde_json::Value| f["goodput_bps"].as_f64().unwrap();
            let total: f64 = flows.iter().map(goodput).sum();
            let q = &out.summary["queues"][0];
            assert_eq!(q["arrivals"].as_u64(), Some(q["enqueues"].as_u64().unwrap() + q["drops"].as_u64().unwrap()));
            (goodput(&flows[8]) / total, total)
        };
        let (droptail, _) = udp_share("kind = \"droptail\"\nlimit = 60");
        for queue in ["kind = \"fred\"", "kind = \"fred\"\nvariant = \"lin-morris\""] {
            let (fred, total) = udp_share(queue);
            assert!(total > 8e6, "{queue}: link used, {total}");
            assert!(fred < 0.5 * droptail && fred < 0.35, "{queue}: UDP share {fred} vs drop-tail {droptail}");
        }
    }

    #[test]
    fn many_flows_push_the_parris_queue_past_max_th_but_not_lin_morris() {
        // Ch. V's BULK effect (evaluation spec §4.4): with many TCP flows each allowed 2 packets
        // above max_th, the dissertation's FRED queue is bounded only by the limit; the published
        // FRED's drop-tail mode keeps it near max_th = 60. 150 flows, Table 5.1 settings.
        let mean_len = |variant: &str| {
            let text = format!(
                "[run]\nduration = \"20s\"\nwarmup = \"5s\"\n[topology]\nbottleneck = {{ rate = \"10Mbps\", delay = \"10ms\" }}\n\
                 [queue]\nkind = \"fred\"\nvariant = \"{variant}\"\n[[flows]]\nkind = \"tcp\"\ncount = 150\nstart_jitter = \"1s\"\n"
            );
            let sc = crate::scenario::parse_toml(&text).unwrap();
            let out = crate::run::simulate(&sc, None, |_| true).unwrap();
            let q = &out.summary["queues"][0];
            assert!(q["utilization"].as_f64().unwrap() > 0.95);
            q["mean_len_packets"].as_f64().unwrap()
        };
        let (parris, lin_morris) = (mean_len("parris"), mean_len("lin-morris"));
        assert!(parris > 100.0, "parris mean queue {parris}");
        assert!(lin_morris < 70.0, "lin-morris mean queue {lin_morris}");
    }

    #[test]
    fn byte_mode_counts_bytes_against_the_thresholds() {
        // Cho 2002's FRED: min_th 53, max_th 160 (kB as 1000-B mean packets), minq 2000 B. A flow
        // of 500-B packets holds 2 mean packets after 4 of them, so the per-flow cap min_th = 5
        // mean packets (5000 B) is reached after 10 small packets, not 5.
        let text = "byte_mode = true\nmin_th = 5\nmax_th = 160\nlimit = \"320000B\"\nweight = 0.002";
        let q = params(text).validate("queue", 20e6).unwrap();
        let mut t = Trace { q, rng: stream(1, StreamId::Queue(0)), buf: DropBuf::new(), now: Time::ZERO };
        let mut v = Vec::new();
        for _ in 0..11 {
            v.push(t.q.enqueue(pkt(1, 500), t.now, &mut t.rng, &mut t.buf));
            check(&t.q);
        }
        assert!(v[..10].iter().all(|x| *x == ACCEPT), "{v:?}");
        assert_eq!(v[10], FORCED, "q_len_f = 5000 B = min_th");
        assert_eq!(t.q.flow_units(1), 5.0);
        assert_eq!(t.q.flow_qlen(1), 10);
        // The same in packet mode: the cap is 5 packets whatever their size.
        let q = params("min_th = 5\nmax_th = 160\nweight = 0.002").validate("queue", 20e6).unwrap();
        let mut t = Trace { q, rng: stream(1, StreamId::Queue(0)), buf: DropBuf::new(), now: Time::ZERO };
        let v: Vec<_> = (0..6).map(|_| t.q.enqueue(pkt(1, 500), t.now, &mut t.rng, &mut t.buf)).collect();
        assert_eq!(v[5], FORCED);
    }

    #[test]
    fn byte_mode_scales_the_early_drop_probability_by_size() {
        // Hand calculation: with count = 0, pa = pb; byte mode multiplies by size/mean. Cho's worked
        // example (spec §5.2): at pb = 0.2 a 1000-B packet is dropped w.p. 0.2, a 40-B ACK w.p. 0.008.
        let q = params("byte_mode = true\nmax_p = 0.2").validate("queue", 20e6).unwrap();
        let mut fred = q;
        fred.count = 0;
        let avg = fred.cfg.min_th + (fred.cfg.max_th - fred.cfg.min_th); // pb = max_p just at max_th
        let hits = |fred: &Fred, size: u32| {
            let mut rng = stream(9, StreamId::Queue(0));
            (0..200_000).filter(|_| fred.drop_early(avg - 1e-9, size, &mut rng)).count() as f64 / 200_000.0
        };
        let (big, ack) = (hits(&fred, 1000), hits(&fred, 40));
        assert!((big - 0.2).abs() < 0.005, "1000 B: {big}");
        assert!((ack - 0.008).abs() < 0.001, "40 B: {ack}");
    }
}
