//! Random RV32IMF programs for the differential oracle.
//!
//! A program is a prologue (sets fcsr, f0..f31 and x1..x31 from interesting
//! values), body items, and `jal x0, STUB`. Items keep branches symbolic (skip counts in
//! items) so that the shrinker can delete items and re-assemble. Loads and stores
//! touch only the program's own data region; branches and jumps only go forward
//! except in counted loops, so every program terminates. Excluded on purpose:
//! ecall/ebreak, mhartid and the custom conversions (qemu-user has none of them),
//! and any write that could leave frm invalid.

use wavejit_frontend::rv32::*;

use super::rng::Rng;

/// Data region of each program: DATA_BASE + index * DATA_SIZE.
pub const DATA_BASE: u32 = 0x10_0000;
pub const DATA_SIZE: u32 = 256;
/// The shared exit stub (qemu: save + write + next; wavejit: ebreak).
pub const STUB: u32 = 0x1000;

#[derive(Clone, Debug)]
pub enum Item {
    Plain(Vec<Instr>),
    /// Conditional branch over the next `skip` items.
    Branch {
        cond: BranchCond,
        rs1: XReg,
        rs2: XReg,
        skip: usize,
    },
    /// `jal rd` over the next `skip` items.
    Jal {
        rd: XReg,
        skip: usize,
    },
    /// `auipc rx, 0 ; jalr rd, off(rx)` landing after the next `skip` items.
    Jalr {
        rd: XReg,
        rx: XReg,
        skip: usize,
    },
    /// `jal rl, +8 ; jal x0, +8 ; jalr x0, 0(rl)`: a call whose return goes
    /// through the lifter's jalr hub (rl is not a block-local constant there).
    CallRet {
        rl: XReg,
    },
    /// `addi rc, x0, n ; body ; addi rc, rc, -1 ; bne rc, x0, body`.
    Loop {
        rc: XReg,
        n: i32,
        body: Vec<Instr>,
    },
}

#[derive(Clone, Debug)]
pub struct Program {
    pub index: u32,
    pub prologue: Vec<Instr>,
    pub items: Vec<Item>,
}

const F_POOL: [u32; 26] = [
    0x0000_0000,
    0x8000_0000,
    0x3F80_0000,
    0xBF80_0000,
    0x3F00_0000,
    0x4000_0000,
    0x4040_0000,
    0x3EAA_AAAB,
    0x7F80_0000,
    0xFF80_0000,
    0x7FC0_0000,
    0x7FC1_2345,
    0x7F80_0001,
    0xFF80_0123,
    0x0000_0001,
    0x007F_FFFF,
    0x0080_0000,
    0x7F7F_FFFF,
    0xFF7F_FFFF,
    0x4B80_0000,
    0x4F00_0000,
    0xCF00_0000,
    0x4F80_0000,
    0x3DCC_CCCD,
    0x4020_0000,
    0xC020_0000,
];

const X_POOL: [u32; 10] = [
    0,
    1,
    0xFFFF_FFFF,
    0x7FFF_FFFF,
    0x8000_0000,
    2,
    3,
    0xFFFF_FFFE,
    31,
    0x8000_0001,
];

fn x(r: u32) -> XReg {
    XReg(r as u8)
}

fn f(r: u32) -> FReg {
    FReg(r as u8)
}

/// `lui`+`addi` pair that loads any 32-bit value.
pub fn li(rd: XReg, v: u32) -> [Instr; 2] {
    let hi = v.wrapping_add(0x800) & !0xfff;
    let lo = v.wrapping_sub(hi) as i32;
    [
        Instr::Lui { rd, imm: hi },
        Instr::OpImm {
            op: AluImmOp::Addi,
            rd,
            rs1: rd,
            imm: lo,
        },
    ]
}

fn int_value(rng: &mut Rng) -> u32 {
    match rng.below(4) {
        0 => rng.pick(&X_POOL),
        1 => rng.below(64).wrapping_sub(32),
        _ => rng.next_u32(),
    }
}

fn float_value(rng: &mut Rng) -> u32 {
    match rng.below(5) {
        0 | 1 => rng.pick(&F_POOL),
        2 => {
            // A small integer or simple fraction.
            let v = (rng.below(200) as f32 - 100.0) / rng.pick(&[1.0f32, 2.0, 4.0, 3.0, 10.0]);
            v.to_bits()
        }
        3 => rng.pick(&F_POOL) ^ rng.below(4),
        _ => rng.next_u32(),
    }
}

fn rm(rng: &mut Rng) -> RoundingMode {
    rng.pick(&[
        RoundingMode::Rne,
        RoundingMode::Rtz,
        RoundingMode::Rdn,
        RoundingMode::Rup,
        RoundingMode::Rmm,
        RoundingMode::Dyn,
        RoundingMode::Dyn,
    ])
}

fn prologue(rng: &mut Rng) -> Vec<Instr> {
    let mut p = Vec::new();
    // fcsr: valid frm, random flags.
    let fcsr = rng.below(5) << 5 | rng.below(32);
    p.extend(li(x(5), fcsr));
    p.push(Instr::Csr {
        op: CsrOp::ReadWrite,
        rd: XReg::ZERO,
        csr: Csr::Fcsr,
        src: CsrSrc::Reg(x(5)),
    });
    for r in 0..32 {
        p.extend(li(x(5), float_value(rng)));
        p.push(Instr::FmvFromInt {
            rd: f(r),
            rs1: x(5),
        });
    }
    for r in 1..32 {
        p.extend(li(x(r), int_value(rng)));
    }
    p
}

fn any_x(rng: &mut Rng) -> XReg {
    x(rng.below(32))
}

fn any_f(rng: &mut Rng) -> FReg {
    f(rng.below(32))
}

/// One straight-line instruction group (no control flow); `avoid` is never
/// written (a loop counter).
fn plain(rng: &mut Rng, data: u32, avoid: Option<XReg>) -> Vec<Instr> {
    let mut rd = any_x(rng);
    while Some(rd) == avoid {
        rd = any_x(rng);
    }
    let (rs1, rs2) = (any_x(rng), any_x(rng));
    let (fd, fs1, fs2, fs3) = (any_f(rng), any_f(rng), any_f(rng), any_f(rng));
    match rng.below(20) {
        0..=2 => {
            let op = rng.pick(&[
                AluImmOp::Addi,
                AluImmOp::Slti,
                AluImmOp::Sltiu,
                AluImmOp::Xori,
                AluImmOp::Ori,
                AluImmOp::Andi,
                AluImmOp::Slli,
                AluImmOp::Srli,
                AluImmOp::Srai,
            ]);
            let imm = if matches!(op, AluImmOp::Slli | AluImmOp::Srli | AluImmOp::Srai) {
                rng.below(32) as i32
            } else {
                rng.below(4096) as i32 - 2048
            };
            vec![Instr::OpImm { op, rd, rs1, imm }]
        }
        3..=5 => {
            let op = rng.pick(&[
                AluOp::Add,
                AluOp::Sub,
                AluOp::Sll,
                AluOp::Slt,
                AluOp::Sltu,
                AluOp::Xor,
                AluOp::Srl,
                AluOp::Sra,
                AluOp::Or,
                AluOp::And,
                AluOp::Mul,
                AluOp::Mulh,
                AluOp::Mulhsu,
                AluOp::Mulhu,
                AluOp::Div,
                AluOp::Divu,
                AluOp::Rem,
                AluOp::Remu,
            ]);
            vec![Instr::Op { op, rd, rs1, rs2 }]
        }
        6 => {
            if rng.chance(50) {
                vec![Instr::Lui {
                    rd,
                    imm: rng.next_u32() & !0xfff,
                }]
            } else {
                vec![Instr::Auipc {
                    rd,
                    imm: rng.next_u32() & !0xfff,
                }]
            }
        }
        7 | 8 => {
            // Memory: base register = address of the access, mostly aligned.
            let mut base = any_x(rng);
            while base.0 == 0 || Some(base) == avoid {
                base = any_x(rng);
            }
            let store = rng.chance(50);
            let fp = rng.chance(30);
            let (kind_bytes, load_kind, store_kind) = match rng.below(5) {
                0 => (1, LoadKind::Byte, StoreKind::Byte),
                1 => (1, LoadKind::ByteUnsigned, StoreKind::Byte),
                2 => (2, LoadKind::Half, StoreKind::Half),
                3 => (2, LoadKind::HalfUnsigned, StoreKind::Half),
                _ => (4, LoadKind::Word, StoreKind::Word),
            };
            let bytes = if fp { 4 } else { kind_bytes };
            let mut off = rng.below(DATA_SIZE - bytes + 1);
            if !rng.chance(15) {
                off -= off % bytes;
            }
            let addr = data + off;
            let disp = rng.below(64) as i32 - 32;
            let mut v = li(base, addr.wrapping_sub(disp as u32)).to_vec();
            v.push(match (store, fp) {
                (true, true) => Instr::Fsw {
                    rs1: base,
                    rs2: fs1,
                    offset: disp,
                },
                (false, true) => Instr::Flw {
                    rd: fd,
                    rs1: base,
                    offset: disp,
                },
                (true, false) => Instr::Store {
                    kind: store_kind,
                    rs1: base,
                    rs2,
                    offset: disp,
                },
                (false, false) => Instr::Load {
                    kind: load_kind,
                    rd,
                    rs1: base,
                    offset: disp,
                },
            });
            v
        }
        9 | 10 => {
            let op = rng.pick(&[
                FpArithOp::Add,
                FpArithOp::Sub,
                FpArithOp::Mul,
                FpArithOp::Div,
            ]);
            vec![Instr::FpArith {
                op,
                rd: fd,
                rs1: fs1,
                rs2: fs2,
                rm: rm(rng),
            }]
        }
        11 => {
            let op = rng.pick(&[FmaOp::Madd, FmaOp::Msub, FmaOp::Nmsub, FmaOp::Nmadd]);
            vec![Instr::Fma {
                op,
                rd: fd,
                rs1: fs1,
                rs2: fs2,
                rs3: fs3,
                rm: rm(rng),
            }]
        }
        12 => vec![match rng.below(4) {
            0 => Instr::Fsqrt {
                rd: fd,
                rs1: fs1,
                rm: rm(rng),
            },
            1 => Instr::FpSign {
                op: rng.pick(&[FpSignOp::Inject, FpSignOp::Negate, FpSignOp::Xor]),
                rd: fd,
                rs1: fs1,
                rs2: fs2,
            },
            2 => Instr::FpMinMax {
                op: rng.pick(&[FpMinMaxOp::Min, FpMinMaxOp::Max]),
                rd: fd,
                rs1: fs1,
                rs2: fs2,
            },
            _ => Instr::FpCompare {
                op: rng.pick(&[FpCmpOp::Eq, FpCmpOp::Lt, FpCmpOp::Le]),
                rd,
                rs1: fs1,
                rs2: fs2,
            },
        }],
        13 | 14 => vec![match rng.below(5) {
            0 => Instr::FcvtToInt {
                rd,
                rs1: fs1,
                unsigned: rng.chance(50),
                rm: rm(rng),
            },
            1 => Instr::FcvtFromInt {
                rd: fd,
                rs1,
                unsigned: rng.chance(50),
                rm: rm(rng),
            },
            2 => Instr::FmvToInt { rd, rs1: fs1 },
            3 => Instr::FmvFromInt { rd: fd, rs1 },
            _ => Instr::Fclass { rd, rs1: fs1 },
        }],
        15 => {
            // CSR traffic that keeps frm valid.
            let src_small = rng.below(32) as u8;
            vec![match rng.below(6) {
                0 => Instr::Csr {
                    op: CsrOp::ReadWrite,
                    rd,
                    csr: Csr::Frm,
                    src: CsrSrc::Imm(rng.below(5) as u8),
                },
                1 => Instr::Csr {
                    op: rng.pick(&[CsrOp::ReadSet, CsrOp::ReadClear, CsrOp::ReadWrite]),
                    rd,
                    csr: Csr::Fflags,
                    src: if rng.chance(50) {
                        CsrSrc::Imm(src_small)
                    } else {
                        CsrSrc::Reg(rs1)
                    },
                },
                2 => Instr::Csr {
                    op: rng.pick(&[CsrOp::ReadSet, CsrOp::ReadClear]),
                    rd,
                    csr: Csr::Fcsr,
                    src: CsrSrc::Imm(src_small),
                },
                3 => Instr::Csr {
                    op: CsrOp::ReadClear,
                    rd,
                    csr: Csr::Frm,
                    src: CsrSrc::Imm(src_small),
                },
                4 => Instr::Csr {
                    op: CsrOp::ReadSet,
                    rd,
                    csr: rng.pick(&[Csr::Fflags, Csr::Frm, Csr::Fcsr]),
                    src: CsrSrc::Reg(XReg::ZERO),
                },
                _ => Instr::Fence {
                    pred: FenceSet::ALL,
                    succ: FenceSet::ALL,
                },
            }]
        }
        _ => {
            // More integer work: it dominates real kernels.
            let op = rng.pick(&[AluOp::Add, AluOp::Sub, AluOp::Xor, AluOp::Mul, AluOp::Sltu]);
            vec![Instr::Op { op, rd, rs1, rs2 }]
        }
    }
}

pub fn generate(rng: &mut Rng, index: u32, len: usize) -> Program {
    let data = DATA_BASE + index * DATA_SIZE;
    let mut items = Vec::with_capacity(len);
    for _ in 0..len {
        let skip = 1 + rng.below(4) as usize;
        let item = match rng.below(20) {
            0 | 1 => Item::Branch {
                cond: rng.pick(&[
                    BranchCond::Eq,
                    BranchCond::Ne,
                    BranchCond::Lt,
                    BranchCond::Ge,
                    BranchCond::Ltu,
                    BranchCond::Geu,
                ]),
                rs1: any_x(rng),
                rs2: any_x(rng),
                skip,
            },
            2 => Item::Jal {
                rd: any_x(rng),
                skip,
            },
            3 => {
                let mut rx = any_x(rng);
                while rx.0 == 0 {
                    rx = any_x(rng);
                }
                Item::Jalr {
                    rd: any_x(rng),
                    rx,
                    skip,
                }
            }
            5 => Item::CallRet {
                rl: x(1 + rng.below(31)),
            },
            4 => {
                let rc = x(1 + rng.below(31));
                let n = 1 + rng.below(4) as usize;
                let body = (0..n).flat_map(|_| plain(rng, data, Some(rc))).collect();
                Item::Loop {
                    rc,
                    n: 1 + rng.below(5) as i32,
                    body,
                }
            }
            _ => Item::Plain(plain(rng, data, None)),
        };
        items.push(item);
    }
    Program {
        index,
        prologue: prologue(rng),
        items,
    }
}

fn item_words(item: &Item) -> usize {
    match item {
        Item::Plain(v) => v.len(),
        Item::Branch { .. } | Item::Jal { .. } => 1,
        Item::Jalr { .. } => 2,
        Item::CallRet { .. } => 3,
        Item::Loop { body, .. } => body.len() + 3,
    }
}

impl Program {
    pub fn data_region(&self) -> u32 {
        DATA_BASE + self.index * DATA_SIZE
    }

    /// Instructions of the program placed at `base`; the last one jumps to STUB.
    pub fn assemble(&self, base: u32) -> Vec<Instr> {
        let mut out = self.prologue.clone();
        let start = base + 4 * out.len() as u32;
        // Word offset of each item start (and of the final jal).
        let mut at = Vec::with_capacity(self.items.len() + 1);
        let mut pc = start;
        for it in &self.items {
            at.push(pc);
            pc += 4 * item_words(it) as u32;
        }
        at.push(pc);
        let target = |i: usize, skip: usize| at[(i + 1 + skip).min(self.items.len())];
        for (i, it) in self.items.iter().enumerate() {
            let here = at[i];
            match it {
                Item::Plain(v) => out.extend(v.iter().copied()),
                Item::Branch {
                    cond,
                    rs1,
                    rs2,
                    skip,
                } => out.push(Instr::Branch {
                    cond: *cond,
                    rs1: *rs1,
                    rs2: *rs2,
                    offset: target(i, *skip).wrapping_sub(here) as i32,
                }),
                Item::Jal { rd, skip } => out.push(Instr::Jal {
                    rd: *rd,
                    offset: target(i, *skip).wrapping_sub(here) as i32,
                }),
                Item::Jalr { rd, rx, skip } => {
                    out.push(Instr::Auipc { rd: *rx, imm: 0 });
                    out.push(Instr::Jalr {
                        rd: *rd,
                        rs1: *rx,
                        offset: target(i, *skip).wrapping_sub(here) as i32,
                    });
                }
                Item::CallRet { rl } => {
                    out.push(Instr::Jal { rd: *rl, offset: 8 });
                    out.push(Instr::Jal {
                        rd: XReg::ZERO,
                        offset: 8,
                    });
                    out.push(Instr::Jalr {
                        rd: XReg::ZERO,
                        rs1: *rl,
                        offset: 0,
                    });
                }
                Item::Loop { rc, n, body } => {
                    out.push(Instr::OpImm {
                        op: AluImmOp::Addi,
                        rd: *rc,
                        rs1: XReg::ZERO,
                        imm: *n,
                    });
                    out.extend(body.iter().copied());
                    out.push(Instr::OpImm {
                        op: AluImmOp::Addi,
                        rd: *rc,
                        rs1: *rc,
                        imm: -1,
                    });
                    out.push(Instr::Branch {
                        cond: BranchCond::Ne,
                        rs1: *rc,
                        rs2: XReg::ZERO,
                        offset: -4 * (body.len() as i32 + 1),
                    });
                }
            }
        }
        out.push(Instr::Jal {
            rd: XReg::ZERO,
            offset: STUB.wrapping_sub(pc) as i32,
        });
        out
    }
}
