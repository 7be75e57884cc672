//! ir3 lifter: hand-assembled a630 kernels lifted to the wavejit IR and run on the
//! golden interpreter, with exact result bits (mesa-relied integer semantics and
//! the measured a630 float rules).

mod ir3_buffer;

use ir3_buffer::{BUF, Buffer};
use wavejit_frontend::ir3::assemble;
use wavejit_frontend::ir3::lift::{LiftConfig, LiftError, lift};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Dispatch, Engine, Fault};

/// c0.xy = BUF; `consts` start at c1.x.
fn uniforms(consts: &[u32]) -> Vec<u8> {
    let mut c = vec![0u32; 1024];
    c[0] = BUF as u32;
    c[1] = (BUF >> 32) as u32;
    c[4..4 + consts.len()].copy_from_slice(consts);
    c.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn run_cfg(
    body: &str,
    consts: &[u32],
    lanes: u32,
    out_words: usize,
    cfg: &LiftConfig,
) -> Result<Vec<u32>, Fault> {
    let src = format!(
        "shl.b r0.y, r0.x, 2\nadd.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y\n{body}\nend\n"
    );
    let words = assemble(&src).unwrap_or_else(|e| panic!("assembling {src}: {e}"));
    let kernel = lift(&words, cfg).unwrap_or_else(|e| panic!("lifting {src}: {e}"));
    let mut d = Dispatch::new([1, 1, 1], [lanes, 1, 1]);
    d.wave_size = 64;
    d.uniforms = uniforms(consts);
    let mem = Buffer::new(&vec![0u32; out_words.max(lanes as usize) * 4]);
    Interpreter.run(&kernel, &d, &mem)?;
    Ok(mem.words())
}

/// Runs `body` (which leaves its result in r2.x) in one fiber; returns r2.x.
fn run1(body: &str, consts: &[u32]) -> u32 {
    let out = run_cfg(
        &format!("{body}\nstg.u32 g[r1.x], r2.x, 1"),
        consts,
        1,
        1,
        &LiftConfig::default(),
    );
    out.expect("dispatch faulted")[0]
}

#[test]
fn mull_u_multiplies_the_low_16_bits() {
    let v = run1("mull.u r2.x, c1.x, c1.y", &[0x1234_5678, 0x9abc_def0]);
    assert_eq!(v, 0x5678u32.wrapping_mul(0xdef0));
}

#[test]
fn madsh_m16_adds_the_shifted_cross_product() {
    let v = run1(
        "mov.u32u32 r3.y, c1.y\nmadsh.m16 r2.x, c1.x, r3.y, c1.z",
        &[0x1234_5678, 0x9abc_def0, 0x0101_0101],
    );
    let want = ((0x5678u32.wrapping_mul(0x9abc)) << 16).wrapping_add(0x0101_0101);
    assert_eq!(v, want);
}

#[test]
fn three_instruction_multiply_is_exact_mod_2_32() {
    for (a, b) in [
        (0x1234_5678u32, 0x9abc_def0u32),
        (0xffff_ffff, 0xffff_ffff),
        (123_456_789, 987_654_321),
        (7, 0x8000_0001),
    ] {
        let body = "mov.u32u32 r3.x, c1.x\nmov.u32u32 r3.y, c1.y\nmull.u r2.x, r3.x, r3.y\nmadsh.m16 r2.x, r3.x, r3.y, r2.x\nmadsh.m16 r2.x, r3.y, r3.x, r2.x";
        assert_eq!(run1(body, &[a, b]), a.wrapping_mul(b), "{a:#x} * {b:#x}");
    }
}

#[test]
fn clz_b_of_zero_is_minus_one() {
    assert_eq!(run1("clz.b r2.x, c1.x", &[0]), 0xffff_ffff);
    assert_eq!(run1("clz.b r2.x, c1.x", &[1]), 31);
    assert_eq!(run1("clz.b r2.x, c1.x", &[0x8000_0000]), 0);
    // clz.s: leading sign-bit copies; -1 for 0 and for -1.
    assert_eq!(run1("clz.s r2.x, c1.x", &[0]), 0xffff_ffff);
    assert_eq!(run1("clz.s r2.x, c1.x", &[0xffff_ffff]), 0xffff_ffff);
    assert_eq!(run1("clz.s r2.x, c1.x", &[0xffff_fff0]), 28);
    assert_eq!(run1("clz.s r2.x, c1.x", &[0x0000_00ff]), 24);
}

#[test]
fn integer_sat_clamps_to_the_type_range() {
    assert_eq!(
        run1("(sat)add.s r2.x, c1.x, c1.y", &[0x7fff_fff0, 0x100]),
        0x7fff_ffff
    );
    assert_eq!(
        run1("(sat)add.s r2.x, c1.x, c1.y", &[0x8000_0010, 0xffff_ff00]),
        0x8000_0000
    );
    assert_eq!(
        run1("(sat)add.u r2.x, c1.x, c1.y", &[0xffff_fff0, 0x100]),
        0xffff_ffff
    );
    assert_eq!(run1("(sat)sub.u r2.x, c1.x, c1.y", &[5, 6]), 0);
    assert_eq!(run1("add.u r2.x, c1.x, c1.y", &[0xffff_fff0, 0x100]), 0xf0);
}

#[test]
fn float_immediate_table() {
    let table: [(&str, u32); 12] = [
        ("(0.0)", 0x0000_0000),
        ("(0.5)", 0x3f00_0000),
        ("(1.0)", 0x3f80_0000),
        ("(2.0)", 0x4000_0000),
        ("(e)", 0x402d_f854),
        ("(pi)", 0x4049_0fdb),
        ("(1/pi)", 0x3ea2_f983),
        ("(1/log2(e))", 0x3f31_7218),
        ("(log2(e))", 0x3fb8_aa3b),
        ("(1/log2(10))", 0x3e9a_209b),
        ("(log2(10))", 0x4054_9a78),
        ("(4.0)", 0x4080_0000),
    ];
    for (imm, bits) in table {
        assert_eq!(
            run1(&format!("add.f r2.x, c1.x, {imm}"), &[0]),
            bits,
            "{imm}"
        );
    }
    // (neg) on a table entry.
    assert_eq!(run1("add.f r2.x, c1.x, (neg)(e)", &[0]), 0xc02d_f854);
}

#[test]
fn sin_cos_on_reduced_arguments() {
    for x in [0.5f32, -3.0, 3.1, 1.0e-3] {
        let s = run1("sin r2.x, c1.x", &[x.to_bits()]);
        assert_eq!(s, (f64::from(x).sin() as f32).to_bits(), "sin {x}");
        let c = run1("cos r2.x, c1.x", &[x.to_bits()]);
        assert_eq!(c, (f64::from(x).cos() as f32).to_bits(), "cos {x}");
    }
}

#[test]
fn denormals_flush_keeping_sign() {
    // Denormal inputs are zeros; denormal results too.
    assert_eq!(
        run1("add.f r2.x, c1.x, c1.y", &[0x0000_0001, 0x0000_0000]),
        0
    );
    assert_eq!(
        run1("add.f r2.x, c1.x, c1.y", &[0x8000_0001, 0x8000_0000]),
        0x8000_0000
    );
    // 2^-100 * 2^-30 = 2^-130: a denormal result, flushed to -0 with its sign.
    assert_eq!(
        run1("mul.f r2.x, c1.x, c1.y", &[0x0d80_0000, 0xb080_0000]),
        0x8000_0000
    );
}

#[test]
fn nan_results_are_canonical_and_never_sign_flipped() {
    assert_eq!(
        run1("add.f r2.x, c1.x, c1.y", &[0xffc0_1234, 0x3f80_0000]),
        0x7fc0_0000
    );
    assert_eq!(
        run1("absneg.f r2.x, (neg)c1.x", &[0x7fc0_0000]),
        0x7fc0_0000
    );
    assert_eq!(
        run1("add.f r2.x, (neg)c1.x, c1.y", &[0x7f80_0000, 0x7f80_0000]),
        0x7fc0_0000
    );
    assert_eq!(
        run1("mul.f r2.x, c1.x, c1.y", &[0x7f80_0000, 0]),
        0x7fc0_0000
    );
}

#[test]
fn max_of_signed_zeros_is_positive_in_either_order() {
    assert_eq!(run1("max.f r2.x, c1.x, c1.y", &[0x8000_0000, 0]), 0);
    assert_eq!(run1("max.f r2.x, c1.x, c1.y", &[0, 0x8000_0000]), 0);
}

#[test]
fn mad_flushes_the_product_before_adding() {
    // 2^-70 * 2^-70 = 2^-140 (denormal): flushed, so the sum is exactly c = 2^-126.
    // A fused multiply-add would give 0x00800200.
    assert_eq!(
        run1(
            "mov.u32u32 r3.y, c1.y\nmad.f32 r2.x, c1.x, r3.y, c1.z",
            &[0x1c80_0000, 0x1c80_0000, 0x0080_0000]
        ),
        0x0080_0000
    );
    // Unfused rounding: (1 + 2^-23)^2 - 1 rounds the product first.
    let a = f32::from_bits(0x3f80_0001);
    let want = (a * a) - 1.0;
    assert_eq!(
        run1(
            "mov.u32u32 r3.x, c1.x\nmad.f32 r2.x, c1.x, r3.x, c1.y",
            &[a.to_bits(), 0xbf80_0000]
        ),
        want.to_bits()
    );
}

#[test]
fn half_rcp_rounds_toward_zero() {
    // 1 / 1.0166015625: nearest-even gives 0x3bdf, toward zero 0x3bde.
    let v = run1(
        "mov.u16u16 hr3.x, hc1.x\nrcp hr4.x, hr3.x\ncov.u16u32 r2.x, hr4.x",
        &[0x3c11],
    );
    assert_eq!(v, 0x3bde);
}

#[test]
fn cov_f32_f16_defaults_to_round_toward_zero_and_flushes() {
    let v = run1(
        "cov.f32f16 hr3.x, c1.x\ncov.u16u32 r2.x, hr3.x",
        &[0x3f80_1400],
    );
    assert_eq!(v, 0x3c00);
    let v = run1(
        "cov.f32f16 (even)hr3.x, c1.x\ncov.u16u32 r2.x, hr3.x",
        &[0x3f80_1400],
    );
    assert_eq!(v, 0x3c01);
    // 2^-20 is an f16 subnormal: flushed to +0.
    let v = run1(
        "cov.f32f16 hr3.x, c1.x\ncov.u16u32 r2.x, hr3.x",
        &[0x3580_0000],
    );
    assert_eq!(v, 0);
}

#[test]
fn cov_float_to_int_truncates() {
    assert_eq!(
        run1("cov.f32s32 r2.x, c1.x", &[(-2.7f32).to_bits()]),
        (-2i32) as u32
    );
    assert_eq!(run1("cov.f32u32 r2.x, c1.x", &[(3.99f32).to_bits()]), 3);
    assert_eq!(
        run1("cov.s32f32 r2.x, c1.x", &[16_777_217]),
        16_777_216f32.to_bits()
    );
    assert_eq!(
        run1(
            "cov.u16s32 r2.x, hr2.x\nmov.s16s16 hr3.x, -1\ncov.s16s32 r2.x, hr3.x",
            &[]
        ),
        0xffff_ffff
    );
}

#[test]
fn neg_on_bitwise_ops_is_not() {
    assert_eq!(
        run1("and.b r2.x, (neg)c1.x, c1.y", &[0x0f0f_0f0f, 0xffff_0000]),
        0xf0f0_0000
    );
    assert_eq!(run1("absneg.s r2.x, (neg)c1.x", &[5]), (-5i32) as u32);
}

#[test]
fn shift_and_mask_forms() {
    assert_eq!(
        run1(
            "mov.u32u32 r3.x, c1.x\nshrm r2.x, 4, r3.x, 255",
            &[0x1234_5678]
        ),
        0x67
    );
    assert_eq!(
        run1(
            "mov.u32u32 r3.x, c1.x\nshlg r2.x, 4, r3.x, 7",
            &[0x0000_0010]
        ),
        0x107
    );
    assert_eq!(run1("mov.u32u32 r3.x, c1.x\nshl.b r2.x, r3.x, 33", &[1]), 2);
}

#[test]
fn merged_registers_alias_half_onto_full() {
    let body = "mov.u32u32 r3.x, c1.x\nmov.u16u16 hr6.y, hc1.y\nmov.u32u32 r2.x, r3.x\nstg.u32 g[r1.x], r2.x, 1";
    let merged =
        run_cfg(body, &[0x1111_2222, 0xabcd], 1, 1, &LiftConfig::default()).expect("merged");
    assert_eq!(merged[0], 0xabcd_2222);
    let cfg = LiftConfig {
        merged_regs: false,
        ..LiftConfig::default()
    };
    let separate = run_cfg(body, &[0x1111_2222, 0xabcd], 1, 1, &cfg).expect("separate");
    assert_eq!(separate[0], 0x1111_2222);
}

#[test]
fn divergent_loop_reconverges() {
    // r2.x = sum of 1..=lane, each lane looping its own count.
    let body = "mov.u32u32 r2.x, 0\nmov.u32u32 r2.y, r0.x\n\
        cmps.u.eq p0.x, r2.y, 0\nbr p0.x, #4\n\
        add.u r2.x, r2.x, r2.y\nsub.u r2.y, r2.y, 1\njump #-4\n\
        (jp)stg.u32 g[r1.x], r2.x, 1";
    let out = run_cfg(body, &[], 8, 8, &LiftConfig::default()).expect("loop");
    assert_eq!(out[..8], [0, 1, 3, 6, 10, 15, 21, 28]);
}

#[test]
fn predicated_store_only_where_p0_holds() {
    let body =
        "mov.u32u32 r2.x, 7\ncmps.u.lt p0.x, r0.x, 2\npredt\nstg.u32 g[r1.x], r2.x, 1\nprede";
    let out = run_cfg(body, &[], 4, 4, &LiftConfig::default()).expect("pred");
    assert_eq!(out[..4], [7, 7, 0, 0]);
}

#[test]
fn repeat_advances_destination_and_marked_sources() {
    let body = "(rpt2)mov.u32u32 r3.x, (r)c1.x\nadd.u r2.x, r3.x, r3.y\nadd.u r2.x, r2.x, r3.z";
    assert_eq!(run1(body, &[1, 20, 300]), 321);
}

#[test]
fn relative_register_read() {
    let body = "mov.u32u32 r3.x, c1.x\nmov.u32u32 r3.y, c1.y\nmov.s16s16 hr4.x, 12\nmova a0.x, hr4.x\nmov.u32u32 r2.x, r<a0.x + 1>";
    assert_eq!(run1(body, &[111, 222]), 222);
}

#[test]
fn shared_memory_and_barrier() {
    // Each lane stores lane+1, then reads its neighbour's value.
    let body = "add.u r2.x, r0.x, 1\nshl.b r3.x, r0.x, 2\nstl.u32 l[r3.x], r2.x, 1\n(sy)(ss)bar.g\n\
        add.u r3.y, r0.x, 1\nand.b r3.y, r3.y, 3\nshl.b r3.y, r3.y, 2\nldl.u32 r2.x, l[r3.y], 1\nstg.u32 g[r1.x], r2.x, 1";
    let out = run_cfg(body, &[], 4, 4, &LiftConfig::default()).expect("shared");
    assert_eq!(out[..4], [2, 3, 4, 1]);
}

#[test]
fn global_atomic_add_returns_old_values() {
    let body = "mov.u32u32 r2.x, 1\natomic.g.add.untyped.1d.u32.1.g r2.y, r1.x, r2.x";
    // Every lane adds 1 to word 0 (the address pair r1.x:r1.y points at its own
    // word; use lane 0's address for all).
    let body = format!("mov.u32u32 r1.x, c0.x\n{body}");
    let out = run_cfg(&body, &[], 5, 1, &LiftConfig::default()).expect("atomic");
    assert_eq!(out[0], 5);
}

#[test]
fn faults_name_the_ir3_pc() {
    let body = "mov.u32u32 r1.y, 1\nstg.u32 g[r1.x], r2.x, 1";
    let err = run_cfg(body, &[], 1, 1, &LiftConfig::default()).expect_err("must fault");
    assert_eq!(err.guest_pc, Some(4), "{err}");
}

#[test]
fn graphics_only_instructions_are_refused_by_name() {
    let words = assemble("(nop1) bary.f r0.x, r0.z, r0.x\nend").expect("asm");
    let e = lift(&words, &LiftConfig::default()).expect_err("bary.f");
    assert!(matches!(e, LiftError::Unsupported { pc: 0, .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with("unsupported in compute: bary.f at pc 0"),
        "{e}"
    );
}

#[test]
fn undecodable_words_name_word_and_pc() {
    let e = lift(&[0, 0xffff_ffff_ffff_ffff], &LiftConfig::default()).expect_err("raw");
    assert!(
        matches!(
            e,
            LiftError::Undecodable {
                pc: 1,
                word: 0xffff_ffff_ffff_ffff,
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("0xffffffffffffffff at pc 1"), "{e}");
}

#[test]
fn half_sources_with_a_full_destination_compute_in_f32() {
    // mul.f r2.x, hr6.x, hr6.y: mesa folded f2f32 of both sources into the
    // instruction, so the product is computed in f32 on the widened halves:
    // (1 + 2^-10)^2 = 1 + 2^-9 + 2^-20, exact in f32 (an f16 product would have
    // rounded it to 1 + 2^-9). tinygrad's test_gemm_fp16 depends on this.
    let v = run1(
        "mov.u16u16 hr6.x, hc1.x\nmov.u16u16 hr6.y, hc1.x\nmul.f r2.x, hr6.x, hr6.y",
        &[0x3c01],
    );
    assert_eq!(v, 0x3f80_4008);
}

/// isam.s2en with a register texture index past the 16 preloaded descriptors:
/// the descriptor comes from memory at SP_CS_TEXMEMOBJ_BASE + 64 * index.
fn isam_from_memory(fmt: u32, texel_words: &[u32], x: u32) -> Vec<u32> {
    let desc_base = BUF + 0x1000;
    let image = BUF + 0x2000;
    let (bpp, width, height) = (if fmt == 0x82 { 16 } else { 8 }, 4u32, 2u32);
    let pitch = bpp * width;
    let mut mem = vec![0u32; 0x3000 / 4];
    let d = (0x1000 + 64 * 17) / 4;
    mem[d] = fmt << 22;
    mem[d + 1] = width | (height << 15);
    mem[d + 2] = (pitch << 7) | (1 << 29);
    mem[d + 4] = image as u32;
    mem[d + 5] = (image >> 32) as u32;
    // texel (2, 1)
    let t = (0x2000 + pitch + 2 * bpp) as usize / 4;
    mem[t..t + texel_words.len()].copy_from_slice(texel_words);
    let body = format!(
        "mov.u16u16 hr6.x, 17\nmov.u32u32 r0.z, {x}\nmov.u32u32 r0.w, 1\n\
         isam.s2en.nonuniform (f32)(xyzw)r4.x, r0.z, hr6.x\n(sy)stg.u32 g[r1.x], r4.x, 4\nend\n"
    );
    let src = format!("shl.b r0.y, r0.x, 2\nadd.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y\n{body}");
    let words = assemble(&src).expect("asm");
    let mut cfg = LiftConfig::default();
    cfg.uniforms.info_off = 4096;
    let kernel = lift(&words, &cfg).expect("lift");
    let mut disp = Dispatch::new([1, 1, 1], [1, 1, 1]);
    let mut u = uniforms(&[]);
    u.extend_from_slice(&desc_base.to_le_bytes());
    u.extend_from_slice(&0u64.to_le_bytes());
    disp.uniforms = u;
    let b = Buffer::new(&mem);
    Interpreter.run(&kernel, &disp, &b).expect("isam");
    b.words()[..4].to_vec()
}

#[test]
fn texture_index_from_a_register_reads_descriptors_from_memory() {
    let f = [1.5f32, -2.0, 0.25, 1.0e-30].map(f32::to_bits);
    assert_eq!(isam_from_memory(0x82, &f, 2), f);
    // Outside the image: the zero border.
    assert_eq!(isam_from_memory(0x82, &f, 4), [0, 0, 0, 0]);
    // f16 texels widen exactly.
    let h = [0x3e00 | (0xc000 << 16), 0x3400 | (0x3c00 << 16)];
    assert_eq!(
        isam_from_memory(0x62, &h, 2),
        [1.5f32, -2.0, 0.25, 1.0].map(f32::to_bits)
    );
}

#[test]
fn preamble_writes_the_const_file_once_per_wave_semantics() {
    // The preamble copies c1.x to c2.x (stc, dword units) and loads c2.y from
    // memory (ldg.k); the main body reads both.
    let body = "shps #6\nmov.u32u32 r3.x, c1.x\nmova1 a1.x, 0\nstc.u32 c[a1.x+8], r3.x, 1\n\
        ldg.k.u32 c[9], g[r1.x+4], 1\nshpe\nadd.u r2.x, c2.x, c2.y\nadd.u r2.x, r2.x, 1\n\
        stg.u32 g[r1.x], r2.x, 1";
    let mut d = vec![0u32; 4];
    d[1] = 1000;
    let src =
        format!("shl.b r0.y, r0.x, 2\nmov.u32u32 r1.x, c0.x\nmov.u32u32 r1.y, c0.y\n{body}\nend\n");
    let words = assemble(&src).expect("asm");
    let kernel = lift(&words, &LiftConfig::default()).expect("lift");
    let mut disp = Dispatch::new([1, 1, 1], [4, 1, 1]);
    disp.wave_size = 64;
    disp.uniforms = uniforms(&[41]);
    let mem = Buffer::new(&d);
    Interpreter.run(&kernel, &disp, &mem).expect("run");
    // Every fiber stored 41 + 1000 + 1 to word 0.
    assert_eq!(mem.words()[0], 1042);
}

fn run4(body: &str, pre: &[u32]) -> Vec<u32> {
    let mut d = pre.to_vec();
    d.resize(4, 0);
    let src = format!(
        "shl.b r0.y, r0.x, 2\nadd.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y\n{body}\nend\n"
    );
    let words = assemble(&src).unwrap_or_else(|e| panic!("{src}: {e}"));
    let cfg = LiftConfig {
        private_size: 64,
        ..LiftConfig::default()
    };
    let kernel = lift(&words, &cfg).unwrap_or_else(|e| panic!("{src}: {e}"));
    let mut disp = Dispatch::new([1, 1, 1], [4, 1, 1]);
    disp.wave_size = 64;
    disp.uniforms = uniforms(&[]);
    let mem = Buffer::new(&d);
    Interpreter.run(&kernel, &disp, &mem).expect("run");
    mem.words()
}

#[test]
fn getone_elects_one_fiber() {
    let out = run4(
        "mov.u32u32 r2.x, 1\ngetone #2\nmov.u32u32 r2.x, 100\n(jp)stg.u32 g[r1.x], r2.x, 1",
        &[],
    );
    assert_eq!(out, [100, 1, 1, 1]);
}

#[test]
fn bany_and_ball_are_uniform_branches() {
    let any = run4(
        "mov.u32u32 r2.x, 7\ncmps.u.eq p0.x, r0.x, 2\nbany p0.x, #2\nmov.u32u32 r2.x, 9\n(jp)stg.u32 g[r1.x], r2.x, 1",
        &[],
    );
    assert_eq!(any, [7, 7, 7, 7]);
    let all = run4(
        "mov.u32u32 r2.x, 7\ncmps.u.eq p0.x, r0.x, 2\nball p0.x, #2\nmov.u32u32 r2.x, 9\n(jp)stg.u32 g[r1.x], r2.x, 1",
        &[],
    );
    assert_eq!(all, [9, 9, 9, 9]);
}

#[test]
fn call_and_ret() {
    let out = run4(
        "mov.u32u32 r2.x, 1\ncall #2\njump #3\nadd.u r2.x, r2.x, 10\nret\n(jp)stg.u32 g[r1.x], r2.x, 1",
        &[],
    );
    assert_eq!(out, [11, 11, 11, 11]);
}

#[test]
fn kill_ends_the_fibers_whose_predicate_holds() {
    let out = run4(
        "mov.u32u32 r2.x, 5\ncmps.u.lt p0.x, r0.x, 2\nkill p0.x\nstg.u32 g[r1.x], r2.x, 1",
        &[],
    );
    assert_eq!(out, [0, 0, 5, 5]);
}

#[test]
fn movmsk_swz_gat_and_shfl() {
    assert_eq!(
        run4("movmsk.w64 r2.x\nstg.u32 g[r1.x], r2.x, 1", &[]),
        [0xf; 4]
    );
    let swz = run4(
        "mov.u32u32 r2.x, 1\nmov.u32u32 r3.x, 2\nswz.u32u32 r2.x, r3.x, r3.x, r2.x\nshl.b r3.x, r3.x, 4\nadd.u r2.x, r2.x, r3.x\nstg.u32 g[r1.x], r2.x, 1",
        &[],
    );
    assert_eq!(swz, [0x12; 4]);
    let gat = run4(
        "mov.u32u32 r2.y, 1\nmov.u32u32 r2.z, 2\nmov.u32u32 r2.w, 3\nmov.u32u32 r3.x, 4\ngat.u32u32 r4.x, r2.w, r2.z, r3.x, r2.y\nstg.u32 g[r1.x], r4.y, 1",
        &[],
    );
    assert_eq!(gat, [2; 4]);
    let shfl = run4(
        "shl.b r3.x, r0.x, 3\nshfl.xor.u32 r2.x, r3.x, 1\nstg.u32 g[r1.x], r2.x, 1",
        &[],
    );
    assert_eq!(shfl, [8, 0, 24, 16]);
}

#[test]
fn private_memory_and_scaled_global_addressing() {
    let p = run4(
        "add.u r2.x, r0.x, 40\nmov.u32u32 r3.x, 8\nstp.u32 p[r3.x+4], r2.x, 1\nldp.u32 r2.y, p[r3.x+4], 1\nstg.u32 g[r1.x], r2.y, 1",
        &[],
    );
    assert_eq!(p, [40, 41, 42, 43]);
    // ldg.a.u32: pair(r4) + ((r3.x << SRC2_SHIFT 0) << TYPE_SHIFT 2): word 3.
    let a = run4(
        "mov.u32u32 r3.x, 3\nmov.u32u32 r4.x, c0.x\nmov.u32u32 r4.y, c0.y\nldg.a.u32 r2.x, g[r4.x+(r3.x<<2)], 1\n(sy)stg.u32 g[r1.x], r2.x, 1",
        &[0, 0, 0, 77],
    );
    assert_eq!(a, [77; 4]);
}

#[test]
fn sel_rndaz_and_sign() {
    assert_eq!(
        run1(
            "mov.u32u32 r3.x, c1.x\nsel.b32 r2.x, c1.y, r3.x, c1.z",
            &[0, 5, 6]
        ),
        6
    );
    assert_eq!(
        run1(
            "mov.u32u32 r3.x, c1.x\nsel.b32 r2.x, c1.y, r3.x, c1.z",
            &[2, 5, 6]
        ),
        5
    );
    assert_eq!(
        run1("rndaz.f r2.x, c1.x", &[2.5f32.to_bits()]),
        3.0f32.to_bits()
    );
    assert_eq!(
        run1("rndaz.f r2.x, c1.x", &[(-2.5f32).to_bits()]),
        (-3.0f32).to_bits()
    );
    assert_eq!(
        run1("rndne.f r2.x, c1.x", &[2.5f32.to_bits()]),
        2.0f32.to_bits()
    );
    assert_eq!(
        run1("sign.f r2.x, c1.x", &[(-7.5f32).to_bits()]),
        (-1.0f32).to_bits()
    );
    assert_eq!(run1("sign.f r2.x, c1.x", &[0x8000_0000]), 0x8000_0000);
}

#[test]
fn shared_registers_hold_one_value_per_wave() {
    // Only the elected fiber writes r48.x; every fiber of the wave reads it.
    let out = run4(
        "mov.u32u32 r48.x, 5\ngetone #2\nmov.u32u32 r48.x, 123\n(jp)stg.u32 g[r1.x], r48.x, 1",
        &[],
    );
    assert_eq!(out, [123; 4]);
}

#[test]
fn half_integer_ops_work_at_16_bits() {
    assert_eq!(
        run1(
            "mov.s16s16 hr6.x, -8\nashr.b hr6.y, hr6.x, h(1)\ncov.s16s32 r2.x, hr6.y",
            &[]
        ),
        (-4i32) as u32
    );
    // An immediate first source takes the instruction's (half) precision.
    assert_eq!(
        run1(
            "mov.s16s16 hr6.x, 3\nsub.s hr6.y, h(2), hr6.x\ncov.s16s32 r2.x, hr6.y",
            &[]
        ),
        (-1i32) as u32
    );
    assert_eq!(
        run1(
            "mov.u16u16 hr6.x, 32768\nshl.b hr6.y, hr6.x, h(1)\ncov.u16u32 r2.x, hr6.y",
            &[]
        ),
        0
    );
}

#[test]
fn cov_from_8_bits_sign_extends() {
    // tinygrad's int8 -> float32: ldg.u8 (zero-extending load), cov.u8s16, cov.s16f32.
    let v = run1(
        "mov.u16u16 hr6.x, 195\ncov.u8s16 hr6.x, hr6.x\ncov.s16f32 r2.x, hr6.x",
        &[],
    );
    assert_eq!(v, (-61.0f32).to_bits());
}

#[test]
fn relative_destination_and_sct() {
    let body = "mov.s16s16 hr4.x, 8\nmova a0.x, hr4.x\nmov.u32u32 r3.x, 31\nmov.s32s32 r<a0.x + 4>, r3.x\n\
        mov.u32u32 r2.x, r3.x\nadd.u r2.x, r2.x, r3.x";
    // a0.x = 8: r<a0.x + 4> is regid 12 = r3.x (overwritten with itself) -> 62.
    assert_eq!(run1(body, &[]), 62);
    let body = "mov.u32u32 r4.x, 1\nmov.u32u32 r4.y, 2\nmov.u32u32 r4.z, 3\nmov.u32u32 r4.w, 4\n\
        sct.u32u32 r5.x, r5.y, r3.w, r2.x, r4.x\nadd.u r2.x, r2.x, r3.w";
    // sct: r4.x..w -> r5.x, r5.y, r3.w, r2.x.
    assert_eq!(run1(body, &[]), 7);
}

#[test]
fn local_atomics_and_ldc_through_a_ubo_descriptor() {
    let out = run4(
        "mov.u32u32 r3.x, 0\nmov.u32u32 r2.x, 0\nstl.u32 l[r3.x], r2.x, 1\n(sy)(ss)bar.g\n\
        add.u r2.y, r0.x, 1\natomic.add.untyped.1d.u32.1.l r2.z, l[r3.x], r2.y\n(sy)(ss)bar.g\n\
        ldl.u32 r2.x, l[r3.x], 1\nstg.u32 g[r1.x], r2.x, 1",
        &[],
    );
    assert_eq!(out, [10; 4]);
}

#[test]
fn ldc_reads_a_ubo() {
    // UBO 0 -> BUF + 16 (descriptor appended after the const image).
    let src = "mov.u32u32 r1.x, c0.x\nmov.u32u32 r1.y, c0.y\nmov.u32u32 r3.x, 0\n\
        ldc.offset1.2.nonuniform r2.x, 1, r3.x\n(sy)add.u r2.x, r2.x, r2.y\nstg.u32 g[r1.x], r2.x, 1\nend\n";
    let words = assemble(src).expect("asm");
    let mut cfg = LiftConfig::default();
    cfg.uniforms.ubo_off = 4096;
    cfg.uniforms.ubo_count = 1;
    let kernel = lift(&words, &cfg).expect("lift");
    let mut d = Dispatch::new([1, 1, 1], [1, 1, 1]);
    let mut u = uniforms(&[]);
    u.extend_from_slice(&(BUF + 16).to_le_bytes());
    d.uniforms = u;
    // vec4 1 of the UBO = words 8..11 of the buffer (BUF + 16 + 16); .offset1 starts at .y.
    let mut w = vec![0u32; 16];
    w[9] = 100;
    w[10] = 23;
    let mem = Buffer::new(&w);
    Interpreter.run(&kernel, &d, &mem).expect("run");
    assert_eq!(mem.words()[0], 123);
}

/// r2.x = 10 * lane + 100, r2.y = 7; `body` leaves its result in r2.y.
fn subgroup(body: &str, lanes: u32) -> Vec<u32> {
    let body = format!(
        "mad.u24 r2.x, c1.x, r0.x, c1.y\nmov.u32u32 r2.y, 7\nmov.u32u32 r2.z, c1.z\n{body}\nstg.u32 g[r1.x], r2.y, 1"
    );
    let out = run_cfg(&body, &[10, 100, 2], lanes, 0, &LiftConfig::default());
    out.expect("dispatch faulted")[..lanes as usize].to_vec()
}

#[test]
fn quad_shuffles_read_within_the_quad() {
    let src = |l: u32| 10 * l + 100;
    for (op, f) in [
        (
            "quad_shuffle.horiz (u32)(x)r2.y, r2.x",
            (|l| l ^ 1) as fn(u32) -> u32,
        ),
        ("quad_shuffle.vert (u32)(x)r2.y, r2.x", |l| l ^ 2),
        ("quad_shuffle.diag (u32)(x)r2.y, r2.x", |l| l ^ 3),
        ("quad_shuffle.brcst (u32)(x)r2.y, r2.x, r2.z", |l| {
            (l & !3) | 2
        }),
    ] {
        let want: Vec<u32> = (0..8).map(|l| src(f(l))).collect();
        assert_eq!(subgroup(op, 8), want, "{op}");
    }
}

#[test]
fn brcst_active_fills_the_upper_half_of_each_cluster() {
    // All lanes executing: lanes 4..7 of each cluster of 8 take lane 3's value.
    let got = subgroup("brcst.active.w8 (u32)(x)r2.y, r2.x", 16);
    let want: Vec<u32> = (0..16)
        .map(|l| {
            if l % 8 >= 4 {
                10 * ((l & !7) + 3) + 100
            } else {
                7
            }
        })
        .collect();
    assert_eq!(got, want);
    // Lanes 2 and 3 branch around it: the first cluster's upper half takes lane 1,
    // and lanes 2 and 3 keep their destination (mesa's documented example).
    let got = subgroup(
        "shr.b r3.x, r0.x, 1\ncmps.u.eq p0.x, r3.x, 1\nbr p0.x, #2\nbrcst.active.w8 (u32)(x)r2.y, r2.x",
        16,
    );
    let want: Vec<u32> = (0..16)
        .map(|l| match l {
            4..=7 => 110,
            12..=15 => 210,
            _ => 7,
        })
        .collect();
    assert_eq!(got, want);
}

#[test]
fn brcst_active_of_an_idle_lower_half_leaves_the_cluster_alone() {
    // In clusters of 4, lanes 0 and 1 branch around: lanes 2 and 3 keep r2.y.
    let got = subgroup(
        "cmps.u.lt p0.x, r0.x, 2\nbr p0.x, #2\nbrcst.active.w4 (u32)(x)r2.y, r2.x",
        8,
    );
    assert_eq!(got, vec![7, 7, 7, 7, 7, 7, 150, 150]);
}

/// dp2acc / dp4acc: the SRC_SIGN field (.unsigned / .mixed: SRC1's bytes
/// signed) and, for dp2acc, SRC_PACK (.low / .high halves of both sources).
/// The lifter once read fields named SIGNED and SRC_PACKED_HIGH, which the
/// isaspec does not have, so `.high` read the low halves; field names are
/// typed constants since.
#[test]
fn dot_products_take_signedness_and_halves_from_their_fields() {
    let consts = [0xf005_ff02, 0x0304_0506, 100];
    let dot = |op: &str| {
        run1(
            &format!(
                "mov.u32u32 r3.x, c1.x\nmov.u32u32 r3.y, c1.y\nmov.u32u32 r3.z, c1.z\n\
                 {op} r2.x, r3.x, r3.y, r3.z"
            ),
            &consts,
        )
    };
    // Bytes, low first: SRC1 02 ff 05 f0, SRC2 06 05 04 03.
    assert_eq!(dot("dp2acc.unsigned.low"), 2 * 6 + 0xff * 5 + 100);
    assert_eq!(dot("dp2acc.mixed.low"), (2 * 6 - 5 + 100) as u32);
    assert_eq!(dot("dp2acc.unsigned.high"), 5 * 4 + 0xf0 * 3 + 100);
    assert_eq!(dot("dp2acc.mixed.high"), (5 * 4 - 16 * 3 + 100) as u32);
    assert_eq!(
        dot("dp4acc.mixed.low"),
        (2 * 6 - 5 + 5 * 4 - 16 * 3 + 100) as u32
    );
    assert_eq!(
        dot("dp4acc.unsigned.low"),
        2 * 6 + 0xff * 5 + 5 * 4 + 0xf0 * 3 + 100
    );
}

/// Lifts `src` with the workgroup id launched into r48.xyz (as tinygrad's
/// kernels have it) and runs it over `groups` workgroups of `lanes` fibers;
/// every fiber stores r2.x at its global index.
fn run_with_wgid_in_r48(src: &str, groups: u32, lanes: u32) -> (wavejit_ir::Kernel, Vec<u32>) {
    let cfg = LiftConfig {
        workgroup_id_regid: 0xc0,
        ..LiftConfig::default()
    };
    let src = format!(
        "{src}\nmull.u r3.x, r48.x, {lanes}\nadd.u r3.x, r3.x, r0.x\nshl.b r0.y, r3.x, 2\n\
         add.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y\nstg.u32 g[r1.x], r2.x, 1\nend\n"
    );
    let words = assemble(&src).unwrap_or_else(|e| panic!("assembling {src}: {e}"));
    let kernel = lift(&words, &cfg).unwrap_or_else(|e| panic!("lifting {src}: {e}"));
    let mut d = Dispatch::new([groups, 1, 1], [lanes, 1, 1]);
    d.wave_size = 64;
    d.uniforms = uniforms(&[]);
    let mem = Buffer::new(&vec![0u32; (groups * lanes) as usize]);
    Interpreter
        .run(&kernel, &d, &mem)
        .unwrap_or_else(|f| panic!("{src}: {f}"));
    (kernel, mem.words())
}

fn shared_accesses(k: &wavejit_ir::Kernel) -> usize {
    use wavejit_ir::{AddrSpace, InstKind};
    k.blocks
        .values()
        .flat_map(|b| &b.insts)
        .filter(|&&i| match &k.insts[i].kind {
            InstKind::Load(a) | InstKind::Store(a) => a.space == AddrSpace::Shared,
            _ => false,
        })
        .count()
}

/// A shared register nothing writes holds its launch value: it is read as the
/// workgroup id itself, with no workgroup memory behind it.
#[test]
fn a_shared_register_the_program_only_reads_is_the_workgroup_id() {
    let (k, out) = run_with_wgid_in_r48("mul.u24 r2.x, r48.x, 3", 3, 4);
    assert_eq!(out, [0, 0, 0, 0, 3, 3, 3, 3, 6, 6, 6, 6]);
    assert_eq!(shared_accesses(&k), 0, "{}", wavejit_ir::text::print(&k));
}

/// A program that writes the register keeps it in per-wave workgroup memory,
/// and its reads see the write.
#[test]
fn a_shared_register_the_program_writes_keeps_its_writes() {
    let (k, out) = run_with_wgid_in_r48(
        "add.u r48.x, r48.x, 5\nnop\nmov.u32u32 r2.x, r48.x\nsub.u r48.x, r48.x, 5",
        3,
        4,
    );
    // r48.x was id + 5 when read; the last write puts the id back for the
    // index arithmetic.
    assert_eq!(out, [5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7]);
    assert!(shared_accesses(&k) > 0, "{}", wavejit_ir::text::print(&k));
}

/// Read as the id, the register is bounded by the launch grid: the sign of a
/// 64-bit offset built from it (tinygrad's `ashr.b r2.z, r48.x, 31`) is known.
#[test]
fn the_grid_bounds_a_workgroup_id_read_from_a_shared_register() {
    use wavejit_ir::{DispatchShape, IBinOp, InstKind};
    let src = "ashr.b r2.z, r48.x, 31\nshl.b r3.x, r48.x, 2\nadd.u r1.x, c0.x, r3.x\n\
               add.u r1.y, c0.y, r2.z\nstg.u32 g[r1.x], r48.x, 1\nend\n";
    let words = assemble(src).expect("assembles");
    let any = LiftConfig {
        workgroup_id_regid: 0xc0,
        ..LiftConfig::default()
    };
    let grid = LiftConfig {
        shape: Some(DispatchShape {
            num_workgroups: [1024, 1, 1],
            workgroup_size: [1, 1, 1],
        }),
        ..any.clone()
    };
    let shifts = |k: &wavejit_ir::Kernel| {
        k.insts
            .values()
            .filter(|i| matches!(i.kind, InstKind::IBinary(IBinOp::ShrS)))
            .count()
    };
    let k_any = lift(&words, &any).expect("lifts");
    let k_grid = lift(&words, &grid).expect("lifts");
    assert_eq!(shifts(&k_any), 1, "{}", wavejit_ir::text::print(&k_any));
    assert_eq!(shifts(&k_grid), 0, "{}", wavejit_ir::text::print(&k_grid));
}
