//! GNU objdump (binutils 2.40) compatible text for [`Instr`].
//!
//! Output is exactly objdump's instruction column: mnemonic, a tab, comma-separated
//! operands, and — like objdump — a trailing ` # 0x...` comment with the address that
//! a `lui`/`auipc` + `addi`/load/store/`jalr` pair computes. That comment depends on
//! earlier instructions, so [`Disassembler`] keeps objdump's per-register state; a
//! fresh `Disassembler` per word gives what objdump prints for a file holding only
//! that word.
//!
//! Custom conversions, unknown to objdump (it prints `.4byte`), use the names
//! `fcvt.<fmt>.s` (narrow f32 → fmt) and `fcvt.s.<fmt>` (widen fmt → f32) with
//! fmt ∈ {bf16, e4m3, e5m2, e2m1}, operands `fd,fs1`, and a trailing rounding-mode
//! operand only when the (ignored) rm field is non-zero.

use super::decode::decode;
use super::error::DecodeError;
use super::instr::{
    AluImmOp, AluOp, BranchCond, Csr, CsrOp, CsrSrc, FReg, FenceSet, FmaOp, FpArithOp, FpCmpOp,
    FpMinMaxOp, FpSignOp, Instr, LoadKind, LpDirection, RoundingMode, StoreKind, XReg,
};

/// Output flavour, mirroring objdump's `-M` options.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DisasmOptions {
    /// Print pseudo-instructions (`li`, `mv`, `ret`, `csrr`, ...) as objdump does by
    /// default; `false` = `-M no-aliases`.
    pub aliases: bool,
    /// `x5`/`f10` instead of ABI names (`-M numeric`).
    pub numeric_regs: bool,
}

impl DisasmOptions {
    /// `riscv64-unknown-elf-objdump -d` defaults.
    pub const OBJDUMP: Self = Self {
        aliases: true,
        numeric_regs: false,
    };
    /// `-M no-aliases`.
    pub const NO_ALIASES: Self = Self {
        aliases: false,
        numeric_regs: false,
    };
}

impl Default for DisasmOptions {
    fn default() -> Self {
        Self::OBJDUMP
    }
}

const X_ABI: [&str; 32] = [
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4",
    "a5", "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4",
    "t5", "t6",
];
const X_NUM: [&str; 32] = [
    "x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13", "x14",
    "x15", "x16", "x17", "x18", "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27",
    "x28", "x29", "x30", "x31",
];
const F_ABI: [&str; 32] = [
    "ft0", "ft1", "ft2", "ft3", "ft4", "ft5", "ft6", "ft7", "fs0", "fs1", "fa0", "fa1", "fa2",
    "fa3", "fa4", "fa5", "fa6", "fa7", "fs2", "fs3", "fs4", "fs5", "fs6", "fs7", "fs8", "fs9",
    "fs10", "fs11", "ft8", "ft9", "ft10", "ft11",
];
const F_NUM: [&str; 32] = [
    "f0", "f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12", "f13", "f14",
    "f15", "f16", "f17", "f18", "f19", "f20", "f21", "f22", "f23", "f24", "f25", "f26", "f27",
    "f28", "f29", "f30", "f31",
];
/// objdump's names for fence sets; 0 prints as "unknown".
const FENCE_SETS: [&str; 16] = [
    "unknown", "w", "r", "rw", "o", "ow", "or", "orw", "i", "iw", "ir", "irw", "io", "iow", "ior",
    "iorw",
];
/// objdump's rm names by raw field value (5 and 6 print as "unknown").
const RM_NAMES: [&str; 8] = [
    "rne", "rtz", "rdn", "rup", "rmm", "unknown", "unknown", "dyn",
];

/// Stateful disassembler reproducing objdump's `# address` comments.
#[derive(Clone, Debug)]
pub struct Disassembler {
    opts: DisasmOptions,
    /// Value last put into each register by `lui`/`auipc`, until an address use
    /// consumes it (objdump's `hi_addr`).
    hi_addr: [Option<u32>; 32],
}

/// How many times objdump evaluates the address of a `jalr` for a given operand
/// template: `s` alone once, `o(s)` three times (`o`, then `j` and `s` for JALR).
#[derive(Clone, Copy)]
enum JalrForm {
    NoAddr,
    RegOnly,
    OffsetReg,
}

impl Disassembler {
    pub fn new(opts: DisasmOptions) -> Self {
        Self {
            opts,
            hi_addr: [None; 32],
        }
    }

    pub fn options(&self) -> DisasmOptions {
        self.opts
    }

    /// Decodes and formats one word at `pc`, updating the address-comment state.
    pub fn disasm_word(&mut self, word: u32, pc: u32) -> Result<String, DecodeError> {
        let instr = decode(word, pc)?;
        Ok(self.format(&instr, pc))
    }

    /// Formats a decoded instruction at `pc`, updating the address-comment state.
    pub fn format(&mut self, instr: &Instr, pc: u32) -> String {
        let mut line = Line::default();
        self.render(instr, pc, &mut line);
        let mut text = line.mnemonic.to_string();
        if !line.operands.is_empty() {
            text.push('\t');
            text.push_str(&line.operands);
        }
        if let Some(addr) = line.comment {
            text.push_str(&format!(" # {addr:#x}"));
        }
        text
    }

    fn x(&self, r: XReg) -> &'static str {
        let table = if self.opts.numeric_regs {
            &X_NUM
        } else {
            &X_ABI
        };
        table[r.num() & 31]
    }

    fn f(&self, r: FReg) -> &'static str {
        let table = if self.opts.numeric_regs {
            &F_NUM
        } else {
            &F_ABI
        };
        table[r.num() & 31]
    }

    /// objdump's `maybe_print_address`: a pending `lui`/`auipc` value of the base
    /// register (consumed), else tp- or x0-relative offsets are shown as absolute.
    fn maybe_address(&mut self, base: XReg, offset: i32, out: &mut Option<u32>) {
        let b = base.num() & 31;
        if let Some(hi) = self.hi_addr[b].take() {
            let hi = if b != 0 { hi } else { 0 };
            *out = Some(hi.wrapping_add_signed(offset));
        } else if base == XReg::TP || base == XReg::ZERO {
            *out = Some(offset as u32);
        }
    }

    fn render(&mut self, instr: &Instr, pc: u32, l: &mut Line) {
        let aliases = self.opts.aliases;
        match *instr {
            Instr::Lui { rd, imm } => {
                self.hi_addr[rd.num() & 31] = Some(imm);
                l.set("lui", format!("{},{:#x}", self.x(rd), imm >> 12));
            }
            Instr::Auipc { rd, imm } => {
                self.hi_addr[rd.num() & 31] = Some(pc.wrapping_add(imm));
                l.set("auipc", format!("{},{:#x}", self.x(rd), imm >> 12));
            }
            Instr::Jal { rd, offset } => {
                let target = pc.wrapping_add_signed(offset);
                match rd.0 {
                    0 if aliases => l.set("j", format!("{target:#x}")),
                    1 if aliases => l.set("jal", format!("{target:#x}")),
                    _ => l.set("jal", format!("{},{target:#x}", self.x(rd))),
                }
            }
            Instr::Jalr { rd, rs1, offset } => self.render_jalr(rd, rs1, offset, l),
            Instr::Branch {
                cond,
                rs1,
                rs2,
                offset,
            } => self.render_branch(cond, rs1, rs2, pc.wrapping_add_signed(offset), l),
            Instr::Load {
                kind,
                rd,
                rs1,
                offset,
            } => {
                let mn = match kind {
                    LoadKind::Byte => "lb",
                    LoadKind::Half => "lh",
                    LoadKind::Word => "lw",
                    LoadKind::ByteUnsigned => "lbu",
                    LoadKind::HalfUnsigned => "lhu",
                };
                self.maybe_address(rs1, offset, &mut l.comment);
                l.set(mn, format!("{},{offset}({})", self.x(rd), self.x(rs1)));
            }
            Instr::Store {
                kind,
                rs1,
                rs2,
                offset,
            } => {
                let mn = match kind {
                    StoreKind::Byte => "sb",
                    StoreKind::Half => "sh",
                    StoreKind::Word => "sw",
                };
                self.maybe_address(rs1, offset, &mut l.comment);
                l.set(mn, format!("{},{offset}({})", self.x(rs2), self.x(rs1)));
            }
            Instr::OpImm { op, rd, rs1, imm } => self.render_op_imm(op, rd, rs1, imm, l),
            Instr::Op { op, rd, rs1, rs2 } => self.render_op(op, rd, rs1, rs2, l),
            Instr::Fence { pred, succ } => {
                if aliases && pred == FenceSet::ALL && succ == FenceSet::ALL {
                    l.set("fence", String::new());
                } else {
                    let name = |s: FenceSet| FENCE_SETS[usize::from(s.0 & 15)];
                    l.set("fence", format!("{},{}", name(pred), name(succ)));
                }
            }
            Instr::FenceTso => l.set("fence.tso", String::new()),
            Instr::FenceI => l.set("fence.i", String::new()),
            Instr::Ecall => l.set("ecall", String::new()),
            Instr::Ebreak => l.set("ebreak", String::new()),
            Instr::Csr { op, rd, csr, src } => self.render_csr(op, rd, csr, src, l),
            Instr::Flw { rd, rs1, offset } => {
                self.maybe_address(rs1, offset, &mut l.comment);
                l.set("flw", format!("{},{offset}({})", self.f(rd), self.x(rs1)));
            }
            Instr::Fsw { rs1, rs2, offset } => {
                self.maybe_address(rs1, offset, &mut l.comment);
                l.set("fsw", format!("{},{offset}({})", self.f(rs2), self.x(rs1)));
            }
            Instr::Fma {
                op,
                rd,
                rs1,
                rs2,
                rs3,
                rm,
            } => {
                let mn = match op {
                    FmaOp::Madd => "fmadd.s",
                    FmaOp::Msub => "fmsub.s",
                    FmaOp::Nmsub => "fnmsub.s",
                    FmaOp::Nmadd => "fnmadd.s",
                };
                let regs = [rd, rs1, rs2, rs3].map(|r| self.f(r)).join(",");
                l.set(mn, with_rm(regs, rm));
            }
            Instr::FpArith {
                op,
                rd,
                rs1,
                rs2,
                rm,
            } => {
                let mn = match op {
                    FpArithOp::Add => "fadd.s",
                    FpArithOp::Sub => "fsub.s",
                    FpArithOp::Mul => "fmul.s",
                    FpArithOp::Div => "fdiv.s",
                };
                let regs = [rd, rs1, rs2].map(|r| self.f(r)).join(",");
                l.set(mn, with_rm(regs, rm));
            }
            Instr::Fsqrt { rd, rs1, rm } => {
                let regs = format!("{},{}", self.f(rd), self.f(rs1));
                l.set("fsqrt.s", with_rm(regs, rm));
            }
            Instr::FpSign { op, rd, rs1, rs2 } => {
                let (mn, alias) = match op {
                    FpSignOp::Inject => ("fsgnj.s", "fmv.s"),
                    FpSignOp::Negate => ("fsgnjn.s", "fneg.s"),
                    FpSignOp::Xor => ("fsgnjx.s", "fabs.s"),
                };
                if aliases && rs1 == rs2 {
                    l.set(alias, format!("{},{}", self.f(rd), self.f(rs1)));
                } else {
                    l.set(mn, [rd, rs1, rs2].map(|r| self.f(r)).join(","));
                }
            }
            Instr::FpMinMax { op, rd, rs1, rs2 } => {
                let mn = match op {
                    FpMinMaxOp::Min => "fmin.s",
                    FpMinMaxOp::Max => "fmax.s",
                };
                l.set(mn, [rd, rs1, rs2].map(|r| self.f(r)).join(","));
            }
            Instr::FpCompare { op, rd, rs1, rs2 } => {
                let mn = match op {
                    FpCmpOp::Eq => "feq.s",
                    FpCmpOp::Lt => "flt.s",
                    FpCmpOp::Le => "fle.s",
                };
                l.set(
                    mn,
                    format!("{},{},{}", self.x(rd), self.f(rs1), self.f(rs2)),
                );
            }
            Instr::Fclass { rd, rs1 } => {
                l.set("fclass.s", format!("{},{}", self.x(rd), self.f(rs1)));
            }
            Instr::FcvtToInt {
                rd,
                rs1,
                unsigned,
                rm,
            } => {
                let mn = if unsigned { "fcvt.wu.s" } else { "fcvt.w.s" };
                let regs = format!("{},{}", self.x(rd), self.f(rs1));
                l.set(mn, with_rm(regs, rm));
            }
            Instr::FcvtFromInt {
                rd,
                rs1,
                unsigned,
                rm,
            } => {
                let mn = if unsigned { "fcvt.s.wu" } else { "fcvt.s.w" };
                let regs = format!("{},{}", self.f(rd), self.x(rs1));
                l.set(mn, with_rm(regs, rm));
            }
            Instr::FmvToInt { rd, rs1 } => {
                l.set("fmv.x.w", format!("{},{}", self.x(rd), self.f(rs1)));
            }
            Instr::FmvFromInt { rd, rs1 } => {
                l.set("fmv.w.x", format!("{},{}", self.f(rd), self.x(rs1)));
            }
            Instr::LpConvert {
                fmt,
                dir,
                rd,
                rs1,
                rm_field,
            } => {
                let mn = match dir {
                    LpDirection::Narrow => format!("fcvt.{}.s", fmt.name()),
                    LpDirection::Widen => format!("fcvt.s.{}", fmt.name()),
                };
                let mut ops = format!("{},{}", self.f(rd), self.f(rs1));
                if rm_field != 0 {
                    ops.push(',');
                    ops.push_str(RM_NAMES[usize::from(rm_field & 7)]);
                }
                l.mnemonic = Mnemonic::Owned(mn);
                l.operands = ops;
            }
        }
    }

    fn render_jalr(&mut self, rd: XReg, rs1: XReg, offset: i32, l: &mut Line) {
        let (x_rd, x_rs1) = (self.x(rd), self.x(rs1));
        let (mn, ops, form) = if !self.opts.aliases {
            (
                "jalr",
                format!("{x_rd},{offset}({x_rs1})"),
                JalrForm::OffsetReg,
            )
        } else {
            match (rd.0, offset) {
                (0, 0) if rs1 == XReg::RA => ("ret", String::new(), JalrForm::NoAddr),
                (0, 0) => ("jr", x_rs1.to_string(), JalrForm::RegOnly),
                (0, _) => ("jr", format!("{offset}({x_rs1})"), JalrForm::OffsetReg),
                (1, 0) => ("jalr", x_rs1.to_string(), JalrForm::RegOnly),
                (1, _) => ("jalr", format!("{offset}({x_rs1})"), JalrForm::OffsetReg),
                (_, 0) => ("jalr", format!("{x_rd},{x_rs1}"), JalrForm::RegOnly),
                _ => (
                    "jalr",
                    format!("{x_rd},{offset}({x_rs1})"),
                    JalrForm::OffsetReg,
                ),
            }
        };
        // objdump re-evaluates the address once per address-bearing operand letter;
        // a consumed lui value can be overridden by a later tp/x0-relative evaluation.
        let evaluations = match form {
            JalrForm::NoAddr => 0,
            JalrForm::RegOnly => 1,
            JalrForm::OffsetReg => 3,
        };
        for _ in 0..evaluations {
            self.maybe_address(rs1, offset, &mut l.comment);
        }
        l.set(mn, ops);
    }

    fn render_branch(&self, cond: BranchCond, rs1: XReg, rs2: XReg, target: u32, l: &mut Line) {
        let (s1, s2) = (self.x(rs1), self.x(rs2));
        let zero = XReg::ZERO;
        let one = |mn, r: &str| (mn, format!("{r},{target:#x}"));
        let (mn, ops) = match cond {
            _ if !self.opts.aliases => (branch_name(cond), format!("{s1},{s2},{target:#x}")),
            BranchCond::Eq if rs2 == zero => one("beqz", s1),
            BranchCond::Ne if rs2 == zero => one("bnez", s1),
            BranchCond::Lt if rs2 == zero => one("bltz", s1),
            BranchCond::Lt if rs1 == zero => one("bgtz", s2),
            BranchCond::Ge if rs1 == zero => one("blez", s2),
            BranchCond::Ge if rs2 == zero => one("bgez", s1),
            _ => (branch_name(cond), format!("{s1},{s2},{target:#x}")),
        };
        l.set(mn, ops);
    }

    fn render_op_imm(&mut self, op: AluImmOp, rd: XReg, rs1: XReg, imm: i32, l: &mut Line) {
        let (d, s) = (self.x(rd), self.x(rs1));
        // objdump shows an addi result address only for a non-x0 base.
        if op == AluImmOp::Addi && rs1 != XReg::ZERO && (!self.opts.aliases || imm != 0) {
            self.maybe_address(rs1, imm, &mut l.comment);
        }
        let shift = |mn| (mn, format!("{d},{s},{imm:#x}"));
        let (mn, ops) = if self.opts.aliases {
            match op {
                AluImmOp::Addi if rd == XReg::ZERO && rs1 == XReg::ZERO && imm == 0 => {
                    ("nop", String::new())
                }
                AluImmOp::Addi if rs1 == XReg::ZERO => ("li", format!("{d},{imm}")),
                AluImmOp::Addi if imm == 0 => ("mv", format!("{d},{s}")),
                AluImmOp::Addi => ("add", format!("{d},{s},{imm}")),
                AluImmOp::Slti => ("slti", format!("{d},{s},{imm}")),
                AluImmOp::Sltiu if imm == 1 => ("seqz", format!("{d},{s}")),
                AluImmOp::Sltiu => ("sltiu", format!("{d},{s},{imm}")),
                AluImmOp::Xori if imm == -1 => ("not", format!("{d},{s}")),
                AluImmOp::Xori => ("xor", format!("{d},{s},{imm}")),
                AluImmOp::Ori => ("or", format!("{d},{s},{imm}")),
                AluImmOp::Andi if imm == 255 => ("zext.b", format!("{d},{s}")),
                AluImmOp::Andi => ("and", format!("{d},{s},{imm}")),
                AluImmOp::Slli => shift("sll"),
                AluImmOp::Srli => shift("srl"),
                AluImmOp::Srai => shift("sra"),
            }
        } else {
            match op {
                AluImmOp::Slli => shift("slli"),
                AluImmOp::Srli => shift("srli"),
                AluImmOp::Srai => shift("srai"),
                _ => (op_imm_name(op), format!("{d},{s},{imm}")),
            }
        };
        l.set(mn, ops);
    }

    fn render_op(&self, op: AluOp, rd: XReg, rs1: XReg, rs2: XReg, l: &mut Line) {
        let (d, s1, s2) = (self.x(rd), self.x(rs1), self.x(rs2));
        let zero = XReg::ZERO;
        let (mn, ops) = match op {
            _ if !self.opts.aliases => (op_name(op), format!("{d},{s1},{s2}")),
            AluOp::Sub if rs1 == zero => ("neg", format!("{d},{s2}")),
            AluOp::Sltu if rs1 == zero => ("snez", format!("{d},{s2}")),
            AluOp::Slt if rs2 == zero => ("sltz", format!("{d},{s1}")),
            AluOp::Slt if rs1 == zero => ("sgtz", format!("{d},{s2}")),
            _ => (op_name(op), format!("{d},{s1},{s2}")),
        };
        l.set(mn, ops);
    }

    fn render_csr(&self, op: CsrOp, rd: XReg, csr: Csr, src: CsrSrc, l: &mut Line) {
        let (d, c) = (self.x(rd), csr.name());
        let src_text = match src {
            CsrSrc::Reg(r) => self.x(r).to_string(),
            CsrSrc::Imm(v) => v.to_string(),
        };
        let imm = matches!(src, CsrSrc::Imm(_));
        let canonical = match (op, imm) {
            (CsrOp::ReadWrite, false) => "csrrw",
            (CsrOp::ReadSet, false) => "csrrs",
            (CsrOp::ReadClear, false) => "csrrc",
            (CsrOp::ReadWrite, true) => "csrrwi",
            (CsrOp::ReadSet, true) => "csrrsi",
            (CsrOp::ReadClear, true) => "csrrci",
        };
        if !self.opts.aliases {
            l.set(canonical, format!("{d},{c},{src_text}"));
            return;
        }
        let rd0 = rd == XReg::ZERO;
        // objdump's table order: F-extension CSR aliases first, then csrr/csrw/csrs/csrc
        // (whose immediate forms reuse the register-form names), then the real ones.
        let (mn, ops) = match (op, src, csr) {
            (CsrOp::ReadWrite, CsrSrc::Reg(_), Csr::Fflags | Csr::Frm | Csr::Fcsr) => {
                let mn = match csr {
                    Csr::Fflags => "fsflags",
                    Csr::Frm => "fsrm",
                    _ => "fscsr",
                };
                if rd0 {
                    (mn, src_text)
                } else {
                    (mn, format!("{d},{src_text}"))
                }
            }
            (CsrOp::ReadSet, CsrSrc::Reg(XReg::ZERO), _) => match csr {
                Csr::Fflags => ("frflags", d.to_string()),
                Csr::Frm => ("frrm", d.to_string()),
                Csr::Fcsr => ("frcsr", d.to_string()),
                Csr::Mhartid => ("csrr", format!("{d},{c}")),
            },
            (CsrOp::ReadWrite, CsrSrc::Imm(_), Csr::Fflags) => {
                ("fsflagsi", format!("{d},{src_text}"))
            }
            (CsrOp::ReadWrite, CsrSrc::Imm(_), Csr::Frm) => ("fsrmi", format!("{d},{src_text}")),
            _ => {
                let (short, long) = match op {
                    CsrOp::ReadWrite => ("csrw", "csrrw"),
                    CsrOp::ReadSet => ("csrs", "csrrs"),
                    CsrOp::ReadClear => ("csrc", "csrrc"),
                };
                if rd0 {
                    (short, format!("{c},{src_text}"))
                } else {
                    (long, format!("{d},{c},{src_text}"))
                }
            }
        };
        l.set(mn, ops);
    }
}

impl Default for Disassembler {
    fn default() -> Self {
        Self::new(DisasmOptions::OBJDUMP)
    }
}

/// Mnemonic text: almost always static, owned only for composed custom names.
#[derive(Default)]
enum Mnemonic {
    #[default]
    Empty,
    Static(&'static str),
    Owned(String),
}

impl std::fmt::Display for Mnemonic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Mnemonic::Empty => Ok(()),
            Mnemonic::Static(s) => f.write_str(s),
            Mnemonic::Owned(s) => f.write_str(s),
        }
    }
}

#[derive(Default)]
struct Line {
    mnemonic: Mnemonic,
    operands: String,
    comment: Option<u32>,
}

impl Line {
    fn set(&mut self, mnemonic: &'static str, operands: String) {
        self.mnemonic = Mnemonic::Static(mnemonic);
        self.operands = operands;
    }
}

/// objdump omits the rounding mode when it is `dyn`.
fn with_rm(mut regs: String, rm: RoundingMode) -> String {
    if rm != RoundingMode::Dyn {
        regs.push(',');
        regs.push_str(rm.name());
    }
    regs
}

fn branch_name(cond: BranchCond) -> &'static str {
    match cond {
        BranchCond::Eq => "beq",
        BranchCond::Ne => "bne",
        BranchCond::Lt => "blt",
        BranchCond::Ge => "bge",
        BranchCond::Ltu => "bltu",
        BranchCond::Geu => "bgeu",
    }
}

fn op_imm_name(op: AluImmOp) -> &'static str {
    match op {
        AluImmOp::Addi => "addi",
        AluImmOp::Slti => "slti",
        AluImmOp::Sltiu => "sltiu",
        AluImmOp::Xori => "xori",
        AluImmOp::Ori => "ori",
        AluImmOp::Andi => "andi",
        AluImmOp::Slli => "slli",
        AluImmOp::Srli => "srli",
        AluImmOp::Srai => "srai",
    }
}

fn op_name(op: AluOp) -> &'static str {
    match op {
        AluOp::Add => "add",
        AluOp::Sub => "sub",
        AluOp::Sll => "sll",
        AluOp::Slt => "slt",
        AluOp::Sltu => "sltu",
        AluOp::Xor => "xor",
        AluOp::Srl => "srl",
        AluOp::Sra => "sra",
        AluOp::Or => "or",
        AluOp::And => "and",
        AluOp::Mul => "mul",
        AluOp::Mulh => "mulh",
        AluOp::Mulhsu => "mulhsu",
        AluOp::Mulhu => "mulhu",
        AluOp::Div => "div",
        AluOp::Divu => "divu",
        AluOp::Rem => "rem",
        AluOp::Remu => "remu",
    }
}
