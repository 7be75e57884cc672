//! Float ALU of the AGX lifter: the FP32/FP16 rules, double rounding into 16-bit
//! destinations, saturate, csel without flushing, funops and convert.

mod agx_lift_support;
use agx_lift_support::one_lane;

fn r4_7(ops: &str, a: [u32; 4]) -> Vec<u32> {
    one_lane(
        &format!("{ops}\nstore r4_r5_r6_r7, du2, 0, i32, xyzw, a"),
        a,
        4,
    )
}

fn b(f: f32) -> u32 {
    f.to_bits()
}

#[test]
fn fadd_fmul_ffma_round_once() {
    // fma(a, b, c) with a*b exact only before rounding: 1+2^-23 squared - 1.
    let a = b(1.0 + f32::EPSILON);
    let r = r4_7(
        "fadd r4, r0, r1\nfmul r5, r0, r1\nffma r6, r2, r2, r3\nfadd r7, r0.neg, r1.abs",
        [b(1.5), b(-2.0), a, b(-1.0)],
    );
    assert_eq!(r[0], b(-0.5));
    assert_eq!(r[1], b(-3.0));
    // fused: 2^-22 + 2^-46 exactly representable? rounds once to 2^-22 + 2^-46.
    assert_eq!(
        r[2],
        b((1.0f64 + f64::from(f32::EPSILON)).mul_add(1.0 + f64::from(f32::EPSILON), -1.0) as f32)
    );
    assert_eq!(r[3], b(0.5));
}

#[test]
fn fp32_denormals_flush_in_and_out_keeping_sign() {
    let tiny = b(2f32.powi(-100));
    let r = r4_7(
        "fmul r4, r0, r1\nfmul r5, r0.neg, r1\nfadd r6, r2, 0.0\nfadd r7, r2.neg, -0.0",
        [tiny, b(2f32.powi(-30)), 0x0040_0000, 0],
    );
    // 2^-130 is subnormal: +0 and -0; a denormal input reads as +-0.
    assert_eq!(r, vec![0, 0x8000_0000, 0, 0x8000_0000]);
}

#[test]
fn tininess_is_judged_before_rounding() {
    // (1 - 2^-24) * 2^-126 = 2^-126 - 2^-150 rounds (tie to even) up to the smallest
    // normal, but the exact value is below 2^-126, so the result flushes to ±0.
    let r = r4_7(
        "fmul r4, r0, r1\nfmul r5, r0.neg, r1\nffma r6, r0, r1, r2\nfmul r7, r3, r1",
        [0x3f7f_ffff, 0x0080_0000, 0x0080_0000, b(1.0)],
    );
    // ffma: 2^-125 - 2^-150 is normal (ties to even 2^-125); 1.0 * 2^-126 stays.
    assert_eq!(r, vec![0, 0x8000_0000, 0x0100_0000, 0x0080_0000]);
}

#[test]
fn nan_results_are_canonical() {
    let r = r4_7(
        "fadd r4, r0, 1.0\nfadd r5, r1, r1.neg\nfmul r6, r2, 0.0\nffma r7, r3, 1.0, 1.0",
        [0x7f80_0001, b(f32::INFINITY), b(f32::INFINITY), 0xffc1_2345],
    );
    assert_eq!(r, vec![0x7fc0_0000; 4]);
    let r = one_lane(
        "hadd r4l, r0l, r0h\nhmul r4h, r1l, 0.0\nstore r4, du2, 0, i32, x, a",
        [0xfe01_7c01, 0x7c00, 0, 0],
        1,
    );
    assert_eq!(r, vec![0x7e00_7e00]);
}

#[test]
fn fmul_of_negative_and_plus_zero_is_plus_zero() {
    // fmul = a*b + (+0): (-2)*(+0) + 0 = +0 (model).
    let r = one_lane(
        "fmul r4, r0, 0.0\nstore r4, du2, 0, i32, x, a",
        [b(-2.0), 0, 0, 0],
        1,
    );
    assert_eq!(r, vec![0]);
}

#[test]
fn fp16_denormals_are_kept() {
    let r = one_lane(
        "hadd r4l, r0l, r0l\nhfma r4h, r0h, r0h, r0l\nstore r4, du2, 0, i32, x, a",
        [0x0400_0001, 0, 0, 0],
        1,
    );
    // 2^-24 + 2^-24; (2^-14)^2 + 2^-24 = 2^-24 (the product rounds away).
    assert_eq!(r, vec![0x0001_0002]);
}

#[test]
fn fmadd32_into_16_bit_destination_rounds_twice() {
    // a*b + c = 1 + 2^-11 + 2^-30: to f32 gives 1 + 2^-11 (a tie for f16), then
    // RNE to 1.0. A single rounding would give 1 + 2^-10 (0x3c01).
    let r = one_lane(
        "ffma r4l, r0, r0, r1\nffma r4h, r0, r0, r2\nstore r4, du2, 0, i32, x, a",
        [
            b(2f32.powi(-15)),
            b(1.0 + 2f32.powi(-11)),
            b(1.0 + 2f32.powi(-10) + 2f32.powi(-11)),
            0,
        ],
        1,
    );
    // second: 1 + 2^-10 + 2^-11 + 2^-30 -> f32 1+2^-10+2^-11 -> tie -> even 1+2^-9 (0x3c02).
    assert_eq!(r, vec![0x3c02_3c00]);
}

#[test]
fn f32_source_into_16_bit_destination_keeps_f16_denormals() {
    // fadd r4l, x, -0.0 converts f32 -> f16 RNE; 2^-20 is an f16 subnormal (0x0010).
    let r = one_lane(
        "fadd r4l, r0, -0.0\nfadd r4h, r1, -0.0\nstore r4, du2, 0, i32, x, a",
        [b(2f32.powi(-20)), b(65520.0), 0, 0],
        1,
    );
    // 65520 rounds to +inf in f16.
    assert_eq!(r, vec![0x7c00_0010]);
}

#[test]
fn saturate_clamps_nan_and_negative_to_plus_zero() {
    let r = r4_7(
        "fadd r4, r0, 0.5, sat\nfadd r5, r1, 0.0, sat\nfadd r6, r2, 1.0, sat\nfadd r7, r3, -0.0, sat",
        [b(2.0), b(-3.0), 0x7fc0_0000, 0x8000_0000],
    );
    assert_eq!(r, vec![b(1.0), 0, 0, 0]);
    let r = one_lane(
        "hadd r4l, r0l, 0.25, sat\nfadd r4h, r1, 0.0, sat\nstore r4, du2, 0, i32, x, a",
        [0x3800, b(0.75), 0, 0],
        1,
    );
    assert_eq!(r, vec![0x3a00_3a00]);
}

#[test]
fn fcmpsel_copies_raw_bits_without_flushing() {
    let r = r4_7(
        "csel r4, r0, r1, r0, r1, fltn\ncsel r5, r1, r2, r1, r2, fgtn\ncsel r6, r2, r1, r2, r1, flt\ncsel r7, r3, r3, 1, 2, feq",
        [0x0000_0001, b(1.0), 0x7fc0_0001, 0x7f80_0001],
    );
    // minNum(denormal, 1.0) is the raw denormal (flushed to 0 for the compare: 0 < 1).
    assert_eq!(r[0], 1);
    // gtn: B NaN, A a number -> A.
    assert_eq!(r[1], b(1.0));
    // NaN < x is false -> Y, raw.
    assert_eq!(r[2], b(1.0));
    assert_eq!(r[3], 2);
}

#[test]
fn float_compare_codes() {
    let conds = [
        ("feq", [false, true, false]),
        ("flt", [true, false, false]),
        ("fgt", [false, false, false]),
        ("fgte", [false, true, false]),
        ("flte", [true, true, false]),
        ("fltn", [true, false, false]),
        ("fgtn", [false, false, false]),
    ];
    for (c, want) in conds {
        let r = one_lane(
            &format!(
                "csel r4, r0, r1, 1, 0, {c}\ncsel r5, r1, r1, 1, 0, {c}\ncsel r6, r2, r1, 1, 0, {c}\nstore r4_r5_r6, du2, 0, i32, xyz, a"
            ),
            [b(1.0), b(2.0), 0x7fc0_0000, 0],
            3,
        );
        assert_eq!(r, want.map(u32::from).to_vec(), "{c}");
    }
}

#[test]
fn rounding_funops() {
    let r = r4_7(
        "floor r4, r0\nceil r5, r0\ntrunc r6, r1\nrint r7, r2",
        [b(-1.5), b(-2.7), b(2.5), 0],
    );
    assert_eq!(r, vec![b(-2.0), b(-1.0), b(-2.0), b(2.0)]);
    let r = r4_7(
        "rint r4, r0\nfloor r5, r1\nceil r6, r2\ntrunc r7, r3",
        [b(3.5), 0x8000_0001, 0x7f80_0001, b(-0.5)],
    );
    // -denormal flushes to -0; NaN canonical; trunc(-0.5) = -0.
    assert_eq!(r, vec![b(4.0), 0x8000_0000, 0x7fc0_0000, 0x8000_0000]);
}

#[test]
fn transcendental_pieces() {
    let r = r4_7(
        "rcp r4, r0\nrsqrt r5, r1\nlog2 r6, r1\nexp2 r7, r2",
        [b(4.0), b(16.0), b(-3.0), 0],
    );
    assert_eq!(r, vec![b(0.25), b(0.25), b(4.0), b(0.125)]);
    // sqrt(x) = x * rsqrts(x), also at 0 and +inf.
    let r = r4_7(
        "rsqrts r4, r0\nfmul r4, r0, r4\nrsqrts r5, r1\nfmul r5, r1, r5\nrsqrts r6, r2\nfmul r6, r2, r6\nrcp r7, r3",
        [b(9.0), 0, b(f32::INFINITY), 0x8000_0000],
    );
    assert_eq!(r, vec![b(3.0), 0, b(f32::INFINITY), b(f32::NEG_INFINITY)]);
    // sin(x) for a quarter-turn argument t: p = sin_pt_1(t); sin = sin_pt_2(p) * p.
    let r = r4_7(
        "sinr r4, r0\nsinc r5, r4\nfmul r5, r5, r4\nsinr r6, r1\nsinc r7, r6\nfmul r7, r7, r6",
        [b(1.0), b(3.0), 0, 0],
    );
    assert_eq!(r[1], b(1.0));
    assert_eq!(r[3], b(-1.0));
}

#[test]
fn convert_int_float_both_ways() {
    let r = r4_7(
        "u32_to_f r4, r0, rte\ns32_to_f r5, r1, rte\nf_to_s32 r6, r2, rtz\nf_to_u32 r7, r3, rtz",
        [16_777_217, 0xffff_fffe, b(-2.75), b(-5.0)],
    );
    // 2^24+1 -> 2^24 (RNE); -2; trunc(-2.75) = -2; negative -> 0 (saturating).
    assert_eq!(r, vec![b(16_777_216.0), b(-2.0), 0xffff_fffe, 0]);
    let r = r4_7(
        "f_to_s32 r4, r0, rtz\nf_to_u32 r5, r1, rtz\nu8_to_f r6, r2, rte\ns8_to_f r7, r2, rte",
        [0x7fc0_0000, b(1e10), 0x1ff, 0],
    );
    // NaN -> 0 (Metal rule), overflow saturates, 8-bit sources take the low byte.
    assert_eq!(r, vec![0, 0xffff_ffff, b(255.0), b(-1.0)]);
    let r = one_lane(
        "u16_to_f r4l, r0, rte\nf_to_s16 r4h, r1l, rtz\nstore r4, du2, 0, i32, x, a",
        [2049, 0xc500, 0, 0],
        1,
    );
    // 2049 -> f16 2048 (RNE); f16 -5.0 -> -5.
    assert_eq!(r, vec![0xfffb_6800]);
}
