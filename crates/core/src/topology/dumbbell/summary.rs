//! The summary JSON of a finished run (docs/results.md).

use super::counters::FlowCounters;
use super::flow::{delivered, held, Endpoint, MediaSource};
use super::series::TimeSeries;
use super::World;
use crate::engine::Time;
use crate::metrics::frame_decoder::FrameDecoder;
use crate::qdisc::Qdisc;
use crate::scenario::schema::Direction;
use crate::scenario::{FlowKind, Scenario};
use crate::topology::app_latency::AppLatency;
use crate::transport::tcp::EcnStyle;
use serde_json::value::RawValue;

impl<'s> World<'s> {
    /// Finishes the run and assembles the summary (without wall time, which the caller adds) and,
    /// apart from it, each flow's summary object already serialised: a million flows as `Value`
    /// trees would hold ~8 KB each (a map of boxed keys and values) where their text is ~0.7 KB.
    pub fn finish(mut self) -> (serde_json::Value, Vec<Box<RawValue>>, TimeSeries, Option<std::io::Result<()>>) {
        let sc = self.sc;
        let end = sc.duration;
        let span_s = (end.0 - sc.warmup.0) as f64 * 1e-9;
        let mut flows_json = Vec::with_capacity(self.flows.len());
        let mut goodputs = Vec::with_capacity(self.flows.len());
        let mut app_goodputs = Vec::with_capacity(self.flows.len());
        // Payload held out of order at the window's two edges, against all received in it.
        let (mut held_at_edges, mut received_in_window) = (0u64, 0u64);
        for (i, f) in self.flows.iter().enumerate() {
            let spec = &sc.flows[i];
            let c = &f.counters;
            // Goodput: payload bytes received for the first time in the window, in any order, so
            // it never exceeds what crossed the link then. In-order delivery to the application
            // (`app_goodput_bps`) can: a segment received before the warm-up and held behind a
            // hole is delivered inside the window when a late retransmission fills it.
            let (delivered_now, held_now) = (delivered(&f.endpoint), held(&f.endpoint, &sc.tcp_configs));
            let received = (delivered_now + held_now) - (c.delivered_at_warmup + c.held_at_warmup);
            held_at_edges += c.held_at_warmup + held_now;
            received_in_window += received;
            let goodput = received as f64 * 8.0 / span_s;
            let app_goodput = (delivered_now - c.delivered_at_warmup) as f64 * 8.0 / span_s;
            goodputs.push(goodput);
            app_goodputs.push(app_goodput);
            let (kind, retransmits, timeouts, extra) = match &f.endpoint {
                Endpoint::Tcp { sender, receiver, .. } => {
                    let (st, before) = (sender.stats(), &c.sender_at_warmup);
                    let mut extra = serde_json::json!({
                            "fast_retransmits": st.fast_retransmits - before.fast_retransmits,
                            "tlp_probes": st.tlp_probes - before.tlp_probes,
                            "rack_losses": st.rack_losses - before.rack_losses,
                            "ecn_reductions": st.ecn_reductions - before.ecn_reductions,
                            // Whole run, not from the warm-up: slow start usually ends before it.
                            "hystart_exits": st.hystart_exits,
                            "acks_sent": receiver.stats().acks_sent - c.acks_at_warmup,
                            "delivered_bytes": delivered(&f.endpoint),
                            "completion_s": c.completed_at.map(|t| (t.0 - spec.start.0) as f64 * 1e-9),
                            "timeout_wait_s": (st.timeout_wait_ns - before.timeout_wait_ns) as f64 * 1e-9,
                            "mean_cwnd_segments": (sender.cwnd_integral(end) - c.cwnd_integral_at_warmup) / (span_s * 1e9),
                        });
                    // Only for ns-2's ECN reaction, whose timeouts in an ECN-reduced window ns-2 does
                    // not count (`nrexmit_`); other flows' summaries stay as they were.
                    let ns2_ecn = match spec.kind {
                        FlowKind::Tcp(k) => sc.tcp_configs[k].ecn && sc.tcp_configs[k].ecn_style == EcnStyle::Ns2,
                        _ => false,
                    };
                    if ns2_ecn {
                        extra["ecn_window_timeouts"] = (st.ecn_window_timeouts - before.ecn_window_timeouts).into();
                    }
                    ("tcp", st.retransmits - before.retransmits, st.timeouts - before.timeouts, extra)
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
                "app_goodput_bps": app_goodput,
                "throughput_bps": c.throughput_bytes as f64 * 8.0 / span_s,
                "packets_sent": c.packets_sent,
                "packets_delivered": c.packets_delivered,
                "drops": c.drops,
                "drops_early": c.drops_early,
                "marks": c.marks,
                "retransmits": retransmits,
                "timeouts": timeouts,
                // null for a flow that delivered nothing after the warm-up
                "delay_mean_s": c.delay.mean_s_if_any(),
                "delay_p50_s": c.delay.quantile_s_if_any(0.50),
                "delay_p95_s": c.delay.quantile_s_if_any(0.95),
                "delay_p99_s": c.delay.quantile_s_if_any(0.99),
            });
            let (serde_json::Value::Object(fields), serde_json::Value::Object(extra)) = (&mut o, extra) else {
                unreachable!("object literals")
            };
            fields.extend(extra); // moved, not cloned: this runs once per flow
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
            flows_json.push(serde_json::value::to_raw_value(&o).expect("a JSON value always serialises"));
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
            let mut fields = fields;
            if let Some(server) = &link.trace {
                // A trace-driven link is never "transmitting" between opportunities: its
                // utilization is the share of the measured window's opportunity bytes it used.
                fields.insert("utilization".into(), server.utilization(sc.warmup, end).into());
                fields.insert("trace_mean_rate_bps".into(), server.trace().mean_rate_bps().into());
            }
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
            "queues": queues_json,
            "aggregate": {
                "goodput_bps": goodputs.iter().sum::<f64>(),
                "app_goodput_bps": app_goodputs.iter().sum::<f64>(),
                "forward_goodput_bps": forward_goodputs.iter().sum::<f64>(),
                "jain_index": crate::metrics::jain_index(&goodputs),
                "flows": goodputs.len(),
            },
        });
        let mut summary = summary;
        if let Some(w) = short_window_warning(held_at_edges, received_in_window) {
            summary["warnings"] = serde_json::json!([w]);
        }
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
        (summary, flows_json, self.series, pcap)
    }
}

/// Share of the window's received payload above which the window is called short.
const SHORT_WINDOW_SHARE: f64 = 0.01;

/// A warning when more than 1 % of the payload received in the window was held out of order at
/// its start or end: loss recoveries that long make goodput (first reception) and in-order
/// delivery disagree, and either depends on where the window falls.
fn short_window_warning(held_at_edges: u64, received_in_window: u64) -> Option<String> {
    let share = held_at_edges as f64 / received_in_window.max(1) as f64;
    (received_in_window > 0 && share > SHORT_WINDOW_SHARE).then(|| {
        format!(
            "the measured window is short against the flows' loss recoveries: {:.1} % of the payload received in it \
             was held out of order at its start or end; goodput_bps counts payload when first received, \
             app_goodput_bps when delivered in order, and they differ by up to that much (a longer run or warm-up \
             brings them together)",
            100.0 * share
        )
    })
}

/// Mean of the samples taken after `warmup` (`None` when there are none).
fn mean_after(times_s: &[f64], values: &[f64], warmup: Time) -> Option<f64> {
    let w = warmup.as_secs_f64();
    let kept: Vec<f64> = times_s.iter().zip(values).filter(|(t, _)| **t > w).map(|(_, v)| *v).collect();
    (!kept.is_empty()).then(|| kept.iter().sum::<f64>() / kept.len() as f64)
}

/// The `app_rate` columns of a TCP flow (docs/results.md): write-to-delivery latency of the
/// segments delivered after the warm-up, and what was written but not delivered at the end.
fn app_latency_json(a: &AppLatency, rcv_nxt: u32) -> serde_json::Map<String, serde_json::Value> {
    let h = a.latency();
    let serde_json::Value::Object(m) = serde_json::json!({
        "app_delay_mean_s": h.mean_s_if_any(),
        "app_delay_p50_s": h.quantile_s_if_any(0.50),
        "app_delay_p99_s": h.quantile_s_if_any(0.99),
        "app_undelivered_segments": a.undelivered(rcv_nxt),
    }) else { unreachable!("a JSON object") };
    m
}

/// Receiver-side multimedia metrics of one flow (spec `seed000-cbt-evaluation.md` §3).
///
/// Everything counts packets and frames *sent* from the end of the warm-up on; rates divide by
/// the flow's active part of the measurement window, `[max(warmup, start), min(end, stop)]`.
/// * `mm_packets_lost`: packets sent in the window that were dropped at a queue or lost on a
///   link — i.e. sent − received, not counting `mm_packets_in_flight_at_end` (sent but neither
///   received nor dropped when the run ended); `mm_loss_pps` is it per second.
/// * `mm_latency_mean_s`: mean one-way delay of packets delivered after warm-up (send
///   timestamp to arrival at the receiving host; the same as `delay_mean_s`; null if none was).
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
        "mm_latency_mean_s": c.delay.mean_s_if_any(),
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
