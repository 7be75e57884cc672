//! `wavejit ir3 disasm`: an undecodable word prints mesa's raw line and the listing
//! goes on (exit 0, a warning on stderr); `--strict` makes it exit 1; `--labels`
//! is mesa's branch-label mode.

use std::process::{Command, Output};

fn disasm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wavejit"))
        .args(["ir3", "disasm"])
        .args(args)
        .output()
        .expect("run wavejit")
}

#[test]
fn undecodable_word_prints_raw_and_continues() {
    let out = disasm(&["--hex", "0xffffffffffffffff", "0x0300000000000000"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "raw 0xFFFFFFFFFFFFFFFF\nend\n"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning") && err.contains("0xffffffffffffffff at offset 0x0"),
        "{err}"
    );
}

#[test]
fn strict_exits_non_zero_after_printing_the_listing() {
    let out = disasm(&["--strict", "--hex", "0x0", "0xffffffffffffffff"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "nop\nraw 0xFFFFFFFFFFFFFFFF\n"
    );
    let ok = disasm(&["--strict", "--hex", "0x0300000000000000"]);
    assert_eq!(ok.status.code(), Some(0));
}

#[test]
fn labels_mode() {
    let out = disasm(&[
        "--labels",
        "--hex",
        "0x0100000000000001",
        "0x0300000000000000",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "jump #l1\nl1:\nend\n");
}
