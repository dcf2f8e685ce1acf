//! LEDBAT, Low Extra Delay Background Transport (RFC 6817), as a TCP congestion control
//! (`congestion_control = "ledbat"`), in two variants (`ledbat_variant`):
//!
//! * `"ns3"` (the default): ns-3 3.44's `TcpLedbat` (src/internet/model/tcp-ledbat.cc, a
//!   `TcpNewReno` subclass), arithmetic included, so that runs can be matched with ns-3's.
//! * `"rfc6817"`: the sender pseudocode of RFC 6817 §2.4.2 as written.
//!
//! Both measure the one-way delay the same way, as ns-3 does: from TCP timestamps at a 1-ms clock,
//! OWD = TSval of the ACK (the receiver's clock when it sent the ACK) − TSecr (the sender's clock
//! when it sent the echoed segment), in whole milliseconds (`u32`, wrapping). The simulator could
//! take the exact delay, but the ms clock is what ns-3 uses and what RFC 7323 timestamps give a
//! real TCP; both clocks are the simulator's, so there is no offset or skew (RFC 6817 §3.1.1 only
//! needs the offset to be constant). With delayed ACKs the sample includes the receiver's wait
//! before ACKing (the echoed TSecr is the earliest unACKed segment's, RFC 7323 §4.3), in both ns-3
//! and here. Against a 100-ms target a 1-ms granularity is immaterial.
//!
//! Per ACK (new or duplicate; ns-3 `PktsAcked`, called on every ACK once an RTT sample exists):
//! the sample enters the noise filter (the last `noise_filter` samples) and the base history
//! (minima over `base_history` one-minute buckets). queuing_delay = min(noise filter) − min(base
//! history). In congestion avoidance, per ACK of `n` segments, in segments (RFC 6817 §2.4.2):
//!
//! ```text
//! off_target = (TARGET − queuing_delay) / TARGET
//! cwnd += GAIN · off_target · n / cwnd              e.g. cwnd 20, n = 2, queuing 50 ms of 100: +0.05
//! cwnd  = min(cwnd, cap)                            rfc6817: cap = FlightSize + ALLOWED_INCREASE
//! cwnd  = max(cwnd, MIN_CWND)
//! ```
//!
//! Where `"ns3"` differs from RFC 6817 (each reproduced, not fixed):
//! * **Cap.** ns-3 caps cwnd at `m_highTxMark − m_lastAckedSeq + segmentsAcked·MSS`, and
//!   `m_lastAckedSeq` is already the new ACK (`ProcessAck` sets it first): the cap is the data
//!   outstanding *before* the ACK, i.e. ALLOWED_INCREASE = 0. A window-limited flow has at most
//!   ⌊cwnd⌋ segments outstanding, so in congestion avoidance cwnd can fall but never rise above
//!   the whole segments it has in flight; ns-3's LEDBAT grows only in slow start.
//! * **Filter lengths.** `AddDelay` drops the oldest sample once the buffer reaches its length, so
//!   it keeps `len − 1` samples (at least 1): the defaults 4 and 10 give a minimum over the last 3
//!   samples and 9 buckets (RFC 6817: 4 and 10).
//! * **Buckets.** A new base-delay bucket starts when ⌊now in s⌋ − (the last rollover) > 60, the
//!   last rollover starting at 0 and not set by the first sample: buckets of 61 s, the first ending
//!   at 61 s (RFC 6817: on each change of the minute).
//! * **Integers.** cwnd and ssthresh are bytes (`u32`), delays whole ms; the increment is
//!   `(int32)(offset·segmentsAcked·MSS) / (target_ms·cwnd) · MSS` bytes, truncated when added; if
//!   cwnd ≤ ssthresh after congestion avoidance, ssthresh = cwnd − 1 byte.
//! * **No valid timestamps** (timestamps off, or TSval or TSecr equal to 0 as in the first
//!   millisecond): congestion avoidance falls back to NewReno's (+1/cwnd per ACK).
//! * **Slow start** (`ledbat_slow_start`, ns-3's `SSParam`, on by default): NewReno's +1 segment
//!   per ACK while cwnd ≤ ssthresh and slow start is allowed; it is allowed at first and again
//!   whenever cwnd ≤ 1 segment (after a timeout), and forbidden from the first congestion-avoidance
//!   step on. Delay plays no part in it: the first slow start ends at a loss.
//! * **Loss.** ns-3 inherits NewReno's `GetSsThresh`: ssthresh = max(2, BytesInFlight/2) (the pipe
//!   with `ssthresh_from_pipe`), once per recovery.
//!
//! `"rfc6817"` keeps the same measurement, slow start and loss detection, and differs in: the cap
//! FlightSize (before the ACK) + `ledbat_allowed_increase` (RFC: 1); the noise filter and base
//! history hold exactly `noise_filter` samples and `base_history` buckets; buckets change with the
//! minute (⌊now / 60 s⌋); arithmetic in real numbers with n = the segments the ACK newly delivers;
//! and a loss sets ssthresh = max(cwnd/2, MIN_CWND) from cwnd (RFC 6817 §2.4.2, "on data loss":
//! cwnd = min(cwnd, max(cwnd/2, MIN_CWND·MSS)), at most once per RTT — the sender's recovery
//! guard allows one reduction per window of data).

use std::collections::VecDeque;

use crate::engine::{Dur, Time};

/// Which LEDBAT to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LedbatVariant {
    /// ns-3 3.44's `TcpLedbat`, quirks included (module doc).
    Ns3,
    /// RFC 6817 §2.4.2 as written.
    Rfc6817,
}

impl LedbatVariant {
    /// The scenario spelling.
    pub fn name(self) -> &'static str {
        match self {
            LedbatVariant::Ns3 => "ns3",
            LedbatVariant::Rfc6817 => "rfc6817",
        }
    }
}

/// LEDBAT settings, validated (scenario keys `ledbat_*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LedbatConfig {
    /// `ledbat_variant`.
    pub variant: LedbatVariant,
    /// TARGET, the queuing delay aimed at (ns-3 `TargetDelay`, 100 ms; RFC 6817: at most 100 ms).
    /// ns-3 uses it in whole ms.
    pub target: Dur,
    /// GAIN (ns-3 `Gain`, 1).
    pub gain: f64,
    /// Base-delay history length, buckets (ns-3 `BaseHistoryLen`, 10; RFC BASE_HISTORY 10).
    pub base_history: u32,
    /// Noise-filter length, samples (ns-3 `NoiseFilterLen`, 4; RFC CURRENT_FILTER 4).
    pub noise_filter: u32,
    /// NewReno slow start allowed (ns-3 `SSParam`, "yes").
    pub slow_start: bool,
    /// MIN_CWND, segments (ns-3 `MinCwnd`, 2; RFC 2).
    pub min_cwnd: u32,
    /// ALLOWED_INCREASE, segments (`rfc6817` only; RFC: 1, and greater than 0).
    pub allowed_increase: u32,
}

impl Default for LedbatConfig {
    /// ns-3 3.44's attribute defaults.
    fn default() -> Self {
        LedbatConfig {
            variant: LedbatVariant::Ns3,
            target: Dur::from_millis(100),
            gain: 1.0,
            base_history: 10,
            noise_filter: 4,
            slow_start: true,
            min_cwnd: 2,
            allowed_increase: 1,
        }
    }
}

/// Per-flow LEDBAT state.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Ledbat {
    pub(super) cfg: LedbatConfig,
    /// The last one-way delay samples, ms, oldest first (the noise filter).
    current: VecDeque<u32>,
    /// Minimum one-way delay per bucket, ms, oldest first; the last is the open bucket.
    base: VecDeque<u32>,
    /// ns3: ⌊seconds⌋ at the last rollover (`m_lastRollover`, 0 at first); rfc6817: the open
    /// bucket's minute (`None` before the first sample).
    last_rollover: Option<u64>,
    /// The last ACK carried usable timestamps (ns-3 `LEDBAT_VALID_OWD`).
    valid_owd: bool,
    /// Slow start allowed (ns-3 `LEDBAT_CAN_SS`).
    can_slow_start: bool,
}

impl Ledbat {
    pub(super) fn new(cfg: LedbatConfig) -> Ledbat {
        Ledbat {
            cfg,
            current: VecDeque::with_capacity(cfg.noise_filter as usize + 1),
            base: VecDeque::with_capacity(cfg.base_history as usize + 1),
            last_rollover: None,
            valid_owd: false,
            can_slow_start: cfg.slow_start,
        }
    }

    /// Samples the noise filter keeps.
    fn current_len(&self) -> usize {
        match self.cfg.variant {
            LedbatVariant::Ns3 => (self.cfg.noise_filter as usize).saturating_sub(1).max(1), // AddDelay
            LedbatVariant::Rfc6817 => self.cfg.noise_filter as usize,
        }
    }

    /// Buckets the base history keeps.
    fn base_len(&self) -> usize {
        match self.cfg.variant {
            LedbatVariant::Ns3 => (self.cfg.base_history as usize).saturating_sub(1).max(1),
            LedbatVariant::Rfc6817 => self.cfg.base_history as usize,
        }
    }

    /// One ACK's timestamps (ns-3 `PktsAcked`): `tsval_ms` the ACK's TSval, `tsecr_ms` its TSecr,
    /// both on the 1-ms clock; `timestamps` whether the option is in use; `has_rtt` whether the
    /// sender has an RTT sample (ns-3 adds delay samples only once `rtt` is positive).
    pub(super) fn on_ack_timestamps(&mut self, now: Time, tsval_ms: u32, tsecr_ms: u32, timestamps: bool, has_rtt: bool) {
        self.valid_owd = timestamps && tsval_ms != 0 && tsecr_ms != 0;
        if !timestamps || !has_rtt {
            return;
        }
        let owd = tsval_ms.wrapping_sub(tsecr_ms);
        let len = self.current_len();
        push_bounded(&mut self.current, owd, len);
        self.update_base_delay(owd, now);
    }

    /// ns-3 `UpdateBaseDelay`; RFC 6817 §2.4.2 `update_base_delay`.
    fn update_base_delay(&mut self, owd: u32, now: Time) {
        let len = self.base_len();
        let rollover = match self.cfg.variant {
            LedbatVariant::Ns3 => {
                if self.base.is_empty() {
                    push_bounded(&mut self.base, owd, len); // the first sample sets no rollover time
                    return;
                }
                let secs = now.0 / 1_000_000_000;
                let last = self.last_rollover.unwrap_or(0);
                (secs.saturating_sub(last) > 60).then_some(secs)
            }
            LedbatVariant::Rfc6817 => {
                let minute = now.0 / 60_000_000_000;
                (self.last_rollover != Some(minute)).then_some(minute)
            }
        };
        match rollover {
            Some(at) => {
                self.last_rollover = Some(at);
                push_bounded(&mut self.base, owd, len);
            }
            None => {
                let last = self.base.back_mut().expect("a bucket is open");
                *last = (*last).min(owd);
            }
        }
    }

    /// min(noise filter), ms (ns-3 `MinCircBuf`: `~0U` when empty).
    pub(super) fn current_delay_ms(&self) -> u32 {
        self.current.iter().copied().min().unwrap_or(u32::MAX)
    }

    /// min(base history), ms (`~0U` when empty).
    pub(super) fn base_delay_ms(&self) -> u32 {
        self.base.iter().copied().min().unwrap_or(u32::MAX)
    }

    /// Window growth on an ACK outside loss recovery (ns-3 `IncreaseWindow`). `acked`: segments
    /// the ACK counts (ns-3: what `ProcessAck` passes; rfc6817: newly delivered); `outstanding`:
    /// segments outstanding before and after the ACK (`snd_max − snd_una`); `mss`: bytes per
    /// segment (ns-3's byte arithmetic).
    pub(super) fn grow(&mut self, cwnd: &mut f64, ssthresh: &mut f64, acked: u32, outstanding: (u32, u32), mss: u32) {
        if *cwnd <= 1.0 {
            self.can_slow_start = true; // ns-3: cWnd ≤ segmentSize, e.g. after a timeout
        }
        if self.cfg.slow_start && *cwnd <= *ssthresh && self.can_slow_start {
            if acked >= 1 {
                *cwnd += 1.0; // TcpNewReno::SlowStart: one segment per call
            }
            return;
        }
        self.can_slow_start = false;
        if !self.valid_owd {
            if acked > 0 {
                *cwnd += 1.0 / *cwnd; // TcpNewReno::CongestionAvoidance: "no timestamps"
            }
            return;
        }
        match self.cfg.variant {
            LedbatVariant::Ns3 => self.avoid_ns3(cwnd, ssthresh, acked, outstanding.1, mss),
            LedbatVariant::Rfc6817 => self.avoid_rfc(cwnd, acked, outstanding.0),
        }
    }

    /// ns-3 3.44 `TcpLedbat::CongestionAvoidance`, in its integer bytes and milliseconds.
    fn avoid_ns3(&self, cwnd: &mut f64, ssthresh: &mut f64, acked: u32, outstanding_after: u32, mss: u32) {
        let mss_f = f64::from(mss);
        let cwnd_bytes = (*cwnd * mss_f).round() as u32;
        let target_ms = (self.cfg.target.0 / 1_000_000) as i64; // m_target.GetMilliSeconds()
        let (current, base) = (u64::from(self.current_delay_ms()), u64::from(self.base_delay_ms()));
        let mut offset = if current > base {
            (target_ms - (current - base) as i64) as f64
        } else {
            (target_ms + (base - current) as i64) as f64
        };
        offset *= self.cfg.gain;
        let snd_cwnd_cnt = (offset * f64::from(acked) * mss_f) as i32; // static_cast<int32_t>
        let inc = f64::from(snd_cwnd_cnt) / (target_ms as f64 * f64::from(cwnd_bytes));
        let mut next = (f64::from(cwnd_bytes) + inc * mss_f) as u32; // uint32 += double
        // m_highTxMark − m_lastAckedSeq (after this ACK) + segmentsAcked·MSS.
        let max_cwnd = (outstanding_after + acked).saturating_mul(mss);
        next = next.min(max_cwnd).max(self.cfg.min_cwnd * mss);
        *cwnd = f64::from(next) / mss_f;
        if f64::from(next) <= *ssthresh * mss_f {
            *ssthresh = f64::from(next.saturating_sub(1)) / mss_f; // m_ssThresh = m_cWnd − 1
        }
    }

    /// RFC 6817 §2.4.2, "on acknowledgement", in real numbers and segments.
    fn avoid_rfc(&self, cwnd: &mut f64, acked: u32, flight_before: u32) {
        let target_ms = self.cfg.target.as_secs_f64() * 1e3;
        let queuing_delay = f64::from(self.current_delay_ms()) - f64::from(self.base_delay_ms());
        let off_target = (target_ms - queuing_delay) / target_ms;
        *cwnd += self.cfg.gain * off_target * f64::from(acked) / *cwnd;
        let max_allowed = f64::from(flight_before) + f64::from(self.cfg.allowed_increase);
        *cwnd = cwnd.min(max_allowed).max(f64::from(self.cfg.min_cwnd));
    }

    /// ssthresh after a loss with `window` segments: ns-3 NewReno's max(2, window/2); RFC 6817
    /// max(cwnd/2, MIN_CWND), the sender passing cwnd.
    pub(super) fn loss_ssthresh(&self, window: f64) -> f64 {
        match self.cfg.variant {
            LedbatVariant::Ns3 => (window / 2.0).max(2.0),
            LedbatVariant::Rfc6817 => (window / 2.0).max(f64::from(self.cfg.min_cwnd)),
        }
    }

    /// Whether slow start is still allowed (tests).
    #[cfg(test)]
    pub(super) fn can_slow_start(&self) -> bool {
        self.can_slow_start
    }
}

/// Appends `v`, dropping the oldest entries beyond `len`.
fn push_bounded(buf: &mut VecDeque<u32>, v: u32, len: usize) {
    buf.push_back(v);
    while buf.len() > len {
        buf.pop_front();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    fn ledbat(variant: LedbatVariant) -> Ledbat {
        Ledbat::new(LedbatConfig { variant, ..LedbatConfig::default() })
    }

    /// Feeds OWD samples (ms) at `at_s` seconds each; TSecr 1000 so that nothing is 0.
    fn feed(l: &mut Ledbat, samples: &[(u64, u32)]) {
        for &(at_s, owd) in samples {
            l.on_ack_timestamps(Time(at_s * S), 1000 + owd, 1000, true, true);
        }
    }

    /// A flow in congestion avoidance (slow start already over).
    fn in_avoidance(variant: LedbatVariant) -> Ledbat {
        let mut l = ledbat(variant);
        l.can_slow_start = false;
        l
    }

    #[test]
    fn ns3_grows_by_gain_off_target_per_cwnd_when_the_cap_allows() {
        // ns-3's own TcpLedbatIncrementTest: cwnd 2·1446 B, 2 segments acked, samples 1 ms then
        // 3 ms with a 1-sample filter: queuing delay 2 ms, offset 98 → +0.98·2·1446²/2892 B.
        let mut l = Ledbat::new(LedbatConfig { noise_filter: 1, slow_start: false, ..LedbatConfig::default() });
        l.on_ack_timestamps(Time(0), 2, 1, true, true);
        l.on_ack_timestamps(Time(0), 7, 4, true, true);
        let (mut cwnd, mut ssthresh) = (2.0, 4.0);
        // highTxMark 4753 − lastAckedSeq 3216 = 1537 B after the ACK: 2 segments after at MSS 1446
        // (ns-3's cap, 1537 + 2892, does not bind either way).
        l.grow(&mut cwnd, &mut ssthresh, 2, (4, 2), 1446);
        let expected = (2.0 * 1446.0 + 0.98 * 2.0 * 1446.0 * 1446.0 / 2892.0) as u32; // 4309
        assert_eq!((cwnd * 1446.0).round() as u32, expected);
    }

    #[test]
    fn ns3_shrinks_when_queuing_delay_exceeds_target() {
        // ns-3's TcpLedbatDecrementTest: samples 1 ms then 199 ms: queuing 198 ms, offset −98;
        // 2892 − 2834 = 58 B, then MinCwnd 2 segments.
        let mut l = Ledbat::new(LedbatConfig { noise_filter: 1, slow_start: false, ..LedbatConfig::default() });
        l.on_ack_timestamps(Time(0), 2, 1, true, true);
        l.on_ack_timestamps(Time(0), 205, 6, true, true);
        let (mut cwnd, mut ssthresh) = (2.0, 4.0);
        l.grow(&mut cwnd, &mut ssthresh, 2, (4, 2), 1446);
        assert_eq!(cwnd, 2.0, "clamped at MIN_CWND");
        // From 40 segments: 40·1446 − 0.98·2·1446/40 B per ACK.
        let (mut cwnd, mut ssthresh) = (40.0, 1e9);
        l.grow(&mut cwnd, &mut ssthresh, 2, (40, 38), 1446);
        let expected = (40.0 * 1446.0 - 98.0 * 2.0 * 1446.0 / (100.0 * 40.0)) as u32;
        assert_eq!((cwnd * 1446.0).round() as u32, expected);
        assert!(cwnd < 40.0);
    }

    #[test]
    fn ns3_caps_cwnd_at_the_flight_before_the_ack() {
        // Below target, a window-limited flow (40 outstanding of cwnd 40.5) cannot grow: the cap
        // is what was outstanding before the ACK (ALLOWED_INCREASE = 0 in effect).
        let mut l = in_avoidance(LedbatVariant::Ns3);
        feed(&mut l, &[(1, 20), (1, 20)]);
        let (mut cwnd, mut ssthresh) = (40.5, 10.0);
        l.grow(&mut cwnd, &mut ssthresh, 2, (40, 38), 1000);
        assert_eq!(cwnd, 40.0);
        // RFC 6817 lets it exceed FlightSize by ALLOWED_INCREASE = 1.
        let mut l = in_avoidance(LedbatVariant::Rfc6817);
        feed(&mut l, &[(1, 20), (1, 20)]);
        let mut cwnd = 40.5;
        l.grow(&mut cwnd, &mut 10.0, 2, (40, 38), 1000);
        assert!((cwnd - (40.5 + 2.0 / 40.5)).abs() < 1e-12, "{cwnd}");
        let mut cwnd = 40.9;
        l.grow(&mut cwnd, &mut 10.0, 2, (39, 37), 1000);
        assert_eq!(cwnd, 40.0, "FlightSize 39 + 1");
    }

    #[test]
    fn rfc_grows_by_gain_off_target_acked_over_cwnd() {
        // Base 20 ms, current 70 ms: queuing 50 of 100 ms, off_target 0.5; gain 0.5, 2 acked,
        // cwnd 20: +0.5·0.5·2/20 = 0.025.
        let mut l = Ledbat::new(LedbatConfig { variant: LedbatVariant::Rfc6817, gain: 0.5, ..LedbatConfig::default() });
        l.can_slow_start = false;
        feed(&mut l, &[(1, 20), (1, 70), (1, 70), (1, 70), (1, 70)]);
        assert_eq!((l.current_delay_ms(), l.base_delay_ms()), (70, 20));
        let mut cwnd = 20.0;
        l.grow(&mut cwnd, &mut 1.0, 2, (100, 98), 1448);
        assert!((cwnd - 20.025).abs() < 1e-12, "{cwnd}");
        // Queuing 150 ms: off_target −0.5, the window shrinks.
        feed(&mut l, &[(1, 170); 4]);
        l.grow(&mut cwnd, &mut 1.0, 2, (100, 98), 1448);
        assert!(cwnd < 20.025);
    }

    #[test]
    fn noise_filter_is_the_minimum_of_the_last_samples() {
        // RFC: the last 4 samples; ns-3's AddDelay keeps 3 of NoiseFilterLen 4.
        let mut rfc = ledbat(LedbatVariant::Rfc6817);
        let mut ns3 = ledbat(LedbatVariant::Ns3);
        for l in [&mut rfc, &mut ns3] {
            feed(l, &[(0, 10), (0, 50), (0, 40), (0, 60), (0, 70)]);
        }
        assert_eq!(rfc.current_delay_ms(), 40, "min(50, 40, (60, 20), 70)");
        assert_eq!(ns3.current_delay_ms(), 40, "min(40, 60, 70)");
        feed(&mut rfc, &[(0, 80)]);
        feed(&mut ns3, &[(0, 80)]);
        assert_eq!(rfc.current_delay_ms(), 40, "min(40, 60, (70, 10), 80)");
        assert_eq!(ns3.current_delay_ms(), 60, "min(60, 70, 80)");
        // A spike of one sample does not move a filter whose other samples are lower.
        feed(&mut rfc, &[(0, 500)]);
        assert_eq!(rfc.current_delay_ms(), 60);
    }

    #[test]
    fn base_delay_is_the_minimum_over_the_history_of_buckets() {
        let mut l = ledbat(LedbatVariant::Rfc6817);
        // Minute 0: 30 then 25; minute 1: 40; minute 2: 35.
        feed(&mut l, &[(0, 30), (10, 25), (60, 40), (130, 35)]);
        assert_eq!(l.base.iter().copied().collect::<Vec<_>>(), [25, 40, 35]);
        assert_eq!(l.base_delay_ms(), 25);
        // Ten minutes later the 25-ms bucket has left the 10-bucket history.
        for m in 3..13 {
            feed(&mut l, &[(m * 60, 50)]);
        }
        assert_eq!(l.base.len(), 10);
        assert_eq!(l.base_delay_ms(), 50);
    }

    #[test]
    fn ns3_buckets_roll_over_after_more_than_60_whole_seconds() {
        let mut l = ledbat(LedbatVariant::Ns3);
        feed(&mut l, &[(0, 30), (60, 20)]);
        assert_eq!(l.base.len(), 1, "60 − 0 is not > 60: same bucket");
        feed(&mut l, &[(61, 25)]);
        assert_eq!(l.base.iter().copied().collect::<Vec<_>>(), [20, 25]);
        feed(&mut l, &[(121, 40)]);
        assert_eq!(l.base.iter().copied().collect::<Vec<_>>(), [20, 25], "121 − 61 = 60: still the second bucket");
        feed(&mut l, &[(122, 40)]);
        assert_eq!(l.base.len(), 3, "122 − 61 > 60");
        // BaseHistoryLen 10 keeps 9 buckets.
        for k in 2..20 {
            feed(&mut l, &[(61 * k + 1, 50)]);
        }
        assert_eq!(l.base.len(), 9);
    }

    #[test]
    fn slow_start_until_ssthresh_then_never_again_until_a_timeout() {
        let mut l = ledbat(LedbatVariant::Ns3);
        feed(&mut l, &[(0, 20)]);
        let (mut cwnd, mut ssthresh) = (10.0, 11.0);
        l.grow(&mut cwnd, &mut ssthresh, 2, (10, 8), 1000);
        assert_eq!(cwnd, 11.0, "+1 per ACK, not per segment");
        assert!(l.can_slow_start());
        l.grow(&mut cwnd, &mut ssthresh, 2, (11, 9), 1000); // cwnd 11 ≤ ssthresh 11: still slow start
        assert_eq!(cwnd, 12.0);
        l.grow(&mut cwnd, &mut ssthresh, 2, (12, 10), 1000); // 12 > 11: avoidance
        assert!(!l.can_slow_start());
        let mut low = 5.0;
        l.grow(&mut low, &mut 100.0, 2, (5, 3), 1000);
        assert!(low <= 5.0, "below ssthresh but slow start is over: {low}");
        // A timeout's cwnd of 1 allows it again.
        let mut one = 1.0;
        l.grow(&mut one, &mut 100.0, 1, (1, 0), 1000);
        assert_eq!(one, 2.0);
        // Without timestamps avoidance is NewReno's +1/cwnd.
        let mut l = in_avoidance(LedbatVariant::Ns3);
        l.on_ack_timestamps(Time(S), 50, 10, false, true);
        let mut cwnd = 10.0;
        l.grow(&mut cwnd, &mut 1.0, 2, (10, 8), 1000);
        assert!((cwnd - 10.1).abs() < 1e-12, "{cwnd}");
        // Nor does LEDBAT slow-start at all with ledbat_slow_start = false.
        let mut l = Ledbat::new(LedbatConfig { slow_start: false, ..LedbatConfig::default() });
        feed(&mut l, &[(0, 20), (0, 20)]);
        let mut cwnd = 10.0;
        l.grow(&mut cwnd, &mut 1e9, 2, (10, 8), 1000);
        assert_eq!(cwnd, 10.0, "capped at the flight, not +1");
    }

    #[test]
    fn ns3_without_valid_timestamps_falls_back_to_newreno() {
        // TSecr 0 (a segment sent in the first millisecond) marks the sample invalid.
        let mut l = in_avoidance(LedbatVariant::Ns3);
        l.on_ack_timestamps(Time(S), 50, 0, true, true);
        let mut cwnd = 20.0;
        l.grow(&mut cwnd, &mut 1.0, 2, (20, 18), 1000);
        assert!((cwnd - 20.05).abs() < 1e-12, "{cwnd}");
    }

    #[test]
    fn loss_halves_with_the_variant_floor() {
        let ns3 = ledbat(LedbatVariant::Ns3);
        assert_eq!(ns3.loss_ssthresh(21.0), 10.5);
        assert_eq!(ns3.loss_ssthresh(3.0), 2.0);
        let rfc = Ledbat::new(LedbatConfig { variant: LedbatVariant::Rfc6817, min_cwnd: 4, ..LedbatConfig::default() });
        assert_eq!(rfc.loss_ssthresh(21.0), 10.5);
        assert_eq!(rfc.loss_ssthresh(6.0), 4.0);
    }
}
