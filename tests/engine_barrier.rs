//! Workgroup barriers and shared memory on every engine.

mod common;

use common::*;
use wavejit_ir::{AddrSpace, Builtin, FaultKind, IBinOp, InstKind, IntCC, Kernel, Type};

/// Each of `rounds` iterations: shared[lid] = v; barrier; v = shared[(lid+1) % n]
/// * 3 + i; barrier. Run-to-completion emulators read stale or zero neighbours.
fn rotate_kernel(n: u32, rounds: u32) -> Kernel {
    let mut kb = Kb::new("rotate");
    kb.kernel.shared_size = n * 4;
    let entry = kb.entry();
    let (head, body, done) = (kb.block(), kb.block(), kb.block());
    let i = kb.param(head, Type::I32);
    let v = kb.param(head, Type::I32);
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let seed = c32(&mut b, 1000);
        let v0 = bin(&mut b, IBinOp::Add, lid, seed);
        let zero = c32(&mut b, 0);
        b.jump(head, &[zero, v0]);

        b.switch_to(head);
        let r = c32(&mut b, rounds);
        let more = icmp(&mut b, IntCC::Ult, i, r);
        b.branch(more, call(body, &[]), call(done, &[]));

        b.switch_to(body);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let four = c32(&mut b, 4);
        let mine = bin(&mut b, IBinOp::Mul, lid, four);
        store(&mut b, AddrSpace::Shared, mine, v);
        b.ins(InstKind::Barrier, &[]);
        let one = c32(&mut b, 1);
        let next = bin(&mut b, IBinOp::Add, lid, one);
        let nn = c32(&mut b, n);
        let wrapped = bin(&mut b, IBinOp::RemU, next, nn);
        let theirs = bin(&mut b, IBinOp::Mul, wrapped, four);
        let got = load(&mut b, AddrSpace::Shared, Type::I32, theirs);
        let three = c32(&mut b, 3);
        let scaled = bin(&mut b, IBinOp::Mul, got, three);
        let v2 = bin(&mut b, IBinOp::Add, scaled, i);
        b.ins(InstKind::Barrier, &[]);
        let i2 = bin(&mut b, IBinOp::Add, i, one);
        b.jump(head, &[i2, v2]);

        b.switch_to(done);
        let gid = global_id(&mut b);
        store_out(&mut b, 0, gid, v);
        b.exit();
    }
    kb.finish()
}

fn rotate_model(n: u32, rounds: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (0..n).map(|l| l + 1000).collect();
    for i in 0..rounds {
        let shared = v.clone();
        v = (0..n as usize)
            .map(|l| shared[(l + 1) % n as usize].wrapping_mul(3).wrapping_add(i))
            .collect();
    }
    v
}

#[test]
fn barrier_inside_loop_over_shared_memory() {
    let (n, rounds) = (8, 5);
    let k = rotate_kernel(n, rounds);
    let model = rotate_model(n, rounds);
    // Exact values of the model: lane 0 after 5 rounds reads lane 5's seed.
    assert_eq!(model[0], 243 * 1005 + 27 + 2 * 9 + 3 * 3 + 4);
    let expect: Vec<u32> = model.iter().chain(&model).copied().collect();
    // One wave per workgroup, two waves, and waves of one lane.
    for wave in [8, 4, 3, 1] {
        for (engine, out) in run_u32(&k, &dispatch_1d(2, n, wave), &[vec![0; 16]]) {
            assert_eq!(out[0], expect, "engine {engine}, wave size {wave}");
        }
    }
}

/// Lanes 5.. exit before the barrier; the others must not wait for them.
/// shared[lid] = lid + 1; barrier; out[lid] = shared[(lid + 1) % 5].
#[test]
fn barrier_with_some_lanes_exited() {
    let mut kb = Kb::new("exited");
    kb.kernel.shared_size = 32;
    let entry = kb.entry();
    let (work, leave) = (kb.block(), kb.block());
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let five = c32(&mut b, 5);
        let stays = icmp(&mut b, IntCC::Ult, lid, five);
        b.branch(stays, call(work, &[]), call(leave, &[]));

        b.switch_to(work);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let one = c32(&mut b, 1);
        let four = c32(&mut b, 4);
        let v = bin(&mut b, IBinOp::Add, lid, one);
        let mine = bin(&mut b, IBinOp::Mul, lid, four);
        store(&mut b, AddrSpace::Shared, mine, v);
        b.ins(InstKind::Barrier, &[]);
        let five = c32(&mut b, 5);
        let next = bin(&mut b, IBinOp::RemU, v, five);
        let theirs = bin(&mut b, IBinOp::Mul, next, four);
        let got = load(&mut b, AddrSpace::Shared, Type::I32, theirs);
        store_out(&mut b, 0, lid, got);
        b.exit();

        b.switch_to(leave);
        b.exit();
    }
    let k = kb.finish();
    for wave in [8, 4, 2] {
        for (engine, out) in run_u32(&k, &dispatch_1d(1, 8, wave), &[vec![0xffff_ffff; 8]]) {
            assert_eq!(
                out[0],
                vec![2, 3, 4, 5, 1, 0xffff_ffff, 0xffff_ffff, 0xffff_ffff],
                "engine {engine}, wave size {wave}"
            );
        }
    }
}

/// A lane that faults before a barrier counts as exited: the others get past the
/// barrier, and the dispatch reports that lane's trap.
#[test]
fn barrier_does_not_wait_for_a_faulted_lane() {
    let mut kb = Kb::new("faulted");
    kb.kernel.shared_size = 16;
    let entry = kb.entry();
    let (bad, good, after) = (kb.block(), kb.block(), kb.block());
    let trap_inst;
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let two = c32(&mut b, 2);
        let is_bad = icmp(&mut b, IntCC::Eq, lid, two);
        b.branch(is_bad, call(bad, &[]), call(good, &[]));
        b.switch_to(bad);
        b.set_srcloc(Some(0x1234));
        b.ins(InstKind::Trap { code: 9 }, &[]);
        trap_inst = last_inst(&b);
        b.set_srcloc(None);
        b.jump(good, &[]);
        b.switch_to(good);
        b.ins(InstKind::Barrier, &[]);
        b.jump(after, &[]);
        b.switch_to(after);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let v = c32(&mut b, 77);
        store_out(&mut b, 0, lid, v);
        b.exit();
    }
    let k = kb.finish();
    for e in engines() {
        let run = run_with(
            e.as_ref(),
            &k,
            dispatch_1d(1, 4, 4),
            &[u32_bytes(&[0; 4])],
            &[],
        );
        let f = run.result.clone().expect_err("lane 2 traps");
        assert_eq!(
            (f.block, f.inst),
            (bad, Some(trap_inst)),
            "engine {}",
            e.name()
        );
        assert_eq!(f.guest_pc, Some(0x1234), "engine {}", e.name());
        assert_eq!(f.lane.local, [2, 0, 0], "engine {}", e.name());
        assert_eq!(f.kind, FaultKind::Trap { code: 9 }, "engine {}", e.name());
    }
}

/// Shared memory starts zeroed in every workgroup: each lane reads its slot and
/// then overwrites it; the second workgroup must still read zeros.
#[test]
fn shared_memory_is_zeroed_per_workgroup() {
    let mut kb = Kb::new("fresh_shared");
    kb.kernel.shared_size = 16;
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let four = c32(&mut b, 4);
        let mine = bin(&mut b, IBinOp::Mul, lid, four);
        let old = load(&mut b, AddrSpace::Shared, Type::I32, mine);
        let gid = global_id(&mut b);
        store_out(&mut b, 0, gid, old);
        let v = c32(&mut b, 0xabcd);
        store(&mut b, AddrSpace::Shared, mine, v);
        b.exit();
    }
    let k = kb.finish();
    for (engine, out) in run_u32(&k, &dispatch_1d(3, 4, 2), &[vec![5; 12]]) {
        assert_eq!(out[0], vec![0; 12], "engine {engine}");
    }
}

/// A reduction tree over shared memory with a barrier per level: the classic
/// workgroup sum; lanes drop out of the active half at each level.
#[test]
fn shared_reduction_tree() {
    let n = 16u32;
    let mut kb = Kb::new("tree");
    kb.kernel.shared_size = n * 4;
    let entry = kb.entry();
    let (head, active, sync, done, write) =
        (kb.block(), kb.block(), kb.block(), kb.block(), kb.block());
    let stride = kb.param(head, Type::I32);
    {
        let mut b = kb.at(entry);
        let gid = global_id(&mut b);
        let x = load_in(&mut b, 0, gid, Type::I32);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let four = c32(&mut b, 4);
        let mine = bin(&mut b, IBinOp::Mul, lid, four);
        store(&mut b, AddrSpace::Shared, mine, x);
        b.ins(InstKind::Barrier, &[]);
        let half = c32(&mut b, n / 2);
        b.jump(head, &[half]);

        b.switch_to(head);
        let zero = c32(&mut b, 0);
        let go = icmp(&mut b, IntCC::Ne, stride, zero);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let in_half = icmp(&mut b, IntCC::Ult, lid, stride);
        b.branch(go, call(sync, &[]), call(done, &[]));
        // Lanes of the lower half add; everyone meets at the barrier in `write`.
        b.switch_to(sync);
        b.branch(in_half, call(active, &[]), call(write, &[]));

        b.switch_to(active);
        let four = c32(&mut b, 4);
        let mine = bin(&mut b, IBinOp::Mul, lid, four);
        let other_l = bin(&mut b, IBinOp::Add, lid, stride);
        let other = bin(&mut b, IBinOp::Mul, other_l, four);
        let a = load(&mut b, AddrSpace::Shared, Type::I32, mine);
        let c = load(&mut b, AddrSpace::Shared, Type::I32, other);
        let s = bin(&mut b, IBinOp::Add, a, c);
        store(&mut b, AddrSpace::Shared, mine, s);
        b.jump(write, &[]);

        b.switch_to(write);
        b.ins(InstKind::Barrier, &[]);
        let one = c32(&mut b, 1);
        let next = bin(&mut b, IBinOp::ShrU, stride, one);
        b.jump(head, &[next]);

        b.switch_to(done);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let zero = c32(&mut b, 0);
        let total = load(&mut b, AddrSpace::Shared, Type::I32, zero);
        let wg = builtin(&mut b, Builtin::WorkgroupId(0));
        let nn = c32(&mut b, n);
        let base = bin(&mut b, IBinOp::Mul, wg, nn);
        let slot = bin(&mut b, IBinOp::Add, base, lid);
        store_out(&mut b, 1, slot, total);
        b.exit();
    }
    let k = kb.finish();
    let input: Vec<u32> = (0..2 * n).map(|i| i * i + 1).collect();
    let s0: u32 = input[..n as usize].iter().sum();
    let s1: u32 = input[n as usize..].iter().sum();
    let mut expect = vec![s0; n as usize];
    expect.extend(vec![s1; n as usize]);
    for wave in [16, 4, 5] {
        for (engine, out) in run_u32(
            &k,
            &dispatch_1d(2, n, wave),
            &[input.clone(), vec![0; 2 * n as usize]],
        ) {
            assert_eq!(out[1], expect, "engine {engine}, wave {wave}");
        }
    }
}

/// Lanes waiting at different barriers are released together once every live
/// lane waits somewhere: lanes 0..4 publish in one block, lanes 4..8 in another,
/// and after their (different) barriers each reads a lane of the other half.
#[test]
fn lanes_at_different_barriers_release_together() {
    let mut kb = Kb::new("two_barriers");
    kb.kernel.shared_size = 32;
    let entry = kb.entry();
    let (low, high, merge) = (kb.block(), kb.block(), kb.block());
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let four = c32(&mut b, 4);
        let is_low = icmp(&mut b, IntCC::Ult, lid, four);
        let off = bin(&mut b, IBinOp::Mul, lid, four);
        b.branch(is_low, call(low, &[]), call(high, &[]));
        for (blk, k) in [(low, 10), (high, 20)] {
            b.switch_to(blk);
            let kk = c32(&mut b, k);
            let v = bin(&mut b, IBinOp::Add, lid, kk);
            store(&mut b, AddrSpace::Shared, off, v);
            b.ins(InstKind::Barrier, &[]);
            b.jump(merge, &[]);
        }
        b.switch_to(merge);
        let seven = c32(&mut b, 7);
        let other = bin(&mut b, IBinOp::Sub, seven, lid);
        let other_off = bin(&mut b, IBinOp::Mul, other, four);
        let got = load(&mut b, AddrSpace::Shared, Type::I32, other_off);
        store_out(&mut b, 0, lid, got);
        b.exit();
    }
    let k = kb.finish();
    let expect: Vec<u32> = (0..8u32)
        .map(|l| {
            let o = 7 - l;
            if o < 4 { o + 10 } else { o + 20 }
        })
        .collect();
    for wave in [8, 4, 3] {
        for (engine, out) in run_u32(&k, &dispatch_1d(1, 8, wave), &[vec![0; 8]]) {
            assert_eq!(out[0], expect, "engine {engine}, wave {wave}");
        }
    }
}
