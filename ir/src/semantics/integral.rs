//! Round to an integral value in the same format (`Floor`, `Ceil`, `Trunc`,
//! `Nearest` = ties to even). Exact operations: no NX (IEEE roundToIntegral), NV
//! only for a signaling NaN, NaN results per `nan::propagate`. The sign of a zero
//! result is the operand's sign (`floor(-0.5) = -0`, `ceil(-0.5) = -0`).

use super::format::{Class, Fmt, unpack};
use super::nan;
use super::rounding::{round_pack, rounds_up, split};
use crate::float_mode::{Round, fflags};

#[inline]
pub fn round_integral(fmt: Fmt, bits: u64, dir: Round) -> (u64, u32) {
    if fmt.is_nan(bits) {
        let nv = if fmt.is_snan(bits) { fflags::NV } else { 0 };
        return (nan::quiet(fmt, bits), nv);
    }
    match unpack(fmt, bits) {
        (neg, Class::Finite { exp, sig }) if exp < 0 => {
            let (q, half, rest) = split(u128::from(sig), (-exp) as u32);
            let q = q + u128::from(rounds_up(dir, neg, q & 1 == 1, half, rest));
            (round_pack(fmt, neg, 0, q, Round::NearestEven, false).0, 0)
        }
        _ => (bits, 0),
    }
}
