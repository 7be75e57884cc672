//! Which values are the same in every lane of a workgroup, which branches
//! every lane takes the same way, and the regions divergent branches span.
//!
//! A value is *uniform* when every lane of a workgroup that computes it
//! computes the same bits: constants, the workgroup's ids and sizes, uniform
//! loads at uniform addresses, and pure instructions of uniform operands.
//! Everything a lane reads of its own (its index, shared, global and private
//! memory, atomics, cross-lane results) is divergent, and so is everything
//! computed from it.
//!
//! A branch on a divergent condition splits the lanes; its *region* is every
//! block reachable from its targets before its immediate post-dominator (the
//! *join*, where every path meets again). Lanes reach a region's blocks by
//! different paths, so block parameters inside the region and at its join are
//! divergent, and so is a value defined inside the region and read outside
//! it (a loop whose exit diverges leaves each lane with its own last value).
//! The rules feed each other and are iterated to a fixpoint. When one side
//! of a branch exits early (the paths meet only at the kernel's end), the
//! join is the nearest block every path to a barrier passes: lanes that
//! avoid it never meet a barrier again. Anything the analysis cannot place
//! (no join at all) counts as divergent, so the answer errs only toward
//! divergence.

use cranelift_entity::{EntityRef, SecondaryMap};

use crate::analysis::cfg::Cfg;
use crate::entities::{Block, Value};
use crate::inst::{AddrSpace, Builtin, InstKind, Terminator};
use crate::kernel::Kernel;

/// The blocks a divergent branch spans.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The block ending with the divergent branch.
    pub branch: Block,
    /// Its immediate post-dominator, where the lanes meet again (`None` when
    /// the paths only meet at the kernel's end).
    pub join: Option<Block>,
    /// Blocks reachable from the branch's targets without passing the join,
    /// in index order.
    pub blocks: Vec<Block>,
}

/// The uniformity of every value and branch of a kernel.
#[derive(Clone, Debug)]
pub struct Uniformity {
    divergent: SecondaryMap<Value, bool>,
    divergent_branch: SecondaryMap<Block, bool>,
    in_region: SecondaryMap<Block, bool>,
    regions: Vec<Region>,
}

impl Uniformity {
    pub fn compute(kernel: &Kernel) -> Uniformity {
        let cfg = Cfg::compute(kernel);
        let pdom = PostDominators::compute(kernel, &cfg);
        let mut u = Uniformity {
            divergent: SecondaryMap::new(),
            divergent_branch: SecondaryMap::new(),
            in_region: SecondaryMap::new(),
            regions: Vec::new(),
        };
        // Where each value is defined and read (compared with every region).
        let mut def_block: SecondaryMap<Value, Option<Block>> = SecondaryMap::new();
        let mut readers: SecondaryMap<Value, Vec<Block>> = SecondaryMap::new();
        for (b, data) in kernel.blocks.iter() {
            for &p in &data.params {
                def_block[p] = Some(b);
            }
            for &i in &data.insts {
                for &r in &kernel.insts[i].results {
                    def_block[r] = Some(b);
                }
                for &a in &kernel.insts[i].args {
                    readers[a].push(b);
                }
            }
            if let Some(t) = &data.term {
                for a in t.uses() {
                    readers[a].push(b);
                }
                for call in crate::analysis::block_calls(t) {
                    for &a in &call.args {
                        readers[a].push(b);
                    }
                }
            }
        }
        loop {
            let mut changed = u.propagate_values(kernel);
            for (b, data) in kernel.blocks.iter() {
                let split = match &data.term {
                    Some(Terminator::Branch { cond, .. }) => u.divergent[*cond],
                    Some(Terminator::Table { index, .. }) => u.divergent[*index],
                    _ => false,
                };
                if !split || u.divergent_branch[b] {
                    continue;
                }
                u.divergent_branch[b] = true;
                changed = true;
                let region = region_of(kernel, &cfg, &pdom, b);
                for &r in region.blocks.iter().chain(region.join.iter()) {
                    for &p in &kernel.blocks[r].params {
                        u.divergent[p] = true;
                    }
                }
                let mut inside: SecondaryMap<Block, bool> = SecondaryMap::new();
                for &r in &region.blocks {
                    inside[r] = true;
                    u.in_region[r] = true;
                }
                // Values of the region read outside it.
                for v in kernel.values.keys() {
                    let Some(def) = def_block[v] else { continue };
                    if inside[def] && readers[v].iter().any(|&r| !inside[r]) {
                        u.divergent[v] = true;
                    }
                }
                u.regions.push(region);
            }
            if !changed {
                break;
            }
        }
        u.regions.sort_by_key(|r| r.branch.index());
        u
    }

    /// Marks results of divergent sources and of divergent operands;
    /// returns whether anything changed.
    fn propagate_values(&mut self, kernel: &Kernel) -> bool {
        let mut changed = false;
        loop {
            let mut again = false;
            for data in kernel.blocks.values() {
                for &i in &data.insts {
                    let inst = &kernel.insts[i];
                    if inst.results.iter().all(|&r| self.divergent[r]) {
                        continue;
                    }
                    if source_divergent(&inst.kind) || inst.args.iter().any(|&a| self.divergent[a])
                    {
                        for &r in &inst.results {
                            self.divergent[r] = true;
                        }
                        again = true;
                    }
                }
                // Block arguments flow into parameters.
                if let Some(t) = &data.term {
                    for call in crate::analysis::block_calls(t) {
                        let Some(target) = kernel.blocks.get(call.block) else {
                            continue;
                        };
                        for (&a, &p) in call.args.iter().zip(&target.params) {
                            if self.divergent[a] && !self.divergent[p] {
                                self.divergent[p] = true;
                                again = true;
                            }
                        }
                    }
                }
            }
            if !again {
                return changed;
            }
            changed = true;
        }
    }

    /// Every lane of a workgroup that computes `v` computes the same bits.
    pub fn is_uniform(&self, v: Value) -> bool {
        !self.divergent[v]
    }

    /// `block` ends with a branch whose lanes may go different ways.
    pub fn is_divergent_branch(&self, block: Block) -> bool {
        self.divergent_branch[block]
    }

    /// `block` lies inside some divergent branch's region (some lanes may
    /// skip it while others run it).
    pub fn in_divergent_region(&self, block: Block) -> bool {
        self.in_region[block]
    }

    /// The regions of every divergent branch, by branch block.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }
}

/// Results that differ between lanes whatever the operands.
fn source_divergent(kind: &InstKind) -> bool {
    match kind {
        InstKind::Builtin(b) => matches!(
            b,
            Builtin::LocalId(_) | Builtin::LocalIndex | Builtin::LaneId | Builtin::WaveId
        ),
        InstKind::Load(a) => a.space != AddrSpace::Uniform,
        InstKind::Atomic { .. } => true,
        k => k.is_cross_lane(),
    }
}

fn region_of(kernel: &Kernel, cfg: &Cfg, pdom: &PostDominators, branch: Block) -> Region {
    let join = pdom
        .ipdom(branch)
        .or_else(|| barrier_join(kernel, cfg, branch));
    let n = cfg.block_count();
    let mut seen = vec![false; n];
    let mut stack: Vec<Block> = cfg.succs(branch).to_vec();
    while let Some(b) = stack.pop() {
        if Some(b) == join || seen[b.index()] {
            continue;
        }
        seen[b.index()] = true;
        stack.extend_from_slice(cfg.succs(b));
    }
    Region {
        branch,
        join,
        blocks: (0..n).filter(|&i| seen[i]).map(Block::new).collect(),
    }
}

/// When the paths from `branch` meet only at the kernel's end (one side
/// exits early): the nearest block every path from `branch` to a barrier
/// passes, if any. Lanes that avoid it never reach a barrier again, so for
/// the lanes still live it is where they meet.
fn barrier_join(kernel: &Kernel, cfg: &Cfg, branch: Block) -> Option<Block> {
    let n = cfg.block_count();
    let barrier = |b: Block| {
        kernel.blocks[b]
            .insts
            .iter()
            .any(|&i| kernel.insts[i].kind == crate::inst::InstKind::Barrier)
    };
    // Blocks reachable from the branch's targets, nearest first, stopping
    // at `avoid`; whether a barrier block was among them.
    let reach = |avoid: Option<Block>| {
        let mut seen = vec![false; n];
        let mut order = Vec::new();
        let mut queue: std::collections::VecDeque<Block> =
            cfg.succs(branch).iter().copied().collect();
        let mut hit = false;
        while let Some(b) = queue.pop_front() {
            if Some(b) == avoid || seen[b.index()] {
                continue;
            }
            seen[b.index()] = true;
            order.push(b);
            hit |= barrier(b);
            queue.extend(cfg.succs(b).iter().copied());
        }
        (order, hit)
    };
    let (order, hit) = reach(None);
    if !hit {
        return None;
    }
    order
        .into_iter()
        .filter(|&j| j != branch)
        .find(|&j| !reach(Some(j)).1)
}

/// Post-dominator sets as bit sets (kernels have at most a few thousand
/// blocks; the sets are only built for kernels that are analysed).
pub struct PostDominators {
    words: usize,
    sets: Vec<u64>,
    /// Blocks from which an exit is reachable.
    exits: Vec<bool>,
}

impl PostDominators {
    pub fn compute(kernel: &Kernel, cfg: &Cfg) -> PostDominators {
        let n = cfg.block_count();
        let words = n.div_ceil(64).max(1);
        let mut sets = vec![!0u64; n * words];
        let is_exit = |b: Block| {
            matches!(kernel.blocks[b].term, Some(Terminator::Exit) | None)
                || cfg.succs(b).is_empty()
        };
        for i in 0..n {
            if is_exit(Block::new(i)) {
                let s = &mut sets[i * words..(i + 1) * words];
                s.fill(0);
                s[i / 64] |= 1 << (i % 64);
            }
        }
        let mut tmp = vec![0u64; words];
        loop {
            let mut changed = false;
            for i in (0..n).rev() {
                let b = Block::new(i);
                if is_exit(b) {
                    continue;
                }
                tmp.fill(!0);
                for &s in cfg.succs(b) {
                    for (t, &x) in tmp.iter_mut().zip(&sets[s.index() * words..][..words]) {
                        *t &= x;
                    }
                }
                tmp[i / 64] |= 1 << (i % 64);
                let cur = &mut sets[i * words..(i + 1) * words];
                if *cur != tmp[..] {
                    cur.copy_from_slice(&tmp);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        // Blocks that reach no exit keep the full set.
        let mut exits = vec![false; n];
        loop {
            let mut changed = false;
            for i in 0..n {
                let b = Block::new(i);
                if !exits[i] && (is_exit(b) || cfg.succs(b).iter().any(|s| exits[s.index()])) {
                    exits[i] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        PostDominators { words, sets, exits }
    }

    fn set(&self, b: Block) -> &[u64] {
        &self.sets[b.index() * self.words..][..self.words]
    }

    /// `a` post-dominates `b`: every path from `b` to an exit passes `a`.
    pub fn post_dominates(&self, a: Block, b: Block) -> bool {
        self.exits[b.index()] && self.set(b)[a.index() / 64] & (1 << (a.index() % 64)) != 0
    }

    /// The nearest block other than `b` every path from `b` to an exit passes.
    pub fn ipdom(&self, b: Block) -> Option<Block> {
        if !self.exits.get(b.index()).copied().unwrap_or(false) {
            return None;
        }
        let count = |s: &[u64]| s.iter().map(|w| w.count_ones()).sum::<u32>();
        let want = count(self.set(b)).checked_sub(1)?;
        (0..self.exits.len())
            .map(Block::new)
            .find(|&p| p != b && self.post_dominates(p, b) && count(self.set(p)) == want)
    }
}
