//! ns-2 TCP Vegas's `baseRTT` bookkeeping, as an alternative source of Lee 2002's RTT hint
//! (`rtt_hint = "sender-vegas"`).
//!
//! Lee 2002 §3.1 computes the hint "with the baseRTT logic of ns-2's TCP Vegas code". Besides the
//! running minimum of per-ACK samples, that code (`tcp/tcp-vegas.cc`, `VegasTcpAgent::recv`, ns-2
//! 2.1b8–2.35) has a once-per-round step that can *raise* baseRTT:
//!
//! ```text
//! if ack_seqno >= v_begseq_:                      # a round (one RTT) has ended
//!     rtt    = v_sumRTT_/v_cntRTT_ if v_cntRTT_ > 0 else now − v_begtime_
//!     rttLen = t_seqno_ − v_begseq_               # segments sent during the round
//!     if rtt > 0 and (rtt < baseRTT or rttLen <= 1): baseRTT = rtt
//!     v_begseq_ = t_seqno_; v_begtime_ = now; v_sumRTT_ = v_cntRTT_ = 0
//! then, per ACK: sample = now − send time; v_sumRTT_ += sample; v_cntRTT_++; baseRTT = min(baseRTT, sample)
//! ```
//!
//! so a flow with at most one segment per round (after a timeout, or a tiny window) reports its
//! round's *average* RTT, queueing included. Whether the thesis copied this block is not known
//! (spec seed001-white.md §2.1.1 "a quirk in ns-2 Vegas"): the default hint is the pure running
//! minimum its text describes, and this mode exists for sensitivity runs.
//!
//! Also as ns-2: baseRTT starts at the absolute time of the first ACK (`firstrecv_`), which the
//! first sample then lowers, and `v_begtime_` starts at time 0. Deviation: ns-2 takes the per-ACK
//! sample only for a segment sent once (Karn); here it is the echoed send time of the segment that
//! triggered the ACK, as for the default hint, which is a valid sample for retransmissions too.

use crate::engine::Time;

/// Vegas's round state and baseRTT, in ns.
#[derive(Debug, Clone)]
pub struct VegasBaseRtt {
    /// `v_begseq_`: the first segment of the current round (ns-2 seqno counts packets).
    round_begin_seq: u32,
    /// `v_begtime_`.
    round_begin: Time,
    /// `v_sumRTT_`, ns.
    round_sum_ns: u64,
    /// `v_cntRTT_`.
    round_samples: u32,
    /// `v_baseRTT_`, ns; `None` before the first ACK.
    base_ns: Option<u64>,
}

impl Default for VegasBaseRtt {
    fn default() -> Self {
        VegasBaseRtt { round_begin_seq: 0, round_begin: Time::ZERO, round_sum_ns: 0, round_samples: 0, base_ns: None }
    }
}

impl VegasBaseRtt {
    /// An ACK of new data: `acked_through` is the highest segment it acknowledges (ns-2's ACK
    /// seqno; ours is one below the cumulative ACK), `next_to_send` is `t_seqno_` after the ACK
    /// moved `snd_una`, `sample_ns` this ACK's RTT sample.
    pub fn on_new_ack(&mut self, now: Time, acked_through: u32, next_to_send: u32, sample_ns: u64) {
        let mut base = *self.base_ns.get_or_insert(now.0); // firstrecv_
        if acked_through >= self.round_begin_seq {
            let rtt = if self.round_samples > 0 {
                self.round_sum_ns / u64::from(self.round_samples)
            } else {
                now.0.saturating_sub(self.round_begin.0)
            };
            // Signed, as in ns-2: after a go-back-N `t_seqno_` can sit below `v_begseq_`.
            let round_len = i64::from(next_to_send) - i64::from(self.round_begin_seq);
            if rtt > 0 && (rtt < base || round_len <= 1) {
                base = rtt;
            }
            self.round_begin_seq = next_to_send;
            self.round_begin = now;
            self.round_sum_ns = 0;
            self.round_samples = 0;
        }
        self.round_sum_ns += sample_ns;
        self.round_samples += 1;
        if sample_ns > 0 {
            base = base.min(sample_ns);
        }
        self.base_ns = Some(base);
    }

    /// baseRTT in ns, once an ACK has arrived.
    pub fn base_rtt_ns(&self) -> Option<u64> {
        self.base_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn at(ms: u64) -> Time {
        Time(ms * MS)
    }

    #[test]
    fn first_ack_starts_at_its_arrival_time_and_the_sample_lowers_it() {
        let mut v = VegasBaseRtt::default();
        // Flow started at 500 ms, IW 2: the first ACK (of segment 0) arrives at 560 ms, RTT 60 ms.
        v.on_new_ack(at(560), 0, 2, 60 * MS);
        assert_eq!(v.base_rtt_ns(), Some(60 * MS));
    }

    #[test]
    fn a_round_with_many_segments_keeps_the_minimum() {
        let mut v = VegasBaseRtt::default();
        v.on_new_ack(at(60), 0, 2, 60 * MS); // round 1 ends at once (seqno 0 ≥ 0); next round begins at 2
        v.on_new_ack(at(61), 1, 4, 61 * MS);
        // Round 2 ends at the ACK of segment 2; its average (60.5 ms) is above the base and 2 segments went out.
        v.on_new_ack(at(120), 2, 6, 90 * MS);
        assert_eq!(v.base_rtt_ns(), Some(60 * MS));
    }

    #[test]
    fn a_round_with_one_segment_overwrites_the_base_with_its_average() {
        let mut v = VegasBaseRtt::default();
        v.on_new_ack(at(60), 0, 1, 60 * MS); // round begins at segment 1, one segment in it
        // The ACK of segment 1 ends the round: rttLen = t_seqno_(2) − v_begseq_(1) = 1 ≤ 1, so the
        // round's average (the 60 ms sample of the previous ACK) replaces the base; this ACK's 150 ms
        // sample cannot lower it.
        v.on_new_ack(at(210), 1, 2, 150 * MS);
        assert_eq!(v.base_rtt_ns(), Some(60 * MS));
        // Next round: segment 2 alone, queueing now 100 ms: the ACK of segment 2 ends the round whose
        // only sample was 150 ms, so baseRTT rises to 150 ms (the quirk), and 160 ms does not lower it.
        v.on_new_ack(at(370), 2, 3, 160 * MS);
        assert_eq!(v.base_rtt_ns(), Some(150 * MS));
    }

    #[test]
    fn after_go_back_n_the_negative_round_length_also_overwrites() {
        let mut v = VegasBaseRtt::default();
        v.on_new_ack(at(60), 0, 20, 60 * MS); // round begins at 20
        v.on_new_ack(at(70), 5, 20, 80 * MS); // inside the round
        // A timeout sent the sender back to segment 8; the ACK of 20 ends the round with t_seqno_ 9 < 20.
        v.on_new_ack(at(1500), 20, 9, 1400 * MS);
        assert_eq!(v.base_rtt_ns(), Some(70 * MS), "the round's average (60, 80 ms) replaced the 60 ms minimum");
    }
}
