//! Qualcomm Adreno a6xx (a630) ir3 shader ISA: decoder, mesa-exact disassembler and
//! assembler.
//!
//! Bit layouts and display templates come from mesa's isaspec XML, flattened into
//! `tables.rs` by `frontend/gen/ir3/gen_tables.py` (committed; the XML is not needed
//! to build). `isa_decode` interprets those tables exactly like mesa's `isa_decode`
//! (override cases, derived fields, params, per-scope memoized expressions);
//! `instr` turns a decoded word into a typed [`Instr`] for the lifter; `asm` parses
//! mesa syntax back into words by matching the same templates.
//!
//! Local additions to the XML (forms mesa added later, from the vectors and
//! `shared/reference/ir3.md`) are made by the generator's `patch()`: `mova.u` /
//! `mova1.u`, a7xx cat1 `(sat)`, and encoder defaults for bits the text hides.
//!
//! # Reading an [`Instr`]
//!
//! * `encoding` is the isaspec leaf (`add.f`, `mov-gpr`, `ldg.a`, ...), `mnemonic`
//!   what mesa prints (`cmps.f.lt`, `cov.s32s16`, `mova`).
//! * `flags` (sy/ss/jp/ul/sat/ei/eq), `repeat` (`(rptN)`), `nop` (`(nopN)`; cat2/3
//!   reuse the `(r)` bits for it when `repeat == 0`, and then no operand has
//!   `repeat_inc`).
//! * `dsts` / `srcs`: [`Operand`]s in encoding order. Register ids are
//!   `reg * 4 + comp`: 0xc0..0xdf shared (r48..r55), 0xf4/0xf5 a0.x/a1.x,
//!   0xf8..0xfb p0.x..w (a cat2 destination 0xf4.. prints `up0.c`). `half` is set
//!   exactly where mesa prints `h`. Constants are `Const(idx * 4 + comp)`; relative
//!   forms are `RelGpr`/`RelConst` offsets from a0.x; immediates keep their raw
//!   float bits or sign-extended value; `Flut` is the cat2 float table index.
//! * `fields`: every isaspec field of the word by its XML name, including derived
//!   ones — e.g. `COND`, `SRC_TYPE`/`DST_TYPE`, `TYPE`, `SIZE`, `OFF` (already
//!   sign-extended and merged from OFF_HI/OFF_LO), `SRC2_SHIFT`/`TYPE_SHIFT` for
//!   `ldg.a`, `WRMASK`, `SAMP`/`TEX`, `MODE`, `INV1`/`COMP1`, `IMMED` (branch offset,
//!   see [`Instr::branch_target`]). Use [`Instr::get`] for a numeric view.

mod asm;
mod float;
mod instr;
mod isa_decode;
pub mod lift;
mod listing;
mod spec;
#[allow(clippy::all, clippy::pedantic, clippy::nursery)]
#[rustfmt::skip]
mod tables;

pub use asm::AsmError;
pub use instr::{FieldName, FieldValue};
pub use instr::{Flags, Instr, Operand, OperandKind, REG_A0_X, REG_A1_X, REG_P0_X};
pub use isa_decode::IsaDecodeError;
pub use listing::{Listing, ListingOptions, disasm_listing, disasm_listing_for, raw_line};
pub use tables::field;

/// Failure to decode one 64-bit instruction word.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The word is not a valid a630 encoding (or uses a value mesa cannot print).
    #[error("undecodable ir3 word {word:#018x}: {reason}")]
    Undecodable { word: u64, reason: IsaDecodeError },
    /// Same, inside a program: `offset` is the byte offset (index * 8).
    #[error("undecodable ir3 word {word:#018x} at offset {offset:#x}: {reason}")]
    AtOffset {
        word: u64,
        offset: usize,
        reason: IsaDecodeError,
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

/// A GPU generation whose isaspec tables are built in. a630 is the target; the
/// others exist to decode mesa's a7xx/a8xx vectors where their encodings are known
/// to the Oct-2025 XML.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Gpu {
    /// Adreno 6xx (tables for gpu_id 630).
    A6xx,
    /// Adreno 7xx (gpu_id 700 tables).
    A7xx,
    /// Adreno 8xx (the a7xx tables with `ISA_GPU_ID()` = 800).
    A8xx,
}

impl Gpu {
    /// The generation of a mesa gpu_id (e.g. 630, 730, 800), if supported.
    pub fn from_gpu_id(gpu_id: u32) -> Option<Gpu> {
        match gpu_id {
            600..=699 => Some(Gpu::A6xx),
            700..=799 => Some(Gpu::A7xx),
            800..=899 => Some(Gpu::A8xx),
            _ => None,
        }
    }
    fn isa(self) -> &'static spec::Isa {
        match self {
            Gpu::A6xx => &tables::ISA_630,
            Gpu::A7xx => &tables::ISA_700,
            Gpu::A8xx => &tables::ISA_800,
        }
    }
}

/// Decode one a630 instruction into the typed form the lifter consumes.
pub fn decode(word: u64) -> Result<Instr, DecodeError> {
    decode_for(Gpu::A6xx, word)
}

/// [`decode`] for another generation.
pub fn decode_for(gpu: Gpu, word: u64) -> Result<Instr, DecodeError> {
    decode_cached(gpu, word).map_err(|reason| DecodeError::Undecodable { word, reason })
}

/// Decoded words kept at most (a few hundred bytes each); the cache is
/// emptied when it is full.
const DECODE_CACHE_WORDS: usize = 1 << 14;

/// `instr::build`, remembered per word. A decode walks the isaspec tree and
/// renders every field (about 150k host instructions a word), and lifting
/// decodes each word of a kernel: two thirds of a 48-word tinygrad kernel's
/// lift went here, mostly on words kernels share (nops, index and address
/// arithmetic). A decode depends on the generation and the word alone, so a
/// remembered one is the same.
fn decode_cached(gpu: Gpu, word: u64) -> Result<Instr, isa_decode::IsaDecodeError> {
    use rustc_hash::FxHashMap as HashMap;
    use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
    type Decoded = Result<Instr, isa_decode::IsaDecodeError>;
    static CACHE: OnceLock<Mutex<HashMap<(Gpu, u64), Decoded>>> = OnceLock::new();
    // A poisoned lock only means another thread panicked while it held the
    // map; every entry in it is a whole decode.
    let map = || -> MutexGuard<'_, HashMap<(Gpu, u64), Decoded>> {
        CACHE
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    };
    if let Some(hit) = map().get(&(gpu, word)) {
        return hit.clone();
    }
    let decoded = instr::build(gpu.isa(), word);
    let mut cache = map();
    if cache.len() >= DECODE_CACHE_WORDS {
        cache.clear();
    }
    cache.insert((gpu, word), decoded.clone());
    decoded
}

/// Disassemble one a630 instruction exactly as mesa's isaspec disassembler prints it.
pub fn disasm(word: u64) -> Result<String, DecodeError> {
    disasm_for(Gpu::A6xx, word)
}

/// [`disasm`] for another generation.
pub fn disasm_for(gpu: Gpu, word: u64) -> Result<String, DecodeError> {
    isa_decode::render_word(gpu.isa(), word)
        .map_err(|reason| DecodeError::Undecodable { word, reason })
}

/// Disassemble an a630 program, failing at the first undecodable word (the error
/// names it and its byte offset). [`disasm_listing`] prints mesa's raw line instead.
pub fn disasm_words(words: &[u64]) -> Result<Vec<String>, DecodeError> {
    words
        .iter()
        .enumerate()
        .map(|(i, &word)| {
            isa_decode::render_word(Gpu::A6xx.isa(), word).map_err(|reason| DecodeError::AtOffset {
                word,
                offset: i * 8,
                reason,
            })
        })
        .collect()
}

/// Assemble one a630 instruction (mesa syntax, or `raw 0x<16 hex digits>`).
pub fn assemble_line(text: &str) -> Result<u64, AsmError> {
    asm::assemble_at(Gpu::A6xx.isa(), text, 1)
}

/// [`assemble_line`] for another generation.
pub fn assemble_line_for(gpu: Gpu, text: &str) -> Result<u64, AsmError> {
    asm::assemble_at(gpu.isa(), text, 1)
}

/// Assemble an a630 program: one instruction per line, blank lines and `;`
/// comments skipped; errors carry line:col.
pub fn assemble(source: &str) -> Result<Vec<u64>, AsmError> {
    asm::assemble_source(Gpu::A6xx.isa(), source)
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
    let isa = Gpu::A6xx.isa();
    isa.leaves_of(isa.instruction_root)
        .iter()
        .map(|&i| {
            let b = isa.bitset(i);
            Encoding {
                name: b.name,
                mask: b.mask,
                match_bits: b.match_bits,
            }
        })
        .collect()
}

/// The a630 encoding a word belongs to (fixed bits only; fields are not
/// validated, use [`decode`] for that).
pub fn classify(word: u64) -> Result<Encoding, DecodeError> {
    let isa = Gpu::A6xx.isa();
    let scope = isa_decode::instruction_scope(isa, word)
        .map_err(|reason| DecodeError::Undecodable { word, reason })?;
    let b = isa.bitset(scope.bitset);
    Ok(Encoding {
        name: b.name,
        mask: b.mask,
        match_bits: b.match_bits,
    })
}

#[cfg(test)]
mod decode_cache_tests {
    use super::*;

    /// A remembered decode is the decode: words seen again (and words that
    /// do not decode, whose error is remembered too) give what `build` gives.
    #[test]
    fn a_remembered_decode_is_the_decode() {
        let words: Vec<u64> = (0..1500u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 61))
            .collect();
        let (mut ok, mut bad) = (0, 0);
        for round in 0..2 {
            for &w in &words {
                let fresh = instr::build(Gpu::A6xx.isa(), w);
                assert_eq!(
                    decode_cached(Gpu::A6xx, w),
                    fresh,
                    "{w:#018x}, round {round}"
                );
                if fresh.is_ok() { ok += 1 } else { bad += 1 }
            }
        }
        assert!(ok > 100 && bad > 100, "{ok} decoded, {bad} not");
    }
}
