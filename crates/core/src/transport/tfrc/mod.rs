//! TFRC, TCP-Friendly Rate Control (RFC 5348; Floyd, Handley, Padhye & Widmer, SIGCOMM 2000),
//! as a sans-IO sender and receiver: the transport of Cho 2002's E6 (§4.3, spec
//! `seed003-bmre.md` §2.15; "all parameters from [13]").
//!
//! * [`equation`]: the throughput equation (RFC 5348 §3.1).
//! * [`loss_history`]: the receiver's loss events and loss intervals (§5).
//! * [`sender`]: rate, RTT and RTO estimation, slow start, the nofeedback timer (§4).
//! * [`receiver`]: receive rate, loss event rate `p`, feedback once per RTT (§6).
//!
//! # Wire format (packed into [`Packet`](crate::packet::Packet), which stays 64 bytes)
//!
//! * **Data** (`PacketKind::TfrcData`): `seq` = sequence number (one per packet), `sent_at` = the
//!   send timestamp, `ack` = the sender's RTT estimate `R` in microseconds (0 before the first
//!   sample), `size` = `s` (the configured packet size on the wire), `payload` = `s − 28`.
//! * **Feedback** (`PacketKind::TfrcFeedback`, [`FEEDBACK_BYTES`] on the wire): `sent_at` =
//!   `t_recvdata` (the timestamp of the last data packet received, echoed), `sack[0].start` =
//!   `t_delay` in microseconds, `seq` = `X_recv` in bytes/s, `ack` = `p` as `f32` bits
//!   ([`f32::to_bits`]), `sack[0].end` = 1 if the report follows a new loss event, else 0.
//!
//! # Choices (each also in the file that makes it)
//!
//! * Loss is detected at the first later packet (no reordering in the simulator, so RFC 5348's
//!   NDUPACK = 3 would only delay detection by two packets).
//! * History discounting (§5.5, optional in the RFC) is implemented in [`loss_history`] and off by
//!   default; the flow key `history_discounting = true` turns it on (ns-2's TFRC sink, which Cho
//!   2002 ran, has `discount_ 1`). Oscillation prevention (§4.5, optional) is not implemented.
//!   The sender always has data unless the scenario gives it an `app_rate`
//!   (then it sends at `min(X, app rate)`, RFC 5348's data-limited sender).
//! * Initial rate: one packet per second until the first feedback, then `W_init/R` with
//!   `W_init = min(4s, max(2s, 4380))` (§4.2, RFC 3390).

pub mod equation;
pub mod loss_history;
pub mod receiver;
pub mod sender;

pub use receiver::TfrcReceiver;
pub use sender::TfrcSender;

/// Wire size of a feedback packet (IP 20 + UDP 8 + 16 bytes of report), bytes.
pub const FEEDBACK_BYTES: u32 = 44;
/// Header bytes of a data packet (IP 20 + UDP 8): its payload is the packet size less these.
pub const HEADER_BYTES: u32 = 28;
/// `t_mbi`, the maximum back-off interval (§4.3): the rate never goes below `s / t_mbi`.
pub const T_MBI_S: f64 = 64.0;

#[cfg(test)]
mod tests;
