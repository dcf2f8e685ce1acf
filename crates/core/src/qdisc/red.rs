//! Random Early Detection. PLACEHOLDER — the real implementation replaces this file.

use serde::{Deserialize, Serialize};

use super::{DropBuf, DropTail, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::ConfigResult;
use crate::packet::Packet;
use crate::scenario::units::{Bytes, Limit};

/// Which published form of RED to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RedVariant {
    /// Parris 2001 Figs. 3.6–3.10 (spec seed000 §2.2).
    #[default]
    Documented,
    /// ALTQ `altq_red.c`.
    Altq,
    /// ns-2 with `wait_`.
    Ns2,
}

/// Scenario keys of `kind = "red"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    /// Hard limit, packets or bytes.
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
    /// Gentle RED above max_th.
    #[serde(default)]
    pub gentle: bool,
    /// Measure the queue in bytes and scale the drop probability by packet size.
    #[serde(default)]
    pub byte_mode: bool,
    /// Mark ECN-capable packets instead of dropping them early.
    #[serde(default)]
    pub ecn: bool,
    /// Mean packet size for idle-time decay and byte mode.
    #[serde(default = "default_mean_packet_size", alias = "avpkt")]
    pub mean_packet_size: Bytes,
}

fn default_limit() -> Limit {
    Limit::Packets(100)
}
fn default_min_th() -> f64 {
    5.0
}
fn default_max_th() -> f64 {
    15.0
}
fn default_max_p() -> f64 {
    0.1
}
fn default_weight() -> f64 {
    0.002
}
fn default_mean_packet_size() -> Bytes {
    Bytes(1000)
}

impl RedParams {
    /// Validates and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, _path: &str, _link_rate_bps: f64) -> ConfigResult<Red> {
        Ok(Red { inner: DropTail::new(self.limit) })
    }
}

/// RED (placeholder: behaves as drop-tail until implemented).
pub struct Red {
    inner: DropTail,
}

impl Qdisc for Red {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        self.inner.enqueue(pkt, now, rng, drops)
    }
    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
        self.inner.dequeue(now, drops)
    }
    fn peek(&self) -> Option<&Packet> {
        self.inner.peek()
    }
    fn len_packets(&self) -> usize {
        self.inner.len_packets()
    }
    fn len_bytes(&self) -> u64 {
        self.inner.len_bytes()
    }
    fn stats(&self) -> &QdiscStats {
        self.inner.stats()
    }
}
