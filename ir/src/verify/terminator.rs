//! Terminator rules: targets exist, block-call arguments match the target's
//! parameters, branch conditions are `i1` and table indices `i32`.

use super::{Role, Rule, Verifier, Where};
use crate::analysis::block_calls;
use crate::entities::Block;
use crate::inst::Terminator;
use crate::types::Type;

impl Verifier<'_> {
    pub(super) fn check_terminator(&mut self, block: Block, term: &Terminator) {
        let at = Where::Terminator(block);
        match term {
            Terminator::Branch { cond, .. } => match self.kernel.values.get(*cond) {
                Some(v) if v.ty != Type::I1 => self.report(
                    at,
                    Rule::CondNotI1 {
                        value: *cond,
                        got: v.ty,
                    },
                ),
                Some(_) => {}
                None => self.report(
                    at,
                    Rule::MissingValue {
                        role: Role::Cond,
                        value: *cond,
                    },
                ),
            },
            Terminator::Table { index, .. } => match self.kernel.values.get(*index) {
                Some(v) if v.ty != Type::I32 => self.report(
                    at,
                    Rule::IndexNotI32 {
                        value: *index,
                        got: v.ty,
                    },
                ),
                Some(_) => {}
                None => self.report(
                    at,
                    Rule::MissingValue {
                        role: Role::Index,
                        value: *index,
                    },
                ),
            },
            Terminator::Jump(_) | Terminator::Exit => {}
        }

        let kernel = self.kernel;
        for call in block_calls(term) {
            let target = call.block;
            for (index, &value) in call.args.iter().enumerate() {
                if kernel.values.get(value).is_none() {
                    let role = Role::CallArg { target, index };
                    self.report(at, Rule::MissingValue { role, value });
                }
            }
            let Some(target_data) = kernel.blocks.get(target) else {
                self.report(at, Rule::MissingBlock { block: target });
                continue;
            };
            if call.args.len() != target_data.params.len() {
                let rule = Rule::CallArity {
                    target,
                    expected: target_data.params.len(),
                    got: call.args.len(),
                };
                self.report(at, rule);
                continue;
            }
            for (index, (&value, &param)) in call.args.iter().zip(&target_data.params).enumerate() {
                // Missing arguments and parameters are reported elsewhere.
                if let (Some(arg), Some(param)) =
                    (kernel.values.get(value), kernel.values.get(param))
                    && arg.ty != param.ty
                {
                    let rule = Rule::CallArgType {
                        role: Role::CallArg { target, index },
                        value,
                        expected: param.ty,
                        got: arg.ty,
                    };
                    self.report(at, rule);
                }
            }
        }
    }
}
