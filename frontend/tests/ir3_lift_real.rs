//! Every real tinygrad a630 kernel lifts. The kernels come from a file named by
//! `WAVEJIT_IR3_KERNELS` (one `name<TAB>hex code` per line, written by
//! tests/tinygrad/lift_real_kernels.py); without it the test skips with a
//! printed reason.

use wavejit_frontend::ir3::lift::{LiftConfig, lift};

#[test]
fn real_tinygrad_kernels_lift() {
    // The list is produced by a Python script against tinygrad, outside cargo;
    // CI covers real kernels through the tinygrad suite instead.
    let Some(path) = std::env::var_os("WAVEJIT_IR3_KERNELS") else {
        eprintln!(
            "skipping: WAVEJIT_IR3_KERNELS not set (see tests/tinygrad/lift_real_kernels.py)"
        );
        return;
    };
    let text = std::fs::read_to_string(&path).expect("kernel list readable");
    let (mut ok, mut failures) = (0, Vec::new());
    for line in text.lines() {
        let Some((name, hex)) = line.split_once('\t') else {
            continue;
        };
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
            .collect();
        let words: Vec<u64> = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]))
            .collect();
        for merged in [false, true] {
            let cfg = LiftConfig {
                merged_regs: merged,
                ..LiftConfig::default()
            };
            match lift(&words, &cfg) {
                Ok(_) => ok += 1,
                Err(e) => failures.push(format!("{name} (merged={merged}): {e}")),
            }
        }
    }
    println!("{ok} lifts succeeded, {} failed", failures.len());
    assert!(ok > 0, "no kernels in {path:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
