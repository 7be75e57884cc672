//! SIMD-group and quad operations (agx.md §5.10): shuffles with the hardware's
//! quad-select quirk, reductions and exclusive scans over active lanes, ballots.
//! Every lane of the IR wave runs these together (control flow is wave-uniform),
//! so cross-lane reads use an all-true mask and see inactive lanes too.

use wavejit_ir::{Builtin, CastOp, FBinOp, IBinOp, InstKind, IntCC, ShuffleKind, Type, Value};

use super::alu_float::{dest, mode16, mode32};
use super::cond::{float_cond, int_cond};
use super::ctx::{Ctx, int_type};
use super::error::LiftError;
use super::sr::active_mask;
use crate::agx::{Instr, ModField, Opcode};

pub(crate) fn handles(op: Opcode) -> bool {
    use Opcode::*;
    matches!(op, Shuffle | Simd | Quad | Ballot | IcmpBallot | FcmpBallot)
}

fn lane_id(ctx: &mut Ctx) -> Value {
    ctx.b.ins(InstKind::Builtin(Builtin::LaneId), &[])
}

/// Value of `v` in lane `lane` (i32), read regardless of exec.
fn read_lane(ctx: &mut Ctx, v: Value, lane: Value) -> Value {
    let t = ctx.i1c(true);
    ctx.b
        .ins(InstKind::Shuffle(ShuffleKind::Index), &[t, v, lane])
}

pub(crate) fn lift(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    use Opcode::*;
    let d = *dest(instr)?;
    let simd = instr.modifier(ModField::Quad).unwrap_or(1) != 0;
    let r = match instr.opcode {
        Shuffle => shuffle(ctx, instr, &d)?,
        Simd | Quad => reduce(ctx, instr, instr.opcode == Simd)?,
        _ => {
            let cond = match instr.opcode {
                Ballot => ctx.i1c(true),
                IcmpBallot | FcmpBallot => {
                    let code = instr.modifier(ModField::Condition).unwrap_or(0) as u8;
                    let (a, b) = (instr.srcs[0], instr.srcs[1]);
                    if instr.opcode == IcmpBallot {
                        int_cond(ctx, instr, code, &a, &b)?
                    } else {
                        float_cond(ctx, instr, code, &a, &b)?
                    }
                }
                _ => return Err(ctx.unsupported(instr, "not a SIMD-group instruction")),
            };
            let e = ctx.exec();
            let bits = ctx.b.ins(InstKind::Ballot, &[e, cond]);
            let bits = ctx.cast(CastOp::Trunc, Type::I32, bits);
            if simd || instr.opcode == Ballot {
                bits
            } else {
                // Quad ballot: this quad's bits at the bottom (model; compilers `& 15`).
                let lane = lane_id(ctx);
                let nq = ctx.i32c(!3);
                let base = ctx.bin(IBinOp::And, lane, nq);
                ctx.bin(IBinOp::ShrU, bits, base)
            }
        }
    };
    ctx.write_dest(&d, r)
}

fn shuffle(ctx: &mut Ctx, instr: &Instr, d: &crate::agx::Operand) -> Result<Value, LiftError> {
    let ty = int_type(d.size);
    let a = ctx.read_int(&instr.srcs[0], ty, false)?;
    let b = ctx.read_int(&instr.srcs[1], Type::I32, false)?;
    let b = {
        let m = ctx.i32c(0xffff);
        ctx.bin(IBinOp::And, b, m)
    };
    let op = instr.modifier(ModField::Op).unwrap_or(0);
    let rotate = instr.modifier(ModField::Rotate).unwrap_or(0) != 0;
    let simd = instr.modifier(ModField::Quad).unwrap_or(1) != 0;
    let t = lane_id(ctx);
    let c3 = ctx.i32c(3);
    let c31 = ctx.i32c(31);
    let c32 = ctx.i32c(32);
    let two = ctx.i32c(2);
    if !simd {
        // Quad forms (model): ordinary per-lane shuffles inside the quad.
        let nq = ctx.i32c(!3);
        let q = ctx.bin(IBinOp::And, t, nq);
        let l = ctx.bin(IBinOp::And, t, c3);
        let (within, valid) = match op {
            0 => (ctx.bin(IBinOp::And, b, c3), ctx.i1c(true)),
            1 => {
                let x = ctx.bin(IBinOp::Xor, l, b);
                let ok = {
                    let four = ctx.i32c(4);
                    ctx.icmp(IntCC::Ult, x, four)
                };
                (ctx.bin(IBinOp::And, x, c3), ok)
            }
            2 => {
                let x = ctx.bin(IBinOp::Sub, l, b);
                let ok = ctx.icmp(IntCC::Uge, l, b);
                let ok = if rotate { ctx.i1c(true) } else { ok };
                (ctx.bin(IBinOp::And, x, c3), ok)
            }
            _ => {
                let x = ctx.bin(IBinOp::Add, l, b);
                let ok = {
                    let four = ctx.i32c(4);
                    ctx.icmp(IntCC::Ult, x, four)
                };
                let ok = if rotate { ctx.i1c(true) } else { ok };
                (ctx.bin(IBinOp::And, x, c3), ok)
            }
        };
        let src = ctx.bin(IBinOp::Or, q, within);
        let r = read_lane(ctx, a, src);
        return Ok(ctx.select(valid, r, a));
    }
    // Source lane before the quad-select quirk, and whether it is in range.
    let (target, valid) = match op {
        0 => (b, ctx.icmp(IntCC::Ult, b, c32)),
        1 => {
            let x = ctx.bin(IBinOp::Xor, t, b);
            (x, ctx.icmp(IntCC::Ult, x, c32))
        }
        2 => {
            let x = ctx.bin(IBinOp::Sub, t, b);
            (x, ctx.icmp(IntCC::Uge, t, b))
        }
        _ => {
            let x = ctx.bin(IBinOp::Add, t, b);
            (x, ctx.icmp(IntCC::Ult, x, c32))
        }
    };
    let (target, valid) = if rotate {
        (ctx.bin(IBinOp::And, target, c31), ctx.i1c(true))
    } else {
        (target, valid)
    };
    let s = ctx.bin(IBinOp::ShrU, target, two);
    let seven = ctx.i32c(7);
    let s = ctx.bin(IBinOp::And, s, seven);
    let base = ctx.bin(IBinOp::Shl, s, two);
    // k_s = OR over the 4 lanes of quad s (active or not) of B & 3.
    let mut k = ctx.i32c(0);
    for j in 0..4u32 {
        let jv = ctx.i32c(j);
        let lane = ctx.bin(IBinOp::Or, base, jv);
        let bj = read_lane(ctx, b, lane);
        let bj = ctx.bin(IBinOp::And, bj, c3);
        k = ctx.bin(IBinOp::Or, k, bj);
    }
    let within = match op {
        0 => k,
        1 => ctx.bin(IBinOp::Xor, t, k),
        2 => ctx.bin(IBinOp::Sub, t, k),
        _ => ctx.bin(IBinOp::Add, t, k),
    };
    let within = ctx.bin(IBinOp::And, within, c3);
    let src = ctx.bin(IBinOp::Or, base, within);
    let r = read_lane(ctx, a, src);
    Ok(ctx.select(valid, r, a))
}

/// Reduction operators (op field = bits {28, 38-40, 47}).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum RedOp {
    And,
    Or,
    Xor,
    IAdd,
    SMin,
    SMax,
    UMin,
    UMax,
    FAdd,
    FMul,
    FMin,
    FMax,
}

/// Reductions and exclusive scans over the active lanes of the SIMD-group or quad,
/// folded in lane order from the operator's identity.
fn reduce(ctx: &mut Ctx, instr: &Instr, simd: bool) -> Result<Value, LiftError> {
    let op = match instr.modifier(ModField::Op).unwrap_or(u32::MAX) {
        0 => RedOp::And,
        1 => RedOp::FAdd,
        2 => RedOp::Or,
        3 => RedOp::FMul,
        4 => RedOp::Xor,
        5 => RedOp::FMin,
        7 => RedOp::FMax,
        16 => RedOp::IAdd,
        20 => RedOp::SMin,
        22 => RedOp::SMax,
        28 => RedOp::UMin,
        30 => RedOp::UMax,
        o => return Err(ctx.unsupported(instr, format!("reduction op {o}"))),
    };
    let prefix = instr.modifier(ModField::Prefix).unwrap_or(0) != 0;
    let src = instr.srcs[0];
    let bits = src.size.min(32);
    let ity = int_type(bits);
    let v = ctx.read_int(&src, ity, false)?;
    let float = matches!(op, RedOp::FAdd | RedOp::FMul | RedOp::FMin | RedOp::FMax);
    let fty = if bits == 16 { Type::F16 } else { Type::F32 };
    let v = if float {
        ctx.cast(CastOp::Bitcast, fty, v)
    } else {
        v
    };
    let mask = active_mask(ctx);
    let t = lane_id(ctx);
    let mut acc = identity(ctx, op, bits);
    let (first, count) = if simd {
        (ctx.i32c(0), 32)
    } else {
        let nq = ctx.i32c(!3);
        (ctx.bin(IBinOp::And, t, nq), 4)
    };
    let one = ctx.i32c(1);
    for j in 0..count {
        let jv = ctx.i32c(j);
        let lane = ctx.bin(IBinOp::Add, first, jv);
        let vj = read_lane(ctx, v, lane);
        let bit = ctx.bin(IBinOp::ShrU, mask, lane);
        let bit = ctx.bin(IBinOp::And, bit, one);
        let zero = ctx.i32c(0);
        let mut take = ctx.icmp(IntCC::Ne, bit, zero);
        if prefix {
            let below = ctx.icmp(IntCC::Ult, lane, t);
            take = ctx.bin(IBinOp::And, take, below);
        }
        let next = combine(ctx, op, acc, vj, bits);
        acc = ctx.select(take, next, acc);
    }
    Ok(if float {
        ctx.cast(CastOp::Bitcast, ity, acc)
    } else {
        acc
    })
}

fn identity(ctx: &mut Ctx, op: RedOp, bits: u8) -> Value {
    let ity = int_type(bits);
    let half = bits == 16;
    let ones = if half { 0xffff } else { 0xffff_ffff };
    let smax = if half { 0x7fff } else { 0x7fff_ffff };
    let smin = if half { 0x8000 } else { 0x8000_0000 };
    let (fty, fbits) = match op {
        RedOp::FAdd => (true, if half { 0x8000 } else { 0x8000_0000 }),
        RedOp::FMul => (true, if half { 0x3c00 } else { 0x3f80_0000 }),
        RedOp::FMin => (true, if half { 0x7c00 } else { 0x7f80_0000 }),
        RedOp::FMax => (true, if half { 0xfc00 } else { 0xff80_0000 }),
        _ => (false, 0),
    };
    if fty {
        let t = if half { Type::F16 } else { Type::F32 };
        return ctx.iconst(t, fbits);
    }
    let v = match op {
        RedOp::And | RedOp::UMin => ones,
        RedOp::SMin => smax,
        RedOp::SMax => smin,
        _ => 0,
    };
    ctx.iconst(ity, v)
}

fn combine(ctx: &mut Ctx, op: RedOp, a: Value, b: Value, bits: u8) -> Value {
    let fmode = if bits == 16 {
        mode16(false)
    } else {
        mode32(false)
    };
    let fty = if bits == 16 { Type::F16 } else { Type::F32 };
    let ibin = |ctx: &mut Ctx, o: IBinOp| ctx.bin(o, a, b);
    match op {
        RedOp::And => ibin(ctx, IBinOp::And),
        RedOp::Or => ibin(ctx, IBinOp::Or),
        RedOp::Xor => ibin(ctx, IBinOp::Xor),
        RedOp::IAdd => ibin(ctx, IBinOp::Add),
        RedOp::SMin => ibin(ctx, IBinOp::MinS),
        RedOp::SMax => ibin(ctx, IBinOp::MaxS),
        RedOp::UMin => ibin(ctx, IBinOp::MinU),
        RedOp::UMax => ibin(ctx, IBinOp::MaxU),
        RedOp::FAdd | RedOp::FMul => {
            // Fused forms like fadd/fmul: a·1 + b and a·b + 0, one rounding.
            let (x, y, z) = if op == RedOp::FAdd {
                let one = one_of(ctx, fty);
                (a, one, b)
            } else {
                let zero = ctx.iconst(fty, 0);
                (a, b, zero)
            };
            ctx.b.ins(InstKind::Fma { mode: fmode }, &[x, y, z])
        }
        RedOp::FMin | RedOp::FMax => {
            let o = if op == RedOp::FMin {
                FBinOp::Min
            } else {
                FBinOp::Max
            };
            ctx.b.ins(InstKind::FBinary { op: o, mode: fmode }, &[a, b])
        }
    }
}

fn one_of(ctx: &mut Ctx, fty: Type) -> Value {
    if fty == Type::F16 {
        ctx.iconst(Type::F16, 0x3c00)
    } else {
        ctx.iconst(Type::F32, 0x3f80_0000)
    }
}
