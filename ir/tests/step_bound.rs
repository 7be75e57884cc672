//! `analysis::step_bound`: the bound of named loop shapes, unbounded twins,
//! and the interpreter never passing the bound (a dispatch whose step limit
//! is the bound runs without a watchdog fault).

mod promote_support;

use promote_support::{kernel_with, run};
use wavejit_ir::analysis::step_bound;
use wavejit_ir::{Dispatch, FaultKind};

/// A loop over block1 with `INIT` entering, `NEXT` coming back and `TEST`
/// deciding; the lanes store how often they went round.
const LOOP: &str = "kernel @loop shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 INIT
  v9 = const.i32 0
  jump block1(v1, v9)

block1(v2: i32, v10: i32):
  v3 = const.i32 K
  v4 = NEXT.i32 v2, v3
  v11 = const.i32 1
  v12 = iadd.i32 v10, v11
  v5 = const.i32 N
  v6 = icmp.TEST.i32 v4, v5
  br v6, block1(v4, v12), block2

block2:
  v7 = const.i64 0x100000
  store.global.i32 v7, v12
  exit
}
";

fn shape(init: u64, next: &str, k: u64, test: &str, n: u64) -> String {
    LOOP.replace("INIT", &init.to_string())
        .replace("NEXT", next)
        .replace("K", &k.to_string())
        .replace("TEST", test)
        .replace("N", &n.to_string())
}

/// The interpreter with the step limit at `bound` never faults.
fn holds(text: &str, bound: u64) {
    let k = kernel_with("", text);
    let mut d = Dispatch::new([1, 1, 1], [4, 1, 1]);
    d.step_limit = bound;
    let (r, _) = run(&k, &d);
    assert!(r.is_ok(), "faulted under its bound {bound}: {r:?}\n{text}");
}

#[test]
fn a_halving_loop_is_bounded_by_the_bits() {
    let text = shape(128, "ushr", 1, "ne", 0);
    let k = kernel_with("", &text);
    // 33 iterations at most of block1, plus block0 and block2.
    assert_eq!(step_bound(&k), Some(33 + 2));
    holds(&text, 35);
    // The real count is 8 iterations (128 down to 1), 10 steps.
    let k = kernel_with("", &text);
    let mut d = Dispatch::new([1, 1, 1], [4, 1, 1]);
    d.step_limit = 9;
    assert!(matches!(run(&k, &d).0, Err(f) if matches!(f.kind, FaultKind::Watchdog { .. })));
}

#[test]
fn a_counting_loop_is_bounded_by_its_limit() {
    for (init, k, n) in [(0, 1, 10), (3, 2, 9), (0, 5, 100), (50, 1, 7)] {
        let text = shape(init, "iadd", k, "ult", n);
        let kk = kernel_with("", &text);
        let want = n.div_ceil(k) + 1 + 2;
        assert_eq!(step_bound(&kk), Some(want), "{text}");
        holds(&text, want);
    }
}

#[test]
fn loops_of_other_shapes_are_unbounded() {
    // Counting down, an unsigned test that wraps, a shift by zero.
    for text in [
        shape(10, "isub", 1, "ne", 0),
        shape(0, "iadd", 1, "ult", 0xffff_ffff),
        shape(128, "ushr", 0, "ne", 0),
        shape(128, "ushr", 1, "eq", 0),
    ] {
        let k = kernel_with("", &text);
        assert_eq!(step_bound(&k), None, "{text}");
    }
    // An entry that is not a constant.
    let text = shape(0, "iadd", 1, "ult", 10).replace("v1 = const.i32 0", "v1 = local_index");
    assert_eq!(step_bound(&kernel_with("", &text)), None);
}

#[test]
fn nested_loops_multiply() {
    let text = "kernel @nest shared 0 private 0 {
block0:
  v0 = const.i32 0
  jump block1(v0)

block1(v1: i32):
  v2 = const.i32 0
  jump block2(v2)

block2(v3: i32):
  v4 = const.i32 1
  v5 = iadd.i32 v3, v4
  v6 = const.i32 4
  v7 = icmp.ult.i32 v5, v6
  br v7, block2(v5), block3

block3:
  v8 = iadd.i32 v1, v4
  v9 = const.i32 3
  v10 = icmp.ult.i32 v8, v9
  br v10, block1(v8), block4

block4:
  exit
}
";
    let k = kernel_with("", text);
    // block1 and block3: 4 each; block2: 4 * 5; block0, block4: 1 each.
    assert_eq!(step_bound(&k), Some(4 + 4 + 20 + 2));
    holds(text, 30);
}

/// A data-dependent loop (collatz on the lane index: lane 0 never reaches 1)
/// with a counter that enters as `ENTRY`, grows by `STEP_A` on every
/// iteration and `STEP_B` more on the odd path, and a test that leaves the
/// loop (trap) once it is above `LIMIT`, merged with the loop's own exit test
/// into a `table` index as the RV32 lifter's cycle-limit test is.
const GUARDED: &str = "kernel @guarded shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 ENTRY
  jump block1(v0, v1)

block1(v4: i32, v5: i32):
  v6 = const.i32 1
  v7 = and.i32 v4, v6
  v8 = const.i32 0
  v9 = icmp.eq.i32 v7, v8
  v10 = const.i32 STEP_A
  v11 = iadd.i32 v5, v10
  br v9, block2(v4, v11), block3(v4, v11)

block2(v12: i32, v13: i32):
  v14 = const.i32 1
  v15 = ushr.i32 v12, v14
  jump block4(v15, v13)

block3(v16: i32, v17: i32):
  v18 = const.i32 3
  v19 = imul.i32 v16, v18
  v20 = const.i32 1
  v21 = iadd.i32 v19, v20
  v22 = const.i32 STEP_B
  v23 = iadd.i32 v17, v22
  jump block4(v21, v23)

GUARD
block5(v35: i32):
  v36 = const.i64 0x100000
  store.global.i32 v36, v35
  exit

block6:
  trap 0
  exit
}
";

/// The guard as the RV32 lifter emits it: `select`s give the table index,
/// the counter's test taking the default (out of the loop).
const TABLE_GUARD: &str = "block4(v24: i32, v25: i32):
  v26 = const.i32 1
  v27 = icmp.ne.i32 v24, v26
  v28 = const.i32 LIMIT
  v29 = icmp.ugt.i32 v25, v28
  v30 = const.i32 0
  v31 = const.i32 1
  v32 = const.i32 OVER
  v33 = select.i32 v27, v30, v31
  v34 = select.i32 v29, v32, v33
  table v34, [block1(v24, v25), block5(v25)], default block6
";

/// The guard as a branch of its own (`TEST` of the counter v25 and the
/// limit v28, in `ARGS` order; `then` and `otherwise` in `SIDES`), then the
/// loop's test in block7.
const BRANCH_GUARD: &str = "block4(v24: i32, v25: i32):
  v28 = const.i32 LIMIT
  v29 = icmp.TEST.i32 ARGS
  br v29, SIDES

block7(v40: i32, v41: i32):
  v42 = const.i32 1
  v43 = icmp.ne.i32 v40, v42
  br v43, block1(v40, v41), block5(v41)
";

fn guarded(guard: &str, entry: u64, a: u64, b: u64, limit: u64) -> String {
    GUARDED
        .replace("GUARD", guard)
        .replace("ENTRY", &entry.to_string())
        .replace("STEP_A", &a.to_string())
        .replace("STEP_B", &b.to_string())
        .replace("LIMIT", &limit.to_string())
        .replace("OVER", "2")
}

fn branch_guard(test: &str, args: &str, sides: &str) -> String {
    BRANCH_GUARD
        .replace("TEST", test)
        .replace("ARGS", args)
        .replace("SIDES", sides)
}

/// The interpreter with the step limit at `bound` never faults on the
/// watchdog (lane 0 ends at the counter's trap).
fn no_watchdog(text: &str, bound: u64) {
    let k = kernel_with("", text);
    let mut d = Dispatch::new([1, 1, 1], [4, 1, 1]);
    d.step_limit = bound;
    let (r, _) = run(&k, &d);
    assert!(
        matches!(&r, Err(f) if matches!(f.kind, FaultKind::Trap { code: 0 })),
        "not the counter's trap under the bound {bound}: {r:?}\n{text}"
    );
}

#[test]
fn a_counter_tested_in_a_table_index_bounds_the_loop() {
    for (entry, a, b, limit) in [(0, 1, 2, 40), (15, 5, 1, 100_000), (7, 3, 0, 1000)] {
        let text = guarded(TABLE_GUARD, entry, a, b, limit);
        // Four loop blocks, each entered at most limit / a + 2 times, and
        // block0, block5, block6 once.
        let want = 4 * (limit / a + 2) + 3;
        assert_eq!(step_bound(&kernel_with("", &text)), Some(want), "{text}");
        no_watchdog(&text, want);
    }
    // Lane 0 goes round (limit - entry) / a + 1 times before the trap, three
    // blocks each: one step less than it takes is a watchdog fault.
    let text = guarded(TABLE_GUARD, 0, 1, 2, 40);
    let k = kernel_with("", &text);
    let mut d = Dispatch::new([1, 1, 1], [1, 1, 1]);
    d.step_limit = 1 + 3 * 41;
    assert!(matches!(run(&k, &d).0, Err(f) if matches!(f.kind, FaultKind::Watchdog { .. })));
    d.step_limit += 1;
    assert!(matches!(run(&k, &d).0, Err(f) if matches!(f.kind, FaultKind::Trap { code: 0 })));
}

#[test]
fn a_counter_tested_by_a_branch_bounds_the_loop() {
    let next = "block7(v24, v25)";
    for (test, args, sides) in [
        ("ugt", "v25, v28", format!("block6, {next}")),
        ("uge", "v25, v28", format!("block6, {next}")),
        ("ult", "v28, v25", format!("block6, {next}")),
        ("ule", "v25, v28", format!("{next}, block6")),
        ("ugt", "v28, v25", format!("{next}, block6")),
    ] {
        let text = guarded(&branch_guard(test, args, &sides), 2, 2, 3, 500);
        // Five loop blocks now (block7).
        let want = 5 * (500 / 2 + 2) + 3;
        assert_eq!(step_bound(&kernel_with("", &text)), Some(want), "{text}");
        no_watchdog(&text, want);
    }
}

#[test]
fn counters_of_other_shapes_are_unbounded() {
    let next = "block7(v24, v25)";
    let texts = [
        // The counter's test goes round instead of leaving.
        guarded(TABLE_GUARD, 0, 1, 2, 40).replace("const.i32 2\n  v33", "const.i32 0\n  v33"),
        // The even path does not grow the counter.
        guarded(TABLE_GUARD, 0, 0, 2, 40),
        // The counter could wrap past the limit.
        guarded(TABLE_GUARD, 0, 1, 2, 0xffff_fffe),
        // An entry that is not a constant.
        guarded(TABLE_GUARD, 0, 1, 2, 40).replace("v1 = const.i32 0", "v1 = local_index"),
        // A signed test, and the test's sides swapped.
        guarded(&branch_guard("sgt", "v25, v28", &format!("block6, {next}")), 0, 1, 2, 40),
        guarded(&branch_guard("ugt", "v25, v28", &format!("{next}, block6")), 0, 1, 2, 40),
        // A counter counting down.
        guarded(TABLE_GUARD, 0, 1, 2, 40).replace("v11 = iadd.i32 v5, v10", "v11 = isub.i32 v5, v10"),
        // The test only on the odd path.
        guarded(
            "block4(v24: i32, v25: i32):
  v26 = const.i32 1
  v27 = icmp.ne.i32 v24, v26
  br v27, block1(v24, v25), block5(v25)
",
            0,
            1,
            2,
            40,
        )
        .replace(
            "  jump block4(v21, v23)",
            "  v50 = const.i32 40\n  v51 = icmp.ugt.i32 v23, v50\n  br v51, block6, block4(v21, v23)",
        ),
    ];
    for text in texts {
        assert_eq!(step_bound(&kernel_with("", &text)), None, "{text}");
    }
}

/// `for (i = ENTRY; i + 1 != N; i += STEP)` with a data-dependent exit too
/// (lane 0 leaves at once), as gcc compiles a counted loop with `!=`.
const COUNTED_NE: &str = "kernel @counted shared 0 private 0 {
block0:
  v0 = local_index
  v1 = const.i32 ENTRY
  jump block1(v0, v1)

block1(v4: i32, v5: i32):
  v6 = const.i32 STEP
  v7 = iadd.i32 v5, v6
  v8 = const.i32 N
  v9 = icmp.eq.i32 v7, v8
  br v9, block3(v7), block2(v4, v7)

block2(v10: i32, v11: i32):
  v14 = const.i32 0
  v15 = icmp.ne.i32 v10, v14
  br v15, block1(v10, v11), block3(v11)

block3(v16: i32):
  v17 = const.i64 0x100000
  store.global.i32 v17, v16
  exit
}
";

fn counted_ne(entry: u64, step: u64, n: u64) -> String {
    COUNTED_NE
        .replace("ENTRY", &entry.to_string())
        .replace("STEP", &step.to_string())
        .replace("N", &n.to_string())
}

#[test]
fn a_counter_stepping_by_one_to_an_inequality_bounds_the_loop() {
    for (entry, n) in [(0, 1000), (5, 6), (9, 300)] {
        let text = counted_ne(entry, 1, n);
        // block1 and block2 at most n - entry times each, block0, block3 once.
        let want = 2 * (n - entry) + 2;
        assert_eq!(step_bound(&kernel_with("", &text)), Some(want), "{text}");
        holds(&text, want);
        // Lanes 1..3 take 2 (n - entry) + 1 steps: one fewer faults.
        let k = kernel_with("", &text);
        let mut d = Dispatch::new([1, 1, 1], [4, 1, 1]);
        d.step_limit = want - 2;
        assert!(matches!(run(&k, &d).0, Err(f) if matches!(f.kind, FaultKind::Watchdog { .. })));
    }
    // Step 2 may jump over n; an entry at n wraps round the type first.
    for text in [
        counted_ne(0, 2, 1000),
        counted_ne(1000, 1, 1000),
        counted_ne(1001, 1, 1000),
    ] {
        assert_eq!(step_bound(&kernel_with("", &text)), None, "{text}");
    }
}
