//! Criterion benchmarks: each kernel on the JIT next to the same computation in
//! native Rust, in the same run, so the reports read as ratios. The ISA groups
//! (`rv32_*` through the MMIO device, `agx_*`) name the emulated side `wavejit`;
//! `aql_dispatch_round_trip` times one empty-kernel dispatch through a queue.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use wavejit::bench::agx::AgxWorkload;
use wavejit::bench::isa_report::{ALU_ELEMENTS, SAXPY_ELEMENTS};
use wavejit::bench::rv32::Rv32Workload;
use wavejit::bench::side::{Computation, SideBySide};
use wavejit::bench::{Workload, jit_with_threads, kernels};
use wavejit::jit::Jit;
use wavejit::runtime::aql::Processing;
use wavejit::runtime::aql::bench::DispatchRoundTrip;

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
    compile,
    interpreter_vs_jit,
    threads,
    rv32_alu,
    rv32_saxpy,
    agx_alu,
    agx_saxpy,
    aql_dispatch
);
criterion_main!(benches);
