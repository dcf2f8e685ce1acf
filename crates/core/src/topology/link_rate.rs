//! A link's rate, with the serialisation time of the last packet size it carried remembered.

use crate::engine::time::Dur;

/// Serialisation times for one link. A link carries few distinct sizes (full segments one way,
/// ACKs the other), and the floating-point division and ceiling of [`Dur::transmission`] are a
/// fair part of the per-packet cost, so the last result is kept. The times are exactly
/// [`Dur::transmission`]'s.
#[derive(Clone, Copy, Debug)]
pub struct LinkRate {
    bps: f64,
    last_bytes: u32,
    last_tx: Dur,
}

impl LinkRate {
    /// A link of `bps` bits per second.
    pub fn new(bps: f64) -> LinkRate {
        LinkRate { bps, last_bytes: 0, last_tx: Dur::transmission(0, bps) }
    }

    /// Time to serialise `bytes` onto this link.
    #[inline]
    pub fn transmission(&mut self, bytes: u32) -> Dur {
        if bytes != self.last_bytes {
            self.last_bytes = bytes;
            self.last_tx = Dur::transmission(bytes, self.bps);
        }
        self.last_tx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn remembers_without_changing_any_time(
            bps in 1e3f64..1e11,
            sizes in proptest::collection::vec(proptest::sample::select(vec![0u32, 40, 66, 1000, 1500, 1502, 9000]), 1..50),
        ) {
            let mut link = LinkRate::new(bps);
            for bytes in sizes {
                proptest::prop_assert_eq!(link.transmission(bytes), Dur::transmission(bytes, bps));
            }
        }
    }
}
