//! One-call entry points: parse, validate, build, run, summarise.

use std::io::Write;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;

use crate::engine::Time;
use crate::error::ConfigError;
use crate::scenario::{parse_json_in, parse_toml_in, Scenario};
use crate::topology::{RunError, TimeSeries, World};

/// Everything a run produces.
pub struct RunOutput {
    /// The `summary.json` document (without `wall_seconds`, which depends on the machine), except
    /// its `flows` list: see `summary_json` and `flows`.
    pub summary: serde_json::Value,
    /// Each flow's summary object, serialised as it finished (compact at a million flows).
    pub flow_summaries: Vec<Box<RawValue>>,
    /// Sampled time series.
    pub series: TimeSeries,
    /// Events processed.
    pub events: u64,
}

impl RunOutput {
    /// The complete `summary.json` text: `summary` with `flows` at its key's place among the
    /// sorted keys, byte for byte what serialising the whole document as one `Value` gives.
    pub fn summary_json(&self) -> String {
        serde_json::to_string(&SummaryDocument(self)).expect("a JSON document always serialises")
    }

    /// The flows' summary objects as the text `summary.json` holds (for exact comparisons).
    pub fn flow_texts(&self) -> Vec<&str> {
        self.flow_summaries.iter().map(|f| f.get()).collect()
    }

    /// The flows' summary objects, parsed (for tests and callers that want a few fields).
    pub fn flows(&self) -> Vec<serde_json::Value> {
        self.flow_summaries.iter().map(|f| serde_json::from_str(f.get()).expect("text serde_json wrote")).collect()
    }
}

/// `summary` plus the flows, serialised without building the flows' `Value` trees.
struct SummaryDocument<'a>(&'a RunOutput);

impl Serialize for SummaryDocument<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        const FLOWS: &str = "flows";
        let out = self.0;
        let fields = out.summary.as_object().expect("the summary is a JSON object");
        let mut map = serializer.serialize_map(Some(fields.len() + 1))?;
        let mut flows_written = false;
        for (key, value) in fields {
            if !flows_written && key.as_str() > FLOWS {
                map.serialize_entry(FLOWS, &out.flow_summaries)?;
                flows_written = true;
            }
            map.serialize_entry(key, value)?;
        }
        if !flows_written {
            map.serialize_entry(FLOWS, &out.flow_summaries)?;
        }
        map.end()
    }
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
    let (summary, flow_summaries, series, pcap_result) = world.finish();
    if let Some(Err(e)) = pcap_result {
        return Err(SimulateError::Capture(e));
    }
    Ok(RunOutput { summary, flow_summaries, series, events })
}
