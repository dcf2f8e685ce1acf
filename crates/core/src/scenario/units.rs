//! Quantities with explicit units, as scenario strings: rates (`"10Mbps"`), durations (`"20ms"`),
//! sizes (`"1500B"`, `"150KB"`) and queue limits (`100` packets or a size).
//!
//! Decimal prefixes follow networking usage: k = 10³, M = 10⁶, G = 10⁹ for both bits and bytes;
//! `KiB`/`MiB` are binary. A bare number is rejected where a unit is required, because "10"
//! could mean bits, bytes or packets.

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

use crate::engine::Dur;

/// A link or source rate in bits per second (> 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate(pub f64);

/// A duration, e.g. `"20ms"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Duration(pub Dur);

/// A rate in a link's `rate_schedule`: a rate such as `"4Mbps"`, or zero (`"0bps"`) for an outage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScheduledRate(pub f64);

/// A size in bytes, e.g. `"1500B"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bytes(pub u64);

/// A TCP receiver window (`max_window`): a byte size, or `"none"` for no cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowCap {
    /// At most this many payload bytes in flight.
    Bytes(u64),
    /// No receiver-window cap (the default without a profile).
    Unlimited,
}

impl<'de> Deserialize<'de> for WindowCap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor("a size string such as \"64000B\", or \"none\"", |s: &str| {
            if s == "none" {
                Ok(WindowCap::Unlimited)
            } else {
                parse_size(s).map(WindowCap::Bytes).map_err(|e| format!("{e}, or \"none\" for no receiver-window cap"))
            }
        }))
    }
}

impl Serialize for WindowCap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WindowCap::Bytes(b) => Bytes(*b).serialize(s),
            WindowCap::Unlimited => s.serialize_str("none"),
        }
    }
}

/// A shaper rate (`kind = "cake"`'s `bandwidth`): a rate such as `"5Mbps"`, or `"unlimited"`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum RateOrUnlimited {
    /// No shaping: the discipline sends whenever the link asks.
    #[default]
    Unlimited,
    /// Shape to this many bits per second.
    Rate(f64),
}

impl<'de> Deserialize<'de> for RateOrUnlimited {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor("a rate string such as \"5Mbps\", or \"unlimited\"", |s: &str| {
            if s == "unlimited" {
                Ok(RateOrUnlimited::Unlimited)
            } else {
                parse_rate(s).map(RateOrUnlimited::Rate).map_err(|e| format!("{e}, or \"unlimited\""))
            }
        }))
    }
}

impl Serialize for RateOrUnlimited {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            RateOrUnlimited::Rate(r) => Rate(*r).serialize(s),
            RateOrUnlimited::Unlimited => s.serialize_str("unlimited"),
        }
    }
}

/// A byte size that may be left to the component: `"auto"` or a size such as `"1500B"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SizeOrAuto {
    /// The component's own choice (documented where the key is).
    #[default]
    Auto,
    /// This many bytes.
    Bytes(u64),
}

impl SizeOrAuto {
    /// The size, if one was given.
    pub fn bytes(self) -> Option<u64> {
        match self {
            SizeOrAuto::Auto => None,
            SizeOrAuto::Bytes(b) => Some(b),
        }
    }
}

impl<'de> Deserialize<'de> for SizeOrAuto {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor("a size string such as \"1500B\", or \"auto\"", |s: &str| {
            if s == "auto" {
                Ok(SizeOrAuto::Auto)
            } else {
                parse_size(s).map(SizeOrAuto::Bytes).map_err(|e| format!("{e}, or \"auto\""))
            }
        }))
    }
}

impl Serialize for SizeOrAuto {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SizeOrAuto::Bytes(b) => Bytes(*b).serialize(s),
            SizeOrAuto::Auto => s.serialize_str("auto"),
        }
    }
}

/// A time threshold that may be left to the component or switched off: `"auto"`, `"none"` or a
/// duration such as `"400ms"` (`kind = "cobalt"`'s `blue_threshold` and `ce_threshold`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DurationSwitch {
    /// The component's own choice (documented where the key is).
    #[default]
    Auto,
    /// Switched off.
    Off,
    /// This long.
    At(Dur),
}

impl<'de> Deserialize<'de> for DurationSwitch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor("a duration string such as \"400ms\", \"none\" or \"auto\"", |s: &str| match s {
            "auto" => Ok(DurationSwitch::Auto),
            "none" => Ok(DurationSwitch::Off),
            _ => parse_duration(s).map(DurationSwitch::At).map_err(|e| format!("{e}, \"none\" or \"auto\"")),
        }))
    }
}

impl Serialize for DurationSwitch {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DurationSwitch::Auto => s.serialize_str("auto"),
            DurationSwitch::Off => s.serialize_str("none"),
            DurationSwitch::At(d) => Duration(*d).serialize(s),
        }
    }
}

/// A queue limit: a packet count (bare integer), a byte size (string with unit), or `"none"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// At most this many packets queued.
    Packets(u64),
    /// At most this many bytes queued.
    Bytes(u64),
    /// No hard limit (Morris 1999 ran RED with "no hard limit on the amount of buffer memory").
    Unlimited,
}

impl Limit {
    /// Whether a packet of `size` bytes fits on top of `queued_pkts` packets / `queued_bytes`.
    #[inline]
    pub fn admits(self, queued_pkts: usize, queued_bytes: u64, size: u32) -> bool {
        match self {
            Limit::Packets(n) => (queued_pkts as u64) < n,
            Limit::Bytes(b) => queued_bytes + size as u64 <= b,
            Limit::Unlimited => true,
        }
    }

    /// A capacity worth reserving up front (bounded, so huge limits cost nothing until used).
    pub fn initial_capacity(self) -> usize {
        match self {
            Limit::Packets(n) => n.min(1 << 16) as usize,
            Limit::Bytes(b) => (b / 1500).min(1 << 16) as usize,
            Limit::Unlimited => 1024,
        }
    }
}

const RATE_UNITS: &[(&str, f64)] = &[
    ("bps", 1.0), ("kbps", 1e3), ("Kbps", 1e3), ("Mbps", 1e6), ("Gbps", 1e9), ("Tbps", 1e12),
    ("b/s", 1.0), ("kb/s", 1e3), ("Kb/s", 1e3), ("Mb/s", 1e6), ("Gb/s", 1e9), ("Tb/s", 1e12),
    ("bit", 1.0), ("kbit", 1e3), ("Kbit", 1e3), ("mbit", 1e6), ("Mbit", 1e6), ("gbit", 1e9), ("Gbit", 1e9),
    ("Bps", 8.0), ("KBps", 8e3), ("kBps", 8e3), ("MBps", 8e6), ("GBps", 8e9),
    ("B/s", 8.0), ("KB/s", 8e3), ("kB/s", 8e3), ("MB/s", 8e6), ("GB/s", 8e9),
    // Binary byte rates: Parris 2001 allocates in KB/s with KB = 1024 B (spec seed000 conventions).
    ("KiB/s", 8192.0), ("KiBps", 8192.0), ("MiB/s", 8388608.0), ("MiBps", 8388608.0),
];
const DURATION_UNITS: &[(&str, f64)] =
    &[("ns", 1e-9), ("us", 1e-6), ("µs", 1e-6), ("ms", 1e-3), ("s", 1.0), ("min", 60.0)];
const SIZE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0), ("KB", 1e3), ("kB", 1e3), ("MB", 1e6), ("GB", 1e9), ("KiB", 1024.0),
    ("MiB", 1048576.0), ("GiB", 1073741824.0),
];

/// Splits `"1.5e-3 s"` into (0.0015, "s"). An exponent (`e`/`E`, optional sign, digits) belongs
/// to the number; no unit starts with `e`.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let b = s.as_bytes();
    let mut end = b.iter().position(|&c| !(c.is_ascii_digit() || c == b'.' || c == b'-' || c == b'+')).unwrap_or(b.len());
    if end < b.len() && (b[end] == b'e' || b[end] == b'E') {
        let digits = end + 1 + usize::from(matches!(b.get(end + 1), Some(b'-' | b'+')));
        if b.get(digits).is_some_and(u8::is_ascii_digit) {
            end = digits + b[digits..].iter().take_while(|c| c.is_ascii_digit()).count();
        }
    }
    let n: f64 = s[..end].parse().ok()?;
    Some((n, s[end..].trim()))
}

fn parse_with(s: &str, units: &[(&str, f64)]) -> Option<f64> {
    let (n, unit) = split_number(s)?;
    units.iter().find(|(u, _)| *u == unit).map(|(_, k)| n * k)
}

fn unit_list(units: &[(&str, f64)]) -> String {
    units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

/// Smallest rate accepted, bits per second. Far below it a single packet's transmission time
/// overflows simulated time (a `u64` of nanoseconds); at it, a 64 KB packet takes six days.
pub const MIN_RATE_BPS: f64 = 1.0;

/// Largest rate accepted, bits per second (1 Tb/s). Simulated time counts whole nanoseconds, and
/// at 1 Tb/s a 1500-byte packet is on the wire for 12 ns and a 40-byte ACK for 0.32 ns: far above
/// it every transmission time rounds to nothing. (`"1e30Tbps"` was accepted.)
pub const MAX_RATE_BPS: f64 = 1e12;

/// Parses a rate such as `"10Mbps"`, from [`MIN_RATE_BPS`] to [`MAX_RATE_BPS`]; the error says
/// what is allowed.
pub fn parse_rate(s: &str) -> Result<f64, String> {
    match parse_with(s, RATE_UNITS) {
        Some(r) if (MIN_RATE_BPS..=MAX_RATE_BPS).contains(&r) => Ok(r),
        Some(r) if r > MAX_RATE_BPS => Err(format!(
            "rate \"{s}\" is above the largest allowed, 1Tbps (simulated time has 1-ns resolution, so faster \
             links would send packets in no time)"
        )),
        Some(r) if r > 0.0 => Err(format!("rate \"{s}\" is below the smallest allowed, 1bps")),
        Some(_) => Err(format!("rate must be positive, got \"{s}\"")),
        None => Err(format!(
            "\"{s}\" is not a rate; write a number and a unit, e.g. \"10Mbps\" (units: {})",
            "bps, kbps, Mbps, Gbps, Tbps, b/s, Mb/s, Mbit, Bps, KBps, MBps, KiB/s"
        )),
    }
}

/// Longest duration accepted, seconds (about 31.7 years; simulated time is a `u64` of
/// nanoseconds, which holds about 584 years, so sums of durations cannot overflow).
pub const MAX_DURATION_S: f64 = 1.0e9;

/// Parses a non-negative duration such as `"20ms"`, at most [`MAX_DURATION_S`].
pub fn parse_duration(s: &str) -> Result<Dur, String> {
    match parse_with(s, DURATION_UNITS) {
        // A positive duration that would round to nothing is a typo, not a request for zero.
        Some(d) if d > 0.0 && d < 1e-9 => {
            Err(format!("duration \"{s}\" is below the simulator's resolution of 1ns; allowed: 0s, or 1ns and above"))
        }
        Some(d) if d >= 0.0 && d <= MAX_DURATION_S => Ok(Dur::from_secs_f64(d)),
        Some(d) if d > MAX_DURATION_S => {
            Err(format!("duration \"{s}\" is too long; allowed: at most {MAX_DURATION_S:.0}s (about 31 years)"))
        }
        Some(_) => Err(format!("duration must be non-negative, got \"{s}\"")),
        None => Err(format!(
            "\"{s}\" is not a duration; write a number and a unit, e.g. \"20ms\" (units: {})",
            unit_list(DURATION_UNITS)
        )),
    }
}

/// Largest size accepted, bytes (10^15, a petabyte): every size a scenario means is far below it,
/// and `"1e300B"` was silently 2^64 − 1 bytes.
pub const MAX_SIZE_BYTES: f64 = 1e15;

/// Parses a size such as `"1500B"` or `"150KB"`, at most [`MAX_SIZE_BYTES`].
pub fn parse_size(s: &str) -> Result<u64, String> {
    match parse_with(s, SIZE_UNITS) {
        Some(b) if b > MAX_SIZE_BYTES => {
            Err(format!("size \"{s}\" is too large; allowed: at most 1000000GB (10^15 bytes)"))
        }
        Some(b) if b >= 0.0 && b.is_finite() => Ok(b.round() as u64),
        Some(_) => Err(format!("size must be non-negative, got \"{s}\"")),
        None => Err(format!(
            "\"{s}\" is not a size; write a number and a unit, e.g. \"1500B\" (units: {})",
            unit_list(SIZE_UNITS)
        )),
    }
}

struct StrVisitor<F>(&'static str, F);

impl<'de, T, F: Fn(&str) -> Result<T, String>> Visitor<'de> for StrVisitor<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.0)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        (self.1)(v).map_err(E::custom)
    }
}

impl<'de> Deserialize<'de> for Rate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor("a rate string such as \"10Mbps\"", |s: &str| parse_rate(s).map(Rate)))
    }
}
impl<'de> Deserialize<'de> for ScheduledRate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor("a rate string such as \"4Mbps\", or \"0bps\" for an outage", |s: &str| {
            match parse_with(s, RATE_UNITS) {
                Some(r) if r == 0.0 => Ok(ScheduledRate(0.0)),
                _ => parse_rate(s).map(ScheduledRate).map_err(|e| format!("{e}, or \"0bps\" for an outage")),
            }
        }))
    }
}
impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor("a duration string such as \"20ms\"", |s: &str| {
            parse_duration(s).map(Duration)
        }))
    }
}
impl<'de> Deserialize<'de> for Bytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor("a size string such as \"1500B\"", |s: &str| parse_size(s).map(Bytes)))
    }
}

/// Deserializes `run.seed`: an integer from 0 to 2⁶⁴ − 1, with a message that says so for
/// anything else (a negative number, a fraction, a number too large for 64 bits, a string).
pub fn seed<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct SeedVisitor;
    fn bad<E: de::Error>(got: impl fmt::Display) -> E {
        E::custom(format!("must be an integer from 0 to {}, got {got}", u64::MAX))
    }
    impl<'de> Visitor<'de> for SeedVisitor {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "an integer from 0 to {}", u64::MAX)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<u64, E> {
            Ok(v)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| bad(v))
        }
        fn visit_u128<E: de::Error>(self, v: u128) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| bad(v))
        }
        fn visit_i128<E: de::Error>(self, v: i128) -> Result<u64, E> {
            u64::try_from(v).map_err(|_| bad(v))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<u64, E> {
            // JSON numbers beyond u64 arrive as floats; print them without an exponent.
            Err(bad(if v.fract() == 0.0 && v.abs() < 1e300 { format!("{v:.0} (as a float)") } else { v.to_string() }))
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<u64, E> {
            Err(bad(format!("\"{v}\"")))
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<u64, E> {
            Err(bad(v))
        }
    }
    d.deserialize_any(SeedVisitor).map(Some)
}

/// Deserializes an integer key whose allowed range is `LO..=HI`: any other integer, including one
/// the field's type cannot hold (a negative one for an unsigned key), is "must be in LO..=HI, got
/// V", as [`crate::error::check_range`] says it, and anything else "expected an integer in
/// LO..=HI". Use as `#[serde(deserialize_with = "int_in::<_, _, 1, 65536>")]`.
pub fn int_in<'de, D, T, const LO: i64, const HI: i64>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64>,
{
    d.deserialize_any(IntIn::<T, LO, HI>(std::marker::PhantomData))
}

/// [`int_in`] for an optional key.
pub fn opt_int_in<'de, D, T, const LO: i64, const HI: i64>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<i64>,
{
    int_in::<D, T, LO, HI>(d).map(Some)
}

struct IntIn<T, const LO: i64, const HI: i64>(std::marker::PhantomData<T>);

impl<'de, T: TryFrom<i64>, const LO: i64, const HI: i64> Visitor<'de> for IntIn<T, LO, HI> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "an integer in {LO}..={HI}")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        if (LO..=HI).contains(&v) {
            T::try_from(v).map_err(|_| E::custom(format!("must be in {LO}..={HI}, got {v}")))
        } else {
            Err(E::custom(format!("must be in {LO}..={HI}, got {v}")))
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        match i64::try_from(v) {
            Ok(v) => self.visit_i64(v),
            Err(_) => Err(E::custom(format!("must be in {LO}..={HI}, got {v}"))),
        }
    }
}

struct LimitVisitor;
impl<'de> Visitor<'de> for LimitVisitor {
    type Value = Limit;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a packet count (integer), a size string such as \"150KB\", or \"none\"")
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Limit, E> {
        if v <= 0 {
            return Err(E::custom(format!("limit must be a positive packet count, got {v}")));
        }
        Ok(Limit::Packets(v as u64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Limit, E> {
        self.visit_i64(v.min(i64::MAX as u64) as i64)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Limit, E> {
        if v == "none" {
            return Ok(Limit::Unlimited);
        }
        match parse_size(v) {
            Ok(0) => Err(E::custom("limit must be positive, got 0 bytes")),
            Ok(b) => Ok(Limit::Bytes(b)),
            Err(e) => Err(E::custom(e)),
        }
    }
}
impl<'de> Deserialize<'de> for Limit {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LimitVisitor)
    }
}

// Serialisation echoes canonical strings, so the filled-in scenario in summary.json parses again.
impl Serialize for Rate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.fract() == 0.0 && self.0 < 1e18 {
            let units = [(1_000_000_000, "Gbps"), (1_000_000, "Mbps"), (1_000, "kbps"), (1, "bps")];
            s.serialize_str(&exact_with_unit(self.0 as u64, &units))
        } else {
            s.serialize_str(&format!("{}bps", self.0))
        }
    }
}
impl Serialize for ScheduledRate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Rate(self.0).serialize(s)
    }
}
impl fmt::Display for Duration {
    /// As written back in `summary.json`: the largest unit that keeps it exact, e.g. "1500ms".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&exact_with_unit(self.0 .0, DURATION_DISPLAY_UNITS))
    }
}
const DURATION_DISPLAY_UNITS: &[(u64, &str)] = &[(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us"), (1, "ns")];
impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// Writes `value` (in the smallest unit) with the largest unit that divides it exactly, so the
/// echoed scenario reads like the input ("200ms", not "200000000ns") and parses back unchanged.
fn exact_with_unit(value: u64, units: &[(u64, &str)]) -> String {
    let (div, unit) = units.iter().find(|(d, _)| value % d == 0 && value != 0).unwrap_or(&units[units.len() - 1]);
    format!("{}{unit}", value / div)
}
impl Serialize for Bytes {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{}B", self.0))
    }
}
impl Serialize for Limit {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Limit::Packets(n) => s.serialize_u64(*n),
            Limit::Bytes(b) => s.serialize_str(&format!("{b}B")),
            Limit::Unlimited => s.serialize_str("none"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_uses_the_largest_exact_unit_and_parses_back() {
        let echo = |d: Duration| serde_json::to_string(&d).unwrap();
        assert_eq!(echo(Duration(Dur::from_millis(200))), "\"200ms\"");
        assert_eq!(echo(Duration(Dur::from_millis(60_000))), "\"60s\"");
        assert_eq!(echo(Duration(Dur(1_500))), "\"1500ns\"");
        assert_eq!(echo(Duration(Dur(0))), "\"0ns\"");
        assert_eq!(serde_json::to_string(&Rate(10e6)).unwrap(), "\"10Mbps\"");
        assert_eq!(serde_json::to_string(&Rate(1.5e9)).unwrap(), "\"1500Mbps\"");
        for text in ["1500ns", "200ms", "3us", "60s"] {
            let d = parse_duration(text).unwrap();
            assert_eq!(serde_json::to_string(&Duration(d)).unwrap(), format!("\"{text}\""));
        }
    }

    #[test]
    fn rates_parse_with_decimal_prefixes() {
        assert_eq!(parse_rate("10Mbps"), Ok(10e6));
        assert_eq!(parse_rate("1.5 Gb/s"), Ok(1.5e9));
        assert_eq!(parse_rate("100kbit"), Ok(1e5));
        assert_eq!(parse_rate("1MBps"), Ok(8e6));
        assert_eq!(parse_rate("150KiB/s"), Ok(150.0 * 1024.0 * 8.0));
    }

    #[test]
    fn misspelt_rate_unit_is_rejected_with_the_allowed_units() {
        let e = parse_rate("10Mbs").unwrap_err();
        assert!(e.contains("\"10Mbs\" is not a rate") && e.contains("Mbps"), "{e}");
        assert!(parse_rate("10").is_err());
        assert!(parse_rate("0Mbps").unwrap_err().contains("positive"));
        assert_eq!(parse_rate("1e-9bps").unwrap_err(), "rate \"1e-9bps\" is below the smallest allowed, 1bps");
        assert_eq!(parse_rate("1bps"), Ok(1.0));
        assert!(parse_rate("-5Mbps").unwrap_err().contains("positive"));
    }

    #[test]
    fn durations_and_sizes_parse() {
        assert_eq!(parse_duration("20ms"), Ok(Dur(20_000_000)));
        assert_eq!(parse_duration("1ns"), Ok(Dur(1)));
        let e = parse_duration("1e-12s").unwrap_err();
        assert!(e.contains("\"1e-12s\" is below the simulator's resolution of 1ns"), "{e}");
        assert_eq!(parse_duration("1.5s"), Ok(Dur(1_500_000_000)));
        assert_eq!(parse_duration("250us"), Ok(Dur(250_000)));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert_eq!(parse_size("150KB"), Ok(150_000));
        assert_eq!(parse_size("64KiB"), Ok(65_536));
        assert!(parse_duration("20").is_err());
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn exponent_notation_is_a_number() {
        assert_eq!(parse_duration("1e-3s"), Ok(Dur(1_000_000)));
        assert_eq!(parse_duration("2.5E2ms"), Ok(Dur(250_000_000)));
        assert_eq!(parse_rate("1e7bps"), Ok(1e7));
        assert_eq!(parse_size("1.5e3B"), Ok(1500));
        assert!(parse_duration("1e-s").unwrap_err().contains("not a duration"));
    }

    #[test]
    fn huge_duration_says_the_limit_not_negative() {
        let e = parse_duration("1e10s").unwrap_err();
        assert!(e.contains("\"1e10s\" is too long") && e.contains("1000000000s"), "{e}");
        let e = parse_duration("100000000000000000000min").unwrap_err();
        assert!(e.contains("too long"), "{e}");
        assert!(parse_duration("inf s").is_err());
        assert_eq!(parse_duration("1000000000s"), Ok(Dur(1_000_000_000_000_000_000)));
    }
}
