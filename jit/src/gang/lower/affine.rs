//! Affine lane values: integer values whose lane `lane0 + i` is
//! `v(lane0) + s * i` (in the type's ring) for every active lane of a span of
//! lanes, with the stride `s` known when compiling. Address arithmetic of the
//! usual shape (`base + (group * size + local_index) << 2`) is affine, so a
//! memory access can test and use one scalar address for a whole chunk (or a
//! whole wave) instead of building and comparing vectors of addresses.
//!
//! Add, subtract, multiply by a constant and shift by a constant keep the
//! relation exact in the ring; bitwise and right-shift operations keep it only
//! between uniform values (stride 0). Widening is where it can break: the lanes
//! of a 32-bit affine value may wrap past `2^32` inside the span, so `zext` and
//! `sext` yield a runtime condition (the span's last lane does not leave the
//! 32-bit range), as does `local_id.x` (the span stays in one row). A scalar
//! is only used where every condition it depends on holds; otherwise the exact
//! vector path runs.

use std::collections::HashMap;

use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, condcodes::IntCC as CC, types};
use wavejit_ir::{self as wj, Builtin, CastOp, IBinOp, InstKind, Kernel, Type};

use super::{GLower, St};
use crate::error::JitError;
use crate::gang::abi::off;

/// Largest stride tracked (larger strides are never contiguous anyway).
const MAX_STRIDE: i64 = 1 << 24;

/// The stride of every affine integer value of `kernel`.
pub(super) fn strides(kernel: &Kernel) -> HashMap<wj::Value, i64> {
    strides_from(kernel, std::iter::empty())
}

/// [`strides`], given values known to be uniform (stride 0: a lockstep
/// kernel's scalars, block parameters among them).
pub(super) fn strides_from(
    kernel: &Kernel,
    uniform: impl Iterator<Item = wj::Value>,
) -> HashMap<wj::Value, i64> {
    let mut s: HashMap<wj::Value, i64> = uniform
        .filter(|&v| matches!(kernel.value_type(v), Type::I32 | Type::I64))
        .map(|v| (v, 0))
        .collect();
    loop {
        let before = s.len();
        for data in kernel.insts.values() {
            let [res] = data.results[..] else { continue };
            if s.contains_key(&res) || !matches!(kernel.value_type(res), Type::I32 | Type::I64) {
                continue;
            }
            let arg = |k: usize| data.args.get(k).and_then(|a| s.get(a).copied());
            let konst = |k: usize| {
                data.args
                    .get(k)
                    .and_then(|&a| crate::plan::const_bits(kernel, a))
            };
            let bits = kernel.value_type(res).bits();
            let stride = match &data.kind {
                InstKind::Const { .. } => Some(0),
                InstKind::Builtin(b) => Some(match b {
                    Builtin::LocalIndex | Builtin::LaneId | Builtin::LocalId(0) => 1,
                    _ => 0,
                }),
                InstKind::Load(a)
                    if a.space == wj::AddrSpace::Uniform && a.count == 1 && konst(0).is_some() =>
                {
                    Some(0)
                }
                InstKind::IBinary(op) => match (op, arg(0), arg(1)) {
                    (IBinOp::Add, Some(x), Some(y)) => x.checked_add(y),
                    (IBinOp::Sub, Some(x), Some(y)) => x.checked_sub(y),
                    (IBinOp::Mul, Some(x), Some(0)) => match konst(1) {
                        Some(c) => x.checked_mul(signed(c, bits)),
                        None => (x == 0).then_some(0),
                    },
                    (IBinOp::Mul, Some(0), Some(y)) => {
                        konst(0).and_then(|c| y.checked_mul(signed(c, bits)))
                    }
                    (IBinOp::Shl, Some(x), Some(0)) => match konst(1) {
                        Some(k) => x.checked_mul(1i64 << (k % u64::from(bits)).min(62)),
                        None => (x == 0).then_some(0),
                    },
                    (
                        IBinOp::And | IBinOp::Or | IBinOp::Xor | IBinOp::ShrU | IBinOp::ShrS,
                        Some(0),
                        Some(0),
                    ) => Some(0),
                    _ => None,
                },
                InstKind::Cast {
                    op: CastOp::Zext | CastOp::Sext,
                    to: Type::I64,
                } if kernel.value_type(data.args[0]) == Type::I32 => arg(0),
                InstKind::Cast {
                    op: CastOp::Trunc,
                    to: Type::I32,
                } if kernel.value_type(data.args[0]) == Type::I64 => arg(0),
                _ => None,
            };
            // Strides are kept as the signed representative in the type's ring.
            if let Some(x) = stride
                .map(|x| signed(x as u64, bits))
                .filter(|x| x.abs() <= MAX_STRIDE)
            {
                s.insert(res, x);
            }
        }
        if s.len() == before {
            return s;
        }
    }
}

/// `x`'s low `bits` bits as a signed number.
fn signed(x: u64, bits: u32) -> i64 {
    let sh = 64 - bits.min(64);
    ((x << sh) as i64) >> sh
}

/// Where a scalar is evaluated: at lane `lane0` (i64) for a span whose last
/// lane is `lane0 + last` (`last` an i64).
#[derive(Copy, Clone)]
pub(super) struct Span {
    pub lane0: ir::Value,
    pub last: ir::Value,
}

/// A value at a span's first lane, and the condition (i8) under which the
/// span's lanes are that value plus multiples of the stride (`None`: always).
pub(super) type Scalar = (ir::Value, Option<ir::Value>);

impl GLower<'_, '_> {
    /// The span of the current wave (its first lane to its last).
    pub(super) fn wave_span(&mut self) -> Span {
        let base = self.st_load(St::Base);
        let lane0 = self.b.ins().uextend(types::I64, base);
        let n = self.span_lanes();
        let n = self.b.ins().uextend(types::I64, n);
        let last = self.b.ins().iadd_imm_s(n, -1);
        Span { lane0, last }
    }

    /// Lanes of the wave the wave-level tests cover (i32): the wave's, or
    /// fewer where lockstep runs only the chunks below an end
    /// ([`GLower::span_end`]).
    pub(super) fn span_lanes(&mut self) -> ir::Value {
        match self.span_end {
            Some(end) => end,
            None => self.st_load(St::N),
        }
    }

    /// The addresses of `seg`'s contiguous word accesses at the wave's first
    /// lane, computed once per wave: a chunk's is `a + stride * c`.
    pub(super) fn segment_scalars(
        &mut self,
        seg: &crate::plan::Segment,
    ) -> Result<HashMap<wj::Value, Scalar>, JitError> {
        let mut memo = HashMap::new();
        let mut out = HashMap::new();
        let mut span = None;
        for run in &seg.runs {
            for &i in &run.insts {
                let data = &self.kernel.insts[i];
                let (InstKind::Load(a) | InstKind::Store(a)) = &data.kind else {
                    continue;
                };
                let addr = data.args[0];
                if !super::mem::word(a)
                    || !matches!(a.space, wj::AddrSpace::Global | wj::AddrSpace::Shared)
                    || self.stride(addr) != Some(4)
                    || out.contains_key(&addr)
                {
                    continue;
                }
                let sp = match span {
                    Some(s) => s,
                    None => *span.insert(self.wave_span()),
                };
                let s = self.scalar(addr, sp, &mut memo)?;
                out.insert(addr, s);
            }
        }
        Ok(out)
    }

    /// Contiguous address `v` at the current chunk's first lane, from the
    /// wave's scalar when the segment has one.
    pub(super) fn chunk_scalar(&mut self, v: wj::Value) -> Result<Scalar, JitError> {
        if let Some(&(a, cond)) = self.wave_scalars.get(&v) {
            let c = self.chunk()?.c;
            let s = self.stride(v).unwrap_or(0);
            let a = if self.b.func.dfg.value_type(a) == types::I64 {
                let c = self.b.ins().uextend(types::I64, c);
                let step = self.b.ins().imul_imm_s(c, s);
                self.b.ins().iadd(a, step)
            } else {
                let step = self.b.ins().imul_imm_s(c, s);
                self.b.ins().iadd(a, step)
            };
            return Ok((a, cond));
        }
        let span = self.chunk_span()?;
        let mut memo = std::mem::take(&mut self.senv);
        let r = self.scalar(v, span, &mut memo);
        self.senv = memo;
        r
    }

    /// `v`'s stride, when it is affine.
    pub(super) fn stride(&self, v: wj::Value) -> Option<i64> {
        self.strides.get(&v).copied()
    }

    /// The span of the current chunk.
    pub(super) fn chunk_span(&mut self) -> Result<Span, JitError> {
        let lane0 = self.chunk()?.lane0;
        let last = self.iconst(types::I64, super::chunk_lanes(self.g) as i64 - 1);
        Ok(Span { lane0, last })
    }

    /// Affine value `v` at `span`'s first lane, computed with scalar ops;
    /// `memo` holds what was computed before in the same block.
    pub(super) fn scalar(
        &mut self,
        v: wj::Value,
        span: Span,
        memo: &mut HashMap<wj::Value, Scalar>,
    ) -> Result<Scalar, JitError> {
        if let Some(&s) = memo.get(&v) {
            return Ok(s);
        }
        let ty = self.kernel.value_type(v);
        let st = if ty == Type::I64 {
            types::I64
        } else {
            types::I32
        };
        if let Some(bits) = crate::plan::const_bits(self.kernel, v) {
            let x = self.iconst(st, bits as i64);
            memo.insert(v, (x, None));
            return Ok((x, None));
        }
        if self.ls_scalar(v) {
            // Computed once per workgroup already.
            let x = self.ls_scalar_val(v)?;
            memo.insert(v, (x, None));
            return Ok((x, None));
        }
        let wj::ValueDef::Result { inst, .. } = self.kernel.values[v].def else {
            return Err(JitError::Malformed("affine block parameter"));
        };
        let data = self.kernel.insts[inst].clone();
        let both = |a: Option<ir::Value>, b: Option<ir::Value>, this: &mut Self| match (a, b) {
            (Some(x), Some(y)) => Some(this.b.ins().band(x, y)),
            (x, None) => x,
            (None, y) => y,
        };
        let out: Scalar = match &data.kind {
            InstKind::Builtin(b) => self.scalar_builtin(*b, span)?,
            InstKind::Load(a) => {
                let offset = crate::plan::const_bits(self.kernel, data.args[0])
                    .ok_or(JitError::Malformed("affine uniform load"))?;
                (self.scalar_uniform(a, offset, st)?, None)
            }
            InstKind::IBinary(op) => {
                let (x, cx) = self.scalar(data.args[0], span, memo)?;
                let (y, cy) = self.scalar(data.args[1], span, memo)?;
                let r = match op {
                    IBinOp::Add => self.b.ins().iadd(x, y),
                    IBinOp::Sub => self.b.ins().isub(x, y),
                    IBinOp::Mul => self.b.ins().imul(x, y),
                    IBinOp::Shl => self.b.ins().ishl(x, y),
                    IBinOp::And => self.b.ins().band(x, y),
                    IBinOp::Or => self.b.ins().bor(x, y),
                    IBinOp::Xor => self.b.ins().bxor(x, y),
                    IBinOp::ShrU => self.b.ins().ushr(x, y),
                    IBinOp::ShrS => self.b.ins().sshr(x, y),
                    _ => return Err(JitError::Malformed("affine operation")),
                };
                (r, both(cx, cy, self))
            }
            InstKind::Cast { op, .. } => {
                let (x, cx) = self.scalar(data.args[0], span, memo)?;
                let s = self.stride(data.args[0]).unwrap_or(0);
                match op {
                    CastOp::Trunc => (self.b.ins().ireduce(types::I32, x), cx),
                    CastOp::Zext | CastOp::Sext => {
                        let signed = *op == CastOp::Sext;
                        let wide = if signed {
                            self.b.ins().sextend(types::I64, x)
                        } else {
                            self.b.ins().uextend(types::I64, x)
                        };
                        let c = if s == 0 {
                            None
                        } else {
                            // The span's last lane, without wrapping, must
                            // stay in the 32-bit range of the extension.
                            let step = self.b.ins().imul_imm_s(span.last, s);
                            let end = self.b.ins().iadd(wide, step);
                            let end = if signed {
                                self.b.ins().iadd_imm_s(end, 1 << 31)
                            } else {
                                end
                            };
                            Some(self.b.ins().icmp_imm_u(CC::UnsignedLessThan, end, 1 << 32))
                        };
                        (wide, both(cx, c, self))
                    }
                    CastOp::Bitcast => return Err(JitError::Malformed("affine bitcast")),
                }
            }
            _ => return Err(JitError::Malformed("affine instruction")),
        };
        memo.insert(v, out);
        Ok(out)
    }

    fn scalar_builtin(&mut self, b: Builtin, span: Span) -> Result<Scalar, JitError> {
        let lane_word = |this: &mut Self, field: i32| {
            let array = this.ctx_load(types::I64, field);
            let offs = this.b.ins().ishl_imm_s(span.lane0, 2);
            let p = this.b.ins().iadd(array, offs);
            this.b.ins().load(types::I32, MemFlagsData::trusted(), p, 0)
        };
        let dim = |d: u8| 4 * i32::from(d.min(2));
        Ok(match b {
            Builtin::LocalIndex => (lane_word(self, off::LOCAL_INDEX), None),
            Builtin::LaneId => (lane_word(self, off::LANE_ID), None),
            Builtin::WaveId => (lane_word(self, off::WAVE_ID), None),
            Builtin::LocalId(d) => {
                let x = lane_word(self, off::LOCAL_X);
                // The span stays in one row of the workgroup.
                let size = self.ctx_load(types::I32, off::WORKGROUP_SIZE);
                let x64 = self.b.ins().uextend(types::I64, x);
                let end = self.b.ins().iadd(x64, span.last);
                let size = self.b.ins().uextend(types::I64, size);
                let row = self.b.ins().icmp(CC::UnsignedLessThan, end, size);
                let v = if d == 0 {
                    x
                } else {
                    lane_word(self, off::LOCAL_X + 8 * i32::from(d.min(2)))
                };
                (v, Some(row))
            }
            Builtin::WorkgroupId(d) => {
                let p = self.group_words();
                let x = self
                    .b
                    .ins()
                    .load(types::I32, MemFlagsData::trusted(), p, dim(d));
                (x, None)
            }
            Builtin::WorkgroupSize(d) => (
                self.ctx_load(types::I32, off::WORKGROUP_SIZE + dim(d)),
                None,
            ),
            Builtin::NumWorkgroups(d) => (
                self.ctx_load(types::I32, off::NUM_WORKGROUPS + dim(d)),
                None,
            ),
            Builtin::WaveSize => (self.ctx_load(types::I32, off::WAVE_SIZE), None),
        })
    }

    /// A uniform word at a constant offset as a scalar of type `st`. Out of
    /// range, the loading instruction has faulted every lane (the address is
    /// the same for all), so any value will do: the context's first word is
    /// read instead of memory past the uniforms.
    pub(super) fn scalar_uniform(
        &mut self,
        a: &wj::MemAccess,
        offset: u64,
        st: ir::Type,
    ) -> Result<ir::Value, JitError> {
        let size = u64::from(a.total_bytes());
        let end = offset
            .checked_add(size)
            .filter(|&e| e < 1 << 31)
            .ok_or(JitError::Malformed("uniform offset"))?;
        let len = self.ctx_load(types::I64, off::UNIFORMS_LEN);
        let fits = self
            .b
            .ins()
            .icmp_imm_u(CC::UnsignedGreaterThanOrEqual, len, end as i64);
        let base = self.ctx_load(types::I64, off::UNIFORMS);
        let at = self.b.ins().iadd_imm_s(base, offset as i64);
        let p = self.b.ins().select(fits, at, self.ctx);
        let raw = match a.bits {
            8 => types::I8,
            16 => types::I16,
            32 => types::I32,
            _ => types::I64,
        };
        let x = self.b.ins().load(raw, MemFlagsData::trusted(), p, 0);
        Ok(if raw == st {
            x
        } else if raw.bits() > st.bits() {
            self.b.ins().ireduce(st, x)
        } else if a.signed {
            self.b.ins().sextend(st, x)
        } else {
            self.b.ins().uextend(st, x)
        })
    }
}
