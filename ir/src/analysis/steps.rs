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
//!   type, so it cannot wrap): at most `ceil(n / c)` back edges.
//!
//! A block inside loops is entered at most the product of their trip counts
//! (each iteration of a loop enters its blocks at most once per iteration of
//! the loops inside). Anything else (irreducible control flow, a loop of
//! another shape) is unbounded: `None`.

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
        let tails: Vec<Block> = back
            .iter()
            .filter(|&&(_, x)| x == h)
            .map(|&(t, _)| t)
            .collect();
        let [t] = tails[..] else { return None };
        let trips = trip_bound(kernel, &cfg, h, t)?;
        // The natural loop: the header and what reaches the tail without it.
        let mut inside = vec![false; n];
        inside[h.index()] = true;
        let mut stack = vec![t];
        while let Some(b) = stack.pop() {
            if inside[b.index()] {
                continue;
            }
            inside[b.index()] = true;
            stack.extend_from_slice(cfg.preds(b));
        }
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
