//! Special functions and AGX pow_fixup.

use wavejit_ir::semantics::eval_pure;
use wavejit_ir::semantics::pow_fixup::pow_fixup;
use wavejit_ir::semantics::special::{special_f16, special_f32, special_f64};
use wavejit_ir::{Denorm, FloatMode, InstKind, NanMode, Round, SpecialFn, Type};

const NV: u32 = 0x10;
const DZ: u32 = 0x08;
const OF: u32 = 0x04;
const UF: u32 = 0x02;
const NX: u32 = 0x01;

const FLAGS: FloatMode = FloatMode {
    flags: true,
    ..FloatMode::IEEE
};

fn s32(func: SpecialFn, a: u32) -> (u32, u32) {
    special_f32(func, a, &FLAGS)
}

#[test]
fn rcp_is_correctly_rounded_division() {
    assert_eq!(s32(SpecialFn::Rcp, 0x4000_0000), (0x3f00_0000, 0));
    assert_eq!(s32(SpecialFn::Rcp, 0x4040_0000), (0x3eaa_aaab, NX));
    assert_eq!(s32(SpecialFn::Rcp, 0x0000_0000), (0x7f80_0000, DZ));
    assert_eq!(s32(SpecialFn::Rcp, 0x8000_0000), (0xff80_0000, DZ));
    assert_eq!(s32(SpecialFn::Rcp, 0xff80_0000), (0x8000_0000, 0));
    // 1 / 2^-128 overflows.
    assert_eq!(s32(SpecialFn::Rcp, 0x0020_0000), (0x7f80_0000, OF | NX));
    assert_eq!(s32(SpecialFn::Rcp, 0x7fc0_0001), (0x7fc0_0001, 0));
}

#[test]
fn half_rcp_rounds_toward_zero_when_asked() {
    // ir3: half-precision rcp rounds toward zero.
    let rtz = FloatMode {
        round: Round::TowardZero,
        ..FloatMode::IEEE
    };
    let mut differing = 0;
    for h in 0x3c01u16..0x4000 {
        let near = special_f16(SpecialFn::Rcp, h, &FloatMode::IEEE).0;
        let down = special_f16(SpecialFn::Rcp, h, &rtz).0;
        // Positive results: RTZ is RNE or one below.
        assert!(down == near || down + 1 == near, "{h:#06x}");
        differing += usize::from(down != near);
    }
    assert!(differing > 100, "{differing}");
    // 1/3 in f16 is 0x3555 (0.33325) in both directions.
    assert_eq!(special_f16(SpecialFn::Rcp, 0x4200, &rtz).0, 0x3555);
}

#[test]
fn rsqrt_edges_and_values() {
    assert_eq!(s32(SpecialFn::Rsqrt, 0x4080_0000), (0x3f00_0000, 0));
    assert_eq!(s32(SpecialFn::Rsqrt, 0x4000_0000), (0x3f35_04f3, NX));
    assert_eq!(s32(SpecialFn::Rsqrt, 0x0000_0000), (0x7f80_0000, DZ));
    assert_eq!(s32(SpecialFn::Rsqrt, 0x8000_0000), (0xff80_0000, DZ));
    assert_eq!(s32(SpecialFn::Rsqrt, 0xbf80_0000), (0x7fc0_0000, NV));
    assert_eq!(s32(SpecialFn::Rsqrt, 0xff80_0000), (0x7fc0_0000, NV));
    assert_eq!(s32(SpecialFn::Rsqrt, 0x7f80_0000), (0x0000_0000, 0));
    assert_eq!(s32(SpecialFn::Rsqrt, 0x7f80_0001), (0x7fc0_0001, NV));
}

#[test]
fn exp2_log2_edges_and_values() {
    assert_eq!(s32(SpecialFn::Exp2, 0x4040_0000), (0x4100_0000, 0)); // 2^3
    assert_eq!(s32(SpecialFn::Exp2, 0xc0c0_0000), (0x3c80_0000, 0)); // 2^-6 exact here
    assert_eq!(s32(SpecialFn::Exp2, 0x7f80_0000), (0x7f80_0000, 0));
    assert_eq!(s32(SpecialFn::Exp2, 0xff80_0000), (0x0000_0000, 0));
    assert_eq!(s32(SpecialFn::Exp2, 0x4300_0000), (0x7f80_0000, OF | NX)); // 2^128
    assert_eq!(s32(SpecialFn::Exp2, 0xc316_0000), (0x0000_0000, UF | NX)); // 2^-150
    assert_eq!(s32(SpecialFn::Exp2, 0xc315_0000), (0x0000_0001, 0)); // 2^-149 exact
    assert_eq!(s32(SpecialFn::Log2, 0x4100_0000), (0x4040_0000, 0)); // log2 8
    assert_eq!(s32(SpecialFn::Log2, 0x4120_0000), (0x4054_9a78, NX)); // log2 10
    assert_eq!(s32(SpecialFn::Log2, 0x3f80_0000), (0x0000_0000, 0));
    assert_eq!(s32(SpecialFn::Log2, 0x0000_0000), (0xff80_0000, DZ));
    assert_eq!(s32(SpecialFn::Log2, 0x8000_0000), (0xff80_0000, DZ));
    assert_eq!(s32(SpecialFn::Log2, 0xbf80_0000), (0x7fc0_0000, NV));
    assert_eq!(s32(SpecialFn::Log2, 0x7f80_0000), (0x7f80_0000, 0));
    assert_eq!(s32(SpecialFn::Log2, 0x0000_0001), (0xc315_0000, 0)); // -149
}

#[test]
fn sin_cos_edges_and_values() {
    assert_eq!(s32(SpecialFn::Sin, 0x0000_0000), (0x0000_0000, 0));
    assert_eq!(s32(SpecialFn::Sin, 0x8000_0000), (0x8000_0000, 0));
    assert_eq!(s32(SpecialFn::Cos, 0x8000_0000), (0x3f80_0000, 0));
    assert_eq!(s32(SpecialFn::Sin, 0x7f80_0000), (0x7fc0_0000, NV));
    assert_eq!(s32(SpecialFn::Cos, 0xff80_0000), (0x7fc0_0000, NV));
    assert_eq!(s32(SpecialFn::Sin, 0x4049_0fdb).0, 0xb3bb_bd2e); // sin(pi as f32)
    assert_eq!(s32(SpecialFn::Cos, 0x4049_0fdb).0, 0xbf80_0000);
    assert_eq!(s32(SpecialFn::Sin, 0x3f80_0000), (0x3f57_6aa4, NX));
    assert_eq!(s32(SpecialFn::Cos, 0x3f80_0000), (0x3f0a_5140, NX));
    // f64: the libm value itself.
    assert_eq!(
        special_f64(SpecialFn::Sin, 1f64.to_bits(), &FLAGS).0,
        1f64.sin().to_bits()
    );
    assert_eq!(
        special_f64(SpecialFn::Exp2, 0.5f64.to_bits(), &FLAGS).0,
        0.5f64.exp2().to_bits()
    );
}

#[test]
fn special_rules_and_dispatch() {
    let a630 = FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        denorm_out: Denorm::FlushKeepSign,
        nan: NanMode::Canonical(0x7fc0_0000),
        ..FloatMode::IEEE
    };
    // Subnormal input flushed: rcp(+0) = +inf.
    assert_eq!(
        special_f32(SpecialFn::Rcp, 0x0000_0001, &a630).0,
        0x7f80_0000
    );
    assert_eq!(
        special_f32(SpecialFn::Log2, 0xbf80_0000, &a630).0,
        0x7fc0_0000
    );
    assert_eq!(
        special_f32(SpecialFn::Sin, 0xffc0_0001, &a630).0,
        0x7fc0_0000
    );
    let mut out = [0, 0];
    let k = InstKind::Special {
        func: SpecialFn::Exp2,
        mode: FLAGS,
    };
    assert!(eval_pure(&k, &[Type::F32], &[0x3f80_0000], &mut out));
    assert_eq!(out, [0x4000_0000, 0]);
    let k = InstKind::Special {
        func: SpecialFn::Rsqrt,
        mode: FloatMode::IEEE,
    };
    assert!(eval_pure(&k, &[Type::F16], &[0x4400], &mut out[..1]));
    assert_eq!(out[0], 0x3800);
}

fn pf(a: f32, b: f32, c: u32) -> u32 {
    pow_fixup(a.to_bits(), b.to_bits(), c, &FloatMode::IEEE).0
}

#[test]
fn pow_fixup_edge_table() {
    let c = 32f32.to_bits();
    assert_eq!(pf(2.0, 5.0, c), 0x4200_0000);
    // Rule 2: sign bit of a set and b odd -> -c (incl. -0 and -inf).
    assert_eq!(pf(-2.0, 3.0, 8f32.to_bits()), 0xc100_0000);
    assert_eq!(pf(-0.0, 3.0, 0), 0x8000_0000);
    assert_eq!(pf(f32::NEG_INFINITY, 3.0, 0x7f80_0000), 0xff80_0000);
    assert_eq!(pf(-2.0, -3.0, 0x3e00_0000), 0xbe00_0000);
    assert_eq!(pf(-2.0, 4.0, c), c);
    assert_eq!(pf(-2.0, 16_777_215.0, c), c | 0x8000_0000);
    assert_eq!(pf(-2.0, 16_777_216.0, c), c);
    // Rule 3: a < 0 strictly, finite, b not an integer -> NaN.
    assert_eq!(pf(-2.0, 0.5, c), 0x7fc0_0000);
    assert_eq!(pf(-0.0, 0.5, c), c);
    assert_eq!(pf(f32::NEG_INFINITY, 0.5, c), c);
    assert_eq!(pf(-2.0, f32::INFINITY, 0x7f80_0000), 0x7f80_0000);
    // Rule 4: a == -1 and b infinite -> +1.
    assert_eq!(pf(-1.0, f32::INFINITY, 0x7fc0_0000), 0x3f80_0000);
    assert_eq!(pf(-1.0, f32::NEG_INFINITY, 0x7fc0_0000), 0x3f80_0000);
    // NaN a or b -> default NaN.
    assert_eq!(pf(f32::NAN, 2.0, c), 0x7fc0_0000);
    assert_eq!(pf(2.0, -f32::NAN, c), 0x7fc0_0000);
    // Operand C is read as f32 bits whatever it is.
    assert_eq!(pf(2.0, 2.0, 0x0000_0001), 0x0000_0001);
}

#[test]
fn pow_fixup_rule_0_comes_first() {
    // a == +1 or b == +-0 -> 1.0; else b == 1 -> a (agx.md section 6 rule 0).
    let nan = 0x7fc0_0000;
    assert_eq!(pf(1.0, f32::INFINITY, nan), 0x3f80_0000);
    assert_eq!(pf(1.0, f32::NAN, nan), 0x3f80_0000);
    assert_eq!(pf(0.0, 0.0, nan), 0x3f80_0000);
    assert_eq!(pf(f32::NEG_INFINITY, -0.0, nan), 0x3f80_0000);
    assert_eq!(pf(1.0, 2.0, 0x4080_0000), 0x3f80_0000);
    assert_eq!(pf(2.0, 0.0, 0x4000_0000), 0x3f80_0000);
    assert_eq!(pf(-2.0, 1.0, 0x4000_0000), 0xc000_0000);
    assert_eq!(
        pf(f32::from_bits(0x408b_488e), 1.0, 0x408b_488d),
        0x408b_488e
    );
    // A NaN a with b == 1 is a, then canonicalised by the result rules only if asked.
    assert_eq!(pf(f32::from_bits(0x7fc0_0001), 1.0, 0), 0x7fc0_0001);
}

#[test]
fn pow_fixup_with_agx_rules() {
    let agx = FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        denorm_out: Denorm::FlushKeepSign,
        nan: NanMode::Canonical(0x7fc0_0000),
        ..FloatMode::IEEE
    };
    // Subnormal c flushed; negative subnormal a reads as -0 (sign set).
    assert_eq!(
        pow_fixup(0x8000_0001, 3f32.to_bits(), 0x0000_0005, &agx).0,
        0x8000_0000
    );
    assert_eq!(
        pow_fixup(2f32.to_bits(), 2f32.to_bits(), 0xffc0_0001, &agx).0,
        0x7fc0_0000
    );
    let sat = FloatMode { sat: true, ..agx };
    assert_eq!(
        pow_fixup(2f32.to_bits(), 2f32.to_bits(), 4f32.to_bits(), &sat).0,
        0x3f80_0000
    );
    let k = InstKind::PowFixup { mode: agx };
    let mut out = [0];
    let args = [
        (-2f32).to_bits().into(),
        3f32.to_bits().into(),
        8f32.to_bits().into(),
    ];
    assert!(eval_pure(&k, &[Type::F32; 3], &args, &mut out));
    assert_eq!(out[0], 0xc100_0000);
}
