//! Typed RV32IMF + Zicsr + custom low-precision-conversion instructions.
//!
//! Designed for the lifter: registers are plain numbers wrapped in [`XReg`]/[`FReg`],
//! immediates are already sign-extended (and, for U-type, shifted into place), and the
//! rounding mode is an enum in which the reserved encodings 5 and 6 cannot occur
//! (the decoder rejects them).

use std::fmt;

/// Integer register `x0`..`x31` (`x0` reads as zero, writes are discarded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct XReg(pub u8);

impl XReg {
    pub const ZERO: XReg = XReg(0);
    pub const RA: XReg = XReg(1);
    pub const SP: XReg = XReg(2);
    pub const GP: XReg = XReg(3);
    pub const TP: XReg = XReg(4);

    /// Register number 0..=31, for indexing register files.
    pub fn num(self) -> usize {
        usize::from(self.0)
    }
}

/// Floating-point register `f0`..`f31` (32-bit singles; no D, so no NaN-boxing).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FReg(pub u8);

impl FReg {
    /// Register number 0..=31, for indexing register files.
    pub fn num(self) -> usize {
        usize::from(self.0)
    }
}

/// The `rm` field of an FP instruction. Reserved values 5 and 6 are decode errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoundingMode {
    /// Round to nearest, ties to even.
    Rne,
    /// Round towards zero.
    Rtz,
    /// Round down (towards −∞).
    Rdn,
    /// Round up (towards +∞).
    Rup,
    /// Round to nearest, ties to max magnitude.
    Rmm,
    /// Use `fcsr.frm` at run time (illegal if frm holds 5..=7 then).
    Dyn,
}

impl RoundingMode {
    /// Decodes the 3-bit field; `None` for the reserved values 5 and 6.
    pub fn from_field(bits: u32) -> Option<Self> {
        match bits & 7 {
            0 => Some(Self::Rne),
            1 => Some(Self::Rtz),
            2 => Some(Self::Rdn),
            3 => Some(Self::Rup),
            4 => Some(Self::Rmm),
            7 => Some(Self::Dyn),
            _ => None,
        }
    }

    /// The 3-bit encoding (also the value of `frm` for the static modes).
    pub fn field(self) -> u8 {
        match self {
            Self::Rne => 0,
            Self::Rtz => 1,
            Self::Rdn => 2,
            Self::Rup => 3,
            Self::Rmm => 4,
            Self::Dyn => 7,
        }
    }

    /// The assembler name (`rne`, `rtz`, `rdn`, `rup`, `rmm`, `dyn`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Rne => "rne",
            Self::Rtz => "rtz",
            Self::Rdn => "rdn",
            Self::Rup => "rup",
            Self::Rmm => "rmm",
            Self::Dyn => "dyn",
        }
    }
}

/// The CSRs the device implements (datasheet §6.1): the F-extension CSRs and the
/// read-only lane ID `mhartid` (= block_linear << 13 | warp << 5 | lane).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Csr {
    /// 0x001: accrued exception flags NX UF OF DZ NV (bits 0..4).
    Fflags,
    /// 0x002: dynamic rounding mode.
    Frm,
    /// 0x003: frm << 5 | fflags.
    Fcsr,
    /// 0xF14: read-only SIMT lane identity.
    Mhartid,
}

impl Csr {
    /// Maps a 12-bit CSR number to a supported CSR.
    pub fn from_number(num: u16) -> Option<Self> {
        match num {
            0x001 => Some(Self::Fflags),
            0x002 => Some(Self::Frm),
            0x003 => Some(Self::Fcsr),
            0xF14 => Some(Self::Mhartid),
            _ => None,
        }
    }

    /// The 12-bit CSR number.
    pub fn number(self) -> u16 {
        match self {
            Self::Fflags => 0x001,
            Self::Frm => 0x002,
            Self::Fcsr => 0x003,
            Self::Mhartid => 0xF14,
        }
    }

    /// The name GNU tools print.
    pub fn name(self) -> &'static str {
        match self {
            Self::Fflags => "fflags",
            Self::Frm => "frm",
            Self::Fcsr => "fcsr",
            Self::Mhartid => "mhartid",
        }
    }

    /// CSR numbers with bits \[11:10\] = 0b11 are read-only by the privileged spec.
    pub fn is_read_only(self) -> bool {
        self.number() >> 10 == 0b11
    }
}

impl fmt::Display for Csr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BranchCond {
    Eq,
    Ne,
    Lt,
    Ge,
    Ltu,
    Geu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoadKind {
    /// `lb`: sign-extended byte.
    Byte,
    /// `lh`: sign-extended halfword.
    Half,
    /// `lw`
    Word,
    /// `lbu`: zero-extended byte.
    ByteUnsigned,
    /// `lhu`: zero-extended halfword.
    HalfUnsigned,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreKind {
    Byte,
    Half,
    Word,
}

/// Register-immediate ALU operations (OP-IMM). For the shifts the immediate is the
/// shift amount 0..=31.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluImmOp {
    Addi,
    Slti,
    Sltiu,
    Xori,
    Ori,
    Andi,
    Slli,
    Srli,
    Srai,
}

/// Register-register operations (OP), including the M extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AluOp {
    Add,
    Sub,
    Sll,
    Slt,
    Sltu,
    Xor,
    Srl,
    Sra,
    Or,
    And,
    Mul,
    Mulh,
    Mulhsu,
    Mulhu,
    /// Signed division; x/0 = −1, INT_MIN/−1 = INT_MIN (no trap).
    Div,
    Divu,
    /// Signed remainder; x%0 = x, INT_MIN%−1 = 0.
    Rem,
    Remu,
}

/// The predecessor or successor set of a `fence` (bits: i=8, o=4, r=2, w=1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FenceSet(pub u8);

impl FenceSet {
    pub const ALL: FenceSet = FenceSet(0b1111);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CsrOp {
    /// `csrrw`/`csrrwi`: write (always), read old value into rd.
    ReadWrite,
    /// `csrrs`/`csrrsi`: set bits (no write when the source is x0 / 0).
    ReadSet,
    /// `csrrc`/`csrrci`: clear bits (no write when the source is x0 / 0).
    ReadClear,
}

/// Source operand of a CSR instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CsrSrc {
    Reg(XReg),
    /// 5-bit zero-extended immediate of the `*i` forms.
    Imm(u8),
}

impl CsrSrc {
    /// True if the instruction writes the CSR (csrrs/csrrc with x0 or 0 do not).
    pub fn is_nonzero(self) -> bool {
        match self {
            CsrSrc::Reg(r) => r != XReg::ZERO,
            CsrSrc::Imm(v) => v != 0,
        }
    }
}

/// Fused multiply-add family (single rounding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FmaOp {
    /// a·b + c
    Madd,
    /// a·b − c
    Msub,
    /// −a·b + c
    Nmsub,
    /// −a·b − c
    Nmadd,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpSignOp {
    /// `fsgnj.s` (alias `fmv.s` when rs1 == rs2)
    Inject,
    /// `fsgnjn.s` (alias `fneg.s`)
    Negate,
    /// `fsgnjx.s` (alias `fabs.s`)
    Xor,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpMinMaxOp {
    Min,
    Max,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FpCmpOp {
    Eq,
    Lt,
    Le,
}

/// Low-precision formats of the device's custom conversions (datasheet §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LpFormat {
    /// bfloat16 (1/8/7), in bits \[15:0\].
    Bf16,
    /// OCP E4M3FN (1/4/3, no Inf, max 448), in bits \[7:0\].
    E4m3,
    /// OCP E5M2 (1/5/2, IEEE-like), in bits \[7:0\].
    E5m2,
    /// OCP FP4 E2M1 (1/2/1, max 6), in bits \[3:0\].
    E2m1,
}

impl LpFormat {
    /// Lower-case name used in mnemonics (`bf16`, `e4m3`, `e5m2`, `e2m1`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Bf16 => "bf16",
            Self::E4m3 => "e4m3",
            Self::E5m2 => "e5m2",
            Self::E2m1 => "e2m1",
        }
    }
}

/// Direction of a custom conversion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LpDirection {
    /// Low-precision (low bits of fs1) → f32, exact. Mnemonic `fcvt.s.<fmt>`.
    Widen,
    /// f32 → low-precision (RNE, saturating except bf16), zero-extended into fd.
    /// Mnemonic `fcvt.<fmt>.s`.
    Narrow,
}

/// One decoded instruction. Offsets are relative to the instruction's own pc.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Instr {
    /// rd = imm (imm already holds bits \[31:12\], low 12 bits zero).
    Lui {
        rd: XReg,
        imm: u32,
    },
    /// rd = pc + imm (imm already holds bits \[31:12\]).
    Auipc {
        rd: XReg,
        imm: u32,
    },
    /// rd = pc + 4; pc += offset.
    Jal {
        rd: XReg,
        offset: i32,
    },
    /// rd = pc + 4; pc = (rs1 + offset) & !1.
    Jalr {
        rd: XReg,
        rs1: XReg,
        offset: i32,
    },
    Branch {
        cond: BranchCond,
        rs1: XReg,
        rs2: XReg,
        offset: i32,
    },
    Load {
        kind: LoadKind,
        rd: XReg,
        rs1: XReg,
        offset: i32,
    },
    Store {
        kind: StoreKind,
        rs1: XReg,
        rs2: XReg,
        offset: i32,
    },
    OpImm {
        op: AluImmOp,
        rd: XReg,
        rs1: XReg,
        imm: i32,
    },
    Op {
        op: AluOp,
        rd: XReg,
        rs1: XReg,
        rs2: XReg,
    },
    /// `fence pred,succ` (fm = 0, rd = rs1 = 0). A no-op in the serial model.
    Fence {
        pred: FenceSet,
        succ: FenceSet,
    },
    /// `fence.tso`
    FenceTso,
    /// `fence.i`: a JIT must drop translations of modified code.
    FenceI,
    Ecall,
    /// Ends the lane on this device.
    Ebreak,
    Csr {
        op: CsrOp,
        rd: XReg,
        csr: Csr,
        src: CsrSrc,
    },
    Flw {
        rd: FReg,
        rs1: XReg,
        offset: i32,
    },
    Fsw {
        rs1: XReg,
        rs2: FReg,
        offset: i32,
    },
    Fma {
        op: FmaOp,
        rd: FReg,
        rs1: FReg,
        rs2: FReg,
        rs3: FReg,
        rm: RoundingMode,
    },
    FpArith {
        op: FpArithOp,
        rd: FReg,
        rs1: FReg,
        rs2: FReg,
        rm: RoundingMode,
    },
    Fsqrt {
        rd: FReg,
        rs1: FReg,
        rm: RoundingMode,
    },
    FpSign {
        op: FpSignOp,
        rd: FReg,
        rs1: FReg,
        rs2: FReg,
    },
    FpMinMax {
        op: FpMinMaxOp,
        rd: FReg,
        rs1: FReg,
        rs2: FReg,
    },
    /// `feq.s`/`flt.s`/`fle.s`: integer result 0/1.
    FpCompare {
        op: FpCmpOp,
        rd: XReg,
        rs1: FReg,
        rs2: FReg,
    },
    Fclass {
        rd: XReg,
        rs1: FReg,
    },
    /// `fcvt.w.s` / `fcvt.wu.s` (saturating, NV on overflow/NaN).
    FcvtToInt {
        rd: XReg,
        rs1: FReg,
        unsigned: bool,
        rm: RoundingMode,
    },
    /// `fcvt.s.w` / `fcvt.s.wu`
    FcvtFromInt {
        rd: FReg,
        rs1: XReg,
        unsigned: bool,
        rm: RoundingMode,
    },
    /// `fmv.x.w`: raw bits f → x.
    FmvToInt {
        rd: XReg,
        rs1: FReg,
    },
    /// `fmv.w.x`: raw bits x → f.
    FmvFromInt {
        rd: FReg,
        rs1: XReg,
    },
    /// Custom conversion (OP-FP, funct7 0x22/0x24/0x26, rs2 selects the op).
    /// `rm_field` is the raw funct3: the device ignores it (always RNE, never faults);
    /// it is kept only so that disassembly stays faithful.
    LpConvert {
        fmt: LpFormat,
        dir: LpDirection,
        rd: FReg,
        rs1: FReg,
        rm_field: u8,
    },
}

impl Instr {
    /// True for instructions after which execution does not simply fall through
    /// to pc + 4 (jumps, branches, ecall, ebreak): basic-block terminators.
    pub fn ends_block(&self) -> bool {
        matches!(
            self,
            Instr::Jal { .. }
                | Instr::Jalr { .. }
                | Instr::Branch { .. }
                | Instr::Ecall
                | Instr::Ebreak
        )
    }

    /// The statically known target of a `jal` or conditional branch at `pc`.
    pub fn direct_target(&self, pc: u32) -> Option<u32> {
        match *self {
            Instr::Jal { offset, .. } | Instr::Branch { offset, .. } => {
                Some(pc.wrapping_add_signed(offset))
            }
            _ => None,
        }
    }
}
