//! Criterion benchmarks: each kernel on the JIT next to the same computation in
//! native Rust, in the same run, so the reports read as ratios.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use wavejit::bench::{Workload, jit_with_threads, kernels};
use wavejit::jit::Jit;

fn side_by_side(c: &mut Criterion, mut w: Workload, elements: u64) {
    let jit = Jit::default();
    assert!(w.agrees(&jit), "{}: JIT and native disagree", w.name);
    let mut g = c.benchmark_group(w.name);
    g.throughput(Throughput::Elements(elements));
    g.bench_function("jit", |b| b.iter(|| w.run(&jit)));
    g.bench_function("native", |b| b.iter(|| w.run_native()));
    g.finish();
}

fn alu(c: &mut Criterion) {
    side_by_side(c, Workload::alu(1 << 18), 1 << 18);
}

fn saxpy(c: &mut Criterion) {
    side_by_side(c, Workload::saxpy(1 << 22), 1 << 22);
}

fn divergent(c: &mut Criterion) {
    side_by_side(c, Workload::divergent(1 << 16), 1 << 16);
}

fn reduce(c: &mut Criterion) {
    side_by_side(c, Workload::reduce(1 << 18), 1 << 18);
}

fn compile(c: &mut Criterion) {
    let mut g = c.benchmark_group("compile");
    for ops in [16usize, 256, 1024] {
        let k = wavejit::ir::text::parse(&kernels::sized_text(ops)).expect("bench kernel parses");
        g.bench_with_input(BenchmarkId::from_parameter(k.op_count()), &k, |b, k| {
            b.iter(|| Jit::default().compile(k, 256).expect("compiles"))
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
    let jit = Jit::default();
    let interp = wavejit::ir::interp::Interpreter::new();
    let mut g = c.benchmark_group("alu_4096_lanes");
    g.sample_size(10);
    g.bench_function("interpreter", |b| b.iter(|| w.run(&interp)));
    g.bench_function("jit", |b| b.iter(|| w.run(&jit)));
    g.finish();
}

fn threads(c: &mut Criterion) {
    let w = Workload::alu(1 << 18);
    let mut g = c.benchmark_group("alu_threads");
    for t in [1usize, 2] {
        let jit = jit_with_threads(t);
        g.bench_function(BenchmarkId::from_parameter(t), |b| b.iter(|| w.run(&jit)));
    }
    g.finish();
}

criterion_group!(
    benches,
    alu,
    saxpy,
    divergent,
    reduce,
    compile,
    interpreter_vs_jit,
    threads
);
criterion_main!(benches);
