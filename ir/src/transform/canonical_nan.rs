//! Canonical NaN where it can be seen, not at every step.
//!
//! RISC-V, AGX and ir3 arithmetic write a canonical NaN (`nan=0x7fc00000`),
//! so lifters give every float operation that rule. Inside a chain of
//! arithmetic it is invisible: an operation whose result only feeds
//! operations that give a NaN whenever an operand is one, and make that NaN
//! their own canonical pattern, hands them the same non-NaN values under
//! either rule and a NaN they replace. Such a result keeps IEEE propagation
//! instead ([`NanMode::Propagate`]); the chain's last operation, whose value
//! is stored, compared for its bits or passed on, keeps the canonical rule.
//! Engines then leave the NaN test off the chain's critical path (the JIT's
//! blend per operation doubled the latency of a chain of dependent `fmul` /
//! `fadd`).
//!
//! Consumers that qualify: `fadd`, `fsub`, `fmul`, `fdiv` and `fma` with a
//! canonical rule (NaN in, their canonical NaN out), and `fcmp` (its result
//! depends on whether an operand is a NaN, not on which). Both sides without
//! the flags result (the exception flags of a quiet NaN are the same either
//! way, but a flags-producing operation is left as lifted). Nothing else
//! changes: no instruction, block or operand, so every engine runs the same
//! lanes through the same blocks with the same memory effects and faults.

use cranelift_entity::SecondaryMap;

use crate::entities::Value;
use crate::float_mode::{FloatMode, NanMode};
use crate::inst::{FBinOp, InstKind};
use crate::kernel::Kernel;
use crate::verify::{VerifyError, verify};

/// Relaxes the canonical-NaN rule of results only qualifying consumers
/// read (see the module documentation); returns how many. Returns the
/// verifier's error, with `kernel` untouched, if the input does not verify.
pub fn relax_canonical_nan(kernel: &mut Kernel) -> Result<usize, VerifyError> {
    verify(kernel)?;
    // Per value: how many operands and terminator uses read it, and whether
    // one of them is not a qualifying consumer.
    let mut readers: SecondaryMap<Value, u32> = SecondaryMap::new();
    let mut seen_elsewhere: SecondaryMap<Value, bool> = SecondaryMap::new();
    for block in kernel.blocks.values() {
        for &inst in &block.insts {
            let data = &kernel.insts[inst];
            let absorbs = absorbs_nan(&data.kind);
            for &a in &data.args {
                readers[a] += 1;
                seen_elsewhere[a] |= !absorbs;
            }
        }
        for v in block.term.iter().flat_map(|t| t.uses()) {
            readers[v] += 1;
            seen_elsewhere[v] = true;
        }
    }
    let placed: Vec<_> = kernel
        .blocks
        .values()
        .flat_map(|b| b.insts.iter().copied())
        .collect();
    let mut relaxed = 0;
    for inst in placed {
        let Some(&r) = kernel.insts[inst].results.first() else {
            continue;
        };
        // A result nobody reads is dead code's business, not this pass's.
        if seen_elsewhere[r] || readers[r] == 0 {
            continue;
        }
        if let Some(mode) = arithmetic_mode_mut(&mut kernel.insts[inst].kind)
            && let NanMode::Canonical(_) = mode.nan
            && !mode.flags
        {
            mode.nan = NanMode::Propagate;
            relaxed += 1;
        }
    }
    Ok(relaxed)
}

/// The mode of an operation that gives a NaN whenever an operand is one.
fn arithmetic_mode_mut(kind: &mut InstKind) -> Option<&mut FloatMode> {
    match kind {
        InstKind::FBinary {
            op: FBinOp::Add | FBinOp::Sub | FBinOp::Mul | FBinOp::Div,
            mode,
        } => Some(mode),
        InstKind::Fma { mode } => Some(mode),
        _ => None,
    }
}

/// Whether an operation with operand NaN gives a result that does not
/// depend on which NaN it was.
fn absorbs_nan(kind: &InstKind) -> bool {
    match kind {
        InstKind::FBinary {
            op: FBinOp::Add | FBinOp::Sub | FBinOp::Mul | FBinOp::Div,
            mode,
        } => matches!(mode.nan, NanMode::Canonical(_)) && !mode.flags,
        InstKind::Fma { mode } => matches!(mode.nan, NanMode::Canonical(_)) && !mode.flags,
        InstKind::Fcmp { mode, .. } => !mode.flags,
        _ => false,
    }
}
