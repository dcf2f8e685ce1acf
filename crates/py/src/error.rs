//! The one mapping from core errors to Python exceptions. The exception classes live in
//! `aqmlab/exceptions.py` (so `ScenarioError` can derive from both `AqmlabError` and
//! `ValueError`); this module raises them.

use aqmlab_core::error::ConfigError;
use pyo3::prelude::*;

fn raise(py: Python<'_>, class: &str, msg: String) -> PyErr {
    match py.import("aqmlab.exceptions").and_then(|m| m.getattr(class)) {
        Ok(cls) => match cls.call1((msg,)) {
            Ok(inst) => PyErr::from_value(inst),
            Err(e) => e,
        },
        Err(e) => e,
    }
}

/// A validation error; the message is the one-line `path (line N): what is wrong`.
pub fn config(py: Python<'_>, e: ConfigError) -> PyErr {
    raise(py, "ScenarioError", e.to_string())
}

/// A failure during a run.
pub fn simulation(py: Python<'_>, msg: String) -> PyErr {
    raise(py, "SimulationError", msg)
}
