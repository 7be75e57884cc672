//! Fuzz target of MMIO access sequences on the RV32 device: per case the same
//! random sequence of register, VRAM, MSI-X and unmapped accesses of every
//! size (and DISPATCH and DMA starts with valid or wild fields, over a small
//! kernel, garbage or nothing) runs on a device with the interpreter and one
//! with the JIT. Seeds (`w BAR OFFSET SIZE VALUE` / `r BAR OFFSET SIZE` per
//! line, hex) come first.
//!
//! Checked after every access: nothing panicked; it returned within the
//! dispatch budget; the identification registers read their constants;
//! GLOBAL_STATUS is READY (never BUSY after an access returns) with ERROR
//! exactly when ERROR_STATUS is non-zero; a KERNEL_FAULT an access raises
//! has a recorded fault; a VRAM write in range reads back; a reset clears the errors. Both
//! engines read the same value at every read.

#[path = "../../frontend/tests/fuzz_support/mod.rs"]
mod fuzz_support;

use std::time::{Duration, Instant};

use fuzz_support::{Rng, corpus, long_cases};
use wavejit_ir::Budget;
use wavejit_runtime::mmio::regs::*;
use wavejit_runtime::mmio::{DeviceConfig, EngineChoice, GpgpuDevice, VecHost};

const VRAM: u64 = 1 << 20;
const HOST_BASE: u64 = 0x10_0000_0000;

#[derive(Clone, Copy, Debug)]
enum Access {
    Read {
        bar: u32,
        off: u64,
        size: u32,
    },
    Write {
        bar: u32,
        off: u64,
        size: u32,
        value: u64,
    },
}

fn device(engine: EngineChoice) -> GpgpuDevice {
    let mut d = GpgpuDevice::new(DeviceConfig {
        vram_size: VRAM,
        cycle_limit: Some(2_000),
        engine,
        ..DeviceConfig::default()
    })
    .expect("device");
    d.set_budget(Budget {
        time_limit: Some(Duration::from_millis(100)),
        max_work_items: 1 << 14,
        cancel: None,
    });
    d.set_dma_host(Box::new(VecHost {
        base: HOST_BASE,
        bytes: vec![0x5a; 4096],
    }));
    d
}

const REGS: &[u64] = &[
    DEV_ID,
    DEV_VERSION,
    DEV_CAPS,
    VRAM_SIZE_LO,
    VRAM_SIZE_HI,
    GLOBAL_CTRL,
    GLOBAL_STATUS,
    ERROR_STATUS,
    IRQ_ENABLE,
    IRQ_STATUS,
    IRQ_ACK,
    KERNEL_ADDR_LO,
    KERNEL_ADDR_HI,
    KERNEL_ARGS_LO,
    KERNEL_ARGS_HI,
    GRID_DIM_X,
    GRID_DIM_X + 4,
    GRID_DIM_X + 8,
    BLOCK_DIM_X,
    BLOCK_DIM_X + 4,
    BLOCK_DIM_X + 8,
    SHARED_MEM_SIZE,
    DISPATCH,
    DMA_SRC_LO,
    DMA_SRC_HI,
    DMA_DST_LO,
    DMA_DST_HI,
    DMA_SIZE,
    DMA_CTRL,
    DMA_STATUS,
    THREAD_ID_X,
    BLOCK_ID_X,
    WARP_ID,
    LANE_ID,
    BARRIER,
    THREAD_MASK,
    MSIX_TABLE,
    MSIX_TABLE + 0x3c,
    MSIX_PBA,
];

/// Stores each lane's hartid at 0x4000 + 4 * hartid, then ebreak.
const KERNEL: &[u32] = &[
    0xf140_22f3, // csrr t0, mhartid
    0x0022_9313, // slli t1, t0, 2
    0x0000_43b7, // lui t2, 4
    0x0073_0333, // add t1, t1, t2
    0x0053_2023, // sw t0, 0(t1)
    0x0010_0073, // ebreak
];

fn sequence(rng: &mut Rng) -> Vec<Access> {
    let mut out = Vec::new();
    // Code at VRAM 0: a small kernel, garbage, or nothing.
    match rng.below(3) {
        0 => {
            for (i, &w) in KERNEL.iter().enumerate() {
                let off = 4 * i as u64;
                out.push(Access::Write {
                    bar: 2,
                    off,
                    size: 4,
                    value: u64::from(w),
                });
            }
        }
        1 => {
            for i in 0..6 {
                out.push(Access::Write {
                    bar: 2,
                    off: 4 * i,
                    size: 4,
                    value: rng.next(),
                });
            }
        }
        _ => {}
    }
    for _ in 0..=rng.below(60) {
        let size = if rng.chance(80) {
            4
        } else {
            rng.pick(&[0, 1, 2, 3, 8, 16])
        };
        let value = match rng.below(4) {
            0 => rng.next(),
            1 => rng.below(4),
            2 => rng.pick(&[0xffff_ffff, 0x8000, VRAM, VRAM - 4, HOST_BASE, 0x1_0000]),
            _ => rng.below(64),
        };
        let access = match rng.below(10) {
            0..=4 => {
                let off = if rng.chance(90) {
                    rng.pick(REGS)
                } else {
                    rng.below(BAR0_SIZE + 8)
                };
                if rng.chance(60) {
                    Access::Write {
                        bar: 0,
                        off,
                        size,
                        value,
                    }
                } else {
                    Access::Read { bar: 0, off, size }
                }
            }
            5 | 6 => {
                let off = match rng.below(4) {
                    0 => VRAM - rng.below(16),
                    1 => rng.next(),
                    _ => rng.below(VRAM),
                };
                if rng.chance(50) {
                    Access::Write {
                        bar: 2,
                        off,
                        size,
                        value,
                    }
                } else {
                    Access::Read { bar: 2, off, size }
                }
            }
            7 => {
                // A launch: grid and block, then DISPATCH.
                for (reg, v) in [
                    (GRID_DIM_X, rng.pick(&[1, 2, 0, 4096, 0xffff_ffff])),
                    (GRID_DIM_X + 4, 1),
                    (GRID_DIM_X + 8, rng.pick(&[1, 1, 1, 2, 0])),
                    (BLOCK_DIM_X, rng.pick(&[1, 32, 0, 8192, 8193])),
                    (BLOCK_DIM_X + 4, 1),
                    (BLOCK_DIM_X + 8, 1),
                    (GLOBAL_CTRL, rng.pick(&[1, 1, 1, 0])),
                ] {
                    out.push(Access::Write {
                        bar: 0,
                        off: reg,
                        size: 4,
                        value: v,
                    });
                }
                Access::Write {
                    bar: 0,
                    off: DISPATCH,
                    size: 4,
                    value: 1,
                }
            }
            8 => {
                let any = rng.next();
                for (reg, v) in [
                    (DMA_SRC_LO, rng.pick(&[HOST_BASE, 0, VRAM - 8, any])),
                    (DMA_SRC_HI, rng.pick(&[HOST_BASE >> 32, 0])),
                    (DMA_DST_LO, rng.pick(&[0x100, VRAM - 8, HOST_BASE])),
                    (DMA_DST_HI, rng.pick(&[0, HOST_BASE >> 32])),
                    (DMA_SIZE, rng.pick(&[16, 4096, 0, 0xffff_ffff])),
                ] {
                    out.push(Access::Write {
                        bar: 0,
                        off: reg,
                        size: 4,
                        value: v & 0xffff_ffff,
                    });
                }
                Access::Write {
                    bar: 0,
                    off: DMA_CTRL,
                    size: 4,
                    value: rng.below(8),
                }
            }
            _ => {
                let bar = rng.pick(&[1, 3, 4, 5, 7]);
                Access::Read {
                    bar,
                    off: rng.below(BAR4_SIZE),
                    size,
                }
            }
        };
        out.push(access);
    }
    out
}

fn reg(d: &GpgpuDevice, off: u64) -> u32 {
    d.mmio_read(0, off, 4) as u32
}

/// Runs `seq`; the values its reads returned and whether a kernel faulted,
/// or what broke.
fn play(d: &mut GpgpuDevice, seq: &[Access]) -> Result<(Vec<u64>, bool), String> {
    let mut reads = Vec::new();
    let mut faulted = false;
    for (i, &a) in seq.iter().enumerate() {
        let before = reg(d, ERROR_STATUS);
        let start = Instant::now();
        match a {
            Access::Read { bar, off, size } => {
                let v = d.mmio_read(bar, off, size);
                let sized = matches!((bar, size), (0, 4) | (2, 1 | 2 | 4 | 8));
                if !sized && v != 0 {
                    return Err(format!("access {i} {a:?}: an unsupported read gave {v:#x}"));
                }
                reads.push(v);
            }
            Access::Write {
                bar,
                off,
                size,
                value,
            } => {
                d.mmio_write(bar, off, size, value);
                let in_vram = off.checked_add(u64::from(size)).is_some_and(|e| e <= VRAM);
                if bar == 2 && matches!(size, 1 | 2 | 4 | 8) && in_vram {
                    let mask = if size == 8 {
                        u64::MAX
                    } else {
                        (1 << (8 * size)) - 1
                    };
                    let back = d.mmio_read(2, off, size);
                    if back != value & mask {
                        return Err(format!("access {i} {a:?}: VRAM reads back {back:#x}"));
                    }
                }
                let reset =
                    (bar, off, size) == (0, GLOBAL_CTRL, 4) && value & u64::from(ctrl::RESET) != 0;
                if reset && (reg(d, ERROR_STATUS) != 0 || d.last_fault().is_some()) {
                    return Err(format!("access {i} {a:?}: a reset left an error"));
                }
            }
        }
        let took = start.elapsed();
        if took > Duration::from_secs(2) {
            return Err(format!("access {i} {a:?} took {took:?}"));
        }
        let (status, errors) = (reg(d, GLOBAL_STATUS), reg(d, ERROR_STATUS));
        let want = status::READY | if errors != 0 { status::ERROR } else { 0 };
        if status != want {
            return Err(format!(
                "access {i} {a:?}: GLOBAL_STATUS {status:#x} with ERROR_STATUS {errors:#x}"
            ));
        }
        // ERROR_STATUS bits stay until cleared; a fault the access raised is
        // recorded.
        let raised = errors & !before;
        if raised & error::KERNEL_FAULT != 0 && d.last_fault().is_none() {
            return Err(format!("access {i} {a:?}: KERNEL_FAULT without a fault"));
        }
        faulted |= raised & error::KERNEL_FAULT != 0;
        let ids = [reg(d, DEV_ID), reg(d, DEV_VERSION), reg(d, VRAM_SIZE_LO)];
        if ids != [DEV_ID_VALUE, DEV_VERSION_VALUE, VRAM as u32] {
            return Err(format!("access {i} {a:?}: identification reads {ids:#x?}"));
        }
    }
    Ok((reads, faulted))
}

/// Both engines; `Ok(faulted)`.
fn check(seq: &[Access]) -> Result<bool, String> {
    let mut interp = device(EngineChoice::Interpreter);
    let mut jit = device(EngineChoice::Jit);
    let (a, faulted) = play(&mut interp, seq).map_err(|e| format!("interp: {e}"))?;
    let (b, _) = play(&mut jit, seq).map_err(|e| format!("jit: {e}"))?;
    if a != b {
        let i = a.iter().zip(&b).position(|(x, y)| x != y);
        return Err(format!("engines read differently at read {i:?}"));
    }
    Ok(faulted)
}

fn parse_seed(text: &[u8]) -> Vec<Access> {
    String::from_utf8_lossy(text)
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            let n = |i: usize| {
                u64::from_str_radix(t[i].trim_start_matches("0x"), 16)
                    .unwrap_or_else(|e| panic!("seed `{l}`: {e}"))
            };
            match (t[0], t.len()) {
                ("r", 4) => Access::Read {
                    bar: n(1) as u32,
                    off: n(2),
                    size: n(3) as u32,
                },
                ("w", 5) => Access::Write {
                    bar: n(1) as u32,
                    off: n(2),
                    size: n(3) as u32,
                    value: n(4),
                },
                _ => panic!("seed line `{l}`"),
            }
        })
        .collect()
}

fn run(seed: u64, cases: usize) {
    let mut bad = Vec::new();
    for (name, text) in corpus("mmio") {
        if let Err(e) = check(&parse_seed(&text)) {
            bad.push(format!("{name}: {e}"));
        }
    }
    let mut rng = Rng::new(seed);
    let mut faulted = 0;
    for case in 0..cases {
        let seq = sequence(&mut rng);
        match check(&seq) {
            Ok(f) => faulted += usize::from(f),
            Err(e) => bad.push(format!("case {case} ({} accesses): {e}", seq.len())),
        }
    }
    eprintln!("{cases} access sequences, {faulted} faulted a kernel");
    assert!(
        bad.is_empty(),
        "{} sequences fail:\n{}",
        bad.len(),
        bad[..bad.len().min(20)].join("\n")
    );
    assert!(faulted > 0, "no sequence faulted a kernel");
    fuzz_support::assert_peak_rss_bounded();
}

#[test]
fn random_mmio_sequences_keep_the_register_contract() {
    run(0x3310_0001, 1_000);
}

/// `WAVEJIT_LONG_CASES` sequences (default 200,000) from another seed.
#[test]
#[ignore]
fn random_mmio_sequences_keep_the_register_contract_long() {
    run(0x3310_0002, long_cases(200_000));
}
