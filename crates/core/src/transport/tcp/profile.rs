//! Named sets of TCP defaults, so a scenario can match the tool its results are compared with:
//! `profile = "ns3"` (ns-3 3.44's attribute defaults), `"linux"` (a current Linux kernel's
//! defaults) or `"ns2"` (ns-2.35's `ns-default.tcl`). A profile only changes defaults: every key a
//! scenario sets explicitly wins. Sources for each value are in docs/tcp-profiles.md.

use super::config::{DelayedAck, EcnStyle, FastRetransmitGuard, Recovery, RtoFormula, TcpConfig, TcpVariant};
use super::CongestionControl;
use crate::engine::Dur;

/// A named set of TCP defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TcpProfile {
    /// ns-3 3.44: TcpCubic (as ns-3 computes it), SACK, PRR, limited transmit, timestamps, 536-byte segments, 128 KiB buffers.
    Ns3,
    /// Linux: CUBIC (tcp_cubic.c's arithmetic), SACK, PRR, RACK-TLP, timestamps, 200 ms minimum RTO, 40 ms delayed-ACK timer.
    Linux,
    /// ns-2.35: Tahoe `Agent/TCP`, 1000-byte packets, window 20, IW 2, no delayed ACKs.
    Ns2,
}

impl TcpProfile {
    /// The receiver window as the tool sizes it, in payload bytes (a buffer, whatever the mss).
    pub fn receive_window_bytes(self) -> u64 {
        match self {
            TcpProfile::Ns3 => 131_072,     // TcpSocket::RcvBufSize
            TcpProfile::Linux => 6_291_456, // net.ipv4.tcp_rmem max
            TcpProfile::Ns2 => 20 * 1000,   // window_ 20 × packetSize_ 1000
        }
    }

    /// The profile's defaults.
    pub fn defaults(self) -> TcpConfig {
        let base = TcpConfig::default();
        match self {
            TcpProfile::Ns3 => TcpConfig {
                variant: TcpVariant::Sack,        // TcpSocketBase::Sack = true
                congestion_control: CongestionControl::CubicNs3, // TcpL4Protocol::SocketType = TcpCubic
                recovery: Recovery::Prr,          // TcpSocketBase::RecoveryType = TcpPrrRecovery
                limited_transmit: true,           // TcpSocketBase::LimitedTransmit = true
                mss: 536,                         // TcpSocket::SegmentSize
                header_bytes: 52,                 // IP 20 + TCP 20 + timestamps 12 (link layer not counted)
                ack_bytes: 52,
                initial_window: 10,               // TcpSocket::InitialCwnd
                max_window: (131_072 / 536) as u32, // see receive_window_bytes
                delayed_ack: DelayedAck { count: 2, timeout: Dur::from_millis(200) }, // DelAckCount, DelAckTimeout
                min_rto: Dur::from_millis(1000),  // TcpSocketBase::MinRto
                initial_rto: Dur::from_millis(1000), // RttEstimator::InitialEstimation
                max_rto: Dur::from_millis(60_000),
                timer_granularity: Dur::from_millis(1), // TcpSocketBase::ClockGranularity
                dupack_threshold: 3,              // TcpSocketBase::ReTxThreshold
                timestamps: true,                 // TcpSocketBase::Timestamp
                keep_sack_after_timeout: true,    // ReTxTimeout: SetSentListLost(resetSack = !sack)
                new_ack_clears_backoff: true,     // NewAck: m_rto from the estimator, backoff dropped
                ns3_reno_sack: true,              // Sack = false: TcpTxBuffer's Reno SACK emulation
                ns3_sack_recovery: true,          // TcpPrrRecovery::DoRecovery, ProcessAck's partial ACKs
                ssthresh_from_pipe: true,         // GetSsThresh(BytesInFlight()) (TcpCubic uses cwnd)
                ..base
            },
            TcpProfile::Linux => TcpConfig {
                variant: TcpVariant::Sack,        // net.ipv4.tcp_sack = 1
                congestion_control: CongestionControl::CubicLinux, // net.ipv4.tcp_congestion_control = cubic
                recovery: Recovery::Prr,          // tcp_input.c: PRR since 3.2
                limited_transmit: true,
                mss: 1448,
                header_bytes: 52,                 // IP 20 + TCP 20 + timestamps 12
                ack_bytes: 52,
                initial_window: 10,               // TCP_INIT_CWND
                max_window: (6_291_456 / 1448) as u32, // see receive_window_bytes
                delayed_ack: DelayedAck { count: 2, timeout: Dur::from_millis(40) }, // TCP_DELACK_MIN
                min_rto: Dur::from_millis(200),   // TCP_RTO_MIN
                rto_formula: RtoFormula::Linux,   // rttvar_us >= tcp_rto_min, RTO = srtt + rttvar
                initial_rto: Dur::from_millis(1000), // TCP_TIMEOUT_INIT
                max_rto: Dur::from_millis(120_000), // TCP_RTO_MAX
                timer_granularity: Dur::from_millis(1),
                dupack_threshold: 3,              // net.ipv4.tcp_reordering
                timestamps: true,                 // net.ipv4.tcp_timestamps = 1
                keep_sack_after_timeout: true,    // tcp_enter_loss keeps SACKed data unless reneged
                count_acked_segments: true,       // tcp_slow_start, tcp_cong_avoid_ai: per acked segment
                rack_tlp: true,                   // net.ipv4.tcp_recovery = 1 (RACK), tcp_early_retrans = 3 (TLP)
                restart_timer_on_head_retransmit: true, // tcp_xmit_retransmit_queue, with RACK or without
                ..base
            },
            TcpProfile::Ns2 => TcpConfig {
                variant: TcpVariant::Tahoe,       // Agent/TCP
                congestion_control: CongestionControl::Reno,
                recovery: Recovery::Classic,
                limited_transmit: true,           // singledup_ 1
                fast_retransmit_guard: Some(FastRetransmitGuard::Ns2), // bugFix_ true
                restart_timer_on_fast_retransmit: true, // dupack_action: reset_rtx_timer(0,0), tcp.cc
                mss: 1000,                        // packetSize_ 1000
                header_bytes: 40,                 // tcpip_base_hdr_size_ 40
                ack_bytes: 40,
                initial_window: 2,                // windowInit_ 2
                max_window: 20,                   // window_ 20 (see receive_window_bytes)
                delayed_ack: DelayedAck { count: 1, timeout: Dur::from_millis(100) }, // Agent/TCPSink acks every packet
                min_rto: Dur::from_millis(200),   // minrto_ 0.2
                initial_rto: Dur::from_millis(3000), // rtxcur_init_ 3.0
                max_rto: Dur::from_millis(60_000), // maxrto_ 60
                timer_granularity: Dur::from_millis(10), // tcpTick_ 0.01
                dupack_threshold: 3,              // numdupacks_ 3
                integer_ssthresh: true,           // int ssthresh_ (tcp.h); slowdown() truncates
                halve_at_every_timeout: true,     // TcpAgent::timeout: slowdown(CLOSE_SSTHRESH_HALF|..) every time
                ecn_style: EcnStyle::Ns2,         // with ecn_ 1: TcpAgent::ecn, slowdown, dupack_action, timeout
                ecn_retransmit_ect: true,         // with ecn_ 1: TcpAgent::output sets ect on every packet
                ..base
            },
        }
    }
}
