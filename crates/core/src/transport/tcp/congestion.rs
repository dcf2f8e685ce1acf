//! Congestion-window growth and reduction, separate from loss recovery: Reno (RFC 5681), CUBIC
//! (RFC 9438), DCTCP (RFC 8257) and LEDBAT (RFC 6817, ledbat.rs). The sender decides *when* (an ACK outside recovery, a loss, an
//! ECN echo); this module says *by how much*. Windows are in segments.
//!
//! Choices (docs/tcp.md):
//! * Reno grows per ACK, without appropriate byte counting (ns-2, ns-3 `TcpNewReno`): +1 per ACK
//!   in slow start, +1/cwnd in congestion avoidance.
//! * CUBIC: C = 0.4, β = 0.7, fast convergence on, the Reno-friendly estimate W_est of RFC 9438
//!   §4.3 with α = 3(1−β)/(1+β) until W_est reaches cwnd_prior (the window before the last
//!   reduction; 0 before any) and α = 1 from there (the SHOULD of §4.3), target W_cubic(t + SRTT)
//!   clamped to [cwnd, 1.5·cwnd] (§4.4).
//!   Slow start is standard (no HyStart); a timeout ends the epoch and sets W_max like any
//!   congestion event (§4.8).
//! * `cubic-ns3`: CUBIC as ns-3 3.44's `TcpCubic` computes it (Linux's `bictcp_update`), for
//!   matching ns-3 (cubic_ns3.rs says how it differs).
//! * `cubic-linux`: CUBIC as the Linux kernel computes it (tcp_cubic.c), the `linux` profile's
//!   (cubic_linux.rs says how it differs from RFC 9438 and from `cubic-ns3`).
//! * DCTCP: g = 1/16, α starts at 1 (RFC 8257 §3.3), updated once per window of data; an ECN
//!   echo cuts cwnd by α/2 at most once per window; losses are handled as Reno's (§3.5).
//! * LEDBAT: delay-based growth towards a target queuing delay, ns-3's `TcpLedbat` or RFC 6817's
//!   pseudocode (`ledbat_variant`); the sender calls [`Ledbat::grow`] itself, with the flight size
//!   LEDBAT caps cwnd at (ledbat.rs).
//! * BBR v1 (Linux's tcp_bbr.c, bbr.rs): sets cwnd and a pacing rate itself from its model on
//!   every ACK (the sender's `bbr_after_ack`); `grow` is a no-op and a loss's "ssthresh" is the
//!   current cwnd, remembered for the restore after recovery.

use super::bbr::Bbr;
use super::cubic_linux::{CubicLinux, SlowStartView};
use super::cubic_ns3::CubicNs3;
use super::ledbat::{Ledbat, LedbatConfig};
use crate::engine::{Dur, Time};

/// Which congestion-control algorithm grows and cuts the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CongestionControl {
    /// RFC 5681 AIMD: halve on congestion, +1 segment per RTT.
    Reno,
    /// RFC 9438: cubic growth around the last maximum, β = 0.7.
    Cubic,
    /// ns-3 3.44's `TcpCubic` (a port of Linux's): CUBIC with segment counting, see cubic_ns3.rs.
    #[serde(rename = "cubic-ns3")]
    CubicNs3,
    /// Linux's `tcp_cubic.c` in its integer arithmetic: see cubic_linux.rs.
    #[serde(rename = "cubic-linux")]
    CubicLinux,
    /// RFC 8257: Reno growth, ECN cut proportional to the fraction of marked bytes.
    Dctcp,
    /// RFC 6817 LEDBAT (ns-3's `TcpLedbat` by default): grows while the queuing delay it measures
    /// is below a target, shrinks above it; halves on loss.
    Ledbat,
    /// BBR v1 as Linux's `tcp_bbr.c`: model-based, paced (bbr.rs).
    Bbr,
}

/// RFC 9438 §5.1: C = 0.4 segments/s³.
const CUBIC_C: f64 = 0.4;
/// RFC 9438 §4.6: β_cubic = 0.7.
const CUBIC_BETA: f64 = 0.7;
/// RFC 8257 §3.3: estimation gain g = 1/16.
const DCTCP_G: f64 = 1.0 / 16.0;

/// Per-flow state of the algorithm. Boxed so that Reno flows, the common case when there are
/// 100,000 of them, carry no more than a tag and a pointer.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum CcState {
    Reno,
    Cubic(Box<Cubic>),
    CubicNs3(Box<CubicNs3>),
    CubicLinux(Box<CubicLinux>),
    Dctcp(Box<Dctcp>),
    Ledbat(Box<Ledbat>),
    Bbr(Box<Bbr>),
}

/// RFC 9438 §4 state.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Cubic {
    /// W_max: the window just before the last reduction (0 before any).
    w_max: f64,
    /// Start of the current congestion-avoidance epoch (`Time::NEVER`: none yet).
    epoch_start: Time,
    /// K, seconds: when W_cubic reaches W_max again.
    k: f64,
    /// W_est, the Reno-friendly window estimate (§4.3).
    w_est: f64,
    /// cwnd_prior: the window when ssthresh was last set (§4.3's switch of α to 1).
    cwnd_prior: f64,
}

/// RFC 8257 §3.3 state.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Dctcp {
    /// Estimated fraction of marked bytes.
    alpha: f64,
    /// Segments acknowledged in the current observation window.
    acked: u32,
    /// Of those, acknowledged by ACKs with ECE.
    marked: u32,
    /// The observation window ends when `snd_una` passes this.
    window_end: u32,
}

impl CcState {
    #[cfg(test)]
    pub(super) fn new(cc: CongestionControl) -> CcState {
        CcState::with_settings(cc, LedbatConfig::default(), true, 10, 1448)
    }

    /// As [`CcState::new`], with LEDBAT's settings (used only by `Ledbat`) and whether HyStart
    /// runs (only `cubic-linux` has it); BBR's initial pacing rate needs the initial window and mss.
    pub(super) fn with_settings(cc: CongestionControl, ledbat: LedbatConfig, hystart: bool, initial_window: u32, mss: u32) -> CcState {
        match cc {
            CongestionControl::Reno => CcState::Reno,
            CongestionControl::Cubic => CcState::Cubic(Box::new(Cubic { w_max: 0.0, epoch_start: Time::NEVER, k: 0.0, w_est: 0.0, cwnd_prior: 0.0 })),
            CongestionControl::CubicNs3 => CcState::CubicNs3(Box::default()),
            CongestionControl::CubicLinux => CcState::CubicLinux(Box::new(CubicLinux::new(hystart))),
            CongestionControl::Dctcp => CcState::Dctcp(Box::new(Dctcp { alpha: 1.0, acked: 0, marked: 0, window_end: 0 })),
            CongestionControl::Ledbat => CcState::Ledbat(Box::new(Ledbat::new(ledbat))),
            CongestionControl::Bbr => CcState::Bbr(Box::new(Bbr::new(Time::ZERO, initial_window, mss, 0))),
        }
    }

    /// LEDBAT's state (None for the others).
    pub(super) fn ledbat_mut(&mut self) -> Option<&mut Ledbat> {
        if let CcState::Ledbat(l) = self { Some(l) } else { None }
    }

    /// BBR's state (None for the others).
    pub(super) fn bbr_mut(&mut self) -> Option<&mut Bbr> {
        if let CcState::Bbr(b) = self { Some(b) } else { None }
    }

    /// BBR's state, read-only.
    pub(super) fn bbr(&self) -> Option<&Bbr> {
        if let CcState::Bbr(b) = self { Some(b) } else { None }
    }

    /// Window growth on an ACK of `acked` new segments outside loss recovery. With
    /// `per_segment` (`count_acked_segments`) growth counts acknowledged segments as Linux does
    /// (`tcp_slow_start`: +1 per segment up to ssthresh, the rest to congestion avoidance;
    /// `tcp_cong_avoid_ai` and CUBIC's `cnt`: +acked/cwnd); otherwise it counts ACKs (RFC 5681).
    pub(super) fn grow(&mut self, cwnd: &mut f64, ssthresh: f64, acked: u32, now: Time, srtt: Option<Dur>, per_segment: bool) {
        match self {
            CcState::CubicNs3(c) => return c.grow(cwnd, ssthresh, acked, now), // its own slow start too
            CcState::CubicLinux(c) => return c.grow(cwnd, ssthresh, acked, now),
            CcState::Bbr(_) => return, // BBR sets cwnd from its model after each ACK
            _ => {}
        }
        let mut acked = acked;
        if *cwnd < ssthresh {
            if !per_segment {
                *cwnd += 1.0; // RFC 5681 §3.1 (RFC 9438 §4.10 keeps standard slow start)
                return;
            }
            let used = f64::from(acked).min(ssthresh - *cwnd);
            *cwnd += used;
            acked = (f64::from(acked) - used).floor() as u32;
            if acked == 0 {
                return;
            }
        }
        let counted = if per_segment { acked } else { 1 };
        match self {
            // LEDBAT grows through `Ledbat::grow` (the sender knows its flight); Reno's if not.
            CcState::Reno | CcState::Dctcp(_) | CcState::Ledbat(_) => *cwnd += f64::from(counted) / *cwnd,
            CcState::Cubic(c) => c.grow(cwnd, acked, counted, now, srtt),
            CcState::CubicNs3(_) | CcState::CubicLinux(_) | CcState::Bbr(_) => unreachable!("handled above"),
        }
    }

    /// The new ssthresh after a loss (fast retransmit or timeout) with `window` segments really
    /// in flight; CUBIC also remembers W_max and ends its epoch.
    pub(super) fn loss_ssthresh(&mut self, window: f64) -> f64 {
        let next = match self {
            CcState::Reno | CcState::Dctcp(_) => window / 2.0, // RFC 5681 (4)
            CcState::Cubic(c) => c.reduce(window),
            CcState::CubicNs3(c) => c.reduce(window),
            CcState::CubicLinux(c) => c.reduce(window),
            CcState::Ledbat(l) => return l.loss_ssthresh(window),
            CcState::Bbr(b) => return b.on_loss(), // `bbr_ssthresh`: no cut, cwnd remembered
        };
        next.max(2.0)
    }

    /// ns-3 CUBIC's count of acknowledged segments towards the next +1 (tests only).
    #[cfg(test)]
    pub(super) fn ns3_segment_count(&self) -> Option<u32> {
        if let CcState::CubicNs3(c) = self { Some(c.cwnd_cnt) } else { None }
    }

    /// A retransmission timeout at `now` with `snd_nxt` sent, after `loss_ssthresh`: ns-3's and
    /// Linux's CUBIC forget W_max (Linux's also starts a HyStart round).
    pub(super) fn on_timeout(&mut self, now: Time, snd_nxt: u32) {
        match self {
            CcState::CubicNs3(c) => c.on_timeout(),
            CcState::CubicLinux(c) => c.on_timeout(now, snd_nxt),
            CcState::Bbr(b) => b.on_timeout(),
            _ => {}
        }
    }

    /// A new RTT sample (ns-3's and Linux's CUBIC keep their own minimum). Returns a new
    /// ssthresh when Linux's HyStart ends slow start on it.
    pub(super) fn observe_rtt(&mut self, rtt: Dur, now: Time, view: SlowStartView) -> Option<f64> {
        match self {
            CcState::CubicNs3(c) => {
                c.observe_rtt(rtt, now);
                None
            }
            CcState::CubicLinux(c) => c.observe_rtt(rtt, now, view),
            _ => None,
        }
    }

    /// The new window on an ECN congestion signal (at most once per window, the sender's guard).
    pub(super) fn ecn_window(&mut self, window: f64) -> f64 {
        match self {
            CcState::Dctcp(d) => (window * (1.0 - d.alpha / 2.0)).max(2.0), // RFC 8257 §3.3 step 4
            _ => self.loss_ssthresh(window),                                 // RFC 3168 §6.1.2: as a loss
        }
    }

    /// DCTCP's per-ACK marking estimate (RFC 8257 §3.3 steps 1–3); a no-op for the others.
    pub(super) fn observe_ack(&mut self, acked: u32, ece: bool, snd_una: u32, snd_max: u32) {
        if let CcState::Dctcp(d) = self {
            d.acked += acked;
            if ece {
                d.marked += acked;
            }
            if snd_una > d.window_end {
                let fraction = if d.acked > 0 { f64::from(d.marked) / f64::from(d.acked) } else { 0.0 };
                d.alpha = (1.0 - DCTCP_G) * d.alpha + DCTCP_G * fraction;
                d.acked = 0;
                d.marked = 0;
                d.window_end = snd_max;
            }
        }
    }

    /// DCTCP's α (None for the others).
    #[cfg(test)]
    pub(super) fn dctcp_alpha(&self) -> Option<f64> {
        match self {
            CcState::Dctcp(d) => Some(d.alpha),
            _ => None,
        }
    }
}

impl Cubic {
    /// RFC 9438 §4.6–4.7: multiplicative decrease with fast convergence; ends the epoch.
    fn reduce(&mut self, window: f64) -> f64 {
        self.w_max = if window < self.w_max { window * (1.0 + CUBIC_BETA) / 2.0 } else { window };
        self.cwnd_prior = window;
        self.epoch_start = Time::NEVER;
        window * CUBIC_BETA
    }

    /// RFC 9438 §4.2–4.5: one ACK of `acked` segments in congestion avoidance; the step towards
    /// the target is taken `counted` times (1 per ACK as the RFC words it, `acked` as Linux counts).
    fn grow(&mut self, cwnd: &mut f64, acked: u32, counted: u32, now: Time, srtt: Option<Dur>) {
        if self.epoch_start == Time::NEVER {
            // A new epoch (§4.2): K from where the window starts; no W_max yet means grow from here.
            self.epoch_start = now;
            self.w_max = self.w_max.max(*cwnd);
            self.k = ((self.w_max - *cwnd) / CUBIC_C).cbrt();
            self.w_est = *cwnd;
        }
        let t = now.saturating_since(self.epoch_start).as_secs_f64();
        let rtt = srtt.map_or(0.0, |d| d.as_secs_f64());
        let w_cubic = |t: f64| CUBIC_C * (t - self.k).powi(3) + self.w_max;
        // §4.3: Reno-friendly at β = 0.7 until W_est is back at the window before the cut.
        let alpha = if self.w_est >= self.cwnd_prior { 1.0 } else { 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA) };
        self.w_est += alpha * f64::from(acked) / *cwnd;
        if w_cubic(t) < self.w_est {
            *cwnd = self.w_est; // Reno-friendly region
        } else {
            let target = w_cubic(t + rtt).clamp(*cwnd, 1.5 * *cwnd); // §4.4
            *cwnd += f64::from(counted) * (target - *cwnd) / *cwnd;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_acked_segments_grows_by_what_a_delayed_ack_covers() {
        // One delayed ACK of two segments: RFC 5681 counts the ACK, Linux the segments.
        let grow = |cwnd: f64, ssthresh: f64, acked: u32, per_segment: bool| {
            let (mut cc, mut w) = (CcState::new(CongestionControl::Reno), cwnd);
            cc.grow(&mut w, ssthresh, acked, Time(0), None, per_segment);
            w
        };
        assert_eq!(grow(10.0, 100.0, 2, false), 11.0, "slow start, one per ACK");
        assert_eq!(grow(10.0, 100.0, 2, true), 12.0, "slow start, one per segment");
        assert_eq!(grow(10.0, 5.0, 2, false), 10.1, "avoidance, 1/cwnd per ACK");
        assert_eq!(grow(10.0, 5.0, 2, true), 10.2, "avoidance, acked/cwnd");
        // Slow start stops at ssthresh and the rest of the ACK is avoidance (tcp_slow_start).
        assert_eq!(grow(10.0, 11.0, 3, true), 11.0 + 2.0 / 11.0);
    }

    #[test]
    fn cubic_cuts_to_beta_and_regains_w_max_after_k_seconds() {
        let mut cc = CcState::new(CongestionControl::Cubic);
        let ssthresh = cc.loss_ssthresh(100.0);
        assert!((ssthresh - 70.0).abs() < 1e-9, "β = 0.7");
        let mut cwnd = ssthresh;
        // K = cbrt(100 · 0.3 / 0.4) = 4.217 s. Feed one ACK per ms with a 10 ms SRTT.
        let srtt = Some(Dur::from_millis(10));
        let mut t = 0;
        while t < 4_000 {
            cc.grow(&mut cwnd, ssthresh, 1, Time(t * 1_000_000), srtt, false);
            t += 1;
        }
        assert!(cwnd < 100.0 && cwnd > 95.0, "concave approach below W_max: {cwnd}");
        while t < 6_000 {
            cc.grow(&mut cwnd, ssthresh, 1, Time(t * 1_000_000), srtt, false);
            t += 1;
        }
        assert!(cwnd > 100.0, "convex probing beyond W_max: {cwnd}");
    }

    #[test]
    fn cubic_w_est_grows_at_alpha_cubic_until_cwnd_prior_then_at_one() {
        let mut c = Cubic { w_max: 0.0, epoch_start: Time::NEVER, k: 0.0, w_est: 0.0, cwnd_prior: 0.0 };
        let mut cwnd = c.reduce(100.0); // 70
        // One ACK at `ms`: (W_est's increment, the cwnd it was divided by).
        let step = |c: &mut Cubic, cwnd: &mut f64, ms: u64| {
            let (before, cw) = (c.w_est, *cwnd);
            c.grow(cwnd, 1, 1, Time(ms * 1_000_000), Some(Dur::from_millis(10)));
            (c.w_est - before, cw)
        };
        step(&mut c, &mut cwnd, 0); // epoch starts: W_est = 70
        let (first, cw) = step(&mut c, &mut cwnd, 1);
        assert!((first - 3.0 * 0.3 / 1.7 / cw).abs() < 1e-12, "α_cubic below cwnd_prior: {first}");
        let mut ms = 1;
        while c.w_est < 100.0 {
            ms += 1;
            step(&mut c, &mut cwnd, ms);
        }
        let (later, cw) = step(&mut c, &mut cwnd, ms + 1);
        assert!((later - 1.0 / cw).abs() < 1e-12, "α = 1 once W_est ≥ cwnd_prior: {later} vs {}", 1.0 / cw);
    }

    #[test]
    fn cubic_fast_convergence_lowers_w_max_when_the_window_shrank() {
        let mut cc = CcState::new(CongestionControl::Cubic);
        cc.loss_ssthresh(100.0);
        cc.loss_ssthresh(80.0); // below the previous W_max: release bandwidth (§4.7)
        let CcState::Cubic(c) = &cc else { unreachable!() };
        assert!((c.w_max - 80.0 * 1.7 / 2.0).abs() < 1e-9);
    }

    #[test]
    fn dctcp_alpha_tracks_the_marked_fraction_and_sets_the_cut() {
        let mut cc = CcState::new(CongestionControl::Dctcp);
        assert_eq!(cc.ecn_window(100.0), 50.0, "α starts at 1: the first cut halves");
        // Windows of 10 segments, every other one marked: α → 0.5.
        let mut una = 0;
        for _ in 0..400 {
            for i in 0..10 {
                una += 1;
                cc.observe_ack(1, i % 2 == 0, una, una + 9);
            }
        }
        let alpha = cc.dctcp_alpha().unwrap();
        assert!((alpha - 0.5).abs() < 0.02, "{alpha}");
        assert!((cc.ecn_window(100.0) - 75.0).abs() < 1.0);
    }

    #[test]
    fn reno_halves_and_never_below_two() {
        let mut cc = CcState::new(CongestionControl::Reno);
        assert_eq!(cc.loss_ssthresh(21.0), 10.5);
        assert_eq!(cc.loss_ssthresh(3.0), 2.0);
    }
}
