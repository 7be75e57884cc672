//! Snapshots of what each lifter (with its transforms) makes of a program:
//! every `tests/lift/in/*.{rv32,agx,ir3}` is lifted and printed, and the IR
//! text must equal `tests/lift/out/<name>.<isa>.wj`, so a lifter or transform
//! change shows in review as a diff of the IR. `WAVEJIT_BLESS=1` rewrites
//! the expected outputs after a deliberate change.
//!
//! Inputs: `.rv32` is one hex instruction word per line (`#` comments), lifted
//! for 64 blocks of 256 threads; `.agx` and `.ir3` are assembly in the
//! communities' syntax, lifted with the default configuration. An `.ir3` file
//! may instead be a listing as tinygrad's DEBUG=7 prints it (`NNNN [HI_LO]
//! text` per instruction, `#` comments), whose words are lifted as they are,
//! so real compiler output needs no round trip through the assembler; it is
//! lifted with the workgroup id delivered in r48.x, where Mesa's ir3 puts it
//! for these kernels (tinygrad programs SP_CS_CONST_CONFIG_0 from the compiled
//! variant; runtime/src/aql/isa/ir3.rs assumes the same regid).

use std::fs;
use std::path::{Path, PathBuf};

use wavejit_frontend::rv32::lift::{DispatchShape, LiftConfig};
use wavejit_frontend::{agx, ir3, rv32};
use wavejit_ir::text::print;

/// regid of r48.x (`48 << 2 | x`).
const WORKGROUP_ID_R48X: u32 = 0xc0;

fn dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("lift")
        .join(name)
}

/// The printed IR of the lifted `path`, or why it could not be lifted.
fn lift(path: &Path) -> Result<String, String> {
    let src = fs::read_to_string(path).map_err(|e| format!("read: {e}"))?;
    let kernel = match path.extension().and_then(|x| x.to_str()) {
        Some("rv32") => {
            let words = src
                .lines()
                .map(|l| l.split('#').next().unwrap_or("").trim())
                .filter(|l| !l.is_empty())
                .map(|w| u32::from_str_radix(w, 16).map_err(|e| format!("word {w}: {e}")))
                .collect::<Result<Vec<u32>, String>>()?;
            let fetch = |pc: u32| words.get((pc / 4) as usize).copied();
            let opts = LiftConfig {
                shape: Some(DispatchShape {
                    num_workgroups: [64, 1, 1],
                    workgroup_size: [256, 1, 1],
                }),
                ..LiftConfig::default()
            };
            rv32::lift::lift(&fetch, 0, &opts)
                .map_err(|e| format!("lift: {e}"))?
                .kernel
        }
        Some("agx") => {
            let code = agx::assemble(&src).map_err(|e| format!("assemble: {e}"))?;
            agx::lift::lift(&code, &agx::lift::LiftConfig::default())
                .map_err(|e| format!("lift: {e}"))?
        }
        Some("ir3") => {
            let (words, cfg) = match listing_words(&src)? {
                Some(words) => (
                    words,
                    ir3::lift::LiftConfig {
                        workgroup_id_regid: WORKGROUP_ID_R48X,
                        ..ir3::lift::LiftConfig::default()
                    },
                ),
                None => (
                    ir3::assemble(&src).map_err(|e| format!("assemble: {e}"))?,
                    ir3::lift::LiftConfig::default(),
                ),
            };
            ir3::lift::lift(&words, &cfg).map_err(|e| format!("lift: {e}"))?
        }
        other => return Err(format!("unknown input kind {other:?}")),
    };
    wavejit_ir::verify::verify(&kernel).map_err(|e| format!("verify: {e}"))?;
    Ok(print(&kernel))
}

/// The words of a tinygrad listing (`0007 [42180002_20010002] (nop2) add.u ...`),
/// or `None` when `src` is assembly. A label line (`0005 [...] l5:`) repeats
/// the index and word of the instruction after it and is read once.
fn listing_words(src: &str) -> Result<Option<Vec<u64>>, String> {
    let lines: Vec<(usize, &str)> = src
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if !lines.first().is_some_and(|(_, l)| l.contains(" [")) {
        return Ok(None);
    }
    let mut words: Vec<u64> = Vec::new();
    for (n, line) in lines {
        let bad = || format!("line {n}: not `NNNN [HI_LO] text`: {line}");
        let (index, rest) = line.split_once(" [").ok_or_else(bad)?;
        let (hex, _text) = rest.split_once(']').ok_or_else(bad)?;
        let (hi, lo) = hex.split_once('_').ok_or_else(bad)?;
        let index: usize = index.parse().map_err(|_| bad())?;
        let word = u64::from_str_radix(hi, 16).map_err(|_| bad())? << 32
            | u64::from_str_radix(lo, 16).map_err(|_| bad())?;
        if index + 1 == words.len() && words[index] == word {
            continue;
        }
        if index != words.len() {
            return Err(format!(
                "line {n}: instruction {index} where {} is due",
                words.len()
            ));
        }
        words.push(word);
    }
    Ok(Some(words))
}

#[test]
fn tinygrad_listings_are_read_word_for_word() {
    let src = "# c\n0000 [42100003_20010001] add.u r0.w, r0.y, 1\n\
               0001 [00000200_00000000] l1:\n0001 [00000200_00000000] (rpt2)nop\n\
               0002 [03000000_00000000] end\n";
    assert_eq!(
        listing_words(src),
        Ok(Some(vec![
            0x42100003_20010001,
            0x00000200_00000000,
            0x03000000_00000000
        ]))
    );
    assert_eq!(listing_words("add.u r0.w, r0.y, 1\nend\n"), Ok(None));
    assert_eq!(
        listing_words("0000 [03000000_00000000] end\n0002 [03000000_00000000] end\n"),
        Err("line 2: instruction 2 where 1 is due".to_string())
    );
}

#[test]
fn lifted_ir_matches_the_snapshots() {
    let bless = std::env::var_os("WAVEJIT_BLESS").is_some_and(|v| v == "1");
    let mut inputs: Vec<PathBuf> = fs::read_dir(dir("in"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    inputs.sort();
    assert!(
        inputs.len() >= 8,
        "expected straight-line and control-flow inputs per ISA, found {inputs:?}"
    );
    let mut failures = Vec::new();
    for path in &inputs {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("?");
        let out = dir("out").join(format!("{name}.wj"));
        let got = match lift(path) {
            Ok(text) => text,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if bless {
            if let Err(e) = fs::write(&out, &got) {
                failures.push(format!("{name}: writing {}: {e}", out.display()));
            }
            continue;
        }
        match fs::read_to_string(&out) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!(
                "{name}: lifted IR differs from {} (WAVEJIT_BLESS=1 to accept)\n--- want\n{want}\n--- got\n{got}",
                out.display()
            )),
            Err(e) => failures.push(format!("{name}: {}: {e}", out.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An ir3 kernel lifted for its launch: `if (local_id.x < 100) y[i] = i`
/// under workgroups of 64 lanes loses its bounds test (the branch becomes a
/// jump and the blocks merge); lifted for any grid it keeps it.
#[test]
fn an_ir3_bounds_test_the_grid_decides_goes() {
    let src = "cmps.u.lt p0.x, r0.x, 100\n\
               br !p0.x, #5\n\
               shl.b r0.y, r0.x, 2\n\
               add.u r1.x, c0.x, r0.y\n\
               mov.u32u32 r1.y, c0.y\n\
               stg.u32 g[r1.x], r0.x, 1\n\
               end\n";
    let words = ir3::assemble(src).expect("assembles");
    let any = ir3::lift::LiftConfig::default();
    let grid = ir3::lift::LiftConfig {
        shape: Some(DispatchShape {
            num_workgroups: [4, 1, 1],
            workgroup_size: [64, 1, 1],
        }),
        ..any.clone()
    };
    let k_any = ir3::lift::lift(&words, &any).expect("lifts");
    let k_grid = ir3::lift::lift(&words, &grid).expect("lifts");
    wavejit_ir::verify::verify(&k_grid).expect("verifies");
    let branches = |k: &wavejit_ir::Kernel| {
        k.blocks
            .values()
            .filter(|b| matches!(b.term, Some(wavejit_ir::Terminator::Branch { .. })))
            .count()
    };
    assert!(branches(&k_any) > 0, "{}", print(&k_any));
    assert_eq!(branches(&k_grid), 0, "{}", print(&k_grid));
    assert!(k_grid.blocks.len() < k_any.blocks.len());
}
