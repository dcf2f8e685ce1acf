//! BBR v1 congestion control as Linux's net/ipv4/tcp_bbr.c runs it (the kernel's `bbr`), in the
//! order of its `bbr_main`: update the model (bandwidth, ACK aggregation, gain cycle, full-pipe
//! check, drain, min RTT and PROBE_RTT, gains), then set the pacing rate and cwnd.
//!
//! The state machine and estimators are those of draft-cardwell-iccrg-bbr-congestion-control-00
//! (STARTUP with gain 2/ln 2, exit after 3 rounds with < 25% bandwidth growth (§4.3.2.2),
//! DRAIN, PROBE_BW's 8-phase cycle, PROBE_RTT after 10 s without a lower min RTT for at least
//! 200 ms and one round at 4 segments (§4.3.5), a 10-round windowed max bandwidth (§4.1.1),
//! a 10 s min RTT (§4.1.2)); rate samples come from `rate_sample.rs`
//! (draft-cheng-iccrg-delivery-rate-estimation).
//!
//! Where the kernel and the draft differ, the kernel is followed:
//! * gains are the kernel's fixed-point values: high gain 739/256 = 2.887 (draft: 2/ln 2 =
//!   2.885), drain gain 88/256 = 0.344 (draft: ln 2 / 2 = 0.347);
//! * the pacing rate is gain·bw less a 1% margin (`bbr_pacing_margin_percent`; not in the draft);
//! * cwnd = cwnd_gain·BDP + ACK-aggregation allowance, plus 3 TSO quanta (`bbr_quantization_budget`:
//!   3·`bbr_tso_segs_goal`, 2 segments per quantum at rates ≥ 1.2 Mb/s, about 1 ms of data above
//!   17 Mb/s), rounded up to even, +2 in the 1.25 phase; the draft adds 3·SendQuantum the same way;
//! * the random start phase of PROBE_BW is drawn from the 7 phases other than 0.75
//!   (`bbr_reset_probe_bw_mode`), from the flow's seeded stream so runs are deterministic;
//! * loss recovery (`bbr_set_cwnd_to_recover_or_restore`): each ACK first takes the segments it
//!   got marked lost off cwnd (`rs->losses`, RACK's marks); on entering recovery cwnd =
//!   in-flight + newly delivered and packet conservation for one round, cwnd restored to the
//!   pre-recovery value (`prior_cwnd`) on leaving recovery or a timeout's loss state; BBR keeps no
//!   ssthresh (the sender's cut to ssthresh is a no-op for BBR, `loss_ssthresh` returns cwnd);
//!   a loss also ends the 1.25 probing phase once it has lasted a min RTT.
//!
//! Not modelled (docs/bbr.md): the long-term bandwidth (policer) estimator `lt_bw`, losses
//! without RACK (`rack_tlp = false`: RFC 6675's marks are not counted in `rs->losses`), the
//! restart-from-idle pacing (`CA_EVENT_TX_START`), the delayed-ACK test on min-RTT samples
//! (`is_ack_delayed`), and spurious-recovery undo. Arithmetic is floating point, not the
//! kernel's 24-bit fixed point of bandwidth.

use super::rate_sample::{RateSample, RateSampler};
use crate::engine::{Dur, Time};

/// BBR_UNIT-scaled gains of tcp_bbr.c, as fractions.
const HIGH_GAIN: f64 = 739.0 / 256.0; // BBR_UNIT * 2885 / 1000 + 1
const DRAIN_GAIN: f64 = 88.0 / 256.0; // BBR_UNIT * 1000 / 2885
const CWND_GAIN: f64 = 2.0;
const PACING_GAIN: [f64; CYCLE_LEN] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
const CYCLE_LEN: usize = 8;
/// Phases the random start draws from (`bbr_cycle_rand`).
const CYCLE_RAND: u64 = 7;
/// Max-bandwidth filter window, rounds (`bbr_bw_rtts` = CYCLE_LEN + 2).
const BW_RTTS: u32 = CYCLE_LEN as u32 + 2;
const MIN_RTT_WIN: Dur = Dur::from_millis(10_000);
const PROBE_RTT_TIME: Dur = Dur::from_millis(200);
/// Floor of cwnd, and cwnd in PROBE_RTT (`bbr_cwnd_min_target`).
pub(super) const CWND_MIN_TARGET: u32 = 4;
const FULL_BW_THRESH: f64 = 1.25;
const FULL_BW_CNT: u32 = 3;
const PACING_MARGIN: f64 = 0.99;
/// TCP_INIT_CWND: the BDP before any RTT sample.
const INIT_CWND: u32 = 10;
/// Below 1.2 Mb/s one segment per TSO quantum, else at least two (`bbr_min_tso_rate`).
const MIN_TSO_RATE_BYTES: f64 = 1_200_000.0 / 8.0;
/// `sk_pacing_shift`: TSO autosizing aims at 1/1024 s of data.
const PACING_SHIFT_DIV: f64 = 1024.0;
/// GSO_LEGACY_MAX_SIZE − 1 − MAX_TCP_HEADER (x86-64).
const TSO_MAX_BYTES: f64 = 65536.0 - 1.0 - 320.0;
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
const ACK_EPOCH_RESET: u32 = 1 << 20;
const EXTRA_ACKED_MAX: Dur = Dur::from_millis(100);

/// BBR's mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// The sender's loss-recovery state, in Linux's order (`TCP_CA_Open` < `Recovery` < `Loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum CaState {
    Open,
    Recovery,
    Loss,
}

/// What the sender tells BBR about an ACK.
pub(crate) struct AckView {
    pub now: Time,
    pub rs: RateSample,
    pub ca_state: CaState,
    /// Segments in flight after the ACK (the RFC 6675 pipe, Linux's `tcp_packets_in_flight`).
    pub inflight: u32,
    /// The sender's cwnd before BBR sets it (a timeout may have cut it to 1).
    pub cwnd: u32,
    pub srtt: Option<Dur>,
    /// The pacing clock's next departure (`tcp_wstamp_ns`).
    pub next_departure: Time,
    /// Segments newly marked lost while this ACK was processed (`rs->losses`); RACK's marks, the
    /// only ones Linux makes with RACK on (0 with `rack_tlp = false`, docs/bbr.md).
    pub losses: u32,
}

/// Kathleen Nichols' windowed max of three samples (Linux lib/minmax.c), time in rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct WindowedMax {
    s: [(u32, f64); 3],
}

impl WindowedMax {
    fn get(&self) -> f64 {
        self.s[0].1
    }

    fn reset(&mut self, t: u32, v: f64) -> f64 {
        self.s = [(t, v); 3];
        v
    }

    /// `minmax_running_max`.
    fn update(&mut self, win: u32, t: u32, v: f64) -> f64 {
        let val = (t, v);
        if v >= self.s[0].1 || t.wrapping_sub(self.s[2].0) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        // `minmax_subwin_update`
        let dt = t.wrapping_sub(self.s[0].0);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if t.wrapping_sub(self.s[0].0) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// Per-flow BBR state (with its delivery-rate estimator), boxed in `CcState::Bbr`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Bbr {
    pub rate: RateSampler,
    mode: Mode,
    /// Max delivery rate, segments/s, over the last `BW_RTTS` rounds.
    bw: WindowedMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    probe_rtt_round_done: bool,
    packet_conservation: bool,
    prev_ca_state: CaState,
    prior_cwnd: u32,
    full_bw_reached: bool,
    full_bw: f64,
    full_bw_cnt: u32,
    cycle_idx: usize,
    cycle_stamp: Time,
    pacing_gain: f64,
    cwnd_gain: f64,
    has_seen_rtt: bool,
    /// Bytes of payload per second.
    pacing_rate: f64,
    /// cwnd as BBR last set it (or as the sender reports it at an ACK).
    cwnd: u32,
    extra_acked: [u32; 2],
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    ack_epoch_stamp: Time,
    ack_epoch_acked: u32,
    mss: u32,
    /// splitmix64 state for the random PROBE_BW start phase.
    rng: u64,
}

impl Bbr {
    /// `bbr_init` for a connection starting at `now` with `initial_window` segments of `mss`
    /// bytes; `seed` comes from the flow's random stream.
    pub fn new(now: Time, initial_window: u32, mss: u32, seed: u64) -> Bbr {
        let mut b = Bbr {
            rate: RateSampler::default(),
            mode: Mode::Startup,
            bw: WindowedMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: now,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            packet_conservation: false,
            prev_ca_state: CaState::Open,
            prior_cwnd: 0,
            full_bw_reached: false,
            full_bw: 0.0,
            full_bw_cnt: 0,
            cycle_idx: 0,
            cycle_stamp: Time::ZERO,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            has_seen_rtt: false,
            pacing_rate: 0.0,
            cwnd: initial_window,
            extra_acked: [0; 2],
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            ack_epoch_stamp: now,
            ack_epoch_acked: 0,
            mss,
            rng: seed,
        };
        b.init_pacing_rate_from_rtt(None);
        b
    }

    #[cfg(test)]
    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn pacing_rate(&self) -> f64 {
        self.pacing_rate
    }

    #[cfg(test)]
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The max-bandwidth estimate, segments/s.
    #[cfg(test)]
    pub fn max_bw(&self) -> f64 {
        self.bw.get()
    }

    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }

    #[cfg(test)]
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    fn random_below(&mut self, n: u64) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }

    /// `bbr_ssthresh`: remember cwnd for the restore after recovery; BBR itself keeps no
    /// ssthresh, so the sender gets cwnd back and its "cwnd = ssthresh" changes nothing.
    pub fn on_loss(&mut self) -> f64 {
        self.save_cwnd();
        f64::from(self.cwnd)
    }

    /// The connection's first segment leaves at `now` (`bbr_init` runs at connection start).
    pub fn start(&mut self, now: Time) {
        self.min_rtt_stamp = now;
        self.ack_epoch_stamp = now;
    }

    /// Seeds the random PROBE_BW start phase (the flow's random stream).
    pub fn set_seed(&mut self, seed: u64) {
        self.rng = seed;
    }

    /// `bbr_set_state(TCP_CA_Loss)`: a retransmission timeout ends the round and restarts the
    /// full-bandwidth check.
    pub fn on_timeout(&mut self) {
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0.0;
        self.round_start = true;
    }

    /// `bbr_main`: one ACK; returns the new cwnd (segments). The pacing rate is `pacing_rate()`.
    pub fn on_ack(&mut self, a: &AckView) -> u32 {
        self.cwnd = a.cwnd;
        self.update_model(a);
        let bw = self.bw.get();
        self.set_pacing_rate(bw, self.pacing_gain, a.srtt);
        self.set_cwnd(a, bw);
        self.cwnd
    }

    fn update_model(&mut self, a: &AckView) {
        self.update_bw(&a.rs);
        self.update_ack_aggregation(a);
        self.update_cycle_phase(a);
        self.check_full_bw_reached(&a.rs);
        self.check_drain(a);
        self.update_min_rtt(a);
        self.update_gains();
    }

    /// `bbr_update_bw`: rounds and the max filter; app-limited samples count only if they raise it.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let Some(delivered) = rs.delivered else { return };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = self.rate.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let bw = delivered as f64 / rs.interval.as_secs_f64();
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(BW_RTTS, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the largest excess of delivered over bw·elapsed in an epoch.
    fn update_ack_aggregation(&mut self, a: &AckView) {
        let rs = &a.rs;
        if rs.acked_sacked == 0 || rs.delivered.is_none() {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1F);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch = self.rate.delivered_time.saturating_since(self.ack_epoch_stamp).as_secs_f64();
        let mut expected = (self.bw.get() * epoch) as u32;
        if self.ack_epoch_acked <= expected || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_RESET {
            self.ack_epoch_acked = 0;
            self.ack_epoch_stamp = self.rate.delivered_time;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(a.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        *slot = (*slot).max(extra);
    }

    fn update_cycle_phase(&mut self, a: &AckView) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(a) {
            self.advance_cycle_phase();
        }
    }

    /// `bbr_is_next_cycle_phase`: 1.0 phases last one min RTT; 1.25 lasts until in-flight
    /// reaches 1.25·BDP or a loss is found; 0.75 ends early once in-flight ≤ BDP.
    fn is_next_cycle_phase(&self, a: &AckView) -> bool {
        let min_rtt = self.min_rtt.unwrap_or(Dur(u64::MAX));
        let full_length = self.rate.delivered_time.saturating_since(self.cycle_stamp) > min_rtt;
        if self.pacing_gain == 1.0 {
            return full_length;
        }
        // `rs->prior_in_flight`: in flight before this ACK delivered its segments.
        let prior_in_flight = a.inflight + a.rs.acked_sacked;
        let inflight = self.packets_in_net_at_edt(a, prior_in_flight);
        let bw = self.bw.get();
        if self.pacing_gain > 1.0 {
            return full_length && (a.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight(bw, 1.0)
    }

    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = self.rate.delivered_time;
    }

    /// `bbr_check_full_bw_reached`: three rounds without 25% growth of max bw end STARTUP.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        if self.bw.get() >= self.full_bw * FULL_BW_THRESH {
            self.full_bw = self.bw.get();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: STARTUP → DRAIN at full bw; DRAIN → PROBE_BW once in flight ≤ BDP.
    fn check_drain(&mut self, a: &AckView) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
        }
        if self.mode == Mode::Drain && self.packets_in_net_at_edt(a, a.inflight) <= self.inflight(self.bw.get(), 1.0) {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_reset_probe_bw_mode`: a random phase other than 0.75 (index 1).
    fn reset_probe_bw_mode(&mut self) {
        self.mode = Mode::ProbeBw;
        self.cycle_idx = CYCLE_LEN - 1 - self.random_below(CYCLE_RAND) as usize;
        self.advance_cycle_phase();
    }

    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_update_min_rtt`: the 10 s min-RTT filter and PROBE_RTT.
    fn update_min_rtt(&mut self, a: &AckView) {
        let now = a.now;
        let expired = now > self.min_rtt_stamp + MIN_RTT_WIN;
        if let Some(rtt) = a.rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt < m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken while draining for PROBE_RTT do not measure the path's bandwidth.
            self.rate.mark_app_limited(a.inflight);
            if self.probe_rtt_done_stamp.is_none() && a.inflight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = self.rate.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(now);
                }
            }
        }
    }

    /// `bbr_check_probe_rtt_done`: after 200 ms and a round at the floor, restore cwnd and leave.
    fn check_probe_rtt_done(&mut self, now: Time) {
        let Some(done) = self.probe_rtt_done_stamp else { return };
        if now <= done {
            return;
        }
        self.min_rtt_stamp = now;
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.reset_mode();
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (PACING_GAIN[self.cycle_idx], CWND_GAIN),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// `bbr_bw_to_pacing_rate`: bytes/s.
    fn rate_bytes(&self, bw: f64, gain: f64) -> f64 {
        bw * f64::from(self.mss) * gain * PACING_MARGIN
    }

    /// `bbr_init_pacing_rate_from_rtt`: high gain × cwnd / SRTT (1 ms before any RTT).
    fn init_pacing_rate_from_rtt(&mut self, srtt: Option<Dur>) {
        let rtt = match srtt {
            Some(s) => {
                self.has_seen_rtt = true;
                s.as_secs_f64().max(1e-6)
            }
            None => 1e-3,
        };
        self.pacing_rate = self.rate_bytes(f64::from(self.cwnd) / rtt, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: never lowered before the pipe is full.
    fn set_pacing_rate(&mut self, bw: f64, gain: f64, srtt: Option<Dur>) {
        let rate = self.rate_bytes(bw, gain);
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate_from_rtt(srtt);
        }
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_tso_segs_goal`: segments per send quantum.
    fn tso_segs_goal(&self) -> u32 {
        let min_segs = if self.pacing_rate < MIN_TSO_RATE_BYTES { 1 } else { 2 };
        let bytes = (self.pacing_rate / PACING_SHIFT_DIV).min(TSO_MAX_BYTES);
        ((bytes / f64::from(self.mss)) as u32).max(min_segs).min(0x7F)
    }

    /// `bbr_bdp`: gain × bw × min RTT, rounded up; the initial window before an RTT sample.
    fn bdp(&self, bw: f64, gain: f64) -> u32 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(rtt) => (bw * rtt.as_secs_f64() * gain).ceil() as u32,
        }
    }

    /// `bbr_quantization_budget`: room for 3 send quanta in flight, even, +2 while probing.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, bw: f64, gain: f64) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: in flight at the next departure, less what bw delivers by then.
    fn packets_in_net_at_edt(&self, a: &AckView, inflight_now: u32) -> u32 {
        let wait = a.next_departure.saturating_since(a.now).as_secs_f64();
        let delivered_meanwhile = (self.bw.get() * wait) as u32;
        let mut at_edt = inflight_now;
        if self.pacing_gain > 1.0 {
            at_edt += self.tso_segs_goal();
        }
        at_edt.saturating_sub(delivered_meanwhile)
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if !self.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw.get() * EXTRA_ACKED_MAX.as_secs_f64()) as u32;
        self.extra_acked[0].max(self.extra_acked[1]).min(max_aggr)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: returns the cwnd and whether conservation holds it.
    fn recover_or_restore(&mut self, a: &AckView) -> (u32, bool) {
        let (prev, state) = (self.prev_ca_state, a.ca_state);
        let acked = a.rs.acked_sacked;
        let mut cwnd = self.cwnd;
        // An ACK for P segments releases at most 2P: the newly lost come off first.
        if a.losses > 0 {
            cwnd = cwnd.saturating_sub(a.losses).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = self.rate.delivered; // a round starts now
            cwnd = a.inflight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(a.inflight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: towards cwnd_gain × BDP + allowances, growing by what was delivered.
    fn set_cwnd(&mut self, a: &AckView, bw: f64) {
        let acked = a.rs.acked_sacked;
        if acked > 0 {
            let (cwnd, held) = self.recover_or_restore(a);
            self.cwnd = cwnd;
            if !held {
                let target = self.quantization_budget(self.bdp(bw, self.cwnd_gain) + self.ack_aggregation_cwnd());
                if self.full_bw_reached {
                    self.cwnd = (self.cwnd + acked).min(target);
                } else if self.cwnd < target || self.rate.delivered < u64::from(INIT_CWND) {
                    self.cwnd += acked;
                }
                self.cwnd = self.cwnd.max(CWND_MIN_TARGET);
            }
        }
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(CWND_MIN_TARGET);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_windowed_max_forgets_a_peak_after_its_window() {
        let mut m = WindowedMax::default();
        m.update(10, 1, 100.0);
        for t in 2..=11 {
            assert_eq!(m.update(10, t, 50.0), 100.0, "round {t}: the peak is within 10 rounds");
        }
        assert_eq!(m.update(10, 12, 50.0), 50.0, "expired after 10 rounds");
    }

    #[test]
    fn the_probe_bw_start_phase_is_never_the_draining_one() {
        let mut seen = [false; CYCLE_LEN];
        for seed in 0..200 {
            let mut b = Bbr::new(Time::ZERO, 10, 1448, seed);
            b.reset_probe_bw_mode();
            seen[b.cycle_idx] = true;
        }
        assert!(!seen[1], "0.75 is never the start phase");
        assert!(seen.iter().enumerate().all(|(i, &s)| s || i == 1), "the other 7 all occur: {seen:?}");
    }

    fn view(ca_state: CaState, inflight: u32, losses: u32) -> AckView {
        let rs = RateSample { delivered: None, interval: Dur::ZERO, prior_delivered: 0, is_app_limited: false, acked_sacked: 2, rtt: None };
        AckView { now: Time::ZERO, rs, ca_state, inflight, cwnd: 40, srtt: None, next_departure: Time::ZERO, losses }
    }

    #[test]
    fn an_acks_losses_come_off_cwnd_before_recovery_sets_it() {
        let mut b = Bbr::new(Time::ZERO, 10, 1448, 1);
        b.cwnd = 40;
        assert_eq!(b.recover_or_restore(&view(CaState::Open, 30, 3)), (37, false), "40 - 3 lost");
        assert_eq!(b.recover_or_restore(&view(CaState::Open, 30, 0)), (40, false), "no loss, no cut");
        // Entering recovery: in flight + delivered, held by packet conservation.
        assert_eq!(b.recover_or_restore(&view(CaState::Recovery, 30, 3)), (32, true));
        // A loss of everything cannot take cwnd below 1.
        b.prev_ca_state = CaState::Open;
        b.packet_conservation = false;
        assert_eq!(b.recover_or_restore(&view(CaState::Open, 0, 99)).0, 1);
    }

    #[test]
    fn a_loss_ends_the_probing_phase_once_it_has_lasted_a_min_rtt() {
        let mut b = Bbr::new(Time::ZERO, 10, 1448, 1);
        b.mode = Mode::ProbeBw;
        b.pacing_gain = 1.25;
        b.cycle_idx = 0;
        b.min_rtt = Some(Dur::from_millis(40));
        b.bw.reset(0, 1000.0); // 1000 segments/s: 1.25 BDP ≈ 50 + quanta, far above 10 in flight
        b.rate.delivered_time = Time(50_000_000);
        assert!(!b.is_next_cycle_phase(&view(CaState::Open, 10, 0)), "below 1.25 BDP, no loss: keep probing");
        assert!(b.is_next_cycle_phase(&view(CaState::Open, 10, 1)), "a loss after a min RTT ends it");
        b.rate.delivered_time = Time(30_000_000);
        assert!(!b.is_next_cycle_phase(&view(CaState::Open, 10, 1)), "not before a min RTT has passed");
    }

    #[test]
    fn gains_are_the_kernels() {
        assert!((HIGH_GAIN - 2.0 / std::f64::consts::LN_2).abs() < 0.003);
        assert!((DRAIN_GAIN - 1.0 / HIGH_GAIN).abs() < 0.004);
    }
}
