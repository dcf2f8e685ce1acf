//! `kind = "http"` browsers: think times, requests, and the replies they start on their slot
//! flows.

use super::event::Event;
use super::flow::Endpoint;
use super::World;
use crate::engine::Time;

impl<'s> World<'s> {
    /// Browser `b`'s think time is over: request the next page's primary reply.
    pub(super) fn browser_wake(&mut self, now: Time, b: usize) {
        let sc = self.sc;
        let first = self.browsers[b].first_flow as usize;
        if !self.flows[first].active || now >= sc.flows[first].stop {
            return;
        }
        let m = &sc.http_models[self.browsers[b].model as usize];
        let (slot, bytes) = self.browsers[b].wake(m, now);
        self.http_schedule_request(now, first + slot as usize, bytes);
    }

    /// A request leaves the browser for slot flow `f`; the reply starts after the request delay.
    fn http_schedule_request(&mut self, now: Time, f: usize, bytes: u64) {
        let spec = &self.sc.flows[f];
        let m = &self.sc.http_models[spec.http.expect("http slot").model as usize];
        let delay = m.request_delay.unwrap_or(spec.receiver_access.delay + self.sc.bottleneck.delay + spec.access.delay);
        self.events.schedule(now + delay, Event::HttpRequest { f: f as u32, bytes });
    }

    /// The server of slot flow `f` starts a reply of `bytes` as a fresh connection: full
    /// segments and a short last one (`transfers.csv` counts ⌈bytes / mss⌉ segments).
    pub(super) fn http_request(&mut self, now: Time, f: usize, bytes: u64) {
        let sc = self.sc;
        let flow = &mut self.flows[f];
        let Endpoint::Tcp { cfg, sender, .. } = &mut flow.endpoint else { unreachable!("http slot is TCP") };
        let cfg = &sc.tcp_configs[*cfg as usize];
        let segments = bytes.div_ceil(u64::from(cfg.mss)).max(1).min(u64::from(u32::MAX)) as u32;
        flow.counters.transfer = (now, segments, sender.stats().timeouts);
        flow.counters.completed_at = None;
        sender.begin_transfer_bytes(cfg, now, bytes, &mut self.tx_buf);
        self.transmit(now, f, true);
        self.arm_sender_timer(f);
    }

    /// Slot `h` finished its reply: start the embedded replies it unlocks, or think.
    pub(super) fn http_done(&mut self, now: Time, h: crate::scenario::HttpSlot) {
        let sc = self.sc;
        let b = h.browser as usize;
        let m = &sc.http_models[self.browsers[b].model as usize];
        let mut starts = std::mem::take(&mut self.http_starts);
        starts.clear();
        let wake = self.browsers[b].transfer_done(m, now, h.slot, sc.warmup, &mut starts);
        let first = self.browsers[b].first_flow as usize;
        for &(slot, bytes) in &starts {
            self.http_schedule_request(now, first + slot as usize, bytes);
        }
        self.http_starts = starts;
        if let Some(w) = wake {
            self.events.schedule(w, Event::BrowserWake(h.browser));
        }
    }
}
