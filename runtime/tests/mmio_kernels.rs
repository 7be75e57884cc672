//! GCC-built C kernels (`tests/rv32/kernels/`, rebuilt by its build.sh) on the
//! device: ELF loading, the ID window, a call/ret through the jalr hub, fmadd with
//! dynamic rounding, FP loads from .rodata, divergent loops, div and fsqrt.

use wavejit_frontend::rv32::load_elf;
use wavejit_runtime::mmio::regs::*;
use wavejit_runtime::mmio::{DeviceConfig, EngineChoice, GpgpuDevice};

const KERNELS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/rv32/kernels");

fn device_with_elf(name: &str, engine: EngineChoice) -> (GpgpuDevice, u32) {
    let path = format!("{KERNELS}/{name}.elf");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let image = load_elf(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    let d = GpgpuDevice::new(DeviceConfig {
        engine,
        ..DeviceConfig::default()
    })
    .expect("device");
    for seg in &image.segments {
        let mut data = seg.data.clone();
        data.resize(seg.mem_size as usize, 0);
        d.vram()
            .write_bytes(u64::from(seg.vaddr), &data)
            .expect("segment fits VRAM");
    }
    (d, image.entry)
}

fn launch(d: &mut GpgpuDevice, entry: u32, grid: u32, block: u32) {
    let mut w = |off: u64, v: u32| d.mmio_write(0, off, 4, u64::from(v));
    w(GLOBAL_CTRL, 1);
    w(KERNEL_ADDR_LO, entry);
    for (i, (g, b)) in [(grid, block), (1, 1), (1, 1)].into_iter().enumerate() {
        w(GRID_DIM_X + 4 * i as u64, g);
        w(BLOCK_DIM_X + 4 * i as u64, b);
    }
    w(DISPATCH, 1);
    assert_eq!(d.mmio_read(0, ERROR_STATUS, 4), 0, "{:?}", d.last_fault());
}

fn f32s(d: &GpgpuDevice, addr: u64, n: usize) -> Vec<u32> {
    d.vram()
        .read_u32s(addr, n)
        .unwrap_or_else(|e| panic!("read {addr:#x}: {e}"))
}

#[test]
fn saxpy_matches_a_fused_multiply_add() {
    for engine in [EngineChoice::Jit, EngineChoice::Interpreter] {
        let (mut d, entry) = device_with_elf("saxpy", engine);
        let n = 4 * 48;
        let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.37 - 20.0).collect();
        let y: Vec<f32> = (0..n).map(|i| 1.0 / (i as f32 + 0.5)).collect();
        // The argument block at 0xF000 names x, y and out.
        let args = [0x0010_0000u32, 0x0020_0000, 0x0030_0000];
        let block: Vec<u8> = args.iter().flat_map(|a| a.to_le_bytes()).collect();
        d.vram().write_bytes(0xF000, &block).expect("args");
        d.vram().write_f32s(0x10_0000, &x).expect("x");
        d.vram().write_f32s(0x20_0000, &y).expect("y");
        launch(&mut d, entry, 4, 48);
        let got = f32s(&d, 0x30_0000, n);
        for i in 0..n {
            let want = 2.5f32.mul_add(x[i], y[i]).to_bits();
            assert_eq!(got[i], want, "{engine:?} lane {i}");
        }
    }
}

fn collatz_steps(mut n: u32) -> u32 {
    let mut steps = 0;
    while n != 1 && steps < 1000 {
        n = if n & 1 == 1 { 3 * n + 1 } else { n / 2 };
        steps += 1;
    }
    steps
}

#[test]
fn collatz_divergent_loops_div_and_sqrt() {
    for engine in [EngineChoice::Jit, EngineChoice::Interpreter] {
        let (mut d, entry) = device_with_elf("collatz", engine);
        let n = 3 * 40;
        launch(&mut d, entry, 3, 40);
        let out = f32s(&d, 0x30000, 2 * n);
        let roots = f32s(&d, 0x40000, n);
        for i in 0..n as u32 {
            assert_eq!(out[2 * i as usize], collatz_steps(i + 1), "steps {i}");
            assert_eq!(out[2 * i as usize + 1], 1_000_000 / (i + 1), "div {i}");
            assert_eq!(roots[i as usize], (i as f32).sqrt().to_bits(), "sqrt {i}");
        }
    }
}
