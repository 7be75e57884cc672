//! Fuzz target of the ir3 decoder: seeds first, then seeded random words (in
//! quarters: inside a random encoding's fixed bits, mesa's vectors with one
//! to three bits flipped, the seeds with bits flipped, anything). For every
//! word:
//! decode and disasm agree on whether it is an instruction, never panic, and
//! the printed text assembles back to a word that prints the same text.

mod fuzz_support;

use fuzz_support::{Rng, corpus, hex_lines, long_cases};
use wavejit_frontend::ir3;

/// What a word violates, or `None` when it is fine (also when it is no
/// instruction: then decode must refuse it too).
fn check(w: u64) -> Option<String> {
    let Ok(text) = ir3::disasm(w) else {
        return ir3::decode(w)
            .is_ok()
            .then(|| format!("{w:#018x}: decode accepts what disasm refuses"));
    };
    if let Err(e) = ir3::decode(w) {
        return Some(format!("{w:#018x} {text:?}: decode refuses: {e}"));
    }
    match ir3::assemble_line(&text) {
        Ok(w2) if ir3::disasm(w2).as_deref() == Ok(text.as_str()) => None,
        other => Some(format!("{w:#018x} {text:?} -> {other:x?}")),
    }
}

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/ir3_disasm_vectors.tsv"
);

/// The words of mesa's disassembly vectors (none outside CI when absent).
fn vectors() -> Vec<u64> {
    let Ok(text) = std::fs::read_to_string(VECTORS) else {
        assert!(std::env::var_os("CI").is_none(), "CI: missing {VECTORS}");
        eprintln!("{VECTORS} not found: no mutated vectors");
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(1))
        .filter_map(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok())
        .collect()
}

fn run(seed: u64, cases: usize) {
    let mut bad = Vec::new();
    let mut seeds = Vec::new();
    for (name, bytes) in corpus("ir3_decode") {
        for w in hex_lines(&bytes) {
            bad.extend(check(w).map(|e| format!("seed {name}: {e}")));
            seeds.push(w);
        }
    }
    let encs = ir3::encodings();
    let vectors = vectors();
    let mut rng = Rng::new(seed);
    let mut printed = 0usize;
    for _ in 0..cases {
        let w = match rng.below(4) {
            // Near the seeds: the text of a seed's class (relative operands
            // with zero offsets) was what the assembler refused.
            3 => {
                let mut w = rng.pick(&seeds);
                for _ in 0..=rng.below(3) {
                    w ^= 1 << rng.below(64);
                }
                w
            }
            0 => {
                let e = &encs[rng.below(encs.len() as u64) as usize];
                let w = e.match_bits | (rng.next() & !e.mask);
                // A word inside an encoding's fixed bits decodes as that one.
                if let Ok(i) = ir3::decode(w)
                    && i.encoding != e.name
                {
                    bad.push(format!(
                        "{w:#018x}: decodes as {}, not {}",
                        i.encoding, e.name
                    ));
                }
                w
            }
            1 if !vectors.is_empty() => {
                let mut w = rng.pick(&vectors);
                for _ in 0..=rng.below(3) {
                    w ^= 1 << rng.below(64);
                }
                w
            }
            _ => rng.next(),
        };
        printed += usize::from(ir3::disasm(w).is_ok());
        bad.extend(check(w));
    }
    assert!(printed > cases / 4, "only {printed} of {cases} words print");
    assert!(
        bad.is_empty(),
        "{} words fail:\n{}",
        bad.len(),
        bad[..bad.len().min(40)].join("\n")
    );
    fuzz_support::assert_peak_rss_bounded();
}

#[test]
fn ir3_words_decode_print_and_assemble_back() {
    run(0x1f3a_0001, 8_000);
}

/// `WAVEJIT_LONG_CASES` words (default 10^7) from another seed.
#[test]
#[ignore]
fn ir3_words_decode_print_and_assemble_back_long() {
    run(0x1f3a_0002, long_cases(10_000_000));
}
