//! Scenario schema, unit parsing and validation.

pub mod units;
