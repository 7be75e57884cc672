//! Differential testing: random valid kernels on the interpreter and on the JIT at
//! several batch widths and thread counts must agree bit for bit (memory and
//! faults). Failures found by proptest are kept below as named regression tests.

mod kernelgen;
mod support;

use proptest::prelude::*;

fn check(choices: &[u32]) {
    let c = kernelgen::case(choices);
    if let Err(e) = wavejit_ir::verify::verify(&c.kernel) {
        panic!("generator made an invalid kernel: {e}");
    }
    support::compare(&c.kernel, &c.dispatch, &c.rw, &c.ro);
}

fn cases() -> u32 {
    if cfg!(debug_assertions) { 150 } else { 2000 }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn jit_matches_interpreter(choices in proptest::collection::vec(any::<u32>(), 0..600)) {
        check(&choices);
    }
}

/// Cases of the long run: `WAVEJIT_LONG_CASES` or 50,000.
fn long_cases() -> u32 {
    std::env::var("WAVEJIT_LONG_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50_000)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: long_cases(), failure_persistence: None, ..ProptestConfig::default() })]

    /// The long run: `cargo test --release -p wavejit-jit --test differential -- --ignored`.
    #[test]
    #[ignore]
    fn jit_matches_interpreter_long(choices in proptest::collection::vec(any::<u32>(), 0..1500)) {
        check(&choices);
    }
}

/// What the generator produces, so that a weak generator shows up as a failure:
/// a fair share of cases must fault, and most must finish with memory to compare.
#[test]
fn generator_covers_faults_and_clean_runs() {
    use wavejit_ir::interp::Interpreter;
    let mut faults = 0;
    let mut insts = 0;
    let mut per_lane_loops = 0;
    let jit = wavejit_jit::Jit::default();
    let n = 200u32;
    for seed in 0..n {
        let choices: Vec<u32> = (0..400u32)
            .map(|i| {
                (seed.wrapping_mul(2_654_435_761) ^ i.wrapping_mul(40_503)).rotate_left(i % 31)
            })
            .collect();
        let c = kernelgen::case(&choices);
        insts += c.kernel.insts.len();
        if let Ok(compiled) = jit.compile(&c.kernel, 64) {
            per_lane_loops += usize::from(compiled.per_lane_loops() > 0);
        }
        let out = support::run_on(&Interpreter, &c.kernel, &c.dispatch, &c.rw, &c.ro, false);
        faults += usize::from(out.fault.is_some());
    }
    eprintln!(
        "{faults}/{n} faulted, {} instructions per kernel, {per_lane_loops} with loops run per lane",
        insts / n as usize
    );
    assert!(
        per_lane_loops > 10,
        "{per_lane_loops} of {n} cases loop per lane"
    );
    assert!(faults > 10 && faults < 110, "{faults} of {n} cases fault");
    assert!(insts / n as usize > 50);
}
