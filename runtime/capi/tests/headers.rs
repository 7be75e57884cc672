//! Every header of `runtime/include` is self-contained: it compiles as the only
//! include of a translation unit, in C and in C++, warnings as errors; and all
//! of them compile together.

mod support;

use std::process::Command;

use support::{have, include_dir, scratch};

fn headers() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(include_dir())
        .expect("include dir")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.ends_with(".h").then_some(name)
        })
        .collect();
    names.sort();
    names
}

/// Compiles a file that includes `includes` (syntax only); the error text if not.
fn check(compiler: &str, std: &str, ext: &str, includes: &[String]) -> Result<(), String> {
    let dir = scratch(&format!("headers-{compiler}-{}", includes.len()));
    let src = dir.join(format!("tu.{ext}"));
    let text: String = includes
        .iter()
        .map(|h| format!("#include \"{h}\"\n"))
        .chain(["int wj_header_check;\n".to_string()])
        .collect();
    std::fs::write(&src, &text).map_err(|e| e.to_string())?;
    let out = Command::new(compiler)
        .arg(format!("-std={std}"))
        .args([
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fsyntax-only",
            "-I",
        ])
        .arg(include_dir())
        .arg(&src)
        .output()
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{text}: {}", String::from_utf8_lossy(&out.stderr)))
    }
}

#[test]
fn the_headers_are_the_three_apis() {
    assert_eq!(
        headers(),
        ["wavejit_aql.h", "wavejit_kgsl.h", "wavejit_mmio.h"]
    );
}

#[test]
fn each_header_compiles_alone_in_c_and_cxx() {
    let mut failures = Vec::new();
    for (compiler, std, ext) in [("cc", "c11", "c"), ("c++", "c++17", "cpp")] {
        if !have(compiler) {
            continue;
        }
        for h in headers() {
            if let Err(e) = check(compiler, std, ext, std::slice::from_ref(&h)) {
                failures.push(format!("{compiler} {h}: {e}"));
            }
        }
        if let Err(e) = check(compiler, std, ext, &headers()) {
            failures.push(format!("{compiler} all: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_check_fails_on_a_header_that_is_not_self_contained() {
    if !have("cc") {
        return;
    }
    // A header using uint32_t without <stdint.h> must be caught.
    let dir = scratch("negative-header");
    std::fs::write(dir.join("bad.h"), "uint32_t wj_bad(void);\n").expect("writes");
    let src = dir.join("tu.c");
    std::fs::write(&src, "#include \"bad.h\"\n").expect("writes");
    let ok = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-fsyntax-only", "-I"])
        .arg(&dir)
        .arg(&src)
        .status()
        .expect("runs cc")
        .success();
    assert!(!ok);
}
