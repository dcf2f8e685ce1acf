//! CUBIC as ns-3 3.44's `TcpCubic` computes it (`congestion_control = "cubic-ns3"`, the default of
//! `profile = "ns3"`): a port of Linux's `bictcp_update`, which differs from RFC 9438 (our
//! `"cubic"`) in ways that matter for a cross-check:
//!
//! * slow start counts segments, not ACKs (ns-3: "approximates Linux's QUICKACK" by appropriate
//!   byte counting), so with delayed ACKs the window doubles per RTT instead of growing by half;
//! * congestion avoidance counts acknowledged segments against an integer `cnt` (one segment of
//!   growth per `cnt` segments acknowledged, `cnt ≥ 2`), with `t` offset by the minimum RTT, not
//!   SRTT, and the target truncated to whole segments;
//! * the Reno-friendly window grows by one segment per `(cwnd · 15) >> 3` segments acknowledged
//!   (α ≈ 0.53 throughout: no switch to α = 1 at cwnd_prior);
//! * the window before a cut is cwnd (in whole segments), and a retransmission timeout forgets
//!   W_max altogether (`CubicReset` on `CA_LOSS`), after which `cnt` is clamped to 20;
//! * RTT samples within 10 ms of an epoch's start are ignored for the minimum (`CubicDelta`).
//!
//! HyStart (on by default in ns-3) is not modelled: on the ns-3 cross-check's scenario
//! `--ns3::TcpCubic::HyStart=false` changes nothing (docs/validation.md). Windows are in segments.

use crate::engine::{Dur, Time};

/// `TcpCubic::C`.
const C: f64 = 0.4;
/// `TcpCubic::Beta`.
const BETA: f64 = 0.7;
/// `TcpCubic::CntClamp`: the largest `cnt` while no W_max is known.
const CNT_CLAMP: u32 = 20;
/// `TcpCubic::CubicDelta`: RTT samples this soon after an epoch starts are not used.
const CUBIC_DELTA: Dur = Dur::from_millis(10);
/// `8 · (1024 + β·1024) / 3 / (1024 − β·1024)` truncated, as ns-3 computes it: 15 for β = 0.7.
const BETA_SCALE: u32 = (8.0 * (1024.0 + BETA * 1024.0) / 3.0 / (1024.0 - BETA * 1024.0)) as u32;

/// ns-3 `TcpCubic`'s per-flow state, field for field.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct CubicNs3 {
    /// `m_cWndCnt`: segments acknowledged since the last one-segment increase.
    pub(super) cwnd_cnt: u32,
    /// `m_lastMaxCwnd` (segments): W_max; 0 before any loss and after a timeout.
    last_max_cwnd: u32,
    /// `m_bicOriginPoint` (segments).
    origin: u32,
    /// `m_bicK`, seconds.
    k: f64,
    /// `m_delayMin` (None: 0, no sample yet).
    delay_min: Option<Dur>,
    /// `m_epochStart` (`Time::NEVER`: `Time::Min()`, no epoch).
    epoch_start: Time,
    /// `m_ackCnt`: segments acknowledged towards the Reno-friendly window.
    ack_cnt: u32,
    /// `m_tcpCwnd` (segments): the Reno-friendly window.
    tcp_cwnd: u32,
}

impl Default for CubicNs3 {
    fn default() -> Self {
        CubicNs3 { cwnd_cnt: 0, last_max_cwnd: 0, origin: 0, k: 0.0, delay_min: None, epoch_start: Time::NEVER, ack_cnt: 0, tcp_cwnd: 0 }
    }
}

/// `TcpSocketState::GetCwndInSegments`: whole segments.
fn segments(cwnd: f64) -> u32 {
    cwnd.max(0.0) as u32
}

impl CubicNs3 {
    /// `TcpCubic::IncreaseWindow`: an ACK of `acked` new segments outside recovery.
    pub(super) fn grow(&mut self, cwnd: &mut f64, ssthresh: f64, acked: u32, now: Time) {
        let mut acked = acked;
        if *cwnd < ssthresh {
            *cwnd += f64::from(acked); // every acknowledged segment, uncapped by ssthresh
            acked = 0;
        }
        if *cwnd >= ssthresh && acked > 0 {
            self.cwnd_cnt += acked;
            let cnt = self.update(segments(*cwnd), acked, now);
            if self.cwnd_cnt >= cnt {
                *cwnd += 1.0;
                self.cwnd_cnt -= cnt;
            }
        }
    }

    /// `TcpCubic::Update`: how many acknowledged segments one segment of growth takes now.
    fn update(&mut self, seg_cwnd: u32, acked: u32, now: Time) -> u32 {
        self.ack_cnt += acked;
        if self.epoch_start == Time::NEVER {
            self.epoch_start = now;
            self.ack_cnt = acked;
            self.tcp_cwnd = seg_cwnd;
            if self.last_max_cwnd <= seg_cwnd {
                self.k = 0.0;
                self.origin = seg_cwnd;
            } else {
                self.k = (f64::from(self.last_max_cwnd - seg_cwnd) / C).cbrt();
                self.origin = self.last_max_cwnd;
            }
        }
        let t = (now.saturating_since(self.epoch_start) + self.delay_min.unwrap_or(Dur::ZERO)).as_secs_f64();
        let delta = (C * (t - self.k).abs().powi(3)) as u32;
        let target = if t < self.k { self.origin.saturating_sub(delta) } else { self.origin.saturating_add(delta) };
        let mut cnt = if target > seg_cwnd { seg_cwnd / (target - seg_cwnd) } else { 100 * seg_cwnd };
        if self.last_max_cwnd == 0 && cnt > CNT_CLAMP {
            cnt = CNT_CLAMP;
        }
        // TcpFriendliness: the window Reno would have reached since the epoch began.
        let per_segment = ((seg_cwnd * BETA_SCALE) >> 3).max(1);
        while self.ack_cnt > per_segment {
            self.ack_cnt -= per_segment;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > seg_cwnd {
            cnt = cnt.min(seg_cwnd / (self.tcp_cwnd - seg_cwnd));
        }
        cnt.max(2) // at most one segment per two acknowledged: 1.5× per RTT
    }

    /// `TcpCubic::GetSsThresh` at a loss with `cwnd` segments: W_max with fast convergence, the
    /// epoch ends, ssthresh = max(⌊cwnd·β⌋, 2).
    pub(super) fn reduce(&mut self, cwnd: f64) -> f64 {
        let seg_cwnd = segments(cwnd);
        self.last_max_cwnd = if seg_cwnd < self.last_max_cwnd {
            (f64::from(seg_cwnd) * (1.0 + BETA) / 2.0) as u32
        } else {
            seg_cwnd
        };
        self.epoch_start = Time::NEVER;
        f64::from(((f64::from(seg_cwnd) * BETA) as u32).max(2))
    }

    /// `TcpCubic::CubicReset`, on entering `CA_LOSS` (a retransmission timeout, after `reduce`).
    pub(super) fn on_timeout(&mut self) {
        self.last_max_cwnd = 0;
        self.origin = 0;
        self.k = 0.0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.delay_min = None;
    }

    /// `TcpCubic::PktsAcked`: a new RTT sample.
    pub(super) fn observe_rtt(&mut self, rtt: Dur, now: Time) {
        if self.epoch_start != Time::NEVER && now.saturating_since(self.epoch_start) < CUBIC_DELTA {
            return;
        }
        if self.delay_min.is_none_or(|d| rtt < d) {
            self.delay_min = Some(rtt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn beta_scale_is_ns3s_fifteen() {
        assert_eq!(BETA_SCALE, 15);
    }

    #[test]
    fn slow_start_counts_segments_not_acks() {
        let mut c = CubicNs3::default();
        let mut cwnd = 10.0;
        c.grow(&mut cwnd, 1000.0, 2, Time(0)); // one delayed ACK of two segments
        assert_eq!(cwnd, 12.0);
    }

    #[test]
    fn a_loss_cuts_to_beta_in_whole_segments_and_fast_convergence_lowers_w_max() {
        let mut c = CubicNs3::default();
        assert_eq!(c.reduce(100.9), 70.0, "⌊⌊100.9⌋ · 0.7⌋");
        assert_eq!(c.last_max_cwnd, 100);
        assert_eq!(c.reduce(80.0), 56.0);
        assert_eq!(c.last_max_cwnd, 68, "⌊80 · 1.7 / 2⌋");
        assert_eq!(c.reduce(1.0), 2.0, "never below 2");
    }

    #[test]
    fn concave_regrowth_reaches_w_max_after_k_and_not_before() {
        // W_max 100, cwnd 70: K = cbrt(30 / 0.4) = 4.217 s. One ACK of one segment per ms, min RTT 10 ms.
        let mut c = CubicNs3::default();
        let mut cwnd = c.reduce(100.0);
        c.observe_rtt(Dur::from_millis(10), Time(0));
        let ssthresh = cwnd;
        let mut ms = 0;
        while ms < 4_000 {
            c.grow(&mut cwnd, ssthresh, 1, Time(ms * MS));
            ms += 1;
        }
        assert!(cwnd > 95.0 && cwnd <= 100.0, "concave approach below W_max: {cwnd}");
        while ms < 6_000 {
            c.grow(&mut cwnd, ssthresh, 1, Time(ms * MS));
            ms += 1;
        }
        assert!(cwnd > 100.0, "convex probing beyond W_max: {cwnd}");
    }

    #[test]
    fn reno_friendly_window_grows_one_segment_per_fifteen_eighths_of_a_window() {
        // Far below W_max's plateau the cubic target is flat, so the Reno-friendly estimate leads.
        let mut c = CubicNs3 { last_max_cwnd: 40, ..CubicNs3::default() };
        let seg = 40;
        c.update(seg, 1, Time(0)); // epoch starts at W_max: K = 0, tcp_cwnd = 40
        for i in 0..(75 * 4) {
            c.update(seg, 1, Time((1 + i) * MS / 1000)); // 1 µs apart: the cubic term stays 0
        }
        assert_eq!(c.tcp_cwnd, 44, "(40·15)>>3 = 75 segments per increment: 301 acknowledged → 4");
        assert_eq!(c.update(seg, 1, Time(400 * 1000)), 10, "cnt = 40 / (44 − 40)");
    }

    #[test]
    fn a_timeout_forgets_w_max_and_clamps_cnt() {
        let mut c = CubicNs3::default();
        c.observe_rtt(Dur::from_millis(50), Time(0));
        c.reduce(100.0);
        c.on_timeout();
        assert_eq!((c.last_max_cwnd, c.delay_min), (0, None));
        // Without W_max the target is the current window (K = 0): cnt would be 100 · cwnd.
        assert_eq!(c.update(30, 1, Time(0)), CNT_CLAMP);
    }

    #[test]
    fn rtt_samples_just_after_an_epoch_starts_are_ignored() {
        let mut c = CubicNs3::default();
        c.observe_rtt(Dur::from_millis(50), Time(0));
        c.update(10, 1, Time(100 * MS)); // epoch starts
        c.observe_rtt(Dur::from_millis(20), Time(105 * MS));
        assert_eq!(c.delay_min, Some(Dur::from_millis(50)), "5 ms after the epoch: ignored");
        c.observe_rtt(Dur::from_millis(20), Time(111 * MS));
        assert_eq!(c.delay_min, Some(Dur::from_millis(20)));
    }
}
