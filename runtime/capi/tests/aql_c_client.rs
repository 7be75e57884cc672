//! The AQL C ABI from C (`tests/c/aql_client.c`, linked against libwavejit.so
//! as cargo built it for this run): an agent made by `wj_aql_agent_create` runs RV32, ir3 and AGX
//! kernels (issue 14.12), dispatches over the work-item or time budget fail
//! with an error status, and `wj_aql_queue_destroy` returns during a dispatch
//! that would otherwise run for hours (issue 14.5). Needs a C compiler (`cc`).

mod support;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{built, have, include_dir};
use wavejit_runtime::aql::isa::samples;

fn c_array(name: &str, bytes: &[u8]) -> String {
    let mut s = format!("static const uint8_t {name}[{}] = {{", bytes.len());
    for (i, b) in bytes.iter().enumerate() {
        if i % 16 == 0 {
            s.push_str("\n   ");
        }
        let _ = write!(s, " {b:#04x},");
    }
    s.push_str("\n};\n");
    s
}

/// `aql_samples.h`: the sample kernels' code and constants.
fn samples_header() -> String {
    let mut h = String::from("#include <stdint.h>\n");
    let _ = writeln!(h, "#define RV32_ARGS {}u", samples::RV32_ARGS);
    let _ = writeln!(h, "#define IR3_WORKGROUP {}", samples::IR3_WORKGROUP);
    h += &c_array(
        "RV32_CODE",
        &samples::rv32_scale_add().expect("rv32 sample"),
    );
    h += &c_array("IR3_CODE", &samples::ir3_axpy().expect("ir3 sample"));
    h += &c_array("AGX_CODE", &samples::agx_add().expect("agx sample"));
    h
}

/// Compiles the client against `lib`. A compile or link error fails the test
/// (a stale header or a missing export must not pass as "no compiler").
fn compile(dir: &Path, lib: &Path) -> PathBuf {
    std::fs::write(dir.join("aql_samples.h"), samples_header()).expect("writes the header");
    let src = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c/aql_client.c");
    let lib_dir = lib.parent().expect("library directory");
    let out = dir.join("aql_client");
    let result = Command::new("cc")
        .args(["-O1", "-Wall", "-Werror", "-o"])
        .arg(&out)
        .arg(src)
        .arg(format!("-I{}", include_dir().display()))
        .arg(format!("-I{}", dir.display()))
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lwavejit")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .output()
        .expect("runs cc");
    assert!(
        result.status.success(),
        "the C client does not build against {}:\n{}",
        lib.display(),
        String::from_utf8_lossy(&result.stderr)
    );
    out
}

#[test]
fn c_client_runs_every_isa_and_its_dispatch_budgets_hold() {
    if !have("cc") {
        return;
    }
    let lib = built("libwavejit.so");
    let dir = std::env::temp_dir().join(format!("wj-aql-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bin = compile(&dir, &lib);
    let mut child = Command::new(&bin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    // A generous bound: the client's budgets are 200 ms; a hang (a destroy that
    // waits for the dispatch) must fail the test, not stall it.
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > Duration::from_secs(180) {
            let _ = child.kill();
            let out = child.wait_with_output().expect("collects");
            panic!(
                "C client hung; stdout so far:\n{}",
                String::from_utf8_lossy(&out.stdout)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("collects");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: String = (0..2)
        .map(|e| {
            format!(
                "engine {e} rv32 ok\nengine {e} ir3 ok\nengine {e} agx ok\n\
                 engine {e} work-item budget ok\nengine {e} time budget ok\n\
                 engine {e} destroy during dispatch ok\n"
            )
        })
        .collect();
    assert_eq!(text, want);
    let _ = std::fs::remove_dir_all(&dir);
}
