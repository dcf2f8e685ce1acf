//! One-call entry points: parse, validate, build, run, summarise.

use std::io::Write;

use crate::engine::Time;
use crate::error::ConfigError;
use crate::scenario::{parse_json_in, parse_toml_in, Scenario};
use crate::topology::{RunError, TimeSeries, World};

/// Everything a run produces.
pub struct RunOutput {
    /// The `summary.json` document (without `wall_seconds`, which depends on the machine).
    pub summary: serde_json::Value,
    /// Sampled time series.
    pub series: TimeSeries,
    /// Events processed.
    pub events: u64,
}

/// Scenario text format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A TOML scenario file.
    Toml,
    /// JSON with the same keys (the Python API's dicts).
    Json,
}

/// Parses and validates scenario text; files it names (a link's `trace`) are read relative to
/// `base_dir` when given (the scenario file's directory), else to the working directory.
pub fn load(text: &str, format: Format, base_dir: Option<&std::path::Path>) -> Result<Scenario, ConfigError> {
    match format {
        Format::Toml => parse_toml_in(text, base_dir),
        Format::Json => parse_json_in(text, base_dir),
    }
}

/// Why a run produced no result.
#[derive(Debug)]
pub enum SimulateError {
    /// Stopped by the progress callback.
    Interrupted,
    /// Writing the packet capture failed.
    Capture(std::io::Error),
}

/// Runs a validated scenario. `progress(now)` is polled every 65 536 events; `false` stops.
pub fn simulate(
    sc: &Scenario,
    pcap: Option<Box<dyn Write + Send>>,
    progress: impl FnMut(Time) -> bool,
) -> Result<RunOutput, SimulateError> {
    let mut world = World::new(sc);
    if let Some(w) = pcap {
        world.capture_to(w);
    }
    world.run(progress).map_err(|RunError::Interrupted| SimulateError::Interrupted)?;
    let events = world.events_processed();
    let (summary, series, pcap_result) = world.finish();
    if let Some(Err(e)) = pcap_result {
        return Err(SimulateError::Capture(e));
    }
    Ok(RunOutput { summary, series, events })
}
