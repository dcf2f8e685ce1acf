//! aqmlab core: a packet-level simulator of congested links under active queue management.
//!
//! Layers: [`engine`] (time, events, random streams) → [`packet`] → [`qdisc`] (queue
//! disciplines, sans-IO) and [`transport`] (TCP, UDP endpoints, sans-IO) → [`topology`] (the world
//! that wires them together and runs the event loop) → [`metrics`]. [`scenario`] parses and
//! validates the TOML/JSON description of a run. The core is deterministic: the same scenario
//! and seed give the same results, bit for bit.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod engine;
pub mod error;
pub mod packet;
pub mod qdisc;
pub mod scenario;
pub mod transport;
pub mod metrics;
pub mod topology;
pub mod traffic;
pub mod run;
