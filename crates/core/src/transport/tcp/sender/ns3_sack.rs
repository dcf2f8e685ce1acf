//! SACK fast recovery with PRR as ns-3 3.44 runs it (`ns3_sack_recovery = true`, on in the `ns3`
//! profile): `TcpSocketBase::EnterRecovery`, `DupAck` and `ProcessAck`'s partial-ACK branch over
//! `TcpPrrRecovery::DoRecovery` (`Prr::ns3_send_count`). The scoreboard, NextSeg and pipe stay the
//! sender's RFC 6675 ones.
//!
//! Where it departs from RFC 6937 PRR-SSRB over RFC 6675 (the sender's default), each as ns-3 does:
//! * `DoRecovery` adds one segment to what a duplicate ACK delivered while prr_delivered is below
//!   RecoverFS — with SACK the ACK's delivered data already counts the newly SACKed segment, so
//!   each duplicate ACK counts twice (ns-3-dev later removed the addition for SACK);
//! * below ssthresh the bound is PRR-CRB, plus one segment when the ACK acknowledges retransmitted
//!   data (`m_isRetransDataAcked`), not SSRB's unconditional segment;
//! * a partial ACK with new SACK blocks runs `DoRecovery` twice, once as a duplicate (`DupAck`)
//!   and once for the cumulative advance;
//! * a partial ACK whose new head was not retransmitted sends a segment at once, whatever the
//!   window says (`DoRetransmit`: the first lost segment not yet resent, else new data, else the
//!   head again);
//! * only the first partial ACK of an episode restarts the retransmission timer (`NewAck` with
//!   `m_isFirstPartialAck`).
//!
//! Retransmitted segments are remembered (`ns3_rexmits`) to answer `IsRetransmittedDataAcked`;
//! ns-3 also requires the segment not to be SACKed, which is not checked here (a resent segment
//! that is then SACKed before the cumulative ACK covers it).

use super::TcpSender;
use crate::engine::Time;
use crate::packet::Packet;
use crate::transport::tcp::prr::Prr;
use crate::transport::tcp::TcpConfig;

impl TcpSender {
    /// `EnterRecovery` with SACK and PRR: RecoverFS is everything outstanding, `DoRecovery` runs as
    /// for a duplicate ACK with the pipe that has the head marked lost, then (4.3) the head is
    /// resent and (C) NextSeg sends what cwnd − pipe allows.
    pub(super) fn ns3_sack_enter_recovery(&mut self, cfg: &TcpConfig, now: Time, delivered: u32, out: &mut Vec<Packet>) {
        self.prr = Prr::start(self.snd_max - self.snd_una);
        let pipe = self.pipe_with_head_lost(cfg);
        self.ns3_prr(cfg, delivered, true, pipe, false);
        self.high_rxt = self.snd_una + 1;
        self.retransmit(cfg, now, self.snd_una, out);
        self.sack_transmit(cfg, now, out);
    }

    /// A duplicate ACK in recovery (the cumulative point unchanged): `DupAck`'s `DoRecovery` when
    /// it carries new SACK information (ns-3's duplicate-ACK test with SACK), then NextSeg.
    pub(super) fn ns3_sack_dupack(&mut self, cfg: &TcpConfig, now: Time, delivered: u32, out: &mut Vec<Packet>) {
        if delivered > 0 {
            let pipe = self.pipe(cfg);
            self.ns3_prr(cfg, delivered, true, pipe, false);
        }
        self.sack_transmit(cfg, now, out);
    }

    /// A partial ACK (below the recovery point) that newly delivered `delivered` segments;
    /// `safe_ack` if it acknowledged a resent segment. Returns whether the retransmission timer restarts: only on the episode's first.
    pub(super) fn ns3_sack_partial_ack(&mut self, cfg: &TcpConfig, now: Time, delivered: u32, new_sack_info: bool,
                                       safe_ack: bool, out: &mut Vec<Packet>) -> bool {
        let pipe = self.pipe(cfg);
        if new_sack_info {
            self.ns3_prr(cfg, delivered, true, pipe, safe_ack);
        }
        if delivered >= 1 {
            self.ns3_prr(cfg, delivered, false, pipe, safe_ack);
        }
        if !self.ns3_rexmits.as_ref().is_some_and(|r| r.contains(&self.snd_una)) {
            self.ns3_do_retransmit(cfg, now, out);
        }
        self.sack_transmit(cfg, now, out);
        let first_partial = !self.partial_ack_seen;
        self.partial_ack_seen = true;
        first_partial
    }

    /// `DoRetransmit`: what `NextSeg(isRecovery = false)` returns — the first segment deemed lost
    /// and not yet resent, else a new one — and only when it has neither, the head again.
    fn ns3_do_retransmit(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        let from = self.high_rxt.max(self.snd_una);
        let lost_below = self.lost_below(cfg);
        let lost = self.scoreboard.as_ref().and_then(|sb| sb.first_unsacked(from, self.snd_max, cfg.dupack_threshold, true, lost_below));
        if let Some(seq) = lost {
            self.high_rxt = seq + 1;
            self.retransmit(cfg, now, seq, out);
        } else if self.may_send_new(cfg) {
            let seq = self.snd_max;
            self.transmit(cfg, now, seq, out);
            self.snd_nxt = seq + 1;
        } else {
            self.retransmit(cfg, now, self.snd_una, out);
        }
    }

    /// Drops the record of resent segments the cumulative ACK has passed.
    pub(super) fn ns3_forget_rexmits_below(&mut self, una: u32) {
        if let Some(rexmits) = self.ns3_rexmits.as_deref_mut() {
            if rexmits.first().is_some_and(|&s| s < una) {
                *rexmits = rexmits.split_off(&una);
            }
        }
    }
}
