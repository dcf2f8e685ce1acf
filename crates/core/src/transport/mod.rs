//! Transport endpoints: TCP and UDP.

pub mod tcp;
