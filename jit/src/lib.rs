//! Cranelift JIT for wavejit IR kernels.
