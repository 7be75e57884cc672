//! The exact per-lane meaning of every pure instruction, on raw bit patterns.
//! This module *defines* wavejit's semantics: the interpreter calls it directly
//! and the JIT either calls it (host helpers) or inlines code proven identical by
//! the differential tests.
//!
//! Representation: a value of type `T` travels in a `u64` holding its bits
//! zero-extended (`i1` is 0 or 1, `f32` its IEEE bits in the low 32 bits).
//!
//! One module per rule:
//! - [`int`]: integer ops, comparisons, casts, bit fields;
//! - [`flush`]: flush-to-zero keeping the sign; [`nan`]: which NaN a result is;
//!   [`rules`]: the fixed order of float rules around an instruction;
//! - [`rounding`]: rounding an exact value to a format with IEEE flags;
//!   [`ieee`]: correctly rounded + - * / sqrt fma; [`arith`]: those with the rules
//!   plus typed fast entry points; [`error_free`]: f32 directed rounding and flags
//!   from host results; [`integral`]: floor/ceil/trunc/nearest;
//! - [`minmax`], [`compare`], [`fclass`];
//! - [`convert`]: float <-> float (incl. bf16, fp8, fp4), float <-> int;
//! - [`special`]: rcp, rsqrt, exp2, log2, sin, cos; [`pow_fixup`]: AGX pow fix-up;
//! - [`tiny_before_rounding`]: the flush of results tiny before rounding (AGX);
//! - [`format`](mod@format): bit layouts of every `FloatFormat` and unpacking;
//! - [`atomic`]: atomic read-modify-write values; [`wave`]: cross-lane results.
//!
//! Flags words use RISC-V `fflags` bits (`crate::float_mode::fflags`). A function
//! taking a `FloatMode` reports exact flags when `mode.flags` is set; otherwise its
//! flags word is not meaningful (fast paths return 0) and `eval_pure` does not
//! write it. Functions taking only a `Round` always report exact flags.

pub mod arith;
pub mod atomic;
pub mod compare;
pub mod convert;
pub mod error_free;
mod eval;
pub mod fclass;
pub mod flush;
pub mod format;
pub mod ieee;
pub mod int;
pub mod integral;
pub mod minmax;
pub mod nan;
pub mod pow_fixup;
pub mod rounding;
pub mod rules;
pub mod special;
pub mod tiny_before_rounding;
pub mod wave;

use crate::inst::InstKind;
use crate::types::Type;

/// Evaluates a pure instruction (everything except builtins, memory, cross-lane
/// operations, barriers, fences and traps) for one lane. `args` are the argument
/// bits, `arg_tys` their types; results are written to `out` (one slot per result,
/// as `InstKind::signature` gives them: the value, then the flags word when
/// `mode.flags`). Returns false for kinds that are not pure, and for argument or
/// output slices too short for the kind (then `out` is untouched).
pub fn eval_pure(kind: &InstKind, arg_tys: &[Type], args: &[u64], out: &mut [u64]) -> bool {
    // Host float fast paths inside need IEEE behaviour.
    let _ieee = crate::host_float_env::Ieee::enter();
    eval::eval_pure(kind, arg_tys, args, out)
}
