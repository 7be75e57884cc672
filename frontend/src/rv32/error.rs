//! Decode errors: every error names the offending word and its pc.

use thiserror::Error;

/// An instruction word the device cannot execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("illegal instruction {word:#010x} at pc {pc:#010x}: {kind}")]
pub struct DecodeError {
    /// The raw word (for [`DecodeErrorKind::Truncated`], the bytes that were left,
    /// little-endian, zero-padded).
    pub word: u32,
    pub pc: u32,
    pub kind: DecodeErrorKind,
}

/// Why a word was rejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum DecodeErrorKind {
    /// Low two bits ≠ 0b11: a 16-bit instruction (the device has no C extension).
    #[error("compressed (16-bit) encoding; the device has no C extension")]
    Compressed,
    /// 48-bit or longer encodings (bits \[4:2\] = 0b111).
    #[error("encoding longer than 32 bits")]
    LongEncoding,
    /// Major opcode not implemented (A, D, Q, V, custom-0..3 ...).
    #[error("unsupported major opcode {0:#04x}")]
    UnsupportedOpcode(u8),
    /// A known major opcode with an invalid funct3/funct7/rs2/fixed field.
    #[error("invalid {0} encoding")]
    InvalidEncoding(&'static str),
    /// rm field 5 or 6.
    #[error("reserved rounding mode {0}")]
    ReservedRoundingMode(u8),
    /// CSR number not implemented by the device.
    #[error("unsupported CSR {0:#05x}")]
    UnsupportedCsr(u16),
    /// csrrw/csrrwi, or csrrs/csrrc with a non-zero source, on a read-only CSR.
    #[error("write to read-only CSR {0:#05x}")]
    ReadOnlyCsrWrite(u16),
    /// Fewer than 4 bytes left at the end of a code buffer.
    #[error("truncated instruction: only {0} byte(s) left")]
    Truncated(u8),
}
