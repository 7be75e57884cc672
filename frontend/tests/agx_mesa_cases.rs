//! Mesa's 555 AGX disassembler vectors (`shared/data/agx_mesa_cases.tsv`): every row must
//! decode to exactly its hex length and print exactly Mesa's text.

use wavejit_frontend::agx::{decode, disasm, disasm_program};

const TSV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/agx_mesa_cases.tsv"
);

/// (hex, bytes, expected text) of every row, or `None` when the data is absent.
fn rows() -> Option<Vec<(String, Vec<u8>, String)>> {
    let Ok(text) = std::fs::read_to_string(TSV) else {
        assert!(std::env::var_os("CI").is_none(), "CI: missing {TSV}");
        eprintln!("skipping: {TSV} not found");
        return None;
    };
    let mut out = Vec::new();
    for line in text.lines().skip(1) {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(cols.len() >= 2, "malformed row {line:?}");
        let hex = cols[0].to_string();
        let bytes = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .unwrap_or_else(|e| panic!("bad hex {hex}: {e}"));
        out.push((hex, bytes, cols[1].to_string()));
    }
    Some(out)
}

#[test]
fn all_mesa_vectors_disassemble_identically() {
    let Some(rows) = rows() else { return };
    assert_eq!(rows.len(), 555);
    let mut mismatches = Vec::new();
    for (hex, bytes, expected) in &rows {
        match disasm(bytes) {
            Ok((text, len)) if text == *expected && len == bytes.len() => {}
            Ok((text, len)) => mismatches.push(format!(
                "{hex}\texpected {expected:?}\tgot {text:?} (len {len}, want {})",
                bytes.len()
            )),
            Err(e) => mismatches.push(format!("{hex}\texpected {expected:?}\tgot error {e}")),
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} rows differ:\n{}",
        mismatches.len(),
        rows.len(),
        mismatches.join("\n")
    );
}

#[test]
fn vectors_concatenated_decode_as_a_program() {
    let Some(rows) = rows() else { return };
    let program: Vec<u8> = rows.iter().flat_map(|(_, b, _)| b.clone()).collect();
    let lines = disasm_program(&program).expect("program decodes");
    let expected: Vec<&str> = rows.iter().map(|(_, _, t)| t.as_str()).collect();
    assert_eq!(lines, expected);
}

#[test]
fn trailing_bytes_do_not_change_decoding() {
    let Some(rows) = rows() else { return };
    for (hex, bytes, expected) in &rows {
        let mut padded = bytes.clone();
        padded.extend_from_slice(&[0xff; 12]);
        let (instr, len) = decode(&padded, 0x1000).unwrap_or_else(|e| panic!("{hex}: {e}"));
        assert_eq!(len, bytes.len(), "{hex}");
        assert_eq!(instr.to_string(), *expected, "{hex}");
    }
}
