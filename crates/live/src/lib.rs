//! aqmlab's real-traffic router (Linux): the simulator's queue disciplines, unchanged, forwarding
//! real packets between two TUN devices, each in a network namespace of its own, under the
//! scenario's bottleneck rate and delays. The Python side (`aqmlab live`) builds the namespaces
//! and runs the traffic; see docs/live.md.

pub mod delay_line;
pub mod emulated_path;
pub mod flow_map;
pub mod ip_header;
pub mod packet_store;
pub mod router;
pub mod tun;

pub use router::{monotonic_ns, LiveReport, LiveRouter};
