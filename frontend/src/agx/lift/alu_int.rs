//! Integer ALU (agx.md §5.1-§5.6): mov_imm, iadd/imadd with shift and saturate,
//! bitop truth tables, the shift/bitfield family, bitrev/popcount/ffs/intl, csel.

use wavejit_ir::{IBinOp, IUnOp, IntCC, Type, Value};

use super::alu_float::dest;
use super::cond::{float_cond, int_cond};
use super::ctx::{Ctx, int_type};
use super::error::LiftError;
use crate::agx::{ImmField, Instr, ModField, Opcode, Operand};

pub(crate) fn handles(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Ldimm16
            | Ldimm32
            | Iadd
            | Isub
            | Imul
            | Imadd
            | Imsub
            | Shl
            | Shr
            | Bfi
            | Bfeil
            | Extr
            | Shlhi
            | Shrhi
            | Asr
            | Asrh
            | NotA
            | Mov
            | Not
            | MovA
            | Zero
            | And
            | Andn1
            | Andn2
            | Xor
            | Or
            | Nor
            | Xnor
            | Orn1
            | Orn2
            | Nand
            | One
            | Bitrev
            | Popcnt
            | Ffs
            | Intl
            | Icsel
            | Fcsel
    )
}

fn src(instr: &Instr, i: usize) -> Result<Operand, LiftError> {
    instr
        .srcs
        .get(i)
        .copied()
        .ok_or_else(|| LiftError::Unsupported {
            pc: instr.pc,
            text: instr.to_string(),
            why: format!("missing source {i}"),
        })
}

pub(crate) fn lift(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    use Opcode::*;
    let d = *dest(instr)?;
    let r = match instr.opcode {
        Ldimm16 | Ldimm32 => {
            let v = instr.imm(ImmField::Imm).unwrap_or(0) as u64;
            ctx.iconst(int_type(d.size), v)
        }
        Iadd | Isub => add(ctx, instr, &d)?,
        Imul | Imadd | Imsub => madd(ctx, instr, &d)?,
        Shl | Shr | Bfi | Bfeil | Extr | Shlhi | Shrhi | Asr | Asrh => shift(ctx, instr)?,
        Bitrev | Popcnt | Ffs => {
            let a = ctx.read_int(&src(instr, 0)?, Type::I32, false)?;
            match instr.opcode {
                Bitrev => ctx.b.ins(wavejit_ir::InstKind::IUnary(IUnOp::Bitrev), &[a]),
                Popcnt => ctx.b.ins(wavejit_ir::InstKind::IUnary(IUnOp::Popcnt), &[a]),
                _ => {
                    // Find *last* set: 31 - clz, and 0xFFFFFFFF for 0 (clz(0) = 32).
                    let lz = ctx.b.ins(wavejit_ir::InstKind::IUnary(IUnOp::Clz), &[a]);
                    let k = ctx.i32c(31);
                    ctx.bin(IBinOp::Sub, k, lz)
                }
            }
        }
        Intl => {
            let a = ctx.read_int(&src(instr, 0)?, Type::I32, false)?;
            let b = ctx.read_int(&src(instr, 1)?, Type::I32, false)?;
            let ea = spread_bits(ctx, a);
            let eb = spread_bits(ctx, b);
            let one = ctx.i32c(1);
            let ob = ctx.bin(IBinOp::Shl, eb, one);
            ctx.bin(IBinOp::Or, ea, ob)
        }
        Icsel | Fcsel => {
            let code = instr.modifier(ModField::Condition).unwrap_or(0) as u8;
            let (a, b) = (src(instr, 0)?, src(instr, 1)?);
            let c = if instr.opcode == Icsel {
                int_cond(ctx, instr, code, &a, &b)?
            } else {
                float_cond(ctx, instr, code, &a, &b)?
            };
            // X and Y are raw bits of the destination's size: no flush, no NaN rule.
            let ty = int_type(d.size);
            let x = ctx.read_int(&src(instr, 2)?, ty, false)?;
            let y = ctx.read_int(&src(instr, 3)?, ty, false)?;
            ctx.select(c, x, y)
        }
        _ => bitop(ctx, instr)?,
    };
    ctx.write_dest(&d, r)
}

/// Spreads the low 16 bits of `x` to the even bit positions (Morton order).
fn spread_bits(ctx: &mut Ctx, x: Value) -> Value {
    let m = ctx.i32c(0xffff);
    let mut x = ctx.bin(IBinOp::And, x, m);
    for (shift, mask) in [
        (8u32, 0x00ff_00ffu32),
        (4, 0x0f0f_0f0f),
        (2, 0x3333_3333),
        (1, 0x5555_5555),
    ] {
        let s = ctx.i32c(shift);
        let t = ctx.bin(IBinOp::Shl, x, s);
        let o = ctx.bin(IBinOp::Or, x, t);
        let m = ctx.i32c(mask);
        x = ctx.bin(IBinOp::And, o, m);
    }
    x
}

/// The 16 bitop truth tables on 32-bit values.
fn bitop(ctx: &mut Ctx, instr: &Instr) -> Result<Value, LiftError> {
    use Opcode::*;
    let a = ctx.read_int(&src(instr, 0)?, Type::I32, false)?;
    let b = match instr.srcs.get(1) {
        Some(op) if op.is_present() => ctx.read_int(op, Type::I32, false)?,
        _ => ctx.i32c(0),
    };
    let ones = ctx.i32c(u32::MAX);
    let not = |ctx: &mut Ctx, v: Value| {
        let ones = ctx.i32c(u32::MAX);
        ctx.bin(IBinOp::Xor, v, ones)
    };
    Ok(match instr.opcode {
        Zero => ctx.i32c(0),
        One => ones,
        // 0xA `mov`; 0xC/0x3 (B-only tables) return A in applegpu's hardware-checked model.
        Mov | NotA | MovA => a,
        Not => not(ctx, a),
        And => ctx.bin(IBinOp::And, a, b),
        Or => ctx.bin(IBinOp::Or, a, b),
        Xor => ctx.bin(IBinOp::Xor, a, b),
        Nand => {
            let t = ctx.bin(IBinOp::And, a, b);
            not(ctx, t)
        }
        Nor => {
            let t = ctx.bin(IBinOp::Or, a, b);
            not(ctx, t)
        }
        Xnor => {
            let t = ctx.bin(IBinOp::Xor, a, b);
            not(ctx, t)
        }
        Andn1 => {
            let na = not(ctx, a);
            ctx.bin(IBinOp::And, na, b)
        }
        Andn2 => {
            let nb = not(ctx, b);
            ctx.bin(IBinOp::And, a, nb)
        }
        Orn1 => {
            let na = not(ctx, a);
            ctx.bin(IBinOp::Or, na, b)
        }
        Orn2 => {
            let nb = not(ctx, b);
            ctx.bin(IBinOp::Or, a, nb)
        }
        _ => return Err(ctx.unsupported(instr, "not a bitop")),
    })
}

fn shift_amount(instr: &Instr) -> u32 {
    instr.modifier(ModField::Shift).unwrap_or(0)
}

fn saturate_flag(instr: &Instr) -> bool {
    instr.modifier(ModField::Saturate).unwrap_or(0) != 0
}

/// `(±c) << s` in i64; the term is 0 for s >= 5.
fn shifted_term(ctx: &mut Ctx, c: Value, negate: bool, s: u32) -> Value {
    if s >= 5 {
        return ctx.i64c(0);
    }
    let c = if negate {
        let z = ctx.i64c(0);
        ctx.bin(IBinOp::Sub, z, c)
    } else {
        c
    };
    if s == 0 {
        c
    } else {
        let k = ctx.i64c(u64::from(s));
        ctx.bin(IBinOp::Shl, c, k)
    }
}

/// Clamps an exact i64 result to the signed or unsigned range of `bits`.
fn clamp(ctx: &mut Ctx, v: Value, bits: u8, signed: bool) -> Value {
    let (lo, hi) = if signed {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    } else {
        (0, (1i64 << bits) - 1)
    };
    let lo = ctx.i64c(lo as u64);
    let hi = ctx.i64c(hi as u64);
    let v = ctx.bin(IBinOp::MaxS, v, lo);
    ctx.bin(IBinOp::MinS, v, hi)
}

/// iadd/isub: `D = A + (±B << s)`.
fn add(ctx: &mut Ctx, instr: &Instr, d: &Operand) -> Result<Value, LiftError> {
    let (a_op, b_op) = (src(instr, 0)?, src(instr, 1)?);
    let a = ctx.read_int(&a_op, Type::I64, a_op.sx)?;
    let b = ctx.read_int(&b_op, Type::I64, b_op.sx)?;
    let s = shift_amount(instr);
    let term = shifted_term(ctx, b, instr.opcode == Opcode::Isub, s);
    let sum = ctx.bin(IBinOp::Add, a, term);
    let sat = saturate_flag(instr) && s == 0 && a_op.size <= 32 && b_op.size <= 32 && d.size <= 32;
    Ok(if sat {
        let signed = is_sx(&a_op) || is_sx(&b_op);
        clamp(ctx, sum, d.size, signed)
    } else {
        sum
    })
}

/// Whether an operand makes saturation signed: any source with sx, an 8-bit immediate
/// too (§5.2; its value is still zero-extended, `read_int` leaves immediates alone).
fn is_sx(op: &Operand) -> bool {
    op.sx
}

/// imadd/imsub/imul: `D = A*B + (±C << s)`.
fn madd(ctx: &mut Ctx, instr: &Instr, d: &Operand) -> Result<Value, LiftError> {
    let (a_op, b_op) = (src(instr, 0)?, src(instr, 1)?);
    let c_op = match instr.opcode {
        Opcode::Imul => None,
        _ => Some(src(instr, 2)?),
    };
    let a = ctx.read_int(&a_op, Type::I64, a_op.sx)?;
    let b = ctx.read_int(&b_op, Type::I64, b_op.sx)?;
    let c = match &c_op {
        Some(op) => ctx.read_int(op, Type::I64, op.sx)?,
        None => ctx.i64c(0),
    };
    let s = if c_op.is_some() {
        shift_amount(instr)
    } else {
        0
    };
    let negate = instr.opcode == Opcode::Imsub;
    let p = ctx.bin(IBinOp::Mul, a, b);
    let c_size = c_op.map_or(16, |o| o.size);
    let sat = saturate_flag(instr) && s == 0 && c_size <= 32 && d.size <= 32;
    if !sat {
        let term = shifted_term(ctx, c, negate, s);
        return Ok(ctx.bin(IBinOp::Add, p, term));
    }
    let signed = is_sx(&a_op) || is_sx(&b_op) || c_op.is_some_and(|o| is_sx(&o));
    if signed {
        // |A·B| < 2^63 for operands of at most 32 bits with one signed; the
        // saturating i64 add keeps the exact sum's clamp.
        let op = if negate {
            IBinOp::SubSatS
        } else {
            IBinOp::AddSatS
        };
        let r = ctx.bin(op, p, c);
        Ok(clamp(ctx, r, d.size, true))
    } else {
        // Unsigned: A·B < 2^64 - 2^33, so A·B + C cannot wrap; A·B - C floors at 0.
        let op = if negate {
            IBinOp::SubSatU
        } else {
            IBinOp::AddSatU
        };
        let r = ctx.bin(op, p, c);
        let hi = ctx.i64c((1u64 << d.size) - 1);
        Ok(ctx.bin(IBinOp::MinU, r, hi))
    }
}

/// `x << n` for any n (0 when n >= 64), in i64.
fn shl_wide(ctx: &mut Ctx, x: Value, n: Value) -> Value {
    let lim = ctx.i64c(64);
    let big = ctx.icmp(IntCC::Uge, n, lim);
    let s = ctx.bin(IBinOp::Shl, x, n);
    let z = ctx.i64c(0);
    ctx.select(big, z, s)
}

/// Logical `x >> n` for any n (0 when n >= 64), in i64.
fn shr_wide(ctx: &mut Ctx, x: Value, n: Value) -> Value {
    let lim = ctx.i64c(64);
    let big = ctx.icmp(IntCC::Uge, n, lim);
    let s = ctx.bin(IBinOp::ShrU, x, n);
    let z = ctx.i64c(0);
    ctx.select(big, z, s)
}

/// Arithmetic `x >> n` for any n (sign fill when n >= 64), in i64.
fn sar_wide(ctx: &mut Ctx, x: Value, n: Value) -> Value {
    let lim = ctx.i64c(63);
    let n = ctx.bin(IBinOp::MinU, n, lim);
    ctx.bin(IBinOp::ShrS, x, n)
}

/// The shift/bitfield family, computed in 64-bit arithmetic so that amounts of 32
/// or more shift everything out (amounts are `& 0x7F`, never masked to 31).
fn shift(ctx: &mut Ctx, instr: &Instr) -> Result<Value, LiftError> {
    use Opcode::*;
    let read = |ctx: &mut Ctx, i: usize| -> Result<Value, LiftError> {
        let op = src(instr, i)?;
        let v = ctx.read_int(&op, Type::I32, false)?;
        Ok(ctx.resize(v, Type::I64, false))
    };
    // Shl/Shr are bfi/bfeil with A = 0 and m = 0; their operands are B, C.
    let (a, b, c) = match instr.opcode {
        Shl | Shr => (ctx.i64c(0), read(ctx, 0)?, read(ctx, 1)?),
        // asr/asrh sign-extend A from its own size (a 16-bit r1l too; §5.4, test_shift [HW]).
        Asr | Asrh => {
            let op = src(instr, 0)?;
            let a = ctx.read_int(&op, Type::I32, true)?;
            (ctx.resize(a, Type::I64, false), read(ctx, 1)?, ctx.i64c(0))
        }
        _ => (read(ctx, 0)?, read(ctx, 1)?, read(ctx, 2)?),
    };
    let m = instr.imm(ImmField::Bitmask).unwrap_or(0) as u32;
    let mask = if m == 0 || m >= 32 {
        0xffff_ffffu64
    } else {
        (1u64 << m) - 1
    };
    let seven_f = ctx.i64c(0x7f);
    let ones = ctx.i64c(u64::MAX);
    let mask_v = ctx.i64c(mask);
    let not = |ctx: &mut Ctx, v: Value| ctx.bin(IBinOp::Xor, v, ones);
    let r = match instr.opcode {
        Shl | Bfi => {
            let sa = ctx.bin(IBinOp::And, c, seven_f);
            let mm = shl_wide(ctx, mask_v, sa);
            let keep = not(ctx, mm);
            let lo = ctx.bin(IBinOp::And, a, keep);
            let bm = ctx.bin(IBinOp::And, b, mask_v);
            let ins = shl_wide(ctx, bm, sa);
            ctx.bin(IBinOp::Or, lo, ins)
        }
        Shr | Bfeil => {
            let sa = ctx.bin(IBinOp::And, c, seven_f);
            let nm = not(ctx, mask_v);
            let lo = ctx.bin(IBinOp::And, a, nm);
            let sh = shr_wide(ctx, b, sa);
            let ex = ctx.bin(IBinOp::And, sh, mask_v);
            ctx.bin(IBinOp::Or, lo, ex)
        }
        Extr => {
            let sa = ctx.bin(IBinOp::And, c, seven_f);
            let k32 = ctx.i64c(32);
            let hi = ctx.bin(IBinOp::Shl, b, k32);
            let pair = ctx.bin(IBinOp::Or, hi, a);
            let sh = shr_wide(ctx, pair, sa);
            ctx.bin(IBinOp::And, sh, mask_v)
        }
        Asr | Asrh => {
            let sa = ctx.bin(IBinOp::And, b, seven_f);
            let a32 = ctx.resize(a, Type::I32, false);
            let sx = ctx.resize(a32, Type::I64, true);
            let x = if instr.opcode == Asrh {
                let k32 = ctx.i64c(32);
                ctx.bin(IBinOp::Shl, sx, k32)
            } else {
                sx
            };
            sar_wide(ctx, x, sa)
        }
        Shlhi => {
            // m' = M << max(sa-32, 0); ((B << sa) >> 32) & m' | (A & ~m').
            let sa = ctx.bin(IBinOp::And, c, seven_f);
            let k32 = ctx.i64c(32);
            let ge32 = ctx.icmp(IntCC::Uge, sa, k32);
            let up = ctx.bin(IBinOp::Sub, sa, k32);
            let zero = ctx.i64c(0);
            let up = ctx.select(ge32, up, zero);
            let down = ctx.bin(IBinOp::Sub, k32, sa);
            let down = ctx.select(ge32, zero, down);
            let t_up = shl_wide(ctx, b, up);
            let t_down = shr_wide(ctx, b, down);
            let t = ctx.select(ge32, t_up, t_down);
            let mm = shl_wide(ctx, mask_v, up);
            let part = ctx.bin(IBinOp::And, t, mm);
            let keep = not(ctx, mm);
            let rest = ctx.bin(IBinOp::And, a, keep);
            ctx.bin(IBinOp::Or, part, rest)
        }
        Shrhi => {
            // m' = (M << 32) >> min(sa, 32); ((B << 32) >> sa) & m' | (A & ~m').
            let sa = ctx.bin(IBinOp::And, c, seven_f);
            let k32 = ctx.i64c(32);
            let msa = ctx.bin(IBinOp::MinU, sa, k32);
            let m_hi = ctx.bin(IBinOp::Shl, mask_v, k32);
            let mm = ctx.bin(IBinOp::ShrU, m_hi, msa);
            let b_hi = ctx.bin(IBinOp::Shl, b, k32);
            let t = shr_wide(ctx, b_hi, sa);
            let part = ctx.bin(IBinOp::And, t, mm);
            let keep = not(ctx, mm);
            let rest = ctx.bin(IBinOp::And, a, keep);
            ctx.bin(IBinOp::Or, part, rest)
        }
        _ => return Err(ctx.unsupported(instr, "not a shift")),
    };
    Ok(r)
}
