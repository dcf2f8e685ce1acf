//! Where the bytes of packets held by the router live while the queue discipline handles their
//! 64-byte `Packet` descriptors; a descriptor names its bytes by slot number.

use aqmlab_core::packet::Packet;

/// Slots of packet bytes, reused after release so a steady run stops allocating.
pub struct PacketStore {
    slots: Vec<Slot>,
    free: Vec<u32>,
    held: usize,
    capacity: usize,
}

struct Slot {
    bytes: Vec<u8>,
    /// The descriptor as it entered the router (flow, size, ECN, class...).
    pkt: Packet,
}

impl PacketStore {
    /// A store that holds at most `capacity` packets at once.
    pub fn new(capacity: usize) -> PacketStore {
        PacketStore { slots: Vec::new(), free: Vec::new(), held: 0, capacity }
    }

    /// Copies `bytes` in; the slot number, or `None` when the store is full.
    pub fn insert(&mut self, bytes: &[u8], pkt: Packet) -> Option<u32> {
        if self.held >= self.capacity {
            return None;
        }
        self.held += 1;
        match self.free.pop() {
            Some(i) => {
                let s = &mut self.slots[i as usize];
                s.bytes.clear();
                s.bytes.extend_from_slice(bytes);
                s.pkt = pkt;
                Some(i)
            }
            None => {
                self.slots.push(Slot { bytes: bytes.to_vec(), pkt });
                Some(self.slots.len() as u32 - 1)
            }
        }
    }

    /// The descriptor stored with slot `i`.
    pub fn packet(&self, i: u32) -> &Packet {
        &self.slots[i as usize].pkt
    }

    /// The bytes of slot `i`.
    pub fn bytes_mut(&mut self, i: u32) -> &mut [u8] {
        &mut self.slots[i as usize].bytes
    }

    /// Frees slot `i`.
    pub fn release(&mut self, i: u32) {
        debug_assert!(!self.free.contains(&i), "slot {i} released twice");
        self.free.push(i);
        self.held -= 1;
    }

    /// Packets held now.
    pub fn held(&self) -> usize {
        self.held
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aqmlab_core::packet::PacketKind;

    #[test]
    fn reuses_released_slots_and_refuses_beyond_capacity() {
        let p = Packet::new(PacketKind::Udp, 3);
        let mut s = PacketStore::new(2);
        let a = s.insert(&[1, 2, 3], p).unwrap();
        let b = s.insert(&[4], p).unwrap();
        assert_eq!(s.insert(&[5], p), None, "full");
        s.release(a);
        let c = s.insert(&[6, 7], p).unwrap();
        assert_eq!((c, s.held()), (a, 2));
        assert_eq!(s.bytes_mut(c), &[6, 7]);
        assert_eq!(s.bytes_mut(b), &[4]);
        assert_eq!(s.packet(b).flow, 3);
    }
}
