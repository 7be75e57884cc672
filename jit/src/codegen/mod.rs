//! Lowering of a planned kernel to one Cranelift function.
//!
//! `fn(ctx, seg, list, n, limit) -> faulted` jumps to segment `seg` and runs each
//! of its runs as a loop over the listed lanes (vector runs: [`vector`], 16 lanes
//! per iteration). Inside a run a lane's values are SSA values; values that other
//! runs read go through the register slab.

pub(crate) mod float;
mod int;
mod lane_loop;
mod mem;
mod term;
mod vector;

use std::collections::HashMap;
use std::sync::Mutex;

use cranelift_codegen::ir::{
    self, AbiParam, InstBuilder, MemFlagsData, Signature, StackSlotData, StackSlotKind,
    UserFuncName, types,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use wavejit_ir::{self as wj, Kernel, Type};

use crate::Tier;
use crate::abi::{KernelFn, off};
use crate::error::JitError;
use crate::helpers::{PURE_MAX_ARGS, PURE_MAX_RESULTS};
use crate::plan::Plan;

/// Owns a finalized module's machine code and frees it when dropped.
pub(crate) struct CodeOwner {
    module: Mutex<Option<JITModule>>,
}

impl CodeOwner {
    pub(crate) fn new(module: JITModule) -> CodeOwner {
        CodeOwner {
            module: Mutex::new(Some(module)),
        }
    }
}

impl Drop for CodeOwner {
    fn drop(&mut self) {
        if let Ok(mut m) = self.module.lock()
            && let Some(module) = m.take()
        {
            // SAFETY: the code is only called through function pointers held
            // next to this owner (behind an `Arc`), and none is left when it drops.
            unsafe { module.free_memory() };
        }
    }
}

/// Machine code of one kernel specialisation; frees it when dropped.
pub struct CompiledCode {
    _owner: CodeOwner,
    pub func: KernelFn,
    /// Bytes of executable memory the code occupies (whole pages: Cranelift's
    /// system memory provider maps each module's code page-rounded).
    pub bytes: usize,
}

/// `code` bytes rounded up to whole pages, as Cranelift maps them.
pub(crate) fn code_pages(code: usize) -> usize {
    const PAGE: usize = 4096;
    code.div_ceil(PAGE).max(1) * PAGE
}

/// The Cranelift type holding an IR type's bits (`i1` as 0/1 in `i8`, floats as
/// integers of their width).
pub fn cl_ty(t: Type) -> ir::Type {
    match t.bits() {
        1 | 8 => types::I8,
        16 => types::I16,
        32 => types::I32,
        _ => types::I64,
    }
}

type Isa = std::sync::Arc<dyn cranelift_codegen::isa::TargetIsa>;

/// The host ISA for `tier`, built once per process: detecting the CPU and
/// building the flags is a fixed cost per compile that dominates small kernels.
pub(crate) fn isa(tier: Tier) -> Result<Isa, JitError> {
    static ISA: [std::sync::OnceLock<Result<Isa, String>>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    ISA[tier as usize]
        .get_or_init(|| host_isa(tier))
        .clone()
        .map_err(JitError::Cranelift)
}

fn host_isa(tier: Tier) -> Result<Isa, String> {
    let mut f = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v).map_err(|e| format!("setting {k}={v}: {e}"))
    };
    set(&mut f, "is_pic", "false")?;
    set(&mut f, "use_colocated_libcalls", "false")?;
    // The issue asks for "speed"; "none" measured better on both counts with
    // this lowering (jit/tests/bench_profile, same load, 2 runs each):
    // compile 30/258/1026-op kernels 0.50/0.65/0.50 vs 0.67/0.85/0.57 ms per
    // 100 ops; run ALU 10.3 vs 19.8 ms (speed hoists and shares the vector
    // constants into long live ranges that spill), saxpy 48 vs 49 ms. The
    // lowering itself does the folding that matters (constant shift amounts
    // and addresses, uniform loads hoisted, NaN rules off the fast path).
    set(&mut f, "opt_level", "none")?;
    // Register allocation is most of a compile. The single-pass allocator
    // halves compile time (30/258/1026 ops: 0.16/0.78/2.4 ms vs
    // 0.25/1.8/5.4 ms) and its code runs ALU/saxpy about 1.5x slower
    // (jit/tests/bench_profile): the right trade until a kernel has run long
    // enough for the difference to pay for a second compile.
    let regalloc = match tier {
        Tier::Baseline => "single_pass",
        Tier::Optimized => "backtracking",
    };
    set(&mut f, "regalloc_algorithm", regalloc)?;
    set(
        &mut f,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    let builder = cranelift_native::builder().map_err(|e| e.to_string())?;
    builder
        .finish(settings::Flags::new(f))
        .map_err(|e| e.to_string())
}

/// Compiles `kernel` cut by `plan` for batches of `lanes` lanes.
pub fn compile(
    kernel: &Kernel,
    plan: &Plan,
    lanes: usize,
    tier: Tier,
) -> Result<CompiledCode, JitError> {
    // Slab offsets are 32-bit immediates.
    lanes
        .checked_mul(8)
        .and_then(|s| s.checked_mul(kernel.values.len().max(1)))
        .filter(|&s| s < i32::MAX as usize)
        .ok_or(JitError::TooLarge {
            values: kernel.values.len(),
            lanes,
        })?;
    let isa = isa(tier)?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    for t in [ptr, types::I32, ptr, types::I32, types::I32] {
        sig.params.push(AbiParam::new(t));
    }
    sig.returns.push(AbiParam::new(types::I32));
    let id = module
        .declare_function("wavejit_kernel", Linkage::Export, &sig)
        .map_err(|e| JitError::Cranelift(e.to_string()))?;
    let mut reuse = Contexts::take();
    let Contexts { ctx, fctx } = &mut *reuse;
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    {
        let b = FunctionBuilder::new(&mut ctx.func, fctx);
        Lower::build(b, kernel, plan, lanes, module.target_config())?;
    }
    // `WAVEJIT_JIT_DUMP=1` prints the Cranelift IR and the generated machine
    // code (for profiling).
    static DUMP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let dump = *DUMP.get_or_init(|| std::env::var_os("WAVEJIT_JIT_DUMP").is_some());
    ctx.set_disasm(dump);
    if dump {
        eprintln!("{}", ctx.func.display());
    }
    module
        .define_function(id, ctx)
        .map_err(|e| JitError::Cranelift(format!("{e:?}")))?;
    if dump && let Some(code) = ctx.compiled_code() {
        eprintln!("{}", code.vcode.as_deref().unwrap_or(""));
    }
    let bytes = code_pages(ctx.compiled_code().map_or(0, |c| c.code_buffer().len()));
    module.clear_context(ctx);
    reuse.give_back();
    module
        .finalize_definitions()
        .map_err(|e| JitError::Cranelift(e.to_string()))?;
    let code = module.get_finalized_function(id);
    // SAFETY: the function was declared with exactly `KernelFn`'s signature.
    let func = unsafe { std::mem::transmute::<*const u8, KernelFn>(code) };
    Ok(CompiledCode {
        _owner: CodeOwner::new(module),
        func,
        bytes,
    })
}

/// The segment (and its pc) that starts where segment `k`'s block jumps
/// unconditionally (`None` for other terminators, or when that pc is a sync
/// position).
fn jump_target_segment(kernel: &Kernel, plan: &Plan, k: usize) -> Option<(u32, u32)> {
    let block = plan.segments.get(k)?.block;
    let Some(wj::Terminator::Jump(call)) = &kernel.blocks.get(block)?.term else {
        return None;
    };
    let pc = plan.block_pc[call.block];
    match plan.kind(pc) {
        crate::plan::PcKind::Segment(s) => Some((s, pc)),
        _ => None,
    }
}

/// Cranelift's per-function working memory (IR, CFG, dominator tree, the
/// register allocator's tables), kept per thread between compiles: building
/// it afresh costs allocator traffic on every compile, and Cranelift's
/// `Context` is meant to be reused.
pub(crate) struct Contexts {
    pub(crate) ctx: cranelift_codegen::Context,
    pub(crate) fctx: FunctionBuilderContext,
}

thread_local! {
    static CONTEXTS: std::cell::Cell<Option<Box<Contexts>>> = const { std::cell::Cell::new(None) };
}

impl Contexts {
    /// This thread's contexts (fresh ones when none are kept, e.g. when an
    /// earlier compile returned an error before giving them back).
    pub(crate) fn take() -> Box<Contexts> {
        CONTEXTS.take().unwrap_or_else(|| {
            Box::new(Contexts {
                ctx: cranelift_codegen::Context::new(),
                fctx: FunctionBuilderContext::new(),
            })
        })
    }

    /// Keeps the contexts (cleared) for this thread's next compile.
    pub(crate) fn give_back(self: Box<Self>) {
        CONTEXTS.set(Some(self));
    }
}

/// The host helpers compiled code calls (`crate::helpers`).
#[derive(Copy, Clone)]
pub(crate) enum Helper {
    Pure,
    /// Called directly where [`Helper::Preserving`] does not exist.
    #[cfg(not(target_arch = "x86_64"))]
    GlobalPtr,
    GlobalAtomic,
    Rmw,
    VectorExact,
    /// `preserving::wj_call_preserving(args, helper)`: clobbers nothing.
    #[cfg(target_arch = "x86_64")]
    Preserving,
}

impl Helper {
    const COUNT: usize = 6;

    /// Parameter and result types of the helper's signature.
    fn types(self) -> (&'static [ir::Type], Option<ir::Type>) {
        use types::{I32, I64};
        match self {
            Helper::Pure => (&[I64, I32, I64, I64], Some(I32)),
            #[cfg(not(target_arch = "x86_64"))]
            Helper::GlobalPtr => (&[I64, I64, I64, I32, I32], Some(I64)),
            Helper::GlobalAtomic => (&[I64, I64, I32, I32, I64, I64, I64], Some(I32)),
            Helper::Rmw => (&[I32, I32, I64, I64, I64], Some(I64)),
            Helper::VectorExact => (&[I64, I32, I32, I64, I32, I32, I32, I64, I64], Some(I32)),
            #[cfg(target_arch = "x86_64")]
            Helper::Preserving => (&[I64, I64], None),
        }
    }
}

/// Signatures of the host helpers, imported on first use: Cranelift lays out
/// the arguments of every imported signature, used or not.
struct Sigs {
    call_conv: cranelift_codegen::isa::CallConv,
    imported: [Option<ir::SigRef>; Helper::COUNT],
}

/// The per-lane loop currently being emitted.
struct LaneCtx {
    /// Address of the lane's `LaneRec`.
    rec: ir::Value,
    /// Address of the lane's slot of value 0 in the slab.
    regs: ir::Value,
    /// Where a lane goes when it is done with the run (fault, exit).
    latch: ir::Block,
}

pub(crate) struct Lower<'a, 'b> {
    b: FunctionBuilder<'b>,
    kernel: &'a Kernel,
    plan: &'a Plan,
    /// Bytes between the slots of consecutive values (lanes * 8).
    stride: i64,
    /// Holds the `list` and `n` parameters (see [`Lower::list`]).
    params: ir::StackSlot,
    batch: ir::Value,
    /// Stack slot of the return value: 1 once a lane faulted. A slot rather
    /// than an SSA variable: the variable put a block parameter on every join
    /// after a fault path (slower register allocation, no faster code).
    faulted: ir::StackSlot,
    scratch: ir::StackSlot,
    sigs: Sigs,
    lc: Option<LaneCtx>,
    /// IR values available as SSA values in the current run (for the current lane).
    env: HashMap<wj::Value, ir::Value>,
    /// Uniform loads at constant offsets read once before the current run's
    /// lane loop, by stack slot: the value at 0 (read elsewhere when out of
    /// range), 1 at 8 when out of range. In a slot rather than SSA values live
    /// through the loop: those were spilled around the cold helper calls anyway
    /// and cost register allocation time.
    hoisted: HashMap<wj::Inst, ir::StackSlot>,
    /// While emitting a [`crate::plan::Segment::self_loop`].
    looping: Option<SelfLoop>,
}

/// The per-lane loop of a [`crate::plan::Segment::self_loop`] being emitted.
#[derive(Copy, Clone)]
struct SelfLoop {
    block: wj::Block,
    /// Where back edges jump; its parameters are the block's parameters, then
    /// the lane's step count (kept in a register while the lane loops).
    top: ir::Block,
    steps: ir::Value,
    /// The dispatch's step limit.
    limit: ir::Value,
}

impl<'a, 'b> Lower<'a, 'b> {
    fn build(
        mut b: FunctionBuilder<'b>,
        kernel: &'a Kernel,
        plan: &'a Plan,
        lanes: usize,
        cfg: cranelift_codegen::isa::TargetFrontendConfig,
    ) -> Result<(), JitError> {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let [batch, seg, list, n, limit] = params[..] else {
            return Err(JitError::Cranelift("kernel function parameters".into()));
        };
        let params_slot =
            b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 3));
        b.ins().stack_store(types::I64, list, params_slot, 0);
        b.ins().stack_store(types::I64, n, params_slot, 8);
        let faulted =
            b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 4, 2));
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().stack_store(types::I64, zero, faulted, 0);
        let scratch = b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            ((PURE_MAX_ARGS + PURE_MAX_RESULTS) * 8) as u32,
            3,
        ));
        let sigs = Sigs {
            call_conv: cfg.default_call_conv,
            imported: [None; Helper::COUNT],
        };
        let ret = b.create_block();
        // One dispatch on the segment number, for the entry and for chaining
        // (a table per pc would add a block per table entry).
        let dispatch = b.create_block();
        let seg_param = b.append_block_param(dispatch, types::I32);
        b.ins().jump(dispatch, &[seg.into()]);
        b.switch_to_block(dispatch);
        let seg_blocks: Vec<ir::Block> = plan.segments.iter().map(|_| b.create_block()).collect();
        let calls: Vec<ir::BlockCall> = seg_blocks
            .iter()
            .map(|&blk| b.func.dfg.block_call(blk, &[]))
            .collect();
        let default = b.func.dfg.block_call(ret, &[]);
        let jt = b.create_jump_table(ir::JumpTableData::new(default, &calls));
        b.ins().br_table(seg_param, jt);

        let mut lower = Lower {
            b,
            kernel,
            plan,
            stride: lanes as i64 * 8,
            params: params_slot,
            batch,
            faulted,
            scratch,
            sigs,
            lc: None,
            env: HashMap::new(),
            hoisted: HashMap::new(),
            looping: None,
        };
        // Chaining needs a block edge: when every terminator exits, lanes
        // leaving a segment's terminator are done.
        let edges = kernel
            .blocks
            .values()
            .any(|b| !matches!(b.term, Some(wj::Terminator::Exit)));
        let cont = lower.b.create_block();
        for (k, &blk) in seg_blocks.iter().enumerate() {
            lower.b.switch_to_block(blk);
            lower.segment(k)?;
            let ends_with_term = plan.segments[k].next_pc.is_none();
            if let Some((s, pc)) = jump_target_segment(kernel, plan, k).filter(|_| ends_with_term) {
                lower.jump_on(pc, seg_blocks[s as usize], limit, cont)?;
                continue;
            }
            let next = if edges && ends_with_term { cont } else { ret };
            lower.b.ins().jump(next, &[]);
        }
        lower.b.switch_to_block(cont);
        if edges {
            lower.chain(dispatch, limit, ret)?;
        } else {
            lower.b.ins().jump(ret, &[]);
        }
        lower.b.switch_to_block(ret);
        let f = lower.b.ins().stack_load(types::I64, types::I32, faulted, 0);
        lower.b.ins().return_(&[f]);
        lower.b.seal_all_blocks();
        lower.b.finalize(cfg);
        Ok(())
    }

    fn segment(&mut self, k: usize) -> Result<(), JitError> {
        let seg = &self.plan.segments[k];
        let mut may_have_faulted = false;
        let last = seg.runs.len().saturating_sub(1);
        for (r, run) in seg.runs.iter().enumerate() {
            let check = run.guarded && may_have_faulted;
            let end_pc = if r == last { seg.next_pc } else { None };
            if run.vector {
                self.vector_run(k, r, run)?;
            } else {
                self.run(seg.block, run, check, end_pc, seg.self_loop)?;
            }
            may_have_faulted |= run.guarded;
        }
        Ok(())
    }

    /// The `list` parameter. It and the other pointers every lane loop needs
    /// are read where used rather than kept in registers: live through the
    /// whole function and across the helper calls of the cold paths, they made
    /// register allocation most of the compile time (and were spilled anyway).
    fn list(&mut self) -> ir::Value {
        self.b
            .ins()
            .stack_load(types::I64, types::I64, self.params, 0)
    }

    /// The `n` parameter: how many lanes `list` holds.
    fn n(&mut self) -> ir::Value {
        self.b
            .ins()
            .stack_load(types::I64, types::I32, self.params, 8)
    }

    /// A pointer field of the batch context (`abi::off`).
    fn batch_ptr(&mut self, field: i32) -> ir::Value {
        self.b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), self.batch, field)
    }

    /// The signature of helper `h` (imported on first use).
    fn sig(&mut self, h: Helper) -> ir::SigRef {
        if let Some(s) = self.sigs.imported[h as usize] {
            return s;
        }
        let (params, ret) = h.types();
        #[cfg(target_arch = "x86_64")]
        let conv = match h {
            Helper::Preserving => cranelift_codegen::isa::CallConv::PreserveAll,
            _ => self.sigs.call_conv,
        };
        #[cfg(not(target_arch = "x86_64"))]
        let conv = self.sigs.call_conv;
        let mut sig = Signature::new(conv);
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns.extend(ret.map(AbiParam::new));
        let s = self.b.import_signature(sig);
        self.sigs.imported[h as usize] = Some(s);
        s
    }

    /// Lane slot address offset of IR value `v`.
    fn slot(&self, v: wj::Value) -> i32 {
        (v.as_u32() as i64 * self.stride) as i32
    }

    fn lc(&self) -> Result<&LaneCtx, JitError> {
        self.lc
            .as_ref()
            .ok_or_else(|| JitError::Cranelift("no lane loop".into()))
    }

    /// The SSA value of IR value `v` for the current lane.
    fn val(&mut self, v: wj::Value) -> Result<ir::Value, JitError> {
        if let Some(&x) = self.env.get(&v) {
            return Ok(x);
        }
        let ty = self
            .kernel
            .values
            .get(v)
            .ok_or(JitError::Malformed("unknown value"))?
            .ty;
        let regs = self.lc()?.regs;
        let off = self.slot(v);
        let x = self
            .b
            .ins()
            .load(cl_ty(ty), MemFlagsData::trusted(), regs, off);
        self.env.insert(v, x);
        Ok(x)
    }

    /// Defines IR value `v` for the current lane (and writes it to the slab if
    /// other runs read it).
    fn def(&mut self, v: wj::Value, x: ir::Value) -> Result<(), JitError> {
        self.env.insert(v, x);
        if self.plan.spill[v] {
            let regs = self.lc()?.regs;
            let off = self.slot(v);
            self.b.ins().store(MemFlagsData::trusted(), x, regs, off);
        }
        Ok(())
    }

    /// A constant of `ty` from raw bits (masked to the width, as Cranelift wants).
    fn iconst(&mut self, ty: ir::Type, v: i64) -> ir::Value {
        let bits = ty.bits();
        let v = if bits < 64 {
            v & ((1i64 << bits) - 1)
        } else {
            v
        };
        self.b.ins().iconst(ty, v)
    }

    /// Records a fault of the current lane at instruction `inst` (or a watchdog
    /// code) with `addr`, then leaves the run for this lane.
    fn fault(&mut self, code: u32, addr: ir::Value) -> Result<(), JitError> {
        let (rec, latch) = {
            let lc = self.lc()?;
            (lc.rec, lc.latch)
        };
        let c = self.iconst(types::I32, i64::from(code as i32));
        let tr = MemFlagsData::trusted();
        self.b.ins().store(tr, c, rec, crate::abi::off::FAULT);
        self.b
            .ins()
            .store(tr, addr, rec, crate::abi::off::FAULT_ADDR);
        let one = self.iconst(types::I32, 1);
        self.b.ins().stack_store(types::I64, one, self.faulted, 0);
        self.b.ins().jump(latch, &[]);
        Ok(())
    }

    /// Branches to a fresh cold block that records a fault when `bad` is nonzero;
    /// continues in a fresh block otherwise.
    fn fault_if(&mut self, bad: ir::Value, code: u32, addr: ir::Value) -> Result<(), JitError> {
        let slow = self.b.create_block();
        let cont = self.b.create_block();
        self.b.set_cold_block(slow);
        self.b.ins().brif(bad, slow, &[], cont, &[]);
        self.b.switch_to_block(slow);
        self.fault(code, addr)?;
        self.b.switch_to_block(cont);
        Ok(())
    }

    /// Calls `semantics::eval_pure` for instruction `inst` of the current lane
    /// and defines its results.
    fn call_pure(&mut self, inst: wj::Inst) -> Result<(), JitError> {
        let results = self.kernel.insts[inst].results.clone();
        let values = self.pure_results(inst)?;
        for (r, x) in results.into_iter().zip(values) {
            self.def(r, x)?;
        }
        Ok(())
    }

    /// The results of `semantics::eval_pure` for instruction `inst` of the
    /// current lane (a failed evaluation faults the lane).
    fn pure_results(&mut self, inst: wj::Inst) -> Result<Vec<ir::Value>, JitError> {
        let data = &self.kernel.insts[inst];
        if data.args.len() > PURE_MAX_ARGS || data.results.len() > PURE_MAX_RESULTS {
            return Err(JitError::Malformed("too many operands"));
        }
        let (args, results) = (data.args.clone(), data.results.clone());
        let base = self.b.ins().stack_addr(types::I64, self.scratch, 0);
        for (k, &a) in args.iter().enumerate() {
            let x = self.val(a)?;
            let x = self.zext64(x);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), x, base, (k * 8) as i32);
        }
        let out = self
            .b
            .ins()
            .stack_addr(types::I64, self.scratch, (PURE_MAX_ARGS * 8) as i32);
        let f = self.iconst(types::I64, crate::helpers::wj_pure as *const () as i64);
        let host = self.batch_ptr(off::HOST);
        let code = self.iconst(types::I32, inst.as_u32() as i64);
        let sig = self.sig(Helper::Pure);
        let call = self.b.ins().call_indirect(sig, f, &[host, code, base, out]);
        let ok = self.b.inst_results(call)[0];
        let bad = self.b.ins().icmp_imm_s(ir::condcodes::IntCC::Equal, ok, 0);
        let zero = self.iconst(types::I64, 0);
        self.fault_if(bad, inst.as_u32(), zero)?;
        let mut values = Vec::with_capacity(results.len());
        for (k, &r) in results.iter().enumerate() {
            let ty = cl_ty(self.kernel.values[r].ty);
            let x = self
                .b
                .ins()
                .load(ty, MemFlagsData::trusted(), out, (k * 8) as i32);
            values.push(x);
        }
        Ok(values)
    }

    /// After a segment ending in an unconditional jump to the segment at `pc`
    /// (Cranelift block `target`): when no lane faulted, every listed lane is
    /// at that pc, so the scan of [`Lower::chain`] is not needed, only its
    /// `limit` test.
    fn jump_on(
        &mut self,
        pc: u32,
        target: ir::Block,
        limit: ir::Value,
        otherwise: ir::Block,
    ) -> Result<(), JitError> {
        use cranelift_codegen::ir::condcodes::IntCC;
        let f = self
            .b
            .ins()
            .stack_load(types::I64, types::I32, self.faulted, 0);
        let clean = self.b.ins().icmp_imm_s(IntCC::Equal, f, 0);
        let start = self.iconst(types::I32, i64::from(pc as i32));
        let below = self.b.ins().icmp(IntCC::UnsignedLessThan, start, limit);
        let go = self.b.ins().band(clean, below);
        self.b.ins().brif(go, target, &[], otherwise, &[]);
        Ok(())
    }

    /// After a terminator: when every listed lane is alive and at the same pc,
    /// that pc is a segment start, and it stays below `limit` (the lowest pc of
    /// the other runnable lanes of the listed waves), it is the next co-active
    /// set of each wave, so run that segment at once instead of returning.
    fn chain(
        &mut self,
        dispatch: ir::Block,
        limit: ir::Value,
        ret: ir::Block,
    ) -> Result<(), JitError> {
        use cranelift_codegen::ir::condcodes::IntCC;
        let tr = MemFlagsData::trusted();
        let rec_of = |this: &mut Self, i: ir::Value| {
            let i64v = this.b.ins().uextend(types::I64, i);
            let off = this.b.ins().ishl_imm_s(i64v, 2);
            let list = this.list();
            let p = this.b.ins().iadd(list, off);
            let lane = this.b.ins().load(types::I32, tr, p, 0);
            let lane = this.b.ins().uextend(types::I64, lane);
            let roff = this.b.ins().imul_imm_s(lane, crate::abi::LANE_SIZE);
            let lanes = this.batch_ptr(off::LANES);
            this.b.ins().iadd(lanes, roff)
        };
        let zero = self.iconst(types::I32, 0);
        let rec0 = rec_of(self, zero);
        let pc0 = self.b.ins().load(types::I32, tr, rec0, off::PC);
        let high = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, pc0, limit);
        let scan = self.b.create_block();
        self.b.ins().brif(high, ret, &[], scan, &[]);
        self.b.switch_to_block(scan);
        let header = self.b.create_block();
        let body = self.b.create_block();
        let go = self.b.create_block();
        let i = self.b.append_block_param(header, types::I32);
        self.b.ins().jump(header, &[zero.into()]);
        self.b.switch_to_block(header);
        let n = self.n();
        let done = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i, n);
        self.b.ins().brif(done, go, &[], body, &[]);
        self.b.switch_to_block(body);
        let rec = rec_of(self, i);
        let pc = self.b.ins().load(types::I32, tr, rec, off::PC);
        let fault = self.b.ins().load(types::I32, tr, rec, off::FAULT);
        let other_pc = self.b.ins().icmp(IntCC::NotEqual, pc, pc0);
        let faulted = self.b.ins().icmp_imm_s(
            IntCC::NotEqual,
            fault,
            i64::from(crate::abi::NO_FAULT as i32),
        );
        let stop = self.b.ins().bor(other_pc, faulted);
        let next_i = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().brif(stop, ret, &[], header, &[next_i.into()]);
        self.b.switch_to_block(go);
        // The segment starting at pc0 (`u32::MAX` for a sync position: the
        // dispatch's default returns).
        let table = self
            .b
            .ins()
            .load(types::I64, tr, self.batch, off::SEG_OF_PC);
        let pcs = self.plan.kinds.len() as i64;
        let known = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, pc0, pcs);
        let look = self.b.create_block();
        self.b.ins().brif(known, look, &[], ret, &[]);
        self.b.switch_to_block(look);
        let pc64 = self.b.ins().uextend(types::I64, pc0);
        let off = self.b.ins().ishl_imm_s(pc64, 2);
        let p = self.b.ins().iadd(table, off);
        let seg = self.b.ins().load(types::I32, tr, p, 0);
        self.b.ins().jump(dispatch, &[seg.into()]);
        Ok(())
    }

    /// Zero-extends an integer SSA value to i64.
    fn zext64(&mut self, x: ir::Value) -> ir::Value {
        if self.b.func.dfg.value_type(x) == types::I64 {
            x
        } else {
            self.b.ins().uextend(types::I64, x)
        }
    }
}
