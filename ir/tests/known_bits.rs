//! `transform::simplify_bits`: the exact rewrites on named cases (with the
//! cases that must be left alone beside them), and a differential test on
//! random integer kernels over builtins and constants, run on the golden
//! interpreter before and after, at the shape they were simplified for.

#[path = "support/rng.rs"]
mod rng;

mod promote_support;

use promote_support::{BASE, assert_same_run, kernel_with};
use rng::Rng;
use wavejit_ir::text::print;
use wavejit_ir::transform::{BitsStats, simplify_bits};
use wavejit_ir::{Dispatch, DispatchShape, Kernel};

fn shape(groups: [u32; 3], size: [u32; 3]) -> DispatchShape {
    DispatchShape {
        num_workgroups: groups,
        workgroup_size: size,
    }
}

fn simplified(k: &Kernel, s: Option<&DispatchShape>) -> (Kernel, BitsStats) {
    let mut out = k.clone();
    let stats = simplify_bits(&mut out, s).expect("verified input");
    (out, stats)
}

/// The body lines of a printed kernel (without the header and braces).
fn body(k: &Kernel) -> Vec<String> {
    print(k)
        .lines()
        .filter(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// What the RV32 lifter emits for `i = (mhartid >> 13) << 8 | mhartid & 255`
/// with `mhartid = group << 13 | local` (256-lane workgroups), stored at
/// `BASE + 4 * i`.
const MHARTID: &str = "kernel @k shared 0 private 0 {
block0:
  v0 = workgroup_id.x
  v1 = workgroup_id.y
  v2 = num_workgroups.x
  v3 = imul.i32 v1, v2
  v4 = iadd.i32 v3, v0
  v5 = local_index
  v6 = const.i32 13
  v7 = shl.i32 v4, v6
  v8 = or.i32 v7, v5
  v9 = ushr.i32 v8, v6
  v10 = const.i32 8
  v11 = shl.i32 v9, v10
  v12 = const.i32 255
  v13 = and.i32 v8, v12
  v14 = or.i32 v11, v13
  v15 = const.i32 2
  v16 = shl.i32 v14, v15
  v17 = zext.i32.i64 v16
  v18 = const.i64 PROLOGUE
  v19 = iadd.i64 v18, v17
  store.global.i32 v19, v14
  exit
}";

#[test]
fn the_mhartid_decomposition_becomes_group_times_size_plus_local() {
    let k = kernel_with(&BASE.to_string(), MHARTID);
    let s = shape([5, 1, 1], [256, 1, 1]);
    let (out, stats) = simplified(&k, Some(&s));
    assert_eq!(
        body(&out),
        [
            "v0 = workgroup_id.x",
            "v1 = local_index",
            "v2 = const.i32 8",
            "v3 = shl.i32 v0, v2",
            "v4 = iadd.i32 v3, v1",
            "v5 = const.i32 2",
            "v6 = shl.i32 v4, v5",
            "v7 = zext.i32.i64 v6",
            "v8 = const.i64 0x100000",
            "v9 = iadd.i64 v8, v7",
            "store.global.i32 v9, v4",
            "exit",
        ]
        .map(String::from),
        "{}",
        print(&out)
    );
    // workgroup_id.y is 0 in a grid one group high (and so its product),
    // num_workgroups.x is the shape's 5; `+ 0`, the shift pair and the mask
    // go; both `or`s become adds.
    assert_eq!(
        (
            stats.constants,
            stats.identities,
            stats.adds,
            stats.narrowed
        ),
        (3, 3, 2, 2),
        "{stats:?}"
    );
    let mut d = Dispatch::new(s.num_workgroups, s.workgroup_size);
    d.wave_size = 32;
    assert_same_run(&k, &out, &d);
}

#[test]
fn without_a_shape_only_the_engines_limits_are_known() {
    // A group id may be any u32: `(g << 13) >> 13` loses its top bits and
    // stays; the local index is below 2^16, so `& 255` cannot drop and the
    // `or` into the shifted group stays an `or` (bit 13 up is the group's).
    let k = kernel_with(&BASE.to_string(), MHARTID);
    let (out, stats) = simplified(&k, None);
    let text = print(&out);
    assert!(text.contains("ushr.i32"), "{text}");
    assert!(text.contains("and.i32"), "{text}");
    assert_eq!(stats.constants, 0, "{stats:?}");
    // local_index < 2^16 with the group's bits from 13 up overlap: no add.
    assert!(text.contains("= or.i32 v"), "{text}");
}

/// `PROLOGUE` is `v0 = local_index` and `v1 = workgroup_id.x`; `LINE` is the
/// instruction under test (`v3`, from v0, v1 and the constant v2 = `C`),
/// stored so it stays live.
fn one(line: &str, c: u32) -> Kernel {
    storing(
        &format!("  v1 = workgroup_id.x\n  v2 = const.i32 {c}\n  {line}\n"),
        "v3",
    )
}

#[test]
fn each_rule_fires_only_inside_its_masks() {
    let s = shape([4, 1, 1], [64, 1, 1]); // local_index <= 63, group <= 3
    let d = Dispatch::new(s.num_workgroups, s.workgroup_size);
    // (line, constant, the result is an operand afterwards)
    let cases = [
        // x & m: m covers every bit of x (63), or not (31).
        ("v3 = and.i32 v0, v2", 63, true),
        ("v3 = and.i32 v0, v2", 31, false),
        ("v3 = and.i32 v0, v2", 0xffff_ffdf, false),
        ("v3 = and.i32 v0, v2", 0xffff_ffbf, true),
        // (x << k) >> k: nothing leaves (group <= 3 << 30 fits), or bits do.
        ("v9 = shl.i32 v1, v2\n  v3 = ushr.i32 v9, v2", 30, true),
        ("v9 = shl.i32 v1, v2\n  v3 = ushr.i32 v9, v2", 31, false),
        // A shift by 32 is a shift by 0 (mod the width): the identity pass's.
        ("v9 = shl.i32 v1, v2\n  v3 = ushr.i32 v9, v2", 0, false),
        // x + 0 where the zero is only known from the masks: (local >> 6).
        ("v9 = ushr.i32 v0, v2\n  v3 = iadd.i32 v1, v9", 6, true),
        ("v9 = ushr.i32 v0, v2\n  v3 = iadd.i32 v1, v9", 5, false),
        // An arithmetic shift of a value whose sign bit is clear (group >> 31
        // is 0), of one that is not (group >> 1), and of one whose sign bit
        // may be set (group << 31 shifted back is 0 or -1, so its top bit is
        // not known to be 0).
        ("v9 = sshr.i32 v1, v2\n  v3 = iadd.i32 v0, v9", 31, true),
        ("v9 = sshr.i32 v1, v2\n  v3 = iadd.i32 v0, v9", 1, false),
        (
            "v8 = shl.i32 v1, v2\n  v9 = sshr.i32 v8, v2\n  v3 = ushr.i32 v9, v2",
            31,
            false,
        ),
    ];
    for (line, c, operand) in cases {
        let k = one(line, c);
        let (out, _) = simplified(&k, Some(&s));
        let text = print(&out);
        let stored_operand = text.contains("store.global.i32 v") && {
            // The stored value is a builtin's result.
            let stored = text
                .lines()
                .find(|l| l.contains("store.global"))
                .and_then(|l| l.rsplit(", ").next())
                .unwrap_or("")
                .trim()
                .to_string();
            text.lines().any(|l| {
                l.trim().starts_with(&format!("{stored} = local_index"))
                    || l.trim().starts_with(&format!("{stored} = workgroup_id"))
            })
        };
        assert_eq!(stored_operand, operand, "{line} with {c}:\n{text}");
        assert_same_run(&k, &out, &d);
    }
}

#[test]
fn disjoint_or_and_xor_become_add_and_overlapping_ones_do_not() {
    let s = shape([4, 1, 1], [64, 1, 1]);
    for (c, add) in [(6, true), (5, false)] {
        for op in ["or", "xor"] {
            let k = one(&format!("v9 = shl.i32 v1, v2\n  v3 = {op}.i32 v9, v0"), c);
            let (out, stats) = simplified(&k, Some(&s));
            assert_eq!(stats.adds == 1, add, "{op} with shift {c}\n{}", print(&out));
            assert_eq!(print(&out).contains(&format!("{op}.i32")), !add);
            assert_same_run(&k, &out, &Dispatch::new([4, 1, 1], [64, 1, 1]));
        }
    }
}

/// A kernel of `v0 = local_index`, then `body`, storing `value` at
/// `BASE + 4 * v0` (the address through named values, clear of the body's).
fn storing(body: &str, value: &str) -> Kernel {
    let text = format!(
        "kernel @k shared 0 private 0 {{
block0:
  v0 = local_index
{body}  %two = const.i32 2
  %off = shl.i32 v0, %two
  %wide = zext.i32.i64 %off
  %base = const.i64 {BASE}
  %at = iadd.i64 %base, %wide
  store.global.i32 %at, {value}
  exit
}}"
    );
    wavejit_ir::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// [`storing`] `v7`, which `body` defines (with `v1` to `v6`).
fn storing_v7(body: &str) -> Kernel {
    storing(body, "v7")
}

#[test]
fn booleans_are_left_alone() {
    // i1 has `or` but no `add`: disjoint booleans stay an `or`.
    let k = storing_v7(
        "  v1 = const.i32 0
  v2 = icmp.eq.i32 v0, v1
  v3 = icmp.ne.i32 v0, v1
  v4 = const.i1 0
  v5 = and.i1 v2, v4
  v6 = or.i1 v5, v3
  v7 = select.i32 v6, v0, v1
",
    );
    let (out, _) = simplified(&k, None);
    assert!(print(&out).contains("or.i1"), "{}", print(&out));
    assert_same_run(&k, &out, &Dispatch::new([2, 1, 1], [8, 1, 1]));
}

/// AGX's grid test, `gid < threads_per_grid` per dimension, with the grid
/// as constants: decided for a grid of whole groups, kept for a partial one
/// (its last group has lanes outside) and for `<=` one short of the end.
#[test]
fn grid_tests_are_decided_by_the_shape() {
    let test = |cc: &str, grid: u32| {
        let text = format!(
            "kernel @k shared 0 private 0 {{
block0:
  v0 = workgroup_id.x
  v1 = workgroup_size.x
  v2 = local_id.x
  v3 = imul.i32 v0, v1
  v4 = iadd.i32 v3, v2
  v5 = const.i32 {grid}
  v6 = icmp.{cc}.i32 v4, v5
  v7 = const.i32 1
  v8 = const.i32 0
  v9 = select.i32 v6, v7, v8
  v10 = const.i32 2
  v11 = shl.i32 v4, v10
  v12 = zext.i32.i64 v11
  v13 = const.i64 {BASE}
  v14 = iadd.i64 v13, v12
  store.global.i32 v14, v9
  exit
}}"
        );
        wavejit_ir::text::parse(&text).unwrap_or_else(|e| panic!("{e}"))
    };
    let s = shape([3, 1, 1], [32, 1, 1]); // gid <= 95
    let d = Dispatch::new([3, 1, 1], [32, 1, 1]);
    for (cc, grid, decided) in [
        ("ult", 96, Some(true)),
        ("ult", 95, None),
        ("ule", 95, Some(true)),
        ("ule", 94, None),
        ("uge", 96, Some(false)),
        ("ugt", 95, Some(false)),
        ("ugt", 94, None),
        ("slt", 96, None),
    ] {
        let k = test(cc, grid);
        let (out, stats) = simplified(&k, Some(&s));
        let text = print(&out);
        match decided {
            Some(v) => {
                assert_eq!(stats.compares, 1, "{cc} {grid}\n{text}");
                assert!(
                    text.contains(&format!("const.i1 {}", u8::from(v))),
                    "{text}"
                );
            }
            None => assert!(text.contains("icmp"), "{cc} {grid}\n{text}"),
        }
        assert_same_run(&k, &out, &d);
        // Without the shape nothing bounds the group id.
        let (_, stats) = simplified(&k, None);
        assert_eq!(stats.compares, 0);
    }
}

// ---- random kernels ----

/// Bytes each lane writes (its values, 8 bytes apart).
const LANE_OUT: u64 = 128;

struct Gen {
    rng: Rng,
    lines: Vec<String>,
    /// (name, is 64-bit)
    vals: Vec<(String, bool)>,
    next: usize,
}

impl Gen {
    fn fresh(&mut self, line: String, wide: bool) -> String {
        let name = format!("v{}", self.next);
        self.next += 1;
        self.lines.push(format!("  {name} = {line}"));
        self.vals.push((name.clone(), wide));
        name
    }

    fn konst(&mut self, wide: bool) -> String {
        let bits = match self.rng.below(5) {
            0 => self.rng.below(40),
            1 => (1u64 << self.rng.below(if wide { 64 } else { 32 })) - 1,
            2 => 1u64 << self.rng.below(if wide { 64 } else { 32 }),
            3 => self.rng.next(),
            _ => self.rng.below(300),
        };
        let bits = if wide { bits } else { bits & 0xffff_ffff };
        let ty = if wide { "i64" } else { "i32" };
        self.fresh(format!("const.{ty} {bits}"), wide)
    }

    fn pick(&mut self, wide: bool) -> String {
        let same: Vec<String> = self
            .vals
            .iter()
            .filter(|(_, w)| *w == wide)
            .map(|(n, _)| n.clone())
            .collect();
        if same.is_empty() || self.rng.below(6) == 0 {
            return self.konst(wide);
        }
        same[self.rng.below(same.len() as u64) as usize].clone()
    }

    fn op(&mut self) {
        const OPS: [&str; 14] = [
            "shl", "ushr", "sshr", "and", "or", "xor", "iadd", "isub", "imul", "udiv", "urem",
            "umin", "umax", "shl",
        ];
        let wide = self.rng.below(5) == 0;
        let ty = if wide { "i64" } else { "i32" };
        match self.rng.below(10) {
            0 => {
                // The lifters' round trip through 64 bits.
                let x = self.pick(false);
                let op = if self.rng.below(2) == 0 {
                    "zext"
                } else {
                    "sext"
                };
                self.fresh(format!("{op}.i32.i64 {x}"), true);
            }
            1 => {
                let x = self.pick(true);
                self.fresh(format!("trunc.i64.i32 {x}"), false);
            }
            2 => {
                let (a, b, c, d) = (
                    self.pick(false),
                    self.pick(false),
                    self.pick(wide),
                    self.pick(wide),
                );
                let b = if self.rng.below(2) == 0 {
                    self.konst(false)
                } else {
                    b
                };
                let op = ["ult", "ule", "ugt", "uge", "eq", "slt"][self.rng.below(6) as usize];
                let (a, b) = if self.rng.below(4) == 0 {
                    (b, a)
                } else {
                    (a, b)
                };
                let cc = self.fresh(format!("icmp.{op}.i32 {a}, {b}"), false);
                self.vals.pop(); // an i1 is no operand here
                self.fresh(format!("select.{ty} {cc}, {c}, {d}"), wide);
            }
            3..=5 => {
                // The pattern the rules are for: a shifted part or-ed with a
                // small one, then taken apart again.
                let k = self.rng.below(20);
                let kc = self.fresh(format!("const.{ty} {k}"), wide);
                let hi = self.pick(wide);
                let lo = self.pick(wide);
                let sh = self.fresh(format!("shl.{ty} {hi}, {kc}"), wide);
                let op = ["or", "xor", "iadd"][self.rng.below(3) as usize];
                let x = self.fresh(format!("{op}.{ty} {sh}, {lo}"), wide);
                if self.rng.below(2) == 0 {
                    self.fresh(format!("ushr.{ty} {x}, {kc}"), wide);
                } else {
                    let m = (1u64 << self.rng.below(24)) - 1;
                    let mc = self.fresh(format!("const.{ty} {m}"), wide);
                    self.fresh(format!("and.{ty} {x}, {mc}"), wide);
                }
            }
            _ => {
                let op = OPS[self.rng.below(OPS.len() as u64) as usize];
                let (a, b) = (self.pick(wide), self.pick(wide));
                self.fresh(format!("{op}.{ty} {a}, {b}"), wide);
            }
        }
    }
}

/// A kernel of `n` random integer instructions over every builtin; each lane
/// stores its last values at `BASE + gid * LANE_OUT`.
fn random_kernel(seed: u64, n: usize) -> String {
    let mut g = Gen {
        rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1),
        lines: Vec::new(),
        vals: Vec::new(),
        next: 0,
    };
    for b in [
        "local_index",
        "local_id.x",
        "local_id.y",
        "workgroup_id.x",
        "workgroup_id.y",
        "workgroup_id.z",
        "num_workgroups.x",
        "num_workgroups.y",
        "workgroup_size.x",
        "workgroup_size.y",
        "lane_id",
        "wave_id",
        "wave_size",
    ] {
        g.fresh(b.to_string(), false);
    }
    for _ in 0..n {
        g.op();
    }
    // The lane's place: its linear group id times the group's lanes plus
    // its local index (written out, for the pass to see as a lifter emits it).
    let lines = std::mem::take(&mut g.lines);
    let stored: Vec<(String, bool)> = g.vals.iter().rev().take(12).cloned().collect();
    let mut out = lines;
    let t = |g: &mut Gen, line: String| g.fresh(line, false);
    let wz = t(&mut g, "workgroup_id.z".into());
    let wy = t(&mut g, "workgroup_id.y".into());
    let wx = t(&mut g, "workgroup_id.x".into());
    let ny = t(&mut g, "num_workgroups.y".into());
    let nx = t(&mut g, "num_workgroups.x".into());
    let a = t(&mut g, format!("imul.i32 {wz}, {ny}"));
    let b = t(&mut g, format!("iadd.i32 {a}, {wy}"));
    let c = t(&mut g, format!("imul.i32 {b}, {nx}"));
    let grp = t(&mut g, format!("iadd.i32 {c}, {wx}"));
    let sx = t(&mut g, "workgroup_size.x".into());
    let sy = t(&mut g, "workgroup_size.y".into());
    let lanes = t(&mut g, format!("imul.i32 {sx}, {sy}"));
    let li = t(&mut g, "local_index".into());
    let base = t(&mut g, format!("imul.i32 {grp}, {lanes}"));
    let gidv = t(&mut g, format!("iadd.i32 {base}, {li}"));
    let wide = g.fresh(format!("zext.i32.i64 {gidv}"), true);
    let step = g.fresh(format!("const.i64 {LANE_OUT}"), true);
    let off = g.fresh(format!("imul.i64 {wide}, {step}"), true);
    let b0 = g.fresh(format!("const.i64 {BASE}"), true);
    let at = g.fresh(format!("iadd.i64 {b0}, {off}"), true);
    let mut stores = Vec::new();
    for (k, (v, wide)) in stored.iter().enumerate() {
        let o = g.fresh(format!("const.i64 {}", 8 * k), true);
        let p = g.fresh(format!("iadd.i64 {at}, {o}"), true);
        let ty = if *wide { "i64" } else { "i32" };
        stores.push(format!("  store.global.{ty} {p}, {v}"));
    }
    out.extend(std::mem::take(&mut g.lines));
    out.extend(stores);
    format!(
        "kernel @r shared 0 private 0 {{\nblock0:\n{}\n  exit\n}}",
        out.join("\n")
    )
}

/// Grids small enough for the test buffer, with dimensions of size 1 (whose
/// ids the shape makes 0) and partial waves.
fn random_dispatch(rng: &mut Rng) -> Dispatch {
    let groups = [
        1 + rng.below(4) as u32,
        1 + rng.below(3) as u32,
        1 + rng.below(2) as u32,
    ];
    let size = [1 + rng.below(9) as u32, 1 + rng.below(3) as u32, 1];
    let mut d = Dispatch::new(groups, size);
    d.wave_size = [1, 3, 4, 32][rng.below(4) as usize];
    d
}

#[test]
fn random_integer_kernels_run_the_same_after_simplification() {
    let cases = std::env::var("WAVEJIT_LONG_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(400u64);
    let mut fired = BitsStats::default();
    for seed in 0..cases {
        let text = random_kernel(seed, 8 + (seed % 24) as usize);
        let k = wavejit_ir::text::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut rng = Rng((seed ^ 0x5eed).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let d = random_dispatch(&mut rng);
        // For the dispatch's own shape, and for any shape.
        for s in [Some(d.shape()), None] {
            let (out, stats) = simplified(&k, s.as_ref());
            assert_same_run(&k, &out, &d);
            // A second run finds nothing more to do in the same rounds.
            let (again, more) = simplified(&out, s.as_ref());
            assert_eq!(
                print(&again),
                print(&out),
                "seed {seed}: not a fixpoint {more:?}"
            );
            fired.constants += stats.constants;
            fired.compares += stats.compares;
            fired.identities += stats.identities;
            fired.adds += stats.adds;
            fired.narrowed += stats.narrowed;
        }
    }
    // Every rule was exercised (a generator that stopped reaching one would
    // make this test vacuous for it).
    assert!(
        fired.constants > 0
            && fired.compares > 0
            && fired.identities > 0
            && fired.adds > 0
            && fired.narrowed > 0,
        "{fired:?}"
    );
}

/// ir3 widens a compare's boolean through 16 bits (`zext.i1.i16` then
/// `zext.i16.i32`): one `zext.i1.i32`, and `trunc` of a widened value back
/// to its type is the value.
#[test]
fn widening_chains_become_one_widening() {
    let k = storing_v7(
        "  v1 = const.i32 3
  v2 = icmp.ult.i32 v0, v1
  v3 = zext.i1.i16 v2
  v4 = zext.i16.i32 v3
  v5 = sext.i32.i64 v0
  v6 = trunc.i64.i32 v5
  v7 = iadd.i32 v4, v6
",
    );
    let (out, _) = simplified(&k, None);
    let text = print(&out);
    assert!(text.contains("zext.i1.i32 v"), "{text}");
    assert!(!text.contains("i16") && !text.contains("trunc"), "{text}");
    assert_same_run(&k, &out, &Dispatch::new([2, 1, 1], [8, 1, 1]));
}
