//! SSA rules: every use is defined, before the use in its own block and in a
//! dominating block otherwise.

use super::{Role, Rule, Verifier, Where};
use cranelift_entity::EntityRef;

use crate::analysis::{DomTree, block_calls};
use crate::entities::{Block, Value};
use crate::inst::Terminator;

impl Verifier<'_> {
    pub(super) fn check_uses(&mut self) {
        let kernel = self.kernel;
        let dom = DomTree::compute(kernel);
        for (block, data) in kernel.blocks.iter() {
            for (index, &inst) in data.insts.iter().enumerate() {
                // Only the first placement of an existing instruction is checked.
                if self.placed.get(inst.index()) != Some(&Some((block, index as u32))) {
                    continue;
                }
                let pos = index as u32 + 1;
                let at = Where::Inst(Some(block), inst);
                for (arg, &value) in kernel.insts[inst].args.iter().enumerate() {
                    self.check_use(&dom, block, pos, value, Role::Arg(arg), at);
                }
            }
            let Some(term) = &data.term else { continue };
            let pos = data.insts.len() as u32 + 1;
            let at = Where::Terminator(block);
            match term {
                Terminator::Branch { cond, .. } => {
                    self.check_use(&dom, block, pos, *cond, Role::Cond, at)
                }
                Terminator::Table { index, .. } => {
                    self.check_use(&dom, block, pos, *index, Role::Index, at)
                }
                Terminator::Jump(_) | Terminator::Exit => {}
            }
            for call in block_calls(term) {
                for (index, &value) in call.args.iter().enumerate() {
                    let role = Role::CallArg {
                        target: call.block,
                        index,
                    };
                    self.check_use(&dom, block, pos, value, role, at);
                }
            }
        }
    }

    /// Checks one use of `value` at position `pos` of `block` (see `DefSite`).
    fn check_use(
        &mut self,
        dom: &DomTree,
        block: Block,
        pos: u32,
        value: Value,
        role: Role,
        at: Where,
    ) {
        let Some(slot) = self.defs.get(value.index()) else {
            return; // a missing value, already reported
        };
        let Some(site) = *slot else {
            self.report(at, Rule::Undefined { role, value });
            return;
        };
        if site.block == block {
            if site.pos >= pos {
                self.report(at, Rule::UseBeforeDef { role, value });
            }
        } else if dom.is_reachable(block) && !dom.dominates(site.block, block) {
            let def_block = site.block;
            self.report(
                at,
                Rule::NotDominated {
                    role,
                    value,
                    def_block,
                },
            );
        }
    }
}
