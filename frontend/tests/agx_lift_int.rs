//! Integer ALU of the AGX lifter on both engines, exact values.

mod agx_lift_support;
use agx_lift_support::one_lane;

/// Runs `ops` (writing r4..r7) on r0..r3 = `a` and returns r4..r7.
fn r4_7(ops: &str, a: [u32; 4]) -> Vec<u32> {
    one_lane(
        &format!("{ops}\nstore r4_r5_r6_r7, du2, 0, i32, xyzw, a"),
        a,
        4,
    )
}

#[test]
fn iadd_isub_shift_and_sign_extension() {
    let r = r4_7(
        "iadd r4, r0, r1\niadd r5, r0.sx, r1.sx, lsl 2\nisub r6, r0, r1, lsl 1\niadd r7, r2l.sx, r3h.sx",
        [5, 0xffff_ffff, 0x0000_8000, 0x0001_0000],
    );
    // 5 + -1; 5 + (-1 << 2); 5 - (0xffffffff << 1); sext16(0x8000) + sext16(0x0001).
    assert_eq!(r, vec![4, 1, 7, 0xffff_8001]);
}

#[test]
fn iadd_with_lsl_4() {
    // The largest shift the syntax offers still shifts (3 + (2 << 4)).
    let r = r4_7(
        "iadd r4, r0, r1, lsl 4\nmov r5, r0\nmov r6, r1\nmov r7, 0",
        [3, 2, 0, 0],
    );
    assert_eq!(r, vec![35, 3, 2, 0]);
}

#[test]
fn iadd_saturate_signed_and_unsigned() {
    let r = r4_7(
        "iadd r4, r0.sx, r1.sx, sat\nisub r5, r2, r3, sat\niadd r6, r0, r0, sat\nisub r7, r3.sx, r2.sx, sat",
        [0x7fff_ffff, 1, 3, 5],
    );
    // signed overflow clamps to INT_MAX; unsigned 3-5 clamps to 0; unsigned
    // 0x7fffffff*2 fits; signed 5-3 = 2.
    assert_eq!(r, vec![0x7fff_ffff, 0, 0xffff_fffe, 2]);
}

#[test]
fn iadd_saturates_to_a_16_bit_destination() {
    let r = one_lane(
        "iadd r4l, r0l, r1l, sat\niadd r4h, r0l.sx, r1l.sx, sat\nstore r4, du2, 0, i32, x, a",
        [0xfff0, 0x0020, 0, 0],
        1,
    );
    // unsigned 0xfff0+0x20 -> 0xffff; signed -16+32 = 16.
    assert_eq!(r, vec![0x0010_ffff]);
}

#[test]
fn imadd_imsub_imul_and_64_bit() {
    let r = one_lane(
        "imadd r4, r0, r1, r2\nimsub r5, r0.sx, r1.sx, r2.sx\nimul r6, r0, r3\nimul dr8, r3, r3\nstore r4_r5_r6_r7, du2, 0, i32, xyzw, a\nstore r8_r9, du2, 4, i32, xy, a",
        [3, 4, 5, 0x8000_0000],
        6,
    );
    assert_eq!(r[..3], [17, 7, 0x8000_0000]);
    // 0x80000000^2 = 2^62 in the 64-bit destination.
    assert_eq!(r[4..], [0, 0x4000_0000]);
}

#[test]
fn imadd_saturate() {
    let r = r4_7(
        "imadd r4, r0, r1, r2, sat\nimsub r5, r2, r2, r1, sat\nimadd r6, r0.sx, r1.sx, r3.sx, sat\nmov r7, 0",
        [0x10000, 0x10000, 7, 0x8000_0000],
    );
    // 2^32+7 clamps to u32 max; 49-65536 clamps to 0; 2^32 + INT_MIN = 2^31 clamps to INT_MAX.
    assert_eq!(r, vec![0xffff_ffff, 0, 0x7fff_ffff, 0]);
}

#[test]
fn bitop_truth_tables() {
    let a = 0b1100u32;
    let b = 0b1010u32;
    let ops = [
        ("and", a & b),
        ("or", a | b),
        ("xor", a ^ b),
        ("nand", !(a & b)),
        ("nor", !(a | b)),
        ("xnor", !(a ^ b)),
        ("andn1", !a & b),
        ("andn2", a & !b),
        ("orn1", !a | b),
        ("orn2", a | !b),
        ("zero", 0),
        ("one", u32::MAX),
    ];
    for (name, want) in ops {
        let r = one_lane(
            &format!("{name} r4, r0, r1\nstore r4, du2, 0, i32, x, a"),
            [a, b, 0, 0],
            1,
        );
        assert_eq!(r, vec![want], "{name}");
    }
    let r = r4_7(
        "mov r4, r0\nnot r5, r0\nmov_a r6, r0\nnot_a r7, r0",
        [a, b, 0, 0],
    );
    // B-only tables follow applegpu's hardware-checked model: they return A.
    assert_eq!(r, vec![a, !a, a, a]);
}

#[test]
fn shifts_use_amount_and_0x7f_not_31() {
    let r = r4_7(
        "shl r4, r0, r1\nshr r5, r0, r2\nshl r6, r0, r3\nshr r7, r0, 4",
        [0x8000_0001, 33, 31, 0x81],
    );
    // shl by 33 and by 0x81 & 0x7f = 1; shr by 31.
    assert_eq!(r, vec![0, 1, 2, 0x0800_0000]);
}

#[test]
fn asr_and_asrh() {
    let r = r4_7(
        "asr r4, r0, r1, r3, 0\nasr r5, r0, r2, r3, 0\nasrh r6, r0, r1, r3, 0\nasrh r7, r0, r2, r3, 0",
        [0x8000_0010, 4, 100, 0],
    );
    // asrh = low word of (sext(A) << 32) >> sa.
    assert_eq!(r, vec![0xf800_0001, 0xffff_ffff, 0x0000_0000, 0xffff_ffff]);
    let r = r4_7(
        "asrh r4, r0, r1, r3, 0\nmov r5, 0\nmov r6, 0\nmov r7, 0",
        [0x8000_0010, 36, 0, 0],
    );
    assert_eq!(r[0], 0xf800_0001);
}

#[test]
fn bitfield_insert_extract() {
    let r = r4_7(
        "bfi r4, r0, r1, r2, 4\nbfeil r5, r0, r1, r2, 4\nextr r6, r0, r1, r2, 8\nextr r7, r0, r1, r3, 0",
        [0xffff_ffff, 0x0000_0a5c, 8, 36],
    );
    // bfi: bits 8..11 of A replaced by B & 0xf (0xc).
    // bfeil: (A & ~0xf) | ((B >> 8) & 0xf) = 0xfffffff0 | 0xa.
    // extr: ((B:A) >> 8) & 0xff = 0xff; ((B:A) >> 36) & 0xffffffff = B >> 4.
    assert_eq!(r, vec![0xffff_fcff, 0xffff_fffa, 0xff, 0xa5]);
}

#[test]
fn shlhi_shrhi() {
    let r = r4_7(
        "shlhi r4, r0, r1, r2, 0\nshrhi r5, r0, r1, r2, 0\nshlhi r6, r0, r1, r3, 0\nshrhi r7, r0, r1, r3, 0",
        [0x1234_5678, 0x8000_0001, 4, 40],
    );
    // shlhi sa=4: ((B << 4) >> 32) = 8, m' = M; shrhi sa=4: ((B<<32)>>4) = 0x08000000_10000000,
    // low word 0x10000000 masked by m' = 0x0fffffff_f0000000 -> 0x10000000 | (A & 0x0fffffff).
    assert_eq!(r[0], 0x8);
    assert_eq!(r[1], 0x1000_0000 | (0x1234_5678 & 0x0fff_ffff));
    // sa=40: shlhi: (B << 8) low word with m' = M << 8: 0x00000100 | (A & 0xff) = 0x178.
    assert_eq!(r[2], 0x0000_0100 | 0x78);
    // shrhi sa=40 -> m' = (M<<32)>>32 = M: (B<<32)>>40 = B >> 8.
    assert_eq!(r[3], 0x0080_0000);
}

#[test]
fn bitrev_popcount_ffs_intl() {
    let r = r4_7(
        "bitrev r4, r0\npopcnt r5, r1\nffs r6, r1\nffs r7, r2",
        [1, 0x00f0_00ff, 0, 0],
    );
    // ffs is find LAST set (23 for 0x00f000ff), 0xffffffff for 0.
    assert_eq!(r, vec![0x8000_0000, 12, 23, 0xffff_ffff]);
    let r = one_lane(
        "intl r4, r0l, r0h\nstore r4, du2, 0, i32, x, a",
        [0x0000_ffff, 0, 0, 0],
        1,
    );
    assert_eq!(r, vec![0x5555_5555]);
}

#[test]
fn mov_imm_and_half_registers_keep_the_other_half() {
    let r = r4_7(
        "ldimm r4, 0x12345678\nmov r5, r4\nldimm r5h, 0xbeef\nldimm r6l, 0xcafe\nmov r7, r0\nmov r7h, r1l",
        [0x1111_2222, 0x3333_4444, 0, 0],
    );
    assert_eq!(r[0], 0x1234_5678);
    assert_eq!(r[1], 0xbeef_5678);
    assert_eq!(r[2] & 0xffff, 0xcafe);
    assert_eq!(r[3], 0x4444_2222);
}

#[test]
fn icmpsel_conditions_and_sign_extension() {
    let r = r4_7(
        "csel r4, r0, r1, 1, 2, ult\ncsel r5, r0, r1, 1, 2, slt\ncsel r6, r2l, r0, 1, 2, seq\ncsel r7, r2l, r0, 1, 2, ieq",
        [0xffff_ffff, 1, 0xffff, 0],
    );
    // u: 0xffffffff < 1 false; s: -1 < 1 true; seq: sext(0xffff) == -1; ueq: 0xffff != 0xffffffff.
    assert_eq!(r, vec![2, 1, 1, 2]);
}

/// Runs the raw instruction `word` between a load of r0..r3 (= `a`) and a store of
/// r0..r3; returns r0..r3.
fn raw_r0_3(word: &[u8], a: [u32; 4]) -> Vec<u32> {
    use agx_lift_support::{lanes, lift_code, run_kernel};
    use wavejit_frontend::agx::assemble;
    let mut code = assemble("load r0_r1_r2_r3, du0, 0, i32, xyzw, a\nwait a").unwrap();
    code.extend_from_slice(word);
    code.extend(assemble("store r0_r1_r2_r3, du2, 0, i32, xyzw, a\nstop").unwrap());
    let out = run_kernel(&lift_code(&code, 0), lanes(1, 1), &[a.to_vec(), vec![0; 4]]);
    out[1].clone()
}

#[test]
fn asr_sign_extends_a_16_bit_source() {
    // 2e81424400000000 = asr r0, r1l, 4 (issue 13; §5.4 sext(A), test_shift on the M1).
    let w = [0x2e, 0x81, 0x42, 0x44, 0x00, 0x00, 0x00, 0x00];
    assert_eq!(
        wavejit_frontend::agx::disasm(&w).unwrap().0,
        "asr r0, r1l, 4, 0, 0"
    );
    assert_eq!(raw_r0_3(&w, [0, 0x8000, 0, 0])[0], 0xffff_f800);
    assert_eq!(raw_r0_3(&w, [0, 0x7ff0, 0, 0])[0], 0x0000_07ff);
    // asrh: (sext(A) << 32) >> 4, low 32 bits.
    let r = r4_7(
        "asrh r4, r0l, 4, 0, 0\nasrh r5, r0, 36, 0, 0\nasr r6, r0h, 1, 0, 0\nmov r7, 0",
        [0x8000_8001, 0, 0, 0],
    );
    assert_eq!(r, vec![0x1000_0000, 0xf800_0800, 0xffff_c000, 0]);
}

#[test]
fn iadd_shift_5_to_7_drops_the_shifted_term() {
    // 0e0d4242a4002000: iadd r3, r1, r2, lsl 5 (§5.2: the term is 0 for s >= 5).
    let w = [0x0e, 0x0d, 0x42, 0x42, 0xa4, 0x00, 0x20, 0x00];
    assert_eq!(
        wavejit_frontend::agx::disasm(&w).unwrap().0,
        "iadd r3, r1, r2, lsl 5"
    );
    assert_eq!(raw_r0_3(&w, [0, 7, 3, 99])[3], 7);
    let r = r4_7(
        "iadd r4, r0, r1, lsl 6\nisub r5, r0, r1, lsl 7\nimadd r6, r0, r1, r1, lsl 5\niadd r7, r0, r1, lsl 4",
        [5, 2, 0, 0],
    );
    assert_eq!(r, vec![5, 5, 10, 37]);
}

#[test]
fn saturate_is_signed_when_an_immediate_has_sx() {
    // 4e0142ea40000000: isub.sat r0, r1, 14.sx with r1 = 0 -> -14 (signed clamp).
    let w = [0x4e, 0x01, 0x42, 0xea, 0x40, 0x00, 0x00, 0x00];
    assert_eq!(raw_r0_3(&w, [0x1234, 0, 0, 0])[0], 0xffff_fff2);
    // The immediate itself stays zero-extended: 0x7ffffff0 + 0x80 clamps to INT_MAX.
    let r = r4_7(
        "iadd r4, r0, 128.sx, sat\niadd r5, r0, 128, sat\nmov r6, 0\nmov r7, 0",
        [0x7fff_fff0, 0, 0, 0],
    );
    assert_eq!(r, vec![0x7fff_ffff, 0x8000_0070, 0, 0]);
}
