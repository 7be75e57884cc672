//! Golden tests of the text form: every `tests/in/*.wj` is parsed, verified and
//! printed, and the text must equal `tests/out/<same name>.wj`. Set
//! `WAVEJIT_BLESS=1` to rewrite the expected outputs after a deliberate change.

use std::fs;
use std::path::{Path, PathBuf};

use wavejit_ir::text::{canonicalize, parse, print};
use wavejit_ir::verify::verify;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

fn inputs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir("in"))
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "wj"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Parses, verifies and prints one input; returns the printed text.
fn process(path: &Path) -> Result<String, String> {
    let src = fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let kernel = parse(&src).map_err(|e| format!("parse: {e}"))?;
    verify(&kernel).map_err(|e| format!("verify: {e}"))?;
    let printed = print(&kernel);
    // The canonical text is a fixed point and denotes the same kernel.
    let again = parse(&printed).map_err(|e| format!("reparse of the output: {e}"))?;
    if print(&again) != printed {
        return Err("print(parse(print(k))) differs from print(k)".into());
    }
    if again != canonicalize(&kernel) {
        return Err("parse(print(k)) is not structurally equal to canonicalize(k)".into());
    }
    Ok(printed)
}

#[test]
fn golden_outputs_match() {
    let bless = std::env::var_os("WAVEJIT_BLESS").is_some_and(|v| v == "1");
    let files = inputs();
    assert!(
        files.len() >= 12,
        "expected at least 12 golden inputs, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap_or_default();
        let out_path = dir("out").join(name);
        let printed = match process(path) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if bless {
            if let Err(e) = fs::write(&out_path, &printed) {
                failures.push(format!("{}: write: {e}", out_path.display()));
            }
            continue;
        }
        match fs::read_to_string(&out_path) {
            Ok(expected) if expected == printed => {}
            Ok(expected) => failures.push(format!(
                "{}: output differs from {}\n{}",
                path.display(),
                out_path.display(),
                first_difference(&expected, &printed)
            )),
            Err(e) => failures.push(format!(
                "{}: {e} (run with WAVEJIT_BLESS=1 to create it)",
                out_path.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every expected output is itself canonical: parsing and printing it is the identity.
#[test]
fn golden_outputs_are_fixed_points() {
    let mut checked = 0;
    for path in inputs() {
        let Some(name) = path.file_name() else {
            continue;
        };
        let Ok(expected) = fs::read_to_string(dir("out").join(name)) else {
            continue;
        };
        let k = parse(&expected).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(print(&k), expected, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} golden outputs found");
}

fn first_difference(expected: &str, got: &str) -> String {
    for (i, (e, g)) in expected.lines().zip(got.lines()).enumerate() {
        if e != g {
            return format!("line {}:\n  expected: {e}\n  got:      {g}", i + 1);
        }
    }
    format!(
        "lengths differ: expected {} lines, got {}",
        expected.lines().count(),
        got.lines().count()
    )
}
