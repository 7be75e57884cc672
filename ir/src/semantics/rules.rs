//! The fixed order of float rules around one float instruction:
//! 1. inputs flushed (`denorm_in`, `flush`),
//! 2. the operation computed once with `round` (its NaN per `nan::propagate`),
//! 3. the result flushed (`denorm_out`; raises UF|NX when it changes the result),
//! 4. a NaN result replaced under `NanMode::Canonical`,
//! 5. if `sat`, clamped to [+0, 1.0]: NaN -> +0, anything negative (incl. -0 and
//!    -inf) -> +0, above 1.0 (incl. +inf) -> 1.0. No flag is raised by clamping.
//!
//! Conversions (`Fcvt`) use `sat` differently (finite saturation, see `convert`).

use super::flush::flush_out;
use super::format::Fmt;
use super::nan;
use crate::float_mode::FloatMode;

/// Steps 3 to 5 applied to a computed result and its flags.
#[inline]
pub fn finish(fmt: Fmt, mode: &FloatMode, bits: u64, flags: u32) -> (u64, u32) {
    let (bits, fl) = flush_out(fmt, mode.denorm_out, bits);
    let bits = nan::apply_mode(fmt, mode.nan, bits);
    let bits = if mode.sat { saturate(fmt, bits) } else { bits };
    (bits, flags | fl)
}

/// Clamp to [+0, 1.0] with NaN -> +0.
#[inline]
pub fn saturate(fmt: Fmt, bits: u64) -> u64 {
    let one = (fmt.bias() as u64) << fmt.mbits;
    if fmt.is_nan(bits) || fmt.sign(bits) {
        0
    } else if bits > one {
        one
    } else {
        bits
    }
}
