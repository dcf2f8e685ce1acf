//! The event engine: time, the event queue and random streams.

pub mod event_queue;
pub mod rng;
pub mod time;

pub use event_queue::EventQueue;
pub use rng::{stream, Rng, StreamId};
pub use time::{Dur, Time};
