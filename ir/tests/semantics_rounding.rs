//! Correct rounding in all five directions with exact flags, checked against hand
//! computed cases and against independent oracles built from host IEEE arithmetic.

#[path = "support/rng.rs"]
mod rng;

use rng::Rng;
use wavejit_ir::semantics::arith::{
    fbinary, fbinary_f32, fbinary_f64, fma_f32, fma_f64, funary_f32,
};
use wavejit_ir::semantics::format::Fmt;
use wavejit_ir::{FBinOp, FUnOp, FloatMode, Round};

const NV: u32 = 0x10;
const DZ: u32 = 0x08;
const OF: u32 = 0x04;
const UF: u32 = 0x02;
const NX: u32 = 0x01;

fn mode(round: Round) -> FloatMode {
    FloatMode {
        round,
        flags: true,
        ..FloatMode::IEEE
    }
}

fn b32(op: FBinOp, a: u32, b: u32, round: Round) -> (u32, u32) {
    fbinary_f32(op, a, b, &mode(round))
}

impl Rng {
    /// A float pattern biased toward interesting exponents.
    fn f32(&mut self) -> u32 {
        let r = self.next();
        let frac = (r as u32) & 0x007f_ffff;
        let sign = ((r >> 32) as u32 & 1) << 31;
        let exp = match (r >> 40) % 8 {
            0 => 0,
            1 => 1 + (r >> 48) as u32 % 4,
            2 => 250 + (r >> 48) as u32 % 5,
            _ => 100 + (r >> 48) as u32 % 56,
        };
        sign | exp << 23 | frac
    }
}

/// Rounds the exact value `v` (f64) to f32 in direction `round`, from the host's
/// RNE `as` cast and neighbour stepping. Returns the bits and whether inexact.
fn directed_f32(v: f64, round: Round) -> (u32, bool) {
    let r = v as f32;
    let rv = f64::from(r);
    if rv == v {
        return (r.to_bits(), false);
    }
    let out = match round {
        Round::NearestEven => r,
        Round::Up => {
            if rv < v {
                r.next_up()
            } else {
                r
            }
        }
        Round::Down => {
            if rv > v {
                r.next_down()
            } else {
                r
            }
        }
        Round::TowardZero => {
            if rv.abs() > v.abs() {
                if r > 0.0 { r.next_down() } else { r.next_up() }
            } else {
                r
            }
        }
        Round::NearestAway => {
            if r.is_infinite() {
                r
            } else {
                let other = if rv > v { r.next_down() } else { r.next_up() };
                let tie = (v - rv).abs() == (f64::from(other) - v).abs();
                if tie && f64::from(other).abs() > rv.abs() {
                    other
                } else {
                    r
                }
            }
        }
    };
    (out.to_bits(), true)
}

#[test]
fn tie_in_every_direction() {
    // 1 + 2^-24 is halfway between 1 and 1 + 2^-23.
    let (one, half_ulp) = (0x3f80_0000, 0x3380_0000);
    assert_eq!(
        b32(FBinOp::Add, one, half_ulp, Round::NearestEven),
        (0x3f80_0000, NX)
    );
    assert_eq!(
        b32(FBinOp::Add, one, half_ulp, Round::NearestAway),
        (0x3f80_0001, NX)
    );
    assert_eq!(
        b32(FBinOp::Add, one, half_ulp, Round::TowardZero),
        (0x3f80_0000, NX)
    );
    assert_eq!(
        b32(FBinOp::Add, one, half_ulp, Round::Down),
        (0x3f80_0000, NX)
    );
    assert_eq!(
        b32(FBinOp::Add, one, half_ulp, Round::Up),
        (0x3f80_0001, NX)
    );
    // Negative: -1 - 2^-24.
    let (m_one, m_half) = (0xbf80_0000, 0xb380_0000);
    assert_eq!(
        b32(FBinOp::Add, m_one, m_half, Round::NearestAway),
        (0xbf80_0001, NX)
    );
    assert_eq!(
        b32(FBinOp::Add, m_one, m_half, Round::Down),
        (0xbf80_0001, NX)
    );
    assert_eq!(
        b32(FBinOp::Add, m_one, m_half, Round::Up),
        (0xbf80_0000, NX)
    );
    assert_eq!(
        b32(FBinOp::Add, m_one, m_half, Round::TowardZero),
        (0xbf80_0000, NX)
    );
}

#[test]
fn division_in_every_direction() {
    // 1/3 = 0x3eaaaaaa.aaa..: RNE/RMM/RTZ/Down give ..aaab? No: 0.1010.. below half.
    let (one, three) = (0x3f80_0000, 0x4040_0000);
    assert_eq!(
        b32(FBinOp::Div, one, three, Round::NearestEven),
        (0x3eaa_aaab, NX)
    );
    assert_eq!(
        b32(FBinOp::Div, one, three, Round::NearestAway),
        (0x3eaa_aaab, NX)
    );
    assert_eq!(
        b32(FBinOp::Div, one, three, Round::TowardZero),
        (0x3eaa_aaaa, NX)
    );
    assert_eq!(b32(FBinOp::Div, one, three, Round::Down), (0x3eaa_aaaa, NX));
    assert_eq!(b32(FBinOp::Div, one, three, Round::Up), (0x3eaa_aaab, NX));
    assert_eq!(
        b32(FBinOp::Div, 0xbf80_0000, three, Round::Down),
        (0xbeaa_aaab, NX)
    );
    assert_eq!(b32(FBinOp::Div, 0x4040_0000, three, Round::Up), (one, 0));
    assert_eq!(
        b32(FBinOp::Div, one, 0x8000_0000, Round::Up),
        (0xff80_0000, DZ)
    );
    assert_eq!(b32(FBinOp::Div, 0, 0, Round::Up), (0x7fc0_0000, NV));
}

#[test]
fn sqrt_in_every_direction() {
    let m = |r| funary_f32(FUnOp::Sqrt, 0x4000_0000, &mode(r));
    // sqrt(2) = 1.41421353816986083984375 (0x3fb504f3) + 0.48 ulp.
    assert_eq!(m(Round::NearestEven), (0x3fb5_04f3, NX));
    assert_eq!(m(Round::NearestAway), (0x3fb5_04f3, NX));
    assert_eq!(m(Round::TowardZero), (0x3fb5_04f3, NX));
    assert_eq!(m(Round::Down), (0x3fb5_04f3, NX));
    assert_eq!(m(Round::Up), (0x3fb5_04f4, NX));
    assert_eq!(
        funary_f32(FUnOp::Sqrt, 0x4080_0000, &mode(Round::Up)),
        (0x4000_0000, 0)
    );
    assert_eq!(
        funary_f32(FUnOp::Sqrt, 0x8000_0000, &mode(Round::Up)),
        (0x8000_0000, 0)
    );
    assert_eq!(
        funary_f32(FUnOp::Sqrt, 0xff80_0000, &mode(Round::Up)),
        (0x7fc0_0000, NV)
    );
    assert_eq!(
        funary_f32(FUnOp::Sqrt, 0x7f80_0001, &mode(Round::Up)),
        (0x7fc0_0001, NV)
    );
}

#[test]
fn overflow_in_every_direction() {
    let max = 0x7f7f_ffff;
    let two = 0x4000_0000;
    assert_eq!(
        b32(FBinOp::Mul, max, two, Round::NearestEven),
        (0x7f80_0000, OF | NX)
    );
    assert_eq!(
        b32(FBinOp::Mul, max, two, Round::NearestAway),
        (0x7f80_0000, OF | NX)
    );
    assert_eq!(
        b32(FBinOp::Mul, max, two, Round::TowardZero),
        (max, OF | NX)
    );
    assert_eq!(b32(FBinOp::Mul, max, two, Round::Down), (max, OF | NX));
    assert_eq!(
        b32(FBinOp::Mul, max, two, Round::Up),
        (0x7f80_0000, OF | NX)
    );
    let nmax = 0xff7f_ffff;
    assert_eq!(
        b32(FBinOp::Mul, nmax, two, Round::Down),
        (0xff80_0000, OF | NX)
    );
    assert_eq!(b32(FBinOp::Mul, nmax, two, Round::Up), (nmax, OF | NX));
    // MAX + half an ulp ties to even = overflow under RNE; RTZ stays MAX without OF.
    assert_eq!(
        b32(FBinOp::Add, max, 0x7300_0000, Round::NearestEven),
        (0x7f80_0000, OF | NX)
    );
    assert_eq!(
        b32(FBinOp::Add, max, 0x7300_0000, Round::TowardZero),
        (max, NX)
    );
    // Infinity arithmetic is exact.
    assert_eq!(
        b32(FBinOp::Add, 0x7f80_0000, max, Round::TowardZero),
        (0x7f80_0000, 0)
    );
}

#[test]
fn underflow_tininess_after_rounding() {
    // (1 - 2^-24) * 2^-126: tiny even after rounding to 24 bits; the subnormal
    // result rounds (tie) up to 2^-126 -> UF|NX with a normal result.
    assert_eq!(
        b32(FBinOp::Mul, 0x3f7f_ffff, 0x0080_0000, Round::NearestEven),
        (0x0080_0000, UF | NX)
    );
    // (1 - 2^-46) * 2^-126: rounds to 2^-126 at 24 bits in RNE/Up -> not tiny.
    let (a, b) = (0x3f7f_fffe, 0x0080_0001);
    assert_eq!(
        b32(FBinOp::Mul, a, b, Round::NearestEven),
        (0x0080_0000, NX)
    );
    assert_eq!(b32(FBinOp::Mul, a, b, Round::Up), (0x0080_0000, NX));
    assert_eq!(b32(FBinOp::Mul, a, b, Round::Down), (0x007f_ffff, UF | NX));
    assert_eq!(
        b32(FBinOp::Mul, a, b, Round::TowardZero),
        (0x007f_ffff, UF | NX)
    );
    // Exact subnormal: no UF.
    assert_eq!(
        b32(FBinOp::Mul, 0x0080_0000, 0x3f00_0000, Round::NearestEven),
        (0x0040_0000, 0)
    );
    // Smallest subnormal halved: tie to even 0 (RNE), away gives the subnormal.
    assert_eq!(
        b32(FBinOp::Mul, 0x0000_0001, 0x3f00_0000, Round::NearestEven),
        (0, UF | NX)
    );
    assert_eq!(
        b32(FBinOp::Mul, 0x0000_0001, 0x3f00_0000, Round::NearestAway),
        (1, UF | NX)
    );
    assert_eq!(
        b32(FBinOp::Mul, 0x8000_0001, 0x3f00_0000, Round::Down),
        (0x8000_0001, UF | NX)
    );
    assert_eq!(
        b32(FBinOp::Mul, 0x8000_0001, 0x3f00_0000, Round::Up),
        (0x8000_0000, UF | NX)
    );
}

#[test]
fn exact_zero_sums_take_the_direction_sign() {
    let one = 0x3f80_0000;
    assert_eq!(b32(FBinOp::Sub, one, one, Round::NearestEven), (0, 0));
    assert_eq!(b32(FBinOp::Sub, one, one, Round::Down), (0x8000_0000, 0));
    assert_eq!(
        b32(FBinOp::Add, 0x8000_0000, 0, Round::Down),
        (0x8000_0000, 0)
    );
    assert_eq!(b32(FBinOp::Add, 0x8000_0000, 0, Round::Up), (0, 0));
    assert_eq!(
        b32(FBinOp::Add, 0x8000_0000, 0x8000_0000, Round::Up),
        (0x8000_0000, 0)
    );
    let m = mode(Round::Down);
    assert_eq!(fma_f32(one, one, 0xbf80_0000, &m), (0x8000_0000, 0));
    assert_eq!(
        fma_f32(0, one, 0x8000_0000, &mode(Round::NearestEven)),
        (0, 0)
    );
}

#[test]
fn random_rne_matches_host_f32() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let fast = FloatMode::IEEE;
    let exact = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    for _ in 0..200_000 {
        let (a, b, c) = (rng.f32(), rng.f32(), rng.f32());
        let (x, y, z) = (f32::from_bits(a), f32::from_bits(b), f32::from_bits(c));
        for (op, host) in [
            (FBinOp::Add, x + y),
            (FBinOp::Sub, x - y),
            (FBinOp::Mul, x * y),
            (FBinOp::Div, x / y),
        ] {
            let soft = fbinary(Fmt::F32, op, a.into(), b.into(), &exact).0 as u32;
            assert_eq!(soft, host.to_bits(), "{op:?} {a:#x} {b:#x}");
            assert_eq!(fbinary_f32(op, a, b, &fast).0, soft);
        }
        let soft = funary_f32(FUnOp::Sqrt, a & 0x7fff_ffff, &exact).0;
        assert_eq!(soft, (x.abs()).sqrt().to_bits(), "sqrt {a:#x}");
        let soft = fma_f32(a, b, c, &exact).0;
        assert_eq!(soft, x.mul_add(y, z).to_bits(), "fma {a:#x} {b:#x} {c:#x}");
        assert_eq!(fma_f32(a, b, c, &fast).0, soft);
    }
}

#[test]
fn random_rne_matches_host_f64() {
    let mut rng = Rng(0x0fed_cba9_8765_4321);
    let exact = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    for _ in 0..100_000 {
        let gen64 = |rng: &mut Rng| {
            let r = rng.next();
            let e = match r % 4 {
                0 => r >> 52 & 0x7ff,
                1 => (r >> 52) % 3,
                _ => 900 + (r >> 52) % 250,
            };
            (r & 0x800f_ffff_ffff_ffff) | e << 52
        };
        let (a, b, c) = (gen64(&mut rng), gen64(&mut rng), gen64(&mut rng));
        let (x, y, z) = (f64::from_bits(a), f64::from_bits(b), f64::from_bits(c));
        for (op, host) in [
            (FBinOp::Add, x + y),
            (FBinOp::Sub, x - y),
            (FBinOp::Mul, x * y),
            (FBinOp::Div, x / y),
        ] {
            if host.is_nan() {
                continue;
            }
            assert_eq!(
                fbinary_f64(op, a, b, &exact).0,
                host.to_bits(),
                "{op:?} {a:#x} {b:#x}"
            );
        }
        let host = x.mul_add(y, z);
        if !host.is_nan() {
            assert_eq!(
                fma_f64(a, b, c, &exact).0,
                host.to_bits(),
                "fma {a:#x} {b:#x} {c:#x}"
            );
        }
    }
}

#[test]
fn random_directed_add_mul_match_oracle() {
    // Products of f32 are exact in f64; sums are exact when exponents are close.
    let mut rng = Rng(0xdead_beef_cafe_f00d);
    for _ in 0..100_000 {
        let (a, b) = (rng.f32(), rng.f32());
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        let exact_mul = f64::from(x) * f64::from(y);
        let ea = (a >> 23) & 0xff;
        let eb = (b >> 23) & 0xff;
        let sum_exact = ea.abs_diff(eb) < 28;
        let exact_add = f64::from(x) + f64::from(y);
        for round in Round::ALL {
            let (r, f) = b32(FBinOp::Mul, a, b, round);
            let (want, inexact) = directed_f32(exact_mul, round);
            if want != 0x7fc0_0000 && exact_mul.is_finite() {
                assert_eq!(r, want, "mul {a:#x} {b:#x} {round:?}");
                assert_eq!(f & NX != 0, inexact, "mul NX {a:#x} {b:#x} {round:?}");
            }
            if sum_exact && exact_add.is_finite() {
                let (r, f) = b32(FBinOp::Add, a, b, round);
                let (want, inexact) = directed_f32(exact_add, round);
                let want = if exact_add == 0.0 && round == Round::Down && x != 0.0 {
                    0x8000_0000
                } else {
                    want
                };
                if exact_add != 0.0 || x != 0.0 || y != 0.0 {
                    assert_eq!(r, want, "add {a:#x} {b:#x} {round:?}");
                }
                assert_eq!(f & NX != 0, inexact, "add NX {a:#x} {b:#x} {round:?}");
            }
        }
    }
}

#[test]
fn random_directed_div_sqrt_match_residual_oracle() {
    // In the normal range the sign of the exact residual (computed with host fma)
    // tells which neighbour each direction picks.
    let mut rng = Rng(0x5555_aaaa_1234_4321);
    let pick = |rne: f32, residual_sign: f64, round: Round| -> u32 {
        // residual_sign > 0: exact > rne.
        let r = match round {
            Round::Up if residual_sign > 0.0 => rne.next_up(),
            Round::Down if residual_sign < 0.0 => rne.next_down(),
            Round::TowardZero if residual_sign != 0.0 && (residual_sign > 0.0) != (rne > 0.0) => {
                if rne > 0.0 {
                    rne.next_down()
                } else {
                    rne.next_up()
                }
            }
            _ => rne,
        };
        r.to_bits()
    };
    for _ in 0..100_000 {
        let a = (rng.next() as u32 & 0x807f_ffff) | (110 + (rng.next() % 30) as u32) << 23;
        let b = (rng.next() as u32 & 0x807f_ffff) | (110 + (rng.next() % 30) as u32) << 23;
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        let q = x / y;
        let rem = f64::from(-q).mul_add(f64::from(y), f64::from(x)); // exact in f64
        let sign_q = rem * f64::from(y).signum();
        let s = x.abs().sqrt();
        let rs = f64::from(-s).mul_add(f64::from(s), f64::from(x.abs()));
        for round in [Round::TowardZero, Round::Down, Round::Up] {
            let (r, f) = b32(FBinOp::Div, a, b, round);
            assert_eq!(r, pick(q, sign_q, round), "div {a:#x} {b:#x} {round:?}");
            assert_eq!(f, if rem != 0.0 { NX } else { 0 });
            let (r, f) = funary_f32(FUnOp::Sqrt, a & 0x7fff_ffff, &mode(round));
            assert_eq!(r, pick(s, rs, round), "sqrt {a:#x} {round:?}");
            assert_eq!(f, if rs != 0.0 { NX } else { 0 });
        }
    }
}

/// Rounds `hi + lo` (an exact unevaluated f64 sum, |lo| <= ulp(hi)/2) to f64 in
/// direction `round`, given that `hi` is the RNE result.
fn directed_f64(hi: f64, lo: f64, round: Round) -> u64 {
    let r = match round {
        Round::NearestEven | Round::NearestAway => hi,
        Round::Up if lo > 0.0 => hi.next_up(),
        Round::Down if lo < 0.0 => hi.next_down(),
        Round::TowardZero if lo != 0.0 && (lo > 0.0) != (hi > 0.0) => {
            if hi > 0.0 {
                hi.next_down()
            } else {
                hi.next_up()
            }
        }
        _ => hi,
    };
    r.to_bits()
}

#[test]
fn random_directed_f64_match_error_free_transformations() {
    // Normal-range operands and results: TwoSum gives the exact error of a sum,
    // fma the exact error of a product, quotient and root.
    let mut rng = Rng(0x7777_1111_3333_9999);
    for _ in 0..50_000 {
        let gen64 =
            |rng: &mut Rng| (rng.next() & 0x800f_ffff_ffff_ffff) | (900 + rng.next() % 200) << 52;
        let (a, b) = (gen64(&mut rng), gen64(&mut rng));
        let (x, y) = (f64::from_bits(a), f64::from_bits(b));
        let s = x + y;
        let bb = s - x;
        let err_s = (x - (s - bb)) + (y - bb);
        let p = x * y;
        let err_p = x.mul_add(y, -p);
        let q = x / y;
        let rem_q = (-q).mul_add(y, x) * y.signum();
        let r = x.abs().sqrt();
        let rem_r = (-r).mul_add(r, x.abs());
        for round in [Round::TowardZero, Round::Down, Round::Up] {
            let m = mode(round);
            let sign_of = |v: f64| if v == 0.0 { 0.0 } else { v.signum() };
            assert_eq!(
                fbinary_f64(FBinOp::Add, a, b, &m).0,
                directed_f64(s, err_s, round),
                "add {a:#x} {b:#x} {round:?}"
            );
            assert_eq!(
                fbinary_f64(FBinOp::Mul, a, b, &m).0,
                directed_f64(p, err_p, round),
                "mul {a:#x} {b:#x} {round:?}"
            );
            assert_eq!(
                fbinary_f64(FBinOp::Div, a, b, &m).0,
                directed_f64(q, sign_of(rem_q), round),
                "div {a:#x} {b:#x} {round:?}"
            );
            let sq = wavejit_ir::semantics::arith::funary_f64(FUnOp::Sqrt, a & !(1 << 63), &m);
            assert_eq!(
                sq.0,
                directed_f64(r, sign_of(rem_r), round),
                "sqrt {a:#x} {round:?}"
            );
            assert_eq!(sq.1, if rem_r != 0.0 { NX } else { 0 });
        }
        assert_eq!(
            wavejit_ir::semantics::arith::funary_f64(FUnOp::Sqrt, a & !(1 << 63), &FloatMode::IEEE)
                .0,
            r.to_bits()
        );
    }
}

#[test]
fn random_directed_f32_fma_when_exact_in_f64() {
    let mut rng = Rng(0x4242_4242_0000_ffff);
    let mut checked = 0;
    for _ in 0..100_000 {
        let (a, b, c) = (rng.f32(), rng.f32(), rng.f32());
        let (x, y, z) = (
            f64::from(f32::from_bits(a)),
            f64::from(f32::from_bits(b)),
            f64::from(f32::from_bits(c)),
        );
        let p = x * y;
        let s = p + z;
        let bb = s - p;
        let exact = (p - (s - bb)) + (z - bb) == 0.0;
        if !exact || !s.is_finite() || s == 0.0 {
            continue;
        }
        for round in Round::ALL {
            let (r, f) = fma_f32(a, b, c, &mode(round));
            let (want, inexact) = directed_f32(s, round);
            assert_eq!(r, want, "fma {a:#x} {b:#x} {c:#x} {round:?}");
            assert_eq!(f & NX != 0, inexact);
            checked += 1;
        }
    }
    assert!(checked > 100_000, "{checked}");
}

#[test]
fn error_free_f32_path_equals_exact_path() {
    use wavejit_ir::semantics::arith::{fma, funary};
    // Typed f32 entry points with flags or directed rounding take the error-free
    // path where it applies; the generic functions always take the exact one.
    let mut rng = Rng(0x0bad_cafe_f00d_d00d);
    let edges = [
        0x0100_0000u32,
        0x00ff_ffff,
        0x0100_0001,
        0x7f7f_fffe,
        0x7f7f_ffff,
        0x3f80_0000,
        0x3f80_0001,
        0x0080_0000,
        0x0000_0001,
        0x7f80_0000,
        0x7fc0_0000,
        0x7f80_0001,
        0x4000_0000,
        0x3fff_ffff,
    ];
    let mut pats: Vec<u32> = edges.iter().flat_map(|&e| [e, e | 0x8000_0000]).collect();
    for _ in 0..3000 {
        pats.push(rng.f32());
    }
    for round in Round::ALL {
        let m = mode(round);
        for (i, &a) in pats.iter().enumerate() {
            let b = pats[(i * 7 + 3) % pats.len()];
            let c = pats[(i * 13 + 5) % pats.len()];
            for op in [FBinOp::Add, FBinOp::Sub, FBinOp::Mul, FBinOp::Div] {
                let exact = fbinary(Fmt::F32, op, a.into(), b.into(), &m);
                assert_eq!(
                    b32(op, a, b, round),
                    (exact.0 as u32, exact.1),
                    "{op:?} {a:#x} {b:#x} {round:?}"
                );
            }
            let exact = funary(Fmt::F32, FUnOp::Sqrt, a.into(), &m);
            assert_eq!(
                funary_f32(FUnOp::Sqrt, a, &m),
                (exact.0 as u32, exact.1),
                "sqrt {a:#x} {round:?}"
            );
            let exact = fma(Fmt::F32, a.into(), b.into(), c.into(), &m);
            assert_eq!(
                fma_f32(a, b, c, &m),
                (exact.0 as u32, exact.1),
                "fma {a:#x} {b:#x} {c:#x} {round:?}"
            );
        }
    }
    // Results right at the edges of the error-free range: 2^-125 and MAX.
    for round in Round::ALL {
        let m = mode(round);
        for (a, b) in [
            (0x0100_0000, 0x3f80_0001),
            (0x0100_0001, 0x3f7f_ffff),
            (0x7f7f_ffff, 0x3f80_0001),
            (0x7f7f_fffe, 0x3f80_0001),
            (0x0180_0000, 0x3f00_0000),
        ] {
            for op in [FBinOp::Mul, FBinOp::Div] {
                let exact = fbinary(Fmt::F32, op, a.into(), b.into(), &m);
                assert_eq!(
                    b32(op, a, b, round),
                    (exact.0 as u32, exact.1),
                    "{op:?} {a:#x} {b:#x} {round:?}"
                );
            }
        }
    }
}

#[test]
fn error_free_path_is_taken_and_refuses_what_it_cannot_prove() {
    use wavejit_ir::semantics::error_free::{EfOp, f32_op};
    let one = 1.0f32;
    let half_ulp = f32::from_bits(0x3380_0000);
    assert_eq!(
        f32_op(EfOp::Add, one, half_ulp, 0.0, Round::Up),
        Some((0x3f80_0001, NX))
    );
    assert_eq!(
        f32_op(EfOp::Add, one, half_ulp, 0.0, Round::Down),
        Some((0x3f80_0000, NX))
    );
    assert_eq!(
        f32_op(EfOp::Add, -one, -half_ulp, 0.0, Round::Down),
        Some((0xbf80_0001, NX))
    );
    assert_eq!(
        f32_op(EfOp::Div, one, 3.0, 0.0, Round::TowardZero),
        Some((0x3eaa_aaaa, NX))
    );
    assert_eq!(
        f32_op(EfOp::Sqrt, 4.0, 0.0, 0.0, Round::Up),
        Some((0x4000_0000, 0))
    );
    assert_eq!(f32_op(EfOp::Fma, 3.0, 3.0, -9.0, Round::Up), None); // exact zero
    assert_eq!(
        f32_op(EfOp::Add, one, half_ulp, 0.0, Round::NearestAway),
        None
    );
    assert_eq!(f32_op(EfOp::Mul, f32::MAX, 2.0, 0.0, Round::Up), None); // overflow
    assert_eq!(
        f32_op(EfOp::Mul, f32::MIN_POSITIVE, 0.5, 0.0, Round::Up),
        None
    ); // tiny
    assert_eq!(f32_op(EfOp::Add, f32::NAN, one, 0.0, Round::Up), None);
    // Most ordinary operands are handled.
    let mut rng = Rng(0x1111_0000_2222_0000);
    let mut taken = 0;
    for _ in 0..10_000 {
        let x = f32::from_bits((rng.next() as u32 & 0x807f_ffff) | 0x3f00_0000);
        let y = f32::from_bits((rng.next() as u32 & 0x807f_ffff) | 0x4000_0000);
        taken += usize::from(f32_op(EfOp::Mul, x, y, 0.0, Round::Up).is_some());
    }
    assert_eq!(taken, 10_000);
}
