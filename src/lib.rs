//! wavejit: a GPU emulator that JIT-compiles real shader binaries to native CPU code.
//!
//! Embedders start with [`Device`]: load a program of any ISA from its bytes,
//! allocate buffers, [`launch`](Device::launch) and read results; every failure
//! is one [`Error`]. The crates underneath are re-exported ([`ir`], [`frontend`],
//! [`jit`], [`runtime`]) for what the facade does not cover.

pub mod bench;
pub mod demo_isa;
pub mod demo_kgsl;
mod device;
mod error;

pub use device::{
    AgxOptions, BUFFER_WINDOW_START, Buffer, Device, Dims, Element, EngineKind, Ir3Options, Isa,
    Launch, Limits, MAX_RV32_IMAGE_BYTES, Program, Rv32Options,
};
pub use error::{Error, KernelFault};

pub use wavejit_frontend as frontend;
pub use wavejit_ir as ir;
pub use wavejit_jit as jit;
pub use wavejit_runtime as runtime;
