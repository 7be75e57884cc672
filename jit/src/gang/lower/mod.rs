//! Lowering of a planned kernel to one gang function `fn(ctx) -> faulted`.
//!
//! The function holds the whole schedule of a round: for every live slot, for
//! every wave, it finds the wave's lowest runnable pc (a vector `umin` over the
//! wave's pcs), and dispatches on it. A segment runs each of its runs as a loop
//! over the wave's *chunks* (`4 * g` lanes as `g` `I32X4` vectors, 64-bit values
//! as `2 * g` `I64X2`), under the chunk's execution mask `pc == lowest`;
//! values stay in vector registers inside a run, values other runs read go to
//! the slab with a masked write. A barrier parks the lanes at it (`pc |
//! PARKED`); a cross-lane instruction runs through a helper for the wave. Then
//! the scheduler looks again, so loops, divergent branches and reconvergence
//! all follow the lowest-pc-first rule without leaving compiled code.

mod affine;
mod fuse;
mod inst;
mod lockstep;
mod mem;
mod self_loop;
mod term;

use std::collections::{HashMap, HashSet};

use cranelift_codegen::ir::{
    self, AbiParam, ConstantData, InstBuilder, MemFlagsData, Signature, StackSlotData,
    StackSlotKind, condcodes::IntCC as CC, types,
};
use cranelift_frontend::FunctionBuilder;
use wavejit_ir::{self as wj, InstKind, Kernel, Type};

use super::abi::{PARKED, PC_DEAD, WAVE_DONE, WAVE_LANES, off};
use super::helpers::wide;
use crate::error::JitError;
use crate::helpers::{PURE_MAX_ARGS, PURE_MAX_RESULTS};
use crate::plan::{PcKind, Plan, Run, is_sync};

/// A value of the current chunk: `g` `I32X4` vectors, or `2 * g` `I64X2` for
/// 64-bit types (`i1` as all-ones/zero lanes, floats as their bits).
pub(super) type Gv = Vec<ir::Value>;

/// The host helpers gang code calls (`gang::helpers`).
#[derive(Copy, Clone)]
pub(super) enum Helper {
    /// `(ctx, inst, lane0, mask, buf) -> bad`: `wj_gang_pure`, `wj_gang_access`.
    Chunk,
    /// `(ctx, lane0, mask, block)`: `wj_gang_watchdog`.
    Watchdog,
    /// `(ctx, inst, base, n, pc)`: `wj_gang_wave`.
    Wave,
    /// `(ctx, seg, run, lane0, mask)`: `wj_gang_redo`.
    Redo,
    /// `(flush)`: `wj_float_env`.
    FloatEnv,
}

/// Scheduler state kept in a stack slot (read where needed rather than held
/// in registers across the whole function).
#[derive(Copy, Clone)]
#[repr(i32)]
enum St {
    Slot = 0,
    Lo = 4,
    Base = 8,
    N = 12,
    Pc = 16,
    /// The successor pc every lane of the wave took in the current segment
    /// ([`UNI_START`] before its first chunk, [`UNI_NONE`] if lanes differ or
    /// some lane of the wave did not run the segment).
    Uni = 20,
    /// Nonzero once parked lanes were released (a later round).
    Round = 24,
    /// Nonzero when every lane of the wave is at [`St::Pc`] (the first round's
    /// first visit, or a uniform successor): a segment's first run then needs
    /// no pc reads for its mask while no lane of the batch has faulted.
    Conv = 28,
    /// Nonzero while the "wave" is the whole slot ([`GLower::slot_wide_kernel`]).
    Wide = 32,
    /// The wave's index in the batch (its word of `wave_state`).
    Wix = 36,
    /// Nonzero once a lane parked on its own this round (a wave that was not
    /// converged): the release then scans the pc array.
    LanePark = 40,
    /// The successor pc every active lane took in the current segment (as
    /// [`St::Uni`], but over the segment's active lanes only).
    Agree = 44,
    /// A pc every live lane of the wave that is not at [`St::Pc`] is at, or
    /// [`UNI_NONE`]: while the wave's lanes are in two groups (a divergent
    /// branch taken by a converged wave) the next pc is one of the two, and
    /// the groups join without a look at the pc array.
    Pend = 48,
    /// Steps every lane of a converged wave took that its `steps` entries
    /// do not hold yet (counted once per edge instead of per lane).
    Defer = 52,
    /// The largest `steps` entry of the converged wave's lanes, or
    /// [`STEPS_UNKNOWN`] (looked up when needed).
    MaxSteps = 56,
    /// Nonzero while the current segment counts its edge in [`St::Defer`].
    Deferring = 60,
    /// Nonzero from a slot's first visit until its pcs are written: a
    /// slot-wide kernel writes them only when the slot does not run as one
    /// fused loop (see [`GLower::deferred_pcs`]).
    Fresh = 64,
}

/// Bytes of the [`St`] slot.
const ST_BYTES: u32 = 80;
/// [`St::MaxSteps`] not known.
const STEPS_UNKNOWN: u32 = u32::MAX;

const UNI_START: u32 = u32::MAX - 1;
const UNI_NONE: u32 = u32::MAX;
/// Every lane of the wave ran the segment and exited (no pc is this large).
pub(super) const UNI_EXIT: u32 = u32::MAX - 2;

/// The chunk being emitted.
pub(super) struct Chunk {
    /// First batch lane of the chunk (i64).
    lane0: ir::Value,
    /// Chunk offset in the wave (i32).
    c: ir::Value,
    /// Every lane of the chunk that exists is active (i8), when tracked.
    full: Option<ir::Value>,
    /// A converged wave's chunk has all its lanes (i8: not the wave's
    /// partial last chunk).
    whole: Option<ir::Value>,
}

pub(crate) struct GLower<'a, 'b> {
    b: FunctionBuilder<'b>,
    kernel: &'a Kernel,
    plan: &'a Plan,
    /// `I32X4` vectors per chunk.
    g: usize,
    /// Lanes per batch.
    lanes: usize,
    ctx: ir::Value,
    state: ir::StackSlot,
    scratch: ir::StackSlot,
    /// The chunk's execution mask, a word per lane (all ones: active): in a
    /// slot rather than SSA values, so helpers that fault lanes clear them in
    /// place and no cold path needs a join for the mask.
    mask_slot: ir::StackSlot,
    sigs: [Option<ir::SigRef>; 5],
    call_conv: cranelift_codegen::isa::CallConv,
    /// The register-preserving trampolines for helpers of 4 and 5 arguments.
    tramps: [ir::FuncRef; 2],
    ch: Option<Chunk>,
    env: HashMap<wj::Value, Gv>,
    /// Splatted constants of the current chunk body, by (bits, wide).
    consts: HashMap<(i64, bool), ir::Value>,
    /// Per vector of the chunk, the lanes whose run must be redone exactly
    /// before its terminator (host NaN payloads, flush-before-rounding edges).
    redo: Vec<Option<ir::Value>>,
    /// Results of the current run that need no NaN note of their own.
    unnoted: std::collections::HashSet<wj::Value>,
    /// The current run writes private memory, so it cannot be redone (a
    /// private load before the store would read the stored value): float
    /// results that need the exact rule get it per instruction.
    no_redo: bool,
    /// Integer values computed from builtins, constants and uniform loads
    /// only: a run that reads one computed elsewhere computes it again (a few
    /// vector ops) instead of loading it from the slab.
    remat: HashSet<wj::Value>,
    /// Values helpers read from the slab (operands of cross-lane
    /// instructions, and of runs a redo may repeat): always written there.
    slab_read: HashSet<wj::Value>,
    /// Emitting a recomputation (its results stay out of the slab).
    rematerializing: bool,
    /// The stride of every affine integer value (`affine`).
    strides: HashMap<wj::Value, i64>,
    /// Affine values of the current chunk as scalars at its first lane.
    senv: HashMap<wj::Value, affine::Scalar>,
    /// While a fused segment is emitted: its values no other run reads.
    fused_internal: HashSet<wj::Value>,
    /// The current segment's contiguous addresses at its wave's first lane
    /// (with their conditions over the whole wave).
    wave_scalars: HashMap<wj::Value, affine::Scalar>,
    /// The current segment's wave-level memory tests (`mem::wave_sites`).
    wave_sites: HashMap<wj::Inst, (ir::Value, ir::Value)>,
    /// Values computed where first read ([`lazy_values`]).
    lazy: HashSet<wj::Value>,
    /// Emitting a chunk loop for a converged wave ([`St::Conv`]): masks
    /// from the wave's size alone.
    converged: bool,
    /// The current chunk's mask as values that dominate the code being
    /// emitted; `None` once a helper may have cleared lanes in the slot.
    mask_cache: Option<Gv>,
    /// The kernel has a barrier (lanes' pcs are read again in later rounds).
    barriers: bool,
    /// Emitting an exit nobody reads the pcs of afterwards (see `fused_body`).
    quiet_exit: bool,
    /// Uniform loads made once before the current chunk loop.
    hoisted: HashMap<wj::Inst, ir::Value>,
    /// Those of them an f32 operation reads flushed, flushed (by the
    /// load's result).
    hoisted_flushed: HashMap<wj::Value, ir::Value>,
    /// The kernel is one fused segment that exits (see [`GLower::slot_wide_kernel`]).
    slot_wide: bool,
    /// The scheduler's next-slot block.
    slot_next: Option<ir::Block>,
    /// The chunk's mask when it started (or its self-loop iteration did): a
    /// superset of the lanes still active, as values.
    chunk_mask: Option<Gv>,
    /// The chunk's step counters while it iterates a self-loop
    /// (`iterate_chunk`), written back when it leaves.
    loop_steps: Option<Gv>,
    /// The self-loop whose state the current chunk holds in registers.
    held: Option<self_loop::HeldLoop>,
    /// The scheduler's dispatch on a pc (`fn(pc)`), for segments that know
    /// the wave's next pc without looking.
    dispatch_at: Option<ir::Block>,
    /// The segment being emitted may defer its steps ([`St::Deferring`]).
    defers: bool,
    /// The kernel has edges (lanes count steps) and the tier defers a
    /// converged wave's steps (optimized only: the state and its flushes
    /// cost compile time): nothing of [`St::Defer`] is emitted otherwise.
    may_defer: bool,
    /// The kernel runs in lockstep ([`lockstep`]): its state.
    ls: Option<Box<lockstep::Lockstep>>,
    /// While lockstep runs only the chunks below a lane (i32): the end of
    /// what the wave-level memory tests cover.
    span_end: Option<ir::Value>,
    /// Emitting the whole-chunk loop ([`GLower::whole_chunks`]): every lane
    /// of the chunk active, every word access inside its wave-level test.
    whole_fast: bool,
    /// Emitting a whole-chunk loop that runs with the hardware flush on
    /// (`wavejit_ir::host_float_env`): f32 arithmetic on `varying` values leaves the flushes
    /// to it.
    hw_flush: inst::HwFlush,
    /// The hardware flush the whole function runs with ([`kernel_hw_flush`]).
    kernel_hw: inst::HwFlush,
    /// In a whole-chunk loop: where it leaves, and the chunk's offset. A
    /// chunk whose float rules ask for the exact redo before it wrote memory
    /// leaves for the general loop, which redoes it: the loop then has no
    /// call, and keeps its values in registers.
    whole_leave: Option<(ir::Block, ir::Value)>,
    /// Helper calls emitted since the current chunk's code began (a store
    /// of a whole chunk needs no fault test when none can have run).
    calls_in_chunk: u32,
    /// Values of the run being emitted that are computed from the chunk's
    /// own loads, so the code computing them stays inside the loop.
    varying: std::collections::HashSet<wj::Value>,
}

/// Values left for their first reader to compute: they cannot fault, every
/// reader computes them again rather than loading them from the slab
/// (`GLower::val`), and they only feed memory addresses (directly or through
/// other such values). An affine address then never needs its vectors
/// unless the exact path runs; values that feed arithmetic stay where the
/// kernel computes them, interleaved with the rest (a chain computed late
/// runs after, not beside, the other work).
fn lazy_values(
    kernel: &Kernel,
    plan: &Plan,
    remat: &HashSet<wj::Value>,
    slab_read: &HashSet<wj::Value>,
) -> HashSet<wj::Value> {
    let mut lazy: HashSet<wj::Value> = kernel
        .insts
        .values()
        .filter(|d| !matches!(d.kind, InstKind::Load(_)))
        .filter_map(|d| match d.results[..] {
            [r] if remat.contains(&r) && !(plan.spill[r] && slab_read.contains(&r)) => Some(r),
            _ => None,
        })
        .collect();
    for b in kernel.blocks.values() {
        if let Some(t) = &b.term {
            for v in t.uses() {
                lazy.remove(&v);
            }
        }
    }
    // Users before their operands (the arena's order puts definitions first
    // in straight-line code), removing in place: one pass settles a chain,
    // where rebuilding the set per pass took a pass per link.
    loop {
        let mut changed = false;
        for data in kernel.insts.values().rev() {
            let feeds_lazy = matches!(data.results[..], [r] if lazy.contains(&r));
            if feeds_lazy {
                continue;
            }
            for (k, a) in data.args.iter().enumerate() {
                let address = k == 0
                    && matches!(
                        data.kind,
                        InstKind::Load(_) | InstKind::Store(_) | InstKind::Atomic { .. }
                    );
                if !address {
                    changed |= lazy.remove(a);
                }
            }
        }
        if !changed {
            return lazy;
        }
    }
}

/// Integer values that can be computed again anywhere from builtins,
/// constants and uniform loads at constant offsets (see `GLower::remat`).
fn rematerializable(kernel: &Kernel) -> HashSet<wj::Value> {
    rematerializable_from(kernel, HashSet::new())
}

/// [`rematerializable`], given values that can be had anywhere already (a
/// lockstep kernel's scalars).
fn rematerializable_from(kernel: &Kernel, seeds: HashSet<wj::Value>) -> HashSet<wj::Value> {
    let int = |v: &wj::Value| !kernel.value_type(*v).is_float();
    let mut set: HashSet<wj::Value> = seeds;
    loop {
        let before = set.len();
        for data in kernel.insts.values() {
            let [res] = data.results[..] else { continue };
            if set.contains(&res) || !int(&res) {
                continue;
            }
            let args_ok = data
                .args
                .iter()
                .all(|a| set.contains(a) || crate::plan::const_bits(kernel, *a).is_some());
            let kind_ok = match &data.kind {
                InstKind::Const { .. } | InstKind::Builtin(_) => true,
                InstKind::Load(a) => {
                    a.space == wj::AddrSpace::Uniform
                        && data
                            .args
                            .first()
                            .is_some_and(|&v| crate::plan::const_bits(kernel, v).is_some())
                }
                InstKind::IBinary(_)
                | InstKind::IUnary(_)
                | InstKind::Icmp(_)
                | InstKind::Select
                | InstKind::Cast { .. } => data.args.iter().all(int),
                _ => false,
            };
            if kind_ok && args_ok {
                set.insert(res);
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// Values the helpers read from the slab: operands of cross-lane
/// instructions, and operands a run with inline float arithmetic reads from
/// other runs (a redo of the run recomputes its own values and reads those).
fn slab_readers(kernel: &Kernel, plan: &Plan) -> HashSet<wj::Value> {
    let mut set = HashSet::new();
    for data in kernel.insts.values() {
        if data.kind.is_cross_lane() {
            set.extend(data.args.iter().copied());
        }
    }
    for seg in &plan.segments {
        for run in &seg.runs {
            let notes = run.insts.iter().any(|&i| {
                matches!(
                    kernel.insts[i].kind,
                    InstKind::FBinary { .. } | InstKind::Fma { .. } | InstKind::FUnary { .. }
                )
            });
            if notes {
                let own: HashSet<wj::Value> = run
                    .insts
                    .iter()
                    .flat_map(|&i| kernel.insts[i].results.iter().copied())
                    .collect();
                for &i in &run.insts {
                    set.extend(
                        kernel.insts[i]
                            .args
                            .iter()
                            .filter(|a| !own.contains(a))
                            .copied(),
                    );
                }
            }
        }
    }
    set
}

/// Stores and atomics other lanes can see (at most one per run).
fn visible_write(kind: &InstKind) -> bool {
    matches!(kind, InstKind::Store(a) if matches!(a.space, wj::AddrSpace::Global | wj::AddrSpace::Shared))
        || matches!(kind, InstKind::Atomic { .. })
}

/// Lockstep lowering is on unless `WAVEJIT_LOCKSTEP=0` (for comparisons
/// with the scheduled core).
fn lockstep_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("WAVEJIT_LOCKSTEP").map_or(true, |v| v != "0"))
}

/// Lanes per chunk for `g` vectors.
pub(crate) fn chunk_lanes(g: usize) -> usize {
    4 * g
}

/// Scratch bytes for one helper call: every operand `chunk * 8` bytes.
fn scratch_bytes(g: usize) -> u32 {
    ((PURE_MAX_ARGS + PURE_MAX_RESULTS) * chunk_lanes(g) * 8) as u32
}

/// The hardware flush (`inst::HwFlush`) a kernel's whole function can run
/// with: where every f32 operation allows it, a batch sets it once and the
/// whole-chunk loops need not switch. Code that spells its float rules out
/// gives the same bits either way: its inputs are flushed already, and the
/// result rules it allows FTZ for agree with FTZ (`hardware_flush_run`).
pub(crate) fn kernel_hw_flush(kernel: &Kernel) -> u32 {
    kernel_hw_flush_mode(kernel) as u32
}

fn kernel_hw_flush_mode(kernel: &Kernel) -> inst::HwFlush {
    let insts: Vec<wj::Inst> = kernel
        .blocks
        .values()
        .flat_map(|b| b.insts.iter().copied())
        .collect();
    inst::hardware_flush_run(kernel, &insts)
}

/// Entries of the scheduler's table: segments, then sync positions.
pub(crate) fn entries(plan: &Plan) -> (Vec<u32>, Vec<(u32, wj::Inst)>) {
    let mut syncs = Vec::new();
    let mut entry_of_pc = vec![u32::MAX; plan.kinds.len()];
    let segs = plan.segments.len() as u32;
    for (pc, k) in plan.kinds.iter().enumerate() {
        match *k {
            PcKind::Segment(s) => entry_of_pc[pc] = s,
            PcKind::Sync(inst) => {
                entry_of_pc[pc] = segs + syncs.len() as u32;
                syncs.push((pc as u32, inst));
            }
            PcKind::Inner => {}
        }
    }
    (entry_of_pc, syncs)
}

fn guest() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl<'a, 'b> GLower<'a, 'b> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn build(
        mut b: FunctionBuilder<'b>,
        kernel: &'a Kernel,
        plan: &'a Plan,
        lanes: usize,
        g: usize,
        cfg: cranelift_codegen::isa::TargetFrontendConfig,
        tramps: [ir::FuncRef; 2],
        step_bound: Option<u64>,
    ) -> Result<bool, JitError> {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let ctx = b.block_params(entry)[0];
        let state =
            b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, ST_BYTES, 3));
        let scratch = b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            scratch_bytes(g),
            4,
        ));
        let mask_slot = b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (chunk_lanes(g) * 4) as u32,
            4,
        ));
        let mut lw = GLower {
            mask_slot,
            b,
            kernel,
            plan,
            g,
            lanes,
            ctx,
            state,
            scratch,
            sigs: [None; 5],
            call_conv: cfg.default_call_conv,
            tramps,
            ch: None,
            env: HashMap::new(),
            consts: HashMap::new(),
            redo: vec![None; g],
            unnoted: Default::default(),
            no_redo: false,
            remat: rematerializable(kernel),
            slab_read: slab_readers(kernel, plan),
            rematerializing: false,
            strides: affine::strides(kernel),
            senv: HashMap::new(),
            fused_internal: HashSet::new(),
            wave_scalars: HashMap::new(),
            wave_sites: HashMap::new(),
            lazy: HashSet::new(),
            converged: false,
            mask_cache: None,
            barriers: kernel.insts.values().any(|d| d.kind == InstKind::Barrier),
            quiet_exit: false,
            hoisted: HashMap::new(),
            hoisted_flushed: HashMap::new(),
            slot_wide: false,
            slot_next: None,
            loop_steps: None,
            held: None,
            chunk_mask: None,
            whole_fast: false,
            hw_flush: inst::HwFlush::Off,
            kernel_hw: kernel_hw_flush_mode(kernel),
            whole_leave: None,
            calls_in_chunk: 0,
            varying: Default::default(),
            dispatch_at: None,
            defers: false,
            may_defer: g > 1
                && kernel
                    .blocks
                    .values()
                    .any(|b| !matches!(b.term, Some(wj::Terminator::Exit))),
            ls: None,
            span_end: None,
        };
        if lockstep_enabled() {
            match lockstep::plan::LsPlan::new(kernel, plan) {
                Ok(p) => lw.ls = Some(Box::new(lockstep::Lockstep::new(p, &mut lw.b, step_bound))),
                Err(why) if super::dump_enabled() => eprintln!("; not in lockstep: {why}"),
                Err(_) => {}
            }
        }
        if let Some(ls) = lw.ls.as_deref_mut() {
            // Scalars are affine values of stride 0, and can be had
            // anywhere (what is computed from them and builtins can be
            // computed again where it is read).
            lw.strides = affine::strides_from(kernel, ls.plan.scalar.iter().copied());
            lw.remat = rematerializable_from(kernel, ls.plan.scalar.clone());
            ls.spill = lockstep::Lockstep::spills(kernel);
        }
        lw.slot_wide = lw.ls.is_none() && lw.slot_wide_kernel();
        lw.lazy = lazy_values(kernel, plan, &lw.remat, &lw.slab_read);
        let lockstep = lw.ls.is_some();
        if lockstep {
            lw.ls_schedule()?;
        } else {
            lw.schedule()?;
        }
        lw.b.seal_all_blocks();
        lw.b.finalize(cfg);
        Ok(lockstep)
    }

    fn st_load(&mut self, f: St) -> ir::Value {
        self.b
            .ins()
            .stack_load(types::I64, types::I32, self.state, f as i32)
    }

    fn st_store(&mut self, f: St, x: ir::Value) {
        self.b
            .ins()
            .stack_store(types::I64, x, self.state, f as i32);
    }

    /// Whether the wave is converged ([`St::Conv`]) and no lane of the batch
    /// has faulted (i8): what every converged shortcut needs.
    fn converged_and_clean(&mut self) -> ir::Value {
        let conv = self.st_load(St::Conv);
        let faulted = self.ctx_load(types::I32, off::FAULTED);
        let clean = self.b.ins().icmp_imm_s(CC::Equal, faulted, 0);
        let conv = self.b.ins().icmp_imm_s(CC::NotEqual, conv, 0);
        self.b.ins().band(conv, clean)
    }

    /// Address of the current wave's two words of parked step counts.
    fn wave_steps_ptr(&mut self) -> ir::Value {
        let wix = self.st_load(St::Wix);
        let i = self.b.ins().ishl_imm_s(wix, 1);
        self.word_ptr(off::WAVE_STEPS, i)
    }

    /// Address of the current wave's state word.
    fn wave_state_ptr(&mut self) -> ir::Value {
        let wix = self.st_load(St::Wix);
        self.word_ptr(off::WAVE_STATE, wix)
    }

    /// Address of word `i` (i32) of the array at ctx field `field`.
    fn word_ptr(&mut self, field: i32, i: ir::Value) -> ir::Value {
        let i = self.b.ins().uextend(types::I64, i);
        let offs = self.b.ins().ishl_imm_s(i, 2);
        let a = self.ctx_load(types::I64, field);
        self.b.ins().iadd(a, offs)
    }

    /// Address of the current slot's workgroup id words (x, y, z at 0, 4, 8).
    fn group_words(&mut self) -> ir::Value {
        let slot = self.st_load(St::Slot);
        let slot = self.b.ins().uextend(types::I64, slot);
        let offs = self.b.ins().ishl_imm_s(slot, 4);
        let groups = self.ctx_load(types::I64, off::GROUP);
        self.b.ins().iadd(groups, offs)
    }

    fn ctx_load(&mut self, ty: ir::Type, field: i32) -> ir::Value {
        self.b
            .ins()
            .load(ty, MemFlagsData::trusted(), self.ctx, field)
    }

    fn iconst(&mut self, ty: ir::Type, v: i64) -> ir::Value {
        let bits = ty.bits();
        let v = if bits < 64 {
            v & ((1i64 << bits) - 1)
        } else {
            v
        };
        self.b.ins().iconst(ty, v)
    }

    /// A vector constant from its lanes' bits.
    fn vconst_i32(&mut self, lanes: [u32; 4]) -> ir::Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|l| l.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(types::I32X4, c)
    }

    fn vconst_i64(&mut self, lanes: [u64; 2]) -> ir::Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|l| l.to_le_bytes()).collect();
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(types::I64X2, c)
    }

    /// `bits` in every 32-bit (or, `wide`, 64-bit) lane, shared within the chunk body.
    fn splat(&mut self, bits: i64, wide: bool) -> ir::Value {
        let bits = if wide { bits } else { bits & 0xffff_ffff };
        if let Some(&c) = self.consts.get(&(bits, wide)) {
            return c;
        }
        // From the constant pool: x64 folds it into its readers as a memory
        // operand, so it takes no instruction and no register per chunk.
        let c = if wide {
            self.vconst_i64([bits as u64; 2])
        } else {
            self.vconst_i32([bits as u32; 4])
        };
        self.consts.insert((bits, wide), c);
        c
    }

    /// The signature of helper `h` (imported on first use).
    fn sig(&mut self, h: Helper) -> ir::SigRef {
        if let Some(s) = self.sigs[h as usize] {
            return s;
        }
        use types::{I32, I64};
        let params: &[ir::Type] = match h {
            Helper::Chunk => &[I64, I32, I32, I64, I64],
            Helper::Watchdog => &[I64, I32, I64, I32],
            Helper::Wave => &[I64, I32, I32, I32, I32],
            Helper::Redo => &[I64, I32, I32, I32, I64],
            Helper::FloatEnv => &[I32],
        };
        let mut sig = Signature::new(self.call_conv);
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        if matches!(h, Helper::Chunk) {
            sig.returns.push(AbiParam::new(I32));
        }
        let s = self.b.import_signature(sig);
        self.sigs[h as usize] = Some(s);
        s
    }

    /// Sets the hardware flush (`flush`: an [`inst::HwFlush`]).
    fn float_env(&mut self, flush: i64) {
        let f = crate::gang::helpers::wj_float_env as *const () as i64;
        let f = self.iconst(types::I64, f);
        let flush = self.iconst(types::I32, flush);
        self.call_helper(Helper::FloatEnv, f, &[flush]);
    }

    /// Calls helper `f` (of kind `h`) with `args` through its trampoline.
    pub(super) fn call_helper(&mut self, h: Helper, f: ir::Value, args: &[ir::Value]) {
        self.calls_in_chunk += 1;
        let t = match args.len() {
            4 => self.tramps[0],
            5 => self.tramps[1],
            _ => {
                let sig = self.sig(h);
                self.b.ins().call_indirect(sig, f, args);
                return;
            }
        };
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(f);
        for &a in args {
            let a = if self.b.func.dfg.value_type(a) == types::I64 {
                a
            } else {
                self.b.ins().uextend(types::I64, a)
            };
            all.push(a);
        }
        self.b.ins().call(t, &all);
    }

    fn chunk(&self) -> Result<&Chunk, JitError> {
        self.ch
            .as_ref()
            .ok_or(JitError::Malformed("no chunk being emitted"))
    }

    /// The scheduler: slots, waves, lowest pc, dispatch; the entries follow.
    fn schedule(&mut self) -> Result<(), JitError> {
        let (_, syncs) = entries(self.plan);
        let ret = self.b.create_block();
        let slot_head = self.b.create_block();
        let wave_head = self.b.create_block();
        let sched = self.b.create_block();
        let wave_next = self.b.create_block();

        if self.slot_wide {
            self.deferred_pcs()?;
        } else {
            self.init_pcs()?;
        }
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Slot, zero);
        self.st_store(St::Round, zero);
        self.st_store(St::Wide, zero);
        self.st_store(St::Fresh, zero);
        self.b.ins().jump(slot_head, &[]);

        // slot_head: the next live slot, its first wave.
        self.b.switch_to_block(slot_head);
        let slot = self.st_load(St::Slot);
        let live = self.ctx_load(types::I32, off::LIVE_SLOTS);
        let done = self
            .b
            .ins()
            .icmp(CC::UnsignedGreaterThanOrEqual, slot, live);
        let first_wave = self.b.create_block();
        self.b.ins().brif(done, ret, &[], first_wave, &[]);
        self.b.switch_to_block(first_wave);
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Lo, zero);
        if self.barriers {
            let slot = self.st_load(St::Slot);
            let wps = self.ctx_load(types::I32, off::WAVES_PER_SLOT);
            let wix = self.b.ins().imul(slot, wps);
            self.st_store(St::Wix, wix);
        }
        self.b.ins().jump(wave_head, &[]);

        // wave_head: the wave's first lane and size, or the next slot.
        self.b.switch_to_block(wave_head);
        let lo = self.st_load(St::Lo);
        let wgl = self.ctx_load(types::I32, off::WG_LANES);
        let past = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, lo, wgl);
        let wave_set = self.b.create_block();
        let slot_next = self.b.create_block();
        self.slot_next = Some(slot_next);
        self.b.ins().brif(past, slot_next, &[], wave_set, &[]);
        self.b.switch_to_block(slot_next);
        let slot = self.st_load(St::Slot);
        let slot = self.b.ins().iadd_imm_s(slot, 1);
        self.st_store(St::Slot, slot);
        self.b.ins().jump(slot_head, &[]);
        self.b.switch_to_block(wave_set);
        let slot = self.st_load(St::Slot);
        let wgl = self.ctx_load(types::I32, off::WG_LANES);
        let lo = self.st_load(St::Lo);
        let sbase = self.b.ins().imul(slot, wgl);
        let base = self.b.ins().iadd(sbase, lo);
        self.st_store(St::Base, base);
        let ws = self.ctx_load(types::I32, off::WAVE_SIZE);
        let left = self.b.ins().isub(wgl, lo);
        let n = self.b.ins().umin(ws, left);
        self.st_store(St::N, n);
        // In the first round a wave's lanes are all where init_pcs put them:
        // no need to look.
        let round = self.st_load(St::Round);
        let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
        let later = self.b.ins().icmp_imm_u(CC::Equal, limit, 0);
        let round = self.b.ins().icmp_imm_s(CC::NotEqual, round, 0);
        let later = self.b.ins().bor(later, round);
        let fresh = self.b.create_block();
        let dispatch_at = self.b.create_block();
        self.b.append_block_param(dispatch_at, types::I32);
        self.dispatch_at = Some(dispatch_at);
        let none = self.iconst(types::I32, i64::from(UNI_NONE as i32));
        self.st_store(St::Pend, none);
        if self.may_defer {
            let zero = self.iconst(types::I32, 0);
            self.st_store(St::Defer, zero);
            let unknown = self.iconst(types::I32, i64::from(STEPS_UNKNOWN as i32));
            self.st_store(St::MaxSteps, unknown);
        }
        let resume = if self.barriers {
            self.b.create_block()
        } else {
            sched
        };
        self.b.ins().brif(later, resume, &[], fresh, &[]);
        if self.barriers {
            // A wave released as one word is converged at its pc (its lanes'
            // pcs say so too): no need to look.
            self.b.switch_to_block(resume);
            let p = self.wave_state_ptr();
            let s = self.b.ins().load(types::I32, MemFlagsData::trusted(), p, 0);
            let runnable = self
                .b
                .ins()
                .icmp_imm_u(CC::UnsignedLessThan, s, i64::from(WAVE_LANES));
            let go = self.b.create_block();
            let other = self.b.create_block();
            self.b.ins().brif(runnable, go, &[], other, &[]);
            self.b.switch_to_block(go);
            let lanes = self.iconst(types::I32, i64::from(WAVE_LANES as i32));
            self.b.ins().store(MemFlagsData::trusted(), lanes, p, 0);
            if self.may_defer {
                let q = self.wave_steps_ptr();
                let d = self.b.ins().load(types::I32, MemFlagsData::trusted(), q, 0);
                let m = self.b.ins().load(types::I32, MemFlagsData::trusted(), q, 4);
                self.st_store(St::Defer, d);
                self.st_store(St::MaxSteps, m);
            }
            let one = self.iconst(types::I32, 1);
            self.st_store(St::Conv, one);
            self.b.ins().jump(dispatch_at, &[s.into()]);
            self.b.switch_to_block(other);
            let done = self
                .b
                .ins()
                .icmp_imm_s(CC::Equal, s, i64::from(WAVE_DONE as i32));
            self.b.ins().brif(done, wave_next, &[], sched, &[]);
        }
        self.b.switch_to_block(fresh);
        let start = self.iconst(types::I32, 0);
        let one = self.iconst(types::I32, 1);
        self.st_store(St::Conv, one);
        if self.slot_wide {
            // The slot's first wave takes the whole slot (see `slot_wide_kernel`).
            let lo = self.st_load(St::Lo);
            let first = self.b.ins().icmp_imm_s(CC::Equal, lo, 0);
            let wide = self.b.ins().uextend(types::I32, first);
            self.st_store(St::Wide, wide);
            self.st_store(St::Fresh, wide);
            let wgl = self.ctx_load(types::I32, off::WG_LANES);
            let n = self.st_load(St::N);
            let n = self.b.ins().select(first, wgl, n);
            self.st_store(St::N, n);
        }
        self.b.ins().jump(dispatch_at, &[start.into()]);

        // wave_next
        self.b.switch_to_block(wave_next);
        let lo = self.st_load(St::Lo);
        let ws = self.ctx_load(types::I32, off::WAVE_SIZE);
        let lo = self.b.ins().iadd(lo, ws);
        self.st_store(St::Lo, lo);
        if self.barriers {
            let wix = self.st_load(St::Wix);
            let wix = self.b.ins().iadd_imm_s(wix, 1);
            self.st_store(St::Wix, wix);
        }
        self.b.ins().jump(wave_head, &[]);

        // sched: the lowest runnable pc of the wave.
        self.b.switch_to_block(sched);
        if self.may_defer {
            // The wave may be converged no longer: its lanes count their own.
            self.flush_deferred_steps();
        }
        let pcmin = self.wave_min_pc()?;
        let idle =
            self.b
                .ins()
                .icmp_imm_u(CC::UnsignedGreaterThanOrEqual, pcmin, i64::from(PARKED));
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Conv, zero);
        let none = self.iconst(types::I32, i64::from(UNI_NONE as i32));
        self.st_store(St::Pend, none);
        self.b
            .ins()
            .brif(idle, wave_next, &[], dispatch_at, &[pcmin.into()]);
        self.b.switch_to_block(dispatch_at);
        let pcmin = self.b.block_params(dispatch_at)[0];
        self.st_store(St::Pc, pcmin);
        let table = self.ctx_load(types::I64, off::ENTRY_OF_PC);
        let pc64 = self.b.ins().uextend(types::I64, pcmin);
        let offs = self.b.ins().ishl_imm_s(pc64, 2);
        let p = self.b.ins().iadd(table, offs);
        let entry = self.b.ins().load(types::I32, MemFlagsData::trusted(), p, 0);
        let seg_blocks: Vec<ir::Block> = self
            .plan
            .segments
            .iter()
            .map(|_| self.b.create_block())
            .collect();
        let sync_blocks: Vec<ir::Block> = syncs.iter().map(|_| self.b.create_block()).collect();
        let calls: Vec<ir::BlockCall> = seg_blocks
            .iter()
            .chain(&sync_blocks)
            .map(|&blk| self.b.func.dfg.block_call(blk, &[]))
            .collect();
        // Unreachable for verified kernels (a pc is always an entry); stop the
        // wave rather than spin.
        let bad = self.b.create_block();
        let dflt = self.b.func.dfg.block_call(bad, &[]);
        let jt = self
            .b
            .create_jump_table(ir::JumpTableData::new(dflt, &calls));
        self.b.ins().br_table(entry, jt);
        self.b.switch_to_block(bad);
        self.b.ins().jump(wave_next, &[]);

        let mut entry_of: HashMap<u32, ir::Block> = HashMap::new();
        for (pc, kind) in self.plan.kinds.iter().enumerate() {
            match *kind {
                PcKind::Segment(s) => {
                    entry_of.insert(pc as u32, seg_blocks[s as usize]);
                }
                PcKind::Sync(_) => {
                    if let Some(i) = syncs.iter().position(|&(p, _)| p == pc as u32) {
                        entry_of.insert(pc as u32, sync_blocks[i]);
                    }
                }
                PcKind::Inner => {}
            }
        }
        for (k, &blk) in seg_blocks.iter().enumerate() {
            self.b.switch_to_block(blk);
            self.segment(k, &entry_of, sched, wave_next)?;
        }
        for (&(_, inst), &blk) in syncs.iter().zip(&sync_blocks) {
            self.b.switch_to_block(blk);
            if self.kernel.insts[inst].kind == InstKind::Barrier {
                // A converged wave (every lane here, none faulted in the
                // batch) parks as one word and has no runnable lane left.
                let whole = self.converged_and_clean();
                let one_word = self.b.create_block();
                let lanes = self.b.create_block();
                self.b.ins().brif(whole, one_word, &[], lanes, &[]);
                self.b.switch_to_block(one_word);
                if self.may_defer {
                    // Kept with the wave until it resumes.
                    let p = self.wave_steps_ptr();
                    let d = self.st_load(St::Defer);
                    let m = self.st_load(St::MaxSteps);
                    self.b.ins().store(MemFlagsData::trusted(), d, p, 0);
                    self.b.ins().store(MemFlagsData::trusted(), m, p, 4);
                }
                let pc = self.st_load(St::Pc);
                let parked = self.b.ins().bor_imm_s(pc, i64::from(PARKED as i32));
                let p = self.wave_state_ptr();
                self.b.ins().store(MemFlagsData::trusted(), parked, p, 0);
                self.b.ins().jump(wave_next, &[]);
                self.b.switch_to_block(lanes);
                self.park()?;
                let one = self.iconst(types::I32, 1);
                self.st_store(St::LanePark, one);
            } else {
                let base = self.st_load(St::Base);
                let n = self.st_load(St::N);
                let pc = self.st_load(St::Pc);
                let code = self.iconst(types::I32, i64::from(inst.as_u32()));
                let f = self.iconst(types::I64, super::helpers::wj_gang_wave as *const () as i64);
                let call_args = [self.ctx, code, base, n, pc];
                self.call_helper(Helper::Wave, f, &call_args);
            }
            self.b.ins().jump(sched, &[]);
        }

        // End of a round: parked lanes go past their barrier and the next
        // round starts, without leaving compiled code.
        self.b.switch_to_block(ret);
        let done = self.b.create_block();
        if self.barriers {
            let again = self.release_parked(done)?;
            self.b.switch_to_block(again);
            let zero = self.iconst(types::I32, 0);
            self.st_store(St::Slot, zero);
            let one = self.iconst(types::I32, 1);
            self.st_store(St::Round, one);
            self.b.ins().jump(slot_head, &[]);
        } else {
            // Nothing parks: one round ends the batch.
            self.b.ins().jump(done, &[]);
        }
        self.b.switch_to_block(done);
        let f = self.ctx_load(types::I32, off::FAULTED);
        self.b.ins().return_(&[f]);
        Ok(())
    }

    /// Every live lane's pc at the kernel's start (dead when the step limit
    /// is 0), every other lane's dead, up to the array's padded end: plain
    /// stores of 16 lanes while all are live, then blends.
    fn init_pcs(&mut self) -> Result<(), JitError> {
        let slots = self.ctx_load(types::I32, off::LIVE_SLOTS);
        let wgl = self.ctx_load(types::I32, off::WG_LANES);
        let live = self.b.ins().imul(slots, wgl);
        let live64 = self.b.ins().uextend(types::I64, live);
        let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
        let zero = self.iconst(types::I32, 0);
        let dead = self.iconst(types::I32, i64::from(PC_DEAD as i32));
        let start = self.b.ins().select(limit, zero, dead);
        let start = self.b.ins().splat(types::I32X4, start);
        let deadv = self.b.ins().splat(types::I32X4, dead);
        let livev = self.b.ins().splat(types::I32X4, live);
        let pcs = self.ctx_load(types::I64, off::PC);
        let zero64 = self.iconst(types::I64, 0);
        // Whole groups of 16 live lanes.
        let head = self.b.create_block();
        let body = self.b.create_block();
        let tail = self.b.create_block();
        self.b.ins().jump(head, &[zero64.into()]);
        self.b.switch_to_block(head);
        let i = self.b.append_block_param(head, types::I64);
        let end = self.b.ins().iadd_imm_s(i, 16);
        let past = self.b.ins().icmp(CC::UnsignedGreaterThan, end, live64);
        self.b.ins().brif(past, tail, &[i.into()], body, &[]);
        self.b.switch_to_block(body);
        let p = self.lane_ptr(pcs, i, 0);
        for k in 0..4 {
            self.b.ins().store(guest(), start, p, 16 * k);
        }
        self.b.ins().jump(head, &[end.into()]);
        // The rest, a vector at a time.
        self.b.switch_to_block(tail);
        let i0 = self.b.append_block_param(tail, types::I64);
        let head = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().jump(head, &[i0.into()]);
        self.b.switch_to_block(head);
        let i = self.b.append_block_param(head, types::I64);
        let past = self.b.ins().icmp_imm_u(
            CC::UnsignedGreaterThanOrEqual,
            i,
            super::abi::pc_lanes(self.lanes) as i64,
        );
        self.b.ins().brif(past, done, &[], body, &[]);
        self.b.switch_to_block(body);
        let i32v = self.b.ins().ireduce(types::I32, i);
        let iv = self.b.ins().splat(types::I32X4, i32v);
        let iota = self.vconst_i32([0, 1, 2, 3]);
        let lane = self.b.ins().iadd(iv, iota);
        let inside = self.b.ins().icmp(CC::UnsignedLessThan, lane, livev);
        let x = self.b.ins().bitselect(inside, start, deadv);
        let p = self.lane_ptr(pcs, i, 0);
        self.b.ins().store(guest(), x, p, 0);
        let next = self.b.ins().iadd_imm_s(i, 4);
        self.b.ins().jump(head, &[next.into()]);
        self.b.switch_to_block(done);
        if self.barriers {
            self.init_wave_states();
        }
        Ok(())
    }

    /// A slot-wide kernel's pcs: a wave that runs fused exits without
    /// reading or writing its pcs (faulting lanes' helpers write theirs), so
    /// the array is written only for the slots that take the general path
    /// ([`GLower::fresh_wave_pcs`]); with a step limit of 0 every lane starts
    /// dead and the scheduler reads them at once, so they are written here.
    fn deferred_pcs(&mut self) -> Result<(), JitError> {
        let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
        let init = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(limit, done, &[], init, &[]);
        self.b.switch_to_block(init);
        self.init_pcs()?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// In a slot-wide kernel's general path: on the slot's first visit
    /// ([`St::Fresh`], its first wave: no lane of the slot has run) every
    /// lane of the slot gets the start pc (0: the step limit is not 0 on a
    /// first visit) before anything reads them. Later waves of the slot
    /// either run fused or read these.
    fn fresh_wave_pcs(&mut self) {
        let fresh = self.st_load(St::Fresh);
        let fill = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(fresh, fill, &[], done, &[]);
        self.b.switch_to_block(fill);
        let slot = self.st_load(St::Slot);
        let wgl = self.ctx_load(types::I32, off::WG_LANES);
        let base = self.b.ins().imul(slot, wgl);
        let start = self.iconst(types::I32, 0);
        self.fill_pcs(base, wgl, start);
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Fresh, zero);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// Every wave of the batch's live slots starts with its pcs in the array.
    fn init_wave_states(&mut self) {
        let slots = self.ctx_load(types::I32, off::LIVE_SLOTS);
        let wps = self.ctx_load(types::I32, off::WAVES_PER_SLOT);
        let n = self.b.ins().imul(slots, wps);
        let lanes = self.iconst(types::I32, i64::from(WAVE_LANES as i32));
        let head = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        let zero = self.iconst(types::I32, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let i = self.b.append_block_param(head, types::I32);
        let past = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, i, n);
        self.b.ins().brif(past, done, &[], body, &[]);
        self.b.switch_to_block(body);
        let p = self.word_ptr(off::WAVE_STATE, i);
        self.b.ins().store(MemFlagsData::trusted(), lanes, p, 0);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(head, &[next.into()]);
        self.b.switch_to_block(done);
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::LanePark, zero);
    }

    /// Releases every parked lane of the batch (pc past its barrier); jumps
    /// to the returned block when some lane was parked, else to `none`.
    /// Waves parked as one word are released as one word (their lanes' pcs
    /// written past the barrier); the pc array is scanned only when some
    /// lane parked on its own this round.
    fn release_parked(&mut self, none: ir::Block) -> Result<ir::Block, JitError> {
        let scan = self.b.create_block();
        let waves = self.b.create_block();
        let lanes_any = self.b.append_block_param(waves, types::I8);
        let again = self.b.create_block();
        let lp = self.st_load(St::LanePark);
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::LanePark, zero);
        let no = self.iconst(types::I8, 0);
        self.b.ins().brif(lp, scan, &[], waves, &[no.into()]);
        self.b.switch_to_block(scan);
        self.release_parked_lanes(waves);
        self.b.switch_to_block(waves);
        let any = self.release_parked_waves(lanes_any);
        self.b.ins().brif(any, again, &[], none, &[]);
        Ok(again)
    }

    /// The scan of the pc array: every parked lane's pc past its barrier;
    /// then a jump to `done` with whether some lane was parked (i8).
    fn release_parked_lanes(&mut self, done: ir::Block) {
        let head = self.b.create_block();
        let body = self.b.create_block();
        let end = self.b.create_block();
        // The loop's constants ride along as parameters, so they stay in
        // registers instead of being built again every iteration.
        let i = self.b.append_block_param(head, types::I32);
        let acc = self.b.append_block_param(head, types::I32X4);
        let bitv = self.b.append_block_param(head, types::I32X4);
        let deadv = self.b.append_block_param(head, types::I32X4);
        let onev = self.b.append_block_param(head, types::I32X4);
        let zero = self.iconst(types::I32, 0);
        let zv = self.b.ins().splat(types::I32X4, zero);
        let bit = self.iconst(types::I32, i64::from(PARKED as i32));
        let bit0 = self.b.ins().splat(types::I32X4, bit);
        let dead = self.iconst(types::I32, i64::from(PC_DEAD as i32));
        let dead0 = self.b.ins().splat(types::I32X4, dead);
        let one = self.iconst(types::I32, 1);
        let one0 = self.b.ins().splat(types::I32X4, one);
        let slots = self.ctx_load(types::I32, off::LIVE_SLOTS);
        let wgl = self.ctx_load(types::I32, off::WG_LANES);
        let n = self.b.ins().imul(slots, wgl);
        let pcs = self.ctx_load(types::I64, off::PC);
        self.b.ins().jump(
            head,
            &[
                zero.into(),
                zv.into(),
                bit0.into(),
                dead0.into(),
                one0.into(),
            ],
        );
        self.b.switch_to_block(head);
        let past = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, i, n);
        self.b.ins().brif(past, end, &[acc.into()], body, &[]);
        self.b.switch_to_block(body);
        let i64v = self.b.ins().uextend(types::I64, i);
        let p = self.lane_ptr(pcs, i64v, 0);
        let x = self.b.ins().load(types::I32X4, guest(), p, 0);
        // Parked: the bit set and not dead (dead has every bit set).
        let hi = self.b.ins().band(x, bitv);
        let has = self.b.ins().icmp(CC::Equal, hi, bitv);
        let alive = self.b.ins().icmp(CC::NotEqual, x, deadv);
        let parked = self.b.ins().band(has, alive);
        // Lanes past the batch's live lanes are dead, so they stay as they are.
        let low = self.b.ins().band_not(x, bitv);
        let next = self.b.ins().iadd(low, onev);
        let y = self.b.ins().bitselect(parked, next, x);
        self.b.ins().store(guest(), y, p, 0);
        let acc2 = self.b.ins().bor(acc, parked);
        let i2 = self.b.ins().iadd_imm_s(i, 4);
        self.b.ins().jump(
            head,
            &[
                i2.into(),
                acc2.into(),
                bitv.into(),
                deadv.into(),
                onev.into(),
            ],
        );
        self.b.switch_to_block(end);
        let acc = self.b.append_block_param(end, types::I32X4);
        let any = self.b.ins().vany_true(acc);
        self.b.ins().jump(done, &[any.into()]);
    }

    /// Every wave parked as one word goes past its barrier: its state word
    /// and its lanes' pcs. Returns whether some lane was parked (i8), given
    /// `lanes_any` from the scan.
    fn release_parked_waves(&mut self, lanes_any: ir::Value) -> ir::Value {
        let head = self.b.create_block();
        let body = self.b.create_block();
        let fill = self.b.create_block();
        let latch = self.b.create_block();
        let end = self.b.create_block();
        // (wave index, slot, wave in slot, any)
        let i = self.b.append_block_param(head, types::I32);
        let slot = self.b.append_block_param(head, types::I32);
        let w = self.b.append_block_param(head, types::I32);
        let any = self.b.append_block_param(head, types::I8);
        let zero = self.iconst(types::I32, 0);
        self.b.ins().jump(
            head,
            &[zero.into(), zero.into(), zero.into(), lanes_any.into()],
        );
        self.b.switch_to_block(head);
        let slots = self.ctx_load(types::I32, off::LIVE_SLOTS);
        let wps = self.ctx_load(types::I32, off::WAVES_PER_SLOT);
        let n = self.b.ins().imul(slots, wps);
        let past = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, i, n);
        self.b.ins().brif(past, end, &[], body, &[]);
        self.b.switch_to_block(body);
        let p = self.word_ptr(off::WAVE_STATE, i);
        let st = self.b.ins().load(types::I32, MemFlagsData::trusted(), p, 0);
        // Parked: the bit set, and not every lane exited (all bits set).
        let bit = self.b.ins().band_imm_s(st, i64::from(PARKED as i32));
        let has = self.b.ins().icmp_imm_s(CC::NotEqual, bit, 0);
        let gone = self
            .b
            .ins()
            .icmp_imm_s(CC::Equal, st, i64::from(WAVE_DONE as i32));
        let parked = self.b.ins().band_not(has, gone);
        self.b.ins().brif(parked, fill, &[], latch, &[any.into()]);
        self.b.switch_to_block(fill);
        let pc = self.b.ins().band_imm_s(st, i64::from(!PARKED as i32));
        let pc = self.b.ins().iadd_imm_s(pc, 1);
        self.b.ins().store(MemFlagsData::trusted(), pc, p, 0);
        let wgl = self.ctx_load(types::I32, off::WG_LANES);
        let ws = self.ctx_load(types::I32, off::WAVE_SIZE);
        let lo = self.b.ins().imul(w, ws);
        let sbase = self.b.ins().imul(slot, wgl);
        let base = self.b.ins().iadd(sbase, lo);
        let left = self.b.ins().isub(wgl, lo);
        let count = self.b.ins().umin(ws, left);
        self.fill_pcs(base, count, pc);
        let yes = self.iconst(types::I8, 1);
        self.b.ins().jump(latch, &[yes.into()]);
        self.b.switch_to_block(latch);
        let any2 = self.b.append_block_param(latch, types::I8);
        let i2 = self.b.ins().iadd_imm_s(i, 1);
        let w1 = self.b.ins().iadd_imm_s(w, 1);
        let wrap = self.b.ins().icmp(CC::Equal, w1, wps);
        let w2 = self.b.ins().select(wrap, zero, w1);
        let step = self.b.ins().uextend(types::I32, wrap);
        let slot2 = self.b.ins().iadd(slot, step);
        self.b
            .ins()
            .jump(head, &[i2.into(), slot2.into(), w2.into(), any2.into()]);
        self.b.switch_to_block(end);
        any
    }

    /// Sets the pcs of lanes `base .. base + count` of the batch to `pc`,
    /// four at a time (the last four blended with the next lanes' pcs).
    fn fill_pcs(&mut self, base: ir::Value, count: ir::Value, pc: ir::Value) {
        let pcv = self.b.ins().splat(types::I32X4, pc);
        self.lane_quads(
            base,
            count,
            |this, offs, left, _| {
                let pcs = this.ctx_load(types::I64, off::PC);
                let p = this.b.ins().iadd(pcs, offs);
                let v = this.valid(left, 0);
                let x = this.b.ins().load(types::I32X4, guest(), p, 0);
                let y = this.b.ins().bitselect(v, pcv, x);
                this.b.ins().store(guest(), y, p, 0);
            },
            &[],
        );
    }

    /// Pointer to lane `lane0 + 4 * k` of a per-lane u32 array.
    fn lane_ptr(&mut self, array: ir::Value, lane0: ir::Value, k: usize) -> ir::Value {
        let offs = self.b.ins().ishl_imm_s(lane0, 2);
        let p = self.b.ins().iadd(array, offs);
        if k == 0 {
            p
        } else {
            self.b.ins().iadd_imm_s(p, 16 * k as i64)
        }
    }

    /// The lanes left in the wave from chunk offset `c` (`n - c`, splatted).
    fn lanes_left(&mut self, c: ir::Value, n: ir::Value) -> ir::Value {
        let rem = self.b.ins().isub(n, c);
        self.b.ins().splat(types::I32X4, rem)
    }

    /// Lanes `4k .. 4k + 4` of the chunk that exist (below `left`), as a mask.
    /// Signed: `left` is below 2^28 (a batch's slab fits 2^31 bytes), and
    /// x86 has a signed vector compare only.
    fn valid(&mut self, left: ir::Value, k: usize) -> ir::Value {
        let k = 4 * k as u32;
        let iota = self.vconst_i32([k, k + 1, k + 2, k + 3]);
        self.b.ins().icmp(CC::SignedGreaterThan, left, iota)
    }

    /// The lowest pc of the current wave's lanes (parked and dead lanes
    /// compare above every runnable pc).
    fn wave_min_pc(&mut self) -> Result<ir::Value, JitError> {
        let l = chunk_lanes(self.g) as i64;
        let head = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        let c = self.b.append_block_param(head, types::I32);
        let acc = self.b.append_block_param(head, types::I32X4);
        let zero = self.iconst(types::I32, 0);
        let dead = self.iconst(types::I32, i64::from(PC_DEAD as i32));
        let dead_v = self.b.ins().splat(types::I32X4, dead);
        self.b.ins().jump(head, &[zero.into(), dead_v.into()]);
        self.b.switch_to_block(head);
        let n = self.st_load(St::N);
        let end = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, c, n);
        self.b.ins().brif(end, done, &[acc.into()], body, &[]);
        self.b.switch_to_block(body);
        let base = self.st_load(St::Base);
        let lane0 = self.b.ins().iadd(base, c);
        let lane0 = self.b.ins().uextend(types::I64, lane0);
        let pcs = self.ctx_load(types::I64, off::PC);
        let dead = self.iconst(types::I32, i64::from(PC_DEAD as i32));
        let dead_v = self.b.ins().splat(types::I32X4, dead);
        let mut m = acc;
        let left = self.lanes_left(c, n);
        for k in 0..self.g {
            let p = self.lane_ptr(pcs, lane0, k);
            let x = self.b.ins().load(types::I32X4, guest(), p, 0);
            let v = self.valid(left, k);
            let x = self.b.ins().bitselect(v, x, dead_v);
            m = self.b.ins().umin(m, x);
        }
        let next = self.b.ins().iadd_imm_s(c, l);
        self.b.ins().jump(head, &[next.into(), m.into()]);
        self.b.switch_to_block(done);
        let m = self.b.append_block_param(done, types::I32X4);
        Ok(self.horizontal_umin(m))
    }

    /// The unsigned minimum of `m`'s four lanes: swap halves, then neighbours.
    fn horizontal_umin(&mut self, m: ir::Value) -> ir::Value {
        self.horizontal(m, false)
    }

    /// The unsigned minimum (or with `max`, maximum) of `m`'s four lanes.
    fn horizontal(&mut self, m: ir::Value, max: bool) -> ir::Value {
        let bytes = |order: [u8; 4]| -> Vec<u8> {
            order
                .iter()
                .flat_map(|&l| (0..4).map(move |b| l * 4 + b))
                .collect()
        };
        let mut m = m;
        for order in [[2u8, 3, 0, 1], [1, 0, 3, 2]] {
            let imm = self
                .b
                .func
                .dfg
                .immediates
                .push(ConstantData::from(bytes(order)));
            let bm = self.bytes_of(m);
            let s = self.b.ins().shuffle(bm, bm, imm);
            let s = self.i32x4_of(s);
            m = if max {
                self.b.ins().umax(m, s)
            } else {
                self.b.ins().umin(m, s)
            };
        }
        self.b.ins().extractlane(m, 0)
    }

    /// [`GLower::lane_quads`] over the current wave's lanes.
    fn wave_quads(
        &mut self,
        f: impl FnMut(&mut Self, ir::Value, ir::Value, &mut [ir::Value]),
        carried: &[ir::Value],
    ) -> Vec<ir::Value> {
        let base = self.st_load(St::Base);
        let n = self.st_load(St::N);
        self.lane_quads(base, n, f, carried)
    }

    /// A loop over lanes `base .. base + n` of the batch four at a time:
    /// `f(this, byte offset of the four from lane 0 (i64), lanes left
    /// (splat), carried values)`; returns the carried values at the end.
    fn lane_quads(
        &mut self,
        base: ir::Value,
        n: ir::Value,
        mut f: impl FnMut(&mut Self, ir::Value, ir::Value, &mut [ir::Value]),
        carried: &[ir::Value],
    ) -> Vec<ir::Value> {
        let head = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        let j = self.b.append_block_param(head, types::I32);
        let acc: Vec<ir::Value> = carried
            .iter()
            .map(|&c| {
                let ty = self.b.func.dfg.value_type(c);
                self.b.append_block_param(head, ty)
            })
            .collect();
        let out: Vec<ir::Value> = carried
            .iter()
            .map(|&c| {
                let ty = self.b.func.dfg.value_type(c);
                self.b.append_block_param(done, ty)
            })
            .collect();
        let zero = self.iconst(types::I32, 0);
        let mut args: Vec<ir::BlockArg> = vec![zero.into()];
        args.extend(carried.iter().map(|&c| ir::BlockArg::from(c)));
        self.b.ins().jump(head, &args);
        self.b.switch_to_block(head);
        let past = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, j, n);
        let acc_args: Vec<ir::BlockArg> = acc.iter().map(|&c| c.into()).collect();
        self.b.ins().brif(past, done, &acc_args, body, &[]);
        self.b.switch_to_block(body);
        let lane = self.b.ins().iadd(base, j);
        let lane = self.b.ins().uextend(types::I64, lane);
        let offs = self.b.ins().ishl_imm_s(lane, 2);
        let left = self.lanes_left(j, n);
        let mut acc2 = acc.clone();
        f(self, offs, left, &mut acc2);
        let j2 = self.b.ins().iadd_imm_s(j, 4);
        let mut next: Vec<ir::BlockArg> = vec![j2.into()];
        next.extend(acc2.iter().map(|&c| ir::BlockArg::from(c)));
        self.b.ins().jump(head, &next);
        self.b.switch_to_block(done);
        out
    }

    /// The largest `steps` entry of the current wave's lanes.
    fn wave_max_steps(&mut self) -> ir::Value {
        let zero = self.iconst(types::I32, 0);
        let zv = self.b.ins().splat(types::I32X4, zero);
        let out = self.wave_quads(
            |this, offs, left, acc| {
                let steps = this.ctx_load(types::I64, off::STEPS);
                let p = this.b.ins().iadd(steps, offs);
                let x = this.b.ins().load(types::I32X4, guest(), p, 0);
                let v = this.valid(left, 0);
                let zero = this.splat(0, false);
                let x = this.b.ins().bitselect(v, x, zero);
                acc[0] = this.b.ins().umax(acc[0], x);
            },
            &[zv],
        );
        self.horizontal(out[0], true)
    }

    /// Adds the converged wave's deferred steps ([`St::Defer`]) to its
    /// lanes' `steps` entries, if any.
    fn flush_deferred_steps(&mut self) {
        let d = self.st_load(St::Defer);
        let add = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(d, add, &[], done, &[]);
        self.b.switch_to_block(add);
        let dv = self.b.ins().splat(types::I32X4, d);
        self.wave_quads(
            |this, offs, left, _| {
                let steps = this.ctx_load(types::I64, off::STEPS);
                let p = this.b.ins().iadd(steps, offs);
                let x = this.b.ins().load(types::I32X4, guest(), p, 0);
                let y = this.b.ins().iadd(x, dv);
                let v = this.valid(left, 0);
                let y = this.b.ins().bitselect(v, y, x);
                this.b.ins().store(guest(), y, p, 0);
            },
            &[],
        );
        let zero = self.iconst(types::I32, 0);
        self.st_store(St::Defer, zero);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    /// At a segment's start: whether it counts its edge as one deferred step
    /// of the converged wave instead of one per lane ([`St::Deferring`]).
    /// Only a converged wave of a clean batch whose largest step count plus
    /// the deferred ones leaves room for this edge defers: then no lane can
    /// pass the limit on it, and the watchdog has nothing to find. Anything
    /// else first adds the deferred steps to every lane and counts per lane.
    fn decide_deferral(&mut self, capable: bool) {
        let unknown = self.iconst(types::I32, i64::from(STEPS_UNKNOWN as i32));
        let zero = self.iconst(types::I32, 0);
        let per_lane = self.b.create_block();
        let done = self.b.create_block();
        if capable {
            let ok = self.converged_and_clean();
            let check = self.b.create_block();
            let scan = self.b.create_block();
            let have = self.b.create_block();
            let m = self.b.append_block_param(have, types::I32);
            self.b.ins().brif(ok, check, &[], per_lane, &[]);
            self.b.switch_to_block(check);
            let known = self.st_load(St::MaxSteps);
            let missing = self.b.ins().icmp(CC::Equal, known, unknown);
            self.b.ins().brif(missing, scan, &[], have, &[known.into()]);
            self.b.switch_to_block(scan);
            let found = self.wave_max_steps();
            self.st_store(St::MaxSteps, found);
            self.b.ins().jump(have, &[found.into()]);
            self.b.switch_to_block(have);
            let d = self.st_load(St::Defer);
            let m64 = self.b.ins().uextend(types::I64, m);
            let d64 = self.b.ins().uextend(types::I64, d);
            let total = self.b.ins().iadd(m64, d64);
            let total = self.b.ins().iadd_imm_s(total, 1);
            let limit = self.ctx_load(types::I32, off::STEP_LIMIT);
            let limit = self.b.ins().uextend(types::I64, limit);
            let room = self.b.ins().icmp(CC::UnsignedLessThanOrEqual, total, limit);
            let yes = self.b.create_block();
            self.b.ins().brif(room, yes, &[], per_lane, &[]);
            self.b.switch_to_block(yes);
            let one = self.iconst(types::I32, 1);
            self.st_store(St::Deferring, one);
            self.b.ins().jump(done, &[]);
        } else {
            self.b.ins().jump(per_lane, &[]);
        }
        self.b.switch_to_block(per_lane);
        self.flush_deferred_steps();
        // Lanes step one by one here: their largest count is unknown after.
        self.st_store(St::MaxSteps, unknown);
        self.st_store(St::Deferring, zero);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
    }

    fn bytes_of(&mut self, x: ir::Value) -> ir::Value {
        let le = MemFlagsData::new().with_endianness(ir::Endianness::Little);
        self.b.ins().bitcast(types::I8X16, le, x)
    }

    fn i32x4_of(&mut self, x: ir::Value) -> ir::Value {
        if self.b.func.dfg.value_type(x) == types::I32X4 {
            return x;
        }
        let le = MemFlagsData::new().with_endianness(ir::Endianness::Little);
        self.b.ins().bitcast(types::I32X4, le, x)
    }

    fn f32x4_of(&mut self, x: ir::Value) -> ir::Value {
        if self.b.func.dfg.value_type(x) == types::F32X4 {
            return x;
        }
        let le = MemFlagsData::new().with_endianness(ir::Endianness::Little);
        self.b.ins().bitcast(types::F32X4, le, x)
    }

    fn i64x2_of(&mut self, x: ir::Value) -> ir::Value {
        if self.b.func.dfg.value_type(x) == types::I64X2 {
            return x;
        }
        let le = MemFlagsData::new().with_endianness(ir::Endianness::Little);
        self.b.ins().bitcast(types::I64X2, le, x)
    }

    /// Barrier: the wave's lanes at the lowest pc park there.
    fn park(&mut self) -> Result<(), JitError> {
        self.chunk_loop(|this| {
            let lane0 = this.chunk()?.lane0;
            let mask = this.mask();
            let pcs = this.ctx_load(types::I64, off::PC);
            let bit = this.splat(i64::from(PARKED), false);
            for (k, &m) in mask.iter().enumerate() {
                let p = this.lane_ptr(pcs, lane0, k);
                let x = this.b.ins().load(types::I32X4, guest(), p, 0);
                let y = this.b.ins().bor(x, bit);
                let x = this.b.ins().bitselect(m, y, x);
                this.b.ins().store(guest(), x, p, 0);
            }
            Ok(())
        })
    }

    /// Emits `for c in (0..n).step_by(chunk) { mask; if any { body } }` for the
    /// current wave at the current pc.
    fn chunk_loop(
        &mut self,
        body: impl FnMut(&mut Self) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        self.chunk_loop_tracked(false, body)
    }

    /// [`GLower::chunk_loop`]; with `track`, a chunk with no active lane
    /// makes the segment's successor non-uniform ([`St::Uni`]) and
    /// [`Chunk::full`] tells whether every lane that exists is active.
    fn chunk_loop_tracked(
        &mut self,
        track: bool,
        body: impl FnMut(&mut Self) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        self.chunk_loop_from(track, None, body)
    }

    /// [`GLower::chunk_loop_tracked`] from chunk offset `start` (i32, a
    /// multiple of the chunk's lanes; 0 when `None`).
    fn chunk_loop_from(
        &mut self,
        track: bool,
        start: Option<ir::Value>,
        mut body: impl FnMut(&mut Self) -> Result<(), JitError>,
    ) -> Result<(), JitError> {
        let l = chunk_lanes(self.g) as i64;
        let head = self.b.create_block();
        let work = self.b.create_block();
        let go = self.b.create_block();
        let latch = self.b.create_block();
        let exit = self.b.create_block();
        let c = self.b.append_block_param(head, types::I32);
        let start = match start {
            Some(s) => s,
            None => self.iconst(types::I32, 0),
        };
        self.b.ins().jump(head, &[start.into()]);
        self.b.switch_to_block(head);
        let n = self.st_load(St::N);
        let end = self.b.ins().icmp(CC::UnsignedGreaterThanOrEqual, c, n);
        self.b.ins().brif(end, exit, &[], work, &[]);
        self.b.switch_to_block(work);
        self.start_chunk(c, None, None);
        let (mask, full) = if self.converged {
            self.converged_mask(track)?
        } else if self.g > 1 {
            self.mask_of_wave(track)?
        } else {
            self.current_mask_full(track)?
        };
        if let Some(ch) = self.ch.as_mut() {
            ch.full = full;
        }
        self.store_mask(&mask);
        let mut any = mask[0];
        for &m in &mask[1..] {
            any = self.b.ins().bor(any, m);
        }
        self.mask_cache = Some(mask.clone());
        self.chunk_mask = Some(mask.clone());
        let any = self.b.ins().vany_true(any);
        if self.converged {
            // Every chunk of a converged wave has a lane (c < n).
            self.b.ins().jump(go, &[]);
        } else if track {
            let skip = self.b.create_block();
            self.b.ins().brif(any, go, &[], skip, &[]);
            self.b.switch_to_block(skip);
            let none = self.iconst(types::I32, i64::from(UNI_NONE as i32));
            self.st_store(St::Uni, none);
            self.b.ins().jump(latch, &[]);
        } else {
            self.b.ins().brif(any, go, &[], latch, &[]);
        }
        self.b.switch_to_block(go);
        body(self)?;
        self.b.ins().jump(latch, &[]);
        self.b.switch_to_block(latch);
        let next = self.b.ins().iadd_imm_s(c, l);
        self.b.ins().jump(head, &[next.into()]);
        self.b.switch_to_block(exit);
        self.end_chunks();
        Ok(())
    }

    /// The per-chunk state for chunk offset `c` of the current wave (its
    /// values, constants and redo notes start empty).
    fn start_chunk(&mut self, c: ir::Value, full: Option<ir::Value>, whole: Option<ir::Value>) {
        self.consts.clear();
        self.env.clear();
        self.senv.clear();
        self.redo = vec![None; self.g];
        let base = self.st_load(St::Base);
        let lane0 = self.b.ins().iadd(base, c);
        let lane0 = self.b.ins().uextend(types::I64, lane0);
        self.ch = Some(Chunk {
            lane0,
            c,
            full,
            whole,
        });
    }

    /// After a chunk loop: no chunk's values or mask dominate what follows.
    fn end_chunks(&mut self) {
        self.ch = None;
        self.mask_cache = None;
        self.chunk_mask = None;
        self.env.clear();
        self.senv.clear();
        self.consts.clear();
    }

    /// The mask of a converged wave's chunk: its lanes that exist, all of
    /// them but in the wave's last chunk (`left` below the chunk's lanes),
    /// so the per-lane test runs only there.
    fn converged_mask(&mut self, full: bool) -> Result<(Gv, Option<ir::Value>), JitError> {
        let c = self.chunk()?.c;
        let n = self.st_load(St::N);
        let left = self.b.ins().isub(n, c);
        let whole = self.b.ins().icmp_imm_u(
            CC::UnsignedGreaterThanOrEqual,
            left,
            chunk_lanes(self.g) as i64,
        );
        if let Some(ch) = self.ch.as_mut() {
            ch.whole = Some(whole);
        }
        let tail = self.b.create_block();
        let join = self.b.create_block();
        let mask: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        let ones = self.iconst(types::I32, -1);
        let ones = self.b.ins().splat(types::I32X4, ones);
        let all: Vec<ir::BlockArg> = (0..self.g).map(|_| ones.into()).collect();
        self.b.set_cold_block(tail);
        self.b.ins().brif(whole, join, &all, tail, &[]);
        self.b.switch_to_block(tail);
        let leftv = self.b.ins().splat(types::I32X4, left);
        let part: Vec<ir::BlockArg> = (0..self.g).map(|k| self.valid(leftv, k).into()).collect();
        self.b.ins().jump(join, &part);
        self.b.switch_to_block(join);
        let all = full.then(|| self.iconst(types::I8, 1));
        Ok((mask, all))
    }

    /// The mask of the general copy's chunk: a wave converged at the pc
    /// ([`St::Conv`], no lane of the batch faulted) needs no pc reads, as
    /// in [`GLower::converged_mask`]; else from the pc array. (The optimized
    /// tier only: the test and second mask cost compile time.)
    fn mask_of_wave(&mut self, full: bool) -> Result<(Gv, Option<ir::Value>), JitError> {
        let conv = self.converged_and_clean();
        let whole = self.b.create_block();
        let lanes = self.b.create_block();
        let join = self.b.create_block();
        let mask: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(join, types::I32X4))
            .collect();
        let all = full.then(|| self.b.append_block_param(join, types::I8));
        self.b.ins().brif(conv, whole, &[], lanes, &[]);
        for (blk, converged) in [(whole, true), (lanes, false)] {
            self.b.switch_to_block(blk);
            let (m, f) = if converged {
                self.converged_mask(full)?
            } else {
                self.current_mask_full(full)?
            };
            let mut args: Vec<ir::BlockArg> = m.iter().map(|&x| x.into()).collect();
            args.extend(f.map(ir::BlockArg::from));
            self.b.ins().jump(join, &args);
        }
        self.b.switch_to_block(join);
        Ok((mask, all))
    }

    /// The execution mask of the current chunk from the pc array: lanes of the
    /// wave at the current pc (faulted lanes are dead, so they drop out); with
    /// `full`, also whether every lane of the chunk that exists is active.
    fn current_mask_full(&mut self, full: bool) -> Result<(Gv, Option<ir::Value>), JitError> {
        let (lane0, c) = {
            let ch = self.chunk()?;
            (ch.lane0, ch.c)
        };
        let n = self.st_load(St::N);
        let pcs = self.ctx_load(types::I64, off::PC);
        let pc = self.st_load(St::Pc);
        let pcv = self.b.ins().splat(types::I32X4, pc);
        let mut mask = Vec::with_capacity(self.g);
        let mut all: Option<ir::Value> = None;
        let left = self.lanes_left(c, n);
        for k in 0..self.g {
            let p = self.lane_ptr(pcs, lane0, k);
            let x = self.b.ins().load(types::I32X4, guest(), p, 0);
            let at = self.b.ins().icmp(CC::Equal, x, pcv);
            let v = self.valid(left, k);
            mask.push(self.b.ins().band(at, v));
            if full {
                // At the pc, or a lane past the wave's end.
                let ok = self.b.ins().bor_not(at, v);
                all = Some(match all {
                    None => ok,
                    Some(a) => self.b.ins().band(a, ok),
                });
            }
        }
        let full = all.map(|a| self.b.ins().vall_true(a));
        Ok((mask, full))
    }

    /// Records that the current chunk's active lanes all go to `target` (an
    /// i32 pc, or [`UNI_NONE`]): the segment's successor stays uniform while
    /// every chunk is full and agrees.
    fn note_successor(&mut self, target: ir::Value) -> Result<(), JitError> {
        let Some(full) = self.chunk()?.full else {
            return Ok(());
        };
        self.merge_successor(St::Agree, target);
        let none = self.iconst(types::I32, i64::from(UNI_NONE as i32));
        let target = self.b.ins().select(full, target, none);
        self.merge_successor(St::Uni, target);
        Ok(())
    }

    /// `f` := `target` if it was [`UNI_START`] or already `target`, else
    /// [`UNI_NONE`].
    fn merge_successor(&mut self, f: St, target: ir::Value) {
        let none = self.iconst(types::I32, i64::from(UNI_NONE as i32));
        let old = self.st_load(f);
        let first = self
            .b
            .ins()
            .icmp_imm_s(CC::Equal, old, i64::from(UNI_START as i32));
        let same = self.b.ins().icmp(CC::Equal, old, target);
        let keep = self.b.ins().bor(first, same);
        let new = self.b.ins().select(keep, target, none);
        self.st_store(f, new);
    }

    /// The current chunk's execution mask.
    fn mask(&mut self) -> Gv {
        if let Some(m) = &self.mask_cache {
            return m.clone();
        }
        self.load_mask()
    }

    /// Writes `mask` to the slot.
    fn store_mask(&mut self, mask: &[ir::Value]) {
        for (k, &m) in mask.iter().enumerate() {
            self.b
                .ins()
                .stack_store(types::I64, m, self.mask_slot, 16 * k as i32);
        }
    }

    /// The mask as the slot holds it now.
    fn load_mask(&mut self) -> Gv {
        (0..self.g)
            .map(|k| {
                self.b
                    .ins()
                    .stack_load(types::I64, types::I32X4, self.mask_slot, 16 * k as i32)
            })
            .collect()
    }

    /// Address of the mask, for helpers.
    fn mask_ptr(&mut self) -> ir::Value {
        self.b.ins().stack_addr(types::I64, self.mask_slot, 0)
    }

    /// The mask widened to `I64X2` lanes (for 64-bit values).
    fn wide_mask(&mut self, mask: &[ir::Value]) -> Gv {
        let mut out = Vec::with_capacity(2 * mask.len());
        for &m in mask {
            out.push(self.b.ins().swiden_low(m));
            out.push(self.b.ins().swiden_high(m));
        }
        out
    }

    /// Runs segment `k` for the current wave at the current pc, then goes to
    /// the scheduler, or straight to the successor when every lane of the
    /// wave ran the segment and took the same edge (all live lanes are then
    /// at that pc: what the scheduler would find), or to the next wave when
    /// they all exited.
    fn segment(
        &mut self,
        k: usize,
        entry_of: &HashMap<u32, ir::Block>,
        sched: ir::Block,
        wave_next: ir::Block,
    ) -> Result<(), JitError> {
        let seg = self.plan.segments[k].clone();
        let targets = self.successor_pcs(&seg);
        self.defers = self.may_defer
            && seg.next_pc.is_none()
            && !seg.self_loop
            && matches!(
                self.kernel.blocks[seg.block].term,
                Some(wj::Terminator::Jump(_) | wj::Terminator::Branch { .. })
            );
        if self.may_defer {
            self.decide_deferral(self.defers);
        }
        let after = self.b.create_block();
        // Set by the tracked run, if any.
        let none = self.iconst(types::I32, i64::from(UNI_NONE as i32));
        self.st_store(St::Agree, none);
        self.wave_scalars = self.segment_scalars(&seg)?;
        let insts: Vec<wj::Inst> = seg.runs.iter().flat_map(|r| r.insts.clone()).collect();
        self.wave_sites = self.wave_sites(&insts)?;
        // A converged wave runs a fused segment without pc reads. (One-run
        // segments could too, but their second copy cost more compile time,
        // about 1.7x for the optimized tier, than it saved: nothing
        // measurable on the divergent kernel.)
        let conv = self.b.create_block();
        let general = self.b.create_block();
        let fused = self.fusable(&seg);
        if fused.is_some() {
            let c = self.converged_and_clean();
            self.b.ins().brif(c, conv, &[], general, &[]);
        } else {
            self.b.ins().jump(general, &[]);
        }
        for converged in [true, false] {
            self.b
                .switch_to_block(if converged { conv } else { general });
            if converged && fused.is_none() {
                self.b.ins().jump(general, &[]);
                continue;
            }
            // Two copies, not four: the fused loop only for converged waves
            // (straight-line code is entered converged unless lanes diverged
            // before it), which fall back to the general copy's runs when
            // their ranges overlap.
            if !converged && self.slot_wide {
                self.fresh_wave_pcs();
            }
            self.converged = converged;
            let r = if converged {
                self.fused_body(
                    k,
                    &seg,
                    fused.as_ref(),
                    &targets,
                    (after, wave_next),
                    general,
                )
            } else {
                self.segment_body(k, &seg, &targets, after)
            };
            self.converged = false;
            r?;
        }
        self.b.switch_to_block(after);
        if std::mem::replace(&mut self.defers, false) {
            // Every lane took one edge: one deferred step.
            let d = self.st_load(St::Defer);
            let dfr = self.st_load(St::Deferring);
            let d = self.b.ins().iadd(d, dfr);
            self.st_store(St::Defer, d);
        }
        self.wave_scalars.clear();
        self.wave_sites.clear();
        if targets.is_empty() {
            self.b.ins().jump(sched, &[]);
            return Ok(());
        }
        let uni = self.st_load(St::Uni);
        for pc in targets {
            if pc == UNI_EXIT {
                let exited = self
                    .b
                    .ins()
                    .icmp_imm_s(CC::Equal, uni, i64::from(UNI_EXIT as i32));
                let next = self.b.create_block();
                if self.barriers {
                    // Later rounds skip the wave without looking.
                    let gone = self.b.create_block();
                    self.b.ins().brif(exited, gone, &[], next, &[]);
                    self.b.switch_to_block(gone);
                    let p = self.wave_state_ptr();
                    let done = self.iconst(types::I32, i64::from(WAVE_DONE as i32));
                    self.b.ins().store(MemFlagsData::trusted(), done, p, 0);
                    self.b.ins().jump(wave_next, &[]);
                } else {
                    self.b.ins().brif(exited, wave_next, &[], next, &[]);
                }
                self.b.switch_to_block(next);
                continue;
            }
            let Some(&entry) = entry_of.get(&pc) else {
                continue;
            };
            let hit = self
                .b
                .ins()
                .icmp_imm_s(CC::Equal, uni, i64::from(pc as i32));
            let next = self.b.create_block();
            let go = self.b.create_block();
            self.b.ins().brif(hit, go, &[], next, &[]);
            self.b.switch_to_block(go);
            let pcv = self.iconst(types::I32, i64::from(pc as i32));
            self.st_store(St::Pc, pcv);
            let one = self.iconst(types::I32, 1);
            self.st_store(St::Conv, one);
            self.b.ins().jump(entry, &[]);
            self.b.switch_to_block(next);
        }
        self.two_groups(&seg, sched)
    }

    /// After a segment whose lanes did not all take one edge: when the wave
    /// is in at most two groups at known pcs (a converged wave that branched
    /// both ways, or the group at [`St::Pc`] that all went one way while the
    /// rest wait at [`St::Pend`]), the lower pc runs next and the groups join
    /// where they meet, as the scheduler would find, without its look at
    /// every lane's pc; otherwise the scheduler. Only while no lane of the
    /// batch faulted (a fault would make a lane dead outside both groups).
    fn two_groups(&mut self, seg: &crate::plan::Segment, sched: ir::Block) -> Result<(), JitError> {
        let Some(dispatch_at) = self.dispatch_at else {
            self.b.ins().jump(sched, &[]);
            return Ok(());
        };
        let faulted = self.ctx_load(types::I32, off::FAULTED);
        let clean = self.b.create_block();
        self.b.ins().brif(faulted, sched, &[], clean, &[]);
        self.b.switch_to_block(clean);
        let none = self.iconst(types::I32, i64::from(UNI_NONE as i32));
        let split = match (seg.next_pc, &self.kernel.blocks[seg.block].term) {
            (
                None,
                Some(wj::Terminator::Branch {
                    then, otherwise, ..
                }),
            ) if then.block != otherwise.block => {
                let (a, b) = (
                    self.plan.block_pc[then.block],
                    self.plan.block_pc[otherwise.block],
                );
                Some((a.min(b), a.max(b)))
            }
            _ => None,
        };
        if let Some((lo, hi)) = split {
            // Entered converged and no edge was taken by all: both were.
            let conv = self.st_load(St::Conv);
            let both = self.b.create_block();
            let pending = self.b.create_block();
            self.b.ins().brif(conv, both, &[], pending, &[]);
            self.b.switch_to_block(both);
            if self.may_defer {
                // The groups count their own steps.
                self.flush_deferred_steps();
            }
            let zero = self.iconst(types::I32, 0);
            self.st_store(St::Conv, zero);
            let hi = self.iconst(types::I32, i64::from(hi as i32));
            self.st_store(St::Pend, hi);
            let lo = self.iconst(types::I32, i64::from(lo as i32));
            self.b.ins().jump(dispatch_at, &[lo.into()]);
            self.b.switch_to_block(pending);
        }
        // The group at Pc went one way (`agree`); the rest wait at `pend`.
        let agree = self.st_load(St::Agree);
        let pend = self.st_load(St::Pend);
        let no_pend = self.b.ins().icmp(CC::Equal, pend, none);
        // START (no active lane ran the tracked run) and NONE (lanes differ)
        // are no pcs.
        let unknown = self.b.ins().icmp_imm_u(
            CC::UnsignedGreaterThanOrEqual,
            agree,
            i64::from(UNI_START as i32),
        );
        let give_up = self.b.ins().bor(no_pend, unknown);
        let known = self.b.create_block();
        self.b.ins().brif(give_up, sched, &[], known, &[]);
        self.b.switch_to_block(known);
        // Exited: only the waiting group is left (not converged: the exited
        // lanes are dead).
        let exited = self
            .b
            .ins()
            .icmp_imm_s(CC::Equal, agree, i64::from(UNI_EXIT as i32));
        let gone = self.b.create_block();
        let live = self.b.create_block();
        self.b.ins().brif(exited, gone, &[], live, &[]);
        self.b.switch_to_block(gone);
        self.st_store(St::Pend, none);
        self.b.ins().jump(dispatch_at, &[pend.into()]);
        self.b.switch_to_block(live);
        let met = self.b.ins().icmp(CC::Equal, agree, pend);
        let joined = self.b.create_block();
        let apart = self.b.create_block();
        self.b.ins().brif(met, joined, &[], apart, &[]);
        self.b.switch_to_block(joined);
        // Every lane of the wave is at `pend` again.
        let one = self.iconst(types::I32, 1);
        self.st_store(St::Conv, one);
        if self.may_defer {
            let unknown = self.iconst(types::I32, i64::from(STEPS_UNKNOWN as i32));
            self.st_store(St::MaxSteps, unknown);
        }
        self.st_store(St::Pend, none);
        self.b.ins().jump(dispatch_at, &[pend.into()]);
        self.b.switch_to_block(apart);
        let lo = self.b.ins().umin(agree, pend);
        let hi = self.b.ins().umax(agree, pend);
        self.st_store(St::Pend, hi);
        self.b.ins().jump(dispatch_at, &[lo.into()]);
        Ok(())
    }

    /// Segment `k`'s fused run for the current (converged) wave when it
    /// passes the fused test, else a jump to `otherwise`; then `after`, or
    /// the next wave when the segment exits: every lane of a converged wave
    /// exits with it, and without barriers nothing reads their pcs again in
    /// the batch, so they are not written.
    fn fused_body(
        &mut self,
        k: usize,
        seg: &crate::plan::Segment,
        fused: Option<&fuse::Fused>,
        targets: &[u32],
        (after, wave_next): (ir::Block, ir::Block),
        otherwise: ir::Block,
    ) -> Result<(), JitError> {
        let Some(f) = fused else {
            self.b.ins().jump(otherwise, &[]);
            return Ok(());
        };
        let ok = self.fuse_test(f)?;
        let fits = self.hoist_uniforms(&f.run.insts)?;
        let ok = self.b.ins().band(ok, fits);
        let yes = self.b.create_block();
        let narrow = self.b.create_block();
        self.b.ins().brif(ok, yes, &[], narrow, &[]);
        // A slot-wide visit that cannot fuse runs as the slot's first wave.
        self.b.switch_to_block(narrow);
        if self.slot_wide {
            let zero = self.iconst(types::I32, 0);
            self.st_store(St::Wide, zero);
            let ws = self.ctx_load(types::I32, off::WAVE_SIZE);
            let wgl = self.ctx_load(types::I32, off::WG_LANES);
            let lo = self.st_load(St::Lo);
            let left = self.b.ins().isub(wgl, lo);
            let n = self.b.ins().umin(ws, left);
            self.st_store(St::N, n);
        }
        self.b.ins().jump(otherwise, &[]);
        self.b.switch_to_block(yes);
        self.unnoted = self.unnoted_results(seg.block, &f.run);
        let exits = f.run.term
            && matches!(
                self.kernel.blocks[seg.block].term,
                Some(wj::Terminator::Exit)
            );
        self.quiet_exit = exits && !self.barriers;
        let track = !targets.is_empty() && !self.quiet_exit;
        if track {
            let start = self.iconst(types::I32, i64::from(UNI_START as i32));
            self.st_store(St::Uni, start);
            self.st_store(St::Agree, start);
        }
        self.fused_internal = f.internal.clone();
        let start = if self.g > 1 && self.whole_fast_eligible(&f.run) {
            Some(self.whole_chunks(k, seg, &f.run, track)?)
        } else {
            None
        };
        let r = self.chunk_loop_from(track, start, |this| {
            this.run(k, 0, seg.block, &f.run, seg.next_pc)
        });
        self.fused_internal.clear();
        self.hoisted.clear();
        self.hoisted_flushed.clear();
        let quiet = std::mem::replace(&mut self.quiet_exit, false);
        r?;
        match self.slot_next {
            Some(slot_next) if quiet && self.slot_wide => {
                // The whole slot ran: on to the next.
                let wide = self.st_load(St::Wide);
                let zero = self.iconst(types::I32, 0);
                self.st_store(St::Wide, zero);
                self.b.ins().brif(wide, slot_next, &[], wave_next, &[]);
            }
            _ => {
                self.b
                    .ins()
                    .jump(if quiet { wave_next } else { after }, &[]);
            }
        }
        Ok(())
    }

    /// Whether the fused `run` can have a whole-chunk loop: every memory
    /// access is a uniform load hoisted before the loop or a contiguous
    /// word access with a wave-level test.
    fn whole_fast_eligible(&self, run: &Run) -> bool {
        run.insts.iter().all(|&i| {
            let data = &self.kernel.insts[i];
            match &data.kind {
                InstKind::Load(a) if a.space == wj::AddrSpace::Uniform => {
                    self.hoisted.contains_key(&i)
                }
                InstKind::Load(a) | InstKind::Store(a) => {
                    matches!(a.space, wj::AddrSpace::Global | wj::AddrSpace::Shared)
                        && mem::word(a)
                        && !mem::quad(a)
                        && self.stride(data.args[0]) == Some(4)
                        && self.wave_sites.contains_key(&i)
                }
                InstKind::Atomic { .. } => false,
                _ => true,
            }
        })
    }

    /// Before a converged wave's fused chunk loop: when every wave-level
    /// memory test of `run` passed, its whole chunks
    /// run in a loop of their own with no per-chunk tests but the NaN
    /// rule's and the stores' look at the fault flag: every lane active,
    /// every access the chunk's vectors at the wave's host address. It stops
    /// after a chunk in which a lane of the batch faulted (only a redo on
    /// the exact path could), and a store of that chunk takes the helper.
    /// Returns the chunk offset (i32) the general fused loop goes on from:
    /// 0 when the tests failed.
    fn whole_chunks(
        &mut self,
        k: usize,
        seg: &crate::plan::Segment,
        run: &Run,
        track: bool,
    ) -> Result<ir::Value, JitError> {
        let mut ok = self.iconst(types::I8, 1);
        for i in &run.insts {
            if let Some(&(okw, _)) = self.wave_sites.get(i) {
                ok = self.b.ins().band(ok, okw);
            }
        }
        let l = chunk_lanes(self.g) as i64;
        let pre = self.b.create_block();
        let head = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        let c = self.b.append_block_param(head, types::I32);
        let out = self.b.append_block_param(exit, types::I32);
        let zero = self.iconst(types::I32, 0);
        self.b.ins().brif(ok, pre, &[], exit, &[zero.into()]);
        self.b.switch_to_block(pre);
        let hw_flush = inst::hardware_flush_run(self.kernel, &run.insts);
        // (A loop without host arithmetic keeps the function's.)
        let switch = hw_flush != inst::HwFlush::Off && hw_flush != self.kernel_hw;
        if switch {
            self.float_env(hw_flush as i64);
        }
        // The helpers (the NaN rule's redo) read the mask from the slot.
        let ones = self.iconst(types::I32, -1);
        let ones = self.b.ins().splat(types::I32X4, ones);
        let mask = vec![ones; self.g];
        self.store_mask(&mask);
        let zero = self.iconst(types::I32, 0);
        self.b.ins().jump(head, &[zero.into()]);
        self.b.switch_to_block(head);
        let n = self.st_load(St::N);
        let whole = self.b.ins().band_imm_s(n, -l);
        let more = self.b.ins().icmp(CC::UnsignedLessThan, c, whole);
        let faulted = self.ctx_load(types::I32, off::FAULTED);
        let clean = self.b.ins().icmp_imm_s(CC::Equal, faulted, 0);
        let go = self.b.ins().band(more, clean);
        // Every way out of the loop passes here, with the chunk the general
        // loop goes on from.
        let leave = self.b.create_block();
        let from = self.b.append_block_param(leave, types::I32);
        self.b.ins().brif(go, body, &[], leave, &[c.into()]);
        self.b.switch_to_block(leave);
        if switch {
            self.float_env(self.kernel_hw as i64);
        }
        self.b.ins().jump(exit, &[from.into()]);
        self.b.switch_to_block(body);
        // Every lane of the chunk exists and is active (what the tracked
        // loop's successor notes need to know).
        let one = self.iconst(types::I8, 1);
        self.start_chunk(c, track.then_some(one), Some(one));
        let ones = self.splat(-1, false);
        let mask = vec![ones; self.g];
        self.mask_cache = Some(mask.clone());
        self.chunk_mask = Some(mask);
        self.whole_fast = true;
        self.hw_flush = hw_flush;
        self.varying = inst::varying(self.kernel, &run.insts);
        self.whole_leave = Some((leave, c));
        self.calls_in_chunk = 0;
        let r = self.run(k, 0, seg.block, run, seg.next_pc);
        self.whole_fast = false;
        self.hw_flush = inst::HwFlush::Off;
        self.varying.clear();
        self.whole_leave = None;
        r?;
        let next = self.b.ins().iadd_imm_s(c, l);
        self.b.ins().jump(head, &[next.into()]);
        self.b.switch_to_block(exit);
        self.end_chunks();
        Ok(out)
    }

    /// Whether the kernel is one segment that runs fused and exits, with no
    /// barrier: then a slot's waves, all at the start in the first round,
    /// can run as one wave of the whole slot. Wave after wave, each wave's
    /// fused loop is the same sequence of chunks as one loop over the slot,
    /// and the fused test over the slot's ranges implies every wave's (a
    /// wave's ranges are the slot's shifted by the same amount). A slot
    /// that fails the test runs wave by wave.
    fn slot_wide_kernel(&self) -> bool {
        // Unreachable segments never run (a lifter's dead tail, say).
        let mut live = self.plan.segments.iter().filter(|s| s.reachable);
        let first_live = self.plan.segments.first().is_some_and(|s| s.reachable);
        if self.barriers || live.nth(1).is_some() || !first_live {
            return false;
        }
        let seg = &self.plan.segments[0];
        seg.next_pc.is_none()
            && matches!(
                self.kernel.blocks[seg.block].term,
                Some(wj::Terminator::Exit)
            )
            && self.plan.kinds.first() == Some(&PcKind::Segment(0))
            && self.fusable(seg).is_some()
    }

    /// Segment `k`'s runs for the current wave, then a jump to `after`.
    fn segment_body(
        &mut self,
        k: usize,
        seg: &crate::plan::Segment,
        targets: &[u32],
        after: ir::Block,
    ) -> Result<(), JitError> {
        let last = seg.runs.len().saturating_sub(1);
        if seg.self_loop
            && let [run] = &seg.runs[..]
        {
            // Each chunk runs all its iterations before the next chunk (the
            // plan's lane-major loop: nothing in it writes memory others
            // see, and it leaves only to higher pcs); then the scheduler.
            self.unnoted = self.unnoted_results(seg.block, run);
            let pc = self.plan.block_pc[seg.block];
            let uni = self.iconst(types::I32, i64::from(UNI_NONE as i32));
            self.st_store(St::Uni, uni);
            if self.holds_in_registers(seg.block) {
                self.chunk_loop(|this| this.iterate_chunk_held(k, seg.block, run))?;
            } else {
                self.chunk_loop(|this| this.iterate_chunk(k, seg.block, run, pc))?;
            }
            self.b.ins().jump(after, &[]);
            return Ok(());
        }
        for (r, run) in seg.runs.iter().enumerate() {
            let end_pc = if r == last { seg.next_pc } else { None };
            self.unnoted = self.unnoted_results(seg.block, run);
            let track = r == last && !targets.is_empty();
            if track {
                let start = self.iconst(types::I32, i64::from(UNI_START as i32));
                self.st_store(St::Uni, start);
                self.st_store(St::Agree, start);
            }
            self.chunk_loop_tracked(track, |this| this.run(k, r, seg.block, run, end_pc))?;
        }
        self.b.ins().jump(after, &[]);
        Ok(())
    }

    /// A self-loop block for the current chunk, iteration after iteration
    /// while some lane takes the back edge to `pc` (its lanes then are
    /// exactly the next iteration's: every other lane of the chunk was not at
    /// `pc`, or left, faulted or stopped at the step limit).
    fn iterate_chunk(
        &mut self,
        k: usize,
        block: wj::Block,
        run: &Run,
        pc: u32,
    ) -> Result<(), JitError> {
        let head = self.b.create_block();
        let done = self.b.create_block();
        // The step counters live in registers across iterations.
        let lane0 = self.chunk()?.lane0;
        let steps = self.ctx_load(types::I64, off::STEPS);
        let mut held: Vec<ir::BlockArg> = Vec::with_capacity(self.g);
        for kk in 0..self.g {
            let p = self.lane_ptr(steps, lane0, kk);
            held.push(self.b.ins().load(types::I32X4, guest(), p, 0).into());
        }
        self.b.ins().jump(head, &held);
        self.b.switch_to_block(head);
        let params: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(head, types::I32X4))
            .collect();
        self.loop_steps = Some(params);
        // Nothing computed in the last iteration holds in this one.
        self.env.clear();
        self.consts.clear();
        self.senv.clear();
        self.redo = vec![None; self.g];
        self.mask_cache = None;
        let m = self.load_mask();
        self.mask_cache = Some(m.clone());
        self.chunk_mask = Some(m);
        let r = self.run(k, 0, block, run, None);
        let held = self.loop_steps.take().unwrap_or_default();
        r?;
        let (lane0, c) = {
            let ch = self.chunk()?;
            (ch.lane0, ch.c)
        };
        let pcs = self.ctx_load(types::I64, off::PC);
        let pcv = self.splat(i64::from(pc), false);
        let n = self.st_load(St::N);
        let left = self.lanes_left(c, n);
        let mut any = None;
        for kk in 0..self.g {
            let p = self.lane_ptr(pcs, lane0, kk);
            let x = self.b.ins().load(types::I32X4, guest(), p, 0);
            let at = self.b.ins().icmp(CC::Equal, x, pcv);
            let v = self.valid(left, kk);
            let m = self.b.ins().band(at, v);
            self.b
                .ins()
                .stack_store(types::I64, m, self.mask_slot, 16 * kk as i32);
            any = Some(match any {
                None => m,
                Some(a) => self.b.ins().bor(a, m),
            });
        }
        let any = any.ok_or(JitError::Malformed("empty chunk"))?;
        let again = self.b.ins().vany_true(any);
        let args: Vec<ir::BlockArg> = held.iter().map(|&v| v.into()).collect();
        if args.len() != self.g {
            return Err(JitError::Malformed("self-loop step counters"));
        }
        self.b.ins().brif(again, head, &args, done, &args);
        self.b.switch_to_block(done);
        let out: Gv = (0..self.g)
            .map(|_| self.b.append_block_param(done, types::I32X4))
            .collect();
        let steps = self.ctx_load(types::I64, off::STEPS);
        for (kk, &s) in out.iter().enumerate() {
            let p = self.lane_ptr(steps, lane0, kk);
            self.b.ins().store(guest(), s, p, 0);
        }
        Ok(())
    }

    /// The pcs a uniform successor of segment `seg` can be (none for exits
    /// and tables: those go through the scheduler).
    fn successor_pcs(&self, seg: &crate::plan::Segment) -> Vec<u32> {
        if let Some(pc) = seg.next_pc {
            return vec![pc];
        }
        let mut pcs: Vec<u32> = match &self.kernel.blocks[seg.block].term {
            Some(wj::Terminator::Jump(c)) => vec![self.plan.block_pc[c.block]],
            Some(wj::Terminator::Branch {
                then, otherwise, ..
            }) => {
                vec![
                    self.plan.block_pc[then.block],
                    self.plan.block_pc[otherwise.block],
                ]
            }
            Some(wj::Terminator::Exit) => vec![UNI_EXIT],
            _ => Vec::new(),
        };
        pcs.dedup();
        pcs
    }

    /// The results of `run` whose NaN needs no test: not read by other runs or
    /// the terminator, and read here only by inline f32 arithmetic (whose
    /// result is NaN too and tested, or again of this kind).
    fn unnoted_results(&self, block: wj::Block, run: &Run) -> std::collections::HashSet<wj::Value> {
        let mut bad = std::collections::HashSet::new();
        for &inst in &run.insts {
            if !inst::propagates_nan(self.kernel, inst) {
                bad.extend(self.kernel.insts[inst].args.iter().copied());
            }
        }
        if run.term
            && let Some(t) = &self.kernel.blocks[block].term
        {
            bad.extend(t.uses());
        }
        run.insts
            .iter()
            .flat_map(|&i| self.kernel.insts[i].results.iter().copied())
            .filter(|v| !self.plan.spill[*v] && !bad.contains(v))
            .collect()
    }

    /// One run for the current chunk (run `r` of segment `seg`).
    fn run(
        &mut self,
        seg: usize,
        r: usize,
        block: wj::Block,
        run: &Run,
        end_pc: Option<u32>,
    ) -> Result<(), JitError> {
        self.no_redo = run.insts.iter().any(|&i| {
            matches!(&self.kernel.insts[i].kind, InstKind::Store(a) if a.space == wj::AddrSpace::Private)
        });
        // Notes come only from inline float arithmetic: the redo test can
        // follow the last of it, so fewer values cross its join.
        let last_noting = run.insts.iter().rposition(|&i| {
            matches!(
                self.kernel.insts[i].kind,
                InstKind::FBinary { .. } | InstKind::Fma { .. } | InstKind::FUnary { .. }
            )
        });
        for (i, &inst) in run.insts.iter().enumerate() {
            let kind = &self.kernel.insts[inst].kind;
            if is_sync(kind) {
                return Err(JitError::Malformed("sync instruction inside a segment"));
            }
            if i > 0 && visible_write(kind) {
                // The redo must come before the store, which it cannot repeat;
                // what the rest of the run and the terminator read is live.
                let live = self.read_from(block, run, i);
                self.redo_if_noted(seg, r, i, &live)?;
            }
            if self.lazy(inst) {
                // Computed where it is first read (a memory access with an
                // affine address may never need its vectors).
                continue;
            }
            if matches!(self.kernel.insts[inst].results[..], [r] if self.ls_scalar(r)) {
                // Computed once per pass, before the lanes' work.
                continue;
            }
            if !self.inst(inst)? {
                // A trap: the chunk's lanes are done with the run.
                return Ok(());
            }
            if last_noting == Some(i) && i + 1 < run.insts.len() {
                let live = self.read_from(block, run, i + 1);
                self.redo_if_noted(seg, r, i + 1, &live)?;
            }
        }
        let live = match &self.kernel.blocks[block].term {
            Some(t) if run.term => t.uses(),
            _ => Vec::new(),
        };
        self.redo_if_noted(seg, r, run.insts.len(), &live)?;
        if run.term {
            if self.ls.is_some() {
                self.ls_terminator(block)?;
            } else if self.held.as_ref().is_some_and(|h| h.block == block) {
                self.held_terminator(block)?;
            } else {
                self.terminator(block)?;
            }
        } else if let Some(pc) = end_pc {
            let target = self.splat(i64::from(pc), false);
            self.set_pcs(|_, _| Ok(target))?;
            let pc = self.iconst(types::I32, i64::from(pc as i32));
            self.note_successor(pc)?;
        }
        Ok(())
    }

    /// The values `run`'s instructions from index `from` on, and its
    /// terminator if it has it, read.
    fn read_from(&self, block: wj::Block, run: &Run, from: usize) -> Vec<wj::Value> {
        let mut live: Vec<wj::Value> = run.insts[from..]
            .iter()
            .flat_map(|&j| self.kernel.insts[j].args.iter().copied())
            .collect();
        if run.term
            && let Some(t) = &self.kernel.blocks[block].term
        {
            live.extend(t.uses());
        }
        live
    }

    /// When an active lane noted a result the host may have computed
    /// differently (see `inst`), the helper redoes the run's instructions
    /// before `stop` for the chunk's active lanes with the interpreter's
    /// semantics, writing every result to the slab; the values `used` after
    /// this point are then read from there.
    fn redo_if_noted(
        &mut self,
        seg: usize,
        r: usize,
        stop: usize,
        used: &[wj::Value],
    ) -> Result<(), JitError> {
        let redo = std::mem::replace(&mut self.redo, vec![None; self.g]);
        if redo.iter().all(Option::is_none) {
            return Ok(());
        }
        // Lanes that faulted since the chunk started may count here: the
        // helper then redoes only the lanes still active.
        let mask = match &self.chunk_mask {
            Some(m) => m.clone(),
            None => self.mask(),
        };
        let mut any = None;
        for (e, &m) in redo.iter().zip(&mask) {
            let Some(e) = *e else { continue };
            // A converged wave's inactive lanes are past its end (the last
            // chunk only): a NaN there asks for a redo that changes nothing,
            // cheaper than the test on every chunk.
            let e = if self.converged {
                e
            } else {
                self.b.ins().band(e, m)
            };
            any = Some(match any {
                None => e,
                Some(a) => self.b.ins().bor(a, e),
            });
        }
        let Some(any) = any else {
            return Ok(());
        };
        let any = self.b.ins().vany_true(any);
        let wrote = self
            .plan
            .segments
            .get(seg)
            .and_then(|s| s.runs.get(r))
            .is_none_or(|run| {
                run.insts[..stop.min(run.insts.len())]
                    .iter()
                    .any(|&i| visible_write(&self.kernel.insts[i].kind))
            });
        if let Some((leave, c)) = self.whole_leave
            && !wrote
        {
            // Nothing of the chunk is in memory yet: the general loop
            // runs it again, redo included.
            let on = self.b.create_block();
            self.b.ins().brif(any, leave, &[c.into()], on, &[]);
            self.b.switch_to_block(on);
            return Ok(());
        }
        // The values used after this point that this run computed.
        let mut live: Vec<wj::Value> = Vec::new();
        for &v in used {
            if self.env.contains_key(&v) && !live.contains(&v) {
                live.push(v);
            }
        }
        let cold = self.b.create_block();
        let join = self.b.create_block();
        let mut fast: Vec<ir::BlockArg> = Vec::new();
        let mut params: Vec<Gv> = Vec::new();
        for &v in &live {
            let g = self.env[&v].clone();
            let ty = self.kernel.value_type(v);
            let vt = if ty == Type::I1 || !wide(ty) {
                types::I32X4
            } else {
                types::I64X2
            };
            let mut p = Vec::with_capacity(g.len());
            for &x in &g {
                let x = if vt == types::I64X2 {
                    self.i64x2_of(x)
                } else {
                    self.i32x4_of(x)
                };
                fast.push(x.into());
                p.push(self.b.append_block_param(join, vt));
            }
            params.push(p);
        }
        // The mask goes through the join too, so the fast path keeps it in
        // registers.
        let cached = self.mask_cache.clone();
        let mask_params: Option<Gv> = cached.as_ref().map(|m| {
            fast.extend(m.iter().map(|&x| ir::BlockArg::from(x)));
            m.iter()
                .map(|_| self.b.append_block_param(join, types::I32X4))
                .collect()
        });
        self.b.set_cold_block(cold);
        self.b.ins().brif(any, cold, &[], join, &fast);
        self.b.switch_to_block(cold);
        let slow = self.cold(|this| {
            // The redo reads the run's operands from the slab.
            this.flush_held()?;
            if let Some(run) = this.plan.segments.get(seg).and_then(|s| s.runs.get(r)) {
                this.ls_flush_operands(&run.clone(), stop)?;
            }
            let bits = this.mask_ptr();
            let lane0 = this.chunk()?.lane0;
            let lane0 = this.b.ins().ireduce(types::I32, lane0);
            let seg = this.iconst(types::I32, seg as i64);
            // Run and stop index in one word (a run has far fewer than 2^16).
            let r = this.iconst(types::I32, ((r as i64) << 16) | stop as i64);
            let f = this.iconst(types::I64, super::helpers::wj_gang_redo as *const () as i64);
            let call_args = [this.ctx, seg, r, lane0, bits];
            this.call_helper(Helper::Redo, f, &call_args);
            this.mask_cache = None;
            let mut slow: Vec<ir::BlockArg> = Vec::new();
            for &v in &live {
                this.env.remove(&v);
                let g = this.val(v)?;
                let ty = this.kernel.value_type(v);
                for x in g {
                    let x = if ty != Type::I1 && wide(ty) {
                        this.i64x2_of(x)
                    } else {
                        this.i32x4_of(x)
                    };
                    slow.push(x.into());
                }
            }
            if cached.is_some() {
                let m = this.load_mask();
                slow.extend(m.iter().map(|&x| ir::BlockArg::from(x)));
            }
            Ok(slow)
        })?;
        self.b.ins().jump(join, &slow);
        self.b.switch_to_block(join);
        for (&v, p) in live.iter().zip(params) {
            self.env.insert(v, p);
        }
        if let Some(m) = mask_params {
            self.mask_cache = Some(m);
        }
        Ok(())
    }

    /// Whether `inst` is left for its first reader to compute (see [`lazy_values`]).
    fn lazy(&self, inst: wj::Inst) -> bool {
        let data = &self.kernel.insts[inst];
        matches!(data.results[..], [r] if self.lazy.contains(&r))
    }

    /// Writes the pcs of the chunk's active lanes: `f(this, k)` gives vector
    /// `k`'s new pcs for them.
    fn set_pcs(
        &mut self,
        mut f: impl FnMut(&mut Self, usize) -> Result<ir::Value, JitError>,
    ) -> Result<(), JitError> {
        let lane0 = self.chunk()?.lane0;
        let mask = self.mask();
        let pcs = self.ctx_load(types::I64, off::PC);
        for (k, &m) in mask.iter().enumerate() {
            let new = f(self, k)?;
            let p = self.lane_ptr(pcs, lane0, k);
            let old = self.b.ins().load(types::I32X4, guest(), p, 0);
            let x = self.b.ins().bitselect(m, new, old);
            self.b.ins().store(guest(), x, p, 0);
        }
        Ok(())
    }

    /// Address of value `v`'s slab area for the current chunk.
    fn slab_ptr(&mut self, v: wj::Value) -> Result<ir::Value, JitError> {
        let lane0 = self.chunk()?.lane0;
        let w = wide(self.kernel.value_type(v));
        let regs = self.ctx_load(types::I64, off::REGS);
        let offs = self.b.ins().ishl_imm_s(lane0, if w { 3 } else { 2 });
        let p = self.b.ins().iadd(regs, offs);
        let area = v.as_u32() as i64 * self.lanes as i64 * 8;
        Ok(self.b.ins().iadd_imm_s(p, area))
    }

    /// Vectors of a value of type `ty` per chunk.
    fn vecs(&self, ty: Type) -> usize {
        if wide(ty) { 2 * self.g } else { self.g }
    }

    /// IR value `v` for the current chunk: computed in this run, a constant,
    /// or read from the slab.
    fn val(&mut self, v: wj::Value) -> Result<Gv, JitError> {
        if let Some(g) = self.env.get(&v) {
            return Ok(g.clone());
        }
        if self.ls_scalar(v) {
            let g = self.ls_splat(v)?;
            self.env.insert(v, g.clone());
            return Ok(g);
        }
        let ty = self.kernel.value_type(v);
        let g = if let Some(bits) = crate::plan::const_bits(self.kernel, v) {
            let bits = if ty == Type::I1 {
                if bits & 1 != 0 { -1 } else { 0 }
            } else {
                bits as i64
            };
            vec![self.splat(bits, wide(ty)); self.vecs(ty)]
        } else if self.remat.contains(&v)
            && (self.ls.is_some() || !(self.plan.spill[v] && self.slab_read.contains(&v)))
            && let wj::ValueDef::Result { inst, .. } = self.kernel.values[v].def
        {
            // Computed again here: a few vector ops instead of a slab read
            // (values the slab holds anyway are read).
            let outer = std::mem::replace(&mut self.rematerializing, true);
            let r = self.inst(inst);
            self.rematerializing = outer;
            r?;
            return self
                .env
                .get(&v)
                .cloned()
                .ok_or(JitError::Malformed("recomputed value"));
        } else {
            let p = self.slab_ptr(v)?;
            let vt = if wide(ty) { types::I64X2 } else { types::I32X4 };
            let mut g = Vec::with_capacity(self.vecs(ty));
            for k in 0..self.vecs(ty) {
                let x = self
                    .b
                    .ins()
                    .load(vt, MemFlagsData::new().with_notrap(), p, 16 * k as i32);
                g.push(x);
            }
            if ty == Type::I1 {
                let zero = self.splat(0, false);
                g = g
                    .into_iter()
                    .map(|x| self.b.ins().icmp(CC::NotEqual, x, zero))
                    .collect();
            }
            g
        };
        self.env.insert(v, g.clone());
        Ok(g)
    }

    /// Defines IR value `v` for the current chunk, writing it to the slab
    /// (active lanes only) when other runs read it.
    fn def(&mut self, v: wj::Value, g: Gv) -> Result<(), JitError> {
        // (In lockstep a redo first writes the run's operands itself.)
        let recomputed_elsewhere =
            self.remat.contains(&v) && (self.ls.is_some() || !self.slab_read.contains(&v));
        if self.spilled(v)
            && !self.rematerializing
            && !recomputed_elsewhere
            && !self.fused_internal.contains(&v)
        {
            if let Some(h) = self.held.as_mut() {
                // A held loop writes it when its lanes leave.
                h.exports.push(v);
            } else {
                let mask = self.mask();
                self.write_slab(v, &g, &mask)?;
            }
        }
        self.env.insert(v, g);
        Ok(())
    }

    /// Whether `def` writes `v` to the slab: what other runs read, or in
    /// lockstep (a chunk's runs of one block share its values) what another
    /// block, the other side of a barrier or a redo reads.
    fn spilled(&self, v: wj::Value) -> bool {
        match self.ls.as_deref() {
            Some(ls) => ls.spill.contains(&v),
            None => self.plan.spill[v],
        }
    }

    /// Writes the lanes of `g` selected by `mask` (`I32X4` lanes) to `v`'s slab area.
    fn write_slab(
        &mut self,
        v: wj::Value,
        g: &[ir::Value],
        mask: &[ir::Value],
    ) -> Result<(), JitError> {
        let ty = self.kernel.value_type(v);
        let p = self.slab_ptr(v)?;
        let (mask, vt) = if wide(ty) {
            (self.wide_mask(mask), types::I64X2)
        } else {
            (mask.to_vec(), types::I32X4)
        };
        let one = self.splat(1, false);
        let flags = MemFlagsData::new().with_notrap();
        for (k, (&x, &m)) in g.iter().zip(&mask).enumerate() {
            let x = if ty == Type::I1 {
                self.b.ins().band(x, one)
            } else if wide(ty) {
                self.i64x2_of(x)
            } else {
                self.i32x4_of(x)
            };
            let old = self.b.ins().load(vt, flags, p, 16 * k as i32);
            let y = self.b.ins().bitselect(m, x, old);
            self.b.ins().store(flags, y, p, 16 * k as i32);
        }
        let _ = vt;
        Ok(())
    }

    /// Scratch operand `j`'s address.
    fn scratch_at(&mut self, j: usize) -> ir::Value {
        let at = (j * chunk_lanes(self.g) * 8) as i32;
        self.b.ins().stack_addr(types::I64, self.scratch, at)
    }

    /// Stores a gang value as scratch operand `j` (the helpers' format).
    fn write_scratch(&mut self, j: usize, ty: Type, g: &[ir::Value]) {
        let p = self.scratch_at(j);
        let one = self.splat(1, false);
        for (k, &x) in g.iter().enumerate() {
            let x = if ty == Type::I1 {
                self.b.ins().band(x, one)
            } else {
                x
            };
            self.b
                .ins()
                .store(MemFlagsData::trusted(), x, p, 16 * k as i32);
        }
    }

    /// Reads scratch operand `j` as a gang value of type `ty`.
    fn read_scratch(&mut self, j: usize, ty: Type) -> Gv {
        let p = self.scratch_at(j);
        let vt = if wide(ty) { types::I64X2 } else { types::I32X4 };
        let zero = self.splat(0, false);
        (0..self.vecs(ty))
            .map(|k| {
                let x = self
                    .b
                    .ins()
                    .load(vt, MemFlagsData::trusted(), p, 16 * k as i32);
                if ty == Type::I1 {
                    self.b.ins().icmp(CC::NotEqual, x, zero)
                } else {
                    x
                }
            })
            .collect()
    }

    /// Calls a chunk helper (`wj_gang_pure` / `wj_gang_access`) for `inst`
    /// with its arguments in scratch and returns its results; lanes that
    /// fault drop out of the mask (the helper clears them).
    fn call_chunk_helper(
        &mut self,
        inst: wj::Inst,
        helper: *const (),
    ) -> Result<Vec<Gv>, JitError> {
        let data = &self.kernel.insts[inst];
        let (args, results) = (data.args.clone(), data.results.clone());
        if args.len() > PURE_MAX_ARGS
            || args.len() + results.len() > PURE_MAX_ARGS + PURE_MAX_RESULTS
        {
            return Err(JitError::Malformed("too many operands"));
        }
        // Every operand first: computing one may call a helper, which uses
        // the scratch buffer too.
        let mut gangs = Vec::with_capacity(args.len());
        for &a in &args {
            gangs.push(self.val(a)?);
        }
        for (j, (&a, g)) in args.iter().zip(&gangs).enumerate() {
            let ty = self.kernel.value_type(a);
            self.write_scratch(j, ty, g);
        }
        let mask = self.mask_ptr();
        let lane0 = self.chunk()?.lane0;
        let lane0 = self.b.ins().ireduce(types::I32, lane0);
        let code = self.iconst(types::I32, i64::from(inst.as_u32()));
        let buf = self.scratch_at(0);
        let f = self.iconst(types::I64, helper as i64);
        let call_args = [self.ctx, code, lane0, mask, buf];
        self.call_helper(Helper::Chunk, f, &call_args);
        // The helper clears the lanes that fault.
        self.mask_cache = None;
        let mut out = Vec::with_capacity(results.len());
        for (r, &v) in results.iter().enumerate() {
            let ty = self.kernel.value_type(v);
            out.push(self.read_scratch(args.len() + r, ty));
        }
        Ok(out)
    }

    /// In the current (cold) block: `helper` computes `inst` for the chunk,
    /// and its first result's vectors go to `join`'s parameters; continues in
    /// `join`.
    fn helper_into(
        &mut self,
        inst: wj::Inst,
        helper: *const (),
        join: ir::Block,
    ) -> Result<(), JitError> {
        let out = self.cold(|this| this.call_chunk_helper(inst, helper))?;
        let out = out
            .into_iter()
            .next()
            .ok_or(JitError::Malformed("helper without result"))?;
        let args: Vec<ir::BlockArg> = out.iter().map(|&v| v.into()).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        Ok(())
    }

    /// Runs `f` to emit code in a cold block: values and constants it creates
    /// there do not dominate the code after the join, so they are forgotten.
    fn cold<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, JitError>) -> Result<T, JitError> {
        let (env, consts, senv) = (self.env.clone(), self.consts.clone(), self.senv.clone());
        let r = f(self);
        self.env = env;
        self.consts = consts;
        self.senv = senv;
        r
    }
}
