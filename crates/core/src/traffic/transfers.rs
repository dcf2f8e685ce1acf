//! Finite TCP transfers drawn from a size distribution, optionally repeated back to back
//! (Morris 1999 §7.1–7.2; spec `seed004-fpq.md` §3.7): each connection sends a transfer, waits
//! for the last ACK, records the delay, and immediately starts the next as a fresh connection.
//!
//! Sizes are whole segments, because results are binned at exactly 10, 20 and 40 packets (spec
//! §3.7's resolution): `exponential` is the geometric distribution with the given mean — the
//! discrete counterpart of the exponential, P(k) = p(1 − p)^(k−1), k ≥ 1, p = 1/mean.

use rand::Rng as _;

use crate::engine::{Rng, Time};
use crate::scenario::schema::SizeDist;

/// A TCP flow's sequence of transfers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfers {
    /// Segments per transfer (the mean for exponential sizes), ≥ 1.
    pub mean_segments: f64,
    /// Size distribution.
    pub dist: SizeDist,
    /// Start the next transfer as soon as one completes.
    pub repeat: bool,
}

impl Transfers {
    /// The size of the next transfer, segments (≥ 1).
    pub fn draw_segments(&self, rng: &mut Rng) -> u32 {
        match self.dist {
            SizeDist::Fixed => self.mean_segments.round().max(1.0) as u32,
            SizeDist::Exponential => {
                if self.mean_segments <= 1.0 {
                    return 1;
                }
                // Inversion: k = 1 + floor(ln U / ln(1 − p)), U in (0, 1].
                let u: f64 = 1.0 - rng.gen::<f64>();
                let k = 1.0 + (u.ln() / (1.0 - 1.0 / self.mean_segments).ln()).floor();
                k.min(u32::MAX as f64 / 2.0) as u32
            }
        }
    }
}

/// One completed transfer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransferRecord {
    /// The flow that sent it.
    pub flow: u32,
    /// When its first segment was sent.
    pub start: Time,
    /// When the ACK of its last segment arrived.
    pub end: Time,
    /// Its size, segments.
    pub segments: u32,
    /// Retransmission timeouts during it.
    pub timeouts: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};

    #[test]
    fn geometric_sizes_have_the_asked_mean_and_shape() {
        let t = Transfers { mean_segments: 20.0, dist: SizeDist::Exponential, repeat: true };
        let mut rng = stream(5, StreamId::Flow(0));
        let n = 200_000;
        let draws: Vec<u32> = (0..n).map(|_| t.draw_segments(&mut rng)).collect();
        let mean = draws.iter().map(|&k| k as f64).sum::<f64>() / n as f64;
        // standard error 19.5/√n = 0.044; 5 of them
        assert!((mean - 20.0).abs() < 0.22, "mean {mean}");
        assert!(draws.iter().all(|&k| k >= 1));
        let ones = draws.iter().filter(|&&k| k == 1).count() as f64 / n as f64;
        assert!((ones - 0.05).abs() < 0.003, "P(1) = {ones}");
    }

    #[test]
    fn fixed_sizes_are_exact() {
        let t = Transfers { mean_segments: 20.0, dist: SizeDist::Fixed, repeat: true };
        assert_eq!(t.draw_segments(&mut stream(1, StreamId::Flow(0))), 20);
    }
}
