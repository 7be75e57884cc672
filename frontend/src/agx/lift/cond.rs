//! AGX compare conditions (agx.md §3.2): `icond` on operands extended to 32 bits,
//! `fcond` on FTZ'd FP32 values. Code bit 3 inverts (exec instructions, ballots).

use wavejit_ir::{FloatCC, IBinOp, InstKind, IntCC, Type, Value};

use super::alu_float::{mode_in32, read_f32};
use super::ctx::Ctx;
use super::error::LiftError;
use crate::agx::{Instr, Operand};

/// `cc(A, B)` for an integer condition code (0..=15) as `i1`.
pub(crate) fn int_cond(
    ctx: &mut Ctx,
    instr: &Instr,
    code: u8,
    a: &Operand,
    b: &Operand,
) -> Result<Value, LiftError> {
    // Bit 2: sign-extend both operands from their own size.
    let signed = code & 4 != 0;
    let cc = match code & 7 {
        0 | 4 => IntCC::Eq,
        1 => IntCC::Ult,
        2 => IntCC::Ugt,
        5 => IntCC::Slt,
        6 => IntCC::Sgt,
        c => {
            return Err(
                ctx.unsupported(instr, format!("integer condition code {c} is undocumented"))
            );
        }
    };
    let x = ctx.read_int(a, Type::I32, signed)?;
    let y = ctx.read_int(b, Type::I32, signed)?;
    let r = ctx.icmp(cc, x, y);
    Ok(if code & 8 != 0 { ctx.not1(r) } else { r })
}

fn fcmp(ctx: &mut Ctx, cc: FloatCC, a: Value, b: Value) -> Value {
    ctx.b.ins(
        InstKind::Fcmp {
            cc,
            mode: mode_in32(),
        },
        &[a, b],
    )
}

/// `cc(A, B)` for a float condition code (0..=15) as `i1`.
pub(crate) fn float_cond(
    ctx: &mut Ctx,
    instr: &Instr,
    code: u8,
    a: &Operand,
    b: &Operand,
) -> Result<Value, LiftError> {
    let x = read_f32(ctx, a)?;
    let y = read_f32(ctx, b)?;
    let r = match code & 7 {
        0 => fcmp(ctx, FloatCC::Eq, x, y),
        1 => fcmp(ctx, FloatCC::Lt, x, y),
        2 => fcmp(ctx, FloatCC::Gt, x, y),
        5 => fcmp(ctx, FloatCC::Ge, x, y),
        6 => fcmp(ctx, FloatCC::Le, x, y),
        // ltn / gtn: "NaN loses": true when B is NaN and A is not (minNum/maxNum).
        c @ (3 | 7) => {
            let cc = if c == 3 { FloatCC::Lt } else { FloatCC::Gt };
            let ord = fcmp(ctx, cc, x, y);
            let b_nan = fcmp(ctx, FloatCC::Uno, y, y);
            let a_num = fcmp(ctx, FloatCC::Ord, x, x);
            let nan_loses = ctx.bin(IBinOp::And, b_nan, a_num);
            ctx.bin(IBinOp::Or, ord, nan_loses)
        }
        c => {
            return Err(ctx.unsupported(instr, format!("float condition code {c} is undocumented")));
        }
    };
    Ok(if code & 8 != 0 { ctx.not1(r) } else { r })
}
