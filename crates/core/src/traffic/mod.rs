//! Traffic sources that are not TCP's own logic: UDP sources and TCP transfer plans.

pub mod transfers;
pub mod udp;
