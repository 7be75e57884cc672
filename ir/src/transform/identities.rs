//! Integer instructions that give back one of their operands when another
//! operand is a known constant (`x + 0`, `x * 1`, `x & -1`, `x << 32` on i32,
//! `x / 1`, a zero-width bit insert ...) or the same value (`x & x`, `min(x,
//! x)` ...), and the lifters' boolean round trip
//! `icmp.ne (zext b), 0` (or `icmp.eq (zext b), 1`) which is `b`, and
//! their float round trip `bitcast.i32.f32 (bitcast.f32.i32 x)`, which is `x`
//! bit for bit (lifters keep floats in integer registers).
//!
//! Every candidate is checked through `semantics::eval_pure` before it is
//! used: the boolean round trip on both values of `b` (a proof), the integer
//! identities on a spread of operand values of the type (the rules in
//! `inst.rs` make them exact; the probe guards against a rule read wrong).
//! Float instructions are never simplified this way (`x + 0` changes -0,
//! NaN payloads and flags).

use crate::entities::{Inst, Value};
use crate::inst::{CastOp, IBinOp, InstKind, IntCC};
use crate::kernel::{Kernel, ValueDef};
use crate::semantics::eval_pure;
use crate::types::Type;

/// The operand every lane's result of `inst` equals, if any; `known` gives the
/// constant bits of a value.
pub(crate) fn identity_operand(
    kernel: &Kernel,
    inst: Inst,
    known: impl Fn(Value) -> Option<u64>,
) -> Option<Value> {
    let data = &kernel.insts[inst];
    let &[r] = data.results.as_slice() else {
        return None;
    };
    let ty = kernel.value_type(r);
    if let (
        InstKind::Cast {
            op: CastOp::Bitcast,
            ..
        },
        &[a],
    ) = (&data.kind, data.args.as_slice())
    {
        return bitcast_round_trip(kernel, a, ty);
    }
    if !ty.is_int() {
        return None;
    }
    match (&data.kind, data.args.as_slice()) {
        (InstKind::IBinary(op), &[a, b]) => {
            let shift = matches!(
                op,
                IBinOp::Shl | IBinOp::ShrU | IBinOp::ShrS | IBinOp::Rotl | IBinOp::Rotr
            );
            let zero_right = matches!(op, IBinOp::Add | IBinOp::Sub | IBinOp::Or | IBinOp::Xor);
            let one = matches!(op, IBinOp::Mul | IBinOp::DivU | IBinOp::DivS);
            // Shift amounts are taken modulo the width.
            let neutral = |c: u64| {
                (zero_right && c == 0)
                    || (shift && c.is_multiple_of(u64::from(ty.bits())))
                    || (one && c == 1)
                    || (*op == IBinOp::And && c == ty.mask())
            };
            let idempotent = matches!(
                op,
                IBinOp::And
                    | IBinOp::Or
                    | IBinOp::MinU
                    | IBinOp::MinS
                    | IBinOp::MaxU
                    | IBinOp::MaxS
            );
            if a == b && idempotent {
                let tys = [ty, ty];
                return probe_passes(&data.kind, &tys, ty, |p| vec![p, p]).then_some(a);
            }
            let commutes = matches!(
                op,
                IBinOp::Add | IBinOp::Or | IBinOp::Xor | IBinOp::Mul | IBinOp::And
            );
            let (x, k, x_first) = match (known(a), known(b)) {
                (_, Some(c)) if neutral(c) => (a, c, true),
                (Some(c), _) if commutes && neutral(c) => (b, c, false),
                _ => return None,
            };
            let x_ty = kernel.value_type(x);
            let args = |p: u64| if x_first { [p, k] } else { [k, p] };
            probe_passes(&data.kind, &[x_ty, x_ty], x_ty, |p| args(p).to_vec()).then_some(x)
        }
        (InstKind::BitInsert, &[base, ins, off, width]) => {
            let (o, w) = (known(off)?, known(width)?);
            if w != 0 {
                return None;
            }
            let ins_bits = known(ins).unwrap_or(0);
            let tys = [ty, ty, Type::I32, Type::I32];
            probe_passes(&data.kind, &tys, ty, |p| vec![p, ins_bits, o, w]).then_some(base)
        }
        (InstKind::Icmp(cc), &[z, c]) => bool_round_trip(kernel, *cc, z, known(c)?),
        _ => None,
    }
}

/// `x` when `a` is `bitcast x` and `x` already has the type `ty` a bitcast
/// of `a` gives: a bitcast keeps every bit, so the two cancel.
fn bitcast_round_trip(kernel: &Kernel, a: Value, ty: Type) -> Option<Value> {
    let ValueDef::Result { inst, .. } = kernel.values[a].def else {
        return None;
    };
    let data = &kernel.insts[inst];
    match (&data.kind, data.args.as_slice()) {
        (
            InstKind::Cast {
                op: CastOp::Bitcast,
                ..
            },
            &[x],
        ) if kernel.value_type(x) == ty => Some(x),
        _ => None,
    }
}

/// `b` when `icmp cc (zext/sext b), c` equals `b` for both values of `b`.
fn bool_round_trip(kernel: &Kernel, cc: IntCC, z: Value, c: u64) -> Option<Value> {
    let ValueDef::Result { inst, .. } = kernel.values[z].def else {
        return None;
    };
    let data = &kernel.insts[inst];
    let (InstKind::Cast { op, to }, &[b]) = (&data.kind, data.args.as_slice()) else {
        return None;
    };
    if !matches!(op, CastOp::Zext | CastOp::Sext) || kernel.value_type(b) != Type::I1 {
        return None;
    }
    let cast = data.kind.clone();
    let cmp = InstKind::Icmp(cc);
    let proven = [0u64, 1].into_iter().all(|bit| {
        let mut wide = [0u64];
        let mut out = [0u64];
        eval_pure(&cast, &[Type::I1], &[bit], &mut wide)
            && eval_pure(&cmp, &[*to, *to], &[wide[0], c], &mut out)
            && out[0] == bit
    });
    proven.then_some(b)
}

/// True when the one-result instruction `kind` gives back the probe operand
/// for a spread of values of `ty` (`args` places the probe among the others).
fn probe_passes(
    kind: &InstKind,
    arg_tys: &[Type],
    ty: Type,
    args: impl Fn(u64) -> Vec<u64>,
) -> bool {
    let m = ty.mask();
    let probes = [
        0,
        1,
        2,
        m,
        m >> 1,
        (m >> 1) + 1,
        0x5555_5555_5555_5555 & m,
        0x8000_0000_0000_0001 & m,
        0x1234_5678_9abc_def0 & m,
    ];
    probes.into_iter().map(|p| p & m).all(|p| {
        let mut out = [0u64];
        eval_pure(kind, arg_tys, &args(p), &mut out) && out[0] == p
    })
}
