//! Guest ISA frontends: decoders, disassemblers and lifters into the wavejit IR.
//! One folder per ISA.

pub mod agx;
pub mod ir3;
pub mod rv32;
