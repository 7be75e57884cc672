//! Resume rounds: the dynamic part of the translator.
//!
//! A launch first runs the kernel lifted from the entry (plus targets earlier
//! launches of the same code learned). Lanes that leave it resumably
//! (`wavejit_frontend::rv32::lift::resume`: a jump to code the translation
//! does not know, or `fence.i`) wait in the state area. Each round then checks
//! the waiting lanes' pcs, lifts again with those pcs as roots (from the code
//! memory as it is now) and runs a resume dispatch in which only the waiting
//! lanes run on. Rounds end when no lane waits.
//!
//! Exactness. Lanes are independent (the device has no barriers), so running
//! a lane in pieces gives it the same path, values and instruction count as
//! running it at once. The reported fault is the one a single run reports:
//! the fault of the lowest lane (mhartid order = block, then lane) of the
//! first block with a fault. Every round resumes all waiting lanes of the
//! blocks up to the lowest faulting block found so far (a lower lane may
//! still fault), and the lowest fault over all rounds is reported. (Lanes of
//! later blocks that ran before the fault was found keep their stores; across
//! blocks the IR defines no order either.)
//!
//! Bounds: each round a waiting lane retires at least one instruction (its
//! jump or `fence.i`), so the cycle limit bounds the rounds; the dispatch time
//! budget covers all rounds together; the lifted size per kernel is bounded by
//! `LiftConfig::max_instructions` (lazy discovery: about what runs).

use std::collections::BTreeSet;

use wavejit_frontend::rv32::lift::resume::{STATUS_FENCE_I, STATUS_JUMP, STATUS_NONE};
use wavejit_frontend::rv32::lift::{LaneState, LiftedKernel, STATE_BYTES, TrapCause};
use wavejit_frontend::rv32::{Instr, decode_for_execution};

use super::launch::{DeviceFault, DeviceFaultKind};
use super::regs::error;

/// Guest-invisible global address of the per-lane resume records (above the
/// context records at `launch::CONTEXT_BASE`).
pub const RESUME_BASE: u64 = 2 << 32;
/// Launches whose resume records would exceed this run without resumable
/// exits (unknown targets then trap, `fence.i` is a no-op).
pub const MAX_RESUME_BYTES: u64 = 256 << 20;
/// Most roots (pcs lanes left to) one launch may add: a program that keeps
/// jumping to new code faults instead of lifting without end.
pub const MAX_ROOTS: usize = 1 << 14;

/// A waiting lane the next round resumes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Waiting {
    pub lane: u64,
    pub pc: u32,
    /// Why it left (`STATUS_JUMP` or `STATUS_FENCE_I`).
    pub status: u32,
}

impl Waiting {
    /// A lane that jumped to a root of the kernel it ran in: that kernel had
    /// a block there, so its hub should have entered it (a lifter bug; the
    /// next round would repeat this one). Any other waiting lane retired at
    /// least one instruction since it was resumed.
    pub fn stuck(&self, lifted: &LiftedKernel) -> bool {
        self.status == STATUS_JUMP && lifted.roots.contains(&self.pc)
    }
}

/// What the runtime makes of the records after a round.
pub struct RoundPlan {
    /// Lanes to resume (they keep their records).
    pub waiting: Vec<Waiting>,
    /// Lanes whose target is no code: their faults (the records are cleared).
    pub faults: Vec<DeviceFault>,
    /// Lanes whose record must be cleared (the faulted ones).
    pub cleared: Vec<u64>,
}

/// mhartid of linear lane `lane` (block_linear << 13 | local).
pub fn hartid(lane: u64, threads_per_block: u64) -> u32 {
    let block = lane / threads_per_block.max(1);
    let local = lane % threads_per_block.max(1);
    ((block << 13) | local) as u32
}

/// Reads the records: the waiting lanes of blocks up to `limit_block`
/// (inclusive; `None`: all), with targets checked against the code memory.
pub fn plan(
    records: &[u8],
    threads_per_block: u64,
    limit_block: Option<u64>,
    lifted: &LiftedKernel,
    fetch: &dyn Fn(u32) -> Option<u32>,
) -> RoundPlan {
    let mut out = RoundPlan {
        waiting: Vec::new(),
        faults: Vec::new(),
        cleared: Vec::new(),
    };
    for (lane, rec) in records.chunks_exact(STATE_BYTES as usize).enumerate() {
        let lane = lane as u64;
        let Some(s) = LaneState::parse(rec) else {
            continue;
        };
        if s.status == STATUS_NONE {
            continue;
        }
        if limit_block.is_some_and(|b| lane / threads_per_block.max(1) > b) {
            continue;
        }
        // A jalr names its target; a direct jump or branch past the lazy
        // discovery (and a fence.i on the last word) goes on as in-line code
        // would: the lift traps at the target (fetch fault at that pc).
        let from_jalr = lifted
            .trap(s.site)
            .and_then(|t| Some((t.word?, t.pc?)))
            .is_some_and(|(w, pc)| matches!(decode_for_execution(w, pc), Ok(Instr::Jalr { .. })));
        let bad = match s.status {
            _ if !s.pc.is_multiple_of(4) => Some(TrapCause::MisalignedTarget { target: s.pc }),
            STATUS_JUMP if from_jalr && fetch(s.pc).is_none() => {
                Some(TrapCause::JumpOutsideCode { target: s.pc })
            }
            STATUS_JUMP | STATUS_FENCE_I => None,
            _ => Some(TrapCause::UnknownJumpTarget),
        };
        match bad {
            Some(cause) => {
                let site = lifted.trap(s.site);
                out.faults.push(DeviceFault {
                    kind: DeviceFaultKind::Trap(cause),
                    pc: site.and_then(|t| t.pc),
                    word: site.and_then(|t| t.word),
                    hartid: Some(hartid(lane, threads_per_block)),
                    error_bits: error::KERNEL_FAULT,
                });
                out.cleared.push(lane);
            }
            None => out.waiting.push(Waiting {
                lane,
                pc: s.pc,
                status: s.status,
            }),
        }
    }
    out
}

/// The new roots of `waiting` (not yet in `roots`), in order.
pub fn new_roots(roots: &[u32], waiting: &[Waiting]) -> Vec<u32> {
    let known: BTreeSet<u32> = roots.iter().copied().collect();
    let mut add: BTreeSet<u32> = BTreeSet::new();
    for w in waiting {
        if !known.contains(&w.pc) {
            add.insert(w.pc);
        }
    }
    add.into_iter().collect()
}

/// The lower of two faults by lane (mhartid order); faults without a lane
/// (engine-level) come first, as they stop the launch.
pub fn lower(a: Option<DeviceFault>, b: Option<DeviceFault>) -> Option<DeviceFault> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if b.hartid.unwrap_or(0) < a.hartid.unwrap_or(0) {
            b
        } else {
            a
        }),
        (a, b) => a.or(b),
    }
}
