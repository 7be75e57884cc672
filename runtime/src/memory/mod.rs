//! Checked global memory: an address space of live allocations.
//!
//! Allocations are backed by anonymous `memmap2` mappings, so a GPU address can be
//! the very host address a client sees (`alloc`), or a device-chosen guest address
//! backed by host memory elsewhere (`alloc_at`, e.g. RV32 VRAM at 0). Every kernel
//! access is checked against the live table; freed ranges leave it at once and are
//! remembered (bounded) so that a later access reports use-after-free.
//!
//! Engines keep host pointers for a whole dispatch (the JIT snapshots `regions`),
//! and `free` is safe and may come from any thread. So a dispatch pins the space
//! (`GlobalMemory::pin`, one atomic add), and an allocation freed while any pin
//! is held leaves the live table at once (new lookups refuse it) but stays mapped,
//! and its range reserved, until the last pin is released. A running kernel that
//! touches it through its dispatch's snapshot therefore sees the old bytes; an
//! access resolved by `translate` after the free faults as use-after-free.

mod table;

use std::collections::BTreeMap;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, RwLock};

use memmap2::MmapMut;
use wavejit_ir::{Access, AccessCause, GlobalMemory, Region};

use table::{Backing, Entry, FreedRanges};

/// Why an allocation request failed.
#[derive(Debug, thiserror::Error)]
pub enum MemError {
    #[error("allocation of 0 bytes")]
    ZeroSize,
    #[error("range {start:#x}..{end:#x} overlaps a live allocation")]
    Overlap { start: u64, end: u64 },
    #[error(
        "range {start:#x}..{end:#x} overlaps a freed allocation a running dispatch may still use"
    )]
    InUse { start: u64, end: u64 },
    #[error("no allocation starts at {0:#x}")]
    NotAllocated(u64),
    #[error("mapping {size} bytes failed: {source}")]
    Map {
        size: u64,
        #[source]
        source: std::io::Error,
    },
    #[error("access refused: {0}")]
    Access(#[from] AccessCause),
}

/// The live allocations of one device or client.
#[derive(Default)]
pub struct AddressSpace {
    live: RwLock<BTreeMap<u64, Entry>>,
    freed: RwLock<FreedRanges>,
    /// Pins held by running dispatches.
    pins: AtomicUsize,
    /// Allocations freed while pinned: out of `live`, still mapped and reserved
    /// until no pin is held. Lock order: `live` before `deferred`.
    deferred: Mutex<Vec<(u64, Entry)>>,
}

impl AddressSpace {
    pub fn new() -> AddressSpace {
        AddressSpace::default()
    }

    /// Allocates `size` zeroed bytes whose GPU address is their host address.
    pub fn alloc(&self, size: u64) -> Result<u64, MemError> {
        let map = map_anon(size)?;
        let addr = map.as_ptr() as u64;
        self.insert(addr, size, Backing::Owned(map), true)?;
        Ok(addr)
    }

    /// Allocates `size` zeroed bytes at the guest address `addr` (host memory elsewhere).
    pub fn alloc_at(&self, addr: u64, size: u64) -> Result<u64, MemError> {
        let map = map_anon(size)?;
        self.insert(addr, size, Backing::Owned(map), true)?;
        Ok(addr)
    }

    /// Makes `len` bytes of host memory at `host` visible at guest address `addr`.
    ///
    /// # Safety
    /// `host` must point to `len` bytes that stay valid (and writable if `writable`)
    /// until this range is freed with [`AddressSpace::free`] and no dispatch
    /// that was running at the free still runs ([`AddressSpace::deferred_frees`]
    /// is 0 when none is pending), or until the space is dropped.
    pub unsafe fn register(
        &self,
        addr: u64,
        host: NonNull<u8>,
        len: u64,
        writable: bool,
    ) -> Result<(), MemError> {
        self.insert(addr, len, Backing::External(host), writable)
    }

    fn insert(
        &self,
        start: u64,
        len: u64,
        backing: Backing,
        writable: bool,
    ) -> Result<(), MemError> {
        if len == 0 {
            return Err(MemError::ZeroSize);
        }
        let end = start.checked_add(len).ok_or(MemError::Overlap {
            start,
            end: u64::MAX,
        })?;
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        let overlaps = live
            .range(..end)
            .next_back()
            .is_some_and(|(&s, e)| s + e.len > start);
        if overlaps {
            return Err(MemError::Overlap { start, end });
        }
        // A running dispatch may still write a freed range through its snapshot.
        let deferred = self.deferred.lock().unwrap_or_else(|e| e.into_inner());
        if deferred.iter().any(|(s, e)| *s < end && start < *s + e.len) {
            return Err(MemError::InUse { start, end });
        }
        drop(deferred);
        live.insert(
            start,
            Entry {
                len,
                backing,
                writable,
            },
        );
        self.freed
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .forget(start, end);
        Ok(())
    }

    /// Frees the allocation starting at `addr`; its range is refused from now on.
    /// While a dispatch runs the unmapping waits for it (see the module comment).
    pub fn free(&self, addr: u64) -> Result<(), MemError> {
        let mut live = self.live.write().unwrap_or_else(|e| e.into_inner());
        let entry = live.remove(&addr).ok_or(MemError::NotAllocated(addr))?;
        self.freed
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remember(addr, addr + entry.len);
        // Under `live`'s write lock: a pin taken before this point (whose
        // snapshot may hold the entry) is counted here; one taken after cannot
        // see the entry. Checked under `deferred`'s lock so that a last unpin
        // racing with this either sees the entry or is seen.
        let mut deferred = self.deferred.lock().unwrap_or_else(|e| e.into_inner());
        if self.pins.load(Ordering::SeqCst) > 0 {
            deferred.push((addr, entry));
        } else {
            drop(deferred);
            drop(live);
            drop(entry);
        }
        Ok(())
    }

    /// Freed allocations still mapped because a dispatch was running when they
    /// were freed (0 once every such dispatch has ended).
    pub fn deferred_frees(&self) -> usize {
        self.deferred
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .len()
    }

    /// The allocation containing `addr`, as (start, len).
    pub fn allocation_of(&self, addr: u64) -> Option<(u64, u64)> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        live.range(..=addr)
            .next_back()
            .filter(|(s, e)| addr < *s + e.len)
            .map(|(&s, e)| (s, e.len))
    }

    /// Number of live allocations.
    pub fn len(&self) -> usize {
        self.live.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn write_bytes(&self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        Ok(self.write(addr, data)?)
    }

    /// Copies `len` bytes at `addr`; the range is checked before the buffer is
    /// allocated, so a length no allocation holds is refused, not allocated.
    pub fn read_bytes(&self, addr: u64, len: usize) -> Result<Vec<u8>, MemError> {
        if len > 0 {
            self.translate(addr, len as u64, Access::Read)?;
        }
        let mut buf = vec![0; len];
        self.read(addr, &mut buf)?;
        Ok(buf)
    }

    pub fn write_u32s(&self, addr: u64, values: &[u32]) -> Result<(), MemError> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.write_bytes(addr, &bytes)
    }

    pub fn read_u32s(&self, addr: u64, count: usize) -> Result<Vec<u32>, MemError> {
        let bytes = self.read_bytes(addr, count * 4)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    pub fn write_f32s(&self, addr: u64, values: &[f32]) -> Result<(), MemError> {
        let bits: Vec<u32> = values.iter().map(|v| v.to_bits()).collect();
        self.write_u32s(addr, &bits)
    }

    pub fn read_f32s(&self, addr: u64, count: usize) -> Result<Vec<f32>, MemError> {
        Ok(self
            .read_u32s(addr, count)?
            .into_iter()
            .map(f32::from_bits)
            .collect())
    }
}

fn map_anon(size: u64) -> Result<MmapMut, MemError> {
    if size == 0 {
        return Err(MemError::ZeroSize);
    }
    let len = usize::try_from(size).map_err(|_| MemError::Map {
        size,
        source: std::io::Error::other("size exceeds the host address space"),
    })?;
    MmapMut::map_anon(len).map_err(|source| MemError::Map { size, source })
}

impl AddressSpace {
    /// Host pointer of `len` bytes at `addr` in `live` (held by the caller).
    fn lookup(
        &self,
        live: &BTreeMap<u64, Entry>,
        addr: u64,
        len: u64,
        access: Access,
    ) -> Result<NonNull<u8>, AccessCause> {
        if let Some((&start, entry)) = live.range(..=addr).next_back()
            && addr < start + entry.len
        {
            if addr
                .checked_add(len)
                .is_none_or(|end| end > start + entry.len)
            {
                return Err(AccessCause::OutOfBounds);
            }
            if access == Access::Write && !entry.writable {
                return Err(AccessCause::ReadOnly);
            }
            // SAFETY: addr - start < entry.len, inside the mapping.
            return Ok(unsafe { entry.host().add((addr - start) as usize) });
        }
        let freed = self.freed.read().unwrap_or_else(|e| e.into_inner());
        if freed.contains(addr) {
            Err(AccessCause::UseAfterFree)
        } else {
            Err(AccessCause::Unmapped)
        }
    }
}

// SAFETY: translate and regions hand out pointers into live entries only. An
// owned mapping is unmapped when its entry drops, which `free` defers while a
// pin is held (`deferred`, drained only when no pin is); the host reads, writes
// and atomics below keep `live` read-locked while they touch the bytes, so a
// concurrent `free` cannot unmap under them either.
unsafe impl GlobalMemory for AddressSpace {
    fn translate(&self, addr: u64, len: u64, access: Access) -> Result<NonNull<u8>, AccessCause> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        self.lookup(&live, addr, len, access)
    }

    fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), AccessCause> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        let p = self.lookup(&live, addr, buf.len() as u64, Access::Read)?;
        // SAFETY: `buf.len()` readable bytes at `p`, mapped while `live` is held.
        unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }

    fn write(&self, addr: u64, data: &[u8]) -> Result<(), AccessCause> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        let p = self.lookup(&live, addr, data.len() as u64, Access::Write)?;
        // SAFETY: `data.len()` writable bytes at `p`, mapped while `live` is held.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p.as_ptr(), data.len()) };
        Ok(())
    }

    fn atomic(
        &self,
        addr: u64,
        bytes: u32,
        op: wavejit_ir::AtomicOp,
        a: u64,
        b: u64,
    ) -> Result<u64, AccessCause> {
        if !addr.is_multiple_of(u64::from(bytes)) {
            return Err(AccessCause::Misaligned { align: bytes });
        }
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        let p = self.lookup(&live, addr, u64::from(bytes), Access::Write)?;
        Ok(wavejit_ir::semantics::atomic::host_atomic(
            p, bytes, op, a, b,
        ))
    }

    fn pin(&self) {
        self.pins.fetch_add(1, Ordering::SeqCst);
    }

    fn unpin(&self) {
        if self.pins.fetch_sub(1, Ordering::SeqCst) != 1 {
            return;
        }
        let mut deferred = self.deferred.lock().unwrap_or_else(|e| e.into_inner());
        // A pin taken since the decrement may hold a snapshot older than some
        // deferred free; its own unpin drains them.
        if self.pins.load(Ordering::SeqCst) == 0 {
            let done = std::mem::take(&mut *deferred);
            drop(deferred);
            drop(done);
        }
    }

    fn regions(&self) -> Option<Vec<Region>> {
        let live = self.live.read().unwrap_or_else(|e| e.into_inner());
        Some(
            live.iter()
                .map(|(&start, e)| Region {
                    start,
                    len: e.len,
                    host: e.host(),
                    writable: e.writable,
                })
                .collect(),
        )
    }
}
