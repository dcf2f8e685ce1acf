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
    /// a retransmission: `m_isRetransDataAcked`); ns-3 computes in bytes, so the proportional
    /// part is rounded up to a byte of `mss`, not to a segment. Returns the send count in
    /// segments (cwnd becomes `pipe` + it), `None` when nothing was delivered (cwnd unchanged).
    pub(super) fn ns3_send_count(&mut self, delivered: u32, dupack: bool, pipe: u32, ssthresh: f64, safe_ack: bool,
                                 mss: u32) -> Option<f64> {
        let delivered = delivered + u32::from(dupack && self.delivered < self.recover_fs);
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let (pipe, done, out) = (f64::from(pipe), f64::from(self.delivered), f64::from(self.out));
        let count = if pipe > ssthresh {
            let mss = f64::from(mss);
            (done * ssthresh / f64::from(self.recover_fs) * mss).ceil() / mss - out
        } else {
            let limit = (done - out).max(f64::from(delivered)) + if safe_ack { 1.0 } else { 0.0 };
            limit.min(ssthresh - pipe)
        };
        // "Force a fast retransmit upon entering fast recovery".
        Some(count.max(if self.out > 0 { 0.0 } else { 1.0 }))
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
}
