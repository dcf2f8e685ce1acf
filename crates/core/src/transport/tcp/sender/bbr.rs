//! The sender's side of BBR (`congestion_control = "bbr"`, bbr.rs): every segment sent is
//! stamped for delivery-rate estimation, and after each ACK's loss-recovery processing BBR sets
//! cwnd and the pacing rate, as Linux's `tcp_cong_control` calls `bbr_main` after
//! `tcp_fastretrans_alert`, and the sender then transmits what they allow.

use super::TcpSender;
use crate::engine::Time;
use crate::packet::Packet;
use crate::transport::tcp::bbr::{AckView, CaState};
use crate::transport::tcp::{Recovery, TcpConfig, TcpVariant};

impl TcpSender {
    /// Seeds BBR's random PROBE_BW start phase from the flow's random stream (no-op otherwise).
    pub fn seed_congestion_control(&mut self, seed: u64) {
        if let Some(b) = self.cc.bbr_mut() {
            b.set_seed(seed);
        }
    }

    /// A data segment `seq` of `payload` bytes leaves at `now` (from `emit`, after `snd_max`
    /// moved): the pacing clock advances and BBR's rate sampler stamps the segment.
    pub(super) fn note_sent(&mut self, now: Time, seq: u32, payload: u32, retransmission: bool) {
        let idle = !retransmission && self.snd_una == seq && self.snd_max == seq + 1;
        if let Some(b) = self.cc.bbr_mut() {
            if idle && b.rate.delivered == 0 {
                b.start(now);
            }
            b.rate.on_send(now, seq, retransmission, idle);
            if let Some(p) = self.pacer.as_deref_mut() {
                p.rate_bytes_per_sec = b.pacing_rate();
            }
        }
        if let Some(p) = self.pacer.as_deref_mut() {
            p.on_sent(now, payload);
        }
    }

    /// `bbr_main` on an ACK already processed for loss recovery (`una_before`: `snd_una` when it
    /// arrived); then sends what the new cwnd and the pacing clock allow.
    pub(super) fn bbr_after_ack(&mut self, cfg: &TcpConfig, now: Time, ack: &Packet, una_before: u32, out: &mut Vec<Packet>) {
        if self.cc.bbr().is_none() || ack.ack < una_before {
            return; // Linux skips cong_control on an old ACK
        }
        let ca_state = if self.in_recovery {
            CaState::Recovery
        } else if self.timeout_recover > self.snd_una {
            CaState::Loss
        } else {
            CaState::Open
        };
        let inflight = self.pipe(cfg);
        let cwnd = self.cwnd.round().max(1.0) as u32;
        let srtt = self.rtt.srtt();
        let next_departure = self.pacer.as_deref().map_or(now, |p| p.next_release());
        let losses = self.rack.as_deref().map_or(0, |r| r.lost_on_last_ack);
        let b = self.cc.bbr_mut().expect("checked above");
        let rs = b.rate.on_ack(now, ack.ack, ack.sack_blocks(), b.min_rtt());
        let view = AckView { now, rs, ca_state, inflight, cwnd, srtt, next_departure, losses };
        self.cwnd = f64::from(b.on_ack(&view));
        let rate = b.pacing_rate();
        if let Some(p) = self.pacer.as_deref_mut() {
            p.rate_bytes_per_sec = rate;
        }
        self.send_allowed(cfg, now, out);
        // `tcp_rate_check_app_limited`: nothing left to send with the window not full.
        let pipe = self.pipe(cfg);
        if self.snd_max >= self.send_end() && f64::from(pipe) < self.cwnd {
            if let Some(b) = self.cc.bbr_mut() {
                b.rate.mark_app_limited(pipe);
            }
        }
    }

    /// Sends what the window and the pacing clock allow now, by the path the ACK handling uses.
    pub(super) fn send_allowed(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        if self.reno_board.is_some() {
            self.ns3_send_pending(cfg, now, out);
        } else if (self.in_recovery && cfg.variant == TcpVariant::Sack) || self.lost_below(cfg) > 0 {
            self.sack_transmit(cfg, now, out);
        } else if !(self.in_recovery && cfg.recovery == Recovery::Prr) {
            self.send_new(cfg, now, out);
        }
    }
}

#[cfg(test)]
impl TcpSender {
    /// BBR's state (tests).
    pub(crate) fn bbr_state(&self) -> Option<&crate::transport::tcp::bbr::Bbr> {
        self.cc.bbr()
    }
}
