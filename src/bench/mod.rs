//! Benchmark workloads shared by the criterion benches (`benches/`) and
//! `wavejit bench`: each runs a kernel on an engine and the same computation in
//! native Rust, so ratios are measured side by side in one run.
//!
//! The native side is honest: its buffers are allocated once, a timed run is
//! the computation alone (in place), it runs on as many threads as the JIT it
//! is compared with, and besides the plain loop there is a SIMD twin at the
//! JIT's vector width ([`simd`]). Every side is checked bit for bit against the
//! 1-thread JIT before anything is timed; ratios come from CPU time (medians of
//! alternated runs, each timed run after untimed runs of the same side:
//! [`timing::alternated`]), with wall time in the notes.

pub mod agx;
pub mod isa_report;
pub mod kernels;
pub mod native;
pub mod qemu;
pub mod rv32;
pub mod side;
pub mod simd;
pub mod timing;
pub mod tinygrad;

use std::fmt;

pub use native::{Native, Task, Twin};
use timing::{Clock, REPS, Sample, short};

use crate::ir::{Dispatch, Engine, Kernel};
use crate::jit::{Jit, JitConfig, Tier};
use crate::runtime::AddressSpace;

/// A kernel with its buffers in place next to its native twins' buffers,
/// ready to run repeatedly.
pub struct Workload {
    pub name: &'static str,
    pub kernel: Kernel,
    pub dispatch: Dispatch,
    pub mem: AddressSpace,
    out: (u64, usize),
    pub native: Native,
}

/// What runs a workload: an engine, or a native twin on some threads.
#[derive(Clone, Copy)]
pub enum Side<'a> {
    /// A JIT (its thread count is in its config); warmed up until it stops
    /// compiling before it is timed.
    Jit(&'a Jit),
    /// Any other engine (the interpreter).
    Engine(&'a dyn Engine),
    Native {
        twin: Twin,
        threads: usize,
    },
}

impl Side<'_> {
    pub fn label(&self) -> String {
        match self {
            Side::Jit(j) => format!("jit {}t", j.config().threads),
            Side::Engine(e) => e.name().to_string(),
            Side::Native { twin, threads } => format!("{} {threads}t", twin.label()),
        }
    }
}

fn parse(text: &str) -> Kernel {
    match crate::ir::text::parse(text) {
        Ok(k) => k,
        Err(e) => panic!("built-in benchmark kernel does not parse: {e}"),
    }
}

fn inputs(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i % 977) as f32 * 0.125 - 30.0).collect()
}

impl Workload {
    fn new(
        name: &'static str,
        text: &str,
        task: Task,
        n: usize,
        extra_uniforms: &[u8],
    ) -> Workload {
        const WG: u32 = 256;
        let native = Native::new(task, inputs(n));
        let out_len = native.output_len();
        let mem = AddressSpace::new();
        let (bx, by) = match (mem.alloc((n * 4) as u64), mem.alloc(out_len as u64)) {
            (Ok(a), Ok(b)) => (a, b),
            _ => panic!("benchmark buffers of {n} elements cannot be mapped"),
        };
        if let Err(e) = mem.write_f32s(bx, native.x()) {
            panic!("benchmark input of {n} elements cannot be written: {e}");
        }
        let mut dispatch = Dispatch::new([(n as u32) / WG, 1, 1], [WG, 1, 1]);
        dispatch.uniforms = [bx.to_le_bytes(), by.to_le_bytes()].concat();
        dispatch.uniforms.extend_from_slice(extra_uniforms);
        Workload {
            name,
            kernel: parse(text),
            dispatch,
            mem,
            out: (by, out_len),
            native,
        }
    }

    /// 64 multiply-add rounds and integer hash steps per element.
    pub fn alu(n: usize) -> Workload {
        Workload::new(
            "alu",
            &kernels::alu_text(64),
            Task::Alu { rounds: 64 },
            n,
            &[],
        )
    }

    /// y = a*x + y over `n` floats, in place (y starts at zero).
    pub fn saxpy(n: usize) -> Workload {
        Workload::new(
            "saxpy",
            kernels::SAXPY,
            Task::Saxpy { a: 2.5 },
            n,
            &2.5f32.to_le_bytes(),
        )
    }

    /// Per-lane trip counts 8..64.
    pub fn divergent(n: usize) -> Workload {
        Workload::new("divergent", kernels::DIVERGENT, Task::Divergent, n, &[])
    }

    /// Tree reduction in shared memory with a barrier per level.
    pub fn reduce(n: usize) -> Workload {
        Workload::new("reduce", kernels::REDUCE, Task::Reduce, n, &[])
    }

    /// Lanes (elements of x).
    pub fn lanes(&self) -> usize {
        self.native.x().len()
    }

    /// Runs the kernel once on `engine`.
    pub fn run(&self, engine: &dyn Engine) -> Result<(), String> {
        engine
            .run(&self.kernel, &self.dispatch, &self.mem)
            .map_err(|f| {
                format!(
                    "benchmark `{}` faulted on {}: {f}",
                    self.name,
                    engine.name()
                )
            })
    }

    /// Runs a native twin once over its preallocated buffers.
    pub fn run_native(&mut self, twin: Twin, threads: usize) {
        self.native.run(twin, threads);
    }

    pub fn run_side(&mut self, side: Side<'_>) -> Result<(), String> {
        match side {
            Side::Jit(j) => self.run(j),
            Side::Engine(e) => self.run(e),
            Side::Native { twin, threads } => {
                self.run_native(twin, threads);
                Ok(())
            }
        }
    }

    /// Both outputs (the kernel's and the native one) back to zero.
    pub fn reset(&mut self) -> Result<(), String> {
        self.native.reset();
        self.mem
            .write_bytes(self.out.0, &vec![0; self.out.1])
            .map_err(|e| format!("{}: zeroing the output: {e}", self.name))
    }

    /// The kernel's output bytes.
    pub fn output(&self) -> Result<Vec<u8>, String> {
        self.mem
            .read_bytes(self.out.0, self.out.1)
            .map_err(|e| format!("{}: reading the output: {e}", self.name))
    }

    fn side_output(&self, side: Side<'_>) -> Result<Vec<u8>, String> {
        match side {
            Side::Native { .. } => Ok(self.native.output_bytes()),
            Side::Jit(_) | Side::Engine(_) => self.output(),
        }
    }

    /// Runs `reference` once, then each side once, each from zeroed outputs;
    /// tells for each side whether it gave the reference's bits.
    pub fn agreement(
        &mut self,
        reference: &dyn Engine,
        sides: &[Side<'_>],
    ) -> Result<Vec<bool>, String> {
        self.reset()?;
        self.run(reference)?;
        let want = self.output()?;
        sides
            .iter()
            .map(|&side| {
                self.reset()?;
                self.run_side(side)?;
                Ok(self.side_output(side)? == want)
            })
            .collect()
    }

    /// Runs the kernel on `jit` until a run compiles nothing: a kernel that
    /// starts at the baseline tier is recompiled optimized after enough lanes,
    /// and that compile must not land in a timed run.
    pub fn settle(&mut self, jit: &Jit) -> Result<(), String> {
        for _ in 0..4 {
            let before = jit.compile_count();
            self.run(jit)?;
            if jit.compile_count() == before {
                break;
            }
        }
        Ok(())
    }
}

/// A JIT with a fixed thread count.
pub fn jit_with_threads(threads: usize) -> Jit {
    Jit::new(JitConfig {
        threads,
        ..JitConfig::default()
    })
}

/// The sides of one workload timed together: labels, bit-exactness against the
/// 1-thread JIT, medians.
struct Comparison {
    lanes: usize,
    labels: Vec<String>,
    exact: Vec<bool>,
    times: Vec<Sample>,
}

/// Checks every side against `reference`, runs the JITs until they stop
/// compiling, then times the sides alternated.
fn compare(w: &mut Workload, reference: &Jit, sides: &[Side<'_>]) -> Result<Comparison, String> {
    let exact = w.agreement(reference, sides)?;
    for side in sides {
        if let Side::Jit(j) = side {
            w.settle(j)?;
        }
    }
    let times = timing::alternated(REPS, sides.len(), timing::WARM, |i| w.run_side(sides[i]))?;
    Ok(Comparison {
        lanes: w.lanes(),
        labels: sides.iter().map(Side::label).collect(),
        exact,
        times,
    })
}

/// What a row is to reach.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    AtLeast(f64),
    AtMost(f64),
    /// Reported, no target.
    None,
}

impl Target {
    /// Whether `v` meets the target (`None` without one).
    pub fn met(self, v: f64) -> Option<bool> {
        match self {
            Target::AtLeast(t) => Some(v >= t),
            Target::AtMost(t) => Some(v <= t),
            Target::None => None,
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `1.8` as it is, 2/3 to three figures rather than all seventeen.
        let t = |v: f64| {
            let s = v.to_string();
            if s.len() > 6 { format!("{v:.3}") } else { s }
        };
        match self {
            Target::AtLeast(v) => write!(f, ">= {}", t(*v)),
            Target::AtMost(v) => write!(f, "<= {}", t(*v)),
            Target::None => f.write_str("-"),
        }
    }
}

/// One row of the quick report.
pub struct Row {
    pub key: &'static str,
    pub value: f64,
    pub unit: &'static str,
    pub target: Target,
    pub note: String,
    /// A side disagreed with the JIT, or the measurement could not be made:
    /// the value means nothing.
    pub failed: bool,
    /// Not measured on this machine (an external baseline such as qemu is
    /// absent); the note says why. Not a failure.
    pub skipped: bool,
}

impl Row {
    /// A row that could not be measured.
    pub fn failure(key: &'static str, unit: &'static str, target: Target, why: String) -> Row {
        Row {
            key,
            value: f64::NAN,
            unit,
            target,
            note: why,
            failed: true,
            skipped: false,
        }
    }

    /// A row not measured here, and why.
    pub fn skipped(key: &'static str, unit: &'static str, target: Target, why: String) -> Row {
        Row {
            skipped: true,
            failed: false,
            ..Row::failure(key, unit, target, why)
        }
    }

    /// `FAILED`, `SKIPPED`, `ok`, `MISS`, or `-` for a row without a target.
    pub fn status(&self) -> &'static str {
        if self.skipped && !self.failed {
            return "SKIPPED";
        }
        if self.failed || !self.value.is_finite() {
            return "FAILED";
        }
        match self.target.met(self.value) {
            Some(true) => "ok",
            Some(false) => "MISS",
            None => "-",
        }
    }
}

/// `v` with at least `sig` significant digits and at least three decimals
/// (`3.200`, `0.0273`, `0.000381`): the reduce ratios are far below 0.001.
pub fn figure(v: f64, sig: i32) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v:.3}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (sig - 1 - magnitude).max(3) as usize;
    format!("{v:.decimals$}")
}

/// The quick report: the rows and the conditions they were measured in.
pub struct Report {
    /// 1-minute load average before the first measurement.
    pub load_start: Option<f64>,
    /// ... and after the last (the report's own runs raise it by up to ~1).
    pub load_end: Option<f64>,
    pub rows: Vec<Row>,
}

/// `yes`, or `NO` with the sides that disagreed.
fn exactness(c: &Comparison, sides: &[usize]) -> (bool, String) {
    let bad: Vec<&str> = sides
        .iter()
        .filter(|&&i| !c.exact[i])
        .map(|&i| c.labels[i].as_str())
        .collect();
    if bad.is_empty() {
        (true, "bit-exact yes".into())
    } else {
        (
            false,
            format!("bit-exact NO ({} differ from jit 1t)", bad.join(", ")),
        )
    }
}

/// `base / over` in CPU time on `clock`: how many times faster `over` is.
fn ratio_row(
    key: &'static str,
    target: Target,
    c: &Comparison,
    base: usize,
    over: usize,
    clock: Clock,
) -> Row {
    let (b, o) = (c.times[base], c.times[over]);
    let (exact, what) = exactness(c, &[base, over]);
    let cpu = match clock {
        Clock::Thread => "thread CPU",
        Clock::Process => "process CPU",
    };
    Row {
        key,
        value: b.cpu(clock).as_secs_f64() / o.cpu(clock).as_secs_f64(),
        unit: "x",
        target,
        note: format!(
            "{} lanes, {cpu}: {} {}, {} {}; wall {} / {} = {}x; {what}",
            c.lanes,
            c.labels[base],
            short(b.cpu(clock)),
            c.labels[over],
            short(o.cpu(clock)),
            short(b.wall),
            short(o.wall),
            figure(b.wall.as_secs_f64() / o.wall.as_secs_f64(), 3),
        ),
        failed: !exact,
        skipped: false,
    }
}

/// Wall time of `one` over `two` (a speedup only shows in wall time; the CPU
/// times, summed over threads, show what the second thread cost), with the
/// native split's own speedup as the machine's reference.
fn speedup_row(
    key: &'static str,
    c: &Comparison,
    (one, two): (usize, usize),
    (native_one, native_two): (usize, usize),
) -> Row {
    let (a, b) = (c.times[one], c.times[two]);
    let (na, nb) = (c.times[native_one], c.times[native_two]);
    let (exact, what) = exactness(c, &[one, two]);
    Row {
        key,
        value: a.wall.as_secs_f64() / b.wall.as_secs_f64(),
        unit: "x",
        target: Target::AtLeast(1.8),
        note: format!(
            "{} lanes, wall: {} {}, {} {}; process CPU {} / {}; {}/{} on the same \
             machine: {}x wall; {what}",
            c.lanes,
            c.labels[one],
            short(a.wall),
            c.labels[two],
            short(b.wall),
            short(a.process_cpu),
            short(b.process_cpu),
            c.labels[native_one],
            c.labels[native_two],
            figure(na.wall.as_secs_f64() / nb.wall.as_secs_f64(), 3),
        ),
        failed: !exact,
        skipped: false,
    }
}

/// The sized kernels' `--json` keys, by the rounds asked for
/// ([`kernels::sized_text`]); the names carry the op counts they give.
const COMPILE_SIZES: [(usize, &str); 3] = [
    (16, "compile_ms_per_100_ops_30"),
    (256, "compile_ms_per_100_ops_258"),
    (1024, "compile_ms_per_100_ops_1026"),
];

/// Compile CPU time per 100 instructions of each sized kernel at `tier`: the
/// median of 15 fresh engines after a warm-up (one compile is a few hundred
/// microseconds, so a few samples were mostly noise). The engine is made and
/// dropped outside the timing.
fn compile_per_100(tier: Tier) -> Result<Vec<(usize, Sample)>, String> {
    COMPILE_SIZES
        .iter()
        .map(|&(ops, _)| {
            let k = parse(&kernels::sized_text(ops));
            let n = k.op_count();
            let mut samples = Vec::new();
            for i in 0..16 {
                let fresh = Jit::default();
                let (r, s) = timing::sample(|| fresh.compile_at(&k, 256, tier));
                r.map_err(|e| format!("{n}-op kernel does not compile: {e}"))?;
                if i > 0 {
                    samples.push(s);
                }
            }
            let m = timing::median(&samples);
            let per = |d: std::time::Duration| d * 100 / n as u32;
            Ok((
                n,
                Sample {
                    wall: per(m.wall),
                    thread_cpu: per(m.thread_cpu),
                    process_cpu: per(m.process_cpu),
                },
            ))
        })
        .collect()
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn compile_rows(rows: &mut Vec<Row>) {
    match compile_per_100(Tier::Baseline) {
        Ok(per) => {
            let sizes = per
                .iter()
                .map(|(n, s)| format!("{n} ops {:.3}", ms(s.thread_cpu)))
                .collect::<Vec<_>>()
                .join(", ");
            rows.push(Row {
                key: "compile_ms_per_100_ops",
                value: per.iter().map(|p| ms(p.1.thread_cpu)).fold(0.0, f64::max),
                unit: "ms",
                target: Target::AtMost(1.0),
                note: format!("baseline tier, largest of: {sizes} (thread CPU ms per 100 ops)"),
                failed: false,
                skipped: false,
            });
            for ((_, key), (n, s)) in COMPILE_SIZES.iter().zip(&per) {
                rows.push(Row {
                    key,
                    value: ms(s.thread_cpu),
                    unit: "ms",
                    target: Target::AtMost(1.0),
                    note: format!(
                        "baseline tier, {n}-op kernel, thread CPU (wall {:.3} ms)",
                        ms(s.wall)
                    ),
                    failed: false,
                    skipped: false,
                });
            }
        }
        Err(e) => rows.push(Row::failure(
            "compile_ms_per_100_ops",
            "ms",
            Target::AtMost(1.0),
            e,
        )),
    }
    rows.push(match compile_per_100(Tier::Optimized) {
        Ok(per) => Row {
            key: "compile_optimized_ms_per_100_ops",
            value: per.iter().map(|p| ms(p.1.thread_cpu)).fold(0.0, f64::max),
            unit: "ms",
            target: Target::None,
            note: format!(
                "optimized tier (what kernels running many lanes are recompiled at), largest of: {}",
                per.iter()
                    .map(|(n, s)| format!("{n} ops {:.3}", ms(s.thread_cpu)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            failed: false,
            skipped: false,
        },
        Err(e) => Row::failure("compile_optimized_ms_per_100_ops", "ms", Target::None, e),
    });
}

/// Median CPU µs of a cache hit: 21 samples of 100 hits each (one clock read
/// costs a fair part of a single hit).
fn cache_hit_row(jit: &Jit) -> Row {
    const HITS: u32 = 100;
    let k = parse(&kernels::sized_text(256));
    if let Err(e) = jit.compile(&k, 256) {
        return Row::failure("cache_hit_us", "us", Target::AtMost(5.0), e.to_string());
    }
    let samples: Vec<Sample> = (0..21)
        .map(|_| {
            timing::sample(|| {
                for _ in 0..HITS {
                    let _ = jit.compile(&k, 256);
                }
            })
            .1
        })
        .collect();
    let m = timing::median(&samples);
    Row {
        key: "cache_hit_us",
        value: m.thread_cpu.as_secs_f64() * 1e6 / f64::from(HITS),
        unit: "us",
        target: Target::AtMost(5.0),
        note: format!(
            "{}-op kernel, thread CPU (wall {:.2} us)",
            k.op_count(),
            m.wall.as_secs_f64() * 1e6 / f64::from(HITS)
        ),
        failed: false,
        skipped: false,
    }
}

/// `--json` order: the six original keys first, then the rest in this order;
/// rows not listed (the ISA rows) follow.
pub const KEY_ORDER: [&str; 22] = [
    "alu_vs_native",
    "saxpy_vs_native",
    "jit_vs_interpreter",
    "compile_ms_per_100_ops",
    "cache_hit_us",
    "two_thread_speedup",
    "alu_vs_simd_native",
    "saxpy_vs_simd_native",
    "divergent_vs_native",
    "divergent_vs_simd_native",
    "reduce_vs_native",
    "reduce_vs_simd_native",
    "saxpy_two_thread_speedup",
    "alu_two_thread_vs_native",
    "alu_two_thread_vs_simd_native",
    "saxpy_two_thread_vs_native",
    "saxpy_two_thread_vs_simd_native",
    "compile_ms_per_100_ops_30",
    "compile_ms_per_100_ops_258",
    "compile_ms_per_100_ops_1026",
    "compile_optimized_ms_per_100_ops",
    "interpreter_fallbacks",
];

/// Rows of `keys` for a comparison that could not be made.
fn failed_rows(rows: &mut Vec<Row>, keys: &[&'static str], why: &str) {
    for key in keys {
        rows.push(Row::failure(key, "x", Target::None, why.to_string()));
    }
}

/// The quick benchmark set of `wavejit bench` (well under a minute): the IR
/// kernels, then the ISA rows of [`isa_report::isa_rows`].
pub fn quick_report() -> Report {
    quick_report_with(&mut |_| {})
}

/// Steps of [`quick_report_with`], in the order they run.
pub const QUICK_STEPS: [&str; 9] = [
    "alu",
    "divergent",
    "reduce",
    "saxpy",
    "alu 4 Mi",
    "jit vs interpreter",
    "compile",
    "cache",
    "isa rows",
];

/// [`quick_report`], calling `progress(step)` as each of [`QUICK_STEPS`] starts.
pub fn quick_report_with(progress: &mut dyn FnMut(&str)) -> Report {
    let mut steps = QUICK_STEPS.iter();
    let mut step = move || {
        if let Some(s) = steps.next() {
            progress(s);
        }
    };
    let load_start = timing::load_average();
    let mut rows = Vec::new();
    let one = jit_with_threads(1);
    let two = jit_with_threads(2);
    let native = |twin, threads| Side::Native { twin, threads };
    let (scalar1, simd1) = (native(Twin::Scalar, 1), native(Twin::Simd, 1));
    let (scalar2, simd2) = (native(Twin::Scalar, 2), native(Twin::Simd, 2));

    // 1 thread each: the JIT against the plain and the SIMD loop.
    for (mut w, keys, targets) in [
        (
            Workload::alu(1 << 18),
            ["alu_vs_native", "alu_vs_simd_native"],
            [Target::AtLeast(0.5), Target::AtLeast(1.0)],
        ),
        (
            Workload::divergent(1 << 16),
            ["divergent_vs_native", "divergent_vs_simd_native"],
            [Target::AtLeast(0.5), Target::None],
        ),
        (
            Workload::reduce(1 << 18),
            ["reduce_vs_native", "reduce_vs_simd_native"],
            [Target::AtLeast(0.1), Target::None],
        ),
    ] {
        step();
        match compare(&mut w, &one, &[Side::Jit(&one), scalar1, simd1]) {
            Ok(c) => {
                rows.push(ratio_row(keys[0], targets[0], &c, 1, 0, Clock::Thread));
                rows.push(ratio_row(keys[1], targets[1], &c, 2, 0, Clock::Thread));
            }
            Err(e) => failed_rows(&mut rows, &keys, &e),
        }
    }

    // saxpy at 4 Mi lanes on 1 and 2 threads, all six sides alternated.
    step();
    let mut saxpy = Workload::saxpy(1 << 22); // 16 MiB per buffer
    let sides = [
        Side::Jit(&one),
        scalar1,
        simd1,
        Side::Jit(&two),
        scalar2,
        simd2,
    ];
    match compare(&mut saxpy, &one, &sides) {
        Ok(c) => {
            let t = Clock::Thread;
            let p = Clock::Process;
            rows.push(ratio_row(
                "saxpy_vs_native",
                Target::AtLeast(0.5),
                &c,
                1,
                0,
                t,
            ));
            rows.push(ratio_row("saxpy_vs_simd_native", Target::None, &c, 2, 0, t));
            rows.push(speedup_row("saxpy_two_thread_speedup", &c, (0, 3), (1, 4)));
            let (n, s) = (
                "saxpy_two_thread_vs_native",
                "saxpy_two_thread_vs_simd_native",
            );
            rows.push(ratio_row(n, Target::None, &c, 4, 3, p));
            rows.push(ratio_row(s, Target::None, &c, 5, 3, p));
        }
        Err(e) => failed_rows(
            &mut rows,
            &[
                "saxpy_vs_native",
                "saxpy_vs_simd_native",
                "saxpy_two_thread_speedup",
                "saxpy_two_thread_vs_native",
                "saxpy_two_thread_vs_simd_native",
            ],
            &e,
        ),
    }
    drop(saxpy);

    // The ALU kernel at 4 Mi lanes on 1 and 2 threads.
    step();
    let mut big = Workload::alu(1 << 22);
    let sides = [Side::Jit(&one), Side::Jit(&two), scalar2, simd1, simd2];
    match compare(&mut big, &one, &sides) {
        Ok(c) => {
            let p = Clock::Process;
            rows.push(speedup_row("two_thread_speedup", &c, (0, 1), (3, 4)));
            rows.push(ratio_row(
                "alu_two_thread_vs_native",
                Target::None,
                &c,
                2,
                1,
                p,
            ));
            let s = "alu_two_thread_vs_simd_native";
            rows.push(ratio_row(s, Target::None, &c, 4, 1, p));
        }
        Err(e) => failed_rows(
            &mut rows,
            &[
                "two_thread_speedup",
                "alu_two_thread_vs_native",
                "alu_two_thread_vs_simd_native",
            ],
            &e,
        ),
    }
    drop(big);

    step();
    let mut small = Workload::alu(1 << 12);
    let interp = crate::ir::interp::Interpreter::new();
    let key = "jit_vs_interpreter";
    match compare(&mut small, &one, &[Side::Engine(&interp), Side::Jit(&one)]) {
        Ok(c) => rows.push(ratio_row(
            key,
            Target::AtLeast(100.0),
            &c,
            0,
            1,
            Clock::Thread,
        )),
        Err(e) => failed_rows(&mut rows, &[key], &e),
    }

    step();
    compile_rows(&mut rows);
    step();
    rows.push(cache_hit_row(&one));
    // No silent fallback: every dispatch above must have run compiled code.
    let fallbacks = one.interpreter_fallbacks() + two.interpreter_fallbacks();
    rows.push(Row {
        key: "interpreter_fallbacks",
        value: fallbacks as f64,
        unit: "",
        target: Target::AtMost(0.0),
        note: format!(
            "dispatches of the IR kernels above that ran on the interpreter instead of the JIT (core {:?}; kernels the gang core refused: {})",
            one.config().core,
            one.gang_fallbacks() + two.gang_fallbacks()
        ),
        failed: false,
        skipped: false,
    });

    rows.sort_by_key(|r| {
        KEY_ORDER
            .iter()
            .position(|k| *k == r.key)
            .unwrap_or(usize::MAX)
    });
    step();
    rows.extend(isa_report::isa_rows());
    Report {
        load_start,
        load_end: timing::load_average(),
        rows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sized_kernels_have_the_op_counts_their_keys_name() {
        for (ops, key) in COMPILE_SIZES {
            let n = parse(&kernels::sized_text(ops)).op_count();
            assert_eq!(key, format!("compile_ms_per_100_ops_{n}"));
        }
    }

    #[test]
    fn every_side_of_every_workload_gives_the_jit_bits() {
        let one = jit_with_threads(1);
        let two = jit_with_threads(2);
        let interp = crate::ir::interp::Interpreter::new();
        for mut w in [
            Workload::alu(1024),
            Workload::saxpy(1024),
            Workload::divergent(1024),
            Workload::reduce(1024),
        ] {
            let mut sides = vec![Side::Jit(&two), Side::Engine(&interp)];
            for twin in [Twin::Scalar, Twin::Simd] {
                for threads in [1, 2] {
                    sides.push(Side::Native { twin, threads });
                }
            }
            let exact = w.agreement(&one, &sides).expect("runs");
            assert_eq!(exact, vec![true; sides.len()], "{}", w.name);
        }
    }

    /// An engine that leaves memory as it is: every real side disagrees with it.
    struct Idle;

    impl Engine for Idle {
        fn name(&self) -> &str {
            "idle"
        }

        fn run(
            &self,
            _: &Kernel,
            _: &Dispatch,
            _: &dyn crate::ir::GlobalMemory,
        ) -> Result<(), crate::ir::Fault> {
            Ok(())
        }
    }

    #[test]
    fn a_wrong_output_fails_its_rows() {
        let one = jit_with_threads(1);
        let mut w = Workload::alu(512);
        let sides = [
            Side::Jit(&one),
            Side::Native {
                twin: Twin::Simd,
                threads: 1,
            },
        ];
        let exact = w.agreement(&Idle, &sides).expect("runs");
        assert_eq!(exact, [false, false]);
        let ms = |v| Sample {
            wall: std::time::Duration::from_millis(v),
            thread_cpu: std::time::Duration::from_millis(v),
            process_cpu: std::time::Duration::from_millis(v),
        };
        let c = Comparison {
            lanes: 512,
            labels: sides.iter().map(Side::label).collect(),
            exact: vec![true, false],
            times: vec![ms(2), ms(4)],
        };
        let row = ratio_row("k", Target::AtLeast(0.5), &c, 1, 0, Clock::Thread);
        assert_eq!(row.value, 2.0);
        assert!(row.failed);
        assert_eq!(row.status(), "FAILED");
        assert!(row.note.contains("bit-exact NO (simd 1t"), "{}", row.note);
        let good = ratio_row("k", Target::AtLeast(0.5), &c, 0, 0, Clock::Thread);
        assert_eq!(good.status(), "ok");
    }

    #[test]
    fn the_saxpy_output_holds_the_values() {
        let one = jit_with_threads(1);
        let mut w = Workload::saxpy(256);
        assert_eq!(w.agreement(&one, &[]).expect("runs"), Vec::<bool>::new());
        let out = w.output().expect("reads");
        // x[2] = -29.75, y = 2.5 * -29.75 + 0.
        assert_eq!(out[8..12], (-74.375f32).to_le_bytes());
    }

    #[test]
    fn status_marks_failures_and_misses() {
        let row = |value, target, failed| Row {
            key: "k",
            value,
            unit: "x",
            target,
            note: String::new(),
            failed,
            skipped: false,
        };
        assert_eq!(row(0.6, Target::AtLeast(0.5), false).status(), "ok");
        assert_eq!(row(0.4, Target::AtLeast(0.5), false).status(), "MISS");
        assert_eq!(row(1.2, Target::AtMost(1.0), false).status(), "MISS");
        assert_eq!(row(3.0, Target::None, false).status(), "-");
        assert_eq!(row(9.0, Target::AtLeast(0.5), true).status(), "FAILED");
        assert_eq!(row(f64::NAN, Target::None, false).status(), "FAILED");
        // Not measured here (qemu absent): neither a failure nor a miss.
        let skipped = Row::skipped("k", "x", Target::AtLeast(20.0), "no qemu".into());
        assert_eq!(skipped.status(), "SKIPPED");
        assert!(!skipped.failed && skipped.value.is_nan());
        assert_eq!(Target::AtLeast(1.8).to_string(), ">= 1.8");
        assert_eq!(Target::AtMost(1.0).to_string(), "<= 1");
        assert_eq!(Target::AtLeast(2.0 / 3.0).to_string(), ">= 0.667");
        assert_eq!(Target::AtLeast(0.3).to_string(), ">= 0.3");
    }

    #[test]
    fn figures_keep_their_significant_digits() {
        assert_eq!(figure(3.2004, 3), "3.200");
        assert_eq!(figure(196.0, 3), "196.000");
        assert_eq!(figure(0.02734, 3), "0.0273");
        assert_eq!(figure(0.000_381_2, 3), "0.000381");
        assert_eq!(figure(0.000_381_2, 4), "0.0003812");
        assert_eq!(figure(0.0, 3), "0.000");
        assert_eq!(figure(f64::NAN, 3), "NaN");
    }

    #[test]
    fn key_order_starts_with_the_six_original_keys() {
        assert_eq!(
            KEY_ORDER[..6],
            [
                "alu_vs_native",
                "saxpy_vs_native",
                "jit_vs_interpreter",
                "compile_ms_per_100_ops",
                "cache_hit_us",
                "two_thread_speedup",
            ]
        );
        let mut sorted = KEY_ORDER.to_vec();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), KEY_ORDER.len());
    }
}
