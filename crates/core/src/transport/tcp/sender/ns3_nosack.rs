//! NewReno without SACK as ns-3 3.44 runs it (`ns3_reno_sack = true`): `TcpSocketBase`'s
//! `ReceivedAck`/`ProcessAck`, `DupAck`, `EnterRecovery`, `ReTxTimeout` and `SendPendingData` for
//! `Sack = false`, over the emulated "Reno SACK" scoreboard of `reno_sack.rs`. ns-3's states map to
//! the sender's: CA_LOSS while `timeout_recover` is above `snd_una`, CA_RECOVERY while
//! `in_recovery`, else CA_OPEN (no duplicate ACKs) or CA_DISORDER.
//!
//! Where it departs from RFC 6582 NewReno (the sender's default), each as ns-3 3.44 does it:
//! * What is sent is always `NextSeg` under cwnd − pipe ≥ 1 segment: the first segment flagged
//!   lost and not yet resent, else new data; pipe is the board's `BytesInFlight`. There is no
//!   window inflation: in classic recovery cwnd = ssthresh, and each duplicate ACK's flag lowers
//!   pipe instead.
//! * Duplicate ACKs are ignored in CA_LOSS. In CA_DISORDER the third one starts recovery (not
//!   before the recovery point of the last episode), and so does any one when `IsLost(snd_una)`,
//!   with no such guard; otherwise, with limited transmit, each adds a flag.
//! * Entering recovery: a flag, the head marked lost, ssthresh from pipe + 1 segment (NewReno's
//!   `GetSsThresh(BytesInFlight + MSS)`; CUBIC uses its cwnd), the head resent at once.
//! * Every ACK below the recovery point resends the new head after marking it lost; only the
//!   first restarts the retransmission timer.
//! * A timeout marks every segment outstanding lost and clears the flags; the resends then walk
//!   the lost segments in order (go-back-N over what is not yet acknowledged).

use super::TcpSender;
use crate::engine::Time;
use crate::packet::Packet;
use crate::transport::tcp::prr::Prr;
use crate::transport::tcp::reno_sack::RenoSackBoard;
use crate::transport::tcp::{CongestionControl, Recovery, TcpConfig};

impl TcpSender {
    fn board(&self) -> &RenoSackBoard {
        self.reno_board.as_deref().expect("an ns3_reno_sack sender has a board")
    }

    fn board_mut(&mut self) -> &mut RenoSackBoard {
        self.reno_board.as_deref_mut().expect("an ns3_reno_sack sender has a board")
    }

    /// CA_LOSS: a timeout's resends are not yet all acknowledged.
    fn in_loss_state(&self) -> bool {
        self.timeout_recover > self.snd_una
    }

    /// `ReceivedAck` for an `ns3_reno_sack` sender.
    pub(super) fn ns3_on_ack(&mut self, cfg: &TcpConfig, now: Time, ack: &Packet, out: &mut Vec<Packet>) {
        if ack.ack > self.snd_una && ack.ack <= self.snd_max {
            self.ns3_new_ack(cfg, now, ack, out);
        } else if ack.ack == self.snd_una && self.snd_max > self.snd_una {
            self.ns3_dupack(cfg, now, out);
        }
    }

    fn ns3_new_ack(&mut self, cfg: &TcpConfig, now: Time, ack: &Packet, out: &mut Vec<Packet>) {
        self.observe_ack_timing(cfg, now, ack);
        let acked = ack.ack - self.snd_una;
        let partial = self.in_recovery && ack.ack < self.recover;
        // PRR's "safe ACK" (`m_isRetransDataAcked`), decided before the segments are discarded.
        let safe_ack = partial && self.board().retransmission_acked(ack.ack);
        self.board_mut().discard_up_to(ack.ack);
        // `tcb->m_bytesInFlight` as PRR reads it: computed before ProcessAck marks the head lost.
        let pipe_before = self.board().pipe();
        let outstanding_before = self.snd_max - self.snd_una;
        let growth_acked = self.advance_una(ack.ack);
        self.cc.observe_ack(acked, false, self.snd_una, self.snd_max);
        let mut restart_timer = true;
        if partial {
            self.board_mut().mark_head_lost();
            if cfg.recovery == Recovery::Prr {
                self.ns3_prr(cfg, acked, false, pipe_before, safe_ack);
            }
            restart_timer = !self.partial_ack_seen;
            self.partial_ack_seen = true;
            // ns-3's `IsRetransmittedDataAcked` test cannot hold once the head is marked lost, so
            // the head is resent on every partial ACK.
            self.retransmit(cfg, now, self.snd_una, out);
        } else if self.in_recovery {
            self.leave_recovery();
        } else if cfg.congestion_control == CongestionControl::Ledbat {
            self.ledbat_grow(cfg, growth_acked, (outstanding_before, self.snd_max - self.snd_una));
        } else {
            let srtt = self.rtt.srtt();
            self.cc.grow(&mut self.cwnd, self.ssthresh, growth_acked, now, srtt, cfg.count_acked_segments);
        }
        self.timer_after_new_ack(cfg, now, restart_timer);
        self.ns3_send_pending(cfg, now, out);
    }

    /// `DupAck`.
    fn ns3_dupack(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        if self.in_loss_state() {
            return;
        }
        let pipe_before = self.board().pipe();
        if self.in_recovery {
            self.board_mut().add_reno_sack();
            if cfg.recovery == Recovery::Prr {
                self.ns3_prr(cfg, 0, true, pipe_before, false);
            }
        } else {
            self.dupacks += 1;
            let third = self.dupacks == cfg.dupack_threshold && self.snd_una >= self.recover;
            if third || self.board().is_lost(self.snd_una) {
                self.ns3_enter_recovery(cfg, now, out);
            } else if cfg.limited_transmit {
                self.board_mut().add_reno_sack();
            }
        }
        self.ns3_send_pending(cfg, now, out);
    }

    /// `EnterRecovery` with `Sack = false`.
    fn ns3_enter_recovery(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        let board = self.board_mut();
        board.add_reno_sack(); // "one segment has left the network, PLUS the head is lost"
        board.mark_head_lost();
        let pipe = board.pipe();
        self.recover = self.snd_max;
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.stats.fast_retransmits += 1;
        // "still consider the head as 'in flight' for compatibility with old ns-3 versions"
        let window = match cfg.congestion_control {
            CongestionControl::Reno | CongestionControl::Dctcp | CongestionControl::Ledbat => f64::from(pipe) + 1.0,
            CongestionControl::Cubic | CongestionControl::CubicNs3 | CongestionControl::CubicLinux | CongestionControl::Bbr => self.cwnd,
        };
        self.ssthresh = self.cc.loss_ssthresh(window);
        match cfg.recovery {
            Recovery::Classic => self.cwnd = self.ssthresh,
            Recovery::Prr => {
                self.prr = Prr::start(pipe);
                self.ns3_prr(cfg, 0, true, pipe, false);
            }
        }
        self.retransmit(cfg, now, self.snd_una, out); // RFC 6675 (4.3), whatever the window says
    }

    /// `TcpPrrRecovery::DoRecovery`: cwnd = pipe (as ns-3 last computed it) + the send count.
    pub(super) fn ns3_prr(&mut self, cfg: &TcpConfig, delivered: u32, dupack: bool, pipe: u32, safe_ack: bool) {
        if let Some(count) = self.prr.ns3_send_count(delivered, dupack, pipe, self.ssthresh, safe_ack, cfg.mss) {
            self.cwnd = f64::from(pipe) + count;
        }
    }

    /// `ReTxTimeout` after the common bookkeeping (`on_timer`): everything outstanding lost, the
    /// flags cleared, and the resends start.
    pub(super) fn ns3_timeout(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        self.board_mut().all_lost();
        self.ns3_send_pending(cfg, now, out);
    }

    /// The window a timeout halves: `BytesInFlight` for NewReno's `GetSsThresh`, cwnd for CUBIC.
    pub(super) fn ns3_timeout_window(&self, cfg: &TcpConfig) -> f64 {
        match cfg.congestion_control {
            CongestionControl::Reno | CongestionControl::Dctcp | CongestionControl::Ledbat => f64::from(self.board().pipe()),
            CongestionControl::Cubic | CongestionControl::CubicNs3 | CongestionControl::CubicLinux | CongestionControl::Bbr => self.cwnd,
        }
    }

    /// `SendPendingData`: while cwnd (at most the receiver window) − pipe ≥ 1 segment, NextSeg.
    pub(super) fn ns3_send_pending(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        loop {
            let window = self.cwnd.min(f64::from(cfg.max_window));
            if window - f64::from(self.board().pipe()) < 1.0 {
                break;
            }
            if let Some(seq) = self.board().next_lost() {
                self.retransmit(cfg, now, seq, out);
            } else if self.may_send_new(cfg) {
                let seq = self.snd_max;
                self.transmit(cfg, now, seq, out);
                self.snd_nxt = self.snd_max;
            } else {
                break;
            }
        }
    }
}
