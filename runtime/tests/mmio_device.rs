//! Device behaviour beyond the 17 qtests: reset in the middle of a state, DMA
//! (transfers, bounds and host errors), faulting and runaway kernels, invalid
//! dispatches, multi-block grids, every rounding mode, engines agree, the C ABI.

use wavejit_frontend::rv32::lift::TrapCause;
use wavejit_frontend::rv32::*;
use wavejit_runtime::mmio::regs::*;
use wavejit_runtime::mmio::{
    DeviceConfig, DeviceFaultKind, EngineChoice, GpgpuDevice, VecHost, capi,
};

fn dev_with(cfg: DeviceConfig) -> GpgpuDevice {
    GpgpuDevice::new(cfg).expect("device")
}

fn dev() -> GpgpuDevice {
    dev_with(DeviceConfig::default())
}

fn r0(d: &GpgpuDevice, off: u64) -> u32 {
    d.mmio_read(0, off, 4) as u32
}

fn w0(d: &mut GpgpuDevice, off: u64, v: u32) {
    d.mmio_write(0, off, 4, u64::from(v));
}

fn load(d: &mut GpgpuDevice, addr: u64, words: &[u32]) {
    for (i, &w) in words.iter().enumerate() {
        d.mmio_write(2, addr + 4 * i as u64, 4, u64::from(w));
    }
}

fn vram_words(d: &GpgpuDevice, addr: u64, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| d.mmio_read(2, addr + 4 * i as u64, 4) as u32)
        .collect()
}

fn launch(d: &mut GpgpuDevice, grid: [u32; 3], block: [u32; 3]) {
    w0(d, GLOBAL_CTRL, ctrl::ENABLE);
    w0(d, KERNEL_ADDR_LO, 0);
    w0(d, KERNEL_ADDR_HI, 0);
    for i in 0..3 {
        w0(d, GRID_DIM_X + 4 * i as u64, grid[i]);
        w0(d, BLOCK_DIM_X + 4 * i as u64, block[i]);
    }
    w0(d, DISPATCH, 1);
}

fn enc(p: &[Instr]) -> Vec<u32> {
    p.iter().map(|i| encode(i).expect("encodes")).collect()
}

fn x(n: u8) -> XReg {
    XReg(n)
}

fn addi(rd: u8, rs1: u8, imm: i32) -> Instr {
    Instr::OpImm {
        op: AluImmOp::Addi,
        rd: x(rd),
        rs1: x(rs1),
        imm,
    }
}

/// x5 = mhartid; x6 = 0x1000 + 4 * (block_linear * threads + local); store x5.
fn hartid_store_kernel(threads_per_block: i32) -> Vec<u32> {
    enc(&[
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: x(5),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO),
        },
        Instr::OpImm {
            op: AluImmOp::Srli,
            rd: x(6),
            rs1: x(5),
            imm: 13,
        },
        addi(7, 0, threads_per_block),
        Instr::Op {
            op: AluOp::Mul,
            rd: x(6),
            rs1: x(6),
            rs2: x(7),
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
        Instr::Lui {
            rd: x(7),
            imm: 0x1000,
        },
        Instr::Op {
            op: AluOp::Add,
            rd: x(6),
            rs1: x(6),
            rs2: x(7),
        },
        Instr::Store {
            kind: StoreKind::Word,
            rs1: x(6),
            rs2: x(5),
            offset: 0,
        },
        Instr::Ebreak,
    ])
}

#[test]
fn multi_block_grid_runs_every_lane_with_its_mhartid() {
    for engine in [EngineChoice::Jit, EngineChoice::Interpreter] {
        let mut d = dev_with(DeviceConfig {
            engine,
            ..DeviceConfig::default()
        });
        load(&mut d, 0, &hartid_store_kernel(70));
        launch(&mut d, [3, 2, 2], [35, 2, 1]);
        assert_eq!(r0(&d, ERROR_STATUS), 0, "{:?}", d.last_fault());
        assert_eq!(r0(&d, GLOBAL_STATUS), status::READY);
        assert_eq!(r0(&d, IRQ_STATUS), irq::KERNEL_DONE);
        let got = vram_words(&d, 0x1000, 12 * 70);
        for block in 0..12u32 {
            for local in 0..70u32 {
                let want = block << 13 | (local / 32) << 5 | (local % 32);
                assert_eq!(got[(block * 70 + local) as usize], want, "{engine:?}");
            }
        }
        let report = d.last_report().expect("report");
        assert_eq!(report.lanes, 840);
        if engine == EngineChoice::Jit {
            assert_eq!(report.engine, "jit", "{:?}", report.jit_error);
        }
    }
}

#[test]
fn soft_reset_mid_state_keeps_vram_and_device_reset_zeroes_it() {
    let mut d = dev();
    load(&mut d, 0, &hartid_store_kernel(4));
    launch(&mut d, [1, 1, 1], [4, 1, 1]);
    assert_eq!(vram_words(&d, 0x1000, 4), vec![0, 1, 2, 3]);
    w0(&mut d, IRQ_ENABLE, 7);
    w0(&mut d, ERROR_STATUS, 0); // W1C of nothing
    w0(&mut d, DMA_SIZE, 64);
    w0(&mut d, SHARED_MEM_SIZE, 1024);
    w0(&mut d, THREAD_MASK, 0xF0F0);
    w0(&mut d, LANE_ID, 9);
    assert_eq!(r0(&d, IRQ_STATUS), irq::KERNEL_DONE);
    assert_eq!(d.irq_pending(), irq::KERNEL_DONE);
    w0(&mut d, GLOBAL_CTRL, ctrl::RESET | ctrl::ENABLE);
    for off in [
        GLOBAL_CTRL,
        ERROR_STATUS,
        IRQ_ENABLE,
        IRQ_STATUS,
        KERNEL_ADDR_LO,
        GRID_DIM_X,
        BLOCK_DIM_X,
        SHARED_MEM_SIZE,
        DMA_SIZE,
        DMA_STATUS,
        THREAD_MASK,
        LANE_ID,
    ] {
        assert_eq!(r0(&d, off), 0, "register {off:#x} after soft reset");
    }
    assert_eq!(r0(&d, GLOBAL_STATUS), status::READY);
    assert_eq!(r0(&d, DEV_ID), DEV_ID_VALUE);
    assert_eq!(vram_words(&d, 0x1000, 4), vec![0, 1, 2, 3], "VRAM kept");
    // Dispatch needs ENABLE again.
    w0(&mut d, DISPATCH, 1);
    assert_eq!(r0(&d, ERROR_STATUS), error::INVALID_CMD);
    d.device_reset();
    assert_eq!(vram_words(&d, 0x1000, 4), vec![0; 4], "VRAM zeroed");
    assert_eq!(r0(&d, ERROR_STATUS), 0);
}

#[test]
fn invalid_dispatches_set_invalid_cmd_and_run_nothing() {
    let mut d = dev();
    load(&mut d, 0, &hartid_store_kernel(1));
    // ENABLE clear.
    w0(&mut d, GRID_DIM_X, 1);
    w0(&mut d, DISPATCH, 1);
    assert_eq!(r0(&d, ERROR_STATUS), error::INVALID_CMD);
    assert_eq!(r0(&d, GLOBAL_STATUS), status::READY | status::ERROR);
    assert_eq!(r0(&d, IRQ_STATUS), irq::ERROR);
    w0(&mut d, ERROR_STATUS, error::INVALID_CMD);
    w0(&mut d, IRQ_ACK, irq::ERROR);
    assert_eq!(r0(&d, GLOBAL_STATUS), status::READY);
    assert_eq!(r0(&d, IRQ_STATUS), 0);
    // A zero dimension.
    launch(&mut d, [1, 0, 1], [1, 1, 1]);
    assert_eq!(r0(&d, ERROR_STATUS), error::INVALID_CMD);
    w0(&mut d, ERROR_STATUS, 0xF);
    // Kernel address outside VRAM, and misaligned.
    for addr in [64 << 20, 2] {
        w0(&mut d, KERNEL_ADDR_LO, addr);
        w0(&mut d, DISPATCH, 1);
        assert_eq!(r0(&d, ERROR_STATUS), error::INVALID_CMD, "addr {addr:#x}");
        w0(&mut d, ERROR_STATUS, 0xF);
    }
    assert_eq!(vram_words(&d, 0x1000, 1), vec![0], "nothing ran");
}

#[test]
fn dma_moves_bytes_both_ways_and_reports_bounds_errors() {
    let mut d = dev();
    let mut host = VecHost {
        base: 0x10_0000,
        bytes: vec![0; 0x2000],
    };
    for (i, b) in host.bytes.iter_mut().enumerate().take(256) {
        *b = i as u8;
    }
    d.set_dma_host(Box::new(host));
    // host 0x100000 -> VRAM 0x3000, 256 bytes, with IRQ.
    w0(&mut d, DMA_SRC_LO, 0x10_0000);
    w0(&mut d, DMA_DST_LO, 0x3000);
    w0(&mut d, DMA_SIZE, 256);
    w0(&mut d, DMA_CTRL, dma::START | dma::IRQ_EN);
    assert_eq!(r0(&d, DMA_STATUS), dma::COMPLETE);
    assert_eq!(r0(&d, DMA_CTRL), dma::IRQ_EN, "START self-clears");
    assert_eq!(r0(&d, IRQ_STATUS), irq::DMA_DONE);
    assert_eq!(d.mmio_read(2, 0x3000, 8), 0x0706_0504_0302_0100);
    // VRAM 0x3000 -> host 0x101000, then back to VRAM 0x5000 to observe it.
    w0(&mut d, DMA_SRC_LO, 0x3000);
    w0(&mut d, DMA_DST_LO, 0x10_1000);
    w0(&mut d, DMA_CTRL, dma::START | dma::DIR);
    assert_eq!(r0(&d, DMA_STATUS), dma::COMPLETE);
    w0(&mut d, DMA_SRC_LO, 0x10_1000);
    w0(&mut d, DMA_DST_LO, 0x5000);
    w0(&mut d, DMA_CTRL, dma::START);
    assert_eq!(d.mmio_read(2, 0x50FC, 4), 0xFFFE_FDFC);
    assert_eq!(r0(&d, ERROR_STATUS), 0);
    // VRAM range overflow.
    w0(&mut d, DMA_SRC_LO, 0x10_0000);
    w0(&mut d, DMA_DST_LO, (64 << 20) - 16);
    w0(&mut d, DMA_SIZE, 32);
    w0(&mut d, DMA_CTRL, dma::START);
    assert_eq!(r0(&d, DMA_STATUS), dma::COMPLETE | dma::ERROR);
    assert_eq!(r0(&d, ERROR_STATUS), error::DMA_FAULT);
    assert_eq!(r0(&d, GLOBAL_STATUS), status::READY | status::ERROR);
    assert_eq!(d.mmio_read(2, (64 << 20) - 16, 8), 0, "nothing copied");
    w0(&mut d, ERROR_STATUS, error::DMA_FAULT);
    // Host range refused.
    w0(&mut d, DMA_DST_LO, 0);
    w0(&mut d, DMA_SRC_LO, 0x20_0000);
    w0(&mut d, DMA_CTRL, dma::START);
    assert_eq!(r0(&d, ERROR_STATUS), error::DMA_FAULT);
    // No host attached at all.
    let mut bare = dev();
    w0(&mut bare, DMA_SIZE, 4);
    w0(&mut bare, DMA_CTRL, dma::START);
    assert_eq!(r0(&bare, DMA_STATUS), dma::COMPLETE | dma::ERROR);
}

fn assert_kernel_fault(d: &GpgpuDevice, bits: u32) {
    assert_eq!(r0(d, ERROR_STATUS), bits);
    assert_eq!(r0(d, GLOBAL_STATUS), status::READY | status::ERROR);
    assert_eq!(r0(d, IRQ_STATUS), irq::ERROR, "no KERNEL_DONE");
}

#[test]
fn faulting_kernels_set_error_bits_and_name_the_place() {
    // Illegal word at 0x8 in lane 3 only (others ebreak first).
    let mut d = dev();
    let mut code = enc(&[
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: x(5),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO),
        },
        addi(6, 0, 3),
        Instr::Branch {
            cond: BranchCond::Eq,
            rs1: x(5),
            rs2: x(6),
            offset: 8,
        },
        Instr::Ebreak,
    ]);
    code.push(0xFFFF_FFFF);
    load(&mut d, 0, &code);
    w0(&mut d, IRQ_ENABLE, irq::ERROR);
    launch(&mut d, [1, 1, 1], [8, 1, 1]);
    assert_kernel_fault(&d, error::KERNEL_FAULT);
    assert_eq!(d.irq_pending(), irq::ERROR);
    let f = d.last_fault().expect("fault");
    assert!(matches!(
        f.kind,
        DeviceFaultKind::Trap(TrapCause::IllegalInstruction(_))
    ));
    assert_eq!(
        (f.pc, f.word, f.hartid),
        (Some(0x10), Some(0xFFFF_FFFF), Some(3))
    );
    assert!(f.to_string().contains("0x00000010"), "{f}");

    // Store outside VRAM: VRAM_FAULT | KERNEL_FAULT.
    let mut d = dev();
    load(
        &mut d,
        0,
        &enc(&[
            Instr::Lui {
                rd: x(5),
                imm: 0x0400_0000,
            },
            Instr::Store {
                kind: StoreKind::Word,
                rs1: x(5),
                rs2: x(0),
                offset: 0,
            },
            Instr::Ebreak,
        ]),
    );
    launch(&mut d, [1, 1, 1], [1, 1, 1]);
    assert_kernel_fault(&d, error::VRAM_FAULT | error::KERNEL_FAULT);
    let f = d.last_fault().expect("fault");
    assert_eq!(
        f.kind,
        DeviceFaultKind::Memory {
            addr: 0x0400_0000,
            size: 4,
            write: true
        }
    );
    assert_eq!(f.pc, Some(4));

    // ecall.
    let mut d = dev();
    load(&mut d, 0, &enc(&[Instr::Ecall]));
    launch(&mut d, [1, 1, 1], [1, 1, 1]);
    assert_kernel_fault(&d, error::KERNEL_FAULT);
    assert_eq!(
        d.last_fault().map(|f| f.kind.clone()),
        Some(DeviceFaultKind::Trap(TrapCause::Ecall))
    );
}

#[test]
fn runaway_kernel_hits_the_cycle_limit() {
    for engine in [EngineChoice::Jit, EngineChoice::Interpreter] {
        let mut d = dev_with(DeviceConfig {
            engine,
            ..DeviceConfig::default()
        });
        // addi x5,x5,1 ; jal x0,-4 : forever.
        load(
            &mut d,
            0,
            &enc(&[
                addi(5, 5, 1),
                Instr::Jal {
                    rd: x(0),
                    offset: -4,
                },
            ]),
        );
        launch(&mut d, [2, 1, 1], [32, 1, 1]);
        assert_kernel_fault(&d, error::KERNEL_FAULT);
        assert_eq!(
            d.last_fault().map(|f| f.kind.clone()),
            Some(DeviceFaultKind::Trap(TrapCause::CycleLimit {
                limit: 100_000
            })),
            "{engine:?}"
        );
        assert_eq!(
            d.last_fault().and_then(|f| f.hartid),
            Some(0),
            "lowest lane"
        );
        // The device stays usable.
        w0(&mut d, ERROR_STATUS, 0xF);
        load(&mut d, 0, &hartid_store_kernel(2));
        launch(&mut d, [1, 1, 1], [2, 1, 1]);
        assert_eq!(r0(&d, ERROR_STATUS), 0);
        assert_eq!(vram_words(&d, 0x1000, 2), vec![0, 1]);
    }
}

/// The lift assumes the launch's grid (ID reads then have known ranges): a
/// launch with another grid must lift again. Lane `local` loads from
/// 0x100 + local * 0x7fffff00, which is VRAM for lane 0 and the ID window
/// (threadIdx.x) for lane 1; lifted for one lane only, the load has no window
/// test and lane 1 would fault.
#[test]
fn other_grid_lifts_again() {
    let word = |rd: u8, rs1: u8, offset: i32| Instr::Load {
        kind: LoadKind::Word,
        rd: x(rd),
        rs1: x(rs1),
        offset,
    };
    let prog = enc(&[
        Instr::Lui {
            rd: x(14),
            imm: 0x8000_0000,
        },
        word(15, 14, 0),
        addi(13, 14, -0x100),
        Instr::Op {
            op: AluOp::Mul,
            rd: x(16),
            rs1: x(15),
            rs2: x(13),
        },
        addi(16, 16, 0x100),
        word(10, 16, 0),
        Instr::OpImm {
            op: AluImmOp::Slli,
            rd: x(15),
            rs1: x(15),
            imm: 2,
        },
        Instr::Store {
            kind: StoreKind::Word,
            rs1: x(15),
            rs2: x(10),
            offset: 0x200,
        },
        Instr::Ebreak,
    ]);
    let mut d = dev();
    load(&mut d, 0, &prog);
    load(&mut d, 0x100, &[0x1234]);
    launch(&mut d, [1, 1, 1], [1, 1, 1]);
    assert_eq!(r0(&d, ERROR_STATUS), 0);
    assert_eq!(vram_words(&d, 0x200, 2), [0x1234, 0]);
    launch(&mut d, [1, 1, 1], [2, 1, 1]);
    assert_eq!(r0(&d, ERROR_STATUS), 0, "{:?}", d.last_fault());
    assert_eq!(vram_words(&d, 0x200, 2), [0x1234, 1]);
}

/// A kernel that retires exactly the limit completes; one more instruction faults.
#[test]
fn cycle_limit_boundary() {
    // lui+addi x5 = n ; nop ; loop: addi x5,x5,-1 ; bne x5,x0,loop ; ebreak = 2n + 4
    let prog = |n: i32| {
        let hi = (n + 0x800) & !0xfff;
        enc(&[
            Instr::Lui {
                rd: x(5),
                imm: hi as u32,
            },
            addi(5, 5, n - hi),
            addi(0, 0, 0),
            addi(5, 5, -1),
            Instr::Branch {
                cond: BranchCond::Ne,
                rs1: x(5),
                rs2: x(0),
                offset: -4,
            },
            Instr::Ebreak,
        ])
    };
    let mut d = dev();
    load(&mut d, 0, &prog(49_998));
    launch(&mut d, [1, 1, 1], [1, 1, 1]);
    assert_eq!(r0(&d, ERROR_STATUS), 0, "100,000 instructions complete");
    load(&mut d, 0, &prog(49_999));
    launch(&mut d, [1, 1, 1], [1, 1, 1]);
    assert_eq!(r0(&d, ERROR_STATUS), error::KERNEL_FAULT, "100,002 fault");
}

/// fcvt.w.s of +-2.5 and +-1.5 in all five static modes and through frm (dyn),
/// one lane per (mode, dynamic) pair, plus fadd rounding of 1 + 2^-24 * 3.
#[test]
fn fp_kernel_in_every_rounding_mode() {
    let modes = [
        RoundingMode::Rne,
        RoundingMode::Rtz,
        RoundingMode::Rdn,
        RoundingMode::Rup,
        RoundingMode::Rmm,
    ];
    // Expected fcvt.w.s results for 2.5, -2.5, 1.5, -1.5 per mode.
    let want: [[i32; 4]; 5] = [
        [2, -2, 2, -2],
        [2, -2, 1, -1],
        [2, -3, 1, -2],
        [3, -2, 2, -1],
        [3, -3, 2, -2],
    ];
    for dynamic in [false, true] {
        for (m, &rm) in modes.iter().enumerate() {
            let rm_used = if dynamic { RoundingMode::Dyn } else { rm };
            let mut p = vec![Instr::Csr {
                op: CsrOp::ReadWrite,
                rd: XReg::ZERO,
                csr: Csr::Frm,
                src: CsrSrc::Imm(if dynamic { rm.field() } else { 0 }),
            }];
            // f1 = 2.5 (0x40200000), f2 = 1.5 (0x3fc00000), negatives by fsgnjn.
            for (freg, bits) in [(1u8, 0x4020_0000u32), (2, 0x3FC0_0000)] {
                p.push(Instr::Lui {
                    rd: x(6),
                    imm: bits,
                });
                p.push(Instr::FmvFromInt {
                    rd: FReg(freg),
                    rs1: x(6),
                });
                p.push(Instr::FpSign {
                    op: FpSignOp::Negate,
                    rd: FReg(freg + 10),
                    rs1: FReg(freg),
                    rs2: FReg(freg),
                });
            }
            for (i, src) in [1u8, 11, 2, 12].iter().enumerate() {
                p.push(Instr::FcvtToInt {
                    rd: x(10),
                    rs1: FReg(*src),
                    unsigned: false,
                    rm: rm_used,
                });
                p.push(Instr::Store {
                    kind: StoreKind::Word,
                    rs1: x(0),
                    rs2: x(10),
                    offset: 0x400 + 4 * i as i32,
                });
            }
            p.push(Instr::Ebreak);
            let mut d = dev();
            load(&mut d, 0, &enc(&p));
            launch(&mut d, [1, 1, 1], [1, 1, 1]);
            assert_eq!(r0(&d, ERROR_STATUS), 0, "{:?}", d.last_fault());
            let got: Vec<i32> = vram_words(&d, 0x400, 4).iter().map(|&v| v as i32).collect();
            assert_eq!(got, want[m], "{rm:?} dynamic={dynamic}");
        }
    }
}

#[test]
fn lane_contexts_are_captured_when_enabled() {
    let mut d = dev_with(DeviceConfig {
        capture_context: true,
        ..DeviceConfig::default()
    });
    load(&mut d, 0, &hartid_store_kernel(3));
    launch(&mut d, [2, 1, 1], [3, 1, 1]);
    let report = d.last_report().expect("report");
    assert_eq!(report.contexts.len(), 6);
    for (i, c) in report.contexts.iter().enumerate() {
        assert!(c.done);
        let (block, local) = (i as u32 / 3, i as u32 % 3);
        assert_eq!(c.x[5], block << 13 | local);
        assert_eq!(c.x[6], 0x1000 + 4 * i as u32);
        assert_eq!(c.pc, 44, "ended at the ebreak");
    }
}

#[test]
fn bar_access_sizes_and_unmapped_offsets() {
    let mut d = dev();
    d.mmio_write(2, 0x10, 8, 0x1122_3344_5566_7788);
    assert_eq!(d.mmio_read(2, 0x10, 1), 0x88);
    assert_eq!(d.mmio_read(2, 0x11, 2), 0x6677);
    assert_eq!(d.mmio_read(2, 0x14, 4), 0x1122_3344);
    d.mmio_write(2, 0x12, 1, 0xAB);
    assert_eq!(d.mmio_read(2, 0x10, 8), 0x1122_3344_55AB_7788);
    assert_eq!(d.mmio_read(2, (64 << 20) - 4, 8), 0, "straddles the end");
    assert_eq!(r0(&d, 0x0F0), 0, "unlisted offset");
    assert_eq!(d.mmio_read(0, DEV_ID, 2), 0, "BAR0 is 32-bit only");
    assert_eq!(d.mmio_read(4, 0, 4), 0, "doorbells read 0");
    d.mmio_write(4, 0, 4, 5);
    w0(&mut d, DEV_ID, 0);
    assert_eq!(r0(&d, DEV_ID), DEV_ID_VALUE, "RO ignores writes");
    assert_eq!(r0(&d, DEV_CAPS), 0x0020_0404);
    w0(&mut d, BARRIER, 1);
    assert_eq!(r0(&d, BARRIER), 0);
    w0(&mut d, MSIX_TABLE + 4, 0xFEE0_0000);
    assert_eq!(r0(&d, MSIX_TABLE + 4), 0xFEE0_0000);
}

#[test]
fn c_abi_drives_the_device() {
    let d = capi::wj_mmio_new(0);
    assert!(!d.is_null());
    // SAFETY: `d` is a live handle used only here.
    unsafe {
        assert_eq!(capi::wj_mmio_read(d, 0, DEV_ID, 4), u64::from(DEV_ID_VALUE));
        for (i, w) in hartid_store_kernel(4).iter().enumerate() {
            capi::wj_mmio_write(d, 2, 4 * i as u64, 4, u64::from(*w));
        }
        for (off, v) in [
            (GLOBAL_CTRL, 1u32),
            (GRID_DIM_X, 1),
            (GRID_DIM_X + 4, 1),
            (GRID_DIM_X + 8, 1),
            (BLOCK_DIM_X, 4),
            (BLOCK_DIM_X + 4, 1),
            (BLOCK_DIM_X + 8, 1),
            (IRQ_ENABLE, 1),
            (DISPATCH, 1),
        ] {
            capi::wj_mmio_write(d, 0, off, 4, u64::from(v));
        }
        assert_eq!(capi::wj_mmio_read(d, 2, 0x100C, 4), 3);
        assert_eq!(capi::wj_mmio_irq_pending(d), irq::KERNEL_DONE);
        assert_eq!(capi::wj_mmio_last_fault(d, std::ptr::null_mut(), 0), 0);
        capi::wj_mmio_reset(d);
        assert_eq!(capi::wj_mmio_read(d, 2, 0x100C, 4), 0);
        assert_eq!(capi::wj_mmio_read(std::ptr::null(), 0, DEV_ID, 4), 0);
        capi::wj_mmio_free(d);
    }
}
