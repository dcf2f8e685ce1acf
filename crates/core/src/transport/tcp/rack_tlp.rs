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

use std::cell::Cell;
use std::collections::VecDeque;

use super::scoreboard::{unsacked_between, SackedCursor, Scoreboard};
use crate::engine::{Dur, Time};

/// TLP.max_ack_delay: RFC 8985 §7.2 recommends 200 ms when the peer's is unknown (Linux's
/// `tcp_delack_max`).
pub const TLP_MAX_ACK_DELAY: Dur = Dur::from_millis(200);

/// The PTO before any RTT sample (RFC 8985 §7.2: 1 s).
const PTO_WITHOUT_SRTT: Dur = Dur::from_millis(1000);

/// What RACK remembers of one outstanding segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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

impl SentSegment {
    /// What it adds to [`RackTlp::pipe`] while not delivered: once unless lost, once more while a
    /// retransmission of it is presumed in flight.
    fn in_flight(&self) -> u32 {
        u32::from(!self.lost) + u32::from(self.retrans_in_flight)
    }
}

/// Sums over the recorded segments, kept as flags change so that the pipe and "anything lost?"
/// cost O(1) instead of a walk over the window on every ACK and every segment sent.
#[derive(Clone, Copy, Debug, Default)]
struct Tally {
    /// Σ in_flight over segments not delivered.
    in_flight: u32,
    /// Segments marked lost.
    lost: u32,
}

impl Tally {
    fn of(s: &SentSegment) -> Tally {
        Tally { in_flight: if s.delivered { 0 } else { s.in_flight() }, lost: u32::from(s.lost) }
    }

    fn add(&mut self, s: &SentSegment) {
        let t = Tally::of(s);
        self.in_flight += t.in_flight;
        self.lost += t.lost;
    }

    fn remove(&mut self, s: &SentSegment) {
        let t = Tally::of(s);
        self.in_flight -= t.in_flight;
        self.lost -= t.lost;
    }

    /// Changes `s` by `f`, keeping the sums: every flag change goes through here.
    fn change(&mut self, s: &mut SentSegment, f: impl FnOnce(&mut SentSegment)) {
        self.remove(s);
        f(s);
        self.add(s);
    }
}

/// RACK and TLP state of one connection (RFC 8985 §5.2 and §7).
#[derive(Clone, Debug, Default)]
pub struct RackTlp {
    /// Sequence number of `sent[0]`.
    base: u32,
    sent: VecDeque<SentSegment>,
    /// Over `sent`, always.
    tally: Tally,
    /// (xmit_ts, seq) of every transmission in the order sent, so in time order (Linux's
    /// `tsorted_sent_queue`): loss detection reads only the segments sent before RACK.xmit_ts. An
    /// entry whose segment was sent again, delivered, SACKed, marked lost or acknowledged is stale
    /// and dropped when met; a cleared scoreboard rebuilds the list.
    by_time: VecDeque<(Time, u32)>,
    /// No segment below it is marked lost: where NextSeg's search for one starts. Lowered when a
    /// segment is marked, raised by the searches (hence a `Cell`: they only read RACK's state).
    lost_floor: Cell<u32>,
    /// Ranges the scoreboard's last update SACKed for the first time (filled by
    /// [`Scoreboard::update_noting`], read by the next [`RackTlp::on_ack`]).
    pub newly_sacked: Vec<(u32, u32)>,
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

    /// Marks segment `seq` (record `s`) lost, keeping the tally and the floor (fields passed apart
    /// so that callers can hold `s` from `sent`).
    fn mark_lost(tally: &mut Tally, lost_floor: &Cell<u32>, s: &mut SentSegment, seq: u32) {
        tally.change(s, |s| {
            s.lost = true;
            s.retrans_in_flight = false;
        });
        lost_floor.set(lost_floor.get().min(seq));
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
            let gap = self.base + self.sent.len() as u32;
            self.sent.push_back(SentSegment::default());
            self.tally.add(&SentSegment::default());
            if gap != seq {
                self.by_time.push_front((Time::ZERO, gap)); // never sent: its xmit_ts is 0
            }
        }
        self.by_time.push_back((now, seq));
        if let Some(s) = seq.checked_sub(self.base).and_then(|i| self.sent.get_mut(i as usize)) {
            self.tally.change(s, |s| {
                s.xmit_ts = now;
                s.lost = false;
                s.delivered = false;
                if retransmission {
                    s.retransmitted = true;
                    s.retrans_in_flight = true;
                }
            });
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
    ///
    /// Visits only what this ACK delivers: the segments it acknowledges cumulatively and those its
    /// SACK blocks cover for the first time (`newly_sacked`). Every other SACKed segment was
    /// delivered by the ACK that first SACKed it, and stays so until a cleared scoreboard forgets
    /// both (debug builds check this).
    pub fn on_ack(&mut self, now: Time, una: u32, new_una: u32, sb: Option<&Scoreboard>, ts_echo: Option<Time>, min_rtt: Option<Dur>) {
        let end = self.base + self.sent.len() as u32;
        let mut newly = std::mem::take(&mut self.newly_sacked);
        newly.sort_unstable();
        let base = self.base;
        let cumulative = (base.max(una), new_una.min(end));
        for (from, to) in std::iter::once(cumulative).chain(newly.iter().map(|&(a, b)| (a.max(new_una).max(base), b.min(end)))) {
            for seq in from..to {
                self.deliver(now, seq, ts_echo, min_rtt);
            }
        }
        newly.clear();
        self.newly_sacked = newly;
        debug_assert!(self.every_sacked_segment_delivered(sb, una), "a SACKed segment was not delivered to RACK");
        self.forget_below(new_una);
    }

    /// What `on_ack` relies on: every recorded segment at or above `una` that `sb` SACKs is delivered.
    fn every_sacked_segment_delivered(&self, sb: Option<&Scoreboard>, una: u32) -> bool {
        let mut sacked = SackedCursor::new(sb, self.base.max(una));
        (self.base.max(una)..self.base + self.sent.len() as u32)
            .all(|seq| !sacked.is_sacked(seq) || self.sent[(seq - self.base) as usize].delivered)
    }

    /// RACK_update for one segment the ACK delivers (skipped if an earlier ACK did).
    fn deliver(&mut self, now: Time, seq: u32, ts_echo: Option<Time>, min_rtt: Option<Dur>) {
        let s = self.sent[(seq - self.base) as usize];
        if s.delivered {
            return;
        }
        // Delivered after all (a late original): no longer lost or awaiting a resend.
        self.tally.change(&mut self.sent[(seq - self.base) as usize], |rec| {
            rec.delivered = true;
            rec.lost = false;
        });
        // Step 3: reordering.
        if seq + 1 > self.fack {
            self.fack = seq + 1;
        } else if !s.retransmitted {
            self.reordering_seen = true;
        }
        // Step 2: the RTT sample and the most recent delivered transmission.
        let rtt = now.saturating_since(s.xmit_ts);
        if s.retransmitted && (ts_echo.is_some_and(|t| t < s.xmit_ts) || min_rtt.is_some_and(|m| rtt < m)) {
            return; // ambiguous: the ACK may be for the original
        }
        if Self::sent_after(s.xmit_ts, seq + 1, self.xmit_ts, self.end_seq) {
            self.rtt = rtt;
            self.xmit_ts = s.xmit_ts;
            self.end_seq = seq + 1;
        }
    }

    /// Drops the records the cumulative ACK `una` covers.
    fn forget_below(&mut self, una: u32) {
        while self.base < una {
            let Some(s) = self.sent.pop_front() else { break };
            self.tally.remove(&s);
            self.base += 1;
        }
        if self.sent.is_empty() {
            self.base = self.base.max(una);
        }
        while self.by_time.front().is_some_and(|&(_, seq)| seq < self.base) {
            self.by_time.pop_front();
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
    ///
    /// Reads the transmissions in time order up to RACK.xmit_ts, dropping stale entries and those
    /// it marks lost, so each ACK costs what is pending in that stretch rather than the window.
    pub fn detect_loss(&mut self, now: Time, sb: Option<&Scoreboard>, inputs: ReoWndInputs) -> RackOutcome {
        let reo_wnd = self.reo_wnd(inputs);
        let mut outcome = RackOutcome::default();
        let mut timeout = 0u64;
        let (mut kept, mut read) = (0, 0);
        while let Some(&(t, seq)) = self.by_time.get(read) {
            if t > self.xmit_ts {
                break; // sent after RACK.xmit_ts, as is everything behind it
            }
            read += 1;
            let Some(s) = seq.checked_sub(self.base).and_then(|i| self.sent.get_mut(i as usize)) else { continue };
            // Stale (sent again since), or out of RACK's reach until it is sent again or the
            // scoreboard is cleared.
            if s.xmit_ts != t || s.delivered || s.lost || sb.is_some_and(|b| b.is_sacked(seq)) {
                continue;
            }
            if Self::sent_after(self.xmit_ts, self.end_seq, t, seq + 1) {
                let deadline = t.0 + self.rtt.0 + reo_wnd.0;
                if deadline <= now.0 {
                    Self::mark_lost(&mut self.tally, &self.lost_floor, s, seq);
                    outcome.newly_lost += 1;
                    continue;
                }
                timeout = timeout.max(deadline - now.0);
            }
            self.by_time[kept] = (t, seq);
            kept += 1;
        }
        self.by_time.drain(kept..read);
        self.reo_at = if timeout > 0 { Time(now.0 + timeout) } else { Time::NEVER };
        outcome
    }

    /// RFC 8985 §6.3 `RACK_mark_losses_on_RTO`: the head, and every unSACKed segment whose
    /// RACK.rtt + reo_wnd has passed since it was sent, is lost. Also stops RACK's and TLP's
    /// timers and ends a TLP episode (the timeout took over).
    pub fn on_timeout(&mut self, now: Time, una: u32, sb: Option<&Scoreboard>, inputs: ReoWndInputs) -> u32 {
        let reo_wnd = self.reo_wnd(inputs);
        let mut marked = 0;
        let mut sacked = SackedCursor::new(sb, self.base);
        for (i, s) in self.sent.iter_mut().enumerate() {
            let seq = self.base + i as u32;
            if seq < una || s.delivered || s.lost || sacked.is_sacked(seq) {
                continue;
            }
            if seq == una || s.xmit_ts.0 + self.rtt.0 + reo_wnd.0 <= now.0 {
                Self::mark_lost(&mut self.tally, &self.lost_floor, s, seq);
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
            self.tally.change(s, |s| s.delivered = false);
        }
        // Delivered segments are back within RACK's reach: list every segment's latest sending.
        self.by_time = (0..).zip(&self.sent).map(|(i, s)| (s.xmit_ts, self.base + i)).collect();
        self.by_time.make_contiguous().sort_unstable();
    }

    /// The pipe with RACK's marks (Linux's `tcp_packets_in_flight`): each unSACKed segment in
    /// `[una, max)` counts once unless marked lost, and once more while a retransmission of it
    /// is presumed in flight.
    ///
    /// O(1) plus a look at the scoreboard when the recorded segments lie within `[una, max)`, as
    /// they do whenever the sender asks: a recorded segment is delivered exactly when it is SACKed
    /// (RACK_update runs on every ACK right after the scoreboard's update, and a cleared scoreboard
    /// forgets the deliveries with it), so the tally counts what the definition does. Debug builds
    /// check that against the walk.
    pub fn pipe(&self, sb: Option<&Scoreboard>, una: u32, max: u32) -> u32 {
        let end = self.base + self.sent.len() as u32;
        if self.sent.is_empty() || una > self.base || end > max {
            return self.pipe_by_walk(sb, una, max);
        }
        let unrecorded = unsacked_between(sb, una, self.base) + unsacked_between(sb, end, max);
        let pipe = self.tally.in_flight + unrecorded;
        debug_assert_eq!(pipe, self.pipe_by_walk(sb, una, max), "RACK's tally and its walk disagree");
        pipe
    }

    /// The pipe's definition, segment by segment.
    fn pipe_by_walk(&self, sb: Option<&Scoreboard>, una: u32, max: u32) -> u32 {
        let mut sacked = SackedCursor::new(sb, una);
        (una..max)
            .filter(|&seq| !sacked.is_sacked(seq))
            .map(|seq| match self.get(seq) {
                Some(s) => s.in_flight(),
                None => 1,
            })
            .sum()
    }

    /// NextSeg rule (1) with RACK's marks: the first unSACKed segment in `[from, max)` marked
    /// lost and not resent since.
    pub fn first_lost(&self, sb: Option<&Scoreboard>, from: u32, max: u32) -> Option<u32> {
        if self.tally.lost == 0 {
            return None; // the usual answer, without a walk over the window
        }
        let floor = self.lost_floor.get().max(self.base);
        let start = from.max(floor);
        let mut sacked = SackedCursor::new(sb, start);
        let mut first_marked = None;
        let found = (start..max).find(|&seq| {
            let lost = self.get(seq).is_some_and(|s| s.lost);
            if lost && first_marked.is_none() {
                first_marked = Some(seq);
            }
            lost && !sacked.is_sacked(seq)
        });
        if start == floor {
            // Searched from the floor: nothing below the first marked segment met is marked.
            self.lost_floor.set(first_marked.unwrap_or(max));
        }
        found
    }

    /// NextSeg rule (1) segment by segment (the tests' oracle).
    #[cfg(test)]
    fn first_lost_by_walk(&self, sb: Option<&Scoreboard>, from: u32, max: u32) -> Option<u32> {
        let mut sacked = SackedCursor::new(sb, from.max(self.base));
        (from.max(self.base)..max).find(|&seq| self.get(seq).is_some_and(|s| s.lost) && !sacked.is_sacked(seq))
    }

    /// NextSeg rule (3): the first unSACKed segment in `[from, max)` neither lost nor being resent.
    pub fn first_unsacked_in_flight(&self, sb: Option<&Scoreboard>, from: u32, max: u32) -> Option<u32> {
        let mut sacked = SackedCursor::new(sb, from);
        (from..max).find(|&seq| {
            !sacked.is_sacked(seq) && self.get(seq).is_none_or(|s| !s.lost && !s.retrans_in_flight)
        })
    }

    /// Whether any segment awaits retransmission.
    pub fn has_lost(&self) -> bool {
        debug_assert_eq!(self.tally.lost, self.sent.iter().filter(|s| s.lost).count() as u32);
        self.tally.lost > 0
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

    /// The per-segment walk `on_ack` replaced (the tests' oracle).
    #[cfg(test)]
    fn on_ack_by_walk(&mut self, now: Time, una: u32, new_una: u32, sb: Option<&Scoreboard>, ts_echo: Option<Time>, min_rtt: Option<Dur>) {
        let end = self.base + self.sent.len() as u32;
        let mut sacked = SackedCursor::new(sb, self.base.max(una));
        for seq in self.base.max(una)..end {
            if seq < new_una || sacked.is_sacked(seq) {
                self.deliver(now, seq, ts_echo, min_rtt);
            }
        }
        self.forget_below(new_una);
        self.newly_sacked.clear();
    }

    /// The per-segment walk `detect_loss` replaced (the tests' oracle).
    #[cfg(test)]
    fn detect_loss_by_walk(&mut self, now: Time, sb: Option<&Scoreboard>, inputs: ReoWndInputs) -> RackOutcome {
        let reo_wnd = self.reo_wnd(inputs);
        let mut outcome = RackOutcome::default();
        let mut timeout = 0u64;
        let mut sacked = SackedCursor::new(sb, self.base);
        for (i, s) in self.sent.iter_mut().enumerate() {
            let seq = self.base + i as u32;
            // Lost and not resent: RFC 8985's INFINITE_TS, never "sent before" RACK.xmit_ts.
            if s.delivered || s.lost || sacked.is_sacked(seq) {
                continue;
            }
            if !Self::sent_after(self.xmit_ts, self.end_seq, s.xmit_ts, seq + 1) {
                continue;
            }
            let deadline = s.xmit_ts.0 + self.rtt.0 + reo_wnd.0;
            if deadline <= now.0 {
                Self::mark_lost(&mut self.tally, &self.lost_floor, s, seq);
                outcome.newly_lost += 1;
            } else {
                timeout = timeout.max(deadline - now.0);
            }
        }
        self.reo_at = if timeout > 0 { Time(now.0 + timeout) } else { Time::NEVER };
        outcome
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SackBlock;

    /// One step of a sender's use of RACK, in the order the sender calls it.
    #[derive(Clone, Debug)]
    enum Step {
        /// New segments go out.
        Send(u32),
        /// An ACK: the cumulative ACK moves up by `advance`; SACK blocks at (offset, length) above it.
        Ack { advance: u32, blocks: Vec<(u32, u32)> },
        /// RACK's loss detection, then the first lost segment resent.
        DetectAndResend,
        /// A retransmission timeout; `keep_sacks` keeps the scoreboard.
        Timeout { keep_sacks: bool },
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            (1u32..6).prop_map(Step::Send),
            (0u32..4, proptest::collection::vec((0u32..12, 1u32..4), 0..3))
                .prop_map(|(advance, blocks)| Step::Ack { advance, blocks }),
            Just(Step::DetectAndResend),
            any::<bool>().prop_map(|keep_sacks| Step::Timeout { keep_sacks }),
        ]
    }

    /// Everything RACK's answers depend on (not the bookkeeping that speeds them up).
    fn observable(r: &RackTlp) -> impl PartialEq + std::fmt::Debug {
        (r.base, r.sent.clone(), r.xmit_ts, r.end_seq, r.rtt, r.fack, r.reordering_seen, r.reo_at)
    }

    proptest::proptest! {
        /// After every step of a random but well-formed exchange, RACK in its fast form is in the
        /// state the per-segment walks of RFC 8985's pseudocode leave (`*_by_walk`), and the tally
        /// behind `pipe` and `has_lost` equals their segment-by-segment definitions.
        #[test]
        fn the_fast_paths_match_the_walks(steps in proptest::collection::vec(step(), 1..60), reo in proptest::bool::ANY) {
            let (mut rack, mut sb) = (RackTlp::default(), Scoreboard::default());
            let mut walked = RackTlp::default();
            let (mut una, mut max, mut now) = (0u32, 0u32, Time::ZERO);
            // Both reordering windows: zero in recovery, a quarter of min_RTT otherwise.
            let inputs = ReoWndInputs { in_recovery: !reo, segs_sacked: 0, dupthresh: 3, min_rtt: Some(Dur::from_millis(8)), srtt: None };
            for step in steps {
                now = Time(now.0 + 1_000_000);
                match step {
                    Step::Send(n) => {
                        for seq in max..max + n {
                            rack.on_send(seq, now, false);
                            walked.on_send(seq, now, false);
                        }
                        max += n;
                    }
                    Step::Ack { advance, blocks } => {
                        let new_una = (una + advance).min(max);
                        let blocks: Vec<SackBlock> = blocks
                            .iter()
                            .map(|&(off, len)| SackBlock { start: new_una + off, end: (new_una + off + len).min(max) })
                            .filter(|b| b.end > b.start)
                            .collect();
                        sb.update_noting(&blocks, new_una, Some(&mut rack.newly_sacked));
                        rack.on_ack(now, una, new_una, Some(&sb), None, None);
                        walked.on_ack_by_walk(now, una, new_una, Some(&sb), None, None);
                        una = new_una;
                    }
                    Step::DetectAndResend => {
                        let found = rack.detect_loss(now, Some(&sb), inputs);
                        proptest::prop_assert_eq!(found, walked.detect_loss_by_walk(now, Some(&sb), inputs));
                        let first = rack.first_lost(Some(&sb), una, max);
                        proptest::prop_assert_eq!(first, walked.first_lost_by_walk(Some(&sb), una, max));
                        if let Some(seq) = first {
                            rack.on_send(seq, now, true);
                            walked.on_send(seq, now, true);
                        }
                    }
                    Step::Timeout { keep_sacks } => {
                        if !keep_sacks {
                            sb.clear();
                            rack.forget_sacks();
                            walked.forget_sacks();
                        }
                        rack.on_timeout(now, una, Some(&sb), inputs);
                        walked.on_timeout(now, una, Some(&sb), inputs);
                    }
                }
                proptest::prop_assert_eq!(observable(&rack), observable(&walked));
                proptest::prop_assert_eq!(rack.pipe(Some(&sb), una, max), rack.pipe_by_walk(Some(&sb), una, max));
                proptest::prop_assert_eq!(rack.has_lost(), rack.sent.iter().any(|s| s.lost));
            }
        }
    }
}
