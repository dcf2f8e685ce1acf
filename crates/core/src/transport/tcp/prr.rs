//! Proportional Rate Reduction (RFC 6937 §3), in segments: during fast recovery, send in
//! proportion to what the receiver reports delivered, so the window lands on ssthresh at the end
//! of recovery instead of stalling for half an RTT (classic Reno) or bursting (NewReno's partial
//! ACKs). The slow-start reduction bound (SSRB) governs once pipe falls below ssthresh.

/// One recovery episode's PRR counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Prr {
    /// prr_delivered: segments the receiver reported delivered since recovery began.
    delivered: u32,
    /// prr_out: segments sent (new and retransmitted) since recovery began.
    out: u32,
    /// RecoverFS: `snd_max − snd_una` on entering recovery.
    recover_fs: u32,
}

impl Prr {
    /// RFC 6937 §3 "on entering recovery".
    pub(super) fn start(recover_fs: u32) -> Prr {
        Prr { delivered: 0, out: 0, recover_fs: recover_fs.max(1) }
    }

    /// RFC 6937 §3 "on every ACK during recovery": `delivered` segments newly delivered by this
    /// ACK, `pipe` segments in the network; returns sndcnt, how many segments may be sent now.
    /// Without SACK, `cap_delivered` applies §3's mitigation: total delivered ≤ RecoverFS.
    pub(super) fn sndcnt(&mut self, delivered: u32, pipe: u32, ssthresh: f64, cap_delivered: bool) -> u32 {
        let delivered = if cap_delivered { delivered.min(self.recover_fs.saturating_sub(self.delivered)) } else { delivered };
        self.delivered += delivered;
        let count = if f64::from(pipe) > ssthresh {
            // Proportional: CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out.
            (f64::from(self.delivered) * ssthresh / f64::from(self.recover_fs)).ceil() as i64 - i64::from(self.out)
        } else {
            // SSRB: limit = MAX(prr_delivered − prr_out, DeliveredData) + MSS.
            let limit = (i64::from(self.delivered) - i64::from(self.out)).max(i64::from(delivered)) + 1;
            ((ssthresh - f64::from(pipe)).floor() as i64).min(limit)
        };
        count.max(0) as u32
    }

    /// ns-3 3.44's `TcpPrrRecovery::DoRecovery` (tcp-prr-recovery.cc), for the `ns3_reno_sack`
    /// sender: a duplicate ACK counts one segment delivered while prr_delivered < RecoverFS; the
    /// bound below ssthresh is PRR-CRB, plus one segment on a "safe" ACK (one that acknowledges
    /// a retransmission: `m_isRetransDataAcked`). Returns the send count in segments (cwnd becomes
    /// `pipe` + it), `None` when nothing was delivered (cwnd unchanged).
    ///
    /// The arithmetic is ns-3's, in bytes and in `uint32_t`, with its two artifacts (later ns-3
    /// versions compute in 64 bits):
    /// * `prr_delivered · ssthresh` is a 32-bit product, so it wraps once it passes 2^32 bytes²
    ///   (about 46 × 62 segments of 1448 B);
    /// * `max(prr_delivered − prr_out, delivered)` subtracts unsigned: when more was sent than
    ///   delivered (every partial ACK resends the head) the difference wraps, wins the max, and
    ///   turns back into the negative `prr_delivered − prr_out` as an `int`, so nothing is sent.
    pub(super) fn ns3_send_count(&mut self, delivered: u32, dupack: bool, pipe: u32, ssthresh: f64, safe_ack: bool,
                                 mss: u32) -> Option<f64> {
        let delivered = delivered + u32::from(dupack && self.delivered < self.recover_fs);
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let bytes = |segments: u32| segments.wrapping_mul(mss);
        let (done, out, delivered, pipe) = (bytes(self.delivered), bytes(self.out), bytes(delivered), bytes(pipe));
        let ssthresh = (ssthresh * f64::from(mss)).round() as u32;
        let count: i32 = if pipe > ssthresh {
            let proportional = f64::from(done.wrapping_mul(ssthresh)) / f64::from(bytes(self.recover_fs));
            (proportional.ceil() - f64::from(out)) as i32
        } else {
            let limit = (done.wrapping_sub(out).max(delivered) as i32).wrapping_add(if safe_ack { mss as i32 } else { 0 });
            limit.min((ssthresh - pipe) as i32)
        };
        // "Force a fast retransmit upon entering fast recovery".
        let count = count.max(if out > 0 { 0 } else { mss as i32 });
        Some(f64::from(count) / f64::from(mss))
    }

    /// Records `n` segments sent (prr_out += n).
    pub(super) fn sent(&mut self, n: u32) {
        self.out += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_part_sends_ssthresh_over_recover_fs_per_delivered_segment() {
        // RFC 6937 Appendix A's example shape: RecoverFS 20, ssthresh 10 — one segment out per
        // two delivered while pipe stays above ssthresh.
        let mut prr = Prr::start(20);
        let mut sent = Vec::new();
        for _ in 0..8 {
            let n = prr.sndcnt(1, 15, 10.0, false);
            prr.sent(n);
            sent.push(n);
        }
        assert_eq!(sent, [1, 0, 1, 0, 1, 0, 1, 0]);
    }

    #[test]
    fn slow_start_reduction_bound_refills_towards_ssthresh() {
        // pipe far below ssthresh (a burst of losses): at most delivered + 1 per ACK.
        let mut prr = Prr::start(20);
        let n = prr.sndcnt(1, 2, 10.0, false);
        assert_eq!(n, 2);
        prr.sent(n);
        // never more than what fills the window up to ssthresh
        assert_eq!(prr.sndcnt(5, 9, 10.0, false), 1);
    }

    #[test]
    fn without_sack_total_delivered_is_capped_at_recover_fs() {
        let mut prr = Prr::start(4);
        for _ in 0..10 {
            prr.sndcnt(1, 100, 2.0, true);
        }
        assert_eq!(prr.delivered, 4);
    }

    #[test]
    fn ns3_sends_nothing_below_ssthresh_once_more_was_sent_than_delivered() {
        // Three segments out (the head resent on partial ACKs), one delivered so far: RFC 6937's
        // max(prr_delivered - prr_out, DeliveredData) would allow the one delivered; ns-3 3.44's
        // unsigned difference wraps and becomes -2 segments, so the count is 0, safe ACK or not.
        for safe_ack in [false, true] {
            let mut prr = Prr::start(20);
            prr.sent(3);
            assert_eq!(prr.ns3_send_count(1, false, 4, 10.0, safe_ack, 1448), Some(0.0), "safe {safe_ack}");
        }
        // Delivered ahead of sent: the PRR-CRB bound, one more segment on a safe ACK.
        let mut prr = Prr::start(20);
        prr.sent(1);
        assert_eq!(prr.ns3_send_count(4, false, 4, 10.0, false, 1448), Some(4.0));
        let mut prr = Prr::start(20);
        prr.sent(1);
        assert_eq!(prr.ns3_send_count(4, false, 4, 10.0, true, 1448), Some(5.0));
    }

    #[test]
    fn ns3_proportional_product_wraps_at_32_bits() {
        // 60 segments delivered, ssthresh 62, RecoverFS 100, 1448-byte segments: 86,880 · 89,776 =
        // 7,799,738,880 wraps to 3,504,771,584; / 144,800 rounds up to 24,205 bytes (37.2 segments
        // without the wrap).
        let mut prr = Prr::start(100);
        let count = prr.ns3_send_count(60, false, 70, 62.0, false, 1448).unwrap();
        assert_eq!(count * 1448.0, 24_205.0);
    }
}
