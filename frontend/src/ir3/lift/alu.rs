//! cat2 / cat3 / cat4: integer and float ALU and the SFU.

use crate::ir3::field;
use wavejit_ir::{FBinOp, FUnOp, FloatCC, IBinOp, IUnOp, InstKind, IntCC, SpecialFn, Type, Value};

use super::regs::As;
use super::{LiftError, Lifter, a630_mode, cmp_mode};
use crate::ir3::{Instr, Operand};

fn fty(half: bool) -> Type {
    if half { Type::F16 } else { Type::F32 }
}

fn ity(half: bool) -> Type {
    if half { Type::I16 } else { Type::I32 }
}

impl Lifter<'_> {
    fn srcop(&self, ins: &Instr, n: usize) -> Result<Operand, LiftError> {
        ins.srcs
            .get(n)
            .copied()
            .ok_or_else(|| self.malformed(ins, format!("missing source {}", n + 1)))
    }

    fn dstop(&self, ins: &Instr) -> Result<Operand, LiftError> {
        ins.dsts
            .first()
            .copied()
            .ok_or_else(|| self.malformed(ins, "missing destination".into()))
    }

    /// Float source with (abs)/(neg) applied under the a630 rules.
    pub(crate) fn fsrc(
        &mut self,
        ins: &Instr,
        op: &Operand,
        i: u32,
        half: bool,
    ) -> Result<Value, LiftError> {
        let bits = self.src(ins, op, i, As { half, float: true })?;
        let bits = self.resize(bits, ity(half), false);
        let mut v = self.bitcast(bits, fty(half));
        let mode = a630_mode(half, false);
        if op.abs {
            v = self.ins(
                InstKind::FUnary {
                    op: FUnOp::Abs,
                    mode,
                },
                &[v],
            );
        }
        if op.neg {
            v = self.ins(
                InstKind::FUnary {
                    op: FUnOp::Neg,
                    mode,
                },
                &[v],
            );
        }
        Ok(v)
    }

    /// Integer source of the given width; for bitwise ops (neg) is a NOT.
    fn isrc(
        &mut self,
        ins: &Instr,
        op: &Operand,
        i: u32,
        half: bool,
        bitwise: bool,
    ) -> Result<Value, LiftError> {
        let v = self.src(ins, op, i, As { half, float: false })?;
        let v = self.resize(v, ity(half), false);
        Ok(if bitwise && op.neg {
            self.ins(InstKind::IUnary(IUnOp::Not), &[v])
        } else {
            v
        })
    }

    fn ibin(&mut self, op: IBinOp, a: Value, b: Value) -> Value {
        self.ins(InstKind::IBinary(op), &[a, b])
    }

    fn fbin(&mut self, op: FBinOp, a: Value, b: Value, half: bool, sat: bool) -> Value {
        self.ins(
            InstKind::FBinary {
                op,
                mode: a630_mode(half, sat),
            },
            &[a, b],
        )
    }

    /// f16 -> f32, exact.
    fn widen_f16(&mut self, v: Value) -> Value {
        self.ins(
            InstKind::Fcvt {
                from: wavejit_ir::FloatFormat::F16,
                to: wavejit_ir::FloatFormat::F32,
                mode: a630_mode(false, false),
            },
            &[v],
        )
    }

    /// Writes an ALU result. A float result whose precision differs from the
    /// destination's (DST_CONV: mesa folds an f2f32/f2f16 into the ALU) is
    /// converted: computed at the source precision, then widened exactly or
    /// narrowed with nearest-even and the a630 result rules.
    fn fdst(&mut self, ins: &Instr, i: u32, v: Value) -> Result<(), LiftError> {
        let d = self.dstop(ins)?;
        let is_pred =
            matches!(d.kind, crate::ir3::OperandKind::Gpr(r) if (0xf8..0xfc).contains(&r));
        let v = match (self.ty(v), d.half && !is_pred) {
            (Type::F16, false) if !is_pred => self.ins(
                InstKind::Fcvt {
                    from: wavejit_ir::FloatFormat::F16,
                    to: wavejit_ir::FloatFormat::F32,
                    mode: a630_mode(false, false),
                },
                &[v],
            ),
            (Type::F32, true) => self.ins(
                InstKind::Fcvt {
                    from: wavejit_ir::FloatFormat::F32,
                    to: wavejit_ir::FloatFormat::F16,
                    mode: a630_mode(true, false),
                },
                &[v],
            ),
            _ => v,
        };
        self.dst(ins, &d, i, v)
    }

    fn bool_to(&mut self, c: Value, half: bool) -> Value {
        self.resize(c, ity(half), false)
    }

    pub(crate) fn undocumented(&self, ins: &Instr, why: &'static str) -> LiftError {
        LiftError::Undocumented {
            name: ins.mnemonic.clone(),
            pc: self.pc,
            word: ins.word,
            why,
        }
    }

    // ---- cat2 ------------------------------------------------------------------

    pub(crate) fn lift_cat2(&mut self, ins: &Instr, i: u32) -> Result<(), LiftError> {
        let name = ins.encoding;
        let s1 = self.srcop(ins, 0)?;
        // FULL = 0 selects half sources for the whole instruction (an immediate
        // operand carries no precision of its own).
        let half = ins.get(field::FULL).map_or(s1.half, |f| f == 0);
        let sat = ins.flags.sat;
        let dst_half = self.dstop(ins)?.half;
        let two = ins.srcs.len() >= 2;
        match name {
            "add.f" | "mul.f" | "min.f" | "max.f" => {
                let mut a = self.fsrc(ins, &s1, i, half)?;
                let s2 = self.srcop(ins, 1)?;
                let mut b = self.fsrc(ins, &s2, i, half)?;
                // Half sources with a full destination: mesa folded an f2f32 of
                // each source into the instruction, so it computes in f32 on the
                // widened (exact) sources. tinygrad's half GEMM depends on it.
                let wide = half && !dst_half;
                if wide {
                    a = self.widen_f16(a);
                    b = self.widen_f16(b);
                }
                let op = match name {
                    "add.f" => FBinOp::Add,
                    "mul.f" => FBinOp::Mul,
                    "min.f" => FBinOp::Min,
                    _ => FBinOp::Max,
                };
                let r = self.fbin(op, a, b, half && !wide, sat);
                self.fdst(ins, i, r)
            }
            "floor.f" | "ceil.f" | "rndne.f" | "trunc.f" | "absneg.f" => {
                let a = self.fsrc(ins, &s1, i, half)?;
                let mode = a630_mode(half, sat);
                let r = match name {
                    "floor.f" => self.ins(
                        InstKind::FUnary {
                            op: FUnOp::Floor,
                            mode,
                        },
                        &[a],
                    ),
                    "ceil.f" => self.ins(
                        InstKind::FUnary {
                            op: FUnOp::Ceil,
                            mode,
                        },
                        &[a],
                    ),
                    "rndne.f" => self.ins(
                        InstKind::FUnary {
                            op: FUnOp::Nearest,
                            mode,
                        },
                        &[a],
                    ),
                    "trunc.f" => self.ins(
                        InstKind::FUnary {
                            op: FUnOp::Trunc,
                            mode,
                        },
                        &[a],
                    ),
                    // The modifiers are already applied; max(a, a) applies the rules.
                    _ => self.fbin(FBinOp::Max, a, a, half, sat),
                };
                self.fdst(ins, i, r)
            }
            "rndaz.f" => {
                let a = self.fsrc(ins, &s1, i, half)?;
                let r = self.round_away(a, half, sat);
                self.fdst(ins, i, r)
            }
            "sign.f" => {
                let a = self.fsrc(ins, &s1, i, half)?;
                let r = self.fsign(a, half, sat);
                self.fdst(ins, i, r)
            }
            "cmps.f" => {
                let a = self.fsrc(ins, &s1, i, half)?;
                let s2 = self.srcop(ins, 1)?;
                let b = self.fsrc(ins, &s2, i, half)?;
                let cc = match ins.get(field::COND).unwrap_or(0) {
                    0 => FloatCC::Lt,
                    1 => FloatCC::Le,
                    2 => FloatCC::Gt,
                    3 => FloatCC::Ge,
                    4 => FloatCC::Eq,
                    5 => FloatCC::Une,
                    c => return Err(self.malformed(ins, format!("condition {c}"))),
                };
                let c = self.ins(
                    InstKind::Fcmp {
                        cc,
                        mode: cmp_mode(),
                    },
                    &[a, b],
                );
                let r = self.bool_to(c, dst_half);
                self.fdst(ins, i, r)
            }
            "cmps.u" | "cmps.s" => {
                let signed = name == "cmps.s";
                let a = self.isrc(ins, &s1, i, half, false)?;
                let s2 = self.srcop(ins, 1)?;
                let b = self.isrc(ins, &s2, i, half, false)?;
                let cc = match (ins.get(field::COND).unwrap_or(0), signed) {
                    (0, false) => IntCC::Ult,
                    (1, false) => IntCC::Ule,
                    (2, false) => IntCC::Ugt,
                    (3, false) => IntCC::Uge,
                    (0, true) => IntCC::Slt,
                    (1, true) => IntCC::Sle,
                    (2, true) => IntCC::Sgt,
                    (3, true) => IntCC::Sge,
                    (4, _) => IntCC::Eq,
                    (5, _) => IntCC::Ne,
                    (c, _) => return Err(self.malformed(ins, format!("condition {c}"))),
                };
                let c = self.ins(InstKind::Icmp(cc), &[a, b]);
                let r = self.bool_to(c, dst_half);
                self.fdst(ins, i, r)
            }
            "cmpv.f" | "cmpv.u" | "cmpv.s" => {
                Err(self.undocumented(ins, "cmpv semantics are undocumented (mesa never emits it)"))
            }
            "add.u" | "add.s" | "sub.u" | "sub.s" | "min.u" | "min.s" | "max.u" | "max.s"
            | "and.b" | "or.b" | "xor.b" | "shl.b" | "shr.b" | "ashr.b" | "mull.u" | "mul.u24"
            | "mul.s24" | "getbit.b" => {
                let bitwise = name.ends_with(".b");
                let a = self.isrc(ins, &s1, i, half, bitwise)?;
                let s2 = self.srcop(ins, 1)?;
                let b = self.isrc(ins, &s2, i, half, bitwise)?;
                let r = self.int2(name, a, b, sat);
                let r = self.resize(r, ity(dst_half), false);
                self.fdst(ins, i, r)
            }
            "absneg.s" => {
                let a = self.isrc(ins, &s1, i, half, false)?;
                let mut r = a;
                if s1.abs {
                    r = self.ins(InstKind::IUnary(IUnOp::Abs), &[r]);
                }
                if s1.neg {
                    r = self.ins(InstKind::IUnary(IUnOp::Neg), &[r]);
                }
                let r = self.resize(r, ity(dst_half), true);
                self.fdst(ins, i, r)
            }
            "not.b" | "bfrev.b" | "cbits.b" | "clz.b" | "clz.s" => {
                let a = self.isrc(ins, &s1, i, half, true)?;
                let r = match name {
                    "not.b" => self.ins(InstKind::IUnary(IUnOp::Not), &[a]),
                    "bfrev.b" => self.ins(InstKind::IUnary(IUnOp::Bitrev), &[a]),
                    "cbits.b" => self.ins(InstKind::IUnary(IUnOp::Popcnt), &[a]),
                    "clz.b" => self.clz_b(a),
                    _ => self.clz_s(a),
                };
                let r = self.resize(r, ity(dst_half), false);
                self.fdst(ins, i, r)
            }
            "bary.f" | "flat.b" => Err(self.unsupported(ins)),
            "mgen.b" | "shb" | "msad" => Err(self.undocumented(ins, "semantics are undocumented")),
            "setrm" => Err(self.undocumented(
                ins,
                "rounding-mode state is undocumented (mesa never emits it for a6xx)",
            )),
            _ if !two => Err(self.unsupported(ins)),
            _ => Err(self.unsupported(ins)),
        }
    }

    fn int2(&mut self, name: &str, a: Value, b: Value, sat: bool) -> Value {
        let ty = self.ty(a);
        match name {
            "add.u" => self.ibin(if sat { IBinOp::AddSatU } else { IBinOp::Add }, a, b),
            "add.s" => self.ibin(if sat { IBinOp::AddSatS } else { IBinOp::Add }, a, b),
            "sub.u" => self.ibin(if sat { IBinOp::SubSatU } else { IBinOp::Sub }, a, b),
            "sub.s" => self.ibin(if sat { IBinOp::SubSatS } else { IBinOp::Sub }, a, b),
            "min.u" => self.ibin(IBinOp::MinU, a, b),
            "min.s" => self.ibin(IBinOp::MinS, a, b),
            "max.u" => self.ibin(IBinOp::MaxU, a, b),
            "max.s" => self.ibin(IBinOp::MaxS, a, b),
            "and.b" => self.ibin(IBinOp::And, a, b),
            "or.b" => self.ibin(IBinOp::Or, a, b),
            "xor.b" => self.ibin(IBinOp::Xor, a, b),
            // Shift amounts are taken modulo the width (NIR semantics).
            "shl.b" => self.ibin(IBinOp::Shl, a, b),
            "shr.b" => self.ibin(IBinOp::ShrU, a, b),
            "ashr.b" => self.ibin(IBinOp::ShrS, a, b),
            "getbit.b" => {
                let s = self.ibin(IBinOp::ShrU, a, b);
                let one = self.iconst(ty, 1);
                self.ibin(IBinOp::And, s, one)
            }
            "mull.u" => {
                // (a & 0xffff) * (b & 0xffff), full 32-bit product.
                let a = self.resize(a, Type::I32, false);
                let b = self.resize(b, Type::I32, false);
                let m = self.iconst(Type::I32, 0xffff);
                let a = self.ibin(IBinOp::And, a, m);
                let b = self.ibin(IBinOp::And, b, m);
                self.ibin(IBinOp::Mul, a, b)
            }
            _ => {
                let signed = name == "mul.s24";
                self.mul24(a, b, signed)
            }
        }
    }

    /// Low 32 bits of the product of the low 24 bits (zero/sign-extended).
    fn mul24(&mut self, a: Value, b: Value, signed: bool) -> Value {
        let a = self.resize(a, Type::I32, false);
        let b = self.resize(b, Type::I32, false);
        let ext = |l: &mut Self, v: Value| {
            let eight = l.iconst(Type::I32, 8);
            let s = l.ibin(IBinOp::Shl, v, eight);
            l.ibin(if signed { IBinOp::ShrS } else { IBinOp::ShrU }, s, eight)
        };
        let a = ext(self, a);
        let b = ext(self, b);
        self.ibin(IBinOp::Mul, a, b)
    }

    /// clz.b: leading zeros, -1 for 0.
    fn clz_b(&mut self, a: Value) -> Value {
        let ty = self.ty(a);
        let c = self.ins(InstKind::IUnary(IUnOp::Clz), &[a]);
        let z = self.iconst(ty, 0);
        let is0 = self.ins(InstKind::Icmp(IntCC::Eq), &[a, z]);
        let m1 = self.iconst(ty, u64::MAX);
        self.ins(InstKind::Select, &[is0, m1, c])
    }

    /// clz.s: leading bits equal to the sign bit (excluding it), -1 for 0 and -1.
    fn clz_s(&mut self, a: Value) -> Value {
        let ty = self.ty(a);
        let z = self.iconst(ty, 0);
        let neg = self.ins(InstKind::Icmp(IntCC::Slt), &[a, z]);
        let inv = self.ins(InstKind::IUnary(IUnOp::Not), &[a]);
        // Negative values count their leading ones: clz.b of the complement.
        let x = self.ins(InstKind::Select, &[neg, inv, a]);
        self.clz_b(x)
    }

    /// Round half away from zero.
    fn round_away(&mut self, a: Value, half: bool, sat: bool) -> Value {
        let mode = a630_mode(half, false);
        let t = self.ins(
            InstKind::FUnary {
                op: FUnOp::Trunc,
                mode,
            },
            &[a],
        );
        let frac = self.fbin(FBinOp::Sub, a, t, half, false);
        let af = self.ins(
            InstKind::FUnary {
                op: FUnOp::Abs,
                mode,
            },
            &[frac],
        );
        let halfc = self.fconst(half, 0.5);
        let up = self.ins(
            InstKind::Fcmp {
                cc: FloatCC::Ge,
                mode: cmp_mode(),
            },
            &[af, halfc],
        );
        let one = self.fconst(half, 1.0);
        let s = self.fbin(FBinOp::Copysign, one, a, half, false);
        let bumped = self.fbin(FBinOp::Add, t, s, half, false);
        let r = self.ins(InstKind::Select, &[up, bumped, t]);
        // Apply (sat) and the result rules once more.
        self.fbin(FBinOp::Max, r, r, half, sat)
    }

    fn fsign(&mut self, a: Value, half: bool, sat: bool) -> Value {
        let mode = a630_mode(half, false);
        let z = self.fconst(half, 0.0);
        let gt = self.ins(
            InstKind::Fcmp {
                cc: FloatCC::Gt,
                mode: cmp_mode(),
            },
            &[a, z],
        );
        let lt = self.ins(
            InstKind::Fcmp {
                cc: FloatCC::Lt,
                mode: cmp_mode(),
            },
            &[a, z],
        );
        let one = self.fconst(half, 1.0);
        let m1 = self.fconst(half, -1.0);
        // Zeros keep their sign, NaN becomes the canonical NaN.
        let same = self.ins(
            InstKind::FUnary {
                op: FUnOp::Trunc,
                mode,
            },
            &[a],
        );
        let r = self.ins(InstKind::Select, &[lt, m1, same]);
        let r = self.ins(InstKind::Select, &[gt, one, r]);
        self.fbin(FBinOp::Max, r, r, half, sat)
    }

    pub(crate) fn fconst(&mut self, half: bool, v: f32) -> Value {
        if half {
            let h = f32_to_f16_bits(v);
            self.ins(
                InstKind::Const {
                    ty: Type::F16,
                    bits: u64::from(h),
                },
                &[],
            )
        } else {
            self.ins(
                InstKind::Const {
                    ty: Type::F32,
                    bits: u64::from(v.to_bits()),
                },
                &[],
            )
        }
    }

    // ---- cat3 ------------------------------------------------------------------

    pub(crate) fn lift_cat3(&mut self, ins: &Instr, i: u32) -> Result<(), LiftError> {
        let name = ins.encoding;
        let (s1, s2, s3) = (
            self.srcop(ins, 0)?,
            self.srcop(ins, 1)?,
            self.srcop(ins, 2)?,
        );
        let sat = ins.flags.sat;
        let dst_half = self.dstop(ins)?.half;
        let half = s2.half;
        match name {
            "mad.f16" | "mad.f32" => {
                let h = name == "mad.f16";
                let a = self.fsrc(ins, &s1, i, h)?;
                let b = self.fsrc(ins, &s2, i, h)?;
                let c = self.fsrc(ins, &s3, i, h)?;
                // Not fused: the product is rounded and flushed before the add.
                let p = self.fbin(FBinOp::Mul, a, b, h, false);
                let r = self.fbin(FBinOp::Add, p, c, h, sat);
                self.fdst(ins, i, r)
            }
            "sel.b16" | "sel.b32" | "sel.s16" | "sel.s32" | "sel.f16" | "sel.f32" => {
                let h = name.ends_with("16");
                let float = name.starts_with("sel.f");
                let (a, c) = if float {
                    (self.fsrc(ins, &s1, i, h)?, self.fsrc(ins, &s3, i, h)?)
                } else {
                    (
                        self.isrc(ins, &s1, i, h, false)?,
                        self.isrc(ins, &s3, i, h, false)?,
                    )
                };
                let cond = self.isrc(ins, &s2, i, h, false)?;
                let cond = if float {
                    // A float condition: +0 and -0 are false.
                    let m = self.iconst(ity(h), if h { 0x7fff } else { 0x7fff_ffff });
                    self.ibin(IBinOp::And, cond, m)
                } else {
                    cond
                };
                let z = self.iconst(ity(h), 0);
                let nz = self.ins(InstKind::Icmp(IntCC::Ne), &[cond, z]);
                let a = self.resize(a, ity(h), false);
                let c = self.resize(c, ity(h), false);
                let r = self.ins(InstKind::Select, &[nz, a, c]);
                let r = self.resize(r, ity(dst_half), false);
                self.fdst(ins, i, r)
            }
            "mad.u16" | "mad.s16" | "mad.u24" | "mad.s24" | "madsh.m16" | "sad.s16" | "sad.s32" => {
                let a = self.isrc(ins, &s1, i, s1.half, false)?;
                let b = self.isrc(ins, &s2, i, half, false)?;
                let c = self.isrc(ins, &s3, i, s3.half, false)?;
                let a = self.resize(a, Type::I32, name.contains(".s"));
                let b = self.resize(b, Type::I32, name.contains(".s"));
                let c = self.resize(c, Type::I32, name.contains(".s"));
                let r = match name {
                    "mad.u16" | "mad.s16" => {
                        let signed = name == "mad.s16";
                        let sixteen = self.iconst(Type::I32, 16);
                        let ext = |l: &mut Self, v: Value| {
                            let s = l.ibin(IBinOp::Shl, v, sixteen);
                            l.ibin(if signed { IBinOp::ShrS } else { IBinOp::ShrU }, s, sixteen)
                        };
                        let a = ext(self, a);
                        let b = ext(self, b);
                        let p = self.ibin(IBinOp::Mul, a, b);
                        self.ibin(IBinOp::Add, p, c)
                    }
                    "mad.u24" | "mad.s24" => {
                        let p = self.mul24(a, b, name == "mad.s24");
                        self.ibin(IBinOp::Add, p, c)
                    }
                    "madsh.m16" => {
                        // ((a & 0xffff) * (b >> 16)) << 16, plus c.
                        let m = self.iconst(Type::I32, 0xffff);
                        let sixteen = self.iconst(Type::I32, 16);
                        let lo = self.ibin(IBinOp::And, a, m);
                        let hi = self.ibin(IBinOp::ShrU, b, sixteen);
                        let p = self.ibin(IBinOp::Mul, lo, hi);
                        let p = self.ibin(IBinOp::Shl, p, sixteen);
                        self.ibin(IBinOp::Add, p, c)
                    }
                    _ => {
                        // sad: |a - b| + c
                        let lt = self.ins(InstKind::Icmp(IntCC::Slt), &[a, b]);
                        let d1 = self.ibin(IBinOp::Sub, a, b);
                        let d2 = self.ibin(IBinOp::Sub, b, a);
                        let d = self.ins(InstKind::Select, &[lt, d2, d1]);
                        self.ibin(IBinOp::Add, d, c)
                    }
                };
                let r = self.resize(r, ity(dst_half), false);
                self.fdst(ins, i, r)
            }
            "shrm" | "shlm" | "shrg" | "shlg" | "andg" => {
                // Bitwise class: (neg) is a NOT of the source.
                let h = half;
                let a = self.isrc(ins, &s1, i, h, true)?;
                let b = self.isrc(ins, &s2, i, h, true)?;
                let c = self.isrc(ins, &s3, i, h, true)?;
                let t = match name {
                    "shrm" | "shrg" => self.ibin(IBinOp::ShrU, b, a),
                    "shlm" | "shlg" => self.ibin(IBinOp::Shl, b, a),
                    _ => self.ibin(IBinOp::And, b, a),
                };
                let r = if name.ends_with('m') {
                    self.ibin(IBinOp::And, t, c)
                } else {
                    self.ibin(IBinOp::Or, t, c)
                };
                let r = self.resize(r, ity(dst_half), false);
                self.fdst(ins, i, r)
            }
            "dp2acc" | "dp4acc" => self.lift_dot(ins, i),
            "madsh.u16" => Err(self.undocumented(ins, "madsh.u16 semantics are undocumented")),
            _ => Err(self.unsupported(ins)),
        }
    }

    /// dp2acc / dp4acc: dot product of packed 8-bit vectors plus an accumulator.
    fn lift_dot(&mut self, ins: &Instr, i: u32) -> Result<(), LiftError> {
        let n = if ins.encoding == "dp4acc" { 4 } else { 2 };
        let (s1, s2, s3) = (
            self.srcop(ins, 0)?,
            self.srcop(ins, 1)?,
            self.srcop(ins, 2)?,
        );
        // SRC_SIGN: 0 .unsigned, 1 .mixed (SRC1 signed, SRC2 unsigned).
        let signed = ins.get(field::SRC_SIGN) == Some(1);
        let a = self.isrc(ins, &s1, i, false, false)?;
        let b = self.isrc(ins, &s2, i, false, false)?;
        let mut acc = self.isrc(ins, &s3, i, false, false)?;
        // dp2acc reads the low or high half of each register (SRC_PACK: 0
        // .low, 1 .high).
        let base = if n == 2 && ins.get(field::SRC_PACK) == Some(1) {
            16
        } else {
            0
        };
        for k in 0..n {
            let sh = self.iconst(Type::I32, 24 - (base + 8 * k));
            let twenty4 = self.iconst(Type::I32, 24);
            let ea = self.ibin(IBinOp::Shl, a, sh);
            let ea = self.ibin(
                if signed { IBinOp::ShrS } else { IBinOp::ShrU },
                ea,
                twenty4,
            );
            let eb = self.ibin(IBinOp::Shl, b, sh);
            let eb = self.ibin(IBinOp::ShrU, eb, twenty4);
            let p = self.ibin(IBinOp::Mul, ea, eb);
            acc = self.ibin(
                if ins.flags.sat && signed {
                    IBinOp::AddSatS
                } else if ins.flags.sat {
                    IBinOp::AddSatU
                } else {
                    IBinOp::Add
                },
                acc,
                p,
            );
        }
        self.fdst(ins, i, acc)
    }

    // ---- cat4 ------------------------------------------------------------------

    pub(crate) fn lift_cat4(&mut self, ins: &Instr, i: u32) -> Result<(), LiftError> {
        let s = self.srcop(ins, 0)?;
        let half = ins.get(field::FULL).map_or(s.half, |f| f == 0) || ins.encoding.starts_with('h');
        let a = self.fsrc(ins, &s, i, half)?;
        let mut mode = a630_mode(half, ins.flags.sat);
        let func = match ins.encoding {
            "rcp" => {
                if half {
                    // Measured: half-precision rcp rounds toward zero.
                    mode.round = wavejit_ir::Round::TowardZero;
                }
                Some(SpecialFn::Rcp)
            }
            "rsq" | "hrsq" => Some(SpecialFn::Rsqrt),
            "log2" | "hlog2" => Some(SpecialFn::Log2),
            "exp2" | "hexp2" => Some(SpecialFn::Exp2),
            "sin" => Some(SpecialFn::Sin),
            "cos" => Some(SpecialFn::Cos),
            "sqrt" => None,
            _ => return Err(self.unsupported(ins)),
        };
        let r = match func {
            Some(func) => self.ins(InstKind::Special { func, mode }, &[a]),
            None => self.ins(
                InstKind::FUnary {
                    op: FUnOp::Sqrt,
                    mode,
                },
                &[a],
            ),
        };
        self.fdst(ins, i, r)
    }

    pub(crate) fn unsupported(&self, ins: &Instr) -> LiftError {
        LiftError::Unsupported {
            name: ins.mnemonic.clone(),
            pc: self.pc,
            word: ins.word,
        }
    }
}

/// f32 -> f16 bits for the small exact constants the lifter uses.
fn f32_to_f16_bits(v: f32) -> u16 {
    match v {
        0.0 => 0x0000,
        0.5 => 0x3800,
        1.0 => 0x3c00,
        -1.0 => 0xbc00,
        _ => 0x7e00,
    }
}
