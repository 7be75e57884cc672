//! File tests for the verifier (Cranelift's `; error:` lines in `.clif` files):
//! every `tests/verify/*.wj` is a kernel in the text form with the errors the
//! verifier must report written beside the lines they point to. The runner
//! parses the file, runs `verify_all`, maps each error's location to a line
//! (`text::LineMap`: the kernel header, a block label, an instruction or a
//! terminator) and requires the errors to equal the expectations, line and
//! message (the rule's text, without the kernel and location prefix), as
//! multisets. `WAVEJIT_BLESS=1` rewrites the expectations from what the
//! verifier reports.
//!
//! An expectation is a comment `; error: MESSAGE`, either at the end of the
//! line it is about or alone on a line, where it is about the nearest code
//! line above it. Other comments are left alone. Files must be in the
//! printer's canonical form (comments and blank lines aside), so the value and
//! block names in messages are the names written in the file.
//!
//! Malformed kernels the parser refuses (dangling handles, ill-typed
//! instructions, duplicate definitions) stay as Rust builders in
//! verify_negative.rs.

use std::fs;
use std::path::{Path, PathBuf};

use wavejit_ir::text::{parse_with_lines, print};
use wavejit_ir::verify::verify_all;

const MARK: &str = "error:";

/// One line of a test file split at its comment (a `;` outside a string).
struct Line<'a> {
    code: &'a str,
    comment: Option<&'a str>,
}

fn split_line(line: &str) -> Line<'_> {
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ';' if !in_string => {
                return Line {
                    code: &line[..i],
                    comment: Some(&line[i + 1..]),
                };
            }
            _ => {}
        }
    }
    Line {
        code: line,
        comment: None,
    }
}

/// The message of an `error:` comment.
fn expectation(comment: Option<&str>) -> Option<&str> {
    comment?.trim().strip_prefix(MARK).map(str::trim)
}

/// The expectations of `text` as (1-based line, message), in file order.
fn expectations(name: &str, text: &str) -> Result<Vec<(usize, String)>, Vec<String>> {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut last_code = None;
    for (i, raw) in text.lines().enumerate() {
        let line = split_line(raw);
        if !line.code.trim().is_empty() {
            last_code = Some(i + 1);
        }
        if let Some(message) = expectation(line.comment) {
            match last_code {
                Some(at) => out.push((at, message.to_string())),
                None => errors.push(format!(
                    "{name}:{}: `; {MARK}` before any code line; it has no line to be about",
                    i + 1
                )),
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// What the verifier reports for `text`, as (line, message) in its order.
fn reported(name: &str, text: &str) -> Result<Vec<(usize, String)>, Vec<String>> {
    let (kernel, lines) = parse_with_lines(text)
        .map_err(|e| vec![format!("{name}:{}:{}: parse: {}", e.line, e.col, e.message)])?;
    // Messages name values and blocks canonically; in a canonical file those
    // are the names written, so a message reads against the text.
    let code: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, split_line(l).code.trim()))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    let printed = print(&kernel);
    let canonical: Vec<&str> = printed
        .lines()
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    for (k, want) in canonical.iter().enumerate() {
        let end = text.lines().count() + 1;
        let (at, got) = code.get(k).copied().unwrap_or((end, "(end of file)"));
        if got != *want {
            return Err(vec![format!(
                "{name}:{at}: not in canonical form: `{got}`, the printer writes `{want}`"
            )]);
        }
    }
    if let Some((at, extra)) = code.get(canonical.len()) {
        return Err(vec![format!(
            "{name}:{at}: not in canonical form: `{extra}` after the kernel"
        )]);
    }
    Ok(verify_all(&kernel)
        .into_iter()
        .map(|e| {
            // Line 0 cannot match an expectation, so an unmapped location fails.
            let line = lines.line_of(&e.location).unwrap_or(0);
            (line, e.rule.to_string())
        })
        .collect())
}

/// Checks one test file; the failures, each as `name:line: ...`.
fn check(name: &str, text: &str) -> Result<(), Vec<String>> {
    let want = expectations(name, text)?;
    let got = reported(name, text)?;
    let (mut missing, mut extra) = (want.clone(), Vec::new());
    for g in got {
        match missing.iter().position(|w| *w == g) {
            Some(i) => {
                missing.remove(i);
            }
            None => extra.push(g),
        }
    }
    let mut lines: Vec<usize> = missing.iter().chain(&extra).map(|(l, _)| *l).collect();
    lines.sort_unstable();
    lines.dedup();
    let mut failures = Vec::new();
    for line in lines {
        let on = |v: &[(usize, String)]| -> Vec<String> {
            v.iter()
                .filter(|(l, _)| *l == line)
                .map(|(_, m)| m.clone())
                .collect()
        };
        let (w, g) = (on(&missing), on(&extra));
        let mut f = format!("{name}:{line}:");
        for m in &w {
            f.push_str(&format!("\n    expected: {m}"));
        }
        for m in &g {
            f.push_str(&format!("\n    got:      {m}"));
        }
        if g.is_empty() {
            f.push_str("\n    got:      (no error on this line)");
        }
        if w.is_empty() {
            f.push_str("\n    expected: (no error on this line)");
        }
        failures.push(f);
    }
    if failures.is_empty() {
        Ok(())
    } else {
        Err(failures)
    }
}

/// `text` with its expectations replaced by what the verifier reports: each
/// error on its own comment line under the line it is about, indented like it.
fn bless(name: &str, text: &str) -> Result<String, Vec<String>> {
    let got = reported(name, text)?;
    if let Some((_, m)) = got.iter().find(|(l, _)| *l == 0) {
        return Err(vec![format!("{name}: no line for the error `{m}`")]);
    }
    let mut out = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line = split_line(raw);
        if expectation(line.comment).is_some() {
            if line.code.trim().is_empty() {
                continue;
            }
            out.push_str(line.code.trim_end());
        } else {
            out.push_str(raw);
        }
        out.push('\n');
        let indent = &raw[..raw.len() - raw.trim_start().len()];
        for (_, m) in got.iter().filter(|(l, _)| *l == i + 1) {
            out.push_str(&format!("{indent}; {MARK} {m}\n"));
        }
    }
    Ok(out)
}

fn files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("verify");
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "wj"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn verify_files_match_their_expectations() {
    let bless_mode = std::env::var_os("WAVEJIT_BLESS").is_some_and(|v| v == "1");
    let files = files();
    assert!(
        files.len() >= 25,
        "expected at least 25 verifier file tests, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let name = path
            .strip_prefix(env!("CARGO_MANIFEST_DIR"))
            .unwrap_or(path)
            .display()
            .to_string();
        let text = match fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) => {
                failures.push(format!("{name}: read: {e}"));
                continue;
            }
        };
        let text = if bless_mode {
            match bless(&name, &text) {
                Ok(new) => {
                    if new != text
                        && let Err(e) = fs::write(path, &new)
                    {
                        failures.push(format!("{name}: write: {e}"));
                    }
                    new
                }
                Err(e) => {
                    failures.extend(e);
                    continue;
                }
            }
        } else {
            text
        };
        match expectations(&name, &text) {
            // A kernel that verifies is not a negative test any more.
            Ok(want) if want.is_empty() => failures.push(format!(
                "{name}: expects no error; every file here must expect at least one"
            )),
            Ok(_) => {}
            Err(e) => failures.extend(e),
        }
        if let Err(e) = check(&name, &text) {
            failures.extend(e);
        }
    }
    assert!(
        failures.is_empty(),
        "{} problem(s) in {} files (WAVEJIT_BLESS=1 rewrites the expectations):\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

// The runner itself, on inline files: it must fail on a wrong, missing or
// extra expectation and on one at the wrong line.

const GOOD: &str = "\
kernel @k shared 0 private 0 {
block0:
  v0 = const.i32 1
  br v0, block1, block1 ; error: branch condition (v0) must be i1, got i32

block1:
; error: block has no terminator
}
";

fn failures(text: &str) -> String {
    match check("t.wj", text) {
        Ok(()) => panic!("the runner accepted\n{text}"),
        Err(f) => f.join("\n"),
    }
}

#[test]
fn runner_accepts_matching_expectations_in_both_positions() {
    assert_eq!(check("t.wj", GOOD), Ok(()));
    assert_eq!(
        expectations("t.wj", GOOD),
        Ok(vec![
            (4, "branch condition (v0) must be i1, got i32".to_string()),
            (6, "block has no terminator".to_string()),
        ])
    );
}

#[test]
fn runner_rejects_a_wrong_message() {
    let text = GOOD.replace("got i32", "got i64");
    assert_eq!(
        failures(&text),
        "t.wj:4:\n    expected: branch condition (v0) must be i1, got i64\
         \n    got:      branch condition (v0) must be i1, got i32"
    );
}

#[test]
fn runner_rejects_a_missing_expectation() {
    let text = GOOD.replace("; error: block has no terminator\n", "");
    assert_eq!(
        failures(&text),
        "t.wj:6:\n    got:      block has no terminator\
         \n    expected: (no error on this line)"
    );
}

#[test]
fn runner_rejects_an_extra_expectation() {
    let text = GOOD.replace(
        "  v0 = const.i32 1\n",
        "  v0 = const.i32 1 ; error: constant bits 0x1 do not fit i32 (mask 0xffffffff)\n",
    );
    assert_eq!(
        failures(&text),
        "t.wj:3:\n    expected: constant bits 0x1 do not fit i32 (mask 0xffffffff)\
         \n    got:      (no error on this line)"
    );
}

#[test]
fn runner_rejects_an_expectation_on_the_wrong_line() {
    // Moved from the terminator up to the instruction before it.
    let text = GOOD
        .replace(" ; error: branch condition (v0) must be i1, got i32", "")
        .replace(
            "  v0 = const.i32 1\n",
            "  v0 = const.i32 1\n  ; error: branch condition (v0) must be i1, got i32\n",
        );
    assert_eq!(
        failures(&text),
        "t.wj:3:\n    expected: branch condition (v0) must be i1, got i32\
         \n    got:      (no error on this line)\
         \nt.wj:5:\n    got:      branch condition (v0) must be i1, got i32\
         \n    expected: (no error on this line)"
    );
}

#[test]
fn runner_counts_repeated_errors() {
    // Both calls of the table pass an i32 to an i64 parameter: the same error
    // twice on one line, so expecting it once is not enough.
    let once = "\
kernel @k shared 0 private 0 {
block0:
  v0 = const.i32 0
  table v0, [block1(v0)], default block1(v0)
  ; error: argument 0 to block1 (v0) must be i64, got i32

block1(v1: i64):
  exit
}
";
    assert_eq!(
        failures(once),
        "t.wj:4:\n    got:      argument 0 to block1 (v0) must be i64, got i32\
         \n    expected: (no error on this line)"
    );
    let twice = once.replace(
        "\n\nblock1",
        "\n  ; error: argument 0 to block1 (v0) must be i64, got i32\n\nblock1",
    );
    assert_eq!(check("t.wj", &twice), Ok(()));
}

#[test]
fn runner_reports_parse_errors_and_non_canonical_text() {
    assert_eq!(
        failures("kernel @k {\nblock0:\n  v0 = iadd.i32 v9, v9\n  exit\n}\n"),
        "t.wj:3:17: parse: undefined value `v9`"
    );
    // `%x` would be `v0` in messages.
    assert_eq!(
        failures(
            "kernel @k shared 0 private 0 {\nblock0:\n  %x = const.i32 1\n  br %x, block0, block0\n}\n"
        ),
        "t.wj:3: not in canonical form: `%x = const.i32 1`, the printer writes `v0 = const.i32 1`"
    );
    assert!(
        failures("; error: kernel has no blocks\nkernel @k shared 0 private 0 {\n}\n")
            .starts_with("t.wj:1: `; error:` before any code line")
    );
}

#[test]
fn bless_rewrites_the_expectations() {
    let stale = "\
kernel @k shared 0 private 0 {
; a comment that stays
block0:
  v0 = const.i32 1
  br v0, block1, block1 ; error: something else

block1:
  ; error: block has no terminator
  ; error: a stale second one
}
";
    let blessed = bless("t.wj", stale).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(
        blessed,
        "\
kernel @k shared 0 private 0 {
; a comment that stays
block0:
  v0 = const.i32 1
  br v0, block1, block1
  ; error: branch condition (v0) must be i1, got i32

block1:
; error: block has no terminator
}
"
    );
    assert_eq!(check("t.wj", &blessed), Ok(()));
}

/// The file tests compare the rule only; the location prefix of the message
/// names the instruction by handle and a Debug rendering, checked here.
#[test]
fn errors_on_parsed_kernels_render_their_location() {
    let text = "\
kernel @k shared 0 private 0 {
block0:
  v0 = const.f16 1.0
  v1 = fsqrt.f16 v0 nan=0x7fc00000
  v2 = const.i32 0
  v3 = atomic.add.shared.i32 v2, v2
  exit
}
";
    let (kernel, lines) = parse_with_lines(text).unwrap_or_else(|e| panic!("{e}"));
    let errors = verify_all(&kernel);
    let shown: Vec<(Option<usize>, String)> = errors
        .iter()
        .map(|e| (lines.line_of(&e.location), e.to_string()))
        .collect();
    assert_eq!(
        shown,
        [
            (
                Some(4),
                "kernel `k`, block0, inst1 (v1 = FUnary { op: Sqrt, mode: FloatMode { \
                 denorm_in: Preserve, denorm_out: Preserve, nan: Canonical(2143289344), \
                 round: NearestEven, sat: false, flags: false } } v0): \
                 canonical NaN 0x7fc00000 does not fit f16"
                    .to_string()
            ),
            (
                Some(6),
                "kernel `k`, block0, inst3 (v3 = Atomic { space: Shared, op: Add, ty: I32 } \
                 v2, v2): kernel declares no shared memory"
                    .to_string()
            ),
        ]
    );
}
