//! One direction of the emulated dumbbell: the near access delay, the bottleneck's queue
//! discipline and link, then the bottleneck's propagation delay and the far access delay.
//!
//! Time here is the run's clock, but every step happens at the instant it is due, not when the
//! router happened to wake: a packet leaves the queue at exactly the end of the previous
//! transmission even if the thread woke 50 µs later. The discipline therefore sees the same
//! sequence of times it would in the simulator, and the wake-up jitter only delays the hand-over
//! to the kernel.
//!
//! Conventions are the simulator's (`topology::dumbbell`): a packet leaves the discipline when
//! its transmission starts; an idle link reports itself to the discipline with the time it went
//! idle (RED's idle decay); counts and time averages cover the time after the warm-up.

use aqmlab_core::engine::{Dur, Rng, Time};
use aqmlab_core::metrics::pcap::PcapWriter;
use aqmlab_core::metrics::{Histogram, QueueMonitor};
use aqmlab_core::packet::{Ecn, PacketKind};
use aqmlab_core::qdisc::{AnyQdisc, DropBuf, Qdisc, QdiscStats, Verdict};
use aqmlab_core::topology::rate_schedule::{RateChange, ScheduledRate};
use rand::Rng as _;

use crate::delay_line::DelayLine;
use crate::ip_header;
use crate::packet_store::PacketStore;

/// Delays of each flow on this path: before the queue (the near access link) and after it
/// (bottleneck propagation plus the far access link). Flows the scenario does not name get no
/// access delay.
#[derive(Clone, Debug)]
pub struct PathDelays {
    /// Near access delay of scenario flow i.
    pub before: Vec<Dur>,
    /// Bottleneck plus far access delay of scenario flow i.
    pub after: Vec<Dur>,
    /// After-queue delay of packets of no scenario flow.
    pub after_default: Dur,
}

impl PathDelays {
    fn before(&self, flow: u32) -> Dur {
        self.before.get(flow as usize).copied().unwrap_or(Dur::ZERO)
    }
    fn after(&self, flow: u32) -> Dur {
        self.after.get(flow as usize).copied().unwrap_or(self.after_default)
    }
}

/// What happened to one flow's packets on this path after the warm-up.
#[derive(Clone, Debug, Default)]
pub struct FlowCounters {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Packets dropped by the discipline (arrivals and from inside the queue).
    pub drops: u64,
    /// Packets the discipline marked CE.
    pub marks: u64,
    /// IP bytes that finished transmission.
    pub bytes_sent: u64,
    /// One-way delay of its data packets (not pure ACKs) through the emulated network, from
    /// arrival at the router to hand-over at the far end: access delays, queueing, transmission
    /// and propagation, as the simulator's one-way delay counts them (host stacks excluded).
    pub delay: Histogram,
    /// Bytes in the current time-series bin.
    bin_bytes: u64,
}

/// The path's samples, one per time-series bin.
#[derive(Clone, Debug, Default)]
pub struct PathSeries {
    /// Packets in the discipline at each bin's end.
    pub queue_pkts: Vec<f64>,
    /// Bytes in the discipline at each bin's end.
    pub queue_bytes: Vec<f64>,
    /// The discipline's smoothed estimate at each bin's end (NaN without one).
    pub queue_avg: Vec<f64>,
    /// Per flow id: bits/s that finished transmission in each bin.
    pub flow_throughput_bps: Vec<Vec<f64>>,
}

/// One direction of the emulated bottleneck.
pub struct EmulatedPath {
    qdisc: AnyQdisc,
    rng: Rng,
    /// Independent random loss before the queue (the scenario's bottleneck `loss`), and its stream.
    loss: Option<(f64, Rng)>,
    drops: DropBuf,
    rate: ScheduledRate,
    busy_until: Time,
    idle_reported: bool,
    ingress: DelayLine,
    egress: DelayLine,
    delays: PathDelays,
    monitor: QueueMonitor,
    warmup: Time,
    end: Time,
    stats_at_warmup: Option<QdiscStats>,
    details_at_warmup: Vec<(&'static str, u64)>,
    flows: Vec<FlowCounters>,
    bin: Dur,
    next_bin: Time,
    series: PathSeries,
    /// Packets dropped because the router's packet store was full (not the discipline's doing).
    pub store_full_drops: u64,
    /// Where packets starting their transmission are captured, if anywhere.
    capture: Option<PcapWriter<std::io::BufWriter<std::fs::File>>>,
}

/// Bytes of each packet kept in a capture: IP and TCP headers with options fit in 120.
pub const CAPTURE_SNAPLEN: usize = 128;

impl EmulatedPath {
    /// A path through `qdisc` at `rate_bps`, measured over [`warmup`, `end`] in bins of `bin`.
    pub fn new(qdisc: AnyQdisc, rng: Rng, rate_bps: f64, delays: PathDelays, warmup: Time, end: Time, bin: Dur) -> EmulatedPath {
        EmulatedPath {
            qdisc,
            rng,
            loss: None,
            drops: DropBuf::new(),
            rate: ScheduledRate::constant(rate_bps),
            busy_until: Time::ZERO,
            idle_reported: false,
            ingress: DelayLine::default(),
            egress: DelayLine::default(),
            delays,
            monitor: QueueMonitor::new(warmup),
            warmup,
            end,
            stats_at_warmup: None,
            details_at_warmup: Vec::new(),
            flows: Vec::new(),
            bin,
            next_bin: Time::ZERO + bin,
            series: PathSeries::default(),
            store_full_drops: 0,
            capture: None,
        }
    }

    /// Packets entering the queue are lost with probability `p`, drawn from `rng`.
    pub fn with_loss(mut self, p: f64, rng: Rng) -> EmulatedPath {
        self.loss = (p > 0.0).then_some((p, rng));
        self
    }

    /// Changes the link's rate at the given times (the scenario's `rate_schedule`).
    pub fn with_rate_changes(mut self, rate_bps: f64, changes: Vec<RateChange>) -> EmulatedPath {
        self.rate = ScheduledRate::new(rate_bps, changes);
        self
    }

    /// Captures the headers of every packet as its transmission starts (as the simulator's
    /// `--pcap` does at the bottleneck), timestamped with the run's clock.
    pub fn with_capture(mut self, writer: PcapWriter<std::io::BufWriter<std::fs::File>>) -> EmulatedPath {
        self.capture = Some(writer);
        self
    }

    /// A packet stored in `slot` entered the path at `now`.
    pub fn arrive(&mut self, now: Time, slot: u32, store: &PacketStore) {
        let flow = store.packet(slot).flow;
        self.ingress.push(now + self.delays.before(flow), slot);
    }

    /// When the discipline may next send: when the link is free, or later when a shaping
    /// discipline (`Qdisc::next_wakeup`) holds its packets back until then.
    fn tx_due(&self) -> Option<Time> {
        (self.qdisc.len_packets() > 0).then(|| self.qdisc.next_wakeup().map_or(self.busy_until, |w| w.max(self.busy_until)))
    }

    /// When the path next has something to do, if anything is pending.
    pub fn next_due(&self) -> Option<Time> {
        let tx = self.tx_due();
        [self.ingress.next_release(), tx, self.egress.next_release(), Some(self.next_bin)].into_iter().flatten().min()
    }

    /// Runs every step due at or before `now`, in time order; slots whose packets reached the far
    /// end are appended to `delivered` (the caller writes and releases them).
    pub fn advance(&mut self, now: Time, store: &mut PacketStore, delivered: &mut Vec<u32>) {
        loop {
            let tx = self.tx_due();
            let due = [self.egress.next_release(), tx, self.ingress.next_release()].into_iter().flatten().min();
            let Some(t) = due.filter(|&t| t <= now) else { break };
            self.close_bins_until(t);
            if let Some((_, slot)) = self.egress.pop_due(t) {
                let p = *store.packet(slot);
                if t >= self.warmup && p.kind != PacketKind::TcpAck {
                    self.counters(p.flow).delay.record(t.0.saturating_sub(p.sent_at.0));
                }
                delivered.push(slot);
            } else if tx == Some(t) {
                self.start_transmission(t, store);
            } else if let Some((at, slot)) = self.ingress.pop_due(t) {
                self.enqueue(at, slot, store);
            }
        }
        self.close_bins_until(now);
    }

    fn measuring(&self, t: Time) -> bool {
        t >= self.warmup
    }

    fn counters(&mut self, flow: u32) -> &mut FlowCounters {
        let i = flow as usize;
        if i >= self.flows.len() {
            self.flows.resize_with(i + 1, FlowCounters::default);
        }
        &mut self.flows[i]
    }

    fn enqueue(&mut self, t: Time, slot: u32, store: &mut PacketStore) {
        if let Some((p, rng)) = self.loss.as_mut() {
            if rng.gen::<f64>() < *p {
                let flow = store.packet(slot).flow;
                store.release(slot);
                if self.measuring(t) {
                    self.monitor.link_losses += 1;
                    self.counters(flow).drops += 1;
                }
                return;
            }
        }
        let idle = self.busy_until <= t;
        if idle && !self.idle_reported {
            let at = self.busy_until;
            self.start_transmission(at, store);
        }
        let mut pkt = *store.packet(slot);
        pkt.seq = slot;
        pkt.enqueued_at = t;
        let verdict = self.qdisc.enqueue(pkt, t, &mut self.rng, &mut self.drops);
        let measuring = self.measuring(t);
        if measuring {
            let c = self.counters(pkt.flow);
            c.arrivals += 1;
            match verdict {
                Verdict::Marked => c.marks += 1,
                Verdict::Dropped(_) => c.drops += 1,
                Verdict::Enqueued => {}
            }
        }
        if matches!(verdict, Verdict::Dropped(_)) {
            store.release(slot);
        }
        if let Some(flow) = self.qdisc.take_front_mark() {
            if measuring {
                self.counters(flow).marks += 1;
            }
        }
        self.release_inner_drops(t, store);
        self.monitor.on_change(t, self.qdisc.len_packets(), self.qdisc.len_bytes());
        if idle {
            self.start_transmission(t, store);
        }
    }

    /// Frees the slots of packets the discipline dropped from inside its queue.
    fn release_inner_drops(&mut self, t: Time, store: &mut PacketStore) {
        let measuring = self.measuring(t);
        let mut drops = std::mem::take(&mut self.drops);
        for (p, _) in drops.drain(..) {
            if measuring {
                self.counters(p.flow).drops += 1;
            }
            store.release(p.seq);
        }
        self.drops = drops; // keeps its allocation
    }

    /// The link is free at `t`: the discipline's next packet starts its transmission, or the
    /// discipline learns that the link is idle.
    fn start_transmission(&mut self, t: Time, store: &mut PacketStore) {
        if let (Some(up_at), true) = (self.rate.down_until(t), self.qdisc.len_packets() > 0) {
            // An outage (`rate_schedule`): the packets stay queued until the link is back up.
            self.busy_until = up_at;
            self.idle_reported = false;
            return;
        }
        let marks_before = self.qdisc.stats().marks;
        let next = self.qdisc.dequeue(t, &mut self.drops);
        self.monitor.on_change(t, self.qdisc.len_packets(), self.qdisc.len_bytes());
        self.release_inner_drops(t, store);
        let Some(pkt) = next else {
            self.idle_reported = true;
            return;
        };
        self.idle_reported = false;
        self.monitor.on_dequeue(t, pkt.enqueued_at);
        if self.qdisc.stats().marks > marks_before && self.measuring(t) {
            self.counters(pkt.flow).marks += 1;
        }
        let slot = pkt.seq;
        // The discipline marks its descriptor; the packet on the wire is marked here. Only an
        // ECN-capable packet can carry CE (`mark_ce` refuses the others).
        if pkt.ecn == Ecn::Ce && store.packet(slot).ecn != Ecn::Ce {
            ip_header::mark_ce(store.bytes_mut(slot));
        }
        if let Some(w) = self.capture.as_mut() {
            w.capture_bytes(t, store.bytes_mut(slot), CAPTURE_SNAPLEN);
        }
        let tx = self.rate.transmission(pkt.size);
        let done = t + tx;
        self.busy_until = done;
        self.monitor.on_transmit(t, tx.0, self.end);
        if done >= self.warmup && done <= self.end {
            let c = self.counters(pkt.flow);
            c.bytes_sent += u64::from(pkt.size);
            c.bin_bytes += u64::from(pkt.size);
        }
        self.egress.push(done + self.delays.after(pkt.flow), slot);
    }

    /// Samples every bin boundary up to `t`, and the warm-up snapshot once it is passed. The state
    /// is constant between steps, so a boundary sampled before the next step is exact.
    fn close_bins_until(&mut self, t: Time) {
        if self.stats_at_warmup.is_none() && t >= self.warmup {
            self.stats_at_warmup = Some(*self.qdisc.stats());
            self.details_at_warmup = self.qdisc.detail_counters();
        }
        while self.next_bin <= t && self.next_bin <= self.end {
            let s = &mut self.series;
            s.queue_pkts.push(self.qdisc.len_packets() as f64);
            s.queue_bytes.push(self.qdisc.len_bytes() as f64);
            s.queue_avg.push(self.qdisc.average().unwrap_or(f64::NAN));
            let bins = s.queue_pkts.len();
            s.flow_throughput_bps.resize_with(self.flows.len(), Vec::new);
            let secs = self.bin.as_secs_f64();
            for (c, col) in self.flows.iter_mut().zip(&mut s.flow_throughput_bps) {
                col.resize(bins - 1, 0.0);
                col.push(c.bin_bytes as f64 * 8.0 / secs);
                c.bin_bytes = 0;
            }
            self.next_bin += self.bin;
        }
    }

    /// The per-flow counters, indexed by flow id.
    pub fn flows(&self) -> &[FlowCounters] {
        &self.flows
    }

    /// The `summary.json` entry of this path's queue over [warm-up, `end`], its series, and the
    /// outcome of its capture (the first write error, if one failed).
    pub fn finish(mut self, name: &str, kind: &str) -> (serde_json::Value, PathSeries, std::io::Result<()>) {
        self.close_bins_until(self.end);
        let captured = self.capture.take().map_or(Ok(()), PcapWriter::finish);
        let span_s = self.end.saturating_since(self.warmup).as_secs_f64();
        let (mean_p, mean_b) = self.monitor.means(self.end);
        let st = self.qdisc.stats().since(&self.stats_at_warmup.unwrap_or_default());
        let mut q = st.summary_fields();
        let extra = serde_json::json!({
            "name": name,
            "kind": kind,
            "marks": st.marks,
            "link_losses": self.monitor.link_losses,
            "mean_len_packets": mean_p,
            "mean_len_bytes": mean_b,
            "mean_sojourn_s": self.monitor.sojourn.mean_s(),
            "p50_sojourn_s": self.monitor.sojourn.quantile_s(0.5),
            "p99_sojourn_s": self.monitor.sojourn.quantile_s(0.99),
            "utilization": self.monitor.busy_ns as f64 * 1e-9 / span_s,
            "router_store_full_drops": self.store_full_drops,
        });
        q.extend(extra.as_object().cloned().unwrap_or_default());
        let at_warmup = |name: &str| self.details_at_warmup.iter().find(|(n, _)| *n == name).map_or(0, |(_, v)| *v);
        let details: serde_json::Map<String, serde_json::Value> =
            self.qdisc.detail_counters().into_iter().map(|(k, v)| (k.to_string(), (v - at_warmup(k)).into())).collect();
        if !details.is_empty() {
            q.insert("details".into(), details.into());
        }
        let bins = self.series.queue_pkts.len();
        for col in &mut self.series.flow_throughput_bps {
            col.resize(bins, 0.0);
        }
        (serde_json::Value::Object(q), self.series, captured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqmlab_core::engine::{stream, StreamId};
    use aqmlab_core::packet::{Packet, PacketKind};
    use aqmlab_core::scenario::validate::queue_spec;
    use aqmlab_core::scenario::QueueSpec;

    const MS: u64 = 1_000_000;

    fn path(queue: &str, rate_bps: f64, delays: PathDelays) -> EmulatedPath {
        let table: toml::Table = toml::from_str(queue).unwrap();
        let spec = queue_spec(Some(&table), "queue", QueueSpec::DropTail(Default::default())).unwrap();
        let q = spec.build("queue", rate_bps).unwrap();
        EmulatedPath::new(q, stream(1, StreamId::Queue(0)), rate_bps, delays, Time::ZERO, Time(10_000 * MS), Dur(100 * MS))
    }

    fn delays(before: &[u64], after_ms: u64) -> PathDelays {
        PathDelays {
            before: before.iter().map(|&b| Dur(b * MS)).collect(),
            after: before.iter().map(|_| Dur(after_ms * MS)).collect(),
            after_default: Dur(after_ms * MS),
        }
    }

    /// A 1500-byte ECN-capable IPv4 packet of `flow` (its descriptor as the flow map makes it).
    fn put(store: &mut PacketStore, flow: u32) -> u32 {
        let mut bytes = vec![0u8; 1500];
        bytes[0] = 0x45;
        bytes[1] = 0x02; // ECT(0)
        bytes[2..4].copy_from_slice(&1500u16.to_be_bytes());
        bytes[9] = 17;
        let mut p = Packet::new(PacketKind::Udp, flow);
        p.size = 1500;
        p.ecn = aqmlab_core::packet::Ecn::Ect;
        store.insert(&bytes, p).unwrap()
    }

    /// Runs the path until `until_ms`, returning (delivery time in ms, slot) of each delivery and
    /// releasing the delivered slots as the router does.
    fn deliveries(p: &mut EmulatedPath, store: &mut PacketStore, until_ms: u64) -> Vec<(u64, u32)> {
        let mut out = Vec::new();
        let mut now = Time::ZERO;
        let mut delivered = Vec::new();
        while now.0 <= until_ms * MS {
            p.advance(now, store, &mut delivered);
            for s in delivered.drain(..) {
                store.release(s);
                out.push((now.0 / MS, s));
            }
            now = p.next_due().unwrap_or(Time(u64::MAX)).max(Time(now.0 + 1));
        }
        out
    }

    #[test]
    fn serialises_at_the_link_rate_then_adds_the_propagation_delay() {
        // 1500 B at 12 Mb/s: 1 ms each; 5 ms after the queue.
        let mut p = path("kind = \"droptail\"\nlimit = 10", 12e6, delays(&[0], 5));
        let mut store = PacketStore::new(16);
        let slots: Vec<u32> = (0..3).map(|_| put(&mut store, 0)).collect();
        for &s in &slots {
            p.arrive(Time::ZERO, s, &store);
        }
        let got = deliveries(&mut p, &mut store, 20);
        assert_eq!(got, vec![(6, slots[0]), (7, slots[1]), (8, slots[2])]);
        // Their one-way delays through the emulated network: 6, 7 and 8 ms.
        let d = &p.flows()[0].delay;
        assert_eq!((d.count(), d.mean_s()), (3, 0.007));
    }

    #[test]
    fn a_shaping_discipline_sends_at_its_wakeups_not_the_link_rate() {
        // CAKE shaping to 6 Mb/s on a 12 Mb/s link: 1500 B take 1 ms on the wire but leave the
        // shaper 2 ms apart (`Qdisc::next_wakeup`), then 5 ms of propagation.
        let mut p = path("kind = \"cake\"\nbandwidth = \"6Mbps\"", 12e6, delays(&[0], 5));
        let mut store = PacketStore::new(16);
        let slots: Vec<u32> = (0..3).map(|_| put(&mut store, 0)).collect();
        for &s in &slots {
            p.arrive(Time::ZERO, s, &store);
        }
        assert_eq!(deliveries(&mut p, &mut store, 20), vec![(6, slots[0]), (8, slots[1]), (10, slots[2])]);
    }

    #[test]
    fn a_rate_schedule_holds_packets_through_an_outage_then_sends_at_the_new_rate() {
        // 1500 B at 12 Mb/s take 1 ms. The link is down from 0.5 ms to 4 ms, then runs at 6 Mb/s
        // (2 ms per packet): the first packet is already on the wire and arrives at 1 ms, the
        // second waits out the outage (4 ms + 2 ms), the third follows it (8 ms).
        let changes = vec![RateChange { at: Time(MS / 2), bps: 0.0 }, RateChange { at: Time(4 * MS), bps: 6e6 }];
        let mut p = path("kind = \"droptail\"", 12e6, delays(&[0], 0)).with_rate_changes(12e6, changes);
        let mut store = PacketStore::new(16);
        let slots: Vec<u32> = (0..3).map(|_| put(&mut store, 0)).collect();
        for &s in &slots {
            p.arrive(Time::ZERO, s, &store);
        }
        assert_eq!(deliveries(&mut p, &mut store, 20), vec![(1, slots[0]), (6, slots[1]), (8, slots[2])]);
    }

    #[test]
    fn access_delay_orders_arrivals_at_the_queue() {
        // Flow 0 has 3 ms of access delay, flow 1 none: flow 1's later packet is served first.
        let mut p = path("kind = \"droptail\"", 12e6, delays(&[3, 0], 0));
        let mut store = PacketStore::new(16);
        let (a, b) = (put(&mut store, 0), put(&mut store, 1));
        p.arrive(Time::ZERO, a, &store);
        p.arrive(Time(MS), b, &store);
        assert_eq!(deliveries(&mut p, &mut store, 20), vec![(2, b), (4, a)]);
    }

    #[test]
    fn a_full_buffer_drops_and_frees_the_slot() {
        let mut p = path("kind = \"droptail\"\nlimit = 2", 12e6, delays(&[0], 0));
        let mut store = PacketStore::new(16);
        for _ in 0..5 {
            let s = put(&mut store, 0);
            p.arrive(Time::ZERO, s, &store);
        }
        // One on the wire, two queued, two dropped at once.
        let got = deliveries(&mut p, &mut store, 1);
        assert_eq!(got.len(), 1);
        assert_eq!((p.flows()[0].arrivals, p.flows()[0].drops, store.held()), (5, 2, 2));
    }

    #[test]
    fn marks_the_packets_the_discipline_marks_and_only_those() {
        // RED on the instantaneous queue with ECN: a burst pushes it past min_th, so it marks.
        let red = "kind = \"red\"\nlimit = 100\nmin_th = 1\nmax_th = 50\nmax_p = 1.0\nweight = 1.0\necn = true";
        let mut p = path(red, 12e6, delays(&[0], 0));
        let mut store = PacketStore::new(64);
        for _ in 0..30 {
            let s = put(&mut store, 0);
            p.arrive(Time::ZERO, s, &store);
        }
        let mut marked_on_wire = 0;
        let mut now = Time::ZERO;
        let mut delivered = Vec::new();
        while now.0 <= 40 * MS {
            p.advance(now, &mut store, &mut delivered);
            for s in delivered.drain(..) {
                let ecn = ip_header::parse(store.bytes_mut(s)).ecn;
                marked_on_wire += usize::from(ecn == 0b11);
                store.release(s);
            }
            now = Time(now.0 + MS / 2);
        }
        let st = p.finish("bottleneck", "red").0;
        assert!(st["marks"].as_u64().unwrap() > 0, "RED marked nothing: {st}");
        assert_eq!(st["marks"].as_u64().unwrap(), marked_on_wire as u64);
        assert_eq!(st["drops"].as_u64().unwrap(), 0);
    }
}
