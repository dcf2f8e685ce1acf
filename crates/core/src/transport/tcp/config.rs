//! Validated TCP settings shared by every flow of a `[[flows]]` group. Per-call `&TcpConfig`
//! keeps per-flow state small (thousands of flows share one config).

use crate::engine::Dur;

pub use super::congestion::CongestionControl;
use super::ledbat::LedbatConfig;

/// Sender congestion-control / loss-recovery flavour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpVariant {
    /// Slow start, congestion avoidance, fast retransmit; every loss restarts from cwnd = 1.
    Tahoe,
    /// Tahoe plus fast recovery (RFC 5681).
    Reno,
    /// Reno with partial-ACK handling (RFC 6582).
    NewReno,
    /// SACK-based loss recovery (RFC 6675), Reno congestion control.
    Sack,
}

/// How the window is managed during fast recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// Reno/NewReno window inflation by one segment per duplicate ACK (RFC 5681 §3.2, RFC 6582);
    /// with SACK, cwnd = ssthresh and transmission by pipe (RFC 6675 §5).
    Classic,
    /// Proportional Rate Reduction (RFC 6937, with the slow-start reduction bound): cwnd
    /// approaches ssthresh by sending in proportion to data delivered.
    Prr,
}

/// How `min_rto` bounds the retransmission timeout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RtoFormula {
    /// RFC 6298 (2.3)–(2.4): RTO = max(min_rto, SRTT + max(G, 4·RTTVAR)).
    #[default]
    Rfc6298,
    /// Linux: RTO = SRTT + max(min_rto, 4·RTTVAR). `tcp_rtt_estimator` never lets `rttvar_us`
    /// fall below `tcp_rto_min` and `__tcp_set_rto` adds it to SRTT, so a steady path still
    /// waits SRTT + 200 ms, where RFC 6298's bound lets the RTO shrink to 200 ms.
    Linux,
}

/// When duplicate ACKs may start another fast retransmit after a loss recovery or a timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FastRetransmitGuard {
    /// Always: every DupThresh-th duplicate ACK outside recovery starts one (RFC 5681's Reno), so
    /// several losses in one window can halve the window several times.
    None,
    /// Only once the cumulative ACK covers `recover`, the highest segment sent when the last
    /// recovery or timeout began (RFC 6582 §4.1, RFC 6675 §5.1).
    Rfc6582,
    /// ns-2's `bugFix_` (tcp.cc / reno.cc `dupack_action`): only once the highest cumulative ACK
    /// is above `recover_ = maxseq_`, one segment beyond RFC 6582's test; otherwise the flow waits
    /// for the retransmission timeout.
    Ns2,
}

impl FastRetransmitGuard {
    /// The guard a variant gets unless the scenario or a profile chooses one: none for Reno
    /// (RFC 5681 has none), RFC 6582's for the others.
    pub fn for_variant(variant: TcpVariant) -> FastRetransmitGuard {
        if variant == TcpVariant::Reno { FastRetransmitGuard::None } else { FastRetransmitGuard::Rfc6582 }
    }
}

/// How a sender with `ecn` reacts to ECN echoes (docs/tcp-profiles.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnStyle {
    /// RFC 3168 §6.1.2: an echo on an ACK of new data halves FlightSize (at least 2 segments) at
    /// most once per window, a loss or timeout counting as that window's reduction; CWR on the
    /// next new segment.
    #[default]
    Rfc3168,
    /// ns-2.35's `TcpAgent` (tcp/tcp.cc `ecn`, `slowdown`, `dupack_action`, `timeout`, `output`;
    /// tcp-reno.cc `dupack_action`), with `precisionReduce_` and `SetCWRonRetransmit_` at their
    /// ns-default.tcl values (true): an echo on any ACK, duplicate or not, halves the window
    /// (cwnd, not FlightSize: cwnd = window/2, which may fall below 1 and then sends nothing until
    /// the retransmission timer fires; ssthresh at least 2) when the ACK passes `recover`, the
    /// highest segment sent at the last reduction of any kind, or when the last reduction was a
    /// timeout; an echo sets `recover` too. A fast retransmit or a timeout within an ECN-reduced
    /// window does not reduce again: the fast retransmit resends and inflates from the window as
    /// it is (Tahoe: cwnd = 1, ssthresh kept), the timeout sets cwnd = 1 and keeps ssthresh. CWR
    /// goes on the next segment sent, retransmissions included.
    Ns2,
}

/// Who writes Lee 2002's RTT hint into the data packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RttHintSource {
    /// The sender, from every ACK's echoed send time (the thesis's simulations).
    Sender,
    /// An ingress edge router at the sender's end of the access link, one sample per RTT.
    Edge,
    /// The sender, with ns-2 Vegas's baseRTT rules, which can raise the hint when a round carries at
    /// most one segment (spec seed001-white.md §2.1.1; `vegas_base_rtt.rs`).
    #[serde(rename = "sender-vegas")]
    SenderVegas,
}

/// Delayed-ACK policy of the receiver (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DelayedAck {
    /// ACK every `count`-th full segment; 1 means no delayed ACKs.
    pub count: u32,
    /// Send a pending ACK at most this long after the segment that created it.
    pub timeout: Dur,
}

/// TCP settings, validated, in engine units.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Loss recovery flavour.
    pub variant: TcpVariant,
    /// Payload bytes per full segment.
    pub mss: u32,
    /// Header bytes added to every data segment on the wire (IP + TCP + options + link layer).
    pub header_bytes: u32,
    /// Wire size of a pure ACK.
    pub ack_bytes: u32,
    /// Initial congestion window, segments.
    pub initial_window: u32,
    /// Initial slow-start threshold, segments.
    pub initial_ssthresh: u32,
    /// Growth and reduction of the window.
    pub congestion_control: CongestionControl,
    /// LEDBAT's settings (read only with `congestion_control = Ledbat`).
    pub ledbat: LedbatConfig,
    /// Window management in fast recovery.
    pub recovery: Recovery,
    /// Who stamps the RTT hint.
    pub rtt_hint: RttHintSource,
    /// Limited transmit (RFC 3042): a new segment on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    /// Guard against repeated fast retransmits; `None` = [`FastRetransmitGuard::for_variant`].
    pub fast_retransmit_guard: Option<FastRetransmitGuard>,
    /// Receiver-window cap on the flight size, segments.
    pub max_window: u32,
    /// Receiver ACK policy.
    pub delayed_ack: DelayedAck,
    /// Lower bound on the retransmission timeout (RFC 6298 (2.4) recommends 1 s).
    pub min_rto: Dur,
    /// Whether `min_rto` bounds the whole RTO (RFC 6298) or its variance term (Linux).
    pub rto_formula: RtoFormula,
    /// RTO before any RTT sample (RFC 6298 (2.1): 1 s; older stacks 3 s).
    pub initial_rto: Dur,
    /// Upper bound on the (backed-off) RTO.
    pub max_rto: Dur,
    /// Clock granularity G. RTO = SRTT + max(G, 4·RTTVAR) (RFC 6298 (2.3)); with `coarse_timer`
    /// the timer also fires only on multiples of G, like BSD's 500 ms slow timer.
    pub timer_granularity: Dur,
    /// Fire retransmission timers on the next tick of `timer_granularity` (BSD style).
    pub coarse_timer: bool,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Receiver sends SACK blocks (sender uses them only for `TcpVariant::Sack`).
    pub sack: bool,
    /// Timestamps option (RFC 7323): ACKs echo the send time of the segment that last advanced
    /// the receiver's left edge, and every ACK of new data gives an RTT sample (also after
    /// retransmissions, so a backed-off RTO collapses at once). Off: one timed segment per
    /// round trip and Karn's rule (RFC 6298 §3).
    pub timestamps: bool,
    /// ECN-capable (RFC 3168): data is sent ECT, CE marks are echoed and halve the window.
    pub ecn: bool,
    /// Window growth counts acknowledged segments, not ACKs (Linux; docs/tcp.md).
    pub count_acked_segments: bool,
    /// `cubic-linux` only: HyStart ends slow start early (the kernel's `hystart` parameter).
    pub hystart: bool,
    /// With `ecn`: new data is sent ECT(1), the L4S identifier (RFC 9331 §4.1), instead of
    /// ECT(0). Only the codepoint changes; the reaction to echoes is the congestion control's
    /// (DCTCP's α/2 cut is the scalable response L4S expects, RFC 9331 §4.3).
    pub ecn_l4s: bool,
    /// With `ecn`: retransmissions carry the same ECT codepoint as new data, as ns-2's
    /// `TcpAgent::output` (tcp/tcp.cc, ns-2.35) sets `ect` on every data packet whenever `ecn_`
    /// is on. Off (the default): retransmissions are Not-ECT, RFC 3168 §6.1.5. CWR goes on
    /// retransmissions only with `ecn_style = "ns2"` (ns-2's `SetCWRonRetransmit_ true`). On in
    /// the `ns2` profile.
    pub ecn_retransmit_ect: bool,
    /// RFC 5681 §4.1 restart window: after an idle period longer than the RTO, resume from
    /// min(IW, cwnd) (ns-2's `slow_start_restart_`, Linux's `tcp_slow_start_after_idle`).
    pub restart_after_idle: bool,
    /// Restart the retransmission timer when a fast retransmit starts recovery, as ns-2's Reno,
    /// NewReno and SACK agents do (`dupack_action` → `reset_rtx_timer(1,0)`, tcp-reno.cc,
    /// tcp-newreno.cc, tcp-sack1.cc). Off: RFC 6298 (5.1), the timer started by the last new ACK
    /// keeps running, so the retransmission's ACK must come back within RTO of that ACK. With a
    /// 200 ms minimum RTO and an RTO near 1.2·RTT the difference is large (docs/validation.md §4,
    /// the PI case). On in the `ns2` profile (Tahoe's `TcpAgent::dupack_action` does it too).
    pub restart_timer_on_fast_retransmit: bool,
    /// Restart the retransmission timer whenever the segment at `snd_una` is resent, as Linux's
    /// `tcp_xmit_retransmit_queue` does (net/ipv4/tcp_output.c: `tcp_reset_xmit_timer` after
    /// resending the head of the retransmission queue): at a fast retransmit, after a partial ACK,
    /// when RACK marks a resent head lost again. Off: RFC 6298 (5.1). Defaults to `rack_tlp`
    /// (RACK gets a full RTO to see a later segment delivered) and is on in the `linux` profile.
    pub restart_timer_on_head_retransmit: bool,
    /// Every new ACK that restarts the retransmission timer recomputes the RTO from SRTT and RTTVAR
    /// without the backoff, as ns-3 3.44's `TcpSocketBase::NewAck` does (`m_rto = Max(SRTT +
    /// Max(G, 4·RTTVAR), MinRto)`; only `ReTxTimeout` doubles `m_rto`). Off: RFC 6298 (5.7) — the
    /// backed-off RTO stands until a valid RTT sample, which without timestamps (Karn's rule) can
    /// take many round trips after a timeout. On in the `ns3` profile.
    pub new_ack_clears_backoff: bool,
    /// SACK senders: after a retransmission timeout keep the scoreboard, count every unSACKed
    /// segment outstanding as lost and resend only those (ns-3's `SetSentListLost`, Linux's
    /// `tcp_enter_loss`; RFC 6675 §5.1 allows it). Off: forget it and go back N (RFC 2018 §8).
    pub keep_sack_after_timeout: bool,
    /// NewReno without SACK as ns-3 3.44 runs it (`TcpSocketBase::Sack = false`): its emulated
    /// "Reno SACK" scoreboard (`reno_sack.rs`), recovery entered on `IsLost(head)` too, the head
    /// resent on every partial ACK, flags kept until a timeout. Off: RFC 6582 NewReno.
    pub ns3_reno_sack: bool,
    /// SACK fast recovery with PRR as ns-3 3.44's `TcpSocketBase` and `TcpPrrRecovery` run it: a
    /// duplicate ACK counts one segment delivered on top of what its SACK blocks deliver, the bound
    /// below ssthresh is PRR-CRB plus one segment on an ACK of retransmitted data, every partial
    /// ACK whose new head was not retransmitted resends a segment regardless of the window, and
    /// only the first partial ACK restarts the timer. Off: RFC 6937 PRR-SSRB over RFC 6675.
    pub ns3_sack_recovery: bool,
    /// SACK senders with Reno growth: a window reduction (fast retransmit, timeout, ECN echo)
    /// halves the RFC 6675 pipe, the data neither SACKed nor lost plus retransmissions, with the
    /// head counted lost at a fast retransmit, as ns-3 3.44's `TcpSocketBase` does
    /// (`GetSsThresh(BytesInFlight())` in `EnterRecovery`, `ReTxTimeout`, `EnterCwr`). Off:
    /// FlightSize, the data outstanding (RFC 5681 (4), RFC 6675 (4.2)). With small windows the
    /// difference is large: at 7 segments outstanding and 3 SACKed, ssthresh is 2, not 3.5.
    /// CUBIC and DCTCP are not affected (ns-3's reduce cwnd, not what it passes them).
    pub ssthresh_from_pipe: bool,
    /// Pace segments at the congestion control's pacing rate (pacing.rs; only BBR supplies one,
    /// and BBR requires it).
    pub pacing: bool,
    /// SACK senders: RACK-TLP loss detection (RFC 8985): losses are deemed by transmit time
    /// (RACK, which also finds lost retransmissions) instead of RFC 6675's DupThresh, and a tail
    /// loss probe (TLP) is sent when the ACKs stop outside recovery. Linux's default.
    pub rack_tlp: bool,
    /// With `ecn`: RFC 3168's reaction to echoes or ns-2's (`EcnStyle`).
    pub ecn_style: EcnStyle,
    /// ssthresh is a whole number of segments, rounded down at every reduction (at least 2), as
    /// ns-2 stores it (`int ssthresh_`, tcp.h; `slowdown()` truncates `ssthresh_ = (int) halfwin`,
    /// tcp.cc); the window keeps its fraction: after Reno's or NewReno's fast recovery cwnd is the
    /// unrounded half (ns-2's `cwnd_ = halfwin`, which `dupwnd_ = 0` leaves in place). Off:
    /// ssthresh is the real-valued half (RFC 5681 (4)). On in the `ns2` profile.
    pub integer_ssthresh: bool,
    /// Every retransmission timeout sets ssthresh to half the window in use, min(cwnd, receiver
    /// window), a repeated timeout of the same segment included, as ns-2.35's `TcpAgent::timeout`
    /// does (`slowdown(CLOSE_SSTHRESH_HALF|CLOSE_CWND_RESTART)` each time; after the first
    /// timeout's cwnd = 1 that is ssthresh 2). Off: FlightSize halved, and a repeated timeout keeps
    /// ssthresh (RFC 5681 §3.1's note on eq. (4)). On in the `ns2` profile.
    pub halve_at_every_timeout: bool,
    /// Finite transfer of this many payload bytes; `None` = long-lived bulk sender.
    pub transfer_bytes: Option<u64>,
}

impl Default for TcpConfig {
    /// RFC-recommended modern defaults: NewReno, 1448-byte segments with 52 header bytes
    /// (IP 20 + TCP 20 + timestamps 12), initial window 10, delayed ACKs (2 segments, 200 ms),
    /// min RTO 1 s (RFC 6298 (2.4); Linux's 200 ms together with 200 ms delayed ACKs makes a
    /// flow at cwnd 1 time out spuriously, because its lone segment's ACK is held as long as the RTO),
    /// initial RTO 1 s.
    fn default() -> Self {
        TcpConfig {
            variant: TcpVariant::NewReno,
            congestion_control: CongestionControl::Reno,
            ledbat: LedbatConfig::default(),
            recovery: Recovery::Classic,
            limited_transmit: false,
            fast_retransmit_guard: None,
            rtt_hint: RttHintSource::Sender,
            mss: 1448,
            header_bytes: 52,
            ack_bytes: 52,
            initial_window: 10,
            initial_ssthresh: u32::MAX / 2,
            max_window: u32::MAX / 2,
            delayed_ack: DelayedAck { count: 2, timeout: Dur::from_millis(200) },
            min_rto: Dur::from_millis(1000),
            rto_formula: RtoFormula::Rfc6298,
            initial_rto: Dur::from_millis(1000),
            max_rto: Dur::from_millis(60_000),
            timer_granularity: Dur::from_millis(1),
            coarse_timer: false,
            dupack_threshold: 3,
            sack: false,
            timestamps: false,
            ecn: false,
            count_acked_segments: false,
            hystart: true,
            ecn_l4s: false,
            ecn_retransmit_ect: false,
            restart_after_idle: false,
            restart_timer_on_fast_retransmit: false,
            restart_timer_on_head_retransmit: false,
            keep_sack_after_timeout: false,
            new_ack_clears_backoff: false,
            ns3_sack_recovery: false,
            ns3_reno_sack: false,
            ssthresh_from_pipe: false,
            pacing: false,
            rack_tlp: false,
            ecn_style: EcnStyle::Rfc3168,
            integer_ssthresh: false,
            halve_at_every_timeout: false,
            transfer_bytes: None,
        }
    }
}

impl TcpConfig {
    /// The fast-retransmit guard in force.
    pub fn guard(&self) -> FastRetransmitGuard {
        self.fast_retransmit_guard.unwrap_or_else(|| FastRetransmitGuard::for_variant(self.variant))
    }

    /// Number of segments of a finite transfer (the last may be short).
    pub fn transfer_segments(&self) -> Option<u64> {
        self.transfer_bytes.map(|b| b.div_ceil(self.mss as u64).max(1))
    }

    /// Payload of segment `seq` (full MSS except possibly the last of a finite transfer).
    pub fn payload_of(&self, seq: u32) -> u32 {
        match self.transfer_bytes {
            Some(total) => {
                let start = seq as u64 * self.mss as u64;
                (total.saturating_sub(start)).min(self.mss as u64).max(1) as u32
            }
            None => self.mss,
        }
    }
}
