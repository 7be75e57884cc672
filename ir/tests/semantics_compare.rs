//! Float comparisons, fclass and round-to-integral.

use wavejit_ir::semantics::arith::funary_f32;
use wavejit_ir::semantics::compare::fcmp;
use wavejit_ir::semantics::eval_pure;
use wavejit_ir::semantics::fclass::fclass;
use wavejit_ir::semantics::format::Fmt;
use wavejit_ir::{Denorm, FUnOp, FloatCC, FloatMode, InstKind, Type};

const NV: u32 = 0x10;
const QNAN: u64 = 0x7fc0_0000;
const SNAN: u64 = 0x7f80_0001;
const ONE: u64 = 0x3f80_0000;
const TWO: u64 = 0x4000_0000;

fn c32(cc: FloatCC, a: u64, b: u64) -> (bool, u32) {
    fcmp(Fmt::F32, cc, a, b)
}

#[test]
fn ordered_and_unordered_conditions() {
    use FloatCC::*;
    let table = [
        (Eq, [false, true, false], false),
        (Ne, [true, false, true], true),
        (Lt, [true, false, false], false),
        (Le, [true, true, false], false),
        (Gt, [false, false, true], false),
        (Ge, [false, true, true], false),
        (Ord, [true, true, true], false),
        (Uno, [false, false, false], true),
        (Ueq, [false, true, false], true),
        (Une, [true, false, true], true),
        (Ult, [true, false, false], true),
        (Ule, [true, true, false], true),
        (Ugt, [false, false, true], true),
        (Uge, [false, true, true], true),
    ];
    for (cc, [less, equal, greater], unordered) in table {
        assert_eq!(c32(cc, ONE, TWO).0, less, "{cc:?} 1 2");
        assert_eq!(c32(cc, ONE, ONE).0, equal, "{cc:?} 1 1");
        assert_eq!(c32(cc, TWO, ONE).0, greater, "{cc:?} 2 1");
        assert_eq!(c32(cc, QNAN, ONE).0, unordered, "{cc:?} nan 1");
        assert_eq!(c32(cc, ONE, QNAN).0, unordered, "{cc:?} 1 nan");
    }
    // +0 == -0; -inf < finite < +inf.
    assert!(c32(Eq, 0, 0x8000_0000).0);
    assert!(!c32(Lt, 0x8000_0000, 0).0);
    assert!(c32(Lt, 0xff80_0000, 0xff7f_ffff).0);
    assert!(c32(Lt, 0xbf80_0000, 0x0000_0001).0);
}

#[test]
fn signaling_predicates_raise_nv() {
    use FloatCC::*;
    for cc in [Lt, Le, Gt, Ge] {
        assert_eq!(c32(cc, QNAN, ONE).1, NV, "{cc:?}");
    }
    for cc in [Eq, Ne, Ord, Uno, Ueq, Une, Ult, Ule, Ugt, Uge] {
        assert_eq!(c32(cc, QNAN, ONE).1, 0, "{cc:?} quiet");
        assert_eq!(c32(cc, ONE, SNAN).1, NV, "{cc:?} signaling");
    }
    assert_eq!(c32(Lt, ONE, TWO).1, 0);
}

#[test]
fn fcmp_dispatch_flushes_inputs() {
    let mode = FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        flags: true,
        ..FloatMode::IEEE
    };
    let k = InstKind::Fcmp {
        cc: FloatCC::Eq,
        mode,
    };
    let mut out = [9, 9];
    assert!(eval_pure(
        &k,
        &[Type::F32, Type::F32],
        &[0x0000_0001, 0x8000_0000],
        &mut out
    ));
    assert_eq!(out, [1, 0]);
    let k = InstKind::Fcmp {
        cc: FloatCC::Eq,
        mode: FloatMode::IEEE,
    };
    assert!(eval_pure(
        &k,
        &[Type::F32, Type::F32],
        &[0x0000_0001, 0x8000_0000],
        &mut out[..1]
    ));
    assert_eq!(out[0], 0);
}

#[test]
fn fclass_bits() {
    let f = Fmt::F32;
    let cases = [
        (0xff80_0000, 1 << 0),
        (0xbf80_0000, 1 << 1),
        (0x8000_0001, 1 << 2),
        (0x8000_0000, 1 << 3),
        (0x0000_0000, 1 << 4),
        (0x0000_0001, 1 << 5),
        (0x3f80_0000, 1 << 6),
        (0x7f80_0000, 1 << 7),
        (0x7f80_0001, 1 << 8),
        (0x7fc0_0000, 1 << 9),
        (0xffc0_0000, 1 << 9),
    ];
    for (x, want) in cases {
        assert_eq!(fclass(f, x), want, "{x:#x}");
    }
    assert_eq!(fclass(Fmt::F16, 0x7d00), 1 << 8);
    assert_eq!(fclass(Fmt::F64, 0x000f_ffff_ffff_ffff), 1 << 5);
    let mode = FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        ..FloatMode::IEEE
    };
    let mut out = [0];
    assert!(eval_pure(
        &InstKind::Fclass { mode },
        &[Type::F32],
        &[0x8000_0001],
        &mut out
    ));
    assert_eq!(out[0], 1 << 3);
}

#[test]
fn round_to_integral() {
    let m = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    let r = |op, x: f32| {
        let (bits, flags) = funary_f32(op, x.to_bits(), &m);
        assert_eq!(flags, 0, "{op:?} {x}");
        bits
    };
    assert_eq!(r(FUnOp::Floor, -0.5), (-1f32).to_bits());
    assert_eq!(r(FUnOp::Floor, 0.5), 0);
    assert_eq!(r(FUnOp::Ceil, -0.5), 0x8000_0000);
    assert_eq!(r(FUnOp::Ceil, 0.25), ONE as u32);
    assert_eq!(r(FUnOp::Trunc, -1.75), (-1f32).to_bits());
    assert_eq!(r(FUnOp::Nearest, 2.5), 2f32.to_bits());
    assert_eq!(r(FUnOp::Nearest, 3.5), 4f32.to_bits());
    assert_eq!(r(FUnOp::Nearest, -0.5), 0x8000_0000);
    assert_eq!(r(FUnOp::Nearest, 8_388_609.0), 8_388_609f32.to_bits());
    assert_eq!(r(FUnOp::Floor, f32::NEG_INFINITY), 0xff80_0000);
    assert_eq!(r(FUnOp::Floor, 1e-45), 0);
    assert_eq!(r(FUnOp::Ceil, 1e-45), ONE as u32);
    assert_eq!(funary_f32(FUnOp::Floor, SNAN as u32, &m), (0x7fc0_0001, NV));
    // Against the host for many values.
    let mut x = 0x2545_f491u32;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let v = f32::from_bits(x);
        if v.is_nan() {
            continue;
        }
        assert_eq!(r(FUnOp::Floor, v), v.floor().to_bits(), "{x:#x}");
        assert_eq!(r(FUnOp::Ceil, v), v.ceil().to_bits(), "{x:#x}");
        assert_eq!(r(FUnOp::Trunc, v), v.trunc().to_bits(), "{x:#x}");
        assert_eq!(
            r(FUnOp::Nearest, v),
            v.round_ties_even().to_bits(),
            "{x:#x}"
        );
    }
}
