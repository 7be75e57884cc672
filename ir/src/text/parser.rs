//! Tokens -> syntax tree (`ast`): one kernel header, block headers, instruction
//! and terminator lines. Names are kept as written; `build` resolves them.

use crate::inst::InstKind;
use crate::types::Type;

use super::ParseError;
use super::ast::*;
use super::lexer::{Pos, Tok, Token};
use super::opcode::{
    Attr, Immediate, apply_attributes, parse_const, parse_opcode, parse_u64, takes_value,
};
use super::spelling::result_types;

pub(crate) struct Parser {
    toks: Vec<Token>,
    at: usize,
}

/// `v12` or `%name`.
pub(crate) fn is_value_name(w: &str) -> bool {
    if let Some(digits) = w.strip_prefix('v') {
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    } else if let Some(rest) = w.strip_prefix('%') {
        !rest.is_empty() && !rest.contains('%')
    } else {
        false
    }
}

/// `block7`.
pub(crate) fn is_block_label(w: &str) -> bool {
    w.strip_prefix("block")
        .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()))
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Str(_) => "a string".into(),
        Tok::Punct(c) => format!("`{c}`"),
        Tok::Newline => "end of line".into(),
        Tok::Eof => "end of input".into(),
    }
}

const TERMINATORS: [&str; 4] = ["jump", "br", "table", "exit"];

impl Parser {
    pub fn new(mut toks: Vec<Token>) -> Parser {
        if toks.last().is_none_or(|t| t.tok != Tok::Eof) {
            let pos = toks.last().map_or(Pos { line: 1, col: 1 }, |t| t.pos);
            toks.push(Token { tok: Tok::Eof, pos });
        }
        Parser { toks, at: 0 }
    }

    fn peek(&self) -> &Token {
        // `new` guarantees a final Eof and `bump` never moves past it.
        &self.toks[self.at.min(self.toks.len() - 1)]
    }

    fn peek2(&self) -> &Tok {
        &self.toks[(self.at + 1).min(self.toks.len() - 1)].tok
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.at + 1 < self.toks.len() {
            self.at += 1;
        }
        t
    }

    fn unexpected(&self, expected: &str) -> ParseError {
        let t = self.peek();
        t.pos
            .error(format!("expected {expected}, found {}", describe(&t.tok)))
    }

    fn eat_punct(&mut self, c: char) -> bool {
        if self.peek().tok == Tok::Punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: char, expected: &str) -> Result<Pos, ParseError> {
        if self.peek().tok == Tok::Punct(c) {
            Ok(self.bump().pos)
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_line_end(&mut self) -> Result<(), ParseError> {
        match self.peek().tok {
            Tok::Newline => {
                self.bump();
                Ok(())
            }
            Tok::Eof => Ok(()),
            _ => Err(self.unexpected("end of line")),
        }
    }

    fn skip_newlines(&mut self) {
        while self.peek().tok == Tok::Newline {
            self.bump();
        }
    }

    fn peek_word(&self) -> Option<&str> {
        match &self.peek().tok {
            Tok::Word(w) => Some(w),
            _ => None,
        }
    }

    fn word(&mut self, expected: &str) -> Result<(String, Pos), ParseError> {
        match self.peek().tok.clone() {
            Tok::Word(w) => {
                let pos = self.bump().pos;
                Ok((w, pos))
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    fn number_u32(&mut self, what: &str) -> Result<u32, ParseError> {
        let (w, pos) = self.word(what)?;
        parse_u64(&w)
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| pos.error(format!("`{w}` is not a 32-bit number ({what})")))
    }

    fn value(&mut self) -> Result<Name, ParseError> {
        match self.peek_word() {
            Some(w) if is_value_name(w) => {
                let (text, pos) = self.word("a value")?;
                Ok(Name { text, pos })
            }
            _ => Err(self.unexpected("a value name like `v3`")),
        }
    }

    fn value_list(&mut self) -> Result<Vec<Name>, ParseError> {
        let mut out = vec![self.value()?];
        while self.eat_punct(',') {
            out.push(self.value()?);
        }
        Ok(out)
    }

    fn block_label(&mut self) -> Result<Name, ParseError> {
        match self.peek_word() {
            Some(w) if is_block_label(w) => {
                let (text, pos) = self.word("a block")?;
                Ok(Name { text, pos })
            }
            _ => Err(self.unexpected("a block label like `block1`")),
        }
    }

    fn ty(&mut self) -> Result<Type, ParseError> {
        let (w, pos) = self.word("a type")?;
        Type::from_name(&w).ok_or_else(|| pos.error(format!("unknown type `{w}`")))
    }

    /// `module := kernel*`
    pub fn module(&mut self) -> Result<Vec<KernelAst>, ParseError> {
        let mut out = Vec::new();
        loop {
            self.skip_newlines();
            if self.peek().tok == Tok::Eof {
                return Ok(out);
            }
            out.push(self.kernel()?);
        }
    }

    /// `kernel @name [shared N] [private N] { NL block* } NL`
    fn kernel(&mut self) -> Result<KernelAst, ParseError> {
        let pos = match self.peek_word() {
            Some("kernel") => self.bump().pos,
            _ => return Err(self.unexpected("`kernel`")),
        };
        self.expect_punct('@', "`@` before the kernel name")?;
        let name = match self.peek().tok.clone() {
            Tok::Word(w) | Tok::Str(w) => {
                self.bump();
                w
            }
            _ => return Err(self.unexpected("a kernel name")),
        };
        let mut shared = None;
        let mut private = None;
        loop {
            let (slot, what) = match self.peek_word() {
                Some("shared") => (&mut shared, "shared"),
                Some("private") => (&mut private, "private"),
                _ => break,
            };
            let kw = self.bump().pos;
            if slot.is_some() {
                return Err(kw.error(format!("`{what}` size given twice")));
            }
            let n = self.number_u32(&format!("{what} size in bytes"))?;
            match what {
                "shared" => shared = Some(n),
                _ => private = Some(n),
            }
        }
        self.expect_punct('{', "`shared N`, `private N` or `{`")?;
        self.expect_line_end()?;
        let mut blocks: Vec<BlockAst> = Vec::new();
        loop {
            self.skip_newlines();
            match &self.peek().tok {
                Tok::Punct('}') => {
                    self.bump();
                    self.expect_line_end()?;
                    break;
                }
                Tok::Eof => {
                    return Err(self
                        .peek()
                        .pos
                        .error(format!("kernel `{name}` is not closed with `}}`")));
                }
                Tok::Word(w)
                    if is_block_label(w)
                        && matches!(self.peek2(), Tok::Punct(':') | Tok::Punct('(')) =>
                {
                    blocks.push(self.block_header()?);
                }
                _ => {
                    let Some(block) = blocks.last_mut() else {
                        return Err(self.unexpected("a block label like `block0:`"));
                    };
                    Self::body_line(self, block)?;
                }
            }
        }
        Ok(KernelAst {
            name,
            pos,
            shared: shared.unwrap_or(0),
            private: private.unwrap_or(0),
            blocks,
        })
    }

    /// `blockN[(v: ty, ...)]:`
    fn block_header(&mut self) -> Result<BlockAst, ParseError> {
        let label = self.block_label()?;
        let mut params = Vec::new();
        if self.eat_punct('(') && !self.eat_punct(')') {
            loop {
                let v = self.value()?;
                self.expect_punct(':', "`:` and the parameter's type")?;
                let ty = self.ty()?;
                params.push((v, ty));
                if self.eat_punct(')') {
                    break;
                }
                self.expect_punct(',', "`,` or `)`")?;
            }
        }
        self.expect_punct(':', "`:` after the block label")?;
        self.expect_line_end()?;
        Ok(BlockAst {
            label,
            params,
            insts: Vec::new(),
            term: None,
        })
    }

    fn body_line(&mut self, block: &mut BlockAst) -> Result<(), ParseError> {
        if let Some((_, pos)) = &block.term {
            return Err(self.peek().pos.error(format!(
                "`{}` already ended with the terminator at {}:{}; start a new block first",
                block.label.text, pos.line, pos.col
            )));
        }
        if let Some(w) = self.peek_word()
            && TERMINATORS.contains(&w)
        {
            let pos = self.peek().pos;
            let term = self.terminator()?;
            block.term = Some((term, pos));
            return Ok(());
        }
        let inst = self.instruction()?;
        block.insts.push(inst);
        Ok(())
    }

    /// `[results =] opcode [immediate] [args] [attributes] [@pc]`
    fn instruction(&mut self) -> Result<InstAst, ParseError> {
        let mut results = Vec::new();
        if self.peek_word().is_some_and(is_value_name) {
            results = self.value_list()?;
            self.expect_punct('=', "`=` after the result names")?;
        }
        let (opword, pos) = self.word("an opcode")?;
        if TERMINATORS.contains(&opword.as_str()) {
            return Err(pos.error(format!("terminator `{opword}` yields no results")));
        }
        let opcode = parse_opcode(&opword, pos)?;
        let mut kind = opcode.kind;
        match opcode.imm {
            Immediate::None => {}
            Immediate::Const(ty) => {
                let (w, p) = self.word(&format!("a constant of type {ty}"))?;
                let bits = parse_const(ty, &w).map_err(|m| p.error(m))?;
                kind = InstKind::Const { ty, bits };
            }
            Immediate::TrapCode => {
                let code = self.number_u32("a trap code")?;
                kind = InstKind::Trap { code };
            }
        }
        let mut args = Vec::new();
        if self.peek_word().is_some_and(is_value_name) {
            args = self.value_list()?;
        }
        let mut attrs = Vec::new();
        while let Some(w) = self.peek_word() {
            if is_value_name(w) {
                return Err(self.unexpected("`,` between operands"));
            }
            let (name, apos) = self.word("an attribute")?;
            let has_eq = self.eat_punct('=');
            let value = if has_eq || (takes_value(&name) && self.peek_word().is_some()) {
                let (v, vpos) = self.word("an attribute value")?;
                Some((v, vpos))
            } else {
                None
            };
            attrs.push(Attr {
                name,
                pos: apos,
                value,
            });
        }
        apply_attributes(&mut kind, &attrs, &opword)?;
        let srcloc = if self.eat_punct('@') {
            let (w, p) = self.word("a guest pc after `@`")?;
            Some(parse_u64(&w).ok_or_else(|| p.error(format!("`{w}` is not a guest pc")))?)
        } else {
            None
        };
        self.expect_line_end()?;
        let ann = opcode.ann;
        let tys = result_types(&kind, ann.map(|a| a.1));
        if tys.len() != results.len() {
            let list: Vec<&str> = tys.iter().map(|t| t.name()).collect();
            let at = results.first().map_or(pos, |r: &Name| r.pos);
            return Err(at.error(format!(
                "`{opword}` yields {} result{}{}, but {} name{} given",
                tys.len(),
                if tys.len() == 1 { "" } else { "s" },
                if list.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", list.join(", "))
                },
                results.len(),
                if results.len() == 1 { " is" } else { "s are" },
            )));
        }
        Ok(InstAst {
            pos,
            opcode: opword,
            results,
            kind,
            ann,
            args,
            srcloc,
        })
    }

    /// `blockN[(args)]`
    fn call(&mut self) -> Result<CallAst, ParseError> {
        let block = self.block_label()?;
        let mut args = Vec::new();
        if self.eat_punct('(') && !self.eat_punct(')') {
            args = self.value_list()?;
            self.expect_punct(')', "`,` or `)`")?;
        }
        Ok(CallAst { block, args })
    }

    fn terminator(&mut self) -> Result<TermAst, ParseError> {
        let (w, _) = self.word("a terminator")?;
        let term = match w.as_str() {
            "jump" => TermAst::Jump(self.call()?),
            "br" => {
                let cond = self.value()?;
                self.expect_punct(',', "`,` after the condition")?;
                let then = self.call()?;
                self.expect_punct(',', "`,` and the else target")?;
                let otherwise = self.call()?;
                TermAst::Branch {
                    cond,
                    then,
                    otherwise,
                }
            }
            "table" => {
                let index = self.value()?;
                self.expect_punct(',', "`,` after the index")?;
                self.expect_punct('[', "`[` and the target list")?;
                let mut targets = Vec::new();
                if !self.eat_punct(']') {
                    loop {
                        targets.push(self.call()?);
                        if self.eat_punct(']') {
                            break;
                        }
                        self.expect_punct(',', "`,` or `]`")?;
                    }
                }
                self.expect_punct(',', "`,` and `default <block>`")?;
                match self.peek_word() {
                    Some("default") => {
                        self.bump();
                    }
                    _ => return Err(self.unexpected("`default`")),
                }
                let default = self.call()?;
                TermAst::Table {
                    index,
                    targets,
                    default,
                }
            }
            _ => TermAst::Exit,
        };
        if self.peek().tok == Tok::Punct('@') {
            return Err(self.peek().pos.error("terminators carry no guest pc"));
        }
        self.expect_line_end()?;
        Ok(term)
    }
}
