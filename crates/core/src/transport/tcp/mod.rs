//! TCP: sender variants (Tahoe, Reno, NewReno, SACK) with Reno, CUBIC (RFC 9438, ns-3's, Linux's), DCTCP or LEDBAT congestion control,
//! classic or PRR recovery, limited transmit; receiver; timers — sans-IO.
//!
//! Contract with the engine (the same for sender and receiver):
//! * every entry point takes `&TcpConfig`, `now`, and an output buffer `out` to which it appends
//!   the packets it transmits at `now` (the engine serialises them onto the access link);
//! * `next_wakeup()` is the earliest time the endpoint wants `on_timer` called; the engine may
//!   call `on_timer` late or spuriously (the endpoint then does nothing that is not due).

mod bbr;
mod config;
mod congestion;
mod cubic_linux;
mod cubic_ns3;
mod ledbat;
mod profile;
mod pacing;
mod prr;
mod rack_tlp;
mod rate_sample;
mod receiver;
mod reno_sack;
mod rtt;
mod scoreboard;
mod sender;
mod vegas_base_rtt;
#[cfg(test)]
mod bbr_tests;
#[cfg(test)]
mod tests;

pub use ledbat::{LedbatConfig, LedbatVariant};
pub use config::{CongestionControl, DelayedAck, EcnStyle, FastRetransmitGuard, Recovery, RtoFormula, RttHintSource, TcpConfig, TcpVariant};
pub use profile::TcpProfile;
pub use receiver::{TcpReceiver, TcpReceiverStats};
pub use rtt::RttEstimator;
pub use sender::{TcpSender, TcpSenderStats};
