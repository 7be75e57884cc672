//! Conversions checked exhaustively against the `half` and `float8` crates and
//! against hand-picked rounding, saturation and float<->int edges.

use half::{bf16, f16};
use wavejit_ir::semantics::convert::{
    bf16_to_f32, e2m1_to_f32, e4m3_to_f32, e5m2_to_f32, f16_to_f32, f32_to_bf16, f32_to_e2m1,
    f32_to_e4m3, f32_to_e5m2, f32_to_f16, f32_to_i32, f32_to_u32, fcvt, ftoi, i32_to_f32, itof,
    u32_to_f32,
};
use wavejit_ir::semantics::eval_pure;
use wavejit_ir::{Denorm, FloatFormat, FloatMode, InstKind, NanMode, Round, Type};

const NV: u32 = 0x10;
const OF: u32 = 0x04;
const UF: u32 = 0x02;
const NX: u32 = 0x01;

/// Every f32 worth probing around the values of a narrower format: each value,
/// and each midpoint to its neighbour with +-1 f32 ulp, in both signs.
fn probes(values: &[f32]) -> Vec<u32> {
    let mut v: Vec<f32> = values
        .iter()
        .copied()
        .filter(|x| x.is_finite() && *x >= 0.0)
        .collect();
    v.sort_by(f32::total_cmp);
    v.dedup();
    let mut out = Vec::new();
    for w in v.windows(2) {
        let mid = ((f64::from(w[0]) + f64::from(w[1])) / 2.0) as f32;
        for x in [w[0], mid, mid.next_up(), mid.next_down()] {
            out.push(x.to_bits());
            out.push(x.to_bits() | 0x8000_0000);
        }
    }
    out
}

#[test]
fn f16_to_f32_all_inputs_match_half() {
    for h in 0..=u16::MAX {
        let want = f16::from_bits(h).to_f32().to_bits();
        assert_eq!(f16_to_f32(h).0, want, "{h:#06x}");
        let mut out = [0];
        let k = InstKind::Fcvt {
            from: FloatFormat::F16,
            to: FloatFormat::F32,
            mode: FloatMode::IEEE,
        };
        assert!(eval_pure(&k, &[Type::F16], &[h.into()], &mut out));
        assert_eq!(out[0], u64::from(want));
    }
}

#[test]
fn f32_to_f16_matches_half_on_every_boundary() {
    let values: Vec<f32> = (0..0x7c01u16).map(|h| f16::from_bits(h).to_f32()).collect();
    let mut inputs = probes(&values);
    inputs.extend([
        0x7f80_0000,
        0xff80_0000,
        0x7fc0_0000,
        0xffc0_1234,
        0x7f80_0001,
        0x4780_0000,
        0x477f_f000,
        0x477f_efff,
    ]);
    for x in inputs {
        let want = f16::from_f32(f32::from_bits(x)).to_bits();
        assert_eq!(f32_to_f16(x, Round::NearestEven).0, want, "{x:#010x}");
    }
}

#[test]
fn bf16_all_inputs_match_half() {
    for h in 0..=u16::MAX {
        let want = bf16::from_bits(h).to_f32().to_bits();
        assert_eq!(bf16_to_f32(h).0, want, "{h:#06x}");
        // Widening then narrowing is the identity (NaNs quieted).
        let back = f32_to_bf16(want, Round::NearestEven, false).0;
        assert_eq!(
            back,
            bf16::from_f32(f32::from_bits(want)).to_bits(),
            "{h:#06x}"
        );
    }
    let values: Vec<f32> = (0..0x7f81u16)
        .map(|h| bf16::from_bits(h).to_f32())
        .collect();
    for x in probes(&values) {
        let want = bf16::from_f32(f32::from_bits(x)).to_bits();
        assert_eq!(
            f32_to_bf16(x, Round::NearestEven, false).0,
            want,
            "{x:#010x}"
        );
    }
}

#[test]
fn f32_to_f16_rtz_vs_rne_between_two_halves() {
    // 1 + 3*2^-12 = 1 + 0.75 f16 ulp, between 0x3c00 and 0x3c01: RNE up, RTZ down.
    let x = 0x3f80_1800;
    assert_eq!(f32_to_f16(x, Round::NearestEven), (0x3c01, NX));
    assert_eq!(f32_to_f16(x, Round::TowardZero), (0x3c00, NX));
    assert_eq!(f32_to_f16(x, Round::Up), (0x3c01, NX));
    assert_eq!(f32_to_f16(x, Round::Down), (0x3c00, NX));
    // Exact tie 1 + 2^-11: RNE to even 0x3c00, RMM away 0x3c01.
    assert_eq!(f32_to_f16(0x3f80_1000, Round::NearestEven), (0x3c00, NX));
    assert_eq!(f32_to_f16(0x3f80_1000, Round::NearestAway), (0x3c01, NX));
    // Negative: -(1 + 0.75 ulp).
    assert_eq!(f32_to_f16(0xbf80_1800, Round::TowardZero), (0xbc00, NX));
    assert_eq!(f32_to_f16(0xbf80_1800, Round::Down), (0xbc01, NX));
    // Overflow: 65520 rounds to inf in RNE, stays 65504 in RTZ.
    assert_eq!(
        f32_to_f16(0x477f_f000, Round::NearestEven),
        (0x7c00, OF | NX)
    );
    assert_eq!(f32_to_f16(0x477f_f000, Round::TowardZero), (0x7bff, NX));
    assert_eq!(
        f32_to_f16(0x4780_0000, Round::TowardZero),
        (0x7bff, OF | NX)
    );
    // Subnormal result with tininess: 2^-25 * 1.5 -> RNE 2^-24 (0x0001), UF|NX.
    assert_eq!(
        f32_to_f16(0x3340_0000, Round::NearestEven),
        (0x0001, UF | NX)
    );
    // NaN keeps sign and top payload, quieted; sNaN raises NV.
    assert_eq!(f32_to_f16(0xff80_2000, Round::NearestEven), (0xfe01, NV));
}

#[test]
fn a630_f32_to_f16_of_2_pow_minus_20_flushes() {
    let mode = FloatMode {
        denorm_in: Denorm::FlushKeepSign,
        denorm_out: Denorm::FlushKeepSign,
        nan: NanMode::Canonical(0x7e00),
        round: Round::TowardZero,
        ..FloatMode::IEEE
    };
    assert_eq!(
        fcvt(FloatFormat::F32, FloatFormat::F16, 0x3580_0000, &mode).0,
        0x0000
    );
    assert_eq!(
        fcvt(FloatFormat::F32, FloatFormat::F16, 0xb580_0000, &mode).0,
        0x8000
    );
    assert_eq!(
        fcvt(
            FloatFormat::F32,
            FloatFormat::F16,
            0x3580_0000,
            &FloatMode::IEEE
        )
        .0,
        0x0010
    );
    assert_eq!(
        fcvt(FloatFormat::F32, FloatFormat::F16, 0xffc0_0001, &mode).0,
        0x7e00
    );
}

#[test]
fn sat_conversion_clamps_to_max_finite() {
    let sat = FloatMode {
        sat: true,
        flags: true,
        ..FloatMode::IEEE
    };
    assert_eq!(
        fcvt(FloatFormat::F32, FloatFormat::F16, 0x4780_0000, &sat),
        (0x7bff, OF | NX)
    );
    assert_eq!(
        fcvt(FloatFormat::F32, FloatFormat::F16, 0xff80_0000, &sat),
        (0xfbff, OF | NX)
    );
    assert_eq!(
        fcvt(FloatFormat::F32, FloatFormat::Bf16, 0x7f80_0000, &sat),
        (0x7f7f, OF | NX)
    );
    assert_eq!(
        fcvt(
            FloatFormat::F64,
            FloatFormat::F32,
            0x7ff0_0000_0000_0000,
            &sat
        ),
        (0x7f7f_ffff, OF | NX)
    );
}

#[test]
fn fp8_decode_all_codes_match_float8() {
    for b in 0..=u8::MAX {
        let ours = f32::from_bits(e4m3_to_f32(b).0);
        let theirs = float8::F8E4M3::from_bits(b).to_f32();
        assert!(
            ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
            "e4m3 {b:#04x}"
        );
        let ours = f32::from_bits(e5m2_to_f32(b).0);
        let theirs = float8::F8E5M2::from_bits(b).to_f32();
        assert!(
            ours.to_bits() == theirs.to_bits() || (ours.is_nan() && theirs.is_nan()),
            "e5m2 {b:#04x}"
        );
    }
}

#[test]
fn fp8_encode_matches_float8() {
    let e4: Vec<f32> = (0..=u8::MAX)
        .map(|b| float8::F8E4M3::from_bits(b).to_f32())
        .collect();
    let e5: Vec<f32> = (0..=u8::MAX)
        .map(|b| float8::F8E5M2::from_bits(b).to_f32())
        .collect();
    // Every code round-trips (NaN codes excepted).
    for b in 0..=u8::MAX {
        if !e4[usize::from(b)].is_nan() {
            assert_eq!(
                f32_to_e4m3(e4[usize::from(b)].to_bits(), Round::NearestEven).0,
                b
            );
        }
        if !e5[usize::from(b)].is_nan() {
            assert_eq!(
                f32_to_e5m2(e5[usize::from(b)].to_bits(), Round::NearestEven, false).0,
                b
            );
        }
    }
    let mut extra = vec![
        0x7f80_0000,
        0xff80_0000,
        0x7f7f_ffff,
        0x43e8_0000,
        0x43e8_0001,
        0x4770_0000,
        0x476f_ffff,
    ];
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..100_000 {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let x = (rng >> 32) as u32;
        let exp = 100 + ((x >> 23) & 0xff) % 50;
        extra.push((x & 0x807f_ffff) | exp << 23);
    }
    let mut inputs4 = probes(&e4);
    inputs4.extend(&extra);
    for x in inputs4 {
        let want = float8::F8E4M3::from_f32(f32::from_bits(x)).to_bits();
        assert_eq!(f32_to_e4m3(x, Round::NearestEven).0, want, "e4m3 {x:#010x}");
    }
    let mut inputs5 = probes(&e5);
    inputs5.extend(&extra);
    for x in inputs5 {
        let want = float8::F8E5M2::from_f32(f32::from_bits(x)).to_bits();
        assert_eq!(
            f32_to_e5m2(x, Round::NearestEven, true).0,
            want,
            "e5m2 {x:#010x}"
        );
    }
}

#[test]
fn fp8_and_fp4_nan_and_overflow_rules() {
    assert_eq!(f32_to_e4m3(0x7fc0_0000, Round::NearestEven), (0x7f, 0));
    assert_eq!(f32_to_e4m3(0xffc0_0000, Round::NearestEven), (0xff, 0));
    assert_eq!(
        f32_to_e4m3(0x7f80_0000, Round::NearestEven),
        (0x7e, OF | NX)
    );
    assert_eq!(
        f32_to_e4m3(0x447a_0000, Round::NearestEven),
        (0x7e, OF | NX)
    ); // 1000
    assert_eq!(f32_to_e4m3(0x43e8_0000, Round::NearestEven), (0x7e, NX)); // 464 ties to 448
    assert_eq!(
        f32_to_e5m2(0x7fc0_0000, Round::NearestEven, true),
        (0x7e, 0)
    );
    assert_eq!(
        f32_to_e5m2(0x7f80_0000, Round::NearestEven, false),
        (0x7c, 0)
    );
    assert_eq!(
        f32_to_e5m2(0x7f80_0000, Round::NearestEven, true),
        (0x7b, OF | NX)
    );
    assert_eq!(
        f32_to_e5m2(0x4780_0000, Round::NearestEven, false),
        (0x7c, OF | NX)
    );
    assert_eq!(f32_to_e2m1(0x7fc0_0000, Round::NearestEven), (0x7, NV));
    assert_eq!(f32_to_e2m1(0xffc0_0000, Round::NearestEven), (0xf, NV));
    assert_eq!(f32_to_e2m1(0x42c8_0000, Round::NearestEven), (0x7, OF | NX)); // 100 -> 6
    assert_eq!(f32_to_e2m1(0x40a0_0000, Round::NearestEven), (0x6, NX)); // 5 ties to 4
    assert_eq!(f32_to_e2m1(0x40a0_0000, Round::NearestAway), (0x7, NX)); // 5 away -> 6
    assert_eq!(f32_to_e2m1(0x8000_0000, Round::NearestEven), (0x8, 0));
    for (code, value) in [
        (0u8, 0.0f32),
        (1, 0.5),
        (2, 1.0),
        (3, 1.5),
        (4, 2.0),
        (5, 3.0),
        (6, 4.0),
        (7, 6.0),
    ] {
        assert_eq!(e2m1_to_f32(code).0, value.to_bits());
        assert_eq!(e2m1_to_f32(code | 8).0, (-value).to_bits());
    }
    // Only the low nibble of an e2m1 value is read.
    assert_eq!(e2m1_to_f32(0xf7).0, 0x40c0_0000);
    assert_eq!(e2m1_to_f32(0x0f).0, 0xc0c0_0000);
}

#[test]
fn lp_convert_vectors_all_rows() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/lp_convert_vectors.tsv"
    );
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "{path}: {e}");
            eprintln!("skipping: {path} not readable ({e})");
            return;
        }
    };
    let mut rows = 0;
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert!(f.len() >= 3, "line {}: {line}", n + 1);
        let input = u32::from_str_radix(f[1], 16).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let want = u32::from_str_radix(f[2], 16).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let any_nan = f.get(3).is_some_and(|note| note.contains("any NaN"));
        let (from, to) = match f[0] {
            "fcvt.s.e4m3" => (FloatFormat::E4m3, FloatFormat::F32),
            "fcvt.s.e5m2" => (FloatFormat::E5m2, FloatFormat::F32),
            "fcvt.s.e2m1" => (FloatFormat::E2m1, FloatFormat::F32),
            "fcvt.s.bf16" => (FloatFormat::Bf16, FloatFormat::F32),
            "fcvt.e4m3.s" => (FloatFormat::F32, FloatFormat::E4m3),
            "fcvt.e5m2.s" => (FloatFormat::F32, FloatFormat::E5m2),
            "fcvt.e2m1.s" => (FloatFormat::F32, FloatFormat::E2m1),
            "fcvt.bf16.s" => (FloatFormat::F32, FloatFormat::Bf16),
            op => panic!("line {}: unknown op {op}", n + 1),
        };
        // The device's converters: RNE, saturating for fp8/fp4 (not bf16).
        let sat = matches!(
            to,
            FloatFormat::E4m3 | FloatFormat::E5m2 | FloatFormat::E2m1
        );
        let mode = FloatMode {
            sat,
            ..FloatMode::IEEE
        };
        let mut out = [0];
        let k = InstKind::Fcvt { from, to, mode };
        assert!(eval_pure(&k, &[from.storage()], &[input.into()], &mut out));
        if any_nan {
            assert!(
                f32::from_bits(out[0] as u32).is_nan(),
                "line {}: {line}",
                n + 1
            );
        } else {
            assert_eq!(out[0], u64::from(want), "line {}: {line}", n + 1);
        }
        rows += 1;
    }
    assert_eq!(rows, 2640);
}

#[test]
fn float_to_int_riscv_rules() {
    let r = Round::TowardZero;
    assert_eq!(f32_to_i32(0x7fc0_0000, r, true), (0x7fff_ffff, NV));
    assert_eq!(f32_to_i32(0x7fc0_0000, r, false), (0, NV));
    assert_eq!(f32_to_i32(0x4f00_0000, r, true), (0x7fff_ffff, NV)); // 2^31
    assert_eq!(f32_to_i32(0xcf00_0000, r, true), (0x8000_0000, 0)); // -2^31 fits
    assert_eq!(f32_to_i32(0xcf00_0001, r, true), (0x8000_0000, NV));
    assert_eq!(f32_to_i32(0xff80_0000, r, true), (0x8000_0000, NV));
    assert_eq!(f32_to_i32(0xbfc0_0000, r, true), (0xffff_ffff, NX)); // -1.5 -> -1
    assert_eq!(
        f32_to_i32(0xbfc0_0000, Round::NearestEven, true),
        (0xffff_fffe, NX)
    );
    assert_eq!(f32_to_i32(0x3f00_0000, Round::NearestEven, true), (0, NX)); // 0.5 -> 0
    assert_eq!(f32_to_i32(0x3f00_0000, Round::NearestAway, true), (1, NX));
    assert_eq!(f32_to_i32(0x3f00_0000, Round::Up, true), (1, NX));
    assert_eq!(
        f32_to_i32(0xbf00_0000, Round::Down, true),
        (0xffff_ffff, NX)
    );
    assert_eq!(f32_to_u32(0x7fc0_0000, r, true), (0xffff_ffff, NV));
    assert_eq!(f32_to_u32(0xbf00_0000, r, true), (0, NX)); // -0.5 -> 0 is in range
    assert_eq!(f32_to_u32(0xbf80_0000, r, true), (0, NV)); // -1 -> 0, invalid
    assert_eq!(f32_to_u32(0x4f80_0000, r, true), (0xffff_ffff, NV)); // 2^32
    assert_eq!(f32_to_u32(0x4f7f_ffff, r, true), (0xffff_ff00, 0));
    // Narrow targets saturate to their own range.
    let m = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    assert_eq!(
        ftoi(FloatFormat::F32, 0x4780_0000, Type::I16, true, true, &m),
        (0x7fff, NV)
    );
    assert_eq!(
        ftoi(FloatFormat::F32, 0xc780_0000, Type::I16, true, true, &m),
        (0x8000, NV)
    );
    assert_eq!(
        ftoi(FloatFormat::F32, 0x4380_0000, Type::I8, false, true, &m),
        (0xff, NV)
    );
    assert_eq!(
        ftoi(
            FloatFormat::F64,
            0x43e0_0000_0000_0000,
            Type::I64,
            true,
            true,
            &m
        ),
        (0x7fff_ffff_ffff_ffff, NV)
    );
    assert_eq!(
        ftoi(
            FloatFormat::F64,
            0xc3e0_0000_0000_0000,
            Type::I64,
            true,
            true,
            &m
        ),
        (1 << 63, 0)
    );
    assert_eq!(
        ftoi(
            FloatFormat::F64,
            0x43ef_ffff_ffff_ffff,
            Type::I64,
            false,
            true,
            &m
        ),
        (0xffff_ffff_ffff_f800, 0)
    );
    assert_eq!(
        ftoi(FloatFormat::E4m3, 0x7e, Type::I32, true, true, &m),
        (448, 0)
    );
    // FToI through eval_pure with a flags slot.
    let k = InstKind::FToI {
        from: FloatFormat::F16,
        to: Type::I32,
        signed: true,
        nan_to_max: false,
        mode: m,
    };
    let mut out = [0, 0];
    assert!(eval_pure(&k, &[Type::F16], &[0x7e00], &mut out));
    assert_eq!(out, [0, u64::from(NV)]);
}

#[test]
fn int_to_float_rounding() {
    // 2^24 + 1 is not representable in f32.
    assert_eq!(
        i32_to_f32(0x0100_0001, Round::NearestEven),
        (0x4b80_0000, NX)
    );
    assert_eq!(i32_to_f32(0x0100_0001, Round::Up), (0x4b80_0001, NX));
    assert_eq!(i32_to_f32(0xfeff_ffff, Round::Down), (0xcb80_0001, NX)); // -(2^24+1)
    assert_eq!(
        i32_to_f32(0xfeff_ffff, Round::TowardZero),
        (0xcb80_0000, NX)
    );
    assert_eq!(
        i32_to_f32(0x8000_0000, Round::NearestEven),
        (0xcf00_0000, 0)
    );
    assert_eq!(
        u32_to_f32(0xffff_ffff, Round::NearestEven),
        (0x4f80_0000, NX)
    );
    assert_eq!(
        u32_to_f32(0xffff_ffff, Round::TowardZero),
        (0x4f7f_ffff, NX)
    );
    assert_eq!(i32_to_f32(0, Round::Down), (0, 0));
    let m = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    assert_eq!(
        itof(FloatFormat::F16, false, Type::I32, 65520, &m),
        (0x7c00, OF | NX)
    );
    assert_eq!(
        itof(FloatFormat::E4m3, true, Type::I32, 0xffff_fc18, &m),
        (0xfe, OF | NX)
    ); // -1000
    assert_eq!(
        itof(FloatFormat::F64, true, Type::I64, u64::MAX, &m),
        (0xbff0_0000_0000_0000, 0)
    );
    assert_eq!(
        itof(FloatFormat::F64, false, Type::I64, u64::MAX, &m),
        (0x43f0_0000_0000_0000, NX)
    );
    assert_eq!(
        itof(FloatFormat::F32, true, Type::I8, 0x80, &m),
        (0xc300_0000, 0)
    );
    // Random i32 in RNE agree with the host cast.
    let mut x = 0x1234_5678u32;
    for _ in 0..100_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        assert_eq!(
            i32_to_f32(x, Round::NearestEven).0,
            (x as i32 as f32).to_bits()
        );
        assert_eq!(u32_to_f32(x, Round::NearestEven).0, (x as f32).to_bits());
        let f = f32::from_bits(x);
        if f.is_finite() && f.abs() < 2.0e9 {
            assert_eq!(f32_to_i32(x, Round::TowardZero, true).0, f as i32 as u32);
        }
    }
}

#[test]
fn rne_fast_paths_equal_exact_conversions() {
    use wavejit_ir::semantics::convert::{f32_to_bf16_rne, f32_to_f16_rne};
    // A dense stride over all f32 patterns plus every f16/bf16 boundary.
    let mut inputs: Vec<u32> = (0..=u32::MAX).step_by(997).collect();
    let values: Vec<f32> = (0..0x7c01u16).map(|h| f16::from_bits(h).to_f32()).collect();
    inputs.extend(probes(&values));
    let values: Vec<f32> = (0..0x7f81u16)
        .map(|h| bf16::from_bits(h).to_f32())
        .collect();
    inputs.extend(probes(&values));
    for x in inputs {
        assert_eq!(
            f32_to_f16_rne(x),
            f32_to_f16(x, Round::NearestEven).0,
            "f16 {x:#010x}"
        );
        assert_eq!(
            f32_to_bf16_rne(x),
            f32_to_bf16(x, Round::NearestEven, false).0,
            "bf16 {x:#010x}"
        );
        // `fcvt` without flags takes the same fast paths.
        let ieee = FloatMode::IEEE;
        let h = fcvt(FloatFormat::F32, FloatFormat::F16, x.into(), &ieee).0;
        assert_eq!(h, u64::from(f32_to_f16_rne(x)));
        let b = fcvt(FloatFormat::F32, FloatFormat::Bf16, x.into(), &ieee).0;
        assert_eq!(b, u64::from(f32_to_bf16_rne(x)));
    }
}
