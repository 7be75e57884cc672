//! Shared helpers of the rv32 lifter tests: a flat test VRAM at guest address 0,
//! a context area above 4 GiB, and a run-one-kernel function on the interpreter.

#![allow(dead_code)]

use std::ptr::NonNull;

use wavejit_frontend::rv32::lift::{self, LANE_BYTES, LaneContext, LiftConfig, LiftedKernel};
use wavejit_frontend::rv32::{AluImmOp, FReg, Instr, XReg, encode};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Access, AccessCause, Dispatch, Engine, Fault, GlobalMemory};

/// Instruction builders the tests share.
pub fn x(n: u8) -> XReg {
    XReg(n)
}
pub fn f(n: u8) -> FReg {
    FReg(n)
}
pub fn imm(op: AluImmOp, rd: u8, rs1: u8, imm: i32) -> Instr {
    Instr::OpImm {
        op,
        rd: x(rd),
        rs1: x(rs1),
        imm,
    }
}
pub fn lui(rd: u8, imm: u32) -> Instr {
    Instr::Lui { rd: x(rd), imm }
}

pub const VRAM_SIZE: usize = 1 << 20;
pub const CTX_BASE: u64 = 1 << 32;

/// VRAM at 0..VRAM_SIZE plus a context area at CTX_BASE.
pub struct TestMem {
    vram: Box<[u8]>,
    ctx: Box<[u8]>,
}

// SAFETY: the boxes never move or shrink while borrowed; lanes' races are the
// guest's business, as with any GlobalMemory.
unsafe impl Sync for TestMem {}

// SAFETY: translate returns pointers into the two boxes only, in bounds.
unsafe impl GlobalMemory for TestMem {
    fn translate(&self, addr: u64, len: u64, _: Access) -> Result<NonNull<u8>, AccessCause> {
        for (base, buf) in [(0u64, &self.vram), (CTX_BASE, &self.ctx)] {
            let size = buf.len() as u64;
            if addr >= base && addr < base + size {
                if addr + len > base + size {
                    return Err(AccessCause::OutOfBounds);
                }
                let p = buf.as_ptr().wrapping_add((addr - base) as usize) as *mut u8;
                return NonNull::new(p).ok_or(AccessCause::Unmapped);
            }
        }
        Err(AccessCause::Unmapped)
    }
}

impl TestMem {
    pub fn new(lanes: usize) -> TestMem {
        TestMem {
            vram: vec![0u8; VRAM_SIZE].into_boxed_slice(),
            ctx: vec![0u8; (lanes.max(1) as u64 * LANE_BYTES) as usize].into_boxed_slice(),
        }
    }

    pub fn write_words(&mut self, addr: usize, words: &[u32]) {
        for (i, w) in words.iter().enumerate() {
            self.vram[addr + 4 * i..addr + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
        }
    }

    pub fn word(&self, addr: usize) -> u32 {
        let b = &self.vram[addr..addr + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    pub fn words(&self, addr: usize, n: usize) -> Vec<u32> {
        (0..n).map(|i| self.word(addr + 4 * i)).collect()
    }

    pub fn fetch(&self, pc: u32) -> Option<u32> {
        let a = pc as usize;
        (a + 4 <= self.vram.len()).then(|| self.word(a))
    }

    pub fn lane(&self, i: usize) -> LaneContext {
        let o = i * LANE_BYTES as usize;
        LaneContext::parse(&self.ctx[o..o + LANE_BYTES as usize]).expect("record in range")
    }
}

pub struct Outcome {
    pub mem: TestMem,
    pub lifted: LiftedKernel,
    pub result: Result<(), Fault>,
}

impl Outcome {
    /// The trap site a faulting run stopped at.
    pub fn trap(&self) -> Option<lift::TrapSite> {
        match &self.result {
            Err(Fault {
                kind: wavejit_ir::FaultKind::Trap { code },
                ..
            }) => self.lifted.trap(*code).copied(),
            _ => None,
        }
    }
}

pub fn words_of(program: &[Instr]) -> Vec<u32> {
    program
        .iter()
        .map(|i| encode(i).expect("test instruction encodes"))
        .collect()
}

/// Loads `code` at 0 (and `data` at its addresses), lifts with context records and
/// runs grid x block lanes on the interpreter.
pub fn run_with(
    code: &[u32],
    data: &[(usize, Vec<u32>)],
    grid: [u32; 3],
    block: [u32; 3],
    mut opts: LiftConfig,
) -> Outcome {
    let lanes = (grid.iter().product::<u32>() * block.iter().product::<u32>()) as usize;
    let mut mem = TestMem::new(lanes);
    mem.write_words(0, code);
    for (addr, words) in data {
        mem.write_words(*addr, words);
    }
    opts.context_base.get_or_insert(CTX_BASE);
    let lifted = lift::lift(&|pc| mem.fetch(pc), 0, &opts).expect("lift");
    wavejit_ir::verify::verify(&lifted.kernel).unwrap_or_else(|e| {
        panic!(
            "lifted kernel does not verify: {e}\n{}",
            wavejit_ir::text::print(&lifted.kernel)
        )
    });
    let mut d = Dispatch::new(grid, block);
    d.wave_size = 32;
    d.step_limit = lifted.step_limit();
    let result = Interpreter.run(&lifted.kernel, &d, &mem);
    Outcome {
        mem,
        lifted,
        result,
    }
}

pub fn run(code: &[u32], lanes: u32) -> Outcome {
    run_with(code, &[], [1, 1, 1], [lanes, 1, 1], LiftConfig::default())
}
