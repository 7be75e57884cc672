//! Syntax tree -> Kernel: resolves block labels and value names (forward
//! references allowed), numbers values canonically, and type-checks every
//! instruction against its signature and its type suffix.

use std::collections::HashMap;

use crate::entities::{Block, Value};
use crate::inst::{BlockCall, Terminator};
use crate::kernel::{InstData, Kernel, SrcLoc, ValueData, ValueDef};
use crate::types::Type;

use super::ast::*;
use super::lexer::Pos;
use super::spelling::result_types;
use super::{LineMap, ParseError};

struct Names {
    blocks: HashMap<String, (Block, Pos)>,
    values: HashMap<String, (Value, Pos)>,
}

impl Names {
    fn define_value(&mut self, name: &Name, v: Value) -> Result<(), ParseError> {
        if let Some((_, first)) = self.values.get(&name.text) {
            return Err(name.pos.error(format!(
                "value `{}` is defined twice (first at {}:{})",
                name.text, first.line, first.col
            )));
        }
        self.values.insert(name.text.clone(), (v, name.pos));
        Ok(())
    }

    fn value(&self, name: &Name) -> Result<Value, ParseError> {
        self.values
            .get(&name.text)
            .map(|&(v, _)| v)
            .ok_or_else(|| name.pos.error(format!("undefined value `{}`", name.text)))
    }

    fn values(&self, names: &[Name]) -> Result<Vec<Value>, ParseError> {
        names.iter().map(|n| self.value(n)).collect()
    }

    fn call(&self, c: &CallAst) -> Result<BlockCall, ParseError> {
        let block = self
            .blocks
            .get(&c.block.text)
            .map(|&(b, _)| b)
            .ok_or_else(|| {
                c.block
                    .pos
                    .error(format!("undefined block `{}`", c.block.text))
            })?;
        Ok(BlockCall {
            block,
            args: self.values(&c.args)?,
        })
    }
}

pub(crate) fn build(ast: &KernelAst) -> Result<(Kernel, LineMap), ParseError> {
    let mut k = Kernel::new(ast.name.clone());
    let mut lines = LineMap {
        kernel: ast.pos.line,
        ..LineMap::default()
    };
    k.shared_size = ast.shared;
    k.private_size = ast.private;
    let mut names = Names {
        blocks: HashMap::new(),
        values: HashMap::new(),
    };
    let mut block_ids = Vec::with_capacity(ast.blocks.len());
    for b in &ast.blocks {
        if let Some((_, first)) = names.blocks.get(&b.label.text) {
            return Err(b.label.pos.error(format!(
                "block `{}` is defined twice (first at {}:{})",
                b.label.text, first.line, first.col
            )));
        }
        let id = k.add_block();
        names.blocks.insert(b.label.text.clone(), (id, b.label.pos));
        block_ids.push(id);
        lines.blocks.push(b.label.pos.line);
        lines
            .terminators
            .push(b.term.as_ref().map(|(_, pos)| pos.line));
    }
    // Definitions first, in canonical order, so uses may refer forward.
    let mut inst_ids = Vec::new();
    for (b, &block) in ast.blocks.iter().zip(&block_ids) {
        for (name, ty) in &b.params {
            let v = k.add_block_param(block, *ty);
            names.define_value(name, v)?;
        }
        for inst in &b.insts {
            let id = k.insts.push(InstData {
                kind: inst.kind.clone(),
                args: Vec::new(),
                results: Vec::new(),
            });
            let tys = result_types(&inst.kind, inst.ann.map(|a| a.1));
            for (index, (name, ty)) in inst.results.iter().zip(tys).enumerate() {
                let v = k.values.push(ValueData {
                    ty,
                    def: ValueDef::Result {
                        inst: id,
                        index: index as u32,
                    },
                });
                k.insts[id].results.push(v);
                names.define_value(name, v)?;
            }
            if let Some(pc) = inst.srcloc {
                k.srclocs[id] = SrcLoc(Some(pc));
            }
            k.blocks[block].insts.push(id);
            inst_ids.push(id);
            lines.insts.push(inst.pos.line);
        }
    }
    let mut ids = inst_ids.iter();
    for (b, &block) in ast.blocks.iter().zip(&block_ids) {
        for (inst, &id) in b.insts.iter().zip(&mut ids) {
            k.insts[id].args = names.values(&inst.args)?;
            type_check(&k, inst, &k.insts[id])?;
        }
        if let Some((term, _)) = &b.term {
            let t = match term {
                TermAst::Jump(c) => Terminator::Jump(names.call(c)?),
                TermAst::Branch {
                    cond,
                    then,
                    otherwise,
                } => Terminator::Branch {
                    cond: names.value(cond)?,
                    then: names.call(then)?,
                    otherwise: names.call(otherwise)?,
                },
                TermAst::Table {
                    index,
                    targets,
                    default,
                } => Terminator::Table {
                    index: names.value(index)?,
                    targets: targets
                        .iter()
                        .map(|c| names.call(c))
                        .collect::<Result<_, _>>()?,
                    default: names.call(default)?,
                },
                TermAst::Exit => Terminator::Exit,
            };
            k.set_terminator(block, t);
        }
    }
    Ok((k, lines))
}

/// Every argument's type is known now (all values are defined), so the
/// instruction can be checked: the type suffix against the argument it names,
/// then the whole argument list against the signature.
fn type_check(k: &Kernel, inst: &InstAst, data: &InstData) -> Result<(), ParseError> {
    let arg_tys: Vec<Type> = data.args.iter().map(|&a| k.value_type(a)).collect();
    if let Some((index, ty, pos)) = inst.ann
        && let Some(&actual) = arg_tys.get(index)
        && actual != ty
    {
        return Err(pos.error(format!(
            "type suffix `{ty}` does not match argument {index} (`{}` is {actual})",
            inst.args.get(index).map_or("?", |n| n.text.as_str())
        )));
    }
    let sig = data
        .kind
        .signature(&arg_tys)
        .map_err(|e| inst.pos.error(format!("`{}`: {e}", inst.opcode)))?;
    let declared: Vec<Type> = data.results.iter().map(|&r| k.value_type(r)).collect();
    if sig != declared {
        // Only reachable if a type suffix is missing where the signature needs one.
        return Err(inst.pos.error(format!(
            "`{}` yields {sig:?} but its results were typed {declared:?}",
            inst.opcode
        )));
    }
    Ok(())
}
