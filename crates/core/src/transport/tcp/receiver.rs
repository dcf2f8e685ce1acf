//! TCP receiver: cumulative ACKs, out-of-order buffering, SACK blocks (RFC 2018), delayed ACKs
//! (RFC 1122 §4.2.3.2, RFC 5681 §4.2) and the ECN echo (RFC 3168 §6.1.3; DCTCP's RFC 8257 §3.2). Sans-IO like the sender.
//!
//! ACK policy: an in-order segment that fills no gap is acknowledged when `delayed_ack.count`
//! such segments are pending or when `delayed_ack.timeout` has passed since the first of them; an
//! out-of-order segment, a duplicate, or one that fills (part of) a gap is acknowledged at once
//! (RFC 5681 §4.2). SACK blocks: the first holds the segment just received (RFC 2018 §4), the
//! others follow in descending sequence order.

use super::{CongestionControl, TcpConfig};
use crate::engine::Time;
use crate::packet::{Ecn, FlowId, Packet, PacketKind, SackBlock, FLAG_CWR, FLAG_ECE, MAX_SACK_BLOCKS};

/// Receiver counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpReceiverStats {
    /// Data segments received (duplicates included).
    pub segments_received: u64,
    /// Duplicate segments (already delivered or already buffered).
    pub duplicates: u64,
    /// ACKs sent.
    pub acks_sent: u64,
}

/// A TCP receiver.
pub struct TcpReceiver {
    flow: FlowId,
    /// Next segment expected in order; every segment below it has been delivered.
    rcv_nxt: u32,
    /// Segments held above `rcv_nxt`: sorted, disjoint `[start, end)` ranges (empty = no gap).
    out_of_order: Vec<(u32, u32)>,
    /// In-order segments received and not yet acknowledged.
    pending: u32,
    /// Delayed-ACK deadline, `Time::NEVER` when none is pending.
    ack_at: Time,
    /// Echo ECE on every ACK until a CWR arrives (RFC 3168 §6.1.3); with DCTCP, the CE mark of
    /// the latest segment (RFC 8257 §3.2).
    ece: bool,
    delivered: u64,
    /// RFC 7323 TS.Recent: the timestamp the next ACK echoes.
    ts_recent: Time,
    /// RFC 7323 Last.ACK.sent: `rcv_nxt` when the last ACK was sent.
    last_ack_sent: u32,
    /// A segment shorter than `TcpConfig::payload_of` says (the last of a byte-sized transfer, see
    /// `TcpSender::begin_transfer_bytes`) received but not yet delivered: (seq, payload). A sender
    /// starts a transfer only when the previous one is acknowledged, so there is at most one.
    short: Option<(u32, u32)>,
    stats: TcpReceiverStats,
}

impl TcpReceiver {
    /// A receiver for `flow`.
    pub fn new(flow: FlowId, _cfg: &TcpConfig) -> TcpReceiver {
        TcpReceiver {
            flow,
            rcv_nxt: 0,
            out_of_order: Vec::new(),
            pending: 0,
            ack_at: Time::NEVER,
            ece: false,
            delivered: 0,
            ts_recent: Time::ZERO,
            last_ack_sent: 0,
            short: None,
            stats: TcpReceiverStats::default(),
        }
    }

    /// Handles an arriving data segment; appends ACKs to `out`.
    pub fn on_data(&mut self, cfg: &TcpConfig, now: Time, pkt: &Packet, out: &mut Vec<Packet>) {
        self.stats.segments_received += 1;
        if cfg.congestion_control == CongestionControl::Dctcp {
            // RFC 8257 §3.2: ECE mirrors each segment's CE mark; when it changes, ACK what is
            // pending at once with the old value so the sender counts marked bytes exactly.
            let ce = pkt.ecn == Ecn::Ce;
            if ce != self.ece && self.pending > 0 {
                self.send_ack(cfg, now, None, out);
            }
            self.ece = ce;
        } else {
            if pkt.has(FLAG_CWR) {
                self.ece = false;
            }
            if pkt.ecn == Ecn::Ce {
                self.ece = true;
            }
        }
        let seq = pkt.seq;
        if seq <= self.last_ack_sent && pkt.sent_at >= self.ts_recent {
            // RFC 7323 §4.3 (2): with delayed ACKs the earliest unacknowledged segment is echoed;
            // an out-of-order segment is not, so its ACK measures the wait for the hole too.
            self.ts_recent = pkt.sent_at;
        }
        // (`payload` is a u16: a segment is short only if it is shorter than that can say.)
        let payload = u32::from(pkt.payload);
        if payload > 0 && payload < cfg.payload_of(seq).min(u32::from(u16::MAX)) && seq >= self.rcv_nxt {
            self.short = Some((seq, payload));
        }
        if seq == self.rcv_nxt {
            let filled_gap = !self.out_of_order.is_empty();
            self.deliver_through(cfg, seq + 1);
            if filled_gap {
                self.send_ack(cfg, now, Some(seq), out);
                return;
            }
            self.pending += 1;
            if self.pending >= cfg.delayed_ack.count {
                self.send_ack(cfg, now, None, out);
            } else if self.ack_at == Time::NEVER {
                self.ack_at = now + cfg.delayed_ack.timeout;
            }
        } else if seq < self.rcv_nxt || self.holds(seq) {
            self.stats.duplicates += 1;
            self.send_ack(cfg, now, None, out);
        } else {
            self.buffer(seq);
            self.send_ack(cfg, now, Some(seq), out);
        }
    }

    /// Payload received but not yet delivered: the out-of-order segments held above `rcv_nxt`.
    /// Delivered plus held is every payload byte received at least once, which no reordering or
    /// recovery can make exceed what crossed the link.
    pub fn held_bytes(&self, cfg: &TcpConfig) -> u64 {
        let mut held: u64 = match cfg.transfer_bytes {
            None => self.out_of_order.iter().map(|&(s, e)| u64::from(e - s) * u64::from(cfg.mss)).sum(),
            Some(_) => self.out_of_order.iter().flat_map(|&(s, e)| s..e).map(|q| u64::from(cfg.payload_of(q))).sum(),
        };
        if let Some((seq, payload)) = self.short.filter(|&(seq, _)| self.holds(seq)) {
            held -= u64::from(cfg.payload_of(seq) - payload);
        }
        held
    }

    /// Delivers `rcv_nxt..end` and then whatever buffered ranges become contiguous.
    fn deliver_through(&mut self, cfg: &TcpConfig, end: u32) {
        let mut end = end;
        while let Some(&(s, e)) = self.out_of_order.first() {
            if s > end {
                break;
            }
            end = end.max(e);
            self.out_of_order.remove(0);
        }
        for seq in self.rcv_nxt..end {
            self.delivered += match self.short {
                Some((s, payload)) if s == seq => {
                    self.short = None;
                    payload as u64
                }
                _ => cfg.payload_of(seq) as u64,
            };
        }
        self.rcv_nxt = end;
        if self.out_of_order.is_empty() {
            self.out_of_order = Vec::new(); // release the buffer of a recovered hole
        }
    }

    fn holds(&self, seq: u32) -> bool {
        self.range_holding(seq).is_some()
    }

    /// The buffered range holding `seq`, by binary search: a large window can hold thousands.
    fn range_holding(&self, seq: u32) -> Option<usize> {
        let i = self.out_of_order.partition_point(|&(_, e)| e <= seq);
        (i < self.out_of_order.len() && self.out_of_order[i].0 <= seq).then_some(i)
    }

    fn buffer(&mut self, seq: u32) {
        let i = self.out_of_order.partition_point(|r| r.1 < seq);
        let joins_prev = i < self.out_of_order.len() && self.out_of_order[i].1 == seq;
        if joins_prev {
            self.out_of_order[i].1 = seq + 1;
            if i + 1 < self.out_of_order.len() && self.out_of_order[i + 1].0 == seq + 1 {
                self.out_of_order[i].1 = self.out_of_order[i + 1].1;
                self.out_of_order.remove(i + 1);
            }
        } else if i < self.out_of_order.len() && self.out_of_order[i].0 == seq + 1 {
            self.out_of_order[i].0 = seq;
        } else {
            self.out_of_order.insert(i, (seq, seq + 1));
        }
    }

    fn send_ack(&mut self, cfg: &TcpConfig, now: Time, latest: Option<u32>, out: &mut Vec<Packet>) {
        let mut ack = Packet::new(PacketKind::TcpAck, self.flow);
        ack.ack = self.rcv_nxt;
        // TSval on the 1-ms clock (RFC 7323 §3; ns-3 `NowToTsValue`), in the field ACKs leave free;
        // LEDBAT's one-way delay is TSval − TSecr.
        ack.seq = super::sender::ms_clock(now);
        ack.size = cfg.ack_bytes;
        ack.sent_at = self.ts_recent; // TSecr (used by the sender only with timestamps on)
        self.last_ack_sent = self.rcv_nxt;
        if self.ece {
            ack.flags |= FLAG_ECE;
        }
        if cfg.sack && !self.out_of_order.is_empty() {
            // The block holding the segment that triggered this ACK first (RFC 2018 §4).
            let first = latest.and_then(|seq| self.range_holding(seq)).unwrap_or(self.out_of_order.len() - 1);
            let mut n = 0;
            let order = std::iter::once(first).chain((0..self.out_of_order.len()).rev().filter(|&i| i != first));
            for i in order.take(MAX_SACK_BLOCKS) {
                let (start, end) = self.out_of_order[i];
                ack.sack[n] = SackBlock { start, end };
                n += 1;
            }
            ack.sack_len = n as u8;
        }
        self.pending = 0;
        self.ack_at = Time::NEVER;
        self.stats.acks_sent += 1;
        out.push(ack);
    }

    /// Handles the delayed-ACK timer.
    pub fn on_timer(&mut self, cfg: &TcpConfig, now: Time, out: &mut Vec<Packet>) {
        if self.pending > 0 && now >= self.ack_at {
            self.send_ack(cfg, now, None, out);
        }
    }

    /// When `on_timer` should next be called.
    pub fn next_wakeup(&self) -> Option<Time> {
        (self.ack_at != Time::NEVER).then_some(self.ack_at)
    }

    /// Payload bytes delivered in order to the application (unique, duplicates excluded).
    pub fn delivered_bytes(&self) -> u64 {
        self.delivered
    }

    /// Next segment expected.
    pub fn rcv_nxt(&self) -> u32 {
        self.rcv_nxt
    }

    /// Counters.
    pub fn stats(&self) -> &TcpReceiverStats {
        &self.stats
    }
}
