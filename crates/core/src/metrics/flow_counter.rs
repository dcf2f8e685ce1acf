//! Bit-vector flow counting (Morris 1999 §6.1, Fig. 6.1, Eq. 6.1; spec `seed004-fpq.md` §2.8, §3.4).
//!
//! Each arriving data packet's flow id is hashed to one of `v_max` bits; a clear bit is set and
//! counted in `c`. Bits are cleared at an average rate of `v_max` per `t_clear`, so a flow stays
//! counted while it sends at least about once per `t_clear`. Hash collisions are corrected with
//! Eq. 6.1: f = ln(1 − c/v_max) / ln((v_max − 1)/v_max).
//!
//! Resolutions of the spec's ambiguities (§3.4), each a documented choice:
//! 1. Clearing is `random` (Fig. 6.1's pseudocode: uniform indices, with replacement; a set bit
//!    then lives an exponential time of mean `t_clear`) by default, or `sweep` (the prose: a
//!    pointer clears every bit exactly once per `t_clear`).
//! 2. Fractional clears carry over: the clearing credit is kept exactly (in bit·nanoseconds), so
//!    the long-run clearing rate is exactly v_max/t_clear. Truncating `n_clear` and resetting
//!    `t_last` on every packet (the literal pseudocode) would lose up to half the clears.
//! 3. The caller decides which packets count (the dumbbell counts data packets arriving at the
//!    queue, before the drop decision).
//! 4. `c` is clamped to v_max − 1 in Eq. 6.1 (which is −∞ at c = v_max); callers clamp f ≥ 1.
//! 5. h(flow) = SplitMix64(flow id) mod v_max, a uniform mixer.
//! 6. Clearing runs lazily on arrivals, at the same average rate. After a long silence of more
//!    than 32·v_max clears' worth, random clearing would leave each bit set with probability
//!    below e⁻³²; the vector is simply zeroed instead of drawing that many indices.

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use crate::engine::{Dur, Rng, Time};
use crate::error::{ConfigError, ConfigResult};
use crate::scenario::units::Duration;

/// How bits are cleared.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Clearing {
    /// Uniformly random indices (Fig. 6.1's pseudocode).
    #[default]
    Random,
    /// A pointer that sweeps the vector once per `t_clear` (§6.1's prose).
    Sweep,
}

/// Scenario keys of a flow counter.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowCounterParams {
    /// Bits in the vector (`v_max`): about the largest number of flows expected (§6.1: 5000).
    #[serde(default = "default_bits")]
    pub bits: i64,
    /// Time over which every bit is cleared once on average; must exceed the largest RTT.
    #[serde(default = "default_t_clear")]
    pub t_clear: Duration,
    /// `random` or `sweep`.
    #[serde(default)]
    pub clearing: Clearing,
}

fn default_bits() -> i64 {
    5000
}
fn default_t_clear() -> Duration {
    Duration(Dur::from_millis(4000))
}

impl Default for FlowCounterParams {
    fn default() -> Self {
        FlowCounterParams { bits: default_bits(), t_clear: default_t_clear(), clearing: Clearing::default() }
    }
}

impl FlowCounterParams {
    /// Checks the parameters; `path` names the table for messages.
    pub fn validate(&self, path: &str) -> ConfigResult<FlowCounter> {
        if !(2..=1 << 30).contains(&self.bits) {
            return Err(ConfigError::new(
                format!("{path}.bits"),
                format!("must be an integer from 2 to 2^30, got {}", self.bits),
            ));
        }
        if self.t_clear.0 == Dur::ZERO {
            return Err(ConfigError::new(format!("{path}.t_clear"), "must be positive, got 0s"));
        }
        Ok(FlowCounter::new(self.bits as u32, self.t_clear.0, self.clearing))
    }
}

/// The counter's state.
#[derive(Clone, Debug)]
pub struct FlowCounter {
    words: Vec<u64>,
    v_max: u32,
    /// Set bits; equals the population count of `words`.
    set: u32,
    t_clear_ns: u64,
    clearing: Clearing,
    /// Clearing is due from here on.
    last: Time,
    /// Clears earned but not yet made, in units of 1/t_clear_ns clears (exact carry-over).
    credit: u128,
    /// Next index of the sweep pointer.
    sweep_at: u32,
}

impl FlowCounter {
    /// An all-clear vector of `v_max` bits.
    pub fn new(v_max: u32, t_clear: Dur, clearing: Clearing) -> FlowCounter {
        assert!(v_max >= 2 && t_clear.0 > 0, "validated parameters");
        FlowCounter {
            words: vec![0; v_max.div_ceil(64) as usize],
            v_max,
            set: 0,
            t_clear_ns: t_clear.0,
            clearing,
            last: Time::ZERO,
            credit: 0,
            sweep_at: 0,
        }
    }

    /// Records a data packet of `flow` arriving at `now` (times must not decrease).
    pub fn observe(&mut self, flow: u32, now: Time, rng: &mut Rng) {
        self.clear_due(now, rng);
        let i = (splitmix64(flow as u64) % self.v_max as u64) as u32;
        if !self.bit(i) {
            self.words[(i / 64) as usize] |= 1 << (i % 64);
            self.set += 1;
        }
    }

    /// Set bits, `c`.
    pub fn set_bits(&self) -> u32 {
        self.set
    }

    /// The collision-corrected flow count, Eq. 6.1 (not clamped below; 0 when no bit is set).
    pub fn estimate(&self) -> f64 {
        flows_from_set_bits(self.set, self.v_max)
    }

    fn bit(&self, i: u32) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    fn clear_bit(&mut self, i: u32) {
        if self.bit(i) {
            self.words[(i / 64) as usize] &= !(1 << (i % 64));
            self.set -= 1;
        }
    }

    /// Makes the clears earned between `last` and `now`, carrying the fraction over.
    fn clear_due(&mut self, now: Time, rng: &mut Rng) {
        let elapsed = now.0.saturating_sub(self.last.0) as u128;
        self.last = self.last.max(now);
        self.credit += elapsed * self.v_max as u128;
        let due = self.credit / self.t_clear_ns as u128;
        if due == 0 {
            return;
        }
        self.credit %= self.t_clear_ns as u128;
        if due >= 32 * self.v_max as u128 {
            self.words.iter_mut().for_each(|w| *w = 0);
            self.set = 0;
            return;
        }
        for _ in 0..due as u64 {
            let j = match self.clearing {
                Clearing::Random => rng.gen_range(0..self.v_max),
                Clearing::Sweep => {
                    let j = self.sweep_at;
                    self.sweep_at = (j + 1) % self.v_max;
                    j
                }
            };
            self.clear_bit(j);
        }
    }
}

/// Eq. 6.1: the number of flows whose hashes set `c` of `v_max` bits on average, with `c`
/// clamped to `v_max − 1` (the equation is −∞ at `c = v_max`).
pub fn flows_from_set_bits(c: u32, v_max: u32) -> f64 {
    let v = v_max as f64;
    let c = (c.min(v_max - 1)) as f64;
    (1.0 - c / v).ln() / ((v - 1.0) / v).ln()
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};

    fn rng() -> Rng {
        stream(1, StreamId::Queue(0))
    }

    #[test]
    fn eq_6_1_corrects_collisions_as_the_spec_computes() {
        // Spec §2.8 [computed]: with v_max = 5000, f flows set c = v(1 − ((v−1)/v)^f) bits.
        for (f, c) in [(300.0, 291), (1000.0, 906), (1400.0, 1221), (2500.0, 1967)] {
            let expected_c = 5000.0 * (1.0 - (4999.0f64 / 5000.0).powf(f));
            assert_eq!(expected_c.round() as u32, c, "f = {f}");
            assert!((flows_from_set_bits(expected_c.round() as u32, 5000) - f).abs() / f < 0.002);
        }
        assert!(flows_from_set_bits(5000, 5000).is_finite(), "c = v_max is clamped");
        assert_eq!(flows_from_set_bits(0, 5000), 0.0);
    }

    #[test]
    fn counts_distinct_flows_with_collision_correction() {
        let mut fc = FlowCounter::new(5000, Dur::from_millis(4000), Clearing::Random);
        let mut r = rng();
        // 1000 flows, each sending 3 packets within 10 ms: almost no clearing happens.
        for k in 0..3 {
            for flow in 0..1000 {
                fc.observe(flow, Time(k * 3_000_000 + flow as u64), &mut r);
            }
        }
        let f = fc.estimate();
        assert!((f - 1000.0).abs() < 60.0, "estimate {f}, set bits {}", fc.set_bits());
        assert!(fc.set_bits() < 1000, "collisions merge some flows before correction");
    }

    fn steady_clear_fraction(clearing: Clearing) -> f64 {
        // One flow keeps the clock moving; 100 other bits were set at t = 0. After exactly
        // t_clear, sweep has cleared every bit once; random leaves about e^-1 of them.
        let mut fc = FlowCounter::new(1000, Dur::from_millis(1000), clearing);
        let mut r = rng();
        for flow in 1..=100 {
            fc.observe(flow, Time(0), &mut r);
        }
        let before = fc.set_bits();
        let mut t = 0;
        while t < 1_000_000_000 {
            t += 1_700_000; // 1.7 ms between packets: 1.7 clears each, the fraction carries over
            fc.observe(0, Time(t), &mut r);
        }
        (fc.set_bits() as f64 - 1.0).max(0.0) / before as f64
    }

    #[test]
    fn sweep_clears_every_bit_within_t_clear() {
        assert!(steady_clear_fraction(Clearing::Sweep) <= 0.01);
    }

    #[test]
    fn random_clearing_leaves_about_one_over_e() {
        let left = steady_clear_fraction(Clearing::Random);
        assert!((left - (-1.0f64).exp()).abs() < 0.12, "left {left}");
    }

    #[test]
    fn fractional_clears_are_not_lost() {
        // v_max / t_clear = 1000 clears/s, a packet every 0.58 ms: 0.58 clears per packet.
        // The sweep pointer counts the clears made: after t ns, exactly floor(t·1000/1e9).
        let mut fc = FlowCounter::new(1000, Dur::from_millis(1000), Clearing::Sweep);
        let mut r = rng();
        let mut t = 0u64;
        while t + 580_000 <= 900_000_000 {
            t += 580_000;
            fc.observe(0, Time(t), &mut r);
        }
        assert_eq!(fc.sweep_at as u64, t * 1000 / 1_000_000_000, "clears made after {t} ns");
    }

    #[test]
    fn long_silence_clears_everything() {
        let mut fc = FlowCounter::new(64, Dur::from_millis(10), Clearing::Random);
        let mut r = rng();
        for flow in 0..40 {
            fc.observe(flow, Time(0), &mut r);
        }
        fc.observe(999, Time(10_000_000_000), &mut r);
        assert_eq!(fc.set_bits(), 1);
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let bad = FlowCounterParams { bits: 0, ..FlowCounterParams::default() };
        assert_eq!(bad.validate("queue.counter").unwrap_err().path, "queue.counter.bits");
        let bad = FlowCounterParams { t_clear: Duration(Dur::ZERO), ..FlowCounterParams::default() };
        assert_eq!(bad.validate("queue.counter").unwrap_err().path, "queue.counter.t_clear");
    }
}
