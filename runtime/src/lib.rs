//! wavejit runtime: checked memory, dispatch, and the KGSL / AQL / MMIO frontends.

pub mod aql;
pub mod kgsl;
pub mod memory;
pub mod mmio;
pub mod user_copy;

pub use memory::{AddressSpace, MemError};
