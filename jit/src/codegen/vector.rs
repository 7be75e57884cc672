//! Vector runs (`plan::vector_op`): pure 32-bit integer and f32 arithmetic
//! for [`WIDTH`] listed lanes at once, each IR value as [`GANG`] `I32X4`
//! vectors (floats as their bits). The float rules are the scalar ones of
//! `float.rs` applied lane-wise with masks and `bitselect`: flush keeping the
//! sign, NaN results rebuilt from the operands, canonical NaN. x86 vector
//! arithmetic rounds exactly like the scalar instructions, so every lane gets
//! the scalar code's bits.
//!
//! NaN results are rare, so the vector code leaves out the NaN rules: it ors
//! together a mask of every float result that is NaN (and of results flushed
//! before rounding whose magnitude is the smallest normal), and when that mask is
//! set, the iteration's lanes are computed again by the host helper
//! `wj_vector_exact` through `semantics::eval_pure` (the interpreter's
//! definition) and the vector results are dropped. Without a NaN anywhere both
//! give the same bits, as the NaN rules change NaN results only. One branch per
//! iteration instead of a cold path per instruction keeps the function small
//! (register allocation dominated compile time).
//!
//! Lanes are gathered from and scattered to the register slab through the lane
//! list. When fewer than [`WIDTH`] lanes remain, the positions past the end
//! repeat the last listed lane: they compute that lane's values again (the
//! instructions are pure) and store the same bits, so no unlisted lane is
//! touched.

use std::collections::HashMap;

use cranelift_codegen::ir::{
    self, Endianness, InstBuilder, MemFlagsData, condcodes::FloatCC as FCC, condcodes::IntCC as CC,
    types,
};
use wavejit_ir::{self as wj, CastOp, Denorm, FBinOp, FUnOp, FloatMode, InstKind, NanMode};

use super::Lower;
use crate::abi::off;
use crate::error::JitError;
use crate::plan::{Run, const_bits};

/// Lanes per vector.
const VEC_LANES: usize = 4;
/// Vectors per value: independent vectors per instruction hide the latency
/// of long dependency chains (ALU bench kernel, 1 thread: 10.2 ms with 2,
/// 7.0 ms with 4; compile of its 258-op form 0.51 -> 0.88 ms/100 ops).
const GANG: usize = 4;
/// Lanes per iteration of a vector run.
const WIDTH: usize = VEC_LANES * GANG;

type Gang = [ir::Value; GANG];

const EXP: i64 = 0x7f80_0000;
const SIGN: i64 = 0x8000_0000;
const MAG: i64 = 0x7fff_ffff;

/// The lanes of the current iteration and the IR values computed so far.
struct VecState {
    /// Address of each lane's slot of value 0 in the slab.
    bases: [ir::Value; WIDTH],
    /// Values gathered from the slab (shared by both passes).
    inputs: HashMap<wj::Value, Gang>,
    /// Values computed by the current pass.
    env: HashMap<wj::Value, Gang>,
    /// Splatted constants by bits.
    consts: HashMap<i64, ir::Value>,
    /// Or of the NaN lanes of float results.
    nan_seen: Gang,
    /// Whether some result could be NaN.
    float_results: bool,
    /// Float results whose NaN needs no test of its own: read only by
    /// arithmetic of this run, whose result is then NaN too and tested.
    unnoted: std::collections::HashSet<wj::Value>,
}

/// Vector float ops whose result is NaN whenever an operand is NaN.
fn propagates_nan(kind: &InstKind) -> bool {
    matches!(
        kind,
        InstKind::FBinary { .. }
            | InstKind::Fma { .. }
            | InstKind::FUnary {
                op: FUnOp::Sqrt,
                ..
            }
    )
}

fn lanes_of(flags_le: MemFlagsData) -> MemFlagsData {
    flags_le.with_endianness(Endianness::Little)
}

impl Lower<'_, '_> {
    /// Emits `for i in (0..n).step_by(WIDTH) { the run for lanes list[i..i+WIDTH] }`.
    pub(super) fn vector_run(&mut self, seg: usize, r: usize, run: &Run) -> Result<(), JitError> {
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        let i = self.b.append_block_param(header, types::I32);
        let zero = self.iconst(types::I32, 0);
        self.b.ins().jump(header, &[zero.into()]);

        self.b.switch_to_block(header);
        let n = self.n();
        let done = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, i, n);
        self.b.ins().brif(done, exit, &[], body, &[]);

        self.b.switch_to_block(body);
        let tr = MemFlagsData::trusted();
        let n = self.n();
        let last = self.b.ins().iadd_imm_s(n, -1);
        let list = self.list();
        let slab = self.batch_ptr(off::REGS);
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
            let p = self.b.ins().iadd(list, off);
            let lane = self.b.ins().load(types::I32, tr, p, 0);
            let lane = self.b.ins().uextend(types::I64, lane);
            let off = self.b.ins().ishl_imm_s(lane, 3);
            *base = self.b.ins().iadd(slab, off);
        }
        let zeros = self.splat_raw(0);
        let mut st = VecState {
            bases,
            inputs: HashMap::new(),
            env: HashMap::new(),
            consts: HashMap::from([(0, zeros)]),
            nan_seen: [zeros; GANG],
            float_results: false,
            unnoted: self.unnoted_results(run),
        };
        for &inst in &run.insts {
            self.vinst(&mut st, inst)?;
        }
        let latch = self.b.create_block();
        if st.float_results {
            // Some lane had a NaN result: the exact helper recomputes them all.
            let mut any = st.nan_seen[0];
            for &m in &st.nan_seen[1..] {
                any = self.b.ins().bor(any, m);
            }
            let any = self.b.ins().vany_true(any);
            let exact = self.b.create_block();
            let store = self.b.create_block();
            self.b.set_cold_block(exact);
            self.b.ins().brif(any, exact, &[], store, &[]);
            self.b.switch_to_block(exact);
            let f = self.iconst(
                types::I64,
                crate::helpers::wj_vector_exact as *const () as i64,
            );
            let lanes = self.iconst(types::I64, self.stride / 8);
            let ints = [seg as i64, r as i64, WIDTH as i64].map(|x| self.iconst(types::I32, x));
            let host = self.batch_ptr(off::HOST);
            let args = [host, ints[0], ints[1], list, i, n, ints[2], slab, lanes];
            let sig = self.sig(super::Helper::VectorExact);
            self.b.ins().call_indirect(sig, f, &args);
            self.b.ins().jump(latch, &[]);
            self.b.switch_to_block(store);
        }
        self.scatter(&st, run)?;
        self.b.ins().jump(latch, &[]);
        self.b.switch_to_block(latch);
        let next = self.b.ins().iadd_imm_s(i, WIDTH as i64);
        self.b.ins().jump(header, &[next.into()]);
        self.b.switch_to_block(exit);
        Ok(())
    }

    /// The results of `run` whose NaN test can be left out: not read by other
    /// runs and read here only by NaN-propagating arithmetic (a chain of such
    /// instructions ends in a tested result or in a value nobody reads).
    fn unnoted_results(&self, run: &Run) -> std::collections::HashSet<wj::Value> {
        let mut uses: HashMap<wj::Value, (usize, usize)> = HashMap::new();
        for &inst in &run.insts {
            let data = &self.kernel.insts[inst];
            let prop = propagates_nan(&data.kind);
            for &a in &data.args {
                let e = uses.entry(a).or_default();
                e.0 += 1;
                e.1 += usize::from(prop);
            }
        }
        run.insts
            .iter()
            .flat_map(|&i| self.kernel.insts[i].results.iter().copied())
            .filter(|&v| !self.plan.spill[v] && uses.get(&v).is_none_or(|&(all, prop)| all == prop))
            .collect()
    }

    /// Writes the run's results that other runs read to their lanes' slab
    /// slots (zero-extended).
    fn scatter(&mut self, st: &VecState, run: &Run) -> Result<(), JitError> {
        let tr = MemFlagsData::trusted();
        for &inst in &run.insts {
            let res = self.kernel.insts[inst].results.clone();
            for v in res {
                if !self.plan.spill[v] {
                    continue;
                }
                let g = *st
                    .env
                    .get(&v)
                    .ok_or(JitError::Malformed("vector result not computed"))?;
                let off = self.slot(v);
                for (k, &vec) in g.iter().enumerate() {
                    let vec = self.as_i32x4(vec);
                    for j in 0..VEC_LANES {
                        let s = self.b.ins().extractlane(vec, j as u8);
                        let s = self.b.ins().uextend(types::I64, s);
                        self.b.ins().store(tr, s, st.bases[k * VEC_LANES + j], off);
                    }
                }
            }
        }
        Ok(())
    }

    fn splat_raw(&mut self, bits: i64) -> ir::Value {
        let c = self.iconst(types::I32, bits);
        self.b.ins().splat(types::I32X4, c)
    }

    /// `bits` in every lane (one per pass).
    fn splat(&mut self, st: &mut VecState, bits: i64) -> ir::Value {
        let bits = bits & 0xffff_ffff;
        if let Some(&c) = st.consts.get(&bits) {
            return c;
        }
        let c = self.splat_raw(bits);
        st.consts.insert(bits, c);
        c
    }

    /// IR value `v` for the iteration's lanes: a constant splatted, a value of
    /// this run, or gathered from the slab.
    fn vval(&mut self, st: &mut VecState, v: wj::Value) -> Result<Gang, JitError> {
        if let Some(&g) = st.env.get(&v).or_else(|| st.inputs.get(&v)) {
            return Ok(g);
        }
        if let Some(bits) = const_bits(self.kernel, v) {
            return Ok([self.splat(st, bits as i64); GANG]);
        }
        let g = {
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
        st.inputs.insert(v, g);
        Ok(g)
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
                    match op {
                        FBinOp::Add => this.b.ins().fadd(fx, fy),
                        FBinOp::Sub => this.b.ins().fsub(fx, fy),
                        FBinOp::Mul => this.b.ins().fmul(fx, fy),
                        _ => this.b.ins().fdiv(fx, fy),
                    }
                });
                self.note_nan(st, res, r);
                self.vfinish(st, &mode, r)
            }
            InstKind::FUnary { op, mode } => {
                let a = self.vfval(st, arg(0)?, &mode)?;
                let r = match op {
                    FUnOp::Neg | FUnOp::Abs => {
                        let r = if op == FUnOp::Neg {
                            let m = self.splat(st, SIGN);
                            a.map(|x| {
                                let x = self.as_i32x4(x);
                                self.b.ins().bxor(x, m)
                            })
                        } else {
                            let m = self.splat(st, MAG);
                            a.map(|x| {
                                let x = self.as_i32x4(x);
                                self.b.ins().band(x, m)
                            })
                        };
                        // A NaN operand stays NaN: only the canonical rule
                        // changes it.
                        if matches!(mode.nan, NanMode::Canonical(_)) {
                            self.note_nan(st, res, r);
                        }
                        r
                    }
                    _ => {
                        let r = a.map(|x| {
                            let f = self.as_f32x4(x);
                            self.b.ins().sqrt(f)
                        });
                        self.note_nan(st, res, r);
                        r
                    }
                };
                self.vfinish(st, &mode, r)
            }
            InstKind::Fma { mode } => {
                let a = self.vfval(st, arg(0)?, &mode)?;
                let b = self.vfval(st, arg(1)?, &mode)?;
                let c = self.vfval(st, arg(2)?, &mode)?;
                let mut r = a;
                for k in 0..GANG {
                    let (x, y, z) = (
                        self.as_f32x4(a[k]),
                        self.as_f32x4(b[k]),
                        self.as_f32x4(c[k]),
                    );
                    r[k] = self.b.ins().fma(x, y, z);
                }
                self.note_nan(st, res, r);
                self.vfinish(st, &mode, r)
            }
            _ => return Err(JitError::Malformed("not a vector instruction")),
        };
        st.env.insert(res, r);
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
        let x = self.vval(st, a)?.map(|v| self.as_i32x4(v));
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
        let y = self.vval(st, b)?.map(|v| self.as_i32x4(v));
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

    /// Values of a vector run are `I32X4` or `F32X4` as their last producer
    /// left them; these convert (a no-op on the bits) when needed.
    fn as_f32x4(&mut self, x: ir::Value) -> ir::Value {
        if self.b.func.dfg.value_type(x) == types::F32X4 {
            return x;
        }
        self.b
            .ins()
            .bitcast(types::F32X4, lanes_of(MemFlagsData::new()), x)
    }

    fn as_i32x4(&mut self, x: ir::Value) -> ir::Value {
        if self.b.func.dfg.value_type(x) == types::I32X4 {
            return x;
        }
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
            Denorm::FlushKeepSign | Denorm::FlushBeforeRounding => self.vflush(st, x),
        })
    }

    /// Subnormal lanes -> zero of the same sign.
    fn vflush(&mut self, st: &mut VecState, x: Gang) -> Gang {
        let exp = self.splat(st, EXP);
        let sign = self.splat(st, SIGN);
        let zero = self.splat(st, 0);
        x.map(|v| {
            let v = self.as_i32x4(v);
            let e = self.b.ins().band(v, exp);
            let z = self.b.ins().icmp(CC::Equal, e, zero);
            let s = self.b.ins().band(v, sign);
            self.b.ins().bitselect(z, s, v)
        })
    }

    /// All-ones in the NaN lanes.
    fn vis_nan(&mut self, x: ir::Value) -> ir::Value {
        let f = self.as_f32x4(x);
        self.b.ins().fcmp(FCC::Unordered, f, f)
    }

    /// Adds the NaN lanes of `r` to the iteration's mask.
    fn note_nan(&mut self, st: &mut VecState, res: wj::Value, r: Gang) {
        if st.unnoted.contains(&res) {
            return;
        }
        st.float_results = true;
        for (k, &x) in r.iter().enumerate() {
            let n = self.vis_nan(x);
            st.nan_seen[k] = self.b.ins().bor(st.nan_seen[k], n);
        }
    }

    /// Output rules: flush (a NaN result sends the lanes to the exact helper,
    /// so there is no NaN to replace here; saturation is not vectorized).
    fn vfinish(&mut self, st: &mut VecState, mode: &FloatMode, r: Gang) -> Gang {
        match mode.denorm_out {
            Denorm::Preserve => r,
            Denorm::FlushKeepSign => self.vflush(st, r),
            Denorm::FlushBeforeRounding => {
                // A result of exactly the smallest normal magnitude may have
                // been tiny before rounding: its lanes take the exact helper,
                // like NaN results.
                self.note_min_normal(st, r);
                self.vflush(st, r)
            }
        }
    }

    /// Adds the lanes of `r` whose magnitude is the smallest normal to the
    /// iteration's exact-helper mask.
    fn note_min_normal(&mut self, st: &mut VecState, r: Gang) {
        st.float_results = true;
        let mag = self.splat(st, MAG);
        let min_normal = self.splat(st, EXP & EXP.wrapping_neg());
        for (k, &x) in r.iter().enumerate() {
            let x = self.as_i32x4(x);
            let m = self.b.ins().band(x, mag);
            let edge = self.b.ins().icmp(CC::Equal, m, min_normal);
            st.nan_seen[k] = self.b.ins().bor(st.nan_seen[k], edge);
        }
    }
}
