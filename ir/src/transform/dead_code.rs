//! Dead-code removal that cannot change a run.
//!
//! - Unreachable blocks (no CFG path from the entry) are emptied and end in
//!   `Exit`: no lane ever runs them, and they keep their place so block numbers
//!   (fault reports, the lowest-pc schedule) stay the same.
//! - An instruction whose results nobody reads goes when it cannot fault: pure
//!   instructions `eval_pure` evaluates for their argument types (whether it can
//!   is decided by kind and types alone, so a probe on zeros tells), and
//!   builtins (their dimensions verified). Memory, atomics, cross-lane
//!   operations, barriers, fences and traps always stay.
//! - A block parameter nothing live reads goes, with its argument on every
//!   edge into the block (a dead copy), also when it only feeds itself around
//!   a loop.
//!
//! Removing instructions or edge copies leaves every lane entering the same
//! blocks (the watchdog count) and, as for `fold`, the co-active sets and the
//! order of memory effects as they were.

use cranelift_entity::SecondaryMap;

use crate::analysis::DomTree;
use crate::entities::{Block, Inst, Value};
use crate::inst::{InstKind, Terminator};
use crate::kernel::{Kernel, ValueDef};
use crate::semantics::eval_pure;
use crate::types::Type;

/// What dead-code removal dropped.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DeadCounts {
    /// Instructions removed because no one reads their results.
    pub insts: usize,
    /// Block parameters removed (with their edge arguments).
    pub params: usize,
    /// Unreachable blocks emptied.
    pub unreachable_blocks: usize,
    /// Instructions those blocks held.
    pub unreachable_insts: usize,
}

/// Empties every unreachable block (see the module documentation).
pub(crate) fn empty_unreachable(kernel: &mut Kernel, counts: &mut DeadCounts) {
    let dom = DomTree::compute(kernel);
    for (block, data) in kernel.blocks.iter_mut() {
        if dom.is_reachable(block) {
            continue;
        }
        if data.insts.is_empty() && matches!(data.term, Some(Terminator::Exit)) {
            continue;
        }
        counts.unreachable_blocks += 1;
        counts.unreachable_insts += data.insts.len();
        data.insts.clear();
        data.term = Some(Terminator::Exit);
    }
}

/// Removes every instruction and parameter nothing live needs: live are the
/// instructions that must stay (see `removable`), branch conditions and table
/// indices, and what live values are computed from: a live instruction's
/// arguments, and a live parameter's argument on each edge into its block.
/// Cycles that only feed themselves (a loop counter nobody reads) go too.
pub(crate) fn remove_dead(kernel: &mut Kernel, counts: &mut DeadCounts) {
    let live = mark_live(kernel);
    for block in kernel.blocks.values_mut() {
        let before = block.insts.len();
        block.insts.retain(|&i| live.insts[i]);
        counts.insts += before - block.insts.len();
    }
    let entry = kernel.entry();
    let blocks: Vec<Block> = kernel.blocks.keys().collect();
    for block in blocks {
        if Some(block) == entry {
            continue;
        }
        let keep: Vec<bool> = kernel.blocks[block]
            .params
            .iter()
            .map(|&p| live.values[p])
            .collect();
        if keep.iter().all(|&k| k) {
            continue;
        }
        counts.params += keep.iter().filter(|&&k| !k).count();
        for data in kernel.blocks.values_mut() {
            let Some(term) = &mut data.term else {
                continue;
            };
            for call in term.calls_mut() {
                if call.block == block {
                    let mut i = 0;
                    call.args.retain(|_| {
                        i += 1;
                        keep.get(i - 1).copied().unwrap_or(true)
                    });
                }
            }
        }
        let data = &mut kernel.blocks[block];
        let mut i = 0;
        data.params.retain(|_| {
            i += 1;
            keep.get(i - 1).copied().unwrap_or(true)
        });
        // The remaining parameters' definitions name their new positions.
        for (index, &p) in data.params.iter().enumerate() {
            kernel.values[p].def = ValueDef::Param {
                block,
                index: index as u32,
            };
        }
    }
}

struct Live {
    insts: SecondaryMap<Inst, bool>,
    values: SecondaryMap<Value, bool>,
}

fn mark_live(kernel: &Kernel) -> Live {
    let mut live = Live {
        insts: SecondaryMap::new(),
        values: SecondaryMap::new(),
    };
    // Per block: the argument lists of the edges into it.
    let mut edges: SecondaryMap<Block, Vec<Vec<Value>>> = SecondaryMap::new();
    let mut work: Vec<Value> = Vec::new();
    for data in kernel.blocks.values() {
        for &inst in &data.insts {
            if !removable(kernel, inst) {
                live.insts[inst] = true;
                work.extend(&kernel.insts[inst].args);
            }
        }
        match &data.term {
            Some(Terminator::Branch { cond, .. }) => work.push(*cond),
            Some(Terminator::Table { index, .. }) => work.push(*index),
            _ => {}
        }
        for call in data.term.iter().flat_map(Terminator::calls) {
            edges[call.block].push(call.args.clone());
        }
    }
    while let Some(v) = work.pop() {
        if live.values[v] {
            continue;
        }
        live.values[v] = true;
        match kernel.values[v].def {
            ValueDef::Result { inst, .. } => {
                if !live.insts[inst] {
                    live.insts[inst] = true;
                    work.extend(&kernel.insts[inst].args);
                }
            }
            ValueDef::Param { block, index } => {
                for args in &edges[block] {
                    work.extend(args.get(index as usize));
                }
            }
        }
    }
    live
}

/// True when removing `inst` (results unread) cannot change a run: a
/// builtin, or what `eval_pure` evaluates for its argument types (so it
/// depends on its arguments alone, which `cse` relies on too).
pub(super) fn removable(kernel: &Kernel, inst: Inst) -> bool {
    let data = &kernel.insts[inst];
    if let InstKind::Builtin(_) = data.kind {
        // The verifier checked its dimension: it always yields a value.
        return true;
    }
    let arg_tys: Vec<Type> = data.args.iter().map(|&a| kernel.value_type(a)).collect();
    let zeros = [0u64; 8];
    let mut out = [0u64; 4];
    let (Some(args), Some(out)) = (
        zeros.get(..data.args.len()),
        out.get_mut(..data.results.len()),
    ) else {
        return false;
    };
    eval_pure(&data.kind, &arg_tys, args, out)
}
