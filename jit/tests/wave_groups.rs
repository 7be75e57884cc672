//! The gang scheduler's shortcuts for converged waves: a wave that parks at
//! a barrier with every lane parks and is released as one word, and a
//! converged wave that branches both ways runs the lower side, then the
//! other, and joins where they meet without looking at every lane's pc.
//! Each case is built so that a different order of the groups, a join at
//! the wrong place or a lost lane changes the bits: the memory order inside
//! a wave is observable through shared memory without a barrier, so the
//! interpreter's lowest-pc-first schedule is checked, not only the sums.

mod support;

use support::{PROLOGUE, compare, parse, u32s};
use wavejit_ir::{Dispatch, FaultKind};

/// After [`PROLOGUE`]: the lane's shared-memory word, 4 * li (v8).
const SLOT: &str = "  v7 = const.i32 2
  v8 = shl.i32 v0, v7
";

/// Odd lanes store `100 + li` to shared[li] in the then-side; at the join
/// every lane reads shared[li ^ 1]. Within a wave the then-side runs
/// before the join (lower pc), so even lanes see their odd neighbour's
/// value; odd lanes read an even slot nobody wrote (0). Waves run one
/// after another, so wave boundaries do not matter here, but a join
/// placed before the then-side, or the then-side run per lane after the
/// join, changes the even lanes' values.
#[test]
fn both_sides_of_a_converged_branch_run_in_pc_order_and_join() {
    let k = parse(&format!(
        "kernel @split_join shared 512 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i32 1
  v21 = and.i32 v0, v20
  v22 = const.i32 0
  v23 = icmp.ne.i32 v21, v22
  br v23, block1, block2

block1:
  v30 = const.i32 100
  v31 = iadd.i32 v0, v30
  store.shared.i32 v8, v31
  jump block2

block2:
  v40 = xor.i32 v0, v20
  v41 = shl.i32 v40, v7
  v42 = load.shared.i32 v41
  store.global.i32 v6, v42
  exit
}}
"
    ));
    for (wg, wave) in [(64, 32), (40, 32), (24, 8), (128, 64)] {
        let mut d = Dispatch::new([3, 1, 1], [wg, 1, 1]);
        d.wave_size = wave;
        let n = 3 * wg as usize;
        let out = compare(&k, &d, &vec![0; 4 * n], &[]);
        assert_eq!(out.fault, None);
        let got = u32s(&out.memory);
        for (i, &v) in got.iter().enumerate() {
            let li = (i % wg as usize) as u32;
            let neighbour = li ^ 1;
            let want = if li.is_multiple_of(2) && neighbour < wg {
                100 + neighbour
            } else {
                0
            };
            assert_eq!(v, want, "lane {i} (workgroup size {wg}, waves of {wave})");
        }
    }
}

/// The then-side leaves for a block above the join block (`block4` past
/// `block3`): the join block runs next for the other lanes, then both
/// groups meet at `block4`. Lanes with li % 3 == 0 take the then-side.
/// Each block appends its mark to the lane's word in shared memory and
/// the last block reads the next lane's word, so the order in which the
/// groups ran is in the result.
#[test]
fn a_group_that_jumps_past_the_other_waits_for_it() {
    let k = parse(&format!(
        "kernel @leapfrog shared 512 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i32 3
  v21 = urem.i32 v0, v20
  v22 = const.i32 0
  v23 = icmp.eq.i32 v21, v22
  store.shared.i32 v8, v22
  br v23, block1, block3

block1:
  v30 = const.i32 7
  store.shared.i32 v8, v30
  jump block4

block3:
  v31 = const.i32 4
  v32 = iadd.i32 v0, v31
  v33 = urem.i32 v32, v2
  v34 = shl.i32 v33, v7
  v35 = load.shared.i32 v34
  v36 = const.i32 10
  v37 = imul.i32 v35, v36
  v38 = const.i32 5
  v39 = iadd.i32 v37, v38
  store.shared.i32 v8, v39
  jump block4

block4:
  v40 = const.i32 1
  v41 = iadd.i32 v0, v40
  v42 = urem.i32 v41, v2
  v43 = shl.i32 v42, v7
  v44 = load.shared.i32 v43
  v45 = load.shared.i32 v8
  v46 = const.i32 1000
  v47 = imul.i32 v45, v46
  v48 = iadd.i32 v47, v44
  store.global.i32 v6, v48
  exit
}}
"
    ));
    let mut d = Dispatch::new([2, 1, 1], [48, 1, 1]);
    d.wave_size = 16;
    let out = compare(&k, &d, &vec![0; 4 * 96], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    // Model of the interpreter's order, wave by wave: all lanes store 0;
    // then-lanes store 7; the other lanes (in lane order per instruction)
    // read li + 4's word (7 if that lane took the then-side and is in a
    // wave that already ran, else whatever it holds) and store 10x + 5;
    // then every lane reads its own word and the next lane's.
    let (wg, wave) = (48usize, 16usize);
    for g in 0..2 {
        let mut sh = [0u32; 48];
        for w in 0..wg / wave {
            let lanes = w * wave..(w + 1) * wave;
            for l in lanes.clone() {
                sh[l] = 0;
            }
            for l in lanes.clone() {
                if l % 3 == 0 {
                    sh[l] = 7;
                }
            }
            let read: Vec<(usize, u32)> = lanes
                .clone()
                .filter(|l| l % 3 != 0)
                .map(|l| (l, sh[(l + 4) % wg]))
                .collect();
            for (l, x) in read {
                sh[l] = x * 10 + 5;
            }
            for l in lanes {
                let want = sh[l] * 1000 + sh[(l + 1) % wg];
                assert_eq!(got[g * wg + l], want, "workgroup {g} lane {l}");
            }
        }
    }
}

/// Lanes with li % 4 == 1 exit in the then-side; the rest go on, pass a
/// barrier (the exited lanes do not hold it up), mark their word, and lane
/// 0 writes the sum of every live lane's li through shared memory: the
/// waiting group runs alone after the exit, branches both ways and joins,
/// and the wave is not converged again (parked and released as one word,
/// the exited lanes would run again).
#[test]
fn a_group_that_exits_leaves_the_other_to_run_and_pass_a_barrier() {
    let k = parse(&format!(
        "kernel @exit_side shared 512 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i32 3
  v21 = and.i32 v0, v20
  v22 = const.i32 1
  v23 = icmp.eq.i32 v21, v22
  br v23, block1, block2

block1:
  exit

block2:
  store.shared.i32 v8, v0
  v24 = const.i32 2
  v25 = and.i32 v0, v24
  v26 = icmp.ne.i32 v25, v24
  br v26, block9, block10

block9:
  jump block10

block10:
  barrier
  v30 = const.i32 0
  v28 = const.i32 1000
  v29 = iadd.i32 v0, v28
  store.global.i32 v6, v29
  v31 = icmp.eq.i32 v0, v30
  br v31, block3, block5(v30, v30)

block3:
  jump block4(v30, v30)

block4(v40: i32, v41: i32):
  v42 = icmp.ult.i32 v40, v2
  br v42, block6, block5(v41, v22)

block6:
  v43 = and.i32 v40, v20
  v44 = icmp.eq.i32 v43, v22
  v45 = shl.i32 v40, v7
  v46 = load.shared.i32 v45
  v47 = select.i32 v44, v30, v46
  v48 = iadd.i32 v41, v47
  v49 = iadd.i32 v40, v22
  jump block4(v49, v48)

block5(v50: i32, v51: i32):
  v52 = const.i32 0
  v53 = icmp.ne.i32 v51, v52
  br v53, block7, block8

block7:
  store.global.i32 v6, v50
  exit

block8:
  exit
}}
"
    ));
    for (wg, wave) in [(64u32, 32u32), (40, 16), (12, 4)] {
        let mut d = Dispatch::new([2, 1, 1], [wg, 1, 1]);
        d.wave_size = wave;
        let n = 2 * wg as usize;
        let out = compare(&k, &d, &vec![0; 4 * n], &[]);
        assert_eq!(out.fault, None);
        let got = u32s(&out.memory);
        let want: u32 = (0..wg).filter(|l| l % 4 != 1).sum();
        for g in 0..2u32 {
            assert_eq!(
                got[(g * wg) as usize],
                want,
                "workgroup {g} (waves of {wave})"
            );
            // Every other live lane marks its word after the barrier; an
            // exited lane must not run again.
            for l in 1..wg {
                let want = if l % 4 == 1 { 0 } else { 1000 + l };
                assert_eq!(
                    got[(g * wg + l) as usize],
                    want,
                    "lane {l} (waves of {wave})"
                );
            }
        }
    }
}

/// One group faults (an out-of-bounds load in the then-side for lanes
/// with li % 8 == 5) while the other waits at the join: the fault is the
/// interpreter's (lowest lane), and nothing past it is trusted.
#[test]
fn a_fault_in_one_group_is_the_interpreters() {
    let k = parse(&format!(
        "kernel @fault_side shared 0 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i32 7
  v21 = and.i32 v0, v20
  v22 = const.i32 5
  v23 = icmp.eq.i32 v21, v22
  br v23, block1, block2

block1:
  v30 = const.i64 0x7000
  v31 = load.global.i32 v30
  jump block2

block2:
  store.global.i32 v6, v3
  exit
}}
"
    ));
    let mut d = Dispatch::new([4, 1, 1], [32, 1, 1]);
    d.wave_size = 16;
    let out = compare(&k, &d, &vec![0; 4 * 128], &[]);
    let Some(f) = out.fault else {
        panic!("the load at 0x7000 must fault");
    };
    assert_eq!(f.lane.workgroup, [0, 0, 0]);
    assert_eq!(f.lane.local, [5, 0, 0]);
    assert!(
        matches!(
            f.kind,
            FaultKind::Memory {
                addr: 0x7000,
                write: false,
                ..
            }
        ),
        "{:?}",
        f.kind
    );
}

/// A converged loop with a barrier and a branch both ways in every
/// iteration, stopped by the watchdog: the step limit falls inside the
/// then-side of some iteration, so the fault (lane, block) must be the
/// interpreter's although waves park and release as one word.
#[test]
fn the_watchdog_fires_inside_a_group_as_it_would_lane_by_lane() {
    let k = parse(&format!(
        "kernel @dog shared 256 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i32 0
  jump block1(v20)

block1(v21: i32):
  barrier
  v22 = const.i32 1
  v23 = and.i32 v0, v22
  v24 = icmp.ne.i32 v23, v20
  br v24, block2, block3

block2:
  store.shared.i32 v8, v21
  jump block3

block3:
  v25 = iadd.i32 v21, v22
  v26 = const.i32 1000
  v27 = icmp.ult.i32 v25, v26
  br v27, block1(v25), block4

block4:
  store.global.i32 v6, v25
  exit
}}
"
    ));
    for limit in [7, 8, 31, 32] {
        let mut d = Dispatch::new([2, 1, 1], [48, 1, 1]);
        d.wave_size = 16;
        d.step_limit = limit;
        let out = compare(&k, &d, &vec![0; 4 * 96], &[]);
        let Some(f) = out.fault else {
            panic!("step limit {limit} must stop the loop");
        };
        assert!(matches!(f.kind, FaultKind::Watchdog { .. }), "{:?}", f.kind);
        assert_eq!(f.lane.workgroup, [0, 0, 0], "step limit {limit}");
    }
}

/// Nested divergence (three groups) goes back to the scheduler and stays
/// exact: lanes split on li % 3, then the middle group splits again on
/// li % 2; every path appends a digit through shared memory read by the
/// next lane.
#[test]
fn three_groups_fall_back_to_the_scheduler() {
    let k = parse(&format!(
        "kernel @three shared 512 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i32 3
  v21 = urem.i32 v0, v20
  v22 = const.i32 0
  v23 = icmp.eq.i32 v21, v22
  store.shared.i32 v8, v22
  br v23, block3, block1

block1:
  v24 = const.i32 1
  v25 = and.i32 v0, v24
  v26 = icmp.eq.i32 v25, v22
  br v26, block2, block3

block2:
  v27 = const.i32 9
  store.shared.i32 v8, v27
  jump block3

block3:
  v30 = const.i32 1
  v31 = iadd.i32 v0, v30
  v32 = urem.i32 v31, v2
  v33 = shl.i32 v32, v7
  v34 = load.shared.i32 v33
  store.global.i32 v6, v34
  exit
}}
"
    ));
    let mut d = Dispatch::new([2, 1, 1], [36, 1, 1]);
    d.wave_size = 12;
    let out = compare(&k, &d, &vec![0; 4 * 72], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for g in 0..2usize {
        for l in 0..36usize {
            let next = (l + 1) % 36;
            // The next lane's 9 is seen if it is in this wave or an earlier
            // one: block2 (pc below block3) runs before block3 in a wave.
            let nine = next % 3 != 0 && next % 2 == 0 && next / 12 <= l / 12;
            let want = if nine { 9 } else { 0 };
            assert_eq!(got[g * 36 + l], want, "workgroup {g} lane {l}");
        }
    }
}

/// A converged wave's last chunk runs past its lanes: there the loads read
/// whatever follows (here NaNs with payloads), so the NaN test asks for the
/// exact redo, which must change nothing for the lanes that exist and write
/// nothing past them.
#[test]
fn nans_past_the_end_of_a_converged_wave_change_nothing() {
    let k = parse(&format!(
        "kernel @tail_nan shared 0 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v20, v5
  v22 = load.global.f32 v21
  v23 = const.f32 2.0
  v24 = fmul.f32 v22, v23
  v25 = const.f32 1.0
  v26 = fadd.f32 v24, v25
  store.global.f32 v6, v26
  exit
}}
"
    ));
    for wg in [20u32, 4, 17, 31] {
        let d = Dispatch::new([1, 1, 1], [wg, 1, 1]);
        let x: Vec<u8> = (0..64u32)
            .map(|i| {
                if i < wg {
                    (i as f32 * 0.5 - 3.0).to_bits()
                } else {
                    0x7fa0_0001 + i
                }
            })
            .flat_map(|b| b.to_le_bytes())
            .collect();
        let out = compare(&k, &d, &[0; 4 * 64], &x);
        assert_eq!(out.fault, None);
        let got = u32s(&out.memory);
        for (i, &v) in got.iter().enumerate() {
            let want = if (i as u32) < wg {
                ((i as f32 * 0.5 - 3.0) * 2.0 + 1.0).to_bits()
            } else {
                0
            };
            assert_eq!(v, want, "lane {i} of {wg}");
        }
    }
}

/// Waves that park and are released as one word keep the interpreter's
/// wave order: in a loop with a barrier, every lane reads the shared word
/// of lane li + 8 (mod the workgroup) and then writes its own, a race
/// across waves whose result is the order in which the waves ran each
/// region (checked against a model of wave-after-wave, loads before the
/// store within a wave). Workgroups of 40 lanes leave a partial last wave.
#[test]
fn waves_released_as_one_word_keep_the_wave_order() {
    let k = parse(&format!(
        "kernel @wave_order shared 256 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i32 0
  store.shared.i32 v8, v0
  jump block1(v20)

block1(v21: i32):
  barrier
  v22 = const.i32 8
  v23 = iadd.i32 v0, v22
  v24 = urem.i32 v23, v2
  v25 = shl.i32 v24, v7
  v26 = load.shared.i32 v25
  v27 = const.i32 3
  v28 = imul.i32 v26, v27
  v29 = iadd.i32 v28, v21
  store.shared.i32 v8, v29
  v30 = const.i32 1
  v31 = iadd.i32 v21, v30
  v32 = const.i32 5
  v33 = icmp.ult.i32 v31, v32
  br v33, block1(v31), block2

block2:
  barrier
  v34 = load.shared.i32 v8
  store.global.i32 v6, v34
  exit
}}
"
    ));
    let wg = 40usize;
    for wave in [8usize, 16, 32, 64] {
        let mut d = Dispatch::new([3, 1, 1], [wg as u32, 1, 1]);
        d.wave_size = wave as u32;
        let out = compare(&k, &d, &vec![0; 4 * 3 * wg], &[]);
        assert_eq!(out.fault, None);
        let got = u32s(&out.memory);
        let mut sh: Vec<u32> = (0..wg as u32).collect();
        for round in 0..5u32 {
            for w in (0..wg).step_by(wave) {
                let lanes = w..(w + wave).min(wg);
                let read: Vec<u32> = lanes.clone().map(|l| sh[(l + 8) % wg]).collect();
                for (l, x) in lanes.zip(read) {
                    sh[l] = x.wrapping_mul(3).wrapping_add(round);
                }
            }
        }
        for g in 0..3 {
            assert_eq!(
                &got[g * wg..(g + 1) * wg],
                &sh[..],
                "workgroup {g}, waves of {wave}"
            );
        }
    }
}

/// A converged wave counts a uniform loop's edges once per wave (deferred)
/// while its largest step count leaves room; near the step limit it counts
/// lane by lane again, so the watchdog fires on the same lane and block as
/// the interpreter's. Odd lanes take one more edge before the loop, so the
/// lanes' counts differ by one when they meet, and every limit around the
/// loop's length is tried.
#[test]
fn deferred_steps_meet_the_watchdog_where_lanes_would() {
    let k = parse(&format!(
        "kernel @deferred shared 0 private 0 {{
block0:
{PROLOGUE}{SLOT}  v20 = const.i32 1
  v21 = and.i32 v0, v20
  v22 = const.i32 0
  v23 = icmp.ne.i32 v21, v22
  br v23, block1, block2(v22)

block1:
  jump block2(v20)

block2(v30: i32):
  v31 = iadd.i32 v30, v20
  jump block3(v31)

block3(v32: i32):
  v33 = const.i32 3
  v34 = imul.i32 v32, v33
  v37 = iadd.i32 v32, v20
  v38 = const.i32 40
  v39 = icmp.ult.i32 v37, v38
  br v39, block2(v34), block4

block4:
  store.global.i32 v6, v32
  exit
}}
"
    ));
    for limit in [1u64, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 20, 1000] {
        let mut d = Dispatch::new([2, 1, 1], [48, 1, 1]);
        d.wave_size = 16;
        d.step_limit = limit;
        let out = compare(&k, &d, &vec![0; 4 * 96], &[]);
        if limit >= 1000 {
            assert_eq!(out.fault, None);
        } else if let Some(f) = &out.fault {
            assert!(
                matches!(f.kind, FaultKind::Watchdog { .. }),
                "step limit {limit}: {:?}",
                f.kind
            );
        }
    }
}
