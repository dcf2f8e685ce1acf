//! Validation of the multimedia flow kinds (`mpeg`, `proshare`): defaults applied and written
//! back for the echo, bad values rejected naming `flows[i].key`.
//!
//! Defaults and their sources (spec `seed000-cbt-evaluation.md`):
//! * both: `mtu = "1472B"` — largest UDP payload per datagram (1500-B Ethernet MTU − 20 B IP −
//!   8 B UDP); `header_bytes = "28B"` added to each datagram on the wire (Table 4.1).
//! * `mpeg` (§2.3, Table A.5): `frame_rate = 30`, `gop = "IBBPBB"`; `i_size = "6916B"`
//!   (clip `i_size_min = "2000B"`–`i_size_max = "14000B"`, `i_log_sd = 0.2`: "5–9 KB in a sample
//!   minute"); `p_size = "1646B"` (`"300B"`–`"10000B"`, `p_log_sd = 0.6`: "<1 KB to 10 KB");
//!   `b_size = "241B"` (`"100B"`–`"600B"`, `b_log_sd = 0.25`; never more than one datagram);
//!   scene activity (§2.3 "Markov-modulated factor", correlation time 10–60 s): still scenes
//!   `still_fraction = 0.15` of the time at `still_factor = 0.6`× (high motion ≈1.07×),
//!   `activity_time = "30s"`, log-sd `activity_sd = 0.05` AR(1) jitter — so the 4-flow 2-s
//!   aggregate sits near 200 KB/s and dips to ≈155/130 KB/s; `playout_deadline` none.
//! * `proshare` (§2.2): `audio_size = "200B"` every `audio_interval = "100ms"`; video
//!   `frame_rate = 15`, `video_size = "1660B"`, `video_size_sd = "230B"`, clip
//!   `video_size_min = "200B"`–`video_size_max = "2944B"` (two datagrams); modulation
//!   `activity_sd = 0.12`, `activity_time = "5s"` (±10–15 % over seconds).

use super::schema::FlowParams;
use super::units::{Bytes, Duration};
use crate::engine::Dur;
use crate::error::{join, ConfigError, ConfigResult};
use crate::packet::media::MAX_FRAGMENTS;
use crate::traffic::mpeg::{parse_gop, FrameSize, MpegParams};
use crate::traffic::proshare::ProshareParams;

/// Keys of `kind = "mpeg"`.
pub const MPEG_KEYS: &[&str] = &[
    "frame_rate", "gop", "mtu", "header_bytes", "i_size", "i_size_min", "i_size_max", "i_log_sd", "p_size",
    "p_size_min", "p_size_max", "p_log_sd", "b_size", "b_size_min", "b_size_max", "b_log_sd", "activity_sd",
    "activity_time", "still_fraction", "still_factor", "playout_deadline",
];
/// Keys of `kind = "proshare"`.
pub const PROSHARE_KEYS: &[&str] = &[
    "frame_rate", "mtu", "header_bytes", "audio_size", "audio_interval", "video_size", "video_size_sd",
    "video_size_min", "video_size_max", "activity_sd", "activity_time",
];

fn err<T>(path: String, msg: impl Into<String>) -> ConfigResult<T> {
    Err(ConfigError::new(path, msg))
}

fn positive_f64(v: f64, path: String) -> ConfigResult<f64> {
    if !(v.is_finite() && v > 0.0) {
        return err(path, format!("must be positive, got {v}"));
    }
    Ok(v)
}

fn non_negative_f64(v: f64, path: String) -> ConfigResult<f64> {
    if !(v.is_finite() && v >= 0.0) {
        return err(path, format!("must be zero or positive, got {v}"));
    }
    Ok(v)
}

fn positive_bytes(v: u64, path: String) -> ConfigResult<f64> {
    if v == 0 {
        return err(path, "must be positive, got 0B");
    }
    Ok(v as f64)
}

/// `mtu`, `header_bytes`, `activity_sd`, `activity_time`, `frame_rate` shared by both kinds.
fn common(f: &mut FlowParams, path: &str, frame_rate: f64, activity: (f64, Dur)) -> ConfigResult<(f64, u32, u32, f64, f64)> {
    let rate = positive_f64(*f.frame_rate.get_or_insert(frame_rate), join(path, "frame_rate"))?;
    let mtu = f.mtu.get_or_insert(Bytes(1472)).0;
    if !(100..=65_507).contains(&mtu) {
        return err(join(path, "mtu"), format!("must be between 100B and 65507B (largest UDP payload), got {mtu}B"));
    }
    let header = f.header_bytes.get_or_insert(Bytes(28)).0;
    if header > 1000 {
        return err(join(path, "header_bytes"), format!("must be at most 1000B, got {header}B"));
    }
    let sd = non_negative_f64(*f.activity_sd.get_or_insert(activity.0), join(path, "activity_sd"))?;
    let tau = f.activity_time.get_or_insert(Duration(activity.1)).0;
    if sd > 0.0 && tau == Dur::ZERO {
        return err(join(path, "activity_time"), "must be positive when activity_sd > 0");
    }
    Ok((rate, mtu as u32, header as u32, sd, tau.as_secs_f64()))
}

fn frame_size(
    path: &str,
    t: &str,
    mean: &mut Option<Bytes>,
    min: &mut Option<Bytes>,
    max: &mut Option<Bytes>,
    log_sd: &mut Option<f64>,
    d: FrameSize,
) -> ConfigResult<FrameSize> {
    let key = |k: &str| join(path, &format!("{t}_{k}"));
    let m = positive_bytes(mean.get_or_insert(Bytes(d.mean as u64)).0, key("size"))?;
    let lo = positive_bytes(min.get_or_insert(Bytes(d.min as u64)).0, key("size_min"))?;
    let hi = positive_bytes(max.get_or_insert(Bytes(d.max as u64)).0, key("size_max"))?;
    let sd = non_negative_f64(*log_sd.get_or_insert(d.log_sd), key("log_sd"))?;
    if sd > 3.0 {
        return err(key("log_sd"), format!("must be at most 3, got {sd}"));
    }
    if !(lo < m && m < hi) {
        return err(key("size"), format!("must lie strictly between {t}_size_min ({lo}B) and {t}_size_max ({hi}B), got {m}B"));
    }
    Ok(FrameSize { mean: m, min: lo, max: hi, log_sd: sd })
}

/// Parameters of an `mpeg` group and its playout deadline.
pub fn mpeg_params(f: &mut FlowParams, path: &str) -> ConfigResult<(MpegParams, Option<Dur>)> {
    let d = MpegParams::default();
    let (frame_rate, mtu, header_bytes, activity_sd, activity_time_s) =
        common(f, path, d.frame_rate, (d.activity_sd, Dur::from_secs_f64(d.activity_time_s)))?;
    let gop = parse_gop(f.gop.get_or_insert_with(|| "IBBPBB".into())).map_err(|m| ConfigError::new(join(path, "gop"), m))?;
    let i = frame_size(path, "i", &mut f.i_size, &mut f.i_size_min, &mut f.i_size_max, &mut f.i_log_sd, d.sizes[0])?;
    let p = frame_size(path, "p", &mut f.p_size, &mut f.p_size_min, &mut f.p_size_max, &mut f.p_log_sd, d.sizes[1])?;
    let b = frame_size(path, "b", &mut f.b_size, &mut f.b_size_min, &mut f.b_size_max, &mut f.b_log_sd, d.sizes[2])?;
    if b.max > mtu as f64 {
        return err(join(path, "b_size_max"), format!("must be at most mtu ({mtu}B): a B frame is one datagram, got {}B", b.max));
    }
    for (t, s) in [("i", &i), ("p", &p)] {
        if s.max / mtu as f64 > MAX_FRAGMENTS as f64 {
            return err(join(path, &format!("{t}_size_max")), format!("needs more than {MAX_FRAGMENTS} fragments of mtu {mtu}B"));
        }
    }
    let still_fraction = non_negative_f64(*f.still_fraction.get_or_insert(d.still_fraction), join(path, "still_fraction"))?;
    if still_fraction >= 1.0 {
        return err(join(path, "still_fraction"), format!("must be below 1, got {still_fraction}"));
    }
    let still_factor = positive_f64(*f.still_factor.get_or_insert(d.still_factor), join(path, "still_factor"))?;
    if still_factor * still_fraction >= 1.0 {
        return err(join(path, "still_factor"), "still_factor × still_fraction must be below 1 (the mean factor is 1)");
    }
    if still_fraction > 0.0 && activity_time_s == 0.0 {
        return err(join(path, "activity_time"), "must be positive when still_fraction > 0");
    }
    let deadline = match f.playout_deadline {
        Some(Duration(Dur::ZERO)) => return err(join(path, "playout_deadline"), "must be positive (omit it for no deadline)"),
        Some(Duration(x)) => Some(x),
        None => None,
    };
    Ok((MpegParams { frame_rate, gop, sizes: [i, p, b], activity_sd, still_fraction, still_factor, activity_time_s, mtu, header_bytes }, deadline))
}

/// Parameters of a `proshare` group.
pub fn proshare_params(f: &mut FlowParams, path: &str) -> ConfigResult<ProshareParams> {
    let d = ProshareParams::default();
    let (frame_rate, mtu, header_bytes, activity_sd, activity_time_s) =
        common(f, path, d.frame_rate, (d.activity_sd, Dur::from_secs_f64(d.activity_time_s)))?;
    let audio_size = positive_bytes(f.audio_size.get_or_insert(Bytes(d.audio_size as u64)).0, join(path, "audio_size"))?;
    if audio_size > mtu as f64 {
        return err(join(path, "audio_size"), format!("must be at most mtu ({mtu}B), got {audio_size}B"));
    }
    let audio_interval = f.audio_interval.get_or_insert(Duration(d.audio_interval)).0;
    if audio_interval == Dur::ZERO {
        return err(join(path, "audio_interval"), "must be positive");
    }
    let video_size = positive_bytes(f.video_size.get_or_insert(Bytes(d.video_size as u64)).0, join(path, "video_size"))?;
    let video_size_sd = f.video_size_sd.get_or_insert(Bytes(d.video_size_sd as u64)).0 as f64;
    let lo = positive_bytes(f.video_size_min.get_or_insert(Bytes(d.video_size_min as u64)).0, join(path, "video_size_min"))?;
    let hi = positive_bytes(f.video_size_max.get_or_insert(Bytes(d.video_size_max as u64)).0, join(path, "video_size_max"))?;
    if !(lo < video_size && video_size < hi) {
        return err(
            join(path, "video_size"),
            format!("must lie strictly between video_size_min ({lo}B) and video_size_max ({hi}B), got {video_size}B"),
        );
    }
    if hi / mtu as f64 > MAX_FRAGMENTS as f64 {
        return err(join(path, "video_size_max"), format!("needs more than {MAX_FRAGMENTS} fragments of mtu {mtu}B"));
    }
    Ok(ProshareParams {
        audio_interval,
        audio_size: audio_size as u32,
        frame_rate,
        video_size,
        video_size_sd,
        video_size_min: lo,
        video_size_max: hi,
        activity_sd,
        activity_time_s,
        mtu,
        header_bytes,
    })
}

#[cfg(test)]
mod tests {
    use crate::scenario::parse_toml;

    const BASE: &str = r#"
[run]
duration = "20s"
warmup = "5s"
seed = 7

[topology]
bottleneck = { rate = "10Mbps", delay = "2ms" }

[queue]
kind = "droptail"
limit = 60

[[flows]]
kind = "mpeg"
count = 4
class = 1

[[flows]]
kind = "proshare"
count = 6
class = 1
"#;

    const BLAST: &str = r#"
[[flows]]
kind = "udp-cbr"
rate = "10Mbps"
packet_size = "1052B"
start = "8s"
"#;

    fn flows(text: &str) -> Vec<serde_json::Value> {
        let sc = parse_toml(text).unwrap();
        let out = crate::run::simulate(&sc, None, |_| true).unwrap();
        out.flows()
    }

    #[test]
    fn uncongested_mm_flows_lose_nothing_and_play_30_fps() {
        let fl = flows(BASE);
        for f in &fl[..4] {
            assert_eq!(f["kind"], "mpeg");
            assert_eq!(f["class"], 1);
            assert_eq!(f["mm_packets_lost"], 0);
            let fps = f["mpeg_actual_fps"].as_f64().unwrap();
            let play = f["mpeg_playable_fps"].as_f64().unwrap();
            // 15 s at 30 fps; at most one frame straddles each window edge, and the last
            // B frames may lack their next I (≤ 2 frames + 1 in flight).
            assert!((fps - 30.0).abs() <= 2.0 / 15.0, "fps {fps}");
            assert!(play <= fps && play >= fps - 3.0 / 15.0, "playable {play}");
            assert!(f["mm_latency_mean_s"].as_f64().unwrap() > 0.002);
        }
        let mut pps = 0.0;
        for f in &fl[4..] {
            assert_eq!(f["kind"], "proshare");
            assert_eq!(f["mm_packets_lost"], 0);
            assert!(f.get("frames_sent").is_none());
            pps += f["packets_sent"].as_f64().unwrap() / 15.0 / 6.0;
        }
        // 15 s is 3 modulation times (log-sd 0.12): one flow's 2-packet fraction swings by
        // ±0.2 (±3 pkt/s); the 6-flow mean has sd ≈ 1.2 pkt/s — ±3.5 is ≈ 3 sd. The long-run
        // 36 pkt/s is checked in `traffic::proshare`.
        assert!((pps - 36.0).abs() < 3.5, "pkt/s {pps}");
    }

    #[test]
    fn a_blast_costs_mpeg_more_frames_than_packets_and_runs_are_deterministic() {
        let text = format!("{BASE}{BLAST}");
        let fl = flows(&text);
        assert_eq!(fl, flows(&text), "same seed, same results");
        let (mut lost, mut sent, mut frames, mut playable, mut complete) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for f in &fl[..4] {
            let n = |k: &str| f[k].as_f64().unwrap();
            assert_eq!(n("mm_packets_lost") + n("mm_packets_received") + n("mm_packets_in_flight_at_end"), n("packets_sent"));
            assert!((n("mm_loss_pps") - n("mm_packets_lost") / 15.0).abs() < 1e-9);
            lost += n("mm_packets_lost");
            sent += n("packets_sent");
            frames += n("frames_sent");
            complete += n("frames_complete");
            playable += n("frames_playable");
        }
        assert!(lost > 0.0);
        assert!(playable < complete && complete < frames);
        // Dependencies amplify loss: frame loss well above packet loss (spec §2.3, ≈5× at low loss).
        assert!((1.0 - playable / frames) > 1.5 * lost / sent, "frame loss {} vs pkt loss {}", 1.0 - playable / frames, lost / sent);
        for f in &fl[4..10] {
            assert!(f["mm_loss_pps"].as_f64().unwrap() > 0.0);
        }
    }

    #[test]
    fn bad_multimedia_input_names_the_key() {
        let bad = |from: &str, to: &str, key: &str, msg: &str| {
            let e = parse_toml(&BASE.replacen(from, to, 1)).unwrap_err();
            assert_eq!(e.path, key, "{e}");
            assert!(e.to_string().contains(msg), "{e}");
        };
        let m = "kind = \"mpeg\"\n";
        bad(m, "kind = \"mpeg\"\nframe_rate = 0\n", "flows[0].frame_rate", "positive");
        bad(m, "kind = \"mpeg\"\ngop = \"\"\n", "flows[0].gop", "empty");
        bad(m, "kind = \"mpeg\"\ngop = \"BBI\"\n", "flows[0].gop", "start with I");
        bad(m, "kind = \"mpeg\"\ngop = \"IBXP\"\n", "flows[0].gop", "only I, P and B");
        bad(m, "kind = \"mpeg\"\ni_size = \"0B\"\n", "flows[0].i_size", "positive");
        bad(m, "kind = \"mpeg\"\np_size = \"20KB\"\n", "flows[0].p_size", "between");
        bad(m, "kind = \"mpeg\"\nmtu = \"99B\"\n", "flows[0].mtu", "100B");
        bad(m, "kind = \"mpeg\"\nb_size_max = \"2000B\"\n", "flows[0].b_size_max", "one datagram");
        bad(m, "kind = \"mpeg\"\ni_log_sd = -1.0\n", "flows[0].i_log_sd", "zero or positive");
        bad(m, "kind = \"mpeg\"\nrate = \"1Mbps\"\n", "flows[0].rate", "its own keys are");
        bad(m, "kind = \"mpeg\"\naudio_size = \"200B\"\n", "flows[0].audio_size", "not a key of kind \"mpeg\"");
        let p = "kind = \"proshare\"\n";
        bad(p, "kind = \"proshare\"\nframe_rate = -15.0\n", "flows[1].frame_rate", "positive");
        bad(p, "kind = \"proshare\"\nvideo_size = \"0B\"\n", "flows[1].video_size", "positive");
        bad(p, "kind = \"proshare\"\nmtu = \"50B\"\n", "flows[1].mtu", "100B");
        bad(p, "kind = \"proshare\"\ngop = \"IBBPBB\"\n", "flows[1].gop", "not a key of kind \"proshare\"");
    }

    #[test]
    fn defaults_are_echoed() {
        let sc = parse_toml(BASE).unwrap();
        let f = &sc.echo["flows"][0];
        assert_eq!(f["gop"], "IBBPBB");
        assert_eq!(f["frame_rate"], 30.0);
        assert_eq!(f["mtu"], "1472B");
        assert_eq!(sc.echo["flows"][1]["frame_rate"], 15.0);
    }
}
