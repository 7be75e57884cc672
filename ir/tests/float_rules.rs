//! `transform::relax_float_rules`: which flushes go on the lifters' float
//! chains, which stay, and a differential test on random f32 chains (every
//! flush rule, canonical NaN, saturation, rounding modes; constants at the
//! edges of the analysis) over lanes holding subnormals, values next to the
//! constants' negations, signed zeros, infinities and NaNs, run on the golden
//! interpreter before and after.

#[path = "support/rng.rs"]
mod rng;

mod promote_support;

use promote_support::assert_same_run;
use rng::Rng;
use wavejit_ir::Dispatch;
use wavejit_ir::text::{parse, print};
use wavejit_ir::transform::relax_float_rules;

const LANES: u32 = 64;

/// Lane `i` stores at `0x100000 + 256 * i` (v9); v6 and v7 are its inputs.
fn kernel(inputs: &[(u32, u32)], body: &str) -> String {
    let mut s = String::from(
        "kernel @k shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 256
  v2 = imul.i32 v0, v1
  v3 = zext.i32.i64 v2
  v4 = const.i64 0x100000
  v9 = iadd.i64 v4, v3
",
    );
    // Select chains pick the lane's inputs without memory.
    let mut cur = ["%x0".to_string(), "%y0".to_string()];
    s.push_str(&format!(
        "  %x0 = const.i32 {}\n  %y0 = const.i32 {}\n",
        inputs[0].0, inputs[0].1
    ));
    for (j, &(x, y)) in inputs.iter().enumerate().skip(1) {
        s.push_str(&format!(
            "  %j{j} = const.i32 {j}\n  %c{j} = icmp.eq.i32 v0, %j{j}\n  %bx{j} = const.i32 {x}\n  %sx{j} = select.i32 %c{j}, %bx{j}, {}\n  %by{j} = const.i32 {y}\n  %sy{j} = select.i32 %c{j}, %by{j}, {}\n",
            cur[0], cur[1]
        ));
        cur = [format!("%sx{j}"), format!("%sy{j}")];
    }
    s.push_str(&format!(
        "  v6 = bitcast.i32.f32 {}\n  v7 = bitcast.i32.f32 {}\n{body}  exit\n}}\n",
        cur[0], cur[1]
    ));
    s
}

fn run_both(text: &str) -> (wavejit_ir::Kernel, wavejit_ir::Kernel) {
    let k = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut out = k.clone();
    relax_float_rules(&mut out).expect("verified input");
    assert_same_run(&k, &out, &Dispatch::new([1, 1, 1], [LANES, 1, 1]));
    (k, out)
}

/// The AGX lift of `f = f * 1.0001 + 0.5` twice: fmul as `fma(a, b, +0)`,
/// fadd as `fma(a, 1, b)`, every operation flushing inputs and results.
#[test]
fn an_agx_chain_keeps_only_the_flushes_that_can_fire() {
    let body = "  v10 = const.f32 1.0001
  v11 = const.f32 0.0
  v12 = const.f32 1.0
  v13 = const.f32 0.5
  v14 = fma.f32 v6, v10, v11 ftz.in ftz.tiny
  v15 = fma.f32 v14, v12, v13 ftz.in ftz.tiny
  v16 = fma.f32 v15, v10, v11 ftz.in ftz.tiny
  v17 = fma.f32 v16, v12, v13 ftz.in ftz.tiny nan=0x7fc00000
  v18 = fma.f32 v6, v7, v11 ftz.in ftz.tiny
  v19 = fma.f32 v18, v12, v7 ftz.in ftz.tiny
  store.global.f32 v9, v17
  v20 = const.i64 4
  v21 = iadd.i64 v9, v20
  store.global.f32 v21, v19
";
    let inputs: Vec<(u32, u32)> = SPECIALS.iter().map(|&b| (b, b ^ 0x8000_0000)).collect();
    let (_, out) = run_both(&kernel(&inputs, body));
    let printed = shape(&out);
    // The loaded value may be subnormal and -0: its multiply stays an fma;
    // a flushed input times 1.0001 is never tiny, and a subnormal one,
    // flushed or not, is swamped by the + 0.5 that reads it. x + 0.5 is 0 or at least 2^-25 and never -0, and so is its
    // product with 1.0001. Two unknown operands keep every rule.
    for (line, n) in [
        ("= fma.f32 v, v, v\n", 1),
        ("= fadd.f32 v, v\n", 1),
        ("= fmul.f32 v, v\n", 1),
        ("= fadd.f32 v, v nan=0x7fc00000\n", 1),
        ("= fma.f32 v, v, v ftz.in ftz.tiny\n", 1),
        ("= fadd.f32 v, v ftz.in ftz.tiny\n", 1),
    ] {
        assert_eq!(printed.matches(line).count(), n, "{line}\n{printed}");
    }
}

/// The printed kernel with every value named `v` (the pass renumbers).
fn shape(k: &wavejit_ir::Kernel) -> String {
    let text = print(k);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        out.push(c);
        if c == 'v' && !out[..out.len() - 1].ends_with(|p: char| p.is_alphanumeric()) {
            while chars.peek().is_some_and(char::is_ascii_digit) {
                chars.next();
            }
        }
    }
    out
}

/// Constants too small for the sum bound keep the result rules.
#[test]
fn a_sum_with_a_tiny_constant_keeps_its_flush() {
    // 2^-125 and 1.5 * 2^-126: x near their negation leaves a tiny sum.
    let body = "  v10 = const.f32 0x01000000
  v11 = const.f32 0x00c00000
  v12 = fadd.f32 v6, v10 ftz.tiny
  v13 = fadd.f32 v7, v11 ftz
  store.global.f32 v9, v12
  v20 = const.i64 4
  v21 = iadd.i64 v9, v20
  store.global.f32 v21, v13
";
    let inputs = [
        (0x8100_0001, 0x80c0_0001),
        (0x8100_0000, 0x80bf_ffff),
        (0x80ff_ffff, 0x0000_0001),
        (0, 0x8000_0000),
    ];
    let (_, out) = run_both(&kernel(&inputs, body));
    let printed = shape(&out);
    assert!(printed.contains("= fadd.f32 v, v ftz.tiny\n"), "{printed}");
    assert!(printed.contains("= fadd.f32 v, v ftz\n"), "{printed}");
}

/// Inputs: signed zeros, subnormals at both ends, the smallest normals,
/// values next to the generator's constants' negations, infinities, NaNs.
const SPECIALS: [u32; 26] = [
    0x8c80_0000,
    0x8c00_0000,
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x8000_0001,
    0x007f_ffff,
    0x807f_ffff,
    0x0080_0000,
    0x8080_0000,
    0x0080_0001,
    0xbf00_0000,
    0xbeff_ffff,
    0xbf00_0001,
    0xbf80_0000,
    0x3f80_0000,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0xff80_0123,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x0d80_0000,
    0x8d80_0000,
    0x3f80_0347,
    0x4f00_0000,
];

/// Constants of the generator: 1.0 (the fadd form), signed zeros (the fmul
/// form), normals at the sum bound's edges, subnormals, extremes.
const CONSTANTS: [u32; 20] = [
    0x0c80_0000,
    0x0c00_0000,
    0x3f80_0000,
    0x0000_0000,
    0x8000_0000,
    0x3f00_0000,
    0xbf00_0000,
    0x3f80_0347,
    0x0d80_0000,
    0x8d80_0000,
    0x0100_0000,
    0x0180_0000,
    0x0080_0000,
    0x0000_0001,
    0x807f_ffff,
    0x7f7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0001,
    0x4b80_0000,
];

/// Factors the swamped-flush rule takes (normal, below 2 in magnitude) and
/// two it must not (2 and a subnormal).
const SMALL: [u32; 7] = [
    0x3f80_0347,
    0x3f00_0000,
    0xbfc0_0000,
    0x0080_0000,
    0x3fff_ffff,
    0x4000_0000,
    0x0000_0003,
];

/// Addends that swamp a value below 2^-124 (2^-96 and up), and two that do
/// not (2^-97 and 2^-120).
const LARGE: [u32; 8] = [
    0x3f00_0000,
    0xbf00_0000,
    0x0f80_0000,
    0x8f80_0000,
    0x7f7f_ffff,
    0x3f80_0000,
    0x0f00_0000,
    0x0380_0000,
];

fn random_inputs(rng: &mut Rng) -> Vec<(u32, u32)> {
    let pick = |rng: &mut Rng| match rng.below(4) {
        0 => rng.next() as u32,
        // A constant or its negation, give or take two ulps.
        1 => (CONSTANTS[rng.below(CONSTANTS.len() as u64) as usize] ^ (rng.below(2) as u32) << 31)
            .wrapping_add(rng.below(5) as u32)
            .wrapping_sub(2),
        // Next to a special: the cancellations around the bounds.
        2 => SPECIALS[rng.below(SPECIALS.len() as u64) as usize]
            .wrapping_add(rng.below(5) as u32)
            .wrapping_sub(2),
        _ => SPECIALS[rng.below(SPECIALS.len() as u64) as usize],
    };
    (0..LANES).map(|_| (pick(rng), pick(rng))).collect()
}

fn random_mode(rng: &mut Rng) -> String {
    let mut m = String::new();
    m.push_str(match rng.below(6) {
        0 => "",
        1 => " ftz.in",
        2 => " ftz.out",
        3 => " ftz",
        4 => " ftz.tiny",
        _ => " ftz.in ftz.tiny",
    });
    if rng.chance(40) {
        m.push_str(" nan=0x7fc00000");
    }
    if rng.chance(10) {
        m.push_str([" rtz", " rdn", " rup", " rmm"][rng.below(4) as usize]);
    }
    if rng.chance(10) {
        m.push_str(" sat");
    }
    m
}

/// A random chain of f32 operations over the lane's two inputs and the
/// [`CONSTANTS`], consumers of every kind, each value stored.
fn random_body(rng: &mut Rng) -> String {
    let mut lines = String::new();
    let mut vals = vec!["v6".to_string(), "v7".to_string()];
    let mut next = 10;
    let mut fresh = |lines: &mut String, text: String| {
        let name = format!("v{next}");
        next += 1;
        lines.push_str(&format!("  {name} = {text}\n"));
        name
    };
    // The fadd and fmul forms of fma.
    let one = fresh(&mut lines, "const.f32 1.0".into());
    let zero = fresh(&mut lines, "const.f32 0.0".into());
    let mut consts = Vec::new();
    for _ in 0..4 {
        let bits = CONSTANTS[rng.below(CONSTANTS.len() as u64) as usize];
        consts.push(fresh(&mut lines, format!("const.f32 {bits:#x}")));
    }
    for stored in 0..(4 + rng.below(12)) {
        let any = |rng: &mut Rng| {
            if rng.chance(35) {
                consts[rng.below(consts.len() as u64) as usize].clone()
            } else {
                vals[rng.below(vals.len() as u64) as usize].clone()
            }
        };
        let (a, b, c) = (any(rng), any(rng), any(rng));
        let mode = random_mode(rng);
        if rng.chance(25) {
            // A product by a small constant read only by a sum with a large
            // one (the flush the sum swamps), the product not reused.
            let k = SMALL[rng.below(SMALL.len() as u64) as usize];
            let k = fresh(&mut lines, format!("const.f32 {k:#x}"));
            let p = if rng.chance(50) {
                format!("fmul.f32 {a}, {k}{mode}")
            } else {
                let z = if rng.chance(50) { "0.0" } else { "-0.0" };
                let z = fresh(&mut lines, format!("const.f32 {z}"));
                format!("fma.f32 {k}, {a}, {z}{mode}")
            };
            let p = fresh(&mut lines, p);
            let c = LARGE[rng.below(LARGE.len() as u64) as usize];
            let c = fresh(&mut lines, format!("const.f32 {c:#x}"));
            let m = random_mode(rng);
            let u = match rng.below(4) {
                0 => format!("fadd.f32 {p}, {c}{m}"),
                1 => format!("fsub.f32 {c}, {p}{m}"),
                2 => format!("fsub.f32 {p}, {c}{m}"),
                _ => format!("fma.f32 {p}, {one}, {c}{m}"),
            };
            let v = fresh(&mut lines, u);
            vals.push(v.clone());
            let off = fresh(&mut lines, format!("const.i64 {}", 4 * stored));
            let at = fresh(&mut lines, format!("iadd.i64 v9, {off}"));
            lines.push_str(&format!("  store.global.f32 {at}, {v}\n"));
            continue;
        }
        let text = match rng.below(10) {
            0..=4 => {
                let op = ["fadd", "fsub", "fmul", "fdiv"][rng.below(4) as usize];
                format!("{op}.f32 {a}, {b}{mode}")
            }
            5..=7 => match rng.below(3) {
                0 => format!("fma.f32 {a}, {one}, {c}{mode}"),
                1 => format!("fma.f32 {a}, {b}, {zero}{mode}"),
                _ => format!("fma.f32 {a}, {b}, {c}{mode}"),
            },
            8 => {
                let cmp = fresh(
                    &mut lines,
                    format!(
                        "fcmp.lt.f32 {a}, {b}{}",
                        ["", " ftz.in"][rng.below(2) as usize]
                    ),
                );
                format!("select.f32 {cmp}, {a}, {b}")
            }
            _ => format!("fmin.f32 {a}, {b}{}", random_mode(rng)),
        };
        let v = fresh(&mut lines, text);
        vals.push(v.clone());
        let off = fresh(&mut lines, format!("const.i64 {}", 4 * stored));
        let at = fresh(&mut lines, format!("iadd.i64 v9, {off}"));
        lines.push_str(&format!("  store.global.f32 {at}, {v}\n"));
    }
    lines
}

#[test]
fn random_float_chains_run_the_same_after_relaxing() {
    let cases = std::env::var("WAVEJIT_LONG_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(400u64);
    let (mut inputs_relaxed, mut results_relaxed, mut fmas, mut swamped) = (0, 0, 0, 0);
    for seed in 0..cases {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let text = kernel(&random_inputs(&mut rng), &random_body(&mut rng));
        let k = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut out = k.clone();
        let stats = relax_float_rules(&mut out).expect("verified input");
        inputs_relaxed += stats.inputs;
        results_relaxed += stats.results;
        fmas += stats.fmas;
        swamped += stats.swamped;
        assert_same_run(&k, &out, &Dispatch::new([1, 1, 1], [LANES, 1, 1]));
    }
    // The generator must exercise every rewrite.
    assert!(
        inputs_relaxed > 100 && results_relaxed > 100 && fmas > 50 && swamped > 50,
        "inputs {inputs_relaxed}, results {results_relaxed}, fmas {fmas}, swamped {swamped}"
    );
}
