//! The SIMD execution core: lanes in gangs of vector registers end to end.
//!
//! A kernel compiles to one function that runs a whole round of a batch (every
//! live workgroup slot, every wave, each until none of its lanes is
//! runnable) with the scheduler inside: per-lane pcs live in an array that the
//! code reads four lanes at a time, the lowest pc of a wave picks the segment,
//! and the lanes at it form the execution mask. Segments run chunk by chunk
//! (`4 * g` lanes: `g` `I32X4`/`F32X4` vectors per value; `plan::Run`s keep the
//! interpreter's memory order), so uniform and divergent branches, loops and
//! reconvergence never leave compiled code, and a barrier only parks lanes
//! until the round ends, when the same function releases them and starts the
//! next round: a batch is one call.
//!
//! Exactness: the schedule is the interpreter's (waves in order, lowest pc
//! first, a run's instructions for the co-active lanes in lane order as far as
//! other lanes can tell), and everything not inlined runs through helpers that
//! call the interpreter's own definitions. The chunk width `g` changes speed
//! and compile time only.

pub(crate) mod abi;
pub(crate) mod helpers;
pub(crate) mod host;
mod lower;

use cranelift_codegen::ir::{AbiParam, UserFuncName, types};
use cranelift_frontend::FunctionBuilder;
use cranelift_jit::{ArenaMemoryProvider, JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use wavejit_ir::{Dispatch, Kernel};

use crate::Tier;
use crate::codegen::{CodeOwner, Contexts, isa};
use crate::error::JitError;
use crate::plan::Plan;
use abi::GangFn;

/// Machine code of a kernel for the gang core.
pub struct GangCode {
    _owner: CodeOwner,
    pub(crate) func: GangFn,
    /// Lanes per chunk.
    pub(crate) chunk: usize,
    /// Scheduler entry of every linear pc.
    pub(crate) entry_of_pc: Vec<u32>,
    /// Most steps any lane can take, when bounded
    /// (`wavejit_ir::analysis::step_bound`: acyclic, or loops whose
    /// induction variable bounds them).
    step_bound: Option<u64>,
    /// Compiled in lockstep (epoch by epoch, no scheduler; `lower::lockstep`).
    lockstep: bool,
    /// The hardware flush a batch runs with (`lower::kernel_hw_flush`: 0
    /// none, 1 DAZ, 2 DAZ and FTZ).
    pub(crate) hw_flush: u32,
}

/// Vectors per chunk at `tier`: one at the baseline tier (a quarter of the
/// code to compile), four when optimized (independent vectors hide the
/// latency of dependency chains).
pub fn vectors_for(tier: Tier) -> usize {
    match tier {
        Tier::Baseline => 1,
        Tier::Optimized => 4,
    }
}

impl GangCode {
    /// Whether the kernel runs in lockstep: barrier interval by barrier
    /// interval over the workgroup's chunks, with nothing scheduled.
    pub fn lockstep(&self) -> bool {
        self.lockstep
    }

    /// Whether `dispatch` can run on this code: its step limit fits the
    /// 32-bit per-lane counters, or no lane can take enough steps to reach
    /// the limit the counters are clamped to (an acyclic kernel, e.g. an
    /// RV32 kernel, whose lifter dispatches with an unlimited step count),
    /// so the clamp changes no fault.
    pub fn takes(&self, dispatch: &Dispatch) -> bool {
        let clamp = u64::from(u32::MAX - 1);
        dispatch.step_limit < clamp || self.step_bound.is_some_and(|b| b <= clamp)
    }
}

/// `WAVEJIT_JIT_DUMP` is set: the CLIF and machine code go to stderr.
fn dump_enabled() -> bool {
    static DUMP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *DUMP.get_or_init(|| std::env::var_os("WAVEJIT_JIT_DUMP").is_some())
}

/// Defines `fn(helper, a0, .., a{n-1})` that calls the System V `helper`
/// with the `n` arguments and clobbers no register: the gang function calls
/// its helpers (all on cold or rare paths) through it, so vectors held in
/// registers across a helper call stay there instead of living in spill
/// slots around the whole loop (every xmm register is caller-saved in
/// System V). Arguments are i64; a helper's i32 parameters read the low half.
fn trampoline(
    module: &mut JITModule,
    ctx: &mut cranelift_codegen::Context,
    fctx: &mut cranelift_frontend::FunctionBuilderContext,
    n: usize,
) -> Result<cranelift_module::FuncId, JitError> {
    use cranelift_codegen::ir::InstBuilder;
    use cranelift_codegen::isa::CallConv;
    let mut sig = module.make_signature();
    sig.call_conv = CallConv::PreserveAll;
    sig.params
        .extend((0..=n).map(|_| AbiParam::new(types::I64)));
    let id = module
        .declare_function(&format!("wavejit_gang_helper{n}"), Linkage::Local, &sig)
        .map_err(|e| JitError::Cranelift(e.to_string()))?;
    let cfg = module.target_config();
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(1, id.as_u32());
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let params = b.block_params(entry).to_vec();
        let mut inner = module.make_signature();
        inner
            .params
            .extend((0..n).map(|_| AbiParam::new(types::I64)));
        let inner = b.import_signature(inner);
        b.ins().call_indirect(inner, params[0], &params[1..]);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(cfg);
    }
    ctx.set_disasm(dump_enabled());
    let r = module.define_function(id, ctx);
    if dump_enabled()
        && let Some(code) = ctx.compiled_code()
    {
        eprintln!(
            "; helper trampoline\n{}",
            code.vcode.as_deref().unwrap_or("")
        );
    }
    module.clear_context(ctx);
    r.map_err(|e| JitError::Cranelift(format!("{e:?}")))?;
    Ok(id)
}

/// Address space reserved for a kernel's code (only what the code uses is
/// committed): about 60 bytes per IR instruction is typical, a few KiB the
/// most seen, so 16 KiB each plus 1 MiB leaves ample room.
fn code_reservation(kernel: &Kernel) -> usize {
    const MAX: usize = 1 << 30;
    kernel
        .insts
        .len()
        .saturating_mul(16 << 10)
        .saturating_add(1 << 20)
        .min(MAX)
}

/// Compiles `kernel` cut by `plan` for batches of `lanes` lanes, `g` vectors per chunk.
pub fn compile(
    kernel: &Kernel,
    plan: &Plan,
    lanes: usize,
    g: usize,
    tier: Tier,
) -> Result<GangCode, JitError> {
    // Slab offsets are 32-bit immediates.
    lanes
        .checked_add(abi::PAD)
        .and_then(|l| l.checked_mul(8))
        .and_then(|s| s.checked_mul(kernel.values.len().max(1)))
        .filter(|&s| s < i32::MAX as usize)
        .ok_or(JitError::TooLarge {
            values: kernel.values.len(),
            lanes,
        })?;
    if !matches!(g, 1 | 2 | 4) {
        return Err(JitError::Malformed(
            "gang vectors per chunk must be 1, 2 or 4",
        ));
    }
    let isa = isa(tier)?;
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    // The kernel calls its trampolines with 32-bit relative calls: all of the
    // module's code in one reservation keeps them in range wherever the host
    // maps memory (separate mappings landed > 2 GiB apart under torch).
    let arena = ArenaMemoryProvider::new_with_size(code_reservation(kernel))
        .map_err(|e| JitError::Cranelift(format!("reserving code memory: {e}")))?;
    builder.memory_provider(Box::new(arena));
    let mut module = JITModule::new(builder);
    let ptr = module.target_config().pointer_type();
    let mut sig = module.make_signature();
    sig.params.push(AbiParam::new(ptr));
    sig.returns.push(AbiParam::new(types::I32));
    let id = module
        .declare_function("wavejit_gang", Linkage::Export, &sig)
        .map_err(|e| JitError::Cranelift(e.to_string()))?;
    let mut reuse = Contexts::take();
    let Contexts { ctx, fctx } = &mut *reuse;
    let tramps = trampoline(&mut module, ctx, fctx, 4)
        .and_then(|t4| Ok([t4, trampoline(&mut module, ctx, fctx, 5)?]));
    let [t4, t5] = match tramps {
        Ok(t) => t,
        Err(e) => {
            reuse.give_back();
            return Err(e);
        }
    };
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    let step_bound = wavejit_ir::analysis::step_bound(kernel);
    let lockstep = {
        let tramps = [t4, t5].map(|t| module.declare_func_in_func(t, &mut ctx.func));
        let b = FunctionBuilder::new(&mut ctx.func, fctx);
        let target = module.target_config();
        lower::GLower::build(b, kernel, plan, lanes, g, target, tramps, step_bound)?
    };
    let dump = dump_enabled();
    ctx.set_disasm(dump);
    if dump {
        eprintln!("{}", ctx.func.display());
    }
    let defined = module.define_function(id, ctx);
    if dump && let Some(code) = ctx.compiled_code() {
        eprintln!("{}", code.vcode.as_deref().unwrap_or(""));
        if let Ok(path) = std::env::var("WAVEJIT_JIT_DUMP_BIN") {
            // Machine code for `objdump -D -b binary -mi386:x86-64`.
            let _ = std::fs::write(path, code.code_buffer());
        }
    }
    module.clear_context(ctx);
    reuse.give_back();
    defined.map_err(|e| JitError::Cranelift(format!("{e:?}")))?;
    module
        .finalize_definitions()
        .map_err(|e| JitError::Cranelift(e.to_string()))?;
    let code = module.get_finalized_function(id);
    // SAFETY: the function was declared with exactly `GangFn`'s signature.
    let func = unsafe { std::mem::transmute::<*const u8, GangFn>(code) };
    let (entry_of_pc, _) = lower::entries(plan);
    Ok(GangCode {
        _owner: CodeOwner::new(module),
        func,
        chunk: lower::chunk_lanes(g),
        entry_of_pc,
        step_bound,
        lockstep,
        hw_flush: lower::kernel_hw_flush(kernel),
    })
}
