//! Fused segments: a segment of two runs (loads and arithmetic, then one
//! store and integer work) run as one chunk loop, so the stored value never
//! goes through the slab and the mask is computed once per chunk.
//!
//! Chunk by chunk, a later chunk's loads run after an earlier chunk's store;
//! the interpreter runs every lane's loads first. The two orders agree when no
//! load of lane `x` reads what the store of a lane `y < x` in an earlier chunk
//! wrote. With the store at `S + 4y` and a contiguous load at `L + 4x`, that
//! holds when `L >= S` (lane `x` reads at or above lane `x`'s own store
//! address) or when the wave's two ranges are apart; a load at one address
//! needs its range apart from the store's. Each wave tests this on the affine
//! scalars of its first lane (the conditions of `affine` over the whole
//! wave) and runs the fused loop or the two runs. Faults are per lane and in
//! each lane's program order either way. Nothing after the store notes a redo
//! (no float arithmetic) or loads, so a redo never repeats a load after the
//! store.

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{self, InstBuilder, condcodes::IntCC as CC, types};
use wavejit_ir::{self as wj, AddrSpace, InstKind};

use super::GLower;
use super::mem::word;
use crate::error::JitError;
use crate::plan::{Run, Segment};

/// A segment's fused form: the two runs as one, the accesses the per-wave
/// test compares, and the values no other run reads.
pub(super) struct Fused {
    pub run: Run,
    /// (address, bytes, stride) of the loads in the store's address space.
    loads: Vec<(wj::Value, u32, i64)>,
    /// The store's address.
    store: wj::Value,
    pub internal: HashSet<wj::Value>,
}

impl GLower<'_, '_> {
    /// The fused form of `seg`, when it has one.
    pub(super) fn fusable(&self, seg: &Segment) -> Option<Fused> {
        let [first, second] = &seg.runs[..] else {
            return None;
        };
        let kernel = self.kernel;
        let kind = |i: &wj::Inst| &kernel.insts[*i].kind;
        let (&head, tail) = second.insts.split_first()?;
        let InstKind::Store(sa) = kind(&head) else {
            return None;
        };
        let store_space = sa.space;
        let store = kernel.insts[head].args[0];
        if !matches!(store_space, AddrSpace::Global | AddrSpace::Shared)
            || !word(sa)
            || self.stride(store) != Some(4)
        {
            return None;
        }
        let mut loads = Vec::new();
        for i in &first.insts {
            match kind(i) {
                InstKind::Store(_) | InstKind::Atomic { .. } => return None,
                InstKind::Load(a) if a.space == store_space => {
                    let addr = kernel.insts[*i].args[0];
                    match self.stride(addr) {
                        Some(4) if word(a) => loads.push((addr, 4, 4)),
                        Some(0) => loads.push((addr, a.total_bytes(), 0)),
                        _ => return None,
                    }
                }
                _ => {}
            }
        }
        // After the store: integer work only (no load, no note, no write).
        let quiet = tail.iter().all(|i| {
            let d = &kernel.insts[*i];
            !matches!(
                d.kind,
                InstKind::Load(_)
                    | InstKind::Store(_)
                    | InstKind::Atomic { .. }
                    | InstKind::FBinary { .. }
                    | InstKind::Fma { .. }
                    | InstKind::FUnary { .. }
            )
        });
        if !quiet {
            return None;
        }
        let mut run = first.clone();
        run.insts.extend(&second.insts);
        run.term = second.term;
        run.guarded |= second.guarded;
        // Values of the fused run read nowhere else need no slab copy.
        let defined: HashSet<wj::Value> = run
            .insts
            .iter()
            .flat_map(|&i| kernel.insts[i].results.iter().copied())
            .collect();
        let inside: HashSet<wj::Inst> = run.insts.iter().copied().collect();
        let mut outside: HashSet<wj::Value> = HashSet::new();
        for (b, data) in kernel.blocks.iter() {
            for &i in &data.insts {
                if !inside.contains(&i) {
                    outside.extend(kernel.insts[i].args.iter().copied());
                }
            }
            if let Some(t) = &data.term
                && !(b == seg.block && run.term)
            {
                outside.extend(t.uses());
            }
        }
        let internal = defined
            .into_iter()
            .filter(|v| !outside.contains(v) && !self.slab_read.contains(v))
            .collect();
        Some(Fused {
            run,
            loads,
            store,
            internal,
        })
    }

    /// Whether the current wave may run `f` fused (i8).
    pub(super) fn fuse_test(&mut self, f: &Fused) -> Result<ir::Value, JitError> {
        let span = self.wave_span();
        let n = self.b.ins().iadd_imm_s(span.last, 1);
        let mut memo = HashMap::new();
        let global = self.kernel.value_type(f.store) == wj::Type::I64;
        let mut at =
            |this: &mut Self, v: wj::Value| -> Result<(ir::Value, Option<ir::Value>), JitError> {
                // The segment's wave scalars when it has them (same span).
                let (x, c) = match this.wave_scalars.get(&v) {
                    Some(&s) => s,
                    None => this.scalar(v, span, &mut memo)?,
                };
                let x = if global {
                    x
                } else {
                    this.b.ins().uextend(types::I64, x)
                };
                Ok((x, c))
            };
        let bytes = self.b.ins().ishl_imm_s(n, 2);
        let (s0, sc) = at(self, f.store)?;
        let s_end = self.b.ins().iadd(s0, bytes);
        // No wrap of the store's range.
        let mut ok = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, s_end, s0);
        if let Some(c) = sc {
            ok = self.b.ins().band(ok, c);
        }
        for &(addr, size, stride) in &f.loads {
            let (l0, lc) = at(self, addr)?;
            if let Some(c) = lc {
                ok = self.b.ins().band(ok, c);
            }
            let span_bytes = if stride == 0 {
                self.iconst(types::I64, i64::from(size))
            } else {
                bytes
            };
            let l_end = self.b.ins().iadd(l0, span_bytes);
            let no_wrap = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, l_end, l0);
            let before = self.b.ins().icmp(CC::UnsignedLessThanOrEqual, l_end, s0);
            let after = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, l0, s_end);
            let mut apart = self.b.ins().bor(before, after);
            if stride != 0 {
                let above = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, l0, s0);
                apart = self.b.ins().bor(apart, above);
            }
            let good = self.b.ins().band(no_wrap, apart);
            ok = self.b.ins().band(ok, good);
        }
        Ok(ok)
    }
}
