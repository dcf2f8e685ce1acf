//! CHOKe, "CHOose and Keep for responsive flows, CHOose and Kill for unresponsive flows" (Pan,
//! Prabhakar & Psounis, IEEE INFOCOM 2000, §2 and Fig. 1), as Linux runs it:
//! `net/sched/sch_choke.c` (Hemminger & Dumazet 2011), with `tc choke`'s defaults.
//!
//! RED over one FIFO counted in packets, plus one step. On each arrival (`choke_enqueue`):
//! 1. The average is updated from the packets queued (RED's EWMA with idle decay, the shared
//!    [`super::red_core`]).
//! 2. If `avg > min_th` and the queue is not empty, one queued packet is drawn at random
//!    (`choke_match_random`). If it belongs to the arrival's flow (same flow id: Linux compares
//!    the flow keys, addresses and ports, `choke_match_flow`), **both are dropped** (`Early`,
//!    counted as `matched`, one per pair). There is one draw per arrival and no re-draw (the
//!    paper's §3 variant with m > 1 draws is not modelled).
//! 3. Otherwise RED decides: above `max_th` the arrival is dropped (`Forced`) — or CE-marked if
//!    `ecn` is on, the packet is ECN-capable and `harddrop` is off; between the thresholds it is
//!    dropped (`Early`) or, with `ecn`, marked with RED's count-spaced probability.
//! 4. An arrival still standing is queued if fewer than `limit` packets are (`Overflow`
//!    otherwise).
//!
//! The victim draw (`victim`): Linux keeps the queue in a ring in which a victim leaves a hole
//! (`choke_drop_by_idx`); the draw is uniform over the ring *including holes*, is repeated up to
//! three times while it lands on a hole, and then falls back to the head packet
//! (`choke_peek_random`). `victim = "linux"` (default) does exactly that, so packets next to holes
//! and the head are slightly favoured; `victim = "uniform"` (the paper: "a packet drawn at random
//! from the FIFO buffer") draws uniformly among queued packets and closes the gap at once.
//! Randomness: up to three uniform draws for the victim (one with `uniform`), then RED's one
//! uniform when it tests an early drop.
//!
//! RED here is `red_core`'s documented variant, the closest to Linux's `red.h`: strict `>` at both
//! thresholds, drop spacing `pa = pb / (1 − count·pb)` (Linux draws the count between drops
//! uniformly, `red_mark_probability`, which gives the same law), a free pass on entering the
//! early region, and after an idle period the average decays by `(1 − w)^n` without a sample.
//! Differences kept and noted: Linux starts the idle period when the link finds the queue empty,
//! this variant when the last packet leaves; Linux restarts the spacing (`qcount = −1`) after a
//! forced drop, `red_core` only resets the count; `red_core` never early-drops into an empty
//! queue (Linux may); probabilities and the average are `f64` (Linux: fixed point, `Wlog`,
//! `Plog`). The weight is given directly (tc derives `Wlog` from `burst` and `avpkt`).
//!
//! Defaults are what `tc qdisc add … choke limit 1000 bandwidth …` gives: `limit` 1000,
//! `max_th` = limit / 4 = 250, `min_th` = max_th / 3 = 83, `max_p` 0.02, `mean_packet_size`
//! (tc's `avpkt`) 1000 B; `weight` 0.002 (RED's default here).

use std::collections::VecDeque;

use rand::Rng as _;
use serde::{Deserialize, Serialize};

use super::red::check_thresholds;
use super::red_core::{RedConfig, RedDecision, RedState, RedVariant};
use super::{DropBuf, DropKind, Qdisc, QdiscStats, Verdict};
use crate::engine::{Rng, Time};
use crate::error::{check_range, join, ConfigError, ConfigResult};
use crate::packet::{Ecn, Packet};
use crate::scenario::units::Bytes;

/// How the random packet compared with an arrival is drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChokeVictim {
    /// Linux `choke_peek_random`: uniform over the ring with holes, three tries, then the head.
    #[default]
    Linux,
    /// The paper: uniform among the queued packets.
    Uniform,
}

/// Scenario keys of `kind = "choke"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ChokeParams {
    /// Packets the queue holds (1000).
    #[serde(default = "default_limit", deserialize_with = "crate::scenario::units::int_in::<_, _, 1, 131071>")]
    pub limit: u32,
    /// Average queue (packets) above which CHOKe draws and RED may drop (83).
    #[serde(default = "default_min_th")]
    pub min_th: f64,
    /// Average queue (packets) above which every arrival that is not matched is dropped (250).
    #[serde(default = "default_max_th")]
    pub max_th: f64,
    /// RED's drop probability at `max_th` (0.02, tc's `probability`).
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// EWMA weight of the average (0.002).
    #[serde(default = "default_weight")]
    pub weight: f64,
    /// Packet size (bytes) whose transmission time is one missed sample in the idle decay (tc's
    /// `avpkt`, 1000).
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: Bytes,
    /// `"linux"` (default) or `"uniform"`: see the module docs.
    #[serde(default)]
    pub victim: ChokeVictim,
    /// CE-mark ECN-capable arrivals that RED would drop (never the matched pairs). Default off.
    #[serde(default)]
    pub ecn: bool,
    /// With `ecn`, still drop (not mark) above `max_th` (tc's `harddrop`). Default off.
    #[serde(default)]
    pub harddrop: bool,
}

fn default_limit() -> u32 {
    1000
}
fn default_min_th() -> f64 {
    83.0
}
fn default_max_th() -> f64 {
    250.0
}
fn default_max_p() -> f64 {
    0.02
}
fn default_weight() -> f64 {
    0.002
}
fn default_mean_packet_size() -> Bytes {
    Bytes(1000)
}

impl Default for ChokeParams {
    fn default() -> Self {
        super::serde_defaults()
    }
}

impl ChokeParams {
    /// Checks the keys and builds the discipline for a link of `link_rate_bps`.
    pub fn validate(&self, path: &str, link_rate_bps: f64) -> ConfigResult<Choke> {
        let key = |k: &str| join(path, k);
        // Linux's CHOKE_MAX_QUEUE.
        check_range(path, "limit", u64::from(self.limit), 1, 128 * 1024 - 1)?;
        check_thresholds(path, self.min_th, self.max_th)?;
        for (k, v) in [("max_p", self.max_p), ("weight", self.weight)] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(ConfigError::new(key(k), format!("must be in (0, 1], got {v}")));
            }
        }
        if !(1..=crate::error::MAX_MEAN_PACKET_BYTES).contains(&self.mean_packet_size.0) {
            return Err(crate::error::mean_packet_size_error(key("mean_packet_size"), self.mean_packet_size.0));
        }
        if self.harddrop && !self.ecn {
            return Err(ConfigError::new(key("harddrop"), "needs ecn = true"));
        }
        let mean = self.mean_packet_size.0 as f64;
        let cfg = RedConfig {
            variant: RedVariant::Documented,
            min_th: self.min_th,
            max_th: self.max_th,
            max_p: self.max_p,
            weight: self.weight,
            wait: false,
            gentle: false,
            byte_mode: false,
            mean_packet_size: mean,
            drain_rate: link_rate_bps / (8.0 * mean),
            protected_pkts: 0,
            nonlinear: false,
        };
        Ok(Choke {
            cfg,
            params: self.clone(),
            red: RedState::default(),
            ring: VecDeque::with_capacity(self.limit as usize + 1),
            len: 0,
            bytes: 0,
            stats: QdiscStats::default(),
            matched: 0,
        })
    }
}

/// CHOKe over a FIFO.
pub struct Choke {
    cfg: RedConfig,
    params: ChokeParams,
    red: RedState,
    /// The queue, oldest first; `None` is a hole left by a victim (`victim = "linux"` only). The
    /// first and last entries are never holes.
    ring: VecDeque<Option<Packet>>,
    /// Packets queued: the entries of `ring` that are not holes.
    len: usize,
    /// Bytes queued.
    bytes: u64,
    stats: QdiscStats,
    /// Arrivals dropped together with a queued packet of their flow.
    matched: u64,
}

impl Choke {
    /// The validated RED settings.
    pub fn config(&self) -> &RedConfig {
        &self.cfg
    }

    /// Entries of the ring, holes included (`choke_len`).
    pub fn ring_len(&self) -> usize {
        self.ring.len()
    }

    /// Draws the index of the packet compared with an arrival (`choke_peek_random`).
    fn victim(&self, rng: &mut Rng) -> usize {
        let n = self.ring.len();
        match self.params.victim {
            ChokeVictim::Uniform => rng.gen_range(0..n),
            ChokeVictim::Linux => {
                for _ in 0..3 {
                    let i = rng.gen_range(0..n);
                    if self.ring[i].is_some() {
                        return i;
                    }
                }
                0
            }
        }
    }

    /// Removes the packet at ring index `i` (`choke_drop_by_idx`): a hole in the middle, or the
    /// ring shrinks at an end (past any holes there).
    fn take(&mut self, i: usize) -> Packet {
        let pkt = match self.params.victim {
            ChokeVictim::Uniform => self.ring.remove(i).flatten(),
            ChokeVictim::Linux => self.ring[i].take(),
        }
        .expect("the victim is a packet");
        self.len -= 1;
        self.bytes -= u64::from(pkt.size);
        self.zap();
        pkt
    }

    /// Drops holes at both ends (`choke_zap_head_holes`, `choke_zap_tail_holes`).
    fn zap(&mut self) {
        while matches!(self.ring.front(), Some(None)) {
            self.ring.pop_front();
        }
        while matches!(self.ring.back(), Some(None)) {
            self.ring.pop_back();
        }
    }

    fn drop_arrival(&mut self, kind: DropKind) -> Verdict {
        self.stats.count_drop(kind);
        Verdict::Dropped(kind)
    }
}

impl Qdisc for Choke {
    fn enqueue(&mut self, mut pkt: Packet, now: Time, rng: &mut Rng, drops: &mut DropBuf) -> Verdict {
        self.stats.arrivals += 1;
        self.red.sample(&self.cfg, self.len as f64, pkt.size, now);
        if self.red.average() > self.cfg.min_th && self.len > 0 {
            let i = self.victim(rng);
            if self.ring[i].is_some_and(|q| q.flow == pkt.flow) {
                let victim = self.take(i);
                self.stats.count_drop(DropKind::Early);
                drops.push((victim, DropKind::Early));
                self.matched += 1;
                return self.drop_arrival(DropKind::Early);
            }
        }
        let ect = pkt.ecn != Ecn::NotEct;
        let mut verdict = Verdict::Enqueued;
        match self.red.decide(&self.cfg, self.len, pkt.size, rng) {
            RedDecision::Pass => {}
            RedDecision::Forced if self.params.ecn && !self.params.harddrop && ect => verdict = Verdict::Marked,
            RedDecision::Early if self.params.ecn && ect => verdict = Verdict::Marked,
            kind @ (RedDecision::Forced | RedDecision::Early) => {
                self.red.on_drop();
                return self.drop_arrival(if kind == RedDecision::Forced { DropKind::Forced } else { DropKind::Early });
            }
        }
        if self.len >= self.params.limit as usize {
            return self.drop_arrival(DropKind::Overflow);
        }
        if verdict == Verdict::Marked {
            pkt.ecn = Ecn::Ce;
            self.red.on_drop();
            self.stats.marks += 1;
        }
        pkt.enqueued_at = now;
        self.ring.push_back(Some(pkt));
        self.len += 1;
        self.bytes += u64::from(pkt.size);
        self.stats.enqueues += 1;
        verdict
    }

    fn dequeue(&mut self, now: Time, _drops: &mut DropBuf) -> Option<Packet> {
        let Some(Some(pkt)) = self.ring.pop_front() else {
            self.red.on_empty_dequeue(&self.cfg, now);
            return None;
        };
        self.len -= 1;
        self.bytes -= u64::from(pkt.size);
        self.zap();
        self.stats.dequeues += 1;
        if self.len == 0 {
            self.red.on_departure_empty(&self.cfg, now);
        }
        Some(pkt)
    }

    fn peek(&self) -> Option<&Packet> {
        self.ring.front().and_then(Option::as_ref)
    }
    fn len_packets(&self) -> usize {
        self.len
    }
    fn len_bytes(&self) -> u64 {
        self.bytes
    }
    fn stats(&self) -> &QdiscStats {
        &self.stats
    }
    fn average(&self) -> Option<f64> {
        Some(self.red.average())
    }
    fn detail_counters(&self) -> Vec<(&'static str, u64)> {
        vec![("matched", self.matched)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, StreamId};
    use crate::packet::{FlowId, PacketKind};

    const DATA: Packet = Packet { size: 1000, ..Packet::new(PacketKind::Udp, 0) };

    fn pkt(flow: FlowId, seq: u32) -> Packet {
        Packet { flow, seq, ..DATA }
    }

    /// CHOKe whose average is the instantaneous queue (weight 1), thresholds `min_th`/`max_th`.
    fn choke(min_th: f64, max_th: f64, victim: ChokeVictim) -> (Choke, Rng, DropBuf) {
        let p = ChokeParams { min_th, max_th, weight: 1.0, max_p: 1e-9, victim, ..ChokeParams::default() };
        (p.validate("queue", 10e6).unwrap(), stream(7, StreamId::Queue(0)), DropBuf::new())
    }

    #[test]
    fn below_min_th_nothing_is_dropped() {
        let (mut q, mut rng, mut drops) = choke(5.0, 10.0, ChokeVictim::Linux);
        // Arrivals see 0..=5 queued: avg ≤ min_th = 5 (strict test), all admitted.
        for s in 0..6 {
            assert_eq!(q.enqueue(pkt(1, s), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        }
        assert!(drops.is_empty());
        assert_eq!(q.stats().drops(), 0);
    }

    #[test]
    fn above_min_th_an_arrival_matching_the_drawn_packet_is_dropped_with_it() {
        for victim in [ChokeVictim::Linux, ChokeVictim::Uniform] {
            let (mut q, mut rng, mut drops) = choke(2.0, 100.0, victim);
            for s in 0..3 {
                q.enqueue(pkt(1, s), Time(0), &mut rng, &mut drops);
            }
            // avg = 3 > 2; every queued packet is flow 1's: the draw matches.
            assert_eq!(q.enqueue(pkt(1, 3), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Early));
            assert_eq!(drops.len(), 1);
            assert_eq!(drops[0].0.flow, 1);
            assert_eq!(q.len_packets(), 2);
            assert_eq!(q.detail_counters(), vec![("matched", 1)]);
            assert_eq!(q.stats().drops_early, 2, "{victim:?}: the pair");
        }
    }

    #[test]
    fn an_arrival_of_another_flow_is_not_matched() {
        let (mut q, mut rng, mut drops) = choke(2.0, 100.0, ChokeVictim::Linux);
        for s in 0..3 {
            q.enqueue(pkt(1, s), Time(0), &mut rng, &mut drops);
        }
        // avg 3 > 2, the draw is a flow-1 packet, RED gives its free pass: queued.
        assert_eq!(q.enqueue(pkt(2, 0), Time(0), &mut rng, &mut drops), Verdict::Enqueued);
        assert!(drops.is_empty());
    }

    #[test]
    fn above_max_th_an_unmatched_arrival_is_forced_out_or_marked_with_ecn() {
        let (mut q, mut rng, mut drops) = choke(1.0, 2.0, ChokeVictim::Linux);
        for s in 0..3 {
            q.enqueue(pkt(s + 10, s), Time(0), &mut rng, &mut drops); // three flows, all distinct
        }
        assert_eq!(q.len_packets(), 3, "the third saw avg 2 = max_th: a free pass");
        assert_eq!(q.enqueue(pkt(1, 9), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Forced));
        let p = ChokeParams { min_th: 1.0, max_th: 2.0, weight: 1.0, ecn: true, ..ChokeParams::default() };
        let mut e = p.validate("queue", 10e6).unwrap();
        for s in 0..3 {
            e.enqueue(pkt(s + 10, s), Time(0), &mut rng, &mut drops);
        }
        let ect = Packet { ecn: Ecn::Ect, ..pkt(1, 9) };
        assert_eq!(e.enqueue(ect, Time(0), &mut rng, &mut drops), Verdict::Marked);
        assert_eq!(e.enqueue(pkt(2, 10), Time(0), &mut rng, &mut drops), Verdict::Dropped(DropKind::Forced), "not ECN-capable");
    }

    #[test]
    fn linux_victims_leave_holes_that_departures_skip() {
        let (mut q, mut rng, mut drops) = choke(0.5, 1000.0, ChokeVictim::Linux);
        // Alternate flows 1 and 2 so matches hit the middle of the ring.
        let mut seq = 0;
        for _ in 0..200 {
            q.enqueue(pkt(1 + seq % 2, seq), Time(0), &mut rng, &mut drops);
            seq += 1;
        }
        assert!(q.detail_counters()[0].1 > 0);
        assert!(q.ring_len() > q.len_packets(), "holes: ring {} vs {} packets", q.ring_len(), q.len_packets());
        assert_eq!(q.len_bytes(), q.len_packets() as u64 * 1000);
        let queued = q.len_packets();
        let out = std::iter::from_fn(|| q.dequeue(Time(0), &mut drops)).count();
        assert_eq!(out, queued);
        assert_eq!((q.ring_len(), q.len_bytes()), (0, 0));
    }

    #[test]
    fn uniform_draw_matches_a_flow_in_proportion_to_its_share_of_the_queue() {
        // 40 queued, 10 of flow 1000: the draw lands on that flow with probability 1/4. 4000
        // draws: expect 1000, σ = 27; accept ± 4σ.
        let (mut q, mut rng, mut drops) = choke(1000.0, 2000.0, ChokeVictim::Uniform);
        for s in 0..40 {
            q.enqueue(pkt(if s % 4 == 0 { 1000 } else { s }, s), Time(0), &mut rng, &mut drops);
        }
        let hits = (0..4000).filter(|_| q.ring[q.victim(&mut rng)].unwrap().flow == 1000).count();
        assert!((892..=1108).contains(&hits), "{hits}");
    }

    #[test]
    fn linux_draw_falls_back_to_the_head_when_holes_abound() {
        // Ring [flow 1, 98 holes, flow 2]: each of three tries hits a packet with probability
        // 2/100; with none, the head (flow 1). Flow 2 is drawn with probability
        // 0.01 (1 + 0.98 + 0.98²) = 0.0294: 10000 draws → 294, σ = 17; accept 200..=400.
        let (mut q, mut rng, _) = choke(1000.0, 2000.0, ChokeVictim::Linux);
        q.ring.push_back(Some(pkt(1, 0)));
        q.ring.extend(std::iter::repeat_n(None, 98));
        q.ring.push_back(Some(pkt(2, 1)));
        q.len = 2;
        let second = (0..10_000).filter(|_| q.ring[q.victim(&mut rng)].unwrap().flow == 2).count();
        assert!((200..=400).contains(&second), "{second}");
    }

    #[test]
    fn distinct_flows_are_never_matched() {
        let (mut q, mut rng, mut drops) = choke(5.0, 50.0, ChokeVictim::Linux);
        for s in 0..200 {
            q.enqueue(pkt(s, s), Time(0), &mut rng, &mut drops);
        }
        assert_eq!(q.detail_counters(), vec![("matched", 0)]);
        assert!(q.stats().drops_forced > 0, "RED still acts above max_th");
    }

    #[test]
    fn random_scripts_keep_the_counters_and_repeat_for_a_seed() {
        let run = |seed: u64, victim: ChokeVictim| {
            let mut rng = stream(seed, StreamId::Queue(0));
            let mut script = stream(seed, StreamId::Queue(1));
            let mut drops = DropBuf::new();
            let p = ChokeParams { limit: 60, min_th: 5.0, max_th: 30.0, max_p: 0.1, weight: 0.05, victim, ..ChokeParams::default() };
            let mut q = p.validate("queue", 10e6).unwrap();
            let (mut inside, mut out) = (0u64, Vec::new());
            for step in 0..20_000u64 {
                let now = Time(step * 100_000);
                if script.gen_bool(0.55) {
                    let flow = if script.gen_bool(0.5) { 0 } else { script.gen_range(1..20) };
                    q.enqueue(pkt(flow, step as u32), now, &mut rng, &mut drops);
                } else if let Some(p) = q.dequeue(now, &mut drops) {
                    out.push(p.seq);
                }
                inside += drops.len() as u64;
                drops.clear();
                let n = q.ring.iter().flatten().count();
                assert_eq!(n, q.len_packets());
                assert_eq!(q.len_bytes(), n as u64 * 1000);
                assert!(q.ring.front().is_none_or(Option::is_some) && q.ring.back().is_none_or(Option::is_some));
                assert!(q.len_packets() <= 60);
            }
            let s = *q.stats();
            assert_eq!(s.enqueues, s.dequeues + q.len_packets() as u64 + inside);
            assert_eq!(s.arrivals + inside, s.enqueues + s.drops());
            assert_eq!(inside, q.matched);
            (s, out)
        };
        for v in [ChokeVictim::Linux, ChokeVictim::Uniform] {
            assert_eq!(run(3, v), run(3, v));
            assert_ne!(run(3, v).1, run(4, v).1);
        }
    }

    #[test]
    fn bad_keys_name_the_key_and_what_is_allowed() {
        let bad = |p: ChokeParams| p.validate("queue", 10e6).err().unwrap().to_string();
        assert_eq!(bad(ChokeParams { limit: 0, ..ChokeParams::default() }), "queue.limit: must be in 1..=131071, got 0");
        assert_eq!(bad(ChokeParams { max_p: 0.0, ..ChokeParams::default() }), "queue.max_p: must be in (0, 1], got 0");
        assert_eq!(bad(ChokeParams { harddrop: true, ..ChokeParams::default() }), "queue.harddrop: needs ecn = true");
        assert!(bad(ChokeParams { min_th: 300.0, ..ChokeParams::default() }).starts_with("queue.min_th: must not exceed max_th"));
    }
}
