//! Fuzz target of the RV32 decoder: seeds first, then seeded random words at
//! random aligned pcs. For every word: decoding (for printing and for
//! execution) and disassembly never panic; an error names the word and pc;
//! a decoded word encodes back to itself, prints, and executes.

mod fuzz_support;

use fuzz_support::{Rng, corpus, hex_lines, long_cases};
use wavejit_frontend::rv32::{decode, decode_for_execution, disasm, encode};

fn check(w: u32, pc: u32) -> Option<String> {
    let exec = decode_for_execution(w, pc);
    let shown = disasm(w, pc);
    match decode(w, pc) {
        Ok(instr) => {
            if encode(&instr) != Ok(w) {
                return Some(format!(
                    "{w:#010x}: {instr:?} encodes as {:?}",
                    encode(&instr)
                ));
            }
            if shown.is_err() || exec.is_err() {
                return Some(format!("{w:#010x}: decodes but {shown:?} / {exec:?}"));
            }
            None
        }
        Err(e) if (e.word, e.pc) != (w, pc) => Some(format!(
            "{w:#010x} at {pc:#x}: the error names {:#010x} at {:#x}",
            e.word, e.pc
        )),
        Err(_) => None,
    }
}

fn run(seed: u64, cases: usize) {
    let mut bad = Vec::new();
    for (name, bytes) in corpus("rv32_decode") {
        for w in hex_lines(&bytes) {
            bad.extend(check(w as u32, 0).map(|e| format!("seed {name}: {e}")));
        }
    }
    let mut rng = Rng::new(seed);
    let mut decoded = 0usize;
    for _ in 0..cases {
        let r = rng.next();
        let (w, pc) = (r as u32, (r >> 32) as u32 & !3);
        decoded += usize::from(decode(w, pc).is_ok());
        bad.extend(check(w, pc));
    }
    assert!(
        bad.is_empty(),
        "{} words fail:\n{}",
        bad.len(),
        bad[..bad.len().min(40)].join("\n")
    );
    // About one random word in 9 is an instruction.
    assert!(
        decoded > cases / 20,
        "only {decoded} of {cases} words decode"
    );
    fuzz_support::assert_peak_rss_bounded();
}

#[test]
fn rv32_words_decode_encode_and_print() {
    run(0x5_d001, 10_000_000);
}

/// `WAVEJIT_LONG_CASES` words (default 10^9) from another seed.
#[test]
#[ignore]
fn rv32_words_decode_encode_and_print_long() {
    run(0x5_d002, long_cases(1_000_000_000));
}
