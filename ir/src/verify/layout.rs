//! Layout rules: handles exist, each instruction is placed once, each value is
//! defined once and its `ValueDef` points back, every block is terminated.

use super::{DefSite, Rule, Verifier, Where};
use cranelift_entity::EntityRef;

use crate::entities::{Block, Inst, Value};
use crate::kernel::ValueDef;
use crate::verify::Role;

impl Verifier<'_> {
    /// Walks the blocks in layout order, recording definitions and placements and
    /// running the per-instruction and per-terminator rules on the way.
    pub(super) fn check_layout(&mut self) {
        let kernel = self.kernel;
        for (block, data) in kernel.blocks.iter() {
            if block.index() == 0 && !data.params.is_empty() {
                self.report(
                    Where::Block(block),
                    Rule::EntryHasParams {
                        count: data.params.len(),
                    },
                );
            }
            for (index, &value) in data.params.iter().enumerate() {
                let site = DefSite {
                    block,
                    pos: 0,
                    def: ValueDef::Param {
                        block,
                        index: index as u32,
                    },
                };
                self.define(value, Role::Param(index), site, Where::Block(block));
            }
            for (index, &inst) in data.insts.iter().enumerate() {
                self.place(block, index, inst);
            }
            match &data.term {
                Some(term) => self.check_terminator(block, term),
                None => self.report(Where::Block(block), Rule::NoTerminator),
            }
        }
    }

    /// Records `inst` at `index` of `block` and checks it, unless it does not
    /// exist or is already placed.
    fn place(&mut self, block: Block, index: usize, inst: Inst) {
        let kernel = self.kernel;
        let Some(data) = kernel.insts.get(inst) else {
            self.report(Where::Block(block), Rule::MissingInst { index, inst });
            return;
        };
        let at = Where::Inst(Some(block), inst);
        if let Some((first, _)) = self.placed[inst.index()] {
            self.report(at, Rule::InstPlacedTwice { first });
            return;
        }
        self.placed[inst.index()] = Some((block, index as u32));
        for (r, &value) in data.results.iter().enumerate() {
            let site = DefSite {
                block,
                pos: index as u32 + 1,
                def: ValueDef::Result {
                    inst,
                    index: r as u32,
                },
            };
            self.define(value, Role::Result(r), site, at);
        }
        self.check_inst(block, inst, data);
    }

    /// Records the definition of `value` at `site`.
    fn define(&mut self, value: Value, role: Role, site: DefSite, at: Where) {
        let Some(data) = self.kernel.values.get(value) else {
            self.report(at, Rule::MissingValue { role, value });
            return;
        };
        if let Some(first) = self.defs[value.index()] {
            let first = super::DefText(first.def);
            self.report(at, Rule::DefinedTwice { role, value, first });
            return;
        }
        self.defs[value.index()] = Some(site);
        if data.def != site.def {
            let recorded = super::DefText(data.def);
            self.report(
                at,
                Rule::WrongDef {
                    role,
                    value,
                    recorded,
                },
            );
        }
    }

    /// Every instruction of the arena must sit in some block.
    pub(super) fn check_all_placed(&mut self) {
        for inst in self.kernel.insts.keys() {
            if self.placed[inst.index()].is_none() {
                self.report(Where::Inst(None, inst), Rule::InstNotPlaced);
            }
        }
    }
}
