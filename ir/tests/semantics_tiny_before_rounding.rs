//! `Denorm::FlushBeforeRounding` (AGX FP32): results tiny before rounding
//! become signed zeros, also when they round up to the smallest normal.

use wavejit_ir::float_mode::fflags;
use wavejit_ir::semantics::eval_pure;
use wavejit_ir::{Denorm, FBinOp, FloatMode, InstKind, NanMode, Round, Type};

/// AGX FP32 arithmetic: inputs flushed, results flushed before rounding,
/// canonical NaN.
const AGX: FloatMode = FloatMode {
    denorm_in: Denorm::FlushKeepSign,
    denorm_out: Denorm::FlushBeforeRounding,
    nan: NanMode::Canonical(0x7fc0_0000),
    ..FloatMode::IEEE
};

/// The same with the flush after rounding.
const AFTER: FloatMode = FloatMode {
    denorm_out: Denorm::FlushKeepSign,
    ..AGX
};

/// 1 - 2^-24, the largest float below 1.
const BELOW_ONE: u32 = 0x3f7f_ffff;
const MIN_NORMAL: u32 = 0x0080_0000;

fn fma(a: u32, b: u32, c: u32, mode: FloatMode) -> (u32, u32) {
    let mut out = [0, 0];
    assert!(eval_pure(
        &InstKind::Fma { mode },
        &[Type::F32; 3],
        &[a.into(), b.into(), c.into()],
        &mut out
    ));
    (out[0] as u32, out[1] as u32)
}

fn mul(a: u32, b: u32, mode: FloatMode) -> u32 {
    let mut out = [0];
    assert!(eval_pure(
        &InstKind::FBinary {
            op: FBinOp::Mul,
            mode
        },
        &[Type::F32; 2],
        &[a.into(), b.into()],
        &mut out
    ));
    out[0] as u32
}

#[test]
fn tiny_results_that_round_up_to_the_smallest_normal_flush() {
    // 2^-126 * (1 - 2^-24) = 2^-126 - 2^-150: halfway between 0x007fffff and
    // 0x00800000, so round-to-nearest-even gives the smallest normal.
    assert_eq!(mul(BELOW_ONE, MIN_NORMAL, AFTER), MIN_NORMAL);
    assert_eq!(mul(BELOW_ONE, MIN_NORMAL, AGX), 0);
    assert_eq!(mul(BELOW_ONE | 0x8000_0000, MIN_NORMAL, AGX), 0x8000_0000);
    assert_eq!(fma(BELOW_ONE, MIN_NORMAL, 0x8000_0000, AGX).0, 0);
    // Rounding up (toward +inf) from a tiny value: the same.
    let up = FloatMode {
        round: Round::Up,
        ..AGX
    };
    let up_after = FloatMode {
        denorm_out: Denorm::FlushKeepSign,
        ..up
    };
    assert_eq!(mul(BELOW_ONE, MIN_NORMAL, up_after), MIN_NORMAL);
    assert_eq!(mul(BELOW_ONE, MIN_NORMAL, up), 0);
    // Toward zero it never rounds up: flushed as a plain subnormal.
    let down = FloatMode {
        round: Round::TowardZero,
        ..AGX
    };
    assert_eq!(mul(BELOW_ONE, MIN_NORMAL, down), 0);
}

#[test]
fn exact_and_larger_results_stay() {
    // Exactly the smallest normal, and just above it.
    assert_eq!(mul(0x3f80_0000, MIN_NORMAL, AGX), MIN_NORMAL);
    assert_eq!(mul(0x3f80_0001, MIN_NORMAL, AGX), 0x0080_0001);
    // fma whose exact value is the smallest normal: 2^-125 * 0.5 + 0.
    assert_eq!(fma(0x0100_0000, 0x3f00_0000, 0, AGX).0, MIN_NORMAL);
    // Above the smallest normal by less than half an ulp: rounds down to it,
    // and it is not tiny (2^-126 * (1 + 2^-25)).
    let (r, _) = fma(0x3f80_0000, MIN_NORMAL, 0x0000_0001, FloatMode::IEEE);
    assert_eq!(r, 0x0080_0001);
    assert_eq!(
        fma(0x3f80_0001, MIN_NORMAL, 0x8000_0001, AGX).0,
        MIN_NORMAL | 1,
        "the subnormal addend is flushed on input"
    );
    // NaN and zero results keep their rules.
    assert_eq!(mul(0x7f80_0000, 0, AGX), 0x7fc0_0000);
    assert_eq!(mul(0x8000_0000, MIN_NORMAL, AGX), 0x8000_0000);
}

#[test]
fn subnormal_results_flush_with_their_sign_and_flags() {
    let flags = FloatMode { flags: true, ..AGX };
    // 2^-127: subnormal after rounding too.
    let (r, f) = fma(0x3f00_0000, MIN_NORMAL, 0, flags);
    assert_eq!(r, 0);
    assert_eq!(f & (fflags::UF | fflags::NX), fflags::UF | fflags::NX);
    let (r, f) = fma(BELOW_ONE, MIN_NORMAL, 0, flags);
    assert_eq!(r, 0);
    assert_eq!(f & (fflags::UF | fflags::NX), fflags::UF | fflags::NX);
    // Not flushed: no underflow.
    let (r, f) = fma(0x3f80_0000, MIN_NORMAL, 0, flags);
    assert_eq!((r, f), (MIN_NORMAL, 0));
}

#[test]
fn saturation_applies_after_the_flush() {
    let sat = FloatMode { sat: true, ..AGX };
    assert_eq!(mul(BELOW_ONE | 0x8000_0000, MIN_NORMAL, sat), 0);
    assert_eq!(mul(0x4000_0000, 0x3f80_0000, sat), 0x3f80_0000);
}

#[test]
fn the_rule_is_refused_on_inputs_and_spelled_ftz_tiny() {
    use wavejit_ir::text::{parse, print};
    let text = "kernel @t shared 0 private 0 {
block0:
  v0 = const.f32 1.0
  v1 = fmul.f32 v0, v0 ftz.in ftz.tiny nan=0x7fc00000
  exit
}
";
    let k = match parse(text) {
        Ok(k) => k,
        Err(e) => panic!("{e}"),
    };
    assert!(wavejit_ir::verify::verify(&k).is_ok());
    assert!(print(&k).contains("fmul.f32 v0, v0 ftz.in ftz.tiny nan=0x7fc00000"));
    assert!(parse(&text.replace("ftz.in ftz.tiny", "ftz ftz.tiny")).is_err());
    let mut bad = k.clone();
    for data in bad.insts.values_mut() {
        if let InstKind::FBinary { mode, .. } = &mut data.kind {
            mode.denorm_in = Denorm::FlushBeforeRounding;
        }
    }
    let e = wavejit_ir::verify::verify(&bad)
        .err()
        .map(|e| e.to_string());
    assert!(
        e.as_deref()
            .is_some_and(|e| e.contains("flushing before rounding is a result rule")),
        "{e:?}"
    );
}
