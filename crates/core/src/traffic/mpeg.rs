//! Synthetic MPEG-1 source (spec `seed000-cbt-evaluation.md` §2.3; CBT dissertation App. A
//! §3.3.2, Table A.5): GOP-structured frames (default IBBPBB at 30 frames/s), each frame's size
//! drawn per type and fragmented at the application level into datagrams of at most `mtu`
//! payload bytes, all sent back to back at the frame time.
//!
//! Frame size of type t: `clip(c_t · mean_t · A · exp(σ_t·Z − σ_t²/2), min_t, max_t)` rounded to
//! bytes, where `A` is the flow's scene-activity factor ([`SceneActivity`], applied to I and P
//! frames only, as in the spec's substitute) and `c_t` is a calibration constant computed once so the
//! *clipped* mean equals `mean_t` (Table A.5's means are whole-movie means). B frames are clipped
//! to at most one datagram.
//!
//! Packet encoding ([`crate::packet::media`]): `seq` = frame number (0, 1, … in the flow's
//! stream; the frame type is `gop[seq % gop.len()]`), `ack` = type, fragment index and count.

use crate::engine::{Dur, Rng, Time};
use crate::packet::media::{self, MediaType};
use crate::packet::{FlowId, Packet, PacketKind};
use crate::traffic::activity::Activity;

/// A flow's scene activity: a two-state Markov chain (high motion / still scenes, the
/// spec's "Markov-modulated factor") with correlation time `activity_time`, times a log-space
/// AR(1) jitter ([`Activity`]) with the same correlation time. Mean factor 1.
#[derive(Clone, Debug)]
pub struct SceneActivity {
    jitter: Activity,
    still: bool,
    still_fraction: f64,
    still_factor: f64,
    high_factor: f64,
    /// Per-frame probabilities of leaving the high and the still state.
    leave: [f64; 2],
}

impl SceneActivity {
    /// Starts from the stationary distribution.
    pub fn new(p: &MpegParams, rng: &mut Rng) -> SceneActivity {
        let dt = 1.0 / p.frame_rate;
        let q = p.still_fraction;
        let tau = p.activity_time_s.max(1e-9);
        // Rates: high→still q/τ, still→high (1−q)/τ; correlation time τ.
        let leave = [1.0 - (-q * dt / tau).exp(), 1.0 - (-(1.0 - q) * dt / tau).exp()];
        let still = q > 0.0 && rng.gen::<f64>() < q;
        SceneActivity {
            jitter: Activity::new(p.activity_sd, p.activity_time_s, dt, rng),
            still,
            still_fraction: q,
            still_factor: p.still_factor,
            high_factor: (1.0 - q * p.still_factor) / (1.0 - q),
            leave,
        }
    }

    /// The stationary (weight, state factor) pairs.
    pub fn mixture(&self) -> Vec<(f64, f64)> {
        vec![(1.0 - self.still_fraction, self.high_factor), (self.still_fraction, self.still_factor)]
    }

    /// The current factor.
    pub fn factor(&self) -> f64 {
        (if self.still { self.still_factor } else { self.high_factor }) * self.jitter.factor()
    }

    /// One frame later.
    pub fn step(&mut self, rng: &mut Rng) {
        if self.still_fraction > 0.0 && rng.gen::<f64>() < self.leave[self.still as usize] {
            self.still = !self.still;
        }
        self.jitter.step(rng);
    }
}
use rand::Rng as _;
use rand_distr::{Distribution, StandardNormal};

/// An MPEG frame type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameType {
    /// Intra-coded: decodable alone.
    I,
    /// Predicted from the previous reference (I or P) frame.
    P,
    /// Predicted from the previous and the next reference frames.
    B,
}

impl FrameType {
    /// Whether other frames are predicted from this one.
    pub fn is_reference(self) -> bool {
        self != FrameType::B
    }
    fn index(self) -> usize {
        self as usize
    }
    fn media(self) -> MediaType {
        match self {
            FrameType::I => MediaType::I,
            FrameType::P => MediaType::P,
            FrameType::B => MediaType::B,
        }
    }
}

/// Parses a GOP pattern such as `"IBBPBB"`: non-empty, starts with I, only I/P/B.
pub fn parse_gop(s: &str) -> Result<Vec<FrameType>, String> {
    if s.is_empty() {
        return Err("must not be empty; e.g. \"IBBPBB\"".into());
    }
    let gop: Vec<FrameType> = s
        .chars()
        .map(|c| match c {
            'I' => Ok(FrameType::I),
            'P' => Ok(FrameType::P),
            'B' => Ok(FrameType::B),
            other => Err(format!("may contain only I, P and B, got '{other}' in \"{s}\"")),
        })
        .collect::<Result<_, _>>()?;
    if gop[0] != FrameType::I {
        return Err(format!("must start with I, got \"{s}\""));
    }
    Ok(gop)
}

/// Size model of one frame type, bytes (payload).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameSize {
    /// Target mean after clipping.
    pub mean: f64,
    /// Smallest frame.
    pub min: f64,
    /// Largest frame.
    pub max: f64,
    /// Standard deviation of ln(size) within a scene.
    pub log_sd: f64,
}

/// Parameters of an MPEG flow (validated; defaults in [`MpegParams::default`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MpegParams {
    /// Frames per second.
    pub frame_rate: f64,
    /// Frame types of one GOP, in display/transmission order.
    pub gop: Vec<FrameType>,
    /// I, P and B frame sizes.
    pub sizes: [FrameSize; 3],
    /// Stationary log-sd of the AR(1) jitter of the scene-activity factor (0 = off).
    pub activity_sd: f64,
    /// Long-run fraction of time in "still" scenes (0 = no still scenes).
    pub still_fraction: f64,
    /// Size factor of still scenes (high-motion scenes get the factor that keeps the mean 1).
    pub still_factor: f64,
    /// Correlation time of the scene-activity factor, seconds.
    pub activity_time_s: f64,
    /// Largest datagram payload, bytes.
    pub mtu: u32,
    /// UDP/IP header bytes added to each datagram on the wire.
    pub header_bytes: u32,
}

impl Default for MpegParams {
    /// Table A.5 means (I 6916 B, P 1646 B, B 241 B), the spec's clip ranges (I 2–14 KB,
    /// P 0.3–10 KB, B one datagram, 100–600 B), within-scene log-sds chosen to match the
    /// dissertation's ranges (I "5–9 KB in a sample minute": 0.2; P "<1 KB to 10 KB": 0.6;
    /// B "~200 B": 0.25); scene activity: still scenes 15 % of the time at 0.6× (high motion
    /// then 1.07×), correlation time 30 s, log-sd 0.05 jitter — so 4 flows' 2-s aggregate sits
    /// near ≈200 KB/s and dips to ≈155/130 KB/s when two/three flows are in still scenes
    /// (Fig. A.14, Table A.4: peaks ≈190–205, lows 130–145, plateaus of tens of seconds);
    /// 1472-B payload (1500-B MTU − 28 B UDP/IP).
    fn default() -> MpegParams {
        MpegParams {
            frame_rate: 30.0,
            gop: parse_gop("IBBPBB").expect("valid"),
            sizes: [
                FrameSize { mean: 6916.0, min: 2000.0, max: 14000.0, log_sd: 0.2 },
                FrameSize { mean: 1646.0, min: 300.0, max: 10000.0, log_sd: 0.6 },
                FrameSize { mean: 241.0, min: 100.0, max: 600.0, log_sd: 0.25 },
            ],
            activity_sd: 0.05,
            still_fraction: 0.15,
            still_factor: 0.6,
            activity_time_s: 30.0,
            mtu: 1472,
            header_bytes: 28,
        }
    }
}

/// `E[clip(m·exp(σZ − σ²/2), lo, hi)]` for Z ~ N(0, 1), by quadrature.
fn clipped_mean(m: f64, sd: f64, lo: f64, hi: f64) -> f64 {
    if sd == 0.0 {
        return m.clamp(lo, hi);
    }
    let (n, span) = (4000, 9.0);
    let h = 2.0 * span / n as f64;
    let mut acc = 0.0;
    for k in 0..=n {
        let z = -span + k as f64 * h;
        let w = if k == 0 || k == n { 0.5 } else { 1.0 };
        let pdf = (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
        acc += w * pdf * (m * (sd * z - sd * sd / 2.0).exp()).clamp(lo, hi);
    }
    acc * h
}

/// The scale `c` such that the clipped mean of `c·mean·F·exp(σZ − σ²/2)` is `mean`, where the
/// factor `F` takes the values of `mix` (weight, factor) and σ² = `log_sd`² + `extra_log_var`
/// (bisection in log space; needs `min < mean < max`).
pub fn calibrate(size: &FrameSize, mix: &[(f64, f64)], extra_log_var: f64) -> f64 {
    let sd = (size.log_sd * size.log_sd + extra_log_var).sqrt();
    let mean_at = |m: f64| -> f64 { mix.iter().map(|(w, f)| w * clipped_mean(m * f, sd, size.min, size.max)).sum() };
    let (mut lo, mut hi) = (-5.0f64, 5.0f64);
    for _ in 0..80 {
        let mid = (lo + hi) / 2.0;
        if mean_at(size.mean * mid.exp()) < size.mean {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    ((lo + hi) / 2.0).exp()
}

/// One frame handed to the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentFrame {
    /// Frame number (`seq` of its fragments).
    pub number: u32,
    /// Its type.
    pub ty: FrameType,
    /// Payload bytes.
    pub bytes: u32,
    /// Datagrams it was split into.
    pub fragments: u32,
}

/// An MPEG flow's sender.
#[derive(Clone, Debug)]
pub struct MpegSource {
    params: MpegParams,
    scale: [f64; 3],
    activity: SceneActivity,
    next_frame: u32,
    /// Time of frame 0.
    origin: Time,
}

impl MpegSource {
    /// A source; draws the initial scene activity from `rng`.
    pub fn new(params: MpegParams, rng: &mut Rng) -> MpegSource {
        let va = params.activity_sd * params.activity_sd;
        let activity = SceneActivity::new(&params, rng);
        let mix = activity.mixture();
        let scale = [
            calibrate(&params.sizes[0], &mix, va),
            calibrate(&params.sizes[1], &mix, va),
            calibrate(&params.sizes[2], &[(1.0, 1.0)], 0.0),
        ];
        MpegSource { params, scale, activity, next_frame: 0, origin: Time::ZERO }
    }

    /// The parameters.
    pub fn params(&self) -> &MpegParams {
        &self.params
    }

    /// Starts the stream at `now` plus a uniform random GOP phase in [0, one GOP); returns when
    /// frame 0 (an I frame) goes out.
    pub fn start(&mut self, now: Time, rng: &mut Rng) -> Time {
        let gop_ns = self.params.gop.len() as f64 * 1e9 / self.params.frame_rate;
        self.origin = now + Dur((rng.gen::<f64>() * gop_ns) as u64);
        self.origin
    }

    /// Draws the next frame's type and size without sending it (advances the process).
    pub fn next_frame(&mut self, rng: &mut Rng) -> (u32, FrameType, u32) {
        let n = self.next_frame;
        self.next_frame += 1;
        let ty = self.params.gop[n as usize % self.params.gop.len()];
        let s = &self.params.sizes[ty.index()];
        let z: f64 = StandardNormal.sample(rng);
        let mut size = self.scale[ty.index()] * s.mean * (s.log_sd * z - s.log_sd * s.log_sd / 2.0).exp();
        if ty != FrameType::B {
            size *= self.activity.factor();
        }
        let size = size.clamp(s.min, s.max).round().max(1.0) as u32;
        self.activity.step(rng);
        (n, ty, size)
    }

    /// Sends the frame due at `now` as fragments into `out`; returns it and the time of the next.
    pub fn emit(&mut self, flow: FlowId, now: Time, rng: &mut Rng, out: &mut Vec<Packet>) -> (SentFrame, Time) {
        let (number, ty, bytes) = self.next_frame(rng);
        let mtu = self.params.mtu;
        let fragments = bytes.div_ceil(mtu);
        for k in 0..fragments {
            let payload = if k + 1 < fragments { mtu } else { bytes - mtu * (fragments - 1) };
            let mut p = Packet::new(PacketKind::Udp, flow);
            p.seq = number;
            p.ack = media::pack(ty.media(), k, fragments);
            p.payload = payload.min(u16::MAX as u32) as u16;
            p.size = payload + self.params.header_bytes;
            p.sent_at = now;
            out.push(p);
        }
        let next = self.origin + Dur((self.next_frame as f64 * 1e9 / self.params.frame_rate).round() as u64);
        (SentFrame { number, ty, bytes, fragments }, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};

    #[test]
    fn gop_patterns_are_checked() {
        assert_eq!(parse_gop("IBBPBB").unwrap().len(), 6);
        assert!(parse_gop("").is_err());
        assert!(parse_gop("BBI").unwrap_err().contains("start with I"));
        assert!(parse_gop("IBX").unwrap_err().contains("only I, P and B"));
    }

    /// Over 600 000 frames (100 000 per B·GOP slot; ≈5.5 h), mean sizes per type match Table A.5.
    /// The scene factor (log-sd 0.3, τ = 30 s = 900 frames) makes samples correlated: I means
    /// have about 100 000/ (2·150) ≈ 330 effective independent scene samples (one GOP is 6
    /// frames, τ is 150 GOPs) → relative se ≈ 0.33/√330 ≈ 1.8 %; 5 % is ≈ 3 se. B sizes are
    /// independent (se 0.1 %).
    #[test]
    fn frame_sizes_match_table_a5_means_and_packet_counts() {
        let mut rng = stream(11, StreamId::Flow(0));
        let mut src = MpegSource::new(MpegParams::default(), &mut rng);
        let mut out = Vec::new();
        let (mut bytes, mut frames, mut pkts) = ([0f64; 3], [0f64; 3], [0f64; 3]);
        let mut now = src.start(Time::ZERO, &mut rng);
        for _ in 0..600_000 {
            out.clear();
            let (f, next) = src.emit(0, now, &mut rng, &mut out);
            now = next;
            let t = f.ty.index();
            bytes[t] += f.bytes as f64;
            frames[t] += 1.0;
            pkts[t] += out.len() as f64;
            assert_eq!(out.len() as u32, f.fragments);
            assert!(out.iter().all(|p| p.payload as u32 <= 1472 && p.seq == f.number && p.sent_at == out[0].sent_at));
            assert_eq!(out.iter().map(|p| p.payload as u32).sum::<u32>(), f.bytes);
            let (ty, k, n) = media::unpack(out.last().unwrap().ack);
            assert_eq!((ty, k + 1, n), (f.ty.media(), f.fragments, f.fragments));
        }
        let mean = |t: usize| bytes[t] / frames[t];
        for (t, target, tol) in [(0, 6916.0, 0.05), (1, 1646.0, 0.05), (2, 241.0, 0.01)] {
            assert!((mean(t) / target - 1.0).abs() < tol, "type {t}: mean {} vs {target}", mean(t));
        }
        assert_eq!(frames[1] * 4.0, frames[2]);
        // Packets per frame (Table A.5: 5.26, 1.69, 1.00). Ours follow from the size model; the
        // band is a model check, not a sampling tolerance.
        let ppf = |t: usize| pkts[t] / frames[t];
        assert!((4.9..5.7).contains(&ppf(0)), "I pkts/frame {}", ppf(0));
        assert!((1.4..1.9).contains(&ppf(1)), "P pkts/frame {}", ppf(1));
        assert_eq!(ppf(2), 1.0);
    }

    /// Four independent flows over 1 hour: the 2-s aggregate load (IP bytes) has a mean of
    /// ≈186 KiB/s payload + 28 B × ≈55 pkt/s headers ≈ 192 KiB/s and spreads over roughly
    /// 130–205 KiB/s (spec §2.3, Fig. A.14). 1 h ≈ 120 scene correlation times per flow, so the
    /// mean's se ≈ 0.3·0.9/√(4·60) ≈ 1.7 % — 6 % band. The percentiles are loose range checks.
    #[test]
    fn four_flow_aggregate_has_the_dissertations_spread() {
        let secs = 3600.0;
        let mut bins = vec![0f64; (secs / 2.0) as usize];
        let mut out = Vec::new();
        for f in 0..4 {
            let mut rng = stream(21, StreamId::Flow(f));
            let mut src = MpegSource::new(MpegParams::default(), &mut rng);
            let mut now = src.start(Time::ZERO, &mut rng);
            while now.as_secs_f64() < secs {
                out.clear();
                let (_, next) = src.emit(f, now, &mut rng, &mut out);
                let b = (now.as_secs_f64() / 2.0) as usize;
                if b < bins.len() {
                    bins[b] += out.iter().map(|p| p.size as f64).sum::<f64>();
                }
                now = next;
            }
        }
        let mut kib: Vec<f64> = bins[1..].iter().map(|b| b / 2.0 / 1024.0).collect();
        kib.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mean = kib.iter().sum::<f64>() / kib.len() as f64;
        let q = |p: f64| kib[((kib.len() - 1) as f64 * p) as usize];
        eprintln!("MPEG 4-flow 2-s KiB/s: mean {mean:.1} p1 {:.1} p5 {:.1} p95 {:.1} p99 {:.1} min {:.1} max {:.1}", q(0.01), q(0.05), q(0.95), q(0.99), kib[0], kib[kib.len() - 1]);
        assert!((180.0..204.0).contains(&mean), "mean {mean}");
        assert!((120.0..165.0).contains(&q(0.02)), "p2 {}", q(0.02));
        assert!((195.0..218.0).contains(&q(0.98)), "p98 {}", q(0.98));
        assert!(kib[kib.len() - 1] < 235.0, "max {}", kib[kib.len() - 1]);
    }

    #[test]
    fn calibration_undoes_the_clipping_bias() {
        let s = FrameSize { mean: 6916.0, min: 2000.0, max: 14000.0, log_sd: 0.5 };
        let c = calibrate(&s, &[(1.0, 1.0)], 0.1);
        assert!(c > 1.0);
        assert!((clipped_mean(c * s.mean, (0.35f64).sqrt(), s.min, s.max) - s.mean).abs() < 0.01);
        let mix = [(0.85, 1.08), (0.15, 0.55)];
        let c = calibrate(&s, &mix, 0.0);
        let m: f64 = mix.iter().map(|(w, f)| w * clipped_mean(c * s.mean * f, 0.5, s.min, s.max)).sum();
        assert!((m - s.mean).abs() < 0.01);
    }
}
