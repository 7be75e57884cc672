//! Encoder/decoder round trips over a structured sweep of the whole opcode space,
//! plus encoder range checks. Also a no-panic sweep for the disassembler.

use wavejit_frontend::rv32::{
    AluImmOp, BranchCond, Csr, CsrOp, CsrSrc, FReg, Instr, XReg, decode, disasm, disasm_program,
    encode, encode_program,
};

/// SplitMix64 for the fields the sweep does not enumerate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as u32
    }
}

#[test]
fn every_accepted_word_round_trips() {
    // All 128 major opcodes x 8 funct3 x 128 funct7, twice, with random rd/rs1/rs2;
    // plus rs2 swept for funct7 0x22..0x26 and 0x2c..0x78 (where rs2 selects the op).
    let mut rng = Rng(0x5EED_2026_0010);
    let mut accepted = 0usize;
    let mut rejected = 0usize;
    for opcode in 0u32..128 {
        for f3 in 0u32..8 {
            for f7 in 0u32..128 {
                for rep in 0..2 {
                    let r = rng.next();
                    let rs2 = if rep == 0 { r & 3 } else { (r >> 20) & 31 };
                    let word = (f7 << 25) | (rs2 << 20) | (r & 0x000F_8F80) | (f3 << 12) | opcode;
                    match decode(word, 0) {
                        Ok(instr) => {
                            accepted += 1;
                            assert_eq!(encode(&instr), Ok(word), "{instr:?}");
                            assert!(disasm(word, 0).is_ok());
                        }
                        Err(e) => {
                            rejected += 1;
                            assert_eq!((e.word, e.pc), (word, 0));
                        }
                    }
                }
            }
        }
    }
    eprintln!("sweep: {accepted} accepted words round-tripped, {rejected} rejected");
    assert!(accepted > 10_000, "sweep too small: {accepted}");
    assert!(rejected > 200_000, "sweep too small: {rejected}");
}

#[test]
fn encoder_rejects_unencodable_fields() {
    let bad = [
        Instr::OpImm {
            op: AluImmOp::Addi,
            rd: XReg(1),
            rs1: XReg(1),
            imm: 2048,
        },
        Instr::OpImm {
            op: AluImmOp::Slli,
            rd: XReg(1),
            rs1: XReg(1),
            imm: 32,
        },
        Instr::Branch {
            cond: BranchCond::Eq,
            rs1: XReg(1),
            rs2: XReg(2),
            offset: 3,
        },
        Instr::Branch {
            cond: BranchCond::Eq,
            rs1: XReg(1),
            rs2: XReg(2),
            offset: 4096,
        },
        Instr::Jal {
            rd: XReg(0),
            offset: 1 << 20,
        },
        Instr::Lui {
            rd: XReg(1),
            imm: 0x1234,
        },
        Instr::Flw {
            rd: FReg(32),
            rs1: XReg(0),
            offset: 0,
        },
        Instr::Csr {
            op: CsrOp::ReadWrite,
            rd: XReg(0),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg(5)),
        },
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: XReg(5),
            csr: Csr::Fflags,
            src: CsrSrc::Imm(32),
        },
    ];
    for instr in bad {
        let err = encode(&instr);
        assert!(
            matches!(err, Err(e) if e.instr == instr),
            "{instr:?} must not encode: {err:?}"
        );
    }
    // Extremes that do fit.
    let jal = Instr::Jal {
        rd: XReg(1),
        offset: -(1 << 20),
    };
    assert_eq!(encode(&jal), Ok(0x8000_00EF));
    let beq = Instr::Branch {
        cond: BranchCond::Eq,
        rs1: XReg(0),
        rs2: XReg(0),
        offset: 4094,
    };
    assert_eq!(decode(encode(&beq).unwrap_or(0), 0), Ok(beq));
}

#[test]
fn encode_program_builds_a_kernel() {
    // csrr t1,mhartid; andi t1,t1,31; ebreak
    let program = [
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: XReg(6),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO),
        },
        Instr::OpImm {
            op: AluImmOp::Andi,
            rd: XReg(6),
            rs1: XReg(6),
            imm: 31,
        },
        Instr::Ebreak,
    ];
    let bytes = encode_program(&program).expect("encodable");
    assert_eq!(
        bytes,
        [
            0x73, 0x23, 0x40, 0xF1, 0x13, 0x73, 0xF3, 0x01, 0x73, 0x00, 0x10, 0x00
        ]
    );
    assert_eq!(
        disasm_program(&bytes, 0),
        Ok(vec![
            "csrr\tt1,mhartid".to_string(),
            "and\tt1,t1,31".to_string(),
            "ebreak".to_string()
        ])
    );
}
