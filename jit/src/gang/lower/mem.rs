//! Loads and stores of a chunk. Inline fast paths for whole 32-bit values:
//! global and shared addresses consecutive across the chunk's lanes (`a0 + 4k`)
//! and inside one region (global: the site's cached region; shared: the
//! workgroup's area) are one vector access per four lanes, and uniform loads
//! at constant offsets are one scalar load. A word load whose active lanes
//! share one address is one scalar load; one whose active lanes' addresses
//! are scattered but each aligned and inside the region is a gather, a
//! scalar load per lane; a global word store of every lane of the chunk, so
//! scattered, is a scatter in lane order. Everything else (other types,
//! scattered shared stores, misaligned addresses, ranges that leave the
//! region, partial masks for global stores, atomics, private memory) goes
//! lane by lane through `wj_gang_access`, which applies the interpreter's
//! checks and records its faults (and refills the site's cached region).
//!
//! A shared store under a partial mask writes the vector back with the
//! inactive lanes' old bytes: shared memory belongs to the batch's thread, so
//! nothing else writes in between. Global memory may be shared with other
//! threads, so a global store only takes the vector path with every lane
//! active.

use cranelift_codegen::ir::{self, InstBuilder, MemFlagsData, condcodes::IntCC as CC, types};
use wavejit_ir::{self as wj, AddrSpace, MemAccess, Type};

use std::collections::HashMap;

use super::{GLower, Gv, St, chunk_lanes, guest};
use crate::abi::{GC_ENTRY_SIZE, off as goff};
use crate::error::JitError;
use crate::gang::abi::off;
use crate::gang::helpers::wj_gang_access;

/// Whether `a` is a whole 32-bit value (the vector fast paths).
pub(super) fn word(a: &MemAccess) -> bool {
    a.count == 1 && a.bits == 32 && matches!(a.ty, Type::I32 | Type::F32)
}

/// Whether `a` is four whole 32-bit values (`i32x4`/`f32x4`: the float4
/// accesses tinygrad's kernels make), the quad fast paths.
pub(super) fn quad(a: &MemAccess) -> bool {
    a.count == 4 && a.bits == 32 && matches!(a.ty, Type::I32 | Type::F32)
}

/// Byte shuffles of two `I32X4` (as `I8X16`) picking 32-bit lanes: `lo32`
/// interleaves the low halves (`a0 b0 a1 b1`), `hi32` the high halves, `lo64`
/// and `hi64` the 64-bit halves (`a0 a1 b0 b1`, `a2 a3 b2 b3`).
fn word_shuffle(lanes: [u8; 4]) -> [u8; 16] {
    let mut m = [0u8; 16];
    for (i, &l) in lanes.iter().enumerate() {
        for b in 0..4 {
            m[4 * i + b] = 4 * l + b as u8;
        }
    }
    m
}

impl GLower<'_, '_> {
    /// Lane by lane through the helper.
    pub(super) fn access_helper(&mut self, inst: wj::Inst) -> Result<(), JitError> {
        let out = self.call_chunk_helper(inst, wj_gang_access as *const ())?;
        let results = self.kernel.insts[inst].results.clone();
        let atomic = matches!(self.kernel.insts[inst].kind, wj::InstKind::Atomic { .. });
        for (&r, g) in results.iter().zip(out) {
            if atomic && !self.spilled(r) {
                // A redo of the run reads the old value from the slab (it does
                // not repeat the atomic).
                let mask = self.mask();
                self.write_slab(r, &g, &mask)?;
            }
            self.def(r, g)?;
        }
        Ok(())
    }

    pub(super) fn load(&mut self, inst: wj::Inst, a: &MemAccess) -> Result<(), JitError> {
        let data = &self.kernel.insts[inst];
        let (addr_v, res) = (data.args[0], data.results.clone());
        if a.space == AddrSpace::Uniform
            && res.len() == 1
            && a.total_bytes() <= 8
            && let Some(offset) = crate::plan::const_bits(self.kernel, addr_v)
            && offset.is_multiple_of(u64::from(a.align.max(1)))
            && offset < 1 << 32
        {
            if let Some(&x) = self.hoisted.get(&inst) {
                // Loaded once for the wave (see `hoist_uniforms`).
                let g = vec![x; self.vecs(self.kernel.value_type(res[0]))];
                return self.def(res[0], g);
            }
            return self.uniform_load(inst, a, offset, res[0]);
        }
        if quad(a) && matches!(a.space, AddrSpace::Global | AddrSpace::Shared) {
            return self.load_quad(inst, a);
        }
        if !word(a) || !matches!(a.space, AddrSpace::Global | AddrSpace::Shared) {
            return self.access_helper(inst);
        }
        if self.stride(addr_v) == Some(0) {
            return self.load_same_address(inst, a.space, addr_v);
        }
        if let Some(p) = self.whole_fast_address(inst)? {
            let g: Gv = (0..self.g)
                .map(|k| self.b.ins().load(types::I32X4, guest(), p, 16 * k as i32))
                .collect();
            return self.def(res[0], g);
        }
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let params: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        let fast_block = self.b.create_block();
        self.b.set_cold_block(slow);
        let p = self.branch_contiguous(inst, a.space, addr_v, false, None, fast_block, slow)?;
        self.b.switch_to_block(fast_block);
        let mut args: Vec<ir::BlockArg> = Vec::new();
        for k in 0..self.g {
            let x = self.b.ins().load(types::I32X4, guest(), p, 16 * k as i32);
            args.push(x.into());
        }
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(slow);
        self.load_same_at_runtime(inst, a.space, addr_v, join)?;
        self.def(res[0], params)
    }

    /// The path of a word load whose lanes were not consecutive: when every
    /// active lane reads one aligned word inside memory the load may use,
    /// one scalar load for the chunk (a loop's uniform address, which the
    /// stride analysis does not see: loop counters are block parameters);
    /// otherwise a gather, or the helper. Inactive lanes' addresses are not
    /// looked at.
    fn load_same_at_runtime(
        &mut self,
        inst: wj::Inst,
        space: AddrSpace,
        addr_v: wj::Value,
        join: ir::Block,
    ) -> Result<(), JitError> {
        let (ok, p) = self.cold(|this| {
            let addr = this.val(addr_v)?;
            let mask = this.mask();
            let (a0, same) = this.active_lanes_equal(space, &addr, &mask)?;
            let low = this.b.ins().band_imm_s(a0, 3);
            let aligned = this.b.ins().icmp_imm_s(CC::Equal, low, 0);
            let four = this.iconst(types::I64, 4);
            let (inside, p) = this.region(inst, space, a0, four, false)?;
            let ok = this.b.ins().band(same, aligned);
            Ok((this.b.ins().band(ok, inside), p))
        })?;
        self.scalar_load_or(ok, p, join, |this| {
            this.cold(|this| this.gather_or_helper(inst, space, addr_v, join))
        })
    }

    /// A word load's lanes read one by one in compiled code (a gather) when
    /// every active lane's address is aligned and its word lies in memory
    /// the load may use (global: the site's cached region, which the helper
    /// keeps; shared: the workgroup's area); otherwise the helper, lane by
    /// lane (and its faults). Inactive lanes read a word the batch owns
    /// instead (their values are never used). Packed workgroups read a
    /// per-workgroup address this way: uniform in each original workgroup,
    /// neither uniform nor consecutive across the pack.
    fn gather_or_helper(
        &mut self,
        inst: wj::Inst,
        space: AddrSpace,
        addr_v: wj::Value,
        join: ir::Block,
    ) -> Result<(), JitError> {
        if space == AddrSpace::Shared && self.kernel.shared_size < 4 {
            return self.helper_into(inst, wj_gang_access as *const (), join);
        }
        let (ok, hosts) = self.gather_test(inst, space, addr_v, false)?;
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        self.b.set_cold_block(fast);
        self.b.set_cold_block(slow);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let mut args: Vec<ir::BlockArg> = Vec::with_capacity(self.g);
        for pair in hosts.chunks(2) {
            // Lanes 4j, 4j+1 from the first vector, 4j+2, 4j+3 from the second.
            let mut v = None;
            for (k, &h) in pair.iter().enumerate() {
                for l in 0..2u8 {
                    let p = self.b.ins().extractlane(h, l);
                    let x = self.b.ins().load(types::I32, guest(), p, 0);
                    v = Some(match v {
                        None => self.b.ins().scalar_to_vector(types::I32X4, x),
                        Some(v) => self.b.ins().insertlane(v, x, 2 * k as u8 + l),
                    });
                }
            }
            let v = v.ok_or(JitError::Malformed("empty gather"))?;
            args.push(v.into());
        }
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(slow);
        self.helper_into(inst, wj_gang_access as *const (), join)
    }

    /// The test of [`GLower::gather_or_helper`] (i8) and the lanes' host
    /// addresses, two lanes per I64X2 (2 * g vectors). A `write` (global
    /// only) needs a writable region and every lane active: inactive lanes
    /// are not told apart (a converged wave's mask slot is not kept).
    fn gather_test(
        &mut self,
        inst: wj::Inst,
        space: AddrSpace,
        addr_v: wj::Value,
        write: bool,
    ) -> Result<(ir::Value, Vec<ir::Value>), JitError> {
        let tr = MemFlagsData::trusted();
        let addr = self.val(addr_v)?;
        let mask = if write {
            let ones = self.iconst(types::I32, -1);
            let ones = self.b.ins().splat(types::I32X4, ones);
            vec![ones; self.g]
        } else {
            self.mask()
        };
        // Per pair of lanes: the guest address (for alignment) and the
        // offset into the area; then the area's last word offset, its host
        // base, a readable host word for inactive lanes, and a condition on
        // the area itself.
        let mut pairs: Vec<(ir::Value, ir::Value, ir::Value)> = Vec::new();
        let (last, base, spare, cond) = if space == AddrSpace::Global {
            let site = self.plan.gc_site[inst];
            let gc = self.ctx_load(types::I64, off::GC);
            let entry = self.b.ins().iadd_imm_s(gc, i64::from(site) * GC_ENTRY_SIZE);
            let start = self.b.ins().load(types::I64, tr, entry, goff::GC_START);
            let len = self.b.ins().load(types::I64, tr, entry, goff::GC_LEN);
            let host = self.b.ins().load(types::I64, tr, entry, goff::GC_HOST);
            let start_v = self.b.ins().splat(types::I64X2, start);
            for (v, m64) in self.global_address_pairs(&addr, &mask)? {
                let off = self.b.ins().isub(v, start_v);
                pairs.push((v, off, m64));
            }
            let mut roomy = self
                .b
                .ins()
                .icmp_imm_u(CC::UnsignedGreaterThanOrEqual, len, 4);
            if write {
                let w = self.b.ins().load(types::I64, tr, entry, goff::GC_WRITABLE);
                let w = self.b.ins().icmp_imm_s(CC::NotEqual, w, 0);
                roomy = self.b.ins().band(roomy, w);
            }
            let last = self.b.ins().iadd_imm_s(len, -4);
            (last, host, entry, Some(roomy))
        } else {
            let (_, base) = {
                let zero = self.iconst(types::I64, 0);
                let four = self.iconst(types::I64, 4);
                self.region(inst, space, zero, four, false)?
            };
            for (k, &m) in mask.iter().enumerate() {
                let m = self.i32x4_of(m);
                let v = *addr
                    .get(k)
                    .ok_or(JitError::Malformed("address vectors short of the mask"))?;
                let v = self.i32x4_of(v);
                let halves = [
                    (self.b.ins().uwiden_low(v), self.b.ins().swiden_low(m)),
                    (self.b.ins().uwiden_high(v), self.b.ins().swiden_high(m)),
                ];
                for (v64, m64) in halves {
                    pairs.push((v64, v64, m64));
                }
            }
            let last = self.iconst(types::I64, i64::from(self.kernel.shared_size) - 4);
            (last, base, base, None)
        };
        let last_v = self.b.ins().splat(types::I64X2, last);
        let base_v = self.b.ins().splat(types::I64X2, base);
        let spare_v = self.b.ins().splat(types::I64X2, spare);
        let three = self.iconst(types::I64, 3);
        let three_v = self.b.ins().splat(types::I64X2, three);
        let zero = self.iconst(types::I64, 0);
        let zero_v = self.b.ins().splat(types::I64X2, zero);
        let mut all: Option<ir::Value> = None;
        let mut hosts = Vec::with_capacity(pairs.len());
        for (v, off, m64) in pairs {
            let inside = self.b.ins().icmp(CC::UnsignedLessThanOrEqual, off, last_v);
            let low = self.b.ins().band(v, three_v);
            let aligned = self.b.ins().icmp(CC::Equal, low, zero_v);
            let good = self.b.ins().band(inside, aligned);
            let idle = self.b.ins().bnot(m64);
            let ok = self.b.ins().bor(good, idle);
            all = Some(match all {
                None => ok,
                Some(a) => self.b.ins().band(a, ok),
            });
            let host = self.b.ins().iadd(off, base_v);
            hosts.push(self.b.ins().bitselect(m64, host, spare_v));
        }
        let all = all.ok_or(JitError::Malformed("empty chunk"))?;
        let mut ok = self.b.ins().vall_true(all);
        if let Some(c) = cond {
            ok = self.b.ins().band(ok, c);
        }
        Ok((ok, hosts))
    }

    /// A chunk's global (64-bit) addresses with their lanes' mask, as I64X2
    /// pairs: mask vector k covers address vectors 2k (lanes 4k, 4k+1) and
    /// 2k+1 (lanes 4k+2, 4k+3).
    fn global_address_pairs(
        &mut self,
        addr: &[ir::Value],
        mask: &[ir::Value],
    ) -> Result<Vec<(ir::Value, ir::Value)>, JitError> {
        let mut pairs = Vec::with_capacity(2 * mask.len());
        for (k, &m) in mask.iter().enumerate() {
            let m = self.i32x4_of(m);
            let halves = [self.b.ins().swiden_low(m), self.b.ins().swiden_high(m)];
            for (h, m64) in halves.into_iter().enumerate() {
                let v = *addr
                    .get(2 * k + h)
                    .ok_or(JitError::Malformed("address vectors short of the mask"))?;
                pairs.push((self.i64x2_of(v), m64));
            }
        }
        Ok(pairs)
    }

    /// Lane 0's address (i64) and whether every active lane's address
    /// equals it (i8).
    fn active_lanes_equal(
        &mut self,
        space: AddrSpace,
        addr: &[ir::Value],
        mask: &[ir::Value],
    ) -> Result<(ir::Value, ir::Value), JitError> {
        let mut all: Option<ir::Value> = None;
        let mut and = |this: &mut Self, ok: ir::Value| {
            all = Some(match all {
                None => ok,
                Some(a) => this.b.ins().band(a, ok),
            });
        };
        let a0 = if space == AddrSpace::Global {
            let first = self.i64x2_of(addr[0]);
            let a0 = self.b.ins().extractlane(first, 0);
            let base = self.b.ins().splat(types::I64X2, a0);
            for (v, m64) in self.global_address_pairs(addr, mask)? {
                let eq = self.b.ins().icmp(CC::Equal, v, base);
                let off = self.b.ins().bnot(m64);
                let ok = self.b.ins().bor(eq, off);
                let ok = self.i32x4_of(ok);
                and(self, ok);
            }
            a0
        } else {
            let first = self.i32x4_of(addr[0]);
            let a32 = self.b.ins().extractlane(first, 0);
            let base = self.b.ins().splat(types::I32X4, a32);
            for (&v, &m) in addr.iter().zip(mask) {
                let v = self.i32x4_of(v);
                let m = self.i32x4_of(m);
                let eq = self.b.ins().icmp(CC::Equal, v, base);
                let off = self.b.ins().bnot(m);
                let ok = self.b.ins().bor(eq, off);
                and(self, ok);
            }
            self.b.ins().uextend(types::I64, a32)
        };
        let all = all.ok_or(JitError::Malformed("empty chunk"))?;
        Ok((a0, self.b.ins().vall_true(all)))
    }

    pub(super) fn store(&mut self, inst: wj::Inst, a: &MemAccess) -> Result<(), JitError> {
        if quad(a) && matches!(a.space, AddrSpace::Global | AddrSpace::Shared) {
            return self.store_quad(inst, a);
        }
        if !word(a) || !matches!(a.space, AddrSpace::Global | AddrSpace::Shared) {
            return self.access_helper(inst);
        }
        let args = self.kernel.insts[inst].args.clone();
        if a.space == AddrSpace::Shared && self.stride(args[0]) == Some(0) {
            return self.store_same_address(inst, args[0], args[1]);
        }
        if a.space == AddrSpace::Global && self.stride(args[0]) == Some(0) {
            return self.store_last_lane(inst, args[0], args[1]);
        }
        let vals = self.val(args[1])?;
        if let Some(p) = self.whole_fast_address(inst)? {
            if self.calls_in_chunk == 0 {
                // No lane faulted when the chunk began, and nothing since
                // could have faulted one.
                for (k, &x) in vals.iter().enumerate() {
                    let x = self.i32x4_of(x);
                    self.b.ins().store(guest(), x, p, 16 * k as i32);
                }
                return Ok(());
            }
            // Every lane of the chunk is active unless the exact path of
            // this chunk faulted one (then the helper stores the others).
            let faulted = self.ctx_load(types::I32, off::FAULTED);
            let slow = self.b.create_block();
            let fast = self.b.create_block();
            let join = self.b.create_block();
            self.b.set_cold_block(slow);
            self.b.ins().brif(faulted, slow, &[], fast, &[]);
            self.b.switch_to_block(fast);
            for (k, &x) in vals.iter().enumerate() {
                let x = self.i32x4_of(x);
                self.b.ins().store(guest(), x, p, 16 * k as i32);
            }
            return self.store_slow_path(inst, slow, join);
        }
        // Read only where used: a converged wave's global store tests its
        // chunk's lanes without it (the slot's reload would be dead code
        // that stays, as stack loads do).
        let mask = if a.space == AddrSpace::Global && self.converged {
            Vec::new()
        } else {
            self.mask()
        };
        let mut extra = None;
        if a.space == AddrSpace::Global {
            let all = if self.converged {
                // Every lane of the chunk exists and none has faulted in
                // the batch: all active.
                let ch = self.chunk()?;
                let full = match ch.whole {
                    Some(w) => w,
                    None => {
                        let c = ch.c;
                        let n = self.st_load(St::N);
                        let left = self.b.ins().isub(n, c);
                        self.b.ins().icmp_imm_u(
                            CC::UnsignedGreaterThanOrEqual,
                            left,
                            chunk_lanes(self.g) as i64,
                        )
                    }
                };
                let faulted = self.ctx_load(types::I32, off::FAULTED);
                let clean = self.b.ins().icmp_imm_s(CC::Equal, faulted, 0);
                self.b.ins().band(full, clean)
            } else {
                self.all_active(&mask)
            };
            extra = Some(all);
        }
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let fast_block = self.b.create_block();
        self.b.set_cold_block(slow);
        let p = self.branch_contiguous(inst, a.space, args[0], true, extra, fast_block, slow)?;
        self.b.switch_to_block(fast_block);
        let xs: Vec<ir::Value> = vals.iter().map(|&x| self.i32x4_of(x)).collect();
        if a.space == AddrSpace::Shared {
            // Inactive lanes keep their words; a chunk with every lane
            // active just stores.
            let all = self.all_active(&mask);
            let whole = self.b.create_block();
            let part = self.b.create_block();
            self.b.ins().brif(all, whole, &[], part, &[]);
            self.b.switch_to_block(whole);
            for (k, &x) in xs.iter().enumerate() {
                self.b.ins().store(guest(), x, p, 16 * k as i32);
            }
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(part);
            for (k, &x) in xs.iter().enumerate() {
                let old = self.b.ins().load(types::I32X4, guest(), p, 16 * k as i32);
                let y = self.b.ins().bitselect(mask[k], x, old);
                self.b.ins().store(guest(), y, p, 16 * k as i32);
            }
        } else {
            for (k, &x) in xs.iter().enumerate() {
                self.b.ins().store(guest(), x, p, 16 * k as i32);
            }
        }
        if let Some(all) = extra {
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(slow);
            // `vals`, not `xs`: the conversions are in the fast block.
            self.cold(|this| this.scatter_or_helper(inst, args[0], &vals, all, join))?;
            self.b.switch_to_block(join);
            return Ok(());
        }
        self.store_slow_path(inst, slow, join)
    }

    /// A global word store whose lanes were not consecutive: with every lane
    /// of the chunk active (`all`) and each lane's address aligned and inside
    /// the site's cached region, writable, one scalar store per lane in lane
    /// order (a later lane's word wins, as in the interpreter); otherwise the
    /// helper, lane by lane (and its faults).
    fn scatter_or_helper(
        &mut self,
        inst: wj::Inst,
        addr_v: wj::Value,
        vals: &[ir::Value],
        all: ir::Value,
        join: ir::Block,
    ) -> Result<(), JitError> {
        let (ok, hosts) = self.gather_test(inst, AddrSpace::Global, addr_v, true)?;
        let ok = self.b.ins().band(ok, all);
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        self.b.set_cold_block(fast);
        self.b.set_cold_block(slow);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        for (j, &x) in vals.iter().enumerate() {
            let x = self.i32x4_of(x);
            for l in 0..4u8 {
                let h = *hosts
                    .get(2 * j + usize::from(l / 2))
                    .ok_or(JitError::Malformed("scatter without addresses"))?;
                let p = self.b.ins().extractlane(h, l % 2);
                let w = self.b.ins().extractlane(x, l);
                self.b.ins().store(guest(), w, p, 0);
            }
        }
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(slow);
        self.call_chunk_helper(inst, wj_gang_access as *const ())?;
        self.b.ins().jump(join, &[]);
        Ok(())
    }

    /// A word load whose address every lane of the chunk shares (stride 0:
    /// ir3's shared registers, a workgroup's slot): when it is aligned and
    /// inside memory the load may use, one scalar load for the chunk;
    /// otherwise the helper, lane by lane (and its faults).
    fn load_same_address(
        &mut self,
        inst: wj::Inst,
        space: AddrSpace,
        addr_v: wj::Value,
    ) -> Result<(), JitError> {
        let res = self.kernel.insts[inst].results[0];
        let (ok, p) = self.same_address(inst, space, addr_v, false)?;
        let join = self.b.create_block();
        let params: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        self.scalar_load_or_helper(inst, ok, p, join)?;
        self.def(res, params)
    }

    /// When `ok`, the word at host address `p` splatted to every lane,
    /// else the helper lane by lane; both jump to `join` with the values.
    fn scalar_load_or_helper(
        &mut self,
        inst: wj::Inst,
        ok: ir::Value,
        p: ir::Value,
        join: ir::Block,
    ) -> Result<(), JitError> {
        self.scalar_load_or(ok, p, join, |this| {
            this.helper_into(inst, wj_gang_access as *const (), join)
        })
    }

    /// When `ok`, the word at host address `p` splatted to every lane and a
    /// jump to `join`; else, in a cold block, `otherwise` (which jumps to
    /// `join` with the values itself).
    fn scalar_load_or(
        &mut self,
        ok: ir::Value,
        p: ir::Value,
        join: ir::Block,
        otherwise: impl FnOnce(&mut Self) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        self.b.set_cold_block(slow);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let x = self.b.ins().load(types::I32, guest(), p, 0);
        let v = self.b.ins().splat(types::I32X4, x);
        let args: Vec<ir::BlockArg> = (0..self.g).map(|_| v.into()).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(slow);
        otherwise(self)
    }

    /// A shared word store whose address every lane of the chunk shares:
    /// with every lane of the chunk active the last lane's value is what
    /// memory keeps (lanes store in order, and shared memory is the batch
    /// thread's own), one scalar store; otherwise the helper.
    fn store_same_address(
        &mut self,
        inst: wj::Inst,
        addr_v: wj::Value,
        value: wj::Value,
    ) -> Result<(), JitError> {
        let vals = self.val(value)?;
        let mask = self.mask();
        let all = self.all_active(&mask);
        let (ok, p) = self.same_address(inst, AddrSpace::Shared, addr_v, true)?;
        let ok = self.b.ins().band(ok, all);
        let slow = self.b.create_block();
        let fast = self.b.create_block();
        let join = self.b.create_block();
        self.b.set_cold_block(slow);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let last = *vals.last().ok_or(JitError::Malformed("empty chunk"))?;
        let last = self.i32x4_of(last);
        let x = self.b.ins().extractlane(last, 3);
        self.b.ins().store(guest(), x, p, 0);
        self.store_slow_path(inst, slow, join)
    }

    /// A global word store whose address every lane of the chunk shares
    /// (a workgroup's one result, stored by its first lane): lanes store in
    /// order, so memory keeps the last active lane's value, one scalar
    /// store when the address is good; otherwise the helper, lane by lane.
    fn store_last_lane(
        &mut self,
        inst: wj::Inst,
        addr_v: wj::Value,
        value: wj::Value,
    ) -> Result<(), JitError> {
        let vals = self.val(value)?;
        let mask = self.mask();
        let (ok, p) = self.same_address(inst, AddrSpace::Global, addr_v, true)?;
        // The active lanes as bits (lane k of vector j at bit 4j + k).
        let mut bits = None;
        for (j, &m) in mask.iter().enumerate() {
            let b = self.b.ins().vhigh_bits(types::I32, m);
            let b = if j == 0 {
                b
            } else {
                self.b.ins().ishl_imm_s(b, 4 * j as i64)
            };
            bits = Some(match bits {
                None => b,
                Some(a) => self.b.ins().bor(a, b),
            });
        }
        let bits = bits.ok_or(JitError::Malformed("empty chunk"))?;
        let any = self.b.ins().icmp_imm_s(CC::NotEqual, bits, 0);
        let ok = self.b.ins().band(ok, any);
        let slow = self.b.create_block();
        let fast = self.b.create_block();
        let join = self.b.create_block();
        self.b.set_cold_block(slow);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        // The last active lane's word, through the scratch area.
        let at = self.scratch_at(0);
        for (j, &x) in vals.iter().enumerate() {
            let x = self.i32x4_of(x);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), x, at, 16 * j as i32);
        }
        let lead = self.b.ins().clz(bits);
        let last = self.iconst(types::I32, 31);
        let last = self.b.ins().isub(last, lead);
        let last = self.b.ins().uextend(types::I64, last);
        let offs = self.b.ins().ishl_imm_s(last, 2);
        let q = self.b.ins().iadd(at, offs);
        let x = self.b.ins().load(types::I32, MemFlagsData::trusted(), q, 0);
        self.b.ins().store(guest(), x, p, 0);
        self.store_slow_path(inst, slow, join)
    }

    /// Ends a store's fast path: the slow path stores lane by lane through
    /// the helper (and records its faults), and both continue at `join`.
    fn store_slow_path(
        &mut self,
        inst: wj::Inst,
        slow: ir::Block,
        join: ir::Block,
    ) -> Result<(), JitError> {
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(slow);
        self.cold(|this| this.call_chunk_helper(inst, wj_gang_access as *const ()))?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        Ok(())
    }

    /// Whether every lane of the chunk's `mask` is active (i8).
    fn all_active(&mut self, mask: &[ir::Value]) -> ir::Value {
        let mut all = mask[0];
        for &m in &mask[1..] {
            all = self.b.ins().band(all, m);
        }
        self.b.ins().vall_true(all)
    }

    /// For an address of stride 0: whether it is 4-byte aligned and its
    /// four bytes lie in memory the access may use (i8), and the host address.
    fn same_address(
        &mut self,
        inst: wj::Inst,
        space: AddrSpace,
        addr_v: wj::Value,
        write: bool,
    ) -> Result<(ir::Value, ir::Value), JitError> {
        let (a, cond) = self.chunk_scalar(addr_v)?;
        let a0 = if space == AddrSpace::Global {
            a
        } else {
            self.b.ins().uextend(types::I64, a)
        };
        let low = self.b.ins().band_imm_s(a0, 3);
        let mut ok = self.b.ins().icmp_imm_s(CC::Equal, low, 0);
        if let Some(c) = cond {
            ok = self.b.ins().band(ok, c);
        }
        let four = self.iconst(types::I64, 4);
        let (inside, p) = self.region(inst, space, a0, four, write)?;
        Ok((self.b.ins().band(ok, inside), p))
    }

    /// A quad load: when the chunk's lanes read consecutive 16-byte
    /// quads (lane k at `a0 + 16k`), aligned and inside memory the access may
    /// use, four vector loads per four lanes and a 4x4 transpose give each
    /// component's vectors; otherwise the helper, lane by lane (and its
    /// faults).
    fn load_quad(&mut self, inst: wj::Inst, a: &MemAccess) -> Result<(), JitError> {
        let data = &self.kernel.insts[inst];
        let (addr_v, res) = (data.args[0], data.results.clone());
        let g = self.g;
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let params: Vec<Gv> = (0..4)
            .map(|_| {
                (0..g)
                    .map(|_| self.b.append_block_param(join, types::I32X4))
                    .collect()
            })
            .collect();
        let fast = self.b.create_block();
        self.b.set_cold_block(slow);
        let (ok, p) = self.quad_contiguous(inst, a, addr_v, false)?;
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let mut comps: Vec<Vec<ir::BlockArg>> = vec![Vec::new(); 4];
        for k in 0..g {
            let lanes: Vec<ir::Value> = (0..4)
                .map(|j| {
                    self.b
                        .ins()
                        .load(types::I32X4, guest(), p, 64 * k as i32 + 16 * j)
                })
                .collect();
            for (c, v) in self.transpose4(&lanes).into_iter().enumerate() {
                comps[c].push(v.into());
            }
        }
        let args: Vec<ir::BlockArg> = comps.into_iter().flatten().collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(slow);
        let out = self.cold(|this| this.call_chunk_helper(inst, wj_gang_access as *const ()))?;
        let args: Vec<ir::BlockArg> = out.iter().flatten().map(|&v| v.into()).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        for (&r, gv) in res.iter().zip(params) {
            self.def(r, gv)?;
        }
        Ok(())
    }

    /// A quad store: with every lane of the chunk active (a partial chunk
    /// would need per-lane blends; the helper writes it), and the quads
    /// consecutive as for [`GLower::load_quad`], the transposed components
    /// go out as four vector stores per four lanes.
    fn store_quad(&mut self, inst: wj::Inst, a: &MemAccess) -> Result<(), JitError> {
        let args = self.kernel.insts[inst].args.clone();
        let mut comps = Vec::with_capacity(4);
        for &v in &args[1..5] {
            comps.push(self.val(v)?);
        }
        let mask = self.mask();
        let all = self.all_active(&mask);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let fast = self.b.create_block();
        self.b.set_cold_block(slow);
        let (ok, p) = self.quad_contiguous(inst, a, args[0], true)?;
        let ok = self.b.ins().band(ok, all);
        self.b.ins().brif(ok, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        for k in 0..self.g {
            let cols: Vec<ir::Value> = comps.iter().map(|c| c[k]).collect();
            for (j, v) in self.transpose4(&cols).into_iter().enumerate() {
                self.b
                    .ins()
                    .store(guest(), v, p, 64 * k as i32 + 16 * j as i32);
            }
        }
        self.store_slow_path(inst, slow, join)
    }

    /// The 4x4 transpose of four `I32X4` rows (its own inverse): lane j of
    /// row i becomes lane i of row j.
    fn transpose4(&mut self, rows: &[ir::Value]) -> Vec<ir::Value> {
        let r: Vec<ir::Value> = rows.iter().map(|&v| self.bytes_of(v)).collect();
        let shuf = |this: &mut Self, x: ir::Value, y: ir::Value, lanes: [u8; 4]| {
            let imm = this
                .b
                .func
                .dfg
                .immediates
                .push(word_shuffle(lanes).to_vec().into());
            this.b.ins().shuffle(x, y, imm)
        };
        // Lanes 4..7 of a shuffle are the second operand's 0..3.
        let t0 = shuf(self, r[0], r[1], [0, 4, 1, 5]);
        let t1 = shuf(self, r[2], r[3], [0, 4, 1, 5]);
        let t2 = shuf(self, r[0], r[1], [2, 6, 3, 7]);
        let t3 = shuf(self, r[2], r[3], [2, 6, 3, 7]);
        let out = [
            shuf(self, t0, t1, [0, 1, 4, 5]),
            shuf(self, t0, t1, [2, 3, 6, 7]),
            shuf(self, t2, t3, [0, 1, 4, 5]),
            shuf(self, t2, t3, [2, 3, 6, 7]),
        ];
        out.iter().map(|&v| self.i32x4_of(v)).collect()
    }

    /// Whether the chunk's quad addresses are `a0 + 16k` for every lane k,
    /// aligned as the access requires (and to 4 bytes), with the whole
    /// `16 * chunk` bytes in memory the access may use (i8), and the host
    /// address of `a0`.
    fn quad_contiguous(
        &mut self,
        inst: wj::Inst,
        a: &MemAccess,
        addr_v: wj::Value,
        write: bool,
    ) -> Result<(ir::Value, ir::Value), JitError> {
        let bytes = 16 * chunk_lanes(self.g) as i64;
        let (a0, same) = if self.stride(addr_v) == Some(16) {
            let (x, cond) = self.chunk_scalar(addr_v)?;
            let x = if a.space == AddrSpace::Global {
                x
            } else {
                self.b.ins().uextend(types::I64, x)
            };
            (x, cond)
        } else {
            let addr = self.val(addr_v)?;
            let (x, same) = self.lanes_strided(a.space, &addr, 16)?;
            (x, Some(same))
        };
        let align = i64::from(a.align.max(4)) - 1;
        let low = self.b.ins().band_imm_s(a0, align);
        let aligned = self.b.ins().icmp_imm_s(CC::Equal, low, 0);
        let ok = match same {
            Some(same) => self.b.ins().band(same, aligned),
            None => aligned,
        };
        let bytes = self.iconst(types::I64, bytes);
        let (inside, p) = self.region(inst, a.space, a0, bytes, write)?;
        let ok = self.b.ins().band(ok, inside);
        Ok((ok, p))
    }

    /// Branches to `fast` (its new parameter: the host address of the
    /// chunk's first lane) when the chunk's addresses are `a0 + 4k` for every
    /// lane k, aligned, the whole `4 * chunk` bytes lie in memory the access
    /// may use and `extra` holds; else to `slow`. An affine address of stride
    /// 4 is tested as one scalar (once per wave when the segment has it);
    /// any other is compared lane by lane with `a0 + 4k`.
    #[allow(clippy::too_many_arguments)]
    fn branch_contiguous(
        &mut self,
        inst: wj::Inst,
        space: AddrSpace,
        addr_v: wj::Value,
        write: bool,
        extra: Option<ir::Value>,
        fast: ir::Block,
        slow: ir::Block,
    ) -> Result<ir::Value, JitError> {
        let p = self.b.append_block_param(fast, types::I64);
        let with_extra = |this: &mut Self, ok: ir::Value| match extra {
            Some(e) => this.b.ins().band(ok, e),
            None => ok,
        };
        if let Some(&(okw, hostw)) = self.wave_sites.get(&inst) {
            // Tested for the whole wave at the segment's start; a wave that
            // failed (a cold region cache, a range across regions) still
            // tries chunk by chunk.
            let pw = self.chunk_at(hostw)?;
            let okw = with_extra(self, okw);
            let chk = self.b.create_block();
            self.b.set_cold_block(chk);
            self.b.ins().brif(okw, fast, &[pw.into()], chk, &[]);
            self.b.switch_to_block(chk);
            let (ok_c, p_c) =
                self.cold(|this| this.chunk_contiguous(inst, space, addr_v, write))?;
            let ok_c = with_extra(self, ok_c);
            self.b.ins().brif(ok_c, fast, &[p_c.into()], slow, &[]);
            return Ok(p);
        }
        let (ok, pc) = self.chunk_contiguous(inst, space, addr_v, write)?;
        let ok = with_extra(self, ok);
        self.b.ins().brif(ok, fast, &[pc.into()], slow, &[]);
        Ok(p)
    }

    /// In the whole-chunk loop ([`GLower::whole_chunks`]), the host address
    /// of the chunk's first lane for a word access the wave-level test
    /// covers (that test passed before the loop).
    fn whole_fast_address(&mut self, inst: wj::Inst) -> Result<Option<ir::Value>, JitError> {
        if !self.whole_fast {
            return Ok(None);
        }
        let Some(&(_, hostw)) = self.wave_sites.get(&inst) else {
            return Err(JitError::Malformed(
                "whole-chunk access without a wave test",
            ));
        };
        self.chunk_at(hostw).map(Some)
    }

    /// The host address of the current chunk's first word, from the wave's
    /// first lane's `hostw`.
    fn chunk_at(&mut self, hostw: ir::Value) -> Result<ir::Value, JitError> {
        let c = self.chunk()?.c;
        let c = self.b.ins().uextend(types::I64, c);
        let step = self.b.ins().ishl_imm_s(c, 2);
        Ok(self.b.ins().iadd(hostw, step))
    }

    /// The contiguity test of [`GLower::branch_contiguous`] for the current
    /// chunk alone: the test (i8) and the host address of `a0`.
    fn chunk_contiguous(
        &mut self,
        inst: wj::Inst,
        space: AddrSpace,
        addr_v: wj::Value,
        write: bool,
    ) -> Result<(ir::Value, ir::Value), JitError> {
        let bytes = 4 * chunk_lanes(self.g) as i64;
        let (a0, same) = if self.stride(addr_v) == Some(4) {
            let (a, cond) = self.chunk_scalar(addr_v)?;
            let a0 = if space == AddrSpace::Global {
                a
            } else {
                self.b.ins().uextend(types::I64, a)
            };
            (a0, cond)
        } else {
            let addr = self.val(addr_v)?;
            let (a0, same) = self.lanes_consecutive(space, &addr)?;
            (a0, Some(same))
        };
        let low = self.b.ins().band_imm_s(a0, 3);
        let aligned = self.b.ins().icmp_imm_s(CC::Equal, low, 0);
        let ok = match same {
            Some(same) => self.b.ins().band(same, aligned),
            None => aligned,
        };
        let bytes = self.iconst(types::I64, bytes);
        let (inside, p) = self.region(inst, space, a0, bytes, write)?;
        let ok = self.b.ins().band(ok, inside);
        Ok((ok, p))
    }

    /// Whether `bytes` bytes at `a0` (i64) lie in memory access `inst` may
    /// use (global: the site's cached region, writable for a write; shared:
    /// the workgroup's area), and the host address of `a0`.
    fn region(
        &mut self,
        inst: wj::Inst,
        space: AddrSpace,
        a0: ir::Value,
        bytes: ir::Value,
        write: bool,
    ) -> Result<(ir::Value, ir::Value), JitError> {
        let tr = MemFlagsData::trusted();
        if space == AddrSpace::Global {
            let site = self.plan.gc_site[inst];
            let gc = self.ctx_load(types::I64, off::GC);
            let entry = self.b.ins().iadd_imm_s(gc, i64::from(site) * GC_ENTRY_SIZE);
            let start = self.b.ins().load(types::I64, tr, entry, goff::GC_START);
            let len = self.b.ins().load(types::I64, tr, entry, goff::GC_LEN);
            let offset = self.b.ins().isub(a0, start);
            let inside = self.b.ins().icmp(CC::UnsignedLessThan, offset, len);
            let room = self.b.ins().isub(len, offset);
            let fits = self
                .b
                .ins()
                .icmp(CC::UnsignedGreaterThanOrEqual, room, bytes);
            let mut ok = self.b.ins().band(inside, fits);
            if write {
                let w = self.b.ins().load(types::I64, tr, entry, goff::GC_WRITABLE);
                let w = self.b.ins().icmp_imm_s(CC::NotEqual, w, 0);
                ok = self.b.ins().band(ok, w);
            }
            let host = self.b.ins().load(types::I64, tr, entry, goff::GC_HOST);
            Ok((ok, self.b.ins().iadd(host, offset)))
        } else {
            let size = i64::from(self.kernel.shared_size);
            let end = self.b.ins().iadd(a0, bytes);
            // No wrap, and inside the area.
            let no_wrap = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, end, a0);
            let fits = self
                .b
                .ins()
                .icmp_imm_s(CC::UnsignedLessThanOrEqual, end, size);
            let ok = self.b.ins().band(no_wrap, fits);
            let slot = self.st_load(St::Slot);
            let slot = self.b.ins().uextend(types::I64, slot);
            let offs = self.b.ins().ishl_imm_s(slot, 3);
            let bases = self.ctx_load(types::I64, off::SHARED);
            let pb = self.b.ins().iadd(bases, offs);
            let base = self.b.ins().load(types::I64, tr, pb, 0);
            Ok((ok, self.b.ins().iadd(base, a0)))
        }
    }

    /// The wave-level test of every contiguous word access of `insts` whose
    /// address the segment has as a wave scalar: the address conditions,
    /// alignment, and the wave's whole range (rounded up to whole chunks) in
    /// memory the access may use; with the host address of the wave's first
    /// lane.
    pub(super) fn wave_sites(
        &mut self,
        insts: &[wj::Inst],
    ) -> Result<HashMap<wj::Inst, (ir::Value, ir::Value)>, JitError> {
        let mut out = HashMap::new();
        let mut bytes = None;
        // One test per shared address (its loads and stores share it).
        let mut shared: HashMap<wj::Value, (ir::Value, ir::Value)> = HashMap::new();
        for &i in insts {
            let data = &self.kernel.insts[i];
            let (write, a) = match &data.kind {
                wj::InstKind::Load(a) => (false, a),
                wj::InstKind::Store(a) => (true, a),
                _ => continue,
            };
            let space = a.space;
            let Some(&(aw, cond)) = self.wave_scalars.get(&data.args[0]) else {
                continue;
            };
            if space == AddrSpace::Shared
                && let Some(&t) = shared.get(&data.args[0])
            {
                out.insert(i, t);
                continue;
            }
            let bytes = match bytes {
                Some(b) => b,
                None => {
                    let n = self.span_lanes();
                    let n = self.b.ins().uextend(types::I64, n);
                    let l = chunk_lanes(self.g) as i64;
                    let n = self.b.ins().iadd_imm_s(n, l - 1);
                    let n = self.b.ins().band_imm_s(n, -l);
                    *bytes.insert(self.b.ins().ishl_imm_s(n, 2))
                }
            };
            let a0 = if space == AddrSpace::Global {
                aw
            } else {
                self.b.ins().uextend(types::I64, aw)
            };
            let low = self.b.ins().band_imm_s(a0, 3);
            let aligned = self.b.ins().icmp_imm_s(CC::Equal, low, 0);
            let (inside, host) = self.region(i, space, a0, bytes, write)?;
            let mut ok = self.b.ins().band(aligned, inside);
            if let Some(c) = cond {
                ok = self.b.ins().band(ok, c);
            }
            if space == AddrSpace::Shared {
                shared.insert(data.args[0], (ok, host));
            }
            out.insert(i, (ok, host));
        }
        Ok(out)
    }
    /// Lane 0's address (i64) and whether every lane's is `a0 + 4k` (i8).
    fn lanes_consecutive(
        &mut self,
        space: AddrSpace,
        addr: &[ir::Value],
    ) -> Result<(ir::Value, ir::Value), JitError> {
        self.lanes_strided(space, addr, 4)
    }

    /// Lane 0's address (i64) and whether every lane's is `a0 + stride * k`
    /// (i8).
    fn lanes_strided(
        &mut self,
        space: AddrSpace,
        addr: &[ir::Value],
        stride: u64,
    ) -> Result<(ir::Value, ir::Value), JitError> {
        let mut same = None;
        let a0;
        if space == AddrSpace::Global {
            let first = self.i64x2_of(addr[0]);
            a0 = self.b.ins().extractlane(first, 0);
            let base = self.b.ins().splat(types::I64X2, a0);
            for (k, &v) in addr.iter().enumerate() {
                let lane = 2 * k as u64;
                let step = self.vconst_i64([stride * lane, stride * (lane + 1)]);
                let want = self.b.ins().iadd(base, step);
                let v = self.i64x2_of(v);
                let eq = self.b.ins().icmp(CC::Equal, v, want);
                let eq = self.i32x4_of(eq);
                same = Some(match same {
                    None => eq,
                    Some(s) => self.b.ins().band(s, eq),
                });
            }
        } else {
            let first = self.i32x4_of(addr[0]);
            let a32 = self.b.ins().extractlane(first, 0);
            a0 = self.b.ins().uextend(types::I64, a32);
            let base = self.b.ins().splat(types::I32X4, a32);
            for (k, &v) in addr.iter().enumerate() {
                let s = stride as u32;
                let l = 4 * k as u32;
                let step = self.vconst_i32([s * l, s * (l + 1), s * (l + 2), s * (l + 3)]);
                let want = self.b.ins().iadd(base, step);
                let v = self.i32x4_of(v);
                let eq = self.b.ins().icmp(CC::Equal, v, want);
                same = Some(match same {
                    None => eq,
                    Some(s) => self.b.ins().band(s, eq),
                });
            }
        }
        let same = same.ok_or(JitError::Malformed("empty chunk"))?;
        Ok((a0, self.b.ins().vall_true(same)))
    }

    /// Loads the 32- and 64-bit uniform words at constant offsets among
    /// `insts` once, as splatted vectors the chunks of the loop that follows
    /// use (`GLower::hoisted`); returns whether they all lie inside the
    /// uniforms (when not, the caller takes the per-chunk path, which faults
    /// the lanes at the right instruction).
    pub(super) fn hoist_uniforms(&mut self, insts: &[wj::Inst]) -> Result<ir::Value, JitError> {
        let mut fits = self.iconst(types::I8, 1);
        let flushed = super::inst::flushed_operands(self.kernel, insts);
        for &i in insts {
            let data = &self.kernel.insts[i];
            let wj::InstKind::Load(a) = &data.kind else {
                continue;
            };
            let [res] = data.results[..] else { continue };
            let ty = self.kernel.value_type(res);
            let Some(offset) = crate::plan::const_bits(self.kernel, data.args[0]) else {
                continue;
            };
            if a.space != AddrSpace::Uniform
                || a.count != 1
                || !matches!(a.bits, 32 | 64)
                || ty == Type::I1
                || u32::from(a.bits) != ty.bits()
                || !offset.is_multiple_of(u64::from(a.align.max(1)))
                || offset >= 1 << 31
            {
                continue;
            }
            let len = self.ctx_load(types::I64, off::UNIFORMS_LEN);
            let end = offset as i64 + i64::from(a.bits / 8);
            let ok = self
                .b
                .ins()
                .icmp_imm_u(CC::UnsignedGreaterThanOrEqual, len, end);
            fits = self.b.ins().band(fits, ok);
            // Out of range the context's first word is read instead; the
            // value is then never used.
            let base = self.ctx_load(types::I64, off::UNIFORMS);
            let at = self.b.ins().iadd_imm_s(base, offset as i64);
            let p = self.b.ins().select(ok, at, self.ctx);
            let (st, vt) = if a.bits == 64 {
                (types::I64, types::I64X2)
            } else {
                (types::I32, types::I32X4)
            };
            let x = self.b.ins().load(st, MemFlagsData::trusted(), p, 0);
            let v = self.b.ins().splat(vt, x);
            self.hoisted.insert(i, v);
            if flushed.contains(&res) {
                // Flushed once here rather than in every chunk.
                let f = self.flush(&[v]);
                self.hoisted_flushed.insert(res, f[0]);
            }
        }
        Ok(fits)
    }

    /// A uniform load at a constant offset: one scalar read for the chunk,
    /// the helper (which faults the lanes) when it is out of range.
    fn uniform_load(
        &mut self,
        inst: wj::Inst,
        a: &MemAccess,
        offset: u64,
        res: wj::Value,
    ) -> Result<(), JitError> {
        let size = u64::from(a.total_bytes());
        let len = self.ctx_load(types::I64, off::UNIFORMS_LEN);
        let fits =
            self.b
                .ins()
                .icmp_imm_u(CC::UnsignedGreaterThanOrEqual, len, (offset + size) as i64);
        let ty = self.kernel.value_type(res);
        let w = super::super::helpers::wide(ty);
        let vt = if w { types::I64X2 } else { types::I32X4 };
        let fast = self.b.create_block();
        let slow = self.b.create_block();
        let join = self.b.create_block();
        // One vector for the whole value: out of range, the helper faults
        // every active lane (the address is the same for all), so the value
        // is never read.
        let param = self.b.append_block_param(join, vt);
        self.b.set_cold_block(slow);
        self.b.ins().brif(fits, fast, &[], slow, &[]);
        self.b.switch_to_block(fast);
        let base = self.ctx_load(types::I64, off::UNIFORMS);
        let st = if w { types::I64 } else { types::I32 };
        let raw = match a.bits {
            8 => types::I8,
            16 => types::I16,
            32 => types::I32,
            _ => types::I64,
        };
        let x = self.b.ins().load(raw, guest(), base, offset as i32);
        let x = if raw == st {
            x
        } else if a.signed {
            let x = self.b.ins().sextend(st, x);
            let m = ty.mask() as i64;
            self.b.ins().band_imm_s(x, m)
        } else {
            self.b.ins().uextend(st, x)
        };
        let x = if ty == Type::I1 {
            let b = self.b.ins().band_imm_s(x, 1);
            let z = self.b.ins().icmp_imm_s(CC::NotEqual, b, 0);
            let z = self.b.ins().sextend(types::I32, z);
            self.b.ins().splat(types::I32X4, z)
        } else {
            self.b.ins().splat(vt, x)
        };
        self.b.ins().jump(join, &[x.into()]);
        self.b.switch_to_block(slow);
        self.cold(|this| this.call_chunk_helper(inst, wj_gang_access as *const ()))?;
        let zero = if w {
            let z = self.iconst(types::I64, 0);
            self.b.ins().splat(types::I64X2, z)
        } else {
            let z = self.iconst(types::I32, 0);
            self.b.ins().splat(types::I32X4, z)
        };
        self.b.ins().jump(join, &[zero.into()]);
        self.b.switch_to_block(join);
        let g = vec![param; self.vecs(ty)];
        self.def(res, g)
    }
}
