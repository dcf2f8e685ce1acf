//! The TCP throughput equation of RFC 5348 §3.1 (Padhye et al. 1998; Cho 2002 eq. 4.5):
//!
//! ```text
//! X = s / (R·sqrt(2·b·p/3) + t_RTO·(3·sqrt(3·b·p/8))·p·(1 + 32·p²))
//! ```
//!
//! with `b = 1` and `t_RTO = 4R` (§4.3 "the simple heuristic"). Worked number (hand calculation):
//! `s = 1000 B, R = 0.1 s, p = 0.01`: `R·sqrt(2p/3) = 0.0081650`,
//! `4R·3·sqrt(3p/8)·p·(1+32p²) = 0.00073720`, so `X = 112 332 B/s`.

/// `X_Bps` for packet size `s` bytes, RTT `r_s` seconds and loss event rate `p` in (0, 1], with
/// `t_RTO = 4R`. Returns bytes per second (infinite for `p = 0`).
pub fn rate(s: f64, r_s: f64, p: f64) -> f64 {
    rate_with_rto(s, r_s, p, 4.0 * r_s)
}

/// The equation with an explicit `t_RTO` (seconds).
pub fn rate_with_rto(s: f64, r_s: f64, p: f64, t_rto_s: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let b = 1.0;
    let denom = r_s * (2.0 * b * p / 3.0).sqrt() + t_rto_s * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s / denom
}

/// The loss event rate at which the equation gives `x` bytes/s (bisection on the monotone
/// equation; RFC 5348 §6.3.1's first loss interval is `1/p` of it). `x` at or above the rate at
/// `p = 1e-8` gives 1e-8; at or below the rate at `p = 1` gives 1.
pub fn invert(s: f64, r_s: f64, x: f64) -> f64 {
    let (mut lo, mut hi) = (1e-8f64, 1.0f64);
    if x >= rate(s, r_s, lo) {
        return lo;
    }
    if x <= rate(s, r_s, hi) {
        return hi;
    }
    for _ in 0..100 {
        let mid = (lo * hi).sqrt();
        if rate(s, r_s, mid) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}
