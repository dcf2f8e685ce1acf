//! The TFRC sender (RFC 5348 §4): sends packets of `s` bytes every `s/X` seconds and updates
//! the allowed rate `X` (bytes/s) from the receiver's reports.
//!
//! * **Start** (§4.2): `X = s` per second (one packet per second), nofeedback timer 2 s.
//! * **On feedback** (§4.3): `R_sample = now − t_recvdata − t_delay`; `R = R_sample` the first
//!   time, then `R ← 0.9·R + 0.1·R_sample`; `RTO = max(4R, 2s/X)`. The first report sets
//!   `X = W_init/R` (`W_init = min(4s, max(2s, 4380))`), `t_ld = now`. Then step 4's
//!   `recv_limit`: if every packet since the previous report went out below `X` for want of data
//!   (a data-limited interval), `X_recv_set` is kept as its maximum (`Maximize_X_recv_set`), and on
//!   a report of a new loss event or a higher `p` it is first halved and `0.85·X_recv` added, `recv_limit =
//!   max(set)`; otherwise `X_recv` is added and `recv_limit = 2·max(set)`. Otherwise
//!   (`Update_X_recv_set`) `X_recv` is added, reports older than two round trips are removed and
//!   `recv_limit = 2·max(set)`. `p > 0`: `X = max(min(X_Bps, recv_limit), s/t_mbi)` with
//!   `X_Bps` the equation; `p = 0` (slow start) and `now − t_ld ≥ R`:
//!   `X = max(min(2X, recv_limit), W_init/R)`, `t_ld = now`. The nofeedback timer restarts at RTO.
//! * **Nofeedback timer** (§4.4, simplified): before any report `X = max(X/2, s/t_mbi)`; after,
//!   the limit becomes half the rate the sender would use (`X_Bps` if `p > 0`, else `X`), or
//!   `X_recv` if that is lower and `p > 0` and `X_Bps > 2·X_recv` (the RFC's `Update_Limits`):
//!   `X = max(limit, s/t_mbi)`, `X_recv_set = {limit/2}`; the timer restarts at
//!   `max(4R, 2s/X)`. So `X` halves per expiry while reports are missing.
//! * An application-limited sender (`with_app_rate`, the scenario's `app_rate`) sends at
//!   `min(X, app rate)`: RFC 5348 §4.3's data-limited case, where `X_recv` reports what got through
//!   and `recv_limit` then keeps `X` within twice that. Otherwise the sender always has data: a
//!   "TCP-friendly CBR" source is a CBR application over an app-limited TFRC sender.
//!   Oscillation prevention (§4.5) is not implemented.
//! * Rate changes take effect from the next packet: its time is `last send + s/X`, or now if
//!   that has passed.

use super::equation;
use super::receiver::unpack_feedback;
use super::{HEADER_BYTES, T_MBI_S};
use crate::engine::{Dur, Time};
use crate::packet::{FlowId, Packet, PacketKind};

/// Sender counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TfrcSenderStats {
    /// Data packets sent.
    pub packets: u64,
    /// Reports received.
    pub feedbacks: u64,
    /// Nofeedback timer expiries.
    pub nofeedback_expiries: u64,
}

/// The sending end of a TFRC flow.
pub struct TfrcSender {
    flow: FlowId,
    /// `s`, bytes on the wire per packet.
    s: f64,
    /// `X`, allowed rate, bytes/s.
    x: f64,
    /// The application's rate, bytes/s on the wire (infinite: always data to send).
    app_rate: f64,
    /// `R`, seconds (None before the first report).
    r: Option<f64>,
    /// `p` from the last report.
    p: f64,
    /// `X_recv_set`: (time reported, receive rate in bytes/s). Two round trips of reports at
    /// most, or one entry once maximized.
    x_recv_set: Vec<(Time, f64)>,
    /// Whether every packet since the last report left below `X` because the application had no
    /// more (§4.3 step 4's data-limited interval).
    data_limited: bool,
    /// `t_ld`: time of the last doubling in slow start.
    tld: Time,
    next_seq: u32,
    last_sent_at: Option<Time>,
    next_send_at: Option<Time>,
    nofeedback_at: Option<Time>,
    stats: TfrcSenderStats,
}

impl TfrcSender {
    /// A sender of `s`-byte packets for `flow` (not started).
    pub fn new(flow: FlowId, s: u32) -> TfrcSender {
        TfrcSender {
            flow,
            s: f64::from(s),
            x: f64::from(s),
            app_rate: f64::INFINITY,
            r: None,
            p: 0.0,
            x_recv_set: Vec::new(),
            data_limited: true,
            tld: Time::ZERO,
            next_seq: 0,
            last_sent_at: None,
            next_send_at: None,
            nofeedback_at: None,
            stats: TfrcSenderStats::default(),
        }
    }

    /// The same sender with an application that writes `bytes_per_s` of packets (wire bytes).
    pub fn with_app_rate(mut self, bytes_per_s: f64) -> TfrcSender {
        debug_assert!(bytes_per_s > 0.0);
        self.app_rate = bytes_per_s;
        self
    }

    /// The rate packets leave at: TFRC's `X`, or less when the application writes less.
    fn send_rate(&self) -> f64 {
        self.x.min(self.app_rate)
    }

    /// `max(X_recv_set)`; infinite while the set is empty (before the first report).
    fn x_recv_max(&self) -> f64 {
        self.x_recv_set.iter().map(|&(_, x)| x).reduce(f64::max).unwrap_or(f64::INFINITY)
    }

    /// `X_recv_set = {x}` reported at `now` (`Maximize_X_recv_set`, and the first report), reusing
    /// the set's allocation.
    fn reset_x_recv_set(&mut self, now: Time, x: f64) {
        self.x_recv_set.clear();
        self.x_recv_set.push((now, x));
    }

    fn w_init(&self) -> f64 {
        (4.0 * self.s).min((2.0 * self.s).max(4380.0))
    }

    fn min_rate(&self) -> f64 {
        self.s / T_MBI_S
    }

    fn rto_s(&self) -> f64 {
        match self.r {
            Some(r) => (4.0 * r).max(2.0 * self.s / self.x),
            None => 2.0,
        }
    }

    /// Starts at `now`: the first packet goes out at once.
    pub fn start(&mut self, now: Time, out: &mut Vec<Packet>) {
        self.nofeedback_at = Some(now + Dur::from_secs_f64(2.0));
        self.send(now, out);
    }

    fn send(&mut self, now: Time, out: &mut Vec<Packet>) {
        let mut p = Packet::new(PacketKind::TfrcData, self.flow);
        p.seq = self.next_seq;
        p.size = self.s as u32;
        p.payload = (self.s as u32).saturating_sub(HEADER_BYTES).min(u32::from(u16::MAX)) as u16;
        p.sent_at = now;
        // Rounded up, so that the receiver, reporting every R, never reports faster than the
        // sender's "once per R" tests expect (§4.3 step 4 compares t_now − t_ld with R).
        p.ack = self.r.map_or(0, |r| (r * 1e6).ceil().clamp(1.0, f64::from(u32::MAX)) as u32);
        out.push(p);
        self.next_seq += 1;
        self.stats.packets += 1;
        self.last_sent_at = Some(now);
        if self.app_rate >= self.x {
            self.data_limited = false; // this packet went out at X: TFRC, not the application, set its time
        }
        self.next_send_at = Some(now + Dur::from_secs_f64(self.s / self.send_rate()));
    }

    fn reschedule(&mut self, now: Time) {
        if let Some(last) = self.last_sent_at {
            self.next_send_at = Some((last + Dur::from_secs_f64(self.s / self.send_rate())).max(now));
        }
    }

    /// A report arrived at `now`.
    pub fn on_feedback(&mut self, now: Time, pkt: &Packet) {
        debug_assert_eq!(pkt.kind, PacketKind::TfrcFeedback);
        self.stats.feedbacks += 1;
        let (t_recvdata, t_delay, x_recv, p, new_event) = unpack_feedback(pkt);
        let sample = now.saturating_since(t_recvdata).as_secs_f64() - t_delay.as_secs_f64();
        let sample = sample.max(1e-6);
        let first = self.r.is_none();
        let r = match self.r {
            None => sample,
            Some(r) => 0.9 * r + 0.1 * sample,
        };
        self.r = Some(r);
        let p_increased = p > self.p;
        self.p = p;
        let data_limited = std::mem::replace(&mut self.data_limited, true);
        if first {
            self.reset_x_recv_set(now, x_recv);
            self.x = self.w_init() / r;
            self.tld = now;
        } else {
            let recv_limit = if data_limited && (new_event || p_increased) {
                let halved = self.x_recv_max() / 2.0;
                self.reset_x_recv_set(now, halved.max(0.85 * x_recv));
                self.x_recv_max()
            } else if data_limited {
                self.reset_x_recv_set(now, self.x_recv_max().max(x_recv));
                2.0 * self.x_recv_max()
            } else {
                let horizon = Dur::from_secs_f64(2.0 * r);
                self.x_recv_set.retain(|&(t, _)| now.saturating_since(t) <= horizon);
                self.x_recv_set.push((now, x_recv));
                2.0 * self.x_recv_max()
            };
            if p > 0.0 {
                let x_bps = equation::rate(self.s, r, p);
                self.x = x_bps.min(recv_limit).max(self.min_rate());
            } else if now.saturating_since(self.tld) >= Dur::from_micros((r * 1e6).ceil() as u64) {
                // R compared in whole µs as the data carry it: the receiver reports exactly that
                // far apart, and f64 noise in R's EWMA would otherwise skip every other doubling.
                self.x = (2.0 * self.x).min(recv_limit).max(self.w_init() / r);
                self.tld = now;
            }
        }
        self.nofeedback_at = Some(now + Dur::from_secs_f64(self.rto_s()));
        self.reschedule(now);
    }

    /// Runs the timers due at `now` (sending and nofeedback); packets go to `out`.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        if self.nofeedback_at.is_some_and(|t| t <= now) {
            self.on_nofeedback(now);
        }
        if self.next_send_at.is_some_and(|t| t <= now) {
            self.send(now, out);
        }
    }

    fn on_nofeedback(&mut self, now: Time) {
        self.stats.nofeedback_expiries += 1;
        match self.r {
            None => self.x = (self.x / 2.0).max(self.min_rate()),
            Some(r) => {
                let x_target = if self.p > 0.0 { equation::rate(self.s, r, self.p) } else { self.x };
                let mut limit = x_target.min(self.x) / 2.0;
                if self.p > 0.0 && x_target > 2.0 * self.x_recv_max() {
                    limit = limit.min(self.x_recv_max());
                }
                let limit = limit.max(self.min_rate());
                self.reset_x_recv_set(now, limit / 2.0);
                self.x = limit;
            }
        }
        self.nofeedback_at = Some(now + Dur::from_secs_f64(self.rto_s()));
        self.reschedule(now);
    }

    /// The next time `on_timer` has something to do.
    pub fn next_wakeup(&self) -> Option<Time> {
        match (self.next_send_at, self.nofeedback_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// `X`, bytes/s.
    pub fn rate(&self) -> f64 {
        self.x
    }
    /// `R`, seconds.
    pub fn rtt(&self) -> Option<f64> {
        self.r
    }
    /// The last reported `p`.
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }
    /// Counters.
    pub fn stats(&self) -> &TfrcSenderStats {
        &self.stats
    }
}
