//! TCP tests that read like packet traces: a sender and a receiver are driven by hand, or by a
//! tiny loop with a fixed one-way delay and a scripted drop list.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::*;
use super::config::EcnStyle;
use crate::engine::{Dur, Time};
use crate::packet::{Ecn, Packet, PacketKind, SackBlock, FLAG_CWR, FLAG_ECE, FLAG_FIN, FLAG_RETRANSMIT};
use proptest::prelude::*;

fn cfg(variant: TcpVariant) -> TcpConfig {
    TcpConfig {
        variant,
        sack: variant == TcpVariant::Sack,
        initial_window: 4,
        delayed_ack: DelayedAck { count: 1, timeout: Dur::from_millis(200) },
        ..TcpConfig::default()
    }
}

fn ms(t: u64) -> Time {
    Time(t * 1_000_000)
}

fn ack(n: u32) -> Packet {
    Packet { ack: n, ..Packet::new(PacketKind::TcpAck, 0) }
}

fn sack_ack(n: u32, blocks: &[(u32, u32)]) -> Packet {
    let mut a = ack(n);
    for (i, &(start, end)) in blocks.iter().enumerate() {
        a.sack[i] = SackBlock { start, end };
    }
    a.sack_len = blocks.len() as u8;
    a
}

fn seqs(out: &[Packet]) -> Vec<u32> {
    out.iter().map(|p| p.seq).collect()
}

/// A started sender whose first `n` segments have been sent.
fn started(c: &TcpConfig) -> (TcpSender, Vec<Packet>) {
    let mut s = TcpSender::new(0, c);
    let mut out = Vec::new();
    s.start(c, ms(0), &mut out);
    (s, out)
}

#[test]
fn slow_start_adds_one_segment_per_ack() {
    let c = cfg(TcpVariant::NewReno);
    let (mut s, out) = started(&c);
    assert_eq!(seqs(&out), [0, 1, 2, 3]);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out);
    assert_eq!(s.cwnd(), 5.0);
    assert_eq!(seqs(&out), [4, 5]); // one for the ACKed segment, one for the growth
}

#[test]
fn congestion_avoidance_adds_about_one_segment_per_window() {
    let c = TcpConfig { initial_ssthresh: 4, ..cfg(TcpVariant::NewReno) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    for n in 1..=4 {
        s.on_ack(&c, ms(100), &ack(n), &mut out);
    }
    // 4 ACKs at cwnd ≈ 4: +1/4 + 1/4.06 + … ≈ 0.94.
    assert!((s.cwnd() - 4.94).abs() < 0.02, "{}", s.cwnd());
}

/// Sends a window of 10, then ACKs segment 0 only, so segment 1 is "lost": returns the sender
/// after the first new ACK (for `ack(1)`) and the dupacks' output.
fn three_dupacks(variant: TcpVariant) -> (TcpConfig, TcpSender, Vec<Packet>) {
    let c = TcpConfig { initial_window: 10, ..cfg(variant) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out); // cwnd 11, sends 10 and 11
    out.clear();
    for _ in 0..3 {
        s.on_ack(&c, ms(101), &ack(1), &mut out);
    }
    (c, s, out)
}

#[test]
fn newreno_fast_retransmit_on_third_dupack_with_inflated_window() {
    let (c, s, out) = three_dupacks(TcpVariant::NewReno);
    assert_eq!(out[0].seq, 1);
    assert!(out[0].has(FLAG_RETRANSMIT));
    assert_eq!(s.ssthresh(), 5.5); // flight 11 / 2
    assert_eq!(s.cwnd(), 8.5); // ssthresh + 3
    assert!(s.in_recovery());
    assert_eq!(s.stats().fast_retransmits, 1);
    let _ = c;
}

#[test]
fn newreno_partial_ack_retransmits_next_hole_and_full_ack_ends_recovery() {
    let (c, mut s, _) = three_dupacks(TcpVariant::NewReno);
    let mut out = Vec::new();
    s.on_ack(&c, ms(200), &ack(5), &mut out); // partial: 1..5 acked, 5 lost too
    assert_eq!(out[0].seq, 5);
    assert!(out[0].has(FLAG_RETRANSMIT));
    assert!(s.in_recovery());
    assert_eq!(s.cwnd(), 8.5 - 4.0 + 1.0);
    out.clear();
    s.on_ack(&c, ms(300), &ack(12), &mut out); // everything sent before recovery began
    assert!(!s.in_recovery());
    assert_eq!(s.cwnd(), s.ssthresh());
}

#[test]
fn a_timeout_in_recovery_halves_the_real_window_not_the_inflated_flight() {
    // Issue #10: ssthresh came from snd_max − snd_una, which after dupack inflation counts
    // segments the receiver already holds; ns-2, ns-3 and Linux halve the window in use.
    let (c, mut s, _) = three_dupacks(TcpVariant::NewReno); // ssthresh 5.5, cwnd 8.5, 12 outstanding
    let mut out = Vec::new();
    for _ in 0..10 {
        s.on_ack(&c, ms(102), &ack(1), &mut out); // inflation sends new data: 20 outstanding
    }
    let deadline = s.next_wakeup().unwrap();
    s.on_timer(&c, deadline, &mut out);
    assert_eq!(s.ssthresh(), 2.75, "half of the real window (ssthresh 5.5), not of 20 outstanding");
    assert_eq!(s.cwnd(), 1.0);
}

#[test]
fn a_second_timeout_of_the_same_segment_keeps_ssthresh() {
    let c = TcpConfig { initial_window: 10, ..cfg(TcpVariant::NewReno) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_timer(&c, s.next_wakeup().unwrap(), &mut out);
    assert_eq!(s.ssthresh(), 5.0);
    s.on_timer(&c, s.next_wakeup().unwrap(), &mut out);
    assert_eq!(s.ssthresh(), 5.0, "RFC 5681 §3.1: held constant, not min(cwnd 1, flight)/2");
    assert_eq!(s.stats().timeouts, 2);
}

#[test]
fn newreno_restarts_the_timer_on_the_first_partial_ack_only() {
    let (c, mut s, _) = three_dupacks(TcpVariant::NewReno);
    let armed_by_new_ack = s.next_wakeup().unwrap();
    assert_eq!(armed_by_new_ack, ms(100) + s.rto(&c), "entering recovery did not restart the timer");
    let mut out = Vec::new();
    s.on_ack(&c, ms(200), &ack(3), &mut out); // first partial ACK
    let after_first = s.next_wakeup().unwrap();
    assert_eq!(after_first, ms(200) + s.rto(&c));
    s.on_ack(&c, ms(300), &ack(5), &mut out); // second partial ACK
    assert_eq!(s.next_wakeup().unwrap(), after_first, "RFC 6582 §4 Impatient: not restarted again");
}

#[test]
fn restart_timer_on_fast_retransmit_rearms_at_the_retransmission_as_ns2_does() {
    // ns-2 `dupack_action`: reset_rtx_timer(1,0) with the fast retransmit (tcp-newreno.cc).
    for variant in [TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack] {
        let c = TcpConfig { initial_window: 10, restart_timer_on_fast_retransmit: true, ..cfg(variant) };
        let (mut s, _) = started(&c);
        let mut out = Vec::new();
        s.on_ack(&c, ms(100), &ack(1), &mut out);
        let armed_by_new_ack = s.next_wakeup().unwrap();
        assert_eq!(armed_by_new_ack, ms(100) + s.rto(&c));
        for k in 0..3u32 {
            let dup = if variant == TcpVariant::Sack { sack_ack(1, &[(2, 3 + k)]) } else { ack(1) };
            s.on_ack(&c, ms(150), &dup, &mut out);
        }
        assert_eq!(s.stats().fast_retransmits, 1, "{variant:?}");
        assert_eq!(s.next_wakeup().unwrap(), ms(150) + s.rto(&c), "{variant:?}: restarted with the retransmission");
    }
}

#[test]
fn restart_timer_on_head_retransmit_rearms_at_each_resend_of_the_head_as_linux_does() {
    // Linux `tcp_xmit_retransmit_queue`: the fast retransmit and every head resent after a partial
    // ACK restart the timer. Off (RFC 6298 (5.1), RFC 6582 Impatient): the timer of the last new
    // ACK runs on at the fast retransmit, and only the first partial ACK restarts it.
    for on in [false, true] {
        let c = TcpConfig { initial_window: 10, restart_timer_on_head_retransmit: on, ..cfg(TcpVariant::NewReno) };
        let (mut s, _) = started(&c);
        let mut out = Vec::new();
        s.on_ack(&c, ms(100), &ack(1), &mut out);
        for _ in 0..3 {
            s.on_ack(&c, ms(150), &ack(1), &mut out);
        }
        assert_eq!(s.stats().fast_retransmits, 1);
        let at_fast_retransmit = if on { ms(150) } else { ms(100) };
        assert_eq!(s.next_wakeup().unwrap(), at_fast_retransmit + s.rto(&c), "on = {on}: at the fast retransmit");
        s.on_ack(&c, ms(300), &ack(3), &mut out); // first partial ACK: head 3 resent
        s.on_ack(&c, ms(400), &ack(5), &mut out); // second partial ACK: head 5 resent
        assert!(s.in_recovery());
        let at_second_partial = if on { ms(400) } else { ms(300) };
        assert_eq!(s.next_wakeup().unwrap(), at_second_partial + s.rto(&c), "on = {on}: at the second partial ACK");
    }
}

#[test]
fn sack_sends_new_data_on_the_first_duplicate_acks() {
    let c = TcpConfig { initial_window: 10, ..cfg(TcpVariant::Sack) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out); // cwnd 11: 1..12 outstanding
    out.clear();
    s.on_ack(&c, ms(101), &sack_ack(1, &[(2, 3)]), &mut out);
    assert_eq!(seqs(&out), [12], "segment 2 left the network: pipe 10 < cwnd 11");
    s.on_ack(&c, ms(101), &sack_ack(1, &[(2, 4)]), &mut out);
    assert_eq!(seqs(&out), [12, 13]);
    assert!(!s.in_recovery() && out.iter().all(|p| !p.has(FLAG_RETRANSMIT)));
    assert_eq!(s.cwnd(), 11.0, "duplicate ACKs do not grow the window");
}

#[test]
fn ssthresh_from_pipe_halves_what_is_in_flight_not_the_window() {
    // 1..12 outstanding at cwnd 11, then duplicates SACKing 2, 3, 4 (12 and 13 go out on the
    // first two). At the third: 13 outstanding, 3 SACKed, the head lost, so pipe is 9. RFC 5681
    // halves FlightSize (min(13, cwnd 11)); ns-3 3.44 halves pipe.
    for (from_pipe, ssthresh) in [(false, 5.5), (true, 4.5)] {
        let c = TcpConfig { initial_window: 10, ssthresh_from_pipe: from_pipe, ..cfg(TcpVariant::Sack) };
        let (mut s, _) = started(&c);
        let mut out = Vec::new();
        s.on_ack(&c, ms(100), &ack(1), &mut out);
        for end in 3..=5 {
            s.on_ack(&c, ms(101), &sack_ack(1, &[(2, end)]), &mut out);
        }
        assert!(s.in_recovery());
        assert_eq!(s.ssthresh(), ssthresh, "ssthresh_from_pipe = {from_pipe}");
    }
}

#[test]
fn ssthresh_from_pipe_at_a_timeout_leaves_out_sacked_data() {
    // 0..10 outstanding and a receiver window of 10 (so nothing new goes out), 3 and 4 SACKed
    // (two: not yet a loss), then the RTO: pipe 10 - 2 = 8, so ssthresh 4 rather than 10 / 2.
    for (from_pipe, ssthresh) in [(false, 5.0), (true, 4.0)] {
        let c = TcpConfig { initial_window: 10, max_window: 10, ssthresh_from_pipe: from_pipe, ..cfg(TcpVariant::Sack) };
        let (mut s, _) = started(&c);
        let mut out = Vec::new();
        s.on_ack(&c, ms(100), &sack_ack(0, &[(3, 5)]), &mut out);
        assert!(!s.in_recovery());
        let cwnd = s.cwnd();
        s.on_timer(&c, ms(5000), &mut out);
        assert_eq!(s.stats().timeouts, 1);
        assert_eq!(s.ssthresh(), ssthresh, "ssthresh_from_pipe = {from_pipe}, cwnd {cwnd}");
    }
}

#[test]
fn sack_a_cumulative_ack_with_new_sack_blocks_sends_by_pipe() {
    // RFC 6675 §2: an ACK that SACKs new data is a duplicate ACK even if it moves the cumulative
    // ACK point. The common case: the receiver holds a delayed ACK for segment 1 when segment 3
    // arrives out of order (2 lost), and answers both with one ACK.
    let c = TcpConfig { initial_window: 10, ..cfg(TcpVariant::Sack) };
    let (mut s, _) = started(&c); // 0..10 outstanding
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &sack_ack(2, &[(3, 4)]), &mut out);
    // cwnd 11; 10, 11, 12 as the window slides, then 13: segment 3 left the network, so pipe is
    // 10 (2..13 less 3) < cwnd 11 (step 3). Counting 3 as outstanding stops at 12.
    assert_eq!(seqs(&out), [10, 11, 12, 13]);
    assert!(!s.in_recovery() && s.cwnd() == 11.0);
}

#[test]
fn sack_a_cumulative_ack_that_makes_snd_una_lost_starts_recovery() {
    // RFC 6675 §5 step (2): IsLost(HighACK + 1) on a duplicate ACK, cumulative or not.
    let c = TcpConfig { initial_window: 10, ..cfg(TcpVariant::Sack) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &sack_ack(2, &[(3, 6)]), &mut out); // three SACKed above segment 2
    assert!(s.in_recovery());
    assert_eq!(out[0].seq, 2);
    assert!(out[0].has(FLAG_RETRANSMIT));
    assert_eq!(s.stats().fast_retransmits, 1);
}

#[test]
fn limited_transmit_sends_one_new_segment_on_each_of_the_first_two_dupacks() {
    let plain = TcpConfig { initial_window: 10, ..cfg(TcpVariant::NewReno) };
    let c = TcpConfig { limited_transmit: true, ..plain.clone() };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out); // cwnd 11: 1..12 outstanding
    out.clear();
    s.on_ack(&c, ms(101), &ack(1), &mut out);
    s.on_ack(&c, ms(101), &ack(1), &mut out);
    assert_eq!(seqs(&out), [12, 13]);
    assert_eq!(s.cwnd(), 11.0);
    s.on_ack(&c, ms(101), &ack(1), &mut out);
    assert!(s.in_recovery());
    assert_eq!(s.ssthresh(), 5.5, "RFC 3042: the extra segments do not count in FlightSize");
    let (mut s, _) = started(&plain);
    let mut out = Vec::new();
    s.on_ack(&plain, ms(100), &ack(1), &mut out);
    out.clear();
    s.on_ack(&plain, ms(101), &ack(1), &mut out);
    assert!(out.is_empty(), "off by default");
}

#[test]
fn a_fast_retransmit_after_reno_leaves_recovery_halves_cwnd_not_the_inflated_flight() {
    // Reno ends recovery at the first partial ACK with cwnd = ssthresh while the segments sent on
    // inflated dupacks are still outstanding. A new loss then halves FlightSize as the window in
    // use (RFC 5681 (4)), not snd_max − snd_una: that made windows above 1,000 segments (issue #10).
    let c = TcpConfig { initial_window: 10, ..cfg(TcpVariant::Reno) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out); // cwnd 11: 1..12 outstanding
    for _ in 0..11 {
        s.on_ack(&c, ms(101), &ack(1), &mut out); // fast retransmit, then inflation sends 12..17
    }
    assert!(s.in_recovery());
    assert_eq!(s.ssthresh(), 5.5);
    s.on_ack(&c, ms(150), &ack(5), &mut out); // partial ACK: Reno leaves recovery
    assert!(!s.in_recovery());
    assert_eq!(s.cwnd(), 5.5);
    for _ in 0..3 {
        s.on_ack(&c, ms(160), &ack(5), &mut out);
    }
    assert!(s.in_recovery());
    assert_eq!(s.ssthresh(), 2.75, "half the 5.5-segment window in use, not half the 12 outstanding");
}

#[test]
fn an_ecn_reduction_halves_the_window_in_use_not_the_data_outstanding() {
    // Two limited-transmit segments leave 13 outstanding under cwnd 11; an echo on the next new ACK
    // halves 11 (RFC 3168 §6.1.2 with RFC 5681's FlightSize), not 13.
    let c = TcpConfig { ecn: true, limited_transmit: true, initial_window: 10, ..cfg(TcpVariant::NewReno) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out); // cwnd 11: 1..12 outstanding
    s.on_ack(&c, ms(101), &ack(1), &mut out);
    s.on_ack(&c, ms(101), &ack(1), &mut out); // 12 and 13 sent
    let echo = Packet { flags: FLAG_ECE, ..ack(2) };
    s.on_ack(&c, ms(110), &echo, &mut out);
    assert_eq!(s.ssthresh(), 5.5, "half of cwnd 11, not of the 13 outstanding");
}

#[test]
fn limited_transmit_applies_to_tahoe_as_ns2_singledup_does() {
    // profile = "ns2" is Tahoe with singledup_ 1; the switch used to do nothing for Tahoe.
    let plain = TcpConfig { initial_window: 10, ..cfg(TcpVariant::Tahoe) };
    let c = TcpConfig { limited_transmit: true, ..plain.clone() };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out); // cwnd 11: 1..12 outstanding
    out.clear();
    s.on_ack(&c, ms(101), &ack(1), &mut out);
    s.on_ack(&c, ms(101), &ack(1), &mut out);
    assert_eq!(seqs(&out), [12, 13]);
    let (mut s, _) = started(&plain);
    let mut out = Vec::new();
    s.on_ack(&plain, ms(100), &ack(1), &mut out);
    out.clear();
    s.on_ack(&plain, ms(101), &ack(1), &mut out);
    s.on_ack(&plain, ms(101), &ack(1), &mut out);
    assert!(out.is_empty(), "off: no new data below the threshold");
}

#[test]
fn ecn_a_loss_reduction_sets_cwr_and_suppresses_an_echo_in_the_same_window() {
    let c = TcpConfig { ecn: true, initial_window: 10, ..cfg(TcpVariant::NewReno) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out);
    for _ in 0..3 {
        s.on_ack(&c, ms(101), &ack(1), &mut out);
    }
    assert!(s.in_recovery());
    out.clear();
    while out.is_empty() {
        s.on_ack(&c, ms(150), &ack(1), &mut out); // more dupacks inflate until new data goes out
    }
    assert!(out[0].has(FLAG_CWR), "CWR after the fast-retransmit reduction");
    assert_eq!(out[0].seq, 12, "segments 0..11 were out when the loss was detected");
    let echo = |n| Packet { flags: FLAG_ECE, ..ack(n) };
    s.on_ack(&c, ms(200), &echo(12), &mut out); // full ACK ends recovery; echo for the old window
    assert!(!s.in_recovery());
    assert_eq!(s.stats().ecn_reductions, 0, "one reduction per window: the loss was it");
    assert_eq!((s.cwnd(), s.ssthresh()), (5.5, 5.5), "no second cut: half of the 11 in flight, once");
}

#[test]
fn ecn_a_timeout_sets_cwr_and_suppresses_an_echo_in_the_same_window() {
    let c = TcpConfig { ecn: true, initial_window: 10, ..cfg(TcpVariant::NewReno) };
    let (mut s, _) = started(&c); // 0..9 out
    let mut out = Vec::new();
    s.on_timer(&c, s.next_wakeup().unwrap(), &mut out);
    assert_eq!((s.stats().timeouts, s.cwnd(), s.ssthresh()), (1, 1.0, 5.0));
    assert_eq!(seqs(&out), [0], "go-back-N from snd_una with the loss window");
    let echo = |n| Packet { flags: FLAG_ECE, ..ack(n) };
    out.clear();
    s.on_ack(&c, ms(3000), &echo(1), &mut out); // echo of a mark on the window the timeout cut
    assert_eq!(s.stats().ecn_reductions, 0, "the timeout was this window's reduction");
    assert_eq!(s.cwnd(), 1.0, "an ACK with ECE does not grow the window");
    assert!(out.iter().all(|p| p.has(FLAG_RETRANSMIT) && !p.has(FLAG_CWR)), "resends carry no CWR (RFC 3168 §6.1.5)");
    s.on_ack(&c, ms(3001), &ack(10), &mut out); // the rest of the old window, no ECE
    let new_data: Vec<&Packet> = out.iter().filter(|p| !p.has(FLAG_RETRANSMIT)).collect();
    assert!(!new_data.is_empty(), "{:?}", seqs(&out));
    assert!(new_data[0].has(FLAG_CWR), "the first new segment after the timeout carries CWR");
    assert!(new_data[1..].iter().all(|p| !p.has(FLAG_CWR)));
}

#[test]
fn prr_spreads_the_reduction_over_the_recovery_round_trip() {
    let c = TcpConfig { recovery: Recovery::Prr, initial_window: 20, ..cfg(TcpVariant::Sack) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out); // cwnd 21: 1..22 outstanding; 1 is lost
    out.clear();
    let mut per_ack = Vec::new();
    for end in 3..=22 {
        let before = out.len();
        s.on_ack(&c, ms(101), &sack_ack(1, &[(2, end)]), &mut out);
        per_ack.push(out.len() - before);
    }
    assert!(s.in_recovery());
    assert_eq!(s.ssthresh(), 10.5);
    // Two SACKs before recovery each sent a new segment (pipe), so RecoverFS = 23. In recovery
    // 18 segments were delivered: RFC 6937's proportional part allows at most
    // CEIL(18 · 10.5 / 23) = 9 transmissions, the fast retransmit included, one per ACK at most;
    // once pipe falls to ssthresh the reduction bound holds it there.
    assert_eq!(per_ack[..2], [1, 1]);
    let sent_in_recovery: usize = per_ack[2..].iter().sum();
    assert!((7..=9).contains(&sent_in_recovery), "{per_ack:?}");
    assert!(per_ack[2..].iter().all(|&n| n <= 1), "{per_ack:?}");
    assert_eq!(s.cwnd(), 10.0, "pipe + sndcnt has come down to the whole segments of ssthresh");
    s.on_ack(&c, ms(150), &ack(24), &mut out); // the RecoveryPoint
    assert!(!s.in_recovery());
    assert_eq!(s.cwnd(), s.ssthresh(), "RFC 6937: cwnd = ssthresh on leaving recovery");
}

#[test]
fn reno_leaves_recovery_on_any_new_ack() {
    let (c, mut s, _) = three_dupacks(TcpVariant::Reno);
    let mut out = Vec::new();
    s.on_ack(&c, ms(200), &ack(5), &mut out);
    assert!(!s.in_recovery());
    assert_eq!(s.cwnd(), 5.5);
    assert!(out.iter().all(|p| !p.has(FLAG_RETRANSMIT)), "Reno does not retransmit on a partial ACK");
}

#[test]
fn tahoe_goes_back_to_one_segment() {
    let (c, s, out) = three_dupacks(TcpVariant::Tahoe);
    assert_eq!(s.next_wakeup(), Some(ms(101) + s.rto(&c)), "the fast retransmit restarts the timer (BSD, ns-2)");
    assert_eq!(s.cwnd(), 1.0);
    assert_eq!(seqs(&out), [1]);
    assert!(!s.in_recovery());
}

#[test]
fn sack_retransmits_every_hole_within_one_round_trip() {
    // Window 0..10; 2 and 5 lost. SACKs arrive for 3,4 then 6..10.
    let c = TcpConfig { initial_window: 10, ..cfg(TcpVariant::Sack) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out);
    s.on_ack(&c, ms(100), &ack(2), &mut out);
    out.clear();
    s.on_ack(&c, ms(101), &sack_ack(2, &[(3, 4)]), &mut out);
    s.on_ack(&c, ms(101), &sack_ack(2, &[(3, 5)]), &mut out);
    s.on_ack(&c, ms(101), &sack_ack(2, &[(6, 7), (3, 5)]), &mut out);
    assert!(s.in_recovery());
    let retx = |out: &[Packet]| out.iter().filter(|p| p.has(FLAG_RETRANSMIT)).map(|p| p.seq).collect::<Vec<_>>();
    assert_eq!(retx(&out), [2], "RFC 6675 (4.3): the first hole goes out on entering recovery");
    // Segments 6..14 keep arriving; once 5 has three SACKed segments above it, it is lost, and
    // it is resent as soon as pipe drops below cwnd — before any further cumulative ACK.
    for end in 8..=13 {
        s.on_ack(&c, ms(102), &sack_ack(2, &[(6, end), (3, 5)]), &mut out);
    }
    assert_eq!(retx(&out), [2, 5]);
    assert_eq!(s.stats().timeouts, 0);
}

#[test]
fn rto_follows_rfc6298() {
    let c = TcpConfig { min_rto: Dur::from_millis(200), ..cfg(TcpVariant::NewReno) };
    let mut r = RttEstimator::default();
    assert_eq!(r.rto(&c), Dur::from_millis(1000)); // (2.1) initial RTO
    r.sample(Dur::from_millis(100)); // SRTT 100, RTTVAR 50 → 100 + 200
    assert_eq!(r.rto(&c), Dur::from_millis(300));
    r.sample(Dur::from_millis(200)); // RTTVAR 3/4·50 + 1/4·100 = 62.5, SRTT 112.5
    assert_eq!(r.rto(&c), Dur::from_micros(112_500 + 250_000));
    r.back_off();
    r.back_off();
    assert_eq!(r.rto(&c), Dur::from_micros(4 * 362_500)); // (5.5) doubled twice
    let tight = TcpConfig { max_rto: Dur::from_millis(1000), ..c.clone() };
    assert_eq!(r.rto(&tight), Dur::from_millis(1000)); // never beyond max_rto
    r.sample(Dur::from_millis(1)); // a sample clears the backoff; (2.4) min RTO applies
    assert!(r.rto(&c) >= Dur::from_millis(200) && r.backoff() == 0);
}

#[test]
fn timeout_backs_off_and_karn_ignores_the_retransmission() {
    let c = cfg(TcpVariant::NewReno);
    let (mut s, _) = started(&c);
    assert_eq!(s.next_wakeup(), Some(ms(1000)));
    let mut out = Vec::new();
    s.on_timer(&c, ms(999), &mut out);
    assert!(out.is_empty(), "not due yet");
    s.on_timer(&c, ms(1000), &mut out);
    assert_eq!(seqs(&out), [0]);
    assert_eq!((s.cwnd(), s.stats().timeouts), (1.0, 1));
    assert_eq!(s.next_wakeup(), Some(ms(3000))); // backed off to 2 s
    out.clear();
    s.on_ack(&c, ms(3500), &ack(1), &mut out);
    assert_eq!(s.srtt(), None, "no sample from a retransmitted segment");
    assert_eq!(s.stats().rtt_samples, 0);
}

#[test]
fn new_ack_clears_backoff_drops_the_doubled_rto_without_a_sample_as_ns3_does() {
    // A settled 100 ms path, then a timeout and the retransmission's ACK: Karn leaves no sample.
    for (clears, rto_after) in [(false, 2000), (true, 1000)] {
        let c = TcpConfig { new_ack_clears_backoff: clears, ..cfg(TcpVariant::NewReno) };
        let (mut s, _) = started(&c);
        let mut out = Vec::new();
        s.on_ack(&c, ms(100), &ack(1), &mut out); // timed segment 0: SRTT 100 ms, RTO 1 s (min)
        assert_eq!(s.rto(&c), Dur::from_millis(1000));
        let due = s.next_wakeup().unwrap();
        out.clear();
        s.on_timer(&c, due, &mut out); // segment 1 resent, RTO backed off to 2 s
        assert_eq!(s.rto(&c), Dur::from_millis(2000));
        let samples = s.stats().rtt_samples;
        s.on_ack(&c, due + Dur::from_millis(100), &ack(2), &mut Vec::new());
        assert_eq!(s.stats().rtt_samples, samples, "Karn: no sample from the retransmission");
        assert_eq!(s.rto(&c), Dur::from_millis(rto_after), "new_ack_clears_backoff = {clears}");
        assert_eq!(s.next_wakeup(), Some(due + Dur::from_millis(100 + rto_after)), "the timer restarted with it");
    }
}

#[test]
fn timestamps_sample_a_retransmission_and_collapse_the_backed_off_rto() {
    let c = TcpConfig { timestamps: true, ..cfg(TcpVariant::NewReno) };
    let mut r = TcpReceiver::new(0, &c);
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_timer(&c, ms(1000), &mut out); // segment 0 resent at 1 s; RTO backed off to 2 s
    assert_eq!(s.rto(&c), Dur::from_millis(2000));
    let mut acks = Vec::new();
    r.on_data(&c, ms(1050), &out[0], &mut acks);
    assert_eq!(acks[0].sent_at, ms(1000), "TSecr echoes the retransmission's timestamp");
    s.on_ack(&c, ms(1100), &acks[0], &mut Vec::new());
    assert_eq!(s.srtt(), Some(Dur::from_millis(100)), "RFC 7323: a valid sample despite Karn");
    assert_eq!(s.rto(&c), Dur::from_millis(1000), "backoff cleared; min RTO 1 s");
}

#[test]
fn receiver_echoes_the_earliest_pending_segment_and_not_an_out_of_order_one() {
    let c = TcpConfig {
        timestamps: true,
        delayed_ack: DelayedAck { count: 2, timeout: Dur::from_millis(200) },
        ..cfg(TcpVariant::NewReno)
    };
    let mut r = TcpReceiver::new(0, &c);
    let mut out = Vec::new();
    let seg = |seq, at| Packet { seq, sent_at: at, ..Packet::new(PacketKind::TcpData, 0) };
    r.on_data(&c, ms(10), &seg(0, ms(0)), &mut out);
    r.on_data(&c, ms(11), &seg(1, ms(1)), &mut out);
    assert_eq!(out.last().unwrap().sent_at, ms(0), "RFC 7323 §4.3: the delayed ACK echoes the first");
    r.on_data(&c, ms(20), &seg(3, ms(9)), &mut out); // 2 is missing
    assert_eq!(out.last().unwrap().sent_at, ms(0), "an out-of-order segment is not echoed: TS.Recent stays");
    r.on_data(&c, ms(40), &seg(2, ms(30)), &mut out); // the retransmission fills the hole
    assert_eq!((out.last().unwrap().ack, out.last().unwrap().sent_at), (4, ms(30)));
}

#[test]
fn data_segments_carry_the_minimum_rtt_in_whole_ms_as_the_hint() {
    let c = cfg(TcpVariant::Reno);
    let mut r = TcpReceiver::new(0, &c);
    let (mut s, first) = started(&c);
    assert!(first.iter().all(|p| p.rtt_hint_ms() == 0), "no sample yet");
    let mut acks = Vec::new();
    r.on_data(&c, ms(30), &first[0], &mut acks);
    let mut out = Vec::new();
    s.on_ack(&c, Time(60_600_000), &acks[0], &mut out); // 60.6 ms after segment 0 left
    assert_eq!(out[0].rtt_hint_ms(), 61);
    r.on_data(&c, ms(90), &first[1], &mut acks);
    s.on_ack(&c, ms(200), &acks[1], &mut out); // 200 ms: a larger sample leaves the minimum
    assert!(out.iter().all(|p| p.rtt_hint_ms() == 61));
    assert_eq!(s.rtt_hint_ms(), 61);
}

#[test]
fn coarse_timer_fires_on_ticks() {
    let c = TcpConfig { coarse_timer: true, timer_granularity: Dur::from_millis(500), ..cfg(TcpVariant::Reno) };
    let mut s = TcpSender::new(0, &c);
    let mut out = Vec::new();
    s.start(&c, ms(130), &mut out);
    assert_eq!(s.next_wakeup(), Some(ms(1500))); // 130 + 1000 rounded up to a 500 ms tick
}

/// Each host ticks on its own grid (Parris 2001 App. A: 5 server hosts, each its own slow timer):
/// with phase 200 ms the ticks are at 200, 700, 1200, 1700 ms, so 130 + 1000 expires at 1200
/// (1500 on the zero-phase grid); a phase is kept across transfers (it is the host's clock).
#[test]
fn coarse_timer_fires_on_the_hosts_own_ticks() {
    let c = TcpConfig { coarse_timer: true, timer_granularity: Dur::from_millis(500), ..cfg(TcpVariant::Reno) };
    let mut s = TcpSender::new(0, &c);
    s.set_timer_phase(Dur::from_millis(200));
    let mut out = Vec::new();
    s.start(&c, ms(130), &mut out);
    assert_eq!(s.next_wakeup(), Some(ms(1200)));
    let mut t = TcpSender::new(0, &c);
    t.set_timer_phase(Dur::from_millis(200));
    t.begin_transfer_bytes(&c, ms(0), 1000, &mut out);
    assert_eq!(t.next_wakeup(), Some(ms(1200))); // 0 + 1000 → the tick at 1200, not 1000
}

#[test]
fn receiver_delays_acks_to_every_second_segment_or_the_timeout() {
    let c = TcpConfig { delayed_ack: DelayedAck { count: 2, timeout: Dur::from_millis(200) }, ..cfg(TcpVariant::NewReno) };
    let mut r = TcpReceiver::new(0, &c);
    let mut out = Vec::new();
    let seg = |seq| Packet { seq, payload: 1448, ..Packet::new(PacketKind::TcpData, 0) };
    r.on_data(&c, ms(0), &seg(0), &mut out);
    assert!(out.is_empty());
    assert_eq!(r.next_wakeup(), Some(ms(200)));
    r.on_data(&c, ms(10), &seg(1), &mut out);
    assert_eq!(out.iter().map(|a| a.ack).collect::<Vec<_>>(), [2]);
    r.on_data(&c, ms(20), &seg(2), &mut out);
    r.on_timer(&c, ms(220), &mut out);
    assert_eq!(out.last().unwrap().ack, 3);
    assert_eq!(r.next_wakeup(), None);
}

#[test]
fn receiver_acks_out_of_order_at_once_with_sack_blocks_newest_first() {
    let c = TcpConfig { delayed_ack: DelayedAck { count: 2, timeout: Dur::from_millis(200) }, ..cfg(TcpVariant::Sack) };
    let mut r = TcpReceiver::new(0, &c);
    let mut out = Vec::new();
    let seg = |seq| Packet { seq, ..Packet::new(PacketKind::TcpData, 0) };
    r.on_data(&c, ms(0), &seg(0), &mut out);
    r.on_data(&c, ms(1), &seg(2), &mut out);
    r.on_data(&c, ms(2), &seg(5), &mut out);
    r.on_data(&c, ms(3), &seg(3), &mut out);
    let last = out.last().unwrap();
    assert_eq!(last.ack, 1);
    assert_eq!(last.sack_blocks(), [SackBlock { start: 2, end: 4 }, SackBlock { start: 5, end: 6 }]);
    // Filling the hole is acknowledged at once and delivers everything contiguous.
    r.on_data(&c, ms(4), &seg(1), &mut out);
    assert_eq!(out.last().unwrap().ack, 4);
    // A duplicate is acknowledged but not delivered twice.
    r.on_data(&c, ms(5), &seg(1), &mut out);
    assert_eq!(r.delivered_bytes(), 4 * 1448);
    assert_eq!(r.stats().duplicates, 1);
}

#[test]
fn l4s_sender_sends_ect1_and_retransmissions_not_ect() {
    // ecn = "l4s": new data carries ECT(1) (RFC 9331 §4.1); retransmissions stay Not-ECT as
    // every ECN sender here sends them (RFC 3168 §6.1.5).
    let c = TcpConfig { ecn: true, ecn_l4s: true, initial_window: 4, ..cfg(TcpVariant::NewReno) };
    let (mut s, first) = started(&c);
    assert!(first.iter().all(|p| p.ecn == Ecn::Ect1), "{:?}", first.iter().map(|p| p.ecn).collect::<Vec<_>>());
    let mut out = Vec::new();
    for _ in 0..3 {
        s.on_ack(&c, ms(100), &ack(0), &mut out);
    }
    let rtx: Vec<_> = out.iter().filter(|p| p.has(FLAG_RETRANSMIT)).collect();
    assert_eq!(rtx.len(), 1, "fast retransmit of segment 0");
    assert_eq!(rtx[0].ecn, Ecn::NotEct);
    let classic = TcpConfig { ecn_l4s: false, ..c.clone() };
    assert!(started(&classic).1.iter().all(|p| p.ecn == Ecn::Ect));
}

#[test]
fn ecn_retransmit_ect_sends_retransmissions_ect_as_ns2_does() {
    // ns-2.35's TcpAgent::output sets ect on every data packet when ecn_ is on, retransmissions
    // included; RFC 3168 §6.1.5 (the default) sends them Not-ECT. CWR stays on new data only.
    let base = TcpConfig { ecn: true, initial_window: 4, ..cfg(TcpVariant::Reno) };
    let rtx_of = |c: &TcpConfig| {
        let (mut s, _) = started(c);
        let mut out = Vec::new();
        for _ in 0..3 {
            s.on_ack(c, ms(100), &ack(0), &mut out);
        }
        let rtx: Vec<_> = out.into_iter().filter(|p| p.has(FLAG_RETRANSMIT)).collect();
        assert_eq!(rtx.len(), 1, "fast retransmit of segment 0");
        rtx[0].clone()
    };
    assert_eq!(rtx_of(&base).ecn, Ecn::NotEct);
    let ns2 = TcpConfig { ecn_retransmit_ect: true, ..base.clone() };
    let p = rtx_of(&ns2);
    assert_eq!(p.ecn, Ecn::Ect);
    assert!(!p.has(FLAG_CWR), "CWR goes on the next new segment, not the retransmission");
    let l4s = TcpConfig { ecn_l4s: true, ..ns2.clone() };
    assert_eq!(rtx_of(&l4s).ecn, Ecn::Ect1);
    // Without ECN the key changes nothing.
    let plain = TcpConfig { ecn: false, ..ns2 };
    assert_eq!(rtx_of(&plain).ecn, Ecn::NotEct);
}

#[test]
fn ecn_echo_until_cwr_and_one_reduction_per_window() {
    let c = TcpConfig { ecn: true, initial_window: 10, ..cfg(TcpVariant::NewReno) };
    let mut r = TcpReceiver::new(0, &c);
    let mut out = Vec::new();
    let seg = |seq, ecn, flags| Packet { seq, ecn, flags, ..Packet::new(PacketKind::TcpData, 0) };
    r.on_data(&c, ms(0), &seg(0, Ecn::Ce, 0), &mut out);
    r.on_data(&c, ms(1), &seg(1, Ecn::Ect, 0), &mut out);
    assert!(out.iter().all(|a| a.has(FLAG_ECE)));
    r.on_data(&c, ms(2), &seg(2, Ecn::Ect, FLAG_CWR), &mut out);
    assert!(!out.last().unwrap().has(FLAG_ECE));

    let (mut s, first) = started(&c);
    assert!(first.iter().all(|p| p.ecn == Ecn::Ect));
    let mut out = Vec::new();
    let echo = |n| Packet { flags: FLAG_ECE, ..ack(n) };
    s.on_ack(&c, ms(100), &echo(1), &mut out);
    assert_eq!((s.cwnd(), s.stats().ecn_reductions), (5.0, 1)); // flight 10 halved
    assert!(out.is_empty(), "9 segments still in flight, window 5");
    s.on_ack(&c, ms(101), &echo(2), &mut out);
    assert_eq!(s.stats().ecn_reductions, 1, "at most once per window");
    assert_eq!(s.cwnd(), 5.0, "an ACK with ECE does not grow the window");
    s.on_ack(&c, ms(102), &ack(6), &mut out);
    assert!(out[0].has(FLAG_CWR), "the first new segment after the reduction carries CWR");
    assert!(out[1..].iter().all(|p| !p.has(FLAG_CWR)));
}

#[test]
fn finite_transfer_sends_a_short_last_segment_and_completes() {
    let c = TcpConfig { transfer_bytes: Some(3000), ..cfg(TcpVariant::NewReno) };
    let (mut s, out) = started(&c);
    assert_eq!(seqs(&out), [0, 1, 2]);
    assert_eq!(out[2].payload, 3000 - 2 * 1448);
    assert!(out[2].has(FLAG_FIN) && !out[1].has(FLAG_FIN));
    let mut more = Vec::new();
    s.on_ack(&c, ms(100), &ack(3), &mut more);
    assert!(more.is_empty() && s.is_complete());
    assert_eq!(s.next_wakeup(), None, "timer stopped once everything is acknowledged");
}

#[test]
fn byte_sized_transfers_end_with_a_short_segment_and_deliver_exact_bytes() {
    // Replies carried one after another on one connection slot (HTTP): 3000 B, then 200 B.
    let c = TcpConfig { transfer_bytes: None, delayed_ack: DelayedAck { count: 1, timeout: Dur::from_millis(200) }, ..cfg(TcpVariant::NewReno) };
    let mut s = TcpSender::new(0, &c);
    let mut r = TcpReceiver::new(0, &c);
    let (mut data, mut acks) = (Vec::new(), Vec::new());
    s.begin_transfer_bytes(&c, ms(0), 3000, &mut data);
    assert_eq!(data.iter().map(|p| p.payload).collect::<Vec<_>>(), [1448, 1448, 104]);
    assert_eq!(data[2].size, 104 + c.header_bytes);
    // the short segment arrives first (reordered), then the full ones fill the gap
    for i in [2, 0, 1] {
        r.on_data(&c, ms(10), &data[i], &mut acks);
    }
    assert_eq!(r.delivered_bytes(), 3000);
    s.on_ack(&c, ms(20), &ack(3), &mut Vec::new());
    assert!(s.is_complete());
    data.clear();
    s.begin_transfer_bytes(&c, ms(30), 200, &mut data);
    assert_eq!((data.len(), data[0].seq, data[0].payload), (1, 3, 200));
    r.on_data(&c, ms(40), &data[0], &mut acks);
    assert_eq!(r.delivered_bytes(), 3200);
    // a whole number of segments keeps full ones
    s.on_ack(&c, ms(50), &ack(4), &mut Vec::new());
    data.clear();
    s.begin_transfer_bytes(&c, ms(60), 2 * 1448, &mut data);
    assert_eq!(data.iter().map(|p| p.payload).collect::<Vec<_>>(), [1448, 1448]);
}

#[test]
fn receiver_window_caps_the_flight() {
    let c = TcpConfig { max_window: 3, initial_window: 10, ..cfg(TcpVariant::NewReno) };
    let (_, out) = started(&c);
    assert_eq!(out.len(), 3);
}

// ---- end to end ----

enum Ev {
    Data(Packet),
    Ack(Packet),
    SenderTimer,
    ReceiverTimer,
}

/// Runs a transfer of `segments` over a path with `one_way` delay and a 1 ms per-segment
/// bottleneck, dropping the data transmissions whose index (counting every data packet sent,
/// retransmissions included) is in `drops`. Returns (receiver, sender) at the end.
fn transfer(c: &TcpConfig, segments: u64, drops: &[usize]) -> (TcpReceiver, TcpSender) {
    transfer_with(c, segments, |sent, _| drops.contains(&sent))
}

/// As [`transfer`], dropping the data packets for which `drop(index, packet)` says so.
fn transfer_with(c: &TcpConfig, segments: u64, mut drop: impl FnMut(usize, &Packet) -> bool) -> (TcpReceiver, TcpSender) {
    let c = TcpConfig { transfer_bytes: Some(segments * c.mss as u64), ..c.clone() };
    let one_way = Dur::from_millis(20);
    let mut s = TcpSender::new(0, &c);
    let mut r = TcpReceiver::new(0, &c);
    let mut heap: BinaryHeap<Reverse<(Time, u64, usize)>> = BinaryHeap::new();
    let mut evs: Vec<Option<Ev>> = Vec::new();
    let mut seq = 0;
    let mut push = |heap: &mut BinaryHeap<_>, evs: &mut Vec<Option<Ev>>, at: Time, ev: Ev| {
        evs.push(Some(ev));
        heap.push(Reverse((at, seq, evs.len() - 1)));
        seq += 1;
    };
    let (mut sent, mut link_free) = (0usize, Time::ZERO);
    let mut out = Vec::new();
    s.start(&c, Time::ZERO, &mut out);
    let mut now = Time::ZERO;
    let mut sender_timer_at = Time::NEVER;
    let mut receiver_timer_at = Time::NEVER;
    loop {
        // Ship what the endpoints emitted and (re)arm their timers.
        for p in out.drain(..) {
            if p.kind == PacketKind::TcpData {
                link_free = link_free.max(now) + Dur::from_millis(1);
                if !drop(sent, &p) {
                    push(&mut heap, &mut evs, link_free + one_way, Ev::Data(p));
                }
                sent += 1;
            } else {
                push(&mut heap, &mut evs, now + one_way, Ev::Ack(p));
            }
        }
        if let Some(w) = s.next_wakeup() {
            if w != sender_timer_at {
                sender_timer_at = w;
                push(&mut heap, &mut evs, w, Ev::SenderTimer);
            }
        }
        if let Some(w) = r.next_wakeup() {
            if w != receiver_timer_at {
                receiver_timer_at = w;
                push(&mut heap, &mut evs, w, Ev::ReceiverTimer);
            }
        }
        let Some(Reverse((at, _, i))) = heap.pop() else { break };
        now = at;
        assert!(now < Time(600_000_000_000), "transfer did not finish in 600 s");
        match evs[i].take().unwrap() {
            Ev::Data(p) => r.on_data(&c, now, &p, &mut out),
            Ev::Ack(a) => s.on_ack(&c, now, &a, &mut out),
            Ev::SenderTimer => s.on_timer(&c, now, &mut out),
            Ev::ReceiverTimer => r.on_timer(&c, now, &mut out),
        }
        if s.is_complete() && out.is_empty() {
            break;
        }
    }
    (r, s)
}

#[test]
fn sack_recovers_a_multi_loss_window_without_timeout() {
    let c = TcpConfig { initial_window: 10, ..cfg(TcpVariant::Sack) };
    let (r, s) = transfer(&c, 200, &[30, 32, 34, 36]);
    assert_eq!(r.delivered_bytes(), 200 * 1448);
    assert_eq!(s.stats().timeouts, 0);
    assert_eq!(s.stats().retransmits, 4);
}

#[test]
fn newreno_needs_one_round_trip_per_hole_but_no_timeout() {
    let c = TcpConfig { initial_window: 10, ..cfg(TcpVariant::NewReno) };
    let (r, s) = transfer(&c, 200, &[30, 32, 34]);
    assert_eq!(r.delivered_bytes(), 200 * 1448);
    assert_eq!((s.stats().timeouts, s.stats().fast_retransmits, s.stats().retransmits), (0, 1, 3));
}

#[test]
fn reno_halves_twice_for_two_losses_in_a_window_unless_guarded_as_ns2() {
    // Two losses ten segments apart in one large window: RFC 5681 Reno fast-retransmits each
    // (the second set of duplicates arrives after the first recovery ended); ns-2's `bugFix_`
    // refuses the second, as its duplicates are for data sent before `recover`, and the flow
    // waits for the retransmission timeout.
    let base = TcpConfig { initial_window: 40, ..cfg(TcpVariant::Reno) };
    let (r, s) = transfer(&base, 300, &[50, 60]);
    assert_eq!(r.delivered_bytes(), 300 * 1448);
    assert_eq!((s.stats().fast_retransmits, s.stats().timeouts), (2, 0));
    let ns2 = TcpConfig { fast_retransmit_guard: Some(FastRetransmitGuard::Ns2), ..base.clone() };
    let (r, s) = transfer(&ns2, 300, &[50, 60]);
    assert_eq!(r.delivered_bytes(), 300 * 1448);
    assert_eq!((s.stats().fast_retransmits, s.stats().timeouts), (1, 1));
    // RFC 6582's guard (NewReno's) refuses it too.
    let rfc = TcpConfig { fast_retransmit_guard: Some(FastRetransmitGuard::Rfc6582), ..base };
    assert_eq!(transfer(&rfc, 300, &[50, 60]).1.stats().fast_retransmits, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn every_variant_delivers_everything_exactly_once(
        variant in prop::sample::select(vec![TcpVariant::Tahoe, TcpVariant::Reno, TcpVariant::NewReno, TcpVariant::Sack]),
        delayed in any::<bool>(),
        prr in any::<bool>(),
        limited_transmit in any::<bool>(),
        keep_sack in any::<bool>(),
        reno_sack in any::<bool>(),
        cc in prop::sample::select(vec![CongestionControl::Reno, CongestionControl::Cubic, CongestionControl::CubicNs3]),
        drops in prop::collection::vec(0usize..400, 0..25),
    ) {
        let count = if delayed { 2 } else { 1 };
        let recovery = if prr && variant != TcpVariant::Tahoe { Recovery::Prr } else { Recovery::Classic };
        let c = TcpConfig {
            delayed_ack: DelayedAck { count, timeout: Dur::from_millis(200) },
            recovery,
            limited_transmit,
            congestion_control: cc,
            keep_sack_after_timeout: keep_sack && variant == TcpVariant::Sack,
            ns3_reno_sack: reno_sack && variant == TcpVariant::NewReno,
            ..cfg(variant)
        };
        let (r, s) = transfer(&c, 300, &drops);
        prop_assert_eq!(r.delivered_bytes(), 300 * 1448);
        prop_assert_eq!(r.rcv_nxt(), 300);
        prop_assert!(s.is_complete());
    }
}

#[test]
fn per_flow_state_stays_small() {
    // 100,000 flows must fit in a few GB (issue #2); the common case allocates nothing.
    let sender = std::mem::size_of::<TcpSender>();
    let receiver = std::mem::size_of::<TcpReceiver>();
    // 336 and 104 today (the sender grew from 168 B by the timeout-wait and cwnd integrals that
    // Morris 1999's metrics need, then by PRR's counters, the boxed CUBIC/DCTCP state, Lee 2002's minimum RTT
    // and Kumar 2003's application-limited writes (`app_limit`, +8 B with padding), and the
    // pointer to the optional ns-2 Vegas baseRTT state (+8 B), then by the last send time of
    // RFC 5681 §4.1's restart after idle (+8 B, 264 B), and the pointer to ns-3's emulated
    // scoreboard of `ns3_reno_sack` (+8 B, 272 B) and to the resent-segment set of
    // `ns3_sack_recovery` (+8 B, 280 B), and the count of HyStart exits (+8 B, 288 B), and the
    // pointer to the pacing clock of `pacing = true` (+8 B, 296 B; BBR's own state is boxed in its
    // `CcState` variant), and for `rack_tlp` the pointer to RFC 8985's per-segment state (+8 B)
    // and two u32 counters, TLP probes and RACK losses (+8 B, 312 B), and for ns-2's ECN reaction
    // and integer ssthresh the window to leave recovery with and a u32 count of timeouts in an
    // ECN-reduced window (+16 B, 328 B), and the sending host's coarse-timer phase, `timer_phase`
    // (+8 B, 336 B); the receiver by RFC 7323's
    // TS.Recent and Last.ACK.sent); a guard against accidental growth, not a tight budget.
    assert!(sender <= 336 && receiver <= 104, "sender {sender} B, receiver {receiver} B");
}

#[test]
fn a_paused_sender_finishes_its_flight_and_restarts_from_the_initial_window_after_idle() {
    let c = TcpConfig { restart_after_idle: true, initial_window: 4, ..cfg(TcpVariant::NewReno) };
    let (mut s, _) = started(&c); // 0..3 out
    let mut out = Vec::new();
    for n in 1..=4 {
        s.on_ack(&c, ms(100), &ack(n), &mut out); // slow start: cwnd 8, 4..11 out
    }
    assert_eq!((s.cwnd(), seqs(&out).last().copied()), (8.0, Some(11)));
    s.pause();
    out.clear();
    s.on_ack(&c, ms(200), &ack(12), &mut out);
    assert!(out.is_empty(), "paused: nothing new goes out");
    assert_eq!(s.next_wakeup(), None, "all acknowledged, timer stopped");
    assert!(s.cwnd() > 8.0);
    // Resumed 50 ms later (idle shorter than the 1-s RTO): the window is kept.
    let cwnd = s.cwnd();
    s.resume(&c, ms(250), &mut out);
    assert_eq!((s.cwnd(), out.len()), (cwnd, cwnd.floor() as usize));
    // The same sender resumed after 30 s: RFC 5681 §4.1's restart window, ssthresh kept.
    let (mut s, _) = started(&c);
    for n in 1..=4 {
        s.on_ack(&c, ms(100), &ack(n), &mut Vec::new());
    }
    s.pause();
    s.on_ack(&c, ms(200), &ack(12), &mut Vec::new());
    let ssthresh = s.ssthresh();
    out.clear();
    s.resume(&c, ms(30_200), &mut out);
    assert_eq!((s.cwnd(), s.ssthresh(), seqs(&out)), (4.0, ssthresh, vec![12, 13, 14, 15]));
    // Without the switch the old window comes back at once.
    let c = TcpConfig { restart_after_idle: false, ..c };
    let (mut s, _) = started(&c);
    for n in 1..=4 {
        s.on_ack(&c, ms(100), &ack(n), &mut Vec::new());
    }
    s.pause();
    s.on_ack(&c, ms(200), &ack(12), &mut Vec::new());
    out.clear();
    s.resume(&c, ms(30_200), &mut out);
    assert!(s.cwnd() > 8.0 && out.len() > 8, "{} {}", s.cwnd(), out.len());
}

#[test]
fn app_limited_sender_sends_only_what_the_application_wrote() {
    // Kumar 2003's "TCP-friendly CBR" reading (ns-2 Agent/TCP + CBR application): IW 4, the
    // application writes 1, then 5 segments; cwnd allows 4 in flight until ACKs arrive.
    let c = cfg(TcpVariant::NewReno);
    let mut s = TcpSender::new(0, &c);
    s.limit_to_app_writes();
    let mut out = Vec::new();
    s.start(&c, ms(0), &mut out);
    assert!(out.is_empty(), "nothing written yet");
    s.app_write(&c, ms(0), 1, &mut out);
    assert_eq!(seqs(&out), vec![0]);
    out.clear();
    s.app_write(&c, ms(10), 5, &mut out);
    assert_eq!(seqs(&out), vec![1, 2, 3], "cwnd 4: three more in flight");
    out.clear();
    s.on_ack(&c, ms(100), &ack(2), &mut out); // two acked, cwnd 6: the other two written segments go
    assert_eq!(seqs(&out), vec![4, 5]);
    out.clear();
    s.on_ack(&c, ms(110), &ack(6), &mut out);
    assert!(out.is_empty(), "the application has written nothing more");
    s.app_write(&c, ms(120), 1, &mut out);
    assert_eq!(seqs(&out), vec![6]);
}

#[test]
fn a_timeout_that_keeps_the_scoreboard_resends_only_unsacked_segments() {
    // IW 4: segments 0..4 out; 1 and 3 SACKed (two duplicates: no fast retransmit), then the timer.
    // Kept (ns-3, Linux): 0 and 2 are lost and go out as the window allows, 1 and 3 never again.
    // Cleared (RFC 2018 §8): go back N, so 3 goes out again although the receiver holds it.
    for (keep, expected) in [(true, vec![0, 2]), (false, vec![0, 2, 3])] {
        let c = TcpConfig { keep_sack_after_timeout: keep, ..cfg(TcpVariant::Sack) };
        let (mut s, _) = started(&c);
        let mut out = Vec::new();
        s.on_ack(&c, ms(100), &sack_ack(0, &[(1, 2)]), &mut out);
        s.on_ack(&c, ms(101), &sack_ack(0, &[(3, 4), (1, 2)]), &mut out);
        out.clear();
        s.on_timer(&c, ms(1000), &mut out);
        assert_eq!(seqs(&out), [0], "keep = {keep}: cwnd 1 after the timeout");
        out.clear();
        // The retransmitted 0 arrives: the receiver holds 0..2, so the ACK is 2 (SACK 3..4).
        s.on_ack(&c, ms(1100), &sack_ack(2, &[(3, 4)]), &mut out);
        let mut sent = vec![0];
        sent.extend(seqs(&out).into_iter().filter(|&q| q < 4));
        assert_eq!(sent, expected, "keep = {keep}");
    }
}

// ---- ns3_reno_sack: ns-3 3.44's recovery without SACK ----

fn ns3_nosack(recovery: Recovery, limited_transmit: bool) -> TcpConfig {
    TcpConfig { initial_window: 10, recovery, limited_transmit, ns3_reno_sack: true, ..cfg(TcpVariant::NewReno) }
}

#[test]
fn ns3_reno_sack_recovers_holes_in_one_window_resending_only_what_was_lost() {
    // ns-3 3.44 with drops of 2 and of 6 segments in one window: as many retransmissions as drops
    // (seen in its NS_LOG output, 2 of 2 and 6 of 6); the emulated flags stay consistent.
    for recovery in [Recovery::Classic, Recovery::Prr] {
        for drops in [&[40usize, 44][..], &[40, 42, 44, 46, 48, 50]] {
            let (r, s) = transfer(&ns3_nosack(recovery, true), 400, drops);
            assert_eq!(r.delivered_bytes(), 400 * 1448);
            let st = s.stats();
            assert_eq!((st.timeouts, st.fast_retransmits, st.retransmits), (0, 1, drops.len() as u64), "{recovery:?} {drops:?}");
        }
    }
}

/// Drops the first transmission of segment 100 and its first retransmission (so a timeout must
/// resend it with another hole, 110, outstanding), the case ns-3 3.44 turns into a chain.
fn drop_100_twice_and_110() -> impl FnMut(usize, &Packet) -> bool {
    let mut seen = std::collections::HashMap::<u32, u32>::new();
    move |_, p| {
        let n = seen.entry(p.seq).or_default();
        *n += 1;
        (p.seq == 100 && *n <= 2) || (p.seq == 110 && *n == 1)
    }
}

#[test]
fn ns3_reno_sack_after_a_timeout_with_two_holes_resends_what_the_receiver_holds() {
    // ns-3 3.44 itself, one flow without congestion losses and these three drops: 1,175
    // retransmissions in 4 s, 1,168 of segments the receiver already held (SACK on: 3;
    // limited transmit off: 4). The go-back-N copies after the timeout make duplicate ACKs,
    // their flags land on segments nobody lost, and each new head is then marked lost and resent.
    let (r, s) = transfer_with(&ns3_nosack(Recovery::Classic, true), 2000, drop_100_twice_and_110());
    assert_eq!(r.delivered_bytes(), 2000 * 1448);
    let st = *s.stats();
    assert!(st.timeouts >= 1);
    assert!(st.retransmits > 100, "{st:?}");
    // RFC 6582 NewReno (the default) and ns-3 without limited transmit resend a few segments only.
    for c in [TcpConfig { ns3_reno_sack: false, ..ns3_nosack(Recovery::Classic, true) }, ns3_nosack(Recovery::Classic, false)] {
        let (r, s) = transfer_with(&c, 2000, drop_100_twice_and_110());
        assert_eq!(r.delivered_bytes(), 2000 * 1448);
        assert!(s.stats().retransmits <= 12, "{:?} {:?}", c.ns3_reno_sack, s.stats());
    }
}

#[test]
fn ns3_reno_sack_enters_recovery_with_ssthresh_from_pipe_plus_one_and_no_inflation() {
    // Window 10 sent, ACK 1 (cwnd 11: 10 and 11 go out), then segment 1 is missing: three
    // duplicate ACKs with limited transmit. ns-3: each of the first two flags a segment, which
    // lowers pipe by one and lets one new segment out under the unchanged cwnd; the third enters
    // recovery with two more off pipe (a flag and the head lost), ssthresh = (pipe + 1) / 2 and
    // cwnd = ssthresh, no inflation.
    let c = ns3_nosack(Recovery::Classic, true);
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out);
    assert_eq!(seqs(&out), [10, 11]);
    out.clear();
    s.on_ack(&c, ms(101), &ack(1), &mut out);
    s.on_ack(&c, ms(102), &ack(1), &mut out);
    assert_eq!(seqs(&out), [12, 13]);
    out.clear();
    s.on_ack(&c, ms(103), &ack(1), &mut out);
    // 1..=13 outstanding, flags on 2, 3 and 4, the head lost: pipe 9; ssthresh (9 + 1) / 2.
    assert!(s.in_recovery());
    assert_eq!(s.ssthresh(), 5.0);
    assert_eq!(s.cwnd(), 5.0);
    assert_eq!(seqs(&out), [1], "the head at once, nothing else while pipe (10) exceeds cwnd");
}

#[test]
fn cubic_ns3_grows_by_newly_delivered_segments_after_a_timeout_not_by_a_sacked_run() {
    // 0..9 out, 0 and 5 lost, the rest SACKed; the RTO resends 0 with cwnd 1. The ACK of 5 covers
    // 0..4 but delivers only 0 (1..4 were SACKed): ns-3 grows its slow start by 1, not by 5.
    let c = TcpConfig {
        initial_window: 10,
        congestion_control: CongestionControl::CubicNs3,
        keep_sack_after_timeout: true,
        ..cfg(TcpVariant::Sack)
    };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &sack_ack(0, &[(1, 5), (6, 10)]), &mut out);
    s.on_timer(&c, ms(5000), &mut out);
    assert_eq!((s.stats().timeouts, s.cwnd()), (1, 1.0));
    out.clear();
    s.on_ack(&c, ms(5100), &sack_ack(5, &[(6, 10)]), &mut out);
    assert_eq!(s.cwnd(), 2.0, "slow start by the one segment delivered");
    assert_eq!(seqs(&out), vec![5, 10], "the other hole, then new data: cwnd 2 against a pipe of 0");
}

#[test]
fn cubic_ns3_does_not_grow_on_an_ack_with_new_sack_blocks() {
    // ns-3's DupAck moves CA_OPEN to CA_DISORDER and ProcessAck then grows nothing; an ACK without
    // new SACK information grows again.
    let c = TcpConfig { initial_window: 10, congestion_control: CongestionControl::CubicNs3, ..cfg(TcpVariant::Sack) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &sack_ack(2, &[(3, 4)]), &mut out);
    assert_eq!(s.cwnd(), 10.0);
    s.on_ack(&c, ms(101), &ack(4), &mut out);
    assert_eq!(s.cwnd(), 11.0, "the hole at 2 is delivered: one segment");
}

#[test]
fn cubic_ns3_counts_every_covered_segment_on_the_ack_that_ends_fast_recovery() {
    // 0..9 out, 0 lost, 1..9 SACKed: recovery. The ACK of 10 ends it; ns-3 sets cwnd = ssthresh and
    // feeds all 10 covered segments to CUBIC's count towards the next +1 (cnt is 100·cwnd this
    // early in the epoch, so the window itself stays at ssthresh).
    let c = TcpConfig { initial_window: 10, congestion_control: CongestionControl::CubicNs3, ..cfg(TcpVariant::Sack) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &sack_ack(0, &[(1, 10)]), &mut out);
    assert!(s.in_recovery());
    let ssthresh = s.ssthresh();
    s.on_ack(&c, ms(200), &ack(10), &mut out);
    assert!(!s.in_recovery());
    assert_eq!((s.cwnd(), s.ns3_segment_count()), (ssthresh, Some(10)));
}

/// A SACK + PRR sender that has sent 0..9 and entered recovery on the third duplicate ACK for a
/// lost segment 0 (1..3 SACKed).
fn sack_prr_in_recovery(ns3: bool) -> (TcpConfig, TcpSender, Vec<Packet>) {
    let c = TcpConfig {
        initial_window: 10,
        recovery: Recovery::Prr,
        ns3_sack_recovery: ns3,
        ..cfg(TcpVariant::Sack)
    };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    for (i, end) in [2, 3, 4].into_iter().enumerate() {
        s.on_ack(&c, ms(100 + i as u64), &sack_ack(0, &[(1, end)]), &mut out);
    }
    assert!(s.in_recovery());
    (c, s, out)
}

#[test]
fn ns3_sack_recovery_counts_each_duplicate_ack_twice_in_prr() {
    // ns-3 3.44's DoRecovery adds a segment per duplicate ACK on top of the SACKed one it
    // delivered, so over the same duplicates it sends more than RFC 6937 does.
    let sent_after_dupacks = |ns3: bool| {
        let (c, mut s, _) = sack_prr_in_recovery(ns3);
        let mut out = Vec::new();
        for end in 5..10 {
            s.on_ack(&c, ms(110 + u64::from(end)), &sack_ack(0, &[(1, end)]), &mut out);
        }
        out.len()
    };
    let (rfc, ns3) = (sent_after_dupacks(false), sent_after_dupacks(true));
    assert!(ns3 > rfc, "ns-3 sends {ns3}, RFC 6937 {rfc}");
}

#[test]
fn ns3_sack_recovery_restarts_the_timer_on_the_first_partial_ack_only() {
    for ns3 in [false, true] {
        let (c, mut s, mut out) = sack_prr_in_recovery(ns3);
        s.on_ack(&c, ms(200), &sack_ack(2, &[(3, 4)]), &mut out); // partial: 0 and 1 covered
        let after_first = s.next_wakeup();
        s.on_ack(&c, ms(300), &ack(3), &mut out); // partial again
        assert!(s.in_recovery());
        let after_second = s.next_wakeup();
        if ns3 {
            assert_eq!(after_second, after_first, "ns-3 keeps the timer of the first partial ACK");
        } else {
            assert!(after_second > after_first, "RFC 6675: every partial ACK restarts it");
        }
    }
}

// ---------------------------------------------------------------- LEDBAT (ledbat.rs)

fn ledbat_cfg(variant: LedbatVariant) -> TcpConfig {
    TcpConfig {
        congestion_control: CongestionControl::Ledbat,
        timestamps: true,
        initial_window: 10,
        ledbat: LedbatConfig { variant, slow_start: false, ..LedbatConfig::default() },
        ..cfg(TcpVariant::NewReno)
    }
}

/// An ACK of everything below `n` whose TSval is `owd_ms` after the echoed send time.
fn owd_ack(n: u32, echoed: Time, owd_ms: u32) -> Packet {
    Packet { ack: n, seq: (echoed.0 / 1_000_000) as u32 + owd_ms, sent_at: echoed, ..Packet::new(PacketKind::TcpAck, 0) }
}

#[test]
fn receiver_stamps_its_millisecond_clock_as_tsval() {
    let c = TcpConfig { timestamps: true, ..cfg(TcpVariant::NewReno) };
    let mut r = TcpReceiver::new(0, &c);
    let mut out = Vec::new();
    let seg = Packet { seq: 0, sent_at: Time(1_200_400_000), ..Packet::new(PacketKind::TcpData, 0) };
    r.on_data(&c, Time(1_234_900_000), &seg, &mut out);
    // TSval 1234 (ms, truncated) − TSecr 1200 = 34 ms, LEDBAT's sample (the exact delay is 34.5 ms).
    assert_eq!((out[0].seq, out[0].sent_at), (1234, Time(1_200_400_000)));
}

#[test]
fn ledbat_sender_shrinks_when_acks_show_queuing_beyond_the_target() {
    for variant in [LedbatVariant::Ns3, LedbatVariant::Rfc6817] {
        let c = ledbat_cfg(variant);
        let mut s = TcpSender::new(0, &c);
        let mut out = Vec::new();
        s.start(&c, ms(5), &mut out); // segments 0-9, TSval 5
        // First ACK: 20 ms one way, the base delay; no queuing, so off_target = 1.
        s.on_ack(&c, ms(50), &owd_ack(1, ms(5), 20), &mut out);
        match variant {
            // ns-3 caps cwnd at the 10 segments outstanding before the ACK: no growth.
            LedbatVariant::Ns3 => assert_eq!(s.cwnd(), 10.0),
            // RFC 6817: +GAIN·1·1/10, within FlightSize 10 + ALLOWED_INCREASE 1.
            LedbatVariant::Rfc6817 => assert!((s.cwnd() - 10.1).abs() < 1e-9, "{}", s.cwnd()),
        }
        let before = s.cwnd();
        // Then 220 ms: queuing 200 ms, twice the 100-ms target; off_target = −1 once the noise
        // filter (3 samples in ns-3, 4 in the RFC) holds only these: ns-3 holds its window for 2
        // ACKs and cuts about 1/cwnd on 7, the RFC grows about 1/cwnd on 3 and cuts on 6.
        for n in 2..=10 {
            s.on_ack(&c, ms(60 + u64::from(n)), &owd_ack(n, ms(5), 220), &mut out);
        }
        assert!(s.cwnd() < before - 0.25, "{variant:?}: {} from {before}", s.cwnd());
    }
}

#[test]
fn ledbat_takes_delay_samples_from_duplicate_acks_too() {
    // No fast retransmit (threshold 100), to isolate the growth rule.
    let c = TcpConfig { dupack_threshold: 100, ..ledbat_cfg(LedbatVariant::Rfc6817) };
    let mut s = TcpSender::new(0, &c);
    let mut out = Vec::new();
    s.start(&c, ms(5), &mut out);
    s.on_ack(&c, ms(50), &owd_ack(1, ms(5), 20), &mut out);
    // Four duplicate ACKs reporting 220 ms fill the RFC's 4-sample noise filter (and do not grow).
    for _ in 0..4 {
        s.on_ack(&c, ms(60), &owd_ack(1, ms(5), 220), &mut out);
    }
    let w = s.cwnd();
    s.on_ack(&c, ms(70), &owd_ack(2, ms(5), 220), &mut out);
    assert!((s.cwnd() - (w - 1.0 / w)).abs() < 1e-9, "off_target −1 at once: {} from {w}", s.cwnd());
}

// RACK-TLP (RFC 8985), `rack_tlp = true`.

fn rack(on: bool) -> TcpConfig {
    // `restart_timer_on_head_retransmit` as validation defaults it: on with RACK.
    TcpConfig { initial_window: 10, rack_tlp: on, restart_timer_on_head_retransmit: on, ..cfg(TcpVariant::Sack) }
}

#[test]
fn rack_detects_a_lost_retransmission_without_a_timeout() {
    // Segment 30 is dropped, and so is its fast retransmission. RFC 6675 never deems a resent
    // segment lost again and waits for the timer; RACK sees segments sent after the
    // retransmission delivered and resends it once more.
    let drop_30_twice = || {
        let mut dropped = 0;
        move |_: usize, p: &Packet| {
            let hit = p.seq == 30 && dropped < 2;
            dropped += u32::from(hit);
            hit
        }
    };
    let (r, s) = transfer_with(&rack(false), 200, drop_30_twice());
    assert_eq!(r.delivered_bytes(), 200 * 1448);
    assert_eq!(s.stats().timeouts, 1, "without RACK the timer repairs it (and goes back N)");
    let (r, s) = transfer_with(&rack(true), 200, drop_30_twice());
    assert_eq!(r.delivered_bytes(), 200 * 1448);
    let st = s.stats();
    assert_eq!((st.timeouts, st.retransmits, st.fast_retransmits), (0, 2, 1));
    assert!(st.rack_losses >= 2, "the original and the retransmission marked lost: {}", st.rack_losses);
}

#[test]
fn a_tail_loss_probe_repairs_the_last_segment_without_a_timeout() {
    // The last segment of a transfer is lost: no later segment can produce a duplicate ACK.
    let drop_last = |_: usize, p: &Packet| p.seq == 99 && !p.has(FLAG_RETRANSMIT);
    let (r, s) = transfer_with(&rack(false), 100, drop_last);
    assert_eq!(r.delivered_bytes(), 100 * 1448);
    assert_eq!((s.stats().timeouts, s.stats().tlp_probes), (1, 0));
    let (r, s) = transfer_with(&rack(true), 100, drop_last);
    assert_eq!(r.delivered_bytes(), 100 * 1448);
    assert_eq!((s.stats().timeouts, s.stats().tlp_probes, s.stats().retransmits), (0, 1, 1));
}

#[test]
fn a_probe_of_the_last_segment_lets_rack_find_the_earlier_tail_losses() {
    // The last three segments are lost: the probe resends the last, its SACK shows the two
    // before it were sent earlier and not delivered, and RACK marks them lost after the
    // reordering window (one SACKed segment is below DupThresh, so the window is min_RTT/4).
    let drop_tail = |_: usize, p: &Packet| p.seq >= 97 && !p.has(FLAG_RETRANSMIT);
    let (r, s) = transfer_with(&rack(false), 100, drop_tail);
    assert_eq!(r.delivered_bytes(), 100 * 1448);
    assert_eq!(s.stats().timeouts, 1);
    let (r, s) = transfer_with(&rack(true), 100, drop_tail);
    assert_eq!(r.delivered_bytes(), 100 * 1448);
    let st = s.stats();
    assert_eq!((st.timeouts, st.tlp_probes, st.retransmits, st.rack_losses), (0, 1, 3, 2));
}

#[test]
fn the_reordering_window_holds_back_a_loss_until_it_passes() {
    // One SACKed segment above a hole: RFC 6675 would wait for two more; RACK marks the hole
    // lost once min_RTT/4 has passed since the SACKed segment's delivery showed it overdue.
    let c = TcpConfig { timestamps: true, ..rack(true) };
    let (mut s, _) = started(&c); // 0..9 sent at 0 ms
    let mut out = Vec::new();
    let mut a = ack(1);
    a.sent_at = ms(0);
    s.on_ack(&c, ms(40), &a, &mut out); // RTT 40 ms
    let mut a = sack_ack(1, &[(2, 3)]);
    a.sent_at = ms(0);
    out.clear();
    s.on_ack(&c, ms(41), &a, &mut out);
    assert!(!s.in_recovery(), "segment 1 is inside the reordering window");
    let reo = s.next_wakeup().unwrap();
    // Segment 1's send time (0) + RACK.rtt (segment 2's, 41 ms) + min_RTT/4 (10 ms).
    assert_eq!(reo, ms(51));
    out.clear();
    s.on_timer(&c, reo, &mut out);
    assert!(s.in_recovery());
    assert_eq!(seqs(&out).first(), Some(&1), "segment 1 resent first");
    assert_eq!(s.stats().rack_losses, 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn rack_tlp_delivers_everything_exactly_once(
        delayed in any::<bool>(),
        prr in any::<bool>(),
        keep_sack in any::<bool>(),
        timestamps in any::<bool>(),
        drops in prop::collection::vec(0usize..400, 0..25),
    ) {
        let c = TcpConfig {
            delayed_ack: DelayedAck { count: if delayed { 2 } else { 1 }, timeout: Dur::from_millis(200) },
            recovery: if prr { Recovery::Prr } else { Recovery::Classic },
            keep_sack_after_timeout: keep_sack,
            timestamps,
            ..rack(true)
        };
        let (r, s) = transfer(&c, 300, &drops);
        prop_assert_eq!(r.delivered_bytes(), 300 * 1448);
        prop_assert!(s.is_complete());
    }
}

#[test]
fn sack_rule_3_resends_nothing_above_the_highest_sacked_segment() {
    // Receiver window 10, all of it outstanding (0..10), 0 lost. SACKs for 1..7 arrive while 7..10
    // are still on their way; the window blocks new data (rule 2), and rule 3 may take only an
    // unSACKed segment below the highest SACKed one (RFC 6675 NextSeg (1.b)): none here.
    let c = TcpConfig { initial_window: 10, max_window: 10, ..cfg(TcpVariant::Sack) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    for end in 2..=7 {
        s.on_ack(&c, ms(100), &sack_ack(0, &[(1, end)]), &mut out);
    }
    assert!(s.in_recovery());
    assert_eq!((s.cwnd(), s.snd_una()), (5.0, 0));
    let retx: Vec<u32> = out.iter().filter(|p| p.has(FLAG_RETRANSMIT)).map(|p| p.seq).collect();
    assert_eq!(retx, [0], "7, 8 and 9 lie above every SACKed segment: not resent");
    assert_eq!(out.len(), 1, "no new data either: the receiver window is full");
}

#[test]
fn integer_ssthresh_rounds_down_and_reno_keeps_the_half_window() {
    // Tahoe at cwnd 11 (11 outstanding) loses a segment: ssthresh 5.5, or ns-2's int 5.
    for (integer, expect) in [(false, 5.5), (true, 5.0)] {
        let c = TcpConfig { integer_ssthresh: integer, initial_window: 10, ..cfg(TcpVariant::Tahoe) };
        let (mut s, _) = started(&c);
        let mut out = Vec::new();
        s.on_ack(&c, ms(100), &ack(1), &mut out);
        for _ in 0..3 {
            s.on_ack(&c, ms(101), &ack(1), &mut out);
        }
        assert_eq!((s.cwnd(), s.ssthresh()), (1.0, expect), "integer_ssthresh = {integer}");
    }
    // Reno: ns-2's `cwnd_ = halfwin` survives fast recovery (dupwnd_ = 0), ssthresh_ is its int.
    let c = TcpConfig { integer_ssthresh: true, initial_window: 10, ..cfg(TcpVariant::Reno) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_ack(&c, ms(100), &ack(1), &mut out);
    for _ in 0..3 {
        s.on_ack(&c, ms(101), &ack(1), &mut out);
    }
    assert_eq!((s.cwnd(), s.ssthresh()), (8.0, 5.0), "int(5.5) + 3 inflated");
    s.on_ack(&c, ms(200), &ack(12), &mut out);
    assert_eq!((s.cwnd(), s.ssthresh()), (5.5, 5.0));
}

/// A Reno sender with 1..12 outstanding at cwnd 11, after an ACK of 2 carrying ECE.
fn echoed(c: &TcpConfig) -> TcpSender {
    let (mut s, _) = started(c);
    let mut out = Vec::new();
    s.on_ack(c, ms(100), &ack(1), &mut out);
    s.on_ack(c, ms(110), &Packet { flags: FLAG_ECE, ..ack(2) }, &mut out);
    s
}

#[test]
fn ns2_ecn_style_reacts_to_echoes_as_ns2_tcp_does() {
    let ns2 = TcpConfig {
        ecn: true, ecn_style: EcnStyle::Ns2, initial_window: 10, fast_retransmit_guard: Some(FastRetransmitGuard::Ns2),
        ..cfg(TcpVariant::Reno)
    };
    let rfc = TcpConfig { ecn_style: EcnStyle::Rfc3168, ..ns2.clone() };
    let echo = |n| Packet { flags: FLAG_ECE, ..ack(n) };

    // A loss in the window the echo halved: ns-2 resends without a second cut; RFC 3168 cuts again.
    for (c, ssthresh) in [(&ns2, 5.5), (&rfc, 2.75)] {
        let mut s = echoed(c);
        assert_eq!((s.cwnd(), s.stats().ecn_reductions), (5.5, 1));
        let mut out = Vec::new();
        for _ in 0..3 {
            s.on_ack(c, ms(120), &ack(2), &mut out);
        }
        assert_eq!(seqs(&out), [2], "the fast retransmit");
        assert_eq!((s.ssthresh(), s.stats().fast_retransmits), (ssthresh, 1), "{:?}", c.ecn_style);
    }

    // A timeout in that window: ns-2 restarts from one segment and keeps ssthresh; its CWR rides on
    // the retransmission. RFC 3168 halves the 5.5 in use again and sends no CWR on a resend.
    for (c, ssthresh, cwr) in [(&ns2, 5.5, true), (&rfc, 2.75, false)] {
        let mut s = echoed(c);
        let mut out = Vec::new();
        s.on_timer(c, s.next_wakeup().unwrap(), &mut out);
        assert_eq!((s.cwnd(), s.ssthresh(), s.stats().timeouts), (1.0, ssthresh, 1), "{:?}", c.ecn_style);
        assert_eq!(s.stats().ecn_window_timeouts, u32::from(cwr));
        assert_eq!((seqs(&out), out[0].has(FLAG_CWR)), (vec![2], cwr));
    }

    // An echo on a duplicate ACK: ns-2 halves (once the ACK passes `recover`); RFC 3168 reads echoes
    // on new data only.
    for (c, cwnd) in [(&ns2, 5.5), (&rfc, 11.0)] {
        let (mut s, _) = started(c);
        let mut out = Vec::new();
        s.on_ack(c, ms(100), &ack(1), &mut out);
        s.on_ack(c, ms(110), &echo(1), &mut out);
        assert_eq!(s.cwnd(), cwnd, "{:?}", c.ecn_style);
    }

    // Right after a timeout an echo halves cwnd 1 to 0.5: nothing is sent until the timer fires,
    // which restarts from one segment without backing off or cutting ssthresh.
    let mut s = echoed(&ns2);
    let mut out = Vec::new();
    s.on_timer(&ns2, s.next_wakeup().unwrap(), &mut out); // resends 2
    s.on_ack(&ns2, ms(3000), &echo(12), &mut out); // everything acknowledged, with an echo
    assert_eq!((s.cwnd(), s.ssthresh()), (0.5, 2.0));
    out.clear();
    s.on_ack(&ns2, ms(3001), &ack(12), &mut out);
    assert!(out.is_empty(), "window int(0.5) = 0");
    let fire = s.next_wakeup().expect("the timer runs while cwnd < 1");
    s.on_timer(&ns2, fire, &mut out);
    assert_eq!((seqs(&out), s.cwnd(), s.ssthresh()), (vec![12], 1.0, 2.0));
    assert_eq!(s.stats().ecn_window_timeouts, 2);
}

#[test]
fn halve_at_every_timeout_takes_a_repeated_timeout_to_ssthresh_2_as_ns2() {
    // ns-2's TcpAgent::timeout halves min(cwnd, window_) each time: 10 → 5, then cwnd 1 → 2.
    let c = TcpConfig { initial_window: 10, halve_at_every_timeout: true, ..cfg(TcpVariant::NewReno) };
    let (mut s, _) = started(&c);
    let mut out = Vec::new();
    s.on_timer(&c, s.next_wakeup().unwrap(), &mut out);
    assert_eq!(s.ssthresh(), 5.0);
    s.on_timer(&c, s.next_wakeup().unwrap(), &mut out);
    assert_eq!((s.ssthresh(), s.stats().timeouts), (2.0, 2));
}
