//! `FBinary`, `FUnary` and `Fma` with their float rules (see `rules`), generic over
//! f16/f32/f64 bits, plus typed entry points for the JIT's host helpers.
//!
//! The typed functions take a fast path when `round` is RNE and no flags are asked
//! for: the host's IEEE f32/f64 operation (f16 computes in f32 and rounds once,
//! exact for + - * / since 24 >= 2*11+2), followed by the rules; a NaN
//! result falls back to the exact path so NaN bits never depend on the host.
//! With flags or another direction (except RMM), f32 uses `error_free`: the host
//! RNE result moved by the exactly known error sign, where that is provably right.
//! Both fast paths return the same bits and flags as the exact path (tested).

use super::error_free::{self, EfOp};
use super::flush::flush_in;
use super::format::Fmt;
use super::integral::round_integral;
use super::minmax::{gpu_minmax, ieee_minmax};
use super::rules::finish;
use super::{convert, ieee};
use crate::float_mode::{FloatMode, Round};
use crate::inst::{FBinOp, FUnOp};

/// `a op b` on bits of `fmt` with all rules; returns (result, flags).
pub fn fbinary(fmt: Fmt, op: FBinOp, a: u64, b: u64, mode: &FloatMode) -> (u64, u32) {
    let a = flush_in(fmt, mode.denorm_in, a);
    let b = flush_in(fmt, mode.denorm_in, b);
    let (r, f) = match op {
        FBinOp::Add => ieee::add(fmt, a, b, mode.round),
        FBinOp::Sub => ieee::sub(fmt, a, b, mode.round),
        FBinOp::Mul => ieee::mul(fmt, a, b, mode.round),
        FBinOp::Div => ieee::div(fmt, a, b, mode.round),
        FBinOp::Min => gpu_minmax(fmt, a, b, false),
        FBinOp::Max => gpu_minmax(fmt, a, b, true),
        FBinOp::Minimum => ieee_minmax(fmt, a, b, false),
        FBinOp::Maximum => ieee_minmax(fmt, a, b, true),
        FBinOp::Copysign => ((a & fmt.mag_mask()) | (b & fmt.sign_bit()), 0),
    };
    finish(fmt, mode, r, f)
}

/// `op a` on bits of `fmt` with all rules. `Floor/Ceil/Trunc/Nearest` fix their own
/// direction and ignore `round`; `Sqrt` honours it; `Neg/Abs` are bitwise.
pub fn funary(fmt: Fmt, op: FUnOp, a: u64, mode: &FloatMode) -> (u64, u32) {
    let a = flush_in(fmt, mode.denorm_in, a);
    let (r, f) = match op {
        FUnOp::Neg => (a ^ fmt.sign_bit(), 0),
        FUnOp::Abs => (a & fmt.mag_mask(), 0),
        FUnOp::Sqrt => ieee::sqrt(fmt, a, mode.round),
        FUnOp::Floor => round_integral(fmt, a, Round::Down),
        FUnOp::Ceil => round_integral(fmt, a, Round::Up),
        FUnOp::Trunc => round_integral(fmt, a, Round::TowardZero),
        FUnOp::Nearest => round_integral(fmt, a, Round::NearestEven),
    };
    finish(fmt, mode, r, f)
}

/// `a * b + c`, one rounding, with all rules.
pub fn fma(fmt: Fmt, a: u64, b: u64, c: u64, mode: &FloatMode) -> (u64, u32) {
    let a = flush_in(fmt, mode.denorm_in, a);
    let b = flush_in(fmt, mode.denorm_in, b);
    let c = flush_in(fmt, mode.denorm_in, c);
    let (r, f) = ieee::fma(fmt, a, b, c, mode.round);
    finish(fmt, mode, r, f)
}

#[inline]
fn fast(mode: &FloatMode) -> bool {
    mode.round == Round::NearestEven && !mode.flags
}

/// The host result when it is not a NaN, after the output rules.
#[inline]
fn fast_finish(fmt: Fmt, mode: &FloatMode, bits: u64, is_nan: bool) -> Option<(u64, u32)> {
    if is_nan {
        None
    } else {
        Some(finish(fmt, mode, bits, 0))
    }
}

/// The error-free path (`error_free`) exists for f32 only.
#[inline]
fn no_error_free(_: EfOp, _: f64, _: f64, _: f64, _: Round) -> Option<(u64, u32)> {
    None
}

/// Result rules after a host or error-free result.
#[inline]
fn finish_typed(fmt: Fmt, mode: &FloatMode, (bits, flags): (u64, u32)) -> (u64, u32) {
    finish(fmt, mode, bits, flags)
}

macro_rules! typed {
    ($bin:ident, $un:ident, $fma:ident, $bits:ty, $fmt:expr, $host:ident, $ef:path) => {
        #[doc = concat!("`FBinary` on ", stringify!($bits), " bits: (result, flags).")]
        #[inline]
        pub fn $bin(op: FBinOp, a: $bits, b: $bits, mode: &FloatMode) -> ($bits, u32) {
            let x = $host::from_bits(flush_in($fmt, mode.denorm_in, a.into()) as $bits);
            let y = $host::from_bits(flush_in($fmt, mode.denorm_in, b.into()) as $bits);
            let ef = match op {
                FBinOp::Add => Some(EfOp::Add),
                FBinOp::Sub => Some(EfOp::Sub),
                FBinOp::Mul => Some(EfOp::Mul),
                FBinOp::Div => Some(EfOp::Div),
                _ => None,
            };
            if let Some(e) = ef {
                if fast(mode) {
                    let r = match e {
                        EfOp::Add => x + y,
                        EfOp::Sub => x - y,
                        EfOp::Mul => x * y,
                        _ => x / y,
                    };
                    if let Some((v, f)) = fast_finish($fmt, mode, r.to_bits().into(), r.is_nan()) {
                        return (v as $bits, f);
                    }
                } else if let Some((v, f)) = $ef(e, x, y, 0.0, mode.round) {
                    let (v, f) = finish_typed($fmt, mode, (v.into(), f));
                    return (v as $bits, f);
                }
            }
            let (r, f) = fbinary($fmt, op, a.into(), b.into(), mode);
            (r as $bits, f)
        }

        #[doc = concat!("`FUnary` on ", stringify!($bits), " bits: (result, flags).")]
        #[inline]
        pub fn $un(op: FUnOp, a: $bits, mode: &FloatMode) -> ($bits, u32) {
            if op == FUnOp::Sqrt {
                let x = $host::from_bits(flush_in($fmt, mode.denorm_in, a.into()) as $bits);
                if fast(mode) {
                    let r = x.sqrt();
                    if let Some((v, f)) = fast_finish($fmt, mode, r.to_bits().into(), r.is_nan()) {
                        return (v as $bits, f);
                    }
                } else if let Some((v, f)) = $ef(EfOp::Sqrt, x, 0.0, 0.0, mode.round) {
                    let (v, f) = finish_typed($fmt, mode, (v.into(), f));
                    return (v as $bits, f);
                }
            }
            let (r, f) = funary($fmt, op, a.into(), mode);
            (r as $bits, f)
        }

        #[doc = concat!("`Fma` on ", stringify!($bits), " bits: (result, flags).")]
        #[inline]
        pub fn $fma(a: $bits, b: $bits, c: $bits, mode: &FloatMode) -> ($bits, u32) {
            let x = $host::from_bits(flush_in($fmt, mode.denorm_in, a.into()) as $bits);
            let y = $host::from_bits(flush_in($fmt, mode.denorm_in, b.into()) as $bits);
            let z = $host::from_bits(flush_in($fmt, mode.denorm_in, c.into()) as $bits);
            if fast(mode) {
                let r = x.mul_add(y, z);
                if let Some((v, f)) = fast_finish($fmt, mode, r.to_bits().into(), r.is_nan()) {
                    return (v as $bits, f);
                }
            } else if let Some((v, f)) = $ef(EfOp::Fma, x, y, z, mode.round) {
                let (v, f) = finish_typed($fmt, mode, (v.into(), f));
                return (v as $bits, f);
            }
            let (r, f) = fma($fmt, a.into(), b.into(), c.into(), mode);
            (r as $bits, f)
        }
    };
}

typed!(
    fbinary_f32,
    funary_f32,
    fma_f32,
    u32,
    Fmt::F32,
    f32,
    error_free::f32_op
);
typed!(
    fbinary_f64,
    funary_f64,
    fma_f64,
    u64,
    Fmt::F64,
    f64,
    no_error_free
);

/// `FBinary` on f16 bits: (result, flags). The fast path computes + - * / in f32
/// and rounds once to f16 (exact: f32 has more than 2*11+2 bits).
#[inline]
pub fn fbinary_f16(op: FBinOp, a: u16, b: u16, mode: &FloatMode) -> (u16, u32) {
    if fast(mode) && matches!(op, FBinOp::Add | FBinOp::Sub | FBinOp::Mul | FBinOp::Div) {
        let x = f32::from_bits(convert::f16_to_f32_bits(
            flush_in(Fmt::F16, mode.denorm_in, a.into()) as u16,
        ));
        let y = f32::from_bits(convert::f16_to_f32_bits(
            flush_in(Fmt::F16, mode.denorm_in, b.into()) as u16,
        ));
        let r = match op {
            FBinOp::Add => x + y,
            FBinOp::Sub => x - y,
            FBinOp::Mul => x * y,
            _ => x / y,
        };
        if !r.is_nan() {
            let h = convert::f32_to_f16_rne(r.to_bits());
            let (v, f) = finish(Fmt::F16, mode, h.into(), 0);
            return (v as u16, f);
        }
    }
    let (r, f) = fbinary(Fmt::F16, op, a.into(), b.into(), mode);
    (r as u16, f)
}

/// `FUnary` on f16 bits: (result, flags).
#[inline]
pub fn funary_f16(op: FUnOp, a: u16, mode: &FloatMode) -> (u16, u32) {
    let (r, f) = funary(Fmt::F16, op, a.into(), mode);
    (r as u16, f)
}

/// `Fma` on f16 bits: (result, flags). Always the exact path.
#[inline]
pub fn fma_f16(a: u16, b: u16, c: u16, mode: &FloatMode) -> (u16, u32) {
    let (r, f) = fma(Fmt::F16, a.into(), b.into(), c.into(), mode);
    (r as u16, f)
}
