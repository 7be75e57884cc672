//! Fuzz target of the ir3 lifter: programs of random instructions (mesa's
//! vectors, words inside a random encoding's fixed bits, and ALU, memory and
//! branch templates on a few registers) after a prologue that points r1.xy
//! at a buffer, ending in `end`. Lifting gives a kernel or a lift error that
//! names a pc (never an IR-verifier message); a lifted kernel passes the
//! verifier and runs on the interpreter and the JIT under a step limit with
//! the same fault, or the same memory when neither faults.

mod fuzz_jit;
mod fuzz_support;
mod ir3_buffer;

use fuzz_jit::{compiled, jit};
use fuzz_support::{Rng, corpus, long_cases};
use ir3_buffer::{BUF, Buffer};
use wavejit_frontend::ir3;
use wavejit_frontend::ir3::lift::{LiftConfig, lift};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Dispatch, Engine, Fault};

const VECTORS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/ir3_disasm_vectors.tsv"
);

const PROLOGUE: &str = "shl.b r0.y, r0.x, 2\nadd.u r1.x, c0.x, r0.y\nmov.u32u32 r1.y, c0.y";

/// `{r}` a register r2.x..r3.w, `{n}` a small number.
const TEMPLATES: &[&str] = &[
    "add.f {r}, {r}, {r}",
    "mul.f {r}, {r}, c1.x",
    "add.u {r}, {r}, {r}",
    "add.s {r}, {r}, c1.y",
    "and.b {r}, {r}, {r}",
    "shl.b {r}, {r}, {r}",
    "mov.u32u32 {r}, c1.z",
    "mov.f32f32 {r}, {r}",
    "cov.f32s32 {r}, {r}",
    "cov.u32f32 {r}, {r}",
    "mad.f32 {r}, {r}, {r}, {r}",
    "cmps.u.lt p0.x, {r}, {r}",
    "cmps.f.ne p0.x, {r}, c1.x",
    "br p0.x, #{n}",
    "br !p0.x, #{n}",
    "jump #{n}",
    "ldg.u32 {r}, g[r1.x], 1",
    "stg.u32 g[r1.x], {r}, 1",
    "stg.u32 g[r1.x+{n}], {r}, 1",
    "ldl.u32 {r}, l[{r}], 1",
    "stl.u32 l[{r}], {r}, 1",
    "getone #{n}",
    "shps #{n}",
    "(ss)nop",
    "(sy)nop",
    "bar",
];

const REGS: &[&str] = &[
    "r2.x", "r2.y", "r2.z", "r2.w", "r3.x", "r3.y", "r0.x", "r0.y",
];

fn vectors() -> Vec<u64> {
    let Ok(text) = std::fs::read_to_string(VECTORS) else {
        assert!(std::env::var_os("CI").is_none(), "CI: missing {VECTORS}");
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter(|l| l.starts_with("630\t"))
        .filter_map(|l| l.split('\t').nth(1))
        .filter_map(|h| u64::from_str_radix(h.trim_start_matches("0x"), 16).ok())
        .collect()
}

/// Assembled instances of every template (the assembler is too slow to run
/// per case); a template that never assembles is a bug of this test.
fn templates(rng: &mut Rng) -> Vec<u64> {
    let mut out = Vec::new();
    for t in TEMPLATES {
        let before = out.len();
        for _ in 0..12 {
            let mut line = t.to_string();
            while line.contains("{r}") {
                line = line.replacen("{r}", rng.pick(REGS), 1);
            }
            let line = line.replace("{n}", &(rng.below(3) + 1).to_string());
            out.extend(ir3::assemble_line(&line).ok());
        }
        assert!(out.len() > before, "template `{t}` does not assemble");
    }
    out
}

fn program(rng: &mut Rng, vectors: &[u64], encs: &[ir3::Encoding], pool: &[u64]) -> Vec<u64> {
    let mut words = ir3::assemble(PROLOGUE).expect("prologue assembles");
    for _ in 0..=rng.below(10) {
        let w = match rng.below(10) {
            0 if !vectors.is_empty() => rng.pick(vectors),
            1 => {
                let e = &encs[rng.below(encs.len() as u64) as usize];
                e.match_bits | (rng.next() & !e.mask)
            }
            _ => rng.pick(pool),
        };
        words.push(w);
    }
    words.extend(ir3::assemble("end").expect("end assembles"));
    words
}

/// How a program that passed went.
#[derive(PartialEq)]
enum Outcome {
    Refused,
    Faulted,
    Ran,
}

fn uniforms(rng: &mut Rng) -> Vec<u8> {
    let mut c = vec![0u32; 1024];
    c[0] = BUF as u32;
    c[1] = (BUF >> 32) as u32;
    for v in &mut c[4..8] {
        *v = rng.pick(&[0, 1, 3, 0x3f80_0000, 0x7fc0_0000, 0xffff_ffff, 100]);
    }
    c.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn check(rng: &mut Rng, words: &[u64]) -> Result<Outcome, String> {
    let lanes = rng.pick(&[1u32, 32, 64, 100]);
    let groups = rng.pick(&[1, 2]);
    let shape = wavejit_ir::DispatchShape {
        num_workgroups: [groups, 1, 1],
        workgroup_size: [lanes, 1, 1],
    };
    let cfg = LiftConfig {
        merged_regs: rng.chance(80),
        private_size: rng.pick(&[0, 64]),
        shared_size: rng.pick(&[0, 1024, 32 * 1024]),
        // Half the programs lifted for the grid they run on (then also
        // compared with their lift for any grid).
        shape: rng.chance(50).then_some(shape),
        ..LiftConfig::default()
    };
    let kernel = match lift(words, &cfg) {
        Ok(k) => k,
        Err(e) => {
            let text = e.to_string();
            return if text.contains("pc ") && !text.contains("block") {
                Ok(Outcome::Refused)
            } else {
                Err(format!("lift error without a guest pc: {text}"))
            };
        }
    };
    if let Err(e) = wavejit_ir::verify::verify(&kernel) {
        return Err(format!("lifted kernel fails the verifier: {e}"));
    }
    let mut d = Dispatch::new([groups, 1, 1], [lanes, 1, 1]);
    d.wave_size = rng.pick(&[64, 128]);
    d.uniforms = uniforms(rng);
    d.step_limit = 2_000;
    let jit = jit(rng);
    let any_grid = match cfg.shape {
        Some(_) => Some(
            lift(
                words,
                &LiftConfig {
                    shape: None,
                    ..cfg.clone()
                },
            )
            .map_err(|e| format!("lifts for its grid but not for any: {e}"))?,
        ),
        None => None,
    };
    let runs: Vec<(&dyn Engine, &wavejit_ir::Kernel)> =
        std::iter::once((&Interpreter as &dyn Engine, &kernel))
            .chain(std::iter::once((&jit as &dyn Engine, &kernel)))
            .chain(any_grid.iter().map(|k| (&Interpreter as &dyn Engine, k)))
            .collect();
    let mut outs: Vec<(Option<Fault>, Vec<u32>)> = Vec::new();
    for (engine, k) in runs {
        let mem = Buffer::new(
            &(0..512u32)
                .map(|i| i.wrapping_mul(0x0102_0305))
                .collect::<Vec<_>>(),
        );
        let r = engine.run(k, &d, &mem);
        outs.push((r.err(), mem.words()));
    }
    compiled(&jit)?;
    if let Some(g) = outs.get(2) {
        // The same run whatever the lift knew of the grid: the same fault
        // (guest pc, lane, kind) or the same memory. The watchdog counts IR
        // blocks, fewer when the grid decided a branch, so a runaway
        // program may stop at another step.
        let place = |f: &Option<Fault>| f.as_ref().map(|f| (f.kind.clone(), f.lane, f.guest_pc));
        let watchdog = |f: &Option<Fault>| matches!(f, Some(f) if matches!(f.kind, wavejit_ir::FaultKind::Watchdog { .. }));
        let same = if watchdog(&g.0) || watchdog(&outs[0].0) {
            true
        } else {
            place(&g.0) == place(&outs[0].0) && (g.0.is_some() || g.1 == outs[0].1)
        };
        if !same {
            return Err(format!(
                "the lift for the grid runs differently: {:?} vs {:?}",
                outs[0].0, g.0
            ));
        }
    }
    match (&outs[0], &outs[1]) {
        ((fi, _), (fj, _)) if fi != fj => Err(format!("faults differ: interp {fi:?}, jit {fj:?}")),
        ((None, mi), (None, mj)) if mi != mj => Err("memory differs".into()),
        ((Some(_), _), _) => Ok(Outcome::Faulted),
        _ => Ok(Outcome::Ran),
    }
}

fn run(seed: u64, cases: usize) {
    let vectors = vectors();
    let encs = ir3::encodings();
    let mut rng = Rng::new(seed);
    let pool = templates(&mut rng);
    let mut bad = Vec::new();
    for (name, text) in corpus("ir3_lift") {
        let words = ir3::assemble(&String::from_utf8_lossy(&text))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(e) = check(&mut rng, &words) {
            bad.push(format!("{name}: {e}"));
        }
    }
    let mut counts = [0usize; 3];
    for case in 0..cases {
        let words = program(&mut rng, &vectors, &encs, &pool);
        match check(&mut rng, &words) {
            Ok(o) => counts[o as usize] += 1,
            Err(e) => {
                let listing: Vec<String> = words
                    .iter()
                    .map(|&w| ir3::disasm(w).unwrap_or_else(|_| format!("{w:#018x}")))
                    .collect();
                bad.push(format!("case {case} [{}]: {e}", listing.join("; ")));
            }
        }
    }
    fuzz_support::finish_lift_target(cases, counts, &bad);
}

#[test]
fn random_ir3_programs_lift_cleanly_and_run_alike() {
    run(0x1f3a_1001, 600);
}

/// `WAVEJIT_LONG_CASES` programs (default 50,000) from another seed.
#[test]
#[ignore]
fn random_ir3_programs_lift_cleanly_and_run_alike_long() {
    run(0x1f3a_1002, long_cases(50_000));
}
