//! Metric collectors: delay histograms, queue monitors, time series, pcap capture, fairness.

pub mod flow_counter;
pub mod frame_decoder;
pub mod histogram;
pub mod pcap;
pub mod queue_monitor;

pub use histogram::Histogram;
pub use queue_monitor::QueueMonitor;

/// Jain's fairness index (Σx)² / (n·Σx²) of the given allocations; 1 = perfectly fair.
/// Returns 0 for an empty or all-zero input.
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 { 0.0 } else { s * s / (n * s2) }
}

#[cfg(test)]
mod tests {
    use super::jain_index;

    #[test]
    fn jain_index_of_equal_shares_is_one_and_of_one_hog_is_one_over_n() {
        assert!((jain_index(&[3.0, 3.0, 3.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[5.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }
}
