//! [`Instr`] → word encoder, the exact inverse of [`super::decode`]: for every word
//! the decoder accepts, `encode(decode(w)) == w`, and every `Instr` that encodes
//! decodes back to itself. Meant for building test kernels in Rust without an
//! assembler.

use thiserror::Error;

use super::instr::{
    AluImmOp, AluOp, BranchCond, CsrOp, CsrSrc, FReg, FmaOp, FpArithOp, FpCmpOp, FpMinMaxOp,
    FpSignOp, Instr, LoadKind, LpDirection, LpFormat, RoundingMode, StoreKind, XReg,
};

/// An [`Instr`] whose fields do not fit the encoding (or that the decoder would
/// reject, such as a write to a read-only CSR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("cannot encode {instr:?}: {reason}")]
pub struct EncodeError {
    pub instr: Instr,
    pub reason: &'static str,
}

type Enc = Result<u32, &'static str>;

fn x(r: XReg) -> Result<u32, &'static str> {
    if r.0 < 32 {
        Ok(u32::from(r.0))
    } else {
        Err("integer register number above 31")
    }
}

fn f(r: FReg) -> Result<u32, &'static str> {
    if r.0 < 32 {
        Ok(u32::from(r.0))
    } else {
        Err("FP register number above 31")
    }
}

fn imm12(v: i32) -> Result<u32, &'static str> {
    if (-2048..=2047).contains(&v) {
        Ok((v as u32) & 0xFFF)
    } else {
        Err("12-bit immediate out of range")
    }
}

fn r_type(f7: u32, rs2: u32, rs1: u32, f3: u32, rd: u32, op: u32) -> u32 {
    (f7 << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
}

fn i_type(imm: i32, rs1: u32, f3: u32, rd: u32, op: u32) -> Enc {
    Ok((imm12(imm)? << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op)
}

fn s_type(imm: i32, rs2: u32, rs1: u32, f3: u32, op: u32) -> Enc {
    let i = imm12(imm)?;
    Ok(((i >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (f3 << 12) | ((i & 0x1F) << 7) | op)
}

fn b_type(offset: i32, rs2: u32, rs1: u32, f3: u32) -> Enc {
    if offset % 2 != 0 || !(-4096..=4094).contains(&offset) {
        return Err("branch offset not even or outside ±4 KiB");
    }
    let o = offset as u32;
    Ok((((o >> 12) & 1) << 31)
        | (((o >> 5) & 0x3F) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (f3 << 12)
        | (((o >> 1) & 0xF) << 8)
        | (((o >> 11) & 1) << 7)
        | 0x63)
}

fn j_type(offset: i32, rd: u32) -> Enc {
    if offset % 2 != 0 || !(-(1 << 20)..(1 << 20)).contains(&offset) {
        return Err("jal offset not even or outside ±1 MiB");
    }
    let o = offset as u32;
    Ok((((o >> 20) & 1) << 31)
        | (((o >> 1) & 0x3FF) << 21)
        | (((o >> 11) & 1) << 20)
        | (((o >> 12) & 0xFF) << 12)
        | (rd << 7)
        | 0x6F)
}

fn u_type(imm: u32, rd: u32, op: u32) -> Enc {
    if imm & 0xFFF != 0 {
        return Err("U-type immediate has non-zero low 12 bits");
    }
    Ok(imm | (rd << 7) | op)
}

fn rm(mode: RoundingMode) -> u32 {
    u32::from(mode.field())
}

/// Encodes one instruction.
pub fn encode(instr: &Instr) -> Result<u32, EncodeError> {
    encode_inner(instr).map_err(|reason| EncodeError {
        instr: *instr,
        reason,
    })
}

fn encode_inner(instr: &Instr) -> Enc {
    match *instr {
        Instr::Lui { rd, imm } => u_type(imm, x(rd)?, 0x37),
        Instr::Auipc { rd, imm } => u_type(imm, x(rd)?, 0x17),
        Instr::Jal { rd, offset } => j_type(offset, x(rd)?),
        Instr::Jalr { rd, rs1, offset } => i_type(offset, x(rs1)?, 0, x(rd)?, 0x67),
        Instr::Branch {
            cond,
            rs1,
            rs2,
            offset,
        } => {
            let f3 = match cond {
                BranchCond::Eq => 0,
                BranchCond::Ne => 1,
                BranchCond::Lt => 4,
                BranchCond::Ge => 5,
                BranchCond::Ltu => 6,
                BranchCond::Geu => 7,
            };
            b_type(offset, x(rs2)?, x(rs1)?, f3)
        }
        Instr::Load {
            kind,
            rd,
            rs1,
            offset,
        } => {
            let f3 = match kind {
                LoadKind::Byte => 0,
                LoadKind::Half => 1,
                LoadKind::Word => 2,
                LoadKind::ByteUnsigned => 4,
                LoadKind::HalfUnsigned => 5,
            };
            i_type(offset, x(rs1)?, f3, x(rd)?, 0x03)
        }
        Instr::Store {
            kind,
            rs1,
            rs2,
            offset,
        } => {
            let f3 = match kind {
                StoreKind::Byte => 0,
                StoreKind::Half => 1,
                StoreKind::Word => 2,
            };
            s_type(offset, x(rs2)?, x(rs1)?, f3, 0x23)
        }
        Instr::OpImm { op, rd, rs1, imm } => encode_op_imm(op, x(rd)?, x(rs1)?, imm),
        Instr::Op { op, rd, rs1, rs2 } => {
            let (f7, f3) = match op {
                AluOp::Add => (0x00, 0),
                AluOp::Sub => (0x20, 0),
                AluOp::Sll => (0x00, 1),
                AluOp::Slt => (0x00, 2),
                AluOp::Sltu => (0x00, 3),
                AluOp::Xor => (0x00, 4),
                AluOp::Srl => (0x00, 5),
                AluOp::Sra => (0x20, 5),
                AluOp::Or => (0x00, 6),
                AluOp::And => (0x00, 7),
                AluOp::Mul => (0x01, 0),
                AluOp::Mulh => (0x01, 1),
                AluOp::Mulhsu => (0x01, 2),
                AluOp::Mulhu => (0x01, 3),
                AluOp::Div => (0x01, 4),
                AluOp::Divu => (0x01, 5),
                AluOp::Rem => (0x01, 6),
                AluOp::Remu => (0x01, 7),
            };
            Ok(r_type(f7, x(rs2)?, x(rs1)?, f3, x(rd)?, 0x33))
        }
        Instr::Fence { pred, succ } => {
            if pred.0 > 15 || succ.0 > 15 {
                return Err("fence set above 4 bits");
            }
            Ok((u32::from(pred.0) << 24) | (u32::from(succ.0) << 20) | 0x0F)
        }
        Instr::FenceTso => Ok(0x8330_000F),
        Instr::FenceI => Ok(0x0000_100F),
        Instr::Ecall => Ok(0x0000_0073),
        Instr::Ebreak => Ok(0x0010_0073),
        Instr::Csr { op, rd, csr, src } => {
            let writes = op == CsrOp::ReadWrite || src.is_nonzero();
            if writes && csr.is_read_only() {
                return Err("write to a read-only CSR");
            }
            let base = match op {
                CsrOp::ReadWrite => 1,
                CsrOp::ReadSet => 2,
                CsrOp::ReadClear => 3,
            };
            let (f3, field) = match src {
                CsrSrc::Reg(r) => (base, x(r)?),
                CsrSrc::Imm(v) if v < 32 => (base + 4, u32::from(v)),
                CsrSrc::Imm(_) => return Err("CSR immediate above 31"),
            };
            Ok((u32::from(csr.number()) << 20) | (field << 15) | (f3 << 12) | (x(rd)? << 7) | 0x73)
        }
        Instr::Flw { rd, rs1, offset } => i_type(offset, x(rs1)?, 2, f(rd)?, 0x07),
        Instr::Fsw { rs1, rs2, offset } => s_type(offset, f(rs2)?, x(rs1)?, 2, 0x27),
        Instr::Fma {
            op,
            rd,
            rs1,
            rs2,
            rs3,
            rm: mode,
        } => {
            let opcode = match op {
                FmaOp::Madd => 0x43,
                FmaOp::Msub => 0x47,
                FmaOp::Nmsub => 0x4B,
                FmaOp::Nmadd => 0x4F,
            };
            Ok((f(rs3)? << 27) | r_type(0, f(rs2)?, f(rs1)?, rm(mode), f(rd)?, opcode))
        }
        Instr::FpArith {
            op,
            rd,
            rs1,
            rs2,
            rm: mode,
        } => {
            let f7 = match op {
                FpArithOp::Add => 0x00,
                FpArithOp::Sub => 0x04,
                FpArithOp::Mul => 0x08,
                FpArithOp::Div => 0x0C,
            };
            Ok(r_type(f7, f(rs2)?, f(rs1)?, rm(mode), f(rd)?, 0x53))
        }
        Instr::Fsqrt { rd, rs1, rm: mode } => Ok(r_type(0x2C, 0, f(rs1)?, rm(mode), f(rd)?, 0x53)),
        Instr::FpSign { op, rd, rs1, rs2 } => {
            let f3 = match op {
                FpSignOp::Inject => 0,
                FpSignOp::Negate => 1,
                FpSignOp::Xor => 2,
            };
            Ok(r_type(0x10, f(rs2)?, f(rs1)?, f3, f(rd)?, 0x53))
        }
        Instr::FpMinMax { op, rd, rs1, rs2 } => {
            let f3 = match op {
                FpMinMaxOp::Min => 0,
                FpMinMaxOp::Max => 1,
            };
            Ok(r_type(0x14, f(rs2)?, f(rs1)?, f3, f(rd)?, 0x53))
        }
        Instr::FpCompare { op, rd, rs1, rs2 } => {
            let f3 = match op {
                FpCmpOp::Le => 0,
                FpCmpOp::Lt => 1,
                FpCmpOp::Eq => 2,
            };
            Ok(r_type(0x50, f(rs2)?, f(rs1)?, f3, x(rd)?, 0x53))
        }
        Instr::Fclass { rd, rs1 } => Ok(r_type(0x70, 0, f(rs1)?, 1, x(rd)?, 0x53)),
        Instr::FcvtToInt {
            rd,
            rs1,
            unsigned,
            rm: mode,
        } => Ok(r_type(
            0x60,
            u32::from(unsigned),
            f(rs1)?,
            rm(mode),
            x(rd)?,
            0x53,
        )),
        Instr::FcvtFromInt {
            rd,
            rs1,
            unsigned,
            rm: mode,
        } => Ok(r_type(
            0x68,
            u32::from(unsigned),
            x(rs1)?,
            rm(mode),
            f(rd)?,
            0x53,
        )),
        Instr::FmvToInt { rd, rs1 } => Ok(r_type(0x70, 0, f(rs1)?, 0, x(rd)?, 0x53)),
        Instr::FmvFromInt { rd, rs1 } => Ok(r_type(0x78, 0, x(rs1)?, 0, f(rd)?, 0x53)),
        Instr::LpConvert {
            fmt,
            dir,
            rd,
            rs1,
            rm_field,
        } => {
            if rm_field > 7 {
                return Err("rm field above 3 bits");
            }
            let narrow = u32::from(dir == LpDirection::Narrow);
            let (f7, rs2) = match fmt {
                LpFormat::Bf16 => (0x22, narrow),
                LpFormat::E4m3 => (0x24, narrow),
                LpFormat::E5m2 => (0x24, 2 + narrow),
                LpFormat::E2m1 => (0x26, narrow),
            };
            Ok(r_type(f7, rs2, f(rs1)?, u32::from(rm_field), f(rd)?, 0x53))
        }
    }
}

fn encode_op_imm(op: AluImmOp, rd: u32, rs1: u32, imm: i32) -> Enc {
    let shift = |f7: u32, f3: u32| -> Enc {
        if (0..32).contains(&imm) {
            Ok(r_type(f7, imm as u32, rs1, f3, rd, 0x13))
        } else {
            Err("shift amount outside 0..=31")
        }
    };
    match op {
        AluImmOp::Addi => i_type(imm, rs1, 0, rd, 0x13),
        AluImmOp::Slti => i_type(imm, rs1, 2, rd, 0x13),
        AluImmOp::Sltiu => i_type(imm, rs1, 3, rd, 0x13),
        AluImmOp::Xori => i_type(imm, rs1, 4, rd, 0x13),
        AluImmOp::Ori => i_type(imm, rs1, 6, rd, 0x13),
        AluImmOp::Andi => i_type(imm, rs1, 7, rd, 0x13),
        AluImmOp::Slli => shift(0x00, 1),
        AluImmOp::Srli => shift(0x00, 5),
        AluImmOp::Srai => shift(0x20, 5),
    }
}
