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
    let flows = &out.flows();
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
    let flows = &out.flows();
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
    let flows = &out.flows();
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
    assert_eq!(a.flow_texts(), off.flow_texts());
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
    assert_eq!(a.flow_texts(), off.flow_texts());
    assert_eq!(a.summary["queues"], off.summary["queues"]);
    assert_eq!(a.series.queue_pkts, off.series.queue_pkts);
}

#[test]
fn cwnd_bins_average_to_mean_cwnd_segments_over_the_window() {
    let out = run(TCP_STATE);
    let flows = &out.flows();
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

/// A 20 Mb/s UDP blast through a bottleneck whose rate steps 10 → 5 Mb/s at 4 s, goes down at
/// 6 s and comes back at 10 Mb/s at 7 s (`rate_schedule`).
const RATE_STEPS: &str = r#"
[run]
duration = "10s"
seed = 1

[topology.bottleneck]
rate = "10Mbps"
delay = "5ms"
rate_schedule = [ { at = "4s", rate = "5Mbps" }, { at = "6s", rate = "0bps" }, { at = "7s", rate = "10Mbps" } ]

[queue]
kind = "droptail"
limit = 100

[output]
bin = "1s"
per_flow_timeseries = true

[[flows]]
kind = "udp-cbr"
rate = "20Mbps"
packet_size = "1000B"
"#;

#[test]
fn the_bottleneck_delivers_at_each_scheduled_rate_and_nothing_during_an_outage() {
    let out = run(RATE_STEPS);
    let s = &out.series;
    let goodput = &s.flow_goodput_bps[0]; // bin i covers (i, i + 1] s
    let full = goodput[1..4].iter().sum::<f64>() / 3.0;
    let half = goodput[4..6].iter().sum::<f64>() / 2.0;
    // The link is saturated throughout, so each bin carries the link's rate (payload share alike).
    assert!((half / full - 0.5).abs() < 0.01, "5 Mb/s phase {half} vs 10 Mb/s phase {full}");
    // Down from 6 s to 7 s: only the packets already on the wire or in flight (5 ms) arrive.
    assert!(goodput[6] < 0.01 * full, "outage bin carried {}", goodput[6]);
    let back = goodput[7..10].iter().sum::<f64>() / 3.0;
    assert!((back / full - 1.0).abs() < 0.01, "after the outage {back} vs before {full}");
    // The queue stays full through the outage, and the link was busy 8 of 10 s in time.
    assert_eq!(s.queue_pkts[6], 100.0);
    let utilization = out.summary["queues"][0]["utilization"].as_f64().unwrap();
    assert!((utilization - 0.9).abs() < 0.01, "utilization {utilization}: 9 of 10 s up, saturated");
}

#[test]
fn a_rate_schedule_entry_must_be_inside_the_run_and_in_time_order() {
    for (schedule, wanted) in [
        (r#"[ { at = "0s", rate = "5Mbps" } ]"#, "rate_schedule[0].at"),
        (r#"[ { at = "12s", rate = "5Mbps" } ]"#, "not before the end of the run"),
        (r#"[ { at = "5s", rate = "5Mbps" }, { at = "5s", rate = "1Mbps" } ]"#, "increasing time order"),
        (r#"[ { at = "5s", rate = "-5Mbps" } ]"#, "0bps"),
        (r#"[ { at = "5s", speed = "5Mbps" } ]"#, "speed"),
    ] {
        let text = RATE_STEPS.replace(
            r#"[ { at = "4s", rate = "5Mbps" }, { at = "6s", rate = "0bps" }, { at = "7s", rate = "10Mbps" } ]"#,
            schedule,
        );
        let e = parse_toml(&text).unwrap_err().to_string();
        assert!(e.contains(wanted) && e.contains("topology.bottleneck.rate_schedule"), "{schedule}: {e}");
    }
    let access = RATE_STEPS.replace("[queue]", "[topology.access]\nrate = \"100Mbps\"\nrate_schedule = []\n\n[queue]");
    assert!(parse_toml(&access).unwrap_err().to_string().contains("only the bottleneck"));
}

/// Writes a delivery trace to a fresh temporary file and returns its path.
fn trace_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("aqmlab-trace-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn udp_over_trace(trace: &std::path::Path, queue: &str) -> crate::run::RunOutput {
    run(&format!(
        r#"
[run]
duration = "10s"
warmup = "1s"

[topology.bottleneck]
rate = "10Mbps"
delay = "5ms"
trace = "{}"

[queue]
{queue}

[[flows]]
kind = "udp-cbr"
rate = "20Mbps"
packet_size = "1000B"
"#,
        trace.display()
    ))
}

#[test]
fn a_saturated_trace_link_carries_every_opportunity_byte() {
    // One 1504-byte opportunity per millisecond: 12.032 Mb/s, whatever the packet size (a
    // 1000-byte packet's rest is carried by the next opportunity, its rest by the next packet).
    let path = trace_file("every-ms", "1\n");
    let out = udp_over_trace(&path, "kind = \"droptail\"\nlimit = 100");
    let q = &out.summary["queues"][0];
    assert!((f64_of(q, "utilization") - 1.0).abs() < 1e-3, "{q}");
    assert_eq!(f64_of(q, "trace_mean_rate_bps"), 12_032_000.0);
    let throughput = f64_of(&out.flows()[0], "throughput_bps");
    assert!((throughput / 12.032e6 - 1.0).abs() < 1e-3, "throughput {throughput}");
    // Packets wait for opportunities in the queue: the discipline's sojourn covers the wait.
    assert!(f64_of(q, "mean_sojourn_s") > 0.9 * 100.0 * 1000.0 * 8.0 / 12.032e6, "{q}");
}

#[test]
fn a_trace_gap_is_an_outage_and_the_trace_repeats() {
    // Opportunities every ms for the first 500 ms of each second, none in the second half: half
    // the capacity of the trace above, on average.
    let text: String = (1..=500).map(|ms| format!("{ms}\n")).chain(std::iter::once("1000\n".to_string())).collect();
    let path = trace_file("half-second-on", &text);
    let out = udp_over_trace(&path, "kind = \"droptail\"\nlimit = 100");
    let throughput = f64_of(&out.flows()[0], "throughput_bps");
    let expected = 501.0 * 1504.0 * 8.0; // 501 opportunities a second
    assert!((throughput / expected - 1.0).abs() < 2e-3, "throughput {throughput} vs {expected}");
}

#[test]
fn a_trace_that_cannot_be_read_or_parsed_is_named_in_the_error() {
    let bad = trace_file("bad", "1\n2\nx\n");
    for (path, wanted) in [(bad.clone(), "line 3"), (bad.with_file_name("missing"), "cannot read")] {
        let text = format!(
            "[run]\nduration = \"1s\"\n[topology.bottleneck]\nrate = \"1Mbps\"\ntrace = \"{}\"\n[[flows]]\nkind = \"tcp\"\n",
            path.display()
        );
        let e = parse_toml(&text).unwrap_err().to_string();
        assert!(e.contains("topology.bottleneck.trace") && e.contains(wanted), "{e}");
    }
}

/// The flows are kept as text to bound a million flows' memory; the document must still be what
/// serialising it whole gives: the rest serialised as one `Value`, with `"flows":[...]` at its
/// sorted place (just before `measured_s`). Compared as text: parsing the floats back would round.
#[test]
fn summary_text_is_the_whole_document_serialised_with_the_flows_in_their_sorted_place() {
    let out = run(MIX);
    let rest = out.summary.to_string();
    let at = rest.find(",\"measured_s\":").expect("measured_s in the summary");
    let flows = out.flow_texts();
    assert_eq!(flows.len(), 9);
    let expected = format!("{},\"flows\":[{}]{}", &rest[..at], flows.join(","), &rest[at..]);
    assert_eq!(out.summary_json(), expected);
    assert!(rest.find("\"events\":").unwrap() < at, "flows sorts after events");
}

/// One UDP packet every 10 ms on an otherwise idle 10 Mb/s link: each finds the link idle and the
/// discipline empty.
fn sparse_udp(tx_ring: u32) -> String {
    format!(
        r#"
[run]
duration = "1s"
seed = 1

[topology]
bottleneck = {{ rate = "10Mbps", delay = "5ms", tx_ring = {tx_ring} }}

[queue]
kind = "droptail"
limit = 50

[[flows]]
kind = "udp-cbr"
rate = "800kbps"
packet_size = "1000B"
"#
    )
}

#[test]
fn an_idle_wire_polls_the_discipline_only_without_a_transmit_ring() {
    for (tx_ring, polls_per_packet) in [(0, 1), (1, 1)] {
        let sc = parse_toml(&sparse_udp(tx_ring)).unwrap();
        let mut world = super::World::new(&sc);
        world.run(|_| true).unwrap();
        let link = &world.links[0];
        let sent = crate::qdisc::Qdisc::stats(&link.qdisc).dequeues;
        assert!(sent >= 99, "{sent} packets");
        // Without a ring: the end of each transmission asks for the next packet (ns-2's
        // `resume`). With one: the ring's freed slot asks once, when the packet goes on the wire
        // (ns-3's device-queue wake), and the wire going idle asks nothing more.
        assert!(
            link.empty_polls.abs_diff(polls_per_packet * sent) <= 1,
            "tx_ring = {tx_ring}: {} empty polls for {sent} packets", link.empty_polls
        );
    }
}
