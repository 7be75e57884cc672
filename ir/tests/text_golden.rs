//! Golden tests of the text form: every `tests/in/*.wj` is parsed, verified and
//! printed, and the text must equal `tests/out/<same name>.wj`. Set
//! `WAVEJIT_BLESS=1` to rewrite the expected outputs after a deliberate change.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use wavejit_ir::float_mode::{Denorm, FloatMode, NanMode};
use wavejit_ir::text::{canonicalize, parse, print};
use wavejit_ir::verify::verify;
use wavejit_ir::{InstKind, Terminator};

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
}

fn inputs() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir("in"))
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "wj"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Parses, verifies and prints one input; returns the printed text.
fn process(path: &Path) -> Result<String, String> {
    let src = fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let kernel = parse(&src).map_err(|e| format!("parse: {e}"))?;
    verify(&kernel).map_err(|e| format!("verify: {e}"))?;
    let printed = print(&kernel);
    // The canonical text is a fixed point and denotes the same kernel.
    let again = parse(&printed).map_err(|e| format!("reparse of the output: {e}"))?;
    if print(&again) != printed {
        return Err("print(parse(print(k))) differs from print(k)".into());
    }
    if again != canonicalize(&kernel) {
        return Err("parse(print(k)) is not structurally equal to canonicalize(k)".into());
    }
    Ok(printed)
}

#[test]
fn golden_outputs_match() {
    let bless = std::env::var_os("WAVEJIT_BLESS").is_some_and(|v| v == "1");
    let files = inputs();
    assert!(
        files.len() >= 12,
        "expected at least 12 golden inputs, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap_or_default();
        let out_path = dir("out").join(name);
        let printed = match process(path) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        if bless {
            if let Err(e) = fs::write(&out_path, &printed) {
                failures.push(format!("{}: write: {e}", out_path.display()));
            }
            continue;
        }
        match fs::read_to_string(&out_path) {
            Ok(expected) if expected == printed => {}
            Ok(expected) => failures.push(format!(
                "{}: output differs from {}\n{}",
                path.display(),
                out_path.display(),
                first_difference(&expected, &printed)
            )),
            Err(e) => failures.push(format!(
                "{}: {e} (run with WAVEJIT_BLESS=1 to create it)",
                out_path.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every expected output is itself canonical: parsing and printing it is the identity.
#[test]
fn golden_outputs_are_fixed_points() {
    let mut checked = 0;
    for path in inputs() {
        let Some(name) = path.file_name() else {
            continue;
        };
        let Ok(expected) = fs::read_to_string(dir("out").join(name)) else {
            continue;
        };
        let k = parse(&expected).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(print(&k), expected, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} golden outputs found");
}

fn first_difference(expected: &str, got: &str) -> String {
    for (i, (e, g)) in expected.lines().zip(got.lines()).enumerate() {
        if e != g {
            return format!("line {}:\n  expected: {e}\n  got:      {g}", i + 1);
        }
    }
    format!(
        "lengths differ: expected {} lines, got {}",
        expected.lines().count(),
        got.lines().count()
    )
}

/// Coverage keys of one instruction: its variant and every operator, format,
/// space and attribute it uses.
fn coverage_keys(kind: &InstKind, out: &mut HashSet<String>) {
    use InstKind::*;
    let variant = format!("{kind:?}");
    let variant: String = variant
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect();
    out.insert(format!("kind {variant}"));
    let mut mode_keys = |m: &FloatMode| {
        if m.denorm_in == Denorm::FlushKeepSign {
            out.insert("ftz.in".into());
        }
        if m.denorm_out == Denorm::FlushKeepSign {
            out.insert("ftz.out".into());
        }
        if let NanMode::Canonical(_) = m.nan {
            out.insert("nan".into());
        }
        out.insert(format!("round {:?}", m.round));
        if m.sat {
            out.insert("sat".into());
        }
        if m.flags {
            out.insert("flags".into());
        }
    };
    match kind {
        FBinary { mode, .. }
        | FUnary { mode, .. }
        | Fma { mode }
        | Fcmp { mode, .. }
        | Fclass { mode }
        | Special { mode, .. }
        | PowFixup { mode }
        | Fcvt { mode, .. }
        | FToI { mode, .. }
        | IToF { mode, .. } => mode_keys(mode),
        _ => {}
    }
    let key = match kind {
        Builtin(b) => format!("builtin {b:?}"),
        IBinary(op) => format!("ibin {op:?}"),
        IUnary(op) => format!("iun {op:?}"),
        Icmp(cc) => format!("icmp {cc:?}"),
        Cast { op, .. } => format!("cast {op:?}"),
        FBinary { op, .. } => format!("fbin {op:?}"),
        FUnary { op, .. } => format!("fun {op:?}"),
        Fcmp { cc, .. } => format!("fcmp {cc:?}"),
        Special { func, .. } => format!("special {func:?}"),
        Fcvt { from, to, .. } => {
            out.insert(format!("fcvt to {to:?}"));
            format!("fcvt from {from:?}")
        }
        FToI { from, .. } => format!("ftoi from {from:?}"),
        IToF { to, .. } => format!("itof to {to:?}"),
        Load(a) | Store(a) => {
            out.insert(format!("count {}", a.count));
            out.insert(format!("ext {} {}", a.signed, a.bits));
            format!("{variant} {:?}", a.space)
        }
        Atomic { op, space, .. } => {
            out.insert(format!("atomic space {space:?}"));
            format!("atomic {op:?}")
        }
        Fence(scope) => format!("fence {scope:?}"),
        Shuffle(k) => format!("shuffle {k:?}"),
        Reduce(op) => format!("reduce {op:?}"),
        Scan { op, inclusive } => {
            out.insert(format!("scan {inclusive}"));
            format!("scan {op:?}")
        }
        _ => return,
    };
    out.insert(key);
}

/// The golden inputs exercise every instruction kind, operator, condition, float
/// format, address space, attribute and terminator.
#[test]
fn golden_inputs_cover_every_instruction_family() {
    let mut keys = HashSet::new();
    for path in inputs() {
        let Ok(src) = fs::read_to_string(&path) else {
            continue;
        };
        let Ok(k) = parse(&src) else { continue };
        for data in k.insts.values() {
            coverage_keys(&data.kind, &mut keys);
        }
        for block in k.blocks.values() {
            let t = match &block.term {
                Some(Terminator::Jump(_)) => "jump",
                Some(Terminator::Branch { .. }) => "br",
                Some(Terminator::Table { .. }) => "table",
                Some(Terminator::Exit) => "exit",
                None => "none",
            };
            keys.insert(format!("term {t}"));
        }
    }
    let count = |prefix: &str| keys.iter().filter(|k| k.starts_with(prefix)).count();
    let expected = [
        ("kind ", 35),
        ("builtin ", 16),
        ("ibin ", 25),
        ("iun ", 8),
        ("icmp ", 10),
        ("cast ", 4),
        ("fbin ", 9),
        ("fun ", 7),
        ("fcmp ", 14),
        ("special ", 6),
        ("fcvt from ", 7),
        ("fcvt to ", 7),
        ("ftoi from ", 7),
        ("itof to ", 7),
        ("Load ", 4),
        ("Store ", 3),
        ("count ", 4),
        ("atomic space ", 2),
        ("atomic ", 13 + 2),
        ("fence ", 2),
        ("shuffle ", 4),
        ("reduce ", 12),
        ("scan ", 2 + 4),
        ("round ", 5),
        ("term ", 4),
    ];
    let mut missing = Vec::new();
    for (prefix, n) in expected {
        let got = count(prefix);
        if got != n {
            missing.push(format!("`{prefix}`: {got} of {n}"));
        }
    }
    for attr in ["ftz.in", "ftz.out", "nan", "sat", "flags"] {
        if !keys.contains(attr) {
            missing.push(format!("attribute {attr}"));
        }
    }
    assert!(
        missing.is_empty(),
        "golden inputs miss: {missing:?}\nhave: {keys:?}"
    );
}
