//! Memory (agx.md §4): device load/store, threadgroup load/store, atomics,
//! uniform_store, barriers and wait. Accesses run only in lanes with exec.

use wavejit_ir::{AddrSpace, AtomicOp, IBinOp, InstKind, MemAccess, Scope, Type, Value};

use super::Mode;
use super::ctx::{Ctx, int_type};
use super::error::LiftError;
use super::pixel_format::{
    f32_to_reg, norm_decode, norm_encode, packed_decode, packed_encode, reg_to_f32, srgb_decode,
    srgb_encode,
};
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
        Lload | Lstore | Latomic if ctx.cfg.threadgroup_memory == 0 => {
            Err(LiftError::NoThreadgroupMemory {
                pc: instr.pc,
                text: instr.to_string(),
            })
        }
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
    /// Four bytes: sRGB-encoded r, g, b and linear alpha (10).
    Srgba8,
}

impl Format {
    fn bytes(self) -> u32 {
        match self {
            Format::I8 => 1,
            Format::I16 | Format::F16 => 2,
            Format::I32 | Format::Packed(_) | Format::Srgba8 => 4,
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
        10 => Format::Srgba8,
        f => {
            return Err(ctx.unsupported(instr, format!("memory format {f} is not defined")));
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
        Format::Packed(_) | Format::Srgba8 => {
            return Err(ctx.unsupported(instr, "packed and sRGB formats are device-only"));
        }
        Format::Norm { bits, signed } => {
            let raw = ctx.b.ins(
                InstKind::Load(access(space, Type::I32, bits, signed)),
                &[addr],
            );
            let v = norm_decode(ctx, raw, bits, signed);
            f32_to_reg(ctx, v, reg_bits)
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
        Format::Packed(_) | Format::Srgba8 => {
            return Err(ctx.unsupported(instr, "packed and sRGB formats are device-only"));
        }
        Format::I32 => {
            if reg_bits != 32 {
                return Err(ctx.unsupported(instr, "i32 data needs 32-bit registers"));
            }
            (v, 32)
        }
        Format::Norm { bits, signed } => {
            let x = reg_to_f32(ctx, v, reg_bits);
            (norm_encode(ctx, x, bits, signed), bits)
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
    match fmt {
        Format::Packed(code) => return packed(ctx, code, store, &data, &base_op, &index_op),
        Format::Srgba8 => return srgba8(ctx, store, mask, shift, &data, &base_op, &index_op),
        _ => {}
    }
    let join = ctx.begin_exec_region();
    let base = ctx.read_int(&base_op, Type::I64, false)?;
    let align = ctx.i64c(!(esz - 1));
    let base = ctx.bin(IBinOp::And, base, align);
    // [MODEL] bit 25 extends a 16-bit immediate index too: 1 = zero-, 0 = sign-extend
    // (AGX2.xml memindex; Mesa sets it for unsigned 16-bit indices). applegpu always
    // sign-extends immediates, untested on hardware.
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

/// The address of a 32-bit pixel: `(A & ~3) + (ext(O) << shift) * 4`.
fn pixel_address(
    ctx: &mut Ctx,
    base_op: &Operand,
    index_op: &Operand,
    shift: u32,
) -> Result<Value, LiftError> {
    let base = ctx.read_int(base_op, Type::I64, false)?;
    let align = ctx.i64c(!3);
    let base = ctx.bin(IBinOp::And, base, align);
    let index = ctx.read_int(index_op, Type::I64, index_op.sx)?;
    let s = ctx.i64c(u64::from(shift) + 2);
    let off = ctx.bin(IBinOp::Shl, index, s);
    Ok(ctx.bin(IBinOp::Add, base, off))
}

/// The register half of the k-th data register.
fn data_half(data: &Operand, k: usize) -> i32 {
    data.value + (k as i32) * i32::from(data.size / 16)
}

/// Bit-packed formats: one aligned 32-bit word at `(A & ~3) + ext(O) * 4`, mask
/// and shift ignored (agx.md §4.1). Loads expand it to floats in consecutive
/// registers (as many as the destination has, at most the format's
/// components); stores pack the data registers (see `packed_encode`).
fn packed(
    ctx: &mut Ctx,
    code: u32,
    store: bool,
    data: &Operand,
    base_op: &Operand,
    index_op: &Operand,
) -> Result<(), LiftError> {
    let join = ctx.begin_exec_region();
    let addr = pixel_address(ctx, base_op, index_op, 0)?;
    let word = access(AddrSpace::Global, Type::I32, 32, false);
    if store {
        let mut comps = Vec::new();
        for k in 0..usize::from(data.count) {
            let v = ctx.read_reg(data_half(data, k), data.size)?;
            comps.push(reg_to_f32(ctx, v, data.size));
        }
        let w = packed_encode(ctx, code, &comps);
        ctx.b.ins(InstKind::Store(word), &[addr, w]);
    } else {
        let w = ctx.b.ins(InstKind::Load(word), &[addr]);
        let comps = packed_decode(ctx, code, w);
        for (k, v) in comps.into_iter().take(usize::from(data.count)).enumerate() {
            let bits = f32_to_reg(ctx, v, data.size);
            ctx.write_reg_raw(data_half(data, k), data.size, bits)?;
        }
    }
    ctx.end_exec_region(join);
    Ok(())
}

/// srgba8: byte i of the pixel at `(A & ~3) + (ext(O) << s) * 4` is component
/// i; bytes 0-2 are sRGB-encoded, byte 3 is linear unorm8 alpha.
/// [MODEL] Unlike the packed formats the mask applies (Mesa allows masking
/// srgba8): enabled components fill or come from consecutive registers, and a
/// store writes only the enabled bytes. The shift applies as for other formats.
fn srgba8(
    ctx: &mut Ctx,
    store: bool,
    mask: u32,
    shift: u32,
    data: &Operand,
    base_op: &Operand,
    index_op: &Operand,
) -> Result<(), LiftError> {
    let join = ctx.begin_exec_region();
    let pixel = pixel_address(ctx, base_op, index_op, shift)?;
    let comps = components(mask);
    let byte = access(AddrSpace::Global, Type::I32, 8, false);
    let mut addrs = Vec::new();
    for &(slot, _) in &comps {
        let i = ctx.i64c(u64::from(slot));
        addrs.push(ctx.bin(IBinOp::Add, pixel, i));
    }
    if store {
        let mut colour = Vec::new();
        let mut codes = Vec::new();
        for &(slot, k) in &comps {
            let v = ctx.read_reg(data_half(data, k as usize), data.size)?;
            let x = reg_to_f32(ctx, v, data.size);
            if slot == 3 {
                codes.push(Some(norm_encode(ctx, x, 8, false)));
            } else {
                colour.push(x);
                codes.push(None);
            }
        }
        let mut encoded = srgb_encode(ctx, &colour).into_iter();
        for (addr, code) in addrs.into_iter().zip(codes) {
            if let Some(c) = code.or_else(|| encoded.next()) {
                ctx.b.ins(InstKind::Store(byte), &[addr, c]);
            }
        }
    } else {
        let raw: Vec<Value> = addrs
            .iter()
            .map(|&a| ctx.b.ins(InstKind::Load(byte), &[a]))
            .collect();
        let colour: Vec<Value> = comps
            .iter()
            .zip(&raw)
            .filter(|((slot, _), _)| *slot != 3)
            .map(|(_, &r)| r)
            .collect();
        let mut decoded = srgb_decode(ctx, &colour, data.size).into_iter();
        for (&(slot, k), &r) in comps.iter().zip(&raw) {
            let bits = if slot == 3 {
                let a = norm_decode(ctx, r, 8, false);
                Some(f32_to_reg(ctx, a, data.size))
            } else {
                decoded.next()
            };
            if let Some(bits) = bits {
                ctx.write_reg_raw(data_half(data, k as usize), data.size, bits)?;
            }
        }
    }
    ctx.end_exec_region(join);
    Ok(())
}
