//! Errors of the core. The event loop itself returns none: bad input is caught when a scenario
//! is validated, and a panic during a run is a bug.

use std::fmt;

/// A scenario value that is missing, malformed or impossible.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    /// Dotted key path, e.g. `queue.max_th` or `flows[1].rate`.
    pub path: String,
    /// 1-based line in the scenario file, when known.
    pub line: Option<usize>,
    /// What is wrong and what is allowed, lowercase.
    pub message: String,
}

impl ConfigError {
    /// An error at `path` saying `message`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError { path: path.into(), line: None, message: message.into() }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.path.is_empty(), self.line) {
            (true, Some(l)) => write!(f, "line {l}: {}", self.message),
            (true, None) => write!(f, "{}", self.message),
            (false, Some(l)) => write!(f, "{} (line {l}): {}", self.path, self.message),
            (false, None) => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Shorthand for validation results.
pub type ConfigResult<T> = Result<T, ConfigError>;

/// Joins a parent key path and a child key.
pub fn join(parent: &str, key: &str) -> String {
    if parent.is_empty() { key.to_string() } else { format!("{parent}.{key}") }
}

/// Largest mean packet size a discipline takes (`mean_packet_size`, `mean_pkt_size`): the largest
/// IP packet (a 16-bit total length). `"1e300B"` was accepted and made every byte-mode average zero.
pub const MAX_MEAN_PACKET_BYTES: u64 = 65535;

/// The message for a mean packet size outside `1..=MAX_MEAN_PACKET_BYTES` bytes.
pub fn mean_packet_size_error(path: String, bytes: u64) -> ConfigError {
    ConfigError::new(path, format!("must be in 1B..={MAX_MEAN_PACKET_BYTES}B (the largest IP packet), got {bytes}B"))
}

/// Checks that the integer at `parent.key` lies in `lo..=hi`, naming the range when it does not.
pub fn check_range(parent: &str, key: &str, value: u64, lo: u64, hi: u64) -> ConfigResult<()> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::new(join(parent, key), format!("must be in {lo}..={hi}, got {value}")))
    }
}
