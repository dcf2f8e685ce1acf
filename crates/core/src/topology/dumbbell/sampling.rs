//! Sampling: at the end of each bin the world appends a row to the time series.

use super::event::Event;
use super::flow::{delivered, Endpoint};
use super::World;
use crate::engine::{Dur, Time};
use crate::qdisc::Qdisc;
use crate::topology::delivery_trace::OPPORTUNITY_BYTES;
use crate::topology::rate_schedule::mean_rate_bps;

/// A TCP flow's congestion window integrated over the current time-series bin
/// (`output.per_flow_tcp_state`). The sender changes its window only when called, so the window
/// it reports after each call holds until the next one: integrating that step function here
/// reproduces the sender's own integral (`mean_cwnd_segments`) from its public `cwnd()` alone.
#[derive(Clone, Copy, Default)]
pub(super) struct CwndBin {
    /// The window since `since`, segments; 0 until the sender is first called (its own integral
    /// also starts then).
    cwnd: f64,
    /// End of the span `seg_ns` covers.
    since: Time,
    /// ∫ cwnd dt from the start of the bin to `since`, segment·ns.
    seg_ns: f64,
}

impl CwndBin {
    /// The sender was called at `now` and its window is now `cwnd`.
    #[inline]
    pub(super) fn on_sender_call(&mut self, now: Time, cwnd: f64) {
        self.seg_ns += self.cwnd * (now.0 - self.since.0) as f64;
        self.since = now;
        self.cwnd = cwnd;
    }

    /// Mean window over the bin `[now − bin, now)`, segments; starts the next bin.
    fn take_mean(&mut self, now: Time, bin: Dur) -> f64 {
        self.on_sender_call(now, self.cwnd);
        let mean = self.seg_ns / bin.0 as f64;
        self.seg_ns = 0.0;
        mean
    }
}

impl<'s> World<'s> {
    pub(super) fn sample(&mut self, now: Time) {
        let bin_s = self.sc.output.bin.as_secs_f64();
        // Age-only state (BMRE's expiry) up to now, so an idle link's samples are current.
        self.links[0].qdisc.before_sample(now);
        let s = &mut self.series;
        s.time_s.push(now.as_secs_f64());
        let q = &self.links[0].qdisc;
        s.queue_pkts.push(q.len_packets() as f64);
        s.queue_bytes.push(q.len_bytes() as f64);
        s.queue_avg.push(q.average().unwrap_or(f64::NAN));
        s.reverse_queue_pkts.push(self.links[1].qdisc.len_packets() as f64);
        let from = Time(now.0.saturating_sub(self.sc.output.bin.0));
        for (dir, column) in [(0, &mut s.capacity_bps), (1, &mut s.reverse_capacity_bps)] {
            if let Some(trace) = self.links[dir].trace.as_ref().map(|t| t.trace()) {
                column.push(trace.count_in(from, now) as f64 * f64::from(OPPORTUNITY_BYTES) * 8.0 / bin_s);
            } else if !self.sc.rate_changes.is_empty() {
                column.push(mean_rate_bps(self.sc.bottleneck.rate_bps, &self.sc.rate_changes, from, now));
            }
        }
        for (i, (_, values)) in s.class_len_pkts.iter_mut().enumerate() {
            values.push(q.class_len_at(i).0 as f64);
        }
        for (i, (_, values)) in s.class_average.iter_mut().enumerate() {
            values.push(q.class_average_at(i));
        }
        for (tag, values) in &mut s.class_delay_s {
            let d = &mut self.bin_delay[*tag as usize];
            values.push(if d.1 > 0 { d.0 / d.1 as f64 * 1e-9 } else { f64::NAN });
            *d = (0.0, 0);
        }
        let estimate = self.links[0].qdisc.flow_estimate().or(self.flow_counter.as_ref().map(|(fc, _)| fc.estimate()));
        if let Some(e) = estimate {
            s.flow_estimate.push(e);
        }
        if let Some(a) = q.adaptive_red() {
            s.max_p.push(a.max_p);
        }
        if let Some((r_average, r_formula)) = self.links[0].qdisc.rtt_estimates() {
            s.white_r_average_ms.push(r_average);
            s.white_r_formula_ms.push(r_formula);
        }
        if let Some(values) = q.bmre_internals() {
            const NAMES: [&str; 6] = ["bmre_mode", "bmre_target_q_bytes", "bmre_vmax_q_bytes", "bmre_fair_drops", "bmre_recycled", "bmre_expired"];
            if s.bmre.is_empty() {
                s.bmre = NAMES.iter().map(|n| (n.to_string(), Vec::new())).collect();
                if self.sc.output.per_flow_timeseries {
                    s.flow_qdisc_beta = vec![Vec::new(); self.flows.len()];
                    s.flow_qdisc_rate_bps = vec![Vec::new(); self.flows.len()];
                }
            }
            for ((_, col), v) in s.bmre.iter_mut().zip(values) {
                col.push(v);
            }
            for (i, (beta, rate)) in s.flow_qdisc_beta.iter_mut().zip(s.flow_qdisc_rate_bps.iter_mut()).enumerate() {
                let (b, r) = q.flow_internals(i as u32).unwrap_or((f64::NAN, f64::NAN));
                beta.push(b);
                rate.push(r);
            }
        }
        if !s.flow_goodput_bps.is_empty() {
            for (i, f) in self.flows.iter().enumerate() {
                let d = delivered(&f.endpoint);
                s.flow_goodput_bps[i].push((d - self.last_goodput[i]) as f64 * 8.0 / bin_s);
                self.last_goodput[i] = d;
            }
        }
        if !s.flow_offered_bps.is_empty() {
            for (i, f) in self.flows.iter().enumerate() {
                let o = f.counters.offered_bytes;
                s.flow_offered_bps[i].push((o - self.last_offered[i]) as f64 * 8.0 / bin_s);
                self.last_offered[i] = o;
            }
        }
        if !s.flow_drops.is_empty() {
            for (i, f) in self.flows.iter().enumerate() {
                let d = f.counters.drops_whole_run;
                s.flow_drops[i].push((d - self.last_drops[i]) as f64);
                self.last_drops[i] = d;
            }
        }
        for ((i, cwnd), (_, srtt)) in s.flow_cwnd_segments.iter_mut().zip(&mut s.flow_srtt_s) {
            let Endpoint::Tcp { sender, .. } = &self.flows[*i as usize].endpoint else { unreachable!("TCP flows only") };
            cwnd.push(self.cwnd_bins[*i as usize].take_mean(now, self.sc.output.bin));
            srtt.push(sender.srtt().map_or(f64::NAN, |d| d.as_secs_f64()));
        }
        let next = now + self.sc.output.bin;
        if next <= self.sc.duration {
            self.events.schedule(next, Event::Sample);
        }
    }
}
