//! Batch images: the same bytes for qemu-riscv32 (as an ELF with a save/write/next
//! stub) and for wavejit (the stub replaced by `ebreak`).
//!
//! Layout (guest addresses):
//! - 0x000..0x104: register dump (x0..x31, f0..f31, fcsr); 0x104: program counter
//! - 0x200: program entry points; 0x400: their data regions (128 programs)
//! - STUB (0x1000): qemu: dump registers + the program's data region to stdout,
//!   run the next program or exit; wavejit: `ebreak`
//! - 0x1800: qemu entry (counter = 0, jump to program 0)
//! - 0x2000..: programs; DATA_BASE + i * DATA_SIZE: data regions (random bytes)

use wavejit_frontend::rv32::*;

use super::program::{DATA_BASE, DATA_SIZE, Program, STUB};
use super::rng::Rng;

pub const DUMP_BYTES: usize = 0x104;
pub const COUNTER: i32 = 0x104;
pub const TABLE: i32 = 0x200;
/// Data-region address of each program (the stub dumps it).
pub const DATA_TABLE: i32 = 0x400;
pub const MAX_PROGRAMS: usize = 128;
pub const ENTRY: u32 = 0x1800;
pub const CODE_BASE: u32 = 0x2000;

pub struct Batch {
    /// The wavejit image (loaded at VRAM 0).
    pub image: Vec<u8>,
    /// Entry pc of each program.
    pub entries: Vec<u32>,
    /// The qemu ELF file bytes.
    pub elf: Vec<u8>,
}

fn put(image: &mut Vec<u8>, addr: u32, words: &[u32]) {
    let a = addr as usize;
    let end = a + 4 * words.len();
    if image.len() < end {
        image.resize(end, 0);
    }
    for (i, w) in words.iter().enumerate() {
        image[a + 4 * i..a + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
}

fn enc(p: &[Instr]) -> Vec<u32> {
    p.iter()
        .map(|i| encode(i).unwrap_or_else(|e| panic!("generator made {e}")))
        .collect()
}

fn x(n: u8) -> XReg {
    XReg(n)
}

fn stub(programs: u32) -> Vec<Instr> {
    let mut s = Vec::new();
    for r in 1..32u8 {
        s.push(Instr::Store {
            kind: StoreKind::Word,
            rs1: XReg::ZERO,
            rs2: x(r),
            offset: 4 * i32::from(r),
        });
    }
    for r in 0..32u8 {
        s.push(Instr::Fsw {
            rs1: XReg::ZERO,
            rs2: FReg(r),
            offset: 0x80 + 4 * i32::from(r),
        });
    }
    s.push(Instr::Csr {
        op: CsrOp::ReadSet,
        rd: x(5),
        csr: Csr::Fcsr,
        src: CsrSrc::Reg(XReg::ZERO),
    });
    s.push(Instr::Store {
        kind: StoreKind::Word,
        rs1: XReg::ZERO,
        rs2: x(5),
        offset: 0x100,
    });
    let addi = |rd: u8, rs1: u8, imm: i32| Instr::OpImm {
        op: AluImmOp::Addi,
        rd: x(rd),
        rs1: x(rs1),
        imm,
    };
    // write(1, 0, DUMP_BYTES)
    s.extend([
        addi(10, 0, 1),
        addi(11, 0, 0),
        addi(12, 0, DUMP_BYTES as i32),
        addi(17, 0, 64),
        Instr::Ecall,
    ]);
    // write(1, DATA_BASE + idx * DATA_SIZE, DATA_SIZE)
    s.push(Instr::Load {
        kind: LoadKind::Word,
        rd: x(6),
        rs1: XReg::ZERO,
        offset: COUNTER,
    });
    s.push(Instr::OpImm {
        op: AluImmOp::Slli,
        rd: x(7),
        rs1: x(6),
        imm: 2,
    });
    s.push(Instr::Load {
        kind: LoadKind::Word,
        rd: x(11),
        rs1: x(7),
        offset: DATA_TABLE,
    });
    s.extend([
        addi(10, 0, 1),
        addi(12, 0, DATA_SIZE as i32),
        addi(17, 0, 64),
        Instr::Ecall,
    ]);
    // next program or exit(0)
    s.push(addi(6, 6, 1));
    s.push(Instr::Store {
        kind: StoreKind::Word,
        rs1: XReg::ZERO,
        rs2: x(6),
        offset: COUNTER,
    });
    s.push(addi(28, 0, programs as i32));
    s.push(Instr::Branch {
        cond: BranchCond::Geu,
        rs1: x(6),
        rs2: x(28),
        offset: 20,
    });
    s.push(Instr::OpImm {
        op: AluImmOp::Slli,
        rd: x(7),
        rs1: x(6),
        imm: 2,
    });
    s.push(Instr::Load {
        kind: LoadKind::Word,
        rd: x(29),
        rs1: x(7),
        offset: TABLE,
    });
    s.push(Instr::Jalr {
        rd: XReg::ZERO,
        rs1: x(29),
        offset: 0,
    });
    s.push(Instr::Ebreak); // never reached
    s.extend([addi(10, 0, 0), addi(17, 0, 93), Instr::Ecall]);
    s
}

fn entry_code() -> Vec<Instr> {
    vec![
        Instr::Store {
            kind: StoreKind::Word,
            rs1: XReg::ZERO,
            rs2: XReg::ZERO,
            offset: COUNTER,
        },
        Instr::Load {
            kind: LoadKind::Word,
            rd: x(29),
            rs1: XReg::ZERO,
            offset: TABLE,
        },
        Instr::Jalr {
            rd: XReg::ZERO,
            rs1: x(29),
            offset: 0,
        },
    ]
}

/// Minimal ELF32 RISC-V executable: one RWX PT_LOAD of `image` at vaddr 0.
fn elf(image: &[u8], entry: u32) -> Vec<u8> {
    let mut e = Vec::with_capacity(0x1000 + image.len());
    e.extend_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1, 1, 0]);
    e.extend_from_slice(&[0; 8]);
    let h16 = |e: &mut Vec<u8>, v: u16| e.extend_from_slice(&v.to_le_bytes());
    let h32 = |e: &mut Vec<u8>, v: u32| e.extend_from_slice(&v.to_le_bytes());
    h16(&mut e, 2); // ET_EXEC
    h16(&mut e, 243); // EM_RISCV
    h32(&mut e, 1);
    h32(&mut e, entry);
    h32(&mut e, 52); // phoff
    h32(&mut e, 0); // shoff
    h32(&mut e, 0x2); // EF_RISCV_FLOAT_ABI_SINGLE
    h16(&mut e, 52);
    h16(&mut e, 32);
    h16(&mut e, 1);
    h16(&mut e, 40);
    h16(&mut e, 0);
    h16(&mut e, 0);
    // PT_LOAD
    h32(&mut e, 1);
    h32(&mut e, 0x1000);
    h32(&mut e, 0);
    h32(&mut e, 0);
    h32(&mut e, image.len() as u32);
    h32(&mut e, image.len() as u32);
    h32(&mut e, 7);
    h32(&mut e, 0x1000);
    e.resize(0x1000, 0);
    e.extend_from_slice(image);
    e
}

pub fn build(programs: &[Program], data_seed: u64) -> Batch {
    assert!(programs.len() <= MAX_PROGRAMS);
    let mut image = Vec::new();
    let mut entries = Vec::new();
    let mut pc = CODE_BASE;
    for p in programs {
        let words = enc(&p.assemble(pc));
        put(&mut image, pc, &words);
        entries.push(pc);
        pc += 4 * words.len() as u32;
        assert!(pc < DATA_BASE, "programs overflow into the data regions");
    }
    put(&mut image, TABLE as u32, &entries);
    let regions: Vec<u32> = programs.iter().map(|p| p.data_region()).collect();
    put(&mut image, DATA_TABLE as u32, &regions);
    for p in programs {
        let mut rng = Rng::new(data_seed ^ u64::from(p.index).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let data: Vec<u32> = (0..DATA_SIZE / 4).map(|_| rng.next_u32()).collect();
        put(&mut image, p.data_region(), &data);
    }
    let end = DATA_BASE + (programs.iter().map(|p| p.index).max().unwrap_or(0) + 1) * DATA_SIZE;
    if image.len() < end as usize {
        image.resize(end as usize, 0);
    }
    let mut qemu_image = image.clone();
    put(&mut qemu_image, STUB, &enc(&stub(programs.len() as u32)));
    put(&mut qemu_image, ENTRY, &enc(&entry_code()));
    put(&mut image, STUB, &enc(&[Instr::Ebreak]));
    Batch {
        elf: elf(&qemu_image, ENTRY),
        image,
        entries,
    }
}
