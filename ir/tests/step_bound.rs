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
