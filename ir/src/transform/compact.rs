//! Renumbers a kernel's arenas after a transform removed instructions from
//! blocks: instructions no block places are dropped (the verifier requires
//! every arena instruction to be placed), and so are values nothing defines.
//! Relative order is kept, so the output stays close to the input.

use cranelift_entity::{PrimaryMap, SecondaryMap};

use crate::entities::{Inst, Value};
use crate::kernel::{Kernel, SrcLoc, ValueData, ValueDef};

/// Drops unplaced instructions and undefined values, renumbering the rest.
/// Uses of dropped values (none in a well-formed kernel) are left as they were.
pub fn compact(kernel: &mut Kernel) {
    let mut inst_map: SecondaryMap<Inst, Option<Inst>> = SecondaryMap::new();
    let mut new_insts = PrimaryMap::new();
    let mut new_srclocs: SecondaryMap<Inst, SrcLoc> = SecondaryMap::new();
    for block in kernel.blocks.values_mut() {
        for inst in block.insts.iter_mut() {
            let Some(data) = kernel.insts.get(*inst) else {
                continue;
            };
            if let Some(placed) = inst_map[*inst] {
                // Placed twice (never in a verified kernel): keep one copy.
                *inst = placed;
                continue;
            }
            let new = new_insts.push(data.clone());
            new_srclocs[new] = kernel.srclocs[*inst];
            inst_map[*inst] = Some(new);
            *inst = new;
        }
    }

    // Values defined by a placed instruction or a block parameter, in arena order.
    let mut defined: SecondaryMap<Value, bool> = SecondaryMap::new();
    for block in kernel.blocks.values() {
        for &p in &block.params {
            defined[p] = true;
        }
    }
    for data in new_insts.values() {
        for &r in &data.results {
            defined[r] = true;
        }
    }
    let mut value_map: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
    let mut new_values: PrimaryMap<Value, ValueData> = PrimaryMap::new();
    for (v, data) in kernel.values.iter() {
        if defined[v] {
            let def = match data.def {
                ValueDef::Result { inst, index } => ValueDef::Result {
                    inst: inst_map[inst].unwrap_or(inst),
                    index,
                },
                param => param,
            };
            value_map[v] = Some(new_values.push(ValueData { ty: data.ty, def }));
        }
    }
    let map = |v: &mut Value| *v = value_map[*v].unwrap_or(*v);

    for data in new_insts.values_mut() {
        data.args.iter_mut().for_each(map);
        data.results.iter_mut().for_each(map);
    }
    for block in kernel.blocks.values_mut() {
        block.params.iter_mut().for_each(map);
        if let Some(term) = &mut block.term {
            term.uses_mut(map);
        }
    }
    kernel.insts = new_insts;
    kernel.values = new_values;
    kernel.srclocs = new_srclocs;
}

/// Applies `f` to every operand of the placed instructions and of the terminators
/// (the uses a value substitution has to rewrite).
pub(crate) fn map_uses(kernel: &mut Kernel, mut f: impl FnMut(&mut Value)) {
    for block in kernel.blocks.values_mut() {
        for &inst in &block.insts {
            kernel.insts[inst].args.iter_mut().for_each(&mut f);
        }
        if let Some(term) = &mut block.term {
            term.uses_mut(&mut f);
        }
    }
}
