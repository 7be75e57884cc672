//! Named cases for the paths of the gang core (`Core::Gang` and the optimized
//! tier of `Core::Tiered`): partial chunks, vector and lane-by-lane memory
//! access in one kernel, faults of some lanes of a chunk, barriers in loops,
//! divergence inside uniform loops, and the exact redo of a run. Every case
//! runs on the interpreter and every JIT configuration (`support::compare`)
//! and checks the values it must produce.

mod support;

use support::{BUF, PROLOGUE, compare, parse, run_on, u32s};
use wavejit_ir::{Dispatch, FaultKind};
use wavejit_jit::{Core, Jit, JitConfig};

/// The gang core on one thread (its memory after a fault is the
/// interpreter's), optimized after `lanes` lanes.
fn one_thread_gang(lanes: u64) -> Jit {
    Jit::new(JitConfig {
        core: Core::Gang,
        threads: 1,
        optimize_after_lanes: lanes,
        ..JitConfig::default()
    })
}

/// A NaN made by the host before a store of the same run and read after it:
/// the run is redone before the store, and the value read after it is the
/// interpreter's default NaN (0x7fc00000), not the host's (0xffc00000).
#[test]
fn nan_made_before_a_store_and_read_after_it_is_the_interpreters() {
    let k = parse(&format!(
        "kernel @nan_across_store shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.f32 inf
  v21 = const.f32 0.0
  v22 = const.f32 1.0
  v23 = fmul.f32 v20, v21
  v24 = fadd.f32 v23, v22
  v25 = const.i32 7
  store.global.i32 v6, v25
  v26 = bitcast.f32.i32 v24
  v27 = const.i64 256
  v28 = iadd.i64 v6, v27
  store.global.i32 v28, v26
  exit
}}
"
    ));
    let d = Dispatch::new([2, 1, 1], [20, 1, 1]);
    let out = compare(&k, &d, &[0; 512], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    assert!(got[..40].iter().all(|&v| v == 7), "{:x?}", &got[..40]);
    assert!(
        got[64..104].iter().all(|&v| v == 0x7fc0_0000),
        "{:x?}",
        &got[64..104]
    );
}

/// Contiguous loads and stores (vector path) next to a scattered load (lane
/// by lane) in workgroups of 20 lanes and waves of 8: every chunk but some is
/// partial. out[i] = in[i] + in[(7 * i) % 40].
#[test]
fn contiguous_and_scattered_accesses_in_partial_chunks() {
    let k = parse(&format!(
        "kernel @mixed shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v20, v5
  v22 = load.global.i32 v21
  v23 = const.i32 7
  v24 = imul.i32 v3, v23
  v25 = const.i32 40
  v26 = urem.i32 v24, v25
  v27 = zext.i32.i64 v26
  v28 = shl.i64 v27, v11
  v29 = iadd.i64 v20, v28
  v30 = load.global.i32 v29
  v31 = iadd.i32 v22, v30
  store.global.i32 v6, v31
  exit
}}
"
    ));
    let mut d = Dispatch::new([2, 1, 1], [20, 1, 1]);
    d.wave_size = 8;
    let input: Vec<u8> = (0..40u32)
        .flat_map(|i| (i * 1000 + 3).to_le_bytes())
        .collect();
    let out = compare(&k, &d, &[0; 160], &input);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for (i, &v) in got.iter().enumerate() {
        let i = i as u32;
        assert_eq!(v, (i * 1000 + 3) + ((7 * i) % 40 * 1000 + 3), "lane {i}");
    }
}

/// Lanes with local index >= 13 of a 24-lane workgroup read past the end of
/// the buffer: the fault is lane 13's (the lowest), inside the first 16-lane
/// chunk, and the other lanes' stores happened.
#[test]
fn a_fault_of_some_lanes_of_a_chunk_is_the_lowest_lanes() {
    let k = parse(&format!(
        "kernel @straddle shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 13
  v21 = icmp.uge.i32 v0, v20
  br v21, block1, block2

block1:
  v22 = const.i64 0x1000
  v23 = iadd.i64 v6, v22
  v24 = load.global.i32 v23
  store.global.i32 v6, v24
  exit

block2:
  store.global.i32 v6, v3
  exit
}}
"
    ));
    let d = Dispatch::new([1, 1, 1], [24, 1, 1]);
    let out = compare(&k, &d, &[0; 128], &[]);
    let fault = out.fault.expect("lanes 13.. read out of bounds");
    assert_eq!(fault.lane.local, [13, 0, 0]);
    match fault.kind {
        FaultKind::Memory { addr, write, .. } => {
            assert_eq!(addr, BUF + 13 * 4 + 0x1000);
            assert!(!write);
        }
        other => panic!("unexpected fault {other:?}"),
    }
}

/// A tree reduction in shared memory with a barrier per level inside a loop
/// (64-lane workgroups, waves of 32): sums[g] = sum of its 64 inputs.
#[test]
fn shared_tree_reduction_with_a_barrier_per_level() {
    let k = parse(&format!(
        "kernel @reduce shared 256 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v20, v5
  v22 = load.global.i32 v21
  v23 = const.i32 2
  v24 = shl.i32 v0, v23
  store.shared.i32 v24, v22
  v25 = const.i32 32
  jump block1(v25)

block1(v30: i32):
  barrier
  v31 = icmp.ult.i32 v0, v30
  br v31, block2, block3

block2:
  v32 = iadd.i32 v0, v30
  v33 = shl.i32 v32, v23
  v34 = load.shared.i32 v24
  v35 = load.shared.i32 v33
  v36 = iadd.i32 v34, v35
  store.shared.i32 v24, v36
  jump block3

block3:
  v40 = const.i32 1
  v41 = ushr.i32 v30, v40
  v42 = const.i32 0
  v43 = icmp.ne.i32 v41, v42
  br v43, block1(v41), block4

block4:
  v44 = icmp.eq.i32 v0, v42
  br v44, block5, block6

block5:
  barrier
  v45 = load.shared.i32 v42
  v46 = zext.i32.i64 v1
  v47 = shl.i64 v46, v11
  v48 = iadd.i64 v12, v47
  store.global.i32 v48, v45
  exit

block6:
  barrier
  exit
}}
"
    ));
    let d = Dispatch::new([3, 1, 1], [64, 1, 1]);
    let input: Vec<u8> = (0..192u32)
        .flat_map(|i| (i * 3 + 1).to_le_bytes())
        .collect();
    let out = compare(&k, &d, &[0; 16], &input);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for g in 0..3u32 {
        let want: u32 = (g * 64..g * 64 + 64).map(|i| i * 3 + 1).sum();
        assert_eq!(got[g as usize], want, "workgroup {g}");
    }
}

/// A loop with a uniform trip count (5) and an if/else on lane parity inside:
/// odd lanes add 3, even lanes add 2 per iteration.
#[test]
fn divergent_branch_inside_a_uniform_loop() {
    let k = parse(&format!(
        "kernel @uniform_loop shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 0
  jump block1(v20, v3)

block1(v21: i32, v22: i32):
  v23 = const.i32 1
  v24 = and.i32 v3, v23
  v25 = icmp.ne.i32 v24, v20
  br v25, block2, block3

block2:
  v26 = const.i32 3
  v27 = iadd.i32 v22, v26
  jump block4(v27)

block3:
  v28 = const.i32 2
  v29 = iadd.i32 v22, v28
  jump block4(v29)

block4(v30: i32):
  v31 = iadd.i32 v21, v23
  v32 = const.i32 5
  v33 = icmp.ult.i32 v31, v32
  br v33, block1(v31, v30), block5

block5:
  store.global.i32 v6, v30
  exit
}}
"
    ));
    let d = Dispatch::new([2, 1, 1], [21, 1, 1]);
    let out = compare(&k, &d, &[0; 168], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for (i, &v) in got.iter().enumerate() {
        let i = i as u32;
        assert_eq!(v, i + if i % 2 == 1 { 15 } else { 10 }, "lane {i}");
    }
}

/// A run that computes again (rather than reloads) two operands of a store,
/// both through the pure helper (64-bit multiply, i8 extension): the second
/// must not overwrite the first in the helpers' scratch buffer.
#[test]
fn operands_computed_again_by_helpers_keep_each_other() {
    let k = parse(
        "kernel @recompute shared 0 private 0 {
block0:
  v0 = local_index
  v1 = zext.i32.i64 v0
  v2 = const.i64 16
  v3 = imul.i64 v1, v2
  v4 = const.i64 0x10000000
  v5 = iadd.i64 v4, v3
  v6 = trunc.i32.i8 v0
  v7 = const.i8 3
  v8 = iadd.i8 v6, v7
  v9 = zext.i8.i64 v8
  store.global.i64 v5, v9
  v10 = const.i64 8
  v11 = iadd.i64 v5, v10
  store.global.i64 v11, v9
  exit
}
",
    );
    let d = Dispatch::new([1, 1, 1], [20, 1, 1]);
    let out = compare(&k, &d, &[0; 320], &[]);
    assert_eq!(out.fault, None);
    let words: Vec<u64> = out
        .memory
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    for lane in 0..20u64 {
        assert_eq!(words[2 * lane as usize], lane + 3, "lane {lane}");
        assert_eq!(words[2 * lane as usize + 1], lane + 3, "lane {lane}");
    }
}

/// 64-bit multiplies: by a power of two (a shift) and of two lane values
/// (`I64X2` multiply), with products past 32 bits.
#[test]
fn wide_multiplies_by_constants_and_lane_values() {
    let k = parse(
        "kernel @mul64 shared 0 private 0 {
block0:
  v0 = local_index
  v1 = zext.i32.i64 v0
  v2 = const.i64 8
  v3 = imul.i64 v1, v2
  v4 = const.i64 0x10000000
  v5 = iadd.i64 v4, v3
  v6 = const.i64 0x123456789
  v7 = iadd.i64 v1, v6
  v8 = imul.i64 v7, v7
  store.global.i64 v5, v8
  exit
}
",
    );
    let d = Dispatch::new([1, 1, 1], [19, 1, 1]);
    let out = compare(&k, &d, &[0; 152], &[]);
    assert_eq!(out.fault, None);
    for lane in 0..19u64 {
        let at = 8 * lane as usize;
        let got = u64::from_le_bytes(out.memory[at..at + 8].try_into().unwrap_or([0; 8]));
        let x = lane + 0x1_2345_6789;
        assert_eq!(got, x.wrapping_mul(x), "lane {lane}");
    }
}

/// f32 min/max inline: every pair of special operands (signed zeros,
/// infinities, a subnormal, quiet and signaling NaNs of both signs), the GPU
/// NaN-ignoring and IEEE NaN-propagating forms, as they are and with flush
/// and canonical NaN. Lane i takes operands a[i % 10], b[i / 10].
#[test]
fn float_min_max_of_special_operands() {
    let ops = ["fmin.f32", "fmax.f32", "fminimum.f32", "fmaximum.f32"];
    let mut body = String::new();
    let mut next = 40;
    for (k, op) in ops.iter().enumerate() {
        for (m, mode) in ["", " ftz nan=0x7fc00000"].iter().enumerate() {
            let slot = (k * 2 + m) as u64 * 400;
            body.push_str(&format!(
                "  v{next} = {op} v30, v31{mode}
  v{} = bitcast.f32.i32 v{next}
  v{} = const.i64 {slot}
  v{} = iadd.i64 v6, v{}
  store.global.i32 v{}, v{}
",
                next + 1,
                next + 2,
                next + 3,
                next + 2,
                next + 3,
                next + 1
            ));
            next += 4;
        }
    }
    let k = parse(&format!(
        "kernel @minmax shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 10
  v21 = urem.i32 v3, v20
  v22 = udiv.i32 v3, v20
  v23 = zext.i32.i64 v21
  v24 = zext.i32.i64 v22
  v25 = shl.i64 v23, v11
  v26 = shl.i64 v24, v11
  v27 = const.i64 0x20000000
  v28 = iadd.i64 v27, v25
  v29 = iadd.i64 v27, v26
  v30 = load.global.f32 v28
  v31 = load.global.f32 v29
{body}  exit
}}
"
    ));
    let specials: [u32; 10] = [
        0x0000_0000, // +0
        0x8000_0000, // -0
        0x3f80_0000, // 1
        0xbf80_0000, // -1
        0x7f80_0000, // +inf
        0xff80_0000, // -inf
        0x0000_0001, // smallest subnormal
        0x7fc0_0001, // quiet NaN with payload
        0xffa0_0002, // negative signaling NaN
        0x7f80_0003, // signaling NaN
    ];
    let ro: Vec<u8> = specials.iter().flat_map(|v| v.to_le_bytes()).collect();
    let d = Dispatch::new([1, 1, 1], [100, 1, 1]);
    let out = compare(&k, &d, &[0; 3200], &ro);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    // Spot checks of the rules (the comparison covers every pair); slots are
    // op * 2 + mode: fmin, fmax, fminimum, fmaximum, each plain then flushed
    // with canonical NaN.
    let at = |slot: usize, a: usize, b: usize| got[slot * 100 + b * 10 + a];
    assert_eq!(at(2, 0, 1), 0x0000_0000, "max(+0, -0) = +0");
    assert_eq!(at(0, 0, 1), 0x8000_0000, "min(+0, -0) = -0");
    assert_eq!(at(2, 7, 2), 0x3f80_0000, "max(NaN, 1) = 1");
    assert_eq!(at(6, 7, 2), 0x7fc0_0001, "maximum(NaN, 1) = NaN");
    assert_eq!(
        at(4, 9, 8),
        0x7fc0_0003,
        "minimum(sNaN, sNaN') = first quieted"
    );
    assert_eq!(at(0, 8, 9), 0xffe0_0002, "min of two NaNs = first quieted");
    assert_eq!(at(3, 6, 0), 0x0000_0000, "max(+sub, +0) flushed = +0");
    assert_eq!(at(7, 7, 2), 0x7fc0_0000, "canonical NaN");
}

/// `store y[i]` at `base + 4 * ext(li + c)` for 32 lanes, with `ext` the
/// 32-to-64-bit extension `cast`.
fn store_at_extended_index(cast: &str, c: u32, base: u64) -> support::Outcome {
    let k = parse(&format!(
        "kernel @wrap shared 0 private 0 {{
block0:
  v0 = local_index
  v1 = const.i32 {c:#x}
  v2 = iadd.i32 v0, v1
  v3 = {cast}.i32.i64 v2
  v4 = const.i64 2
  v5 = shl.i64 v3, v4
  v6 = const.i64 {base:#x}
  v7 = iadd.i64 v6, v5
  store.global.i32 v7, v0
  exit
}}
"
    ));
    compare(&k, &Dispatch::new([1, 1, 1], [32, 1, 1]), &[0; 128], &[])
}

/// An affine index that wraps past 2^32 inside a chunk: `zext(li +
/// 0xffffffe8)` is 2^32 - 24 + li for lanes 0..23 and li - 24 after, so the
/// address `BUF - 4 * (2^32 - 24) + 4 * zext(...)` is BUF + 4 li for lanes
/// 0..23 and 16 GiB below for the rest. The one-scalar contiguity test of
/// the second chunk (the first one fills the region cache) must see the
/// wrap: lanes 0..23 store, lane 24 faults.
#[test]
fn an_affine_index_that_wraps_in_a_chunk_faults_at_the_wrap() {
    let out = store_at_extended_index("zext", 0xffff_ffe8, 0xffff_fffc_1000_0060);
    let fault = out.fault.expect("lanes 24.. store out of bounds");
    assert_eq!(fault.lane.local, [24, 0, 0]);
    match fault.kind {
        FaultKind::Memory { addr, write, .. } => {
            assert_eq!(addr, 0xffff_fffc_1000_0060);
            assert!(write);
        }
        other => panic!("unexpected fault {other:?}"),
    }
    assert_eq!(u32s(&out.memory)[..24], (0..24).collect::<Vec<u32>>()[..]);
}

/// The signed twin: `sext(li + 0x7fffffe8)` turns negative at lane 24.
#[test]
fn a_sign_extended_affine_index_that_wraps_faults_at_the_wrap() {
    let out = store_at_extended_index("sext", 0x7fff_ffe8, 0xffff_fffe_1000_0060);
    let fault = out.fault.expect("lanes 24.. store out of bounds");
    assert_eq!(fault.lane.local, [24, 0, 0]);
    assert_eq!(u32s(&out.memory)[..24], (0..24).collect::<Vec<u32>>()[..]);
}

/// `local_id.x` is affine only within a row: in 6 x 4 workgroups a chunk
/// spans rows, so `out[4 * y + x] = 100 * y + x` (a scatter where rows
/// overlap, 4 < 6) must be the interpreter's lane-order result.
#[test]
fn local_id_x_across_rows_is_not_contiguous() {
    let k = parse(
        "kernel @rows shared 0 private 0 {
block0:
  v0 = local_id.x
  v1 = local_id.y
  v2 = const.i32 4
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = zext.i32.i64 v4
  v6 = const.i64 2
  v7 = shl.i64 v5, v6
  v8 = const.i64 0x10000000
  v9 = iadd.i64 v8, v7
  v10 = const.i32 100
  v11 = imul.i32 v1, v10
  v12 = iadd.i32 v11, v0
  store.global.i32 v9, v12
  exit
}
",
    );
    let d = Dispatch::new([1, 1, 1], [6, 4, 1]);
    let out = compare(&k, &d, &[0; 128], &[]);
    assert_eq!(out.fault, None);
    // Row y writes words 4y .. 4y+5; row y+1 then overwrites 4y+4, 4y+5.
    let want: Vec<u32> = (0..18)
        .map(|w| {
            let (y, x) = if w >= 16 { (3, w - 12) } else { (w / 4, w % 4) };
            100 * y + x
        })
        .collect();
    assert_eq!(u32s(&out.memory)[..18], want[..]);
}

/// `y[i] = y[i + d] + 1` over 48 lanes of one workgroup (three 16-lane
/// chunks); `y` is 16 words into the buffer, which starts as [`scrambled`].
fn shifted_update(d: i64) -> Vec<u32> {
    // Not linear in the word, so a value read after its neighbour's update
    // differs from the old one plus one.
    let prologue = PROLOGUE.replace("const.i64 0x10000000", "const.i64 0x10000040");
    let k = parse(&format!(
        "kernel @shift shared 0 private 0 {{
block0:
{prologue}  v20 = const.i64 {d4}
  v21 = iadd.i64 v6, v20
  v22 = load.global.i32 v21
  v23 = const.i32 1
  v24 = iadd.i32 v22, v23
  store.global.i32 v6, v24
  exit
}}
",
        d4 = 4 * d
    ));
    let init: Vec<u8> = (0..96u32)
        .flat_map(|w| scrambled(w).to_le_bytes())
        .collect();
    let dispatch = Dispatch::new([1, 1, 1], [48, 1, 1]);
    let out = compare(&k, &dispatch, &init, &[]);
    assert_eq!(out.fault, None);
    u32s(&out.memory)[16..64].to_vec()
}

/// Initial word `w` of the shifted-update buffer.
fn scrambled(w: u32) -> u32 {
    1000 + (w * 37) % 101
}

/// Loads and a store of one block in one chunk loop (fused): a lane reading
/// the word above its own (`d = 1`) may run fused and sees the old value; a
/// lane reading the word below (`d = -1`, written by the previous chunk's
/// last lane) must not, and also sees the old value: the interpreter loads
/// every lane of a wave before any stores (waves of 32 lanes run in turn).
#[test]
fn fused_load_store_keeps_the_interpreters_order() {
    let up = shifted_update(1);
    let want_up: Vec<u32> = (0..48).map(|i| scrambled(16 + i + 1) + 1).collect();
    assert_eq!(up, want_up);
    let down = shifted_update(-1);
    // Lane 32 starts the second wave: it reads lane 31's new value.
    let mut want_down: Vec<u32> = (0..48).map(|i| scrambled(16 + i - 1) + 1).collect();
    want_down[32] = want_down[31] + 1;
    assert_eq!(down, want_down);
}

/// A load at one address inside the stored range (`y[5]`, stride 0) next to
/// the store `y[i] = y[5] + i`: every lane of the first wave reads the old
/// `y[5]` (1005), the second wave the first wave's (1010).
#[test]
fn fused_store_over_a_uniformly_loaded_word() {
    let k = parse(&format!(
        "kernel @bcast shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x10000014
  v21 = load.global.i32 v20
  v22 = iadd.i32 v21, v3
  store.global.i32 v6, v22
  exit
}}
"
    ));
    let init: Vec<u8> = (0..64u32).flat_map(|w| (1000 + w).to_le_bytes()).collect();
    let d = Dispatch::new([1, 1, 1], [48, 1, 1]);
    let out = compare(&k, &d, &init, &[]);
    assert_eq!(out.fault, None);
    assert_eq!(d.wave_size, 32);
    let want: Vec<u32> = (0..48)
        .map(|i| if i < 32 { 1005 + i } else { 1010 + i })
        .collect();
    assert_eq!(u32s(&out.memory)[..48], want[..]);
}

/// Lane 13 faults in the first block; every lane then jumps to the second
/// (a load and a store: fused), which every other lane runs (the wave's
/// successor is uniform, so the second block starts converged): lane 13 must
/// stay stopped there.
#[test]
fn a_lane_that_faulted_stays_stopped_after_a_uniform_jump() {
    let k = parse(&format!(
        "kernel @after_fault shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 13
  v21 = icmp.eq.i32 v0, v20
  v22 = const.i64 0x100000
  v23 = const.i64 0
  v24 = select.i64 v21, v22, v23
  v25 = iadd.i64 v6, v24
  v26 = load.global.i32 v25
  jump block1

block1:
  v27 = const.i32 7
  v28 = load.global.i32 v6
  v29 = iadd.i32 v28, v27
  store.global.i32 v6, v29
  exit
}}
"
    ));
    let d = Dispatch::new([1, 1, 1], [32, 1, 1]);
    let out = compare(&k, &d, &[0; 128], &[]);
    let fault = out.fault.expect("lane 13 reads out of bounds");
    assert_eq!(fault.lane.local, [13, 0, 0]);
    let want: Vec<u32> = (0..32).map(|i| if i == 13 { 0 } else { 7 }).collect();
    assert_eq!(u32s(&out.memory)[..32], want[..]);
    // `compare` checks memory only without a fault (threads may run later
    // batches); on one thread the gang core's memory is the interpreter's.
    for tier_lanes in [0, u64::MAX] {
        let got = run_on(&one_thread_gang(tier_lanes), &k, &d, &[0; 128], &[], true);
        assert_eq!(got.fault.map(|f| f.lane.local), Some([13, 0, 0]));
        assert_eq!(u32s(&got.memory)[..32], want[..], "tier after {tier_lanes}");
    }
}

/// A self-loop block (lane-major: each chunk runs all its iterations before
/// the next chunk) with per-lane trip counts `li % 8 + 1`: `y[i] = 3^trips`,
/// computed in 40-lane workgroups (partial chunks) and waves of 8; then the
/// same with a step limit some lanes pass: the fault is the lowest such
/// lane's, entering the loop block again.
#[test]
fn a_self_loop_with_per_lane_trip_counts_and_the_watchdog() {
    let k = parse(&format!(
        "kernel @trips shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 7
  v21 = and.i32 v0, v20
  v22 = const.i32 1
  v23 = iadd.i32 v21, v22
  v24 = const.i32 0
  jump block1(v24, v22)

block1(v30: i32, v31: i32):
  v32 = const.i32 3
  v33 = imul.i32 v31, v32
  v34 = iadd.i32 v30, v22
  v35 = icmp.ult.i32 v34, v23
  br v35, block1(v34, v33), block2(v33)

block2(v40: i32):
  store.global.i32 v6, v40
  exit
}}
"
    ));
    let mut d = Dispatch::new([2, 1, 1], [40, 1, 1]);
    d.wave_size = 8;
    let out = compare(&k, &d, &[0; 512], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for (i, &v) in got[..80].iter().enumerate() {
        assert_eq!(v, 3u32.pow((i as u32 % 40) % 8 + 1), "lane {i}");
    }
    // Lane 4 (5 trips) counts 7 steps (one at entry, one per edge): over a
    // limit of 6; lanes 0..3 count at most 6.
    d.step_limit = 6;
    let out = compare(&k, &d, &[0; 512], &[]);
    let fault = out
        .fault
        .expect("lanes with 6 or more trips pass the limit");
    assert_eq!(fault.lane.local, [4, 0, 0]);
    assert!(
        matches!(fault.kind, FaultKind::Watchdog { limit: 6 }),
        "{fault:?}"
    );
}

/// A fused segment whose uniform words are read once per wave: with the
/// uniforms one word short, every lane faults at the load of the missing
/// word (the interpreter's fault), and with them all present the kernel
/// computes `y[i] = x[i] * a + y[i]`.
#[test]
fn uniforms_read_once_per_wave_fault_when_short() {
    let k = parse(&format!(
        "kernel @uscale shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 0
  v21 = load.uniform.i32 v20
  v22 = const.i32 4
  v23 = load.uniform.i32 v22
  v24 = load.global.i32 v6
  v25 = imul.i32 v24, v21
  v26 = iadd.i32 v25, v23
  store.global.i32 v6, v26
  exit
}}
"
    ));
    let init: Vec<u8> = (0..64u32).flat_map(|w| w.to_le_bytes()).collect();
    let mut d = Dispatch::new([1, 1, 1], [48, 1, 1]);
    d.uniforms = [3u32.to_le_bytes(), 1000u32.to_le_bytes()].concat();
    let out = compare(&k, &d, &init, &[]);
    assert_eq!(out.fault, None);
    let want: Vec<u32> = (0..48).map(|i| 3 * i + 1000).collect();
    assert_eq!(u32s(&out.memory)[..48], want[..]);
    d.uniforms.truncate(4);
    let out = compare(&k, &d, &init, &[]);
    let fault = out.fault.expect("the second uniform word is missing");
    assert_eq!(fault.lane.local, [0, 0, 0]);
    assert!(
        matches!(
            fault.kind,
            FaultKind::Memory {
                addr: 4,
                write: false,
                ..
            }
        ),
        "{fault:?}"
    );
}

/// A one-block kernel of loads, a store and an exit runs a whole workgroup
/// as one fused loop: 3 workgroups of 40 lanes in waves of 8 (every chunk
/// straddles waves, the last is partial), `y[i] = 3 x[i] + y[i]`; then the
/// same with `y` 100 words long, so lanes from 100 on fault (the lowest is
/// lane 20 of the third workgroup) and every lane below stored.
#[test]
fn a_workgroup_runs_as_one_fused_loop() {
    let k = parse(&format!(
        "kernel @wide shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x10000000
  v21 = iadd.i64 v5, v20
  v22 = const.i64 0x20000000
  v23 = iadd.i64 v5, v22
  v24 = load.global.i32 v23
  v25 = load.global.i32 v21
  v26 = const.i32 3
  v27 = imul.i32 v24, v26
  v28 = iadd.i32 v27, v25
  store.global.i32 v21, v28
  exit
}}
"
    ));
    let x: Vec<u8> = (0..120u32)
        .flat_map(|w| (w * 7 + 1).to_le_bytes())
        .collect();
    let y: Vec<u8> = (0..120u32).flat_map(|w| (w + 1000).to_le_bytes()).collect();
    let mut d = Dispatch::new([3, 1, 1], [40, 1, 1]);
    d.wave_size = 8;
    let out = compare(&k, &d, &y, &x);
    assert_eq!(out.fault, None);
    let want: Vec<u32> = (0..120).map(|i| 3 * (i * 7 + 1) + i + 1000).collect();
    assert_eq!(u32s(&out.memory)[..120], want[..]);
    let out = compare(&k, &d, &y[..400], &x);
    let fault = out.fault.clone().expect("lanes 100.. are past y");
    assert_eq!(
        (fault.lane.workgroup, fault.lane.local),
        ([2, 0, 0], [20, 0, 0])
    );
    assert_eq!(u32s(&out.memory)[..100], want[..100]);
    // After the fault too, one thread of the gang core leaves the
    // interpreter's memory (`compare` checks memory only without a fault).
    let got = run_on(&one_thread_gang(0), &k, &d, &y[..400], &x, true);
    assert_eq!(got, out);
}

/// A fused `y[i] = x[i] * y[i] + 1.5` over 4 workgroups of 72 lanes (four
/// whole 16-lane chunks and a partial one): once the sites' region caches
/// are warm (from the second workgroup on), the whole chunks run in their
/// own loop without per-chunk tests, and NaN results there take the exact rule's
/// redo as in every other chunk (the IR's default: the first NaN operand
/// quieted with its payload, a fresh NaN from inf * 0 the default one).
/// Checked against the interpreter on every JIT configuration, and a few
/// values exactly.
#[test]
fn whole_chunks_keep_the_float_rules() {
    let k = parse(&format!(
        "kernel @nan shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v5, v20
  v22 = load.global.f32 v21
  v23 = load.global.f32 v6
  v24 = fmul.f32 v22, v23
  v25 = const.f32 1.5
  v26 = fadd.f32 v24, v25
  store.global.f32 v6, v26
  exit
}}
"
    ));
    let special = [
        0x7fc0_1234u32, // quiet NaN with a payload
        0x7f80_0001,    // signalling NaN
        0x7f80_0000,    // inf (times 0 below)
        0x0000_0001,    // denormal
        0x8000_0003,    // negative denormal
    ];
    let x: Vec<u32> = (0..320u32)
        .map(|i| match i % 29 {
            j @ 0..=4 => special[j as usize],
            _ => (i as f32 * 0.75 - 20.0).to_bits(),
        })
        .collect();
    let y: Vec<u32> = (0..320u32)
        .map(|i| {
            if i % 29 == 2 {
                0
            } else {
                (i as f32 + 0.5).to_bits()
            }
        })
        .collect();
    let xb: Vec<u8> = x.iter().flat_map(|w| w.to_le_bytes()).collect();
    let yb: Vec<u8> = y.iter().flat_map(|w| w.to_le_bytes()).collect();
    let d = Dispatch::new([4, 1, 1], [72, 1, 1]);
    let out = compare(&k, &d, &yb, &xb);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    // Lanes 0..5 (and 29.., 116.., 232..: whole chunks of three workgroups): NaN
    // payload quieted, signalling NaN quieted, inf * 0, denormal * y + 1.5.
    assert_eq!(
        got[..5],
        [
            0x7fc0_1234,
            0x7fc0_0001,
            0x7fc0_0000,
            0x3fc0_0000,
            0x3fc0_0000
        ]
    );
    assert_eq!(got[29..32], got[..3]);
    assert_eq!(got[116..119], got[..3]);
    assert_eq!(got[232..235], got[..3]);
    assert_eq!(got[40], (f32::from_bits(x[40]) * 40.5 + 1.5).to_bits());
}

/// A fused segment that does not exit: `y[i] = 3 x[i] + y[i]`, then a second
/// block stores `z[i] = y[i] ^ i` from the value the first computed. Waves
/// of 32 lanes are two whole chunks each, which run in the whole-chunk loop
/// (with the successor every lane takes noted) once the region caches are
/// warm; the second block runs as usual after it.
#[test]
fn whole_chunks_of_a_segment_with_a_successor() {
    let k = parse(&format!(
        "kernel @two shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v5, v20
  v22 = load.global.i32 v21
  v23 = load.global.i32 v6
  v24 = const.i32 3
  v25 = imul.i32 v22, v24
  v26 = iadd.i32 v25, v23
  store.global.i32 v6, v26
  jump block1(v26)
block1(v30: i32):
  v31 = const.i64 0x400
  v32 = iadd.i64 v6, v31
  v33 = xor.i32 v30, v3
  store.global.i32 v32, v33
  exit
}}
"
    ));
    let x: Vec<u8> = (0..256u32)
        .flat_map(|w| (w * 5 + 2).to_le_bytes())
        .collect();
    let y: Vec<u8> = (0..512u32).flat_map(|w| (w + 7000).to_le_bytes()).collect();
    let d = Dispatch::new([4, 1, 1], [64, 1, 1]);
    let out = compare(&k, &d, &y, &x);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    let want_y: Vec<u32> = (0..256).map(|i| 3 * (i * 5 + 2) + i + 7000).collect();
    let want_z: Vec<u32> = want_y.iter().zip(0u32..).map(|(&v, i)| v ^ i).collect();
    assert_eq!(got[..256], want_y[..]);
    assert_eq!(got[256..], want_z[..]);
}

/// The fused kernel of [`a_workgroup_runs_as_one_fused_loop`] storing at
/// `y[i - 20]` over a `y` of 100 words: the first workgroup's lanes 0..20
/// fault, and the later workgroups, which no longer run fused (a lane of
/// the batch faulted), run the general path: their lanes' pcs must be
/// written before it reads them (they are only when a wave leaves the fused
/// loop). On one thread the three workgroups are one batch, which runs to
/// its end: every lane that does not fault stores (the interpreter stops
/// after the first workgroup; `compare` checks the fault).
#[test]
fn workgroups_after_a_faulted_one_run_the_general_path() {
    let k = parse(&format!(
        "kernel @late shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x0fffffb0
  v21 = iadd.i64 v5, v20
  v22 = const.i64 0x20000000
  v23 = iadd.i64 v5, v22
  v24 = load.global.i32 v23
  v25 = load.global.i32 v21
  v26 = const.i32 3
  v27 = imul.i32 v24, v26
  v28 = iadd.i32 v27, v25
  store.global.i32 v21, v28
  exit
}}
"
    ));
    let x: Vec<u8> = (0..120u32)
        .flat_map(|w| (w * 7 + 1).to_le_bytes())
        .collect();
    let y: Vec<u8> = (0..100u32).flat_map(|w| (w + 1000).to_le_bytes()).collect();
    // Lane i (20..120) stored 3 x[i] + y[i - 20] at word i - 20.
    let want: Vec<u32> = (20..120).map(|i| 3 * (i * 7 + 1) + i - 20 + 1000).collect();
    for wave in [8, 40] {
        let mut d = Dispatch::new([3, 1, 1], [40, 1, 1]);
        d.wave_size = wave;
        let out = compare(&k, &d, &y, &x);
        let fault = out.fault.clone().expect("lanes 0..20 are below y");
        assert_eq!(
            (fault.lane.workgroup, fault.lane.local),
            ([0, 0, 0], [0, 0, 0])
        );
        let got = run_on(&one_thread_gang(0), &k, &d, &y, &x, true);
        assert_eq!(u32s(&got.memory), want, "wave {wave}");
        assert_eq!(got.fault, out.fault, "wave {wave}");
    }
}

/// A branch on every integer compare, with operands at the signed and
/// unsigned boundaries: the terminator folds the negation of `ne`, `ult`,
/// `ugt`, `sle` and `sge` into its edge masks, and each lane's side must
/// still be the compare's. Each lane stores 1 + its side (1: then, 2: else).
#[test]
fn branches_on_every_compare_take_the_compares_side() {
    let edge = [
        0u32,
        1,
        2,
        0x7fff_ffff,
        0x8000_0000,
        0x8000_0001,
        0xffff_fffe,
        0xffff_ffff,
    ];
    for cc in [
        "eq", "ne", "ult", "ule", "ugt", "uge", "slt", "sle", "sgt", "sge",
    ] {
        let k = parse(&format!(
            "kernel @cmp_{cc} shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v20, v5
  v22 = load.global.i32 v21
  v23 = const.i32 7
  v24 = and.i32 v3, v23
  v26 = const.i64 0x20000100
  v27 = zext.i32.i64 v24
  v28 = shl.i64 v27, v11
  v29 = iadd.i64 v26, v28
  v30 = load.global.i32 v29
  v31 = icmp.{cc}.i32 v22, v30
  br v31, block1, block2

block1:
  v40 = const.i32 1
  store.global.i32 v6, v40
  exit

block2:
  v41 = const.i32 2
  store.global.i32 v6, v41
  exit
}}
"
        ));
        // Lane i compares edge[i / 8] with edge[i % 8]: every pair.
        let n = 64usize;
        let mut ro = vec![0u8; 0x100 + 32];
        for i in 0..n {
            ro[4 * i..4 * i + 4].copy_from_slice(&edge[i / 8].to_le_bytes());
        }
        for (j, e) in edge.iter().enumerate() {
            ro[0x100 + 4 * j..0x100 + 4 * j + 4].copy_from_slice(&e.to_le_bytes());
        }
        let d = Dispatch::new([2, 1, 1], [32, 1, 1]);
        let out = compare(&k, &d, &[0; 4 * 64], &ro);
        assert_eq!(out.fault, None);
        let got = u32s(&out.memory);
        for (i, &g) in got.iter().enumerate() {
            let (a, b) = (edge[i / 8], edge[i % 8]);
            let (sa, sb) = (a as i32, b as i32);
            let taken = match cc {
                "eq" => a == b,
                "ne" => a != b,
                "ult" => a < b,
                "ule" => a <= b,
                "ugt" => a > b,
                "uge" => a >= b,
                "slt" => sa < sb,
                "sle" => sa <= sb,
                "sgt" => sa > sb,
                _ => sa >= sb,
            };
            assert_eq!(g, if taken { 1 } else { 2 }, "{cc} {a:#x} {b:#x}");
        }
    }
}

/// A kernel whose CFG is acyclic (a diamond: at most three blocks entered)
/// runs on the gang core even with an unlimited step limit (RV32's lifter
/// dispatches that way): its lanes cannot reach the limit the 32-bit
/// counters are clamped to. A loop with the same limit stays on the lane
/// core, and with a 32-bit limit goes to the gang core. At a limit of 2 the
/// diamond's third block faults the same on every engine.
#[test]
fn unlimited_step_limits_take_the_gang_core_when_no_lane_can_loop() {
    let diamond = parse(&format!(
        "kernel @diamond shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 1
  v21 = and.i32 v3, v20
  v22 = const.i32 0
  v23 = icmp.eq.i32 v21, v22
  br v23, block1, block2

block1:
  store.global.i32 v6, v3
  jump block2

block2:
  exit
}}
"
    ));
    let looping = parse(&format!(
        "kernel @looping shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 0
  jump block1(v20)

block1(v21: i32):
  v22 = const.i32 1
  v23 = iadd.i32 v21, v22
  v24 = icmp.ult.i32 v23, v3
  br v24, block1(v23), block2

block2:
  store.global.i32 v6, v23
  exit
}}
"
    ));
    let jit = one_thread_gang(0);
    let mut d = Dispatch::new([2, 1, 1], [20, 1, 1]);
    d.step_limit = u64::MAX;
    let gang = |k, d: &Dispatch| match jit.compile_for(k, d) {
        Ok(c) => c.gang_takes(d),
        Err(e) => panic!("{e}"),
    };
    assert!(gang(&diamond, &d));
    assert!(!gang(&looping, &d));
    let out = compare(&diamond, &d, &[0; 256], &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for lane in 0..40u32 {
        assert_eq!(got[lane as usize], if lane % 2 == 0 { lane } else { 0 });
    }
    d.step_limit = u64::from(u32::MAX) - 2;
    assert!(gang(&looping, &d));
    d.step_limit = 2;
    let out = compare(&diamond, &d, &[0; 256], &[]);
    assert!(
        matches!(
            out.fault.as_ref().map(|f| &f.kind),
            Some(FaultKind::Watchdog { .. })
        ),
        "{:?}",
        out.fault
    );
}

/// An input flush is skipped only for values no lane can hold a subnormal
/// in: the result of an operation that flushes its results. A subnormal made
/// by an operation that keeps subnormals (through bitcasts, as lifters
/// write it) is flushed by the next `ftz.in` operation; the flushed chain
/// gives the same bits.
#[test]
fn input_flushes_are_skipped_only_after_flushing_operations() {
    let k = parse(&format!(
        "kernel @flushes shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.f32 0x00800000
  v21 = const.f32 0.25
  v22 = fmul.f32 v20, v21
  v23 = bitcast.f32.i32 v22
  v24 = bitcast.i32.f32 v23
  v25 = const.f32 1.0
  v26 = fmul.f32 v24, v25 ftz.in
  v27 = fmul.f32 v20, v21 ftz.out
  v28 = fmul.f32 v27, v25 ftz.in
  v29 = bitcast.f32.i32 v26
  v30 = bitcast.f32.i32 v28
  v31 = bitcast.f32.i32 v22
  v32 = iadd.i32 v29, v30
  v33 = xor.i32 v32, v31
  store.global.i32 v6, v33
  exit
}}
"
    ));
    let d = Dispatch::new([2, 1, 1], [20, 1, 1]);
    let out = compare(&k, &d, &[0; 256], &[]);
    assert_eq!(out.fault, None);
    // 2^-126 / 4 = 0x00200000 (subnormal); both flushed products are +0.
    assert!(u32s(&out.memory)[..40].iter().all(|&v| v == 0x0020_0000));
}

/// Quad (`i32x4`) loads and stores, as tinygrad's float4 kernels make them:
/// consecutive quads run as vector loads and stores with a 4x4 transpose,
/// and everything else goes lane by lane through the helper with the
/// interpreter's faults: partial chunks (workgroups of 20), quads that are
/// not 16 bytes apart (overlapping stores: the order of lanes decides),
/// misaligned quads, and a quad that leaves the buffer.
#[test]
fn quad_loads_and_stores_match_the_interpreter() {
    let quads = |stride: u32, offset: u32, step: u32| {
        parse(&format!(
            "kernel @quads shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 {stride}
  v21 = imul.i32 v3, v20
  v22 = const.i32 {offset}
  v23 = iadd.i32 v21, v22
  v24 = zext.i32.i64 v23
  v25 = const.i64 0x20000000
  v26 = iadd.i64 v25, v24
  v27, v28, v29, v30 = load.global.i32x4 v26
  v31 = iadd.i32 v27, v3
  v32 = const.i32 {step}
  v33 = imul.i32 v3, v32
  v34 = zext.i32.i64 v33
  v35 = const.i64 0x10000000
  v36 = iadd.i64 v35, v34
  store.global.i32x4 v36, v31, v28, v30, v29
  exit
}}
"
        ))
    };
    let ro: Vec<u8> = (0..2048u32)
        .flat_map(|i| (i * 7 + 1).to_le_bytes())
        .collect();
    let d = Dispatch::new([3, 1, 1], [20, 1, 1]);
    // Consecutive: lane i reads words 4i.. and writes words 4i.. (swapped).
    let out = compare(&quads(16, 0, 16), &d, &[0; 1024], &ro);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for i in 0..60u32 {
        let w = |j: u32| (4 * i + j) * 7 + 1;
        let want = [w(0) + i, w(1), w(3), w(2)];
        assert_eq!(got[4 * i as usize..4 * i as usize + 4], want, "lane {i}");
    }
    // Overlapping stores (4 bytes apart): the last lane's quad wins each word.
    let out = compare(&quads(16, 0, 4), &d, &[0; 1024], &ro);
    assert_eq!(out.fault, None);
    // Misaligned loads (4 bytes off a 16-byte quad) and a stride of 32.
    assert_eq!(compare(&quads(16, 4, 16), &d, &[0; 1024], &ro).fault, None);
    assert_eq!(compare(&quads(32, 0, 16), &d, &[0; 1024], &ro).fault, None);
    // The last lanes' quads leave the read-only buffer (8 KiB).
    let out = compare(&quads(160, 0, 16), &d, &[0; 1024], &ro);
    assert!(
        matches!(
            out.fault.as_ref().map(|f| &f.kind),
            Some(FaultKind::Memory { .. })
        ),
        "{:?}",
        out.fault
    );
}

/// Loads and stores at an address every lane of a chunk shares (ir3 keeps
/// its shared registers and the workgroup id in such slots): a shared slot
/// per wave written by all its lanes (the last lane's value stays) and read
/// back, under full and partial masks (the odd lanes store again), waves of
/// 8 in workgroups of 20, and a global word every lane reads.
#[test]
fn same_address_accesses_match_the_interpreter() {
    let k = parse(&format!(
        "kernel @same shared 64 private 0 {{
block0:
{PROLOGUE}  v20 = wave_id
  v21 = const.i32 4
  v22 = imul.i32 v20, v21
  v23 = iadd.i32 v3, v1
  store.shared.i32 v22, v23
  v24 = load.shared.i32 v22
  v25 = const.i32 1
  v26 = and.i32 v0, v25
  v27 = const.i32 0
  v28 = icmp.ne.i32 v26, v27
  br v28, block1, block2

block1:
  store.shared.i32 v22, v0
  jump block2

block2:
  v29 = load.shared.i32 v22
  v30 = const.i64 0x20000004
  v31 = load.global.i32 v30
  v32 = const.i32 8
  v33 = shl.i32 v24, v32
  v34 = xor.i32 v33, v29
  v35 = iadd.i32 v34, v31
  store.global.i32 v6, v35
  exit
}}
"
    ));
    let ro: Vec<u8> = (0..64u32).flat_map(|i| (1000 + i).to_le_bytes()).collect();
    let mut d = Dispatch::new([3, 1, 1], [20, 1, 1]);
    d.wave_size = 8;
    let out = compare(&k, &d, &[0; 256], &ro);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    // Lane i of workgroup w (wave i / 8): the slot holds the wave's last
    // lane's gid + w, then the wave's last odd local index.
    for w in 0..3u32 {
        for i in 0..20u32 {
            let wave_last = (i / 8 * 8 + 7).min(19);
            let first = w * 20 + wave_last + w;
            let last_odd = if wave_last % 2 == 1 {
                wave_last
            } else {
                wave_last - 1
            };
            let want = ((first << 8) ^ last_odd) + 1001;
            assert_eq!(got[(w * 20 + i) as usize], want, "group {w} lane {i}");
        }
    }
}

/// AGX's FP32 rules in whole-chunk loops, which run with the host's
/// hardware flush on (DAZ and FTZ): `r = x * y - fma(x, a, +0)` with every
/// input flushed and every result flushed before rounding, `a` a uniform.
/// With `a` zero (or a denormal, read as zero) `r` is the product itself.
/// Four workgroups of 64 lanes (whole chunks from the second on), each with
/// the same special lanes; against the interpreter on every JIT
/// configuration and exactly. A product that rounds up to the smallest
/// normal from below flushes; one that is exactly the smallest normal stays;
/// one whose exact value is the largest value below it, which IEEE rounds up
/// and FTZ flushes, flushes; flushed after rounding instead (the loop then
/// runs with DAZ alone, results flushed in code), it stays.
#[test]
fn whole_chunks_under_the_hardware_flush_keep_agxs_rules() {
    const N: usize = 256;
    // The addend as `a * 2^30`, which only the uniform decides.
    let kernel_with = |mul_rule: &str, sub_rule: &str, addend: &str| {
        parse(&format!(
            "kernel @agx shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v5, v20
  v22 = load.global.f32 v21
  v23 = load.global.f32 v6
  v24 = const.i32 0
  v25 = load.uniform.f32 v24
  v30 = const.f32 1073741824.0
  v26 = {addend}
  v27 = fma.f32 v22, v25, v26 ftz.in ftz.tiny
  v28 = fmul.f32 v22, v23 {mul_rule}
  v29 = fsub.f32 v28, v27 {sub_rule}
  store.global.f32 v6, v29
  exit
}}
"
        ))
    };
    let kernel = |mul_rule: &str, sub_rule: &str| kernel_with(mul_rule, sub_rule, "const.f32 0.0");
    let agx = "ftz.in ftz.tiny";
    // (x, y, x * y) with flush-before-rounding.
    let cases: [(u32, u32, u32); 12] = [
        // Denormal inputs read as zeros of their sign.
        (0x0000_0001, 0x3f80_0000, 0x0000_0000),
        (0x8000_0003, 0x3f80_0000, 0x8000_0000),
        (0x3f80_0000, 0x8000_0005, 0x8000_0000),
        // (1 - 2^-23)(1 + 2^-23) 2^-126 rounds up to 2^-126: flushed.
        (0x3f7f_fffe, 0x0080_0001, 0x0000_0000),
        (0xbf7f_fffe, 0x0080_0001, 0x8000_0000),
        // Exactly 2^-126: kept.
        (0x3f80_0000, 0x0080_0000, 0x0080_0000),
        // (1 - 2^-24) 2^-126, which IEEE rounds to 2^-126: flushed.
        (0x3f7f_ffff, 0x0080_0000, 0x0000_0000),
        // 2^-127: flushed with its sign.
        (0xbf00_0000, 0x0080_0000, 0x8000_0000),
        (0x3f80_0000, 0x3f80_0000, 0x3f80_0000),
        // NaNs keep the first operand's payload, quieted; inf * 0 is the
        // default NaN.
        (0x7fc0_1234, 0x3f80_0000, 0x7fc0_1234),
        (0x7f80_0001, 0x3f80_0000, 0x7fc0_0001),
        (0x7f80_0000, 0x0000_0000, 0x7fc0_0000),
    ];
    // A NaN or a result of exactly 2^-126 sends its chunk to the exact
    // redo: those lanes are in chunks of their own, so the others' chunk
    // runs on the hardware flush (lane 6's product is 2^-126 without FTZ).
    let at = |j: usize| match j {
        3..=5 => 16 + j,
        6 => 48,
        9.. => 23 + j,
        _ => j,
    };
    let case = |i: usize| {
        (0..cases.len())
            .find(|&j| at(j) == i % 64)
            .map(|j| cases[j])
    };
    let x: Vec<u32> = (0..N)
        .map(|i| match case(i) {
            Some(c) => c.0,
            None => (i as f32 * 0.75 - 20.0).to_bits(),
        })
        .collect();
    let y: Vec<u32> = (0..N)
        .map(|i| match case(i) {
            Some(c) => c.1,
            None => (i as f32 + 0.5).to_bits(),
        })
        .collect();
    let xb: Vec<u8> = x.iter().flat_map(|w| w.to_le_bytes()).collect();
    let yb: Vec<u8> = y.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut d = Dispatch::new([4, 1, 1], [64, 1, 1]);
    let mut run = |k: &wavejit_ir::Kernel, a: u32| {
        d.uniforms = a.to_le_bytes().to_vec();
        let out = compare(k, &d, &yb, &xb);
        assert_eq!(out.fault, None);
        u32s(&out.memory)
    };
    for a in [0u32, 0x8000_0007] {
        let got = run(&kernel(agx, agx), a);
        for wg in 0..4 {
            for (j, c) in cases.iter().enumerate() {
                let i = wg * 64 + at(j);
                assert_eq!(got[i], c.2, "a {a:#x} lane {i}: x {:#x} y {:#x}", c.0, c.1);
            }
        }
        let i = 64 + 40;
        assert_eq!(
            got[i],
            (f32::from_bits(x[i]) * f32::from_bits(y[i])).to_bits()
        );
    }
    // r = x y - 1.5 x, NaNs canonical: (1 - 2^-23) 2^-126 - 1.5 (1 - 2^-23),
    // a denormal x, a NaN.
    let got = run(
        &kernel(agx, &format!("{agx} nan=0x7fc00000")),
        1.5f32.to_bits(),
    );
    assert_eq!(
        [got[64 + at(3)], got[64], got[64 + at(9)]],
        [0xbfbf_fffe, 0x0000_0000, 0x7fc0_0000]
    );
    // A denormal `a` is flushed in `a * 2^30` too, which does not depend on
    // the loop (and may be placed outside it).
    let got = run(
        &kernel_with(agx, agx, &format!("fmul.f32 v25, v30 {agx}")),
        0x0000_0007,
    );
    for j in 0..9 {
        assert_eq!(got[64 + at(j)], cases[j].2);
    }
    // Flushing after rounding keeps what IEEE rounds up to 2^-126.
    let got = run(&kernel("ftz", agx), 0);
    assert_eq!(
        [got[64 + at(3)], got[64 + at(6)]],
        [0x0080_0000, 0x0080_0000]
    );
}

/// A kernel whose only reachable segment is its first, with unreachable
/// blocks after it (one storing, one exiting, as lifters leave them): the
/// gang core may run each slot as one wave as for a one-block kernel, and
/// the unreachable store never runs.
#[test]
fn unreachable_blocks_do_not_run() {
    let k = parse(&format!(
        "kernel @dead shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = load.global.i32 v6
  v21 = const.i32 5
  v22 = imul.i32 v20, v21
  store.global.i32 v6, v22
  exit
block1:
  v30 = const.i32 -1
  store.global.i32 v6, v30
  jump block2
block2:
  exit
}}
"
    ));
    let y: Vec<u8> = (0..300u32).flat_map(|i| i.to_le_bytes()).collect();
    let out = compare(&k, &Dispatch::new([3, 1, 1], [100, 1, 1]), &y, &[]);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    assert!(got.iter().enumerate().all(|(i, &w)| w == 5 * i as u32));
}

/// A kernel whose blocks want different hardware flushes: block0's
/// product flushes before rounding (DAZ and FTZ), block1's fma flushes after
/// rounding (DAZ alone, which is the whole function's). Block0's whole
/// chunks switch FTZ on (2^-70 squared becomes zero) and back; block1's
/// rely on the function's DAZ to read a subnormal `x` as zero in `x * 2^100`.
#[test]
fn whole_chunk_loops_switch_between_hardware_flushes() {
    const N: usize = 256;
    let k = parse(&format!(
        "kernel @two_rules shared 0 private 0 {{
block0:
{PROLOGUE}  v20 = const.i64 0x20000000
  v21 = iadd.i64 v5, v20
  v22 = load.global.f32 v21
  v23 = load.global.f32 v6
  v24 = fmul.f32 v23, v23 ftz.in ftz.tiny
  store.global.f32 v6, v24
  jump block1
block1:
  v30 = load.global.f32 v21
  v32 = const.i32 0x71800000
  v33 = bitcast.i32.f32 v32
  v35 = const.f32 0.0
  v34 = fma.f32 v30, v33, v35 ftz
  v36 = const.i64 {z}
  v37 = iadd.i64 v6, v36
  store.global.f32 v37, v34
  exit
}}
",
        z = N * 4
    ));
    // x subnormal but in lane 5 (2^-100), y 2^-70 but in lane 6 (3).
    let x: Vec<u8> = (0..N)
        .flat_map(|i| if i % 64 == 5 { 0x0d80_0000u32 } else { 7 }.to_le_bytes())
        .collect();
    let mut y: Vec<u32> = (0..N)
        .map(|i| {
            if i % 64 == 6 {
                3.0f32.to_bits()
            } else {
                0x1c80_0000
            }
        })
        .collect();
    y.resize(2 * N, 0);
    let y: Vec<u8> = y.iter().flat_map(|w| w.to_le_bytes()).collect();
    let out = compare(&k, &Dispatch::new([4, 1, 1], [64, 1, 1]), &y, &x);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for i in 0..N {
        let y = if i % 64 == 6 { 9.0f32.to_bits() } else { 0 };
        let z = if i % 64 == 5 { 1.0f32.to_bits() } else { 0 };
        assert_eq!((got[i], got[N + i]), (y, z), "lane {i}");
    }
}

/// Scattered word loads read lane by lane in compiled code (the gather):
/// global loads whose inactive lanes hold addresses far outside memory,
/// shared loads at a permuted index after a barrier, and a global gather
/// one of whose active lanes reads past the buffer (its fault, the lowest
/// lane's). Even lanes: out[i] = in[(5 * i) % 40] + shared[(7 * local) % 20];
/// odd lanes: out[i] = 1.
#[test]
fn scattered_loads_are_gathered_with_the_interpreters_faults() {
    let k = parse(&format!(
        "kernel @gather shared 80 private 0 {{
block0:
{PROLOGUE}  v20 = const.i32 2
  v21 = shl.i32 v0, v20
  v22 = const.i32 3
  v23 = imul.i32 v3, v22
  store.shared.i32 v21, v23
  barrier
  v24 = const.i32 5
  v25 = imul.i32 v3, v24
  v26 = const.i32 40
  v27 = urem.i32 v25, v26
  v28 = zext.i32.i64 v27
  v29 = shl.i64 v28, v11
  v30 = const.i32 1
  v31 = and.i32 v3, v30
  v32 = zext.i32.i64 v31
  v33 = const.i64 40
  v34 = shl.i64 v32, v33
  v35 = const.i64 0x20000000
  v36 = iadd.i64 v35, v29
  v37 = iadd.i64 v36, v34
  v38 = icmp.ne.i32 v31, v30
  br v38, block1, block2

block1:
  v40 = load.global.i32 v37
  v41 = const.i32 7
  v42 = imul.i32 v0, v41
  v43 = const.i32 20
  v44 = urem.i32 v42, v43
  v45 = shl.i32 v44, v20
  v46 = load.shared.i32 v45
  v47 = iadd.i32 v40, v46
  store.global.i32 v6, v47
  exit

block2:
  store.global.i32 v6, v30
  exit
}}
"
    ));
    let d = Dispatch::new([2, 1, 1], [20, 1, 1]);
    let input: Vec<u8> = (0..40u32)
        .flat_map(|i| (i * 1000 + 3).to_le_bytes())
        .collect();
    let out = compare(&k, &d, &[0; 160], &input);
    assert_eq!(out.fault, None);
    let got = u32s(&out.memory);
    for (i, &v) in got.iter().enumerate() {
        let i = i as u32;
        let want = if i % 2 == 1 {
            1
        } else {
            let (g, local) = (i / 20, i % 20);
            let peer = 20 * g + (7 * local) % 20;
            ((5 * i) % 40 * 1000 + 3) + 3 * peer
        };
        assert_eq!(v, want, "lane {i}");
    }
    // Inputs 0..30 only: lane 6 (an even lane) is the first to read in[30].
    let short = compare(&k, &d, &[0; 160], &input[..120]);
    let fault = short.fault.expect("an even lane reads past the input");
    assert_eq!(fault.lane.local, [6, 0, 0]);
    match fault.kind {
        FaultKind::Memory { addr, write, .. } => {
            assert_eq!(addr, support::RO + 30 * 4);
            assert!(!write);
        }
        other => panic!("unexpected fault {other:?}"),
    }
}
