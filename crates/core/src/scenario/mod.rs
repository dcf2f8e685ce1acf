//! Scenario schema, unit parsing and validation.

pub mod media;
pub mod parse;
pub mod schema;
mod strict;
pub mod units;
pub mod validate;

pub use parse::{parse_json, parse_json_in, parse_toml, parse_toml_in};
pub use validate::{FlowKind, FlowSpec, HttpSlot, LinkSpec, QueueSpec, Scenario, QDISC_KINDS};
