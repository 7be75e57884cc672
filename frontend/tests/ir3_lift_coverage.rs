//! Lifter coverage: every a630 encoding class (mesa's isaspec leaves) either lifts
//! or is refused with a documented error (unsupported in compute / undocumented
//! semantics); never an internal error or a panic. Instances come from the mesa
//! disasm vectors (real instructions) and, for classes without a vector, from the
//! class's fixed bits.

use std::collections::BTreeMap;

use wavejit_frontend::ir3::lift::{LiftConfig, LiftError, lift};
use wavejit_frontend::ir3::{classify, decode, encodings};

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/ir3_disasm_vectors.tsv"
);

/// `end`, to terminate each one-instruction program.
const END: u64 = 0x0300_0000_0000_0000;

fn outcome(word: u64) -> String {
    let Ok(ins) = decode(word) else {
        return "undecodable".into();
    };
    // Flow instructions sit in the middle of a program of `end`s so that their
    // targets (+/-32) land inside it.
    let mut prog = vec![END; 64];
    prog[32] = word;
    prog[0] = wavejit_frontend::ir3::assemble_line("jump #32").expect("jump");
    let r = match lift(&prog, &LiftConfig::default()) {
        Ok(_) => "lifts".to_string(),
        Err(LiftError::Unsupported { .. }) => "unsupported in compute".into(),
        Err(LiftError::Undocumented { why, .. }) => format!("refused: {why}"),
        Err(LiftError::BadTarget { .. } | LiftError::FallsOffEnd { .. }) => {
            "lifts (flow; target outside the test program)".into()
        }
        Err(
            e @ (LiftError::Internal { .. }
            | LiftError::Malformed { .. }
            | LiftError::Undecodable { .. }),
        ) => {
            format!("ERROR {e}")
        }
    };
    let _ = ins;
    r
}

#[test]
fn every_encoding_class_lifts_or_is_refused_by_name() {
    let mut samples: BTreeMap<&'static str, Vec<u64>> = BTreeMap::new();
    let have_vectors = std::path::Path::new(VECTORS).exists();
    match std::fs::read_to_string(VECTORS) {
        Ok(text) => {
            for line in text.lines() {
                let cols: Vec<&str> = line.split('\t').collect();
                if cols.len() < 2 || cols[0] != "630" {
                    continue;
                }
                let Ok(w) = u64::from_str_radix(cols[1].trim_start_matches("0x"), 16) else {
                    continue;
                };
                if let Ok(e) = classify(w) {
                    samples.entry(e.name).or_default().push(w);
                }
            }
        }
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "vectors missing: {e}");
            eprintln!("skipping vector instances: {e}");
        }
    }
    // Non-bindless forms tinygrad emits (the vectors only have bindless ones).
    for text in [
        "stib.b.typed.2d.f32.4.imm r9.x, r5.y, 0",
        "stib.b.untyped.1d.u32.1.imm r0.x, r0.y, 1",
        "ldib.b.typed.2d.f32.4.imm r0.x, r0.w, 1",
        // 32-bit IBO atomics the vectors lack (the classes' fixed bits alone
        // spell type f16, which a630 atomics do not take).
        "atomic.b.sub.untyped.1d.u32.1.imm r0.w, r0.y, 0",
        "atomic.b.xchg.untyped.1d.u32.1.imm r0.w, r0.y, 0",
        "atomic.b.cmpxchg.typed.2d.u32.1.imm r0.w, r0.y, 0",
        "atomic.b.min.untyped.1d.s32.1.imm r0.w, r0.y, 0",
        "atomic.b.or.typed.1d.u32.1.imm r0.w, r0.y, 0",
        "atomic.b.xor.untyped.1d.u32.1.nonuniform.base2 r0.w, r0.y, r0.z",
        // Subgroup swaps the vectors lack.
        "quad_shuffle.horiz (u32)(x)r1.x, r0.x",
        "quad_shuffle.vert (u32)(x)r1.x, r0.x",
    ] {
        let w =
            wavejit_frontend::ir3::assemble_line(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let e = classify(w).unwrap_or_else(|e| panic!("{text}: {e}"));
        samples.entry(e.name).or_default().push(w);
    }
    let mut table = BTreeMap::new();
    let mut bad = Vec::new();
    for enc in encodings() {
        let real = samples.get(enc.name).cloned();
        let synthetic = real.is_none();
        let words = real.unwrap_or_else(|| vec![enc.match_bits]);
        let mut results: Vec<String> = words
            .iter()
            .map(|&w| outcome(w))
            // The class's fixed bits alone may spell an operand form no compiler
            // emits (e.g. 0 components); refusing it by name is right.
            .map(|r| match r.strip_prefix("ERROR malformed") {
                Some(rest) if synthetic => format!("refused (synthetic instance): malformed{rest}"),
                _ => r,
            })
            .collect();
        results.sort();
        results.dedup();
        for r in &results {
            if r.starts_with("ERROR") {
                bad.push(format!("{}: {r}", enc.name));
            }
        }
        table.insert(enc.name, results.join(" | "));
    }
    for (k, v) in &table {
        println!("{k:24} {v}");
    }
    let lifted = table.values().filter(|v| v.contains("lifts")).count();
    println!("{} encodings: {lifted} lift", table.len());
    assert!(
        bad.is_empty(),
        "{} classes fail:\n{}",
        bad.len(),
        bad.join("\n")
    );
    if !have_vectors {
        return;
    }
    // The compute core must lift (real instances).
    for must in [
        "add.f",
        "mad.f32",
        "mov-gpr",
        "ldg",
        "stg",
        "isam",
        "stib.b",
        "ldib.b",
        "bar",
        "br",
        "cmps.u",
        "sel.b32",
        "rcp",
        "atomic.g.add",
        "brcst.active",
        "quad_shuffle.brcst",
        "quad_shuffle.horiz",
        "quad_shuffle.vert",
        "quad_shuffle.diag",
        // Dispatch-state encodings: brac.N (SP_CS_BOOLEAN_CF_MASK), bindless
        // isaml / ldc.k, typed image atomics.
        "brac",
        "isaml",
        "ldc.k",
        "atomic.b.max",
    ] {
        let v = table.get(must).map(String::as_str).unwrap_or("missing");
        assert!(v.starts_with("lifts"), "{must}: {v}");
    }
}
