//! COBALT, "CoDel–BLUE Alternate" (Palmei, Gupta, Imputato, Morton, Tahiliani, Avallone & Täht,
//! "Design and Evaluation of COBALT Queue Discipline", IEEE LANMAN 2019), the per-queue AQM of
//! Linux `net/sched/sch_cake.c` (`cobalt_should_drop`, `cobalt_queue_full`, `cobalt_queue_empty`,
//! `cobalt_newton_step`, `cobalt_invsqrt`, `cobalt_cache_init`, `cobalt_control`) and of ns-3 3.44's
//! `CobaltQueueDisc` (src/traffic-control/model/cobalt-queue-disc.cc: `CobaltShouldDrop`,
//! `CobaltQueueFull`, `CobaltQueueEmpty`, `NewtonStep`, `InvSqrt`, `CacheInit`, `ControlLaw`), a
//! port of it. `cake.rs` runs it per flow queue; `cobalt.rs` on one FIFO (`kind = "cobalt"`) and
//! per flow queue under FQ-CoDel's scheduler (`kind = "fq_cobalt"`).
//!
//! Two halves, both run at dequeue on the leaving packet's sojourn time:
//!
//! * **CoDel** (simplified): above `target` the queue enters dropping with the first signal
//!   `interval/√count` after now; each signal (CE mark of an ECN-capable packet, else a drop)
//!   comes `interval/√count` after the previous one, count + 1. Below target the count is not
//!   reset but falls by one per control interval that passes (`drop_next` doubles as the timer),
//!   so a queue that comes back is signalled sooner. Worked number: count 4 spaces signals
//!   100 ms/2 = 50 ms apart.
//! * **BLUE**: `p_drop` rises by `p_inc` (1/256) when the queue overflows and falls by `p_dec`
//!   (1/4096) when it is found empty, each at most once per `target` (the BLUE timer); every
//!   dequeued packet is then dropped with probability `p_drop`, ECN-capable or not.
//!
//! What the users differ in is a `CobaltParams` field each:
//!
//! | | CAKE (`cake.rs`) | ns-3 3.44 | Linux `sch_cake.c` |
//! |---|---|---|---|
//! | 1/√count | `Exact` (f64) | `FixedPoint`: 0.32, 16-entry cache of 4 Newton steps, then one step per change | same as ns-3 |
//! | fresh queue's 1/√count | 0 (Linux's memset) | `~0U` (1.0): first signal an interval after the delay exceeds target | 0: first signal at once |
//! | ECN | always marks ECT | `UseEcn` (CobaltQueueDisc false, FqCobaltQueueDisc true) | always marks ECT |
//! | `ce_threshold` | none | `CeThreshold`: CE-mark ECT packets above it | none |
//! | BLUE threshold | none | `BlueThreshold` 400 ms: a packet that waited longer raises `p_drop` like an overflow | none |
//! | BLUE timer | 64-bit | `uint32_t m_lastUpdateTimeBlue` holds the ns time modulo 2³² (4.29 s), so from 4.29 s on the hold-off never holds | 64-bit |
//! | MTU floor | sojourn > 4 × MTU time | none | sojourn > 4 × MTU time (0 unshaped) |
//!
//! Random draws: one uniform per dequeued packet while `p_drop > 0` (both ns-3 and this draw
//! even when CoDel already drops; recent Linux kernels skip the draw then; the outcome is the same).

use crate::engine::{Dur, Time};
use crate::packet::Ecn;

/// BLUE's increment on overflow, 1/256 (`cake_set_rate`: `1 << 24` in 0.32 fixed point; ns-3
/// `Increment`).
pub const P_INC: f64 = 1.0 / 256.0;
/// BLUE's decrement on an empty queue, 1/4096 (`1 << 20` in 0.32 fixed point; ns-3 `Decrement`).
pub const P_DEC: f64 = 1.0 / 4096.0;

/// How 1/√count and the control law are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CobaltArithmetic {
    /// 1/√count in `f64`, `interval · (1/√count)` rounded down to the ns (CAKE's choice).
    #[default]
    Exact,
    /// Linux's and ns-3's: 1/√count in 0.32 fixed point (`u32`), from a 16-entry cache built by
    /// four Newton steps per count (`cobalt_cache_init`, `CacheInit`), one Newton step per change
    /// of count beyond; the control law is `t + (interval · rec_inv_sqrt) >> 32` with the
    /// interval taken as a `u32` of ns (`reciprocal_scale`, `ReciprocalDivide`).
    FixedPoint,
}

/// COBALT's constants for one queue (`struct cobalt_params`; ns-3's attributes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CobaltParams {
    /// CoDel interval, and the spacing of the first signal after the delay exceeds target.
    pub interval: Dur,
    /// Largest persistent sojourn time; also BLUE's update hold-off.
    pub target: Dur,
    /// Serialisation time of an MTU at the tin's rate (0 unlimited): no CoDel signal while the
    /// sojourn is at most 4 MTU times (Linux only).
    pub mtu_time: Dur,
    /// BLUE increment.
    pub p_inc: f64,
    /// BLUE decrement.
    pub p_dec: f64,
    /// CoDel's signal CE-marks an ECN-capable packet (true: Linux, CAKE; ns-3 `UseEcn`); false
    /// drops every signalled packet.
    pub ecn: bool,
    /// ns-3 `CeThreshold`: with `ecn`, an ECN-capable packet that waited longer is CE-marked even
    /// when CoDel does not signal (None: ns-3's `Time::Max()`, Linux).
    pub ce_threshold: Option<Dur>,
    /// ns-3 `BlueThreshold`: a packet that waited longer raises `p_drop` by `p_inc` (timer
    /// permitting), as an overflow would (None: Linux, CAKE).
    pub blue_threshold: Option<Dur>,
    /// ns-3 keeps the BLUE timer in a `uint32_t` of ns: the hold-off compares `now` with the
    /// update time modulo 2³² (false: Linux's 64-bit `ktime_t`).
    pub blue_timer_u32: bool,
    /// 1/√count arithmetic.
    pub arithmetic: CobaltArithmetic,
}

impl CobaltParams {
    /// COBALT with `target`/`interval` as CAKE runs it: no MTU floor, BLUE steps as Linux, ECN
    /// marking, exact arithmetic, none of ns-3's additions.
    pub fn new(target: Dur, interval: Dur) -> CobaltParams {
        CobaltParams {
            interval,
            target,
            mtu_time: Dur::ZERO,
            p_inc: P_INC,
            p_dec: P_DEC,
            ecn: true,
            ce_threshold: None,
            blue_threshold: None,
            blue_timer_u32: false,
            arithmetic: CobaltArithmetic::Exact,
        }
    }
}

/// COBALT's per-queue state (`struct cobalt_vars`; ns-3's members).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cobalt {
    /// CoDel's signalling count; decays by one per control interval below target.
    pub count: u32,
    /// 1/√count (1 for count 0) once count has changed; 0 in a fresh queue (Linux's memset).
    /// `Exact` arithmetic only.
    pub rec_inv_sqrt: f64,
    /// 1/√count in 0.32 fixed point (`u32::MAX` ≈ 1); `FixedPoint` arithmetic only.
    pub rec_inv_sqrt_q32: u32,
    /// When the next CoDel signal is due, or (count 0) an activity timeout.
    pub drop_next: Time,
    /// When BLUE last changed `p_drop`.
    pub blue_timer: Time,
    /// BLUE's drop probability, 0 to 1.
    pub p_drop: f64,
    /// The sojourn time is above target (CoDel's dropping state).
    pub dropping: bool,
}

/// What COBALT decided for one dequeued packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CobaltDecision {
    /// The packet is to be marked CE: CoDel's signal fell on an ECN-capable packet, or (ns-3)
    /// it waited longer than `ce_threshold`.
    pub mark: bool,
    /// CoDel's signal fell on a packet it may not mark: drop.
    pub codel_drop: bool,
    /// BLUE's draw said drop (whatever the ECN field).
    pub blue_drop: bool,
}

impl CobaltDecision {
    /// The packet is to be dropped (by either half).
    pub fn drop(self) -> bool {
        self.codel_drop || self.blue_drop
    }
}

fn inv_sqrt(count: u32) -> f64 {
    if count == 0 { 1.0 } else { 1.0 / f64::from(count).sqrt() }
}

/// One Newton step of `rec_inv_sqrt ← rec_inv_sqrt · (3 − count · rec_inv_sqrt²) / 2` in 0.32
/// fixed point, exactly as `cobalt_newton_step` / ns-3 `NewtonStep` (the wraps included).
const fn newton_step_q32(rec_inv_sqrt: u32, count: u32) -> u32 {
    let invsqrt = rec_inv_sqrt as u64;
    let invsqrt2 = (invsqrt * invsqrt) >> 32;
    let mut val = (3u64 << 32).wrapping_sub((count as u64).wrapping_mul(invsqrt2));
    val >>= 2; // avoid overflow
    val = val.wrapping_mul(invsqrt) >> (32 - 2 + 1);
    val as u32
}

/// `cobalt_cache_init` / ns-3 `CacheInit`: entry `c` is 1/√c after four Newton steps from entry
/// `c − 1`; entry 0 is `~0U`.
const INV_SQRT_CACHE: [u32; 16] = {
    let mut cache = [0u32; 16];
    cache[0] = u32::MAX;
    let mut r = u32::MAX;
    let mut c = 1;
    while c < 16 {
        r = newton_step_q32(r, c as u32);
        r = newton_step_q32(r, c as u32);
        r = newton_step_q32(r, c as u32);
        r = newton_step_q32(r, c as u32);
        cache[c] = r;
        c += 1;
    }
    cache
};

/// `a - b > d` on times that may be in either order.
fn later_by_more_than(a: Time, b: Time, d: Dur) -> bool {
    a.0 > b.0 && a.0 - b.0 > d.0
}

impl Cobalt {
    /// A fresh queue as ns-3 creates it (`InitializeParams`: `m_recInvSqrt = ~0U`, 1/√count = 1),
    /// so its first dropping episode waits an interval. `Cobalt::default()` is Linux's memset.
    pub fn ns3_fresh() -> Cobalt {
        Cobalt { rec_inv_sqrt: 1.0, rec_inv_sqrt_q32: u32::MAX, ..Cobalt::default() }
    }

    /// 1/√count as a real number, whichever arithmetic keeps it.
    pub fn inv_sqrt_value(&self, p: &CobaltParams) -> f64 {
        match p.arithmetic {
            CobaltArithmetic::Exact => self.rec_inv_sqrt,
            CobaltArithmetic::FixedPoint => f64::from(self.rec_inv_sqrt_q32) / 4_294_967_296.0,
        }
    }

    /// `count ← count`, then 1/√count (`cobalt_invsqrt`, ns-3 `InvSqrt`).
    fn set_count(&mut self, p: &CobaltParams, count: u32) {
        self.count = count;
        match p.arithmetic {
            CobaltArithmetic::Exact => self.rec_inv_sqrt = inv_sqrt(count),
            CobaltArithmetic::FixedPoint => {
                self.rec_inv_sqrt_q32 = if count < 16 {
                    INV_SQRT_CACHE[count as usize]
                } else {
                    newton_step_q32(self.rec_inv_sqrt_q32, count)
                };
            }
        }
    }

    /// CoDel's control law, `t + interval/√count` (`cobalt_control`, ns-3 `ControlLaw`).
    fn control(&self, p: &CobaltParams, t: Time) -> Time {
        match p.arithmetic {
            CobaltArithmetic::Exact => Time(t.0 + (p.interval.0 as f64 * self.rec_inv_sqrt) as u64),
            // reciprocal_scale(u32 interval, u32 rec_inv_sqrt) = (interval · r) >> 32.
            CobaltArithmetic::FixedPoint => {
                Time(t.0 + ((u64::from(p.interval.0 as u32) * u64::from(self.rec_inv_sqrt_q32)) >> 32))
            }
        }
    }

    /// Whether more than `target` has passed since BLUE last moved (`now - blue_timer > target`);
    /// ns-3 subtracts the update time as it survives in its `uint32_t`.
    fn blue_timer_expired(&self, p: &CobaltParams, now: Time) -> bool {
        if p.blue_timer_u32 {
            let last = self.blue_timer.0 & 0xffff_ffff;
            now.0 as i64 - last as i64 > p.target.0 as i64
        } else {
            later_by_more_than(now, self.blue_timer, p.target)
        }
    }

    /// BLUE up by `p_inc`, capped at 1, if the timer allows; returns whether it moved.
    fn blue_up(&mut self, p: &CobaltParams, now: Time) -> bool {
        if self.blue_timer_expired(p, now) {
            self.p_drop = (self.p_drop + p.p_inc).min(1.0);
            self.blue_timer = now;
            return true;
        }
        false
    }

    /// The queue was pruned at overflow (`cobalt_queue_full`, ns-3 `CobaltQueueFull`): BLUE up if
    /// its timer allows, and CoDel straight into dropping with a signal due now. Returns whether
    /// BLUE went from idle to active (the queue is then counted unresponsive).
    pub fn on_queue_full(&mut self, p: &CobaltParams, now: Time) -> bool {
        let was_idle = self.p_drop == 0.0;
        let up = self.blue_up(p, now) && was_idle;
        self.dropping = true;
        self.drop_next = now;
        if self.count == 0 {
            self.count = 1; // rec_inv_sqrt untouched, as Linux and ns-3
        }
        up
    }

    /// The queue was found empty at dequeue (`cobalt_queue_empty`, ns-3 `CobaltQueueEmpty`): BLUE
    /// down if its timer allows, CoDel out of dropping, and the count decays if a signal was
    /// due. Returns whether BLUE went from active to idle.
    pub fn on_queue_empty(&mut self, p: &CobaltParams, now: Time) -> bool {
        let mut down = false;
        if self.p_drop > 0.0 && self.blue_timer_expired(p, now) {
            self.p_drop = if self.p_drop < p.p_dec { 0.0 } else { self.p_drop - p.p_dec };
            self.blue_timer = now;
            down = self.p_drop == 0.0;
        }
        self.dropping = false;
        if self.count > 0 && now >= self.drop_next {
            self.set_count(p, self.count - 1);
            self.drop_next = self.control(p, self.drop_next);
        }
        down
    }

    /// The decision for a packet leaving after `sojourn` (`cobalt_should_drop`, ns-3
    /// `CobaltShouldDrop`). `ecn` is its ECN field; `uniform` is drawn only when BLUE is active.
    pub fn should_drop(&mut self, p: &CobaltParams, now: Time, sojourn: Dur, ecn: Ecn, uniform: impl FnOnce() -> f64) -> CobaltDecision {
        // bulk_flows is 0 outside ingress mode, so only the 4-MTU floor applies.
        let over_target = sojourn > p.target && sojourn.0 > p.mtu_time.0.saturating_mul(4);
        let mut schedule_due = now >= self.drop_next; // sign of `schedule = now - drop_next`
        let mut schedule_after = now > self.drop_next;
        let next_due = self.count > 0 && schedule_due;
        let mut d = CobaltDecision::default();
        if over_target {
            if !self.dropping {
                self.dropping = true;
                self.drop_next = self.control(p, now);
            }
            if self.count == 0 {
                self.count = 1;
            }
        } else if self.dropping {
            self.dropping = false;
        }
        if next_due && self.dropping {
            // CE on ECT(0), ECT(1) and CE itself (INET_ECN_set_ce, ns-3 Mark succeed); drop
            // Not-ECT, and everything when ECN is off (ns-3 UseEcn false).
            if p.ecn && ecn != Ecn::NotEct { d.mark = true } else { d.codel_drop = true }
            self.set_count(p, self.count.saturating_add(1));
            self.drop_next = self.control(p, self.drop_next);
            schedule_after = now > self.drop_next;
        } else {
            let mut due = next_due;
            while due {
                self.set_count(p, self.count - 1);
                self.drop_next = self.control(p, self.drop_next);
                schedule_due = now >= self.drop_next;
                schedule_after = now > self.drop_next;
                due = self.count > 0 && schedule_due;
            }
        }
        // ns-3: a CE mark above CeThreshold when CoDel did not mark (not in L4S mode).
        if !d.mark && p.ecn && ecn != Ecn::NotEct && p.ce_threshold.is_some_and(|c| sojourn > c) {
            d.mark = true;
        }
        // ns-3's "Blue enhancement": a very long sojourn raises p_drop as an overflow would.
        if p.blue_threshold.is_some_and(|b| sojourn > b) {
            self.blue_up(p, now);
        }
        // Simple BLUE; no ECN on purpose.
        if self.p_drop > 0.0 {
            d.blue_drop = uniform() < self.p_drop;
        }
        // drop_next doubles as an activity timeout.
        if self.count == 0 {
            self.drop_next = now + p.interval;
        } else if schedule_after && !d.drop() {
            self.drop_next = now;
        }
        d
    }

    /// At rest: nothing left to decay (`!p_drop && !count && now >= drop_next`).
    pub fn at_rest(&self, now: Time) -> bool {
        self.p_drop == 0.0 && self.count == 0 && now >= self.drop_next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: u64) -> Time {
        Time(t * 1_000_000)
    }

    fn ns3_params() -> CobaltParams {
        CobaltParams {
            ecn: false,
            blue_threshold: Some(Dur::from_millis(400)),
            blue_timer_u32: true,
            arithmetic: CobaltArithmetic::FixedPoint,
            ..CobaltParams::new(Dur::from_millis(5), Dur::from_millis(100))
        }
    }

    #[test]
    fn the_inverse_square_root_cache_is_linuxs() {
        // Four Newton steps from the previous entry do not fully converge: for count 2, by hand,
        // r ← r(3 − 2r²)/2 from 1 gives 0.5, 0.625, 0.693359, 0.706651 (exact 0.707107), and the
        // 0.32 fixed point gives 0xb4ead8a0 = 0.7066513. Every entry is within 0.1 % of 1/√c.
        assert_eq!(INV_SQRT_CACHE[2], 0xb4ea_d8a0);
        for (c, &r) in INV_SQRT_CACHE.iter().enumerate().skip(1) {
            let exact = 4_294_967_296.0 / (c as f64).sqrt();
            assert!((f64::from(r) - exact).abs() / exact < 1e-3, "count {c}: {r:#x} vs {exact}");
        }
        assert_eq!(INV_SQRT_CACHE[0], u32::MAX);
    }

    #[test]
    fn fixed_point_newton_steps_track_one_over_root_count_beyond_the_cache() {
        let p = ns3_params();
        let mut c = Cobalt::ns3_fresh();
        for count in 1..=64 {
            c.set_count(&p, count);
            let exact = 1.0 / f64::from(count).sqrt();
            // One step per count from the previous value: 0.16 % off at count 16, less beyond.
            assert!((c.inv_sqrt_value(&p) - exact).abs() / exact < 2e-3, "count {count}: {}", c.inv_sqrt_value(&p));
        }
    }

    #[test]
    fn fixed_point_control_law_of_a_fresh_ns3_queue_is_one_ns_short_of_the_interval() {
        // (1e8 · (2^32 − 1)) >> 32 = 99 999 999 ns.
        let p = ns3_params();
        assert_eq!(Cobalt::ns3_fresh().control(&p, ms(0)), Time(99_999_999));
        // Linux's zeroed state: the first signal is due at once.
        assert_eq!(Cobalt::default().control(&p, ms(7)), ms(7));
    }

    #[test]
    fn ns3_blue_timer_wraps_at_2_pow_32_ns_so_the_hold_off_stops_holding() {
        let p = ns3_params();
        let mut c = Cobalt::ns3_fresh();
        // Before 4.29 s the hold-off holds: two overflows 1 ms apart raise p_drop once.
        assert!(c.on_queue_full(&p, ms(1000)));
        c.on_queue_full(&p, ms(1001));
        assert_eq!(c.p_drop, P_INC);
        // After it, the stored time is the update time modulo 2^32: every overflow raises it.
        let mut c = Cobalt::ns3_fresh();
        for t in 5000..5004 {
            c.on_queue_full(&p, ms(t));
        }
        assert_eq!(c.p_drop, 4.0 * P_INC);
        // Linux's 64-bit timer holds off at any time.
        let linux = CobaltParams { blue_timer_u32: false, ..p };
        let mut c = Cobalt::default();
        for t in 5000..5004 {
            c.on_queue_full(&linux, ms(t));
        }
        assert_eq!(c.p_drop, P_INC);
    }

    #[test]
    fn a_sojourn_above_the_blue_threshold_raises_p_drop_in_ns3_only() {
        let p = ns3_params();
        let mut c = Cobalt::ns3_fresh();
        let d = c.should_drop(&p, ms(1000), Dur::from_millis(401), Ecn::NotEct, || 0.5);
        assert_eq!((c.p_drop, d.blue_drop), (P_INC, false)); // drawn 0.5 ≥ 1/256
        let linux = CobaltParams { blue_threshold: None, ..p };
        let mut c = Cobalt::default();
        c.should_drop(&linux, ms(1000), Dur::from_millis(401), Ecn::NotEct, || panic!("no draw while p_drop is 0"));
        assert_eq!(c.p_drop, 0.0);
    }

    #[test]
    fn ce_threshold_marks_ect_packets_only_with_ecn() {
        let p = CobaltParams { ecn: true, ce_threshold: Some(Dur::from_millis(1)), ..ns3_params() };
        let mut c = Cobalt::ns3_fresh();
        assert!(c.should_drop(&p, ms(10), Dur::from_millis(2), Ecn::Ect, || 1.0).mark);
        assert!(!c.should_drop(&p, ms(11), Dur::from_millis(2), Ecn::NotEct, || 1.0).mark);
        let off = CobaltParams { ecn: false, ..p };
        assert!(!c.should_drop(&off, ms(12), Dur::from_millis(2), Ecn::Ect, || 1.0).mark);
    }

    #[test]
    fn without_ecn_codels_signal_drops_an_ect_packet() {
        // ns-3 CobaltQueueDisc (UseEcn false): a standing 20 ms queue; the first signal falls an
        // interval (99.999999 ms) after the first packet above target, and it is a drop.
        let p = ns3_params();
        let mut c = Cobalt::ns3_fresh();
        let mut signals = Vec::new();
        for t in 0..400u64 {
            let d = c.should_drop(&p, ms(t), Dur::from_millis(20), Ecn::Ect, || 1.0);
            if d != CobaltDecision::default() {
                signals.push((t, d));
            }
        }
        assert_eq!(signals[0], (100, CobaltDecision { codel_drop: true, ..CobaltDecision::default() }));
        // Then interval/√count: 1/√2 → 70.7 ms, 1/√3 → 57.7 ms (rounded up to the next 1 ms step).
        assert_eq!(signals.iter().take(3).map(|s| s.0).collect::<Vec<_>>(), [100, 171, 229]);
    }
}
