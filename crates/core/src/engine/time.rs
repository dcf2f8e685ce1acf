//! Simulated time: integer nanoseconds.
//!
//! `Time` is an instant since the start of the run, `Dur` a span. Both are `u64` nanoseconds, so a
//! run can last 584 years without overflow and equal-time events compare exactly. Conversions to
//! `f64` seconds happen only at the edges (scenario parsing, metrics output).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant in simulated time, nanoseconds since the run started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Dur(pub u64);

impl Time {
    /// The start of the run.
    pub const ZERO: Time = Time(0);
    /// Later than any event a run can schedule.
    pub const NEVER: Time = Time(u64::MAX);

    /// Seconds as `f64` (for output only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// The span since `earlier`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Dur {
        Dur(self.0.saturating_sub(earlier.0))
    }
    /// Instant from seconds (rounded to the nearest nanosecond).
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * 1e9).round() as u64)
    }
}

impl Dur {
    /// No time.
    pub const ZERO: Dur = Dur(0);

    /// Span from seconds (rounded to the nearest nanosecond).
    pub fn from_secs_f64(s: f64) -> Dur {
        Dur((s * 1e9).round() as u64)
    }
    /// Span of `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Dur {
        Dur(ms * 1_000_000)
    }
    /// Span of `us` microseconds.
    pub const fn from_micros(us: u64) -> Dur {
        Dur(us * 1_000)
    }
    /// Seconds as `f64`.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time to serialise `bytes` onto a link of `rate_bps`, rounded up to whole nanoseconds.
    pub fn transmission(bytes: u32, rate_bps: f64) -> Dur {
        Dur(((bytes as f64 * 8.0e9) / rate_bps).ceil() as u64)
    }
}

impl Add<Dur> for Time {
    type Output = Time;
    fn add(self, d: Dur) -> Time {
        Time(self.0.checked_add(d.0).expect("simulated time overflow"))
    }
}
impl AddAssign<Dur> for Time {
    fn add_assign(&mut self, d: Dur) {
        *self = *self + d;
    }
}
impl Sub<Time> for Time {
    type Output = Dur;
    fn sub(self, t: Time) -> Dur {
        debug_assert!(self >= t, "time ran backwards: {self} - {t}");
        Dur(self.0 - t.0)
    }
}
impl Add for Dur {
    type Output = Dur;
    fn add(self, d: Dur) -> Dur {
        Dur(self.0 + d.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmission_of_1500_bytes_at_10mbps_is_1_2ms() {
        assert_eq!(Dur::transmission(1500, 10e6), Dur(1_200_000));
    }

    #[test]
    fn transmission_rounds_up_partial_nanoseconds() {
        // 1 byte at 3 Gb/s = 2.666.. ns -> 3 ns
        assert_eq!(Dur::transmission(1, 3e9), Dur(3));
    }
}
