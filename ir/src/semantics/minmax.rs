//! Float min/max.
//!
//! - GPU `Min`/`Max` (RISC-V `fmin`/`fmax`, IEEE 754-2019 minimumNumber /
//!   maximumNumber): a NaN operand is ignored, so one NaN gives the other operand
//!   unchanged; two NaNs give the first NaN quieted (`nan::propagate`).
//! - IEEE `Minimum`/`Maximum`: any NaN operand gives the first NaN quieted.
//! - In all four, -0 < +0, so `max(-0, +0) = max(+0, -0) = +0` and
//!   `min(-0, +0) = min(+0, -0) = -0`; equal operands return the first.
//! - A signaling NaN operand raises NV; nothing else raises a flag.

use super::format::Fmt;
use super::nan;
use crate::float_mode::fflags;

/// A key ordering non-NaN patterns by value with -0 below +0.
#[inline]
fn key(fmt: Fmt, x: u64) -> i128 {
    let mag = i128::from(x & fmt.mag_mask());
    if fmt.sign(x) { -mag - 1 } else { mag }
}

#[inline]
fn snan_flags(fmt: Fmt, a: u64, b: u64) -> u32 {
    if nan::any_snan(fmt, &[a, b]) {
        fflags::NV
    } else {
        0
    }
}

/// `Min` (`want_max` false) or `Max` (true), NaN-ignoring.
#[inline]
pub fn gpu_minmax(fmt: Fmt, a: u64, b: u64, want_max: bool) -> (u64, u32) {
    let flags = snan_flags(fmt, a, b);
    let r = match (fmt.is_nan(a), fmt.is_nan(b)) {
        (true, true) => nan::propagate(fmt, &[a, b]),
        (true, false) => b,
        (false, true) => a,
        (false, false) => pick(fmt, a, b, want_max),
    };
    (r, flags)
}

/// `Minimum` / `Maximum`, NaN-propagating.
#[inline]
pub fn ieee_minmax(fmt: Fmt, a: u64, b: u64, want_max: bool) -> (u64, u32) {
    let flags = snan_flags(fmt, a, b);
    if fmt.is_nan(a) || fmt.is_nan(b) {
        return (nan::propagate(fmt, &[a, b]), flags);
    }
    (pick(fmt, a, b, want_max), flags)
}

#[inline]
fn pick(fmt: Fmt, a: u64, b: u64, want_max: bool) -> u64 {
    let (ka, kb) = (key(fmt, a), key(fmt, b));
    let b_wins = if want_max { kb > ka } else { kb < ka };
    if b_wins { b } else { a }
}
