//! The register file: cached slots in private memory, operand reads (registers,
//! consts, immediates, float lookup table, relative forms) and destination
//! writes, with MERGEDREGS aliasing and (rpt) offsets.

use wavejit_ir::{AddrSpace, CastOp, FloatFormat, InstKind, MemAccess, Type, Value};

use super::{Cached, LiftError, Lifter, layout};
use crate::ir3::{Instr, Operand, OperandKind};

/// Cache keys: full slot n (0..256), separate half slot 256 + n.
const HALF_KEY: u32 = 256;
pub(crate) const A0: u32 = 0xf4;
pub(crate) const A1: u32 = 0xf5;
pub(crate) const P0: u32 = 0xf8;

/// What an operand is read as: its width and whether it holds a float (for const
/// demotion and immediates).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct As {
    pub half: bool,
    pub float: bool,
}

impl As {
    pub const U32: As = As {
        half: false,
        float: false,
    };
}

/// The float lookup table (cat2 FLUT immediates): (f32 bits, f16 bits).
const FLUT: [(u32, u16); 12] = [
    (0x0000_0000, 0x0000),
    (0x3f00_0000, 0x3800),
    (0x3f80_0000, 0x3c00),
    (0x4000_0000, 0x4000),
    (0x402d_f854, 0x4170),
    (0x4049_0fdb, 0x4248),
    (0x3ea2_f983, 0x3518),
    (0x3f31_7218, 0x398c),
    (0x3fb8_aa3b, 0x3dc5),
    (0x3e9a_209b, 0x34d1),
    (0x4054_9a78, 0x42a5),
    (0x4080_0000, 0x4400),
];

pub(crate) fn private(ty: Type) -> MemAccess {
    MemAccess::scalar(AddrSpace::Private, ty)
}

impl Lifter<'_> {
    // ---- slots -------------------------------------------------------------

    fn slot_addr(key: u32) -> u64 {
        if key < HALF_KEY {
            u64::from(layout::FULL_FILE + key * 4)
        } else {
            u64::from(layout::HALF_FILE + (key - HALF_KEY) * 2)
        }
    }

    fn slot_ty(key: u32) -> Type {
        if key < HALF_KEY { Type::I32 } else { Type::I16 }
    }

    /// Shared registers (r48..r55 and their halves) hold one value per wave: they
    /// live in workgroup memory, in the region of the fiber's wave, uncached.
    fn shared_reg_addr(&mut self, key: u32) -> Option<Value> {
        let off = match key {
            0xc0..0xe0 => (key - 0xc0) * 4,
            k if (HALF_KEY + 0xc0..HALF_KEY + 0xe0).contains(&k) => 128 + (k - HALF_KEY - 0xc0) * 2,
            _ => return None,
        };
        let wave = self.ins(InstKind::Builtin(wavejit_ir::Builtin::WaveId), &[]);
        let per = self.iconst(Type::I32, u64::from(layout::SHARED_REGS_PER_WAVE));
        let w = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Mul), &[wave, per]);
        let b = self.iconst(Type::I32, u64::from(self.shared_regs + off));
        Some(self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Add), &[w, b]))
    }

    fn slot_get(&mut self, key: u32) -> Value {
        if let Some(&b) = self.held.get(&key) {
            return self.ins(InstKind::Builtin(b), &[]);
        }
        if let Some(a) = self.shared_reg_addr(key) {
            let ty = Self::slot_ty(key);
            return self.ins(
                InstKind::Load(MemAccess::scalar(AddrSpace::Shared, ty)),
                &[a],
            );
        }
        if let Some(c) = self.cache.get(&key) {
            return c.value;
        }
        let addr = self.iconst(Type::I32, Self::slot_addr(key));
        let v = self.ins(InstKind::Load(private(Self::slot_ty(key))), &[addr]);
        self.cache.insert(
            key,
            Cached {
                value: v,
                dirty: false,
            },
        );
        v
    }

    fn slot_set(&mut self, key: u32, value: Value) {
        self.held_written |= self.held.contains_key(&key);
        if let Some(a) = self.shared_reg_addr(key) {
            let ty = Self::slot_ty(key);
            self.ins(
                InstKind::Store(MemAccess::scalar(AddrSpace::Shared, ty)),
                &[a, value],
            );
            return;
        }
        self.cache.insert(key, Cached { value, dirty: true });
    }

    /// Writes every dirty slot back to memory (they stay cached, now clean).
    pub(crate) fn flush_dirty(&mut self) {
        let dirty: Vec<(u32, Value)> = self
            .cache
            .iter()
            .filter(|(_, c)| c.dirty)
            .map(|(k, c)| (*k, c.value))
            .collect();
        for (key, v) in dirty {
            let addr = self.iconst(Type::I32, Self::slot_addr(key));
            self.ins(InstKind::Store(private(Self::slot_ty(key))), &[addr, v]);
            if let Some(c) = self.cache.get_mut(&key) {
                c.dirty = false;
            }
        }
    }

    /// Before leaving a block: memory holds every register.
    pub(crate) fn flush_all(&mut self) {
        self.flush_dirty();
        self.cache.clear();
    }

    // ---- registers by regid -------------------------------------------------

    pub(crate) fn read_full(&mut self, regid: u32) -> Value {
        self.slot_get(regid & 0xff)
    }

    pub(crate) fn write_full(&mut self, regid: u32, v: Value) {
        let v = self.resize(v, Type::I32, false);
        self.slot_set(regid & 0xff, v);
    }

    /// The full slot and half (0 low, 1 high) a merged half register aliases.
    fn merged_half(regid: u32) -> (u32, u32) {
        if regid >= 0xc0 {
            (0xc0 + ((regid - 0xc0) >> 1), regid & 1)
        } else {
            (regid >> 1, regid & 1)
        }
    }

    pub(crate) fn read_half(&mut self, regid: u32) -> Value {
        let regid = regid & 0xff;
        if !self.cfg.merged_regs {
            return self.slot_get(HALF_KEY + regid);
        }
        let (slot, hi) = Self::merged_half(regid);
        let full = self.slot_get(slot);
        let shifted = if hi == 1 {
            let s = self.iconst(Type::I32, 16);
            self.ins(InstKind::IBinary(wavejit_ir::IBinOp::ShrU), &[full, s])
        } else {
            full
        };
        self.ins(
            InstKind::Cast {
                op: CastOp::Trunc,
                to: Type::I16,
            },
            &[shifted],
        )
    }

    pub(crate) fn write_half(&mut self, regid: u32, v: Value) {
        let regid = regid & 0xff;
        let v = self.resize(v, Type::I16, false);
        if !self.cfg.merged_regs {
            self.slot_set(HALF_KEY + regid, v);
            return;
        }
        let (slot, hi) = Self::merged_half(regid);
        let full = self.slot_get(slot);
        let off = self.iconst(Type::I32, u64::from(hi * 16));
        let width = self.iconst(Type::I32, 16);
        let wide = self.resize(v, Type::I32, false);
        let merged = self.ins(InstKind::BitInsert, &[full, wide, off, width]);
        self.slot_set(slot, merged);
    }

    /// A register of the given width.
    pub(crate) fn read_reg(&mut self, regid: u32, half: bool) -> Value {
        if half {
            self.read_half(regid)
        } else {
            self.read_full(regid)
        }
    }

    // ---- relative (a0.x) accesses --------------------------------------------

    /// Private-memory byte offset of register `a0.x + off` (+ `i`).
    fn rel_reg_addr(&mut self, off: i64, half: bool) -> Value {
        let a0 = self.read_full(A0);
        let o = self.iconst(Type::I32, off as u64);
        let idx = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Add), &[a0, o]);
        let m = self.iconst(Type::I32, 0xff);
        let idx = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::And), &[idx, m]);
        let (scale, base) = match (half, self.cfg.merged_regs) {
            (false, _) => (4, layout::FULL_FILE),
            (true, true) => (2, layout::FULL_FILE),
            (true, false) => (2, layout::HALF_FILE),
        };
        let s = self.iconst(Type::I32, scale);
        let byte = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Mul), &[idx, s]);
        let b = self.iconst(Type::I32, u64::from(base));
        self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Add), &[byte, b])
    }

    fn read_rel_reg(&mut self, off: i64, half: bool) -> Value {
        self.flush_dirty();
        let addr = self.rel_reg_addr(off, half);
        let ty = if half { Type::I16 } else { Type::I32 };
        self.ins(InstKind::Load(private(ty)), &[addr])
    }

    fn write_rel_reg(&mut self, off: i64, half: bool, v: Value) {
        let ty = if half { Type::I16 } else { Type::I32 };
        let v = self.resize(v, ty, false);
        self.flush_dirty();
        let addr = self.rel_reg_addr(off, half);
        self.ins(InstKind::Store(private(ty)), &[addr, v]);
        // Any cached slot may be stale now.
        self.cache.clear();
    }

    // ---- consts ---------------------------------------------------------------

    /// A load from the const file: the dispatch's uniforms, or the workgroup's
    /// writable copy in shared memory when the kernel writes consts (preamble).
    fn uniform_load(&mut self, byte: Value, ty: Type) -> Value {
        let (space, byte) = match self.const_shared {
            Some(base) => {
                let b = self.iconst(Type::I32, u64::from(base));
                let a = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Add), &[byte, b]);
                (AddrSpace::Shared, a)
            }
            None => (AddrSpace::Uniform, byte),
        };
        self.ins(InstKind::Load(MemAccess::scalar(space, ty)), &[byte])
    }

    /// Writes const dword `idx` (masked to the 1024-dword file) of the writable copy.
    pub(crate) fn const_store(&mut self, idx: Value, v: Value) -> Result<(), LiftError> {
        let Some(base) = self.const_shared else {
            return Err(LiftError::Internal {
                pc: self.pc,
                what: "const write without a writable const file".into(),
            });
        };
        let m = self.iconst(Type::I32, 0x3ff);
        let idx = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::And), &[idx, m]);
        let four = self.iconst(Type::I32, 4);
        let byte = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Mul), &[idx, four]);
        let b = self.iconst(Type::I32, u64::from(base));
        let a = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Add), &[byte, b]);
        let v = self.resize(v, Type::I32, false);
        self.ins(
            InstKind::Store(MemAccess::scalar(AddrSpace::Shared, Type::I32)),
            &[a, v],
        );
        Ok(())
    }

    /// 32-bit const dword `idx` (`c<idx/4>.<idx%4>`); `idx` may be dynamic.
    pub(crate) fn const_dword(&mut self, idx: Value) -> Value {
        let m = self.iconst(Type::I32, 0x3ff);
        let idx = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::And), &[idx, m]);
        let four = self.iconst(Type::I32, 4);
        let byte = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Mul), &[idx, four]);
        self.uniform_load(byte, Type::I32)
    }

    fn read_const(&mut self, idx: Value, a: As, half: bool) -> Value {
        if !half {
            return self.const_dword(idx);
        }
        if self.cfg.const_demotion {
            // hcN: the 32-bit value of cN converted to 16 bits.
            let full = self.const_dword(idx);
            if a.float {
                let f = self.bitcast(full, Type::F32);
                let h = self.ins(
                    InstKind::Fcvt {
                        from: FloatFormat::F32,
                        to: FloatFormat::F16,
                        mode: super::a630_mode(true, false),
                    },
                    &[f],
                );
                self.bitcast(h, Type::I16)
            } else {
                self.resize(full, Type::I16, false)
            }
        } else {
            // Packed halves: hc0.y is the high half of c0.x.
            let m = self.iconst(Type::I32, 0x7ff);
            let idx = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::And), &[idx, m]);
            let two = self.iconst(Type::I32, 2);
            let byte = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Mul), &[idx, two]);
            self.uniform_load(byte, Type::I16)
        }
    }

    // ---- operands --------------------------------------------------------------

    /// Reads source `op` for repeat iteration `i` as raw bits: `i16` for half
    /// operands, `i32` otherwise. Modifiers are left to the caller.
    pub(crate) fn src(
        &mut self,
        ins: &Instr,
        op: &Operand,
        i: u32,
        a: As,
    ) -> Result<Value, LiftError> {
        let inc = if op.repeat_inc { i } else { 0 };
        let half = op.half || a.half;
        Ok(match op.kind {
            OperandKind::Gpr(r) => {
                let r = u32::from(r) + inc;
                if (P0..P0 + 4).contains(&r) || r == A0 || r == A1 {
                    let v = self.read_full(r);
                    if half {
                        self.resize(v, Type::I16, false)
                    } else {
                        v
                    }
                } else {
                    self.read_reg(r, op.half)
                }
            }
            OperandKind::Const(c) => {
                let idx = self.iconst(Type::I32, u64::from(c) + u64::from(inc));
                self.read_const(idx, a, op.half)
            }
            OperandKind::RelGpr(off) => self.read_rel_reg(i64::from(off) + i64::from(inc), op.half),
            OperandKind::RelConst(off) => {
                let a0 = self.read_full(A0);
                let o = self.iconst(Type::I32, (i64::from(off) + i64::from(inc)) as u64);
                let idx = self.ins(InstKind::IBinary(wavejit_ir::IBinOp::Add), &[a0, o]);
                self.read_const(idx, a, op.half)
            }
            OperandKind::Imm(v) => {
                let ty = if half { Type::I16 } else { Type::I32 };
                self.iconst(ty, v as u64)
            }
            OperandKind::FloatImm { bits, width } => {
                if half || width == 16 {
                    self.iconst(Type::I16, u64::from(bits & 0xffff))
                } else {
                    self.iconst(Type::I32, u64::from(bits))
                }
            }
            OperandKind::Flut(idx) => {
                let Some(&(f32b, f16b)) = FLUT.get(usize::from(idx)) else {
                    return Err(
                        self.malformed(ins, format!("float table index {idx} is undefined"))
                    );
                };
                if half {
                    self.iconst(Type::I16, u64::from(f16b))
                } else {
                    self.iconst(Type::I32, u64::from(f32b))
                }
            }
            OperandKind::ConstA1(_) | OperandKind::Other { .. } => {
                return Err(
                    self.malformed(ins, format!("operand {:?} cannot be read here", op.kind))
                );
            }
        })
    }

    /// Writes `v` to destination `op` at repeat iteration `i`. p0 gets 0/1, a0.x
    /// the sign-extended low 16 bits, a1.x the zero-extended ones.
    pub(crate) fn dst(
        &mut self,
        ins: &Instr,
        op: &Operand,
        i: u32,
        v: Value,
    ) -> Result<(), LiftError> {
        match op.kind {
            OperandKind::Gpr(r) => {
                let r = u32::from(r) + i;
                if (P0..P0 + 4).contains(&r) {
                    // [MODEL] Any op may name p0 as its destination; the
                    // predicate is whether the result's bits are non-zero
                    // (for a float result too: -0.0 sets it).
                    let v = self.resize(v, self.ty(v).as_int(), false);
                    let z = self.iconst(self.ty(v), 0);
                    let b = self.ins(InstKind::Icmp(wavejit_ir::IntCC::Ne), &[v, z]);
                    let b = self.resize(b, Type::I32, false);
                    self.write_full(r, b);
                } else if r == A0 {
                    let h = self.resize(v, Type::I16, false);
                    let s = self.resize(h, Type::I32, true);
                    self.write_full(r, s);
                } else if r == A1 {
                    let h = self.resize(v, Type::I16, false);
                    let z = self.resize(h, Type::I32, false);
                    self.write_full(r, z);
                } else if op.half {
                    self.write_half(r, v);
                } else {
                    self.write_full(r, v);
                }
            }
            OperandKind::RelGpr(off) => {
                self.write_rel_reg(i64::from(off) + i64::from(i), op.half, v)
            }
            _ => {
                return Err(self.malformed(
                    ins,
                    format!("destination {:?} cannot be written here", op.kind),
                ));
            }
        }
        Ok(())
    }

    // ---- value helpers ----------------------------------------------------------

    /// Integer width change: extend (sign if `signed`) or truncate; floats and
    /// same-width values pass through a bitcast/unchanged.
    pub(crate) fn resize(&mut self, v: Value, to: Type, signed: bool) -> Value {
        let from = self.ty(v);
        let from_i = from.as_int();
        let v = if from.is_float() {
            self.bitcast(v, from_i)
        } else {
            v
        };
        let to_i = to.as_int();
        let r = if from_i.bits() == to_i.bits() {
            v
        } else if from_i.bits() < to_i.bits() {
            let op = if signed && from_i != Type::I1 {
                CastOp::Sext
            } else {
                CastOp::Zext
            };
            self.ins(InstKind::Cast { op, to: to_i }, &[v])
        } else {
            self.ins(
                InstKind::Cast {
                    op: CastOp::Trunc,
                    to: to_i,
                },
                &[v],
            )
        };
        if to.is_float() {
            self.bitcast(r, to)
        } else {
            r
        }
    }

    pub(crate) fn bitcast(&mut self, v: Value, to: Type) -> Value {
        if self.ty(v) == to {
            return v;
        }
        self.ins(
            InstKind::Cast {
                op: CastOp::Bitcast,
                to,
            },
            &[v],
        )
    }

    pub(crate) fn malformed(&self, ins: &Instr, what: String) -> LiftError {
        LiftError::Malformed {
            name: ins.mnemonic.clone(),
            pc: self.pc,
            word: ins.word,
            what,
        }
    }

    /// Entry: zero-initialised file, then the dispatch inputs at their regids.
    /// With `hold`, a shared register given the workgroup id is not stored:
    /// reads of it give the id (one value per wave, as the register holds,
    /// since a wave is inside one workgroup) for as long as the program does
    /// not write it.
    pub(crate) fn init_registers(&mut self, hold: bool) {
        use wavejit_ir::Builtin;
        let cfg = self.cfg.clone();
        for d in 0..3u8 {
            if cfg.local_id_regid < 0xfc {
                let v = self.ins(InstKind::Builtin(Builtin::LocalId(d)), &[]);
                self.write_full(cfg.local_id_regid + u32::from(d), v);
            }
            let wg = (cfg.workgroup_id_regid + u32::from(d)) & 0xff;
            if hold && cfg.workgroup_id_regid < 0xfc && (0xc0..0xe0).contains(&wg) {
                self.held.insert(wg, Builtin::WorkgroupId(d));
            } else if cfg.workgroup_id_regid < 0xfc {
                let v = self.ins(InstKind::Builtin(Builtin::WorkgroupId(d)), &[]);
                self.write_full(cfg.workgroup_id_regid + u32::from(d), v);
            }
        }
        if cfg.linear_local_id_regid < 0xfc {
            let v = self.ins(InstKind::Builtin(Builtin::LocalIndex), &[]);
            self.write_full(cfg.linear_local_id_regid, v);
        }
    }
}
