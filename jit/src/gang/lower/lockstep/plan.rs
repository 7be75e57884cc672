//! Whether a kernel can run in lockstep, and its shape for the lowering:
//! epochs, the blocks each one runs, divergent regions, scalar values.
//!
//! A kernel qualifies when `wavejit_ir::analysis::waves_commute` proves that
//! no two lanes touch the same memory inside a barrier interval (so any
//! order of lanes within an epoch gives the interpreter's results), every
//! divergent branch's region is acyclic, in pc order and joins at a higher
//! pc (so running its blocks in pc order under masks is the lowest-pc-first
//! schedule of one wave), and every branch outside regions is decided by a
//! value the lowering computes as a scalar.

use std::collections::{HashMap, HashSet};

use cranelift_entity::SecondaryMap;
use wavejit_ir::analysis::{Uniformity, waves_commute};
use wavejit_ir::{
    Block, Builtin, CastOp, IBinOp, InstKind, Kernel, Terminator, Type, Value, ValueDef,
};

use crate::plan::Plan;

/// A position where an epoch starts: the kernel's entry, or right after a
/// barrier (block, index of the first instruction after it).
pub(crate) type Start = (Block, usize);

/// An outermost divergent region.
#[derive(Clone, Debug)]
pub(crate) struct LsRegion {
    /// Its blocks in pc order.
    pub blocks: Vec<Block>,
    pub join: Option<Block>,
    /// The most region blocks a lane can enter in one pass (per-lane steps).
    pub longest: u32,
}

/// One barrier interval: where it starts and the skeleton positions
/// (block, first instruction) it runs.
#[derive(Clone, Debug)]
pub(crate) struct Epoch {
    pub start: Start,
    pub nodes: Vec<Start>,
    /// Scalars it defines: each chunk's pass starts from their values at the
    /// epoch's start.
    pub restore: Vec<Value>,
}

#[derive(Clone, Debug)]
pub(crate) struct LsPlan {
    pub scalar: HashSet<Value>,
    /// Outermost regions by their branch block.
    pub regions: HashMap<Block, LsRegion>,
    pub in_region: SecondaryMap<Block, bool>,
    pub epochs: Vec<Epoch>,
    /// Epoch number of every start.
    pub epoch_of: HashMap<Start, usize>,
}

/// Positions visited per epoch at most, summed (the lowering emits each).
const MAX_NODES: usize = 4096;

/// Scalar types: `i1` (as 0/1 bytes), `i32`, `i64`.
fn scalar_type(ty: Type) -> bool {
    matches!(ty, Type::I1 | Type::I32 | Type::I64)
}

impl LsPlan {
    pub fn new(kernel: &Kernel, plan: &Plan) -> Result<LsPlan, String> {
        let barrier = |i: &wavejit_ir::Inst| kernel.insts[*i].kind == InstKind::Barrier;
        if !kernel.blocks.values().any(|b| b.insts.iter().any(barrier)) {
            return Err("no barrier".into());
        }
        waves_commute(kernel).map_err(|e| e.to_string())?;
        if kernel
            .blocks
            .values()
            .any(|b| matches!(b.term, Some(Terminator::Table { .. }) | None))
        {
            return Err("a table terminator".into());
        }
        let uni = Uniformity::compute(kernel);
        let mut in_region: SecondaryMap<Block, bool> = SecondaryMap::new();
        for b in kernel.blocks.keys() {
            in_region[b] = uni.in_divergent_region(b);
        }
        let pc = |b: Block| plan.block_pc[b];
        let mut regions = HashMap::new();
        for r in uni.regions() {
            if in_region[r.branch] {
                continue;
            }
            let mut blocks = r.blocks.clone();
            blocks.sort_by_key(|&b| pc(b));
            let inside: HashSet<Block> = blocks.iter().copied().collect();
            let mut longest: HashMap<Block, u32> = HashMap::new();
            for &b in blocks.iter().rev() {
                let mut best = 0;
                for call in kernel.blocks[b].term.iter().flat_map(|t| t.calls()) {
                    if inside.contains(&call.block) {
                        if pc(call.block) <= pc(b) {
                            return Err("a divergent region out of pc order".into());
                        }
                        best = best.max(longest[&call.block]);
                    }
                }
                longest.insert(b, best + 1);
            }
            if let Some(j) = r.join
                && (in_region[j] || blocks.last().is_some_and(|&l| pc(l) >= pc(j)))
            {
                return Err("a divergent region that joins below its blocks".into());
            }
            let len = blocks
                .first()
                .map_or(0, |_| longest.values().copied().max().unwrap_or(0));
            regions.insert(
                r.branch,
                LsRegion {
                    blocks,
                    join: r.join,
                    longest: len,
                },
            );
        }
        let scalar = scalars(kernel, &uni, &in_region);
        for (b, data) in kernel.blocks.iter() {
            if in_region[b] {
                continue;
            }
            if let Some(Terminator::Branch { cond, .. }) = &data.term
                && !scalar.contains(cond)
                && !regions.contains_key(&b)
            {
                return Err("a uniform branch not computed as a scalar".into());
            }
        }
        let mut lp = LsPlan {
            scalar,
            regions,
            in_region,
            epochs: Vec::new(),
            epoch_of: HashMap::new(),
        };
        lp.epochs_of(kernel)?;
        Ok(lp)
    }

    /// The first barrier at or after `from` in `b`.
    pub fn barrier_in(kernel: &Kernel, b: Block, from: usize) -> Option<usize> {
        kernel.blocks[b]
            .insts
            .iter()
            .enumerate()
            .skip(from)
            .find(|(_, i)| kernel.insts[**i].kind == InstKind::Barrier)
            .map(|(k, _)| k)
    }

    fn epochs_of(&mut self, kernel: &Kernel) -> Result<(), String> {
        let entry = kernel.blocks.keys().next().ok_or("no blocks")?;
        let mut starts: Vec<Start> = vec![(entry, 0)];
        for (b, data) in kernel.blocks.iter() {
            for (k, &i) in data.insts.iter().enumerate() {
                if kernel.insts[i].kind == InstKind::Barrier {
                    starts.push((b, k + 1));
                }
            }
        }
        let mut total = 0;
        for (e, &s) in starts.iter().enumerate() {
            self.epoch_of.insert(s, e);
            let mut nodes = vec![s];
            let mut seen: HashSet<Start> = HashSet::from([s]);
            let mut i = 0;
            while i < nodes.len() {
                let (b, from) = nodes[i];
                i += 1;
                if Self::barrier_in(kernel, b, from).is_some() {
                    continue;
                }
                let next: Vec<Block> = match (&kernel.blocks[b].term, self.regions.get(&b)) {
                    (_, Some(r)) => r.join.into_iter().collect(),
                    (Some(t), None) => t.calls().iter().map(|c| c.block).collect(),
                    (None, None) => Vec::new(),
                };
                for t in next {
                    if seen.insert((t, 0)) {
                        nodes.push((t, 0));
                    }
                }
            }
            total += nodes.len();
            if total > MAX_NODES {
                return Err("too many blocks per barrier interval".into());
            }
            // Scalars the epoch defines (in its positions, and parameters
            // its edges assign).
            let mut restore = Vec::new();
            for &(b, from) in &nodes {
                let data = &kernel.blocks[b];
                if from == 0 {
                    restore.extend(data.params.iter().filter(|p| self.scalar.contains(p)));
                }
                let end = Self::barrier_in(kernel, b, from).unwrap_or(data.insts.len());
                for &i in &data.insts[from..end] {
                    restore.extend(
                        kernel.insts[i]
                            .results
                            .iter()
                            .filter(|r| self.scalar.contains(r)),
                    );
                }
            }
            restore.sort();
            restore.dedup();
            self.epochs.push(Epoch {
                start: s,
                nodes,
                restore,
            });
        }
        Ok(())
    }
}

/// Uniform values outside divergent regions that the lowering computes as
/// scalars: supported instructions of scalar operands, and block
/// parameters whose every incoming argument is one.
fn scalars(
    kernel: &Kernel,
    uni: &Uniformity,
    in_region: &SecondaryMap<Block, bool>,
) -> HashSet<Value> {
    let konst = |v: Value| crate::plan::const_bits(kernel, v).is_some();
    let mut set: HashSet<Value> = HashSet::new();
    for (b, data) in kernel.blocks.iter() {
        if in_region[b] {
            continue;
        }
        for &p in &data.params {
            if uni.is_uniform(p) && scalar_type(kernel.value_type(p)) {
                set.insert(p);
            }
        }
        for &i in &data.insts {
            let d = &kernel.insts[i];
            if let [r] = d.results[..]
                && uni.is_uniform(r)
                && scalar_type(kernel.value_type(r))
                && supported(kernel, &d.kind, &d.args, r)
            {
                set.insert(r);
            }
        }
    }
    // Incoming arguments of every parameter.
    let mut incoming: HashMap<Value, Vec<Value>> = HashMap::new();
    for data in kernel.blocks.values() {
        for call in data.term.iter().flat_map(|t| t.calls()) {
            for (&a, &p) in call.args.iter().zip(&kernel.blocks[call.block].params) {
                incoming.entry(p).or_default().push(a);
            }
        }
    }
    loop {
        let drop: Vec<Value> = set
            .iter()
            .copied()
            .filter(|&v| {
                let args: Vec<Value> = match kernel.values[v].def {
                    ValueDef::Param { .. } => incoming.get(&v).cloned().unwrap_or_default(),
                    ValueDef::Result { inst, .. } => kernel.insts[inst].args.clone(),
                };
                args.iter().any(|&a| !set.contains(&a) && !konst(a))
            })
            .collect();
        if drop.is_empty() {
            return set;
        }
        for v in drop {
            set.remove(&v);
        }
    }
}

/// Instructions the lowering computes as scalars (pure, never faulting).
fn supported(kernel: &Kernel, kind: &InstKind, args: &[Value], r: Value) -> bool {
    let ty = kernel.value_type(r);
    let arg_ty = |k: usize| args.get(k).map(|&a| kernel.value_type(a));
    match kind {
        InstKind::Builtin(b) => matches!(
            b,
            Builtin::WorkgroupId(_)
                | Builtin::WorkgroupSize(_)
                | Builtin::NumWorkgroups(_)
                | Builtin::WaveSize
        ),
        InstKind::IBinary(op) => {
            use IBinOp::*;
            match ty {
                Type::I1 => matches!(op, And | Or | Xor),
                Type::I32 | Type::I64 => matches!(
                    op,
                    Add | Sub
                        | Mul
                        | And
                        | Or
                        | Xor
                        | Shl
                        | ShrU
                        | ShrS
                        | MinU
                        | MinS
                        | MaxU
                        | MaxS
                ),
                _ => false,
            }
        }
        InstKind::Icmp(_) => matches!(arg_ty(0), Some(Type::I32 | Type::I64)),
        InstKind::Select => arg_ty(0) == Some(Type::I1),
        InstKind::Cast { op, to } => matches!(
            (op, arg_ty(0), to),
            (CastOp::Zext | CastOp::Sext, Some(Type::I32), Type::I64)
                | (CastOp::Zext, Some(Type::I1), Type::I32 | Type::I64)
                | (CastOp::Trunc, Some(Type::I64), Type::I32)
        ),
        _ => false,
    }
}
