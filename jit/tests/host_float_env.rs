//! Compiled code gives the interpreter's bits whatever float control word
//! the calling thread has set: a library built with `-ffast-math` turns on
//! FTZ and DAZ for the whole process, and wavejit may be loaded into it.

mod support;

#[cfg(target_arch = "x86_64")]
#[test]
fn a_flushing_host_environment_does_not_reach_kernels() {
    use support::{PROLOGUE, compare, parse, u32s};
    use wavejit_ir::Dispatch;

    fn mxcsr() -> u32 {
        let mut m = 0u32;
        // SAFETY: stmxcsr stores four bytes to `m`.
        unsafe { std::arch::asm!("stmxcsr [{}]", in(reg) &mut m) };
        m
    }
    fn set_mxcsr(m: u32) {
        // SAFETY: `m` is a value read by `mxcsr` with control bits changed.
        unsafe { std::arch::asm!("ldmxcsr [{}]", in(reg) &m) };
    }
    const DAZ_FTZ: u32 = 1 << 6 | 1 << 15;

    // IEEE arithmetic on subnormals: y[i] = 2 x[i] y[i] with subnormal
    // products and subnormal operands.
    let k = parse(&format!(
        "kernel @ieee shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v5, v20
  v22 = load.global.f32 v21
  v23 = load.global.f32 v6
  v24 = fmul.f32 v22, v23
  v25 = fadd.f32 v24, v24
  store.global.f32 v6, v25
  exit
}}
"
    ));
    const N: usize = 256;
    // 2^-70 2^-70 = 2^-140; 3 2^-149 * 2; 2^-149 * 0.75 rounds to 2^-149;
    // -16 2^-149 * 4.
    let pairs = [
        (0x1c80_0000u32, 0x1c80_0000u32, 0x0000_0400u32),
        (0x0000_0003, 0x4000_0000, 0x0000_000c),
        (0x0000_0001, 0x3f40_0000, 0x0000_0002),
        (0x8000_0010, 0x4080_0000, 0x8000_0080),
    ];
    let x: Vec<u8> = (0..N).flat_map(|i| pairs[i % 4].0.to_le_bytes()).collect();
    let y: Vec<u8> = (0..N).flat_map(|i| pairs[i % 4].1.to_le_bytes()).collect();
    let before = mxcsr();
    set_mxcsr(before | DAZ_FTZ);
    let out = compare(&k, &Dispatch::new([4, 1, 1], [64, 1, 1]), &y, &x);
    let after = mxcsr();
    set_mxcsr(before);
    assert_eq!(
        after & DAZ_FTZ,
        DAZ_FTZ,
        "the caller's control word is back"
    );
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for (i, &r) in got.iter().enumerate() {
        assert_eq!(r, pairs[i % 4].2, "lane {i}");
    }
}
