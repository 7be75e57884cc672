//! The device as a dynamic translator (issue 13): code the lift cannot see
//! before the launch runs (jump tables, function-pointer tables, code written at
//! run time after `fence.i`), a sparse image costs only what runs, invalid
//! targets fault naming target and jump, and faults and the cycle limit stay
//! exact across resume rounds. The C kernels (`tests/rv32/kernels/switch.c`,
//! `selfmod.c`, built by its build.sh) are checked against values computed here
//! and, when qemu-riscv32-static is installed (always under CI), against qemu
//! running the same image.

use std::process::Command;

use wavejit_frontend::rv32::lift::TrapCause;
use wavejit_frontend::rv32::load_elf;
use wavejit_runtime::mmio::regs::*;
use wavejit_runtime::mmio::{DeviceConfig, DeviceFaultKind, EngineChoice, GpgpuDevice};

const KERNELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/rv32/kernels");
const ENGINES: [EngineChoice; 2] = [EngineChoice::Jit, EngineChoice::Interpreter];
/// Lanes of the C kernels' launch (one block), as `qemu_start` runs them.
const LANES: u32 = 64;
const OUT: u64 = 0x30000;

fn device(engine: EngineChoice, cycle_limit: Option<u32>) -> GpgpuDevice {
    GpgpuDevice::new(DeviceConfig {
        engine,
        cycle_limit,
        ..DeviceConfig::default()
    })
    .expect("device")
}

fn load_words(d: &GpgpuDevice, addr: u64, words: &[u32]) {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    d.vram().write_bytes(addr, &bytes).expect("fits VRAM");
}

fn load_kernel(d: &GpgpuDevice, name: &str) -> u32 {
    let path = format!("{KERNELS}/{name}.elf");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let image = load_elf(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    for seg in &image.segments {
        let mut data = seg.data.clone();
        data.resize(seg.mem_size as usize, 0);
        d.vram()
            .write_bytes(u64::from(seg.vaddr), &data)
            .expect("segment fits VRAM");
    }
    image.entry
}

/// Launches `entry` on a 1-D grid; the ERROR_STATUS bits.
fn launch(d: &mut GpgpuDevice, entry: u32, grid: u32, block: u32) -> u32 {
    let mut w = |off: u64, v: u32| d.mmio_write(0, off, 4, u64::from(v));
    w(ERROR_STATUS, 0xF);
    w(GLOBAL_CTRL, 1);
    w(KERNEL_ADDR_LO, entry);
    for (i, (g, b)) in [(grid, block), (1, 1), (1, 1)].into_iter().enumerate() {
        w(GRID_DIM_X + 4 * i as u64, g);
        w(BLOCK_DIM_X + 4 * i as u64, b);
    }
    w(DISPATCH, 1);
    d.mmio_read(0, ERROR_STATUS, 4) as u32
}

fn words(d: &GpgpuDevice, addr: u64, n: usize) -> Vec<u32> {
    d.vram()
        .read_u32s(addr, n)
        .unwrap_or_else(|e| panic!("read {addr:#x}: {e}"))
}

fn rounds(d: &GpgpuDevice) -> u32 {
    d.last_report().map_or(0, |r| r.rounds)
}

/// qemu's output area (the first 2 * LANES words) for `<name>.qemu.elf`;
/// `None` (with a note) when qemu is not installed outside CI.
fn qemu_out(name: &str) -> Option<Vec<u32>> {
    let qemu = std::env::var("WAVEJIT_ORACLE_QEMU").unwrap_or("qemu-riscv32-static".into());
    let path = format!("{KERNELS}/{name}.qemu.elf");
    let out = match Command::new(&qemu).arg(&path).output() {
        Ok(out) => out,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "qemu missing under CI");
            eprintln!("SKIP qemu oracle: {qemu}: {e}");
            return None;
        }
    };
    assert!(out.status.success(), "{qemu} {path}: {:?}", out.status);
    let w: Vec<u32> = out
        .stdout
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    Some(w[..2 * LANES as usize].to_vec())
}

/// The device and qemu images must be the same bytes (only the ELF entry
/// differs), or qemu would not be an oracle for the device's code.
fn assert_same_image(name: &str) {
    let seg = |file: &str| {
        let bytes = std::fs::read(format!("{KERNELS}/{file}")).expect("kernel");
        let image = load_elf(&bytes).expect("elf");
        image
            .segments
            .iter()
            .map(|s| (s.vaddr, s.data.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        seg(&format!("{name}.elf")),
        seg(&format!("{name}.qemu.elf"))
    );
}

fn classify(k: u32, x: u32) -> u32 {
    match k {
        0 => x + 3,
        1 => x * 7,
        2 => x ^ 0x55,
        3 => x.wrapping_sub(11),
        4 => x << 2,
        5 => (x >> 1) | 0x100,
        6 => !x,
        _ => 0xdead,
    }
}

fn op(i: u32) -> u32 {
    match i % 4 {
        0 => i + 1000,
        1 => i * 3 + 1,
        2 => 0u32.wrapping_sub(i),
        _ => i.rotate_left(5),
    }
}

#[test]
fn gcc_jump_table_and_function_pointers_run() {
    assert_same_image("switch");
    let want: Vec<u32> = (0..LANES)
        .map(|i| classify(i % 8, i))
        .chain((0..LANES).map(op))
        .collect();
    if let Some(q) = qemu_out("switch") {
        assert_eq!(q, want, "qemu");
    }
    for engine in ENGINES {
        let mut d = device(engine, Some(100_000));
        let entry = load_kernel(&d, "switch");
        assert_eq!(launch(&mut d, entry, 2, 32), 0, "{:?}", d.last_fault());
        assert_eq!(words(&d, OUT, 2 * LANES as usize), want, "{engine:?}");
        // The case bodies and the functions were lifted on demand.
        let first = rounds(&d);
        assert!(first >= 1, "{engine:?}: {first} rounds");
        // A second launch of the same code lifts the learned targets up front.
        load_words(&d, OUT, &[0; 2 * LANES as usize]);
        assert_eq!(launch(&mut d, entry, 2, 32), 0, "{:?}", d.last_fault());
        assert_eq!(words(&d, OUT, 2 * LANES as usize), want, "{engine:?} again");
        assert_eq!(rounds(&d), 0, "{engine:?}: learned targets");
    }
}

#[test]
fn code_written_at_run_time_runs_after_fence_i() {
    assert_same_image("selfmod");
    let want: Vec<u32> = (0..LANES)
        .map(|i| 3 * i + 1)
        .chain((0..LANES).map(|i| 3 * i + 500))
        .collect();
    if let Some(q) = qemu_out("selfmod") {
        assert_eq!(q, want, "qemu");
    }
    for engine in ENGINES {
        let mut d = device(engine, Some(100_000));
        let entry = load_kernel(&d, "selfmod");
        assert_eq!(launch(&mut d, entry, 2, 32), 0, "{:?}", d.last_fault());
        assert_eq!(words(&d, OUT, 2 * LANES as usize), want, "{engine:?}");
    }
}

// ---- hand-assembled kernels ----------------------------------------------

fn i_type(op: u32, f3: u32, rd: u32, rs1: u32, imm: i32) -> u32 {
    ((imm as u32 & 0xfff) << 20) | (rs1 << 15) | (f3 << 12) | (rd << 7) | op
}
fn addi(rd: u32, rs1: u32, imm: i32) -> u32 {
    i_type(0x13, 0, rd, rs1, imm)
}
fn lui(rd: u32, imm: u32) -> u32 {
    (imm & 0xffff_f000) | (rd << 7) | 0x37
}
fn jalr(rd: u32, rs1: u32, imm: i32) -> u32 {
    i_type(0x67, 0, rd, rs1, imm)
}
fn lw(rd: u32, rs1: u32, imm: i32) -> u32 {
    i_type(0x03, 2, rd, rs1, imm)
}
fn sw(rs2: u32, rs1: u32, imm: i32) -> u32 {
    let i = imm as u32 & 0xfff;
    ((i >> 5) << 25) | (rs2 << 20) | (rs1 << 15) | (2 << 12) | ((i & 0x1f) << 7) | 0x23
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
fn beq(rs1: u32, rs2: u32, off: i32) -> u32 {
    branch(0, rs1, rs2, off)
}
fn bne(rs1: u32, rs2: u32, off: i32) -> u32 {
    branch(1, rs1, rs2, off)
}
const EBREAK: u32 = 0x0010_0073;
const ECALL: u32 = 0x0000_0073;
const NOP: u32 = 0x0000_0013;
const FENCE_I: u32 = 0x0000_100f;
/// csrrs x5, mhartid, x0
const HARTID_T0: u32 = 0xF140_22F3;

/// 300 x {beq zero,zero,+4004; 1,000 nops}; li a0,42; sw a0,0x700(zero);
/// ebreak: 1.2 MB of code of which 303 instructions run.
fn sparse_image() -> Vec<u32> {
    let mut code = Vec::new();
    for _ in 0..300 {
        code.push(beq(0, 0, 4004));
        code.extend(std::iter::repeat_n(NOP, 1000));
    }
    code.extend([addi(10, 0, 42), sw(10, 0, 0x700), EBREAK]);
    code
}

#[test]
fn sparse_image_costs_only_what_runs() {
    let code = sparse_image();
    assert!(code.len() * 4 > 1_200_000);
    for engine in ENGINES {
        let mut d = device(engine, Some(100_000));
        load_words(&d, 0, &code);
        assert_eq!(launch(&mut d, 0, 1, 4), 0, "{:?}", d.last_fault());
        assert_eq!(words(&d, 0x700, 1), vec![42]);
        let report = d.last_report().expect("report");
        assert_eq!(report.guest_blocks, 301, "{engine:?}");
        assert_eq!(report.rounds, 0);
    }
}

/// A 1.7 MB image whose reachable code exceeds one lift's discovery budget
/// (conditional branches over 1,000 nops each: both sides reachable) runs:
/// discovery stops at its budget instead of refusing the program (the lanes
/// take the branches, which discovery follows first).
#[test]
fn reachable_code_past_the_lift_budget_is_lifted_lazily() {
    let mut code = Vec::new();
    // x5 = 1 (never 0): every bne jumps over its nops.
    code.push(addi(5, 0, 1));
    for _ in 0..430 {
        code.push(bne(5, 0, 4004));
        code.extend(std::iter::repeat_n(NOP, 1000));
    }
    code.extend([addi(10, 0, 42), sw(10, 0, 0x700), EBREAK]);
    assert!(code.len() * 4 > 1_700_000);
    let mut d = device(EngineChoice::Jit, Some(100_000));
    load_words(&d, 0, &code);
    assert_eq!(launch(&mut d, 0, 1, 2), 0, "{:?}", d.last_fault());
    assert_eq!(words(&d, 0x700, 1), vec![42]);
}

/// Jump table in memory: lane i jumps to table[i % 3]; the targets store a
/// distinct value and end.
fn jump_table_kernel(table: [u32; 3]) -> Vec<u32> {
    let mut code = vec![
        HARTID_T0,                // 0x00 t0 = mhartid
        addi(6, 0, 3),            // 0x04 t1 = 3
        0x0262_F3B3,              // 0x08 remu t2, t0, t1
        i_type(0x13, 1, 7, 7, 2), // 0x0c slli t2, t2, 2
        lw(7, 7, 0x400),          // 0x10 t2 = table[t2] (table at 0x400)
        i_type(0x13, 1, 8, 5, 2), // 0x14 slli s0, t0, 2
        jalr(0, 7, 0),            // 0x18 jr t2
        EBREAK,                   // 0x1c
        // 0x20: target A
        addi(9, 0, 0x11),
        sw(9, 8, 0x700),
        EBREAK,
        // 0x2c: target B
        addi(9, 0, 0x22),
        sw(9, 8, 0x700),
        EBREAK,
    ];
    code.resize(0x100, 0);
    code.extend(table);
    code
}

#[test]
fn jalr_through_a_table_lifts_its_targets_on_demand() {
    for engine in ENGINES {
        let mut d = device(engine, Some(100_000));
        load_words(&d, 0, &jump_table_kernel([0x20, 0x2c, 0x2c]));
        assert_eq!(launch(&mut d, 0, 1, 6), 0, "{:?}", d.last_fault());
        assert_eq!(
            words(&d, 0x700, 6),
            vec![0x11, 0x22, 0x22, 0x11, 0x22, 0x22],
            "{engine:?}"
        );
    }
}

#[test]
fn invalid_targets_fault_naming_target_and_jump() {
    // Lane 2 jumps outside VRAM (64 MiB), lane 1 to a misaligned address; the
    // lowest lane's fault (lane 1) is reported, naming the target and the jalr.
    for engine in ENGINES {
        let mut d = device(engine, Some(100_000));
        load_words(&d, 0, &jump_table_kernel([0x20, 0x22, 0x0800_0000]));
        assert_eq!(launch(&mut d, 0, 1, 3), error::KERNEL_FAULT, "{engine:?}");
        let f = d.last_fault().expect("fault").clone();
        assert_eq!(
            f.kind,
            DeviceFaultKind::Trap(TrapCause::MisalignedTarget { target: 0x22 })
        );
        assert_eq!((f.pc, f.hartid), (Some(0x18), Some(1)), "{f}");
        let text = f.to_string();
        assert!(
            text.contains("0x00000022") && text.contains("0x00000018"),
            "{text}"
        );
        // Lane 0 ran to its end.
        assert_eq!(words(&d, 0x700, 1), vec![0x11]);

        let mut d = device(engine, Some(100_000));
        load_words(&d, 0, &jump_table_kernel([0x20, 0x2c, 0x0800_0000]));
        assert_eq!(launch(&mut d, 0, 1, 3), error::KERNEL_FAULT);
        let f = d.last_fault().expect("fault").clone();
        assert_eq!(
            f.kind,
            DeviceFaultKind::Trap(TrapCause::JumpOutsideCode {
                target: 0x0800_0000
            })
        );
        assert_eq!((f.pc, f.hartid), (Some(0x18), Some(2)));
        let text = f.to_string();
        assert!(
            text.contains("jump to 0x08000000, outside code memory at pc 0x00000018"),
            "{text}"
        );
    }
}

/// The lowest faulting lane is reported even when it faults only after a
/// resume: lane 0 jumps (unknown target) to an ecall, lane 1 hits an illegal
/// word in the first round.
#[test]
fn lowest_faulting_lane_across_rounds() {
    for engine in ENGINES {
        let mut d = device(engine, Some(100_000));
        let mut code = vec![
            HARTID_T0,       // 0x00
            bne(5, 0, 0x10), // 0x04 lanes != 0: to 0x14
            lw(7, 0, 0x400), // 0x08 t2 = 0x3c
            jalr(0, 7, 0),   // 0x0c jr t2 (unknown: lane 0 leaves)
            EBREAK,          // 0x10
            0xFFFF_FFFF,     // 0x14 illegal: lanes != 0 fault in round 1
        ];
        code.resize(0x3c / 4, 0);
        code.push(ECALL); // 0x3c
        code.resize(0x100, 0);
        code.push(0x3c);
        load_words(&d, 0, &code);
        assert_eq!(launch(&mut d, 0, 1, 2), error::KERNEL_FAULT);
        let f = d.last_fault().expect("fault").clone();
        assert_eq!(
            f.kind,
            DeviceFaultKind::Trap(TrapCause::Ecall),
            "{engine:?}"
        );
        assert_eq!((f.pc, f.hartid), (Some(0x3c), Some(0)));
        assert!(rounds(&d) >= 1);
    }
}

/// A loop that executes fence.i `n` times, then ebreak; retires 3n + 3.
fn fence_loop(n: i32, fence: u32) -> Vec<u32> {
    vec![
        addi(5, 0, n),   // 0x00
        fence,           // 0x04
        addi(5, 5, -1),  // 0x08
        bne(5, 0, -8),   // 0x0c
        sw(5, 0, 0x700), // 0x10
        EBREAK,          // 0x14
    ]
}

#[test]
fn cycle_limit_counts_across_resumes() {
    // 1 + 3 * 20 + 2 = 63 instructions (ebreak counts), 20 resume rounds.
    for engine in ENGINES {
        let mut d = device(engine, Some(63));
        load_words(&d, 0, &fence_loop(20, FENCE_I));
        assert_eq!(launch(&mut d, 0, 1, 2), 0, "{:?}", d.last_fault());
        assert_eq!(rounds(&d), 20);
        let mut d = device(engine, Some(62));
        load_words(&d, 0, &fence_loop(20, FENCE_I));
        assert_eq!(launch(&mut d, 0, 1, 2), error::KERNEL_FAULT);
        let f = d.last_fault().expect("fault").clone();
        assert_eq!(
            f.kind,
            DeviceFaultKind::Trap(TrapCause::CycleLimit { limit: 62 })
        );
        assert_eq!(f.hartid, Some(0));
        // Unlimited: the loop runs to its end.
        let mut d = device(engine, None);
        load_words(&d, 0, &fence_loop(20, FENCE_I));
        assert_eq!(launch(&mut d, 0, 1, 2), 0, "{:?}", d.last_fault());
    }
}

/// Patched code: the kernel overwrites the instruction at 0x18 (`li a0, 1`)
/// with `li a0, 2` and runs it. With fence.i (every FENCE.I encoding: the
/// reserved fields are ignored) the lane runs the new instruction, as qemu
/// does. Without it, the lane runs the instruction it was translated with (the
/// old one; RISC-V allows either without fence.i; qemu-user would see the new
/// one). A later launch lifts the code as it is then.
#[test]
fn patched_instruction_runs_after_fence_i_and_not_before() {
    let kernel = |fence: u32| {
        vec![
            lui(5, 0x0020_0000), // 0x00 t0 = 0x00200000
            addi(5, 5, 0x513),   // 0x04 t0 = 0x00200513 (li a0, 2)
            sw(5, 0, 0x18),      // 0x08 patch 0x18
            fence,               // 0x0c
            NOP,                 // 0x10
            NOP,                 // 0x14
            addi(10, 0, 1),      // 0x18 li a0, 1 (patched)
            sw(10, 0, 0x700),    // 0x1c
            EBREAK,              // 0x20
        ]
    };
    for fence in [
        0x0000_100f,
        0x0010_100f,
        0x0000_108f,
        0x0005_100f,
        0x0ff5_100f,
    ] {
        for engine in ENGINES {
            let mut d = device(engine, Some(100_000));
            load_words(&d, 0, &kernel(fence));
            assert_eq!(launch(&mut d, 0, 1, 1), 0, "{:?}", d.last_fault());
            assert_eq!(words(&d, 0x700, 1), vec![2], "{fence:#x} {engine:?}");
        }
    }
    for engine in ENGINES {
        let mut d = device(engine, Some(100_000));
        load_words(&d, 0, &kernel(NOP));
        assert_eq!(launch(&mut d, 0, 1, 1), 0, "{:?}", d.last_fault());
        assert_eq!(words(&d, 0x700, 1), vec![1], "no fence.i: old instruction");
        // The next launch reads the patched code.
        assert_eq!(launch(&mut d, 0, 1, 1), 0);
        assert_eq!(words(&d, 0x700, 1), vec![2], "next launch");
    }
}

/// Issue 14 item 10: `jalr ra, 0(t0)` with t0 = 0 reaches code at address 0
/// that no static walk from the entry (0x100) sees; the device runs it
/// (`li a0, 42; sw a0, 0x700(zero); ebreak`) instead of faulting with "not a
/// known instruction start".
#[test]
fn jalr_to_address_0_runs_the_code_there() {
    for engine in ENGINES {
        let mut d = device(engine, Some(100_000));
        load_words(&d, 0, &[addi(10, 0, 42), sw(10, 0, 0x700), EBREAK]);
        load_words(&d, 0x100, &[addi(5, 0, 0), jalr(1, 5, 0)]);
        assert_eq!(launch(&mut d, 0x100, 1, 1), 0, "{:?}", d.last_fault());
        assert_eq!(words(&d, 0x700, 1), vec![42], "{engine:?}");
    }
}
