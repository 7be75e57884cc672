//! `transform::relax_canonical_nan`: which results keep the canonical-NaN
//! rule, and a differential test on random float chains fed NaNs of every
//! payload and sign (and the values around them), run on the golden
//! interpreter before and after.

#[path = "support/rng.rs"]
mod rng;

mod promote_support;

use promote_support::{BASE, assert_same_run};
use rng::Rng;
use wavejit_ir::Dispatch;
use wavejit_ir::text::print;
use wavejit_ir::transform::relax_canonical_nan;

/// Lane `i` reads word `i` of the table at `BASE + 0x8000` and writes its
/// results at `BASE + 64 * i`.
const PROLOGUE: &str = "  v0 = local_index
  v1 = const.i32 2
  v2 = shl.i32 v0, v1
  v3 = zext.i32.i64 v2
  v4 = const.i64 0x108000
  v5 = iadd.i64 v4, v3
  v6 = load.global.f32 v5
  v7 = const.i32 64
  v8 = imul.i32 v0, v7
  v9 = zext.i32.i64 v8
  v10 = const.i64 0x100000
  v11 = iadd.i64 v10, v9
";

/// Float bit patterns the table holds: NaNs of both signs and several
/// payloads (quiet and signalling), infinities, zeros, normals, subnormals.
const SPECIALS: [u32; 16] = [
    0x7fc0_0000,
    0xffc0_0000,
    0x7f80_0001,
    0xff81_2345,
    0x7fff_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x0000_0000,
    0x8000_0000,
    0x3f80_0000,
    0xc040_0000,
    0x0000_0001,
    0x807f_ffff,
    0x4b00_0000,
    0x3e80_0000,
    0x7f7f_ffff,
];

#[test]
fn a_chain_keeps_the_rule_only_where_its_value_leaves() {
    let text = format!(
        "kernel @k shared 0 private 0 {{
block0:
{PROLOGUE}  v12 = const.f32 1.0001
  v13 = const.f32 0.5
  v14 = fmul.f32 v6, v12 nan=0x7fc00000
  v15 = fadd.f32 v14, v13 nan=0x7fc00000
  v16 = fmul.f32 v15, v12 nan=0x7fc00000
  v17 = fmin.f32 v16, v13 nan=0x7fc00000
  v18 = fadd.f32 v16, v13 nan=0x7fc00000
  store.global.f32 v11, v17
  v19 = const.i64 4
  v20 = iadd.i64 v11, v19
  store.global.f32 v20, v18
  exit
}}"
    );
    let k = wavejit_ir::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut out = k.clone();
    // v14 and v15 feed only canonical arithmetic; v16 also feeds fmin
    // (which drops a NaN operand: its payload could show), v17 and v18 are
    // stored.
    assert_eq!(relax_canonical_nan(&mut out), Ok(2));
    let printed = print(&out);
    assert!(printed.contains("v14 = fmul.f32 v6, v12\n"), "{printed}");
    assert!(printed.contains("v15 = fadd.f32 v14, v13\n"), "{printed}");
    assert!(
        printed.contains("v16 = fmul.f32 v15, v12 nan=0x7fc00000"),
        "{printed}"
    );
    let d = Dispatch::new([1, 1, 1], [16, 1, 1]);
    assert_same_run(&with_table(&k), &with_table(&out), &d);
}

/// `k` with its table of [`SPECIALS`] at `BASE + 0x8000` written first by
/// each lane (its own word) and a barrier before the rest.
fn with_table(k: &wavejit_ir::Kernel) -> wavejit_ir::Kernel {
    let text = print(k);
    let (head, rest) = text.split_once("block0:\n").expect("block0");
    let mut pre = String::from(
        "block0:\n  %w0 = local_index\n  %w1 = const.i32 15\n  %w2 = and.i32 %w0, %w1\n",
    );
    // A select chain picks SPECIALS[%w2] without memory.
    pre.push_str(&format!("  %w3 = const.i32 {}\n", SPECIALS[0]));
    let mut cur = "%w3".to_string();
    for (j, &bits) in SPECIALS.iter().enumerate().skip(1) {
        pre.push_str(&format!(
            "  %wj{j} = const.i32 {j}\n  %wc{j} = icmp.eq.i32 %w2, %wj{j}\n  %wb{j} = const.i32 {bits}\n  %ws{j} = select.i32 %wc{j}, %wb{j}, {cur}\n"
        ));
        cur = format!("%ws{j}");
    }
    pre.push_str(&format!(
        "  %w4 = const.i32 2\n  %w5 = shl.i32 %w0, %w4\n  %w6 = zext.i32.i64 %w5\n  %w7 = const.i64 {}\n  %w8 = iadd.i64 %w7, %w6\n  store.global.i32 %w8, {cur}\n  barrier\n",
        BASE + 0x8000
    ));
    let t = format!("{head}{pre}{rest}");
    wavejit_ir::text::parse(&t).unwrap_or_else(|e| panic!("{e}\n{t}"))
}

/// A random chain of float operations over the lane's special value, with
/// random NaN rules, consumers of every kind (arithmetic, GPU and IEEE
/// min/max, compares, conversions, bitcasts) and several stores.
fn random_chain(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut lines = String::from(PROLOGUE);
    let mut vals = vec!["v6".to_string()];
    let mut next = 12;
    let mut fresh = |lines: &mut String, text: String| {
        let name = format!("v{next}");
        next += 1;
        lines.push_str(&format!("  {name} = {text}\n"));
        name
    };
    let c = fresh(&mut lines, "const.f32 1.5".into());
    vals.push(c);
    let c = fresh(&mut lines, "const.f32 0x7fc00001".into());
    vals.push(c);
    let mut stores = 0u32;
    for _ in 0..(6 + rng.below(14)) {
        let a = vals[rng.below(vals.len() as u64) as usize].clone();
        let b = vals[rng.below(vals.len() as u64) as usize].clone();
        let nan = match rng.below(3) {
            0 => "",
            1 => " nan=0x7fc00000",
            _ => " nan=0xffc00001",
        };
        let ftz = if rng.chance(30) { " ftz" } else { "" };
        let text = match rng.below(13) {
            0..=5 => {
                let op = ["fadd", "fsub", "fmul", "fdiv"][rng.below(4) as usize];
                format!("{op}.f32 {a}, {b}{ftz}{nan}")
            }
            6 => {
                let c = vals[rng.below(vals.len() as u64) as usize].clone();
                format!("fma.f32 {a}, {b}, {c}{ftz}{nan}")
            }
            7 => {
                let op = ["fmin", "fmax", "fminimum", "fmaximum"][rng.below(4) as usize];
                format!("{op}.f32 {a}, {b}{nan}")
            }
            8 => format!("fneg.f32 {a}{nan}"),
            // The lifters' register round trip: through an i32 and back,
            // the i32 sometimes also stored (its bits leave).
            11 if rng.chance(50) => {
                let bits = fresh(&mut lines, format!("bitcast.f32.i32 {a}"));
                if rng.chance(30) {
                    let off = fresh(&mut lines, format!("const.i64 {}", 4 * (stores % 16)));
                    let at = fresh(&mut lines, format!("iadd.i64 v11, {off}"));
                    lines.push_str(&format!("  store.global.i32 {at}, {bits}\n"));
                    stores += 1;
                }
                format!("bitcast.i32.f32 {bits}")
            }
            9 | 12 => {
                let cmp = fresh(&mut lines, format!("fcmp.ult.f32 {a}, {b}"));
                format!("select.f32 {cmp}, {a}, {b}")
            }
            _ => {
                // Its bits leave: stored.
                let off = fresh(&mut lines, format!("const.i64 {}", 4 * (stores % 16)));
                let at = fresh(&mut lines, format!("iadd.i64 v11, {off}"));
                lines.push_str(&format!("  store.global.f32 {at}, {a}\n"));
                stores += 1;
                continue;
            }
        };
        let v = fresh(&mut lines, text);
        vals.push(v);
    }
    let last = vals.last().cloned().unwrap_or_else(|| "v6".into());
    let off = fresh(&mut lines, "const.i64 60".into());
    let at = fresh(&mut lines, format!("iadd.i64 v11, {off}"));
    lines.push_str(&format!("  store.global.f32 {at}, {last}\n"));
    format!("kernel @r shared 0 private 0 {{\nblock0:\n{lines}  exit\n}}")
}

#[test]
fn random_float_chains_run_the_same_after_relaxing() {
    let cases = std::env::var("WAVEJIT_LONG_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(500u64);
    let d = Dispatch::new([1, 1, 1], [16, 1, 1]);
    let mut relaxed = 0;
    for seed in 0..cases {
        let text = random_chain(seed);
        let k = wavejit_ir::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let k = with_table(&k);
        let mut out = k.clone();
        relaxed += relax_canonical_nan(&mut out).expect("verified input");
        assert_same_run(&k, &out, &d);
    }
    assert!(
        relaxed > cases as usize / 2,
        "the generator rarely makes a chain: {relaxed}"
    );
}
