//! `transform::WorkgroupPacking`: small workgroups run side by side as one
//! wave give the original run's memory and faults (lanes named as in the
//! original dispatch), builtins read anywhere in the kernel included.

mod promote_support;

use promote_support::{BASE, run};
use wavejit_ir::text::parse;
use wavejit_ir::transform::WorkgroupPacking;
use wavejit_ir::{Dispatch, Kernel, LaneId};

/// Lane `gid` loops `u[0]` times, then (in another block) stores
/// `wg.x * 1000 + wg.y * 100 + local.x * 10 + num_workgroups.y + loops` at
/// `BASE + 4 * gid`, or at `BASE + 4 * gid + bad` (`bad` = `u[4]`) for the
/// lane `gid == u[8]`.
fn kernel() -> Kernel {
    parse(&format!(
        "kernel @pack shared 0 private 0 {{
block0:
  v0 = const.i32 0
  v1 = load.uniform.i32 v0
  jump block1(v0)

block1(v2: i32):
  v3 = const.i32 1
  v4 = iadd.i32 v2, v3
  v5 = icmp.ult.i32 v4, v1
  br v5, block1(v4), block2

block2:
  v6 = workgroup_id.x
  v7 = workgroup_id.y
  v8 = local_id.x
  v9 = num_workgroups.x
  v10 = num_workgroups.y
  v11 = workgroup_size.x
  v12 = imul.i32 v7, v9
  v13 = iadd.i32 v12, v6
  v14 = imul.i32 v13, v11
  v15 = local_index
  v16 = iadd.i32 v14, v15
  v17 = const.i32 1000
  v18 = imul.i32 v6, v17
  v19 = const.i32 100
  v20 = imul.i32 v7, v19
  v21 = const.i32 10
  v22 = imul.i32 v8, v21
  v23 = iadd.i32 v18, v20
  v24 = iadd.i32 v23, v22
  v25 = iadd.i32 v24, v10
  v26 = iadd.i32 v25, v4
  v27 = const.i32 8
  v28 = load.uniform.i32 v27
  v29 = icmp.eq.i32 v16, v28
  v30 = const.i32 4
  v31 = load.uniform.i32 v30
  v32 = select.i32 v29, v31, v0
  v33 = const.i32 2
  v34 = shl.i32 v16, v33
  v35 = iadd.i32 v34, v32
  v36 = zext.i32.i64 v35
  v37 = const.i64 {BASE}
  v38 = iadd.i64 v37, v36
  store.global.i32 v38, v26
  exit
}}"
    ))
    .expect("kernel parses")
}

/// A grid of 5 x 7 workgroups of 3 lanes, one wave each; uniforms: the trip
/// count 4, the bad offset, the bad lane.
fn dispatch(bad: u32, bad_lane: u32) -> Dispatch {
    let mut d = Dispatch::new([5, 7, 1], [3, 1, 1]);
    d.wave_size = 32;
    d.uniforms = [4u32, bad, bad_lane]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    d
}

#[test]
fn packed_workgroups_store_what_the_original_ones_store() {
    let k = kernel();
    let d = dispatch(0, u32::MAX);
    let p = WorkgroupPacking::plan(&k, &d).expect("3-lane workgroups pack");
    // 35 workgroups of 3 lanes: all 35 in one wave of 105 lanes.
    assert_eq!(p.per_pack(), 35);
    let pd = p.dispatch(&d);
    assert_eq!(
        (pd.workgroups, pd.workgroup_size, pd.wave_size),
        ([1, 1, 1], [105, 1, 1], 105)
    );
    let (r0, m0) = run(&k, &d);
    let (r1, m1) = run(&p.kernel(&k), &pd);
    assert_eq!(r0, Ok(()));
    assert_eq!(r1, Ok(()));
    assert_eq!(m0, m1);
    // Workgroup (4, 6), lane 2 is lane 104: 4000 + 600 + 20 + 7 + 4.
    let at = 4 * 104;
    assert_eq!(u32::from_le_bytes(m1[at..at + 4].try_into().unwrap()), 4631);
}

#[test]
fn a_fault_names_the_original_lane() {
    let k = kernel();
    // Lane 3 * (3 * 5 + 4) + 1 = 58 (workgroup (4, 3), local 1) stores a
    // megabyte past the buffer.
    let d = dispatch(1 << 20, 58);
    let p = WorkgroupPacking::plan(&k, &d).expect("packs");
    let (r0, m0) = run(&k, &d);
    let (r1, m1) = run(&p.kernel(&k), &p.dispatch(&d));
    let f0 = r0.expect_err("the original faults");
    let f1 = r1
        .map_err(|f| p.original_fault(f))
        .expect_err("the packed run faults");
    assert_eq!(
        f0.lane,
        LaneId {
            workgroup: [4, 3, 0],
            local: [1, 0, 0]
        }
    );
    assert_eq!(f1, f0);
    // Workgroups below the faulting one stored theirs in both runs.
    assert_eq!(m0[..4 * 57], m1[..4 * 57]);
}

#[test]
fn workgroups_that_can_see_each_other_are_not_packed() {
    let d = dispatch(0, u32::MAX);
    let with = |line: &str| {
        parse(&format!(
            "kernel @k shared 64 private 0 {{
block0:
  v0 = const.i32 0
  {line}
  exit
}}"
        ))
        .expect("kernel parses")
    };
    assert!(WorkgroupPacking::plan(&with(""), &d).is_some());
    for line in [
        "barrier",
        "v1 = load.shared.i32 v0",
        "store.shared.i32 v0, v0",
        "v1 = const.i64 0\n  v2 = atomic.add.global.i32 v1, v0",
    ] {
        assert!(WorkgroupPacking::plan(&with(line), &d).is_none(), "{line}");
    }
    // Workgroups of a wave or more, or of more lanes than their wave, stay.
    let mut big = Dispatch::new([64, 1, 1], [16, 1, 1]);
    big.wave_size = 32;
    assert!(WorkgroupPacking::plan(&with(""), &big).is_none());
    let mut split = Dispatch::new([64, 1, 1], [8, 1, 1]);
    split.wave_size = 4;
    assert!(WorkgroupPacking::plan(&with(""), &split).is_none());
    // A prime workgroup count above the largest pack has no divisor to pack by.
    let prime = Dispatch::new([131, 1, 1], [1, 1, 1]);
    assert!(WorkgroupPacking::plan(&with(""), &prime).is_none());
}
