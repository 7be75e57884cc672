//! `wavejit bench [--json]`: the quick benchmark set, one table or one JSON object.

use std::process::ExitCode;

use super::CliError;

pub fn run(json: bool) -> Result<ExitCode, CliError> {
    let rows = wavejit::bench::quick_report();
    if json {
        let fields: Vec<String> = rows
            .iter()
            .map(|r| format!("\"{}\": {}", r.key, json_number(r.value)))
            .collect();
        println!("{{{}}}", fields.join(", "));
    } else {
        println!("{:<32} {:>10}  {:<8} note", "measure", "value", "target");
        for r in &rows {
            println!(
                "{:<32} {:>9.3}{:<2} {:<8} {}",
                r.key, r.value, r.unit, r.target, r.note
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// JSON has no NaN or infinity; report them as null.
fn json_number(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "null".into()
    }
}
