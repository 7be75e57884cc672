//! Rounding an exact value to a format: the one place where precision is lost.
//!
//! `round_pack` takes an exact value `sig * 2^exp` and delivers the bits of the
//! format that `round` selects, with IEEE flags:
//! - NX when the delivered value differs from the exact one;
//! - OF (+NX) when the rounded magnitude, computed with an unbounded exponent,
//!   exceeds the largest finite value;
//! - UF (+NX) when the result is tiny and inexact, where *tiny* is judged **after
//!   rounding** (RISC-V, ARM): the value rounded to full precision with an unbounded
//!   exponent range is below the smallest normal.
//!
//! Overflow delivers infinity or the largest finite value as IEEE prescribes for the
//! direction (RNE/RMM: infinity; RTZ: max; Up/Down: infinity only toward it), or the
//! largest finite value always when `sat_finite` is set or the format has no
//! infinity (e4m3, e2m1).

use std::cmp::Ordering;

use super::format::Fmt;
use crate::float_mode::{Round, fflags};

/// Splits `sig` at bit `shift`: the kept part, how the dropped part compares with
/// half a unit of the kept part, and whether the dropped part is nonzero.
#[inline]
pub(crate) fn split(sig: u128, shift: u32) -> (u128, Ordering, bool) {
    match shift {
        0 => (sig, Ordering::Less, false),
        1..128 => {
            let rem = sig & ((1u128 << shift) - 1);
            (sig >> shift, rem.cmp(&(1u128 << (shift - 1))), rem != 0)
        }
        128 => (0, sig.cmp(&(1u128 << 127)), sig != 0),
        _ => (0, Ordering::Less, sig != 0),
    }
}

/// Whether rounding in direction `round` adds one unit to the kept part.
#[inline]
pub(crate) fn rounds_up(
    round: Round,
    negative: bool,
    odd: bool,
    half: Ordering,
    rest: bool,
) -> bool {
    match round {
        Round::NearestEven => half == Ordering::Greater || (half == Ordering::Equal && odd),
        Round::NearestAway => half != Ordering::Less,
        Round::TowardZero => false,
        Round::Up => rest && !negative,
        Round::Down => rest && negative,
    }
}

/// Shifts right, OR-ing every bit shifted out into bit 0 ("jamming"), so that the
/// result still rounds like the exact value as long as bit 0 lies below the
/// rounding position.
#[inline]
pub(crate) fn shift_right_jam(x: u128, d: u32) -> u128 {
    match d {
        0 => x,
        1..128 => (x >> d) | u128::from(x & ((1u128 << d) - 1) != 0),
        _ => u128::from(x != 0),
    }
}

/// The result delivered on overflow (magnitude bits, without the sign).
#[inline]
fn overflow_mag(fmt: Fmt, negative: bool, round: Round, sat_finite: bool) -> u64 {
    let max = fmt.max_finite();
    let Some(inf) = fmt.inf() else { return max };
    if sat_finite {
        return max;
    }
    match round {
        Round::NearestEven | Round::NearestAway => inf,
        Round::TowardZero => max,
        Round::Up => {
            if negative {
                max
            } else {
                inf
            }
        }
        Round::Down => {
            if negative {
                inf
            } else {
                max
            }
        }
    }
}

/// Rounds `(-1)^negative * sig * 2^exp` to `fmt`. `sig` may carry a jammed sticky
/// bit in bit 0 if it has at least `fmt.mbits + 3` significant bits. Zero `sig`
/// gives the zero of that sign.
#[inline]
pub fn round_pack(
    fmt: Fmt,
    negative: bool,
    exp: i32,
    sig: u128,
    round: Round,
    sat_finite: bool,
) -> (u64, u32) {
    let sign = if negative { fmt.sign_bit() } else { 0 };
    if sig == 0 {
        return (sign, 0);
    }
    let mbits = fmt.mbits as i32;
    let emin = fmt.emin();
    let top = exp + (127 - sig.leading_zeros() as i32);
    // Exponent of the last kept bit: full precision, or fixed in the subnormal range.
    let mut lsb = top.max(emin) - mbits;
    let (mut q, half, inexact) = if lsb > exp {
        split(sig, (lsb - exp) as u32)
    } else {
        (sig << (exp - lsb), Ordering::Less, false)
    };
    if rounds_up(round, negative, q & 1 == 1, half, inexact) {
        q += 1;
        if q >> (mbits + 1) != 0 {
            q >>= 1;
            lsb += 1;
        }
    }
    let tiny = top < emin && !(top == emin - 1 && carries_to_normal(fmt, negative, sig, round));
    let mut flags = 0;
    if inexact {
        flags |= fflags::NX;
        if tiny {
            flags |= fflags::UF;
        }
    }
    // q < 2^(mbits+1); with the hidden bit set the value is normal.
    let biased = if q >> mbits != 0 {
        i64::from(lsb + mbits + fmt.bias())
    } else {
        0
    };
    let frac = (q as u64) & fmt.frac_mask();
    let overflow =
        biased >= (1i64 << fmt.ebits) || ((biased as u64) << fmt.mbits | frac) > fmt.max_finite();
    if overflow {
        return (
            sign | overflow_mag(fmt, negative, round, sat_finite),
            fflags::OF | fflags::NX,
        );
    }
    (sign | (biased as u64) << fmt.mbits | frac, flags)
}

/// For a value just below the smallest normal: does rounding it to full precision
/// (unbounded exponent) reach the smallest normal? Then it is not tiny.
fn carries_to_normal(fmt: Fmt, negative: bool, sig: u128, round: Round) -> bool {
    let bits = 128 - sig.leading_zeros() as i32;
    let shift = bits - (fmt.mbits as i32 + 1);
    if shift <= 0 {
        return false;
    }
    let (q, half, rest) = split(sig, shift as u32);
    let q = q + u128::from(rounds_up(round, negative, q & 1 == 1, half, rest));
    q >> (fmt.mbits + 1) != 0
}
