//! Errors of the AGX decoder and assembler.

use thiserror::Error;

/// Lowercase hex of instruction bytes, as in the Mesa test vectors.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why a byte sequence is not a known AGX (G13) instruction. `pc` is the address (or
/// stream offset) of the instruction's first byte; `bytes` its bytes in hex.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("agx: unknown encoding at {pc:#x}: bytes {bytes}")]
    Unknown { pc: u64, bytes: String },
    #[error(
        "agx: {opcode} at {pc:#x} needs at least {need} bytes but only {have} remain: bytes {bytes}"
    )]
    Truncated {
        pc: u64,
        opcode: &'static str,
        need: usize,
        have: usize,
        bytes: String,
    },
    #[error("agx: {opcode} at {pc:#x} has unassigned bits set (mask {mask:#x}): bytes {bytes}")]
    UnknownBits {
        pc: u64,
        opcode: &'static str,
        mask: u128,
        bytes: String,
    },
    #[error(
        "agx: {opcode} at {pc:#x}: operand value {value:#x} fits no case of encoding {encoding}: bytes {bytes}"
    )]
    BadOperand {
        pc: u64,
        opcode: &'static str,
        encoding: &'static str,
        value: u64,
        bytes: String,
    },
    #[error("agx: {opcode} at {pc:#x}: {what}: bytes {bytes}")]
    BadField {
        pc: u64,
        opcode: &'static str,
        what: String,
        bytes: String,
    },
}

/// Why a line of Mesa AGX assembly could not be encoded. `line`/`col` are 1-based.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("agx asm {line}:{col}: {msg}")]
pub struct AsmError {
    pub line: usize,
    pub col: usize,
    pub msg: String,
}
