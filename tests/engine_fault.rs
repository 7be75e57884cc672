//! Faults on every engine: exact fault values for bad memory accesses, traps, and
//! the lowest-lane rule (the reported fault is the one of the lowest linear
//! workgroup, then the lowest linear local index, whatever the schedule).

mod common;

use common::*;
use wavejit_ir::{
    AccessCause, AddrSpace, AtomicOp, Block, Builtin, Dispatch, Fault, FaultKind, IBinOp, Inst,
    InstKind, IntCC, Kernel, LaneId, MemAccess, Type,
};
use wavejit_runtime::AddressSpace;

fn lane(wg: [u32; 3], local: u32) -> LaneId {
    LaneId {
        workgroup: wg,
        local: [local, 0, 0],
    }
}

fn mem_fault(space: AddrSpace, addr: u64, size: u32, write: bool, cause: AccessCause) -> FaultKind {
    FaultKind::Memory {
        space,
        addr,
        size,
        write,
        cause,
    }
}

/// Runs on every engine and returns (engine name, fault, buffer addresses).
fn faults(
    k: &Kernel,
    d: &Dispatch,
    bufs: &[Vec<u8>],
    uniforms: &[u8],
) -> Vec<(String, Fault, Vec<u64>)> {
    engines()
        .iter()
        .map(|e| {
            let run = run_with(e.as_ref(), k, d.clone(), bufs, uniforms);
            let f = run.result.clone().expect_err("the kernel must fault");
            (e.name().to_string(), f, run.addrs)
        })
        .collect()
}

/// A kernel whose lanes access `access` at `base(slot) + lid * stride + offset`
/// (global) or `lid * stride + offset` (other spaces), with guest pc 0x40 on the
/// access. Returns the kernel and the access instruction.
fn access_kernel(access: MemAccess, store: bool, stride: u32, offset: u32) -> (Kernel, Inst) {
    let mut kb = Kb::new("access");
    kb.kernel.shared_size = 64;
    kb.kernel.private_size = 16;
    let entry = kb.entry();
    let inst;
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let s = c32(&mut b, stride);
        let o = c32(&mut b, offset);
        let scaled = bin(&mut b, IBinOp::Mul, lid, s);
        let off = bin(&mut b, IBinOp::Add, scaled, o);
        let addr = if access.space == AddrSpace::Global {
            let base = buffer(&mut b, 0);
            let wide = zext64(&mut b, off);
            bin(&mut b, IBinOp::Add, base, wide)
        } else {
            off
        };
        let vals: Vec<_> = (0..access.count)
            .map(|n| b.iconst(access.ty, u64::from(n) + 1))
            .collect();
        b.set_srcloc(Some(0x40));
        if store {
            let mut args = vec![addr];
            args.extend(vals);
            b.ins(InstKind::Store(access), &args);
        } else {
            b.inst(InstKind::Load(access), &[addr]);
        }
        inst = last_inst(&b);
        b.set_srcloc(None);
        b.exit();
    }
    (kb.finish(), inst)
}

fn expect_access_fault(
    access: MemAccess,
    store: bool,
    stride: u32,
    offset: u32,
    lanes: u32,
    buf_len: usize,
    want: impl Fn(&[u64]) -> (u32, FaultKind),
) {
    let (k, inst) = access_kernel(access, store, stride, offset);
    let d = dispatch_1d(2, lanes, 4);
    for (engine, f, addrs) in faults(&k, &d, &[vec![0; buf_len]], &[]) {
        let (local, kind) = want(&addrs);
        let expect = Fault {
            kernel: "access".into(),
            block: Block::from_u32(0),
            inst: Some(inst),
            guest_pc: Some(0x40),
            lane: lane([0; 3], local),
            kind,
        };
        assert_eq!(f, expect, "engine {engine}");
    }
}

#[test]
fn global_out_of_bounds_load_reports_the_first_lane_past_the_end() {
    // 16-byte buffer, lanes read 4 bytes at lid * 4 + 2 (align 1): lane 3 straddles
    // the end (out of bounds), lanes 4 and 5 start past it (no allocation there).
    let unaligned = MemAccess {
        align: 1,
        ..MemAccess::scalar(AddrSpace::Global, Type::I32)
    };
    expect_access_fault(unaligned, false, 4, 2, 6, 16, |a| {
        (
            3,
            mem_fault(
                AddrSpace::Global,
                a[0] + 14,
                4,
                false,
                AccessCause::OutOfBounds,
            ),
        )
    });
    // Starting exactly at the end: the memory reports no allocation there.
    expect_access_fault(
        MemAccess::scalar(AddrSpace::Global, Type::I32),
        false,
        4,
        0,
        6,
        16,
        |a| {
            (
                4,
                mem_fault(
                    AddrSpace::Global,
                    a[0] + 16,
                    4,
                    false,
                    AccessCause::Unmapped,
                ),
            )
        },
    );
}

#[test]
fn global_vector_store_is_checked_as_a_whole() {
    // 4 x i32 at lid * 4 + 0: lane 0 fits exactly (16 bytes), lane 1 runs past.
    let v4 = MemAccess {
        count: 4,
        ..MemAccess::scalar(AddrSpace::Global, Type::I32)
    };
    expect_access_fault(v4, true, 4, 0, 3, 16, |a| {
        (
            1,
            mem_fault(
                AddrSpace::Global,
                a[0] + 4,
                16,
                true,
                AccessCause::OutOfBounds,
            ),
        )
    });
}

#[test]
fn misaligned_accesses_fault_before_bounds_are_checked() {
    // Lane 0 at offset 2: misaligned (and in bounds).
    expect_access_fault(
        MemAccess::scalar(AddrSpace::Global, Type::I32),
        false,
        4,
        2,
        2,
        64,
        |a| {
            (
                0,
                mem_fault(
                    AddrSpace::Global,
                    a[0] + 2,
                    4,
                    false,
                    AccessCause::Misaligned { align: 4 },
                ),
            )
        },
    );
    // Misaligned and out of bounds: misaligned wins.
    expect_access_fault(
        MemAccess::scalar(AddrSpace::Shared, Type::I32),
        true,
        0,
        66,
        2,
        4,
        |_| {
            (
                0,
                mem_fault(
                    AddrSpace::Shared,
                    66,
                    4,
                    true,
                    AccessCause::Misaligned { align: 4 },
                ),
            )
        },
    );
    // align 8 on a 4-byte element vector: lane 1 (offset 12) is not 8-aligned.
    let v2 = MemAccess {
        count: 2,
        align: 8,
        ..MemAccess::scalar(AddrSpace::Private, Type::I32)
    };
    expect_access_fault(v2, false, 12, 0, 2, 4, |_| {
        (
            1,
            mem_fault(
                AddrSpace::Private,
                12,
                8,
                false,
                AccessCause::Misaligned { align: 8 },
            ),
        )
    });
}

#[test]
fn an_unaligned_access_allowed_by_its_align_runs() {
    let (k, _) = access_kernel(
        MemAccess {
            align: 1,
            ..MemAccess::scalar(AddrSpace::Global, Type::I32)
        },
        true,
        4,
        1,
    );
    for e in engines() {
        let run = run_with(e.as_ref(), &k, dispatch_1d(1, 2, 2), &[vec![0; 12]], &[]);
        run.ok(e.name());
        assert_eq!(
            run.bufs[0],
            vec![0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0],
            "engine {}",
            e.name()
        );
    }
}

#[test]
fn local_spaces_are_bounds_checked() {
    // Shared: 64 bytes; lane 2's word at 64 is past the end.
    expect_access_fault(
        MemAccess::scalar(AddrSpace::Shared, Type::I32),
        false,
        32,
        0,
        4,
        4,
        |_| {
            (
                2,
                mem_fault(AddrSpace::Shared, 64, 4, false, AccessCause::OutOfBounds),
            )
        },
    );
    // Shared vector load of 16 bytes at 56 overruns although it starts inside.
    let v4 = MemAccess {
        count: 4,
        ..MemAccess::scalar(AddrSpace::Shared, Type::I32)
    };
    expect_access_fault(v4, false, 0, 56, 1, 4, |_| {
        (
            0,
            mem_fault(AddrSpace::Shared, 56, 16, false, AccessCause::OutOfBounds),
        )
    });
    // Private: 16 bytes per lane, every lane stores at 16.
    expect_access_fault(
        MemAccess::scalar(AddrSpace::Private, Type::I32),
        true,
        0,
        16,
        3,
        4,
        |_| {
            (
                0,
                mem_fault(AddrSpace::Private, 16, 4, true, AccessCause::OutOfBounds),
            )
        },
    );
    // Uniform: 8 bytes of buffer address, plus nothing; reading at 8 is out.
    expect_access_fault(
        MemAccess::scalar(AddrSpace::Uniform, Type::I32),
        false,
        4,
        4,
        3,
        4,
        |_| {
            (
                1,
                mem_fault(AddrSpace::Uniform, 8, 4, false, AccessCause::OutOfBounds),
            )
        },
    );
    // An offset near 4 GiB must not wrap around.
    expect_access_fault(
        MemAccess::scalar(AddrSpace::Shared, Type::I32),
        false,
        0,
        0xffff_fffc,
        1,
        4,
        |_| {
            (
                0,
                mem_fault(
                    AddrSpace::Shared,
                    0xffff_fffc,
                    4,
                    false,
                    AccessCause::OutOfBounds,
                ),
            )
        },
    );
}

/// Loads through the address in uniform slot 0, whatever it points at.
fn load_from_slot0() -> (Kernel, Inst) {
    let mut kb = Kb::new("raw");
    let entry = kb.entry();
    let inst;
    {
        let mut b = kb.at(entry);
        let addr = buffer(&mut b, 0);
        load(&mut b, AddrSpace::Global, Type::I32, addr);
        inst = last_inst(&b);
        b.exit();
    }
    (kb.finish(), inst)
}

#[test]
fn use_after_free_and_unmapped_addresses() {
    let (k, inst) = load_from_slot0();
    for e in engines() {
        let mem = AddressSpace::new();
        let addr = mem.alloc(64).expect("alloc");
        mem.free(addr).expect("free");
        let mut d = dispatch_1d(1, 2, 2);
        d.uniforms = (addr + 8).to_le_bytes().to_vec();
        let f = e
            .run(&k, &d, &mem)
            .expect_err("reading freed memory must fault");
        assert_eq!(
            f,
            Fault {
                kernel: "raw".into(),
                block: Block::from_u32(0),
                inst: Some(inst),
                guest_pc: None,
                lane: lane([0; 3], 0),
                kind: mem_fault(
                    AddrSpace::Global,
                    addr + 8,
                    4,
                    false,
                    AccessCause::UseAfterFree
                ),
            },
            "engine {}",
            e.name()
        );
        d.uniforms = 0x10u64.to_le_bytes().to_vec();
        let f = e.run(&k, &d, &mem).expect_err("address 0x10 is unmapped");
        assert_eq!(
            f.kind,
            mem_fault(AddrSpace::Global, 0x10, 4, false, AccessCause::Unmapped),
            "engine {}",
            e.name()
        );
    }
}

#[test]
fn misaligned_global_atomic() {
    let mut kb = Kb::new("atomic_misaligned");
    let entry = kb.entry();
    let inst;
    {
        let mut b = kb.at(entry);
        let base = buffer(&mut b, 0);
        let two = c64(&mut b, 2);
        let addr = bin(&mut b, IBinOp::Add, base, two);
        let one = c32(&mut b, 1);
        b.ins(
            InstKind::Atomic {
                space: AddrSpace::Global,
                op: AtomicOp::Add,
                ty: Type::I32,
            },
            &[addr, one],
        );
        inst = last_inst(&b);
        b.exit();
    }
    let k = kb.finish();
    for (engine, f, addrs) in faults(&k, &dispatch_1d(1, 1, 1), &[vec![0; 16]], &[]) {
        assert_eq!(f.inst, Some(inst), "engine {engine}");
        assert_eq!(
            f.kind,
            mem_fault(
                AddrSpace::Global,
                addrs[0] + 2,
                4,
                true,
                AccessCause::Misaligned { align: 4 }
            ),
            "engine {engine}"
        );
    }
}

/// Lane 5 faults first in the schedule (its block comes first), lane 2 later; the
/// reported fault is lane 2's.
#[test]
fn lowest_lane_wins_over_the_first_fault_in_time() {
    let mut kb = Kb::new("lowest");
    let entry = kb.entry();
    let (early, rest, late, out) = (kb.block(), kb.block(), kb.block(), kb.block());
    let trap;
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let five = c32(&mut b, 5);
        let is5 = icmp(&mut b, IntCC::Eq, lid, five);
        b.branch(is5, call(early, &[]), call(rest, &[]));
        b.switch_to(early);
        b.ins(InstKind::Trap { code: 5 }, &[]);
        b.exit();
        b.switch_to(rest);
        let two = c32(&mut b, 2);
        let is2 = icmp(&mut b, IntCC::Eq, lid, two);
        b.branch(is2, call(late, &[]), call(out, &[]));
        b.switch_to(late);
        b.set_srcloc(Some(0x99));
        b.ins(InstKind::Trap { code: 2 }, &[]);
        trap = last_inst(&b);
        b.exit();
        b.switch_to(out);
        b.exit();
    }
    let k = kb.finish();
    for (engine, f, _) in faults(&k, &dispatch_1d(1, 8, 8), &[], &[]) {
        assert_eq!(
            f,
            Fault {
                kernel: "lowest".into(),
                block: late,
                inst: Some(trap),
                guest_pc: Some(0x99),
                lane: lane([0; 3], 2),
                kind: FaultKind::Trap { code: 2 },
            },
            "engine {engine}"
        );
    }
}

/// Lane 6 (second wave) traps in the first round; lane 1 (first wave) traps only
/// after a barrier. The reported fault is lane 1's.
#[test]
fn lowest_lane_wins_across_waves_and_barrier_rounds() {
    let mut kb = Kb::new("rounds");
    let entry = kb.entry();
    let (six, after, one, out) = (kb.block(), kb.block(), kb.block(), kb.block());
    {
        let mut b = kb.at(entry);
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let k6 = c32(&mut b, 6);
        let is6 = icmp(&mut b, IntCC::Eq, lid, k6);
        b.branch(is6, call(six, &[]), call(after, &[]));
        b.switch_to(six);
        b.ins(InstKind::Trap { code: 6 }, &[]);
        b.exit();
        b.switch_to(after);
        b.ins(InstKind::Barrier, &[]);
        let k1 = c32(&mut b, 1);
        let is1 = icmp(&mut b, IntCC::Eq, lid, k1);
        b.branch(is1, call(one, &[]), call(out, &[]));
        b.switch_to(one);
        b.ins(InstKind::Trap { code: 1 }, &[]);
        b.exit();
        b.switch_to(out);
        b.exit();
    }
    let k = kb.finish();
    for (engine, f, _) in faults(&k, &dispatch_1d(1, 8, 4), &[], &[]) {
        assert_eq!((f.block, f.lane), (one, lane([0; 3], 1)), "engine {engine}");
        assert_eq!(f.kind, FaultKind::Trap { code: 1 }, "engine {engine}");
    }
}

/// Faults in workgroups (1,0) (lane 5) and (0,1) (lane 0) of a 2x2 grid: the
/// linear order is x fastest, so (1,0) is reported.
#[test]
fn lowest_workgroup_wins() {
    let mut kb = Kb::new("groups");
    let entry = kb.entry();
    let (bad, out) = (kb.block(), kb.block());
    {
        let mut b = kb.at(entry);
        let wx = builtin(&mut b, Builtin::WorkgroupId(0));
        let wy = builtin(&mut b, Builtin::WorkgroupId(1));
        let lid = builtin(&mut b, Builtin::LocalIndex);
        let one = c32(&mut b, 1);
        let zero = c32(&mut b, 0);
        let five = c32(&mut b, 5);
        let x1 = icmp(&mut b, IntCC::Eq, wx, one);
        let y0 = icmp(&mut b, IntCC::Eq, wy, zero);
        let l5 = icmp(&mut b, IntCC::Eq, lid, five);
        let a = bin(&mut b, IBinOp::And, x1, y0);
        let first = bin(&mut b, IBinOp::And, a, l5);
        let x0 = icmp(&mut b, IntCC::Eq, wx, zero);
        let y1 = icmp(&mut b, IntCC::Eq, wy, one);
        let c = bin(&mut b, IBinOp::And, x0, y1);
        let l0 = icmp(&mut b, IntCC::Eq, lid, zero);
        let second = bin(&mut b, IBinOp::And, c, l0);
        let any = bin(&mut b, IBinOp::Or, first, second);
        b.branch(any, call(bad, &[]), call(out, &[]));
        b.switch_to(bad);
        b.ins(InstKind::Trap { code: 0x77 }, &[]);
        b.exit();
        b.switch_to(out);
        b.exit();
    }
    let k = kb.finish();
    let mut d = Dispatch::new([2, 2, 1], [8, 1, 1]);
    d.wave_size = 4;
    for (engine, f, _) in faults(&k, &d, &[], &[]) {
        assert_eq!(
            f.lane,
            LaneId {
                workgroup: [1, 0, 0],
                local: [5, 0, 0]
            },
            "engine {engine}"
        );
        assert_eq!(f.block, bad, "engine {engine}");
    }
}

/// A 2-D workgroup: the reported lane's local id is 2-D and the lowest linear
/// local index (x fastest) wins.
#[test]
fn lowest_lane_uses_linear_local_index() {
    let mut kb = Kb::new("local2d");
    let entry = kb.entry();
    let (bad, out) = (kb.block(), kb.block());
    {
        let mut b = kb.at(entry);
        let lx = builtin(&mut b, Builtin::LocalId(0));
        let ly = builtin(&mut b, Builtin::LocalId(1));
        // Faulting lanes: (3, 1) [linear 7] and (1, 2) [linear 9].
        let three = c32(&mut b, 3);
        let one = c32(&mut b, 1);
        let two = c32(&mut b, 2);
        let a1 = icmp(&mut b, IntCC::Eq, lx, three);
        let a2 = icmp(&mut b, IntCC::Eq, ly, one);
        let b1 = icmp(&mut b, IntCC::Eq, lx, one);
        let b2 = icmp(&mut b, IntCC::Eq, ly, two);
        let a = bin(&mut b, IBinOp::And, a1, a2);
        let bb = bin(&mut b, IBinOp::And, b1, b2);
        let any = bin(&mut b, IBinOp::Or, a, bb);
        b.branch(any, call(bad, &[]), call(out, &[]));
        b.switch_to(bad);
        b.ins(InstKind::Trap { code: 3 }, &[]);
        b.exit();
        b.switch_to(out);
        b.exit();
    }
    let k = kb.finish();
    let mut d = Dispatch::new([1, 1, 1], [4, 3, 1]);
    d.wave_size = 8;
    for (engine, f, _) in faults(&k, &d, &[], &[]) {
        assert_eq!(
            f.lane,
            LaneId {
                workgroup: [0; 3],
                local: [3, 1, 0]
            },
            "engine {engine}"
        );
    }
}
