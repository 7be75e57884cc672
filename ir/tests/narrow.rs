//! `transform::narrow_integers`: 64-bit arithmetic truncated to 32 bits is
//! recomputed in 32 bits. Kernels must run identically (memory and faults) on
//! the golden interpreter before and after, and the wide instructions must go.

#[path = "support/rng.rs"]
mod rng;

mod promote_support;

use promote_support::{BASE, assert_same_run, run, two_groups_of_8};
use rng::Rng;
use wavejit_ir::transform::narrow_integers;
use wavejit_ir::{CastOp, IBinOp, InstKind, Kernel, Type};

fn parse(text: &str) -> Kernel {
    wavejit_ir::text::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// 64-bit integer instructions placed in `kernel`.
fn wide_ops(kernel: &Kernel) -> usize {
    kernel
        .blocks
        .values()
        .flat_map(|b| &b.insts)
        .filter(|&&i| {
            matches!(kernel.insts[i].kind, InstKind::IBinary(_))
                && kernel.insts[i]
                    .results
                    .first()
                    .is_some_and(|&r| kernel.value_type(r) == Type::I64)
        })
        .count()
}

/// Narrows a copy of `kernel`; checks it verifies and runs like the original.
fn narrow_and_compare(kernel: &Kernel) -> Kernel {
    let mut k = kernel.clone();
    if let Err(e) = narrow_integers(&mut k) {
        panic!("{e}");
    }
    assert_same_run(kernel, &k, &two_groups_of_8());
    k
}

/// The AGX `imadd` + `shr` + `xor` hash round as the AGX lifter emits it.
#[test]
fn the_agx_hash_round_becomes_32_bit() {
    let text = format!(
        "kernel @hash shared 0 private 0 {{
block0:
  v0 = local_index
  v1 = zext.i32.i64 v0
  v2 = const.i64 0x19660d
  v3 = const.i64 0x3c6ef35f
  v4 = imul.i64 v1, v2
  v5 = iadd.i64 v4, v3
  v6 = trunc.i64.i32 v5
  v7 = zext.i32.i64 v6
  v8 = const.i64 0xffffffff
  v9 = const.i64 13
  v10 = ushr.i64 v7, v9
  v11 = and.i64 v10, v8
  v12 = trunc.i64.i32 v11
  v13 = xor.i32 v6, v12
  v14 = const.i64 {BASE:#x}
  v15 = const.i64 4
  v16 = imul.i64 v1, v15
  v17 = iadd.i64 v14, v16
  store.global.i32 v17, v13
  exit
}}
"
    );
    let k = parse(&text);
    assert_eq!(wide_ops(&k), 6);
    let n = narrow_and_compare(&k);
    // Only the address arithmetic stays 64-bit.
    assert_eq!(wide_ops(&n), 2, "{}", wavejit_ir::text::print(&n));
    let (_, mem) = run(&n, &two_groups_of_8());
    for lane in 0..8u32 {
        let h = lane.wrapping_mul(0x19660d).wrapping_add(0x3c6ef35f);
        let want = h ^ (h >> 13);
        let got = promote_support::Buffer::u32_at(&mem, 4 * lane as usize);
        assert_eq!(got, want, "lane {lane}");
    }
}

#[test]
fn what_does_not_narrow_stays() {
    // A division, a right shift of a value with a live high half, a shift by
    // 32 or more, and a block parameter: their truncs keep the 64-bit value.
    let text = format!(
        "kernel @keep shared 0 private 0 {{
block0:
  v0 = local_index
  v1 = sext.i32.i64 v0
  v2 = const.i64 -7
  v3 = imul.i64 v1, v2
  v4 = const.i64 3
  v5 = udiv.i64 v3, v4
  v6 = trunc.i64.i32 v5
  v7 = const.i64 4
  v8 = ushr.i64 v3, v7
  v9 = trunc.i64.i32 v8
  v10 = const.i64 40
  v11 = shl.i64 v3, v10
  v12 = trunc.i64.i32 v11
  jump block1(v3)

block1(v13: i64):
  v14 = trunc.i64.i32 v13
  v15 = xor.i32 v6, v9
  v16 = xor.i32 v15, v12
  v17 = xor.i32 v16, v14
  v18 = const.i64 {BASE:#x}
  v19 = zext.i32.i64 v0
  v20 = const.i64 4
  v21 = imul.i64 v19, v20
  v22 = iadd.i64 v18, v21
  store.global.i32 v22, v17
  exit
}}
"
    );
    let k = parse(&text);
    let n = narrow_and_compare(&k);
    let truncs = n
        .insts
        .values()
        .filter(|d| {
            matches!(
                d.kind,
                InstKind::Cast {
                    op: CastOp::Trunc,
                    ..
                }
            )
        })
        .count();
    assert_eq!(truncs, 4, "{}", wavejit_ir::text::print(&n));
}

/// Random expression trees over 64-bit values, truncated and stored per lane.
#[test]
fn random_expressions_run_the_same() {
    let mut rng = Rng(0x6e61_7272_6f77);
    let mut narrowed = 0;
    for case in 0..300 {
        let mut lines = vec![
            "  v0 = local_index".to_string(),
            "  v1 = workgroup_id.x".to_string(),
            "  v2 = const.i32 2654435761".to_string(),
            "  v3 = imul.i32 v0, v2".to_string(),
            "  v4 = iadd.i32 v3, v1".to_string(),
        ];
        let mut next = 5;
        let mut i64s: Vec<usize> = Vec::new();
        let mut i32s: Vec<usize> = vec![0, 3, 4];
        let mut fresh = |lines: &mut Vec<String>, text: String| {
            lines.push(format!("  v{next} = {text}"));
            next += 1;
            next - 1
        };
        for _ in 0..(4 + rng.below(12)) {
            let pick32 = |rng: &mut Rng, xs: &[usize]| xs[rng.below(xs.len() as u64) as usize];
            let v = match rng.below(10) {
                0 | 1 => {
                    let x = pick32(&mut rng, &i32s);
                    let ext = if rng.chance(50) { "zext" } else { "sext" };
                    fresh(&mut lines, format!("{ext}.i32.i64 v{x}"))
                }
                2 => {
                    let c = rng.next() >> rng.below(64);
                    fresh(&mut lines, format!("const.i64 {c:#x}"))
                }
                3 if !i64s.is_empty() => {
                    let a = pick32(&mut rng, &i64s);
                    let k = rng.pick(&[0u64, 1, 7, 13, 31, 32, 45, 63, 64, 77]);
                    let kc = fresh(&mut lines, format!("const.i64 {k}"));
                    let op = rng.pick(&["shl", "ushr", "sshr"]);
                    fresh(&mut lines, format!("{op}.i64 v{a}, v{kc}"))
                }
                4 if !i64s.is_empty() => {
                    let a = pick32(&mut rng, &i64s);
                    let t = fresh(&mut lines, format!("trunc.i64.i32 v{a}"));
                    i32s.push(t);
                    continue;
                }
                _ if i64s.len() >= 2 => {
                    let (a, b) = (pick32(&mut rng, &i64s), pick32(&mut rng, &i64s));
                    let op = rng.pick(&["iadd", "isub", "imul", "and", "or", "xor", "udiv"]);
                    fresh(&mut lines, format!("{op}.i64 v{a}, v{b}"))
                }
                _ => {
                    let x = pick32(&mut rng, &i32s);
                    fresh(&mut lines, format!("zext.i32.i64 v{x}"))
                }
            };
            i64s.push(v);
        }
        // Store the truncation of every 64-bit value, xor-ed together.
        let mut acc = fresh(&mut lines, "const.i32 0".into());
        for &w in &i64s.clone() {
            let t = fresh(&mut lines, format!("trunc.i64.i32 v{w}"));
            acc = fresh(&mut lines, format!("xor.i32 v{acc}, v{t}"));
        }
        let base = fresh(&mut lines, format!("const.i64 {BASE:#x}"));
        let eight = fresh(&mut lines, "const.i32 8".into());
        let wg_base = fresh(&mut lines, format!("imul.i32 v1, v{eight}"));
        let global = fresh(&mut lines, format!("iadd.i32 v{wg_base}, v0"));
        let lane = fresh(&mut lines, format!("zext.i32.i64 v{global}"));
        let four = fresh(&mut lines, "const.i64 4".into());
        let off = fresh(&mut lines, format!("imul.i64 v{lane}, v{four}"));
        let addr = fresh(&mut lines, format!("iadd.i64 v{base}, v{off}"));
        lines.push(format!("  store.global.i32 v{addr}, v{acc}"));
        let text = format!(
            "kernel @r{case} shared 0 private 0 {{\nblock0:\n{}\n  exit\n}}\n",
            lines.join("\n")
        );
        let k = parse(&text);
        let before = wide_ops(&k);
        let n = narrow_and_compare(&k);
        narrowed += usize::from(wide_ops(&n) < before);
    }
    assert!(
        narrowed > 150,
        "only {narrowed} of 300 kernels lost a 64-bit op"
    );
}

#[test]
fn narrowing_twice_changes_nothing_more() {
    let text = "kernel @twice shared 0 private 0 {
block0:
  v0 = local_index
  v1 = zext.i32.i64 v0
  v2 = iadd.i64 v1, v1
  v3 = trunc.i64.i32 v2
  v4 = const.i64 0x100000
  store.global.i32 v4, v3
  exit
}
";
    let mut k = parse(text);
    let first = narrow_integers(&mut k).map(|s| (s.truncs, s.added)).ok();
    assert_eq!(first, Some((1, 1)));
    // The 32-bit add replaced the 64-bit one (dead, removed with its zext).
    assert_eq!(BASE, 0x10_0000);
    assert_eq!(wide_ops(&k), 0);
    let adds: Vec<Type> = k
        .insts
        .values()
        .filter(|d| matches!(d.kind, InstKind::IBinary(IBinOp::Add)))
        .filter_map(|d| d.results.first().map(|&r| k.value_type(r)))
        .collect();
    assert_eq!(adds, [Type::I32]);
    let second = narrow_integers(&mut k).map(|s| (s.truncs, s.added)).ok();
    assert_eq!(second, Some((0, 0)));
}
