//! The world: the dumbbell built from a scenario, and its event loop, which hands each event to
//! its handler (beside what the handler acts on: `bottleneck.rs`, `hosts.rs`, `browsers.rs`,
//! `timers.rs`, `sampling.rs`).

use super::access::Access;
use super::bottleneck::Bottleneck;
use super::counters::FlowCounters;
use super::event::{Event, LANES};
use super::flow::{delivered, held, Endpoint, Flow, MediaSource};
use super::sampling::CwndBin;
use super::series::TimeSeries;
use crate::engine::{stream, EventQueue, Rng, StreamId, Time};
use crate::metrics::flow_counter::FlowCounter;
use crate::metrics::frame_decoder::FrameDecoder;
use crate::metrics::pcap::PcapWriter;
use crate::metrics::QueueMonitor;
use crate::packet::Packet;
use crate::qdisc::{DropBuf, Qdisc, QdiscStats};
use crate::scenario::{FlowKind, Scenario};
use crate::topology::delivery_trace::TraceServer;
use crate::topology::rate_schedule::ScheduledRate;
use crate::transport::tcp::CongestionControl;
use crate::traffic::http::Browser;
use crate::traffic::mpeg::MpegSource;
use crate::traffic::proshare::ProshareSource;
use crate::traffic::udp::{UdpPattern, UdpSource};
use crate::transport::tcp::{RttHintSource, TcpReceiver, TcpSender};
use crate::transport::tfrc::{self, TfrcReceiver, TfrcSender};
use std::collections::VecDeque;

/// Why a run ended early.
#[derive(Debug, PartialEq, Eq)]
pub enum RunError {
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Interrupted,
}

/// A dumbbell ready to run.
pub struct World<'s> {
    pub(super) sc: &'s Scenario,
    pub(super) events: EventQueue<Event>,
    pub(super) links: [Bottleneck; 2],
    pub(super) flows: Vec<Flow>,
    pub(super) tx_buf: Vec<Packet>,
    pub(super) drop_buf: DropBuf,
    pub(super) series: TimeSeries,
    pub(super) last_goodput: Vec<u64>,
    /// `offered_bytes` of each flow at the previous sample (empty without per-flow series).
    pub(super) last_offered: Vec<u64>,
    /// `drops_whole_run` of each flow at the previous sample (empty without per-flow series).
    pub(super) last_drops: Vec<u64>,
    /// Each flow's cwnd integral over the current bin (empty without `output.per_flow_tcp_state`;
    /// entries of non-TCP flows stay unused).
    pub(super) cwnd_bins: Vec<CwndBin>,
    pub(super) pcap: Option<PcapWriter<Box<dyn std::io::Write + Send>>>,
    /// `output.flow_counter` and its random stream.
    pub(super) flow_counter: Option<(FlowCounter, Rng)>,
    /// Delay sum (ns) and count of data packets delivered in the current bin, by class tag.
    pub(super) bin_delay: Box<[(f64, u32); 256]>,
    /// `kind = "http"` browsers.
    pub(super) browsers: Vec<Browser>,
    /// Replies a browser wants started: (slot, segments).
    pub(super) http_starts: Vec<(u32, u64)>,
}

impl<'s> World<'s> {
    /// Builds the world for a validated scenario.
    pub fn new(sc: &'s Scenario) -> World<'s> {
        let link = |dir: usize, spec: &crate::scenario::QueueSpec, loss: f64| Bottleneck {
            qdisc: spec.build("", sc.bottleneck.rate_bps).expect("validated queue builds"),
            rng: stream(sc.seed, StreamId::Queue(dir as u32)),
            loss,
            loss_rng: stream(sc.seed, StreamId::LinkLoss(dir as u32)),
            rate: ScheduledRate::new(sc.bottleneck.rate_bps, sc.rate_changes.clone()),
            trace: sc.traces[dir].clone().map(TraceServer::new),
            delay: sc.bottleneck.delay,
            busy_until: Time::ZERO,
            tx_done_pending: false,
            tx_done_key: u128::MAX,
            idle_reported: true,
            empty_polls: 0,
            wake_at: Time(u64::MAX),
            ring: VecDeque::new(),
            ring_capacity: sc.bottleneck.tx_ring as usize,
            monitor: QueueMonitor::new(sc.warmup),
            stats_at_warmup: QdiscStats::default(),
            class_stats_at_warmup: Vec::new(),
            details_at_warmup: Vec::new(),
        };
        let mut links = [link(0, &sc.queue, sc.bottleneck.loss), link(1, &sc.reverse_queue, 0.0)];
        let labels: Vec<_> = sc.flows.iter().map(|f| f.label).collect();
        for l in &mut links {
            l.qdisc.set_flow_labels(&labels);
        }
        let mut events = EventQueue::with_lanes(4 * sc.flows.len() + 64, LANES);
        let flows = sc
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut rng = stream(sc.seed, StreamId::Flow(i as u32));
                let endpoint = match f.kind {
                    FlowKind::Tcp(c) => Endpoint::Tcp {
                        cfg: c as u16,
                        sender: {
                            let mut s = TcpSender::new(i as u32, &sc.tcp_configs[c]);
                            s.set_timer_phase(f.timer_phase);
                            // BBR's random PROBE_BW phase; other flows draw nothing (streams unchanged).
                            if sc.tcp_configs[c].congestion_control == CongestionControl::Bbr {
                                s.seed_congestion_control(rand::RngCore::next_u64(&mut rng));
                            }
                            s
                        },
                        receiver: TcpReceiver::new(i as u32, &sc.tcp_configs[c]),
                        sender_timer_at: Time::NEVER,
                        receiver_timer_at: Time::NEVER,
                    },
                    FlowKind::UdpCbr { rate_bps, packet_size, dist } => Endpoint::Udp {
                        source: UdpSource::new(UdpPattern::Cbr, rate_bps, packet_size, dist),
                        delivered_payload: 0,
                    },
                    FlowKind::UdpPoisson { rate_bps, packet_size, dist } => Endpoint::Udp {
                        source: UdpSource::new(UdpPattern::Poisson, rate_bps, packet_size, dist),
                        delivered_payload: 0,
                    },
                    FlowKind::Mpeg { ref params, playout_deadline } => Endpoint::Media {
                        decoder: Some(FrameDecoder::new(params.gop.clone(), playout_deadline)),
                        source: MediaSource::Mpeg(MpegSource::new(params.clone(), &mut rng)),
                        delivered_payload: 0,
                    },
                    FlowKind::Proshare(ref params) => Endpoint::Media {
                        source: MediaSource::Proshare(ProshareSource::new(params.clone(), &mut rng)),
                        decoder: None,
                        delivered_payload: 0,
                    },
                    FlowKind::Tfrc { packet_size, history_discounting } => Endpoint::Tfrc {
                        sender: match f.app_rate_bps {
                            // `app_rate` counts payload bits, as for TCP; the sender paces wire bytes.
                            Some(bps) => {
                                let payload = packet_size.saturating_sub(tfrc::HEADER_BYTES).max(1);
                                TfrcSender::new(i as u32, packet_size)
                                    .with_app_rate(bps / 8.0 * f64::from(packet_size) / f64::from(payload))
                            }
                            None => TfrcSender::new(i as u32, packet_size),
                        },
                        receiver: TfrcReceiver::new(i as u32).with_history_discounting(history_discounting),
                        sender_timer_at: Time::NEVER,
                        receiver_timer_at: Time::NEVER,
                        delivered_payload: 0,
                    },
                };
                events.schedule(f.start, Event::Start(i as u32));
                if f.stop < sc.duration {
                    events.schedule(f.stop, Event::Stop(i as u32));
                }
                if let Some(at) = f.resume {
                    events.schedule(at, Event::Resume(i as u32));
                }
                let edge_rtt = match &f.kind {
                    FlowKind::Tcp(c) if sc.tcp_configs[*c].rtt_hint == RttHintSource::Edge => Some(Box::default()),
                    _ => None,
                };
                Flow {
                    edge_rtt,
                    endpoint,
                    direction: f.direction,
                    sender_side: [Access::new(&f.access), Access::new(&f.access)],
                    receiver_side: [Access::new(&f.receiver_access), Access::new(&f.receiver_access)],
                    active: false,
                    rng,
                    counters: FlowCounters::default(),
                }
            })
            .collect::<Vec<_>>();
        events.schedule(Time::ZERO + sc.output.bin, Event::Sample);
        events.schedule(sc.warmup, Event::WarmupEnd);
        let browsers = sc
            .flows
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.http.filter(|h| h.slot == 0).map(|h| Browser::new(h.model, i as u32, stream(sc.seed, StreamId::Browser(h.browser)))))
            .collect();
        let n = flows.len();
        let tcp_state = sc.output.per_flow_tcp_state;
        let tcp_series = || -> Vec<(u32, Vec<f64>)> {
            if !tcp_state {
                return Vec::new();
            }
            let tcp = sc.flows.iter().enumerate().filter(|(_, f)| matches!(f.kind, FlowKind::Tcp(_)));
            tcp.map(|(i, _)| (i as u32, Vec::new())).collect()
        };
        let class_names: Vec<String> = links[0].qdisc.class_stats().into_iter().map(|c| c.name).collect();
        World {
            sc,
            events,
            links,
            flows,
            tx_buf: Vec::with_capacity(64),
            drop_buf: DropBuf::with_capacity(16),
            series: TimeSeries {
                class_delay_s: {
                    let mut tags: Vec<u8> = sc.flows.iter().map(|f| f.class).collect();
                    tags.sort_unstable();
                    tags.dedup();
                    tags.into_iter().map(|t| (t, Vec::new())).collect()
                },
                class_len_pkts: class_names.iter().map(|n| (n.clone(), Vec::new())).collect(),
                class_average: class_names.into_iter().map(|n| (n, Vec::new())).collect(),
                flow_goodput_bps: if sc.output.per_flow_timeseries { vec![Vec::new(); n] } else { Vec::new() },
                flow_offered_bps: if sc.output.per_flow_timeseries { vec![Vec::new(); n] } else { Vec::new() },
                flow_drops: if sc.output.per_flow_timeseries { vec![Vec::new(); n] } else { Vec::new() },
                flow_cwnd_segments: tcp_series(),
                flow_srtt_s: tcp_series(),
                ..TimeSeries::default()
            },
            last_goodput: vec![0; n],
            last_offered: if sc.output.per_flow_timeseries { vec![0; n] } else { Vec::new() },
            last_drops: if sc.output.per_flow_timeseries { vec![0; n] } else { Vec::new() },
            cwnd_bins: if tcp_state { vec![CwndBin::default(); n] } else { Vec::new() },
            pcap: None,
            bin_delay: Box::new([(0.0, 0); 256]),
            flow_counter: sc.output.flow_counter.as_ref().map(|p| {
                (p.validate("output.flow_counter").expect("validated"), stream(sc.seed, StreamId::Queue(2)))
            }),
            browsers,
            http_starts: Vec::new(),
        }
    }

    /// Captures the forward bottleneck into `out` (pcap).
    pub fn capture_to(&mut self, out: Box<dyn std::io::Write + Send>) {
        self.pcap = Some(PcapWriter::new(out));
    }

    /// Runs to the end. `progress(now)` is called every 65 536 events; returning `false` stops
    /// the run.
    ///
    /// The end of a bottleneck transmission is not an event: a link with packets waiting keeps
    /// `tx_done_pending`, its `busy_until` and a reserved sequence number, and the loop runs that
    /// completion when it is earlier than the next event in (time, sequence) order — exactly where
    /// an event would have run. This saves a heap push and pop per packet of a busy link, about a
    /// quarter of all events, without changing any result.
    pub fn run(&mut self, mut progress: impl FnMut(Time) -> bool) -> Result<(), RunError> {
        let end = self.sc.duration;
        loop {
            let next = self.events.peek();
            let next_event = next.key();
            let dir = (self.links[1].tx_done_key < self.links[0].tx_done_key) as usize;
            let link = &self.links[dir];
            if link.tx_done_key < next_event && link.busy_until <= end {
                self.tx_done(link.busy_until, dir);
                continue;
            }
            // The key's high half is the event's time; u128::MAX (no event) is past any end.
            if (next_event >> 64) as u64 > end.0 {
                break;
            }
            let (now, ev) = self.events.pop_peeked(next);
            self.handle(now, ev);
            if self.events.events_processed() & 0xFFFF == 0 && !progress(now) {
                return Err(RunError::Interrupted);
            }
        }
        Ok(())
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events.events_processed()
    }

    fn handle(&mut self, now: Time, ev: Event) {
        match ev {
            Event::Arrive { dir, pkt } => self.arrive(now, dir as usize, pkt),
            Event::Deliver { pkt } => self.deliver(now, pkt),
            Event::SenderTimer(f) => self.sender_timer(now, f as usize),
            Event::ReceiverTimer(f) => self.receiver_timer(now, f as usize),
            Event::Start(f) => self.start(now, f as usize),
            Event::Stop(f) => self.stop(f as usize),
            Event::Resume(f) => self.resume(now, f as usize),
            Event::UdpSend(f) => self.udp_send(now, f as usize),
            Event::AppWrite(f) => self.app_write(now, f as usize),
            Event::BrowserWake(b) => self.browser_wake(now, b as usize),
            Event::HttpRequest { f, bytes } => self.http_request(now, f as usize, bytes),
            Event::QdiscWake { dir } => self.qdisc_wake(now, dir as usize),
            Event::Sample => self.sample(now),
            Event::WarmupEnd => {
                for link in &mut self.links {
                    link.stats_at_warmup = *link.qdisc.stats();
                    link.class_stats_at_warmup = link.qdisc.class_stats();
                    link.details_at_warmup = link.qdisc.detail_counters();
                }
                for f in self.flows.iter_mut() {
                    f.counters.delivered_at_warmup = delivered(&f.endpoint);
                    f.counters.held_at_warmup = held(&f.endpoint, &self.sc.tcp_configs);
                    if let Endpoint::Tcp { sender, receiver, .. } = &f.endpoint {
                        f.counters.sender_at_warmup = *sender.stats();
                        f.counters.cwnd_integral_at_warmup = sender.cwnd_integral(now);
                        f.counters.acks_at_warmup = receiver.stats().acks_sent;
                    }
                }
            }
        }
    }
}
