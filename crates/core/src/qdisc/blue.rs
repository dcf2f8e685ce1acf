//! BLUE (Feng, Shin, Kandlur & Saha, "The BLUE Active Queue Management Algorithms", IEEE/ACM ToN
//! 10(4), 2002, §III), with a switch for the per-packet rule Linux's `sch_sfb.c` applies to each
//! of its bins (Linux has no stand-alone BLUE; `variant = "linux"` is that rule on one bin, the
//! whole queue).
//!
//! One drop/mark probability `p_m`, every arrival dropped (or CE-marked) with probability `p_m`
//! (one uniform draw per arrival that fits the buffer). `p_m` is driven by events, not by a queue
//! average (the paper's Fig. 3):
//! * congestion event, a buffer overflow (`trigger = "overflow"`) or, with `trigger =
//!   "threshold"`, an arrival that finds more than `threshold` packets queued (the paper's
//!   variation "increase p_m when the queue exceeds L", §III): `p_m += d1`;
//! * link-idle event, a dequeue that finds the queue empty or an arrival that does: `p_m -= d2`;
//! * either change only if `now − last_update > freeze_time`, then `last_update = now` (one
//!   `last_update` for both directions, as in Fig. 3). `p_m` is clamped to [0, 1].
//!
//! Worked number: from `p_m = 0`, 5 s of continuous overflow with the defaults (freeze 100 ms,
//! strictly more than 100 ms between changes: one change every event just past 100 ms) raises
//! `p_m` by at most 49 × 0.0025 ≈ 0.12.
//!
//! Defaults (d1 = 0.0025, d2 = 0.00025, freeze_time = 100 ms) are one of the configurations of the
//! paper's §IV experiments (d1 an order of magnitude above d2 so that BLUE reacts to load increases
//! faster than it forgets them); they are also the defaults of the authors' ns code as ported to
//! ns-3. The default `limit` (1000 packets) is Linux's `tx_queue_len`: the paper varies the buffer.
//!
//! `variant = "linux"` (each bin of `sch_sfb.c`, with the whole queue as the bin): the update runs
//! on every arrival, with no freeze time: `p_m −= d2` if the queue is empty, else `p_m += d1` if
//! it holds at least `threshold` packets (the `target` of `tc sfb`); no change on overflow; an
//! arrival picked with probability `p_m` is dropped outright with probability `2(p_m − ½)` when
//! `p_m > ½`, else marked if ECN-capable and `ecn` is on, else dropped. `trigger` and
//! `freeze_time` are ignored under this variant.
//!
//! ECN: Linux marks every ECN-capable packet it picks (no switch); here `ecn` (default off) decides
//! for both variants, so drop-only runs stay comparable with the paper's drop experiments.

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::{Ecn, Packet};
use crate::scenario::units::{Duration, Limit};

/// Which published form of BLUE to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlueVariant {
    /// The paper's Fig. 3: event-driven, rate-limited by `freeze_time`.
    #[default]
    Paper,
    /// The per-arrival rule of a Linux `sch_sfb.c` bin.
    Linux,
}

/// What counts as a congestion event under the paper variant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlueTrigger {
    /// Only a buffer overflow (the paper's base algorithm).
    #[default]
    Overflow,
    /// Also an arrival finding more than `threshold` packets queued (§III's variation).
    Threshold,
}

/// Scenario keys of `kind = "blue"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct BlueParams {
    /// `"paper"` (default) or `"linux"`.
    #[serde(default)]
    pub variant: BlueVariant,
    /// Buffer: packets (integer) or bytes (`"150KB"`). Default 1000 packets.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// `"overflow"` (default) or `"threshold"`.
    #[serde(default)]
    pub trigger: BlueTrigger,
    /// Queue length L, packets, above which an arrival is a congestion event (`trigger =
    /// "threshold"`; the linux variant's `target`). Default: half the packet limit (half of
    /// `limit / 1500 B` for a byte limit, 500 for no limit).
    #[serde(default)]
    pub threshold: Option<u64>,
    /// Increment of `p_m` per congestion event. Default 0.0025.
    #[serde(default = "default_d1")]
    pub d1: f64,
    /// Decrement of `p_m` per link-idle event. Default 0.00025.
    #[serde(default = "default_d2")]
    pub d2: f64,
    /// Least time between two changes of `p_m`. Default 100 ms.
    #[serde(default = "default_freeze_time")]
    pub freeze_time: Duration,
    /// CE-mark ECN-capable packets instead of dropping them. Default false.
    #[serde(default)]
    pub ecn: bool,
}

fn default_limit() -> Limit {
    Limit::Packets(1000)
}
fn default_d1() -> f64 {
    0.0025
}
fn default_d2() -> f64 {
    0.00025
}
fn default_freeze_time() -> Duration {
    Duration(Dur::from_millis(100))
}

impl Default for BlueParams {
    fn default() -> Self {
        BlueParams {
            variant: BlueVariant::default(),
            limit: default_limit(),
            trigger: BlueTrigger::default(),
            threshold: None,
            d1: default_d1(),
            d2: default_d2(),
            freeze_time: default_freeze_time(),
            ecn: false,
        }
    }
}

/// Checks that `v` is a probability step in [0, 1].
pub(crate) fn check_step(path: &str, key: &str, v: f64) -> ConfigResult<()> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::new(join(path, key), format!("must be a probability step in [0, 1], got {v}")))
    }
}

impl BlueParams {
    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<Blue> {
        check_step(path, "d1", self.d1)?;
        check_step(path, "d2", self.d2)?;
        let threshold = match (self.threshold, self.limit) {
            (Some(t), Limit::Packets(n)) if t >= n => {
                return Err(ConfigError::new(
                    join(path, "threshold"),
                    format!("must be below the packet limit ({n}), got {t}"),
                ));
            }
            (Some(0), _) => return Err(ConfigError::new(join(path, "threshold"), "must be at least 1 packet, got 0")),
            (Some(t), _) => t,
            (None, Limit::Packets(n)) => (n / 2).max(1),
            (None, Limit::Bytes(b)) => (b / 1500 / 2).max(1),
            (None, Limit::Unlimited) => 500,
        };
        Ok(Blue {
            fifo: Fifo::new(self.limit),
            stats: QdiscStats::default(),
            p: 0.0,
            last_update_at: None,
            threshold,
            cfg: self.clone(),
        })
    }
}

/// BLUE over a FIFO.
pub struct Blue {
    cfg: BlueParams,
    /// The resolved `threshold`, packets.
    threshold: u64,
    fifo: Fifo,
    stats: QdiscStats,
    /// The marking probability p_m, in [0, 1].
    p: f64,
    /// When p_m last changed (paper variant); `None` before the first change.
    last_update_at: Option<Time>,
}

impl Blue {
    /// The marking probability p_m.
    pub fn marking_probability(&self) -> f64 {
        self.p
    }

    /// The resolved congestion threshold L, packets.
    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Whether the freeze time allows a change at `now` (Fig. 3: `now − last_update > freeze_time`).
    fn thawed(&self, now: Time) -> bool {
        self.last_update_at.is_none_or(|t| now.saturating_since(t) > self.cfg.freeze_time.0)
    }

    /// A congestion event at `now` (paper variant).
    fn on_congestion(&mut self, now: Time) {
        if self.thawed(now) {
            self.p = (self.p + self.cfg.d1).min(1.0);
            self.last_update_at = Some(now);
        }
    }

    /// A link-idle event at `now` (paper variant).
    fn on_idle(&mut self, now: Time) {
        if self.thawed(now) {
            self.p = (self.p - self.cfg.d2).max(0.0);
            self.last_update_at = Some(now);
        }
    }

    /// Whether an arrival picked for notification is CE-marked rather than dropped.
    fn marks(&self, pkt: &Packet) -> bool {
        self.cfg.ecn && pkt.ecn != Ecn::NotEct
    }
}

impl Qdisc for Blue {
    fn enqueue(&mut self, mut pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        let len = self.fifo.len() as u64;
        let linux = self.cfg.variant == BlueVariant::Linux;
        if linux {
            if len == 0 {
                self.p = (self.p - self.cfg.d2).max(0.0);
            } else if len >= self.threshold {
                self.p = (self.p + self.cfg.d1).min(1.0);
            }
        } else if len == 0 {
            self.on_idle(now);
        }
        if !self.fifo.admits(self.cfg.limit, pkt.size) {
            if !linux {
                self.on_congestion(now);
            }
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        if !linux && self.cfg.trigger == BlueTrigger::Threshold && len > self.threshold {
            self.on_congestion(now);
        }
        let mut verdict = Verdict::Enqueued;
        if self.p > 0.0 {
            let u: f64 = rng.gen();
            if u < self.p {
                // Linux: above ½ "either this flow is unresponsive or we're badly congested": drop
                // a share 2(p − ½) of the picked packets even when they could be marked.
                let hard = linux && self.p > 0.5 && u < 2.0 * (self.p - 0.5);
                if hard || !self.marks(&pkt) {
                    self.stats.count_drop(DropKind::Early);
                    return Verdict::Dropped(DropKind::Early);
                }
                pkt.ecn = Ecn::Ce;
                self.stats.marks += 1;
                verdict = Verdict::Marked;
            }
        }
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        verdict
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let Some(pkt) = self.fifo.pop() else {
            if self.cfg.variant == BlueVariant::Paper {
                self.on_idle(now);
            }
            return None;
        };
        self.stats.dequeues += 1;
        Some(pkt)
    }

    super::fifo::fifo_accessors!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    const DATA: Packet = Packet { size: 1000, ..Packet::new(PacketKind::Udp, 0) };
    const MS: u64 = 1_000_000;

    fn blue(params: BlueParams) -> Blue {
        params.validate("queue").unwrap()
    }

    fn io() -> (Rng, DropBuf) {
        (stream(7, StreamId::Queue(0)), DropBuf::new())
    }

    /// A queue of `limit` packets, full at t = 0, p_m still 0.
    fn full(limit: u64, params: BlueParams) -> Blue {
        let mut q = blue(BlueParams { limit: Limit::Packets(limit), ..params });
        for _ in 0..limit {
            q.fifo.push(DATA, Time(0));
        }
        q
    }

    #[test]
    fn overflow_raises_p_at_most_once_per_freeze_time() {
        let (mut rng, mut drops) = io();
        let mut q = full(10, BlueParams::default());
        // Overflow at 0 ms: the first event changes p_m (no earlier change).
        assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
        assert_eq!(q.marking_probability(), 0.0025);
        // Overflows every ms until 100 ms: frozen (100 ms is not *more* than freeze_time).
        for t in 1..=100 {
            q.enqueue(DATA, Time(t * MS), &mut rng, &mut drops);
        }
        assert_eq!(q.marking_probability(), 0.0025);
        // 101 ms: thawed, second increment.
        q.enqueue(DATA, Time(101 * MS), &mut rng, &mut drops);
        assert!((q.marking_probability() - 0.005).abs() < 1e-15);
        // 1 s of overflow every ms from there: one change per 101 ms, 9 more.
        for t in 102..=1101 {
            q.enqueue(DATA, Time(t * MS), &mut rng, &mut drops);
        }
        assert!((q.marking_probability() - 11.0 * 0.0025).abs() < 1e-12, "{}", q.marking_probability());
    }

    #[test]
    fn idle_link_lowers_p_by_d2() {
        let (_, mut drops) = io();
        let mut q = blue(BlueParams::default());
        q.p = 0.01;
        // A dequeue that finds nothing is a link-idle event.
        assert!(q.dequeue(Time(0), &mut drops).is_none());
        assert!((q.marking_probability() - 0.00975).abs() < 1e-15);
        // Idle again within the freeze time: no change; after it, another d2.
        q.dequeue(Time(50 * MS), &mut drops);
        assert!((q.marking_probability() - 0.00975).abs() < 1e-15);
        q.dequeue(Time(101 * MS), &mut drops);
        assert!((q.marking_probability() - 0.0095).abs() < 1e-15);
        // p_m never goes below 0.
        q.p = 0.0001;
        q.dequeue(Time(300 * MS), &mut drops);
        assert_eq!(q.marking_probability(), 0.0);
    }

    #[test]
    fn arrival_into_an_empty_queue_is_an_idle_event() {
        let (mut rng, mut drops) = io();
        let mut q = blue(BlueParams { d2: 0.001, ..BlueParams::default() });
        q.p = 0.002;
        let u_first: f64 = stream(7, StreamId::Queue(0)).gen();
        let v = q.enqueue(DATA, Time(0), &mut rng, &mut drops);
        assert!((q.marking_probability() - 0.001).abs() < 1e-15);
        // The arrival then sees the lowered p_m (one draw).
        assert_eq!(v == Verdict::Enqueued, u_first >= 0.001);
    }

    #[test]
    fn threshold_trigger_raises_p_before_the_buffer_overflows() {
        let (mut rng, mut drops) = io();
        let mut q = blue(BlueParams { trigger: BlueTrigger::Threshold, threshold: Some(5), limit: Limit::Packets(100), ..BlueParams::default() });
        for _ in 0..5 {
            q.fifo.push(DATA, Time(0));
        }
        // 5 queued: not above L = 5.
        q.enqueue(DATA, Time(MS), &mut rng, &mut drops);
        assert_eq!(q.marking_probability(), 0.0);
        // 6 queued: above L, a congestion event before the draw (which, at p_m = 0.0025, may drop
        // the packet, so only the probability is asserted).
        q.enqueue(DATA, Time(2 * MS), &mut rng, &mut drops);
        assert_eq!(q.marking_probability(), 0.0025);
        // The overflow-only default ignores the same queue.
        let mut o = blue(BlueParams { limit: Limit::Packets(100), ..BlueParams::default() });
        for _ in 0..50 {
            o.fifo.push(DATA, Time(0));
        }
        o.enqueue(DATA, Time(MS), &mut rng, &mut drops);
        assert_eq!(o.marking_probability(), 0.0);
    }

    #[test]
    fn p_one_drops_every_arrival_and_ecn_marks_instead() {
        let (mut rng, mut drops) = io();
        let mut q = blue(BlueParams::default());
        q.p = 1.0;
        q.fifo.push(DATA, Time(0)); // not empty: no idle event
        for _ in 0..100 {
            assert_eq!(q.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Early));
        }
        let mut e = blue(BlueParams { ecn: true, ..BlueParams::default() });
        e.p = 1.0;
        e.fifo.push(DATA, Time(0));
        let ect = Packet { ecn: Ecn::Ect, ..DATA };
        assert_eq!(e.enqueue(ect, Time(0), &mut rng, &mut drops), Verdict::Marked);
        assert_eq!(e.peek().map(|p| p.ecn), Some(Ecn::NotEct));
        assert_eq!(e.fifo.iter().last().map(|p| p.ecn), Some(Ecn::Ce));
        assert_eq!(e.enqueue(DATA, Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Early), "not ECT");
        assert_eq!(e.stats().marks, 1);
    }

    #[test]
    fn linux_variant_updates_every_arrival_and_drops_ecn_above_half() {
        let (mut rng, mut drops) = io();
        let mut q = blue(BlueParams { variant: BlueVariant::Linux, threshold: Some(3), d1: 0.1, d2: 0.05, ecn: true, ..BlueParams::default() });
        for _ in 0..3 {
            q.fifo.push(DATA, Time(0));
        }
        // 3 ≥ target: every arrival at the same instant adds d1 (no freeze time).
        for _ in 0..4 {
            q.enqueue(Packet { ecn: Ecn::Ect, ..DATA }, Time(0), &mut rng, &mut drops);
        }
        assert!(q.marking_probability() > 0.39, "{}", q.marking_probability());
        q.p = 0.9;
        let v: Vec<_> = (0..400).map(|_| q.enqueue(Packet { ecn: Ecn::Ect, ..DATA }, Time(0), &mut rng, &mut drops)).collect();
        let dropped = v.iter().filter(|v| matches!(v, Verdict::Dropped(DropKind::Early))).count();
        assert!(dropped > 250, "ECT packets still dropped above p = 1/2: {dropped}");
        // Empty queue at arrival: minus d2.
        let mut e = blue(BlueParams { variant: BlueVariant::Linux, d2: 0.05, ..BlueParams::default() });
        e.p = 0.2;
        e.enqueue(DATA, Time(0), &mut rng, &mut drops);
        assert!((e.marking_probability() - 0.15).abs() < 1e-15);
    }

    #[test]
    fn same_seed_same_verdicts() {
        let run = || {
            let (mut rng, mut drops) = io();
            let mut q = blue(BlueParams { limit: Limit::Packets(20), freeze_time: Duration(Dur::from_millis(1)), ..BlueParams::default() });
            let mut out = Vec::new();
            for i in 0..5000u64 {
                out.push(q.enqueue(DATA, Time(i * 100_000), &mut rng, &mut drops));
                if i % 3 != 0 {
                    q.dequeue(Time(i * 100_000), &mut drops);
                }
            }
            (out, *q.stats(), q.marking_probability())
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn stats_invariants_hold() {
        let (mut rng, mut drops) = io();
        let mut q = blue(BlueParams { limit: Limit::Packets(30), freeze_time: Duration(Dur::from_millis(1)), ..BlueParams::default() });
        for i in 0..20_000u64 {
            q.enqueue(Packet { seq: i as u32, ..DATA }, Time(i * 400_000), &mut rng, &mut drops);
            if i % 5 != 0 {
                q.dequeue(Time(i * 400_000), &mut drops);
            }
        }
        let s = *q.stats();
        assert!(s.drops_early > 0 && s.drops_overflow > 0, "{s:?}");
        assert_eq!(s.arrivals, s.enqueues + s.drops());
        assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64);
        assert_eq!(q.len_bytes(), 1000 * q.len_packets() as u64);
    }

    #[test]
    fn bad_keys_name_the_key_and_what_is_allowed() {
        let bad = |p: BlueParams| p.validate("queue").err().unwrap().to_string();
        assert_eq!(bad(BlueParams { d1: 1.5, ..BlueParams::default() }), "queue.d1: must be a probability step in [0, 1], got 1.5");
        assert_eq!(bad(BlueParams { d2: -0.1, ..BlueParams::default() }), "queue.d2: must be a probability step in [0, 1], got -0.1");
        assert_eq!(bad(BlueParams { d2: f64::NAN, ..BlueParams::default() }), "queue.d2: must be a probability step in [0, 1], got NaN");
        assert_eq!(
            bad(BlueParams { limit: Limit::Packets(100), threshold: Some(100), ..BlueParams::default() }),
            "queue.threshold: must be below the packet limit (100), got 100"
        );
        assert_eq!(bad(BlueParams { threshold: Some(0), ..BlueParams::default() }), "queue.threshold: must be at least 1 packet, got 0");
        assert_eq!(blue(BlueParams { limit: Limit::Packets(60), ..BlueParams::default() }).threshold(), 30);
    }
}
