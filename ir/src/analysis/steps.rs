//! The most steps (block entries, the watchdog's count) any lane of a kernel
//! can take, when that is bounded: the longest path of an acyclic CFG, or,
//! with loops whose trip count the loop's own induction variable bounds, the
//! sum over blocks of how often each can be entered.
//!
//! A loop is bounded when its header has one back edge and an integer
//! parameter `p` that enters as a constant and comes back as
//! - `p >> k` (constant `k >= 1`) while the new value is not zero (a tree
//!   level halved each iteration): at most `ceil(bits / k)` back edges; or
//! - `p + c` (constant `c > 0`) while the new value is `< n` unsigned
//!   (constant `n`, with `n + c` and the entry constants plus `c` inside the
//!   type, so it cannot wrap): at most `ceil(n / c)` back edges;
//! - or, with any number of back edges, `p` grows by constants on every path
//!   round the loop (at least 1 per iteration; `iadd` of a constant below
//!   half the type's range, through block parameters) and a block on every
//!   iteration's path tests a value `p + d` against a constant `n`, leaving
//!   the loop when it is above `n` (an unsigned compare deciding a branch, or
//!   the `select` that picks a `table` index, as the RV32 lifter's cycle-limit
//!   test does): at most `n / step + 1` back edges, when `n` plus twice the
//!   largest growth cannot wrap; or, growing by exactly 1, leaving the loop
//!   when `p + d` (`d` the same on every path) equals `n`, entered at most
//!   at `n - d`: at most `n - d - entry` back edges.
//!
//! A block inside loops is entered at most the product of their trip counts
//! (each iteration of a loop enters its blocks at most once per iteration of
//! the loops inside). Anything else (irreducible control flow, a loop of
//! another shape) is unbounded: `None`.

use std::collections::HashMap;

use cranelift_entity::EntityRef;

use crate::analysis::cfg::Cfg;
use crate::analysis::dominance::DomTree;
use crate::entities::{Block, Value};
use crate::inst::{IBinOp, InstKind, IntCC, Terminator};
use crate::kernel::{Kernel, ValueDef};

/// The most steps any lane of `kernel` can take, if bounded.
pub fn step_bound(kernel: &Kernel) -> Option<u64> {
    let cfg = Cfg::compute(kernel);
    let n = kernel.blocks.len();
    let dom = DomTree::from_cfg(&cfg);
    // Back edges (to a block that dominates the source) and the rest.
    let mut back: Vec<(Block, Block)> = Vec::new();
    for b in kernel.blocks.keys() {
        if !dom.is_reachable(b) {
            continue;
        }
        for &s in cfg.succs(b) {
            if dom.dominates(s, b) {
                back.push((b, s));
            }
        }
    }
    // Without back edges the graph must be acyclic (else irreducible).
    let mut indeg = vec![0usize; n];
    let is_back = |f: Block, t: Block| back.contains(&(f, t));
    for b in kernel.blocks.keys() {
        for &s in cfg.succs(b) {
            if !is_back(b, s) {
                indeg[s.index()] += 1;
            }
        }
    }
    let mut ready: Vec<Block> = kernel
        .blocks
        .keys()
        .filter(|b| indeg[b.index()] == 0)
        .collect();
    let mut order = Vec::with_capacity(n);
    while let Some(b) = ready.pop() {
        order.push(b);
        for &s in cfg.succs(b) {
            if !is_back(b, s) {
                indeg[s.index()] -= 1;
                if indeg[s.index()] == 0 {
                    ready.push(s);
                }
            }
        }
    }
    if order.len() != n {
        return None;
    }
    if back.is_empty() {
        // The longest path, one step per block on it.
        let mut longest = vec![0u64; n];
        for &b in order.iter().rev() {
            longest[b.index()] = 1 + cfg
                .succs(b)
                .iter()
                .map(|s| longest[s.index()])
                .max()
                .unwrap_or(0);
        }
        return Some(longest.into_iter().max().unwrap_or(0));
    }
    let mut visits = vec![1u64; n];
    let mut headers: Vec<Block> = back.iter().map(|&(_, h)| h).collect();
    headers.sort();
    headers.dedup();
    for h in headers {
        let mut tails: Vec<Block> = back
            .iter()
            .filter(|&&(_, x)| x == h)
            .map(|&(t, _)| t)
            .collect();
        tails.dedup();
        // The natural loop: the header and what reaches a tail without it.
        let mut inside = vec![false; n];
        inside[h.index()] = true;
        let mut stack = tails.clone();
        while let Some(b) = stack.pop() {
            if inside[b.index()] {
                continue;
            }
            inside[b.index()] = true;
            stack.extend_from_slice(cfg.preds(b));
        }
        let the_loop = Loop {
            header: h,
            tails: &tails,
            inside: &inside,
        };
        let trips = match tails[..] {
            [t] => trip_bound(kernel, &cfg, h, t),
            _ => None,
        }
        .or_else(|| guarded_trip_bound(kernel, &cfg, &dom, &order, &the_loop))?;
        for (v, &i) in visits.iter_mut().zip(&inside) {
            if i {
                *v = v.checked_mul(trips)?;
            }
        }
    }
    visits.into_iter().try_fold(0u64, |a, v| a.checked_add(v))
}

/// Iterations of the loop at `h` whose one back edge leaves `t`, if its
/// induction variable bounds them (see the module documentation).
fn trip_bound(kernel: &Kernel, cfg: &Cfg, h: Block, t: Block) -> Option<u64> {
    let Some(Terminator::Branch {
        cond,
        then,
        otherwise,
    }) = &kernel.blocks[t].term
    else {
        return None;
    };
    // The side that goes back, and whether `cond` holds on it.
    let (call, holds) = match (then.block == h, otherwise.block == h) {
        (true, false) => (then, true),
        (false, true) => (otherwise, false),
        _ => return None,
    };
    let konst = |v: Value| match kernel.values[v].def {
        ValueDef::Result { inst, .. } => match kernel.insts[inst].kind {
            InstKind::Const { ty, bits } if ty.is_int() => Some(bits & ty.mask()),
            _ => None,
        },
        _ => None,
    };
    let def = |v: Value| match kernel.values[v].def {
        ValueDef::Result { inst, .. } => {
            let d = &kernel.insts[inst];
            Some((&d.kind, d.args.as_slice()))
        }
        _ => None,
    };
    let (InstKind::Icmp(cc), &[ca, cb]) = def(*cond)? else {
        return None;
    };
    let params = &kernel.blocks[h].params;
    for (i, (&p, &a)) in params.iter().zip(&call.args).enumerate() {
        let ty = kernel.value_type(p);
        if !ty.is_int() {
            continue;
        }
        let bits = u64::from(ty.bits());
        // Every entry from outside passes a constant.
        let mut entry_max = 0u64;
        let mut entries_const = true;
        for &pred in cfg.preds(h) {
            if pred == t {
                continue;
            }
            for c in kernel.blocks[pred].term.iter().flat_map(|x| x.calls()) {
                if c.block == h {
                    match c.args.get(i).and_then(|&v| konst(v)) {
                        Some(k) => entry_max = entry_max.max(k),
                        None => entries_const = false,
                    }
                }
            }
        }
        if !entries_const {
            continue;
        }
        let Some((kind, args)) = def(a) else { continue };
        match (kind, args) {
            (InstKind::IBinary(IBinOp::ShrU), &[x, k]) if x == p => {
                let Some(k) = konst(k).map(|k| k % bits).filter(|&k| k >= 1) else {
                    continue;
                };
                // Continue while `a != 0`.
                let zero = |v: Value| konst(v) == Some(0);
                let nonzero = match (cc, holds) {
                    (IntCC::Ne, true) | (IntCC::Eq, false) => {
                        (ca == a && zero(cb)) || (cb == a && zero(ca))
                    }
                    (IntCC::Ugt, true) | (IntCC::Ule, false) => ca == a && zero(cb),
                    (IntCC::Ult, true) | (IntCC::Uge, false) => cb == a && zero(ca),
                    _ => false,
                };
                if nonzero {
                    return Some(bits.div_ceil(k) + 1);
                }
            }
            (InstKind::IBinary(IBinOp::Add), &[x, c]) if x == p => {
                let Some(c) = konst(c).filter(|&c| c > 0 && c < 1 << (bits - 1)) else {
                    continue;
                };
                // Continue while `a <u n`.
                let limit = match (cc, holds) {
                    (IntCC::Ult, true) | (IntCC::Uge, false) if ca == a => konst(cb),
                    (IntCC::Ugt, true) | (IntCC::Ule, false) if cb == a => konst(ca),
                    _ => None,
                };
                let Some(n) = limit else { continue };
                let top = if bits == 64 {
                    u64::MAX
                } else {
                    (1 << bits) - 1
                };
                if n.checked_add(c).is_some_and(|x| x <= top)
                    && entry_max.checked_add(c).is_some_and(|x| x <= top)
                {
                    return Some(n.div_ceil(c) + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// A natural loop: its header, the sources of its back edges, and its blocks
/// (by block index).
struct Loop<'a> {
    header: Block,
    tails: &'a [Block],
    inside: &'a [bool],
}

/// The constant `v` is (masked to its type), if it is one.
fn konst(kernel: &Kernel, v: Value) -> Option<u64> {
    match kernel.values[v].def {
        ValueDef::Result { inst, .. } => match kernel.insts[inst].kind {
            InstKind::Const { ty, bits } if ty.is_int() => Some(bits & ty.mask()),
            _ => None,
        },
        _ => None,
    }
}

/// The instruction defining `v`, with its arguments.
fn def(kernel: &Kernel, v: Value) -> Option<(&InstKind, &[Value])> {
    match kernel.values[v].def {
        ValueDef::Result { inst, .. } => {
            let d = &kernel.insts[inst];
            Some((&d.kind, d.args.as_slice()))
        }
        _ => None,
    }
}

/// What a guard proves of the value `q` it tests on every iteration that
/// goes round.
#[derive(Clone, Copy)]
enum Guarded {
    /// `q <= n` (unsigned).
    AtMost(u64),
    /// `q != n`.
    Not(u64),
}

/// Iterations of `l` bounded by a guarded counter (the last shapes of the
/// module documentation): the least bound over the header's parameters and
/// the guards found.
fn guarded_trip_bound(
    kernel: &Kernel,
    cfg: &Cfg,
    dom: &DomTree,
    order: &[Block],
    l: &Loop<'_>,
) -> Option<u64> {
    let h = l.header;
    // The blocks on every iteration's path: those dominating every tail.
    let on_every_path: Vec<Block> = order
        .iter()
        .copied()
        .filter(|&x| l.inside[x.index()] && l.tails.iter().all(|&t| dom.dominates(x, t)))
        .collect();
    let mut best: Option<u64> = None;
    for (i, &p) in kernel.blocks[h].params.iter().enumerate() {
        let ty = kernel.value_type(p);
        if !ty.is_int() {
            continue;
        }
        // Every entry from outside the loop passes a constant.
        let mut entries = Some((u64::MAX, 0u64));
        for &pred in cfg.preds(h) {
            if l.inside[pred.index()] {
                continue;
            }
            for c in kernel.blocks[pred].term.iter().flat_map(|x| x.calls()) {
                if c.block == h {
                    let k = c.args.get(i).and_then(|&v| konst(kernel, v));
                    entries = entries.zip(k).map(|((lo, hi), k)| (lo.min(k), hi.max(k)));
                }
            }
        }
        let Some((entry_min, entry_max)) = entries.filter(|e| e.0 <= e.1) else {
            continue;
        };
        let offsets = offsets(kernel, cfg, order, l, p);
        // The least and the most growth over every back edge (0: one does
        // not grow).
        let (mut step, mut step_max) = (u64::MAX, 0);
        for &t in l.tails {
            for c in kernel.blocks[t].term.iter().flat_map(|x| x.calls()) {
                if c.block == h {
                    let r = c.args.get(i).and_then(|a| offsets.get(a));
                    step = step.min(r.map_or(0, |r| r.0));
                    step_max = step_max.max(r.map_or(u64::MAX, |r| r.1));
                }
            }
        }
        if step == 0 {
            continue;
        }
        let reach = offsets.values().map(|r| r.1).max().unwrap_or(0);
        let top = ty.mask();
        let below_top = |v: Option<u64>| v.is_some_and(|v| v <= top);
        for &x in &on_every_path {
            let Some((q, guarded)) = guard(kernel, x, l.inside, &offsets) else {
                continue;
            };
            let trips = match guarded {
                // Iteration k starts at p >= k * step and, to go round,
                // passes q = p + d <= n (d >= 0): k <= n / step. Its values
                // stay below max(entry, n + reach) + reach, so none wraps.
                Guarded::AtMost(n) => {
                    let fits = below_top(n.checked_add(reach).and_then(|v| v.checked_add(reach)))
                        && below_top(entry_max.checked_add(reach));
                    fits.then(|| n / step + 2)
                }
                // p grows by exactly 1 and q = p + d exactly: from an entry
                // e with e + d <= n, iteration n - e - d has q = n and does
                // not go round; no value passes n + reach, so none wraps.
                Guarded::Not(n) => {
                    let d = offsets.get(&q).filter(|r| r.0 == r.1).map(|r| r.0);
                    match d {
                        Some(d)
                            if (step, step_max) == (1, 1)
                                && entry_max.checked_add(d).is_some_and(|v| v <= n)
                                && below_top(n.checked_add(reach)) =>
                        {
                            Some(n - (entry_min + d) + 1)
                        }
                        _ => None,
                    }
                }
            };
            if let Some(trips) = trips {
                best = Some(best.map_or(trips, |b| b.min(trips)));
            }
        }
    }
    best
}

/// Values of one iteration of `l` that are its header's parameter `p` plus
/// a constant, with that constant's range: `p` itself, `iadd` of a constant
/// below half the type's range, and block parameters every edge inside the
/// loop passes such a value.
fn offsets(
    kernel: &Kernel,
    cfg: &Cfg,
    order: &[Block],
    l: &Loop<'_>,
    p: Value,
) -> HashMap<Value, (u64, u64)> {
    let half = 1u64 << (kernel.value_type(p).bits() - 1);
    let mut off: HashMap<Value, (u64, u64)> = HashMap::new();
    off.insert(p, (0, 0));
    for &b in order {
        if !l.inside[b.index()] {
            continue;
        }
        if b != l.header {
            // Edges are met in layout order of their sources; one from a
            // block not yet seen (an inner loop's back edge) is unknown.
            for (j, &param) in kernel.blocks[b].params.iter().enumerate() {
                let mut range: Option<(u64, u64)> = None;
                let mut known = true;
                for &pred in cfg.preds(b) {
                    for c in kernel.blocks[pred].term.iter().flat_map(|x| x.calls()) {
                        if c.block != b {
                            continue;
                        }
                        match c.args.get(j).and_then(|a| off.get(a)) {
                            Some(&(lo, hi)) => {
                                range = Some(
                                    range.map_or((lo, hi), |(l0, h0)| (l0.min(lo), h0.max(hi))),
                                );
                            }
                            None => known = false,
                        }
                    }
                }
                if let (true, Some(r)) = (known, range) {
                    off.insert(param, r);
                }
            }
        }
        for &inst in &kernel.blocks[b].insts {
            let d = &kernel.insts[inst];
            let (InstKind::IBinary(IBinOp::Add), &[x, y], &[r]) =
                (&d.kind, d.args.as_slice(), d.results.as_slice())
            else {
                continue;
            };
            let grown = match (off.get(&x), off.get(&y)) {
                (Some(&o), None) => konst(kernel, y).map(|c| (o, c)),
                (None, Some(&o)) => konst(kernel, x).map(|c| (o, c)),
                _ => None,
            };
            if let Some(((lo, hi), c)) = grown.filter(|&(_, c)| c < half)
                && let (Some(lo), Some(hi)) = (lo.checked_add(c), hi.checked_add(c))
            {
                off.insert(r, (lo, hi));
            }
        }
    }
    off
}

/// The value of `offsets` that `x`'s terminator tests and what staying in
/// the loop proves of it, if `x` ends in a test that leaves the loop unless
/// that value is at most (or is not) a constant.
fn guard(
    kernel: &Kernel,
    x: Block,
    inside: &[bool],
    offsets: &HashMap<Value, (u64, u64)>,
) -> Option<(Value, Guarded)> {
    // `cond == holds` proves what it returns of `q`.
    let within = |cond: Value| -> Option<(Value, Guarded, bool)> {
        let (InstKind::Icmp(cc), &[a, b]) = def(kernel, cond)? else {
            return None;
        };
        let (q, n, const_right) = match (konst(kernel, a), konst(kernel, b)) {
            (None, Some(n)) => (a, n, true),
            (Some(n), None) => (b, n, false),
            _ => return None,
        };
        if !offsets.contains_key(&q) {
            return None;
        }
        // q > n, q >= n: false bounds q; n > q, n >= q: true does.
        let (guarded, holds) = match (cc, const_right) {
            (IntCC::Ugt | IntCC::Uge, true) | (IntCC::Ult | IntCC::Ule, false) => {
                (Guarded::AtMost(n), false)
            }
            (IntCC::Ult | IntCC::Ule, true) | (IntCC::Ugt | IntCC::Uge, false) => {
                (Guarded::AtMost(n), true)
            }
            (IntCC::Eq, _) => (Guarded::Not(n), false),
            (IntCC::Ne, _) => (Guarded::Not(n), true),
            _ => return None,
        };
        Some((q, guarded, holds))
    };
    let outside = |b: Block| !inside[b.index()];
    match kernel.blocks[x].term.as_ref()? {
        Terminator::Branch {
            cond,
            then,
            otherwise,
        } => {
            let (q, guarded, holds) = within(*cond)?;
            let failing = if holds { otherwise } else { then };
            outside(failing.block).then_some((q, guarded))
        }
        Terminator::Table {
            index,
            targets,
            default,
        } => {
            let target = |k: u64| {
                usize::try_from(k)
                    .ok()
                    .and_then(|k| targets.get(k))
                    .unwrap_or(default)
                    .block
            };
            let mut conds = Vec::new();
            select_conds(kernel, *index, 8, &mut conds);
            conds.into_iter().find_map(|c| {
                let (q, guarded, holds) = within(c)?;
                let ks = index_values(kernel, *index, c, !holds, 8)?;
                ks.into_iter()
                    .all(|k| outside(target(k)))
                    .then_some((q, guarded))
            })
        }
        _ => None,
    }
}

/// The conditions of the `select` tree that gives `v`, `depth` levels deep.
fn select_conds(kernel: &Kernel, v: Value, depth: u32, out: &mut Vec<Value>) {
    if depth == 0 {
        return;
    }
    if let Some((InstKind::Select, &[c, a, b])) = def(kernel, v) {
        out.push(c);
        select_conds(kernel, a, depth - 1, out);
        select_conds(kernel, b, depth - 1, out);
    }
}

/// The constants `v` can be when `cond` is `value`: through `select`s,
/// `depth` levels deep; `None` if it can be anything else.
fn index_values(
    kernel: &Kernel,
    v: Value,
    cond: Value,
    value: bool,
    depth: u32,
) -> Option<Vec<u64>> {
    if let Some(k) = konst(kernel, v) {
        return Some(vec![k]);
    }
    let (InstKind::Select, &[c, a, b]) = def(kernel, v)? else {
        return None;
    };
    let depth = depth.checked_sub(1)?;
    if c == cond {
        return index_values(kernel, if value { a } else { b }, cond, value, depth);
    }
    let mut ks = index_values(kernel, a, cond, value, depth)?;
    ks.extend(index_values(kernel, b, cond, value, depth)?);
    Some(ks)
}
