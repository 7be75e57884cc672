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
//! canonical rule (NaN in, their canonical NaN out), `fcmp` (its result
//! depends on whether an operand is a NaN, not on which), and same-width
//! bitcasts whose results only qualifying consumers read (the lifters'
//! register round trip). Both sides without
//! the flags result (the exception flags of a quiet NaN are the same either
//! way, but a flags-producing operation is left as lifted). Nothing else
//! changes: no instruction, block or operand, so every engine runs the same
//! lanes through the same blocks with the same memory effects and faults.

use cranelift_entity::SecondaryMap;

use crate::entities::{Inst, Value};
use crate::float_mode::{FloatMode, NanMode};
use crate::inst::{CastOp, FBinOp, InstKind};
use crate::kernel::Kernel;
use crate::verify::{VerifyError, verify};

/// Relaxes the canonical-NaN rule of results only qualifying consumers
/// read (see the module documentation); returns how many. Returns the
/// verifier's error, with `kernel` untouched, if the input does not verify.
pub fn relax_canonical_nan(kernel: &mut Kernel) -> Result<usize, VerifyError> {
    verify(kernel)?;
    let absorbed = absorbed_values(kernel);
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
        if !absorbed[r] {
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

/// Values that are read, and only by qualifying consumers or by same-width
/// bitcasts whose results are (lifters keep float values in integer
/// registers: `bitcast.f32.i32` then `bitcast.i32.f32` between operations).
/// A value nobody reads is dead code's business, not this pass's.
fn absorbed_values(kernel: &Kernel) -> SecondaryMap<Value, bool> {
    // Every reader of every value: the reading instruction, or None for a
    // terminator.
    let mut readers: SecondaryMap<Value, Vec<Option<Inst>>> = SecondaryMap::new();
    for block in kernel.blocks.values() {
        for &inst in &block.insts {
            for &a in &kernel.insts[inst].args {
                readers[a].push(Some(inst));
            }
        }
        for v in block.term.iter().flat_map(|t| t.uses()) {
            readers[v].push(None);
        }
    }
    let bitcast_result = |inst: Inst| -> Option<Value> {
        let data = &kernel.insts[inst];
        match (&data.kind, data.args.as_slice(), data.results.as_slice()) {
            (
                InstKind::Cast {
                    op: CastOp::Bitcast,
                    ..
                },
                &[a],
                &[r],
            ) if kernel.value_type(a).bits() == kernel.value_type(r).bits() => Some(r),
            _ => None,
        }
    };
    // Grows to a fixpoint: a bitcast chain is absorbed once its end is.
    let mut absorbed: SecondaryMap<Value, bool> = SecondaryMap::new();
    loop {
        let mut changed = false;
        for (v, rs) in readers.iter() {
            if absorbed[v] || rs.is_empty() {
                continue;
            }
            let all = rs.iter().all(|r| match *r {
                Some(i) if absorbs_nan(&kernel.insts[i].kind) => true,
                Some(i) => bitcast_result(i).is_some_and(|b| absorbed[b]),
                None => false,
            });
            if all {
                absorbed[v] = true;
                changed = true;
            }
        }
        if !changed {
            return absorbed;
        }
    }
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
