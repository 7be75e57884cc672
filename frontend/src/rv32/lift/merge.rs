//! Guest blocks emitted inside their only predecessor's IR block.
//!
//! A block entered by exactly one edge, an unconditional one (fall-through,
//! `jal`, or a `jalr` with a decided target) from a block that does not test
//! the cycle limit, continues that block's IR block: one IR block boundary
//! less per lane (each costs the engines a pass over the lanes). Not done when
//! a computed jump can reach any block through the hub.

use std::collections::{BTreeMap, BTreeSet};

use super::discover::{BlockEnd, GuestBlock};
use super::liveness::{Dest, JalrTargets, Resolved, dests, is_ret, static_jalr_target};
use crate::rv32::Instr;

/// The single unconditional successor of `b`, when its end is one.
fn straight_successor(b: &GuestBlock, resolved: &JalrTargets) -> Option<u32> {
    match b.end {
        BlockEnd::Fallthrough(next) => Some(next),
        BlockEnd::Terminator => match b.instrs.last().map(|(_, _, i)| i) {
            Some(Instr::Jal { .. }) => b.instrs.last().and_then(|(pc, _, i)| i.direct_target(*pc)),
            Some(i @ Instr::Jalr { .. }) => match resolved.get(&b.start) {
                Some(Resolved::Block(t)) => Some(*t),
                Some(Resolved::Exit) => None,
                // A ret also tests ra == 0; other jalrs with a block-local
                // constant target jump there.
                None if !is_ret(i) => static_jalr_target(b),
                None => None,
            },
            _ => None,
        },
        BlockEnd::Bad { .. } => None,
    }
}

/// Blocks to emit inside their predecessor, by start.
pub fn merged_blocks(
    blocks: &BTreeMap<u32, GuestBlock>,
    entry: u32,
    resolved: &JalrTargets,
    checked: &BTreeSet<u32>,
) -> BTreeSet<u32> {
    let succs: BTreeMap<u32, Vec<Dest>> = blocks
        .iter()
        .map(|(&pc, b)| (pc, dests(b, blocks, resolved)))
        .collect();
    if succs.values().flatten().any(|d| *d == Dest::Hub) {
        return BTreeSet::new();
    }
    let mut incoming: BTreeMap<u32, usize> = BTreeMap::new();
    for d in succs.values().flatten() {
        if let Dest::Block(t) = d {
            *incoming.entry(*t).or_insert(0) += 1;
        }
    }
    blocks
        .iter()
        .filter(|(pc, _)| !checked.contains(pc))
        .filter_map(|(&pc, b)| {
            let next = straight_successor(b, resolved)?;
            let single = incoming.get(&next) == Some(&1);
            (single && next != pc && next != entry && blocks.contains_key(&next)).then_some(next)
        })
        .collect()
}
