//! CUBIC as the Linux kernel runs it (`congestion_control = "cubic-linux"`, the default of
//! `profile = "linux"`): net/ipv4/tcp_cubic.c (`bictcp_update`, `cubictcp_cong_avoid`,
//! `cubictcp_recalc_ssthresh`, `cubictcp_state`, `cubictcp_acked`) with net/ipv4/tcp_cong.c's
//! `tcp_slow_start` and `tcp_cong_avoid_ai`, in the kernel's integer arithmetic. It differs from
//! RFC 9438 (our `"cubic"`) where a comparison with a live Linux run notices:
//!
//! * the Reno-friendly window grows by one segment per `(cwnd · 15) >> 3` segments delivered
//!   (α ≈ 0.53) for the whole epoch; RFC 9438 §4.3 switches to α = 1 once it reaches cwnd_prior,
//!   which doubles the growth of small windows between losses;
//! * growth counts delivered segments against an integer `cnt ≥ 2`; the cubic target is
//!   recomputed at most once per jiffy, and not at all while cwnd is unchanged for HZ/32;
//!   `t` is offset by the minimum RTT (not SRTT), in units of 1/1024 s; C is `bic_scale`
//!   41/1024 · 10 = 0.4004, β 717/1024;
//! * slow start stops at ssthresh and hands the rest of an ACK to congestion avoidance;
//! * a retransmission timeout (`TCP_CA_Loss`) forgets W_max and the minimum RTT (`bictcp_reset`),
//!   and RTT samples in the first second of an epoch are not used for the minimum;
//! * HyStart (`hystart`, on by default as in the kernel) ends slow start, ssthresh = cwnd, once
//!   cwnd ≥ 16 and either a round's smallest of 8+ RTT samples exceeds the minimum by
//!   clamp(min/8, 4 ms, 16 ms) (delay increase) or ACKs spaced ≤ 2 ms apart keep coming for more
//!   than (min RTT + ack delay)/2 after the round began (ACK train); RFC 9438 leaves slow start
//!   to the RFC 5681 rules.
//!
//! `cubic-ns3` (cubic_ns3.rs) is ns-3's port of the same function; it ignores RTT samples for
//! 10 ms (not 1 s) after an epoch starts, does not cap slow start at ssthresh, grows by at most one
//! segment per ACK and has no jiffy or HZ/32 rate limit.
//!
//! Not modelled (docs/tcp.md): the `tcp_is_cwnd_limited` test (no growth while the
//! application, not cwnd, limits sending; a bulk sender is always cwnd-limited), undo of a
//! reduction found spurious, and the kernel's approximate `cubic_root` (here exact, floor).
//! Jiffies are milliseconds (HZ = 1000). Windows are in whole segments.

use crate::engine::{Dur, Time};

/// `BICTCP_BETA_SCALE`.
const BETA_SCALE_DEN: u64 = 1024;
/// `beta`: β = 717/1024.
const BETA: u64 = 717;
/// `8 · (1024 + beta) / 3 / (1024 − beta)` in integer arithmetic (`cubictcp_register`): 15.
const BETA_SCALE: u32 = (8 * (BETA_SCALE_DEN + BETA) / 3 / (BETA_SCALE_DEN - BETA)) as u32;
/// `BICTCP_HZ`: time in the cubic function counts 1/1024 s.
const BICTCP_HZ: u32 = 10;
/// `bic_scale`: C = bic_scale / 1024 · 10.
const BIC_SCALE: u64 = 41;
/// `cube_rtt_scale = bic_scale · 10`: 1024 · C.
const CUBE_RTT_SCALE: u128 = (BIC_SCALE * 10) as u128;
/// `cube_factor = 2^(10 + 3·BICTCP_HZ) / (bic_scale · 10)`: K = cbrt(cube_factor · (W_max − cwnd)).
const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE * 10);
/// Jiffies per second (HZ = 1000: a jiffy is a millisecond).
const HZ: u64 = 1000;
/// `hystart_low_window`: HyStart looks only at windows of at least 16 segments.
const HYSTART_LOW_WINDOW: f64 = 16.0;
/// `HYSTART_MIN_SAMPLES`: RTT samples a round needs before the delay test.
const HYSTART_MIN_SAMPLES: u32 = 8;
/// `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`: the delay test's threshold bounds.
const HYSTART_DELAY_MIN: Dur = Dur::from_millis(4);
const HYSTART_DELAY_MAX: Dur = Dur::from_millis(16);
/// `hystart_ack_delta_us`: ACKs at most this far apart form a train.
const HYSTART_ACK_DELTA: Dur = Dur::from_millis(2);
/// `sk_gso_max_size` of a TUN or veth device (`GSO_LEGACY_MAX_SIZE`), for `hystart_ack_delay`.
const GSO_MAX_SIZE: f64 = 65_536.0;

/// What HyStart reads of the socket on an ACK with an RTT sample.
#[derive(Clone, Copy, Debug)]
pub(super) struct SlowStartView {
    /// The new cumulative ACK (`snd_una`) and the highest sequence sent (`snd_nxt`), in segments.
    pub(super) snd_una: u32,
    pub(super) snd_nxt: u32,
    pub(super) cwnd: f64,
    pub(super) ssthresh: f64,
    /// Payload bytes per segment and the smoothed RTT, for the kernel's pacing rate.
    pub(super) mss: u32,
    pub(super) srtt: Option<Dur>,
}

/// HyStart's per-round state (`round_start`, `last_ack`, `end_seq`, `curr_rtt`, `sample_cnt`,
/// `found`).
#[derive(Clone, Debug, Default, PartialEq)]
struct HyStart {
    found: bool,
    /// None until the first round starts (`bictcp_hystart_reset` at `cubictcp_init`).
    round_start: Option<Time>,
    last_ack: Time,
    end_seq: u32,
    curr_rtt: Option<Dur>,
    sample_cnt: u32,
}

/// The kernel's `struct bictcp` (HyStart's fields aside) and the socket's `snd_cwnd_cnt`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct CubicLinux {
    /// `cnt`: segments delivered per segment of growth.
    cnt: u32,
    /// `last_max_cwnd`: W_max, 0 before any reduction and after a timeout.
    last_max_cwnd: u32,
    /// `last_cwnd` and `last_time` (jiffies): when `cnt` was last computed, and for which cwnd.
    last_cwnd: u32,
    last_time: u64,
    /// `bic_origin_point`.
    origin: u32,
    /// `bic_K`, in 1/1024 s.
    k: u64,
    /// `delay_min` (None: 0, no sample yet).
    delay_min: Option<Dur>,
    /// `epoch_start`, jiffies (None: 0, no epoch).
    epoch_start: Option<u64>,
    /// `ack_cnt`: segments delivered towards the Reno-friendly window.
    ack_cnt: u32,
    /// `tcp_cwnd`: the Reno-friendly window.
    tcp_cwnd: u32,
    /// `tp->snd_cwnd_cnt`: segments delivered since the last increase.
    cwnd_cnt: u32,
    /// HyStart on (the `hystart` module parameter) and its state.
    hystart_on: bool,
    hystart: HyStart,
}

/// `tcp_jiffies32` at `now`.
fn jiffies(now: Time) -> u64 {
    now.0 / 1_000_000
}

/// `usecs_to_jiffies`: rounded up.
fn jiffies_of(d: Dur) -> u64 {
    d.0.div_ceil(1_000_000)
}

/// The largest integer whose cube is at most `x`.
fn cube_root_floor(x: u64) -> u64 {
    let mut r = (x as f64).cbrt() as u64;
    while (r as u128 + 1).pow(3) <= u128::from(x) {
        r += 1;
    }
    while r > 0 && (r as u128).pow(3) > u128::from(x) {
        r -= 1;
    }
    r
}

impl CubicLinux {
    /// A new connection's state (`cubictcp_init`), HyStart on or off.
    pub(super) fn new(hystart: bool) -> CubicLinux {
        CubicLinux { hystart_on: hystart, ..CubicLinux::default() }
    }

    /// `cubictcp_cong_avoid`: an ACK that delivers `acked` segments outside a reduction.
    /// `tcp_slow_start` up to ssthresh, the rest by `bictcp_update`'s `cnt` (`tcp_cong_avoid_ai`).
    pub(super) fn grow(&mut self, cwnd: &mut f64, ssthresh: f64, acked: u32, now: Time) {
        let mut seg = cwnd.max(0.0) as u32;
        let mut acked = acked;
        if f64::from(seg) < ssthresh {
            let reached = (u64::from(seg) + u64::from(acked)).min(ssthresh.max(0.0) as u64) as u32;
            acked -= reached - seg;
            seg = reached;
            if acked == 0 {
                *cwnd = f64::from(seg);
                return;
            }
        }
        self.update(seg, acked, now);
        // tcp_cong_avoid_ai(tp, cnt, acked): credit left from a larger cnt is applied first. (cnt
        // is 0 only before its first computation, which a window of 0 segments could skip.)
        let w = self.cnt.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            seg += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            seg += delta;
        }
        *cwnd = f64::from(seg);
    }

    /// `bictcp_update`: sets `cnt` for a window of `cwnd` segments after `acked` more delivered.
    fn update(&mut self, cwnd: u32, acked: u32, now: Time) {
        let j = jiffies(now);
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && j.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // At most once per jiffy; a reduction ends the epoch, which forces a recomputation.
        if !(self.epoch_start.is_some() && j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = j;
            let epoch_start = *self.epoch_start.get_or_insert_with(|| {
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin = cwnd;
                } else {
                    self.k = cube_root_floor(CUBE_FACTOR * u64::from(self.last_max_cwnd - cwnd));
                    self.origin = self.last_max_cwnd;
                }
                j
            });
            let t = ((j - epoch_start + self.delay_min.map_or(0, jiffies_of)) << BICTCP_HZ) / HZ;
            let offs = u128::from(t.abs_diff(self.k));
            // c/rtt · (t − K)³ in segments; u128 where the kernel's u64 would wrap (epochs > ~340 s).
            let delta = (CUBE_RTT_SCALE * offs * offs * offs) >> (10 + 3 * BICTCP_HZ);
            let delta = u32::try_from(delta).unwrap_or(u32::MAX);
            let target = if t < self.k { self.origin.saturating_sub(delta) } else { self.origin.saturating_add(delta) };
            self.cnt = if target > cwnd { cwnd / (target - cwnd) } else { 100 * cwnd };
            // "The initial growth of cubic function may be too conservative": 5 % per RTT at most.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // TCP friendliness: the window Reno would have reached since the epoch began.
        let per_segment = ((cwnd * BETA_SCALE) >> 3).max(1);
        while self.ack_cnt > per_segment {
            self.ack_cnt -= per_segment;
            self.tcp_cwnd += 1;
        }
        if self.tcp_cwnd > cwnd {
            self.cnt = self.cnt.min(cwnd / (self.tcp_cwnd - cwnd));
        }
        self.cnt = self.cnt.max(2); // at most one segment per two delivered: 1.5× per RTT
    }

    /// `cubictcp_recalc_ssthresh` at a reduction from `cwnd` segments (fast retransmit, timeout,
    /// ECN): the epoch ends, W_max with fast convergence, ssthresh = max(cwnd·717/1024, 2).
    /// `tcp_init_cwnd_reduction` and `tcp_enter_loss` also clear `snd_cwnd_cnt`.
    pub(super) fn reduce(&mut self, cwnd: f64) -> f64 {
        let seg = u64::from(cwnd.max(0.0) as u32);
        self.epoch_start = None;
        self.last_max_cwnd = if seg < u64::from(self.last_max_cwnd) {
            (seg * (BETA_SCALE_DEN + BETA) / (2 * BETA_SCALE_DEN)) as u32
        } else {
            seg as u32
        };
        self.cwnd_cnt = 0;
        ((seg * BETA / BETA_SCALE_DEN).max(2)) as f64
    }

    /// `cubictcp_state(TCP_CA_Loss)` at `now` with `snd_nxt` sent (after `reduce`): `bictcp_reset`
    /// zeroes everything, HyStart's `found` included, and `bictcp_hystart_reset` starts a round.
    pub(super) fn on_timeout(&mut self, now: Time, snd_nxt: u32) {
        *self = CubicLinux::new(self.hystart_on);
        self.start_round(now, snd_nxt);
    }

    /// `cubictcp_acked`: an RTT sample, not used in the first second (HZ) of an epoch; in slow
    /// start it feeds HyStart. Returns the new ssthresh when HyStart ends slow start.
    pub(super) fn observe_rtt(&mut self, rtt: Dur, now: Time, view: SlowStartView) -> Option<f64> {
        if self.epoch_start.is_some_and(|e| jiffies(now).saturating_sub(e) < HZ) {
            return None;
        }
        let rtt = rtt.max(Dur(1_000)); // "if (delay == 0) delay = 1" (µs)
        if self.delay_min.is_none_or(|d| rtt < d) {
            self.delay_min = Some(rtt);
        }
        let in_slow_start = view.cwnd < view.ssthresh;
        if self.hystart_on && !self.hystart.found && in_slow_start && view.cwnd >= HYSTART_LOW_WINDOW {
            return self.hystart_update(rtt, now, view);
        }
        None
    }

    /// `bictcp_hystart_reset`: a new round ends when `snd_nxt` is acknowledged.
    fn start_round(&mut self, now: Time, snd_nxt: u32) {
        let found = self.hystart.found;
        self.hystart = HyStart { found, round_start: Some(now), last_ack: now, end_seq: snd_nxt, curr_rtt: None, sample_cnt: 0 };
    }

    /// `hystart_update` with both detections (`hystart_detect` 3).
    fn hystart_update(&mut self, delay: Dur, now: Time, view: SlowStartView) -> Option<f64> {
        if self.hystart.round_start.is_none() || view.snd_una > self.hystart.end_seq {
            self.start_round(now, view.snd_nxt);
        }
        let delay_min = self.delay_min.unwrap_or(delay);
        let h = &mut self.hystart;
        let round_start = h.round_start.unwrap_or(now);
        // ACK train: ACKs no more than 2 ms apart for longer than half of (min RTT + ack delay);
        // halved because the kernel does not pace a CUBIC flow (no `fq`).
        if now.saturating_since(h.last_ack) <= HYSTART_ACK_DELTA {
            h.last_ack = now;
            let threshold = Dur((delay_min.0 + hystart_ack_delay(view).0) / 2);
            if now.saturating_since(round_start) > threshold {
                h.found = true;
            }
        }
        // Delay increase: the round's smallest RTT once it has 8 samples.
        h.curr_rtt = Some(h.curr_rtt.map_or(delay, |c| c.min(delay)));
        if !h.found {
            if h.sample_cnt < HYSTART_MIN_SAMPLES {
                h.sample_cnt += 1;
            } else {
                let thresh = Dur(delay_min.0 / 8).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if h.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                    h.found = true;
                }
            }
        }
        h.found.then_some(view.cwnd.max(0.0).floor())
    }
}

/// `hystart_ack_delay`: how long the kernel may hold a GSO burst at its pacing rate, at most 1 ms;
/// the rate is 200 % of cwnd·mss/SRTT in slow start (`tcp_pacing_ss_ratio`), 0 without an SRTT.
fn hystart_ack_delay(view: SlowStartView) -> Dur {
    let Some(srtt) = view.srtt.filter(|s| s.0 > 0) else { return Dur::ZERO };
    let rate = 2.0 * view.cwnd * f64::from(view.mss) / srtt.as_secs_f64(); // bytes per second
    let hold = Dur((GSO_MAX_SIZE * 4.0 / rate * 1e9) as u64);
    hold.min(Dur::from_millis(1))
}


#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// An ACK in congestion avoidance (HyStart does not look).
    fn avoiding() -> SlowStartView {
        SlowStartView { snd_una: 0, snd_nxt: 0, cwnd: 10.0, ssthresh: 5.0, mss: 1448, srtt: None }
    }

    #[test]
    fn constants_are_the_kernels() {
        assert_eq!(BETA_SCALE, 15);
        assert_eq!(CUBE_FACTOR, 2_681_735_677, "2^40 / 410");
        // K for W_max − cwnd = 30: cbrt(30 / 0.40039) s = 4.2155 s = 4316.7/1024 s, floored.
        assert_eq!(cube_root_floor(CUBE_FACTOR * 30), 4316);
        assert_eq!(cube_root_floor(27), 3);
        assert_eq!(cube_root_floor(26), 2);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_the_rest_goes_to_congestion_avoidance() {
        let mut c = CubicLinux::default();
        let mut cwnd = 10.0;
        c.grow(&mut cwnd, 11.0, 2, Time(0)); // one delayed ACK of two segments, one slot left
        assert_eq!(cwnd, 11.0);
        assert_eq!(c.cwnd_cnt, 1, "the second segment counts towards congestion avoidance");
    }

    #[test]
    fn a_reduction_uses_717_over_1024_and_fast_convergence() {
        let mut c = CubicLinux { cwnd_cnt: 5, ..CubicLinux::default() };
        assert_eq!(c.reduce(100.9), 70.0, "100 · 717 / 1024 = 70.02");
        assert_eq!((c.last_max_cwnd, c.cwnd_cnt), (100, 0));
        assert_eq!(c.reduce(80.0), 56.0);
        assert_eq!(c.last_max_cwnd, 68, "80 · 1741 / 2048 = 68.0");
        assert_eq!(c.reduce(2.0), 2.0, "never below 2");
    }

    #[test]
    fn reno_friendly_growth_stays_at_alpha_053_past_the_previous_maximum() {
        // W_max 20, cut to 14: the cubic target stays near 20 for seconds (K = 2.47 s), so between
        // losses the Reno-friendly window leads. One ACK per segment, 40 ms RTT, 100 s: RFC 9438
        // would switch to α = 1 at cwnd_prior; the kernel keeps one segment per 15/8 of a window.
        let mut c = CubicLinux::default();
        let mut cwnd = c.reduce(20.0);
        assert_eq!(cwnd, 14.0);
        let ssthresh = cwnd;
        let mut now = 0u64;
        let mut rounds = 0;
        while cwnd < 20.0 {
            let w = cwnd as u32;
            for i in 0..w {
                c.grow(&mut cwnd, ssthresh, 1, Time(now + u64::from(i) * 40 * MS / u64::from(w)));
            }
            now += 40 * MS;
            rounds += 1;
        }
        // Reno-friendly: +1 per 15/8 windows, from 14 to 20 is 6 increments ≈ 11.25 rounds; the
        // cubic term (concave, still below 20 at 0.47 s) adds little.
        assert!((9..=12).contains(&rounds), "{rounds} rounds from 14 to 20");
        let before = cwnd;
        for _ in 0..15 {
            let w = cwnd as u32;
            for i in 0..w {
                c.grow(&mut cwnd, ssthresh, 1, Time(now + u64::from(i) * 40 * MS / u64::from(w)));
            }
            now += 40 * MS;
        }
        // Past W_max the cubic term is still tiny (t − K < 0); growth stays near 8/15 per round,
        // not the one per round RFC 9438's α = 1 would give.
        assert!((6.0..=10.0).contains(&(cwnd - before)), "grew {} in 15 rounds", cwnd - before);
    }

    #[test]
    fn cnt_is_not_recomputed_while_cwnd_is_unchanged_within_hz_over_32() {
        let mut c = CubicLinux { last_max_cwnd: 100, ..CubicLinux::default() };
        c.update(50, 1, Time(0));
        let cnt = c.cnt;
        c.last_max_cwnd = 0; // would clamp cnt to 20 if recomputed
        c.update(50, 1, Time(31 * MS));
        assert_eq!(c.cnt, cnt, "31 jiffies: skipped");
        c.update(50, 1, Time(32 * MS));
        assert_ne!(c.cnt, cnt, "32 jiffies: recomputed");
    }

    #[test]
    fn a_timeout_forgets_w_max_and_the_minimum_rtt() {
        let mut c = CubicLinux::default();
        c.observe_rtt(Dur::from_millis(50), Time(0), avoiding());
        c.reduce(100.0);
        c.on_timeout(Time(5 * MS), 77);
        assert_eq!((c.last_max_cwnd, c.delay_min, c.epoch_start), (0, None, None));
        assert_eq!((c.hystart.round_start, c.hystart.end_seq, c.hystart.found), (Some(Time(5 * MS)), 77, false));
        c.update(30, 1, Time(0));
        assert_eq!(c.cnt, 20, "no W_max: 5 % per RTT at most");
    }

    #[test]
    fn rtt_samples_in_an_epochs_first_second_are_ignored() {
        let mut c = CubicLinux::default();
        c.observe_rtt(Dur::from_millis(50), Time(0), avoiding());
        c.update(10, 1, Time(100 * MS)); // epoch starts at jiffy 100
        c.observe_rtt(Dur::from_millis(20), Time(1099 * MS), avoiding());
        assert_eq!(c.delay_min, Some(Dur::from_millis(50)), "999 ms into the epoch: ignored");
        c.observe_rtt(Dur::from_millis(20), Time(1100 * MS), avoiding());
        assert_eq!(c.delay_min, Some(Dur::from_millis(20)));
    }

    #[test]
    fn several_increments_fit_one_ack_when_cnt_is_small() {
        // The Reno-friendly window far ahead of cwnd sets cnt = max(10 / 90, 2) = 2; in the
        // epoch's own jiffy only that part of `bictcp_update` runs.
        let mut c = CubicLinux { epoch_start: Some(0), last_time: 0, last_cwnd: 9, tcp_cwnd: 100, ..CubicLinux::default() };
        let mut cwnd = 10.0;
        c.grow(&mut cwnd, 5.0, 7, Time(0));
        assert_eq!(c.cnt, 2);
        assert_eq!(cwnd, 13.0, "7 delivered at cnt 2: +3, one left over");
        assert_eq!(c.cwnd_cnt, 1);
        // Credit already at cnt is applied first, before the new ACK's segments count.
        let mut c = CubicLinux { cnt: 5, cwnd_cnt: 5, last_cwnd: 13, last_time: 0, epoch_start: Some(0), ..CubicLinux::default() };
        let mut cwnd = 13.0;
        c.grow(&mut cwnd, 5.0, 1, Time(0));
        assert_eq!((cwnd, c.cwnd_cnt), (14.0, 1));
    }

    /// Slow start in rounds of `cwnd` segments, one ACK per segment spread evenly over `rtt`.
    fn slow_start_view(cwnd: f64, una: u32, nxt: u32) -> SlowStartView {
        SlowStartView { snd_una: una, snd_nxt: nxt, cwnd, ssthresh: f64::MAX, mss: 1448, srtt: Some(Dur::from_millis(40)) }
    }

    #[test]
    fn hystart_ends_slow_start_when_a_rounds_rtt_rises_past_the_threshold() {
        // Min RTT 40 ms: threshold clamp(5 ms, 4, 16) = 5 ms. ACKs 5 ms apart (no train).
        let mut c = CubicLinux::new(true);
        assert_eq!(c.observe_rtt(Dur::from_millis(40), Time(0), slow_start_view(16.0, 1, 16)), None);
        // A round of RTTs 44 ms (≤ 45): nothing, however many samples.
        for i in 1..=20u32 {
            let v = slow_start_view(16.0, 1 + i, 16);
            assert_eq!(c.observe_rtt(Dur::from_millis(44), Time(u64::from(i) * 5 * MS), v), None, "sample {i}");
        }
        // The next round (snd_una passes 16) sees 46 ms: the 9th sample decides.
        let mut exit = None;
        for i in 0..9u32 {
            let v = slow_start_view(40.0, 17 + i, 60);
            exit = c.observe_rtt(Dur::from_millis(46), Time((200 + u64::from(i) * 5) * MS), v);
            if i < 8 {
                assert_eq!(exit, None, "sample {i} of the round");
            }
        }
        assert_eq!(exit, Some(40.0), "ssthresh = cwnd");
        assert!(c.hystart.found);
    }

    #[test]
    fn hystart_ack_train_ends_slow_start_after_half_the_min_rtt() {
        // ACKs 1 ms apart from the round's start: at min RTT 40 ms (+1 ms ack delay, halved) the
        // train ends slow start once more than 20.5 ms have passed; RTTs stay at the minimum.
        let mut c = CubicLinux::new(true);
        c.observe_rtt(Dur::from_millis(40), Time(0), slow_start_view(20.0, 1, 20));
        let mut ended_at = None;
        for ms in 1..40u64 {
            if c.observe_rtt(Dur::from_millis(40), Time(ms * MS), slow_start_view(20.0, 1, 20)).is_some() {
                ended_at = Some(ms);
                break;
            }
        }
        assert_eq!(ended_at, Some(21));
    }

    #[test]
    fn hystart_waits_for_16_segments_and_can_be_switched_off() {
        let rising = |c: &mut CubicLinux, cwnd: f64| {
            c.observe_rtt(Dur::from_millis(40), Time(0), slow_start_view(10.0, 1, 20)); // the minimum only
            (1..=30u64).filter_map(|i| c.observe_rtt(Dur::from_millis(60), Time(i * 5 * MS), slow_start_view(cwnd, 1, 20))).next()
        };
        assert_eq!(rising(&mut CubicLinux::new(true), 15.0), None, "below hystart_low_window");
        assert_eq!(rising(&mut CubicLinux::new(false), 30.0), None, "hystart = false");
        assert_eq!(rising(&mut CubicLinux::new(true), 30.0), Some(30.0));
    }
}
