//! Snapshots of what each lifter (with its transforms) makes of a program:
//! every `tests/lift/in/*.{rv32,agx,ir3}` is lifted and printed, and the IR
//! text must equal `tests/lift/out/<name>.<isa>.wj`, so a lifter or transform
//! change shows in review as a diff of the IR. `WAVEJIT_BLESS=1` rewrites
//! the expected outputs after a deliberate change.
//!
//! Inputs: `.rv32` is one hex instruction word per line (`#` comments), lifted
//! for 64 blocks of 256 threads; `.agx` and `.ir3` are assembly in the
//! communities' syntax, lifted with the default configuration.

use std::fs;
use std::path::{Path, PathBuf};

use wavejit_frontend::rv32::lift::{DispatchShape, LiftOptions};
use wavejit_frontend::{agx, ir3, rv32};
use wavejit_ir::text::print;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("lift")
        .join(name)
}

/// The printed IR of the lifted `path`, or why it could not be lifted.
fn lift(path: &Path) -> Result<String, String> {
    let src = fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let kernel = match path.extension().and_then(|x| x.to_str()) {
        Some("rv32") => {
            let words = src
                .lines()
                .map(|l| l.split('#').next().unwrap_or("").trim())
                .filter(|l| !l.is_empty())
                .map(|w| u32::from_str_radix(w, 16).map_err(|e| format!("word {w}: {e}")))
                .collect::<Result<Vec<u32>, String>>()?;
            let fetch = |pc: u32| words.get((pc / 4) as usize).copied();
            let opts = LiftOptions {
                shape: Some(DispatchShape {
                    num_workgroups: [64, 1, 1],
                    workgroup_size: [256, 1, 1],
                }),
                ..LiftOptions::default()
            };
            rv32::lift::lift(&fetch, 0, &opts)
                .map_err(|e| format!("lift: {e}"))?
                .kernel
        }
        Some("agx") => {
            let code = agx::assemble(&src).map_err(|e| format!("assemble: {e}"))?;
            agx::lift::lift(&code, &agx::lift::LiftConfig::default())
                .map_err(|e| format!("lift: {e}"))?
        }
        Some("ir3") => {
            let words = ir3::assemble(&src).map_err(|e| format!("assemble: {e}"))?;
            ir3::lift::lift(&words, &ir3::lift::LiftConfig::default())
                .map_err(|e| format!("lift: {e}"))?
        }
        other => return Err(format!("unknown input kind {other:?}")),
    };
    wavejit_ir::verify::verify(&kernel).map_err(|e| format!("verify: {e}"))?;
    Ok(print(&kernel))
}

#[test]
fn lifted_ir_matches_the_snapshots() {
    let bless = std::env::var_os("WAVEJIT_BLESS").is_some_and(|v| v == "1");
    let mut inputs: Vec<PathBuf> = fs::read_dir(dir("in"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    inputs.sort();
    assert!(
        inputs.len() >= 3,
        "expected an input per ISA, found {inputs:?}"
    );
    let mut failures = Vec::new();
    for path in &inputs {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let out = dir("out").join(format!("{name}.wj"));
        let got = match lift(path) {
            Ok(text) => text,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if bless {
            if let Err(e) = fs::write(&out, &got) {
                failures.push(format!("{name}: writing {}: {e}", out.display()));
            }
            continue;
        }
        match fs::read_to_string(&out) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{name}: lifted IR differs from {} (WAVEJIT_BLESS=1 to accept)\n--- want\n{want}\n--- got\n{got}",
                out.display()
            )),
            Err(e) => failures.push(format!("{name}: {}: {e}", out.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
