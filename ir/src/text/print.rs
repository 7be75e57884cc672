//! Kernel -> canonical text. Values are renamed `v0, v1, ...` in definition order
//! (block by block: parameters, then instruction results), blocks keep their
//! layout numbers. Printing never panics, even on malformed kernels: values that
//! are used but never defined print as `v?<raw index>`, which the parser rejects.

use std::collections::HashMap;
use std::fmt::Write;

use crate::entities::{Block, Value};
use crate::inst::{BlockCall, Terminator};
use crate::kernel::Kernel;

use super::lexer::{is_word_char, quote};
use super::spelling::{annotated_arg, attributes, immediate, opcode_word};

/// Canonical value numbers: definition order in layout. The first definition
/// wins if a malformed kernel defines a value twice.
pub(crate) fn canonical_numbers(k: &Kernel) -> HashMap<Value, u32> {
    let mut map = HashMap::new();
    let mut next = 0u32;
    let mut define = |v: Value, map: &mut HashMap<Value, u32>| {
        map.entry(v).or_insert_with(|| {
            next += 1;
            next - 1
        });
    };
    for block in k.blocks.values() {
        for &p in &block.params {
            define(p, &mut map);
        }
        for &inst in &block.insts {
            if let Some(data) = k.insts.get(inst) {
                for &r in &data.results {
                    define(r, &mut map);
                }
            }
        }
    }
    map
}

struct Printer<'k> {
    k: &'k Kernel,
    names: HashMap<Value, u32>,
    out: String,
}

impl Printer<'_> {
    fn value(&self, v: Value) -> String {
        match self.names.get(&v) {
            Some(n) => format!("v{n}"),
            None => format!("v?{}", v.as_u32()),
        }
    }

    fn values(&self, vs: &[Value]) -> String {
        vs.iter()
            .map(|&v| self.value(v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn call(&self, c: &BlockCall) -> String {
        if c.args.is_empty() {
            block_name(c.block)
        } else {
            format!("{}({})", block_name(c.block), self.values(&c.args))
        }
    }

    fn header(&mut self) {
        let k = self.k;
        let name = if !k.name.is_empty() && k.name.chars().all(is_word_char) {
            k.name.clone()
        } else {
            quote(&k.name)
        };
        let _ = writeln!(
            self.out,
            "kernel @{name} shared {} private {} {{",
            k.shared_size, k.private_size
        );
    }

    fn block(&mut self, b: Block) {
        let k = self.k;
        let Some(data) = k.blocks.get(b) else { return };
        let params: Vec<String> = data
            .params
            .iter()
            .map(|&p| {
                let ty = k.values.get(p).map_or("?", |d| d.ty.name());
                format!("{}: {ty}", self.value(p))
            })
            .collect();
        if params.is_empty() {
            let _ = writeln!(self.out, "{}:", block_name(b));
        } else {
            let _ = writeln!(self.out, "{}({}):", block_name(b), params.join(", "));
        }
        for &inst in &data.insts {
            let line = self.inst_line(inst);
            let _ = writeln!(self.out, "  {line}");
        }
        if let Some(term) = &data.term {
            let line = self.terminator(term);
            let _ = writeln!(self.out, "  {line}");
        }
    }

    fn inst_line(&self, inst: crate::entities::Inst) -> String {
        let k = self.k;
        let Some(data) = k.insts.get(inst) else {
            return format!("; missing {inst}");
        };
        let ann = annotated_arg(&data.kind)
            .and_then(|i| data.args.get(i))
            .and_then(|&a| k.values.get(a))
            .map(|d| d.ty);
        let mut line = String::new();
        if !data.results.is_empty() {
            line.push_str(&self.values(&data.results));
            line.push_str(" = ");
        }
        line.push_str(&opcode_word(&data.kind, ann));
        if let Some(imm) = immediate(&data.kind) {
            line.push(' ');
            line.push_str(&imm);
        }
        if !data.args.is_empty() {
            line.push(' ');
            line.push_str(&self.values(&data.args));
        }
        for attr in attributes(&data.kind) {
            line.push(' ');
            line.push_str(&attr);
        }
        if let Some(pc) = k.srclocs.get(inst).and_then(|s| s.0) {
            let _ = write!(line, " @{pc:#x}");
        }
        line
    }

    fn terminator(&self, term: &Terminator) -> String {
        match term {
            Terminator::Jump(c) => format!("jump {}", self.call(c)),
            Terminator::Branch {
                cond,
                then,
                otherwise,
            } => format!(
                "br {}, {}, {}",
                self.value(*cond),
                self.call(then),
                self.call(otherwise)
            ),
            Terminator::Table {
                index,
                targets,
                default,
            } => {
                let targets: Vec<String> = targets.iter().map(|c| self.call(c)).collect();
                format!(
                    "table {}, [{}], default {}",
                    self.value(*index),
                    targets.join(", "),
                    self.call(default)
                )
            }
            Terminator::Exit => "exit".into(),
        }
    }
}

fn block_name(b: Block) -> String {
    format!("block{}", b.as_u32())
}

/// Writes `k` in canonical text form (see the module documentation for the grammar).
pub fn print(k: &Kernel) -> String {
    let mut p = Printer {
        k,
        names: canonical_numbers(k),
        out: String::new(),
    };
    p.header();
    for (i, b) in k.blocks.keys().enumerate() {
        if i > 0 {
            p.out.push('\n');
        }
        p.block(b);
    }
    p.out.push_str("}\n");
    p.out
}

/// Several kernels, separated by blank lines; [`super::parse_module`] reads it back.
pub fn print_module(kernels: &[Kernel]) -> String {
    kernels.iter().map(print).collect::<Vec<_>>().join("\n")
}
