//! Beyond Mesa's vectors: every single-bit mutation of every vector either fails to
//! decode with an error (never a panic) or decodes to text the assembler encodes back to
//! bytes with the same text. Random byte strings are the AGX decoder's fuzz
//! target (`fuzz_agx_decode.rs`).

use wavejit_frontend::agx::{assemble_line, decode, disasm};

const TSV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/agx_mesa_cases.tsv"
);

fn vectors() -> Option<Vec<Vec<u8>>> {
    let Ok(text) = std::fs::read_to_string(TSV) else {
        assert!(std::env::var_os("CI").is_none(), "CI: missing {TSV}");
        eprintln!("skipping: {TSV} not found");
        return None;
    };
    Some(
        text.lines()
            .skip(1)
            .filter_map(|l| l.split('\t').next())
            .map(|hex| {
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap_or(0))
                    .collect()
            })
            .collect(),
    )
}

#[test]
fn single_bit_mutations_round_trip_through_text() {
    let Some(vectors) = vectors() else { return };
    let (mut decoded, mut rejected) = (0usize, 0usize);
    let mut failures = Vec::new();
    for v in &vectors {
        for bit in 0..v.len() * 8 {
            let mut m = v.clone();
            m[bit / 8] ^= 1 << (bit % 8);
            let Ok((instr, len)) = decode(&m, 0) else {
                rejected += 1;
                continue;
            };
            decoded += 1;
            let text = instr.to_string();
            match assemble_line(&text) {
                Ok(bytes) => {
                    let back = disasm(&bytes).map(|(t, _)| t);
                    if back.as_deref() != Ok(text.as_str()) {
                        failures.push(format!("{:02x?} {text:?} -> {back:?}", &m[..len]));
                    }
                }
                Err(e) => failures.push(format!("{:02x?} {text:?}: {e}", &m[..len])),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {decoded} decodable mutations fail ({rejected} rejected):\n{}",
        failures.len(),
        failures[..failures.len().min(40)].join("\n")
    );
    eprintln!("{decoded} mutations decoded and round-tripped, {rejected} rejected");
    assert!(decoded > 5000, "only {decoded} mutations decoded");
}
