//! Hand-written cases of `transform::promote_private`: each kernel runs on the
//! golden interpreter before and after the pass with identical memory and
//! faults, and the lanes' results are also checked against known values.

mod promote_support;

use promote_support::{
    Buffer, kernel_with, private_accesses, promote_and_compare, run, two_groups_of_8,
};
use wavejit_ir::transform::{PromoteStats, promote_private};
use wavejit_ir::{AccessCause, Dispatch, FaultKind, Kernel};

/// Lane setup shared by the cases: `%lane` (local index) and `%out`, this
/// lane's 16 output bytes in the test buffer (`%out4`, `%out8` inside it).
const PROLOGUE: &str = "
  %lane = local_index
  %l64 = zext.i32.i64 %lane
  %c4 = const.i64 4
  %sh = shl.i64 %l64, %c4
  %base = const.i64 0x100000
  %out = iadd.i64 %base, %sh
  %out4 = iadd.i64 %out, %c4
  %c8 = const.i64 8
  %out8 = iadd.i64 %out, %c8
";

fn kernel(text: &str) -> Kernel {
    kernel_with(PROLOGUE, text)
}

fn dispatch() -> Dispatch {
    two_groups_of_8()
}

/// The u32 at byte `k` of lane `lane`'s output (workgroup 1 overwrites
/// workgroup 0: both compute the same per-local-index values).
fn out(bytes: &[u8], lane: usize, k: usize) -> u32 {
    Buffer::u32_at(bytes, lane * 16 + k)
}

#[test]
fn narrow_views_and_read_before_write() {
    let k = kernel(
        "kernel @narrow private 16 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %a1 = const.i32 1
  %a2 = const.i32 2
  %a4 = const.i32 4
  %never = load.private.i32 %a4
  %x = const.i32 0x8765fedc
  %y = iadd.i32 %x, %lane
  store.private.i32 %a0, %y
  %h = load.private.i32.s16 %a2
  %b = load.private.i16.u8 %a1
  %bb = zext.i16.i32 %b
  %s = iadd.i32 %h, %bb
  %s2 = iadd.i32 %s, %never
  %t = trunc.i32.i16 %lane
  store.private.i16.u8 %a2, %t
  %w = load.private.i32 %a0
  store.global.i32 %out, %s2
  store.global.i32 %out4, %w
  exit
}",
    );
    let (promoted, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats.slots, 2);
    assert_eq!((stats.loads, stats.stores, stats.params), (4, 2, 0));
    assert_eq!(private_accesses(&promoted), 0);
    let (fault, bytes) = run(&promoted, &dispatch());
    assert_eq!(fault, Ok(()));
    for lane in 0..8u32 {
        let l = lane as usize;
        assert_eq!(out(&bytes, l, 0), 0xffff_8765u32.wrapping_add(0xfe));
        assert_eq!(out(&bytes, l, 4), 0x8700_fedc + lane + (lane << 16));
    }
}

#[test]
fn loop_carries_slots_in_block_params() {
    let k = kernel(
        "kernel @loop private 16 {
block0:
  PROLOGUE
  %zero = const.i32 0
  %one = const.i32 1
  %a0 = const.i32 0
  %a8 = const.i32 8
  store.private.i32 %a0, %zero
  jump block1
block1:
  %i = load.private.i32 %a0
  %c = icmp.ult.i32 %i, %lane
  br %c, block2, block3
block2:
  %s = load.private.i32 %a8
  %s2 = iadd.i32 %s, %i
  store.private.i32 %a8, %s2
  %i2 = iadd.i32 %i, %one
  store.private.i32 %a0, %i2
  jump block1
block3:
  %r = load.private.i32 %a8
  store.global.i32 %out, %r
  exit
}",
    );
    let (promoted, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats.params, 2, "i and sum at the loop header");
    assert_eq!(private_accesses(&promoted), 0);
    let (_, bytes) = run(&promoted, &dispatch());
    for lane in 0..8u32 {
        assert_eq!(
            out(&bytes, lane as usize, 0),
            lane * lane.saturating_sub(1) / 2
        );
    }
}

#[test]
fn diamond_with_a_slot_written_in_one_branch_only() {
    let k = kernel(
        "kernel @diamond private 8 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %a4 = const.i32 4
  %zero = const.i32 0
  %one = const.i32 1
  %seven = const.i32 7
  store.private.i32 %a4, %seven
  %odd = and.i32 %lane, %one
  %c = icmp.ne.i32 %odd, %zero
  br %c, block1, block2
block1:
  %v = imul.i32 %lane, %seven
  store.private.i32 %a0, %v
  store.private.i32 %a4, %lane
  jump block3
block2:
  %x = const.i32 100
  store.private.i32 %a4, %x
  jump block3
block3:
  %r0 = load.private.i32 %a0
  %r4 = load.private.i32 %a4
  store.global.i32 %out, %r0
  store.global.i32 %out4, %r4
  exit
}",
    );
    let (promoted, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats.params, 2);
    let (_, bytes) = run(&promoted, &dispatch());
    for lane in 0..8u32 {
        let l = lane as usize;
        if lane % 2 == 1 {
            assert_eq!((out(&bytes, l, 0), out(&bytes, l, 4)), (7 * lane, lane));
        } else {
            assert_eq!((out(&bytes, l, 0), out(&bytes, l, 4)), (0, 100));
        }
    }
}

#[test]
fn a_dynamic_access_promotes_nothing() {
    let k = kernel(
        "kernel @dynamic private 16 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %three = const.i32 3
  %two = const.i32 2
  store.private.i32 %a0, %lane
  %m = and.i32 %lane, %three
  %d = shl.i32 %m, %two
  %v = load.private.i32 %d
  store.global.i32 %out, %v
  exit
}",
    );
    let (promoted, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats, PromoteStats::default());
    assert_eq!(promoted, k);
}

#[test]
fn faulting_accesses_stay_and_fault_the_same() {
    // Lane 3 loads misaligned at 2 (overlapping slot 0..4, which must stay in
    // memory); lane 5 stores out of bounds; the slot at 8 is promoted.
    let k = kernel(
        "kernel @faults private 16 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %a2 = const.i32 2
  %a8 = const.i32 8
  %a16 = const.i32 16
  %n3 = const.i32 3
  %n5 = const.i32 5
  store.private.i32 %a0, %lane
  store.private.i32 %a8, %lane
  %is3 = icmp.eq.i32 %lane, %n3
  br %is3, block1, block2
block1:
  %bad = load.private.i32 %a2
  store.global.i32 %out4, %bad
  jump block2
block2:
  %is5 = icmp.eq.i32 %lane, %n5
  br %is5, block3, block4
block3:
  store.private.i32 %a16, %lane
  jump block4
block4:
  %r0 = load.private.i32 %a0
  %r8 = load.private.i32 %a8
  store.global.i32 %out, %r0
  store.global.i32 %out8, %r8
  exit
}",
    );
    let (promoted, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats.slots, 1, "only the slot at 8");
    assert_eq!(private_accesses(&promoted), 4);
    let (fault, _) = run(&promoted, &dispatch());
    let fault = fault.expect_err("lane 3 faults");
    assert_eq!(fault.lane.local, [3, 0, 0]);
    assert!(matches!(
        fault.kind,
        FaultKind::Memory {
            cause: AccessCause::Misaligned { align: 4 },
            addr: 2,
            ..
        }
    ));
}

#[test]
fn cross_lane_ops_and_barriers_see_promoted_values() {
    let k = kernel(
        "kernel @wave private 8 shared 64 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %a4 = const.i32 4
  %one = const.i32 1
  %t = const.i1 1
  %n3 = const.i32 3
  %sq = imul.i32 %lane, %lane
  store.private.i32 %a0, %sq
  barrier
  %v = load.private.i32 %a0
  %odd = and.i32 %lane, %one
  %m = icmp.ne.i32 %odd, %a0
  br %m, block1, block2
block1:
  %s = reduce.add.i32 %t, %v
  store.private.i32 %a4, %s
  jump block2
block2:
  barrier
  %w = load.private.i32 %a4
  %x = shuffle.xor.i32 %t, %w, %one
  store.global.i32 %out, %w
  store.global.i32 %out4, %x
  exit
}",
    );
    let (promoted, _) = promote_and_compare(&k, &dispatch());
    assert_eq!(private_accesses(&promoted), 0);
    let (_, bytes) = run(&promoted, &dispatch());
    // Wave of 4: the odd lanes 1 and 3 (5 and 7) reduce their squares together.
    assert_eq!(out(&bytes, 1, 0), 1 + 9);
    assert_eq!(out(&bytes, 7, 0), 25 + 49);
    assert_eq!(out(&bytes, 6, 0), 0);
    assert_eq!(out(&bytes, 6, 4), 25 + 49);
}

#[test]
fn unreachable_predecessors_pass_zeros() {
    let k = kernel(
        "kernel @unreachable private 4 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %one = const.i32 1
  %odd = and.i32 %lane, %one
  %c = icmp.ne.i32 %odd, %a0
  store.private.i32 %a0, %lane
  br %c, block1, block2
block1:
  %five = const.i32 5
  store.private.i32 %a0, %five
  jump block3
block2:
  jump block3
block3:
  %r = load.private.i32 %a0
  store.global.i32 %out, %r
  exit
block4:
  %nine = const.i32 9
  store.private.i32 %a0, %nine
  %u = load.private.i32 %a0
  jump block3
}",
    );
    let (promoted, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats.params, 1);
    assert_eq!(private_accesses(&promoted), 2, "block4 keeps its accesses");
    let (_, bytes) = run(&promoted, &dispatch());
    assert_eq!(out(&bytes, 2, 0), 2);
    assert_eq!(out(&bytes, 3, 0), 5);
}

#[test]
fn mixed_types_vectors_and_wide_slots() {
    let k = kernel(
        "kernel @mixed private 32 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %a8 = const.i32 8
  %a16 = const.i32 16
  %a20 = const.i32 20
  %a24 = const.i32 24
  %f = const.f32 1.5
  store.private.f32 %a0, %f
  %fi = load.private.i32 %a0
  %d = const.f64 -2.25
  store.private.f64 %a8, %d
  %d2 = load.private.f64 %a8
  %di = bitcast.f64.i64 %d2
  %big = const.i64 0x1122334455667788
  %lw = zext.i32.i64 %lane
  %b2 = iadd.i64 %big, %lw
  store.private.i64 %a16, %b2
  %lo = load.private.i32 %a16
  %hi = load.private.i32.s8 %a20 align 4
  %hs = load.private.f32 %a20
  %hsi = bitcast.f32.i32 %hs
  store.private.i32x2 %a24, %lo, %hi
  %v0, %v1 = load.private.i32x2 %a24 align 8
  %x = xor.i32 %v0, %v1
  %y = xor.i32 %x, %hsi
  store.global.i32 %out, %fi
  store.global.i32 %out4, %y
  store.global.i64 %out8, %di
  exit
}",
    );
    let (promoted, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats.slots, 3, "0..4, 8..16 and 16..24; the vector stays");
    assert_eq!(private_accesses(&promoted), 2);
    let (_, bytes) = run(&promoted, &dispatch());
    assert_eq!(out(&bytes, 3, 0), 1.5f32.to_bits());
    assert_eq!(out(&bytes, 3, 4), (0x5566_778b ^ 0x44) ^ 0x1122_3344);
    assert_eq!(
        u64::from(out(&bytes, 3, 8)) | (u64::from(out(&bytes, 3, 12)) << 32),
        (-2.25f64).to_bits()
    );
}

#[test]
fn tables_and_repeated_targets_get_arguments_per_edge() {
    let k = kernel(
        "kernel @table private 4 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %three = const.i32 3
  %sel = and.i32 %lane, %three
  table %sel, [block1, block2, block1], default block3
block1:
  %one = const.i32 1
  store.private.i32 %a0, %one
  %c = icmp.eq.i32 %sel, %a0
  br %c, block3, block3
block2:
  %two = const.i32 2
  store.private.i32 %a0, %two
  jump block3
block3:
  %r = load.private.i32 %a0
  store.global.i32 %out, %r
  exit
}",
    );
    let (_, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats.params, 1);
    let (_, bytes) = run(&k, &dispatch());
    assert_eq!(
        (0..4).map(|l| out(&bytes, l, 0)).collect::<Vec<_>>(),
        [1, 2, 1, 0]
    );
}

#[test]
fn an_entry_that_is_a_branch_target_promotes_nothing() {
    let k = kernel(
        "kernel @entry_loop private 4 {
block0:
  PROLOGUE
  %a0 = const.i32 0
  %one = const.i32 1
  %i = load.private.i32 %a0
  %i2 = iadd.i32 %i, %one
  store.private.i32 %a0, %i2
  %c = icmp.ult.i32 %i2, %lane
  br %c, block0, block1
block1:
  store.global.i32 %out, %i2
  exit
}",
    );
    let (promoted, stats) = promote_and_compare(&k, &dispatch());
    assert_eq!(stats, PromoteStats::default());
    assert_eq!(promoted, k);
}

#[test]
fn invalid_input_is_refused_untouched() {
    let mut k = Kernel::new("empty");
    assert!(promote_private(&mut k).is_err());
    assert_eq!(k, Kernel::new("empty"));
}

#[test]
fn compact_drops_unplaced_instructions_and_their_values() {
    let mut k = kernel(
        "kernel @compact private 4 {
block0:
  %a = const.i32 1
  %b = const.i32 2
  %c = iadd.i32 %a, %a
  jump block1(%c)
block1(%p: i32):
  exit
}",
    );
    // Unplace `%b` (the block's second instruction), as a transform would.
    k.blocks[wavejit_ir::Block::from_u32(0)].insts.remove(1);
    assert!(
        wavejit_ir::verify::verify(&k).is_err(),
        "an unplaced instruction"
    );
    wavejit_ir::transform::compact(&mut k);
    wavejit_ir::verify::verify(&k).expect("compacted kernel verifies");
    assert_eq!((k.insts.len(), k.values.len()), (2, 3));
    assert_eq!(
        wavejit_ir::text::print(&k),
        wavejit_ir::text::print(&kernel(
            "kernel @compact private 4 {
block0:
  %a = const.i32 1
  %c = iadd.i32 %a, %a
  jump block1(%c)
block1(%p: i32):
  exit
}"
        ))
    );
}
