//! Flow-Proportional Queuing (Morris 1999 Ch. 6; spec `seed004-fpq.md` §2.7–2.9, §3.5).
//!
//! FPQ is RED whose parameters follow the number of active flows. A bit-vector counter
//! ([`FlowCounter`], §6.1) estimates the flows `f` from the data packets arriving here (counted
//! before the drop decision), and on every arrival:
//!
//! * target queue (Fig. 6.2): `q = max(r / (2f − 1), PPF·f)` with `r` the bandwidth-delay product in
//!   packets (Eq. 6.2 for few flows; PPF = 5 packets per flow for many);
//! * target loss (Fig. 6.2): `l = min((0.87 / ((q + r)/f + 1))², loss_cap)`, Eq. 5.2 inverted for the
//!   per-flow window (q + r)/f, capped at 1.6 % (read off the simulated Fig. 5.1);
//! * RED parameters (Fig. 6.4): `max_th = 2q`, `max_p = l`, `min_th = 5`, so that by Eq. 5.8 the
//!   drop rate is `2·max_p·q/max_th = l` when the average sits at the target `q`.
//!
//! The RED underneath is ns-1.4's: count-spaced drops without `wait` (the factor 2 of Eq. 5.8
//! needs it, spec §2.5), idle-time decay, no hard buffer limit. Choices the thesis leaves open are
//! parameters, each with the thesis-derived default: the averaging weight (`weight`, 0.002, the
//! RED default of Sec. 2.2.2; §6.3 argues for a longer window), the loss cap (`loss_cap`, 0.016;
//! 1 means uncapped, as for PPF ≠ 5 in Fig. 7.2), the update cadence (every arrival), and `f`
//! clamped to at least 1 before Eq. 6.2 (spec §3.4 item 4).

use serde::{Deserialize, Serialize};

use super::red::{EcnMarking, Red, RedVariant};
use super::red_core::RedConfig;
use super::{DropBuf, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::metrics::flow_counter::{FlowCounter, FlowCounterParams};
use crate::packet::{Packet, PacketKind};
use crate::scenario::units::{Bytes, Limit};

/// Scenario keys of `kind = "fpq"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FpqParams {
    /// Bandwidth-delay product of the typical path, packets (`r`; 217 in all of Morris's runs:
    /// 10 Mb/s × 100 ms in 576-byte packets). A configured constant, not measured.
    #[serde(default = "default_bdp")]
    pub bdp_pkts: f64,
    /// Packets of buffer per flow when many flows share the link (PPF; Sec. 7.1).
    #[serde(default = "default_ppf")]
    pub ppf: f64,
    /// Upper bound on the target loss rate, in (0, 1]; 1 = uncapped.
    #[serde(default = "default_loss_cap")]
    pub loss_cap: f64,
    /// RED's minimum threshold, packets (Fig. 6.4: 5).
    #[serde(default = "default_min_th")]
    pub min_th: f64,
    /// RED's EWMA weight, in (0, 1] (not stated in the thesis).
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// RED variant underneath (ns-1.4 behaves like `ns2`).
    #[serde(default = "default_variant")]
    pub variant: RedVariant,
    /// ns-2's `wait_` (off: Eq. 5.8 assumes count-spaced drops without it).
    #[serde(default)]
    pub wait: bool,
    /// Gentle RED above max_th (off in the thesis).
    #[serde(default)]
    pub gentle: bool,
    /// Hard buffer limit (the thesis has none).
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Mean packet size for RED's idle-time decay (the thesis's 576-byte packets).
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    /// No drop while at most this many packets are queued (ns' `qlen > 1` test).
    #[serde(default = "default_protected_pkts")]
    pub protected_pkts: u32,
    /// The flow counter (`bits` = v_max, `t_clear`, `clearing`).
    #[serde(default)]
    pub counter: FlowCounterParams,
}

fn default_bdp() -> f64 {
    217.0
}
fn default_ppf() -> f64 {
    5.0
}
fn default_loss_cap() -> f64 {
    0.016
}
fn default_min_th() -> f64 {
    5.0
}
fn default_weight() -> f64 {
    0.002
}
fn default_variant() -> RedVariant {
    RedVariant::Ns2
}
fn default_limit() -> Limit {
    Limit::Unlimited
}
fn default_mean_packet_size() -> Bytes {
    Bytes(576)
}
fn default_protected_pkts() -> u32 {
    1
}

impl FpqParams {
    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Fpq> {
        let key = |k: &str| format!("{path}.{k}");
        let positive = |k: &str, v: f64| {
            if v > 0.0 && v.is_finite() {
                Ok(())
            } else {
                Err(ConfigError::new(key(k), format!("must be a positive number, got {v}")))
            }
        };
        positive("bdp_pkts", self.bdp_pkts)?;
        positive("ppf", self.ppf)?;
        if !(self.min_th >= 0.0 && self.min_th.is_finite()) {
            return Err(ConfigError::new(key("min_th"), format!("must be a non-negative number, got {}", self.min_th)));
        }
        for (k, v) in [("loss_cap", self.loss_cap), ("weight", self.weight)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(ConfigError::new(key(k), format!("must be in (0, 1], got {v}")));
            }
        }
        if self.variant == RedVariant::Altq && self.wait {
            return Err(ConfigError::new(key("wait"), "does not apply to variant \"altq\"; allowed with documented, ns2"));
        }
        if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&self.mean_packet_size.0) {
            return Err(crate::error::mean_packet_size_error(key("mean_packet_size"), self.mean_packet_size.0));
        }
        let counter = self.counter.validate(&key("counter"))?;
        let mean = self.mean_packet_size.0 as f64;
        let targets = Targets { bdp_pkts: self.bdp_pkts, ppf: self.ppf, loss_cap: self.loss_cap };
        let (q, l) = targets.at(1.0);
        let cfg = RedConfig {
            variant: self.variant,
            min_th: self.min_th,
            max_th: 2.0 * q,
            max_p: l,
            weight: self.weight,
            wait: self.wait,
            gentle: self.gentle,
            byte_mode: false,
            mean_packet_size: mean,
            drain_rate: link_rate_bps / (8.0 * mean),
            protected_pkts: self.protected_pkts,
            nonlinear: false,
        };
        Ok(Fpq { red: Red::new(cfg, self.limit, EcnMarking::OFF), counter, targets, flows: 1.0 })
    }
}

/// The Fig. 6.2 rules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Targets {
    /// `r`, packets.
    pub bdp_pkts: f64,
    /// Packets per flow.
    pub ppf: f64,
    /// Cap on the loss target.
    pub loss_cap: f64,
}

impl Targets {
    /// Target queue (packets) and loss rate for `f` flows (clamped to ≥ 1).
    pub fn at(&self, f: f64) -> (f64, f64) {
        let f = f.max(1.0);
        let r = self.bdp_pkts;
        let q = (r / (2.0 * f - 1.0)).max(self.ppf * f);
        let w = (q + r) / f + 1.0;
        let l = (0.87 / w).powi(2).min(self.loss_cap);
        (q, l)
    }
}

/// FPQ: a RED queue re-parameterised from a flow count on every arrival.
pub struct Fpq {
    red: Red,
    counter: FlowCounter,
    targets: Targets,
    /// The current flow estimate (Eq. 6.1, clamped to ≥ 1).
    flows: f64,
}

impl Fpq {
    /// The current (max_th, max_p).
    pub fn red_parameters(&self) -> (f64, f64) {
        let c = self.red.config();
        (c.max_th, c.max_p)
    }
}

impl Qdisc for Fpq {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        if pkt.kind != PacketKind::TcpAck {
            self.counter.observe(pkt.flow, now, rng);
        }
        self.flows = self.counter.estimate().max(1.0);
        let (q, l) = self.targets.at(self.flows);
        let cfg = self.red.config_mut();
        cfg.max_th = 2.0 * q;
        cfg.max_p = l;
        self.red.enqueue(pkt, now, rng, drops)
    }

    super::red::delegate_to_red!();
    fn flow_estimate(&self) -> Option<f64> {
        Some(self.flows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};

    fn thesis() -> Targets {
        Targets { bdp_pkts: 217.0, ppf: 5.0, loss_cap: 0.016 }
    }

    #[test]
    fn fig_6_2_targets() {
        // One flow: one bandwidth-delay product of buffer (Eq. 6.2 at f = 1).
        assert_eq!(thesis().at(1.0).0, 217.0);
        // The branches cross at f = (5 + √(25 + 40r))/20 = 4.9 (spec §2.7).
        let cross = (5.0 + (25.0f64 + 40.0 * 217.0).sqrt()) / 20.0;
        assert!((cross - 4.9).abs() < 0.05);
        assert!((217.0 / (2.0 * cross - 1.0) - 5.0 * cross).abs() < 1e-9);
        // Many flows: five packets each; loss pinned at the cap from f ≈ 247 on.
        assert_eq!(thesis().at(300.0), (1500.0, 0.016));
        assert!(thesis().at(240.0).1 < 0.016 && thesis().at(250.0).1 == 0.016);
        // Below the cap the loss is Eq. 5.2 inverted: w = (q + r)/f + 1 = 0.87/√l.
        let (q, l) = thesis().at(100.0);
        assert!((0.87 / l.sqrt() - ((q + 217.0) / 100.0 + 1.0)).abs() < 1e-9);
        // f is clamped to ≥ 1 (spec §3.4 item 4).
        assert_eq!(thesis().at(0.2), thesis().at(1.0));
    }

    #[test]
    fn ppf_sweep_targets_match_the_spec() {
        // Spec §3.5 [computed]: f = 500, r = 217, uncapped: 0.128, 0.0385, 0.0183, 0.0106.
        for (ppf, l) in [(1.0, 0.128), (3.0, 0.0385), (5.0, 0.0183), (7.0, 0.0106)] {
            let t = Targets { bdp_pkts: 217.0, ppf, loss_cap: 1.0 };
            let got = t.at(500.0).1;
            assert!((got - l).abs() / l < 0.01, "PPF {ppf}: {got}");
        }
    }

    fn fpq(text: &str) -> Fpq {
        toml::from_str::<FpqParams>(text).unwrap().validate("queue", 10e6).unwrap()
    }

    #[test]
    fn red_thresholds_follow_the_counted_flows() {
        let mut q = fpq("counter = { bits = 5000, t_clear = \"4s\" }");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for flow in 0..400u32 {
            let p = Packet { size: 576, ..Packet::new(PacketKind::TcpData, flow) };
            q.enqueue(p, Time(flow as u64 * 1000), &mut rng, &mut drops);
        }
        let f = q.flow_estimate().unwrap();
        assert!((f - 400.0).abs() < 20.0, "estimate {f}");
        let (max_th, max_p) = q.red_parameters();
        assert!((max_th - 10.0 * f).abs() < 1e-6, "max_th = 2·5f");
        assert_eq!(max_p, 0.016);
        assert_eq!(q.len_packets(), 400, "average far below min_th yet: nothing dropped, no hard limit");
    }

    #[test]
    fn acks_are_not_counted_as_flows() {
        let mut q = fpq("");
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for flow in 0..50u32 {
            q.enqueue(Packet { size: 40, ..Packet::new(PacketKind::TcpAck, flow) }, Time(0), &mut rng, &mut drops);
        }
        assert_eq!(q.flow_estimate(), Some(1.0));
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let err = |t: &str| toml::from_str::<FpqParams>(t).unwrap().validate("queue", 10e6).err().unwrap().to_string();
        assert!(err("bdp_pkts = 0").starts_with("queue.bdp_pkts: must be a positive number"));
        assert!(err("bdp_pkts = -5").contains("queue.bdp_pkts"));
        assert!(err("ppf = 0").contains("queue.ppf"));
        assert!(err("loss_cap = 1.5").contains("queue.loss_cap"));
        assert!(err("weight = 0").contains("queue.weight"));
        assert!(err("counter = { bits = 0 }").starts_with("queue.counter.bits"));
        assert!(err("counter = { t_clear = \"0s\" }").starts_with("queue.counter.t_clear"));
    }
}
