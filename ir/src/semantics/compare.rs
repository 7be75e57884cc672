//! Float comparisons (`Fcmp`). Ordered conditions are false when either operand is
//! NaN, the `U*` forms true. `Lt/Le/Gt/Ge` are IEEE signaling predicates: any NaN
//! raises NV; `Eq/Ne/Ord/Uno/U*` raise NV only for a signaling NaN. +0 == -0.

use std::cmp::Ordering;

use super::flush::flush_in;
use super::format::Fmt;
use super::nan;
use crate::float_mode::{FloatMode, fflags};
use crate::inst::FloatCC;

/// The value order of two patterns, `None` when unordered.
#[inline]
pub fn order(fmt: Fmt, a: u64, b: u64) -> Option<Ordering> {
    if fmt.is_nan(a) || fmt.is_nan(b) {
        return None;
    }
    let key = |x: u64| {
        let mag = i128::from(x & fmt.mag_mask());
        if fmt.sign(x) { -mag } else { mag }
    };
    Some(key(a).cmp(&key(b)))
}

/// Evaluates `a cc b`; returns the truth value and the flags raised.
#[inline]
pub fn fcmp(fmt: Fmt, cc: FloatCC, a: u64, b: u64) -> (bool, u32) {
    use FloatCC::*;
    let ord = order(fmt, a, b);
    let signaling = matches!(cc, Lt | Le | Gt | Ge);
    let nv = match ord {
        None if signaling || nan::any_snan(fmt, &[a, b]) => fflags::NV,
        _ => 0,
    };
    let r = match ord {
        None => matches!(cc, Ne | Uno | Ueq | Une | Ult | Ule | Ugt | Uge),
        Some(o) => match cc {
            Eq | Ueq => o == Ordering::Equal,
            Ne | Une => o != Ordering::Equal,
            Lt | Ult => o == Ordering::Less,
            Le | Ule => o != Ordering::Greater,
            Gt | Ugt => o == Ordering::Greater,
            Ge | Uge => o != Ordering::Less,
            Ord => true,
            Uno => false,
        },
    };
    (r, nv)
}

/// `Fcmp { cc, mode }`: `mode.denorm_in` applies to the operands; returns the
/// truth value and the flags raised.
#[inline]
pub fn fcmp_mode(fmt: Fmt, cc: FloatCC, a: u64, b: u64, mode: &FloatMode) -> (bool, u32) {
    let a = flush_in(fmt, mode.denorm_in, a);
    let b = flush_in(fmt, mode.denorm_in, b);
    fcmp(fmt, cc, a, b)
}
