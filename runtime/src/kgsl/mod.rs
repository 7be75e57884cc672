//! A fake KGSL driver (`/dev/kgsl-3d0`) for Adreno a630 with its PM4 command
//! processor, built so that unmodified clients (tinygrad's QCOM backend) run on
//! wavejit.

pub mod pm4;
pub mod uapi;
