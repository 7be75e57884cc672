//! Loop-invariant code motion: what a loop computes the same way on every
//! iteration moves to the block that enters the loop.
//!
//! A loop here is a natural loop (a header that dominates the blocks of its
//! back edges) entered from one block outside it, its preheader, which ends
//! in a plain jump to the header. No block is added: a loop without such a
//! block keeps its instructions. An instruction moves to the end of the
//! preheader when each of its arguments is defined outside the loop (or by an
//! instruction already moved), and it is
//! - pure or a builtin (`dead_code::removable`): it cannot fault, and its
//!   value depends on its arguments alone, so computing it once, even where
//!   the loop would not have reached it, gives every use the same value; or
//! - a uniform load at a constant offset that cannot fault there: aligned,
//!   and inside the uniform bytes that a constant-offset uniform load
//!   dominating the preheader's end has read already (every lane at that
//!   point got past it, and the uniforms do not change during a dispatch).
//!   ir3 kernels read the const file this way: the entry reads a high
//!   `c` register, a loop reads lower ones on every iteration.
//!
//! Why a run is unchanged beyond where a value is computed: blocks and
//! terminators are untouched, so lanes enter the same blocks in the same
//! order (the watchdog counts the same); a moved instruction cannot fault;
//! the memory effects are the same, in the same order. A moved instruction
//! keeps its guest pc.

use cranelift_entity::{EntitySet, SecondaryMap};

use super::dead_code::removable;
use crate::analysis::{Cfg, DomTree};
use crate::entities::{Block, Inst, Value};
use crate::inst::{AddrSpace, InstKind, MemAccess, Terminator};
use crate::kernel::{Kernel, ValueDef};
use crate::verify::{VerifyError, verify};

/// Moves the loop-invariant instructions of `kernel` (which must verify) to
/// their loops' preheaders (see the module documentation); returns how many
/// moved. Inner loops go first, so an instruction can leave a nest.
pub fn hoist_loop_invariants(kernel: &mut Kernel) -> Result<usize, VerifyError> {
    verify(kernel)?;
    let cfg = Cfg::compute(kernel);
    let dom = DomTree::from_cfg(&cfg);
    let mut home: SecondaryMap<Inst, Option<Block>> = SecondaryMap::new();
    for (b, data) in kernel.blocks.iter() {
        for &i in &data.insts {
            home[i] = Some(b);
        }
    }
    let mut moved = 0;
    // Reverse RPO: a nested loop's header comes after its parent's.
    let headers: Vec<Block> = dom.rpo().iter().rev().copied().collect();
    for header in headers {
        let Some(body) = natural_loop(&cfg, &dom, header) else {
            continue;
        };
        let Some(pre) = preheader(kernel, &cfg, &body, header) else {
            continue;
        };
        let mut extent = uniform_extent(kernel, &dom, &home, pre);
        let in_loop =
            |kernel: &Kernel, home: &SecondaryMap<Inst, Option<Block>>, v: Value| match kernel
                .values[v]
                .def
            {
                ValueDef::Param { block, .. } => body.contains(block),
                ValueDef::Result { inst, .. } => home[inst].is_some_and(|b| body.contains(b)),
            };
        let order: Vec<Block> = dom
            .rpo()
            .iter()
            .copied()
            .filter(|&b| body.contains(b))
            .collect();
        for block in order {
            let insts = std::mem::take(&mut kernel.blocks[block].insts);
            let mut kept = Vec::with_capacity(insts.len());
            for inst in insts {
                let invariant = !kernel.insts[inst]
                    .args
                    .iter()
                    .any(|&a| in_loop(kernel, &home, a));
                let safe = removable(kernel, inst) || cannot_fault_below(kernel, inst, extent);
                if invariant && safe {
                    extent = extent.max(read_extent(kernel, inst).unwrap_or(0));
                    kernel.blocks[pre].insts.push(inst);
                    home[inst] = Some(pre);
                    moved += 1;
                } else {
                    kept.push(inst);
                }
            }
            kernel.blocks[block].insts = kept;
        }
    }
    Ok(moved)
}

/// The blocks of the natural loop of `header` (its back edges' sources and
/// what reaches them without passing the header), or `None` when no edge
/// comes back to it.
fn natural_loop(cfg: &Cfg, dom: &DomTree, header: Block) -> Option<EntitySet<Block>> {
    let mut body = EntitySet::new();
    let mut work: Vec<Block> = cfg
        .preds(header)
        .iter()
        .copied()
        .filter(|&p| dom.is_reachable(p) && dom.dominates(header, p))
        .collect();
    if work.is_empty() {
        return None;
    }
    body.insert(header);
    while let Some(b) = work.pop() {
        if body.insert(b) {
            work.extend(
                cfg.preds(b)
                    .iter()
                    .copied()
                    .filter(|&p| dom.is_reachable(p)),
            );
        }
    }
    Some(body)
}

/// The one block outside the loop that enters it, when it ends in a plain
/// jump to the header.
fn preheader(kernel: &Kernel, cfg: &Cfg, body: &EntitySet<Block>, header: Block) -> Option<Block> {
    let mut outside = cfg.preds(header).iter().filter(|&&p| !body.contains(p));
    let pre = *outside.next()?;
    if outside.any(|&p| p != pre) {
        return None;
    }
    match &kernel.blocks[pre].term {
        Some(Terminator::Jump(call)) if call.block == header => Some(pre),
        _ => None,
    }
}

/// How many bytes of the uniforms every lane at the end of `at` has read
/// without a fault: the largest end of a constant-offset uniform load in a
/// block that dominates `at` (`at` included).
fn uniform_extent(
    kernel: &Kernel,
    dom: &DomTree,
    home: &SecondaryMap<Inst, Option<Block>>,
    at: Block,
) -> u64 {
    kernel
        .insts
        .keys()
        .filter(|&i| home[i].is_some_and(|b| dom.dominates(b, at)))
        .filter_map(|i| read_extent(kernel, i))
        .max()
        .unwrap_or(0)
}

/// A uniform load at a constant offset, with the space's 32-bit offset.
fn uniform_read(kernel: &Kernel, inst: Inst) -> Option<(MemAccess, u64)> {
    let data = &kernel.insts[inst];
    let InstKind::Load(access) = &data.kind else {
        return None;
    };
    if access.space != AddrSpace::Uniform {
        return None;
    }
    let &addr = data.args.first()?;
    let ValueDef::Result { inst: def, .. } = kernel.values[addr].def else {
        return None;
    };
    match kernel.insts[def].kind {
        InstKind::Const { bits, .. } => Some((*access, bits & 0xffff_ffff)),
        _ => None,
    }
}

/// The end of the bytes a constant-offset uniform load reads.
fn read_extent(kernel: &Kernel, inst: Inst) -> Option<u64> {
    uniform_read(kernel, inst).map(|(a, off)| off + u64::from(a.total_bytes()))
}

/// A constant-offset uniform load that is aligned and ends within `extent`.
fn cannot_fault_below(kernel: &Kernel, inst: Inst, extent: u64) -> bool {
    uniform_read(kernel, inst).is_some_and(|(a, off)| {
        (a.align <= 1 || off.is_multiple_of(u64::from(a.align)))
            && off + u64::from(a.total_bytes()) <= extent
    })
}
