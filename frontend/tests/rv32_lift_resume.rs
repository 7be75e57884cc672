//! Resumable exits of the rv32 lifter (`lift::resume`), on the interpreter: a
//! lane that jumps where the translation has no code, or executes fence.i,
//! stores its state and ends; a resume kernel lifted with that pc as a root
//! restores it and runs on. Discovery reads only what a lane can reach and,
//! with resumable exits, stops at its budget.

mod rv32_lift_common;

use rv32_lift_common::{CTX_BASE, TestMem, run_with};
use wavejit_frontend::rv32::lift::resume::{STATUS_FENCE_I, STATUS_JUMP, STATUS_NONE};
use wavejit_frontend::rv32::lift::{
    self, LaneState, LiftConfig, LiftError, ResumeConfig, STATE_BYTES, TrapCause,
};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Dispatch, Engine};

/// Resume records inside the test VRAM (guest-visible here; the device puts
/// them above 4 GiB).
const STATE: u64 = 0x8_0000;

fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (rd << 7) | 0x13
}
fn lw(rd: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (2 << 12) | (rd << 7) | 0x03
}
fn sw(rs2: u32, rs1: u32, imm: i32) -> u32 {
    let i = imm as u32 & 0xfff;
    ((i >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (2 << 12) | ((i & 0x1f) << 7) | 0x23
}
fn jalr(rd: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (rd << 7) | 0x67
}
fn branch(f3: u32, rs1: u32, rs2: u32, off: i32) -> u32 {
    let o = off as u32;
    ((o >> 12 & 1) << 31)
        | ((o >> 5 & 0x3f) << 25)
        | (rs2 << 20)
        | (rs1 << 15)
        | (f3 << 12)
        | ((o >> 1 & 0xf) << 8)
        | ((o >> 11 & 1) << 7)
        | 0x63
}
const EBREAK: u32 = 0x0010_0073;
const NOP: u32 = 0x0000_0013;
const FENCE_I: u32 = 0x0000_100f;

fn state(mem: &TestMem, lane: usize) -> LaneState {
    let base = STATE as usize + lane * STATE_BYTES as usize;
    let words = mem.words(base, STATE_BYTES as usize / 4);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    LaneState::parse(&bytes).expect("record")
}

fn resumable(entry: bool, roots: Vec<u32>) -> LiftConfig {
    LiftConfig {
        resume: Some(ResumeConfig { base: STATE, entry }),
        extra_entries: roots,
        context_base: Some(CTX_BASE),
        ..LiftConfig::default()
    }
}

/// Runs a kernel lifted from the memory as it is now on `lanes` lanes.
fn run_again(mem: &TestMem, opts: &LiftConfig, lanes: u32) -> lift::LiftedKernel {
    let lifted = lift::lift(&|pc| mem.fetch(pc), 0, opts).expect("lift");
    wavejit_ir::verify::verify(&lifted.kernel).expect("verifies");
    let mut d = Dispatch::new([1, 1, 1], [lanes, 1, 1]);
    d.wave_size = 32;
    d.step_limit = lifted.step_limit();
    Interpreter.run(&lifted.kernel, &d, mem).expect("runs");
    lifted
}

#[test]
fn unknown_jalr_target_leaves_with_the_state_and_resumes_there() {
    // 0x00 x6 = 7 ; 0x04 x5 = [0x100] = 0x10 ; 0x08 jalr ra, 0(x5) ; 0x0c ebreak
    // 0x10 sw x6, 0x200(x0) ; 0x14 sw ra, 0x204(x0) ; 0x18 ebreak
    let code = [
        addi(6, 0, 7),
        lw(5, 0, 0x100),
        jalr(1, 5, 0),
        EBREAK,
        sw(6, 0, 0x200),
        sw(1, 0, 0x204),
        EBREAK,
    ];
    let o = run_with(
        &code,
        &[(0x100, vec![0x10])],
        [1, 1, 1],
        [2, 1, 1],
        resumable(false, vec![]),
    );
    assert!(o.result.is_ok(), "{:?}", o.result);
    for lane in 0..2 {
        let s = state(&o.mem, lane);
        assert_eq!((s.status, s.pc), (STATUS_JUMP, 0x10));
        assert_eq!((s.x[1], s.x[5], s.x[6]), (0x0c, 0x10, 7), "link written");
        assert_eq!(s.icount, 3, "three instructions retired");
        let site = o.lifted.trap(s.site).expect("site");
        assert_eq!(
            (site.cause, site.pc),
            (TrapCause::UnknownJumpTarget, Some(8))
        );
        assert!(!o.mem.lane(lane).done, "the lane has not ended");
    }
    assert_eq!(o.mem.word(0x200), 0);
    let k = run_again(&o.mem, &resumable(true, vec![0x10]), 2);
    assert_eq!(k.roots, vec![0, 0x10]);
    assert_eq!(o.mem.words(0x200, 2), vec![7, 0x0c]);
    for lane in 0..2 {
        assert_eq!(state(&o.mem, lane).status, STATUS_NONE, "record consumed");
        assert!(o.mem.lane(lane).done);
        assert_eq!(o.mem.lane(lane).pc, 0x18);
    }
}

#[test]
fn fence_i_leaves_and_the_resume_runs_the_new_code() {
    // Patch 0x10 with `addi x6, x0, 2` (loaded from 0x100), fence.i, run it.
    let patched = addi(6, 0, 2);
    let code = [
        lw(5, 0, 0x100), // 0x00
        sw(5, 0, 0x10),  // 0x04 patch
        FENCE_I,         // 0x08
        NOP,             // 0x0c
        addi(6, 0, 1),   // 0x10 (patched to x6 = 2)
        sw(6, 0, 0x200), // 0x14
        EBREAK,          // 0x18
    ];
    let o = run_with(
        &code,
        &[(0x100, vec![patched])],
        [1, 1, 1],
        [1, 1, 1],
        resumable(false, vec![]),
    );
    assert!(o.result.is_ok(), "{:?}", o.result);
    let s = state(&o.mem, 0);
    assert_eq!((s.status, s.pc, s.icount), (STATUS_FENCE_I, 0x0c, 3));
    assert_eq!(o.mem.word(0x10), patched);
    run_again(&o.mem, &resumable(true, vec![0x0c]), 1);
    assert_eq!(o.mem.word(0x200), 2, "the patched instruction ran");

    // Without resumable exits fence.i is a no-op and the lift's (old) word
    // runs.
    let o = run_with(
        &code,
        &[(0x100, vec![patched])],
        [1, 1, 1],
        [1, 1, 1],
        LiftConfig::default(),
    );
    assert!(o.result.is_ok());
    assert_eq!(o.mem.word(0x200), 1);
}

/// 200 x {beq zero, zero, +4004; 1,000 nops}; li a0, 42; sw a0, 0x200; ebreak
/// (the image has 300; the test VRAM is 1 MiB).
#[test]
fn always_taken_branches_do_not_discover_what_they_jump_over() {
    let mut code = Vec::new();
    for _ in 0..200 {
        code.push(branch(0, 0, 0, 4004));
        code.extend(std::iter::repeat_n(NOP, 1000));
    }
    code.extend([addi(10, 0, 42), sw(10, 0, 0x200), EBREAK]);
    let mut mem = TestMem::new(1);
    mem.write_words(0, &code);
    let lifted = lift::lift(&|pc| mem.fetch(pc), 0, &LiftConfig::default()).expect("lifts");
    assert_eq!(lifted.guest_blocks, 201);
    assert_eq!(lifted.words.len(), 203, "only the words that run were read");
    // bne x5, x5 never jumps: its target is not read.
    let never = [branch(1, 5, 5, 0x40), EBREAK];
    let mut mem = TestMem::new(1);
    mem.write_words(0, &never);
    let lifted = lift::lift(&|pc| mem.fetch(pc), 0, &LiftConfig::default()).expect("lifts");
    assert_eq!(lifted.words.keys().copied().collect::<Vec<_>>(), vec![0, 4]);
}

#[test]
fn discovery_past_its_budget_leaves_lanes_or_refuses_without_resume() {
    // x5 = [0x7f0] (0, unknown to the lift) ; x6 = 0x55 ;
    // 24 x {bne x5, x0, +0x44; 16 nops} ; sw x6, 0x7f4 ; ebreak: more than 64
    // instructions reachable, and the lane runs through all of them.
    let mut code = vec![lw(5, 0, 0x7f0), addi(6, 0, 0x55)];
    for _ in 0..24 {
        code.push(branch(1, 5, 0, 0x44));
        code.extend(std::iter::repeat_n(NOP, 16));
    }
    code.extend([sw(6, 0, 0x7f4), EBREAK]);
    assert!(code.len() * 4 < 0x7f0);
    let mut mem = TestMem::new(1);
    mem.write_words(0, &code);
    let small = |resume: bool, roots: Vec<u32>, max_instructions: usize| LiftConfig {
        max_instructions,
        resume: resume.then_some(ResumeConfig {
            base: STATE,
            entry: roots.len() > 1,
        }),
        extra_entries: roots.get(1..).map(<[u32]>::to_vec).unwrap_or_default(),
        ..LiftConfig::default()
    };
    let err =
        lift::lift(&|pc| mem.fetch(pc), 0, &small(false, vec![], 256)).expect_err("too large");
    assert_eq!(err, LiftError::TooLarge { limit: 256 });
    assert_eq!(err.to_string(), "more than 256 instructions reachable");
    // Lazy: each lift reads at most twice its budget; lanes that reach code
    // it did not read leave, and the next lift starts there. The runtime's
    // loop, in small.
    let mut roots = vec![0];
    let mut lifts = 0;
    loop {
        let k = run_again(&mem, &small(true, roots.clone(), 256), 1);
        assert!(k.words.len() <= 512, "{} words", k.words.len());
        lifts += 1;
        let s = state(&mem, 0);
        if s.status == STATUS_NONE {
            break;
        }
        assert_eq!(s.status, STATUS_JUMP);
        assert!(
            lifts < 40 && !roots.contains(&s.pc),
            "no progress at {:#x}",
            s.pc
        );
        roots.push(s.pc);
    }
    assert_eq!(mem.word(0x7f4), 0x55, "ran to its end");
    assert!(lifts > 2, "{lifts} lifts");
    // The bound on one lift is about what runs: the blocks at the roots alone
    // (what the lanes ran) over twice the budget are refused.
    let err = lift::lift(&|pc| mem.fetch(pc), 0, &small(true, roots, 16)).expect_err("bound");
    assert_eq!(err, LiftError::RunsTooMuch { limit: 32 });
    assert_eq!(
        err.to_string(),
        "more than 32 instructions to lift for the code the lanes run"
    );
}

/// Kernels whose lanes cannot leave (every jump known) lift to the same IR
/// with resumable exits as without: no cost where nothing is dynamic. The
/// lift snapshot inputs and the gcc-built kernels (call/ret through `ra`).
#[test]
fn kernels_that_cannot_leave_lift_unchanged() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut images: Vec<(String, Vec<u32>)> = Vec::new();
    for name in ["saxpy", "collatz"] {
        let path = root.join(format!("tests/lift/in/{name}.rv32"));
        let src = std::fs::read_to_string(&path).expect("snapshot input");
        let words = src
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .filter(|l| !l.is_empty())
            .map(|w| u32::from_str_radix(w, 16).expect("hex word"))
            .collect();
        images.push((format!("{name}.rv32"), words));
        let bin = root.join(format!("../tests/rv32/kernels/{name}.bin"));
        let bytes = std::fs::read(&bin).expect("kernel image");
        let words = bytes
            .chunks(4)
            .map(|c| {
                let mut w = [0u8; 4];
                w[..c.len()].copy_from_slice(c);
                u32::from_le_bytes(w)
            })
            .collect();
        images.push((format!("{name}.bin"), words));
    }
    for (name, words) in images {
        let fetch = |pc: u32| words.get((pc / 4) as usize).copied();
        let shape = Some(lift::DispatchShape {
            num_workgroups: [64, 1, 1],
            workgroup_size: [256, 1, 1],
        });
        let plain = LiftConfig {
            shape,
            ..LiftConfig::default()
        };
        let with = LiftConfig {
            resume: Some(ResumeConfig {
                base: STATE,
                entry: false,
            }),
            ..plain.clone()
        };
        let a = lift::lift(&fetch, 0, &plain).expect("lift");
        let b = lift::lift(&fetch, 0, &with).expect("lift");
        assert!(!b.leaves, "{name}");
        assert_eq!(
            wavejit_ir::text::print(&a.kernel),
            wavejit_ir::text::print(&b.kernel),
            "{name}"
        );
    }
}

/// A `jalr` whose target a block-local constant decides but which is no
/// instruction start traps at the jalr naming the target, with or without
/// resumable exits (the runtime could not lift there either).
#[test]
fn constant_misaligned_jalr_target_traps_at_the_jalr() {
    // li t0, 0x12 ; jalr zero, 0(t0) ; ebreak
    let code = [addi(5, 0, 0x12), jalr(0, 5, 0), EBREAK];
    for opts in [LiftConfig::default(), resumable(false, vec![])] {
        let o = run_with(&code, &[], [1, 1, 1], [2, 1, 1], opts);
        let t = o.trap().expect("trap");
        assert_eq!(t.cause, TrapCause::MisalignedTarget { target: 0x12 });
        assert_eq!(t.pc, Some(4));
        assert!(!o.lifted.leaves);
    }
}
