//! Vector runs (`plan::vector_op`): pure 32-bit integer and f32 arithmetic
//! for [`WIDTH`] listed lanes at once, each IR value as [`GANG`] `I32X4`
//! vectors (floats as their bits). The float rules are the scalar ones of
//! `float.rs` applied lane-wise with masks and `bitselect`: flush keeping the
//! sign, NaN results rebuilt from the operands on a cold path (taken when any
//! lane is NaN), canonical NaN. x86 vector arithmetic rounds exactly like the
//! scalar instructions, so every lane gets the scalar code's bits.
//!
//! Lanes are gathered from and scattered to the register slab through the lane
//! list. When fewer than [`WIDTH`] lanes remain, the positions past the end
//! repeat the last listed lane: they compute that lane's values again (the
//! instructions are pure) and store the same bits, so no unlisted lane is
//! touched.

use std::collections::HashMap;

use cranelift_codegen::ir::{
    self, Endianness, InstBuilder, MemFlagsData, condcodes::IntCC as CC, types,
};
use wavejit_ir::{self as wj, CastOp, Denorm, FBinOp, FUnOp, FloatMode, InstKind, NanMode};

use super::Lower;
use crate::error::JitError;
use crate::plan::{Run, const_bits};

/// Lanes per vector.
const VEC_LANES: usize = 4;
/// Vectors per value: two independent vectors per instruction hide the
/// latency of the long dependency chains of arithmetic loops.
const GANG: usize = 2;
/// Lanes per iteration of a vector run.
const WIDTH: usize = VEC_LANES * GANG;

type Gang = [ir::Value; GANG];

const EXP: i64 = 0x7f80_0000;
const SIGN: i64 = 0x8000_0000;
const MAG: i64 = 0x7fff_ffff;
const QUIET: i64 = 0x0040_0000;

/// The lanes of the current iteration and the IR values computed so far.
struct VecState {
    /// Address of each lane's slot of value 0 in the slab.
    bases: [ir::Value; WIDTH],
    env: HashMap<wj::Value, Gang>,
}

fn lanes_of(flags_le: MemFlagsData) -> MemFlagsData {
    flags_le.with_endianness(Endianness::Little)
}

impl Lower<'_, '_> {
    /// Emits `for i in (0..n).step_by(WIDTH) { the run for lanes list[i..i+WIDTH] }`.
    pub(super) fn vector_run(&mut self, run: &Run) -> Result<(), JitError> {
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        let i = self.b.append_block_param(header, types::I32);
        let zero = self.iconst(types::I32, 0);
        self.b.ins().jump(header, &[zero.into()]);

        self.b.switch_to_block(header);
        let done = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, i, self.n);
        self.b.ins().brif(done, exit, &[], body, &[]);

        self.b.switch_to_block(body);
        let tr = MemFlagsData::trusted();
        let last = self.b.ins().iadd_imm_s(self.n, -1);
        let mut bases = [zero; WIDTH];
        for (k, base) in bases.iter_mut().enumerate() {
            let pos = if k == 0 {
                i
            } else {
                let p = self.b.ins().iadd_imm_s(i, k as i64);
                self.b.ins().umin(p, last)
            };
            let pos = self.b.ins().uextend(types::I64, pos);
            let off = self.b.ins().ishl_imm_s(pos, 2);
            let p = self.b.ins().iadd(self.list, off);
            let lane = self.b.ins().load(types::I32, tr, p, 0);
            let lane = self.b.ins().uextend(types::I64, lane);
            let off = self.b.ins().ishl_imm_s(lane, 3);
            *base = self.b.ins().iadd(self.regs, off);
        }
        let mut st = VecState {
            bases,
            env: HashMap::new(),
        };
        for &inst in &run.insts {
            self.vinst(&mut st, inst)?;
        }
        let next = self.b.ins().iadd_imm_s(i, WIDTH as i64);
        self.b.ins().jump(header, &[next.into()]);
        self.b.switch_to_block(exit);
        Ok(())
    }

    fn splat(&mut self, bits: i64) -> ir::Value {
        let c = self.iconst(types::I32, bits);
        self.b.ins().splat(types::I32X4, c)
    }

    /// IR value `v` for the iteration's lanes: a constant splatted, a value of
    /// this run, or gathered from the slab.
    fn vval(&mut self, st: &mut VecState, v: wj::Value) -> Result<Gang, JitError> {
        if let Some(&g) = st.env.get(&v) {
            return Ok(g);
        }
        let g = if let Some(bits) = const_bits(self.kernel, v) {
            [self.splat(bits as i64); GANG]
        } else {
            let off = self.slot(v);
            let tr = MemFlagsData::trusted();
            let mut g = [st.bases[0]; GANG];
            for (k, x) in g.iter_mut().enumerate() {
                let lanes = &st.bases[k * VEC_LANES..(k + 1) * VEC_LANES];
                let s = self.b.ins().load(types::I32, tr, lanes[0], off);
                let mut vec = self.b.ins().scalar_to_vector(types::I32X4, s);
                for (j, &base) in lanes.iter().enumerate().skip(1) {
                    let s = self.b.ins().load(types::I32, tr, base, off);
                    vec = self.b.ins().insertlane(vec, s, j as u8);
                }
                *x = vec;
            }
            g
        };
        st.env.insert(v, g);
        Ok(g)
    }

    /// Defines IR value `v`; scatters it to the slab (zero-extended) if other
    /// runs read it.
    fn vdef(&mut self, st: &mut VecState, v: wj::Value, g: Gang) {
        st.env.insert(v, g);
        if !self.plan.spill[v] {
            return;
        }
        let off = self.slot(v);
        let tr = MemFlagsData::trusted();
        for (k, &vec) in g.iter().enumerate() {
            for j in 0..VEC_LANES {
                let s = self.b.ins().extractlane(vec, j as u8);
                let s = self.b.ins().uextend(types::I64, s);
                self.b.ins().store(tr, s, st.bases[k * VEC_LANES + j], off);
            }
        }
    }

    fn vinst(&mut self, st: &mut VecState, inst: wj::Inst) -> Result<(), JitError> {
        let data = &self.kernel.insts[inst];
        let (kind, args) = (data.kind.clone(), data.args.clone());
        let res = *data
            .results
            .first()
            .ok_or(JitError::Malformed("vector instruction without result"))?;
        let arg = |k: usize| {
            args.get(k)
                .copied()
                .ok_or(JitError::Malformed("missing argument"))
        };
        let r = match kind {
            InstKind::Const { .. } => self.vval(st, res)?,
            InstKind::IBinary(op) => self.vibinary(st, op, arg(0)?, arg(1)?)?,
            InstKind::Cast {
                op: CastOp::Bitcast,
                ..
            } => self.vval(st, arg(0)?)?,
            InstKind::FBinary { op, mode } => {
                let a = self.vfval(st, arg(0)?, &mode)?;
                let b = self.vfval(st, arg(1)?, &mode)?;
                let r = self.map2(a, b, |this, x, y| {
                    let (fx, fy) = (this.as_f32x4(x), this.as_f32x4(y));
                    let r = match op {
                        FBinOp::Add => this.b.ins().fadd(fx, fy),
                        FBinOp::Sub => this.b.ins().fsub(fx, fy),
                        FBinOp::Mul => this.b.ins().fmul(fx, fy),
                        _ => this.b.ins().fdiv(fx, fy),
                    };
                    this.as_i32x4(r)
                });
                let r = self.vfix_nan(r, &[a, b]);
                self.vfinish(&mode, r)
            }
            InstKind::FUnary { op, mode } => {
                let a = self.vfval(st, arg(0)?, &mode)?;
                let r = match op {
                    FUnOp::Neg => {
                        let m = self.splat(SIGN);
                        a.map(|x| self.b.ins().bxor(x, m))
                    }
                    FUnOp::Abs => {
                        let m = self.splat(MAG);
                        a.map(|x| self.b.ins().band(x, m))
                    }
                    _ => {
                        let r = a.map(|x| {
                            let f = self.as_f32x4(x);
                            let r = self.b.ins().sqrt(f);
                            self.as_i32x4(r)
                        });
                        self.vfix_nan(r, &[a])
                    }
                };
                self.vfinish(&mode, r)
            }
            InstKind::Fma { mode } => {
                let a = self.vfval(st, arg(0)?, &mode)?;
                let b = self.vfval(st, arg(1)?, &mode)?;
                let c = self.vfval(st, arg(2)?, &mode)?;
                let mut r = a;
                for k in 0..GANG {
                    let (x, y, z) = (self.as_f32x4(a[k]), self.as_f32x4(b[k]), self.as_f32x4(c[k]));
                    let f = self.b.ins().fma(x, y, z);
                    r[k] = self.as_i32x4(f);
                }
                let r = self.vfix_nan(r, &[a, b, c]);
                self.vfinish(&mode, r)
            }
            _ => return Err(JitError::Malformed("not a vector instruction")),
        };
        self.vdef(st, res, r);
        Ok(())
    }

    fn vibinary(
        &mut self,
        st: &mut VecState,
        op: wj::IBinOp,
        a: wj::Value,
        b: wj::Value,
    ) -> Result<Gang, JitError> {
        use wj::IBinOp as Op;
        let x = self.vval(st, a)?;
        if matches!(op, Op::Shl | Op::ShrU | Op::ShrS) {
            // The amount modulo the width, as the scalar code does.
            let amt = const_bits(self.kernel, b)
                .ok_or(JitError::Malformed("vector shift by a variable"))?;
            let amt = self.iconst(types::I32, (amt & 31) as i64);
            return Ok(x.map(|v| match op {
                Op::Shl => self.b.ins().ishl(v, amt),
                Op::ShrU => self.b.ins().ushr(v, amt),
                _ => self.b.ins().sshr(v, amt),
            }));
        }
        let y = self.vval(st, b)?;
        Ok(self.map2(x, y, |this, p, q| match op {
            Op::Add => this.b.ins().iadd(p, q),
            Op::Sub => this.b.ins().isub(p, q),
            Op::Mul => this.b.ins().imul(p, q),
            Op::And => this.b.ins().band(p, q),
            Op::Or => this.b.ins().bor(p, q),
            _ => this.b.ins().bxor(p, q),
        }))
    }

    fn map2(
        &mut self,
        a: Gang,
        b: Gang,
        mut f: impl FnMut(&mut Self, ir::Value, ir::Value) -> ir::Value,
    ) -> Gang {
        let mut r = a;
        for k in 0..GANG {
            r[k] = f(self, a[k], b[k]);
        }
        r
    }

    fn as_f32x4(&mut self, x: ir::Value) -> ir::Value {
        self.b
            .ins()
            .bitcast(types::F32X4, lanes_of(MemFlagsData::new()), x)
    }

    fn as_i32x4(&mut self, x: ir::Value) -> ir::Value {
        self.b
            .ins()
            .bitcast(types::I32X4, lanes_of(MemFlagsData::new()), x)
    }

    /// An f32 operand after `denorm_in`.
    fn vfval(
        &mut self,
        st: &mut VecState,
        v: wj::Value,
        mode: &FloatMode,
    ) -> Result<Gang, JitError> {
        let x = self.vval(st, v)?;
        Ok(match mode.denorm_in {
            Denorm::Preserve => x,
            Denorm::FlushKeepSign => self.vflush(x),
        })
    }

    /// Subnormal lanes -> zero of the same sign.
    fn vflush(&mut self, x: Gang) -> Gang {
        let exp = self.splat(EXP);
        let sign = self.splat(SIGN);
        let zero = self.splat(0);
        x.map(|v| {
            let e = self.b.ins().band(v, exp);
            let z = self.b.ins().icmp(CC::Equal, e, zero);
            let s = self.b.ins().band(v, sign);
            self.b.ins().bitselect(z, s, v)
        })
    }

    /// All-ones in the NaN lanes (magnitude above the infinity pattern; both
    /// sides are non-negative as i32, so the signed compare is exact).
    fn vis_nan(&mut self, x: ir::Value) -> ir::Value {
        let mag = self.splat(MAG);
        let exp = self.splat(EXP);
        let m = self.b.ins().band(x, mag);
        self.b.ins().icmp(CC::SignedGreaterThan, m, exp)
    }

    /// NaN lanes of `r` replaced by the first NaN operand quieted, else the
    /// default NaN (on a cold path taken when any lane is NaN).
    fn vfix_nan(&mut self, r: Gang, ops: &[Gang]) -> Gang {
        let masks = r.map(|x| self.vis_nan(x));
        let mut any = masks[0];
        for &m in &masks[1..] {
            any = self.b.ins().bor(any, m);
        }
        let any = self.b.ins().vany_true(any);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let out = [(); GANG].map(|_| self.b.append_block_param(join, types::I32X4));
        self.b.set_cold_block(slow);
        let args: Vec<ir::BlockArg> = r.iter().map(|&x| x.into()).collect();
        self.b.ins().brif(any, slow, &[], join, &args);
        self.b.switch_to_block(slow);
        let quiet = self.splat(QUIET);
        let mut fixed = r;
        for k in 0..GANG {
            let mut nan = self.splat(EXP | QUIET);
            for op in ops.iter().rev() {
                let xn = self.vis_nan(op[k]);
                let q = self.b.ins().bor(op[k], quiet);
                nan = self.b.ins().bitselect(xn, q, nan);
            }
            fixed[k] = self.b.ins().bitselect(masks[k], nan, r[k]);
        }
        let args: Vec<ir::BlockArg> = fixed.iter().map(|&x| x.into()).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        out
    }

    /// Output rules: flush, canonical NaN (saturation is not vectorized).
    fn vfinish(&mut self, mode: &FloatMode, r: Gang) -> Gang {
        let r = match mode.denorm_out {
            Denorm::Preserve => r,
            Denorm::FlushKeepSign => self.vflush(r),
        };
        match mode.nan {
            NanMode::Canonical(c) => {
                let c = self.splat(c as i64 & (SIGN | MAG));
                r.map(|x| {
                    let n = self.vis_nan(x);
                    self.b.ins().bitselect(n, c, x)
                })
            }
            NanMode::Propagate => r,
        }
    }
}
