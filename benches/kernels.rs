//! Criterion benchmarks: each kernel on the JIT next to the same computation in
//! native Rust, in the same run, so the reports read as ratios. The native side
//! is what `wavejit bench` compares with: preallocated buffers (in place), the
//! same thread count as the JIT beside it, the plain loop (`native_*`) and the
//! 128-bit SIMD twin (`simd_native_*`), both checked bit-exact against the JIT
//! first. Criterion measures wall time; `wavejit bench` adds CPU time. The ISA groups
//! (`rv32_*` through the MMIO device, `agx_*`) name the emulated side `wavejit`;
//! `aql_dispatch_round_trip` times one empty-kernel dispatch through a queue.

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use wavejit::bench::agx::AgxWorkload;
use wavejit::bench::isa_report::{ALU_ELEMENTS, SAXPY_ELEMENTS};
use wavejit::bench::rv32::Rv32Workload;
use wavejit::bench::side::{Computation, SideBySide};
use wavejit::bench::{Side, Twin, Workload, jit_with_threads, kernels};
use wavejit::jit::{Jit, Tier};
use wavejit::runtime::aql::Processing;
use wavejit::runtime::aql::bench::DispatchRoundTrip;

/// Checks that every native side gives the 1-thread JIT's bits before anything
/// is timed.
fn check(w: &mut Workload, jit: &Jit, sides: &[Side<'_>]) {
    match w.agreement(jit, sides) {
        Ok(exact) => {
            for (side, exact) in sides.iter().zip(exact) {
                assert!(exact, "{}: {} disagrees with the JIT", w.name, side.label());
            }
        }
        Err(e) => panic!("{e}"),
    }
}

fn run(w: &Workload, jit: &Jit) {
    if let Err(e) = w.run(jit) {
        panic!("{e}");
    }
}

/// The JIT on one thread next to the plain and the SIMD native loop on one
/// thread, over preallocated buffers (the native side runs in place).
fn side_by_side(c: &mut Criterion, mut w: Workload) {
    let jit = jit_with_threads(1);
    let natives = [Twin::Scalar, Twin::Simd].map(|twin| Side::Native { twin, threads: 1 });
    check(&mut w, &jit, &natives);
    let mut g = c.benchmark_group(w.name);
    g.throughput(Throughput::Elements(w.lanes() as u64));
    g.bench_function("jit_1t", |b| b.iter(|| run(&w, &jit)));
    g.bench_function("native_1t", |b| b.iter(|| w.run_native(Twin::Scalar, 1)));
    g.bench_function("simd_native_1t", |b| b.iter(|| w.run_native(Twin::Simd, 1)));
    g.finish();
}

/// 1 and 2 threads: the JIT, and the native loops split in halves.
fn two_threads(c: &mut Criterion, mut w: Workload) {
    let (one, two) = (jit_with_threads(1), jit_with_threads(2));
    let mut sides = vec![Side::Jit(&two)];
    for twin in [Twin::Scalar, Twin::Simd] {
        sides.extend([1, 2].map(|threads| Side::Native { twin, threads }));
    }
    check(&mut w, &one, &sides);
    let mut g = c.benchmark_group(format!("{}_threads", w.name));
    g.throughput(Throughput::Elements(w.lanes() as u64));
    g.sample_size(10);
    g.bench_function("jit_1t", |b| b.iter(|| run(&w, &one)));
    g.bench_function("jit_2t", |b| b.iter(|| run(&w, &two)));
    for twin in [Twin::Scalar, Twin::Simd] {
        for threads in [1, 2] {
            let name = match twin {
                Twin::Scalar => format!("native_{threads}t"),
                Twin::Simd => format!("simd_native_{threads}t"),
            };
            g.bench_function(name, |b| b.iter(|| w.run_native(twin, threads)));
        }
    }
    g.finish();
}

fn alu(c: &mut Criterion) {
    side_by_side(c, Workload::alu(1 << 18));
}

fn saxpy(c: &mut Criterion) {
    side_by_side(c, Workload::saxpy(1 << 22));
}

fn divergent(c: &mut Criterion) {
    side_by_side(c, Workload::divergent(1 << 16));
}

fn reduce(c: &mut Criterion) {
    side_by_side(c, Workload::reduce(1 << 18));
}

fn threads(c: &mut Criterion) {
    two_threads(c, Workload::alu(1 << 22));
    two_threads(c, Workload::saxpy(1 << 22));
}

fn compile(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    for ops in [16usize, 256, 1024] {
        let k = wavejit::ir::text::parse(&kernels::sized_text(ops)).expect("bench kernel parses");
        // A fresh engine per compile, made and dropped outside the timing.
        g.bench_with_input(BenchmarkId::from_parameter(k.op_count()), &k, |b, k| {
            b.iter_batched_ref(
                Jit::default,
                |jit| jit.compile_at(k, 256, Tier::Baseline).expect("compiles"),
                BatchSize::SmallInput,
            )
        });
    }
    let k = wavejit::ir::text::parse(&kernels::sized_text(256)).expect("bench kernel parses");
    let jit = Jit::default();
    jit.compile(&k, 256).expect("compiles");
    g.bench_function("cache_hit", |b| {
        b.iter(|| jit.compile(&k, 256).expect("hit"))
    });
    g.finish();
}

fn interpreter_vs_jit(c: &mut Criterion) {
    let w = Workload::alu(1 << 12);
    let jit = jit_with_threads(1);
    let interp = wavejit::ir::interp::Interpreter::new();
    let mut g = c.benchmark_group("alu_4096_lanes");
    g.sample_size(10);
    g.bench_function("interpreter", |b| {
        b.iter(|| {
            if let Err(e) = w.run(&interp) {
                panic!("{e}");
            }
        })
    });
    g.bench_function("jit_1t", |b| b.iter(|| run(&w, &jit)));
    g.finish();
}

/// An ISA workload next to native Rust; `samples` keeps the slow ones short.
fn isa_side_by_side(c: &mut Criterion, mut w: impl SideBySide, elements: usize, samples: usize) {
    match w.agrees() {
        Ok(true) => {}
        Ok(false) => panic!("{}: wavejit and native disagree", w.name()),
        Err(e) => panic!("{e}"),
    }
    let mut g = c.benchmark_group(w.name());
    g.throughput(Throughput::Elements(elements as u64));
    g.sample_size(samples);
    g.bench_function("wavejit", |b| {
        b.iter(|| {
            if let Err(e) = w.run() {
                panic!("{e}");
            }
        })
    });
    g.bench_function("native", |b| b.iter(|| w.run_native()));
    g.finish();
}

fn rv32_alu(c: &mut Criterion) {
    let w = Rv32Workload::new(Computation::Alu, ALU_ELEMENTS).expect("rv32 alu set up");
    isa_side_by_side(c, w, ALU_ELEMENTS, 20);
}

fn rv32_saxpy(c: &mut Criterion) {
    let w = Rv32Workload::new(Computation::Saxpy, SAXPY_ELEMENTS).expect("rv32 saxpy set up");
    isa_side_by_side(c, w, SAXPY_ELEMENTS, 10);
}

fn agx_alu(c: &mut Criterion) {
    let w = AgxWorkload::new(Computation::Alu, ALU_ELEMENTS).expect("agx alu set up");
    isa_side_by_side(c, w, ALU_ELEMENTS, 10);
}

fn agx_saxpy(c: &mut Criterion) {
    let w = AgxWorkload::new(Computation::Saxpy, SAXPY_ELEMENTS).expect("agx saxpy set up");
    isa_side_by_side(c, w, SAXPY_ELEMENTS, 10);
}

fn aql_dispatch(c: &mut Criterion) {
    let mut g = c.benchmark_group("aql_dispatch_round_trip");
    for (name, processing) in [
        ("thread", Processing::Thread),
        ("manual", Processing::Manual),
    ] {
        let mut rt = DispatchRoundTrip::new(processing).expect("aql queue set up");
        g.bench_function(name, |b| b.iter(|| rt.run_once().expect("empty dispatch")));
    }
    g.finish();
}

criterion_group!(
    benches,
    alu,
    saxpy,
    divergent,
    reduce,
    threads,
    compile,
    interpreter_vs_jit,
    rv32_alu,
    rv32_saxpy,
    agx_alu,
    agx_saxpy,
    aql_dispatch
);
criterion_main!(benches);
