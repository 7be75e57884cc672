//! f16 arithmetic in all directions with flags against a brute-force oracle: the
//! exact result (computed in f64, exact or safely rounded for f16 operands) placed
//! between its two neighbouring f16 values by binary search.

#[path = "support/rng.rs"]
mod rng;

use half::f16;
use rng::Rng;
use wavejit_ir::semantics::arith::{fbinary_f16, fma_f16, funary_f16};
use wavejit_ir::{FBinOp, FUnOp, FloatMode, Round};

const OF: u32 = 0x04;
const UF: u32 = 0x02;
const NX: u32 = 0x01;

/// Every non-negative finite f16 value, ascending, plus 65536 standing for the
/// first value past the maximum (so overflow rounds like an unbounded exponent).
fn ladder() -> Vec<f64> {
    let mut v: Vec<f64> = (0..0x7c00u16).map(|h| f16::from_bits(h).to_f64()).collect();
    v.push(65536.0);
    v
}

/// Rounds the exact nonzero `v` to f16 bits in direction `round`, with flags.
fn oracle(ladder: &[f64], v: f64, round: Round) -> (u16, u32) {
    let neg = v < 0.0;
    let m = v.abs();
    let i = (ladder.partition_point(|&x| x <= m) - 1).min(0x7bff); // ladder[i] <= m
    let (lo, hi) = (i, (i + 1).min(ladder.len() - 1));
    let exact = ladder[lo] == m;
    let pick_hi = if exact {
        false
    } else {
        let (dl, dh) = (m - ladder[lo], ladder[hi] - m);
        match round {
            Round::NearestEven => dh < dl || (dh == dl && hi % 2 == 0),
            Round::NearestAway => dh <= dl,
            Round::TowardZero => false,
            Round::Up => !neg,
            Round::Down => neg,
        }
    };
    let idx = if pick_hi { hi } else { lo };
    let mut flags = if exact { 0 } else { NX };
    let bits = if idx == 0x7c00 {
        flags |= OF;
        0x7c00
    } else {
        idx as u16
    };
    // Overflow also when rounding to full precision exceeds the maximum even if
    // the delivered value is the maximum (directed rounding toward zero).
    if m > 65504.0 && !exact {
        let dl = m - 65504.0;
        let dh = 65536.0 - m;
        let unbounded_up = match round {
            Round::NearestEven | Round::NearestAway => dh <= dl,
            Round::TowardZero => false,
            Round::Up => !neg,
            Round::Down => neg,
        };
        if unbounded_up || m >= 65536.0 {
            flags |= OF;
        }
    }
    // Tiny after rounding: rounded to 11 bits with unbounded exponent < 2^-14.
    let min_normal = 2f64.powi(-14);
    if !exact && m < min_normal {
        let step = 2f64.powi(-25); // ulp of 11-bit values just below 2^-14
        let below = min_normal - step;
        let tiny = if m <= below {
            true
        } else {
            // m in (2^-14 - 2^-25, 2^-14): rounds to 2^-14 or to `below`.
            let (dl, dh) = (m - below, min_normal - m);
            let up = match round {
                Round::NearestEven => dh <= dl, // tie goes to the even 2^-14
                Round::NearestAway => dh <= dl,
                Round::TowardZero => false,
                Round::Up => !neg,
                Round::Down => neg,
            };
            !up
        };
        if tiny {
            flags |= UF;
        }
    }
    (bits | if neg { 0x8000 } else { 0 }, flags)
}

impl Rng {
    fn finite_f16(&mut self) -> u16 {
        loop {
            let h = self.next() as u16;
            if h & 0x7c00 != 0x7c00 {
                return h;
            }
        }
    }
}

#[test]
fn f16_random_all_directions_with_flags() {
    let lad = ladder();
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let mut checked = 0usize;
    for _ in 0..40_000 {
        let (a, b, c) = (rng.finite_f16(), rng.finite_f16(), rng.finite_f16());
        let (x, y, z) = (
            f16::from_bits(a).to_f64(),
            f16::from_bits(b).to_f64(),
            f16::from_bits(c).to_f64(),
        );
        let prod = x * y; // exact (22 bits)
        let fma = prod + z;
        let fma_exact = (fma - prod) == z && (fma - z) == prod;
        let cases = [
            (Some(FBinOp::Add), x + y, true),
            (Some(FBinOp::Sub), x - y, true),
            (Some(FBinOp::Mul), prod, true),
            (Some(FBinOp::Div), x / y, y != 0.0),
            (None, x.abs().sqrt(), true),
        ];
        for round in Round::ALL {
            let mode = FloatMode {
                round,
                flags: true,
                ..FloatMode::IEEE
            };
            for (op, exact, ok) in cases {
                if !ok || exact == 0.0 {
                    continue;
                }
                let got = match op {
                    Some(op) => fbinary_f16(op, a, b, &mode),
                    None => funary_f16(FUnOp::Sqrt, a & 0x7fff, &mode),
                };
                assert_eq!(
                    got,
                    oracle(&lad, exact, round),
                    "{op:?} {a:#06x} {b:#06x} {round:?}"
                );
                checked += 1;
            }
            if fma_exact && fma != 0.0 {
                assert_eq!(
                    fma_f16(a, b, c, &mode),
                    oracle(&lad, fma, round),
                    "fma {a:#06x} {b:#06x} {c:#06x} {round:?}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 900_000, "{checked}");
}

#[test]
fn f16_fast_path_matches_exact_path() {
    // RNE without flags takes the f32 fast path; with flags the exact path.
    let mut rng = Rng(0xfeed_face_dead_beef);
    let fast = FloatMode::IEEE;
    let exact = FloatMode {
        flags: true,
        ..FloatMode::IEEE
    };
    for _ in 0..200_000 {
        let (a, b) = (rng.next() as u16, rng.next() as u16);
        for op in [FBinOp::Add, FBinOp::Sub, FBinOp::Mul, FBinOp::Div] {
            assert_eq!(
                fbinary_f16(op, a, b, &fast).0,
                fbinary_f16(op, a, b, &exact).0,
                "{op:?} {a:#06x} {b:#06x}"
            );
        }
    }
}

#[test]
fn f16_sqrt_and_rcp_exhaustive_all_directions() {
    use wavejit_ir::SpecialFn;
    use wavejit_ir::semantics::special::special_f16;
    let lad = ladder();
    for h in 0..0x7c00u16 {
        let x = f16::from_bits(h).to_f64();
        for round in Round::ALL {
            let mode = FloatMode {
                round,
                flags: true,
                ..FloatMode::IEEE
            };
            if h != 0 {
                // Square roots and reciprocals of 11-bit values are never within
                // 2^-53 of an f16 boundary unless exact, so f64 places them safely.
                assert_eq!(
                    funary_f16(FUnOp::Sqrt, h, &mode),
                    oracle(&lad, x.sqrt(), round),
                    "sqrt {h:#06x} {round:?}"
                );
                assert_eq!(
                    special_f16(SpecialFn::Rcp, h, &mode),
                    oracle(&lad, 1.0 / x, round),
                    "rcp {h:#06x} {round:?}"
                );
                let neg = h | 0x8000;
                assert_eq!(
                    special_f16(SpecialFn::Rcp, neg, &mode),
                    oracle(&lad, -1.0 / x, round),
                    "rcp {neg:#06x} {round:?}"
                );
            }
        }
    }
}

#[test]
fn f16_to_int_exhaustive_all_directions() {
    use wavejit_ir::semantics::convert::ftoi;
    use wavejit_ir::{FloatFormat, Type};
    for h in 0..=u16::MAX {
        let x = f16::from_bits(h).to_f64();
        for round in Round::ALL {
            let mode = FloatMode {
                round,
                flags: true,
                ..FloatMode::IEEE
            };
            let r = match round {
                Round::NearestEven => x.round_ties_even(),
                Round::NearestAway => x.round(),
                Round::TowardZero => x.trunc(),
                Round::Up => x.ceil(),
                Round::Down => x.floor(),
            };
            for (ty, signed, lo, hi) in [
                (Type::I8, true, -128.0, 127.0),
                (Type::I16, false, 0.0, 65535.0),
                (Type::I32, true, -2147483648.0, 2147483647.0),
            ] {
                let (v, flags) = if x.is_nan() {
                    (0.0, 0x10)
                } else if r < lo {
                    (lo, 0x10)
                } else if r > hi {
                    (hi, 0x10)
                } else {
                    (r, if r == x { 0 } else { NX })
                };
                let want = ((v as i64) as u64) & ty.mask();
                assert_eq!(
                    ftoi(FloatFormat::F16, h.into(), ty, signed, false, &mode),
                    (want, flags),
                    "{h:#06x} {ty} {round:?}"
                );
            }
        }
    }
}
