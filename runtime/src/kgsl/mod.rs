//! A fake KGSL driver (`/dev/kgsl-3d0`) for Adreno a630 with its PM4 command
//! processor, built so that unmodified clients (tinygrad's QCOM backend) run on
//! wavejit.

pub mod device;
pub mod maps;
pub mod pm4;
pub mod uapi;
pub mod user_copy;

pub use device::{Errno, KgslDevice};
