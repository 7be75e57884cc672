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

use super::isa_decode;
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

/// The line without whitespace plus, per byte, its column in the original line.
/// Matching ignores whitespace on both sides (templates are compared the same way),
/// so `add.f r0.x,r0.y,r0.z` and mesa's spacing both assemble.
struct Normalized {
    text: String,
    cols: Vec<usize>,
}

fn normalize(line: &str) -> Normalized {
    let mut text = String::new();
    let mut cols = Vec::new();
    for (i, ch) in line.char_indices() {
        if ch.is_whitespace() {
            continue;
        }
        text.push(ch);
        cols.extend(std::iter::repeat_n(i + 1, ch.len_utf8()));
    }
    Normalized { text, cols }
}

/// Length of `rest`'s prefix that equals `lit` once whitespace is ignored in `lit`.
pub(super) fn literal_prefix(rest: &str, lit: &str) -> Option<usize> {
    let mut n = 0;
    let bytes = rest.as_bytes();
    for b in lit.bytes().filter(|b| !b.is_ascii_whitespace()) {
        if bytes.get(n) != Some(&b) {
            return None;
        }
        n += 1;
    }
    Some(n)
}

/// `text` without whitespace, for comparing rendered text with the input.
pub(super) fn compact(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

pub(crate) fn assemble_at(isa: &'static Isa, line: &str, line_no: usize) -> Result<u64, AsmError> {
    let norm = normalize(line);
    let col_of = |pos: usize| {
        norm.cols
            .get(pos)
            .copied()
            .unwrap_or_else(|| line.trim_end().len() + 1)
    };
    let shown = line.trim().to_string();
    if let Some(hex) = norm.text.strip_prefix("raw") {
        let digits = hex.strip_prefix("0x").or_else(|| hex.strip_prefix("0X"));
        return digits
            .filter(|d| !d.is_empty() && d.len() <= 16)
            .and_then(|d| u64::from_str_radix(d, 16).ok())
            .ok_or(AsmError::BadRaw {
                line: line_no,
                col: col_of(3),
                text: shown.clone(),
            });
    }
    let mut m = Matcher {
        text: &norm.text,
        furthest: 0,
    };
    let mut any_full = false;
    let mut best: Option<(bool, u32, u64)> = None;
    let spaced = line.split_whitespace().collect::<Vec<_>>().join(" ");
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
                // Several templates can print the same text; prefer the word that
                // prints the input exactly (spacing included), then, like mesa's
                // encoder, the one with the fewest bits set.
                let exact = isa_decode::render_word(isa, word).is_ok_and(|t| t == spaced);
                let key = (!exact, word.count_ones(), word);
                if best.is_none_or(|b| key < b) {
                    best = Some(key);
                }
            }
        }
    }
    if let Some((_, _, word)) = best {
        return Ok(word);
    }
    if any_full {
        Err(AsmError::Unencodable {
            line: line_no,
            col: col_of(0),
            text: shown,
        })
    } else {
        Err(AsmError::NoMatch {
            line: line_no,
            col: col_of(m.furthest),
            text: shown,
        })
    }
}
