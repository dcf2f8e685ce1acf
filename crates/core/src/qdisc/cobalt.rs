//! COBALT on one FIFO (`kind = "cobalt"`), as ns-3 3.44's `CobaltQueueDisc` runs it
//! (src/traffic-control/model/cobalt-queue-disc.cc, a port of Linux `sch_cake.c`'s COBALT;
//! Palmei et al., "Design and Evaluation of COBALT Queue Discipline", IEEE LANMAN 2019). The law
//! is `cobalt_core.rs`; docs/cobalt.md has the algorithm, the sources and the measurements.
//!
//! * Enqueue (`DoEnqueue`): an arrival that would take the queue over `limit` is dropped
//!   (`Overflow`) and calls the BLUE-up path (`CobaltQueueFull`: `p_drop += 1/256` at most once per
//!   `target`, CoDel into dropping with a signal due now); otherwise it is queued.
//! * Dequeue (`DoDequeue`): the head packet's sojourn time goes through `CobaltShouldDrop`; a
//!   dropped packet (`Early`, CoDel's or BLUE's) is followed by the next, until one is sent or the
//!   queue is empty, which calls `CobaltQueueEmpty` (BLUE down by 1/4096, timer permitting).
//!   Unlike CAKE, the last packet of the queue may be dropped.
//!
//! `variant = "ns3"` (default) is ns-3's port, `"linux"` the law as `sch_cake.c` runs it per
//! queue (there is no standalone COBALT in Linux; overflow handling stays ns-3's). They differ in
//! four places (`cobalt_core.rs` has the table): a fresh queue's 1/√count (ns-3 1, so its first
//! signal comes an interval after the delay exceeds target; Linux 0, so at once), ns-3's BLUE
//! threshold (a packet that waited over 400 ms raises `p_drop`), ns-3's 32-bit BLUE timer (the
//! hold-off stops holding 4.29 s into the run), and ns-3's CE threshold. Both compute 1/√count
//! in Linux's 0.32 fixed point.
//!
//! Defaults are ns-3's attributes: Interval 100 ms, Target 5 ms, MaxSize 1 500 000 bytes
//! (`1500 * DEFAULT_COBALT_LIMIT` bytes), UseEcn false, Increment 1/256, Decrement 1/4096,
//! BlueThreshold 400 ms, CeThreshold none. Not modelled: `UseL4s`, the `Pdrop` start value.
//!
//! Random draws: one uniform per dequeued packet while `p_drop > 0`, from the discipline's stream
//! copied at the first arrival (nothing is drawn at enqueue).

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::cobalt_core::{Cobalt, CobaltArithmetic, CobaltParams, P_DEC, P_INC};
use super::fifo::Fifo;
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Dur, Rng, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::{Ecn, Packet};
use crate::scenario::units::{Duration, DurationSwitch, Limit};

/// Whose COBALT: ns-3 3.44's port or Linux `sch_cake.c`'s law.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CobaltVariant {
    /// ns-3 3.44 `CobaltQueueDisc` / `FqCobaltQueueDisc`.
    #[default]
    Ns3,
    /// Linux `sch_cake.c`'s `cobalt_*` functions.
    Linux,
}

/// Scenario keys of `kind = "cobalt"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CobaltQdiscParams {
    /// Acceptable standing queue delay (ns-3 `Target`, 5 ms).
    #[serde(default = "default_target")]
    pub target: Duration,
    /// CoDel interval (ns-3 `Interval`, 100 ms).
    #[serde(default = "default_interval")]
    pub interval: Duration,
    /// Buffer: packets or bytes (ns-3 `MaxSize`: 1 500 000 bytes).
    #[serde(default = "default_limit")]
    pub limit: Limit,
    /// Mark ECN-capable packets CE instead of dropping them (ns-3 `UseEcn`: false).
    #[serde(default)]
    pub ecn: bool,
    /// BLUE's increment (ns-3 `Increment`, 1/256).
    #[serde(default = "default_p_inc")]
    pub p_inc: f64,
    /// BLUE's decrement (ns-3 `Decrement`, 1/4096).
    #[serde(default = "default_p_dec")]
    pub p_dec: f64,
    /// ns-3 `BlueThreshold`: `"auto"` = 400 ms (ns3) or none (linux).
    #[serde(default)]
    pub blue_threshold: DurationSwitch,
    /// ns-3 `CeThreshold`: `"auto"` = none.
    #[serde(default)]
    pub ce_threshold: DurationSwitch,
    /// `ns3` or `linux`.
    #[serde(default)]
    pub variant: CobaltVariant,
}

pub(crate) fn default_target() -> Duration {
    Duration(Dur::from_millis(5))
}
pub(crate) fn default_interval() -> Duration {
    Duration(Dur::from_millis(100))
}
fn default_limit() -> Limit {
    Limit::Bytes(1_500_000)
}
pub(crate) fn default_p_inc() -> f64 {
    P_INC
}
pub(crate) fn default_p_dec() -> f64 {
    P_DEC
}

impl Default for CobaltQdiscParams {
    fn default() -> Self {
        CobaltQdiscParams {
            target: default_target(),
            interval: default_interval(),
            limit: default_limit(),
            ecn: false,
            p_inc: P_INC,
            p_dec: P_DEC,
            blue_threshold: DurationSwitch::Auto,
            ce_threshold: DurationSwitch::Auto,
            variant: CobaltVariant::Ns3,
        }
    }
}

/// ns-3's `BlueThreshold` default.
pub const NS3_BLUE_THRESHOLD: Dur = Dur::from_millis(400);

/// The COBALT keys shared by `cobalt` and `fq_cobalt`, checked and turned into the law's
/// constants.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cobalt_config(path: &str, target: Duration, interval: Duration, ecn: bool, p_inc: f64, p_dec: f64,
                            blue_threshold: DurationSwitch, ce_threshold: DurationSwitch, variant: CobaltVariant)
                            -> ConfigResult<CobaltParams> {
    // Linux and ns-3 scale the interval as a u32 of nanoseconds (reciprocal_scale).
    if interval.0 .0 == 0 || interval.0 .0 > u64::from(u32::MAX) {
        return Err(ConfigError::new(join(path, "interval"),
            format!("must be positive and at most 4.294967295s (a 32-bit count of ns, as Linux and ns-3 hold it), got {interval}")));
    }
    if target.0 .0 == 0 || target.0 >= interval.0 {
        return Err(ConfigError::new(join(path, "target"),
            format!("must be positive and shorter than interval ({interval}), got {target}")));
    }
    for (key, v) in [("p_inc", p_inc), ("p_dec", p_dec)] {
        if !(v > 0.0 && v <= 1.0) {
            return Err(ConfigError::new(join(path, key), format!("must be a probability step in (0, 1], got {v}")));
        }
    }
    let ns3 = variant == CobaltVariant::Ns3;
    for (key, v) in [("blue_threshold", blue_threshold), ("ce_threshold", ce_threshold)] {
        match v {
            DurationSwitch::At(d) if !ns3 => {
                return Err(ConfigError::new(join(path, key),
                    format!("is ns-3's addition to COBALT; variant = \"linux\" has none (use \"auto\" or \"none\"), got {}", Duration(d))));
            }
            DurationSwitch::At(d) if d.0 == 0 => {
                return Err(ConfigError::new(join(path, key), "must be positive, \"none\" or \"auto\", got 0s"));
            }
            _ => {}
        }
    }
    if matches!(ce_threshold, DurationSwitch::At(_)) && !ecn {
        return Err(ConfigError::new(join(path, "ce_threshold"), "marks CE, so it needs ecn = true"));
    }
    let resolve = |s: DurationSwitch, auto: Option<Dur>| match s {
        DurationSwitch::Auto => auto,
        DurationSwitch::Off => None,
        DurationSwitch::At(d) => Some(d),
    };
    Ok(CobaltParams {
        p_inc,
        p_dec,
        ecn,
        ce_threshold: resolve(ce_threshold, None),
        blue_threshold: resolve(blue_threshold, ns3.then_some(NS3_BLUE_THRESHOLD)),
        blue_timer_u32: ns3,
        arithmetic: CobaltArithmetic::FixedPoint,
        ..CobaltParams::new(target.0, interval.0)
    })
}

/// A fresh queue's COBALT state as the variant creates it.
pub(crate) fn fresh_state(variant: CobaltVariant) -> Cobalt {
    match variant {
        CobaltVariant::Ns3 => Cobalt::ns3_fresh(),
        CobaltVariant::Linux => Cobalt::default(),
    }
}

impl CobaltQdiscParams {
    /// Checks the keys and builds the discipline.
    pub fn validate(&self, path: &str) -> ConfigResult<CobaltQdisc> {
        let law = cobalt_config(path, self.target, self.interval, self.ecn, self.p_inc, self.p_dec, self.blue_threshold,
                                self.ce_threshold, self.variant)?;
        Ok(CobaltQdisc {
            law,
            state: fresh_state(self.variant),
            limit: self.limit,
            fifo: Fifo::new(self.limit),
            rng: None,
            stats: QdiscStats::default(),
            details: CobaltDetails::default(),
        })
    }
}

/// Counters beyond `QdiscStats`, reported under `details`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CobaltDetails {
    /// Packets CoDel's signal dropped.
    pub codel_drops: u64,
    /// Packets BLUE's draw dropped (CoDel had not).
    pub blue_drops: u64,
    /// Times BLUE raised `p_drop` (overflow or, ns-3, the BLUE threshold).
    pub blue_increases: u64,
    /// Times BLUE lowered `p_drop` (queue found empty).
    pub blue_decreases: u64,
}

/// COBALT over one FIFO.
pub struct CobaltQdisc {
    law: CobaltParams,
    state: Cobalt,
    limit: Limit,
    fifo: Fifo,
    /// The discipline's stream, copied at the first arrival (dequeue is handed none).
    rng: Option<Rng>,
    stats: QdiscStats,
    details: CobaltDetails,
}

impl CobaltQdisc {
    /// The law's state.
    pub fn state(&self) -> &Cobalt {
        &self.state
    }

    /// The law's constants.
    pub fn law(&self) -> &CobaltParams {
        &self.law
    }

    /// The counters beyond `QdiscStats`.
    pub fn details(&self) -> &CobaltDetails {
        &self.details
    }
}

/// Runs COBALT on `fifo`'s head until a packet may leave (ns-3 `DoDequeue`): drops go to `drops`
/// as `Early`, CE marks are made and counted; an empty queue runs the BLUE-down path. `rng` is
/// drawn once per packet while BLUE is active. Shared by `cobalt` and `fq_cobalt`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cobalt_dequeue(law: &CobaltParams, state: &mut Cobalt, fifo: &mut Fifo, now: Time, rng: &mut Option<Rng>,
                             stats: &mut QdiscStats, details: &mut CobaltDetails, drops: &mut DropBuf) -> Option<Packet> {
    loop {
        let Some(mut pkt) = fifo.pop() else {
            let before = state.p_drop;
            state.on_queue_empty(law, now);
            if state.p_drop < before {
                details.blue_decreases += 1;
            }
            return None;
        };
        let sojourn = Dur(now.0.saturating_sub(pkt.enqueued_at.0));
        let before = state.p_drop;
        let d = state.should_drop(law, now, sojourn, pkt.ecn, || {
            rng.as_mut().expect("a packet arrived, so the stream was taken").gen::<f64>()
        });
        if state.p_drop > before {
            details.blue_increases += 1;
        }
        if d.mark && pkt.ecn != Ecn::Ce {
            pkt.ecn = Ecn::Ce;
        }
        if !d.drop() {
            if d.mark {
                stats.marks += 1;
            }
            return Some(pkt);
        }
        if d.codel_drop { details.codel_drops += 1 } else { details.blue_drops += 1 }
        stats.count_drop(DropKind::Early);
        drops.push((pkt, DropKind::Early));
    }
}

impl Qdisc for CobaltQdisc {
    fn enqueue(&mut self, pkt: Packet, now: Time, rng: &mut Rng, _drops: &mut DropBuf) -> Verdict {
        if self.rng.is_none() {
            self.rng = Some(rng.clone());
        }
        self.stats.arrivals += 1;
        if !self.fifo.admits(self.limit, pkt.size) {
            // CobaltQueueFull, then DropBeforeEnqueue.
            let before = self.state.p_drop;
            self.state.on_queue_full(&self.law, now);
            if self.state.p_drop > before {
                self.details.blue_increases += 1;
            }
            self.stats.count_drop(DropKind::Overflow);
            return Verdict::Dropped(DropKind::Overflow);
        }
        self.fifo.push(pkt, now);
        self.stats.enqueues += 1;
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, drops: &mut DropBuf) -> Option<Packet> {
        let pkt = cobalt_dequeue(&self.law, &mut self.state, &mut self.fifo, now, &mut self.rng, &mut self.stats,
                                 &mut self.details, drops)?;
        self.stats.dequeues += 1;
        Some(pkt)
    }

    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        let d = self.details;
        vec![("codel_drops", d.codel_drops), ("blue_drops", d.blue_drops), ("blue_increases", d.blue_increases),
             ("blue_decreases", d.blue_decreases)]
    }

    super::fifo::fifo_accessors!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::PacketKind;

    const DATA: Packet = Packet { size: 1500, ..Packet::new(PacketKind::Udp, 0) };

    fn ms(t: u64) -> Time {
        Time(t * 1_000_000)
    }

    fn cobalt(p: CobaltQdiscParams) -> CobaltQdisc {
        p.validate("queue").unwrap()
    }

    /// Keeps `backlog` packets queued and serves one per ms from `from_ms` to `to_ms`; returns
    /// (ms, drops) of every dequeue that dropped.
    fn standing_queue(q: &mut CobaltQdisc, backlog: usize, from_ms: u64, to_ms: u64) -> Vec<(u64, usize)> {
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        let mut out = Vec::new();
        for t in from_ms..to_ms {
            while q.len_packets() < backlog {
                q.enqueue(DATA, ms(t), &mut rng, &mut drops);
            }
            q.dequeue(ms(t), &mut drops);
            if !drops.is_empty() {
                out.push((t, drops.len()));
                drops.clear();
            }
        }
        out
    }

    #[test]
    fn full_buffer_drops_the_arrival_and_raises_blue() {
        // limit 3 packets: the 4th arrival is refused and p_drop goes 0 → 1/256 (CobaltQueueFull);
        // CoDel enters dropping with a signal due now, count 1.
        let mut q = cobalt(CobaltQdiscParams { limit: Limit::Packets(3), ..Default::default() });
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..3 {
            assert_eq!(q.enqueue(DATA, ms(10), &mut rng, &mut drops), Verdict::Enqueued);
        }
        assert_eq!(q.enqueue(DATA, ms(10), &mut rng, &mut drops), Verdict::Dropped(DropKind::Overflow));
        let s = *q.state();
        assert_eq!((s.p_drop, s.blue_timer, s.dropping, s.drop_next, s.count), (P_INC, ms(10), true, ms(10), 1));
        // A second overflow within target (5 ms) leaves p_drop alone; one after it raises it again.
        q.enqueue(DATA, ms(14), &mut rng, &mut drops);
        assert_eq!(q.state().p_drop, P_INC);
        q.enqueue(DATA, ms(16), &mut rng, &mut drops);
        assert_eq!(q.state().p_drop, 2.0 * P_INC);
        assert_eq!((q.stats().drops_overflow, q.details().blue_increases), (3, 2));
    }

    #[test]
    fn empty_queue_lowers_blue_once_per_target() {
        let mut q = cobalt(CobaltQdiscParams::default());
        let mut drops = DropBuf::new();
        q.state.p_drop = 2.0 * P_DEC;
        q.state.blue_timer = ms(100);
        assert!(q.dequeue(ms(104), &mut drops).is_none()); // 4 ms since the last change: held off
        assert_eq!(q.state().p_drop, 2.0 * P_DEC);
        assert!(q.dequeue(ms(106), &mut drops).is_none());
        assert_eq!(q.state().p_drop, P_DEC);
        assert!(q.dequeue(ms(112), &mut drops).is_none());
        assert_eq!((q.state().p_drop, q.details().blue_decreases), (0.0, 2));
        assert!(!q.state().dropping);
    }

    #[test]
    fn standing_queue_is_dropped_at_interval_over_root_count_in_ns3() {
        // 20 packets queued at 0 ms, one served per ms and replaced: the packet leaving at k ms
        // has waited k ms (then 19 ms once the first 20 are gone), so the first over target
        // (> 5 ms) leaves at 6 ms. ns-3's fresh queue (1/√count = 1 in 0.32 fixed point) signals
        // (1e8 · (2³² − 1)) >> 32 = 99.999999 ms later, at 105.999999 ms → the 106 ms dequeue;
        // then + 70.710678 (176.71 → 177), + 57.735026 (234.45 → 235), + 50 ms (284.45 → 285).
        let mut q = cobalt(CobaltQdiscParams::default());
        let got = standing_queue(&mut q, 20, 0, 400);
        let at: Vec<u64> = got.iter().map(|g| g.0).collect();
        assert_eq!(&at[..4], [106, 177, 235, 285]);
        assert!(got.iter().all(|g| g.1 == 1));
        assert_eq!(q.details().codel_drops, at.len() as u64);
        let st = q.stats();
        assert_eq!(st.enqueues, st.dequeues + st.drops_early + q.len_packets() as u64);
    }

    #[test]
    fn linux_variant_signals_a_fresh_queue_at_once() {
        // Linux zeroes the state, so 1/√count = 0: the first dequeue over target (6 ms, as
        // above) enters dropping with drop_next = now, and the next one (7 ms) is signalled.
        let mut q = cobalt(CobaltQdiscParams { variant: CobaltVariant::Linux, ..Default::default() });
        let got = standing_queue(&mut q, 20, 0, 400);
        let first_over = 6; // the packet queued at 0 ms leaves at 6 ms with sojourn 6 ms > 5 ms
        assert_eq!(got[0].0, first_over + 1);
    }

    #[test]
    fn ecn_capable_packets_are_marked_when_ecn_is_on_and_dropped_when_off() {
        for (ecn, marks) in [(true, true), (false, false)] {
            let mut q = cobalt(CobaltQdiscParams { ecn, ..Default::default() });
            let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
            let mut marked = 0;
            for t in 0..300 {
                while q.len_packets() < 20 {
                    q.enqueue(Packet { ecn: Ecn::Ect, ..DATA }, ms(t), &mut rng, &mut drops);
                }
                marked += u64::from(q.dequeue(ms(t), &mut drops).is_some_and(|p| p.ecn == Ecn::Ce));
            }
            assert_eq!((marked > 0, drops.is_empty()), (marks, marks), "ecn {ecn}");
            assert_eq!(q.stats().marks, marked);
        }
    }

    #[test]
    fn blue_drops_every_packet_at_p_drop_one() {
        let mut q = cobalt(CobaltQdiscParams::default());
        let (mut rng, mut drops) = (stream(1, StreamId::Queue(0)), DropBuf::new());
        for _ in 0..5 {
            q.enqueue(DATA, ms(0), &mut rng, &mut drops);
        }
        q.state.p_drop = 1.0;
        // Sojourn 1 ms, below target: CoDel quiet, BLUE drops all five, then finds it empty.
        assert!(q.dequeue(ms(1), &mut drops).is_none());
        assert_eq!((drops.len(), q.details().blue_drops, q.details().codel_drops), (5, 5, 0));
    }

    #[test]
    fn bad_keys_are_refused_with_the_key_named() {
        let cases = [
            (CobaltQdiscParams { target: Duration(Dur::from_millis(100)), ..Default::default() }, "queue.target"),
            (CobaltQdiscParams { interval: Duration(Dur::from_millis(5000)), ..Default::default() }, "queue.interval"),
            (CobaltQdiscParams { p_inc: 0.0, ..Default::default() }, "queue.p_inc"),
            (CobaltQdiscParams { p_dec: 1.5, ..Default::default() }, "queue.p_dec"),
            (CobaltQdiscParams { variant: CobaltVariant::Linux, blue_threshold: DurationSwitch::At(Dur::from_millis(400)), ..Default::default() },
             "queue.blue_threshold"),
            (CobaltQdiscParams { ce_threshold: DurationSwitch::At(Dur::from_millis(1)), ..Default::default() }, "queue.ce_threshold"),
        ];
        for (p, key) in cases {
            let e = p.validate("queue").err().unwrap();
            assert!(e.to_string().contains(key), "{e}");
        }
    }
}
