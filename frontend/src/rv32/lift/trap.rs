//! Why a lifted kernel traps: every `Trap { code }` the lifter emits indexes a
//! [`TrapSite`] that names the cause, the guest pc and (when there is one) the word.

use std::fmt;

use crate::rv32::DecodeErrorKind;

/// The device-level cause of a trap (all are KERNEL_FAULT on the device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrapCause {
    /// The word at `pc` is not an instruction the device executes.
    IllegalInstruction(DecodeErrorKind),
    /// `pc` lies outside the code memory (outside VRAM).
    FetchFault,
    /// A jump or branch at `pc` goes to `target`, which is not 4-byte aligned.
    MisalignedTarget { target: u32 },
    /// A `jalr` at `pc` computed a target that is not a known instruction start
    /// (or not aligned).
    UnknownJumpTarget,
    /// A jump at `pc` goes to `target`, outside the code memory (found by the
    /// runtime when a lane left to a target the translation did not know).
    JumpOutsideCode { target: u32 },
    /// `ecall` at `pc` (the device defines no environment calls).
    Ecall,
    /// A `dyn`-rounding instruction at `pc` ran while `fcsr.frm` held 5, 6 or 7.
    InvalidFrm,
    /// The lane retired more instructions than the cycle limit.
    CycleLimit { limit: u32 },
}

impl fmt::Display for TrapCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TrapCause::IllegalInstruction(kind) => write!(f, "illegal instruction ({kind})"),
            TrapCause::FetchFault => f.write_str("instruction fetch outside code memory"),
            TrapCause::MisalignedTarget { target } => {
                write!(f, "jump to misaligned target {target:#010x}")
            }
            TrapCause::UnknownJumpTarget => {
                f.write_str("jalr to a target that is not a known instruction start")
            }
            TrapCause::JumpOutsideCode { target } => {
                write!(f, "jump to {target:#010x}, outside code memory")
            }
            TrapCause::Ecall => f.write_str("ecall (not defined by the device)"),
            TrapCause::InvalidFrm => f.write_str("dynamic rounding with invalid frm (5..7)"),
            TrapCause::CycleLimit { limit } => {
                write!(
                    f,
                    "cycle limit: lane retired more than {limit} instructions"
                )
            }
        }
    }
}

/// One place that can trap: the trap code of a lifted kernel is its index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrapSite {
    pub cause: TrapCause,
    /// Guest pc of the instruction (for the cycle limit: the last instruction of
    /// the block whose end found the lane over the limit).
    pub pc: Option<u32>,
    /// The instruction word at `pc`, when it could be fetched.
    pub word: Option<u32>,
}

impl fmt::Display for TrapSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.cause)?;
        if let Some(pc) = self.pc {
            write!(f, " at pc {pc:#010x}")?;
        }
        if let Some(w) = self.word {
            write!(f, " (word {w:#010x})")?;
        }
        Ok(())
    }
}
