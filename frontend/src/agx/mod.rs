//! Apple AGX (G13 / M1) shader ISA: table-driven decoder, Mesa-syntax disassembler and
//! assembler.
//!
//! All encodings come from Mesa's `AGX2.xml`, turned into Rust tables (`tables.rs`) by
//! `frontend/gen/agx/gen_tables.py`. The matcher follows Mesa's rules: instructions are
//! tried in XML order (aliases first), the length comes from the instruction's L bit,
//! bytes past the length are ignored, and any set bit no field accounts for is an error.

mod asm;
mod bits;
mod decode;
mod error;
mod instr;
mod minifloat;
mod print;
mod spec;
mod tables;

pub use asm::{assemble, assemble_line};
pub use decode::decode;
pub use error::{AsmError, DecodeError};
pub use instr::{Condition, Hint, Instr, Operand};
pub use minifloat::decode as minifloat_value;
pub use spec::{Encoding, OperandKind};
pub use tables::{EnumKind, ImmField, ModField, Opcode};

/// Disassembles the instruction at the start of `bytes` into Mesa syntax.
/// Returns the text and the instruction length in bytes.
pub fn disasm(bytes: &[u8]) -> Result<(String, usize), DecodeError> {
    let (instr, len) = decode(bytes, 0)?;
    Ok((instr.to_string(), len))
}

/// Disassembles a whole program, one line per instruction. Errors carry the byte
/// offset (as `pc`) and the bytes at that offset.
pub fn disasm_program(bytes: &[u8]) -> Result<Vec<String>, DecodeError> {
    let mut out = Vec::new();
    let mut offset = 0usize;
    while offset < bytes.len() {
        let (instr, len) = decode(&bytes[offset..], offset as u64)?;
        out.push(instr.to_string());
        offset += len;
    }
    Ok(out)
}
