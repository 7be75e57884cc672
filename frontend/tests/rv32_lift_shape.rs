//! Shape of the lifted IR where it decides speed, with the results checked on
//! the interpreter: loads whose address range provably misses (or hits) the ID
//! window carry no run-time window test, the cycle-limit test is left out only
//! where no path can exceed the limit (and stays exact where one can), and a
//! straight-line kernel is one IR block.

mod rv32_lift_common;

use rv32_lift_common::{Outcome, imm, run_with, x};
use wavejit_frontend::rv32::lift::{DispatchShape, LiftConfig, TrapCause};
use wavejit_frontend::rv32::*;
use wavejit_ir::{InstKind, Kernel, Terminator};

fn add(rd: u8, rs1: u8, rs2: u8) -> Instr {
    Instr::Op {
        op: AluOp::Add,
        rd: x(rd),
        rs1: x(rs1),
        rs2: x(rs2),
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
fn sw(rs2: u8, rs1: u8, offset: i32) -> Instr {
    Instr::Store {
        kind: StoreKind::Word,
        rs1: x(rs1),
        rs2: x(rs2),
        offset,
    }
}
fn hartid(rd: u8) -> Instr {
    Instr::Csr {
        op: CsrOp::ReadSet,
        rd: x(rd),
        csr: Csr::Mhartid,
        src: CsrSrc::Reg(XReg::ZERO),
    }
}

/// Loads/stores `y[i] = x[i] + 1` with i from mhartid (block_linear << 13 |
/// local) as the benchmark kernels compute it: x at 0x1000, y at 0x1400.
fn indexed_copy() -> Vec<Instr> {
    vec![
        hartid(5),
        imm(AluImmOp::Srli, 6, 5, 13),
        imm(AluImmOp::Slli, 6, 6, 4),
        imm(AluImmOp::Andi, 7, 5, 15),
        Instr::Op {
            op: AluOp::Or,
            rd: x(6),
            rs1: x(6),
            rs2: x(7),
        },
        imm(AluImmOp::Slli, 7, 6, 2),
        Instr::Lui {
            rd: x(8),
            imm: 0x1000,
        },
        add(8, 8, 7),
        lw(10, 8, 0),
        imm(AluImmOp::Addi, 10, 10, 1),
        sw(10, 8, 0x400),
        Instr::Ebreak,
    ]
}

fn count(kernel: &Kernel, pred: impl Fn(&InstKind) -> bool) -> usize {
    kernel.insts.values().filter(|d| pred(&d.kind)).count()
}

fn branches(kernel: &Kernel) -> usize {
    kernel
        .blocks
        .values()
        .filter(|b| {
            matches!(
                b.term,
                Some(Terminator::Branch { .. } | Terminator::Table { .. })
            )
        })
        .count()
}

fn ok(o: &Outcome) {
    if let Err(e) = &o.result {
        panic!("kernel faulted: {e} ({:?})", o.lifted.kernel.name);
    }
}

#[test]
fn straight_line_indexed_kernel_is_one_block_without_window_test() {
    let code = rv32_lift_common::words_of(&indexed_copy());
    let input: Vec<u32> = (0..32u32).map(|i| i * 3).collect();
    let o = run_with(
        &code,
        &[(0x1000, input.clone())],
        [2, 1, 1],
        [16, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    let k = &o.lifted.kernel;
    assert_eq!(k.blocks.len(), 1, "{}", wavejit_ir::text::print(k));
    assert_eq!(count(k, |i| matches!(i, InstKind::Select)), 0);
    assert_eq!(count(k, |i| matches!(i, InstKind::Trap { .. })), 0);
    let want: Vec<u32> = input.iter().map(|v| v + 1).collect();
    assert_eq!(o.mem.words(0x1400, 32), want);
}

#[test]
fn address_loaded_from_memory_keeps_the_window_test() {
    // x8 comes from memory: it may point into the window.
    let p = [
        lw(8, 0, 0x100),
        lw(10, 8, 0),
        lw(11, 8, 0x20),
        Instr::Ebreak,
    ];
    let code = rv32_lift_common::words_of(&p);
    for (base, want) in [(0x8000_0000u32, [3u32, 4]), (0x200, [77, 78])] {
        let o = run_with(
            &code,
            &[(0x100, vec![base]), (0x200, vec![77]), (0x220, vec![78])],
            [1, 1, 1],
            [4, 1, 1],
            LiftConfig::default(),
        );
        ok(&o);
        assert_eq!(branches(&o.lifted.kernel), 2, "one window test per load");
        for lane in 0..4usize {
            let c = o.mem.lane(lane);
            let expect = if base == 0x200 {
                want
            } else {
                [lane as u32, 4]
            };
            assert_eq!([c.x[10], c.x[11]], expect, "lane {lane}, base {base:#x}");
        }
    }
}

#[test]
fn address_range_inside_the_window_reads_ids_without_a_test() {
    // x6 = 0x80000000 + (hartid & 0x1c): offsets 0..0x1c, IDs at 0x0 and 0x10.
    let p = [
        hartid(5),
        imm(AluImmOp::Andi, 6, 5, 0x1c),
        Instr::Lui {
            rd: x(7),
            imm: 0x8000_0000,
        },
        add(6, 6, 7),
        lw(10, 6, 0),
        Instr::Ebreak,
    ];
    let o = run_with(
        &rv32_lift_common::words_of(&p),
        &[],
        [3, 1, 1],
        [32, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    assert_eq!(branches(&o.lifted.kernel), 0);
    for lane in 0..96usize {
        let (block, local) = (lane / 32, lane % 32);
        let want = match local & 0x1c {
            0 => local as u32,
            0x10 => block as u32,
            _ => 0,
        };
        assert_eq!(o.mem.lane(lane).x[10], want, "lane {lane}");
    }
}

#[test]
fn ranges_flow_across_blocks() {
    // The address is formed before a divergent branch and used after the join.
    let p = [
        hartid(5),
        imm(AluImmOp::Andi, 6, 5, 7),
        imm(AluImmOp::Slli, 7, 6, 2),
        Instr::Lui {
            rd: x(8),
            imm: 0x1000,
        },
        add(8, 8, 7),
        Instr::Branch {
            cond: BranchCond::Eq,
            rs1: x(6),
            rs2: XReg::ZERO,
            offset: 8,
        },
        imm(AluImmOp::Addi, 8, 8, 0x20),
        lw(10, 8, 0),
        Instr::Ebreak,
    ];
    let data: Vec<u32> = (0..16u32).map(|i| 100 + i).collect();
    let o = run_with(
        &rv32_lift_common::words_of(&p),
        &[(0x1000, data)],
        [1, 1, 1],
        [8, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    assert_eq!(
        count(&o.lifted.kernel, |i| matches!(i, InstKind::Select)),
        0
    );
    for lane in 0..8u32 {
        let want = if lane == 0 { 100 } else { 100 + lane + 8 };
        assert_eq!(o.mem.lane(lane as usize).x[10], want, "lane {lane}");
    }
}

#[test]
fn acyclic_kernel_checks_the_limit_only_when_a_path_exceeds_it() {
    let code = rv32_lift_common::words_of(&indexed_copy());
    let n = indexed_copy().len() as u32;
    let run = |limit: u32| {
        run_with(
            &code,
            &[],
            [1, 1, 1],
            [2, 1, 1],
            LiftConfig {
                cycle_limit: Some(limit),
                ..LiftConfig::default()
            },
        )
    };
    // Exactly the limit completes with no test in the code.
    let o = run(n);
    ok(&o);
    assert_eq!(
        count(&o.lifted.kernel, |i| matches!(i, InstKind::Trap { .. })),
        0
    );
    // One instruction over the limit faults at the cycle limit.
    let o = run(n - 1);
    let trap = match &o.result {
        Err(wavejit_ir::Fault {
            kind: wavejit_ir::FaultKind::Trap { code },
            ..
        }) => o.lifted.trap(*code).map(|t| t.cause),
        _ => None,
    };
    assert_eq!(trap, Some(TrapCause::CycleLimit { limit: n - 1 }));
}

#[test]
fn longest_path_decides_and_loops_keep_the_test() {
    // Paths of 6 (odd local index) and 4 instructions: a limit of 6 needs no
    // test, one of 5 stops only the lanes on the long path.
    let p = [
        hartid(5),
        imm(AluImmOp::Andi, 6, 5, 1),
        Instr::Branch {
            cond: BranchCond::Eq,
            rs1: x(6),
            rs2: XReg::ZERO,
            offset: 12,
        },
        imm(AluImmOp::Addi, 7, 0, 1),
        imm(AluImmOp::Addi, 7, 7, 1),
        Instr::Ebreak,
    ];
    let opts = |limit| LiftConfig {
        cycle_limit: Some(limit),
        ..LiftConfig::default()
    };
    let code = rv32_lift_common::words_of(&p);
    let o = run_with(&code, &[], [1, 1, 1], [2, 1, 1], opts(6));
    ok(&o);
    let o = run_with(&code, &[], [1, 1, 1], [2, 1, 1], opts(5));
    assert!(o.result.is_err(), "lane 1 retires 6 > 5");
    assert!(o.mem.lane(0).done, "lane 0 retires 4");
    assert!(!o.mem.lane(1).done);
    // A loop's blocks and what follows keep the test.
    let looped = [
        imm(AluImmOp::Addi, 5, 0, 3),
        imm(AluImmOp::Addi, 5, 5, -1),
        Instr::Branch {
            cond: BranchCond::Ne,
            rs1: x(5),
            rs2: XReg::ZERO,
            offset: -4,
        },
        Instr::Ebreak,
    ];
    let o = run_with(
        &rv32_lift_common::words_of(&looped),
        &[],
        [1, 1, 1],
        [1, 1, 1],
        opts(100),
    );
    ok(&o);
    assert!(count(&o.lifted.kernel, |i| matches!(i, InstKind::Trap { .. })) > 0);
}

/// `i = blockIdx.x * blockDim.x + threadIdx.x` read from the ID window, then
/// `y[i] = x[i] + 1`: with the dispatch shape the address range is known.
fn window_indexed_copy() -> Vec<Instr> {
    vec![
        Instr::Lui {
            rd: x(14),
            imm: 0x8000_0000,
        },
        lw(15, 14, 0x10),
        lw(13, 14, 0x20),
        lw(14, 14, 0),
        Instr::Op {
            op: AluOp::Mul,
            rd: x(15),
            rs1: x(15),
            rs2: x(13),
        },
        add(15, 15, 14),
        imm(AluImmOp::Slli, 15, 15, 2),
        Instr::Lui {
            rd: x(8),
            imm: 0x1000,
        },
        add(8, 8, 15),
        lw(10, 8, 0),
        imm(AluImmOp::Addi, 10, 10, 1),
        sw(10, 8, 0x400),
        Instr::Ebreak,
    ]
}

#[test]
fn dispatch_shape_bounds_id_reads() {
    let code = rv32_lift_common::words_of(&window_indexed_copy());
    let input: Vec<u32> = (0..24u32).map(|i| 1000 + i).collect();
    let (grid, block) = ([3, 1, 1], [8, 1, 1]);
    let shaped = LiftConfig {
        shape: Some(DispatchShape {
            num_workgroups: grid,
            workgroup_size: block,
        }),
        ..LiftConfig::default()
    };
    for (opts, tests) in [(LiftConfig::default(), 1), (shaped, 0)] {
        let o = run_with(&code, &[(0x1000, input.clone())], grid, block, opts);
        ok(&o);
        assert_eq!(branches(&o.lifted.kernel), tests);
        let want: Vec<u32> = input.iter().map(|v| v + 1).collect();
        assert_eq!(o.mem.words(0x1400, 24), want);
    }
    // A grid whose index range could reach the window keeps the tests.
    let huge = DispatchShape {
        num_workgroups: [1 << 19, 1, 1],
        workgroup_size: [8192, 1, 1],
    };
    let lifted = wavejit_frontend::rv32::lift::lift(
        &|pc| code.get(pc as usize / 4).copied(),
        0,
        &LiftConfig {
            shape: Some(huge),
            ..LiftConfig::default()
        },
    )
    .expect("lift");
    assert_eq!(branches(&lifted.kernel), 1);
    assert!(lifted.fits(&huge));
    assert!(!lifted.fits(&DispatchShape {
        num_workgroups: [1, 1, 1],
        workgroup_size: [8192, 1, 1],
    }));
}

#[test]
fn jalr_targets_known_from_ranges_need_no_hub() {
    let tables = |k: &Kernel| {
        k.blocks
            .values()
            .filter(|b| matches!(b.term, Some(Terminator::Table { .. })))
            .count()
    };
    // The C lane entry: call kmain; ebreak. kmain's ret returns to 0x4 (ra is
    // 4 on every path), so no computed jump remains.
    let call = [
        Instr::Jal {
            rd: XReg::RA,
            offset: 12,
        },
        Instr::Ebreak,
        imm(AluImmOp::Addi, 0, 0, 0),
        imm(AluImmOp::Addi, 10, 0, 7),
        Instr::Jalr {
            rd: XReg::ZERO,
            rs1: XReg::RA,
            offset: 0,
        },
    ];
    let o = run_with(
        &rv32_lift_common::words_of(&call),
        &[],
        [1, 1, 1],
        [2, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    assert_eq!(branches(&o.lifted.kernel), 0);
    assert_eq!(tables(&o.lifted.kernel), 0);
    // Entry, kmain and the return site, each entered by one jump: one block.
    assert_eq!(o.lifted.kernel.blocks.len(), 1);
    for lane in 0..2 {
        let c = o.mem.lane(lane);
        assert!(c.done);
        assert_eq!((c.x[10], c.x[1], c.pc), (7, 4, 4));
    }
    // A ret in a later block with ra never written ends the lane.
    let top = [
        Instr::Branch {
            cond: BranchCond::Eq,
            rs1: XReg::ZERO,
            rs2: XReg::ZERO,
            offset: 8,
        },
        imm(AluImmOp::Addi, 10, 0, 1),
        Instr::Jalr {
            rd: XReg::ZERO,
            rs1: XReg::RA,
            offset: 0,
        },
    ];
    let o = run_with(
        &rv32_lift_common::words_of(&top),
        &[],
        [1, 1, 1],
        [1, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    // The beq on x0 == x0 folds to a jump, and the ret needs no hub.
    assert_eq!(branches(&o.lifted.kernel), 0);
    assert_eq!(tables(&o.lifted.kernel), 0);
    let c = o.mem.lane(0);
    assert!(c.done);
    assert_eq!((c.x[10], c.pc), (0, 8));
}

#[test]
fn long_chain_of_jumps_becomes_one_block() {
    // 20,000 `jal x0, +4`, each a block entered only by the previous one,
    // then x10 = 1 and ebreak: merged iteratively into one IR block.
    let n = 20_000;
    let mut p = vec![
        Instr::Jal {
            rd: XReg::ZERO,
            offset: 4
        };
        n
    ];
    p.push(imm(AluImmOp::Addi, 10, 0, 1));
    p.push(Instr::Ebreak);
    let o = run_with(
        &rv32_lift_common::words_of(&p),
        &[],
        [1, 1, 1],
        [1, 1, 1],
        LiftConfig::default(),
    );
    ok(&o);
    assert_eq!(o.lifted.guest_blocks, n + 1);
    assert_eq!(o.lifted.kernel.blocks.len(), 1);
    assert_eq!(o.mem.lane(0).x[10], 1);
    // Over a limit the chain's last block tests it and the lane faults.
    let o = run_with(
        &rv32_lift_common::words_of(&p),
        &[],
        [1, 1, 1],
        [1, 1, 1],
        LiftConfig {
            cycle_limit: Some(n as u32 + 1),
            ..LiftConfig::default()
        },
    );
    assert!(o.result.is_err(), "{} instructions > {}", n + 2, n + 1);
}
