//! wavejit: a GPU emulator that JIT-compiles real shader binaries to native CPU code.

pub mod bench;
pub mod demo_isa;
pub mod demo_kgsl;

pub use wavejit_frontend as frontend;
pub use wavejit_ir as ir;
pub use wavejit_jit as jit;
pub use wavejit_runtime as runtime;
