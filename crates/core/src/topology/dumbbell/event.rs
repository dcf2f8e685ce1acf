//! What the world's event queue carries, and the lanes that let packets arriving in order
//! skip its heap.

use crate::packet::Packet;

pub(super) enum Event {
    /// A packet reaches the bottleneck queue of direction `dir`.
    Arrive { dir: u8, pkt: Packet },
    /// A packet reaches its end host (data/UDP: the receiver; ACK: the sender).
    Deliver { pkt: Packet },
    SenderTimer(u32),
    ReceiverTimer(u32),
    Start(u32),
    Stop(u32),
    /// A paused TCP flow's application writes again (`resume`).
    Resume(u32),
    UdpSend(u32),
    /// An application-limited TCP source (`app_rate`) writes its next segment.
    AppWrite(u32),
    /// A browser's think time is over.
    BrowserWake(u32),
    /// A request reached the server: flow `f` starts a reply of `bytes` of payload.
    HttpRequest { f: u32, bytes: u64 },
    /// A shaping discipline of direction `dir` may offer a packet now (`Qdisc::next_wakeup`).
    QdiscWake { dir: u8 },
    Sample,
    WarmupEnd,
}

/// Event-queue lanes (see `EventQueue::schedule_in_lane`): packets leaving a bottleneck direction
/// reach their hosts nearly in the order they left, and packets entering a direction from the
/// access links mostly arrive in the order they were sent; both skip the heap when they do.
pub(super) const DELIVER_LANE: [usize; 2] = [0, 1];
pub(super) const ARRIVE_LANE: [usize; 2] = [2, 3];
pub(super) const LANES: usize = 4;
