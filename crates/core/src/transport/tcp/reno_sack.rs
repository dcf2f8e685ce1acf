//! ns-3 3.44's "Reno SACK" scoreboard: how `TcpTxBuffer` keeps score for a connection without the
//! SACK option (`TcpSocketBase::Sack = false`). Each segment sent and not yet cumulatively
//! acknowledged carries three flags, `sacked`, `lost` and `retrans`; with no SACK blocks to read,
//! the socket sets them by rule, and pipe and NextSeg are computed from them exactly as with SACK.
//! Used by the sender's `ns3_reno_sack` mode (`sender/ns3_nosack.rs`).
//!
//! The rules, as ns-3 3.44's tcp-tx-buffer.cc has them (function names are ns-3's):
//! * `AddRenoSack`: one duplicate ACK means one segment left the network, so the first segment
//!   above the head without the `sacked` flag gets it, whatever it really is. The flags therefore
//!   form one run from the second segment up.
//! * `MarkHeadAsLost`: the head loses `sacked` and `retrans` and gains `lost`.
//! * `DiscardUpTo` (a cumulative ACK): the acknowledged segments go; if the new head carries the
//!   `sacked` flag, the flag moves to the end of the run (`AddRenoSack`) and the head is marked
//!   lost. Flags above the ACK stay: leaving recovery does not clear them.
//! * `ResetRenoSack` + `SetSentListLost` (a retransmission timeout): every flag cleared, every
//!   segment outstanding lost.
//! * `IsLost(seq)`: below the highest flagged segment and flagged lost.
//! * pipe (`BytesInFlight`) = sent − sacked − lost + retransmitted.
//! * `NextSeg` rule 1: the first segment that is lost, not retransmitted, not flagged, and below
//!   the highest flagged one if any flag was set since the last reset. (Rule 3 is off without
//!   SACK in 3.44.)
//!
//! After a timeout the go-back-N resends copies the receiver already holds; their duplicate ACKs
//! leave flags on segments nobody lost, and `DiscardUpTo` then marks each new head lost and it is
//! resent: ns-3 retransmits far more than it loses (docs/validation.md, "Drop-tail without SACK").
//! That is the behaviour this module reproduces, on purpose.

use std::collections::VecDeque;

const SACKED: u8 = 1;
const LOST: u8 = 2;
const RETRANS: u8 = 4;

/// The flags of the segments in `[base, base + len)`, the data sent and not yet acknowledged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct RenoSackBoard {
    /// The head's segment number (`snd_una`).
    base: u32,
    flags: VecDeque<u8>,
    /// Counts of each flag, so pipe is O(1).
    sacked: u32,
    lost: u32,
    retrans: u32,
    /// The highest segment given the `sacked` flag since the last reset (`m_highestSack`;
    /// `None` = `m_sackSeen` false).
    highest_sacked: Option<u32>,
}

impl RenoSackBoard {
    /// A board whose next segment is `base`.
    pub(super) fn new(base: u32) -> RenoSackBoard {
        RenoSackBoard { base, ..RenoSackBoard::default() }
    }

    fn index(&self, seq: u32) -> Option<usize> {
        let i = seq.checked_sub(self.base)? as usize;
        (i < self.flags.len()).then_some(i)
    }

    fn set(&mut self, i: usize, flag: u8) {
        if self.flags[i] & flag == 0 {
            self.flags[i] |= flag;
            *self.counter(flag) += 1;
        }
    }

    fn clear(&mut self, i: usize, flag: u8) {
        if self.flags[i] & flag != 0 {
            self.flags[i] &= !flag;
            *self.counter(flag) -= 1;
        }
    }

    fn counter(&mut self, flag: u8) -> &mut u32 {
        match flag {
            SACKED => &mut self.sacked,
            LOST => &mut self.lost,
            _ => &mut self.retrans,
        }
    }

    /// A segment leaves: new data at the top, or (`retransmission`) one already on the board,
    /// which gets the `retrans` flag.
    pub(super) fn on_send(&mut self, seq: u32, retransmission: bool) {
        match self.index(seq) {
            Some(i) if retransmission => self.set(i, RETRANS),
            Some(_) => {}
            None => {
                debug_assert_eq!(seq, self.base + self.flags.len() as u32, "new data is sent in order");
                self.flags.push_back(0);
            }
        }
    }

    /// `AddRenoSack`: flags the first unflagged segment above the head (none: nothing happens).
    pub(super) fn add_reno_sack(&mut self) {
        if let Some(i) = (1..self.flags.len()).find(|&i| self.flags[i] & SACKED == 0) {
            self.set(i, SACKED);
            self.highest_sacked = Some(self.base + i as u32);
        }
    }

    /// `MarkHeadAsLost`.
    pub(super) fn mark_head_lost(&mut self) {
        if !self.flags.is_empty() {
            self.clear(0, SACKED);
            self.clear(0, RETRANS);
            self.set(0, LOST);
        }
    }

    /// `DiscardUpTo(ack)`: forgets the segments below `ack`, then the flagged-head fix-up.
    pub(super) fn discard_up_to(&mut self, ack: u32) {
        while self.base < ack {
            let Some(f) = self.flags.pop_front() else {
                break;
            };
            self.sacked -= u32::from(f & SACKED != 0);
            self.lost -= u32::from(f & LOST != 0);
            self.retrans -= u32::from(f & RETRANS != 0);
            self.base += 1;
        }
        self.base = self.base.max(ack);
        if self.flags.front().is_some_and(|f| f & SACKED != 0) {
            self.clear(0, SACKED);
            self.add_reno_sack();
            self.mark_head_lost();
        }
        if self.highest_sacked.is_some_and(|h| h <= self.base) {
            self.highest_sacked = None;
        }
    }

    /// `ResetRenoSack` and `SetSentListLost(true)`, a retransmission timeout.
    pub(super) fn all_lost(&mut self) {
        self.flags.iter_mut().for_each(|f| *f = LOST);
        (self.sacked, self.lost, self.retrans) = (0, self.flags.len() as u32, 0);
        self.highest_sacked = None;
    }

    /// `IsLost(seq)`.
    pub(super) fn is_lost(&self, seq: u32) -> bool {
        self.highest_sacked.is_some_and(|h| seq < h) && self.index(seq).is_some_and(|i| self.flags[i] & LOST != 0)
    }

    /// `BytesInFlight`, in segments: sent − sacked − lost + retransmitted.
    pub(super) fn pipe(&self) -> u32 {
        (self.flags.len() as u32 + self.retrans).saturating_sub(self.sacked + self.lost)
    }

    /// `NextSeg` rule 1: the segment to retransmit, if any.
    pub(super) fn next_lost(&self) -> Option<u32> {
        let below = self.highest_sacked.map_or(u32::MAX, |h| h);
        self.flags
            .iter()
            .position(|&f| f & (SACKED | RETRANS) == 0 && f & LOST != 0)
            .map(|i| self.base + i as u32)
            .filter(|&seq| seq < below)
    }

    /// Whether any segment below `ack` was retransmitted and not flagged sacked (ns-3's
    /// `m_isRetransDataAcked`, PRR's "safe ACK"), asked before `discard_up_to(ack)`.
    pub(super) fn retransmission_acked(&self, ack: u32) -> bool {
        let n = ack.saturating_sub(self.base).min(self.flags.len() as u32) as usize;
        self.flags.iter().take(n).any(|&f| f & RETRANS != 0 && f & SACKED == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(n: u32) -> RenoSackBoard {
        let mut b = RenoSackBoard::new(0);
        for s in 0..n {
            b.on_send(s, false);
        }
        b
    }

    #[test]
    fn duplicate_acks_flag_a_run_from_the_second_segment() {
        let mut b = board(6);
        b.add_reno_sack();
        b.add_reno_sack();
        assert_eq!(b.pipe(), 4);
        assert_eq!(b.highest_sacked, Some(2));
        b.mark_head_lost();
        assert_eq!(b.pipe(), 3);
        assert!(b.is_lost(0));
        assert!(!b.is_lost(1), "flagged sacked");
        assert_eq!(b.next_lost(), Some(0));
        b.on_send(0, true);
        assert_eq!(b.pipe(), 4, "a retransmitted lost segment is in flight again");
        assert_eq!(b.next_lost(), None);
    }

    #[test]
    fn no_flag_is_added_once_every_segment_above_the_head_has_one() {
        let mut b = board(3);
        for _ in 0..5 {
            b.add_reno_sack();
        }
        assert_eq!(b.sacked, 2);
    }

    #[test]
    fn an_ack_onto_a_flagged_head_moves_the_flag_up_and_marks_the_head_lost() {
        // Segments 0..8 sent; three duplicate ACKs flagged 1, 2, 3; the ACK for 2 makes 2 the head.
        let mut b = board(8);
        for _ in 0..3 {
            b.add_reno_sack();
        }
        b.discard_up_to(2);
        assert_eq!(b.base, 2);
        assert_eq!(b.sacked, 2, "the flag count is kept");
        assert!(b.flags[0] & SACKED == 0 && b.flags[0] & LOST != 0);
        assert_eq!(b.highest_sacked, Some(4), "the flag went to the end of the run");
        assert_eq!(b.next_lost(), Some(2), "the new head is resent although nothing says it was lost");
    }

    #[test]
    fn flags_survive_an_ack_below_them_and_go_only_at_a_timeout() {
        let mut b = board(10);
        for _ in 0..3 {
            b.add_reno_sack(); // 1, 2, 3
        }
        b.discard_up_to(1); // head 1 flagged: fix-up
        assert_eq!(b.sacked, 3);
        b.all_lost();
        assert_eq!((b.sacked, b.lost, b.retrans), (0, 9, 0));
        assert_eq!(b.pipe(), 0);
        assert_eq!(b.highest_sacked, None);
        assert!(!b.is_lost(1), "IsLost needs a flag above (m_highestSack)");
        assert_eq!(b.next_lost(), Some(1), "rule 1 without any flag since the reset: every lost segment");
        b.on_send(1, true);
        assert_eq!(b.next_lost(), Some(2));
    }

    #[test]
    fn retransmission_acked_sees_only_unflagged_retransmissions_below_the_ack() {
        let mut b = board(5);
        b.mark_head_lost();
        b.on_send(0, true);
        assert!(!b.retransmission_acked(0));
        assert!(b.retransmission_acked(1));
        assert!(!board(5).retransmission_acked(3));
    }
}
