//! Straight-line block merging: a block entered only by an unconditional jump
//! from the block laid out right before it (empty `exit` blocks in between
//! aside) is appended to that block, its parameters replaced by the jump's
//! arguments.
//!
//! Lifters leave such chains where predication folded away (AGX: the exec-mask
//! regions around every memory access become `jump`s once the mask is known);
//! engines pay per block entered (the JIT runs each as a pass over the lanes).
//!
//! Unlike the other transforms this one changes one observable: the watchdog
//! counts blocks entered, so a lane takes one step fewer for every merged edge it
//! would have crossed, and a runaway kernel faults later (still with a watchdog
//! fault). Everything else is the same. Values: the parameters take exactly the
//! jump's arguments. The schedule: lanes wait only at a block start another lane
//! stands at, at a sync instruction or at the lowest pc; the merged block start
//! was entered only by lanes coming straight from the block before it, with no
//! live code laid out between them, so no lane ever stood there while others
//! ran (lanes in empty `exit` blocks laid out between only finish, which nothing
//! observes) — the co-active sets, the order of memory effects and every other
//! fault are unchanged. Block numbers are kept (merged blocks stay as empty `exit`
//! blocks), so fault reports name the same blocks.

use cranelift_entity::SecondaryMap;

use super::compact::{compact, map_uses};
use crate::entities::{Block, Value};
use crate::inst::Terminator;
use crate::kernel::Kernel;
use crate::verify::{VerifyError, verify};

/// Merges every chain of `kernel` (see the module documentation); returns how
/// many blocks were merged into their predecessor, or the verifier's error with
/// `kernel` untouched.
pub fn merge_straight_blocks(kernel: &mut Kernel) -> Result<usize, VerifyError> {
    verify(kernel)?;
    let mut incoming: SecondaryMap<Block, u32> = SecondaryMap::new();
    for data in kernel.blocks.values() {
        for call in data.term.iter().flat_map(Terminator::calls) {
            incoming[call.block] += 1;
        }
    }
    let entry = kernel.entry();
    let order: Vec<Block> = kernel.blocks.keys().collect();
    // An empty block ending in `exit` has no effect a lane could observe: the
    // lanes in it just finish.
    let idle = |k: &Kernel, b: Block| {
        k.blocks[b].insts.is_empty() && matches!(k.blocks[b].term, Some(Terminator::Exit))
    };
    let mut alias: SecondaryMap<Value, Option<Value>> = SecondaryMap::new();
    let mut merged = 0;
    for &a in &order {
        if idle(kernel, a) {
            continue;
        }
        while let Some(Terminator::Jump(call)) = kernel.blocks[a].term.clone() {
            let b = call.block;
            let (pa, pb) = (a.as_u32() as usize, b.as_u32() as usize);
            let adjacent = pb > pa
                && order
                    .get(pa + 1..pb)
                    .is_some_and(|between| between.iter().all(|&x| idle(kernel, x)));
            if !adjacent || Some(b) == entry || incoming[b] != 1 {
                break;
            }
            let data = std::mem::take(&mut kernel.blocks[b]);
            for (&p, &arg) in data.params.iter().zip(&call.args) {
                // The argument may be a parameter merged earlier in the chain.
                alias[p] = Some(alias[arg].unwrap_or(arg));
            }
            kernel.blocks[a].insts.extend(data.insts);
            kernel.blocks[a].term = data.term;
            kernel.blocks[b].term = Some(Terminator::Exit);
            merged += 1;
        }
    }
    if merged > 0 {
        map_uses(kernel, |v| {
            if let Some(a) = alias[*v] {
                *v = a;
            }
        });
        compact(kernel);
    }
    Ok(merged)
}
