//! The qemu baseline of `wavejit bench` (`bench::qemu`): the harness runs the
//! device's saxpy kernel once per lane under qemu-riscv32 and writes y, which
//! must equal the native loop's bits; a run without lanes leaves y as filled.
//! Skipped with a printed reason when qemu is absent, except in CI.

use wavejit::bench::qemu;

fn qemu_or_skip() -> Option<std::path::PathBuf> {
    let q = qemu::qemu();
    if q.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs qemu-user-static: qemu-riscv32 must be present"
        );
        eprintln!("skipping: no qemu-riscv32-static or qemu-riscv32 on the PATH");
    }
    q
}

#[test]
fn the_qemu_harness_computes_the_native_loops_bits() {
    let Some(q) = qemu_or_skip() else { return };
    let run = qemu::saxpy(&q, 4096, 1).expect("qemu runs the harness");
    assert!(run.exact, "qemu's y differs from the native loop's");
    // The inputs are normal floats of varied mantissas, so the check is not
    // vacuous: y changes.
    let filled: Vec<u8> = (0..4096u32)
        .flat_map(|i| qemu::inputs(i).1.to_le_bytes())
        .collect();
    assert_ne!(qemu::expected(4096), filled);
}

#[test]
fn the_image_without_lanes_leaves_y_as_filled() {
    let Some(q) = qemu_or_skip() else { return };
    let dir = std::env::temp_dir().join(format!("wavejit-qemu-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("empty.elf");
    qemu::write_executable(&path, &qemu::elf(512, 0).expect("image")).expect("write");
    let out = std::process::Command::new(&q)
        .arg(&path)
        .output()
        .expect("qemu runs");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let filled: Vec<u8> = (0..512u32)
        .flat_map(|i| qemu::inputs(i).1.to_le_bytes())
        .collect();
    assert_eq!(out.stdout, filled);
}

#[test]
fn sizes_the_buffers_cannot_hold_are_refused() {
    assert!(qemu::elf(100, 100).is_err(), "not a multiple of the group");
    assert!(qemu::elf(1 << 23, 0).is_err(), "past the buffers' 16 MiB");
    assert!(qemu::elf(256, 512).is_err(), "more lanes than elements");
}
