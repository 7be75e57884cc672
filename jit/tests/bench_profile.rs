//! The `wavejit bench` ALU and saxpy kernels on the JIT alone, for profiling
//! (`perf record`) and quick timing without the root crate:
//! `cargo test -p wavejit-jit --release --test bench_profile -- --ignored --nocapture`.
//! `WJ_PROFILE=alu|saxpy` picks one; `WJ_REPS` sets the repetitions,
//! `WJ_THREADS` the threads (1), `WJ_BATCH` the batch width.

mod support;

#[path = "../../src/bench/kernels.rs"]
#[allow(dead_code)]
mod kernels;

use std::time::Instant;

use support::{BUF, RO, TestMemory};
use wavejit_ir::{Dispatch, Engine, Kernel};
use wavejit_jit::{Jit, JitConfig};

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
    let jit = Jit::new(JitConfig {
        threads,
        batch_lanes,
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
        let n = 1 << 22;
        let (ms, got) = time(kernels::SAXPY, n, &2.5f32.to_le_bytes(), reps);
        let mut want = vec![0f32; n];
        kernels::saxpy_native(2.5, &inputs(n), &mut want);
        let want: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()).collect();
        // Every rep adds a*x again: compare after one rep only.
        if reps == 1 {
            assert!(got == want, "saxpy result differs from native");
        }
        eprintln!("saxpy: {ms:.2} ms");
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
            if let Err(e) = jit.compile(&k, 256) {
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
