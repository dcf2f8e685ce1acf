//! RIO, RED with In and Out (Clark & Fang 1998; Parris 2001 §III.2.3.3, spec
//! `seed000-cbt-algorithms.md` §2.4).
//!
//! One FIFO and two RED tests over the shared [`red_core`](super::red_core) machinery. Packets are
//! *In* profile when their class tag is in `in_tags` (tagging, e.g. by an edge token bucket, is the
//! scenario's job: flows get their `class`). An In arrival is tested against `avg_in`, the average
//! of In packets queued, sampled on In arrivals, with the `in` thresholds. An Out arrival is tested
//! against `avg_total`, the average of the whole queue, with the `out` thresholds. `avg_total` is
//! updated on every arrival (Clark & Fang's RIO), so Out drops react to In traffic too.
//!
//! The dissertation describes RIO only conceptually and evaluates none, so it gives no parameter
//! values; the defaults here are illustrative (In thresholds higher and In `max_p` lower than
//! Out's). Its claim that saturated In traffic holds about `Th_in` packets and Out the rest up to
//! `Th_out` requires the Out thresholds (on the total) to be the larger ones (spec §2.4): choose
//! them that way to reproduce it. Both tests share `weight`, `variant`, `wait` and `protected_pkts`.

use serde::{Deserialize, Serialize};
use super::fifo::Fifo;
use super::red_core::{RedConfig, RedDecision, RedState, RedVariant};
use super::{ClassStats, DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::packet::Packet;
use crate::scenario::units::{Bytes, Limit};

/// Thresholds of one of RIO's two tests.
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RioThresholds {
    /// Minimum threshold, packets.
    pub min_th: f64,
    /// Maximum threshold, packets.
    pub max_th: f64,
    /// Early-drop probability at `max_th`, in (0, 1].
    pub max_p: f64,
}

/// Scenario keys of `kind = "rio"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RioParams {
    /// Hard limit: packets, bytes, or `"none"`.
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Class tags of In-profile packets; every other packet is Out.
    #[serde(default = "default_in_tags")]
    pub in_tags: Vec<u8>,
    /// Test for In packets, on the average of In packets queued.
    #[serde(default = "default_in", rename = "in")]
    pub in_profile: RioThresholds,
    /// Test for Out packets, on the average of the whole queue.
    #[serde(default = "default_out")]
    pub out: RioThresholds,
    /// EWMA weight of both averages, in (0, 1].
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// RED variant of both tests.
    #[serde(default)]
    pub variant: RedVariant,
    /// ns-2's `wait_` for both tests (default: true for `ns2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
    /// Mean packet size for the idle-time decay.
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    /// No drop on the average while at most this many packets are queued.
    #[serde(default = "default_protected")]
    pub protected_pkts: u32,
}

fn default_limit() -> Limit {
    Limit::Packets(100)
}
fn default_in_tags() -> Vec<u8> {
    vec![1]
}
fn default_in() -> RioThresholds {
    RioThresholds { min_th: 20.0, max_th: 40.0, max_p: 0.02 }
}
fn default_out() -> RioThresholds {
    RioThresholds { min_th: 10.0, max_th: 20.0, max_p: 0.1 }
}
fn default_weight() -> f64 {
    0.002
}
fn default_mean_packet_size() -> Bytes {
    Bytes(1000)
}
fn default_protected() -> u32 {
    1
}

impl RioParams {
    /// The parameters with the variant-dependent default of `wait` written out, for the scenario
    /// echo (`validate --show`) and `aqmlab qdiscs`.
    pub fn filled(mut self) -> Self {
        self.wait.get_or_insert(self.variant == RedVariant::Ns2);
        self
    }

    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Rio> {
        let unit = |key: String, v: f64| {
            if v > 0.0 && v <= 1.0 {
                Ok(())
            } else {
                Err(ConfigError::new(key, format!("must be in (0, 1], got {v}")))
            }
        };
        unit(format!("{path}.weight"), self.weight)?;
        for (name, t) in [("in", &self.in_profile), ("out", &self.out)] {
            if !(t.min_th >= 0.0 && t.min_th.is_finite() && t.max_th.is_finite() && t.min_th <= t.max_th && t.max_th > 0.0) {
                return Err(ConfigError::new(
                    format!("{path}.{name}.min_th"),
                    format!("must satisfy 0 <= min_th <= max_th, max_th > 0; got min_th = {}, max_th = {}", t.min_th, t.max_th),
                ));
            }
            unit(format!("{path}.{name}.max_p"), t.max_p)?;
        }
        if self.variant == RedVariant::Altq && self.wait == Some(true) {
            return Err(ConfigError::new(format!("{path}.wait"), "does not apply to variant \"altq\"; allowed with documented, ns2"));
        }
        if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&self.mean_packet_size.0) {
            return Err(crate::error::mean_packet_size_error(format!("{path}.mean_packet_size"), self.mean_packet_size.0));
        }
        let mean = self.mean_packet_size.0 as f64;
        let cfg = |t: &RioThresholds| RedConfig {
            variant: self.variant,
            min_th: t.min_th,
            max_th: t.max_th,
            max_p: t.max_p,
            weight: self.weight,
            wait: self.wait.unwrap_or(self.variant == RedVariant::Ns2),
            gentle: false,
            byte_mode: false,
            mean_packet_size: mean,
            drain_rate: link_rate_bps / (8.0 * mean),
            protected_pkts: self.protected_pkts,
            nonlinear: false,
        };
        let mut in_tags = [false; 256];
        for &t in &self.in_tags {
            in_tags[t as usize] = true;
        }
        Ok(Rio {
            in_cfg: cfg(&self.in_profile),
            out_cfg: cfg(&self.out),
            in_state: RedState::default(),
            total_state: RedState::default(),
            in_tags,
            limit: self.limit,
            fifo: Fifo::new(self.limit),
            in_queued: 0,
            in_bytes: 0,
            stats: QdiscStats::default(),
            in_stats: QdiscStats::default(),
        })
    }
}

/// RIO over one FIFO.
pub struct Rio {
    in_cfg: RedConfig,
    out_cfg: RedConfig,
    /// `avg_in`: In packets queued, sampled on In arrivals.
    in_state: RedState,
    /// `avg_total`: the whole queue, sampled on every arrival; drop spacing of Out packets.
    total_state: RedState,
    in_tags: [bool; 256],
    limit: Limit,
    fifo: Fifo,
    /// In packets queued.
    in_queued: usize,
    /// Bytes of the In packets queued.
    in_bytes: u64,
    stats: QdiscStats,
    in_stats: QdiscStats,
}

impl Rio {
    /// Counters of In packets only (the totals are [`Qdisc::stats`]).
    pub fn in_stats(&self) -> &QdiscStats {
        &self.in_stats
    }

    /// The two averages, (`avg_in`, `avg_total`).
    pub fn averages(&self) -> (f64, f64) {
        (self.in_state.average(), self.total_state.average())
    }

    fn drop(&mut self, is_in: bool, kind: DropKind) -> Verdict {
        if is_in {
            self.in_state.on_drop();
            self.in_stats.count_drop(kind);
        } else {
            self.total_state.on_drop();
        }
        self.stats.count_drop(kind);
        Verdict::Dropped(kind)
    }
}

impl Qdisc for Rio {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        let is_in = self.in_tags[pkt.class as usize];
        self.stats.arrivals += 1;
        let total = self.fifo.len();
        let decision = if is_in {
            self.in_stats.arrivals += 1;
            self.total_state.update_average(&self.out_cfg, total as f64, now);
            self.in_state.sample(&self.in_cfg, self.in_queued as f64, pkt.size, now);
            self.in_state.decide(&self.in_cfg, total, pkt.size, rng)
        } else {
            self.total_state.sample(&self.out_cfg, total as f64, pkt.size, now);
            self.total_state.decide(&self.out_cfg, total, pkt.size, rng)
        };
        match decision {
            RedDecision::Pass => {}
            RedDecision::Early => return self.drop(is_in, DropKind::Early),
            RedDecision::Forced => return self.drop(is_in, DropKind::Forced),
        }
        if !self.fifo.admits(self.limit, pkt.size) {
            return self.drop(is_in, DropKind::Overflow);
        }
        let size = u64::from(pkt.size);
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        if is_in {
            self.in_queued += 1;
            self.in_bytes += size;
            self.in_stats.enqueues += 1;
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let Some(pkt) = self.fifo.pop() else {
            self.total_state.on_empty_dequeue(&self.out_cfg, now);
            self.in_state.on_empty_dequeue(&self.in_cfg, now);
            return None;
        };
        self.stats.dequeues += 1;
        if self.in_tags[pkt.class as usize] {
            self.in_queued -= 1;
            self.in_bytes -= u64::from(pkt.size);
            self.in_stats.dequeues += 1;
            if self.in_queued == 0 {
                self.in_state.on_departure_empty(&self.in_cfg, now);
            }
        }
        if self.fifo.is_empty() {
            self.total_state.on_departure_empty(&self.out_cfg, now);
        }
        Some(pkt)
    }

    super::fifo::fifo_accessors!();
    fn average(&self) -> Option<f64> {
        Some(self.total_state.average())
    }
    /// Two classes, `in` and `out` (byte counters are not kept; queued bytes are).
    fn class_stats(&self) -> Vec<ClassStats> {
        let class = |i: usize, name: &str, stats: QdiscStats, average: f64| {
            let (len_packets, len_bytes) = self.class_len_at(i);
            ClassStats { name: name.into(), stats, bytes: QdiscStats::default(), average, len_packets, len_bytes }
        };
        vec![
            class(0, "in", self.in_stats, self.in_state.average()),
            class(1, "out", self.stats.since(&self.in_stats), self.total_state.average()),
        ]
    }
    fn class_count(&self) -> usize {
        2
    }
    fn class_len_at(&self, i: usize) -> (usize, u64) {
        if i == 0 {
            (self.in_queued, self.in_bytes)
        } else {
            (self.fifo.len() - self.in_queued, self.fifo.bytes() - self.in_bytes)
        }
    }
    fn class_average_at(&self, i: usize) -> f64 {
        if i == 0 { self.in_state.average() } else { self.total_state.average() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    fn pkt(class: u8) -> Packet {
        Packet { size: 1000, class, ..Packet::new(PacketKind::Udp, class as u32) }
    }

    fn rio(text: &str) -> Rio {
        toml::from_str::<RioParams>(text).unwrap().validate("queue", 10e6).unwrap()
    }

    const STEP: &str = "limit = 1000\nweight = 1.0\nprotected_pkts = 0\nin_tags = [1]\n\
                        in = { min_th = 29.5, max_th = 29.5, max_p = 1.0 }\nout = { min_th = 9.5, max_th = 9.5, max_p = 1.0 }";

    #[test]
    fn out_packets_are_cut_off_by_the_total_in_packets_by_their_own_occupancy() {
        // With weight 1 and min_th = max_th the tests are steps on the instantaneous counts.
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = rio(STEP);
        for _ in 0..10 {
            assert_eq!(q.enqueue(pkt(0), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        // The total is 10: Out is forced out, In (none queued) still enters.
        assert_eq!(q.enqueue(pkt(0), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Forced));
        for _ in 0..30 {
            assert_eq!(q.enqueue(pkt(1), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        // 30 In queued: In is now cut off too, at 40 packets in total.
        assert_eq!(q.enqueue(pkt(1), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Forced));
        assert_eq!(q.len_packets(), 40);
        assert_eq!(q.in_stats().enqueues, 30);
        assert_eq!(q.in_stats().drops_forced, 1);
        assert_eq!(q.stats().drops_forced, 2);
    }

    #[test]
    fn departures_of_in_packets_lower_the_in_occupancy() {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut q = rio(STEP);
        for _ in 0..30 {
            q.enqueue(pkt(1), Time(0), &mut rng, &mut drops);
        }
        assert!(matches!(q.enqueue(pkt(1), Time(0), &mut rng, &mut drops), Verdict::Dropped(_)));
        q.dequeue(Time(1), &mut drops);
        assert_eq!(q.enqueue(pkt(1), Time(1), &mut rng, &mut drops), Verdict::Enqueued);
        let (avg_in, avg_total) = q.averages();
        assert_eq!((avg_in, avg_total), (29.0, 29.0));
    }

    #[test]
    fn counters_balance() {
        let (mut rng, mut drops) = (stream(3, StreamId::Queue(0)), DropBuf::new());
        let mut q = rio("limit = 25\nweight = 0.2\nin = { min_th = 5, max_th = 15, max_p = 0.1 }\nout = { min_th = 2, max_th = 8, max_p = 0.3 }");
        for i in 0..5000u32 {
            q.enqueue(pkt((i % 3 == 0) as u8), Time(i as u64 * 1000), &mut rng, &mut drops);
            if i % 2 == 0 {
                q.dequeue(Time(i as u64 * 1000 + 500), &mut drops);
            }
        }
        let s = q.stats();
        assert_eq!(s.arrivals, s.enqueues + s.drops());
        assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64);
        let i = q.in_stats();
        assert_eq!(i.arrivals, i.enqueues + i.drops());
        assert!(i.drops() * 3 < s.drops(), "In packets are protected: {} of {} drops", i.drops(), s.drops());
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let err = |t: &str| toml::from_str::<RioParams>(t).unwrap().validate("queue", 10e6).err().unwrap().path;
        assert_eq!(err("in = { min_th = 9, max_th = 5, max_p = 0.1 }"), "queue.in.min_th");
        assert_eq!(err("out = { min_th = 1, max_th = 5, max_p = 0 }"), "queue.out.max_p");
        assert_eq!(err("weight = 1.5"), "queue.weight");
    }
}
