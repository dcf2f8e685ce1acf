//! Scenario schema, unit parsing and validation.

pub mod media;
pub mod parse;
pub mod schema;
pub mod units;
pub mod validate;

pub use parse::{parse_json, parse_toml};
pub use validate::{FlowKind, FlowSpec, HttpSlot, LinkSpec, QueueSpec, Scenario, QDISC_KINDS};
