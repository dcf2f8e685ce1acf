//! Traffic sources that are not TCP's own logic: UDP sources, multimedia sources and TCP
//! transfer plans.

pub mod activity;
pub mod empirical;
pub mod http;
pub mod mah;
pub mod mpeg;
pub mod proshare;
pub mod transfers;
pub mod udp;
