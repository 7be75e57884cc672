//! Encoding classification against `ir3_a6xx_encoding_mask_match.tsv` (mesa's
//! Jan-2025 XML, 212 a630 leaves). Our tables come from the Oct-2025 XML; the
//! differences are exactly the ones documented in shared/reference/ir3.md §1.

use wavejit_frontend::ir3;

const TSV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/ir3_a6xx_encoding_mask_match.tsv"
);
const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/ir3_disasm_vectors.tsv"
);

struct Row {
    name: String,
    cat: u8,
    mask: u64,
    matchv: u64,
    fixed: u32,
}

fn read(path: &str) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Some(t),
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "{path}: {e}");
            eprintln!("skipping: {path} not readable ({e})");
            None
        }
    }
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16)
        .unwrap_or_else(|e| panic!("bad hex {s:?}: {e}"))
}

fn rows() -> Option<Vec<Row>> {
    let text = read(TSV)?;
    Some(
        text.lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split('\t').collect();
                assert_eq!(c.len(), 5, "bad row {l:?}");
                Row {
                    name: c[0].to_string(),
                    cat: c[1].parse().unwrap_or_else(|e| panic!("{l:?}: {e}")),
                    mask: hex(c[2]),
                    matchv: hex(c[3]),
                    fixed: c[4].parse().unwrap_or_else(|e| panic!("{l:?}: {e}")),
                }
            })
            .collect(),
    )
}

/// The documented mask changes from the Jan-2025 to the Oct-2025 XML, as
/// (bits the new XML fixes in addition, bits it no longer fixes).
fn expected_mask_change(name: &str, cat: u8) -> (u64, u64) {
    const SOURCELESS_CAT0: &[&str] = &[
        "nop", "end", "ret", "emit", "cut", "chmask", "chsh", "flow_rev", "shpe", "predt", "predf",
        "prede",
    ];
    const CAT5_KEEP_BIT18: &[&str] = &[
        "isam",
        "tcinv",
        "brcst.active",
        "quad_shuffle.brcst",
        "quad_shuffle.horiz",
        "quad_shuffle.vert",
        "quad_shuffle.diag",
    ];
    if cat == 0 && SOURCELESS_CAT0.contains(&name) {
        return (0b111 << 34, 0);
    }
    if cat == 5 && !CAT5_KEEP_BIT18.contains(&name) {
        return (0, 1 << 18);
    }
    if name == "ldib.b" || name == "stib.b" || name.starts_with("atomic.b.") {
        return (0, 1 << 40);
    }
    (0, 0)
}

#[test]
fn leaves_agree_with_the_tsv_up_to_documented_changes() {
    let Some(rows) = rows() else { return };
    assert_eq!(rows.len(), 212);
    let ours = ir3::encodings();
    assert_eq!(ours.len(), 215);
    let mut changed = 0;
    for r in &rows {
        assert_eq!(
            r.mask.count_ones(),
            r.fixed,
            "{}: fixed_bits column",
            r.name
        );
        assert_eq!(r.matchv >> 61, u64::from(r.cat), "{}: category", r.name);
        let found: Vec<_> = ours.iter().filter(|e| e.name == r.name).collect();
        assert_eq!(found.len(), 1, "{} must be exactly one a630 leaf", r.name);
        let e = found[0];
        let (added, removed) = expected_mask_change(&r.name, r.cat);
        assert_eq!(e.mask, (r.mask | added) & !removed, "{}: mask", r.name);
        assert_eq!(e.match_bits, r.matchv & !removed, "{}: match", r.name);
        if added | removed != 0 {
            changed += 1;
        }
    }
    assert_eq!(changed, 50, "ir3.md: 50 leaves have other masks");
    let extra: Vec<&str> = ours
        .iter()
        .map(|e| e.name)
        .filter(|n| !rows.iter().any(|r| r.name == *n))
        .collect();
    assert_eq!(extra, vec!["movs-immed", "movs-a0", "resbase"]);
}

/// Exhaustive over the encoding space: two leaves can both match a word only when
/// they agree on every bit both fix. The only such pairs are the a6xx ldib.b/stib.b
/// forms whose immediate offset (bits 54..58) aliases the a3xx cat6 opcode field;
/// mesa reports "bitset conflict" for words in that overlap and so do we.
#[test]
fn only_ldib_stib_offsets_overlap_a3xx_opcodes() {
    let ours = ir3::encodings();
    let mut overlaps = Vec::new();
    for (i, a) in ours.iter().enumerate() {
        for b in &ours[i + 1..] {
            let both = a.mask & b.mask;
            if a.match_bits & both == b.match_bits & both {
                overlaps.push(format!("{}/{}", a.name, b.name));
                let word = a.match_bits | b.match_bits;
                let err = ir3::classify(word).expect_err("overlap must be rejected");
                assert!(err.to_string().contains("match both"), "{err}");
            }
        }
    }
    assert_eq!(
        overlaps,
        [
            "ldl/ldib.b",
            "ldp/ldib.b",
            "ldlw/ldib.b",
            "stl/stib.b",
            "stl/ldib.b",
            "stp/stib.b",
            "stp/ldib.b",
            "stlw/stib.b",
            "stlw/ldib.b"
        ]
    );
}

/// Each leaf's own match word, and sampled fillings of its free bits, classify as
/// that leaf (also through the TSV's most-specific-leaf rule).
#[test]
fn sampled_words_classify_like_the_tsv() {
    let Some(rows) = rows() else { return };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let mut checked = 0;
    for e in ir3::encodings() {
        for k in 0..64 {
            let fill = if k == 0 { 0 } else { next() };
            let word = e.match_bits | (fill & !e.mask);
            let got = match ir3::classify(word) {
                Ok(got) => got,
                // the documented ldib.b/stib.b overlap (see above)
                Err(err) if err.to_string().contains("match both") && e.name.contains("ib.b") => {
                    continue;
                }
                Err(err) => panic!("{}: {err}", e.name),
            };
            assert_eq!(got.name, e.name, "{word:#018x}");
            if let Some(tsv) = tsv_leaf(&rows, word) {
                let (added, removed) = expected_mask_change(&tsv.name, tsv.cat);
                if word & (added | removed) == tsv.matchv & (added | removed) {
                    assert_eq!(tsv.name, e.name, "{word:#018x}: TSV most-specific leaf");
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 215 * 60, "{checked}");
}

/// The TSV's rule: among matching rows, the one with the most fixed bits.
fn tsv_leaf(rows: &[Row], word: u64) -> Option<&Row> {
    rows.iter()
        .filter(|r| word & r.mask == r.matchv)
        .max_by_key(|r| r.fixed)
}

/// ir3.md §1: every a630 vector resolves to exactly one TSV leaf except the four
/// documented rows; our leaf agrees with it.
#[test]
fn vectors_resolve_like_the_tsv() {
    let (Some(rows), Some(vectors)) = (rows(), read(VECTORS)) else {
        return;
    };
    let mut exceptions = Vec::new();
    for line in vectors.lines().skip(1).filter(|l| l.starts_with("630\t")) {
        let c: Vec<&str> = line.splitn(3, '\t').collect();
        let word = hex(c[1]);
        let Some(tsv) = tsv_leaf(&rows, word) else {
            exceptions.push(c[2].to_string());
            continue;
        };
        let ours = ir3::classify(word).unwrap_or_else(|e| panic!("{line}: {e}"));
        assert_eq!(ours.name, tsv.name, "{line}");
    }
    assert_eq!(exceptions.len(), 4, "{exceptions:?}");
    assert!(exceptions.iter().any(|t| t.starts_with("sam.clp")));
    assert!(exceptions.iter().any(|t| t.starts_with("samb.base0.clp")));
    assert!(
        exceptions
            .iter()
            .any(|t| t.starts_with("ldib.b.untyped.1d.u32.rck"))
    );
    assert!(exceptions.iter().any(|t| t == "raw 0xFFFFFFFFFFFFFFFF"));
}
