//! wavejit runtime: checked memory, dispatch, and the KGSL / AQL / MMIO frontends.
