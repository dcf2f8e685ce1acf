//! The dumbbell: N flows, each with a sender-side and a receiver-side access link, two routers,
//! and a bottleneck link with one queue per direction. Forward flows send data left→right
//! through `[queue]` and receive ACKs through `[reverse_queue]`; reverse flows the other way.
//!
//! Folded hops (DESIGN §6): an access link has a single input (its host, or the bottleneck
//! towards the receiver) and an unbounded FIFO, so its output time is computable when the
//! packet enters: `start = max(arrival, free_at); free_at = start + size/rate; out = free_at +
//! delay`. That is exactly the unfolded FIFO's behaviour, without an event per hop. The
//! bottleneck queues are real event-driven servers, because the discipline decides at enqueue
//! and dequeue times. Sojourn is enqueue → start of transmission.

use crate::engine::event_queue::order_key;
use crate::engine::{stream, Dur, EventQueue, Rng, StreamId, Time};
use crate::metrics::flow_counter::FlowCounter;
use crate::metrics::pcap::PcapWriter;
use crate::metrics::{Histogram, QueueMonitor};
use crate::packet::{Packet, PacketKind};
use crate::qdisc::{AnyQdisc, ClassStats, DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::scenario::schema::Direction;
use crate::scenario::{FlowKind, LinkSpec, Scenario};
use crate::traffic::transfers::TransferRecord;
use crate::traffic::http::Browser;
use crate::metrics::frame_decoder::FrameDecoder;
use crate::traffic::mpeg::MpegSource;
use crate::traffic::proshare::ProshareSource;
use crate::traffic::udp::{UdpPattern, UdpSource};
use crate::transport::tcp::{RttHintSource, TcpReceiver, TcpSender, TcpSenderStats};
use crate::transport::tfrc::{self, TfrcReceiver, TfrcSender};
use super::app_latency::AppLatency;
use super::edge_rtt::EdgeRttMonitor;
use super::link_rate::LinkRate;
use rand::Rng as _;
use std::collections::VecDeque;

/// Index of a bottleneck direction: 0 = forward (left→right), 1 = reverse.
type Dir = usize;

enum Event {
    /// A packet reaches the bottleneck queue of direction `dir`.
    Arrive { dir: u8, pkt: Packet },
    /// A packet reaches its end host (data/UDP: the receiver; ACK: the sender).
    Deliver { pkt: Packet },
    SenderTimer(u32),
    ReceiverTimer(u32),
    Start(u32),
    Stop(u32),
    /// A paused TCP flow's application writes again (`resume`).
    Resume(u32),
    UdpSend(u32),
    /// An application-limited TCP source (`app_rate`) writes its next segment.
    AppWrite(u32),
    /// A browser's think time is over.
    BrowserWake(u32),
    /// A request reached the server: flow `f` starts a reply of `bytes` of payload.
    HttpRequest { f: u32, bytes: u64 },
    /// A shaping discipline of direction `dir` may offer a packet now (`Qdisc::next_wakeup`).
    QdiscWake { dir: u8 },
    Sample,
    WarmupEnd,
}

/// Event-queue lanes (see `EventQueue::schedule_in_lane`): packets leaving a bottleneck direction
/// reach their hosts nearly in the order they left, and packets entering a direction from the
/// access links mostly arrive in the order they were sent; both skip the heap when they do.
const DELIVER_LANE: [usize; 2] = [0, 1];
const ARRIVE_LANE: [usize; 2] = [2, 3];
const LANES: usize = 4;

/// The far end of a folded access link: when it is free again and its rate and delay.
#[derive(Clone, Copy)]
struct Access {
    rate: LinkRate,
    delay: Dur,
    free_at: Time,
}

impl Access {
    fn new(l: &LinkSpec) -> Access {
        Access { rate: LinkRate::new(l.rate_bps), delay: l.delay, free_at: Time::ZERO }
    }
    /// Pushes a packet that enters the link at `now`; returns when it reaches the far end.
    #[inline]
    fn pass(&mut self, now: Time, size: u32) -> Time {
        let start = now.max(self.free_at);
        self.free_at = start + self.rate.transmission(size);
        self.free_at + self.delay
    }
}

enum Endpoint {
    Tcp { cfg: u16, sender: TcpSender, receiver: TcpReceiver, sender_timer_at: Time, receiver_timer_at: Time },
    Udp { source: UdpSource, delivered_payload: u64 },
    /// A multimedia source; `decoder` (MPEG only) does the receiver's frame accounting.
    Media { source: MediaSource, decoder: Option<FrameDecoder>, delivered_payload: u64 },
    /// TFRC (RFC 5348): its timers ride on `SenderTimer` / `ReceiverTimer` like TCP's.
    Tfrc { sender: TfrcSender, receiver: TfrcReceiver, sender_timer_at: Time, receiver_timer_at: Time, delivered_payload: u64 },
}

/// The multimedia sources.
enum MediaSource {
    Mpeg(MpegSource),
    Proshare(ProshareSource),
}

/// Per-flow counters. Like every reported metric they count from the end of the warm-up.
#[derive(Default)]
pub struct FlowCounters {
    /// Packets the sender transmitted (retransmissions included).
    pub packets_sent: u64,
    /// Data packets that reached the receiver.
    pub packets_delivered: u64,
    /// Packets of this flow dropped at a bottleneck queue or lost on the link (data and ACKs).
    pub drops: u64,
    /// Packets of this flow ECN-marked.
    pub marks: u64,
    /// Of `drops`, the arrivals a discipline refused by its early (probabilistic) decision
    /// (`DropKind::Early`); forced, overflow and in-queue drops are the rest.
    pub drops_early: u64,
    /// Wire bytes of this flow's data that crossed the bottleneck after warm-up.
    pub throughput_bytes: u64,
    /// Wire bytes of the flow's data that arrived at its bottleneck queue (whole run; counted
    /// only with `output.per_flow_timeseries`).
    pub offered_bytes: u64,
    /// Packets of this flow dropped or lost as `drops` counts them, but over the whole run (for
    /// the per-flow drop series, whose bins before the warm-up count too).
    pub drops_whole_run: u64,
    /// Payload delivered in order at the warm-up instant.
    pub delivered_at_warmup: u64,
    /// TCP sender counters at the warm-up instant.
    pub sender_at_warmup: TcpSenderStats,
    /// The sender's cwnd integral at the warm-up instant, segment·ns.
    pub cwnd_integral_at_warmup: f64,
    /// ACKs the TCP receiver had sent at the warm-up instant.
    pub acks_at_warmup: u64,
    /// One-way delay of data packets delivered after warm-up.
    pub delay: Histogram,
    /// When a finite transfer was completely acknowledged.
    pub completed_at: Option<Time>,
    /// The transfer in progress (flows with a transfer plan): start, size, timeouts before it.
    pub transfer: (Time, u32, u64),
    /// Data packets sent at or after the warm-up that were dropped at a queue or lost on a link
    /// (charged by send time, whenever the drop happens).
    pub lost_sent_after_warmup: u64,
    /// Data packets sent at or after the warm-up that reached the receiver.
    pub received_sent_after_warmup: u64,
    /// An `app_rate` TCP flow's write-to-delivery latency.
    pub app_latency: AppLatency,
}

/// A TCP flow's congestion window integrated over the current time-series bin
/// (`output.per_flow_tcp_state`). The sender changes its window only when called, so the window
/// it reports after each call holds until the next one: integrating that step function here
/// reproduces the sender's own integral (`mean_cwnd_segments`) from its public `cwnd()` alone.
#[derive(Clone, Copy, Default)]
struct CwndBin {
    /// The window since `since`, segments; 0 until the sender is first called (its own integral
    /// also starts then).
    cwnd: f64,
    /// End of the span `seg_ns` covers.
    since: Time,
    /// ∫ cwnd dt from the start of the bin to `since`, segment·ns.
    seg_ns: f64,
}

impl CwndBin {
    /// The sender was called at `now` and its window is now `cwnd`.
    #[inline]
    fn on_sender_call(&mut self, now: Time, cwnd: f64) {
        self.seg_ns += self.cwnd * (now.0 - self.since.0) as f64;
        self.since = now;
        self.cwnd = cwnd;
    }

    /// Mean window over the bin `[now − bin, now)`, segments; starts the next bin.
    fn take_mean(&mut self, now: Time, bin: Dur) -> f64 {
        self.on_sender_call(now, self.cwnd);
        let mean = self.seg_ns / bin.0 as f64;
        self.seg_ns = 0.0;
        mean
    }
}

struct Flow {
    endpoint: Endpoint,
    direction: Direction,
    sender_side: [Access; 2],   // [towards router, towards host]
    receiver_side: [Access; 2], // [towards router, towards host]
    active: bool,
    rng: Rng,
    counters: FlowCounters,
    /// The ingress edge that stamps RTT hints when the flow's `rtt_hint = "edge"`.
    edge_rtt: Option<Box<EdgeRttMonitor>>,
}

struct Bottleneck {
    qdisc: AnyQdisc,
    rng: Rng,
    loss: f64,
    loss_rng: Rng,
    rate: LinkRate,
    delay: Dur,
    /// When the transmission in progress ends (in the past when the link is idle).
    busy_until: Time,
    /// The transmission ending at `busy_until` has packets waiting behind it, so `run` must
    /// start the next one then. A packet that finds the link idle and the queue empty is sent
    /// without one (most ACKs).
    tx_done_pending: bool,
    /// The queue order key (`busy_until`, sequence) the end-of-transmission event would have had,
    /// `u128::MAX` when none is pending: completions and events at the same time run in the order
    /// they were scheduled, exactly as if it were an event.
    tx_done_key: u128,
    /// The discipline has been told that the link went idle (a dequeue that found it empty).
    idle_reported: bool,
    /// The pending `QdiscWake` of a shaping discipline, `Time(u64::MAX)` when none; a wake event at
    /// another time is stale and ignored.
    wake_at: Time,
    /// Packets already taken from the discipline, waiting for the wire (`tx_ring` of them at most).
    ring: VecDeque<Packet>,
    ring_capacity: usize,
    monitor: QueueMonitor,
    /// The discipline's counters when the warm-up ended; reports count from there.
    stats_at_warmup: QdiscStats,
    /// Per-class counters (class-based disciplines) when the warm-up ended.
    class_stats_at_warmup: Vec<ClassStats>,
    /// The discipline's own counters (`Qdisc::detail_counters`) when the warm-up ended.
    details_at_warmup: Vec<(&'static str, u64)>,
}

impl Bottleneck {
    /// Tells the monitor the queue's length (in total and per class) after a change at `now`.
    #[inline]
    fn record_len(&mut self, now: Time) {
        self.monitor.on_change(now, self.qdisc.len_packets(), self.qdisc.len_bytes());
        for i in 0..self.qdisc.class_count() {
            let (pkts, bytes) = self.qdisc.class_len_at(i);
            self.monitor.set_class_len(i, pkts, bytes);
        }
    }
}

/// One row per delivered data packet (`output.packet_delays`), as columns.
#[derive(Clone, Debug, Default)]
pub struct PacketDelays {
    /// Arrival at the receiving host, seconds.
    pub time_s: Vec<f64>,
    /// The packet's flow.
    pub flow: Vec<u32>,
    /// Its class tag.
    pub class: Vec<u8>,
    /// One-way delay, send to arrival, seconds.
    pub delay_s: Vec<f64>,
}

/// Sampled time series.
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    /// Bin end times, seconds.
    pub time_s: Vec<f64>,
    /// Forward queue length at the sample, packets.
    pub queue_pkts: Vec<f64>,
    /// Forward queue length at the sample, bytes.
    pub queue_bytes: Vec<f64>,
    /// Forward discipline's average (RED avg), NaN when it keeps none.
    pub queue_avg: Vec<f64>,
    /// Reverse queue length at the sample, packets.
    pub reverse_queue_pkts: Vec<f64>,
    /// Per flow, goodput in each bin, bits/s (empty when disabled).
    pub flow_goodput_bps: Vec<Vec<f64>>,
    /// Per flow, offered load in each bin, bits/s (empty when disabled): wire bytes of the flow's
    /// data packets that arrived at the bottleneck queue of its data direction in the bin, before
    /// the link-loss draw and the discipline's verdict (so dropped ones included; ACKs not).
    pub flow_offered_bps: Vec<Vec<f64>>,
    /// Per flow, packets dropped at a bottleneck queue or lost on the link in each bin, data and
    /// ACKs (empty when disabled): the drop-event times of Cho 2002's Fig. 4.4 at bin resolution.
    pub flow_drops: Vec<Vec<f64>>,
    /// Per MPEG flow (flow index, values), frames per second complete at the receiver in each bin:
    /// the frames whose last fragment arrived in the bin and that count as complete
    /// ([`FrameDecoder`]). Empty when disabled; other flows have no entry.
    pub flow_actual_fps: Vec<(u32, Vec<f64>)>,
    /// Per MPEG flow, frames per second that became playable in each bin: the bin of the latest
    /// completion among the frame and the references it needs ([`FrameDecoder`] module doc).
    pub flow_playable_fps: Vec<(u32, Vec<f64>)>,
    /// Per TCP flow (flow index, values), with `output.per_flow_tcp_state`: the congestion window
    /// averaged over the bin, segments (∫ cwnd dt / bin, cwnd held between calls into the sender,
    /// 0 before the sender first runs — the same integral as the summary's `mean_cwnd_segments`).
    /// Empty when disabled; other flows have no entry.
    pub flow_cwnd_segments: Vec<(u32, Vec<f64>)>,
    /// Per TCP flow, the sender's smoothed RTT at the sample, seconds; NaN while it has no RTT
    /// sample (before the first, and after a fresh transfer of `repeat` or HTTP forgets them).
    pub flow_srtt_s: Vec<(u32, Vec<f64>)>,
    /// Estimated active flows at the forward bottleneck (FPQ's count, or `output.flow_counter`);
    /// empty when nothing counts.
    pub flow_estimate: Vec<f64>,
    /// Adaptive RED's `max_p` at each sample (empty unless the bottleneck adapts it).
    pub max_p: Vec<f64>,
    /// WHITE's router RTT estimates at the forward bottleneck at each sample, ms: R_average and
    /// R_formula (Lee 2002 Fig. 3.2); empty for other disciplines.
    pub white_r_average_ms: Vec<f64>,
    /// See `white_r_average_ms`.
    pub white_r_formula_ms: Vec<f64>,
    /// BMRE's internals at the forward bottleneck at each sample (Cho 2002; `Qdisc::bmre_internals`):
    /// `(name, values)` for mode (0 none / 1 moderate / 2 severe), target_q and vmax_q (bytes), and
    /// the cumulative Fair Drops, recycled slots and expiries. Empty for other disciplines.
    pub bmre: Vec<(String, Vec<f64>)>,
    /// With BMRE and `output.per_flow_timeseries`: per flow, its drop exponent β at the sample
    /// (NaN while it has no state) ...
    pub flow_qdisc_beta: Vec<Vec<f64>>,
    /// ... and BMRE's estimate of its (buffered) rate, bits/s (NaN without state).
    pub flow_qdisc_rate_bps: Vec<Vec<f64>>,
    /// Transfers that started after the warm-up and completed before the end.
    pub transfers: Vec<TransferRecord>,
    /// With `output.packet_delays`: every data packet of those class tags delivered after the
    /// warm-up, in delivery order.
    pub packet_delays: PacketDelays,
    /// Per class tag used by a flow group (ascending): the mean one-way delay of the data packets
    /// of that class delivered in each bin, seconds (NaN for a bin without any).
    pub class_delay_s: Vec<(u8, Vec<f64>)>,
    /// Per class of a class-based forward discipline (by name, in class order): packets of the
    /// class queued at the sample.
    pub class_len_pkts: Vec<(String, Vec<f64>)>,
    /// Per class of a class-based forward discipline: the class's smoothed estimate at the sample
    /// (CBT/RIO's class average; CBQ's virtual-clock lag in ms), NaN when it keeps none.
    pub class_average: Vec<(String, Vec<f64>)>,
}

/// Why a run ended early.
#[derive(Debug, PartialEq, Eq)]
pub enum RunError {
    /// The progress callback asked to stop (e.g. Ctrl-C).
    Interrupted,
}

/// A dumbbell ready to run.
pub struct World<'s> {
    sc: &'s Scenario,
    events: EventQueue<Event>,
    links: [Bottleneck; 2],
    flows: Vec<Flow>,
    tx_buf: Vec<Packet>,
    drop_buf: DropBuf,
    series: TimeSeries,
    last_goodput: Vec<u64>,
    /// `offered_bytes` of each flow at the previous sample (empty without per-flow series).
    last_offered: Vec<u64>,
    /// `drops_whole_run` of each flow at the previous sample (empty without per-flow series).
    last_drops: Vec<u64>,
    /// Each flow's cwnd integral over the current bin (empty without `output.per_flow_tcp_state`;
    /// entries of non-TCP flows stay unused).
    cwnd_bins: Vec<CwndBin>,
    pcap: Option<PcapWriter<Box<dyn std::io::Write + Send>>>,
    /// `output.flow_counter` and its random stream.
    flow_counter: Option<(FlowCounter, Rng)>,
    /// Delay sum (ns) and count of data packets delivered in the current bin, by class tag.
    bin_delay: Box<[(f64, u32); 256]>,
    /// `kind = "http"` browsers.
    browsers: Vec<Browser>,
    /// Replies a browser wants started: (slot, segments).
    http_starts: Vec<(u32, u64)>,
}

impl<'s> World<'s> {
    /// Builds the world for a validated scenario.
    pub fn new(sc: &'s Scenario) -> World<'s> {
        let link = |dir: usize, spec: &crate::scenario::QueueSpec, loss: f64| Bottleneck {
            qdisc: spec.build("", sc.bottleneck.rate_bps).expect("validated queue builds"),
            rng: stream(sc.seed, StreamId::Queue(dir as u32)),
            loss,
            loss_rng: stream(sc.seed, StreamId::LinkLoss(dir as u32)),
            rate: LinkRate::new(sc.bottleneck.rate_bps),
            delay: sc.bottleneck.delay,
            busy_until: Time::ZERO,
            tx_done_pending: false,
            tx_done_key: u128::MAX,
            idle_reported: true,
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
                        sender: TcpSender::new(i as u32, &sc.tcp_configs[c]),
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
                    FlowKind::Tfrc { packet_size } => Endpoint::Tfrc {
                        sender: match f.app_rate_bps {
                            // `app_rate` counts payload bits, as for TCP; the sender paces wire bytes.
                            Some(bps) => {
                                let payload = packet_size.saturating_sub(tfrc::HEADER_BYTES).max(1);
                                TfrcSender::new(i as u32, packet_size)
                                    .with_app_rate(bps / 8.0 * f64::from(packet_size) / f64::from(payload))
                            }
                            None => TfrcSender::new(i as u32, packet_size),
                        },
                        receiver: TfrcReceiver::new(i as u32),
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
                    if let Endpoint::Tcp { sender, receiver, .. } = &f.endpoint {
                        f.counters.sender_at_warmup = *sender.stats();
                        f.counters.cwnd_integral_at_warmup = sender.cwnd_integral(now);
                        f.counters.acks_at_warmup = receiver.stats().acks_sent;
                    }
                }
            }
        }
    }

    // ---- bottleneck ----

    fn arrive(&mut self, now: Time, dir: Dir, pkt: Packet) {
        if !self.last_offered.is_empty() && !pkt.is_feedback() {
            // Offered load (per-flow series only): every data arrival, before loss and verdict.
            self.flows[pkt.flow as usize].counters.offered_bytes += pkt.size as u64;
        }
        let link = &mut self.links[dir];
        let measuring = now >= self.sc.warmup;
        if link.loss > 0.0 && link.loss_rng.gen::<f64>() < link.loss {
            self.flows[pkt.flow as usize].counters.drops_whole_run += 1;
            if measuring {
                link.monitor.link_losses += 1;
                self.flows[pkt.flow as usize].counters.drops += 1;
            }
            if !pkt.is_feedback() && pkt.sent_at >= self.sc.warmup {
                self.flows[pkt.flow as usize].counters.lost_sent_after_warmup += 1;
            }
            return;
        }
        if dir == 0 && !pkt.is_feedback() {
            if let Some((fc, rng)) = self.flow_counter.as_mut() {
                fc.observe(pkt.flow, now, rng);
            }
        }
        let link = &mut self.links[dir];
        let idle = link.busy_until <= now && !link.tx_done_pending;
        if idle && !link.idle_reported {
            // The link went idle at `busy_until` with nothing queued, and nothing ran at that
            // instant: tell the discipline now, with the time it happened (RED's idle decay).
            let at = link.busy_until;
            self.start_transmission(at, dir);
        }
        let link = &mut self.links[dir];
        let verdict = link.qdisc.enqueue(pkt, now, &mut link.rng, &mut self.drop_buf);
        let counters = &mut self.flows[pkt.flow as usize].counters;
        match verdict {
            Verdict::Enqueued => {}
            Verdict::Marked if measuring => counters.marks += 1,
            Verdict::Dropped(kind) if measuring => {
                counters.drops += 1;
                counters.drops_early += u64::from(kind == DropKind::Early);
            }
            Verdict::Marked | Verdict::Dropped(_) => {}
        }
        if matches!(verdict, Verdict::Dropped(_)) {
            counters.drops_whole_run += 1;
        }
        if matches!(verdict, Verdict::Dropped(_)) && !pkt.is_feedback() && pkt.sent_at >= self.sc.warmup {
            counters.lost_sent_after_warmup += 1;
        }
        // A mark the discipline put on a queued packet instead of the arrival (AECN).
        if let Some(marked) = self.links[dir].qdisc.take_front_mark() {
            if measuring {
                self.flows[marked as usize].counters.marks += 1;
            }
        }
        self.account_inner_drops(measuring);
        self.links[dir].record_len(now);
        if idle {
            self.start_transmission(now, dir);
        } else {
            self.fill_ring(now, dir);
            self.account_inner_drops(measuring);
            self.ensure_tx_done(dir);
        }
    }

    /// Marks the end of the current transmission as due (see `run`) if packets wait for it.
    fn ensure_tx_done(&mut self, dir: Dir) {
        let link = &mut self.links[dir];
        let waiting = !link.ring.is_empty() || link.qdisc.len_packets() > 0;
        if waiting && !link.tx_done_pending && link.busy_until > self.events.now() {
            link.tx_done_pending = true;
            link.tx_done_key = order_key(link.busy_until, self.events.reserve_seq());
        }
    }

    /// Charges packets a discipline discarded from inside its queue to their flows.
    fn account_inner_drops(&mut self, measuring: bool) {
        for (p, _) in self.drop_buf.drain(..) {
            self.flows[p.flow as usize].counters.drops_whole_run += 1;
            if measuring {
                self.flows[p.flow as usize].counters.drops += 1;
            }
            if !p.is_feedback() && p.sent_at >= self.sc.warmup {
                self.flows[p.flow as usize].counters.lost_sent_after_warmup += 1;
            }
        }
    }

    /// Takes the discipline's next packet; its sojourn ends here.
    /// Disciplines that act at dequeue (CoDel) drop and mark here: both are charged at once.
    fn pull_from_qdisc(&mut self, now: Time, dir: Dir) -> Option<Packet> {
        let link = &mut self.links[dir];
        let marks_before = link.qdisc.stats().marks;
        let next = link.qdisc.dequeue(now, &mut self.drop_buf);
        link.record_len(now);
        let marked = link.qdisc.stats().marks > marks_before;
        if let Some(p) = &next {
            link.monitor.on_dequeue(now, p.enqueued_at);
        }
        let measuring = now >= self.sc.warmup;
        if let (true, true, Some(p)) = (marked, measuring, &next) {
            self.flows[p.flow as usize].counters.marks += 1;
        }
        if !self.drop_buf.is_empty() {
            self.account_inner_drops(measuring);
        }
        if next.is_none() && self.links[dir].qdisc.len_packets() > 0 {
            // A shaper holds packets back: ask again when it says (work-conserving disciplines
            // never get here with packets queued, so nothing else is scheduled).
            let link = &mut self.links[dir];
            if let Some(at) = link.qdisc.next_wakeup().filter(|&t| t > now && t < link.wake_at) {
                link.wake_at = at;
                self.events.schedule(at, Event::QdiscWake { dir: dir as u8 });
            }
        }
        next
    }

    /// A shaping discipline's wake-up: an idle link starts sending, a busy one refills its ring.
    fn qdisc_wake(&mut self, now: Time, dir: Dir) {
        let link = &mut self.links[dir];
        if link.wake_at != now {
            return; // superseded by an earlier wake-up
        }
        link.wake_at = Time(u64::MAX);
        if link.busy_until <= now && !link.tx_done_pending {
            self.start_transmission(now, dir);
        } else {
            self.fill_ring(now, dir);
            self.account_inner_drops(now >= self.sc.warmup);
            self.ensure_tx_done(dir);
        }
    }

    /// Moves packets from the discipline into the transmit ring while it has room.
    fn fill_ring(&mut self, now: Time, dir: Dir) {
        while self.links[dir].ring.len() < self.links[dir].ring_capacity {
            match self.pull_from_qdisc(now, dir) {
                Some(p) => self.links[dir].ring.push_back(p),
                None => break,
            }
        }
    }

    /// The link is free at `now`: sends the next packet, if any, all the way to the far end
    /// host's arrival (the far-side access link is folded), or reports the idle link.
    fn start_transmission(&mut self, now: Time, dir: Dir) {
        let next = match self.links[dir].ring.pop_front() {
            Some(p) => Some(p),
            None => self.pull_from_qdisc(now, dir),
        };
        let link = &mut self.links[dir];
        let Some(pkt) = next else {
            link.idle_reported = true;
            self.account_inner_drops(now >= self.sc.warmup);
            return;
        };
        link.idle_reported = false;
        let tx = link.rate.transmission(pkt.size);
        let end = now + tx;
        link.busy_until = end;
        link.monitor.on_transmit(now, tx.0, self.sc.duration);
        let at_router = end + link.delay;
        if dir == 0 {
            if let Some(w) = self.pcap.as_mut() {
                let mss = match self.flows[pkt.flow as usize].endpoint {
                    Endpoint::Tcp { cfg, .. } => self.sc.tcp_configs[cfg as usize].mss,
                    Endpoint::Udp { .. } | Endpoint::Media { .. } | Endpoint::Tfrc { .. } => 1,
                };
                w.capture(now, &pkt, mss);
            }
        }
        let flow = &mut self.flows[pkt.flow as usize];
        let to_host = if pkt.is_feedback() {
            flow.sender_side[1].pass(at_router, pkt.size)
        } else {
            if end >= self.sc.warmup && end <= self.sc.duration {
                flow.counters.throughput_bytes += pkt.size as u64;
            }
            flow.receiver_side[1].pass(at_router, pkt.size)
        };
        self.events.schedule_in_lane(DELIVER_LANE[dir], to_host, Event::Deliver { pkt });
        self.fill_ring(now, dir);
        self.account_inner_drops(now >= self.sc.warmup);
        self.ensure_tx_done(dir);
    }

    fn tx_done(&mut self, now: Time, dir: Dir) {
        self.links[dir].tx_done_pending = false;
        self.links[dir].tx_done_key = u128::MAX;
        self.start_transmission(now, dir);
    }

    // ---- hosts ----

    fn data_dir(&self, f: usize) -> u8 {
        match self.flows[f].direction {
            Direction::Forward => 0,
            Direction::Reverse => 1,
        }
    }

    /// Sends everything in `tx_buf` from flow `f`'s sender (data) or receiver (ACKs).
    /// Every packet carries its flow's class tag (data and ACKs alike), for class-based disciplines.
    fn transmit(&mut self, now: Time, f: usize, from_sender: bool) {
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

    fn deliver(&mut self, now: Time, pkt: Packet) {
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

    fn start(&mut self, now: Time, f: usize) {
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

    // ---- http browsers ----

    /// Browser `b`'s think time is over: request the next page's primary reply.
    fn browser_wake(&mut self, now: Time, b: usize) {
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
    fn http_request(&mut self, now: Time, f: usize, bytes: u64) {
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
    fn http_done(&mut self, now: Time, h: crate::scenario::HttpSlot) {
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

    /// An application-limited TCP source writes one segment (`app_rate`), then schedules the
    /// next write one segment time of its rate later.
    /// `stop`: the flow ends, or with `resume` its application pauses and the connection stays.
    fn stop(&mut self, f: usize) {
        let flow = &mut self.flows[f];
        match (&mut flow.endpoint, self.sc.flows[f].resume) {
            (Endpoint::Tcp { sender, .. }, Some(_)) => sender.pause(),
            _ => flow.active = false,
        }
    }

    fn resume(&mut self, now: Time, f: usize) {
        let sc = self.sc;
        let Endpoint::Tcp { cfg, sender, .. } = &mut self.flows[f].endpoint else { return };
        sender.resume(&sc.tcp_configs[*cfg as usize], now, &mut self.tx_buf);
        self.transmit(now, f, true);
        self.arm_sender_timer(f);
    }

    fn app_write(&mut self, now: Time, f: usize) {
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

    fn udp_send(&mut self, now: Time, f: usize) {
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

    fn sender_timer(&mut self, now: Time, f: usize) {
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

    fn receiver_timer(&mut self, now: Time, f: usize) {
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
    fn arm_sender_timer(&mut self, f: usize) {
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

    fn arm_receiver_timer(&mut self, f: usize) {
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

    // ---- metrics ----

    fn sample(&mut self, now: Time) {
        let bin_s = self.sc.output.bin.as_secs_f64();
        let s = &mut self.series;
        s.time_s.push(now.as_secs_f64());
        let q = &self.links[0].qdisc;
        s.queue_pkts.push(q.len_packets() as f64);
        s.queue_bytes.push(q.len_bytes() as f64);
        s.queue_avg.push(q.average().unwrap_or(f64::NAN));
        s.reverse_queue_pkts.push(self.links[1].qdisc.len_packets() as f64);
        for (i, (_, values)) in s.class_len_pkts.iter_mut().enumerate() {
            values.push(q.class_len_at(i).0 as f64);
        }
        for (i, (_, values)) in s.class_average.iter_mut().enumerate() {
            values.push(q.class_average_at(i));
        }
        for (tag, values) in &mut s.class_delay_s {
            let d = &mut self.bin_delay[*tag as usize];
            values.push(if d.1 > 0 { d.0 / d.1 as f64 * 1e-9 } else { f64::NAN });
            *d = (0.0, 0);
        }
        let estimate = self.links[0].qdisc.flow_estimate().or(self.flow_counter.as_ref().map(|(fc, _)| fc.estimate()));
        if let Some(e) = estimate {
            s.flow_estimate.push(e);
        }
        if let Some(a) = q.adaptive_red() {
            s.max_p.push(a.max_p);
        }
        if let Some((r_average, r_formula)) = self.links[0].qdisc.rtt_estimates() {
            s.white_r_average_ms.push(r_average);
            s.white_r_formula_ms.push(r_formula);
        }
        if let Some(values) = q.bmre_internals() {
            const NAMES: [&str; 6] = ["bmre_mode", "bmre_target_q_bytes", "bmre_vmax_q_bytes", "bmre_fair_drops", "bmre_recycled", "bmre_expired"];
            if s.bmre.is_empty() {
                s.bmre = NAMES.iter().map(|n| (n.to_string(), Vec::new())).collect();
                if self.sc.output.per_flow_timeseries {
                    s.flow_qdisc_beta = vec![Vec::new(); self.flows.len()];
                    s.flow_qdisc_rate_bps = vec![Vec::new(); self.flows.len()];
                }
            }
            for ((_, col), v) in s.bmre.iter_mut().zip(values) {
                col.push(v);
            }
            for (i, (beta, rate)) in s.flow_qdisc_beta.iter_mut().zip(s.flow_qdisc_rate_bps.iter_mut()).enumerate() {
                let (b, r) = q.flow_internals(i as u32).unwrap_or((f64::NAN, f64::NAN));
                beta.push(b);
                rate.push(r);
            }
        }
        if !s.flow_goodput_bps.is_empty() {
            for (i, f) in self.flows.iter().enumerate() {
                let d = delivered(&f.endpoint);
                s.flow_goodput_bps[i].push((d - self.last_goodput[i]) as f64 * 8.0 / bin_s);
                self.last_goodput[i] = d;
            }
        }
        if !s.flow_offered_bps.is_empty() {
            for (i, f) in self.flows.iter().enumerate() {
                let o = f.counters.offered_bytes;
                s.flow_offered_bps[i].push((o - self.last_offered[i]) as f64 * 8.0 / bin_s);
                self.last_offered[i] = o;
            }
        }
        if !s.flow_drops.is_empty() {
            for (i, f) in self.flows.iter().enumerate() {
                let d = f.counters.drops_whole_run;
                s.flow_drops[i].push((d - self.last_drops[i]) as f64);
                self.last_drops[i] = d;
            }
        }
        for ((i, cwnd), (_, srtt)) in s.flow_cwnd_segments.iter_mut().zip(&mut s.flow_srtt_s) {
            let Endpoint::Tcp { sender, .. } = &self.flows[*i as usize].endpoint else { unreachable!("TCP flows only") };
            cwnd.push(self.cwnd_bins[*i as usize].take_mean(now, self.sc.output.bin));
            srtt.push(sender.srtt().map_or(f64::NAN, |d| d.as_secs_f64()));
        }
        let next = now + self.sc.output.bin;
        if next <= self.sc.duration {
            self.events.schedule(next, Event::Sample);
        }
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events.events_processed()
    }

    /// Finishes the run and assembles the summary (without wall time, which the caller adds).
    pub fn finish(mut self) -> (serde_json::Value, TimeSeries, Option<std::io::Result<()>>) {
        let sc = self.sc;
        let end = sc.duration;
        let span_s = (end.0 - sc.warmup.0) as f64 * 1e-9;
        let mut flows_json = Vec::with_capacity(self.flows.len());
        let mut goodputs = Vec::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let spec = &sc.flows[i];
            let c = &f.counters;
            let goodput = (delivered(&f.endpoint) - c.delivered_at_warmup) as f64 * 8.0 / span_s;
            goodputs.push(goodput);
            let (kind, retransmits, timeouts, extra) = match &f.endpoint {
                Endpoint::Tcp { sender, receiver, .. } => {
                    let (st, before) = (sender.stats(), &c.sender_at_warmup);
                    (
                        "tcp",
                        st.retransmits - before.retransmits,
                        st.timeouts - before.timeouts,
                        serde_json::json!({
                            "fast_retransmits": st.fast_retransmits - before.fast_retransmits,
                            "ecn_reductions": st.ecn_reductions - before.ecn_reductions,
                            "acks_sent": receiver.stats().acks_sent - c.acks_at_warmup,
                            "delivered_bytes": delivered(&f.endpoint),
                            "completion_s": c.completed_at.map(|t| (t.0 - spec.start.0) as f64 * 1e-9),
                            "timeout_wait_s": (st.timeout_wait_ns - before.timeout_wait_ns) as f64 * 1e-9,
                            "mean_cwnd_segments": (sender.cwnd_integral(end) - c.cwnd_integral_at_warmup) / (span_s * 1e9),
                        }),
                    )
                }
                Endpoint::Udp { .. } => (
                    if matches!(spec.kind, FlowKind::UdpCbr { .. }) { "udp-cbr" } else { "udp-poisson" },
                    0,
                    0,
                    serde_json::json!({ "delivered_bytes": delivered(&f.endpoint) }),
                ),
                Endpoint::Media { source, decoder, .. } => {
                    (if matches!(source, MediaSource::Mpeg(_)) { "mpeg" } else { "proshare" }, 0, 0, media_summary(sc, spec, c, decoder.as_ref(), delivered(&f.endpoint)))
                }
                Endpoint::Tfrc { sender, receiver, .. } => (
                    "tfrc",
                    0,
                    sender.stats().nofeedback_expiries,
                    serde_json::json!({
                        "delivered_bytes": delivered(&f.endpoint),
                        "tfrc_rate_bps": sender.rate() * 8.0,
                        "tfrc_rtt_s": sender.rtt(),
                        "tfrc_loss_event_rate": receiver.loss_event_rate(),
                        "tfrc_loss_events": receiver.history().events(),
                        "tfrc_feedbacks": receiver.stats().feedbacks,
                    }),
                ),
            };
            let mut o = serde_json::json!({
                "id": i,
                "kind": kind,
                "variant": spec.variant,
                "class": spec.class,
                "group": spec.group,
                "direction": if spec.direction == Direction::Forward { "forward" } else { "reverse" },
                "start_s": spec.start.as_secs_f64(),
                "goodput_bps": goodput,
                "throughput_bps": c.throughput_bytes as f64 * 8.0 / span_s,
                "packets_sent": c.packets_sent,
                "packets_delivered": c.packets_delivered,
                "drops": c.drops,
                "drops_early": c.drops_early,
                "marks": c.marks,
                "retransmits": retransmits,
                "timeouts": timeouts,
                "delay_mean_s": c.delay.mean_s(),
                "delay_p50_s": c.delay.quantile_s(0.50),
                "delay_p95_s": c.delay.quantile_s(0.95),
                "delay_p99_s": c.delay.quantile_s(0.99),
            });
            o.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            if let (Endpoint::Tcp { receiver, .. }, Some(_)) = (&f.endpoint, spec.app_rate_bps) {
                o.as_object_mut().unwrap().extend(app_latency_json(&c.app_latency, receiver.rcv_nxt()));
            }
            if let Some(h) = spec.http {
                o["http_browser"] = h.browser.into();
                o["http_slot"] = h.slot.into();
                if h.slot == 0 {
                    let b = &self.browsers[h.browser as usize];
                    o["http_pages"] = b.pages.into();
                    o["http_page_response_mean_s"] = if b.pages > 0 { (b.response_sum_s / b.pages as f64).into() } else { serde_json::Value::Null };
                }
            }
            flows_json.push(o);
        }
        let mut queues_json = Vec::new();
        for (dir, name, spec) in [(0, "bottleneck", &sc.queue), (1, "reverse", &sc.reverse_queue)] {
            let link = &mut self.links[dir];
            let (mean_p, mean_b) = link.monitor.means(end);
            let st = link.qdisc.stats().since(&link.stats_at_warmup);
            let serde_json::Value::Object(fields) = serde_json::json!({
                "name": name,
                "kind": spec.kind(),
                "marks": st.marks,
                "link_losses": link.monitor.link_losses,
                "mean_len_packets": mean_p,
                "mean_len_bytes": mean_b,
                "mean_sojourn_s": link.monitor.sojourn.mean_s(),
                "p99_sojourn_s": link.monitor.sojourn.quantile_s(0.99),
                "utilization": link.monitor.busy_ns as f64 * 1e-9 / span_s,
            }) else {
                unreachable!("an object literal")
            };
            let mut queue_json = st.summary_fields();
            queue_json.extend(fields);
            queues_json.push(serde_json::Value::Object(queue_json));
            let classes = link.qdisc.class_stats();
            if !classes.is_empty() {
                let rows: Vec<serde_json::Value> = classes
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let b = link.class_stats_at_warmup.get(i).cloned().unwrap_or_default();
                        let (st, by) = (c.stats.since(&b.stats), c.bytes.since(&b.bytes));
                        let mut row = st.summary_fields();
                        row.insert("name".into(), c.name.clone().into());
                        row.insert("throughput_bps".into(), (by.dequeues as f64 * 8.0 / span_s).into());
                        row.insert("average_at_end".into(), c.average.into());
                        let (mean_p, mean_b) = link.monitor.class_means(i, end);
                        row.insert("mean_len_packets".into(), mean_p.into());
                        row.insert("mean_len_bytes".into(), mean_b.into());
                        serde_json::Value::Object(row)
                    })
                    .collect();
                queues_json[dir]["classes"] = rows.into();
            }
            let details = link.qdisc.detail_counters();
            if !details.is_empty() {
                let at_warmup = |name: &str| link.details_at_warmup.iter().find(|(n, _)| *n == name).map_or(0, |(_, v)| *v);
                let map: serde_json::Map<String, serde_json::Value> =
                    details.iter().map(|&(name, v)| (name.to_string(), (v - at_warmup(name)).into())).collect();
                queues_json[dir]["details"] = map.into();
            }
            if dir == 0 {
                queues_json[0]["mean_flow_estimate"] = mean_after(&self.series.time_s, &self.series.flow_estimate, sc.warmup).into();
            }
            if let Some(a) = link.qdisc.adaptive_red() {
                let mean = if dir == 0 { mean_after(&self.series.time_s, &self.series.max_p, sc.warmup) } else { None };
                queues_json[dir]["adaptive"] = serde_json::json!({
                    "max_p_at_end": a.max_p,
                    "mean_max_p": mean,
                    "min_th": a.min_th,
                    "max_th": a.max_th,
                    "weight": a.weight,
                    "target_low": a.target_low,
                    "target_high": a.target_high,
                });
            }
        }
        let forward_goodputs: Vec<f64> = goodputs
            .iter()
            .zip(&sc.flows)
            .filter(|(_, s)| s.direction == Direction::Forward)
            .map(|(g, _)| *g)
            .collect();
        let summary = serde_json::json!({
            "version": env!("CARGO_PKG_VERSION"),
            "seed": sc.seed,
            "events": self.events.events_processed(),
            "simulated_s": end.as_secs_f64(),
            "measured_s": span_s,
            "scenario": sc.echo,
            "flows": flows_json,
            "queues": queues_json,
            "aggregate": {
                "goodput_bps": goodputs.iter().sum::<f64>(),
                "forward_goodput_bps": forward_goodputs.iter().sum::<f64>(),
                "jain_index": crate::metrics::jain_index(&goodputs),
                "flows": goodputs.len(),
            },
        });
        if sc.output.per_flow_timeseries {
            let bins = self.series.time_s.len();
            for (i, f) in self.flows.iter().enumerate() {
                if let Endpoint::Media { decoder: Some(d), .. } = &f.endpoint {
                    let (actual, playable) = d.rate_series(sc.output.bin, bins);
                    self.series.flow_actual_fps.push((i as u32, actual));
                    self.series.flow_playable_fps.push((i as u32, playable));
                }
            }
        }
        let pcap = self.pcap.take().map(|w| w.finish());
        (summary, self.series, pcap)
    }
}

/// The record of flow `f`'s transfer that completed at `now`, if it started after `warmup`.
fn finished_transfer(f: usize, c: &FlowCounters, sender: &TcpSender, now: Time, warmup: Time) -> Option<TransferRecord> {
    let (start, segments, timeouts_before) = c.transfer;
    (start >= warmup).then(|| TransferRecord {
        flow: f as u32,
        start,
        end: now,
        segments,
        timeouts: (sender.stats().timeouts - timeouts_before) as u32,
    })
}

/// Mean of the samples taken after `warmup` (`None` when there are none).
fn mean_after(times_s: &[f64], values: &[f64], warmup: Time) -> Option<f64> {
    let w = warmup.as_secs_f64();
    let kept: Vec<f64> = times_s.iter().zip(values).filter(|(t, _)| **t > w).map(|(_, v)| *v).collect();
    (!kept.is_empty()).then(|| kept.iter().sum::<f64>() / kept.len() as f64)
}

fn delivered(e: &Endpoint) -> u64 {
    match e {
        Endpoint::Tcp { receiver, .. } => receiver.delivered_bytes(),
        Endpoint::Udp { delivered_payload, .. } | Endpoint::Media { delivered_payload, .. } | Endpoint::Tfrc { delivered_payload, .. } => *delivered_payload,
    }
}

/// The `app_rate` columns of a TCP flow (docs/results.md): write-to-delivery latency of the
/// segments delivered after the warm-up, and what was written but not delivered at the end.
fn app_latency_json(a: &AppLatency, rcv_nxt: u32) -> serde_json::Map<String, serde_json::Value> {
    let h = a.latency();
    let serde_json::Value::Object(m) = serde_json::json!({
        "app_delay_mean_s": h.mean_s(),
        "app_delay_p50_s": h.quantile_s(0.50),
        "app_delay_p99_s": h.quantile_s(0.99),
        "app_undelivered_segments": a.undelivered(rcv_nxt),
    }) else { unreachable!("a JSON object") };
    m
}

#[inline]
fn record_delivery(c: &mut FlowCounters, now: Time, pkt: &Packet, warmup: Time) {
    if now >= warmup {
        c.packets_delivered += 1;
        c.delay.record(now.0 - pkt.sent_at.0);
    }
}

/// Receiver-side multimedia metrics of one flow (spec `seed000-cbt-evaluation.md` §3).
///
/// Everything counts packets and frames *sent* from the end of the warm-up on; rates divide by
/// the flow's active part of the measurement window, `[max(warmup, start), min(end, stop)]`.
/// * `mm_packets_lost`: packets sent in the window that were dropped at a queue or lost on a
///   link — i.e. sent − received, not counting `mm_packets_in_flight_at_end` (sent but neither
///   received nor dropped when the run ended); `mm_loss_pps` is it per second.
/// * `mm_latency_mean_s`: mean one-way delay of packets delivered after warm-up (send
///   timestamp to arrival at the receiving host; the same as `delay_mean_s`).
/// * MPEG: `frames_sent`, `frames_complete` (every fragment arrived, none after
///   `playout_deadline`) and `frames_playable` (complete and decodable under the GOP's
///   dependencies, [`FrameDecoder`]), over frames sent in `[warmup, end)`;
///   `mpeg_actual_fps` = complete / active s, `mpeg_playable_fps` = playable / active s. Frames
///   sent just before the end whose fragments or next reference frame were still in flight
///   count as not complete or not playable (at most a GOP).
fn media_summary(
    sc: &Scenario,
    spec: &crate::scenario::FlowSpec,
    c: &FlowCounters,
    decoder: Option<&FrameDecoder>,
    delivered_bytes: u64,
) -> serde_json::Value {
    let from = sc.warmup.max(spec.start);
    let to = sc.duration.min(spec.stop);
    let active_s = if to > from { (to.0 - from.0) as f64 * 1e-9 } else { 0.0 };
    let per_s = |x: u64| if active_s > 0.0 { x as f64 / active_s } else { 0.0 };
    let lost = c.lost_sent_after_warmup;
    let in_flight = c.packets_sent.saturating_sub(c.received_sent_after_warmup + lost);
    let mut o = serde_json::json!({
        "delivered_bytes": delivered_bytes,
        "mm_active_s": active_s,
        "mm_packets_received": c.received_sent_after_warmup,
        "mm_packets_lost": lost,
        "mm_packets_in_flight_at_end": in_flight,
        "mm_loss_pps": per_s(lost),
        "mm_loss_fraction": if c.packets_sent > 0 { lost as f64 / c.packets_sent as f64 } else { 0.0 },
        "mm_latency_mean_s": c.delay.mean_s(),
    });
    if let Some(d) = decoder {
        let t = d.tally(sc.warmup, sc.duration);
        let m = o.as_object_mut().expect("object");
        m.insert("frames_sent".into(), t.sent.into());
        m.insert("frames_complete".into(), t.complete.into());
        m.insert("frames_playable".into(), t.playable.into());
        m.insert("mpeg_sent_fps".into(), per_s(t.sent).into());
        m.insert("mpeg_actual_fps".into(), per_s(t.complete).into());
        m.insert("mpeg_playable_fps".into(), per_s(t.playable).into());
    }
    o
}

#[cfg(test)]
mod tests {
    use crate::engine::Dur;
    use crate::scenario::parse_toml;

    /// 4 MPEG flows and 4 BULK TCP flows with a 6 Mb/s UDP blast through a 10 Mb/s drop-tail
    /// queue of 50 packets: every kind of flow loses packets, and MPEG loses frames (seed 3: about
    /// 3–15 % of the frames sent are incomplete, 10–50 % not playable).
    const MIX: &str = r#"
[run]
duration = "20s"
warmup = "5s"
seed = 3

[topology]
bottleneck = { rate = "10Mbps", delay = "5ms" }

[queue]
kind = "droptail"
limit = 50

[output]
bin = "1s"
per_flow_timeseries = true

[[flows]]
kind = "mpeg"
count = 4

[[flows]]
kind = "tcp"
count = 4

[[flows]]
kind = "udp-cbr"
rate = "6Mbps"
packet_size = "1000B"
"#;

    fn run(text: &str) -> crate::run::RunOutput {
        crate::run::simulate(&parse_toml(text).unwrap(), None, |_| true).unwrap()
    }

    fn f64_of(v: &serde_json::Value, key: &str) -> f64 {
        v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
    }

    /// Bins after the warm-up (bin ends in (5, 20] s): 15 of them.
    const WINDOW: std::ops::Range<usize> = 5..20;

    #[test]
    fn mpeg_frame_rate_bins_average_to_the_period_rates_up_to_frames_in_flight_at_the_warmup() {
        let out = run(MIX);
        let s = &out.series;
        assert_eq!(s.time_s.len(), 20);
        let flows = out.summary["flows"].as_array().unwrap();
        // Only the MPEG flows (ids 0..4) get frame-rate series.
        let ids: Vec<u32> = s.flow_actual_fps.iter().map(|(i, _)| *i).collect();
        assert_eq!(ids, vec![0, 1, 2, 3]);
        assert_eq!(s.flow_playable_fps.iter().map(|(i, _)| *i).collect::<Vec<_>>(), ids);
        let mut lost_some = false;
        for ((i, actual), (_, playable)) in s.flow_actual_fps.iter().zip(&s.flow_playable_fps) {
            let f = &flows[*i as usize];
            assert_eq!(f["kind"], "mpeg");
            // Bins count frames by arrival (actual) or by the instant they became decodable
            // (playable); the period counts frames *sent* in [5, 20) s. The sums over the window
            // differ only by frames sent before 5 s that finished after it: those in flight then
            // (one-way delay ≤ 50 × 1.2 ms queue + 5 ms + access ≈ 0.07 s, ≤ 3 frames at 30 fps)
            // and, for playable, the ≤ 2 B frames waiting for the next reference. Frames finishing
            // exactly at 20 s would fall outside the last bin (not seen here: the difference is ≥ 0).
            for (bins, key, max_extra) in [(actual, "frames_complete", 3.0), (playable, "frames_playable", 5.0)] {
                let in_window: f64 = bins[WINDOW].iter().sum::<f64>(); // 1-s bins: frames
                let period = f64_of(f, key);
                let extra = in_window - period;
                assert!((0.0..=max_extra).contains(&extra), "flow {i} {key}: bins {in_window} vs period {period}");
                // Mean over the window's bins against the period rate (15 s active).
                let rate_key = if key == "frames_complete" { "mpeg_actual_fps" } else { "mpeg_playable_fps" };
                let mean = in_window / 15.0;
                assert!((mean - f64_of(f, rate_key)).abs() <= max_extra / 15.0 + 1e-9, "flow {i} {rate_key}");
            }
            lost_some |= f64_of(f, "frames_playable") < f64_of(f, "frames_sent") - 3.0;
            assert!(actual.iter().zip(playable.iter()).map(|(a, p)| a - p).sum::<f64>() >= 0.0);
        }
        assert!(lost_some, "the blast should cost frames, or this test checks nothing about losses");
    }

    #[test]
    fn offered_load_is_what_crossed_plus_what_was_dropped_up_to_one_queue_at_the_edges() {
        let out = run(MIX);
        let s = &out.series;
        let flows = out.summary["flows"].as_array().unwrap();
        assert_eq!(s.flow_offered_bps.len(), 9);
        let bytes = |v: &[f64]| v.iter().sum::<f64>() / 8.0; // 1-s bins: bytes
        // UDP CBR (flow 8): fixed 1000-B wire packets, so bytes dropped = drops × 1000 exactly.
        // Arrivals in the window = transmitted in it + dropped in it + (in queue or on the wire
        // at 20 s) − (those at 5 s): the difference is at most a full queue plus the packet on
        // the wire, 51 × 1000 B.
        let udp = &flows[8];
        let offered = bytes(&s.flow_offered_bps[8][WINDOW]);
        let crossed = f64_of(udp, "throughput_bps") * 15.0 / 8.0;
        let dropped = f64_of(udp, "drops") * 1000.0;
        assert!(dropped >= 50_000.0, "the blast should cost UDP packets too, got {dropped} B");
        assert!((offered - (crossed + dropped)).abs() <= 51.0 * 1000.0, "offered {offered} crossed {crossed} dropped {dropped}");
        for (i, f) in flows.iter().enumerate() {
            // Over the whole run every delivered payload byte was offered as a larger wire packet.
            let all_offered = bytes(&s.flow_offered_bps[i]);
            let all_delivered = bytes(&s.flow_goodput_bps[i]);
            assert!(all_offered > all_delivered, "flow {i}: offered {all_offered} delivered {all_delivered}");
            // And over the window, at least what crossed the link, minus what was queued at 5 s.
            let crossed = f64_of(f, "throughput_bps") * 15.0 / 8.0;
            assert!(bytes(&s.flow_offered_bps[i][WINDOW]) >= crossed - 51.0 * 1500.0, "flow {i}");
        }
        // TCP keeps offering more than it gets through under the blast.
        let tcp_offered: f64 = (4..8).map(|i| bytes(&s.flow_offered_bps[i][WINDOW])).sum();
        let tcp_crossed: f64 = (4..8).map(|i| f64_of(&flows[i], "throughput_bps") * 15.0 / 8.0).sum();
        assert!(tcp_offered > tcp_crossed, "tcp offered {tcp_offered} crossed {tcp_crossed}");
    }

    #[test]
    fn per_flow_drop_bins_add_up_to_each_flows_drops_after_the_warm_up() {
        let out = run(MIX);
        let flows = out.summary["flows"].as_array().unwrap();
        let mut any = false;
        for (i, f) in flows.iter().enumerate() {
            let in_window: f64 = out.series.flow_drops[i][WINDOW].iter().sum();
            assert_eq!(in_window, f64_of(f, "drops"), "flow {i}");
            any |= in_window > 0.0;
        }
        assert!(any, "the mix must drop packets, or this test checks nothing");
    }

    #[test]
    fn per_flow_series_are_absent_when_off_and_identical_on_a_rerun() {
        let off = run(&MIX.replace("per_flow_timeseries = true", "per_flow_timeseries = false"));
        assert!(off.series.flow_offered_bps.is_empty() && off.series.flow_actual_fps.is_empty());
        assert!(off.series.flow_playable_fps.is_empty() && off.series.flow_goodput_bps.is_empty());
        let (a, b) = (run(MIX), run(MIX));
        assert_eq!(a.series.flow_offered_bps, b.series.flow_offered_bps);
        assert_eq!(a.series.flow_actual_fps, b.series.flow_actual_fps);
        assert_eq!(a.series.flow_playable_fps, b.series.flow_playable_fps);
        // Switching the series on changes nothing else.
        assert_eq!(a.summary["flows"], off.summary["flows"]);
    }

    /// Three bulk NewReno flows (sender access delays 1, 4, 15 ms), one `repeat` flow of
    /// exponential transfers from 2 s, and 1 Mb/s of CBR UDP through a 10 Mb/s drop-tail queue of
    /// 40 packets, with `output.per_flow_tcp_state`. Every ACK is immediate (`delayed_ack =
    /// false`) and windows are capped at 64 segments, so RTT samples have hand-computable bounds.
    const TCP_STATE: &str = r#"
[run]
duration = "20s"
warmup = "5s"
seed = 4

[topology]
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }

[queue]
kind = "droptail"
limit = 40

[output]
bin = "100ms"
per_flow_timeseries = false
per_flow_tcp_state = true

[[flows]]
kind = "tcp"
count = 3
delayed_ack = false
max_window = "92672B"
access_delay = ["1ms", "4ms", "15ms"]

[[flows]]
kind = "tcp"
start = "2s"
delayed_ack = false
max_window = "92672B"
size = "100KB"
size_dist = "exponential"
repeat = true

[[flows]]
kind = "udp-cbr"
rate = "1Mbps"
packet_size = "1000B"
"#;

    /// Bins after the warm-up of `TCP_STATE` (bin ends in (5, 20] s, 100-ms bins).
    const TCP_WINDOW: std::ops::Range<usize> = 50..200;

    /// Bit patterns, so that NaN bins compare equal on a rerun.
    fn bits(series: &[(u32, Vec<f64>)]) -> Vec<(u32, Vec<u64>)> {
        series.iter().map(|(i, v)| (*i, v.iter().map(|x| x.to_bits()).collect())).collect()
    }

    #[test]
    fn tcp_state_series_are_absent_when_off_and_identical_on_a_rerun() {
        let off = run(&TCP_STATE.replace("per_flow_tcp_state = true", "per_flow_tcp_state = false"));
        assert!(off.series.flow_cwnd_segments.is_empty() && off.series.flow_srtt_s.is_empty());
        let (a, b) = (run(TCP_STATE), run(TCP_STATE));
        // The TCP flows (0..4) only, in id order; the UDP flow (4) has none.
        let ids: Vec<u32> = a.series.flow_cwnd_segments.iter().map(|(i, _)| *i).collect();
        assert_eq!(ids, vec![0, 1, 2, 3]);
        assert_eq!(a.series.flow_srtt_s.iter().map(|(i, _)| *i).collect::<Vec<_>>(), ids);
        for (_, v) in a.series.flow_cwnd_segments.iter().chain(&a.series.flow_srtt_s) {
            assert_eq!(v.len(), 200);
        }
        assert_eq!(bits(&a.series.flow_cwnd_segments), bits(&b.series.flow_cwnd_segments));
        assert_eq!(bits(&a.series.flow_srtt_s), bits(&b.series.flow_srtt_s));
        // Switching the series on changes nothing else.
        assert_eq!(a.summary["flows"], off.summary["flows"]);
        assert_eq!(a.summary["queues"], off.summary["queues"]);
        assert_eq!(a.series.queue_pkts, off.series.queue_pkts);
    }

    #[test]
    fn cwnd_bins_average_to_mean_cwnd_segments_over_the_window() {
        let out = run(TCP_STATE);
        let flows = out.summary["flows"].as_array().unwrap();
        assert!((out.series.time_s[TCP_WINDOW.start] - 5.1).abs() < 1e-9, "first bin after the warm-up ends at 5.1 s");
        for (i, cwnd) in &out.series.flow_cwnd_segments {
            // Both are ∫ cwnd dt over [5 s, 20 s) of the same step function (the window after each
            // call into the sender), one split at the sender's events, the other also at the 150
            // bin edges: they differ only by f64 rounding of ~10⁵ products and sums, relative
            // error well below 1e-9.
            let bins = cwnd[TCP_WINDOW].iter().sum::<f64>() / 150.0;
            let period = f64_of(&flows[*i as usize], "mean_cwnd_segments");
            assert!(period > 1.0, "flow {i}: mean cwnd {period}");
            assert!((bins - period).abs() <= 1e-9 * period, "flow {i}: bins {bins} vs mean_cwnd_segments {period}");
            // Not bounded by `max_window`: that caps the flight, and a sender limited by it keeps
            // growing its window (so the max of a 64-segment flow can be far above 64).
            assert!(cwnd.iter().all(|w| w.is_finite() && *w >= 0.0), "flow {i}: window finite and ≥ 0");
        }
        // The repeat flow starts at 2 s: its window is 0 until then (as in its integral) and
        // restarts at the initial window with each transfer.
        let repeat = &out.series.flow_cwnd_segments[3].1;
        assert!(repeat[..20].iter().all(|w| *w == 0.0));
        assert!(repeat[20] > 0.0);
    }

    #[test]
    fn srtt_lies_between_the_base_rtt_and_the_base_rtt_plus_a_full_drop_tail_queue() {
        let out = run(TCP_STATE);
        let tx = |bytes: u32, rate: f64| Dur::transmission(bytes, rate).as_secs_f64();
        let (data, ack, access, bottleneck) = (1500, 52, 1e9, 10e6);
        // One-way propagation + serialisation of a 1500-B segment on sender access, bottleneck
        // and receiver access, and of its 52-B ACK on the same three links back.
        let serialisation =
            2.0 * tx(data, access) + tx(data, bottleneck) + 2.0 * tx(ack, access) + tx(ack, bottleneck);
        // Queueing, at most: a segment accepted by the drop-tail queue waits behind ≤ 39 others
        // and the rest of the one on the wire, < 40 × 1.2 ms; at its sender's access link behind
        // ≤ 64 segments in flight plus as many retransmissions, 128 × 12 µs. Nothing else queues:
        // receivers share one access delay, so ACKs reach the reverse bottleneck at least a
        // forward transmission time (1.2 ms ≫ 41.6 µs) apart, and every ACK is immediate. Karn's
        // rule keeps samples away from retransmitted segments, and SRTT, an EWMA of samples
        // (rounded down in integer ns), stays within their range.
        let max_queueing = 40.0 * tx(data, bottleneck) + 128.0 * tx(data, access);
        for (i, srtt) in &out.series.flow_srtt_s {
            let sender_access = [0.001, 0.004, 0.015, 0.001][*i as usize];
            let base = 2.0 * (sender_access + 0.010 + 0.001) + serialisation;
            let mut seen = 0;
            for (t, r) in out.series.time_s.iter().zip(srtt).filter(|(_, r)| !r.is_nan()) {
                assert!(*r >= base - 1e-12, "flow {i} at {t} s: srtt {r} below base RTT {base}");
                assert!(*r <= base + max_queueing + 1e-12, "flow {i} at {t} s: srtt {r} above {}", base + max_queueing);
                seen += 1;
            }
            assert!(seen >= 100, "flow {i}: only {seen} bins with an RTT sample");
        }
        // NaN before the first RTT sample: the repeat flow starts at 2 s.
        let repeat = &out.series.flow_srtt_s[3].1;
        assert!(repeat[..20].iter().all(|r| r.is_nan()));
        // Bulk flows start at 0 and have a sample after one RTT (< 100 ms); none is ever lost.
        for (_, srtt) in &out.series.flow_srtt_s[..3] {
            assert!(srtt.iter().all(|r| !r.is_nan()));
        }
        // The queue does build: some bulk flow's SRTT is well above its base RTT at some point.
        let most = out.series.flow_srtt_s[..3].iter().flat_map(|(_, v)| v.iter().copied()).fold(0.0, f64::max);
        assert!(most > 2.0 * (0.015 + 0.011) + 0.020, "max srtt {most}: no queueing, so the bound checks little");
    }
}
