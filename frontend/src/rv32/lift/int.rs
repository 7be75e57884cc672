//! Integer instructions (RV32I + M) and the Zicsr CSRs.

use wavejit_ir::{CastOp, IBinOp, IntCC, Type, Value};

use super::emit::Emitter;
use super::liveness::{FFLAGS, FRM};
use crate::rv32::{AluImmOp, AluOp, BranchCond, Csr, CsrOp, CsrSrc, XReg};

impl Emitter<'_> {
    fn bool_to_i32(&mut self, b: Value) -> Value {
        self.cast(CastOp::Zext, Type::I32, b)
    }

    /// High 32 bits of the 64-bit product of `a` and `b` extended as given.
    fn mul_high(&mut self, a: Value, a_signed: bool, b: Value, b_signed: bool) -> Value {
        let ext = |s: bool| if s { CastOp::Sext } else { CastOp::Zext };
        let a64 = self.cast(ext(a_signed), Type::I64, a);
        let b64 = self.cast(ext(b_signed), Type::I64, b);
        let p = self.bin(IBinOp::Mul, a64, b64);
        let c = self.iconst(Type::I64, 32);
        let hi = self.bin(IBinOp::ShrU, p, c);
        self.cast(CastOp::Trunc, Type::I32, hi)
    }

    pub fn op_imm(&mut self, op: AluImmOp, rd: XReg, rs1: XReg, imm: i32) {
        let a = self.x(rs1);
        let imm = imm as u32;
        let v = match op {
            AluImmOp::Addi => self.bin_imm(IBinOp::Add, a, imm),
            AluImmOp::Xori => self.bin_imm(IBinOp::Xor, a, imm),
            AluImmOp::Ori => self.bin_imm(IBinOp::Or, a, imm),
            AluImmOp::Andi => self.bin_imm(IBinOp::And, a, imm),
            AluImmOp::Slli => self.bin_imm(IBinOp::Shl, a, imm),
            AluImmOp::Srli => self.bin_imm(IBinOp::ShrU, a, imm),
            AluImmOp::Srai => self.bin_imm(IBinOp::ShrS, a, imm),
            AluImmOp::Slti | AluImmOp::Sltiu => {
                let cc = if op == AluImmOp::Slti {
                    IntCC::Slt
                } else {
                    IntCC::Ult
                };
                let c = self.c32(imm);
                let b = self.icmp(cc, a, c);
                self.bool_to_i32(b)
            }
        };
        self.set_x(rd, v);
    }

    pub fn op(&mut self, op: AluOp, rd: XReg, rs1: XReg, rs2: XReg) {
        let a = self.x(rs1);
        let b = self.x(rs2);
        let simple = |op: AluOp| {
            Some(match op {
                AluOp::Add => IBinOp::Add,
                AluOp::Sub => IBinOp::Sub,
                AluOp::Sll => IBinOp::Shl,
                AluOp::Xor => IBinOp::Xor,
                AluOp::Srl => IBinOp::ShrU,
                AluOp::Sra => IBinOp::ShrS,
                AluOp::Or => IBinOp::Or,
                AluOp::And => IBinOp::And,
                AluOp::Mul => IBinOp::Mul,
                AluOp::Mulh => IBinOp::MulHiS,
                AluOp::Mulhu => IBinOp::MulHiU,
                // The IR defines x/0 and MIN/-1 exactly as RISC-V does.
                AluOp::Div => IBinOp::DivS,
                AluOp::Divu => IBinOp::DivU,
                AluOp::Rem => IBinOp::RemS,
                AluOp::Remu => IBinOp::RemU,
                AluOp::Slt | AluOp::Sltu | AluOp::Mulhsu => return None,
            })
        };
        let v = match (simple(op), op) {
            (Some(ir), _) => self.bin(ir, a, b),
            (None, AluOp::Mulhsu) => self.mul_high(a, true, b, false),
            (None, AluOp::Slt) => {
                let c = self.icmp(IntCC::Slt, a, b);
                self.bool_to_i32(c)
            }
            (None, _) => {
                let c = self.icmp(IntCC::Ult, a, b);
                self.bool_to_i32(c)
            }
        };
        self.set_x(rd, v);
    }

    pub fn branch_cond(&mut self, cond: BranchCond, rs1: XReg, rs2: XReg) -> Value {
        let a = self.x(rs1);
        let b = self.x(rs2);
        let cc = match cond {
            BranchCond::Eq => IntCC::Eq,
            BranchCond::Ne => IntCC::Ne,
            BranchCond::Lt => IntCC::Slt,
            BranchCond::Ge => IntCC::Sge,
            BranchCond::Ltu => IntCC::Ult,
            BranchCond::Geu => IntCC::Uge,
        };
        self.icmp(cc, a, b)
    }

    fn fcsr_value(&mut self) -> Value {
        let frm = self.vals[FRM];
        let hi = self.bin_imm(IBinOp::Shl, frm, 5);
        self.bin(IBinOp::Or, hi, self.vals[FFLAGS])
    }

    pub fn csr(&mut self, op: CsrOp, rd: XReg, csr: Csr, src: CsrSrc, writes: bool) {
        let old = match csr {
            Csr::Fflags => self.vals[FFLAGS],
            Csr::Frm => self.vals[FRM],
            Csr::Fcsr => self.fcsr_value(),
            Csr::Mhartid => self.pro.map_or(self.zero_i32(), |p| p.hartid),
        };
        if writes {
            let s = match src {
                CsrSrc::Reg(r) => self.x(r),
                CsrSrc::Imm(v) => self.c32(u32::from(v)),
            };
            let new = match op {
                CsrOp::ReadWrite => s,
                CsrOp::ReadSet => self.bin(IBinOp::Or, old, s),
                CsrOp::ReadClear => {
                    let m = self.bin_imm(IBinOp::Xor, s, u32::MAX);
                    self.bin(IBinOp::And, old, m)
                }
            };
            match csr {
                Csr::Fflags => self.vals[FFLAGS] = self.bin_imm(IBinOp::And, new, 0x1f),
                Csr::Frm => self.vals[FRM] = self.bin_imm(IBinOp::And, new, 7),
                Csr::Fcsr => {
                    self.vals[FFLAGS] = self.bin_imm(IBinOp::And, new, 0x1f);
                    let f = self.bin_imm(IBinOp::ShrU, new, 5);
                    self.vals[FRM] = self.bin_imm(IBinOp::And, f, 7);
                }
                // The decoder rejects writes to the read-only mhartid.
                Csr::Mhartid => {}
            }
        }
        self.set_x(rd, old);
    }
}
