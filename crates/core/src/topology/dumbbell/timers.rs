//! Endpoint timers, lazy (docs/architecture.md): each endpoint keeps the time of its live timer
//! event, and an event that finds another time there is stale and ignored.

use super::event::Event;
use super::flow::Endpoint;
use super::World;
use crate::engine::Time;

impl<'s> World<'s> {
    pub(super) fn sender_timer(&mut self, now: Time, f: usize) {
        let sc = self.sc;
        let flow = &mut self.flows[f];
        if let Endpoint::Tfrc { sender, sender_timer_at, .. } = &mut flow.endpoint {
            if *sender_timer_at != now {
                return;
            }
            *sender_timer_at = Time::NEVER;
            if !flow.active {
                return;
            }
            sender.on_timer(now, &mut self.tx_buf);
            self.transmit(now, f, true);
            self.arm_sender_timer(f);
            return;
        }
        let Endpoint::Tcp { cfg, sender, sender_timer_at, .. } = &mut flow.endpoint else { return };
        if *sender_timer_at != now {
            return; // superseded by an earlier deadline
        }
        *sender_timer_at = Time::NEVER;
        if !flow.active {
            return;
        }
        sender.on_timer(&sc.tcp_configs[*cfg as usize], now, &mut self.tx_buf);
        self.transmit(now, f, true);
        self.arm_sender_timer(f);
    }

    pub(super) fn receiver_timer(&mut self, now: Time, f: usize) {
        let sc = self.sc;
        let flow = &mut self.flows[f];
        if let Endpoint::Tfrc { receiver, receiver_timer_at, .. } = &mut flow.endpoint {
            if *receiver_timer_at != now {
                return;
            }
            *receiver_timer_at = Time::NEVER;
            receiver.on_timer(now, &mut self.tx_buf);
            self.transmit(now, f, false);
            self.arm_receiver_timer(f);
            return;
        }
        let Endpoint::Tcp { cfg, receiver, receiver_timer_at, .. } = &mut flow.endpoint else { return };
        if *receiver_timer_at != now {
            return;
        }
        *receiver_timer_at = Time::NEVER;
        receiver.on_timer(&sc.tcp_configs[*cfg as usize], now, &mut self.tx_buf);
        self.transmit(now, f, false);
        self.arm_receiver_timer(f);
    }

    /// Makes sure an event exists at or before the sender's next wakeup. Deadlines that move
    /// later (the RTO restarted by an ACK) cost nothing: the pending event fires, finds nothing
    /// due, and re-arms.
    ///
    /// Runs after every call into a sender (start, transfer, ACK, timer), so it also records the
    /// window for `output.per_flow_tcp_state`: a new call into the sender must be followed by this.
    pub(super) fn arm_sender_timer(&mut self, f: usize) {
        if let Endpoint::Tfrc { sender, sender_timer_at, .. } = &mut self.flows[f].endpoint {
            if let Some(w) = sender.next_wakeup() {
                let w = w.max(self.events.now());
                if w < *sender_timer_at {
                    *sender_timer_at = w;
                    self.events.schedule(w, Event::SenderTimer(f as u32));
                }
            }
            return;
        }
        if let Endpoint::Tcp { sender, sender_timer_at, .. } = &mut self.flows[f].endpoint {
            if let Some(bin) = self.cwnd_bins.get_mut(f) {
                bin.on_sender_call(self.events.now(), sender.cwnd());
            }
            if let Some(w) = sender.next_wakeup() {
                let w = w.max(self.events.now());
                if w < *sender_timer_at {
                    *sender_timer_at = w;
                    self.events.schedule(w, Event::SenderTimer(f as u32));
                }
            }
        }
    }

    pub(super) fn arm_receiver_timer(&mut self, f: usize) {
        if let Endpoint::Tfrc { receiver, receiver_timer_at, .. } = &mut self.flows[f].endpoint {
            if let Some(w) = receiver.next_wakeup() {
                let w = w.max(self.events.now());
                if w < *receiver_timer_at {
                    *receiver_timer_at = w;
                    self.events.schedule(w, Event::ReceiverTimer(f as u32));
                }
            }
            return;
        }
        if let Endpoint::Tcp { receiver, receiver_timer_at, .. } = &mut self.flows[f].endpoint {
            if let Some(w) = receiver.next_wakeup() {
                let w = w.max(self.events.now());
                if w < *receiver_timer_at {
                    *receiver_timer_at = w;
                    self.events.schedule(w, Event::ReceiverTimer(f as u32));
                }
            }
        }
    }
}
