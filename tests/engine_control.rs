//! Control flow on every engine: divergence, reconvergence, loops, tables, block
//! parameters, builtins and the watchdog.

mod common;

use common::*;
use wavejit_ir::{Block, Builtin, Dispatch, FaultKind, IBinOp, InstKind, IntCC, LaneId, Type};

/// out[lid] = lid % 3 == 0 ? lid * 10 : lid + 100, through a divergent if/else
/// whose arms meet in a block with a parameter.
#[test]
fn divergent_if_else() {
    let mut kb = Kb::new("if_else");
    let (entry, then, other, merge) = (kb.entry(), kb.block(), kb.block(), kb.block());
    let v = kb.param(merge, Type::I32);
    let lid;
    {
        let mut b = kb.at(entry);
        lid = builtin(&mut b, Builtin::LocalIndex);
        let three = c32(&mut b, 3);
        let r = bin(&mut b, IBinOp::RemU, lid, three);
        let zero = c32(&mut b, 0);
        let cond = icmp(&mut b, IntCC::Eq, r, zero);
        b.branch(cond, call(then, &[]), call(other, &[]));
        b.switch_to(then);
        let ten = c32(&mut b, 10);
        let x = bin(&mut b, IBinOp::Mul, lid, ten);
        b.jump(merge, &[x]);
        b.switch_to(other);
        let hundred = c32(&mut b, 100);
        let y = bin(&mut b, IBinOp::Add, lid, hundred);
        b.jump(merge, &[y]);
        b.switch_to(merge);
        store_out(&mut b, 0, lid, v);
        b.exit();
    }
    let k = kb.finish();
    for (engine, out) in run_u32(&k, &dispatch_1d(1, 8, 8), &[vec![0; 8]]) {
        assert_eq!(
            out[0],
            vec![0, 101, 102, 30, 104, 105, 60, 107],
            "engine {engine}"
        );
    }
}

/// Two levels of divergence with four leaves, over two workgroups and two waves.
#[test]
fn nested_divergence() {
    let mut kb = Kb::new("nested");
    let entry = kb.entry();
    let [low, high, low_odd, low_even, high_three, high_other, merge] = [(); 7].map(|_| kb.block());
    let v = kb.param(merge, Type::I32);
    {
        let mut b = kb.at(entry);
        let gid = global_id(&mut b);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let four = c32(&mut b, 4);
        let is_low = icmp(&mut b, IntCC::Ult, lid, four);
        b.branch(is_low, call(low, &[]), call(high, &[]));

        b.switch_to(low);
        let one = c32(&mut b, 1);
        let bit = bin(&mut b, IBinOp::And, lid, one);
        let zero = c32(&mut b, 0);
        let odd = icmp(&mut b, IntCC::Ne, bit, zero);
        b.branch(odd, call(low_odd, &[]), call(low_even, &[]));

        b.switch_to(high);
        let three = c32(&mut b, 3);
        let r = bin(&mut b, IBinOp::RemU, lid, three);
        let zero = c32(&mut b, 0);
        let is_three = icmp(&mut b, IntCC::Eq, r, zero);
        b.branch(is_three, call(high_three, &[]), call(high_other, &[]));

        for (blk, base) in [
            (low_odd, 1000),
            (low_even, 2000),
            (high_three, 3000),
            (high_other, 4000),
        ] {
            b.switch_to(blk);
            let k = c32(&mut b, base);
            let x = bin(&mut b, IBinOp::Add, lid, k);
            b.jump(merge, &[x]);
        }
        b.switch_to(merge);
        store_out(&mut b, 0, gid, v);
        b.exit();
    }
    let k = kb.finish();
    let expect_wg: Vec<u32> = (0..8)
        .map(|l| match l {
            l if l < 4 && l % 2 == 1 => 1000 + l,
            l if l < 4 => 2000 + l,
            l if l % 3 == 0 => 3000 + l,
            l => 4000 + l,
        })
        .collect();
    let expect: Vec<u32> = expect_wg.iter().chain(&expect_wg).copied().collect();
    for (engine, out) in run_u32(&k, &dispatch_1d(2, 8, 4), &[vec![0; 16]]) {
        assert_eq!(out[0], expect, "engine {engine}");
    }
}

/// Lane `l` loops `l + 1` times accumulating `i * i`; a second exit leaves early
/// when the accumulator passes 50. out = [acc, iterations] per lane.
#[test]
fn loops_exit_at_different_iterations() {
    let mut kb = Kb::new("loops");
    let entry = kb.entry();
    let (head, body, early, done) = (kb.block(), kb.block(), kb.block(), kb.block());
    let i = kb.param(head, Type::I32);
    let acc = kb.param(head, Type::I32);
    let di = kb.param(done, Type::I32);
    let dacc = kb.param(done, Type::I32);
    {
        let mut b = kb.at(entry);
        let zero = c32(&mut b, 0);
        b.jump(head, &[zero, zero]);

        b.switch_to(head);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let go = icmp(&mut b, IntCC::Ule, i, lid);
        b.branch(go, call(body, &[]), call(done, &[i, acc]));

        b.switch_to(body);
        let sq = bin(&mut b, IBinOp::Mul, i, i);
        let acc2 = bin(&mut b, IBinOp::Add, acc, sq);
        let one = c32(&mut b, 1);
        let i2 = bin(&mut b, IBinOp::Add, i, one);
        let limit = c32(&mut b, 50);
        let over = icmp(&mut b, IntCC::Ugt, acc2, limit);
        b.branch(over, call(early, &[i2, acc2]), call(head, &[i2, acc2]));
        let ei = kb.param(early, Type::I32);
        let eacc = kb.param(early, Type::I32);
        let mut b = kb.at(early);
        let big = c32(&mut b, 0x8000_0000);
        let marked = bin(&mut b, IBinOp::Or, eacc, big);
        b.jump(done, &[ei, marked]);

        b.switch_to(done);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let two = c32(&mut b, 2);
        let slot = bin(&mut b, IBinOp::Mul, lid, two);
        store_out(&mut b, 0, slot, dacc);
        let one = c32(&mut b, 1);
        let slot1 = bin(&mut b, IBinOp::Add, slot, one);
        store_out(&mut b, 0, slot1, di);
        b.exit();
    }
    let k = kb.finish();
    let mut expect = Vec::new();
    for l in 0..12u32 {
        let (mut acc, mut i) = (0u32, 0u32);
        let mut marked = false;
        while i <= l {
            acc += i * i;
            i += 1;
            if acc > 50 {
                marked = true;
                break;
            }
        }
        expect.push(if marked { acc | 0x8000_0000 } else { acc });
        expect.push(i);
    }
    // Spot checks of the model itself: lane 3 sums 0+1+4+9; lane 5 leaves early at 55.
    assert_eq!((expect[6], expect[7]), (14, 4));
    assert_eq!((expect[10], expect[11]), (55 | 0x8000_0000, 6));
    for (engine, out) in run_u32(&k, &dispatch_1d(1, 12, 8), &[vec![0; 24]]) {
        assert_eq!(out[0], expect, "engine {engine}");
    }
}

/// A table terminator: lid % 5 selects one of three targets or the default.
#[test]
fn table_switch_with_default() {
    let mut kb = Kb::new("table");
    let entry = kb.entry();
    let targets: Vec<Block> = (0..4).map(|_| kb.block()).collect();
    let merge = kb.block();
    let v = kb.param(merge, Type::I32);
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let five = c32(&mut b, 5);
        let idx = bin(&mut b, IBinOp::RemU, lid, five);
        b.kernel.set_terminator(
            entry,
            wavejit_ir::Terminator::Table {
                index: idx,
                targets: targets[..3].iter().map(|&t| call(t, &[])).collect(),
                default: call(targets[3], &[]),
            },
        );
        for (n, &t) in targets.iter().enumerate() {
            b.switch_to(t);
            let x = c32(&mut b, 10 * (n as u32 + 1));
            b.jump(merge, &[x]);
        }
        b.switch_to(merge);
        store_out(&mut b, 0, lid, v);
        b.exit();
    }
    let k = kb.finish();
    let expect: Vec<u32> = (0..10).map(|l| [10, 20, 30, 40, 40][l % 5]).collect();
    for (engine, out) in run_u32(&k, &dispatch_1d(1, 10, 4), &[vec![0; 10]]) {
        assert_eq!(out[0], expect, "engine {engine}");
    }
}

/// Block arguments move in parallel: `jump head(b, a)` swaps. Three swaps of
/// (lid, 100 + lid) leave them swapped once.
#[test]
fn block_arguments_move_in_parallel() {
    let mut kb = Kb::new("swap");
    let entry = kb.entry();
    let (head, done) = (kb.block(), kb.block());
    let a = kb.param(head, Type::I32);
    let bb = kb.param(head, Type::I32);
    let n = kb.param(head, Type::I32);
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let hundred = c32(&mut b, 100);
        let x = bin(&mut b, IBinOp::Add, lid, hundred);
        let zero = c32(&mut b, 0);
        b.jump(head, &[lid, x, zero]);
        b.switch_to(head);
        let one = c32(&mut b, 1);
        let n2 = bin(&mut b, IBinOp::Add, n, one);
        let three = c32(&mut b, 3);
        let more = icmp(&mut b, IntCC::Ult, n2, three);
        b.branch(more, call(head, &[bb, a, n2]), call(done, &[]));
        b.switch_to(done);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let two = c32(&mut b, 2);
        let slot = bin(&mut b, IBinOp::Mul, lid, two);
        store_out(&mut b, 0, slot, a);
        let one = c32(&mut b, 1);
        let slot1 = bin(&mut b, IBinOp::Add, slot, one);
        store_out(&mut b, 0, slot1, bb);
        b.exit();
    }
    let k = kb.finish();
    // The swapping back edge is taken for n2 = 1 and 2: two swaps, the identity.
    let expect: Vec<u32> = (0..4).flat_map(|l| [l, 100 + l]).collect();
    for (engine, out) in run_u32(&k, &dispatch_1d(1, 4, 4), &[vec![0; 8]]) {
        assert_eq!(out[0], expect, "engine {engine}");
    }
    // An odd number of swaps: change the bound to 4 (three back edges).
    let mut k3 = k.clone();
    for inst in k3.insts.values_mut() {
        if inst.kind
            == (InstKind::Const {
                ty: Type::I32,
                bits: 3,
            })
        {
            inst.kind = InstKind::Const {
                ty: Type::I32,
                bits: 4,
            };
        }
    }
    let expect: Vec<u32> = (0..4).flat_map(|l| [100 + l, l]).collect();
    for (engine, out) in run_u32(&k3, &dispatch_1d(1, 4, 4), &[vec![0; 8]]) {
        assert_eq!(out[0], expect, "engine {engine}");
    }
}

/// Every builtin over a 3-D dispatch with several waves.
#[test]
fn builtins_over_a_3d_dispatch() {
    const FIELDS: u32 = 16;
    let mut kb = Kb::new("builtins");
    let entry = kb.entry();
    {
        let mut b = kb.at(entry);
        // Linear lane number over the dispatch: (linear workgroup) * 8 + local index.
        let wx = builtin(&mut b, Builtin::WorkgroupId(0));
        let wy = builtin(&mut b, Builtin::WorkgroupId(1));
        let gx = builtin(&mut b, Builtin::NumWorkgroups(0));
        let row = bin(&mut b, IBinOp::Mul, wy, gx);
        let wlin = bin(&mut b, IBinOp::Add, row, wx);
        let eight = c32(&mut b, 8);
        let base = bin(&mut b, IBinOp::Mul, wlin, eight);
        let lidx = builtin(&mut b, Builtin::LocalIndex);
        let lane = bin(&mut b, IBinOp::Add, base, lidx);
        let nf = c32(&mut b, FIELDS);
        let slot0 = bin(&mut b, IBinOp::Mul, lane, nf);
        let all = [
            Builtin::LocalId(0),
            Builtin::LocalId(1),
            Builtin::LocalId(2),
            Builtin::WorkgroupId(0),
            Builtin::WorkgroupId(1),
            Builtin::WorkgroupId(2),
            Builtin::WorkgroupSize(0),
            Builtin::WorkgroupSize(1),
            Builtin::WorkgroupSize(2),
            Builtin::NumWorkgroups(0),
            Builtin::NumWorkgroups(1),
            Builtin::NumWorkgroups(2),
            Builtin::LocalIndex,
            Builtin::LaneId,
            Builtin::WaveId,
            Builtin::WaveSize,
        ];
        for (f, which) in all.into_iter().enumerate() {
            let v = builtin(&mut b, which);
            let off = c32(&mut b, f as u32);
            let slot = bin(&mut b, IBinOp::Add, slot0, off);
            store_out(&mut b, 0, slot, v);
        }
        b.exit();
    }
    let k = kb.finish();
    let mut d = Dispatch::new([2, 3, 1], [2, 2, 2]);
    d.wave_size = 3;
    let mut expect = Vec::new();
    for wy in 0..3u32 {
        for wx in 0..2u32 {
            for li in 0..8u32 {
                let local = [li % 2, (li / 2) % 2, li / 4];
                expect.extend_from_slice(&[
                    local[0],
                    local[1],
                    local[2],
                    wx,
                    wy,
                    0,
                    2,
                    2,
                    2,
                    2,
                    3,
                    1,
                    li,
                    li % 3,
                    li / 3,
                    3,
                ]);
            }
        }
    }
    for (engine, out) in run_u32(&k, &d, &[vec![0; 6 * 8 * FIELDS as usize]]) {
        assert_eq!(out[0], expect, "engine {engine}");
    }
}

/// A lane that never leaves its loop trips the watchdog at the loop block; the
/// reported lane is the lowest looping one even though lane 0 exits normally.
#[test]
fn watchdog_on_infinite_loop() {
    let mut kb = Kb::new("spin");
    let entry = kb.entry();
    let (spin, out) = (kb.block(), kb.block());
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let two = c32(&mut b, 2);
        let stuck = icmp(&mut b, IntCC::Uge, lid, two);
        b.branch(stuck, call(spin, &[]), call(out, &[]));
        b.switch_to(spin);
        b.jump(spin, &[]);
        b.switch_to(out);
        b.exit();
    }
    let k = kb.finish();
    let mut d = dispatch_1d(1, 4, 4);
    d.step_limit = 100;
    for e in engines() {
        let run = run_with(e.as_ref(), &k, d.clone(), &[], &[]);
        let f = run.result.expect_err("the spinning lanes must fault");
        assert_eq!(f.kernel, "spin", "engine {}", e.name());
        assert_eq!(f.block, spin, "engine {}", e.name());
        assert_eq!(f.inst, None, "engine {}", e.name());
        assert_eq!(f.guest_pc, None, "engine {}", e.name());
        assert_eq!(
            f.lane,
            LaneId {
                workgroup: [0; 3],
                local: [2, 0, 0]
            },
            "engine {}",
            e.name()
        );
        assert_eq!(
            f.kind,
            FaultKind::Watchdog { limit: 100 },
            "engine {}",
            e.name()
        );
    }
}

/// The step limit counts blocks entered, the entry included: a chain of three
/// blocks runs under a limit of 3 and faults entering the third under 2.
#[test]
fn watchdog_counts_blocks_entered_exactly() {
    let mut kb = Kb::new("chain");
    let entry = kb.entry();
    let (b1, b2) = (kb.block(), kb.block());
    {
        let mut b = kb.at(entry);
        b.jump(b1, &[]);
        b.switch_to(b1);
        b.jump(b2, &[]);
        b.switch_to(b2);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let v = c32(&mut b, 7);
        store_out(&mut b, 0, lid, v);
        b.exit();
    }
    let k = kb.finish();
    for e in engines() {
        let mut d = dispatch_1d(1, 2, 2);
        d.step_limit = 3;
        let run = run_with(e.as_ref(), &k, d.clone(), &[u32_bytes(&[0, 0])], &[]);
        run.ok(e.name());
        assert_eq!(run.u32s(0), vec![7, 7], "engine {}", e.name());
        d.step_limit = 2;
        let run = run_with(e.as_ref(), &k, d, &[u32_bytes(&[0, 0])], &[]);
        let f = run.result.clone().expect_err("limit 2 must fault");
        assert_eq!((f.block, f.inst), (b2, None), "engine {}", e.name());
        assert_eq!(f.lane.local, [0, 0, 0], "engine {}", e.name());
        assert_eq!(
            f.kind,
            FaultKind::Watchdog { limit: 2 },
            "engine {}",
            e.name()
        );
        assert_eq!(run.u32s(0), vec![0, 0], "engine {}: no store ran", e.name());
    }
}
