//! The committed decoder tables are exactly what their generators make of
//! `shared/spec` today: each generator is re-run into a temporary file and the
//! result compared byte for byte, so an edit by hand, a changed generator or a
//! changed XML that was not regenerated fails here (agx_tables_fresh.rs only
//! compares the AGX instruction names).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The spec folder, or `None` (with the reason printed) outside CI.
fn spec(sub: &str) -> Option<PathBuf> {
    let dir = root().join("../../shared/spec").join(sub);
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(std::env::var_os("CI").is_none(), "CI: missing {dir:?}");
    eprintln!("skipping: {dir:?} not found");
    None
}

/// Runs `cmd`, or `None` (with the reason printed) when the program is absent
/// outside CI; a generator that fails is a test failure.
fn run(cmd: &mut Command) -> Option<Vec<u8>> {
    match cmd.output() {
        Ok(out) => {
            assert!(
                out.status.success(),
                "{cmd:?} failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            Some(out.stdout)
        }
        Err(e) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI: cannot run {cmd:?}: {e}"
            );
            eprintln!("skipping: cannot run {cmd:?}: {e}");
            None
        }
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wavejit-tables-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir.join(name)
}

fn assert_same(generated: &Path, committed: &str) {
    let ours = std::fs::read(generated).expect("generated tables");
    let theirs = std::fs::read(root().join(committed)).expect("committed tables");
    assert!(
        ours == theirs,
        "{committed} is not what its generator makes of shared/spec: re-run it \
         (regenerated copy left at {generated:?})"
    );
    let _ = std::fs::remove_file(generated);
}

#[test]
fn ir3_tables_are_regenerated() {
    let Some(spec) = spec("ir3") else { return };
    let out = scratch("ir3_tables.rs");
    let gen_script = root().join("gen/ir3/gen_tables.py");
    let Some(_) = run(Command::new("python3").arg(gen_script).arg(spec).arg(&out)) else {
        return;
    };
    assert_same(&out, "src/ir3/tables.rs");
}

#[test]
fn agx_tables_are_regenerated() {
    let Some(spec) = spec("agx") else { return };
    let out = scratch("agx_tables.rs");
    let gen_script = root().join("gen/agx/gen_tables.py");
    let Some(text) = run(Command::new("python3")
        .arg(gen_script)
        .arg(spec.join("AGX2.xml"))
        .arg(root().join("gen/agx/overlay.xml")))
    else {
        return;
    };
    std::fs::write(&out, text).expect("write generated tables");
    // The generator's usage line: its output is committed after rustfmt.
    let Some(_) = run(Command::new("rustfmt")
        .arg("--edition")
        .arg("2024")
        .arg(&out))
    else {
        return;
    };
    assert_same(&out, "src/agx/tables.rs");
}
