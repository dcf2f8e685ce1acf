//! Topologies: the dumbbell today; the world type owns the event loop.

pub mod dumbbell;

pub use dumbbell::{RunError, TimeSeries, World};
