//! The receiver's loss history (RFC 5348 §5): loss events and the average loss interval.
//!
//! * A lost packet's nominal send time is interpolated between the send timestamps of the packets
//!   received before and after the gap (§5.2). It starts a **new loss event** if that time is more
//!   than `R` after the start of the current loss event; otherwise it belongs to it.
//! * A **loss interval** is the number of packets from the first lost packet of one loss event to
//!   the first lost packet of the next (§5.3). `I_0`, the open interval, counts the packets since
//!   the start of the most recent loss event, up to the highest sequence number received.
//! * **Average** (§5.4), `n = 8`, weights `1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2`:
//!   `I_tot0 = Σ_{i=0}^{n−1} I_i·w_i`, `I_tot1 = Σ_{i=1}^{n} I_i·w_{i−1}`, both divided by the one
//!   `W_tot = Σ_{i=0}^{n−1} w_i`; with `k < 8` closed intervals `n = k`; `I_mean = max(both)`,
//!   `p = 1/I_mean`.
//!   Worked number: closed intervals all 100 and `I_0 = 50` give `I_tot1/W = 100`, so `p = 0.01`
//!   (the open interval only counts when it raises the mean).
//! * The first loss event (§6.3.1) has no earlier interval: a synthetic `I_1 = 1/p` is pushed,
//!   with `p` the loss event rate at which the equation gives the caller's receive rate.
//! * History discounting (§5.5) is not implemented (optional in the RFC).

use std::collections::VecDeque;

use crate::engine::Time;

/// Weights of RFC 5348 §5.4 (n = 8).
pub const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Loss events and intervals of one TFRC flow.
#[derive(Clone, Debug, Default)]
pub struct LossHistory {
    /// Closed intervals, most recent first (`I_1`, `I_2`, …), at most 8.
    closed: VecDeque<f64>,
    /// Sequence number of the first lost packet of the current loss event.
    event_seq: Option<u32>,
    /// Nominal send time of that packet.
    event_at: Time,
    /// Loss events seen.
    events: u64,
}

impl LossHistory {
    /// Records that packets `[first_lost, next_received)` were lost. `(prev_seq, prev_ts)` is the
    /// last packet received before the gap and `(next_received, next_ts)` the packet after it;
    /// `r` the RTT; `first_interval` gives the synthetic first interval (§6.3.1) if needed.
    /// Returns whether a new loss event started.
    pub fn on_gap(&mut self, prev: (u32, Time), next: (u32, Time), first_lost: u32, r: crate::engine::Dur,
                  first_interval: impl FnOnce() -> f64) -> bool {
        let (prev_seq, prev_ts) = prev;
        let (next_seq, next_ts) = next;
        let mut new_event = false;
        let mut first_interval = Some(first_interval);
        for lost in first_lost..next_seq {
            // §5.2 interpolation of the lost packet's send time.
            let frac = (lost - prev_seq) as f64 / (next_seq - prev_seq) as f64;
            let at = Time(prev_ts.0 + ((next_ts.0 - prev_ts.0) as f64 * frac) as u64);
            let starts = match self.event_seq {
                None => true,
                Some(_) => at > self.event_at + r,
            };
            if !starts {
                continue;
            }
            match self.event_seq {
                None => {
                    let f = first_interval.take().expect("once")();
                    self.closed.push_front(f.max(1.0));
                }
                Some(s) => self.closed.push_front(lost.wrapping_sub(s) as f64),
            }
            self.closed.truncate(WEIGHTS.len());
            self.event_seq = Some(lost);
            self.event_at = at;
            self.events += 1;
            new_event = true;
        }
        new_event
    }

    /// The loss event rate `p` given the highest sequence number received (0 before any loss).
    pub fn loss_event_rate(&self, highest_seq: u32) -> f64 {
        let Some(s) = self.event_seq else { return 0.0 };
        let i0 = highest_seq.wrapping_sub(s) as f64 + 1.0;
        1.0 / self.mean_interval(i0)
    }

    /// `I_mean` (§5.4) with open interval `i0`.
    ///
    /// With `k` closed intervals, `n = min(k, 8)` (§5.4: with fewer than `n` closed intervals `k`
    /// replaces `n`; Linux `tfrc_lh_calc_i_mean` does the same): `I_tot0 = Σ_{i=0}^{n−1} I_i·w_i`,
    /// `I_tot1 = Σ_{i=1}^{n} I_i·w_{i−1}`, one `W_tot = Σ_{i=0}^{n−1} w_i` for both,
    /// `I_mean = max(I_tot0, I_tot1)/W_tot`. So `I_0 = 300`, `I_1 = 100` gives 300.
    pub fn mean_interval(&self, i0: f64) -> f64 {
        let n = self.closed.len().min(WEIGHTS.len());
        if n == 0 {
            return i0;
        }
        let w = &WEIGHTS[..n];
        let w_tot: f64 = w.iter().sum();
        // I_tot0 over I_0..I_{n-1}: the open interval then the n − 1 most recent closed ones.
        let tot0 = i0 * w[0] + self.closed.iter().zip(&w[1..]).map(|(iv, wi)| iv * wi).sum::<f64>();
        // I_tot1 over I_1..I_n with w_0..w_{n-1}.
        let tot1: f64 = self.closed.iter().zip(w).map(|(iv, wi)| iv * wi).sum();
        tot0.max(tot1) / w_tot
    }

    /// Loss events so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    /// The closed intervals, most recent first.
    pub fn closed(&self) -> impl Iterator<Item = f64> + '_ {
        self.closed.iter().copied()
    }
}
