//! The packet ring and the `amd_queue_t`-compatible queue descriptor, both in host
//! memory that producers (Rust or C) write directly.
//!
//! All accesses to the ring are atomic (the header word with acquire/release, the
//! body with relaxed loads/stores ordered by the header), so a misbehaving producer
//! cannot cause a data race in this process's memory model.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::packet::{PACKET_SIZE, PacketType};

/// `hsa_queue_t` (40 bytes). C name: `wj_aql_queue_t`.
#[repr(C)]
#[derive(Debug)]
pub struct HsaQueue {
    /// `hsa_queue_type32_t`: MULTI 0, SINGLE 1.
    pub ty: u32,
    /// `hsa_queue_feature_t` bits: KERNEL_DISPATCH 1.
    pub features: u32,
    /// The ring: `size` packets of 64 bytes, 64-byte aligned.
    pub base_address: u64,
    /// Handle of the doorbell signal.
    pub doorbell_signal: u64,
    /// Packets in the ring (a power of two).
    pub size: u32,
    pub reserved1: u32,
    /// Unique for the process lifetime.
    pub id: u64,
}

/// `amd_queue_t` (256 bytes): `hsa_queue_t`, then the write index at 56 and the
/// read index at 128, as tinygrad and the KFD expect.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct QueueDescriptor {
    pub hsa: HsaQueue,
    pub caps: u32,
    reserved_44: [u32; 3],
    /// The HSA write index (`write_dispatch_id`).
    pub write_dispatch_id: AtomicU64,
    reserved_64: [u32; 16],
    /// The HSA read index (`read_dispatch_id`).
    pub read_dispatch_id: AtomicU64,
    pub read_dispatch_id_field_base_byte_offset: u32,
    reserved_140: [u32; 29],
}

impl QueueDescriptor {
    pub(crate) fn new(hsa: HsaQueue) -> QueueDescriptor {
        QueueDescriptor {
            hsa,
            caps: 0,
            reserved_44: [0; 3],
            write_dispatch_id: AtomicU64::new(0),
            reserved_64: [0; 16],
            read_dispatch_id: AtomicU64::new(0),
            read_dispatch_id_field_base_byte_offset: 128,
            reserved_140: [0; 29],
        }
    }
}

/// `size` packets of host memory, every header INVALID at creation.
pub(crate) struct Ring {
    base: NonNull<u8>,
    layout: Layout,
    mask: u64,
}

// SAFETY: the ring is only accessed through atomics.
unsafe impl Send for Ring {}
// SAFETY: as above.
unsafe impl Sync for Ring {}

impl Ring {
    /// `size` must be a power of two (checked by the caller).
    pub(crate) fn new(size: u32) -> Option<Ring> {
        let bytes = (size as usize).checked_mul(PACKET_SIZE)?;
        let layout = Layout::from_size_align(bytes, PACKET_SIZE).ok()?;
        if layout.size() == 0 {
            return None;
        }
        // SAFETY: the layout has a non-zero size.
        let base = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        let ring = Ring {
            base,
            layout,
            mask: u64::from(size) - 1,
        };
        for id in 0..u64::from(size) {
            ring.word(id, 0)
                .store(PacketType::Invalid as u32, Ordering::Relaxed);
        }
        Some(ring)
    }

    pub(crate) fn base_address(&self) -> u64 {
        self.base.as_ptr() as u64
    }

    /// The 32-bit word `index` (0..16) of packet `id`'s slot.
    pub(crate) fn word(&self, id: u64, index: usize) -> &AtomicU32 {
        let offset = (id & self.mask) as usize * PACKET_SIZE + 4 * (index % 16);
        // SAFETY: the offset is inside the allocation and 4-aligned; the memory lives
        // as long as `self` and is only accessed atomically.
        unsafe { AtomicU32::from_ptr(self.base.as_ptr().add(offset).cast::<u32>()) }
    }

    /// Reads the whole slot of packet `id`: the caller already read the header with
    /// acquire order, which orders these relaxed loads after the producer's stores.
    pub(crate) fn read(&self, id: u64) -> [u8; PACKET_SIZE] {
        let mut out = [0u8; PACKET_SIZE];
        for (i, chunk) in out.chunks_exact_mut(4).enumerate() {
            chunk.copy_from_slice(&self.word(id, i).load(Ordering::Relaxed).to_le_bytes());
        }
        out
    }

    /// Writes bytes 4..64 of packet `id` (relaxed); publish the header afterwards.
    pub(crate) fn write_body(&self, id: u64, bytes: &[u8; PACKET_SIZE]) {
        for (i, chunk) in bytes.chunks_exact(4).enumerate().skip(1) {
            let w = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
            self.word(id, i).store(w, Ordering::Relaxed);
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { dealloc(self.base.as_ptr(), self.layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amd_queue_layout() {
        assert_eq!(std::mem::size_of::<HsaQueue>(), 40);
        assert_eq!(std::mem::size_of::<QueueDescriptor>(), 256);
        assert_eq!(std::mem::offset_of!(QueueDescriptor, write_dispatch_id), 56);
        assert_eq!(std::mem::offset_of!(QueueDescriptor, read_dispatch_id), 128);
        assert_eq!(
            std::mem::offset_of!(QueueDescriptor, read_dispatch_id_field_base_byte_offset),
            136
        );
        assert_eq!(std::mem::offset_of!(HsaQueue, id), 32);
    }

    #[test]
    fn ring_starts_invalid_and_aligned() {
        let r = Ring::new(8).expect("ring");
        assert_eq!(r.base_address() % 64, 0);
        for id in 0..8 {
            assert_eq!(r.word(id, 0).load(Ordering::Relaxed), 1);
        }
        // Ids wrap onto slots.
        r.word(9, 3).store(0xabcd, Ordering::Relaxed);
        assert_eq!(r.read(1)[12..16], 0xabcdu32.to_le_bytes());
    }
}
