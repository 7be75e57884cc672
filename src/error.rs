//! The one error type of the [`Device`](crate::Device) facade.

#![warn(missing_docs)]

use std::fmt;

use crate::frontend::rv32::lift::TrapSite;
use crate::frontend::{agx, ir3, rv32};
use crate::ir::{Fault, FaultKind};
use crate::runtime::MemError;

use crate::device::Isa;

/// Everything a [`Device`](crate::Device) call can fail with. Each variant
/// that wraps another crate's error keeps it as its [`source`](std::error::Error::source).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// ir3 code that does not lift (an undecodable or unsupported word, named
    /// with its instruction index and word).
    #[error("{}", prefixed("ir3", .0))]
    Ir3(#[from] ir3::lift::LiftError),
    /// AGX code that does not lift (its message names the bytes and the pc).
    #[error("{0}")]
    Agx(#[from] agx::lift::LiftError),
    /// An RV32 program that cannot be lifted at all (misaligned entry, too large).
    #[error("{}", prefixed("rv32", .0))]
    Rv32(#[from] rv32::lift::LiftError),
    /// An RV32 ELF file that does not parse.
    #[error("rv32 ELF: {0}")]
    Elf(#[from] rv32::ElfError),
    /// IR text that does not parse (`line:col: message`).
    #[error("IR text: {0}")]
    Parse(#[from] crate::ir::text::ParseError),
    /// A kernel the IR verifier rejects.
    #[error("IR verifier: {0}")]
    Verify(#[from] crate::ir::verify::VerifyError),
    /// Device memory: allocation failed, or a buffer access outside its allocation.
    #[error("device memory: {0}")]
    Memory(#[from] MemError),
    /// The kernel faulted while running (memory, trap, watchdog, time budget),
    /// or the dispatch was refused before any lane ran.
    #[error("{0}")]
    Fault(#[from] Box<KernelFault>),
    /// Code whose length is not a whole number of instructions.
    #[error("{isa}: {len} code bytes are not a whole number of {unit}-byte instructions")]
    CodeLength {
        /// The ISA of the code.
        isa: Isa,
        /// Bytes given.
        len: usize,
        /// Bytes per instruction word.
        unit: usize,
    },
    /// Kernel arguments larger than the ISA's argument space.
    #[error("{isa}: {len} bytes of kernel arguments exceed the {limit}-byte {space}")]
    ArgsTooLarge {
        /// The ISA of the program.
        isa: Isa,
        /// Bytes of arguments given.
        len: usize,
        /// Most bytes the space holds.
        limit: usize,
        /// Where the arguments go.
        space: &'static str,
    },
    /// An RV32 launch with arguments for a program loaded without
    /// [`Rv32Options::args_at`](crate::Rv32Options::args_at).
    #[error(
        "rv32: the launch has {len} bytes of arguments but the program has no argument block \
         (Rv32Options::args_at)"
    )]
    NoArgBlock {
        /// Bytes of arguments given.
        len: usize,
    },
    /// A load option the ISA does not support.
    #[error("{isa}: {what}")]
    InvalidOption {
        /// The ISA of the program.
        isa: Isa,
        /// What is wrong with which option.
        what: String,
    },
    /// An RV32 image whose segments would occupy more memory than allowed.
    #[error("rv32: the image's segments occupy {bytes} bytes, over the limit of {limit}")]
    ImageTooLarge {
        /// Bytes the segments occupy.
        bytes: u64,
        /// Most bytes allowed.
        limit: u64,
    },
    /// A grid or block with a zero dimension.
    #[error("{what} {dims:?} has a zero dimension")]
    ZeroDimension {
        /// "grid" or "block".
        what: &'static str,
        /// The dimensions given.
        dims: [u32; 3],
    },
    /// The device's buffer window has no room for an allocation.
    #[error(
        "no room for {bytes} bytes in the device's buffer window ({used} of {window} bytes in use)"
    )]
    OutOfMemory {
        /// Bytes requested.
        bytes: u64,
        /// Bytes allocated now.
        used: u64,
        /// Size of the window.
        window: u64,
    },
    /// A read or write past the end of a buffer.
    #[error(
        "{what} of {len} bytes at offset {offset} runs past the end of the {size}-byte buffer at {addr:#x}"
    )]
    OutOfBounds {
        /// "read" or "write".
        what: &'static str,
        /// The buffer's device address.
        addr: u64,
        /// The buffer's size in bytes.
        size: u64,
        /// Offset of the access in the buffer.
        offset: u64,
        /// Bytes of the access.
        len: u64,
    },
    /// A buffer or program used with a device other than the one that made it,
    /// or a buffer already freed.
    #[error("{what} does not belong to this device (or was freed)")]
    ForeignHandle {
        /// "buffer" or "program".
        what: &'static str,
    },
}

/// `isa: message`, unless the message already names the ISA (said once).
fn prefixed(isa: &str, e: &dyn std::error::Error) -> String {
    let msg = e.to_string();
    if msg.contains(isa) {
        msg
    } else {
        format!("{isa}: {msg}")
    }
}

impl From<KernelFault> for Error {
    fn from(f: KernelFault) -> Error {
        Error::Fault(Box::new(f))
    }
}

impl Error {
    /// The kernel fault, if this error is one (the kernel ran, or was refused
    /// at dispatch, and reported a [`Fault`]).
    pub fn as_fault(&self) -> Option<&KernelFault> {
        match self {
            Error::Fault(f) => Some(f),
            _ => None,
        }
    }
}

/// A kernel fault as the engine reported it, with the guest-level reading of
/// it where the ISA has one (an RV32 trap names its cause, pc and word).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFault {
    /// The engine's fault: kernel, IR position, guest pc, lane and kind.
    pub fault: Fault,
    /// The ISA of the program that faulted.
    pub isa: Isa,
    /// For an RV32 trap: the trap site (cause, pc, instruction word).
    pub trap: Option<TrapSite>,
    /// For an AGX lifter trap: the instruction and what the trap means.
    pub agx_trap: Option<agx::lift::TrapSite>,
}

impl KernelFault {
    /// Whether the fault is an access outside every allocation (or otherwise
    /// refused by the checked memory).
    pub fn is_memory(&self) -> bool {
        matches!(self.fault.kind, FaultKind::Memory { .. })
    }

    /// Whether the lane ran past the step limit (the watchdog).
    pub fn is_watchdog(&self) -> bool {
        matches!(self.fault.kind, FaultKind::Watchdog { .. })
            || self
                .trap
                .is_some_and(|t| matches!(t.cause, rv32::lift::TrapCause::CycleLimit { .. }))
    }
}

impl fmt::Display for KernelFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The IR only knows "trap N"; the site says what the guest did.
        let site: Option<&dyn fmt::Display> = match (&self.trap, &self.agx_trap) {
            (Some(site), _) => Some(site),
            (None, Some(site)) => Some(site),
            (None, None) => None,
        };
        match (site, &self.fault.kind) {
            (Some(site), FaultKind::Trap { .. }) => write!(
                f,
                "{}: kernel `{}` faulted: {site}, lane {}",
                self.isa, self.fault.kernel, self.fault.lane
            ),
            _ => write!(f, "{}: {}", self.isa, self.fault),
        }
    }
}

impl std::error::Error for KernelFault {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.fault)
    }
}
