//! Word → [`Instr`] decoder for the device profile (RV32IMF, Zicsr, Zifencei,
//! custom conversions). Anything else is a [`DecodeError`].

use super::error::{DecodeError, DecodeErrorKind};
use super::instr::{
    AluImmOp, AluOp, BranchCond, Csr, CsrOp, CsrSrc, FReg, FenceSet, FmaOp, FpArithOp, FpCmpOp,
    FpMinMaxOp, FpSignOp, Instr, LoadKind, LpDirection, LpFormat, RoundingMode, StoreKind, XReg,
};

/// Exact words with fixed encodings.
const ECALL: u32 = 0x0000_0073;
const EBREAK: u32 = 0x0010_0073;
const FENCE_I: u32 = 0x0000_100F;
const FENCE_TSO: u32 = 0x8330_000F;

/// Field accessors over a raw word.
#[derive(Clone, Copy)]
struct Word(u32);

impl Word {
    fn bits(self, lo: u32, len: u32) -> u32 {
        (self.0 >> lo) & ((1 << len) - 1)
    }
    fn opcode(self) -> u32 {
        self.bits(0, 7)
    }
    fn rd(self) -> u8 {
        self.bits(7, 5) as u8
    }
    fn funct3(self) -> u32 {
        self.bits(12, 3)
    }
    fn rs1(self) -> u8 {
        self.bits(15, 5) as u8
    }
    fn rs2(self) -> u8 {
        self.bits(20, 5) as u8
    }
    fn rs3(self) -> u8 {
        self.bits(27, 5) as u8
    }
    fn funct7(self) -> u32 {
        self.bits(25, 7)
    }
    fn xd(self) -> XReg {
        XReg(self.rd())
    }
    fn xs1(self) -> XReg {
        XReg(self.rs1())
    }
    fn xs2(self) -> XReg {
        XReg(self.rs2())
    }
    fn fd(self) -> FReg {
        FReg(self.rd())
    }
    fn fs1(self) -> FReg {
        FReg(self.rs1())
    }
    fn fs2(self) -> FReg {
        FReg(self.rs2())
    }
    fn fs3(self) -> FReg {
        FReg(self.rs3())
    }
    /// I-type immediate, sign-extended.
    fn imm_i(self) -> i32 {
        (self.0 as i32) >> 20
    }
    /// S-type immediate, sign-extended.
    fn imm_s(self) -> i32 {
        (((self.0 as i32) >> 25) << 5) | self.bits(7, 5) as i32
    }
    /// B-type offset, sign-extended (always even).
    fn imm_b(self) -> i32 {
        (((self.0 as i32) >> 31) << 12)
            | (self.bits(7, 1) << 11) as i32
            | (self.bits(25, 6) << 5) as i32
            | (self.bits(8, 4) << 1) as i32
    }
    /// U-type immediate, bits \[31:12\] in place.
    fn imm_u(self) -> u32 {
        self.0 & 0xFFFF_F000
    }
    /// J-type offset, sign-extended (always even).
    fn imm_j(self) -> i32 {
        (((self.0 as i32) >> 31) << 20)
            | (self.bits(12, 8) << 12) as i32
            | (self.bits(20, 1) << 11) as i32
            | (self.bits(21, 10) << 1) as i32
    }
}

/// Decodes one 32-bit instruction word fetched from `pc` (pc only labels errors).
pub fn decode(word: u32, pc: u32) -> Result<Instr, DecodeError> {
    decode_kind(Word(word)).map_err(|kind| DecodeError { word, pc, kind })
}

/// [`decode`] for running code: FENCE / FENCE.I words whose reserved fields are not
/// zero execute as the plain instruction. The ISA manual: base implementations
/// ignore rd, rs1 (and FENCE.I's imm), and treat reserved fm values as fm = 0.
/// [`decode`] keeps rejecting them, as GNU objdump (`.4byte`) does.
pub fn decode_for_execution(word: u32, pc: u32) -> Result<Instr, DecodeError> {
    decode(word, pc).or_else(|e| {
        let w = Word(word);
        match (w.bits(0, 7), w.funct3()) {
            (0x0f, 0) => Ok(Instr::Fence {
                pred: FenceSet(w.bits(24, 4) as u8),
                succ: FenceSet(w.bits(20, 4) as u8),
            }),
            (0x0f, 1) => Ok(Instr::FenceI),
            _ => Err(e),
        }
    })
}

type Decoded = Result<Instr, DecodeErrorKind>;

fn invalid(group: &'static str) -> DecodeErrorKind {
    DecodeErrorKind::InvalidEncoding(group)
}

fn decode_kind(w: Word) -> Decoded {
    if w.bits(0, 2) != 0b11 {
        return Err(DecodeErrorKind::Compressed);
    }
    if w.bits(2, 3) == 0b111 {
        return Err(DecodeErrorKind::LongEncoding);
    }
    match w.opcode() {
        0x37 => Ok(Instr::Lui {
            rd: w.xd(),
            imm: w.imm_u(),
        }),
        0x17 => Ok(Instr::Auipc {
            rd: w.xd(),
            imm: w.imm_u(),
        }),
        0x6F => Ok(Instr::Jal {
            rd: w.xd(),
            offset: w.imm_j(),
        }),
        0x67 if w.funct3() == 0 => Ok(Instr::Jalr {
            rd: w.xd(),
            rs1: w.xs1(),
            offset: w.imm_i(),
        }),
        0x67 => Err(invalid("jalr")),
        0x63 => decode_branch(w),
        0x03 => decode_load(w),
        0x23 => decode_store(w),
        0x13 => decode_op_imm(w),
        0x33 => decode_op(w),
        0x0F => decode_misc_mem(w),
        0x73 => decode_system(w),
        0x07 if w.funct3() == 2 => Ok(Instr::Flw {
            rd: w.fd(),
            rs1: w.xs1(),
            offset: w.imm_i(),
        }),
        0x07 => Err(invalid("fp load (only flw)")),
        0x27 if w.funct3() == 2 => Ok(Instr::Fsw {
            rs1: w.xs1(),
            rs2: w.fs2(),
            offset: w.imm_s(),
        }),
        0x27 => Err(invalid("fp store (only fsw)")),
        0x43 | 0x47 | 0x4B | 0x4F => decode_fma(w),
        0x53 => decode_op_fp(w),
        other => Err(DecodeErrorKind::UnsupportedOpcode(other as u8)),
    }
}

fn decode_branch(w: Word) -> Decoded {
    let cond = match w.funct3() {
        0 => BranchCond::Eq,
        1 => BranchCond::Ne,
        4 => BranchCond::Lt,
        5 => BranchCond::Ge,
        6 => BranchCond::Ltu,
        7 => BranchCond::Geu,
        _ => return Err(invalid("branch")),
    };
    Ok(Instr::Branch {
        cond,
        rs1: w.xs1(),
        rs2: w.xs2(),
        offset: w.imm_b(),
    })
}

fn decode_load(w: Word) -> Decoded {
    let kind = match w.funct3() {
        0 => LoadKind::Byte,
        1 => LoadKind::Half,
        2 => LoadKind::Word,
        4 => LoadKind::ByteUnsigned,
        5 => LoadKind::HalfUnsigned,
        _ => return Err(invalid("load")),
    };
    Ok(Instr::Load {
        kind,
        rd: w.xd(),
        rs1: w.xs1(),
        offset: w.imm_i(),
    })
}

fn decode_store(w: Word) -> Decoded {
    let kind = match w.funct3() {
        0 => StoreKind::Byte,
        1 => StoreKind::Half,
        2 => StoreKind::Word,
        _ => return Err(invalid("store")),
    };
    Ok(Instr::Store {
        kind,
        rs1: w.xs1(),
        rs2: w.xs2(),
        offset: w.imm_s(),
    })
}

fn decode_op_imm(w: Word) -> Decoded {
    let (op, imm) = match (w.funct3(), w.funct7()) {
        (0, _) => (AluImmOp::Addi, w.imm_i()),
        (2, _) => (AluImmOp::Slti, w.imm_i()),
        (3, _) => (AluImmOp::Sltiu, w.imm_i()),
        (4, _) => (AluImmOp::Xori, w.imm_i()),
        (6, _) => (AluImmOp::Ori, w.imm_i()),
        (7, _) => (AluImmOp::Andi, w.imm_i()),
        // RV32 shifts: shamt is 5 bits, so funct7 (which includes shamt[5]) is exact.
        (1, 0x00) => (AluImmOp::Slli, i32::from(w.rs2())),
        (5, 0x00) => (AluImmOp::Srli, i32::from(w.rs2())),
        (5, 0x20) => (AluImmOp::Srai, i32::from(w.rs2())),
        _ => return Err(invalid("shift-immediate")),
    };
    Ok(Instr::OpImm {
        op,
        rd: w.xd(),
        rs1: w.xs1(),
        imm,
    })
}

fn decode_op(w: Word) -> Decoded {
    let op = match (w.funct7(), w.funct3()) {
        (0x00, 0) => AluOp::Add,
        (0x20, 0) => AluOp::Sub,
        (0x00, 1) => AluOp::Sll,
        (0x00, 2) => AluOp::Slt,
        (0x00, 3) => AluOp::Sltu,
        (0x00, 4) => AluOp::Xor,
        (0x00, 5) => AluOp::Srl,
        (0x20, 5) => AluOp::Sra,
        (0x00, 6) => AluOp::Or,
        (0x00, 7) => AluOp::And,
        (0x01, 0) => AluOp::Mul,
        (0x01, 1) => AluOp::Mulh,
        (0x01, 2) => AluOp::Mulhsu,
        (0x01, 3) => AluOp::Mulhu,
        (0x01, 4) => AluOp::Div,
        (0x01, 5) => AluOp::Divu,
        (0x01, 6) => AluOp::Rem,
        (0x01, 7) => AluOp::Remu,
        _ => return Err(invalid("register-register ALU")),
    };
    Ok(Instr::Op {
        op,
        rd: w.xd(),
        rs1: w.xs1(),
        rs2: w.xs2(),
    })
}

/// FENCE with fm = 0 and zero rd/rs1 (the reserved fields are required to be zero, as
/// GNU objdump does), FENCE.TSO, and the exact FENCE.I word.
fn decode_misc_mem(w: Word) -> Decoded {
    match w.funct3() {
        0 if w.0 == FENCE_TSO => Ok(Instr::FenceTso),
        0 if w.bits(28, 4) == 0 && w.rd() == 0 && w.rs1() == 0 => Ok(Instr::Fence {
            pred: FenceSet(w.bits(24, 4) as u8),
            succ: FenceSet(w.bits(20, 4) as u8),
        }),
        1 if w.0 == FENCE_I => Ok(Instr::FenceI),
        _ => Err(invalid("fence")),
    }
}

fn decode_system(w: Word) -> Decoded {
    let op = match w.funct3() {
        0 => {
            return match w.0 {
                ECALL => Ok(Instr::Ecall),
                EBREAK => Ok(Instr::Ebreak),
                _ => Err(invalid("system (only ecall/ebreak)")),
            };
        }
        1 | 5 => CsrOp::ReadWrite,
        2 | 6 => CsrOp::ReadSet,
        3 | 7 => CsrOp::ReadClear,
        _ => return Err(invalid("system")),
    };
    let number = w.bits(20, 12) as u16;
    let csr = Csr::from_number(number).ok_or(DecodeErrorKind::UnsupportedCsr(number))?;
    let src = if w.funct3() >= 5 {
        CsrSrc::Imm(w.rs1())
    } else {
        CsrSrc::Reg(w.xs1())
    };
    let writes = op == CsrOp::ReadWrite || src.is_nonzero();
    if writes && csr.is_read_only() {
        return Err(DecodeErrorKind::ReadOnlyCsrWrite(number));
    }
    Ok(Instr::Csr {
        op,
        rd: w.xd(),
        csr,
        src,
    })
}

fn rounding_mode(w: Word) -> Result<RoundingMode, DecodeErrorKind> {
    RoundingMode::from_field(w.funct3())
        .ok_or(DecodeErrorKind::ReservedRoundingMode(w.funct3() as u8))
}

fn decode_fma(w: Word) -> Decoded {
    // fmt field \[26:25\]: only 00 (single) exists without D/Q/Zfh.
    if w.bits(25, 2) != 0 {
        return Err(invalid("fused multiply-add (only .s)"));
    }
    let op = match w.opcode() {
        0x43 => FmaOp::Madd,
        0x47 => FmaOp::Msub,
        0x4B => FmaOp::Nmsub,
        _ => FmaOp::Nmadd,
    };
    Ok(Instr::Fma {
        op,
        rd: w.fd(),
        rs1: w.fs1(),
        rs2: w.fs2(),
        rs3: w.fs3(),
        rm: rounding_mode(w)?,
    })
}

fn decode_op_fp(w: Word) -> Decoded {
    let (rd, rs1, rs2, f3) = (w.fd(), w.fs1(), w.fs2(), w.funct3());
    let arith = |op| -> Decoded {
        Ok(Instr::FpArith {
            op,
            rd,
            rs1,
            rs2,
            rm: rounding_mode(w)?,
        })
    };
    match w.funct7() {
        0x00 => arith(FpArithOp::Add),
        0x04 => arith(FpArithOp::Sub),
        0x08 => arith(FpArithOp::Mul),
        0x0C => arith(FpArithOp::Div),
        0x2C if w.rs2() == 0 => Ok(Instr::Fsqrt {
            rd,
            rs1,
            rm: rounding_mode(w)?,
        }),
        0x10 if f3 <= 2 => {
            let op = [FpSignOp::Inject, FpSignOp::Negate, FpSignOp::Xor][f3 as usize];
            Ok(Instr::FpSign { op, rd, rs1, rs2 })
        }
        0x14 if f3 <= 1 => {
            let op = [FpMinMaxOp::Min, FpMinMaxOp::Max][f3 as usize];
            Ok(Instr::FpMinMax { op, rd, rs1, rs2 })
        }
        0x50 if f3 <= 2 => {
            let op = [FpCmpOp::Le, FpCmpOp::Lt, FpCmpOp::Eq][f3 as usize];
            Ok(Instr::FpCompare {
                op,
                rd: w.xd(),
                rs1,
                rs2,
            })
        }
        0x60 if w.rs2() <= 1 => Ok(Instr::FcvtToInt {
            rd: w.xd(),
            rs1,
            unsigned: w.rs2() == 1,
            rm: rounding_mode(w)?,
        }),
        0x68 if w.rs2() <= 1 => Ok(Instr::FcvtFromInt {
            rd,
            rs1: w.xs1(),
            unsigned: w.rs2() == 1,
            rm: rounding_mode(w)?,
        }),
        0x70 if w.rs2() == 0 && f3 == 0 => Ok(Instr::FmvToInt { rd: w.xd(), rs1 }),
        0x70 if w.rs2() == 0 && f3 == 1 => Ok(Instr::Fclass { rd: w.xd(), rs1 }),
        0x78 if w.rs2() == 0 && f3 == 0 => Ok(Instr::FmvFromInt { rd, rs1: w.xs1() }),
        0x22 | 0x24 | 0x26 => decode_lp_convert(w),
        _ => Err(invalid("OP-FP")),
    }
}

/// Custom conversions (datasheet §7): funct7 picks the family, rs2 the operation:
/// 0x22: rs2 0 = S.BF16, 1 = BF16.S; 0x24: 0 = S.E4M3, 1 = E4M3.S, 2 = S.E5M2,
/// 3 = E5M2.S; 0x26: 0 = S.E2M1, 1 = E2M1.S. The rm field is ignored (not checked).
fn decode_lp_convert(w: Word) -> Decoded {
    use LpDirection::{Narrow, Widen};
    let (fmt, dir) = match (w.funct7(), w.rs2()) {
        (0x22, 0) => (LpFormat::Bf16, Widen),
        (0x22, 1) => (LpFormat::Bf16, Narrow),
        (0x24, 0) => (LpFormat::E4m3, Widen),
        (0x24, 1) => (LpFormat::E4m3, Narrow),
        (0x24, 2) => (LpFormat::E5m2, Widen),
        (0x24, 3) => (LpFormat::E5m2, Narrow),
        (0x26, 0) => (LpFormat::E2m1, Widen),
        (0x26, 1) => (LpFormat::E2m1, Narrow),
        _ => return Err(invalid("custom low-precision conversion")),
    };
    Ok(Instr::LpConvert {
        fmt,
        dir,
        rd: w.fd(),
        rs1: w.fs1(),
        rm_field: w.funct3() as u8,
    })
}
