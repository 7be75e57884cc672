//! RISC-V `fclass`: exactly one bit set.
//! 0 -inf, 1 -normal, 2 -subnormal, 3 -0, 4 +0, 5 +subnormal, 6 +normal, 7 +inf,
//! 8 signaling NaN, 9 quiet NaN.

use super::flush::flush_in;
use super::format::Fmt;
use crate::float_mode::FloatMode;

#[inline]
pub fn fclass(fmt: Fmt, bits: u64) -> u32 {
    let neg = fmt.sign(bits);
    let bit = if fmt.is_nan(bits) {
        if fmt.is_snan(bits) { 8 } else { 9 }
    } else if fmt.is_inf(bits) {
        if neg { 0 } else { 7 }
    } else if fmt.is_zero(bits) {
        if neg { 3 } else { 4 }
    } else if fmt.is_subnormal(bits) {
        if neg { 2 } else { 5 }
    } else if neg {
        1
    } else {
        6
    };
    1 << bit
}

/// `Fclass { mode }`: the class of the operand after `mode.denorm_in`.
#[inline]
pub fn fclass_mode(fmt: Fmt, bits: u64, mode: &FloatMode) -> u32 {
    fclass(fmt, flush_in(fmt, mode.denorm_in, bits))
}
