//! The lockstep lowering (`gang::lower::lockstep`): random barrier kernels of
//! the shapes it takes — tree levels in uniform loops with a barrier, own
//! shared and global slots, divergent if/else regions with nested branches,
//! lanes that exit early, uniform loops without barriers, scalar uniform
//! values feeding lane arithmetic and float rules, loads that fault for some
//! lanes, small step limits — run on the interpreter and on the JIT in every
//! configuration of `support::jit_configs`, bit for bit (memory and fault).
//! Most of them must compile in lockstep (a generator that drifts out of
//! its shapes fails), and the bench's tree reduction must.

mod support;

use support::{BUF, RO, compare, parse};
use wavejit_ir::Dispatch;
use wavejit_jit::{Jit, JitConfig, Tier};

/// SplitMix64: the cases are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Kernel text being generated.
struct Gen {
    t: String,
    next: usize,
    block: usize,
    /// Lanes per workgroup.
    wg: u64,
}

/// The lane's running values: an integer and a float.
#[derive(Copy, Clone)]
struct Acc {
    a: usize,
    f: usize,
}

/// Words of the lane's own global slot.
const SLOT_WORDS: u64 = 8;
/// Where single-lane stores go (BUF + this + 4 * workgroup).
const SINGLE: u64 = 0x8000;

impl Gen {
    fn v(&mut self, rhs: impl AsRef<str>) -> usize {
        let v = self.next;
        self.next += 1;
        self.t.push_str(&format!("  v{v} = {}\n", rhs.as_ref()));
        v
    }

    fn line(&mut self, s: impl AsRef<str>) {
        self.t.push_str(&format!("  {}\n", s.as_ref()));
    }

    fn new_block(&mut self) -> usize {
        self.block += 1;
        self.block
    }

    /// Starts block `b` with the accumulators as parameters.
    fn open(&mut self, b: usize) -> Acc {
        let a = self.next;
        let f = self.next + 1;
        self.next += 2;
        self.t
            .push_str(&format!("\nblock{b}(v{a}: i32, v{f}: f32):\n"));
        Acc { a, f }
    }

    fn c32(&mut self, x: u64) -> usize {
        self.v(format!("const.i32 {x}"))
    }

    /// Some lane arithmetic on the accumulators (integer and float, the
    /// float side reading a scalar through a bitcast).
    fn arith(&mut self, rng: &mut Rng, acc: Acc, uni: usize) -> Acc {
        let k = self.c32(rng.below(1 << 20));
        let a = match rng.below(4) {
            0 => self.v(format!("iadd.i32 v{}, v{k}", acc.a)),
            1 => self.v(format!("imul.i32 v{}, v{k}", acc.a)),
            2 => self.v(format!("xor.i32 v{}, v{uni}", acc.a)),
            _ => {
                let s = self.v(format!("shl.i32 v{}, v{k}", acc.a));
                self.v(format!("iadd.i32 v{s}, v{uni}"))
            }
        };
        let fu = self.v(format!("bitcast.i32.f32 v{uni}"));
        let f = match rng.below(3) {
            0 => self.v(format!("fadd.f32 v{}, v{fu}", acc.f)),
            1 => self.v(format!("fmul.f32 v{}, v{fu}", acc.f)),
            _ => {
                let fa = self.v(format!("bitcast.i32.f32 v{a}"));
                self.v(format!("fmin.f32 v{}, v{fa}", acc.f))
            }
        };
        Acc { a, f }
    }

    /// Stores `acc` to word `j` of the lane's own global slot.
    fn store_own(&mut self, acc: Acc, gid: usize, j: u64) {
        let w = self.v(format!("zext.i32.i64 v{gid}"));
        let s = self.v(format!("const.i64 {}", 4 * SLOT_WORDS));
        let o = self.v(format!("imul.i64 v{w}, v{s}"));
        let base = self.v(format!("const.i64 {}", BUF + 4 * j));
        let p = self.v(format!("iadd.i64 v{base}, v{o}"));
        let x = if j.is_multiple_of(2) {
            acc.a
        } else {
            self.v(format!("bitcast.f32.i32 v{}", acc.f))
        };
        self.line(format!("store.global.i32 v{p}, v{x}"));
    }
}

/// A random kernel of the shapes lockstep takes (see the module docs), its
/// dispatch and buffers.
fn random_case(rng: &mut Rng) -> (String, Dispatch, Vec<u8>, Vec<u8>) {
    let wg = [16u64, 24, 64, 96][rng.below(4) as usize];
    let groups = 1 + rng.below(3);
    let mut g = Gen {
        t: format!("kernel @ls shared {} private 0 {{\nblock0:\n", 4 * wg),
        next: 0,
        block: 0,
        wg,
    };
    let lid = g.v("local_index");
    let wid = g.v("workgroup_id.x");
    let wsz = g.v("workgroup_size.x");
    let base = g.v(format!("imul.i32 v{wid}, v{wsz}"));
    let gid = g.v(format!("iadd.i32 v{base}, v{lid}"));
    let two = g.c32(2);
    let own = g.v(format!("shl.i32 v{lid}, v{two}"));
    // A scalar uniform value: from the uniforms (past their end now and
    // then: every lane faults there) or the workgroup id.
    let one = g.c32(1);
    let uni = if rng.chance(40) {
        let off = if rng.chance(10) { 16 } else { 4 * rng.below(4) };
        let o = g.c32(off);
        g.v(format!("load.uniform.i32 v{o}"))
    } else {
        g.v(format!("iadd.i32 v{wid}, v{one}"))
    };
    // Epoch 0: global loads only (some past the buffer: faults).
    let w = g.v(format!("zext.i32.i64 v{gid}"));
    let four = g.v("const.i64 4");
    let o = g.v(format!("imul.i64 v{w}, v{four}"));
    let past = if rng.chance(15) { 0x4000 } else { 0 };
    let rob = g.v(format!("const.i64 {}", RO + past));
    let p = g.v(format!("iadd.i64 v{rob}, v{o}"));
    let x = g.v(format!("load.global.i32 v{p}"));
    let f = g.v(format!("bitcast.i32.f32 v{x}"));
    let mut acc = Acc { a: x, f };
    g.line(format!("store.shared.i32 v{own}, v{}", acc.a));
    let mut stored_global = false;
    let phases = 2 + rng.below(4);
    for _ in 0..phases {
        // Every phase starts after a barrier.
        g.line("barrier");
        match rng.below(7) {
            // A tree reduction: a uniform loop with a barrier per level
            // (plain: the sums only in shared memory, so no block takes a
            // lane's value as a parameter).
            0 => {
                let plain = rng.chance(50);
                let mut s0 = 1;
                while s0 * 2 <= wg / 2 {
                    s0 *= 2;
                }
                let s0 = g.c32(s0);
                let [h, body, j, x] = [(); 4].map(|_| g.new_block());
                let sh = g.next;
                g.next += 1;
                // The loop carries the level, and unless plain the lane's
                // values.
                let (ha, hf) = (g.next, g.next + 1);
                if plain {
                    g.line(format!("jump block{h}(v{s0})"));
                    g.t.push_str(&format!("\nblock{h}(v{sh}: i32):\n"));
                } else {
                    g.next += 2;
                    g.line(format!("jump block{h}(v{s0}, v{}, v{})", acc.a, acc.f));
                    g.t.push_str(&format!(
                        "\nblock{h}(v{sh}: i32, v{ha}: i32, v{hf}: f32):\n"
                    ));
                }
                g.line("barrier");
                let c = g.v(format!("icmp.ult.i32 v{lid}, v{sh}"));
                let carried = |a: usize, f: usize| {
                    if plain {
                        String::new()
                    } else {
                        format!("(v{a}, v{f})")
                    }
                };
                g.line(format!("br v{c}, block{body}, block{j}{}", carried(ha, hf)));
                g.t.push_str(&format!("\nblock{body}:\n"));
                let up = g.v(format!("iadd.i32 v{lid}, v{sh}"));
                let ua = g.v(format!("shl.i32 v{up}, v{two}"));
                let y = g.v(format!("load.shared.i32 v{ua}"));
                let mine = g.v(format!("load.shared.i32 v{own}"));
                let sum = g.v(format!("iadd.i32 v{mine}, v{y}"));
                g.line(format!("store.shared.i32 v{own}, v{sum}"));
                let (ja, jf) = if plain {
                    g.line(format!("jump block{j}"));
                    g.t.push_str(&format!("\nblock{j}:\n"));
                    (0, 0)
                } else {
                    let fy = g.v(format!("bitcast.i32.f32 v{y}"));
                    let fs = g.v(format!("fadd.f32 v{hf}, v{fy}"));
                    g.line(format!("jump block{j}(v{sum}, v{fs})"));
                    let ja = g.open(j);
                    (ja.a, ja.f)
                };
                let one = g.c32(1);
                let s2 = g.v(format!("ushr.i32 v{sh}, v{one}"));
                let zero = g.c32(0);
                let nz = g.v(format!("icmp.ne.i32 v{s2}, v{zero}"));
                let back = if plain {
                    format!("(v{s2})")
                } else {
                    format!("(v{s2}, v{ja}, v{jf})")
                };
                g.line(format!(
                    "br v{nz}, block{h}{back}, block{x}{}",
                    carried(ja, jf)
                ));
                if plain {
                    g.t.push_str(&format!("\nblock{x}:\n"));
                } else {
                    acc = g.open(x);
                }
            }
            // Own shared slot, lane arithmetic.
            1 => {
                let y = g.v(format!("load.shared.i32 v{own}"));
                let a = g.v(format!("iadd.i32 v{}, v{y}", acc.a));
                acc = g.arith(rng, Acc { a, f: acc.f }, uni);
                g.line(format!("store.shared.i32 v{own}, v{}", acc.a));
            }
            // A divergent if/else (a nested if inside, maybe an exit).
            2 => {
                let t = g.new_block();
                let inner = g.new_block();
                let e = g.new_block();
                let j = g.new_block();
                let bit = g.c32(1 + rng.below(3));
                let m = g.v(format!("and.i32 v{}, v{bit}", acc.a));
                let zero = g.c32(0);
                let c = g.v(format!("icmp.eq.i32 v{m}, v{zero}"));
                g.line(format!("br v{c}, block{t}, block{e}"));
                g.t.push_str(&format!("\nblock{t}:\n"));
                let at = g.arith(rng, acc, uni);
                if !stored_global || rng.chance(50) {
                    g.store_own(at, gid, rng.below(SLOT_WORDS));
                }
                let k = g.c32(rng.below(wg));
                let c2 = g.v(format!("icmp.ult.i32 v{lid}, v{k}"));
                g.line(format!(
                    "br v{c2}, block{inner}, block{j}(v{}, v{})",
                    at.a, at.f
                ));
                g.t.push_str(&format!("\nblock{inner}:\n"));
                let ai = g.arith(rng, at, uni);
                if rng.chance(30) {
                    // Some lanes leave for good.
                    g.store_own(ai, gid, 1);
                    g.line("exit");
                } else {
                    g.line(format!("jump block{j}(v{}, v{})", ai.a, ai.f));
                }
                g.t.push_str(&format!("\nblock{e}:\n"));
                let ae = g.arith(rng, acc, uni);
                g.line(format!("jump block{j}(v{}, v{})", ae.a, ae.f));
                acc = g.open(j);
                stored_global = true;
            }
            // A uniform loop without a barrier.
            3 => {
                let l = g.new_block();
                let x = g.new_block();
                let zero = g.c32(0);
                let i = g.next;
                g.next += 1;
                g.line(format!("jump block{l}(v{zero}, v{}, v{})", acc.a, acc.f));
                g.t.push_str(&format!("\nblock{l}(v{i}: i32, "));
                let (la, lf) = (g.next, g.next + 1);
                g.next += 2;
                g.t.push_str(&format!("v{la}: i32, v{lf}: f32):\n"));
                let body = g.arith(rng, Acc { a: la, f: lf }, i);
                let one = g.c32(1);
                let i2 = g.v(format!("iadd.i32 v{i}, v{one}"));
                let n = g.c32(1 + rng.below(6));
                let c = g.v(format!("icmp.ult.i32 v{i2}, v{n}"));
                g.line(format!(
                    "br v{c}, block{l}(v{i2}, v{}, v{}), block{x}(v{}, v{})",
                    body.a, body.f, body.a, body.f
                ));
                acc = g.open(x);
            }
            // One lane (or the lanes past or before one) writes for its
            // workgroup, maybe exiting after (plain: nothing passed).
            4 => {
                let t = g.new_block();
                let j = g.new_block();
                let k = g.c32(rng.below(wg));
                let cc = ["eq", "ult", "ugt", "uge", "ule"][rng.below(5) as usize];
                let c = if rng.chance(50) {
                    g.v(format!("icmp.{cc}.i32 v{lid}, v{k}"))
                } else {
                    let k2 = if rng.chance(50) { uni } else { k };
                    g.v(format!("icmp.{cc}.i32 v{k2}, v{lid}"))
                };
                let plain = rng.chance(60);
                if plain {
                    if rng.chance(50) {
                        g.line(format!("br v{c}, block{t}, block{j}"));
                    } else {
                        // The region on the branch's false side.
                        let nc = g.v(format!("xor.i32 v{lid}, v{lid}"));
                        let _ = nc;
                        g.line(format!("br v{c}, block{t}, block{j}"));
                    }
                } else {
                    g.line(format!(
                        "br v{c}, block{t}, block{j}(v{}, v{})",
                        acc.a, acc.f
                    ));
                }
                g.t.push_str(&format!("\nblock{t}:\n"));
                let w = g.v(format!("zext.i32.i64 v{wid}"));
                let four = g.v("const.i64 4");
                let o = g.v(format!("imul.i64 v{w}, v{four}"));
                let b = g.v(format!("const.i64 {}", BUF + SINGLE));
                let p = g.v(format!("iadd.i64 v{b}, v{o}"));
                let s = g.v(format!("load.shared.i32 v{own}"));
                if cc == "eq" {
                    g.line(format!("store.global.i32 v{p}, v{s}"));
                } else {
                    g.store_own(acc, gid, 2);
                }
                if plain && rng.chance(30) {
                    g.line("exit");
                } else if plain {
                    g.line(format!("jump block{j}"));
                } else {
                    g.line(format!("jump block{j}(v{}, v{})", acc.a, acc.f));
                }
                if plain {
                    g.t.push_str(&format!("\nblock{j}:\n"));
                } else {
                    acc = g.open(j);
                }
                stored_global = true;
            }
            // A shared load some lanes fault on (nothing stored this epoch).
            5 => {
                let d = g.c32(rng.below(wg / 2));
                let up = g.v(format!("iadd.i32 v{lid}, v{d}"));
                let ua = g.v(format!("shl.i32 v{up}, v{two}"));
                let y = g.v(format!("load.shared.i32 v{ua}"));
                let a = g.v(format!("xor.i32 v{}, v{y}", acc.a));
                acc = Acc { a, f: acc.f };
            }
            // The lane's values to its own global slot.
            _ => {
                acc = g.arith(rng, acc, uni);
                g.store_own(acc, gid, rng.below(SLOT_WORDS));
                stored_global = true;
            }
        }
    }
    g.line("barrier");
    let y = g.v(format!("load.shared.i32 v{own}"));
    let a = g.v(format!("iadd.i32 v{}, v{y}", acc.a));
    g.store_own(Acc { a, f: acc.f }, gid, 0);
    g.store_own(Acc { a, f: acc.f }, gid, 3);
    g.line("exit");
    g.t.push_str("}\n");
    let _ = g.wg;
    let mut d = Dispatch::new([groups as u32, 1, 1], [wg as u32, 1, 1]);
    d.wave_size = [4, 8, 16, 32][rng.below(4) as usize];
    d.uniforms = (0..4u32)
        .flat_map(|k| ((rng.below(2 * wg) as u32) + k).to_le_bytes())
        .collect();
    if rng.chance(20) {
        d.step_limit = 3 + rng.below(40);
    }
    let lanes = groups * wg;
    let rw = vec![0u8; (SINGLE + 4 * 8 + lanes * 4 * SLOT_WORDS) as usize];
    // Integers and float bit patterns (NaNs, infinities, subnormals).
    let specials = [
        0x7fc0_0000u32,
        0xffc0_0001,
        0x7f80_0000,
        0x0000_0001,
        0x8000_0000,
        0x3f80_0000,
        0x4049_0fdb,
        0x0080_0000,
    ];
    let ro: Vec<u8> = (0..lanes)
        .flat_map(|i| {
            let x = if rng.chance(30) {
                specials[rng.below(specials.len() as u64) as usize]
            } else {
                (i as u32).wrapping_mul(0x9e37_79b9) ^ rng.next() as u32
            };
            x.to_le_bytes()
        })
        .collect();
    (g.t, d, rw, ro)
}

#[test]
fn random_lockstep_kernels_match_the_interpreter() {
    check_random(0x10c6_57e9, if cfg!(debug_assertions) { 30 } else { 300 });
}

/// More cases from another seed (`WAVEJIT_LONG_CASES`, default 3,000), for
/// the long runs after a JIT change.
#[test]
#[ignore]
fn random_lockstep_kernels_match_the_interpreter_long() {
    let cases = std::env::var("WAVEJIT_LONG_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    check_random(0x5eed_1000, cases);
}

fn check_random(seed: u64, cases: usize) {
    let jit = Jit::new(JitConfig::default());
    let mut rng = Rng(seed);
    let mut lockstep = 0;
    for n in 0..cases {
        let (text, d, rw, ro) = random_case(&mut rng);
        let k = parse(&text);
        if let Err(e) = wavejit_ir::verify::verify(&k) {
            panic!("case {n}: invalid kernel: {e}\n{text}");
        }
        let c = jit.compile_at(&k, 256, Tier::Optimized).expect("compiles");
        lockstep += usize::from(c.gang_lockstep());
        let result = std::panic::catch_unwind(|| compare(&k, &d, &rw, &ro));
        if result.is_err() {
            let _ = std::fs::write("/tmp/lockstep_case.txt", &text);
            panic!("case {n} differs ({d:?}):\n{text}");
        }
    }
    eprintln!("{lockstep} of {cases} in lockstep");
    assert!(
        lockstep * 10 >= cases * 8,
        "only {lockstep} of {cases} cases compiled in lockstep"
    );
}

#[test]
fn the_bench_reduction_runs_in_lockstep() {
    let text = include_str!("../../src/bench/kernels.rs");
    let start = text.find("kernel @reduce").expect("reduce kernel");
    let end = start + text[start..].find("\n}\n").expect("kernel end") + 3;
    let k = parse(&text[start..end]);
    let jit = Jit::new(JitConfig {
        core: wavejit_jit::Core::Gang,
        ..JitConfig::default()
    });
    for tier in [Tier::Baseline, Tier::Optimized] {
        let c = jit.compile_at(&k, 1024, tier).expect("compiles");
        assert!(c.gang_lockstep(), "reduce is not in lockstep at {tier:?}");
    }
}

/// A loop whose exit diverges (lane `l` leaves after `l % 4` rounds), then
/// a barrier every live lane reaches: the waves commute, but the loop's
/// lanes run different iterations, which lockstep does not take; the
/// scheduled core runs it, exactly.
#[test]
fn a_loop_whose_exit_diverges_stays_on_the_scheduled_core() {
    let k = parse(&format!(
        "kernel @loop shared 64 private 0 {{
block0:
  v0 = local_index
  v1 = const.i32 3
  v2 = and.i32 v0, v1
  v3 = const.i32 0
  jump block1(v3)

block1(v4: i32):
  v5 = icmp.ult.i32 v4, v2
  br v5, block2, block3

block2:
  v6 = const.i32 1
  v7 = iadd.i32 v4, v6
  jump block1(v7)

block3:
  barrier
  v8 = zext.i32.i64 v0
  v9 = const.i64 4
  v10 = imul.i64 v8, v9
  v11 = const.i64 {BUF}
  v12 = iadd.i64 v11, v10
  store.global.i32 v12, v4
  exit
}}
"
    ));
    let jit = Jit::new(JitConfig {
        core: wavejit_jit::Core::Gang,
        ..JitConfig::default()
    });
    let c = jit.compile_at(&k, 256, Tier::Optimized).expect("compiles");
    assert!(c.is_gang() && !c.gang_lockstep());
    let d = Dispatch::new([2, 1, 1], [16, 1, 1]);
    let out = compare(&k, &d, &vec![0; 256], &[0; 16]);
    assert_eq!(support::u32s(&out.memory)[..8], [0, 1, 2, 3, 0, 1, 2, 3]);
}

/// A step limit of 0 faults every lane at the entry: nothing is stored
/// (the entry block stores before any edge could count a step).
#[test]
fn a_step_limit_of_zero_runs_nothing() {
    let k = parse(&format!(
        "kernel @first shared 64 private 0 {{
block0:
  v0 = local_index
  v1 = zext.i32.i64 v0
  v2 = const.i64 4
  v3 = imul.i64 v1, v2
  v4 = const.i64 {BUF}
  v5 = iadd.i64 v4, v3
  v6 = const.i32 7
  store.global.i32 v5, v6
  barrier
  exit
}}
"
    ));
    let jit = Jit::new(JitConfig {
        core: wavejit_jit::Core::Gang,
        ..JitConfig::default()
    });
    let c = jit.compile_at(&k, 256, Tier::Optimized).expect("compiles");
    assert!(c.gang_lockstep());
    let mut d = Dispatch::new([2, 1, 1], [16, 1, 1]);
    d.step_limit = 0;
    let out = compare(&k, &d, &[0; 128], &[0; 16]);
    assert!(out.fault.is_some() && out.memory.iter().all(|&b| b == 0));
}
