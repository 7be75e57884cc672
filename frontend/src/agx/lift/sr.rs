//! get_sr (Mesa `mov rX, <sr>`): special registers as IR builtins (agx.md §2.3, §8.3).

use wavejit_ir::{Builtin, CastOp, IBinOp, IUnOp, InstKind, Type, Value};

use super::alu_float::dest;
use super::ctx::Ctx;
use super::error::LiftError;
use crate::agx::{Instr, ModField};

fn builtin(ctx: &mut Ctx, b: Builtin) -> Value {
    ctx.b.ins(InstKind::Builtin(b), &[])
}

/// Bit mask (i32) of the SIMD-group's active lanes.
pub(crate) fn active_mask(ctx: &mut Ctx) -> Value {
    let e = ctx.exec();
    let t = ctx.i1c(true);
    let bits = ctx.b.ins(InstKind::Ballot, &[t, e]);
    ctx.cast(CastOp::Trunc, Type::I32, bits)
}

fn popcount(ctx: &mut Ctx, v: Value) -> Value {
    ctx.b.ins(InstKind::IUnary(IUnOp::Popcnt), &[v])
}

pub(crate) fn lift(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    let d = *dest(instr)?;
    let sr = instr.modifier(ModField::Sr).unwrap_or(u32::MAX);
    let v = match sr {
        0..=2 => builtin(ctx, Builtin::WorkgroupId(sr as u8)),
        4..=6 => builtin(ctx, Builtin::WorkgroupSize((sr - 4) as u8)),
        8..=10 => builtin(ctx, Builtin::WorkgroupSize((sr - 8) as u8)),
        12 | 13 => builtin(ctx, Builtin::WorkgroupSize((sr - 12) as u8)),
        // One emulated core.
        20 => ctx.i32c(0),
        48..=50 => builtin(ctx, Builtin::LocalId((sr - 48) as u8)),
        51 => builtin(ctx, Builtin::LocalIndex),
        52 => builtin(ctx, Builtin::LaneId),
        53 => builtin(ctx, Builtin::WaveId),
        56..=59 => {
            // Active lanes below this one / in total, within the quad (56, 57) or
            // the SIMD-group (58, 59).
            let mut mask = active_mask(ctx);
            let lane = builtin(ctx, Builtin::LaneId);
            if sr <= 57 {
                let three = ctx.i32c(3);
                let nq = ctx.i32c(!3);
                let base = ctx.bin(IBinOp::And, lane, nq);
                let q = ctx.bin(IBinOp::ShrU, mask, base);
                let f = ctx.i32c(0xf);
                mask = ctx.bin(IBinOp::And, q, f);
                let l = ctx.bin(IBinOp::And, lane, three);
                return finish(ctx, instr, &d, sr, mask, l);
            }
            return finish(ctx, instr, &d, sr, mask, lane);
        }
        // Every compute lane is a real thread.
        63 => ctx.i32c(1),
        80..=82 => {
            let dim = (sr - 80) as u8;
            let id = builtin(ctx, Builtin::WorkgroupId(dim));
            let size = builtin(ctx, Builtin::WorkgroupSize(dim));
            let local = builtin(ctx, Builtin::LocalId(dim));
            let base = ctx.bin(IBinOp::Mul, id, size);
            ctx.bin(IBinOp::Add, base, local)
        }
        _ => {
            return Err(ctx.unsupported(
                instr,
                format!("special register {sr} has no compute meaning here"),
            ));
        }
    };
    ctx.write_dest(&d, v)
}

/// Writes the active-index (even SR) or active-count (odd SR) of `mask` for `lane`.
fn finish(
    ctx: &mut Ctx,
    _instr: &Instr,
    d: &crate::agx::Operand,
    sr: u32,
    mask: Value,
    lane: Value,
) -> Result<(), LiftError> {
    let v = if sr % 2 == 1 {
        popcount(ctx, mask)
    } else {
        let one = ctx.i32c(1);
        let bit = ctx.bin(IBinOp::Shl, one, lane);
        let below = ctx.bin(IBinOp::Sub, bit, one);
        let m = ctx.bin(IBinOp::And, mask, below);
        popcount(ctx, m)
    };
    ctx.write_dest(d, v)
}
