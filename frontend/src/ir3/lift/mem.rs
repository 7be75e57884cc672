//! cat6 (global / local / private memory, atomics, ldc, wave queries, shfl)
//! and cat7 (barriers, fences, cache ops).

use crate::ir3::FieldName;
use crate::ir3::field;
use wavejit_ir::{
    AddrSpace, AtomicOp, IBinOp, InstKind, IntCC, MemAccess, ShuffleKind, Type, Value,
};

use super::regs::As;
use super::{LiftError, Lifter, layout};
use crate::ir3::{Instr, Operand, OperandKind};

/// Memory width of a cat6 #type value and whether loads sign-extend.
pub(crate) fn mem_type(t: i64) -> Option<(u8, bool)> {
    Some(match t {
        0 | 2 => (16, false),
        4 => (16, true),
        1 | 3 | 5 => (32, false),
        6 => (8, false),
        7 => (8, true),
        _ => return None,
    })
}

impl Lifter<'_> {
    pub(crate) fn field_op(&self, ins: &Instr, name: FieldName) -> Result<Operand, LiftError> {
        match ins.field(name) {
            Some(crate::ir3::FieldValue::Operand(o)) => Ok(*o),
            _ => Err(self.malformed(ins, format!("missing operand {}", name.as_str()))),
        }
    }

    /// A register operand shifted by `k` components.
    pub(crate) fn reg_plus(&self, ins: &Instr, op: &Operand, k: u32) -> Result<Operand, LiftError> {
        let mut o = *op;
        match op.kind {
            OperandKind::Gpr(r) => o.kind = OperandKind::Gpr(r + k as u16),
            OperandKind::RelGpr(r) => o.kind = OperandKind::RelGpr(r + k as i16),
            _ if k == 0 => {}
            _ => return Err(self.malformed(ins, format!("{:?} is not a register vector", op.kind))),
        }
        Ok(o)
    }

    /// The 64-bit address held in a register pair.
    pub(crate) fn pair(&mut self, ins: &Instr, op: &Operand) -> Result<Value, LiftError> {
        let lo = self.src(ins, op, 0, As::U32)?;
        let hi_op = self.reg_plus(ins, op, 1)?;
        let hi = self.src(ins, &hi_op, 0, As::U32)?;
        let lo = self.resize(lo, Type::I64, false);
        let hi = self.resize(hi, Type::I64, false);
        let s = self.iconst(Type::I64, 32);
        let hi = self.ins(InstKind::IBinary(IBinOp::Shl), &[hi, s]);
        Ok(self.ins(InstKind::IBinary(IBinOp::Or), &[lo, hi]))
    }

    fn type_of(&self, ins: &Instr) -> Result<(u8, bool, bool), LiftError> {
        let t = ins.get(field::TYPE).unwrap_or(-1);
        let (bits, signed) = mem_type(t).ok_or_else(|| self.malformed(ins, format!("type {t}")))?;
        let half = ins.get(field::TYPE_HALF).unwrap_or(0) != 0;
        Ok((bits, signed, half))
    }

    fn access(space: AddrSpace, bits: u8, signed: bool, half: bool, count: u8) -> MemAccess {
        MemAccess {
            space,
            ty: if half { Type::I16 } else { Type::I32 },
            bits,
            count,
            signed,
            align: u32::from(bits / 8),
        }
    }

    fn count_of(&self, ins: &Instr) -> Result<u8, LiftError> {
        let n = ins.get(field::SIZE).unwrap_or(1);
        if (1..=4).contains(&n) {
            Ok(n as u8)
        } else {
            Err(self.malformed(ins, format!("{n} components")))
        }
    }

    fn load_into(
        &mut self,
        ins: &Instr,
        acc: MemAccess,
        addr: Value,
        dst: &Operand,
    ) -> Result<(), LiftError> {
        let vals = self.inst_all(InstKind::Load(acc), &[addr]);
        // The register file follows the access type (16-bit types: half regs).
        let mut d = *dst;
        d.half = acc.ty == Type::I16;
        for (k, v) in vals.into_iter().enumerate() {
            self.dst(ins, &d, k as u32, v)?;
        }
        Ok(())
    }

    fn store_from(
        &mut self,
        ins: &Instr,
        acc: MemAccess,
        addr: Value,
        data: &Operand,
    ) -> Result<(), LiftError> {
        let mut args = vec![addr];
        for k in 0..u32::from(acc.count) {
            let mut o = self.reg_plus(ins, data, k)?;
            o.half = acc.ty == Type::I16;
            let v = self.src(
                ins,
                &o,
                0,
                As {
                    half: acc.ty == Type::I16,
                    float: false,
                },
            )?;
            args.push(self.resize(v, acc.ty, false));
        }
        self.ins(InstKind::Store(acc), &args);
        Ok(())
    }

    fn add64(&mut self, a: Value, off: i64) -> Value {
        if off == 0 {
            return a;
        }
        let o = self.iconst(Type::I64, off as u64);
        self.ins(InstKind::IBinary(IBinOp::Add), &[a, o])
    }

    /// ldg.a / stg.a: pair(src1) + (((src2 << SRC2_SHIFT) + OFF) << TYPE_SHIFT),
    /// every term zero-extended to 64 bits.
    fn scaled_addr(&mut self, ins: &Instr) -> Result<Value, LiftError> {
        let s1 = self.field_op(ins, field::SRC1)?;
        let s2 = self.field_op(ins, field::SRC2)?;
        let base = self.pair(ins, &s1)?;
        let idx = self.src(ins, &s2, 0, As::U32)?;
        let idx = self.resize(idx, Type::I64, false);
        let sh = self.iconst(Type::I64, ins.get(field::SRC2_SHIFT).unwrap_or(0) as u64);
        let idx = self.ins(InstKind::IBinary(IBinOp::Shl), &[idx, sh]);
        let idx = self.add64(idx, ins.get(field::OFF).unwrap_or(0));
        let ts = self.iconst(Type::I64, ins.get(field::TYPE_SHIFT).unwrap_or(0) as u64);
        let idx = self.ins(InstKind::IBinary(IBinOp::Shl), &[idx, ts]);
        Ok(self.ins(InstKind::IBinary(IBinOp::Add), &[base, idx]))
    }

    /// i32 byte offset `reg + off` for local/private accesses.
    fn local_addr(&mut self, ins: &Instr, reg: &Operand, off: i64) -> Result<Value, LiftError> {
        let r = self.src(ins, reg, 0, As::U32)?;
        let r = self.resize(r, Type::I32, false);
        let o = self.iconst(Type::I32, off as u64);
        Ok(self.ins(InstKind::IBinary(IBinOp::Add), &[r, o]))
    }

    /// Guest private offset -> IR private offset; out of the guest's range faults.
    fn private_addr(&mut self, a: Value) -> Value {
        let size = self.iconst(Type::I32, u64::from(self.cfg.private_size));
        let ok = self.ins(InstKind::Icmp(IntCC::Ult), &[a, size]);
        let base = self.iconst(Type::I32, u64::from(layout::GUEST_PRIVATE));
        let inside = self.ins(InstKind::IBinary(IBinOp::Add), &[a, base]);
        let bad = self.iconst(Type::I32, 0xffff_fff0);
        self.ins(InstKind::Select, &[ok, inside, bad])
    }

    pub(crate) fn lift_cat6(&mut self, ins: &Instr) -> Result<(), LiftError> {
        let name = ins.encoding;
        match name {
            "ldg" | "ldg.a" => {
                let (bits, signed, half) = self.type_of(ins)?;
                let n = self.count_of(ins)?;
                let addr = if name == "ldg" {
                    let s1 = self.field_op(ins, field::SRC1)?;
                    let p = self.pair(ins, &s1)?;
                    self.add64(p, ins.get(field::OFF).unwrap_or(0))
                } else {
                    self.scaled_addr(ins)?
                };
                let d = self.field_op(ins, field::DST)?;
                self.load_into(
                    ins,
                    Self::access(AddrSpace::Global, bits, signed, half, n),
                    addr,
                    &d,
                )
            }
            "stg" | "stg.a" => {
                let (bits, signed, half) = self.type_of(ins)?;
                let n = self.count_of(ins)?;
                let addr = if name == "stg" {
                    let s1 = self.field_op(ins, field::SRC1)?;
                    let p = self.pair(ins, &s1)?;
                    self.add64(p, ins.get(field::OFF).unwrap_or(0))
                } else {
                    self.scaled_addr(ins)?
                };
                let data = self.field_op(ins, field::SRC3)?;
                self.store_from(
                    ins,
                    Self::access(AddrSpace::Global, bits, signed, half, n),
                    addr,
                    &data,
                )
            }
            "ldl" | "ldlw" | "ldp" => {
                let (bits, signed, half) = self.type_of(ins)?;
                let n = self.count_of(ins)?;
                let s = self.field_op(ins, field::SRC)?;
                let mut a = self.local_addr(ins, &s, ins.get(field::OFF).unwrap_or(0))?;
                let space = if name == "ldp" {
                    a = self.private_addr(a);
                    AddrSpace::Private
                } else {
                    AddrSpace::Shared
                };
                let d = self.field_op(ins, field::DST)?;
                self.load_into(ins, Self::access(space, bits, signed, half, n), a, &d)
            }
            "stl" | "stlw" | "stp" => {
                let (bits, signed, half) = self.type_of(ins)?;
                let n = self.count_of(ins)?;
                let areg = self.field_op(ins, field::DST)?;
                let mut a = self.local_addr(ins, &areg, ins.get(field::OFF).unwrap_or(0))?;
                let space = if name == "stp" {
                    a = self.private_addr(a);
                    AddrSpace::Private
                } else {
                    AddrSpace::Shared
                };
                let data = self.field_op(ins, field::SRC)?;
                self.store_from(ins, Self::access(space, bits, signed, half, n), a, &data)
            }
            "ldc" => self.lift_ldc(ins),
            "getfiberid" | "getwid" | "getspid" => {
                let v = match name {
                    "getfiberid" => self.ins(InstKind::Builtin(wavejit_ir::Builtin::LaneId), &[]),
                    "getwid" => self.ins(InstKind::Builtin(wavejit_ir::Builtin::WaveId), &[]),
                    _ => self.iconst(Type::I32, 0),
                };
                let d = self.field_op(ins, field::DST)?;
                self.dst(ins, &d, 0, v)
            }
            "shfl" => self.lift_shfl(ins),
            "ldib.b" | "stib.b" | "resinfo.b" => self.lift_image(ins),
            n if n.starts_with("atomic.b.") => self.lift_image(ins),
            n if n.starts_with("atomic.g.") => self.lift_atomic(ins, AddrSpace::Global),
            n if n.starts_with("atomic.") => self.lift_atomic(ins, AddrSpace::Shared),
            "stc" | "ldg.k" | "ldc.k" => self.lift_const_write(ins),
            "stsc" => Err(LiftError::Undocumented {
                name: ins.mnemonic.clone(),
                pc: self.pc,
                word: ins.word,
                why: "stsc semantics are undocumented",
            }),
            "ldlv" | "ldgb" | "stgb" | "ray_intersection" => Err(self.unsupported(ins)),
            _ => Err(self.unsupported(ins)),
        }
    }

    /// The IR atomic of the a630 atomic `name` (`add`, `min`, ...) on TYPE
    /// `t`. Global, local and IBO atomics are 32-bit on a630 (mesa emits u32
    /// or s32; u64 is a later generation's): other types must not run as
    /// 32-bit ones.
    pub(crate) fn atomic_op(&self, ins: &Instr, name: &str, t: i64) -> Result<AtomicOp, LiftError> {
        if t != 3 && t != 5 {
            return Err(self.malformed(ins, format!("atomic type {t} (a630 has u32/s32 only)")));
        }
        let signed = t == 5;
        Ok(match name {
            "add" => AtomicOp::Add,
            "sub" => AtomicOp::Sub,
            "xchg" => AtomicOp::Xchg,
            "inc" => AtomicOp::IncWrap,
            "dec" => AtomicOp::DecWrap,
            "cmpxchg" => AtomicOp::CmpXchg,
            "min" if signed => AtomicOp::MinS,
            "min" => AtomicOp::MinU,
            "max" if signed => AtomicOp::MaxS,
            "max" => AtomicOp::MaxU,
            "and" => AtomicOp::And,
            "or" => AtomicOp::Or,
            "xor" => AtomicOp::Xor,
            _ => return Err(self.unsupported(ins)),
        })
    }

    fn lift_atomic(&mut self, ins: &Instr, space: AddrSpace) -> Result<(), LiftError> {
        let opname = ins
            .encoding
            .trim_start_matches("atomic.")
            .trim_start_matches("g.");
        let t = ins.get(field::TYPE).unwrap_or(3);
        let op = self.atomic_op(ins, opname, t)?;
        let s1 = self.field_op(ins, field::SRC1)?;
        let s2 = self.field_op(ins, field::SRC2)?;
        let addr = if space == AddrSpace::Global {
            self.pair(ins, &s1)?
        } else {
            let a = self.src(ins, &s1, 0, As::U32)?;
            self.resize(a, Type::I32, false)
        };
        let mut args = vec![addr];
        let v = self.src(ins, &s2, 0, As::U32)?;
        args.push(self.resize(v, Type::I32, false));
        if op == AtomicOp::CmpXchg {
            // (compare, swap) in consecutive registers.
            let o = self.reg_plus(ins, &s2, 1)?;
            let w = self.src(ins, &o, 0, As::U32)?;
            args.push(self.resize(w, Type::I32, false));
        }
        let old = self.ins(
            InstKind::Atomic {
                space,
                op,
                ty: Type::I32,
            },
            &args,
        );
        let d = self.field_op(ins, field::DST)?;
        self.dst(ins, &d, 0, old)
    }

    /// ldc.offsetK.N dst, vec4, ubo: N dwords of UBO `ubo` from component K of
    /// vec4 `vec4`, through the UBO descriptors loaded by CP_LOAD_STATE6 (or, with
    /// BINDLESS, the descriptor of bindless base BASE).
    fn lift_ldc(&mut self, ins: &Instr) -> Result<(), LiftError> {
        let n = ins.get(field::TYPE_SIZE).unwrap_or(1).clamp(1, 4) as u32;
        let k = ins.get(field::OFFSET).unwrap_or(0) as u64;
        let base = self.ubo_base(ins)?;
        let a = self.ubo_vec4_addr(ins, base)?;
        let a = self.add64(a, (k * 4) as i64);
        let acc = MemAccess {
            space: AddrSpace::Global,
            ty: Type::I32,
            bits: 32,
            count: n as u8,
            signed: false,
            align: 4,
        };
        let d = self.field_op(ins, field::DST)?;
        self.load_into(ins, acc, a, &d)
    }

    /// Address (i64) of the UBO that ldc / ldc.k name with SRC2 (BINDLESS: base
    /// BASE, else the loaded UBO descriptor table).
    fn ubo_base(&mut self, ins: &Instr) -> Result<Value, LiftError> {
        let ubo = self.field_op(ins, field::SRC2)?;
        let desc = if ins.get(field::BINDLESS).unwrap_or(0) != 0 {
            let b = self.bindless_base(ins)?;
            let idx = self.cat6_desc_index(ins, &ubo)?;
            // A6XX_UBO: dword 0 base lo, dword 1 base hi (17 bits) | size.
            let a = self.bindless_desc_addr(b, idx);
            self.ins(
                InstKind::Load(MemAccess::scalar(AddrSpace::Global, Type::I64)),
                &[a],
            )
        } else {
            let u = self.src(ins, &ubo, 0, As::U32)?;
            let u = self.resize(u, Type::I32, false);
            let eight = self.iconst(Type::I32, 8);
            let ub = self.ins(InstKind::IBinary(IBinOp::Mul), &[u, eight]);
            let base_off = self.iconst(Type::I32, u64::from(self.cfg.uniforms.ubo_off));
            let ub = self.ins(InstKind::IBinary(IBinOp::Add), &[ub, base_off]);
            self.ins(
                InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, Type::I64)),
                &[ub],
            )
        };
        let mask = self.iconst(Type::I64, 0x1_ffff_ffff_ffff);
        Ok(self.ins(InstKind::IBinary(IBinOp::And), &[desc, mask]))
    }

    /// `base + SRC1 * 16`: the vec4 of the UBO that SRC1 names.
    fn ubo_vec4_addr(&mut self, ins: &Instr, base: Value) -> Result<Value, LiftError> {
        let vec4 = self.field_op(ins, field::SRC1)?;
        let off = self.src(ins, &vec4, 0, As::U32)?;
        let off = self.resize(off, Type::I64, false);
        let sixteen = self.iconst(Type::I64, 16);
        let byte = self.ins(InstKind::IBinary(IBinOp::Mul), &[off, sixteen]);
        Ok(self.ins(InstKind::IBinary(IBinOp::Add), &[base, byte]))
    }

    /// ldc.N.k c[a1.x], vec4, ubo: copies N vec4s of the UBO (from vec4 `vec4`,
    /// addressed as ldc does) to the const file from dword a1.x on
    /// (ir3-cat6.xml: "the const file offset is specified in a1.x and is in
    /// units of components, and the number of vec4's to copy is specified in
    /// LOAD_SIZE").
    fn lift_ldc_k(&mut self, ins: &Instr) -> Result<(), LiftError> {
        let n = ins.get(field::LOAD_SIZE).unwrap_or(1);
        if !(1..=256).contains(&n) {
            return Err(self.malformed(ins, format!("{n} vec4s")));
        }
        let base = self.ubo_base(ins)?;
        let first = self.ubo_vec4_addr(ins, base)?;
        let a1 = self.read_full(super::regs::A1);
        let dst = self.resize(a1, Type::I32, false);
        let acc = Self::access(AddrSpace::Global, 32, false, false, 4);
        for v in 0..n {
            let a = self.add64(first, v * 16);
            let vals = self.inst_all(InstKind::Load(acc), &[a]);
            for (c, val) in vals.into_iter().enumerate() {
                let kc = self.iconst(Type::I32, (v * 4) as u64 + c as u64);
                let idx = self.ins(InstKind::IBinary(IBinOp::Add), &[dst, kc]);
                self.const_store(idx, val)?;
            }
        }
        Ok(())
    }

    /// stc / ldg.k / ldc.k: write SIZE dwords of the const file at `c[imm]` or
    /// `c[a1.x + off]` (dword units, inferred from mesa's preamble lowering).
    fn lift_const_write(&mut self, ins: &Instr) -> Result<(), LiftError> {
        if ins.encoding == "ldc.k" {
            return self.lift_ldc_k(ins);
        }
        let d = self.field_op(ins, field::DST)?;
        let first = match d.kind {
            OperandKind::Imm(i) => self.iconst(Type::I32, i as u64),
            OperandKind::ConstA1(off) => {
                let a1 = self.read_full(super::regs::A1);
                let o = self.iconst(Type::I32, u64::from(off));
                self.ins(InstKind::IBinary(IBinOp::Add), &[a1, o])
            }
            _ => return Err(self.malformed(ins, format!("const destination {:?}", d.kind))),
        };
        let vals: Vec<Value> = match ins.encoding {
            "stc" => {
                let n = self.count_of(ins)?;
                let s = self.field_op(ins, field::SRC)?;
                let mut v = Vec::new();
                for k in 0..u32::from(n) {
                    let o = self.reg_plus(ins, &s, k)?;
                    v.push(self.src(ins, &o, 0, As::U32)?);
                }
                v
            }
            "ldg.k" => {
                let n = self.count_of(ins)?;
                let s1 = self.field_op(ins, field::SRC1)?;
                let p = self.pair(ins, &s1)?;
                let a = self.add64(p, ins.get(field::OFF).unwrap_or(0));
                let acc = Self::access(AddrSpace::Global, 32, false, false, n);
                self.inst_all(InstKind::Load(acc), &[a])
            }
            _ => return Err(self.unsupported(ins)),
        };
        for (k, v) in vals.into_iter().enumerate() {
            let kc = self.iconst(Type::I32, k as u64);
            let idx = self.ins(InstKind::IBinary(IBinOp::Add), &[first, kc]);
            self.const_store(idx, v)?;
        }
        Ok(())
    }

    fn lift_shfl(&mut self, ins: &Instr) -> Result<(), LiftError> {
        let s1 = self.field_op(ins, field::SRC1)?;
        let s2 = self.field_op(ins, field::SRC2)?;
        let v = self.src(ins, &s1, 0, As::U32)?;
        let n = self.src(ins, &s2, 0, As::U32)?;
        let n = self.resize(n, Type::I32, false);
        let m = self.iconst(Type::I1, 1);
        let r = match ins.get(field::MODE).unwrap_or(-1) {
            1 => self.ins(InstKind::Shuffle(ShuffleKind::Xor), &[m, v, n]),
            2 => self.ins(InstKind::Shuffle(ShuffleKind::Up), &[m, v, n]),
            3 => self.ins(InstKind::Shuffle(ShuffleKind::Down), &[m, v, n]),
            6 | 7 => {
                // rup / rdown: rotate within the wave.
                let lane = self.ins(InstKind::Builtin(wavejit_ir::Builtin::LaneId), &[]);
                let ws = self.ins(InstKind::Builtin(wavejit_ir::Builtin::WaveSize), &[]);
                let op = if ins.get(field::MODE) == Some(7) {
                    IBinOp::Add
                } else {
                    IBinOp::Sub
                };
                let t = self.ins(InstKind::IBinary(op), &[lane, n]);
                let t = self.ins(InstKind::IBinary(IBinOp::Add), &[t, ws]);
                let t = self.ins(InstKind::IBinary(IBinOp::RemU), &[t, ws]);
                self.ins(InstKind::Shuffle(ShuffleKind::Index), &[m, v, t])
            }
            _ => return Err(self.unsupported(ins)),
        };
        let d = self.field_op(ins, field::DST)?;
        self.dst(ins, &d, 0, r)
    }

    pub(crate) fn lift_cat7(&mut self, ins: &Instr) -> Result<(), LiftError> {
        match ins.encoding {
            "bar" => {
                self.ins(InstKind::Barrier, &[]);
            }
            "fence" => {
                self.ins(InstKind::Fence(wavejit_ir::Scope::Device), &[]);
            }
            // Timing and cache maintenance: no functional effect.
            "sleep" | "icinv" | "dccln" | "dcinv" | "dcflu" | "ccinv" | "lock" | "unlock"
            | "alias" => {}
            _ => return Err(self.unsupported(ins)),
        }
        Ok(())
    }
}
