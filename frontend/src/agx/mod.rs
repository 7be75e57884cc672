//! Apple AGX (G13 / M1) shader ISA: table-driven decoder, Mesa-syntax disassembler and
//! assembler.
//!
//! All encodings come from Mesa's `AGX2.xml`, turned into Rust tables (`tables.rs`) by
//! `frontend/gen/agx/gen_tables.py`, plus `frontend/gen/agx/overlay.xml` (newer Mesa
//! layout of the texture/sampler state loads, and Metal's `pow_fixup`). The matcher
//! follows Mesa's rules: instructions are tried in XML order (aliases first), the length
//! comes from the instruction's L bit, bytes past the length are ignored, and any set
//! bit that no field accounts for is an error, as are undefined enum values, operand
//! fields that fit no encoding case, missing register hints and odd 32-bit registers.
//!
//! # Decoded form
//! [`Instr`] keeps every field in XML order: `dests`, `srcs` (absent ones have
//! [`OperandKind::None`]), `imms` and `mods` (raw values, including the L bit as
//! `length`). [`Opcode`]'s documentation lists each instruction's operand encodings.
//! Register operands count in 16-bit halves: `r3` has `value` 6 and `size` 32, `r3h`
//! has 7 and 16, `dr2` (r2_r3) has 4 and 64, `r0_r1_r2` has 0, 32 and `count` 3.
//!
//! ```
//! use wavejit_frontend::agx::{Opcode, OperandKind, decode};
//! // fadd r0, r10.neg, r11
//! let (i, len) = decode(&[0x2a, 0x81, 0x54, 0x6a, 0x25, 0x00], 0x40).unwrap();
//! assert_eq!((i.opcode, len), (Opcode::Fadd, 6));
//! assert_eq!((i.srcs[0].kind, i.srcs[0].value, i.srcs[0].neg), (OperandKind::Reg, 20, true));
//! assert_eq!(i.to_string(), "fadd r0, r10.neg, r11");
//! ```

mod asm;
mod bits;
mod decode;
mod error;
mod instr;
pub mod lift;
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
