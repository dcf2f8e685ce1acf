//! The TFRC receiver (RFC 5348 §6): measures the receive rate, keeps the loss history and
//! reports once per RTT, or at once on a new loss event.
//!
//! * **Feedback timer** (§6.2): armed for `R` (the RTT the data carries) after each report; when
//!   it fires, a report is sent if data arrived since the last one, else the timer stops until
//!   the next data packet (which then reports at once).
//! * **Immediate feedback** (§6.1): on the first data packet and whenever a new loss event
//!   starts (`p` increases).
//! * `X_recv` = bytes received since the last report / the time since it (§6.2); the first
//!   report gives the bytes of the first packet per second (the sender's start rate).
//! * The synthetic first loss interval (§6.3.1) uses the receive rate `X_target` = the larger
//!   of the rate since the last report and the last reported `X_recv` (the RFC's "receive rate
//!   for the most recent round-trip time"; a report covers about one RTT).
//! * History discounting (§5.5) is off unless [`TfrcReceiver::with_history_discounting`] turns
//!   it on (the flow key `history_discounting`; see [`LossHistory`]).
//! * Sequence numbers never wrap in a run (2³² packets); a packet older than the highest received
//!   (impossible without reordering) is counted as delivered but changes nothing else.

use super::equation;
use super::loss_history::LossHistory;
use super::FEEDBACK_BYTES;
use crate::engine::{Dur, Time};
use crate::packet::{FlowId, Packet, PacketKind, SackBlock};

/// Receiver counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TfrcReceiverStats {
    /// Data packets received.
    pub packets: u64,
    /// Feedback reports sent.
    pub feedbacks: u64,
    /// Packets found missing.
    pub lost: u64,
}

/// The receiving end of a TFRC flow.
pub struct TfrcReceiver {
    flow: FlowId,
    /// Highest sequence number received and its send timestamp.
    last: Option<(u32, Time)>,
    /// When that packet arrived.
    last_arrival: Time,
    /// The sender's RTT estimate from the newest data packet.
    r: Dur,
    bytes_since_feedback: u64,
    last_feedback_at: Option<Time>,
    last_x_recv: f64,
    feedback_at: Option<Time>,
    history: LossHistory,
    stats: TfrcReceiverStats,
}

impl TfrcReceiver {
    /// A receiver for `flow`.
    pub fn new(flow: FlowId) -> TfrcReceiver {
        TfrcReceiver {
            flow,
            last: None,
            last_arrival: Time::ZERO,
            r: Dur::ZERO,
            bytes_since_feedback: 0,
            last_feedback_at: None,
            last_x_recv: 0.0,
            feedback_at: None,
            history: LossHistory::default(),
            stats: TfrcReceiverStats::default(),
        }
    }

    /// A data packet arrived at `now`; a report (if due at once) goes to `out`.
    pub fn on_data(&mut self, now: Time, pkt: &Packet, out: &mut Vec<Packet>) {
        debug_assert_eq!(pkt.kind, PacketKind::TfrcData);
        self.stats.packets += 1;
        self.bytes_since_feedback += u64::from(pkt.size);
        if pkt.ack > 0 {
            self.r = Dur::from_micros(u64::from(pkt.ack));
        }
        let mut new_event = false;
        match self.last {
            None => {}
            Some((seq, _)) if pkt.seq <= seq => return, // duplicate or reordered: nothing else changes
            Some((seq, ts)) if pkt.seq > seq + 1 => {
                self.stats.lost += u64::from(pkt.seq - seq - 1);
                let (s, r) = (f64::from(pkt.size), self.r.as_secs_f64().max(1e-6));
                let x_target = self.rate_since_feedback(now).max(self.last_x_recv);
                new_event = self.history.on_gap((seq, ts), (pkt.seq, pkt.sent_at), seq + 1, self.r, || {
                    1.0 / equation::invert(s, r, x_target)
                });
            }
            Some(_) => {}
        }
        let first = self.last.is_none();
        self.last = Some((pkt.seq, pkt.sent_at));
        self.last_arrival = now;
        if first || new_event {
            self.send_feedback(now, new_event, out);
        } else if self.feedback_at.is_none() {
            // The timer had stopped for want of data: report now (§6.2).
            self.send_feedback(now, false, out);
        }
    }

    /// The feedback timer fired at `now`.
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Packet>) {
        match self.feedback_at {
            Some(at) if at <= now => {}
            _ => return,
        }
        if self.bytes_since_feedback > 0 {
            self.send_feedback(now, false, out);
        } else {
            self.feedback_at = None;
        }
    }

    /// When the feedback timer fires next.
    pub fn next_wakeup(&self) -> Option<Time> {
        self.feedback_at
    }

    /// The same receiver with RFC 5348 §5.5 history discounting on or off (default off: the RFC
    /// makes it optional; ns-2's `Agent/TFRCSink` runs with `discount_ 1`).
    pub fn with_history_discounting(mut self, on: bool) -> TfrcReceiver {
        debug_assert_eq!(self.history.events(), 0, "set before any data");
        self.history = LossHistory::with_discounting(on);
        self
    }

    /// The loss event rate `p` now.
    pub fn loss_event_rate(&self) -> f64 {
        self.last.map_or(0.0, |(seq, _)| self.history.loss_event_rate(seq))
    }

    /// Counters.
    pub fn stats(&self) -> &TfrcReceiverStats {
        &self.stats
    }

    /// The loss history.
    pub fn history(&self) -> &LossHistory {
        &self.history
    }

    fn rate_since_feedback(&self, now: Time) -> f64 {
        match self.last_feedback_at {
            Some(at) if now > at => self.bytes_since_feedback as f64 / now.saturating_since(at).as_secs_f64(),
            _ => self.bytes_since_feedback as f64,
        }
    }

    fn send_feedback(&mut self, now: Time, new_event: bool, out: &mut Vec<Packet>) {
        let x_recv = self.rate_since_feedback(now);
        let (_, ts) = self.last.expect("feedback follows data");
        let p = self.loss_event_rate();
        let t_delay = now.saturating_since(self.last_arrival);
        let mut fb = Packet::new(PacketKind::TfrcFeedback, self.flow);
        fb.size = FEEDBACK_BYTES;
        fb.sent_at = ts;
        fb.seq = x_recv.round().min(f64::from(u32::MAX)) as u32;
        fb.ack = (p as f32).to_bits();
        fb.sack[0] = SackBlock { start: (t_delay.0 / 1000).min(u64::from(u32::MAX)) as u32, end: u32::from(new_event) };
        out.push(fb);
        self.stats.feedbacks += 1;
        self.last_x_recv = x_recv;
        self.bytes_since_feedback = 0;
        self.last_feedback_at = Some(now);
        self.feedback_at = if self.r > Dur::ZERO { Some(now + self.r) } else { None };
    }
}

/// The fields of a feedback packet: `(t_recvdata, t_delay, X_recv B/s, p, new loss event)`.
pub fn unpack_feedback(pkt: &Packet) -> (Time, Dur, f64, f64, bool) {
    (pkt.sent_at, Dur::from_micros(u64::from(pkt.sack[0].start)), f64::from(pkt.seq), f64::from(f32::from_bits(pkt.ack)), pkt.sack[0].end != 0)
}
