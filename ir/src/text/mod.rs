//! The IR's text form: a printer and a parser that round-trip exactly.
//!
//! ```
//! let text = "\
//! kernel @example shared 0 private 0 {
//! block0:
//!   v0 = local_index
//!   v1 = const.i32 8
//!   v2 = load.uniform.i64 v1 @0x10
//!   v3, v4 = load.global.f32x2 v2 align 8
//!   v5, v6 = fadd.f32 v3, v4 ftz nan=0x7fc00000 rtz flags
//!   store.global.i32.u8 v2, v0
//!   v7 = icmp.eq.i32 v6, v1
//!   br v7, block1(v5), block2
//!
//! block1(v8: f32):
//!   store.global.f32 v2, v8
//!   jump block2
//!
//! block2:
//!   exit
//! }
//! ";
//! let kernel = wavejit_ir::text::parse(text).unwrap();
//! assert_eq!(wavejit_ir::text::print(&kernel), text);
//! assert!(wavejit_ir::verify::verify(&kernel).is_ok());
//! ```
//!
//! Grammar (one item per line; newlines are insignificant only inside `[ ]`):
//!
//! ```text
//! module     := kernel*
//! kernel     := "kernel" "@" (word | string) ("shared" N | "private" N)* "{" NL
//!               block* "}" NL                  ; sizes default to 0
//! block      := label ["(" [value ":" type ("," value ":" type)*] ")"] ":" NL
//!               inst* [terminator]
//! inst       := [value ("," value)* "="] opcode [immediate] [value ("," value)*]
//!               attribute* ["@" N] NL
//! attribute  := word | word ["="] N            ; only `nan` and `align` take N
//! terminator := "jump" call | "br" value "," call "," call
//!             | "table" value "," "[" [call ("," call)*] "]" "," "default" call
//!             | "exit"
//! call       := label ["(" [value ("," value)*] ")"]
//! value      := "v" digits | "%" word           ; printed as v0, v1, ... in definition order
//! label      := "block" digits                  ; renumbered in layout order
//! N          := decimal | "0x" hex
//! type       := i1 i8 i16 i32 i64 f16 f32 f64
//! fmt        := f16 bf16 f32 f64 e4m3 e5m2 e2m1
//! ```
//!
//! Opcodes (`T` is a type suffix naming the type of the argument noted; the parser
//! checks it, and it types the results so values may be used before their
//! definition line):
//!
//! | family | spelling |
//! |---|---|
//! | constant | `const.T lit` — ints in decimal (`-1`) or `0x` hex bits; floats as decimal (`1.5`, `-0.0`, `1e-45`, `inf`) or `0x` raw bits |
//! | builtins | `local_id.x` `workgroup_id.y` `workgroup_size.z` `num_workgroups.x` `local_index` `lane_id` `wave_id` `wave_size` |
//! | int binary (arg0) | `iadd isub imul umulhi smulhi udiv sdiv urem srem and or xor shl ushr sshr rotl rotr umin smin umax smax uadd_sat sadd_sat usub_sat ssub_sat` `.T` |
//! | int unary (arg0) | `not ineg iabs clz ctz popcnt bitrev bswap` `.T` |
//! | compare (arg0) | `icmp.{eq,ne,ult,ule,ugt,uge,slt,sle,sgt,sge}.T`, `fcmp.{eq,ne,lt,le,gt,ge,ord,uno,ueq,une,ult,ule,ugt,uge}.T` |
//! | select (arg1) | `select.T cond, a, b` |
//! | casts | `zext sext trunc bitcast` `.From.To` |
//! | bit fields (arg0) | `ubfe.T` `sbfe.T` `bfi.T` |
//! | float (arg0) | `fadd fsub fmul fdiv fmin fmax fminimum fmaximum fcopysign fneg fabs fsqrt ffloor fceil ftrunc fnearest fma fclass rcp rsqrt exp2 log2 sin cos` `.T`; `pow_fixup` |
//! | conversions | `fcvt.fmt.fmt`, `ftos.fmt.T` / `ftou.fmt.T` (+`nan_max`), `stof.T.fmt` / `utof.T.fmt` |
//! | memory | `load.SPACE.SHAPE[.EXT] addr`, `store.SPACE.SHAPE[.EXT] addr, v...`; SPACE `global shared uniform private`; SHAPE `T` or `TxN` (N elements); EXT `s8 u8 s16 u16 s32 u32 s64 u64` = memory width and extension (omitted when the whole value, unsigned); `align N` when not the element size |
//! | atomics | `atomic.OP.SPACE.T addr, v` / `atomic.cmpxchg.SPACE.T addr, expected, new`; OP `add sub umin smin umax smax and or xor xchg cmpxchg inc_wrap dec_wrap` |
//! | sync | `barrier`, `fence.workgroup`, `fence.device`, `trap CODE` |
//! | cross-lane (mask first) | `ballot m, c` `vote_any m, c` `vote_all m, c` `first_active m` `elect m` `read_lane.T m, v, lane` `read_first.T m, v` `shuffle.{idx,xor,up,down}.T m, v, n` `reduce.OP.T m, v` `scan.{incl,excl}.OP.T m, v`; OP `add mul umin smin umax smax and or xor fadd fmin fmax` |
//!
//! Float attributes (any order when parsing; printed in this order, defaults
//! omitted): `ftz` (flush inputs and outputs) or `ftz.in` / `ftz.out`,
//! `ftz.tiny` (results flushed when tiny before rounding), `nan=BITS` (canonical NaN), rounding `rtz rdn rup rmm` (`rne` is the default),
//! `sat`, `flags` (adds the `i32` fflags result).
//!
//! Canonical form: `print` renames values `v0, v1, ...` in definition order (block
//! by block: parameters, then results), keeps block numbers (they are layout
//! order), indents instructions by two spaces and separates blocks by a blank
//! line. `parse` accepts any spacing, comments, `vN`/`%name` value names and any
//! distinct `blockN` labels, and yields a kernel equal to `canonicalize` of the
//! original, so `print(parse(print(k))) == print(k)`.
//!
//! `parse` checks syntax, names (undefined or duplicate), result counts, type
//! suffixes and instruction signatures; control-flow rules (terminators, block
//! arguments, dominance) are the verifier's job. [`parse_with_lines`] also
//! returns a [`LineMap`], which finds the line a verifier error points to (the
//! file tests in `tests/verify/` write each expected error beside its line).

mod ast;
mod build;
mod lexer;
mod names;
mod opcode;
mod parser;
mod print;
mod spelling;

use std::collections::HashMap;
use std::fmt;

use cranelift_entity::packed_option::ReservedValue;

use cranelift_entity::EntityRef;

use crate::entities::{Block, Inst, Value};
use crate::inst::{BlockCall, Terminator};
use crate::kernel::{InstData, Kernel, ValueData, ValueDef};
use crate::types::Type;
use crate::verify::Location;

pub use print::{print, print_module};

/// A syntax or name error, with the 1-based line and column where it was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{col}: {message}")]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

/// Where the parts of a parsed kernel were written (1-based line numbers), so
/// that a verifier error can be shown beside the text it is about. Blocks and
/// instructions are numbered by `parse` in the order they are written, which
/// is what the handles here index.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineMap {
    /// The `kernel @name ... {` line.
    pub kernel: usize,
    blocks: Vec<usize>,
    terminators: Vec<Option<usize>>,
    insts: Vec<usize>,
}

impl LineMap {
    /// The line of `block`'s label.
    pub fn block(&self, block: Block) -> Option<usize> {
        self.blocks.get(block.index()).copied()
    }

    /// The line of `block`'s terminator; `None` when it has none.
    pub fn terminator(&self, block: Block) -> Option<usize> {
        self.terminators.get(block.index()).copied().flatten()
    }

    /// The line of `inst`.
    pub fn inst(&self, inst: Inst) -> Option<usize> {
        self.insts.get(inst.index()).copied()
    }

    /// The line a verifier [`Location`] points to: the kernel header, a block
    /// label, an instruction or a terminator. `None` for handles the text did
    /// not define (the verifier may name those in a kernel edited after parsing).
    pub fn line_of(&self, location: &Location) -> Option<usize> {
        match location {
            Location::Kernel => Some(self.kernel),
            Location::Block(block) => self.block(*block),
            Location::Inst { inst, .. } => self.inst(*inst),
            Location::Terminator(block) => self.terminator(*block),
        }
    }
}

/// Reads every kernel in `text`.
pub fn parse_module(text: &str) -> Result<Vec<Kernel>, ParseError> {
    let tokens = lexer::lex(text)?;
    let asts = parser::Parser::new(tokens).module()?;
    asts.iter()
        .map(|ast| build::build(ast).map(|(k, _)| k))
        .collect()
}

/// Reads exactly one kernel.
pub fn parse(text: &str) -> Result<Kernel, ParseError> {
    parse_with_lines(text).map(|(k, _)| k)
}

/// Reads exactly one kernel, like [`parse`], and where each part of it was written.
pub fn parse_with_lines(text: &str) -> Result<(Kernel, LineMap), ParseError> {
    let tokens = lexer::lex(text)?;
    let end = tokens
        .last()
        .map_or(lexer::Pos { line: 1, col: 1 }, |t| t.pos);
    let mut asts = parser::Parser::new(tokens).module()?;
    if asts.len() > 1 {
        return Err(asts[1]
            .pos
            .error("a second kernel; `parse` reads one (use `parse_module` for several)"));
    }
    match asts.pop() {
        Some(ast) => build::build(&ast),
        None => Err(end.error("no kernel found (expected `kernel @name ... {`)")),
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print(self))
    }
}

/// `k` renumbered the way `parse` numbers a printed kernel: instructions and
/// values in layout order (values: block parameters, then results). Instructions
/// not placed in any block are dropped. `parse(&print(k)) == Ok(canonicalize(k))`
/// for every kernel the parser accepts the printout of.
pub fn canonicalize(k: &Kernel) -> Kernel {
    let mut out = Kernel::new(k.name.clone());
    out.shared_size = k.shared_size;
    out.private_size = k.private_size;
    let mut map: HashMap<Value, Value> = HashMap::new();
    let mut placed = Vec::new();
    for data in k.blocks.values() {
        let block = out.add_block();
        for &p in &data.params {
            let ty = k.values.get(p).map_or(Type::I32, |d| d.ty);
            let v = out.add_block_param(block, ty);
            map.entry(p).or_insert(v);
        }
        for &inst in &data.insts {
            let Some(old) = k.insts.get(inst) else {
                continue;
            };
            let id = out.insts.push(InstData {
                kind: old.kind.clone(),
                args: Vec::new(),
                results: Vec::new(),
            });
            for (index, &r) in old.results.iter().enumerate() {
                let ty = k.values.get(r).map_or(Type::I32, |d| d.ty);
                let v = out.values.push(ValueData {
                    ty,
                    def: ValueDef::Result {
                        inst: id,
                        index: index as u32,
                    },
                });
                out.insts[id].results.push(v);
                map.entry(r).or_insert(v);
            }
            if let Some(loc) = k.srclocs.get(inst) {
                out.srclocs[id] = *loc;
            }
            out.blocks[block].insts.push(id);
            placed.push((inst, id));
        }
    }
    let rename = |v: &Value| map.get(v).copied().unwrap_or_else(Value::reserved_value);
    let call = |c: &BlockCall| BlockCall {
        block: c.block,
        args: c.args.iter().map(rename).collect(),
    };
    for (old, new) in placed {
        out.insts[new].args = k.insts[old].args.iter().map(rename).collect();
    }
    for (b, data) in k.blocks.iter() {
        out.blocks[b].term = data.term.as_ref().map(|t| match t {
            Terminator::Jump(c) => Terminator::Jump(call(c)),
            Terminator::Branch {
                cond,
                then,
                otherwise,
            } => Terminator::Branch {
                cond: rename(cond),
                then: call(then),
                otherwise: call(otherwise),
            },
            Terminator::Table {
                index,
                targets,
                default,
            } => Terminator::Table {
                index: rename(index),
                targets: targets.iter().map(call).collect(),
                default: call(default),
            },
            Terminator::Exit => Terminator::Exit,
        });
    }
    out
}
