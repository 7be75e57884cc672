//! Assembler for Mesa's AGX2 syntax, driven by the same tables as the decoder.
//!
//! Each instruction spec with the line's mnemonic is tried in table order. Its printed
//! items (destinations, sources, immediates, modifiers) are matched against the
//! comma-separated operands by a small backtracking search: an item may print nothing
//! (absent source, default enum value, clear flag), so each either consumes the next
//! operand or not. Every choice deposits bits with conflict checks. A complete candidate
//! uses the short form when no bit beyond it is set, and is accepted only if
//! disassembling it gives back the (normalised) input text, so
//! `disasm(assemble(text)) == text` holds by construction.
//!
//! Programs (`assemble`) may also use labels: `name:` at the start of a line defines
//! one, and a label name as the operand of `jmp_any`/`jmp_none`/`call` becomes the
//! byte offset from that branch.

mod lexer;
mod operand;
mod search;

use std::collections::HashMap;

use super::error::AsmError;
use lexer::{Token, canonical_text, parse_int, split_operands, strip_comment};
use search::{SearchError, assemble_tokens};

/// Branches whose single operand may be a label.
const BRANCHES: &[&str] = &["jmp_any", "jmp_none", "call"];

/// Assembles one line of Mesa AGX syntax (comments after `;`, `//` or `#` and blank
/// lines give no bytes; no labels).
pub fn assemble_line(text: &str) -> Result<Vec<u8>, AsmError> {
    match split_line(text, 1)? {
        Some(l) => l.assemble(),
        None => Ok(Vec::new()),
    }
}

/// Assembles a program, one instruction per line, with labels; errors give line:col
/// (1-based).
pub fn assemble(src: &str) -> Result<Vec<u8>, AsmError> {
    let mut lines = Vec::new();
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut offset = 0usize;
    // Pass 1: label addresses. Branch lengths do not depend on the offset value.
    for (i, raw) in src.lines().enumerate() {
        let line_no = i + 1;
        let (label, rest, rest_col) = take_label(raw);
        if let Some((name, col)) = label {
            if parse_int(name).is_some() || operand::looks_like_operand(name) {
                return Err(err(
                    line_no,
                    col,
                    format!("label `{name}` looks like an operand"),
                ));
            }
            if labels.insert(name.to_string(), offset).is_some() {
                return Err(err(line_no, col, format!("label `{name}` defined twice")));
            }
        }
        let Some(mut l) = split_line(rest, line_no)? else {
            continue;
        };
        l.shift_columns(rest_col);
        let len = match l.label_operand() {
            Some(_) => l.with_operand("0").assemble()?.len(),
            None => l.assemble()?.len(),
        };
        lines.push((offset, l));
        offset += len;
    }
    // Pass 2: encode, resolving label operands to offsets from the branch.
    let mut out = Vec::with_capacity(offset);
    for (at, l) in &lines {
        let bytes = match l.label_operand() {
            Some(tok) => {
                let Some(&target) = labels.get(&tok.text) else {
                    return Err(err(
                        l.line,
                        tok.col,
                        format!("undefined label `{}`", tok.text),
                    ));
                };
                let rel = target as i64 - *at as i64;
                l.with_operand(&rel.to_string()).assemble()?
            }
            None => l.assemble()?,
        };
        out.extend(bytes);
    }
    Ok(out)
}

fn err(line: usize, col: usize, msg: String) -> AsmError {
    AsmError { line, col, msg }
}

/// Splits `name:` off the start of a line: (label and its column, rest, rest's byte
/// offset in the line).
fn take_label(raw: &str) -> (Option<(&str, usize)>, &str, usize) {
    let code = strip_comment(raw);
    let lead = code.len() - code.trim_start().len();
    let word_end = code[lead..]
        .find(char::is_whitespace)
        .map_or(code.len(), |e| lead + e);
    let word = &code[lead..word_end];
    match word.strip_suffix(':') {
        Some(name)
            if !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.') =>
        {
            (Some((name, lead + 1)), &code[word_end..], word_end)
        }
        _ => (None, code, 0),
    }
}

/// One instruction line: mnemonic and operands with their columns.
#[derive(Clone)]
struct SourceLine {
    line: usize,
    mnemonic: String,
    mnemonic_col: usize,
    tokens: Vec<Token>,
    end_col: usize,
}

fn split_line(raw: &str, line: usize) -> Result<Option<SourceLine>, AsmError> {
    let code = strip_comment(raw);
    let lead = code.len() - code.trim_start().len();
    let code = code.trim();
    if code.is_empty() {
        return Ok(None);
    }
    let mn_end = code.find(char::is_whitespace).unwrap_or(code.len());
    let tokens = split_operands(&code[mn_end..], lead + mn_end);
    if let Some(t) = tokens.iter().find(|t| t.text.is_empty()) {
        return Err(err(line, t.col, "empty operand".into()));
    }
    Ok(Some(SourceLine {
        line,
        mnemonic: code[..mn_end].to_string(),
        mnemonic_col: lead + 1,
        tokens,
        end_col: lead + code.len() + 1,
    }))
}

impl SourceLine {
    fn shift_columns(&mut self, by: usize) {
        self.mnemonic_col += by;
        self.end_col += by;
        for t in &mut self.tokens {
            t.col += by;
        }
    }

    /// The operand of a branch that names a label rather than an offset.
    fn label_operand(&self) -> Option<&Token> {
        match self.tokens.as_slice() {
            [t] if BRANCHES.contains(&self.mnemonic.as_str())
                && parse_int(&t.text).is_none()
                && !operand::looks_like_operand(&t.text) =>
            {
                Some(t)
            }
            _ => None,
        }
    }

    fn with_operand(&self, text: &str) -> SourceLine {
        let mut l = self.clone();
        if let Some(t) = l.tokens.first_mut() {
            t.text = text.to_string();
        }
        l
    }

    fn assemble(&self) -> Result<Vec<u8>, AsmError> {
        let canonical = canonical_text(&self.mnemonic, &self.tokens);
        match assemble_tokens(&self.mnemonic, &self.tokens, &canonical) {
            Ok(bytes) => Ok(bytes),
            Err(SearchError::UnknownMnemonic) => Err(err(
                self.line,
                self.mnemonic_col,
                format!("unknown mnemonic `{}`", self.mnemonic),
            )),
            Err(SearchError::NoEncoding { furthest }) => match self.tokens.get(furthest) {
                Some(t) => Err(err(
                    self.line,
                    t.col,
                    format!("cannot encode operand `{}` of `{}`", t.text, self.mnemonic),
                )),
                None => Err(err(
                    self.line,
                    self.end_col,
                    format!(
                        "operands of `{}` match no encoding (missing or inconsistent operands)",
                        self.mnemonic
                    ),
                )),
            },
        }
    }
}
