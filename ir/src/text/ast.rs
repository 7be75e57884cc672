//! The syntax tree between parsing and name resolution: names as written, with
//! positions for error messages.

use crate::inst::InstKind;
use crate::types::Type;

use super::lexer::Pos;

pub(crate) struct Name {
    pub text: String,
    pub pos: Pos,
}

pub(crate) struct KernelAst {
    pub name: String,
    pub pos: Pos,
    pub shared: u32,
    pub private: u32,
    pub blocks: Vec<BlockAst>,
}

pub(crate) struct BlockAst {
    pub label: Name,
    pub params: Vec<(Name, Type)>,
    pub insts: Vec<InstAst>,
    pub term: Option<(TermAst, Pos)>,
}

pub(crate) struct InstAst {
    /// Position of the opcode word.
    pub pos: Pos,
    pub opcode: String,
    pub results: Vec<Name>,
    /// Complete with attributes and immediate.
    pub kind: InstKind,
    /// The type suffix: argument index, type, position.
    pub ann: Option<(usize, Type, Pos)>,
    pub args: Vec<Name>,
    pub srcloc: Option<u64>,
}

pub(crate) struct CallAst {
    pub block: Name,
    pub args: Vec<Name>,
}

pub(crate) enum TermAst {
    Jump(CallAst),
    Branch {
        cond: Name,
        then: CallAst,
        otherwise: CallAst,
    },
    Table {
        index: Name,
        targets: Vec<CallAst>,
        default: CallAst,
    },
    Exit,
}
