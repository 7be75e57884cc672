//! Assembler for mesa's ir3 disassembly syntax, driven by the same display templates
//! the disassembler uses.
//!
//! A line is matched against every encoding's templates (`matcher`: literals, enums,
//! numbers, nested sub-encodings). Fields the text shows directly are set; fields that
//! only show up through derived values (e.g. `h` half markers, `(nopN)`, split
//! offsets) are solved for by trying the bits they depend on (`solve`); bits the text
//! does not determine at all are tried with the fewest bits set first. A candidate is
//! accepted only if disassembling it reproduces the text exactly.

mod matcher;
mod solve;

use super::spec::Isa;
use matcher::{Matcher, State};
use solve::solve;

/// Failure to assemble; `line`/`col` are 1-based positions in the source.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AsmError {
    #[error(
        "{line}:{col}: cannot parse instruction {text:?} (no encoding matches past this column)"
    )]
    NoMatch {
        line: usize,
        col: usize,
        text: String,
    },
    #[error("{line}:{col}: {text:?} matches an encoding but no bits reproduce it exactly")]
    Unencodable {
        line: usize,
        col: usize,
        text: String,
    },
    #[error("{line}:{col}: bad raw word {text:?}")]
    BadRaw {
        line: usize,
        col: usize,
        text: String,
    },
}

/// Assemble a program: one instruction per line; blank lines and `;` comments are
/// skipped.
pub(crate) fn assemble_source(isa: &'static Isa, source: &str) -> Result<Vec<u64>, AsmError> {
    let mut out = Vec::new();
    for (i, line) in source.lines().enumerate() {
        let code = line.split(';').next().unwrap_or("");
        if code.trim().is_empty() {
            continue;
        }
        out.push(assemble_at(isa, code, i + 1)?);
    }
    Ok(out)
}

/// Whitespace-normalized text plus, per byte, its column in the original line.
struct Normalized {
    text: String,
    cols: Vec<usize>,
}

fn normalize(line: &str) -> Normalized {
    let mut text = String::new();
    let mut cols = Vec::new();
    let mut pending_space = false;
    for (i, ch) in line.char_indices() {
        if ch.is_whitespace() {
            pending_space = !text.is_empty();
            continue;
        }
        if pending_space {
            text.push(' ');
            cols.push(i);
            pending_space = false;
        }
        text.push(ch);
        cols.extend(std::iter::repeat_n(i + 1, ch.len_utf8()));
    }
    Normalized { text, cols }
}

pub(crate) fn assemble_at(isa: &'static Isa, line: &str, line_no: usize) -> Result<u64, AsmError> {
    let norm = normalize(line);
    let col_of = |pos: usize| {
        norm.cols
            .get(pos)
            .copied()
            .unwrap_or_else(|| line.trim_end().len() + 1)
    };
    if let Some(hex) = norm.text.strip_prefix("raw ") {
        let digits = hex.strip_prefix("0x").or_else(|| hex.strip_prefix("0X"));
        return digits
            .filter(|d| !d.is_empty() && d.len() <= 16)
            .and_then(|d| u64::from_str_radix(d, 16).ok())
            .ok_or(AsmError::BadRaw {
                line: line_no,
                col: col_of(4),
                text: norm.text.clone(),
            });
    }
    let mut m = Matcher {
        text: &norm.text,
        furthest: 0,
    };
    let mut any_full = false;
    let mut best: Option<u64> = None;
    for &leaf in isa.leaves_of(isa.instruction_root) {
        let st = State {
            isa,
            val: 0,
            known: 0,
            pos: 0,
            frames: Vec::new(),
            deferred: Vec::new(),
        };
        let Some(st) = st.push_frame(leaf, 0, None, &[]) else {
            continue;
        };
        for cand in m.match_frame(st, 0) {
            if cand.pos != norm.text.len() {
                continue;
            }
            any_full = true;
            if let Some(word) = solve(&cand, &norm.text) {
                // Several templates can print the same text; like mesa's encoder,
                // prefer the word with the fewest bits set.
                best = Some(best.map_or(word, |b: u64| canonical(b, word)));
            }
        }
    }
    if let Some(word) = best {
        return Ok(word);
    }
    if any_full {
        Err(AsmError::Unencodable {
            line: line_no,
            col: col_of(0),
            text: norm.text,
        })
    } else {
        Err(AsmError::NoMatch {
            line: line_no,
            col: col_of(m.furthest),
            text: norm.text,
        })
    }
}

/// The preferred of two words that print the same text: fewer bits set, then the
/// smaller value.
fn canonical(a: u64, b: u64) -> u64 {
    if (b.count_ones(), b) < (a.count_ones(), a) {
        b
    } else {
        a
    }
}
