//! CAKE, Common Applications Kept Enhanced (Høiland-Jørgensen, Täht & Morton, "Piece of CAKE: A
//! Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN 2018), as Linux
//! `net/sched/sch_cake.c` runs it. Four parts, each a section of the paper:
//!
//! * **Shaper** (§III-A): a deficit-mode shaper. Every packet sent pushes `time_next_packet` on
//!   by its serialisation time at `bandwidth` (`cake_advance_shaper`); `dequeue` returns nothing
//!   before that time and [`Qdisc::next_wakeup`] tells the engine when to ask again. No burst
//!   parameter. `bandwidth = "unlimited"` (the default) switches it off: the link paces.
//!   Worked number: at 5 Mb/s a 1514 B packet moves the schedule on by 1514·8/5e6 = 2.4224 ms.
//! * **Flow isolation** (§III-B): per tin, 1024 flow queues, 8-way set-associative
//!   (`cake_hash`): a flow's hash picks a set of 8 queues; a queue already tagged with the flow's
//!   hash is reused, else a free queue of the set, else the collision is accepted in the hashed
//!   queue. With host isolation, each queue also points at a source and a destination host entry
//!   (same set-associative scheme, 1024 entries) that counts the host's *bulk* flows; a flow's
//!   quantum is `flow_quantum / host_load`, host_load = max of those counts (the modes that use
//!   them: `dual-srchost`, `dual-dsthost`, `triple-isolate`). So a host with 8 bulk flows gets, in
//!   total, what a host with one gets.
//! * **DRR++** (§III-B): new (sparse) and old (bulk) flow lists as in FQ-CoDel, plus the
//!   *decaying* list: a queue found empty whose COBALT state has not yet come to rest stays
//!   scheduled there (not counted as sparse or bulk), so a flow cannot shed its AQM state by
//!   pausing; a packet arriving for it puts it back in the new list. A sparse flow that spends its
//!   deficit becomes bulk (`CAKE_SET_SPARSE` → `BULK`, or `SPARSE_WAIT` when it is empty then).
//! * **COBALT** (§III-C; the law itself is `cobalt_core.rs`, shared with `cobalt.rs`): per flow queue, CoDel's control law (drop or ECN-mark at
//!   `drop_next`, spaced interval/√count) run at dequeue on the sojourn time, and BLUE: `p_drop`
//!   rises by `p_inc` = 1/256 when the queue is pruned at overflow and falls by `p_dec` = 1/4096
//!   when it is found empty, at most once per `target` each (the BLUE timer); every dequeued packet
//!   is dropped with probability `p_drop` (ECT or not: BLUE never marks). CoDel's count is not
//!   reset when the delay falls below target: it decays by one per control interval
//!   (`cobalt_should_drop`, `cobalt_queue_empty`), so a flow that comes back is hit sooner.
//! * **Tins** (§III-D): `besteffort` (one tin), `diffserv3` (Linux's default: Bulk CS1/LE at
//!   1/16 of the rate, Best Effort, Voice TOS4/VA/EF/CS6/CS7 at 1/4) and `diffserv4` (Bulk 1/16,
//!   Best Effort, Video 1/2, Voice 1/4), DSCP → tin by sch_cake's tables. A tin under its share
//!   is served in priority (shaped mode: the highest tin whose own schedule is due); unlimited,
//!   the tins share by a DRR over `tin_quantum` (1024, 64, 256[, 512]).
//! * **Overload** (`cake_drop`): when the bytes held exceed `memlimit`, the head packet of the
//!   queue with the most bytes (over all tins) is dropped, one at a time until under the limit;
//!   COBALT's `queue_full` (BLUE up) runs on that queue. Counted as `drops_overflow`.
//!
//! Defaults, all `sch_cake.c`'s (`cake_init`, `cake_set_rate`, `cake_reconfigure`): target 5 ms,
//! rtt (interval) 100 ms, `triple-isolate`, `diffserv3`, unlimited; per tin
//! target = max(1.5·MTU time, target), interval = max(rtt + tin target − target, 2·tin target);
//! flow quantum 1514 B unlimited, else clamp(rate_Bps/4096, 300, 1514); memlimit
//! max(4 MiB, 4·rate·rtt) when shaped, 10240·MTU unlimited, capped at 10240·MTU.
//!
//! Choices and deviations (docs/cake.md has the full list):
//! * Hashes: the flow hash is a 32-bit mix of the flow id (data and ACKs of a flow share it, as
//!   sch_cake's sorted-tuple hash makes them); host hashes mix the host ids of the flow's sender
//!   and receiver (`FlowLabel`, scenario keys `sender_host`/`receiver_host`; an ACK's source is
//!   the receiver). `set_ways = 1` turns the set associativity off (direct-mapped, as FQ-CoDel).
//! * `memlimit` counts wire bytes; Linux counts `skb->truesize` (buffer allocation, about
//!   1.5× a full-size packet and several times an ACK), so Linux's limit holds fewer packets.
//! * Arithmetic in `f64`: 1/√count exact (Linux: Newton steps from a 16-entry cache; differs in
//!   the 4th digit above count 16), deficits `flow_quantum/host_load` exactly (Linux: 16-bit fixed
//!   point dithered with a random number, whose mean this is), shaper times in whole ns.
//! * Fattest queue: the most bytes over all tins, ties the lowest (tin, queue); Linux keeps a
//!   max-heap whose tie order is its own.
//! * A fresh queue's `rec_inv_sqrt` is 0 (Linux zeroes `cobalt_vars` at init), so its first
//!   dropping episode schedules the first signal at once rather than an interval on; kept.
//! * Not modelled: ACK filter, NAT lookup, GSO splitting, wash, ingress mode, autorate-ingress,
//!   ATM/PTM framing, fwmark/priority tin override, `precedence`/`diffserv8`.
//!
//! Random draws: one uniform per dequeued packet whose queue has `p_drop > 0` (BLUE), from the
//! queue's stream copied at the first arrival (nothing is drawn at enqueue).

use rand::Rng as _;
use serde::{Deserialize, Serialize};

pub use super::cobalt_core::{Cobalt, CobaltDecision, CobaltParams, P_DEC, P_INC};
use super::fifo::Fifo;
use super::fq_codel::flow_hash;
use super::{ClassStats, DropBuf, DropKind, FlowLabel, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::{Ecn, FlowId, Packet};
use crate::scenario::units::{Bytes, Duration, RateOrUnlimited, SizeOrAuto};

/// Flow queues per tin (`CAKE_QUEUES`); also the size of the host tables.
pub const CAKE_QUEUES: usize = 1024;
/// Linux's default set associativity (`CAKE_SET_WAYS`).
const DEFAULT_SET_WAYS: u32 = 8;
/// Host ids at and above this are the per-flow defaults (each flow its own pair of hosts).
pub const DEFAULT_HOST_BASE: u32 = 1 << 31;
/// Salts that make a host's source and destination hashes differ (sch_cake hashes the address
/// with the other one zeroed, so they differ there too).
const SRC_SALT: u32 = 0x5bd1_e995;
const DST_SALT: u32 = 0x1b87_3593;

/// How flows are told apart (`tc-cake(8)` keywords; `CAKE_FLOW_*` bits: 1 source host, 2
/// destination host, 4 flows; dual/triple modes add per-host fairness).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CakeIsolation {
    /// One queue for everything.
    Flowblind,
    /// One queue per source host.
    Srchost,
    /// One queue per destination host.
    Dsthost,
    /// One queue per (source, destination) host pair.
    Hosts,
    /// One queue per flow, no host fairness.
    Flows,
    /// Per flow, fair among source hosts first.
    DualSrchost,
    /// Per flow, fair among destination hosts first.
    DualDsthost,
    /// Per flow, fair among source and among destination hosts (Linux's default).
    #[default]
    TripleIsolate,
}

impl CakeIsolation {
    /// sch_cake's `flow_mode` bits.
    fn bits(self) -> u8 {
        match self {
            CakeIsolation::Flowblind => 0,
            CakeIsolation::Srchost => 1,
            CakeIsolation::Dsthost => 2,
            CakeIsolation::Hosts => 3,
            CakeIsolation::Flows => 4,
            CakeIsolation::DualSrchost => 5,
            CakeIsolation::DualDsthost => 6,
            CakeIsolation::TripleIsolate => 7,
        }
    }
}

/// Which tin set, and DSCP → tin table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CakeDiffserv {
    /// One tin.
    Besteffort,
    /// Bulk, Best Effort, Voice (Linux's default).
    #[default]
    Diffserv3,
    /// Bulk, Best Effort, Video, Voice.
    Diffserv4,
}

impl CakeDiffserv {
    /// Tin names, in tin index order (sch_cake's internal order; higher index = higher priority
    /// except Best Effort at 0).
    pub fn tin_names(self) -> &'static [&'static str] {
        match self {
            CakeDiffserv::Besteffort => &["best_effort"],
            CakeDiffserv::Diffserv3 => &["best_effort", "bulk", "voice"],
            CakeDiffserv::Diffserv4 => &["best_effort", "bulk", "video", "voice"],
        }
    }

    /// The tin of a DSCP (sch_cake's `diffserv3[]`/`diffserv4[]` tables).
    pub fn tin_of(self, dscp: u8) -> usize {
        match self {
            CakeDiffserv::Besteffort => 0,
            CakeDiffserv::Diffserv3 => match dscp {
                1 | 8 => 1,                   // LE, CS1
                4 | 44 | 46 | 48 | 56 => 2,   // TOS4, VA, EF, CS6, CS7
                _ => 0,
            },
            CakeDiffserv::Diffserv4 => match dscp {
                1 | 8 => 1,                                                    // LE, CS1
                4 | 16 | 18 | 20 | 22 | 24 | 26 | 28 | 30 | 34 | 36 | 38 => 2, // TOS4, CS2, AF1x-AF3x, CS3, AF4x
                32 | 40 | 44 | 46 | 48 | 56 => 3,                              // CS4, CS5, VA, EF, CS6, CS7
                _ => 0,
            },
        }
    }

    /// Each tin's (rate shift, tin quantum): the tin's threshold is `rate >> shift`
    /// (`cake_config_*`).
    fn tins(self) -> &'static [(u32, i64)] {
        match self {
            CakeDiffserv::Besteffort => &[(0, 65535)],
            CakeDiffserv::Diffserv3 => &[(0, 1024), (4, 64), (2, 256)],
            CakeDiffserv::Diffserv4 => &[(0, 1024), (4, 64), (1, 512), (2, 256)],
        }
    }
}

/// Scenario keys of `kind = "cake"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CakeParams {
    /// Shaper rate, or `"unlimited"` (default: no shaping).
    #[serde(default)]
    pub bandwidth: RateOrUnlimited,
    /// COBALT's interval (`rtt`, 100 ms).
    #[serde(default = "default_rtt")]
    pub rtt: Duration,
    /// COBALT's target (5 ms).
    #[serde(default = "default_target")]
    pub target: Duration,
    /// Flow isolation mode (`triple-isolate`).
    #[serde(default)]
    pub isolation: CakeIsolation,
    /// Tin set (`diffserv3`).
    #[serde(default)]
    pub diffserv: CakeDiffserv,
    /// Bytes held before the fattest queue is pruned; `"auto"`: as `cake_reconfigure`.
    #[serde(default)]
    pub memlimit: SizeOrAuto,
    /// The device MTU with its link header (`psched_mtu`: 1514 B).
    #[serde(default = "default_mtu")]
    pub mtu: Bytes,
    /// Bytes added to each packet's size for the shaper and deficits (framing; may be negative).
    #[serde(default)]
    pub overhead: i64,
    /// Minimum packet size the shaper charges.
    #[serde(default = "default_mpu")]
    pub mpu: Bytes,
    /// Ways of the set-associative flow and host tables (8; 1 = direct-mapped).
    #[serde(default = "default_set_ways")]
    pub set_ways: u32,
    /// Salt of the flow and host hashes.
    #[serde(default, deserialize_with = "crate::scenario::units::int_in::<_, _, 0, 4294967295>")]
    pub perturbation: u32,
}

fn default_rtt() -> Duration {
    Duration(Dur::from_millis(100))
}
fn default_target() -> Duration {
    Duration(Dur::from_millis(5))
}
fn default_mtu() -> Bytes {
    Bytes(1514)
}
fn default_mpu() -> Bytes {
    Bytes(0)
}
fn default_set_ways() -> u32 {
    DEFAULT_SET_WAYS
}

impl Default for CakeParams {
    fn default() -> Self {
        CakeParams {
            bandwidth: RateOrUnlimited::Unlimited,
            rtt: default_rtt(),
            target: default_target(),
            isolation: CakeIsolation::default(),
            diffserv: CakeDiffserv::default(),
            memlimit: SizeOrAuto::Auto,
            mtu: default_mtu(),
            overhead: 0,
            mpu: Bytes(0),
            set_ways: DEFAULT_SET_WAYS,
            perturbation: 0,
        }
    }
}

/// Which list a flow queue is in (`CAKE_SET_*`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowSet {
    /// In no list.
    #[default]
    None,
    /// In the new list (or moved on to old with deficit still positive), counted sparse.
    Sparse,
    /// In the old list but empty: counted sparse until a packet arrives.
    SparseWait,
    /// In the old list, counted bulk (and in its hosts' bulk counts).
    Bulk,
    /// Empty, in the decaying list (or old list) until COBALT comes to rest.
    Decaying,
}

/// One flow queue (`struct cake_flow`).
#[derive(Default)]
struct CakeFlow {
    fifo: Fifo,
    /// Bytes the queue may still send this round; may go negative by up to one packet.
    deficit: f64,
    cobalt: Cobalt,
    /// Index of its source-host entry.
    srchost: u16,
    /// Index of its destination-host entry.
    dsthost: u16,
    set: FlowSet,
}

/// One host entry (`struct cake_host`).
#[derive(Clone, Copy, Default)]
struct CakeHost {
    srchost_tag: u32,
    dsthost_tag: u32,
    /// Bulk flows whose source is this host.
    srchost_bulk_flow_count: u32,
    /// Bulk flows whose destination is this host.
    dsthost_bulk_flow_count: u32,
}

/// The three flow lists of a tin as intrusive doubly linked lists over queue indices (the
/// kernel's `list_head`): nodes `0..CAKE_QUEUES` are queues, the next three the list heads.
struct Chains {
    prev: Vec<u16>,
    next: Vec<u16>,
}

const NEW: usize = CAKE_QUEUES;
const OLD: usize = CAKE_QUEUES + 1;
const DECAYING: usize = CAKE_QUEUES + 2;

impl Chains {
    fn new() -> Chains {
        let n = CAKE_QUEUES + 3;
        let ids: Vec<u16> = (0..n as u16).collect();
        Chains { prev: ids.clone(), next: ids }
    }
    fn is_empty(&self, head: usize) -> bool {
        self.next[head] as usize == head
    }
    fn first(&self, head: usize) -> Option<usize> {
        (!self.is_empty(head)).then(|| self.next[head] as usize)
    }
    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.prev[i] as usize, self.next[i] as usize);
        self.next[p] = n as u16;
        self.prev[n] = p as u16;
        self.prev[i] = i as u16;
        self.next[i] = i as u16;
    }
    /// `list_move_tail` (also `list_add_tail` of an unlinked node).
    fn move_tail(&mut self, i: usize, head: usize) {
        self.unlink(i);
        let last = self.prev[head] as usize;
        self.next[last] = i as u16;
        self.prev[i] = last as u16;
        self.next[i] = head as u16;
        self.prev[head] = i as u16;
    }
    fn len(&self, head: usize) -> usize {
        let (mut n, mut i) = (0, self.next[head] as usize);
        while i != head {
            n += 1;
            i = self.next[i] as usize;
        }
        n
    }
}

/// One priority tin (`struct cake_tin_data`).
struct Tin {
    flows: Vec<CakeFlow>,
    tags: Vec<u32>,
    hosts: Vec<CakeHost>,
    chains: Chains,
    cparams: CobaltParams,
    /// Bytes per DRR round of a flow, before host scaling.
    flow_quantum: f64,
    /// Nanoseconds per byte at the tin's threshold rate (0: unlimited).
    ns_per_byte: f64,
    /// The tin's threshold rate, bytes/s (0 unlimited).
    rate_bytes_per_s: u64,
    time_next_packet: Time,
    tin_quantum: i64,
    tin_deficit: i64,
    /// Bytes queued in the tin.
    tin_backlog: u64,
    bulk_flow_count: u32,
    sparse_flow_count: u32,
    decaying_flow_count: u32,
    unresponsive_flow_count: u32,
    pkts: QdiscStats,
    bytes: QdiscStats,
    len: usize,
}

/// CAKE's own event counters, from the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CakeDetails {
    /// CoDel-half drops (Not-ECT packets at a due signal).
    pub cobalt_codel_drops: u64,
    /// BLUE-half drops.
    pub cobalt_blue_drops: u64,
    /// Packets delivered although COBALT said drop: the last packet of their queue.
    pub cobalt_last_packet_kept: u64,
    /// Packets pruned from the fattest queue (`cake_drop`).
    pub overflow_drops: u64,
    /// Flow queues that entered the new (sparse) list.
    pub sparse_activations: u64,
    /// Sparse flow queues that became bulk.
    pub bulk_transitions: u64,
    /// Lookups served by the hashed queue (`way_directs`).
    pub way_directs: u64,
    /// Lookups that found their tag in another way of the set (`way_hits`).
    pub way_hits: u64,
    /// Lookups that took a free way (`way_misses`).
    pub way_misses: u64,
    /// Lookups with no free way: the flow shares the hashed queue (`way_collisions`).
    pub way_collisions: u64,
    /// Dequeue calls refused by the shaper (`overlimits`).
    pub overlimits: u64,
}

/// CAKE.
pub struct Cake {
    mode: u8,
    diffserv: CakeDiffserv,
    ways: usize,
    perturbation: u32,
    overhead: i64,
    mpu: u64,
    /// Bytes held before pruning.
    buffer_limit: u64,
    /// Bytes held (wire sizes; Linux: truesize).
    buffer_used: u64,
    tins: Vec<Tin>,
    /// Global shaper: nanoseconds per byte (0 unlimited).
    ns_per_byte: f64,
    time_next_packet: Time,
    failsafe_next_packet: Time,
    cur_tin: usize,
    len: usize,
    labels: Vec<FlowLabel>,
    stats: QdiscStats,
    details: CakeDetails,
    rng: Option<Rng>,
}

/// The duration of `len` bytes at `ns_per_byte`, whole nanoseconds (Linux: `(len·rate_ns) >> shft`).
fn serialisation(len: u64, ns_per_byte: f64) -> Dur {
    Dur((len as f64 * ns_per_byte) as u64)
}

impl CakeParams {
    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<Cake> {
        let rate_bps = match self.bandwidth {
            RateOrUnlimited::Unlimited => 0.0,
            RateOrUnlimited::Rate(r) if r.is_finite() && r >= 8.0 => r,
            RateOrUnlimited::Rate(r) => {
                return Err(ConfigError::new(
                    join(path, "bandwidth"),
                    format!("must be a rate of at least 8bps such as \"5Mbps\", or \"unlimited\", got {r}bps"),
                ))
            }
        };
        let positive = |key: &str, d: Dur| {
            if d == Dur::ZERO {
                Err(ConfigError::new(join(path, key), "must be positive"))
            } else {
                Ok(())
            }
        };
        positive("rtt", self.rtt.0)?;
        positive("target", self.target.0)?;
        if !(64..=65_535).contains(&self.mtu.0) {
            return Err(ConfigError::new(join(path, "mtu"), format!("must be in 64B..=65535B, got {}B", self.mtu.0)));
        }
        if !(-64..=256).contains(&self.overhead) {
            return Err(ConfigError::new(join(path, "overhead"), format!("must be in -64..=256 (tc-cake's range), got {}", self.overhead)));
        }
        if self.mpu.0 > 256 {
            return Err(ConfigError::new(join(path, "mpu"), format!("must be in 0B..=256B, got {}B", self.mpu.0)));
        }
        if !self.set_ways.is_power_of_two() || self.set_ways as usize > CAKE_QUEUES {
            return Err(ConfigError::new(
                join(path, "set_ways"),
                format!("must be a power of two from 1 to {CAKE_QUEUES} (8 as Linux, 1 = direct-mapped), got {}", self.set_ways),
            ));
        }
        if let Some(0) = self.memlimit.bytes() {
            return Err(ConfigError::new(join(path, "memlimit"), "must be positive, or \"auto\""));
        }
        // sch_cake's rates are bytes per second.
        let rate = (rate_bps / 8.0) as u64;
        let (target, rtt, mtu) = (self.target.0, self.rtt.0, self.mtu.0);
        let tins = self
            .diffserv
            .tins()
            .iter()
            .map(|&(shift, tin_quantum)| {
                let tin_rate = rate >> shift;
                // cake_set_rate
                let (flow_quantum, ns_per_byte) = if tin_rate > 0 {
                    ((tin_rate >> 12).clamp(300, 1514) as f64, 1e9 / tin_rate.max(64) as f64)
                } else {
                    (1514.0, 0.0)
                };
                let mtu_time = serialisation(mtu, ns_per_byte);
                let tin_target = Dur((mtu_time.0 * 3 / 2).max(target.0));
                let interval = Dur((rtt.0 + tin_target.0 - target.0).max(2 * tin_target.0));
                Tin {
                    flows: (0..CAKE_QUEUES).map(|_| CakeFlow::default()).collect(),
                    tags: vec![0; CAKE_QUEUES],
                    hosts: vec![CakeHost::default(); CAKE_QUEUES],
                    chains: Chains::new(),
                    cparams: CobaltParams { mtu_time, ..CobaltParams::new(tin_target, interval) },
                    flow_quantum,
                    ns_per_byte,
                    rate_bytes_per_s: tin_rate,
                    time_next_packet: Time::ZERO,
                    tin_quantum,
                    tin_deficit: 0,
                    tin_backlog: 0,
                    bulk_flow_count: 0,
                    sparse_flow_count: 0,
                    decaying_flow_count: 0,
                    unresponsive_flow_count: 0,
                    pkts: QdiscStats::default(),
                    bytes: QdiscStats::default(),
                    len: 0,
                }
            })
            .collect::<Vec<_>>();
        // cake_reconfigure: the memory limit.
        let cap = 10_240 * mtu;
        let buffer_limit = match self.memlimit.bytes() {
            Some(b) => b.min(cap.max(b)),
            None if rate > 0 => {
                let interval_us = rtt.0 / 1000;
                ((rate as u128 * interval_us as u128 / 250_000) as u64).max(4 << 20).min(cap)
            }
            None => cap,
        };
        Ok(Cake {
            mode: self.isolation.bits(),
            diffserv: self.diffserv,
            ways: self.set_ways as usize,
            perturbation: self.perturbation,
            overhead: self.overhead,
            mpu: self.mpu.0,
            buffer_limit,
            buffer_used: 0,
            ns_per_byte: tins[0].ns_per_byte,
            tins,
            time_next_packet: Time::ZERO,
            failsafe_next_packet: Time::ZERO,
            cur_tin: 0,
            len: 0,
            labels: Vec::new(),
            stats: QdiscStats::default(),
            details: CakeDetails::default(),
            rng: None,
        })
    }
}

impl Cake {
    fn dual_src(&self) -> bool {
        self.mode & 5 == 5
    }
    fn dual_dst(&self) -> bool {
        self.mode & 6 == 6
    }

    /// The memory limit in bytes.
    pub fn buffer_limit(&self) -> u64 {
        self.buffer_limit
    }

    /// Tin `t`'s COBALT parameters and flow quantum.
    pub fn tin_params(&self, t: usize) -> (CobaltParams, f64) {
        (self.tins[t].cparams, self.tins[t].flow_quantum)
    }

    /// Tin `t`'s threshold rate in bytes/s (0 unlimited).
    pub fn tin_rate_bytes_per_s(&self, t: usize) -> u64 {
        self.tins[t].rate_bytes_per_s
    }

    /// CAKE's own counters.
    pub fn details(&self) -> &CakeDetails {
        &self.details
    }

    /// The COBALT state of queue `idx` of tin `t`.
    pub fn cobalt(&self, t: usize, idx: usize) -> &Cobalt {
        &self.tins[t].flows[idx].cobalt
    }

    /// The list state of queue `idx` of tin `t`.
    pub fn flow_set(&self, t: usize, idx: usize) -> FlowSet {
        self.tins[t].flows[idx].set
    }

    /// Packets queued in queue `idx` of tin `t`.
    pub fn queue_len(&self, t: usize, idx: usize) -> usize {
        self.tins[t].flows[idx].fifo.len()
    }

    /// (sparse, bulk, decaying) flow counts of tin `t`, and the lengths of its new, old and
    /// decaying lists.
    pub fn tin_counts(&self, t: usize) -> ([u32; 3], [usize; 3]) {
        let b = &self.tins[t];
        ([b.sparse_flow_count, b.bulk_flow_count, b.decaying_flow_count], [NEW, OLD, DECAYING].map(|h| b.chains.len(h)))
    }

    /// Bulk-flow counts of the source and destination host entries queue `idx` of tin `t` points at.
    pub fn host_loads(&self, t: usize, idx: usize) -> (u32, u32) {
        let b = &self.tins[t];
        let f = &b.flows[idx];
        (b.hosts[f.srchost as usize].srchost_bulk_flow_count, b.hosts[f.dsthost as usize].dsthost_bulk_flow_count)
    }

    fn label(&self, flow: FlowId) -> FlowLabel {
        self.labels.get(flow as usize).copied().unwrap_or_else(|| FlowLabel::default_for(flow))
    }

    /// The tin a packet goes to.
    pub fn tin_of(&self, pkt: &Packet) -> usize {
        self.diffserv.tin_of(self.label(pkt.flow).dscp)
    }

    /// The size the shaper and deficits charge (`cake_calc_overhead`, no ATM/PTM).
    fn adjusted_len(&self, size: u32) -> u64 {
        ((i64::from(size) + self.overhead).max(0) as u64).max(self.mpu)
    }

    /// The flow queue of `pkt` in tin `t` (`cake_hash`), claiming a way and host entries as
    /// sch_cake does.
    pub fn classify(&mut self, t: usize, pkt: &Packet) -> usize {
        if self.mode == 0 {
            return 0;
        }
        let label = self.label(pkt.flow);
        let (src, dst) = if pkt.is_feedback() { (label.receiver_host, label.sender_host) } else { (label.sender_host, label.receiver_host) };
        let mut fhash = if self.mode & 4 != 0 { flow_hash(pkt.flow, self.perturbation) } else { 0 };
        let srchost_hash = flow_hash(src, self.perturbation ^ SRC_SALT);
        let dsthost_hash = flow_hash(dst, self.perturbation ^ DST_SALT);
        if self.mode & 4 == 0 {
            if self.mode & 1 != 0 {
                fhash ^= srchost_hash;
            }
            if self.mode & 2 != 0 {
                fhash ^= dsthost_hash;
            }
        }
        let (dual_src, dual_dst, ways) = (self.dual_src(), self.dual_dst(), self.ways);
        let b = &mut self.tins[t];
        let reduced = fhash as usize % CAKE_QUEUES;
        if b.tags[reduced] == fhash && b.flows[reduced].set != FlowSet::None {
            self.details.way_directs += 1;
            return reduced;
        }
        let inner = reduced % ways;
        let outer = reduced - inner;
        let (mut alloc_src, mut alloc_dst) = (false, false);
        let mut k = inner;
        let mut found = false;
        for i in 0..ways {
            if b.tags[outer + k] == fhash {
                if i > 0 {
                    self.details.way_hits += 1;
                }
                if b.flows[outer + k].set == FlowSet::None {
                    (alloc_src, alloc_dst) = (dual_src, dual_dst);
                }
                found = true;
                break;
            }
            k = (k + 1) % ways;
        }
        if !found {
            for _ in 0..ways {
                if b.flows[outer + k].set == FlowSet::None {
                    self.details.way_misses += 1;
                    (alloc_src, alloc_dst) = (dual_src, dual_dst);
                    found = true;
                    break;
                }
                k = (k + 1) % ways;
            }
        }
        if !found {
            // No free way: share the hashed queue, moving its bulk count to the new hosts.
            self.details.way_collisions += 1;
            let f = &b.flows[outer + k];
            if f.set == FlowSet::Bulk {
                let (s, d) = (f.srchost as usize, f.dsthost as usize);
                if dual_src {
                    b.hosts[s].srchost_bulk_flow_count -= 1;
                }
                if dual_dst {
                    b.hosts[d].dsthost_bulk_flow_count -= 1;
                }
            }
            (alloc_src, alloc_dst) = (dual_src, dual_dst);
        }
        let idx = outer + k;
        b.tags[idx] = fhash;
        let bulk = b.flows[idx].set == FlowSet::Bulk;
        if alloc_src {
            let h = find_host(&mut b.hosts, srchost_hash, ways, |h| &mut h.srchost_tag, |h| h.srchost_bulk_flow_count);
            if bulk {
                b.hosts[h].srchost_bulk_flow_count += 1;
            }
            b.flows[idx].srchost = h as u16;
        }
        if alloc_dst {
            let h = find_host(&mut b.hosts, dsthost_hash, ways, |h| &mut h.dsthost_tag, |h| h.dsthost_bulk_flow_count);
            if bulk {
                b.hosts[h].dsthost_bulk_flow_count += 1;
            }
            b.flows[idx].dsthost = h as u16;
        }
        idx
    }

    /// max(1, the bulk counts of the queue's hosts that the mode uses).
    fn host_load(&self, t: usize, idx: usize) -> u32 {
        let b = &self.tins[t];
        let f = &b.flows[idx];
        let mut load = 1;
        if self.dual_src() {
            load = load.max(b.hosts[f.srchost as usize].srchost_bulk_flow_count);
        }
        if self.dual_dst() {
            load = load.max(b.hosts[f.dsthost as usize].dsthost_bulk_flow_count);
        }
        load
    }

    /// Adds (`+1`) or removes (`-1`) queue `idx`'s flow from its hosts' bulk counts.
    fn host_bulk(&mut self, t: usize, idx: usize, up: bool) {
        let (ds, dd) = (self.dual_src(), self.dual_dst());
        let b = &mut self.tins[t];
        let (s, d) = (b.flows[idx].srchost as usize, b.flows[idx].dsthost as usize);
        let step = |c: &mut u32| if up { *c += 1 } else { *c -= 1 };
        if ds {
            step(&mut b.hosts[s].srchost_bulk_flow_count);
        }
        if dd {
            step(&mut b.hosts[d].dsthost_bulk_flow_count);
        }
    }

    /// `cake_drop`: prunes the head of the queue holding the most bytes.
    fn drop_from_fattest(&mut self, now: Time, drops: &mut DropBuf) {
        let mut best: Option<(usize, usize, u64)> = None;
        for (t, b) in self.tins.iter().enumerate() {
            for (i, f) in b.flows.iter().enumerate() {
                let bytes = f.fifo.bytes();
                if bytes > 0 && best.is_none_or(|(_, _, m)| bytes > m) {
                    best = Some((t, i, bytes));
                }
            }
        }
        let Some((t, i, _)) = best else { return };
        let b = &mut self.tins[t];
        let flow = &mut b.flows[i];
        let pkt = flow.fifo.pop().expect("the fattest queue holds a packet");
        if flow.cobalt.on_queue_full(&b.cparams, now) {
            b.unresponsive_flow_count += 1;
        }
        let size = u64::from(pkt.size);
        b.tin_backlog -= size;
        b.len -= 1;
        b.pkts.count_drop(DropKind::Overflow);
        b.bytes.drops_overflow += size;
        self.buffer_used -= size;
        self.len -= 1;
        self.stats.count_drop(DropKind::Overflow);
        self.details.overflow_drops += 1;
        drops.push((pkt, DropKind::Overflow));
    }

    /// Charges a sent packet to the tin's and the global shaper (`cake_advance_shaper`).
    fn advance_shaper(&mut self, t: usize, len: u64, now: Time) {
        if self.ns_per_byte == 0.0 {
            return;
        }
        let b = &mut self.tins[t];
        let tin_dur = serialisation(len, b.ns_per_byte);
        let global_dur = serialisation(len, self.ns_per_byte);
        let failsafe_dur = Dur(global_dur.0 + global_dur.0 / 2);
        if b.time_next_packet < now {
            b.time_next_packet += tin_dur;
        } else if b.time_next_packet < now + tin_dur {
            b.time_next_packet = now + tin_dur;
        }
        self.time_next_packet += global_dur;
        self.failsafe_next_packet += failsafe_dur;
    }

    /// Unlinks an empty queue found at dequeue, or parks it in the decaying list while its
    /// COBALT state decays (`cake_dequeue`, "this queue was actually empty").
    fn on_found_empty(&mut self, t: usize, idx: usize, now: Time) {
        let b = &mut self.tins[t];
        let cparams = b.cparams;
        if b.flows[idx].cobalt.on_queue_empty(&cparams, now) {
            b.unresponsive_flow_count -= 1;
        }
        let set = b.flows[idx].set;
        if !b.flows[idx].cobalt.at_rest(now) {
            b.chains.move_tail(idx, DECAYING);
            match set {
                FlowSet::Bulk => {
                    b.bulk_flow_count -= 1;
                    b.decaying_flow_count += 1;
                    self.host_bulk(t, idx, false);
                }
                FlowSet::Sparse | FlowSet::SparseWait => {
                    b.sparse_flow_count -= 1;
                    b.decaying_flow_count += 1;
                }
                FlowSet::Decaying | FlowSet::None => {}
            }
            self.tins[t].flows[idx].set = FlowSet::Decaying;
        } else {
            b.chains.unlink(idx);
            match set {
                FlowSet::Sparse | FlowSet::SparseWait => b.sparse_flow_count -= 1,
                FlowSet::Bulk => {
                    b.bulk_flow_count -= 1;
                    self.host_bulk(t, idx, false);
                }
                FlowSet::Decaying => b.decaying_flow_count -= 1,
                FlowSet::None => {}
            }
            self.tins[t].flows[idx].set = FlowSet::None;
        }
    }

    /// Picks the tin to serve (`cake_dequeue`, "choose a class"), `None` if nothing is sendable.
    fn choose_tin(&mut self, now: Time) -> Option<usize> {
        let active = |b: &Tin| b.sparse_flow_count + b.bulk_flow_count > 0;
        if self.ns_per_byte == 0.0 {
            // Unlimited: DRR over the tins by tin_quantum.
            let (mut wrapped, mut empty) = (false, true);
            loop {
                let b = &mut self.tins[self.cur_tin];
                if b.tin_deficit >= 0 && active(b) {
                    return Some(self.cur_tin);
                }
                if b.tin_deficit <= 0 {
                    b.tin_deficit += b.tin_quantum;
                }
                if active(b) {
                    empty = false;
                }
                self.cur_tin += 1;
                if self.cur_tin >= self.tins.len() {
                    self.cur_tin = 0;
                    if wrapped {
                        if empty {
                            return None;
                        }
                    } else {
                        wrapped = true;
                    }
                }
            }
        }
        // Shaped: the highest tin whose schedule is due, else the earliest-scheduled one.
        let mut best: Option<(usize, i128)> = None;
        for (t, b) in self.tins.iter().enumerate() {
            if active(b) {
                let to_pkt = b.time_next_packet.0 as i128 - now.0 as i128;
                if to_pkt <= 0 || best.is_none_or(|(_, bt)| to_pkt <= bt) {
                    best = Some((t, to_pkt));
                }
            }
        }
        let (t, _) = best?;
        self.cur_tin = t;
        Some(t)
    }
}

/// Finds or claims the host entry for `hash` (`cake_hash`'s host search): an entry already
/// tagged with it, else one of the set with no bulk flows, else the hashed one (collision).
fn find_host(hosts: &mut [CakeHost], hash: u32, ways: usize, tag: impl Fn(&mut CakeHost) -> &mut u32, count: impl Fn(&CakeHost) -> u32) -> usize {
    let idx = hash as usize % CAKE_QUEUES;
    let inner = idx % ways;
    let outer = idx - inner;
    let mut k = inner;
    for _ in 0..ways {
        if *tag(&mut hosts[outer + k]) == hash {
            return outer + k;
        }
        k = (k + 1) % ways;
    }
    for _ in 0..ways {
        if count(&hosts[outer + k]) == 0 {
            break;
        }
        k = (k + 1) % ways;
    }
    *tag(&mut hosts[outer + k]) = hash;
    outer + k
}

impl Qdisc for Cake {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        if self.rng.is_none() {
            self.rng = Some(rng.clone());
        }
        self.stats.arrivals += 1;
        let t = self.tin_of(&pkt);
        let idx = self.classify(t, &pkt);
        // Ensure the shaper state is not stale.
        let empty = self.len == 0;
        let b = &mut self.tins[t];
        if b.tin_backlog == 0 {
            if b.time_next_packet < now {
                b.time_next_packet = now;
            }
            if empty {
                if self.time_next_packet < now {
                    self.failsafe_next_packet = now;
                    self.time_next_packet = now;
                } else if self.time_next_packet > now && self.failsafe_next_packet > now {
                    self.details.overlimits += 1;
                }
            }
        }
        let size = u64::from(pkt.size);
        b.pkts.arrivals += 1;
        b.bytes.arrivals += size;
        b.pkts.enqueues += 1;
        b.bytes.enqueues += size;
        b.tin_backlog += size;
        b.len += 1;
        b.flows[idx].fifo.push(pkt, now);
        self.buffer_used += size;
        self.len += 1;
        self.stats.enqueues += 1;
        // The flow chain.
        match b.flows[idx].set {
            FlowSet::None | FlowSet::Decaying => {
                if b.flows[idx].set == FlowSet::Decaying {
                    b.decaying_flow_count -= 1;
                }
                b.chains.move_tail(idx, NEW);
                b.flows[idx].set = FlowSet::Sparse;
                b.sparse_flow_count += 1;
                self.details.sparse_activations += 1;
                let load = self.host_load(t, idx);
                let b = &mut self.tins[t];
                b.flows[idx].deficit = b.flow_quantum / f64::from(load);
            }
            FlowSet::SparseWait => {
                b.flows[idx].set = FlowSet::Bulk;
                b.sparse_flow_count -= 1;
                b.bulk_flow_count += 1;
                self.details.bulk_transitions += 1;
                self.host_bulk(t, idx, true);
            }
            FlowSet::Sparse | FlowSet::Bulk => {}
        }
        while self.buffer_used > self.buffer_limit {
            self.drop_from_fattest(now, drops);
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
        let mut rng = self.rng.take();
        let out = self.dequeue_inner(now, drops, &mut rng);
        self.rng = rng;
        out
    }

    /// Which queue sends next depends on the AQM's drops at dequeue: not known here.
    fn peek(&self) -> Option<&Packet> {
        None
    }

    fn len_packets(&self) -> usize {
        self.len
    }

    fn len_bytes(&self) -> u64 {
        self.buffer_used
    }

    fn stats(&self) -> &QdiscStats {
        &self.stats
    }

    /// Sparse and bulk flow queues over all tins (sch_cake's `SPARSE_FLOWS` + `BULK_FLOWS`,
    /// without the decaying ones).
    fn flow_estimate(&self) -> Option<f64> {
        Some(self.tins.iter().map(|b| f64::from(b.sparse_flow_count + b.bulk_flow_count)).sum())
    }

    fn class_stats(&self) -> Vec<ClassStats> {
        self.diffserv
            .tin_names()
            .iter()
            .zip(&self.tins)
            .map(|(name, b)| ClassStats {
                name: (*name).to_string(),
                stats: b.pkts,
                bytes: b.bytes,
                average: f64::NAN,
                len_packets: b.len,
                len_bytes: b.tin_backlog,
            })
            .collect()
    }

    fn class_count(&self) -> usize {
        self.tins.len()
    }

    fn class_len_at(&self, i: usize) -> (usize, u64) {
        (self.tins[i].len, self.tins[i].tin_backlog)
    }

    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        let d = &self.details;
        vec![
            ("cobalt_codel_drops", d.cobalt_codel_drops),
            ("cobalt_blue_drops", d.cobalt_blue_drops),
            ("cobalt_last_packet_kept", d.cobalt_last_packet_kept),
            ("overflow_drops", d.overflow_drops),
            ("sparse_activations", d.sparse_activations),
            ("bulk_transitions", d.bulk_transitions),
            ("way_directs", d.way_directs),
            ("way_hits", d.way_hits),
            ("way_misses", d.way_misses),
            ("way_collisions", d.way_collisions),
            ("overlimits", d.overlimits),
        ]
    }

    /// With the shaper on and packets queued: when the shaper lets the next one go.
    fn next_wakeup(&self) -> Option<Time> {
        (self.ns_per_byte > 0.0 && self.len > 0).then(|| self.time_next_packet.min(self.failsafe_next_packet))
    }

    fn set_flow_labels(&mut self, labels: &[FlowLabel]) {
        self.labels = labels.to_vec();
    }
}

impl Cake {
    fn dequeue_inner(&mut self, now: Time, drops: &mut DropBuf, rng: &mut Option<Rng>) -> Option<Packet> {
        let mut first_flow = true;
        'begin: loop {
            if self.len == 0 {
                return None;
            }
            // Global hard shaper.
            if self.ns_per_byte > 0.0 && self.time_next_packet > now && self.failsafe_next_packet > now {
                self.details.overlimits += 1;
                return None;
            }
            let t = self.choose_tin(now)?;
            'retry: loop {
                let b = &self.tins[t];
                let head = if first_flow && !b.chains.is_empty(DECAYING) {
                    DECAYING
                } else if !b.chains.is_empty(NEW) {
                    NEW
                } else if !b.chains.is_empty(OLD) {
                    OLD
                } else if !b.chains.is_empty(DECAYING) {
                    DECAYING
                } else {
                    continue 'begin;
                };
                let idx = b.chains.first(head).expect("non-empty list");
                first_flow = false;
                // Flow isolation (DRR++), host-scaled quantum (triple isolation).
                if self.tins[t].flows[idx].deficit <= 0.0 {
                    let b = &mut self.tins[t];
                    if b.flows[idx].set == FlowSet::Sparse {
                        if !b.flows[idx].fifo.is_empty() {
                            b.sparse_flow_count -= 1;
                            b.bulk_flow_count += 1;
                            b.flows[idx].set = FlowSet::Bulk;
                            self.details.bulk_transitions += 1;
                            self.host_bulk(t, idx, true);
                        } else {
                            b.flows[idx].set = FlowSet::SparseWait;
                        }
                    }
                    let load = self.host_load(t, idx);
                    let b = &mut self.tins[t];
                    b.flows[idx].deficit += b.flow_quantum / f64::from(load);
                    b.chains.move_tail(idx, OLD);
                    continue 'retry;
                }
                // Retrieve a packet via the AQM.
                loop {
                    let b = &mut self.tins[t];
                    let Some(mut pkt) = b.flows[idx].fifo.pop() else {
                        self.on_found_empty(t, idx, now);
                        continue 'begin;
                    };
                    let size = u64::from(pkt.size);
                    b.tin_backlog -= size;
                    b.len -= 1;
                    self.buffer_used -= size;
                    self.len -= 1;
                    let cparams = b.cparams;
                    let flow = &mut b.flows[idx];
                    let sojourn = Dur(now.0.saturating_sub(pkt.enqueued_at.0));
                    let d = flow.cobalt.should_drop(&cparams, now, sojourn, pkt.ecn, || {
                        rng.as_mut().expect("a packet arrived, so the stream was taken").gen::<f64>()
                    });
                    if d.mark {
                        pkt.ecn = Ecn::Ce;
                    }
                    if !d.drop() || flow.fifo.is_empty() {
                        // The last packet of a queue is never dropped.
                        if d.drop() {
                            self.details.cobalt_last_packet_kept += 1;
                        }
                        if d.mark {
                            self.stats.marks += 1;
                            b.pkts.marks += 1;
                        }
                        b.pkts.dequeues += 1;
                        b.bytes.dequeues += size;
                        self.stats.dequeues += 1;
                        let len = self.adjusted_len(pkt.size);
                        self.advance_shaper(t, len, now);
                        let b = &mut self.tins[t];
                        b.flows[idx].deficit -= len as f64;
                        b.tin_deficit -= len as i64;
                        return Some(pkt);
                    }
                    if d.codel_drop {
                        self.details.cobalt_codel_drops += 1;
                    } else {
                        self.details.cobalt_blue_drops += 1;
                    }
                    b.pkts.count_drop(DropKind::Early);
                    b.bytes.drops_early += size;
                    self.stats.count_drop(DropKind::Early);
                    drops.push((pkt, DropKind::Early));
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "cake_tests.rs"]
mod tests;
