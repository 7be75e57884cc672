//! Why an AGX program could not be lifted. Every error names the instruction and its pc.

use thiserror::Error;

use crate::agx::DecodeError;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LiftError {
    /// The bytes at `pc` are not a valid G13 instruction. Shown as the
    /// decoder's message, which already starts with `agx:`.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A valid instruction the compute lifter does not handle (graphics, texture,
    /// stack or an undocumented variant).
    #[error("agx lift: unsupported instruction `{text}` at {pc:#x}: {why}")]
    Unsupported { pc: u64, text: String, why: String },
    /// A register outside the configured GPR count.
    #[error("agx lift: `{text}` at {pc:#x} uses r{reg}, but only {gprs} registers are allocated")]
    Register {
        pc: u64,
        text: String,
        reg: u32,
        gprs: u32,
    },
    /// A branch or call whose target is outside the code.
    #[error("agx lift: `{text}` at {pc:#x} targets {target:#x}, outside the {len}-byte program")]
    BadTarget {
        pc: u64,
        text: String,
        target: i64,
        len: usize,
    },
    /// A threadgroup (local) access in a program launched with no threadgroup
    /// memory. \[MODEL\] The driver sizes threadgroup memory per launch (USC
    /// Shared) and a Metal or Mesa program that touches it always declares
    /// it, so the launch is refused here rather than guessing what the
    /// hardware does with an access to an allocation of 0 bytes.
    #[error(
        "agx lift: `{text}` at {pc:#x} accesses threadgroup memory, but the launch declares none (threadgroup memory 0 bytes)"
    )]
    NoThreadgroupMemory { pc: u64, text: String },
    /// The configuration itself is unusable.
    #[error("agx lift: bad configuration: {0}")]
    Config(String),
}
