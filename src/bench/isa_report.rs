//! The ISA rows of `wavejit bench`: RV32 through the MMIO device and AGX, each
//! against the 1-thread native loop over preallocated buffers in the same run
//! (alternated, thread CPU time, the device's JIT on one thread), RV32 also
//! against the IR kernel of the same computation on a 1-thread JIT in those
//! runs, and the AQL empty-dispatch round trip. A benchmark that cannot run is
//! a failed row (JSON null) that says why.

use std::time::{Duration, Instant};

use wavejit_runtime::aql::Processing;
use wavejit_runtime::aql::bench::DispatchRoundTrip;

use super::agx::AgxWorkload;
use super::rv32::Rv32Workload;
use super::side::{BenchError, Computation, SideBySide};
use super::timing::{self, Clock, REPS, Sample, short};
use super::{Row, Target, Workload, figure, jit_with_threads};

/// Elements of the quick ALU and saxpy runs (the IR `alu` / `saxpy` sizes).
pub const ALU_ELEMENTS: usize = 1 << 18;
pub const SAXPY_ELEMENTS: usize = 1 << 22;
/// Timed AQL round trips (after as many warm-up ones).
const ROUND_TRIPS: usize = 200;

/// Median wall time of `reps` runs of `f` (no warm-up: the caller has run it).
/// Only for the AQL round trip, whose cost is mostly waiting for a thread.
fn median_of(reps: usize, mut f: impl FnMut()) -> Duration {
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

/// Issue 17's bound on a lifted kernel's cost: at most 1.5 times the IR
/// kernel's, i.e. at least 2/3 of its speed.
const VS_IR_TARGET: Target = Target::AtLeast(2.0 / 3.0);

/// A lifted kernel's run of `computation` over `n` elements on its device,
/// its native loop and the IR kernel of the same computation on a 1-thread
/// JIT, alternated in the same runs: `[*_vs_native, *_vs_ir_*]`. Thread CPU
/// time: each device runs its dispatch on the calling thread with a 1-thread
/// JIT (the RV32 device's DISPATCH on the thread writing it).
fn lifted_rows(
    made: Result<Box<dyn SideBySide>, BenchError>,
    computation: Computation,
    n: usize,
    keys: [&'static str; 2],
    native_target: Target,
    what: &str,
) -> [Row; 2] {
    let measured = (|| -> Result<(Vec<Sample>, bool, bool, &'static str), String> {
        let mut dev = made.map_err(|e| e.to_string())?;
        let native_exact = dev.agrees().map_err(|e| e.to_string())?;
        let engine = dev.engine();
        let jit = jit_with_threads(1);
        let mut ir = match computation {
            Computation::Alu => Workload::alu(n),
            Computation::Saxpy => Workload::saxpy(n),
        };
        // The IR kernel from zeroed y, as the device's run in `agrees` was.
        ir.reset()?;
        ir.run(&jit)?;
        let ir_exact = ir.output()? == dev.output().map_err(|e| e.to_string())?;
        ir.settle(&jit)?;
        let times = timing::alternated(REPS, 3, timing::WARM, |i| match i {
            0 => dev.run().map_err(|e| e.to_string()),
            1 => {
                dev.run_native();
                Ok(())
            }
            _ => ir.run(&jit),
        })?;
        Ok((times, native_exact, ir_exact, engine))
    })();
    let (times, native_exact, ir_exact, engine) = match measured {
        Ok(m) => m,
        Err(e) => {
            return [
                Row::failure(keys[0], "x", native_target, e.clone()),
                Row::failure(keys[1], "x", VS_IR_TARGET, e),
            ];
        }
    };
    let (dev, native, ir) = (times[0], times[1], times[2]);
    let yes = |b: bool| if b { "yes" } else { "NO" };
    let cpu = |s: Sample| s.cpu(Clock::Thread).as_secs_f64();
    [
        Row {
            key: keys[0],
            value: cpu(native) / cpu(dev),
            unit: "x",
            target: native_target,
            note: format!(
                "{what} ({engine}, 1 JIT thread), thread CPU: wavejit {}, native 1t {}; wall: \
                 wavejit {}, native {}; bit-exact {}",
                short(dev.thread_cpu),
                short(native.thread_cpu),
                short(dev.wall),
                short(native.wall),
                yes(native_exact)
            ),
            failed: !native_exact,
            skipped: false,
        },
        Row {
            key: keys[1],
            value: cpu(ir) / cpu(dev),
            unit: "x",
            target: VS_IR_TARGET,
            note: format!(
                "the same runs, thread CPU: IR kernel on a 1-thread JIT {}, lifted kernel {} \
                 ({}x the IR kernel's time); wall: IR {}, lifted {}; its y = IR's y {}",
                short(ir.thread_cpu),
                short(dev.thread_cpu),
                figure(cpu(dev) / cpu(ir), 3),
                short(ir.wall),
                short(dev.wall),
                yes(ir_exact)
            ),
            failed: !ir_exact,
            skipped: false,
        },
    ]
}

fn boxed<W: SideBySide + 'static>(
    w: Result<W, BenchError>,
) -> Result<Box<dyn SideBySide>, BenchError> {
    w.map(|w| Box::new(w) as Box<dyn SideBySide>)
}

/// Median µs of an empty-kernel dispatch, submitted and waited for.
pub fn aql_round_trip(processing: Processing, reps: usize) -> Result<f64, String> {
    let mut rt = DispatchRoundTrip::new(processing).map_err(|e| e.to_string())?;
    for _ in 0..reps {
        rt.run_once().map_err(|e| e.to_string())?;
    }
    let mut failed = None;
    let t = median_of(reps, || {
        if let Err(e) = rt.run_once() {
            failed.get_or_insert(e.to_string());
        }
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(t.as_secs_f64() * 1e6),
    }
}

fn aql_row() -> Row {
    let thread = aql_round_trip(Processing::Thread, ROUND_TRIPS);
    let manual = aql_round_trip(Processing::Manual, ROUND_TRIPS);
    let (value, note) = match (thread, manual) {
        (Ok(t), Ok(m)) => (
            t,
            format!(
                "empty kernel, median of {ROUND_TRIPS}: processor thread + doorbell {t:.1} us, \
                 inline processing {m:.1} us"
            ),
        ),
        (Err(e), _) | (_, Err(e)) => {
            return Row::failure("aql_dispatch_round_trip_us", "us", Target::None, e);
        }
    };
    Row {
        key: "aql_dispatch_round_trip_us",
        value,
        unit: "us",
        target: Target::None,
        note: format!("{note} (wall time)"),
        failed: false,
        skipped: false,
    }
}

/// Timed qemu runs of each image (with and without the lanes).
const QEMU_REPS: usize = 3;

/// The RV32 device's saxpy over [`SAXPY_ELEMENTS`] lanes against
/// qemu-riscv32 running the same kernel one lane at a time (`bench::qemu`).
fn qemu_row() -> Row {
    const KEY: &str = "rv32_saxpy_vs_qemu";
    let target = Target::AtLeast(20.0);
    let Some(qemu) = super::qemu::qemu() else {
        return Row::skipped(
            KEY,
            "x",
            target,
            format!(
                "no qemu-riscv32-static or qemu-riscv32 on the PATH (or {})",
                super::qemu::QEMU_ENV
            ),
        );
    };
    let measured = (|| -> Result<(Sample, super::qemu::QemuSaxpy), String> {
        let mut w =
            Rv32Workload::new(Computation::Saxpy, SAXPY_ELEMENTS).map_err(|e| e.to_string())?;
        if !w.agrees().map_err(|e| e.to_string())? {
            return Err("the device's saxpy disagrees with the native loop".into());
        }
        let times =
            timing::alternated(REPS, 1, timing::WARM, |_| w.run()).map_err(|e| e.to_string())?;
        let q = super::qemu::saxpy(&qemu, SAXPY_ELEMENTS as u32, QEMU_REPS)?;
        Ok((times[0], q))
    })();
    match measured {
        Ok((device, q)) => {
            let cpu = device.cpu(Clock::Thread);
            Row {
                key: KEY,
                value: q.kernel().as_secs_f64() / cpu.as_secs_f64(),
                unit: "x",
                target,
                note: format!(
                    "{SAXPY_ELEMENTS} lanes: qemu {} per run minus {} without the lanes = {} \
                     (wall, 1 thread, median of {QEMU_REPS}); device {} thread CPU (1 JIT \
                     thread; wall {}); qemu's y bit-exact {}",
                    short(q.with_lanes),
                    short(q.without),
                    short(q.kernel()),
                    short(cpu),
                    short(device.wall),
                    if q.exact { "yes" } else { "NO" }
                ),
                failed: !q.exact,
                skipped: false,
            }
        }
        Err(e) => Row::failure(KEY, "x", target, e),
    }
}

/// Alternated pairs of tinygrad processes (CPU, QCOM).
const TINYGRAD_ROUNDS: usize = 2;

/// tinygrad's `a * 2 + b` over 1 Mi floats on wavejit against its CPU device.
fn tinygrad_row() -> Row {
    const KEY: &str = "tinygrad_add_vs_cpu";
    let target = Target::AtLeast(0.2);
    let (python, shim) = match super::tinygrad::setup() {
        Ok(found) => found,
        Err(why) => return Row::skipped(KEY, "x", target, why),
    };
    match super::tinygrad::add(&python, &shim, TINYGRAD_ROUNDS) {
        Ok((cpu, qcom, exact)) => Row {
            key: KEY,
            value: cpu / qcom,
            unit: "x",
            target,
            note: format!(
                "c = a * 2 + b over 2^20 floats, warm, wall per realize + synchronize \
                 (median of 15, median of {TINYGRAD_ROUNDS} processes each): DEV=CPU \
                 {cpu:.2} ms, DEV=QCOM:IR3 through the shim {qcom:.2} ms; both bit-exact {}",
                if exact { "yes" } else { "NO" }
            ),
            failed: !exact,
            skipped: false,
        },
        Err(e) => Row::failure(KEY, "x", target, e),
    }
}

/// The ISA rows, in `--json` key order.
pub fn isa_rows() -> Vec<Row> {
    let alu = format!("{ALU_ELEMENTS} lanes");
    let saxpy = format!("{SAXPY_ELEMENTS} floats");
    let rv32 = |c| {
        boxed(Rv32Workload::new(
            c,
            if c == Computation::Alu {
                ALU_ELEMENTS
            } else {
                SAXPY_ELEMENTS
            },
        ))
    };
    let [alu_native, alu_ir] = lifted_rows(
        rv32(Computation::Alu),
        Computation::Alu,
        ALU_ELEMENTS,
        ["rv32_alu_vs_native", "rv32_alu_vs_ir_alu"],
        Target::None,
        &format!("{alu} via MMIO DISPATCH"),
    );
    let [saxpy_native, saxpy_ir] = lifted_rows(
        rv32(Computation::Saxpy),
        Computation::Saxpy,
        SAXPY_ELEMENTS,
        ["rv32_saxpy_vs_native", "rv32_saxpy_vs_ir_saxpy"],
        Target::AtLeast(0.3),
        &format!("{saxpy} via MMIO DISPATCH"),
    );
    let [agx_alu_native, agx_alu_ir] = lifted_rows(
        boxed(AgxWorkload::new(Computation::Alu, ALU_ELEMENTS)),
        Computation::Alu,
        ALU_ELEMENTS,
        ["agx_alu_vs_native", "agx_alu_vs_ir_alu"],
        Target::None,
        &alu,
    );
    let [agx_saxpy_native, agx_saxpy_ir] = lifted_rows(
        boxed(AgxWorkload::new(Computation::Saxpy, SAXPY_ELEMENTS)),
        Computation::Saxpy,
        SAXPY_ELEMENTS,
        ["agx_saxpy_vs_native", "agx_saxpy_vs_ir_saxpy"],
        Target::AtLeast(0.3),
        &saxpy,
    );
    vec![
        alu_native,
        saxpy_native,
        alu_ir,
        saxpy_ir,
        agx_alu_native,
        agx_saxpy_native,
        agx_alu_ir,
        agx_saxpy_ir,
        qemu_row(),
        tinygrad_row(),
        aql_row(),
    ]
}
