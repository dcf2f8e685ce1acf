//! Python binding of the live router (`aqmlab.live`): argument conversion, GIL release and error
//! mapping only.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use aqmlab_core::run;
use aqmlab_live::LiveRouter as Router;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::{error, format_of};

/// A router for scenario text: `flow_plan()` says what the traffic must play, `open()` makes the
/// two TUN devices (they vanish when the router is dropped), `run()` forwards.
#[pyclass(frozen)]
pub struct LiveRouter {
    router: Mutex<Option<Router>>,
    stop: Arc<AtomicBool>,
}

#[pymethods]
impl LiveRouter {
    #[new]
    fn new(py: Python<'_>, text: &str, format: &str, base_port: u16) -> PyResult<Self> {
        let sc = run::load(text, format_of(format)?, None).map_err(|e| error::config(py, e))?;
        Ok(LiveRouter { router: Mutex::new(Some(Router::new(sc, base_port))), stop: Arc::new(AtomicBool::new(false)) })
    }

    /// Creates the router's two TUN devices (needs root); they vanish with the router. With
    /// `pcap_path`, the forward bottleneck's packets (headers) are captured there during `run`.
    #[pyo3(signature = (senders_tun, receivers_tun, pcap_path=None))]
    fn open(&self, py: Python<'_>, senders_tun: &str, receivers_tun: &str, pcap_path: Option<String>) -> PyResult<()> {
        let mut guard = self.router.lock().map_err(|_| error::simulation(py, "live router: poisoned".into()))?;
        let router = guard.as_mut().ok_or_else(|| error::simulation(py, "live router: already run".into()))?;
        if let Some(p) = pcap_path {
            router.capture_to(std::path::Path::new(&p));
        }
        router.open(senders_tun, receivers_tun).map_err(|e| error::simulation(py, format!("live router: {e}")))
    }

    /// Each scenario flow as the traffic programs play it (JSON text; see `flow_plan`).
    fn flow_plan(&self, py: Python<'_>) -> PyResult<String> {
        let guard = self.router.lock().map_err(|_| error::simulation(py, "live router: poisoned".into()))?;
        let router = guard.as_ref().ok_or_else(|| error::simulation(py, "live router: already run".into()))?;
        Ok(router.flow_plan().to_string())
    }

    /// Forwards packets from `epoch_ns` (CLOCK_MONOTONIC, `time.monotonic_ns()`) until the
    /// scenario's duration or `stop()`. Returns (summary JSON text, series dict). Releases the GIL.
    fn run(&self, py: Python<'_>, epoch_ns: u64) -> PyResult<(String, Py<PyDict>)> {
        let router = self.router.lock().map_err(|_| error::simulation(py, "live router: poisoned".into()))?.take();
        let Some(router) = router else {
            return Err(error::simulation(py, "live router: already run (create a new one per run)".into()));
        };
        let stop = Arc::clone(&self.stop);
        let report = py
            .allow_threads(move || router.run(epoch_ns, &stop))
            .map_err(|e| error::simulation(py, format!("live router: {e}")))?;
        let d = PyDict::new(py);
        d.set_item("time_s", report.time_s)?;
        d.set_item("queue_pkts", report.forward.queue_pkts)?;
        d.set_item("queue_bytes", report.forward.queue_bytes)?;
        d.set_item("queue_avg", report.forward.queue_avg)?;
        d.set_item("reverse_queue_pkts", report.reverse.queue_pkts)?;
        d.set_item("flow_throughput_bps", report.forward.flow_throughput_bps)?;
        Ok((report.summary.to_string(), d.unbind()))
    }

    /// Asks a running `run` to finish now (its summary says `stopped_early`).
    fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// CLOCK_MONOTONIC in nanoseconds, the router's clock.
#[pyfunction]
pub fn monotonic_ns() -> u64 {
    aqmlab_live::monotonic_ns()
}
