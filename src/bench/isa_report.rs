//! The ISA rows of `wavejit bench`: RV32 through the MMIO device and AGX, each
//! against native Rust in the same run, and the AQL empty-dispatch round trip.
//! A benchmark that cannot run gives a NaN value (JSON null) and says why.

use std::time::{Duration, Instant};

use wavejit_runtime::aql::Processing;
use wavejit_runtime::aql::bench::DispatchRoundTrip;

use super::Row;
use super::agx::AgxWorkload;
use super::rv32::Rv32Workload;
use super::side::{BenchError, Computation, SideBySide};

/// Elements of the quick ALU and saxpy runs (the IR `alu` / `saxpy` sizes).
pub const ALU_ELEMENTS: usize = 1 << 18;
pub const SAXPY_ELEMENTS: usize = 1 << 22;
/// Timed repetitions of each side; a device run slower than [`SLOW_RUN`] gets
/// [`SLOW_REPS`] so that the whole `wavejit bench` stays well under a minute on
/// a loaded machine.
const REPS: usize = 5;
const SLOW_REPS: usize = 3;
const SLOW_RUN: Duration = Duration::from_millis(250);
/// Timed AQL round trips (after as many warm-up ones).
const ROUND_TRIPS: usize = 200;

/// Median of `reps` timings of `f` (no warm-up: the caller has run it).
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

/// Times `w` and its native side after a bit-exactness check (which is also
/// both sides' warm-up): medians of the device and the native runs.
fn compare(w: &mut dyn SideBySide) -> Result<(Duration, Duration, bool), BenchError> {
    let exact = w.agrees()?;
    let start = Instant::now();
    w.run()?;
    let reps = if start.elapsed() > SLOW_RUN {
        SLOW_REPS
    } else {
        REPS
    };
    let mut failed = None;
    let td = median_of(reps, || {
        if let Err(e) = w.run() {
            failed.get_or_insert(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let tn = median_of(REPS, || w.run_native());
    Ok((td, tn, exact))
}

fn ratio_row(
    key: &'static str,
    target: &'static str,
    what: &str,
    made: Result<Box<dyn SideBySide>, BenchError>,
) -> Row {
    let measured = made.and_then(|mut w| compare(w.as_mut()));
    let (value, note) = match measured {
        Ok((td, tn, exact)) => (
            tn.as_secs_f64() / td.as_secs_f64(),
            format!("{what}: wavejit {td:.2?}, native {tn:.2?}, bit-exact {exact}"),
        ),
        Err(e) => (f64::NAN, e.to_string()),
    };
    Row {
        key,
        value,
        unit: "x",
        target,
        note,
    }
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
        (Err(e), _) | (_, Err(e)) => (f64::NAN, e),
    };
    Row {
        key: "aql_dispatch_round_trip_us",
        value,
        unit: "us",
        target: "-",
        note,
    }
}

/// The five ISA rows, in `--json` key order.
pub fn isa_rows() -> Vec<Row> {
    let alu = format!("{ALU_ELEMENTS} lanes");
    let saxpy = format!("{SAXPY_ELEMENTS} floats");
    vec![
        ratio_row(
            "rv32_alu_vs_native",
            "-",
            &format!("{alu} via MMIO DISPATCH"),
            boxed(Rv32Workload::new(Computation::Alu, ALU_ELEMENTS)),
        ),
        ratio_row(
            "rv32_saxpy_vs_native",
            "-",
            &format!("{saxpy} via MMIO DISPATCH"),
            boxed(Rv32Workload::new(Computation::Saxpy, SAXPY_ELEMENTS)),
        ),
        ratio_row(
            "agx_alu_vs_native",
            "-",
            &alu,
            boxed(AgxWorkload::new(Computation::Alu, ALU_ELEMENTS)),
        ),
        ratio_row(
            "agx_saxpy_vs_native",
            "-",
            &saxpy,
            boxed(AgxWorkload::new(Computation::Saxpy, SAXPY_ELEMENTS)),
        ),
        aql_row(),
    ]
}
