//! AGX `pow_fixup` (fmadd32 with bit 52): the sign and special-case fix-up after
//! `c = exp2(b * log2|a|)` in Metal's `pow(a, b)`. Hardware-observed table
//! (agx.md section 6), all on f32 after `denorm_in`, the first rule that applies
//! deciding:
//!
//! 0. `a == +1` or `b == +-0`: `d = +1.0`; else `b == +1`: `d = a` exactly (so
//!    `pow(x, 1)` is `x` bit for bit where `c` is an ulp off). These come before
//!    every rule below, NaN operands included (applegpu issue #51's hardware-derived
//!    logic).
//! 1. `d = c`.
//! 2. `a` has its sign bit set (incl. -0 and -inf) and `b` is an odd integer:
//!    `d = -c`. Odd is judged on the f32 value: |b| >= 2^24 is always even.
//! 3. `a < 0` strictly (-0 does not count), `a` finite, `b` not an integer:
//!    `d` = the default NaN 0x7fc00000. Infinite `b` counts as an (even) integer
//!    here, so `pow(-2, inf)` keeps `c` as IEEE does (hardware unknown).
//! 4. `a == -1` and `b` is +-inf: `d = +1.0`.
//! 5. `a` or `b` NaN: the default NaN (hardware is erratic there; inside the pow
//!    sequence `c` is NaN anyway). A NaN `c` otherwise flows through steps 1-2.
//!
//! NV is raised for a signaling NaN operand only. Then the common result rules
//! (flush, canonical NaN, saturate) apply like fmadd32.

use super::flush::flush_in;
use super::format::Fmt;
use super::nan;
use super::rules::finish;
use crate::float_mode::{FloatMode, fflags};

const SIGN: u32 = 0x8000_0000;
const ONE: u32 = 0x3f80_0000;
const MINUS_ONE: u32 = 0xbf80_0000;

/// Is the f32 `b` an integer (infinities count as integers)?
fn is_integer(b: u32) -> bool {
    let x = f32::from_bits(b);
    x.is_infinite() || (x.is_finite() && x.trunc() == x)
}

/// Is the f32 `b` an odd integer?
fn is_odd_integer(b: u32) -> bool {
    let x = f32::from_bits(b);
    x.is_finite() && x.abs() < 16_777_216.0 && x.trunc() == x && (x.abs() as u32) & 1 == 1
}

/// The fix-up value before the result rules.
pub fn pow_fixup_raw(a: u32, b: u32, c: u32) -> u32 {
    let (fa, fb) = (f32::from_bits(a), f32::from_bits(b));
    if a == ONE || b & !SIGN == 0 {
        return ONE;
    }
    if b == ONE {
        return a;
    }
    if fa.is_nan() || fb.is_nan() {
        return 0x7fc0_0000;
    }
    if a == MINUS_ONE && fb.is_infinite() {
        return ONE;
    }
    if fa < 0.0 && fa.is_finite() && !is_integer(b) {
        return 0x7fc0_0000;
    }
    if a & SIGN != 0 && is_odd_integer(b) {
        return c ^ SIGN;
    }
    c
}

/// `PowFixup { mode }` on f32 bits: (result, flags).
#[inline]
pub fn pow_fixup(a: u32, b: u32, c: u32, mode: &FloatMode) -> (u32, u32) {
    let f = Fmt::F32;
    let [a, b, c] = [a, b, c].map(|x| flush_in(f, mode.denorm_in, x.into()) as u32);
    let flags = if nan::any_snan(f, &[a.into(), b.into(), c.into()]) {
        fflags::NV
    } else {
        0
    };
    let (r, fl) = finish(f, mode, pow_fixup_raw(a, b, c).into(), flags);
    (r as u32, fl)
}
