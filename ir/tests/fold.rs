//! Hand-written cases of `transform::fold_constants`: each kernel runs on the
//! golden interpreter before and after the pass with identical memory and
//! faults, and the folded kernel's shape and results are checked too.

mod promote_support;

use promote_support::{Buffer, fault_place, kernel_with, run, two_groups_of_8};
use wavejit_ir::text::print;
use wavejit_ir::transform::{FoldStats, fold_constants};
use wavejit_ir::verify::verify;
use wavejit_ir::{Dispatch, FaultKind, InstKind, Kernel, Terminator};

/// Lane setup shared by the cases: `%lane` (local index) and `%out`, this
/// lane's 64 output bytes in the test buffer (`%o4` .. `%o28` inside it).
const PROLOGUE: &str = "
  %lane = local_index
  %l64 = zext.i32.i64 %lane
  %c6 = const.i64 6
  %sh = shl.i64 %l64, %c6
  %base = const.i64 0x100000
  %out = iadd.i64 %base, %sh
  %c4 = const.i64 4
  %o4 = iadd.i64 %out, %c4
  %c8 = const.i64 8
  %o8 = iadd.i64 %out, %c8
  %c12 = const.i64 12
  %o12 = iadd.i64 %out, %c12
  %c16 = const.i64 16
  %o16 = iadd.i64 %out, %c16
  %c20 = const.i64 20
  %o20 = iadd.i64 %out, %c20
  %c24 = const.i64 24
  %o24 = iadd.i64 %out, %c24
  %c28 = const.i64 28
  %o28 = iadd.i64 %out, %c28
";

fn kernel(text: &str) -> Kernel {
    kernel_with(PROLOGUE, text)
}

fn dispatch() -> Dispatch {
    two_groups_of_8()
}

/// The u32 at byte `k` of lane `lane`'s output.
fn out(bytes: &[u8], lane: usize, k: usize) -> u32 {
    Buffer::u32_at(bytes, lane * 64 + k)
}

/// Folds a copy of `kernel`, checks that it verifies, runs the same as the
/// original (memory and fault), and that folding again changes nothing.
fn fold_and_compare(kernel: &Kernel, dispatch: &Dispatch) -> (Kernel, FoldStats) {
    verify(kernel).unwrap_or_else(|e| panic!("input does not verify: {e}"));
    let mut folded = kernel.clone();
    let stats = fold_constants(&mut folded).expect("verified input");
    if let Err(e) = verify(&folded) {
        panic!("folded kernel does not verify: {e}\n{}", print(&folded));
    }
    let before = run(kernel, dispatch);
    let after = run(&folded, dispatch);
    assert_eq!(
        before.0.clone().map_err(|f| fault_place(kernel, f)),
        after.0.clone().map_err(|f| fault_place(&folded, f)),
        "fault differs\n{}",
        print(&folded)
    );
    assert!(before.1 == after.1, "memory differs\n{}", print(&folded));
    let mut again = folded.clone();
    let second = fold_constants(&mut again).expect("verifies");
    assert_eq!(second, FoldStats::default(), "a second run finds nothing");
    assert_eq!(again, folded);
    (folded, stats)
}

/// Placed instructions that are not constants, by text opcode (first word
/// after `=`, or the whole line for instructions without results).
fn non_const_ops(k: &Kernel) -> Vec<String> {
    print(k)
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("block") && !l.starts_with("kernel") && *l != "}")
        .filter(|l| !l.contains("= const."))
        .filter(|l| !l.starts_with("jump") && !l.starts_with("br ") && *l != "exit")
        .filter(|l| !l.starts_with("table"))
        .map(|l| {
            let op = l.split_once("= ").map_or(l, |(_, r)| r);
            op.split_whitespace().next().unwrap_or("").to_string()
        })
        .collect()
}

fn terminators(k: &Kernel) -> Vec<&'static str> {
    k.blocks
        .values()
        .map(|b| match b.term {
            Some(Terminator::Jump(_)) => "jump",
            Some(Terminator::Branch { .. }) => "br",
            Some(Terminator::Table { .. }) => "table",
            Some(Terminator::Exit) => "exit",
            None => "none",
        })
        .collect()
}

#[test]
fn integer_ops_fold_to_their_defined_values() {
    let k = kernel(
        "kernel @ints {
block0:
  PROLOGUE
  %a = const.i32 0x80000000
  %m1 = const.i32 -1
  %z = const.i32 0
  %seven = const.i32 7
  %q = sdiv.i32 %a, %m1
  %d0 = udiv.i32 %seven, %z
  %r0 = srem.i32 %seven, %z
  %s = sshr.i32 %a, %seven
  %rot = rotl.i32 %a, %seven
  %c = clz.i32 %z
  %x = iadd.i32 %q, %rot
  %b = const.i16 0x1234
  %bz = zext.i16.i32 %b
  %bs = bswap.i32 %bz
  %f = sbfe.i32 %bs, %seven, %seven
  %ins = bfi.i32 %d0, %seven, %seven, %seven
  %lt = icmp.slt.i32 %a, %z
  %ltw = zext.i1.i32 %lt
  %sum = iadd.i32 %ltw, %lane
  store.global.i32 %out, %x
  store.global.i32 %o4, %d0
  store.global.i32 %o8, %r0
  store.global.i32 %o12, %s
  store.global.i32 %o16, %c
  store.global.i32 %o20, %f
  store.global.i32 %o24, %ins
  store.global.i32 %o28, %sum
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    // Everything on constants folds; the lane-dependent adds and the stores stay.
    assert_eq!(stats.folded.insts, 13);
    let mut ops = non_const_ops(&folded);
    ops.sort();
    assert_eq!(
        ops,
        [
            "iadd.i32",
            "iadd.i64",
            "iadd.i64",
            "iadd.i64",
            "iadd.i64",
            "iadd.i64",
            "iadd.i64",
            "iadd.i64",
            "iadd.i64",
            "local_index",
            "shl.i64",
            "store.global.i32",
            "store.global.i32",
            "store.global.i32",
            "store.global.i32",
            "store.global.i32",
            "store.global.i32",
            "store.global.i32",
            "store.global.i32",
            "zext.i32.i64"
        ]
    );
    let (_, bytes) = run(&folded, &dispatch());
    let lane = 5;
    let rot = 0x8000_0000u32.rotate_left(7);
    assert_eq!(out(&bytes, lane, 0), 0x8000_0000u32.wrapping_add(rot));
    assert_eq!(out(&bytes, lane, 4), u32::MAX, "x / 0 = all ones");
    assert_eq!(out(&bytes, lane, 8), 7, "x % 0 = x");
    assert_eq!(out(&bytes, lane, 12), 0xff00_0000);
    assert_eq!(out(&bytes, lane, 16), 32);
    // bswap(0x1234) = 0x34120000; bits 7..14 = 0, sign bit clear.
    assert_eq!(out(&bytes, lane, 20), 0);
    assert_eq!(out(&bytes, lane, 24), !(0x7f << 7) | (7 << 7));
    assert_eq!(out(&bytes, lane, 28), 1 + lane as u32);
}

#[test]
fn float_ops_fold_with_their_modes_and_flags() {
    // A denormal input under ftz, a canonical-NaN mode, a NaN payload kept
    // by propagation, saturation, and flags words that are stored.
    let k = kernel(
        "kernel @floats {
block0:
  PROLOGUE
  %den = const.f32 0x80000001
  %one = const.f32 1.0
  %tiny = const.f32 0x30800000
  %nan = const.f32 0x7f800123
  %zero = const.f32 0.0
  %a = fadd.f32 %den, %one ftz
  %b, %bf = fadd.f32 %one, %tiny flags
  %c = fmul.f32 %den, %one
  %d, %df = fdiv.f32 %zero, %zero flags nan=0x7fc00000
  %e = fadd.f32 %nan, %one
  %s = fadd.f32 %one, %one sat
  %h, %hf = fcvt.f32.f16 %tiny flags
  %lt, %ltf = fcmp.lt.f32 %nan, %one flags
  %i = ftos.f32.i32 %nan
  %ai = bitcast.f32.i32 %a
  %bi = bitcast.f32.i32 %b
  %ci = bitcast.f32.i32 %c
  %di = bitcast.f32.i32 %d
  %ei = bitcast.f32.i32 %e
  %si = bitcast.f32.i32 %s
  %hi = bitcast.f16.i16 %h
  %hw = zext.i16.i32 %hi
  %ltw = zext.i1.i32 %lt
  %flags = or.i32 %bf, %df
  %fl2 = shl.i32 %hf, %ltf
  %fl3 = or.i32 %flags, %fl2
  %mix = xor.i32 %hw, %ltw
  %mix2 = xor.i32 %mix, %i
  store.global.i32 %out, %ai
  store.global.i32 %o4, %bi
  store.global.i32 %o8, %ci
  store.global.i32 %o12, %di
  store.global.i32 %o16, %ei
  store.global.i32 %o20, %si
  store.global.i32 %o24, %fl3
  store.global.i32 %o28, %mix2
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    assert_eq!(stats.folded.insts, 23);
    let ops = non_const_ops(&folded);
    assert!(
        ops.iter().all(|o| o.starts_with("store")
            || o.starts_with("iadd")
            || o == "local_index"
            || o == "shl.i64"
            || o == "zext.i32.i64"),
        "{ops:?}"
    );
    let (_, bytes) = run(&folded, &dispatch());
    assert_eq!(
        out(&bytes, 2, 0),
        1.0f32.to_bits(),
        "ftz: -denormal + 1 = 1"
    );
    assert_eq!(out(&bytes, 2, 4), 1.0f32.to_bits(), "1 + 2^-30 rounds to 1");
    assert_eq!(out(&bytes, 2, 8), 0x8000_0001, "no ftz: the denormal stays");
    assert_eq!(out(&bytes, 2, 12), 0x7fc0_0000);
    assert_eq!(out(&bytes, 2, 16), 0x7fc0_0123, "the NaN operand, quieted");
    assert_eq!(out(&bytes, 2, 20), 1.0f32.to_bits(), "sat clamps 2 to 1");
    // NX from 1 + 2^-30, NV from 0/0; fcvt of 2^-30 to f16 underflows to 0
    // (UF|NX = 3), shifted by fcmp.lt's NV flag (0x10).
    assert_eq!(out(&bytes, 2, 24), 0x1 | 0x10 | (3 << 0x10));
    assert_eq!(out(&bytes, 2, 28), 0, "f16 zero, lt false, NaN to 0");
}

#[test]
fn selects_pick_their_operand() {
    let k = kernel(
        "kernel @selects {
block0:
  PROLOGUE
  %t = const.i1 1
  %f = const.i1 0
  %nine = const.i32 9
  %a = select.i32 %t, %lane, %nine
  %b = select.i32 %f, %lane, %nine
  %odd = trunc.i32.i1 %lane
  %c = select.i32 %odd, %a, %lane
  %d = select.i32 %odd, %nine, %lane
  store.global.i32 %out, %a
  store.global.i32 %o4, %b
  store.global.i32 %o8, %c
  store.global.i32 %o12, %d
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    // %a and %c (same operand once %a is %lane) go; %b is the constant 9;
    // %d depends on the lane.
    assert_eq!(stats.folded.selects, 2);
    assert_eq!(stats.folded.insts, 1);
    assert_eq!(
        non_const_ops(&folded)
            .iter()
            .filter(|o| o.starts_with("select"))
            .count(),
        1
    );
    let (_, bytes) = run(&folded, &dispatch());
    assert_eq!(
        (0..4)
            .map(|l| [
                out(&bytes, l, 0),
                out(&bytes, l, 4),
                out(&bytes, l, 8),
                out(&bytes, l, 12)
            ])
            .collect::<Vec<_>>(),
        [[0, 9, 0, 0], [1, 9, 1, 9], [2, 9, 2, 2], [3, 9, 3, 9]]
    );
}

#[test]
fn integer_identities_give_back_their_operand() {
    let k = kernel(
        "kernel @identities {
block0:
  PROLOGUE
  %z = const.i32 0
  %one = const.i32 1
  %m1 = const.i32 -1
  %w32 = const.i32 32
  %x = imul.i32 %lane, %lane
  %a = iadd.i32 %x, %z
  %b = iadd.i32 %z, %a
  %c = imul.i32 %one, %b
  %d = and.i32 %c, %m1
  %e = shl.i32 %d, %w32
  %f = udiv.i32 %e, %one
  %g = bfi.i32 %f, %lane, %one, %z
  %odd = trunc.i32.i1 %lane
  %oz = zext.i1.i32 %odd
  %t1 = icmp.ne.i32 %oz, %z
  %os = sext.i1.i32 %odd
  %t2 = icmp.eq.i32 %os, %m1
  %t = and.i1 %t1, %t2
  %s = select.i32 %t, %g, %z
  %n1 = isub.i32 %z, %x
  %n2 = shl.i32 %x, %one
  %fz = const.f32 0.0
  %fx = bitcast.i32.f32 %x
  %n3 = fadd.f32 %fx, %fz
  %n3i = bitcast.f32.i32 %n3
  %t3 = icmp.eq.i32 %oz, %z
  %t3w = zext.i1.i32 %t3
  store.global.i32 %out, %s
  store.global.i32 %o4, %n1
  store.global.i32 %o8, %n2
  store.global.i32 %o12, %n3i
  store.global.i32 %o16, %t3w
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    // %a .. %g (7), %t1, %t2 and then %t = %odd & %odd; the negation, the
    // shift by one, the float add of +0 (it turns -0 into +0) and icmp.eq (a
    // negation) stay.
    assert_eq!(stats.folded.identities, 10, "{}", print(&folded));
    let mut ops = non_const_ops(&folded);
    ops.retain(|o| !o.starts_with("store") && !o.ends_with(".i64") && o != "local_index");
    ops.sort();
    assert_eq!(
        ops,
        [
            "bitcast.f32.i32",
            "bitcast.i32.f32",
            "fadd.f32",
            "icmp.eq.i32",
            "imul.i32",
            "isub.i32",
            "select.i32",
            "shl.i32",
            "trunc.i32.i1",
            "zext.i1.i32",
            "zext.i1.i32",
        ]
    );
    let (_, bytes) = run(&folded, &dispatch());
    for l in 0..8u32 {
        let x = l * l;
        let want = if l % 2 == 1 { x } else { 0 };
        assert_eq!(out(&bytes, l as usize, 0), want);
        assert_eq!(out(&bytes, l as usize, 4), x.wrapping_neg());
        assert_eq!(out(&bytes, l as usize, 8), x << 1);
        assert_eq!(out(&bytes, l as usize, 16), 1 - l % 2);
    }
}

#[test]
fn a_bitcast_round_trip_gives_back_its_operand() {
    // The lifters' register round trip between float operations; a NaN
    // payload and -0 (in some lanes) must come through bit for bit.
    let k = kernel(
        "kernel @round_trip {
block0:
  PROLOGUE
  %s28 = const.i32 28
  %hi = shl.i32 %lane, %s28
  %nan = const.i32 0x7f812345
  %bits = or.i32 %hi, %nan
  %f = bitcast.i32.f32 %bits
  %h = const.f32 0.5
  %x = fmul.f32 %f, %h
  %xi = bitcast.f32.i32 %x
  %xf = bitcast.i32.f32 %xi
  %y = fadd.f32 %xf, %h
  %yi = bitcast.f32.i32 %y
  %back = bitcast.i32.f32 %bits
  %backi = bitcast.f32.i32 %back
  store.global.i32 %out, %yi
  store.global.i32 %o4, %backi
  store.global.i32 %o8, %xi
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    // %xf is %x and %backi is %bits: 2 identities, their bitcasts gone.
    assert_eq!(stats.folded.identities, 2, "{}", print(&folded));
    let mut ops = non_const_ops(&folded);
    ops.retain(|o| !o.starts_with("store") && !o.ends_with(".i64") && o != "local_index");
    ops.sort();
    assert_eq!(
        ops,
        [
            "bitcast.f32.i32",
            "bitcast.f32.i32",
            "bitcast.i32.f32",
            "fadd.f32",
            "fmul.f32",
            "or.i32",
            "shl.i32",
        ]
    );
    let (_, bytes) = run(&folded, &dispatch());
    for l in 0..8u32 {
        let bits = (l << 28) | 0x7f81_2345;
        assert_eq!(out(&bytes, l as usize, 4), bits);
    }
}

#[test]
fn constant_branches_become_jumps_and_dead_arms_empty() {
    // The exec-counter shape: a known counter compared, branched on, passed
    // through a join as the same constant from both arms.
    let k = kernel(
        "kernel @branches {
block0:
  PROLOGUE
  %zero = const.i32 0
  %two = const.i32 2
  %go = icmp.eq.i32 %zero, %zero
  br %go, block1(%zero), block2(%two)
block1(%p: i32):
  %v = iadd.i32 %p, %lane
  jump block3(%p, %v)
block2(%q: i32):
  store.global.i32 %o8, %q
  jump block3(%q, %q)
block3(%r: i32, %w: i32):
  %k = iadd.i32 %r, %two
  table %k, [block4, block4, block5], default block4
block4:
  trap 7
  exit
block5:
  %odd = trunc.i32.i1 %lane
  br %odd, block6(%k), block6(%k)
block6(%y: i32):
  store.global.i32 %out, %y
  store.global.i32 %o4, %w
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    assert_eq!(
        stats.folded.terminators, 3,
        "br on %go, the table, the twin br"
    );
    assert_eq!(stats.dead.unreachable_blocks, 2, "block2 and block4");
    // %p, %r (block2 is never entered, so only block1's edge counts) and %y;
    // block2's %q is never analysed.
    assert_eq!(stats.folded.params, 3);
    assert_eq!(
        terminators(&folded),
        ["jump", "jump", "exit", "jump", "exit", "jump", "exit"]
    );
    assert_eq!(
        folded.blocks.len(),
        k.blocks.len(),
        "block numbers are kept"
    );
    let (fault, bytes) = run(&folded, &dispatch());
    assert_eq!(fault, Ok(()));
    for l in 0..8 {
        assert_eq!((out(&bytes, l, 0), out(&bytes, l, 4)), (2, l as u32));
        assert_eq!(out(&bytes, l, 8), 0, "block2 never ran");
    }
}

#[test]
fn loop_parameters_fold_only_when_every_edge_agrees() {
    let k = kernel(
        "kernel @loops {
block0:
  PROLOGUE
  %zero = const.i32 0
  %one = const.i32 1
  %five = const.i32 5
  jump block1(%zero, %five, %zero)
block1(%i: i32, %c: i32, %dead: i32):
  %more = icmp.ult.i32 %i, %lane
  %i2 = iadd.i32 %i, %one
  %c2 = iadd.i32 %c, %zero
  %d2 = iadd.i32 %dead, %one
  br %more, block1(%i2, %c2, %d2), block2
block2:
  %r = iadd.i32 %i, %c
  store.global.i32 %out, %r
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    // %c stays 5 around the loop; %i does not; %dead only feeds itself.
    assert_eq!(stats.folded.params, 1);
    assert_eq!(stats.dead.params, 2, "%c (now unused) and %dead");
    assert_eq!(
        folded.blocks[wavejit_ir::Block::from_u32(1)].params.len(),
        1
    );
    let (_, bytes) = run(&folded, &dispatch());
    for l in 0..8u32 {
        assert_eq!(out(&bytes, l as usize, 0), l + 5);
    }
}

#[test]
fn a_loop_value_changed_only_behind_a_branch_never_taken_stays_constant() {
    // %k changes only in block2, which runs only if %k is not 7: it never is,
    // which a pass that looks at the loop edge by edge cannot see.
    let k = kernel(
        "kernel @sccp {
block0:
  PROLOGUE
  %zero = const.i32 0
  %one = const.i32 1
  %seven = const.i32 7
  jump block1(%zero, %seven)
block1(%i: i32, %k: i32):
  %c = icmp.ne.i32 %k, %seven
  br %c, block2, block3
block2:
  %k2 = iadd.i32 %k, %one
  jump block4(%k2)
block3:
  jump block4(%k)
block4(%k3: i32):
  %i2 = iadd.i32 %i, %one
  %more = icmp.ult.i32 %i2, %lane
  br %more, block1(%i2, %k3), block5
block5:
  %r = imul.i32 %k3, %i2
  store.global.i32 %out, %r
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    assert_eq!(stats.folded.params, 2, "%k and %k3");
    assert_eq!(stats.folded.terminators, 1);
    assert_eq!(stats.dead.unreachable_blocks, 1, "block2");
    assert_eq!(
        terminators(&folded),
        ["jump", "jump", "exit", "jump", "br", "exit"]
    );
    let (_, bytes) = run(&folded, &dispatch());
    for l in 0..8u32 {
        assert_eq!(out(&bytes, l as usize, 0), 7 * l.max(1));
    }
}

#[test]
fn a_runaway_loop_faults_at_the_same_step() {
    // The condition is a known true: folding turns the branch into a jump, and
    // the watchdog (blocks entered) must fire at the same block and count.
    let k = kernel(
        "kernel @runaway {
block0:
  PROLOGUE
  %one = const.i32 1
  %z = const.i32 0
  jump block1(%z)
block1(%i: i32):
  %t = icmp.eq.i32 %one, %one
  %i2 = iadd.i32 %i, %one
  %x = imul.i32 %one, %one
  store.global.i32 %out, %i2
  br %t, block2(%i2), block3
block2(%j: i32):
  %y = iadd.i32 %x, %x
  jump block1(%j)
block3:
  exit
}",
    );
    for limit in [1, 2, 3, 10, 11, 100] {
        let mut d = dispatch();
        d.step_limit = limit;
        let (folded, stats) = fold_and_compare(&k, &d);
        assert_eq!(stats.folded.terminators, 1);
        let (fault, bytes) = run(&folded, &d);
        let fault = fault.expect_err("never ends");
        assert_eq!(fault.kind, FaultKind::Watchdog { limit });
        // Lane 0 of workgroup 0 is reported; entering block `limit + 1`
        // alternates between block1 and block2.
        assert_eq!(fault.lane.local, [0, 0, 0]);
        let expect = if limit % 2 == 1 { 1 } else { 2 };
        assert_eq!(fault.block.as_u32(), expect, "limit {limit}");
        // Every lane stored its counter once per block1 it ran.
        assert_eq!(out(&bytes, 3, 0), (limit / 2) as u32);
    }
}

#[test]
fn dead_code_goes_unless_it_can_fault_or_talk_to_other_lanes() {
    let k = kernel(
        "kernel @dead private 4 {
block0:
  PROLOGUE
  %wg = workgroup_id.x
  %t = const.i1 1
  %one = const.i32 1
  %u = iadd.i32 %lane, %one
  %u2 = imul.i32 %u, %u
  %f = bitcast.i32.f32 %u2
  %g, %gf = fsqrt.f32 %f flags
  %far = const.i64 0x900000
  %ld = load.global.i32 %far
  %r = reduce.add.i32 %t, %lane
  store.global.i32 %out, %lane
  exit
}",
    );
    let (folded, stats) = fold_and_compare(&k, &dispatch());
    // workgroup_id, the add, mul, bitcast, sqrt, then `%one`; the unused
    // offsets of the prologue (o4 .. o28) and their constants too.
    assert_eq!(stats.dead.insts, 5 + 14 + 1);
    let mut ops = non_const_ops(&folded);
    ops.sort();
    assert_eq!(
        ops,
        [
            "iadd.i64",
            "load.global.i32",
            "local_index",
            "reduce.add.i32",
            "shl.i64",
            "store.global.i32",
            "zext.i32.i64"
        ]
    );
    // The dead load still faults, before and after.
    let (fault, _) = run(&folded, &dispatch());
    assert!(matches!(
        fault.expect_err("unmapped load").kind,
        FaultKind::Memory {
            addr: 0x90_0000,
            ..
        }
    ));
}

#[test]
fn a_trap_behind_a_constant_branch_stays_where_it_runs() {
    let k = kernel(
        "kernel @trap {
block0:
  PROLOGUE
  %three = const.i32 3
  %four = const.i32 4
  %big = icmp.ugt.i32 %four, %three
  store.global.i32 %out, %lane
  br %big, block1, block2
block1:
  trap 0x55
  exit
block2:
  exit
}",
    );
    let (folded, _) = fold_and_compare(&k, &dispatch());
    let (fault, _) = run(&folded, &dispatch());
    let fault = fault.expect_err("traps");
    assert_eq!(fault.kind, FaultKind::Trap { code: 0x55 });
    assert_eq!(fault.block.as_u32(), 1);
    assert!(matches!(
        fault.inst.map(|i| &folded.insts[i].kind),
        Some(InstKind::Trap { code: 0x55 })
    ));
}

#[test]
fn invalid_input_is_refused_untouched() {
    let mut k = Kernel::new("empty");
    assert!(fold_constants(&mut k).is_err());
    assert_eq!(k, Kernel::new("empty"));
}
