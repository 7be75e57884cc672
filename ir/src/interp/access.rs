//! Loads, stores and atomics of one lane in every address space.
//!
//! Order of checks (the JIT must match): alignment to `MemAccess.align` (atomics:
//! their width) first, then the whole range `[addr, addr + total_bytes)` in one
//! piece. Faults carry the access's start address (the offset for shared, uniform
//! and private), its total size and whether it writes. Values are little-endian;
//! narrow loads extend per `MemAccess.signed`, narrow stores truncate.

use crate::fault::FaultKind;
use crate::inst::{AddrSpace, AtomicOp, MemAccess};
use crate::memory::{AccessCause, GlobalMemory};
use crate::semantics::atomic::atomic_rmw;
use crate::types::Type;

/// The memory a lane can reach, with the interpreter's checks (alignment, then
/// range) and layout: the definition faster engines reuse on their exact paths.
pub struct LaneMemory<'a> {
    pub global: &'a dyn GlobalMemory,
    pub uniforms: &'a [u8],
    pub shared: &'a mut [u8],
    pub private: &'a mut [u8],
}

/// Widest access: 4 elements of 8 bytes.
const MAX_ACCESS: usize = 32;

fn fault(space: AddrSpace, addr: u64, size: u32, write: bool, cause: AccessCause) -> FaultKind {
    FaultKind::Memory {
        space,
        addr,
        size,
        write,
        cause,
    }
}

/// The address as the space reads it: 64-bit for global, a 32-bit unsigned offset
/// otherwise.
fn space_addr(space: AddrSpace, raw: u64) -> u64 {
    match space {
        AddrSpace::Global => raw,
        _ => raw & 0xffff_ffff,
    }
}

/// Byte range of a local (non-global) space, bounds-checked.
fn local_range(len: usize, addr: u64, size: u32) -> Result<std::ops::Range<usize>, AccessCause> {
    let start = usize::try_from(addr).map_err(|_| AccessCause::OutOfBounds)?;
    let end = start
        .checked_add(size as usize)
        .filter(|&e| e <= len)
        .ok_or(AccessCause::OutOfBounds)?;
    Ok(start..end)
}

impl LaneMemory<'_> {
    fn read_bytes(&self, space: AddrSpace, addr: u64, buf: &mut [u8]) -> Result<(), AccessCause> {
        let src: &[u8] = match space {
            AddrSpace::Global => return self.global.read(addr, buf),
            AddrSpace::Shared => self.shared,
            AddrSpace::Private => self.private,
            AddrSpace::Uniform => self.uniforms,
        };
        let r = local_range(src.len(), addr, buf.len() as u32)?;
        buf.copy_from_slice(&src[r]);
        Ok(())
    }

    fn write_bytes(&mut self, space: AddrSpace, addr: u64, data: &[u8]) -> Result<(), AccessCause> {
        let dst: &mut [u8] = match space {
            AddrSpace::Global => return self.global.write(addr, data),
            AddrSpace::Shared => self.shared,
            AddrSpace::Private => self.private,
            AddrSpace::Uniform => return Err(AccessCause::ReadOnly),
        };
        let r = local_range(dst.len(), addr, data.len() as u32)?;
        dst[r].copy_from_slice(data);
        Ok(())
    }

    /// Loads `a.count` elements at `raw_addr` into `out`.
    pub fn load(&self, a: &MemAccess, raw_addr: u64, out: &mut [u64]) -> Result<(), FaultKind> {
        let addr = space_addr(a.space, raw_addr);
        let size = a.total_bytes();
        let fail = |cause| fault(a.space, addr, size, false, cause);
        check_align(addr, a.align).map_err(fail)?;
        let mut buf = [0u8; MAX_ACCESS];
        let bytes = buf
            .get_mut(..size as usize)
            .ok_or(fail(AccessCause::OutOfBounds))?;
        self.read_bytes(a.space, addr, bytes).map_err(fail)?;
        let eb = a.elem_bytes() as usize;
        for (o, chunk) in out.iter_mut().zip(bytes.chunks_exact(eb)) {
            *o = extend(le_bits(chunk), u32::from(a.bits), a.signed, a.ty);
        }
        Ok(())
    }

    /// Stores `values` (one per element) at `raw_addr`, truncated to `a.bits`.
    pub fn store(&mut self, a: &MemAccess, raw_addr: u64, values: &[u64]) -> Result<(), FaultKind> {
        let addr = space_addr(a.space, raw_addr);
        let size = a.total_bytes();
        let fail = |cause| fault(a.space, addr, size, true, cause);
        check_align(addr, a.align).map_err(fail)?;
        let mut buf = [0u8; MAX_ACCESS];
        let bytes = buf
            .get_mut(..size as usize)
            .ok_or(fail(AccessCause::OutOfBounds))?;
        let eb = a.elem_bytes() as usize;
        for (chunk, v) in bytes.chunks_exact_mut(eb).zip(values) {
            chunk.copy_from_slice(&v.to_le_bytes()[..eb]);
        }
        self.write_bytes(a.space, addr, bytes).map_err(fail)
    }

    /// Atomic read-modify-write of a `ty` (i32/i64) value; returns the old value.
    pub fn atomic(
        &mut self,
        space: AddrSpace,
        op: AtomicOp,
        ty: Type,
        raw_addr: u64,
        a: u64,
        b: u64,
    ) -> Result<u64, FaultKind> {
        let addr = space_addr(space, raw_addr);
        let bytes = ty.bytes();
        let fail = |cause| fault(space, addr, bytes, true, cause);
        check_align(addr, bytes).map_err(fail)?;
        match space {
            AddrSpace::Global => self.global.atomic(addr, bytes, op, a, b).map_err(fail),
            AddrSpace::Shared => {
                let r = local_range(self.shared.len(), addr, bytes).map_err(fail)?;
                let cell = &mut self.shared[r];
                let old = le_bits(cell);
                let new = atomic_rmw(op, bytes, old, a, b);
                cell.copy_from_slice(&new.to_le_bytes()[..bytes as usize]);
                Ok(old)
            }
            // The signature allows only global and shared atomics.
            AddrSpace::Uniform | AddrSpace::Private => Err(fail(AccessCause::ReadOnly)),
        }
    }
}

fn check_align(addr: u64, align: u32) -> Result<(), AccessCause> {
    if align > 1 && !addr.is_multiple_of(u64::from(align)) {
        Err(AccessCause::Misaligned { align })
    } else {
        Ok(())
    }
}

fn le_bits(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Extends a `bits`-wide memory value to the value type `ty`.
fn extend(raw: u64, bits: u32, signed: bool, ty: Type) -> u64 {
    let v = if signed && bits < 64 {
        (((raw << (64 - bits)) as i64) >> (64 - bits)) as u64
    } else {
        raw
    };
    v & ty.mask()
}
