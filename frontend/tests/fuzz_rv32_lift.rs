//! Fuzz target of the RV32 decoder and lifter: programs of random words (mostly
//! of the major opcodes the device knows, with short branch and jump offsets
//! so that control flow stays in or near the program) at address 0. Decoding
//! never panics; lifting gives a kernel or an error; a lifted kernel passes the
//! verifier and runs on the interpreter and the JIT under a cycle limit with
//! the same fault, or the same memory when neither faults; every trap has a
//! site (cause and pc). Some lifts have resumable exits (their records are
//! compared too), some are resume kernels entered from seeded records.

mod fuzz_jit;
mod fuzz_support;
mod rv32_lift_common;

use fuzz_jit::{compiled, jit};
use fuzz_support::{Rng, corpus, long_cases};
use rv32_lift_common::{CTX_BASE, TestMem};
use wavejit_frontend::rv32::lift::{self, DispatchShape, LiftConfig, ResumeConfig, STATE_BYTES};
use wavejit_frontend::rv32::{decode, disasm};
use wavejit_ir::interp::Interpreter;
use wavejit_ir::{Dispatch, Engine, FaultKind};

/// Resume records of the lifts with resumable exits (in the test VRAM).
const STATE_AREA: u64 = 0x8_0000;

/// Major opcodes: loads, float loads, fence, op-imm, auipc, stores, float
/// stores, op, lui, fused multiply-adds, float ops, branches, jalr, jal,
/// system.
const OPCODES: &[u32] = &[
    0x03, 0x07, 0x0f, 0x13, 0x13, 0x13, 0x17, 0x23, 0x27, 0x33, 0x33, 0x37, 0x43, 0x53, 0x53, 0x63,
    0x63, 0x67, 0x6f, 0x73,
];

/// A random word; one in 30 is anything, the rest have a known major opcode
/// with fields mostly in range, so that a fair share of programs run to the
/// end.
fn word(rng: &mut Rng) -> u32 {
    if rng.chance(3) {
        return rng.next() as u32;
    }
    let op = rng.pick(OPCODES);
    let mut w = (rng.next() as u32 & !0x7f) | op;
    // Registers x0..x15 mostly, so values flow between instructions.
    if rng.chance(80) {
        w &= !(0x10 << 7 | 0x10 << 15 | 0x10 << 20);
    }
    let clean = rng.chance(85);
    match op {
        // Branch offsets -16..+28 bytes: imm[4:1] random, the rest sign bits.
        0x63 => {
            let back = rng.chance(30);
            let imm4_1 = (rng.below(8) as u32) << 8;
            let f3 = if clean {
                rng.pick(&[0u32, 1, 4, 5, 6, 7])
            } else {
                w >> 12 & 7
            };
            (w & 0x01ff_807f) | f3 << 12 | imm4_1 | if back { 0xfe00_0080 } else { 0 }
        }
        // jal offsets -16..+28 bytes.
        0x6f => {
            let back = rng.chance(30);
            let imm10_1 = (rng.below(8) as u32) << 22;
            (w & 0xfff)
                | imm10_1
                | if back {
                    0xfff0_0000 & !(0x3ff << 21) | 0x7e00_0000
                } else {
                    0
                }
        }
        // Memory: mostly an aligned offset from x0 into the data at 0x1000.
        0x03 | 0x23 | 0x07 | 0x27 if clean => {
            let f3 = match op {
                0x03 => rng.pick(&[0, 1, 2, 4, 5]),
                0x23 => rng.pick(&[0, 1, 2]),
                _ => 2,
            };
            let off = 0x400 + 4 * rng.below(64) as u32;
            let w = (w & !(0x1f << 15 | 7 << 12)) | f3 << 12;
            if op == 0x23 || op == 0x27 {
                (w & 0x01ff_f07f) | (off >> 5) << 25 | (off & 0x1f) << 7
            } else {
                (w & 0x000f_ffff) | off << 20
            }
        }
        // Integer ops with the funct7 of base, sub/sra or M.
        0x33 if clean => (w & 0x01ff_ffff) | rng.pick(&[0u32, 0, 0x20, 0x01]) << 25,
        // Shifts with a valid funct7.
        0x13 if clean && (w >> 12 & 3) == 1 => {
            (w & 0x01ff_ffff)
                | if w >> 12 & 7 == 5 {
                    rng.pick(&[0u32, 0x20]) << 25
                } else {
                    0
                }
        }
        // System: mostly csrr of fflags/frm/fcsr.
        0x73 if clean => (w & 0x000f_ffff & !(7 << 12)) | 2 << 12 | rng.pick(&[1u32, 2, 3]) << 20,
        0x67 => w & 0x01ff_ffff & !(7 << 12),
        0x0f if clean => 0x0ff0_000f,
        // Float ops of F with rne or dyn rounding, fused ones in single precision.
        0x53 if clean => {
            let f7 = rng.pick(&[
                0x00u32, 0x04, 0x08, 0x0c, 0x10, 0x14, 0x50, 0x60, 0x68, 0x70, 0x78,
            ]);
            let w = (w & 0x01ff_ffff) | f7 << 25;
            match f7 {
                0x00..=0x0c => (w & !(7 << 12)) | rng.pick(&[0u32, 7]) << 12,
                0x10 | 0x50 => (w & !(7 << 12)) | (rng.below(3) as u32) << 12,
                0x14 => (w & !(7 << 12)) | (rng.below(2) as u32) << 12,
                0x60 | 0x68 => (w & !(0x1f << 20 | 7 << 12)) | (rng.below(2) as u32) << 20,
                _ => w & !(0x1f << 20 | 7 << 12),
            }
        }
        0x43 if clean => (w & !(3 << 25 | 7 << 12)) | rng.pick(&[0u32, 7]) << 12,
        _ => w,
    }
}

fn program(rng: &mut Rng) -> Vec<u32> {
    let mut p: Vec<u32> = (0..=rng.below(12)).map(|_| word(rng)).collect();
    // Most programs end with `ebreak` (a clean end), some run off the end.
    if rng.chance(80) {
        p.push(0x0010_0073);
    }
    p
}

/// Words at addresses; the first one's address is the entry.
type Image = Vec<(u32, u32)>;

fn at_zero(code: &[u32]) -> Image {
    code.iter()
        .enumerate()
        .map(|(i, &w)| (4 * i as u32, w))
        .collect()
}

/// A seed file: `ADDRESS WORD` per line, hexadecimal; `#` starts a comment.
fn parse_seed(text: &[u8]) -> Image {
    String::from_utf8_lossy(text)
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let n: Vec<u32> = l
                .split_whitespace()
                .map(|h| u32::from_str_radix(h.trim_start_matches("0x"), 16).expect("hex"))
                .collect();
            assert_eq!(n.len(), 2, "seed line `{l}`: ADDRESS WORD");
            (n[0], n[1])
        })
        .collect()
}

/// Lifts `image` from its first address and runs it on both engines;
/// `Ok(Some(faulted))` when it reached the engines, `Ok(None)` when the
/// lifter refused it.
fn check(rng: &mut Rng, image: &Image) -> Result<Option<bool>, String> {
    for &(pc, w) in image {
        // The decoder and the disassembler on every word: no panic.
        let _ = (decode(w, pc), disasm(w, pc));
    }
    let entry = image.first().map_or(0, |&(pc, _)| pc);
    let block = rng.pick(&[1u32, 4, 32]);
    let grid = rng.pick(&[1u32, 2]);
    let lanes = (grid * block) as usize;
    // Resumable exits; a resume kernel starts each lane from a seeded record
    // (status 1, a pc of the program, random registers). Lane i of every
    // workgroup gets the same record: workgroups have no order relative to
    // each other, so their stores must not race with different values.
    let resume = rng.chance(30).then(|| ResumeConfig {
        base: STATE_AREA,
        entry: rng.chance(50),
    });
    let mut records: Vec<u32> = Vec::new();
    let mut roots = Vec::new();
    if resume.is_some_and(|r| r.entry) {
        for _ in 0..block {
            let mut rec: Vec<u32> = (0..STATE_BYTES / 4).map(|_| rng.next() as u32).collect();
            let pc = image
                .get(rng.below(image.len().max(1) as u64) as usize)
                .map_or(entry, |&(pc, _)| pc);
            // fflags 5 bits, frm 0..7, a small count, pc, status 1.
            rec[64] &= 0x1f;
            rec[65] &= 7;
            rec[66] &= 0xff;
            rec[67] = pc;
            rec[68] = 1;
            roots.push(pc);
            records.extend(rec);
        }
        records = records.repeat(grid as usize);
    }
    let opts = LiftConfig {
        resume,
        extra_entries: roots,
        cycle_limit: Some(rng.pick(&[50, 500])),
        context_base: rng.chance(30).then_some(CTX_BASE),
        shape: rng.chance(50).then_some(DispatchShape {
            num_workgroups: [grid, 1, 1],
            workgroup_size: [block, 1, 1],
        }),
        ..LiftConfig::default()
    };
    let mut results = Vec::new();
    let jit = jit(rng);
    let engines: [&dyn Engine; 2] = [&Interpreter, &jit];
    for engine in engines {
        let mut mem = TestMem::new(lanes);
        for &(pc, w) in image {
            mem.write_words(pc as usize, &[w]);
        }
        mem.write_words(
            0x1000,
            &(0..256).map(|i| i * 0x0101_0101).collect::<Vec<u32>>(),
        );
        mem.write_words(STATE_AREA as usize, &records);
        let lifted = match lift::lift(&|pc| mem.fetch(pc), entry, &opts) {
            Ok(l) => l,
            Err(e) => {
                return if e.to_string().is_empty() {
                    Err("empty lift error".into())
                } else {
                    Ok(None)
                };
            }
        };
        wavejit_ir::verify::verify(&lifted.kernel)
            .map_err(|e| format!("lifted kernel fails the verifier: {e}"))?;
        let mut d = Dispatch::new([grid, 1, 1], [block, 1, 1]);
        d.wave_size = 32;
        d.step_limit = lifted.step_limit();
        let r = engine.run(&lifted.kernel, &d, &mem);
        if let Err(f) = &r
            && let FaultKind::Trap { code } = f.kind
            && lifted.trap(code).is_none()
        {
            return Err(format!("{}: trap {code} has no site: {f}", engine.name()));
        }
        let mut words = mem.words(0, 2048);
        words.extend(mem.words(STATE_AREA as usize, lanes * STATE_BYTES as usize / 4));
        results.push((r.err(), words));
    }
    compiled(&jit)?;
    match (&results[0], &results[1]) {
        ((fi, _), (fj, _)) if fi != fj => Err(format!("faults differ: interp {fi:?}, jit {fj:?}")),
        ((None, mi), (None, mj)) if mi != mj => {
            let at = mi.iter().zip(mj).position(|(a, b)| a != b).unwrap_or(0);
            Err(format!(
                "memory differs at word {at}: interp {:#x}, jit {:#x} ({opts:?}, grid {grid}, block {block})",
                mi[at], mj[at]
            ))
        }
        ((f, _), _) => Ok(Some(f.is_some())),
    }
}

fn listing(code: &[u32]) -> String {
    code.iter()
        .enumerate()
        .map(|(i, &w)| disasm(w, 4 * i as u32).unwrap_or_else(|_| format!("{w:#010x}")))
        .collect::<Vec<_>>()
        .join("; ")
}

fn run(seed: u64, cases: usize) {
    let mut rng = Rng::new(seed);
    let mut bad = Vec::new();
    for (name, bytes) in corpus("rv32_lift") {
        if let Err(e) = check(&mut rng, &parse_seed(&bytes)) {
            bad.push(format!("{name}: {e}"));
        }
    }
    let (mut ran, mut faulted) = (0, 0);
    for case in 0..cases {
        let code = program(&mut rng);
        match check(&mut rng, &at_zero(&code)) {
            Ok(Some(f)) => {
                ran += 1;
                faulted += usize::from(f);
            }
            Ok(None) => {}
            Err(e) => bad.push(format!("case {case} [{}]: {e}", listing(&code))),
        }
    }
    eprintln!("{cases} programs, {ran} ran on the engines, {faulted} of them faulted");
    assert!(
        bad.is_empty(),
        "{} programs fail:\n{}",
        bad.len(),
        bad[..bad.len().min(20)].join("\n")
    );
    assert!(ran > cases / 2, "only {ran} of {cases} programs lifted");
    assert!(
        faulted > ran / 10 && faulted < ran * 9 / 10,
        "{faulted} of {ran} faulted"
    );
    fuzz_support::assert_peak_rss_bounded();
}

#[test]
fn random_rv32_programs_lift_cleanly_and_run_alike() {
    run(0x5_0001, 1_000);
}

/// `WAVEJIT_LONG_CASES` programs (default 50,000) from another seed.
#[test]
#[ignore]
fn random_rv32_programs_lift_cleanly_and_run_alike_long() {
    run(0x5_0002, long_cases(50_000));
}
