//! `transform::merge_straight_blocks`: chains of unconditional jumps into
//! single-predecessor blocks laid out next to each other become one block; the
//! kernel writes the same memory and reports the same non-watchdog faults.

mod promote_support;

use promote_support::{BASE, assert_same_run, run, two_groups_of_8};
use wavejit_ir::transform::merge_straight_blocks;
use wavejit_ir::{FaultKind, Kernel, Terminator};

fn parse(text: &str) -> Kernel {
    wavejit_ir::text::parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Blocks that hold code or end in something other than `exit`.
fn live_blocks(k: &Kernel) -> usize {
    k.blocks
        .values()
        .filter(|b| !b.insts.is_empty() || !matches!(b.term, Some(Terminator::Exit)))
        .count()
}

/// Merges a copy; checks it verifies and runs like the original.
fn merge_and_compare(kernel: &Kernel) -> (Kernel, usize) {
    let mut k = kernel.clone();
    let merged = merge_straight_blocks(&mut k).unwrap_or_else(|e| panic!("{e}"));
    assert_same_run(kernel, &k, &two_groups_of_8());
    (k, merged)
}

/// The shape AGX predication leaves after folding: a bounds branch to an exit
/// block laid out between, then a chain of jumps carrying values in block
/// parameters, with loads and stores in the links; lanes of the other branch
/// store too, so a change of order would show.
#[test]
fn predication_chains_merge_into_one_block() {
    let text = format!(
        "kernel @chain shared 0 private 0 {{
block0:
  v0 = local_index
  v1 = const.i32 6
  v2 = icmp.ult.i32 v0, v1
  br v2, block1, block2

block1:
  v3 = zext.i32.i64 v0
  v4 = const.i64 4
  v5 = imul.i64 v3, v4
  v6 = const.i64 {BASE:#x}
  v7 = iadd.i64 v6, v5
  jump block3(v7)

block2:
  v8 = const.i64 {BASE:#x}
  v9 = const.i32 7
  store.global.i32 v8, v9
  exit

block3(v10: i64):
  v11 = const.i64 64
  v12 = iadd.i64 v10, v11
  v13 = load.global.i32 v8a
  jump block4(v12, v13)

block4(v14: i64, v15: i32):
  v16 = const.i32 100
  v17 = iadd.i32 v15, v16
  store.global.i32 v14, v17
  jump block5

block5:
  exit
}}
"
    )
    .replace("v8a", "v10");
    let k = parse(&text);
    // block2 holds code between block1 and block3: no merge across it; the
    // chain after it (3-4-5) merges.
    let (m, merged) = merge_and_compare(&k);
    assert_eq!(merged, 2);
    assert_eq!(live_blocks(&m), 4, "{}", wavejit_ir::text::print(&m));
    // With block2 an empty exit, the chain 1-3-4-5 becomes one block.
    let idle = text.replace(
        "  v8 = const.i64 0x100000\n  v9 = const.i32 7\n  store.global.i32 v8, v9\n",
        "",
    );
    let k = parse(&idle);
    assert_eq!(live_blocks(&k), 4);
    let (m, merged) = merge_and_compare(&k);
    assert_eq!(merged, 3);
    assert_eq!(live_blocks(&m), 2, "{}", wavejit_ir::text::print(&m));
    assert_eq!(m.blocks.len(), k.blocks.len(), "block numbers are kept");
}

#[test]
fn joins_loops_and_backward_jumps_stay() {
    // block2 has two predecessors; block4 jumps back to block1 (a loop whose
    // lanes take different trip counts); block5 is laid out before the block
    // that jumps to it.
    let text = format!(
        "kernel @stay shared 0 private 0 {{
block0:
  v0 = local_index
  v1 = const.i32 0
  jump block1(v1)

block1(v2: i32):
  v3 = const.i32 1
  v4 = iadd.i32 v2, v3
  v5 = icmp.ult.i32 v4, v0
  br v5, block2(v4), block3

block2(v6: i32):
  jump block4(v6)

block3:
  jump block6

block4(v7: i32):
  jump block1(v7)

block5:
  v8 = zext.i32.i64 v0
  v9 = const.i64 4
  v10 = imul.i64 v8, v9
  v11 = const.i64 {BASE:#x}
  v12 = iadd.i64 v11, v10
  store.global.i32 v12, v0
  exit

block6:
  jump block5
}}
"
    );
    let k = parse(&text);
    let (m, merged) = merge_and_compare(&k);
    // Only block2 -> block4 is not adjacent (block3 holds a jump); block3 ->
    // block6 crosses block5's code. Nothing merges.
    assert_eq!(merged, 0, "{}", wavejit_ir::text::print(&m));
}

#[test]
fn a_runaway_chain_still_trips_the_watchdog() {
    let text = "kernel @spin shared 0 private 0 {
block0:
  jump block1

block1:
  v0 = local_index
  jump block2(v0)

block2(v1: i32):
  v2 = const.i32 1
  v3 = iadd.i32 v1, v2
  jump block1
}
";
    let k = parse(text);
    let mut m = k.clone();
    // block1 has two predecessors; block2 merges into it, leaving a self-loop.
    assert_eq!(merge_straight_blocks(&mut m).ok(), Some(1));
    let mut d = two_groups_of_8();
    d.step_limit = 50;
    for kernel in [&k, &m] {
        let (r, _) = run(kernel, &d);
        let f = r.err().map(|f| f.kind);
        assert_eq!(f, Some(FaultKind::Watchdog { limit: 50 }));
    }
}
