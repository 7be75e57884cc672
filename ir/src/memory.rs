//! The interface between kernels and host-visible (global) memory.

use std::ptr::NonNull;

use crate::inst::AtomicOp;

/// Why a memory access was refused.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, thiserror::Error)]
pub enum AccessCause {
    #[error("no allocation contains it")]
    Unmapped,
    #[error("its allocation was freed")]
    UseAfterFree,
    #[error("it is not aligned to {align} bytes")]
    Misaligned { align: u32 },
    #[error("it runs past the end of its allocation")]
    OutOfBounds,
    #[error("the memory is read-only")]
    ReadOnly,
}

/// Kind of access asked of [`GlobalMemory::translate`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// One live allocation as engines may cache it for the length of a dispatch:
/// guest range `[start, start + len)` backed by host bytes at `host`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: u64,
    pub len: u64,
    pub host: NonNull<u8>,
    pub writable: bool,
}

/// Global memory as a kernel sees it. Implementations check every range against
/// their live allocations; a refused access becomes a fault, never a host crash.
///
/// # Safety
/// `translate` must return a pointer to `len` bytes that stay valid (and writable
/// for `Access::Write`) while the memory is pinned ([`GlobalMemory::pin`]), even
/// if the allocation is freed meanwhile, and for as long as the allocation is live.
/// The same holds for the host ranges of [`GlobalMemory::regions`]. Engines pin
/// the memory for the whole of every dispatch ([`Pinned`]).
pub unsafe trait GlobalMemory: Sync {
    /// Host pointer to `len` bytes at guest address `addr`, if the whole range lies
    /// in one live allocation that permits `access`.
    fn translate(&self, addr: u64, len: u64, access: Access) -> Result<NonNull<u8>, AccessCause>;

    /// The live allocations, sorted by `start`, for engines that check accesses
    /// inline (the JIT). `None` means "always call `translate`". The regions stay
    /// valid while the memory is pinned, freed or not.
    fn regions(&self) -> Option<Vec<Region>> {
        None
    }

    /// A dispatch starts: until the matching [`GlobalMemory::unpin`], host bytes
    /// handed out (by `translate` or `regions`) must stay mapped and their guest
    /// range must not be given to another allocation, even if freed. Pins nest
    /// and may come from several threads. Use [`Pinned`] rather than calling this.
    fn pin(&self) {}

    /// Ends what one [`GlobalMemory::pin`] began.
    fn unpin(&self) {}

    /// Reads `buf.len()` bytes at `addr`.
    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessCause> {
        let p = self.translate(addr, buf.len() as u64, Access::Read)?;
        // SAFETY: translate guarantees `buf.len()` readable bytes at `p`; concurrent
        // writers are other lanes whose races the guest program owns.
        unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    /// Writes `data` at `addr`.
    fn write(&self, addr: u64, data: &[u8]) -> Result<(), AccessCause> {
        let p = self.translate(addr, data.len() as u64, Access::Write)?;
        // SAFETY: translate guarantees `data.len()` writable bytes at `p`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.as_ptr(), data.len()) };
        Ok(())
    }

    /// Atomic read-modify-write of a naturally aligned 4- or 8-byte value; returns
    /// the old value. `b` is the new value of `CmpXchg` (`a` the expected one).
    fn atomic(
        &self,
        addr: u64,
        bytes: u32,
        op: AtomicOp,
        a: u64,
        b: u64,
    ) -> Result<u64, AccessCause> {
        if !addr.is_multiple_of(u64::from(bytes)) {
            return Err(AccessCause::Misaligned { align: bytes });
        }
        let p = self.translate(addr, u64::from(bytes), Access::Write)?;
        Ok(crate::semantics::atomic::host_atomic(p, bytes, op, a, b))
    }
}

/// A pin of a global memory for the length of a dispatch; unpins when dropped
/// (also when the dispatch unwinds).
pub struct Pinned<'a, M: GlobalMemory + ?Sized>(&'a M);

impl<'a, M: GlobalMemory + ?Sized> Pinned<'a, M> {
    pub fn new(memory: &'a M) -> Pinned<'a, M> {
        memory.pin();
        Pinned(memory)
    }
}

impl<M: GlobalMemory + ?Sized> Drop for Pinned<'_, M> {
    fn drop(&mut self) {
        self.0.unpin();
    }
}

/// A global memory with nothing mapped: every access faults.
pub struct NoGlobalMemory;

// SAFETY: translate never returns a pointer.
unsafe impl GlobalMemory for NoGlobalMemory {
    fn translate(&self, _: u64, _: u64, _: Access) -> Result<NonNull<u8>, AccessCause> {
        Err(AccessCause::Unmapped)
    }
}
