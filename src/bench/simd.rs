//! Native SIMD twins of the benchmark kernels, at the width the JIT's vector
//! code uses: 128-bit vectors of four f32/i32 lanes (Cranelift's F32X4/I32X4),
//! a gang of [`LANES`] lanes as four vectors side by side.
//!
//! On x86-64 they are written with SSE2 intrinsics, plus SSE4.1's `pmulld` for
//! the ALU kernel's 32-bit multiply (checked at run time); elsewhere, and on an
//! x86-64 CPU without SSE4.1, the same gangs are plain arrays that the compiler
//! vectorizes. Each computes exactly the bits of its scalar twin in
//! [`kernels`] and of the IR kernel: separate multiply and add
//! (no FMA), the same order of additions. Elements after the last whole gang
//! go through the scalar twin.

use super::kernels::{self, ADD, HASH_ADD, HASH_MUL, HASH_SHIFT, MUL, REDUCE_GROUP};

/// Lanes per gang: four 4-lane vectors, as the JIT's vector runs.
pub const LANES: usize = 16;

/// How the twins run on this machine, for the report.
pub fn path() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.1") {
            "128-bit SSE2/SSE4.1 intrinsics, 16 lanes as 4 x 4"
        } else {
            "128-bit SSE2 intrinsics (alu: portable arrays, no SSE4.1), 16 lanes as 4 x 4"
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        "portable 16-lane arrays (compiler-vectorized)"
    }
}

/// Elements of `n` in whole gangs.
fn whole(n: usize) -> usize {
    n / LANES * LANES
}

/// [`kernels::alu_native_from`], a gang at a time.
pub fn alu_from(first: u32, x: &[f32], y: &mut [u32], rounds: usize) {
    let n = x.len().min(y.len());
    let w = whole(n);
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("sse4.1") {
            // SAFETY: the CPU has SSE4.1 (checked just above).
            unsafe { sse::alu(first, &x[..w], &mut y[..w], rounds) };
        } else {
            portable::alu(first, &x[..w], &mut y[..w], rounds);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    portable::alu(first, &x[..w], &mut y[..w], rounds);
    kernels::alu_native_from(first.wrapping_add(w as u32), &x[w..n], &mut y[w..n], rounds);
}

/// [`kernels::saxpy_native`], a gang at a time.
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let n = x.len().min(y.len());
    let w = whole(n);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        sse::saxpy(a, &x[..w], &mut y[..w]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    portable::saxpy(a, &x[..w], &mut y[..w]);
    kernels::saxpy_native(a, &x[w..n], &mut y[w..n]);
}

/// [`kernels::divergent_native_from`], a gang at a time: every lane of the gang
/// steps until the last one is done, lanes past their trip count masked off
/// (what the JIT's gangs are to do with a divergent loop).
pub fn divergent_from(first: u32, x: &[f32], y: &mut [f32]) {
    let n = x.len().min(y.len());
    let w = whole(n);
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        sse::divergent(first, &x[..w], &mut y[..w]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    portable::divergent(first, &x[..w], &mut y[..w]);
    kernels::divergent_native_from(first.wrapping_add(w as u32), &x[w..n], &mut y[w..n]);
}

/// [`kernels::reduce_native`] with each tree level's additions four at a time.
pub fn reduce(x: &[f32], sums: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        sse::reduce(x, sums);
    }
    #[cfg(not(target_arch = "x86_64"))]
    portable::reduce(x, sums);
}

#[cfg(target_arch = "x86_64")]
mod sse {
    use std::arch::x86_64::*;

    use super::{ADD, HASH_ADD, HASH_MUL, HASH_SHIFT, LANES, MUL, REDUCE_GROUP};

    /// Vectors per gang.
    const G: usize = LANES / 4;
    const SHIFT: i32 = HASH_SHIFT as i32;

    /// Four lanes from `s[at..at + 4]`.
    #[target_feature(enable = "sse2")]
    fn load(s: &[f32], at: usize) -> __m128 {
        let v = &s[at..at + 4];
        // SAFETY: `v` holds four f32s; `loadu` has no alignment requirement.
        unsafe { _mm_loadu_ps(v.as_ptr()) }
    }

    #[target_feature(enable = "sse2")]
    fn store(s: &mut [f32], at: usize, v: __m128) {
        let d = &mut s[at..at + 4];
        // SAFETY: `d` holds four f32s; `storeu` has no alignment requirement.
        unsafe { _mm_storeu_ps(d.as_mut_ptr(), v) }
    }

    #[target_feature(enable = "sse2")]
    fn store_u32(s: &mut [u32], at: usize, v: __m128i) {
        let d = &mut s[at..at + 4];
        // SAFETY: `d` holds four u32s (16 bytes); `storeu` has no alignment
        // requirement.
        unsafe { _mm_storeu_si128(d.as_mut_ptr().cast(), v) }
    }

    /// Global indices `base + 4j .. base + 4j + 4` of the gang's vector `j`.
    #[target_feature(enable = "sse2")]
    fn indices(base: u32, j: usize) -> __m128i {
        let first = base.wrapping_add(4 * j as u32) as i32;
        _mm_add_epi32(_mm_set1_epi32(first), _mm_setr_epi32(0, 1, 2, 3))
    }

    /// Whole gangs only (the caller does the rest).
    #[target_feature(enable = "sse4.1")]
    pub fn alu(first: u32, x: &[f32], y: &mut [u32], rounds: usize) {
        let (mul, add) = (_mm_set1_ps(MUL), _mm_set1_ps(ADD));
        let (hmul, hadd) = (
            _mm_set1_epi32(HASH_MUL as i32),
            _mm_set1_epi32(HASH_ADD as i32),
        );
        for (k, (xs, ys)) in x
            .chunks_exact(LANES)
            .zip(y.chunks_exact_mut(LANES))
            .enumerate()
        {
            let base = first.wrapping_add((k * LANES) as u32);
            let mut f = [_mm_setzero_ps(); G];
            let mut h = [_mm_setzero_si128(); G];
            for (j, (f, h)) in f.iter_mut().zip(h.iter_mut()).enumerate() {
                *f = load(xs, 4 * j);
                *h = indices(base, j);
            }
            for _ in 0..rounds {
                for (f, h) in f.iter_mut().zip(h.iter_mut()) {
                    *f = _mm_add_ps(_mm_mul_ps(*f, mul), add);
                    let t = _mm_add_epi32(_mm_mullo_epi32(*h, hmul), hadd);
                    *h = _mm_xor_si128(t, _mm_srli_epi32::<SHIFT>(t));
                }
            }
            for (j, (f, h)) in f.iter().zip(h.iter()).enumerate() {
                store_u32(ys, 4 * j, _mm_xor_si128(_mm_castps_si128(*f), *h));
            }
        }
    }

    /// Whole gangs only. `y = a * x + y`, the product first as in the kernel.
    #[target_feature(enable = "sse2")]
    pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
        let a = _mm_set1_ps(a);
        for (xs, ys) in x.chunks_exact(LANES).zip(y.chunks_exact_mut(LANES)) {
            for j in 0..G {
                let v = _mm_add_ps(_mm_mul_ps(a, load(xs, 4 * j)), load(ys, 4 * j));
                store(ys, 4 * j, v);
            }
        }
    }

    /// Whole gangs only.
    #[target_feature(enable = "sse2")]
    pub fn divergent(first: u32, x: &[f32], y: &mut [f32]) {
        let (mul, add) = (_mm_set1_ps(MUL), _mm_set1_ps(ADD));
        let zero = _mm_setzero_si128();
        for (k, (xs, ys)) in x
            .chunks_exact(LANES)
            .zip(y.chunks_exact_mut(LANES))
            .enumerate()
        {
            let base = first.wrapping_add((k * LANES) as u32);
            let mut f = [_mm_setzero_ps(); G];
            // Trips left per lane: 8 * (i % 8) + 8, as the kernel computes it.
            let mut left = [zero; G];
            for (j, (f, left)) in f.iter_mut().zip(left.iter_mut()).enumerate() {
                *f = load(xs, 4 * j);
                let phase = _mm_and_si128(indices(base, j), _mm_set1_epi32(7));
                *left = _mm_add_epi32(_mm_slli_epi32::<3>(phase), _mm_set1_epi32(8));
            }
            loop {
                // Counts stay in 0..=64, so the signed compare is exact.
                let mut live = [zero; G];
                let mut any = zero;
                for (live, left) in live.iter_mut().zip(left) {
                    *live = _mm_cmpgt_epi32(left, zero);
                    any = _mm_or_si128(any, *live);
                }
                if _mm_movemask_epi8(any) == 0 {
                    break;
                }
                for ((f, left), live) in f.iter_mut().zip(left.iter_mut()).zip(live) {
                    let next = _mm_add_ps(_mm_mul_ps(*f, mul), add);
                    let m = _mm_castsi128_ps(live);
                    *f = _mm_or_ps(_mm_and_ps(m, next), _mm_andnot_ps(m, *f));
                    // A live lane's mask is -1: one trip fewer.
                    *left = _mm_add_epi32(*left, live);
                }
            }
            for (j, f) in f.iter().enumerate() {
                store(ys, 4 * j, *f);
            }
        }
    }

    #[target_feature(enable = "sse2")]
    pub fn reduce(x: &[f32], sums: &mut [f32]) {
        const HALF: usize = REDUCE_GROUP / 2;
        for (chunk, out) in x.chunks_exact(REDUCE_GROUP).zip(sums.iter_mut()) {
            // The first level straight from x: t[i] = x[i] + x[i + 128].
            let mut t = [_mm_setzero_ps(); HALF / 4];
            for (j, t) in t.iter_mut().enumerate() {
                *t = _mm_add_ps(load(chunk, 4 * j), load(chunk, HALF + 4 * j));
            }
            // Levels 64 .. 4: t[i] += t[i + s], four lanes per vector.
            let mut v = t.len() / 2;
            while v >= 1 {
                for j in 0..v {
                    t[j] = _mm_add_ps(t[j], t[j + v]);
                }
                v /= 2;
            }
            // Levels 2 and 1 inside the last vector: (t0 + t2) + (t1 + t3).
            let a = t[0];
            let b = _mm_add_ps(a, _mm_movehl_ps(a, a));
            let c = _mm_add_ss(b, _mm_shuffle_ps::<0b01>(b, b));
            *out = _mm_cvtss_f32(c);
        }
    }
}

/// The twins as plain 16-lane arrays: the fallback off x86-64 (and for the ALU
/// kernel without SSE4.1), and a second check of the intrinsics in the tests.
/// Each does whole gangs only; the public twins above add the scalar tail.
pub mod portable {
    use super::{ADD, HASH_ADD, HASH_MUL, HASH_SHIFT, LANES, MUL, REDUCE_GROUP};

    fn gang(s: &[f32]) -> [f32; LANES] {
        let mut g = [0.0; LANES];
        g.copy_from_slice(s);
        g
    }

    /// Whole gangs only.
    pub fn alu(first: u32, x: &[f32], y: &mut [u32], rounds: usize) {
        for (k, (xs, ys)) in x
            .chunks_exact(LANES)
            .zip(y.chunks_exact_mut(LANES))
            .enumerate()
        {
            let base = first.wrapping_add((k * LANES) as u32);
            let mut f = gang(xs);
            let mut h: [u32; LANES] = std::array::from_fn(|l| base.wrapping_add(l as u32));
            for _ in 0..rounds {
                for (f, h) in f.iter_mut().zip(h.iter_mut()) {
                    *f = *f * MUL + ADD;
                    let t = h.wrapping_mul(HASH_MUL).wrapping_add(HASH_ADD);
                    *h = t ^ (t >> HASH_SHIFT);
                }
            }
            for ((y, f), h) in ys.iter_mut().zip(f).zip(h) {
                *y = f.to_bits() ^ h;
            }
        }
    }

    /// Whole gangs only.
    pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
        for (xs, ys) in x.chunks_exact(LANES).zip(y.chunks_exact_mut(LANES)) {
            let xv = gang(xs);
            for (y, x) in ys.iter_mut().zip(xv) {
                // Same bits as the kernel's product-first order: addition commutes.
                *y += a * x;
            }
        }
    }

    /// Whole gangs only.
    pub fn divergent(first: u32, x: &[f32], y: &mut [f32]) {
        for (k, (xs, ys)) in x
            .chunks_exact(LANES)
            .zip(y.chunks_exact_mut(LANES))
            .enumerate()
        {
            let base = first.wrapping_add((k * LANES) as u32);
            let mut f = gang(xs);
            let mut left: [u32; LANES] = std::array::from_fn(|l| {
                super::kernels::divergent_trips(base.wrapping_add(l as u32))
            });
            while left.iter().any(|&l| l > 0) {
                for (f, left) in f.iter_mut().zip(left.iter_mut()) {
                    let live = *left > 0;
                    let next = *f * MUL + ADD;
                    *f = if live { next } else { *f };
                    *left -= u32::from(live);
                }
            }
            ys.copy_from_slice(&f);
        }
    }

    pub fn reduce(x: &[f32], sums: &mut [f32]) {
        const HALF: usize = REDUCE_GROUP / 2;
        for (chunk, out) in x.chunks_exact(REDUCE_GROUP).zip(sums.iter_mut()) {
            let mut t = [0f32; HALF];
            for (t, (a, b)) in t.iter_mut().zip(chunk[..HALF].iter().zip(&chunk[HALF..])) {
                *t = *a + *b;
            }
            let mut s = HALF / 2;
            while s > 0 {
                let (lo, hi) = t.split_at_mut(s);
                for (a, b) in lo.iter_mut().zip(&hi[..s]) {
                    *a += *b;
                }
                s /= 2;
            }
            *out = t[0];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The benchmark inputs, some negative, at a size that leaves a partial gang.
    fn input(n: usize) -> Vec<f32> {
        super::super::inputs(n)
    }

    const N: usize = 3 * REDUCE_GROUP + 37;

    fn bits(v: &[f32]) -> Vec<u32> {
        v.iter().map(|f| f.to_bits()).collect()
    }

    #[test]
    fn alu_twins_match_the_scalar_loop() {
        let x = input(N);
        for first in [0u32, 5, u32::MAX - 20] {
            let mut want = vec![0u32; N];
            kernels::alu_native_from(first, &x, &mut want, 64);
            let mut simd = vec![0u32; N];
            alu_from(first, &x, &mut simd, 64);
            assert_eq!(simd, want, "first {first}");
            let mut arrays = vec![0u32; N];
            let w = whole(N);
            portable::alu(first, &x[..w], &mut arrays[..w], 64);
            assert_eq!(arrays[..w], want[..w], "first {first}");
        }
        // Lane 0 from f = -30.0, h = 0, computed out here.
        let mut f = -30.0f32;
        let mut h = 0u32;
        for _ in 0..64 {
            f = f * 1.0001 + 0.5;
            h = h.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            h ^= h >> 13;
        }
        let mut y = vec![0u32; LANES];
        alu_from(0, &x[..LANES], &mut y, 64);
        assert_eq!(y[0], f.to_bits() ^ h);
    }

    #[test]
    fn saxpy_twins_match_the_scalar_loop() {
        let x = input(N);
        // y starts from a previous run's output, as in the repeated benchmark.
        let start: Vec<f32> = x.iter().map(|v| v * 0.75 + 1.0).collect();
        let mut want = start.clone();
        kernels::saxpy_native(2.5, &x, &mut want);
        let mut simd = start.clone();
        saxpy(2.5, &x, &mut simd);
        assert_eq!(bits(&simd), bits(&want));
        let mut arrays = start.clone();
        let w = whole(N);
        portable::saxpy(2.5, &x[..w], &mut arrays[..w]);
        assert_eq!(bits(&arrays[..w]), bits(&want[..w]));
        // x[1] = -29.875: 2.5 * -29.875 + (-29.875 * 0.75 + 1.0), exact in f32.
        assert_eq!(want[1], -96.09375);
    }

    #[test]
    fn divergent_twins_match_the_scalar_loop() {
        let x = input(N);
        for first in [0u32, 3, 8] {
            let mut want = vec![0f32; N];
            kernels::divergent_native_from(first, &x, &mut want);
            let mut simd = vec![0f32; N];
            divergent_from(first, &x, &mut simd);
            assert_eq!(bits(&simd), bits(&want), "first {first}");
            let mut arrays = vec![0f32; N];
            let w = whole(N);
            portable::divergent(first, &x[..w], &mut arrays[..w]);
            assert_eq!(bits(&arrays[..w]), bits(&want[..w]), "first {first}");
        }
        // Lane 0 loops 8 times, lane 7 64 times.
        let step = |mut f: f32, trips| {
            for _ in 0..trips {
                f = f * 1.0001 + 0.5;
            }
            f
        };
        let mut y = vec![0f32; LANES];
        divergent_from(0, &x[..LANES], &mut y);
        assert_eq!(y[0].to_bits(), step(x[0], 8).to_bits());
        assert_eq!(y[7].to_bits(), step(x[7], 64).to_bits());
        assert_ne!(y[0], step(x[0], 9));
    }

    #[test]
    fn reduce_twins_match_the_scalar_tree() {
        let x = input(5 * REDUCE_GROUP);
        let mut want = vec![0f32; 5];
        kernels::reduce_native(&x, &mut want);
        let mut simd = vec![0f32; 5];
        reduce(&x, &mut simd);
        assert_eq!(bits(&simd), bits(&want));
        let mut arrays = vec![0f32; 5];
        portable::reduce(&x, &mut arrays);
        assert_eq!(bits(&arrays), bits(&want));
        // The first group is -30.0, -29.875, ... in steps of 0.125: exact sums.
        let exact: f64 = (0..256).map(|i| f64::from(i) * 0.125 - 30.0).sum();
        assert_eq!(f64::from(want[0]), exact);
    }
}
