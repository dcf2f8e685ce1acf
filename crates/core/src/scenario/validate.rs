//! From a parsed [`ScenarioFile`] to a validated [`Scenario`]: defaults applied (and written back
//! for the echo), units converted, impossible values rejected with the key path and what is
//! allowed. Nothing downstream re-checks these values.

use rand::Rng as _;

use super::schema::*;
use super::units::{Bytes, Duration, WindowCap};
use crate::engine::{stream, Dur, StreamId, Time};
use crate::error::{join, ConfigError, ConfigResult};
use crate::metrics::flow_counter::FlowCounterParams;
use crate::traffic::transfers::Transfers;
use crate::topology::delivery_trace::DeliveryTrace;
use crate::topology::rate_schedule::RateChange;
use crate::traffic::http::{pareto_scale_for_mean, HttpDistributions, HttpModel, HttpStart, Parametric, MAH_THINK_MAX_S};
use crate::qdisc::{
    AecnParams, AnyQdisc, BmreParams, CbqParams, CbtParams, CsfqParams, DropFrontParams, DrrParams, DropTailParams, EarlyRandomDropParams,
    FpqParams, FredParams, RandomDropParams, RedParams, RioParams, WhiteFlavour, WhiteParams,
};
use crate::qdisc::{PiParams, RemParams, TsqParams};
use crate::qdisc::{CodelParams, FqCodelParams};
use crate::qdisc::PieParams;
use crate::qdisc::FqPieParams;
use crate::qdisc::{BlueParams, SfbParams};
use crate::qdisc::{ChokeParams, SfqParams};
use crate::qdisc::{CobaltQdiscParams, FqCobaltParams};
use crate::qdisc::DualPi2Params;
use crate::qdisc::CakeParams;
use crate::scenario::units::Limit;
use crate::transport::tcp::{CongestionControl, DelayedAck, EcnStyle, FastRetransmitGuard, LedbatConfig, LedbatVariant, Recovery, TcpConfig, TcpProfile, TcpVariant};
use crate::traffic::mpeg::MpegParams;
use crate::traffic::proshare::ProshareParams;
use super::media::{mpeg_params, proshare_params, MPEG_KEYS, PROSHARE_KEYS};

/// A link after validation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkSpec {
    /// Bits per second.
    pub rate_bps: f64,
    /// One-way propagation delay.
    pub delay: Dur,
    /// Random loss probability.
    pub loss: f64,
    /// Packets held between the discipline and the wire.
    pub tx_ring: u32,
}

/// A queue discipline, validated but not yet built.
#[derive(Clone, Debug)]
pub enum QueueSpec {
    /// `kind = "droptail"`
    DropTail(DropTailParams),
    /// `kind = "drop-front"`
    DropFront(DropFrontParams),
    /// `kind = "early-random-drop"`
    EarlyRandomDrop(EarlyRandomDropParams),
    /// `kind = "random-drop"`
    RandomDrop(RandomDropParams),
    /// `kind = "red"`
    Red(RedParams),
    /// `kind = "fpq"`
    Fpq(FpqParams),
    /// `kind = "rio"`
    Rio(RioParams),
    /// `kind = "fred"`
    Fred(FredParams),
    /// `kind = "cbt"`
    Cbt(CbtParams),
    /// `kind = "cbq"`
    Cbq(CbqParams),
    /// `kind = "chardonnay"` or `"chablis"`
    White(WhiteFlavour, WhiteParams),
    /// `kind = "aecn"`
    Aecn(AecnParams),
    /// `kind = "drr"`
    Drr(DrrParams),
    /// `kind = "csfq"`
    Csfq(CsfqParams),
    /// `kind = "bmre"`
    Bmre(BmreParams),
    /// `kind = "pi"`
    Pi(PiParams),
    /// `kind = "tsq"`
    Tsq(TsqParams),
    /// `kind = "codel"`
    Codel(CodelParams),
    /// `kind = "fq_codel"`
    FqCodel(FqCodelParams),
    /// `kind = "pie"`
    Pie(PieParams),
    /// `kind = "fq_pie"`
    FqPie(FqPieParams),
    /// `kind = "blue"`
    Blue(BlueParams),
    /// `kind = "sfb"`
    Sfb(SfbParams),
    /// `kind = "dualpi2"`
    DualPi2(DualPi2Params),
    /// `kind = "cake"`
    Cake(CakeParams),
    /// `kind = "rem"`
    Rem(RemParams),
    /// `kind = "sfq"`
    Sfq(SfqParams),
    /// `kind = "choke"`
    Choke(ChokeParams),
    /// `kind = "cobalt"`
    Cobalt(CobaltQdiscParams),
    /// `kind = "fq_cobalt"`
    FqCobalt(FqCobaltParams),
}

/// Discipline names accepted by `kind`, for messages and `aqmlab qdiscs`.
pub const QDISC_KINDS: &[&str] =
    &["droptail", "drop-front", "random-drop", "early-random-drop", "red", "rio", "fred", "cbt", "cbq", "fpq", "chardonnay", "chablis",
      "aecn", "drr", "csfq",
      "bmre", "pi", "tsq", "codel", "fq_codel",
      "pie", "fq_pie", "blue", "sfb", "dualpi2", "cake", "rem",
      "sfq", "choke", "cobalt", "fq_cobalt"];

impl QueueSpec {
    /// Builds a fresh discipline instance for a link of `rate_bps`.
    pub fn build(&self, path: &str, rate_bps: f64) -> ConfigResult<AnyQdisc> {
        Ok(match self {
            QueueSpec::DropTail(p) => AnyQdisc::DropTail(p.validate(path)?),
            QueueSpec::DropFront(p) => AnyQdisc::DropFront(p.validate(path)?),
            QueueSpec::EarlyRandomDrop(p) => AnyQdisc::EarlyRandomDrop(p.validate(path)?),
            QueueSpec::RandomDrop(p) => AnyQdisc::RandomDrop(p.validate(path)?),
            QueueSpec::Red(p) => AnyQdisc::Red(p.validate(path, rate_bps)?),
            QueueSpec::Fpq(p) => AnyQdisc::Fpq(p.validate(path, rate_bps)?),
            QueueSpec::Rio(p) => AnyQdisc::Rio(p.validate(path, rate_bps)?),
            QueueSpec::Fred(p) => AnyQdisc::Fred(p.validate(path, rate_bps)?),
            QueueSpec::Cbt(p) => AnyQdisc::Cbt(p.validate(path, rate_bps)?),
            QueueSpec::Cbq(p) => AnyQdisc::Cbq(p.validate(path, rate_bps)?),
            QueueSpec::White(f, p) => AnyQdisc::White(p.validate(path, rate_bps, *f)?),
            QueueSpec::Aecn(p) => AnyQdisc::Aecn(p.validate(path, rate_bps)?),
            QueueSpec::Drr(p) => AnyQdisc::Drr(p.validate(path)?),
            QueueSpec::Csfq(p) => AnyQdisc::Csfq(p.validate(path, rate_bps)?),
            QueueSpec::Bmre(p) => AnyQdisc::Bmre(p.validate(path, rate_bps)?),
            QueueSpec::Pi(p) => AnyQdisc::Pi(p.validate(path)?),
            QueueSpec::Tsq(p) => AnyQdisc::Tsq(p.validate(path, rate_bps)?),
            QueueSpec::Codel(p) => AnyQdisc::Codel(p.validate(path)?),
            QueueSpec::FqCodel(p) => AnyQdisc::FqCodel(p.validate(path)?),
            QueueSpec::Pie(p) => AnyQdisc::Pie(p.validate(path)?),
            QueueSpec::FqPie(p) => AnyQdisc::FqPie(p.validate(path)?),
            QueueSpec::Blue(p) => AnyQdisc::Blue(p.validate(path)?),
            QueueSpec::Sfb(p) => AnyQdisc::Sfb(p.validate(path)?),
            QueueSpec::DualPi2(p) => AnyQdisc::DualPi2(p.validate(path, rate_bps)?),
            QueueSpec::Cake(p) => AnyQdisc::Cake(p.validate(path)?),
            QueueSpec::Rem(p) => AnyQdisc::Rem(p.validate(path, rate_bps)?),
            QueueSpec::Sfq(p) => AnyQdisc::Sfq(p.validate(path)?),
            QueueSpec::Choke(p) => AnyQdisc::Choke(p.validate(path, rate_bps)?),
            QueueSpec::Cobalt(p) => AnyQdisc::Cobalt(p.validate(path)?),
            QueueSpec::FqCobalt(p) => AnyQdisc::FqCobalt(p.validate(path)?),
        })
    }
    /// Name of the discipline (`kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            QueueSpec::DropTail(_) => "droptail",
            QueueSpec::DropFront(_) => "drop-front",
            QueueSpec::EarlyRandomDrop(_) => "early-random-drop",
            QueueSpec::RandomDrop(_) => "random-drop",
            QueueSpec::Red(_) => "red",
            QueueSpec::Fpq(_) => "fpq",
            QueueSpec::Rio(_) => "rio",
            QueueSpec::Fred(_) => "fred",
            QueueSpec::Cbt(_) => "cbt",
            QueueSpec::Cbq(_) => "cbq",
            QueueSpec::White(WhiteFlavour::Chardonnay, _) => "chardonnay",
            QueueSpec::White(WhiteFlavour::Chablis, _) => "chablis",
            QueueSpec::Aecn(_) => "aecn",
            QueueSpec::Drr(_) => "drr",
            QueueSpec::Csfq(_) => "csfq",
            QueueSpec::Bmre(_) => "bmre",
            QueueSpec::Pi(_) => "pi",
            QueueSpec::Tsq(_) => "tsq",
            QueueSpec::Codel(_) => "codel",
            QueueSpec::FqCodel(_) => "fq_codel",
            QueueSpec::Pie(_) => "pie",
            QueueSpec::FqPie(_) => "fq_pie",
            QueueSpec::Blue(_) => "blue",
            QueueSpec::Sfb(_) => "sfb",
            QueueSpec::DualPi2(_) => "dualpi2",
            QueueSpec::Cake(_) => "cake",
            QueueSpec::Rem(_) => "rem",
            QueueSpec::Sfq(_) => "sfq",
            QueueSpec::Choke(_) => "choke",
            QueueSpec::Cobalt(_) => "cobalt",
            QueueSpec::FqCobalt(_) => "fq_cobalt",
        }
    }
    /// The parameters as a JSON object, `kind` included, defaults filled in.
    pub fn echo(&self) -> serde_json::Value {
        let mut v = match self {
            QueueSpec::DropTail(p) => serde_json::to_value(p),
            QueueSpec::DropFront(p) => serde_json::to_value(p),
            QueueSpec::EarlyRandomDrop(p) => serde_json::to_value(p),
            QueueSpec::RandomDrop(p) => serde_json::to_value(p),
            QueueSpec::Red(p) => serde_json::to_value(p),
            QueueSpec::Fpq(p) => serde_json::to_value(p),
            QueueSpec::Rio(p) => serde_json::to_value(p),
            QueueSpec::Fred(p) => serde_json::to_value(p),
            QueueSpec::Cbt(p) => serde_json::to_value(p),
            QueueSpec::Cbq(p) => serde_json::to_value(p),
            QueueSpec::White(_, p) => serde_json::to_value(p),
            QueueSpec::Aecn(p) => serde_json::to_value(p),
            QueueSpec::Drr(p) => serde_json::to_value(p),
            QueueSpec::Csfq(p) => serde_json::to_value(p),
            QueueSpec::Bmre(p) => serde_json::to_value(p),
            QueueSpec::Pi(p) => serde_json::to_value(p),
            QueueSpec::Tsq(p) => serde_json::to_value(p),
            QueueSpec::Codel(p) => serde_json::to_value(p),
            QueueSpec::FqCodel(p) => serde_json::to_value(p),
            QueueSpec::Pie(p) => serde_json::to_value(p),
            QueueSpec::FqPie(p) => serde_json::to_value(p),
            QueueSpec::Blue(p) => serde_json::to_value(p),
            QueueSpec::Sfb(p) => serde_json::to_value(p),
            QueueSpec::DualPi2(p) => serde_json::to_value(p),
            QueueSpec::Cake(p) => serde_json::to_value(p),
            QueueSpec::Rem(p) => serde_json::to_value(p),
            QueueSpec::Sfq(p) => serde_json::to_value(p),
            QueueSpec::Choke(p) => serde_json::to_value(p),
            QueueSpec::Cobalt(p) => serde_json::to_value(p),
            QueueSpec::FqCobalt(p) => serde_json::to_value(p),
        }
        .expect("queue params serialise");
        v.as_object_mut().expect("params are a table").insert("kind".into(), self.kind().into());
        v
    }
}

/// What a flow sends.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    /// TCP with the config at this index of `Scenario::tcp_configs`.
    Tcp(usize),
    /// Constant bit rate UDP.
    UdpCbr {
        /// Mean sending rate, bits/s.
        rate_bps: f64,
        /// Datagram size on the wire (mean for exponential sizes), bytes.
        packet_size: u32,
        /// Size distribution.
        dist: SizeDist,
    },
    /// Poisson UDP: exponential inter-departure times.
    UdpPoisson {
        /// Mean sending rate, bits/s.
        rate_bps: f64,
        /// Datagram size on the wire (mean for exponential sizes), bytes.
        packet_size: u32,
        /// Size distribution.
        dist: SizeDist,
    },
    /// Synthetic MPEG-1 video (`kind = "mpeg"`).
    Mpeg {
        /// Frame process and fragmentation.
        params: MpegParams,
        /// Frames with a fragment later than this count as lost.
        playout_deadline: Option<Dur>,
    },
    /// Synthetic Proshare conference (`kind = "proshare"`).
    Proshare(ProshareParams),
    /// TFRC (RFC 5348; `kind = "tfrc"`): equation-based rate control.
    Tfrc {
        /// `s`, bytes on the wire per packet.
        packet_size: u32,
        /// RFC 5348 §5.5 history discounting at the receiver (`history_discounting`).
        history_discounting: bool,
    },
}

/// One flow after expanding `count`.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// What it sends.
    pub kind: FlowKind,
    /// Which way the data goes.
    pub direction: Direction,
    /// Index of its `[[flows]]` group.
    pub group: usize,
    /// When it starts (jitter applied).
    pub start: Time,
    /// When it stops sending.
    pub stop: Time,
    /// TCP: when the application writes again after `stop`, the connection kept; `None`: `stop`
    /// ends the flow.
    pub resume: Option<Time>,
    /// Sender-side access link.
    pub access: LinkSpec,
    /// Receiver-side access link.
    pub receiver_access: LinkSpec,
    /// Class tag on its packets.
    pub class: u8,
    /// Variant name for the summary ("newreno", "cbr", ...).
    pub variant: &'static str,
    /// TCP transfers drawn from a size distribution and/or repeated; `None` for a long-lived
    /// flow or a single fixed-size transfer (`TcpConfig::transfer_bytes`).
    pub transfers: Option<Transfers>,
    /// Connection slot of a `kind = "http"` browser; `None` otherwise.
    pub http: Option<HttpSlot>,
    /// TSQ delay hint stamped on its data packets, 1..=16; 0 = none.
    pub delay_hint: u8,
    /// Its hosts and DSCP, for disciplines that classify by them (`cake`).
    pub label: crate::qdisc::FlowLabel,
    /// TCP application-limited source: payload bits/s the application writes (`app_rate`).
    pub app_rate_bps: Option<f64>,
    /// TCP with `coarse_timer`: offset of the sender host's tick grid (`timer_phase`), below G.
    pub timer_phase: Dur,
}

/// Which browser and slot an HTTP flow is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HttpSlot {
    /// Index into `Scenario::http_models`.
    pub model: u16,
    /// Browser number within the whole scenario.
    pub browser: u32,
    /// Slot within the browser (0 carries the primary reply).
    pub slot: u32,
}


/// Output options after validation.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputSpec {
    /// Time-series bin width.
    pub bin: Dur,
    /// Per-flow rate series.
    pub per_flow_timeseries: bool,
    /// Per-TCP-flow congestion window and smoothed RTT series (`flow<i>_cwnd_segments`,
    /// `flow<i>_srtt_s`); only with at least one TCP flow.
    pub per_flow_tcp_state: bool,
    /// Class tags whose delivered data packets are each recorded with their one-way delay
    /// (`packet_delays`), indexed by tag.
    pub packet_delays: Box<[bool; 256]>,
    /// Capture the forward bottleneck.
    pub pcap: bool,
    /// A flow counter watching data arriving at the forward bottleneck.
    pub flow_counter: Option<FlowCounterParams>,
}

/// A validated scenario, ready to build a world from.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// End of the run.
    pub duration: Time,
    /// End of the warm-up.
    pub warmup: Time,
    /// Run seed.
    pub seed: u64,
    /// The bottleneck link (both directions).
    pub bottleneck: LinkSpec,
    /// Changes of the bottleneck's rate after time 0 (`rate_schedule`), in time order.
    pub rate_changes: Vec<RateChange>,
    /// Delivery traces driving the bottleneck's forward and reverse directions instead of its rate.
    pub traces: [Option<DeliveryTrace>; 2],
    /// Forward queue.
    pub queue: QueueSpec,
    /// Reverse queue.
    pub reverse_queue: QueueSpec,
    /// Every flow.
    pub flows: Vec<FlowSpec>,
    /// TCP configs referenced by `FlowKind::Tcp`.
    pub tcp_configs: Vec<TcpConfig>,
    /// Models of the `kind = "http"` groups referenced by `HttpSlot::model`.
    pub http_models: Vec<HttpModel>,
    /// Output options.
    pub output: OutputSpec,
    /// The scenario as written, with every default filled in (for `summary.json`).
    pub echo: serde_json::Value,
}

fn err<T>(path: impl Into<String>, msg: impl Into<String>) -> ConfigResult<T> {
    Err(ConfigError::new(path, msg))
}

fn link(p: &LinkParams, path: &str, allow_loss: bool) -> ConfigResult<LinkSpec> {
    let loss = p.loss.unwrap_or(0.0);
    if p.loss.is_some() && !allow_loss {
        return err(join(path, "loss"), "random loss is only supported on the bottleneck");
    }
    if !(0.0..1.0).contains(&loss) {
        return err(join(path, "loss"), format!("must be in [0, 1), got {loss}"));
    }
    if p.tx_ring.is_some() && !allow_loss {
        return err(join(path, "tx_ring"), "a transmit ring is only modelled on the bottleneck");
    }
    if p.rate_schedule.is_some() && !allow_loss {
        return err(join(path, "rate_schedule"), "only the bottleneck's rate can change over time");
    }
    for (key, set) in [("trace", p.trace.is_some()), ("reverse_trace", p.reverse_trace.is_some())] {
        if set && !allow_loss {
            return err(join(path, key), "only the bottleneck can follow a delivery trace");
        }
    }
    Ok(LinkSpec { rate_bps: p.rate.0, delay: p.delay.0, loss, tx_ring: p.tx_ring.unwrap_or(0) })
}

/// The bottleneck's `rate_schedule`: changes after time 0 and before the end of the run, in
/// strictly increasing time order, each a rate of at least 1 bps or 0 (an outage).
fn rate_schedule(p: &LinkParams, path: &str, duration: Dur) -> ConfigResult<Vec<RateChange>> {
    let path = join(path, "rate_schedule");
    let mut changes: Vec<RateChange> = Vec::new();
    for (i, c) in p.rate_schedule.iter().flatten().enumerate() {
        let at = c.at.0;
        let entry = format!("{path}[{i}].at");
        if at == Dur::ZERO {
            return err(entry, "must be after 0s: the link's `rate` holds from time 0");
        }
        if at >= duration {
            return err(entry, format!("{} is not before the end of the run (run.duration {})", c.at, Duration(duration)));
        }
        if let Some(prev) = changes.last().filter(|prev| Time(at.0) <= prev.at) {
            let prev = Duration(Dur(prev.at.0));
            return err(entry, format!("changes must be in increasing time order; {} follows {prev}", c.at));
        }
        changes.push(RateChange { at: Time(at.0), bps: c.rate.0 });
    }
    Ok(changes)
}

/// The bottleneck's delivery traces, forward and reverse (`trace`, `reverse_trace`), read from
/// their files (relative ones against `base_dir`). A trace replaces `rate` in its direction, so a
/// `rate_schedule` (both directions) or a `tx_ring` cannot go with it.
fn delivery_traces(p: &LinkParams, path: &str, base_dir: Option<&std::path::Path>) -> ConfigResult<[Option<DeliveryTrace>; 2]> {
    let read = |key: &str, file: &Option<String>| -> ConfigResult<Option<DeliveryTrace>> {
        let Some(file) = file else { return Ok(None) };
        let at = join(path, key);
        if p.rate_schedule.is_some() {
            return err(at, "a trace sets its direction's capacity; it cannot go with rate_schedule (use one or the other)");
        }
        if p.tx_ring.unwrap_or(0) > 0 {
            return err(at, "a trace-driven link hands packets over at its opportunities; tx_ring must be 0 with it");
        }
        let full = match base_dir {
            Some(dir) if std::path::Path::new(file).is_relative() => dir.join(file),
            _ => std::path::PathBuf::from(file),
        };
        let text = std::fs::read(&full).map_err(|e| ConfigError::new(&at, format!("cannot read {}: {e}", full.display())))?;
        let text = String::from_utf8(text)
            .map_err(|_| ConfigError::new(&at, format!("{} is not a text file of millisecond times", full.display())))?;
        DeliveryTrace::parse(&text).map(Some).map_err(|e| ConfigError::new(&at, format!("{}: {e}", full.display())))
    };
    Ok([read("trace", &p.trace)?, read("reverse_trace", &p.reverse_trace)?])
}

/// Parses `[queue]`-style tables.
pub fn queue_spec(table: Option<&toml::Table>, path: &str, default: QueueSpec) -> ConfigResult<QueueSpec> {
    let Some(table) = table else { return Ok(default) };
    let mut rest = table.clone();
    let kind = match rest.remove("kind") {
        Some(toml::Value::String(s)) => s,
        Some(other) => return err(join(path, "kind"), format!("must be a string naming a discipline, got {other}")),
        None => return err(join(path, "kind"), format!("missing; allowed: {}", QDISC_KINDS.join(", "))),
    };
    fn params<T: serde::de::DeserializeOwned>(rest: toml::Table, path: &str) -> ConfigResult<T> {
        serde_path_to_error::deserialize(super::strict::Strict(toml::Value::Table(rest))).map_err(|e| {
            let inner = e.path().to_string();
            let p = if inner == "." || inner.is_empty() { path.to_string() } else { join(path, &inner) };
            ConfigError::new(p, super::parse::clean_serde_message(&e.inner().to_string()))
        })
    }
    match kind.as_str() {
        "droptail" | "fifo" | "pfifo" => Ok(QueueSpec::DropTail(params(rest, path)?)),
        "drop-front" | "drop_front" => Ok(QueueSpec::DropFront(params(rest, path)?)),
        "early-random-drop" | "early_random_drop" => Ok(QueueSpec::EarlyRandomDrop(params(rest, path)?)),
        "random-drop" | "random_drop" => Ok(QueueSpec::RandomDrop(params(rest, path)?)),
        "red" => Ok(QueueSpec::Red(params::<RedParams>(rest, path)?.filled())),
        "fpq" => Ok(QueueSpec::Fpq(params(rest, path)?)),
        "rio" => Ok(QueueSpec::Rio(params::<RioParams>(rest, path)?.filled())),
        "fred" => Ok(QueueSpec::Fred(params::<FredParams>(rest, path)?.filled())),
        "cbt" => Ok(QueueSpec::Cbt(params::<CbtParams>(rest, path)?.filled())),
        "cbq" => Ok(QueueSpec::Cbq(params::<CbqParams>(rest, path)?.filled())),
        "chardonnay" => Ok(QueueSpec::White(WhiteFlavour::Chardonnay, params::<WhiteParams>(rest, path)?.filled(WhiteFlavour::Chardonnay))),
        "chablis" => Ok(QueueSpec::White(WhiteFlavour::Chablis, params::<WhiteParams>(rest, path)?.filled(WhiteFlavour::Chablis))),
        "aecn" => Ok(QueueSpec::Aecn(params::<AecnParams>(rest, path)?.filled())),
        "drr" => Ok(QueueSpec::Drr(params(rest, path)?)),
        "csfq" => Ok(QueueSpec::Csfq(params(rest, path)?)),
        "bmre" => Ok(QueueSpec::Bmre(params::<BmreParams>(rest, path)?.filled())),
        "pi" => Ok(QueueSpec::Pi(params(rest, path)?)),
        "tsq" => Ok(QueueSpec::Tsq(params(rest, path)?)),
        "codel" => Ok(QueueSpec::Codel(params(rest, path)?)),
        "fq_codel" | "fq-codel" => Ok(QueueSpec::FqCodel(params(rest, path)?)),
        "pie" => Ok(QueueSpec::Pie(params(rest, path)?)),
        "fq_pie" | "fq-pie" => Ok(QueueSpec::FqPie(params(rest, path)?)),
        "blue" => Ok(QueueSpec::Blue(params(rest, path)?)),
        "sfb" => Ok(QueueSpec::Sfb(params(rest, path)?)),
        "dualpi2" => Ok(QueueSpec::DualPi2(params::<DualPi2Params>(rest, path)?.filled())),
        "cake" => Ok(QueueSpec::Cake(params(rest, path)?)),
        "rem" => Ok(QueueSpec::Rem(params(rest, path)?)),
        "sfq" => Ok(QueueSpec::Sfq(params(rest, path)?)),
        "choke" => Ok(QueueSpec::Choke(params(rest, path)?)),
        "cobalt" => Ok(QueueSpec::Cobalt(params(rest, path)?)),
        "fq_cobalt" | "fq-cobalt" => Ok(QueueSpec::FqCobalt(params(rest, path)?)),
        other => err(
            join(path, "kind"),
            format!("unknown queue discipline \"{other}\"; allowed: {}", QDISC_KINDS.join(", ")),
        ),
    }
}

const TCP_KEYS: &[&str] = &[
    "profile", "variant", "congestion_control", "ledbat_variant", "ledbat_target", "ledbat_gain", "ledbat_base_history",
    "ledbat_noise_filter", "ledbat_slow_start", "ledbat_min_cwnd", "ledbat_allowed_increase", "recovery", "limited_transmit", "count_acked_segments", "hystart", "rack_tlp", "fast_retransmit_guard", "rtt_hint", "mss", "header_bytes", "ack_bytes",
    "initial_window", "max_window", "delayed_ack", "min_rto", "rto_formula", "initial_rto", "max_rto", "timer_granularity",
    "coarse_timer", "dupack_threshold", "sack", "timestamps", "ecn", "ecn_retransmit_ect", "ecn_style", "integer_ssthresh", "halve_at_every_timeout", "restart_after_idle", "restart_timer_on_fast_retransmit", "restart_timer_on_head_retransmit", "keep_sack_after_timeout", "new_ack_clears_backoff", "ns3_reno_sack", "ns3_sack_recovery", "ssthresh_from_pipe", "pacing", "size",
    "size_dist", "repeat",
    "app_rate", "resume",
    "timer_phase",
];
/// Keys of `kind = "http"`: the TCP keys of its connection slots (no transfer plan) and its own.
const HTTP_ALLOWED: &[&str] = &[
    "profile", "variant", "congestion_control", "ledbat_variant", "ledbat_target", "ledbat_gain", "ledbat_base_history",
    "ledbat_noise_filter", "ledbat_slow_start", "ledbat_min_cwnd", "ledbat_allowed_increase", "recovery", "limited_transmit", "count_acked_segments", "hystart", "rack_tlp", "fast_retransmit_guard", "rtt_hint", "mss", "header_bytes", "ack_bytes",
    "initial_window", "max_window", "delayed_ack", "min_rto", "rto_formula", "initial_rto", "max_rto", "timer_granularity",
    "coarse_timer", "dupack_threshold", "sack", "timestamps", "ecn", "ecn_retransmit_ect", "ecn_style", "integer_ssthresh", "halve_at_every_timeout", "restart_after_idle", "restart_timer_on_fast_retransmit", "restart_timer_on_head_retransmit", "keep_sack_after_timeout", "new_ack_clears_backoff", "ns3_reno_sack", "ns3_sack_recovery", "ssthresh_from_pipe", "pacing", "distributions", "start_mode", "parallel", "think_mean",
    "think_shape", "think_max", "primary_median", "primary_sigma", "primary_tail_fraction", "primary_tail_min",
    "primary_tail_shape", "embedded_mean", "embedded_median", "embedded_sigma", "object_max", "request_delay",
    "timer_phase",
];
const HTTP_KEYS: &[&str] = &[
    "distributions", "start_mode", "parallel", "think_mean", "think_shape", "think_max", "primary_median", "primary_sigma", "primary_tail_fraction",
    "primary_tail_min", "primary_tail_shape", "embedded_mean", "embedded_median", "embedded_sigma", "object_max",
    "request_delay",
];
const UDP_KEYS: &[&str] = &["rate", "packet_size", "packet_size_dist"];
/// Keys of `kind = "tfrc"` (RFC 5348): the packet size, and `app_rate` for an application-limited
/// sender (a "TCP-friendly CBR" source; the rate is otherwise TFRC's), and `history_discounting`
/// (RFC 5348 §5.5).
const TFRC_KEYS: &[&str] = &["packet_size", "app_rate", "history_discounting"];

fn present_keys(f: &FlowParams) -> Vec<&'static str> {
    let v = serde_json::to_value(f).expect("flow params serialise");
    let obj = v.as_object().expect("table");
    TCP_KEYS.iter().chain(UDP_KEYS).chain(MPEG_KEYS).chain(PROSHARE_KEYS).chain(HTTP_KEYS).chain(TFRC_KEYS).copied().filter(|k| obj.contains_key(*k)).collect()
}

fn pick<T: Clone>(v: &Option<OneOrMany<T>>, i: usize, default: T) -> T {
    match v {
        None => default,
        Some(OneOrMany::One(x)) => x.clone(),
        Some(OneOrMany::Many(xs)) => xs[i].clone(),
    }
}

fn check_list_len<T>(v: &Option<OneOrMany<T>>, count: usize, path: &str) -> ConfigResult<()> {
    if let Some(OneOrMany::Many(xs)) = v {
        if xs.len() != count {
            return err(path, format!("a list must have one value per flow ({count}), got {}", xs.len()));
        }
    }
    Ok(())
}

/// `timer_phase` offsets the coarse timer's grid: it needs `coarse_timer` and each value below G.
fn check_timer_phase(f: &FlowParams, cfg: &TcpConfig, path: &str) -> ConfigResult<()> {
    let Some(phases) = &f.timer_phase else { return Ok(()) };
    let key = join(path, "timer_phase");
    if !cfg.coarse_timer {
        return err(key, "needs coarse_timer = true (it offsets the coarse timer's tick grid)");
    }
    let values: Vec<Dur> = match phases {
        OneOrMany::One(d) => vec![d.0],
        OneOrMany::Many(ds) => ds.iter().map(|d| d.0).collect(),
    };
    match values.into_iter().find(|&p| p >= cfg.timer_granularity) {
        Some(p) => err(key, format!("must be below timer_granularity ({}), got {p}", cfg.timer_granularity)),
        None => Ok(()),
    }
}

fn tcp_config(f: &mut FlowParams, path: &str) -> ConfigResult<TcpConfig> {
    let d = f.profile.map_or_else(TcpConfig::default, TcpProfile::defaults);
    let variant = *f.variant.get_or_insert(d.variant);
    let congestion_control = *f.congestion_control.get_or_insert(d.congestion_control);
    let ledbat = ledbat_config(f, congestion_control, path)?;
    let bbr = congestion_control == CongestionControl::Bbr;
    if bbr && variant != TcpVariant::Sack {
        return err(join(path, "variant"), format!(
            "congestion_control = \"bbr\" needs variant = \"sack\" (its delivery-rate estimate counts SACKed segments, as Linux's does), got {}",
            variant_name(variant)));
    }
    if bbr && f.recovery == Some(Recovery::Prr) {
        return err(join(path, "recovery"), "congestion_control = \"bbr\" sets cwnd itself in recovery (packet conservation; Linux skips PRR for a congestion control with cong_control), so recovery must be \"classic\"");
    }
    // A profile's PRR default does not apply to BBR (see above).
    let recovery = *f.recovery.get_or_insert(if bbr { Recovery::Classic } else { d.recovery });
    let pacing = *f.pacing.get_or_insert(bbr);
    if bbr && !pacing {
        return err(join(path, "pacing"), "congestion_control = \"bbr\" needs pacing = true (BBR sends at its pacing rate; omit the key for the default)");
    }
    if pacing && !bbr {
        return err(join(path, "pacing"), format!("pacing is only implemented for bbr, got congestion_control = \"{}\"", cc_name(congestion_control)));
    }
    let limited_transmit = *f.limited_transmit.get_or_insert(d.limited_transmit);
    let count_acked_segments = *f.count_acked_segments.get_or_insert(d.count_acked_segments);
    let hystart = match (congestion_control, f.hystart) {
        (CongestionControl::CubicLinux, _) => *f.hystart.get_or_insert(d.hystart),
        (_, None) => d.hystart,
        (other, Some(_)) => {
            return err(join(path, "hystart"), format!(
                "applies to congestion_control = \"cubic-linux\" only (the kernel's HyStart), got \"{}\"", cc_name(other)));
        }
    };
    let guard = *f.fast_retransmit_guard.get_or_insert(d.fast_retransmit_guard.unwrap_or(FastRetransmitGuard::for_variant(variant)));
    let rtt_hint = *f.rtt_hint.get_or_insert(d.rtt_hint);
    if recovery == Recovery::Prr && variant == TcpVariant::Tahoe {
        return err(join(path, "recovery"), "\"prr\" needs a variant with fast recovery (reno, newreno or sack), got tahoe");
    }
    let mss = f.mss.get_or_insert(Bytes(d.mss as u64)).0;
    if !(1..=65_000).contains(&mss) {
        return err(join(path, "mss"), format!("must be between 1B and 65000B, got {mss}B"));
    }
    let header = f.header_bytes.get_or_insert(Bytes(d.header_bytes as u64)).0;
    if header > 1000 {
        return err(join(path, "header_bytes"), format!("must be at most 1000B, got {header}B"));
    }
    let ack_bytes = f.ack_bytes.get_or_insert(Bytes(header)).0;
    if ack_bytes > 1000 {
        return err(join(path, "ack_bytes"), format!("must be at most 1000B, got {ack_bytes}B"));
    }
    let iw = *f.initial_window.get_or_insert(d.initial_window);
    if iw == 0 {
        return err(join(path, "initial_window"), "must be at least 1 segment, got 0");
    }
    let max_window = match f.max_window {
        Some(WindowCap::Bytes(b)) if b < mss => {
            return err(join(path, "max_window"), format!("must hold at least one segment ({mss}B), got {b}B"))
        }
        Some(WindowCap::Bytes(b)) => (b / mss).min(u32::MAX as u64 / 2) as u32,
        Some(WindowCap::Unlimited) => TcpConfig::default().max_window, // no cap
        None => match f.profile {
            Some(p) => {
                // A profile's receiver window is a buffer in bytes: re-expressed in this mss.
                let bytes = p.receive_window_bytes();
                f.max_window = Some(WindowCap::Bytes(bytes)); // shown by `validate --show`
                (bytes / mss).clamp(1, u32::MAX as u64 / 2) as u32
            }
            None => {
                f.max_window = Some(WindowCap::Unlimited); // shown by `validate --show`
                d.max_window
            }
        },
    };
    let delayed_by_default = d.delayed_ack.count > 1;
    let delayed_ack = match f.delayed_ack.get_or_insert(DelayedAckParams::Switch(delayed_by_default)) {
        DelayedAckParams::Switch(true) if delayed_by_default => d.delayed_ack,
        // ns-2's DelAck sink: every second segment, its interval_ (the profile's timeout).
        DelayedAckParams::Switch(true) => DelayedAck { count: 2, timeout: d.delayed_ack.timeout },
        DelayedAckParams::Switch(false) => DelayedAck { count: 1, timeout: d.delayed_ack.timeout },
        DelayedAckParams::Table(t) => {
            let count = *t.count.get_or_insert(d.delayed_ack.count);
            let timeout = t.timeout.get_or_insert(Duration(d.delayed_ack.timeout)).0;
            if count == 0 {
                return err(join(path, "delayed_ack.count"), "must be at least 1 (1 = no delayed ACKs), got 0");
            }
            if count > 1 && timeout == Dur::ZERO {
                return err(join(path, "delayed_ack.timeout"), "must be positive when count > 1");
            }
            DelayedAck { count, timeout }
        }
    };
    // `validate --show` states the policy in full, not `true`/`false`.
    let shown = DelayedAckTable { count: Some(delayed_ack.count), timeout: Some(Duration(delayed_ack.timeout)) };
    f.delayed_ack = Some(DelayedAckParams::Table(shown));
    let min_rto = f.min_rto.get_or_insert(Duration(d.min_rto)).0;
    let rto_formula = *f.rto_formula.get_or_insert(d.rto_formula);
    let initial_rto = f.initial_rto.get_or_insert(Duration(d.initial_rto)).0;
    let max_rto = f.max_rto.get_or_insert(Duration(d.max_rto)).0;
    if initial_rto == Dur::ZERO {
        return err(join(path, "initial_rto"), "must be positive");
    }
    if max_rto < min_rto || max_rto == Dur::ZERO {
        return err(join(path, "max_rto"), format!("must be positive and at least min_rto ({min_rto})"));
    }
    let g = f.timer_granularity.get_or_insert(Duration(d.timer_granularity)).0;
    let coarse = *f.coarse_timer.get_or_insert(d.coarse_timer);
    if coarse && g == Dur::ZERO {
        return err(join(path, "timer_granularity"), "must be positive when coarse_timer = true");
    }
    let dupthresh = *f.dupack_threshold.get_or_insert(d.dupack_threshold);
    if dupthresh == 0 {
        return err(join(path, "dupack_threshold"), "must be at least 1");
    }
    let sack = *f.sack.get_or_insert(variant == TcpVariant::Sack);
    if variant == TcpVariant::Sack && !sack {
        return err(join(path, "sack"), "variant \"sack\" needs sack = true");
    }
    let timestamps = *f.timestamps.get_or_insert(d.timestamps);
    let default_ecn = if d.ecn || congestion_control == CongestionControl::Dctcp { EcnSetting::Classic } else { EcnSetting::Off };
    let ecn_setting = *f.ecn.get_or_insert(default_ecn);
    let ecn = ecn_setting.enabled();
    if congestion_control == CongestionControl::Dctcp && !ecn {
        return err(join(path, "ecn"), "congestion_control = \"dctcp\" needs ecn = true or \"l4s\" (RFC 8257 reacts to ECN marks)");
    }
    if f.ecn_retransmit_ect == Some(true) && !ecn {
        return err(join(path, "ecn_retransmit_ect"), "needs ecn = true or \"l4s\" (only an ECN-capable sender sends ECT)");
    }
    let ecn_retransmit_ect = *f.ecn_retransmit_ect.get_or_insert(d.ecn_retransmit_ect && ecn);
    if f.ecn_style == Some(EcnStyle::Ns2) && !(ecn && congestion_control == CongestionControl::Reno && !ecn_setting_is_l4s(ecn_setting)) {
        return err(join(path, "ecn_style"), "\"ns2\" needs ecn = true and congestion_control = \"reno\" (ns-2's TcpAgent halves the window)");
    }
    // Echoed only where they are on (a profile's or the scenario's), so that scenarios without
    // them keep their echo as it was.
    let ecn_style = f.ecn_style.unwrap_or(if ecn && congestion_control == CongestionControl::Reno && !ecn_setting_is_l4s(ecn_setting) { d.ecn_style } else { EcnStyle::Rfc3168 });
    if ecn_style != EcnStyle::Rfc3168 {
        f.ecn_style = Some(ecn_style);
    }
    let integer_ssthresh = f.integer_ssthresh.unwrap_or(d.integer_ssthresh);
    if integer_ssthresh {
        f.integer_ssthresh = Some(true);
    }
    let halve_at_every_timeout = f.halve_at_every_timeout.unwrap_or(d.halve_at_every_timeout);
    if halve_at_every_timeout {
        f.halve_at_every_timeout = Some(true);
    }
    let restart_after_idle = *f.restart_after_idle.get_or_insert(d.restart_after_idle);
    let restart_timer_on_fast_retransmit = *f.restart_timer_on_fast_retransmit.get_or_insert(d.restart_timer_on_fast_retransmit);
    if f.keep_sack_after_timeout == Some(true) && variant != TcpVariant::Sack {
        return err(join(path, "keep_sack_after_timeout"), format!("needs variant = \"sack\" (there is no scoreboard to keep), got {}", variant_name(variant)));
    }
    let keep_sack_after_timeout = *f.keep_sack_after_timeout.get_or_insert(d.keep_sack_after_timeout && variant == TcpVariant::Sack);
    let new_ack_clears_backoff = *f.new_ack_clears_backoff.get_or_insert(d.new_ack_clears_backoff);
    if f.ns3_reno_sack == Some(true) && variant != TcpVariant::NewReno {
        return err(join(path, "ns3_reno_sack"), format!("needs variant = \"newreno\" (ns-3's recovery without the SACK option), got {}", variant_name(variant)));
    }
    if f.ns3_reno_sack == Some(true) && ecn {
        return err(join(path, "ns3_reno_sack"), "does not model ECN (ns-3's ECN reductions are not part of it); set ecn = false");
    }
    let ns3_reno_sack = *f.ns3_reno_sack.get_or_insert(d.ns3_reno_sack && variant == TcpVariant::NewReno && !ecn);
    if f.ns3_sack_recovery == Some(true) && (variant != TcpVariant::Sack || recovery != Recovery::Prr) {
        return err(join(path, "ns3_sack_recovery"), format!("needs variant = \"sack\" and recovery = \"prr\" (it is ns-3's PRR over its SACK scoreboard), got {} with recovery = \"{}\"", variant_name(variant), recovery_name(recovery)));
    }
    let ns3_sack_recovery = *f.ns3_sack_recovery.get_or_insert(d.ns3_sack_recovery && variant == TcpVariant::Sack && recovery == Recovery::Prr);
    if f.ssthresh_from_pipe == Some(true) && variant != TcpVariant::Sack {
        return err(join(path, "ssthresh_from_pipe"), format!("needs variant = \"sack\" (pipe is the SACK scoreboard's; without SACK, ns3_reno_sack halves ns-3's own pipe), got {}", variant_name(variant)));
    }
    let ssthresh_from_pipe = *f.ssthresh_from_pipe.get_or_insert(d.ssthresh_from_pipe && variant == TcpVariant::Sack);
    if f.rack_tlp == Some(true) && variant != TcpVariant::Sack {
        return err(join(path, "rack_tlp"), format!("needs variant = \"sack\" (RACK-TLP reads the SACK scoreboard), got {}", variant_name(variant)));
    }
    if f.rack_tlp == Some(true) && ns3_sack_recovery {
        return err(join(path, "rack_tlp"), "does not combine with ns3_sack_recovery (ns-3 3.44 has no RACK-TLP); set one of them false");
    }
    // BBR defaults to RACK-TLP as it defaults to pacing: Linux, where BBR is specified, runs it
    // with RACK-TLP. Without it a retransmission lost again waits for the RTO while BBR's
    // pacing rate decays (docs/bbr.md: 0.25 against CUBIC's 8.31 Mb/s under FQ-CoDel).
    let rack_tlp = *f.rack_tlp.get_or_insert((d.rack_tlp || bbr) && variant == TcpVariant::Sack && !ns3_sack_recovery);
    let restart_timer_on_head_retransmit = *f.restart_timer_on_head_retransmit.get_or_insert(d.restart_timer_on_head_retransmit || rack_tlp);
    let transfer_bytes = match f.size {
        Some(Bytes(0)) => return err(join(path, "size"), "must be positive (omit it for a long-lived flow)"),
        Some(Bytes(b)) => Some(b),
        None => None,
    };
    Ok(TcpConfig {
        variant,
        congestion_control,
        ledbat,
        recovery,
        limited_transmit,
        count_acked_segments,
        hystart,
        fast_retransmit_guard: Some(guard),
        rtt_hint,
        mss: mss as u32,
        header_bytes: header as u32,
        ack_bytes: ack_bytes as u32,
        initial_window: iw,
        initial_ssthresh: d.initial_ssthresh,
        max_window,
        delayed_ack,
        min_rto,
        rto_formula,
        initial_rto,
        max_rto,
        timer_granularity: g,
        coarse_timer: coarse,
        dupack_threshold: dupthresh,
        sack,
        timestamps,
        ecn,
        ecn_l4s: ecn_setting == EcnSetting::L4s,
        ecn_retransmit_ect,
        restart_after_idle,
        restart_timer_on_fast_retransmit,
        restart_timer_on_head_retransmit,
        keep_sack_after_timeout,
        new_ack_clears_backoff,
        ns3_reno_sack,
        ns3_sack_recovery,
        ssthresh_from_pipe,
        pacing,
        rack_tlp,
        ecn_style,
        integer_ssthresh,
        halve_at_every_timeout,
        transfer_bytes,
    })
}

fn ecn_setting_is_l4s(e: EcnSetting) -> bool {
    e == EcnSetting::L4s
}

/// The `ledbat_*` keys: allowed only with `congestion_control = "ledbat"`, whose defaults (ns-3
/// 3.44's `TcpLedbat` attributes) they then show in `validate --show`.
fn ledbat_config(f: &mut FlowParams, cc: CongestionControl, path: &str) -> ConfigResult<LedbatConfig> {
    let d = LedbatConfig::default();
    if cc != CongestionControl::Ledbat {
        let given = [
            ("ledbat_variant", f.ledbat_variant.is_some()), ("ledbat_target", f.ledbat_target.is_some()),
            ("ledbat_gain", f.ledbat_gain.is_some()), ("ledbat_base_history", f.ledbat_base_history.is_some()),
            ("ledbat_noise_filter", f.ledbat_noise_filter.is_some()), ("ledbat_slow_start", f.ledbat_slow_start.is_some()),
            ("ledbat_min_cwnd", f.ledbat_min_cwnd.is_some()), ("ledbat_allowed_increase", f.ledbat_allowed_increase.is_some()),
        ];
        if let Some((key, _)) = given.iter().find(|(_, set)| *set) {
            return err(join(path, key), format!("applies only to congestion_control = \"ledbat\", got \"{}\"", cc_name(cc)));
        }
        return Ok(d);
    }
    let variant = *f.ledbat_variant.get_or_insert(d.variant);
    let target = f.ledbat_target.get_or_insert(Duration(d.target)).0;
    if target < Dur::from_millis(1) {
        return err(join(path, "ledbat_target"), format!("must be at least 1ms (ns-3 counts it in whole ms), got {}", Duration(target)));
    }
    let gain = *f.ledbat_gain.get_or_insert(d.gain);
    if !(gain.is_finite() && gain > 0.0) {
        return err(join(path, "ledbat_gain"), format!("must be a positive number (RFC 6817: at most 1), got {gain}"));
    }
    let base_history = *f.ledbat_base_history.get_or_insert(d.base_history);
    let noise_filter = *f.ledbat_noise_filter.get_or_insert(d.noise_filter);
    for (key, v) in [("ledbat_base_history", base_history), ("ledbat_noise_filter", noise_filter)] {
        if !(1..=10_000).contains(&v) {
            return err(join(path, key), format!("must be between 1 and 10000, got {v}"));
        }
    }
    let slow_start = *f.ledbat_slow_start.get_or_insert(d.slow_start);
    let min_cwnd = *f.ledbat_min_cwnd.get_or_insert(d.min_cwnd);
    if min_cwnd == 0 {
        return err(join(path, "ledbat_min_cwnd"), "must be at least 1 segment, got 0");
    }
    let allowed_increase = match (variant, f.ledbat_allowed_increase) {
        (LedbatVariant::Ns3, Some(_)) => {
            return err(join(path, "ledbat_allowed_increase"), "applies only to ledbat_variant = \"rfc6817\" (ns-3 caps cwnd at the data outstanding before each ACK)");
        }
        (LedbatVariant::Ns3, None) => d.allowed_increase,
        (LedbatVariant::Rfc6817, _) => *f.ledbat_allowed_increase.get_or_insert(d.allowed_increase),
    };
    if allowed_increase == 0 {
        return err(join(path, "ledbat_allowed_increase"), "must be at least 1 segment (RFC 6817: greater than 0), got 0");
    }
    Ok(LedbatConfig { variant, target, gain, base_history, noise_filter, slow_start, min_cwnd, allowed_increase })
}

/// The scenario spelling of a congestion control.
fn cc_name(cc: CongestionControl) -> &'static str {
    match cc {
        CongestionControl::Reno => "reno",
        CongestionControl::Cubic => "cubic",
        CongestionControl::CubicNs3 => "cubic-ns3",
        CongestionControl::CubicLinux => "cubic-linux",
        CongestionControl::Dctcp => "dctcp",
        CongestionControl::Ledbat => "ledbat",
        CongestionControl::Bbr => "bbr",
    }
}

/// The transfer plan of a TCP group with `size_dist` or `repeat`; `None` otherwise.
fn transfer_plan(f: &mut FlowParams, cfg: &TcpConfig, path: &str) -> ConfigResult<Option<Transfers>> {
    if f.size_dist.is_none() && f.repeat.is_none() {
        return Ok(None);
    }
    let Some(Bytes(size)) = f.size else {
        let key = if f.repeat.is_some() { "repeat" } else { "size_dist" };
        return err(join(path, key), "needs size (the transfer size, or its mean with size_dist = \"exponential\")");
    };
    let dist = *f.size_dist.get_or_insert(SizeDist::Fixed);
    let repeat = *f.repeat.get_or_insert(false);
    let mean_segments = size as f64 / cfg.mss as f64;
    if mean_segments < 1.0 {
        return err(join(path, "size"), format!("must be at least one segment (mss = {}B) with size_dist or repeat, got {size}B", cfg.mss));
    }
    Ok(Some(Transfers { mean_segments, dist, repeat }))
}

fn recovery_name(r: Recovery) -> &'static str {
    match r {
        Recovery::Classic => "classic",
        Recovery::Prr => "prr",
    }
}

fn variant_name(v: TcpVariant) -> &'static str {
    match v {
        TcpVariant::Tahoe => "tahoe",
        TcpVariant::Reno => "reno",
        TcpVariant::NewReno => "newreno",
        TcpVariant::Sack => "sack",
    }
}

/// Most time-series rows a run may produce (`run.duration` / `output.bin`, rounded down: one row
/// per whole bin): bounds the memory of the series (about 250 bytes a row from the core to the data
/// frame).
pub const MAX_TIMESERIES_ROWS: u64 = 1_000_000;

/// Fewest time-series rows: one row is a single point at the end of the run, no row an empty
/// series; either way the plots are blank.
pub const MIN_TIMESERIES_ROWS: u64 = 2;

/// Most per-flow time-series values (per-flow columns × rows): 20 million is 160 MB of `f64` in
/// the core and about 1 GB on its way to a data frame.
pub const MAX_PER_FLOW_VALUES: u64 = 20_000_000;

/// Most packets `output.packet_delays` may have to hold (bounded from the bottleneck rate, the
/// measured time and a 40-byte packet): 20 bytes each, 400 MB.
pub const MAX_PACKET_DELAYS: u64 = 20_000_000;

/// Most flows a scenario may have in all: a run holds about 1-10 kB per flow (a TCP flow's
/// endpoints are 9.8 kB; 1,000,000 UDP flows took 7.4 GB), so 4 M flows is already tens of GB.
pub const MAX_FLOWS: u64 = 4_000_000;

pub use crate::packet::UDP_HEADER_BYTES;

fn echo_duration(d: Duration) -> String {
    serde_json::to_value(d).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Validates a parsed scenario.
pub fn validate(mut file: ScenarioFile, base_dir: Option<&std::path::Path>) -> ConfigResult<Scenario> {
    let duration = file.run.duration.0;
    let warmup = file.run.warmup.get_or_insert(Duration(Dur::ZERO)).0;
    let seed = *file.run.seed.get_or_insert(1);
    if duration == Dur::ZERO {
        return err("run.duration", "must be positive");
    }
    if warmup >= duration {
        return err("run.warmup", format!("must be shorter than run.duration ({duration}), got {warmup}"));
    }
    if file.topology.kind != "dumbbell" {
        return err("topology.kind", format!("unknown topology \"{}\"; allowed: dumbbell", file.topology.kind));
    }
    let bottleneck = link(&file.topology.bottleneck, "topology.bottleneck", true)?;
    let rate_changes = rate_schedule(&file.topology.bottleneck, "topology.bottleneck", duration)?;
    let traces = delivery_traces(&file.topology.bottleneck, "topology.bottleneck", base_dir)?;
    let access_p = file
        .topology
        .access
        .get_or_insert(LinkParams {
            rate: super::units::Rate(1e9),
            delay: Duration(Dur::from_millis(1)),
            loss: None,
            tx_ring: None,
            rate_schedule: None,
            trace: None,
            reverse_trace: None,
        })
        .clone();
    let access = link(&access_p, "topology.access", false)?;
    let recv_p = file.topology.receiver_access.get_or_insert(access_p).clone();
    let receiver_access = link(&recv_p, "topology.receiver_access", false)?;

    let queue = queue_spec(file.queue.as_ref(), "queue", QueueSpec::DropTail(DropTailParams::default()))?;
    let reverse_queue = queue_spec(
        file.reverse_queue.as_ref(),
        "reverse_queue",
        QueueSpec::DropTail(DropTailParams { limit: Limit::Packets(10_000) }),
    )?;
    // Build once here so parameter errors surface at validation time.
    queue.build("queue", bottleneck.rate_bps)?;
    reverse_queue.build("reverse_queue", bottleneck.rate_bps)?;

    if file.flows.is_empty() {
        return err("flows", "at least one [[flows]] group is required");
    }
    // Checked before expanding the groups: 100 M flows used to exhaust memory in validation itself.
    let counts: Vec<u64> = file.flows.iter().map(|f| f.count.unwrap_or(1).max(0) as u64).collect();
    let total: u64 = counts.iter().sum();
    if total > MAX_FLOWS {
        // Name the group that carries the total past the bound.
        let at = counts.iter().scan(0, |sum, c| { *sum += c; Some(*sum) }).position(|sum| sum > MAX_FLOWS).unwrap_or(0);
        return err(
            format!("flows[{at}].count"),
            format!(
                "the groups' counts add up to {total} flows; at most {MAX_FLOWS} are allowed \
                 (each flow holds about 1-10 kB of state and results)"
            ),
        );
    }
    let mut flows = Vec::new();
    let mut tcp_configs = Vec::new();
    let mut http_models: Vec<HttpModel> = Vec::new();
    let mut n_browsers: u32 = 0;
    for (g, f) in file.flows.iter_mut().enumerate() {
        let path = format!("flows[{g}]");
        let count = *f.count.get_or_insert(1);
        if f.kind == "http" && count < 1 {
            return err(join(&path, "count"), format!("HTTP needs at least one browser, got {count}"));
        }
        if count < 1 {
            return err(join(&path, "count"), format!("must be at least 1, got {count}"));
        }
        let count = count as usize;
        let (is_tcp, allowed): (bool, &[&str]) = match f.kind.as_str() {
            "tcp" => (true, TCP_KEYS),
            "http" => (true, HTTP_ALLOWED),
            "udp-cbr" | "udp-poisson" => (false, UDP_KEYS),
            "mpeg" => (false, MPEG_KEYS),
            "proshare" => (false, PROSHARE_KEYS),
            "tfrc" => (false, TFRC_KEYS),
            other => {
                return err(
                    join(&path, "kind"),
                    format!("unknown flow kind \"{other}\"; allowed: tcp, http, udp-cbr, udp-poisson, mpeg, proshare, tfrc"),
                )
            }
        };
        if let Some(k) = present_keys(f).into_iter().find(|k| !allowed.contains(k)) {
            return err(
                join(&path, k),
                format!("not a key of kind \"{}\"; its own keys are: {}", f.kind, allowed.join(", ")),
            );
        }
        check_list_len(&f.access_delay, count, &join(&path, "access_delay"))?;
        check_list_len(&f.receiver_access_delay, count, &join(&path, "receiver_access_delay"))?;
        check_list_len(&f.timer_phase, count, &join(&path, "timer_phase"))?;
        let direction = *f.direction.get_or_insert(Direction::Forward);
        let start = f.start.get_or_insert(Duration(Dur::ZERO)).0;
        let jitter = f.start_jitter.map(|d| d.0).unwrap_or(Dur::ZERO);
        let stop = f.stop.map(|d| d.0).unwrap_or(Dur(duration.0));
        if stop <= start {
            return err(join(&path, "stop"), format!("must be later than start ({start}), got {stop}"));
        }
        if start >= duration {
            return err(join(&path, "start"), format!("must be earlier than run.duration ({duration}), got {start}"));
        }
        let resume = match f.resume {
            None => None,
            Some(_) if f.stop.is_none() => return err(join(&path, "resume"), "needs stop (the time the application pauses)"),
            Some(_) if f.app_rate.is_some() || f.size.is_some() || f.repeat.is_some() => {
                return err(join(&path, "resume"), "pauses a long-lived bulk flow: remove app_rate/size/repeat, or resume")
            }
            Some(Duration(r)) if r <= stop || r >= duration => {
                return err(join(&path, "resume"), format!("must be after stop ({stop}) and before run.duration ({duration}), got {r}"))
            }
            Some(Duration(r)) => Some(Time::ZERO + r),
        };
        let class = f.class.unwrap_or(0);
        let delay_hint = match f.delay_hint {
            None => 0,
            Some(h) if (1..=16).contains(&h) => h as u8,
            Some(h) => {
                return err(
                    join(&path, "delay_hint"),
                    format!("must be an integer from 1 to 16 (TSQ's 4-bit hint: 1 = most delay-sensitive, 16 = best effort), got {h}"),
                )
            }
        };
        let dscp = match f.dscp {
            None => 0,
            Some(d) if (0..=63).contains(&d) => d as u8,
            Some(d) => return err(join(&path, "dscp"), format!("must be a codepoint from 0 to 63 (e.g. 46 for EF, 8 for CS1), got {d}")),
        };
        let host = |key: &str, v: Option<i64>| match v {
            Some(h) if !(0..i64::from(crate::qdisc::cake::DEFAULT_HOST_BASE)).contains(&h) => {
                err(join(&path, key), format!("must be a host id from 0 to {}, got {h}", crate::qdisc::cake::DEFAULT_HOST_BASE - 1))
            }
            _ => Ok(v.map(|h| h as u32)),
        };
        let (sender_host, receiver_host) = (host("sender_host", f.sender_host)?, host("receiver_host", f.receiver_host)?);
        let app_rate_bps = match f.app_rate {
            None => None,
            Some(r) if r.0 > 0.0 && r.0.is_finite() => {
                if f.size.is_some() || f.repeat.is_some() {
                    return err(join(&path, "app_rate"), "an application-limited source is long-lived: remove size/repeat, or app_rate");
                }
                Some(r.0)
            }
            Some(r) => return err(join(&path, "app_rate"), format!("must be a positive rate such as \"128Kbps\", got {}", r.0)),
        };
        let delay_jitter = f.access_delay_jitter.map(|d| d.0).unwrap_or(Dur::ZERO);
        let mut transfers = None;
        let (kind, variant) = if is_tcp {
            let mut cfg = tcp_config(f, &path)?;
            check_timer_phase(f, &cfg, &path)?;
            if f.kind == "http" {
                http_models.push(http_model(f, cfg.mss, &path)?);
            }
            transfers = transfer_plan(f, &cfg, &path)?;
            if transfers.is_some() {
                cfg.transfer_bytes = None; // sizes are drawn per transfer, in whole segments
            }
            let v = variant_name(cfg.variant);
            tcp_configs.push(cfg);
            (FlowKind::Tcp(tcp_configs.len() - 1), v)
        } else if f.kind == "mpeg" {
            let (params, playout_deadline) = mpeg_params(f, &path)?;
            (FlowKind::Mpeg { params, playout_deadline }, "mpeg")
        } else if f.kind == "proshare" {
            (FlowKind::Proshare(proshare_params(f, &path)?), "proshare")
        } else if f.kind == "tfrc" {
            let size = f.packet_size.get_or_insert(Bytes(1000)).0;
            if !(UDP_HEADER_BYTES + 1..=65_535).contains(&size) {
                return err(
                    join(&path, "packet_size"),
                    format!("must be between {}B (IP and UDP headers plus a byte) and 65535B, got {size}B", UDP_HEADER_BYTES + 1),
                );
            }
            (FlowKind::Tfrc { packet_size: size as u32, history_discounting: f.history_discounting.unwrap_or(false) }, "tfrc")
        } else {
            let Some(rate) = f.rate else { return err(join(&path, "rate"), "missing; UDP flows need a rate such as \"1Mbps\"") };
            let size = f.packet_size.get_or_insert(Bytes(1000)).0;
            if !(UDP_HEADER_BYTES..=65_535).contains(&size) {
                return err(
                    join(&path, "packet_size"),
                    format!("must be between {UDP_HEADER_BYTES}B (the IP and UDP headers: it is the size on the wire) and 65535B, got {size}B"),
                );
            }
            let dist = *f.packet_size_dist.get_or_insert(SizeDist::Fixed);
            let (rate_bps, packet_size) = (rate.0, size as u32);
            if f.kind == "udp-cbr" {
                (FlowKind::UdpCbr { rate_bps, packet_size, dist }, "cbr")
            } else {
                (FlowKind::UdpPoisson { rate_bps, packet_size, dist }, "poisson")
            }
        };
        let mut jitter_rng = stream(seed, StreamId::Flow(u32::MAX - g as u32));
        let mut delay_rng = stream(seed, StreamId::AccessDelay(g as u32));
        let slots = if f.kind == "http" { http_models.last().expect("pushed").parallel } else { 1 };
        for i in 0..count {
            let offset = if jitter > Dur::ZERO { Dur(jitter_rng.gen_range(0..jitter.0)) } else { Dur::ZERO };
            let extra_delay = if delay_jitter > Dur::ZERO { Dur(delay_rng.gen_range(0..delay_jitter.0)) } else { Dur::ZERO };
            let mut a = access;
            let mut r = receiver_access;
            if let Some(rate) = f.access_rate {
                a.rate_bps = rate.0;
            }
            a.delay = pick(&f.access_delay, i, Duration(a.delay)).0 + extra_delay;
            r.delay = pick(&f.receiver_access_delay, i, Duration(r.delay)).0;
            for s in 0..slots {
                let own = crate::qdisc::FlowLabel::default_for(flows.len() as u32);
                let label = crate::qdisc::FlowLabel {
                    sender_host: sender_host.unwrap_or(own.sender_host),
                    receiver_host: receiver_host.unwrap_or(own.receiver_host),
                    dscp,
                };
                flows.push(FlowSpec {
                kind: kind.clone(),
                direction,
                group: g,
                start: (Time::ZERO + start + offset).min(Time(duration.0 - 1)),
                stop: Time(stop.0.min(duration.0)),
                resume,
                access: a,
                receiver_access: r,
                class,
                variant,
                    transfers,
                    http: (f.kind == "http").then(|| HttpSlot { model: (http_models.len() - 1) as u16, browser: n_browsers, slot: s }),
                    delay_hint,
                    app_rate_bps,
                    label,
                    timer_phase: pick(&f.timer_phase, i, Duration(Dur::ZERO)).0,
                });
            }
            if f.kind == "http" {
                n_browsers += 1;
            }
        }
    }
    let n_flows = flows.len();
    let bin_given = file.output.bin.is_some();
    let bin = file.output.bin.get_or_insert(Duration(Dur::from_millis(100))).0;
    if bin == Dur::ZERO {
        return err("output.bin", "must be positive");
    }
    // One row per whole bin, at its end: the time after the last whole bin, when the bin does not
    // divide the duration, is in the summary but not in the series (docs/scenarios.md, [output]).
    let rows = duration.0 / bin.0;
    // Only a bin the author chose: a run shorter than two default bins (a unit test's 100 ms) has
    // always been allowed, for its summary.
    if bin_given && rows < MIN_TIMESERIES_ROWS {
        return err(
            "output.bin",
            format!(
                "{} gives {rows} time-series row{} over run.duration {}; at least {MIN_TIMESERIES_ROWS} are needed \
                 (with fewer the series is a point or empty and its plots are blank), so the bin must be at most {}",
                echo_duration(Duration(bin)),
                if rows == 1 { "" } else { "s" },
                echo_duration(Duration(duration)),
                echo_duration(Duration(Dur(duration.0 / MIN_TIMESERIES_ROWS))),
            ),
        );
    }
    if rows > MAX_TIMESERIES_ROWS {
        let smallest = Duration(Dur(duration.0 / (MAX_TIMESERIES_ROWS + 1) + 1));
        return err(
            "output.bin",
            format!(
                "{} gives {rows} time-series rows over run.duration {}; at most {MAX_TIMESERIES_ROWS} are allowed, \
                 so the bin must be at least {} for this duration",
                echo_duration(Duration(bin)),
                echo_duration(Duration(duration)),
                echo_duration(smallest),
            ),
        );
    }
    // Per-flow columns: goodput and offered load per flow (MPEG adds two more, counted here too).
    let per_flow_columns = flows.iter().map(|f| if matches!(f.kind, FlowKind::Mpeg { .. }) { 4 } else { 2 }).sum::<u64>();
    let per_flow_values = per_flow_columns.saturating_mul(rows);
    let per_flow_timeseries = match file.output.per_flow_timeseries {
        Some(true) if per_flow_values > MAX_PER_FLOW_VALUES => {
            return err(
                "output.per_flow_timeseries",
                format!(
                    "{n_flows} flows give {per_flow_columns} per-flow columns × {rows} rows = {per_flow_values} values; \
                     at most {MAX_PER_FLOW_VALUES} are allowed: set it to false, use fewer flows, or a longer output.bin"
                ),
            );
        }
        Some(on) => on,
        None => n_flows <= 1000 && per_flow_values <= MAX_PER_FLOW_VALUES,
    };
    file.output.per_flow_timeseries = Some(per_flow_timeseries);
    let mut packet_delays = Box::new([false; 256]);
    for &tag in file.output.packet_delays.get_or_insert_with(Vec::new).iter() {
        if !(0..=255).contains(&tag) {
            return err("output.packet_delays", format!("class tags are 0 to 255, got {tag}"));
        }
        if !flows.iter().any(|f| i64::from(f.class) == tag) {
            return err("output.packet_delays", format!("no flow carries class tag {tag} (a flow group's `class`)"));
        }
        packet_delays[tag as usize] = true;
    }
    let measured_s = (duration.0 - warmup.0.min(duration.0)) as f64 * 1e-9;
    let fastest_bps = rate_changes.iter().map(|c| c.bps).fold(bottleneck.rate_bps, f64::max);
    let most_packets = (fastest_bps * measured_s / (8.0 * 40.0)).ceil() as u64;
    if packet_delays.iter().any(|&on| on) && most_packets > MAX_PACKET_DELAYS {
        return err(
            "output.packet_delays",
            format!(
                "the bottleneck could deliver up to {most_packets} packets of 40 B after the warm-up; at most \
                 {MAX_PACKET_DELAYS} can be recorded: shorten the run or leave the key out"
            ),
        );
    }
    let output = OutputSpec {
        bin,
        per_flow_timeseries,
        per_flow_tcp_state: *file.output.per_flow_tcp_state.get_or_insert(false),
        packet_delays,
        pcap: *file.output.pcap.get_or_insert(false),
        flow_counter: file.output.flow_counter.clone(),
    };
    // A switch that would add no column is a mistake (like a key that does not apply to a flow's
    // kind), not a no-op: say so rather than write a series without the asked-for columns.
    let tcp_flows = flows.iter().filter(|f| matches!(f.kind, FlowKind::Tcp(_))).count() as u64;
    if output.per_flow_tcp_state && tcp_flows == 0 {
        return err(
            "output.per_flow_tcp_state",
            "true needs at least one flow of kind \"tcp\" or \"http\" (its columns are per TCP flow), got none",
        );
    }
    // cwnd and smoothed RTT per TCP flow: bounded like the per-flow goodput columns, separately.
    let tcp_state_values = (2 * tcp_flows).saturating_mul(rows);
    if output.per_flow_tcp_state && tcp_state_values > MAX_PER_FLOW_VALUES {
        return err(
            "output.per_flow_tcp_state",
            format!(
                "{tcp_flows} TCP flows give {} columns (cwnd and smoothed RTT) × {rows} rows = {tcp_state_values} values; \
                 at most {MAX_PER_FLOW_VALUES} are allowed: set it to false, use fewer flows, or a longer output.bin",
                2 * tcp_flows
            ),
        );
    }
    if let Some(fc) = &output.flow_counter {
        fc.validate("output.flow_counter")?;
    }
    let mut echo = serde_json::to_value(&file).expect("scenario serialises");
    echo["queue"] = queue.echo();
    echo["reverse_queue"] = reverse_queue.echo();
    Ok(Scenario {
        duration: Time(duration.0),
        warmup: Time(warmup.0),
        seed,
        bottleneck,
        rate_changes,
        traces,
        queue,
        reverse_queue,
        flows,
        tcp_configs,
        http_models,
        output,
        echo,
    })
}

/// Default `think_mean` of `distributions = "parametric"`, seconds: calibrated so that that
/// browser offers ≈ 370 B/s of reply payload on a fast path (replies in bytes; the runs are in
/// `traffic/http.rs`).
pub const HTTP_THINK_MEAN_S: f64 = 50.0;

/// The default HTTP model for slots of `mss` bytes: Mah's distributions (`traffic/http.rs`).
pub fn default_http_model(mss: u32) -> HttpModel {
    HttpModel {
        parallel: 4,
        think_max_s: MAH_THINK_MAX_S,
        object_max: 1048576.0,
        mss,
        request_delay: None,
        distributions: HttpDistributions::Mah,
        start: HttpStart::Stationary,
    }
}

/// The default `distributions = "parametric"` model for slots of `mss` bytes.
pub fn default_parametric_http_model(mss: u32) -> HttpModel {
    let (shape, max) = (1.5, 600.0);
    HttpModel {
        think_max_s: max,
        distributions: HttpDistributions::Parametric(Parametric {
            think_shape: shape,
            think_scale_s: pareto_scale_for_mean(HTTP_THINK_MEAN_S, shape, max),
            primary_mu: 2000f64.ln(),
            primary_sigma: 1.3,
            primary_tail_fraction: 0.07,
            primary_tail_min: 16384.0,
            primary_tail_shape: 1.2,
            embedded_mean: 3.0,
            embedded_mu: 1100f64.ln(),
            embedded_sigma: 1.5,
        }),
        ..default_http_model(mss)
    }
}

/// Keys of `kind = "http"` that only `distributions = "parametric"` takes.
const HTTP_PARAMETRIC_KEYS: &[&str] = &[
    "think_mean", "think_shape", "primary_median", "primary_sigma", "primary_tail_fraction", "primary_tail_min",
    "primary_tail_shape", "embedded_mean", "embedded_median", "embedded_sigma",
];

/// Validates the keys of a `kind = "http"` group and writes the defaults back.
fn http_model(f: &mut FlowParams, mss: u32, path: &str) -> ConfigResult<HttpModel> {
    let dists = *f.distributions.get_or_insert(HttpDistributionsKey::Mah);
    let d = match dists {
        HttpDistributionsKey::Mah => default_http_model(mss),
        HttpDistributionsKey::Parametric => default_parametric_http_model(mss),
    };
    let start = match *f.start_mode.get_or_insert(HttpStartKey::Stationary) {
        HttpStartKey::Stationary => HttpStart::Stationary,
        HttpStartKey::Synchronized => HttpStart::Synchronized,
    };
    let parallel = *f.parallel.get_or_insert(d.parallel);
    if !(1..=32).contains(&parallel) {
        return err(join(path, "parallel"), format!("must be between 1 and 32 connections, got {parallel}"));
    }
    let positive = |v: f64, key: &str| -> ConfigResult<f64> {
        if v.is_finite() && v > 0.0 { Ok(v) } else { err(join(path, key), format!("must be positive, got {v}")) }
    };
    let think_max = positive(f.think_max.get_or_insert(Duration(Dur::from_secs_f64(d.think_max_s))).0.as_secs_f64(), "think_max")?;
    let object_max = positive(f.object_max.get_or_insert(Bytes(1048576)).0 as f64, "object_max")?;
    let request_delay = f.request_delay.map(|d| d.0);
    let distributions = match dists {
        HttpDistributionsKey::Mah => {
            let v = serde_json::to_value(&*f).expect("flow params serialise");
            if let Some(k) = HTTP_PARAMETRIC_KEYS.iter().find(|k| v.get(**k).is_some()) {
                return err(
                    join(path, k),
                    "not a key of distributions = \"mah\" (Mah's measured CDFs); it needs distributions = \"parametric\"; \
                     with \"mah\" the browser keys are: start_mode, parallel, think_max, object_max, request_delay",
                );
            }
            HttpDistributions::Mah
        }
        HttpDistributionsKey::Parametric => {
            let HttpDistributions::Parametric(d) = d.distributions else { unreachable!("parametric defaults") };
            HttpDistributions::Parametric(parametric(f, &d, think_max, path)?)
        }
    };
    Ok(HttpModel { parallel, think_max_s: think_max, object_max, mss, request_delay, distributions, start })
}

/// Validates the keys of `distributions = "parametric"` (defaults `d`) and writes the defaults back.
fn parametric(f: &mut FlowParams, d: &Parametric, think_max: f64, path: &str) -> ConfigResult<Parametric> {
    let positive = |v: f64, key: &str| -> ConfigResult<f64> {
        if v.is_finite() && v > 0.0 { Ok(v) } else { err(join(path, key), format!("must be positive, got {v}")) }
    };
    let shape_gt1 = |v: f64, key: &str| -> ConfigResult<f64> {
        if v.is_finite() && v > 1.0 {
            Ok(v)
        } else {
            err(join(path, key), format!("Pareto shape must be > 1 (finite mean), got {v}"))
        }
    };
    let think_mean = positive(f.think_mean.get_or_insert(Duration(Dur::from_secs_f64(HTTP_THINK_MEAN_S))).0.as_secs_f64(), "think_mean")?;
    if think_mean >= think_max {
        return err(join(path, "think_mean"), format!("must be shorter than think_max ({think_max} s), got {think_mean} s"));
    }
    let think_shape = shape_gt1(*f.think_shape.get_or_insert(d.think_shape), "think_shape")?;
    let primary_median = positive(f.primary_median.get_or_insert(Bytes(2000)).0 as f64, "primary_median")?;
    let primary_sigma = *f.primary_sigma.get_or_insert(d.primary_sigma);
    if !(primary_sigma.is_finite() && primary_sigma >= 0.0) {
        return err(join(path, "primary_sigma"), format!("must be at least 0, got {primary_sigma}"));
    }
    let tail_fraction = *f.primary_tail_fraction.get_or_insert(d.primary_tail_fraction);
    if !(0.0..=1.0).contains(&tail_fraction) {
        return err(join(path, "primary_tail_fraction"), format!("must be in [0, 1], got {tail_fraction}"));
    }
    let tail_min = positive(f.primary_tail_min.get_or_insert(Bytes(16384)).0 as f64, "primary_tail_min")?;
    let tail_shape = shape_gt1(*f.primary_tail_shape.get_or_insert(d.primary_tail_shape), "primary_tail_shape")?;
    let embedded_mean = *f.embedded_mean.get_or_insert(d.embedded_mean);
    if !(embedded_mean.is_finite() && embedded_mean >= 0.0) {
        return err(join(path, "embedded_mean"), format!("must be at least 0 (0 = no embedded objects), got {embedded_mean}"));
    }
    let embedded_median = positive(f.embedded_median.get_or_insert(Bytes(1100)).0 as f64, "embedded_median")?;
    let embedded_sigma = *f.embedded_sigma.get_or_insert(d.embedded_sigma);
    if !(embedded_sigma.is_finite() && embedded_sigma >= 0.0) {
        return err(join(path, "embedded_sigma"), format!("must be at least 0, got {embedded_sigma}"));
    }
    Ok(Parametric {
        think_shape,
        think_scale_s: pareto_scale_for_mean(think_mean, think_shape, think_max),
        primary_mu: primary_median.ln(),
        primary_sigma,
        primary_tail_fraction: tail_fraction,
        primary_tail_min: tail_min,
        primary_tail_shape: tail_shape,
        embedded_mean,
        embedded_mu: embedded_median.ln(),
        embedded_sigma,
    })
}
