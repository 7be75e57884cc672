//! Lifts AGX (G13) compute programs into the wavejit IR.
//!
//! # Model
//! The IR kernel is the program of one lane. Every lane of a SIMD-group follows the
//! same instruction stream: AGX branches (`jmp_exec_any/none`, `call`, `ret`, `stop`)
//! are decided for the whole SIMD-group (one IR wave of 32 lanes) with `VoteAny`/
//! `ReadFirst`, so IR control flow stays wave-uniform. Divergence is the AGX
//! execution mask (agx.md §3): `r0l` is an ordinary per-lane 16-bit register (the
//! nesting counter) and `exec` a per-lane flag recomputed only by the exec
//! instructions. Lane-wise register writes are predicated (`select(exec, new, old)`);
//! memory accesses and atomics run under a per-lane branch on `exec` so inactive lanes
//! touch no memory.
//!
//! Registers live in the lane's private memory: `r[n]` at byte `4n` (low half
//! first), the exec flag (i32) after the last register. That keeps lifting one
//! instruction at a time simple; [`lift`] then promotes these constant-address
//! slots to SSA values (`wavejit_ir::transform::promote_private`), so engines
//! see no register memory traffic, and folds what became constant (the exec-mask
//! bookkeeping starts from known values; `wavejit_ir::transform::fold_constants`)
//! ([`lift_unpromoted`] skips both steps). Uniforms are read from the
//! IR uniform space: the 512 16-bit uniform halves at bytes `0..1024`
//! ([`UNIFORM_FILE_BYTES`]), followed by the dispatch's grid size in threads
//! ([`GRID_OFFSET`], three u32, used to stop lanes outside a non-uniform grid).
//! A preamble ([`Mode::Preamble`]) keeps its uniform file in global memory instead
//! (address at [`UNIFORM_FILE_ADDR_OFFSET`]) so that `uniform_store` can write it;
//! see [`AgxDispatch`] for running it before the main kernel.
//!
//! # Float rules
//! 32-bit float ops flush FP32 denormal inputs and outputs keeping the sign, give the
//! canonical NaN `0x7FC00000`, round once (fadd = a·1+b, fmul = a·b+0); a 16-bit
//! destination rounds a second time (f32 → f16 RNE, denormals kept, NaN `0x7E00`).
//! 16-bit ops keep FP16 denormals. `.sat` clamps to [+0, 1] with NaN → +0.
//! `csel` copies raw bits.

mod alu_float;
mod alu_int;
mod cond;
mod control;
mod ctx;
mod dispatch;
mod error;
mod memory;
mod pixel_format;
mod scan;
mod simd;
mod sr;
mod trap;

pub use dispatch::{AgxDispatch, AgxGrid, UNIFORM_HALVES};
pub use error::LiftError;
pub use trap::{TrapSite, describe_fault, meaning as trap_meaning};

use wavejit_ir::transform::{
    drop_unreachable_tail, eliminate_common_subexpressions, fold_constants, hoist_loop_invariants,
    merge_straight_blocks, narrow_integers, promote_private, relax_canonical_nan,
    relax_float_rules, simplify_bits,
};
use wavejit_ir::{Builder, Kernel};

use super::Opcode;
use ctx::Ctx;

/// Bytes of the uniform file at the start of the IR uniform space (512 halves).
pub const UNIFORM_FILE_BYTES: u32 = 1024;
/// Offset in the IR uniform space of the grid size in threads (three u32).
pub const GRID_OFFSET: u32 = 1024;
/// Offset in the IR uniform space of the global address (u64) of a preamble's
/// writable uniform file.
pub const UNIFORM_FILE_ADDR_OFFSET: u32 = 1040;
/// Total bytes of IR uniforms a lifted kernel reads.
pub const UNIFORM_SPACE_BYTES: u32 = 1048;

/// Trap codes of lifted kernels (`FaultKind::Trap { code }`).
pub mod trap_code {
    /// The program executed `trap` (padding).
    pub const TRAP: u32 = 0xa6_0001;
    /// Execution ran past the last instruction of the program.
    pub const FELL_OFF_END: u32 = 0xa6_0002;
    /// `ret`/`call rN` to an address that is not a known target.
    pub const BAD_TARGET: u32 = 0xa6_0003;
}

/// Which program is lifted.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// The compute kernel: uniforms are read-only (IR uniform space).
    #[default]
    Main,
    /// The constant program / preamble: runs once as a single lane and may
    /// `uniform_store`; its uniform file lives in global memory.
    Preamble,
}

/// How to lift a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiftConfig {
    /// Kernel name (fault messages).
    pub name: String,
    /// Byte offset of the first instruction to run.
    pub entry: u64,
    /// Allocated GPRs (USC Registers), at most 128; higher registers are an error.
    pub gpr_count: u32,
    /// Threadgroup memory bytes (USC Shared).
    pub threadgroup_memory: u32,
    pub mode: Mode,
    /// The grid the kernel is lifted for, or `None` for any. With a grid the
    /// grid-size uniforms ([`GRID_OFFSET`]) are its constants and the ids
    /// are bounded by it, so the grid test of a grid of whole threadgroups
    /// goes (and `threadgroup_size` and the group counts are constants): the
    /// kernel is then valid only for dispatches of exactly this grid.
    pub grid: Option<AgxGrid>,
}

impl Default for LiftConfig {
    fn default() -> LiftConfig {
        LiftConfig {
            name: "agx".into(),
            entry: 0,
            gpr_count: 128,
            threadgroup_memory: 0,
            mode: Mode::Main,
            grid: None,
        }
    }
}

/// Lifts the AGX program `code` (raw little-endian instruction bytes; pc = byte
/// offset) into an IR kernel. Only instructions reachable from `config.entry` are
/// decoded. The kernel expects wave size 32 and the uniform layout of
/// [`AgxDispatch`]. Registers are SSA values (see the module documentation).
pub fn lift(code: &[u8], config: &LiftConfig) -> Result<Kernel, LiftError> {
    let mut kernel = lift_unpromoted(code, config)?;
    // A kernel the verifier rejects is left as lifted: the engines verify what
    // they run and report it with its full context.
    let _ = promote_private(&mut kernel);
    // Promotion leaves the exec-mask bookkeeping on known values (the initial
    // nesting counter is a constant): fold it and drop what became dead.
    let _ = fold_constants(&mut kernel);
    // `imadd` and the shifts compute in 64 bits and keep the low half: 32-bit
    // arithmetic gives the same bits and runs in the JIT's vector runs.
    let _ = narrow_integers(&mut kernel);
    // Integer identities of the index arithmetic, and with a grid its bounds
    // test: then a branch on a constant, which folding makes a jump.
    let shape = config.grid.map(|g| g.shape());
    if simplify_bits(&mut kernel, shape.as_ref()).is_ok_and(|s| s.compares > 0) {
        let _ = fold_constants(&mut kernel);
    }
    // Folding turned the exec-mask regions around memory accesses into jumps:
    // chains of blocks each engine would enter one by one. [MODEL] The
    // watchdog counts the merged blocks once (it counts IR blocks, which are
    // not AGX's; a runaway kernel still faults).
    let _ = merge_straight_blocks(&mut kernel);
    // Uniform registers are read, and addresses computed, once per use.
    let _ = eliminate_common_subexpressions(&mut kernel);
    // A loop's invariant values and in-range uniform reads are computed
    // before it; what that repeats merges.
    if hoist_loop_invariants(&mut kernel).is_ok_and(|n| n > 0) {
        let _ = eliminate_common_subexpressions(&mut kernel);
    }
    // FP32 flushes of operands that cannot be subnormal (constants, flushed
    // results, sums with a constant) and of results that cannot be tiny go.
    let _ = relax_float_rules(&mut kernel);
    // The canonical NaN of AGX arithmetic only where a value leaves a chain.
    let _ = relax_canonical_nan(&mut kernel);
    // The exits merging left behind the last live block: engines then see
    // a straight-line kernel as the one block it is.
    let _ = drop_unreachable_tail(&mut kernel);
    Ok(kernel)
}

/// [`lift`] without promoting registers out of private memory: every register
/// access stays a private load or store (for measuring and debugging the
/// promotion; same behaviour, slower to run).
pub fn lift_unpromoted(code: &[u8], config: &LiftConfig) -> Result<Kernel, LiftError> {
    if config.gpr_count == 0 || config.gpr_count > 128 {
        return Err(LiftError::Config(format!(
            "gpr_count {} is not 1..=128",
            config.gpr_count
        )));
    }
    let program = scan::scan(code, config.entry)?;
    let mut kernel = Kernel::new(config.name.clone());
    kernel.shared_size = config.threadgroup_memory;
    kernel.private_size = 4 * config.gpr_count + 4;
    let entry = kernel.add_block();
    let mut blocks = std::collections::HashMap::new();
    for &pc in &program.leaders {
        blocks.insert(pc, kernel.add_block());
    }
    let mut ctx = Ctx::new(Builder::new(&mut kernel, entry), config, &program, blocks);
    ctx.emit_prologue()?;
    for (index, instr) in program.instrs.iter().enumerate() {
        ctx.at_instruction(index, instr)?;
        match instr.opcode {
            Opcode::Stop
            | Opcode::Trap
            | Opcode::JmpAny
            | Opcode::JmpNone
            | Opcode::Call
            | Opcode::CallReg
            | Opcode::Ret
            | Opcode::PopExec
            | Opcode::IfIcmp
            | Opcode::ElseIcmp
            | Opcode::WhileIcmp
            | Opcode::UpdateExec
            | Opcode::IfFcmp
            | Opcode::ElseFcmp
            | Opcode::WhileFcmp => control::lift(&mut ctx, instr)?,
            _ if memory::handles(instr.opcode) => memory::lift(&mut ctx, instr)?,
            _ if simd::handles(instr.opcode) => simd::lift(&mut ctx, instr)?,
            _ if alu_float::handles(instr.opcode) => alu_float::lift(&mut ctx, instr)?,
            _ if alu_int::handles(instr.opcode) => alu_int::lift(&mut ctx, instr)?,
            Opcode::Mfsr => sr::lift(&mut ctx, instr)?,
            _ => return Err(ctx.unsupported(instr, "not a compute instruction")),
        }
    }
    ctx.finish();
    Ok(kernel)
}
