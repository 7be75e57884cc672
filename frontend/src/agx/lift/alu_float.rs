//! Float ALU (agx.md §5.8, §5.9, §5.7, §6, §7): fadd/fmul/fmadd 16/32, pow_fixup,
//! funops and convert.

use wavejit_ir::semantics::convert::f32_to_f16_rne;
use wavejit_ir::{
    CastOp, Denorm, FBinOp, FUnOp, FloatCC, FloatFormat, FloatMode, IBinOp, InstKind, NanMode,
    Round, SpecialFn, Type, Value,
};

use super::ctx::Ctx;
use super::error::LiftError;
use crate::agx::{Instr, ModField, Opcode, Operand, OperandKind, minifloat_value};

/// FP32 rules: FTZ in and out keeping the sign, canonical NaN, RNE, optional saturate.
pub(crate) fn mode32(sat: bool) -> FloatMode {
    FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        denorm_out: Denorm::FlushKeepSign,
        nan: NanMode::Canonical(0x7fc0_0000),
        round: Round::NearestEven,
        sat,
        flags: false,
    }
}

/// Compares and widening conversions: FP32 denormal inputs read as zero.
pub(crate) fn mode_in32() -> FloatMode {
    FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        ..FloatMode::IEEE
    }
}

/// FP16 rules: denormals kept, canonical NaN 0x7E00, RNE, optional saturate.
pub(crate) fn mode16(sat: bool) -> FloatMode {
    FloatMode {
        denorm_in: Denorm::Preserve,
        denorm_out: Denorm::Preserve,
        nan: NanMode::Canonical(0x7e00),
        round: Round::NearestEven,
        sat,
        flags: false,
    }
}

pub(crate) fn handles(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Fadd | Fmul
            | Ffma
            | Hadd
            | Hmul
            | Hfma
            | PowFixup
            | Floor
            | Ceil
            | Trunc
            | Rint
            | Rcp
            | Rsqrt
            | Rsqrts
            | Log2
            | Exp2
            | Sinr
            | Sinc
            | Dfdx
            | Dfdy
            | U8ToF
            | S8ToF
            | U16ToF
            | S16ToF
            | U32ToF
            | S32ToF
            | FToU16
            | FToS16
            | FToU32
            | FToS32
    )
}

/// Applies `.abs` then `.neg` to raw float bits (integer `i16`/`i32`).
fn modifiers(ctx: &mut Ctx, bits: Value, op: &Operand) -> Value {
    let ty = ctx.ty(bits);
    let sign = 1u64 << (ty.bits() - 1);
    let mut v = bits;
    if op.abs {
        let m = ctx.iconst(ty, sign - 1);
        v = ctx.bin(IBinOp::And, v, m);
    }
    if op.neg {
        let m = ctx.iconst(ty, sign);
        v = ctx.bin(IBinOp::Xor, v, m);
    }
    v
}

/// A `float` source as f32: 16-bit sources widen exactly, 8-bit immediates are the
/// AGX minifloat; abs then neg.
pub(crate) fn read_f32(ctx: &mut Ctx, op: &Operand) -> Result<Value, LiftError> {
    let bits = match op.kind {
        OperandKind::FImm => ctx.i32c(minifloat_value(op.value as u8).to_bits()),
        OperandKind::Imm => ctx.i32c(op.value as u32),
        _ if op.size == 16 => {
            let h = ctx.read_raw(op)?;
            let h = ctx.cast(CastOp::Bitcast, Type::F16, h);
            let f = ctx.b.ins(
                InstKind::Fcvt {
                    from: FloatFormat::F16,
                    to: FloatFormat::F32,
                    mode: FloatMode::IEEE,
                },
                &[h],
            );
            ctx.cast(CastOp::Bitcast, Type::I32, f)
        }
        _ => {
            let v = ctx.read_raw(op)?;
            ctx.resize(v, Type::I32, false)
        }
    };
    let bits = modifiers(ctx, bits, op);
    Ok(ctx.cast(CastOp::Bitcast, Type::F32, bits))
}

/// A `half` source as f16.
fn read_f16(ctx: &mut Ctx, op: &Operand) -> Result<Value, LiftError> {
    let bits = match op.kind {
        OperandKind::FImm => {
            let h = f32_to_f16_rne(minifloat_value(op.value as u8).to_bits());
            ctx.i16c(h)
        }
        _ => {
            let v = ctx.read_raw(op)?;
            ctx.resize(v, Type::I16, false)
        }
    };
    let bits = modifiers(ctx, bits, op);
    Ok(ctx.cast(CastOp::Bitcast, Type::F16, bits))
}

/// f32 -> f16 for a 16-bit destination: RNE, FP16 denormals kept, NaN 0x7E00.
pub(crate) fn narrow_f16(ctx: &mut Ctx, v: Value) -> Value {
    ctx.b.ins(
        InstKind::Fcvt {
            from: FloatFormat::F32,
            to: FloatFormat::F16,
            mode: mode16(false),
        },
        &[v],
    )
}

/// Writes an f32 result (already rounded, flushed and saturated) to a 16- or
/// 32-bit destination (the 16-bit case rounds a second time).
pub(crate) fn write_f32(ctx: &mut Ctx, dest: &Operand, v: Value) -> Result<(), LiftError> {
    let v = if dest.size == 16 {
        narrow_f16(ctx, v)
    } else {
        v
    };
    let bits = ctx.cast(CastOp::Bitcast, ctx.ty(v).as_int(), v);
    ctx.write_dest(dest, bits)
}

/// `x` through the FP32 result rules (flush, canonical NaN, saturate): fma(x, 1, -0).
fn finish32(ctx: &mut Ctx, x: Value, sat: bool) -> Value {
    let one = ctx.f32c(1.0);
    let nz = ctx.f32c(-0.0);
    ctx.b
        .ins(InstKind::Fma { mode: mode32(sat) }, &[x, one, nz])
}

/// fmadd32 with the FP32 output rule judged before rounding: an exact result below
/// 2^-126 in magnitude becomes ±0 even when it rounds up to the smallest normal
/// (agx.md §7; the IR rule `Denorm::FlushBeforeRounding`).
fn fma32(ctx: &mut Ctx, a: Value, b: Value, c: Value, sat: bool) -> Value {
    let mode = FloatMode {
        denorm_out: Denorm::FlushBeforeRounding,
        ..mode32(sat)
    };
    ctx.b.ins(InstKind::Fma { mode }, &[a, b, c])
}

fn sat_of(instr: &Instr) -> bool {
    instr.modifier(ModField::Saturate).unwrap_or(0) != 0
}

fn src(instr: &Instr, i: usize) -> Result<&Operand, LiftError> {
    instr.srcs.get(i).ok_or_else(|| LiftError::Unsupported {
        pc: instr.pc,
        text: instr.to_string(),
        why: format!("missing source {i}"),
    })
}

pub(crate) fn dest(instr: &Instr) -> Result<&Operand, LiftError> {
    instr.dests.first().ok_or_else(|| LiftError::Unsupported {
        pc: instr.pc,
        text: instr.to_string(),
        why: "missing destination".into(),
    })
}

pub(crate) fn lift(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    use Opcode::*;
    let sat = sat_of(instr);
    let d = *dest(instr)?;
    match instr.opcode {
        Ffma | Fadd | Fmul => {
            let a = read_f32(ctx, src(instr, 0)?)?;
            let (b, c) = match instr.opcode {
                Ffma => (
                    read_f32(ctx, src(instr, 1)?)?,
                    read_f32(ctx, src(instr, 2)?)?,
                ),
                Fadd => (ctx.f32c(1.0), read_f32(ctx, src(instr, 1)?)?),
                _ => (read_f32(ctx, src(instr, 1)?)?, ctx.f32c(0.0)),
            };
            let r = fma32(ctx, a, b, c, sat);
            write_f32(ctx, &d, r)
        }
        Hfma | Hadd | Hmul => {
            let a = read_f16(ctx, src(instr, 0)?)?;
            let one = ctx.i16c(0x3c00);
            let zero = ctx.i16c(0);
            let (b, c) = match instr.opcode {
                Hfma => (
                    read_f16(ctx, src(instr, 1)?)?,
                    read_f16(ctx, src(instr, 2)?)?,
                ),
                Hadd => (
                    ctx.cast(CastOp::Bitcast, Type::F16, one),
                    read_f16(ctx, src(instr, 1)?)?,
                ),
                _ => (
                    read_f16(ctx, src(instr, 1)?)?,
                    ctx.cast(CastOp::Bitcast, Type::F16, zero),
                ),
            };
            let r = ctx.b.ins(InstKind::Fma { mode: mode16(sat) }, &[a, b, c]);
            let bits = ctx.cast(CastOp::Bitcast, Type::I16, r);
            ctx.write_dest(&d, bits)
        }
        PowFixup => {
            let a = read_f32(ctx, src(instr, 0)?)?;
            let b = read_f32(ctx, src(instr, 1)?)?;
            // Operand C is always read as a 32-bit register, even when encoded 16-bit.
            let mut c_op = *src(instr, 2)?;
            if matches!(c_op.kind, OperandKind::Reg | OperandKind::Uniform) {
                c_op.value &= !1;
                c_op.size = 32;
            }
            let c = read_f32(ctx, &c_op)?;
            let r = ctx
                .b
                .ins(InstKind::PowFixup { mode: mode32(sat) }, &[a, b, c]);
            write_f32(ctx, &d, r)
        }
        Floor | Ceil | Trunc | Rint => {
            let a = read_f32(ctx, src(instr, 0)?)?;
            let op = match instr.opcode {
                Floor => FUnOp::Floor,
                Ceil => FUnOp::Ceil,
                Trunc => FUnOp::Trunc,
                _ => FUnOp::Nearest,
            };
            let r = ctx.b.ins(
                InstKind::FUnary {
                    op,
                    mode: mode32(sat),
                },
                &[a],
            );
            write_f32(ctx, &d, r)
        }
        Rcp | Rsqrt | Log2 | Exp2 => {
            let a = read_f32(ctx, src(instr, 0)?)?;
            let func = match instr.opcode {
                Rcp => SpecialFn::Rcp,
                Rsqrt => SpecialFn::Rsqrt,
                Log2 => SpecialFn::Log2,
                _ => SpecialFn::Exp2,
            };
            let r = ctx.b.ins(
                InstKind::Special {
                    func,
                    mode: mode32(sat),
                },
                &[a],
            );
            write_f32(ctx, &d, r)
        }
        Rsqrts => {
            let a = read_f32(ctx, src(instr, 0)?)?;
            let r = rsqrt_special(ctx, a);
            let r = finish32(ctx, r, sat);
            write_f32(ctx, &d, r)
        }
        Sinr | Sinc => {
            let a = read_f32(ctx, src(instr, 0)?)?;
            let r = if instr.opcode == Sinr {
                sin_pt_1(ctx, a)
            } else {
                sin_pt_2(ctx, a)
            };
            let r = finish32(ctx, r, sat);
            write_f32(ctx, &d, r)
        }
        Dfdx | Dfdy => Err(ctx.unsupported(instr, "derivatives exist only in fragment shaders")),
        U8ToF | S8ToF | U16ToF | S16ToF | U32ToF | S32ToF => int_to_float(ctx, instr, &d),
        _ => float_to_int(ctx, instr, &d),
    }
}

/// `convert` round field: 0 rtz, 1 rte; 2/3 assumed rtn/rtp (undocumented).
fn round_of(instr: &Instr) -> Round {
    match instr.modifier(ModField::Round).unwrap_or(0) {
        0 => Round::TowardZero,
        1 => Round::NearestEven,
        2 => Round::Down,
        _ => Round::Up,
    }
}

fn int_to_float(ctx: &mut Ctx, instr: &Instr, d: &Operand) -> Result<(), LiftError> {
    use Opcode::*;
    let (from, signed) = match instr.opcode {
        U8ToF => (Type::I8, false),
        S8ToF => (Type::I8, true),
        U16ToF => (Type::I16, false),
        S16ToF => (Type::I16, true),
        U32ToF => (Type::I32, false),
        _ => (Type::I32, true),
    };
    let x = ctx.read_int(src(instr, 0)?, Type::I32, false)?;
    let x = ctx.resize(x, from, false);
    let to = if d.size == 16 {
        FloatFormat::F16
    } else {
        FloatFormat::F32
    };
    let mode = FloatMode {
        round: round_of(instr),
        ..FloatMode::IEEE
    };
    let r = ctx.b.ins(InstKind::IToF { to, signed, mode }, &[x]);
    let bits = ctx.cast(CastOp::Bitcast, ctx.ty(r).as_int(), r);
    ctx.write_dest(d, bits)
}

/// Float to integer: saturating, NaN -> 0 (Metal's rule; hardware unknown), FP32
/// denormal inputs flushed.
fn float_to_int(ctx: &mut Ctx, instr: &Instr, d: &Operand) -> Result<(), LiftError> {
    use Opcode::*;
    let (to, signed) = match instr.opcode {
        FToU16 => (Type::I16, false),
        FToS16 => (Type::I16, true),
        FToU32 => (Type::I32, false),
        _ => (Type::I32, true),
    };
    let x = read_f32(ctx, src(instr, 0)?)?;
    let mode = FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        round: round_of(instr),
        ..FloatMode::IEEE
    };
    let r = ctx.b.ins(
        InstKind::FToI {
            from: FloatFormat::F32,
            to,
            signed,
            nan_to_max: false,
            mode,
        },
        &[x],
    );
    let r = ctx.resize(r, Type::I32, signed);
    ctx.write_dest(d, r)
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

/// rsqrt_special: `rsqrt(x)` with 0 -> 0 and +inf -> +inf so that
/// `fmul(x, rsqrts(x)) = sqrt(x)` at both ends.
fn rsqrt_special(ctx: &mut Ctx, a: Value) -> Value {
    let r = ctx.b.ins(
        InstKind::Special {
            func: SpecialFn::Rsqrt,
            mode: mode32(false),
        },
        &[a],
    );
    let zero = ctx.f32c(0.0);
    let inf = ctx.f32c(f32::INFINITY);
    let is_zero = fcmp(ctx, FloatCC::Eq, a, zero);
    let is_inf = fcmp(ctx, FloatCC::Eq, a, inf);
    let r = ctx.select(is_inf, inf, r);
    ctx.select(is_zero, zero, r)
}

fn to_f64(ctx: &mut Ctx, a: Value) -> Value {
    ctx.b.ins(
        InstKind::Fcvt {
            from: FloatFormat::F32,
            to: FloatFormat::F64,
            mode: mode_in32(),
        },
        &[a],
    )
}

fn from_f64(ctx: &mut Ctx, a: Value) -> Value {
    ctx.b.ins(
        InstKind::Fcvt {
            from: FloatFormat::F64,
            to: FloatFormat::F32,
            mode: mode32(false),
        },
        &[a],
    )
}

fn f64c(ctx: &mut Ctx, v: f64) -> Value {
    ctx.iconst(Type::F64, v.to_bits())
}

fn fbin64(ctx: &mut Ctx, op: FBinOp, a: Value, b: Value) -> Value {
    ctx.b.ins(
        InstKind::FBinary {
            op,
            mode: FloatMode::IEEE,
        },
        &[a, b],
    )
}

/// sin_pt_1 (Mesa `sinr`), model: reduces a quarter-turn angle `t` to `p` in
/// [-1, 1] with `sin(p·π/2) = sin(t·π/2)`. Real bits are unknown (agx.md §5.9).
fn sin_pt_1(ctx: &mut Ctx, t: Value) -> Value {
    let x = to_f64(ctx, t);
    let quarter = f64c(ctx, 0.25);
    let four = f64c(ctx, 4.0);
    let turns = fbin64(ctx, FBinOp::Mul, x, quarter);
    let k = ctx.b.ins(
        InstKind::FUnary {
            op: FUnOp::Nearest,
            mode: FloatMode::IEEE,
        },
        &[turns],
    );
    let whole = fbin64(ctx, FBinOp::Mul, k, four);
    let p = fbin64(ctx, FBinOp::Sub, x, whole);
    let one = f64c(ctx, 1.0);
    let two = f64c(ctx, 2.0);
    let m_one = f64c(ctx, -1.0);
    let m_two = f64c(ctx, -2.0);
    let hi = fbin64(ctx, FBinOp::Sub, two, p);
    let lo = fbin64(ctx, FBinOp::Sub, m_two, p);
    let over = ctx.b.ins(
        InstKind::Fcmp {
            cc: FloatCC::Gt,
            mode: FloatMode::IEEE,
        },
        &[p, one],
    );
    let under = ctx.b.ins(
        InstKind::Fcmp {
            cc: FloatCC::Lt,
            mode: FloatMode::IEEE,
        },
        &[p, m_one],
    );
    let p = ctx.select(over, hi, p);
    let p = ctx.select(under, lo, p);
    from_f64(ctx, p)
}

/// sin_pt_2 (Mesa `sinc`), model: `sin(p·π/2) / p` (π/2 at 0), so that
/// `fmul(sin_pt_2(p), p) = sin(p·π/2)`.
fn sin_pt_2(ctx: &mut Ctx, p: Value) -> Value {
    let x = to_f64(ctx, p);
    let half_pi = f64c(ctx, std::f64::consts::FRAC_PI_2);
    let y = fbin64(ctx, FBinOp::Mul, x, half_pi);
    let s = ctx.b.ins(
        InstKind::Special {
            func: SpecialFn::Sin,
            mode: FloatMode::IEEE,
        },
        &[y],
    );
    let q = fbin64(ctx, FBinOp::Div, s, x);
    let zero = f64c(ctx, 0.0);
    let is_zero = ctx.b.ins(
        InstKind::Fcmp {
            cc: FloatCC::Eq,
            mode: FloatMode::IEEE,
        },
        &[x, zero],
    );
    let q = ctx.select(is_zero, half_pi, q);
    from_f64(ctx, q)
}
