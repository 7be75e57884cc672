//! NaN results: which NaN an operation produces.
//!
//! wavejit's propagation rule (`NanMode::Propagate`) is defined here and does not
//! follow any host's quirks (x86 returns 0xffc00000 for fresh NaNs):
//! - If some operand is a NaN, the result is the **first NaN operand in argument
//!   order, quieted** (quiet bit set; sign and payload kept).
//! - Otherwise a fresh NaN (invalid operation) is the format's **default quiet NaN
//!   with the sign clear**: 0x7e00 (f16), 0x7fc00000 (f32), 0x7ff8000000000000 (f64).
//! - A conversion between IEEE-style formats keeps the sign and the top payload bits
//!   and sets the quiet bit (see `convert`).
//!
//! `NanMode::Canonical(bits)` then replaces *every* NaN result by `bits`.
//! Signaling NaN operands raise NV wherever the operation is arithmetic.

use super::format::Fmt;
use crate::float_mode::NanMode;

/// Sets the quiet bit of a NaN of `fmt` (no change for other values).
#[inline]
pub fn quiet(fmt: Fmt, bits: u64) -> u64 {
    if fmt.is_nan(bits) && fmt.inf().is_some() {
        bits | fmt.quiet_bit()
    } else {
        bits
    }
}

/// The format's default quiet NaN (sign clear). For formats without NaN (e2m1) this
/// is never needed; zero is returned to stay total.
#[inline]
pub fn default_nan(fmt: Fmt) -> u64 {
    fmt.default_nan().unwrap_or(0)
}

/// The NaN result of an operation on `ops`: the first NaN operand quieted, or the
/// default NaN when no operand is a NaN.
#[inline]
pub fn propagate(fmt: Fmt, ops: &[u64]) -> u64 {
    for &x in ops {
        if fmt.is_nan(x) {
            return quiet(fmt, x);
        }
    }
    default_nan(fmt)
}

/// True when some operand is a signaling NaN (raises NV).
#[inline]
pub fn any_snan(fmt: Fmt, ops: &[u64]) -> bool {
    ops.iter().any(|&x| fmt.is_snan(x))
}

/// Applies `NanMode`: a NaN result becomes the canonical pattern (masked to the
/// format's width) under `Canonical`; anything else is unchanged.
#[inline]
pub fn apply_mode(fmt: Fmt, mode: NanMode, bits: u64) -> u64 {
    match mode {
        NanMode::Canonical(c) if fmt.is_nan(bits) => c & (fmt.sign_bit() | fmt.mag_mask()),
        _ => bits,
    }
}
