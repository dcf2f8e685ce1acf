//! Traffic sources that are not transports by themselves.

pub mod udp;
