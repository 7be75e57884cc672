//! Lifter behaviour on the interpreter: the five device kernels, control flow,
//! CSRs and fcsr, dynamic rounding, the ID window, lane exit rules, traps and the
//! cycle limit.

mod rv32_lift_common;

use rv32_lift_common::{Outcome, f, lui, run, run_with, x};
use wavejit_frontend::rv32::lift::{LiftConfig, TrapCause};
use wavejit_frontend::rv32::*;

const SIMPLE: [u32; 7] = [
    0xF1402373, 0x01F37313, 0x00231393, 0x00001E37, 0x007E0E33, 0x006E2023, 0x00100073,
];
const FP: [u32; 15] = [
    0xF1402373, 0x01F37313, 0xD00300D3, 0x00200493, 0xD0048153, 0x00100493, 0xD00481D3, 0x10208253,
    0x003202D3, 0xC00293D3, 0x00231413, 0x00001E37, 0x008E0E33, 0x007E2023, 0x00100073,
];
const LP: [u32; 18] = [
    0xF1402373, 0x01F37313, 0x02A00493, 0xD00480D3, 0x44108153, 0x440101D3, 0xC0019553, 0x00200493,
    0xD00480D3, 0x48108153, 0x480101D3, 0xC00195D3, 0x00331413, 0x00001E37, 0x008E0E33, 0x00AE2023,
    0x00BE2223, 0x00100073,
];

fn addi(rd: u8, rs1: u8, imm: i32) -> Instr {
    Instr::OpImm {
        op: AluImmOp::Addi,
        rd: x(rd),
        rs1: x(rs1),
        imm,
    }
}
fn sw(rs2: u8, rs1: u8, offset: i32) -> Instr {
    Instr::Store {
        kind: StoreKind::Word,
        rs1: x(rs1),
        rs2: x(rs2),
        offset,
    }
}
fn lw(rd: u8, rs1: u8, offset: i32) -> Instr {
    Instr::Load {
        kind: LoadKind::Word,
        rd: x(rd),
        rs1: x(rs1),
        offset,
    }
}
fn bne(rs1: u8, rs2: u8, offset: i32) -> Instr {
    Instr::Branch {
        cond: BranchCond::Ne,
        rs1: x(rs1),
        rs2: x(rs2),
        offset,
    }
}
fn csrr(rd: u8, csr: Csr) -> Instr {
    Instr::Csr {
        op: CsrOp::ReadSet,
        rd: x(rd),
        csr,
        src: CsrSrc::Reg(XReg::ZERO),
    }
}
fn csrwi(csr: Csr, v: u8) -> Instr {
    Instr::Csr {
        op: CsrOp::ReadWrite,
        rd: XReg::ZERO,
        csr,
        src: CsrSrc::Imm(v),
    }
}
const EBREAK: Instr = Instr::Ebreak;

fn words(p: &[Instr]) -> Vec<u32> {
    rv32_lift_common::words_of(p)
}

fn ok(o: &Outcome) {
    if let Err(e) = &o.result {
        panic!("kernel faulted: {e} ({:?})", o.trap());
    }
}

#[test]
fn simple_kernel_stores_lane_ids() {
    let o = run(&SIMPLE, 8);
    ok(&o);
    assert_eq!(o.mem.words(0x1000, 8), (0..8).collect::<Vec<u32>>());
    assert_eq!(o.mem.word(0x1020), 0, "lane 8 does not exist");
}

#[test]
fn fp_kernel_computes_2i_plus_1() {
    let o = run(&FP, 8);
    ok(&o);
    assert_eq!(
        o.mem.words(0x1000, 8),
        (0..8).map(|i| 2 * i + 1).collect::<Vec<u32>>()
    );
}

#[test]
fn lp_convert_kernel_round_trips() {
    let o = run(&LP, 4);
    ok(&o);
    assert_eq!(o.mem.words(0x1000, 8), vec![42, 2, 42, 2, 42, 2, 42, 2]);
}

#[test]
fn mhartid_encodes_block_warp_lane() {
    // csrr x5, mhartid; slli x6, x5... store mhartid at 0x1000 + 4*linear lane.
    let p = [
        csrr(5, Csr::Mhartid),
        Instr::OpImm {
            op: AluImmOp::Srli,
            rd: x(6),
            rs1: x(5),
            imm: 13,
        },
        Instr::OpImm {
            op: AluImmOp::Slli,
            rd: x(7),
            rs1: x(5),
            imm: 19,
        },
        Instr::OpImm {
            op: AluImmOp::Srli,
            rd: x(7),
            rs1: x(7),
            imm: 19,
        },
        // linear = block * 40 + local (block dim 40)
        addi(8, 0, 40),
        Instr::Op {
            op: AluOp::Mul,
            rd: x(6),
            rs1: x(6),
            rs2: x(8),
        },
        Instr::Op {
            op: AluOp::Add,
            rd: x(6),
            rs1: x(6),
            rs2: x(7),
        },
        Instr::OpImm {
            op: AluImmOp::Slli,
            rd: x(6),
            rs1: x(6),
            imm: 2,
        },
        lui(9, 0x2000),
        Instr::Op {
            op: AluOp::Add,
            rd: x(9),
            rs1: x(9),
            rs2: x(6),
        },
        sw(5, 9, 0),
        EBREAK,
    ];
    let o = run_with(
        &words(&p),
        &[],
        [3, 2, 1],
        [40, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    for block in 0..6u32 {
        for local in 0..40u32 {
            let got = o.mem.word((0x2000 + 4 * (block * 40 + local)) as usize);
            let want = block << 13 | (local / 32) << 5 | (local % 32);
            assert_eq!(got, want, "block {block} local {local}");
        }
    }
}

#[test]
fn id_window_reads_ids_through_constant_and_computed_addresses() {
    // x5 = 0x80000000; x10 = threadIdx.x (constant address), x11 = blockDim.x,
    // x12 = gridDim.y via a computed address (x13 = x5 + x14 where x14 is loaded).
    let p = [
        lui(5, 0x8000_0000),
        lw(10, 5, 0x00),
        lw(11, 5, 0x20),
        lw(14, 0, 0x100), // 0x34 stored there by the test
        Instr::Op {
            op: AluOp::Add,
            rd: x(13),
            rs1: x(5),
            rs2: x(14),
        },
        lw(12, 13, 0),
        lw(15, 13, -0x24), // 0x80000010 = blockIdx.x
        lw(16, 13, 0x100), // unused offset: 0
        EBREAK,
    ];
    let o = run_with(
        &words(&p),
        &[(0x100, vec![0x34])],
        [2, 3, 1],
        [5, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    for lane in 0..30usize {
        let c = o.mem.lane(lane);
        assert!(c.done);
        assert_eq!(c.x[10], (lane % 5) as u32, "threadIdx.x");
        assert_eq!(c.x[11], 5, "blockDim.x");
        assert_eq!(c.x[12], 3, "gridDim.y");
        assert_eq!(c.x[15], ((lane / 5) % 2) as u32, "blockIdx.x");
        assert_eq!(c.x[16], 0);
    }
}

#[test]
fn store_to_id_window_faults() {
    let p = [lui(5, 0x8000_0000), sw(0, 5, 0), EBREAK];
    let o = run(&words(&p), 1);
    let e = o.result.expect_err("store to the ID window must fault");
    assert!(
        matches!(
            e.kind,
            wavejit_ir::FaultKind::Memory {
                write: true,
                addr: 0x8000_0000,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.guest_pc, Some(4));
}

#[test]
fn loop_and_divergent_lanes() {
    // x5 = lane; x6 = 0; loop x5 times: x6 += 3; store x6 at 0x1000 + 4*lane.
    let p = [
        csrr(5, Csr::Mhartid),
        Instr::OpImm {
            op: AluImmOp::Andi,
            rd: x(5),
            rs1: x(5),
            imm: 31,
        },
        addi(7, 5, 0),
        addi(6, 0, 0),
        // 0x10: beq x7, x0, +16 -> 0x20
        Instr::Branch {
            cond: BranchCond::Eq,
            rs1: x(7),
            rs2: x(0),
            offset: 16,
        },
        addi(6, 6, 3),
        addi(7, 7, -1),
        Instr::Jal {
            rd: x(0),
            offset: -12,
        },
        // 0x20
        Instr::OpImm {
            op: AluImmOp::Slli,
            rd: x(8),
            rs1: x(5),
            imm: 2,
        },
        lui(9, 0x1000),
        Instr::Op {
            op: AluOp::Add,
            rd: x(9),
            rs1: x(9),
            rs2: x(8),
        },
        sw(6, 9, 0),
        EBREAK,
    ];
    let o = run(&words(&p), 32);
    ok(&o);
    assert_eq!(
        o.mem.words(0x1000, 32),
        (0..32).map(|i| 3 * i).collect::<Vec<u32>>()
    );
}

#[test]
fn call_and_return_through_jalr_with_ret_exit() {
    // main: jal ra, func(+12); sw a0 -> 0x1000; ret (ra = 8 then... set ra=0 first)
    let p = [
        // 0x00
        Instr::Jal {
            rd: x(1),
            offset: 16,
        },
        // 0x04: return site
        sw(10, 0, 0x100),
        addi(1, 0, 0),
        // 0x0c: ret with ra == 0 ends the lane
        Instr::Jalr {
            rd: x(0),
            rs1: x(1),
            offset: 0,
        },
        // 0x10: func
        addi(10, 0, 77),
        Instr::Jalr {
            rd: x(0),
            rs1: x(1),
            offset: 0,
        },
    ];
    let o = run(&words(&p), 2);
    ok(&o);
    assert_eq!(o.mem.word(0x100), 77);
    let c = o.mem.lane(1);
    assert!(c.done);
    assert_eq!(c.pc, 0x0c, "ended at the ret");
    assert_eq!(c.x[10], 77);
}

#[test]
fn computed_jalr_to_unknown_target_traps_at_the_jalr() {
    // x5 = 0x0c (loaded from memory so it is not a block-local constant); jalr x5
    let p = [
        lw(5, 0, 0x100),
        Instr::Jalr {
            rd: x(0),
            rs1: x(5),
            offset: 0,
        },
        EBREAK,
        EBREAK,
    ];
    let o = run_with(
        &words(&p),
        &[(0x100, vec![0x0c])],
        [1, 1, 1],
        [1, 1, 1],
        LiftConfig::default(),
    );
    let t = o.trap().expect("trap");
    assert_eq!(t.cause, TrapCause::UnknownJumpTarget);
    assert_eq!(t.pc, Some(4));
    // A known block start (the return site... here: 0x8 is the fallthrough? no) works:
    // target 0x08 is not a block start either; target 0 (entry) is.
    let o = run_with(
        &words(&[
            lw(5, 0, 0x100),
            addi(6, 6, 1),
            Instr::Branch {
                cond: BranchCond::Ne,
                rs1: x(6),
                rs2: x(0),
                offset: 8,
            },
            EBREAK,
            Instr::Jalr {
                rd: x(0),
                rs1: x(5),
                offset: 0,
            },
        ]),
        &[(0x100, vec![0x0c])],
        [1, 1, 1],
        [1, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    assert_eq!(o.mem.lane(0).pc, 0x0c, "jumped to the ebreak block at 0xc");
}

#[test]
fn illegal_word_traps_only_when_reached() {
    // beq x0,x0,+8 skips the illegal word 0.
    let code = vec![
        words(&[Instr::Branch {
            cond: BranchCond::Eq,
            rs1: x(0),
            rs2: x(0),
            offset: 8,
        }])[0],
        0xffff_ffff,
        words(&[EBREAK])[0],
    ];
    let o = run(&code, 1);
    ok(&o);
    let code = vec![addi_word(5, 0, 1), 0x0000_0000, words(&[EBREAK])[0]];
    let o = run(&code, 1);
    let t = o.trap().expect("illegal instruction trap");
    assert!(matches!(t.cause, TrapCause::IllegalInstruction(_)));
    assert_eq!((t.pc, t.word), (Some(4), Some(0)));
    assert_eq!(o.result.as_ref().err().and_then(|f| f.guest_pc), Some(4));
}

fn addi_word(rd: u8, rs1: u8, imm: i32) -> u32 {
    words(&[addi(rd, rs1, imm)])[0]
}

#[test]
fn ecall_traps() {
    let o = run(&words(&[addi(5, 0, 1), Instr::Ecall]), 1);
    let t = o.trap().expect("trap");
    assert_eq!(t.cause, TrapCause::Ecall);
    assert_eq!(t.pc, Some(4));
}

#[test]
fn cycle_limit_is_exact_in_retired_instructions() {
    // loop: addi x5,x5,-1 ; bne x5,x0,loop ; ebreak. With x5 = n: 1 + 2n + 1 instructions.
    let prog = |n: i32| words(&[addi(5, 0, n), addi(5, 5, -1), bne(5, 0, -4), EBREAK]);
    let limit = 2 + 2 * 10;
    let opts = LiftConfig {
        cycle_limit: Some(limit),
        ..LiftConfig::default()
    };
    let o = run_with(&prog(10), &[], [1, 1, 1], [1, 1, 1], opts.clone());
    ok(&o);
    let o = run_with(&prog(11), &[], [1, 1, 1], [1, 1, 1], opts);
    assert_eq!(
        o.trap().map(|t| t.cause),
        Some(TrapCause::CycleLimit { limit })
    );
    // Default limit 100,000: a runaway loop faults.
    let o = run(
        &words(&[Instr::Jal {
            rd: x(0),
            offset: 0,
        }]),
        2,
    );
    assert_eq!(
        o.trap().map(|t| t.cause),
        Some(TrapCause::CycleLimit { limit: 100_000 })
    );
}

#[test]
fn fcsr_csrs_and_flags_accrue() {
    // 1.0/3.0 -> NX; 1/0 -> DZ; read fflags, fcsr; write frm via fcsr.
    let p = [
        addi(5, 0, 1),
        Instr::FcvtFromInt {
            rd: f(1),
            rs1: x(5),
            unsigned: false,
            rm: RoundingMode::Rne,
        },
        addi(5, 0, 3),
        Instr::FcvtFromInt {
            rd: f(2),
            rs1: x(5),
            unsigned: false,
            rm: RoundingMode::Rne,
        },
        Instr::FpArith {
            op: FpArithOp::Div,
            rd: f(3),
            rs1: f(1),
            rs2: f(2),
            rm: RoundingMode::Rne,
        },
        csrr(10, Csr::Fflags),
        Instr::FpArith {
            op: FpArithOp::Div,
            rd: f(4),
            rs1: f(1),
            rs2: f(0),
            rm: RoundingMode::Rne,
        },
        csrr(11, Csr::Fcsr),
        csrwi(Csr::Frm, 3),
        csrr(12, Csr::Fcsr),
        Instr::Csr {
            op: CsrOp::ReadClear,
            rd: x(13),
            csr: Csr::Fflags,
            src: CsrSrc::Imm(1),
        },
        csrr(14, Csr::Fflags),
        EBREAK,
    ];
    let o = run(&words(&p), 1);
    ok(&o);
    let c = o.mem.lane(0);
    assert_eq!(c.f[3], 0x3EAAAAAB);
    assert_eq!(c.f[4], 0x7F800000);
    assert_eq!(c.x[10], 0x01, "NX");
    assert_eq!(c.x[11], 0x09, "NX|DZ");
    assert_eq!(c.x[12], 3 << 5 | 0x09);
    assert_eq!(c.x[13], 0x09);
    assert_eq!(c.x[14], 0x08);
    assert_eq!(c.fcsr, 3 << 5 | 0x08);
}

/// 1.0 / 3.0 in every rounding mode, static and through frm.
#[test]
fn every_rounding_mode_static_and_dynamic() {
    // RNE/RMM/RUP round 0x3EAAAAAA.AB up; RTZ/RDN down. For -1/3 the directed modes swap.
    let expect_pos = [0x3EAAAAAB, 0x3EAAAAAA, 0x3EAAAAAA, 0x3EAAAAAB, 0x3EAAAAAB];
    let expect_neg = [0xBEAAAAAB, 0xBEAAAAAA, 0xBEAAAAAB, 0xBEAAAAAA, 0xBEAAAAAB];
    let modes = [
        RoundingMode::Rne,
        RoundingMode::Rtz,
        RoundingMode::Rdn,
        RoundingMode::Rup,
        RoundingMode::Rmm,
    ];
    for (i, &rm) in modes.iter().enumerate() {
        for dynamic in [false, true] {
            let mut p = vec![];
            if dynamic {
                p.push(csrwi(Csr::Frm, rm.field()));
            }
            let rm_used = if dynamic { RoundingMode::Dyn } else { rm };
            p.extend([
                addi(5, 0, 1),
                addi(6, 0, -1),
                Instr::FcvtFromInt {
                    rd: f(1),
                    rs1: x(5),
                    unsigned: false,
                    rm: RoundingMode::Rne,
                },
                Instr::FcvtFromInt {
                    rd: f(5),
                    rs1: x(6),
                    unsigned: false,
                    rm: RoundingMode::Rne,
                },
                addi(5, 0, 3),
                Instr::FcvtFromInt {
                    rd: f(2),
                    rs1: x(5),
                    unsigned: false,
                    rm: RoundingMode::Rne,
                },
                Instr::FpArith {
                    op: FpArithOp::Div,
                    rd: f(3),
                    rs1: f(1),
                    rs2: f(2),
                    rm: rm_used,
                },
                Instr::FpArith {
                    op: FpArithOp::Div,
                    rd: f(4),
                    rs1: f(5),
                    rs2: f(2),
                    rm: rm_used,
                },
                // fcvt.w.s of 2.5 in this mode
                addi(7, 0, 5),
                Instr::FcvtFromInt {
                    rd: f(6),
                    rs1: x(7),
                    unsigned: false,
                    rm: RoundingMode::Rne,
                },
                addi(7, 0, 2),
                Instr::FcvtFromInt {
                    rd: f(7),
                    rs1: x(7),
                    unsigned: false,
                    rm: RoundingMode::Rne,
                },
                Instr::FpArith {
                    op: FpArithOp::Div,
                    rd: f(8),
                    rs1: f(6),
                    rs2: f(7),
                    rm: RoundingMode::Rne,
                },
                Instr::FcvtToInt {
                    rd: x(10),
                    rs1: f(8),
                    unsigned: false,
                    rm: rm_used,
                },
                EBREAK,
            ]);
            let o = run(&words(&p), 1);
            ok(&o);
            let c = o.mem.lane(0);
            assert_eq!(c.f[3], expect_pos[i], "{rm:?} dynamic={dynamic} +1/3");
            assert_eq!(c.f[4], expect_neg[i], "{rm:?} dynamic={dynamic} -1/3");
            let half = [2, 2, 2, 3, 3][i];
            assert_eq!(c.x[10], half, "{rm:?} dynamic={dynamic} cvt 2.5");
        }
    }
}

#[test]
fn dynamic_rounding_with_invalid_frm_traps() {
    let p = [
        csrwi(Csr::Frm, 5),
        Instr::FpArith {
            op: FpArithOp::Add,
            rd: f(1),
            rs1: f(1),
            rs2: f(1),
            rm: RoundingMode::Dyn,
        },
        EBREAK,
    ];
    let o = run(&words(&p), 1);
    let t = o.trap().expect("trap");
    assert_eq!(t.cause, TrapCause::InvalidFrm);
    assert_eq!(t.pc, Some(4));
    // Static rounding does not look at frm.
    let p = [
        csrwi(Csr::Frm, 7),
        Instr::FpArith {
            op: FpArithOp::Add,
            rd: f(1),
            rs1: f(1),
            rs2: f(1),
            rm: RoundingMode::Rne,
        },
        EBREAK,
    ];
    ok(&run(&words(&p), 1));
}

#[test]
fn golden_fp_and_m_results() {
    // sqrt(-1) -> canonical NaN + NV; fcvt.w.s(NaN) -> 0x7fffffff; div/rem corner cases.
    let p = [
        addi(5, 0, -1),
        Instr::FcvtFromInt {
            rd: f(1),
            rs1: x(5),
            unsigned: false,
            rm: RoundingMode::Rne,
        },
        Instr::Fsqrt {
            rd: f(2),
            rs1: f(1),
            rm: RoundingMode::Rne,
        },
        Instr::FcvtToInt {
            rd: x(10),
            rs1: f(2),
            unsigned: false,
            rm: RoundingMode::Rtz,
        },
        addi(6, 0, -7),
        addi(7, 0, 2),
        Instr::Op {
            op: AluOp::Div,
            rd: x(11),
            rs1: x(6),
            rs2: x(7),
        },
        Instr::Op {
            op: AluOp::Rem,
            rd: x(12),
            rs1: x(6),
            rs2: x(7),
        },
        Instr::Op {
            op: AluOp::Div,
            rd: x(13),
            rs1: x(6),
            rs2: x(0),
        },
        Instr::Op {
            op: AluOp::Mulhsu,
            rd: x(14),
            rs1: x(6),
            rs2: x(5),
        },
        lui(8, 0x8000_0000),
        Instr::Op {
            op: AluOp::Div,
            rd: x(15),
            rs1: x(8),
            rs2: x(5),
        },
        Instr::Op {
            op: AluOp::Rem,
            rd: x(16),
            rs1: x(8),
            rs2: x(5),
        },
        EBREAK,
    ];
    let o = run(&words(&p), 1);
    ok(&o);
    let c = o.mem.lane(0);
    assert_eq!(c.f[2], 0x7FC00000);
    assert_eq!(c.x[10], 0x7FFFFFFF);
    assert_eq!(c.fflags(), 0x10);
    assert_eq!(
        [c.x[11], c.x[12], c.x[13]],
        [-3i32 as u32, -1i32 as u32, u32::MAX]
    );
    assert_eq!(c.x[14], 0xFFFFFFF9);
    assert_eq!([c.x[15], c.x[16]], [0x8000_0000, 0]);
}

#[test]
fn fetch_outside_code_memory_traps() {
    // jal to 0x7ffffff0 region: outside the 1 MiB test VRAM.
    let p = [
        lui(5, 0x0100_0000),
        Instr::Jalr {
            rd: x(0),
            rs1: x(5),
            offset: 0,
        },
    ];
    let o = run(&words(&p), 1);
    let t = o.trap().expect("trap");
    assert_eq!(t.cause, TrapCause::FetchFault);
    assert_eq!(t.pc, Some(0x0100_0000));
}

#[test]
fn misaligned_branch_target_traps() {
    let p = [
        Instr::Branch {
            cond: BranchCond::Eq,
            rs1: x(0),
            rs2: x(0),
            offset: 6,
        },
        EBREAK,
        EBREAK,
    ];
    let o = run(&words(&p), 1);
    let t = o.trap().expect("trap");
    assert_eq!(t.cause, TrapCause::MisalignedTarget { target: 6 });
    assert_eq!(t.pc, Some(0));
}

#[test]
fn misaligned_word_access_works_bytewise() {
    let p = [
        lui(5, 0x2000),
        addi(6, 0, 0x123),
        Instr::Store {
            kind: StoreKind::Word,
            rs1: x(5),
            rs2: x(6),
            offset: 1,
        },
        Instr::Load {
            kind: LoadKind::Half,
            rd: x(10),
            rs1: x(5),
            offset: 1,
        },
        lw(11, 5, 0),
        EBREAK,
    ];
    let o = run(&words(&p), 1);
    ok(&o);
    let c = o.mem.lane(0);
    assert_eq!(c.x[10], 0x123);
    assert_eq!(c.x[11], 0x12300);
}

/// A computed call to a far-away function given as an extra entry, and the
/// return through the hub: the hub's size does not grow with the address span.
#[test]
fn computed_call_to_far_function_through_the_hub() {
    let main = words(&[
        lw(5, 0, 0x100),
        Instr::Jalr {
            rd: x(1),
            rs1: x(5),
            offset: 0,
        },
        EBREAK,
    ]);
    let func = words(&[
        addi(10, 0, 5),
        Instr::Jalr {
            rd: x(0),
            rs1: x(1),
            offset: 0,
        },
    ]);
    let opts = LiftConfig {
        extra_entries: vec![0x8_0000],
        ..LiftConfig::default()
    };
    let o = run_with(
        &main,
        &[(0x100, vec![0x8_0000]), (0x8_0000, func)],
        [1, 1, 1],
        [1, 1, 1],
        opts,
    );
    ok(&o);
    let c = o.mem.lane(0);
    assert_eq!((c.x[10], c.pc), (5, 8), "returned to the ebreak at 8");
    assert!(
        o.lifted.kernel.values.len() < 1000,
        "{} values",
        o.lifted.kernel.values.len()
    );
}

/// Sub-word loads from the ID window return the bytes of the ID word, sign- or
/// zero-extended, through constant and computed addresses.
#[test]
fn id_window_sub_word_loads() {
    let load = |kind, rd: u8, rs1: u8, offset| Instr::Load {
        kind,
        rd: x(rd),
        rs1: x(rs1),
        offset,
    };
    let p = [
        lui(5, 0x8000_0000),
        load(LoadKind::HalfUnsigned, 10, 5, 0x20), // blockDim.x = 300 = 0x12c
        load(LoadKind::Byte, 11, 5, 0x20),         // 0x2c
        load(LoadKind::ByteUnsigned, 12, 5, 0x21), // 0x01
        lw(6, 0, 0x100),                           // 0x80000020, not a constant
        load(LoadKind::Half, 13, 6, 0),
        load(LoadKind::ByteUnsigned, 14, 6, 1),
        load(LoadKind::ByteUnsigned, 15, 6, 3),
        EBREAK,
    ];
    let o = run_with(
        &words(&p),
        &[(0x100, vec![0x8000_0020])],
        [1, 1, 1],
        [300, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    let c = o.mem.lane(299);
    assert_eq!(
        [c.x[10], c.x[11], c.x[12], c.x[13], c.x[14], c.x[15]],
        [300, 0x2c, 1, 300, 1, 0]
    );
}

#[test]
fn jalr_to_address_zero_runs_the_code_there() {
    // 0x000: ebreak; entry 0x100: jalr ra, 0(t0) with t0 = 0 (its launch value,
    // set in no block): address 0 holds code, so the lane runs it and ends there.
    let mut mem = rv32_lift_common::TestMem::new(1);
    mem.write_words(0, &words(&[EBREAK]));
    let jalr = Instr::Jalr {
        rd: x(1),
        rs1: x(5),
        offset: 0,
    };
    mem.write_words(0x100, &words(&[jalr]));
    let opts = LiftConfig {
        context_base: Some(rv32_lift_common::CTX_BASE),
        ..LiftConfig::default()
    };
    let lifted =
        wavejit_frontend::rv32::lift::lift(&|pc| mem.fetch(pc), 0x100, &opts).expect("lifts");
    wavejit_ir::verify::verify(&lifted.kernel).expect("verifies");
    let mut d = wavejit_ir::Dispatch::new([1, 1, 1], [1, 1, 1]);
    d.step_limit = lifted.step_limit();
    use wavejit_ir::Engine;
    let result = wavejit_ir::interp::Interpreter.run(&lifted.kernel, &d, &mem);
    assert_eq!(result, Ok(()));
    let c = mem.lane(0);
    assert!(c.done);
    assert_eq!(
        (c.pc, c.x[1]),
        (0, 0x104),
        "ended at the ebreak at 0; ra = return site"
    );
}
