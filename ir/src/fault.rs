//! Faults: how a kernel's bad behaviour is reported (never a host crash).

use std::fmt;

use crate::dispatch::{BudgetExceeded, DispatchError};
use crate::entities::{Block, Inst};
use crate::inst::AddrSpace;
use crate::memory::AccessCause;

/// Which lane faulted.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct LaneId {
    pub workgroup: [u32; 3],
    pub local: [u32; 3],
}

impl fmt::Display for LaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [wx, wy, wz] = self.workgroup;
        let [lx, ly, lz] = self.local;
        write!(f, "workgroup ({wx},{wy},{wz}) local ({lx},{ly},{lz})")
    }
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    Memory {
        space: AddrSpace,
        addr: u64,
        size: u32,
        write: bool,
        cause: AccessCause,
    },
    /// A lane ran more than the dispatch's step limit.
    Watchdog {
        limit: u64,
    },
    Trap {
        code: u32,
    },
    /// The dispatch was refused before any lane ran ([`Dispatch::check`]).
    ///
    /// [`Dispatch::check`]: crate::Dispatch::check
    Dispatch(DispatchError),
    /// The dispatch ran past its time budget or was cancelled; checked before
    /// each workgroup or batch, the fault names the first lane of the first
    /// workgroup not started ([`Budget`]).
    ///
    /// [`Budget`]: crate::dispatch::Budget
    Budget(BudgetExceeded),
}

impl fmt::Display for FaultKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultKind::Memory {
                space,
                addr,
                size,
                write,
                cause,
            } => write!(
                f,
                "{} of {size} bytes at {} address {addr:#x} refused: {cause}",
                if *write { "write" } else { "read" },
                space.name()
            ),
            FaultKind::Watchdog { limit } => {
                write!(f, "watchdog: lane ran more than {limit} steps")
            }
            // The engines' own code says why; a guest's codes are the
            // frontend's to explain (e.g. `agx::lift::describe_fault`).
            FaultKind::Trap {
                code: crate::interp::MALFORMED_TRAP,
            } => write!(
                f,
                "trap {:#x}: the kernel is malformed (it fails the verifier) or its lane \
                 state could not be allocated",
                crate::interp::MALFORMED_TRAP
            ),
            FaultKind::Trap { code } => write!(f, "trap {code:#x}"),
            FaultKind::Dispatch(e) => write!(f, "dispatch refused: {e}"),
            FaultKind::Budget(e) => write!(f, "{e}"),
        }
    }
}

/// A fault with its location: kernel, IR position, guest pc, lane.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Fault {
    pub kernel: String,
    pub block: Block,
    /// The faulting instruction (`None` when the block's terminator or the block
    /// entry is the place, e.g. the watchdog).
    pub inst: Option<Inst>,
    pub guest_pc: Option<u64>,
    pub lane: LaneId,
    pub kind: FaultKind,
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // No lane ran, so there is no place to name.
        if let FaultKind::Dispatch(e) = &self.kind {
            return write!(f, "kernel `{}`: dispatch refused: {e}", self.kernel);
        }
        // No lane of the named workgroup started either.
        if let FaultKind::Budget(e) = &self.kind {
            let [x, y, z] = self.lane.workgroup;
            return write!(
                f,
                "kernel `{}` stopped before workgroup ({x},{y},{z}): {e}",
                self.kernel
            );
        }
        write!(f, "kernel `{}` faulted at ", self.kernel)?;
        if let Some(pc) = self.guest_pc {
            write!(f, "pc {pc:#x} ")?;
        }
        write!(f, "({}", self.block)?;
        if let Some(i) = self.inst {
            write!(f, " {i}")?;
        }
        write!(f, "), lane {}: {}", self.lane, self.kind)
    }
}

impl std::error::Error for Fault {}
