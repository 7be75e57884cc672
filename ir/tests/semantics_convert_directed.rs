//! Narrowing conversions in all five directions, with saturation and flags,
//! against a brute-force oracle: the exact source value placed on the ladder of
//! all target values (decoded by the oracle crates where they exist), plus
//! float -> int and f64 -> f32 against host-derived oracles.

#[path = "support/rng.rs"]
mod rng;

use half::{bf16, f16};
use rng::Rng;
use wavejit_ir::semantics::convert::{fcvt, ftoi};
use wavejit_ir::{FloatFormat, FloatMode, Round, Type};

const NV: u32 = 0x10;
const OF: u32 = 0x04;
const UF: u32 = 0x02;
const NX: u32 = 0x01;

/// The non-negative finite values of a format by code (code i = vals[i]), and
/// what an unbounded exponent would put after the largest one.
struct Ladder {
    vals: Vec<f64>,
    past_max: f64,
    sign_bit: u64,
    inf: Option<u64>,
    min_normal: f64,
    precision: i32,
}

impl Ladder {
    fn new(fmt: FloatFormat) -> Ladder {
        let e2m1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        let (vals, past_max, sign_bit, inf, min_normal, precision): (
            Vec<f64>,
            f64,
            u64,
            Option<u64>,
            f64,
            i32,
        ) = match fmt {
            FloatFormat::F16 => (
                (0..0x7c00u16).map(|h| f16::from_bits(h).to_f64()).collect(),
                65536.0,
                0x8000,
                Some(0x7c00),
                2f64.powi(-14),
                11,
            ),
            FloatFormat::Bf16 => (
                (0..0x7f80u16)
                    .map(|h| bf16::from_bits(h).to_f64())
                    .collect(),
                2f64.powi(128),
                0x8000,
                Some(0x7f80),
                2f64.powi(-126),
                8,
            ),
            FloatFormat::E4m3 => (
                (0..0x7fu8)
                    .map(|b| f64::from(float8::F8E4M3::from_bits(b).to_f32()))
                    .collect(),
                480.0,
                0x80,
                None,
                2f64.powi(-6),
                4,
            ),
            FloatFormat::E5m2 => (
                (0..0x7cu8)
                    .map(|b| f64::from(float8::F8E5M2::from_bits(b).to_f32()))
                    .collect(),
                65536.0,
                0x80,
                Some(0x7c),
                2f64.powi(-14),
                3,
            ),
            FloatFormat::E2m1 => (e2m1.to_vec(), 8.0, 0x8, None, 1.0, 2),
            _ => unreachable!("no ladder for {fmt}"),
        };
        Ladder {
            vals,
            past_max,
            sign_bit,
            inf,
            min_normal,
            precision,
        }
    }

    /// Whether rounding toward `hi` in direction `round` from `m` (between lo and hi).
    fn up(round: Round, neg: bool, m: f64, lo: f64, hi: f64, hi_even: bool) -> bool {
        let (dl, dh) = (m - lo, hi - m);
        match round {
            Round::NearestEven => dh < dl || (dh == dl && hi_even),
            Round::NearestAway => dh <= dl,
            Round::TowardZero => false,
            Round::Up => !neg,
            Round::Down => neg,
        }
    }

    fn round(&self, v: f64, round: Round, sat: bool) -> (u64, u32) {
        let neg = v < 0.0;
        let m = v.abs();
        let sign = if neg { self.sign_bit } else { 0 };
        let top = self.vals.len() - 1;
        let lo = (self.vals.partition_point(|&x| x <= m) - 1).min(top);
        let exact = self.vals[lo] == m;
        let hi_val = if lo == top {
            self.past_max
        } else {
            self.vals[lo + 1]
        };
        let to_hi = !exact
            && m < self.past_max
            && Self::up(round, neg, m, self.vals[lo], hi_val, (lo + 1) % 2 == 0);
        let overflow = m >= self.past_max || (lo == top && to_hi);
        let mut flags = if exact { 0 } else { NX };
        if overflow {
            let toward = match round {
                Round::NearestEven | Round::NearestAway => true,
                Round::TowardZero => false,
                Round::Up => !neg,
                Round::Down => neg,
            };
            let code = match self.inf {
                Some(inf) if !sat && toward => inf,
                _ => top as u64,
            };
            return (sign | code, OF | NX);
        }
        if !exact && m < self.min_normal {
            let below = self.min_normal * (1.0 - 2f64.powi(-self.precision));
            let tiny = m <= below || !Self::up(round, neg, m, below, self.min_normal, true);
            if tiny {
                flags |= UF;
            }
        }
        let idx = if to_hi { lo + 1 } else { lo };
        (sign | idx as u64, flags)
    }
}

/// f64 probes: every target value, midpoints, their f64 neighbours, and random
/// values spread over the format's range and beyond.
fn probes(l: &Ladder, rng: &mut Rng) -> Vec<f64> {
    let mut v = Vec::new();
    let mut all = l.vals.clone();
    all.push(l.past_max);
    for w in all.windows(2) {
        let mid = (w[0] + w[1]) / 2.0;
        v.extend([w[0], w[0].next_up(), mid, mid.next_up(), mid.next_down()]);
    }
    v.extend([l.past_max * 4.0, 1e300, 5e-324, l.min_normal * 0.25]);
    let (lo_e, hi_e) = (
        l.min_normal.log2() as i64 - l.precision as i64 - 3,
        l.past_max.log2() as i64 + 2,
    );
    for _ in 0..20_000 {
        let e = lo_e + (rng.next() % (hi_e - lo_e) as u64) as i64;
        let frac = 1.0 + (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        v.push(frac * 2f64.powi(e as i32));
    }
    let neg: Vec<f64> = v.iter().map(|x| -x).collect();
    v.extend(neg);
    v.retain(|x| *x != 0.0);
    v
}

#[test]
fn f64_and_f32_to_narrow_formats_all_directions() {
    let mut rng = Rng(0xabcd_ef01_2345_6789);
    let mut checked = 0usize;
    for to in [
        FloatFormat::F16,
        FloatFormat::Bf16,
        FloatFormat::E4m3,
        FloatFormat::E5m2,
        FloatFormat::E2m1,
    ] {
        let l = Ladder::new(to);
        for v in probes(&l, &mut rng) {
            for round in Round::ALL {
                for sat in [false, true] {
                    let mode = FloatMode {
                        round,
                        sat,
                        flags: true,
                        ..FloatMode::IEEE
                    };
                    let want = l.round(v, round, sat);
                    assert_eq!(
                        fcvt(FloatFormat::F64, to, v.to_bits(), &mode),
                        want,
                        "{v:e} -> {to} {round:?} sat={sat}"
                    );
                    let x = v as f32;
                    if f64::from(x) == v {
                        assert_eq!(
                            fcvt(FloatFormat::F32, to, x.to_bits().into(), &mode),
                            want,
                            "{v:e} f32 -> {to}"
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1_000_000, "{checked}");
}

#[test]
fn f64_to_f32_all_directions() {
    let mut rng = Rng(0x1111_2222_3333_4444);
    for _ in 0..100_000 {
        let r = rng.next();
        let e = 1023 - 160 + (r >> 52) % 300; // across f32 subnormals to overflow
        let v = f64::from_bits((r & 0x800f_ffff_ffff_ffff) | e << 52);
        let near = v as f32;
        for round in Round::ALL {
            let mode = FloatMode {
                round,
                flags: true,
                ..FloatMode::IEEE
            };
            let (got, flags) = fcvt(FloatFormat::F64, FloatFormat::F32, v.to_bits(), &mode);
            let got = f32::from_bits(got as u32);
            let exact = f64::from(got) == v;
            assert_eq!(flags & NX != 0, !exact, "{v:e} {round:?}");
            if exact {
                continue;
            }
            // got must be one of the two neighbours of v, on the side the direction says.
            let (below, above) = if f64::from(near) < v {
                (near, near.next_up())
            } else {
                (near.next_down(), near)
            };
            let want = match round {
                Round::NearestEven => near,
                Round::NearestAway => {
                    let (db, da) = (v - f64::from(below), f64::from(above) - v);
                    if db == da {
                        if v > 0.0 { above } else { below }
                    } else {
                        near
                    }
                }
                Round::TowardZero => {
                    if v > 0.0 {
                        below
                    } else {
                        above
                    }
                }
                Round::Up => above,
                Round::Down => below,
            };
            let want = if want.is_infinite() && round == Round::TowardZero {
                f32::MAX.copysign(v as f32)
            } else {
                want
            };
            assert_eq!(got.to_bits(), want.to_bits(), "{v:e} {round:?}");
        }
    }
}

#[test]
fn float_to_int_all_directions_random() {
    let mut rng = Rng(0x9999_8888_7777_6666);
    let targets = [
        (Type::I8, true),
        (Type::I8, false),
        (Type::I16, true),
        (Type::I32, true),
        (Type::I32, false),
        (Type::I64, true),
        (Type::I64, false),
    ];
    for _ in 0..30_000 {
        let r = rng.next();
        let e = 1023 - 4 + (r >> 52) % 70;
        let v = f64::from_bits((r & 0x800f_ffff_ffff_ffff) | e << 52);
        for round in Round::ALL {
            let rounded = match round {
                Round::NearestEven => v.round_ties_even(),
                Round::NearestAway => v.round(),
                Round::TowardZero => v.trunc(),
                Round::Up => v.ceil(),
                Round::Down => v.floor(),
            };
            let mode = FloatMode {
                round,
                flags: true,
                ..FloatMode::IEEE
            };
            for (ty, signed) in targets {
                let n = ty.bits();
                let (lo, hi) = if signed {
                    (-(1i128 << (n - 1)), (1i128 << (n - 1)) - 1)
                } else {
                    (0, (1i128 << n) - 1)
                };
                let ri = rounded as i128; // exact: |rounded| < 2^70
                let (want, flags) = if ri < lo {
                    (lo, NV)
                } else if ri > hi {
                    (hi, NV)
                } else {
                    (ri, if rounded == v { 0 } else { NX })
                };
                let want = (want as u64) & ty.mask();
                assert_eq!(
                    ftoi(FloatFormat::F64, v.to_bits(), ty, signed, true, &mode),
                    (want, flags),
                    "{v} {ty} {signed} {round:?}"
                );
            }
        }
    }
}
