//! Whether a kernel can run in lockstep, and its shape for the lowering:
//! the positions outside regions, divergent regions, scalar values.
//!
//! A kernel qualifies when `wavejit_ir::analysis::waves_commute` proves that
//! no two lanes touch the same memory inside a barrier interval (so any
//! order of lanes within an interval gives the interpreter's results), every
//! divergent branch's region is acyclic, in pc order and joins at a higher
//! pc (so running its blocks in pc order under masks is the lowest-pc-first
//! schedule of one wave), and every branch outside regions is decided by a
//! value the lowering computes as a scalar.

use std::collections::{HashMap, HashSet};

use cranelift_entity::SecondaryMap;
use wavejit_ir::analysis::{Uniformity, waves_commute};
use wavejit_ir::{
    Block, Builtin, CastOp, IBinOp, InstKind, IntCC, Kernel, Terminator, Type, Value, ValueDef,
};

use crate::plan::Plan;

/// A position outside regions: a block and the index of the first
/// instruction run from there (0, or right after a barrier).
pub(crate) type Start = (Block, usize);

/// An outermost divergent region.
#[derive(Clone, Debug)]
pub(crate) struct LsRegion {
    /// Its blocks in pc order.
    pub blocks: Vec<Block>,
    pub join: Option<Block>,
    /// The most region blocks a lane can enter in one pass (per-lane steps).
    pub longest: u32,
    /// When the region is one block entered by lanes whose index passes a
    /// compare with a scalar: the compare (its lanes are then an interval,
    /// and the branch needs no lane work at all).
    pub guard: Option<Guard>,
}

/// `lid cc bound` decides which lanes enter a one-block region.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Guard {
    /// With the lane index on the left (swapped and negated as needed).
    pub cc: IntCC,
    /// A scalar or constant `i32`.
    pub bound: Value,
}

#[derive(Clone, Debug)]
pub(crate) struct LsPlan {
    pub scalar: HashSet<Value>,
    /// Outermost regions by their branch block.
    pub regions: HashMap<Block, LsRegion>,
    pub in_region: SecondaryMap<Block, bool>,
    /// Every position outside regions a pass can be at, the entry first: a
    /// block's start, or right after a barrier in it.
    pub nodes: Vec<Start>,
}

/// Positions at most (the lowering emits a block and a chunk loop each).
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
            if r.blocks.contains(&r.branch) {
                // A loop whose exit diverges: its lanes run different
                // iterations (the scheduled core's work).
                return Err("a loop whose exit diverges".into());
            }
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
                    guard: None,
                },
            );
        }
        let scalar = scalars(kernel, &uni, &in_region);
        for (&b, r) in regions.iter_mut() {
            r.guard = guard(kernel, &scalar, b, r);
        }
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
            nodes: Vec::new(),
        };
        lp.nodes_of(kernel)?;
        if let Some(&(b, _)) = lp.nodes.iter().find(|(b, _)| lp.in_region[*b]) {
            // Reached outside every region's own order (defensive: the
            // region checks above should make this impossible).
            return Err(format!("{b} is both in a region and outside them"));
        }
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

    fn nodes_of(&mut self, kernel: &Kernel) -> Result<(), String> {
        let entry = kernel.blocks.keys().next().ok_or("no blocks")?;
        let mut nodes = vec![(entry, 0)];
        let mut seen: HashSet<Start> = HashSet::from([(entry, 0)]);
        let mut i = 0;
        while i < nodes.len() {
            let (b, from) = nodes[i];
            i += 1;
            let next: Vec<Start> = match (
                Self::barrier_in(kernel, b, from),
                &kernel.blocks[b].term,
                self.regions.get(&b),
            ) {
                (Some(k), _, _) => vec![(b, k + 1)],
                (None, _, Some(r)) => r.join.into_iter().map(|j| (j, 0)).collect(),
                (None, Some(t), None) => t.calls().iter().map(|c| (c.block, 0)).collect(),
                (None, None, None) => Vec::new(),
            };
            for n in next {
                if seen.insert(n) {
                    nodes.push(n);
                }
            }
            if nodes.len() > MAX_NODES {
                return Err("too many blocks".into());
            }
        }
        self.nodes = nodes;
        Ok(())
    }
}

/// The guard of region `r` of branch block `b`, if it has one: `r` is one
/// block without parameters that jumps (or exits) to the join, the join has
/// no parameters, the branch passes no arguments, and the branch's condition
/// is `local_index cc bound` for an unsigned `cc` and a scalar or constant
/// bound, computed in `b` for the branch alone, the only lane work of `b`.
fn guard(kernel: &Kernel, scalar: &HashSet<Value>, b: Block, r: &LsRegion) -> Option<Guard> {
    let [x] = r.blocks[..] else { return None };
    let join = r.join?;
    let Some(Terminator::Branch {
        cond,
        then,
        otherwise,
    }) = &kernel.blocks[b].term
    else {
        return None;
    };
    let plain = |blk: Block| kernel.blocks[blk].params.is_empty();
    let exits_to_join = match &kernel.blocks[x].term {
        Some(Terminator::Jump(c)) => c.block == join && c.args.is_empty(),
        Some(Terminator::Exit) => true,
        _ => false,
    };
    if !plain(x)
        || !plain(join)
        || !then.args.is_empty()
        || !otherwise.args.is_empty()
        || !exits_to_join
    {
        return None;
    }
    let taken = if then.block == x && otherwise.block == join {
        true
    } else if otherwise.block == x && then.block == join {
        false
    } else {
        return None;
    };
    let ValueDef::Result { inst, .. } = kernel.values[*cond].def else {
        return None;
    };
    let (InstKind::Icmp(cc), &[a, c]) = (&kernel.insts[inst].kind, &kernel.insts[inst].args[..])
    else {
        return None;
    };
    let lid = |v: Value| match kernel.values[v].def {
        ValueDef::Result { inst, .. } => {
            kernel.insts[inst].kind == InstKind::Builtin(Builtin::LocalIndex)
        }
        _ => false,
    };
    let bound_ok = |v: Value| {
        kernel.value_type(v) == Type::I32
            && (scalar.contains(&v) || crate::plan::const_bits(kernel, v).is_some())
    };
    let (cc, bound) = if lid(a) && bound_ok(c) {
        (*cc, c)
    } else if lid(c) && bound_ok(a) {
        (swapped(*cc)?, a)
    } else {
        return None;
    };
    let cc = if taken { cc } else { negated(cc)? };
    if !matches!(
        cc,
        IntCC::Ult | IntCC::Ule | IntCC::Ugt | IntCC::Uge | IntCC::Eq
    ) {
        return None;
    }
    // The branch block does nothing else per lane, and the compare is the
    // branch's alone.
    let lone = kernel.blocks[b].insts.iter().all(|&i| {
        let d = &kernel.insts[i];
        i == inst
            || matches!(
                d.kind,
                InstKind::Const { .. } | InstKind::Barrier | InstKind::Builtin(Builtin::LocalIndex)
            )
            || matches!(d.results[..], [v] if scalar.contains(&v))
    });
    let used_elsewhere = kernel.insts.values().any(|d| d.args.contains(cond))
        || kernel.blocks.values().any(|d| {
            d.term
                .iter()
                .flat_map(|t| t.calls())
                .any(|c| c.args.contains(cond))
        });
    (lone && !used_elsewhere).then_some(Guard { cc, bound })
}

/// `b cc' a` for `a cc b` (unsigned and equality only).
fn swapped(cc: IntCC) -> Option<IntCC> {
    Some(match cc {
        IntCC::Ult => IntCC::Ugt,
        IntCC::Ule => IntCC::Uge,
        IntCC::Ugt => IntCC::Ult,
        IntCC::Uge => IntCC::Ule,
        IntCC::Eq => IntCC::Eq,
        IntCC::Ne => IntCC::Ne,
        _ => return None,
    })
}

/// The condition that holds when `cc` does not (unsigned and equality).
fn negated(cc: IntCC) -> Option<IntCC> {
    Some(match cc {
        IntCC::Ult => IntCC::Uge,
        IntCC::Ule => IntCC::Ugt,
        IntCC::Ugt => IntCC::Ule,
        IntCC::Uge => IntCC::Ult,
        IntCC::Eq => IntCC::Ne,
        IntCC::Ne => IntCC::Eq,
        _ => return None,
    })
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
        // At a constant offset (the lowering tests the range and faults
        // every live lane when it is out of it, as each lane would).
        InstKind::Load(a) => {
            a.space == wavejit_ir::AddrSpace::Uniform
                && a.count == 1
                && u32::from(a.bits) == ty.bits()
                && matches!(ty, Type::I32 | Type::I64)
                && args
                    .first()
                    .and_then(|&v| crate::plan::const_bits(kernel, v))
                    .is_some_and(|o| o < 1 << 30)
        }
        InstKind::Cast { op, to } => matches!(
            (op, arg_ty(0), to),
            (CastOp::Zext | CastOp::Sext, Some(Type::I32), Type::I64)
                | (CastOp::Zext, Some(Type::I1), Type::I32 | Type::I64)
                | (CastOp::Trunc, Some(Type::I64), Type::I32)
        ),
        _ => false,
    }
}
