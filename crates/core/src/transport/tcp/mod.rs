//! TCP: sender variants (Tahoe, Reno, NewReno, SACK), receiver, timers — sans-IO.
//!
//! Contract with the engine (the same for sender and receiver):
//! * every entry point takes `&TcpConfig`, `now`, and an output buffer `out` to which it appends
//!   the packets it transmits at `now` (the engine serialises them onto the access link);
//! * `next_wakeup()` is the earliest time the endpoint wants `on_timer` called; the engine may
//!   call `on_timer` late or spuriously (the endpoint then does nothing that is not due).

mod config;
mod receiver;
mod rtt;
mod scoreboard;
mod sender;
#[cfg(test)]
mod tests;

pub use config::{DelayedAck, TcpConfig, TcpVariant};
pub use receiver::{TcpReceiver, TcpReceiverStats};
pub use rtt::RttEstimator;
pub use sender::{TcpSender, TcpSenderStats};
