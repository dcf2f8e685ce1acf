//! RACK-TLP loss detection (RFC 8985) for SACK senders, `rack_tlp = true`.
//!
//! RACK (§6) deems a segment lost once a segment *sent after it* has been delivered and a
//! reordering window has passed, so it also catches lost retransmissions, which RFC 6675's
//! DupThresh test cannot (their sequence numbers are below what was SACKed long ago). TLP (§7)
//! sends one probe when the ACK clock stops in the open state, so a loss at the tail of a flight
//! gets the SACK it needs instead of waiting for the retransmission timeout.
//!
//! Sequence numbers count segments: a segment `seq` has RFC 8985's `Segment.end_seq = seq + 1`.
//! Per outstanding segment this keeps the last transmit time and the flags the RFC's pseudocode
//! and the pipe need (Linux's `TCPCB_LOST` / `TCPCB_SACKED_RETRANS`); what is SACKed stays in the
//! RFC 6675 scoreboard. All of it lives behind one `Box` in the sender, allocated only with
//! `rack_tlp` on.
//!
//! Deviations, for lack of the inputs: the receiver sends no DSACK, so the reordering window is
//! never widened by DSACK rounds (§6.2 step 4 keeps `RACK.reo_wnd_mult = 1`) and a TLP
//! retransmission is known redundant only by a duplicate ACK without SACK blocks (§7.4.2; Linux's
//! `tcp_process_tlp_ack` reads it the same way).

use std::collections::VecDeque;

use super::scoreboard::Scoreboard;
use crate::engine::{Dur, Time};

/// TLP.max_ack_delay: RFC 8985 §7.2 recommends 200 ms when the peer's is unknown (Linux's
/// `tcp_delack_max`).
pub const TLP_MAX_ACK_DELAY: Dur = Dur::from_millis(200);

/// The PTO before any RTT sample (RFC 8985 §7.2: 1 s).
const PTO_WITHOUT_SRTT: Dur = Dur::from_millis(1000);

/// What RACK remembers of one outstanding segment.
#[derive(Clone, Copy, Debug, Default)]
struct SentSegment {
    /// Segment.xmit_ts: when it was last (re)sent.
    xmit_ts: Time,
    /// Segment.retransmitted: resent at least once.
    retransmitted: bool,
    /// Marked lost (by RACK or a timeout) and not resent since: NextSeg's rule (1) candidate,
    /// not in the pipe.
    lost: bool,
    /// Its latest transmission is a retransmission still presumed in flight (counts in the pipe).
    retrans_in_flight: bool,
    /// Already counted as delivered (SACKed) by RACK_update.
    delivered: bool,
}

/// RACK and TLP state of one connection (RFC 8985 §5.2 and §7).
#[derive(Clone, Debug, Default)]
pub struct RackTlp {
    /// Sequence number of `sent[0]`.
    base: u32,
    sent: VecDeque<SentSegment>,
    /// RACK.xmit_ts and RACK.end_seq: the most recently sent segment known delivered.
    xmit_ts: Time,
    end_seq: u32,
    /// RACK.rtt: the RTT of that segment's delivery.
    rtt: Dur,
    /// RACK.fack: the highest end_seq delivered.
    fack: u32,
    /// RACK.reordering_seen.
    reordering_seen: bool,
    /// The RACK reordering timer (`Time::NEVER`: stopped).
    reo_at: Time,
    /// The TLP probe timer, PTO (`Time::NEVER`: stopped).
    pto_at: Time,
    /// TLP.end_seq of the probe in flight, if any: one probe per episode.
    tlp_end_seq: Option<u32>,
    /// TLP.is_retrans.
    tlp_is_retrans: bool,
    /// New data went out since the PTO was last considered (§7.2: a reason to restart it).
    restart_pto: bool,
    /// Segments marked lost while the last ACK was processed (BBR's `rs->losses`).
    pub lost_on_last_ack: u32,
}

/// What a RACK pass on an ACK found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RackOutcome {
    /// Segments newly marked lost.
    pub newly_lost: u32,
}

/// Inputs of the reordering window (RFC 8985 §6.2 step 4) from the sender.
#[derive(Clone, Copy, Debug)]
pub struct ReoWndInputs {
    /// In fast recovery or a timeout's loss recovery.
    pub in_recovery: bool,
    /// RACK.segs_sacked: segments SACKed above the cumulative ACK.
    pub segs_sacked: u32,
    pub dupthresh: u32,
    /// RACK.min_RTT (`None` before any sample).
    pub min_rtt: Option<Dur>,
    pub srtt: Option<Dur>,
}

impl RackTlp {
    /// RFC 8985 §6.2 `RACK_sent_after`: whether (t1, seq1) was sent after (t2, seq2); equal times
    /// (a burst) are ordered by sequence number.
    fn sent_after(t1: Time, seq1: u32, t2: Time, seq2: u32) -> bool {
        t1 > t2 || (t1 == t2 && seq1 > seq2)
    }

    fn get_mut(&mut self, seq: u32) -> Option<&mut SentSegment> {
        let i = seq.checked_sub(self.base)? as usize;
        self.sent.get_mut(i)
    }

    fn get(&self, seq: u32) -> Option<&SentSegment> {
        let i = seq.checked_sub(self.base)? as usize;
        self.sent.get(i)
    }

    /// A transmission of `seq` at `now` (§5.2: Segment.xmit_ts, Segment.retransmitted).
    pub fn on_send(&mut self, seq: u32, now: Time, retransmission: bool) {
        if self.sent.is_empty() {
            self.base = seq;
        }
        while seq >= self.base + self.sent.len() as u32 {
            self.sent.push_back(SentSegment::default());
        }
        if let Some(s) = self.get_mut(seq) {
            s.xmit_ts = now;
            s.lost = false;
            s.delivered = false;
            if retransmission {
                s.retransmitted = true;
                s.retrans_in_flight = true;
            }
        }
        if !retransmission {
            self.restart_pto = true;
        }
    }

    /// RFC 8985 §6.2 steps 1–3 on an ACK that moves the cumulative ACK from `una` to `new_una`
    /// (SACK blocks already in `sb`): RACK.rtt, RACK.xmit_ts/end_seq from the most recently sent
    /// segment newly delivered (a retransmission only if the ACK's echoed timestamp `ts_echo`,
    /// when timestamps are on, is not older than it and its RTT is not below min_RTT: otherwise
    /// the original may have been acknowledged), RACK.fack, and reordering (a never-resent
    /// segment delivered below fack).
    pub fn on_ack(&mut self, now: Time, una: u32, new_una: u32, sb: Option<&Scoreboard>, ts_echo: Option<Time>, min_rtt: Option<Dur>) {
        let end = self.base + self.sent.len() as u32;
        for seq in self.base.max(una)..end {
            let cumulative = seq < new_una;
            let s = self.sent[(seq - self.base) as usize];
            if s.delivered || !(cumulative || sb.is_some_and(|b| b.is_sacked(seq))) {
                continue;
            }
            // Delivered after all (a late original): no longer lost or awaiting a resend.
            let rec = &mut self.sent[(seq - self.base) as usize];
            rec.delivered = true;
            rec.lost = false;
            // Step 3: reordering.
            if seq + 1 > self.fack {
                self.fack = seq + 1;
            } else if !s.retransmitted {
                self.reordering_seen = true;
            }
            // Step 2: the RTT sample and the most recent delivered transmission.
            let rtt = now.saturating_since(s.xmit_ts);
            if s.retransmitted && (ts_echo.is_some_and(|t| t < s.xmit_ts) || min_rtt.is_some_and(|m| rtt < m)) {
                continue; // ambiguous: the ACK may be for the original
            }
            if Self::sent_after(s.xmit_ts, seq + 1, self.xmit_ts, self.end_seq) {
                self.rtt = rtt;
                self.xmit_ts = s.xmit_ts;
                self.end_seq = seq + 1;
            }
        }
        self.forget_below(new_una);
    }

    /// Drops the records the cumulative ACK `una` covers.
    fn forget_below(&mut self, una: u32) {
        while self.base < una && !self.sent.is_empty() {
            self.sent.pop_front();
            self.base += 1;
        }
        if self.sent.is_empty() {
            self.base = self.base.max(una);
        }
    }

    /// RFC 8985 §6.2 step 4, `RACK_update_reo_wnd`, without DSACK (see the module doc): zero
    /// when no reordering was seen and the sender is recovering or DupThresh segments are
    /// SACKed (so RACK is at least as fast as RFC 6675 then), else min(min_RTT / 4, SRTT).
    fn reo_wnd(&self, inputs: ReoWndInputs) -> Dur {
        if !self.reordering_seen && (inputs.in_recovery || inputs.segs_sacked >= inputs.dupthresh) {
            return Dur::ZERO;
        }
        let quarter = inputs.min_rtt.map_or(0, |m| m.0 / 4);
        Dur(inputs.srtt.map_or(quarter, |s| quarter.min(s.0)))
    }

    /// RFC 8985 §6.2 step 5 and `RACK_detect_loss_and_arm_timer`: marks lost every unSACKed
    /// segment sent before RACK.xmit_ts whose RACK.rtt + reo_wnd has passed, and arms the
    /// reordering timer for the latest of the others (stops it if there are none).
    pub fn detect_loss(&mut self, now: Time, sb: Option<&Scoreboard>, inputs: ReoWndInputs) -> RackOutcome {
        let reo_wnd = self.reo_wnd(inputs);
        let mut outcome = RackOutcome::default();
        let mut timeout = 0u64;
        for (i, s) in self.sent.iter_mut().enumerate() {
            let seq = self.base + i as u32;
            // Lost and not resent: RFC 8985's INFINITE_TS, never "sent before" RACK.xmit_ts.
            if s.delivered || s.lost || sb.is_some_and(|b| b.is_sacked(seq)) {
                continue;
            }
            if !Self::sent_after(self.xmit_ts, self.end_seq, s.xmit_ts, seq + 1) {
                continue;
            }
            let deadline = s.xmit_ts.0 + self.rtt.0 + reo_wnd.0;
            if deadline <= now.0 {
                s.lost = true;
                s.retrans_in_flight = false;
                outcome.newly_lost += 1;
            } else {
                timeout = timeout.max(deadline - now.0);
            }
        }
        self.reo_at = if timeout > 0 { Time(now.0 + timeout) } else { Time::NEVER };
        outcome
    }

    /// RFC 8985 §6.3 `RACK_mark_losses_on_RTO`: the head, and every unSACKed segment whose
    /// RACK.rtt + reo_wnd has passed since it was sent, is lost. Also stops RACK's and TLP's
    /// timers and ends a TLP episode (the timeout took over).
    pub fn on_timeout(&mut self, now: Time, una: u32, sb: Option<&Scoreboard>, inputs: ReoWndInputs) -> u32 {
        let reo_wnd = self.reo_wnd(inputs);
        let mut marked = 0;
        for (i, s) in self.sent.iter_mut().enumerate() {
            let seq = self.base + i as u32;
            if seq < una || s.delivered || s.lost || sb.is_some_and(|b| b.is_sacked(seq)) {
                continue;
            }
            if seq == una || s.xmit_ts.0 + self.rtt.0 + reo_wnd.0 <= now.0 {
                s.lost = true;
                s.retrans_in_flight = false;
                marked += 1;
            }
        }
        self.reo_at = Time::NEVER;
        self.pto_at = Time::NEVER;
        self.tlp_end_seq = None;
        marked
    }

    /// A timeout that discards the SACK scoreboard (RFC 2018 §8): nothing counts as delivered.
    pub fn forget_sacks(&mut self) {
        for s in self.sent.iter_mut() {
            s.delivered = false;
        }
    }

    /// The pipe with RACK's marks (Linux's `tcp_packets_in_flight`): each unSACKed segment in
    /// `[una, max)` counts once unless marked lost, and once more while a retransmission of it
    /// is presumed in flight.
    pub fn pipe(&self, sb: Option<&Scoreboard>, una: u32, max: u32) -> u32 {
        (una..max)
            .filter(|&seq| !sb.is_some_and(|b| b.is_sacked(seq)))
            .map(|seq| match self.get(seq) {
                Some(s) => u32::from(!s.lost) + u32::from(s.retrans_in_flight),
                None => 1,
            })
            .sum()
    }

    /// NextSeg rule (1) with RACK's marks: the first unSACKed segment in `[from, max)` marked
    /// lost and not resent since.
    pub fn first_lost(&self, sb: Option<&Scoreboard>, from: u32, max: u32) -> Option<u32> {
        (from.max(self.base)..max).find(|&seq| self.get(seq).is_some_and(|s| s.lost) && !sb.is_some_and(|b| b.is_sacked(seq)))
    }

    /// NextSeg rule (3): the first unSACKed segment in `[from, max)` neither lost nor being resent.
    pub fn first_unsacked_in_flight(&self, sb: Option<&Scoreboard>, from: u32, max: u32) -> Option<u32> {
        (from..max).find(|&seq| {
            !sb.is_some_and(|b| b.is_sacked(seq)) && self.get(seq).is_none_or(|s| !s.lost && !s.retrans_in_flight)
        })
    }

    /// Whether any segment awaits retransmission.
    pub fn has_lost(&self) -> bool {
        self.sent.iter().any(|s| s.lost)
    }

    /// The reordering timer's deadline.
    pub fn reo_at(&self) -> Time {
        self.reo_at
    }

    /// The PTO deadline.
    pub fn pto_at(&self) -> Time {
        self.pto_at
    }

    /// Stops both timers.
    pub fn stop_timers(&mut self) {
        self.reo_at = Time::NEVER;
        self.pto_at = Time::NEVER;
    }

    /// Stops the reordering timer (it fired).
    pub fn stop_reo_timer(&mut self) {
        self.reo_at = Time::NEVER;
    }

    /// RFC 8985 §7.2: (re)arms the PTO after new data was sent (not a probe) or an ACK advanced
    /// `snd_una` (`acked_new`), if the connection is `open` (not recovering, nothing SACKed) with
    /// data outstanding; otherwise stops it. PTO = 2·SRTT, plus TLP.max_ack_delay when one
    /// segment is in flight (its ACK may be delayed); 1 s without SRTT; never after the RTO.
    pub fn schedule_pto(&mut self, now: Time, open: bool, acked_new: bool, flight: u32, srtt: Option<Dur>, rto_at: Time) {
        let restart = std::mem::take(&mut self.restart_pto) || acked_new;
        if !open || flight == 0 {
            self.pto_at = Time::NEVER;
            return;
        }
        if !restart {
            return;
        }
        let pto = match srtt {
            Some(s) => Dur(2 * s.0 + if flight == 1 { TLP_MAX_ACK_DELAY.0 } else { 0 }),
            None => PTO_WITHOUT_SRTT,
        };
        self.pto_at = Time(now.0 + pto.0).min(rto_at);
    }

    /// The PTO fired. Returns whether a probe may be sent now: not while an earlier probe's
    /// episode is unresolved (§7.3, one probe per episode).
    pub fn take_probe_turn(&mut self) -> bool {
        self.pto_at = Time::NEVER;
        self.tlp_end_seq.is_none()
    }

    /// A probe went out; `end_seq` = SND.NXT after it (§7.3).
    pub fn on_probe_sent(&mut self, end_seq: u32, is_retrans: bool) {
        self.tlp_end_seq = Some(end_seq);
        self.tlp_is_retrans = is_retrans;
        self.restart_pto = false; // a probe is not new data that restarts the PTO (§7.2)
    }

    /// RFC 8985 §7.4.2 `TLP_process_ack` (without DSACK): returns true when the ACK shows the
    /// probe repaired a loss, which the congestion control must answer as a loss.
    pub fn tlp_process_ack(&mut self, ack: u32, pure_dupack: bool) -> bool {
        let Some(end) = self.tlp_end_seq else { return false };
        if ack < end {
            return false;
        }
        if !self.tlp_is_retrans {
            self.tlp_end_seq = None; // a probe of new data: RACK repairs any loss
            false
        } else if ack > end {
            self.tlp_end_seq = None; // beyond the probe: the original was lost, the probe repaired it
            true
        } else if pure_dupack {
            self.tlp_end_seq = None; // original and probe both arrived: no loss
            false
        } else {
            false
        }
    }
}
