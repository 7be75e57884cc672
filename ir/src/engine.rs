//! The interface every execution engine (golden interpreter, JIT) offers, so that
//! one test body can run on all of them.

use crate::dispatch::Dispatch;
use crate::fault::Fault;
use crate::kernel::Kernel;
use crate::memory::GlobalMemory;

/// Runs whole dispatches. Engines must agree bit for bit on memory contents and
/// on the fault reported (the first fault in the interpreter's schedule).
pub trait Engine {
    /// Short name for test and benchmark output ("interp", "jit").
    fn name(&self) -> &str;

    /// Runs `kernel` over `dispatch` against `memory`. The kernel must verify.
    fn run(
        &self,
        kernel: &Kernel,
        dispatch: &Dispatch,
        memory: &dyn GlobalMemory,
    ) -> Result<(), Fault>;
}
