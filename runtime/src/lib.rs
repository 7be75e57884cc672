//! wavejit runtime: checked memory, dispatch, and three ways in for a client:
//!
//! | module | what a client sees | ISAs it runs |
//! |---|---|---|
//! | [`kgsl`] | Qualcomm's kernel driver `/dev/kgsl-3d0` and the a630's PM4 command processor (tinygrad's QCOM backend) | ir3 |
//! | [`aql`] | an HSA agent with AQL user-mode queues and signals | RV32, ir3, AGX, IR text |
//! | [`mmio`] | the RV32 SIMT GPGPU PCI device (`shared/reference/rv32-gpgpu.md`): BAR registers and VRAM | RV32 |
//!
//! [`memory`] is the checked guest memory all three use (GPU address == host
//! address where the client expects it).

pub mod aql;
pub mod kgsl;
pub mod memory;
pub mod mmio;
pub mod user_copy;

pub use memory::{AddressSpace, MemError};
