//! The sampled time series a run returns.

use crate::traffic::transfers::TransferRecord;
#[cfg(doc)]
use crate::metrics::frame_decoder::FrameDecoder;

/// One row per delivered data packet (`output.packet_delays`), as columns.
#[derive(Clone, Debug, Default)]
pub struct PacketDelays {
    /// Arrival at the receiving host, seconds.
    pub time_s: Vec<f64>,
    /// The packet's flow.
    pub flow: Vec<u32>,
    /// Its class tag.
    pub class: Vec<u8>,
    /// One-way delay, send to arrival, seconds.
    pub delay_s: Vec<f64>,
}

/// Sampled time series.
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    /// Bin end times, seconds.
    pub time_s: Vec<f64>,
    /// Forward queue length at the sample, packets.
    pub queue_pkts: Vec<f64>,
    /// Forward queue length at the sample, bytes.
    pub queue_bytes: Vec<f64>,
    /// Forward discipline's average (RED avg), NaN when it keeps none.
    pub queue_avg: Vec<f64>,
    /// Reverse queue length at the sample, packets.
    pub reverse_queue_pkts: Vec<f64>,
    /// The capacity the forward bottleneck offered over each bin, bits/s: the mean scheduled
    /// rate, or a trace's opportunity bytes (empty when the forward rate is fixed).
    pub capacity_bps: Vec<f64>,
    /// The same for the reverse direction.
    pub reverse_capacity_bps: Vec<f64>,
    /// Per flow, goodput in each bin, bits/s (empty when disabled).
    pub flow_goodput_bps: Vec<Vec<f64>>,
    /// Per flow, offered load in each bin, bits/s (empty when disabled): wire bytes of the flow's
    /// data packets that arrived at the bottleneck queue of its data direction in the bin, before
    /// the link-loss draw and the discipline's verdict (so dropped ones included; ACKs not).
    pub flow_offered_bps: Vec<Vec<f64>>,
    /// Per flow, packets dropped at a bottleneck queue or lost on the link in each bin, data and
    /// ACKs (empty when disabled): the drop-event times of Cho 2002's Fig. 4.4 at bin resolution.
    pub flow_drops: Vec<Vec<f64>>,
    /// Per MPEG flow (flow index, values), frames per second complete at the receiver in each bin:
    /// the frames whose last fragment arrived in the bin and that count as complete
    /// ([`FrameDecoder`]). Empty when disabled; other flows have no entry.
    pub flow_actual_fps: Vec<(u32, Vec<f64>)>,
    /// Per MPEG flow, frames per second that became playable in each bin: the bin of the latest
    /// completion among the frame and the references it needs ([`FrameDecoder`] module doc).
    pub flow_playable_fps: Vec<(u32, Vec<f64>)>,
    /// Per TCP flow (flow index, values), with `output.per_flow_tcp_state`: the congestion window
    /// averaged over the bin, segments (∫ cwnd dt / bin, cwnd held between calls into the sender,
    /// 0 before the sender first runs — the same integral as the summary's `mean_cwnd_segments`).
    /// Empty when disabled; other flows have no entry.
    pub flow_cwnd_segments: Vec<(u32, Vec<f64>)>,
    /// Per TCP flow, the sender's smoothed RTT at the sample, seconds; NaN while it has no RTT
    /// sample (before the first, and after a fresh transfer of `repeat` or HTTP forgets them).
    pub flow_srtt_s: Vec<(u32, Vec<f64>)>,
    /// Estimated active flows at the forward bottleneck (FPQ's count, or `output.flow_counter`);
    /// empty when nothing counts.
    pub flow_estimate: Vec<f64>,
    /// Adaptive RED's `max_p` at each sample (empty unless the bottleneck adapts it).
    pub max_p: Vec<f64>,
    /// WHITE's router RTT estimates at the forward bottleneck at each sample, ms: R_average and
    /// R_formula (Lee 2002 Fig. 3.2); empty for other disciplines.
    pub white_r_average_ms: Vec<f64>,
    /// See `white_r_average_ms`.
    pub white_r_formula_ms: Vec<f64>,
    /// BMRE's internals at the forward bottleneck at each sample (Cho 2002; `Qdisc::bmre_internals`):
    /// `(name, values)` for mode (0 none / 1 moderate / 2 severe), target_q and vmax_q (bytes), and
    /// the cumulative Fair Drops, recycled slots and expiries. Empty for other disciplines.
    pub bmre: Vec<(String, Vec<f64>)>,
    /// With BMRE and `output.per_flow_timeseries`: per flow, its drop exponent β at the sample
    /// (NaN while it has no state) ...
    pub flow_qdisc_beta: Vec<Vec<f64>>,
    /// ... and BMRE's estimate of its (buffered) rate, bits/s (NaN without state).
    pub flow_qdisc_rate_bps: Vec<Vec<f64>>,
    /// Transfers that started after the warm-up and completed before the end.
    pub transfers: Vec<TransferRecord>,
    /// With `output.packet_delays`: every data packet of those class tags delivered after the
    /// warm-up, in delivery order.
    pub packet_delays: PacketDelays,
    /// Per class tag used by a flow group (ascending): the mean one-way delay of the data packets
    /// of that class delivered in each bin, seconds (NaN for a bin without any).
    pub class_delay_s: Vec<(u8, Vec<f64>)>,
    /// Per class of a class-based forward discipline (by name, in class order): packets of the
    /// class queued at the sample.
    pub class_len_pkts: Vec<(String, Vec<f64>)>,
    /// Per class of a class-based forward discipline: the class's smoothed estimate at the sample
    /// (CBT/RIO's class average; CBQ's virtual-clock lag in ms), NaN when it keeps none.
    pub class_average: Vec<(String, Vec<f64>)>,
}
