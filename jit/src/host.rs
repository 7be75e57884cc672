//! What the Rust helpers of a running batch see of the dispatch (the kernel,
//! its plan, the global memory and its region snapshot), and the fault an
//! access refused at an address is, derived as the interpreter derives it.
//! Both cores' runners and helpers use it; it names no runner.

use std::cell::Cell;
use std::ptr::NonNull;

use wavejit_ir::interp::MALFORMED_TRAP;
use wavejit_ir::{
    Access, AccessCause, AddrSpace, Fault, FaultKind, GlobalMemory, Inst, InstKind, Kernel, Region,
    Type,
};

use crate::plan::Plan;

/// What host helpers need while a batch runs (one per worker thread).
pub struct HostCtx<'a> {
    pub kernel: &'a Kernel,
    /// Argument types of every instruction, by instruction index.
    pub arg_tys: &'a [Vec<Type>],
    pub plan: &'a Plan,
    pub memory: &'a dyn GlobalMemory,
    regions: Option<Vec<Region>>,
    last: Cell<usize>,
}

impl<'a> HostCtx<'a> {
    pub fn new(
        kernel: &'a Kernel,
        arg_tys: &'a [Vec<Type>],
        plan: &'a Plan,
        memory: &'a dyn GlobalMemory,
    ) -> HostCtx<'a> {
        HostCtx {
            kernel,
            arg_tys,
            plan,
            memory,
            regions: memory.regions(),
            last: Cell::new(0),
        }
    }

    /// Host pointer of `len` bytes at `addr`: from the region snapshot when one
    /// contains the range (also returned, for the inline cache), else from
    /// `translate` (which also decides refusals).
    pub fn global_ptr(
        &self,
        addr: u64,
        len: u64,
        write: bool,
    ) -> Option<(NonNull<u8>, Option<Region>)> {
        if let Some(rs) = &self.regions {
            let fits = |r: &Region| {
                addr >= r.start
                    && addr - r.start <= r.len
                    && len <= r.len - (addr - r.start)
                    && (!write || r.writable)
            };
            let hit = match rs.get(self.last.get()) {
                Some(r) if fits(r) => Some(self.last.get()),
                _ => {
                    let i = rs.partition_point(|r| r.start <= addr);
                    i.checked_sub(1).filter(|&k| fits(&rs[k]))
                }
            };
            if let Some(k) = hit {
                self.last.set(k);
                let r = rs[k];
                // SAFETY: the region holds `len` bytes from `addr` (checked above)
                // and stays valid for the dispatch (`GlobalMemory::regions`).
                let p = unsafe { r.host.as_ptr().add((addr - r.start) as usize) };
                return NonNull::new(p).map(|p| (p, Some(r)));
            }
        }
        self.memory
            .translate(addr, len, access(write))
            .ok()
            .map(|p| (p, None))
    }
}

/// The lowest faulting lane so far: (linear workgroup * lanes + local index, fault).
pub type LaneFault = (u128, Fault);

/// The fault of instruction `inst` refused at `addr`, derived like the
/// interpreter: alignment first, then the range.
pub fn fault_kind(kernel: &Kernel, memory: &dyn GlobalMemory, inst: Inst, addr: u64) -> FaultKind {
    let (space, align, size, write) = match &kernel.insts[inst].kind {
        InstKind::Load(a) => (a.space, a.align, a.total_bytes(), false),
        InstKind::Store(a) => (a.space, a.align, a.total_bytes(), true),
        InstKind::Atomic { space, ty, .. } => (*space, ty.bytes(), ty.bytes(), true),
        InstKind::Trap { code } => return FaultKind::Trap { code: *code },
        _ => {
            return FaultKind::Trap {
                code: MALFORMED_TRAP,
            };
        }
    };
    let cause = if align > 1 && !addr.is_multiple_of(u64::from(align)) {
        AccessCause::Misaligned { align }
    } else if space == AddrSpace::Global {
        memory
            .translate(addr, u64::from(size), access(write))
            .err()
            .unwrap_or(AccessCause::OutOfBounds)
    } else {
        AccessCause::OutOfBounds
    };
    FaultKind::Memory {
        space,
        addr,
        size,
        write,
        cause,
    }
}

/// The access kind of a global load or store.
pub fn access(write: bool) -> Access {
    if write { Access::Write } else { Access::Read }
}
