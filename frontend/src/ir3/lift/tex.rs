//! Images: cat5 isam / isaml / getsize and the a6xx IBO ops ldib.b / stib.b /
//! resinfo.b / atomic.b.*, reading A6XX_TEX_CONST descriptors (linear 1D/2D,
//! FMT6_32_32_32_32_FLOAT and FMT6_16_16_16_16_FLOAT as tinygrad emits them;
//! typed atomics on FMT6_32_UINT / FMT6_32_SINT) from the loaded state, the
//! TEXMEMOBJ / UAV base, or a bindless base (see `bindless`).

use crate::ir3::field;
use wavejit_ir::{
    AddrSpace, AtomicOp, BlockCall, CastOp, FloatFormat, IBinOp, InstKind, IntCC, MemAccess,
    Terminator, Type, Value,
};

use super::regs::As;
use super::{LiftError, Lifter, a630_mode, info};
use crate::ir3::{Instr, Operand, OperandKind};

const FMT6_32_32_32_32_FLOAT: u64 = 0x82;
const FMT6_16_16_16_16_FLOAT: u64 = 0x62;
/// a6xx_enums.xml: the 32-bit integer single-component formats.
const FMT6_32_UINT: u64 = 0x4b;
const FMT6_32_SINT: u64 = 0x4c;

/// The fields of a texture/IBO descriptor an access needs.
struct Desc {
    fmt: Value,
    width: Value,
    height: Value,
    pitch: Value,
    /// 0 1D, 1 2D, 4 buffer ...
    kind: Value,
    base: Value,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Table {
    Tex,
    Uav,
}

impl Lifter<'_> {
    fn bin(&mut self, op: IBinOp, a: Value, b: Value) -> Value {
        self.ins(InstKind::IBinary(op), &[a, b])
    }

    fn bits_of(&mut self, v: Value, shift: u64, mask: u64) -> Value {
        let ty = self.ty(v);
        let s = self.iconst(ty, shift);
        let m = self.iconst(ty, mask);
        let x = self.bin(IBinOp::ShrU, v, s);
        self.bin(IBinOp::And, x, m)
    }

    /// Descriptor dwords 0..5 of slot `idx` of `table`: loaded state (uniforms)
    /// for immediate indices that were loaded, else memory at the table's base
    /// register (TEXMEMOBJ / UAV base), as the hardware does for indices past the
    /// preloaded ones.
    fn descriptor(&mut self, table: Table, idx: &Operand, ins: &Instr) -> Result<Desc, LiftError> {
        let (off, count, info) = match table {
            Table::Tex => (
                self.cfg.uniforms.tex_off,
                self.cfg.uniforms.tex_count,
                info::TEXMEMOBJ_BASE,
            ),
            Table::Uav => (
                self.cfg.uniforms.uav_off,
                self.cfg.uniforms.uav_count,
                info::UAV_BASE,
            ),
        };
        let dw: Vec<Value> = match idx.kind {
            OperandKind::Imm(i) if (i as u64) < u64::from(count) => {
                let a = self.iconst(Type::I32, u64::from(off) + 64 * i as u64);
                self.descriptor_words(AddrSpace::Uniform, a)
            }
            _ => {
                let i = self.src(ins, idx, 0, As::U32)?;
                let i = self.resize(i, Type::I64, false);
                let ia = self.iconst(Type::I32, u64::from(self.cfg.uniforms.info_off + info));
                let base = self.ins(
                    InstKind::Load(MemAccess::scalar(AddrSpace::Uniform, Type::I64)),
                    &[ia],
                );
                let sixty4 = self.iconst(Type::I64, 64);
                let o = self.bin(IBinOp::Mul, i, sixty4);
                let a = self.bin(IBinOp::Add, base, o);
                self.descriptor_words(AddrSpace::Global, a)
            }
        };
        self.parse_descriptor(&dw)
    }

    /// The descriptor a bindless access names: `(base, index)` -> memory.
    fn bindless_descriptor(&mut self, base: u32, idx: Value) -> Result<Desc, LiftError> {
        let a = self.bindless_desc_addr(base, idx);
        let dw = self.descriptor_words(AddrSpace::Global, a);
        self.parse_descriptor(&dw)
    }

    /// Dwords 0..5 of the descriptor at `a` in `space`: an `i32` offset in the
    /// uniform space (descriptors loaded by CP_LOAD_STATE6) or an `i64` global
    /// address (an unmapped one faults at this pc).
    fn descriptor_words(&mut self, space: AddrSpace, a: Value) -> Vec<Value> {
        let acc = MemAccess {
            space,
            ty: Type::I32,
            bits: 32,
            count: 4,
            signed: false,
            align: 4,
        };
        let mut v = self.inst_all(InstKind::Load(acc), &[a]);
        let offset_ty = if space == AddrSpace::Uniform {
            Type::I32
        } else {
            Type::I64
        };
        let sixteen = self.iconst(offset_ty, 16);
        let a2 = self.bin(IBinOp::Add, a, sixteen);
        v.extend(self.inst_all(InstKind::Load(MemAccess { count: 2, ..acc }), &[a2]));
        v
    }

    fn parse_descriptor(&mut self, dw: &[Value]) -> Result<Desc, LiftError> {
        if dw.len() != 6 {
            return Err(LiftError::Internal {
                pc: self.pc,
                what: "descriptor load".into(),
            });
        }
        let fmt = self.bits_of(dw[0], 22, 0xff);
        let width = self.bits_of(dw[1], 0, 0x7fff);
        let height = self.bits_of(dw[1], 15, 0x7fff);
        let pitch = self.bits_of(dw[2], 7, 0x3f_ffff);
        let kind = self.bits_of(dw[2], 29, 7);
        let lo = self.bits_of(dw[4], 0, 0xffff_ffe0);
        let hi = self.bits_of(dw[5], 0, 0x1_ffff);
        let lo = self.resize(lo, Type::I64, false);
        let hi = self.resize(hi, Type::I64, false);
        let s = self.iconst(Type::I64, 32);
        let hi = self.bin(IBinOp::Shl, hi, s);
        let base = self.bin(IBinOp::Or, lo, hi);
        Ok(Desc {
            fmt,
            width,
            height,
            pitch,
            kind,
            base,
        })
    }

    /// (x, y) texel coordinates from a register vector; y is 0 for 1D/buffer.
    fn coords(
        &mut self,
        ins: &Instr,
        c: &Operand,
        d: &Desc,
        two_d: bool,
    ) -> Result<(Value, Value), LiftError> {
        let x = self.src(ins, c, 0, As::U32)?;
        let x = self.resize(x, Type::I32, false);
        let y = if two_d {
            let yo = self.reg_plus(ins, c, 1)?;
            let y = self.src(ins, &yo, 0, As::U32)?;
            let y = self.resize(y, Type::I32, false);
            let one = self.iconst(Type::I32, 1);
            let is2d = self.ins(InstKind::Icmp(IntCC::Eq), &[d.kind, one]);
            let z = self.iconst(Type::I32, 0);
            self.ins(InstKind::Select, &[is2d, y, z])
        } else {
            self.iconst(Type::I32, 0)
        };
        Ok((x, y))
    }

    /// Texel address, whether it is inside the image, and whether the format is
    /// f32x4 (else f16x4).
    fn texel(&mut self, d: &Desc, x: Value, y: Value) -> (Value, Value, Value) {
        let f32c = self.iconst(Type::I32, FMT6_32_32_32_32_FLOAT);
        let is_f32 = self.ins(InstKind::Icmp(IntCC::Eq), &[d.fmt, f32c]);
        let x_ok = self.ins(InstKind::Icmp(IntCC::Ult), &[x, d.width]);
        let y_ok = self.ins(InstKind::Icmp(IntCC::Ult), &[y, d.height]);
        let one = self.iconst(Type::I32, 1);
        let is2d = self.ins(InstKind::Icmp(IntCC::Eq), &[d.kind, one]);
        let t = self.iconst(Type::I1, 1);
        let y_ok = self.ins(InstKind::Select, &[is2d, y_ok, t]);
        let inb = self.bin(IBinOp::And, x_ok, y_ok);
        // A format other than the two supported ones reads address 0: a clear
        // memory fault naming this pc instead of made-up texels.
        let f16c = self.iconst(Type::I32, FMT6_16_16_16_16_FLOAT);
        let is_f16 = self.ins(InstKind::Icmp(IntCC::Eq), &[d.fmt, f16c]);
        let known = self.bin(IBinOp::Or, is_f32, is_f16);
        let b16 = self.iconst(Type::I64, 16);
        let b8 = self.iconst(Type::I64, 8);
        let bpp = self.ins(InstKind::Select, &[is_f32, b16, b8]);
        let x64 = self.resize(x, Type::I64, false);
        let y64 = self.resize(y, Type::I64, false);
        let p64 = self.resize(d.pitch, Type::I64, false);
        let row = self.bin(IBinOp::Mul, y64, p64);
        let col = self.bin(IBinOp::Mul, x64, bpp);
        let off = self.bin(IBinOp::Add, row, col);
        let a = self.bin(IBinOp::Add, d.base, off);
        let a = self.ins(InstKind::Select, &[inb, a, d.base]);
        let zero = self.iconst(Type::I64, 0);
        let a = self.ins(InstKind::Select, &[known, a, zero]);
        (a, inb, is_f32)
    }

    /// The four components of a texel as f32 bits (i32), 0 outside the image.
    fn read_texel(&mut self, a: Value, inb: Value, is_f32: Value) -> Vec<Value> {
        let acc = MemAccess {
            space: AddrSpace::Global,
            ty: Type::I32,
            bits: 32,
            count: 2,
            signed: false,
            align: 8,
        };
        let first = self.inst_all(InstKind::Load(acc), &[a]);
        let eight = self.iconst(Type::I64, 8);
        let a8 = self.bin(IBinOp::Add, a, eight);
        let a2 = self.ins(InstKind::Select, &[is_f32, a8, a]);
        let second = self.inst_all(InstKind::Load(acc), &[a2]);
        let words = [first[0], first[1], second[0], second[1]];
        let mut out = Vec::new();
        for c in 0..4 {
            let as_f32 = words[c];
            let w = first[c / 2];
            let h = if c % 2 == 0 {
                self.bits_of(w, 0, 0xffff)
            } else {
                self.bits_of(w, 16, 0xffff)
            };
            let h = self.resize(h, Type::I16, false);
            let hf = self.bitcast(h, Type::F16);
            let wide = self.ins(
                InstKind::Fcvt {
                    from: FloatFormat::F16,
                    to: FloatFormat::F32,
                    mode: wavejit_ir::FloatMode::IEEE,
                },
                &[hf],
            );
            let wide = self.bitcast(wide, Type::I32);
            let v = self.ins(InstKind::Select, &[is_f32, as_f32, wide]);
            let z = self.iconst(Type::I32, 0);
            out.push(self.ins(InstKind::Select, &[inb, v, z]));
        }
        out
    }

    /// Writes the enabled components (packed into consecutive registers).
    fn write_texel(
        &mut self,
        ins: &Instr,
        dst: &Operand,
        comps: &[Value],
        wrmask: i64,
        half: bool,
    ) -> Result<(), LiftError> {
        let mut k = 0;
        for (c, &v) in comps.iter().enumerate() {
            if wrmask & (1 << c) == 0 {
                continue;
            }
            let v = if half {
                let f = self.bitcast(v, Type::F32);
                let h = self.ins(
                    InstKind::Fcvt {
                        from: FloatFormat::F32,
                        to: FloatFormat::F16,
                        mode: a630_mode(true, false),
                    },
                    &[f],
                );
                self.bitcast(h, Type::I16)
            } else {
                v
            };
            let mut d = self.reg_plus(ins, dst, k)?;
            d.half = half;
            self.dst(ins, &d, 0, v)?;
            k += 1;
        }
        Ok(())
    }

    pub(crate) fn lift_cat5(&mut self, ins: &Instr) -> Result<(), LiftError> {
        match ins.encoding {
            "isam" | "isaml" | "getsize" => {}
            "brcst.active" => return self.lift_brcst_active(ins),
            name if name.starts_with("quad_shuffle.") => return self.lift_quad_shuffle(ins),
            _ => return Err(self.unsupported(ins)),
        }
        let d = if ins.get(field::BINDLESS).unwrap_or(0) != 0 {
            let (base, idx) = self.cat5_bindless_texture(ins)?;
            self.bindless_descriptor(base, idx)?
        } else {
            let tex = if ins.get(field::S2EN_BINDLESS).unwrap_or(0) != 0 {
                // .s2en: SRC3 is a half pair (texture, sampler); the texture
                // index comes from its first half.
                let mut s3 = self.field_op(ins, field::SRC3)?;
                s3.half = true;
                s3
            } else {
                self.field_op(ins, field::TEX)?
            };
            self.descriptor(Table::Tex, &tex, ins)?
        };
        let dst = self.field_op(ins, field::DST)?;
        let wrmask = ins.get(field::WRMASK).unwrap_or(0xf);
        let half = ins.get(field::FULL) == Some(0) || dst.half;
        if ins.encoding == "getsize" {
            let one = self.iconst(Type::I32, 1);
            let comps = [d.width, d.height, one, one];
            let mut k = 0;
            for (c, &v) in comps.iter().enumerate() {
                if wrmask & (1 << c) != 0 {
                    let o = self.reg_plus(ins, &dst, k)?;
                    self.dst(ins, &o, 0, v)?;
                    k += 1;
                }
            }
            return Ok(());
        }
        let c = self.field_op(ins, field::SRC1)?;
        let (x, y) = self.coords(ins, &c, &d, true)?;
        let (a, inb, is_f32) = self.texel(&d, x, y);
        let comps = self.read_texel(a, inb, is_f32);
        self.write_texel(ins, &dst, &comps, wrmask, half)
    }

    /// ldib.b / stib.b / resinfo.b / atomic.b.*.
    pub(crate) fn lift_image(&mut self, ins: &Instr) -> Result<(), LiftError> {
        let slot = self.field_op(ins, field::SSBO)?;
        let d = if ins.get(field::BINDLESS).unwrap_or(0) != 0 {
            let base = self.bindless_base(ins)?;
            let idx = self.cat6_desc_index(ins, &slot)?;
            self.bindless_descriptor(base, idx)?
        } else {
            self.descriptor(Table::Uav, &slot, ins)?
        };
        let typed = matches!(
            ins.field(field::TYPED),
            Some(crate::ir3::FieldValue::Operand(Operand {
                kind: OperandKind::Other { bits: 1, .. },
                ..
            }))
        );
        let dims = ins.get(field::D).unwrap_or(1);
        let n = ins.get(field::TYPE_SIZE).unwrap_or(1).clamp(1, 4) as u32;
        let t = ins.get(field::TYPE).unwrap_or(3);
        if ins.encoding == "resinfo.b" {
            let dst = self.field_op(ins, field::DST)?;
            let comps = if dims >= 2 {
                vec![d.width, d.height]
            } else {
                let s = self.iconst(Type::I32, 15);
                let h = self.bin(IBinOp::Shl, d.height, s);
                vec![self.bin(IBinOp::Or, d.width, h)]
            };
            for (k, v) in comps.into_iter().enumerate() {
                self.dst(ins, &dst, k as u32, v)?;
            }
            return Ok(());
        }
        let coord = self.field_op(ins, field::SRC2)?;
        let mut data = self.field_op(ins, field::SRC1)?;
        data.half = ins.get(field::TYPE_HALF).unwrap_or(0) != 0;
        let elem: u64 = match super::mem::mem_type(t) {
            Some((bits, _)) => u64::from(bits / 8),
            None => return Err(self.malformed(ins, format!("type {t}"))),
        };
        let (mut x, y) = self.coords(ins, &coord, &d, typed && dims >= 2)?;
        // ldib/stib `coord+N` (HAS_OFFSET): an immediate element offset
        // (OFFSET_HI << 5 | OFFSET_LO, ir3-cat6.xml) that mesa only emits for
        // untyped SSBO accesses, added to the element index.
        let imm_off = ins.get(field::OFFSET).unwrap_or(0);
        if imm_off != 0 {
            if typed {
                return Err(LiftError::Undocumented {
                    name: ins.mnemonic.clone(),
                    pc: self.pc,
                    word: ins.word,
                    why: "an immediate offset on a typed image access is undocumented",
                });
            }
            let o = self.iconst(Type::I32, imm_off as u64);
            x = self.bin(IBinOp::Add, x, o);
        }
        if typed && ins.encoding == "stib.b" {
            // stib.b typed: convert to the image format, skip outside the image.
            let (a, inb, is_f32) = self.texel(&d, x, y);
            let mut vals = Vec::new();
            for k in 0..n {
                let o = self.reg_plus(ins, &data, k)?;
                let v = self.src(
                    ins,
                    &o,
                    0,
                    As {
                        half: t == 0,
                        float: true,
                    },
                )?;
                vals.push(v);
            }
            return self.store_texel(ins, a, inb, is_f32, &vals, t == 0);
        }
        if typed && ins.encoding == "ldib.b" {
            let (a, inb, is_f32) = self.texel(&d, x, y);
            let comps = self.read_texel(a, inb, is_f32);
            let mask = (1i64 << n) - 1;
            return self.write_texel(ins, &data, &comps, mask, t == 0);
        }
        if typed {
            // atomic.b.* typed.
            let (a, inb) = self.texel_r32(&d, x, y);
            return self.image_atomic(ins, a, Some(inb), &data, t);
        }
        // Untyped (SSBO): element index -> byte address.
        let x64 = self.resize(x, Type::I64, false);
        let e = self.iconst(Type::I64, elem);
        let off = self.bin(IBinOp::Mul, x64, e);
        let a = self.bin(IBinOp::Add, d.base, off);
        let half = elem == 2;
        let bits = (elem * 8) as u8;
        let acc = MemAccess {
            space: AddrSpace::Global,
            ty: if half { Type::I16 } else { Type::I32 },
            bits,
            count: n as u8,
            signed: false,
            align: elem as u32,
        };
        match ins.encoding {
            "ldib.b" => {
                let vals = self.inst_all(InstKind::Load(acc), &[a]);
                for (k, v) in vals.into_iter().enumerate() {
                    self.dst(ins, &data, k as u32, v)?;
                }
                Ok(())
            }
            "stib.b" => {
                let mut args = vec![a];
                for k in 0..n {
                    let o = self.reg_plus(ins, &data, k)?;
                    let v = self.src(ins, &o, 0, As { half, float: false })?;
                    args.push(self.resize(v, acc.ty, false));
                }
                self.ins(InstKind::Store(acc), &args);
                // The helper blocks are unused: fall through them.
                self.pass_through(2)
            }
            _ => self.image_atomic(ins, a, None, &data, t),
        }
    }

    /// Address of texel (x, y) of a 32-bit single-component image (R32_UINT /
    /// R32_SINT, the formats real hardware supports image atomics on) and
    /// whether it lies inside the image.
    fn texel_r32(&mut self, d: &Desc, x: Value, y: Value) -> (Value, Value) {
        let x_ok = self.ins(InstKind::Icmp(IntCC::Ult), &[x, d.width]);
        let y_ok = self.ins(InstKind::Icmp(IntCC::Ult), &[y, d.height]);
        let one = self.iconst(Type::I32, 1);
        let is2d = self.ins(InstKind::Icmp(IntCC::Eq), &[d.kind, one]);
        let t = self.iconst(Type::I1, 1);
        let y_ok = self.ins(InstKind::Select, &[is2d, y_ok, t]);
        let inb = self.bin(IBinOp::And, x_ok, y_ok);
        let x64 = self.resize(x, Type::I64, false);
        let y64 = self.resize(y, Type::I64, false);
        let p64 = self.resize(d.pitch, Type::I64, false);
        let row = self.bin(IBinOp::Mul, y64, p64);
        let four = self.iconst(Type::I64, 4);
        let col = self.bin(IBinOp::Mul, x64, four);
        let off = self.bin(IBinOp::Add, row, col);
        let a = self.bin(IBinOp::Add, d.base, off);
        // [MODEL] Image atomics on any other format (the hardware only has them
        // for 32-bit integer texels) address 0: a memory fault naming this pc
        // instead of a made-up read-modify-write.
        let u = self.iconst(Type::I32, FMT6_32_UINT);
        let sg = self.iconst(Type::I32, FMT6_32_SINT);
        let is_u = self.ins(InstKind::Icmp(IntCC::Eq), &[d.fmt, u]);
        let is_s = self.ins(InstKind::Icmp(IntCC::Eq), &[d.fmt, sg]);
        let known = self.bin(IBinOp::Or, is_u, is_s);
        let zero = self.iconst(Type::I64, 0);
        let a = self.ins(InstKind::Select, &[known, a, zero]);
        (a, inb)
    }

    /// atomic.b.OP at byte address `a`: the 32-bit global atomic. Operands as
    /// mesa's a6xx backend lays them out (src/freedreno/ir3/ir3_a6xx.c): the
    /// result goes to SRC1.x, the operand is SRC1.y, and for cmpxchg SRC1.y is
    /// the compare value and SRC1.z the new one. With `inside` (typed images)
    /// a texel outside the image has no memory effect and returns 0 (as a typed
    /// ldib reads 0 there). Uses the two helper blocks (atomic, join).
    fn image_atomic(
        &mut self,
        ins: &Instr,
        a: Value,
        inside: Option<Value>,
        data: &Operand,
        t: i64,
    ) -> Result<(), LiftError> {
        let op = self.atomic_op(ins, ins.encoding.trim_start_matches("atomic.b."), t)?;
        let mut data = *data;
        data.half = false;
        let mut args = vec![a];
        let operands = if op == AtomicOp::CmpXchg { 2 } else { 1 };
        for k in 1..=operands {
            let o = self.reg_plus(ins, &data, k)?;
            let v = self.src(ins, &o, 0, As::U32)?;
            args.push(self.resize(v, Type::I32, false));
        }
        let atomic = self.extra_block(0)?;
        let join = self.extra_block(1)?;
        if let Some(inb) = inside {
            // Outside: the result register reads 0 and memory is untouched.
            let z = self.iconst(Type::I32, 0);
            self.dst(ins, &data, 0, z)?;
            self.flush_all();
            self.terminate(Terminator::Branch {
                cond: inb,
                then: BlockCall::new(atomic, &[]),
                otherwise: BlockCall::new(join, &[]),
            });
        } else {
            self.flush_all();
            self.terminate(Terminator::Jump(BlockCall::new(atomic, &[])));
        }
        self.enter(atomic);
        let old = self.ins(
            InstKind::Atomic {
                space: AddrSpace::Global,
                op,
                ty: Type::I32,
            },
            &args,
        );
        self.dst(ins, &data, 0, old)?;
        self.flush_all();
        self.terminate(Terminator::Jump(BlockCall::new(join, &[])));
        self.enter(join);
        Ok(())
    }

    /// Jumps through this instruction's `n` unused helper blocks.
    fn pass_through(&mut self, n: usize) -> Result<(), LiftError> {
        for k in 0..n {
            let b = self.extra_block(k)?;
            self.flush_all();
            self.terminate(Terminator::Jump(BlockCall::new(b, &[])));
            self.enter(b);
        }
        Ok(())
    }

    /// Stores a texel (f32 bits in, or f16 if `half_in`) converted to the image
    /// format, only inside the image (helper blocks: store, join).
    fn store_texel(
        &mut self,
        ins: &Instr,
        a: Value,
        inb: Value,
        is_f32: Value,
        vals: &[Value],
        half_in: bool,
    ) -> Result<(), LiftError> {
        let mut f32s = Vec::new();
        for &v in vals {
            let v = if half_in {
                let h = self.resize(v, Type::I16, false);
                let h = self.bitcast(h, Type::F16);
                let w = self.ins(
                    InstKind::Fcvt {
                        from: FloatFormat::F16,
                        to: FloatFormat::F32,
                        mode: wavejit_ir::FloatMode::IEEE,
                    },
                    &[h],
                );
                self.bitcast(w, Type::I32)
            } else {
                self.resize(v, Type::I32, false)
            };
            f32s.push(v);
        }
        while f32s.len() < 4 {
            let z = self.iconst(Type::I32, 0);
            f32s.push(z);
        }
        let store = self.extra_block(0)?;
        let join = self.extra_block(1)?;
        self.flush_all();
        self.terminate(Terminator::Branch {
            cond: inb,
            then: BlockCall::new(store, &[]),
            otherwise: BlockCall::new(join, &[]),
        });
        self.enter(store);
        // f16 packing of the four components (format conversion rounds to nearest even).
        let mut halves = Vec::new();
        for &v in &f32s {
            let f = self.bitcast(v, Type::F32);
            let h = self.ins(
                InstKind::Fcvt {
                    from: FloatFormat::F32,
                    to: FloatFormat::F16,
                    mode: wavejit_ir::FloatMode::IEEE,
                },
                &[f],
            );
            let h = self.bitcast(h, Type::I16);
            halves.push(self.resize(h, Type::I32, false));
        }
        let sixteen = self.iconst(Type::I32, 16);
        let p0h = self.bin(IBinOp::Shl, halves[1], sixteen);
        let p0 = self.bin(IBinOp::Or, halves[0], p0h);
        let p1h = self.bin(IBinOp::Shl, halves[3], sixteen);
        let p1 = self.bin(IBinOp::Or, halves[2], p1h);
        // First 8 bytes: f32 x,y or packed f16 x..w; second 8 bytes only for f32.
        let w0 = self.ins(InstKind::Select, &[is_f32, f32s[0], p0]);
        let w1 = self.ins(InstKind::Select, &[is_f32, f32s[1], p1]);
        let acc = MemAccess {
            space: AddrSpace::Global,
            ty: Type::I32,
            bits: 32,
            count: 2,
            signed: false,
            align: 8,
        };
        self.ins(InstKind::Store(acc), &[a, w0, w1]);
        // For f16 images rewrite the same 8 bytes (no second half exists).
        let eight = self.iconst(Type::I64, 8);
        let a8 = self.bin(IBinOp::Add, a, eight);
        let a2 = self.ins(InstKind::Select, &[is_f32, a8, a]);
        let w2 = self.ins(InstKind::Select, &[is_f32, f32s[2], w0]);
        let w3 = self.ins(InstKind::Select, &[is_f32, f32s[3], w1]);
        self.ins(InstKind::Store(acc), &[a2, w2, w3]);
        let _ = ins;
        self.flush_all();
        self.terminate(Terminator::Jump(BlockCall::new(join, &[])));
        self.enter(join);
        let _ = CastOp::Zext;
        Ok(())
    }
}
