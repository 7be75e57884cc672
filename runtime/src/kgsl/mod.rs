//! A fake KGSL driver (`/dev/kgsl-3d0`) for Adreno a630 with its PM4 command
//! processor, built so that unmodified clients (tinygrad's QCOM backend) run on
//! wavejit.

pub mod capture;
pub mod device;
pub mod maps;
pub mod pm4;
pub mod uapi;
pub mod user_copy;

pub use device::{Errno, KgslDevice};

use pm4::{ComputeError, ComputeUnit, CsDispatch};

/// The compute unit CP_EXEC_CS dispatches run on: ir3 kernels lifted and run by
/// the JIT.
pub fn compute_unit() -> Box<dyn ComputeUnit + Send> {
    Box::new(Ir3Unavailable)
}

/// Stand-in until the ir3 lifter lands: every dispatch fails with a clear error
/// (surfacing at the client's next wait), never a silent no-op.
struct Ir3Unavailable;

impl ComputeUnit for Ir3Unavailable {
    fn exec_cs(&mut self, d: &CsDispatch, _: &crate::AddressSpace) -> Result<(), ComputeError> {
        Err(ComputeError(format!(
            "ir3 kernel at {:#x}: running ir3 kernels is not implemented yet (the ir3 lifter is missing)",
            d.shader_addr
        )))
    }
}
