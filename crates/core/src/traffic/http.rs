//! A Mah-style closed-loop web browser (`kind = "http"`; spec `seed000-cbt-evaluation.md` §2.4:
//! Mah [INFOCOM'97] as implemented by Christiansen, Jeffay, Ott, Smith [SIGCOMM 2000]).
//!
//! Per browser: think → primary (HTML) reply, one fresh TCP connection → when it completes, N
//! embedded replies, each its own fresh connection (HTTP/1.0), at most `parallel` at a time →
//! when all are complete, think again. A request costs `request_delay` (default: the slot's
//! one-way path delay, receiver access + bottleneck + sender access) before its reply's first
//! segment is sent; there is no SYN handshake (the simulator has none), replies start with the
//! initial window. A browser owns `parallel` TCP flows ("connection slots", consecutive flow
//! ids); each carries one reply at a time via `TcpSender::begin_transfer`.
//!
//! Two sets of distributions, chosen by the scenario key `distributions`:
//!
//! **`"mah"` (default): Mah's measured CDFs** (`traffic/mah.rs`, data in
//! `crates/core/data/mah-httpmodel/`), each sampled by inverse CDF from one uniform draw
//! (`traffic/empirical.rs`):
//! * files per page from `HttpConnections` (step: observed counts only); embedded replies =
//!   files − 1 (mean 2.838 − 1 = 1.838; 51 % of pages have none);
//! * primary and embedded reply sizes both from `HttpReplyLength` (Mah does not separate them);
//!   linear interpolation between the table's points (ns-2's INTER_CONTINUOUS), mean 6907 B,
//!   6720 B clipped at `object_max` (median 2.1 KB; 34 % under 1000 B);
//! * think time from `HttpThinkTime`, linear, clipped at `think_max`. Unclipped, Mah's think
//!   times (median 16.2 s, mean 1771 s, up to 86,395 s: they include the gaps between browsing
//!   sessions) make a browser offer ≈ 20 KB per ~1800 s, 30× below the dissertation's
//!   calibration. **`think_max` is therefore a calibration, not a measurement**; the spec (§2.4)
//!   calibrates to its load target, ≈ 370 B/s of reply payload per browser (regression slope
//!   2.9546 kb/s per browser; 3,000 browsers ≈ 1.1 MB/s ≈ 8.8 Mb/s). Default
//!   [`MAH_THINK_MAX_S`] = 192 s: 15.4 % of think times are clipped, the clipped mean is 50.6 s
//!   (`Empirical::clipped_mean`), a page is 2.838 replies of 6,721 B = 19.1 KB.
//!   Calibration runs: 3,000 browsers of `cbt_scenarios.http_group()` (FreeBSD-like Reno of
//!   `tcp_keys()`: mss 1448 B, initial window 1, delayed ACKs, 10 Mb/s access; the lab's
//!   Table A.1 RTTs; 60 s start jitter), bottleneck 1 Gb/s, warm-up 1,500 s, 3,600 s measured
//!   (the dissertation's one-hour runs after 25 min), seeds 1–5 each, reply payload per browser,
//!   mean (range over seeds): `think_max` 185 s → 377.3 B/s (375.3–379.1), 190 s → 371.7
//!   (370.4–372.8), **192 s → 369.5 B/s (368.2–370.5; 1.109 MB/s for 3,000)**, 193 s → 368.4
//!   (366.9–369.3), 195 s → 366.0 (364.5–367.0), 200 s → 361.1 (359.5–362.6). Target 369.3 B/s
//!   (2.9546 kb/s / 8). The clip was predicted before the runs: replies in whole bytes carry
//!   6,721 B instead of 7,534 B in whole 1448-B segments (−10.8 %), the old calibration's cycle
//!   was 57.88 s = 56.84 s of thinking + 1.04 s of fetching, and E[min(T, c)] + 1.04 s =
//!   19,074 B / 369.3 B/s gives c ≈ 192 s (190 s predicted 371.6 B/s, measured 371.7).
//!   Before replies were in bytes (whole segments) the calibrated clip was 235 s (369.4 B/s).
//!   Without a clip a browser offers ≈ 12 B/s.
//!
//! **`"parametric"`: stand-ins** used before Mah's data was vendored; each parameter is a key:
//! * primary reply size: lognormal body (median `primary_median` = 2000 B, log-sd
//!   `primary_sigma` = 1.3) with probability 1 − `primary_tail_fraction` (0.07), otherwise a
//!   Pareto tail (`primary_tail_min` = 16384 B, shape `primary_tail_shape` = 1.2). The form is
//!   SURGE's (Barford & Crovella, SIGMETRICS 1998: lognormal body + Pareto α ≈ 1.1 tail above
//!   ~7 %); the scale is reduced so that the mean (≈ 8 KB) and median (≈ 2 KB) are close to the
//!   reply-size summary usually quoted for Mah 1997 (median ~2 KB, mean ~8–10 KB).
//! * embedded references per page: geometric on {0, 1, …} with mean `embedded_mean` = 3 (Mah
//!   1997 reports a mean near 3 files per page; SURGE uses a Pareto α = 2.43 count instead).
//! * embedded reply size: lognormal, median `embedded_median` = 1100 B, log-sd
//!   `embedded_sigma` = 1.5 (SURGE/Barford–Crovella use lognormal for embedded objects;
//!   median scaled to the spec's "mostly small (~1 KB) objects").
//! * user think time: Pareto with shape `think_shape` = 1.5 (SURGE's inactive-OFF shape),
//!   clipped at `think_max` = 600 s, scaled so that the clipped mean is `think_mean`. The default
//!   `think_mean` = 50 s is a **calibration**: with the sizes above the browser offers ≈ 370 B/s
//!   of reply payload on a fast path. Same runs as for `"mah"` (3,000 lab browsers, 1 Gb/s,
//!   1,500 s + 3,600 s, seeds 1–5): `think_mean` 48 s → 386.9 B/s (385.3–388.6), **50 s → 371.6
//!   (369.8–372.5)**, 52 s → 357.5 (355.6–358.1); 50.3 s would hit 369.3, 50 s is kept as the
//!   round value (+0.6 %). Predicted first from the page size (Monte Carlo of the stand-ins):
//!   22.2 KB in whole 1448-B segments, 18.9 KB in bytes (−15 %). With whole segments the
//!   calibrated value was 60 s.
//!
//! Both: every size is clipped to `object_max` = 1 MiB (keeps the means estimable; Mah's largest
//! reply is 1.64 MB) and rounded to the nearest whole byte; a 0-byte reply (0.2 % of Mah's) is
//! sent as 1 byte (a transfer carries at least one segment with a payload). A reply is sent with
//! `TcpSender::begin_transfer_bytes`: full `mss` segments and a short last one; `transfers.csv`
//! counts its ⌈bytes / mss⌉ segments. Mean HTTP data packet on the wire (lab keys: mss 1448 +
//! 52 B of headers; 3,000 browsers at 1 Gb/s, 3,600 s, seeds 1–5, measured as bottleneck bytes
//! over delivered packets, no losses): **1343.6 B with `"mah"`, 1283.8 B with `"parametric"`**
//! (1500 B, every packet full, when replies were whole segments); computed from the tables,
//! 1343.7 B. The dissertation's lab measured 1053–1061 B per HTTP packet; the rest of that gap
//! is not in the reply sizes (its packets include requests, SYN/FIN and other small packets
//! that this model does not send). Not modelled: request sizes
//! (a request is a delay only; Mah's `HttpRequestLength`, mean 337 B, would add 0.27 ms at a
//! 10 Mb/s access rate, small against the path delay), Mah's "consecutive pages from one server"
//! (`HttpServerStay`: each slot has its own access link in the dumbbell, so the server choice has
//! no effect), persistent connections.
//!
//! **Start** (`start_mode`). Every browser begins at its flow start (`start`, spread by
//! `start_jitter`) in a think period; only the length of that first think differs:
//! * `"stationary"` (default): the think-time process is a renewal process, and a browser seen at
//!   a random time in equilibrium is in a think period whose remaining length R has density
//!   P(T > r)/E[T] (T the clipped think time), i.e. P(R ≤ r) = E[min(T, r)]/E[T]. It is drawn as
//!   R = V·T*, V uniform and T* length-biased (density t·f_T(t)/E[T]): for Mah's clipped table,
//!   `Empirical::length_biased_sample` (piecewise: atoms and uniforms, exact); for the clipped
//!   Pareto, [`clipped_pareto_length_biased`] (closed form). Three uniforms per browser. Mean R:
//!   70.7 s for Mah clipped at 192 s (E[T²]/2E[T]). The fetch phases (~1 s per cycle against
//!   ~51 s of thinking) are ignored: all browsers begin thinking, so the first minute's page
//!   rate is ≈ 2 % above the steady one, within the noise below.
//! * `"synchronized"`: a fresh think time from the think distribution (the behaviour before
//!   `start_mode` existed). Browsers that start together first wake after short think times
//!   (Mah's median is 16 s) and the aggregate rings for minutes.
//!
//! The default is `"stationary"`: the model stands for a population of users in steady state
//! (the dissertation warmed its generators up for 25 min), and the ringing is an artefact of
//! the simulation start that would otherwise bias every window measured in the first ~10 min.
//! Per-browser reply payload (B/s) in windows from t = 0, the 3,000 lab browsers alone on 1 Gb/s
//! (as the calibration, 60 s start jitter), seeds 1–5, mean (range):
//!
//! | start_mode | distributions | 0–60 s | 60–120 s | 120–300 s | 300–600 s | 600–1500 s |
//! |---|---|---|---|---|---|---|
//! | stationary | mah | 175.5 (163–199) | 372.9 (329–402) | 369.3 (352–383) | 375.4 (366–394) | 372.0 (364–375) |
//! | synchronized | mah | 352.2 (343–371) | 435.0 (411–456) | 345.8 (330–364) | 368.3 (361–376) | 374.5 (367–380) |
//! | stationary | parametric | 182.0 (161–191) | 371.8 (356–391) | 365.1 (356–379) | 367.7 (356–375) | 368.4 (364–372) |
//! | synchronized | parametric | 138.2 (123–152) | 442.5 (429–464) | 397.2 (390–408) | 375.4 (363–388) | 367.4 (358–375) |
//!
//! With `"stationary"` the 0–60 s window is half the steady load because the browsers join
//! uniformly over the 60-s jitter (each offers its steady load from its start); from 60 s on the
//! windows are the steady value within the sampling noise (a 180-s window holds ≈ 9,000 pages of
//! coefficient of variation ≈ 2.8: ± 3 %).

use rand::Rng as _;
use rand_distr::{Distribution, StandardNormal};

use super::mah;
use crate::engine::{Dur, Rng, Time};

/// Default `think_max` with `distributions = "mah"`, seconds: the calibration of the module doc.
pub const MAH_THINK_MAX_S: f64 = 192.0;

/// The validated parameters of one `kind = "http"` group.
#[derive(Clone, Debug, PartialEq)]
pub struct HttpModel {
    /// Connection slots per browser (concurrent embedded fetches), 1..=32.
    pub parallel: u32,
    /// Largest think time, seconds.
    pub think_max_s: f64,
    /// Largest object, bytes.
    pub object_max: f64,
    /// Segment payload, bytes (the slots' `mss`).
    pub mss: u32,
    /// Request delay; `None` = the slot's one-way path delay.
    pub request_delay: Option<Dur>,
    /// Where think times, sizes and counts come from.
    pub distributions: HttpDistributions,
    /// How a browser's first think period is drawn (scenario key `start_mode`).
    pub start: HttpStart,
}

/// How a browser begins, at its flow start (module doc, "Start").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HttpStart {
    /// Mid-think, in the renewal process's equilibrium: the first think is a residual life
    /// V·T* (T* length-biased, V uniform), so the aggregate offers its steady load at once.
    Stationary,
    /// A fresh think time: all browsers begin a think period at their start (within
    /// `start_jitter`), and the aggregate load rings for minutes.
    Synchronized,
}

/// The distributions of a browser (module doc).
#[derive(Clone, Debug, PartialEq)]
pub enum HttpDistributions {
    /// Mah's measured CDFs (`traffic/mah.rs`).
    Mah,
    /// The parametric stand-ins.
    Parametric(Parametric),
}

/// The parametric stand-ins' parameters (module doc).
#[derive(Clone, Debug, PartialEq)]
pub struct Parametric {
    /// Clipped-Pareto think time: shape (the scale is derived from the mean, the clip is
    /// `HttpModel::think_max_s`).
    pub think_shape: f64,
    /// Pareto scale (minimum think time), seconds.
    pub think_scale_s: f64,
    /// Primary size lognormal body: ln(median) and sigma.
    pub primary_mu: f64,
    /// Log-sd of the primary body.
    pub primary_sigma: f64,
    /// Probability that a primary size comes from the Pareto tail.
    pub primary_tail_fraction: f64,
    /// Pareto tail minimum, bytes.
    pub primary_tail_min: f64,
    /// Pareto tail shape.
    pub primary_tail_shape: f64,
    /// Mean number of embedded objects (geometric on 0, 1, ...).
    pub embedded_mean: f64,
    /// Embedded size lognormal: ln(median) and sigma.
    pub embedded_mu: f64,
    /// Log-sd of embedded sizes.
    pub embedded_sigma: f64,
}

/// Mean of min(X, max) for X ~ Pareto(scale, shape), shape > 1.
pub fn clipped_pareto_mean(scale: f64, shape: f64, max: f64) -> f64 {
    if max <= scale {
        return max;
    }
    scale * shape / (shape - 1.0) - scale.powf(shape) * max.powf(1.0 - shape) / (shape - 1.0)
}

/// The Pareto scale whose clipped mean is `mean` (bisection; `mean` < `max`).
pub fn pareto_scale_for_mean(mean: f64, shape: f64, max: f64) -> f64 {
    let (mut lo, mut hi) = (0.0, mean);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if clipped_pareto_mean(mid, shape, max) < mean {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// A draw of the length-biased distribution of T = min(X, max), X ~ Pareto(scale, shape), from
/// two uniforms (`u` picks the part, `v` the value in it). T has density shape·scale^shape·t^−(shape+1)
/// on [scale, max) and an atom (scale/max)^shape at max; length-biased, the continuous part
/// has weight shape·scale^shape·(scale^(1−shape) − max^(1−shape))/(shape − 1) and density ∝
/// t^−shape (inverted in closed form), the atom weight max·(scale/max)^shape; the two sum to
/// [`clipped_pareto_mean`].
pub fn clipped_pareto_length_biased(scale: f64, shape: f64, max: f64, u: f64, v: f64) -> f64 {
    if max <= scale {
        return max;
    }
    let e = 1.0 - shape; // < 0
    let continuous = shape * scale.powf(shape) * (scale.powf(e) - max.powf(e)) / (shape - 1.0);
    let atom = max * (scale / max).powf(shape);
    if u * (continuous + atom) < continuous {
        (scale.powf(e) - v * (scale.powf(e) - max.powf(e))).powf(1.0 / e)
    } else {
        max
    }
}

fn pareto(rng: &mut Rng, scale: f64, shape: f64) -> f64 {
    let u: f64 = 1.0 - rng.gen::<f64>(); // (0, 1]
    scale / u.powf(1.0 / shape)
}

fn lognormal(rng: &mut Rng, mu: f64, sigma: f64) -> f64 {
    let z: f64 = StandardNormal.sample(rng);
    (mu + sigma * z).exp()
}

impl HttpModel {
    /// A drawn size as a reply: clipped at `object_max`, rounded to the nearest whole byte, at
    /// least 1 byte (a 0-byte reply, 0.2 % of Mah's, carries 1 byte: the simulator's transfers
    /// carry at least one segment with a payload).
    pub fn reply_bytes(&self, drawn: f64) -> u64 {
        drawn.min(self.object_max).round().max(1.0) as u64
    }
    /// Segments of a reply of `bytes`: ⌈bytes / mss⌉ (what `transfers.csv` counts).
    pub fn segments(&self, bytes: u64) -> u32 {
        bytes.div_ceil(u64::from(self.mss)).max(1).min(u64::from(u32::MAX)) as u32
    }
    /// A think time. One draw with Mah's table; parametric as before (one draw).
    pub fn draw_think(&self, rng: &mut Rng) -> Dur {
        let s = match &self.distributions {
            HttpDistributions::Mah => mah::think_time().sample(rng.gen::<f64>()),
            HttpDistributions::Parametric(p) => pareto(rng, p.think_scale_s, p.think_shape),
        };
        Dur::from_secs_f64(s.min(self.think_max_s))
    }
    /// The first think time of a browser (module doc, "Start"). `Synchronized`: [`Self::draw_think`].
    /// `Stationary`: the residual life V·T*, T* length-biased from the clipped think-time
    /// distribution; three draws (piece, value in it, V).
    pub fn draw_first_think(&self, rng: &mut Rng) -> Dur {
        if self.start == HttpStart::Synchronized {
            return self.draw_think(rng);
        }
        let (u, v, w): (f64, f64, f64) = (rng.gen(), rng.gen(), rng.gen());
        let t = match &self.distributions {
            HttpDistributions::Mah => mah::think_time().length_biased_sample(self.think_max_s, u, v),
            HttpDistributions::Parametric(p) => clipped_pareto_length_biased(p.think_scale_s, p.think_shape, self.think_max_s, u, v),
        };
        Dur::from_secs_f64(w * t.min(self.think_max_s))
    }
    /// A primary reply, bytes.
    pub fn draw_primary(&self, rng: &mut Rng) -> u64 {
        let b = match &self.distributions {
            HttpDistributions::Mah => mah::reply_length().sample(rng.gen::<f64>()),
            HttpDistributions::Parametric(p) => {
                if rng.gen::<f64>() < p.primary_tail_fraction {
                    pareto(rng, p.primary_tail_min, p.primary_tail_shape)
                } else {
                    lognormal(rng, p.primary_mu, p.primary_sigma)
                }
            }
        };
        self.reply_bytes(b)
    }
    /// Embedded objects of a page.
    pub fn draw_embedded_count(&self, rng: &mut Rng) -> u32 {
        match &self.distributions {
            // Files per page, primary included: ≥ 1 in the table.
            HttpDistributions::Mah => mah::connections().sample(rng.gen::<f64>()) as u32 - 1,
            HttpDistributions::Parametric(p) => {
                if p.embedded_mean <= 0.0 {
                    return 0;
                }
                // Geometric on {0, 1, ...}: P(k) = p(1-p)^k, mean (1-p)/p.
                let q = 1.0 / (1.0 + p.embedded_mean);
                let u: f64 = 1.0 - rng.gen::<f64>();
                (u.ln() / (1.0 - q).ln()).floor().min(10_000.0) as u32
            }
        }
    }
    /// An embedded reply, bytes.
    pub fn draw_embedded(&self, rng: &mut Rng) -> u64 {
        let b = match &self.distributions {
            HttpDistributions::Mah => mah::reply_length().sample(rng.gen::<f64>()),
            HttpDistributions::Parametric(p) => lognormal(rng, p.embedded_mu, p.embedded_sigma),
        };
        self.reply_bytes(b)
    }
}

/// What a browser is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for its wake-up (think time, or the first start).
    Thinking,
    /// Fetching the primary reply (slot 0).
    Primary,
    /// Fetching embedded replies.
    Embedded,
}

/// One browser's state machine. Slots are numbered 0..parallel.
#[derive(Clone, Debug)]
pub struct Browser {
    /// The model (index into `Scenario::http_models`).
    pub model: u16,
    /// Flow id of slot 0; slot s is flow `first_flow + s`.
    pub first_flow: u32,
    /// Current phase.
    pub phase: Phase,
    /// Embedded objects not yet handed to a slot.
    pub embedded_left: u32,
    /// Bit s set = slot s has a reply in progress (request or transfer).
    pub busy: u32,
    /// When the current page was requested.
    pub page_start: Time,
    /// Pages completed after warm-up.
    pub pages: u64,
    /// Sum of their response times (request of the primary to completion of the last embedded), s.
    pub response_sum_s: f64,
    /// Random stream (think times, sizes, counts).
    pub rng: Rng,
}

impl Browser {
    /// A browser that waits for its first wake-up.
    pub fn new(model: u16, first_flow: u32, rng: Rng) -> Browser {
        Browser {
            model,
            first_flow,
            phase: Phase::Thinking,
            embedded_left: 0,
            busy: 0,
            page_start: Time::ZERO,
            pages: 0,
            response_sum_s: 0.0,
            rng,
        }
    }

    /// Replies in progress.
    pub fn in_progress(&self) -> u32 {
        self.busy.count_ones()
    }

    /// Think time over: requests the primary reply. Returns (slot, reply bytes).
    pub fn wake(&mut self, m: &HttpModel, now: Time) -> (u32, u64) {
        debug_assert_eq!(self.phase, Phase::Thinking);
        debug_assert_eq!(self.busy, 0);
        self.phase = Phase::Primary;
        self.page_start = now;
        self.busy = 1;
        (0, m.draw_primary(&mut self.rng))
    }

    /// Slot `slot` finished its reply at `now`. Appends the replies to start, (slot, bytes),
    /// to `start`; returns the next wake-up time when the page is complete.
    pub fn transfer_done(
        &mut self,
        m: &HttpModel,
        now: Time,
        slot: u32,
        warmup: Time,
        start: &mut Vec<(u32, u64)>,
    ) -> Option<Time> {
        debug_assert!(self.busy & (1 << slot) != 0, "slot {slot} was not busy");
        self.busy &= !(1 << slot);
        if self.phase == Phase::Primary {
            self.phase = Phase::Embedded;
            self.embedded_left = m.draw_embedded_count(&mut self.rng);
        }
        while self.embedded_left > 0 && self.in_progress() < m.parallel {
            let free = (!self.busy).trailing_zeros();
            self.busy |= 1 << free;
            self.embedded_left -= 1;
            start.push((free, m.draw_embedded(&mut self.rng)));
        }
        if self.busy == 0 {
            if self.page_start >= warmup {
                self.pages += 1;
                self.response_sum_s += (now.0 - self.page_start.0) as f64 * 1e-9;
            }
            self.phase = Phase::Thinking;
            return Some(now + m.draw_think(&mut self.rng));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};

    pub(crate) fn default_model() -> HttpModel {
        crate::scenario::validate::default_http_model(1460)
    }

    fn parametric_model() -> HttpModel {
        crate::scenario::validate::default_parametric_http_model(1460)
    }

    fn with_think_scale(m: HttpModel, k: f64) -> HttpModel {
        let HttpDistributions::Parametric(p) = m.distributions else { panic!("parametric") };
        HttpModel { distributions: HttpDistributions::Parametric(Parametric { think_scale_s: k, ..p }), ..m }
    }

    #[test]
    fn clipped_pareto_scale_recovers_the_mean() {
        let k = pareto_scale_for_mean(50.0, 1.5, 600.0);
        assert!((clipped_pareto_mean(k, 1.5, 600.0) - 50.0).abs() < 1e-6);
        let m = with_think_scale(parametric_model(), k);
        let mut rng = stream(3, StreamId::Flow(0));
        let n = 400_000;
        let mean = (0..n).map(|_| m.draw_think(&mut rng).as_secs_f64()).sum::<f64>() / n as f64;
        // clipped at 600 s the sd is ≈ 75 s: standard error 0.12 s
        assert!((mean - 50.0).abs() < 1.0, "think mean {mean}");
    }

    #[test]
    fn embedded_counts_are_geometric_with_the_mean() {
        let m = parametric_model();
        let mut rng = stream(4, StreamId::Flow(0));
        let n = 200_000;
        let draws: Vec<u32> = (0..n).map(|_| m.draw_embedded_count(&mut rng)).collect();
        let mean = draws.iter().map(|&k| k as f64).sum::<f64>() / n as f64;
        assert!((mean - 3.0).abs() < 0.05, "mean {mean}");
        let zeros = draws.iter().filter(|&&k| k == 0).count() as f64 / n as f64;
        assert!((zeros - 0.25).abs() < 0.005, "P(0) = {zeros}");
    }

    /// Mean page payload (Monte Carlo): (primary mean, embedded bytes per page), bytes.
    fn page_size(m: &HttpModel, seed: u64) -> (f64, f64) {
        let mut rng = stream(seed, StreamId::Flow(0));
        let n = 400_000;
        let (mut prim, mut emb) = (0u64, 0u64);
        for _ in 0..n {
            prim += m.draw_primary(&mut rng);
            for _ in 0..m.draw_embedded_count(&mut rng) {
                emb += m.draw_embedded(&mut rng);
            }
        }
        (prim as f64 / n as f64, emb as f64 / n as f64)
    }

    #[test]
    fn parametric_page_size() {
        let (p, e) = page_size(&parametric_model(), 5);
        eprintln!("mean primary {p:.0} B, embedded per page {e:.0} B, page {:.0} B", p + e);
        assert!(p > 4000.0 && p < 16000.0, "primary mean {p}");
    }

    /// With Mah's tables a page is 2.838 replies (HttpConnections mean) of Mah's reply sizes
    /// clipped at 1 MiB and rounded to whole bytes: 6720.9 B per reply (the table's clipped mean,
    /// `Empirical::clipped_mean(1 MiB)` = 6720.4 B, plus the rounding of the 0-byte replies to
    /// 1 B and to nearest whole bytes; exact by `mah_reply_byte_mean` below), so the embedded
    /// bytes per page are 1.838 × 6720.9 = 12,353 B.
    #[test]
    fn mah_page_size_is_the_tables_means() {
        let m = default_model();
        let reply = mah_reply_byte_mean(&m);
        let clipped = mah::reply_length().clipped_mean(m.object_max);
        assert!((reply - clipped).abs() < 1.0, "reply mean {reply} vs clipped table mean {clipped}");
        assert!((reply - 6720.9).abs() < 0.5, "reply mean {reply}");
        let (p, e) = page_size(&m, 5);
        eprintln!("mean primary {p:.0} B, embedded per page {e:.0} B, page {:.0} B", p + e);
        // Reply sd ≈ 31 KB (clipped): standard error of the primary mean over 4·10^5 pages
        // 49 B; the embedded bytes per page have sd ≈ 52 KB, standard error 83 B (the sd's of
        // the whole-segment sizes, which differ from these by < mss). Bounds are 5 σ.
        assert!((p - reply).abs() < 245.0, "primary mean {p} vs {reply}");
        assert!((e - 1.838 * reply).abs() < 415.0, "embedded per page {e} vs {}", 1.838 * reply);
    }

    /// Exact mean reply payload in bytes: the integral over u of the drawn reply
    /// (`reply_bytes(x(u))`, clipped, rounded, ≥ 1), by fine quadrature in u (10^6 midpoints).
    fn mah_reply_byte_mean(m: &HttpModel) -> f64 {
        let n = 1_000_000;
        let r = mah::reply_length();
        (0..n).map(|i| m.reply_bytes(r.sample((i as f64 + 0.5) / n as f64)) as f64).sum::<f64>() / n as f64
    }

    #[test]
    fn replies_are_whole_bytes_clipped_and_at_least_one() {
        let m = HttpModel { object_max: 10_000.0, ..default_model() };
        assert_eq!(m.reply_bytes(0.0), 1); // Mah's 0-byte replies carry 1 byte
        assert_eq!(m.reply_bytes(0.4), 1);
        assert_eq!(m.reply_bytes(299.6), 300);
        assert_eq!(m.reply_bytes(25_000.0), 10_000);
        assert_eq!((m.segments(1), m.segments(1460), m.segments(1461), m.segments(10_000)), (1, 1, 2, 7));
        // ~1/3 of Mah's replies are under 1000 B (exact quantile of the table: F(1000 B) = 0.337).
        let mut rng = stream(8, StreamId::Flow(0));
        let n = 100_000;
        let small = (0..n).filter(|_| m.draw_embedded(&mut rng) < 1000).count() as f64 / n as f64;
        assert!((small - 0.337).abs() < 0.0075, "P(reply < 1000 B) = {small}"); // se 0.0015
    }

    #[test]
    fn mah_counts_and_think_times_come_from_the_tables() {
        let m = HttpModel { think_max_s: 100.0, ..default_model() };
        let mut rng = stream(6, StreamId::Flow(0));
        let n = 200_000;
        let counts: Vec<u32> = (0..n).map(|_| m.draw_embedded_count(&mut rng)).collect();
        // HttpConnections: P(1 file) = 739/1444 = 0.5118; mean files 2.838 → embedded 1.838.
        let zeros = counts.iter().filter(|&&k| k == 0).count() as f64 / n as f64;
        assert!((zeros - 0.5118).abs() < 0.006, "P(0) = {zeros}"); // se 0.0011
        let mean = counts.iter().map(|&k| k as f64).sum::<f64>() / n as f64;
        assert!((mean - 1.838).abs() < 0.04, "mean {mean}"); // sd ≈ 3.9: se 0.009
        assert_eq!(counts.iter().max(), Some(&64));
        let think: Vec<f64> = (0..n).map(|_| m.draw_think(&mut rng).as_secs_f64()).collect();
        assert!(think.iter().all(|&t| (1.005..=100.0).contains(&t)));
        let mean = think.iter().sum::<f64>() / n as f64;
        let want = mah::think_time().clipped_mean(100.0);
        // Clipped at 100 s: sd < 40 s, se < 0.09 s.
        assert!((mean - want).abs() < 0.45, "think mean {mean} vs {want}");
    }

    /// Fraction of `n` first think times at or below each of `at` (seconds).
    fn first_think_cdf(m: &HttpModel, seed: u64, at: &[f64]) -> Vec<f64> {
        let mut rng = stream(seed, StreamId::Flow(0));
        let n = 400_000;
        let d: Vec<f64> = (0..n).map(|_| m.draw_first_think(&mut rng).as_secs_f64()).collect();
        assert!(d.iter().all(|&t| (0.0..=m.think_max_s).contains(&t)));
        at.iter().map(|&x| d.iter().filter(|&&t| t <= x).count() as f64 / n as f64).collect()
    }

    /// Stationary start: the first think is the equilibrium residual life R of the clipped think
    /// time T, P(R ≤ r) = E[min(T, r)] / E[T] (renewal theory; E[min(T, r)] is
    /// `Empirical::clipped_mean` and `clipped_pareto_mean`). Standard error of each fraction
    /// ≤ 0.0008 over 4·10^5 draws: 0.004 is 5 σ.
    #[test]
    fn stationary_first_think_has_the_equilibrium_residual_distribution() {
        let m = default_model();
        assert_eq!(m.start, HttpStart::Stationary);
        let at = [5.0, 20.0, 60.0, 150.0];
        let t = mah::think_time();
        for (x, got) in at.iter().zip(first_think_cdf(&m, 11, &at)) {
            let want = t.clipped_mean(*x) / t.clipped_mean(m.think_max_s);
            assert!((got - want).abs() < 0.004, "mah P(R ≤ {x}) = {got}, want {want}");
        }
        let m = parametric_model();
        let HttpDistributions::Parametric(p) = &m.distributions else { panic!("parametric") };
        let (k, a) = (p.think_scale_s, p.think_shape);
        for (x, got) in at.iter().zip(first_think_cdf(&m, 12, &at)) {
            let want = clipped_pareto_mean(k, a, *x) / clipped_pareto_mean(k, a, m.think_max_s);
            assert!((got - want).abs() < 0.004, "parametric P(R ≤ {x}) = {got}, want {want}");
        }
    }

    /// Synchronized start: the first think is an ordinary think time (same draws as `draw_think`).
    #[test]
    fn synchronized_first_think_is_a_fresh_think_time() {
        let m = HttpModel { start: HttpStart::Synchronized, ..default_model() };
        let (mut a, mut b) = (stream(13, StreamId::Flow(0)), stream(13, StreamId::Flow(0)));
        for _ in 0..1000 {
            assert_eq!(m.draw_first_think(&mut a), m.draw_think(&mut b));
        }
    }

    #[test]
    fn state_machine_orders_primary_embedded_and_think() {
        let m = HttpModel { parallel: 2, ..default_model() };
        let mut b = Browser::new(0, 10, stream(9, StreamId::Flow(0)));
        let mut out = Vec::new();
        let mut pages_with_embedded = 0;
        let mut now = Time::ZERO;
        for _page in 0..200 {
            assert_eq!(b.phase, Phase::Thinking);
            let (slot, bytes) = b.wake(&m, now);
            assert_eq!((slot, b.in_progress(), b.phase), (0, 1, Phase::Primary));
            assert!((1..=1_048_576).contains(&bytes));
            // Nothing embedded starts before the primary completes.
            now = now + Dur::from_millis(10);
            out.clear();
            let mut wake = b.transfer_done(&m, now, 0, Time::ZERO, &mut out);
            let mut active: Vec<u32> = out.iter().map(|&(s, _)| s).collect();
            if !active.is_empty() {
                pages_with_embedded += 1;
                assert!(wake.is_none());
            }
            while let Some(&s) = active.first() {
                assert!(b.in_progress() <= m.parallel);
                assert_eq!(b.in_progress() as usize, active.len());
                assert_eq!(b.phase, Phase::Embedded);
                active.remove(0);
                now = now + Dur::from_millis(5);
                out.clear();
                wake = b.transfer_done(&m, now, s, Time::ZERO, &mut out);
                for &(ns, _) in &out {
                    assert!(!active.contains(&ns), "slot {ns} reused while busy");
                    active.push(ns);
                }
                assert!(wake.is_none() || active.is_empty());
            }
            let w = wake.expect("page complete → think");
            assert!(w >= now);
            assert_eq!(b.in_progress(), 0);
            now = w;
        }
        assert_eq!(b.pages, 200);
        assert!(pages_with_embedded > 100);
    }
}

#[cfg(test)]
mod end_to_end {
    use crate::run::{load, simulate, Format};

    fn scenario(browsers: u32, duration: &str, extra: &str) -> String {
        format!(
            r#"
[run]
duration = "{duration}"
warmup = "100s"
seed = 7
[topology.bottleneck]
rate = "1Gbps"
delay = "5ms"
[[flows]]
kind = "http"
count = {browsers}
start_jitter = "1s"
{extra}
"#
        )
    }

    fn run(text: &str) -> crate::run::RunOutput {
        let sc = load(text, Format::Toml, None).expect("valid");
        simulate(&sc, None, |_| true).map_err(|_| ()).expect("runs")
    }

    /// Offered load per browser on a fast path, the calibration target of 370 B/s (spec §2.4:
    /// 2.9546 kb/s per browser), with Mah's tables and the calibrated `think_max`. 1000 browsers
    /// × 500 measured s ≈ 9,600 pages of mean 19.1 KB; the page size has a coefficient of
    /// variation of ≈ 3 (Monte Carlo of the tables, replies clipped at 1 MiB), so the sampling
    /// error of the mean is ≈ 3/√9600 ≈ 3 %, plus think-time count noise: ±15 % is > 4 σ.
    /// The calibration itself used the lab's FreeBSD-like TCP keys (module doc); these are the
    /// simulator's defaults (shorter response times). This run gives 362.0 B/s (stationary
    /// start); the same scenario with a 1,500-s warm-up and 3,600 s measured gives 378.1 B/s.
    #[test]
    fn default_browser_offers_about_370_bytes_per_second() {
        let out = run(&scenario(1000, "600s", ""));
        let goodput = out.summary["aggregate"]["goodput_bps"].as_f64().unwrap();
        let per_browser = goodput / 8.0 / 1000.0;
        eprintln!("offered load per browser {per_browser:.1} B/s ({:.3} kb/s)", per_browser * 8e-3);
        assert!((per_browser - 370.0).abs() < 0.15 * 370.0, "per browser {per_browser} B/s");
        let pages: u64 = out.flows().iter().filter_map(|f| f["http_pages"].as_u64()).sum();
        assert!(pages > 5000, "pages {pages}");
        // Replies are byte-sized: the mean data packet on the wire (bottleneck bytes over
        // delivered packets; no losses at 1 Gb/s) is the tables' Σ(bytes + 52·segments)/Σ segments
        // (quadrature over u, mss 1448 + 52 B headers: 1343.7 B), not 1500 B. The lab runs of the
        // module doc measure 1343.6 B; ±3 % (40 B) is more than the 1,000 browsers' sampling noise
        // (run: printed below).
        let flows = &out.flows();
        let wire: f64 = flows.iter().map(|f| f["throughput_bps"].as_f64().unwrap()).sum::<f64>() * 500.0 / 8.0;
        let pkts: u64 = flows.iter().map(|f| f["packets_delivered"].as_u64().unwrap()).sum();
        let m = crate::scenario::validate::default_http_model(1448);
        let n = 1_000_000;
        let (mut b, mut k) = (0.0, 0.0);
        for i in 0..n {
            let bytes = m.reply_bytes(super::mah::reply_length().sample((i as f64 + 0.5) / n as f64));
            b += bytes as f64;
            k += m.segments(bytes) as f64;
        }
        let want = (b + 52.0 * k) / k;
        eprintln!("mean data packet on the wire {:.1} B (tables: {want:.1} B)", wire / pkts as f64);
        assert!((want - 1343.7).abs() < 0.5, "tables {want}");
        assert!((wire / pkts as f64 - want).abs() < 40.0, "mean packet {} B", wire / pkts as f64);
    }

    /// The same for the parametric stand-ins (their own calibration, `think_mean` = 50 s).
    /// 1000 browsers × 500 measured s ≈ 9,800 pages; the page size has a coefficient of
    /// variation of ≈ 3 (Pareto tail clipped at 1 MiB), so the sampling error of the mean is
    /// ≈ 3/√9800 ≈ 3 %, plus think-time count noise: ±15 % is > 4 σ. This run gives 389.3 B/s;
    /// 1,500 s warm-up and 3,600 s measured give 373.8 B/s.
    #[test]
    fn parametric_browser_offers_about_370_bytes_per_second() {
        let out = run(&scenario(1000, "600s", "distributions = \"parametric\""));
        let goodput = out.summary["aggregate"]["goodput_bps"].as_f64().unwrap();
        let per_browser = goodput / 8.0 / 1000.0;
        eprintln!("offered load per browser {per_browser:.1} B/s ({:.3} kb/s)", per_browser * 8e-3);
        assert!((per_browser - 370.0).abs() < 0.15 * 370.0, "per browser {per_browser} B/s");
    }

    /// Stationary start (the default): the load is steady from the start, without a warm-up.
    /// 3,000 browsers started within 1 s, measured over 5–245 s. Over seeds 1–8 (and 7, this
    /// one: 360.7 B/s) this window gives 367.6 B/s per browser, sd 7.2 B/s (2 %), against
    /// 378.1 B/s in steady state with these (default) TCP keys; ±8 % of 370 B/s is ≥ 3.8 sd
    /// either side of that mean. With `start_mode = "synchronized"` the same window gives
    /// 395.8 B/s, sd 12.5 (the first, fresh think times; module doc, "Start").
    #[test]
    fn stationary_start_offers_the_steady_load_at_once() {
        let text = scenario(3000, "245s", "").replace("warmup = \"100s\"", "warmup = \"5s\"");
        let out = run(&text);
        let per_browser = out.summary["aggregate"]["goodput_bps"].as_f64().unwrap() / 8.0 / 3000.0;
        eprintln!("stationary start, 5-245 s: {per_browser:.1} B/s per browser");
        assert!((per_browser - 370.0).abs() < 0.08 * 370.0, "per browser {per_browser} B/s");
    }

    #[test]
    fn transfers_respect_the_page_order_and_parallelism() {
        // Think times clipped at 5 s (Mah's median is 16 s): many pages per browser.
        let out = run(&scenario(20, "400s", "parallel = 2\nthink_max = \"5s\""));
        let t = &out.series.transfers;
        assert!(t.len() > 200, "transfers {}", t.len());
        // Per browser (flows 2b, 2b+1), never more than 2 transfers overlap.
        for b in 0..20u32 {
            let mine: Vec<_> = t.iter().filter(|r| r.flow / 2 == b).collect();
            for r in &mine {
                let overlapping = mine.iter().filter(|o| o.start <= r.start && r.start < o.end).count(); // in progress when r starts
                assert!(overlapping <= 2, "browser {b}: {overlapping} overlap");
            }
        }
        assert_eq!(out.flows().len(), 40);
    }

    #[test]
    fn same_seed_same_result() {
        for extra in [
            "think_max = \"5s\"",
            "think_max = \"5s\"\nstart_mode = \"synchronized\"",
            "distributions = \"parametric\"\nthink_mean = \"5s\"",
        ] {
            let text = scenario(50, "200s", extra);
            let (a, b) = (run(&text), run(&text));
            assert_eq!(a.flow_texts(), b.flow_texts(), "{extra}");
            assert_eq!(a.series.transfers, b.series.transfers, "{extra}");
            let c = run(&text.replace("seed = 7", "seed = 8"));
            assert_ne!(a.series.transfers, c.series.transfers, "{extra}");
        }
    }

    #[test]
    fn bad_input_names_the_key() {
        let bad = |extra: &str, count: i64| {
            let text = scenario(1, "200s", extra).replace("count = 1", &format!("count = {count}"));
            load(&text, Format::Toml, None).err().expect("rejected").to_string()
        };
        assert!(bad("", 0).contains("flows[0].count") && bad("", 0).contains("HTTP needs at least one browser"));
        assert!(bad("parallel = 0", 1).contains("flows[0].parallel"));
        assert!(bad("think_max = \"0s\"", 1).contains("flows[0].think_max"));
        assert!(bad("object_max = \"0B\"", 1).contains("flows[0].object_max"));
        let par = |extra: &str| bad(&format!("distributions = \"parametric\"\n{extra}"), 1);
        assert!(par("think_mean = \"0s\"").contains("flows[0].think_mean"));
        assert!(par("think_mean = \"700s\"").contains("must be shorter than think_max (600 s)"));
        assert!(par("think_shape = 1.0").contains("flows[0].think_shape"));
        assert!(par("primary_tail_shape = 0.9").contains("flows[0].primary_tail_shape"));
        assert!(par("embedded_median = \"0B\"").contains("flows[0].embedded_median"));
        assert!(bad("size = \"10kB\"", 1).contains("flows[0].size"));
        assert!(bad("rate = \"1Mbps\"", 1).contains("flows[0].rate"));
        let e = bad("distributions = \"ns2\"", 1);
        assert!(e.contains("flows[0].distributions") && e.contains("mah") && e.contains("parametric"), "{e}");
        let e = bad("start_mode = \"warm\"", 1);
        assert!(e.contains("flows[0].start_mode") && e.contains("stationary") && e.contains("synchronized"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }

    /// The parametric keys are rejected with Mah's tables (the default), naming the key and
    /// what to do.
    #[test]
    fn parametric_keys_are_rejected_with_mah() {
        for (key, value) in [
            ("think_mean", "\"60s\""),
            ("think_shape", "1.5"),
            ("primary_median", "\"2000B\""),
            ("primary_sigma", "1.3"),
            ("primary_tail_fraction", "0.07"),
            ("primary_tail_min", "\"16384B\""),
            ("primary_tail_shape", "1.2"),
            ("embedded_mean", "3"),
            ("embedded_median", "\"1100B\""),
            ("embedded_sigma", "1.5"),
        ] {
            for dist in ["", "distributions = \"mah\"\n"] {
                let text = scenario(1, "200s", &format!("{dist}{key} = {value}"));
                let e = load(&text, Format::Toml, None).err().expect("rejected").to_string();
                assert!(e.contains(&format!("flows[0].{key}")), "{e}");
                assert!(e.contains("not a key of distributions = \"mah\"") && e.contains("distributions = \"parametric\""), "{e}");
            }
        }
    }

    #[test]
    fn defaults_are_echoed() {
        let sc = load(&scenario(3, "200s", ""), Format::Toml, None).unwrap();
        let f = &sc.echo["flows"][0];
        assert_eq!((f["distributions"].as_str(), f["parallel"].as_u64()), (Some("mah"), Some(4)));
        assert_eq!((f["think_max"].as_str(), f["start_mode"].as_str()), (Some("192s"), Some("stationary")));
        assert!(f.get("think_mean").is_none() && f.get("primary_median").is_none());
        assert_eq!(sc.flows.len(), 12);
        let sc = load(&scenario(3, "200s", "distributions = \"parametric\""), Format::Toml, None).unwrap();
        let f = &sc.echo["flows"][0];
        assert_eq!((f["think_max"].as_str(), f["think_mean"].as_str()), (Some("600s"), Some("50s")));
        // The echo is itself a valid scenario with the same model.
        let again = load(&serde_json::to_string(&sc.echo).unwrap(), Format::Json, None).unwrap();
        assert_eq!(again.http_models, sc.http_models);
    }
}
