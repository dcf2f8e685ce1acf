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
//!
//! When (per-second series, [`FrameDecoder::rate_series`]): a complete frame is *complete at*
//! the arrival of its last fragment; a decodable frame is *playable at* the latest of its own
//! completion and the playable instants of the references it needs — the first instant the
//! receiver holds everything needed to decode it. For IBBPBB: I at its own completion, P at the
//! later of its completion and the previous I/P's, B at the latest of its completion and its two
//! references' (so a B frame waits for the next reference, 2–3 frame times later).

use crate::engine::{Dur, Time};
use crate::traffic::mpeg::FrameType;

#[derive(Clone, Copy, Debug)]
struct Frame {
    sent_at: Time,
    fragments: u32,
    received: u32,
    late: bool,
    /// Arrival of the fragment that made `received` reach `fragments` (`Time::NEVER` before).
    last_at: Time,
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
        self.frames.push(Frame { sent_at, fragments, received: 0, late: false, last_at: Time::NEVER });
    }

    /// A fragment of frame `n` arrived at `now`.
    pub fn on_received(&mut self, n: u32, now: Time) {
        let deadline = self.deadline;
        if let Some(f) = self.frames.get_mut(n as usize) {
            f.received += 1;
            if f.received == f.fragments {
                f.last_at = now;
            }
            if let Some(d) = deadline {
                if now > f.sent_at + d {
                    f.late = true;
                }
            }
        }
    }

    /// Per frame: complete, decodable.
    fn decode(&self) -> (Vec<bool>, Vec<bool>) {
        let (complete_at, playable_at) = self.decode_times();
        (complete_at.iter().map(Option::is_some).collect(), playable_at.iter().map(Option::is_some).collect())
    }

    /// Per frame: when it was complete and when it became playable (`None`: never), module doc.
    fn decode_times(&self) -> (Vec<Option<Time>>, Vec<Option<Time>>) {
        let n = self.frames.len();
        let complete_at: Vec<Option<Time>> =
            self.frames.iter().map(|f| (f.received >= f.fragments && !f.late).then_some(f.last_at)).collect();
        // Playable at the latest of the frame's and its references' instants; None if any is None.
        let after = |a: Option<Time>, b: Option<Time>| Some(a?.max(b?));
        let mut ok: Vec<Option<Time>> = vec![None; n];
        // References, forward: I needs nothing, P the previous reference.
        let mut prev_ref: Option<usize> = None;
        let mut prev_of = vec![None; n];
        for i in 0..n {
            prev_of[i] = prev_ref;
            match self.frame_type(i as u32) {
                FrameType::I => ok[i] = complete_at[i],
                FrameType::P => ok[i] = after(complete_at[i], prev_ref.and_then(|r| ok[r])),
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
                let refs = after(prev_of[i].and_then(|r| ok[r]), next_ref.and_then(|r| ok[r]));
                ok[i] = after(complete_at[i], refs);
            } else {
                next_ref = Some(i);
            }
        }
        (complete_at, ok)
    }

    /// Frames per second complete and playable at the receiver in each of `bins` bins of width
    /// `bin` starting at time zero (bin k = `[k·bin, (k+1)·bin)`), each frame counted once, in the
    /// bin of its instant (module doc). Frames of every send time count, so over a window the
    /// bins hold what [`FrameDecoder::tally`] counts for the frames *sent* in it, give or take
    /// the frames in flight across the window's edges.
    pub fn rate_series(&self, bin: Dur, bins: usize) -> (Vec<f64>, Vec<f64>) {
        let (complete_at, playable_at) = self.decode_times();
        let bin_s = bin.as_secs_f64();
        let fill = |times: &[Option<Time>]| {
            let mut counts = vec![0u32; bins];
            for t in times.iter().flatten() {
                if let Some(c) = counts.get_mut((t.0 / bin.0) as usize) {
                    *c += 1;
                }
            }
            counts.into_iter().map(|c| c as f64 / bin_s).collect()
        };
        (fill(&complete_at), fill(&playable_at))
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

    /// 3-ms bins in fps (frames / 0.003 s).
    fn frames(per_bin: &[f64]) -> Vec<u32> {
        per_bin.iter().map(|v| (v * 0.003).round() as u32).collect()
    }

    #[test]
    fn lossless_frames_count_in_the_bin_of_their_last_fragment_and_b_frames_wait_for_the_next_reference() {
        // Frame k sent at k ms, all its fragments arrive at k + 5 ms. 3-ms bins [3k, 3k + 3) ms.
        let d = run("IBBPBB", 4, &[]);
        let (actual, playable) = d.rate_series(Dur::from_millis(3), 10);
        // Complete at 5..=28 ms: frame 0 in bin 1, then three per bin, frames 22, 23 (27, 28 ms) in bin 9.
        assert_eq!(frames(&actual), vec![0, 1, 3, 3, 3, 3, 3, 3, 3, 2]);
        // Playable (hand-derived): I0 at 5; B1, B2, P3 at 8 (P3's arrival); B4, B5, I6 at 11; ...
        // B19, B20, P21 at 26; B22, B23 never (no next I).
        assert_eq!(frames(&playable), vec![0, 1, 3, 3, 3, 3, 3, 3, 3, 0]);
        let t = d.tally(Time::ZERO, ALL);
        assert_eq!(frames(&actual).iter().sum::<u32>() as u64, t.complete);
        assert_eq!(frames(&playable).iter().sum::<u32>() as u64, t.playable);
        assert!((actual[2] - 1000.0).abs() < 1e-9, "3 frames in 3 ms = 1000 fps, got {}", actual[2]);
    }

    #[test]
    fn a_lost_i_fragment_removes_its_frame_from_actual_and_eight_frames_from_playable() {
        // I6 (completing at 11 ms, bin 3) loses a fragment: actual loses one frame in bin 3;
        // playable loses B4, B5 (would be 11 ms), I6 (11), B7, B8, P9 (14), B10, B11 (17); I12
        // is playable at 17 ms again (bin 5), alone in its bin.
        let d = run("IBBPBB", 4, &[(6, 1)]);
        let (actual, playable) = d.rate_series(Dur::from_millis(3), 10);
        assert_eq!(frames(&actual), vec![0, 1, 3, 2, 3, 3, 3, 3, 3, 2]);
        assert_eq!(frames(&playable), vec![0, 1, 3, 0, 0, 1, 3, 3, 3, 0]);
        let t = d.tally(Time::ZERO, ALL);
        assert_eq!(frames(&actual).iter().sum::<u32>() as u64, t.complete);
        assert_eq!(frames(&playable).iter().sum::<u32>() as u64, t.playable);
    }

    #[test]
    fn frames_past_the_last_bin_are_left_out_and_a_late_frame_never_counts() {
        let d = run("IBBPBB", 4, &[]);
        let (actual, playable) = d.rate_series(Dur::from_millis(3), 5); // [0, 15) ms only
        assert_eq!(frames(&actual), vec![0, 1, 3, 3, 3]);
        assert_eq!(frames(&playable), vec![0, 1, 3, 3, 3]);
        // Playout deadline 50 ms, P3 arrives 80 ms after sending: P3 is not complete, and B1, B2,
        // B4, B5 not playable; 11 is complete at 373 ms but has no next I.
        let mut d = FrameDecoder::new(parse_gop("IBBPBB").unwrap(), Some(Dur::from_millis(50)));
        for k in 0..12u32 {
            d.on_sent(k, 1, Time(k as u64 * 33_000_000));
            let delay = if k == 3 { 80_000_000 } else { 10_000_000 };
            d.on_received(k, Time(k as u64 * 33_000_000 + delay));
        }
        let (actual, playable) = d.rate_series(Dur::from_millis(1000), 1);
        assert_eq!((actual[0], playable[0]), (11.0, 5.0)); // playable: I0, I6, B7, B8, P9
        assert_eq!(d.tally(Time::ZERO, ALL), FrameTally { sent: 12, complete: 11, playable: 5 });
    }
}
