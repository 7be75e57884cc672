//! The RV32 lifter merges repeated computations (`eliminate_common_subexpressions`):
//! a program that recomputes an address, an integer expression and a float
//! product lifts to as many IR instructions as the one that computes each
//! once, and both leave the same memory on the interpreter and the JIT. A
//! load repeated after a store to its address is not merged (it reads the
//! stored value).

mod rv32_lift_common;

use rv32_lift_common::{TestMem, f, imm, lui, words_of, x};
use wavejit_frontend::rv32::lift::{self, DispatchShape, LiftConfig};
use wavejit_frontend::rv32::*;
use wavejit_ir::interp::Interpreter;
use wavejit_ir::transform::eliminate_common_subexpressions;
use wavejit_ir::{Dispatch, Engine, Kernel};

const GRID: [u32; 3] = [2, 1, 1];
const BLOCK: [u32; 3] = [32, 1, 1];
const LANES: usize = 64;
const X: u32 = 0x1_0000;
const Y: u32 = 0x2_0000;
const Z: u32 = 0x3_0000;
const W1: u32 = 0x4_0000;
const W2: u32 = 0x5_0000;

fn op(op: AluOp, rd: u8, rs1: u8, rs2: u8) -> Instr {
    Instr::Op {
        op,
        rd: x(rd),
        rs1: x(rs1),
        rs2: x(rs2),
    }
}
fn sw(rs2: u8, rs1: u8) -> Instr {
    Instr::Store {
        kind: StoreKind::Word,
        rs1: x(rs1),
        rs2: x(rs2),
        offset: 0,
    }
}
fn fmul(rd: u8, rs: u8) -> Instr {
    Instr::FpArith {
        op: FpArithOp::Mul,
        rd: f(rd),
        rs1: f(rs),
        rs2: f(rs),
        rm: RoundingMode::Rne,
    }
}
fn fsw(rs2: u8, rs1: u8) -> Instr {
    Instr::Fsw {
        rs1: x(rs1),
        rs2: f(rs2),
        offset: 0,
    }
}

/// Lane i (of 2 blocks of 32): x[i] = x*x + 7, y[i] = x[i] read back, z[i] =
/// x*x + 7, w1[i] = w2[i] = (x as f32)^2. `twice`: the address of x[i], x*x + 7
/// and the product are computed a second time for their second use (in other
/// registers), else the first results are reused.
fn program(twice: bool) -> Vec<Instr> {
    let mut p = vec![
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: x(5),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO),
        },
        imm(AluImmOp::Srli, 6, 5, 13),
        imm(AluImmOp::Slli, 6, 6, 5),
        imm(AluImmOp::Andi, 7, 5, 31),
        op(AluOp::Or, 6, 6, 7),
        imm(AluImmOp::Slli, 7, 6, 2),
        lui(8, X),
        op(AluOp::Add, 8, 8, 7),
        Instr::Load {
            kind: LoadKind::Word,
            rd: x(10),
            rs1: x(8),
            offset: 0,
        },
        op(AluOp::Mul, 11, 10, 10),
        imm(AluImmOp::Addi, 11, 11, 7),
        sw(11, 8),
        Instr::FmvFromInt {
            rd: f(0),
            rs1: x(10),
        },
        fmul(1, 0),
    ];
    let (addr, sum, prod) = if twice {
        p.extend([
            lui(9, X),
            op(AluOp::Add, 9, 9, 7),
            op(AluOp::Mul, 13, 10, 10),
            imm(AluImmOp::Addi, 13, 13, 7),
            fmul(2, 0),
        ]);
        (9, 13, 2)
    } else {
        (8, 11, 1)
    };
    p.extend([
        // Reads what the store above wrote, not the x[i] read before it.
        Instr::Load {
            kind: LoadKind::Word,
            rd: x(12),
            rs1: x(addr),
            offset: 0,
        },
        lui(14, Y),
        op(AluOp::Add, 14, 14, 7),
        sw(12, 14),
        lui(15, Z),
        op(AluOp::Add, 15, 15, 7),
        sw(sum, 15),
        lui(16, W1),
        op(AluOp::Add, 16, 16, 7),
        fsw(1, 16),
        lui(16, W2),
        op(AluOp::Add, 16, 16, 7),
        fsw(prod, 16),
        Instr::Ebreak,
    ]);
    p
}

/// Lane inputs: mixed bits, with NaNs (a signalling and a quiet one with a
/// payload), infinity and a subnormal among them.
fn inputs() -> Vec<u32> {
    let mut v: Vec<u32> = (0..LANES as u32)
        .map(|i| i.wrapping_mul(0x9E37_79B9).rotate_left(i % 32) ^ 0x3f80_0000)
        .collect();
    v[3] = 0x7f80_0001;
    v[4] = 0xffc0_1234;
    v[5] = 0x7f80_0000;
    v[6] = 0x0000_0003;
    v
}

fn insts(k: &Kernel) -> usize {
    k.blocks.values().map(|b| b.insts.len()).sum()
}

/// The five output arrays.
fn outputs(mem: &TestMem) -> Vec<Vec<u32>> {
    [X, Y, Z, W1, W2]
        .iter()
        .map(|&a| mem.words(a as usize, LANES))
        .collect()
}

fn expected() -> Vec<Vec<u32>> {
    let sum: Vec<u32> = inputs()
        .iter()
        .map(|&v| v.wrapping_mul(v).wrapping_add(7))
        .collect();
    let prod: Vec<u32> = inputs()
        .iter()
        .map(|&v| {
            let r = f32::from_bits(v) * f32::from_bits(v);
            if r.is_nan() { 0x7fc0_0000 } else { r.to_bits() }
        })
        .collect();
    vec![sum.clone(), sum.clone(), sum, prod.clone(), prod]
}

/// Lifted memory, kernel and interpreter run of `program(twice)` (as
/// `run_with`, but without context records: their exit stores of every
/// register, and the fflags they make the lift track, differ between the two
/// programs).
struct Run {
    mem: TestMem,
    kernel: Kernel,
}

fn lift_and_run(twice: bool, shape: Option<DispatchShape>) -> Run {
    let mut mem = TestMem::new(LANES);
    mem.write_words(0, &words_of(&program(twice)));
    mem.write_words(X as usize, &inputs());
    let opts = LiftConfig {
        shape,
        ..LiftConfig::default()
    };
    let lifted = lift::lift(&|pc| mem.fetch(pc), 0, &opts).expect("lift");
    wavejit_ir::verify::verify(&lifted.kernel).expect("lifted kernel verifies");
    let mut d = Dispatch::new(GRID, BLOCK);
    d.wave_size = 32;
    d.step_limit = lifted.step_limit();
    if let Err(e) = Interpreter.run(&lifted.kernel, &d, &mem) {
        let site = match e.kind {
            wavejit_ir::FaultKind::Trap { code } => lifted.trap(code).copied(),
            _ => None,
        };
        panic!("kernel faulted: {e} ({site:?})");
    }
    Run {
        mem,
        kernel: lifted.kernel,
    }
}

/// The memory `kernel` leaves on the JIT's gang and lane cores.
fn jit_outputs(kernel: &Kernel, twice: bool) -> Vec<Vec<Vec<u32>>> {
    use wavejit_jit::Core::{Gang, Lanes};
    [Gang, Lanes]
        .into_iter()
        .map(|core| {
            let mut mem = TestMem::new(LANES);
            mem.write_words(0, &words_of(&program(twice)));
            mem.write_words(X as usize, &inputs());
            let jit = wavejit_jit::Jit::new(wavejit_jit::JitConfig {
                core,
                threads: 1,
                interp_below: 0,
                parallel_min_work: 0,
                ..wavejit_jit::JitConfig::default()
            });
            let mut d = Dispatch::new(GRID, BLOCK);
            d.wave_size = 32;
            d.step_limit = u64::MAX;
            jit.run(kernel, &d, &mem)
                .unwrap_or_else(|e| panic!("{core:?}: {e}"));
            assert_eq!(jit.interpreter_fallbacks(), 0, "{core:?} compiled");
            outputs(&mem)
        })
        .collect()
}

#[test]
fn repeated_computations_cost_nothing_and_run_the_same() {
    let shaped = Some(DispatchShape {
        num_workgroups: GRID,
        workgroup_size: BLOCK,
    });
    for shape in [shaped, None] {
        let once = lift_and_run(false, shape);
        let twice = lift_and_run(true, shape);
        assert_eq!(outputs(&once.mem), expected(), "once, shape {shape:?}");
        assert_eq!(outputs(&twice.mem), expected(), "twice, shape {shape:?}");
        for (r, t) in [(&once, false), (&twice, true)] {
            for (core, out) in jit_outputs(&r.kernel, t).iter().enumerate() {
                assert_eq!(*out, expected(), "JIT core {core}, twice {t}");
            }
        }
        // Five more guest instructions (lui, add, mul, addi, fmul.s), no
        // more IR instructions: each merged into its twin (the second load
        // stays: a store to its address lies between).
        let (n_once, n_twice) = (insts(&once.kernel), insts(&twice.kernel));
        assert_eq!(
            n_twice,
            n_once,
            "shape {shape:?}\nonce:\n{}\ntwice:\n{}",
            wavejit_ir::text::print(&once.kernel),
            wavejit_ir::text::print(&twice.kernel)
        );
        let loads = |k: &Kernel| {
            k.insts
                .values()
                .filter(|d| matches!(d.kind, wavejit_ir::InstKind::Load(_)))
                .count()
        };
        assert_eq!(loads(&twice.kernel), 2);
        // Nothing is left to merge.
        let mut k = twice.kernel.clone();
        assert_eq!(eliminate_common_subexpressions(&mut k), Ok(0));
    }
}
