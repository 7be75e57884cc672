//! Fuzz target of the AGX decoder and lifter: programs of random instructions
//! (real compute instructions from applegpu's hardware tests and Mesa's
//! vectors, some with a bit flipped, and memory/control templates) end in
//! `stop`. Decoding never panics; lifting gives a kernel or a lift error that
//! names a pc (never an IR-verifier message); a lifted kernel passes the
//! verifier and runs on the interpreter and the JIT under a step limit with
//! the same fault, or the same memory when neither faults.

mod agx_lift_support;
mod fuzz_jit;
mod fuzz_support;

use std::collections::BTreeSet;

use agx_lift_support::Mem;
use fuzz_jit::{compiled, jit};
use fuzz_support::{Rng, corpus, long_cases};
use wavejit_frontend::agx::lift::{AgxDispatch, AgxGrid, LiftConfig, lift};
use wavejit_frontend::agx::{assemble, assemble_line, decode, disasm_program};
use wavejit_ir::Engine;
use wavejit_ir::interp::Interpreter;

const HWTEST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/agx_hwtest_cases.txt"
);
const MESA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/data/agx_mesa_cases.tsv"
);

/// Memory, exec-mask and control instructions the hardware tests lack;
/// `{r}` is a random register, `{pair}` two consecutive ones, `{n}` a small
/// number.
const TEMPLATES: &[&str] = &[
    "load r{r}, du0, r{r}, i32, x, a",
    "load {pair}, du2, {n}, i32, xy, a",
    "store r{r}, du0, r{r}, i32, x, a",
    "store r{r}, du2, {n}, i32, x, a",
    "lstore r{r}, r{r}l, {n}, i32, x",
    "lload r{r}, r{r}l, {n}, i32, x",
    "latomic r{r}, r{r}, r{r}l, add",
    "atomic r{r}, r{r}, du0, r{r}, add, coherent1, a",
    "mov r{r}, thread_in_grid_x",
    "mov r{r}, thread_index_in_simdgroup",
    "ldimm r{r}, {n}",
    "iadd r{r}, r{r}, {n}",
    "if r{r}, {n}, 1, ult",
    "else r{r}, {n}, 1, ugt",
    "while r{r}, {n}, 1, ult",
    "pop_exec 1",
    "jmp_none {n}",
    "jmp_any -{n}",
    "ret r{r}",
    "barrier",
    "wait a",
    "trap",
];

fn hex_bytes(h: &str) -> Vec<u8> {
    (0..h.len() / 2)
        .filter_map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

/// Decoded instructions of the hardware tests and Mesa's vectors (each once).
fn pool() -> Vec<Vec<u8>> {
    let mut out = BTreeSet::new();
    let hw = std::fs::read_to_string(HWTEST).unwrap_or_else(|e| panic!("{HWTEST}: {e}"));
    let mut programs: Vec<Vec<u8>> = hw
        .lines()
        .filter_map(|l| l.strip_prefix("case "))
        .filter_map(|l| l.split_whitespace().nth(1))
        .map(hex_bytes)
        .collect();
    match std::fs::read_to_string(MESA) {
        Ok(t) => programs.extend(
            t.lines()
                .skip(1)
                .filter_map(|l| l.split('\t').next())
                .map(hex_bytes),
        ),
        Err(_) => assert!(std::env::var_os("CI").is_none(), "CI: missing {MESA}"),
    }
    for p in programs {
        let mut at = 0;
        while let Ok((_, len)) = decode(&p[at..], at as u64) {
            out.insert(p[at..at + len].to_vec());
            at += len;
            if at >= p.len() {
                break;
            }
        }
    }
    out.into_iter().collect()
}

fn template(rng: &mut Rng) -> Vec<u8> {
    let t = rng.pick(TEMPLATES);
    let line = t
        .replacen("{r}", &rng.below(8).to_string(), 1)
        .replacen("{r}", &rng.below(8).to_string(), 1)
        .replacen("{r}", &rng.below(8).to_string(), 1)
        .replace("{pair}", &{
            let k = rng.below(7);
            format!("r{k}_r{}", k + 1)
        })
        .replace("{n}", &(rng.below(6) * 2).to_string());
    assemble_line(&line).unwrap_or_else(|e| panic!("template `{line}`: {e}"))
}

fn program(rng: &mut Rng, pool: &[Vec<u8>]) -> Vec<u8> {
    let mut code = Vec::new();
    for _ in 0..=rng.below(10) {
        let piece = if rng.chance(30) {
            template(rng)
        } else {
            let mut p = pool[rng.below(pool.len() as u64) as usize].clone();
            if rng.chance(15) {
                let bit = rng.below(8 * p.len() as u64);
                p[(bit / 8) as usize] ^= 1 << (bit % 8);
            }
            p
        };
        code.extend(piece);
    }
    let stop = assemble_line("stop").expect("stop assembles");
    code.extend(stop);
    code
}

/// How a program that passed went.
#[derive(PartialEq)]
enum Outcome {
    Refused,
    Faulted,
    Ran,
}

/// Lifts `code` and runs it on both engines; `Err` says what went wrong.
fn check(rng: &mut Rng, code: &[u8]) -> Result<Outcome, String> {
    let tg = rng.pick(&[1u32, 8, 32, 64]);
    let threads = rng.pick(&[1u32, 32, 40, 64]);
    let grid = AgxGrid {
        threads: [threads, 1, 1],
        threadgroup_size: [tg, 1, 1],
    };
    let cfg = LiftConfig {
        gpr_count: rng.pick(&[128, 128, 8]),
        threadgroup_memory: rng.pick(&[0, 0x100, 0x1000]),
        grid: rng.chance(50).then_some(grid),
        ..LiftConfig::default()
    };
    let kernel = match lift(code, &cfg) {
        Ok(k) => k,
        Err(e) => {
            let text = e.to_string();
            let names_pc = text.contains(" at 0x")
                || text.contains("at pc 0x")
                || text.contains("bad configuration");
            return if text.starts_with("agx") && names_pc && !text.contains("block") {
                Ok(Outcome::Refused)
            } else {
                Err(format!("lift error without a guest place: {text}"))
            };
        }
    };
    if let Err(e) = wavejit_ir::verify::verify(&kernel) {
        return Err(format!("lifted kernel fails the verifier: {e:?}"));
    }
    let mut first: Option<(Option<wavejit_ir::Fault>, _)> = None;
    let jit = jit(rng);
    let engines: [&dyn Engine; 2] = [&Interpreter, &jit];
    for engine in engines {
        let input: Vec<u8> = (0..1024u32).flat_map(|i| (i * 7).to_le_bytes()).collect();
        let mem = Mem::new(&[input.clone(), input]);
        let d = AgxDispatch::with_buffers(grid.threads, grid.threadgroup_size, &mem.addrs())
            .map_err(|e| e.to_string())?;
        let mut d = d.dispatch().map_err(|e| e.to_string())?;
        d.step_limit = 2_000;
        let r = engine.run(&kernel, &d, &mem);
        let out = (
            r.clone().err(),
            r.is_ok().then(|| (mem.bytes(0), mem.bytes(1))),
        );
        match &first {
            None => first = Some(out),
            Some(want) if *want != out => {
                return Err(format!(
                    "{} differs from the interpreter: {:?} vs {:?}",
                    engine.name(),
                    out.0,
                    want.0
                ));
            }
            Some(_) => {}
        }
    }
    compiled(&jit)?;
    Ok(match first {
        Some((Some(_), _)) => Outcome::Faulted,
        _ => Outcome::Ran,
    })
}

fn run(seed: u64, cases: usize) {
    let pool = pool();
    let mut rng = Rng::new(seed);
    let mut bad = Vec::new();
    let mut counts = [0usize; 3];
    let seeds = corpus("agx_lift");
    for (name, text) in &seeds {
        let code =
            assemble(&String::from_utf8_lossy(text)).unwrap_or_else(|e| panic!("{name}: {e}"));
        if let Err(e) = check(&mut rng, &code) {
            bad.push(format!("{name}: {e}"));
        }
    }
    for case in 0..cases {
        let code = program(&mut rng, &pool);
        match check(&mut rng, &code) {
            Ok(o) => counts[o as usize] += 1,
            Err(e) => {
                let listing = disasm_program(&code).map(|l| l.join("; "));
                bad.push(format!("case {case} {listing:?}: {e}"));
            }
        }
    }
    fuzz_support::finish_lift_target(cases, counts, &bad);
}

#[test]
fn random_agx_programs_lift_cleanly_and_run_alike() {
    run(0xa6_0001, 1_500);
}

/// `WAVEJIT_LONG_CASES` programs (default 50,000) from another seed.
#[test]
#[ignore]
fn random_agx_programs_lift_cleanly_and_run_alike_long() {
    run(0xa6_0002, long_cases(50_000));
}
