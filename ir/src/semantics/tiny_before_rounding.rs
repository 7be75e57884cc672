//! `Denorm::FlushBeforeRounding`: a result whose exact value is below the
//! smallest normal magnitude becomes the zero of its sign, even when rounding
//! would carry it up to the smallest normal (AGX FP32, `agx.md` §7).
//!
//! Rounding is monotone, so a rounded result below the smallest normal came
//! from a tiny value and one above it did not; only a result of exactly the
//! smallest normal magnitude is ambiguous. For those the instruction is
//! evaluated again rounding toward zero, which stays below the smallest normal
//! exactly when the unrounded value is below it (the smallest normal is
//! representable). Flushing raises UF and NX like `flush::flush_out`; then the
//! NaN and saturation rules apply as usual (`rules`).

use super::format::Fmt;
use super::{eval, rules};
use crate::float_mode::{Denorm, FloatMode, NanMode, Round, fflags};
use crate::inst::InstKind;
use crate::types::Type;

/// The float mode of `kind` and the format of its float result.
fn result_rule(kind: &InstKind, arg_tys: &[Type]) -> Option<(FloatMode, Fmt)> {
    let ty0 = arg_tys.first().copied().and_then(Fmt::of_type);
    match kind {
        InstKind::FBinary { mode, .. }
        | InstKind::FUnary { mode, .. }
        | InstKind::Fma { mode }
        | InstKind::Special { mode, .. } => Some((*mode, ty0?)),
        InstKind::PowFixup { mode } => Some((*mode, Fmt::F32)),
        InstKind::Fcvt { to, mode, .. } | InstKind::IToF { to, mode, .. } => {
            Some((*mode, Fmt::of(*to)))
        }
        _ => None,
    }
}

/// `kind` with its float mode replaced by `mode`.
fn with_mode(kind: &InstKind, mode: FloatMode) -> InstKind {
    let mut k = kind.clone();
    match &mut k {
        InstKind::FBinary { mode: m, .. }
        | InstKind::FUnary { mode: m, .. }
        | InstKind::Fma { mode: m }
        | InstKind::Special { mode: m, .. }
        | InstKind::PowFixup { mode: m }
        | InstKind::Fcvt { mode: m, .. }
        | InstKind::IToF { mode: m, .. } => *m = mode,
        _ => {}
    }
    k
}

/// `eval_pure` of an instruction whose result rule is `FlushBeforeRounding`;
/// `None` for every other instruction.
pub(super) fn eval(
    kind: &InstKind,
    arg_tys: &[Type],
    args: &[u64],
    out: &mut [u64],
) -> Option<bool> {
    let (mode, fmt) = result_rule(kind, arg_tys)?;
    if mode.denorm_out != Denorm::FlushBeforeRounding {
        return None;
    }
    // The rounded result before the result rules.
    let raw = FloatMode {
        denorm_out: Denorm::Preserve,
        nan: NanMode::Propagate,
        sat: false,
        ..mode
    };
    let mut r = [0u64; 2];
    if !eval::eval_pure(&with_mode(kind, raw), arg_tys, args, &mut r) {
        return Some(false);
    }
    let (bits, flags) = (r[0], if mode.flags { r[1] as u32 } else { 0 });
    let min_normal = 1u64 << fmt.mbits;
    let mag = bits & fmt.mag_mask();
    let tiny = if mag == min_normal {
        let toward_zero = FloatMode {
            round: Round::TowardZero,
            flags: false,
            ..raw
        };
        let mut t = [0u64; 2];
        eval::eval_pure(&with_mode(kind, toward_zero), arg_tys, args, &mut t)
            && t[0] & fmt.mag_mask() < min_normal
    } else {
        fmt.is_subnormal(bits)
    };
    let (bits, flags) = if tiny {
        (bits & fmt.sign_bit(), flags | fflags::UF | fflags::NX)
    } else {
        (bits, flags)
    };
    let rest = FloatMode {
        denorm_out: Denorm::Preserve,
        ..mode
    };
    let (bits, flags) = rules::finish(fmt, &rest, bits, flags);
    let want = if mode.flags { 2 } else { 1 };
    if out.len() < want {
        return Some(false);
    }
    out[0] = bits;
    if mode.flags {
        out[1] = u64::from(flags);
    }
    Some(true)
}
