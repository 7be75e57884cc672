//! Cross-lane operations on every engine, with partial masks and divergence so
//! that the co-active set matters.
//!
//! Standard setup (8 lanes, one wave of 8): even lanes and odd lanes take
//! different blocks, each executing its own copy of the operation, so the
//! co-active sets are {0,2,4,6} and {1,3,5,7}. The mask is false on lanes 0 and 5,
//! so the participants are {2,4,6} and {1,3,7}. `v = lid * 10 + 1`.

mod common;

use common::*;
use wavejit_ir::{
    Builder, Builtin, CastOp, IBinOp, InstKind, IntCC, ReduceOp, ShuffleKind, Type, Value,
};

/// Values the operation builders can use (all defined in the entry block).
struct Ins {
    lid: Value,
    mask: Value,
    v: Value,
}

/// The result as an i64 (ints zero-extended, floats by their bits).
fn widen(b: &mut Builder, r: Value) -> Value {
    let ty = b.kernel.value_type(r);
    let r = if ty.is_float() {
        b.ins(
            InstKind::Cast {
                op: CastOp::Bitcast,
                to: ty.as_int(),
            },
            &[r],
        )
    } else {
        r
    };
    if b.kernel.value_type(r) == Type::I64 {
        r
    } else {
        zext64(b, r)
    }
}

/// Runs `op` in the standard even/odd setup over `lanes` lanes in waves of
/// `wave`; returns per engine the widened result of each lane. `v_of` gives the
/// per-lane operand (built in the entry block from the local index).
fn run_split(
    lanes: u32,
    wave: u32,
    v_of: &dyn Fn(&mut Builder, Value) -> Value,
    op: &dyn Fn(&mut Builder, &Ins) -> Value,
) -> Vec<(String, Vec<u64>)> {
    let mut kb = Kb::new("wave_split");
    let entry = kb.entry();
    let (even, odd, merge) = (kb.block(), kb.block(), kb.block());
    let r = kb.param(merge, Type::I64);
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let zero = c32(&mut b, 0);
        let five = c32(&mut b, 5);
        let not0 = icmp(&mut b, IntCC::Ne, lid, zero);
        let not5 = icmp(&mut b, IntCC::Ne, lid, five);
        let mask = bin(&mut b, IBinOp::And, not0, not5);
        let v = v_of(&mut b, lid);
        let one = c32(&mut b, 1);
        let bit = bin(&mut b, IBinOp::And, lid, one);
        let is_odd = icmp(&mut b, IntCC::Ne, bit, zero);
        b.branch(is_odd, call(odd, &[]), call(even, &[]));
        let ins = Ins { lid, mask, v };
        for arm in [even, odd] {
            b.switch_to(arm);
            let x = op(&mut b, &ins);
            let w = widen(&mut b, x);
            b.jump(merge, &[w]);
        }
        b.switch_to(merge);
        let gid = global_id(&mut b);
        store_out(&mut b, 0, gid, r);
        b.exit();
    }
    let k = kb.finish();
    engines()
        .iter()
        .map(|e| {
            let run = run_with(
                e.as_ref(),
                &k,
                dispatch_1d(1, lanes, wave),
                &[u64_bytes(&vec![0xdead; lanes as usize])],
                &[],
            );
            run.ok(e.name());
            (e.name().to_string(), run.u64s(0))
        })
        .collect()
}

/// `lid * 10 + 1` as i32.
fn v_default(b: &mut Builder, lid: Value) -> Value {
    let ten = c32(b, 10);
    let one = c32(b, 1);
    let x = bin(b, IBinOp::Mul, lid, ten);
    bin(b, IBinOp::Add, x, one)
}

fn check(op: &dyn Fn(&mut Builder, &Ins) -> Value, expect: [u64; 8], what: &str) {
    check_with(&v_default, op, expect, what);
}

fn check_with(
    v_of: &dyn Fn(&mut Builder, Value) -> Value,
    op: &dyn Fn(&mut Builder, &Ins) -> Value,
    expect: [u64; 8],
    what: &str,
) {
    for (engine, out) in run_split(8, 8, v_of, op) {
        assert_eq!(out, expect.to_vec(), "engine {engine}: {what}");
    }
}

/// `lid == a || lid == b` as the i1 condition of votes and ballots.
fn lid_is(b: &mut Builder, lid: Value, which: &[u32]) -> Value {
    let mut acc = c1(b, false);
    for &w in which {
        let k = c32(b, w);
        let eq = icmp(b, IntCC::Eq, lid, k);
        acc = bin(b, IBinOp::Or, acc, eq);
    }
    acc
}

#[test]
fn ballot_counts_participating_lanes_of_the_co_active_set() {
    // cond = lid != 4: even participants {2,6}, odd participants {1,3,7}.
    check(
        &|b, i| {
            let four = c32(b, 4);
            let cond = icmp(b, IntCC::Ne, i.lid, four);
            b.ins(InstKind::Ballot, &[i.mask, cond])
        },
        [0x44, 0x8a, 0x44, 0x8a, 0x44, 0x8a, 0x44, 0x8a],
        "ballot(lid != 4)",
    );
}

#[test]
fn votes_ignore_masked_and_inactive_lanes() {
    // Only masked-off lanes 0 and 5 hold the condition: no vote sees it.
    check(
        &|b, i| {
            let cond = lid_is(b, i.lid, &[0, 5]);
            b.ins(InstKind::VoteAny, &[i.mask, cond])
        },
        [0; 8],
        "any(lid in {0,5})",
    );
    // Lane 4 participates in the even set only.
    check(
        &|b, i| {
            let cond = lid_is(b, i.lid, &[4]);
            b.ins(InstKind::VoteAny, &[i.mask, cond])
        },
        [1, 0, 1, 0, 1, 0, 1, 0],
        "any(lid == 4)",
    );
    // Fails only on masked-off lanes: all true.
    check(
        &|b, i| {
            let bad = lid_is(b, i.lid, &[0, 5]);
            let t = c1(b, true);
            let cond = bin(b, IBinOp::Xor, bad, t);
            b.ins(InstKind::VoteAll, &[i.mask, cond])
        },
        [1; 8],
        "all(lid not in {0,5})",
    );
    // lid < 7 fails for participant 7 (odd set).
    check(
        &|b, i| {
            let seven = c32(b, 7);
            let cond = icmp(b, IntCC::Ult, i.lid, seven);
            b.ins(InstKind::VoteAll, &[i.mask, cond])
        },
        [1, 0, 1, 0, 1, 0, 1, 0],
        "all(lid < 7)",
    );
    // No participant at all: all() is true, any() false.
    check(
        &|b, _| {
            let f = c1(b, false);
            let t = c1(b, true);
            let all = b.ins(InstKind::VoteAll, &[f, f]);
            let any = b.ins(InstKind::VoteAny, &[f, t]);
            let all32 = b.ins(
                InstKind::Cast {
                    op: CastOp::Zext,
                    to: Type::I32,
                },
                &[all],
            );
            let any32 = b.ins(
                InstKind::Cast {
                    op: CastOp::Zext,
                    to: Type::I32,
                },
                &[any],
            );
            let two = c32(b, 2);
            let hi = bin(b, IBinOp::Mul, any32, two);
            bin(b, IBinOp::Or, hi, all32)
        },
        [1; 8],
        "empty votes",
    );
}

#[test]
fn first_active_and_elect_pick_the_lowest_participant() {
    check(
        &|b, i| b.ins(InstKind::FirstActive, &[i.mask]),
        [2, 1, 2, 1, 2, 1, 2, 1],
        "first_active",
    );
    check(
        &|b, i| b.ins(InstKind::Elect, &[i.mask]),
        [0, 1, 1, 0, 0, 0, 0, 0],
        "elect",
    );
    check(
        &|b, _| {
            let f = c1(b, false);
            b.ins(InstKind::FirstActive, &[f])
        },
        [0xffff_ffff; 8],
        "first_active of nobody",
    );
}

#[test]
fn lane_reads_and_shuffles() {
    let read = |lane: u32| {
        move |b: &mut Builder, i: &Ins| {
            let l = c32(b, lane);
            b.ins(InstKind::ReadLane, &[i.mask, i.v, l])
        }
    };
    // Lane 6 participates in the even set; odd lanes keep their own value.
    check(&read(6), [61, 11, 61, 31, 61, 51, 61, 71], "read_lane(6)");
    // Lane 0 is masked off: everyone keeps its own value.
    check(&read(0), [1, 11, 21, 31, 41, 51, 61, 71], "read_lane(0)");
    // Out of the wave.
    check(&read(99), [1, 11, 21, 31, 41, 51, 61, 71], "read_lane(99)");
    check(
        &|b, i| b.ins(InstKind::ReadFirst, &[i.mask, i.v]),
        [21, 11, 21, 11, 21, 11, 21, 11],
        "read_first",
    );
    let shuffle = |kind: ShuffleKind, n: u32| {
        move |b: &mut Builder, i: &Ins| {
            let k = c32(b, n);
            b.ins(InstKind::Shuffle(kind), &[i.mask, i.v, k])
        }
    };
    check(
        &shuffle(ShuffleKind::Xor, 2),
        [21, 31, 21, 11, 61, 71, 41, 71],
        "shuffle xor 2",
    );
    check(
        &shuffle(ShuffleKind::Up, 2),
        [1, 11, 21, 11, 21, 31, 41, 71],
        "shuffle up 2",
    );
    check(
        &shuffle(ShuffleKind::Down, 2),
        [21, 31, 41, 31, 61, 71, 61, 71],
        "shuffle down 2",
    );
    // Per-lane index (lid + 2) % 8.
    check(
        &|b, i| {
            let two = c32(b, 2);
            let eight = c32(b, 8);
            let s = bin(b, IBinOp::Add, i.lid, two);
            let idx = bin(b, IBinOp::RemU, s, eight);
            b.ins(InstKind::Shuffle(ShuffleKind::Index), &[i.mask, i.v, idx])
        },
        [21, 31, 41, 31, 61, 71, 61, 11],
        "shuffle index (lid+2)%8",
    );
    // A huge Up distance must not wrap around.
    check(
        &shuffle(ShuffleKind::Up, 0xffff_fffe),
        [1, 11, 21, 31, 41, 51, 61, 71],
        "shuffle up -2 (unsigned)",
    );
}

fn reduce(op: ReduceOp) -> impl Fn(&mut Builder, &Ins) -> Value {
    move |b, i| b.ins(InstKind::Reduce(op), &[i.mask, i.v])
}

fn scan(op: ReduceOp, inclusive: bool) -> impl Fn(&mut Builder, &Ins) -> Value {
    move |b, i| b.ins(InstKind::Scan { op, inclusive }, &[i.mask, i.v])
}

#[test]
fn integer_reductions() {
    let split = |even: u64, odd: u64| [even, odd, even, odd, even, odd, even, odd];
    check(&reduce(ReduceOp::Add), split(123, 113), "add");
    check(&reduce(ReduceOp::MaxU), split(61, 71), "max_u");
    check(&reduce(ReduceOp::MinU), split(21, 11), "min_u");
    check(
        &reduce(ReduceOp::And),
        split(21 & 41 & 61, 11 & 31 & 71),
        "and",
    );
    check(
        &reduce(ReduceOp::Or),
        split(21 | 41 | 61, 11 | 31 | 71),
        "or",
    );
    check(
        &reduce(ReduceOp::Xor),
        split(21 ^ 41 ^ 61, 11 ^ 31 ^ 71),
        "xor",
    );
    // Mul over lid + 1: even 3*5*7, odd 2*4*8.
    let plus1 = |b: &mut Builder, lid: Value| {
        let one = c32(b, 1);
        bin(b, IBinOp::Add, lid, one)
    };
    check_with(&plus1, &reduce(ReduceOp::Mul), split(105, 64), "mul");
    // Signed ops over lid - 4: even {-2, 0, 2}, odd {-3, -1, 3}.
    let minus4 = |b: &mut Builder, lid: Value| {
        let four = c32(b, 4);
        bin(b, IBinOp::Sub, lid, four)
    };
    let neg = |x: i32| u64::from(x as u32);
    check_with(
        &minus4,
        &reduce(ReduceOp::MinS),
        split(neg(-2), neg(-3)),
        "min_s",
    );
    check_with(&minus4, &reduce(ReduceOp::MaxS), split(2, 3), "max_s");
    check_with(
        &minus4,
        &reduce(ReduceOp::MaxU),
        split(neg(-2), neg(-1)),
        "max_u of negatives",
    );
    // Nobody participates: identities of i32.
    let none = |op: ReduceOp| {
        move |b: &mut Builder, i: &Ins| {
            let f = c1(b, false);
            b.ins(InstKind::Reduce(op), &[f, i.v])
        }
    };
    check(&none(ReduceOp::MinS), [0x7fff_ffff; 8], "min_s identity");
    check(&none(ReduceOp::MaxS), [0x8000_0000; 8], "max_s identity");
    check(&none(ReduceOp::MinU), [0xffff_ffff; 8], "min_u identity");
    check(&none(ReduceOp::Mul), [1; 8], "mul identity");
    check(&none(ReduceOp::Add), [0; 8], "add identity");
}

#[test]
fn scans_give_masked_lanes_the_prefix_below_them() {
    check(
        &scan(ReduceOp::Add, true),
        [0, 11, 21, 42, 62, 42, 123, 113],
        "inclusive add",
    );
    check(
        &scan(ReduceOp::Add, false),
        [0, 0, 0, 11, 21, 42, 62, 42],
        "exclusive add",
    );
    check(
        &scan(ReduceOp::MaxU, true),
        [0, 11, 21, 31, 41, 31, 61, 71],
        "inclusive max_u",
    );
    check(
        &scan(ReduceOp::MinU, false),
        [0xffff_ffff, 0xffff_ffff, 0xffff_ffff, 11, 21, 11, 21, 11],
        "exclusive min_u",
    );
}

#[test]
fn float_reductions_fold_in_lane_order() {
    // Values chosen so that the summation order changes the rounded result.
    let vals: [f32; 8] = [9.0, 1.0e8, -1.0e8, 3.5, 0.1, 7.0, 1.0e-3, -2.5e7];
    let as_f32 = move |b: &mut Builder, lid: Value| {
        // Select the constant for this lane with a chain of selects.
        let mut v = b.f32const(vals[0]);
        for (n, &x) in vals.iter().enumerate().skip(1) {
            let k = c32(b, n as u32);
            let is = icmp(b, IntCC::Eq, lid, k);
            let c = b.f32const(x);
            v = b.ins(InstKind::Select, &[is, c, v]);
        }
        v
    };
    let bits = |x: f32| u64::from(x.to_bits());
    let even_sum = (vals[2] + vals[4]) + vals[6];
    let odd_sum = (vals[1] + vals[3]) + vals[7];
    let split = |e: u64, o: u64| [e, o, e, o, e, o, e, o];
    check_with(
        &as_f32,
        &reduce(ReduceOp::FAdd),
        split(bits(even_sum), bits(odd_sum)),
        "fadd",
    );
    check_with(
        &as_f32,
        &reduce(ReduceOp::FMin),
        split(bits(-1.0e8), bits(-2.5e7)),
        "fmin",
    );
    check_with(
        &as_f32,
        &reduce(ReduceOp::FMax),
        split(bits(0.1), bits(1.0e8)),
        "fmax",
    );
    // Inclusive scan: lane 4 holds -1e8 + 0.1 rounded in f32.
    let e1 = vals[2] + vals[4];
    let o1 = vals[1] + vals[3];
    check_with(
        &as_f32,
        &scan(ReduceOp::FAdd, true),
        [
            0,
            bits(vals[1]),
            bits(vals[2]),
            bits(o1),
            bits(e1),
            bits(o1),
            bits(even_sum),
            bits(odd_sum),
        ],
        "fadd inclusive scan",
    );
}

#[test]
fn float_min_max_reductions_order_zeros_and_skip_nan() {
    // Even participants {2,4,6} hold -0, NaN, +0; odd {1,3,7} hold +0, -0, NaN.
    let vals: [u32; 8] = [
        0x3f80_0000,
        0x0000_0000,
        0x8000_0000,
        0x8000_0000,
        0x7fc0_0001,
        0xbf80_0000,
        0x0000_0000,
        0xffc0_0002,
    ];
    let as_f32 = move |b: &mut Builder, lid: Value| {
        let mut v = c32(b, vals[0]);
        for (n, &x) in vals.iter().enumerate().skip(1) {
            let k = c32(b, n as u32);
            let is = icmp(b, IntCC::Eq, lid, k);
            let c = c32(b, x);
            v = b.ins(InstKind::Select, &[is, c, v]);
        }
        b.ins(
            InstKind::Cast {
                op: CastOp::Bitcast,
                to: Type::F32,
            },
            &[v],
        )
    };
    let split = |e: u64, o: u64| [e, o, e, o, e, o, e, o];
    check_with(
        &as_f32,
        &reduce(ReduceOp::FMin),
        split(0x8000_0000, 0x8000_0000),
        "fmin(-0, NaN, +0)",
    );
    check_with(
        &as_f32,
        &reduce(ReduceOp::FMax),
        split(0, 0),
        "fmax(-0, NaN, +0)",
    );
}

/// A ballot inside a loop that lane `l` runs `l` times: at iteration `i` the
/// co-active set is exactly the lanes with `l > i`, because lanes that left the
/// loop wait at the exit block (a higher pc). out[l] = sum of its ballots.
#[test]
fn ballot_in_a_loop_sees_only_the_lanes_still_looping() {
    let mut kb = Kb::new("loop_ballot");
    let entry = kb.entry();
    let (head, body, done) = (kb.block(), kb.block(), kb.block());
    let i = kb.param(head, Type::I32);
    let acc = kb.param(head, Type::I64);
    {
        let mut b = kb.at(entry);
        let zero = c32(&mut b, 0);
        let zero64 = c64(&mut b, 0);
        b.jump(head, &[zero, zero64]);
        b.switch_to(head);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let go = icmp(&mut b, IntCC::Ult, i, lid);
        b.branch(go, call(body, &[]), call(done, &[]));
        b.switch_to(body);
        let t = c1(&mut b, true);
        let ballot = b.ins(InstKind::Ballot, &[t, t]);
        let acc2 = bin(&mut b, IBinOp::Add, acc, ballot);
        let one = c32(&mut b, 1);
        let i2 = bin(&mut b, IBinOp::Add, i, one);
        b.jump(head, &[i2, acc2]);
        b.switch_to(done);
        store_out(&mut b, 0, lid, acc);
        b.exit();
    }
    let k = kb.finish();
    let n = 12u32;
    // Lanes 8..12 form a second wave; ballot bits are indices in the wave.
    let expect: Vec<u64> = (0..n)
        .map(|l| {
            let base = l / 8 * 8;
            let end = (base + 8).min(n);
            (0..l)
                .map(|it| {
                    (base..end)
                        .filter(|&m| m > it)
                        .map(|m| 1u64 << (m - base))
                        .sum::<u64>()
                })
                .sum()
        })
        .collect();
    assert_eq!(expect[3], 0xfe + 0xfc + 0xf8);
    for e in engines() {
        let run = run_with(
            e.as_ref(),
            &k,
            dispatch_1d(1, n, 8),
            &[u64_bytes(&vec![0; n as usize])],
            &[],
        );
        run.ok(e.name());
        assert_eq!(run.u64s(0), expect, "engine {}", e.name());
    }
}

/// Waves are independent: a reduction sees only its own wave, the last wave may
/// be short, and a 64-lane wave fills every ballot bit.
#[test]
fn reductions_stay_inside_their_wave() {
    for (lanes, wave) in [(16u32, 8u32), (12, 8), (64, 64), (6, 4)] {
        let mut kb = Kb::new("per_wave");
        let entry = kb.entry();
        {
            let mut b = kb.at(entry);
            let lid = builtin(&mut b, Builtin::LocalIndex);
            let t = c1(&mut b, true);
            let sum = b.ins(InstKind::Reduce(ReduceOp::Add), &[t, lid]);
            let ballot = b.ins(InstKind::Ballot, &[t, t]);
            let one = c32(&mut b, 1);
            let down = b.ins(InstKind::Shuffle(ShuffleKind::Down), &[t, lid, one]);
            let three = c32(&mut b, 3);
            let slot = bin(&mut b, IBinOp::Mul, lid, three);
            let s64 = zext64(&mut b, sum);
            store_out(&mut b, 0, slot, s64);
            let slot1 = bin(&mut b, IBinOp::Add, slot, one);
            store_out(&mut b, 0, slot1, ballot);
            let slot2 = bin(&mut b, IBinOp::Add, slot1, one);
            let d64 = zext64(&mut b, down);
            store_out(&mut b, 0, slot2, d64);
            b.exit();
        }
        let k = kb.finish();
        let mut expect = Vec::new();
        for l in 0..lanes {
            let base = l / wave * wave;
            let end = (base + wave).min(lanes);
            let sum: u64 = (base..end).map(u64::from).sum();
            let count = end - base;
            let ballot = if count == 64 {
                u64::MAX
            } else {
                (1u64 << count) - 1
            };
            let down = if l + 1 < end { l + 1 } else { l };
            expect.extend_from_slice(&[sum, ballot, u64::from(down)]);
        }
        for e in engines() {
            let run = run_with(
                e.as_ref(),
                &k,
                dispatch_1d(2, lanes, wave),
                &[u64_bytes(&vec![0; 3 * lanes as usize])],
                &[],
            );
            run.ok(e.name());
            assert_eq!(
                run.u64s(0),
                expect,
                "engine {}: {lanes} lanes, waves of {wave}",
                e.name()
            );
        }
    }
}

/// Reductions and scans over i8, i16 and i64 values: wrap-around, signedness and
/// identities at the value's own width.
#[test]
fn reductions_at_every_integer_width() {
    let sext = |v: u64, bits: u32| ((v << (64 - bits)) as i64) >> (64 - bits);
    for ty in [Type::I8, Type::I16, Type::I64] {
        let bits = ty.bits();
        let mask = ty.mask();
        // Lane values: x = lid * 37 + 100 (i32), narrowed or scrambled to ty.
        let val = |l: u64| -> u64 {
            let x = l * 37 + 100;
            if ty == Type::I64 {
                x.wrapping_mul(0x0123_4567_89ab_cdef) ^ (l << 63)
            } else {
                x & mask
            }
        };
        let v_of = move |b: &mut Builder, lid: Value| -> Value {
            let k37 = c32(b, 37);
            let k100 = c32(b, 100);
            let m = bin(b, IBinOp::Mul, lid, k37);
            let x = bin(b, IBinOp::Add, m, k100);
            if ty == Type::I64 {
                let w = zext64(b, x);
                let k = c64(b, 0x0123_4567_89ab_cdef);
                let p = bin(b, IBinOp::Mul, w, k);
                let l64 = zext64(b, lid);
                let s = c64(b, 63);
                let top = bin(b, IBinOp::Shl, l64, s);
                bin(b, IBinOp::Xor, p, top)
            } else {
                b.ins(
                    InstKind::Cast {
                        op: CastOp::Trunc,
                        to: ty,
                    },
                    &[x],
                )
            }
        };
        let even = [2u64, 4, 6].map(val);
        let odd = [1u64, 3, 7].map(val);
        let fold = |xs: &[u64], op: ReduceOp| -> u64 {
            let r = xs.iter().copied().reduce(|a, x| match op {
                ReduceOp::Add => a.wrapping_add(x),
                ReduceOp::Mul => a.wrapping_mul(x),
                ReduceOp::MinU => a.min(x),
                ReduceOp::MaxU => a.max(x),
                ReduceOp::MinS => {
                    if sext(a, bits) <= sext(x, bits) {
                        a
                    } else {
                        x
                    }
                }
                ReduceOp::MaxS => {
                    if sext(a, bits) >= sext(x, bits) {
                        a
                    } else {
                        x
                    }
                }
                _ => a ^ x,
            });
            r.expect("three participants") & mask
        };
        for op in [
            ReduceOp::Add,
            ReduceOp::Mul,
            ReduceOp::MinU,
            ReduceOp::MaxU,
            ReduceOp::MinS,
            ReduceOp::MaxS,
            ReduceOp::Xor,
        ] {
            let (e, o) = (fold(&even, op), fold(&odd, op));
            check_with(
                &v_of,
                &reduce(op),
                [e, o, e, o, e, o, e, o],
                &format!("{op:?} over {ty}"),
            );
        }
        // Exclusive add scan: masked lanes 0 and 5 get the prefix below them.
        let add = |xs: &[u64]| xs.iter().fold(0u64, |a, &x| a.wrapping_add(x)) & mask;
        let expect = [
            0,
            0,
            0,
            add(&odd[..1]),
            add(&even[..1]),
            add(&odd[..2]),
            add(&even[..2]),
            add(&odd[..2]),
        ];
        check_with(
            &v_of,
            &scan(ReduceOp::Add, false),
            expect,
            &format!("exclusive add over {ty}"),
        );
        // Identities at this width when nobody participates.
        let none = |op: ReduceOp| {
            move |b: &mut Builder, i: &Ins| {
                let f = c1(b, false);
                b.ins(InstKind::Reduce(op), &[f, i.v])
            }
        };
        let smax = mask >> 1;
        check_with(
            &v_of,
            &none(ReduceOp::MinS),
            [smax; 8],
            &format!("min_s id {ty}"),
        );
        check_with(
            &v_of,
            &none(ReduceOp::MaxS),
            [smax + 1; 8],
            &format!("max_s id {ty}"),
        );
        check_with(
            &v_of,
            &none(ReduceOp::And),
            [mask; 8],
            &format!("and id {ty}"),
        );
        // Shuffles move whole values of this width (xor 2 stays in the set).
        let vals: Vec<u64> = (0..8).map(val).collect();
        check_with(
            &v_of,
            &|b, i| {
                let two = c32(b, 2);
                b.ins(InstKind::Shuffle(ShuffleKind::Xor), &[i.mask, i.v, two])
            },
            [
                vals[2], vals[3], vals[2], vals[1], vals[6], vals[7], vals[4], vals[7],
            ],
            &format!("shuffle xor 2 over {ty}"),
        );
    }
}
