//! Splits text into tokens with line:col positions. Newlines are tokens (the
//! syntax is line based) except inside `[ ]`, so long `table` target lists may wrap.

use super::ParseError;

/// 1-based line and column (columns count characters).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pos {
    pub line: usize,
    pub col: usize,
}

impl Pos {
    pub fn error(self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line,
            col: self.col,
            message: message.into(),
        }
    }

    /// The position `chars` characters further on the same line.
    pub fn offset(self, chars: usize) -> Pos {
        Pos {
            line: self.line,
            col: self.col + chars,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Tok {
    /// Identifiers, numbers, opcode words: a run of letters, digits and `_ . % + -`.
    Word(String),
    /// A `"..."` string with its escapes resolved.
    Str(String),
    /// One of `= , : ( ) [ ] { } @`.
    Punct(char),
    Newline,
    Eof,
}

#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

pub(crate) fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%' | '+' | '-')
}

struct Chars<'a> {
    it: std::iter::Peekable<std::str::Chars<'a>>,
    pos: Pos,
}

impl Chars<'_> {
    fn peek(&mut self) -> Option<char> {
        self.it.peek().copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.it.next()?;
        if c == '\n' {
            self.pos.line += 1;
            self.pos.col = 1;
        } else {
            self.pos.col += 1;
        }
        Some(c)
    }
}

pub(crate) fn lex(src: &str) -> Result<Vec<Token>, ParseError> {
    let mut cs = Chars {
        it: src.chars().peekable(),
        pos: Pos { line: 1, col: 1 },
    };
    let mut out = Vec::new();
    let mut bracket_depth = 0usize;
    while let Some(c) = cs.peek() {
        let pos = cs.pos;
        match c {
            '\n' => {
                cs.bump();
                if bracket_depth == 0 {
                    out.push(Token {
                        tok: Tok::Newline,
                        pos,
                    });
                }
            }
            c if c.is_whitespace() => {
                cs.bump();
            }
            ';' => {
                while cs.peek().is_some_and(|c| c != '\n') {
                    cs.bump();
                }
            }
            '"' => {
                cs.bump();
                let s = lex_string(&mut cs, pos)?;
                out.push(Token {
                    tok: Tok::Str(s),
                    pos,
                });
            }
            '=' | ',' | ':' | '(' | ')' | '[' | ']' | '{' | '}' | '@' => {
                cs.bump();
                match c {
                    '[' => bracket_depth += 1,
                    ']' => bracket_depth = bracket_depth.saturating_sub(1),
                    _ => {}
                }
                out.push(Token {
                    tok: Tok::Punct(c),
                    pos,
                });
            }
            c if is_word_char(c) => {
                let mut w = String::new();
                while let Some(c) = cs.peek().filter(|&c| is_word_char(c)) {
                    w.push(c);
                    cs.bump();
                }
                out.push(Token {
                    tok: Tok::Word(w),
                    pos,
                });
            }
            other => {
                return Err(pos.error(format!("unexpected character {other:?}")));
            }
        }
    }
    out.push(Token {
        tok: Tok::Eof,
        pos: cs.pos,
    });
    Ok(out)
}

/// Reads a string body after its opening quote. Escapes: `\\ \" \n \r \t \u{hex}`.
fn lex_string(cs: &mut Chars<'_>, start: Pos) -> Result<String, ParseError> {
    let mut s = String::new();
    loop {
        let pos = cs.pos;
        match cs.bump() {
            None | Some('\n') => return Err(start.error("unterminated string")),
            Some('"') => return Ok(s),
            Some('\\') => match cs.bump() {
                Some('\\') => s.push('\\'),
                Some('"') => s.push('"'),
                Some('n') => s.push('\n'),
                Some('r') => s.push('\r'),
                Some('t') => s.push('\t'),
                Some('u') => s.push(lex_unicode_escape(cs, pos)?),
                _ => {
                    return Err(
                        pos.error("unknown escape in string (use \\\\ \\\" \\n \\r \\t \\u{..})")
                    );
                }
            },
            Some(c) => s.push(c),
        }
    }
}

fn lex_unicode_escape(cs: &mut Chars<'_>, pos: Pos) -> Result<char, ParseError> {
    let bad = || pos.error("malformed \\u{..} escape");
    if cs.bump() != Some('{') {
        return Err(bad());
    }
    let mut hex = String::new();
    loop {
        match cs.bump() {
            Some('}') => break,
            Some(c) if c.is_ascii_hexdigit() && hex.len() < 6 => hex.push(c),
            _ => return Err(bad()),
        }
    }
    u32::from_str_radix(&hex, 16)
        .ok()
        .and_then(char::from_u32)
        .ok_or_else(bad)
}

/// Quotes `s` so that [`lex_string`] reads it back unchanged.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
