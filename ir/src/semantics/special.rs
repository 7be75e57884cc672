//! Hardware special functions (`Special`): one precise definition shared by every
//! engine. Real GPUs approximate these; wavejit defines them as follows.
//!
//! - `Rcp(x)` = `1 / x`, correctly rounded in the format with `round` and exact
//!   flags (IEEE division; `rcp(+-0) = +-inf` with DZ).
//! - `Rsqrt(x)`: NaN -> NaN (propagated); `x < 0` (incl. -inf) -> default NaN, NV;
//!   `+-0` -> `+-inf`, DZ; `+inf` -> +0. Otherwise the f64 value
//!   `1.0 / sqrt(x)` (two IEEE RNE f64 operations) rounded once to the format.
//! - `Exp2`, `Log2`, `Sin`, `Cos`: IEEE special cases first (NaN propagated;
//!   `exp2(+inf) = +inf`, `exp2(-inf) = +0`; `log2(x < 0)` and `log2(-inf)` -> NaN,
//!   NV; `log2(+-0) = -inf`, DZ; `log2(+inf) = +inf`; `sin/cos(+-inf)` -> NaN, NV;
//!   `sin(+-0) = +-0`), otherwise the f64 function of the `libm` crate (a Rust
//!   port of musl's libm, so results do not depend on the host's C library) of the
//!   exactly widened operand, rounded once to the format with `round`.
//! - Flags: NV and DZ as above, plus those of the final rounding of the f64
//!   intermediate (OF, UF, NX). For f64 operands the intermediate *is* the result,
//!   so `round` is not applied and only NV/DZ are reported.
//! - Then the common result rules (`rules::finish`).
//!
//! ir3 models its half-precision `rcp` (rounds toward zero) with `round: TowardZero`.

use super::convert::convert_bits;
use super::flush::flush_in;
use super::format::{Class, Fmt, unpack};
use super::ieee;
use super::nan;
use super::rounding::round_pack;
use super::rules::finish;
use crate::float_mode::{FloatMode, Round, fflags};
use crate::inst::SpecialFn;

/// The exact f64 value of a pattern of `fmt` (widening is exact).
fn to_f64(fmt: Fmt, bits: u64) -> f64 {
    f64::from_bits(convert_bits(fmt, Fmt::F64, bits, Round::NearestEven, false).0)
}

/// Rounds an f64 intermediate to `fmt` with the mode's direction.
fn from_f64(fmt: Fmt, v: f64, mode: &FloatMode) -> (u64, u32) {
    let bits = v.to_bits();
    if fmt == Fmt::F64 {
        return (bits, 0);
    }
    match unpack(Fmt::F64, bits) {
        (neg, Class::Finite { exp, sig }) => {
            round_pack(fmt, neg, exp, u128::from(sig), mode.round, false)
        }
        (neg, Class::Zero) => (if neg { fmt.sign_bit() } else { 0 }, 0),
        (neg, Class::Inf) => ((if neg { fmt.sign_bit() } else { 0 }) | fmt.exp_mask(), 0),
        (_, Class::Nan) => (nan::default_nan(fmt), 0),
    }
}

/// Evaluates a special function on bits of `fmt` (f16, f32 or f64).
pub fn special(fmt: Fmt, func: SpecialFn, a: u64, mode: &FloatMode) -> (u64, u32) {
    let a = flush_in(fmt, mode.denorm_in, a);
    let (r, f) = raw(fmt, func, a, mode);
    finish(fmt, mode, r, f)
}

fn raw(fmt: Fmt, func: SpecialFn, a: u64, mode: &FloatMode) -> (u64, u32) {
    if func == SpecialFn::Rcp {
        return ieee::div(fmt, (fmt.bias() as u64) << fmt.mbits, a, mode.round);
    }
    if fmt.is_nan(a) {
        let nv = if fmt.is_snan(a) { fflags::NV } else { 0 };
        return (nan::quiet(fmt, a), nv);
    }
    let (neg, class) = unpack(fmt, a);
    let sign = if neg { fmt.sign_bit() } else { 0 };
    let inf = fmt.exp_mask();
    let invalid = (nan::default_nan(fmt), fflags::NV);
    let x = to_f64(fmt, a);
    match func {
        SpecialFn::Rcp => (0, 0),
        SpecialFn::Rsqrt => match class {
            Class::Zero => (sign | inf, fflags::DZ),
            _ if neg => invalid,
            Class::Inf => (0, 0),
            _ => from_f64(fmt, 1.0 / x.sqrt(), mode),
        },
        SpecialFn::Exp2 => match class {
            Class::Inf => (if neg { 0 } else { inf }, 0),
            _ => from_f64(fmt, libm::exp2(x), mode),
        },
        SpecialFn::Log2 => match class {
            Class::Zero => (fmt.sign_bit() | inf, fflags::DZ),
            _ if neg => invalid,
            Class::Inf => (inf, 0),
            _ => from_f64(fmt, libm::log2(x), mode),
        },
        SpecialFn::Sin | SpecialFn::Cos => match class {
            Class::Inf => invalid,
            Class::Zero if func == SpecialFn::Sin => (a, 0),
            _ => from_f64(
                fmt,
                if func == SpecialFn::Sin {
                    libm::sin(x)
                } else {
                    libm::cos(x)
                },
                mode,
            ),
        },
    }
}

macro_rules! typed {
    ($name:ident, $bits:ty, $fmt:expr) => {
        #[doc = concat!("`Special` on ", stringify!($bits), " bits: (result, flags).")]
        #[inline]
        pub fn $name(func: SpecialFn, a: $bits, mode: &FloatMode) -> ($bits, u32) {
            let (r, f) = special($fmt, func, a.into(), mode);
            (r as $bits, f)
        }
    };
}

typed!(special_f16, u16, Fmt::F16);
typed!(special_f32, u32, Fmt::F32);
typed!(special_f64, u64, Fmt::F64);
