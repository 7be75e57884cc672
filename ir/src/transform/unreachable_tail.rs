//! Drops the unreachable blocks at the end of a kernel.
//!
//! Transforms keep an unreachable block in place as an empty `exit` (so the
//! reachable blocks keep their numbers, which fault reports and the
//! lowest-pc schedule use). Engines still see such a kernel as one of many
//! blocks: the JIT's gang core compiled the lifted AGX saxpy, one reachable
//! block and nine empty ones, to twice the instructions of the same block
//! alone. Only blocks after the last reachable one go, so every reachable
//! block keeps its number; unreachable blocks run nothing and no reachable
//! block branches to them, so every lane runs exactly as before.

use cranelift_entity::EntityRef;

use super::compact::compact;
use super::dead_code::{DeadCounts, empty_unreachable};
use crate::analysis::DomTree;
use crate::kernel::Kernel;
use crate::verify::{VerifyError, verify};

/// Removes the unreachable blocks after the last reachable one (see the
/// module documentation); returns how many. Returns the verifier's error,
/// with `kernel` untouched, if the input does not verify.
pub fn drop_unreachable_tail(kernel: &mut Kernel) -> Result<usize, VerifyError> {
    verify(kernel)?;
    let dom = DomTree::compute(kernel);
    let keep = kernel
        .blocks
        .keys()
        .filter(|&b| dom.is_reachable(b))
        .map(|b| b.index() + 1)
        .max()
        .unwrap_or(kernel.blocks.len());
    let dropped = kernel.blocks.len() - keep;
    if dropped == 0 {
        return Ok(0);
    }
    // Unreachable blocks branch nowhere once emptied, so no kept block
    // refers to a dropped one.
    empty_unreachable(kernel, &mut DeadCounts::default());
    let blocks = std::mem::take(&mut kernel.blocks);
    for (_, data) in blocks.into_iter().take(keep) {
        kernel.blocks.push(data);
    }
    compact(kernel);
    Ok(dropped)
}
