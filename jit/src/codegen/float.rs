//! Inline lowering of the common f32/f64 float instructions with their rules
//! (`semantics::arith`/`compare`/`minmax`): flush inputs, compute once on the host
//! (round to nearest even), NaN results rebuilt from the operands (first NaN
//! quieted, else the positive default NaN, independent of the host's NaN choice),
//! flush output, canonical NaN, saturation. Everything else (f16, other rounding
//! directions, exception flags, conversions, special functions) goes through
//! `semantics::eval_pure`.

use cranelift_codegen::ir::{
    self, InstBuilder, MemFlagsData, condcodes::FloatCC as FCC, condcodes::IntCC as CC, types,
};
use wavejit_ir::{Denorm, FBinOp, FUnOp, FloatCC, FloatMode, Inst, InstKind, NanMode, Round, Type};

use super::Lower;
use crate::cpu::host_has;
use crate::error::JitError;

/// Bit layout of an IEEE format held in an integer SSA value.
#[derive(Copy, Clone)]
struct Bits {
    int: ir::Type,
    float: ir::Type,
    width: u32,
    exp: i64,
    sign: i64,
    mag: i64,
    quiet: i64,
}

fn layout(ty: Type) -> Option<Bits> {
    match ty {
        Type::F32 => Some(Bits {
            int: types::I32,
            float: types::F32,
            width: 32,
            exp: 0x7f80_0000,
            sign: 0x8000_0000,
            mag: 0x7fff_ffff,
            quiet: 0x0040_0000,
        }),
        Type::F64 => Some(Bits {
            int: types::I64,
            float: types::F64,
            width: 64,
            exp: 0x7ff0_0000_0000_0000,
            sign: i64::MIN,
            mag: i64::MAX,
            quiet: 0x0008_0000_0000_0000,
        }),
        _ => None,
    }
}

/// The Cranelift condition of an IR float comparison (also the gang core's).
pub(crate) fn cc(c: FloatCC) -> FCC {
    match c {
        FloatCC::Eq => FCC::Equal,
        FloatCC::Ne | FloatCC::Une => FCC::NotEqual,
        FloatCC::Lt => FCC::LessThan,
        FloatCC::Le => FCC::LessThanOrEqual,
        FloatCC::Gt => FCC::GreaterThan,
        FloatCC::Ge => FCC::GreaterThanOrEqual,
        FloatCC::Ord => FCC::Ordered,
        FloatCC::Uno => FCC::Unordered,
        FloatCC::Ueq => FCC::UnorderedOrEqual,
        FloatCC::Ult => FCC::UnorderedOrLessThan,
        FloatCC::Ule => FCC::UnorderedOrLessThanOrEqual,
        FloatCC::Ugt => FCC::UnorderedOrGreaterThan,
        FloatCC::Uge => FCC::UnorderedOrGreaterThanOrEqual,
    }
}

impl Lower<'_, '_> {
    /// Lowers `inst` inline when a fast path covers it; returns false otherwise.
    pub(super) fn float_inline(&mut self, inst: Inst) -> Result<bool, JitError> {
        let data = &self.kernel.insts[inst];
        let kind = data.kind.clone();
        let (args, results) = (data.args.clone(), data.results.clone());
        let Some(&a0) = args.first() else {
            return Ok(false);
        };
        let Some(f) = layout(self.kernel.value_type(a0)) else {
            return Ok(false);
        };
        let plain = |m: &FloatMode| !m.flags && m.round == Round::NearestEven;
        match kind {
            InstKind::FBinary { op, mode } if plain(&mode) => {
                let a = self.fval(f, args[0], &mode)?;
                let b = self.fval(f, args[1], &mode)?;
                let r = self.fbinary(f, op, a, b);
                let r = self.finish_result(f, inst, &mode, r)?;
                self.def(results[0], r)?;
            }
            InstKind::FBinary {
                op: FBinOp::Copysign,
                mode,
            } if !mode.flags => {
                let a = self.fval(f, args[0], &mode)?;
                let b = self.fval(f, args[1], &mode)?;
                let r = self.fbinary(f, FBinOp::Copysign, a, b);
                let r = self.finish_result(f, inst, &mode, r)?;
                self.def(results[0], r)?;
            }
            InstKind::FUnary { op, mode }
                if !mode.flags
                    && (matches!(op, FUnOp::Neg | FUnOp::Abs)
                        || (mode.round == Round::NearestEven && op == FUnOp::Sqrt)
                        || (!matches!(op, FUnOp::Sqrt) && host_has("sse4.1"))) =>
            {
                let a = self.fval(f, args[0], &mode)?;
                let r = self.funary(f, op, a);
                let r = self.finish_result(f, inst, &mode, r)?;
                self.def(results[0], r)?;
            }
            InstKind::Fma { mode } if plain(&mode) && host_has("fma") => {
                let a = self.fval(f, args[0], &mode)?;
                let b = self.fval(f, args[1], &mode)?;
                let c = self.fval(f, args[2], &mode)?;
                let (fa, fb, fc) = (
                    self.as_float(f, a),
                    self.as_float(f, b),
                    self.as_float(f, c),
                );
                let r = self.b.ins().fma(fa, fb, fc);
                let r = self.as_bits(r);
                let r = self.fix_nan(f, r, &[a, b, c]);
                let r = self.finish_result(f, inst, &mode, r)?;
                self.def(results[0], r)?;
            }
            InstKind::Fcmp { cc: c, mode } if !mode.flags => {
                let a = self.fval(f, args[0], &mode)?;
                let b = self.fval(f, args[1], &mode)?;
                let (fa, fb) = (self.as_float(f, a), self.as_float(f, b));
                let r = self.b.ins().fcmp(cc(c), fa, fb);
                self.def(results[0], r)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// An operand after `denorm_in`.
    fn fval(
        &mut self,
        f: Bits,
        v: wavejit_ir::Value,
        mode: &FloatMode,
    ) -> Result<ir::Value, JitError> {
        let x = self.val(v)?;
        Ok(match mode.denorm_in {
            Denorm::Preserve => x,
            // An operand is exact: flushing it before rounding is flushing it.
            Denorm::FlushKeepSign | Denorm::FlushBeforeRounding => self.flush(f, x),
        })
    }

    /// Subnormal -> zero of the same sign.
    fn flush(&mut self, f: Bits, x: ir::Value) -> ir::Value {
        let e = self.b.ins().band_imm_s(x, f.exp);
        let zero_exp = self.b.ins().icmp_imm_s(CC::Equal, e, 0);
        let s = self.b.ins().band_imm_s(x, f.sign);
        self.b.ins().select(zero_exp, s, x)
    }

    fn is_nan(&mut self, f: Bits, x: ir::Value) -> ir::Value {
        let m = self.b.ins().band_imm_s(x, f.mag);
        let e = self.iconst(f.int, f.exp);
        self.b.ins().icmp(CC::UnsignedGreaterThan, m, e)
    }

    /// The bits of `x` when it is an `iconst`.
    fn const_bits_of(&self, x: ir::Value) -> Option<i64> {
        let dfg = &self.b.func.dfg;
        let ir::ValueDef::Result(inst, 0) = dfg.value_def(x) else {
            return None;
        };
        match dfg.insts[inst] {
            ir::InstructionData::UnaryImm {
                opcode: ir::Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        }
    }

    fn as_float(&mut self, f: Bits, x: ir::Value) -> ir::Value {
        self.b.ins().bitcast(f.float, MemFlagsData::new(), x)
    }

    fn as_bits(&mut self, x: ir::Value) -> ir::Value {
        let ty = self.b.func.dfg.value_type(x);
        let it = if ty == types::F32 {
            types::I32
        } else {
            types::I64
        };
        self.b.ins().bitcast(it, MemFlagsData::new(), x)
    }

    /// Replaces a NaN result `r` by the first NaN operand quieted, or the default
    /// NaN (on a cold path: NaN results are rare).
    fn fix_nan(&mut self, f: Bits, r: ir::Value, ops: &[ir::Value]) -> ir::Value {
        let rn = self.is_nan(f, r);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let out = self.b.append_block_param(join, f.int);
        self.b.set_cold_block(slow);
        self.b.ins().brif(rn, slow, &[], join, &[r.into()]);
        self.b.switch_to_block(slow);
        let mut nan = self.iconst(f.int, f.exp | f.quiet);
        for &x in ops.iter().rev() {
            // Constant operands (the common `x * const`) are decided here:
            // fewer instructions to allocate registers for.
            if let Some(k) = self.const_bits_of(x) {
                if k & f.mag > f.exp {
                    nan = self.iconst(f.int, k | f.quiet);
                }
                continue;
            }
            let xn = self.is_nan(f, x);
            let q = self.b.ins().bor_imm_s(x, f.quiet);
            nan = self.b.ins().select(xn, q, nan);
        }
        self.b.ins().jump(join, &[nan.into()]);
        self.b.switch_to_block(join);
        out
    }

    /// The order key of `semantics::minmax`: sign-magnitude as a signed integer
    /// with -0 below +0.
    fn key(&mut self, f: Bits, x: ir::Value) -> ir::Value {
        let s = self.b.ins().sshr_imm_s(x, i64::from(f.width - 1));
        let m = self.b.ins().band_imm_s(s, f.mag);
        self.b.ins().bxor(x, m)
    }

    fn pick(&mut self, f: Bits, a: ir::Value, b: ir::Value, max: bool) -> ir::Value {
        let (ka, kb) = (self.key(f, a), self.key(f, b));
        let c = if max {
            CC::SignedGreaterThan
        } else {
            CC::SignedLessThan
        };
        let b_wins = self.b.ins().icmp(c, kb, ka);
        self.b.ins().select(b_wins, b, a)
    }

    fn fbinary(&mut self, f: Bits, op: FBinOp, a: ir::Value, b: ir::Value) -> ir::Value {
        match op {
            FBinOp::Add | FBinOp::Sub | FBinOp::Mul | FBinOp::Div => {
                let (fa, fb) = (self.as_float(f, a), self.as_float(f, b));
                let r = match op {
                    FBinOp::Add => self.b.ins().fadd(fa, fb),
                    FBinOp::Sub => self.b.ins().fsub(fa, fb),
                    FBinOp::Mul => self.b.ins().fmul(fa, fb),
                    _ => self.b.ins().fdiv(fa, fb),
                };
                let r = self.as_bits(r);
                self.fix_nan(f, r, &[a, b])
            }
            FBinOp::Min | FBinOp::Max => {
                let max = op == FBinOp::Max;
                let picked = self.pick(f, a, b, max);
                let (an, bn) = (self.is_nan(f, a), self.is_nan(f, b));
                // One NaN: the other operand as is; both: the propagated NaN.
                let r = self.b.ins().select(bn, a, picked);
                let r = self.b.ins().select(an, b, r);
                let all = self.b.ins().band(an, bn);
                let nan_ab = self.nan_of(f, a, b);
                self.b.ins().select(all, nan_ab, r)
            }
            FBinOp::Minimum | FBinOp::Maximum => {
                let picked = self.pick(f, a, b, op == FBinOp::Maximum);
                let (an, bn) = (self.is_nan(f, a), self.is_nan(f, b));
                let any = self.b.ins().bor(an, bn);
                let nan = self.nan_of(f, a, b);
                self.b.ins().select(any, nan, picked)
            }
            FBinOp::Copysign => {
                let m = self.b.ins().band_imm_s(a, f.mag);
                let s = self.b.ins().band_imm_s(b, f.sign);
                self.b.ins().bor(m, s)
            }
        }
    }

    /// The propagated NaN of `[a, b]` (meaningful when one of them is NaN).
    fn nan_of(&mut self, f: Bits, a: ir::Value, b: ir::Value) -> ir::Value {
        let dflt = self.iconst(f.int, f.exp | f.quiet);
        let bn = self.is_nan(f, b);
        let qb = self.b.ins().bor_imm_s(b, f.quiet);
        let r = self.b.ins().select(bn, qb, dflt);
        let an = self.is_nan(f, a);
        let qa = self.b.ins().bor_imm_s(a, f.quiet);
        self.b.ins().select(an, qa, r)
    }

    fn funary(&mut self, f: Bits, op: FUnOp, a: ir::Value) -> ir::Value {
        match op {
            FUnOp::Neg => self.b.ins().bxor_imm_s(a, f.sign),
            FUnOp::Abs => self.b.ins().band_imm_s(a, f.mag),
            _ => {
                let fa = self.as_float(f, a);
                let r = match op {
                    FUnOp::Sqrt => self.b.ins().sqrt(fa),
                    FUnOp::Floor => self.b.ins().floor(fa),
                    FUnOp::Ceil => self.b.ins().ceil(fa),
                    FUnOp::Trunc => self.b.ins().trunc(fa),
                    _ => self.b.ins().nearest(fa),
                };
                let r = self.as_bits(r);
                self.fix_nan(f, r, &[a])
            }
        }
    }

    /// The output rules of `inst` for its rounded result `r`. With
    /// `FlushBeforeRounding` only a result of exactly the smallest normal
    /// magnitude needs the unrounded value: that rare case goes to
    /// `semantics::eval_pure` on a cold path, everything else is flushed
    /// like `FlushKeepSign`.
    fn finish_result(
        &mut self,
        f: Bits,
        inst: Inst,
        mode: &FloatMode,
        r: ir::Value,
    ) -> Result<ir::Value, JitError> {
        if mode.denorm_out != Denorm::FlushBeforeRounding {
            return Ok(self.finish(f, mode, r));
        }
        let fin = self.finish(f, mode, r);
        let mag = self.b.ins().band_imm_s(r, f.mag);
        let min_normal = f.exp & f.exp.wrapping_neg();
        let edge = self.b.ins().icmp_imm_s(CC::Equal, mag, min_normal);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let out = self.b.append_block_param(join, f.int);
        self.b.set_cold_block(slow);
        self.b.ins().brif(edge, slow, &[], join, &[fin.into()]);
        self.b.switch_to_block(slow);
        let exact = self.pure_results(inst)?;
        let first = exact
            .first()
            .copied()
            .ok_or(JitError::Malformed("float instruction without result"))?;
        self.b.ins().jump(join, &[first.into()]);
        self.b.switch_to_block(join);
        Ok(out)
    }

    /// Output rules: flush, canonical NaN, saturation to [0, 1].
    fn finish(&mut self, f: Bits, mode: &FloatMode, r: ir::Value) -> ir::Value {
        let r = match mode.denorm_out {
            Denorm::Preserve => r,
            // `finish_result` sends the one case this misses to the helper.
            Denorm::FlushKeepSign | Denorm::FlushBeforeRounding => self.flush(f, r),
        };
        let r = match mode.nan {
            NanMode::Canonical(c) => {
                let n = self.is_nan(f, r);
                let c = self.iconst(f.int, c as i64 & (f.sign | f.mag));
                self.b.ins().select(n, c, r)
            }
            NanMode::Propagate => r,
        };
        if !mode.sat {
            return r;
        }
        let one = match f.width {
            32 => 0x3f80_0000,
            _ => 0x3ff0_0000_0000_0000,
        };
        // NaN or negative -> +0; above one -> one (unsigned compare of the bits).
        let n = self.is_nan(f, r);
        let s = self.b.ins().band_imm_s(r, f.sign);
        let neg = self.b.ins().icmp_imm_s(CC::NotEqual, s, 0);
        let zero_it = self.b.ins().bor(n, neg);
        let onev = self.iconst(f.int, one);
        let big = self.b.ins().icmp(CC::UnsignedGreaterThan, r, onev);
        let clamped = self.b.ins().select(big, onev, r);
        let zero = self.iconst(f.int, 0);
        self.b.ins().select(zero_it, zero, clamped)
    }
}
