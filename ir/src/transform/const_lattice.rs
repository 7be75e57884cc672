//! Which values every lane computes the same known bits for: sparse
//! conditional constant propagation (Wegman-Zadeck SCCP) whose only
//! arithmetic is `semantics::eval_pure`.
//!
//! Optimistic: a block parameter starts "not yet seen", a block is only
//! analysed once an edge some lane may take reaches it, and a branch on a known
//! condition lets only its taken edge through; so a loop that passes a value
//! back unchanged (or changed into the same constant) keeps it constant, and
//! code behind a known branch does not spoil what is known. A value only moves
//! down (unseen -> constant -> varying) and an edge only from not taken to
//! taken, so the passes end; at the end every constant agrees with its
//! operands on every edge a lane can take.

use cranelift_entity::{EntityRef, SecondaryMap};

use super::identities::identity_operand;
use crate::analysis::DomTree;
use crate::entities::{Block, Value};
use crate::inst::{InstKind, Terminator};
use crate::kernel::Kernel;
use crate::semantics::eval_pure;
use crate::types::Type;

/// Most arguments and results `eval_pure` handles (the interpreter's buffers).
const MAX_ARGS: usize = 8;
const MAX_RESULTS: usize = 4;

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum Lat {
    /// No definition seen yet (optimistic start).
    #[default]
    Unseen,
    Const(u64),
    Varying,
}

fn meet(a: Lat, b: Lat) -> Lat {
    match (a, b) {
        (Lat::Unseen, x) | (x, Lat::Unseen) => x,
        (Lat::Const(x), Lat::Const(y)) if x == y => a,
        _ => Lat::Varying,
    }
}

/// What the analysis found.
pub(crate) struct Facts {
    pub known: SecondaryMap<Value, Option<u64>>,
    /// Results that are not constants but always equal an operand (selects
    /// with a known condition or equal operands, integer identities) -> it.
    pub alias: SecondaryMap<Value, Option<Value>>,
}

impl Facts {
    /// `v` through select aliases (chains end: a select aliases an earlier value).
    pub fn resolve(&self, v: Value) -> Value {
        let mut v = v;
        for _ in 0..64 {
            match self.alias[v] {
                Some(next) if next != v => v = next,
                _ => break,
            }
        }
        v
    }

    pub fn bits(&self, v: Value) -> Option<u64> {
        self.known[self.resolve(v)]
    }
}

/// Analyses a verified kernel; `dom` gives the order (reverse postorder first).
pub(crate) fn analyze(kernel: &Kernel, dom: &DomTree) -> Facts {
    let order: Vec<Block> = dom
        .rpo()
        .iter()
        .copied()
        .chain(kernel.blocks.keys().filter(|&b| !dom.is_reachable(b)))
        .collect();
    let incoming = incoming_edges(kernel);
    let mut lat: SecondaryMap<Value, Lat> = SecondaryMap::new();
    let mut exec: SecondaryMap<Block, bool> = SecondaryMap::new();
    if let Some(entry) = kernel.entry() {
        exec[entry] = true;
    }
    let mut changed = true;
    while changed {
        changed = false;
        for &block in &order {
            if !exec[block] {
                continue;
            }
            let data = &kernel.blocks[block];
            for (i, &p) in data.params.iter().enumerate() {
                let mut v = Lat::Unseen;
                for edge in incoming.get(block.index()).into_iter().flatten() {
                    if exec[edge.from] && edge_taken(kernel, edge.from, edge.call, &lat) {
                        v = meet(v, edge.args.get(i).map_or(Lat::Varying, |&a| lat[a]));
                    }
                }
                changed |= lower(&mut lat, p, v);
            }
            for &inst in &data.insts {
                let results = &kernel.insts[inst].results;
                for (r, v) in results.iter().zip(eval_inst(kernel, inst, &lat)) {
                    changed |= lower(&mut lat, *r, v);
                }
            }
            let calls = data.term.iter().flat_map(Terminator::calls);
            for (k, call) in calls.enumerate() {
                if !exec[call.block] && edge_taken(kernel, block, k, &lat) {
                    exec[call.block] = true;
                    changed = true;
                }
            }
        }
    }

    let mut facts = Facts {
        known: SecondaryMap::new(),
        alias: SecondaryMap::new(),
    };
    for (v, &l) in lat.iter() {
        if let Lat::Const(bits) = l {
            facts.known[v] = Some(bits);
        }
    }
    for block in &order {
        for &inst in &kernel.blocks[*block].insts {
            let data = &kernel.insts[inst];
            let Some(&r) = data.results.first() else {
                continue;
            };
            if facts.known[r].is_some() {
                continue;
            }
            let (InstKind::Select, &[c, a, b]) = (&data.kind, data.args.as_slice()) else {
                let x = identity_operand(kernel, inst, |v| facts.bits(v));
                facts.alias[r] = x.map(|x| facts.resolve(x));
                continue;
            };
            let (a, b) = (facts.resolve(a), facts.resolve(b));
            facts.alias[r] = match lat[c] {
                Lat::Const(bits) if bits & 1 != 0 => Some(a),
                Lat::Const(_) => Some(b),
                _ if a == b => Some(a),
                _ => None,
            };
        }
    }
    facts
}

/// Moves `v` down to `meet(old, new)`; true when it changed.
fn lower(lat: &mut SecondaryMap<Value, Lat>, v: Value, new: Lat) -> bool {
    let m = meet(lat[v], new);
    let changed = m != lat[v];
    lat[v] = m;
    changed
}

/// A block call: the block it leaves, its index among the terminator's calls
/// (`Terminator::calls` order), and its arguments.
struct Edge {
    from: Block,
    call: usize,
    args: Vec<Value>,
}

/// Per block: the calls reaching it.
fn incoming_edges(kernel: &Kernel) -> Vec<Vec<Edge>> {
    let mut incoming: Vec<Vec<Edge>> = (0..kernel.blocks.len()).map(|_| Vec::new()).collect();
    for (from, data) in kernel.blocks.iter() {
        for (call, c) in data.term.iter().flat_map(Terminator::calls).enumerate() {
            if let Some(list) = incoming.get_mut(c.block.index()) {
                list.push(Edge {
                    from,
                    call,
                    args: c.args.clone(),
                });
            }
        }
    }
    incoming
}

/// Whether some lane may leave `block` through its terminator's call number
/// `call`, as far as the lattice knows: a known condition or index picks one
/// call (as the interpreter reads it), a varying one any, an unseen one none.
fn edge_taken(kernel: &Kernel, block: Block, call: usize, lat: &SecondaryMap<Value, Lat>) -> bool {
    match &kernel.blocks[block].term {
        Some(Terminator::Jump(_)) => true,
        Some(Terminator::Branch { cond, .. }) => match lat[*cond] {
            Lat::Const(bits) => (bits & 1 != 0) == (call == 0),
            Lat::Varying => true,
            Lat::Unseen => false,
        },
        Some(Terminator::Table { index, targets, .. }) => match lat[*index] {
            Lat::Const(bits) => {
                let k = usize::try_from(bits & 0xffff_ffff).unwrap_or(usize::MAX);
                call == k.min(targets.len())
            }
            Lat::Varying => true,
            Lat::Unseen => false,
        },
        Some(Terminator::Exit) | None => false,
    }
}

/// The lattice values of `inst`'s results from its operands'.
fn eval_inst(
    kernel: &Kernel,
    inst: crate::entities::Inst,
    lat: &SecondaryMap<Value, Lat>,
) -> Vec<Lat> {
    let data = &kernel.insts[inst];
    let n = data.results.len();
    if let (InstKind::Select, &[c, a, b]) = (&data.kind, data.args.as_slice()) {
        let v = match lat[c] {
            Lat::Const(bits) if bits & 1 != 0 => lat[a],
            Lat::Const(_) => lat[b],
            Lat::Unseen => Lat::Unseen,
            Lat::Varying => meet(lat[a], lat[b]),
        };
        return vec![v; n];
    }
    let mut args = [0u64; MAX_ARGS];
    let mut out = [0u64; MAX_RESULTS];
    let (Some(args), Some(out)) = (args.get_mut(..data.args.len()), out.get_mut(..n)) else {
        return vec![Lat::Varying; n];
    };
    for (slot, &a) in args.iter_mut().zip(&data.args) {
        match lat[a] {
            Lat::Const(b) => *slot = b,
            Lat::Unseen => return vec![Lat::Unseen; n],
            _ => return vec![Lat::Varying; n],
        }
    }
    let arg_tys: Vec<Type> = data.args.iter().map(|&a| kernel.value_type(a)).collect();
    // Builtins, memory, cross-lane operations and the like: eval_pure refuses
    // them, so they are varying.
    if !eval_pure(&data.kind, &arg_tys, args, out) {
        return vec![Lat::Varying; n];
    }
    data.results
        .iter()
        .zip(out.iter())
        .map(|(&r, &bits)| {
            // A result with bits outside its type would not be a valid `Const`.
            if bits & kernel.value_type(r).mask() == bits {
                Lat::Const(bits)
            } else {
                Lat::Varying
            }
        })
        .collect()
}
