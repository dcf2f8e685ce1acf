//! Receiver-side MPEG frame accounting: which frames arrived complete (actual frame rate) and
//! which could be decoded under the GOP's prediction dependencies (playable frame rate), spec
//! `seed000-cbt-evaluation.md` §2.3 and §3.
//!
//! Rules, for any GOP pattern starting with I (display = transmission order, open GOPs):
//! * a frame is *complete* when all its fragments arrived and, with a playout deadline, none
//!   arrived later than `sent_at + deadline`;
//! * I is *decodable* when complete;
//! * P is decodable when complete and the previous reference frame (I or P) is decodable;
//! * B is decodable when complete and both the previous and the next reference frames are
//!   decodable (the next may be the following GOP's I; a B with no later reference sent is not
//!   decodable).
//!
//! "Decodable" is transitive: a reference that arrived complete but could not itself be decoded
//! cannot serve as a reference. For IBBPBB this is the same as "complete and its references
//! complete", and it gives the dissertation's loss model (Tables A.6/A.7): a lost I costs 8
//! frames (its GOP's 6 and the 2 B frames before it), a lost P 5, a lost B 1.

use crate::engine::{Dur, Time};
use crate::traffic::mpeg::FrameType;

#[derive(Clone, Copy, Debug)]
struct Frame {
    sent_at: Time,
    fragments: u32,
    received: u32,
    late: bool,
}

/// Frame counts over a window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameTally {
    /// Frames sent.
    pub sent: u64,
    /// Frames that arrived complete (and in time).
    pub complete: u64,
    /// Complete frames whose references were decodable.
    pub playable: u64,
}

/// One flow's receiver.
#[derive(Clone, Debug)]
pub struct FrameDecoder {
    gop: Vec<FrameType>,
    deadline: Option<Dur>,
    frames: Vec<Frame>,
}

impl FrameDecoder {
    /// A decoder for `gop` (must start with I) with an optional playout deadline.
    pub fn new(gop: Vec<FrameType>, deadline: Option<Dur>) -> FrameDecoder {
        assert!(gop.first() == Some(&FrameType::I), "a GOP starts with I");
        FrameDecoder { gop, deadline, frames: Vec::new() }
    }

    /// Type of frame `n`.
    pub fn frame_type(&self, n: u32) -> FrameType {
        self.gop[n as usize % self.gop.len()]
    }

    /// The sender sent frame `n` (frames are numbered 0, 1, … in sending order) in `fragments`
    /// datagrams at `sent_at`.
    pub fn on_sent(&mut self, n: u32, fragments: u32, sent_at: Time) {
        debug_assert_eq!(n as usize, self.frames.len(), "frames are sent in order");
        self.frames.push(Frame { sent_at, fragments, received: 0, late: false });
    }

    /// A fragment of frame `n` arrived at `now`.
    pub fn on_received(&mut self, n: u32, now: Time) {
        let deadline = self.deadline;
        if let Some(f) = self.frames.get_mut(n as usize) {
            f.received += 1;
            if let Some(d) = deadline {
                if now > f.sent_at + d {
                    f.late = true;
                }
            }
        }
    }

    /// Per frame: complete, decodable.
    fn decode(&self) -> (Vec<bool>, Vec<bool>) {
        let n = self.frames.len();
        let complete: Vec<bool> = self.frames.iter().map(|f| f.received >= f.fragments && !f.late).collect();
        let mut ok = vec![false; n];
        // References, forward: I needs nothing, P the previous reference.
        let mut prev_ref: Option<usize> = None;
        let mut prev_of = vec![None; n];
        for i in 0..n {
            prev_of[i] = prev_ref;
            match self.frame_type(i as u32) {
                FrameType::I => ok[i] = complete[i],
                FrameType::P => ok[i] = complete[i] && prev_ref.is_some_and(|r| ok[r]),
                FrameType::B => {}
            }
            if self.frame_type(i as u32).is_reference() {
                prev_ref = Some(i);
            }
        }
        // B frames: previous and next references.
        let mut next_ref: Option<usize> = None;
        for i in (0..n).rev() {
            let ty = self.frame_type(i as u32);
            if ty == FrameType::B {
                ok[i] = complete[i] && prev_of[i].is_some_and(|r| ok[r]) && next_ref.is_some_and(|r| ok[r]);
            } else {
                next_ref = Some(i);
            }
        }
        (complete, ok)
    }

    /// Counts over the frames sent in `[from, to)`.
    pub fn tally(&self, from: Time, to: Time) -> FrameTally {
        let (complete, ok) = self.decode();
        let mut t = FrameTally::default();
        for (i, f) in self.frames.iter().enumerate() {
            if f.sent_at >= from && f.sent_at < to {
                t.sent += 1;
                t.complete += complete[i] as u64;
                t.playable += ok[i] as u64;
            }
        }
        t
    }

    /// Per-frame playability (tests and diagnostics).
    pub fn playable(&self) -> Vec<bool> {
        self.decode().1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::mpeg::parse_gop;

    /// `gops` GOPs of `pattern`, fragments I = 6, P = 2, B = 1 (the dissertation's round
    /// numbers), frame k sent at k ms; every fragment arrives except those in `lost`
    /// (frame, how many fragments lost).
    fn run(pattern: &str, gops: u32, lost: &[(u32, u32)]) -> FrameDecoder {
        let gop = parse_gop(pattern).unwrap();
        let mut d = FrameDecoder::new(gop, None);
        let n = gops * pattern.len() as u32;
        for k in 0..n {
            let frags = match d.frame_type(k) {
                FrameType::I => 6,
                FrameType::P => 2,
                FrameType::B => 1,
            };
            d.on_sent(k, frags, Time(k as u64 * 1_000_000));
            let miss = lost.iter().find(|(f, _)| *f == k).map_or(0, |(_, m)| *m);
            for _ in 0..frags - miss {
                d.on_received(k, Time(k as u64 * 1_000_000 + 5_000_000));
            }
        }
        d
    }

    fn dead(d: &FrameDecoder) -> Vec<usize> {
        d.playable().iter().enumerate().filter(|(_, ok)| !**ok).map(|(i, _)| i).collect()
    }

    const ALL: Time = Time(u64::MAX);

    #[test]
    fn lossless_stream_plays_every_frame_but_the_trailing_b_frames() {
        let d = run("IBBPBB", 4, &[]);
        // The last two B frames have no following I.
        assert_eq!(dead(&d), vec![22, 23]);
        assert_eq!(d.tally(Time::ZERO, ALL), FrameTally { sent: 24, complete: 24, playable: 22 });
    }

    #[test]
    fn one_lost_i_fragment_costs_eight_frames() {
        // I6: its GOP (6..12) and the B frames 4 and 5 that reference it.
        let d = run("IBBPBB", 4, &[(6, 1)]);
        assert_eq!(dead(&d), vec![4, 5, 6, 7, 8, 9, 10, 11, 22, 23]);
        let t = d.tally(Time::ZERO, Time(20_000_000)); // frames 0..19
        assert_eq!(t, FrameTally { sent: 20, complete: 19, playable: 12 });
    }

    #[test]
    fn a_lost_p_costs_five_frames_and_a_lost_b_one() {
        let d = run("IBBPBB", 4, &[(9, 2)]);
        assert_eq!(dead(&d), vec![7, 8, 9, 10, 11, 22, 23]);
        let d = run("IBBPBB", 4, &[(8, 1)]);
        assert_eq!(dead(&d), vec![8, 22, 23]);
    }

    #[test]
    fn in_longer_gops_a_p_needs_the_previous_p() {
        // IBBPBBPBB: losing P3 kills P6 (and everything up to the next I at 9), and B1, B2.
        let d = run("IBBPBBPBB", 3, &[(3, 1)]);
        assert_eq!(dead(&d), vec![1, 2, 3, 4, 5, 6, 7, 8, 25, 26]);
        // Losing P6 kills only P6, B4, B5, B7, B8.
        let d = run("IBBPBBPBB", 3, &[(6, 1)]);
        assert_eq!(dead(&d), vec![4, 5, 6, 7, 8, 25, 26]);
    }

    #[test]
    fn i_only_and_ip_patterns_work() {
        let d = run("I", 5, &[(2, 1)]);
        assert_eq!(dead(&d), vec![2]);
        let d = run("IPP", 2, &[(1, 1)]);
        assert_eq!(dead(&d), vec![1, 2]);
    }

    #[test]
    fn late_fragments_make_the_frame_incomplete() {
        let gop = parse_gop("IBBPBB").unwrap();
        let mut d = FrameDecoder::new(gop, Some(Dur::from_millis(50)));
        for k in 0..12u32 {
            d.on_sent(k, 1, Time(k as u64 * 33_000_000));
            let delay = if k == 3 { 80_000_000 } else { 10_000_000 };
            d.on_received(k, Time(k as u64 * 33_000_000 + delay));
        }
        // P3 late: P3, B1, B2, B4, B5 lost; 10 and 11 have no next I.
        assert_eq!(dead(&d), vec![1, 2, 3, 4, 5, 10, 11]);
        assert_eq!(d.tally(Time::ZERO, ALL).complete, 11);
    }

    #[test]
    fn tally_counts_only_frames_sent_in_the_window() {
        let d = run("IBBPBB", 4, &[(3, 1)]);
        // Frames 6..=17 sent in [6 ms, 18 ms): none affected by the P3 loss.
        assert_eq!(d.tally(Time(6_000_000), Time(18_000_000)), FrameTally { sent: 12, complete: 12, playable: 12 });
    }
}
