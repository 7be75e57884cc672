//! `wavejit bench --json`: one object whose keys are the six original measures
//! first (in order, now against honest native baselines), the new IR measures
//! (SIMD twins, divergent, reduce, 2-thread rows, compile time per kernel size),
//! the optimized-tier compile time, then the ISA rows (the qemu baseline among
//! them); every value is a number.
//! It runs the whole quick set, so debug builds skip it (run with --release).

use std::process::Command;

const KEYS: [&str; 33] = [
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
    "rv32_alu_vs_native",
    "rv32_saxpy_vs_native",
    "rv32_alu_vs_ir_alu",
    "rv32_saxpy_vs_ir_saxpy",
    "agx_alu_vs_native",
    "agx_saxpy_vs_native",
    "agx_alu_vs_ir_alu",
    "agx_saxpy_vs_ir_saxpy",
    "rv32_saxpy_vs_qemu",
    "tinygrad_add_vs_cpu",
    "aql_dispatch_round_trip_us",
];

/// Splits the flat `{"k": v, ...}` object the command prints.
fn fields(json: &str) -> Vec<(String, String)> {
    let body = json
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .unwrap_or_else(|| panic!("not one object: {json}"));
    body.split(", ")
        .map(|kv| {
            let (k, v) = kv
                .split_once(": ")
                .unwrap_or_else(|| panic!("field `{kv}`"));
            (k.trim_matches('"').to_string(), v.to_string())
        })
        .collect()
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "runs the whole benchmark set; use --release"
)]
fn bench_json_has_every_key_with_a_number() {
    let out = Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args(["bench", "--json"])
        .output()
        .expect("wavejit runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let got = fields(&text);
    let keys: Vec<&str> = got.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, KEYS);
    for (k, v) in &got {
        // The qemu baseline is skipped (null) without qemu; CI installs it.
        if k == "rv32_saxpy_vs_qemu" && v == "null" && std::env::var_os("CI").is_none() {
            eprintln!("skipping {k}: qemu-riscv32 absent");
            continue;
        }
        // tinygrad's venv comes after the Rust tests in CI: .ci/run checks
        // this row once it exists (WAVEJIT_TINYGRAD_PYTHON).
        if k == "tinygrad_add_vs_cpu" && v == "null" {
            eprintln!("skipping {k}: no Python with tinygrad here");
            continue;
        }
        let n: f64 = v
            .parse()
            .unwrap_or_else(|_| panic!("{k} is `{v}`, not a number"));
        if k == "interpreter_fallbacks" {
            // Every benchmark dispatch runs compiled code.
            assert_eq!(n, 0.0, "{k}");
        } else {
            assert!(n > 0.0, "{k} = {n}");
        }
    }
}

#[test]
fn fields_splits_the_printed_object() {
    let f = fields("{\"a\": 1.5000, \"b\": null}\n");
    assert_eq!(
        f,
        [("a".into(), "1.5000".into()), ("b".into(), "null".into())]
    );
}
