//! The RV32 SIMT GPGPU PCI device of `shared/reference/rv32-gpgpu.md` as an MMIO
//! model: BAR0 control registers, BAR2 VRAM, BAR4 doorbells (unimplemented: read 0).
//! DISPATCH lifts the RV32 kernel from VRAM (`wavejit_frontend::rv32::lift`) and
//! runs it synchronously on the JIT (or the interpreter); faults and the cycle
//! limit set error bits and never panic. Lanes that jump to code the lift did
//! not see, or execute `fence.i`, leave the kernel and run on in resume rounds
//! ([`resume`]: a dynamic translator).
//!
//! Rust API: [`GpgpuDevice::mmio_read`] / [`GpgpuDevice::mmio_write`]; C ABI:
//! `wj_mmio_*` in [`capi`] (header `runtime/include/wavejit_mmio.h`).

pub mod capi;
mod device;
mod dma;
mod launch;
pub mod regs;
pub mod resume;

pub use device::{DeviceConfig, DeviceError, EngineChoice, GpgpuDevice, MAX_JIT_THREADS};
pub use dma::{DmaHost, VecHost};
pub use launch::{DeviceFault, DeviceFaultKind, LaunchReport};
pub use wavejit_frontend::rv32::lift::LaneContext;
