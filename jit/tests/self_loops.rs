//! Blocks that branch to themselves run each lane's iterations to the end
//! before the next lane (`plan::Segment::self_loop`). The JIT must still agree
//! with the interpreter bit for bit: final block parameters read after the
//! loop, per-lane trip counts, faults and the watchdog inside the loop, and the
//! loops that must not run that way (a store inside, an exit to a lower pc).

mod support;

use support::{BUF, RO, compare, parse, u32s};
use wavejit_ir::{Dispatch, FaultKind, Kernel};
use wavejit_jit::{Jit, JitConfig};

/// Per-lane loops of `kernel` as the JIT plans it.
fn per_lane_loops(kernel: &Kernel) -> usize {
    match Jit::new(JitConfig::default()).compile(kernel, 64) {
        Ok(c) => c.per_lane_loops(),
        Err(e) => panic!("test kernel does not compile: {e}"),
    }
}

/// ro[k] = k for k < 64 (as u32).
fn ro_counting() -> Vec<u8> {
    (0..64u32).flat_map(|k| k.to_le_bytes()).collect()
}

/// Lane i sums ro[i + 3j] for j < (i mod 5) + 1 + (uniform at 16), then stores
/// the sum and the loop's final counter (a block parameter read after the
/// loop) at out[2i], out[2i + 1]. `{LIMIT}` is replaced by the trip bound.
const SUM: &str = "kernel @sum shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 5
  v2 = urem.i32 v0, v1
  v3 = const.i32 1
  v4 = iadd.i32 v2, v3
  v5 = const.i32 16
  v6 = load.uniform.i32 v5
  v7 = iadd.i32 v4, v6
  v8 = const.i32 0
  jump block1(v8, v8, v0)

block1(v9: i32, v10: i32, v11: i32):
  v12 = zext.i32.i64 v11
  v13 = const.i64 2
  v14 = shl.i64 v12, v13
  v15 = const.i32 0
  v16 = load.uniform.i64 v15
  v17 = iadd.i64 v16, v14
  v18 = load.global.i32 v17
  v19 = iadd.i32 v9, v18
  v20 = const.i32 1
  v21 = iadd.i32 v10, v20
  v22 = const.i32 3
  v23 = iadd.i32 v11, v22
  v24 = icmp.ult.i32 v21, v7
  br v24, block1(v19, v21, v23), block2

block2:
  v25 = const.i32 8
  v26 = load.uniform.i64 v25
  v27 = zext.i32.i64 v0
  v28 = const.i64 3
  v29 = shl.i64 v27, v28
  v30 = iadd.i64 v26, v29
  store.global.i32 v30, v19
  v31 = const.i64 4
  v32 = iadd.i64 v30, v31
  store.global.i32 v32, v10
  exit
}
";

fn sum_dispatch(extra_trips: u32, lanes: u32) -> Dispatch {
    let mut d = Dispatch::new([2, 1, 1], [lanes, 1, 1]);
    d.uniforms = [RO.to_le_bytes(), BUF.to_le_bytes()].concat();
    d.uniforms.extend_from_slice(&extra_trips.to_le_bytes());
    d
}

#[test]
fn per_lane_trip_counts_and_final_parameters() {
    let k = parse(SUM);
    assert_eq!(per_lane_loops(&k), 1, "the loop is not run per lane");
    let out = compare(&k, &sum_dispatch(0, 8), &[0; 64], &ro_counting());
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for i in 0..8u32 {
        let trips = i % 5 + 1;
        let sum: u32 = (0..trips).map(|j| i + 3 * j).sum();
        assert_eq!(got[2 * i as usize], sum, "sum of lane {i}");
        // The counter parameter as it entered the last iteration.
        assert_eq!(got[2 * i as usize + 1], trips - 1, "counter of lane {i}");
    }
}

#[test]
fn a_fault_inside_the_loop_is_the_interpreters() {
    // 16 more trips: lane i reads ro[i + 3j] for j <= i mod 5 + 16, which
    // passes the 64 readable words first for lane 4 (ro[64]).
    let k = parse(SUM);
    let out = compare(&k, &sum_dispatch(16, 8), &[0; 64], &ro_counting());
    let fault = out.fault.expect("no fault");
    assert!(
        matches!(fault.kind, FaultKind::Memory { addr, write: false, .. } if addr == RO + 256),
        "{fault}"
    );
    assert_eq!(fault.lane.local[0], 4);
    assert_eq!(fault.lane.workgroup[0], 0);
}

#[test]
fn the_watchdog_stops_a_runaway_loop() {
    // Lane 2 never leaves: its counter starts past the bound.
    let text = "kernel @spin shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 2
  v2 = icmp.eq.i32 v0, v1
  v3 = const.i32 100
  v4 = const.i32 0
  v5 = select.i32 v2, v3, v4
  jump block1(v5)

block1(v6: i32):
  v7 = const.i32 1
  v8 = iadd.i32 v6, v7
  v9 = const.i32 4
  v10 = icmp.ne.i32 v8, v9
  br v10, block1(v8), block2

block2:
  exit
}
";
    let k = parse(text);
    assert_eq!(per_lane_loops(&k), 1);
    let mut d = Dispatch::new([1, 1, 1], [4, 1, 1]);
    d.step_limit = 1000;
    let out = compare(&k, &d, &[0; 16], &[]);
    let fault = out.fault.expect("no watchdog fault");
    assert!(
        matches!(fault.kind, FaultKind::Watchdog { limit: 1000 }),
        "{fault}"
    );
    assert_eq!(fault.lane.local[0], 2);
}

#[test]
fn loops_that_other_lanes_could_observe_run_in_lockstep() {
    // A store inside the loop: lane i reads what lane i-1 stored, so the
    // lanes must take the iterations together.
    let stores = "kernel @chain shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 0
  jump block1(v1)

block1(v2: i32):
  v3 = const.i32 8
  v4 = load.uniform.i64 v3
  v5 = zext.i32.i64 v0
  v6 = const.i64 2
  v7 = shl.i64 v5, v6
  v8 = iadd.i64 v4, v7
  v9 = const.i64 4
  v10 = isub.i64 v8, v9
  v11 = const.i32 0
  v12 = icmp.eq.i32 v0, v11
  v13 = select.i64 v12, v8, v10
  v14 = load.global.i32 v13
  v15 = iadd.i32 v14, v0
  v16 = const.i32 1
  v17 = iadd.i32 v15, v16
  store.global.i32 v8, v17
  v18 = iadd.i32 v2, v16
  v19 = const.i32 3
  v20 = icmp.ult.i32 v18, v19
  br v20, block1(v18), block2

block2:
  exit
}
";
    let k = parse(stores);
    assert_eq!(per_lane_loops(&k), 0, "a loop with a store ran per lane");
    let mut d = Dispatch::new([1, 1, 1], [4, 1, 1]);
    d.uniforms = [RO.to_le_bytes(), BUF.to_le_bytes()].concat();
    let out = compare(&k, &d, &[0; 16], &[]);
    assert_eq!(out.fault, None);
    // Every lane loads before any lane stores, so in each iteration lane i
    // reads lane i-1's value of the iteration before: out[i] = old out[i-1] +
    // i + 1 (lane 0: old out[0] + 1). Lane-major order would give 3, 9, 18, 30.
    assert_eq!(u32s(&out.memory), vec![3, 4, 6, 9]);

    // An exit to a lower pc: lanes that left (and store to out[0]) run before
    // the others take their next iteration (which reads out[0]).
    let lower = "kernel @lower shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 0
  jump block2(v1, v1)

block1:
  v2 = const.i32 8
  v3 = load.uniform.i64 v2
  v4 = const.i32 5
  v5 = iadd.i32 v0, v4
  store.global.i32 v3, v5
  v6 = zext.i32.i64 v0
  v7 = const.i64 2
  v8 = shl.i64 v6, v7
  v9 = iadd.i64 v3, v8
  v10 = const.i64 4
  v11 = iadd.i64 v9, v10
  store.global.i32 v11, v16
  exit

block2(v12: i32, v13: i32):
  v14 = const.i32 8
  v15 = load.uniform.i64 v14
  v20 = load.global.i32 v15
  v16 = iadd.i32 v12, v20
  v17 = const.i32 1
  v18 = iadd.i32 v13, v17
  v19 = icmp.ult.i32 v18, v0
  br v19, block2(v16, v18), block1
}
";
    let k = parse(lower);
    assert_eq!(
        per_lane_loops(&k),
        0,
        "a loop leaving to a lower pc ran per lane"
    );
    let out = compare(&k, &d, &[0; 32], &[]);
    assert_eq!(out.fault, None);
    // Lanes 0 and 1 read 0 and leave (out[0] = 6); lane 2 reads 6 and leaves
    // (out[0] = 7); lane 3 adds 7.
    assert_eq!(u32s(&out.memory)[..5], [8, 0, 0, 6, 13]);
}

/// A self-loop whose state is an i64, an i1 and an i32 parameter (held in
/// registers while a chunk iterates), leaving through an edge with
/// arguments; then a second self-loop, so each lane's steps from the first
/// count against the limit in the second. Lane i makes i mod 7 + 1 trips of
/// the first loop and 3 of the second; out[2i] = low word of the i64 sum,
/// out[2i + 1] = the flag's parity word plus 10 * the trips.
const HELD: &str = "kernel @held shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 7
  v2 = urem.i32 v0, v1
  v3 = const.i32 1
  v4 = iadd.i32 v2, v3
  v5 = const.i64 0
  v6 = const.i1 0
  v7 = const.i32 0
  jump block1(v5, v6, v7)

block1(v8: i64, v9: i1, v10: i32):
  v11 = zext.i32.i64 v10
  v12 = const.i64 4294967296
  v13 = imul.i64 v11, v12
  v14 = iadd.i64 v8, v13
  v15 = zext.i32.i64 v0
  v16 = iadd.i64 v14, v15
  v17 = const.i1 1
  v18 = xor.i1 v9, v17
  v19 = const.i32 1
  v20 = iadd.i32 v10, v19
  v21 = icmp.ult.i32 v20, v4
  br v21, block1(v16, v18, v20), block2(v16, v18, v20)

block2(v22: i64, v23: i1, v24: i32):
  v25 = const.i32 0
  jump block3(v25)

block3(v26: i32):
  v27 = const.i32 1
  v28 = iadd.i32 v26, v27
  v29 = const.i32 3
  v30 = icmp.ult.i32 v28, v29
  br v30, block3(v28), block4

block4:
  v31 = const.i32 8
  v32 = load.uniform.i64 v31
  v33 = zext.i32.i64 v0
  v34 = const.i64 3
  v35 = shl.i64 v33, v34
  v36 = iadd.i64 v32, v35
  v37 = trunc.i64.i32 v22
  store.global.i32 v36, v37
  v38 = zext.i1.i32 v23
  v39 = const.i32 10
  v40 = imul.i32 v24, v39
  v41 = iadd.i32 v38, v40
  v42 = const.i64 4
  v43 = iadd.i64 v36, v42
  store.global.i32 v43, v41
  exit
}
";

#[test]
fn held_parameters_of_every_width_and_exit_arguments() {
    let k = parse(HELD);
    assert_eq!(per_lane_loops(&k), 2);
    let mut d = Dispatch::new([2, 1, 1], [20, 1, 1]);
    d.uniforms = [RO.to_le_bytes(), BUF.to_le_bytes()].concat();
    let out = compare(&k, &d, &[0; 8 * 20], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for i in 0..20u32 {
        let trips = i % 7 + 1;
        // Each trip adds the counter in the high word and i in the low one.
        assert_eq!(got[2 * i as usize], i * trips, "sum of lane {i}");
        assert_eq!(
            got[2 * i as usize + 1],
            trips % 2 + 10 * trips,
            "flag and trips of lane {i}"
        );
    }
    // Steps per lane: block0, trips + 1 entries into block1/block2, 3 into
    // block3 and one into block4: 6 + trips. A limit of 11 stops lane 5
    // (6 trips) entering block4 and lane 6 (7 trips) at its third entry
    // into block3, inside the second loop.
    d.step_limit = 11;
    let out = compare(&k, &d, &[0; 8 * 20], &[]);
    let fault = out
        .fault
        .expect("lanes with 6 or more trips exceed 11 steps");
    assert_eq!(fault.lane.local[0], 5);
    assert_eq!(fault.kind, FaultKind::Watchdog { limit: 11 });
    assert_eq!(fault.block, wavejit_ir::Block::from_u32(4));
}
