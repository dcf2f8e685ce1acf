//! A slowly varying multiplicative "activity" factor: a stationary AR(1) process in log space,
//! `x[k+1] = φ·x[k] + √(1−φ²)·σ·ε`, `φ = exp(−Δt/τ)`, and factor `exp(x − σ²/2)` so its mean
//! is 1. Used for MPEG scene activity (spec `seed000-cbt-evaluation.md` §2.3: correlation time
//! 10–60 s) and for Proshare's mild video-size modulation (§2.2: ±10–15 % over seconds).

use rand_distr::{Distribution, StandardNormal};

use crate::engine::Rng;

/// The process; one step per frame.
#[derive(Clone, Debug)]
pub struct Activity {
    sd: f64,
    phi: f64,
    x: f64,
}

impl Activity {
    /// A process with stationary log-sd `sd`, correlation time `tau_s` and step `dt_s`, started
    /// from its stationary distribution (one normal draw). `sd = 0` gives a constant 1.
    pub fn new(sd: f64, tau_s: f64, dt_s: f64, rng: &mut Rng) -> Activity {
        let phi = if tau_s > 0.0 { (-dt_s / tau_s).exp() } else { 0.0 };
        let z: f64 = StandardNormal.sample(rng);
        Activity { sd, phi, x: if sd > 0.0 { sd * z } else { 0.0 } }
    }

    /// The current factor (mean 1 over the stationary distribution).
    pub fn factor(&self) -> f64 {
        (self.x - self.sd * self.sd / 2.0).exp()
    }

    /// Advances one step (no draw when `sd = 0`).
    pub fn step(&mut self, rng: &mut Rng) {
        if self.sd > 0.0 {
            let z: f64 = StandardNormal.sample(rng);
            self.x = self.phi * self.x + (1.0 - self.phi * self.phi).sqrt() * self.sd * z;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};

    #[test]
    fn factor_has_mean_one_and_the_asked_log_sd() {
        let mut rng = stream(3, StreamId::Flow(0));
        // τ = 10 steps; 400 000 steps ≈ 20 000 independent samples.
        let mut a = Activity::new(0.25, 10.0, 1.0, &mut rng);
        let (mut s, mut s2, n) = (0.0, 0.0, 400_000);
        let mut logs = 0.0;
        for _ in 0..n {
            a.step(&mut rng);
            let f = a.factor();
            s += f;
            logs += f.ln();
            s2 += f.ln() * f.ln();
        }
        let mean = s / n as f64;
        let lm = logs / n as f64;
        let lsd = (s2 / n as f64 - lm * lm).sqrt();
        // se of the mean ≈ 0.25/√20000 ≈ 0.002 (×√2 for AR(1) variance inflation): 0.015 is > 5 se
        assert!((mean - 1.0).abs() < 0.015, "mean {mean}");
        assert!((lsd - 0.25).abs() < 0.015, "log sd {lsd}");
    }
}
