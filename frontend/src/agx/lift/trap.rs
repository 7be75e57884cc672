//! A trap of a lifted AGX kernel in guest terms: the engines report only the
//! IR's `trap <code>` and the guest pc; this names the instruction there and
//! what the code means.

use std::fmt;

use wavejit_ir::{Fault, FaultKind};

use super::trap_code;

/// Why an AGX lane trapped, with the instruction it was at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrapSite {
    /// The trap code (one of [`trap_code`]).
    pub code: u32,
    /// The guest pc the fault names.
    pub pc: u64,
    /// The instruction at `pc` as the disassembler prints it, or `None` when
    /// `pc` is past the end of the program (or does not decode).
    pub text: Option<String>,
}

impl TrapSite {
    /// The site of `fault` in `code` (the program that was lifted), if the
    /// fault is one of the lifter's traps and names a pc.
    pub fn of(code: &[u8], fault: &Fault) -> Option<TrapSite> {
        let FaultKind::Trap { code: trap } = fault.kind else {
            return None;
        };
        meaning(trap)?;
        let pc = fault.guest_pc?;
        let text = usize::try_from(pc)
            .ok()
            .and_then(|at| code.get(at..))
            .and_then(|rest| crate::agx::decode(rest, pc).ok())
            .map(|(instr, _)| instr.to_string());
        Some(TrapSite {
            code: trap,
            pc,
            text,
        })
    }
}

/// What a lifter trap code means, or `None` for a code the lifter never emits.
pub fn meaning(code: u32) -> Option<&'static str> {
    match code {
        trap_code::TRAP => Some("the program executed `trap`"),
        trap_code::FELL_OFF_END => Some("execution ran past the last instruction without `stop`"),
        trap_code::BAD_TARGET => Some(
            "`ret`/`call` to an address that is not the start of an instruction \
             the program can branch to",
        ),
        _ => None,
    }
}

impl fmt::Display for TrapSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.text {
            Some(text) => write!(f, "`{text}` at pc {:#x}", self.pc)?,
            None => write!(f, "pc {:#x} (past the end of the program)", self.pc)?,
        }
        let why = meaning(self.code).unwrap_or("unknown trap");
        write!(f, ": {why} (trap {:#x})", self.code)
    }
}

/// `fault` as text, in guest terms when it is one of the lifter's traps
/// (the instruction and what the trap means instead of `trap <code>`).
pub fn describe_fault(code: &[u8], fault: &Fault) -> String {
    match TrapSite::of(code, fault) {
        Some(site) => format!(
            "kernel `{}` faulted: {site}, lane {}",
            fault.kernel, fault.lane
        ),
        None => fault.to_string(),
    }
}
