//! FP32 flush rules dropped where they provably change nothing.
//!
//! GPU float rules (AGX FP32: flush subnormal inputs and results keeping the
//! sign, results judged tiny before rounding) are lifted onto every
//! operation, though most operands cannot be subnormal and most results
//! cannot be tiny: a constant is what it is, a flushed result is never
//! subnormal, and `x + 0.5` is either 0 or at least 2^-25 whatever `x` is.
//! Each flush is a mask, compare and blend per vector in the JIT (the
//! tiny-before-rounding rule one more test and a redo), so dropping the no-op
//! ones is most of the cost of a lifted float chain.
//!
//! The analysis gives every f32 value a lower bound `2^lo` on the magnitude
//! of its nonzero finite lanes and whether a lane may be `-0`:
//! - a constant knows both; a flushed result has `lo >= -126`;
//! - an exact sum `x + c` with a constant `|c| >= 2^e` (`e >= -125`) is 0
//!   or at least `2^(e-24)` in magnitude: either `|x| < |c|/2` and the sum
//!   exceeds `|c|/2`, or `|x| >= 2^(e-1)` and both are multiples of
//!   `2^(e-24)`; an exact zero sum is `+0` when rounding to nearest;
//! - an exact product is at least the product of the bounds;
//! - any sum or product of floats is a multiple of `2^-149`, so it rounds to
//!   zero only when it is zero, and a zero sum is `-0` only from two `-0`s;
//! - rounding (to nearest even, the only mode analysed) keeps a result at or
//!   above a power of two it is at or above.
//!
//! The rewrites, each exact for every operand value the bounds allow:
//! - an instruction whose f32 operands cannot be subnormal does not flush
//!   its inputs (`denorm_in` becomes `Preserve`: flushing is the identity);
//! - an add, subtract, multiply or fma whose exact result cannot be nonzero
//!   and below `2^-126` does not flush its result (neither rule can fire);
//! - `fma(a, 1.0, c)` is `fadd(a, c)` (one rounding of the same exact sum,
//!   the same first NaN operand), and `fma(a, b, +0)` is `fmul(a, b)` when
//!   the product cannot be `-0` (the only case where adding `+0` changes a
//!   product: it makes `-0` into `+0`);
//! - a product by a constant below 2 whose every reader adds a constant of
//!   at least `2^-96` to it does not flush its inputs: a subnormal factor
//!   makes the product smaller than `2^-124` flushed or not, and the sum
//!   rounds any such product away (`drop_swamped_flushes`).
//!
//! Instructions producing exception flags are left alone. Only instruction
//! kinds and modes change; every value keeps its bits except such a swamped
//! product, whose readers do. So every lane enters the same blocks and
//! performs the same memory effects with the same values.

use cranelift_entity::SecondaryMap;

use super::compact::compact;
use super::dead_code::{DeadCounts, remove_dead};
use super::private_slots::const_bits;
use crate::entities::{Inst, Value};
use crate::float_mode::{Denorm, FloatMode, Round};
use crate::inst::{FBinOp, InstKind};
use crate::kernel::Kernel;
use crate::types::Type;
use crate::verify::{VerifyError, verify};

/// What [`relax_float_rules`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FloatRuleStats {
    /// Instructions whose input flush went.
    pub inputs: usize,
    /// Instructions whose result flush went.
    pub results: usize,
    /// `fma` turned into `fadd` or `fmul`.
    pub fmas: usize,
    /// Input flushes of products by a small constant whose result only
    /// feeds additions of a large constant (see `drop_swamped_flushes`).
    pub swamped: usize,
    pub dead: DeadCounts,
}

/// Smallest normal exponent of f32.
const MIN_NORMAL_EXP: i32 = -126;
/// Exponent of the smallest f32 subnormal: every f32 is a multiple of it.
const MIN_EXP: i32 = -149;
/// A bound no finite nonzero f32 reaches (zeros, infinities and NaN only).
const NO_FINITE: i32 = 128;
const ONE: u32 = 0x3f80_0000;
const SIGN: u32 = 0x8000_0000;

/// What every lane of an f32 value satisfies.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Mag {
    /// Nonzero finite lanes have a magnitude of at least `2^lo`.
    lo: i32,
    /// Some lane may be `-0`.
    neg_zero: bool,
}

impl Mag {
    const ANY: Mag = Mag {
        lo: MIN_EXP,
        neg_zero: true,
    };

    fn of_bits(bits: u32) -> Mag {
        let exp = ((bits >> 23) & 0xff) as i32;
        let frac = bits & 0x7f_ffff;
        let lo = match exp {
            0xff => NO_FINITE,
            0 if frac == 0 => NO_FINITE,
            // Subnormal: its leading fraction bit.
            0 => MIN_EXP + (31 - frac.leading_zeros() as i32),
            _ => exp - 127,
        };
        Mag {
            lo,
            neg_zero: bits == SIGN,
        }
    }

    fn may_be_subnormal(self) -> bool {
        self.lo < MIN_NORMAL_EXP
    }

    /// After the input rule `denorm`.
    fn flushed_in(self, denorm: Denorm) -> Mag {
        if denorm == Denorm::Preserve || !self.may_be_subnormal() {
            return self;
        }
        // A negative subnormal becomes -0.
        Mag {
            lo: MIN_NORMAL_EXP,
            neg_zero: true,
        }
    }

    fn join(self, other: Mag) -> Mag {
        Mag {
            lo: self.lo.min(other.lo),
            neg_zero: self.neg_zero || other.neg_zero,
        }
    }
}

/// An f32 operand as the operation sees it (after its input rule).
#[derive(Copy, Clone)]
struct Operand {
    mag: Mag,
    /// The constant bits, already flushed.
    bits: Option<u32>,
}

/// Relaxes the flush rules of `kernel` (see the module documentation).
/// Returns the verifier's error, with `kernel` untouched, if the input does
/// not verify.
pub fn relax_float_rules(kernel: &mut Kernel) -> Result<FloatRuleStats, VerifyError> {
    verify(kernel)?;
    let placed: Vec<Inst> = kernel
        .blocks
        .values()
        .flat_map(|b| b.insts.iter().copied())
        .collect();
    let mut facts: SecondaryMap<Value, Mag> = SecondaryMap::with_default(Mag::ANY);
    // Values not yet seen read as ANY, which is sound; a second round gives
    // the operands placed after their readers (other blocks) their facts.
    for _ in 0..2 {
        for &inst in &placed {
            if let Some((r, mag)) = result_fact(kernel, inst, &facts) {
                facts[r] = mag;
            }
        }
    }
    let mut stats = FloatRuleStats::default();
    for &inst in &placed {
        rewrite(kernel, inst, &facts, &mut stats);
    }
    // Last: it changes values (inside what their readers absorb), which the
    // facts above do not describe.
    stats.swamped = drop_swamped_flushes(kernel, &placed);
    // The `1.0` and `+0` operands of the fmas rewritten.
    if stats.fmas > 0 {
        remove_dead(kernel, &mut stats.dead);
        compact(kernel);
    }
    Ok(stats)
}

/// The instruction's f32 result and what it satisfies, when known better
/// than [`Mag::ANY`].
fn result_fact(
    kernel: &Kernel,
    inst: Inst,
    facts: &SecondaryMap<Value, Mag>,
) -> Option<(Value, Mag)> {
    let data = &kernel.insts[inst];
    let &[r] = data.results.as_slice() else {
        return None;
    };
    if kernel.value_type(r) != Type::F32 {
        return None;
    }
    // A result the mode flushes is 0 or normal (saturating after the flush
    // keeps it so; which zero a saturation gives is not assumed).
    let flushed = mode_of(&data.kind)
        .filter(|m| m.denorm_out != Denorm::Preserve)
        .map(|_| Mag {
            lo: MIN_NORMAL_EXP,
            neg_zero: true,
        });
    let mag = match &data.kind {
        InstKind::Const { bits, .. } => Mag::of_bits(*bits as u32),
        InstKind::Select => facts[data.args[1]].join(facts[data.args[2]]),
        kind => match (exact_fact(kernel, inst, facts), mode_of(kind)) {
            (Some((exact, rounds_to_zero)), Some(mode)) => {
                let lo = exact.lo.clamp(MIN_EXP, NO_FINITE);
                let rounded = Mag {
                    // Saturation makes large values 1.0.
                    lo: if mode.sat { lo.min(0) } else { lo },
                    neg_zero: exact.neg_zero || rounds_to_zero || mode.sat,
                };
                match flushed {
                    Some(f) if exact.lo < MIN_NORMAL_EXP => f,
                    _ => rounded,
                }
            }
            _ => flushed?,
        },
    };
    Some((r, mag))
}

/// The exact (unrounded) result of an f32 add, subtract, multiply or fma
/// rounded to nearest even without flags, and whether a nonzero exact result
/// may round to zero.
fn exact_fact(
    kernel: &Kernel,
    inst: Inst,
    facts: &SecondaryMap<Value, Mag>,
) -> Option<(Mag, bool)> {
    let data = &kernel.insts[inst];
    let mode = analysed_mode(kernel, inst)?;
    let op = |k: usize| operand(kernel, data.args[k], mode.denorm_in, facts);
    let exact = match &data.kind {
        InstKind::FBinary {
            op: FBinOp::Add, ..
        } => sum(op(0), op(1)),
        InstKind::FBinary {
            op: FBinOp::Sub, ..
        } => sum(op(0), negated(op(1))),
        InstKind::FBinary {
            op: FBinOp::Mul, ..
        } => product(op(0), op(1)),
        InstKind::Fma { .. } => {
            let (a, b, c) = (op(0), op(1), op(2));
            if a.bits == Some(ONE) {
                sum(b, c)
            } else if b.bits == Some(ONE) {
                sum(a, c)
            } else if c.bits == Some(0) {
                // A zero product plus +0 is +0.
                Mag {
                    neg_zero: false,
                    ..product(a, b)
                }
            } else if c.bits == Some(SIGN) {
                product(a, b)
            } else {
                return None;
            }
        }
        _ => return None,
    };
    Some((exact, exact.lo < MIN_EXP))
}

/// The mode of an f32 instruction this pass reasons about.
fn analysed_mode(kernel: &Kernel, inst: Inst) -> Option<FloatMode> {
    let data = &kernel.insts[inst];
    let mode = match &data.kind {
        InstKind::FBinary { mode, .. } | InstKind::Fma { mode } => *mode,
        _ => return None,
    };
    let all_f32 = data
        .args
        .iter()
        .chain(&data.results)
        .all(|&v| kernel.value_type(v) == Type::F32);
    (all_f32 && !mode.flags && mode.round == Round::NearestEven).then_some(mode)
}

fn operand(kernel: &Kernel, v: Value, denorm: Denorm, facts: &SecondaryMap<Value, Mag>) -> Operand {
    let bits = const_bits(kernel, v).map(|b| {
        let b = b as u32;
        let subnormal = b & 0x7f80_0000 == 0;
        if denorm != Denorm::Preserve && subnormal {
            b & SIGN
        } else {
            b
        }
    });
    Operand {
        mag: bits.map_or(facts[v].flushed_in(denorm), Mag::of_bits),
        bits,
    }
}

fn negated(x: Operand) -> Operand {
    match x.bits {
        Some(b) => Operand {
            mag: Mag::of_bits(b ^ SIGN),
            bits: Some(b ^ SIGN),
        },
        // Any +0 lane becomes -0.
        None => Operand {
            mag: Mag {
                neg_zero: true,
                ..x.mag
            },
            bits: None,
        },
    }
}

/// The exact sum (see the module documentation).
fn sum(a: Operand, b: Operand) -> Mag {
    // A finite constant of at least 2^-125 (its half is normal).
    let bound = |c: Operand| {
        let exp = ((c.bits? >> 23) & 0xff) as i32 - 127;
        (MIN_NORMAL_EXP + 1..NO_FINITE)
            .contains(&exp)
            .then_some(exp - 24)
    };
    let lo = match (bound(a), bound(b)) {
        (Some(x), Some(y)) => x.max(y),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => MIN_EXP,
    };
    Mag {
        lo,
        neg_zero: a.mag.neg_zero && b.mag.neg_zero,
    }
}

fn product(a: Operand, b: Operand) -> Mag {
    Mag {
        lo: a.mag.lo.saturating_add(b.mag.lo),
        neg_zero: true,
    }
}

fn rewrite(
    kernel: &mut Kernel,
    inst: Inst,
    facts: &SecondaryMap<Value, Mag>,
    stats: &mut FloatRuleStats,
) {
    // Input rule: every f32 operand is never subnormal.
    let args = kernel.insts[inst].args.clone();
    let inputs_normal = !args.is_empty()
        && args.iter().all(|&a| {
            kernel.value_type(a) == Type::F32
                && const_bits(kernel, a)
                    .map_or(facts[a], |b| Mag::of_bits(b as u32))
                    .lo
                    >= MIN_NORMAL_EXP
        });
    let exact = exact_fact(kernel, inst, facts);
    let fma_form = fma_as_binary(kernel, inst, facts);
    let data = &mut kernel.insts[inst];
    if let Some(mode) = mode_mut(&mut data.kind)
        && !mode.flags
    {
        if inputs_normal && mode.denorm_in != Denorm::Preserve {
            mode.denorm_in = Denorm::Preserve;
            stats.inputs += 1;
        }
        if let Some((e, _)) = exact
            && e.lo >= MIN_NORMAL_EXP
            && mode.denorm_out != Denorm::Preserve
        {
            mode.denorm_out = Denorm::Preserve;
            stats.results += 1;
        }
    }
    if let (Some((op, a, b)), InstKind::Fma { mode }) = (fma_form, &data.kind) {
        data.kind = InstKind::FBinary { op, mode: *mode };
        data.args = vec![a, b];
        stats.fmas += 1;
    }
}

/// `fma(a, 1, c)` as `fadd(a, c)`, or `fma(a, b, +0)` as `fmul(a, b)` when
/// the exact product cannot be `-0` (one factor a positive constant, the
/// other never `-0` after the input rule).
fn fma_as_binary(
    kernel: &Kernel,
    inst: Inst,
    facts: &SecondaryMap<Value, Mag>,
) -> Option<(FBinOp, Value, Value)> {
    let data = &kernel.insts[inst];
    let InstKind::Fma { mode } = data.kind else {
        return None;
    };
    let mode = analysed_mode(kernel, inst).filter(|_| !mode.flags)?;
    let &[a, b, c] = data.args.as_slice() else {
        return None;
    };
    let op = |v: Value| operand(kernel, v, mode.denorm_in, facts);
    if op(b).bits == Some(ONE) {
        return Some((FBinOp::Add, a, c));
    }
    if op(a).bits == Some(ONE) {
        return Some((FBinOp::Add, b, c));
    }
    if op(c).bits != Some(0) {
        return None;
    }
    let positive = |x: Operand| {
        x.bits
            .is_some_and(|k| k & SIGN == 0 && k != 0 && (k >> 23) & 0xff != 0xff)
    };
    let (oa, ob) = (op(a), op(b));
    let never_neg_zero = (positive(oa) && !ob.mag.neg_zero) || (positive(ob) && !oa.mag.neg_zero);
    never_neg_zero.then_some((FBinOp::Mul, a, b))
}

/// Smallest exponent of a constant addend that swamps every value below
/// `2^-124` in magnitude: `c + v` rounds to `c` when `|v| < ulp(c) / 4`
/// (a quarter: below a power of two the spacing halves).
const SWAMPING_EXP: i32 = -96;

/// Drops the input flush of `v = a * k` (`fmul`, or `fma` with a zero
/// addend; `k` a normal constant below 2 in magnitude) when every reader of
/// `v` adds a constant `c` with `|c| >= 2^-96` to it (rounding to nearest,
/// no flags): a subnormal `a` gives `|v| < 2^-125` flushed or not, and every
/// such `v` gives the reader the result `c` (any flush the reader applies to
/// `v` keeps it that small). Returns how many.
fn drop_swamped_flushes(kernel: &mut Kernel, placed: &[Inst]) -> usize {
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
    let mut dropped = 0;
    for &inst in placed {
        let data = &kernel.insts[inst];
        let (Some(mode), &[v]) = (mode_of(&data.kind), data.results.as_slice()) else {
            continue;
        };
        if mode.denorm_in == Denorm::Preserve
            || analysed_mode(kernel, inst).is_none()
            || !small_constant_product(kernel, inst)
            || readers[v].is_empty()
            || !readers[v]
                .iter()
                .all(|r| r.is_some_and(|u| swamps(kernel, u, v)))
        {
            continue;
        }
        if let Some(mode) = mode_mut(&mut kernel.insts[inst].kind) {
            mode.denorm_in = Denorm::Preserve;
            dropped += 1;
        }
    }
    dropped
}

/// Biased exponent field of a constant operand.
fn const_exp(kernel: &Kernel, v: Value) -> Option<i32> {
    const_bits(kernel, v).map(|b| ((b as u32 >> 23) & 0xff) as i32 - 127)
}

/// `a * k` or `fma(a, k, ±0)` (either factor order) with `k` a normal
/// constant of magnitude below 2 and `a` not a constant.
fn small_constant_product(kernel: &Kernel, inst: Inst) -> bool {
    let data = &kernel.insts[inst];
    let factors = match (&data.kind, data.args.as_slice()) {
        (
            InstKind::FBinary {
                op: FBinOp::Mul, ..
            },
            &[a, b],
        ) => [a, b],
        (InstKind::Fma { .. }, &[a, b, c])
            if const_bits(kernel, c).is_some_and(|z| z as u32 & !SIGN == 0) =>
        {
            [a, b]
        }
        _ => return false,
    };
    let small = |k: Value| const_exp(kernel, k).is_some_and(|e| (MIN_NORMAL_EXP..=0).contains(&e));
    let varying = |a: Value| const_bits(kernel, a).is_none();
    (small(factors[1]) && varying(factors[0])) || (small(factors[0]) && varying(factors[1]))
}

/// Whether `u` gives the same result for every `v` below `2^-124` in
/// magnitude: `v + c`, `v - c`, `c - v` or `fma(v, 1, c)` with a finite
/// constant `|c| >= 2^-96`, rounding to nearest, without flags.
fn swamps(kernel: &Kernel, u: Inst, v: Value) -> bool {
    if analysed_mode(kernel, u).is_none() {
        return false;
    }
    let data = &kernel.insts[u];
    let large = |c: Value| {
        c != v && const_exp(kernel, c).is_some_and(|e| (SWAMPING_EXP..NO_FINITE).contains(&e))
    };
    let once = data.args.iter().filter(|&&a| a == v).count() == 1;
    let one = |x: Value| const_bits(kernel, x) == Some(u64::from(ONE));
    once && match (&data.kind, data.args.as_slice()) {
        (
            InstKind::FBinary {
                op: FBinOp::Add | FBinOp::Sub,
                ..
            },
            &[a, b],
        ) => large(a) || large(b),
        (InstKind::Fma { .. }, &[a, b, c]) => {
            large(c) && ((a == v && one(b)) || (b == v && one(a)))
        }
        _ => false,
    }
}

/// The float rules of an instruction that has them.
fn mode_of(kind: &InstKind) -> Option<FloatMode> {
    let mut kind = kind.clone();
    mode_mut(&mut kind).copied()
}

/// The float rules of an instruction that has them, to change.
fn mode_mut(kind: &mut InstKind) -> Option<&mut FloatMode> {
    match kind {
        InstKind::FBinary { mode, .. }
        | InstKind::FUnary { mode, .. }
        | InstKind::Fma { mode }
        | InstKind::Fcmp { mode, .. }
        | InstKind::Fclass { mode }
        | InstKind::Special { mode, .. }
        | InstKind::PowFixup { mode }
        | InstKind::Fcvt { mode, .. }
        | InstKind::FToI { mode, .. } => Some(mode),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_bounds() {
        assert_eq!(Mag::of_bits(0x3f00_0000).lo, -1);
        assert_eq!(Mag::of_bits(0x0000_0001).lo, -149);
        assert_eq!(Mag::of_bits(0x0040_0000).lo, -127);
        assert_eq!(
            Mag::of_bits(0x8000_0000),
            Mag {
                lo: NO_FINITE,
                neg_zero: true
            }
        );
        assert_eq!(Mag::of_bits(0x7f80_0000).lo, NO_FINITE);
    }
}
