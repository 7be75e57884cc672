//! One global buffer at [`BUF`] for the ir3 lift tests that run kernels on the
//! golden interpreter.

use std::cell::UnsafeCell;
use std::ptr::NonNull;

use wavejit_ir::{Access, AccessCause, GlobalMemory};

pub const BUF: u64 = 0x1000_0000;

/// A byte buffer mapped at [`BUF`]: past its end is out of bounds, below it
/// unmapped.
pub struct Buffer(UnsafeCell<Vec<u8>>);

// SAFETY: tests run one dispatch at a time; the interpreter runs fibers one by one.
unsafe impl Sync for Buffer {}

// SAFETY: translate only returns pointers inside the owned vector.
unsafe impl GlobalMemory for Buffer {
    fn translate(&self, addr: u64, len: u64, _: Access) -> Result<NonNull<u8>, AccessCause> {
        // SAFETY: the vector is never resized while a dispatch runs.
        let v = unsafe { &mut *self.0.get() };
        let off = addr.checked_sub(BUF).ok_or(AccessCause::Unmapped)?;
        if off >= v.len() as u64 {
            return Err(AccessCause::Unmapped);
        }
        if off + len > v.len() as u64 {
            return Err(AccessCause::OutOfBounds);
        }
        NonNull::new(v[off as usize..].as_mut_ptr()).ok_or(AccessCause::Unmapped)
    }
}

impl Buffer {
    pub fn new(words: &[u32]) -> Buffer {
        Buffer(UnsafeCell::new(
            words.iter().flat_map(|w| w.to_le_bytes()).collect(),
        ))
    }

    /// The buffer as little-endian words.
    pub fn words(&self) -> Vec<u32> {
        // SAFETY: no dispatch is running.
        let v = unsafe { &*self.0.get() };
        v.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}
