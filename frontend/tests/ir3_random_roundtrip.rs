//! Random words of every encoding: decode never panics, and whatever the
//! disassembler prints assembles back to a word that prints the same text.

use wavejit_frontend::ir3;

#[test]
fn random_words_round_trip_through_text() {
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let encs = ir3::encodings();
    let (mut printed, mut bad) = (0, Vec::new());
    for k in 0..encs.len() * 4 {
        let e = &encs[k % encs.len()];
        let w = e.match_bits | (next() & !e.mask);
        let Ok(text) = ir3::disasm(w) else {
            assert!(
                ir3::decode(w).is_err(),
                "{w:#018x}: decode must agree with disasm"
            );
            continue;
        };
        printed += 1;
        let i = ir3::decode(w).unwrap_or_else(|err| panic!("{w:#018x} {text:?}: {err}"));
        assert_eq!(i.encoding, e.name, "{w:#018x}");
        match ir3::assemble_line(&text) {
            Ok(w2) if ir3::disasm(w2).as_deref() == Ok(text.as_str()) => {}
            other => bad.push(format!("{w:#018x} {text:?} -> {other:?}")),
        }
    }
    assert!(printed > 500, "only {printed} printable words");
    assert!(
        bad.is_empty(),
        "{} of {printed}:\n{}",
        bad.len(),
        bad.join("\n")
    );
}
