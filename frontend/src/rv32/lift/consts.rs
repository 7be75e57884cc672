//! Block-local constant tracking of x registers, enough to resolve
//! `lui`/`auipc` + `addi` + `jalr` calls and constant ID-window addresses.

use crate::rv32::{AluImmOp, AluOp, Instr, XReg};

#[derive(Clone, Debug)]
pub struct ConstTracker {
    known: [Option<u32>; 32],
}

impl Default for ConstTracker {
    fn default() -> Self {
        let mut known = [None; 32];
        known[0] = Some(0);
        ConstTracker { known }
    }
}

impl ConstTracker {
    pub fn get(&self, r: XReg) -> Option<u32> {
        self.known[r.num()]
    }

    /// Updates the known values after `instr` at `pc`.
    pub fn step(&mut self, pc: u32, instr: &Instr) {
        let value = match *instr {
            Instr::Lui { imm, .. } => Some(imm),
            Instr::Auipc { imm, .. } => Some(pc.wrapping_add(imm)),
            Instr::OpImm {
                op: AluImmOp::Addi,
                rs1,
                imm,
                ..
            } => self.get(rs1).map(|v| v.wrapping_add_signed(imm)),
            Instr::Op {
                op: AluOp::Add,
                rs1,
                rs2,
                ..
            } => self
                .get(rs1)
                .zip(self.get(rs2))
                .map(|(a, b)| a.wrapping_add(b)),
            Instr::Jal { .. } | Instr::Jalr { .. } => Some(pc.wrapping_add(4)),
            _ => None,
        };
        if let Some(rd) = instr.reg_effects().x_dst {
            self.known[rd.num()] = value;
        }
    }
}
