//! Control-flow discovery: which guest pcs start basic blocks, and the blocks.
//!
//! Leaders are the entry, every extra entry, direct jump/branch targets, the
//! fall-through of conditional branches, return sites (pc + 4 of `jal`/`jalr` with
//! rd != x0) and `jalr` targets that a block-local constant resolves. A block runs
//! from its leader to a terminator, to the word before the next leader, or to a word
//! that cannot be fetched or decoded (which then traps when reached).
//!
//! Only code a lane can reach is read: a branch whose outcome the encoding
//! decides (`beq x5, x5` always jumps, `bne x5, x5` never does) has one
//! successor. With resumable exits ([`super::resume`]) discovery is also
//! lazy: it stops starting new blocks once `max_instructions` are read, and
//! the leaders it did not reach get no block (a lane jumping there leaves, and
//! the runtime lifts from there); `fence.i` then ends its block.

use std::collections::{BTreeMap, BTreeSet};

use super::LiftError;
use super::consts::ConstTracker;
use super::trap::TrapCause;
use crate::rv32::{BranchCond, Instr, decode_for_execution};

/// How a guest block ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockEnd {
    /// The last instruction is a terminator (jump, branch, ebreak, ecall).
    Terminator,
    /// Falls through into the block starting at this pc.
    Fallthrough(u32),
    /// The word at `pc` cannot run: trap there.
    Bad {
        pc: u32,
        word: Option<u32>,
        cause: TrapCause,
    },
}

#[derive(Clone, Debug)]
pub struct GuestBlock {
    pub start: u32,
    pub instrs: Vec<(u32, u32, Instr)>,
    pub end: BlockEnd,
}

/// The decoded program: blocks by start pc, and every word read.
pub struct Program {
    pub blocks: BTreeMap<u32, GuestBlock>,
    pub words: BTreeMap<u32, u32>,
}

enum Slot {
    Ok(u32, Instr),
    Bad(Option<u32>, TrapCause),
}

/// The outcome of a conditional branch that compares a register with itself:
/// `Some(true)` always taken, `Some(false)` never taken.
pub fn branch_outcome(instr: &Instr) -> Option<bool> {
    match *instr {
        Instr::Branch { cond, rs1, rs2, .. } if rs1 == rs2 => Some(matches!(
            cond,
            BranchCond::Eq | BranchCond::Ge | BranchCond::Geu
        )),
        _ => None,
    }
}

/// True if `instr` ends a guest block (`fence.i` does when lanes leave there).
pub fn ends_block(instr: &Instr, resumable: bool) -> bool {
    instr.ends_block() || (resumable && matches!(instr, Instr::FenceI))
}

/// Successor pcs of a terminator that are worth lifting (direct targets, return
/// sites, fall-throughs), aligned ones only.
fn successors(pc: u32, instr: &Instr, consts: &ConstTracker, out: &mut Vec<u32>) {
    let next = pc.wrapping_add(4);
    match *instr {
        // The taken side last: explored first (a lazy discovery then follows
        // the jumps over code before the code they jump over).
        Instr::Branch { .. } => {
            let outcome = branch_outcome(instr);
            if outcome != Some(true) {
                out.push(next);
            }
            if outcome != Some(false) {
                out.extend(instr.direct_target(pc));
            }
        }
        Instr::Jal { rd, .. } => {
            out.extend(instr.direct_target(pc));
            if rd.0 != 0 {
                out.push(next);
            }
        }
        Instr::Jalr { rd, rs1, offset } => {
            if let Some(base) = consts.get(rs1) {
                out.push(base.wrapping_add_signed(offset) & !1);
            }
            if rd.0 != 0 {
                out.push(next);
            }
        }
        _ => {}
    }
}

/// Explores from `roots` and cuts the reachable code into blocks. Roots are
/// explored first (in order), so a lazy discovery always reaches them.
pub fn discover(
    fetch: &dyn Fn(u32) -> Option<u32>,
    roots: &[u32],
    max_instructions: usize,
    resumable: bool,
) -> Result<Program, LiftError> {
    let mut slots: BTreeMap<u32, Slot> = BTreeMap::new();
    let mut leaders: BTreeSet<u32> = BTreeSet::new();
    // The roots are walked before anything else (and always: a lazy
    // discovery must reach the pcs lanes wait at); then the successors.
    let mut root_queue: Vec<u32> = Vec::new();
    for &r in roots {
        if r.is_multiple_of(4) && leaders.insert(r) {
            root_queue.push(r);
        }
    }
    root_queue.reverse();
    let mut work: Vec<u32> = Vec::new();
    let mut succ = Vec::new();
    loop {
        let start = match root_queue.pop() {
            Some(r) => r,
            None => {
                let Some(w) = work.pop() else { break };
                // Lazy: past the budget, no new blocks.
                if resumable && slots.len() >= max_instructions {
                    if !slots.contains_key(&w) {
                        leaders.remove(&w);
                    }
                    continue;
                }
                w
            }
        };
        let mut pc = start;
        let mut consts = ConstTracker::default();
        loop {
            if pc != start && slots.contains_key(&pc) {
                break;
            }
            // Lazy: the roots' blocks may take the budget twice over (they
            // are what lanes run), never more.
            if resumable && slots.len() >= max_instructions.saturating_mul(2) {
                return Err(LiftError::RunsTooMuch {
                    limit: max_instructions.saturating_mul(2),
                });
            }
            if !resumable && slots.len() >= max_instructions {
                return Err(LiftError::TooLarge {
                    limit: max_instructions,
                });
            }
            let Some(word) = fetch(pc) else {
                slots.insert(pc, Slot::Bad(None, TrapCause::FetchFault));
                break;
            };
            let instr = match decode_for_execution(word, pc) {
                Ok(i) => i,
                Err(e) => {
                    slots.insert(
                        pc,
                        Slot::Bad(Some(word), TrapCause::IllegalInstruction(e.kind)),
                    );
                    break;
                }
            };
            slots.insert(pc, Slot::Ok(word, instr));
            if ends_block(&instr, resumable) {
                succ.clear();
                successors(pc, &instr, &consts, &mut succ);
                for &t in &succ {
                    if t.is_multiple_of(4) && leaders.insert(t) {
                        work.push(t);
                    }
                }
                break;
            }
            consts.step(pc, &instr);
            pc = pc.wrapping_add(4);
        }
    }
    let mut words = BTreeMap::new();
    let mut blocks = BTreeMap::new();
    for &start in &leaders {
        let mut instrs = Vec::new();
        let mut pc = start;
        let end = loop {
            match slots.get(&pc) {
                Some(Slot::Ok(word, instr)) => {
                    words.insert(pc, *word);
                    instrs.push((pc, *word, *instr));
                    if ends_block(instr, resumable) {
                        break BlockEnd::Terminator;
                    }
                }
                Some(Slot::Bad(word, cause)) => {
                    if let Some(w) = word {
                        words.insert(pc, *w);
                    }
                    break BlockEnd::Bad {
                        pc,
                        word: *word,
                        cause: *cause,
                    };
                }
                // Every walked pc has a slot; an unwalked one cannot follow a
                // walked non-terminator, but stay total.
                None => {
                    break BlockEnd::Bad {
                        pc,
                        word: None,
                        cause: TrapCause::FetchFault,
                    };
                }
            }
            pc = pc.wrapping_add(4);
            if leaders.contains(&pc) {
                break BlockEnd::Fallthrough(pc);
            }
        };
        blocks.insert(start, GuestBlock { start, instrs, end });
    }
    Ok(Program { blocks, words })
}
