//! Assembler round trips over Mesa's 555 AGX vectors: assembling Mesa's text gives the
//! original bytes (except the rows listed in `AMBIGUOUS`, where Mesa's text does not
//! determine the encoding), and disassembling the assembled bytes gives the text back.

use wavejit_frontend::agx::{assemble, assemble_line, disasm, disasm_program};

const TSV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/agx_mesa_cases.tsv"
);

/// Rows whose text has more than one encoding; the assembler picks another one.
const AMBIGUOUS: &[(&str, &str)] = &[
    (
        "0541f00f0fc8f20f",
        "immediate index 4095 prints the same sign-extended (bit 25 = 0, Mesa's usual \
         choice) or zero-extended (bit 25 = 1, this row); the assembler picks sign-extended",
    ),
    (
        "b500810523800000",
        "stack_adjust 56 fits the 6-byte short form (the assembler's choice, as Mesa does \
         for stack_adjust 8); this row uses the long form with zero extension bytes",
    ),
];

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

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn assemble_mesa_text_gives_original_bytes() {
    let Some(rows) = rows() else { return };
    let mut failures = Vec::new();
    let mut exact = 0;
    for (h, bytes, text) in &rows {
        let listed = AMBIGUOUS.iter().any(|(a, _)| a == h);
        match assemble_line(text) {
            Ok(got) if got == *bytes => {
                exact += 1;
                if listed {
                    failures.push(format!("{h}\t{text}\tlisted as ambiguous but matches"));
                }
            }
            Ok(got) => {
                let back = disasm(&got).map(|(t, _)| t);
                if !listed || back.as_deref() != Ok(text.as_str()) {
                    failures.push(format!("{h}\t{text}\tgot {} -> {back:?}", hex(&got)));
                }
            }
            Err(e) => failures.push(format!("{h}\t{text}\terror {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures ({exact} exact of {}):\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
    assert_eq!(exact, rows.len() - AMBIGUOUS.len());
}

#[test]
fn disasm_of_assembled_text_is_identity() {
    let Some(rows) = rows() else { return };
    for (h, _, text) in &rows {
        let bytes = assemble_line(text).unwrap_or_else(|e| panic!("{h} {text}: {e}"));
        let (back, len) = disasm(&bytes).unwrap_or_else(|e| panic!("{h} {text}: {e}"));
        assert_eq!(back, *text, "{h}");
        assert_eq!(len, bytes.len(), "{h}");
    }
}

#[test]
fn whole_program_assembles_and_disassembles_back() {
    let Some(rows) = rows() else { return };
    let src: String = rows
        .iter()
        .map(|(_, _, t)| format!("{t}  ; comment\n\n"))
        .collect();
    let got = assemble(&src).expect("program assembles");
    let per_line: Vec<u8> = rows
        .iter()
        .flat_map(|(h, _, t)| assemble_line(t).unwrap_or_else(|e| panic!("{h}: {e}")))
        .collect();
    assert_eq!(got, per_line);
    let texts: Vec<&str> = rows.iter().map(|(_, _, t)| t.as_str()).collect();
    assert_eq!(disasm_program(&got).expect("decodes"), texts);
}
