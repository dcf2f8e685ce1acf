//! CoDel's control loop (Nichols, Jacobson, McGregor & Iyengar, RFC 8289), on one packet FIFO:
//! the state machine that `codel.rs` runs on the whole queue and `fq_codel.rs` on each flow
//! queue. It acts at dequeue, on the sojourn time of the packet leaving.
//!
//! RFC 8289 §5 (pseudocode `dodequeue`/`dequeue`): once the sojourn time has stayed at or above
//! `target` for `interval` (and more than one packet's worth of bytes waits), enter the dropping
//! state: drop the head, then drop again at `drop_next`, each time `interval/√count` after the
//! previous one, until a packet leaves below `target`. On re-entry soon after leaving (less than
//! 16 intervals since the last scheduled drop) the count restarts from what the last episode
//! added (`count − lastcount`), the Linux rule the RFC adopts.
//!
//! `CodelVariant::Ns3` is ns-3 3.44's `CoDelQueueDisc` (a port of Linux's `codel.h`), which
//! differs in three details, each small: 1/√count by Linux's one-Newton-step fixed point
//! (`NewtonStep`, `ControlLaw`) instead of exactly; "few bytes queued" is `bytes < min_bytes`
//! (1500 B) instead of `bytes ≤ largest packet seen`; the interval has passed when `now` is
//! strictly after `first_above_time` instead of at it; and an ECN mark reschedules from `now`.
//! ns-3 measures time in 1024-ns units; this works in nanoseconds.

use serde::{Deserialize, Serialize};

use super::fifo::Fifo;
use super::{DropBuf, DropKind, QdiscStats};
use crate::engine::{Dur, Time};
use crate::packet::{Ecn, Packet};

/// Which definition of CoDel's details to follow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CodelVariant {
    /// RFC 8289 §5's pseudocode (exact 1/√count; few bytes = at most the largest packet seen).
    #[default]
    Rfc8289,
    /// ns-3 3.44's `CoDelQueueDisc` / Linux `codel.h` (fixed-point 1/√count, `bytes < min_bytes`).
    Ns3,
}

/// The constants of one CoDel instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelConfig {
    /// Acceptable standing queue delay (RFC 8289 TARGET, 5 ms).
    pub target: Dur,
    /// Window over which the delay must stay above target before dropping (INTERVAL, 100 ms).
    pub interval: Dur,
    /// Below this many bytes queued nothing is dropped; `None`: the largest packet seen (RFC).
    pub min_bytes: Option<u64>,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// RFC 8289 or ns-3's arithmetic.
    pub variant: CodelVariant,
}

/// Linux's initial `rec_inv_sqrt` (1/√1 in 0.16 fixed point, `~0U >> 16`).
const REC_INV_SQRT_ONE: u16 = u16::MAX;

/// The per-queue state of RFC 8289 §5.
#[derive(Clone, Debug, PartialEq)]
pub struct CodelState {
    /// Drops in the current dropping episode (`count_`).
    count: u32,
    /// `count` when the last episode began (`lastcount_`).
    last_count: u32,
    /// In the dropping state (`dropping_`).
    dropping: bool,
    /// When the sojourn time went above target plus one interval (`first_above_time_`; `None` = 0).
    first_above: Option<Time>,
    /// When the next drop is due (`drop_next_`).
    drop_next: Time,
    /// 1/√count in 0.16 fixed point, kept up to date by one Newton step per change (ns-3 only).
    rec_inv_sqrt: u16,
    /// The largest packet enqueued, bytes (RFC `maxpacket_`).
    max_packet: u64,
}

impl Default for CodelState {
    fn default() -> Self {
        CodelState {
            count: 0,
            last_count: 0,
            dropping: false,
            first_above: None,
            drop_next: Time::ZERO,
            rec_inv_sqrt: REC_INV_SQRT_ONE,
            max_packet: 0,
        }
    }
}

/// Linux `codel_Newton_step`: one Newton iteration of 1/√count in 0.16 fixed point.
fn newton_step(rec_inv_sqrt: u16, count: u32) -> u16 {
    let inv = u64::from(rec_inv_sqrt) << 16;
    let inv2 = (inv * inv) >> 32;
    let val = ((3u64 << 32).wrapping_sub(u64::from(count) * inv2)) >> 2;
    (((val * inv) >> 31) >> 16) as u16
}

impl CodelState {
    /// Notes an arriving packet's size (for the RFC's `maxpacket_`).
    #[inline]
    pub fn on_enqueue(&mut self, pkt: &Packet) {
        self.max_packet = self.max_packet.max(u64::from(pkt.size));
    }

    /// Drops in the current (or last) episode.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// Whether the queue is in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    fn control_law(&self, cfg: &CodelConfig, t: Time) -> Time {
        let interval = cfg.interval.0;
        let step = match cfg.variant {
            CodelVariant::Rfc8289 => (interval as f64 / f64::from(self.count.max(1)).sqrt()) as u64,
            // `ReciprocalDivide(interval, rec_inv_sqrt << 16)`.
            CodelVariant::Ns3 => ((u128::from(interval) * (u128::from(self.rec_inv_sqrt) << 16)) >> 32) as u64,
        };
        Time(t.0 + step)
    }

    fn set_count(&mut self, cfg: &CodelConfig, count: u32) {
        self.count = count;
        if cfg.variant == CodelVariant::Ns3 {
            self.rec_inv_sqrt = if count == 1 { REC_INV_SQRT_ONE } else { newton_step(self.rec_inv_sqrt, count) };
        }
    }

    /// RFC 8289 `dodequeue`: pops the head and says whether it may be dropped.
    fn pop(&mut self, cfg: &CodelConfig, fifo: &mut Fifo, now: Time) -> (Option<Packet>, bool) {
        let Some(pkt) = fifo.pop() else {
            self.first_above = None;
            return (None, false);
        };
        let sojourn = now.0 - pkt.enqueued_at.0;
        let few_bytes = match (cfg.variant, cfg.min_bytes) {
            (CodelVariant::Rfc8289, min) => fifo.bytes() <= min.unwrap_or(self.max_packet),
            (CodelVariant::Ns3, min) => fifo.bytes() < min.unwrap_or(1500),
        };
        if sojourn < cfg.target.0 || few_bytes {
            self.first_above = None;
            return (Some(pkt), false);
        }
        let ok = match self.first_above {
            None => {
                self.first_above = Some(Time(now.0 + cfg.interval.0));
                false
            }
            Some(t) => match cfg.variant {
                CodelVariant::Rfc8289 => now >= t,
                CodelVariant::Ns3 => now > t,
            },
        };
        (Some(pkt), ok)
    }

    /// Marks `pkt` CE if ECN is on and it is ECN-capable; true if it did.
    fn mark(cfg: &CodelConfig, pkt: &mut Packet, stats: &mut QdiscStats) -> bool {
        if cfg.ecn && pkt.ecn != Ecn::NotEct {
            pkt.ecn = Ecn::Ce;
            stats.marks += 1;
            return true;
        }
        false
    }

    fn drop(pkt: Packet, stats: &mut QdiscStats, drops: &mut DropBuf) {
        stats.count_drop(DropKind::Early);
        drops.push((pkt, DropKind::Early));
    }

    /// RFC 8289 `dequeue` on `fifo` at `now`: the packet to send, if any; packets CoDel drops go
    /// to `drops` (as `Early`) and are counted in `stats`, as are marks. `stats.dequeues` is the
    /// caller's.
    pub fn dequeue(&mut self, cfg: &CodelConfig, fifo: &mut Fifo, now: Time, stats: &mut QdiscStats,
                   drops: &mut DropBuf) -> Option<Packet> {
        let (mut pkt, mut ok_to_drop) = self.pop(cfg, fifo, now);
        if pkt.is_none() {
            self.dropping = false;
            return None;
        }
        if self.dropping {
            if !ok_to_drop {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                let Some(mut p) = pkt else { break };
                self.set_count(cfg, self.count + 1);
                if Self::mark(cfg, &mut p, stats) {
                    let from = if cfg.variant == CodelVariant::Ns3 { now } else { self.drop_next };
                    self.drop_next = self.control_law(cfg, from);
                    return Some(p);
                }
                Self::drop(p, stats, drops);
                (pkt, ok_to_drop) = self.pop(cfg, fifo, now);
                if ok_to_drop {
                    self.drop_next = self.control_law(cfg, self.drop_next);
                } else {
                    self.dropping = false;
                }
            }
        } else if ok_to_drop {
            let mut p = pkt.take().expect("a packet was popped");
            if Self::mark(cfg, &mut p, stats) {
                pkt = Some(p);
            } else {
                Self::drop(p, stats, drops);
                (pkt, _) = self.pop(cfg, fifo, now);
            }
            self.dropping = true;
            // Re-entering soon after the last episode: resume near its drop rate (RFC 8289's
            // Linux rule). ns-3 compares in unsigned time, so a `drop_next` still ahead of now
            // counts as long ago; the RFC's signed difference counts it as recent.
            let delta = self.count.wrapping_sub(self.last_count);
            let window = 16 * cfg.interval.0;
            let recent = match cfg.variant {
                CodelVariant::Rfc8289 => now.0 < self.drop_next.0 || now.0 - self.drop_next.0 < window,
                CodelVariant::Ns3 => now >= self.drop_next && now.0 - self.drop_next.0 < window,
            };
            let count = if delta > 1 && recent { delta } else { 1 };
            self.set_count(cfg, count);
            self.last_count = self.count;
            self.drop_next = self.control_law(cfg, now);
        }
        pkt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_steps_follow_the_real_iteration_towards_one_over_root_count() {
        // x' = x(3 - count x^2)/2 from x = 1: the first step lands on 0.5 for count 2 (not
        // 0.707, Linux's and ns-3's known coarseness), then within 3 % from count 3 and 0.5 %
        // from count 9, as the same iteration in floating point does.
        let (mut r, mut x) = (REC_INV_SQRT_ONE, 1.0f64);
        for count in 2..=50u32 {
            r = newton_step(r, count);
            x = x * (3.0 - f64::from(count) * x * x) / 2.0;
            let got = f64::from(r) / 65536.0;
            assert!((got - x).abs() < 2e-4, "count {count}: fixed point {got}, iteration {x}");
            let exact = 1.0 / f64::from(count).sqrt();
            let bound = match count { 2 => 0.3, 3..=8 => 0.03, _ => 0.005 };
            assert!((got - exact).abs() / exact < bound, "count {count}: {got} vs {exact}");
        }
        assert_eq!(newton_step(REC_INV_SQRT_ONE, 2), 32769); // Linux's arithmetic, to the bit
    }
}
