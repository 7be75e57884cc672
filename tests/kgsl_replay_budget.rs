//! `wavejit kgsl replay` of a captured CP_EXEC_CS with a huge grid (issue
//! 14.5): the replay ends with the dispatch-budget fault instead of running for
//! hours. The capture is built here (an ir3 kernel that never faults, 2^32 - 1
//! workgroups of 64) and the budget is set through the environment of the
//! replaying process.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use wavejit::runtime::kgsl::capture::Capture;
use wavejit::runtime::kgsl::pm4::packet::op;
use wavejit::runtime::kgsl::pm4::{type4, type7};
use wavejit_frontend::ir3::assemble;

const SHADER: u64 = 0x1_0000_0000;
const IB: u64 = 0x1_0001_0000;
const SIGNAL: u64 = 0x1_0002_0000;

fn capture(groups: u32) -> Capture {
    let prog = assemble("mov.u32u32 r1.x, 1\nadd.u r1.y, r1.x, r0.x\nend\n").expect("assembles");
    let shader: Vec<u8> = prog.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut w = vec![type7(op::SET_MARKER, 1), 8];
    w.extend([type4(0xab00, 1), 5]);
    w.extend([type4(0xb990, 7), (63 << 2) | 3, 64, 0, 1, 0, 1, 0]);
    w.extend([
        type4(0xa9b0, 6),
        (1 << 1) | (9 << 7) | (1 << 31),
        0x41,
        0,
        0,
        SHADER as u32,
        (SHADER >> 32) as u32,
    ]);
    w.extend([type4(0xa9bc, 1), prog.len().div_ceil(16) as u32]);
    w.extend([type4(0xb997, 2), 0xc0 | (0xfc << 8) | (0xfc << 16), 0xfc]);
    w.extend([type7(op::EXEC_CS, 4), 0, groups, 1, 1]);
    w.extend([
        type7(op::EVENT_WRITE, 4),
        4,
        SIGNAL as u32,
        (SIGNAL >> 32) as u32,
        7,
    ]);
    let ib: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    Capture {
        ibs: vec![(IB, w.len() as u32)],
        registers: Vec::new(),
        regions: vec![(SHADER, 4096), (IB, 4096), (SIGNAL, 4096)],
        pages: vec![(SHADER, shader), (IB, ib)],
    }
}

/// Replays `cap` with the budget variables `env`; (exit status, stdout, stderr).
/// Fails the test if the replay has not ended after two minutes.
fn replay(name: &str, cap: &Capture, env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let dir = std::env::temp_dir().join(format!("wj-replay-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("huge.wjcap");
    cap.save(&file).expect("capture saves");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wavejit"));
    cmd.args(["kgsl", "replay"])
        .arg(&file)
        .args(["--dump", &format!("{SIGNAL:x}:1")]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawns");
    let start = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("{name}: the replay did not end within 120 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("collects");
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn replaying_a_huge_grid_ends_with_the_time_budget_fault() {
    let (code, stdout, stderr) = replay(
        "time",
        &capture(u32::MAX),
        &[
            ("WAVEJIT_DISPATCH_TIME_LIMIT_MS", "200"),
            ("WAVEJIT_DISPATCH_MAX_WORK_ITEMS", "0"),
        ],
    );
    // A kernel fault's exit status (README: Command line).
    assert_eq!(code, Some(3), "{stdout}");
    assert!(
        stderr.contains("stopped before workgroup (")
            && stderr.contains("dispatch ran past its time limit of 200 ms"),
        "{stderr}"
    );
}

#[test]
fn replaying_a_grid_over_the_work_item_budget_is_refused() {
    // The default budget (2^32 work-items) refuses 2^32 - 1 groups of 64.
    let (code, stdout, stderr) = replay(
        "items",
        &capture(u32::MAX),
        &[("WAVEJIT_DISPATCH_TIME_LIMIT_MS", "60000")],
    );
    // A kernel fault's exit status (README: Command line).
    assert_eq!(code, Some(3), "{stdout}");
    assert!(
        stderr.contains(
            "dispatch refused: 274877906880 work-items exceed the dispatch work-item budget \
             of 4294967296 (WAVEJIT_DISPATCH_MAX_WORK_ITEMS)"
        ),
        "{stderr}"
    );
}

#[test]
fn the_same_capture_with_a_small_grid_replays_to_its_signal() {
    let (code, stdout, stderr) = replay(
        "small",
        &capture(4),
        &[("WAVEJIT_DISPATCH_TIME_LIMIT_MS", "60000")],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains(&format!("{SIGNAL:#x}: [7]")), "{stdout}");
}
