//! pow_fixup (fmadd32 with bit 52): the documented edge table with exact bits, C read
//! as a 32-bit register, and Metal's pow listing swept over (x, y).

mod agx_lift_support;
use agx_lift_support::{f32s, lanes, one_lane, run};
use wavejit_frontend::agx::{assemble, assemble_line};

const NAN: u32 = 0x7fc0_0000;

fn fixup(x: f32, y: f32, c: u32) -> u32 {
    one_lane(
        "pow_fixup r4, r0, r1, r2\nstore r4, du2, 0, i32, x, a",
        [x.to_bits(), y.to_bits(), c, 0],
        1,
    )[0]
}

#[test]
fn rule_0_one_base_or_zero_exponent_gives_one_and_unit_exponent_gives_a() {
    // agx.md §6 rule 0, before every other rule (NaN c and operands included).
    const ONE: u32 = 0x3f80_0000;
    assert_eq!(fixup(1.0, f32::INFINITY, NAN), ONE);
    assert_eq!(fixup(1.0, f32::NEG_INFINITY, NAN), ONE);
    assert_eq!(fixup(1.0, 2.0, 0x4080_0000), ONE);
    assert_eq!(fixup(1.0, f32::NAN, NAN), ONE);
    assert_eq!(fixup(0.0, 0.0, NAN), ONE);
    assert_eq!(fixup(f32::INFINITY, 0.0, NAN), ONE);
    assert_eq!(fixup(f32::NEG_INFINITY, -0.0, NAN), ONE);
    assert_eq!(fixup(2.0, 0.0, 0x4000_0000), ONE);
    assert_eq!(fixup(f32::NAN, -0.0, NAN), ONE);
    // b == 1: a exactly, not -c and not c.
    assert_eq!(fixup(-2.0, 1.0, 0x4000_0000), 0xc000_0000);
    assert_eq!(
        fixup(f32::from_bits(0x408b_488e), 1.0, 0x408b_488d),
        0x408b_488e
    );
    assert_eq!(fixup(-0.0, 1.0, 0), 0x8000_0000);
    // -1 is not +1: rule 4 still decides (-1)^inf.
    assert_eq!(fixup(-1.0, f32::INFINITY, NAN), ONE);
    assert_eq!(fixup(-1.0, 2.0, 0x3f80_0001), 0x3f80_0001);
}

#[test]
fn metal_pow_of_x_to_the_one_is_x_bit_for_bit() {
    // Metal's pow sequence; exp2(log2 x) is an ulp low for this x (0x408b488d), the
    // fix-up's b == 1 rule returns x itself.
    let src = "load r0_r1, du0, 0, i32, xy, a
wait a
log2 r3, r0.abs
fmul r3, r3, r1
exp2 r3, r3
pow_fixup r0, ^r0, ^r1, ^r3
store r0, du2, 0, i32, x, a
stop";
    let x = 0x408b_488e;
    assert_eq!(format!("{}", f32::from_bits(x)), "4.352607");
    let out = run(src, lanes(1, 1), &[vec![x, 1f32.to_bits()], vec![0]]);
    assert_eq!(out[1], vec![x]);
}

#[test]
fn negative_base_with_odd_integer_exponent_negates() {
    assert_eq!(fixup(-2.0, 3.0, 8f32.to_bits()), (-8f32).to_bits());
    assert_eq!(fixup(-2.0, -1.0, 0.5f32.to_bits()), (-0.5f32).to_bits());
    assert_eq!(fixup(-2.0, 2.0, 4f32.to_bits()), 4f32.to_bits());
    assert_eq!(fixup(2.0, 3.0, 8f32.to_bits()), 8f32.to_bits());
}

#[test]
fn minus_zero_is_negative_for_the_sign_but_not_for_nan() {
    assert_eq!(fixup(-0.0, 3.0, 0), 0x8000_0000);
    assert_eq!(fixup(-0.0, -3.0, 0x7f80_0000), 0xff80_0000);
    assert_eq!(fixup(-0.0, 0.5, 0), 0);
    assert_eq!(fixup(-0.0, 2.0, 0), 0);
}

#[test]
fn finite_negative_base_with_fractional_exponent_is_nan() {
    assert_eq!(fixup(-2.0, 0.5, 1.414f32.to_bits()), NAN);
    assert_eq!(fixup(-1e-30, -2.5, 0x7f80_0000), NAN);
}

#[test]
fn infinite_base_with_fractional_exponent_keeps_c() {
    assert_eq!(fixup(f32::NEG_INFINITY, 0.5, 0x7f80_0000), 0x7f80_0000);
    assert_eq!(fixup(f32::NEG_INFINITY, 3.0, 0x7f80_0000), 0xff80_0000);
    assert_eq!(fixup(f32::NEG_INFINITY, -3.0, 0), 0x8000_0000);
}

#[test]
fn minus_one_to_infinity_is_one() {
    assert_eq!(fixup(-1.0, f32::INFINITY, NAN), 0x3f80_0000);
    assert_eq!(fixup(-1.0, f32::NEG_INFINITY, NAN), 0x3f80_0000);
}

#[test]
fn nan_operands_give_the_canonical_nan() {
    // The NaN sign matters on hardware in detail; inside pow c is NaN as well.
    assert_eq!(fixup(f32::from_bits(0xffc0_0000), 2.0, 4f32.to_bits()), NAN);
    assert_eq!(fixup(2.0, f32::from_bits(0x7fc0_0001), 4f32.to_bits()), NAN);
}

#[test]
fn odd_is_judged_on_the_f32_value() {
    // |y| >= 2^24 is always even.
    assert_eq!(fixup(-2.0, 16_777_216.0, 0x7f80_0000), 0x7f80_0000);
    assert_eq!(fixup(-2.0, 16_777_215.0, 0x7f80_0000), 0xff80_0000);
}

#[test]
fn operand_c_is_always_read_as_32_bit() {
    // pow_fixup r0, r1, r2, r3l (C encoded 16-bit) and r3 (32-bit): same result.
    let short = [0x3a, 0x81, 0x42, 0x42, 0x24, 0x46, 0x10, 0x00];
    let long = [0x3a, 0x81, 0x42, 0x42, 0x24, 0x46, 0x12, 0x00];
    assert_eq!(assemble_line("pow_fixup r0, r1, r2, r3l").unwrap(), short);
    assert_eq!(assemble_line("pow_fixup r0, r1, r2, r3").unwrap(), long);
    for (name, text) in [
        ("r3l", "pow_fixup r0, r1, r2, r3l"),
        ("r3", "pow_fixup r0, r1, r2, r3"),
    ] {
        let src = format!(
            "load r1_r2_r3, du0, 0, i32, xyz, a\n{text}\nstore r0, du2, 0, i32, x, a\nstop"
        );
        let out = run(
            &src,
            lanes(1, 1),
            &[
                vec![2f32.to_bits(), 5f32.to_bits(), 32f32.to_bits()],
                vec![0],
            ],
        );
        assert_eq!(out[1], vec![0x4200_0000], "{name}");
    }
}

/// The rule of agx.md §6 on f32 bits (test oracle, written independently).
fn rule(a: u32, b: u32, c: u32) -> u32 {
    let (x, y) = (f32::from_bits(a), f32::from_bits(b));
    if x == 1.0 || y == 0.0 {
        return 1f32.to_bits();
    }
    if y == 1.0 {
        return a;
    }
    if x.is_nan() || y.is_nan() {
        return NAN;
    }
    if x == -1.0 && y.is_infinite() {
        return 1f32.to_bits();
    }
    let integer = y.is_infinite() || y.fract() == 0.0;
    if x < 0.0 && x.is_finite() && !integer {
        return NAN;
    }
    let odd =
        y.is_finite() && y.abs() < 16_777_216.0 && y.fract() == 0.0 && (y.abs() as u32) % 2 == 1;
    if a & 0x8000_0000 != 0 && odd {
        return c ^ 0x8000_0000;
    }
    c
}

#[test]
fn metal_pow_listing_over_a_sweep() {
    // Metal pow(x, y) on M1: log2 t, |x|; fmul t, t, y; exp2 t, t; fmadd32[bit52] d, x, y, t.
    let src = "mov r2, thread_in_grid_x
iadd r5, 0, r2, lsl 1
load r0_r1, du0, r5, i32, xy, a
wait a
log2 r3, r0.abs
fmul r3, r3, r1
exp2 r3, r3
pow_fixup r0, ^r0, ^r1, ^r3
store r0, du2, r2, i32, x, a
store r3, du4, r2, i32, x, a
stop";
    let code = assemble(src).unwrap();
    let metal = [0x3a, 0x81, 0xc0, 0x22, 0x2c, 0xc6, 0x12, 0x00];
    assert!(
        code.windows(8).any(|w| w == metal),
        "the listing uses Metal's bytes"
    );
    let xs = [
        -8.0f32,
        -2.0,
        -1.5,
        -1.0,
        -0.5,
        -0.0,
        0.0,
        0.5,
        1.0,
        2.0,
        3.0,
        10.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let ys = [
        -3.0f32,
        -2.0,
        -1.0,
        -0.5,
        0.0,
        0.5,
        1.0,
        2.0,
        2.5,
        3.0,
        7.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
    ];
    let mut input = Vec::new();
    for &x in &xs {
        for &y in &ys {
            input.extend([x, y]);
        }
    }
    let n = input.len() / 2;
    let groups = n.div_ceil(32) as u32 * 32;
    input.resize(2 * groups as usize, 1.0);
    let out = run(
        src,
        lanes(n as u32, 32),
        &[
            f32s(&input),
            vec![0; groups as usize],
            vec![0; groups as usize],
        ],
    );
    let mut checked = 0;
    for i in 0..n {
        let (a, b) = (input[2 * i].to_bits(), input[2 * i + 1].to_bits());
        let (d, c) = (out[1][i], out[2][i]);
        assert_eq!(
            d,
            rule(a, b, c),
            "pow({}, {})",
            input[2 * i],
            input[2 * i + 1]
        );
        // Where IEEE pow is finite and nonzero the listing is close to it (y = 0 and
        // |x| = 1 go through log2/exp2 specials: 0 * inf is NaN in the listing).
        let (x, y) = (input[2 * i], input[2 * i + 1]);
        let want = x.powf(y);
        if want.is_finite() && want != 0.0 && y != 0.0 && x.abs() != 1.0 {
            let got = f32::from_bits(d);
            assert!(
                ((got - want) / want).abs() < 1e-6,
                "pow({x}, {y}) = {got}, want {want}"
            );
            checked += 1;
        }
    }
    assert!(checked > 60, "{checked}");
}
