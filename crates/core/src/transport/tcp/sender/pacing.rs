//! The sender's pacing gate (`pacing = true`, pacing.rs): send loops stop while the pacing
//! clock holds the next segment back, and the sender asks to be woken at its release.

use super::TcpSender;
use crate::engine::Time;
use crate::packet::Packet;
use crate::transport::tcp::TcpConfig;

impl TcpSender {
    /// Whether the pacing clock lets a segment leave at `now` (always, without pacing).
    pub(super) fn pace(&mut self, now: Time) -> bool {
        self.pacer.as_deref_mut().is_none_or(|p| p.may_send(now))
    }

    /// The pacing clock's wakeup, if a send loop is waiting for it.
    pub(super) fn pacing_wakeup(&self) -> Option<Time> {
        self.pacer.as_deref().and_then(|p| p.wakeup())
    }

    /// On a timer: if the pacing clock released held-back segments, send them.
    pub(super) fn on_pacing_timer(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        if self.pacer.as_deref_mut().is_some_and(|p| p.release(now)) {
            self.integrate(now);
            self.send_allowed(cfg, now, out);
        }
    }
}
