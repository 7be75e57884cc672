//! Dominators by the Cooper-Harvey-Kennedy iterative algorithm ("A Simple, Fast
//! Dominance Algorithm"), over reverse postorder from the entry block, plus a
//! preorder numbering of the dominator tree so `dominates` is O(1).

use cranelift_entity::EntityRef;

use crate::analysis::cfg::Cfg;
use crate::entities::Block;
use crate::kernel::Kernel;

const NONE: u32 = u32::MAX;

/// Dominator tree of the blocks reachable from the entry (block 0).
#[derive(Clone, Debug, Default)]
pub struct DomTree {
    /// Reachable blocks in reverse postorder; `rpo[0]` is the entry.
    rpo: Vec<Block>,
    /// Per block: its index in `rpo`, or `NONE` when unreachable.
    rpo_num: Vec<u32>,
    /// Per rpo index: rpo index of the immediate dominator (the entry points to itself).
    idom: Vec<u32>,
    /// Per rpo index: preorder number in the dominator tree.
    pre: Vec<u32>,
    /// Per rpo index: largest preorder number inside its dominator subtree.
    last: Vec<u32>,
}

impl DomTree {
    /// Computes the dominator tree of `kernel` (building its CFG first).
    pub fn compute(kernel: &Kernel) -> DomTree {
        DomTree::from_cfg(&Cfg::compute(kernel))
    }

    /// Computes the dominator tree from an existing CFG; block 0 is the entry.
    pub fn from_cfg(cfg: &Cfg) -> DomTree {
        let n = cfg.block_count();
        if n == 0 {
            return DomTree::default();
        }
        let (rpo, rpo_num) = reverse_postorder(cfg, n);
        let idom = immediate_dominators(cfg, &rpo, &rpo_num);
        let (pre, last) = number_tree(&idom);
        DomTree {
            rpo,
            rpo_num,
            idom,
            pre,
            last,
        }
    }

    /// Reachable blocks in reverse postorder (entry first).
    pub fn rpo(&self) -> &[Block] {
        &self.rpo
    }

    pub fn is_reachable(&self, block: Block) -> bool {
        self.rpo_index(block).is_some()
    }

    /// Position of `block` in [`DomTree::rpo`], or `None` when unreachable.
    pub fn rpo_index(&self, block: Block) -> Option<usize> {
        match self.rpo_num.get(block.index()) {
            Some(&i) if i != NONE => Some(i as usize),
            _ => None,
        }
    }

    /// The immediate dominator; `None` for the entry and for unreachable blocks.
    pub fn idom(&self, block: Block) -> Option<Block> {
        let i = self.rpo_index(block)?;
        if i == 0 {
            None
        } else {
            Some(self.rpo[self.idom[i] as usize])
        }
    }

    /// True when every path from the entry to `b` passes through `a` (a block
    /// dominates itself). An unreachable block is dominated only by itself and
    /// dominates only itself.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        if a == b {
            return true;
        }
        match (self.rpo_index(a), self.rpo_index(b)) {
            (Some(a), Some(b)) => self.pre[a] <= self.pre[b] && self.pre[b] <= self.last[a],
            _ => false,
        }
    }
}

/// Iterative depth-first search from block 0.
fn reverse_postorder(cfg: &Cfg, n: usize) -> (Vec<Block>, Vec<u32>) {
    let mut visited = vec![false; n];
    let mut post = Vec::with_capacity(n);
    let mut stack: Vec<(Block, usize)> = vec![(Block::from_u32(0), 0)];
    visited[0] = true;
    while let Some(top) = stack.last_mut() {
        let (block, next) = *top;
        match cfg.succs(block).get(next) {
            Some(&succ) => {
                top.1 += 1;
                if !visited[succ.index()] {
                    visited[succ.index()] = true;
                    stack.push((succ, 0));
                }
            }
            None => {
                post.push(block);
                stack.pop();
            }
        }
    }
    post.reverse();
    let mut rpo_num = vec![NONE; n];
    for (i, block) in post.iter().enumerate() {
        rpo_num[block.index()] = i as u32;
    }
    (post, rpo_num)
}

fn immediate_dominators(cfg: &Cfg, rpo: &[Block], rpo_num: &[u32]) -> Vec<u32> {
    let mut idom = vec![NONE; rpo.len()];
    idom[0] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for (i, &block) in rpo.iter().enumerate().skip(1) {
            let mut new_idom = NONE;
            for pred in cfg.preds(block) {
                let p = rpo_num[pred.index()];
                if p == NONE || idom[p as usize] == NONE {
                    continue;
                }
                new_idom = if new_idom == NONE {
                    p
                } else {
                    intersect(&idom, p, new_idom)
                };
            }
            if idom[i] != new_idom {
                idom[i] = new_idom;
                changed = true;
            }
        }
    }
    idom
}

/// Walks both fingers up the tree until they meet (rpo numbers decrease upward).
fn intersect(idom: &[u32], mut a: u32, mut b: u32) -> u32 {
    while a != b {
        while a > b {
            a = idom[a as usize];
        }
        while b > a {
            b = idom[b as usize];
        }
    }
    a
}

/// Preorder numbers and subtree ends of the dominator tree, iteratively.
fn number_tree(idom: &[u32]) -> (Vec<u32>, Vec<u32>) {
    let n = idom.len();
    // Children lists as one flat array (counting sort by parent).
    let mut start = vec![0u32; n + 1];
    for &parent in &idom[1..] {
        start[parent as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut fill = start.clone();
    let mut children = vec![0u32; n.saturating_sub(1)];
    for (child, &parent) in idom.iter().enumerate().skip(1) {
        let slot = &mut fill[parent as usize];
        children[*slot as usize] = child as u32;
        *slot += 1;
    }

    let mut pre = vec![0u32; n];
    let mut last = vec![0u32; n];
    let mut counter = 0u32;
    let mut stack: Vec<(u32, u32)> = vec![(0, start[0])];
    pre[0] = 0;
    counter += 1;
    while let Some(top) = stack.last_mut() {
        let (node, cursor) = *top;
        if cursor < start[node as usize + 1] {
            top.1 += 1;
            let child = children[cursor as usize];
            pre[child as usize] = counter;
            counter += 1;
            stack.push((child, start[child as usize]));
        } else {
            last[node as usize] = counter - 1;
            stack.pop();
        }
    }
    (pre, last)
}
