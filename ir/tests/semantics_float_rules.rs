//! The float rules around an instruction: flush, NaN, saturate, min/max, fma.

use wavejit_ir::semantics::arith::{fbinary_f16, fbinary_f32, fma_f32, funary_f32};
use wavejit_ir::semantics::eval_pure;
use wavejit_ir::{Denorm, FBinOp, FUnOp, FloatMode, InstKind, NanMode, Type};

const FTZ: FloatMode = FloatMode {
    denorm_in: Denorm::FlushKeepSign,
    denorm_out: Denorm::FlushKeepSign,
    ..FloatMode::IEEE
};

/// a630: flush both ways, canonical NaN 0x7fc00000.
const A630: FloatMode = FloatMode {
    denorm_in: Denorm::FlushKeepSign,
    denorm_out: Denorm::FlushKeepSign,
    nan: NanMode::Canonical(0x7fc0_0000),
    ..FloatMode::IEEE
};

const SAT: FloatMode = FloatMode {
    sat: true,
    ..FloatMode::IEEE
};

fn bin32(op: FBinOp, a: u32, b: u32, mode: FloatMode) -> u32 {
    let mut out = [0];
    let k = InstKind::FBinary { op, mode };
    assert!(eval_pure(
        &k,
        &[Type::F32, Type::F32],
        &[a.into(), b.into()],
        &mut out
    ));
    // The typed entry point must agree with eval_pure.
    assert_eq!(
        fbinary_f32(op, a, b, &mode).0,
        out[0] as u32,
        "{op:?} {a:#x} {b:#x}"
    );
    out[0] as u32
}

fn un32(op: FUnOp, a: u32, mode: FloatMode) -> u32 {
    let mut out = [0];
    assert!(eval_pure(
        &InstKind::FUnary { op, mode },
        &[Type::F32],
        &[a.into()],
        &mut out
    ));
    assert_eq!(funary_f32(op, a, &mode).0, out[0] as u32);
    out[0] as u32
}

#[test]
fn ftz_keeps_sign_on_inputs() {
    // Subnormal inputs read as signed zeros: x + (-0) with x = 0x00000001 -> +0.
    assert_eq!(
        bin32(FBinOp::Add, 0x0000_0001, 0x8000_0000, FTZ),
        0x0000_0000
    );
    assert_eq!(
        bin32(FBinOp::Add, 0x8000_0001, 0x8000_0000, FTZ),
        0x8000_0000
    );
    // Without flushing the subnormal survives.
    assert_eq!(
        bin32(FBinOp::Add, 0x0000_0001, 0x8000_0000, FloatMode::IEEE),
        0x0000_0001
    );
    assert_eq!(un32(FUnOp::Abs, 0x8000_0001, FTZ), 0x0000_0000);
    assert_eq!(un32(FUnOp::Neg, 0x0000_0001, FTZ), 0x8000_0000);
}

#[test]
fn ftz_keeps_sign_on_outputs() {
    // 2^-126 * 0.5 = 2^-127 is subnormal -> +0; negative -> -0.
    assert_eq!(
        bin32(FBinOp::Mul, 0x0080_0000, 0x3f00_0000, FTZ),
        0x0000_0000
    );
    assert_eq!(
        bin32(FBinOp::Mul, 0x8080_0000, 0x3f00_0000, FTZ),
        0x8000_0000
    );
    assert_eq!(
        bin32(FBinOp::Mul, 0x0080_0000, 0x3f00_0000, FloatMode::IEEE),
        0x0040_0000
    );
    // Flushing a result raises UF|NX.
    let mode = FloatMode { flags: true, ..FTZ };
    assert_eq!(
        fbinary_f32(FBinOp::Mul, 0x0080_0000, 0x3f00_0000, &mode),
        (0, 0x3)
    );
    let ieee = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    assert_eq!(
        fbinary_f32(FBinOp::Mul, 0x0080_0000, 0x3f00_0000, &ieee),
        (0x0040_0000, 0)
    );
}

#[test]
fn canonical_nan_a630() {
    // 1.0 - NaN with a payload and the sign set -> 0x7fc00000.
    assert_eq!(
        bin32(FBinOp::Sub, 0x3f80_0000, 0xffc0_1234, A630),
        0x7fc0_0000
    );
    // fneg / fabs of NaN stay canonical.
    assert_eq!(un32(FUnOp::Neg, 0x7fc0_0000, A630), 0x7fc0_0000);
    assert_eq!(un32(FUnOp::Abs, 0xffc0_0000, A630), 0x7fc0_0000);
    // inf - inf -> canonical.
    assert_eq!(
        bin32(FBinOp::Sub, 0x7f80_0000, 0x7f80_0000, A630),
        0x7fc0_0000
    );
}

#[test]
fn nan_propagation_is_defined_not_host() {
    let m = FloatMode::IEEE;
    // First NaN operand, quieted, sign and payload kept.
    assert_eq!(bin32(FBinOp::Add, 0xff80_0001, 0x7fc0_0002, m), 0xffc0_0001);
    assert_eq!(bin32(FBinOp::Mul, 0x3f80_0000, 0x7fc0_0002, m), 0x7fc0_0002);
    assert_eq!(bin32(FBinOp::Sub, 0x3f80_0000, 0xffc0_0002, m), 0xffc0_0002);
    // Fresh NaN: default quiet NaN with the sign clear (x86 would give 0xffc00000).
    assert_eq!(bin32(FBinOp::Add, 0x7f80_0000, 0xff80_0000, m), 0x7fc0_0000);
    assert_eq!(bin32(FBinOp::Div, 0, 0x8000_0000, m), 0x7fc0_0000);
    assert_eq!(un32(FUnOp::Sqrt, 0xbf80_0000, m), 0x7fc0_0000);
    // Neg is bitwise: a signaling NaN stays signaling, sign flipped.
    assert_eq!(un32(FUnOp::Neg, 0x7f80_0001, m), 0xff80_0001);
    // f16 fresh NaN.
    assert_eq!(fbinary_f16(FBinOp::Mul, 0x7c00, 0x0000, &m).0, 0x7e00);
}

#[test]
fn saturate_clamps() {
    assert_eq!(
        bin32(FBinOp::Add, 0x7fc0_0000, 0x3f80_0000, SAT),
        0x0000_0000
    );
    assert_eq!(
        bin32(FBinOp::Add, 0x3f80_0000, 0x3f80_0000, SAT),
        0x3f80_0000
    );
    assert_eq!(
        bin32(FBinOp::Mul, 0xbf80_0000, 0x3f00_0000, SAT),
        0x0000_0000
    );
    assert_eq!(
        bin32(FBinOp::Add, 0x8000_0000, 0x8000_0000, SAT),
        0x0000_0000
    );
    assert_eq!(
        bin32(FBinOp::Add, 0x3e80_0000, 0x3e80_0000, SAT),
        0x3f00_0000
    );
    assert_eq!(
        bin32(FBinOp::Mul, 0x7f80_0000, 0x3f80_0000, SAT),
        0x3f80_0000
    );
    assert_eq!(
        bin32(FBinOp::Mul, 0xff80_0000, 0x3f80_0000, SAT),
        0x0000_0000
    );
}

#[test]
fn min_max_signed_zeros_both_orders() {
    let m = FloatMode::IEEE;
    for op in [FBinOp::Max, FBinOp::Maximum] {
        assert_eq!(bin32(op, 0x8000_0000, 0x0000_0000, m), 0x0000_0000);
        assert_eq!(bin32(op, 0x0000_0000, 0x8000_0000, m), 0x0000_0000);
    }
    for op in [FBinOp::Min, FBinOp::Minimum] {
        assert_eq!(bin32(op, 0x8000_0000, 0x0000_0000, m), 0x8000_0000);
        assert_eq!(bin32(op, 0x0000_0000, 0x8000_0000, m), 0x8000_0000);
    }
    assert_eq!(bin32(FBinOp::Max, 0x3f80_0000, 0x4000_0000, m), 0x4000_0000);
    assert_eq!(bin32(FBinOp::Max, 0x4000_0000, 0x3f80_0000, m), 0x4000_0000);
    assert_eq!(bin32(FBinOp::Min, 0xc000_0000, 0x3f80_0000, m), 0xc000_0000);
    assert_eq!(bin32(FBinOp::Min, 0x3f80_0000, 0xc000_0000, m), 0xc000_0000);
}

#[test]
fn min_max_nan_policies() {
    let m = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    // GPU min/max ignore one NaN (quiet or signaling; sNaN raises NV).
    assert_eq!(
        fbinary_f32(FBinOp::Min, 0x7fc0_0000, 0x3f80_0000, &m),
        (0x3f80_0000, 0)
    );
    assert_eq!(
        fbinary_f32(FBinOp::Max, 0x3f80_0000, 0x7f80_0001, &m),
        (0x3f80_0000, 0x10)
    );
    assert_eq!(
        fbinary_f32(FBinOp::Max, 0xffc0_0001, 0x7fc0_0002, &m),
        (0xffc0_0001, 0)
    );
    // IEEE minimum/maximum propagate the first NaN, quieted.
    assert_eq!(
        fbinary_f32(FBinOp::Minimum, 0x3f80_0000, 0x7f80_0001, &m),
        (0x7fc0_0001, 0x10)
    );
    assert_eq!(
        fbinary_f32(FBinOp::Maximum, 0x7fc0_0003, 0x7fc0_0002, &m),
        (0x7fc0_0003, 0)
    );
    // Canonical mode: both-NaN max is canonical.
    assert_eq!(
        bin32(FBinOp::Max, 0xffc0_0001, 0xffc0_0002, A630),
        0x7fc0_0000
    );
}

#[test]
fn fma_single_rounding_vs_mul_add() {
    // a = 1 + 2^-12, a*a = 1 + 2^-11 + 2^-24; c = -(1 + 2^-11).
    let a = 0x3f80_0800;
    let c = 0xbf80_1000;
    let m = FloatMode::IEEE;
    assert_eq!(fma_f32(a, a, c, &m).0, 0x3380_0000); // exactly 2^-24
    let p = bin32(FBinOp::Mul, a, a, m); // rounds 2^-24 away (tie to even)
    assert_eq!(p, 0x3f80_1000);
    assert_eq!(bin32(FBinOp::Add, p, c, m), 0x0000_0000);
    let mut out = [0];
    let k = InstKind::Fma { mode: m };
    assert!(eval_pure(
        &k,
        &[Type::F32; 3],
        &[a.into(), a.into(), c.into()],
        &mut out
    ));
    assert_eq!(out[0], 0x3380_0000);
}

#[test]
fn fma_invalid_with_quiet_nan_addend_sets_nv() {
    let m = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    assert_eq!(
        fma_f32(0x7f80_0000, 0, 0x7fc0_0005, &m),
        (0x7fc0_0005, 0x10)
    );
    assert_eq!(
        fma_f32(0x3f80_0000, 0x3f80_0000, 0x7fc0_0005, &m),
        (0x7fc0_0005, 0)
    );
    assert_eq!(
        fma_f32(0x7f80_0000, 0x3f80_0000, 0xff80_0000, &m),
        (0x7fc0_0000, 0x10)
    );
}

#[test]
fn flags_result_slot() {
    let mode = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    let k = InstKind::FBinary {
        op: FBinOp::Div,
        mode,
    };
    let mut out = [0, 0];
    assert!(eval_pure(
        &k,
        &[Type::F32, Type::F32],
        &[0x3f80_0000, 0],
        &mut out
    ));
    assert_eq!(out, [0x7f80_0000, 0x08]);
    let mut short = [0];
    assert!(!eval_pure(
        &k,
        &[Type::F32, Type::F32],
        &[0x3f80_0000, 0],
        &mut short
    ));
}

/// Patterns that exercise every rule: zeros, subnormals, normals, infinities,
/// quiet and signaling NaNs with payloads, both signs.
fn edge_patterns() -> Vec<u32> {
    let mut v = vec![
        0x0000_0000,
        0x0000_0001,
        0x007f_ffff,
        0x0080_0000,
        0x3f00_0000,
        0x3f80_0000,
        0x3f80_0001,
        0x4000_0000,
        0x4040_0000,
        0x7f7f_ffff,
        0x7f80_0000,
        0x7f80_0001,
        0x7fa0_0000,
        0x7fc0_0000,
        0x7fc0_1234,
        0x3380_0000,
        0x0040_0000,
        0x1f80_0000,
    ];
    let neg: Vec<u32> = v.iter().map(|x| x | 0x8000_0000).collect();
    v.extend(neg);
    v
}

#[test]
fn fast_path_equals_exact_path_under_every_rule_set() {
    // `flags: false` with RNE takes the host fast path; `flags: true` the exact one.
    let modes = [
        FloatMode::IEEE,
        FTZ,
        A630,
        SAT,
        FloatMode {
            nan: NanMode::Canonical(0x7fff_ffff),
            sat: true,
            ..FTZ
        },
    ];
    let pats = edge_patterns();
    for mode in modes {
        let slow = FloatMode {
            flags: true,
            ..mode
        };
        for &a in &pats {
            for &b in &pats {
                for op in [
                    FBinOp::Add,
                    FBinOp::Sub,
                    FBinOp::Mul,
                    FBinOp::Div,
                    FBinOp::Min,
                    FBinOp::Max,
                    FBinOp::Copysign,
                ] {
                    assert_eq!(
                        fbinary_f32(op, a, b, &mode).0,
                        fbinary_f32(op, a, b, &slow).0,
                        "{op:?} {a:#x} {b:#x} {mode:?}"
                    );
                }
                for &c in &pats[..12] {
                    assert_eq!(
                        fma_f32(a, b, c, &mode).0,
                        fma_f32(a, b, c, &slow).0,
                        "fma {a:#x} {b:#x} {c:#x}"
                    );
                }
            }
            assert_eq!(
                funary_f32(FUnOp::Sqrt, a, &mode).0,
                funary_f32(FUnOp::Sqrt, a, &slow).0,
                "sqrt {a:#x}"
            );
        }
    }
}

#[test]
fn f64_rules_match_f32_rules_in_shape() {
    use wavejit_ir::semantics::arith::fbinary_f64;
    let canon = FloatMode {
        nan: NanMode::Canonical(0x7ff8_0000_0000_0000),
        ..FTZ
    };
    // Subnormal inputs flushed keeping sign, NaN canonical, in f64.
    assert_eq!(
        fbinary_f64(FBinOp::Add, 1, 0x8000_0000_0000_0000, &canon).0,
        0
    );
    assert_eq!(
        fbinary_f64(
            FBinOp::Add,
            0x8000_0000_0000_0001,
            0x8000_0000_0000_0000,
            &canon
        )
        .0,
        0x8000_0000_0000_0000
    );
    assert_eq!(
        fbinary_f64(
            FBinOp::Sub,
            0x3ff0_0000_0000_0000,
            0xfff0_0000_0000_0001,
            &canon
        )
        .0,
        0x7ff8_0000_0000_0000
    );
    assert_eq!(
        fbinary_f64(
            FBinOp::Add,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            &FloatMode::IEEE
        )
        .0,
        0x7ff8_0000_0000_0000
    );
}
