//! Loads, stores and atomics with the interpreter's checks: alignment to
//! `MemAccess.align` (atomics: their width) first, then the whole range. A refused
//! access records a fault; the Rust side derives its exact cause.

use cranelift_codegen::ir::{
    self, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, condcodes::IntCC as CC, types,
};
use wavejit_ir::{AddrSpace, AtomicOp, Inst, InstKind, MemAccess, Type};

use super::{Helper, Lower, cl_ty};
use crate::abi::{GC_ENTRY_SIZE, off};
use crate::error::JitError;
#[cfg(not(target_arch = "x86_64"))]
use crate::helpers::wj_global_ptr;
use crate::helpers::{atomic_code, wj_global_atomic, wj_rmw};
use crate::plan::const_bits;

/// Guest memory: checked by us, so it never traps, but it may be misaligned.
fn guest() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

fn int_of_bits(bits: u32) -> ir::Type {
    match bits {
        8 => types::I8,
        16 => types::I16,
        32 => types::I32,
        _ => types::I64,
    }
}

impl Lower<'_, '_> {
    /// The access address as the space reads it: i64 for global, the zero-extended
    /// 32-bit offset otherwise.
    fn space_addr(&mut self, space: AddrSpace, raw: ir::Value) -> ir::Value {
        if space == AddrSpace::Global {
            raw
        } else {
            self.b.ins().uextend(types::I64, raw)
        }
    }

    /// Checks alignment and range of `size` bytes at `addr` in `space` and returns
    /// the host address; records a fault for `inst` otherwise. `known` is the
    /// address when it is a constant. Alignment and range fail to the same
    /// fault record (the Rust side tells them apart), so one test covers both.
    #[allow(clippy::too_many_arguments)]
    fn checked_ptr(
        &mut self,
        inst: Inst,
        space: AddrSpace,
        addr: ir::Value,
        known: Option<u64>,
        align: u32,
        size: u32,
        write: bool,
    ) -> Result<ir::Value, JitError> {
        let code = inst.as_u32();
        let misaligned = |this: &mut Self| -> Option<ir::Value> {
            if align <= 1 || known.is_some_and(|a| a.is_multiple_of(u64::from(align))) {
                return None;
            }
            let low = this.b.ins().band_imm_s(addr, i64::from(align - 1));
            Some(this.b.ins().icmp_imm_s(CC::NotEqual, low, 0))
        };
        let rec = self.lc()?.rec;
        let tr = MemFlagsData::trusted();
        let size64 = i64::from(size);
        let local =
            |this: &mut Self, len: ir::Value, base: ir::Value| -> Result<ir::Value, JitError> {
                // addr < 2^32 and size <= 32, so addr + size cannot wrap.
                let end = this.b.ins().iadd_imm_s(addr, size64);
                let mut bad = this.b.ins().icmp(CC::UnsignedGreaterThan, end, len);
                if let Some(m) = misaligned(this) {
                    bad = this.b.ins().bor(bad, m);
                }
                this.fault_if(bad, code, addr)?;
                Ok(this.b.ins().iadd(base, addr))
            };
        match space {
            AddrSpace::Shared | AddrSpace::Private => {
                let (len, field) = if space == AddrSpace::Shared {
                    (self.kernel.shared_size, off::SHARED)
                } else {
                    (self.kernel.private_size, off::PRIVATE)
                };
                let len = self.iconst(types::I64, i64::from(len));
                let base = self.b.ins().load(types::I64, tr, rec, field);
                local(self, len, base)
            }
            AddrSpace::Uniform => {
                let len = self
                    .b
                    .ins()
                    .load(types::I64, tr, self.batch, off::UNIFORMS_LEN);
                let base = self.b.ins().load(types::I64, tr, self.batch, off::UNIFORMS);
                local(self, len, base)
            }
            AddrSpace::Global => {
                let bad_align = misaligned(self);
                self.global_ptr(code, addr, bad_align, size64, write)
            }
        }
    }

    /// Global memory: the batch's cached region inline, the helper on a miss
    /// (or a misaligned address, which then faults).
    fn global_ptr(
        &mut self,
        code: u32,
        addr: ir::Value,
        misaligned: Option<ir::Value>,
        size: i64,
        write: bool,
    ) -> Result<ir::Value, JitError> {
        let tr = MemFlagsData::trusted();
        let site = self.plan.gc_site[Inst::from_u32(code)];
        let gc = self.b.ins().load(types::I64, tr, self.batch, off::GC);
        let entry = self.b.ins().iadd_imm_s(gc, i64::from(site) * GC_ENTRY_SIZE);
        let start = self.b.ins().load(types::I64, tr, entry, off::GC_START);
        let len = self.b.ins().load(types::I64, tr, entry, off::GC_LEN);
        let offset = self.b.ins().isub(addr, start);
        let inside = self.b.ins().icmp(CC::UnsignedLessThan, offset, len);
        let room = self.b.ins().isub(len, offset);
        let fits = self
            .b
            .ins()
            .icmp_imm_s(CC::UnsignedGreaterThanOrEqual, room, size);
        let mut ok = self.b.ins().band(inside, fits);
        if write {
            let w = self.b.ins().load(types::I64, tr, entry, off::GC_WRITABLE);
            let w = self.b.ins().icmp_imm_s(CC::NotEqual, w, 0);
            ok = self.b.ins().band(ok, w);
        }
        if let Some(m) = misaligned {
            let aligned = self.b.ins().bxor_imm_s(m, 1);
            ok = self.b.ins().band(ok, aligned);
        }
        let host = self.b.ins().load(types::I64, tr, entry, off::GC_HOST);
        let hp = self.b.ins().iadd(host, offset);
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let p = self.b.append_block_param(join, types::I64);
        self.b.set_cold_block(slow);
        self.b.ins().brif(ok, join, &[hp.into()], slow, &[]);
        self.b.switch_to_block(slow);
        let len = self.iconst(types::I64, size);
        let w = self.iconst(types::I32, i64::from(write));
        let site = self.iconst(types::I32, i64::from(site));
        let sp = self.call_global_ptr([self.batch, addr, len, w, site]);
        let mut bad = self.b.ins().icmp_imm_s(CC::Equal, sp, 0);
        if let Some(m) = misaligned {
            bad = self.b.ins().bor(bad, m);
        }
        self.fault_if(bad, code, addr)?;
        self.b.ins().jump(join, &[sp.into()]);
        self.b.switch_to_block(join);
        Ok(p)
    }

    /// `helpers::wj_global_ptr(batch, addr, len, write, site)`, through
    /// [`crate::preserving`] where it exists.
    fn call_global_ptr(&mut self, args: [ir::Value; 5]) -> ir::Value {
        #[cfg(target_arch = "x86_64")]
        {
            let base = self.b.ins().stack_addr(types::I64, self.scratch, 0);
            for (k, &a) in args.iter().enumerate() {
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), a, base, (k * 8) as i32);
            }
            let helper = crate::helpers::wj_global_ptr_mem as *const () as i64;
            let helper = self.iconst(types::I64, helper);
            let f = crate::preserving::wj_call_preserving as *const () as i64;
            let f = self.iconst(types::I64, f);
            let sig = self.sig(Helper::Preserving);
            self.b.ins().call_indirect(sig, f, &[base, helper]);
            self.b
                .ins()
                .load(types::I64, MemFlagsData::trusted(), base, 0)
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let f = self.iconst(types::I64, wj_global_ptr as *const () as i64);
            let sig = self.sig(Helper::GlobalPtr);
            let call = self.b.ins().call_indirect(sig, f, &args);
            self.b.inst_results(call)[0]
        }
    }

    /// Reads the run's scalar uniform loads at constant, aligned offsets once,
    /// before its lane loop (every lane reads the same bits) into a stack slot
    /// ([`Lower::hoisted`]). Out of range, the read goes to the batch context
    /// instead and the lanes fault at the load.
    pub(super) fn hoist_uniform_loads(&mut self, insts: &[Inst]) {
        self.hoisted.clear();
        let tr = MemFlagsData::trusted();
        for &inst in insts {
            let data = &self.kernel.insts[inst];
            let InstKind::Load(a) = &data.kind else {
                continue;
            };
            let Some(off) = data.args.first().and_then(|&v| const_bits(self.kernel, v)) else {
                continue;
            };
            let size = a.total_bytes();
            if a.space != AddrSpace::Uniform
                || data.results.len() != 1
                || size > 8
                || !off.is_multiple_of(u64::from(a.align.max(1)))
            {
                continue;
            }
            let len = self
                .b
                .ins()
                .load(types::I64, tr, self.batch, off::UNIFORMS_LEN);
            let base = self.b.ins().load(types::I64, tr, self.batch, off::UNIFORMS);
            let end = self.iconst(types::I64, (off + u64::from(size)) as i64);
            let fits = self.b.ins().icmp(CC::UnsignedLessThanOrEqual, end, len);
            let p = self.b.ins().iadd_imm_s(base, off as i64);
            let p = self.b.ins().select(fits, p, self.batch);
            let x = self.load_elem(a, p, 0);
            let bad = self.b.ins().bxor_imm_s(fits, 1);
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                16,
                3,
            ));
            self.b.ins().stack_store(types::I64, x, slot, 0);
            self.b.ins().stack_store(types::I64, bad, slot, 8);
            self.hoisted.insert(inst, slot);
        }
    }

    /// Element `k`'s bits at host address `p` (narrow types extended).
    fn load_elem(&mut self, a: &MemAccess, p: ir::Value, offset: i32) -> ir::Value {
        let (ct, bits) = (cl_ty(a.ty), u32::from(a.bits));
        if bits == ct.bits() {
            self.b.ins().load(ct, guest(), p, offset)
        } else {
            let narrow = self.b.ins().load(int_of_bits(bits), guest(), p, offset);
            if a.signed {
                self.b.ins().sextend(ct, narrow)
            } else {
                self.b.ins().uextend(ct, narrow)
            }
        }
    }

    pub(super) fn load(&mut self, inst: Inst, a: &MemAccess) -> Result<(), JitError> {
        if let Some(&slot) = self.hoisted.get(&inst) {
            let data = &self.kernel.insts[inst];
            let (raw, res) = (data.args[0], data.results[0]);
            let raw = self.val(raw)?;
            let addr = self.space_addr(a.space, raw);
            let bad = self.b.ins().stack_load(types::I64, types::I8, slot, 8);
            self.fault_if(bad, inst.as_u32(), addr)?;
            let x = self.b.ins().stack_load(types::I64, cl_ty(a.ty), slot, 0);
            return self.def(res, x);
        }
        let data = &self.kernel.insts[inst];
        let (raw_v, results) = (data.args[0], data.results.clone());
        let raw = self.val(raw_v)?;
        let addr = self.space_addr(a.space, raw);
        let known = const_bits(self.kernel, raw_v);
        let p = self.checked_ptr(inst, a.space, addr, known, a.align, a.total_bytes(), false)?;
        let eb = a.elem_bytes() as i32;
        for (k, &r) in results.iter().enumerate() {
            let x = self.load_elem(a, p, eb * k as i32);
            self.def(r, x)?;
        }
        Ok(())
    }

    pub(super) fn store(&mut self, inst: Inst, a: &MemAccess) -> Result<(), JitError> {
        let args = self.kernel.insts[inst].args.clone();
        let raw = self.val(args[0])?;
        let mut vals = Vec::with_capacity(args.len() - 1);
        for &v in &args[1..] {
            vals.push(self.val(v)?);
        }
        let addr = self.space_addr(a.space, raw);
        let known = const_bits(self.kernel, args[0]);
        let p = self.checked_ptr(inst, a.space, addr, known, a.align, a.total_bytes(), true)?;
        let eb = a.elem_bytes() as i32;
        let (ct, bits) = (cl_ty(a.ty), u32::from(a.bits));
        for (k, x) in vals.into_iter().enumerate() {
            let x = if bits < ct.bits() {
                self.b.ins().ireduce(int_of_bits(bits), x)
            } else {
                x
            };
            self.b.ins().store(guest(), x, p, eb * k as i32);
        }
        Ok(())
    }

    pub(super) fn atomic(
        &mut self,
        inst: Inst,
        space: AddrSpace,
        op: AtomicOp,
        ty: Type,
    ) -> Result<(), JitError> {
        let data = &self.kernel.insts[inst];
        let (args, res) = (data.args.clone(), data.results[0]);
        let raw = self.val(args[0])?;
        let a = self.val(args[1])?;
        let a = self.zext64(a);
        let b = if args.len() > 2 {
            let b = self.val(args[2])?;
            self.zext64(b)
        } else {
            self.iconst(types::I64, 0)
        };
        let bytes = ty.bytes();
        let ct = cl_ty(ty);
        let addr = self.space_addr(space, raw);
        let opc = self.iconst(types::I32, i64::from(atomic_code(op)));
        let nbytes = self.iconst(types::I32, i64::from(bytes));
        let old = if space == AddrSpace::Global {
            let low = self.b.ins().band_imm_s(addr, i64::from(bytes - 1));
            let bad = self.b.ins().icmp_imm_s(CC::NotEqual, low, 0);
            self.fault_if(bad, inst.as_u32(), addr)?;
            let out = self.b.ins().stack_addr(types::I64, self.scratch, 0);
            let f = self.iconst(types::I64, wj_global_atomic as *const () as i64);
            let host = self.batch_ptr(off::HOST);
            let sig = self.sig(Helper::GlobalAtomic);
            let call = self
                .b
                .ins()
                .call_indirect(sig, f, &[host, addr, nbytes, opc, a, b, out]);
            let ok = self.b.inst_results(call)[0];
            let bad = self.b.ins().icmp_imm_s(CC::Equal, ok, 0);
            self.fault_if(bad, inst.as_u32(), addr)?;
            self.b.ins().load(ct, MemFlagsData::trusted(), out, 0)
        } else {
            // Shared memory belongs to this batch alone: a plain read-modify-write.
            let known = const_bits(self.kernel, args[0]);
            let p = self.checked_ptr(inst, space, addr, known, bytes, bytes, true)?;
            let old = self.b.ins().load(ct, guest(), p, 0);
            let old64 = self.zext64(old);
            let f = self.iconst(types::I64, wj_rmw as *const () as i64);
            let sig = self.sig(Helper::Rmw);
            let call = self
                .b
                .ins()
                .call_indirect(sig, f, &[opc, nbytes, old64, a, b]);
            let new = self.b.inst_results(call)[0];
            let new = if ct == types::I64 {
                new
            } else {
                self.b.ins().ireduce(ct, new)
            };
            self.b.ins().store(guest(), new, p, 0);
            old
        };
        self.def(res, old)
    }
}
