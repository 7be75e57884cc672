//! Assembler (in progress).
use super::error::AsmError;

/// Assembles one line of Mesa AGX syntax.
pub fn assemble_line(_text: &str) -> Result<Vec<u8>, AsmError> {
    Err(AsmError {
        line: 1,
        col: 1,
        msg: "assembler not implemented yet".into(),
    })
}

/// Assembles a program.
pub fn assemble(_src: &str) -> Result<Vec<u8>, AsmError> {
    Err(AsmError {
        line: 1,
        col: 1,
        msg: "assembler not implemented yet".into(),
    })
}
