//! The exact per-lane meaning of every pure instruction, on raw bit patterns.
//! This module *defines* wavejit's semantics: the interpreter calls it directly
//! and the JIT either calls it (host helpers) or inlines code proven identical by
//! the differential tests.
//!
//! Representation: a value of type `T` travels in a `u64` holding its bits
//! zero-extended (`i1` is 0 or 1, `f32` its IEEE bits in the low 32 bits).

pub mod atomic;
pub mod wave;

use crate::inst::InstKind;
use crate::types::Type;

/// Evaluates a pure instruction (everything except builtins, memory, cross-lane
/// operations, barriers, fences and traps) for one lane. `args` are the argument
/// bits, `arg_tys` their types; results are written to `out` (one slot per result).
/// Returns false for kinds that are not pure (then `out` is untouched).
pub fn eval_pure(kind: &InstKind, arg_tys: &[Type], args: &[u64], out: &mut [u64]) -> bool {
    let _ = (kind, arg_tys, args, out);
    false
}
