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
//! * **History discounting** (§5.5, optional in the RFC; on with [`LossHistory::with_discounting`],
//!   the scenario key `history_discounting`): each closed interval `I_i` carries a discount
//!   factor `DF_i` (1 when it closes), and a general factor `DF` follows the open interval: with
//!   `I_mean = Σ_{i=1}^{n} I_i·w_{i−1}·DF_i / Σ_{i=1}^{n} w_{i−1}·DF_i`, `DF = max(2·I_mean/I_0,
//!   THRESHOLD = 0.25)` when `I_0 > 2·I_mean`, else 1. Then `I_tot0 = I_0·w_0 + Σ_{i=1}^{n−1}
//!   I_i·w_i·DF_i·DF` over `W_tot0 = w_0 + Σ_{i=1}^{n−1} w_i·DF_i·DF`, `I_tot1 = Σ_{i=1}^{n}
//!   I_i·w_{i−1}·DF_i` over `W_tot1 = Σ w_{i−1}·DF_i`, `p = min(W_tot0/I_tot0, W_tot1/I_tot1)`.
//!   At a new loss event every `DF_i ← DF·DF_i` (DF from the interval that closes), the factors
//!   shift with their intervals and the new `I_1` gets `DF_1 = 1`. So a long quiet interval
//!   discounts the older, lossier history for good once it closes. `DF` depends only on `I_0` and
//!   the history, so it is computed when `p` is asked for rather than stored per arrival.
//!   Worked number: `I_1..I_8 = 100`, `I_0 = 1000`: `I_mean = 100`, `DF = max(0.2, 0.25) = 0.25`,
//!   `I_tot0/W_tot0 = (1000 + 0.25·500)/(1 + 0.25·5) = 500` against 250 without, so `p = 0.002`
//!   instead of 0.004. ns-2, whose TFRC agent Cho 2002 ran, sets `Agent/TFRCSink set discount_ 1`.

use std::collections::VecDeque;

use crate::engine::Time;

/// Weights of RFC 5348 §5.4 (n = 8).
pub const WEIGHTS: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
/// §5.5: the general discount factor `DF` never goes below this ("We recommend a THRESHOLD of
/// 0.25").
pub const DISCOUNT_THRESHOLD: f64 = 0.25;

/// Loss events and intervals of one TFRC flow.
#[derive(Clone, Debug, Default)]
pub struct LossHistory {
    /// Closed intervals, most recent first (`I_1`, `I_2`, …), at most 8.
    closed: VecDeque<f64>,
    /// `DF_i` of each closed interval, same order (§5.5; all 1 without discounting).
    discount: VecDeque<f64>,
    /// Whether history discounting (§5.5) is on.
    discounting: bool,
    /// Sequence number of the first lost packet of the current loss event.
    event_seq: Option<u32>,
    /// Nominal send time of that packet.
    event_at: Time,
    /// Loss events seen.
    events: u64,
}

impl LossHistory {
    /// An empty history; `discounting` turns on §5.5 history discounting.
    pub fn with_discounting(discounting: bool) -> LossHistory {
        LossHistory { discounting, ..LossHistory::default() }
    }

    /// Whether history discounting (§5.5) is on.
    pub fn discounting(&self) -> bool {
        self.discounting
    }

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
                Some(s) => {
                    let closing = lost.wrapping_sub(s) as f64;
                    // §5.5: fold the general factor (with the closing interval as I_0) into every
                    // DF_i before the shift; the new I_1 starts at DF_1 = 1.
                    let df = self.general_discount(closing);
                    for d in &mut self.discount {
                        *d *= df;
                    }
                    self.closed.push_front(closing);
                }
            }
            self.discount.push_front(1.0);
            self.closed.truncate(WEIGHTS.len());
            self.discount.truncate(WEIGHTS.len());
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
    ///
    /// With discounting (§5.5) the two sums take the discount factors and have their own weight
    /// totals: `max(I_tot0/W_tot0, I_tot1/W_tot1)`, i.e. `1/p` with `p = min(W_tot0/I_tot0,
    /// W_tot1/I_tot1)`.
    pub fn mean_interval(&self, i0: f64) -> f64 {
        let n = self.closed.len().min(WEIGHTS.len());
        if n == 0 {
            return i0;
        }
        let w = &WEIGHTS[..n];
        if self.discounting {
            let df = self.general_discount(i0);
            let (mut tot0, mut w_tot0) = (i0 * w[0], w[0]);
            for ((iv, d), wi) in self.closed.iter().zip(&self.discount).zip(&w[1..]) {
                tot0 += iv * wi * d * df;
                w_tot0 += wi * d * df;
            }
            let (mut tot1, mut w_tot1) = (0.0, 0.0);
            for ((iv, d), wi) in self.closed.iter().zip(&self.discount).zip(w) {
                tot1 += iv * wi * d;
                w_tot1 += wi * d;
            }
            return (tot0 / w_tot0).max(tot1 / w_tot1);
        }
        let w_tot: f64 = w.iter().sum();
        // I_tot0 over I_0..I_{n-1}: the open interval then the n − 1 most recent closed ones.
        let tot0 = i0 * w[0] + self.closed.iter().zip(&w[1..]).map(|(iv, wi)| iv * wi).sum::<f64>();
        // I_tot1 over I_1..I_n with w_0..w_{n-1}.
        let tot1: f64 = self.closed.iter().zip(w).map(|(iv, wi)| iv * wi).sum();
        tot0.max(tot1) / w_tot
    }

    /// §5.5's general discount factor `DF` for an open interval `i0`: `max(2·I_mean/i0,
    /// THRESHOLD)` when `i0 > 2·I_mean` (`I_mean` over the closed intervals, weighted by
    /// `w_{i−1}·DF_i`), else 1; always 1 without discounting or closed intervals.
    pub fn general_discount(&self, i0: f64) -> f64 {
        if !self.discounting || self.closed.is_empty() {
            return 1.0;
        }
        let (mut tot, mut w_tot) = (0.0, 0.0);
        for ((iv, d), wi) in self.closed.iter().zip(&self.discount).zip(&WEIGHTS) {
            tot += iv * wi * d;
            w_tot += wi * d;
        }
        let i_mean = tot / w_tot;
        if i0 > 2.0 * i_mean {
            (2.0 * i_mean / i0).max(DISCOUNT_THRESHOLD)
        } else {
            1.0
        }
    }

    /// The discount factors `DF_i` of the closed intervals, most recent first (§5.5).
    pub fn discounts(&self) -> impl Iterator<Item = f64> + '_ {
        self.discount.iter().copied()
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
