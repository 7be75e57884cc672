//! RV32IMF SIMT lifter: device kernels (datasheet `rv32-gpgpu.md`) into wavejit IR.
//!
//! Model:
//! - One IR lane per hart; mhartid = block_linear << 13 | warp << 5 | lane with
//!   32-lane waves (dispatch the kernel with `wave_size` 32, workgroups = device
//!   blocks). Lanes diverge freely; each has its own pc.
//! - Guest state (x1..x31, f0..f31, fflags, frm, retired-instruction count) lives
//!   in SSA values; a guest basic block is an IR block whose parameters are the
//!   state it needs (liveness over the discovered CFG). State never written is the
//!   launch constant 0.
//! - A lane ends at `ebreak`, or at `jalr x0, 0(x1)` while x1 == 0.
//! - Memory: guest address = VRAM offset = global address (zero-extended); the
//!   ID window at 0x8000_0000 reads the lane's IDs (see [`mem`]).
//! - Computed `jalr` targets go through one hub block that binary-searches the
//!   known block starts; any other target traps naming the jalr, or with
//!   [`LiftConfig::resume`] leaves the lane resumably for the runtime to lift
//!   there ([`resume`]; `fence.i` then leaves too). A target the range
//!   analysis decides (e.g. a base register still at its launch value 0) is
//!   discovered as code too, so `jalr ra, 0(t0)` with t0 = 0 runs address 0.
//! - Discovery reads only what a lane can reach (module `discover`); with
//!   resumable exits it is lazy (bounded per lift, not per program).
//! - Faults: `Trap { code }` where `code` indexes [`LiftedKernel::traps`]
//!   (illegal word, fetch outside code memory, misaligned/unknown target, ecall,
//!   invalid frm at a `dyn` instruction, cycle limit). Memory faults are the IR's.
//! - Cycle limit (datasheet §4.4 rec.: instructions retired per lane): each block
//!   adds its instruction count to the lane's counter (ebreak counts) and, at its
//!   end, traps if the counter exceeds the limit. A lane that retires exactly
//!   `limit` instructions completes; one more faults. Set the dispatch's IR
//!   `step_limit` to `u64::MAX` (the counter is exact; see [`LiftedKernel::step_limit`]).

mod consts;
pub mod context;
mod discover;
mod emit;
mod fp;
mod int;
mod liveness;
pub mod mem;
mod merge;
mod range;
pub mod resume;
pub mod trap;
mod watchdog;

use std::collections::{BTreeMap, BTreeSet};

use wavejit_ir::{Kernel, Terminator};

pub use context::{LANE_BYTES, LaneContext};
pub use mem::{ID_WINDOW_BASE, ID_WINDOW_SIZE};
pub use resume::{LaneState, ResumeConfig, STATE_BYTES};
pub use trap::{TrapCause, TrapSite};

use discover::{BlockEnd, GuestBlock};
use emit::{Emitter, End, var_type};
use liveness::{
    ALL_VARS, Dest, ICOUNT, JalrTargets, NVARS, Resolved, bit, dests, is_ret, static_jalr_target,
};

use super::{Csr, Instr, XReg};

/// Datasheet §4.4: a warp (here: a lane) may run 100,000 cycles (instructions).
pub const DEFAULT_CYCLE_LIMIT: u32 = 100_000;

/// What to lift and how.
#[derive(Clone, Debug)]
pub struct LiftConfig {
    /// Kernel name (fault messages).
    pub name: String,
    /// Instructions a lane may retire; `None`: no limit (the IR step limit then
    /// remains the only watchdog).
    pub cycle_limit: Option<u32>,
    /// Global address of the per-lane context records (see [`context`]); `None`
    /// skips recording.
    pub context_base: Option<u64>,
    /// More valid `jalr` targets / block starts (e.g. ELF function symbols).
    pub extra_entries: Vec<u32>,
    /// Bound on decoded instructions.
    pub max_instructions: usize,
    /// The only grid the kernel will be dispatched with, if known: ID-window
    /// reads and mhartid then have known ranges, which can prove more loads
    /// outside the window. The lifted kernel is valid for this shape only.
    pub shape: Option<DispatchShape>,
    /// Resumable exits ([`resume`]): unknown jump targets and `fence.i` leave
    /// the lane for the runtime instead of trapping / doing nothing, and
    /// discovery is lazy (`max_instructions` bounds one lift's discovery, not
    /// the program). `None`: a static lift of everything reachable.
    pub resume: Option<ResumeConfig>,
}

pub use wavejit_ir::DispatchShape;
use wavejit_ir::transform::{
    eliminate_common_subexpressions, fold_constants, hoist_loop_invariants, relax_canonical_nan,
    simplify_bits,
};

impl Default for LiftConfig {
    fn default() -> Self {
        LiftConfig {
            name: "rv32".into(),
            cycle_limit: Some(DEFAULT_CYCLE_LIMIT),
            context_base: None,
            extra_entries: Vec::new(),
            max_instructions: 1 << 18,
            shape: None,
            resume: None,
        }
    }
}

/// Why a program could not be lifted at all (run-time problems are traps).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LiftError {
    #[error("entry pc {0:#010x} is not 4-byte aligned")]
    MisalignedEntry(u32),
    #[error("more than {limit} instructions reachable")]
    TooLarge { limit: usize },
    /// Lazy discovery (resumable exits): the blocks at the pcs lanes wait at
    /// alone need more than `limit` instructions.
    #[error("more than {limit} instructions to lift for the code the lanes run")]
    RunsTooMuch { limit: usize },
}

/// A lifted kernel and what is needed to interpret its faults.
#[derive(Clone, Debug)]
pub struct LiftedKernel {
    pub kernel: Kernel,
    /// Trap sites; `Trap { code }` is an index into this list.
    pub traps: Vec<TrapSite>,
    /// Every instruction word the lift read, by pc (to detect changed code).
    pub words: BTreeMap<u32, u32>,
    pub entry: u32,
    /// Number of guest basic blocks.
    pub guest_blocks: usize,
    /// The dispatch shape the lift assumed ([`LiftConfig::shape`]).
    pub shape: Option<DispatchShape>,
    /// The discovery roots: the entry, then the extra entries.
    pub roots: Vec<u32>,
    /// How lanes leave and enter ([`LiftConfig::resume`]).
    pub resume: Option<ResumeConfig>,
    /// Lanes may leave resumably (else the kernel is the one a lift without
    /// [`LiftConfig::resume`] gives, and never touches the state area).
    pub leaves: bool,
}

impl LiftedKernel {
    /// The trap site of a `Trap { code }`.
    pub fn trap(&self, code: u32) -> Option<&TrapSite> {
        self.traps.get(code as usize)
    }

    /// The IR step limit to dispatch with: the lifted counter is the watchdog.
    pub fn step_limit(&self) -> u64 {
        u64::MAX
    }

    /// True if the kernel may run with `shape` (it assumed none or this one).
    pub fn fits(&self, shape: &DispatchShape) -> bool {
        self.shape.is_none_or(|s| s == *shape)
    }

    /// True if `fetch` still yields the words this kernel was lifted from.
    pub fn matches(&self, fetch: &dyn Fn(u32) -> Option<u32>) -> bool {
        self.words.iter().all(|(&pc, &w)| fetch(pc) == Some(w))
    }
}

/// Lifts the kernel entered at `entry`; `fetch(pc)` reads a code word (`None`
/// outside code memory).
pub fn lift(
    fetch: &dyn Fn(u32) -> Option<u32>,
    entry: u32,
    opts: &LiftConfig,
) -> Result<LiftedKernel, LiftError> {
    if !entry.is_multiple_of(4) {
        return Err(LiftError::MisalignedEntry(entry));
    }
    let mut roots = vec![entry];
    roots.extend(opts.extra_entries.iter().copied());
    let lift_roots = roots.clone();
    let resumable = opts.resume.is_some();
    // A resume dispatch enters through the hub with any state.
    let resume_entry = opts.resume.is_some_and(|r| r.entry);
    // Ranges on the control flow with every computed jalr through the hub
    // decide some jalr targets; the ranges of that (sound, smaller) control
    // flow are the ones used. A decided target discovery did not reach is
    // discovered too (each round adds a block there, so the rounds end).
    let shape = opts.shape.as_ref();
    let none = JalrTargets::new();
    let (program, first) = loop {
        let program = discover::discover(fetch, &roots, opts.max_instructions, resumable)?;
        let first = range::entry_ranges(&program.blocks, entry, shape, &none);
        let missed = range::undiscovered_jalr_targets(&program.blocks, &first, shape);
        let missed: Vec<u32> = missed
            .into_iter()
            .filter(|t| t.is_multiple_of(4) && !roots.contains(t))
            .collect();
        if missed.is_empty() {
            break (program, first);
        }
        roots.extend(missed);
    };
    let (resolved, ranges_in) = if resume_entry {
        // Ranges and decided targets hold for paths from the launch state
        // only; a resumed lane enters anywhere with any state.
        (JalrTargets::new(), BTreeMap::new())
    } else {
        let resolved = range::jalr_targets(&program.blocks, &first, shape);
        let ranges_in = range::entry_ranges(&program.blocks, entry, shape, &resolved);
        (resolved, ranges_in)
    };
    // Can a lane leave resumably? Then its whole state must be exact there
    // (a kernel whose lanes cannot leave is lifted as without resume).
    let leaves = resume_entry
        || resumable
            && program.blocks.values().any(|b| {
                dests(b, &program.blocks, &resolved)
                    .iter()
                    .any(|d| matches!(d, Dest::Hub | Dest::Resume))
            });
    let dump = opts.context_base.is_some();
    let mut env = liveness::fp_env(&program.blocks, dump);
    if leaves {
        env.track_flags = true;
    }
    if resume_entry {
        env.dynamic_frm = true;
    }
    let checked = match opts.cycle_limit {
        Some(_) if resume_entry => program.blocks.keys().copied().collect(),
        Some(limit) => watchdog::checked_blocks(&program.blocks, entry, limit, &resolved),
        None => BTreeSet::new(),
    };
    let counted = !checked.is_empty() || (leaves && opts.cycle_limit.is_some());
    let mut written = liveness::written(&program.blocks, env, counted);
    if resume_entry {
        // Restored state is not the launch constant.
        written |= ALL_VARS & !bit(ICOUNT);
    }
    // The context record holds no instruction count.
    let exit_uses = if dump { ALL_VARS & !bit(ICOUNT) } else { 0 };
    let live = liveness::live_in(
        &program.blocks,
        env,
        written,
        exit_uses,
        &checked,
        &resolved,
    );

    let mut kernel = Kernel::new(opts.name.clone());
    let prologue = kernel.add_block();
    let mut em = Emitter::new(kernel, prologue, env, opts);
    em.written_vars = (0..NVARS).filter(|&v| written & bit(v) != 0).collect();
    em.leaves = leaves;
    em.ranges_in = ranges_in;
    em.jalr = resolved.clone();
    em.checked = checked;
    em.count_live = live
        .iter()
        .filter(|&(_, &set)| set & bit(ICOUNT) != 0)
        .map(|(&pc, _)| pc)
        .collect();
    // An entry block nothing jumps back to runs right in the prologue block
    // (one IR block less for every lane).
    let inline_entry = !resume_entry
        && program.blocks.contains_key(&entry)
        && !program.blocks.values().any(|b| {
            dests(b, &program.blocks, &resolved)
                .iter()
                .any(|d| *d == Dest::Block(entry) || *d == Dest::Hub)
        });
    if !resume_entry {
        em.merged = merge::merged_blocks(&program.blocks, entry, &resolved, &em.checked);
    }
    for &pc in program.blocks.keys() {
        if em.merged.contains(&pc) {
            continue;
        }
        if inline_entry && pc == entry {
            em.blocks.insert(pc, (prologue, Vec::new()));
            continue;
        }
        let b = em.new_block();
        let set = live.get(&pc).copied().unwrap_or(0);
        let vars: Vec<usize> = (0..NVARS).filter(|&v| set & bit(v) != 0).collect();
        for &v in &vars {
            em.k.add_block_param(b, var_type(v));
        }
        em.blocks.insert(pc, (b, vars));
    }
    em.prologue();
    if resume_entry {
        em.resume_entry();
    } else if !inline_entry {
        let call = em.dest_call(entry);
        em.k.set_terminator(prologue, Terminator::Jump(call));
    }
    // Merged blocks are emitted after their predecessor (they have no IR
    // block of their own: emit_block skips them).
    for gb in program.blocks.values() {
        emit_block(&mut em, gb, &program.blocks);
    }
    em.finish_hub();
    let mut kernel = em.k;
    // The emitter's constants (`lui`/`addi` pairs, x0) fold; then the shape
    // bounds the ids, so the `mhartid` decomposition (`>> 13`, `& (size -
    // 1)`, `|`) becomes `group * size + local`, which the gang core sees as
    // consecutive lanes. Both are exact; a kernel that does not verify (a
    // lifter bug) is left as emitted for the engines' verifier to report.
    if fold_constants(&mut kernel).is_ok()
        && simplify_bits(&mut kernel, opts.shape.as_ref()).is_ok()
    {
        let _ = fold_constants(&mut kernel);
    }
    // Each guest instruction is emitted on its own, so constants (`li` per use,
    // a shift amount per round), address arithmetic and its `zext` (saxpy's
    // load and store of `y[i]`) repeat; an equal dominating instruction now
    // computes them. Exact: only pure instructions and builtins merge (the
    // lifter emits no uniform loads), which cannot fault, so every trap and
    // memory access stays with its guest pc; blocks and terminators are
    // untouched, so the cycle counter, the trap codes (indices into `traps`)
    // and the resume records are as emitted. The compaction renumbers values
    // and instructions, as `fold_constants` already does: nothing returned
    // beside the kernel names one (`traps`, `words`, `roots` are guest pcs
    // and words). It fails only on a kernel that does not verify, which it
    // then leaves as it was. Before the NaN relaxation, so that twins still
    // have equal float modes and the merged value's readers decide its rule.
    let _ = eliminate_common_subexpressions(&mut kernel);
    // A loop's invariant values are computed before it (the moved
    // instructions keep their pcs and cannot fault; blocks are unchanged).
    if hoist_loop_invariants(&mut kernel).is_ok_and(|n| n > 0) {
        let _ = eliminate_common_subexpressions(&mut kernel);
    }
    // The canonical NaN of RISC-V arithmetic only where a value leaves a chain.
    let _ = relax_canonical_nan(&mut kernel);
    Ok(LiftedKernel {
        kernel,
        traps: em.traps,
        words: program.words,
        entry,
        guest_blocks: program.blocks.len(),
        shape: opts.shape,
        roots: lift_roots,
        resume: opts.resume,
        leaves,
    })
}

/// Emits the IR block of `gb`, and in it the blocks merged after it.
fn emit_block(em: &mut Emitter<'_>, gb: &GuestBlock, all: &BTreeMap<u32, GuestBlock>) {
    let Some((block, vars)) = em.blocks.get(&gb.start).cloned() else {
        return;
    };
    em.cur = block;
    for v in 0..NVARS {
        em.vals[v] = em.launch_value(v);
    }
    // The prologue block (an inlined entry) has no parameters: its state is
    // the launch state set above.
    let params = em.k.blocks[block].params.clone();
    for (&var, &p) in vars.iter().zip(params.iter()) {
        em.vals[var] = p;
    }
    let mut at = Some(gb);
    while let Some(gb) = at {
        at = emit_body(em, gb, all).and_then(|next| all.get(&next));
    }
}

/// Emits the instructions of `gb` into the current IR block from the current
/// state; returns the merged block that continues it, if any.
fn emit_body(
    em: &mut Emitter<'_>,
    gb: &GuestBlock,
    all: &BTreeMap<u32, GuestBlock>,
) -> Option<u32> {
    em.pc = Some(gb.start);
    em.word = None;
    em.consts = consts::ConstTracker::default();
    em.ranges = em
        .ranges_in
        .get(&gb.start)
        .cloned()
        .unwrap_or_else(range::RangeState::unknown);
    em.check_limit = em.checked.contains(&gb.start);
    // The count matters only to a test here or in a later block (then it is
    // live on entry: a parameter, or the launch value 0 of an inlined entry).
    if em.check_limit || em.count_live.contains(&gb.start) {
        let n = gb.instrs.len() as u32;
        em.vals[ICOUNT] = em.bin_imm(wavejit_ir::IBinOp::Add, em.vals[ICOUNT], n);
    }
    for &(pc, word, ref instr) in &gb.instrs {
        em.pc = Some(pc);
        em.word = Some(word);
        if discover::ends_block(instr, em.opts.resume.is_some()) {
            return terminate(em, gb, pc, instr, all);
        }
        emit_instr(em, instr);
        em.consts.step(pc, instr);
        em.ranges.step(pc, instr, em.opts.shape.as_ref());
    }
    match gb.end {
        BlockEnd::Fallthrough(next) => return goto(em, next),
        BlockEnd::Bad { pc, word, cause } => {
            em.pc = Some(pc);
            em.word = word;
            em.trap_here(cause);
        }
        // A terminator returned above; an empty terminator block cannot exist.
        BlockEnd::Terminator => em.trap_here(TrapCause::FetchFault),
    }
    None
}

/// Ends the current block with an unconditional transfer to `target`, or
/// returns `target` when it is merged into this IR block.
fn goto(em: &mut Emitter<'_>, target: u32) -> Option<u32> {
    if em.merged.contains(&target) {
        return Some(target);
    }
    let c = em.dest_call(target);
    em.end(End::Jump(c));
    None
}

fn terminate(
    em: &mut Emitter<'_>,
    gb: &GuestBlock,
    pc: u32,
    instr: &Instr,
    all: &BTreeMap<u32, GuestBlock>,
) -> Option<u32> {
    let next = pc.wrapping_add(4);
    match *instr {
        Instr::Branch {
            cond,
            rs1,
            rs2,
            offset,
        } => {
            let target = pc.wrapping_add_signed(offset);
            match discover::branch_outcome(instr) {
                // Only the side a lane can take was discovered.
                Some(true) => {
                    let taken = em.dest_call(target);
                    em.end(End::Jump(taken));
                }
                Some(false) => {
                    let fall = em.dest_call(next);
                    em.end(End::Jump(fall));
                }
                None => {
                    let c = em.branch_cond(cond, rs1, rs2);
                    let taken = em.dest_call(target);
                    let fall = em.dest_call(next);
                    em.end(End::Branch(c, taken, fall));
                }
            }
        }
        Instr::Jal { rd, offset } => {
            let link = em.c32(next);
            em.set_x(rd, link);
            return goto(em, pc.wrapping_add_signed(offset));
        }
        Instr::Jalr { rd, rs1, offset } => {
            // rs1 is read before rd is written (they may be the same).
            let base = em.x(rs1);
            let ret = is_ret(instr);
            let ra_known = em.consts.get(XReg::RA);
            let link = em.c32(next);
            em.set_x(rd, link);
            match em.jalr.get(&gb.start).copied() {
                Some(Resolved::Exit) => {
                    em.exit_here();
                    return None;
                }
                Some(Resolved::Block(t)) => return goto(em, t),
                None => {}
            }
            if ret && ra_known == Some(0) {
                em.exit_here();
                return None;
            }
            let known = static_jalr_target(gb).filter(|t| all.contains_key(t));
            if let (false, Some(t)) = (ret, known) {
                return goto(em, t);
            }
            let sum = em.bin_imm(wavejit_ir::IBinOp::Add, base, offset as u32);
            let target = em.bin_imm(wavejit_ir::IBinOp::And, sum, !1);
            // A constant target without a block (misaligned, or past a lazy
            // discovery) traps or leaves right here, as `dests` says: the
            // hub would know no block there either.
            let go = match static_jalr_target(gb) {
                Some(t) => em.dest_call(t),
                None => em.hub_call(target),
            };
            if ret {
                let zero = em.c32(0);
                let is_zero = em.icmp(wavejit_ir::IntCC::Eq, base, zero);
                let exit = em.exit_call();
                em.end(End::Branch(is_zero, exit, go));
            } else {
                em.end(End::Jump(go));
            }
        }
        Instr::Ebreak => em.exit_here(),
        // Only with resumable exits (else fence.i does not end a block): the
        // lane leaves, and runs on from the code as it is in memory then.
        Instr::FenceI => {
            let leave = em.resume_call(next, resume::STATUS_FENCE_I);
            em.end(End::Jump(leave));
        }
        _ => em.trap_here(TrapCause::Ecall),
    }
    None
}

fn emit_instr(em: &mut Emitter<'_>, instr: &Instr) {
    match *instr {
        Instr::Lui { rd, imm } => {
            let v = em.c32(imm);
            em.set_x(rd, v);
        }
        Instr::Auipc { rd, imm } => {
            let v = em.c32(em.pc.unwrap_or(0).wrapping_add(imm));
            em.set_x(rd, v);
        }
        Instr::Load {
            kind,
            rd,
            rs1,
            offset,
        } => em.load_x(kind, rd, rs1, offset),
        Instr::Store {
            kind,
            rs1,
            rs2,
            offset,
        } => em.store_x(kind, rs1, rs2, offset),
        Instr::OpImm { op, rd, rs1, imm } => em.op_imm(op, rd, rs1, imm),
        Instr::Op { op, rd, rs1, rs2 } => em.op(op, rd, rs1, rs2),
        // Serial model: fences order nothing. Without resumable exits code is
        // re-checked per dispatch only, so fence.i is a no-op too; with them it
        // ends its block (see `terminate`).
        Instr::Fence { .. } | Instr::FenceTso | Instr::FenceI => {}
        Instr::Csr { op, rd, csr, src } => {
            let writes = instr.csr_access().is_some_and(|a| a.writes);
            debug_assert!(!(writes && csr == Csr::Mhartid));
            em.csr(op, rd, csr, src, writes);
        }
        Instr::Flw { rd, rs1, offset } => em.load_f(rd, rs1, offset),
        Instr::Fsw { rs1, rs2, offset } => em.store_f(rs1, rs2, offset),
        Instr::Fma {
            op,
            rd,
            rs1,
            rs2,
            rs3,
            rm,
        } => em.fma(op, rd, [rs1, rs2, rs3], rm),
        Instr::FpArith {
            op,
            rd,
            rs1,
            rs2,
            rm,
        } => em.fp_arith(op, rd, rs1, rs2, rm),
        Instr::Fsqrt { rd, rs1, rm } => em.fsqrt(rd, rs1, rm),
        Instr::FpSign { op, rd, rs1, rs2 } => em.fp_sign(op, rd, rs1, rs2),
        Instr::FpMinMax { op, rd, rs1, rs2 } => em.fp_minmax(op, rd, rs1, rs2),
        Instr::FpCompare { op, rd, rs1, rs2 } => em.fp_compare(op, rd, rs1, rs2),
        Instr::Fclass { rd, rs1 } => em.fclass(rd, rs1),
        Instr::FcvtToInt {
            rd,
            rs1,
            unsigned,
            rm,
        } => em.fcvt_to_int(rd, rs1, unsigned, rm),
        Instr::FcvtFromInt {
            rd,
            rs1,
            unsigned,
            rm,
        } => em.fcvt_from_int(rd, rs1, unsigned, rm),
        Instr::FmvToInt { rd, rs1 } => em.fmv_to_int(rd, rs1),
        Instr::FmvFromInt { rd, rs1 } => em.fmv_from_int(rd, rs1),
        Instr::LpConvert {
            fmt, dir, rd, rs1, ..
        } => em.lp_convert(fmt, dir, rd, rs1),
        // Terminators are handled by `terminate`.
        Instr::Jal { .. }
        | Instr::Jalr { .. }
        | Instr::Branch { .. }
        | Instr::Ecall
        | Instr::Ebreak => {}
    }
}
