//! Synthetic Intel Proshare conference source (spec `seed000-cbt-evaluation.md` §2.2; CBT
//! dissertation App. A §3.3.1), a substitute for the unavailable 294-s packet trace.
//!
//! Per flow: audio, one `audio_size`-payload datagram (200 B + 28 B = 228 B IP) every
//! `audio_interval` (100 ms); video, `frame_rate` (15) frames/s, each of
//! `clip(video_size·A + video_size_sd·Z, video_size_min, video_size_max)` payload bytes, split
//! into ≤ `mtu` (1472 B) datagrams sent back to back. `A` is a mild slowly varying modulation
//! ([`Activity`], log-sd 0.12, τ = 5 s). With the defaults the total per-frame spread is
//! √(230² + (0.12·1660)²) ≈ 305 B, so P(frame > 1472 B) = Φ((1660−1472)/305) ≈ 0.73: 73 % of
//! frames are 2 datagrams, 27 % one → 10 + 15·1.73 ≈ 36 pkt/s and
//! 10·228 + 15·1660 + 26·28 ≈ 27.9 KB/s (27.3 KiB/s) per flow.
//!
//! Audio and video start at independent uniform random phases (one period each).
//! Packet encoding ([`crate::packet::media`]): `seq` = per-flow datagram sequence number,
//! `ack` = type (audio/video), fragment index and count.

use crate::engine::{Dur, Rng, Time};
use crate::packet::media::{self, MediaType};
use crate::packet::{FlowId, Packet, PacketKind};
use crate::traffic::activity::Activity;
use rand::Rng as _;
use rand_distr::{Distribution, StandardNormal};

/// Parameters of a Proshare flow (validated).
#[derive(Clone, Debug, PartialEq)]
pub struct ProshareParams {
    /// Gap between audio datagrams.
    pub audio_interval: Dur,
    /// Audio datagram payload, bytes.
    pub audio_size: u32,
    /// Video frames per second.
    pub frame_rate: f64,
    /// Mean video frame payload, bytes.
    pub video_size: f64,
    /// Frame-to-frame standard deviation of the video frame size, bytes.
    pub video_size_sd: f64,
    /// Smallest video frame, bytes.
    pub video_size_min: f64,
    /// Largest video frame, bytes.
    pub video_size_max: f64,
    /// Stationary log-sd of the slow modulation (0 = off).
    pub activity_sd: f64,
    /// Correlation time of the modulation, seconds.
    pub activity_time_s: f64,
    /// Largest datagram payload, bytes.
    pub mtu: u32,
    /// UDP/IP header bytes per datagram.
    pub header_bytes: u32,
}

impl Default for ProshareParams {
    fn default() -> ProshareParams {
        ProshareParams {
            audio_interval: Dur::from_millis(100),
            audio_size: 200,
            frame_rate: 15.0,
            video_size: 1660.0,
            video_size_sd: 230.0,
            video_size_min: 200.0,
            video_size_max: 2944.0,
            activity_sd: 0.12,
            activity_time_s: 5.0,
            mtu: 1472,
            header_bytes: 28,
        }
    }
}

/// A Proshare flow's sender.
#[derive(Clone, Debug)]
pub struct ProshareSource {
    params: ProshareParams,
    activity: Activity,
    seq: u32,
    audio_origin: Time,
    audio_count: u64,
    video_origin: Time,
    video_count: u64,
}

impl ProshareSource {
    /// A source; draws the initial modulation from `rng`.
    pub fn new(params: ProshareParams, rng: &mut Rng) -> ProshareSource {
        let activity = Activity::new(params.activity_sd, params.activity_time_s, 1.0 / params.frame_rate, rng);
        ProshareSource { params, activity, seq: 0, audio_origin: Time::ZERO, audio_count: 0, video_origin: Time::ZERO, video_count: 0 }
    }

    fn next_audio(&self) -> Time {
        self.audio_origin + Dur(self.params.audio_interval.0 * self.audio_count)
    }
    fn next_video(&self) -> Time {
        self.video_origin + Dur((self.video_count as f64 * 1e9 / self.params.frame_rate).round() as u64)
    }

    /// Starts at `now` with random audio and video phases; returns the first send time.
    pub fn start(&mut self, now: Time, rng: &mut Rng) -> Time {
        self.audio_origin = now + Dur((rng.gen::<f64>() * self.params.audio_interval.0 as f64) as u64);
        self.video_origin = now + Dur((rng.gen::<f64>() * 1e9 / self.params.frame_rate) as u64);
        self.next_audio().min(self.next_video())
    }

    fn push(&mut self, flow: FlowId, now: Time, ty: MediaType, payload: u32, k: u32, n: u32, out: &mut Vec<Packet>) {
        let mut p = Packet::new(PacketKind::Udp, flow);
        p.seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        p.ack = media::pack(ty, k, n);
        p.payload = payload.min(u16::MAX as u32) as u16;
        p.size = payload + self.params.header_bytes;
        p.sent_at = now;
        out.push(p);
    }

    /// Sends whatever is due at `now` (audio and/or a fragmented video frame) into `out`;
    /// returns the next send time.
    pub fn emit(&mut self, flow: FlowId, now: Time, rng: &mut Rng, out: &mut Vec<Packet>) -> Time {
        if self.next_audio() <= now {
            self.push(flow, now, MediaType::Audio, self.params.audio_size, 0, 1, out);
            self.audio_count += 1;
        }
        if self.next_video() <= now {
            let p = &self.params;
            let z: f64 = StandardNormal.sample(rng);
            let size = (p.video_size * self.activity.factor() + p.video_size_sd * z)
                .clamp(p.video_size_min, p.video_size_max)
                .round() as u32;
            self.activity.step(rng);
            let mtu = p.mtu;
            let n = size.div_ceil(mtu);
            for k in 0..n {
                let payload = if k + 1 < n { mtu } else { size - mtu * (n - 1) };
                self.push(flow, now, MediaType::Video, payload, k, n, out);
            }
            self.video_count += 1;
        }
        self.next_audio().min(self.next_video())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};

    /// Runs `flows` sources for `secs`; returns per-flow (packets, IP bytes) and the aggregate
    /// IP bytes per 1-s bin.
    fn run(flows: u32, secs: f64, seed: u64) -> (Vec<(f64, f64)>, Vec<f64>) {
        let mut bins = vec![0f64; secs as usize];
        let mut per = Vec::new();
        let mut out = Vec::new();
        for f in 0..flows {
            let mut rng = stream(seed, StreamId::Flow(f));
            let mut src = ProshareSource::new(ProshareParams::default(), &mut rng);
            let mut now = src.start(Time::ZERO, &mut rng);
            let (mut pk, mut by) = (0.0, 0.0);
            while now.as_secs_f64() < secs {
                out.clear();
                let next = src.emit(f, now, &mut rng, &mut out);
                assert!(next > now);
                for p in &out {
                    assert!(p.payload as u32 <= 1472);
                    pk += 1.0;
                    by += p.size as f64;
                    bins[now.as_secs_f64() as usize] += p.size as f64;
                }
                now = next;
            }
            per.push((pk / secs, by / secs));
        }
        (per, bins)
    }

    /// One flow for 2 h (108 000 frames; the modulation's τ = 5 s gives ≈ 1440 independent
    /// periods): pkt/s se ≈ √(0.2·15/7200 s)… ≈ 0.02 plus modulation ≈ 0.05 → ±0.6 is > 5 se;
    /// bytes/s se ≈ 1660·0.12·15/√1440 ≈ 80 B/s → ±800 B/s.
    #[test]
    fn one_flow_sends_36_packets_and_27_kib_per_second() {
        let (per, _) = run(1, 7200.0, 4);
        let (pps, bps) = per[0];
        assert!((pps - 36.0).abs() < 0.6, "pkt/s {pps}");
        assert!((bps - 27_900.0).abs() < 800.0, "B/s {bps}");
        assert!((bps / 1024.0 - 27.0).abs() < 1.1, "KiB/s {}", bps / 1024.0);
    }

    /// Six flows, 1 h of 1-s bins: mean ≈ 163.5 KiB/s (se ≈ 0.5), and the 1-s load spans about
    /// 140–180 KiB/s (Fig. 5.8): checked as the 2nd and 98th percentiles of the bins.
    #[test]
    fn six_flow_aggregate_spans_140_to_180_kib() {
        let (_, bins) = run(6, 3600.0, 9);
        let mut kib: Vec<f64> = bins[1..].iter().map(|b| b / 1024.0).collect();
        kib.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mean = kib.iter().sum::<f64>() / kib.len() as f64;
        let q = |p: f64| kib[((kib.len() - 1) as f64 * p) as usize];
        eprintln!("Proshare 6-flow 1-s KiB/s: mean {mean:.1} p2 {:.1} p98 {:.1} min {:.1} max {:.1}", q(0.02), q(0.98), kib[0], kib[kib.len() - 1]);
        assert!((158.0..168.0).contains(&mean), "mean {mean}");
        assert!((132.0..152.0).contains(&q(0.02)), "p2 {}", q(0.02));
        assert!((172.0..195.0).contains(&q(0.98)), "p98 {}", q(0.98));
    }
}
