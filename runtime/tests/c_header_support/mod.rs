//! Shared by the C header checks: compiling generated C against
//! `runtime/include` and listing a header's object-like macros.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

pub fn include_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/include"))
}

pub fn header(name: &str) -> String {
    std::fs::read_to_string(include_dir().join(name)).expect("header")
}

/// Whether the system `cc` runs; CI must have one.
pub fn cc_available() -> bool {
    let ok = Command::new("cc").arg("--version").output().is_ok();
    assert!(ok || std::env::var_os("CI").is_none(), "no system cc in CI");
    ok
}

/// Compiles `source` (syntax and types only) with warnings as errors.
pub fn compile(source: &str, name: &str) -> Result<(), String> {
    let dir = std::env::temp_dir().join(format!("wj-c-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(name);
    std::fs::write(&file, source).map_err(|e| e.to_string())?;
    let out = Command::new("cc")
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
            "-I",
        ])
        .arg(include_dir())
        .arg(&file)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}\n--- source ---\n{source}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Names of the object-like `#define`s starting with `prefix` (function-like
/// macros and the include guard excluded).
pub fn defines(header: &str, prefix: &str) -> BTreeSet<String> {
    header
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#define "))
        .filter_map(|rest| {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let function_like = rest[name.len()..].starts_with('(');
            let has_value = !rest[name.len()..].trim().is_empty();
            (name.starts_with(prefix) && !function_like && has_value).then_some(name)
        })
        .collect()
}

/// `_Static_assert(NAME == value)` for each pair, as one C source.
pub fn value_asserts<'a>(pairs: impl IntoIterator<Item = (&'a str, u64)>) -> String {
    pairs
        .into_iter()
        .map(|(name, v)| format!("_Static_assert({name} == {v}ull, \"{name} is {v:#x}\");\n"))
        .collect()
}
