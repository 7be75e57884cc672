//! Inline lowering of integer instructions (values in their own width; `i1` as
//! 0/1 in `i8`). Division never traps: RISC-V results for x/0 and MIN/-1.

use cranelift_codegen::ir::{self, InstBuilder, condcodes::IntCC as CC, types};
use wavejit_ir::{CastOp, IBinOp, IUnOp, Inst, InstKind, IntCC, Type};

use super::{Lower, cl_ty};
use crate::error::JitError;
use crate::plan::const_bits;

fn cc(c: IntCC) -> CC {
    match c {
        IntCC::Eq => CC::Equal,
        IntCC::Ne => CC::NotEqual,
        IntCC::Ult => CC::UnsignedLessThan,
        IntCC::Ule => CC::UnsignedLessThanOrEqual,
        IntCC::Ugt => CC::UnsignedGreaterThan,
        IntCC::Uge => CC::UnsignedGreaterThanOrEqual,
        IntCC::Slt => CC::SignedLessThan,
        IntCC::Sle => CC::SignedLessThanOrEqual,
        IntCC::Sgt => CC::SignedGreaterThan,
        IntCC::Sge => CC::SignedGreaterThanOrEqual,
    }
}

/// Smallest and largest signed values of a width, as raw bits.
fn smin(bits: u32) -> i64 {
    if bits == 64 {
        i64::MIN
    } else {
        1i64 << (bits - 1)
    }
}
fn smax(bits: u32) -> i64 {
    if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    }
}
fn umax(bits: u32) -> i64 {
    if bits == 64 { -1 } else { (1i64 << bits) - 1 }
}

impl Lower<'_, '_> {
    pub(super) fn int_inst(&mut self, inst: Inst) -> Result<(), JitError> {
        let data = &self.kernel.insts[inst];
        let kind = data.kind.clone();
        let args = data.args.clone();
        let res = *data
            .results
            .first()
            .ok_or(JitError::Malformed("integer instruction without result"))?;
        let arg_ty = |k: usize| -> Result<Type, JitError> {
            args.get(k)
                .and_then(|&a| self.kernel.values.get(a))
                .map(|d| d.ty)
                .ok_or(JitError::Malformed("missing argument"))
        };
        let t0 = arg_ty(0)?;
        let mut vals = Vec::with_capacity(args.len());
        for &a in &args {
            vals.push(self.val(a)?);
        }
        let x = match kind {
            InstKind::IBinary(op) => {
                let known = const_bits(self.kernel, args[1]);
                self.ibinary(op, t0, vals[0], vals[1], known)
            }
            InstKind::IUnary(op) => self.iunary(op, t0, vals[0]),
            InstKind::Icmp(c) => {
                // An i1 read as signed is 0 or -1, so its signed order is the
                // reverse of the unsigned order of 0/1.
                let c = if t0 == Type::I1 {
                    match c {
                        IntCC::Slt => IntCC::Ugt,
                        IntCC::Sle => IntCC::Uge,
                        IntCC::Sgt => IntCC::Ult,
                        IntCC::Sge => IntCC::Ule,
                        c => c,
                    }
                } else {
                    c
                };
                self.b.ins().icmp(cc(c), vals[0], vals[1])
            }
            InstKind::Select => self.b.ins().select(vals[0], vals[1], vals[2]),
            InstKind::Cast { op, to } => self.cast(op, t0, to, vals[0]),
            _ => return Err(JitError::Malformed("not an integer instruction")),
        };
        self.def(res, x)
    }

    /// `known`: the bits of `b` when it is a constant.
    fn ibinary(
        &mut self,
        op: IBinOp,
        ty: Type,
        a: ir::Value,
        b: ir::Value,
        known: Option<u64>,
    ) -> ir::Value {
        let ct = cl_ty(ty);
        let bits = ty.bits();
        match op {
            IBinOp::Add => self.b.ins().iadd(a, b),
            IBinOp::Sub => self.b.ins().isub(a, b),
            IBinOp::Mul => self.b.ins().imul(a, b),
            IBinOp::MulHiU | IBinOp::MulHiS => {
                let signed = op == IBinOp::MulHiS;
                if bits == 64 {
                    if signed {
                        self.b.ins().smulhi(a, b)
                    } else {
                        self.b.ins().umulhi(a, b)
                    }
                } else {
                    let (wa, wb) = if signed {
                        (
                            self.b.ins().sextend(types::I64, a),
                            self.b.ins().sextend(types::I64, b),
                        )
                    } else {
                        (
                            self.b.ins().uextend(types::I64, a),
                            self.b.ins().uextend(types::I64, b),
                        )
                    };
                    let p = self.b.ins().imul(wa, wb);
                    let hi = self.b.ins().ushr_imm_s(p, i64::from(bits));
                    self.b.ins().ireduce(ct, hi)
                }
            }
            IBinOp::DivU | IBinOp::RemU => {
                let zero = self.b.ins().icmp_imm_s(CC::Equal, b, 0);
                let one = self.iconst(ct, 1);
                let safe = self.b.ins().select(zero, one, b);
                if op == IBinOp::DivU {
                    let q = self.b.ins().udiv(a, safe);
                    let ones = self.iconst(ct, umax(bits));
                    self.b.ins().select(zero, ones, q)
                } else {
                    let r = self.b.ins().urem(a, safe);
                    self.b.ins().select(zero, a, r)
                }
            }
            IBinOp::DivS | IBinOp::RemS => {
                // MIN / -1 divides by 1 instead: quotient MIN, remainder 0 as defined.
                let zero = self.b.ins().icmp_imm_s(CC::Equal, b, 0);
                let neg1 = self.b.ins().icmp_imm_s(CC::Equal, b, umax(bits));
                let is_min = self.b.ins().icmp_imm_s(CC::Equal, a, smin(bits));
                let ovf = self.b.ins().band(neg1, is_min);
                let bad = self.b.ins().bor(zero, ovf);
                let one = self.iconst(ct, 1);
                let safe = self.b.ins().select(bad, one, b);
                if op == IBinOp::DivS {
                    let q = self.b.ins().sdiv(a, safe);
                    let ones = self.iconst(ct, umax(bits));
                    self.b.ins().select(zero, ones, q)
                } else {
                    let r = self.b.ins().srem(a, safe);
                    self.b.ins().select(zero, a, r)
                }
            }
            IBinOp::And => self.b.ins().band(a, b),
            IBinOp::Or => self.b.ins().bor(a, b),
            IBinOp::Xor => self.b.ins().bxor(a, b),
            IBinOp::Shl | IBinOp::ShrU | IBinOp::ShrS | IBinOp::Rotl | IBinOp::Rotr => {
                // Amounts modulo the width, explicitly (do not rely on the backend).
                let amt = match known {
                    Some(k) => self.iconst(cl_ty(ty), (k & u64::from(bits - 1)) as i64),
                    None => self.b.ins().band_imm_s(b, i64::from(bits - 1)),
                };
                match op {
                    IBinOp::Shl => self.b.ins().ishl(a, amt),
                    IBinOp::ShrU => self.b.ins().ushr(a, amt),
                    IBinOp::ShrS => self.b.ins().sshr(a, amt),
                    IBinOp::Rotl => self.b.ins().rotl(a, amt),
                    _ => self.b.ins().rotr(a, amt),
                }
            }
            IBinOp::MinU | IBinOp::MinS | IBinOp::MaxU | IBinOp::MaxS => {
                let c = match op {
                    IBinOp::MinU => CC::UnsignedLessThan,
                    IBinOp::MinS => CC::SignedLessThan,
                    IBinOp::MaxU => CC::UnsignedGreaterThan,
                    _ => CC::SignedGreaterThan,
                };
                let pick_a = self.b.ins().icmp(c, a, b);
                self.b.ins().select(pick_a, a, b)
            }
            IBinOp::AddSatU => {
                let r = self.b.ins().iadd(a, b);
                let ovf = self.b.ins().icmp(CC::UnsignedLessThan, r, a);
                let m = self.iconst(ct, umax(bits));
                self.b.ins().select(ovf, m, r)
            }
            IBinOp::SubSatU => {
                let r = self.b.ins().isub(a, b);
                let under = self.b.ins().icmp(CC::UnsignedLessThan, a, b);
                let z = self.iconst(ct, 0);
                self.b.ins().select(under, z, r)
            }
            IBinOp::AddSatS | IBinOp::SubSatS => {
                let (r, ovf_bits) = if op == IBinOp::AddSatS {
                    let r = self.b.ins().iadd(a, b);
                    let x1 = self.b.ins().bxor(a, r);
                    let x2 = self.b.ins().bxor(b, r);
                    (r, self.b.ins().band(x1, x2))
                } else {
                    let r = self.b.ins().isub(a, b);
                    let x1 = self.b.ins().bxor(a, b);
                    let x2 = self.b.ins().bxor(a, r);
                    (r, self.b.ins().band(x1, x2))
                };
                let ovf = self.b.ins().icmp_imm_s(CC::SignedLessThan, ovf_bits, 0);
                let neg = self.b.ins().icmp_imm_s(CC::SignedLessThan, a, 0);
                let lo = self.iconst(ct, smin(bits));
                let hi = self.iconst(ct, smax(bits));
                let sat = self.b.ins().select(neg, lo, hi);
                self.b.ins().select(ovf, sat, r)
            }
        }
    }

    fn iunary(&mut self, op: IUnOp, ty: Type, a: ir::Value) -> ir::Value {
        let ct = cl_ty(ty);
        let bits = ty.bits();
        match op {
            IUnOp::Not => {
                if ty == Type::I1 {
                    self.b.ins().bxor_imm_s(a, 1)
                } else {
                    self.b.ins().bnot(a)
                }
            }
            IUnOp::Neg => self.b.ins().ineg(a),
            IUnOp::Abs => {
                let n = self.b.ins().ineg(a);
                let neg = self.b.ins().icmp_imm_s(CC::SignedLessThan, a, 0);
                self.b.ins().select(neg, n, a)
            }
            IUnOp::Clz | IUnOp::Ctz | IUnOp::Popcnt if bits < 32 => {
                let w = self.b.ins().uextend(types::I32, a);
                let r = match op {
                    IUnOp::Clz => {
                        let c = self.b.ins().clz(w);
                        self.b.ins().iadd_imm_s(c, -(32 - i64::from(bits)))
                    }
                    IUnOp::Ctz => {
                        let stop = self.b.ins().bor_imm_s(w, 1i64 << bits);
                        self.b.ins().ctz(stop)
                    }
                    _ => self.b.ins().popcnt(w),
                };
                self.b.ins().ireduce(ct, r)
            }
            IUnOp::Clz => self.b.ins().clz(a),
            IUnOp::Ctz => self.b.ins().ctz(a),
            IUnOp::Popcnt => self.b.ins().popcnt(a),
            IUnOp::Bitrev => self.b.ins().bitrev(a),
            IUnOp::Bswap => {
                if bits == 8 {
                    a
                } else {
                    self.b.ins().bswap(a)
                }
            }
        }
    }

    fn cast(&mut self, op: CastOp, from: Type, to: Type, a: ir::Value) -> ir::Value {
        let (cf, ct) = (cl_ty(from), cl_ty(to));
        match op {
            CastOp::Zext => {
                if cf == ct {
                    a
                } else {
                    self.b.ins().uextend(ct, a)
                }
            }
            CastOp::Sext if from == Type::I1 => {
                let w = if cf == ct {
                    a
                } else {
                    self.b.ins().uextend(ct, a)
                };
                self.b.ins().ineg(w)
            }
            CastOp::Sext => self.b.ins().sextend(ct, a),
            CastOp::Trunc => {
                let r = if cf == ct {
                    a
                } else {
                    self.b.ins().ireduce(ct, a)
                };
                if to == Type::I1 {
                    self.b.ins().band_imm_s(r, 1)
                } else {
                    r
                }
            }
            CastOp::Bitcast => a,
        }
    }
}
