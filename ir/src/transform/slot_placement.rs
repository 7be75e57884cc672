//! Where promoted slots need block parameters: pruned SSA placement (Cytron et
//! al.): the iterated dominance frontier of the blocks that write a slot (plus
//! the entry, which gives every slot its initial zero), kept only where the
//! slot is live on entry, so no dead parameters are created.

use cranelift_entity::EntityRef;

use super::private_slots::Slots;
use crate::analysis::{Cfg, DomTree};
use crate::entities::Block;
use crate::kernel::Kernel;

/// One bit per slot for every block, in one flat vector.
struct BitMatrix {
    words: usize,
    bits: Vec<u64>,
}

impl BitMatrix {
    fn new(rows: usize, cols: usize) -> BitMatrix {
        let words = cols.div_ceil(64);
        BitMatrix {
            words,
            bits: vec![0; rows * words],
        }
    }
    fn get(&self, row: usize, col: usize) -> bool {
        self.bits[row * self.words + col / 64] >> (col % 64) & 1 != 0
    }
    fn set(&mut self, row: usize, col: usize) {
        self.bits[row * self.words + col / 64] |= 1 << (col % 64);
    }
    fn row(&self, row: usize) -> &[u64] {
        &self.bits[row * self.words..(row + 1) * self.words]
    }
}

/// Per block (by index): the slots that get a block parameter, in slot order.
/// Unreachable blocks get none.
pub(crate) fn place_params(
    kernel: &Kernel,
    cfg: &Cfg,
    dom: &DomTree,
    slots: &Slots,
) -> Vec<Vec<usize>> {
    let n = kernel.blocks.len();
    let count = slots.slots.len();
    let mut params = vec![Vec::new(); n];
    if count == 0 {
        return params;
    }
    // Upward-exposed reads (a partial store reads the rest of its slot) and writes.
    let mut reads = BitMatrix::new(n, count);
    let mut writes = BitMatrix::new(n, count);
    for &block in dom.rpo() {
        for inst in &kernel.blocks[block].insts {
            let Some(a) = slots.accesses.get(inst) else {
                continue;
            };
            let b = block.index();
            let partial = a.store && !a.covers(&slots.slots[a.slot]);
            if (!a.store || partial) && !writes.get(b, a.slot) {
                reads.set(b, a.slot);
            }
            if a.store {
                writes.set(b, a.slot);
            }
        }
    }
    let live_in = live_in(cfg, dom, &reads, &writes);
    let frontiers = dominance_frontiers(cfg, dom, n);

    // Iterated frontier per slot, with an epoch stamp instead of clearing.
    let mut seen = vec![usize::MAX; n];
    let mut has_param = vec![usize::MAX; n];
    let mut work: Vec<Block> = Vec::new();
    for slot in 0..count {
        work.clear();
        for &block in dom.rpo() {
            if block.index() == 0 || writes.get(block.index(), slot) {
                seen[block.index()] = slot;
                work.push(block);
            }
        }
        while let Some(block) = work.pop() {
            for &y in &frontiers[block.index()] {
                if has_param[y.index()] == slot {
                    continue;
                }
                has_param[y.index()] = slot;
                if live_in.get(y.index(), slot) {
                    params[y.index()].push(slot);
                }
                // A parameter is a definition too, live or not (it bounds the frontier).
                if seen[y.index()] != slot {
                    seen[y.index()] = slot;
                    work.push(y);
                }
            }
        }
    }
    params
}

/// Backward dataflow to a fixed point over the reachable blocks.
fn live_in(cfg: &Cfg, dom: &DomTree, reads: &BitMatrix, writes: &BitMatrix) -> BitMatrix {
    let words = reads.words;
    let mut live = BitMatrix {
        words,
        bits: vec![0; reads.bits.len()],
    };
    let mut out = vec![0u64; words];
    let mut changed = true;
    while changed {
        changed = false;
        for &block in dom.rpo().iter().rev() {
            out.fill(0);
            for succ in cfg.succs(block) {
                for (o, s) in out.iter_mut().zip(live.row(succ.index())) {
                    *o |= s;
                }
            }
            let b = block.index();
            for (w, &o) in out.iter().enumerate() {
                let new = reads.row(b)[w] | (o & !writes.row(b)[w]);
                let cell = &mut live.bits[b * words + w];
                if *cell != new {
                    *cell = new;
                    changed = true;
                }
            }
        }
    }
    live
}

/// Dominance frontiers of the reachable blocks (Cooper, Harvey and Kennedy's
/// runner walk from each predecessor of a join up to the join's idom).
fn dominance_frontiers(cfg: &Cfg, dom: &DomTree, n: usize) -> Vec<Vec<Block>> {
    let mut df: Vec<Vec<Block>> = vec![Vec::new(); n];
    for &block in dom.rpo() {
        let preds = cfg.preds(block);
        if preds.len() < 2 {
            continue;
        }
        let idom = dom.idom(block);
        for &pred in preds {
            if !dom.is_reachable(pred) {
                continue;
            }
            let mut runner = Some(pred);
            while let Some(r) = runner {
                if Some(r) == idom {
                    break;
                }
                let list = &mut df[r.index()];
                if list.last() != Some(&block) {
                    list.push(block);
                }
                runner = dom.idom(r);
            }
        }
    }
    df
}
