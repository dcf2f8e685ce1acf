//! A compact log-linear histogram of nanosecond durations for delay percentiles.
//!
//! Values below 64 ns get exact buckets; above, each power of two is split into 64 equal
//! sub-buckets, so a reported percentile (the bucket midpoint) is within 1/128 ≈ 0.8% of the
//! true sample. Storage covers only the range of buckets actually hit (a few hundred counters
//! for typical delays), so every flow can afford one.

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// Histogram of `u64` nanosecond values.
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    /// Index of `counts[0]`.
    base: u32,
    counts: Vec<u32>,
    total: u64,
    sum_ns: f64,
    max_ns: u64,
}

fn bucket_of(v: u64) -> u32 {
    if v < SUB {
        return v as u32;
    }
    let e = 63 - v.leading_zeros(); // floor(log2 v) >= SUB_BITS
    let shift = e - SUB_BITS;
    let sub = (v >> shift) - SUB; // in [0, SUB)
    ((shift + 1) << SUB_BITS) + sub as u32
}

/// Inclusive lower bound and width of bucket `b`.
fn bucket_range(b: u32) -> (u64, u64) {
    if (b as u64) < SUB {
        return (b as u64, 1);
    }
    let shift = (b >> SUB_BITS) - 1;
    let sub = (b as u64) & (SUB - 1);
    ((SUB + sub) << shift, 1 << shift)
}

impl Histogram {
    /// Records one value.
    #[inline]
    pub fn record(&mut self, v_ns: u64) {
        let b = bucket_of(v_ns);
        if self.counts.is_empty() {
            self.base = b;
            self.counts.push(0);
        } else if b < self.base {
            let grow = (self.base - b) as usize;
            self.counts.splice(0..0, std::iter::repeat(0).take(grow));
            self.base = b;
        } else if (b - self.base) as usize >= self.counts.len() {
            self.counts.resize((b - self.base) as usize + 1, 0);
        }
        self.counts[(b - self.base) as usize] += 1;
        self.total += 1;
        self.sum_ns += v_ns as f64;
        self.max_ns = self.max_ns.max(v_ns);
    }

    /// Number of values recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Exact mean in seconds, `None` when nothing was recorded: results report a delay that was
    /// never measured as null, not as 0 (a flow that delivered nothing has no delay).
    pub fn mean_s_if_any(&self) -> Option<f64> {
        (self.total > 0).then(|| self.mean_s())
    }

    /// The `q`-quantile in seconds as [`Histogram::quantile_s`], `None` when nothing was recorded.
    pub fn quantile_s_if_any(&self, q: f64) -> Option<f64> {
        (self.total > 0).then(|| self.quantile_s(q))
    }

    /// Exact mean in seconds (0 when empty).
    pub fn mean_s(&self) -> f64 {
        if self.total == 0 { 0.0 } else { self.sum_ns / self.total as f64 * 1e-9 }
    }

    /// The `q`-quantile (0 ≤ q ≤ 1) in seconds, as its bucket's midpoint (0 when empty).
    pub fn quantile_s(&self, q: f64) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0u64;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                let (lo, w) = bucket_range(self.base + i as u32);
                let mid = lo as f64 + (w as f64 - 1.0) / 2.0;
                return mid.min(self.max_ns as f64) * 1e-9;
            }
        }
        self.max_ns as f64 * 1e-9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_contiguously() {
        let mut prev_end = 0;
        for b in 0..2000 {
            let (lo, w) = bucket_range(b);
            assert_eq!(lo, prev_end, "bucket {b}");
            assert_eq!(bucket_of(lo), b);
            assert_eq!(bucket_of(lo + w - 1), b);
            prev_end = lo + w;
        }
    }

    #[test]
    fn quantiles_are_within_one_percent() {
        let mut h = Histogram::default();
        for v in 1..=100_000u64 {
            h.record(v * 1000); // 1 us .. 100 ms uniformly
        }
        for q in [0.5, 0.95, 0.99] {
            let exact = q * 100_000.0 * 1000.0 * 1e-9;
            let got = h.quantile_s(q);
            assert!((got - exact).abs() / exact < 0.01, "q{q}: {got} vs {exact}");
        }
        assert!((h.mean_s() - 0.0500005).abs() < 1e-9);
    }

    #[test]
    fn an_empty_histogram_has_no_mean_or_quantile_to_report() {
        let mut h = Histogram::default();
        assert_eq!((h.mean_s_if_any(), h.quantile_s_if_any(0.5)), (None, None));
        h.record(2_000_000);
        assert_eq!(h.mean_s_if_any(), Some(0.002));
        assert!((h.quantile_s_if_any(0.5).unwrap() - 0.002).abs() / 0.002 < 0.016);
    }
}
