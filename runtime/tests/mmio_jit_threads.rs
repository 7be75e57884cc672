//! `DeviceConfig::jit_threads`: refused when 0 or absurd (Rust and C), and
//! honoured: a 1-thread device runs a large dispatch without starting a worker
//! thread, a 3-thread one starts exactly two, and both write the same bits.
//! Its own test binary, so that no other test's JIT threads are counted.

use wavejit_frontend::rv32::*;
use wavejit_runtime::mmio::regs::*;
use wavejit_runtime::mmio::{DeviceConfig, DeviceError, GpgpuDevice, MAX_JIT_THREADS, capi};

fn with_threads(jit_threads: Option<usize>) -> Result<GpgpuDevice, DeviceError> {
    GpgpuDevice::new(DeviceConfig {
        jit_threads,
        ..DeviceConfig::default()
    })
}

#[test]
fn zero_and_absurd_thread_counts_are_refused() {
    for bad in [0, MAX_JIT_THREADS + 1, usize::MAX] {
        match with_threads(Some(bad)) {
            Err(e @ DeviceError::JitThreads(n)) => {
                assert_eq!(n, bad);
                assert_eq!(
                    e.to_string(),
                    format!("jit_threads {bad}: the JIT needs 1 to 1024 threads")
                );
            }
            Err(e) => panic!("{bad} threads: wrong error {e}"),
            Ok(_) => panic!("{bad} threads accepted"),
        }
    }
    for good in [1, 2, MAX_JIT_THREADS] {
        let d = with_threads(Some(good)).expect("valid thread count");
        assert_eq!(d.jit_threads(), good);
        assert_eq!(d.config().jit_threads, Some(good));
    }
    // The default is every host thread, as before the option existed.
    let host = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(with_threads(None).expect("default").jit_threads(), host);

    // The C ABI refuses the same values with a null handle.
    assert!(capi::wj_mmio_new_threads(0, 0).is_null());
    assert!(capi::wj_mmio_new_threads(0, MAX_JIT_THREADS as u32 + 1).is_null());
    assert!(
        capi::wj_mmio_new_threads(3 << 10, 1).is_null(),
        "bad VRAM size"
    );
    let d = capi::wj_mmio_new_threads(0, 1);
    assert!(!d.is_null());
    // SAFETY: `d` is a live handle from wj_mmio_new_threads, freed once.
    unsafe {
        assert_eq!(capi::wj_mmio_read(d, 0, DEV_ID, 4), u64::from(DEV_ID_VALUE));
        capi::wj_mmio_free(d);
    }
}

/// Lanes of the large dispatch: 2^22 lanes of the ~8-op lifted kernel are
/// well past `JitConfig::parallel_min_work` (2^23 lanes x ops), below which
/// a dispatch stays on the calling thread whatever the count.
const BLOCKS: u32 = 1 << 14;
const GROUP: u32 = 256;
const OUT: u32 = 0x0100_0000;

/// y[i] = i for i = block * 256 + local, from mhartid = block << 13 | local.
fn index_store_kernel() -> Vec<u32> {
    let x = XReg;
    let imm = |op, rd, rs1, imm| Instr::OpImm {
        op,
        rd: x(rd),
        rs1: x(rs1),
        imm,
    };
    let reg = |op, rd, rs1, rs2| Instr::Op {
        op,
        rd: x(rd),
        rs1: x(rs1),
        rs2: x(rs2),
    };
    [
        Instr::Csr {
            op: CsrOp::ReadSet,
            rd: x(5),
            csr: Csr::Mhartid,
            src: CsrSrc::Reg(XReg::ZERO),
        },
        imm(AluImmOp::Srli, 6, 5, 13),
        imm(AluImmOp::Slli, 6, 6, 8),
        imm(AluImmOp::Andi, 7, 5, GROUP as i32 - 1),
        reg(AluOp::Or, 6, 6, 7),
        imm(AluImmOp::Slli, 7, 6, 2),
        Instr::Lui { rd: x(8), imm: OUT },
        reg(AluOp::Add, 8, 8, 7),
        Instr::Store {
            kind: StoreKind::Word,
            rs1: x(8),
            rs2: x(6),
            offset: 0,
        },
        Instr::Ebreak,
    ]
    .iter()
    .map(|i| encode(i).expect("encodes"))
    .collect()
}

/// Runs the kernel over `BLOCKS` x `GROUP` lanes; returns the output words.
fn run_large(d: &mut GpgpuDevice) -> Vec<u32> {
    for (i, w) in index_store_kernel().iter().enumerate() {
        d.mmio_write(2, 4 * i as u64, 4, u64::from(*w));
    }
    let w0 = |d: &mut GpgpuDevice, off: u64, v: u32| d.mmio_write(0, off, 4, u64::from(v));
    w0(d, GLOBAL_CTRL, ctrl::ENABLE);
    w0(d, KERNEL_ADDR_LO, 0);
    w0(d, KERNEL_ADDR_HI, 0);
    for (i, (g, b)) in [(BLOCKS, GROUP), (1, 1), (1, 1)].into_iter().enumerate() {
        w0(d, GRID_DIM_X + 4 * i as u64, g);
        w0(d, BLOCK_DIM_X + 4 * i as u64, b);
    }
    w0(d, DISPATCH, 1);
    assert_eq!(d.mmio_read(0, ERROR_STATUS, 4), 0, "{:?}", d.last_fault());
    assert_eq!(d.last_report().map(|r| r.engine), Some("jit"));
    let n = (BLOCKS * GROUP) as usize;
    let bytes = d.vram().read_bytes(u64::from(OUT), 4 * n).expect("reads");
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Threads of this process named as the JIT's pooled workers.
#[cfg(target_os = "linux")]
fn jit_workers() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.starts_with("wavejit-jit-"))
        .count()
}

#[cfg(target_os = "linux")]
#[test]
fn the_thread_count_is_honoured() {
    let mut one = with_threads(Some(1)).expect("device");
    let out = run_large(&mut one);
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32));
    assert_eq!(jit_workers(), 0, "a 1-thread device started workers");

    let mut three = with_threads(Some(3)).expect("device");
    assert_eq!(run_large(&mut three), out);
    // The dispatching thread and two pooled ones.
    assert_eq!(jit_workers(), 2);
    drop(three);
    drop(one);
}
