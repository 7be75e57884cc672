//! Successor and predecessor lists of a kernel's blocks, stored compactly
//! (one flat array per direction plus offsets) so that building them costs two
//! allocations whatever the kernel size.

use cranelift_entity::EntityRef;

use crate::entities::Block;
use crate::inst::{BlockCall, Terminator};
use crate::kernel::Kernel;

/// Every block call of a terminator, in the order of [`Terminator::calls`]
/// (`then` before `otherwise`, table targets before `default`), without allocating.
pub fn block_calls(term: &Terminator) -> impl Iterator<Item = &BlockCall> {
    let (first, middle, last): (Option<&BlockCall>, &[BlockCall], Option<&BlockCall>) = match term {
        Terminator::Jump(call) => (Some(call), &[], None),
        Terminator::Branch {
            then, otherwise, ..
        } => (Some(then), &[], Some(otherwise)),
        Terminator::Table {
            targets, default, ..
        } => (None, targets.as_slice(), Some(default)),
        Terminator::Exit => (None, &[], None),
    };
    first.into_iter().chain(middle).chain(last)
}

/// The control-flow graph. An edge appears once per block call, so a branch
/// whose two arms target the same block gives two equal entries.
#[derive(Clone, Debug, Default)]
pub struct Cfg {
    succ_start: Vec<u32>,
    succs: Vec<Block>,
    pred_start: Vec<u32>,
    preds: Vec<Block>,
}

impl Cfg {
    /// Builds the graph; calls to blocks that do not exist and blocks without a
    /// terminator contribute no edges.
    pub fn compute(kernel: &Kernel) -> Cfg {
        let n = kernel.blocks.len();
        let mut succ_start = Vec::with_capacity(n + 1);
        let mut succs = Vec::with_capacity(n * 2);
        for data in kernel.blocks.values() {
            succ_start.push(succs.len() as u32);
            if let Some(term) = &data.term {
                succs.extend(
                    block_calls(term)
                        .map(|call| call.block)
                        .filter(|target| target.index() < n),
                );
            }
        }
        succ_start.push(succs.len() as u32);

        // Counting sort of the edges by target gives the predecessor lists.
        let mut pred_start = vec![0u32; n + 1];
        for target in &succs {
            pred_start[target.index() + 1] += 1;
        }
        for i in 0..n {
            pred_start[i + 1] += pred_start[i];
        }
        let mut fill = pred_start.clone();
        let mut preds = vec![Block::from_u32(0); succs.len()];
        for (source, window) in succ_start.windows(2).enumerate() {
            for target in &succs[window[0] as usize..window[1] as usize] {
                let slot = &mut fill[target.index()];
                preds[*slot as usize] = Block::new(source);
                *slot += 1;
            }
        }
        Cfg {
            succ_start,
            succs,
            pred_start,
            preds,
        }
    }

    /// Number of blocks the graph was built for.
    pub fn block_count(&self) -> usize {
        self.succ_start.len().saturating_sub(1)
    }

    /// Targets of `block`'s terminator (empty for unknown blocks).
    pub fn succs(&self, block: Block) -> &[Block] {
        slice(&self.succ_start, &self.succs, block)
    }

    /// Blocks whose terminator targets `block` (empty for unknown blocks).
    pub fn preds(&self, block: Block) -> &[Block] {
        slice(&self.pred_start, &self.preds, block)
    }
}

fn slice<'a>(start: &[u32], items: &'a [Block], block: Block) -> &'a [Block] {
    match (start.get(block.index()), start.get(block.index() + 1)) {
        (Some(&lo), Some(&hi)) => &items[lo as usize..hi as usize],
        _ => &[],
    }
}
