//! The JIT side of the lifter fuzz targets (kept apart from `fuzz_support`,
//! which crates without the JIT include too).

use super::fuzz_support::Rng;

/// A one-thread JIT that compiles every dispatch (never hands a small one to
/// the interpreter), in a random core, tier and batch width.
pub fn jit(rng: &mut Rng) -> wavejit_jit::Jit {
    use wavejit_jit::Core::{Gang, Lanes, Tiered};
    wavejit_jit::Jit::new(wavejit_jit::JitConfig {
        core: rng.pick(&[Gang, Tiered, Lanes]),
        batch_lanes: rng.pick(&[1, 16, 256]),
        threads: 1,
        interp_below: 0,
        parallel_min_work: 0,
        optimize_after_lanes: rng.pick(&[0, u64::MAX]),
        ..wavejit_jit::JitConfig::default()
    })
}

/// `Err` when `jit` ran a dispatch on the interpreter instead of its code.
pub fn compiled(jit: &wavejit_jit::Jit) -> Result<(), String> {
    match jit.interpreter_fallbacks() {
        0 => Ok(()),
        n => Err(format!("the JIT fell back to the interpreter {n} time(s)")),
    }
}
