//! Bruce Mah's measured HTTP distributions (B. A. Mah, "An Empirical Model of HTTP Network
//! Traffic", IEEE INFOCOM 1997), the HttpModel data files of ns-2.35 `tcl/http/data/` vendored
//! in `crates/core/data/mah-httpmodel/` (provenance, format and checksums in its README.md).
//! Embedded in the binary and parsed once, on first use.
//!
//! | table | file | samples | inverted as | mean |
//! |---|---|---|---|---|
//! | [`connections`] | files per page (primary + embedded) | 1444 | step | 2.838 |
//! | [`reply_length`] | reply size, bytes | 4100 | linear | 6907 (sample mean 7231) |
//! | [`think_time`] | user think time, s | 1314 | linear | 1771 (sample mean 1804; median 16.2) |
//!
//! `HttpRequestLength` and `HttpServerStay` are vendored but not used (see `traffic/http.rs`).

use std::sync::OnceLock;

use super::empirical::{Empirical, Interp};

fn table(cell: &'static OnceLock<Empirical>, text: &str, name: &str, interp: Interp) -> &'static Empirical {
    cell.get_or_init(|| Empirical::parse(text, interp).unwrap_or_else(|e| panic!("vendored {name}: {e}")))
}

/// Files per Web page, primary included (`HttpConnections.cdf`), step.
pub fn connections() -> &'static Empirical {
    static T: OnceLock<Empirical> = OnceLock::new();
    table(&T, include_str!("../../data/mah-httpmodel/HttpConnections.cdf"), "HttpConnections.cdf", Interp::Step)
}

/// Reply size, bytes (`HttpReplyLength.cdf`), linear.
pub fn reply_length() -> &'static Empirical {
    static T: OnceLock<Empirical> = OnceLock::new();
    table(&T, include_str!("../../data/mah-httpmodel/HttpReplyLength.cdf"), "HttpReplyLength.cdf", Interp::Linear)
}

/// User think time, seconds (`HttpThinkTime.cdf`), linear.
pub fn think_time() -> &'static Empirical {
    static T: OnceLock<Empirical> = OnceLock::new();
    table(&T, include_str!("../../data/mah-httpmodel/HttpThinkTime.cdf"), "HttpThinkTime.cdf", Interp::Linear)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use rand::Rng as _;

    /// Sample mean, Σ count·value / Σ count, read straight off a vendored file.
    fn sample_mean(text: &str) -> f64 {
        let (mut n, mut s) = (0.0, 0.0);
        for l in text.lines().filter(|l| !l.trim().is_empty()) {
            let f: Vec<f64> = l.split_whitespace().map(|x| x.parse().unwrap()).collect();
            n += f[1];
            s += f[0] * f[1];
        }
        s / n
    }

    #[test]
    fn tables_parse_with_the_documented_ranges_and_means() {
        let c = connections();
        assert_eq!((c.min(), c.max()), (1.0, 65.0));
        // Step inversion reproduces the sample: mean 4098/1444 = 2.838.
        let text = include_str!("../../data/mah-httpmodel/HttpConnections.cdf");
        assert!((c.mean() - sample_mean(text)).abs() < 1e-9);
        assert!((c.mean() - 2.838).abs() < 0.001, "{}", c.mean());
        let r = reply_length();
        assert_eq!((r.min(), r.max()), (0.0, 1_636_039.0));
        let sm = sample_mean(include_str!("../../data/mah-httpmodel/HttpReplyLength.cdf"));
        assert!((sm - 7231.0).abs() < 1.0, "{sm}");
        assert!((r.mean() - 6906.6).abs() < 0.1, "{}", r.mean());
        let t = think_time();
        assert_eq!((t.min(), t.max()), (1.005, 86_394.941));
        let sm = sample_mean(include_str!("../../data/mah-httpmodel/HttpThinkTime.cdf"));
        assert!((sm - 1804.0).abs() < 0.5, "{sm}");
        assert!((t.mean() - 1771.1).abs() < 0.1, "{}", t.mean());
        // Median: the file has 16.157 s at c = 0.4977 and 16.232 s at c = 0.5008.
        assert!((t.sample(0.5) - 16.2).abs() < 0.05, "{}", t.sample(0.5));
    }

    #[test]
    fn reply_sizes_sampled_reproduce_the_table_mean_and_quantiles() {
        let r = reply_length();
        let mut rng = stream(2, StreamId::Flow(0));
        let n = 1_000_000;
        let xs: Vec<f64> = (0..n).map(|_| r.sample(rng.gen::<f64>())).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        // The sd of the interpolated table is 38.0 KB (exact, piecewise-linear quantile): standard
        // error 38 B; 190 B is 5 σ.
        assert!((mean - r.mean()).abs() < 190.0, "mean {mean} vs {}", r.mean());
        for q in [0.1, 0.5, 0.9, 0.99] {
            let x = r.sample(q);
            let below = xs.iter().filter(|&&v| v <= x).count() as f64 / n as f64;
            // The fraction of draws at or below the q-quantile is q, with standard error
            // √(q(1−q)/n) ≤ 0.0005: 0.0025 is 5 σ.
            assert!((below - q).abs() < 0.0025, "q {q} (x = {x} B): {below}");
        }
    }
}
