//! Which guest blocks need the cycle-limit test at their end.
//!
//! The test traps once the lane's retired-instruction count exceeds the limit.
//! A block that no cycle of the control flow (through the `jalr` hub included)
//! can reach is entered with a bounded count: the longest path from the entry
//! to its end. When that bound is within the limit the test can never fire, so
//! it is left out (it ends the IR block in a branch, which costs the engines a
//! pass over the lanes). Blocks the entry does not reach keep the test.

use std::collections::{BTreeMap, BTreeSet};

use super::discover::GuestBlock;
use super::liveness::{Dest, JalrTargets, dests};

/// Starts of the blocks whose end must test the count against `limit`.
pub fn checked_blocks(
    blocks: &BTreeMap<u32, GuestBlock>,
    entry: u32,
    limit: u32,
    resolved: &JalrTargets,
) -> BTreeSet<u32> {
    // Nodes: the blocks (by start) and the hub (None), reachable from the entry.
    let succs = |node: Option<u32>| -> Vec<Option<u32>> {
        match node {
            None => blocks.keys().map(|&pc| Some(pc)).collect(),
            Some(pc) => blocks.get(&pc).map_or_else(Vec::new, |b| {
                dests(b, blocks, resolved)
                    .into_iter()
                    .filter_map(|d| match d {
                        Dest::Block(t) => blocks.contains_key(&t).then_some(Some(t)),
                        Dest::Hub => Some(None),
                        Dest::Exit | Dest::Resume => None,
                    })
                    .collect()
            }),
        }
    };
    let len = |node: Option<u32>| -> u64 {
        node.and_then(|pc| blocks.get(&pc))
            .map_or(0, |b| b.instrs.len() as u64)
    };
    let mut reached: BTreeSet<Option<u32>> = BTreeSet::new();
    let mut stack = vec![Some(entry)];
    let mut edges: BTreeMap<Option<u32>, Vec<Option<u32>>> = BTreeMap::new();
    while let Some(n) = stack.pop() {
        if n.is_some_and(|pc| !blocks.contains_key(&pc)) || !reached.insert(n) {
            continue;
        }
        let s = succs(n);
        stack.extend(s.iter().copied());
        edges.insert(n, s);
    }
    // Kahn's order over the reached subgraph: what it never releases lies on
    // or after a cycle.
    let mut indeg: BTreeMap<Option<u32>, usize> = reached.iter().map(|&n| (n, 0)).collect();
    for s in edges.values() {
        for t in s {
            if let Some(d) = indeg.get_mut(t) {
                *d += 1;
            }
        }
    }
    // Longest count on entering each node (the launch enters the entry with 0).
    let mut enter: BTreeMap<Option<u32>, u64> = BTreeMap::new();
    enter.insert(Some(entry), 0);
    let mut ready: Vec<Option<u32>> = indeg
        .iter()
        .filter(|&(_, &d)| d == 0)
        .map(|(&n, _)| n)
        .collect();
    let mut bounded: BTreeMap<Option<u32>, u64> = BTreeMap::new();
    while let Some(n) = ready.pop() {
        let end = enter.get(&n).copied().unwrap_or(0) + len(n);
        bounded.insert(n, end);
        for &t in edges.get(&n).map_or(&[][..], Vec::as_slice) {
            let e = enter.entry(t).or_insert(0);
            *e = (*e).max(end);
            if let Some(d) = indeg.get_mut(&t) {
                *d -= 1;
                if *d == 0 {
                    ready.push(t);
                }
            }
        }
    }
    blocks
        .keys()
        .copied()
        .filter(|&pc| {
            bounded
                .get(&Some(pc))
                .is_none_or(|&end| end > u64::from(limit))
        })
        .collect()
}
