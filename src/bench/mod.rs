//! Benchmark workloads shared by the criterion benches (`benches/`) and
//! `wavejit bench`: each runs a kernel on an engine and the same computation in
//! native Rust, so ratios are measured side by side in one run, and checks that
//! both give the same bits.

pub mod agx;
pub mod isa_report;
pub mod kernels;
pub mod rv32;
pub mod side;

use std::time::{Duration, Instant};

use crate::ir::{Dispatch, Engine, Kernel};
use crate::jit::{Jit, JitConfig, Tier};
use crate::runtime::AddressSpace;

/// A kernel with its buffers in place, ready to run repeatedly.
pub struct Workload {
    pub name: &'static str,
    pub kernel: Kernel,
    pub dispatch: Dispatch,
    pub mem: AddressSpace,
    out: (u64, usize),
    native: Box<dyn FnMut() -> Vec<u8>>,
}

fn parse(text: &str) -> Kernel {
    match crate::ir::text::parse(text) {
        Ok(k) => k,
        Err(e) => panic!("built-in benchmark kernel does not parse: {e}"),
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

fn inputs(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 977) as f32 * 0.125 - 30.0).collect()
}

impl Workload {
    fn with_buffers(
        name: &'static str,
        text: &str,
        n: usize,
        out_len: usize,
        wg: u32,
        extra_uniforms: &[u8],
        native: Box<dyn FnMut() -> Vec<u8>>,
    ) -> Workload {
        let mem = AddressSpace::new();
        let x = inputs(n);
        let (bx, by) = match (mem.alloc((n * 4) as u64), mem.alloc((out_len * 4) as u64)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => panic!("benchmark buffers of {n} elements cannot be mapped"),
        };
        let _ = mem.write_f32s(bx, &x);
        let mut dispatch = Dispatch::new([(n as u32) / wg, 1, 1], [wg, 1, 1]);
        dispatch.uniforms = [bx.to_le_bytes(), by.to_le_bytes()].concat();
        dispatch.uniforms.extend_from_slice(extra_uniforms);
        Workload {
            name,
            kernel: parse(text),
            dispatch,
            mem,
            out: (by, out_len * 4),
            native,
        }
    }

    /// 64 multiply-add rounds and integer hash steps per element.
    pub fn alu(n: usize) -> Workload {
        let x = inputs(n);
        Workload::with_buffers(
            "alu",
            &kernels::alu_text(64),
            n,
            n,
            256,
            &[],
            Box::new(move || {
                let mut y = vec![0u32; x.len()];
                kernels::alu_native(&x, &mut y, 64);
                y.iter().flat_map(|v| v.to_le_bytes()).collect()
            }),
        )
    }

    /// y = a*x + y over `n` floats (y starts at zero).
    pub fn saxpy(n: usize) -> Workload {
        let x = inputs(n);
        let mut w = Workload::with_buffers(
            "saxpy",
            kernels::SAXPY,
            n,
            n,
            256,
            &2.5f32.to_le_bytes(),
            Box::new(move || {
                let mut y = vec![0f32; x.len()];
                kernels::saxpy_native(2.5, &x, &mut y);
                f32_bytes(&y)
            }),
        );
        w.name = "saxpy";
        w
    }

    /// Per-lane trip counts 8..64.
    pub fn divergent(n: usize) -> Workload {
        let x = inputs(n);
        Workload::with_buffers(
            "divergent",
            kernels::DIVERGENT,
            n,
            n,
            256,
            &[],
            Box::new(move || {
                let mut y = vec![0f32; x.len()];
                kernels::divergent_native(&x, &mut y);
                f32_bytes(&y)
            }),
        )
    }

    /// Tree reduction in shared memory with a barrier per level.
    pub fn reduce(n: usize) -> Workload {
        let x = inputs(n);
        Workload::with_buffers(
            "reduce",
            kernels::REDUCE,
            n,
            n / 256,
            256,
            &[],
            Box::new(move || {
                let mut s = vec![0f32; x.len() / 256];
                kernels::reduce_native(&x, &mut s);
                f32_bytes(&s)
            }),
        )
    }

    /// Runs the kernel once on `engine`.
    pub fn run(&self, engine: &dyn Engine) {
        if let Err(f) = engine.run(&self.kernel, &self.dispatch, &self.mem) {
            panic!("benchmark `{}` faulted: {f}", self.name);
        }
    }

    /// Runs the native loop once; returns its output bytes.
    pub fn run_native(&mut self) -> Vec<u8> {
        (self.native)()
    }

    /// The kernel's output bytes.
    pub fn output(&self) -> Vec<u8> {
        self.mem
            .read_bytes(self.out.0, self.out.1)
            .unwrap_or_default()
    }

    /// Runs both once and tells whether they agree bit for bit.
    pub fn agrees(&mut self, engine: &dyn Engine) -> bool {
        self.run(engine);
        self.run_native() == self.output()
    }
}

/// A JIT with a fixed thread count.
pub fn jit_with_threads(threads: usize) -> Jit {
    Jit::new(JitConfig {
        threads,
        ..JitConfig::default()
    })
}

/// Median of `reps` timings of `f` (after one warm-up call).
pub fn median_time(reps: usize, mut f: impl FnMut()) -> Duration {
    f();
    let mut t: Vec<Duration> = (0..reps.max(1))
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[t.len() / 2]
}

/// Compile time per 100 instructions of the 16/256/1024-op bench kernels at
/// `tier`, as (instructions, ms per 100).
fn compile_ms_per_100_ops(tier: Tier) -> Vec<(usize, f64)> {
    [16usize, 256, 1024]
        .into_iter()
        .map(|ops| {
            let k = parse(&kernels::sized_text(ops));
            let n = k.op_count();
            // Median of 15 fresh engines after a warm-up: one compile is a few
            // hundred microseconds, so three samples were mostly noise.
            let t = median_time(15, || {
                let fresh = Jit::default();
                let _ = fresh.compile_at(&k, 256, tier);
            });
            (n, t.as_secs_f64() * 1e3 * 100.0 / n as f64)
        })
        .collect()
}

/// One row of the quick report.
pub struct Row {
    pub key: &'static str,
    pub value: f64,
    pub unit: &'static str,
    pub target: &'static str,
    pub note: String,
}

/// The quick benchmark set of `wavejit bench` (well under a minute): the IR
/// kernels, then the ISA rows of [`isa_report::isa_rows`].
pub fn quick_report() -> Vec<Row> {
    let mut rows = Vec::new();
    let jit = Jit::default();
    let ratio = |native: Duration, jit: Duration| native.as_secs_f64() / jit.as_secs_f64();

    let mut alu = Workload::alu(1 << 18);
    let exact = alu.agrees(&jit);
    let tj = median_time(5, || alu.run(&jit));
    let tn = median_time(5, || {
        alu.run_native();
    });
    rows.push(Row {
        key: "alu_vs_native",
        value: ratio(tn, tj),
        unit: "x",
        target: ">= 0.5",
        note: format!("jit {tj:.2?}, native {tn:.2?}, bit-exact {exact}"),
    });

    let mut saxpy = Workload::saxpy(1 << 22); // 16 MiB per buffer
    let exact = saxpy.agrees(&jit);
    let tj = median_time(5, || saxpy.run(&jit));
    let tn = median_time(5, || {
        saxpy.run_native();
    });
    rows.push(Row {
        key: "saxpy_vs_native",
        value: ratio(tn, tj),
        unit: "x",
        target: ">= 0.7",
        note: format!(
            "jit {tj:.2?}, native {tn:.2?} (native includes its allocation), bit-exact {exact}"
        ),
    });

    let mut div = Workload::divergent(1 << 16);
    let exact = div.agrees(&jit);
    let tj = median_time(5, || div.run(&jit));
    let tn = median_time(5, || {
        div.run_native();
    });
    rows.push(Row {
        key: "divergent_vs_native",
        value: ratio(tn, tj),
        unit: "x",
        target: "-",
        note: format!("jit {tj:.2?}, native {tn:.2?}, bit-exact {exact}"),
    });

    let mut red = Workload::reduce(1 << 18);
    let exact = red.agrees(&jit);
    let tj = median_time(5, || red.run(&jit));
    let tn = median_time(5, || {
        red.run_native();
    });
    rows.push(Row {
        key: "reduce_vs_native",
        value: ratio(tn, tj),
        unit: "x",
        target: "-",
        note: format!("jit {tj:.2?}, native {tn:.2?}, bit-exact {exact}"),
    });

    let small = Workload::alu(1 << 12);
    let interp = crate::ir::interp::Interpreter::new();
    let ti = median_time(1, || small.run(&interp));
    let tj = median_time(5, || small.run(&jit));
    rows.push(Row {
        key: "jit_vs_interpreter",
        value: ratio(ti, tj),
        unit: "x",
        target: ">= 100",
        note: format!("ALU kernel, 4096 lanes: interpreter {ti:.2?}, jit {tj:.2?}"),
    });

    // What a kernel waits for before its first run (the baseline tier), and
    // the optimized recompile that kernels running many lanes get (its row
    // comes after the original eight).
    let mut compile_rows = [
        ("compile_ms_per_100_ops", Tier::Baseline, "<= 1"),
        ("compile_optimized_ms_per_100_ops", Tier::Optimized, "-"),
    ]
    .map(|(key, tier, target)| {
        let per_100 = compile_ms_per_100_ops(tier);
        Row {
            key,
            value: per_100.iter().map(|p| p.1).fold(0.0, f64::max),
            unit: "ms",
            target,
            note: format!(
                "{tier:?} tier: {}",
                per_100
                    .iter()
                    .map(|(n, ms)| format!("{n} ops: {ms:.3} ms/100"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    })
    .into_iter();
    rows.extend(compile_rows.next());

    let k = parse(&kernels::sized_text(256));
    let _ = jit.compile(&k, 256);
    let hit = median_time(101, || {
        let _ = jit.compile(&k, 256);
    });
    rows.push(Row {
        key: "cache_hit_us",
        value: hit.as_secs_f64() * 1e6,
        unit: "us",
        target: "<= 5",
        note: format!("{}-op kernel", k.op_count()),
    });

    let big = Workload::alu(1 << 18);
    let one = jit_with_threads(1);
    let two = jit_with_threads(2);
    let t1 = median_time(5, || big.run(&one));
    let t2 = median_time(5, || big.run(&two));
    rows.push(Row {
        key: "two_thread_speedup",
        value: ratio(t1, t2),
        unit: "x",
        target: ">= 1.8",
        note: format!("ALU kernel: 1 thread {t1:.2?}, 2 threads {t2:.2?}"),
    });
    rows.extend(compile_rows);
    rows.extend(isa_report::isa_rows());
    rows
}
