//! TCP sender: Tahoe, Reno, NewReno and SACK loss recovery (classic or RFC 6937 PRR, RFC 3042
//! limited transmit) over Reno, CUBIC, DCTCP or LEDBAT congestion control, RFC 6298 retransmission timer,
//! RFC 3168 ECN. Sans-IO: handed `now` and ACKs, it appends the
//! segments to transmit to `out` and says when it next wants `on_timer` (`next_wakeup`).
//!
//! Read first: RFC 5681 (slow start, congestion avoidance, fast retransmit/recovery), RFC 6582
//! (NewReno), RFC 6675 (SACK loss recovery), RFC 6937 (PRR), RFC 3042 (limited transmit), RFC 6298
//! (RTO), RFC 3168 §6.1 (ECN at the sender).
//!
//! Modelling choices (docs/tcp.md discusses each):
//! * Windows count segments (`cwnd` is an `f64` of segments). Growth and cuts come from the
//!   congestion-control module (`congestion.rs`: Reno, CUBIC, DCTCP).
//! * FlightSize, the amount a loss or an ECN echo halves, is the window really in use: the data
//!   outstanding, but at most cwnd without Reno/NewReno's duplicate-ACK inflation (in their fast
//!   recovery, ssthresh). RFC 5681's literal `snd_max − snd_una` counts segments the receiver
//!   already holds after inflation and after go-back-N; ns-2, ns-3 and Linux halve the window.
//!   A second timeout of the same segment keeps ssthresh (RFC 5681 §3.1's note on eq. (4)), unless
//!   `halve_at_every_timeout` (ns-2's `TcpAgent::timeout`: half of min(cwnd, window) every time).
//! * Tahoe on three duplicate ACKs sets cwnd = 1, goes back to `snd_una` and restarts the
//!   retransmission timer (4.3BSD-Tahoe, ns-2's Tahoe).
//! * NewReno leaves recovery on the full ACK with cwnd = ssthresh (RFC 6582 §3.2 step 3, option 2;
//!   ns-3's classic recovery does the same); a partial ACK retransmits the next hole, deflates the
//!   window by the amount acknowledged and adds one segment back. The retransmission timer is
//!   restarted only by the first partial ACK (RFC 6582 §3.2 step 4 and §4, "Impatient"), and not
//!   on entering recovery (RFC 6298 (5.1): a retransmission starts the timer only if stopped).
//! * SACK implements RFC 6675's IsLost, SetPipe and NextSeg rules 1–3 (not the rescue
//!   retransmission of rule 4; rule 3 only below the highest SACKed segment, its condition (1.b)), enters recovery on DupThresh duplicate ACKs or IsLost(snd_una),
//!   and sets cwnd = ssthresh. Before recovery, duplicate ACKs carrying SACK blocks already send
//!   new data while cwnd − pipe ≥ 1 (what ns-3 does; RFC 6675 §5 points to limited transmit).
//!   An ACK that SACKs new data is a duplicate ACK even when it also advances `snd_una`
//!   (RFC 6675 §2): DupAcks restarts at 1, new data goes out by pipe, IsLost(snd_una) recovers.
//! * `limited_transmit` (RFC 3042): without SACK, each of the first two duplicate ACKs sends one
//!   new segment if no more than cwnd + 2 segments would then be outstanding; cwnd is unchanged.
//! * `recovery = "prr"` (RFC 6937) replaces inflation/deflation (and, with SACK, cwnd = ssthresh)
//!   by proportional rate reduction. Without SACK, pipe is estimated as outstanding minus the
//!   duplicate ACKs since the last cumulative advance, DeliveredData as one segment per duplicate
//!   ACK and the cumulative advance less the duplicates already counted (RFC 6937 §3).
//! * After a timeout every variant sets cwnd = 1, retransmits from `snd_una` (go-back-N) and sets
//!   `recover = snd_max`. Whether duplicate ACKs for data sent before `recover` may start another
//!   fast retransmit is `fast_retransmit_guard`: no guard (RFC 5681 Reno's default), RFC 6582 §4.1
//!   (the others' default) or ns-2's `bugFix_`, which keeps ns-2's Reno from halving twice per
//!   window and sends it to a timeout instead. SACK information is discarded (RFC 2018 §8).
//! * ECN (RFC 3168 §6.1.2): an echo halves (DCTCP: cuts by α/2) at most once per window; a loss
//!   reduction counts as that window's reduction too; both set CWR on the next new segment; an
//!   ACK with ECE never grows the window. Retransmissions are sent Not-ECT (§6.1.5), or ECT as
//!   ns-2 sends them with `ecn_retransmit_ect`. New data is
//!   sent ECT(0), or ECT(1) with `ecn_l4s` (the L4S identifier, RFC 9331 §4.1).
//!   `ecn_style = "ns2"` reacts as ns-2.35's `TcpAgent` does instead (`EcnStyle::Ns2`: echoes on
//!   duplicate ACKs too, cwnd halved without a floor, no second cut for a loss or timeout in the
//!   window an echo reduced, CWR on retransmissions too).
//! * `integer_ssthresh` keeps ssthresh a whole number of segments (ns-2's `int ssthresh_`).
//! * No handshake: `start` sends the initial window.
//! * `ns3_reno_sack` replaces NewReno's recovery by ns-3 3.44's own for connections without SACK
//!   (`sender/ns3_nosack.rs`), and `ns3_sack_recovery` SACK + PRR recovery by ns-3's
//!   (`sender/ns3_sack.rs`), so results can be matched with ns-3's; `cubic-ns3` grows by what
//!   ns-3's `ProcessAck` hands it (`ns3_segments_acked`).
//! * `rack_tlp` (SACK only) replaces RFC 6675's DupThresh loss test by RFC 8985's RACK and adds
//!   its tail loss probe (`rack_tlp.rs`; `sender/rack.rs` wires it in): a segment is lost once
//!   one sent after it is delivered and the reordering window has passed, so lost
//!   retransmissions are found without a timeout; recovery starts when RACK marks a loss; a
//!   timeout marks only the overdue segments lost (§6.3), not all outstanding. As in Linux
//!   (not RFC 6298 (5.1)), resending `snd_una` restarts the retransmission timer.

mod bbr;
mod ns3_nosack;
mod ns3_sack;
mod pacing;
mod rack;

use std::collections::BTreeSet;

use super::rtt::RttEstimator;
use super::congestion::CcState;
use super::cubic_linux::SlowStartView;
use super::pacing::Pacer;
use super::prr::Prr;
use super::rack_tlp::RackTlp;
use super::reno_sack::RenoSackBoard;
use super::scoreboard::Scoreboard;
use super::vegas_base_rtt::VegasBaseRtt;
use super::config::EcnStyle;
use super::{CongestionControl, FastRetransmitGuard, LedbatVariant, Recovery, RttHintSource, TcpConfig, TcpVariant};
use crate::engine::{Dur, Time};
use crate::packet::{Ecn, FlowId, Packet, PacketKind, FLAG_CWR, FLAG_ECE, FLAG_FIN, FLAG_RETRANSMIT};

/// What the last window reduction was, for `ecn_style = "ns2"` (ns-2's `last_cwnd_action_`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LastCut {
    /// A fast retransmit, or none yet.
    Other,
    /// An ECN echo (`CWND_ACTION_ECN`).
    Ecn,
    /// A retransmission timeout (`CWND_ACTION_TIMEOUT`).
    Timeout,
}

/// Sender counters.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpSenderStats {
    /// Data segments transmitted, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Slow starts ended by HyStart (`cubic-linux`).
    pub hystart_exits: u64,
    /// Fast retransmits (loss-recovery episodes entered on duplicate ACKs / SACK).
    pub fast_retransmits: u64,
    /// Window reductions caused by ECN echoes.
    pub ecn_reductions: u64,
    /// `ecn_style = "ns2"`: timeouts within an ECN-reduced window (cwnd = 1, ssthresh kept), and
    /// expiries with nothing outstanding after an echo took cwnd below one segment; counted in
    /// `timeouts` too. ns-2 counts neither in `nrexmit_` (tcp.cc `TcpAgent::timeout`).
    pub ecn_window_timeouts: u32,
    /// RTT samples taken.
    pub rtt_samples: u64,
    /// `rack_tlp`: tail loss probes sent (RFC 8985 §7.3).
    pub tlp_probes: u32,
    /// `rack_tlp`: segments RACK marked lost (RFC 8985 §6.2 step 5; timeouts not counted).
    pub rack_losses: u32,
    /// Time spent waiting for retransmission timeouts that expired: for each expiry, the time
    /// since the timer was last (re)started (Morris 1999's "time in timeout", spec seed004 §4).
    pub timeout_wait_ns: u64,
    /// Integral of cwnd over time since `start`, segment·nanoseconds (time-average window).
    pub cwnd_seg_ns: f64,
}

/// A TCP sender. Sequence numbers count segments.
pub struct TcpSender {
    flow: FlowId,
    /// Oldest unacknowledged segment: ACK(snd_una + n) acknowledges n more segments.
    snd_una: u32,
    /// Next segment to send outside SACK recovery (reset to `snd_una` by go-back-N).
    snd_nxt: u32,
    /// One past the highest segment ever sent; segments below it are retransmissions.
    snd_max: u32,
    /// Congestion window, segments.
    cwnd: f64,
    /// Slow-start threshold, segments.
    ssthresh: f64,
    /// Consecutive duplicate ACKs.
    dupacks: u32,
    /// In fast recovery (Reno, NewReno, SACK).
    in_recovery: bool,
    /// `recover` of RFC 6582 / RecoveryPoint of RFC 6675: one past the highest segment sent when
    /// loss recovery (or a timeout) began.
    recover: u32,
    /// SACK: one past the highest segment retransmitted in this recovery (HighRxt + 1).
    high_rxt: u32,
    /// After a timeout, `snd_max` when it fired, until the cumulative ACK reaches it (0: none):
    /// the ACK that reaches it grows the window only by what it acknowledges beyond (ns-3
    /// `ProcessAck` leaving `CA_LOSS`: ackNumber − m_recover), not by the data the receiver held.
    /// With `keep_sack_after_timeout`, every unSACKed segment below it is lost and is resent by
    /// RFC 6675's NextSeg meanwhile.
    timeout_recover: u32,
    rtt: RttEstimator,
    /// The segment being timed and when it was sent (Karn: cleared by any retransmission).
    timed: Option<(u32, Time)>,
    /// Retransmission timer deadline, `Time::NEVER` when stopped.
    rto_at: Time,
    /// When the retransmission timer was last started.
    rto_armed_at: Time,
    /// Offset of this host's coarse-timer tick grid: with `coarse_timer`, the retransmission timer
    /// expires only at `timer_phase + k·timer_granularity` (each BSD host runs its own 500-ms
    /// `tcp_slowtimo` clock from its own boot, so hosts tick out of phase); zero: ticks at k·G.
    /// Invariant: `timer_phase < timer_granularity` (checked at configuration time).
    timer_phase: Dur,
    /// `stats.cwnd_seg_ns` covers time up to here.
    integrated_to: Time,
    /// ECN: no further reduction until `snd_una` passes this (once per window, RFC 3168 §6.1.2).
    ecn_recover: u32,
    /// ECN: set CWR on the next new segment.
    cwr_pending: bool,
    /// `ecn_style = "ns2"`: what the last window reduction was (ns-2's `last_cwnd_action_`).
    last_cut: LastCut,
    /// The window to leave fast recovery with, when it is not ssthresh: the unrounded half with
    /// `integer_ssthresh`, the window as it was for ns-2's fast retransmit without a cut (NaN: none,
    /// leave with ssthresh; a bare `f64` keeps the sender within its size budget).
    recovery_cwnd: f64,
    /// Congestion-control state (Reno, CUBIC, DCTCP).
    cc: CcState,
    /// PRR counters of the current recovery episode.
    prr: Prr,
    /// NewReno: a partial ACK has arrived in this recovery (only the first restarts the timer).
    partial_ack_seen: bool,
    /// Smallest RTT seen, ns (`u64::MAX` before the first sample): Lee 2002's hint, from every ACK
    /// of new data via the echoed timestamp (a fine-grained clock, not the RTO estimator's).
    min_rtt_ns: u64,
    /// `rtt_hint = "sender-vegas"`: ns-2 Vegas's baseRTT, which replaces `min_rtt_ns` as the hint.
    vegas: Option<Box<VegasBaseRtt>>,
    /// SACK scoreboard, allocated on the first SACK block.
    scoreboard: Option<Box<Scoreboard>>,
    /// `ns3_reno_sack`: ns-3's emulated scoreboard of the segments outstanding.
    reno_board: Option<Box<RenoSackBoard>>,
    /// `ns3_sack_recovery`: the outstanding segments that were resent (ns-3's `m_retrans` flags).
    ns3_rexmits: Option<Box<BTreeSet<u32>>>,
    /// `rack_tlp`: RFC 8985's per-segment transmit times, loss marks and timers.
    rack: Option<Box<RackTlp>>,
    /// One past the last segment of a finite transfer (`u32::MAX` for a bulk sender).
    data_end: u32,
    /// Payload of segment `data_end − 1` when a `begin_transfer_bytes` transfer ends short; 0 = as
    /// `TcpConfig::payload_of` says.
    last_payload: u32,
    /// Segments an application-limited source has written so far (`u32::MAX`: unlimited, the
    /// bulk FTP default). New data is sent only below it (ns-2 `Agent/TCP` driven by a CBR
    /// application: each write raises `curseq_`; Kumar 2003's "TCP-friendly CBR" reading, see
    /// `docs/tsq.md`).
    app_limit: u32,
    /// When a data segment last left (RFC 5681 §4.1's idle test).
    last_sent_at: Time,
    /// `pacing = true`: the pacing clock (sender/pacing.rs).
    pacer: Option<Box<Pacer>>,
    stats: TcpSenderStats,
}

impl TcpSender {
    /// A sender for `flow` that has not started.
    pub fn new(flow: FlowId, cfg: &TcpConfig) -> TcpSender {
        TcpSender {
            flow,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: cfg.initial_window as f64,
            ssthresh: cfg.initial_ssthresh as f64,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            high_rxt: 0,
            timeout_recover: 0,
            rtt: RttEstimator::default(),
            timed: None,
            rto_at: Time::NEVER,
            rto_armed_at: Time::ZERO,
            timer_phase: Dur::ZERO,
            integrated_to: Time::NEVER,
            ecn_recover: 0,
            cwr_pending: false,
            last_cut: LastCut::Other,
            recovery_cwnd: f64::NAN,
            cc: CcState::with_settings(cfg.congestion_control, cfg.ledbat, cfg.hystart, cfg.initial_window, cfg.mss),
            prr: Prr::default(),
            partial_ack_seen: false,
            min_rtt_ns: u64::MAX,
            vegas: (cfg.rtt_hint == RttHintSource::SenderVegas).then(Box::default),
            scoreboard: None,
            reno_board: cfg.ns3_reno_sack.then(|| Box::new(RenoSackBoard::new(0))),
            ns3_rexmits: cfg.ns3_sack_recovery.then(Box::default),
            rack: cfg.rack_tlp.then(Box::default),
            data_end: cfg.transfer_segments().map_or(u32::MAX, |n| n.min(u32::MAX as u64) as u32),
            last_payload: 0,
            app_limit: u32::MAX,
            last_sent_at: Time::ZERO,
            pacer: cfg.pacing.then(|| Box::new(Pacer::new())),
            stats: TcpSenderStats::default(),
        }
    }

    /// Makes the sender application-limited with nothing written yet (before `start`).
    pub fn limit_to_app_writes(&mut self) {
        self.app_limit = 0;
    }

    /// The application writes `segments` more segments; sends what the window allows now, as
    /// an ACK's send step would (nothing extra during PRR recovery, whose budget comes from ACKs).
    pub fn app_write(&mut self, cfg: &TcpConfig, now: Time, segments: u32, out: &mut Vec<Packet>) {
        self.integrate(now);
        self.restart_if_idle(cfg, now);
        self.app_limit = self.app_limit.saturating_add(segments);
        if self.in_recovery && cfg.recovery == Recovery::Prr {
            return;
        }
        if self.reno_board.is_some() {
            self.ns3_send_pending(cfg, now, out);
        } else if self.in_recovery && cfg.variant == TcpVariant::Sack {
            self.sack_transmit(cfg, now, out);
        } else {
            self.send_new(cfg, now, out);
        }
        self.rack_schedule_pto(now, false);
    }

    /// The application stops writing: nothing beyond what has been sent goes out until the next
    /// `app_write`; what is in flight is still acknowledged and, if lost, resent (ns-2's FTP
    /// `stop` with the connection kept). `resume` writes again.
    pub fn pause(&mut self) {
        self.app_limit = self.snd_max;
    }

    /// The application writes again without limit after a [`TcpSender::pause`].
    pub fn resume(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        self.app_write(cfg, now, u32::MAX, out);
    }

    /// RFC 5681 §4.1 (ns-2's `slow_start_restart_`): before sending after an idle period longer
    /// than the RTO, with nothing outstanding, cwnd falls to the restart window min(IW, cwnd);
    /// ssthresh is kept.
    fn restart_if_idle(&mut self, cfg: &TcpConfig, now: Time) {
        let idle = self.snd_una == self.snd_max && self.snd_max > 0;
        if cfg.restart_after_idle && idle && now.saturating_since(self.last_sent_at) > self.rtt.rto(cfg) {
            self.cwnd = self.cwnd.min(f64::from(cfg.initial_window));
        }
    }

    /// One past the last segment the sender may send: the transfer's end or the application's
    /// writes, whichever is first.
    #[inline]
    fn send_end(&self) -> u32 {
        self.data_end.min(self.app_limit)
    }

    /// Starts the connection (no handshake is modelled): sends the initial window.
    pub fn start(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        self.integrated_to = now;
        self.send_new(cfg, now, out);
        self.rack_schedule_pto(now, false);
    }

    /// Starts a transfer of `segments` full segments as a fresh connection once the previous
    /// one is complete (ns' agent `reset`, Morris 1999 Ch. 7): initial window and ssthresh, RTT
    /// estimator forgotten (RTO back to `initial_rto`), no recovery state. Sequence numbers
    /// continue, so the receiver needs no reset; counters and integrals carry on.
    pub fn begin_transfer(&mut self, cfg: &TcpConfig, now: Time, segments: u32, out: &mut Vec<Packet>) {
        self.start_transfer(cfg, now, segments, 0, out);
    }

    /// As [`TcpSender::begin_transfer`], for `bytes` of payload: full segments and a last one that
    /// carries the remainder (a web reply of 300 B is one 300-B segment, not a full one).
    pub fn begin_transfer_bytes(&mut self, cfg: &TcpConfig, now: Time, bytes: u64, out: &mut Vec<Packet>) {
        let mss = u64::from(cfg.mss);
        let segments = bytes.div_ceil(mss).max(1);
        let last = (bytes - (segments - 1) * mss).max(1);
        let last_payload = if last == mss { 0 } else { last as u32 };
        self.start_transfer(cfg, now, segments.min(u64::from(u32::MAX)) as u32, last_payload, out);
    }

    fn start_transfer(&mut self, cfg: &TcpConfig, now: Time, segments: u32, last_payload: u32, out: &mut Vec<Packet>) {
        debug_assert!(self.snd_una == self.snd_max, "previous transfer complete");
        self.integrate(now);
        let fresh = TcpSender::new(self.flow, cfg);
        *self = TcpSender {
            snd_una: self.snd_una,
            snd_nxt: self.snd_una,
            snd_max: self.snd_una,
            recover: self.snd_una,
            high_rxt: self.snd_una,
            ecn_recover: self.snd_una,
            data_end: self.snd_una + segments.max(1),
            last_payload,
            app_limit: self.app_limit,
            integrated_to: now,
            stats: self.stats,
            timer_phase: self.timer_phase,
            ..fresh
        };
        if let Some(board) = self.reno_board.as_deref_mut() {
            *board = RenoSackBoard::new(self.snd_una);
        }
        self.send_new(cfg, now, out);
        self.rack_schedule_pto(now, false);
    }

    /// Adds cwnd × (now − last event) to the window integral.
    fn integrate(&mut self, now: Time) {
        if self.integrated_to != Time::NEVER && now > self.integrated_to {
            self.stats.cwnd_seg_ns += self.cwnd * (now.0 - self.integrated_to.0) as f64;
            self.integrated_to = now;
        }
    }

    /// Handles an arriving ACK.
    pub fn on_ack(&mut self, cfg: &TcpConfig, now: Time, ack: &Packet, out: &mut Vec<Packet>) {
        self.integrate(now);
        if cfg.congestion_control == CongestionControl::Ledbat {
            self.ledbat_sample(cfg, now, ack);
        }
        if self.reno_board.is_some() {
            self.ns3_on_ack(cfg, now, ack, out);
            return;
        }
        if self.ns2_ecn(cfg) && ack.has(FLAG_ECE) && ack.ack >= self.snd_una {
            self.ns2_ecn_echo(cfg, ack.ack); // ns-2 reacts before it reads the ACK, duplicate or not
        }
        let sacked_before = self.sacked_count();
        let una_before = self.snd_una;
        // RFC 6675 §2: an ACK whose SACK blocks cover data not SACKed before is a duplicate ACK,
        // "even if it ... moves the cumulative acknowledgment point".
        let mut new_sack_info = false;
        if cfg.variant == TcpVariant::Sack && ack.sack_len > 0 {
            let una = self.snd_una.max(ack.ack);
            let sb = self.scoreboard.get_or_insert_with(Default::default);
            let known = sb.sacked_above(una.saturating_sub(1));
            sb.update_noting(ack.sack_blocks(), una, self.rack.as_deref_mut().map(|r| &mut r.newly_sacked));
            new_sack_info = sb.sacked_above(una.saturating_sub(1)) > known;
        }
        self.rack_on_ack(cfg, now, ack);
        let acked_new = ack.ack > self.snd_una && ack.ack <= self.snd_max;
        if acked_new {
            self.on_new_ack(cfg, now, ack, sacked_before, new_sack_info, out);
        } else if ack.ack == self.snd_una && self.snd_max > self.snd_una {
            self.on_dupack(cfg, now, sacked_before, out);
        }
        self.bbr_after_ack(cfg, now, ack, una_before, out);
        self.rack_schedule_pto(now, acked_new);
    }

    /// LEDBAT's one-way-delay sample (ns-3 `PktsAcked`, called for every ACK that is neither stale
    /// nor an ACK with nothing outstanding): TSval in the ACK's `seq`, TSecr its `sent_at` on the
    /// same 1-ms clock. ns-3 takes samples once it has an RTT; an ACK of new data gives one first.
    fn ledbat_sample(&mut self, cfg: &TcpConfig, now: Time, ack: &Packet) {
        let new_data = ack.ack > self.snd_una && ack.ack <= self.snd_max;
        let counts = new_data || (ack.ack == self.snd_una && self.snd_max > self.snd_una);
        let has_rtt = new_data || self.rtt.srtt().is_some();
        if let (true, Some(l)) = (counts, self.cc.ledbat_mut()) {
            l.on_ack_timestamps(now, ack.seq, ms_clock(ack.sent_at), cfg.timestamps, has_rtt);
        }
    }

    /// LEDBAT's growth on an ACK outside recovery: `acked` segments as the variant counts them,
    /// `outstanding` (before, after) the ACK.
    fn ledbat_grow(&mut self, cfg: &TcpConfig, acked: u32, outstanding: (u32, u32)) {
        if let Some(l) = self.cc.ledbat_mut() {
            l.grow(&mut self.cwnd, &mut self.ssthresh, acked, outstanding, cfg.mss);
        }
    }

    /// SACKed segments above `snd_una` on the scoreboard.
    fn sacked_count(&self) -> u32 {
        self.scoreboard.as_ref().map_or(0, |sb| sb.sacked_above(self.snd_una))
    }

    /// An ACK of new data: the minimum-RTT hint, Vegas's base RTT and the RTT estimator's sample
    /// (from every such ACK with timestamps, else from the timed segment's, Karn's rule).
    fn observe_ack_timing(&mut self, cfg: &TcpConfig, now: Time, ack: &Packet) {
        // The echo can only over-state a round trip (it may include waiting for a hole or a
        // delayed ACK), so the running minimum is the path's RTT as this flow has seen it.
        let sample_ns = now.saturating_since(ack.sent_at).0;
        self.min_rtt_ns = self.min_rtt_ns.min(sample_ns);
        if let Some(vegas) = self.vegas.as_mut() {
            // t_seqno_ after ns-2's newack(): never below the new cumulative ACK.
            vegas.on_new_ack(now, ack.ack - 1, self.snd_nxt.max(ack.ack), sample_ns);
        }
        if cfg.timestamps {
            // RFC 7323 §4.1 RTTM: every ACK of new data is a valid sample, retransmission or not.
            let sample = now.saturating_since(ack.sent_at);
            self.rtt.sample(sample);
            self.cc_rtt_sample(cfg, sample, now, ack.ack);
            self.stats.rtt_samples += 1;
        } else if let Some((seq, sent)) = self.timed {
            if ack.ack > seq {
                let sample = now.saturating_since(sent); // Karn: `timed` is never a retransmission
                self.rtt.sample(sample);
                self.cc_rtt_sample(cfg, sample, now, ack.ack);
                self.stats.rtt_samples += 1;
                self.timed = None;
            }
        }
    }

    /// An RTT sample for the congestion control, from an ACK up to `ack`; Linux's HyStart may
    /// end slow start on it (ssthresh = cwnd, `hystart_update`).
    fn cc_rtt_sample(&mut self, cfg: &TcpConfig, sample: Dur, now: Time, ack: u32) {
        let view = SlowStartView {
            snd_una: ack, snd_nxt: self.snd_max, cwnd: self.cwnd, ssthresh: self.ssthresh, mss: cfg.mss, srtt: self.rtt.srtt(),
        };
        if let Some(ssthresh) = self.cc.observe_rtt(sample, now, view) {
            self.ssthresh = ssthresh;
            self.stats.hystart_exits += 1;
        }
    }

    /// Moves `snd_una` to a new cumulative ACK and resets DupAcks. Returns the segments the window
    /// may grow by: all acknowledged, except that the ACK ending a timeout's loss state counts only
    /// those beyond its recovery point (ns-3 `ProcessAck` leaving CA_LOSS: ackNumber − m_recover).
    fn advance_una(&mut self, ack: u32) -> u32 {
        let growth_acked = if self.timeout_recover > self.snd_una && ack >= self.timeout_recover {
            ack - self.timeout_recover
        } else {
            ack - self.snd_una
        };
        if ack >= self.timeout_recover {
            self.timeout_recover = 0;
        }
        self.snd_una = ack;
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        self.dupacks = 0;
        self.ns3_forget_rexmits_below(ack);
        growth_acked
    }

    /// RFC 6298 (5.2)/(5.3) on an ACK of new data: stop the timer when all is acknowledged, else
    /// restart it if `restart` (NewReno's later partial ACKs do not).
    fn timer_after_new_ack(&mut self, cfg: &TcpConfig, now: Time, restart: bool) {
        if restart && cfg.new_ack_clears_backoff {
            self.rtt.clear_backoff(); // ns-3 `NewAck(ack, resetRTO = true)`
        }
        // ns-2's `newtimer` also keeps it running while an echo holds cwnd below one segment.
        let stalled = self.ns2_ecn(cfg) && self.cwnd < 1.0;
        if self.snd_una >= self.snd_max && !stalled {
            self.rto_at = Time::NEVER;
        } else if restart || stalled {
            self.rto_at = Time::NEVER;
            self.arm_timer(cfg, now);
        }
    }

    fn on_new_ack(&mut self, cfg: &TcpConfig, now: Time, ack: &Packet, sacked_before: u32, new_sack_info: bool,
                  out: &mut Vec<Packet>) {
        let acked = ack.ack - self.snd_una;
        self.observe_ack_timing(cfg, now, ack);
        let ece = cfg.ecn && ack.has(FLAG_ECE);
        // The window in use before this ACK, for an ECN cut (see the module doc on FlightSize);
        // only an echo needs it, and with `ssthresh_from_pipe` it walks the scoreboard.
        let window_before = if ece { self.reduction_window(cfg, false) } else { 0.0 };
        let dupacks_before = self.dupacks;
        // ns-3's `m_isRetransDataAcked` (asked only in recovery): this ACK covers a resent segment.
        let acks_retransmission = self.in_recovery
            && self.ns3_rexmits.as_ref().is_some_and(|r| r.range(self.snd_una..ack.ack).next().is_some());
        let in_timeout_loss = self.timeout_recover > self.snd_una;
        let outstanding_before = self.snd_max - self.snd_una;
        let growth_acked = self.advance_una(ack.ack);
        let outstanding = (outstanding_before, self.snd_max - self.snd_una);
        let ledbat = (cfg.congestion_control == CongestionControl::Ledbat).then_some(cfg.ledbat.variant);
        let leaves_timeout_loss = in_timeout_loss && self.timeout_recover == 0;
        self.cc.observe_ack(acked, ece, self.snd_una, self.snd_max);
        // RFC 6675 §5: a cumulative ACK resets DupAcks; if it also carries new SACK information
        // it is a duplicate ACK (§2) and counts one, and IsLost(HighACK + 1) starts recovery.
        let sack_dupack = new_sack_info && !self.in_recovery;
        if sack_dupack {
            self.dupacks = 1;
        }
        let enter_recovery = if self.rack.is_some() {
            // RFC 8985: recovery starts when RACK marks a segment lost, SACK blocks or not.
            !self.in_recovery && self.timeout_recover == 0 && self.may_start_recovery(cfg) && self.rack_has_lost()
        } else {
            sack_dupack
                && self.may_start_recovery(cfg) // RFC 6675 §5.1 / RFC 6582 §4.1
                && (self.dupacks >= cfg.dupack_threshold
                    || self.scoreboard.as_ref().is_some_and(|sb| sb.is_lost(self.snd_una, cfg.dupack_threshold)))
        };
        // Segments this ACK newly delivers, cumulatively or by SACK (RFC 6937's DeliveredData with
        // SACK; Linux's `acked_sacked`): a SACKed segment counts when SACKed, not again when covered.
        let newly_delivered = (i64::from(acked) + i64::from(self.sacked_count()) - i64::from(sacked_before)).max(0) as u32;
        let mut restart_timer = true;
        if enter_recovery {
            // No growth: this ACK starts a loss recovery (step 4 below).
        } else if ece && !self.in_recovery && self.snd_una > self.ecn_recover && !self.ns2_ecn(cfg) {
            // RFC 3168 §6.1.2: reduce once per window of data.
            let cut = self.cc.ecn_window(window_before);
            self.store_ssthresh(cfg, cut);
            self.cwnd = cut;
            self.note_window_reduced(cfg);
            self.stats.ecn_reductions += 1;
        } else if self.in_recovery {
            let delivered = if cfg.variant == TcpVariant::Sack {
                newly_delivered
            } else {
                acked.saturating_sub(dupacks_before) // RFC 6937 §3: less the duplicates already counted
            };
            restart_timer = if cfg.ns3_sack_recovery && self.snd_una < self.recover {
                self.ns3_sack_partial_ack(cfg, now, delivered, new_sack_info, acks_retransmission, out)
            } else {
                self.recovery_ack(cfg, now, acked, delivered, out)
            };
            if !self.in_recovery && cfg.congestion_control == CongestionControl::CubicNs3 && !cfg.count_acked_segments {
                // ns-3 `ProcessAck` leaving CA_RECOVERY: cwnd = ssthresh, then `IncreaseWindow` with
                // every segment the ACK covers (ackNumber − oldHeadSequence), SACKed ones included.
                let srtt = self.rtt.srtt();
                self.cc.grow(&mut self.cwnd, self.ssthresh, acked, now, srtt, false);
            } else if !self.in_recovery && ledbat == Some(LedbatVariant::Ns3) {
                self.ledbat_grow(cfg, acked, outstanding); // the same `IncreaseWindow` call
            }
        } else if !ece && ledbat.is_some() {
            match ledbat {
                // ns-3 calls `IncreaseWindow` only in CA_OPEN (or a timeout's CA_LOSS): not on an
                // ACK with new SACK blocks, which moves it to CA_DISORDER.
                Some(LedbatVariant::Ns3) if sack_dupack && !in_timeout_loss => {}
                Some(LedbatVariant::Ns3) => {
                    let n = ns3_segments_acked(newly_delivered, growth_acked, sack_dupack, in_timeout_loss, leaves_timeout_loss);
                    self.ledbat_grow(cfg, n, outstanding);
                }
                _ => self.ledbat_grow(cfg, newly_delivered, outstanding), // RFC 6817: bytes_newly_acked
            }
        } else if !ece {
            let srtt = self.rtt.srtt();
            // Linux's `tcp_cong_control` passes every CUBIC the segments an ACK newly delivers.
            let grown_by = if cfg.count_acked_segments || cfg.congestion_control == CongestionControl::CubicLinux {
                newly_delivered
            } else if cfg.congestion_control == CongestionControl::CubicNs3 {
                ns3_segments_acked(newly_delivered, growth_acked, sack_dupack, in_timeout_loss, leaves_timeout_loss)
            } else {
                growth_acked
            };
            self.cc.grow(&mut self.cwnd, self.ssthresh, grown_by, now, srtt, cfg.count_acked_segments);
        }
        self.timer_after_new_ack(cfg, now, restart_timer);
        if enter_recovery {
            self.enter_recovery(cfg, now, newly_delivered.max(1), out);
        } else if self.in_recovery && cfg.variant == TcpVariant::Sack {
            if cfg.recovery == Recovery::Classic {
                self.sack_transmit(cfg, now, out);
            }
        } else if self.in_timeout_nextseg(cfg) {
            self.sack_transmit(cfg, now, out); // a kept-scoreboard (or RACK) timeout's loss state
        } else if !(self.in_recovery && cfg.recovery == Recovery::Prr) {
            self.send_new(cfg, now, out);
            if sack_dupack {
                self.early_transmit(cfg, now, out); // RFC 6675 §5 step (3), by pipe
            }
        }
    }

    /// A new ACK while in fast recovery, `delivered` segments newly delivered (RFC 6937's
    /// DeliveredData). Returns whether the retransmission timer is to be restarted.
    fn recovery_ack(&mut self, cfg: &TcpConfig, now: Time, acked: u32, delivered: u32, out: &mut Vec<Packet>) -> bool {
        let full = self.snd_una >= self.recover;
        let prr = cfg.recovery == Recovery::Prr;
        match cfg.variant {
            // RFC 5681 §3.2 step 6: any new ACK ends Reno's recovery; RFC 6582 §3.2 step 3
            // (option 2) and RFC 6675 §5 end it on the full ACK. RFC 6937: cwnd = ssthresh.
            TcpVariant::Reno => self.leave_recovery(),
            TcpVariant::NewReno if full => self.leave_recovery(),
            TcpVariant::Sack if full => {
                self.leave_recovery();
                self.snd_nxt = self.snd_max;
            }
            TcpVariant::NewReno => {
                // RFC 6582 §3.2 step 4: partial ACK; the timer restarts on the first only.
                let first_partial = !self.partial_ack_seen;
                self.partial_ack_seen = true;
                if prr {
                    self.prr_transmit(cfg, now, delivered, true, out);
                } else {
                    self.retransmit(cfg, now, self.snd_una, out);
                    self.cwnd = (self.cwnd - acked as f64 + 1.0).max(1.0);
                }
                return first_partial;
            }
            TcpVariant::Sack if prr => self.prr_transmit(cfg, now, delivered, false, out),
            TcpVariant::Sack | TcpVariant::Tahoe => {}
        }
        true
    }

    fn leave_recovery(&mut self) {
        self.in_recovery = false;
        self.cwnd = if self.recovery_cwnd.is_nan() { self.ssthresh } else { self.recovery_cwnd };
        self.recovery_cwnd = f64::NAN;
    }

    /// `ecn_style = "ns2"` with ECN on.
    #[inline]
    fn ns2_ecn(&self, cfg: &TcpConfig) -> bool {
        cfg.ecn && cfg.ecn_style == EcnStyle::Ns2
    }

    /// ssthresh after a reduction to `half`: a whole number of segments (at least 2) with
    /// `integer_ssthresh` (ns-2's `ssthresh_ = (int) halfwin`, tcp.cc `slowdown`).
    fn store_ssthresh(&mut self, cfg: &TcpConfig, half: f64) {
        self.ssthresh = if cfg.integer_ssthresh { half.floor().max(2.0) } else { half };
    }

    /// ns-2.35's `TcpAgent::ecn(seqno)` (tcp.cc), for an ACK up to `ack` carrying ECE: once the ACK
    /// passes `recover` (the highest segment sent at the last reduction), or right after a timeout,
    /// `slowdown(CLOSE_CWND_HALF|CLOSE_SSTHRESH_HALF)` with `precisionReduce_`: cwnd = windowd()/2,
    /// windowd() = min(cwnd, receiver window), with no lower bound (below 1 nothing is sent until
    /// the timer fires); ssthresh the same half, at least 2; `recover_ = maxseq_`; CWR on the next
    /// segment (`cong_action_`). Not modelled: `ecn_backoff_`'s timer backoff at cwnd ≤ 1.
    fn ns2_ecn_echo(&mut self, cfg: &TcpConfig, ack: u32) {
        if !(ack > self.recover || self.last_cut == LastCut::Timeout) {
            return;
        }
        self.recover = self.snd_max;
        self.last_cut = LastCut::Ecn;
        let half = self.cwnd.min(f64::from(cfg.max_window)) / 2.0;
        self.store_ssthresh(cfg, half.max(2.0));
        self.cwnd = half;
        if self.in_recovery {
            self.recovery_cwnd = half;
        }
        self.note_window_reduced(cfg);
        self.stats.ecn_reductions += 1;
    }

    fn on_dupack(&mut self, cfg: &TcpConfig, now: Time, sacked_before: u32, out: &mut Vec<Packet>) {
        self.dupacks += 1;
        let sack = cfg.variant == TcpVariant::Sack;
        if self.in_timeout_nextseg(cfg) {
            self.sack_transmit(cfg, now, out); // new SACK blocks lower pipe; no fast retransmit here
            return;
        }
        if self.in_recovery {
            if cfg.recovery == Recovery::Prr && cfg.variant != TcpVariant::Tahoe {
                let delivered = if sack { self.sacked_count().saturating_sub(sacked_before) } else { 1 };
                if cfg.ns3_sack_recovery {
                    self.ns3_sack_dupack(cfg, now, delivered, out);
                } else {
                    self.prr_transmit(cfg, now, delivered, false, out);
                }
            } else if sack {
                self.sack_transmit(cfg, now, out);
            } else {
                self.cwnd += 1.0; // RFC 5681 §3.2 step 4: inflate per duplicate ACK
                self.send_new(cfg, now, out);
            }
            return;
        }
        if self.ns2_ecn(cfg) && self.last_cut == LastCut::Ecn && self.snd_una <= self.recover
            && self.dupacks == cfg.dupack_threshold && self.rack.is_none()
        {
            // ns-2's `dupack_action` (tcp-reno.cc; tcp.cc for Tahoe) in a window an echo already
            // halved: resend without a second reduction, whatever the guard says.
            let delivered = if sack { self.sacked_count().saturating_sub(sacked_before).max(1) } else { 1 };
            self.start_recovery(cfg, now, delivered, false, out);
            return;
        }
        let may_recover = self.may_start_recovery(cfg);
        let sack_lost = sack && self.scoreboard.as_ref().is_some_and(|sb| sb.is_lost(self.snd_una, cfg.dupack_threshold));
        let loss_found = if self.rack.is_some() {
            self.rack_has_lost() // RFC 8985 replaces the DupThresh test
        } else {
            self.dupacks == cfg.dupack_threshold || sack_lost
        };
        if !(may_recover && loss_found) {
            self.early_transmit(cfg, now, out);
            return;
        }
        // The third duplicate (or the SACK that made snd_una lost) delivered data too.
        let delivered = if sack { self.sacked_count().saturating_sub(sacked_before).max(1) } else { 1 };
        self.enter_recovery(cfg, now, delivered, out);
    }

    /// Whether duplicate ACKs may start a fast retransmit now: not, under a guard, for duplicates
    /// of data sent before the last recovery or timeout began (RFC 6582 §4.1; ns-2's `bugFix_`).
    fn may_start_recovery(&self, cfg: &TcpConfig) -> bool {
        match cfg.guard() {
            FastRetransmitGuard::None => true,
            FastRetransmitGuard::Rfc6582 => self.snd_una >= self.recover,
            FastRetransmitGuard::Ns2 => self.snd_una > self.recover,
        }
    }

    /// Fast retransmit and the start of loss recovery (RFC 5681 §3.2 steps 2–3, RFC 6675 §5
    /// step 4, RFC 6937); `delivered` is the triggering ACK's DeliveredData for PRR.
    fn enter_recovery(&mut self, cfg: &TcpConfig, now: Time, delivered: u32, out: &mut Vec<Packet>) {
        self.start_recovery(cfg, now, delivered, true, out);
    }

    /// [`TcpSender::enter_recovery`]; without `cut` (ns-2's fast retransmit in an ECN-reduced
    /// window: `dupack_action`'s `last_cwnd_action_ == CWND_ACTION_ECN` branch) ssthresh,
    /// `recover` and the window stay as they are: Tahoe restarts from cwnd = 1
    /// (`slowdown(CLOSE_CWND_ONE)`), the others resend and inflate from the current window.
    fn start_recovery(&mut self, cfg: &TcpConfig, now: Time, delivered: u32, cut: bool, out: &mut Vec<Packet>) {
        let sack = cfg.variant == TcpVariant::Sack;
        let mut half = None;
        if cut {
            let window = self.reduction_window(cfg, true);
            let ssthresh = self.cc.loss_ssthresh(window); // RFC 5681 (4)
            self.store_ssthresh(cfg, ssthresh);
            half = Some(ssthresh);
            self.note_window_reduced(cfg);
            self.recover = self.snd_max;
        } else if cfg.variant == TcpVariant::Tahoe {
            self.cwr_pending = true; // CLOSE_CWND_ONE sets `cong_action_`
        }
        self.last_cut = LastCut::Other;
        self.stats.fast_retransmits += 1;
        if cfg.variant == TcpVariant::Tahoe {
            self.cwnd = 1.0;
            // 4.3BSD-Tahoe clears the retransmission timer and lets tcp_output start it afresh,
            // as ns-1/ns-2's Tahoe `reset_rtx_timer` does: go-back-N gets a full RTO.
            self.rto_at = Time::NEVER;
            self.go_back_n(cfg, now, out);
            return;
        }
        self.in_recovery = true;
        self.partial_ack_seen = false;
        if cfg.restart_timer_on_fast_retransmit {
            // ns-2 `dupack_action`: `reset_rtx_timer(1,0)` before the retransmission goes out.
            self.arm_timer(cfg, now);
        }
        if cfg.ns3_sack_recovery {
            self.ns3_sack_enter_recovery(cfg, now, delivered, out);
            return;
        }
        if cfg.recovery == Recovery::Prr {
            self.prr = Prr::start(self.snd_max - self.snd_una);
            self.prr_transmit(cfg, now, delivered, true, out);
            return;
        }
        // The window to leave recovery with: ssthresh, or the unrounded half (`integer_ssthresh`),
        // or without a cut the window as it is.
        let base = match half {
            Some(h) if cfg.integer_ssthresh && h != self.ssthresh => {
                self.recovery_cwnd = h;
                h
            }
            Some(_) => {
                self.recovery_cwnd = f64::NAN;
                self.ssthresh
            }
            None => {
                self.recovery_cwnd = self.cwnd;
                self.cwnd
            }
        };
        if sack {
            self.cwnd = base; // RFC 6675 §5 step 4.2
            // (4.3): the first segment presumed lost goes out at once, whatever pipe says.
            self.retransmit_hole(cfg, now, out);
            self.sack_transmit(cfg, now, out);
        } else {
            self.retransmit(cfg, now, self.snd_una, out);
            // RFC 5681 §3.2 step 3 (ns-2: `window()` = int(cwnd_) + dupwnd_)
            self.cwnd = if half.is_some() && !cfg.integer_ssthresh { self.ssthresh } else { base.floor() } + cfg.dupack_threshold as f64;
            self.send_new(cfg, now, out);
        }
    }

    /// New data on a duplicate ACK below the threshold: by pipe with SACK (ns-3; RFC 6675 §5),
    /// else limited transmit (RFC 3042) if enabled, Tahoe included: ns-2's `singledup_` sends one
    /// segment per early dupack from `TcpAgent::recv`, the Tahoe agent, within cwnd + dupacks.
    /// Only previously unsent data goes out.
    fn early_transmit(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        if self.snd_nxt != self.snd_max {
            return; // go-back-N in progress: the next segment is not new data
        }
        let budget = if cfg.variant == TcpVariant::Sack {
            let pipe = self.pipe(cfg);
            (self.cwnd - f64::from(pipe)).floor().max(0.0) as u32
        } else if cfg.limited_transmit && self.dupacks <= 2 {
            // RFC 3042 §2: at most cwnd + 2 segments outstanding.
            let allowed = self.cwnd.floor() as u32 + self.dupacks;
            allowed.saturating_sub(self.snd_max - self.snd_una).min(1)
        } else {
            0
        };
        self.send_new_segments(cfg, now, budget, out);
    }

    /// Below this every unSACKed segment is lost: a timeout that kept the scoreboard (0: none).
    /// With RACK a timeout marks segments lost one by one instead (RFC 8985 §6.3).
    fn lost_below(&self, cfg: &TcpConfig) -> u32 {
        let keeps = cfg.keep_sack_after_timeout && cfg.variant == TcpVariant::Sack && self.rack.is_none();
        if keeps { self.timeout_recover } else { 0 }
    }

    /// In a timeout's loss recovery that resends by NextSeg (kept scoreboard, or RACK).
    fn in_timeout_nextseg(&self, cfg: &TcpConfig) -> bool {
        self.lost_below(cfg) > 0 || (self.rack.is_some() && self.timeout_recover != 0)
    }

    /// The fast retransmit of a SACK sender: `snd_una`, or with RACK the first segment it marked
    /// lost.
    fn retransmit_hole(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        if self.rack.is_some() {
            self.retransmit_first_lost(cfg, now, out);
        } else {
            self.high_rxt = self.snd_una + 1;
            self.retransmit(cfg, now, self.snd_una, out);
        }
    }

    /// Segments presumed in the network: RFC 6675 SetPipe with SACK; without it, the data
    /// outstanding less one segment per duplicate ACK since the last cumulative advance.
    fn pipe(&self, cfg: &TcpConfig) -> u32 {
        if let Some(rack) = self.rack.as_deref() {
            return rack.pipe(self.scoreboard.as_deref(), self.snd_una, self.snd_max);
        }
        match (&self.scoreboard, cfg.variant) {
            (Some(sb), TcpVariant::Sack) => sb.pipe(self.snd_una, self.snd_max, self.high_rxt, cfg.dupack_threshold, self.lost_below(cfg)),
            _ => (self.snd_max - self.snd_una).saturating_sub(self.dupacks),
        }
    }

    /// RFC 6937 per-ACK step: cwnd = pipe + sndcnt, then send. Without SACK, `hole` retransmits
    /// `snd_una` first (the fast retransmit, or NewReno's partial-ACK retransmission).
    fn prr_transmit(&mut self, cfg: &TcpConfig, now: Time, delivered: u32, hole: bool, out: &mut Vec<Packet>) {
        let sack = cfg.variant == TcpVariant::Sack;
        let pipe = self.pipe(cfg);
        let sndcnt = self.prr.sndcnt(delivered, pipe, self.ssthresh, !sack);
        self.cwnd = f64::from(pipe + sndcnt).max(1.0);
        if sack {
            if hole {
                // RFC 6675 (4.3): the first lost segment goes out whatever pipe says.
                self.retransmit_hole(cfg, now, out);
            }
            self.sack_transmit(cfg, now, out);
            return;
        }
        let mut budget = sndcnt;
        if hole {
            self.retransmit(cfg, now, self.snd_una, out); // sent even at sndcnt 0; prr_out absorbs it
            budget = budget.saturating_sub(1);
        }
        self.send_new_segments(cfg, now, budget, out);
    }

    /// Sends up to `n` previously unsent segments, as the receiver window and the data allow.
    fn send_new_segments(&mut self, cfg: &TcpConfig, now: Time, n: u32, out: &mut Vec<Packet>) {
        for _ in 0..n {
            if !self.may_send_new(cfg) || !self.pace(now) {
                break;
            }
            let seq = self.snd_max;
            self.transmit(cfg, now, seq, out);
            self.snd_nxt = self.snd_max;
        }
    }

    /// RFC 6675 §5 step (C): while cwnd − pipe ≥ 1, send NextSeg.
    fn sack_transmit(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        if self.rack.is_some() {
            return self.sack_transmit_rack(cfg, now, out);
        }
        let thresh = cfg.dupack_threshold;
        let lost_below = self.lost_below(cfg);
        let sb = self.scoreboard.take().unwrap_or_default(); // moved out so `self` stays usable
        loop {
            let pipe = sb.pipe(self.snd_una, self.snd_max, self.high_rxt, thresh, lost_below);
            if self.cwnd - (pipe as f64) < 1.0 || !self.pace(now) {
                break;
            }
            let from = self.high_rxt.max(self.snd_una);
            if let Some(seq) = sb.first_unsacked(from, self.snd_max, thresh, true, lost_below) {
                self.high_rxt = seq + 1; // rule 1: a lost segment
                self.retransmit(cfg, now, seq, out);
            } else if self.may_send_new(cfg) {
                let seq = self.snd_max; // rule 2: new data
                self.transmit(cfg, now, seq, out);
                self.snd_nxt = seq + 1;
            } else if let Some(seq) = sb.first_unsacked(from, self.snd_max.min(sb.below_highest_sacked()), thresh, false, lost_below) {
                // Rule 3: an unSACKed segment not yet deemed lost, above HighRxt (1.a) and below
                // the highest SACKed segment (1.b): never one the receiver may simply not have yet.
                self.high_rxt = seq + 1;
                self.retransmit(cfg, now, seq, out);
            } else {
                break;
            }
        }
        self.scoreboard = Some(sb);
    }

    /// NextSeg over RACK's loss marks: rule (1) is a segment RACK marked lost, (2) new data,
    /// (3) an unSACKed segment neither lost nor being resent, above HighRxt.
    fn sack_transmit_rack(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        loop {
            if self.cwnd - f64::from(self.pipe(cfg)) < 1.0 || !self.pace(now) {
                break;
            }
            let rack = self.rack.as_deref().expect("rack_tlp");
            let sb = self.scoreboard.as_deref();
            if let Some(seq) = rack.first_lost(sb, self.snd_una, self.snd_max) {
                self.high_rxt = self.high_rxt.max(seq + 1);
                self.retransmit(cfg, now, seq, out);
            } else if self.may_send_new(cfg) {
                let seq = self.snd_max;
                self.transmit(cfg, now, seq, out);
                self.snd_nxt = seq + 1;
            } else if let Some(seq) = rack.first_unsacked_in_flight(sb, self.high_rxt.max(self.snd_una), self.snd_max) {
                self.high_rxt = seq + 1;
                self.retransmit(cfg, now, seq, out);
            } else {
                break;
            }
        }
    }

    /// Handles a timer expiry; does nothing unless a timer is due (RACK's reordering timer, the
    /// tail loss probe's, or the retransmission timer).
    pub fn on_timer(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        self.rack_on_timer(cfg, now, out);
        self.on_pacing_timer(cfg, now, out);
        let stalled = self.ns2_ecn(cfg) && self.cwnd < 1.0; // an echo took cwnd below one segment
        if now < self.rto_at || (self.snd_una >= self.snd_max && !stalled) {
            return;
        }
        self.integrate(now);
        self.stats.timeouts += 1;
        self.stats.timeout_wait_ns += now.0 - self.rto_armed_at.0;
        if self.snd_una >= self.snd_max {
            // ns-2 `TcpAgent::timeout` with nothing outstanding: cwnd = 1
            // (`CLOSE_CWND_ONE|NO_OUTSTANDING_DATA`), ssthresh kept, no backoff, then send.
            self.stats.ecn_window_timeouts += 1;
            self.cwnd = 1.0;
            self.last_cut = LastCut::Timeout;
            self.note_window_reduced(cfg);
            self.rto_at = Time::NEVER;
            self.send_new(cfg, now, out);
            return;
        }
        // ns-2 `TcpAgent::timeout` in a window an echo halved (`last_cwnd_action_ ==
        // CWND_ACTION_ECN`, `highest_ack_ < recover_`; Reno's `timeout` has just set
        // `recover_ = maxseq_`): cwnd = 1, ssthresh kept.
        let bound = if cfg.variant == TcpVariant::Tahoe { self.recover } else { self.snd_max };
        let ecn_window = self.ns2_ecn(cfg) && self.last_cut == LastCut::Ecn && self.snd_una < bound;
        if ecn_window {
            self.stats.ecn_window_timeouts += 1;
        } else if self.rtt.backoff() == 0 || cfg.halve_at_every_timeout {
            // RFC 5681 (4); a repeated timeout of the same segment keeps ssthresh (§3.1 note),
            // unless `halve_at_every_timeout` (ns-2: half of min(cwnd, window_) every time).
            let window = if self.reno_board.is_some() {
                self.ns3_timeout_window(cfg)
            } else if cfg.halve_at_every_timeout {
                self.uninflated_cwnd(cfg).min(f64::from(cfg.max_window))
            } else {
                self.reduction_window(cfg, false)
            };
            let ssthresh = self.cc.loss_ssthresh(window);
            self.store_ssthresh(cfg, ssthresh);
        }
        self.last_cut = LastCut::Timeout;
        self.recovery_cwnd = f64::NAN;
        self.cc.on_timeout(now, self.snd_max);
        self.note_window_reduced(cfg);
        self.cwnd = 1.0; // RFC 5681 §3.1: loss window
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.timeout_recover = self.snd_max;
        self.high_rxt = self.snd_una;
        if let Some(rexmits) = self.ns3_rexmits.as_deref_mut() {
            rexmits.clear(); // ns-3 `SetSentListLost` clears every `m_retrans` flag
        }
        // ns-3 `SetSentListLost`, Linux `tcp_enter_loss`: SACKed data stays delivered; all the rest
        // outstanding is lost (`lost_below`) and resent through NextSeg, SACKed segments skipped.
        let keep = self.lost_below(cfg) > 0 || (self.rack.is_some() && cfg.keep_sack_after_timeout);
        if !keep {
            if let Some(sb) = self.scoreboard.as_mut() {
                sb.clear(); // RFC 2018 §8
            }
        }
        self.rtt.back_off(); // RFC 6298 (5.5)
        self.rto_at = Time::NEVER;
        if self.reno_board.is_some() {
            self.ns3_timeout(cfg, now, out);
        } else if self.rack.is_some() {
            self.rack_timeout_retransmit(cfg, now, out);
        } else if keep {
            self.sack_transmit(cfg, now, out);
        } else {
            self.go_back_n(cfg, now, out);
        }
        self.arm_timer(cfg, now); // (5.6)
    }

    /// FlightSize for a window reduction: the data outstanding, at most the window really in use
    /// (cwnd without the duplicate-ACK inflation of classic Reno/NewReno recovery).
    fn flight_size(&self, cfg: &TcpConfig) -> f64 {
        f64::from(self.snd_max - self.snd_una).min(self.uninflated_cwnd(cfg))
    }

    /// cwnd without classic fast recovery's inflation by duplicate ACKs.
    fn uninflated_cwnd(&self, cfg: &TcpConfig) -> f64 {
        let inflated = self.in_recovery && cfg.recovery == Recovery::Classic && cfg.variant != TcpVariant::Sack;
        if inflated { self.cwnd.min(self.ssthresh) } else { self.cwnd }
    }

    /// The window a reduction halves: FlightSize, or with `ssthresh_from_pipe` and Reno growth
    /// ns-3's `BytesInFlight()` (the RFC 6675 pipe; at a fast retransmit, `head_lost`, with the
    /// head marked lost as `EnterRecovery` does first). CUBIC and DCTCP keep FlightSize (ns-3's
    /// own reduce cwnd; see docs/tcp-profiles.md for why aqmlab does not follow that yet).
    fn reduction_window(&self, cfg: &TcpConfig, head_lost: bool) -> f64 {
        let ledbat = cfg.congestion_control == CongestionControl::Ledbat;
        if ledbat && cfg.ledbat.variant == LedbatVariant::Rfc6817 {
            return self.cwnd; // RFC 6817 §2.4.2 "on data loss" halves cwnd
        }
        if cfg.congestion_control == CongestionControl::CubicLinux {
            return self.uninflated_cwnd(cfg); // tcp_cubic.c's ssthresh reads snd_cwnd
        }
        // ns-3's LEDBAT is a `TcpNewReno`: it halves what NewReno halves.
        if !cfg.ssthresh_from_pipe || !(cfg.congestion_control == CongestionControl::Reno || ledbat) {
            return self.flight_size(cfg);
        }
        f64::from(if head_lost { self.pipe_with_head_lost(cfg) } else { self.pipe(cfg) })
    }

    /// The RFC 6675 pipe with the head counted lost, as ns-3's `EnterRecovery` marks it first.
    fn pipe_with_head_lost(&self, cfg: &TcpConfig) -> u32 {
        match &self.scoreboard {
            Some(sb) => {
                let lost_below = self.lost_below(cfg).max(self.snd_una + 1);
                sb.pipe(self.snd_una, self.snd_max, self.high_rxt, cfg.dupack_threshold, lost_below)
            }
            // Nothing SACKed yet: everything outstanding is in flight, but for the head.
            None => (self.snd_max - self.snd_una).saturating_sub(1),
        }
    }

    /// After any window reduction with ECN on: CWR on the next new segment, and no ECN-triggered
    /// reduction for the rest of this window (RFC 3168 §6.1.2).
    fn note_window_reduced(&mut self, cfg: &TcpConfig) {
        if cfg.ecn {
            self.ecn_recover = self.snd_max;
            self.cwr_pending = true;
        }
    }

    /// Resends from `snd_una` as the window allows.
    fn go_back_n(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        self.snd_nxt = self.snd_una;
        self.send_new(cfg, now, out);
    }

    fn may_send_new(&self, cfg: &TcpConfig) -> bool {
        self.snd_max < self.send_end() && self.snd_max - self.snd_una < cfg.max_window
    }

    /// Sends from `snd_nxt` while the window (cwnd, receiver window) and the data allow.
    fn send_new(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        // ns-2's `window()` is int(cwnd_): below one segment (after an echo), nothing goes out.
        let least = if self.ns2_ecn(cfg) { 0.0 } else { 1.0 };
        let window = (self.cwnd.floor().max(least) as u32).min(cfg.max_window);
        let end = self.send_end();
        while self.snd_nxt < end && self.snd_nxt - self.snd_una < window && self.pace(now) {
            let seq = self.snd_nxt;
            if seq < self.snd_max {
                self.retransmit(cfg, now, seq, out);
            } else {
                self.transmit(cfg, now, seq, out);
            }
            self.snd_nxt = seq + 1;
        }
    }

    fn retransmit(&mut self, cfg: &TcpConfig, now: Time, seq: u32, out: &mut Vec<Packet>) {
        if cfg.restart_timer_on_head_retransmit && seq == self.snd_una {
            // Linux's `tcp_xmit_retransmit_queue`, not RFC 6298 (5.1): with RACK (the default
            // there) RACK gets a full RTO to see a later segment delivered; `emit` rearms it.
            self.rto_at = Time::NEVER;
        }
        self.timed = None; // Karn: nothing in flight may be timed once anything is resent
        self.stats.retransmits += 1;
        if let Some(rexmits) = self.ns3_rexmits.as_deref_mut() {
            rexmits.insert(seq);
        }
        self.emit(cfg, now, seq, true, out);
    }

    fn transmit(&mut self, cfg: &TcpConfig, now: Time, seq: u32, out: &mut Vec<Packet>) {
        if self.timed.is_none() {
            self.timed = Some((seq, now));
        }
        self.snd_max = self.snd_max.max(seq + 1);
        self.emit(cfg, now, seq, false, out);
    }

    fn emit(&mut self, cfg: &TcpConfig, now: Time, seq: u32, retransmission: bool, out: &mut Vec<Packet>) {
        let payload = if self.last_payload != 0 && seq + 1 == self.data_end { self.last_payload } else { cfg.payload_of(seq) };
        let mut p = Packet::new(PacketKind::TcpData, self.flow);
        p.seq = seq;
        p.payload = payload.min(u16::MAX as u32) as u16;
        p.size = payload + cfg.header_bytes;
        p.sent_at = now;
        if matches!(cfg.rtt_hint, RttHintSource::Sender | RttHintSource::SenderVegas) {
            p.set_rtt_hint_ms(self.rtt_hint_ms());
        }
        if cfg.ecn && (!retransmission || cfg.ecn_retransmit_ect) {
            p.ecn = if cfg.ecn_l4s { Ecn::Ect1 } else { Ecn::Ect };
        }
        if retransmission {
            p.flags |= FLAG_RETRANSMIT;
        }
        if cfg.ecn && self.cwr_pending && (!retransmission || cfg.ecn_style == EcnStyle::Ns2) {
            // CWR rides on new data only (RFC 3168 §6.1.5), or with ns-2 on the next segment
            // sent, a retransmission too (`TcpAgent::output`, `SetCWRonRetransmit_ true`).
            p.flags |= FLAG_CWR;
            self.cwr_pending = false;
        }
        if seq + 1 == self.data_end {
            p.flags |= FLAG_FIN;
        }
        if let Some(board) = self.reno_board.as_deref_mut() {
            board.on_send(seq, retransmission);
        }
        if let Some(rack) = self.rack.as_deref_mut() {
            rack.on_send(seq, now, retransmission);
        }
        self.stats.segments_sent += 1;
        self.note_sent(now, seq, payload, retransmission);
        self.last_sent_at = now;
        if self.in_recovery {
            self.prr.sent(1);
        }
        out.push(p);
        if self.rto_at == Time::NEVER {
            self.arm_timer(cfg, now); // (5.1)
        }
    }

    fn arm_timer(&mut self, cfg: &TcpConfig, now: Time) {
        let mut at = now + self.rtt.rto(cfg);
        if cfg.coarse_timer {
            // BSD slow timer: expiries happen only on this host's ticks, phase + k·G, so round the
            // deadline up to the next of them.
            let g = cfg.timer_granularity.0.max(1);
            let phase = self.timer_phase.0 % g;
            at = Time(at.0.saturating_sub(phase).div_ceil(g) * g + phase);
        }
        self.rto_at = at;
        self.rto_armed_at = now;
    }

    /// Sets the offset of this sender's coarse-timer tick grid (`timer_phase` of the flow; see the
    /// field). Kept across transfers: the grid is the host's clock, not the connection's.
    pub fn set_timer_phase(&mut self, phase: Dur) {
        self.timer_phase = phase;
    }

    /// When `on_timer` should next be called.
    pub fn next_wakeup(&self) -> Option<Time> {
        let at = self.rto_at.min(self.rack_wakeup());
        let timer = (at != Time::NEVER).then_some(at);
        timer.into_iter().chain(self.pacing_wakeup()).min()
    }

    /// Whether a finite transfer has been completely acknowledged.
    pub fn is_complete(&self) -> bool {
        self.snd_una >= self.data_end
    }

    /// Counters.
    pub fn stats(&self) -> &TcpSenderStats {
        &self.stats
    }

    /// Congestion window, segments.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// Slow-start threshold, segments.
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// Oldest unacknowledged segment.
    pub fn snd_una(&self) -> u32 {
        self.snd_una
    }

    /// ns-3 CUBIC's count towards its next segment of growth (tests only).
    #[cfg(test)]
    pub(super) fn ns3_segment_count(&self) -> Option<u32> {
        self.cc.ns3_segment_count()
    }

    /// Whether the sender is in fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }

    /// The retransmission timeout the sender would arm now.
    pub fn rto(&self, cfg: &TcpConfig) -> Dur {
        self.rtt.rto(cfg)
    }

    /// The cwnd integral from `start` to `now` (≥ the last event), segment·nanoseconds.
    pub fn cwnd_integral(&self, now: Time) -> f64 {
        let open = if self.integrated_to != Time::NEVER { now.0.saturating_sub(self.integrated_to.0) } else { 0 };
        self.stats.cwnd_seg_ns + self.cwnd * open as f64
    }

    /// The RTT hint stamped on data segments: the minimum RTT (or, with `rtt_hint = "sender-vegas"`,
    /// ns-2 Vegas's baseRTT) in whole ms (rounded, at least 1), saturating at 65,535; 0 before the
    /// first sample.
    pub fn rtt_hint_ms(&self) -> u16 {
        let rtt_ns = match &self.vegas {
            Some(vegas) => vegas.base_rtt_ns().unwrap_or(u64::MAX),
            None => self.min_rtt_ns,
        };
        if rtt_ns == u64::MAX {
            return 0;
        }
        ((rtt_ns + 500_000) / 1_000_000).clamp(1, u64::from(u16::MAX)) as u16
    }

    /// Smoothed RTT, once measured.
    pub fn srtt(&self) -> Option<Dur> {
        self.rtt.srtt()
    }
}

/// The 1-ms timestamp clock (RFC 7323 TSval as ns-3 computes it, `NowToTsValue`): whole ms, `u32`.
pub(super) fn ms_clock(t: Time) -> u32 {
    (t.0 / 1_000_000) as u32
}

/// The segments ns-3 3.44 passes to `IncreaseWindow` for an ACK of new data outside fast recovery
/// (`TcpSocketBase::ProcessAck`): `segsAcked` is the ACK's newly delivered data (`currentDelivered`
/// from `TcpRateOps`, so a SACKed segment counts once, when SACKed, not again when a cumulative ACK
/// covers it); an ACK with new SACK information moves CA_OPEN to CA_DISORDER and grows nothing
/// (`DupAck`), except in a timeout's loss state (CA_LOSS), which grows by the delivered data; the ACK
/// that ends CA_LOSS counts only what lies beyond the recovery point (`ackNumber − m_recover`,
/// `acked_beyond_recovery` here). Counting the cumulative ACK instead let a flow that kept its SACK
/// scoreboard across a timeout add a whole SACKed run (hundreds of segments) to its slow start in one
/// ACK: the `cubic-ns3` large-window runaway of docs/validation.md.
fn ns3_segments_acked(delivered: u32, acked_beyond_recovery: u32, sack_dupack: bool, in_timeout_loss: bool,
                      leaves_timeout_loss: bool) -> u32 {
    if leaves_timeout_loss {
        acked_beyond_recovery
    } else if sack_dupack && !in_timeout_loss {
        0
    } else {
        delivered
    }
}
