//! Directed rounding and exact flags of f32 + - * / sqrt fma from the host's RNE
//! result, without soft-float: the sign of the rounding error `exact - r` is found
//! exactly in f64 (products of f32 values are exact in f64; a TwoSum gives the
//! exact error of a sum; quotient and root residuals `x - r*y`, `x - r*r` are
//! compared exactly), and the result is moved one ulp as the direction says.
//!
//! Used only where that is provably the correctly rounded result: finite operands,
//! an RNE result `r` with `2^-125 <= |r| < MAX` (so no overflow, no tininess, and
//! a one-ulp step stays normal and finite), and not `NearestAway` (ties would need
//! more). Everything else returns `None` and takes the exact path; the two paths
//! are tested to agree.

use crate::float_mode::{Round, fflags};

/// The operations this path covers.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum EfOp {
    Add,
    Sub,
    Mul,
    Div,
    Sqrt,
    Fma,
}

/// `Some((bits, flags))` when the fast exact path applies (see the module doc).
#[inline]
pub fn f32_op(op: EfOp, x: f32, y: f32, z: f32, round: Round) -> Option<(u32, u32)> {
    if round == Round::NearestAway || !(x.is_finite() && y.is_finite() && z.is_finite()) {
        return None;
    }
    let (dx, dy, dz) = (f64::from(x), f64::from(y), f64::from(z));
    let (r, sign) = match op {
        EfOp::Add | EfOp::Sub => {
            let y = if op == EfOp::Sub { -y } else { y };
            let r = x + y;
            (r, sum_error_sign(dx, f64::from(y), f64::from(r)))
        }
        EfOp::Mul => {
            let r = x * y;
            (r, cmp_sign(dx * dy, f64::from(r)))
        }
        EfOp::Div => {
            let r = x / y;
            // exact - r has the sign of (x - r*y) * sign(y); r*y is exact in f64.
            let s = cmp_sign(dx, f64::from(r) * dy);
            (r, if y < 0.0 { -s } else { s })
        }
        EfOp::Sqrt => {
            let r = x.sqrt();
            (r, cmp_sign(dx, f64::from(r) * f64::from(r)))
        }
        EfOp::Fma => {
            let r = x.mul_add(y, z);
            (r, sum_error_sign(dx * dy, dz, f64::from(r)))
        }
    };
    let mag = r.abs();
    if !(mag >= f32::from_bits(0x0100_0000) && mag < f32::MAX) {
        return None;
    }
    let bits = r.to_bits();
    let negative = bits >> 31 == 1;
    // Moving the magnitude away from zero is +1 on the bits, toward zero -1.
    let away = match round {
        Round::Up => sign > 0 && !negative,
        Round::Down => sign < 0 && negative,
        _ => false,
    };
    let toward = match round {
        Round::Up => sign > 0 && negative,
        Round::Down => sign < 0 && !negative,
        Round::TowardZero => sign != 0 && ((sign < 0) != negative),
        _ => false,
    };
    let bits = if away {
        bits + 1
    } else if toward {
        bits - 1
    } else {
        bits
    };
    Some((bits, if sign != 0 { fflags::NX } else { 0 }))
}

/// Sign of `a - b` for f64 values (exact comparison).
#[inline]
fn cmp_sign(a: f64, b: f64) -> i32 {
    if a > b {
        1
    } else if a < b {
        -1
    } else {
        0
    }
}

/// Sign of `(a + b) - r` where `a + b` is exact in the reals and `r` an f32 value:
/// TwoSum gives `a + b = s + e` exactly; if `s != r` the gap `s - r` (a nonzero
/// multiple of an f64 ulp at least as large as `|e|`, and never cancelled by it
/// since then `a + b` would equal `r` and round to it) decides, else `e` does.
#[inline]
fn sum_error_sign(a: f64, b: f64, r: f64) -> i32 {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    if s != r {
        cmp_sign(s, r)
    } else {
        cmp_sign(e, 0.0)
    }
}
