//! Qualcomm Adreno a6xx (a630) ir3 shader ISA: decoder, mesa-exact disassembler and
//! assembler.
//!
//! Bit layouts and display templates come from mesa's isaspec XML, flattened into
//! `tables.rs` by `frontend/gen/ir3/gen_tables.py` (committed; the XML is not needed
//! to build). `engine` interprets those tables; `instr` turns a decoded word into a
//! typed [`Instr`] for the lifter; `asm` parses mesa syntax back into words.

mod asm;
mod engine;
mod float;
mod instr;
mod spec;
#[allow(clippy::all, clippy::pedantic, clippy::nursery)]
#[rustfmt::skip]
mod tables;

pub use asm::{AsmError, assemble, assemble_line};
pub use engine::EngineError;
pub use instr::{Flags, Instr, Operand, OperandKind, Value};

/// Failure to decode one 64-bit instruction word.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The word is not a valid a630 encoding (or uses a value mesa cannot print).
    #[error("undecodable ir3 word {word:#018x}: {reason}")]
    Undecodable { word: u64, reason: EngineError },
    /// Same, inside a program: `offset` is the byte offset (index * 8).
    #[error("undecodable ir3 word {word:#018x} at offset {offset:#x}: {reason}")]
    AtOffset {
        word: u64,
        offset: usize,
        reason: EngineError,
    },
}

impl DecodeError {
    /// The instruction word that failed.
    pub fn word(&self) -> u64 {
        match self {
            Self::Undecodable { word, .. } | Self::AtOffset { word, .. } => *word,
        }
    }
}

/// Decode one instruction into the typed form the lifter consumes.
pub fn decode(word: u64) -> Result<Instr, DecodeError> {
    instr::build(word).map_err(|reason| DecodeError::Undecodable { word, reason })
}

/// Disassemble one instruction exactly as mesa's isaspec disassembler prints it.
pub fn disasm(word: u64) -> Result<String, DecodeError> {
    engine::render_word(word).map_err(|reason| DecodeError::Undecodable { word, reason })
}

/// Disassemble a program; the error names the failing word and its byte offset.
pub fn disasm_words(words: &[u64]) -> Result<Vec<String>, DecodeError> {
    words
        .iter()
        .enumerate()
        .map(|(i, &word)| {
            engine::render_word(word).map_err(|reason| DecodeError::AtOffset {
                word,
                offset: i * 8,
                reason,
            })
        })
        .collect()
}

/// One a630 instruction encoding (an isaspec leaf): a word belongs to it when
/// `word & mask == match_bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Encoding {
    /// isaspec name, e.g. `add.f`, `mov-immed`, `ldg.a`.
    pub name: &'static str,
    pub mask: u64,
    pub match_bits: u64,
}

/// Every instruction encoding valid for a630, in table order.
pub fn encodings() -> Vec<Encoding> {
    engine::leaves_of(tables::INSTRUCTION_ROOT)
        .iter()
        .map(|&i| {
            let b = &tables::BITSETS[usize::from(i)];
            Encoding {
                name: b.name,
                mask: b.mask,
                match_bits: b.match_bits,
            }
        })
        .collect()
}

/// The encoding a word belongs to (fixed bits only; fields are not validated, use
/// [`decode`] for that).
pub fn classify(word: u64) -> Result<Encoding, DecodeError> {
    let scope = engine::instruction_scope(word)
        .map_err(|reason| DecodeError::Undecodable { word, reason })?;
    let b = &tables::BITSETS[usize::from(scope.bitset)];
    Ok(Encoding {
        name: b.name,
        mask: b.mask,
        match_bits: b.match_bits,
    })
}
