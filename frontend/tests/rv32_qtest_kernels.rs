//! The kernel listings of the 17 device qtests (`shared/data/gpgpu_qtests.md`) are
//! written as `-M numeric,no-aliases` objdump text with the custom conversions named
//! `fcvt.<fmt>.s` / `fcvt.s.<fmt>`. Every listed word must decode and print exactly
//! that text (tabs shown as spaces, comments stripped).
//!
//! Skips with a message when the shared data is absent, unless `CI` is set.

use wavejit_frontend::rv32::{DisasmOptions, disasm_with};

const QTESTS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/gpgpu_qtests.md"
);

/// Parses lines like `  c: 00001E37  lui x28,0x1   # comment` into (pc, word, text).
fn parse_listing_line(line: &str) -> Option<(u32, u32, String)> {
    let (addr, rest) = line.trim_start().split_once(": ")?;
    let pc = u32::from_str_radix(addr, 16).ok()?;
    let (hex, text) = rest.split_once("  ")?;
    if hex.len() != 8 {
        return None;
    }
    let word = u32::from_str_radix(hex, 16).ok()?;
    let text = text
        .split('#')
        .next()?
        .split_whitespace()
        .collect::<Vec<_>>();
    Some((pc, word, text.join(" ")))
}

#[test]
fn qtest_kernel_listings_match() {
    let Ok(doc) = std::fs::read_to_string(QTESTS) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "{QTESTS} missing under CI"
        );
        eprintln!("SKIP: {QTESTS} not found");
        return;
    };
    let opts = DisasmOptions {
        aliases: false,
        numeric_regs: true,
    };
    let mut checked = 0;
    let mut custom = 0;
    for (pc, word, expected) in doc.lines().filter_map(parse_listing_line) {
        let ours = disasm_with(word, pc, opts)
            .unwrap_or_else(|e| panic!("qtest word {word:#010x} at {pc:#x}: {e}"));
        assert_eq!(
            ours.replace('\t', " "),
            expected,
            "word {word:#010x} at pc {pc:#x}"
        );
        checked += 1;
        if expected.contains("e4m3")
            || expected.contains("e5m2")
            || expected.contains("e2m1")
            || expected.contains("bf16")
        {
            custom += 1;
        }
    }
    eprintln!("{checked} qtest kernel words matched ({custom} custom conversions)");
    // 7 + 15 + 18 + 30 + 34 listed words; 4 + 8 + 10 custom-op lines in tests 15-17.
    assert_eq!(checked, 104);
    assert_eq!(custom, 22);
}
