//! Static per-instruction effects a lifter or JIT needs without re-deriving the ISA:
//! which registers are read and written, CSR accesses (Zicsr read/write rules), and
//! the FP-environment dependencies used to skip fflags/frm work in kernels that never
//! observe them (datasheet §6.2 JIT notes).

use super::instr::{Csr, CsrOp, CsrSrc, FReg, Instr, XReg};

/// Registers an instruction reads and writes. `x0` never appears: reading it is the
/// constant 0 and writes to it are discarded, so it needs neither a load nor a store.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RegEffects {
    pub x_src: [Option<XReg>; 2],
    pub x_dst: Option<XReg>,
    pub f_src: [Option<FReg>; 3],
    pub f_dst: Option<FReg>,
}

/// A CSR access after the Zicsr rules: `csrrw`/`csrrwi` with rd = x0 do not read;
/// `csrrs`/`csrrc` (and immediate forms) with a zero source do not write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CsrAccess {
    pub csr: Csr,
    pub reads: bool,
    pub writes: bool,
}

fn xs(r: XReg) -> Option<XReg> {
    (r != XReg::ZERO).then_some(r)
}

impl Instr {
    /// Register reads and writes (see [`RegEffects`]).
    pub fn reg_effects(&self) -> RegEffects {
        let mut e = RegEffects::default();
        match *self {
            Instr::Lui { rd, .. } | Instr::Auipc { rd, .. } | Instr::Jal { rd, .. } => {
                e.x_dst = xs(rd);
            }
            Instr::Jalr { rd, rs1, .. } | Instr::Load { rd, rs1, .. } => {
                e.x_dst = xs(rd);
                e.x_src[0] = xs(rs1);
            }
            Instr::OpImm { rd, rs1, .. } => {
                e.x_dst = xs(rd);
                e.x_src[0] = xs(rs1);
            }
            Instr::Branch { rs1, rs2, .. } | Instr::Store { rs1, rs2, .. } => {
                e.x_src = [xs(rs1), xs(rs2)];
            }
            Instr::Op { rd, rs1, rs2, .. } => {
                e.x_dst = xs(rd);
                e.x_src = [xs(rs1), xs(rs2)];
            }
            Instr::Fence { .. }
            | Instr::FenceTso
            | Instr::FenceI
            | Instr::Ecall
            | Instr::Ebreak => {}
            Instr::Csr { rd, src, .. } => {
                e.x_dst = xs(rd);
                if let CsrSrc::Reg(r) = src {
                    e.x_src[0] = xs(r);
                }
            }
            Instr::Flw { rd, rs1, .. } => {
                e.f_dst = Some(rd);
                e.x_src[0] = xs(rs1);
            }
            Instr::Fsw { rs1, rs2, .. } => {
                e.x_src[0] = xs(rs1);
                e.f_src[0] = Some(rs2);
            }
            Instr::Fma {
                rd, rs1, rs2, rs3, ..
            } => {
                e.f_dst = Some(rd);
                e.f_src = [Some(rs1), Some(rs2), Some(rs3)];
            }
            Instr::FpArith { rd, rs1, rs2, .. }
            | Instr::FpSign { rd, rs1, rs2, .. }
            | Instr::FpMinMax { rd, rs1, rs2, .. } => {
                e.f_dst = Some(rd);
                e.f_src[..2].copy_from_slice(&[Some(rs1), Some(rs2)]);
            }
            Instr::Fsqrt { rd, rs1, .. } | Instr::LpConvert { rd, rs1, .. } => {
                e.f_dst = Some(rd);
                e.f_src[0] = Some(rs1);
            }
            Instr::FpCompare { rd, rs1, rs2, .. } => {
                e.x_dst = xs(rd);
                e.f_src[..2].copy_from_slice(&[Some(rs1), Some(rs2)]);
            }
            Instr::Fclass { rd, rs1 }
            | Instr::FmvToInt { rd, rs1 }
            | Instr::FcvtToInt { rd, rs1, .. } => {
                e.x_dst = xs(rd);
                e.f_src[0] = Some(rs1);
            }
            Instr::FmvFromInt { rd, rs1 } | Instr::FcvtFromInt { rd, rs1, .. } => {
                e.f_dst = Some(rd);
                e.x_src[0] = xs(rs1);
            }
        }
        e
    }

    /// The CSR access of a Zicsr instruction, if any.
    pub fn csr_access(&self) -> Option<CsrAccess> {
        match *self {
            Instr::Csr { op, rd, csr, src } => Some(match op {
                CsrOp::ReadWrite => CsrAccess {
                    csr,
                    reads: rd != XReg::ZERO,
                    writes: true,
                },
                CsrOp::ReadSet | CsrOp::ReadClear => CsrAccess {
                    csr,
                    reads: true,
                    writes: src.is_nonzero(),
                },
            }),
            _ => None,
        }
    }

    /// True if the result depends on `fcsr.frm` (rounding mode `dyn`). The custom
    /// conversions ignore rm and never do.
    pub fn reads_frm(&self) -> bool {
        use super::instr::RoundingMode::Dyn;
        match *self {
            Instr::Fma { rm, .. }
            | Instr::FpArith { rm, .. }
            | Instr::Fsqrt { rm, .. }
            | Instr::FcvtToInt { rm, .. }
            | Instr::FcvtFromInt { rm, .. } => rm == Dyn,
            _ => false,
        }
    }

    /// True if the instruction may accrue bits into `fflags` (conservative: every
    /// FP computation, compare, min/max, conversion, custom conversion; not moves,
    /// sign injection, fclass, loads or stores).
    pub fn may_set_fflags(&self) -> bool {
        matches!(
            self,
            Instr::Fma { .. }
                | Instr::FpArith { .. }
                | Instr::Fsqrt { .. }
                | Instr::FpMinMax { .. }
                | Instr::FpCompare { .. }
                | Instr::FcvtToInt { .. }
                | Instr::FcvtFromInt { .. }
                | Instr::LpConvert { .. }
        )
    }
}
