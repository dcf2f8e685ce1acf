//! Transport endpoints: TCP, TFRC and UDP.

pub mod tcp;
pub mod tfrc;
