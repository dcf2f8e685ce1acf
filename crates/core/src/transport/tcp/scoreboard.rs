//! The SACK scoreboard of RFC 6675 §3–4: which segments above the cumulative ACK the receiver
//! holds, and the queries loss recovery needs (`IsLost`, `pipe`, `NextSeg`). Sequence numbers are
//! segment numbers. Kept as sorted, disjoint `[start, end)` ranges, allocated only for SACK flows
//! that have seen a SACK block, with running counts of SACKed segments so that the counting
//! queries are binary searches, not walks over the ranges.

use crate::packet::SackBlock;

/// SACKed ranges above `snd_una`.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    ranges: Vec<(u32, u32)>,
    /// Running counts, one more than there are ranges: `before[i] - before[0]` segments are SACKed
    /// in `ranges[..i]` (wrapping arithmetic). Only differences mean anything, so dropping ranges
    /// from the front, which every cumulative ACK does, changes no other entry. Summing the ranges
    /// instead cost O(ranges) several times per ACK: in a recovery across a large window, with
    /// hundreds of holes, most of the run.
    before: Vec<u32>,
}

impl Default for Scoreboard {
    fn default() -> Self {
        Scoreboard { ranges: Vec::new(), before: vec![0] }
    }
}

impl PartialEq for Scoreboard {
    /// Equal when the same segments are SACKed (the counts' base is arbitrary).
    fn eq(&self, other: &Self) -> bool {
        self.ranges == other.ranges
    }
}

impl Eq for Scoreboard {}

impl Scoreboard {
    /// Forgets everything (after a retransmission timeout, RFC 2018 §8).
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.before.clear();
        self.before.push(0);
    }

    /// Records the blocks of an ACK and drops what the cumulative ACK `snd_una` now covers.
    #[cfg(test)]
    pub fn update(&mut self, blocks: &[SackBlock], snd_una: u32) {
        self.update_noting(blocks, snd_una, None);
    }

    /// [`Scoreboard::update`], appending to `newly` the ranges SACKed for the first time (RACK
    /// visits only those instead of the whole window).
    pub fn update_noting(&mut self, blocks: &[SackBlock], snd_una: u32, mut newly: Option<&mut Vec<(u32, u32)>>) {
        for b in blocks {
            if b.end > b.start && b.end > snd_una {
                let start = b.start.max(snd_una);
                if let Some(out) = newly.as_deref_mut() {
                    self.uncovered(start, b.end, out);
                }
                self.insert(start, b.end);
            }
        }
        self.forget_below(snd_una);
        debug_assert!(self.counts_are_consistent(), "{self:?}");
    }

    /// Drops the ranges, and the part of a range, below `snd_una`: O(log ranges) plus those dropped.
    fn forget_below(&mut self, snd_una: u32) {
        let covered = self.ranges.partition_point(|r| r.1 <= snd_una);
        self.ranges.drain(..covered);
        self.before.drain(..covered);
        if let Some(first) = self.ranges.first_mut() {
            if first.0 < snd_una {
                // The first range shrinks: every later count loses as much, relative to the base.
                self.before[0] = self.before[0].wrapping_add(snd_una - first.0);
                first.0 = snd_una;
            }
        }
    }

    /// Appends the parts of `[start, end)` no range covers.
    fn uncovered(&self, start: u32, end: u32, out: &mut Vec<(u32, u32)>) {
        let mut from = start;
        for r in &self.ranges[self.ranges.partition_point(|r| r.1 <= start)..] {
            if r.0 >= end {
                break;
            }
            if r.0 > from {
                out.push((from, r.0));
            }
            from = from.max(r.1);
        }
        if from < end {
            out.push((from, end));
        }
    }

    /// Adds `[start, end)`, merging the ranges it touches. The counts after the merged range move
    /// by what it added: nothing to do when SACKs extend the top of the window, the usual case.
    fn insert(&mut self, start: u32, end: u32) {
        // First range that ends at or after `start` (could merge); everything before stays.
        let i = self.ranges.partition_point(|r| r.1 < start);
        let mut j = i;
        let (mut s, mut e) = (start, end);
        while j < self.ranges.len() && self.ranges[j].0 <= e {
            s = s.min(self.ranges[j].0);
            e = e.max(self.ranges[j].1);
            j += 1;
        }
        let added = (e - s).wrapping_sub(self.before[j].wrapping_sub(self.before[i]));
        self.ranges.splice(i..j, std::iter::once((s, e)));
        if j == i {
            self.before.insert(i + 1, self.before[i]);
        } else {
            self.before.drain(i + 1..j);
        }
        for count in &mut self.before[i + 1..] {
            *count = count.wrapping_add(added);
        }
    }

    /// SACKed segments below `seq`: O(log ranges).
    fn sacked_below(&self, seq: u32) -> u32 {
        let i = self.ranges.partition_point(|r| r.1 <= seq);
        let partial = self.ranges.get(i).map_or(0, |r| seq.saturating_sub(r.0));
        self.before[i].wrapping_sub(self.before[0]) + partial
    }

    /// SACKed segments in all.
    fn sacked(&self) -> u32 {
        self.before[self.ranges.len()].wrapping_sub(self.before[0])
    }

    /// Whether the running counts match the ranges (checked in debug builds after each update).
    fn counts_are_consistent(&self) -> bool {
        self.before.len() == self.ranges.len() + 1
            && self.ranges.iter().enumerate().all(|(i, r)| self.before[i + 1].wrapping_sub(self.before[i]) == r.1 - r.0)
    }

    /// Whether segment `seq` is SACKed (loops over a window use [`SackedCursor`]).
    pub fn is_sacked(&self, seq: u32) -> bool {
        let i = self.ranges.partition_point(|r| r.1 <= seq);
        i < self.ranges.len() && self.ranges[i].0 <= seq
    }

    /// SACKed segments above `seq`.
    pub fn sacked_above(&self, seq: u32) -> u32 {
        self.sacked() - self.sacked_below(seq + 1)
    }

    /// RFC 6675 `IsLost(seq)`: at least `dupthresh` SACKed segments lie above it.
    pub fn is_lost(&self, seq: u32, dupthresh: u32) -> bool {
        self.sacked_above(seq) >= dupthresh
    }

    /// RFC 6675 `SetPipe`: segments in `[snd_una, snd_max)` presumed in the network. An unSACKed
    /// segment counts once unless lost, and once more if it was retransmitted (below
    /// `high_rxt`, one past the highest retransmission). Every unSACKed segment below
    /// `lost_below` is lost whatever lies above it (marked so by a retransmission timeout that
    /// kept the scoreboard; 0: none).
    ///
    /// O(log ranges), not O(window): during recovery it runs on every ACK, several times, and a
    /// per-segment walk made SACK recovery quadratic in the window (tests check it against the
    /// per-segment definition).
    pub fn pipe(&self, snd_una: u32, snd_max: u32, high_rxt: u32, dupthresh: u32, lost_below: u32) -> u32 {
        let in_flight_from = self.lost_boundary(dupthresh).max(lost_below).max(snd_una);
        let retransmitted_to = high_rxt.min(snd_max);
        self.unsacked_in(in_flight_from, snd_max) + self.unsacked_in(snd_una, retransmitted_to)
    }

    /// The first unSACKed segment in `[from, to)` that is lost (`want_lost`; below `lost_below`
    /// or by `IsLost`) or merely unSACKed (`!want_lost`): NextSeg rules (1) and (3).
    pub fn first_unsacked(&self, from: u32, to: u32, dupthresh: u32, want_lost: bool, lost_below: u32) -> Option<u32> {
        let to = if want_lost { to.min(self.lost_boundary(dupthresh).max(lost_below)) } else { to };
        let mut seq = from;
        for r in &self.ranges[self.ranges.partition_point(|r| r.1 <= from)..] {
            if r.0 > seq {
                break;
            }
            seq = r.1; // inside a SACKed range: the first candidate is just past it
        }
        (seq < to).then_some(seq)
    }

    /// RFC 6675 NextSeg (1.b): a segment is a candidate for rules (1) and (3) only below the
    /// highest SACKed segment. An unSACKed segment is below it exactly when it is below the first
    /// segment of the topmost SACKed range, which this returns (0: nothing SACKed, no candidate).
    pub fn below_highest_sacked(&self) -> u32 {
        self.ranges.last().map_or(0, |r| r.0)
    }

    /// `IsLost` for unSACKed segments as one boundary: an unSACKed segment is lost exactly when it
    /// lies below the returned sequence number (then `dupthresh` or more SACKed segments lie above
    /// it). Ranges are disjoint, so what lies above an unSACKed segment is whole ranges.
    fn lost_boundary(&self, dupthresh: u32) -> u32 {
        if dupthresh == 0 {
            return u32::MAX;
        }
        let mut above = 0;
        for r in self.ranges.iter().rev() {
            above += r.1 - r.0;
            if above >= dupthresh {
                return r.0;
            }
        }
        0
    }

    /// UnSACKed segments in `[from, to)`.
    fn unsacked_in(&self, from: u32, to: u32) -> u32 {
        if to <= from {
            return 0;
        }
        to - from - (self.sacked_below(to) - self.sacked_below(from))
    }
}

/// UnSACKed segments in `[from, to)` on `sb` (none: every segment).
pub fn unsacked_between(sb: Option<&Scoreboard>, from: u32, to: u32) -> u32 {
    match sb {
        Some(b) => b.unsacked_in(from, to),
        None => to.saturating_sub(from),
    }
}

/// `is_sacked` for sequence numbers asked in increasing order, in amortised O(1) each: loops over
/// a window ask it of every segment, and a binary search per segment made them O(window log ranges).
pub struct SackedCursor<'a> {
    /// The ranges not yet passed.
    ranges: &'a [(u32, u32)],
}

impl<'a> SackedCursor<'a> {
    /// A cursor over `sb` (none: nothing SACKed) for questions from `from` on.
    pub fn new(sb: Option<&'a Scoreboard>, from: u32) -> Self {
        let ranges = sb.map_or(&[][..], |b| &b.ranges[b.ranges.partition_point(|r| r.1 <= from)..]);
        SackedCursor { ranges }
    }

    /// Whether `seq` is SACKed; `seq` must not be below any earlier question's.
    #[inline]
    pub fn is_sacked(&mut self, seq: u32) -> bool {
        while let Some((&(_, end), rest)) = self.ranges.split_first() {
            if end > seq {
                return self.ranges[0].0 <= seq;
            }
            self.ranges = rest;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(v: &[(u32, u32)]) -> Vec<SackBlock> {
        v.iter().map(|&(start, end)| SackBlock { start, end }).collect()
    }

    #[test]
    fn merges_and_trims() {
        let mut sb = Scoreboard::default();
        sb.update(&blocks(&[(5, 7), (9, 10)]), 2);
        sb.update(&blocks(&[(7, 9)]), 2);
        assert_eq!(sb.ranges, vec![(5, 10)]);
        sb.update(&[], 6);
        assert_eq!(sb.ranges, vec![(6, 10)]);
        sb.update(&blocks(&[(12, 13), (3, 4)]), 6);
        assert_eq!(sb.ranges, vec![(6, 10), (12, 13)]);
        assert!(sb.is_sacked(9) && !sb.is_sacked(10) && sb.is_sacked(12));
    }

    #[test]
    fn is_lost_needs_dupthresh_sacked_above() {
        let mut sb = Scoreboard::default();
        sb.update(&blocks(&[(11, 13)]), 10);
        assert!(!sb.is_lost(10, 3));
        sb.update(&blocks(&[(14, 15)]), 10);
        assert!(sb.is_lost(10, 3) && !sb.is_lost(13, 3));
    }

    #[test]
    fn pipe_counts_unsacked_not_lost_plus_retransmitted() {
        // snd_una 10, snd_max 20; 10 lost (3 SACKed above), 11..14 SACKed, 14..20 in flight.
        let mut sb = Scoreboard::default();
        sb.update(&blocks(&[(11, 14)]), 10);
        assert_eq!(sb.pipe(10, 20, 10, 3, 0), 6);
        // After retransmitting 10 it counts again.
        assert_eq!(sb.pipe(10, 20, 11, 3, 0), 7);
        assert_eq!(sb.first_unsacked(10, 20, 3, true, 0), Some(10));
        assert_eq!(sb.first_unsacked(11, 20, 3, true, 0), None);
        assert_eq!(sb.first_unsacked(11, 20, 3, false, 0), Some(14));
    }

    #[test]
    fn a_timeout_that_keeps_the_scoreboard_marks_every_unsacked_segment_below_it_lost() {
        // snd_una 10, snd_max 20, 11..14 SACKed; a timeout at snd_max 20 marks 10 and 14..20 lost.
        let mut sb = Scoreboard::default();
        sb.update(&blocks(&[(11, 14)]), 10);
        assert_eq!(sb.pipe(10, 20, 10, 3, 20), 0, "nothing presumed in flight");
        assert_eq!(sb.pipe(10, 20, 11, 3, 20), 1, "only the retransmission of 10");
        assert_eq!(sb.first_unsacked(11, 20, 3, true, 20), Some(14), "lost although nothing is SACKed above it");
        assert_eq!(sb.pipe(10, 22, 10, 3, 20), 2, "segments sent after the timeout are in flight");
    }

    /// SACK blocks from generated (start, length) pairs.
    fn from_lengths(v: &[(u32, u32)]) -> Vec<SackBlock> {
        v.iter().map(|&(start, len)| SackBlock { start, end: start + len }).collect()
    }

    /// The highest sequence number the generated blocks reach, and then some.
    const TOP: u32 = 200;

    /// SACKed segments above `seq`, counted one by one.
    fn sacked_above_per_segment(sb: &Scoreboard, seq: u32) -> u32 {
        (seq + 1..TOP).filter(|&s| sb.is_sacked(s)).count() as u32
    }

    /// RFC 6675 `IsLost`, segment by segment.
    fn is_lost_per_segment(sb: &Scoreboard, seq: u32, dupthresh: u32) -> bool {
        sacked_above_per_segment(sb, seq) >= dupthresh
    }

    /// `SetPipe` segment by segment, as RFC 6675 writes it: the oracle for the range arithmetic.
    fn pipe_per_segment(sb: &Scoreboard, snd_una: u32, snd_max: u32, high_rxt: u32, dupthresh: u32, lost_below: u32) -> u32 {
        (snd_una..snd_max)
            .filter(|&seq| !sb.is_sacked(seq))
            .map(|seq| u32::from(seq >= lost_below && !is_lost_per_segment(sb, seq, dupthresh)) + u32::from(seq < high_rxt))
            .sum()
    }

    /// NextSeg's search segment by segment.
    fn first_unsacked_per_segment(sb: &Scoreboard, from: u32, to: u32, dupthresh: u32, want_lost: bool, lost_below: u32) -> Option<u32> {
        (from..to).find(|&s| !sb.is_sacked(s) && (!want_lost || s < lost_below || is_lost_per_segment(sb, s, dupthresh)))
    }

    proptest::proptest! {
        #[test]
        fn the_cursor_answers_as_is_sacked(blocks in proptest::collection::vec((0u32..60, 1u32..8), 0..8), from in 0u32..70) {
            let mut sb = Scoreboard::default();
            sb.update(&from_lengths(&blocks), 0);
            let mut cursor = SackedCursor::new(Some(&sb), from);
            for seq in from..80 {
                proptest::prop_assert_eq!(cursor.is_sacked(seq), sb.is_sacked(seq), "seq {}", seq);
            }
        }

        #[test]
        fn update_notes_exactly_the_newly_sacked_segments(
            before in proptest::collection::vec((0u32..60, 1u32..8), 0..6),
            blocks in proptest::collection::vec((0u32..60, 1u32..8), 0..4), una in 0u32..20,
        ) {
            let mut sb = Scoreboard::default();
            sb.update(&from_lengths(&before), 0);
            let old = sb.clone();
            let mut newly = Vec::new();
            sb.update_noting(&from_lengths(&blocks), una, Some(&mut newly));
            let mut noted: Vec<u32> = newly.iter().flat_map(|&(a, b)| a..b).collect();
            noted.sort_unstable();
            let expected: Vec<u32> = (una..80).filter(|&s| sb.is_sacked(s) && !old.is_sacked(s)).collect();
            proptest::prop_assert_eq!(noted, expected);
        }

        /// A recovery as the sender sees it: ACKs whose blocks land anywhere (refilled holes merge
        /// ranges deep in the window) while the cumulative ACK advances. The running counts must
        /// follow every step, and the counting queries must match counting by segment.
        #[test]
        fn the_counts_follow_a_sequence_of_acks(
            acks in proptest::collection::vec((proptest::collection::vec((0u32..150, 1u32..12), 0..4), 0u32..6), 1..30),
            probes in proptest::collection::vec((0u32..170, 0u32..170), 4),
        ) {
            let mut sb = Scoreboard::default();
            let mut una = 0;
            for (blocks, advance) in &acks {
                una += advance;
                sb.update(&from_lengths(blocks), una);
                proptest::prop_assert!(sb.counts_are_consistent(), "{:?}", sb);
                proptest::prop_assert!(sb.ranges.first().is_none_or(|r| r.0 >= una));
                for &(a, b) in &probes {
                    proptest::prop_assert_eq!(sb.sacked_above(a), sacked_above_per_segment(&sb, a), "above {}", a);
                    let (from, to) = (a.min(b), a.max(b));
                    let unsacked = (from..to).filter(|&s| !sb.is_sacked(s)).count() as u32;
                    proptest::prop_assert_eq!(sb.unsacked_in(from, to), unsacked, "[{}, {})", from, to);
                }
            }
            let mut cleared = sb.clone();
            cleared.clear();
            proptest::prop_assert!(cleared.counts_are_consistent() && cleared.sacked() == 0);
        }

        #[test]
        fn range_arithmetic_agrees_with_the_per_segment_definitions(
            blocks in proptest::collection::vec((0u32..60, 1u32..8), 0..8),
            una in 0u32..20, span in 0u32..50, rxt in 0u32..70, dupthresh in 0u32..5,
            lost_below in 0u32..70, from in 0u32..70,
        ) {
            let mut sb = Scoreboard::default();
            sb.update(&from_lengths(&blocks), una);
            let snd_max = una + span;
            proptest::prop_assert_eq!(
                sb.pipe(una, snd_max, rxt, dupthresh, lost_below),
                pipe_per_segment(&sb, una, snd_max, rxt, dupthresh, lost_below)
            );
            for want_lost in [true, false] {
                proptest::prop_assert_eq!(
                    sb.first_unsacked(from, snd_max, dupthresh, want_lost, lost_below),
                    first_unsacked_per_segment(&sb, from, snd_max, dupthresh, want_lost, lost_below)
                );
            }
        }
    }
}
