//! Topologies: the dumbbell today; the world type owns the event loop.

pub mod app_latency;
pub mod delivery_trace;
pub mod dumbbell;
pub mod edge_rtt;
pub mod link_rate;
pub mod rate_schedule;

pub use dumbbell::{RunError, TimeSeries, World};
