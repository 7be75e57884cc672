//! Shared by the C API tests: the built libraries, the headers and running C.

#![allow(dead_code)] // each test file uses a part

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `runtime/include`.
pub fn include_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../include"))
}

pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `name` as cargo built it for this test run: next to the test binary
/// (target/<profile>/deps) or in target/<profile>, so CARGO_TARGET_DIR and the
/// profile are those of the run.
pub fn built(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let deps = exe.parent().expect("deps dir");
    let profile = deps.parent().expect("profile dir");
    [profile.join(name), deps.join(name)]
        .into_iter()
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("{name} not built next to {}", exe.display()))
}

/// Whether `tool` runs; CI must have every tool these tests use.
pub fn have(tool: &str) -> bool {
    let ok = Command::new(tool).arg("--version").output().is_ok();
    assert!(
        ok || std::env::var_os("CI").is_none(),
        "{tool} missing in CI"
    );
    if !ok {
        eprintln!("skipped: no `{tool}`");
    }
    ok
}

/// A fresh scratch directory for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wj-capi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Runs `cmd`, panicking with its output unless it succeeds.
pub fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Functions declared by the headers in `runtime/include` (comments skipped).
pub fn declared_functions() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for entry in std::fs::read_dir(include_dir()).expect("include dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "h") {
            let text = strip_comments(&std::fs::read_to_string(&path).expect("header"));
            for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
                for (i, _) in line.match_indices("wj_") {
                    let tail = &line[i..];
                    let end = tail
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(tail.len());
                    let starts_word = i == 0
                        || !line[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                    if starts_word && tail[end..].trim_start().starts_with('(') {
                        names.insert(tail[..end].to_string());
                    }
                }
            }
        }
    }
    names
}

fn strip_comments(c: &str) -> String {
    let mut out = String::new();
    let mut rest = c;
    while let Some(i) = rest.find("/*") {
        out += &rest[..i];
        rest = rest[i + 2..]
            .find("*/")
            .map_or("", |j| &rest[i + 2 + j + 2..]);
    }
    out += rest;
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Global symbols `nm` lists as defined in `lib` (`-D` for the dynamic table).
pub fn defined_symbols(lib: &Path, dynamic: bool) -> BTreeSet<String> {
    let mut cmd = Command::new("nm");
    cmd.arg("--defined-only");
    cmd.arg(if dynamic { "-D" } else { "-g" });
    let out = run(cmd.arg(lib));
    stdout(&out)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, kind, name) = (f.next()?, f.next()?, f.next()?);
            // Skip absolute version-node symbols; keep code and data.
            (kind != "A").then(|| name.to_string())
        })
        .collect()
}

/// Compiles C `src` (as `name`.c in `dir`) with `args` after the source.
pub fn compile_c(dir: &Path, name: &str, src: &str, args: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).expect("writes source");
    let bin = dir.join(name);
    run(Command::new("cc")
        .args(["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&bin)
        .arg(&c)
        .args(args));
    bin
}
