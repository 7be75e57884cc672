//! The `wavejit` binary's exit statuses and messages (README: Command line):
//! 0 also for a stdout closed early, 1 for input that cannot be read or
//! decoded, 2 for usage errors, 3 for a kernel fault in every `run`.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn wavejit(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args(args)
        .output()
        .expect("wavejit runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp(name: &str, bytes: &[u8]) -> String {
    let p: PathBuf =
        std::env::temp_dir().join(format!("wavejit-cli-exit-{}-{name}", std::process::id()));
    std::fs::write(&p, bytes).expect("temp file");
    p.display().to_string()
}

fn rv32_words(name: &str, words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    temp(name, &bytes)
}

/// `buf0[i] *= 2` for the global lane index i.
const DOUBLE: &str = "kernel @double shared 0 private 0 {
block0:
  v0 = local_index
  v1 = workgroup_id.x
  v2 = workgroup_size.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = const.i32 0
  v6 = load.uniform.i64 v5
  v7 = zext.i32.i64 v4
  v8 = const.i64 2
  v9 = shl.i64 v7, v8
  v10 = iadd.i64 v6, v9
  v11 = load.global.i32 v10
  v12 = iadd.i32 v11, v11
  store.global.i32 v10, v12
  exit
}
";

#[test]
fn a_closed_stdout_ends_the_listing_quietly() {
    // 64 Ki pseudo-random words: megabytes of listing, far over a pipe's buffer.
    let mut x = 0x1234_5678u32;
    let words: Vec<u32> = (0..1 << 16)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        })
        .collect();
    let big = rv32_words("big.bin", &words);
    let mut child = Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args(["rv32", "disasm", &big])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    // Read a little, like `head`, then close the pipe.
    let mut first = [0u8; 256];
    child
        .stdout
        .take()
        .expect("stdout")
        .read_exact(&mut first)
        .expect("some listing");
    let out = child.wait_with_output().expect("ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.is_empty(), "{err}");
    assert!(String::from_utf8_lossy(&first).starts_with("       0:\t"));
}

#[test]
fn kernel_faults_exit_3_in_every_run() {
    // ir run: eight lanes over a four-element buffer.
    let k = temp("double.wj", DOUBLE.as_bytes());
    let (code, out, err) = wavejit(&["ir", "run", &k, "--block", "8", "--buf", "u32:1*4"]);
    assert_eq!(code, Some(3), "{err}");
    assert!(err.contains("fault: kernel `double` faulted"), "{err}");
    assert!(out.starts_with("buf0 = [2, 2, 2, 2]"), "{out}");

    // agx run: the store goes through du4, which no --buf bound (address 0).
    let agx = temp(
        "store.s",
        b"mov r2, thread_in_grid_x\nstore r2, du4, r2, i32, x, a\nstop\n",
    );
    let (code, _, err) = wavejit(&["agx", "run", &agx]);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains("fault:") && err.contains("write of 4 bytes"),
        "{err}"
    );

    // rv32 run: an all-zero word is an illegal instruction.
    let rv = rv32_words("illegal.bin", &[0x0010_0293, 0, 0x0010_0073]);
    let (code, out, _) = wavejit(&["rv32", "run", &rv]);
    assert_eq!(code, Some(3), "{out}");
    assert!(
        out.contains("status: fault: illegal instruction") && out.contains("at pc 0x00000004"),
        "{out}"
    );
    // (kgsl replay: tests/kgsl_replay_budget.rs.)
}

#[test]
fn unreadable_or_undecodable_input_exits_1_naming_it() {
    let missing = std::env::temp_dir().join("wavejit-cli-exit-no-such-file.bin");
    let missing = missing.display().to_string();
    for cmd in [
        &["ir3", "disasm", &missing][..],
        &["agx", "disasm", &missing],
        &["rv32", "disasm", &missing],
        &["ir", "run", &missing],
        &["kgsl", "replay", &missing],
    ] {
        let (code, _, err) = wavejit(cmd);
        assert_eq!(code, Some(1), "{cmd:?}: {err}");
        assert!(
            err.starts_with(&format!("wavejit: {missing}: ")) && err.contains("No such file"),
            "{cmd:?}: {err}"
        );
    }

    let bad = temp("bad.agx", &[0xff; 8]);
    let (code, _, err) = wavejit(&["agx", "run", &bad]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(
        err.trim_end(),
        format!("wavejit: {bad}: agx: unknown encoding at 0x0: bytes ffffffffffffffff")
    );
    assert_eq!(
        err.matches("agx").count(),
        2,
        "the path and the decoder: {err}"
    );
}

#[test]
fn usage_errors_exit_2_naming_the_value_and_limit() {
    let rv = rv32_words("ebreak.bin", &[0x0010_0073]);
    let (code, _, err) = wavejit(&["rv32", "run", &rv, "--block", "100000"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(
            "--block `100000`: 100,000 threads per block exceed the device's limit of 8,192"
        ),
        "{err}"
    );
    // At the limit it runs.
    let (code, _, err) = wavejit(&["rv32", "run", &rv, "--block", "8192"]);
    assert_eq!(code, Some(0), "{err}");
    for bad in ["0", "1025"] {
        let (code, _, err) = wavejit(&["rv32", "run", &rv, "--jit-threads", bad]);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains(&format!(
                "--jit-threads: jit_threads {bad}: the JIT needs 1 to 1024 threads"
            )),
            "{err}"
        );
    }
    let (code, _, err) = wavejit(&["rv32", "run", &rv, "--jit-threads", "1"]);
    assert_eq!(code, Some(0), "{err}");

    let k = temp("double2.wj", DOUBLE.as_bytes());
    let (code, _, err) = wavejit(&["ir", "run", &k, "--grid", "x"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("`x`"), "{err}");
    let (code, _, err) = wavejit(&["ir", "run", &k, "--buf", "q9:1"]);
    assert_eq!(code, Some(2), "{err}");
    // clap's own.
    let (code, _, _) = wavejit(&["ir", "run", &k, "--no-such-flag"]);
    assert_eq!(code, Some(2));
    let (code, _, err) = wavejit(&["ir3", "disasm", "--hex", "zz"]);
    assert_eq!(code, Some(2), "{err}");
}

#[test]
fn kgsl_dump_outside_the_capture_names_the_address() {
    let cap = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/captures/tinygrad_a2p1.wjcap"
    );
    let (code, out, err) = wavejit(&["kgsl", "replay", cap, "--dump", "0x10:4"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(out.contains(": Done"), "the replay ran first: {out}");
    assert!(
        err.contains("--dump `0x10:4`: cannot read 16 bytes at 0x10"),
        "{err}"
    );
}

#[test]
fn help_documents_the_exit_statuses() {
    let (code, out, _) = wavejit(&["--help"]);
    assert_eq!(code, Some(0));
    for line in [
        "Exit status:",
        "1  input that cannot be read or decoded",
        "2  usage error",
        "3  kernel fault",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
}

#[test]
fn no_progress_line_when_stderr_is_not_a_terminal() {
    let nop = temp("nop.wj", b"kernel @nop {\nblock0:\n  exit\n}\n");
    // 2^20 lanes: a large run, which on a terminal shows a progress line.
    let (code, _, err) = wavejit(&["ir", "run", &nop, "--grid", "1024", "--block", "1024"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(!err.contains("running"), "{err}");
    assert!(err.starts_with("ran on jit in "), "{err}");
}
