//! `wavejit bench [--json]`: the quick benchmark set, one table or one JSON object.

use std::process::ExitCode;

use wavejit::bench::{Target, figure};

use super::{CliError, show_progress};

fn load(l: Option<f64>) -> String {
    l.map_or_else(|| "unknown".into(), |v| format!("{v:.2}"))
}

/// Prints the report; fails (exit code 1) when a row failed, so that a side
/// that disagrees with the JIT cannot pass unnoticed.
pub fn run(json: bool) -> Result<ExitCode, CliError> {
    // Progress only for a person watching: stderr of CI logs and pipes stays clean.
    let report = if show_progress() {
        let total = wavejit::bench::QUICK_STEPS.len();
        let mut n = 0;
        let report = wavejit::bench::quick_report_with(&mut |step| {
            n += 1;
            eprint!("\r\x1b[Kbench: {step} ({n}/{total})");
        });
        eprint!("\r\x1b[K");
        report
    } else {
        wavejit::bench::quick_report()
    };
    let rows = &report.rows;
    // The figures mean little on a busy machine: the load comes first.
    let start = format!("load average (1 min) at start: {}", load(report.load_start));
    if json {
        // stdout stays one JSON object.
        eprintln!("{start}");
    } else {
        outln!("{start}");
    }
    if json {
        let fields: Vec<String> = rows
            .iter()
            .map(|r| {
                let v = if r.failed { f64::NAN } else { r.value };
                format!("\"{}\": {}", r.key, json_number(v))
            })
            .collect();
        outln!("{{{}}}", fields.join(", "));
    } else {
        outln!(
            "SIMD twins: {}; 1-thread rows in thread CPU time, 2-thread rows in process CPU \
             time, speedups in wall time; median of {} alternated runs, each after {} ms of \
             untimed runs of the same side",
            wavejit::bench::simd::path(),
            wavejit::bench::timing::REPS,
            wavejit::bench::timing::WARM.as_millis()
        );
        outln!(
            "{:<34} {:>10}  {:<8} {:<6} note",
            "measure",
            "value",
            "target",
            "status"
        );
        for r in rows {
            outln!(
                "{:<34} {:>9}{:<2} {:<8} {:<6} {}",
                r.key,
                figure(r.value, 3),
                r.unit,
                r.target.to_string(),
                r.status(),
                r.note
            );
        }
        let misses = rows.iter().filter(|r| r.status() == "MISS").count();
        outln!(
            "{misses} of {} targets missed; load average (1 min) at end: {} (includes this run)",
            rows.iter().filter(|r| r.target != Target::None).count(),
            load(report.load_end)
        );
    }
    let failed: Vec<&str> = rows.iter().filter(|r| r.failed).map(|r| r.key).collect();
    if failed.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("wavejit bench: FAILED rows: {}", failed.join(", "));
        Ok(ExitCode::FAILURE)
    }
}

/// JSON has no NaN or infinity; report them as null.
fn json_number(v: f64) -> String {
    if v.is_finite() {
        figure(v, 4)
    } else {
        "null".into()
    }
}
