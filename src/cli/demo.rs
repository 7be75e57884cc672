//! `wavejit demo`: the main job on a built-in default. Each part runs a kernel on
//! the JIT, checks the result against the same computation in native Rust, and
//! prints inputs, outputs and timing.

use std::process::ExitCode;
use std::time::Instant;

use wavejit::ir::{Dispatch, Engine};
use wavejit::jit::Jit;
use wavejit::runtime::AddressSpace;

use super::CliError;

/// y[i] = a * x[i] + b for i < n. Uniforms: 0 &x, 8 &y, 16 a, 20 b, 24 n.
const AFFINE: &str = "\
kernel @affine shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 24
  v6 = load.uniform.i32 v5
  v7 = icmp.ult.i32 v4, v6
  br v7, block1, block2

block1:
  v8 = const.i32 0
  v9 = load.uniform.i64 v8
  v10 = const.i32 8
  v11 = load.uniform.i64 v10
  v12 = const.i32 16
  v13 = load.uniform.f32 v12
  v14 = const.i32 20
  v15 = load.uniform.f32 v14
  v16 = zext.i32.i64 v4
  v17 = const.i64 2
  v18 = shl.i64 v16, v17
  v19 = iadd.i64 v9, v18
  v20 = iadd.i64 v11, v18
  v21 = load.global.f32 v19
  v22 = fmul.f32 v13, v21
  v23 = fadd.f32 v22, v15
  store.global.f32 v20, v23
  jump block2

block2:
  exit
}
";

fn uniforms(x: u64, y: u64, a: f32, b: f32, n: u32) -> Vec<u8> {
    let mut u = Vec::new();
    u.extend_from_slice(&x.to_le_bytes());
    u.extend_from_slice(&y.to_le_bytes());
    u.extend_from_slice(&a.to_le_bytes());
    u.extend_from_slice(&b.to_le_bytes());
    u.extend_from_slice(&n.to_le_bytes());
    u
}

pub fn run() -> Result<ExitCode, CliError> {
    let kernel = wavejit::ir::text::parse(AFFINE)?;
    wavejit::ir::verify::verify(&kernel)?;
    let jit = Jit::default();
    let mem = AddressSpace::new();

    outln!("== wavejit demo: an IR kernel on the Cranelift JIT ==");
    outln!("{AFFINE}");

    // Small: a*2+1 over four values.
    let input = [1.0f32, 2.0, 3.0, 4.0];
    let x = mem.alloc(16)?;
    let y = mem.alloc(16)?;
    mem.write_f32s(x, &input)?;
    let mut d = Dispatch::new([1, 1, 1], [4, 1, 1]);
    d.uniforms = uniforms(x, y, 2.0, 1.0, 4);
    jit.run(&kernel, &d, &mem)?;
    let out = mem.read_f32s(y, 4)?;
    outln!("x*2+1: input {input:?} -> output {out:?}");
    let want: Vec<f32> = input.iter().map(|v| v * 2.0 + 1.0).collect();
    if out != want {
        return Err(format!("wrong result: expected {want:?}").into());
    }

    // Large: 4 Mi elements, against native Rust doing the same.
    let n: u32 = 1 << 22;
    let bytes = u64::from(n) * 4;
    let xs: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.25).collect();
    let bx = mem.alloc(bytes)?;
    let by = mem.alloc(bytes)?;
    mem.write_f32s(bx, &xs)?;
    let mut d = Dispatch::new([n / 256, 1, 1], [256, 1, 1]);
    d.uniforms = uniforms(bx, by, 1.5, -3.0, n);
    let t0 = Instant::now();
    jit.run(&kernel, &d, &mem)?; // includes compiling for this shape
    let first = t0.elapsed();
    let t1 = Instant::now();
    jit.run(&kernel, &d, &mem)?;
    let cached = t1.elapsed();
    // The native side writes a preallocated buffer, its pages touched by a
    // first untimed run: only the loop is timed.
    let mut native = vec![0f32; xs.len()];
    let native_run = |out: &mut [f32]| {
        for (o, v) in out.iter_mut().zip(&xs) {
            *o = v * 1.5 + -3.0;
        }
    };
    native_run(&mut native);
    let t2 = Instant::now();
    native_run(&mut native);
    let native_time = t2.elapsed();
    let got = mem.read_f32s(by, n as usize)?;
    let exact = got
        .iter()
        .zip(&native)
        .all(|(a, b)| a.to_bits() == b.to_bits());
    outln!(
        "x*1.5-3 over {n} floats: first run {first:.2?} (with compile), cached {cached:.2?} on {} thread(s), native Rust in place {native_time:.2?} on 1 thread (wall time; `wavejit bench` measures properly); bit-exact vs native: {exact}",
        jit.config().threads
    );
    outln!(
        "ran on: {} (compiled kernels: {})",
        jit.name(),
        jit.compile_count()
    );
    if !exact {
        return Err("JIT result differs from native Rust".into());
    }

    outln!();
    outln!("== ir3 (Adreno a630) through KGSL + PM4: a tinygrad capture ==");
    let t = Instant::now();
    let r = wavejit::demo_kgsl::replay_a2p1()?;
    outln!(
        "tinygrad Tensor(x)*2+1: mesa-compiled a630 kernel at {:#x}, lifted and run on the JIT: input {:?} -> output {:?} ({:.2?})",
        r.shader_addr,
        r.input,
        r.output,
        t.elapsed()
    );
    if r.output != [3.0, 5.0, 7.0, 9.0] {
        return Err(format!("ir3 kernel gave {:?}, expected [3, 5, 7, 9]", r.output).into());
    }
    rv32_mmio_section()?;
    aql_sections()?;
    Ok(ExitCode::SUCCESS)
}

/// Up to `k` values at each end of a vector.
fn ends<T: std::fmt::Debug>(v: &[T], k: usize) -> String {
    if v.len() <= 2 * k {
        return format!("{v:?}");
    }
    let head: Vec<String> = v[..k].iter().map(|x| format!("{x:?}")).collect();
    let tail: Vec<String> = v[v.len() - k..].iter().map(|x| format!("{x:?}")).collect();
    format!(
        "[{}, .. {}] ({} values)",
        head.join(", "),
        tail.join(", "),
        v.len()
    )
}

/// Prints a run and fails unless every output matches native Rust bit for bit.
fn report<T: std::fmt::Debug + PartialEq>(
    what: &str,
    names: &[&str],
    r: &wavejit::demo_isa::Run<T>,
) -> Result<(), CliError> {
    for (name, input) in names.iter().zip(&r.inputs) {
        outln!("  input {name}: {}", ends(input, 4));
    }
    outln!("  output:  {}", ends(&r.output, 4));
    outln!(
        "  {} work-items in workgroups of {}: {:.2?} (lift + compile + run)",
        r.grid,
        r.workgroup,
        r.elapsed
    );
    if let Some(i) = (0..r.expected.len()).find(|&i| r.output.get(i) != r.expected.get(i)) {
        return Err(format!(
            "{what}: element {i} is {:?}, native Rust gives {:?}",
            r.output.get(i),
            r.expected[i]
        )
        .into());
    }
    outln!("  matches native Rust: all {} values", r.expected.len());
    Ok(())
}

fn rv32_mmio_section() -> Result<(), CliError> {
    outln!();
    outln!("== RV32 GPGPU through its MMIO registers (BAR0 control, BAR2 VRAM) ==");
    outln!(
        "driver: GLOBAL_CTRL=ENABLE; code -> VRAM 0; argument block [in=0x1000, out=0x2000] -> VRAM 0x100;"
    );
    outln!(
        "        KERNEL_ADDR=0, GRID=(2,1,1), BLOCK=(32,1,1); DISPATCH; read GLOBAL_STATUS/ERROR_STATUS"
    );
    outln!("kernel: out[i] = 3 * in[i] + 7 (lw args from 0x100, IDs from the 0x80000000 window)");
    let r = wavejit::demo_isa::mmio_rv32(64)?;
    report("RV32 via MMIO", &["in"], &r)
}

fn aql_sections() -> Result<(), CliError> {
    let agent = wavejit::demo_isa::aql_agent();
    outln!();
    outln!("== AGX (Apple G13) through an HSA AQL queue ==");
    outln!(
        "kernel: out[i] = a[i] + b[i] + 7; kernarg qwords a, b, out = buffers in u0_u1, u2_u3, u4_u5"
    );
    let r = wavejit::demo_isa::aql_agx(&agent, 1000, 64)?;
    report("AGX via AQL", &["a", "b"], &r)?;

    outln!();
    outln!("== the same queue is ISA-neutral: RV32 and ir3 code objects ==");
    outln!(
        "RV32: out[i] = 3 * in[i] + 7; argument block at core address 0x100 (the device passes no pointer)"
    );
    let r = wavejit::demo_isa::aql_rv32(&agent, 1000, 128)?;
    report("RV32 via AQL", &["in"], &r)?;
    outln!(
        "ir3 (a630): out[i] = a[i] + 2 * b[i]; kernarg pointers out, a, b = const file c0.x..c1.y"
    );
    let r = wavejit::demo_isa::aql_ir3(&agent, 1000)?;
    report("ir3 via AQL", &["a", "b"], &r)
}
