//! Python bindings of aqmlab: argument conversion, GIL release and error mapping only.
//! No algorithm, default or validation lives here.

mod error;
mod live;

use std::time::{Duration, Instant};
use std::path::PathBuf;

use aqmlab_core::run::{self, Format, SimulateError};
use pyo3::prelude::*;
use pyo3::types::PyDict;


fn format_of(name: &str) -> PyResult<Format> {
    match name {
        "toml" => Ok(Format::Toml),
        "json" => Ok(Format::Json),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "format must be \"toml\" or \"json\", got \"{other}\""
        ))),
    }
}

/// Validates scenario text; returns the scenario with defaults filled in, as JSON text. Files the
/// scenario names are read relative to `base_dir` (its file's directory), else the working one.
#[pyfunction]
#[pyo3(signature = (text, format, base_dir=None))]
fn validate(py: Python<'_>, text: &str, format: &str, base_dir: Option<PathBuf>) -> PyResult<String> {
    let sc = run::load(text, format_of(format)?, base_dir.as_deref()).map_err(|e| error::config(py, e))?;
    Ok(sc.echo.to_string())
}

/// Runs scenario text. Returns (summary JSON text, time-series dict). `progress(sim_seconds)`
/// is called about every 0.2 s of wall time. The GIL is released while simulating and Ctrl-C
/// stops the run with KeyboardInterrupt.
#[pyfunction]
#[pyo3(signature = (text, format, pcap_path=None, progress=None, base_dir=None))]
fn run_scenario(
    py: Python<'_>,
    text: &str,
    format: &str,
    pcap_path: Option<String>,
    progress: Option<PyObject>,
    base_dir: Option<PathBuf>,
) -> PyResult<(String, Py<PyDict>)> {
    let sc = run::load(text, format_of(format)?, base_dir.as_deref()).map_err(|e| error::config(py, e))?;
    let pcap: Option<Box<dyn std::io::Write + Send>> = match &pcap_path {
        Some(p) => Some(Box::new(std::io::BufWriter::new(std::fs::File::create(p)?))),
        None => None,
    };
    let started = Instant::now();
    let mut last_poll = Instant::now();
    let mut py_err: Option<PyErr> = None;
    let result = py.allow_threads(|| {
        run::simulate(&sc, pcap, |now| {
            if last_poll.elapsed() < Duration::from_millis(200) {
                return true;
            }
            last_poll = Instant::now();
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    py_err = Some(e);
                    return false;
                }
                if let Some(cb) = &progress {
                    if let Err(e) = cb.call1(py, (now.as_secs_f64(),)) {
                        py_err = Some(e);
                        return false;
                    }
                }
                true
            })
        })
    });
    let wall = started.elapsed().as_secs_f64();
    let mut out = match result {
        Ok(o) => o,
        Err(SimulateError::Interrupted) => {
            return Err(py_err.unwrap_or_else(|| error::simulation(py, "run interrupted".into())))
        }
        Err(SimulateError::Capture(e)) => return Err(error::simulation(py, format!("writing the pcap failed: {e}"))),
    };
    out.summary["wall_seconds"] = wall.into();
    let summary = out.summary_json();
    let s = out.series;
    let d = PyDict::new(py);
    d.set_item("time_s", s.time_s)?;
    d.set_item("queue_pkts", s.queue_pkts)?;
    d.set_item("queue_bytes", s.queue_bytes)?;
    d.set_item("queue_avg", s.queue_avg)?;
    d.set_item("reverse_queue_pkts", s.reverse_queue_pkts)?;
    d.set_item("capacity_bps", s.capacity_bps)?;
    d.set_item("reverse_capacity_bps", s.reverse_capacity_bps)?;
    d.set_item("flow_goodput_bps", s.flow_goodput_bps)?;
    d.set_item("flow_offered_bps", s.flow_offered_bps)?;
    d.set_item("flow_drops", s.flow_drops)?;
    d.set_item("flow_actual_fps", s.flow_actual_fps)?;
    d.set_item("flow_playable_fps", s.flow_playable_fps)?;
    d.set_item("flow_cwnd_segments", s.flow_cwnd_segments)?;
    d.set_item("flow_srtt_s", s.flow_srtt_s)?;
    d.set_item("flow_estimate", s.flow_estimate)?;
    d.set_item("max_p", s.max_p)?;
    d.set_item("white_r_average_ms", s.white_r_average_ms)?;
    d.set_item("white_r_formula_ms", s.white_r_formula_ms)?;
    d.set_item("bmre", s.bmre)?;
    d.set_item("flow_qdisc_beta", s.flow_qdisc_beta)?;
    d.set_item("flow_qdisc_rate_bps", s.flow_qdisc_rate_bps)?;
    d.set_item("class_delay_s", s.class_delay_s)?;
    d.set_item("class_len_pkts", s.class_len_pkts)?;
    d.set_item("class_average", s.class_average)?;
    let t = &s.transfers;
    let transfers = PyDict::new(py);
    transfers.set_item("flow", t.iter().map(|r| r.flow).collect::<Vec<_>>())?;
    transfers.set_item("start_s", t.iter().map(|r| r.start.as_secs_f64()).collect::<Vec<_>>())?;
    transfers.set_item("end_s", t.iter().map(|r| r.end.as_secs_f64()).collect::<Vec<_>>())?;
    transfers.set_item("segments", t.iter().map(|r| r.segments).collect::<Vec<_>>())?;
    transfers.set_item("timeouts", t.iter().map(|r| r.timeouts).collect::<Vec<_>>())?;
    d.set_item("transfers", transfers)?;
    let p = &s.packet_delays;
    let delays = PyDict::new(py);
    delays.set_item("time_s", p.time_s.clone())?;
    delays.set_item("flow", p.flow.clone())?;
    delays.set_item("class", p.class.iter().map(|&c| u32::from(c)).collect::<Vec<_>>())?; // a list, not bytes
    delays.set_item("delay_s", p.delay_s.clone())?;
    d.set_item("packet_delays", delays)?;
    Ok((summary, d.unbind()))
}

/// The queue disciplines with their parameters, defaults and sources, as JSON text.
#[pyfunction]
fn qdiscs() -> String {
    aqmlab_core::qdisc::catalog().to_string()
}

/// Version of the core.
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// A digest of the Rust sources this extension was built from (build.rs): equal on any machine
/// for the same sources, so it says whether two runs came from the same simulator.
#[pyfunction]
fn source_digest() -> &'static str {
    env!("AQMLAB_SOURCE_DIGEST")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(qdiscs, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(source_digest, m)?)?;
    m.add_class::<live::LiveRouter>()?;
    m.add_function(wrap_pyfunction!(live::monotonic_ns, m)?)?;
    Ok(())
}
