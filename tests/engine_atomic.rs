//! Atomic read-modify-write on every engine, in global and shared memory.
//!
//! Kernel shape (`atomic_kernel`): lane `g` (global id) reads its operands
//! `a[g]`, `b[g]` from buffers 1 and 2, applies the atomic to the counter and
//! stores the returned old value to `olds[g]` (buffer 3). Global: one counter,
//! `ctr[0]` (buffer 0). Shared: every lane copies `ctr[wg]` into shared word 0,
//! barrier, atomic, barrier, every lane copies shared word 0 back to `ctr[wg]`.
//!
//! Final values are asserted exactly everywhere. Returned old values are exact
//! where the schedule fixes them (one wave: lanes in increasing order), and a
//! permutation check where workgroups or waves may interleave.

mod common;

use common::*;
use wavejit_ir::{AddrSpace, AtomicOp, Builtin, IBinOp, InstKind, Kernel, Type};

fn atomic_kernel(space: AddrSpace, op: AtomicOp, ty: Type) -> Kernel {
    let mut kb = Kb::new("atomic");
    kb.kernel.shared_size = 8;
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let gid = global_id(&mut b);
        let a = load_in(&mut b, 1, gid, ty);
        let second = load_in(&mut b, 2, gid, ty);
        let mut args = match space {
            AddrSpace::Global => vec![buffer(&mut b, 0)],
            _ => {
                let wg = builtin(&mut b, Builtin::WorkgroupId(0));
                let init = load_in(&mut b, 0, wg, ty);
                let zero = c32(&mut b, 0);
                store(&mut b, AddrSpace::Shared, zero, init);
                b.ins(InstKind::Barrier, &[]);
                vec![zero]
            }
        };
        args.push(a);
        if op == AtomicOp::CmpXchg {
            args.push(second);
        }
        let old = b.ins(InstKind::Atomic { space, op, ty }, &args);
        store_out(&mut b, 3, gid, old);
        if space == AddrSpace::Shared {
            b.ins(InstKind::Barrier, &[]);
            let zero = c32(&mut b, 0);
            let fin = load(&mut b, AddrSpace::Shared, ty, zero);
            let wg = builtin(&mut b, Builtin::WorkgroupId(0));
            store_out(&mut b, 0, wg, fin);
        }
        b.exit();
    }
    kb.finish()
}

fn to_bytes(vals: &[u64], ty: Type) -> Vec<u8> {
    let n = ty.bytes() as usize;
    vals.iter()
        .flat_map(|v| v.to_le_bytes()[..n].to_vec())
        .collect()
}

fn from_bytes(bytes: &[u8], ty: Type) -> Vec<u64> {
    let n = ty.bytes() as usize;
    bytes
        .chunks_exact(n)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..n].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

/// Runs an atomic case on every engine: returns per engine (counters, olds).
#[allow(clippy::too_many_arguments)]
fn run_case(
    space: AddrSpace,
    op: AtomicOp,
    ty: Type,
    groups: u32,
    lanes: u32,
    wave: u32,
    init: u64,
    a: &dyn Fn(u64) -> u64,
    b: &dyn Fn(u64) -> u64,
) -> Vec<(String, Vec<u64>, Vec<u64>)> {
    let k = atomic_kernel(space, op, ty);
    let total = u64::from(groups * lanes);
    let ctrs = vec![init; groups as usize];
    let avals: Vec<u64> = (0..total).map(a).collect();
    let bvals: Vec<u64> = (0..total).map(b).collect();
    let bufs = [
        to_bytes(&ctrs, ty),
        to_bytes(&avals, ty),
        to_bytes(&bvals, ty),
        to_bytes(&vec![0; total as usize], ty),
    ];
    engines()
        .iter()
        .map(|e| {
            let run = run_with(e.as_ref(), &k, dispatch_1d(groups, lanes, wave), &bufs, &[]);
            run.ok(e.name());
            (
                e.name().to_string(),
                from_bytes(&run.bufs[0], ty),
                from_bytes(&run.bufs[3], ty),
            )
        })
        .collect()
}

const M32: u64 = 0xffff_ffff;

fn neg32(x: i64) -> u64 {
    x as u64 & M32
}

/// Order-independent final values under contention: 4 workgroups x 8 lanes in
/// waves of 4 on one global counter, and the same per workgroup in shared memory.
#[test]
fn contended_atomics_reach_exact_final_values() {
    type Case = (AtomicOp, Type, u64, fn(u64) -> u64, u64);
    let cases: Vec<Case> = vec![
        (AtomicOp::Add, Type::I32, 0, |_| 1, 32),
        (AtomicOp::Add, Type::I32, 0xffff_fff0, |_| 1, 0x10),
        (AtomicOp::Sub, Type::I32, 1000, |g| g + 1, 1000 - 528),
        (AtomicOp::MinU, Type::I32, M32, |g| g * 7 + 3, 3),
        (
            AtomicOp::MinS,
            Type::I32,
            0,
            |g| neg32(g as i64 - 16),
            neg32(-16),
        ),
        (AtomicOp::MaxU, Type::I32, 0, |g| g * 7 + 3, 31 * 7 + 3),
        (
            AtomicOp::MaxS,
            Type::I32,
            0x8000_0000,
            |g| neg32(g as i64 - 16),
            15,
        ),
        (AtomicOp::And, Type::I32, M32, |g| !(1u64 << g) & M32, 0),
        (AtomicOp::Or, Type::I32, 0, |g| 1 << g, M32),
        (
            AtomicOp::Xor,
            Type::I32,
            0x5555_5555,
            |g| (g * 0x0101_0101) & M32,
            { (0..32u64).fold(0x5555_5555, |x, g| x ^ ((g * 0x0101_0101) & M32)) },
        ),
        // Same operand everywhere: the composition does not depend on order.
        (AtomicOp::IncWrap, Type::I32, 0, |_| 4, 32 % 5),
        // 0 -> 4 -> 3 -> 2 -> 1 -> 0: period 5, 32 steps = 2 steps -> 3.
        (AtomicOp::DecWrap, Type::I32, 0, |_| 4, 3),
        (
            AtomicOp::Add,
            Type::I64,
            0,
            |g| (1 << 32) + g,
            (32 << 32) + 496,
        ),
        (
            AtomicOp::MinS,
            Type::I64,
            0,
            |g| (g as i64 - 16) as u64,
            (-16i64) as u64,
        ),
        (AtomicOp::MaxU, Type::I64, 0, |g| g << 40, 31 << 40),
        (
            AtomicOp::MaxS,
            Type::I64,
            1 << 63,
            |g| (g as i64 - 16) as u64,
            15,
        ),
        (AtomicOp::Xor, Type::I64, 0, |g| 1 << (g * 2), {
            (0..32u64).fold(0, |x, g| x | 1 << (g * 2))
        }),
    ];
    for (op, ty, init, a, fin) in cases {
        let what = format!("{op:?} {ty} init {init:#x}");
        for (engine, ctr, olds) in run_case(AddrSpace::Global, op, ty, 4, 8, 4, init, &a, &|_| 0) {
            assert_eq!(ctr[0], fin, "engine {engine}: global {what}");
            if op == AtomicOp::Add && init == 0 && ty == Type::I32 {
                let mut sorted = olds.clone();
                sorted.sort_unstable();
                assert_eq!(sorted, (0..32).collect::<Vec<_>>(), "engine {engine}: olds");
            }
        }
        // Shared: 4 workgroups of 8 lanes, each workgroup folds only its own 8 lanes.
        let per_wg = |w: u64| -> u64 {
            let mut x = init;
            for g in w * 8..w * 8 + 8 {
                x = wavejit_ir::semantics::atomic::atomic_rmw(op, ty.bytes(), x, a(g), 0);
            }
            x
        };
        let expect: Vec<u64> = (0..4).map(per_wg).collect();
        for (engine, ctr, _) in run_case(AddrSpace::Shared, op, ty, 4, 8, 4, init, &a, &|_| 0) {
            assert_eq!(ctr, expect, "engine {engine}: shared {what}");
        }
    }
}

/// Spot checks of the shared-model values above, independent of `atomic_rmw`.
#[test]
fn shared_contention_exact_values() {
    // Add of g + 1 in workgroup 2 (g = 16..24): 17 + ... + 24 = 164.
    for (engine, ctr, _) in run_case(
        AddrSpace::Shared,
        AtomicOp::Add,
        Type::I32,
        4,
        8,
        4,
        100,
        &|g| g + 1,
        &|_| 0,
    ) {
        assert_eq!(
            ctr,
            vec![100 + 36, 100 + 100, 100 + 164, 100 + 228],
            "engine {engine}"
        );
    }
    for (engine, ctr, _) in run_case(
        AddrSpace::Shared,
        AtomicOp::MinS,
        Type::I32,
        2,
        8,
        8,
        0,
        &|g| neg32(5 - g as i64),
        &|_| 0,
    ) {
        assert_eq!(ctr, vec![neg32(-2), neg32(-10)], "engine {engine}");
    }
}

/// One wave: lanes apply in increasing order, so the returned old values are
/// exact. Run on global and shared memory.
#[test]
fn single_wave_old_values_follow_lane_order() {
    type Case = (AtomicOp, u64, fn(u64) -> u64, fn(u64) -> u64, Vec<u64>, u64);
    let cases: Vec<Case> = vec![
        (
            AtomicOp::Add,
            0,
            |g| g + 1,
            |_| 0,
            vec![0, 1, 3, 6, 10, 15, 21, 28],
            36,
        ),
        (
            AtomicOp::Sub,
            100,
            |g| g,
            |_| 0,
            vec![100, 100, 99, 97, 94, 90, 85, 79],
            72,
        ),
        // A ticket chain: lane g succeeds when the counter equals g.
        (AtomicOp::CmpXchg, 0, |g| g, |g| g + 1, (0..8).collect(), 8),
        // Never matches: the counter stays.
        (AtomicOp::CmpXchg, 5, |_| 1000, |_| 1, vec![5; 8], 5),
        // Only lane 5 matches (expected 5), later lanes see 77.
        (
            AtomicOp::CmpXchg,
            5,
            |g| if g == 5 { 5 } else { 9 },
            |_| 77,
            vec![5, 5, 5, 5, 5, 5, 77, 77],
            77,
        ),
        (
            AtomicOp::Xchg,
            7,
            |g| g + 100,
            |_| 0,
            vec![7, 100, 101, 102, 103, 104, 105, 106],
            107,
        ),
        (
            AtomicOp::IncWrap,
            0,
            |_| 3,
            |_| 0,
            vec![0, 1, 2, 3, 0, 1, 2, 3],
            0,
        ),
        (
            AtomicOp::DecWrap,
            0,
            |_| 3,
            |_| 0,
            vec![0, 3, 2, 1, 0, 3, 2, 1],
            0,
        ),
        // IncWrap with a bound below the current value wraps to 0 at once.
        (
            AtomicOp::IncWrap,
            10,
            |g| g,
            |_| 0,
            vec![10, 0, 1, 2, 3, 4, 5, 6],
            7,
        ),
        (
            AtomicOp::MaxU,
            3,
            |g| (g * 5) % 8,
            |_| 0,
            vec![3, 3, 5, 5, 7, 7, 7, 7],
            7,
        ),
        (
            AtomicOp::And,
            0xff,
            |g| !(1 << g) & M32,
            |_| 0,
            vec![0xff, 0xfe, 0xfc, 0xf8, 0xf0, 0xe0, 0xc0, 0x80],
            0,
        ),
    ];
    for (op, init, a, bf, olds_expect, fin) in cases {
        for space in [AddrSpace::Global, AddrSpace::Shared] {
            let what = format!("{op:?} {} init {init}", space.name());
            for (engine, ctr, olds) in run_case(space, op, Type::I32, 1, 8, 8, init, &a, &bf) {
                assert_eq!(ctr, vec![fin], "engine {engine}: final, {what}");
                assert_eq!(olds, olds_expect, "engine {engine}: olds, {what}");
            }
        }
    }
}

/// 64-bit CmpXchg compares all 64 bits (a match in the low half is not enough).
#[test]
fn cmpxchg_i64_compares_the_whole_word() {
    let init = 0x0000_0001_0000_0002;
    for space in [AddrSpace::Global, AddrSpace::Shared] {
        for (engine, ctr, olds) in run_case(
            space,
            AtomicOp::CmpXchg,
            Type::I64,
            1,
            2,
            2,
            init,
            &|g| if g == 0 { 2 } else { init },
            &|g| 0xabcd_0000_0000 + g,
        ) {
            assert_eq!(ctr, vec![0xabcd_0000_0001], "engine {engine}");
            assert_eq!(olds, vec![init, init], "engine {engine}");
        }
    }
}

/// Atomics from many workgroups on counters indexed by lane: each counter sees
/// one increment per workgroup, with `old` telling how many came before.
#[test]
fn histogram_across_workgroups() {
    let mut kb = Kb::new("histogram");
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let three = c32(&mut b, 3);
        let bin_ix = bin(&mut b, IBinOp::RemU, lid, three);
        let base = buffer(&mut b, 0);
        let addr = elem(&mut b, base, bin_ix, 4);
        let one = c32(&mut b, 1);
        b.ins(
            InstKind::Atomic {
                space: AddrSpace::Global,
                op: AtomicOp::Add,
                ty: Type::I32,
            },
            &[addr, one],
        );
        b.exit();
    }
    let k = kb.finish();
    // 5 workgroups of 7 lanes: bins get lanes {0,3,6}, {1,4}, {2,5} per workgroup.
    for (engine, out) in run_u32(&k, &dispatch_1d(5, 7, 4), &[vec![0; 3]]) {
        assert_eq!(out[0], vec![15, 10, 10], "engine {engine}");
    }
}
