//! Instructions of a chunk: inline vector forms for the common integer and f32
//! work, everything else through `wj_gang_pure` (the interpreter's
//! `semantics::eval_pure`, lane by lane).
//!
//! Float rules inline (`semantics` order: inputs flushed, one rounding, result
//! flushed, NaN replaced): flush keeping the sign by compare-and-blend,
//! canonical NaN by compare-and-blend. The IEEE NaN propagation rule (first
//! NaN operand quieted, fresh NaNs positive) differs from the host's, so NaN
//! results are only noted (one compare and or per vector); a run in which an
//! active lane noted one is redone lane by lane by `wj_gang_redo` before its
//! terminator, as is a run with a result of exactly the smallest normal under
//! flush-before-rounding (it may have been tiny before rounding). A NaN read
//! only by inline float arithmetic of the same run needs no note: the
//! consumer's result is NaN too.

use cranelift_codegen::ir::{
    self, InstBuilder, MemFlagsData, condcodes::FloatCC as FCC, condcodes::IntCC as ICC, types,
};
use wavejit_ir::{
    self as wj, Builtin, CastOp, Denorm, FBinOp, FUnOp, FloatCC, FloatMode, IBinOp, IUnOp,
    InstKind, IntCC, NanMode, Round, Type,
};

use super::{GLower, Gv};
use crate::error::JitError;
use crate::gang::abi::off;
use crate::gang::helpers::{wide, wj_gang_pure};

const EXP: i64 = 0x7f80_0000;
const SIGN: i64 = 0x8000_0000;
const MAG: i64 = 0x7fff_ffff;
const MIN_NORMAL: i64 = 0x0080_0000;

fn icc(c: IntCC) -> ICC {
    match c {
        IntCC::Eq => ICC::Equal,
        IntCC::Ne => ICC::NotEqual,
        IntCC::Ult => ICC::UnsignedLessThan,
        IntCC::Ule => ICC::UnsignedLessThanOrEqual,
        IntCC::Ugt => ICC::UnsignedGreaterThan,
        IntCC::Uge => ICC::UnsignedGreaterThanOrEqual,
        IntCC::Slt => ICC::SignedLessThan,
        IntCC::Sle => ICC::SignedLessThanOrEqual,
        IntCC::Sgt => ICC::SignedGreaterThan,
        IntCC::Sge => ICC::SignedGreaterThanOrEqual,
    }
}

/// The float modes the inline f32 paths cover.
fn inline_mode(m: &FloatMode) -> bool {
    !m.flags
        && !m.sat
        && m.round == Round::NearestEven
        && m.denorm_in != Denorm::FlushBeforeRounding
}

/// Whether `inst` is inline f32 arithmetic whose result is NaN whenever an
/// operand is (so a wrong NaN payload in an operand is noted at the result).
pub(super) fn propagates_nan(kernel: &wavejit_ir::Kernel, inst: wj::Inst) -> bool {
    let data = &kernel.insts[inst];
    let f32_args = data.args.iter().all(|&a| kernel.value_type(a) == Type::F32);
    f32_args
        && match &data.kind {
            InstKind::FBinary { op, mode } => {
                inline_mode(mode)
                    && matches!(op, FBinOp::Add | FBinOp::Sub | FBinOp::Mul | FBinOp::Div)
            }
            InstKind::Fma { mode } => inline_mode(mode) && crate::cpu::host_has("fma"),
            InstKind::FUnary { op, mode } => {
                inline_mode(mode) && matches!(op, FUnOp::Neg | FUnOp::Abs | FUnOp::Sqrt)
            }
            _ => false,
        }
}

/// Whether `inst`, under flush-before-rounding, can round a tiny value up to
/// the smallest normal. A sum or difference of f32 values is a multiple of
/// 2^-149, so a tiny one is exact; min, max, neg and abs do not round.
fn rounds_into_edge(kernel: &wavejit_ir::Kernel, inst: wj::Inst) -> bool {
    !matches!(
        &kernel.insts[inst].kind,
        InstKind::FBinary {
            op: FBinOp::Add
                | FBinOp::Sub
                | FBinOp::Min
                | FBinOp::Max
                | FBinOp::Minimum
                | FBinOp::Maximum,
            ..
        } | InstKind::FUnary {
            op: FUnOp::Neg | FUnOp::Abs,
            ..
        }
    )
}

/// Whether `inst` is inline f32 arithmetic done by one host float
/// instruction that honours DAZ and FTZ (`wavejit_ir::host_float_env`), with the operation.
fn host_arith(kernel: &wavejit_ir::Kernel, inst: wj::Inst) -> Option<(&InstKind, &FloatMode)> {
    let data = &kernel.insts[inst];
    if data.args.first().map(|&a| kernel.value_type(a)) != Some(Type::F32) {
        return None;
    }
    match &data.kind {
        InstKind::FBinary {
            op: FBinOp::Add | FBinOp::Sub | FBinOp::Mul | FBinOp::Div,
            mode,
        } if inline_mode(mode) => Some((&data.kind, mode)),
        InstKind::Fma { mode } if inline_mode(mode) && crate::cpu::host_has("fma") => {
            Some((&data.kind, mode))
        }
        _ => None,
    }
}

/// The host's flush a whole-chunk loop runs with (`wavejit_ir::host_float_env`).
/// The discriminant is `wj_float_env`'s argument.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum HwFlush {
    /// IEEE: every rule in code.
    Off = 0,
    /// DAZ: subnormal operands of host arithmetic and compares read as zero.
    Inputs = 1,
    /// DAZ and FTZ: tiny results of host arithmetic become zero too.
    InputsAndResults = 2,
}

/// The hardware flush a whole-chunk loop over `insts` can run with, if it
/// gains from it. DAZ reads a subnormal operand as the zero of its sign,
/// which is the input flush, so every inline float instruction that reads an
/// operand as a number (arithmetic, square root, compares) must flush its
/// inputs. FTZ gives the zero of the exact result's sign when the result
/// rounded to an unbounded exponent is below the smallest normal: that is
/// flush-before-rounding for every result but one rounded to exactly the
/// smallest normal, which the code notes for the exact redo; and, since a
/// tiny sum or difference is exact, flush-after-rounding for those. (For a
/// product flushed after rounding it is not: IEEE rounds some products just
/// below the smallest normal up to it, which FTZ flushes.) Min, max, neg,
/// abs and the NaN tests work on bits.
pub(super) fn hardware_flush_run(kernel: &wavejit_ir::Kernel, insts: &[wj::Inst]) -> HwFlush {
    if !wavejit_ir::host_float_env::hardware_flush_available() {
        return HwFlush::Off;
    }
    let (mut gains, mut results) = (false, true);
    for &i in insts {
        let data = &kernel.insts[i];
        let f32_args = data.args.first().map(|&a| kernel.value_type(a)) == Some(Type::F32);
        if let Some((kind, mode)) = host_arith(kernel, i) {
            let sum = matches!(
                kind,
                InstKind::FBinary {
                    op: FBinOp::Add | FBinOp::Sub,
                    ..
                }
            );
            results &= match mode.denorm_out {
                Denorm::FlushBeforeRounding => true,
                Denorm::FlushKeepSign => sum,
                Denorm::Preserve => false,
            };
            if mode.denorm_in == Denorm::Preserve {
                return HwFlush::Off;
            }
            gains = true;
            continue;
        }
        let reads_number = match &data.kind {
            InstKind::FUnary {
                op: FUnOp::Sqrt,
                mode,
            } => f32_args && inline_mode(mode) && mode.denorm_in == Denorm::Preserve,
            InstKind::Fcmp { mode, .. } => f32_args && mode.denorm_in == Denorm::Preserve,
            _ => false,
        };
        if reads_number {
            return HwFlush::Off;
        }
    }
    match (gains, results) {
        (false, _) => HwFlush::Off,
        (true, false) => HwFlush::Inputs,
        (true, true) => HwFlush::InputsAndResults,
    }
}

/// The results among `insts` computed from one of their loads of global or
/// shared memory: in a whole-chunk loop, code computing them cannot be
/// placed outside the loop (where the hardware flush is off).
pub(super) fn varying(
    kernel: &wavejit_ir::Kernel,
    insts: &[wj::Inst],
) -> std::collections::HashSet<wj::Value> {
    let mut out = std::collections::HashSet::new();
    for &i in insts {
        let data = &kernel.insts[i];
        let load = matches!(
            &data.kind,
            InstKind::Load(a) if matches!(a.space, wj::AddrSpace::Global | wj::AddrSpace::Shared)
        );
        if load || data.args.iter().any(|a| out.contains(a)) {
            out.extend(data.results.iter().copied());
        }
    }
    out
}

/// `v` seen through 32-bit bitcasts: the value whose bits it is.
fn bits_source(kernel: &wavejit_ir::Kernel, mut v: wj::Value) -> wj::Value {
    while let wj::ValueDef::Result { inst, index: 0 } = kernel.values[v].def {
        let data = &kernel.insts[inst];
        match &data.kind {
            InstKind::Cast {
                op: CastOp::Bitcast,
                ..
            } if matches!(
                (kernel.value_type(data.args[0]), kernel.value_type(v)),
                (Type::F32 | Type::I32, Type::F32 | Type::I32)
            ) =>
            {
                v = data.args[0];
            }
            _ => break,
        }
    }
    v
}

/// The values (seen through bitcasts) that f32 operations among `insts`
/// read with an input flush.
pub(super) fn flushed_operands(
    kernel: &wavejit_ir::Kernel,
    insts: &[wj::Inst],
) -> std::collections::HashSet<wj::Value> {
    let mut out = std::collections::HashSet::new();
    for &i in insts {
        let data = &kernel.insts[i];
        let mode = match &data.kind {
            InstKind::FBinary { mode, .. }
            | InstKind::Fma { mode }
            | InstKind::FUnary { mode, .. }
            | InstKind::Fcmp { mode, .. } => mode,
            _ => continue,
        };
        if mode.denorm_in != Denorm::Preserve {
            out.extend(data.args.iter().map(|&a| bits_source(kernel, a)));
        }
    }
    out
}

/// Whether `v` (seen through bitcasts) is the result of a float operation
/// that flushes its results: no lane holds a subnormal, so an input flush of
/// it changes nothing (the exact redo of such a result flushes as well).
fn flushed_result(kernel: &wavejit_ir::Kernel, v: wj::Value) -> bool {
    let v = bits_source(kernel, v);
    let wj::ValueDef::Result { inst, index: 0 } = kernel.values[v].def else {
        return false;
    };
    match &kernel.insts[inst].kind {
        InstKind::FBinary { mode, .. } | InstKind::Fma { mode } => {
            kernel.value_type(v) == Type::F32 && mode.denorm_out != Denorm::Preserve
        }
        _ => false,
    }
}

impl GLower<'_, '_> {
    /// Lowers `inst` for the current chunk; false when it stops every lane (trap).
    pub(super) fn inst(&mut self, inst: wj::Inst) -> Result<bool, JitError> {
        let data = self
            .kernel
            .insts
            .get(inst)
            .ok_or(JitError::Malformed("unknown instruction"))?;
        let kind = data.kind.clone();
        let (args, results) = (data.args.clone(), data.results.clone());
        let ty = |v: &wj::Value| self.kernel.value_type(*v);
        let arg_ty = args.first().map(ty);
        let res_ty = results.first().map(ty);
        let done = match &kind {
            InstKind::Const { .. } => {
                let g = self.val(results[0])?;
                self.def(results[0], g)?;
                true
            }
            InstKind::Builtin(bi) => {
                let g = self.builtin(*bi)?;
                self.def(results[0], g)?;
                true
            }
            InstKind::Load(a) => return self.load(inst, a).map(|_| true),
            InstKind::Store(a) => return self.store(inst, a).map(|_| true),
            InstKind::Atomic { .. } => return self.access_helper(inst).map(|_| true),
            InstKind::Fence(_) => return Ok(true),
            InstKind::Trap { .. } => {
                self.trap(inst)?;
                return Ok(false);
            }
            _ => {
                let r = self.inline_pure(&kind, &args, arg_ty, res_ty, inst)?;
                match r {
                    Some(g) => {
                        self.def(results[0], g)?;
                        true
                    }
                    None => false,
                }
            }
        };
        if !done {
            let out = self.call_chunk_helper(inst, wj_gang_pure as *const ())?;
            for (&r, g) in results.iter().zip(out) {
                self.def(r, g)?;
            }
        }
        Ok(true)
    }

    /// A trap: every active lane faults at `inst`.
    fn trap(&mut self, inst: wj::Inst) -> Result<(), JitError> {
        // eval_pure refuses a trap, so the pure helper faults every active lane
        // with the trap's instruction; its fault kind is the trap's code.
        let bits = self.mask_ptr();
        let lane0 = self.chunk()?.lane0;
        let lane0 = self.b.ins().ireduce(types::I32, lane0);
        let code = self.iconst(types::I32, i64::from(inst.as_u32()));
        let buf = self.scratch_at(0);
        let f = self.iconst(types::I64, wj_gang_pure as *const () as i64);
        let call_args = [self.ctx, code, lane0, bits, buf];
        self.call_helper(super::Helper::Chunk, f, &call_args);
        self.mask_cache = None;
        Ok(())
    }

    fn builtin(&mut self, bi: Builtin) -> Result<Gv, JitError> {
        let lane_array = |field: i32| Some(field);
        let field = match bi {
            Builtin::LocalIndex => lane_array(off::LOCAL_INDEX),
            Builtin::LocalId(d) => lane_array(off::LOCAL_X + 8 * i32::from(d.min(2))),
            Builtin::LaneId => lane_array(off::LANE_ID),
            Builtin::WaveId => lane_array(off::WAVE_ID),
            _ => None,
        };
        if let Some(field) = field {
            let lane0 = self.chunk()?.lane0;
            let array = self.ctx_load(types::I64, field);
            let mut g = Vec::with_capacity(self.g);
            for k in 0..self.g {
                let p = self.lane_ptr(array, lane0, k);
                g.push(self.b.ins().load(types::I32X4, super::guest(), p, 0));
            }
            return Ok(g);
        }
        let dim = |d: u8| 4 * i32::from(d.min(2));
        let x = match bi {
            Builtin::WorkgroupId(d) => {
                let p = self.group_words();
                self.b
                    .ins()
                    .load(types::I32, MemFlagsData::trusted(), p, dim(d))
            }
            Builtin::WorkgroupSize(d) => self.ctx_load(types::I32, off::WORKGROUP_SIZE + dim(d)),
            Builtin::NumWorkgroups(d) => self.ctx_load(types::I32, off::NUM_WORKGROUPS + dim(d)),
            _ => self.ctx_load(types::I32, off::WAVE_SIZE),
        };
        let v = self.b.ins().splat(types::I32X4, x);
        Ok(vec![v; self.g])
    }

    /// The inline form of a pure instruction, or `None` (the helper computes it).
    fn inline_pure(
        &mut self,
        kind: &InstKind,
        args: &[wj::Value],
        arg_ty: Option<Type>,
        res_ty: Option<Type>,
        inst: wj::Inst,
    ) -> Result<Option<Gv>, JitError> {
        let (Some(aty), Some(rty)) = (arg_ty, res_ty) else {
            return Ok(None);
        };
        let results = self.kernel.insts[inst].results.len();
        if results != 1 {
            return Ok(None);
        }
        match kind {
            InstKind::IBinary(op) => self.ibinary(*op, aty, args),
            InstKind::IUnary(op) if aty == Type::I32 || aty == Type::I1 => {
                let a = self.val(args[0])?;
                let ones = self.splat(-1, false);
                Ok(match op {
                    IUnOp::Not => Some(a.iter().map(|&x| self.b.ins().bxor(x, ones)).collect()),
                    IUnOp::Neg if aty == Type::I32 => {
                        Some(a.iter().map(|&x| self.b.ins().ineg(x)).collect())
                    }
                    _ => None,
                })
            }
            InstKind::Icmp(cc) => {
                let ok = aty == Type::I32
                    || (aty == Type::I64
                        && matches!(
                            cc,
                            IntCC::Eq
                                | IntCC::Ne
                                | IntCC::Slt
                                | IntCC::Sgt
                                | IntCC::Sle
                                | IntCC::Sge
                        ));
                if !ok {
                    return Ok(None);
                }
                let a = self.val(args[0])?;
                let b = self.val(args[1])?;
                let r: Gv = a
                    .iter()
                    .zip(&b)
                    .map(|(&x, &y)| self.b.ins().icmp(icc(*cc), x, y))
                    .collect();
                Ok(Some(if aty == Type::I64 {
                    self.narrow_mask(&r)
                } else {
                    r
                }))
            }
            InstKind::Select => {
                let c = self.val(args[0])?;
                let a = self.val(args[1])?;
                let b = self.val(args[2])?;
                let c = if wide(rty) { self.wide_mask(&c) } else { c };
                let mut r = Vec::with_capacity(a.len());
                for k in 0..a.len() {
                    let (x, y) = if wide(rty) {
                        (self.i64x2_of(a[k]), self.i64x2_of(b[k]))
                    } else {
                        (self.i32x4_of(a[k]), self.i32x4_of(b[k]))
                    };
                    r.push(self.b.ins().bitselect(c[k], x, y));
                }
                Ok(Some(r))
            }
            InstKind::Cast { op, to } => self.cast(*op, aty, *to, args[0]),
            InstKind::FBinary { op, mode } if aty == Type::F32 && inline_mode(mode) => {
                if matches!(
                    op,
                    FBinOp::Min | FBinOp::Max | FBinOp::Minimum | FBinOp::Maximum
                ) {
                    let a = self.fval(args[0], mode)?;
                    let b = self.fval(args[1], mode)?;
                    let r = self.minmax(*op, &a, &b);
                    // The result's NaN is the interpreter's (built here).
                    return self.float_result(inst, mode, r, false).map(Some);
                }
                if !matches!(op, FBinOp::Add | FBinOp::Sub | FBinOp::Mul | FBinOp::Div) {
                    return Ok(None);
                }
                let a = self.fval_num(args[0], mode)?;
                let b = self.fval_num(args[1], mode)?;
                let mut r = Vec::with_capacity(self.g);
                for k in 0..self.g {
                    let (x, y) = (self.f32x4_of(a[k]), self.f32x4_of(b[k]));
                    r.push(match op {
                        FBinOp::Add => self.b.ins().fadd(x, y),
                        FBinOp::Sub => self.b.ins().fsub(x, y),
                        FBinOp::Mul => self.b.ins().fmul(x, y),
                        _ => self.b.ins().fdiv(x, y),
                    });
                }
                self.float_result(inst, mode, r, true).map(Some)
            }
            InstKind::Fma { mode }
                if aty == Type::F32 && inline_mode(mode) && crate::cpu::host_has("fma") =>
            {
                let a = self.fval_num(args[0], mode)?;
                let b = self.fval_num(args[1], mode)?;
                let c = self.fval_num(args[2], mode)?;
                let mut r = Vec::with_capacity(self.g);
                for k in 0..self.g {
                    let (x, y, z) = (
                        self.f32x4_of(a[k]),
                        self.f32x4_of(b[k]),
                        self.f32x4_of(c[k]),
                    );
                    r.push(self.b.ins().fma(x, y, z));
                }
                self.float_result(inst, mode, r, true).map(Some)
            }
            InstKind::FUnary { op, mode } if aty == Type::F32 && inline_mode(mode) => {
                let a = self.fval(args[0], mode)?;
                match op {
                    FUnOp::Neg | FUnOp::Abs => {
                        let (m, neg) = if *op == FUnOp::Neg {
                            (SIGN, true)
                        } else {
                            (MAG, false)
                        };
                        let m = self.splat(m, false);
                        let mut r = Vec::with_capacity(self.g);
                        for &x in &a {
                            let x = self.i32x4_of(x);
                            r.push(if neg {
                                self.b.ins().bxor(x, m)
                            } else {
                                self.b.ins().band(x, m)
                            });
                        }
                        // Bitwise: a NaN stays the operand's NaN unless
                        // canonical, so only an operand whose NaN was not
                        // tested (an unnoted result of this run) needs a test.
                        let fresh = self.unnoted.contains(&args[0]);
                        self.float_result(inst, mode, r, fresh).map(Some)
                    }
                    FUnOp::Sqrt => {
                        let mut r = Vec::with_capacity(self.g);
                        for &x in &a {
                            let x = self.f32x4_of(x);
                            r.push(self.b.ins().sqrt(x));
                        }
                        self.float_result(inst, mode, r, true).map(Some)
                    }
                    _ => Ok(None),
                }
            }
            InstKind::Fcmp { cc, mode }
                if aty == Type::F32
                    && !mode.flags
                    && mode.denorm_in != Denorm::FlushBeforeRounding =>
            {
                let a = self.fval_num(args[0], mode)?;
                let b = self.fval_num(args[1], mode)?;
                let mut r = Vec::with_capacity(self.g);
                for k in 0..self.g {
                    let (x, y) = (self.f32x4_of(a[k]), self.f32x4_of(b[k]));
                    // x64 has no vector `ueq`: unordered or equal.
                    let m = if *cc == FloatCC::Ueq {
                        let u = self.b.ins().fcmp(FCC::Unordered, x, y);
                        let e = self.b.ins().fcmp(FCC::Equal, x, y);
                        self.b.ins().bor(u, e)
                    } else {
                        self.b.ins().fcmp(crate::codegen::float::cc(*cc), x, y)
                    };
                    r.push(self.i32x4_of(m));
                }
                Ok(Some(r))
            }
            _ => Ok(None),
        }
    }

    fn ibinary(
        &mut self,
        op: IBinOp,
        ty: Type,
        args: &[wj::Value],
    ) -> Result<Option<Gv>, JitError> {
        let w = match ty {
            Type::I32 => false,
            Type::I64 => true,
            Type::I1 => {
                if !matches!(op, IBinOp::And | IBinOp::Or | IBinOp::Xor) {
                    return Ok(None);
                }
                false
            }
            _ => return Ok(None),
        };
        if matches!(op, IBinOp::Shl | IBinOp::ShrU | IBinOp::ShrS) {
            // Vector shifts take one amount: constants only (modulo the width).
            let Some(amt) = crate::plan::const_bits(self.kernel, args[1]) else {
                return Ok(None);
            };
            let a = self.val(args[0])?;
            let amt = self.iconst(types::I32, (amt % u64::from(ty.bits())) as i64);
            let r = a
                .iter()
                .map(|&x| {
                    let x = if w {
                        self.i64x2_of(x)
                    } else {
                        self.i32x4_of(x)
                    };
                    match op {
                        IBinOp::Shl => self.b.ins().ishl(x, amt),
                        IBinOp::ShrU => self.b.ins().ushr(x, amt),
                        _ => self.b.ins().sshr(x, amt),
                    }
                })
                .collect();
            return Ok(Some(r));
        }
        if op == IBinOp::Mul && w {
            // Address arithmetic multiplies by element sizes: a shift.
            let pow2 = |v: wj::Value| {
                crate::plan::const_bits(self.kernel, v).filter(|b| b.is_power_of_two())
            };
            let shifted = match (pow2(args[1]), pow2(args[0])) {
                (Some(b), _) => Some((args[0], b)),
                (None, Some(b)) => Some((args[1], b)),
                _ => None,
            };
            if let Some((x, b)) = shifted {
                let a = self.val(x)?;
                let amt = self.iconst(types::I32, i64::from(b.trailing_zeros()));
                let r = a
                    .iter()
                    .map(|&v| {
                        let v = self.i64x2_of(v);
                        self.b.ins().ishl(v, amt)
                    })
                    .collect();
                return Ok(Some(r));
            }
        }
        let inline = matches!(
            op,
            IBinOp::Add | IBinOp::Sub | IBinOp::And | IBinOp::Or | IBinOp::Xor | IBinOp::Mul
        );
        if !inline {
            return Ok(None);
        }
        let a = self.val(args[0])?;
        let b = self.val(args[1])?;
        // Operands the same in every vector (uniform values such as
        // `group * size`): one operation serves them all (the optimizer that
        // would merge the copies is off, see `codegen::host_isa`).
        let same = |g: &Gv| g.iter().all(|&x| x == g[0]);
        let n = if same(&a) && same(&b) { 1 } else { a.len() };
        let mut r = Vec::with_capacity(a.len());
        for (&x, &y) in a.iter().zip(&b).take(n) {
            let (x, y) = if w {
                (self.i64x2_of(x), self.i64x2_of(y))
            } else {
                (self.i32x4_of(x), self.i32x4_of(y))
            };
            r.push(match op {
                IBinOp::Add => self.b.ins().iadd(x, y),
                IBinOp::Sub => self.b.ins().isub(x, y),
                IBinOp::Mul => self.b.ins().imul(x, y),
                IBinOp::And => self.b.ins().band(x, y),
                IBinOp::Or => self.b.ins().bor(x, y),
                _ => self.b.ins().bxor(x, y),
            });
        }
        if let Some(&first) = r.first() {
            r.resize(a.len(), first);
        }
        Ok(Some(r))
    }

    /// `I64X2` compare results (all-ones lanes) as `I32X4` masks.
    fn narrow_mask(&mut self, wide: &[ir::Value]) -> Gv {
        wide.chunks(2)
            .map(|p| self.narrow_pair(p[0], p[1]))
            .collect()
    }

    /// The low 32 bits of the lanes of two `I64X2` as one `I32X4`.
    fn narrow_pair(&mut self, lo: ir::Value, hi: ir::Value) -> ir::Value {
        let a = self.bytes_of(lo);
        let b = self.bytes_of(hi);
        let order: Vec<u8> = [0u8, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27].to_vec();
        let imm = self
            .b
            .func
            .dfg
            .immediates
            .push(cranelift_codegen::ir::ConstantData::from(order));
        let s = self.b.ins().shuffle(a, b, imm);
        self.i32x4_of(s)
    }

    fn cast(
        &mut self,
        op: CastOp,
        from: Type,
        to: Type,
        a: wj::Value,
    ) -> Result<Option<Gv>, JitError> {
        let x = self.val(a)?;
        let g = match (op, from, to) {
            (CastOp::Bitcast, _, _) if wide(from) == wide(to) => x,
            (CastOp::Zext, Type::I32, Type::I64) | (CastOp::Sext, Type::I32, Type::I64) => {
                let mut r = Vec::with_capacity(2 * x.len());
                for &v in &x {
                    let v = self.i32x4_of(v);
                    if op == CastOp::Zext {
                        r.push(self.b.ins().uwiden_low(v));
                        r.push(self.b.ins().uwiden_high(v));
                    } else {
                        r.push(self.b.ins().swiden_low(v));
                        r.push(self.b.ins().swiden_high(v));
                    }
                }
                r
            }
            (CastOp::Trunc, Type::I64, Type::I32) => {
                let w: Vec<ir::Value> = x.iter().map(|&v| self.i64x2_of(v)).collect();
                w.chunks(2).map(|p| self.narrow_pair(p[0], p[1])).collect()
            }
            (CastOp::Zext, Type::I1, Type::I32) => {
                let one = self.splat(1, false);
                x.iter().map(|&v| self.b.ins().band(v, one)).collect()
            }
            (CastOp::Sext, Type::I1, Type::I32) => x,
            (CastOp::Trunc, Type::I32, Type::I1) => {
                let one = self.splat(1, false);
                let zero = self.splat(0, false);
                x.iter()
                    .map(|&v| {
                        let v = self.i32x4_of(v);
                        let b = self.b.ins().band(v, one);
                        self.b.ins().icmp(ICC::NotEqual, b, zero)
                    })
                    .collect()
            }
            _ => return Ok(None),
        };
        Ok(Some(g))
    }

    /// f32 min/max by `semantics::minmax`'s rule: operands ordered by a key
    /// with -0 below +0 (equal: the first); GPU `Min`/`Max` ignore one NaN
    /// and give the first quieted for two, IEEE `Minimum`/`Maximum` give the
    /// first NaN quieted for any.
    fn minmax(&mut self, op: FBinOp, a: &[ir::Value], b: &[ir::Value]) -> Gv {
        let want_max = matches!(op, FBinOp::Max | FBinOp::Maximum);
        let ieee = matches!(op, FBinOp::Minimum | FBinOp::Maximum);
        let mag = self.splat(MAG, false);
        let quiet = self.splat(0x0040_0000, false);
        let mut out = Vec::with_capacity(a.len());
        for (&x, &y) in a.iter().zip(b) {
            let (x, y) = (self.i32x4_of(x), self.i32x4_of(y));
            // key = x for x >= +0, !|x| = x ^ 0x7fffffff below: a signed order.
            let key = |this: &mut Self, v: ir::Value| {
                let s = this.b.ins().sshr_imm_s(v, 31);
                let m = this.b.ins().band(s, mag);
                this.b.ins().bxor(v, m)
            };
            let (kx, ky) = (key(self, x), key(self, y));
            let cc = if want_max {
                ICC::SignedGreaterThan
            } else {
                ICC::SignedLessThan
            };
            let y_wins = self.b.ins().icmp(cc, ky, kx);
            let pick = self.b.ins().bitselect(y_wins, y, x);
            let (fx, fy) = (self.f32x4_of(x), self.f32x4_of(y));
            let nx = self.b.ins().fcmp(FCC::Unordered, fx, fx);
            let ny = self.b.ins().fcmp(FCC::Unordered, fy, fy);
            let (nx, ny) = (self.i32x4_of(nx), self.i32x4_of(ny));
            let qx = self.b.ins().bor(x, quiet);
            let r = if ieee {
                let qy = self.b.ins().bor(y, quiet);
                let nan = self.b.ins().bitselect(nx, qx, qy);
                let any = self.b.ins().bor(nx, ny);
                self.b.ins().bitselect(any, nan, pick)
            } else {
                let r = self.b.ins().bitselect(ny, x, pick);
                let r = self.b.ins().bitselect(nx, y, r);
                let both = self.b.ins().band(nx, ny);
                self.b.ins().bitselect(both, qx, r)
            };
            out.push(r);
        }
        out
    }

    /// An f32 operand of host arithmetic or a compare after `denorm_in`:
    /// DAZ flushes it when the hardware flush is on and the operand is
    /// computed in the loop.
    fn fval_num(&mut self, v: wj::Value, mode: &FloatMode) -> Result<Gv, JitError> {
        if self.hw_flush != HwFlush::Off && self.varying.contains(&v) {
            return self.val(v);
        }
        self.fval(v, mode)
    }

    /// An f32 operand after `denorm_in`.
    fn fval(&mut self, v: wj::Value, mode: &FloatMode) -> Result<Gv, JitError> {
        if mode.denorm_in != Denorm::Preserve
            && let Some(bits) = crate::plan::const_bits(self.kernel, v)
        {
            // A constant is flushed here, once.
            let bits = bits as u32;
            let flushed = if bits & EXP as u32 == 0 {
                bits & SIGN as u32
            } else {
                bits
            };
            return Ok(vec![self.splat(i64::from(flushed), false); self.g]);
        }
        if mode.denorm_in != Denorm::Preserve
            && let Some(&f) = self.hoisted_flushed.get(&bits_source(self.kernel, v))
        {
            return Ok(vec![f; self.g]);
        }
        let x = self.val(v)?;
        Ok(match mode.denorm_in {
            Denorm::Preserve => x,
            _ if flushed_result(self.kernel, v) => x,
            _ => self.flush(&x),
        })
    }

    /// Subnormal lanes become zero of the same sign.
    pub(super) fn flush(&mut self, x: &[ir::Value]) -> Gv {
        let exp = self.splat(EXP, false);
        let sign = self.splat(SIGN, false);
        let zero = self.splat(0, false);
        x.iter()
            .map(|&v| {
                let v = self.i32x4_of(v);
                let e = self.b.ins().band(v, exp);
                let z = self.b.ins().icmp(ICC::Equal, e, zero);
                let s = self.b.ins().band(v, sign);
                self.b.ins().bitselect(z, s, v)
            })
            .collect()
    }

    /// The result rules of an inline f32 instruction: flush, then NaN. With
    /// IEEE propagation (`fresh_nan`: the NaN may not be the interpreter's) a
    /// NaN result, and under flush-before-rounding a smallest-normal result, marks
    /// its lanes for the exact redo of the run (`GLower::redo`).
    fn float_result(
        &mut self,
        inst: wj::Inst,
        mode: &FloatMode,
        r: Gv,
        fresh_nan: bool,
    ) -> Result<Gv, JitError> {
        // Under the hardware flush, FTZ flushed the result of host
        // arithmetic computed in the loop (`hardware_flush_run`).
        let hw_flushed = self.hw_flush == HwFlush::InputsAndResults
            && host_arith(self.kernel, inst).is_some()
            && self.kernel.insts[inst]
                .args
                .iter()
                .any(|a| self.varying.contains(a));
        let r: Gv = match mode.denorm_out {
            Denorm::Preserve => r.iter().map(|&v| self.i32x4_of(v)).collect(),
            _ if hw_flushed => r.iter().map(|&v| self.i32x4_of(v)).collect(),
            _ => self.flush(&r),
        };
        let nan_noted = !self.unnoted.contains(&self.kernel.insts[inst].results[0]);
        let mut exact: Vec<Option<ir::Value>> = vec![None; r.len()];
        let mut note = |this: &mut Self, k: usize, m: ir::Value| {
            exact[k] = Some(match exact[k] {
                None => m,
                Some(e) => this.b.ins().bor(e, m),
            });
        };
        let r: Gv = match mode.nan {
            NanMode::Canonical(bits) => {
                let c = self.splat(bits as i64, false);
                r.iter()
                    .map(|&v| {
                        let f = self.f32x4_of(v);
                        let nan = self.b.ins().fcmp(FCC::Unordered, f, f);
                        let nan = self.i32x4_of(nan);
                        self.b.ins().bitselect(nan, c, v)
                    })
                    .collect()
            }
            NanMode::Propagate => {
                if !nan_noted {
                    // Read only by inline arithmetic of this run, whose
                    // results are NaN too: the payload is never seen.
                } else if fresh_nan && self.converged && !self.no_redo {
                    // A converged chunk's notes only ask whether to redo it
                    // (no lane masks them): one unordered compare tests two
                    // vectors.
                    for (k, pair) in r.chunks(2).enumerate() {
                        let a = self.f32x4_of(pair[0]);
                        let b = self.f32x4_of(pair[pair.len() - 1]);
                        let nan = self.b.ins().fcmp(FCC::Unordered, a, b);
                        let nan = self.i32x4_of(nan);
                        note(self, 2 * k, nan);
                    }
                } else if fresh_nan {
                    for (k, &v) in r.iter().enumerate() {
                        let f = self.f32x4_of(v);
                        let nan = self.b.ins().fcmp(FCC::Unordered, f, f);
                        let nan = self.i32x4_of(nan);
                        note(self, k, nan);
                    }
                }
                r
            }
        };
        if mode.denorm_out == Denorm::FlushBeforeRounding && rounds_into_edge(self.kernel, inst) {
            let mag = self.splat(MAG, false);
            let min = self.splat(MIN_NORMAL, false);
            for (k, &v) in r.iter().enumerate() {
                let m = self.b.ins().band(v, mag);
                let edge = self.b.ins().icmp(ICC::Equal, m, min);
                note(self, k, edge);
            }
        }
        if self.no_redo && exact.iter().any(Option::is_some) {
            return self.exact_now(inst, r, &exact);
        }
        for (k, e) in exact.into_iter().enumerate() {
            if let Some(e) = e {
                self.note_exact(k, e);
            }
        }
        Ok(r)
    }

    /// The exact rule at once: when an active lane of `exact` is set, the
    /// helper computes `inst` for the chunk (runs that cannot be redone).
    fn exact_now(
        &mut self,
        inst: wj::Inst,
        r: Gv,
        exact: &[Option<ir::Value>],
    ) -> Result<Gv, JitError> {
        let mask = self.mask();
        let mut any = None;
        for (e, &m) in exact.iter().zip(&mask) {
            let Some(e) = *e else { continue };
            let e = self.b.ins().band(e, m);
            any = Some(match any {
                None => e,
                Some(a) => self.b.ins().bor(a, e),
            });
        }
        let any = any.ok_or(JitError::Malformed("empty chunk"))?;
        let any = self.b.ins().vany_true(any);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let params: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        self.b.set_cold_block(slow);
        let fast: Vec<ir::BlockArg> = r.iter().map(|&v| v.into()).collect();
        self.b.ins().brif(any, slow, &[], join, &fast);
        self.b.switch_to_block(slow);
        let out = self.cold(|this| this.call_chunk_helper(inst, wj_gang_pure as *const ()))?;
        let out = out
            .into_iter()
            .next()
            .ok_or(JitError::Malformed("float result"))?;
        let slow_args: Vec<ir::BlockArg> = out.iter().map(|&v| v.into()).collect();
        self.b.ins().jump(join, &slow_args);
        self.b.switch_to_block(join);
        Ok(params)
    }

    /// Adds lanes (all-ones in `m`, vector `k`) whose run must be redone exactly.
    fn note_exact(&mut self, k: usize, m: ir::Value) {
        self.redo[k] = Some(match self.redo[k] {
            None => m,
            Some(acc) => self.b.ins().bor(acc, m),
        });
    }
}
