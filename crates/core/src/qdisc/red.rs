//! Random Early Detection over a FIFO (Floyd & Jacobson 1993; Parris 2001 Figs. 3.6–3.10; spec
//! `seed000-cbt-algorithms.md` §2.2). The averaging and drop test live in [`super::red_core`];
//! this file adds the buffer, the limit, ECN marking and the counters.
//!
//! Order of the tests on arrival: the documented variant checks the buffer limit right after the
//! average (Fig. 3.8); ALTQ and ns-2 run the RED test first and apply the limit to what RED let
//! through (spec note 4). Both reset `count` on every drop. With `ecn`, an ECN-capable packet
//! that RED would early-drop is marked CE and queued instead (RFC 3168 §7); forced drops stay
//! drops unless `ecn_forced_mark` is set (ns-2's `mark_p_` style marking up to the hard limit).
//! Early decisions in the gentle region (`max_th ≤ avg < 2·max_th`) mark only with
//! `ecn_gentle_mark`: ns-2's red.cc marks only while `avg < th_max` and drops ECN-capable
//! packets above it (spec `seed001-white.md` §2.0 item 5), so the default is off for `ns2`.

use serde::{Deserialize, Serialize};
use super::fifo::Fifo;
use super::red_core::{ProbabilityScale, RedConfig, RedDecision, RedState};
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::{Ecn, Packet};
use crate::scenario::units::{Bytes, Limit};

pub use super::red_core::RedVariant;

/// Scenario keys of `kind = "red"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    /// Hard limit: packets, bytes, or `"none"`.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Minimum threshold on the average (packets; bytes÷mean_packet_size in byte mode).
    #[serde(default = "default_min_th", alias = "thresh_", alias = "min")]
    pub min_th: f64,
    /// Maximum threshold.
    #[serde(default = "default_max_th", alias = "maxthresh_", alias = "max")]
    pub max_th: f64,
    /// Drop probability at the maximum threshold, in (0, 1].
    #[serde(default = "default_max_p", alias = "probability")]
    pub max_p: f64,
    /// EWMA weight, in (0, 1].
    #[serde(default = "default_weight", alias = "q_weight_")]
    pub weight: f64,
    /// Which RED.
    #[serde(default)]
    pub variant: RedVariant,
    /// ns-2's `wait_`: no early drop until `count·pb ≥ 1`. Default: true for `ns2`, false otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Gentle RED above max_th.
    #[serde(default)]
    pub gentle: bool,
    /// Measure the queue in bytes and scale the drop probability by packet size.
    #[serde(default)]
    pub byte_mode: bool,
    /// Mark ECN-capable packets instead of dropping them early.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, also mark (not drop) ECN-capable packets in the forced-drop region.
    #[serde(default)]
    pub ecn_forced_mark: bool,
    /// With `ecn` and `gentle`, mark (not drop) ECN-capable packets RED picks in the gentle
    /// region. Default: false for `ns2` (red.cc drops them), true otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_gentle_mark: Option<bool>,
    /// Mean packet size for idle-time decay and byte mode.
    #[serde(default = "default_mean_packet_size", alias = "avpkt")]
    pub mean_packet_size: Bytes,
    /// RED does not drop on the average while at most this many packets are queued (Fig. 3.8's
    /// `q_len > 1`; ns-2 and ALTQ test the same).
    #[serde(default = "default_protected_pkts")]
    pub protected_pkts: u32,
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
pub(super) fn default_weight() -> f64 {
    0.002
}
fn default_mean_packet_size() -> Bytes {
    Bytes(1000)
}
fn default_protected_pkts() -> u32 {
    1
}

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
    /// The parameters with the variant-dependent defaults of `wait` and `ecn_gentle_mark` written
    /// out as they apply, for the scenario echo (`validate --show`) and `aqmlab qdiscs`.
    pub fn filled(mut self) -> Self {
        self.wait.get_or_insert(self.variant == RedVariant::Ns2);
        self.ecn_gentle_mark.get_or_insert(self.ecn && self.gentle && self.variant != RedVariant::Ns2);
        self
    }

    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Red> {
        let key = |k: &str| format!("{path}.{k}");
        check_thresholds(path, self.min_th, self.max_th)?;
        unit_interval(path, "max_p", self.max_p)?;
        unit_interval(path, "weight", self.weight)?;
        if self.mean_packet_size.0 == 0 {
            return Err(ConfigError::new(key("mean_packet_size"), "must be at least 1B"));
        }
        if self.variant == RedVariant::Altq && self.wait == Some(true) {
            return Err(ConfigError::new(
                key("wait"),
                "does not apply to variant \"altq\" (ALTQ's drop test has its own spacing); allowed with documented, ns2",
            ));
        }
        if self.ecn_forced_mark && !self.ecn {
            return Err(ConfigError::new(key("ecn_forced_mark"), "needs ecn = true"));
        }
        if self.ecn_gentle_mark == Some(true) && !(self.ecn && self.gentle) {
            return Err(ConfigError::new(key("ecn_gentle_mark"), "needs ecn = true and gentle = true"));
        }
        let mean = self.mean_packet_size.0 as f64;
        let cfg = RedConfig {
            variant: self.variant,
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            weight: self.weight,
            wait: self.wait.unwrap_or(self.variant == RedVariant::Ns2),
            gentle: self.gentle,
            byte_mode: self.byte_mode,
            mean_packet_size: mean,
            drain_rate: link_rate_bps / (8.0 * mean),
            protected_pkts: self.protected_pkts,
        };
        let ecn = EcnMarking {
            early: self.ecn,
            gentle: self.ecn && self.ecn_gentle_mark.unwrap_or(self.variant != RedVariant::Ns2),
            forced: self.ecn_forced_mark,
        };
        Ok(Red::new(cfg, self.limit, ecn))
    }
}

/// Which of RED's decisions on an ECN-capable packet become CE marks instead of drops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnMarking {
    /// Early decisions below `max_th` (RFC 3168 §7).
    pub early: bool,
    /// Early decisions in the gentle region, `max_th ≤ avg < 2·max_th`.
    pub gentle: bool,
    /// Forced decisions (`avg` past the forced threshold).
    pub forced: bool,
}

impl EcnMarking {
    /// No ECN: every decision is a drop.
    pub const OFF: EcnMarking = EcnMarking { early: false, gentle: false, forced: false };
}

/// RED over a drop-tail buffer.
pub struct Red {
    cfg: RedConfig,
    state: RedState,
    limit: Limit,
    ecn: EcnMarking,
    fifo: Fifo,
    stats: QdiscStats,
}

impl Red {
    /// An empty RED queue.
    pub fn new(cfg: RedConfig, limit: Limit, ecn: EcnMarking) -> Red {
        Red { cfg, state: RedState::default(), limit, ecn, fifo: Fifo::new(limit), stats: QdiscStats::default() }
    }

    /// The validated settings.
    pub fn config(&self) -> &RedConfig {
        &self.cfg
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
    /// documented variant's closed upper end) is the linear region's.
    fn marks_early(&self) -> bool {
        if self.cfg.gentle && self.state.average() >= self.cfg.max_th { self.ecn.gentle } else { self.ecn.early }
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
        self.state.sample(&self.cfg, self.queued_units(), pkt.size, now);
        if documented && !self.fits(&pkt) {
            return self.drop(DropKind::Overflow);
        }
        let decision = self.state.decide_scaled(&self.cfg, self.fifo.len(), pkt.size, rng, scale);
        let ect = pkt.ecn != Ecn::NotEct;
        let mark = match decision {
            RedDecision::Pass => false,
            RedDecision::Early if ect && self.marks_early() => true,
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
        assert_eq!((p.min_th, p.max_th, p.max_p, p.weight, p.mean_packet_size.0), (3.0, 9.0, 0.2, 0.01, 1500));
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
        assert_eq!(marks, 0, "ns-2 red.cc marks only below th_max");
        assert!(early > 20, "{early}");
        let (marks, early) = gentle_region_outcomes(&format!("{base}\nvariant = \"ns2\"\necn_gentle_mark = true"));
        assert_eq!(early, 0);
        assert!(marks > 20, "{marks}");
        let (marks, early) = gentle_region_outcomes(&format!("{base}\nvariant = \"documented\""));
        assert_eq!(early, 0);
        assert!(marks > 20, "{marks}");
        assert!(error("ecn_gentle_mark = true\necn = true").contains("queue.ecn_gentle_mark"));
        let echo = |text: &str| params(&format!("ecn = true\ngentle = true\n{text}")).filled().ecn_gentle_mark;
        assert_eq!((echo("variant = \"ns2\""), echo("")), (Some(false), Some(true)));
        assert_eq!(params("").filled().ecn_gentle_mark, Some(false), "echoed as it applies: no ECN, no marks");
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
