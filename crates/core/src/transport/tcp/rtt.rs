//! Retransmission timeout per RFC 6298, in integer nanoseconds.
//!
//! Samples come from one timed segment per round trip (the classic BSD scheme; RFC 6298 §3 allows
//! it), never from a retransmitted segment (Karn's rule, RFC 6298 §3, (5.x) below). Exponential
//! backoff (5.5) is kept as a shift applied on top of the computed RTO, and is cleared by the next
//! valid sample, so the backed-off value persists until then (RFC 6298 (5.7) note).

use super::{RtoFormula, TcpConfig};
use crate::engine::Dur;

/// SRTT/RTTVAR state and the current backoff.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RttEstimator {
    /// Smoothed RTT, ns (0 before the first sample).
    srtt: u64,
    /// RTT variation, ns.
    rttvar: u64,
    /// Whether a sample has been taken.
    has_sample: bool,
    /// Number of consecutive timeouts since the last valid sample (5.5).
    backoff: u8,
}

impl RttEstimator {
    /// Feeds one RTT measurement (2.2)/(2.3), α = 1/8, β = 1/4, and clears the backoff.
    pub fn sample(&mut self, r: Dur) {
        let r = r.0;
        if !self.has_sample {
            self.srtt = r; // (2.2) SRTT <- R
            self.rttvar = r / 2; // (2.2) RTTVAR <- R/2
            self.has_sample = true;
        } else {
            let err = self.srtt.abs_diff(r);
            self.rttvar = (3 * self.rttvar + err) / 4; // (2.3) RTTVAR <- (1 - β)·RTTVAR + β·|SRTT - R'|
            self.srtt = (7 * self.srtt + r) / 8; // (2.3) SRTT <- (1 - α)·SRTT + α·R'
        }
        self.backoff = 0;
    }

    /// Forgets the backoff without a sample, as ns-3 3.44 does on every new ACK that restarts the
    /// timer (`TcpSocketBase::NewAck` recomputes `m_rto` from the estimator; config
    /// `new_ack_clears_backoff`).
    pub fn clear_backoff(&mut self) {
        self.backoff = 0;
    }

    /// A retransmission timer expired: double the RTO (5.5).
    pub fn back_off(&mut self) {
        self.backoff = self.backoff.saturating_add(1).min(32);
    }

    /// The RTO to arm now: SRTT + max(G, 4·RTTVAR) (2.3) (with `RtoFormula::Linux`, SRTT +
    /// max(G, min_rto, 4·RTTVAR)), or the initial RTO (2.1); clamped to [min_rto (2.4), max_rto
    /// (2.5)]; then doubled per timeout (5.5), never beyond max_rto.
    pub fn rto(&self, cfg: &TcpConfig) -> Dur {
        let base = if self.has_sample {
            let variance = match cfg.rto_formula {
                RtoFormula::Rfc6298 => 4 * self.rttvar,
                RtoFormula::Linux => (4 * self.rttvar).max(cfg.min_rto.0),
            };
            self.srtt + cfg.timer_granularity.0.max(variance)
        } else {
            cfg.initial_rto.0
        };
        let clamped = base.clamp(cfg.min_rto.0, cfg.max_rto.0);
        Dur(clamped.saturating_mul(1u64 << self.backoff.min(40)).min(cfg.max_rto.0))
    }

    /// Smoothed RTT, if measured.
    pub fn srtt(&self) -> Option<Dur> {
        self.has_sample.then_some(Dur(self.srtt))
    }

    /// Consecutive timeouts since the last valid sample.
    pub fn backoff(&self) -> u8 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settled(ms: u64) -> RttEstimator {
        let mut e = RttEstimator::default();
        for _ in 0..100 {
            e.sample(Dur::from_millis(ms));
        }
        e
    }

    #[test]
    fn rfc6298_bounds_the_whole_rto_and_linux_only_its_variance_term() {
        let rfc = TcpConfig { min_rto: Dur::from_millis(200), ..TcpConfig::default() };
        let linux = TcpConfig { rto_formula: RtoFormula::Linux, ..rfc.clone() };
        // A steady 150 ms path: RTTVAR has decayed to nothing.
        let e = settled(150);
        assert_eq!(e.rto(&rfc), Dur::from_millis(200), "RFC 6298: max(min_rto, SRTT + G)");
        assert_eq!(e.rto(&linux), Dur::from_millis(350), "Linux: SRTT + tcp_rto_min");
        // Where 4·RTTVAR exceeds min_rto the two agree.
        let mut v = RttEstimator::default();
        v.sample(Dur::from_millis(1000)); // RTTVAR = 500 ms
        assert_eq!(v.rto(&rfc), v.rto(&linux));
        assert_eq!(v.rto(&linux), Dur::from_millis(3000));
        // Backoff doubles either.
        let mut b = settled(150);
        b.back_off();
        assert_eq!(b.rto(&linux), Dur::from_millis(700));
    }
}
