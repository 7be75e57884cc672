//! Constant folding, exact by construction.
//!
//! Every folded value is computed by `semantics::eval_pure`, the function the
//! interpreter itself calls for pure instructions, on the constant arguments
//! the instruction would see in every lane; so a folded constant is the value
//! every lane would have computed. What is folded, round after round until
//! nothing changes:
//! - a pure instruction whose arguments are all known: replaced in place by a
//!   `Const` (an instruction with a flags word gets a second `Const` for it, so
//!   every result is replaced, or the instruction is left alone);
//! - a `Select` with a known condition, or with both operands the same value,
//!   and an integer identity such as `x + 0` (see `identities`): its uses take
//!   the operand;
//! - a block parameter that receives the same known constant on every edge from
//!   a reachable block (optimistically: around a loop it may receive itself, or
//!   values computed from it, see `const_lattice`): a `Const` at the top of its
//!   block replaces it;
//! - a `Branch` with a known condition or two identical edges, and a `Table`
//!   with a known index: a `Jump` to the edge every lane would take.
//!
//! Never folded: builtins, memory, atomics, cross-lane operations, barriers,
//! fences and traps (`eval_pure` refuses them), and results `eval_pure` gives
//! with bits outside their type (kept as computed at run time rather than
//! risk a masked constant that reads differently).
//!
//! Why the run is unchanged beyond the values: no block is added, removed or
//! renumbered, and a folded terminator sends every lane where it went before,
//! so each lane enters the same blocks in the same order and the watchdog
//! (which counts blocks entered) fires at the same block and step. Only pure
//! instructions change; they cannot fault and lanes only stand inside a block
//! at its start or after a barrier, so the co-active sets of the instructions
//! that remain, and the order of memory effects, are the same.

use cranelift_entity::SecondaryMap;

use super::compact::{compact, map_uses};
use super::const_lattice::{Facts, analyze};
use super::dead_code::{DeadCounts, empty_unreachable, remove_dead};
use crate::analysis::{Cfg, DomTree};
use crate::entities::{Block, Inst, Value};
use crate::inst::{BlockCall, InstKind, Terminator};
use crate::kernel::{InstData, Kernel, ValueData, ValueDef};
use crate::types::Type;
use crate::verify::{VerifyError, verify};

/// What one folding run changed.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldCounts {
    /// Instructions replaced by constants (flags words not counted apart).
    pub insts: usize,
    /// Selects replaced by one of their operands.
    pub selects: usize,
    /// Integer identities (`x + 0`, `icmp.ne (zext b), 0` ...) replaced by the operand.
    pub identities: usize,
    /// Block parameters replaced by a constant.
    pub params: usize,
    /// Branches and tables turned into jumps.
    pub terminators: usize,
}

impl FoldCounts {
    fn any(&self) -> bool {
        *self != FoldCounts::default()
    }

    fn add(&mut self, o: FoldCounts) {
        self.insts += o.insts;
        self.selects += o.selects;
        self.identities += o.identities;
        self.params += o.params;
        self.terminators += o.terminators;
    }
}

/// What [`fold_constants`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct FoldStats {
    pub folded: FoldCounts,
    pub dead: DeadCounts,
}

/// Folds constants in `kernel`, then removes the code that became dead (see
/// `dead_code`) and compacts the arenas. Returns the verifier's error, with
/// `kernel` untouched, if the input does not verify.
pub fn fold_constants(kernel: &mut Kernel) -> Result<FoldStats, VerifyError> {
    verify(kernel)?;
    let mut stats = FoldStats {
        folded: fold_to_fixpoint(kernel),
        ..FoldStats::default()
    };
    empty_unreachable(kernel, &mut stats.dead);
    remove_dead(kernel, &mut stats.dead);
    compact(kernel);
    Ok(stats)
}

/// Folds `kernel` (which must verify) until nothing more is known.
fn fold_to_fixpoint(kernel: &mut Kernel) -> FoldCounts {
    let mut total = FoldCounts::default();
    loop {
        let round = fold_round(kernel);
        if !round.any() {
            return total;
        }
        total.add(round);
    }
}

/// One round: learn what is constant with the current control flow, then
/// rewrite. Terminators folded here may make more edges dead; the next round
/// sees that through a fresh CFG.
fn fold_round(kernel: &mut Kernel) -> FoldCounts {
    let cfg = Cfg::compute(kernel);
    let dom = DomTree::from_cfg(&cfg);
    let facts = analyze(kernel, &dom);
    let order: Vec<Block> = kernel.blocks.keys().collect();
    rewrite(kernel, &facts, &order, &dom)
}

/// Values some placed instruction or terminator reads.
fn used_values(kernel: &Kernel) -> SecondaryMap<Value, bool> {
    let mut used = SecondaryMap::new();
    for data in kernel.blocks.values() {
        for &inst in &data.insts {
            for &a in &kernel.insts[inst].args {
                used[a] = true;
            }
        }
        for v in data.term.iter().flat_map(Terminator::uses) {
            used[v] = true;
        }
    }
    used
}

/// Applies what `facts` says: constants in place of folded instructions and
/// parameters, selects dropped for their operand, terminators simplified.
fn rewrite(kernel: &mut Kernel, facts: &Facts, order: &[Block], dom: &DomTree) -> FoldCounts {
    let mut counts = FoldCounts::default();
    let mut alias = facts.alias.clone();
    // A replaced parameter is left unused (dead-code removal takes it), so
    // only used ones count: the next round must not replace it again.
    let used = used_values(kernel);
    for &block in order {
        let old = std::mem::take(&mut kernel.blocks[block].insts);
        let mut new = Vec::with_capacity(old.len());
        if dom.is_reachable(block) {
            let params = kernel.blocks[block].params.clone();
            for p in params {
                if let Some(bits) = facts.known[p].filter(|_| used[p]) {
                    let c = push_const(kernel, kernel.value_type(p), bits);
                    new.push(c.0);
                    alias[p] = Some(c.1);
                    counts.params += 1;
                }
            }
        }
        for inst in old {
            let data = &kernel.insts[inst];
            let folded = !matches!(data.kind, InstKind::Const { .. })
                && !data.results.is_empty()
                && data.results.iter().all(|&r| facts.known[r].is_some());
            let aliased = data
                .results
                .first()
                .is_some_and(|&r| facts.alias[r].is_some());
            if folded {
                counts.insts += 1;
                new.extend(replace_by_consts(kernel, inst, facts));
            } else if aliased {
                // Its result is aliased to the operand; the instruction goes.
                if data.kind == InstKind::Select {
                    counts.selects += 1;
                } else {
                    counts.identities += 1;
                }
            } else {
                new.push(inst);
            }
        }
        kernel.blocks[block].insts = new;
        if let Some(term) = kernel.blocks[block].term.take() {
            let (term, folded) = fold_terminator(term, facts);
            counts.terminators += usize::from(folded);
            kernel.blocks[block].term = Some(term);
        }
    }
    substitute(kernel, &alias);
    counts
}

/// A new `Const` instruction (not placed, no guest pc) and its result.
fn push_const(kernel: &mut Kernel, ty: Type, bits: u64) -> (Inst, Value) {
    let inst = kernel.insts.push(InstData {
        kind: InstKind::Const { ty, bits },
        args: Vec::new(),
        results: Vec::new(),
    });
    let v = kernel.values.push(ValueData {
        ty,
        def: ValueDef::Result { inst, index: 0 },
    });
    kernel.insts[inst].results.push(v);
    (inst, v)
}

/// Turns `inst` into a `Const` of its first result; every further result (the
/// flags word) moves to a new `Const` placed right after it. Returns the
/// instructions to place.
fn replace_by_consts(kernel: &mut Kernel, inst: Inst, facts: &Facts) -> Vec<Inst> {
    let results = std::mem::take(&mut kernel.insts[inst].results);
    let mut placed = vec![inst];
    for (index, &r) in results.iter().enumerate() {
        let ty = kernel.value_type(r);
        let bits = facts.known[r].unwrap_or(0);
        let kind = InstKind::Const { ty, bits };
        let target = if index == 0 {
            inst
        } else {
            let extra = kernel.insts.push(InstData {
                kind: kind.clone(),
                args: Vec::new(),
                results: Vec::new(),
            });
            kernel.srclocs[extra] = kernel.srclocs[inst];
            placed.push(extra);
            extra
        };
        let data = &mut kernel.insts[target];
        data.kind = kind;
        data.args.clear();
        data.results.push(r);
        kernel.values[r].def = ValueDef::Result {
            inst: target,
            index: 0,
        };
    }
    placed
}

/// A `Jump` for a branch or table whose edge every lane agrees on.
fn fold_terminator(term: Terminator, facts: &Facts) -> (Terminator, bool) {
    let same = |a: &BlockCall, b: &BlockCall| {
        a.block == b.block
            && a.args.len() == b.args.len()
            && a.args
                .iter()
                .zip(&b.args)
                .all(|(&x, &y)| facts.resolve(x) == facts.resolve(y))
    };
    match term {
        Terminator::Branch {
            cond,
            then,
            otherwise,
        } => match facts.bits(cond) {
            Some(bits) if bits & 1 != 0 => (Terminator::Jump(then), true),
            Some(_) => (Terminator::Jump(otherwise), true),
            None if same(&then, &otherwise) => (Terminator::Jump(then), true),
            None => (
                Terminator::Branch {
                    cond,
                    then,
                    otherwise,
                },
                false,
            ),
        },
        Terminator::Table {
            index,
            mut targets,
            default,
        } => match facts.bits(index) {
            Some(bits) => {
                // As the interpreter reads it: the low 32 bits, unsigned.
                let k = usize::try_from(bits & 0xffff_ffff).ok();
                let call = match k.filter(|&k| k < targets.len()) {
                    Some(k) => targets.swap_remove(k),
                    None => default,
                };
                (Terminator::Jump(call), true)
            }
            None => (
                Terminator::Table {
                    index,
                    targets,
                    default,
                },
                false,
            ),
        },
        t => (t, false),
    }
}

/// Replaces every use of an aliased value (chains resolved) in placed
/// instructions and terminators.
fn substitute(kernel: &mut Kernel, alias: &SecondaryMap<Value, Option<Value>>) {
    let resolve = |v: Value| {
        let mut v = v;
        // Chains are acyclic (a select aliases an earlier value, a parameter a
        // new constant); the bound only guards against malformed input.
        for _ in 0..64 {
            match alias[v] {
                Some(next) if next != v => v = next,
                _ => break,
            }
        }
        v
    };
    map_uses(kernel, |v: &mut Value| *v = resolve(*v));
}
