//! The committed tables (`frontend/src/agx/tables.rs`) must cover exactly the
//! instructions of `shared/spec/agx/AGX2.xml` plus `frontend/gen/agx/overlay.xml`, in
//! order; a mismatch means the generator was not rerun.

use wavejit_frontend::agx::Opcode;

const XML: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/spec/agx/AGX2.xml"
);
const OVERLAY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/gen/agx/overlay.xml");

/// Values of `name="..."` on `<ins` elements, in document order.
fn ins_names(xml: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for chunk in xml.split("<ins ").skip(1) {
        let attr = |key: &str| {
            chunk
                .split_once(&format!("{key}=\""))
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(v, _)| v.to_string())
                .unwrap_or_default()
        };
        out.push((attr("name"), attr("mode")));
    }
    out
}

#[test]
fn tables_match_xml_and_overlay() {
    let (Ok(xml), Ok(overlay)) = (
        std::fs::read_to_string(XML),
        std::fs::read_to_string(OVERLAY),
    ) else {
        assert!(std::env::var_os("CI").is_none(), "CI: missing {XML}");
        eprintln!("skipping: {XML} not found");
        return;
    };
    let mut names: Vec<String> = ins_names(&xml).into_iter().map(|(n, _)| n).collect();
    for (name, mode) in ins_names(&overlay) {
        if let Some(target) = mode.strip_prefix("before:") {
            let at = names
                .iter()
                .position(|n| n == target)
                .expect("overlay target");
            names.insert(at, name);
        } else {
            assert_eq!(mode, "replace", "{name}");
            assert!(names.contains(&name), "{name}");
        }
    }
    let ours: Vec<&str> = Opcode::ALL.iter().map(|o| o.name()).collect();
    assert_eq!(ours, names);
    assert_eq!(
        ours.len(),
        136 + 1,
        "136 AGX2.xml instructions plus pow_fixup"
    );
}
