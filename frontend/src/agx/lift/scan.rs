//! Finds the reachable instructions of a program and the pcs that start IR blocks.

use std::collections::{BTreeMap, BTreeSet};

use super::error::LiftError;
use crate::agx::{Instr, Opcode, decode};

/// The reachable instructions in pc order and the block structure around them.
pub(crate) struct Program {
    pub instrs: Vec<Instr>,
    /// pcs that start a block: the entry, branch/call targets, and the instruction
    /// after every branch or call.
    pub leaders: BTreeSet<u64>,
    /// pcs right after a `call`: where `ret` may go.
    pub return_points: BTreeSet<u64>,
    /// Targets of direct calls: where `call rN` may go.
    pub call_targets: BTreeSet<u64>,
    /// Length of the code in bytes.
    pub len: usize,
}

/// Whether execution can continue with the next instruction.
fn falls_through(op: Opcode) -> bool {
    !matches!(op, Opcode::Stop | Opcode::Trap | Opcode::Ret)
}

/// Whether the instruction ends an IR block.
pub(crate) fn ends_block(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Stop
            | Opcode::Trap
            | Opcode::Ret
            | Opcode::JmpAny
            | Opcode::JmpNone
            | Opcode::Call
            | Opcode::CallReg
    )
}

pub(crate) fn scan(code: &[u8], entry: u64) -> Result<Program, LiftError> {
    let len = code.len();
    let mut found: BTreeMap<u64, Instr> = BTreeMap::new();
    let mut leaders = BTreeSet::from([entry]);
    let mut return_points = BTreeSet::new();
    let mut call_targets = BTreeSet::new();
    let mut work = vec![entry];
    if entry as usize >= len {
        return Err(LiftError::Config(format!(
            "entry {entry:#x} is outside the {len}-byte program"
        )));
    }
    while let Some(pc) = work.pop() {
        if found.contains_key(&pc) || pc as usize >= len {
            continue;
        }
        let (instr, size) = decode(&code[pc as usize..], pc)?;
        let next = pc + size as u64;
        if let Some(target) = instr.branch_target() {
            let signed = pc as i64 + instr.imm(crate::agx::ImmField::Offset).unwrap_or(0);
            if signed < 0 || signed as usize >= len {
                return Err(LiftError::BadTarget {
                    pc,
                    text: instr.to_string(),
                    target: signed,
                    len,
                });
            }
            leaders.insert(target);
            work.push(target);
            if instr.opcode == Opcode::Call {
                call_targets.insert(target);
            }
        }
        if matches!(instr.opcode, Opcode::Call | Opcode::CallReg) {
            return_points.insert(next);
        }
        if ends_block(instr.opcode) {
            leaders.insert(next);
        }
        if falls_through(instr.opcode) {
            work.push(next);
        }
        found.insert(pc, instr);
    }
    // Overlapping instructions (a jump into the middle of one) cannot be lifted.
    let mut end = 0u64;
    for (pc, instr) in &found {
        if *pc < end {
            return Err(LiftError::BadTarget {
                pc: *pc,
                text: instr.to_string(),
                target: *pc as i64,
                len,
            });
        }
        end = pc + instr.len as u64;
    }
    // Leaders past the end (fall-through after the last instruction) stay: their
    // block traps.
    leaders.retain(|pc| found.contains_key(pc) || *pc as usize >= len);
    Ok(Program {
        instrs: found.into_values().collect(),
        leaders,
        return_points,
        call_targets,
        len,
    })
}
