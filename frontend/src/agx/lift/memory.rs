//! Memory (agx.md §4): device load/store, threadgroup load/store, atomics,
//! uniform_store, barriers and wait. Accesses run only in lanes with exec.

use wavejit_ir::{
    AddrSpace, AtomicOp, CastOp, FBinOp, FloatCC, FloatFormat, FloatMode, IBinOp, InstKind,
    MemAccess, Round, Scope, Type, Value,
};

use super::Mode;
use super::alu_float::{mode32, narrow_f16};
use super::ctx::{Ctx, int_type};
use super::error::LiftError;
use crate::agx::{Instr, ModField, Opcode, Operand, OperandKind};

pub(crate) fn handles(op: Opcode) -> bool {
    use Opcode::*;
    matches!(
        op,
        Load | Store
            | Atomic
            | Latomic
            | Lload
            | Lstore
            | UniformStore
            | Wait
            | Barrier
            | MemoryBarrier
            | MemoryBarrier2
            | MemoryBarrier3
            | DeviceBarrier1
            | DeviceBarrier2
            | ImageBarrier1
            | ImageBarrier2
            | ImageBarrier3
            | ImageBarrier4
            | FlushMemoryToTexture
            | UnknownBarrier1
            | UnknownBarrier2
    )
}

fn operand(ctx: &Ctx, instr: &Instr, i: usize) -> Result<Operand, LiftError> {
    instr
        .srcs
        .get(i)
        .copied()
        .ok_or_else(|| ctx.unsupported(instr, format!("missing source {i}")))
}

pub(crate) fn lift(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    use Opcode::*;
    match instr.opcode {
        // Loads complete synchronously, so waiting is free; barriers whose meaning
        // is a cache flush are device fences in a sequential memory model.
        Wait | ImageBarrier1 | ImageBarrier2 | ImageBarrier3 | ImageBarrier4
        | FlushMemoryToTexture => Ok(()),
        Barrier => {
            ctx.b.ins(InstKind::Barrier, &[]);
            Ok(())
        }
        MemoryBarrier | MemoryBarrier2 | MemoryBarrier3 | DeviceBarrier1 | DeviceBarrier2
        | UnknownBarrier1 | UnknownBarrier2 => {
            ctx.b.ins(InstKind::Fence(Scope::Device), &[]);
            Ok(())
        }
        Load | Store => device(ctx, instr),
        Lload | Lstore => threadgroup(ctx, instr),
        Atomic | Latomic => atomic(ctx, instr),
        _ => uniform_store(ctx, instr),
    }
}

/// Memory formats (agx.md §4.1).
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Format {
    I8,
    I16,
    I32,
    F16,
    /// Normalised integer of `bits` bits, signed or not.
    Norm {
        bits: u8,
        signed: bool,
    },
    /// Bit-packed 32-bit pixel: rgb10a2 (8), rg11b10f (12/14), rgb9e5 (13/15).
    Packed(u32),
}

impl Format {
    fn bytes(self) -> u32 {
        match self {
            Format::I8 => 1,
            Format::I16 | Format::F16 => 2,
            Format::I32 | Format::Packed(_) => 4,
            Format::Norm { bits, .. } => u32::from(bits) / 8,
        }
    }
}

fn format_of(ctx: &Ctx, instr: &Instr) -> Result<Format, LiftError> {
    Ok(match instr.modifier(ModField::Format).unwrap_or(0) {
        0 => Format::I8,
        1 => Format::I16,
        2 => Format::I32,
        3 => Format::F16,
        4 => Format::Norm {
            bits: 8,
            signed: false,
        },
        5 => Format::Norm {
            bits: 8,
            signed: true,
        },
        6 => Format::Norm {
            bits: 16,
            signed: false,
        },
        7 => Format::Norm {
            bits: 16,
            signed: true,
        },
        f @ (8 | 12 | 13 | 14 | 15) => Format::Packed(f),
        f => {
            return Err(ctx.unsupported(instr, format!("memory format {f} (sRGB) is not lifted")));
        }
    })
}

fn access(space: AddrSpace, ty: Type, bits: u8, signed: bool) -> MemAccess {
    MemAccess {
        space,
        ty,
        bits,
        count: 1,
        signed,
        align: u32::from(bits) / 8,
    }
}

/// Loads one element and converts it to a register of `reg_bits`.
fn load_elem(
    ctx: &mut Ctx,
    instr: &Instr,
    space: AddrSpace,
    addr: Value,
    fmt: Format,
    reg_bits: u8,
) -> Result<Value, LiftError> {
    let rty = int_type(reg_bits);
    Ok(match fmt {
        Format::I8 | Format::I16 | Format::F16 => {
            let bits = (fmt.bytes() * 8) as u8;
            ctx.b
                .ins(InstKind::Load(access(space, rty, bits, false)), &[addr])
        }
        Format::I32 => {
            if reg_bits != 32 {
                return Err(ctx.unsupported(instr, "i32 data needs 32-bit registers"));
            }
            ctx.b
                .ins(InstKind::Load(access(space, Type::I32, 32, false)), &[addr])
        }
        Format::Packed(_) => {
            return Err(ctx.unsupported(instr, "packed formats are device loads only"));
        }
        Format::Norm { bits, signed } => {
            let raw = ctx.b.ins(
                InstKind::Load(access(space, Type::I32, bits, signed)),
                &[addr],
            );
            let f = ctx.b.ins(
                InstKind::IToF {
                    to: FloatFormat::F32,
                    signed,
                    mode: FloatMode::IEEE,
                },
                &[raw],
            );
            let scale = if signed {
                ((1u32 << (bits - 1)) - 1) as f32
            } else {
                ((1u64 << bits) - 1) as f32
            };
            let s = ctx.f32c(scale);
            let mut v = ctx.b.ins(
                InstKind::FBinary {
                    op: FBinOp::Div,
                    mode: mode32(false),
                },
                &[f, s],
            );
            if signed {
                // The most negative code is -1.0 as well.
                let m1 = ctx.f32c(-1.0);
                v = ctx.b.ins(
                    InstKind::FBinary {
                        op: FBinOp::Max,
                        mode: mode32(false),
                    },
                    &[v, m1],
                );
            }
            let v = if reg_bits == 16 {
                narrow_f16(ctx, v)
            } else {
                v
            };
            ctx.cast(CastOp::Bitcast, ctx.ty(v).as_int(), v)
        }
    })
}

/// Converts a register value for storing one element and stores it.
fn store_elem(
    ctx: &mut Ctx,
    instr: &Instr,
    space: AddrSpace,
    addr: Value,
    fmt: Format,
    v: Value,
    reg_bits: u8,
) -> Result<(), LiftError> {
    let (v, bits) = match fmt {
        Format::I8 | Format::I16 | Format::F16 => (v, (fmt.bytes() * 8) as u8),
        Format::Packed(_) => return Err(ctx.unsupported(instr, "packed stores are not lifted")),
        Format::I32 => {
            if reg_bits != 32 {
                return Err(ctx.unsupported(instr, "i32 data needs 32-bit registers"));
            }
            (v, 32)
        }
        Format::Norm { bits, signed } => {
            // Clamp (NaN -> 0), scale, round to nearest even (rounding unknown on HW).
            let x = if reg_bits == 16 {
                let h = ctx.cast(CastOp::Bitcast, Type::F16, v);
                ctx.b.ins(
                    InstKind::Fcvt {
                        from: FloatFormat::F16,
                        to: FloatFormat::F32,
                        mode: FloatMode::IEEE,
                    },
                    &[h],
                )
            } else {
                ctx.cast(CastOp::Bitcast, Type::F32, v)
            };
            let lo = ctx.f32c(if signed { -1.0 } else { 0.0 });
            let hi = ctx.f32c(1.0);
            let fmode = mode32(false);
            let x1 = ctx.b.ins(
                InstKind::FBinary {
                    op: FBinOp::Max,
                    mode: fmode,
                },
                &[x, lo],
            );
            let x2 = ctx.b.ins(
                InstKind::FBinary {
                    op: FBinOp::Min,
                    mode: fmode,
                },
                &[x1, hi],
            );
            let nan = ctx.b.ins(
                InstKind::Fcmp {
                    cc: FloatCC::Uno,
                    mode: fmode,
                },
                &[x, x],
            );
            let z = ctx.f32c(0.0);
            let x3 = ctx.select(nan, z, x2);
            let scale = if signed {
                ((1u32 << (bits - 1)) - 1) as f32
            } else {
                ((1u64 << bits) - 1) as f32
            };
            let s = ctx.f32c(scale);
            let y = ctx.b.ins(
                InstKind::FBinary {
                    op: FBinOp::Mul,
                    mode: fmode,
                },
                &[x3, s],
            );
            let i = ctx.b.ins(
                InstKind::FToI {
                    from: FloatFormat::F32,
                    to: Type::I32,
                    signed,
                    nan_to_max: false,
                    mode: FloatMode {
                        round: Round::NearestEven,
                        ..FloatMode::IEEE
                    },
                },
                &[y],
            );
            (i, bits)
        }
    };
    let ty = int_type(reg_bits.max(bits));
    let v = ctx.resize(v, ty, false);
    ctx.b
        .ins(InstKind::Store(access(space, ty, bits, false)), &[addr, v]);
    Ok(())
}

/// Enabled components of a 4-bit mask: (memory slot, register ordinal).
fn components(mask: u32) -> Vec<(u32, u32)> {
    (0..4)
        .filter(|i| mask & (1 << i) != 0)
        .enumerate()
        .map(|(k, i)| (i, k as u32))
        .collect()
}

/// device_load / device_store: `EA_i = (A & ~(esz-1)) + ((ext(O) << s) + i) * esz`.
fn device(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    let store = instr.opcode == Opcode::Store;
    let (data, base_op, index_op) = if store {
        (
            operand(ctx, instr, 0)?,
            operand(ctx, instr, 1)?,
            operand(ctx, instr, 2)?,
        )
    } else {
        let d = *instr
            .dests
            .first()
            .ok_or_else(|| ctx.unsupported(instr, "missing destination"))?;
        (d, operand(ctx, instr, 0)?, operand(ctx, instr, 1)?)
    };
    let fmt = format_of(ctx, instr)?;
    let mask = instr.modifier(ModField::Mask).unwrap_or(1);
    let shift = instr.modifier(ModField::Shift).unwrap_or(0);
    let esz = u64::from(fmt.bytes());
    if let Format::Packed(code) = fmt {
        return packed_load(ctx, instr, code, store, &data, &base_op, &index_op);
    }
    let join = ctx.begin_exec_region();
    let base = ctx.read_int(&base_op, Type::I64, false)?;
    let align = ctx.i64c(!(esz - 1));
    let base = ctx.bin(IBinOp::And, base, align);
    let index = ctx.read_int(&index_op, Type::I64, index_op.sx)?;
    let s = ctx.i64c(u64::from(shift));
    let index = ctx.bin(IBinOp::Shl, index, s);
    for (slot, k) in components(mask) {
        let i = ctx.i64c(u64::from(slot));
        let e = ctx.bin(IBinOp::Add, index, i);
        let sz = ctx.i64c(esz);
        let off = ctx.bin(IBinOp::Mul, e, sz);
        let addr = ctx.bin(IBinOp::Add, base, off);
        let half = data.value + (k as i32) * i32::from(data.size / 16);
        if store {
            let v = ctx.read_reg(half, data.size)?;
            store_elem(ctx, instr, AddrSpace::Global, addr, fmt, v, data.size)?;
        } else {
            let v = load_elem(ctx, instr, AddrSpace::Global, addr, fmt, data.size)?;
            ctx.write_reg_raw(half, data.size, v)?;
        }
    }
    ctx.end_exec_region(join);
    Ok(())
}

/// Threadgroup base: a 16-bit GPR, a 16-bit uniform, or the constant 0.
fn local_base(ctx: &mut Ctx, op: &Operand) -> Result<Value, LiftError> {
    match op.kind {
        OperandKind::None => Ok(ctx.i32c(0)),
        _ => ctx.read_int(op, Type::I32, false),
    }
}

/// threadgroup_load / threadgroup_store: `EA_i = base + (index + i) * esz`.
fn threadgroup(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    let store = instr.opcode == Opcode::Lstore;
    let (data, base_op, index_op) = if store {
        (
            operand(ctx, instr, 0)?,
            operand(ctx, instr, 1)?,
            operand(ctx, instr, 2)?,
        )
    } else {
        let d = *instr
            .dests
            .first()
            .ok_or_else(|| ctx.unsupported(instr, "missing destination"))?;
        (d, operand(ctx, instr, 0)?, operand(ctx, instr, 1)?)
    };
    let fmt = format_of(ctx, instr)?;
    let mask = instr.modifier(ModField::Mask).unwrap_or(1);
    let esz = fmt.bytes();
    let join = ctx.begin_exec_region();
    let base = local_base(ctx, &base_op)?;
    let index = ctx.read_int(&index_op, Type::I32, false)?;
    for (slot, k) in components(mask) {
        let i = ctx.i32c(slot);
        let e = ctx.bin(IBinOp::Add, index, i);
        let sz = ctx.i32c(esz);
        let off = ctx.bin(IBinOp::Mul, e, sz);
        let addr = ctx.bin(IBinOp::Add, base, off);
        let half = data.value + (k as i32) * i32::from(data.size / 16);
        if store {
            let v = ctx.read_reg(half, data.size)?;
            store_elem(ctx, instr, AddrSpace::Shared, addr, fmt, v, data.size)?;
        } else {
            let v = load_elem(ctx, instr, AddrSpace::Shared, addr, fmt, data.size)?;
            ctx.write_reg_raw(half, data.size, v)?;
        }
    }
    ctx.end_exec_region(join);
    Ok(())
}

/// Device and threadgroup atomics on 32-bit elements; lanes apply in lane order.
fn atomic(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    let local = instr.opcode == Opcode::Latomic;
    let (src, base_op, index_op) = (
        operand(ctx, instr, 0)?,
        operand(ctx, instr, 1)?,
        operand(ctx, instr, 2)?,
    );
    let op = match instr.modifier_name(ModField::Op).unwrap_or("") {
        "add" => AtomicOp::Add,
        "sub" => AtomicOp::Sub,
        "xchg" => AtomicOp::Xchg,
        "cmpxchg" => AtomicOp::CmpXchg,
        "umin" => AtomicOp::MinU,
        "imin" => AtomicOp::MinS,
        "umax" => AtomicOp::MaxU,
        "imax" => AtomicOp::MaxS,
        "and" => AtomicOp::And,
        "or" => AtomicOp::Or,
        "xor" => AtomicOp::Xor,
        other => return Err(ctx.unsupported(instr, format!("atomic op `{other}`"))),
    };
    let join = ctx.begin_exec_region();
    let (space, addr) = if local {
        let base = local_base(ctx, &base_op)?;
        let index = ctx.read_int(&index_op, Type::I32, false)?;
        let four = ctx.i32c(4);
        let off = ctx.bin(IBinOp::Mul, index, four);
        (AddrSpace::Shared, ctx.bin(IBinOp::Add, base, off))
    } else {
        let base = ctx.read_int(&base_op, Type::I64, false)?;
        let index = ctx.read_int(&index_op, Type::I64, index_op.sx)?;
        let four = ctx.i64c(4);
        let off = ctx.bin(IBinOp::Mul, index, four);
        (AddrSpace::Global, ctx.bin(IBinOp::Add, base, off))
    };
    let kind = InstKind::Atomic {
        space,
        op,
        ty: Type::I32,
    };
    let old = if op == AtomicOp::CmpXchg {
        // The register pair holds the new value first, then the comparand.
        let new = ctx.read_reg(src.value, 32)?;
        let expected = ctx.read_reg(src.value + 2, 32)?;
        ctx.b.ins(kind, &[addr, expected, new])
    } else {
        let v = ctx.read_int(&src, Type::I32, false)?;
        ctx.b.ins(kind, &[addr, v])
    };
    if let Some(d) = instr.dests.first() {
        ctx.write_dest_active(d, old)?;
    }
    ctx.end_exec_region(join);
    Ok(())
}

/// uniform_store (preamble only): copies register halves into the uniform file.
fn uniform_store(ctx: &mut Ctx, instr: &Instr) -> Result<(), LiftError> {
    if instr.opcode != Opcode::UniformStore {
        return Err(ctx.unsupported(instr, "not a compute memory instruction"));
    }
    if ctx.cfg.mode != Mode::Preamble {
        return Err(ctx.unsupported(
            instr,
            "uniform_store needs Mode::Preamble (the main kernel's uniforms are read-only)",
        ));
    }
    let d = *instr
        .dests
        .first()
        .ok_or_else(|| ctx.unsupported(instr, "missing destination"))?;
    let src = operand(ctx, instr, 0)?;
    let halves = i32::from(d.size / 16) * i32::from(d.count);
    let join = ctx.begin_exec_region();
    for k in 0..halves {
        let v = ctx.read_reg(src.value + k, 16)?;
        ctx.write_uniform(d.value + k, 16, v)?;
    }
    ctx.end_exec_region(join);
    Ok(())
}

/// `(w >> shift) & mask` on i32.
fn field(ctx: &mut Ctx, w: Value, shift: u32, mask: u32) -> Value {
    let s = ctx.i32c(shift);
    let x = ctx.bin(IBinOp::ShrU, w, s);
    let m = ctx.i32c(mask);
    ctx.bin(IBinOp::And, x, m)
}

fn f16_bits_to_f32(ctx: &mut Ctx, h: Value) -> Value {
    let h = ctx.resize(h, Type::I16, false);
    let h = ctx.cast(CastOp::Bitcast, Type::F16, h);
    ctx.b.ins(
        InstKind::Fcvt {
            from: FloatFormat::F16,
            to: FloatFormat::F32,
            mode: FloatMode::IEEE,
        },
        &[h],
    )
}

/// Bit-packed loads: one aligned 32-bit word at `(A & ~3) + ext(O) * 4` (mask and
/// shift ignored) expanded to floats in consecutive registers (agx.md §4.1, model).
fn packed_load(
    ctx: &mut Ctx,
    instr: &Instr,
    code: u32,
    store: bool,
    data: &Operand,
    base_op: &Operand,
    index_op: &Operand,
) -> Result<(), LiftError> {
    if store {
        return Err(ctx.unsupported(instr, "packed stores are not lifted"));
    }
    let join = ctx.begin_exec_region();
    let base = ctx.read_int(base_op, Type::I64, false)?;
    let align = ctx.i64c(!3);
    let base = ctx.bin(IBinOp::And, base, align);
    let index = ctx.read_int(index_op, Type::I64, index_op.sx)?;
    let four = ctx.i64c(4);
    let off = ctx.bin(IBinOp::Mul, index, four);
    let addr = ctx.bin(IBinOp::Add, base, off);
    let w = ctx.b.ins(
        InstKind::Load(access(AddrSpace::Global, Type::I32, 32, false)),
        &[addr],
    );
    let fmode = FloatMode::IEEE;
    let mut comps = Vec::new();
    match code {
        8 => {
            for (shift, bits) in [(0u32, 10u32), (10, 10), (20, 10), (30, 2)] {
                let x = field(ctx, w, shift, (1 << bits) - 1);
                let f = ctx.b.ins(
                    InstKind::IToF {
                        to: FloatFormat::F32,
                        signed: false,
                        mode: fmode,
                    },
                    &[x],
                );
                let s = ctx.f32c(((1u32 << bits) - 1) as f32);
                comps.push(ctx.b.ins(
                    InstKind::FBinary {
                        op: FBinOp::Div,
                        mode: fmode,
                    },
                    &[f, s],
                ));
            }
        }
        12 | 14 => {
            // f11 (5-bit exponent, 6-bit mantissa) and f10 are f16 with fewer
            // mantissa bits: shift them into place.
            for (shift, mask, up) in [(0u32, 0x7ffu32, 4u32), (11, 0x7ff, 4), (22, 0x3ff, 5)] {
                let x = field(ctx, w, shift, mask);
                let u = ctx.i32c(up);
                let h = ctx.bin(IBinOp::Shl, x, u);
                comps.push(f16_bits_to_f32(ctx, h));
            }
        }
        _ => {
            // rgb9e5: m * 2^(e - 24), exact in f32.
            let e = field(ctx, w, 27, 0x1f);
            let bias = ctx.i32c(103);
            let be = ctx.bin(IBinOp::Add, e, bias);
            let k23 = ctx.i32c(23);
            let sbits = ctx.bin(IBinOp::Shl, be, k23);
            let scale = ctx.cast(CastOp::Bitcast, Type::F32, sbits);
            for shift in [0u32, 9, 18] {
                let m = field(ctx, w, shift, 0x1ff);
                let f = ctx.b.ins(
                    InstKind::IToF {
                        to: FloatFormat::F32,
                        signed: false,
                        mode: fmode,
                    },
                    &[m],
                );
                comps.push(ctx.b.ins(
                    InstKind::FBinary {
                        op: FBinOp::Mul,
                        mode: fmode,
                    },
                    &[f, scale],
                ));
            }
        }
    }
    for (k, v) in comps.into_iter().take(usize::from(data.count)).enumerate() {
        let v = if data.size == 16 {
            narrow_f16(ctx, v)
        } else {
            v
        };
        let bits = ctx.cast(CastOp::Bitcast, ctx.ty(v).as_int(), v);
        let half = data.value + (k as i32) * i32::from(data.size / 16);
        ctx.write_reg_raw(half, data.size, bits)?;
    }
    ctx.end_exec_region(join);
    Ok(())
}
