//! The dumbbell: N flows, each with a sender-side and a receiver-side access link, two routers,
//! and a bottleneck link with one queue per direction. Forward flows send data left→right
//! through `[queue]` and receive ACKs through `[reverse_queue]`; reverse flows the other way.
//!
//! Folded hops (DESIGN §6): an access link has a single input (its host, or the bottleneck
//! towards the receiver) and an unbounded FIFO, so its output time is computable when the
//! packet enters: `start = max(arrival, free_at); free_at = start + size/rate; out = free_at +
//! delay`. That is exactly the unfolded FIFO's behaviour, without an event per hop. The
//! bottleneck queues are real event-driven servers, because the discipline decides at enqueue
//! and dequeue times. Sojourn is enqueue → start of transmission.

mod access;
mod bottleneck;
mod browsers;
mod counters;
mod event;
mod flow;
mod hosts;
mod sampling;
mod series;
mod summary;
mod timers;
mod world;
#[cfg(test)]
mod tests;

pub use counters::FlowCounters;
pub use series::{PacketDelays, TimeSeries};
pub use world::{RunError, World};
