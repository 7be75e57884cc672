//! `runtime/python/tests/samples.py` holds the sample kernels' code for the
//! Python tests (which run without cargo); this checks it is the code of
//! `wavejit_runtime::aql::isa::samples`, so the two cannot drift apart.
//! `WAVEJIT_BLESS=1 cargo test -p wavejit-capi --test python_samples` rewrites it.

use std::fmt::Write as _;

use wavejit_runtime::aql::isa::samples;

fn py_bytes(name: &str, bytes: &[u8]) -> String {
    let mut s = format!("{name} = bytes.fromhex(\n");
    for chunk in bytes.chunks(32) {
        let mut hex = String::new();
        for b in chunk {
            let _ = write!(hex, "{b:02x}");
        }
        let _ = writeln!(s, "    \"{hex}\"");
    }
    s.push_str(")\n");
    s
}

fn expected() -> String {
    let mut s = String::from(
        "\"\"\"The sample kernels of wavejit_runtime::aql::isa::samples, as bytes.\n\n\
         Generated; checked by runtime/capi/tests/python_samples.rs (WAVEJIT_BLESS=1 rewrites it).\n\"\"\"\n\n",
    );
    let _ = writeln!(
        s,
        "# RV32 argument block address: in (u32) at +0, out at +4."
    );
    let _ = writeln!(s, "RV32_ARGS = {:#x}", samples::RV32_ARGS);
    let _ = writeln!(s, "# ir3 sample workgroup size (i = wgid << 6 | local).");
    let _ = writeln!(s, "IR3_WORKGROUP = {}\n", samples::IR3_WORKGROUP);
    s += "# out[i] = 3 * in[i] + 7 (u32)\n";
    s += &py_bytes("RV32_SCALE_ADD", &samples::rv32_scale_add().expect("rv32"));
    s += "# out[i] = a[i] + 2 * b[i] (f32); kernargs out, a, b (u64)\n";
    s += &py_bytes("IR3_AXPY", &samples::ir3_axpy().expect("ir3"));
    s += "# out[i] = a[i] + b[i] + 7 (i32); kernargs a, b, out (u64)\n";
    s += &py_bytes("AGX_ADD", &samples::agx_add().expect("agx"));
    s
}

#[test]
fn python_samples_match_the_rust_samples() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../python/tests/samples.py");
    let want = expected();
    if std::env::var_os("WAVEJIT_BLESS").is_some() {
        std::fs::write(path, &want).expect("writes samples.py");
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "{path} is not the samples' code; rerun with WAVEJIT_BLESS=1"
    );
}
