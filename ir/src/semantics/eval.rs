//! `eval_pure`: one lane of every pure instruction, dispatching to the rule modules.

use super::format::Fmt;
use super::{arith, compare, convert, fclass, int, pow_fixup, special, tiny_before_rounding};
use crate::float_mode::FloatMode;
use crate::inst::InstKind;
use crate::types::Type;

/// Writes a result and, when the mode asks for it, the flags word after it.
fn put(out: &mut [u64], value: u64, flags: u32, mode: &FloatMode) -> bool {
    let want = if mode.flags { 2 } else { 1 };
    if out.len() < want {
        return false;
    }
    out[0] = value;
    if mode.flags {
        out[1] = u64::from(flags);
    }
    true
}

fn widen<T: Into<u64>>((r, f): (T, u32)) -> (u64, u32) {
    (r.into(), f)
}

/// How many arguments a pure kind reads; `None` for kinds that are not pure.
fn arity(kind: &InstKind) -> Option<usize> {
    use InstKind::*;
    Some(match kind {
        Const { .. } => 0,
        IUnary(_) | Cast { .. } | FUnary { .. } | Fclass { .. } | Special { .. } => 1,
        Fcvt { .. } | FToI { .. } | IToF { .. } => 1,
        IBinary(_) | Icmp(_) | FBinary { .. } | Fcmp { .. } => 2,
        Select | BitExtract { .. } | Fma { .. } | PowFixup { .. } => 3,
        BitInsert => 4,
        _ => return None,
    })
}

/// See `super::eval_pure`.
pub fn eval_pure(kind: &InstKind, arg_tys: &[Type], args: &[u64], out: &mut [u64]) -> bool {
    use InstKind::*;
    let ty0 = arg_tys.first().copied();
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    let fmt0 = ty0.and_then(Fmt::of_type);
    let bits0 = ty0.map_or(0, Type::bits);
    let Some(n) = arity(kind) else { return false };
    if args.len() < n || arg_tys.len() < n || out.is_empty() {
        return false;
    }
    if let Some(done) = tiny_before_rounding::eval(kind, arg_tys, args, out) {
        return done;
    }
    match kind {
        Const { ty, bits } => out[0] = bits & ty.mask(),
        IBinary(op) if bits0 > 0 => out[0] = int::ibinary(*op, bits0, arg(0), arg(1)),
        IUnary(op) if bits0 > 0 => out[0] = int::iunary(*op, bits0, arg(0)),
        Icmp(cc) if bits0 > 0 => out[0] = u64::from(int::icmp(*cc, bits0, arg(0), arg(1))),
        Select => out[0] = if arg(0) & 1 != 0 { arg(1) } else { arg(2) },
        Cast { op, to } => match ty0 {
            Some(from) => out[0] = int::cast(*op, from, *to, arg(0)),
            None => return false,
        },
        BitExtract { signed } if bits0 > 0 => {
            out[0] = int::bit_extract(bits0, *signed, arg(0), arg(1), arg(2))
        }
        BitInsert if bits0 > 0 => out[0] = int::bit_insert(bits0, arg(0), arg(1), arg(2), arg(3)),
        // The typed entry points take the host fast path where it applies.
        FBinary { op, mode } => {
            let (a, b) = (arg(0), arg(1));
            let (r, fl) = match ty0 {
                Some(Type::F16) => widen(arith::fbinary_f16(*op, a as u16, b as u16, mode)),
                Some(Type::F32) => widen(arith::fbinary_f32(*op, a as u32, b as u32, mode)),
                Some(Type::F64) => arith::fbinary_f64(*op, a, b, mode),
                _ => return false,
            };
            return put(out, r, fl, mode);
        }
        FUnary { op, mode } => {
            let a = arg(0);
            let (r, fl) = match ty0 {
                Some(Type::F16) => widen(arith::funary_f16(*op, a as u16, mode)),
                Some(Type::F32) => widen(arith::funary_f32(*op, a as u32, mode)),
                Some(Type::F64) => arith::funary_f64(*op, a, mode),
                _ => return false,
            };
            return put(out, r, fl, mode);
        }
        Fma { mode } => {
            let (a, b, c) = (arg(0), arg(1), arg(2));
            let (r, fl) = match ty0 {
                Some(Type::F16) => widen(arith::fma_f16(a as u16, b as u16, c as u16, mode)),
                Some(Type::F32) => widen(arith::fma_f32(a as u32, b as u32, c as u32, mode)),
                Some(Type::F64) => arith::fma_f64(a, b, c, mode),
                _ => return false,
            };
            return put(out, r, fl, mode);
        }
        Fcmp { cc, mode } => {
            let Some(f) = fmt0 else { return false };
            let (r, fl) = compare::fcmp_mode(f, *cc, arg(0), arg(1), mode);
            return put(out, u64::from(r), fl, mode);
        }
        Fclass { mode } => {
            let Some(f) = fmt0 else { return false };
            out[0] = u64::from(fclass::fclass_mode(f, arg(0), mode));
        }
        Special { func, mode } => {
            let Some(f) = fmt0 else { return false };
            let (r, fl) = special::special(f, *func, arg(0), mode);
            return put(out, r, fl, mode);
        }
        PowFixup { mode } => {
            let (r, fl) = pow_fixup::pow_fixup(arg(0) as u32, arg(1) as u32, arg(2) as u32, mode);
            return put(out, r.into(), fl, mode);
        }
        Fcvt { from, to, mode } => {
            let (r, fl) = convert::fcvt(*from, *to, arg(0), mode);
            return put(out, r, fl, mode);
        }
        FToI {
            from,
            to,
            signed,
            nan_to_max,
            mode,
        } => {
            let (r, fl) = convert::ftoi(*from, arg(0), *to, *signed, *nan_to_max, mode);
            return put(out, r, fl, mode);
        }
        IToF { to, signed, mode } => {
            let Some(from) = ty0 else { return false };
            let (r, fl) = convert::itof(*to, *signed, from, arg(0), mode);
            return put(out, r, fl, mode);
        }
        _ => return false,
    }
    true
}
