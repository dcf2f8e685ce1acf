//! The live router: real packets from two TUN devices through the scenario's dumbbell.
//!
//! The device facing the senders' network namespace feeds the forward path (the scenario's
//! `queue`), the one facing the receivers' feeds the reverse path (`reverse_queue`); both paths
//! run at the bottleneck rate with its propagation delay, and each flow's access delays are
//! added before and after the bottleneck as in the simulator. One thread runs both directions,
//! sleeping in `ppoll` until a packet arrives or the next step is due.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use aqmlab_core::engine::{stream, Dur, StreamId, Time};
use aqmlab_core::metrics::pcap::PcapWriter;
use aqmlab_core::scenario::schema::Direction;
use aqmlab_core::scenario::{FlowKind, Scenario};

use crate::emulated_path::{EmulatedPath, FlowCounters, PathDelays, PathSeries};
use crate::flow_map::{FlowMap, FlowTag};
use crate::ip_header;
use crate::packet_store::PacketStore;
use crate::tun::Tun;

/// Most packets the router holds at once (queues and delay lines); beyond, arrivals are dropped
/// and counted as `router_store_full_drops`. 2^18 full-size packets are 400 MB.
pub const STORE_CAPACITY: usize = 1 << 18;
/// Packets read from one device before the other gets its turn.
const READ_BATCH: usize = 64;
/// Longest sleep, so a stop request is seen promptly.
const MAX_SLEEP: Dur = Dur::from_millis(50);

/// What a run produced.
pub struct LiveReport {
    /// `queues`, `flow_paths` and `router` sections of `summary.json`.
    pub summary: serde_json::Value,
    /// Forward path samples.
    pub forward: PathSeries,
    /// Reverse path samples.
    pub reverse: PathSeries,
    /// End of each time-series bin, seconds.
    pub time_s: Vec<f64>,
}

/// A router for a scenario; [`LiveRouter::open`] gives it its two TUN devices.
pub struct LiveRouter {
    sc: Scenario,
    flows: FlowMap,
    devices: Option<(Tun, Tun)>,
    capture: Option<std::path::PathBuf>,
}

/// Nanoseconds on CLOCK_MONOTONIC, the clock Python's `time.monotonic_ns` reads: the traffic
/// programs in the namespaces and the router agree on when the run starts.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl LiveRouter {
    /// A router for `sc`, whose flow `i` must use port `base_port + i` on its receiving side.
    pub fn new(sc: Scenario, base_port: u16) -> LiveRouter {
        let tags = sc.flows.iter().map(|f| FlowTag { class: f.class, delay_hint: f.delay_hint }).collect();
        LiveRouter { flows: FlowMap::new(base_port, tags), sc, devices: None, capture: None }
    }

    /// Creates the two TUN devices (needs CAP_NET_ADMIN): `senders_tun` faces the namespace of
    /// the forward flows' senders, `receivers_tun` the other.
    pub fn open(&mut self, senders_tun: &str, receivers_tun: &str) -> io::Result<()> {
        self.devices = Some((Tun::create(senders_tun)?, Tun::create(receivers_tun)?));
        Ok(())
    }

    /// Captures the forward bottleneck's packets (headers) to a pcap file at `path` during `run`.
    pub fn capture_to(&mut self, path: &std::path::Path) {
        self.capture = Some(path.to_path_buf());
    }

    /// The run's timing and what the traffic programs need to play each scenario flow, as JSON:
    /// per flow its id, `[[flows]]` group,
    /// kind, direction, port, start and stop (s), and the kind's own numbers (TCP: congestion
    /// control, MSS, ECN, transfer size; UDP: rate and datagram size). Whether live can play a flow
    /// is `aqmlab.live`'s decision; this only reports what the scenario asks for.
    pub fn flow_plan(&self) -> serde_json::Value {
        let sc = &self.sc;
        let flows: Vec<serde_json::Value> = sc
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut o = serde_json::json!({
                    "id": i,
                    "group": f.group,
                    "direction": match f.direction { Direction::Forward => "forward", Direction::Reverse => "reverse" },
                    "port": u32::from(self.flows.base_port()) + i as u32,
                    "start_s": f.start.as_secs_f64(),
                    "stop_s": f.stop.min(sc.duration).as_secs_f64(),
                    "variant": f.variant,
                    "access_rate_bps": f.access.rate_bps,
                    "receiver_access_rate_bps": f.receiver_access.rate_bps,
                });
                let fields = match &f.kind {
                    FlowKind::Tcp(c) => {
                        let c = &sc.tcp_configs[*c];
                        serde_json::json!({"kind": "tcp", "congestion_control": c.congestion_control, "mss": c.mss,
                                           "ecn": c.ecn, "size": c.transfer_bytes})
                    }
                    FlowKind::UdpCbr { rate_bps, packet_size, .. } => {
                        serde_json::json!({"kind": "udp-cbr", "rate_bps": rate_bps, "packet_size": packet_size})
                    }
                    _ => serde_json::json!({"kind": "other"}),
                };
                o.as_object_mut().expect("an object literal").extend(fields.as_object().cloned().unwrap_or_default());
                o
            })
            .collect();
        serde_json::json!({
            "duration_s": sc.duration.as_secs_f64(),
            "warmup_s": sc.warmup.as_secs_f64(),
            "bin_s": sc.output.bin.as_secs_f64(),
            "seed": sc.seed,
            "bottleneck_rate_bps": sc.bottleneck.rate_bps,
            "flows": flows,
        })
    }

    /// The paths, with each flow's access delays placed on the side its hosts sit on.
    fn paths(&self) -> (EmulatedPath, EmulatedPath) {
        let sc = &self.sc;
        let bn = sc.bottleneck.delay;
        // (sender-namespace side, receiver-namespace side) access delay of each flow.
        let sides: Vec<(Dur, Dur)> = sc
            .flows
            .iter()
            .map(|f| match f.direction {
                Direction::Forward => (f.access.delay, f.receiver_access.delay),
                Direction::Reverse => (f.receiver_access.delay, f.access.delay),
            })
            .collect();
        let delays = |near: fn(&(Dur, Dur)) -> Dur, far: fn(&(Dur, Dur)) -> Dur| PathDelays {
            before: sides.iter().map(near).collect(),
            after: sides.iter().map(|s| bn + far(s)).collect(),
            after_default: bn,
        };
        let path = |dir: u32, spec: &aqmlab_core::scenario::QueueSpec, d: PathDelays| {
            let qdisc = spec.build(if dir == 0 { "queue" } else { "reverse_queue" }, sc.bottleneck.rate_bps).expect("validated");
            let rng = stream(sc.seed, StreamId::Queue(dir));
            EmulatedPath::new(qdisc, rng, sc.bottleneck.rate_bps, d, sc.warmup, sc.duration, sc.output.bin)
                .with_rate_changes(sc.bottleneck.rate_bps, sc.rate_changes.clone())
                .with_trace(sc.traces[dir as usize].clone())
        };
        let forward = path(0, &sc.queue, delays(|s| s.0, |s| s.1))
            .with_loss(sc.bottleneck.loss, stream(sc.seed, StreamId::LinkLoss(0)));
        let reverse = path(1, &sc.reverse_queue, delays(|s| s.1, |s| s.0));
        (forward, reverse)
    }

    /// Runs from `epoch_ns` (CLOCK_MONOTONIC; time zero of the scenario) until the scenario's
    /// duration has passed or `stop` is set. Packets that arrive before the epoch count as
    /// arriving at time zero.
    pub fn run(mut self, epoch_ns: u64, stop: &AtomicBool) -> io::Result<LiveReport> {
        let (senders, receivers) = self
            .devices
            .take()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "no TUN devices: call open first"))?;
        // Wake-ups within a microsecond of the requested time, not the default 50 µs slack.
        // SAFETY: prctl(PR_SET_TIMERSLACK) takes one integer argument and affects this thread.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000 as libc::c_ulong) };
        let (mut forward, mut reverse) = self.paths();
        if let Some(path) = &self.capture {
            let file = std::fs::File::create(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            forward = forward.with_capture(PcapWriter::new(io::BufWriter::new(file)));
        }
        let mut store = PacketStore::new(STORE_CAPACITY);
        let mut buf = vec![0u8; 65536];
        let mut delivered = Vec::new();
        let mut io = IoCounters::default();
        let clock = || Time(monotonic_ns().saturating_sub(epoch_ns));
        let end = self.sc.duration;
        loop {
            let now = clock();
            if now >= end || stop.load(Ordering::Relaxed) {
                break;
            }
            read_into(&senders, &mut forward, &mut self.flows, &mut store, &mut buf, now, &mut io)?;
            read_into(&receivers, &mut reverse, &mut self.flows, &mut store, &mut buf, now, &mut io)?;
            forward.advance(now, &mut store, &mut delivered);
            write_out(&receivers, &mut delivered, &mut store, &mut io);
            reverse.advance(now, &mut store, &mut delivered);
            write_out(&senders, &mut delivered, &mut store, &mut io);
            let next = [forward.next_due(), reverse.next_due(), Some(end)].into_iter().flatten().min().unwrap_or(end);
            let wait = next.saturating_since(clock()).min(MAX_SLEEP);
            if wait > Dur::ZERO {
                sleep_until_readable(&senders, &receivers, wait)?;
            }
        }
        let stopped_early = clock() < end;
        let held = store.held();
        let flow_paths = flow_paths_json(forward.flows(), reverse.flows());
        let (fwd_queue, fwd_series, captured) = forward.finish("bottleneck", self.sc.queue.kind());
        let (rev_queue, rev_series, _) = reverse.finish("reverse", self.sc.reverse_queue.kind());
        captured.map_err(|e| io::Error::new(e.kind(), format!("writing the pcap failed: {e}")))?;
        let bin_s = self.sc.output.bin.as_secs_f64();
        let time_s = (1..=fwd_series.queue_pkts.len()).map(|i| i as f64 * bin_s).collect();
        let summary = serde_json::json!({
            "queues": [fwd_queue, rev_queue],
            "flow_paths": flow_paths,
            "router": {
                "stopped_early": stopped_early,
                "packets_read": io.read,
                "packets_written": io.written,
                "write_errors": io.write_errors,
                "last_write_error": io.last_write_error,
                "held_at_end": held,
            },
        });
        Ok(LiveReport { summary, forward: fwd_series, reverse: rev_series, time_s })
    }
}

/// Packet counts of the two devices.
#[derive(Default)]
struct IoCounters {
    read: u64,
    written: u64,
    write_errors: u64,
    last_write_error: Option<String>,
}

/// Reads what `tun` has waiting (at most a batch) into `path`.
fn read_into(
    tun: &Tun,
    path: &mut EmulatedPath,
    flows: &mut FlowMap,
    store: &mut PacketStore,
    buf: &mut [u8],
    now: Time,
    io: &mut IoCounters,
) -> io::Result<()> {
    for _ in 0..READ_BATCH {
        let Some(n) = tun.recv(buf).map_err(|e| io::Error::new(e.kind(), format!("reading {}: {e}", tun.name())))? else {
            break;
        };
        io.read += 1;
        let pkt = flows.describe(&ip_header::parse(&buf[..n]), n, now);
        match store.insert(&buf[..n], pkt) {
            Some(slot) => path.arrive(now, slot, store),
            None => path.store_full_drops += 1,
        }
    }
    Ok(())
}

/// Hands the delivered packets to `tun` and frees their slots. A failed write (the namespace's
/// device going down at the end of a run) loses that packet, as a wire would, and is counted.
fn write_out(tun: &Tun, delivered: &mut Vec<u32>, store: &mut PacketStore, io: &mut IoCounters) {
    for slot in delivered.drain(..) {
        match tun.send(store.bytes_mut(slot)) {
            Ok(()) => io.written += 1,
            Err(e) => {
                io.write_errors += 1;
                io.last_write_error = Some(format!("{}: {e}", tun.name()));
            }
        }
        store.release(slot);
    }
}

/// Sleeps until either device has a packet or `wait` has passed.
fn sleep_until_readable(a: &Tun, b: &Tun, wait: Dur) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut fds = [a.as_raw_fd(), b.as_raw_fd()].map(|fd| libc::pollfd { fd, events: libc::POLLIN, revents: 0 });
    let ts = libc::timespec { tv_sec: (wait.0 / 1_000_000_000) as _, tv_nsec: (wait.0 % 1_000_000_000) as _ };
    // SAFETY: `fds` is a valid array of two pollfd; `ts` outlives the call; no signal mask.
    let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    Ok(())
}

/// Per flow id, what each path did with its packets after the warm-up.
fn flow_paths_json(forward: &[FlowCounters], reverse: &[FlowCounters]) -> serde_json::Value {
    let n = forward.len().max(reverse.len());
    let empty = FlowCounters::default();
    let side = |c: Option<&FlowCounters>| {
        let c = c.unwrap_or(&empty);
        let d = &c.delay;
        serde_json::json!({"arrivals": c.arrivals, "drops": c.drops, "marks": c.marks, "bytes_sent": c.bytes_sent,
                           "delay_mean_s": d.mean_s_if_any(), "delay_p50_s": d.quantile_s_if_any(0.5),
                           "delay_p95_s": d.quantile_s_if_any(0.95), "delay_p99_s": d.quantile_s_if_any(0.99)})
    };
    (0..n).map(|i| serde_json::json!({"id": i, "forward": side(forward.get(i)), "reverse": side(reverse.get(i))})).collect()
}
