//! Deterministic random streams, one per component.
//!
//! A stream is derived from (run seed, component id) with SplitMix64, so adding a flow does not
//! shift the random numbers another flow or queue sees. There is no global generator.

use rand::SeedableRng;

/// The generator every component uses: PCG-64 (MCG variant), fast and statistically sound.
pub type Rng = rand_pcg::Pcg64Mcg;

/// Identifies the owner of a random stream. Values are stable across versions: changing them
/// changes every result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StreamId {
    /// The forward (index 0) or reverse (index 1) bottleneck queue discipline.
    Queue(u32),
    /// Random loss on a link direction.
    LinkLoss(u32),
    /// A flow's application (start-time jitter, inter-arrival times, transfer sizes).
    Flow(u32),
    /// Access-delay jitter of a `[[flows]]` group.
    AccessDelay(u32),
    /// A `kind = "http"` browser (think times, reply sizes, embedded counts).
    Browser(u32),
}

impl StreamId {
    fn code(self) -> u64 {
        match self {
            StreamId::Queue(i) => (1 << 32) | i as u64,
            StreamId::Browser(i) => (5 << 32) | i as u64,
            StreamId::LinkLoss(i) => (2 << 32) | i as u64,
            StreamId::Flow(i) => (3 << 32) | i as u64,
            StreamId::AccessDelay(i) => (4 << 32) | i as u64,
        }
    }
}

fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The stream for `id` in a run seeded with `seed`.
pub fn stream(seed: u64, id: StreamId) -> Rng {
    let hi = splitmix64(seed ^ splitmix64(id.code()));
    let lo = splitmix64(hi ^ 0xD1B5_4A32_D192_ED03);
    Rng::from_seed(((hi as u128) << 64 | lo as u128).to_le_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng as _;

    #[test]
    fn same_seed_and_id_give_the_same_stream() {
        let a: Vec<u64> = (0..4).map({ let mut r = stream(7, StreamId::Flow(3)); move |_| r.gen() }).collect();
        let b: Vec<u64> = (0..4).map({ let mut r = stream(7, StreamId::Flow(3)); move |_| r.gen() }).collect();
        assert_eq!(a, b);
    }

    #[test]
    fn different_components_get_different_streams() {
        let a: u64 = stream(7, StreamId::Flow(3)).gen();
        let b: u64 = stream(7, StreamId::Flow(4)).gen();
        let c: u64 = stream(7, StreamId::Queue(3)).gen();
        assert_ne!(a, b);
        assert_ne!(a, c);
    }
}
