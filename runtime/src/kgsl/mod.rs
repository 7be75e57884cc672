//! A fake KGSL driver (`/dev/kgsl-3d0`) for Adreno a630 with its PM4 command
//! processor, built so that unmodified clients (tinygrad's QCOM backend) run on
//! wavejit.

pub mod capi;
pub mod capture;
pub mod device;
pub mod fault_log;
pub mod ir3_unit;
pub mod maps;
pub mod pm4;
pub mod profile;
pub mod uapi;
/// Client memory copies (shared with the AQL frontend's registration).
pub use crate::user_copy;

pub use device::{Errno, KgslDevice};

use pm4::ComputeUnit;

/// The compute unit CP_EXEC_CS dispatches run on: ir3 kernels lifted and run by
/// the JIT (`WAVEJIT_IR3_MERGEDREGS=1` forces merged half registers).
pub fn compute_unit() -> Box<dyn ComputeUnit + Send> {
    Box::new(ir3_unit::Ir3Unit::default())
}
