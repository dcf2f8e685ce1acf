//! The sender's side of `rack_tlp` (RFC 8985): feeding RACK every ACK and transmission, its
//! reordering timer, the tail loss probe and TLP's loss response. The algorithms themselves are
//! in `rack_tlp.rs`; RFC 6675's NextSeg and pipe read RACK's loss marks (`sack_transmit`, `pipe`).

use super::TcpSender;
use crate::engine::{Dur, Time};
use crate::packet::Packet;
use crate::transport::tcp::rack_tlp::ReoWndInputs;
use crate::transport::tcp::TcpConfig;

impl TcpSender {
    /// What RACK's reordering window depends on (RFC 8985 §6.2 step 4).
    fn reo_wnd_inputs(&self, cfg: &TcpConfig) -> ReoWndInputs {
        ReoWndInputs {
            in_recovery: self.in_recovery || self.timeout_recover != 0,
            segs_sacked: self.sacked_count(),
            dupthresh: cfg.dupack_threshold,
            min_rtt: (self.min_rtt_ns != u64::MAX).then_some(Dur(self.min_rtt_ns)),
            srtt: self.rtt.srtt(),
        }
    }

    /// RACK on an arriving ACK whose SACK blocks are already on the scoreboard, before the
    /// recovery logic reads the loss marks (RFC 8985 §6.2 steps 1–5), and TLP's check of the
    /// probe's fate (§7.4).
    pub(super) fn rack_on_ack(&mut self, cfg: &TcpConfig, now: Time, ack: &Packet) {
        let new_data = ack.ack > self.snd_una && ack.ack <= self.snd_max;
        let new_una = if new_data { ack.ack } else { self.snd_una };
        let min_rtt = (self.min_rtt_ns != u64::MAX).then_some(Dur(self.min_rtt_ns));
        let inputs = self.reo_wnd_inputs(cfg);
        let Some(rack) = self.rack.as_deref_mut() else { return };
        let ts_echo = cfg.timestamps.then_some(ack.sent_at);
        rack.on_ack(now, self.snd_una, new_una, self.scoreboard.as_deref(), ts_echo, min_rtt);
        // A duplicate ACK without SACK blocks: the receiver got a segment it already had.
        let pure_dupack = !new_data && ack.ack == self.snd_una && ack.sack_len == 0;
        let probe_repaired_a_loss = rack.tlp_process_ack(ack.ack, pure_dupack);
        let found = rack.detect_loss(now, self.scoreboard.as_deref(), inputs);
        rack.lost_on_last_ack = found.newly_lost;
        self.stats.rack_losses += found.newly_lost;
        if probe_repaired_a_loss && !self.in_recovery && self.timeout_recover == 0 {
            self.tlp_loss_response(cfg);
        }
    }

    /// RFC 8985 §7.4.2: the probe repaired a loss that no other mechanism saw, so the congestion
    /// control reacts as to a loss, once (Linux's `tcp_process_tlp_ack`: ssthresh as on a fast
    /// retransmit, cwnd cut to it, no recovery episode).
    fn tlp_loss_response(&mut self, cfg: &TcpConfig) {
        let window = self.reduction_window(cfg, false);
        self.ssthresh = self.cc.loss_ssthresh(window);
        self.cwnd = self.cwnd.min(self.ssthresh);
        self.note_window_reduced(cfg);
    }

    /// Whether RACK has marked a segment lost that awaits retransmission.
    pub(super) fn rack_has_lost(&self) -> bool {
        self.rack.as_deref().is_some_and(|r| r.has_lost())
    }

    /// After each call into the sender: RFC 8985 §7.2's PTO, armed after new data went out or
    /// `snd_una` advanced (`acked_new`), only in the open state (no recovery, nothing SACKed or
    /// marked lost), stopped otherwise.
    pub(super) fn rack_schedule_pto(&mut self, now: Time, acked_new: bool) {
        let open = !self.in_recovery && self.timeout_recover == 0 && self.sacked_count() == 0 && !self.rack_has_lost();
        let flight = self.snd_max - self.snd_una;
        let (srtt, rto_at) = (self.rtt.srtt(), self.rto_at);
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.schedule_pto(now, open, acked_new, flight, srtt, rto_at);
        }
    }

    /// The earliest of RACK's reordering timer and the PTO.
    pub(super) fn rack_wakeup(&self) -> Time {
        self.rack.as_deref().map_or(Time::NEVER, |r| r.reo_at().min(r.pto_at()))
    }

    /// RACK's timers, before the retransmission timer is looked at: the reordering timer
    /// (RFC 8985 §6.2, `RACK_detect_loss_and_arm_timer`, then recovery) and the PTO (§7.3).
    pub(super) fn rack_on_timer(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        let Some(rack) = self.rack.as_deref_mut() else { return };
        if self.snd_una >= self.snd_max {
            rack.stop_timers(); // nothing outstanding: nothing to detect or probe
            return;
        }
        let (reo_due, pto_due) = (now >= rack.reo_at(), now >= rack.pto_at());
        if !(reo_due || pto_due) {
            return;
        }
        self.integrate(now);
        if reo_due {
            let inputs = self.reo_wnd_inputs(cfg);
            let rack = self.rack.as_deref_mut().expect("rack_tlp");
            rack.stop_reo_timer();
            let found = rack.detect_loss(now, self.scoreboard.as_deref(), inputs);
            self.stats.rack_losses += found.newly_lost;
            if found.newly_lost > 0 {
                self.rack_recover(cfg, now, out);
            }
        }
        if pto_due {
            self.send_tail_loss_probe(cfg, now, out);
        }
        self.rack_schedule_pto(now, false);
    }

    /// Segments RACK just marked lost outside an ACK: start fast recovery (its first lost
    /// segment goes out at once), or resend them by NextSeg within the window if already
    /// recovering (Linux's `tcp_rack_reo_timeout`).
    fn rack_recover(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        if !self.in_recovery && self.timeout_recover == 0 && self.may_start_recovery(cfg) {
            self.enter_recovery(cfg, now, 0, out);
        } else {
            self.sack_transmit(cfg, now, out);
        }
    }

    /// RFC 8985 §7.3 `TLP_send_probe`: one new segment if the data and the receiver window
    /// allow (cwnd is not consulted), else the last segment sent again; then the RTO, not the
    /// PTO, is re-armed. No probe while an earlier one's episode is open.
    fn send_tail_loss_probe(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        let may_probe = self.rack.as_deref_mut().is_some_and(|r| r.take_probe_turn());
        if may_probe {
            let is_retrans = !self.may_send_new(cfg);
            if is_retrans {
                self.retransmit(cfg, now, self.snd_max - 1, out);
            } else {
                let seq = self.snd_max;
                self.transmit(cfg, now, seq, out);
                self.snd_nxt = self.snd_max;
            }
            self.stats.tlp_probes += 1;
            let end_seq = self.snd_max;
            if let Some(rack) = self.rack.as_deref_mut() {
                rack.on_probe_sent(end_seq, is_retrans);
            }
        }
        self.rto_at = Time::NEVER;
        self.arm_timer(cfg, now);
    }

    /// A retransmission timeout with RACK (RFC 8985 §6.3): the head and every segment overdue
    /// by RACK.rtt + reo_wnd are lost, the rest stays in the pipe; the head goes out at once
    /// whatever the window (Linux's `tcp_retransmit_timer`), then NextSeg.
    pub(super) fn rack_timeout_retransmit(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        let inputs = self.reo_wnd_inputs(cfg);
        let una = self.snd_una;
        if let Some(rack) = self.rack.as_deref_mut() {
            if !cfg.keep_sack_after_timeout {
                rack.forget_sacks(); // the scoreboard was cleared (RFC 2018 §8)
            }
            rack.on_timeout(now, una, self.scoreboard.as_deref(), inputs);
        }
        self.retransmit_first_lost(cfg, now, out);
        self.sack_transmit(cfg, now, out);
    }

    /// The first segment RACK marked lost, sent whatever pipe says (RFC 6675 (4.3)'s rule for the
    /// fast retransmit; the head after a timeout).
    pub(super) fn retransmit_first_lost(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        let first = self.rack.as_deref().and_then(|r| r.first_lost(self.scoreboard.as_deref(), self.snd_una, self.snd_max));
        if let Some(seq) = first {
            self.high_rxt = self.high_rxt.max(seq + 1);
            self.retransmit(cfg, now, seq, out);
        }
    }
}
