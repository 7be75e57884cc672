//! Correctly rounded IEEE 754 arithmetic on raw bits of any binary format up to
//! f64: add, sub, mul, div, sqrt, fma, with all five rounding directions and exact
//! exception flags (tininess after rounding).
//!
//! Every finite operation is computed exactly in 128-bit integers (a product of two
//! 53-bit significands fits; sums are aligned with a jammed sticky bit placed far
//! below the rounding position; quotients and roots carry 60+ bits plus a sticky
//! remainder) and rounded once by `rounding::round_pack`.
//!
//! NaN results follow `nan::propagate` (first NaN operand quieted, else the default
//! NaN); NV is raised for signaling NaN operands and invalid operations (inf - inf,
//! 0 * inf — also when the fma addend is a quiet NaN, as RISC-V requires —, 0/0,
//! inf/inf, sqrt of a negative). DZ for finite nonzero / 0.
//! An exact zero sum is +0 except in direction Down (-0).

use super::format::{Class, Fmt, unpack};
use super::nan;
use super::rounding::{round_pack, shift_right_jam};
use crate::float_mode::{Round, fflags};

type Flags = u32;

/// An exact nonzero finite value `(-1)^neg * sig * 2^exp`.
#[derive(Copy, Clone, Debug)]
struct Exact {
    neg: bool,
    exp: i32,
    sig: u128,
}

/// Puts the leading bit at position 125 (2 bits of headroom for the sum).
fn normalize(x: Exact) -> Exact {
    let shift = x.sig.leading_zeros() as i32 - 2;
    Exact {
        neg: x.neg,
        exp: x.exp - shift,
        sig: if shift >= 0 {
            x.sig << shift
        } else {
            shift_right_jam(x.sig, (-shift) as u32)
        },
    }
}

/// `x + y` of nonzero finite values, or `None` when exactly zero. Inputs have at
/// most 106 significant bits, so normalising loses nothing; an operand shifted by 2
/// or more positions lies entirely below the other's top 123 bits, so jamming it
/// keeps the rounding exact even under cancellation (at most one bit cancels).
fn exact_sum(x: Exact, y: Exact) -> Option<Exact> {
    let (x, y) = (normalize(x), normalize(y));
    let (big, small) = if x.exp >= y.exp { (x, y) } else { (y, x) };
    let small_sig = shift_right_jam(small.sig, (big.exp - small.exp).min(200) as u32);
    if big.neg == small.neg {
        return Some(Exact {
            neg: big.neg,
            exp: big.exp,
            sig: big.sig + small_sig,
        });
    }
    let (neg, sig) = match big.sig.cmp(&small_sig) {
        std::cmp::Ordering::Equal => return None,
        std::cmp::Ordering::Greater => (big.neg, big.sig - small_sig),
        std::cmp::Ordering::Less => (small.neg, small_sig - big.sig),
    };
    Some(Exact {
        neg,
        exp: big.exp,
        sig,
    })
}

fn pack(fmt: Fmt, x: Exact, round: Round) -> (u64, Flags) {
    round_pack(fmt, x.neg, x.exp, x.sig, round, false)
}

fn signed_zero(fmt: Fmt, neg: bool) -> u64 {
    if neg { fmt.sign_bit() } else { 0 }
}

fn inf(fmt: Fmt, neg: bool) -> u64 {
    signed_zero(fmt, neg) | fmt.exp_mask()
}

fn invalid(fmt: Fmt) -> (u64, Flags) {
    (nan::default_nan(fmt), fflags::NV)
}

/// The NaN result when some operand is NaN: first NaN quieted, NV on sNaN.
fn nan_result(fmt: Fmt, ops: &[u64]) -> Option<(u64, Flags)> {
    if ops.iter().any(|&x| fmt.is_nan(x)) {
        let nv = if nan::any_snan(fmt, ops) {
            fflags::NV
        } else {
            0
        };
        Some((nan::propagate(fmt, ops), nv))
    } else {
        None
    }
}

/// The sign of an exact zero sum of operands with signs `a` and `b`.
fn zero_sum_sign(a: bool, b: bool, round: Round) -> bool {
    if a == b { a } else { round == Round::Down }
}

fn finite(sign: bool, class: Class) -> Option<Exact> {
    match class {
        Class::Finite { exp, sig } => Some(Exact {
            neg: sign,
            exp,
            sig: u128::from(sig),
        }),
        _ => None,
    }
}

pub fn add(fmt: Fmt, a: u64, b: u64, round: Round) -> (u64, Flags) {
    if let Some(r) = nan_result(fmt, &[a, b]) {
        return r;
    }
    let ((sa, ca), (sb, cb)) = (unpack(fmt, a), unpack(fmt, b));
    match (ca, cb) {
        (Class::Inf, Class::Inf) if sa != sb => invalid(fmt),
        (Class::Inf, _) => (a, 0),
        (_, Class::Inf) => (b, 0),
        (Class::Zero, Class::Zero) => (signed_zero(fmt, zero_sum_sign(sa, sb, round)), 0),
        (Class::Zero, _) => (b, 0),
        (_, Class::Zero) => (a, 0),
        _ => match (finite(sa, ca), finite(sb, cb)) {
            (Some(x), Some(y)) => match exact_sum(x, y) {
                Some(s) => pack(fmt, s, round),
                None => (signed_zero(fmt, round == Round::Down), 0),
            },
            _ => invalid(fmt),
        },
    }
}

pub fn sub(fmt: Fmt, a: u64, b: u64, round: Round) -> (u64, Flags) {
    if let Some(r) = nan_result(fmt, &[a, b]) {
        return r;
    }
    add(fmt, a, b ^ fmt.sign_bit(), round)
}

pub fn mul(fmt: Fmt, a: u64, b: u64, round: Round) -> (u64, Flags) {
    if let Some(r) = nan_result(fmt, &[a, b]) {
        return r;
    }
    let ((sa, ca), (sb, cb)) = (unpack(fmt, a), unpack(fmt, b));
    let neg = sa != sb;
    match (ca, cb) {
        (Class::Inf, Class::Zero) | (Class::Zero, Class::Inf) => invalid(fmt),
        (Class::Inf, _) | (_, Class::Inf) => (inf(fmt, neg), 0),
        (Class::Zero, _) | (_, Class::Zero) => (signed_zero(fmt, neg), 0),
        (Class::Finite { exp: ea, sig: ma }, Class::Finite { exp: eb, sig: mb }) => round_pack(
            fmt,
            neg,
            ea + eb,
            u128::from(ma) * u128::from(mb),
            round,
            false,
        ),
        _ => invalid(fmt),
    }
}

pub fn div(fmt: Fmt, a: u64, b: u64, round: Round) -> (u64, Flags) {
    if let Some(r) = nan_result(fmt, &[a, b]) {
        return r;
    }
    let ((sa, ca), (sb, cb)) = (unpack(fmt, a), unpack(fmt, b));
    let neg = sa != sb;
    match (ca, cb) {
        (Class::Inf, Class::Inf) | (Class::Zero, Class::Zero) => invalid(fmt),
        (Class::Inf, _) => (inf(fmt, neg), 0),
        (_, Class::Inf) | (Class::Zero, _) => (signed_zero(fmt, neg), 0),
        (_, Class::Zero) => (inf(fmt, neg), fflags::DZ),
        (Class::Finite { exp: ea, sig: ma }, Class::Finite { exp: eb, sig: mb }) => {
            // Dividend leading bit at 125, divisor at 63: the quotient has 62+ bits.
            let sa_shift = 125 - (63 - ma.leading_zeros() as i32);
            let sb_shift = 63 - (63 - mb.leading_zeros() as i32);
            let num = u128::from(ma) << sa_shift;
            let den = u128::from(mb) << sb_shift;
            let q = num / den;
            let sticky = u128::from(!num.is_multiple_of(den));
            round_pack(
                fmt,
                neg,
                (ea - sa_shift) - (eb - sb_shift),
                q | sticky,
                round,
                false,
            )
        }
        _ => invalid(fmt),
    }
}

pub fn sqrt(fmt: Fmt, a: u64, round: Round) -> (u64, Flags) {
    if let Some(r) = nan_result(fmt, &[a]) {
        return r;
    }
    match unpack(fmt, a) {
        (_, Class::Zero) => (a, 0),
        (true, _) => invalid(fmt),
        (false, Class::Inf) => (a, 0),
        (false, Class::Finite { exp, sig }) => {
            // Scale to ~125 bits with an even exponent: the root has 62+ bits.
            let mut k = 125 - (63 - sig.leading_zeros() as i32);
            if (exp - k) % 2 != 0 {
                k -= 1;
            }
            let m = u128::from(sig) << k;
            let r = m.isqrt();
            let sticky = u128::from(r * r != m);
            round_pack(fmt, false, (exp - k) / 2, r | sticky, round, false)
        }
        (false, Class::Nan) => invalid(fmt),
    }
}

/// `a * b + c` with a single rounding.
pub fn fma(fmt: Fmt, a: u64, b: u64, c: u64, round: Round) -> (u64, Flags) {
    let ((sa, ca), (sb, cb), (sc, cc)) = (unpack(fmt, a), unpack(fmt, b), unpack(fmt, c));
    let inf_times_zero = matches!(
        (ca, cb),
        (Class::Inf, Class::Zero) | (Class::Zero, Class::Inf)
    );
    if let Some((bits, nv)) = nan_result(fmt, &[a, b, c]) {
        let nv = if inf_times_zero { fflags::NV } else { nv };
        return (bits, nv);
    }
    if inf_times_zero {
        return invalid(fmt);
    }
    let sp = sa != sb;
    match (ca, cb, cc) {
        (Class::Inf, _, Class::Inf) | (_, Class::Inf, Class::Inf) if sp != sc => invalid(fmt),
        (Class::Inf, _, _) | (_, Class::Inf, _) => (inf(fmt, sp), 0),
        (_, _, Class::Inf) => (c, 0),
        (Class::Zero, _, Class::Zero) | (_, Class::Zero, Class::Zero) => {
            (signed_zero(fmt, zero_sum_sign(sp, sc, round)), 0)
        }
        (Class::Zero, _, _) | (_, Class::Zero, _) => (c, 0),
        (Class::Finite { exp: ea, sig: ma }, Class::Finite { exp: eb, sig: mb }, _) => {
            let p = Exact {
                neg: sp,
                exp: ea + eb,
                sig: u128::from(ma) * u128::from(mb),
            };
            match finite(sc, cc) {
                None => pack(fmt, p, round),
                Some(z) => match exact_sum(p, z) {
                    Some(s) => pack(fmt, s, round),
                    None => (signed_zero(fmt, round == Round::Down), 0),
                },
            }
        }
        _ => invalid(fmt),
    }
}
