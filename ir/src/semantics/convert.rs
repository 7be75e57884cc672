//! Conversions: float <-> float between every `FloatFormat` pair, float -> int and
//! int -> float, with every rounding direction and RISC-V flag behaviour.
//!
//! Float -> float (`Fcvt`):
//! - finite values are rounded once by `rounding::round_pack` (flags NX/UF/OF,
//!   tininess after rounding); widening is exact;
//! - overflow gives infinity or the largest finite value as the direction says,
//!   unless `sat` (finite saturation: always the largest finite value of the sign)
//!   or the target has no infinity (e4m3, e2m1 always saturate);
//! - infinity converts to infinity, or to the signed largest finite value under
//!   `sat` or for e4m3/e2m1 (raising OF|NX, as a saturation does);
//! - NaN: to an IEEE-style format (f16, bf16, f32, f64, e5m2) the sign and the top
//!   payload bits are kept and the quiet bit set (0x7fc00000 -> 0x7e00, e5m2 0x7e);
//!   to e4m3 the sign with the only NaN code (0x7f/0xff); to e2m1, which has no NaN,
//!   the signed largest value +-6 (0x7/0xf) with NV. A signaling NaN raises NV.
//! - rules order: `denorm_in` on the source, conversion, `denorm_out` on the
//!   target, `NanMode` on a NaN result.
//!
//! Float -> int (`FToI`): rounded to an integer with `round`; in range: the value,
//! NX if inexact; out of range (after rounding) or infinite: the nearest bound of
//! the type, NV (no NX); NaN: the maximum if `nan_to_max`, else 0, NV.
//! A negative value that rounds to 0 converts to 0 unsigned without NV.
//!
//! Int -> float (`IToF`): the integer (sign-extended if `signed`) rounded once to
//! the format; then the common result rules (`rules::finish`, so `sat` is the
//! [0, 1] clamp there).
//!
//! Formats stored in wider integer values (bf16 in i16, fp8 in i8, e2m1 in the low
//! nibble) read only their own low bits; results are zero-extended.

use super::flush::{flush_in, flush_out};
use super::format::{Class, Fmt, Specials, unpack};
use super::nan;
use super::rounding::{round_pack, rounds_up, split};
use super::rules::finish;
use crate::float_mode::{FloatMode, Round, fflags};
use crate::types::{FloatFormat, Type};

fn width_mask(fmt: Fmt) -> u64 {
    (fmt.sign_bit() << 1).wrapping_sub(1)
}

/// The NaN of `to` that a NaN of `from` converts to (see the module comment).
fn convert_nan(from: Fmt, to: Fmt, bits: u64) -> (u64, u32) {
    let neg = from.sign(bits);
    let sign = if neg { to.sign_bit() } else { 0 };
    let nv = if from.is_snan(bits) { fflags::NV } else { 0 };
    match to.specials {
        Specials::Ieee => {
            let frac = bits & from.frac_mask();
            let payload = if to.mbits >= from.mbits {
                frac << (to.mbits - from.mbits)
            } else {
                frac >> (from.mbits - to.mbits)
            };
            (sign | to.exp_mask() | to.quiet_bit() | payload, nv)
        }
        Specials::NanOnlyAllOnes => (sign | to.mag_mask(), nv),
        Specials::FiniteOnly => (sign | to.max_finite(), fflags::NV),
    }
}

/// Converts bits of `from` to bits of `to` (no denormal or NaN-mode rules).
pub fn convert_bits(from: Fmt, to: Fmt, bits: u64, round: Round, sat: bool) -> (u64, u32) {
    let bits = bits & width_mask(from);
    let (neg, class) = unpack(from, bits);
    let sign = if neg { to.sign_bit() } else { 0 };
    match class {
        Class::Nan => convert_nan(from, to, bits),
        Class::Inf => match to.inf() {
            Some(inf) if !sat => (sign | inf, 0),
            _ => (sign | to.max_finite(), fflags::OF | fflags::NX),
        },
        Class::Zero => (sign, 0),
        Class::Finite { exp, sig } => round_pack(to, neg, exp, u128::from(sig), round, sat),
    }
}

/// `Fcvt`: float format conversion with all rules; `mode.sat` is finite saturation.
pub fn fcvt(from: FloatFormat, to: FloatFormat, bits: u64, mode: &FloatMode) -> (u64, u32) {
    let (f, t) = (Fmt::of(from), Fmt::of(to));
    let x = flush_in(f, mode.denorm_in, bits & width_mask(f));
    let (r, flags) = match (from, to) {
        // Common cases without flags: bit-level paths with the same results.
        _ if mode.flags || mode.round != Round::NearestEven || mode.sat => {
            convert_bits(f, t, x, mode.round, mode.sat)
        }
        (FloatFormat::F32, FloatFormat::F16) => (f32_to_f16_rne(x as u32).into(), 0),
        (FloatFormat::F32, FloatFormat::Bf16) => (f32_to_bf16_rne(x as u32).into(), 0),
        (FloatFormat::F16, FloatFormat::F32) => (f16_to_f32_bits(x as u16).into(), 0),
        _ => convert_bits(f, t, x, mode.round, mode.sat),
    };
    let (r, fl) = flush_out(t, mode.denorm_out, r);
    (nan::apply_mode(t, mode.nan, r), flags | fl)
}

/// Bounds of an integer type as (min, max) in i128.
fn int_range(to: Type, signed: bool) -> (i128, i128) {
    let n = to.bits();
    if signed {
        (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
    } else {
        (0, (1i128 << n) - 1)
    }
}

/// `FToI`: float to integer; the result is zero-extended bits of `to`.
pub fn ftoi(
    from: FloatFormat,
    bits: u64,
    to: Type,
    signed: bool,
    nan_to_max: bool,
    mode: &FloatMode,
) -> (u64, u32) {
    let f = Fmt::of(from);
    let x = flush_in(f, mode.denorm_in, bits & width_mask(f));
    let (lo, hi) = int_range(to, signed);
    let out = |v: i128| (v as u64) & to.mask();
    let (neg, class) = unpack(f, x);
    let (mag, inexact) = match class {
        Class::Nan => return (out(if nan_to_max { hi } else { 0 }), fflags::NV),
        Class::Inf => return (out(if neg { lo } else { hi }), fflags::NV),
        Class::Zero => (0u128, false),
        Class::Finite { exp, sig } if exp >= 0 => {
            if exp > 64 {
                return (out(if neg { lo } else { hi }), fflags::NV);
            }
            (u128::from(sig) << exp, false)
        }
        Class::Finite { exp, sig } => {
            let (q, half, rest) = split(u128::from(sig), (-exp) as u32);
            let q = q + u128::from(rounds_up(mode.round, neg, q & 1 == 1, half, rest));
            (q, rest)
        }
    };
    // mag < 2^118 here, so the signed value fits i128.
    let v = if neg { -(mag as i128) } else { mag as i128 };
    if v < lo {
        (out(lo), fflags::NV)
    } else if v > hi {
        (out(hi), fflags::NV)
    } else {
        (out(v), if inexact { fflags::NX } else { 0 })
    }
}

/// `IToF`: integer (of type `from`, sign-extended if `signed`) to `to`, with the
/// common result rules.
pub fn itof(to: FloatFormat, signed: bool, from: Type, bits: u64, mode: &FloatMode) -> (u64, u32) {
    let t = Fmt::of(to);
    let n = from.bits();
    let bits = bits & from.mask();
    let negative = signed && n > 0 && (bits >> (n - 1)) & 1 == 1;
    let mag = if negative {
        (bits | !from.mask()).wrapping_neg()
    } else {
        bits
    };
    let (r, flags) = round_pack(t, negative, 0, u128::from(mag), mode.round, false);
    finish(t, mode, r, flags)
}

// ---- Typed helpers for the JIT (all RNE-or-given-direction, no denormal rules) ----

/// f16 -> f32, exact; NaN quieted with its payload. Returns bits only.
#[inline]
pub fn f16_to_f32_bits(h: u16) -> u32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from(h >> 10) & 0x1f;
    let frac = u32::from(h & 0x3ff);
    match (exp, frac) {
        (0, 0) => sign,
        (0, _) => {
            // Subnormal: normalise (value frac * 2^-24).
            let shift = frac.leading_zeros() - 21;
            let frac = (frac << shift) & 0x3ff;
            sign | ((113 - shift) << 23) | (frac << 13)
        }
        (0x1f, 0) => sign | 0x7f80_0000,
        (0x1f, _) => sign | 0x7fc0_0000 | (frac << 13),
        _ => sign | ((exp + 112) << 23) | (frac << 13),
    }
}

/// f16 -> f32: (bits, flags); NV for a signaling NaN.
#[inline]
pub fn f16_to_f32(h: u16) -> (u32, u32) {
    let nv = if Fmt::F16.is_snan(h.into()) {
        fflags::NV
    } else {
        0
    };
    (f16_to_f32_bits(h), nv)
}

/// f32 -> f16 round to nearest even, no flags (bit-level fast path; equal to
/// `f32_to_f16(x, Round::NearestEven).0`, tested).
#[inline]
pub fn f32_to_f16_rne(x: u32) -> u16 {
    let sign = ((x >> 16) & 0x8000) as u16;
    let a = x & 0x7fff_ffff;
    let rne = |m: u32, shift: u32| {
        let half = 1u32 << (shift - 1);
        let rem = m & ((1u32 << shift) - 1);
        let q = m >> shift;
        q + u32::from(rem > half || (rem == half && q & 1 == 1))
    };
    let mag = if a > 0x7f80_0000 {
        0x7e00 | ((a >> 13) & 0x3ff)
    } else if a >= 0x4780_0000 {
        0x7c00
    } else if a >= 0x3880_0000 {
        // Normal: rebias the exponent by 112; a carry may reach infinity.
        rne(a - 0x3800_0000, 13)
    } else if a > 0x3300_0000 {
        // Subnormal result: value = m * 2^(e - 150), in units of 2^-24.
        let m = (a & 0x007f_ffff) | 0x0080_0000;
        rne(m, 126 - (a >> 23))
    } else {
        0
    };
    sign | mag as u16
}

/// f32 -> bf16 round to nearest even, no flags (bit-level fast path; equal to
/// `f32_to_bf16(x, Round::NearestEven, false).0`, tested).
#[inline]
pub fn f32_to_bf16_rne(x: u32) -> u16 {
    if x & 0x7fff_ffff > 0x7f80_0000 {
        return ((x >> 16) | 0x0040) as u16;
    }
    ((x + 0x7fff + ((x >> 16) & 1)) >> 16) as u16
}

/// f32 -> f16 with `round`: (bits, flags).
#[inline]
pub fn f32_to_f16(x: u32, round: Round) -> (u16, u32) {
    let (r, f) = convert_bits(Fmt::F32, Fmt::F16, x.into(), round, false);
    (r as u16, f)
}

/// bf16 -> f32, exact: (bits, flags).
#[inline]
pub fn bf16_to_f32(h: u16) -> (u32, u32) {
    let (r, f) = convert_bits(Fmt::BF16, Fmt::F32, h.into(), Round::NearestEven, false);
    (r as u32, f)
}

/// f32 -> bf16 with `round` (overflow to infinity unless `sat`): (bits, flags).
#[inline]
pub fn f32_to_bf16(x: u32, round: Round, sat: bool) -> (u16, u32) {
    let (r, f) = convert_bits(Fmt::F32, Fmt::BF16, x.into(), round, sat);
    (r as u16, f)
}

/// e4m3 -> f32, exact: (bits, flags).
#[inline]
pub fn e4m3_to_f32(b: u8) -> (u32, u32) {
    let (r, f) = convert_bits(Fmt::E4M3, Fmt::F32, b.into(), Round::NearestEven, false);
    (r as u32, f)
}

/// f32 -> e4m3 (always saturating): (bits, flags).
#[inline]
pub fn f32_to_e4m3(x: u32, round: Round) -> (u8, u32) {
    let (r, f) = convert_bits(Fmt::F32, Fmt::E4M3, x.into(), round, true);
    (r as u8, f)
}

/// e5m2 -> f32, exact: (bits, flags).
#[inline]
pub fn e5m2_to_f32(b: u8) -> (u32, u32) {
    let (r, f) = convert_bits(Fmt::E5M2, Fmt::F32, b.into(), Round::NearestEven, false);
    (r as u32, f)
}

/// f32 -> e5m2; `sat` saturates overflow and infinity to +-57344: (bits, flags).
#[inline]
pub fn f32_to_e5m2(x: u32, round: Round, sat: bool) -> (u8, u32) {
    let (r, f) = convert_bits(Fmt::F32, Fmt::E5M2, x.into(), round, sat);
    (r as u8, f)
}

/// e2m1 (low nibble) -> f32, exact: (bits, flags).
#[inline]
pub fn e2m1_to_f32(b: u8) -> (u32, u32) {
    let (r, f) = convert_bits(Fmt::E2M1, Fmt::F32, b.into(), Round::NearestEven, false);
    (r as u32, f)
}

/// f32 -> e2m1 (always saturating; NaN -> +-6 with NV): (bits, flags).
#[inline]
pub fn f32_to_e2m1(x: u32, round: Round) -> (u8, u32) {
    let (r, f) = convert_bits(Fmt::F32, Fmt::E2M1, x.into(), round, true);
    (r as u8, f)
}

/// f32 -> i32 (`FToI` without denormal rules): (bits, flags).
#[inline]
pub fn f32_to_i32(x: u32, round: Round, nan_to_max: bool) -> (u32, u32) {
    let mode = FloatMode {
        round,
        ..FloatMode::IEEE
    };
    let (r, f) = ftoi(
        FloatFormat::F32,
        x.into(),
        Type::I32,
        true,
        nan_to_max,
        &mode,
    );
    (r as u32, f)
}

/// f32 -> u32 (`FToI` without denormal rules): (bits, flags).
#[inline]
pub fn f32_to_u32(x: u32, round: Round, nan_to_max: bool) -> (u32, u32) {
    let mode = FloatMode {
        round,
        ..FloatMode::IEEE
    };
    let (r, f) = ftoi(
        FloatFormat::F32,
        x.into(),
        Type::I32,
        false,
        nan_to_max,
        &mode,
    );
    (r as u32, f)
}

/// i32 -> f32 with `round`: (bits, flags).
#[inline]
pub fn i32_to_f32(x: u32, round: Round) -> (u32, u32) {
    let negative = (x as i32) < 0;
    let (r, f) = round_pack(
        Fmt::F32,
        negative,
        0,
        u128::from((x as i32).unsigned_abs()),
        round,
        false,
    );
    (r as u32, f)
}

/// u32 -> f32 with `round`: (bits, flags).
#[inline]
pub fn u32_to_f32(x: u32, round: Round) -> (u32, u32) {
    let (r, f) = round_pack(Fmt::F32, false, 0, u128::from(x), round, false);
    (r as u32, f)
}
