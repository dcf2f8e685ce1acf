//! The end hosts: packets onto the access links and delivered to their endpoints, and the
//! application's events (start, stop, resume, app writes, UDP and multimedia sends).

use super::counters::{finished_transfer, record_delivery};
use super::event::{Event, ARRIVE_LANE};
use super::flow::{Endpoint, MediaSource};
use super::World;
use crate::engine::{Dur, Time};
use crate::packet::{Packet, PacketKind};
use crate::scenario::schema::Direction;

impl<'s> World<'s> {
    fn data_dir(&self, f: usize) -> u8 {
        match self.flows[f].direction {
            Direction::Forward => 0,
            Direction::Reverse => 1,
        }
    }

    /// Sends everything in `tx_buf` from flow `f`'s sender (data) or receiver (ACKs).
    /// Every packet carries its flow's class tag (data and ACKs alike), for class-based disciplines.
    pub(super) fn transmit(&mut self, now: Time, f: usize, from_sender: bool) {
        let data_dir = self.data_dir(f);
        let class = self.sc.flows[f].class;
        let delay_hint = self.sc.flows[f].delay_hint;
        let flow = &mut self.flows[f];
        for mut pkt in self.tx_buf.drain(..) {
            pkt.class = class;
            if from_sender {
                pkt.delay_hint = delay_hint; // TSQ: every data packet of the flow (Kumar 2003 §4.1)
            }
            if let (Some(edge), PacketKind::TcpData) = (flow.edge_rtt.as_mut(), pkt.kind) {
                edge.on_data_out(&mut pkt, now);
            }
            let (access, dir) = if from_sender {
                if now >= self.sc.warmup {
                    flow.counters.packets_sent += 1;
                }
                (&mut flow.sender_side[0], data_dir)
            } else {
                (&mut flow.receiver_side[0], 1 - data_dir)
            };
            let at = access.pass(now, pkt.size);
            self.events.schedule_in_lane(ARRIVE_LANE[dir as usize], at, Event::Arrive { dir, pkt });
        }
    }

    pub(super) fn deliver(&mut self, now: Time, pkt: Packet) {
        if !pkt.is_feedback() {
            let delay_ns = (now.0 - pkt.sent_at.0) as f64;
            let d = &mut self.bin_delay[pkt.class as usize];
            d.0 += delay_ns;
            d.1 += 1;
            if self.sc.output.packet_delays[pkt.class as usize] && now >= self.sc.warmup {
                let p = &mut self.series.packet_delays;
                p.time_s.push(now.as_secs_f64());
                p.flow.push(pkt.flow);
                p.class.push(pkt.class);
                p.delay_s.push(delay_ns * 1e-9);
            }
        }
        let f = pkt.flow as usize;
        let sc = self.sc;
        let flow = &mut self.flows[f];
        match (&mut flow.endpoint, pkt.kind) {
            (Endpoint::Tcp { cfg, sender, .. }, PacketKind::TcpAck) => {
                if !flow.active {
                    return;
                }
                if let Some(edge) = flow.edge_rtt.as_mut() {
                    edge.on_ack_in(pkt.ack, now); // the edge sits at the host's end of the access link
                }
                let cfg = &sc.tcp_configs[*cfg as usize];
                sender.on_ack(cfg, now, &pkt, &mut self.tx_buf);
                if sender.is_complete() && flow.counters.completed_at.is_none() {
                    if let Some(h) = sc.flows[f].http {
                        flow.counters.completed_at = Some(now);
                        self.series.transfers.extend(finished_transfer(f, &flow.counters, sender, now, sc.warmup));
                        self.transmit(now, f, true);
                        self.arm_sender_timer(f);
                        self.http_done(now, h);
                        return;
                    }
                    match sc.flows[f].transfers {
                        Some(plan) => {
                            self.series.transfers.extend(finished_transfer(f, &flow.counters, sender, now, sc.warmup));
                            if plan.repeat {
                                let segments = plan.draw_segments(&mut flow.rng);
                                flow.counters.transfer = (now, segments, sender.stats().timeouts);
                                sender.begin_transfer(cfg, now, segments, &mut self.tx_buf);
                            } else {
                                flow.counters.completed_at = Some(now);
                            }
                        }
                        None => flow.counters.completed_at = Some(now),
                    }
                }
                self.transmit(now, f, true);
                self.arm_sender_timer(f);
            }
            (Endpoint::Tcp { cfg, receiver, .. }, _) => {
                record_delivery(&mut flow.counters, now, &pkt, sc.warmup);
                let in_order_before = receiver.rcv_nxt();
                receiver.on_data(&sc.tcp_configs[*cfg as usize], now, &pkt, &mut self.tx_buf);
                flow.counters.app_latency.on_delivered(now, in_order_before, receiver.rcv_nxt(), now >= sc.warmup);
                self.transmit(now, f, false);
                self.arm_receiver_timer(f);
            }
            (Endpoint::Udp { delivered_payload, .. }, _) => {
                record_delivery(&mut flow.counters, now, &pkt, sc.warmup);
                *delivered_payload += pkt.payload as u64;
            }
            (Endpoint::Tfrc { sender, .. }, PacketKind::TfrcFeedback) => {
                if !flow.active {
                    return;
                }
                sender.on_feedback(now, &pkt);
                self.arm_sender_timer(f);
            }
            (Endpoint::Tfrc { receiver, delivered_payload, .. }, _) => {
                record_delivery(&mut flow.counters, now, &pkt, sc.warmup);
                *delivered_payload += pkt.payload as u64;
                receiver.on_data(now, &pkt, &mut self.tx_buf);
                self.transmit(now, f, false);
                self.arm_receiver_timer(f);
            }
            (Endpoint::Media { decoder, delivered_payload, .. }, _) => {
                record_delivery(&mut flow.counters, now, &pkt, sc.warmup);
                *delivered_payload += pkt.payload as u64;
                if pkt.sent_at >= sc.warmup {
                    flow.counters.received_sent_after_warmup += 1;
                }
                if let Some(d) = decoder {
                    d.on_received(pkt.seq, now);
                }
            }
        }
    }

    pub(super) fn start(&mut self, now: Time, f: usize) {
        let sc = self.sc;
        let flow = &mut self.flows[f];
        flow.active = true;
        match &mut flow.endpoint {
            Endpoint::Tcp { cfg, sender, .. } => {
                let cfg = &sc.tcp_configs[*cfg as usize];
                if let Some(h) = sc.flows[f].http {
                    if h.slot == 0 {
                        let b = h.browser as usize;
                        let m = &sc.http_models[h.model as usize];
                        let wake = now + m.draw_first_think(&mut self.browsers[b].rng);
                        self.events.schedule(wake, Event::BrowserWake(h.browser));
                    }
                    return;
                }
                match sc.flows[f].transfers {
                    Some(plan) => {
                        let segments = plan.draw_segments(&mut flow.rng);
                        flow.counters.transfer = (now, segments, 0);
                        sender.begin_transfer(cfg, now, segments, &mut self.tx_buf);
                    }
                    None => {
                        if sc.flows[f].app_rate_bps.is_some() {
                            sender.limit_to_app_writes();
                            sender.start(cfg, now, &mut self.tx_buf);
                            self.app_write(now, f); // the first write at the start, as ns-2's CBR
                            return;
                        }
                        sender.start(cfg, now, &mut self.tx_buf)
                    }
                }
                self.transmit(now, f, true);
                self.arm_sender_timer(f);
            }
            Endpoint::Udp { .. } => self.udp_send(now, f),
            Endpoint::Tfrc { sender, .. } => {
                sender.start(now, &mut self.tx_buf);
                self.transmit(now, f, true);
                self.arm_sender_timer(f);
            }
            Endpoint::Media { source, .. } => {
                let first = match source {
                    MediaSource::Mpeg(s) => s.start(now, &mut flow.rng),
                    MediaSource::Proshare(s) => s.start(now, &mut flow.rng),
                };
                self.events.schedule(first, Event::UdpSend(f as u32));
            }
        }
    }

    /// `stop`: the flow ends, or with `resume` its application pauses and the connection stays.
    pub(super) fn stop(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        match (&mut flow.endpoint, self.sc.flows[f].resume) {
            (Endpoint::Tcp { sender, .. }, Some(_)) => sender.pause(),
            _ => flow.active = false,
        }
    }

    pub(super) fn resume(&mut self, now: Time, f: usize) {
        let sc = self.sc;
        let Endpoint::Tcp { cfg, sender, .. } = &mut self.flows[f].endpoint else { return };
        sender.resume(&sc.tcp_configs[*cfg as usize], now, &mut self.tx_buf);
        self.transmit(now, f, true);
        self.arm_sender_timer(f);
    }

    /// An application-limited TCP source writes one segment (`app_rate`), then schedules the
    /// next write one segment time of its rate later.
    pub(super) fn app_write(&mut self, now: Time, f: usize) {
        let sc = self.sc;
        let flow = &mut self.flows[f];
        let (Some(rate), true) = (sc.flows[f].app_rate_bps, flow.active) else { return };
        let Endpoint::Tcp { cfg, sender, .. } = &mut flow.endpoint else { return };
        let cfg = &sc.tcp_configs[*cfg as usize];
        sender.app_write(cfg, now, 1, &mut self.tx_buf);
        let gap = Dur::transmission(cfg.mss, rate).max(Dur(1));
        flow.counters.app_latency.on_write(now, gap);
        self.transmit(now, f, true);
        self.arm_sender_timer(f);
        self.events.schedule(now + gap, Event::AppWrite(f as u32));
    }

    pub(super) fn udp_send(&mut self, now: Time, f: usize) {
        let flow = &mut self.flows[f];
        if !flow.active {
            return;
        }
        let class = self.sc.flows[f].class;
        let next = match &mut flow.endpoint {
            Endpoint::Udp { source, .. } => {
                let (pkt, gap) = source.send(f as u32, now, &mut flow.rng);
                self.tx_buf.push(pkt);
                now + gap
            }
            Endpoint::Media { source: MediaSource::Mpeg(s), decoder, .. } => {
                let (frame, next) = s.emit(f as u32, now, &mut flow.rng, &mut self.tx_buf);
                if let Some(d) = decoder {
                    d.on_sent(frame.number, frame.fragments, now);
                }
                next
            }
            Endpoint::Media { source: MediaSource::Proshare(s), .. } => s.emit(f as u32, now, &mut flow.rng, &mut self.tx_buf),
            Endpoint::Tcp { .. } | Endpoint::Tfrc { .. } => unreachable!("UdpSend for a TCP or TFRC flow"),
        };
        for p in &mut self.tx_buf {
            p.class = class;
        }
        self.transmit(now, f, true);
        self.events.schedule(next, Event::UdpSend(f as u32));
    }
}
