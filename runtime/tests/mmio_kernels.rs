//! GCC-built C kernels (`tests/rv32/kernels/`, rebuilt by its build.sh) on the
//! device: ELF loading, the ID window, a call/ret through the jalr hub, fmadd with
//! dynamic rounding, FP loads from .rodata, divergent loops, div and fsqrt.

use wavejit_frontend::rv32::lift::{DEFAULT_CYCLE_LIMIT, DispatchShape, LiftConfig, lift};
use wavejit_frontend::rv32::load_elf;
use wavejit_ir::analysis::step_bound;
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Dispatch, Engine};
use wavejit_jit::{Core, Jit, JitConfig};
use wavejit_runtime::AddressSpace;
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

/// The collatz loop as the device lifts it (its grid known, with and without
/// the cycle limit) has a static step bound (its counted `i != 1000` exit,
/// `ir::analysis::step_bound`), so under the device's unlimited IR step limit
/// it runs on the gang core, with the interpreter's results.
#[test]
fn collatz_loop_is_bounded_and_runs_on_the_gang_core() {
    let path = format!("{KERNELS}/collatz.elf");
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let image = load_elf(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    let (groups, size) = (4u32, 64u32);
    let n = (groups * size) as usize;
    for cycle_limit in [Some(DEFAULT_CYCLE_LIMIT), None] {
        let mems: Vec<AddressSpace> = (0..2)
            .map(|_| {
                let m = AddressSpace::new();
                m.alloc_at(0, 1 << 20).expect("memory");
                for seg in &image.segments {
                    m.write_bytes(u64::from(seg.vaddr), &seg.data)
                        .expect("segment");
                }
                m
            })
            .collect();
        let fetch = |pc: u32| mems[0].read_u32s(u64::from(pc), 1).ok().map(|w| w[0]);
        let config = LiftConfig {
            cycle_limit,
            shape: Some(DispatchShape {
                num_workgroups: [groups, 1, 1],
                workgroup_size: [size, 1, 1],
            }),
            ..LiftConfig::default()
        };
        let lifted = lift(&fetch, image.entry, &config).expect("lifts");
        // The loop's four blocks (three without the cycle-limit tests split
        // out) at most 1000 times each, and the other blocks once.
        let want = if cycle_limit.is_some() { 4012 } else { 4004 };
        assert_eq!(step_bound(&lifted.kernel), Some(want), "{cycle_limit:?}");
        let mut d = Dispatch::new([groups, 1, 1], [size, 1, 1]);
        d.wave_size = 32;
        d.step_limit = lifted.step_limit();
        let jit = Jit::new(JitConfig {
            core: Core::Gang,
            threads: 1,
            ..JitConfig::default()
        });
        let c = jit.compile_for(&lifted.kernel, &d).expect("compiles");
        assert!(c.gang_takes(&d), "{cycle_limit:?}: not on the gang core");
        jit.run(&lifted.kernel, &d, &mems[0]).expect("runs");
        Interpreter
            .run(&lifted.kernel, &d, &mems[1])
            .expect("interprets");
        assert_eq!(jit.gang_fallbacks(), 0);
        let out = |m: &AddressSpace| {
            (
                m.read_u32s(0x30000, 2 * n).expect("reads"),
                m.read_u32s(0x40000, n).expect("reads"),
            )
        };
        let (steps, roots) = out(&mems[0]);
        assert_eq!((steps.clone(), roots.clone()), out(&mems[1]));
        for i in 0..n as u32 {
            assert_eq!(steps[2 * i as usize], collatz_steps(i + 1), "steps {i}");
            assert_eq!(roots[i as usize], (i as f32).sqrt().to_bits(), "sqrt {i}");
        }
    }
}
