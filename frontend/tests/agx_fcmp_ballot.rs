//! fcmp_ballot's operand layout and conditions (overlay item 4): abs/neg at bits
//! 26/27 and 38/39, register-extension bits 42:43 / 40:41, fcond codes incl. 3/7.

mod agx_lift_support;
use agx_lift_support::{lanes, lift_code, run, run_kernel};
use wavejit_frontend::agx::{assemble, disasm};

const WORD: [u8; 8] = [0x22, 0x09, 0x50, 0x22, 0x24, 0x04, 0x01, 0x20];

#[test]
fn extension_bits_extend_the_register_not_abs_neg() {
    // Bits 42:43 = 01 put A at r8 + 32 = r40; bit 47 clear, cond 1 = flt.
    assert_eq!(disasm(&WORD).unwrap().0, "ballot r2, r40, r1, flt");
    let mut code = assemble(
        "load r0_r1, du0, 0, i32, xy, a\nwait a\nldimm r40, 0xc0a00000\nldimm r8, 0x40a00000",
    )
    .unwrap();
    code.extend_from_slice(&WORD);
    code.extend(assemble("store r2, du2, 0, i32, x, a\nstop").unwrap());
    // r40 = -5.0 < r1 = 1.0 in all 32 lanes (r8 = 5.0 would compare false).
    let out = run_kernel(
        &lift_code(&code, 0),
        lanes(32, 32),
        &[vec![0, 1f32.to_bits()], vec![0; 1]],
    );
    assert_eq!(out[1], vec![0xffff_ffff]);
}

#[test]
fn abs_and_neg_sit_after_each_sources_type() {
    // A's abs = bit 26, B's neg = bit 39.
    let mut w = WORD;
    w[5] &= !0x04; // A back to r8 (clear bit 42)
    w[3] |= 0x04; // bit 26: A.abs
    w[4] |= 0x80; // bit 39: B.neg
    assert_eq!(disasm(&w).unwrap().0, "ballot r2, r8.abs, r1.neg, flt");
}

fn ballot(cond: &str, a: f32, b: f32) -> u32 {
    let src = format!(
        "load r0_r1, du0, 0, i32, xy, a\nwait a\nballot r2, r0, r1, {cond}\nstore r2, du2, 0, i32, x, a\nstop"
    );
    let out = run(
        &src,
        lanes(1, 1),
        &[vec![a.to_bits(), b.to_bits()], vec![0]],
    );
    out[1][0]
}

#[test]
fn nan_losing_conditions_3_and_7() {
    // fltn / fgtn: true when B is NaN and A is not (minNum / maxNum selection).
    assert_eq!(ballot("fltn", 1.0, f32::NAN), 1);
    assert_eq!(ballot("flt", 1.0, f32::NAN), 0);
    assert_eq!(ballot("fgtn", 1.0, f32::NAN), 1);
    assert_eq!(ballot("fgtn", f32::NAN, 1.0), 0);
    assert_eq!(ballot("fltn", 1.0, 2.0), 1);
    assert_eq!(ballot("fnltn", 1.0, f32::NAN), 0);
    let w = assemble("ballot r2, r0, r1, fltn").unwrap();
    assert_eq!(w[7] >> 5, 3, "condition 3 at bits 61:63");
}
