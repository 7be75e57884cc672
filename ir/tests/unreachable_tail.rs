//! `transform::drop_unreachable_tail`: the unreachable blocks after the last
//! reachable one go, the others stay in place, and runs (memory and faults,
//! with their block numbers) are the same before and after.

mod promote_support;

use promote_support::{assert_same_run, two_groups_of_8};
use wavejit_ir::text::{parse, print};
use wavejit_ir::transform::{drop_unreachable_tail, fold_constants, merge_straight_blocks};
use wavejit_ir::{Fault, FaultKind};

/// Lanes 0..3 store their index, the others load past the buffer and
/// fault; block2 and block4 are never entered, and block4 holds code.
const TEXT: &str = "kernel @tail {
block0:
  v0 = local_index
  v1 = const.i32 4
  v2 = icmp.ult.i32 v0, v1
  br v2, block1, block3

block1:
  v3 = zext.i32.i64 v0
  v4 = const.i64 2
  v5 = shl.i64 v3, v4
  v6 = const.i64 0x100000
  v7 = iadd.i64 v6, v5
  store.global.i32 v7, v0
  exit

block2(v8: i32):
  jump block4(v8)

block3:
  v9 = const.i64 0x900000
  v10 = load.global.i32 v9
  exit

block4(v11: i32):
  v12 = iadd.i32 v11, v11
  jump block2(v12)

block5:
  exit
}";

#[test]
fn only_the_blocks_after_the_last_reachable_one_go() {
    let k = parse(TEXT).unwrap_or_else(|e| panic!("{e}"));
    let mut out = k.clone();
    assert_eq!(drop_unreachable_tail(&mut out), Ok(2));
    // block2 stays (emptied) so that block3 keeps its number.
    assert_eq!(out.blocks.len(), 4, "{}", print(&out));
    let printed = print(&out);
    let block2 = printed.split("block2").nth(1).unwrap_or("");
    assert!(block2.contains("):\n  exit\n\nblock3:\n"), "{printed}");
    let d = two_groups_of_8();
    assert_same_run(&k, &out, &d);
    let (result, _) = promote_support::run(&out, &d);
    let Err(Fault {
        block,
        kind: FaultKind::Memory { .. },
        ..
    }) = result
    else {
        panic!("lanes 4.. fault: {result:?}");
    };
    assert_eq!(block.to_string(), "block3");
    let mut again = out.clone();
    assert_eq!(drop_unreachable_tail(&mut again), Ok(0));
    assert_eq!(again, out);
}

/// A straight-line kernel after folding and merging is its entry block alone.
#[test]
fn a_merged_chain_ends_as_one_block() {
    let text = "kernel @chain {
block0:
  v0 = local_index
  v1 = const.i1 1
  br v1, block1, block3

block1:
  v2 = zext.i32.i64 v0
  v3 = const.i64 2
  v4 = shl.i64 v2, v3
  v5 = const.i64 0x100000
  v6 = iadd.i64 v5, v4
  jump block2(v6)

block2(v7: i64):
  store.global.i32 v7, v0
  exit

block3:
  exit
}";
    let k = parse(text).unwrap_or_else(|e| panic!("{e}"));
    let mut out = k.clone();
    fold_constants(&mut out).expect("verifies");
    merge_straight_blocks(&mut out).expect("verifies");
    assert_eq!(drop_unreachable_tail(&mut out), Ok(3));
    assert_eq!(out.blocks.len(), 1, "{}", print(&out));
    assert_same_run(&k, &out, &two_groups_of_8());
}
