//! When a workgroup's waves may run as one wave.
//!
//! The interpreter runs a workgroup wave after wave: each wave until its
//! lanes park at a barrier (or exit), lowest pc first, each instruction for
//! the wave's co-active lanes in lane order. Running the whole workgroup as
//! one wave under the same rule changes only the order in which lanes of
//! *different* waves perform the instructions of one barrier interval (an
//! *epoch*): each lane still runs its own path, and a barrier still separates
//! everything before it from everything after it. That order is invisible
//! when
//! - no instruction reads or writes across lanes (no cross-lane operation),
//! - every barrier is reached by all live lanes together, so the epochs of
//!   all lanes are the same (no barrier inside a divergent branch's region,
//!   see [`Uniformity`]), and
//! - inside an epoch, no two lanes touch the same byte of shared or global
//!   memory when one of them writes it.
//!
//! [`waves_commute`] proves the last point per pair of accesses that can run
//! in one epoch (both reachable from the same barrier or from the entry
//! without passing a barrier), for every pair of distinct lanes, with three
//! rules:
//! - *one lane*: both accesses run only in the same single lane (`lid == k`);
//! - *same base*: both addresses are one value plus constants, and that value
//!   is at least `m` apart between any two lanes (`lid` scaled, offset by
//!   uniform values, widened): `4 * lid` and `4 * lid + 4` do not overlap for
//!   4-byte accesses;
//! - *disjoint ranges*: both addresses are affine in the lane index with
//!   uniform terms (`c * lid + sum a_k * u_k + k0`, exact in the address
//!   type's ring), the lanes are bounded by the branches that lead to the
//!   access (`lid < s` from `if (lid < s)`), the uniform values by the known
//!   bits analysis, and the address difference of any two such lanes lies
//!   outside the overlap window for every value of the uniforms: the tree
//!   reduction's `tree[lid] += tree[lid + s]` under `lid < s`.
//!
//! A uniform term must hold one value for the whole epoch in every lane: it
//! is defined outside every divergent region and outside every cycle that
//! passes no barrier. Anything not proved is a conflict: the answer errs only
//! toward "the waves do not commute".

use std::collections::{BTreeMap, HashMap, HashSet};

use cranelift_entity::{EntityRef, SecondaryMap};

use crate::analysis::cfg::Cfg;
use crate::analysis::dominance::DomTree;
use crate::analysis::uniform::Uniformity;
use crate::dispatch::MAX_WORKGROUP_LANES;
use crate::entities::{Block, Inst, Value};
use crate::inst::{AddrSpace, Builtin, CastOp, IBinOp, InstKind, IntCC, Terminator};
use crate::kernel::{Kernel, ValueDef};
use crate::types::Type;

/// Why a workgroup's waves may not run as one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WaveOrder {
    #[error("cross-lane instruction {0} sees the wave size")]
    CrossLane(Inst),
    #[error("barrier {0} may be reached by some lanes and not others")]
    DivergentBarrier(Inst),
    #[error("{0} and {1} may touch the same memory from two lanes in one barrier interval")]
    MayRace(Inst, Inst),
    #[error("kernel too large to analyse ({0} blocks)")]
    TooLarge(usize),
}

/// Blocks beyond which the analysis gives up (its cycle test is quadratic).
const MAX_BLOCKS: usize = 4096;

/// Proves that running every workgroup of `kernel` as a single wave gives
/// the interpreter's results for any wave size (see the module
/// documentation), or says what stands in the way.
pub fn waves_commute(kernel: &Kernel) -> Result<(), WaveOrder> {
    let n = kernel.blocks.len();
    if n > MAX_BLOCKS {
        return Err(WaveOrder::TooLarge(n));
    }
    for data in kernel.blocks.values() {
        for &i in &data.insts {
            if kernel.insts[i].kind.is_cross_lane() {
                return Err(WaveOrder::CrossLane(i));
            }
        }
    }
    let uni = Uniformity::compute(kernel);
    for (b, data) in kernel.blocks.iter() {
        if !uni.in_divergent_region(b) {
            continue;
        }
        if let Some(&i) = data
            .insts
            .iter()
            .find(|&&i| kernel.insts[i].kind == InstKind::Barrier)
        {
            return Err(WaveOrder::DivergentBarrier(i));
        }
    }
    let cx = Context::new(kernel, uni);
    let mut checked: HashSet<(Inst, Inst)> = HashSet::new();
    for ops in cx.epochs() {
        for &a in &ops {
            if !cx.writes(a.inst) {
                continue;
            }
            for &b in &ops {
                if cx.space(a.inst) != cx.space(b.inst) || !checked.insert((a.inst, b.inst)) {
                    continue;
                }
                if !cx.disjoint(a, b) {
                    return Err(WaveOrder::MayRace(a.inst, b.inst));
                }
            }
        }
    }
    Ok(())
}

/// A memory access and where it is (block, index in the block).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
struct Op {
    inst: Inst,
    block: Block,
    index: usize,
}

/// `sum coef * sym + lid * lid_coef + k` in the ring of `bits`-bit integers
/// (coefficients as signed representatives).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Lin {
    bits: u32,
    lid: i128,
    syms: BTreeMap<Value, i128>,
    k: i128,
}

/// `x` as the signed representative of its class modulo `2^bits`.
fn wrap(x: i128, bits: u32) -> i128 {
    let m = 1i128 << bits;
    let r = x.rem_euclid(m);
    if r >= m / 2 { r - m } else { r }
}

impl Lin {
    fn konst(k: i128, bits: u32) -> Lin {
        Lin {
            bits,
            lid: 0,
            syms: BTreeMap::new(),
            k: wrap(k, bits),
        }
    }

    fn sym(v: Value, bits: u32) -> Lin {
        let mut l = Lin::konst(0, bits);
        l.syms.insert(v, 1);
        l
    }

    /// `self + f * o` (same ring).
    fn add_scaled(&self, o: &Lin, f: i128) -> Option<Lin> {
        if self.bits != o.bits {
            return None;
        }
        let b = self.bits;
        let mut r = self.clone();
        r.lid = wrap(r.lid + f * o.lid, b);
        r.k = wrap(r.k + f * o.k, b);
        for (&s, &c) in &o.syms {
            let e = r.syms.entry(s).or_insert(0);
            *e = wrap(*e + f * c, b);
        }
        r.syms.retain(|_, c| *c != 0);
        Some(r)
    }

    fn scale(&self, f: i128) -> Lin {
        Lin::konst(0, self.bits)
            .add_scaled(self, wrap(f, self.bits))
            .unwrap_or_else(|| self.clone())
    }

    /// The least and greatest integer value over every symbol in `[0, hi]`
    /// (the lane coefficient must be zero).
    fn range(&self, hi: &SecondaryMap<Value, u64>) -> (i128, i128) {
        let (mut lo, mut up) = (self.k, self.k);
        for (&s, &c) in &self.syms {
            let h = i128::from(hi[s]);
            if c > 0 {
                up += c * h;
            } else {
                lo += c * h;
            }
        }
        (lo, up)
    }
}

struct Context<'a> {
    kernel: &'a Kernel,
    uni: Uniformity,
    cfg: Cfg,
    dom: DomTree,
    /// Block of every instruction.
    block_of: SecondaryMap<Inst, Option<Block>>,
    /// Blocks on a cycle that passes no barrier.
    cyclic: Vec<bool>,
    has_barrier: Vec<bool>,
    hi: SecondaryMap<Value, u64>,
    reach: std::cell::RefCell<HashMap<Value, HashSet<Inst>>>,
}

/// Lanes per workgroup at most, the largest lane index + 1.
const LANES: i128 = MAX_WORKGROUP_LANES as i128;

impl<'a> Context<'a> {
    fn new(kernel: &'a Kernel, uni: Uniformity) -> Context<'a> {
        let cfg = Cfg::compute(kernel);
        let dom = DomTree::from_cfg(&cfg);
        let n = kernel.blocks.len();
        let mut block_of = SecondaryMap::new();
        let mut has_barrier = vec![false; n];
        for (b, data) in kernel.blocks.iter() {
            for &i in &data.insts {
                block_of[i] = Some(b);
                if kernel.insts[i].kind == InstKind::Barrier {
                    has_barrier[b.index()] = true;
                }
            }
        }
        // A barrier-free block is cyclic when it reaches itself through
        // barrier-free blocks.
        let mut cyclic = vec![false; n];
        for (start, slot) in cyclic.iter_mut().enumerate() {
            if has_barrier[start] {
                continue;
            }
            let mut seen = vec![false; n];
            let mut stack: Vec<Block> = cfg.succs(Block::new(start)).to_vec();
            while let Some(b) = stack.pop() {
                if has_barrier[b.index()] || seen[b.index()] {
                    continue;
                }
                if b.index() == start {
                    *slot = true;
                    break;
                }
                seen[b.index()] = true;
                stack.extend_from_slice(cfg.succs(b));
            }
        }
        Context {
            kernel,
            uni,
            cfg,
            dom,
            block_of,
            cyclic,
            has_barrier,
            hi: crate::transform::known_bits::value_bounds(kernel),
            reach: Default::default(),
        }
    }

    /// The shared and global accesses of every epoch: those reachable from
    /// the entry or right after a barrier without passing a barrier.
    fn epochs(&self) -> Vec<Vec<Op>> {
        let k = self.kernel;
        let mut starts: Vec<(Block, usize)> = Vec::new();
        if let Some(entry) = k.blocks.keys().next() {
            starts.push((entry, 0));
        }
        for (b, data) in k.blocks.iter() {
            for (x, &i) in data.insts.iter().enumerate() {
                if k.insts[i].kind == InstKind::Barrier {
                    starts.push((b, x + 1));
                }
            }
        }
        starts.into_iter().map(|s| self.walk(s)).collect()
    }

    /// The shared and global accesses reachable from `(block, index)`
    /// without passing a barrier.
    fn walk(&self, start: (Block, usize)) -> Vec<Op> {
        let k = self.kernel;
        let mut ops = Vec::new();
        let mut seen = vec![false; k.blocks.len()];
        let mut work = vec![start];
        while let Some((b, from)) = work.pop() {
            let data = &k.blocks[b];
            let mut stopped = false;
            for (x, &i) in data.insts.iter().enumerate().skip(from) {
                match &k.insts[i].kind {
                    InstKind::Barrier => {
                        stopped = true;
                        break;
                    }
                    InstKind::Load(a) | InstKind::Store(a) if visible(a.space) => ops.push(Op {
                        inst: i,
                        block: b,
                        index: x,
                    }),
                    InstKind::Atomic { .. } => ops.push(Op {
                        inst: i,
                        block: b,
                        index: x,
                    }),
                    _ => {}
                }
            }
            if stopped {
                continue;
            }
            for &s in self.cfg.succs(b) {
                if !seen[s.index()] {
                    seen[s.index()] = true;
                    work.push((s, 0));
                }
            }
        }
        ops
    }

    fn writes(&self, i: Inst) -> bool {
        matches!(
            self.kernel.insts[i].kind,
            InstKind::Store(_) | InstKind::Atomic { .. }
        )
    }

    fn space(&self, i: Inst) -> Option<AddrSpace> {
        match &self.kernel.insts[i].kind {
            InstKind::Load(a) | InstKind::Store(a) => Some(a.space),
            InstKind::Atomic { space, .. } => Some(*space),
            _ => None,
        }
    }

    /// Bytes an access touches from its address.
    fn size(&self, i: Inst) -> i128 {
        match &self.kernel.insts[i].kind {
            InstKind::Load(a) | InstKind::Store(a) => {
                i128::from(a.bits / 8).max(1) * i128::from(a.count)
            }
            InstKind::Atomic { ty, .. } => i128::from(ty.bytes()),
            _ => 0,
        }
    }

    /// Where `v` is defined.
    fn def_block(&self, v: Value) -> Option<Block> {
        match self.kernel.values[v].def {
            ValueDef::Param { block, .. } => Some(block),
            ValueDef::Result { inst, .. } => self.block_of[inst],
        }
    }

    fn konst(&self, v: Value) -> Option<i128> {
        let ValueDef::Result { inst, .. } = self.kernel.values[v].def else {
            return None;
        };
        match self.kernel.insts[inst].kind {
            InstKind::Const { ty, bits } if ty.is_int() => Some(i128::from(bits & ty.mask())),
            _ => None,
        }
    }

    /// `v` holds one value in every lane at each of the accesses `at`: it is
    /// uniform, computed by all lanes together (outside divergent regions),
    /// never twice in one epoch (outside barrier-free cycles), and not again
    /// between the epoch's start and any of `at` (else one access could see
    /// the value of the last epoch and another this epoch's).
    fn invariant(&self, v: Value, at: &[Inst]) -> bool {
        if self.konst(v).is_some() {
            return true;
        }
        self.uni.is_uniform(v)
            && self
                .def_block(v)
                .is_some_and(|b| !self.uni.in_divergent_region(b) && !self.cyclic[b.index()])
            && !at.iter().any(|i| self.reached_from_def(v).contains(i))
    }

    /// The accesses reachable from `v`'s definition without passing a
    /// barrier.
    fn reached_from_def(&self, v: Value) -> std::cell::Ref<'_, HashSet<Inst>> {
        if !self.reach.borrow().contains_key(&v) {
            let k = self.kernel;
            let start = match k.values[v].def {
                ValueDef::Param { block, .. } => Some((block, 0)),
                ValueDef::Result { inst, .. } => self.block_of[inst].and_then(|b| {
                    k.blocks[b]
                        .insts
                        .iter()
                        .position(|&i| i == inst)
                        .map(|x| (b, x + 1))
                }),
            };
            let set = start.map(|s| self.walk(s).into_iter().map(|o| o.inst).collect());
            self.reach.borrow_mut().insert(v, set.unwrap_or_default());
        }
        std::cell::Ref::map(self.reach.borrow(), |m| &m[&v])
    }

    fn bits_of(&self, v: Value) -> Option<u32> {
        match self.kernel.value_type(v) {
            Type::I32 => Some(32),
            Type::I64 => Some(64),
            _ => None,
        }
    }

    /// `v` as an affine form of the lane index and invariant values.
    fn lin(&self, v: Value, depth: u32, at: &[Inst]) -> Option<Lin> {
        let bits = self.bits_of(v)?;
        if let Some(c) = self.konst(v) {
            return Some(Lin::konst(c, bits));
        }
        let leaf = || self.invariant(v, at).then(|| Lin::sym(v, bits));
        if depth == 0 {
            return leaf();
        }
        let ValueDef::Result { inst, .. } = self.kernel.values[v].def else {
            return leaf();
        };
        let data = &self.kernel.insts[inst];
        let arg = |k: usize| self.lin(data.args[k], depth - 1, at);
        let formed = match &data.kind {
            InstKind::Builtin(Builtin::LocalIndex) => Some(Lin {
                bits: 32,
                lid: 1,
                syms: BTreeMap::new(),
                k: 0,
            }),
            InstKind::IBinary(IBinOp::Add) => {
                arg(0).zip(arg(1)).and_then(|(a, b)| a.add_scaled(&b, 1))
            }
            InstKind::IBinary(IBinOp::Sub) => {
                arg(0).zip(arg(1)).and_then(|(a, b)| a.add_scaled(&b, -1))
            }
            InstKind::IBinary(IBinOp::Mul) => {
                match (self.konst(data.args[0]), self.konst(data.args[1])) {
                    (_, Some(c)) => arg(0).map(|a| a.scale(c)),
                    (Some(c), _) => arg(1).map(|b| b.scale(c)),
                    _ => None,
                }
            }
            InstKind::IBinary(IBinOp::Shl) => self
                .konst(data.args[1])
                .and_then(|k| arg(0).map(|a| a.scale(1i128 << (k % i128::from(bits))))),
            InstKind::Cast {
                op: op @ (CastOp::Zext | CastOp::Sext),
                to: Type::I64,
            } if self.bits_of(data.args[0]) == Some(32) => {
                let a = arg(0)?;
                // Exact only while no lane wraps the 32-bit value: a form of
                // the lane index and constants whose range is checked.
                if a.lid == 0 || !a.syms.is_empty() {
                    None
                } else {
                    let ends = [a.k, a.k + a.lid * (LANES - 1)];
                    let (lo, hi) = (ends[0].min(ends[1]), ends[0].max(ends[1]));
                    let fits = if *op == CastOp::Zext {
                        lo >= 0 && hi < 1 << 32
                    } else {
                        lo >= -(1 << 31) && hi < 1 << 31
                    };
                    fits.then(|| Lin {
                        bits: 64,
                        lid: a.lid,
                        syms: BTreeMap::new(),
                        k: a.k,
                    })
                }
            }
            _ => None,
        };
        formed.or_else(leaf)
    }

    /// `a` and `b` compute the same bits in every lane: one value, equal
    /// constants, or the same pure instruction of such operands (lifters and
    /// generators recompute addresses instead of reusing them).
    fn same(&self, a: Value, b: Value, depth: u32) -> bool {
        if a == b {
            return true;
        }
        if let (Some(x), Some(y)) = (self.konst(a), self.konst(b)) {
            return x == y && self.kernel.value_type(a) == self.kernel.value_type(b);
        }
        let (ValueDef::Result { inst: ia, index: 0 }, ValueDef::Result { inst: ib, index: 0 }) =
            (self.kernel.values[a].def, self.kernel.values[b].def)
        else {
            return false;
        };
        let (da, db) = (&self.kernel.insts[ia], &self.kernel.insts[ib]);
        let pure = matches!(
            da.kind,
            InstKind::IBinary(_) | InstKind::Cast { .. } | InstKind::Builtin(_)
        );
        depth > 0
            && pure
            && da.kind == db.kind
            && da.args.len() == db.args.len()
            && da
                .args
                .iter()
                .zip(&db.args)
                .all(|(&x, &y)| self.same(x, y, depth - 1))
    }

    /// `v` minus the constants added to it, and their sum.
    fn peel(&self, mut v: Value) -> (Value, i128) {
        let mut k = 0i128;
        for _ in 0..16 {
            let ValueDef::Result { inst, .. } = self.kernel.values[v].def else {
                break;
            };
            let data = &self.kernel.insts[inst];
            match (&data.kind, &data.args[..]) {
                (InstKind::IBinary(IBinOp::Add), &[a, b]) => match (self.konst(a), self.konst(b)) {
                    (_, Some(c)) => {
                        k += c;
                        v = a;
                    }
                    (Some(c), _) => {
                        k += c;
                        v = b;
                    }
                    _ => break,
                },
                (InstKind::IBinary(IBinOp::Sub), &[a, b]) => match self.konst(b) {
                    Some(c) => {
                        k -= c;
                        v = a;
                    }
                    None => break,
                },
                _ => break,
            }
        }
        (v, k)
    }

    /// The least and greatest difference of `v` between two distinct lanes
    /// (in absolute value, as integers), when `v` is the lane index scaled,
    /// offset by invariant values and widened.
    fn spacing(&self, v: Value, depth: u32, at: &[Inst]) -> Option<(i128, i128)> {
        let bits = self.bits_of(v)?;
        let half = 1i128 << (bits - 1);
        if depth == 0 {
            return None;
        }
        let ValueDef::Result { inst, .. } = self.kernel.values[v].def else {
            return None;
        };
        let data = &self.kernel.insts[inst];
        let scaled = |a: Value, c: i128| {
            let c = wrap(c, bits).abs();
            let (m, d) = self.spacing(a, depth - 1, at)?;
            (c != 0 && d * c < half).then_some((m * c, d * c))
        };
        match (&data.kind, &data.args[..]) {
            (InstKind::Builtin(Builtin::LocalIndex), _) => Some((1, LANES - 1)),
            (InstKind::IBinary(IBinOp::Add), &[a, b]) => {
                if self.invariant(b, at) {
                    self.spacing(a, depth - 1, at)
                } else if self.invariant(a, at) {
                    self.spacing(b, depth - 1, at)
                } else {
                    None
                }
            }
            (InstKind::IBinary(IBinOp::Sub), &[a, b]) => {
                if self.invariant(b, at) {
                    self.spacing(a, depth - 1, at)
                } else if self.invariant(a, at) {
                    self.spacing(b, depth - 1, at)
                } else {
                    None
                }
            }
            (InstKind::IBinary(IBinOp::Mul), &[a, b]) => match (self.konst(a), self.konst(b)) {
                (_, Some(c)) => scaled(a, c),
                (Some(c), _) => scaled(b, c),
                _ => None,
            },
            (InstKind::IBinary(IBinOp::Shl), &[a, b]) => {
                let k = self.konst(b)? % i128::from(bits);
                scaled(a, 1i128 << k)
            }
            (
                InstKind::Cast {
                    op: CastOp::Zext | CastOp::Sext,
                    to: Type::I64,
                },
                &[a],
            ) if self.bits_of(a) == Some(32) => {
                // Two 32-bit values `d` apart are `d` or `2^32 - |d|` apart
                // once widened.
                let (m, d) = self.spacing(a, depth - 1, at)?;
                let w = 1i128 << 32;
                Some((m.min(w - d), w - m))
            }
            _ => None,
        }
    }

    /// Bounds of the lane index at `op` from the branches that lead there:
    /// candidates for the least and for the greatest index (each a form of
    /// invariant values), always including `0` and the largest index.
    fn lane_bounds(&self, op: Op, at: &[Inst]) -> (Vec<Lin>, Vec<Lin>) {
        let mut lo = vec![Lin::konst(0, 32)];
        let mut hi = vec![Lin::konst(LANES - 1, 32)];
        if self.kernel.blocks[op.block].insts[..op.index]
            .iter()
            .any(|&i| self.kernel.insts[i].kind == InstKind::Barrier)
        {
            return (lo, hi);
        }
        let mut y = op.block;
        loop {
            if let &[p] = self.cfg.preds(y)
                && !self.barrier_between(y, op.block)
                && let Some(Terminator::Branch {
                    cond,
                    then,
                    otherwise,
                }) = &self.kernel.blocks[p].term
                && then.block != otherwise.block
            {
                self.bound_from(*cond, then.block == y, at, &mut lo, &mut hi);
            }
            match self.dom.idom(y) {
                Some(d) if d != y => y = d,
                _ => break,
            }
        }
        (lo, hi)
    }

    /// Some path from the start of `from` to `to` passes a barrier (or
    /// `from`, other than `to`, holds one).
    fn barrier_between(&self, from: Block, to: Block) -> bool {
        if from == to {
            return false;
        }
        let mut seen = vec![false; self.kernel.blocks.len()];
        let mut stack = vec![from];
        while let Some(b) = stack.pop() {
            if b == to || seen[b.index()] {
                continue;
            }
            seen[b.index()] = true;
            if self.has_barrier[b.index()] {
                return true;
            }
            stack.extend_from_slice(self.cfg.succs(b));
        }
        false
    }

    /// Adds the bound `cond` (taken when `taken`) puts on the lane index.
    fn bound_from(
        &self,
        cond: Value,
        taken: bool,
        at: &[Inst],
        lo: &mut Vec<Lin>,
        hi: &mut Vec<Lin>,
    ) {
        let ValueDef::Result { inst, .. } = self.kernel.values[cond].def else {
            return;
        };
        let data = &self.kernel.insts[inst];
        let (InstKind::Icmp(cc), &[a, b]) = (&data.kind, &data.args[..]) else {
            return;
        };
        let is_lid = |v: Value| {
            self.lin(v, 8, at)
                .is_some_and(|l| l.bits == 32 && l.lid == 1 && l.syms.is_empty() && l.k == 0)
        };
        // The other side, with its exact integer range (no wrap).
        let (cc, other) = if is_lid(a) {
            (*cc, b)
        } else if is_lid(b) {
            (swap(*cc), a)
        } else {
            return;
        };
        let Some(f) = self
            .lin(other, 8, at)
            .filter(|l| l.lid == 0 && l.bits == 32)
        else {
            return;
        };
        let (min, max) = f.range(&self.hi);
        let signed = matches!(cc, IntCC::Slt | IntCC::Sle | IntCC::Sgt | IntCC::Sge);
        if min < 0 || max >= 1 << if signed { 31 } else { 32 } {
            return;
        }
        let cc = if taken { cc } else { negate(cc) };
        let one = Lin::konst(1, 32);
        match cc {
            IntCC::Ult | IntCC::Slt => hi.push(f.add_scaled(&one, -1).unwrap_or(f)),
            IntCC::Ule | IntCC::Sle => hi.push(f),
            IntCC::Ugt | IntCC::Sgt => lo.push(f.add_scaled(&one, 1).unwrap_or(f)),
            IntCC::Uge | IntCC::Sge => lo.push(f),
            IntCC::Eq => {
                lo.push(f.clone());
                hi.push(f);
            }
            IntCC::Ne => {}
        }
    }

    /// No byte that `a` touches in one lane is touched by `b` in another
    /// lane of the same epoch.
    fn disjoint(&self, a: Op, b: Op) -> bool {
        let (sa, sb) = (self.size(a.inst), self.size(b.inst));
        let (addr_a, addr_b) = (
            self.kernel.insts[a.inst].args[0],
            self.kernel.insts[b.inst].args[0],
        );
        let at = [a.inst, b.inst];
        let (la, ha) = self.lane_bounds(a, &at);
        let (lb, hb) = self.lane_bounds(b, &at);
        // One lane.
        let single = |lo: &[Lin], hi: &[Lin]| {
            lo.iter()
                .filter(|l| l.syms.is_empty())
                .find_map(|l| hi.iter().any(|h| h == l).then_some(l.k))
        };
        if let (Some(x), Some(y)) = (single(&la, &ha), single(&lb, &hb))
            && x == y
        {
            return true;
        }
        // Same base.
        let (va, ka) = self.peel(addr_a);
        let (vb, kb) = self.peel(addr_b);
        if self.same(va, vb, 8)
            && let (Some(bits), Some((m, d))) = (self.bits_of(va), self.spacing(va, 16, &at))
        {
            let delta = wrap(ka - kb, bits);
            let half = 1i128 << (bits - 1);
            if d + delta.abs() + sa + sb < half {
                // Overlap needs `-sb < x + delta < sa` for a difference
                // `x` with `m <= |x| <= d`.
                let (lo, hi) = (-sb - delta + 1, sa - delta - 1);
                let meets = |p: i128, q: i128| lo.max(p) <= hi.min(q);
                if !meets(m, d) && !meets(-d, -m) {
                    return true;
                }
            }
        }
        // Disjoint ranges.
        let (Some(fa), Some(fb)) = (self.lin(addr_a, 16, &at), self.lin(addr_b, 16, &at)) else {
            return false;
        };
        if fa.bits != fb.bits {
            return false;
        }
        for lo_a in &la {
            for hi_a in &ha {
                for lo_b in &lb {
                    for hi_b in &hb {
                        if self.ranges_apart(&fa, &fb, [lo_a, hi_a, lo_b, hi_b], sa, sb) {
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// `fa` for lanes in `[lo_a, hi_a]` and `fb` for lanes in `[lo_b, hi_b]`
    /// differ by at least the access sizes, whatever the invariant values.
    fn ranges_apart(&self, fa: &Lin, fb: &Lin, lanes: [&Lin; 4], sa: i128, sb: i128) -> bool {
        let [lo_a, hi_a, lo_b, hi_b] = lanes;
        // Lane bounds are 32-bit forms evaluated as integers (their range
        // was checked not to wrap); lift them to the address ring.
        let lift = |l: &Lin| Lin {
            bits: fa.bits,
            lid: 0,
            syms: l.syms.clone(),
            k: l.k,
        };
        let mut base = Lin {
            bits: 128,
            lid: 0,
            syms: fa.syms.clone(),
            k: fa.k - fb.k,
        };
        for (&s, &c) in &fb.syms {
            let e = base.syms.entry(s).or_insert(0);
            *e -= c;
        }
        base.syms.retain(|_, c| *c != 0);
        // Extremes of `ca * i` and `-cb * j`, as forms of the invariants.
        let term = |c: i128, lo: &Lin, hi: &Lin, max: bool| {
            let pick = if (c >= 0) == max { hi } else { lo };
            let mut l = lift(pick);
            l.bits = 128;
            for x in l.syms.values_mut() {
                *x *= c;
            }
            l.k *= c;
            l
        };
        let sum = |a: &Lin, b: &Lin, c: &Lin| {
            let mut r = a.clone();
            for o in [b, c] {
                r.k += o.k;
                for (&s, &x) in &o.syms {
                    *r.syms.entry(s).or_insert(0) += x;
                }
            }
            r
        };
        let max_f = sum(
            &base,
            &term(fa.lid, lo_a, hi_a, true),
            &term(-fb.lid, lo_b, hi_b, true),
        );
        let min_f = sum(
            &base,
            &term(fa.lid, lo_a, hi_a, false),
            &term(-fb.lid, lo_b, hi_b, false),
        );
        let (_, hi) = max_f.range(&self.hi);
        let (lo, _) = min_f.range(&self.hi);
        let m = 1i128 << fa.bits;
        (hi <= -sb && lo >= sa - m) || (lo >= sa && hi <= m - sb)
    }
}

fn visible(space: AddrSpace) -> bool {
    matches!(space, AddrSpace::Global | AddrSpace::Shared)
}

/// `b cc' a` for `a cc b`.
fn swap(cc: IntCC) -> IntCC {
    match cc {
        IntCC::Ult => IntCC::Ugt,
        IntCC::Ule => IntCC::Uge,
        IntCC::Ugt => IntCC::Ult,
        IntCC::Uge => IntCC::Ule,
        IntCC::Slt => IntCC::Sgt,
        IntCC::Sle => IntCC::Sge,
        IntCC::Sgt => IntCC::Slt,
        IntCC::Sge => IntCC::Sle,
        c => c,
    }
}

/// The condition that holds when `cc` does not.
fn negate(cc: IntCC) -> IntCC {
    match cc {
        IntCC::Eq => IntCC::Ne,
        IntCC::Ne => IntCC::Eq,
        IntCC::Ult => IntCC::Uge,
        IntCC::Ule => IntCC::Ugt,
        IntCC::Ugt => IntCC::Ule,
        IntCC::Uge => IntCC::Ult,
        IntCC::Slt => IntCC::Sge,
        IntCC::Sle => IntCC::Sgt,
        IntCC::Sgt => IntCC::Sle,
        IntCC::Sge => IntCC::Slt,
    }
}
