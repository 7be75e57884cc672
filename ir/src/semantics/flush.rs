//! Flush-to-zero keeping the sign (`Denorm::FlushKeepSign`).
//!
//! A subnormal becomes the zero of the same sign; every other pattern (zeros,
//! normals, infinities, NaNs) is unchanged. Flushing an input raises no flag;
//! flushing a nonzero subnormal *result* raises UF and NX (the delivered zero
//! differs from the rounded result, as with x86 FTZ).

use super::format::Fmt;
use crate::float_mode::{Denorm, fflags};

/// Flushes a subnormal of `fmt` to the zero of its sign.
#[inline]
pub fn flush(fmt: Fmt, bits: u64) -> u64 {
    if fmt.is_subnormal(bits) {
        bits & fmt.sign_bit()
    } else {
        bits
    }
}

#[inline]
pub fn flush_f16(bits: u16) -> u16 {
    if bits & 0x7c00 == 0 {
        bits & 0x8000
    } else {
        bits
    }
}

#[inline]
pub fn flush_f32(bits: u32) -> u32 {
    if bits & 0x7f80_0000 == 0 {
        bits & 0x8000_0000
    } else {
        bits
    }
}

#[inline]
pub fn flush_f64(bits: u64) -> u64 {
    if bits & 0x7ff0_0000_0000_0000 == 0 {
        bits & 0x8000_0000_0000_0000
    } else {
        bits
    }
}

/// Applies an input rule: flushes when `denorm` says so.
#[inline]
pub fn flush_in(fmt: Fmt, denorm: Denorm, bits: u64) -> u64 {
    match denorm {
        Denorm::Preserve => bits,
        // An input is exact: flushing before rounding is flushing it.
        Denorm::FlushKeepSign | Denorm::FlushBeforeRounding => flush(fmt, bits),
    }
}

/// Applies an output rule to a rounded result; returns the result and the flags
/// flushing raised. `FlushBeforeRounding` needs the unrounded value for results
/// that rounded to the smallest normal: `eval_pure` decides those
/// (`tiny_before_rounding`); here it flushes what is subnormal after rounding.
#[inline]
pub fn flush_out(fmt: Fmt, denorm: Denorm, bits: u64) -> (u64, u32) {
    match denorm {
        Denorm::FlushKeepSign | Denorm::FlushBeforeRounding if fmt.is_subnormal(bits) => {
            (bits & fmt.sign_bit(), fflags::UF | fflags::NX)
        }
        _ => (bits, 0),
    }
}
