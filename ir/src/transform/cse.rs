//! Common subexpressions: an instruction equal to one that dominates it
//! (same kind, same arguments) gives its results by that one's.
//!
//! Merged: pure instructions (what `semantics::eval_pure` evaluates:
//! constants and arithmetic included), builtins (one value per lane for the
//! whole dispatch) and uniform loads (the uniforms do not change during a
//! dispatch, and the dominating load of the same address faults whenever the
//! merged one would, so a lane never reaches the second then).
//!
//! Why the run is unchanged beyond which instruction computes a value: no
//! block is added or removed and no terminator changes, so each lane enters
//! the same blocks in the same order (the watchdog counts the same); a merged
//! instruction could not fault where the one it merges into did not; and the
//! memory effects that remain are the same, in the same order. A kernel's
//! lifter repeats uniform loads and address arithmetic per use (AGX saxpy read
//! `u2` twice), which this removes.

use std::collections::HashMap;

use super::compact::{compact, map_uses};
use super::dead_code::removable;
use crate::analysis::DomTree;
use crate::entities::{Block, Value};
use crate::inst::AddrSpace;
use crate::inst::InstKind;
use crate::kernel::Kernel;
use crate::verify::{VerifyError, verify};

/// An instruction's kind and arguments.
type Key = (InstKind, Vec<Value>);
/// A block holding an instruction of some key, and that one's results.
type Computed = (Block, Vec<Value>);

/// Merges the instructions of `kernel` (which must verify) that a dominating
/// equal one computes already; returns how many went.
pub fn eliminate_common_subexpressions(kernel: &mut Kernel) -> Result<usize, VerifyError> {
    verify(kernel)?;
    let dom = DomTree::compute(kernel);
    let mut seen: HashMap<Key, Vec<Computed>> = HashMap::new();
    let mut alias: HashMap<Value, Value> = HashMap::new();
    let mut merged = 0;
    let order: Vec<Block> = dom.rpo().to_vec();
    for block in order {
        let old = std::mem::take(&mut kernel.blocks[block].insts);
        let mut kept = Vec::with_capacity(old.len());
        for inst in old {
            let data = &kernel.insts[inst];
            if !mergeable(kernel, inst) {
                kept.push(inst);
                continue;
            }
            let args: Vec<Value> = data
                .args
                .iter()
                .map(|a| alias.get(a).copied().unwrap_or(*a))
                .collect();
            let key = (data.kind.clone(), args);
            let earlier = seen.get(&key).and_then(|cands| {
                cands
                    .iter()
                    .find(|(b, _)| dom.dominates(*b, block))
                    .map(|(_, r)| r.clone())
            });
            match earlier {
                Some(results) if results.len() == data.results.len() => {
                    for (&r, &e) in data.results.iter().zip(&results) {
                        alias.insert(r, e);
                    }
                    merged += 1;
                }
                _ => {
                    seen.entry(key)
                        .or_default()
                        .push((block, data.results.clone()));
                    kept.push(inst);
                }
            }
        }
        kernel.blocks[block].insts = kept;
    }
    if merged > 0 {
        map_uses(kernel, |v: &mut Value| {
            if let Some(&e) = alias.get(v) {
                *v = e;
            }
        });
        compact(kernel);
    }
    Ok(merged)
}

/// Pure or a builtin (`dead_code::removable`), or a uniform load.
fn mergeable(kernel: &Kernel, inst: crate::entities::Inst) -> bool {
    match &kernel.insts[inst].kind {
        InstKind::Load(a) => a.space == AddrSpace::Uniform,
        _ => removable(kernel, inst),
    }
}
