//! The benchmark kernels as IR text, each with the native Rust loop that does
//! the same computation (and must give the same bits).

use std::fmt::Write as _;

/// The float step `f = f * MUL + ADD` of the ALU and divergent kernels.
pub const MUL: f32 = 1.0001;
pub const ADD: f32 = 0.5;
/// The integer hash step `h = h * HASH_MUL + HASH_ADD; h ^= h >> HASH_SHIFT`.
pub const HASH_MUL: u32 = 1_664_525;
pub const HASH_ADD: u32 = 1_013_904_223;
pub const HASH_SHIFT: u32 = 13;
/// Elements each workgroup of the reduce kernel sums.
pub const REDUCE_GROUP: usize = 256;

/// Per element: 64 rounds of `f = f*a + b` (separate multiply and add, as the
/// native loop does) and an integer hash step; `y[i] = bits(f) ^ h`.
/// Uniforms: 0 &x, 8 &y.
pub fn alu_text(rounds: usize) -> String {
    let mut s = String::from(
        "kernel @alu shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = const.i32 8
  v8 = load.uniform.i64 v7
  v9 = zext.i32.i64 v4
  v10 = const.i64 2
  v11 = shl.i64 v9, v10
  v12 = iadd.i64 v6, v11
  v13 = iadd.i64 v8, v11
  v14 = load.global.f32 v12
  v15 = const.f32 1.0001
  v16 = const.f32 0.5
  v17 = const.i32 1664525
  v18 = const.i32 1013904223
  v19 = const.i32 13
",
    );
    let (mut f, mut h, mut next) = (14, 4, 20);
    for _ in 0..rounds {
        let _ = writeln!(s, "  v{next} = fmul.f32 v{f}, v15");
        let _ = writeln!(s, "  v{} = fadd.f32 v{next}, v16", next + 1);
        let _ = writeln!(s, "  v{} = imul.i32 v{h}, v17", next + 2);
        let _ = writeln!(s, "  v{} = iadd.i32 v{}, v18", next + 3, next + 2);
        let _ = writeln!(s, "  v{} = ushr.i32 v{}, v19", next + 4, next + 3);
        let _ = writeln!(s, "  v{} = xor.i32 v{}, v{}", next + 5, next + 3, next + 4);
        f = next + 1;
        h = next + 5;
        next += 6;
    }
    let _ = writeln!(s, "  v{next} = bitcast.f32.i32 v{f}");
    let _ = writeln!(s, "  v{} = xor.i32 v{next}, v{h}", next + 1);
    let _ = writeln!(s, "  store.global.i32 v13, v{}", next + 1);
    s.push_str("  exit\n}\n");
    s
}

pub fn alu_native(x: &[f32], y: &mut [u32], rounds: usize) {
    alu_native_from(0, x, y, rounds);
}

/// [`alu_native`] over the slice of a larger run that starts at global index
/// `first` (the hash starts from the index; a thread's share of a split run).
pub fn alu_native_from(first: u32, x: &[f32], y: &mut [u32], rounds: usize) {
    for (i, (xv, yv)) in x.iter().zip(y.iter_mut()).enumerate() {
        let mut f = *xv;
        let mut h = first.wrapping_add(i as u32);
        for _ in 0..rounds {
            f = f * MUL + ADD;
            h = h.wrapping_mul(HASH_MUL).wrapping_add(HASH_ADD);
            h ^= h >> HASH_SHIFT;
        }
        *yv = f.to_bits() ^ h;
    }
}

/// `y[i] = a * x[i] + y[i]` with a separate multiply and add.
/// Uniforms: 0 &x, 8 &y, 16 a.
pub const SAXPY: &str = "kernel @saxpy shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = const.i32 8
  v8 = load.uniform.i64 v7
  v9 = const.i32 16
  v10 = load.uniform.f32 v9
  v11 = zext.i32.i64 v4
  v12 = const.i64 2
  v13 = shl.i64 v11, v12
  v14 = iadd.i64 v6, v13
  v15 = iadd.i64 v8, v13
  v16 = load.global.f32 v14
  v17 = load.global.f32 v15
  v18 = fmul.f32 v10, v16
  v19 = fadd.f32 v18, v17
  store.global.f32 v15, v19
  exit
}
";

pub fn saxpy_native(a: f32, x: &[f32], y: &mut [f32]) {
    for (xv, yv) in x.iter().zip(y.iter_mut()) {
        *yv += a * *xv;
    }
}

/// Divergent trip counts: lane i loops `8 * (i % 8) + 8` times over
/// `f = f*a + b`, so neighbouring lanes leave the loop at different times.
/// Uniforms: 0 &x, 8 &y.
pub const DIVERGENT: &str = "kernel @divergent shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = const.i32 8
  v8 = load.uniform.i64 v7
  v9 = zext.i32.i64 v4
  v10 = const.i64 2
  v11 = shl.i64 v9, v10
  v12 = iadd.i64 v6, v11
  v13 = iadd.i64 v8, v11
  v14 = load.global.f32 v12
  v15 = const.i32 7
  v16 = and.i32 v4, v15
  v17 = const.i32 3
  v18 = shl.i32 v16, v17
  v19 = const.i32 8
  v20 = iadd.i32 v18, v19
  jump block1(v14, v20)

block1(v21: f32, v22: i32):
  v23 = const.f32 1.0001
  v24 = const.f32 0.5
  v25 = fmul.f32 v21, v23
  v26 = fadd.f32 v25, v24
  v27 = const.i32 1
  v28 = isub.i32 v22, v27
  v29 = const.i32 0
  v30 = icmp.ne.i32 v28, v29
  br v30, block1(v26, v28), block2

block2:
  store.global.f32 v13, v26
  exit
}
";

pub fn divergent_native(x: &[f32], y: &mut [f32]) {
    divergent_native_from(0, x, y);
}

/// Lane `i` of the trip count in [`DIVERGENT`] (`8 * (i % 8) + 8`).
pub fn divergent_trips(i: u32) -> u32 {
    8 * (i % 8) + 8
}

/// [`divergent_native`] over the slice of a larger run that starts at global
/// index `first`.
pub fn divergent_native_from(first: u32, x: &[f32], y: &mut [f32]) {
    for (i, (xv, yv)) in x.iter().zip(y.iter_mut()).enumerate() {
        let mut f = *xv;
        for _ in 0..divergent_trips(first.wrapping_add(i as u32)) {
            f = f * MUL + ADD;
        }
        *yv = f;
    }
}

/// Workgroups of 256 sum their slice of x in shared memory by a tree with a
/// barrier per level (the barrier sits in the loop); lane 0 writes the sum.
/// Uniforms: 0 &x, 8 &sums.
pub const REDUCE: &str = "kernel @reduce shared 1024 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = zext.i32.i64 v4
  v8 = const.i64 2
  v9 = shl.i64 v7, v8
  v10 = iadd.i64 v6, v9
  v11 = load.global.f32 v10
  v12 = const.i32 2
  v13 = shl.i32 v0, v12
  store.shared.f32 v13, v11
  v14 = const.i32 128
  jump block1(v14)

block1(v15: i32):
  barrier
  v16 = icmp.ult.i32 v0, v15
  br v16, block2, block3

block2:
  v17 = iadd.i32 v0, v15
  v18 = shl.i32 v17, v12
  v19 = load.shared.f32 v13
  v20 = load.shared.f32 v18
  v21 = fadd.f32 v19, v20
  store.shared.f32 v13, v21
  jump block3

block3:
  v22 = const.i32 1
  v23 = ushr.i32 v15, v22
  v24 = const.i32 0
  v25 = icmp.ne.i32 v23, v24
  br v25, block1(v23), block4

block4:
  barrier
  v26 = icmp.eq.i32 v0, v24
  br v26, block5, block6

block5:
  v27 = load.shared.f32 v24
  v28 = const.i32 8
  v29 = load.uniform.i64 v28
  v30 = zext.i32.i64 v1
  v31 = shl.i64 v30, v8
  v32 = iadd.i64 v29, v31
  store.global.f32 v32, v27
  jump block6

block6:
  exit
}
";

pub fn reduce_native(x: &[f32], sums: &mut [f32]) {
    let mut tree = [0f32; REDUCE_GROUP];
    for (chunk, out) in x.chunks_exact(REDUCE_GROUP).zip(sums.iter_mut()) {
        tree.copy_from_slice(chunk);
        let mut s = 128;
        while s > 0 {
            for i in 0..s {
                tree[i] += tree[i + s];
            }
            s >>= 1;
        }
        *out = tree[0];
    }
}

/// A straight-line kernel of about `ops` instructions (for compile-time
/// figures): the ALU kernel with as many rounds as fit.
pub fn sized_text(ops: usize) -> String {
    alu_text((ops.saturating_sub(20) / 6).max(1))
}
