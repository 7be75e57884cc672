//! Fuzz target of the AGX decoder: seeds first, then seeded random byte
//! strings of 0 to 16 bytes (half of them Mesa's vectors with bits flipped).
//! Decoding never panics and never claims more bytes than it was given; what
//! decodes prints, and the printed text assembles to bytes that print the
//! same text.

mod fuzz_support;

use fuzz_support::{Rng, corpus, hex_lines, long_cases};
use wavejit_frontend::agx::{assemble_line, decode, disasm};

const MESA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/agx_mesa_cases.tsv"
);

fn vectors() -> Vec<Vec<u8>> {
    let Ok(text) = std::fs::read_to_string(MESA) else {
        assert!(std::env::var_os("CI").is_none(), "CI: missing {MESA}");
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .map(|h| {
            (0..h.len() / 2)
                .filter_map(|i| u8::from_str_radix(&h[2 * i..2 * i + 2], 16).ok())
                .collect()
        })
        .collect()
}

fn check(bytes: &[u8]) -> Option<String> {
    let (instr, len) = decode(bytes, 0x40).ok()?;
    if len > bytes.len() || len == 0 || instr.pc != 0x40 {
        return Some(format!(
            "{bytes:02x?}: decoded length {len}, pc {:#x}",
            instr.pc
        ));
    }
    let text = instr.to_string();
    match assemble_line(&text) {
        Ok(asm) if disasm(&asm).map(|(t, _)| t).as_deref() == Ok(text.as_str()) => None,
        other => Some(format!("{:02x?} {text:?} -> {other:02x?}", &bytes[..len])),
    }
}

fn run(seed: u64, cases: usize) {
    let mut bad = Vec::new();
    for (name, text) in corpus("agx_decode") {
        for v in hex_lines(&text) {
            let bytes = v.to_le_bytes();
            bad.extend(check(&bytes).map(|e| format!("seed {name}: {e}")));
        }
    }
    let vectors = vectors();
    let mut rng = Rng::new(seed);
    let mut decoded = 0usize;
    for _ in 0..cases {
        let mut bytes: Vec<u8> = if rng.chance(50) && !vectors.is_empty() {
            let mut v = vectors[rng.below(vectors.len() as u64) as usize].clone();
            for _ in 0..=rng.below(3) {
                let bit = rng.below(8 * v.len() as u64);
                v[(bit / 8) as usize] ^= 1 << (bit % 8);
            }
            v
        } else {
            (0..16).map(|_| rng.next() as u8).collect()
        };
        bytes.truncate(rng.below(17) as usize);
        decoded += usize::from(decode(&bytes, 0x40).is_ok());
        bad.extend(check(&bytes));
    }
    assert!(
        bad.is_empty(),
        "{} byte strings fail:\n{}",
        bad.len(),
        bad[..bad.len().min(40)].join("\n")
    );
    assert!(decoded > cases / 20, "only {decoded} of {cases} decode");
    fuzz_support::assert_peak_rss_bounded();
}

#[test]
fn agx_bytes_decode_print_and_assemble_back() {
    run(0xa6_d001, 300_000);
}

/// `WAVEJIT_LONG_CASES` byte strings (default 10^7) from another seed.
#[test]
#[ignore]
fn agx_bytes_decode_print_and_assemble_back_long() {
    run(0xa6_d002, long_cases(10_000_000));
}
