//! Float-rule attributes executed through every engine: flush-to-zero with sign,
//! canonical NaN, rounding of conversions, saturation, min/max of signed zeros,
//! exception flags. Each row is one lane: operands in, results out.

mod common;

use common::*;
use wavejit_ir::{Denorm, FBinOp, FloatFormat, FloatMode, InstKind, NanMode, Round, Type};

fn mode() -> FloatMode {
    FloatMode::IEEE
}

/// Runs `kind` over `rows` and checks the first result of every row.
fn expect_rows(kind: InstKind, tys: &[Type], rows: &[(Vec<u64>, u64)], what: &str) {
    let input: Vec<Vec<u64>> = rows.iter().map(|r| r.0.clone()).collect();
    for (engine, out) in eval_rows(&kind, tys, &input) {
        for (n, ((args, want), got)) in rows.iter().zip(&out).enumerate() {
            assert_eq!(
                got[0], *want,
                "engine {engine}: {what}, row {n} args {args:x?}: got {:#x}, want {want:#x}",
                got[0]
            );
        }
    }
}

fn fbin(op: FBinOp, m: FloatMode) -> InstKind {
    InstKind::FBinary { op, mode: m }
}

const F32: [Type; 2] = [Type::F32, Type::F32];
const F16: [Type; 2] = [Type::F16, Type::F16];

#[test]
fn flush_to_zero_keeps_the_sign() {
    let flush_out = FloatMode {
        denorm_out: Denorm::FlushKeepSign,
        ..mode()
    };
    // -min_normal * 0.5 = -2^-127, a subnormal.
    let rows = vec![
        (vec![0x8080_0000, 0x3f00_0000], 0x8000_0000),
        (vec![0x0080_0000, 0x3f00_0000], 0x0000_0000),
        (vec![0x0080_0000, 0x3f80_0000], 0x0080_0000),
    ];
    expect_rows(
        fbin(FBinOp::Mul, flush_out),
        &F32,
        &rows,
        "f32 mul, flush out",
    );
    let keep = vec![
        (vec![0x8080_0000, 0x3f00_0000], 0x8040_0000),
        (vec![0x0080_0000, 0x3f00_0000], 0x0040_0000),
    ];
    expect_rows(fbin(FBinOp::Mul, mode()), &F32, &keep, "f32 mul, preserve");
    // Inputs flushed: -tiny + -0 = -0; +tiny + -0 = +0 (round to nearest).
    let flush_in = FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        ..mode()
    };
    let rows = vec![
        (vec![0x8000_0001, 0x8000_0000], 0x8000_0000),
        (vec![0x0000_0001, 0x8000_0000], 0x0000_0000),
        (vec![0x807f_ffff, 0x3f80_0000], 0x3f80_0000),
    ];
    expect_rows(
        fbin(FBinOp::Add, flush_in),
        &F32,
        &rows,
        "f32 add, flush in",
    );
    expect_rows(
        fbin(FBinOp::Add, mode()),
        &F32,
        &[(vec![0x8000_0001, 0x8000_0000], 0x8000_0001)],
        "f32 add, preserve",
    );
    // f16: -2^-14 * 0.5 = -2^-15 (0x8200), flushed to -0.
    expect_rows(
        fbin(FBinOp::Mul, flush_out),
        &F16,
        &[(vec![0x8400, 0x3800], 0x8000)],
        "f16 mul, flush out",
    );
    expect_rows(
        fbin(FBinOp::Mul, mode()),
        &F16,
        &[(vec![0x8400, 0x3800], 0x8200)],
        "f16 mul, preserve",
    );
}

#[test]
fn canonical_nan_replaces_every_nan_result() {
    let canon = FloatMode {
        nan: NanMode::Canonical(0x7fff_ffff),
        ..mode()
    };
    let rows = vec![
        // inf - inf: a fresh NaN.
        (vec![0x7f80_0000, 0xff80_0000], 0x7fff_ffff),
        // A NaN operand with payload and sign.
        (vec![0xffc1_2345, 0x3f80_0000], 0x7fff_ffff),
        // A signaling NaN.
        (vec![0x3f80_0000, 0x7f80_0001], 0x7fff_ffff),
        // Not NaN: untouched.
        (vec![0x3f80_0000, 0x3f80_0000], 0x4000_0000),
    ];
    expect_rows(
        fbin(FBinOp::Add, canon),
        &F32,
        &rows,
        "f32 add, canonical NaN",
    );
    let rows = vec![
        (vec![0x7f80_0000, 0xff80_0000], 0x7fc0_0000),
        (vec![0xffc1_2345, 0x3f80_0000], 0xffc1_2345),
        (vec![0x3f80_0000, 0x7f80_0001], 0x7fc0_0001),
    ];
    expect_rows(fbin(FBinOp::Add, mode()), &F32, &rows, "f32 add, propagate");
    let canon16 = FloatMode {
        nan: NanMode::Canonical(0x7e00),
        ..mode()
    };
    expect_rows(
        fbin(FBinOp::Mul, canon16),
        &F16,
        &[
            (vec![0x0000, 0xfc00], 0x7e00),
            (vec![0xfe01, 0x3c00], 0x7e00),
        ],
        "f16 mul, canonical NaN",
    );
}

#[test]
fn conversions_round_toward_zero_or_to_nearest_even() {
    let rtz = FloatMode {
        round: Round::TowardZero,
        ..mode()
    };
    let cvt = |m| InstKind::Fcvt {
        from: FloatFormat::F32,
        to: FloatFormat::F16,
        mode: m,
    };
    // 1 + 0.75 ulp(f16) and its negation.
    expect_rows(
        cvt(mode()),
        &[Type::F32],
        &[(vec![0x3f80_1800], 0x3c01), (vec![0xbf80_1800], 0xbc01)],
        "f32->f16 rne",
    );
    expect_rows(
        cvt(rtz),
        &[Type::F32],
        &[(vec![0x3f80_1800], 0x3c00), (vec![0xbf80_1800], 0xbc00)],
        "f32->f16 rtz",
    );
    let ftoi = |m| InstKind::FToI {
        from: FloatFormat::F32,
        to: Type::I32,
        signed: true,
        nan_to_max: false,
        mode: m,
    };
    let f = |x: f32| vec![u64::from(x.to_bits())];
    let i = |x: i32| u64::from(x as u32);
    expect_rows(
        ftoi(mode()),
        &[Type::F32],
        &[
            (f(2.7), i(3)),
            (f(2.5), i(2)),
            (f(3.5), i(4)),
            (f(-2.5), i(-2)),
            (f(-2.7), i(-3)),
        ],
        "f32->i32 rne",
    );
    expect_rows(
        ftoi(rtz),
        &[Type::F32],
        &[
            (f(2.7), i(2)),
            (f(2.5), i(2)),
            (f(3.5), i(3)),
            (f(-2.5), i(-2)),
            (f(-2.7), i(-2)),
        ],
        "f32->i32 rtz",
    );
    let itof = |m| InstKind::IToF {
        to: FloatFormat::F32,
        signed: true,
        mode: m,
    };
    expect_rows(
        itof(mode()),
        &[Type::I32],
        &[
            (vec![16_777_217], 0x4b80_0000),
            (vec![16_777_219], 0x4b80_0002),
        ],
        "i32->f32 rne",
    );
    expect_rows(
        itof(rtz),
        &[Type::I32],
        &[
            (vec![16_777_217], 0x4b80_0000),
            (vec![16_777_219], 0x4b80_0001),
        ],
        "i32->f32 rtz",
    );
}

#[test]
fn saturate_clamps_to_unit_interval() {
    let sat = FloatMode {
        sat: true,
        ..mode()
    };
    let f = |x: f32| u64::from(x.to_bits());
    let rows = vec![
        (vec![f(0.75), f(0.5)], f(1.0)),
        (vec![f(-3.0), f(1.0)], 0),
        (vec![f(0.25), f(0.25)], f(0.5)),
        (vec![0x7fc0_0000, f(1.0)], 0),
        (vec![f(f32::INFINITY), f(1.0)], f(1.0)),
    ];
    expect_rows(fbin(FBinOp::Add, sat), &F32, &rows, "f32 add sat");
}

#[test]
fn min_max_order_signed_zeros_in_both_orders() {
    let (pz, nz) = (0x0000_0000u64, 0x8000_0000u64);
    let rows_min = vec![
        (vec![nz, pz], nz),
        (vec![pz, nz], nz),
        (vec![0x7fc0_0000, 0x3f80_0000], 0x3f80_0000),
        (vec![0x3f80_0000, 0x7fc0_0000], 0x3f80_0000),
    ];
    expect_rows(fbin(FBinOp::Min, mode()), &F32, &rows_min, "min");
    let rows_max = vec![
        (vec![nz, pz], pz),
        (vec![pz, nz], pz),
        (vec![0x7fc0_0000, 0xbf80_0000], 0xbf80_0000),
    ];
    expect_rows(fbin(FBinOp::Max, mode()), &F32, &rows_max, "max");
    // IEEE 754-2019 minimum/maximum: NaN wins, zeros ordered.
    expect_rows(
        fbin(FBinOp::Minimum, mode()),
        &F32,
        &[
            (vec![pz, nz], nz),
            (vec![0x7fc0_0000, 0x3f80_0000], 0x7fc0_0000),
        ],
        "minimum",
    );
    expect_rows(
        fbin(FBinOp::Maximum, mode()),
        &F32,
        &[
            (vec![nz, pz], pz),
            (vec![0x3f80_0000, 0x7fc0_0000], 0x7fc0_0000),
        ],
        "maximum",
    );
}

#[test]
fn exception_flags_come_out_as_a_second_result() {
    let flags = FloatMode {
        flags: true,
        ..mode()
    };
    let f = |x: f32| u64::from(x.to_bits());
    let rows = vec![
        vec![f(1.0), f(0.0)],
        vec![f(f32::INFINITY), f(f32::INFINITY)],
        vec![f(3.0e38), f(3.0e38)],
        vec![f(1.0), f(3.0)],
        vec![f(1.0), f(4.0)],
    ];
    let div = fbin(FBinOp::Div, flags);
    let want = [
        (0x7f80_0000u64, 0x08u64),
        (0x7fc0_0000, 0x10),
        (0x3f80_0000, 0x00),
        (f(1.0 / 3.0), 0x01),
        (f(0.25), 0x00),
    ];
    for (engine, out) in eval_rows(&div, &F32, &rows) {
        for (n, (got, w)) in out.iter().zip(&want).enumerate() {
            assert_eq!((got[0], got[1]), *w, "engine {engine}: div row {n}");
        }
    }
    let mul = fbin(FBinOp::Mul, flags);
    for (engine, out) in eval_rows(&mul, &F32, &[vec![f(3.0e38), f(10.0)]]) {
        assert_eq!(
            (out[0][0], out[0][1]),
            (0x7f80_0000, 0x05),
            "engine {engine}: overflow"
        );
    }
}
