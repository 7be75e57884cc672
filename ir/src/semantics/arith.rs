//! `FBinary`, `FUnary` and `Fma` with their float rules (see `rules`), generic over
//! f16/f32/f64 bits, plus typed entry points for the JIT's host helpers.
//!
//! The typed functions take a fast path when `round` is RNE and no flags are asked
//! for: the host's IEEE f32/f64 operation (f16 computes in f32 and rounds once,
//! exact for + - * / since 24 >= 2*11+2), followed by the rules; a NaN
//! result falls back to the exact path so NaN bits never depend on the host.
//! The fast path returns the same bits as the exact path (tested).

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

macro_rules! typed {
    ($bin:ident, $un:ident, $fma:ident, $bits:ty, $fmt:expr, $host:ident) => {
        #[doc = concat!("`FBinary` on ", stringify!($bits), " bits: (result, flags).")]
        #[inline]
        pub fn $bin(op: FBinOp, a: $bits, b: $bits, mode: &FloatMode) -> ($bits, u32) {
            if fast(mode) {
                let x = $host::from_bits(flush_in($fmt, mode.denorm_in, a.into()) as $bits);
                let y = $host::from_bits(flush_in($fmt, mode.denorm_in, b.into()) as $bits);
                let r = match op {
                    FBinOp::Add => Some(x + y),
                    FBinOp::Sub => Some(x - y),
                    FBinOp::Mul => Some(x * y),
                    FBinOp::Div => Some(x / y),
                    _ => None,
                };
                if let Some(r) = r
                    && let Some((v, f)) = fast_finish($fmt, mode, r.to_bits().into(), r.is_nan())
                {
                    return (v as $bits, f);
                }
            }
            let (r, f) = fbinary($fmt, op, a.into(), b.into(), mode);
            (r as $bits, f)
        }

        #[doc = concat!("`FUnary` on ", stringify!($bits), " bits: (result, flags).")]
        #[inline]
        pub fn $un(op: FUnOp, a: $bits, mode: &FloatMode) -> ($bits, u32) {
            if fast(mode) && op == FUnOp::Sqrt {
                let x = $host::from_bits(flush_in($fmt, mode.denorm_in, a.into()) as $bits);
                let r = x.sqrt();
                if let Some((v, f)) = fast_finish($fmt, mode, r.to_bits().into(), r.is_nan()) {
                    return (v as $bits, f);
                }
            }
            let (r, f) = funary($fmt, op, a.into(), mode);
            (r as $bits, f)
        }

        #[doc = concat!("`Fma` on ", stringify!($bits), " bits: (result, flags).")]
        #[inline]
        pub fn $fma(a: $bits, b: $bits, c: $bits, mode: &FloatMode) -> ($bits, u32) {
            if fast(mode) {
                let x = $host::from_bits(flush_in($fmt, mode.denorm_in, a.into()) as $bits);
                let y = $host::from_bits(flush_in($fmt, mode.denorm_in, b.into()) as $bits);
                let z = $host::from_bits(flush_in($fmt, mode.denorm_in, c.into()) as $bits);
                let r = x.mul_add(y, z);
                if let Some((v, f)) = fast_finish($fmt, mode, r.to_bits().into(), r.is_nan()) {
                    return (v as $bits, f);
                }
            }
            let (r, f) = fma($fmt, a.into(), b.into(), c.into(), mode);
            (r as $bits, f)
        }
    };
}

typed!(fbinary_f32, funary_f32, fma_f32, u32, Fmt::F32, f32);
typed!(fbinary_f64, funary_f64, fma_f64, u64, Fmt::F64, f64);

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
