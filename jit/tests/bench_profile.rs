//! The `wavejit bench` ALU and saxpy kernels on the JIT alone, for profiling
//! (`perf record`) and quick timing without the root crate:
//! `cargo test -p wavejit-jit --release --test bench_profile -- --ignored --nocapture`.
//! `WJ_PROFILE=alu|saxpy|divergent|reduce` picks one; `WJ_REPS` sets the repetitions,
//! `WJ_THREADS` the threads (1), `WJ_BATCH` the batch width.

mod support;

#[path = "../../src/bench/kernels.rs"]
#[allow(dead_code)]
mod kernels;

use std::time::Instant;

use support::{BUF, RO, TestMemory};
use wavejit_ir::{Dispatch, Engine, Kernel};
use wavejit_jit::{Jit, JitConfig, Tier};

fn parse(text: &str) -> Kernel {
    match wavejit_ir::text::parse(text) {
        Ok(k) => k,
        Err(e) => panic!("bench kernel does not parse: {e}"),
    }
}

fn inputs(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 977) as f32 * 0.125 - 30.0).collect()
}

/// Runs `text` over `n` lanes (x in the read-only buffer, y in the writable
/// one: two regions, like the bench's allocations) `reps` times; returns the
/// best time in ms and y.
fn time(text: &str, n: usize, extra: &[u8], reps: usize) -> (f64, Vec<u8>) {
    let x: Vec<u8> = inputs(n).iter().flat_map(|f| f.to_le_bytes()).collect();
    let mem = TestMemory::new(&vec![0; x.len()], &x, true);
    let mut d = Dispatch::new([(n / 256) as u32, 1, 1], [256, 1, 1]);
    d.uniforms = [RO.to_le_bytes(), BUF.to_le_bytes()].concat();
    d.uniforms.extend_from_slice(extra);
    let k = parse(text);
    let batch_lanes = std::env::var("WJ_BATCH")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(JitConfig::default().batch_lanes);
    let threads = std::env::var("WJ_THREADS")
        .ok()
        .and_then(|b| b.parse().ok())
        .unwrap_or(1);
    let optimize_after_lanes = match tier() {
        Tier::Baseline => u64::MAX,
        Tier::Optimized => 0,
    };
    let jit = Jit::new(JitConfig {
        threads,
        batch_lanes,
        optimize_after_lanes,
        ..JitConfig::default()
    });
    let mut best = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        if let Err(f) = jit.run(&k, &d, &mem) {
            panic!("bench kernel faulted: {f}");
        }
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
    }
    (best, mem.rw_bytes())
}

#[test]
#[ignore]
fn bench_kernels_on_the_jit() {
    let which = std::env::var("WJ_PROFILE").unwrap_or_default();
    let reps = std::env::var("WJ_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    if which.is_empty() || which == "alu" {
        let n = 1 << 18;
        let (ms, got) = time(&kernels::alu_text(64), n, &[], reps);
        let mut want = vec![0u32; n];
        kernels::alu_native(&inputs(n), &mut want, 64);
        let want: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(got == want, "alu result differs from native");
        eprintln!("alu: {ms:.2} ms");
    }
    if which.is_empty() || which == "saxpy" {
        // `WJ_SAXPY_LOG2` picks a smaller size (2^16 stays in the caches).
        let n = 1usize
            << std::env::var("WJ_SAXPY_LOG2")
                .ok()
                .and_then(|b| b.parse().ok())
                .unwrap_or(22u32);
        let (ms, got) = time(kernels::SAXPY, n, &2.5f32.to_le_bytes(), reps);
        let mut want = vec![0f32; n];
        kernels::saxpy_native(2.5, &inputs(n), &mut want);
        let want: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()).collect();
        // Every rep adds a*x again: compare after one rep only.
        if reps == 1 {
            assert!(got == want, "saxpy result differs from native");
        }
        eprintln!("saxpy: {ms:.2} ms ({:.2} ns per lane)", ms * 1e6 / n as f64);
    }
    if which.is_empty() || which == "divergent" {
        let n = 1 << 16;
        let (ms, got) = time(kernels::DIVERGENT, n, &[], reps);
        let mut want = vec![0f32; n];
        kernels::divergent_native(&inputs(n), &mut want);
        let want: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(got == want, "divergent result differs from native");
        eprintln!("divergent: {ms:.2} ms");
    }
    if which.is_empty() || which == "rowsum" {
        // Each lane sums 64 floats of x with a loop (tinygrad's reduce loops).
        let n = 1 << 16;
        let (ms, got) = time(ROWSUM, n, &[], reps);
        let x = inputs(n);
        let want: Vec<u8> = (0..n)
            .flat_map(|i| {
                let mut acc = 0f32;
                for k in 0..64 {
                    acc += x[(i + k * 1024) % n];
                }
                acc.to_le_bytes()
            })
            .collect();
        assert!(got == want, "rowsum result differs from native");
        eprintln!("rowsum: {ms:.2} ms");
    }
    if which.is_empty() || which == "reduce" {
        let n = 1 << 18;
        let (ms, got) = time(kernels::REDUCE, n, &[], reps);
        let mut want = vec![0f32; n / 256];
        kernels::reduce_native(&inputs(n), &mut want);
        let want: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(
            got[..want.len()] == want[..],
            "reduce result differs from native"
        );
        eprintln!("reduce: {ms:.2} ms");
    }
}

/// y[i] = sum over k < 64 of x[(i + 1024 k) mod 65536] (uniforms 0 &x, 8 &y).
const ROWSUM: &str = "kernel @rowsum shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = const.f32 0.0
  jump block1(v7, v4, v5)

block1(v8: f32, v9: i32, v10: i32):
  v11 = const.i32 65535
  v12 = and.i32 v9, v11
  v13 = zext.i32.i64 v12
  v14 = const.i64 2
  v15 = shl.i64 v13, v14
  v16 = iadd.i64 v6, v15
  v17 = load.global.f32 v16
  v18 = fadd.f32 v8, v17
  v19 = const.i32 1024
  v20 = iadd.i32 v9, v19
  v21 = const.i32 1
  v22 = iadd.i32 v10, v21
  v23 = const.i32 64
  v24 = icmp.ult.i32 v22, v23
  br v24, block1(v18, v20, v22), block2

block2:
  v25 = const.i32 8
  v26 = load.uniform.i64 v25
  v27 = zext.i32.i64 v4
  v28 = const.i64 2
  v29 = shl.i64 v27, v28
  v30 = iadd.i64 v26, v29
  store.global.f32 v30, v18
  exit
}
";

/// `WJ_TIER=baseline`: the single-pass register allocator (default: optimized).
fn tier() -> Tier {
    match std::env::var("WJ_TIER").as_deref() {
        Ok("baseline") => Tier::Baseline,
        _ => Tier::Optimized,
    }
}

/// Compile time of the `wavejit bench` sized kernels (fresh JIT each time).
#[test]
#[ignore]
fn bench_compile_times() {
    let reps = std::env::var("WJ_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    // `WJ_OPS=16` times one size only.
    let sizes: Vec<usize> = match std::env::var("WJ_OPS").ok().and_then(|s| s.parse().ok()) {
        Some(n) => vec![n],
        None => vec![16, 256, 1024],
    };
    for ops in sizes {
        // `WJ_OPS=0`: the empty kernel (the fixed cost of a compile).
        let k = if ops == 0 {
            parse("kernel @empty shared 0 private 0 {\nblock0:\n  exit\n}\n")
        } else {
            parse(&kernels::sized_text(ops))
        };
        // Compile alone (best), and as `wavejit bench` times it: median,
        // with creating and dropping the `Jit` (which frees the code).
        let (mut best, mut all) = (f64::MAX, Vec::with_capacity(reps));
        for _ in 0..reps {
            let t = Instant::now();
            let jit = Jit::default();
            if let Err(e) = jit.compile_at(&k, 256, tier()) {
                panic!("bench kernel does not compile: {e}");
            }
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
            drop(jit);
            all.push(t.elapsed().as_secs_f64() * 1e3);
        }
        all.sort_by(f64::total_cmp);
        let median = all[all.len() / 2];
        let n = k.op_count();
        eprintln!(
            "{n} ops: {best:.3} ms, {:.3} ms/100 ops (median with drop {median:.3} ms)",
            best * 100.0 / n as f64
        );
    }
}

/// What a cache hit costs: hashing and comparing the 258-op bench kernel.
#[test]
#[ignore]
fn bench_cache_hit() {
    use std::hash::{Hash, Hasher};
    let k = parse(&kernels::sized_text(256));
    let k2 = k.clone();
    let n = 10_000;
    let t = Instant::now();
    let mut eq = 0;
    for _ in 0..n {
        eq += usize::from(std::hint::black_box(&k) == std::hint::black_box(&k2));
    }
    let cmp = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for _ in 0..n {
        std::hint::black_box(&k).hash(&mut h);
    }
    let hash = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let jit = Jit::default();
    let _ = jit.compile(&k, 256);
    let t = Instant::now();
    for _ in 0..n {
        let _ = jit.compile(std::hint::black_box(&k), 256);
    }
    let hit = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    eprintln!(
        "compare {cmp:.2} us, siphash {hash:.2} us, hit {hit:.2} us ({eq}, {})",
        h.finish()
    );
}
