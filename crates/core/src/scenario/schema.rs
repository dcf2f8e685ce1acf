//! The scenario file as written by users: serde structs whose field names are the scenario
//! keys (DESIGN §3, a stable contract: add keys, never rename). Everything optional here gets
//! its default in `validate.rs`, which also writes the default back so the echo in
//! `summary.json` shows the values actually used.

use serde::{Deserialize, Serialize};

use super::units::{Bytes, Duration, Rate, ScheduledRate, WindowCap};
use crate::transport::tcp::{CongestionControl, EcnStyle, FastRetransmitGuard, LedbatVariant, Recovery, RtoFormula, RttHintSource, TcpProfile, TcpVariant};

/// A whole scenario.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Run length, warm-up and seed.
    pub run: RunParams,
    /// The network.
    pub topology: TopologyParams,
    /// The forward bottleneck queue discipline (`kind` plus its parameters). Default: drop-tail.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<toml::Table>,
    /// The reverse bottleneck queue (carries ACKs of forward flows). Default: drop-tail 10000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_queue: Option<toml::Table>,
    /// Flow groups.
    #[serde(default)]
    pub flows: Vec<FlowParams>,
    /// What to record besides the summary.
    #[serde(default)]
    pub output: OutputParams,
}

/// `[run]`
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunParams {
    /// Simulated time to run.
    pub duration: Duration,
    /// Initial period excluded from rates, delays and time averages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Duration>,
    /// Seed of every random stream.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::units::seed")]
    pub seed: Option<u64>,
}

/// `[topology]`
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyParams {
    /// Only `"dumbbell"` today.
    #[serde(default = "dumbbell")]
    pub kind: String,
    /// The shared link between the two routers (both directions).
    pub bottleneck: LinkParams,
    /// Default sender-side access link of every flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<LinkParams>,
    /// Default receiver-side access link (defaults to `access`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_access: Option<LinkParams>,
}

fn dumbbell() -> String {
    "dumbbell".into()
}

/// A link: rate, one-way propagation delay, optional random loss.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LinkParams {
    /// Transmission rate.
    pub rate: Rate,
    /// One-way propagation delay.
    #[serde(default = "zero_delay")]
    pub delay: Duration,
    /// Independent random loss probability applied to packets entering the link's forward
    /// direction (bottleneck only), in [0, 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Packets the sending interface holds between the queue discipline and the wire (a NIC
    /// transmit ring or ns-3's device queue), besides the one being sent. The discipline does not
    /// see them. Bottleneck only; default 0: the discipline is dequeued when transmission starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_ring: Option<u32>,
    /// Changes of the rate over time, in time order (bottleneck only, both directions): `rate`
    /// holds from time 0 until the first. See `topology::rate_schedule` for the semantics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_schedule: Option<Vec<RateChangeParams>>,
    /// A Mahimahi delivery-opportunity trace file driving the forward direction instead of
    /// `rate` (bottleneck only; relative to the scenario file). See `topology::delivery_trace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// The same for the reverse direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_trace: Option<String>,
}

/// One entry of a link's `rate_schedule`: from `at` on, the link runs at `rate` ("0bps": down).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RateChangeParams {
    /// When the change happens (after time 0, before the end of the run).
    pub at: Duration,
    /// The new rate; `"0bps"` is an outage until the next change.
    pub rate: ScheduledRate,
}

fn zero_delay() -> Duration {
    Duration(crate::engine::Dur::ZERO)
}

/// A value or one value per flow of the group.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// The same value for every flow.
    One(T),
    /// Flow i of the group gets element i; the list must have `count` elements.
    Many(Vec<T>),
}

/// A TCP flow's `ecn` key: `false` (Not-ECT), `true` (ECT(0), RFC 3168) or `"l4s"` (ECT(1), the
/// L4S identifier of RFC 9331 §4.1). Echoed in the same spelling, so existing scenarios echo
/// `true`/`false` exactly as before.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnSetting {
    /// `false`: data is sent Not-ECT.
    Off,
    /// `true`: data is sent ECT(0).
    Classic,
    /// `"l4s"`: data is sent ECT(1).
    L4s,
}

impl EcnSetting {
    /// Whether the flow is ECN-capable at all.
    pub fn enabled(self) -> bool {
        self != EcnSetting::Off
    }
}

impl Serialize for EcnSetting {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            EcnSetting::Off => s.serialize_bool(false),
            EcnSetting::Classic => s.serialize_bool(true),
            EcnSetting::L4s => s.serialize_str("l4s"),
        }
    }
}

impl<'de> Deserialize<'de> for EcnSetting {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = EcnSetting;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or \"l4s\"")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<EcnSetting, E> {
                Ok(if v { EcnSetting::Classic } else { EcnSetting::Off })
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<EcnSetting, E> {
                match v {
                    "l4s" => Ok(EcnSetting::L4s),
                    other => Err(E::custom(format!(
                        "must be true (ECT(0)), false or \"l4s\" (ECT(1), RFC 9331), got \"{other}\""
                    ))),
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// `delayed_ack = true | false | { count = 2, timeout = "200ms" }`
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum DelayedAckParams {
    /// `true`: every 2nd segment, 200 ms timeout; `false`: ACK every segment.
    Switch(bool),
    /// Explicit policy.
    Table(DelayedAckTable),
}

/// Read by hand rather than `#[serde(untagged)]`: an untagged enum reads its variants from a
/// buffered copy, where a struct also takes an array (`[2, "100ms"]` was `count = 2`, `timeout =
/// "100ms"`); here the table goes through the scenario's own reader, which refuses that.
impl<'de> Deserialize<'de> for DelayedAckParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = DelayedAckParams;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("true, false or a table { count = 2, timeout = \"200ms\" }")
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<DelayedAckParams, E> {
                Ok(DelayedAckParams::Switch(v))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<DelayedAckParams, A::Error> {
                DelayedAckTable::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(DelayedAckParams::Table)
            }
        }
        d.deserialize_any(V)
    }
}

/// Explicit delayed-ACK policy.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DelayedAckTable {
    /// ACK every `count`-th segment (1 = no delay).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Maximum ACK delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
}

/// Which way a flow's data crosses the bottleneck.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Left to right through `[queue]`; ACKs through `[reverse_queue]`.
    #[default]
    Forward,
    /// Right to left through `[reverse_queue]`; ACKs through `[queue]`.
    Reverse,
}

/// Packet-size process of a UDP source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SizeDist {
    /// Every packet `packet_size` bytes.
    #[default]
    Fixed,
    /// Exponentially distributed with mean `packet_size` (rounded up to whole bytes, ≥ 1).
    Exponential,
}

/// Distributions of a `kind = "http"` browser (`traffic/http.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpDistributionsKey {
    /// Mah's measured CDFs (INFOCOM 1997), think time clipped at `think_max`.
    #[default]
    Mah,
    /// The parametric stand-ins (lognormal/Pareto sizes, geometric counts, Pareto think time).
    Parametric,
}

/// How `kind = "http"` browsers begin (`traffic/http.rs`, "Start").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HttpStartKey {
    /// Each browser begins mid-think, in equilibrium: the aggregate is near steady at once.
    #[default]
    Stationary,
    /// Each browser begins a fresh think time at its start: the aggregate load rings for minutes.
    Synchronized,
}

/// One `[[flows]]` group. Keys that do not apply to the group's `kind` are rejected.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowParams {
    /// `tcp`, `udp-cbr`, `udp-poisson`, `mpeg` or `proshare`.
    pub kind: String,
    /// Number of identical flows in the group (≥ 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// Which way the data goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<Direction>,
    /// When the flow starts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    /// Each flow starts at `start` plus a uniform random offset in [0, start_jitter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_jitter: Option<Duration>,
    /// When the flow stops sending (default: end of run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Duration>,
    /// Sender access-link delay, one value or one per flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_delay: Option<OneOrMany<Duration>>,
    /// Sender access-link rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_rate: Option<Rate>,
    /// Each flow's sender access delay gets a uniform random extra in [0, access_delay_jitter)
    /// (Morris 1999: access delays uniform in 0–10 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_delay_jitter: Option<Duration>,
    /// Receiver access-link delay, one value or one per flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_access_delay: Option<OneOrMany<Duration>>,
    /// Traffic class tag carried by the flow's packets (for class-based disciplines).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "super::units::opt_int_in::<_, _, 0, 255>")]
    pub class: Option<u8>,
    /// Differentiated Services codepoint of the flow's packets, 0-63 (read by `cake`'s tins).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp: Option<i64>,
    /// The host the flow's data leaves from, an id 0..2^31 shared by flows of the same host
    /// (read by `cake`'s host isolation); absent: a host of the flow's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_host: Option<i64>,
    /// The host the flow's data goes to, as `sender_host`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_host: Option<i64>,
    /// TSQ delay hint (Kumar 2003 §4.1) stamped on every data packet of the flow, 1–16
    /// (1 = most delay-sensitive, 16 = best effort); absent = no hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_hint: Option<i64>,
    /// TCP only: the application writes one segment every `mss`·8/`app_rate` (ns-2 TCP driven by
    /// a CBR application); absent = bulk (always data to send).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_rate: Option<Rate>,

    // ---- TCP ----
    /// `ns3`, `linux` or `ns2`: the defaults of the other TCP keys (explicit keys win).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<TcpProfile>,
    /// `tahoe`, `reno`, `newreno` or `sack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<TcpVariant>,
    /// `reno`, `cubic`, `cubic-ns3`, `cubic-linux`, `dctcp`, `ledbat` or `bbr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_control: Option<CongestionControl>,
    /// LEDBAT only: `ns3` (ns-3 3.44's `TcpLedbat`, the default) or `rfc6817`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledbat_variant: Option<LedbatVariant>,
    /// LEDBAT only: TARGET, the queuing delay aimed at (default 100ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledbat_target: Option<Duration>,
    /// LEDBAT only: GAIN (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledbat_gain: Option<f64>,
    /// LEDBAT only: base-delay history, one-minute buckets (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledbat_base_history: Option<u32>,
    /// LEDBAT only: noise-filter length, samples (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledbat_noise_filter: Option<u32>,
    /// LEDBAT only: NewReno slow start at first and after a timeout (default true, ns-3's `SSParam`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledbat_slow_start: Option<bool>,
    /// LEDBAT only: MIN_CWND, segments (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledbat_min_cwnd: Option<u32>,
    /// LEDBAT, `ledbat_variant = "rfc6817"` only: ALLOWED_INCREASE, segments (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ledbat_allowed_increase: Option<u32>,
    /// `classic` or `prr`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<Recovery>,
    /// RFC 3042 limited transmit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
    /// Window growth counts acknowledged segments, not ACKs (Linux's slow start and congestion
    /// avoidance; default false, true with `profile = "linux"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count_acked_segments: Option<bool>,
    /// `congestion_control = "cubic-linux"` only: HyStart on (default, as the kernel) or off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart: Option<bool>,
    /// `variant = "sack"` only: RACK-TLP loss detection (RFC 8985); default false, true with
    /// `profile = "linux"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rack_tlp: Option<bool>,
    /// `none`, `rfc6582` or `ns2`: when duplicate ACKs may start another fast retransmit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_retransmit_guard: Option<FastRetransmitGuard>,
    /// Who writes Lee 2002's RTT hint: `sender` or `edge`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_hint: Option<RttHintSource>,
    /// Payload bytes per segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<Bytes>,
    /// Header bytes per data packet on the wire (IP + TCP + options + link layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_bytes: Option<Bytes>,
    /// Wire size of a pure ACK (default: `header_bytes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ack_bytes: Option<Bytes>,
    /// Initial congestion window, segments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<u32>,
    /// Receiver window: the most payload bytes in flight, or `"none"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_window: Option<WindowCap>,
    /// Delayed-ACK policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<DelayedAckParams>,
    /// Minimum RTO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<Duration>,
    /// `"rfc6298"` or `"linux"`: what `min_rto` bounds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_formula: Option<RtoFormula>,
    /// RTO before the first RTT sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<Duration>,
    /// Maximum (backed-off) RTO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto: Option<Duration>,
    /// Clock granularity G in the RTO formula.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_granularity: Option<Duration>,
    /// Retransmission timer fires on ticks of `timer_granularity` (BSD slow timer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coarse_timer: Option<bool>,
    /// With `coarse_timer`: offset of the sender host's tick grid (ticks at phase + k·G), one value
    /// or one per flow, each below `timer_granularity`; flows of one host share its phase. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_phase: Option<OneOrMany<Duration>>,
    /// Duplicate-ACK threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dupack_threshold: Option<u32>,
    /// Receiver sends SACK blocks (default: true for variant `sack`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// RFC 7323 timestamps: an RTT sample from every ACK of new data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// ECN-capable transport: `false`, `true` (ECT(0), RFC 3168) or `"l4s"` (ECT(1), RFC 9331).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<EcnSetting>,
    /// With `ecn`: retransmissions are ECT too (ns-2's `TcpAgent::output`), not Not-ECT (RFC 3168 §6.1.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_retransmit_ect: Option<bool>,
    /// With `ecn`: `"rfc3168"` (default) or `"ns2"`, ns-2.35's reaction to echoes (`EcnStyle`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_style: Option<EcnStyle>,
    /// ssthresh a whole number of segments, as ns-2 stores it (default false; true in the ns2 profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integer_ssthresh: Option<bool>,
    /// Halve the window in use at every timeout, a repeated one included (ns-2; default false,
    /// true in the ns2 profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halve_at_every_timeout: Option<bool>,
    /// RFC 5681 §4.1: restart from min(IW, cwnd) after sending nothing for longer than the RTO.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_after_idle: Option<bool>,
    /// Restart the retransmission timer at a fast retransmit (ns-2's `reset_rtx_timer(1,0)` in
    /// `dupack_action`); default false, RFC 6298 (5.1) leaves a running timer alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_timer_on_fast_retransmit: Option<bool>,
    /// Restart the retransmission timer whenever the head (`snd_una`) is resent (Linux's
    /// `tcp_xmit_retransmit_queue`); default: on with `rack_tlp` and in the `linux` profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_timer_on_head_retransmit: Option<bool>,
    /// SACK: keep the scoreboard across a retransmission timeout and resend only unSACKed data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keep_sack_after_timeout: Option<bool>,
    /// Every new ACK that restarts the timer drops the RTO backoff (ns-3 3.44's `NewAck`); default
    /// false (RFC 6298: the backoff stands until a valid RTT sample), true in the `ns3` profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_ack_clears_backoff: Option<bool>,
    /// NewReno without SACK as ns-3 3.44 runs it (its emulated "Reno SACK" scoreboard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns3_reno_sack: Option<bool>,
    /// SACK + PRR fast recovery as ns-3 3.44 runs it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns3_sack_recovery: Option<bool>,
    /// SACK: reductions halve the RFC 6675 pipe instead of FlightSize (ns-3 3.44).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssthresh_from_pipe: Option<bool>,
    /// Pace segments at the congestion control's pacing rate: only `bbr` supplies one (default
    /// true with `bbr`, which requires it; false otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<bool>,
    /// TCP: when the application writes again after `stop` (the connection and its state are
    /// kept; without it `stop` ends the connection).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<Duration>,
    /// Finite transfer size (payload; the mean with `size_dist = "exponential"`); absent = long-lived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Bytes>,
    /// `fixed` or `exponential` transfer sizes (exponential: whole segments, geometric with
    /// mean `size`/`mss`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_dist: Option<SizeDist>,
    /// Start a new transfer, as a fresh connection, as soon as the previous one is acknowledged
    /// (Morris 1999 Ch. 7's web-like repeated transfers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<bool>,

    // ---- UDP ----
    /// Sending rate (mean rate for Poisson).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Datagram size on the wire (mean for exponential sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Bytes>,
    /// `fixed` or `exponential` packet sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size_dist: Option<SizeDist>,

    // ---- TFRC ----
    /// TFRC only: RFC 5348 §5.5 history discounting at the receiver (default false: optional in
    /// the RFC; ns-2's TFRC sink runs with it, `discount_ 1`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_discounting: Option<bool>,

    // ---- multimedia (`mpeg`, `proshare`; defaults and sources in `scenario/media.rs`) ----
    /// Frames per second (MPEG: 30; Proshare video: 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame_rate: Option<f64>,
    /// Largest UDP payload per datagram; frames are fragmented to it (default 1472B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<Bytes>,
    /// Log-sd of the slow activity factor (MPEG scene activity 0.3; Proshare modulation 0.12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity_sd: Option<f64>,
    /// Correlation time of the activity factor (MPEG 30s; Proshare 5s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activity_time: Option<Duration>,
    /// MPEG: long-run fraction of time a flow spends in "still" scenes (default 0.15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_fraction: Option<f64>,
    /// MPEG: I/P size factor in still scenes (default 0.6; high-motion scenes get the factor that
    /// keeps the mean at the configured sizes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub still_factor: Option<f64>,
    /// MPEG GOP pattern (default "IBBPBB").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gop: Option<String>,
    /// MPEG I-frame mean size (after clipping), and its clip range and within-scene log-sd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub i_size: Option<Bytes>,
    /// Smallest I frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub i_size_min: Option<Bytes>,
    /// Largest I frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub i_size_max: Option<Bytes>,
    /// Log-sd of I sizes within a scene.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub i_log_sd: Option<f64>,
    /// MPEG P-frame mean size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_size: Option<Bytes>,
    /// Smallest P frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_size_min: Option<Bytes>,
    /// Largest P frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_size_max: Option<Bytes>,
    /// Log-sd of P sizes within a scene.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_log_sd: Option<f64>,
    /// MPEG B-frame mean size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_size: Option<Bytes>,
    /// Smallest B frame.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_size_min: Option<Bytes>,
    /// Largest B frame (at most `mtu`: one datagram).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_size_max: Option<Bytes>,
    /// Log-sd of B sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b_log_sd: Option<f64>,
    /// MPEG frames with a fragment arriving later than this after the frame was sent count as
    /// lost (default: no deadline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub playout_deadline: Option<Duration>,
    /// Proshare audio datagram payload (default 200B: 228 B IP).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_size: Option<Bytes>,
    /// Proshare audio datagram interval (default 100ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_interval: Option<Duration>,
    /// Proshare mean video frame size (default 1660B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_size: Option<Bytes>,
    /// Proshare frame-to-frame video size standard deviation (default 230B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_size_sd: Option<Bytes>,
    /// Smallest Proshare video frame (default 200B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_size_min: Option<Bytes>,
    /// Largest Proshare video frame (default 2944B: two datagrams).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video_size_max: Option<Bytes>,

    // ---- http (`kind = "http"`; defaults and sources in `traffic/http.rs`) ----
    /// `"mah"` (default: Mah's measured CDFs) or `"parametric"` (the stand-ins; only these take
    /// `think_mean`, `think_shape`, `primary_*` and `embedded_*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributions: Option<HttpDistributionsKey>,
    /// How browsers begin: `"stationary"` (default: mid-think, in equilibrium) or
    /// `"synchronized"` (a fresh think time at the flow start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_mode: Option<HttpStartKey>,
    /// Connection slots per browser: embedded replies fetched at once (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel: Option<u32>,
    /// Parametric: mean user think time (clipped Pareto; default 50s, calibrated to 370 B/s per browser).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_mean: Option<Duration>,
    /// Pareto shape of think times (default 1.5, SURGE).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_shape: Option<f64>,
    /// Longest think time (default: 192s with "mah", a calibration to 370 B/s per browser; 600s
    /// with "parametric").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_max: Option<Duration>,
    /// Median of the primary reply lognormal body (default 2000B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_median: Option<Bytes>,
    /// Log-sd of the primary body (default 1.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_sigma: Option<f64>,
    /// Fraction of primary replies from the Pareto tail (default 0.07).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_tail_fraction: Option<f64>,
    /// Minimum of the primary Pareto tail (default 16384B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_tail_min: Option<Bytes>,
    /// Shape of the primary Pareto tail (default 1.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_tail_shape: Option<f64>,
    /// Mean embedded references per page, geometric on 0, 1, ... (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded_mean: Option<f64>,
    /// Median embedded reply size, lognormal (default 1100B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded_median: Option<Bytes>,
    /// Log-sd of embedded sizes (default 1.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub embedded_sigma: Option<f64>,
    /// Every reply size is clipped to this (default 1048576B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_max: Option<Bytes>,
    /// Delay from a request to its reply's first segment (default: the slot's one-way path
    /// delay, receiver access + bottleneck + sender access).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_delay: Option<Duration>,
}

/// `[output]`
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OutputParams {
    /// Time-series bin width (default 100 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bin: Option<Duration>,
    /// Record per-flow rates in the time series (default: when there are at most 1000 flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_flow_timeseries: Option<bool>,
    /// Record each TCP flow's congestion window (bin average) and smoothed RTT (at the sample)
    /// in the time series (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_flow_tcp_state: Option<bool>,
    /// Class tags whose every data packet delivered after the warm-up is recorded with its
    /// one-way delay (`packet_delays.parquet`); default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_delays: Option<Vec<i64>>,
    /// Write `bottleneck.pcap` (headers only) of the forward bottleneck.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap: Option<bool>,
    /// Count active flows at the forward bottleneck with a bit vector (Morris 1999 §6.1) and
    /// record the estimate (`bits`, `t_clear`, `clearing`); FPQ queues always record theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_counter: Option<crate::metrics::flow_counter::FlowCounterParams>,
}
