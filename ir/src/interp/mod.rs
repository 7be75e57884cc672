//! The golden interpreter: the reference meaning of the IR that the JIT must match
//! bit for bit (memory contents and the reported fault).
//!
//! # Schedule
//! - Workgroups run one at a time in linear order (x fastest). Each starts with
//!   zeroed shared memory (`kernel.shared_size` bytes) and zeroed private memory
//!   per lane (`kernel.private_size` bytes).
//! - Lanes of a workgroup form waves of `dispatch.wave_size` consecutive linear
//!   local indices (the last wave may be short).
//! - Round: waves run in increasing order; a wave runs until none of its lanes is
//!   runnable (each is parked at a barrier, exited or faulted). Inside a wave, each
//!   step executes the instruction at the minimum pc = (block number, index) over
//!   its runnable lanes, for every runnable lane at that pc (the co-active set), in
//!   increasing lane order (one lane's whole effect, then the next lane's).
//!   Cross-lane instructions see the whole co-active set at once.
//! - After a round, if lanes are parked, all of them are released past their
//!   barrier (whichever barrier they wait at) and a new round starts; otherwise the
//!   workgroup is done. Exited and faulted lanes never block a barrier.
//! - Faults: a faulting lane stops at once (it counts as exited); the others run
//!   on. When a workgroup ends with faults, the dispatch stops and returns the
//!   fault of the lowest linear local index; later workgroups do not run.
//!
//! # Racy accesses
//! The schedule fixes the result of unsynchronised accesses too: inside a
//! workgroup each instruction completes for every co-active lane (in lane order)
//! before the next one, and waves take turns only at barriers. Workgroups have no
//! defined order relative to each other: the interpreter runs them one at a time,
//! an engine that runs several side by side may see racing accesses across
//! workgroups differently (a program that races across workgroups has no single
//! answer; tests avoid it).
//!
//! # Fault places
//! - Instruction faults (memory, trap): `block`, `inst: Some`, `guest_pc` =
//!   `kernel.srclocs[inst]`.
//! - Watchdog: a lane counts blocks entered (the entry block counts 1); entering
//!   one more than `dispatch.step_limit` faults with `block` = the block being
//!   entered, `inst: None`, `guest_pc: None`.
//! - Malformed kernels (anything that would fail the verifier in a way that could
//!   make the interpreter index out of range or misread values: argument/result
//!   counts or types not matching the signature, missing values or blocks, missing
//!   terminators, block-call arity/type mismatches, entry parameters) never panic: a
//!   lane reaching the malformed instruction faults with `FaultKind::Trap { code:
//!   u32::MAX }` (`inst: None` for a terminator or the entry). A pure or cross-lane
//!   instruction that `semantics` cannot evaluate faults the same way. A kernel with
//!   no blocks, or lane state the host cannot allocate, faults on the first lane
//!   at `block0` with `inst: None`. A dispatch with no lanes does nothing and
//!   succeeds.
//! - Dispatches over the limits of [`crate::dispatch`] (`wave_size` 0, more than
//!   `MAX_WORKGROUP_LANES` lanes per workgroup, too much shared or private
//!   memory) fault with [`FaultKind::Dispatch`](crate::FaultKind::Dispatch)
//!   before any lane runs, from [`Dispatch::check`], as on every engine; so do
//!   dispatches of more work-items than `dispatch.budget.max_work_items`.
//! - The rest of the dispatch budget ([`Budget`](crate::Budget): time limit,
//!   cancel flag) is checked before each workgroup; past it the dispatch stops
//!   with [`FaultKind::Budget`](crate::FaultKind::Budget) on the first lane of
//!   the workgroup not started (earlier workgroups' effects stay).

mod access;
mod program;
#[cfg(test)]
mod tests;
mod workgroup;

pub use access::LaneMemory;

use crate::dispatch::Dispatch;
use crate::engine::Engine;
use crate::fault::Fault;
use crate::kernel::Kernel;
use crate::memory::GlobalMemory;

/// Trap code of faults raised for malformed kernels or dispatches.
pub const MALFORMED_TRAP: u32 = u32::MAX;

/// Most lanes per workgroup (checked by [`Dispatch::check`] for every engine).
pub use crate::dispatch::MAX_WORKGROUP_LANES;

/// The golden interpreter engine (`name() == "interp"`).
#[derive(Copy, Clone, Debug, Default)]
pub struct Interpreter;

impl Interpreter {
    pub fn new() -> Interpreter {
        Interpreter
    }
}

impl Engine for Interpreter {
    fn name(&self) -> &str {
        "interp"
    }

    fn run(
        &self,
        kernel: &Kernel,
        dispatch: &Dispatch,
        memory: &dyn GlobalMemory,
    ) -> Result<(), Fault> {
        dispatch.check(kernel)?;
        // Frees from other threads wait for the dispatch (see `GlobalMemory::pin`).
        let _pin = crate::memory::Pinned::new(memory);
        let _ieee = crate::host_float_env::Ieee::enter();
        workgroup::run_dispatch(kernel, dispatch, memory)
    }
}
