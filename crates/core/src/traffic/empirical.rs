//! An empirical distribution given as a CDF table, sampled by inverse CDF from one uniform draw.
//!
//! Table format (Mah's HttpModel files, as shipped by ns-2; `data/mah-httpmodel/README.md`): one
//! line per distinct observed value, `value count cumulative_probability`, values strictly
//! ascending, the last probability 1. Write the points (v_i, c_i), i = 0..n−1.
//!
//! Two ways to invert it, chosen per table ([`Interp`]):
//! * [`Interp::Step`]: x(u) = v_i for the smallest i with c_i ≥ u. Only observed values come out,
//!   each with its observed frequency: resampling the measured sample. Used for counts.
//! * [`Interp::Linear`]: x(u) = v_0 for u ≤ c_0, else on the segment c_{i−1} < u ≤ c_i,
//!   x = v_{i−1} + (v_i − v_{i−1})·(u − c_{i−1})/(c_i − c_{i−1}). This is ns-2's
//!   `EmpiricalRandomVariable` with `interpolation_ = 1` (INTER_CONTINUOUS, `tools/ranvar.cc`),
//!   which also returns v_0 below the first point. Used for sizes and times: they are continuous
//!   quantities observed a few thousand times, and interpolation gives values between the
//!   observations instead of atoms at them. Its mean is
//!   c_0·v_0 + Σ_{i≥1} (c_i − c_{i−1})·(v_{i−1} + v_i)/2, a little below the sample mean
//!   (Σ (c_i − c_{i−1})·v_i, the step mean) because each segment's mass is spread down to its
//!   left end (Mah's reply sizes: 6907 B vs 7231 B).
//!
//! One draw per sample: `sample(u)` with u uniform in [0, 1). Lookup is a binary search,
//! O(log n).

/// How a table is inverted between its points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interp {
    /// Only the observed values (counts).
    Step,
    /// Linear in probability between consecutive points (sizes, times).
    Linear,
}

/// A parsed CDF table. Invariant: `values` strictly ascending, `cum` non-decreasing in (0, 1],
/// `cum.last() == 1`, both the same non-zero length.
#[derive(Clone, Debug, PartialEq)]
pub struct Empirical {
    values: Vec<f64>,
    cum: Vec<f64>,
    interp: Interp,
}

impl Empirical {
    /// Parses `value count cumulative_probability` lines (blank lines ignored). The error names
    /// the line (1-based) and what is wrong.
    pub fn parse(text: &str, interp: Interp) -> Result<Empirical, String> {
        let (mut values, mut cum) = (Vec::new(), Vec::new());
        for (i, line) in text.lines().enumerate() {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            let bad = |what: &str| format!("line {}: {what}: {line:?}", i + 1);
            if fields.len() != 3 {
                return Err(bad("expected `value count cumulative_probability`"));
            }
            let v: f64 = fields[0].parse().map_err(|_| bad("value is not a number"))?;
            let c: f64 = fields[2].parse().map_err(|_| bad("cumulative probability is not a number"))?;
            if !v.is_finite() || values.last().is_some_and(|&p| v <= p) {
                return Err(bad("values must be finite and strictly ascending"));
            }
            if !(c > 0.0 && c <= 1.0) || cum.last().is_some_and(|&p| c < p) {
                return Err(bad("cumulative probabilities must be non-decreasing in (0, 1]"));
            }
            values.push(v);
            cum.push(c);
        }
        match cum.last() {
            None => Err("empty table".into()),
            Some(&c) if (c - 1.0).abs() > 1e-9 => Err(format!("last cumulative probability must be 1, got {c}")),
            Some(_) => {
                *cum.last_mut().expect("non-empty") = 1.0;
                Ok(Empirical { values, cum, interp })
            }
        }
    }

    /// The value at probability `u` in [0, 1] (inverse CDF; see the module doc).
    pub fn sample(&self, u: f64) -> f64 {
        // i = smallest index with cum[i] >= u; cum.last() == 1 >= u keeps it in range.
        let i = self.cum.partition_point(|&c| c < u).min(self.cum.len() - 1);
        match self.interp {
            Interp::Step => self.values[i],
            Interp::Linear if i == 0 => self.values[0],
            Interp::Linear => {
                let (c0, c1) = (self.cum[i - 1], self.cum[i]);
                let (v0, v1) = (self.values[i - 1], self.values[i]);
                v0 + (v1 - v0) * (u - c0) / (c1 - c0)
            }
        }
    }

    /// Mean of `sample(U)` for U uniform (see the module doc for the formulas).
    pub fn mean(&self) -> f64 {
        self.clipped_mean(f64::INFINITY)
    }

    /// Mean of min(`sample(U)`, `max`): the integral of min(x(u), max) over u in [0, 1].
    pub fn clipped_mean(&self, max: f64) -> f64 {
        let mut sum = self.cum[0] * self.values[0].min(max);
        for i in 1..self.values.len() {
            let w = self.cum[i] - self.cum[i - 1];
            let (a, b) = (self.values[i - 1], self.values[i]);
            sum += w * match self.interp {
                Interp::Step => b.min(max),
                Interp::Linear if b <= max => 0.5 * (a + b),
                Interp::Linear if a >= max => max,
                // x(u) crosses max at fraction f of the segment: mean (a+max)/2 before, max after.
                Interp::Linear => {
                    let f = (max - a) / (b - a);
                    f * 0.5 * (a + max) + (1.0 - f) * max
                }
            };
        }
        sum
    }

    /// A draw of the length-biased distribution of T = min(`sample(U)`, `max`): density
    /// t·f_T(t) / E[T], from two uniforms in [0, 1) (`u` picks the piece, `v` the value in it).
    /// Used for the equilibrium (residual-life) start of a renewal process: U·T* with T* from
    /// here and U uniform has density P(T > r) / E[T].
    ///
    /// The clipped table is a mixture of atoms (v_0 below c_0; Step values; `max` above the clip)
    /// and, with [`Interp::Linear`], uniform densities on [v_{i−1}, v_i] of mass c_i − c_{i−1}.
    /// Length-biasing weights each piece by mass × mean (atom: mass·value; uniform on [a, b]:
    /// mass·(a + b)/2); the weights sum to `clipped_mean(max)`. Within a uniform piece the
    /// length-biased density is ∝ t on [a, b]: t = √(a² + v·(b² − a²)). O(n) (a scan; the
    /// browser draws this once).
    pub fn length_biased_sample(&self, max: f64, u: f64, v: f64) -> f64 {
        let target = u * self.clipped_mean(max);
        let mut acc = 0.0;
        // Returns Some(value) when the piece of `weight` holds the target.
        let mut piece = |weight: f64, lo: f64, hi: f64| -> Option<f64> {
            if weight > 0.0 && acc + weight > target {
                return Some(if hi > lo { (lo * lo + v * (hi * hi - lo * lo)).sqrt() } else { lo });
            }
            acc += weight;
            None
        };
        let v0 = self.values[0].min(max);
        if let Some(t) = piece(self.cum[0] * v0, v0, v0) {
            return t;
        }
        for i in 1..self.values.len() {
            let w = self.cum[i] - self.cum[i - 1];
            let (a, b) = (self.values[i - 1], self.values[i]);
            let found = match self.interp {
                Interp::Step => piece(w * b.min(max), b.min(max), b.min(max)),
                Interp::Linear if b <= max => piece(w * 0.5 * (a + b), a, b),
                Interp::Linear if a >= max => piece(w * max, max, max),
                Interp::Linear => {
                    let f = (max - a) / (b - a);
                    piece(w * f * 0.5 * (a + max), a, max).or_else(|| piece(w * (1.0 - f) * max, max, max))
                }
            };
            if let Some(t) = found {
                return t;
            }
        }
        self.max().min(max) // rounding left the target past the last piece
    }

    /// Smallest observed value.
    pub fn min(&self) -> f64 {
        self.values[0]
    }

    /// Largest observed value.
    pub fn max(&self) -> f64 {
        *self.values.last().expect("non-empty")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use rand::Rng as _;

    // Three points: P(1) = 0.5, P(2) = 0.25, P(4) = 0.25.
    const SMALL: &str = "1 2 0.5\n2 1 0.75\n\n4 1 1\n";

    #[test]
    fn step_returns_only_observed_values_at_their_probabilities() {
        let e = Empirical::parse(SMALL, Interp::Step).unwrap();
        assert_eq!(e.sample(0.0), 1.0);
        assert_eq!(e.sample(0.5), 1.0); // c_0 = 0.5 ≥ u
        assert_eq!(e.sample(0.500001), 2.0);
        assert_eq!(e.sample(0.75), 2.0);
        assert_eq!(e.sample(0.9), 4.0);
        assert_eq!(e.sample(1.0 - f64::EPSILON), 4.0);
        assert_eq!(e.sample(1.0), 4.0);
        // Hand calculation: 0.5·1 + 0.25·2 + 0.25·4 = 2.
        assert!((e.mean() - 2.0).abs() < 1e-12);
        assert!((e.clipped_mean(3.0) - 1.75).abs() < 1e-12);
    }

    #[test]
    fn linear_interpolates_between_points() {
        let e = Empirical::parse(SMALL, Interp::Linear).unwrap();
        assert_eq!(e.sample(0.0), 1.0); // below c_0: v_0
        assert_eq!(e.sample(0.5), 1.0);
        assert!((e.sample(0.625) - 1.5).abs() < 1e-12); // halfway from (1, 0.5) to (2, 0.75)
        assert!((e.sample(0.875) - 3.0).abs() < 1e-12); // halfway from (2, 0.75) to (4, 1)
        assert!((e.sample(1.0 - 1e-12) - 4.0).abs() < 1e-9);
        assert_eq!(e.sample(1.0), 4.0);
        // Hand calculation: 0.5·1 + 0.25·1.5 + 0.25·3 = 1.625.
        assert!((e.mean() - 1.625).abs() < 1e-12);
        // Clipped at 3: last segment is 2 → 3 over its first half, then 3:
        // 0.5·1 + 0.25·1.5 + 0.25·(0.5·2.5 + 0.5·3) = 1.5625.
        assert!((e.clipped_mean(3.0) - 1.5625).abs() < 1e-12);
    }

    #[test]
    fn sample_mean_matches_the_table_mean() {
        for interp in [Interp::Step, Interp::Linear] {
            let e = Empirical::parse(SMALL, interp).unwrap();
            let mut rng = stream(1, StreamId::Flow(0));
            let n = 200_000;
            let mean = (0..n).map(|_| e.sample(rng.gen::<f64>())).sum::<f64>() / n as f64;
            // sd ≤ 1.3 for both: standard error ≤ 0.003; 0.015 is 5 σ.
            assert!((mean - e.mean()).abs() < 0.015, "{interp:?}: {mean} vs {}", e.mean());
        }
    }

    #[test]
    fn length_biased_pieces_by_hand() {
        // SMALL, linear, clipped at 3: atom 1 (mass 0.5, weight 0.5), uniform [1, 2] (mass 0.25,
        // weight 0.375), uniform [2, 3] (mass 0.125, weight 0.3125), atom 3 (mass 0.125,
        // weight 0.375); total 1.5625 = clipped_mean(3).
        let e = Empirical::parse(SMALL, Interp::Linear).unwrap();
        let total = 1.5625;
        assert_eq!(e.length_biased_sample(3.0, 0.0, 0.7), 1.0);
        assert_eq!(e.length_biased_sample(3.0, 0.4 / total, 0.7), 1.0);
        // u·total = 0.6 falls in the uniform [1, 2]: t = √(1 + v·3).
        assert!((e.length_biased_sample(3.0, 0.6 / total, 0.5) - 2.5f64.sqrt()).abs() < 1e-12);
        // u·total = 1.0 falls in [2, 3]: t = √(4 + v·5).
        assert!((e.length_biased_sample(3.0, 1.0 / total, 0.2) - 5f64.sqrt()).abs() < 1e-12);
        assert_eq!(e.length_biased_sample(3.0, 1.3 / total, 0.2), 3.0);
        assert_eq!(e.length_biased_sample(3.0, 1.0 - 1e-15, 0.2), 3.0);
    }

    #[test]
    fn residual_of_length_biased_draws_has_the_equilibrium_cdf() {
        // R = V·T*: P(R ≤ r) = E[min(T, r)] / E[T] (renewal theory), for r ≤ max.
        for interp in [Interp::Step, Interp::Linear] {
            let e = Empirical::parse(SMALL, interp).unwrap();
            let mut rng = stream(2, StreamId::Flow(0));
            let n = 400_000;
            let r: Vec<f64> = (0..n)
                .map(|_| {
                    let t = e.length_biased_sample(3.0, rng.gen::<f64>(), rng.gen::<f64>());
                    rng.gen::<f64>() * t
                })
                .collect();
            for x in [0.5, 1.0, 1.7, 2.5] {
                let want = e.clipped_mean(x) / e.clipped_mean(3.0);
                let got = r.iter().filter(|&&y| y <= x).count() as f64 / n as f64;
                // Standard error ≤ 0.0008: 0.004 is 5 σ.
                assert!((got - want).abs() < 0.004, "{interp:?} P(R ≤ {x}) = {got}, want {want}");
            }
        }
    }

    #[test]
    fn malformed_tables_are_rejected_with_the_line() {
        let bad = |t: &str| Empirical::parse(t, Interp::Step).unwrap_err();
        assert_eq!(bad(""), "empty table");
        assert!(bad("1 1 0.5\n1 1 1\n").starts_with("line 2: values must be finite and strictly ascending"));
        assert!(bad("1 1 0.5\n2 1 0.4\n").starts_with("line 2: cumulative probabilities"));
        assert!(bad("1 1 0.5\n").contains("must be 1, got 0.5"));
        assert!(bad("1 1\n").starts_with("line 1: expected"));
        assert!(bad("x 1 1\n").starts_with("line 1: value is not a number"));
    }
}
