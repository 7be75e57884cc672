//! Line splitting and operand normalisation.

use super::super::minifloat;

/// One comma-separated operand: normalised text and 1-based column in the line.
#[derive(Clone)]
pub(super) struct Token {
    pub text: String,
    pub col: usize,
}

pub(super) fn strip_comment(line: &str) -> &str {
    let cut = [line.find(';'), line.find("//"), line.find('#')]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(line.len());
    &line[..cut]
}

/// Splits `rest` (text after the mnemonic, starting at byte `offset` of the line) on
/// commas, normalising integers to decimal, float immediates to Mesa's spelling and
/// inner whitespace to single spaces.
pub(super) fn split_operands(rest: &str, offset: usize) -> Vec<Token> {
    if rest.trim().is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut start = 0;
    for piece in rest.split(',') {
        let lead = piece.len() - piece.trim_start().len();
        let text = piece.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push(Token {
            text: normalise(&text),
            col: offset + start + lead + 1,
        });
        start += piece.len() + 1;
    }
    out
}

fn normalise(text: &str) -> String {
    if let Some(v) = parse_int(text) {
        return v.to_string();
    }
    if text.contains('.')
        && let Ok(f) = text.parse::<f32>()
        && let Some(code) = (0..=255u8).find(|&b| {
            let g = minifloat::decode(b);
            g == f && g.is_sign_negative() == f.is_sign_negative()
        })
    {
        return minifloat::format(code);
    }
    text.to_string()
}

pub(super) fn parse_int(text: &str) -> Option<i64> {
    let (neg, body) = match text.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, text),
    };
    let v = if let Some(h) = body.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else if !body.is_empty() && body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse::<i64>().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

pub(super) fn canonical_text(mnemonic: &str, tokens: &[Token]) -> String {
    let mut s = mnemonic.to_string();
    for (i, t) in tokens.iter().enumerate() {
        s.push_str(if i == 0 { " " } else { ", " });
        s.push_str(&t.text);
    }
    s
}
