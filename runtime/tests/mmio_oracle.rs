//! Differential oracle against qemu-riscv32-static (generator and harness in
//! `tests/rv32/oracle/`): thousands of random RV32IMF programs per run must give
//! the same registers, fflags/frm and memory on the wavejit device.

#[path = "../../tests/rv32/oracle/mod.rs"]
mod oracle;

use oracle::program::{generate, li};
use oracle::rng::Rng;
use wavejit_frontend::rv32::XReg;
use wavejit_runtime::mmio::EngineChoice;

#[test]
fn random_programs_match_qemu() {
    let compared = oracle::run_from_env();
    if oracle::qemu_path().is_some() {
        assert!(compared > 0, "no program compared");
    }
}

/// Negative control: the same programs with frm forced to RTZ on the wavejit side
/// must be reported as different, the unchanged ones as equal.
#[test]
fn oracle_reports_a_changed_rounding_mode() {
    let Some(qemu) = oracle::qemu_path() else {
        assert!(std::env::var_os("CI").is_none(), "qemu missing under CI");
        eprintln!("SKIP: qemu-riscv32-static not found");
        return;
    };
    let mut rng = Rng::new(0xC0DE);
    let programs: Vec<_> = (0..16).map(|i| generate(&mut rng, i, 24)).collect();
    let batch = oracle::image::build(&programs, 99);
    let q = oracle::run_qemu(&qemu, &batch, programs.len()).expect("qemu runs");
    let mut dev = oracle::device(EngineChoice::Jit);
    let same = oracle::run_wavejit(&mut dev, &batch, &programs);
    let equal = q
        .iter()
        .zip(&same)
        .filter(|(a, b)| oracle::diff(a, b).is_none());
    assert_eq!(equal.count(), programs.len());
    let mutated: Vec<_> = programs
        .iter()
        .map(|p| {
            let mut m = p.clone();
            // The prologue starts with `li x5, fcsr`: frm = RTZ, flags clear.
            m.prologue.splice(0..2, li(XReg(5), 1 << 5));
            m
        })
        .collect();
    let mbatch = oracle::image::build(&mutated, 99);
    let w = oracle::run_wavejit(&mut dev, &mbatch, &mutated);
    let differing = q
        .iter()
        .zip(&w)
        .filter(|(a, b)| oracle::diff(a, b).is_some());
    assert!(differing.count() > 0, "the oracle must notice frm = RTZ");
}
